/*
 * training_run.c - a training job's ranks running their programs on the
 * packet-level network.
 *
 * Rank r of a job is (t, d, s) with r = t + tp (d + dp s) (Megatron's
 * order: TP innermost, then DP, then PP).  Its groups: TP {t' , d, s},
 * DP {t, d', s}, EP the ep consecutive DP indices of its block, DP-within-
 * EP those of the same index modulo ep, each a sub-communicator of the
 * job's communicator (collective.h).
 *
 * A rank steps through its stage's program: compute is a timer; a
 * collective is the rank's arrival at the next instance of that group
 * (instances numbered per group in program order, which every member
 * shares); an instance starts when every member has arrived and the
 * group's previous instance is over (one NCCL stream per communicator),
 * through coll_start() -- or, for a group inside one server when the
 * scenario asks for it, as a timer of lat + busbw-factor x bytes / busbw.
 * A blocking collective holds the rank until it ends; an asynchronous one
 * (DP gradient buckets) counts as outstanding until it ends and a WAIT
 * holds the rank until none is.  A send is network_send() to the peer
 * stage's rank of the same (t, d); the receiver counts arrivals per
 * (direction, key) and a receive waits for its key.
 *
 * Every rank records its compute and communication intervals per
 * iteration: compute, exposed communication (communication while not
 * computing) and overlap come from them (trn_overlap).
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/units.h"
#include "training_run.h"

enum { W_NONE, W_COLL, W_RECV, W_WAIT };

typedef struct grp {
    coll_comm *cc;
    int kind, size, idx;
    int *members;               /* job ranks */
    bool intra;                 /* inside one server */
    uint32_t next;              /* instance to start next */
    bool busy;
    size_t cap;
    int *arrivals;              /* per instance */
    trn_comm *what;             /* per instance */
    int64_t start_ps;           /* of the running instance */
    uint64_t bytes;             /* its size as run (bytes_scale applied) */
    struct coll_ctx {           /* the running collective's callback context:
                                   in the group, not allocated, so a run
                                   stopped mid-call leaks nothing */
        struct trn_rt *rt;
        struct grp *g;
    } cctx;
} grp;

typedef struct rank_st {
    int r, s;
    size_t pc;
    int iter;
    int wait, wait_grp;
    uint32_t wait_seq;
    int64_t wait_since;
    int recv_dir, recv_key;
    int outstanding;
    uint32_t gseq[TRN_G_NGROUP];
    int grp[TRN_G_NGROUP];      /* group index per kind, -1: none */
    uint16_t *arr[2];           /* arrivals per key */
    trn_ivs comp, comm;         /* this iteration */
    int64_t iter_start;
} rank_st;

typedef struct trn_rt {
    trn_job *j;
    network *net;
    sim *s;
    coll_comm *world;
    rank_st *rk;
    grp *g;
    int ng;
    trn_iter_stats *it;         /* per iteration */
    int *iter_done;             /* ranks done per iteration */
    int done_iters;
    trn_call_rec *calls;
    size_t ncalls, ccap;
    trn_ivs *tl_comp, *tl_comm; /* timeline ranks, whole run */
    struct msg_ctx *msgs;       /* pipeline messages in flight (freed at
                                   fini if the run stops before they land) */
} trn_rt;

static void step(trn_rt *rt, rank_st *x);

static int rank_of(const trn_job *j, int t, int d, int s) { return t + j->tp * (d + j->dp * s); }

static int add_group(trn_rt *rt, int kind, const int *members, int n, const int *server_of)
{
    grp *g = &rt->g[rt->ng];
    memset(g, 0, sizeof *g);
    g->kind = kind;
    g->size = n;
    g->idx = rt->ng;
    g->members = xmalloc((size_t)n * sizeof *g->members);
    memcpy(g->members, members, (size_t)n * sizeof *members);
    g->cc = coll_comm_subset(rt->world, members, n);
    g->intra = true;
    for (int i = 1; i < n; i++)
        if (server_of[rt->j->eps[members[i]]] != server_of[rt->j->eps[members[0]]])
            g->intra = false;
    for (int i = 0; i < n; i++)
        rt->rk[members[i]].grp[kind] = rt->ng;
    return rt->ng++;
}

void trn_job_init(trn_job *j, network *n, const int *server_of)
{
    trn_rt *rt = xcalloc(1, sizeof *rt);
    j->rt = rt;
    rt->j = j;
    rt->net = n;
    rt->s = network_sim(n);
    rt->world = coll_comm_create(n, j->eps, j->n);
    rt->rk = xcalloc((size_t)j->n, sizeof *rt->rk);
    int ep = j->ep > 1 ? j->ep : 1;
    /* at most: TP + DP + EP + DP-EP groups */
    rt->g = xcalloc((size_t)j->n * 4 + 4, sizeof *rt->g);
    int *m = xmalloc((size_t)j->n * sizeof *m);
    for (int r = 0; r < j->n; r++) {
        rank_st *x = &rt->rk[r];
        x->r = r;
        x->s = r / (j->tp * j->dp);
        for (int k = 0; k < TRN_G_NGROUP; k++)
            x->grp[k] = -1;
        for (int d = 0; d < 2; d++)
            x->arr[d] = xcalloc((size_t)j->progs[x->s].keys[d] + 1, sizeof(uint16_t));
    }
    for (int s = 0; s < j->pp; s++) {
        for (int d = 0; d < j->dp; d++) {
            for (int t = 0; t < j->tp; t++)
                m[t] = rank_of(j, t, d, s);
            add_group(rt, TRN_G_TP, m, j->tp, server_of);
        }
        for (int t = 0; t < j->tp; t++) {
            for (int d = 0; d < j->dp; d++)
                m[d] = rank_of(j, t, d, s);
            add_group(rt, TRN_G_DP, m, j->dp, server_of);
            if (ep > 1) {
                for (int b = 0; b < j->dp / ep; b++) {
                    for (int k = 0; k < ep; k++)
                        m[k] = rank_of(j, t, b * ep + k, s);
                    add_group(rt, TRN_G_EP, m, ep, server_of);
                }
                for (int k = 0; k < ep; k++) {
                    for (int b = 0; b < j->dp / ep; b++)
                        m[b] = rank_of(j, t, b * ep + k, s);
                    add_group(rt, TRN_G_DPEP, m, j->dp / ep, server_of);
                }
            }
        }
    }
    free(m);
    rt->it = xcalloc((size_t)j->iterations, sizeof *rt->it);
    rt->iter_done = xcalloc((size_t)j->iterations, sizeof *rt->iter_done);
    int nt = j->timeline_ranks < j->n ? j->timeline_ranks : j->n;
    rt->tl_comp = xcalloc((size_t)nt + 1, sizeof *rt->tl_comp);
    rt->tl_comm = xcalloc((size_t)nt + 1, sizeof *rt->tl_comm);
}

bool trn_job_done(const trn_job *j) { return j->rt->done_iters >= j->iterations; }

/* ---- events ------------------------------------------------------------- */

static void ev_resume(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    trn_rt *rt = obj;
    rank_st *x = &rt->rk[arg];
    x->pc++;
    step(rt, x);
}

static void comm_iv(trn_rt *rt, rank_st *x, int64_t a, int64_t b)
{
    trn_iv_add(&x->comm, a, b);
    if (x->r < rt->j->timeline_ranks)
        trn_iv_add(&rt->tl_comm[x->r], a, b);
}

static void try_start(trn_rt *rt, grp *g);

static void group_done(trn_rt *rt, grp *g, uint64_t bytes, double busbw)
{
    int64_t now = sim_now(rt->s);
    trn_comm *w = &g->what[g->next];
    if (rt->ncalls == rt->ccap) {
        rt->ccap = rt->ccap ? 2 * rt->ccap : 1024;
        rt->calls = xrealloc(rt->calls, rt->ccap * sizeof *rt->calls);
    }
    rt->calls[rt->ncalls++] = (trn_call_rec){g->kind, w->coll, g->idx, g->size, bytes,
                                             g->start_ps, now, busbw};
    uint32_t seq = g->next;
    bool async = g->arrivals[seq] < 0;
    g->busy = false;
    g->next++;
    for (int i = 0; i < g->size; i++) {
        rank_st *x = &rt->rk[g->members[i]];
        if (x->wait == W_COLL && x->wait_grp == g->idx && x->wait_seq == seq) {
            comm_iv(rt, x, x->wait_since, now);
            x->wait = W_NONE;
            x->pc++;
            step(rt, x);
        } else if (async) {
            comm_iv(rt, x, g->start_ps, now);
            if (--x->outstanding == 0 && x->wait == W_WAIT) {
                x->wait = W_NONE;
                x->pc++;
                step(rt, x);
            }
        }
    }
    try_start(rt, g);
}

static void on_coll_done(void *ctx, const coll_result *r)
{
    struct coll_ctx *c = ctx;
    group_done(c->rt, c->g, r->bytes, r->busbw_Bps);
}

static void ev_intra_done(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    trn_rt *rt = obj;
    grp *g = &rt->g[arg];
    trn_comm *w = &g->what[g->next];
    double t = ps_to_s(sim_now(rt->s) - g->start_ps);
    group_done(rt, g, g->bytes, t > 0 ? (double)g->bytes * trn_busbw_factor(w->coll, g->size) / t
                                      : 0);
}

static enum coll_type coll_of(int c)
{
    switch (c) {
    case TRN_C_ALLREDUCE: return COLL_ALLREDUCE;
    case TRN_C_ALLGATHER: return COLL_ALLGATHER;
    case TRN_C_REDUCESCATTER: return COLL_REDUCE_SCATTER;
    case TRN_C_ALLTOALL: return COLL_ALLTOALL;
    default: return COLL_BROADCAST;
    }
}

/* Arrivals are stored negated for asynchronous instances. */
static void try_start(trn_rt *rt, grp *g)
{
    if (g->busy || g->next >= g->cap)
        return;
    int a = g->arrivals[g->next];
    if ((a < 0 ? -a : a) < g->size)
        return;
    trn_job *j = rt->j;
    trn_comm *w = &g->what[g->next];
    g->busy = true;
    g->start_ps = sim_now(rt->s);
    /* whole float elements for every rank and channel (scaled-down sizes
     * could leave ranks an empty share) */
    uint64_t unit = 4 * (uint64_t)g->size * (uint64_t)(j->channels > 0 ? j->channels : 1);
    uint64_t bytes = (uint64_t)((double)w->bytes * j->bytes_scale + 0.5);
    bytes = (bytes + unit - 1) / unit * unit;
    g->bytes = bytes;
    if (g->intra && j->intra_analytical) {
        double f = trn_busbw_factor(w->coll, g->size);
        int64_t d = 1000000 + (int64_t)(f * (double)bytes / j->intra_Bps * 1e12);
        sim_schedule_in(rt->s, d, ev_intra_done, rt, (uint64_t)g->idx);
        return;
    }
    coll_args ca = {.type = coll_of(w->coll), .algo = j->algo, .bytes = bytes,
                    .channels = j->channels, .chunk_bytes = j->chunk_bytes,
                    .tag = j->idx * 16 + g->kind, .start_ps = g->start_ps, .fluid = j->fluid};
    coll_wl_nccl_args(&j->nccl, &ca);
    g->cctx = (struct coll_ctx){rt, g};
    err e = {0};
    if (coll_start(g->cc, &ca, on_coll_done, &g->cctx, &e)) {
        /* an algorithm that does not fit this group (checked at configure
         * for the job's groups): fall back to the ring */
        ca.algo = COLL_ALGO_RING;
        if (coll_start(g->cc, &ca, on_coll_done, &g->cctx, &e))
            group_done(rt, g, bytes, 0);
    }
}

static void arrive(trn_rt *rt, rank_st *x, const trn_op *op)
{
    grp *g = &rt->g[x->grp[op->comm.group]];
    uint32_t seq = x->gseq[op->comm.group]++;
    if (seq >= g->cap) {
        size_t nc = g->cap ? 2 * g->cap : 64;
        while (nc <= seq)
            nc *= 2;
        g->arrivals = xrealloc(g->arrivals, nc * sizeof *g->arrivals);
        g->what = xrealloc(g->what, nc * sizeof *g->what);
        memset(g->arrivals + g->cap, 0, (nc - g->cap) * sizeof *g->arrivals);
        g->cap = nc;
    }
    if (op->async)
        g->arrivals[seq]--;
    else
        g->arrivals[seq]++;
    g->what[seq] = op->comm;
    if (op->async)
        x->outstanding++;
    else {
        x->wait = W_COLL;
        x->wait_grp = g->idx;
        x->wait_seq = seq;
        x->wait_since = sim_now(rt->s);
    }
    try_start(rt, g);
}

typedef struct msg_ctx {
    trn_rt *rt;
    int dst, dir, key;
    int64_t sent_ps;
    struct msg_ctx *prev, *next;    /* in rt->msgs */
} msg_ctx;

static void msg_unlink(trn_rt *rt, msg_ctx *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        rt->msgs = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

/* A message arrives.  A receiver waiting for it spent the time since it
 * was sent (or since it began to wait, if later) in communication; the
 * time before it was sent is idle (a pipeline bubble). */
static void deliver(trn_rt *rt, int dst, int dir, int key, int64_t sent_ps)
{
    rank_st *y = &rt->rk[dst];
    y->arr[dir][key]++;
    if (y->wait == W_RECV && y->recv_dir == dir && y->recv_key == key) {
        y->arr[dir][key]--;
        comm_iv(rt, y, y->wait_since > sent_ps ? y->wait_since : sent_ps, sim_now(rt->s));
        y->wait = W_NONE;
        y->pc++;
        step(rt, y);
    }
}

static void on_msg(void *ctx, network *n, const net_msg *m)
{
    (void)n;
    (void)m;
    msg_ctx *c = ctx;
    trn_rt *rt = c->rt;
    int dst = c->dst, dir = c->dir, key = c->key;
    int64_t sent = c->sent_ps;
    msg_unlink(rt, c);
    free(c);
    deliver(rt, dst, dir, key, sent);
}

static void iteration_end(trn_rt *rt, rank_st *x)
{
    trn_job *j = rt->j;
    int64_t now = sim_now(rt->s);
    trn_iter_stats *it = &rt->it[x->iter];
    int64_t comp = 0, comm, exp;
    for (size_t i = 0; i < x->comp.n; i++)
        comp += x->comp.iv[i][1] - x->comp.iv[i][0];
    trn_overlap(&x->comp, &x->comm, &comm, &exp);
    it->compute_ps += comp;
    it->comm_ps += comm;
    it->exposed_ps += exp;
    if (now > it->end_ps)
        it->end_ps = now;
    if (x->r == 0)
        it->start_ps = x->iter_start;
    x->comp.n = x->comm.n = 0;
    if (++rt->iter_done[x->iter] == j->n) {
        it->compute_ps /= j->n;
        it->comm_ps /= j->n;
        it->exposed_ps /= j->n;
        rt->done_iters++;
    }
    x->iter++;
    x->pc = 0;
    x->iter_start = now;
}

static void step(trn_rt *rt, rank_st *x)
{
    trn_job *j = rt->j;
    const trn_prog *p = &j->progs[x->s];
    int64_t now = sim_now(rt->s);
    for (;;) {
        if (x->pc >= p->n) {
            iteration_end(rt, x);
            if (x->iter >= j->iterations)
                return;
            /* the next iteration starts when this rank's stage is done with
             * it: ranks meet again at their first collective */
        }
        const trn_op *op = &p->ops[x->pc];
        switch (op->kind) {
        case TRN_OP_COMPUTE:
            trn_iv_add(&x->comp, now, now + op->dur_ps);
            if (x->r < j->timeline_ranks)
                trn_iv_add(&rt->tl_comp[x->r], now, now + op->dur_ps);
            sim_schedule(rt->s, now + op->dur_ps, ev_resume, rt, (uint64_t)x->r);
            return;
        case TRN_OP_COLL:
            if (x->grp[op->comm.group] < 0 || rt->g[x->grp[op->comm.group]].size < 2)
                break;
            arrive(rt, x, op);
            if (!op->async)
                return;
            break;
        case TRN_OP_SEND: {
            int peer_s = op->dir == 0 ? (x->s + 1) % j->pp : (x->s + j->pp - 1) % j->pp;
            int t = x->r % j->tp, d = (x->r / j->tp) % j->dp;
            int peer = rank_of(j, t, d, peer_s);
            uint64_t bytes = (uint64_t)((double)op->comm.bytes * j->bytes_scale + 0.5);
            if (!bytes || peer == x->r) {
                deliver(rt, peer, op->dir, op->key, now);
                break;
            }
            msg_ctx *c = xmalloc(sizeof *c);
            *c = (msg_ctx){rt, peer, op->dir, op->key, now, NULL, rt->msgs};
            if (rt->msgs)
                rt->msgs->prev = c;
            rt->msgs = c;
            network_send(rt->net, j->eps[x->r], j->eps[peer], bytes, 0, j->idx * 16 + TRN_G_PP,
                         now, on_msg, c);
            break;
        }
        case TRN_OP_RECV:
            if (x->arr[op->dir][op->key]) {
                x->arr[op->dir][op->key]--;
                break;
            }
            x->wait = W_RECV;
            x->recv_dir = op->dir;
            x->recv_key = op->key;
            x->wait_since = now;
            return;
        case TRN_OP_WAIT:
            if (x->outstanding) {
                x->wait = W_WAIT;
                return;
            }
            break;
        }
        x->pc++;
    }
}

static void ev_start(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    trn_rt *rt = obj;
    for (int r = 0; r < rt->j->n; r++) {
        rt->rk[r].iter_start = sim_now(rt->s);
        step(rt, &rt->rk[r]);
    }
}

void trn_job_start(trn_job *j) { sim_schedule(j->rt->s, j->start_ps, ev_start, j->rt, 0); }

int trn_job_iters(const trn_job *j, trn_iter_stats *res)
{
    memcpy(res, j->rt->it, (size_t)j->rt->done_iters * sizeof *res);
    return j->rt->done_iters;
}

size_t trn_job_calls(const trn_job *j, const trn_call_rec **recs)
{
    *recs = j->rt->calls;
    return j->rt->ncalls;
}

void trn_job_timeline(const trn_job *j, FILE *f, FILE *seg, int row0)
{
    trn_rt *rt = j->rt;
    int nt = j->timeline_ranks < j->n ? j->timeline_ranks : j->n;
    for (int r = 0; r < nt; r++) {
        for (int k = 0; k < 2; k++) {
            const trn_ivs *v = k ? &rt->tl_comm[r] : &rt->tl_comp[r];
            const char *kind = k ? "communication" : "compute";
            for (size_t i = 0; i < v->n; i++) {
                double a = ps_to_s(v->iv[i][0]), b = ps_to_s(v->iv[i][1]);
                fprintf(f, "%s,%d,%d,%s,%.9g,%.9g\n", j->name, r, r / (j->tp * j->dp), kind, a,
                        b);
                /* a bar as a segment at height row (+0.3 for communication);
                 * the nan row ends it, so gnuplot draws no line between bars */
                double y = row0 + r + 0.3 * k;
                fprintf(seg, "%s %s,%.9g,%g\n%s %s,%.9g,%g\n%s %s,%.9g,NaN\n", j->name, kind, a,
                        y, j->name, kind, b, y, j->name, kind, b);
            }
        }
    }
}

void trn_job_fini(trn_job *j)
{
    trn_rt *rt = j->rt;
    if (!rt)
        return;
    for (int i = 0; i < rt->ng; i++) {
        coll_comm_destroy(rt->g[i].cc);
        free(rt->g[i].members);
        free(rt->g[i].arrivals);
        free(rt->g[i].what);
    }
    free(rt->g);
    for (int r = 0; r < j->n; r++) {
        free(rt->rk[r].arr[0]);
        free(rt->rk[r].arr[1]);
        trn_iv_free(&rt->rk[r].comp);
        trn_iv_free(&rt->rk[r].comm);
    }
    int nt = j->timeline_ranks < j->n ? j->timeline_ranks : j->n;
    for (int r = 0; r < nt; r++) {
        trn_iv_free(&rt->tl_comp[r]);
        trn_iv_free(&rt->tl_comm[r]);
    }
    free(rt->tl_comp);
    free(rt->tl_comm);
    free(rt->rk);
    coll_comm_destroy(rt->world);
    while (rt->msgs) {
        msg_ctx *c = rt->msgs;
        msg_unlink(rt, c);
        free(c);
    }
    free(rt->it);
    free(rt->iter_done);
    free(rt->calls);
    free(rt);
    j->rt = NULL;
}
