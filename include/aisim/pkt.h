/*
 * pkt.h - the packet plane's objects: packets, sinks, routes, packet pools.
 *
 * Two ways through the network.  Source routes, as htsim's: every element a
 * packet passes through is a sink; a route is an immutable array of sinks
 * (queue, pipe, queue, pipe, ..., endpoint) shared by every packet that
 * follows it; a packet carries its route and the index of its next hop and
 * is handed from sink to sink, with no lookup on the way.  Or forwarding by
 * entropy (rt == NULL), as real switches and htsim's switches do: the
 * packet carries its destination node and an entropy value (what a UDP
 * source port is to RoCE's ECMP), and each node picks its next hop among
 * the equal-cost ones from it (topo.h); every port and wire then hands the
 * packet to its fixed successor (pkt_forward).  A flow pinned to one path
 * uses a source route; per-packet spraying varies the entropy, so no list
 * of paths is kept per host pair.
 *
 * Ownership: whoever holds a pkt* owns it; sink->recv() transfers it.  A sink
 * forwards the packet, keeps it, or frees it to its pool (and counts it).
 *
 * Packets come from a pkt_pool: a free list over slabs, so nothing is
 * allocated per packet once the pool is warm.  The payload is never
 * materialised; size_bytes is what the wire carries.  A pool counts live
 * packets, so that a test can check sent = delivered + dropped + in flight.
 * sizeof(pkt) is 96 bytes (a static assertion keeps it within two cache
 * lines, 128 bytes); what every hop reads or writes (next, rt, hop, prio,
 * flags, size_bytes) is in the first 32, which the pool keeps within one
 * cache line.
 */
#ifndef AISIM_PKT_H
#define AISIM_PKT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pkt pkt;
typedef struct sink sink;
typedef struct route route;
struct wire;

struct sink {
    void (*recv)(sink *self, pkt *p);   /* takes ownership of p */
    const char *name;                   /* stable, readable: "leaf3->spine0" */
};

struct route {
    const route *reverse;   /* the path back (ACKs), or NULL */
    uint32_t id;            /* index among the network's routes */
    uint16_t len;           /* hops */
    sink *hop[];            /* hop[len-1] is the destination endpoint */
};

enum pkt_kind { PKT_DATA, PKT_ACK };

enum {
    PKT_F_ECT = 1 << 0,     /* ECN-capable transport */
    PKT_F_CE  = 1 << 1,     /* congestion experienced (set by a queue) */
    PKT_F_ECE = 1 << 2,     /* ECN echo (on ACKs) */
    PKT_F_CWR = 1 << 3,     /* congestion window reduced */
    PKT_F_PATHIDX = 1 << 4, /* entropy is a path index: each node takes
                               entropy mod (next hops) and divides it */
};

struct pkt {
    pkt *next;              /* intrusive FIFO link while queued */
    const route *rt;        /* the route being followed */
    uint16_t hop;           /* index in rt of the next sink */
    uint8_t kind;           /* enum pkt_kind */
    uint8_t prio;           /* priority class, 0 = highest */
    uint16_t flags;         /* PKT_F_* */
    uint16_t pad_;
    uint32_t size_bytes;    /* bytes on the wire */
    uint32_t flow_id;       /* owning flow */
    uint64_t seq;           /* DATA: first byte; ACK: cumulative ack */
    int64_t sent_ps;        /* when the source sent it (RTT, delay) */
    uint32_t dst_node;      /* forwarding by entropy (rt NULL): destination */
    uint32_t entropy;       /* ... and the value nodes pick next hops by */
    struct wire *in;        /* the wire it arrived over last, or NULL: not
                               yet on a wire; set only by wires into nodes
                               that run PFC (port.h), the only readers.
                               PFC finds the sending port from it, whatever
                               else the route holds */
    union {                 /* transport header: small, no subtypes */
        struct {
            uint32_t wnd_bytes;     /* advertised receive window */
            uint32_t data_bytes;    /* payload carried (DATA) */
            uint64_t ts_echo_ps;    /* echoed send time (ACK) */
            uint32_t sack[2][2];    /* SACK blocks, relative to seq */
        } tcp;
        struct {
            uint32_t data_bytes;    /* payload carried */
        } dg;                       /* datagram transport */
        struct {
            uint32_t data_bytes;    /* payload carried (DATA) */
            uint8_t op;             /* enum rdma_op (rdma.h) */
            uint8_t last;           /* DATA: last packet of its message */
            uint16_t aux;           /* READ request: message index (low bits) */
            uint32_t sack_off;      /* ACK/NACK: PSN that arrived - seq (0: none) */
            uint32_t int_slot;      /* HPCC: its telemetry record + 1, 0: none */
            uint64_t ts_ps;         /* DATA: send time; ACK: echoed */
        } rdma;                     /* RoCEv2 (transport/rdma.c): seq is the PSN */
        uint8_t raw[32];
    } h;
};

static_assert(sizeof(pkt) <= 128, "struct pkt must stay small");

/* The struct that embeds `member` at ptr (elements embed their sink). */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Hands p to the next sink on its route (htsim's sendOn). */
static inline void pkt_send_on(pkt *p)
{
    assert(p->hop < p->rt->len);
    sink *next = p->rt->hop[p->hop++];
    next->recv(next, p);
}

/* Hands p to the next sink: the next hop of its route, or, when it is
 * forwarded by entropy, the element's fixed successor `next`. */
static inline void pkt_forward(pkt *p, sink *next)
{
    if (p->rt) {
        pkt_send_on(p);
        return;
    }
    next->recv(next, p);
}

/* Starts p on route rt (from its first hop). */
static inline void pkt_send(pkt *p, const route *rt)
{
    p->rt = rt;
    p->hop = 0;
    pkt_send_on(p);
}

typedef struct pkt_pool pkt_pool;

pkt_pool *pkt_pool_create(void);
/* Frees every slab; asserts that no packet is live in debug builds. */
void pkt_pool_destroy(pkt_pool *pp);

/* A zeroed packet; never NULL (out of memory aborts). */
pkt *pkt_alloc(pkt_pool *pp);
void pkt_free(pkt_pool *pp, pkt *p);

uint64_t pkt_pool_live(const pkt_pool *pp);         /* allocated, not freed */
uint64_t pkt_pool_allocated(const pkt_pool *pp);    /* slab capacity */

/* Builds a route from n sinks (copied); the caller owns it (free()). */
route *route_create(sink *const *hops, uint16_t n);

#endif
