/*
 * fe_fed.c - one method's federated rounds (fe_fed.h).
 *
 * Round t: every participant downloads the global w, runs its first SGD
 * step, then tau_i - 1 more, and produces D_i = w_i - w; the server applies
 * w += sum_i p_i s_i D_i over the updates received.  The error coefficient
 * of a participant is g_i,t = N p_i,t (FedNova's noise term, fedenergy.h),
 * its error h_i = g_i (E / tau_i - 1).  Cost per round: O(sum_i tau_i * step cost + N * nparam +
 * test evaluation).
 */
#include "systems/fedenergy/fe_fed.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/sim.h"

const char *const fe_method_names[FE_M_COUNT + 1] = {
    "fedavg", "fixed", "fixed_scaled", "random", "fedprox", "fednova", "ccfedavg", "gel",
    "online", "online_pd", NULL};

struct fe_run {
    const fe_problem *pb;
    enum fe_method m;
    double *w;              /* global parameters */
    double *wl;             /* a device's local parameters */
    double *tmp;            /* scratch (nparam) */
    double *agg;            /* sum_i p_i s_i D_i */
    double *prev;           /* previous global update */
    int have_prev;          /* prev is set */
    rng *r_dev;             /* per-device mini-batch streams */
    rng r_choice;           /* random method */
    fe_work *wk;
    fedenergy_ctl ctl;
    fedenergy_pd pd;        /* online_pd only */
    double *p, *e_step;     /* per device */
    double mean_e;          /* mean step energy */
    double *g_obs;
    int *iters;
    unsigned char *in;      /* takes part in this round */
    double *slow;           /* this round's compute-time factor */
    unsigned char *fail;    /* this round: fails before uploading */
    double *t_dev;          /* this round's busy time; < 0 if dropped */
    double *pr;             /* this round's FedAvg weights (0 if not taking part) */
    size_t *perm;           /* scratch for drawing participants */
    int round;
    double *cost_hist;      /* controlled rounds x n_dev: J per step, 0 if not trained */
    double *coef_hist;      /* controlled rounds x n_dev: p_i,t g_i,t */
    double *cost_now;       /* this round's cost_hist row */
    size_t n_hist, cap_hist;
    double ctl_compute_j, ctl_error;
    /* ccfedavg */
    double *last;           /* n_dev x nparam: each device's last trained update */
    unsigned char *have_last;
    int *cc_k;              /* trains once every cc_k rounds it takes part in */
    int *cc_skip;           /* rounds estimated since its last training */
    /* gel */
    double *step;           /* scratch: the last real step */
};

static int controlled(const fe_run *r)
{
    return (r->m == FE_M_ONLINE || r->m == FE_M_ONLINE_PD) && r->round >= r->pb->warmup_rounds;
}

fe_run *fe_run_create(const fe_problem *pb, enum fe_method m)
{
    fe_run *r = xcalloc(1, sizeof *r);
    size_t P = pb->arch.nparam, N = pb->n_dev;
    r->pb = pb;
    r->m = m;
    r->w = xmalloc(P * sizeof *r->w);
    memcpy(r->w, pb->w0, P * sizeof *r->w);
    r->wl = xmalloc(P * sizeof *r->wl);
    r->tmp = xmalloc(P * sizeof *r->tmp);
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
    fe_work_set_poll(r->wk, pb->poll);
    fedenergy_init(&r->ctl, &pb->ctl);
    if (m == FE_M_ONLINE_PD) {
        rng rr;
        rng_init(&rr, pb->seed, "fedenergy.rounding", 0);
        fedenergy_pd_init(&r->pd, &pb->ctl, N, pb->pd_eta_primal, pb->pd_eta_dual, &rr);
    }
    r->p = xmalloc(N * sizeof *r->p);
    r->e_step = xmalloc(N * sizeof *r->e_step);
    r->g_obs = xmalloc(N * sizeof *r->g_obs);
    r->cost_now = xcalloc(N, sizeof *r->cost_now);
    r->iters = xmalloc(N * sizeof *r->iters);
    r->in = xmalloc(N * sizeof *r->in);
    r->slow = xmalloc(N * sizeof *r->slow);
    r->fail = xmalloc(N * sizeof *r->fail);
    r->t_dev = xmalloc(N * sizeof *r->t_dev);
    r->pr = xmalloc(N * sizeof *r->pr);
    r->perm = xmalloc(N * sizeof *r->perm);
    for (size_t i = 0; i < N; i++) {
        r->p[i] = pb->dev[i].p;
        r->e_step[i] = pb->dev[i].step_energy_j;
        r->mean_e += pb->dev[i].step_energy_j / (double)N;
    }
    if (m == FE_M_CCFEDAVG) {
        /* CC-FedAvg's computation budget, derived from the device's step
         * energy: full training costs E e_i, the budget per round is
         * cc_budget * E * mean e, so device i can train one round in
         * k_i = ceil(e_i / (cc_budget * mean e)) and estimates in the rest
         * (evenly spaced: the schedule is our choice; the paper leaves it to
         * each participant's budget). */
        r->last = xcalloc(N * P, sizeof *r->last);
        r->have_last = xcalloc(N, sizeof *r->have_last);
        r->cc_k = xmalloc(N * sizeof *r->cc_k);
        r->cc_skip = xcalloc(N, sizeof *r->cc_skip);
        double b = pb->cc_budget > 0 ? pb->cc_budget : 1;
        for (size_t i = 0; i < N; i++) {
            double k = r->mean_e > 0 ? ceil(r->e_step[i] / (b * r->mean_e)) : 1;
            r->cc_k[i] = k < 1 ? 1 : k > 1e6 ? 1000000 : (int)k;
        }
    }
    if (m == FE_M_GEL)
        r->step = xmalloc(P * sizeof *r->step);
    return r;
}

void fe_run_destroy(fe_run *r)
{
    if (!r)
        return;
    free(r->w);
    free(r->wl);
    free(r->tmp);
    free(r->agg);
    free(r->prev);
    free(r->r_dev);
    fe_work_destroy(r->wk);
    free(r->p);
    free(r->e_step);
    free(r->g_obs);
    free(r->cost_now);
    free(r->iters);
    free(r->in);
    free(r->slow);
    free(r->fail);
    free(r->t_dev);
    free(r->pr);
    free(r->perm);
    free(r->cost_hist);
    free(r->coef_hist);
    free(r->last);
    free(r->have_last);
    free(r->cc_k);
    free(r->cc_skip);
    free(r->step);
    if (r->m == FE_M_ONLINE_PD)
        fedenergy_pd_fini(&r->pd);
    free(r);
}

/* Draws this round's available devices, participants, their renormalised
 * weights and stragglers (the same in every method). */
static void select_devices(fe_run *r)
{
    const fe_problem *pb = r->pb;
    size_t N = pb->n_dev, navail = 0;
    rng ra, rs, rf;
    rng_init(&ra, pb->seed, "fedenergy.availability", (uint64_t)r->round);
    rng_init(&rs, pb->seed, "fedenergy.straggler", (uint64_t)r->round);
    rng_init(&rf, pb->seed, "fedenergy.dropout", (uint64_t)r->round);
    const unsigned char *tr = pb->avail_trace && (size_t)r->round < pb->trace_rounds
                                  ? pb->avail_trace + (size_t)r->round * N
                                  : NULL;
    for (size_t i = 0; i < N; i++) {
        int ok = pb->unavailability > 0 ? rng_u01(&ra) >= pb->unavailability : 1;
        if (tr && !tr[i])
            ok = 0;
        r->in[i] = (unsigned char)ok;
        navail += (size_t)ok;
        r->slow[i] = pb->straggler_prob > 0 && rng_u01(&rs) < pb->straggler_prob
                         ? pb->straggler_slowdown : 1;
        r->fail[i] = pb->dropout_prob > 0 && rng_u01(&rf) < pb->dropout_prob;
    }
    if (pb->participation < 1 && navail > 0) {
        size_t k = (size_t)llround(pb->participation * (double)navail), m = 0;
        if (k < 1)
            k = 1;
        rng rp;
        rng_init(&rp, pb->seed, "fedenergy.participation", (uint64_t)r->round);
        for (size_t i = 0; i < N; i++)
            if (r->in[i])
                r->perm[m++] = i;
        rng_shuffle(&rp, r->perm, m, sizeof *r->perm);
        for (size_t j = k; j < m; j++)
            r->in[r->perm[j]] = 0;
    }
    double sum = 0;
    for (size_t i = 0; i < N; i++)
        sum += r->in[i] ? r->p[i] : 0;
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
        case FE_M_FIXED:
        case FE_M_FIXED_SCALED:
            r->iters[i] = pb->reduced_iters;
            break;
        case FE_M_RANDOM:
            r->iters[i] = 1 + (int)rng_below(&r->r_choice, (uint64_t)E);
            break;
        case FE_M_FEDNOVA:
        case FE_M_GEL: {
            double t = pb->reduced_iters * (r->e_step[i] > 0 ? r->mean_e / r->e_step[i] : 1);
            r->iters[i] = t < 1 ? 1 : t > E ? E : (int)llround(t);
            break;
        }
        default:
            r->iters[i] = E;
            break;
        }
    }
    if (r->m == FE_M_ONLINE_PD && controlled(r))
        fedenergy_pd_decide(&r->pd, r->iters);
}

static double scale_of(const fe_run *r, int tau, double cosine, double tau_eff)
{
    int E = r->pb->iters_max;
    switch (r->m) {
    case FE_M_FIXED_SCALED:
        return (double)E / tau;
    case FE_M_FEDNOVA:
        return tau_eff / tau;
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
    memset(st, 0, sizeof *st);
    memset(r->agg, 0, P * sizeof *r->agg);
    double tau_eff = 0, recv = 0;
    for (size_t i = 0; i < N; i++)
        tau_eff += r->pr[i] * r->iters[i];
    double prev_norm = r->have_prev ? cblas_dnrm2((int)P, r->prev, 1) : 0;
    int capped = r->m == FE_M_FEDPROX || r->m == FE_M_GEL || r->m == FE_M_ONLINE ||
                 r->m == FE_M_ONLINE_PD;
    for (size_t i = 0; i < N; i++) {
        r->t_dev[i] = -1;
        r->g_obs[i] = 0;
        r->cost_now[i] = 0;
        if (!r->in[i])
            continue;
        if (sim_poll(pb->poll, 1))
            return;             /* cut short: the run is discarded */
        const fe_device *d = &pb->dev[i];
        double step_s = d->step_time_s * r->slow[i];
        st->participants++;
        st->comm_j += d->download_energy_j;
        if (r->m == FE_M_CCFEDAVG && r->have_last[i] && r->cc_skip[i] < r->cc_k[i] - 1) {
            /* CC-FedAvg model estimation: no local iteration, the last
             * trained update D_i is sent again (w_i = w + D_i) */
            r->cc_skip[i]++;
            double busy = d->download_time_s + d->upload_time_s;
            if (r->fail[i] || (pb->deadline_s > 0 && busy > pb->deadline_s)) {
                st->dropped++;
                continue;
            }
            r->t_dev[i] = busy;
            cblas_daxpy((int)P, r->pr[i], r->last + i * P, 1, r->agg, 1);
            recv += r->pr[i];
            st->comm_j += d->upload_energy_j;
            st->time_s = busy > st->time_s ? busy : st->time_s;
            st->mean_scale += 1;
            st->estimated++;
            continue;
        }
        /* iterations that fit before the deadline, upload included */
        int fit = E;
        if (pb->deadline_s > 0) {
            double f = floor((pb->deadline_s - d->download_time_s - d->upload_time_s) / step_s);
            fit = f < 0 ? 0 : f < E ? (int)f : E;
        }
        if (fit == 0 && capped) {
            /* cannot finish one step in time: sends nothing */
            st->dropped++;
            continue;
        }
        memcpy(r->wl, r->w, P * sizeof *r->wl);
        fe_model_sgd_prox(&pb->arch, r->wl, pb->train->x, pb->train->y, d->idx, d->n, 1, pb->batch,
                          pb->lr, pb->l2, r->m == FE_M_FEDPROX ? pb->prox_mu : 0, r->w,
                          &r->r_dev[i], r->wk);
        memcpy(r->tmp, r->wl, P * sizeof *r->tmp);
        cblas_daxpy((int)P, -1.0, r->w, 1, r->tmp, 1);
        r->g_obs[i] = (double)N * r->pr[i];
        r->cost_now[i] = d->step_energy_j;
        if (r->m == FE_M_ONLINE && controlled(r))
            r->iters[i] = pb->plan_iters > 0
                              ? pb->plan_iters
                              : fedenergy_decide_dev(&r->ctl, r->mean_e > 0 ? r->e_step[i] / r->mean_e
                                                                            : 1,
                                                     (double)N * r->pr[i], r->g_obs[i]);
        if (capped && r->iters[i] > fit)
            r->iters[i] = fit;
        int tau = r->iters[i];
        assert(tau >= 1 && tau <= E);
        if (r->m == FE_M_GEL) {
            /* GeL: tau real steps, the last one kept (the first is in tmp),
             * then E - tau guessed steps w -= lr * (last gradient), i.e. the
             * last real step repeated: no gradient, no compute energy */
            if (tau > 2)
                fe_model_sgd_prox(&pb->arch, r->wl, pb->train->x, pb->train->y, d->idx, d->n,
                                  tau - 2, pb->batch, pb->lr, pb->l2, 0, r->w, &r->r_dev[i],
                                  r->wk);
            if (tau > 1) {
                memcpy(r->step, r->wl, P * sizeof *r->step);
                fe_model_sgd_prox(&pb->arch, r->wl, pb->train->x, pb->train->y, d->idx, d->n, 1,
                                  pb->batch, pb->lr, pb->l2, 0, r->w, &r->r_dev[i], r->wk);
                cblas_dscal((int)P, -1.0, r->step, 1);
                cblas_daxpy((int)P, 1.0, r->wl, 1, r->step, 1);
            } else {
                memcpy(r->step, r->tmp, P * sizeof *r->step);
            }
            cblas_daxpy((int)P, (double)(E - tau), r->step, 1, r->wl, 1);
            st->guessed += E - tau;
        } else if (tau > 1) {
            fe_model_sgd_prox(&pb->arch, r->wl, pb->train->x, pb->train->y, d->idx, d->n, tau - 1,
                              pb->batch, pb->lr, pb->l2, r->m == FE_M_FEDPROX ? pb->prox_mu : 0,
                              r->w, &r->r_dev[i], r->wk);
        }
        st->error += r->pr[i] * fedenergy_error(E, tau, r->g_obs[i]);
        double busy = d->download_time_s + tau * step_s + d->upload_time_s;
        if (r->fail[i]) {
            /* dropped out after training: computed, never uploads */
            st->compute_j += tau * d->step_energy_j;
            st->dropped++;
            continue;
        }
        if (pb->deadline_s > 0 && busy > pb->deadline_s) {
            /* straggler: computes until the deadline, never uploads */
            double done = floor((pb->deadline_s - d->download_time_s) / step_s);
            done = done < 0 ? 0 : done > tau ? tau : done;
            st->compute_j += done * d->step_energy_j;
            st->dropped++;
            continue;
        }
        r->t_dev[i] = busy;
        cblas_daxpy((int)P, -1.0, r->w, 1, r->wl, 1);     /* wl = D_i */
        if (r->m == FE_M_CCFEDAVG) {
            memcpy(r->last + i * P, r->wl, P * sizeof *r->last);
            r->have_last[i] = 1;
            r->cc_skip[i] = 0;
        }
        double nrm = cblas_dnrm2((int)P, r->wl, 1);
        double cosine = NAN;
        if (r->have_prev && prev_norm > 0 && nrm > 0)
            cosine = cblas_ddot((int)P, r->wl, 1, r->prev, 1) / (nrm * prev_norm);
        double s = scale_of(r, tau, cosine, tau_eff);
        cblas_daxpy((int)P, r->pr[i] * s, r->wl, 1, r->agg, 1);
        recv += r->pr[i];
        st->compute_j += tau * d->step_energy_j;
        st->comm_j += d->upload_energy_j;
        st->time_s = busy > st->time_s ? busy : st->time_s;
        st->mean_iters += tau;
        st->mean_scale += s;
    }
    int got = st->participants - st->dropped;
    if (got > 0) {
        st->mean_iters /= got;
        st->mean_scale /= got;
    }
    if (st->dropped > 0) {
        if (pb->deadline_s > 0)
            st->time_s = pb->deadline_s;    /* the server waited for the lost ones */
        if (recv > 0)
            cblas_dscal((int)P, 1 / recv, r->agg, 1);   /* renormalise over the received */
    }
    for (size_t i = 0; i < N; i++)
        if (r->t_dev[i] >= 0)
            st->idle_j += pb->dev[i].idle_power_w * (st->time_s - r->t_dev[i]);
    cblas_daxpy((int)P, 1.0, r->agg, 1, r->w, 1);
    memcpy(r->prev, r->agg, P * sizeof *r->prev);
    r->have_prev = got > 0;
    if (controlled(r)) {
        if (r->m == FE_M_ONLINE)
            fedenergy_observe(&r->ctl, N, r->pr, r->iters, r->g_obs);
        else
            fedenergy_pd_observe(&r->pd, r->e_step, r->pr, r->iters, r->g_obs);
        if (r->n_hist == r->cap_hist) {
            r->cap_hist = r->cap_hist ? 2 * r->cap_hist : 64;
            r->cost_hist = xrealloc(r->cost_hist, r->cap_hist * N * sizeof *r->cost_hist);
            r->coef_hist = xrealloc(r->coef_hist, r->cap_hist * N * sizeof *r->coef_hist);
        }
        memcpy(r->cost_hist + r->n_hist * N, r->cost_now, N * sizeof *r->cost_now);
        for (size_t i = 0; i < N; i++)
            r->coef_hist[r->n_hist * N + i] = r->pr[i] * r->g_obs[i];
        r->n_hist++;
        r->ctl_compute_j += st->compute_j;
        r->ctl_error += st->error;
    }
    if (r->m == FE_M_ONLINE || r->m == FE_M_ONLINE_PD)
        st->queue = r->m == FE_M_ONLINE ? r->ctl.queue : r->pd.mu;
    fe_model_eval(&pb->arch, r->w, pb->test->x, pb->test->y, pb->test->n, r->wk, &st->accuracy,
                  &st->loss);
    r->round++;
}

const double *fe_run_params(const fe_run *r) { return r->w; }
const fedenergy_ctl *fe_run_ctl(const fe_run *r) { return &r->ctl; }
const fedenergy_pd *fe_run_pd(const fe_run *r) { return &r->pd; }
double fe_run_controlled_compute_j(const fe_run *r) { return r->ctl_compute_j; }
double fe_run_controlled_error(const fe_run *r) { return r->ctl_error; }

size_t fe_run_history(const fe_run *r, const double **cost, const double **coef)
{
    if (cost)
        *cost = r->cost_hist;
    if (coef)
        *coef = r->coef_hist;
    return r->n_hist;
}
