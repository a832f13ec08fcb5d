/*
 * network_int.h - the network object's state, shared by network.c (building,
 * connections, messages) and network_report.c (the tables).  Not a public
 * header: models use network.h.
 */
#ifndef AISIM_NETWORK_INT_H
#define AISIM_NETWORK_INT_H

#include "aisim/fault.h"
#include "aisim/network.h"
#include "aisim/pcapw.h"
#include "aisim/port.h"

typedef struct failure_cfg {
    const char *a, *b;
    int64_t at, repair, convergence;
} failure_cfg;

typedef struct net_capture {
    struct network *n;
    pcapw *w;
    int host;
} net_capture;

/* One row of queues.csv: a sampled port's state at time t_ps (counters
 * cumulative since the start). */
typedef struct net_qsample {
    int64_t t_ps;
    size_t port;                /* index in sports */
    int64_t bytes;              /* backlog */
    uint64_t tx_bytes, drops, marks, pauses;
} net_qsample;

/* The network's record of a connection. */
typedef struct nconn {
    conn *c;                    /* the transport's connection */
    uint64_t stream_end;        /* bytes of every message sent on it */
    uint64_t *q;                /* messages not yet complete, in stream order */
    size_t qh, qn, qcap;        /* ring: head, count, capacity */
    uint64_t last_msg;          /* the latest message sent on it */
    size_t nmsgs;               /* messages sent on it */
    int64_t wait_start;         /* >= 0: due to start then, but its endpoints
                                   were cut apart: starts when routing joins them */
    bool started;
} nconn;

typedef struct net_done {
    net_done_fn fn;
    void *ctx;
} net_done;

struct network {
    network_cfg cfg;
    sim *s;
    uint64_t seed;
    pkt_pool *pool;
    topo *t;
    /* transport */
    const transport_ops *ops;
    void *tp;                   /* its per-network state */
    void *tcfg;                 /* its bound keys */
    uint32_t payload, header;   /* its framing */
    /* connections, by id */
    nconn *conns;
    size_t nconns, capconns;
    /* messages, by id, and their callbacks */
    net_msg *msgs;
    net_done *done;
    size_t nmsgs, capmsgs;
    size_t active;              /* finite messages not complete */
    net_done_fn on_complete;
    void *on_complete_ctx;
    /* captures */
    net_capture *caps;
    size_t ncaps;
    /* link failures */
    failure_cfg *fails;
    int *fail_link;
    size_t nfails;
    fault_set *faults;
    /* sampling */
    port **sports;
    const char **sport_names;
    size_t nsports;
    sim_timer sampler;
    net_qsample *ts;            /* every sample of every sampled port */
    size_t ts_n, ts_cap;
};

#endif
