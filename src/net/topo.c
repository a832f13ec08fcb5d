/*
 * topo.c - the network graph: nodes, links, their ports and wires, the
 * check that hosts are connected, host receive sinks, link failures, and
 * the byte and packet counts (see topo.h).  Routing (distance rows,
 * forwarding by entropy, interned routes, ECMP and path lists) is in
 * topo_route.c; the state both share is in topo_int.h.
 *
 * Graph.  Nodes and links are added before topo_finish(); each link owns two
 * egress ports and two wires (one per direction), initialised at once so
 * that their addresses never change (they are sinks in routes).  Hosts own a
 * receive sink that hands packets to the endpoint bound for p->flow_id: a
 * dense array indexed by flow id, so delivery is O(1) and does no lookup by
 * name.
 *
 * Failures.  A link has two states: physically up (its ports and wires
 * drop while it is down) and up as routing sees it (route_up), which
 * follows after the convergence delay and starts a new routing epoch.
 */
#include "topo_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ARENA_BLOCK_BYTES ((size_t)64 * 1024)
#define ARENA_ALIGN 64          /* a cache line: links are placed on lines */

typedef struct flow_bind {
    sink *tx, *rx;              /* endpoints at the source / destination */
    int32_t src_node, dst_node; /* -1: unbound */
} flow_bind;

struct arena_blk {
    struct arena_blk *next;
    size_t used, cap;           /* bytes */
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

/* ---- memory ------------------------------------------------------------ */

/* n zeroed bytes at a multiple of `align` (a power of two, at most 64)
 * that live as long as the topology. */
void *topo_arena_alloc_aligned(topo *t, size_t n, size_t align)
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

/* ---- the name table (setup time only) ----------------------------------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);     /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return mix64(h);
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
    free(t->nhs.e);
    free(t->cand);
    if (t->fwd && t->fwd->fini)
        t->fwd->fini(t->fwd_state);
    free(t->fwd_state);
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
    if (!t->names.cap || !name)
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
    n->fwd.base.recv = topo_node_forward;
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
    tlink *l = topo_arena_alloc_aligned(t, sizeof *l, _Alignof(tlink));
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
    uint32_t maxdeg = 1;
    for (size_t u = 0; u < t->nnodes; u++)
        if (t->node[u]->nadj > maxdeg)
            maxdeg = t->node[u]->nadj;
    t->cand = xmalloc(maxdeg * sizeof *t->cand);
    t->finished = true;
    return 0;
}

/* ---- accessors ---------------------------------------------------------- */

size_t topo_nodes(const topo *t) { return t->nnodes; }
size_t topo_hosts(const topo *t) { return t->nhosts; }
size_t topo_links(const topo *t) { return t->nlinks; }

size_t topo_node_degree(const topo *t, int node) { return t->node[node]->nadj; }

port *topo_node_port(topo *t, int node, size_t i)
{
    const tadj *a = &t->node[node]->adj[i];
    return &t->link[a->link]->dir[a->dir].port;
}

int topo_node_adj(const topo *t, int node, size_t i, int *link)
{
    const tadj *a = &t->node[node]->adj[i];
    if (link)
        *link = a->link;
    return a->other;
}

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

void topo_set_qdiscs(topo *t, const struct qdisc_ops *const *list) { t->qdiscs = list; }

const struct qdisc_ops *const *topo_qdiscs(const topo *t) { return t->qdiscs; }

void *topo_conf_alloc(void *t, size_t size) { return topo_arena_alloc_aligned(t, size, 16); }

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

/* ---- conservation counts and capture ------------------------------------ */

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
