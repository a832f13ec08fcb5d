/*
 * skel_train.c - SkeletonHunter's traffic from a training job of the
 * AI-workload issue (skel_model.h: skel_train).
 *
 * The job: the task's parallelism on a transformer described as for the
 * `training` model (trn_generate), one iteration as Megatron 1F1B programs
 * (trn_build), timed by the sans-I/O evaluator (trn_eval_trace) with the
 * RNIC's bandwidth for everything that leaves a host and NVLink's for TP.
 * Every communication the evaluator reports lands on the RNICs it crosses:
 *  - a DP / EP collective (its ranks are on other replicas' hosts, same
 *    rail): busbw_factor x bytes on each member's RNIC over its duration;
 *  - a pipeline send: its bytes on the sender's and the receiver's RNIC
 *    over [sent, arrival], if the two stages are on different hosts;
 *  - TP collectives stay on NVLink (skel_par_check keeps TP in a host).
 * Throughput is the RNIC's bytes in both directions per 1-s bin, Gbit/s.
 *
 * Iterations: iteration k starts at phase + k x P, P = the evaluated
 * iteration time + `gap_s` (optimizer step, data loading, checkpoint
 * hooks: the part of an iteration without network traffic).  Replica r
 * runs iteration k late by eps(k, r) = min(|N(0, jitter_s)|, gap_s) (a
 * replica's own stragglers); its pipeline traffic moves with it, its
 * gradient collectives start when the slowest member of the DP group is
 * there (max over replicas).  Deterministic in the task seed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/rng.h"
#include "systems/skeleton/skel_model.h"

typedef struct trace_ctx {
    skel_train *t;
    const skel_par *p;
    int gph;
    const trn_cost *c;
} trace_ctx;

static void add_ev(skel_train *t, int gi, double a, double b, double bytes, bool sync)
{
    if (t->nev == t->capev) {
        t->capev = t->capev ? 2 * t->capev : 256;
        t->ev = xrealloc(t->ev, t->capev * sizeof *t->ev);
    }
    t->ev[t->nev++] = (skel_tev){.gi = gi, .a = a, .b = b, .bytes = bytes, .sync = sync};
}

static void on_comm(void *ctx, int stage, const trn_op *op, int64_t a_ps, int64_t b_ps)
{
    trace_ctx *x = ctx;
    const skel_par *p = x->p;
    double a = (double)a_ps * 1e-12, b = (double)b_ps * 1e-12;
    if (op->kind == TRN_OP_SEND) {
        int dst = op->dir == 0 ? stage + 1 : stage - 1;
        if (dst < 0 || dst >= p->pp)
            return;
        for (int tr = 0; tr < p->tp; tr++) {
            int g0 = stage * p->tp + tr, g1 = dst * p->tp + tr;
            if (g0 / x->gph == g1 / x->gph)
                continue;       /* same host: NVLink */
            add_ev(x->t, g0, a, b, (double)op->comm.bytes, false);
            add_ev(x->t, g1, a, b, (double)op->comm.bytes, false);
        }
        return;
    }
    if (op->kind != TRN_OP_COLL || op->comm.group == TRN_G_TP || op->comm.group == TRN_G_PP)
        return;
    int n = x->c->size[op->comm.group];
    double f = trn_busbw_factor(op->comm.coll, n);
    if (f <= 0)
        return;
    for (int tr = 0; tr < p->tp; tr++)
        add_ev(x->t, stage * p->tp + tr, a, b, 2 * f * (double)op->comm.bytes, true);
}

int skel_train_prepare(skel_train *t, const skel_par *p, int gph, err *e)
{
    if (t->ready && !memcmp(&t->par, p, sizeof *p) && t->gph == gph)
        return 0;
    t->nev = 0;
    t->ready = false;
    trn_model m = t->model;
    m.tp = p->tp;
    m.pp = p->pp;
    m.dp = p->dp;
    m.ep = p->ep;
    if (trn_model_check(&m, e))
        return AISIM_EINVAL;
    trn_wl w;
    trn_generate(&w, &m);
    trn_prog *progs = xcalloc((size_t)p->pp, sizeof *progs);
    trn_build_cfg bc = {.pp = p->pp, .vpp = 1, .micro_batches = t->micro_batches,
                        .zero = m.zero, .act_bytes = w.pp_bytes};
    int r = trn_build(progs, &w, &bc, e);
    trn_wl_free(&w);
    if (!r) {
        trn_cost c = {0};
        for (int g = 0; g < TRN_G_NGROUP; g++) {
            c.bw_Bps[g] = t->rnic_bps / 8;
            c.lat_ps[g] = 10 * 1000000;     /* 10 us per collective step */
        }
        c.bw_Bps[TRN_G_TP] = t->nvlink_bps / 8;
        c.size[TRN_G_TP] = p->tp;
        c.size[TRN_G_DP] = p->dp;
        c.size[TRN_G_EP] = p->ep;
        c.size[TRN_G_DPEP] = p->dp / p->ep;
        c.size[TRN_G_PP] = 2;
        trace_ctx x = {.t = t, .p = p, .gph = gph, .c = &c};
        int64_t T = trn_eval_trace(progs, p->pp, &c, NULL, on_comm, &x, e);
        if (T < 0)
            r = (int)T;
        else {
            t->iter_s = (double)T * 1e-12;
            t->period_s = t->iter_s + t->gap_s;
            t->par = *p;
            t->gph = gph;
            t->ready = true;
        }
    }
    for (int s = 0; s < p->pp; s++)
        trn_prog_free(&progs[s]);
    free(progs);
    return r;
}

double skel_train_period(void *ctx, const skel_par *p, int gph)
{
    skel_train *t = ctx;
    err e = {0};
    return skel_train_prepare(t, p, gph, &e) ? NAN : t->period_s;
}

void skel_traffic_train(void *ctx, const skel_par *p, int gph, uint64_t task_seed, int64_t t0,
                        size_t len, double *out)
{
    skel_train *t = ctx;
    int H = p->tp * p->pp / gph, R = p->dp, n = H * R * gph;
    memset(out, 0, (size_t)n * len * sizeof *out);
    err e = {0};
    if (skel_train_prepare(t, p, gph, &e))
        return;     /* the model checked the description at configure */
    double P = t->period_s;
    rng r;
    rng_init(&r, task_seed, "skeleton.train", 0);
    double phase = rng_uniform(&r, 0, P);
    long k0 = (long)floor(((double)t0 - phase) / P) - 1;
    long k1 = (long)ceil(((double)t0 + (double)len - phase) / P) + 1;
    double *eps = xmalloc((size_t)R * sizeof *eps);
    for (long k = k0; k <= k1; k++) {
        double tk = phase + (double)k * P, late = 0;
        for (int rep = 0; rep < R; rep++) {
            rng jr;
            rng_init(&jr, task_seed, "skeleton.train.jitter",
                     (uint64_t)(k - k0) * (uint64_t)R + (uint64_t)rep);
            eps[rep] = fmin(fabs(rng_normal(&jr, 0, t->jitter_s)), t->gap_s);
            late = fmax(late, eps[rep]);
        }
        for (int rep = 0; rep < R; rep++)
            for (size_t i = 0; i < t->nev; i++) {
                const skel_tev *v = &t->ev[i];
                int l = (rep * H + v->gi / gph) * gph + v->gi % gph;
                double sh = tk + (v->sync ? late : eps[rep]);
                /* bytes -> Gbit in 1-s bins */
                skel_spread(out + (size_t)l * len, len, (double)t0, sh + v->a, sh + v->b,
                            v->bytes * 8e-9);
            }
    }
    free(eps);
}

void skel_train_fini(skel_train *t)
{
    free(t->ev);
    t->ev = NULL;
    t->nev = t->capev = 0;
    t->ready = false;
}
