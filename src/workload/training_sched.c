/*
 * training_sched.c - the iteration of a training job as per-stage
 * programs, and their sans-I/O evaluation.
 *
 * Pipeline schedule (Narayanan et al., SC '21, "Efficient large-scale
 * language model training on GPU clusters using Megatron-LM"): with p
 * stages and m micro-batches, stage s runs min(p-s-1, m) warm-up forwards,
 * then alternates one forward and one backward, then the remaining
 * backwards (1F1B).  With v virtual stages (model chunks) per stage, the
 * m*v forward passes run in groups of p micro-batches per chunk, the
 * warm-up is (p-s-1)*2 + (v-1)*p, and the bubble shrinks from
 * (p-1)/(m+p-1) to (p-1)/(v*m+p-1) of the iteration for equal stage times.
 * Chunk c of stage s is global chunk c*p + s: activations go from stage
 * p-1 to stage 0 between chunks.
 *
 * The evaluator runs one representative rank per stage, each with its own
 * clock; a receive blocks until its message's arrival time is known, so
 * the result does not depend on the order stages are stepped in.  Cost:
 * O(ops) plus sorting the intervals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/training.h"

static void trn_prog_push(trn_prog *p, const trn_op *op)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->ops = xrealloc(p->ops, p->cap * sizeof *p->ops);
    }
    p->ops[p->n++] = *op;
    if (op->kind == TRN_OP_SEND || op->kind == TRN_OP_RECV)
        if (op->key + 1 > p->keys[op->dir])
            p->keys[op->dir] = op->key + 1;
}

void trn_prog_free(trn_prog *p)
{
    free(p->ops);
    memset(p, 0, sizeof *p);
}

/* ---- the 1F1B builder --------------------------------------------------- */

typedef struct builder {
    const trn_wl *w;
    const trn_build_cfg *c;
    trn_prog *p;
    int s, pp, v, m;
    size_t *first;              /* first layer of each global chunk; [C] = n */
    trn_comm bucket;            /* DP gradient bucket being filled */
    uint64_t step_gather;       /* ZeRO >= 1: parameter bytes to gather */
} builder;

static void emit(builder *b, const trn_op *op) { trn_prog_push(b->p, op); }

static void compute(builder *b, int64_t ps, int mb, bool bwd)
{
    if (ps > 0)
        emit(b, &(trn_op){.kind = TRN_OP_COMPUTE, .dur_ps = ps, .mb = mb, .bwd = bwd});
}

static void coll(builder *b, const trn_comm *c, bool async, int mb, bool bwd)
{
    if (c->coll != TRN_C_NONE && c->bytes)
        emit(b, &(trn_op){.kind = TRN_OP_COLL, .comm = *c, .async = async, .mb = mb,
                          .bwd = bwd});
}

static void flush(builder *b, int mb)
{
    if (b->bucket.bytes)
        coll(b, &b->bucket, true, mb, true);
    b->bucket.bytes = 0;
}

static bool is_grad(const trn_comm *c)
{
    return (c->group == TRN_G_DP || c->group == TRN_G_DPEP) &&
           (c->coll == TRN_C_ALLREDUCE || c->coll == TRN_C_REDUCESCATTER);
}

static void grad(builder *b, const trn_comm *g, int mb)
{
    if (g->coll == TRN_C_NONE || !g->bytes)
        return;
    if (!is_grad(g)) {          /* a file's other weight-grad traffic: as is */
        coll(b, g, true, mb, true);
        return;
    }
    if (b->c->zero >= 1 && g->coll == TRN_C_REDUCESCATTER)
        b->step_gather += g->bytes;
    if (b->bucket.bytes && (b->bucket.coll != g->coll || b->bucket.group != g->group))
        flush(b, mb);
    b->bucket.coll = g->coll;
    b->bucket.group = g->group;
    b->bucket.bytes += g->bytes;
    if (b->bucket.bytes >= b->c->bucket_bytes)
        flush(b, mb);
}

static void zero3_gather(builder *b, const trn_layer *L, int mb, bool bwd)
{
    if (b->c->zero >= 3 && is_grad(&L->wg))
        coll(b, &(trn_comm){TRN_C_ALLGATHER, L->wg.group, L->wg.bytes}, false, mb, bwd);
}

static void fwd(builder *b, int mb, int c)
{
    int s = b->s, pp = b->pp, v = b->v, g = c * pp + s;
    if (s || c)
        emit(b, &(trn_op){.kind = TRN_OP_RECV, .dir = 0, .key = mb * v + c, .mb = mb});
    for (size_t i = b->first[g]; i < b->first[g + 1]; i++) {
        const trn_layer *L = &b->w->layers[i];
        zero3_gather(b, L, mb, false);
        compute(b, L->fwd_ps, mb, false);
        coll(b, &L->fwd, false, mb, false);
    }
    if (s < pp - 1 || c < v - 1)
        emit(b, &(trn_op){.kind = TRN_OP_SEND, .dir = 0, .key = mb * v + (s < pp - 1 ? c : c + 1),
                          .comm = {.bytes = b->c->act_bytes, .group = TRN_G_PP}, .mb = mb});
}

static void bwd(builder *b, int mb, int c)
{
    int s = b->s, pp = b->pp, v = b->v, g = c * pp + s;
    bool last = mb == b->m - 1;     /* the gradient accumulation boundary */
    if (s < pp - 1 || c < v - 1)
        emit(b, &(trn_op){.kind = TRN_OP_RECV, .dir = 1, .key = mb * v + c, .mb = mb,
                          .bwd = true});
    for (size_t i = b->first[g + 1]; i-- > b->first[g];) {
        const trn_layer *L = &b->w->layers[i];
        zero3_gather(b, L, mb, true);
        compute(b, L->ig_ps, mb, true);
        coll(b, &L->ig, false, mb, true);
        compute(b, L->wg_ps, mb, true);
        if (last)
            grad(b, &L->wg, mb);
    }
    if (last)
        flush(b, mb);
    if (s || c)
        emit(b, &(trn_op){.kind = TRN_OP_SEND, .dir = 1, .key = mb * v + (s ? c : c - 1),
                          .comm = {.bytes = b->c->act_bytes, .group = TRN_G_PP}, .mb = mb,
                          .bwd = true});
}

/* Megatron's order of the k-th forward (backward) pass of a stage. */
static void fwd_k(builder *b, int k, int *mb, int *c)
{
    int pv = b->pp * b->v;
    *c = (k % pv) / b->pp;
    *mb = (k / pv) * b->pp + k % b->pp;
    if (b->v == 1) {
        *c = 0;
        *mb = k;
    }
}

static void bwd_k(builder *b, int k, int *mb, int *c)
{
    fwd_k(b, k, mb, c);
    *c = b->v - 1 - *c;
}

int trn_build(trn_prog *progs, const trn_wl *w, const trn_build_cfg *c, err *e)
{
    int pp = c->pp, v = c->vpp < 1 ? 1 : c->vpp, m = c->micro_batches;
    size_t C = (size_t)pp * v;
    if (pp < 1 || m < 1)
        return ERR(e, AISIM_EINVAL, "pp and micro_batches must be at least 1");
    if (w->n < C)
        return ERR(e, AISIM_EINVAL, "%zu layers cannot fill pp x vpp = %zu chunks", w->n, C);
    if (v > 1 && m % pp)
        return ERR(e, AISIM_EINVAL, "the interleaved schedule (vpp %d) needs micro_batches (%d) "
                   "to be a multiple of pp (%d)", v, m, pp);
    size_t *first = xmalloc((C + 1) * sizeof *first);
    size_t base = w->n / C, extra = w->n % C;
    first[0] = 0;
    for (size_t k = 0; k < C; k++)
        first[k + 1] = first[k] + base + (k < extra);
    for (int s = 0; s < pp; s++) {
        builder b = {.w = w, .c = c, .p = &progs[s], .s = s, .pp = pp, .v = v, .m = m,
                     .first = first};
        memset(b.p, 0, sizeof *b.p);
        int total = m * v;
        int warm = v == 1 ? pp - s - 1 : (pp - s - 1) * 2 + (v - 1) * pp;
        if (warm > total)
            warm = total;
        int mb, ch;
        for (int k = 0; k < warm; k++) {
            fwd_k(&b, k, &mb, &ch);
            fwd(&b, mb, ch);
        }
        for (int k = 0; k < total - warm; k++) {
            fwd_k(&b, warm + k, &mb, &ch);
            fwd(&b, mb, ch);
            bwd_k(&b, k, &mb, &ch);
            bwd(&b, mb, ch);
        }
        for (int k = total - warm; k < total; k++) {
            bwd_k(&b, k, &mb, &ch);
            bwd(&b, mb, ch);
        }
        /* the step: every gradient reduced, the update, ZeRO's gather */
        emit(&b, &(trn_op){.kind = TRN_OP_WAIT, .mb = -1});
        int64_t upd = 0;
        for (int ck = 0; ck < v; ck++)
            for (size_t i = first[ck * pp + s]; i < first[ck * pp + s + 1]; i++)
                upd += w->layers[i].update_ps;
        compute(&b, upd, -1, false);
        for (size_t i = 0; c->nstep && i < c->nstep[s]; i++)
            coll(&b, &c->step[s][i], false, -1, false);
        if (b.step_gather) {
            uint64_t left = b.step_gather, cap = c->bucket_bytes ? c->bucket_bytes : left;
            while (left) {
                uint64_t n = left < cap ? left : cap;
                coll(&b, &(trn_comm){TRN_C_ALLGATHER, TRN_G_DP, n}, true, -1, false);
                left -= n;
            }
            emit(&b, &(trn_op){.kind = TRN_OP_WAIT, .mb = -1});
        }
    }
    free(first);
    return 0;
}

/* ---- the AICB replay ---------------------------------------------------- */

/* The collectives of the first pass of phase ph in calls [i, n): from its
 * first call up to the first send/receive or other phase; returns their
 * count (into out, if not NULL). */
static size_t first_pass(const trn_call *c, size_t i, size_t n, int ph, trn_comm *out)
{
    while (i < n && c[i].phase != ph)
        i++;
    size_t k = 0;
    for (; i < n && c[i].phase == ph && c[i].coll < TRN_C_NCOLL; i++) {
        if (out)
            out[k] = (trn_comm){c[i].coll, c[i].group, c[i].bytes};
        k++;
    }
    return k;
}

int trn_build_aicb(trn_prog *progs, const trn_log *l, int64_t fwd_ps, int64_t bwd_ps,
                   int *micro_batches, err *e)
{
    int pp = l->stages, m = 0;
    size_t *lo = xcalloc((size_t)pp, sizeof *lo), *hi = xcalloc((size_t)pp, sizeof *hi);
    size_t k = 1, *nf = xcalloc((size_t)pp, sizeof *nf), *nb = xcalloc((size_t)pp, sizeof *nb);
    uint64_t act = 0;
    int r = 0;
    for (int s = 0; s < pp && !r; s++) {
        const trn_call *c = l->calls[s];
        size_t n = l->ncalls[s], i = 0;
        /* the iteration: after the set-up's epoch_end, to the next one */
        while (i < n && c[i].phase == TRN_PH_INIT && c[i].coll != TRN_CALL_EPOCH)
            i++;
        if (i < n && c[i].coll == TRN_CALL_EPOCH)
            i++;
        lo[s] = i;
        while (i < n && c[i].coll != TRN_CALL_EPOCH)
            i++;
        hi[s] = i;
        nf[s] = first_pass(c, lo[s], hi[s], TRN_PH_FWD, NULL);
        nb[s] = first_pass(c, lo[s], hi[s], TRN_PH_BWD, NULL);
        if (!nf[s] && !nb[s])
            r = ERR(e, AISIM_EINVAL, "stage %d of the log has no forward or backward call", s);
        if (nf[s] > k)
            k = nf[s];
        if (nb[s] > k)
            k = nb[s];
        /* micro-batches: forward passes of stage 0, or its backward
         * passes where the forward communicates nothing (pure data
         * parallelism, ZeRO-1/2: the gradients' buckets only) */
        int ph = nf[0] ? (int)TRN_PH_FWD : (int)TRN_PH_BWD;
        for (size_t j = lo[0]; s == 0 && j < hi[0]; j++) {
            bool start = (int)c[j].phase == ph && c[j].coll < TRN_C_NCOLL &&
                         (j == lo[0] || (int)c[j - 1].phase != ph ||
                          c[j - 1].coll >= TRN_C_NCOLL);
            m += start;
        }
        for (size_t j = lo[s]; j < hi[s] && !act; j++)
            if (c[j].coll == TRN_CALL_ISEND)
                act = c[j].bytes;
    }
    if (!r && m < 1)
        r = ERR(e, AISIM_EINVAL, "the log has no forward or backward pass in stage 0");
    if (r) {
        free(lo), free(hi), free(nf), free(nb);
        return r;
    }
    /* every stage as k layers: layer i forwards with the i-th call of its
     * forward template and back-propagates with the (k-1-i)-th of its
     * backward template, compute spread evenly */
    trn_wl w = {.n = (size_t)pp * k, .pp = pp};
    w.layers = xcalloc(w.n, sizeof *w.layers);
    trn_comm *tmp = xmalloc(k * sizeof *tmp);
    const trn_comm **step = xcalloc((size_t)pp, sizeof *step);
    size_t *nstep = xcalloc((size_t)pp, sizeof *nstep);
    for (int s = 0; s < pp; s++) {
        trn_layer *L = &w.layers[(size_t)s * k];
        for (size_t i = 0; i < k; i++) {
            snprintf(L[i].name, sizeof L[i].name, "stage%d.%zu", s, i);
            L[i].fwd_ps = fwd_ps / (int64_t)k;
            L[i].ig_ps = bwd_ps / 2 / (int64_t)k;
            L[i].wg_ps = bwd_ps / 2 / (int64_t)k;
        }
        first_pass(l->calls[s], lo[s], hi[s], TRN_PH_FWD, tmp);
        for (size_t i = 0; i < nf[s]; i++)
            L[i].fwd = tmp[i];
        first_pass(l->calls[s], lo[s], hi[s], TRN_PH_BWD, tmp);
        for (size_t i = 0; i < nb[s]; i++)
            L[k - 1 - i].ig = tmp[i];
        trn_comm *st = xmalloc((hi[s] - lo[s]) * sizeof *st);
        for (size_t j = lo[s]; j < hi[s]; j++) {
            const trn_call *c = &l->calls[s][j];
            if (c->phase == TRN_PH_STEP && c->coll < TRN_C_NCOLL)
                st[nstep[s]++] = (trn_comm){c->coll, c->group, c->bytes};
        }
        step[s] = st;
    }
    trn_build_cfg bc = {.pp = pp, .vpp = 1, .micro_batches = m, .act_bytes = act,
                        .step = step, .nstep = nstep};
    r = trn_build(progs, &w, &bc, e);
    for (int s = 0; s < pp; s++)
        free((void *)step[s]);
    free(step), free(nstep), free(tmp), free(lo), free(hi), free(nf), free(nb);
    trn_wl_free(&w);
    *micro_batches = m;
    return r;
}

/* ---- intervals ---------------------------------------------------------- */

void trn_iv_add(trn_ivs *v, int64_t a, int64_t b)
{
    if (b <= a)
        return;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 256;
        v->iv = xrealloc(v->iv, v->cap * sizeof *v->iv);
    }
    v->iv[v->n][0] = a;
    v->iv[v->n][1] = b;
    v->n++;
}

void trn_iv_free(trn_ivs *v)
{
    free(v->iv);
    memset(v, 0, sizeof *v);
}

static int cmp_iv(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

void trn_overlap(const trn_ivs *comp, trn_ivs *comm, int64_t *comm_ps, int64_t *exposed_ps)
{
    if (comm->n > 1)
        qsort(comm->iv, comm->n, sizeof *comm->iv, cmp_iv);
    int64_t tot = 0, exp = 0;
    size_t j = 0;
    int64_t a = 0, b = -1;
    for (size_t i = 0; i <= comm->n; i++) {
        if (i < comm->n && comm->iv[i][0] <= b) {
            if (comm->iv[i][1] > b)
                b = comm->iv[i][1];
            continue;
        }
        if (b > a) {            /* a merged interval [a, b) */
            tot += b - a;
            int64_t cov = 0;
            while (j < comp->n && comp->iv[j][1] <= a)
                j++;
            for (size_t k = j; k < comp->n && comp->iv[k][0] < b; k++) {
                int64_t x = comp->iv[k][0] > a ? comp->iv[k][0] : a;
                int64_t y = comp->iv[k][1] < b ? comp->iv[k][1] : b;
                if (y > x)
                    cov += y - x;
            }
            exp += b - a - cov;
        }
        if (i < comm->n) {
            a = comm->iv[i][0];
            b = comm->iv[i][1];
        }
    }
    *comm_ps = tot;
    *exposed_ps = exp;
}

/* ---- the sans-I/O evaluator --------------------------------------------- */

static int64_t trn_cost_coll(const trn_cost *c, const trn_comm *cm)
{
    int n = c->size[cm->group];
    double f = trn_busbw_factor(cm->coll, n);
    double bw = c->coll_Bps[cm->group][cm->coll] > 0 ? c->coll_Bps[cm->group][cm->coll]
                                                      : c->bw_Bps[cm->group];
    if (f <= 0 || bw <= 0)
        return 0;
    return c->lat_ps[cm->group] + (int64_t)(f * (double)cm->bytes / bw * 1e12);
}

static int64_t p2p_ps(const trn_cost *c, uint64_t bytes)
{
    double bw = c->coll_Bps[TRN_G_PP][TRN_C_NONE] > 0 ? c->coll_Bps[TRN_G_PP][TRN_C_NONE]
                                                       : c->bw_Bps[TRN_G_PP];
    if (bw <= 0)
        return c->lat_ps[TRN_G_PP];
    return c->lat_ps[TRN_G_PP] + (int64_t)((double)bytes / bw * 1e12);
}

typedef struct evst {
    size_t pc;
    int64_t t, pending, stream[TRN_G_NGROUP];
    int64_t *arr[2], *sent[2];  /* per key: arrival, send time */
    trn_ivs comp, comm;
} evst;

int64_t trn_eval(const trn_prog *progs, int pp, const trn_cost *c, trn_stage_stats *st, err *e)
{
    return trn_eval_trace(progs, pp, c, st, NULL, NULL, e);
}

int64_t trn_eval_trace(const trn_prog *progs, int pp, const trn_cost *c, trn_stage_stats *st,
                       trn_trace_fn trace, void *ctx, err *e)
{
    evst *v = xcalloc((size_t)pp, sizeof *v);
    for (int s = 0; s < pp; s++)
        for (int d = 0; d < 2; d++) {
            int nk = progs[s].keys[d] + 1;
            v[s].arr[d] = xmalloc((size_t)nk * sizeof(int64_t));
            v[s].sent[d] = xmalloc((size_t)nk * sizeof(int64_t));
            for (int k = 0; k < nk; k++)
                v[s].arr[d][k] = -1;
        }
    bool progress = true;
    int left = pp;
    while (left && progress) {
        progress = false;
        for (int s = 0; s < pp; s++) {
            evst *x = &v[s];
            const trn_prog *p = &progs[s];
            while (x->pc < p->n) {
                const trn_op *op = &p->ops[x->pc];
                if (op->kind == TRN_OP_RECV) {
                    int64_t a = op->key < progs[s].keys[op->dir] ? x->arr[op->dir][op->key] : -1;
                    if (a < 0)
                        break;
                    /* waiting while the message is in flight is
                     * communication; before it was sent, idle */
                    if (a > x->t) {
                        int64_t sn = x->sent[op->dir][op->key];
                        trn_iv_add(&x->comm, sn > x->t ? sn : x->t, a);
                        x->t = a;
                    }
                } else if (op->kind == TRN_OP_COMPUTE) {
                    trn_iv_add(&x->comp, x->t, x->t + op->dur_ps);
                    x->t += op->dur_ps;
                } else if (op->kind == TRN_OP_COLL) {
                    int64_t d = trn_cost_coll(c, &op->comm);
                    if (op->async) {
                        int64_t *sf = &x->stream[op->comm.group];
                        int64_t a = *sf > x->t ? *sf : x->t;
                        *sf = a + d;
                        trn_iv_add(&x->comm, a, a + d);
                        if (trace)
                            trace(ctx, s, op, a, a + d);
                        if (*sf > x->pending)
                            x->pending = *sf;
                    } else {
                        trn_iv_add(&x->comm, x->t, x->t + d);
                        if (trace)
                            trace(ctx, s, op, x->t, x->t + d);
                        x->t += d;
                    }
                } else if (op->kind == TRN_OP_SEND) {
                    int dst = op->dir == 0 ? (s + 1) % pp : (s + pp - 1) % pp;
                    if (op->key < progs[dst].keys[op->dir]) {
                        v[dst].arr[op->dir][op->key] = x->t + p2p_ps(c, op->comm.bytes);
                        v[dst].sent[op->dir][op->key] = x->t;
                        if (trace)
                            trace(ctx, s, op, x->t, x->t + p2p_ps(c, op->comm.bytes));
                    }
                } else if (op->kind == TRN_OP_WAIT) {
                    if (x->pending > x->t)
                        x->t = x->pending;
                }
                x->pc++;
                progress = true;
                if (x->pc == p->n)
                    left--;
            }
        }
    }
    int64_t end = 0;
    int r = 0;
    for (int s = 0; s < pp; s++) {
        evst *x = &v[s];
        if (x->pc < progs[s].n && !r)
            r = ERR(e, AISIM_EINVAL, "the schedule deadlocks: stage %d waits at operation %zu "
                    "for a message that is never sent", s, x->pc);
        if (x->t > end)
            end = x->t;
    }
    for (int s = 0; s < pp; s++) {
        evst *x = &v[s];
        if (st) {
            trn_stage_stats *o = &st[s];
            memset(o, 0, sizeof *o);
            o->end_ps = x->t;
            for (size_t i = 0; i < x->comp.n; i++)
                o->compute_ps += x->comp.iv[i][1] - x->comp.iv[i][0];
            trn_overlap(&x->comp, &x->comm, &o->comm_ps, &o->exposed_ps);
            o->idle_ps = end - o->compute_ps - o->exposed_ps;
        }
        trn_iv_free(&x->comp);
        trn_iv_free(&x->comm);
        for (int d = 0; d < 2; d++) {
            free(x->arr[d]);
            free(x->sent[d]);
        }
    }
    free(v);
    return r ? r : end;
}
