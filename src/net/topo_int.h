/*
 * topo_int.h - the topology's state, shared by topo.c (the graph: nodes,
 * links, ports and wires, connectivity, host receive sinks, failures) and
 * topo_route.c (routing: distance rows, forwarding by entropy, interned
 * routes, ECMP and path lists).  Not a public header: models use topo.h.
 *
 * Besides the structs, what both files call: the open-addressing table
 * (node names in topo.c; routes and path sets in topo_route.c), the hash
 * finaliser, the arena (topo.c) and the forwarders' receive function
 * (topo_route.c), which topo_add_node installs.
 */
#ifndef AISIM_TOPO_INT_H
#define AISIM_TOPO_INT_H

#include <stdlib.h>

#include "aisim/fwd.h"
#include "aisim/idtab.h"
#include "aisim/rng.h"
#include "aisim/topo.h"

typedef struct host_rx {
    sink base;                  /* recv: dispatch to the flow's endpoint */
    topo *t;
    int32_t node;               /* this host's node id */
    void (*tap)(void *ctx, const pkt *p, int rx);   /* capture, or NULL */
    void *tap_ctx;
} host_rx;

/* A node's forwarder: the sink wires hand packets forwarded by entropy
 * to (pkt.h); at a host, the first hop of the packets it sends. */
typedef struct node_fwd {
    sink base;                  /* recv: pick the next hop, hand to its port */
    topo *t;
    int32_t node;
} node_fwd;

typedef struct tadj {
    int32_t link;               /* link id */
    int32_t dir;                /* direction of travel away from this node */
    int32_t other;              /* node at the far end */
} tadj;

typedef struct tnode {
    char *name;                 /* unique, in the arena */
    enum node_kind kind;
    int32_t host;               /* host index, or -1 for a switch */
    uint64_t hash_seed;         /* ECMP hash seed */
    tadj *adj;                  /* links at this node, in link id order */
    uint32_t nadj, capadj;
    host_rx rx;                 /* hosts: the receive sink */
    node_fwd fwd;               /* the forwarder (switches, and hosts as senders) */
    shbuf *sb;                  /* switches: shared buffer pool, or NULL */
    bool has_intra;             /* has an intra-host (NVLink) link: a GPU or NVSwitch */
    bool stub;                  /* a switch whose links all go to hosts (an NVSwitch):
                                   its distance row is computed, not stored (dist_to) */
} tnode;

/* One direction of a link: its egress port and its wire, each on its own
 * cache lines (port.h: their hot fields come first). */
typedef struct tdir {
    _Alignas(64) port port;     /* egress port */
    _Alignas(64) wire wire;     /* propagation */
    rng r;                      /* the port's RED draws */
    char *port_name, *wire_name;
} tdir;

typedef struct tlink {
    int32_t a, b;               /* ends; dir 0 is a->b */
    link_cfg cfg;
    bool up;                    /* physically up */
    bool route_up;              /* up as routing currently sees it */
    tdir dir[2];                /* dir 0 is a->b */
    uint64_t stat_wire_losses;  /* packets lost on the wires at failures */
} tlink;

typedef struct tab_ent {
    uint64_t h;                 /* hash of the key */
    void *v;                    /* value; NULL: empty slot */
} tab_ent;

typedef struct tab {            /* open addressing, linear probing */
    tab_ent *e;
    size_t cap, n;              /* cap a power of two, n <= cap / 2 */
} tab;

typedef struct arena_blk arena_blk;     /* topo.c */

struct topo {
    sim *s;
    pkt_pool *pool;
    uint64_t seed;              /* run seed: hash seeds, RED streams */
    tnode **node;               /* by node id */
    size_t nnodes, capnodes;
    tlink **link;               /* by link id */
    size_t nlinks, caplinks;
    int32_t *host_node;         /* host index -> node id */
    size_t nhosts, caphosts;
    tab names;                  /* name -> node id + 1 */
    bool finished;
    uint32_t epoch;             /* bumped at every routing change */
    uint32_t **dist;            /* per BFS root node: hops of each node */
    uint32_t *dist_epoch;       /* epoch each row was computed in */
    int32_t *bfs;               /* BFS queue, nnodes */
    int32_t *hops;              /* path being built: link * 2 + dir */
    int32_t *rhops;             /* its reverse */
    sink **sinks;               /* route being built, 2 * nnodes + 1 */
    tab routes;                 /* path -> route */
    tab paths;                  /* host pair -> pathset */
    uint32_t nroutes;
    int32_t **rpaths;           /* by route id: count, then its link hops */
    size_t caprpaths;
    idtab binds;                /* flow_bind by flow id; released on unbind */
    arena_blk *arena;
    uint64_t stat_unbound_drops;
    uint64_t stat_unbound_bytes;
    uint64_t stat_noroute_drops;    /* forwarded by entropy, no next hop */
    uint64_t stat_noroute_bytes;
    uint64_t stat_host_rx_bytes;    /* bytes that reached a host's receive sink */
    const fwd_ops *fwd;         /* the forwarder (topo_set_forwarder), or NULL: by entropy */
    void *fwd_state;
    tab nhs;                    /* (node, destination) -> nh_set, for packets
                                   forwarded hop by hop (topo_route.c) */
    fwd_cand *cand;             /* next hops being collected, max degree */
    void (*on_change)(void *ctx);   /* routing changed (topo_on_routing_change) */
    void *on_change_ctx;
    const struct qdisc_ops *const *qdiscs;  /* what `qdisc` keys may name */
};

/* ---- hashing and tables (setup time; mix64 also per packet) ------------ */

static inline uint64_t mix64(uint64_t x)   /* MurmurHash3's fmix64 */
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static inline void tab_reserve(tab *tb)
{
    if ((tb->n + 1) * 2 <= tb->cap)
        return;
    size_t nc = tb->cap ? 2 * tb->cap : 64;
    tab_ent *ne = xcalloc(nc, sizeof *ne);
    for (size_t i = 0; i < tb->cap; i++) {
        if (!tb->e[i].v)
            continue;
        size_t j = tb->e[i].h & (nc - 1);
        while (ne[j].v)
            j = (j + 1) & (nc - 1);
        ne[j] = tb->e[i];
    }
    free(tb->e);
    tb->e = ne;
    tb->cap = nc;
}

/* The slot holding a value equal to key, or the empty slot where it would
 * go.  Call tab_reserve() first. */
static inline tab_ent *tab_slot(tab *tb, uint64_t h,
                                bool (*eq)(const void *v, const void *key), const void *key)
{
    size_t m = tb->cap - 1;
    for (size_t i = h & m;; i = (i + 1) & m) {
        tab_ent *e = &tb->e[i];
        if (!e->v || (e->h == h && eq(e->v, key)))
            return e;
    }
}

/* ---- memory (topo.c) ---------------------------------------------------- */

/* Zeroed memory that lives as long as the topology (see topo.c). */
void *topo_arena_alloc_aligned(topo *t, size_t n, size_t align);

static inline void *arena_alloc(topo *t, size_t n)
{
    return topo_arena_alloc_aligned(t, n, 16);
}

/* ---- routing (topo_route.c) --------------------------------------------- */

/* The receive function of every node's forwarder (node_fwd): forwarding
 * by entropy, one hop. */
void topo_node_forward(sink *self, pkt *p);

#endif
