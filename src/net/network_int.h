/*
 * network_int.h - the network object's state, shared by network.c (building,
 * connections, messages) and network_report.c (the tables).  Not a public
 * header: models use network.h.
 */
#ifndef AISIM_NETWORK_INT_H
#define AISIM_NETWORK_INT_H

#include <stdio.h>

#include "aisim/fault.h"
#include "aisim/fwd.h"
#include "aisim/idtab.h"
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

/* The network's record of a connection (in the idtab `conns`, released
 * when the connection is freed). */
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
    bool closing;               /* freed once idle (network_send; network_close) */
    bool retiring;              /* idle: in the reap queue */
} nconn;

/* A message and its callback (in the idtab `msgs` while it may still
 * change; then its row goes to the spill file and the entry is released). */
typedef struct nmsg {
    net_msg m;
    net_done_fn fn;
    void *ctx;
    bool ended;                 /* m.at_end is final */
    bool busy;                  /* its completion callbacks are running */
    conn_stats at_end;          /* its connection's counters when the next
                                   message on it began, or when it was freed */
} nmsg;

/* One row of flows.csv, as spilled (fixed size, at id * sizeof). */
typedef struct msg_row {
    int32_t src, dst;
    int64_t tag;
    uint64_t bytes;
    int64_t start_ps, finish_ps, ideal_ps;
    uint64_t delivered, retransmits, timeouts;
    uint8_t aborted, valid;
    uint8_t pad[6];             /* named, so rows written whole have no undefined bytes */
} msg_row;
_Static_assert(sizeof(msg_row) == 80, "msg_row has no implicit padding");

/* A loaded extension (netext.h). */
typedef struct netext_inst {
    const struct netext_ops *ops;
    void *st;
} netext_inst;

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
    const char **tnames;        /* `transport.name` choices (the registry's) */
    enum fwd_send send;         /* how connections send (the forwarder's) */
    uint32_t payload, header;   /* its framing */
    /* connections and messages, by id; see nconn and nmsg */
    idtab conns, msgs;
    size_t nconns, nmsgs;
    size_t active;              /* finite messages not complete */
    FILE *spill;                /* rows of final messages (tmpfile), or NULL */
    int64_t spill_pos;          /* its stream's position after our last access
                                   (-1: unknown), so that rows in order need no
                                   seek (a seek flushes: a syscall per row) */
    bool spill_reading;         /* that access was a read */
    /* connections idle and waiting out their linger, oldest first */
    uint32_t *reap_id;
    int64_t *reap_due;
    size_t rh, rn, rcap;
    int64_t hop_sojourn_ps;     /* longest a packet may spend on one hop */
    bool pfc;                   /* some link runs PFC */
    bool spill_failed;          /* the spill file could not be written: rows
                                   stay in memory */
    net_done_fn on_complete;
    void *on_complete_ctx;
    netext_inst *exts;          /* extensions, in load order */
    size_t nexts;
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
    int64_t *sq_sum, *sq_max;   /* per sampled port: backlog summed and the
                                   largest over the samples (queue_stats.csv) */
    uint64_t sq_n;              /* samples per port */
};

/* The flows.csv row of message id, from memory or the spill file; 0, or
 * -1 if it cannot be read back. */
int network_msg_row(network *n, uint64_t id, msg_row *r);

#endif
