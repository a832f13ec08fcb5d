/*
 * skel_run.c - one run of the containerized cluster under one method.
 *
 * Per simulated second: tasks end and are submitted (churn: log-normal
 * lifetime), containers become ready (log-normal creation delay) and
 * register with their peers' agents; the world's second runs (failures
 * end and start: skel_world.c, behind skel_obs.h); tasks whose containers
 * have all run `infer_after_s` get their skeleton inferred from their
 * throughput series (period included); every probing endpoint probes its
 * next active target.  This file decides from observations only.
 *
 * Detection: `timeouts` consecutive unanswered probes; window loss >=
 * threshold; a suspicious RTT is retried twice at once and, if all three
 * stay high, the window's summary is tested by the short-term LOF against
 * the look-back, and an outlier is an alarm when the pair's next probe is
 * one too (`confirm`); the long-term Z-test runs per pair every
 * `longterm_s`.  An alarm is localized by the method (skel_locate.c) and
 * recorded; the scorer (skel_score.c) matches it to the truth afterwards.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "systems/skeleton/skel_run_int.h"

const char *const skel_method_names[] = {"skeleton", "skeleton_noact", "basic", "fullmesh",
                                         "rpingmesh", "vote007", "rpingmesh_pub", NULL};


/* ---- lists ----------------------------------------------------------------- */

static void set_list(skel_run *r, int e, const uint32_t *tg, size_t n, bool incremental)
{
    ep_rt *x = &r->ep[e];
    tgt *old = x->ts;
    uint32_t *oldt = x->ag.target;
    size_t oldn = x->ag.n;
    x->ag.target = malloc((n ? n : 1) * sizeof *x->ag.target);
    free(x->ag.active);
    x->ag.active = malloc(n ? n : 1);
    skel_agent_load(&x->ag, tg, n, incremental);
    x->ts = calloc(n ? n : 1, sizeof *x->ts);
    for (size_t i = 0; i < n; i++) {
        tgt *t = &x->ts[i];
        long j = -1;
        for (size_t k = 0; k < oldn; k++)
            if (oldt[k] == tg[i])
                j = (long)k;
        if (j >= 0) {
            *t = old[j];
            old[j].ref = NULL;
        } else {
            t->nel = (uint8_t)skel_path(r->f, e, (int)tg[i], -1, t->el, t->pref);
            t->win_id = -1;
            t->lt_block = -1;
        }
    }
    for (size_t k = 0; k < oldn; k++)
        free(old[k].ref);
    free(old);
    free(oldt);
    x->retry = -1;
}

static void free_list(ep_rt *x)
{
    for (size_t k = 0; k < x->ag.n; k++)
        free(x->ts[k].ref);
    free(x->ts);
    free(x->ag.target);
    free(x->ag.active);
    x->ts = NULL;
    x->ag = (skel_agent){0};
    x->retry = -1;
}

int skel_run_ep_of(const skel_run *r, const task_rt *k, int l)
{
    int g = r->f->gpus;
    return k->server[l / g] * g + l % g;
}
#define ep_of skel_run_ep_of

/* The task's endpoints (global ids) as skel_ep for the list builders. */
static skel_ep *task_eps(const skel_run *r, const task_rt *k, int *n)
{
    int g = r->f->gpus, m = k->nhosts * g;
    skel_ep *v = malloc((size_t)m * sizeof *v);
    for (int l = 0; l < m; l++) {
        int e = ep_of(r, k, l);
        v[l] = (skel_ep){.host = e / g, .rail = e % g, .tor = (e / g / r->f->per_tor) * g + e % g};
    }
    *n = m;
    return v;
}

static void load_task_lists(skel_run *r, int ti)
{
    task_rt *k = &r->task[ti];
    int n;
    skel_ep *v = task_eps(r, k, &n);
    uint32_t *buf = malloc((size_t)n * sizeof *buf);
    enum skel_list how = r->method == SKEL_M_FULL ? SKEL_LIST_FULL : SKEL_LIST_BASIC;
    for (int l = 0; l < n; l++) {
        size_t m = skel_targets(v, (size_t)n, (size_t)l, how, buf);
        for (size_t i = 0; i < m; i++)
            buf[i] = (uint32_t)ep_of(r, k, (int)buf[i]);
        set_list(r, ep_of(r, k, l), buf, m, r->method != SKEL_M_NOACT);
    }
    free(buf);
    free(v);
}

/* ---- tasks ----------------------------------------------------------------- */

static int free_servers(const skel_run *r)
{
    int c = 0;
    for (int s = 0; s < r->f->servers; s++)
        c += r->server_task[s] < 0;
    return c;
}

static void submit(skel_run *r, int gpus, skel_par par, int64_t t, int64_t life_s)
{
    const skel_fabric *f = r->f;
    if (r->ntask == r->captask) {
        r->captask = r->captask ? 2 * r->captask : 16;
        r->task = realloc(r->task, (size_t)r->captask * sizeof *r->task);
    }
    int ti = r->ntask++;
    task_rt *k = &r->task[ti];
    memset(k, 0, sizeof *k);
    k->par = par;
    k->gpus = gpus;
    k->nhosts = gpus / f->gpus;
    k->server = malloc((size_t)k->nhosts * sizeof *k->server);
    k->ready_s = malloc((size_t)k->nhosts * sizeof *k->ready_s);
    for (int s = 0, h = 0; s < f->servers && h < k->nhosts; s++)
        if (r->server_task[s] < 0) {
            k->server[h++] = s;
            r->server_task[s] = ti;
        }
    k->submit_s = t;
    k->end_s = life_s > 0 ? t + life_s : INT64_MAX;
    k->alive = true;
    k->seed = rng_next(&r->rc);
    k->infer_s = -1;
    skel_true_skeleton(&par, f->gpus, &k->toff, &k->tidx);
    const skel_params *p = r->p;
    for (int h = 0; h < k->nhosts; h++) {
        double d = rng_lognormal(&r->rc, log(p->create_median_s), p->create_sigma);
        k->ready_s[h] = t + (int64_t)ceil(d);
        for (int g = 0; g < f->gpus; g++) {
            ep_rt *x = &r->ep[k->server[h] * f->gpus + g];
            x->task = ti;
            x->ready = false;
        }
    }
    if (overlay_method(r->method))
        load_task_lists(r, ti);
}

static void fill(skel_run *r, int64_t t)
{
    const skel_world *w = r->w;
    for (;;) {
        int fs = free_servers(r) * r->f->gpus, fit = 0;
        for (int i = 0; i < w->ntask_gpus; i++)
            fit += w->task_gpus[i] <= fs;
        if (!fit)
            return;
        int pick = (int)rng_below(&r->rc, (uint64_t)fit), gpus = 0;
        for (int i = 0; i < w->ntask_gpus; i++)
            if (w->task_gpus[i] <= fs && pick-- == 0)
                gpus = w->task_gpus[i];
        double life = rng_lognormal(&r->rc, log(r->p->life_median_s), r->p->life_sigma);
        submit(r, gpus, skel_par_default(gpus, r->f->gpus), t, (int64_t)ceil(life));
    }
}


static void end_task(skel_run *r, int ti, int64_t t)
{
    task_rt *k = &r->task[ti];
    const skel_fabric *f = r->f;
    k->alive = false;
    for (int h = 0; h < k->nhosts; h++) {
        r->server_task[k->server[h]] = -1;
        for (int g = 0; g < f->gpus; g++) {
            int e = k->server[h] * f->gpus + g;
            ep_rt *x = &r->ep[e];
            if (overlay_method(r->method))
                free_list(x);
            x->task = -1;
            x->ready = false;
            r->ep_up[e] = false;
            skel_wld_container_gone(r->wld, e, t);  /* its overlay goes with it */
        }
    }
    skel_wld_job_stop(r->wld, ti);
}

static void container_ready(skel_run *r, task_rt *k, int h, int64_t t)
{
    const skel_fabric *f = r->f;
    k->nready++;
    for (int g = 0; g < f->gpus; g++) {
        int e = k->server[h] * f->gpus + g;
        r->ep[e].ready = true;
        r->ep[e].ready_s = t;
        r->ep_up[e] = true;
    }
    if (k->nready == k->nhosts) {   /* the job starts training */
        int n = k->nhosts * f->gpus;
        int *eps = malloc((size_t)n * sizeof *eps);
        for (int l = 0; l < n; l++)
            eps[l] = ep_of(r, k, l);
        skel_wld_job_start(r->wld, (int)(k - r->task), &k->par, k->seed, eps, n);
        free(eps);
    }
    if (!overlay_method(r->method))
        return;
    /* registration in the data plane: the new endpoints announce
     * themselves to the peers' agents, and learn who is up already */
    int n = k->nhosts * f->gpus;
    for (int l = 0; l < n; l++) {
        int e = ep_of(r, k, l);
        ep_rt *x = &r->ep[e];
        if (k->server[l / f->gpus] == k->server[h]) {
            for (size_t i = 0; i < x->ag.n; i++)
                if (r->ep[x->ag.target[i]].ready)
                    skel_agent_register(&x->ag, x->ag.target[i]);
        } else {
            for (int g = 0; g < f->gpus; g++)
                skel_agent_register(&x->ag, (uint32_t)(k->server[h] * f->gpus + g));
        }
    }
}

/* ---- skeleton inference ---------------------------------------------------- */

static void infer(skel_run *r, int ti, int64_t t)
{
    task_rt *k = &r->task[ti];
    const skel_params *p = r->p;
    int n;
    skel_ep *v = task_eps(r, k, &n);
    size_t len = (size_t)p->infer_after_s;
    double *series = malloc((size_t)n * len * sizeof *series);
    const skel_traffic *tr = r->w->traffic;
    tr->series(tr->ctx, &k->par, r->f->gpus, k->seed, t - (int64_t)len, len, series);
    uint32_t *off, *idx;
    int *stage = malloc((size_t)n * sizeof *stage);
    /* the iteration period, from the series themselves */
    double per = skel_period_estimate(series, (size_t)n, len, p->period_min_s, p->period_max_s);
    k->period_s = per;
    skel_clusters c = skel_infer(series, (size_t)n, len, v, per, (size_t)p->stft_win,
                                 (size_t)p->stft_hop, p->size_tol, &off, &idx, stage);
    k->inferred = true;
    k->infer_ok = c.ok && c.dp == k->par.dp;
    k->exact = k->infer_ok && skel_same_skeleton((size_t)n, off, idx, k->toff, k->tidx);
    bool use = c.ok && (r->method == SKEL_M_SKELETON || r->method == SKEL_M_NOACT ||
                        r->method == SKEL_M_VOTE007);
    if (use) {
        uint32_t *buf = malloc((size_t)n * sizeof *buf);
        for (int l = 0; l < n; l++) {
            size_t m = 0;
            for (uint32_t i = off[l]; i < off[l + 1]; i++)
                buf[m++] = (uint32_t)ep_of(r, k, (int)idx[i]);
            int e = ep_of(r, k, l);
            set_list(r, e, buf, m, r->method != SKEL_M_NOACT);
            ep_rt *x = &r->ep[e];
            for (size_t i = 0; i < m; i++)
                if (r->ep[buf[i]].ready)
                    skel_agent_register(&x->ag, buf[i]);
        }
        free(buf);
    }
    free(off);
    free(idx);
    free(stage);
    free(series);
    free(v);
}

/* ---- alarms ------------------------------------------------------------------ */

static void raise_alarm(skel_run *r, int a, int ti, int sym, double tsec)
{
    ep_rt *x = &r->ep[a];
    tgt *t = &x->ts[ti];
    int b = (int)x->ag.target[ti];
    if (r->now < t->holdoff_s)
        return;
    t->holdoff_s = r->now + r->p->holdoff_s;
    verdict vd = localize(r, a, b, t, tsec);
    if (r->nalarm == r->capalarm) {
        r->capalarm = r->capalarm ? 2 * r->capalarm : 256;
        r->alarm = realloc(r->alarm, r->capalarm * sizeof *r->alarm);
    }
    alarm_rt *al = &r->alarm[r->nalarm++];
    *al = (alarm_rt){.t = tsec, .now_s = r->now, .src = a, .dst = b, .sym = sym, .cls = vd.cls,
                     .comp = vd.comp, .loc_s = vd.at_s, .step = (uint8_t)vd.step,
                     .target_ready = r->ep[b].ready, .nel = t->nel, .fault = -1};
    memcpy(al->el, t->el, sizeof al->el);
    /* the path votes for later localizations */
    recent *rc = &r->ring[r->ringpos];
    rc->t = r->now;
    rc->nel = t->nel;
    memcpy(rc->el, t->el, sizeof rc->el);
    r->ringpos = (r->ringpos + 1) % 256;
    if (r->nring < 256)
        r->nring++;
    /* mitigation: the named RNIC, host, rule or container is isolated
     * once the verdict is in (whatever the truth: a wrong one helps not) */
    if (r->p->mitigate && vd.comp >= 0)
        skel_wld_isolate(r->wld, vd.comp, vd.at_s);
}

/* ---- probing ----------------------------------------------------------------- */

static double suspect_thr(const skel_run *r, const tgt *t)
{
    if (t->nref < 3)
        return r->p->suspect_abs_us;
    float med[MAXLB];
    for (int i = 0; i < t->nref; i++)
        med[i] = t->ref[i][1];
    float m = 0;
    for (int i = 0; i < t->nref; i++)
        m += med[i];
    return fmin(r->p->suspect_factor * m / t->nref, r->p->suspect_abs_us);
}

static void close_window(skel_run *r, tgt *t, int32_t wid)
{
    if (t->nwin) {
        double x[NWIN], s[SKEL_NSTAT];
        for (int i = 0; i < t->nwin; i++)
            x[i] = t->win[i];
        skel_summary(x, t->nwin, s);
        if (!t->ref)
            t->ref = calloc((size_t)r->p->lookback, sizeof *t->ref);
        for (int d = 0; d < SKEL_NSTAT; d++)
            t->ref[t->refpos][d] = (float)s[d];
        t->refpos = (uint8_t)((t->refpos + 1) % r->p->lookback);
        if (t->nref < r->p->lookback)
            t->nref++;
    }
    t->nwin = 0;
    t->wsent = t->wlost = 0;
    t->win_id = wid;
}

static void add_sample(tgt *t, double rtt)
{
    if (t->nwin < NWIN)
        t->win[t->nwin++] = (float)rtt;
    else
        t->win[NWIN - 1] = (float)rtt;
}

static void long_term(skel_run *r, int a, int ti, double rtt, double tsec)
{
    tgt *t = &r->ep[a].ts[ti];
    int32_t blk = (int32_t)(r->now / r->p->longterm_s);
    if (t->lt_block != blk) {
        if (t->lt_n >= 10) {
            double mean = t->lt_sum / t->lt_n;
            if (!t->lt_fit) {
                t->lt_mu = (float)mean;
                t->lt_sigma = (float)sqrt(fmax(t->lt_sq / t->lt_n - mean * mean, 0) *
                                          t->lt_n / (t->lt_n - 1));
                t->lt_fit = true;
            } else if (r->p->ztest &&
                       skel_long_term_mean(mean, t->lt_n, t->lt_mu, t->lt_sigma, r->p->z_alpha,
                                           r->p->z_shift)) {
                raise_alarm(r, a, ti, SKEL_SYM_LATENCY, tsec);
            }
        }
        t->lt_block = blk;
        t->lt_n = 0;
        t->lt_sum = t->lt_sq = 0;
    }
    double l = log(rtt);
    t->lt_n++;
    t->lt_sum += l;
    t->lt_sq += l * l;
}

static void trace_probe(skel_run *r, int a, const tgt *t, double tsec, double rtt, double loss,
                        bool ok)
{
    int b = (int)r->ep[a].ag.target[t - r->ep[a].ts];
    if (a != r->w->trace_src || b != r->w->trace_dst)
        return;
    if (r->ntrace == r->captrace) {
        r->captrace = r->captrace ? 2 * r->captrace : 256;
        r->trace = realloc(r->trace, r->captrace * sizeof *r->trace);
    }
    r->trace[r->ntrace++] = (trace_rt){.t = tsec, .rtt_us = rtt, .loss = loss, .ok = ok,
                                       .tor = t->el[1], .agg = t->nel == 7 ? t->el[3] : -1};
}

/* The short-term test of a window of samples that stayed suspicious. */
static bool short_term(const skel_run *r, const tgt *t, double lo)
{
    const skel_params *p = r->p;
    if (p->lof_mode == SKEL_LOF_ALWAYS)
        return true;
    if (p->lof_mode == SKEL_LOF_NEVER)
        return false;
    if (t->nref < 3)
        return lo > p->suspect_abs_us;
    double q[SKEL_NSTAT], xs[NWIN], ref[MAXLB * SKEL_NSTAT];
    for (int i = 0; i < t->nwin; i++)
        xs[i] = t->win[i];
    skel_summary(xs, t->nwin, q);
    for (int i = 0; i < t->nref; i++)
        for (int d = 0; d < SKEL_NSTAT; d++)
            ref[i * SKEL_NSTAT + d] = t->ref[i][d];
    return skel_short_term(ref, t->nref, q, (size_t)p->lof_k, p->lof_max, p->far_sd,
                           p->floor_sd_us);
}

/* A probe of target ti in this second, at the agent's offset plus dt. */
static void probe(skel_run *r, int a, int ti, double dt)
{
    const skel_params *p = r->p;
    ep_rt *x = &r->ep[a];
    tgt *t = &x->ts[ti];
    int b = (int)x->ag.target[ti];
    double off = x->frac + dt;
    double tsec = (double)r->now + (off - floor(off));
    int32_t wid = (int32_t)(r->now / p->window_s);
    if (t->win_id != wid)
        close_window(r, t, wid);
    bool ov = overlay_method(r->method);
    skel_probe_obs o = skel_obs_probe(r->wld, a, b, t->el, t->nel, ov, r->ep[b].ready,
                                      p->probe_packets, tsec);
    r->probes++;
    x->retry = -1;
    if (!o.answered) {
        trace_probe(r, a, t, tsec, 0, 1, false);
        if (++t->consec_to >= p->timeouts) {
            t->consec_to = 0;
            raise_alarm(r, a, ti, SKEL_SYM_UNREACH, tsec + 1.0);
        } else {
            x->retry = ti;      /* after the timeout, next second */
        }
        return;
    }
    t->consec_to = 0;
    double rtt = o.rtt_us;
    trace_probe(r, a, t, tsec, rtt, (double)o.lost / p->probe_packets, true);
    t->wsent += (uint32_t)p->probe_packets;
    t->wlost += o.lost;
    add_sample(t, rtt);
    long_term(r, a, ti, rtt, tsec);
    if (o.lost && (double)t->wlost / t->wsent >= p->loss_threshold) {
        raise_alarm(r, a, ti, SKEL_SYM_LOSS, tsec);
        return;
    }
    double thr = suspect_thr(r, t);
    if (rtt <= thr) {
        t->pending = 0;
        return;
    }
    /* suspicious: two immediate retries filter congestion spikes */
    double lo = rtt;
    for (int k = 0; k < 2; k++) {
        skel_probe_obs v = skel_obs_probe(r->wld, a, b, t->el, t->nel, ov, r->ep[b].ready,
                                          p->probe_packets, tsec + 0.001 * (k + 1));
        r->probes++;
        if (!v.answered)
            continue;
        add_sample(t, v.rtt_us);
        lo = fmin(lo, v.rtt_us);
    }
    if (lo <= thr || !short_term(r, t, lo)) {
        t->pending = 0;
        return;
    }
    /* an outlier window: confirmed by the pair's next probe (a burst of
     * the job's own traffic rarely covers two rounds of the list) */
    if (t->pending || !p->confirm) {
        t->pending = 0;
        raise_alarm(r, a, ti, SKEL_SYM_LATENCY, tsec);
    } else {
        t->pending = 1;
    }
}

/* ---- the run ------------------------------------------------------------------ */

skel_run *skel_run_create(const skel_world *w, int method, uint64_t seed)
{
    skel_run *r = calloc(1, sizeof *r);
    r->w = w;
    r->f = w->f;
    r->p = w->p;
    r->method = method;
    r->seed = seed;
    rng_init(&r->rc, seed, "skeleton.churn", 0);
    r->wld = skel_wld_create(w, seed, (uint64_t)method);
    r->score = skel_score_create(r);
    const skel_fabric *f = r->f;
    r->ep_up = calloc((size_t)f->neps, sizeof *r->ep_up);
    r->server_task = malloc((size_t)f->servers * sizeof *r->server_task);
    for (int s = 0; s < f->servers; s++)
        r->server_task[s] = -1;
    r->ep = calloc((size_t)f->neps, sizeof *r->ep);
    rng fr;
    rng_init(&fr, seed, "skeleton.offsets", 0);
    for (int e = 0; e < f->neps; e++) {
        r->ep[e].task = -1;
        r->ep[e].retry = -1;
        r->ep[e].frac = rng_u01(&fr);
    }
    if (method == SKEL_M_RPING || method == SKEL_M_RPING_PUB) {
        skel_ep *v = malloc((size_t)f->neps * sizeof *v);
        for (int e = 0; e < f->neps; e++)
            v[e] = (skel_ep){.host = e / f->gpus, .rail = e % f->gpus,
                             .tor = (e / f->gpus / f->per_tor) * f->gpus + e % f->gpus};
        uint32_t *buf = malloc((size_t)f->neps * sizeof *buf);
        for (int e = 0; e < f->neps; e++) {
            size_t m = skel_targets(v, (size_t)f->neps, (size_t)e, SKEL_LIST_RPING, buf);
            set_list(r, e, buf, m, false);
        }
        free(buf);
        free(v);
    }
    return r;
}

void skel_run_step(skel_run *r, int64_t t)
{
    const skel_world *w = r->w;
    const skel_fabric *f = r->f;
    r->now = t;
    /* tasks */
    for (int ti = 0; ti < r->ntask; ti++)
        if (r->task[ti].alive && r->task[ti].end_s <= t)
            end_task(r, ti, t);
    if (w->churn)
        fill(r, t);
    for (int i = 0; i < w->ntasks; i++)
        if (w->tasks[i].start_s == t)
            submit(r, w->tasks[i].gpus, w->tasks[i].par, t, w->tasks[i].life_s);
    for (int ti = 0; ti < r->ntask; ti++) {
        task_rt *k = &r->task[ti];
        if (!k->alive)
            continue;
        for (int h = 0; h < k->nhosts; h++)
            if (k->ready_s[h] == t)
                container_ready(r, k, h, t);
        if (k->nready == k->nhosts && k->infer_s < 0)
            k->infer_s = t + r->p->infer_after_s;
        if (k->infer_s == t && !k->inferred)
            infer(r, ti, t);
    }
    /* the world's second: failures end and start; the scorer looks */
    skel_wld_step(r->wld, t, r->ep_up);
    skel_score_step(r, t);
    /* probes: retries first, else the next target; at most `rate` a second */
    for (int e = 0; e < f->neps; e++) {
        ep_rt *x = &r->ep[e];
        if (!x->ag.n || (overlay_method(r->method) && !x->ready))
            continue;
        r->targets_sum += (double)x->ag.n;
        r->targets_n++;
        if (r->method == SKEL_M_RPING_PUB) {
            /* R-Pingmesh's own schedule (papers.md 1(c)): every target under
             * the agent's ToR 10 times a second, every inter-ToR one once */
            for (size_t ti = 0; ti < x->ag.n; ti++) {
                int b = (int)x->ag.target[ti], k = 1;
                if (b / f->gpus / f->per_tor == e / f->gpus / f->per_tor &&
                    b % f->gpus == e % f->gpus)
                    k = 10;
                for (int j = 0; j < k; j++)
                    probe(r, e, (int)ti, (double)j / k);
            }
            continue;
        }
        for (int k = 0; k < (int)r->p->rate; k++) {
            int64_t ti = x->retry >= 0 ? x->retry : skel_agent_next(&x->ag);
            if (ti < 0)
                break;
            probe(r, e, (int)ti, 0);
        }
    }
}

void skel_run_finish(skel_run *r) { skel_score_finish(r); }

size_t skel_agent_target_bytes(const skel_params *p)
{
    /* the target's id in the agent's list, its state, its look-back ring */
    return sizeof(uint32_t) + sizeof(tgt) + (size_t)p->lookback * SKEL_NSTAT * sizeof(float);
}

void skel_run_write_trace(const skel_run *r, FILE *f, bool header)
{
    /* the paper's probe-record fields (project page samples.csv) that the
     * model has: endpoints (container = server), underlay host ids,
     * ToR/agg ids, latency, loss rate, dial, task and agent type */
    if (header)
        fprintf(f, "t_s,src,dst,src_host,dst_host,asw,dsw,latency_us,loss_rate,dial,task_type,"
                   "agent_type\n");
    const char *src = topo_node_name(r->f->t, r->w->trace_src);
    const char *dst = topo_node_name(r->f->t, r->w->trace_dst);
    for (size_t i = 0; i < r->ntrace; i++) {
        const trace_rt *x = &r->trace[i];
        const char *agg = x->agg >= 0 ? topo_node_name(r->f->t, x->agg - r->f->base_switch) : "";
        fprintf(f, "%.3f,%s,%s,s%d,s%d,%s,%s,%.3f,%.4f,%d,RDMA_PING,%s\n", x->t, src, dst,
                r->w->trace_src / r->f->gpus, r->w->trace_dst / r->f->gpus,
                topo_node_name(r->f->t, x->tor - r->f->base_switch), agg, x->ok ? x->rtt_us : 0,
                x->loss, x->ok, overlay_method(r->method) ? "overlay" : "underlay");
    }
}

void skel_run_destroy(skel_run *r)
{
    if (!r)
        return;
    for (int e = 0; e < r->f->neps; e++)
        free_list(&r->ep[e]);
    for (int ti = 0; ti < r->ntask; ti++) {
        free(r->task[ti].server);
        free(r->task[ti].ready_s);
        free(r->task[ti].toff);
        free(r->task[ti].tidx);
    }
    free(r->task);
    free(r->ep);
    free(r->ep_up);
    skel_wld_destroy(r->wld);
    skel_score_destroy(r->score);
    free(r->server_task);
    free(r->alarm);
    free(r->trace);
    free(r);
}
