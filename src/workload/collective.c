/*
 * collective.c - collectives as dependency graphs of messages (collective.h).
 *
 * A call is built, once, into an array of operations: an operation is one
 * message (src rank -> dst rank, channel, bytes) with a count of the
 * operations whose arrival it waits for and a list of those that wait for
 * it (CSR).  Operations without dependencies are handed to the network at
 * the start; each arrival counts down its successors and hands those that
 * reach zero to the network at once.  The call completes when every
 * operation has arrived.
 *
 * Pipelining.  A channel's share of the data is cut into independent
 * sub-buffers, each small enough that the algorithm's largest message is at
 * most chunk_bytes (ring: n segments of a chunk each, NCCL's loop of
 * nranks x chunkSize); every sub-buffer runs the whole algorithm with
 * dependencies only inside itself, so the second sub-buffer's first step
 * travels while the first is in its second: the links stay busy and the
 * latency terms are paid once per step, not once per step and sub-buffer.
 * Messages of one (src, dst, channel) share a persistent connection and
 * arrive in the order they were handed over.
 *
 * Cost: 40 bytes per operation and 4 per dependency while the call runs
 * (ring all-reduce: 2(n-1) x n operations per sub-buffer and channel).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/collective.h"
#include "aisim/units.h"
#include "workload/coll_int.h"

const char *const coll_type_names[] = {"all_reduce", "reduce_scatter", "all_gather",
                                       "all_to_all", "broadcast", "send_recv", NULL};
const char *const coll_algo_names[] = {"auto", "ring", "tree", "halving_doubling",
                                       "hierarchical", NULL};

double coll_busbw_factor(enum coll_type type, int n)
{
    if (n <= 1)
        return type == COLL_BROADCAST || type == COLL_SENDRECV ? 1 : 0;
    switch (type) {
    case COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_REDUCE_SCATTER:
    case COLL_ALLGATHER:
    case COLL_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1;
    }
}

/* ---- communicators ----------------------------------------------------- */


static void run_free(struct coll_run *r);

static coll_comm *comm_new(coll_world *w, int n)
{
    coll_comm *c = xcalloc(1, sizeof *c);
    c->w = w;
    c->n = n;
    c->eps = xcalloc((size_t)(n > 0 ? n : 1), sizeof *c->eps);
    w->refs++;
    return c;
}

coll_comm *coll_comm_create(network *net, const int *eps, int n)
{
    assert(n >= 1);
    coll_world *w = xcalloc(1, sizeof *w);
    w->net = net;
    coll_comm *c = comm_new(w, n);
    size_t ne = network_endpoints(net);
    char *seen = xcalloc(ne, 1);
    for (int i = 0; i < n; i++) {
        assert(eps[i] >= 0 && (size_t)eps[i] < ne && !seen[eps[i]]);
        seen[eps[i]] = 1;
        c->eps[i] = eps[i];
    }
    free(seen);
    return c;
}

coll_comm *coll_comm_sub(coll_comm *parent, int first, int stride, int count)
{
    assert(count >= 1 && first >= 0 && first + (int64_t)(count - 1) * stride < parent->n &&
           first + (int64_t)(count - 1) * stride >= 0);
    coll_comm *c = comm_new(parent->w, count);
    for (int i = 0; i < count; i++)
        c->eps[i] = parent->eps[first + i * stride];
    return c;
}

coll_comm *coll_comm_subset(coll_comm *parent, const int *ranks, int count)
{
    assert(count >= 1);
    coll_comm *c = comm_new(parent->w, count);
    for (int i = 0; i < count; i++) {
        assert(ranks[i] >= 0 && ranks[i] < parent->n);
        c->eps[i] = parent->eps[ranks[i]];
    }
    return c;
}

void coll_comm_destroy(coll_comm *c)
{
    if (!c)
        return;
    coll_world *w = c->w;
    if (--w->refs == 0) {
        while (w->runs)
            run_free(w->runs);
        for (size_t i = 0; i < w->nslots; i++)
            if (w->slots[i].c)
                network_close(w->net, w->slots[i].c);
        free(w->slots);
        free(w->server);
        free(w->server_slot);
        free(w);
    }
    free(c->eps);
    free(c);
}

int coll_comm_size(const coll_comm *c) { return c->n; }
int coll_comm_endpoint(const coll_comm *c, int rank) { return c->eps[rank]; }
size_t coll_active(const coll_comm *c) { return c->w->active; }

void coll_comm_local_ranks(coll_comm *c, int *local)
{
    const int *srv = coll_world_servers(c->w);
    int *slot = c->w->server_slot, *ids = xcalloc((size_t)c->n, sizeof *ids), *cnt =
        xcalloc((size_t)c->n, sizeof *cnt), ns = 0;
    for (int i = 0; i < c->n; i++) {
        int s = srv[c->eps[i]];
        if (slot[s] < 0) {
            slot[s] = ns;
            ids[ns++] = s;
        }
        local[i] = cnt[slot[s]]++;
    }
    for (int k = 0; k < ns; k++)
        slot[ids[k]] = -1;
    free(ids);
    free(cnt);
}

int coll_comm_check(network *net, const int *eps, int n, const cfg_node *at, const char *path,
                    err *e)
{
    size_t ne = network_endpoints(net);
    if (n < 1)
        return cfg_err(e, AISIM_EINVAL, at, path, "expected at least one endpoint, found none");
    char *seen = xcalloc(ne, 1);
    int r = 0;
    for (int i = 0; i < n && !r; i++) {
        if (eps[i] < 0 || (size_t)eps[i] >= ne)
            r = cfg_err(e, AISIM_ERANGE, at, path, "rank %d: expected an endpoint 0 .. %zu, "
                        "found %d", i, ne - 1, eps[i]);
        else if (seen[eps[i]]++)
            r = cfg_err(e, AISIM_EINVAL, at, path, "rank %d: endpoint %d is already rank of "
                        "this communicator (each endpoint once)", i, eps[i]);
    }
    free(seen);
    return r;
}

static uint64_t slot_hash(int32_t s, int32_t d, int32_t ch, int32_t p)
{
    uint64_t h = (uint64_t)(uint32_t)s * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uint32_t)d * 0xc2b2ae3d27d4eb4full;
    h ^= ((uint64_t)(uint32_t)ch << 8 | (uint32_t)p) * 0x165667b19e3779f9ull;
    return h ^ (h >> 29);
}

/* The persistent connection of (src, dst, chan, prio), opened on first use. */
conn *coll_world_conn(coll_world *w, int src, int dst, int chan, int prio)
{
    if (2 * (w->used + 1) > w->nslots) {
        size_t nn = w->nslots ? 2 * w->nslots : 64;
        conn_slot *ns = xcalloc(nn, sizeof *ns);
        for (size_t i = 0; i < w->nslots; i++) {
            conn_slot *o = &w->slots[i];
            if (!o->c)
                continue;
            size_t j = slot_hash(o->src, o->dst, o->chan, o->prio) & (nn - 1);
            while (ns[j].c)
                j = (j + 1) & (nn - 1);
            ns[j] = *o;
        }
        free(w->slots);
        w->slots = ns;
        w->nslots = nn;
    }
    size_t j = slot_hash(src, dst, chan, prio) & (w->nslots - 1);
    for (;; j = (j + 1) & (w->nslots - 1)) {
        conn_slot *s = &w->slots[j];
        if (!s->c) {
            *s = (conn_slot){src, dst, chan, prio, network_connect(w->net, src, dst, prio)};
            w->used++;
            return s->c;
        }
        if (s->src == src && s->dst == dst && s->chan == chan && s->prio == prio)
            return s->c;
    }
}

/* Servers: endpoints joined by intra-host links to one switch (an
 * NVSwitch) share a server, numbered by that switch's node id; an endpoint
 * without one is a server of its own (id: nodes + its node id). */
const int *coll_world_servers(coll_world *w)
{
    if (w->server)
        return w->server;
    topo *t = network_topo(w->net);
    size_t ne = network_endpoints(w->net), nl = topo_links(t);
    w->server = xcalloc(ne, sizeof *w->server);
    /* ids are below 2 x nodes (a switch's node id, or nodes + a host's) */
    w->server_slot = xmalloc(2 * topo_nodes(t) * sizeof *w->server_slot);
    for (size_t i = 0; i < 2 * topo_nodes(t); i++)
        w->server_slot[i] = -1;
    for (size_t h = 0; h < ne; h++)
        w->server[h] = (int)topo_nodes(t) + topo_host_node(t, (int)h);
    for (size_t l = 0; l < nl; l++) {
        int a, b;
        if (!topo_link_is_intra_host(t, (int)l))
            continue;
        topo_link_ends(t, (int)l, &a, &b);
        int ha = topo_node_host(t, a), hb = topo_node_host(t, b);
        if (ha >= 0 && hb < 0)
            w->server[ha] = b;
        else if (hb >= 0 && ha < 0)
            w->server[hb] = a;
    }
    return w->server;
}

/* ---- the graph --------------------------------------------------------- */


/* Unlinks r from its world's running calls and frees it. */
static void run_free(coll_run *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        r->w->runs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    free(r->ops);
    free(r->succ);
    free(r->stack);
    free(r->edges);
    free(r);
}

int coll_add_op(coll_run *r, int src, int dst, int chan, uint64_t bytes)
{
    if (r->nops == r->capops) {
        r->capops = r->capops ? 2 * r->capops : 64;
        r->ops = xrealloc(r->ops, r->capops * sizeof *r->ops);
    }
    assert((src != dst || bytes == 0) && r->nops < UINT32_MAX);
    r->ops[r->nops] = (op){.run = r, .src = src, .dst = dst, .chan = chan, .bytes = bytes};
    return (int)r->nops++;
}

/* Operation `to` waits for `from` to arrive (nothing if from is NONE). */
void coll_add_dep(coll_run *r, int from, int to)
{
    if (from == NONE)
        return;
    if (r->nedges == r->capedges) {
        r->capedges = r->capedges ? 2 * r->capedges : 64;
        r->edges = xrealloc(r->edges, r->capedges * sizeof *r->edges);
    }
    r->edges[r->nedges][0] = (uint32_t)from;
    r->edges[r->nedges][1] = (uint32_t)to;
    r->nedges++;
    r->ops[to].deps++;
}

/* Edges to CSR (successors in the order the edges were added). */
static void finish_graph(coll_run *r)
{
    uint32_t *cnt = xcalloc(r->nops + 1, sizeof *cnt);
    for (size_t i = 0; i < r->nedges; i++)
        cnt[r->edges[i][0]]++;
    uint32_t at = 0;
    for (size_t i = 0; i < r->nops; i++) {
        r->ops[i].succ = at;
        at += cnt[i];
        r->ops[i].nsucc = 0;
    }
    r->succ = xcalloc(r->nedges + 1, sizeof *r->succ);
    for (size_t i = 0; i < r->nedges; i++) {
        op *o = &r->ops[r->edges[i][0]];
        r->succ[o->succ + o->nsucc++] = r->edges[i][1];
    }
    free(cnt);
    free(r->edges);
    r->edges = NULL;
}

/* Part i of `parts` of `total` bytes, in whole elements (the leftover
 * bytes of a partial element go to the last part). */
uint64_t coll_split(uint64_t total, uint64_t parts, uint64_t i, uint64_t elem)
{
    uint64_t units = total / elem, b = (units / parts + (i < units % parts)) * elem;
    return i == parts - 1 ? b + total % elem : b;
}

/* ---- algorithms: each adds the operations of one sub-buffer ------------ */


/* A ring over positions 0..nr-1 (rank rk[i]): `steps` steps in which
 * position i sends segment (i + off - s) mod nr (seg[] bytes) to position
 * i+1: step 0 once in[i] has arrived, step s once step s-1 from i-1 has.
 * out[i] is the last arrival at position i (in[i] without steps).  Ring
 * reduce-scatter, all-gather (off 0: i holds block i; off 1 after a
 * reduce-scatter, which leaves block i+1 at i) and all-reduce (2(nr-1)
 * steps: the all-gather follows on from the reduce-scatter) are this. */
static void ring(coll_run *r, const int *rk, int nr, int steps, int off, const uint64_t *seg,
                 int chan, const int *in, int *last)
{
    int *sent = xcalloc((size_t)nr, sizeof *sent), *prev = xcalloc((size_t)nr, sizeof *prev);
    for (int i = 0; i < nr; i++)
        last[i] = in[i];
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < nr; i++) {
            int to = (i + 1) % nr, sg = ((i + off - s) % nr + nr) % nr;
            sent[i] = coll_add_op(r, rk[i], rk[to], chan, seg[sg]);
            coll_add_dep(r, s == 0 ? in[i] : prev[(i - 1 + nr) % nr], sent[i]);
            last[to] = sent[i];
        }
        int *t = prev;
        prev = sent;
        sent = t;
    }
    free(sent);
    free(prev);
}

/* The binary tree of NCCL's double binary tree over positions 0..n-1,
 * rooted at 0: position r > 0 with lowest set bit b hangs under
 * (r - b) + 2b, or under r - b if that is past the end; odd positions are
 * the leaves.  Mirrored (n even) or shifted by one (n odd), the second
 * tree has the even positions as leaves: every rank is an inner node of
 * at most one tree and sends at most 2 S per all-reduce. */
static void bit_tree(int n, int *parent)
{
    parent[0] = -1;
    for (int r = 1; r < n; r++) {
        int b = r & -r, up = (r ^ b) | (b << 1);
        parent[r] = up < n ? up : r ^ b;
    }
}


/* NCCL's all-reduce trees over servers (p->grouped, M servers of G
 * ranks; NCCL 2.30.7 src/graph/connect.cc, ncclTreeConnect and
 * src/graph/trees.cc, ncclGetDtree): inside a server a chain of its G
 * ranks, across servers NCCL's double binary tree of the servers, the
 * chains' heads joined by it.  Position q = m G + i is the i-th rank of
 * the chain of the tree's m-th server: its parent is q - 1 inside the
 * chain, the head of the parent server's chain for i = 0.  The ranks are
 * mapped per channel (coll_tree_order). */
static void chain_tree(plan *p)
{
    int M = p->servers, G = p->local;
    int *np = xcalloc((size_t)M, sizeof *np);
    bit_tree(M, np);
    for (int m = 0; m < M; m++)
        for (int i = 0; i < G; i++)
            p->parent[m * G + i] = i > 0 ? m * G + i - 1 : np[m] >= 0 ? np[m] * G : -1;
    free(np);
}

/* Channel ch's ranks of NCCL's trees (chain_tree): tree 2's servers are
 * tree 1's mirrored (M even) or shifted by one (M odd), as ncclGetDtree
 * builds them, so a server inside one tree is a leaf of the other; each
 * channel's chains start at local rank ch mod G (the GPU of rail ch, whose
 * NIC carries that channel's tree hops; rank order: local rank 0). */
static void coll_tree_order(plan *p, int ch, bool rank_order)
{
    int M = p->servers, G = p->local, h = rank_order ? 0 : ch % G;
    for (int k = 0; k < 2; k++)
        for (int q = 0; q < p->n; q++) {
            int m = q / G, i = q % G;
            int mk = k == 0 ? m : M % 2 == 0 ? M - 1 - m : (m + 1) % M;
            p->map[k][q] = p->grid[mk * G + (h + i) % G];
        }
}

static void plan_trees(plan *p, int root)
{
    int n = p->n;
    p->parent = xcalloc((size_t)n, sizeof *p->parent);
    p->chains = root < 0 && p->grouped && p->local > 1;
    if (p->chains)
        chain_tree(p);
    else
        bit_tree(n, p->parent);
    int top = 0;
    p->kid0 = xcalloc((size_t)n + 1, sizeof *p->kid0);
    p->kids = xcalloc((size_t)n, sizeof *p->kids);
    for (int q = 0; q < n; q++)
        if (p->parent[q] >= 0)
            p->kid0[p->parent[q] + 1]++;
    for (int q = 0; q < n; q++)
        p->kid0[q + 1] += p->kid0[q];
    int *fill = xcalloc((size_t)n, sizeof *fill);
    for (int q = 0; q < n; q++)
        if (p->parent[q] >= 0) {
            int u = p->parent[q];
            p->kids[p->kid0[u] + fill[u]++] = q;
        }
    free(fill);
    /* Breadth-first from the top: parents before children. */
    p->order = xcalloc((size_t)n, sizeof *p->order);
    int head = 0, tail = 0;
    p->order[tail++] = top;
    while (head < tail) {
        int u = p->order[head++];
        for (int k = p->kid0[u]; k < p->kid0[u + 1]; k++)
            p->order[tail++] = p->kids[k];
    }
    assert(tail == n);
    for (int k = 0; k < 2; k++) {
        p->map[k] = xcalloc((size_t)n, sizeof *p->map[k]);
        for (int q = 0; q < n; q++)
            p->map[k][q] = root >= 0     ? (q - top + root + n) % n  /* broadcast */
                         : k == 0        ? q
                         : n % 2 == 0    ? n - 1 - q                 /* mirror */
                                         : (q + 1) % n;              /* shift */
    }
}

/* One binary tree (positions mapped to ranks by map): with `up`, a
 * reduction to the top (a node sends once its children's data has
 * arrived) then a broadcast down from it; without, the broadcast only. */
static void tree(coll_run *r, const plan *p, const int *map, bool up, uint64_t bytes, int chan)
{
    int n = p->n, *upop = p->out, *down = p->o1;
    if (up)
        for (int k = n - 1; k >= 1; k--) {         /* children first */
            int q = p->order[k];
            upop[q] = coll_add_op(r, map[q], map[p->parent[q]], chan, bytes);
            for (int c = p->kid0[q]; c < p->kid0[q + 1]; c++)
                coll_add_dep(r, upop[p->kids[c]], upop[q]);
        }
    for (int k = 1; k < n; k++) {
        int q = p->order[k], u = p->parent[q];
        down[q] = coll_add_op(r, map[u], map[q], chan, bytes);
        if (p->parent[u] >= 0)
            coll_add_dep(r, down[u], down[q]);
        else if (up)
            for (int c = p->kid0[u]; c < p->kid0[u + 1]; c++)
                coll_add_dep(r, upop[p->kids[c]], down[q]);
    }
}

enum hd_mode { HD_AR, HD_RS, HD_AG };

/* Halving-doubling (Rabenseifner): reduce-scatter by recursive halving
 * (partner at distance p/2, p/4, ..., 1: send the half one does not keep),
 * all-gather by recursive doubling (distance 1, 2, ..., p/2: send all one
 * has).  p is the largest power of two <= n; all-reduce folds the rem =
 * n - p extra ranks in first (rank 2v+1 gives its data to 2v) and hands
 * them the result last.  Reduce-scatter and all-gather need n = p. */
static void halving_doubling(coll_run *r, plan *p, enum hd_mode mode, uint64_t bytes, int chan)
{
    int n = p->n, pw = 1, lg = 0;
    while (2 * pw <= n) {
        pw *= 2;
        lg++;
    }
    int rem = n - pw, *last = p->out, *lo = p->o1, *len = p->o2, *sent = p->col;
    uint64_t elem = (uint64_t)r->a.elem_bytes;
    for (int j = 0; j < pw; j++)
        p->seg[j] = coll_split(bytes, (uint64_t)pw, (uint64_t)j, elem);
#define REAL(v) ((v) < rem ? 2 * (v) : (v) + rem)
    for (int v = 0; v < pw; v++) {
        last[v] = NONE;
        lo[v] = mode == HD_AG ? v : 0;
        len[v] = mode == HD_AG ? 1 : pw;
    }
    for (int v = 0; v < rem; v++)
        last[v] = coll_add_op(r, 2 * v + 1, 2 * v, chan, bytes);
    for (int i = 0; mode != HD_AG && i < lg; i++) {
        int d = pw >> (i + 1);
        for (int v = 0; v < pw; v++) {
            int half = len[v] / 2, keep_lo = (v & d) == 0;
            int slo = keep_lo ? lo[v] + half : lo[v];
            uint64_t b = 0;
            for (int j = slo; j < slo + half; j++)
                b += p->seg[j];
            sent[v] = coll_add_op(r, REAL(v), REAL(v ^ d), chan, b);
            coll_add_dep(r, last[v], sent[v]);
            if (!keep_lo)
                lo[v] += half;
            len[v] = half;
        }
        for (int v = 0; v < pw; v++)
            last[v ^ d] = sent[v];
    }
    for (int i = lg - 1; mode != HD_RS && i >= 0; i--) {
        int d = pw >> (i + 1);
        for (int v = 0; v < pw; v++) {
            uint64_t b = 0;
            for (int j = lo[v]; j < lo[v] + len[v]; j++)
                b += p->seg[j];
            sent[v] = coll_add_op(r, REAL(v), REAL(v ^ d), chan, b);
            coll_add_dep(r, last[v], sent[v]);
        }
        for (int v = 0; v < pw; v++) {
            int w = v ^ d;
            last[w] = sent[v];
            if (lo[v] < lo[w])
                lo[w] = lo[v];
        }
        for (int v = 0; v < pw; v++)
            len[v] *= 2;
    }
    for (int v = 0; v < rem; v++) {
        int o = coll_add_op(r, 2 * v, 2 * v + 1, chan, bytes);
        coll_add_dep(r, last[v], o);
    }
#undef REAL
}

/* Hierarchical all-reduce: per server a ring reduce-scatter over NVLink
 * (local rank l ends with block l+1 of the server's sum), per rail (local
 * index l) a ring all-reduce of that block across servers, per server a
 * ring all-gather over NVLink. */
static void hierarchical(coll_run *r, plan *p, uint64_t bytes, int chan)
{
    int M = p->servers, G = p->local;
    uint64_t elem = (uint64_t)r->a.elem_bytes;
    for (int l = 0; l < G; l++)
        p->seg[l] = coll_split(bytes, (uint64_t)G, (uint64_t)l, elem);
    for (int m = 0; m < M; m++)     /* reduce-scatter: o1[m * G + l] */
        ring(r, &p->grid[m * G], G, G - 1, 0, p->seg, chan, p->none, &p->o1[m * G]);
    for (int l = 0; l < G; l++) {   /* per rail: o2[m * G + l] */
        int *in = p->out, *col = p->col, *res = p->o2 + (size_t)M * G;
        for (int m = 0; m < M; m++) {
            col[m] = p->grid[m * G + l];
            in[m] = p->o1[m * G + l];
            p->seg2[m] = coll_split(p->seg[(l + 1) % G], (uint64_t)M, (uint64_t)m, elem);
        }
        ring(r, col, M, 2 * (M - 1), 0, p->seg2, chan, in, res);
        for (int m = 0; m < M; m++)
            p->o2[m * G + l] = res[m];
    }
    for (int m = 0; m < M; m++)     /* all-gather from block l+1 */
        ring(r, &p->grid[m * G], G, G - 1, 1, p->seg, chan, &p->o2[m * G], &p->o1[m * G]);
}

/* Servers of a communicator's ranks, in order of first appearance, and
 * each one's ranks in communicator order; 0, or -1 if servers hold
 * different numbers of ranks (then bad[0] is the first rank on a server
 * with a count other than rank 0's, bad[1] that count). */
static int group_servers(const coll_comm *c, int *servers, int *local, int *grid, int *bad)
{
    const int *srv = coll_world_servers(c->w);
    int n = c->n, ns = 0;
    int *id = xcalloc((size_t)n, sizeof *id), *cnt = xcalloc((size_t)n, sizeof *cnt);
    int *which = xcalloc((size_t)n, sizeof *which);
    int *slot = c->w->server_slot;  /* server id -> its index here, or -1 */
    for (int i = 0; i < n; i++) {
        int s = srv[c->eps[i]];
        if (slot[s] < 0) {
            slot[s] = ns;
            id[ns++] = s;
        }
        which[i] = slot[s];
        cnt[slot[s]]++;
    }
    for (int k = 0; k < ns; k++)
        slot[id[k]] = -1;
    int rc = 0, G = cnt[0];
    for (int i = 0; i < n; i++)
        if (cnt[which[i]] != G) {
            bad[0] = i;             /* a rank on that server, and its count */
            bad[1] = cnt[which[i]];
            rc = -1;
            break;
        }
    *servers = ns;
    *local = G;
    if (grid && !rc) {
        memset(cnt, 0, (size_t)n * sizeof *cnt);
        for (int i = 0; i < n; i++)
            grid[which[i] * G + cnt[which[i]]++] = i;
    }
    free(id);
    free(cnt);
    free(which);
    return rc;
}

/* ---- calls ------------------------------------------------------------- */

static bool pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

int coll_check(const coll_comm *c, const coll_args *a, err *e)
{
    if ((unsigned)a->type >= COLL_NTYPES)
        return ERR(e, AISIM_EINVAL, "collective: unknown type %d", (int)a->type);
    if ((unsigned)a->algo >= COLL_NALGOS)
        return ERR(e, AISIM_EINVAL, "algorithm: unknown algorithm %d", (int)a->algo);
    const char *tn = coll_type_names[a->type], *an = coll_algo_names[a->algo];
    if (a->bytes == 0)
        return ERR(e, AISIM_ERANGE, "bytes: expected a size > 0 for %s, found 0", tn);
    if ((unsigned)a->proto >= COLL_NPROTOS || (unsigned)a->arch > COLL_ARCH_BLACKWELL)
        return ERR(e, AISIM_EINVAL, "protocol: unknown protocol %d or GPU %d", (int)a->proto,
                   (int)a->arch);
    if (a->send_lat_ps < 0 || a->min_channels < 0 || a->max_channels < 0 ||
        a->min_channels > 1024 || a->max_channels > 1024)
        return ERR(e, AISIM_ERANGE, "channels: expected min/max channels 0 .. 1024 and a send "
                   "latency >= 0, found %d, %d, %lld ps", a->min_channels, a->max_channels,
                   (long long)a->send_lat_ps);
    if (a->elem_bytes < 0 || a->channels < 0 || a->channels > 1024)
        return ERR(e, AISIM_ERANGE, "elem_bytes, channels: expected >= 0 (channels <= 1024), "
                   "found %d, %d", a->elem_bytes, a->channels);
    int n = c->n, rc;
    bool ok;
    switch (a->algo) {
    case COLL_ALGO_AUTO:
        ok = true;
        break;
    case COLL_ALGO_RING:
        ok = a->type != COLL_ALLTOALL && a->type != COLL_SENDRECV;
        break;
    case COLL_ALGO_TREE:
        ok = a->type == COLL_ALLREDUCE || a->type == COLL_BROADCAST;
        break;
    case COLL_ALGO_HD:
        ok = a->type == COLL_ALLREDUCE || a->type == COLL_REDUCE_SCATTER ||
             a->type == COLL_ALLGATHER;
        break;
    default:
        ok = a->type == COLL_ALLREDUCE;
        break;
    }
    if (!ok)
        return ERR(e, AISIM_EINVAL, "algorithm: %s has no %s algorithm (ring: all_reduce, "
                   "reduce_scatter, all_gather, broadcast; tree: all_reduce, broadcast; "
                   "halving_doubling: all_reduce, reduce_scatter, all_gather; hierarchical: "
                   "all_reduce; all_to_all and send_recv: auto)", tn, an);
    if (a->algo == COLL_ALGO_HD && a->type != COLL_ALLREDUCE && !pow2(n))
        return ERR(e, AISIM_EINVAL, "algorithm: halving_doubling %s needs a power-of-two "
                   "number of ranks, found %d", tn, n);
    if (a->algo == COLL_ALGO_HIER) {
        int ns, g, bad[2];
        if (group_servers(c, &ns, &g, NULL, bad))
            return ERR(e, AISIM_EINVAL, "algorithm: hierarchical needs as many ranks on every "
                       "server; found %d on the server of rank 0, %d on that of rank %d", g,
                       bad[1], bad[0]);
    }
    if (a->fluid && (rc = coll_fluid_check(c, a, e)))
        return rc;
    if (a->pxn) {
        int ns, g, bad[2];
        if (group_servers(c, &ns, &g, NULL, bad))
            return ERR(e, AISIM_EINVAL, "pxn: needs as many ranks on every server (a relay "
                       "of each rail on each); found %d on the server of rank 0, %d on that "
                       "of rank %d", g, bad[1], bad[0]);
    }
    if ((a->type == COLL_BROADCAST || a->type == COLL_SENDRECV) &&
        (a->root < 0 || a->root >= n))
        return ERR(e, AISIM_ERANGE, "root: expected a rank 0 .. %d, found %d", n - 1, a->root);
    if (a->type == COLL_SENDRECV && (a->peer < 0 || a->peer >= n || a->peer == a->root))
        return ERR(e, AISIM_ERANGE, "peer: expected a rank 0 .. %d other than root %d, found %d",
                   n - 1, a->root, a->peer);
    return 0;
}

static void run_finish(coll_run *r)
{
    network *net = r->c->w->net;
    int64_t now = sim_now(network_sim(net));
    coll_result res = {.type = r->a.type, .algo = r->a.algo, .proto = r->a.proto,
                       .channels = r->a.channels, .ranks = r->c->n,
                       .bytes = r->a.bytes, .tag = r->a.tag, .start_ps = r->start_ps,
                       .finish_ps = now, .wire_bytes = r->wire_bytes, .aborted = r->aborted};
    for (size_t i = 0; i < r->nops; i++)
        res.messages += r->ops[i].bytes > 0;
    res.time_s = ps_to_s(now - r->start_ps);
    if (res.time_s > 0) {
        res.algbw_Bps = (double)r->a.bytes / res.time_s;
        res.busbw_Bps = res.algbw_Bps * coll_busbw_factor(r->a.type, r->c->n);
    }
    r->c->w->active--;
    coll_done_fn fn = r->fn;
    void *ctx = r->ctx;
    run_free(r);
    if (fn)
        fn(ctx, &res);
}

static void on_msg(void *ctx, network *n, const net_msg *m);

/* Hands a message to the network now: its payload in the protocol's
 * lines. */
static void send_now(coll_run *r, op *o)
{
    coll_world *w = r->c->w;
    conn *k = coll_world_conn(w, r->c->eps[o->src], r->c->eps[o->dst], o->chan, r->a.prio);
    network_send_on(w->net, k, coll_proto_wire(r->a.proto, o->bytes), r->a.tag,
                    sim_now(network_sim(w->net)), on_msg, o);
}

static void send_later(sim *s, void *obj, uint64_t arg)
{
    (void)s, (void)arg;
    op *o = obj;
    send_now(o->run, o);
}

/* Hands a message to the network, the send latency late. */
static void send_op(coll_run *r, op *o)
{
    if (r->a.send_lat_ps > 0)
        sim_schedule_in(network_sim(r->c->w->net), r->a.send_lat_ps, send_later, o, 0);
    else
        send_now(r, o);
}

static void settled(sim *s, void *obj, uint64_t arg);

/* o has arrived: its successors that wait for nothing more are sent, or,
 * if empty (a segment of no elements, a fluid join), arrive at once (or
 * after their delay): a worklist, not recursion, so that long chains of
 * them neither deepen the stack nor finish the run under a caller that
 * still reads it. */
static void arrived(coll_run *r, op *o)
{
    size_t top = 0;
    r->stack[top++] = (uint32_t)(o - r->ops);
    while (top) {
        op *x = &r->ops[r->stack[--top]];
        r->wire_bytes += x->bytes;
        r->left--;
        for (uint32_t k = 0; k < x->nsucc; k++) {
            op *s = &r->ops[r->succ[x->succ + k]];
            if (--s->deps > 0)
                continue;
            s->deps = -1;           /* handed over: run_begin skips it */
            if (s->bytes > 0)
                send_op(r, s);
            else if (s->delay_ps > 0)
                sim_schedule_in(network_sim(r->c->w->net), s->delay_ps, settled, s, 0);
            else
                r->stack[top++] = (uint32_t)(s - r->ops);
        }
    }
    if (r->left == 0)
        run_finish(r);
}

/* o's delay after its arrival (or its dependencies) has passed. */
static void settled(sim *s, void *obj, uint64_t arg)
{
    (void)s, (void)arg;
    op *o = obj;
    arrived(o->run, o);
}

static void on_msg(void *ctx, network *n, const net_msg *m)
{
    op *o = ctx;
    if (m->aborted)
        o->run->aborted = true;
    if (o->delay_ps > 0)
        sim_schedule_in(network_sim(n), o->delay_ps, settled, o, 0);
    else
        arrived(o->run, o);
}

static void run_begin(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    coll_run *r = obj;
    /* One more count in `left` keeps the run alive while the first
     * operations are handed over (empty ones arrive at once). */
    r->left++;
    for (size_t i = 0; i < r->nops; i++) {
        op *o = &r->ops[i];
        if (o->deps != 0)           /* waits, or arrived already (-1) */
            continue;
        o->deps = -1;
        if (o->bytes > 0)
            send_op(r, o);
        else if (o->delay_ps > 0)
            sim_schedule_in(s, o->delay_ps, settled, o, 0);
        else
            arrived(r, o);
    }
    if (--r->left == 0)
        run_finish(r);
}

/* The ring of channel ch over servers of G ranks each (NCCL's rings are
 * found on the topology, not taken from rank order): server m is entered
 * at local rank e_m = ch - m (mod G), its ranks are visited from there and
 * it is left from e_m - 1 = e_{m+1}, so that every hop between servers
 * joins two GPUs of the same rail (its ToR, not the aggregation layer;
 * the closing hop too when G divides the number of servers), and channels
 * start on different rails. */
void coll_ring_order(plan *p, int ch)
{
    int M = p->servers, G = p->local, k = 0;
    if (M < 2 || G < 2)
        return;
    for (int m = 0; m < M; m++) {
        int e = ((ch - m) % G + G) % G;
        for (int t = 0; t < G; t++)
            p->rk[k++] = p->grid[m * G + (e + t) % G];
    }
}

/* Sub-buffer size per algorithm: the largest message is about a chunk. */
static uint64_t coll_sub_unit(const coll_args *a, int n, const plan *p)
{
    switch (a->type) {
    case COLL_ALLREDUCE:
        return a->algo == COLL_ALGO_TREE   ? 2
             : a->algo == COLL_ALGO_HD     ? 2
             : a->algo == COLL_ALGO_HIER   ? (uint64_t)p->local
                                           : (uint64_t)n;
    case COLL_REDUCE_SCATTER:
    case COLL_ALLGATHER:
        return a->algo == COLL_ALGO_HD ? 2 : (uint64_t)n;
    case COLL_ALLTOALL:
        return (uint64_t)n;
    default:
        return 1;
    }
}

/* A message from rank s to rank d; with PXN (p->where: r->a.pxn on equal
 * servers), one to another server's GPU of another local index goes first
 * over NVLink to the GPU of s's server with d's local index, whose NIC is
 * on d's rail, and from there to d once it has arrived (NCCL's PXN: the relay's proxy
 * sends from that GPU's memory; NCCL 2.12+, src/graph/paths.cc,
 * NCCL_PXN_DISABLE).  Returns the operation that delivers to d. */
enum { PXN_CHAN = 1 << 16 };    /* above any channel (<= 1024) */

static int p2p_op(coll_run *r, const plan *p, int s, int d, int chan, uint64_t bytes)
{
    if (p->where && p->local > 1) {
        int G = p->local, ms = p->where[s] / G, ls = p->where[s] % G,
            md = p->where[d] / G, ld = p->where[d] % G;
        if (ms != md && ls != ld) {
            /* the relay sends on the sender's own connection to d (NCCL's
             * proxy opens one per original sender): its own channel key */
            int relay = p->grid[ms * G + ld];
            int hop = coll_add_op(r, s, relay, chan, bytes);
            int o = coll_add_op(r, relay, d, chan + PXN_CHAN * (ls + 1), bytes);
            coll_add_dep(r, hop, o);
            return o;
        }
    }
    return coll_add_op(r, s, d, chan, bytes);
}

static void build(coll_run *r, plan *p, uint64_t bytes, int chan)
{
    const coll_args *a = &r->a;
    int n = p->n;
    switch (a->type) {
    case COLL_ALLREDUCE:
        if (a->algo == COLL_ALGO_TREE) {
            for (int k = 0; k < 2; k++)
                tree(r, p, p->map[k], true, coll_split(bytes, 2, (uint64_t)k, (uint64_t)a->elem_bytes),
                     chan);
            return;
        }
        if (a->algo == COLL_ALGO_HD) {
            halving_doubling(r, p, HD_AR, bytes, chan);
            return;
        }
        if (a->algo == COLL_ALGO_HIER) {
            hierarchical(r, p, bytes, chan);
            return;
        }
        /* ring, 2(n-1) steps: below */
        __attribute__((fallthrough));
    case COLL_REDUCE_SCATTER:
    case COLL_ALLGATHER:
        if (a->algo == COLL_ALGO_HD) {
            halving_doubling(r, p, a->type == COLL_ALLGATHER ? HD_AG : HD_RS, bytes, chan);
            return;
        }
        for (int j = 0; j < n; j++)
            p->seg[j] = coll_split(bytes, (uint64_t)n, (uint64_t)j, (uint64_t)a->elem_bytes);
        ring(r, p->rk, n, a->type == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1, 0, p->seg, chan,
             p->none, p->out);
        return;
    case COLL_ALLTOALL:
        for (int i = 1; i < n; i++)
            for (int s = 0; s < n; s++)
                p2p_op(r, p, s, (s + i) % n, chan,
                       coll_split(bytes, (uint64_t)n, (uint64_t)((s + i) % n),
                             (uint64_t)a->elem_bytes));
        return;
    case COLL_BROADCAST:
        if (a->algo == COLL_ALGO_TREE) {
            tree(r, p, p->map[0], false, bytes, chan);
        } else {
            int prev = NONE, at = 0;
            while (p->rk[at] != a->root)
                at++;
            for (int h = 0; h + 1 < n; h++) {
                int o = coll_add_op(r, p->rk[(at + h) % n], p->rk[(at + h + 1) % n], chan, bytes);
                coll_add_dep(r, prev, o);
                prev = o;
            }
        }
        return;
    default:
        p2p_op(r, p, a->root, a->peer, chan, bytes);
        return;
    }
}

int coll_start(coll_comm *c, const coll_args *args, coll_done_fn fn, void *ctx, err *e)
{
    int rc = coll_check(c, args, e);
    if (rc)
        return rc;
    coll_run *r = xcalloc(1, sizeof *r);
    r->c = c;
    r->a = *args;
    r->fn = fn;
    r->ctx = ctx;
    coll_args *a = &r->a;
    if (a->channels == 0)
        a->channels = 1;
    if (a->max_channels > 0 && a->channels > a->max_channels)
        a->channels = a->max_channels;
    if (a->min_channels > a->channels)
        a->channels = a->min_channels;
    int64_t base_ps = 0;
    if (a->proto != COLL_PROTO_NONE && c->n > 1) {
        coll_tuning t;
        coll_tune(c, a, &t);
        a->algo = t.algo;
        a->proto = t.proto;
        a->channels = t.channels;
        base_ps = llround(t.base_us * 1e6);
        r->intra_ps = llround(t.intra_us * 1e6);
        r->inter_ps = llround(t.inter_us * 1e6);
    }
    if (a->algo == COLL_ALGO_AUTO)
        a->algo = a->type == COLL_ALLTOALL || a->type == COLL_SENDRECV ? COLL_ALGO_AUTO
                                                                       : COLL_ALGO_RING;
    if (a->elem_bytes == 0)
        a->elem_bytes = 4;
    if (a->chunk_bytes == 0)
        a->chunk_bytes = 512 * 1024;
    int n = c->n;
    size_t sz = (size_t)n + 1;
    plan p = {.n = n};
    p.rk = xcalloc(sz, sizeof *p.rk);
    p.none = xcalloc(sz, sizeof *p.none);
    p.out = xcalloc(sz, sizeof *p.out);
    p.col = xcalloc(sz, sizeof *p.col);
    p.o1 = xcalloc(sz, sizeof *p.o1);
    p.o2 = xcalloc(2 * sz, sizeof *p.o2);
    p.seg = xcalloc(sz, sizeof *p.seg);
    p.seg2 = xcalloc(sz, sizeof *p.seg2);
    for (int i = 0; i < n; i++) {
        p.rk[i] = i;
        p.none[i] = NONE;
    }
    int bad[2];
    p.grid = xcalloc(sz, sizeof *p.grid);
    bool grouped = group_servers(c, &p.servers, &p.local, p.grid, bad) == 0;
    p.grouped = grouped;
    if (grouped && a->pxn) {    /* rank -> its server x local + local index */
        p.where = xcalloc(sz, sizeof *p.where);
        for (int m = 0; m < p.servers; m++)
            for (int l = 0; l < p.local; l++)
                p.where[p.grid[m * p.local + l]] = m * p.local + l;
    }
    if (a->algo == COLL_ALGO_TREE)
        plan_trees(&p, a->type == COLL_BROADCAST ? a->root : -1);
    if (n > 1) {
        uint64_t unit = coll_sub_unit(a, n, &p) * a->chunk_bytes;
        for (int ch = 0; ch < a->channels; ch++) {
            if (grouped && !a->rank_order)
                coll_ring_order(&p, ch);
            if (p.chains)
                coll_tree_order(&p, ch, a->rank_order);
            uint64_t cb = coll_split(a->bytes, (uint64_t)a->channels, (uint64_t)ch,
                                (uint64_t)a->elem_bytes);
            uint64_t subs = cb / unit + (cb % unit != 0);
            size_t first = r->nops;
            if (!a->fluid || !coll_fluid_build(r, &p, cb, ch, subs)) {
                /* fluid halving-doubling, all-to-all, send/recv: each step
                 * one message of its whole bytes (trees and the broadcast
                 * chain stay pipelined: docs/flow-level.md) */
                if (a->fluid && a->algo != COLL_ALGO_TREE && a->type != COLL_BROADCAST)
                    subs = 1;
                for (uint64_t k = 0; k < subs; k++)
                    build(r, &p, coll_split(cb, subs, k, (uint64_t)a->elem_bytes), ch);
            }
            /* each step's latency; a fluid flow's too (its delay holds
             * only what the steps before it add: coll_fluid.c) */
            for (size_t i = first; i < r->nops; i++)
                if (r->ops[i].bytes > 0)
                    r->ops[i].delay_ps += coll_step_ps(r, r->ops[i].src, r->ops[i].dst);
        }
    }
    free(p.rk);
    free(p.none);
    free(p.out);
    free(p.col);
    free(p.o1);
    free(p.o2);
    free(p.where);
    free(p.seg);
    free(p.seg2);
    free(p.grid);
    free(p.parent);
    free(p.kids);
    free(p.kid0);
    free(p.order);
    free(p.map[0]);
    free(p.map[1]);
    finish_graph(r);
    r->left = r->nops;
    r->stack = xcalloc(r->nops + 1, sizeof *r->stack);
    r->w = c->w;
    r->next = c->w->runs;
    if (r->next)
        r->next->prev = r;
    c->w->runs = r;
    c->w->active++;
    sim *s = network_sim(c->w->net);
    int64_t now = sim_now(s);
    r->start_ps = a->start_ps > now ? a->start_ps : now;
    if (r->start_ps + base_ps > now)    /* the protocol's base latency first */
        sim_schedule(s, r->start_ps + base_ps, run_begin, r, 0);
    else
        run_begin(s, r, 0);
    return 0;
}
