/*
 * transport.h - the contract between the network object (network.h) and a
 * transport protocol: TCP (NewReno, DCTCP), datagrams, RoCEv2 (RC queue
 * pairs), the flow plane, and those a system registers from above
 * (Stellar's multi-path core, src/cli/registry.c).
 *
 * A transport is an ops table, in the style of Linux's proto_ops: the
 * network allocates `conn_size` zeroed bytes per connection, fills the
 * common header (struct conn, the first member of every transport's
 * connection) and calls the transport's hooks.  The network knows nothing
 * of a transport's packets beyond struct pkt's common fields (flow_id is the
 * connection id, prio the class, kind, size, sent time); a transport knows
 * nothing of workloads, tables or topology beyond the routes in the header.
 *
 * A connection carries a byte stream from endpoint `src` to endpoint `dst`.
 * The network appends messages to it (send); the transport tells the
 * network how many bytes of the stream the receiver holds in order
 * (conn_delivered) and when it has given up (conn_aborted).  Message
 * boundaries, start and completion times, and per-message statistics are
 * the network's business.
 *
 * A transport's scenario keys live in the `transport` section of the
 * scenario (`net.transport: {name: tcp, cc: dctcp, ...}`): `keys` binds
 * them into `cfg_size` bytes (with their defaults written back, so the
 * resolved scenario shows them), then `setup` turns the bound values into
 * the transport's per-network state.  Nothing else of the network changes
 * when a transport is added: ports, PFC, pcap and the output tables work
 * from the common header and these hooks only.
 */
#ifndef AISIM_TRANSPORT_H
#define AISIM_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/pcapw.h"
#include "aisim/pkt.h"
#include "aisim/rng.h"
#include "aisim/sim.h"
#include "aisim/topo.h"
#include "aisim/out.h"

typedef struct conn conn;
typedef struct transport_ops transport_ops;

/* How a connection's data packets choose among equal-cost paths. */
enum conn_spray { CONN_PATH_FIXED, CONN_SPRAY_RR, CONN_SPRAY_RANDOM };

/* The header every connection starts with; the network fills it before
 * conn_init and updates the path fields on routing changes. */
struct conn {
    const transport_ops *ops;
    void *tp;                   /* the transport's per-network state */
    sim *s;
    pkt_pool *pool;
    uint32_t id;                /* carried by every packet (pkt.flow_id) */
    int32_t src, dst;           /* endpoints (host indices) */
    uint8_t prio;               /* priority class of its packets */
    uint64_t path_key;          /* ECMP hash key of the connection */
    /* The path of the connection's data: ECMP's route fwd (NULL while the
     * endpoints are cut apart) and its reverse rev (acknowledgements), owned
     * by the topology; or, when spraying, each data packet forwarded by an
     * entropy of its own from the source host's forwarder (pkt.h, topo.h):
     * round robin over the paths (a path index per packet) or random. */
    const route *fwd, *rev;
    enum conn_spray spray;
    sink *src_fwd;              /* the source host's forwarder */
    uint32_t dst_node;          /* the destination's node id */
    rng spray_rng;              /* this connection's own random stream (run
                                   seed, "net.spray", id): random spraying,
                                   or a transport's own path choice */
    uint32_t spray_next;        /* next path index (round robin) */
    sink sprayer;               /* recv: conn_send_data (a data sink for
                                   transports that send through sinks) */
    /* The network's, called by the transport: */
    uint64_t mark;              /* delivered() matters once the receiver holds
                                   this many bytes (the end of the oldest
                                   message not complete; UINT64_MAX: none) */
    void (*delivered)(conn *c, uint64_t bytes);     /* receiver holds [0, bytes) */
    void (*aborted)(conn *c);                       /* the sender gave up */
    void (*reroute)(conn *c);   /* asks for the routes of now (at a timeout) */
    void (*idle)(conn *c);      /* the sender may have nothing more to do */
    void *owner;                /* the network */
};

/* A connection's counters, for the flow tables. */
typedef struct conn_stats {
    uint64_t delivered;         /* bytes the receiver holds in order */
    uint64_t retransmits;       /* data packets sent again */
    uint64_t timeouts;          /* retransmission timeouts */
} conn_stats;

struct transport_ops {
    const char *name;           /* `transport.name` in a scenario */
    const char *summary;        /* one line for messages and docs */
    size_t conn_size;           /* bytes of a connection, struct conn first */
    const cfg_key *keys;        /* its keys in the transport section */
    size_t cfg_size;            /* bytes the keys bind into */

    /* Turns the bound keys into per-network state (*tp); may reject
     * combinations with a located error (sec is the section, path its key
     * path).  */
    int (*setup)(void **tp, const void *bound, const cfg_node *sec, const char *path,
                 err *e);
    void (*teardown)(void *tp);
    /* Bytes of payload and of headers per full packet: the network's
     * reference (ideal) completion times are computed from these. */
    void (*framing)(const void *tp, uint32_t *payload, uint32_t *header);

    /* Initialises the transport's part of c (header filled) and returns
     * the sinks the topology hands its packets to: at dst (data) and at
     * src (acknowledgements). */
    void (*conn_init)(conn *c, sink **at_src, sink **at_dst);
    /* Starts the connection at at_ps (>= now) with `bytes` to send
     * (UINT64_MAX: an endless stream); base_rtt_ps is the empty network's
     * round trip, to prime an RTT estimator as a handshake would. */
    void (*start)(conn *c, int64_t at_ps, uint64_t bytes, int64_t base_rtt_ps);
    /* Appends bytes to a started, finite stream (the next message). */
    void (*append)(conn *c, uint64_t bytes);
    /* The network changed c's route (fwd and rev). */
    void (*paths_changed)(conn *c);
    /* Stops timers and frees what conn_init and the run allocated. */
    void (*stop)(conn *c);
    void (*stats)(const conn *c, conn_stats *st);
    /* Nothing left to send, resend or acknowledge, no timer that matters:
     * the connection may be freed once its packets have arrived. */
    bool (*idle)(const conn *c);
    /* Describes packet p of c for a capture. */
    void (*pcap)(const conn *c, const pkt *p, pcap_l4 *h);

    /* Optional (NULL: none).  Once the topology is built: checks the
     * transport's keys against it (located errors) and attaches what it
     * needs to the fabric (switch hooks). */
    int (*net_ready)(void *tp, topo *t, const cfg_node *sec, const char *path, err *e);
    /* Writes the transport's own tables and summary keys at the report. */
    int (*report)(void *tp, out *o, json_t *summary, err *e);
    /* Optional (NULL: packets may arrive in any order).  The network sprays
     * the data packets (net.routing: spray_*, adaptive, named by `routing`), which
     * reorders them: a located error if the transport's keys cannot take
     * that. */
    int (*spray_check)(void *tp, const char *routing, const cfg_node *sec, const char *path,
                       err *e);
};

/* Makes data packet p of a sprayed connection (spray != CONN_PATH_FIXED)
 * one forwarded hop by hop: its destination, and a new entropy value (a
 * random one, or the next path index). */
static inline void conn_spray_stamp(conn *c, pkt *p)
{
    p->rt = NULL;
    p->dst_node = c->dst_node;
    if (c->spray == CONN_SPRAY_RANDOM) {
        p->entropy = (uint32_t)rng_next(&c->spray_rng);
    } else {
        p->entropy = c->spray_next++;
        p->flags |= PKT_F_PATHIDX;
    }
}

/* Sends data packet p of c on its path: its route, or forwarded by a new
 * entropy value when spraying. */
static inline void conn_send_data(conn *c, pkt *p)
{
    if (c->spray == CONN_PATH_FIXED) {
        pkt_send(p, c->fwd);
        return;
    }
    conn_spray_stamp(c, p);
    c->src_fwd->recv(c->src_fwd, p);
}

extern const transport_ops tcp_transport;
extern const transport_ops dgram_transport;
extern const transport_ops rocev2_transport;

#endif
