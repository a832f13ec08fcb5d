/*
 * skel_score.c - the scorer: the one place where the world's truth (the
 * injected failures, skel_world.h) meets SkeletonHunter's decisions (the
 * alarms and verdicts of skel_run.c).  Nothing here feeds back into a
 * decision.
 *
 * - Relevance: a failure counts for recall once it touches a running
 *   task's true skeleton (a ready pair whose path crosses it), checked
 *   every 10 s over its injected lifetime (an isolation by the method
 *   does not shorten it: the same denominator for every method).
 * - An alarm is explained by a failure on its path at the second it was
 *   raised (or one that ended in the last timeouts + 2 s); otherwise it is
 *   a false alarm, a start-up one if its target's container was not up.
 * - Incidents: alarms grouped into episodes (the same verdict, or without
 *   one the same source endpoint, less than `incident_gap` apart); an
 *   episode is true if one of its alarms is explained.
 * - A failure is detected at its first explained alarm, localized right
 *   when that alarm's verdict names its component and class; detection
 *   delay = first alarm - onset, localization delay = verdict - first alarm.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "systems/skeleton/skel_run_int.h"
#include "systems/skeleton/skel_world.h"

#define INCIDENT_GAP_S 120

typedef struct truth {
    int32_t comp;           /* the scorer's copy (permuted by the test hook) */
    bool relevant, detected, loc_ok;
    double detect_t, loc_t;
    int32_t loc_comp;
    int loc_cls, loc_step;
    uint32_t alarms;
} truth;

struct skel_score {
    truth *tr;
    int ntr, captr;
    bool permute;
    rng pr;
};

struct skel_score *skel_score_create(skel_run *r)
{
    (void)r;
    return calloc(1, sizeof(struct skel_score));
}

void skel_score_destroy(struct skel_score *sc)
{
    if (!sc)
        return;
    free(sc->tr);
    free(sc);
}

void skel_run_permute_truth(skel_run *r, uint64_t seed)
{
    r->score->permute = true;
    rng_init(&r->score->pr, seed, "skeleton.permute", 0);
}

/* The scorer's view of failure i: the world's, with its copy's component. */
static wfault view(const skel_run *r, int i)
{
    wfault v = r->wld->wfault[i];
    v.comp = r->score->tr[i].comp;
    return v;
}

/* Copies the failures the world started since the last call. */
static void sync(skel_run *r)
{
    struct skel_score *sc = r->score;
    const skel_wld *x = r->wld;
    while (sc->ntr < x->nwfault) {
        if (sc->ntr == sc->captr) {
            sc->captr = sc->captr ? 2 * sc->captr : 16;
            sc->tr = realloc(sc->tr, (size_t)sc->captr * sizeof *sc->tr);
        }
        int i = sc->ntr++;
        sc->tr[i] = (truth){.comp = x->wfault[i].comp, .loc_comp = -1, .loc_cls = SKEL_CLS_NONE};
        if (sc->permute) {      /* inside-out shuffle among failures of the same kind */
            enum skel_kind k = skel_comp_kind(r->f, sc->tr[i].comp);
            int same = 0;
            for (int j = 0; j <= i; j++)
                same += skel_comp_kind(r->f, sc->tr[j].comp) == k;
            int pick = (int)rng_below(&sc->pr, (uint64_t)same);
            for (int j = 0; j <= i; j++)
                if (skel_comp_kind(r->f, sc->tr[j].comp) == k && pick-- == 0) {
                    int32_t c = sc->tr[j].comp;
                    sc->tr[j].comp = sc->tr[i].comp;
                    sc->tr[i].comp = c;
                    break;
                }
        }
    }
}

/* ---- relevance: does the failure touch a running task's real traffic? ------- */

/* Endpoint e is up and has an up peer in its task's true skeleton. */
static bool ep_talks(const skel_run *r, int e)
{
    const ep_rt *x = &r->ep[e];
    if (x->task < 0 || !x->ready)
        return false;
    const task_rt *k = &r->task[x->task];
    int g = r->f->gpus, l = -1;
    for (int h = 0; h < k->nhosts && l < 0; h++)
        if (k->server[h] == e / g)
            l = h * g + e % g;
    for (uint32_t j = k->toff[l]; j < k->toff[l + 1]; j++)
        if (r->ep[skel_run_ep_of(r, k, (int)k->tidx[j])].ready)
            return true;
    return false;
}

static bool relevant(const skel_run *r, const wfault *fa)
{
    const skel_fabric *f = r->f;
    enum skel_kind kd = skel_comp_kind(f, fa->comp);
    int g = f->gpus;
    /* every path of an endpoint crosses its own elements, host link and
     * ToR: those are relevant as soon as the endpoint talks */
    if (kd == SKEL_K_HOST) {
        int sv = skel_comp_owner(f, fa->comp);
        for (int j = 0; j < g; j++)
            if (ep_talks(r, sv * g + j))
                return true;
        return false;
    }
    if (kd != SKEL_K_LINK && kd != SKEL_K_SWITCH)
        return ep_talks(r, skel_comp_owner(f, fa->comp));
    for (int e = 0; e < f->neps; e++) {
        int tor = f->tor_node[(e / g / f->per_tor) * g + e % g];
        if ((fa->comp == skel_comp_link(f, f->host_link[e]) ||
             fa->comp == skel_comp_switch(f, tor)) && ep_talks(r, e))
            return true;
    }
    if (kd == SKEL_K_LINK) {    /* a host link not matched above, or ToR-agg */
        int a, b;
        topo_link_ends(f->t, fa->comp, &a, &b);
        if (topo_node_kind(f->t, a) == NODE_HOST || topo_node_kind(f->t, b) == NODE_HOST)
            return false;
    } else {
        bool agg = false;
        for (int i = 0; i < f->aggs; i++)
            agg |= fa->comp == skel_comp_switch(f, f->agg_node[i]);
        if (!agg)
            return false;
    }
    /* an agg or a ToR-agg link: the pairs whose ECMP path crosses it */
    int32_t el[8];
    bool pref[8];
    for (int ti = 0; ti < r->ntask; ti++) {
        const task_rt *k = &r->task[ti];
        if (!k->alive)
            continue;
        int n = k->nhosts * g;
        for (int l = 0; l < n; l++) {
            int a = skel_run_ep_of(r, k, l);
            if (!r->ep[a].ready)
                continue;
            for (uint32_t j = k->toff[l]; j < k->toff[l + 1]; j++) {
                int b = skel_run_ep_of(r, k, (int)k->tidx[j]);
                if (!r->ep[b].ready || a / g / f->per_tor == b / g / f->per_tor)
                    continue;
                int ne = skel_path(f, a, b, -1, el, pref);
                if (wld_on_path(r->wld, fa, a, b, el, ne, true))
                    return true;
            }
        }
    }
    return false;
}

/* Every failure in its injected lifetime, whether or not a method's
 * isolation ended it early: the churn and the failures are the same for
 * every method of a run, so every method gets the same recall
 * denominator. */
static void check_relevance(skel_run *r, int64_t t)
{
    const skel_wld *x = r->wld;
    for (int i = 0; i < x->nwfault; i++) {
        const wfault *fa = &x->wfault[i];
        if (r->score->tr[i].relevant || t < fa->start_s || t >= fa->due_s)
            continue;
        wfault v = view(r, i);
        if (relevant(r, &v))
            r->score->tr[i].relevant = true;
    }
}

void skel_score_step(skel_run *r, int64_t t)
{
    sync(r);
    if (t % 10 == 0)
        check_relevance(r, t);
}

/* ---- alarms against the truth ----------------------------------------------- */

static int explain(const skel_run *r, const alarm_rt *al)
{
    bool ov = overlay_method(r->method);
    const skel_wld *x = r->wld;
    int grace = r->p->timeouts + 2;
    for (int i = 0; i < x->nwfault; i++) {
        wfault v = view(r, i);
        if (v.start_s <= al->now_s && al->now_s < v.end_s &&
            wld_on_path(x, &v, al->src, al->dst, al->el, al->nel, ov))
            return i;
    }
    for (int i = x->nwfault - 1; i >= 0; i--) {   /* ended in the last few seconds */
        wfault v = view(r, i);
        if (v.end_s <= al->now_s && v.end_s + grace >= al->now_s &&
            wld_on_path(x, &v, al->src, al->dst, al->el, al->nel, ov))
            return i;
    }
    return -1;
}

void skel_score_finish(skel_run *r)
{
    sync(r);
    check_relevance(r, r->now);
    struct skel_score *sc = r->score;
    bool ov = overlay_method(r->method);
    r->fp_startup = 0;
    for (size_t i = 0; i < r->nalarm; i++) {
        alarm_rt *al = &r->alarm[i];
        al->fault = explain(r, al);
        al->startup = al->fault < 0 && ov && !al->target_ready;
        r->fp_startup += al->startup;
        if (al->fault < 0)
            continue;
        truth *tr = &sc->tr[al->fault];
        tr->alarms++;
        if (tr->detected)
            continue;
        const wfault *fa = &r->wld->wfault[al->fault];
        tr->detected = true;
        tr->detect_t = al->t;
        tr->loc_t = al->t + (double)(al->loc_s - al->now_s);
        tr->loc_comp = al->comp;
        tr->loc_cls = al->cls;
        tr->loc_step = al->step;
        tr->loc_ok = al->comp == tr->comp && al->cls == (int)skel_ftypes[fa->type].cls;
    }
}

/* Alarm episodes: the key of an alarm, and whether episode boundaries fall. */
static int64_t episode_key(const alarm_rt *a)
{
    return a->comp >= 0 ? (int64_t)a->comp : -1 - (int64_t)a->src;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void skel_run_result(const skel_run *r, skel_result *o)
{
    const struct skel_score *sc = r->score;
    memset(o, 0, sizeof *o);
    o->alarms = r->nalarm;
    for (size_t i = 0; i < r->nalarm; i++)
        o->tp += r->alarm[i].fault >= 0;
    o->fp = o->alarms - o->tp;
    o->fp_startup = r->fp_startup;
    /* incidents: per key, alarms less than INCIDENT_GAP_S apart */
    bool *done = calloc(r->nalarm + 1, 1);
    for (size_t i = 0; i < r->nalarm; i++) {
        if (done[i])
            continue;
        int64_t key = episode_key(&r->alarm[i]);
        bool hit = false;
        double last = r->alarm[i].t;
        for (size_t j = i; j < r->nalarm; j++) {
            const alarm_rt *a = &r->alarm[j];
            if (done[j] || episode_key(a) != key)
                continue;
            if (a->t - last > INCIDENT_GAP_S)
                break;
            done[j] = true;
            last = a->t;
            hit |= a->fault >= 0;
        }
        o->incidents++;
        o->incidents_true += hit;
    }
    free(done);
    double dsum = 0, lsum = 0;
    double *dl = malloc(((size_t)sc->ntr + 1) * sizeof *dl);
    for (int i = 0; i < sc->ntr; i++) {
        const truth *tr = &sc->tr[i];
        int ty = r->wld->wfault[i].type;
        o->failures++;
        if (tr->relevant) {
            o->relevant++;
            o->per_type_relevant[ty]++;
        }
        if (tr->detected && tr->relevant) {
            dl[o->detected++] = tr->detect_t - (double)r->wld->wfault[i].start_s;
            o->per_type_detected[ty]++;
            dsum += tr->detect_t - (double)r->wld->wfault[i].start_s;
            lsum += tr->loc_t - tr->detect_t;
            if (tr->loc_ok) {
                o->localized_ok++;
                o->per_type_loc_ok[ty]++;
                o->per_step[tr->loc_step]++;
            }
        }
    }
    o->precision = o->alarms ? (double)o->tp / (double)o->alarms : NAN;
    o->incident_precision = o->incidents ? (double)o->incidents_true / (double)o->incidents : NAN;
    o->recall = o->relevant ? (double)o->detected / (double)o->relevant : NAN;
    o->loc_accuracy = o->detected ? (double)o->localized_ok / (double)o->detected : NAN;
    o->detect_delay_s = o->detected ? dsum / (double)o->detected : NAN;
    o->loc_delay_s = o->detected ? lsum / (double)o->detected : NAN;
    o->total_delay_s = o->detect_delay_s + o->loc_delay_s;
    o->detect_delay_median_s = NAN;
    if (o->detected) {
        qsort(dl, o->detected, sizeof *dl, cmp_dbl);
        size_t m = o->detected;
        o->detect_delay_median_s = m % 2 ? dl[m / 2] : (dl[m / 2 - 1] + dl[m / 2]) / 2;
    }
    free(dl);
    o->probes = r->probes;
    o->agent_seconds = r->targets_n;
    o->targets_mean = r->targets_n ? r->targets_sum / (double)r->targets_n : 0;
    for (int ti = 0; ti < r->ntask; ti++) {
        o->tasks++;
        o->inferred += r->task[ti].inferred;
        o->inferred_exact += r->task[ti].exact;
    }
}

static const char *const sym_names[] = {"unreachable", "loss", "high_latency"};
static const char *const step_names[] = {"", "replay", "voting", "port_check", "queue_check",
                                         "validation"};

void skel_run_write_truth(const skel_run *r, FILE *f, bool header, int rep)
{
    const struct skel_score *sc = r->score;
    char b1[96], b2[96];
    if (header)
        fprintf(f, "method,run,failure,type,component,class,symptom,start_s,end_s,relevant,"
                   "detected,detect_delay_s,localized_to,localized_class,localization_correct,"
                   "localize_delay_s,localized_by,alarms\n");
    for (int i = 0; i < sc->ntr; i++) {
        const truth *tr = &sc->tr[i];
        const wfault *fa = &r->wld->wfault[i];
        const skel_ftype *ty = &skel_ftypes[fa->type];
        fprintf(f, "%s,%d,%d,%s,%s,%s,%s,%lld,%lld,%d,%d,", skel_method_names[r->method], rep, i,
                ty->name, skel_comp_name(r->f, tr->comp, b1, sizeof b1), skel_class_names[ty->cls],
                sym_names[ty->symptom], (long long)fa->start_s, (long long)fa->end_s, tr->relevant,
                tr->detected);
        if (tr->detected)
            fprintf(f, "%.3f,%s,%s,%d,%.3f,%s,%u\n", tr->detect_t - (double)fa->start_s,
                    tr->loc_comp >= 0 ? skel_comp_name(r->f, tr->loc_comp, b2, sizeof b2) : "",
                    skel_class_names[tr->loc_cls], tr->loc_ok, tr->loc_t - tr->detect_t,
                    step_names[tr->loc_step], tr->alarms);
        else
            fprintf(f, ",,,,,,%u\n", tr->alarms);
    }
}

void skel_run_write_alarms(const skel_run *r, FILE *f, bool header, int rep)
{
    char b1[96];
    if (header)
        fprintf(f, "method,run,t_s,src,dst,symptom,localized_to,class,localized_by,"
                   "localized_s,true_failure,startup\n");
    for (size_t i = 0; i < r->nalarm; i++) {
        const alarm_rt *a = &r->alarm[i];
        fprintf(f, "%s,%d,%.3f,%s,%s,%s,%s,%s,%s,%lld,%d,%d\n", skel_method_names[r->method], rep,
                a->t, topo_node_name(r->f->t, a->src), topo_node_name(r->f->t, a->dst),
                sym_names[a->sym], a->comp >= 0 ? skel_comp_name(r->f, a->comp, b1, sizeof b1) : "",
                skel_class_names[a->cls], step_names[a->step], (long long)a->loc_s, a->fault,
                a->startup);
    }
}
