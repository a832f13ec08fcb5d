/*
 * fwd.h - forwarders: how a switch chooses among equal-cost next hops.
 *
 * Routing (topo.h) gives, at node u toward destination host D, the
 * equal-cost next hops: the egress ports of u on a shortest path to D (in
 * link id order; a host with NVLink next hops takes only those).  A
 * forwarder picks one of them.  It is asked in two places:
 *   - per packet, at every node, for packets forwarded hop by hop (pkt.h:
 *     rt NULL, dst_node and entropy set): h->p is the packet;
 *   - per flow, once per node of a source route the network builds for a
 *     connection that sends on one path (send = FWD_SEND_ROUTE; again
 *     after every routing change): h->p is NULL and h->key the flow's key.
 * A forwarder only chooses: it never sees a node with a single next hop,
 * and the network drops packets with none (topo_noroute_drops).  Its cost
 * per hop is that of choose(): the candidate arrays are kept per (node,
 * destination) and rebuilt only when routing changes, so no forwarder
 * walks a node's adjacency per packet.
 *
 * A scenario names one with `net.routing`; src/cli/registry.c lists them
 * (net_registry.forwarders, netreg.h).  A new forwarder is one file with
 * its fwd_ops plus one line there (docs/architecture.md has an example).
 */
#ifndef AISIM_FWD_H
#define AISIM_FWD_H

#include <stddef.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/pkt.h"
#include "aisim/port.h"

typedef struct topo topo;

/* One equal-cost next hop. */
typedef struct fwd_cand {
    port *q;                    /* its egress port at this node */
    int32_t hop;                /* link id * 2 + direction (topo_route_path) */
    int32_t other;              /* the node it leads to */
} fwd_cand;

/* The question a forwarder answers: which of c[0..n) (n >= 2). */
typedef struct fwd_hop {
    const topo *t;
    int32_t node;               /* where the choice is made */
    int32_t dst_host;           /* the destination host index */
    uint64_t seed;              /* the node's hash seed (topo_set_hash_seeds) */
    pkt *p;                     /* the packet (may update p->entropy), or NULL */
    uint64_t key;               /* p NULL: the flow's key (its 5-tuple hash) */
    const fwd_cand *c;
    uint32_t n;
    int64_t now_ps;             /* the time of the choice */
} fwd_hop;

/* How a connection sends its data packets under a forwarder. */
enum fwd_send {
    FWD_SEND_ROUTE,             /* one source route per connection, built by choose()
                                   with p NULL: per-flow, in order */
    FWD_SEND_RANDOM,            /* hop by hop, a random entropy value per packet */
    FWD_SEND_INDEX,             /* hop by hop, entropy a path index 0, 1, ...
                                   (PKT_F_PATHIDX): round robin over the paths */
};

typedef struct fwd_ops {
    const char *name;           /* `net.routing` in a scenario */
    const char *summary;        /* one line for messages and docs */
    enum fwd_send send;
    const cfg_key *keys;        /* its keys in `net.forwarder` ({0}-terminated), or NULL */
    size_t cfg_size;            /* bytes they bind into */
    size_t state_size;          /* private state, zeroed, owned by the topology */
    /* Checks the topology and fills the state (may be NULL); cfg is the
     * bound keys (NULL if it has none).  A located error names `path`, the
     * routing key, and `n`, its node (may be NULL). */
    int (*configure)(void *state, const void *cfg, const topo *t, const cfg_node *n,
                     const char *path, err *e);
    /* The index in [0, h->n) of the next hop to take. */
    uint32_t (*choose)(void *state, const fwd_hop *h);
    /* Frees what configure allocated (may be NULL); the state itself is
     * the topology's. */
    void (*fini)(void *state);
} fwd_ops;

/* Today's choice by entropy (the forwarder of ecmp, spray_rr and
 * spray_random): a packet with PKT_F_PATHIDX takes entropy mod n and
 * divides its entropy by n; another packet fmix64(entropy ^ seed) mod n, a
 * flow (p NULL) fmix64(key ^ seed) mod n, as an ECMP switch hashes a
 * 5-tuple.  For forwarders that fall back to it. */
uint32_t fwd_by_entropy(void *state, const fwd_hop *h);

extern const fwd_ops fwd_ecmp, fwd_spray_rr, fwd_spray_random, fwd_dmodk, fwd_adaptive;

#endif
