/*
 * skel_locate.c - localization of an alarm on the pair (a, b) from
 * observations only (skel_obs.h): Algorithm 1's overlay replay over the
 * installed flow tables and physical-link voting over traceroute-like
 * sweeps, then the element checks and the validation, each with its own
 * latency; or the baseline method's own.  A step names a culprit only when
 * what it observed shows a fault; nothing here can read the injected
 * failures.
 *
 *  1. Overlay replay (replay_delay): a's chain out (vPort, vSwitch rule,
 *     RNIC rule, VTEP), b's chain in, along the installed entries; the hop
 *     that forwards nothing (or loops) is the culprit.
 *  2. Voting (sweep_delay): the recently anomalous paths and the sweeps'
 *     paths vote (skel_votes); the culprit is then checked (check_delay): a
 *     host link whose RNIC's counters or port state are abnormal is the
 *     RNIC; a link whose switch queue has congestion control off is a
 *     configuration fault.
 *  3. Validation: the pair is re-probed (reprobe_delay; 5 probes: one
 *     lost, or their median above the pair's baseline (its long-term fit, else
 *     its look-back) by z_min_shift,
 *     is still anomalous); if it is, both ends' RNIC counters, vSwitch rules (RDMA, offloaded
 *     once, to the right RNIC), RNIC offloaded rules (dump and compare,
 *     validate_delay), host counters and configuration are read; the first
 *     abnormal one is the culprit.  None abnormal: no verdict.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "systems/skeleton/skel_run_int.h"

#define REPROBES 5

typedef struct replay_ctx {
    skel_run *r;
    int a, b;
    double tsec;
} replay_ctx;

/* Chain position hop: 0..3 a's overlay hops out, 4..7 b's hops 3..0 in. */
static int replay_fwd(void *ctx, int hop)
{
    replay_ctx *c = ctx;
    int ep = hop < 4 ? c->a : c->b, h = hop < 4 ? hop : 7 - hop;
    skel_ovl_obs o = skel_obs_overlay(c->r->wld, ep, h, c->tsec);
    return o.next < 0 ? -1 : hop + 1;
}

static int32_t chain_comp(const skel_fabric *f, int a, int b, int hop)
{
    return hop < 4 ? skel_comp_ovl(f, a, hop) : skel_comp_ovl(f, b, 7 - hop);
}

/* The class of an overlay element the replay stops at. */
static int ovl_class(const skel_fabric *f, int32_t c)
{
    switch (skel_comp_kind(f, c)) {
    case SKEL_K_VPORT: return SKEL_CLS_RUNTIME;
    case SKEL_K_VSW: return SKEL_CLS_VSWITCH;
    case SKEL_K_RULE: return SKEL_CLS_RNIC;
    default: return SKEL_CLS_CONFIG;
    }
}

static bool rnic_abnormal(const skel_rnic_obs *o)
{
    return !o->port_up || !o->link_up || o->port_flaps || !o->fw_responds || !o->gid_matches ||
           !o->bond_ok || o->hw_errors;
}

/* A sweep path is bad when a hop does not answer, loses packets, or the
 * far end's RTT is above the absolute bound. */
static bool trace_bad(skel_run *r, int x, int z, const int32_t *el, int n, double tsec)
{
    skel_hop_obs hops[8];
    int ok = skel_obs_trace(r->wld, x, z, el, n, r->p->sweep_packets, tsec, hops);
    if (ok < n)
        return true;
    for (int i = 0; i < n; i++)
        if (hops[i].lost)
            return true;
    return hops[n - 1].rtt_us > r->p->suspect_abs_us;
}

/* Sweep from endpoint x toward rail `rail` of segment `seg` (its own ToR:
 * through the ToR only; another ToR: one path pinned through each agg),
 * as the underlay agents' traceroutes; the results vote.  Endpoint y is
 * not a target.  The rail is the far end's, so that a cross-rail pair's
 * sweeps reach the far end's ToR. */
static void sweep_to(skel_run *r, skel_votes *v, int x, int y, int seg, int rail, double tsec)
{
    const skel_fabric *f = r->f;
    int g = f->gpus, sx = x / g / f->per_tor;
    bool local = seg == sx && rail == x % g;
    int32_t el[8];
    bool pref[8];
    int z = -1;
    for (int s = seg * f->per_tor; s < (seg + 1) * f->per_tor && s < f->servers && z < 0; s++)
        if (s * g + rail != y && s != x / g)
            z = s * g + rail;
    if (z < 0)
        return;
    for (int k = local ? -1 : 0; k < (local ? 0 : f->aggs); k++) {
        int n = skel_path(f, x, z, k, el, pref);
        skel_votes_add(v, el, (size_t)n, trace_bad(r, x, z, el, n, tsec));
        r->probes++;
    }
}

/* The sweeps of an alarm on (a, b): from each end to its own segment, to
 * the other end's and to a third, so that a healthy path crosses every
 * element but the culprit where the fabric allows. */
static void sweep(skel_run *r, skel_votes *v, int a, int b, double tsec)
{
    const skel_fabric *f = r->f;
    int g = f->gpus;
    int sa = a / g / f->per_tor, sb = b / g / f->per_tor, other = -1;
    for (int sg = 0; sg < f->segs && other < 0; sg++)
        if (sg != sa && sg != sb)
            other = sg;
    for (int side = 0; side < 2; side++) {
        int x = side ? b : a, y = side ? a : b, sx = side ? sb : sa, sy = side ? sa : sb;
        int rx = x % g, ry = y % g;
        sweep_to(r, v, x, y, sx, rx, tsec);
        if (sy != sx || ry != rx)
            sweep_to(r, v, x, y, sy, ry, tsec);
        if (other >= 0)
            sweep_to(r, v, x, y, other, rx, tsec);
    }
}

/* Links on a path of n elements (links and switches alternate). */
static int links_on(const skel_fabric *f, const int32_t *el, int n)
{
    int h = 0;
    for (int i = 0; i < n; i++)
        h += skel_comp_kind(f, el[i]) == SKEL_K_LINK;
    return h ? h : 1;
}

/* 007's vote (Arzani et al., NSDI'18): the path of every failing flow,
 * found by that flow's own traceroute, gives each of its h links a vote
 * of 1/h (a short path says more about each of its links); the link of
 * this path with the most votes over the vote window is blamed, ties to
 * the earlier on the path.  No healthy path exonerates. */
static int32_t vote_007(skel_run *r, const tgt *t)
{
    const skel_fabric *f = r->f;
    double best = 0;
    int32_t c = -1;
    for (int i = 0; i < t->nel; i++) {
        int32_t e = t->el[i];
        if (skel_comp_kind(f, e) != SKEL_K_LINK)
            continue;
        double v = 1.0 / links_on(f, t->el, t->nel);
        for (int k = 0; k < r->nring; k++) {
            const recent *x = &r->ring[k];
            if (r->now - x->t > r->p->vote_window_s)
                continue;
            for (int j = 0; j < x->nel; j++)
                if (x->el[j] == e) {
                    v += 1.0 / links_on(f, x->el, x->nel);
                    break;
                }
        }
        if (v > best + 1e-12) {
            best = v;
            c = e;
        }
    }
    return c;
}

static verdict loc_underlay(skel_run *r, int a, int b, const tgt *t, bool exonerate, double tsec,
                            int64_t at)
{
    const skel_fabric *f = r->f;
    const skel_params *p = r->p;
    verdict vd = {.comp = -1, .cls = SKEL_CLS_NONE, .at_s = at + p->sweep_s, .step = LOC_NONE};
    if (!exonerate) {
        int32_t c = vote_007(r, t);
        if (c >= 0)
            vd = (verdict){.comp = c, .cls = SKEL_CLS_SWITCH, .at_s = vd.at_s, .step = LOC_VOTE};
        return vd;
    }
    skel_votes v;
    skel_votes_init(&v, (size_t)f->base_rnic);
    for (int i = 0; i < r->nring; i++)
        if (r->now - r->ring[i].t <= p->vote_window_s)
            skel_votes_add(&v, r->ring[i].el, r->ring[i].nel, true);
    skel_votes_add(&v, t->el, t->nel, true);
    /* each step observes at the time it runs: the sweeps once the replay
     * is done, the check once the sweeps are */
    sweep(r, &v, a, b, tsec + (double)(at - r->now));
    int32_t c = skel_votes_culprit(&v, t->el, t->pref, t->nel, true);
    skel_votes_fini(&v);
    if (c < 0)
        return vd;
    vd.comp = c;
    vd.cls = SKEL_CLS_SWITCH;
    vd.step = LOC_VOTE;
    /* the element's own check: the RNIC behind a host link (the host's
     * agent reads its counters), a link's switch queue configuration */
    double tc = tsec + (double)(vd.at_s - r->now);
    vd.at_s += p->check_s;
    for (int side = 0; side < 2; side++) {
        int e = side ? b : a;
        if (c != skel_comp_link(f, f->host_link[e]))
            continue;
        skel_rnic_obs o = skel_obs_rnic(r->wld, e, tc);
        if (rnic_abnormal(&o)) {
            vd.comp = skel_comp_rnic(f, e);
            vd.cls = SKEL_CLS_RNIC;
            vd.step = LOC_PORT;
            return vd;
        }
    }
    if (skel_comp_kind(f, c) == SKEL_K_LINK && !skel_obs_queue_cc(r->wld, c, tc)) {
        vd.cls = SKEL_CLS_CONFIG;
        vd.step = LOC_QUEUE;
    }
    return vd;
}

/* Validation: the re-probe, then the reads of both ends. */
static verdict validate(skel_run *r, int a, int b, const tgt *t, double tsec, int64_t at)
{
    const skel_fabric *f = r->f;
    const skel_params *p = r->p;
    verdict vd = {.comp = -1, .cls = SKEL_CLS_NONE, .at_s = at + p->reprobe_s, .step = LOC_NONE};
    /* the re-probe: REPROBES probes; still anomalous if one is lost or
     * unanswered, or their median is a shift of z_min_shift above the
     * pair's own baseline (its long-term fit, else its look-back) */
    double rtt[REPROBES], base = p->rtt_median_us;
    bool bad = false;
    for (int k = 0; k < REPROBES; k++) {
        skel_probe_obs o = skel_obs_probe(r->wld, a, b, t->el, t->nel, true, r->ep[b].ready,
                                          p->probe_packets, tsec + (double)(at - r->now) + 0.1 * k);
        r->probes++;
        bad |= !o.answered || o.lost;
        rtt[k] = o.answered ? o.rtt_us : INFINITY;
    }
    if (t->lt_fit) {
        base = exp(t->lt_mu);
    } else if (t->nref) {
        base = 0;
        for (int i = 0; i < t->nref; i++)
            base += t->ref[i][1] / t->nref;
    }
    double s[SKEL_NSTAT];
    skel_summary(rtt, REPROBES, s);
    if (!bad && s[1] <= base * (1 + p->z_shift))
        return vd;              /* gone: nothing to validate */
    tsec += (double)(vd.at_s - r->now);     /* the reads, after the re-probe */
    vd.at_s += p->validate_s;
    for (int side = 0; side < 2; side++) {
        int e = side ? b : a;
        skel_rnic_obs ro = skel_obs_rnic(r->wld, e, tsec);
        if (rnic_abnormal(&ro)) {
            vd = (verdict){skel_comp_rnic(f, e), SKEL_CLS_RNIC, vd.at_s, LOC_VALIDATE};
            return vd;
        }
        skel_ovl_obs vs = skel_obs_overlay(r->wld, e, 1, tsec);
        if (!vs.rdma || vs.offloads != 1 || !vs.optimal) {
            vd = (verdict){skel_comp_ovl(f, e, 1), SKEL_CLS_VSWITCH, vd.at_s, LOC_VALIDATE};
            return vd;
        }
        skel_ovl_obs rr = skel_obs_overlay(r->wld, e, 2, tsec);
        if (!rr.in_hw) {
            vd = (verdict){skel_comp_ovl(f, e, 2), SKEL_CLS_RNIC, vd.at_s, LOC_VALIDATE};
            return vd;
        }
        skel_host_obs ho = skel_obs_host(r->wld, e / f->gpus, tsec);
        if (ho.pcie_aer_errors || ho.gdr_errors || !ho.hugepages_ok) {
            vd = (verdict){skel_comp_host(f, e / f->gpus),
                           ho.hugepages_ok ? SKEL_CLS_HOST : SKEL_CLS_CONFIG, vd.at_s,
                           LOC_VALIDATE};
            return vd;
        }
    }
    return vd;
}

verdict localize(skel_run *r, int a, int b, const tgt *t, double tsec)
{
    const skel_fabric *f = r->f;
    const skel_params *p = r->p;
    int64_t at = r->now;
    if (r->method == SKEL_M_VOTE007)
        return loc_underlay(r, a, b, t, false, tsec, at);
    if (r->method == SKEL_M_RPING || r->method == SKEL_M_RPING_PUB)
        return loc_underlay(r, a, b, t, true, tsec, at);
    /* 1. overlay replay: a's chain out, then b's chain in */
    replay_ctx rc = {.r = r, .a = a, .b = b, .tsec = tsec};
    bool loop;
    int hop = skel_overlay_replay(replay_fwd, &rc, 8, &loop);
    at += p->replay_s;
    if (hop >= 0) {
        int32_t c = chain_comp(f, a, b, hop);
        return (verdict){.comp = c, .cls = loop ? SKEL_CLS_CONFIG : ovl_class(f, c), .at_s = at,
                         .step = LOC_REPLAY};
    }
    /* 2. physical voting and the culprit's own check */
    verdict vd = loc_underlay(r, a, b, t, true, tsec, at);
    if (vd.comp >= 0)
        return vd;
    /* 3. validation */
    return validate(r, a, b, t, tsec, vd.at_s);
}
