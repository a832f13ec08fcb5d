/*
 * skel_lists.c - the lists experiment of SkeletonHunter (Figs. 15-16): for
 * each task size, the probe lists of the full mesh, Basic and the skeleton
 * inferred from the task's series, and the time to probe every target.
 * Table lists.csv.
 */
#include <stdlib.h>

#include "systems/skeleton/skel_sim_int.h"

/* One task size of the lists experiment (Figs. 15-16). */
struct list_row {
    int rnics;
    skel_par par;
    size_t pairs[2], mx[2];     /* full mesh, Basic: pairs and longest list */
    size_t skp, skmax;          /* the inferred skeleton's */
    bool exact;
    double period_s;            /* the iteration period folded over */
    int groups, idp;            /* inferred groups per rail, DP (0: not inferred) */
    int order;                  /* LIST_ORDER_* (none: groups not the stages) */
    /* the probing schedule (Fig. 16), per method (full, Basic, skeleton) */
    double round_s[3], all_s[3], dispatch_s;
};

/* Fig. 16 from a probing schedule.  The controller hands the n agents
 * their lists one after another at ctl_rate lists/s (agent i at (i + 1) /
 * ctl_rate).  An agent then probes one target per slot of 1/rate s, at
 * its own offset in the slot, round robin over its list; a probe that
 * gets no reply (probe.drop) takes its slot and the target is retried in
 * the next.  The round of an agent: from its list to the answer of its
 * last target; round_s the longest (the paper's time to probe all
 * targets), all_s from the first dispatch until every target of every
 * agent has answered. */
static void schedule(const uint32_t *len, int n, double rate, double ctl_rate, double drop,
                     rng *r, double *round_s, double *all_s)
{
    double worst = 0, last = 0;
    for (int i = 0; i < n; i++) {
        double d = (double)(i + 1) / ctl_rate, first = rng_u01(r) / rate;
        uint64_t slots = 0;
        for (uint32_t k = 0; k < len[i]; k++) {
            while (drop > 0 && rng_u01(r) < drop)
                slots++;
            slots++;
        }
        if (!slots)
            continue;
        double round = first + (double)(slots - 1) / rate;
        worst = fmax(worst, round);
        last = fmax(last, d + round);
    }
    *round_s = worst;
    *all_s = last;
}

/* The inferred stage order against the true positions. */
enum { LIST_ORDER_NONE, LIST_ORDER_FORWARD, LIST_ORDER_REVERSED, LIST_ORDER_WRONG };
static const char *const list_order_names[] = {"none", "forward", "reversed", "wrong"};

static void list_step(sim *sm, void *obj, uint64_t arg);

void skel_lists_start(sk_sim *s, sim *sm)
{
    s->lrows = calloc((size_t)s->nlist, sizeof *s->lrows);
    if (s->nlist)
        sim_schedule(sm, sim_now(sm), list_step, s, 0);
    else
        s->done = true;
}

/* Computes task size i: an event of its own, so that a bounded run (the
 * fuzzer's, with its event and wall-clock budget) stops between sizes
 * instead of inside a 2,048-RNIC inference. */
static void list_step(sim *sm, void *obj, uint64_t arg)
{
    sk_sim *s = obj;
    int i = (int)arg;
    struct list_row *row = &s->lrows[i];
    int g = s->f.gpus;
    int n = s->list_rnics[i];
    skel_par par = s->list_par[i];
    skel_ep *v = malloc((size_t)n * sizeof *v);
    for (int l = 0; l < n; l++)
        v[l] = (skel_ep){.host = l / g, .rail = l % g, .tor = (l / g / s->f.per_tor) * g + l % g};
    uint32_t *buf = malloc((size_t)n * sizeof *buf);
    uint32_t *llen = malloc(3 * (size_t)n * sizeof *llen);     /* list lengths per method */
    size_t pairs[2] = {0}, mx[2] = {0};
    for (int l = 0; l < n; l++)
        for (int k = 0; k < 2; k++) {
            size_t m = skel_targets(v, (size_t)n, (size_t)l, k ? SKEL_LIST_BASIC : SKEL_LIST_FULL,
                                    buf);
            llen[k * n + l] = (uint32_t)m;
            pairs[k] += m;
            if (m > mx[k])
                mx[k] = m;
        }
    size_t len = (size_t)s->p.infer_after_s;
    double *series = malloc((size_t)n * len * sizeof *series);
    s->traffic.series(s->traffic.ctx, &par, g, s->env.seed + (uint64_t)n, 0, len, series);
    uint32_t *off, *idx, *toff, *tidx;
    int *stage = malloc((size_t)n * sizeof *stage);
    /* the iteration period, found in the series (the inference is not told it) */
    double per = skel_period_estimate(series, (size_t)n, len, s->p.period_min_s,
                                      s->p.period_max_s);
    skel_clusters c = skel_infer(series, (size_t)n, len, v, per, (size_t)s->p.stft_win,
                                 (size_t)s->p.stft_hop, s->p.size_tol, &off, &idx,
                                 stage);
    skel_true_skeleton(&par, g, &toff, &tidx);
    bool exact = c.ok && skel_same_skeleton((size_t)n, off, idx, toff, tidx);
    size_t skp = 0, skmax = 0;
    for (int l = 0; l < n; l++) {
        size_t m = c.ok ? off[l + 1] - off[l] : 0;
        if (!c.ok)      /* fallback: the Basic list */
            m = skel_targets(v, (size_t)n, (size_t)l, SKEL_LIST_BASIC, buf);
        llen[2 * n + l] = (uint32_t)m;
        skp += m;
        if (m > skmax)
            skmax = m;
    }
    /* stage of local endpoint l: its host's position in the replica */
    int H = par.tp * par.pp / g, order = LIST_ORDER_NONE;
    if (c.ok && c.k == H) {
        bool fwd = true, rev = true;
        for (int l = 0; l < n; l++) {
            fwd &= stage[l] == (l / g) % H;
            rev &= stage[l] == H - 1 - (l / g) % H;
        }
        order = fwd ? LIST_ORDER_FORWARD : rev ? LIST_ORDER_REVERSED : LIST_ORDER_WRONG;
    }
    *row = (struct list_row){.rnics = n, .par = par, .pairs = {pairs[0], pairs[1]},
                             .mx = {mx[0], mx[1]}, .skp = skp, .skmax = skmax, .exact = exact,
                             .period_s = per, .groups = c.ok ? c.k : 0, .idp = c.ok ? c.dp : 0,
                             .order = order, .dispatch_s = (double)n / s->c.ctl_rate};
    for (int k = 0; k < 3; k++) {
        rng r;
        rng_init(&r, s->env.seed + (uint64_t)n, "skeleton.schedule", (uint64_t)k);
        schedule(llen + (size_t)k * n, n, s->p.rate, s->c.ctl_rate, s->p.probe_drop, &r,
                 &row->round_s[k], &row->all_s[k]);
    }
    free(llen);
    s->nlist_done = i + 1;
    sim_poll(sm, 1);    /* a signal stops the engine */
    free(off);
    free(idx);
    free(toff);
    free(tidx);
    free(stage);
    free(series);
    free(buf);
    free(v);
    if (i + 1 < s->nlist) {
        sim_schedule(sm, sim_now(sm) + 1, list_step, s, (uint64_t)i + 1);
    } else {
        s->done = true;
        sim_stop(sm);
    }
}

int skel_lists_report(sk_sim *s, out *o, json_t *sum, err *e)
{
    FILE *f = out_file(o, "lists.csv", e);
    if (!f)
        return e->code;
    /* Fig. 16 (time to probe all targets) where the paper gives it */
    static const struct { int rnics; double full, basic, sk; } paper[] = {
        {512, 560.25, 64.85, 8.23}, {1024, 1123.43, 122.54, 16.91}, {2048, 2034.12, 240.54, 25.09}};
    fprintf(f, "rnics,tp,pp,dp,full_pairs,basic_pairs,skeleton_pairs,skeleton_exact,"
               "full_targets_max,basic_targets_max,skeleton_targets_max,full_time_s,basic_time_s,"
               "skeleton_time_s,reduction_vs_basic,paper_full_time_s,paper_basic_time_s,"
               "paper_skeleton_time_s,period_s,groups_per_rail,inferred_dp,stage_order,"
               "full_round_s,basic_round_s,skeleton_round_s,full_all_s,basic_all_s,"
               "skeleton_all_s,dispatch_s,full_state_kb,basic_state_kb,"
               "skeleton_state_kb\n");
    static const char *const mname[3] = {"full", "basic", "skeleton"};
    double tgt_kb = (double)skel_agent_target_bytes(&s->p) / 1024;
    json_t *rows = json_array();
    for (int i = 0; i < s->nlist_done; i++) {
        const struct list_row *r = &s->lrows[i];
        int n = r->rnics;
        double rate = s->p.rate;
        double tf = (double)r->mx[0] / rate, tb = (double)r->mx[1] / rate,
               ts = (double)r->skmax / rate;
        fprintf(f, "%d,%d,%d,%d,%zu,%zu,%zu,%d,%zu,%zu,%zu,", n, r->par.tp, r->par.pp, r->par.dp,
                r->pairs[0], r->pairs[1], r->skp, r->exact, r->mx[0], r->mx[1], r->skmax);
        skel_csv_num(f, tf, false);
        skel_csv_num(f, tb, false);
        skel_csv_num(f, ts, false);
        skel_csv_num(f, 1 - ts / tb, false);
        double pf = NAN, pb = NAN, pk = NAN;
        for (size_t k = 0; k < sizeof paper / sizeof *paper; k++)
            if (paper[k].rnics == n) {
                pf = paper[k].full;
                pb = paper[k].basic;
                pk = paper[k].sk;
            }
        skel_csv_num(f, pf, false);
        skel_csv_num(f, pb, false);
        skel_csv_num(f, pk, false);
        skel_csv_num(f, r->period_s, false);
        fprintf(f, "%d,%d,%s,", r->groups, r->idp, list_order_names[r->order]);
        size_t longest[3] = {r->mx[0], r->mx[1], r->skmax};
        for (int k = 0; k < 3; k++)
            skel_csv_num(f, r->round_s[k], false);
        for (int k = 0; k < 3; k++)
            skel_csv_num(f, r->all_s[k], false);
        skel_csv_num(f, r->dispatch_s, false);
        for (int k = 0; k < 3; k++)
            skel_csv_num(f, (double)longest[k] * tgt_kb, k == 2);
        json_t *j = json_object();
        for (int k = 0; k < 3; k++) {
            char key[40];
            snprintf(key, sizeof key, "%s_round_s", mname[k]);
            out_json_num(j, key, r->round_s[k]);
            snprintf(key, sizeof key, "%s_all_s", mname[k]);
            out_json_num(j, key, r->all_s[k]);
            snprintf(key, sizeof key, "%s_state_kb", mname[k]);
            out_json_num(j, key, (double)longest[k] * tgt_kb);
        }
        out_json_num(j, "dispatch_s", r->dispatch_s);
        json_object_set_new(j, "rnics", json_integer(n));
        json_object_set_new(j, "full_pairs", json_integer((json_int_t)r->pairs[0]));
        json_object_set_new(j, "basic_pairs", json_integer((json_int_t)r->pairs[1]));
        json_object_set_new(j, "skeleton_pairs", json_integer((json_int_t)r->skp));
        json_object_set_new(j, "skeleton_exact", json_boolean(r->exact));
        out_json_num(j, "full_time_s", tf);
        out_json_num(j, "basic_time_s", tb);
        out_json_num(j, "skeleton_time_s", ts);
        json_object_set_new(j, "pp", json_integer(r->par.pp));
        out_json_num(j, "period_s", r->period_s);
        json_object_set_new(j, "groups_per_rail", json_integer(r->groups));
        json_object_set_new(j, "inferred_dp", json_integer(r->idp));
        json_object_set_new(j, "stage_order", json_string(list_order_names[r->order]));
        json_array_append_new(rows, j);
    }
    json_object_set_new(sum, "lists", rows);
    return 0;
}
