/*
 * skel_world.c - the world SkeletonHunter watches: the injected failures
 * (scheduled and random, with the MTTR of their class), the noise of the
 * fabric and the hosts, and what each observation of skel_obs.h returns.
 *
 * A probe's RTT: the path's baseline (log-normal around a median that
 * drifts slowly, +-`baseline_drift` over a per-path period near
 * `baseline_period`), + an agg hop, + queueing behind the training job's
 * own traffic at both RNICs (exponential, mean queue_delay x u/(1-u) for
 * the RNIC's utilisation u in that second, from the job's traffic series:
 * it rises in step with the iteration), + the agent's scheduling jitter
 * (exponential, a per-server scale), + rare congestion spikes, + the
 * failures on the path.  A whole probe is lost with `drop`.
 *
 * A failure changes what the agents and the controller observe and
 * nothing else: the probes crossing it (Table 1's symptom), the counters
 * of its RNIC or host, the installed overlay entry or the queue setting
 * it corrupts (table below, wld_* functions).  The gray types vary in
 * time: slow drift ramps its latency up, a flapping link is down in
 * spells, an intermittent RNIC stalls in random episodes (and answers
 * no firmware command while stalled).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "systems/skeleton/skel_world.h"

#define WCHUNK 600          /* seconds of a job's traffic computed at once */

/* ---- failures ------------------------------------------------------------- */

static int mttr_class(enum skel_kind k)
{
    if (k == SKEL_K_LINK || k == SKEL_K_SWITCH)
        return 1;
    if (k == SKEL_K_RNIC || k == SKEL_K_HOST)
        return 2;
    return 0;
}

static void start_fault(skel_wld *x, int type, int32_t comp, int64_t t, int64_t dur)
{
    if (x->nwfault == x->capwfault) {
        x->capwfault = x->capwfault ? 2 * x->capwfault : 16;
        x->wfault = realloc(x->wfault, (size_t)x->capwfault * sizeof *x->wfault);
        x->wactive = realloc(x->wactive, (size_t)x->capwfault * sizeof *x->wactive);
    }
    int fi = x->nwfault++;
    x->wfault[fi] = (wfault){.type = type, .comp = comp, .start_s = t, .end_s = t + dur,
                              .due_s = t + dur};
    x->wactive[x->nwactive++] = fi;
}

/* Ends active failure number a (index into wactive) at t. */
static void end_active(skel_wld *x, int a, int64_t t)
{
    wfault *fa = &x->wfault[x->wactive[a]];
    if (fa->end_s > t)
        fa->end_s = t;
    x->wactive[a] = x->wactive[--x->nwactive];
}

/* A random component of a kind, among the endpoints up where that matters. */
static int32_t random_comp(skel_wld *x, enum skel_kind k, const bool *up)
{
    const skel_fabric *f = x->f;
    int32_t c = -1;
    if (k == SKEL_K_SWITCH) {
        int ntor = f->segs * f->gpus;
        int i = (int)rng_below(&x->rf, (uint64_t)(ntor + f->aggs));
        return skel_comp_switch(f, i < ntor ? f->tor_node[i] : f->agg_node[i - ntor]);
    }
    if (k == SKEL_K_LINK && rng_u01(&x->rf) < 0.5) {
        int nl = f->segs * f->gpus * f->aggs;
        return skel_comp_link(f, f->tor_agg[rng_below(&x->rf, (uint64_t)nl)]);
    }
    int n = 0;
    for (int e = 0; e < f->neps; e++)
        n += up[e];
    if (!n)
        return -1;
    int pick = (int)rng_below(&x->rf, (uint64_t)n), e = 0;
    for (e = 0; e < f->neps; e++)
        if (up[e] && pick-- == 0)
            break;
    switch (k) {
    case SKEL_K_LINK: c = skel_comp_link(f, f->host_link[e]); break;
    case SKEL_K_RNIC: c = skel_comp_rnic(f, e); break;
    case SKEL_K_HOST: c = skel_comp_host(f, e / f->gpus); break;
    default: c = skel_comp_ovl(f, e, k - SKEL_K_VPORT);
    }
    return c;
}

static void random_faults(skel_wld *x, int64_t t, const bool *up)
{
    const skel_world *w = x->w;
    if (w->fail_rate_per_h <= 0)
        return;
    double lambda = w->fail_rate_per_h / 3600.0;
    double L = exp(-lambda), pr = rng_u01(&x->rf);     /* Poisson count for this second */
    int cnt = 0;
    while (pr > L && cnt < 16) {
        pr *= rng_u01(&x->rf);
        cnt++;
    }
    double tot = 0;
    for (int i = 0; i < SKEL_NFTYPES; i++)
        tot += w->type_weight[i];
    for (int c = 0; c < cnt; c++) {
        double u = rng_uniform(&x->rf, 0, tot);
        int ty = 0;
        while (ty < SKEL_NFTYPES - 1 && u >= w->type_weight[ty])
            u -= w->type_weight[ty++];
        enum skel_kind k = skel_ftypes[ty].kind;
        int32_t comp = random_comp(x, k, up);
        double dur = rng_exponential(&x->rf, (double)w->mttr_s[mttr_class(k)]);
        if (comp >= 0)
            start_fault(x, ty, comp, t, (int64_t)ceil(dur));
    }
}

skel_wld *skel_wld_create(const skel_world *w, uint64_t seed, uint64_t noise_stream)
{
    skel_wld *x = calloc(1, sizeof *x);
    x->w = w;
    x->f = w->f;
    x->p = w->p;
    rng_init(&x->rf, seed, "skeleton.failures", 0);
    rng_init(&x->rn, seed, "skeleton.noise", noise_stream);
    const skel_fabric *f = x->f;
    x->agent_jit_us = malloc((size_t)f->servers * sizeof *x->agent_jit_us);
    for (int s = 0; s < f->servers; s++)
        x->agent_jit_us[s] = x->p->agent_jitter_us > 0
                                 ? rng_lognormal(&x->rn, log(x->p->agent_jitter_us), 0.5)
                                 : 0;
    x->ep_job = malloc((size_t)f->neps * sizeof *x->ep_job);
    x->ep_local = malloc((size_t)f->neps * sizeof *x->ep_local);
    for (int e = 0; e < f->neps; e++)
        x->ep_job[e] = x->ep_local[e] = -1;
    return x;
}

void skel_wld_destroy(skel_wld *x)
{
    if (!x)
        return;
    for (int j = 0; j < x->njob; j++)
        free(x->job[j].load);
    free(x->job);
    free(x->ep_job);
    free(x->ep_local);
    free(x->agent_jit_us);
    free(x->wfault);
    free(x->wactive);
    free(x);
}

void skel_wld_step(skel_wld *x, int64_t t, const bool *ep_up)
{
    const skel_world *w = x->w;
    x->now = t;
    for (int a = 0; a < x->nwactive; a++)
        if (x->wfault[x->wactive[a]].end_s <= t)
            end_active(x, a--, t);
    for (int i = 0; i < w->nfaults; i++)
        if (w->faults[i].start_s == t)
            start_fault(x, w->faults[i].type, w->faults[i].comp, t, w->faults[i].dur_s);
    random_faults(x, t, ep_up);
}

void skel_wld_container_gone(skel_wld *x, int ep, int64_t t)
{
    for (int a = 0; a < x->nwactive; a++) {
        const wfault *fa = &x->wfault[x->wactive[a]];
        if (skel_comp_kind(x->f, fa->comp) >= SKEL_K_VPORT &&
            skel_comp_owner(x->f, fa->comp) == ep) {
            x->wfault[x->wactive[a]].due_s = t;
            end_active(x, a--, t);
        }
    }
}

void skel_wld_isolate(skel_wld *x, int32_t c, int64_t at_s)
{
    enum skel_kind k = skel_comp_kind(x->f, c);
    if (k == SKEL_K_LINK || k == SKEL_K_SWITCH)
        return;
    for (int a = 0; a < x->nwactive; a++) {
        wfault *fa = &x->wfault[x->wactive[a]];
        if (fa->comp == c && fa->end_s > at_s)
            fa->end_s = at_s < x->now + 1 ? x->now + 1 : at_s;
    }
}

/* ---- the job's traffic ---------------------------------------------------- */

void skel_wld_job_start(skel_wld *x, int task, const skel_par *par, uint64_t seed, const int *ep,
                        int n)
{
    if (task >= x->njob) {
        x->job = realloc(x->job, (size_t)(task + 1) * sizeof *x->job);
        memset(x->job + x->njob, 0, (size_t)(task + 1 - x->njob) * sizeof *x->job);
        x->njob = task + 1;
    }
    wjob *j = &x->job[task];
    *j = (wjob){.on = true, .par = *par, .seed = seed, .n = n, .t0 = -1};
    for (int l = 0; l < n; l++) {
        x->ep_job[ep[l]] = task;
        x->ep_local[ep[l]] = l;
    }
}

void skel_wld_job_stop(skel_wld *x, int task)
{
    if (task >= x->njob)
        return;
    wjob *j = &x->job[task];
    for (int e = 0; e < x->f->neps; e++)
        if (x->ep_job[e] == task)
            x->ep_job[e] = x->ep_local[e] = -1;
    free(j->load);
    *j = (wjob){0};
}

/* Utilisation of endpoint e's RNIC in second t (0 without a job). */
static double rnic_load(skel_wld *x, int e, int64_t t)
{
    int ji = x->ep_job[e];
    const skel_params *p = x->p;
    if (ji < 0 || p->queue_us <= 0 || !x->w->traffic)
        return 0;
    wjob *j = &x->job[ji];
    if (j->t0 < 0 || t < j->t0 || t >= j->t0 + WCHUNK) {
        size_t len = WCHUNK;
        double *s = malloc((size_t)j->n * len * sizeof *s);
        const skel_traffic *tr = x->w->traffic;
        tr->series(tr->ctx, &j->par, x->f->gpus, j->seed, t, len, s);
        if (!j->load)
            j->load = malloc((size_t)j->n * len * sizeof *j->load);
        for (size_t i = 0; i < (size_t)j->n * len; i++)
            j->load[i] = (float)fmin(s[i] / p->rnic_gbps, 0.9);
        free(s);
        j->t0 = t;
    }
    return j->load[(size_t)x->ep_local[e] * WCHUNK + (size_t)(t - j->t0)];
}

/* ---- failures on a path ---------------------------------------------------- */

bool wld_on_path(const skel_wld *x, const wfault *fa, int a, int b, const int32_t *el, int nel,
                 bool overlay)
{
    const skel_fabric *f = x->f;
    enum skel_kind k = skel_comp_kind(f, fa->comp);
    if (!overlay && !skel_ftypes[fa->type].underlay_visible)
        return false;
    switch (k) {
    case SKEL_K_LINK:
    case SKEL_K_SWITCH:
        for (int i = 0; i < nel; i++)
            if (el[i] == fa->comp)
                return true;
        return false;
    case SKEL_K_HOST: {
        int s = skel_comp_owner(f, fa->comp);
        return s == a / f->gpus || s == b / f->gpus;
    }
    default: {
        int o = skel_comp_owner(f, fa->comp);
        return o == a || o == b;
    }
    }
}

typedef struct effect {
    bool unreach;
    double keep, lat_us;
} effect;

/* Is gray failure fa in a bad spell in second t?  A flapping link is down
 * the first flap_down s of every flap_period s from its onset; an
 * intermittent RNIC stalls in a random intermittent_duty of its
 * episodes (a hash of the failure and the episode: no draw of the noise
 * streams, so the rest of the run is unchanged). */
static bool gray_bad(const skel_wld *x, const wfault *fa, int64_t t)
{
    const skel_params *p = x->p;
    int64_t age = t - fa->start_s;
    switch (skel_ftypes[fa->type].gray) {
    case SKEL_GRAY_FLAP: return age % p->flap_period_s < p->flap_down_s;
    case SKEL_GRAY_INTERMITTENT: {
        uint64_t h = skel_mix64(((uint64_t)(uint32_t)fa->comp << 32) ^
                                skel_mix64((uint64_t)fa->start_s) ^ (uint64_t)(age / p->episode_s));
        return (double)(h >> 11) * 0x1p-53 < p->episode_duty;
    }
    default: return true;
    }
}

/* Failure fa's effect on what crosses it in second t (the gray types'
 * spells and ramp follow the time the observation is made at). */
static void add_effect(const skel_wld *x, effect *ef, const wfault *fa, int64_t t)
{
    const skel_ftype *ty = &skel_ftypes[fa->type];
    if (ty->gray == SKEL_GRAY_DRIFT) {
        double age = (double)(t - fa->start_s);
        ef->lat_us += x->p->latency_us * fmax(0, fmin(1, age / fmax(x->p->drift_ramp_s, 1)));
        return;
    }
    if (ty->gray && !gray_bad(x, fa, t))
        return;
    if (ty->symptom == SKEL_SYM_UNREACH)
        ef->unreach = true;
    else if (ty->symptom == SKEL_SYM_LOSS)
        ef->keep *= 1 - (strstr(ty->name, "flapping") ? x->p->flap_loss_p : x->p->loss_p);
    else
        ef->lat_us += x->p->latency_us;
}

static effect path_effect(const skel_wld *x, int a, int b, const int32_t *el, int nel,
                          bool overlay, int64_t t)
{
    effect ef = {.keep = 1};
    for (int i = 0; i < x->nwactive; i++) {
        const wfault *fa = &x->wfault[x->wactive[i]];
        if (wld_on_path(x, fa, a, b, el, nel, overlay))
            add_effect(x, &ef, fa, t);
    }
    return ef;
}

static uint32_t draw_lost(skel_wld *x, int packets, double loss)
{
    uint32_t lost = 0;
    if (loss <= 0)
        return 0;
    for (int i = 0; i < packets; i++)
        lost += rng_u01(&x->rn) < loss;
    return lost;
}

/* The healthy RTT of a -> b (nel elements) at tsec: drifting baseline,
 * queueing behind the job's traffic, agent jitter, congestion spikes. */
static double healthy_rtt(skel_wld *x, int a, int b, int nel, double tsec)
{
    const skel_params *p = x->p;
    uint64_t h = skel_mix64(((uint64_t)(a < b ? a : b) << 32) ^ (uint64_t)(a < b ? b : a) ^ 0x5eedULL);
    double per = p->baseline_period_s * (0.5 + (double)(h & 0xffff) / 65536.0);
    double ph = 2 * M_PI * (double)((h >> 16) & 0xffff) / 65536.0;
    double med = p->rtt_median_us * (1 + p->baseline_drift * sin(2 * M_PI * tsec / per + ph));
    double v = rng_lognormal(&x->rn, log(med), p->rtt_sigma);
    v += nel > 3 ? p->hop_us : 0;
    if (p->queue_us > 0) {
        int64_t t = (int64_t)floor(tsec);
        for (int side = 0; side < 2; side++) {
            double u = rnic_load(x, side ? b : a, t);
            if (u > 0)
                v += rng_exponential(&x->rn, p->queue_us * u / (1 - u));
        }
    }
    double jit = x->agent_jit_us[a / x->f->gpus];
    if (jit > 0)
        v += rng_exponential(&x->rn, jit);
    if (rng_u01(&x->rn) < p->spike_p)
        v += rng_exponential(&x->rn, p->spike_mean_us);
    return v;
}

/* ---- observations ---------------------------------------------------------- */

skel_probe_obs skel_obs_probe(skel_wld *x, int a, int b, const int32_t *el, int nel, bool overlay,
                              bool target_up, int packets, double tsec)
{
    skel_probe_obs o = {0};
    effect ef = path_effect(x, a, b, el, nel, overlay, (int64_t)floor(tsec));
    double rtt = healthy_rtt(x, a, b, nel, tsec);
    bool dropped = x->p->probe_drop > 0 && rng_u01(&x->rn) < x->p->probe_drop;
    if (ef.unreach || (overlay && !target_up) || dropped)
        return o;
    o.answered = true;
    o.lost = draw_lost(x, packets, 1 - ef.keep);
    o.rtt_us = rtt + ef.lat_us;
    return o;
}

int skel_obs_trace(skel_wld *x, int a, int b, const int32_t *el, int nel, int packets, double tsec,
                   skel_hop_obs *hops)
{
    const skel_fabric *f = x->f;
    /* three probes per hop, as traceroute: each hop reports the least RTT */
    double base = healthy_rtt(x, a, b, nel, tsec);
    for (int k = 1; k < 3; k++)
        base = fmin(base, healthy_rtt(x, a, b, nel, tsec));
    int ok = 0;
    bool dead = false;
    for (int i = 0; i < nel; i++) {
        /* the failures met up to element i: a link or switch on el[0..i],
         * a's RNIC from the start, b's at the last element */
        effect ef = {.keep = 1};
        for (int k = 0; k < x->nwactive; k++) {
            const wfault *fa = &x->wfault[x->wactive[k]];
            if (!skel_ftypes[fa->type].underlay_visible)
                continue;
            enum skel_kind kd = skel_comp_kind(f, fa->comp);
            bool met = false;
            if (kd == SKEL_K_LINK || kd == SKEL_K_SWITCH) {
                for (int j = 0; j <= i && !met; j++)
                    met = el[j] == fa->comp;
            } else if (kd == SKEL_K_RNIC) {
                int o = skel_comp_owner(f, fa->comp);
                met = o == a || (o == b && i == nel - 1);
            }
            if (met)
                add_effect(x, &ef, fa, (int64_t)floor(tsec));
        }
        dead |= ef.unreach;
        hops[i] = (skel_hop_obs){0};
        if (dead)
            continue;
        hops[i].answered = true;
        hops[i].rtt_us = base * (i + 1) / nel + ef.lat_us;
        hops[i].lost = draw_lost(x, packets, 1 - ef.keep);
        if (ok == i)
            ok++;
    }
    return ok;
}

/* The active failure of type name on component c, or NULL. */
static const wfault *active_on(const skel_wld *x, int32_t c, const char *name)
{
    for (int i = 0; i < x->nwactive; i++) {
        const wfault *fa = &x->wfault[x->wactive[i]];
        if (fa->comp == c && (!name || strcmp(skel_ftypes[fa->type].name, name) == 0))
            return fa;
    }
    return NULL;
}

skel_rnic_obs skel_obs_rnic(skel_wld *x, int ep, double tsec)
{
    int32_t c = skel_comp_rnic(x->f, ep);
    skel_rnic_obs o = {.port_up = true, .link_up = true, .fw_responds = true, .gid_matches = true,
                       .bond_ok = true};
    o.hw_errors = active_on(x, c, "rnic_hw_failure") != NULL;
    const wfault *stall = active_on(x, c, "rnic_intermittent");
    /* a stalled RNIC answers no command while the stall lasts */
    bool stalled = stall && gray_bad(x, stall, (int64_t)floor(tsec));
    o.fw_responds = !active_on(x, c, "rnic_fw_unresponsive") && !stalled;
    o.port_up = o.link_up = !active_on(x, c, "rnic_port_down");
    o.port_flaps = active_on(x, c, "rnic_port_flapping") ? 3 : 0;
    o.bond_ok = !active_on(x, c, "bond_error");
    o.gid_matches = !active_on(x, c, "gid_change");
    return o;
}

skel_host_obs skel_obs_host(skel_wld *x, int server, double tsec)
{
    (void)tsec;
    int32_t c = skel_comp_host(x->f, server);
    return (skel_host_obs){.pcie_aer_errors = active_on(x, c, "pcie_nic_error") ? 12 : 0,
                           .gdr_errors = active_on(x, c, "gdr_error") ? 5 : 0,
                           .hugepages_ok = !active_on(x, c, "hugepage_config")};
}

skel_ovl_obs skel_obs_overlay(skel_wld *x, int ep, int h, double tsec)
{
    (void)tsec;
    int32_t c = skel_comp_ovl(x->f, ep, h);
    skel_ovl_obs o = {.next = h + 1, .rdma = true, .offloads = 1, .optimal = true, .in_hw = true};
    if (h == 0 && active_on(x, c, "container_crash"))
        o.next = -1;                    /* the interface is gone */
    if (h == 1) {
        if (active_on(x, c, "not_using_rdma")) {
            o.rdma = false;             /* the rule sends the flow to the kernel stack */
            o.next = -1;
        }
        if (active_on(x, c, "repetitive_offload"))
            o.offloads = 2;
        if (active_on(x, c, "suboptimal_offload"))
            o.optimal = false;
    }
    if (h == 2 && active_on(x, c, "offload_failure"))
        o.in_hw = false;                /* the vSwitch believes it offloaded; the RNIC lacks it */
    return o;
}

bool skel_obs_queue_cc(skel_wld *x, int32_t link, double tsec)
{
    (void)tsec;
    return !active_on(x, link, "cc_disabled");
}
