/*
 * topo_route.c - routing over the topology (topo.c): distance rows per
 * destination, next hops per (node, destination) and forwarding hop by
 * hop, routes interned by path, ECMP and forwarder-chosen routes, the
 * choice by entropy (fwd_by_entropy), equal-cost path lists, and a route's ideal transfer time (see
 * topo.h; the state both files share is in topo_int.h).
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
 * Next hops.  For packets forwarded hop by hop, each (node, destination
 * node) pair used keeps its next hops (port, link hop, far node), built
 * from the rows on first use and again after a routing change (nh_set);
 * the topology's forwarder (fwd.h; by default by entropy) picks one.
 *
 * Cost: route requests do O(path length x degree) work plus a BFS per
 * destination per routing epoch; a packet on a route does none of it, and
 * a packet forwarded hop by hop a table look-up and the forwarder's choice
 * per hop once its next hops are kept (topo_node_forward), whatever the
 * node's degree.
 */
#include "topo_int.h"

#include <string.h>

#include "aisim/units.h"

#define DIST_INF UINT32_MAX

typedef struct pathset {
    uint64_t key;               /* src_host * hosts + dst_host */
    uint32_t epoch;             /* routing epoch it was computed in */
    size_t n;                   /* paths */
    const route **r;            /* in the arena */
} pathset;

/* ---- the route and path-set tables (setup time only) -------------------- */

static uint64_t hash_hops(const int32_t *hops, int n)
{
    uint64_t h = (uint64_t)n;
    for (int i = 0; i < n; i++)
        h = mix64(h ^ ((uint64_t)(uint32_t)hops[i] + UINT64_C(0x9e3779b97f4a7c15)));
    return h;
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

/* The next hops of node u toward destination view d (is_next_hop, in link
 * id order) into t->cand; returns their count (0 if d is cut off from u). */
static uint32_t collect(topo *t, const dview *d, int32_t u)
{
    const tnode *nu = t->node[u];
    uint32_t c = 0;
    if (dv(d, u) == DV_INF)
        return 0;
    for (uint32_t i = 0; i < nu->nadj; i++) {
        const tadj *a = &nu->adj[i];
        if (is_next_hop(t, d, u, a))
            t->cand[c++] = (fwd_cand){.q = &t->link[a->link]->dir[a->dir].port,
                                      .hop = a->link * 2 + a->dir, .other = a->other};
    }
    return c;
}

/* The next hops of node u toward node dst for packets forwarded hop by
 * hop, kept per (u, dst) and rebuilt when routing changes (the epoch): a
 * hop costs a table look-up, not two walks of u's adjacency. */
typedef struct nh_set {
    uint64_t key;               /* u * nnodes + dst */
    uint32_t epoch;             /* routing epoch it was computed in */
    uint32_t n, cap;
    fwd_cand *c;                /* in the arena */
} nh_set;

static bool nh_eq(const void *v, const void *key)
{
    return ((const nh_set *)v)->key == *(const uint64_t *)key;
}

static const nh_set *next_hops(topo *t, int32_t u, uint32_t dst)
{
    uint64_t key = (uint64_t)u * t->nnodes + dst;
    uint64_t h = mix64(key);
    tab_reserve(&t->nhs);
    tab_ent *e = tab_slot(&t->nhs, h, nh_eq, &key);
    nh_set *s = e->v;
    if (s && s->epoch == t->epoch)
        return s;
    if (!s) {
        s = arena_alloc(t, sizeof *s);
        s->key = key;
        e->h = h;
        e->v = s;
        t->nhs.n++;
    }
    dview d = dist_to(t, t->node[dst]->host);
    s->n = collect(t, &d, u);
    if (s->n > s->cap) {
        s->cap = s->n;
        s->c = arena_alloc(t, s->n * sizeof *s->c);
    }
    if (s->n)
        memcpy(s->c, t->cand, s->n * sizeof *s->c);
    s->epoch = t->epoch;
    return s;
}

uint32_t fwd_by_entropy(void *state, const fwd_hop *h)
{
    (void)state;
    pkt *p = h->p;
    if (!p)
        return (uint32_t)(mix64(h->key ^ h->seed) % h->n);
    if (p->flags & PKT_F_PATHIDX) {
        uint32_t i = p->entropy % h->n;
        p->entropy /= h->n;
        return i;
    }
    return (uint32_t)(mix64(p->entropy ^ h->seed) % h->n);
}

uint32_t topo_next_hops(topo *t, int node, int dst_node, const fwd_cand **c)
{
    const nh_set *s = next_hops(t, node, (uint32_t)dst_node);
    *c = s->c;
    return s->n;
}

/* The forwarder's choice among c[0..n) at node u (by_fwd false, or no
 * forwarder set: by entropy). */
static uint32_t choose(topo *t, bool by_fwd, int32_t u, int dst_host, pkt *p, uint64_t key,
                       const fwd_cand *c, uint32_t n)
{
    fwd_hop h = {.t = t, .node = u, .dst_host = dst_host, .seed = t->node[u]->hash_seed,
                 .p = p, .key = key, .c = c, .n = n, .now_ps = sim_now(t->s)};
    uint32_t i = by_fwd && t->fwd ? t->fwd->choose(t->fwd_state, &h) : fwd_by_entropy(NULL, &h);
    assert(i < n);
    return i;
}

/* Forwarding hop by hop (pkt.h): at node u, the forwarder picks one of the
 * equal-cost next hops toward p->dst_node (fwd.h; by default by entropy:
 * fwd_by_entropy).  A node with no next hop (a failure routing knows of
 * cut the destination off) drops the packet. */
void topo_node_forward(sink *self, pkt *p)
{
    node_fwd *f = container_of(self, node_fwd, base);
    topo *t = f->t;
    const nh_set *s = next_hops(t, f->node, p->dst_node);
    if (s->n == 0) {
        t->stat_noroute_drops++;
        t->stat_noroute_bytes += p->size_bytes;
        pkt_free(t->pool, p);
        return;
    }
    uint32_t i = s->n == 1 ? 0
                           : choose(t, true, f->node, t->node[p->dst_node]->host, p, 0, s->c,
                                    s->n);
    port *q = s->c[i].q;
    q->base.recv(&q->base, p);
}

int topo_set_forwarder(topo *t, const fwd_ops *ops, const void *cfg, const cfg_node *n,
                       const char *path, err *e)
{
    if (t->fwd && t->fwd->fini)
        t->fwd->fini(t->fwd_state);
    free(t->fwd_state);
    t->fwd_state = ops->state_size ? xcalloc(1, ops->state_size) : NULL;
    t->fwd = ops;
    t->epoch++;                 /* next-hop sets and routes chosen anew */
    return ops->configure ? ops->configure(t->fwd_state, cfg, t, n, path, e) : 0;
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

/* The route from src_host to dst_host a forwarder picks for a flow of key
 * `key` (ops NULL: by entropy, i.e. ECMP): at each node, the choice among
 * its next hops (collect). */
static const route *route_by(topo *t, int src_host, int dst_host, uint64_t key, bool by_fwd)
{
    assert(t->finished && src_host != dst_host);
    int32_t src = topo_host_node(t, src_host), dst = topo_host_node(t, dst_host);
    dview d = dist_to(t, dst_host);
    if (dv(&d, src) == DV_INF)
        return NULL;
    int n = 0;
    for (int32_t u = src; u != dst;) {
        uint32_t c = collect(t, &d, u);
        assert(c > 0);
        uint32_t i = c == 1 ? 0 : choose(t, by_fwd, u, dst_host, NULL, key, t->cand, c);
        t->hops[n++] = t->cand[i].hop;
        u = t->cand[i].other;
    }
    return route_of_path(t, t->hops, n, src, dst);
}

const route *topo_route_ecmp(topo *t, int src_host, int dst_host, uint64_t key)
{
    return route_by(t, src_host, dst_host, key, false);
}

const route *topo_route_flow(topo *t, int src_host, int dst_host, uint64_t key)
{
    return route_by(t, src_host, dst_host, key, true);
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
