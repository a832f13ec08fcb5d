/*
 * skel_locate.c - a run's failures (scheduled and random, with the MTTR of
 * their class), their effect on a probe's path, and localization: the
 * overlay replay and physical-link voting of Algorithm 1, or the baseline
 * method's own.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "systems/skeleton/skel_run_int.h"

/* ---- failures -------------------------------------------------------------- */

static int mttr_class(enum skel_kind k)
{
    if (k == SKEL_K_LINK || k == SKEL_K_SWITCH)
        return 1;
    if (k == SKEL_K_RNIC || k == SKEL_K_HOST)
        return 2;
    return 0;
}

void start_fault(skel_run *r, int type, int32_t comp, int64_t t, int64_t dur)
{
    if (r->nfault == r->capfault) {
        r->capfault = r->capfault ? 2 * r->capfault : 16;
        r->fault = realloc(r->fault, (size_t)r->capfault * sizeof *r->fault);
        r->active = realloc(r->active, (size_t)r->capfault * sizeof *r->active);
    }
    int fi = r->nfault++;
    r->fault[fi] = (fault_rt){.type = type, .comp = comp, .start_s = t, .end_s = t + dur,
                              .loc_comp = -1, .loc_cls = SKEL_CLS_NONE};
    r->active[r->nactive++] = fi;
}

void end_fault(skel_run *r, int fi, int64_t t)
{
    for (int a = 0; a < r->nactive; a++)
        if (r->active[a] == fi) {
            r->active[a] = r->active[--r->nactive];
            break;
        }
    if (r->fault[fi].end_s > t)
        r->fault[fi].end_s = t;
}

/* A random component of a kind, among those in use where that matters. */
static int32_t random_comp(skel_run *r, enum skel_kind k)
{
    const skel_fabric *f = r->f;
    int *cand = malloc((size_t)f->neps * sizeof *cand), n = 0;
    int32_t c = -1;
    if (k == SKEL_K_SWITCH) {
        int ntor = f->segs * f->gpus;
        int i = (int)rng_below(&r->rf, (uint64_t)(ntor + f->aggs));
        c = skel_comp_switch(f, i < ntor ? f->tor_node[i] : f->agg_node[i - ntor]);
    } else if (k == SKEL_K_LINK && rng_u01(&r->rf) < 0.5) {
        int nl = f->segs * f->gpus * f->aggs;
        c = skel_comp_link(f, f->tor_agg[rng_below(&r->rf, (uint64_t)nl)]);
    } else {
        for (int e = 0; e < f->neps; e++)
            if (r->ep[e].ready)
                cand[n++] = e;
        if (n) {
            int e = cand[rng_below(&r->rf, (uint64_t)n)];
            switch (k) {
            case SKEL_K_LINK: c = skel_comp_link(f, f->host_link[e]); break;
            case SKEL_K_RNIC: c = skel_comp_rnic(f, e); break;
            case SKEL_K_HOST: c = skel_comp_host(f, e / f->gpus); break;
            default: c = skel_comp_ovl(f, e, k - SKEL_K_VPORT);
            }
        }
    }
    free(cand);
    return c;
}

void random_faults(skel_run *r, int64_t t)
{
    const skel_world *w = r->w;
    if (w->fail_rate_per_h <= 0)
        return;
    double lambda = w->fail_rate_per_h / 3600.0;
    /* Poisson count for this second */
    double L = exp(-lambda), pr = rng_u01(&r->rf);
    int cnt = 0;
    while (pr > L && cnt < 16) {
        pr *= rng_u01(&r->rf);
        cnt++;
    }
    double tot = 0;
    for (int i = 0; i < SKEL_NFTYPES; i++)
        tot += w->type_weight[i];
    for (int c = 0; c < cnt; c++) {
        double u = rng_uniform(&r->rf, 0, tot);
        int ty = 0;
        while (ty < SKEL_NFTYPES - 1 && u >= w->type_weight[ty])
            u -= w->type_weight[ty++];
        enum skel_kind k = skel_ftypes[ty].kind;
        int32_t comp = random_comp(r, k);
        double dur = rng_exponential(&r->rf, (double)w->mttr_s[mttr_class(k)]);
        if (comp >= 0)
            start_fault(r, ty, comp, t, (int64_t)ceil(dur));
    }
}

/* ---- the effect of the failures on a path ---------------------------------- */


bool on_path(const skel_run *r, const fault_rt *fa, int a, int b, const int32_t *el,
             int nel, bool overlay)
{
    const skel_fabric *f = r->f;
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

effect path_effect(const skel_run *r, int a, int b, const int32_t *el, int nel,
                   bool overlay)
{
    effect ef = {.fault = -1};
    const skel_params *p = r->p;
    double keep = 1;
    for (int i = 0; i < r->nactive; i++) {
        const fault_rt *fa = &r->fault[r->active[i]];
        if (!on_path(r, fa, a, b, el, nel, overlay))
            continue;
        if (ef.fault < 0)
            ef.fault = r->active[i];
        const skel_ftype *ty = &skel_ftypes[fa->type];
        if (ty->symptom == SKEL_SYM_UNREACH)
            ef.unreach = true;
        else if (ty->symptom == SKEL_SYM_LOSS)
            keep *= 1 - (strstr(ty->name, "flapping") ? p->flap_loss_p : p->loss_p);
        else
            ef.lat_us += p->latency_us;
    }
    ef.loss = 1 - keep;
    return ef;
}

double draw_rtt(skel_run *r, int nel, double lat_us)
{
    const skel_params *p = r->p;
    double v = rng_lognormal(&r->rp, log(p->rtt_median_us), p->rtt_sigma);
    v += (nel > 3 ? p->hop_us : 0) + lat_us;
    if (rng_u01(&r->rp) < p->spike_p)
        v += rng_exponential(&r->rp, p->spike_mean_us);
    return v;
}

uint32_t draw_lost(skel_run *r, int packets, double loss)
{
    uint32_t lost = 0;
    if (loss <= 0)
        return 0;
    for (int i = 0; i < packets; i++)
        lost += rng_u01(&r->rp) < loss;
    return lost;
}

/* ---- localization ------------------------------------------------------------ */

typedef struct replay_ctx {
    const skel_run *r;
    int32_t chain[8];
} replay_ctx;

static int replay_fwd(void *ctx, int hop)
{
    replay_ctx *c = ctx;
    for (int i = 0; i < c->r->nactive; i++) {
        const fault_rt *fa = &c->r->fault[c->r->active[i]];
        if (fa->comp == c->chain[hop] && skel_ftypes[fa->type].replay_visible)
            return -1;
    }
    return hop + 1;
}


static int fault_on(const skel_run *r, int32_t comp)
{
    for (int i = 0; i < r->nactive; i++)
        if (r->fault[r->active[i]].comp == comp)
            return r->active[i];
    return -1;
}

/* Sweep from endpoint x toward segment `seg` (its own: through its ToR
 * only; another: one path pinned through each agg), as the underlay
 * agents' traceroutes; the results vote.  Endpoint y is not a target. */
static void sweep_to(skel_run *r, skel_votes *v, int x, int y, int seg)
{
    const skel_fabric *f = r->f;
    int g = f->gpus, rail = x % g, sx = x / g / f->per_tor;
    int32_t el[8];
    bool pref[8];
    int z = -1;
    for (int s = seg * f->per_tor; s < (seg + 1) * f->per_tor && s < f->servers && z < 0; s++)
        if (s * g + rail != y && s != x / g)
            z = s * g + rail;
    if (z < 0)
        return;
    for (int k = seg == sx ? -1 : 0; k < (seg == sx ? 0 : f->aggs); k++) {
        int n = skel_path(f, x, z, k, el, pref);
        effect ef = path_effect(r, x, z, el, n, false);
        bool bad = ef.unreach || draw_lost(r, r->p->sweep_packets, ef.loss) > 0 ||
                   draw_rtt(r, n, ef.lat_us) > r->p->suspect_abs_us;
        skel_votes_add(v, el, (size_t)n, bad);
        r->probes++;
    }
}

/* The sweeps of an alarm on (a, b): from each end to its own segment, to
 * the other end's and to a third, so that a healthy path crosses every
 * element but the culprit where the fabric allows. */
static void sweep(skel_run *r, skel_votes *v, int a, int b)
{
    const skel_fabric *f = r->f;
    int g = f->gpus;
    int sa = a / g / f->per_tor, sb = b / g / f->per_tor, other = -1;
    for (int sg = 0; sg < f->segs && other < 0; sg++)
        if (sg != sa && sg != sb)
            other = sg;
    for (int side = 0; side < 2; side++) {
        int x = side ? b : a, y = side ? a : b, sx = side ? sb : sa, sy = side ? sa : sb;
        sweep_to(r, v, x, y, sx);
        if (sy != sx)
            sweep_to(r, v, x, y, sy);
        if (other >= 0)
            sweep_to(r, v, x, y, other);
    }
}

static verdict loc_underlay(skel_run *r, int a, int b, const tgt *t, bool exonerate)
{
    const skel_fabric *f = r->f;
    verdict vd = {.comp = -1, .cls = SKEL_CLS_NONE, .at_s = r->now};
    skel_votes v;
    skel_votes_init(&v, (size_t)f->base_rnic);
    for (int i = 0; i < r->nring; i++)
        if (r->now - r->ring[i].t <= r->p->vote_window_s)
            skel_votes_add(&v, r->ring[i].el, r->ring[i].nel, true);
    skel_votes_add(&v, t->el, t->nel, true);
    if (exonerate) {
        sweep(r, &v, a, b);
    }
    int32_t c = skel_votes_culprit(&v, t->el, t->pref, t->nel, exonerate);
    if (c < 0 && !exonerate) {  /* 007: the most-voted element, even with one vote */
        uint32_t best = 0;
        for (int i = 0; i < t->nel; i++)
            if (v.bad[t->el[i]] > best) {
                best = v.bad[t->el[i]];
                c = t->el[i];
            }
    }
    skel_votes_fini(&v);
    if (c < 0)
        return vd;
    vd.comp = c;
    vd.cls = SKEL_CLS_SWITCH;
    if (!exonerate)
        return vd;
    /* the element's own check: an RNIC behind a host link (the host's
     * underlay agent reads the port), a switch queue's configuration */
    for (int side = 0; side < 2; side++) {
        int e = side ? b : a;
        if (c == skel_comp_link(f, f->host_link[e]) && fault_on(r, skel_comp_rnic(f, e)) >= 0) {
            vd.comp = skel_comp_rnic(f, e);
            vd.cls = SKEL_CLS_RNIC;
            return vd;
        }
    }
    int fi = fault_on(r, c);
    if (fi >= 0 && skel_ftypes[r->fault[fi].type].cls == SKEL_CLS_CONFIG)
        vd.cls = SKEL_CLS_CONFIG;
    return vd;
}

verdict localize(skel_run *r, int a, int b, const tgt *t)
{
    const skel_fabric *f = r->f;
    verdict vd = {.comp = -1, .cls = SKEL_CLS_NONE, .at_s = r->now};
    if (r->method == SKEL_M_VOTE007)
        return loc_underlay(r, a, b, t, false);
    if (r->method == SKEL_M_RPING)
        return loc_underlay(r, a, b, t, true);
    /* 1. overlay replay: a's chain out, then b's chain in */
    replay_ctx rc = {.r = r};
    for (int h = 0; h < 4; h++) {
        rc.chain[h] = skel_comp_ovl(f, a, h);
        rc.chain[7 - h] = skel_comp_ovl(f, b, h);
    }
    bool loop;
    int hop = skel_overlay_replay(replay_fwd, &rc, 8, &loop);
    if (hop >= 0) {
        int fi = fault_on(r, rc.chain[hop]);
        vd.comp = rc.chain[hop];
        vd.cls = fi >= 0 ? (int)skel_ftypes[r->fault[fi].type].cls : SKEL_CLS_CONFIG;
        return vd;
    }
    /* 2. physical voting */
    vd = loc_underlay(r, a, b, t, true);
    if (vd.comp >= 0)
        return vd;
    /* 3. validation: flow tables, configuration and host checks (oracle) */
    vd.at_s = r->now + r->p->validate_s;
    if (rng_u01(&r->rv) >= r->p->validate_p)
        return vd;
    int32_t cand[8];
    int nc = 0;
    for (int side = 0; side < 2; side++) {
        int e = side ? b : a;
        cand[nc++] = skel_comp_ovl(f, e, 2);
        cand[nc++] = skel_comp_ovl(f, e, 1);
        cand[nc++] = skel_comp_host(f, e / f->gpus);
        cand[nc++] = skel_comp_rnic(f, e);
    }
    for (int i = 0; i < nc; i++) {
        int fi = fault_on(r, cand[i]);
        if (fi >= 0) {
            vd.comp = cand[i];
            vd.cls = skel_ftypes[r->fault[fi].type].cls;
            return vd;
        }
    }
    return vd;
}
