/*
 * topo.c - the network graph, its ports and wires, host receive sinks, and
 * routing: ECMP by per-switch hash, equal-cost path lists, link failures
 * (see topo.h).
 *
 * Graph.  Nodes and links are added before topo_finish(); each link owns two
 * egress ports and two wires (one per direction), initialised at once so
 * that their addresses never change (they are sinks in routes).  Hosts own a
 * receive sink that hands packets to the endpoint bound for p->flow_id: a
 * dense array indexed by flow id, so delivery is O(1) and does no lookup by
 * name.
 *
 * Distances.  Routing needs, for a destination host D, the hop distance of
 * every node to D over the links routing believes are up.  A row is a BFS
 * that does not expand through hosts other than its root (hosts never
 * forward).  A host whose few links all go to switches shares their rows
 * (its distance is one more than the least of theirs, see dist_to), so a
 * fat tree needs one row per edge switch, not per host, and a dual-plane
 * fabric one per ToR and NVSwitch, not per GPU.  Rows are computed on
 * first use and dropped when routing changes (an epoch counter), so memory
 * grows with the destinations actually used.  From node u, the next hops
 * toward D are the neighbours v with dist(v) = dist(u) - 1 that are
 * switches or D itself: the equal-cost DAG.
 *
 * Routes.  A path is a sequence of (link, direction); its route is ports and
 * wires in that order plus D's receive sink.  Routes are interned in a table
 * keyed by the path, so ECMP and the path lists share route objects, a path
 * is built once however many flows use it, and a route stays valid (packets
 * may hold it) until topo_destroy().  A route and its reverse (the same
 * links backwards, ending at the source's receive sink) are created
 * together and point at each other.
 *
 * Cost: route requests do O(path length x degree) work plus a BFS per
 * destination per routing epoch; the packet path does none of it.
 */
#include "aisim/topo.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/idtab.h"
#include "aisim/rng.h"
#include "aisim/units.h"

#define DIST_INF UINT32_MAX
#define ARENA_BLOCK_BYTES ((size_t)64 * 1024)
#define ARENA_ALIGN 64          /* a cache line: links are placed on lines */

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

typedef struct flow_bind {
    sink *tx, *rx;              /* endpoints at the source / destination */
    int32_t src_node, dst_node; /* -1: unbound */
} flow_bind;

typedef struct pathset {
    uint64_t key;               /* src_host * hosts + dst_host */
    uint32_t epoch;             /* routing epoch it was computed in */
    size_t n;                   /* paths */
    const route **r;            /* in the arena */
} pathset;

typedef struct tab_ent {
    uint64_t h;                 /* hash of the key */
    void *v;                    /* value; NULL: empty slot */
} tab_ent;

typedef struct tab {            /* open addressing, linear probing */
    tab_ent *e;
    size_t cap, n;              /* cap a power of two, n <= cap / 2 */
} tab;

typedef struct arena_blk {
    struct arena_blk *next;
    size_t used, cap;           /* bytes */
    _Alignas(ARENA_ALIGN) unsigned char data[];
} arena_blk;

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
    void (*on_change)(void *ctx);   /* routing changed (topo_on_routing_change) */
    void *on_change_ctx;
};

/* ---- memory ------------------------------------------------------------ */

/* n zeroed bytes at a multiple of `align` (a power of two, at most 64)
 * that live as long as the topology. */
static void *arena_alloc_aligned(topo *t, size_t n, size_t align)
{
    assert(align >= 16 && align <= ARENA_ALIGN && (align & (align - 1)) == 0);
    n = (n + 15) & ~(size_t)15;
    arena_blk *b = t->arena;
    if (n > ARENA_BLOCK_BYTES / 4) {        /* large: a block of its own */
        arena_blk *nb = xaligned_alloc(ARENA_ALIGN, sizeof *nb + n);
        nb->used = nb->cap = n;
        if (b) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = NULL;
            t->arena = nb;
        }
        memset(nb->data, 0, n);
        return nb->data;
    }
    size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0;
    if (!b || at + n > b->cap) {
        b = xaligned_alloc(ARENA_ALIGN, sizeof *b + ARENA_BLOCK_BYTES);
        b->used = 0;
        b->cap = ARENA_BLOCK_BYTES;
        b->next = t->arena;
        t->arena = b;
        at = 0;
    }
    void *p = (char *)b->data + at;
    b->used = at + n;
    memset(p, 0, n);
    return p;
}

static void *arena_alloc(topo *t, size_t n)
{
    return arena_alloc_aligned(t, n, 16);
}

static char *arena_printf(topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *arena_printf(topo *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = arena_alloc(t, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- hashing and tables (setup time only) ------------------------------ */

static uint64_t mix64(uint64_t x)      /* MurmurHash3's fmix64 */
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);     /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return mix64(h);
}

static uint64_t hash_hops(const int32_t *hops, int n)
{
    uint64_t h = (uint64_t)n;
    for (int i = 0; i < n; i++)
        h = mix64(h ^ ((uint64_t)(uint32_t)hops[i] + UINT64_C(0x9e3779b97f4a7c15)));
    return h;
}

static void tab_reserve(tab *tb)
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
static tab_ent *tab_slot(tab *tb, uint64_t h, bool (*eq)(const void *v, const void *key),
                         const void *key)
{
    size_t m = tb->cap - 1;
    for (size_t i = h & m;; i = (i + 1) & m) {
        tab_ent *e = &tb->e[i];
        if (!e->v || (e->h == h && eq(e->v, key)))
            return e;
    }
}

typedef struct name_key {
    const topo *t;
    const char *name;
} name_key;

static bool name_eq(const void *v, const void *key)
{
    const name_key *k = key;
    return strcmp(k->t->node[(uintptr_t)v - 1]->name, k->name) == 0;
}

typedef struct sinks_key {
    sink *const *hop;
    uint16_t len;
} sinks_key;

static bool route_eq(const void *v, const void *key)
{
    const route *r = v;
    const sinks_key *k = key;
    return r->len == k->len && memcmp(r->hop, k->hop, k->len * sizeof *k->hop) == 0;
}

static bool pathset_eq(const void *v, const void *key)
{
    return ((const pathset *)v)->key == *(const uint64_t *)key;
}

/* ---- the host receive sink --------------------------------------------- */

static void host_recv(sink *self, pkt *p)
{
    host_rx *h = (host_rx *)self;
    topo *t = h->t;
    if (h->tap)
        h->tap(h->tap_ctx, p, 1);
    flow_bind *b = idtab_peek(&t->binds, p->flow_id);     /* zeroes: unbound */
    if (b) {
        if (b->dst_node == h->node && b->rx) {
            t->stat_host_rx_bytes += p->size_bytes;
            b->rx->recv(b->rx, p);
            return;
        }
        if (b->src_node == h->node && b->tx) {
            t->stat_host_rx_bytes += p->size_bytes;
            b->tx->recv(b->tx, p);
            return;
        }
    }
    /* Nobody to take it: a drop, not a delivery. */
    t->stat_unbound_drops++;
    t->stat_unbound_bytes += p->size_bytes;
    pkt_free(t->pool, p);
}

static void node_forward(sink *self, pkt *p);

/* ---- building ----------------------------------------------------------- */

topo *topo_create(sim *s, pkt_pool *pool, uint64_t seed)
{
    topo *t = xcalloc(1, sizeof *t);
    t->s = s;
    t->pool = pool;
    t->seed = seed;
    idtab_init(&t->binds, sizeof(flow_bind));
    t->epoch = 1;
    return t;
}

void topo_destroy(topo *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nlinks; i++)
        for (int d = 0; d < 2; d++) {
            wire_fini(&t->link[i]->dir[d].wire);
            port_fini(&t->link[i]->dir[d].port);
        }
    for (size_t i = 0; i < t->nnodes; i++)
        free(t->node[i]->adj);
    if (t->dist)
        for (size_t i = 0; i < t->nnodes; i++)
            free(t->dist[i]);
    free(t->dist);
    free(t->dist_epoch);
    free(t->bfs);
    free(t->hops);
    free(t->rhops);
    free(t->sinks);
    free(t->names.e);
    free(t->routes.e);
    free(t->rpaths);
    free(t->paths.e);
    idtab_fini(&t->binds);
    free(t->node);
    free(t->link);
    free(t->host_node);
    for (arena_blk *b = t->arena, *nb; b; b = nb) {
        nb = b->next;
        free(b);
    }
    free(t);
}

int topo_find_node(const topo *t, const char *name)
{
    if (!t->names.cap)
        return -1;
    name_key k = {t, name};
    tab_ent *e = tab_slot((tab *)&t->names, hash_str(name), name_eq, &k);
    return e->v ? (int)((uintptr_t)e->v - 1) : -1;
}

int topo_add_node(topo *t, const char *name, enum node_kind kind)
{
    assert(!t->finished);
    if (!name || !*name || topo_find_node(t, name) >= 0)
        return AISIM_EINVAL;
    if (t->nnodes >= TOPO_MAX_NODES)
        return AISIM_ERANGE;
    if (t->nnodes == t->capnodes) {
        t->capnodes = t->capnodes ? 2 * t->capnodes : 64;
        t->node = xrealloc(t->node, t->capnodes * sizeof *t->node);
    }
    int id = (int)t->nnodes++;
    tnode *n = arena_alloc(t, sizeof *n);
    t->node[id] = n;
    n->name = arena_printf(t, "%s", name);
    n->kind = kind;
    n->host = -1;
    rng r;
    rng_init(&r, t->seed, "topo.hash", (uint64_t)id);
    n->hash_seed = rng_next(&r);
    if (kind == NODE_HOST) {
        if (t->nhosts == t->caphosts) {
            t->caphosts = t->caphosts ? 2 * t->caphosts : 64;
            t->host_node = xrealloc(t->host_node, t->caphosts * sizeof *t->host_node);
        }
        n->host = (int32_t)t->nhosts;
        t->host_node[t->nhosts++] = id;
        n->rx.base.recv = host_recv;
        n->rx.base.name = n->name;
        n->rx.t = t;
        n->rx.node = id;
    }
    n->fwd.base.recv = node_forward;
    n->fwd.base.name = n->name;
    n->fwd.t = t;
    n->fwd.node = id;
    tab_reserve(&t->names);
    name_key k = {t, n->name};
    tab_ent *e = tab_slot(&t->names, hash_str(n->name), name_eq, &k);
    e->h = hash_str(n->name);
    e->v = (void *)(uintptr_t)(id + 1);
    t->names.n++;
    return id;
}

static void adj_push(tnode *n, int32_t link, int32_t dir, int32_t other)
{
    if (n->nadj == n->capadj) {
        n->capadj = n->capadj ? 2 * n->capadj : 4;
        n->adj = xrealloc(n->adj, n->capadj * sizeof *n->adj);
    }
    n->adj[n->nadj++] = (tadj){link, dir, other};
}

int topo_add_link(topo *t, int a, int b, const link_cfg *cfg)
{
    assert(!t->finished);
    if (a < 0 || b < 0 || (size_t)a >= t->nnodes || (size_t)b >= t->nnodes || a == b)
        return AISIM_EINVAL;
    if (cfg->rate_bps <= 0 || cfg->delay_ps < 0 || cfg->port.buffer_bytes <= 0 ||
        t->nlinks >= TOPO_MAX_LINKS)
        return AISIM_ERANGE;
    if (t->nlinks == t->caplinks) {
        t->caplinks = t->caplinks ? 2 * t->caplinks : 64;
        t->link = xrealloc(t->link, t->caplinks * sizeof *t->link);
    }
    int id = (int)t->nlinks++;
    tlink *l = arena_alloc_aligned(t, sizeof *l, _Alignof(tlink));
    t->link[id] = l;
    l->a = a;
    l->b = b;
    l->cfg = *cfg;
    l->cfg.port.rate_bps = cfg->rate_bps;
    l->up = l->route_up = true;
    for (int d = 0; d < 2; d++) {
        const char *from = t->node[d ? b : a]->name, *to = t->node[d ? a : b]->name;
        l->dir[d].port_name = arena_printf(t, "%s->%s", from, to);
        l->dir[d].wire_name = arena_printf(t, "%s->%s/wire", from, to);
        rng_init(&l->dir[d].r, t->seed, "topo.port", (uint64_t)id * 2 + (uint64_t)d);
        port_init(&l->dir[d].port, t->s, t->pool, &l->dir[d].r, &l->cfg.port, l->dir[d].port_name);
        wire_init(&l->dir[d].wire, t->s, cfg->delay_ps, l->dir[d].wire_name);
        wire_set_src(&l->dir[d].wire, &l->dir[d].port);
        /* Packets forwarded by entropy: port, its wire, the far node. */
        tnode *far = t->node[d ? a : b];
        l->dir[d].port.next = &l->dir[d].wire.base;
        l->dir[d].wire.next = far->kind == NODE_HOST ? &far->rx.base : &far->fwd.base;
    }
    adj_push(t->node[a], id, 0, b);
    adj_push(t->node[b], id, 1, a);
    if (cfg->intra_host)
        t->node[a]->has_intra = t->node[b]->has_intra = true;
    return id;
}

/* Union-find over switches joined by switch-switch links. */
static int32_t uf_find(int32_t *uf, int32_t x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

/* True if hosts a and b have a path through switches only (or a direct
 * link): they touch the same switch component. */
static bool hosts_joined(const topo *t, int32_t *uf, int32_t a, int32_t b)
{
    const tnode *na = t->node[a], *nb = t->node[b];
    for (uint32_t i = 0; i < na->nadj; i++) {
        int32_t x = na->adj[i].other;
        if (x == b)
            return true;
        if (t->node[x]->kind != NODE_SWITCH)
            continue;
        int32_t r = uf_find(uf, x);
        for (uint32_t j = 0; j < nb->nadj; j++) {
            int32_t y = nb->adj[j].other;
            if (t->node[y]->kind == NODE_SWITCH && uf_find(uf, y) == r)
                return true;
        }
    }
    return false;
}

/* True if every host touches the switch component of root r. */
static bool all_hosts_touch(const topo *t, int32_t *uf, int32_t r)
{
    for (size_t h = 0; h < t->nhosts; h++) {
        const tnode *n = t->node[t->host_node[h]];
        bool ok = false;
        for (uint32_t i = 0; i < n->nadj && !ok; i++) {
            int32_t x = n->adj[i].other;
            ok = t->node[x]->kind == NODE_SWITCH && uf_find(uf, x) == r;
        }
        if (!ok)
            return false;
    }
    return true;
}

static int check_connected(const topo *t, err *e)
{
    int32_t *uf = xmalloc(t->nnodes * sizeof *uf);
    for (size_t i = 0; i < t->nnodes; i++)
        uf[i] = (int32_t)i;
    for (size_t i = 0; i < t->nlinks; i++) {
        const tlink *l = t->link[i];
        if (t->node[l->a]->kind == NODE_SWITCH && t->node[l->b]->kind == NODE_SWITCH) {
            int32_t ra = uf_find(uf, l->a), rb = uf_find(uf, l->b);
            uf[ra] = rb;
        }
    }
    int rc = 0;
    /* Fast path: one switch component that every host touches. */
    const tnode *h0 = t->node[t->host_node[0]];
    for (uint32_t i = 0; i < h0->nadj; i++) {
        int32_t x = h0->adj[i].other;
        if (t->node[x]->kind == NODE_SWITCH && all_hosts_touch(t, uf, uf_find(uf, x)))
            goto out;
    }
    for (size_t a = 0; a < t->nhosts; a++)
        for (size_t b = a + 1; b < t->nhosts; b++)
            if (!hosts_joined(t, uf, t->host_node[a], t->host_node[b])) {
                rc = ERR(e, AISIM_EINVAL,
                         "hosts %s and %s are not connected (hosts do not forward, so a path "
                         "must run through switches)",
                         t->node[t->host_node[a]]->name, t->node[t->host_node[b]]->name);
                goto out;
            }
out:
    free(uf);
    return rc;
}

int topo_finish(topo *t, err *e)
{
    assert(!t->finished);
    if (t->nhosts == 0)
        return ERR(e, AISIM_EINVAL, "the topology has no hosts");
    for (size_t h = 0; h < t->nhosts; h++) {
        const tnode *n = t->node[t->host_node[h]];
        if (n->nadj == 0)
            return ERR(e, AISIM_EINVAL, "host %s has no link", n->name);
    }
    int rc = check_connected(t, e);
    if (rc)
        return rc;
    /* PFC is accounted where a PFC link delivers: every egress port of the
     * node at each end of such a link, for packets that came over any wire
     * into that node (the wire stamps them: pkt.in).  Wires into other
     * nodes need not. */
    for (size_t l = 0; l < t->nlinks; l++)
        for (int d = 0; d < 2; d++)
            t->link[l]->dir[d].wire.stamp_in = 0;
    for (size_t l = 0; l < t->nlinks; l++) {
        const tlink *k = t->link[l];
        if (k->cfg.port.pfc_xoff_bytes <= 0)
            continue;
        const tnode *ends[2] = {t->node[k->a], t->node[k->b]};
        for (int j = 0; j < 2; j++)
            for (uint32_t i = 0; i < ends[j]->nadj; i++) {
                tdir *out = &t->link[ends[j]->adj[i].link]->dir[ends[j]->adj[i].dir];
                tdir *in = &t->link[ends[j]->adj[i].link]->dir[ends[j]->adj[i].dir ^ 1];
                out->port.pfc_in = 1;
                in->wire.stamp_in = 1;
            }
    }
    for (size_t u = 0; u < t->nnodes; u++) {
        tnode *n = t->node[u];
        n->stub = n->kind == NODE_SWITCH && n->nadj > 0;
        for (uint32_t i = 0; i < n->nadj && n->stub; i++)
            n->stub = t->node[n->adj[i].other]->kind == NODE_HOST;
    }
    t->dist = xcalloc(t->nnodes, sizeof *t->dist);
    t->dist_epoch = xcalloc(t->nnodes, sizeof *t->dist_epoch);
    t->bfs = xmalloc(t->nnodes * sizeof *t->bfs);
    t->hops = xmalloc(t->nnodes * sizeof *t->hops);
    t->rhops = xmalloc(t->nnodes * sizeof *t->rhops);
    t->sinks = xmalloc((2 * t->nnodes + 1) * sizeof *t->sinks);
    t->finished = true;
    return 0;
}

/* ---- accessors ---------------------------------------------------------- */

size_t topo_nodes(const topo *t) { return t->nnodes; }
size_t topo_hosts(const topo *t) { return t->nhosts; }
size_t topo_links(const topo *t) { return t->nlinks; }

const char *topo_node_name(const topo *t, int node)
{
    assert(node >= 0 && (size_t)node < t->nnodes);
    return t->node[node]->name;
}

enum node_kind topo_node_kind(const topo *t, int node)
{
    assert(node >= 0 && (size_t)node < t->nnodes);
    return t->node[node]->kind;
}

int topo_host_node(const topo *t, int host)
{
    assert(host >= 0 && (size_t)host < t->nhosts);
    return t->host_node[host];
}

int topo_node_host(const topo *t, int node)
{
    assert(node >= 0 && (size_t)node < t->nnodes);
    return t->node[node]->host;
}

port *topo_link_port(topo *t, int link, int dir)
{
    assert(link >= 0 && (size_t)link < t->nlinks && (dir == 0 || dir == 1));
    return &t->link[link]->dir[dir].port;
}

wire *topo_link_wire(topo *t, int link, int dir)
{
    assert(link >= 0 && (size_t)link < t->nlinks && (dir == 0 || dir == 1));
    return &t->link[link]->dir[dir].wire;
}

void topo_link_ends(const topo *t, int link, int *a, int *b)
{
    assert(link >= 0 && (size_t)link < t->nlinks);
    *a = t->link[link]->a;
    *b = t->link[link]->b;
}

int topo_find_link(const topo *t, int a, int b)
{
    assert(a >= 0 && (size_t)a < t->nnodes);
    const tnode *n = t->node[a];
    for (uint32_t i = 0; i < n->nadj; i++)
        if (n->adj[i].other == b)
            return n->adj[i].link;
    return -1;
}

bool topo_link_is_up(const topo *t, int link)
{
    assert(link >= 0 && (size_t)link < t->nlinks);
    return t->link[link]->up;
}

bool topo_link_is_intra_host(const topo *t, int link)
{
    assert(link >= 0 && (size_t)link < t->nlinks);
    return t->link[link]->cfg.intra_host;
}

uint64_t topo_link_wire_losses(const topo *t, int link)
{
    assert(link >= 0 && (size_t)link < t->nlinks);
    return t->link[link]->stat_wire_losses;
}

uint64_t topo_unbound_drops(const topo *t) { return t->stat_unbound_drops; }

sink *topo_host_sink(topo *t, int host)
{
    return &t->node[topo_host_node(t, host)]->rx.base;
}

void topo_set_hash_seeds(topo *t, bool all_equal, uint64_t value)
{
    for (size_t i = 0; i < t->nnodes; i++) {
        if (all_equal) {
            t->node[i]->hash_seed = value;
        } else {
            rng r;
            rng_init(&r, t->seed, "topo.hash", (uint64_t)i);
            t->node[i]->hash_seed = rng_next(&r);
        }
    }
}

void topo_set_shared_buffer(topo *t, int64_t bytes, double alpha, double pfc_alpha)
{
    assert(bytes > 0 && alpha > 0 && pfc_alpha >= 0);
    for (size_t i = 0; i < t->nnodes; i++) {
        tnode *n = t->node[i];
        if (n->kind != NODE_SWITCH)
            continue;
        if (!n->sb)
            n->sb = arena_alloc(t, sizeof *n->sb);
        assert(n->sb->used_bytes == 0);
        n->sb->size_bytes = bytes;
        n->sb->alpha = alpha;
        n->sb->pfc_alpha = pfc_alpha;
        for (uint32_t j = 0; j < n->nadj; j++)
            t->link[n->adj[j].link]->dir[n->adj[j].dir].port.sb = n->sb;
    }
}

void topo_set_nic_flow_rr(topo *t)
{
    for (size_t h = 0; h < t->nhosts; h++) {
        const tnode *n = t->node[t->host_node[h]];
        for (uint32_t j = 0; j < n->nadj; j++)
            port_set_flow_rr(&t->link[n->adj[j].link]->dir[n->adj[j].dir].port);
    }
}

void topo_set_mark_dequeue(topo *t)
{
    for (size_t i = 0; i < t->nnodes; i++) {
        const tnode *n = t->node[i];
        if (n->kind == NODE_HOST)
            continue;
        for (uint32_t j = 0; j < n->nadj; j++)
            port_set_mark_dequeue(&t->link[n->adj[j].link]->dir[n->adj[j].dir].port);
    }
}

const shbuf *topo_node_shbuf(const topo *t, int node)
{
    assert(node >= 0 && (size_t)node < t->nnodes);
    return t->node[node]->sb;
}

void topo_bind_flow(topo *t, uint32_t flow_id, int src_host, sink *tx, int dst_host, sink *rx)
{
    assert(src_host != dst_host);
    flow_bind *b = idtab_get(&t->binds, flow_id);
    if (!tx && !rx) {                   /* unbind */
        if (b)
            idtab_release(&t->binds, flow_id);
        return;
    }
    if (!b)
        b = idtab_set(&t->binds, flow_id);
    *b = (flow_bind){tx, rx, topo_host_node(t, src_host), topo_host_node(t, dst_host)};
}

/* ---- routing ------------------------------------------------------------ */

/* Hops from every node to node root over links routing sees up, not
 * through hosts other than root; DIST_INF if unreachable. */
static const uint32_t *dist_row(topo *t, int32_t root)
{
    if (t->dist_epoch[root] == t->epoch)
        return t->dist[root];
    if (!t->dist[root])
        t->dist[root] = xmalloc(t->nnodes * sizeof **t->dist);
    uint32_t *d = t->dist[root];
    for (size_t i = 0; i < t->nnodes; i++)
        d[i] = DIST_INF;
    size_t qh = 0, qt = 0;
    d[root] = 0;
    t->bfs[qt++] = root;
    while (qh < qt) {
        int32_t u = t->bfs[qh++];
        const tnode *n = t->node[u];
        if (u != root && n->kind == NODE_HOST)
            continue;                       /* hosts do not forward */
        for (uint32_t i = 0; i < n->nadj; i++) {
            int32_t v = n->adj[i].other;
            if (t->link[n->adj[i].link]->route_up && d[v] == DIST_INF) {
                d[v] = d[u] + 1;
                t->bfs[qt++] = v;
            }
        }
    }
    t->dist_epoch[root] = t->epoch;
    return d;
}

/* Distances to one destination host D.  A host whose links (at most
 * DV_ROWS) all go to switches shares their rows: its distance from node v
 * is 1 + the least of its switches' distances (over the links routing sees
 * up), exactly what a BFS from D gives, since hosts do not forward.  So a
 * fat tree needs a row per edge switch, a dual-plane fabric one per ToR,
 * not one per GPU.  A stub switch (an NVSwitch: every link goes to a host)
 * has no row: hosts do not forward, so its BFS reaches only itself (0) and
 * the hosts on its up links (1), which dv computes; a 100,000-GPU fabric
 * would otherwise hold a row of every node per server (6 GB).  Other hosts
 * (a direct host-host link, more links) have a row of their own. */
#define DV_ROWS 4

typedef struct dview {
    const topo *t;
    const uint32_t *row[DV_ROWS];   /* rows to take the least of */
    int32_t stub[DV_ROWS];      /* and stub switches, as rows computed in dv */
    uint32_t nrow, nstub;       /* both 0: the destination is cut off */
    int32_t dst;                /* destination node */
    uint32_t off;               /* added to row values: 1 if rooted at D's switches */
} dview;

#define DV_INF UINT32_MAX

static dview dist_to(topo *t, int dst_host)
{
    dview v = {.t = t, .dst = t->host_node[dst_host], .off = 1};
    const tnode *n = t->node[v.dst];
    bool shared = n->nadj <= DV_ROWS;
    for (uint32_t i = 0; i < n->nadj && shared; i++)
        shared = t->node[n->adj[i].other]->kind == NODE_SWITCH;
    if (!shared) {
        v.row[v.nrow++] = dist_row(t, v.dst);
        v.off = 0;
        return v;
    }
    for (uint32_t i = 0; i < n->nadj; i++) {
        int32_t s = n->adj[i].other;
        if (!t->link[n->adj[i].link]->route_up)
            continue;
        if (t->node[s]->stub)
            v.stub[v.nstub++] = s;
        else
            v.row[v.nrow++] = dist_row(t, s);
    }
    return v;
}

static uint32_t dv(const dview *v, int32_t node)
{
    if (node == v->dst)
        return 0;
    uint32_t m = DIST_INF;
    for (uint32_t i = 0; i < v->nrow; i++)
        if (v->row[i][node] < m)
            m = v->row[i][node];
    for (uint32_t i = 0; i < v->nstub && m > 1; i++) {
        const tnode *n = v->t->node[node];
        if (node == v->stub[i]) {
            m = 0;
        } else if (n->kind == NODE_HOST) {
            for (uint32_t j = 0; j < n->nadj; j++)
                if (n->adj[j].other == v->stub[i] && v->t->link[n->adj[j].link]->route_up)
                    m = 1;
        }
    }
    return m == DIST_INF ? DV_INF : m + v->off;
}

/* Is adjacency a of node u on a shortest path toward the destination? */
static bool on_shortest(const topo *t, const dview *d, int32_t u, const tadj *a)
{
    int32_t v = a->other;
    uint32_t dvv = dv(d, v);
    return t->link[a->link]->route_up && dvv != DV_INF && dvv + 1 == dv(d, u) &&
           (v == d->dst || t->node[v]->kind == NODE_SWITCH);
}

/* Is adjacency a of node u a next hop toward the destination?  A shortest
 * one, except that a host with an intra-host (NVLink) next hop takes only
 * those: GPUs of a server talk over NVLink even where a ToR they share is
 * as few hops away. */
static bool is_next_hop(const topo *t, const dview *d, int32_t u, const tadj *a)
{
    if (!on_shortest(t, d, u, a))
        return false;
    const tnode *n = t->node[u];
    if (!n->has_intra || t->link[a->link]->cfg.intra_host)
        return true;
    for (uint32_t i = 0; i < n->nadj; i++)
        if (t->link[n->adj[i].link]->cfg.intra_host && on_shortest(t, d, u, &n->adj[i]))
            return false;
    return true;
}

/* Forwarding by entropy (pkt.h): at node u, the next hops toward
 * p->dst_node are the equal-cost ones (is_next_hop, in link id order);
 * with c of them the packet takes number fmix64(entropy ^ u's hash seed)
 * mod c, as an ECMP switch hashes a packet's 5-tuple, or, for a path index
 * (PKT_F_PATHIDX), entropy mod c, the entropy then divided by c: index i
 * names one path, and i = 0, 1, ... cycle through all of them where every
 * node on the way has the same number of next hops.  A node with no next
 * hop (a failure routing knows of cut the destination off) drops it. */
static void node_forward(sink *self, pkt *p)
{
    node_fwd *f = container_of(self, node_fwd, base);
    topo *t = f->t;
    int32_t u = f->node;
    const tnode *nu = t->node[u];
    int dst_host = t->node[p->dst_node]->host;
    dview d = dist_to(t, dst_host);
    uint32_t c = 0;
    if (dv(&d, u) != DV_INF)
        for (uint32_t i = 0; i < nu->nadj; i++)
            c += is_next_hop(t, &d, u, &nu->adj[i]);
    if (c == 0) {
        t->stat_noroute_drops++;
        t->stat_noroute_bytes += p->size_bytes;
        pkt_free(t->pool, p);
        return;
    }
    uint64_t pick = 0;
    if (c > 1) {
        if (p->flags & PKT_F_PATHIDX) {
            pick = p->entropy % c;
            p->entropy /= c;
        } else {
            pick = mix64(p->entropy ^ nu->hash_seed) % c;
        }
    }
    for (uint32_t i = 0; i < nu->nadj; i++) {
        const tadj *a = &nu->adj[i];
        if (is_next_hop(t, &d, u, a) && pick-- == 0) {
            port *q = &t->link[a->link]->dir[a->dir].port;
            q->base.recv(&q->base, p);
            return;
        }
    }
}

sink *topo_node_forwarder(topo *t, int node) { return &t->node[node]->fwd.base; }

uint64_t topo_noroute_drops(const topo *t) { return t->stat_noroute_drops; }

static void fill_sinks(topo *t, const int32_t *hops, int n, int32_t dst)
{
    for (int i = 0; i < n; i++) {
        tlink *l = t->link[hops[i] >> 1];
        int d = hops[i] & 1;
        t->sinks[2 * i] = &l->dir[d].port.base;
        t->sinks[2 * i + 1] = &l->dir[d].wire.base;
    }
    t->sinks[2 * n] = &t->node[dst]->rx.base;
}

static route *new_route(topo *t, uint64_t h, int nsinks, const int32_t *hops)
{
    route *r = arena_alloc(t, sizeof *r + (size_t)nsinks * sizeof(sink *));
    r->id = t->nroutes++;
    /* Its path as link hops, for topo_route_path. */
    if (r->id >= t->caprpaths) {
        t->caprpaths = t->caprpaths ? 2 * t->caprpaths : 256;
        t->rpaths = xrealloc(t->rpaths, t->caprpaths * sizeof *t->rpaths);
    }
    int32_t *path = arena_alloc(t, (size_t)(nsinks / 2 + 1) * sizeof *path);
    path[0] = nsinks / 2;
    memcpy(path + 1, hops, (size_t)(nsinks / 2) * sizeof *path);
    t->rpaths[r->id] = path;
    r->len = (uint16_t)nsinks;
    memcpy(r->hop, t->sinks, (size_t)nsinks * sizeof(sink *));
    tab_reserve(&t->routes);
    sinks_key k = {r->hop, r->len};
    tab_ent *e = tab_slot(&t->routes, h, route_eq, &k);
    assert(!e->v);
    e->h = h;
    e->v = r;
    t->routes.n++;
    return r;
}

/* The interned route of path hops[0..n) from node src to node dst. */
static const route *route_of_path(topo *t, const int32_t *hops, int n, int32_t src, int32_t dst)
{
    assert(2 * n + 1 <= UINT16_MAX);        /* route.len is 16-bit: <= 32767 links */
    uint64_t h = hash_hops(hops, n);
    fill_sinks(t, hops, n, dst);
    tab_reserve(&t->routes);
    sinks_key k = {t->sinks, (uint16_t)(2 * n + 1)};
    tab_ent *e = tab_slot(&t->routes, h, route_eq, &k);
    if (e->v)
        return e->v;
    route *fwd = new_route(t, h, 2 * n + 1, hops);
    for (int i = 0; i < n; i++)
        t->rhops[i] = hops[n - 1 - i] ^ 1;
    fill_sinks(t, t->rhops, n, src);
    route *rev = new_route(t, hash_hops(t->rhops, n), 2 * n + 1, t->rhops);
    fwd->reverse = rev;
    rev->reverse = fwd;
    return fwd;
}

const int32_t *topo_route_path(const topo *t, const route *rt, size_t *n)
{
    const int32_t *p = t->rpaths[rt->id];
    *n = (size_t)p[0];
    return p + 1;
}

const route *topo_route_ecmp(topo *t, int src_host, int dst_host, uint64_t key)
{
    assert(t->finished && src_host != dst_host);
    int32_t src = topo_host_node(t, src_host), dst = topo_host_node(t, dst_host);
    dview d = dist_to(t, dst_host);
    if (dv(&d, src) == DV_INF)
        return NULL;
    int n = 0;
    for (int32_t u = src; u != dst;) {
        const tnode *nu = t->node[u];
        uint32_t ncand = 0;
        for (uint32_t i = 0; i < nu->nadj; i++)
            ncand += is_next_hop(t, &d, u, &nu->adj[i]);
        assert(ncand > 0);
        uint64_t pick = ncand == 1 ? 0 : mix64(key ^ nu->hash_seed) % ncand;
        for (uint32_t i = 0; i < nu->nadj; i++) {
            const tadj *a = &nu->adj[i];
            if (is_next_hop(t, &d, u, a) && pick-- == 0) {
                t->hops[n++] = a->link * 2 + a->dir;
                u = a->other;
                break;
            }
        }
    }
    return route_of_path(t, t->hops, n, src, dst);
}

typedef struct path_acc {
    const route **r;
    size_t n, cap;
} path_acc;

static void paths_dfs(topo *t, const dview *d, int32_t src, int32_t dst, int32_t u, int depth,
                      path_acc *acc)
{
    if (u == dst) {
        if (acc->n == acc->cap) {
            acc->cap = acc->cap ? 2 * acc->cap : 16;
            acc->r = xrealloc(acc->r, acc->cap * sizeof *acc->r);
        }
        acc->r[acc->n++] = route_of_path(t, t->hops, depth, src, dst);
        return;
    }
    const tnode *nu = t->node[u];
    for (uint32_t i = 0; i < nu->nadj; i++) {
        const tadj *a = &nu->adj[i];
        if (!is_next_hop(t, d, u, a))
            continue;
        t->hops[depth] = a->link * 2 + a->dir;
        paths_dfs(t, d, src, dst, a->other, depth + 1, acc);
    }
}

const route *const *topo_paths(topo *t, int src_host, int dst_host, size_t *n)
{
    assert(t->finished && src_host != dst_host);
    uint64_t key = (uint64_t)src_host * t->nhosts + (uint64_t)dst_host;
    uint64_t h = mix64(key);
    tab_reserve(&t->paths);
    tab_ent *e = tab_slot(&t->paths, h, pathset_eq, &key);
    pathset *ps = e->v;
    if (ps && ps->epoch == t->epoch) {
        *n = ps->n;
        return ps->r;
    }
    /* Missing or computed before a routing change: (re)compute.  A stale
     * set stays in the arena: a transport may still hold its array. */
    int32_t src = topo_host_node(t, src_host), dst = topo_host_node(t, dst_host);
    dview d = dist_to(t, dst_host);
    path_acc acc = {0};
    if (dv(&d, src) != DV_INF)
        paths_dfs(t, &d, src, dst, src, 0, &acc);
    pathset *np = arena_alloc(t, sizeof *np);
    np->key = key;
    np->epoch = t->epoch;
    np->n = acc.n;
    if (acc.n) {
        np->r = arena_alloc(t, acc.n * sizeof *np->r);
        memcpy(np->r, acc.r, acc.n * sizeof *np->r);
    }
    free(acc.r);
    if (!ps)
        t->paths.n++;
    e->h = h;
    e->v = np;
    *n = np->n;
    return np->r;
}

/* ---- failures ----------------------------------------------------------- */

static void routing_apply(topo *t, int link, bool up)
{
    tlink *l = t->link[link];
    if (l->route_up != up) {
        l->route_up = up;
        t->epoch++;
        if (t->on_change)
            t->on_change(t->on_change_ctx);
    }
}

void topo_on_routing_change(topo *t, void (*fn)(void *ctx), void *ctx)
{
    t->on_change = fn;
    t->on_change_ctx = ctx;
}

static void routing_event(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    routing_apply(obj, (int)(arg >> 1), arg & 1);
}

void topo_link_set_up(topo *t, int link, bool up, int64_t convergence_ps)
{
    assert(t->finished && link >= 0 && (size_t)link < t->nlinks);
    tlink *l = t->link[link];
    if (l->up != up) {
        l->up = up;
        for (int d = 0; d < 2; d++) {
            port_set_down(&l->dir[d].port, !up);
            if (!up)
                l->stat_wire_losses += wire_drop_all(&l->dir[d].wire, t->pool);
        }
    }
    if (convergence_ps <= 0)
        routing_apply(t, link, up);
    else
        sim_schedule_in(t->s, convergence_ps, routing_event, t, (uint64_t)link << 1 | up);
}

int64_t topo_route_ideal_ps(const route *rt, uint64_t bytes, uint32_t mss, uint32_t hdr)
{
    /* Ports serialise and wires delay; any other element on the route (a
     * hook, an encapsulation, the receive sink at the end) costs nothing
     * here, wherever it sits. */
    uint64_t npkts = bytes ? (bytes + mss - 1) / mss : 1;
    uint64_t first = bytes < mss ? bytes : mss;
    int64_t lat = 0, slowest = INT64_MAX;
    for (uint16_t i = 0; i < rt->len; i++) {
        const port *q = port_of_sink(rt->hop[i]);
        const wire *w = q ? NULL : wire_of_sink(rt->hop[i]);
        if (q) {
            lat += units_tx_time_ps((int64_t)(first + hdr), q->cfg.rate_bps);
            if (q->cfg.rate_bps < slowest)
                slowest = q->cfg.rate_bps;
        } else if (w) {
            lat += w->delay_ps;
        }
    }
    uint64_t rest = bytes > first ? bytes - first : 0;
    return lat + units_tx_time_ps((int64_t)(rest + (npkts - 1) * hdr), slowest);
}

uint64_t topo_packets_in_network(topo *t)
{
    uint64_t n = 0;
    for (size_t l = 0; l < topo_links(t); l++)
        for (int d = 0; d < 2; d++) {
            const port *q = topo_link_port(t, (int)l, d);
            n += q->npkts + (q->tx != NULL) + q->hook_held_pkts +
                 topo_link_wire(t, (int)l, d)->len;
        }
    return n;
}

void topo_byte_counts(topo *t, topo_bytes *b)
{
    memset(b, 0, sizeof *b);
    b->delivered = t->stat_host_rx_bytes;
    b->dropped = t->stat_noroute_bytes + t->stat_unbound_bytes;
    for (size_t l = 0; l < t->nlinks; l++)
        for (int d = 0; d < 2; d++) {
            const tlink *k = t->link[l];
            const port *q = &k->dir[d].port;
            if (t->node[d ? k->b : k->a]->kind == NODE_HOST)
                b->injected += q->stat_rx_bytes;
            b->dropped += q->stat_drop_bytes + k->dir[d].wire.stat_lost_bytes;
            b->in_network += (uint64_t)(port_backlog(q) + q->hook_held_bytes) +
                             wire_bytes(&k->dir[d].wire);
        }
}

/* The host's send side goes through its NIC port's tap (which takes no
 * direction argument): this adapter supplies it. */
static void nic_tap(void *ctx, const pkt *p)
{
    host_rx *h = ctx;
    h->tap(h->tap_ctx, p, 0);
}

void topo_set_host_tap(topo *t, int host, void (*fn)(void *ctx, const pkt *p, int rx),
                       void *ctx)
{
    int node = topo_host_node(t, host);
    tnode *nd = t->node[node];
    host_rx *h = &nd->rx;
    h->tap = fn;
    h->tap_ctx = ctx;
    for (uint32_t i = 0; i < nd->nadj; i++) {
        const tadj *a = &nd->adj[i];
        port *q = &t->link[a->link]->dir[a->dir].port;
        q->tap = fn ? nic_tap : NULL;
        q->tap_ctx = fn ? h : NULL;
    }
}
