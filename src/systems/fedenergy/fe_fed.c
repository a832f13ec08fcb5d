/*
 * fe_fed.c - one method's federated rounds (fe_fed.h).
 *
 * Round t: every device starts from the global w, runs tau_i SGD steps and
 * produces D_i = w_i - w; the server applies w += sum_i p_i s_i D_i.  The
 * error proxy of a device is g_i = (|D_i| / tau_i)^2 / ref_i^2, ref_i the
 * per-step norm of its first round; the substitution error is
 * h_i = g_i ((E - tau_i) / E)^2 (fedenergy.h).  Cost per round:
 * O(sum_i tau_i * step cost + N * nparam + test evaluation).
 */
#include "systems/fedenergy/fe_fed.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

const char *const fe_method_names[FE_M_COUNT + 1] = {"fedavg", "fixed", "fixed_scaled",
                                                      "random", "online", "online_pd", NULL};

struct fe_run {
    const fe_problem *pb;
    enum fe_method m;
    double *w;              /* global parameters */
    double *wl;             /* a device's local parameters */
    double *agg;            /* sum_i p_i s_i D_i */
    double *prev;           /* previous global update */
    int have_prev;          /* prev is set */
    rng *r_dev;             /* per-device mini-batch streams */
    rng r_choice;           /* random method */
    fe_work *wk;
    fedenergy_ctl ctl;
    fedenergy_pd pd;        /* online_pd only */
    double *p, *e_step;     /* per device */
    double *g_pred, *g_obs, *ref;
    int *iters;
    unsigned char *in;      /* takes part in this round */
    double *pr;             /* this round's FedAvg weights (0 if not taking part) */
    size_t *perm;           /* scratch for drawing participants */
    int round;
    double *g_hist;         /* controlled rounds x n_dev */
    size_t n_hist, cap_hist;
    double ctl_compute_j;
};

fe_run *fe_run_create(const fe_problem *pb, enum fe_method m)
{
    fe_run *r = xcalloc(1, sizeof *r);
    size_t P = pb->arch.nparam, N = pb->n_dev;
    r->pb = pb;
    r->m = m;
    r->w = xmalloc(P * sizeof *r->w);
    memcpy(r->w, pb->w0, P * sizeof *r->w);
    r->wl = xmalloc(P * sizeof *r->wl);
    r->agg = xmalloc(P * sizeof *r->agg);
    r->prev = xcalloc(P, sizeof *r->prev);
    r->r_dev = xmalloc(N * sizeof *r->r_dev);
    for (size_t i = 0; i < N; i++)
        rng_init(&r->r_dev[i], pb->seed, "fedenergy.batch", i);
    rng_init(&r->r_choice, pb->seed, "fedenergy.random_iters", 0);
    size_t maxn = 1;
    for (size_t i = 0; i < N; i++)
        maxn = pb->dev[i].n > maxn ? pb->dev[i].n : maxn;
    size_t wb = pb->batch < maxn ? pb->batch : maxn;
    r->wk = fe_work_create(&pb->arch, wb > 256 ? wb : 256);
    fedenergy_init(&r->ctl, &pb->ctl);
    if (m == FE_M_ONLINE_PD) {
        rng rr;
        rng_init(&rr, pb->seed, "fedenergy.rounding", 0);
        fedenergy_pd_init(&r->pd, &pb->ctl, N, pb->pd_eta_primal, pb->pd_eta_dual, &rr);
    }
    r->p = xmalloc(N * sizeof *r->p);
    r->e_step = xmalloc(N * sizeof *r->e_step);
    r->g_pred = xmalloc(N * sizeof *r->g_pred);
    r->g_obs = xmalloc(N * sizeof *r->g_obs);
    r->ref = xcalloc(N, sizeof *r->ref);
    r->iters = xmalloc(N * sizeof *r->iters);
    r->in = xmalloc(N * sizeof *r->in);
    r->pr = xmalloc(N * sizeof *r->pr);
    r->perm = xmalloc(N * sizeof *r->perm);
    for (size_t i = 0; i < N; i++) {
        r->p[i] = pb->dev[i].p;
        r->e_step[i] = pb->dev[i].step_energy_j;
        r->g_pred[i] = 1;
    }
    return r;
}

void fe_run_destroy(fe_run *r)
{
    if (!r)
        return;
    free(r->w);
    free(r->wl);
    free(r->agg);
    free(r->prev);
    free(r->r_dev);
    fe_work_destroy(r->wk);
    free(r->p);
    free(r->e_step);
    free(r->g_pred);
    free(r->g_obs);
    free(r->ref);
    free(r->iters);
    free(r->in);
    free(r->pr);
    free(r->perm);
    free(r->g_hist);
    if (r->m == FE_M_ONLINE_PD)
        fedenergy_pd_fini(&r->pd);
    free(r);
}

/* Draws this round's participants and their renormalised weights. */
static void select_devices(fe_run *r)
{
    const fe_problem *pb = r->pb;
    size_t N = pb->n_dev;
    if (!(pb->participation < 1)) {
        for (size_t i = 0; i < N; i++) {
            r->in[i] = 1;
            r->pr[i] = r->p[i];
        }
        return;
    }
    size_t k = (size_t)llround(pb->participation * (double)N);
    if (k < 1)
        k = 1;
    rng rp;
    rng_init(&rp, pb->seed, "fedenergy.participation", (uint64_t)r->round);
    for (size_t i = 0; i < N; i++) {
        r->perm[i] = i;
        r->in[i] = 0;
    }
    rng_shuffle(&rp, r->perm, N, sizeof *r->perm);
    double sum = 0;
    for (size_t j = 0; j < k; j++) {
        r->in[r->perm[j]] = 1;
        sum += r->p[r->perm[j]];
    }
    for (size_t i = 0; i < N; i++)
        r->pr[i] = r->in[i] && sum > 0 ? r->p[i] / sum : 0;
}

static void decide(fe_run *r)
{
    const fe_problem *pb = r->pb;
    size_t N = pb->n_dev;
    int E = pb->iters_max;
    for (size_t i = 0; i < N; i++) {
        switch (r->m) {
        case FE_M_FEDAVG:
            r->iters[i] = E;
            break;
        case FE_M_FIXED:
        case FE_M_FIXED_SCALED:
            r->iters[i] = pb->reduced_iters;
            break;
        case FE_M_RANDOM:
            r->iters[i] = 1 + (int)rng_below(&r->r_choice, (uint64_t)E);
            break;
        default:
            r->iters[i] = E;
            break;
        }
    }
    if (r->m == FE_M_ONLINE && r->round >= pb->warmup_rounds)
        fedenergy_decide(&r->ctl, N, r->e_step, r->pr, r->g_pred, r->iters);
    if (r->m == FE_M_ONLINE_PD && r->round >= pb->warmup_rounds)
        fedenergy_pd_decide(&r->pd, r->iters);
    if (r->m == FE_M_ONLINE || r->m == FE_M_ONLINE_PD)
        for (size_t i = 0; i < N; i++)
            if (r->ref[i] == 0)
                r->iters[i] = E;    /* first participation: the error reference */
}

static double scale_of(const fe_run *r, int tau, double cosine)
{
    int E = r->pb->iters_max;
    switch (r->m) {
    case FE_M_FIXED_SCALED:
        return (double)E / tau;
    case FE_M_RANDOM:
    case FE_M_ONLINE:
    case FE_M_ONLINE_PD:
        return fedenergy_scale(&r->pb->ctl, tau, cosine);
    default:
        return 1;
    }
}

void fe_run_round(fe_run *r, fe_round_stats *st)
{
    const fe_problem *pb = r->pb;
    size_t N = pb->n_dev, P = pb->arch.nparam;
    int E = pb->iters_max;
    select_devices(r);
    decide(r);
    size_t k = 0;
    for (size_t i = 0; i < N; i++)
        k += r->in[i];
    memset(st, 0, sizeof *st);
    memset(r->agg, 0, P * sizeof *r->agg);
    double prev_norm = r->have_prev ? cblas_dnrm2((int)P, r->prev, 1) : 0;
    for (size_t i = 0; i < N; i++) {
        if (!r->in[i])
            continue;
        const fe_device *d = &pb->dev[i];
        int tau = r->iters[i];
        assert(tau >= 1 && tau <= E);
        memcpy(r->wl, r->w, P * sizeof *r->wl);
        fe_model_sgd(&pb->arch, r->wl, pb->train->x, pb->train->y, d->idx, d->n, tau, pb->batch,
                     pb->lr, pb->l2, &r->r_dev[i], r->wk);
        cblas_daxpy((int)P, -1.0, r->w, 1, r->wl, 1);     /* wl = D_i */
        double nrm = cblas_dnrm2((int)P, r->wl, 1);
        double cosine = NAN;
        if (r->have_prev && prev_norm > 0 && nrm > 0)
            cosine = cblas_ddot((int)P, r->wl, 1, r->prev, 1) / (nrm * prev_norm);
        double s = scale_of(r, tau, cosine);
        cblas_daxpy((int)P, r->pr[i] * s, r->wl, 1, r->agg, 1);
        double per_step = nrm / tau;
        if (r->ref[i] == 0)
            r->ref[i] = per_step > 0 ? per_step : 1;
        double q = per_step / r->ref[i];
        r->g_obs[i] = q * q;
        st->error += r->pr[i] * fedenergy_error(E, tau, r->g_obs[i]);
        st->compute_j += tau * d->step_energy_j;
        st->comm_j += d->upload_energy_j;
        double t = tau * d->step_time_s + d->upload_time_s;
        st->time_s = t > st->time_s ? t : st->time_s;
        st->mean_iters += (double)tau / (double)k;
        st->mean_scale += s / (double)k;
    }
    cblas_daxpy((int)P, 1.0, r->agg, 1, r->w, 1);
    memcpy(r->prev, r->agg, P * sizeof *r->prev);
    r->have_prev = 1;
    if (r->m == FE_M_ONLINE || r->m == FE_M_ONLINE_PD) {
        if (r->round >= pb->warmup_rounds) {
            if (r->m == FE_M_ONLINE)
                fedenergy_observe(&r->ctl, N, r->pr, r->iters, r->g_obs);
            else
                fedenergy_pd_observe(&r->pd, r->e_step, r->pr, r->iters, r->g_obs);
            if (r->n_hist == r->cap_hist) {
                r->cap_hist = r->cap_hist ? 2 * r->cap_hist : 64;
                r->g_hist = xrealloc(r->g_hist, r->cap_hist * N * sizeof *r->g_hist);
            }
            memcpy(r->g_hist + r->n_hist * N, r->g_obs, N * sizeof *r->g_obs);
            r->n_hist++;
            r->ctl_compute_j += st->compute_j;
        }
        memcpy(r->g_pred, r->g_obs, N * sizeof *r->g_pred);
        st->queue = r->m == FE_M_ONLINE ? r->ctl.queue : r->pd.mu;
    }
    fe_model_eval(&pb->arch, r->w, pb->test->x, pb->test->y, pb->test->n, r->wk, &st->accuracy,
                  &st->loss);
    r->round++;
}

int fe_run_rounds(const fe_run *r) { return r->round; }
const double *fe_run_params(const fe_run *r) { return r->w; }
const fedenergy_ctl *fe_run_ctl(const fe_run *r) { return &r->ctl; }
const fedenergy_pd *fe_run_pd(const fe_run *r) { return &r->pd; }
double fe_run_controlled_compute_j(const fe_run *r) { return r->ctl_compute_j; }

const double *fe_run_g_history(const fe_run *r, size_t *n_hist)
{
    *n_hist = r->n_hist;
    return r->g_hist;
}
