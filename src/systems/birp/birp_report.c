/*
 * birp_report.c - the BIRP model's results: the per-request metrics over the
 * measured requests (inference loss, SLO failures, drops, throughput,
 * queueing and response-time quantiles, offloading, utilisation), the solver
 * and bandit counters, the wall-clock solver time (moved by the runner into
 * the summary's top-level "wall"),
 * and the files classes.csv, edges.csv and slots.csv.
 *
 * Requests arriving before `warmup` are not measured; requests still pending
 * at the stop time count if their deadline has passed.
 */
#include <math.h>
#include <stdio.h>

#include "aisim/stats.h"
#include "aisim/units.h"
#include "systems/birp/birp_sim_int.h"

/* A number for a table; an undefined one (the first slot's last_slot_loss,
 * an edge's mean batch with no batch) is an empty field, as in the
 * network's tables, not "nan". */
static void fmt(char *b, size_t n, double v)
{
    if (isfinite(v))
        out_fmt_double(b, n, v);
    else if (n)
        b[0] = '\0';
}

int birp_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    birp_model *m = st;
    int64_t now = sim_now(s);
    double span = ps_to_s(now - m->cfg.warmup_ps);
    int64_t n = 0, fail = 0, done = 0, good = 0, drop = 0;
    int64_t cn[MAX_CLASSES] = {0}, cf[MAX_CLASSES] = {0}, served[BIRP_MAX_EDGES] = {0};
    int64_t offloaded = 0, arrived = 0;
    double loss = 0, closs[MAX_CLASSES] = {0}, accsum = 0;
    samples qd, lat, clat[MAX_CLASSES];
    samples_init(&qd);
    samples_init(&lat);
    for (int c = 0; c < m->C; c++)
        samples_init(&clat[c]);
    for (size_t i = 0; i < m->nr; i++) {
        req *q = &m->r[i];
        if ((i & 0xffff) == 0xffff && sim_poll(m->sim, 0x10000))
            break;
        if (q->t_arr < m->cfg.warmup_ps)
            continue;
        arrived++;
        if (q->state == R_PENDING && q->deadline > now)
            continue;                       /* undecided at the stop time */
        n++;
        cn[q->cls]++;
        int ok = q->state == R_OK;
        double l = ok ? 1 - m->e[q->dest].curve[q->model]->acc : 1;
        loss += l;
        closs[q->cls] += l;
        if (!ok) {
            fail++;
            cf[q->cls]++;
        } else {
            good++;
            accsum += 1 - l;
        }
        if (q->state == R_DROPPED)
            drop++;
        if (q->state == R_OK || q->state == R_LATE) {
            done++;
            served[q->dest]++;
            samples_add(&lat, ps_to_s(q->t_done - q->t_arr));
            samples_add(&clat[q->cls], ps_to_s(q->t_done - q->t_arr));
        }
        if (q->t_start >= 0)
            samples_add(&qd, ps_to_s(q->t_start - q->t_enq));
        if (q->dest != q->origin)
            offloaded++;
    }
    double cp99[MAX_CLASSES];
    for (int c = 0; c < m->C; c++) {
        cp99[c] = samples_quantile(&clat[c], 0.99);
        samples_fini(&clat[c]);
    }
    if (sim_was_cut(m->sim)) {
        samples_fini(&qd);
        samples_fini(&lat);
        return MODEL_CUT(e);
    }
    double util = 0;
    int64_t switches = 0;
    for (int j = 0; j < m->E; j++) {
        switches += m->e[j].switches;
        account_busy(&m->e[j], now);
        util += m->e[j].busy_ps / (double)now / m->E;
    }
    json_object_set_new(sum, "policy", json_string(policy_names[m->cfg.policy]));
    json_object_set_new(sum, "requests", json_integer(n));
    out_json_num(sum, "inference_loss", n ? loss / (double)n : NAN);
    out_json_num(sum, "slo_failure_rate", n ? (double)fail / (double)n : NAN);
    out_json_num(sum, "dropped_rate", n ? (double)drop / (double)n : NAN);
    out_json_num(sum, "served_accuracy", good ? accsum / (double)good : NAN);
    out_json_num(sum, "throughput_rps", (double)done / span);
    out_json_num(sum, "goodput_rps", (double)good / span);
    out_json_num(sum, "offered_rps", m->rate);
    out_json_num(sum, "arrival_rate_rps", (double)arrived / span);
    out_json_num(sum, "serial_capacity_rps", m->cap_ref);
    out_json_num(sum, "offloaded_fraction", n ? (double)offloaded / (double)n : NAN);
    out_json_num(sum, "accelerator_utilisation", util);
    out_json_num(sum, "queueing_delay_p50_s", samples_quantile(&qd, 0.5));
    out_json_num(sum, "queueing_delay_p99_s", samples_quantile(&qd, 0.99));
    out_json_num(sum, "latency_p50_s", samples_quantile(&lat, 0.5));
    out_json_num(sum, "latency_p99_s", samples_quantile(&lat, 0.99));
    json_object_set_new(sum, "model_switches", json_integer(switches));
    /* per class, together: loss, SLO failures and the p99 response time
     * (of the requests served, late or not) */
    json_t *co = json_object();
    for (int c = 0; c < m->C; c++) {
        json_t *o1 = json_object();
        out_json_num(o1, "inference_loss", cn[c] ? closs[c] / (double)cn[c] : NAN);
        out_json_num(o1, "slo_failure_rate", cn[c] ? (double)cf[c] / (double)cn[c] : NAN);
        out_json_num(o1, "latency_p99_s", cp99[c]);
        json_object_set_new(co, m->cname[c], o1);
    }
    json_object_set_new(sum, "classes", co);
    if (m->wl.source == SRC_TRACE) {
        json_t *to = json_object();
        out_json_num(to, "speedup", m->wl.speedup);
        json_object_set_new(to, "copies", json_integer(m->tr_copies));
        json_object_set_new(to, "wraps", json_integer(m->tr_wraps));
        json_object_set_new(sum, "trace", to);
    }
    json_t *so = json_object();
    json_object_set_new(so, "solves", json_integer(m->solves));
    json_object_set_new(so, "fallbacks", json_integer(m->fallbacks));
    json_object_set_new(so, "no_load_slots", json_integer(m->trivial));
    json_object_set_new(sum, "solver", so);
    if (m->cfg.policy == P_BIRP) {
        json_t *bo = json_object();
        int best = birp_bandit_best(&m->bandit);
        out_json_num(bo, "best_a", m->arm_a[best / m->nb]);
        out_json_num(bo, "best_beta", m->arm_beta[best % m->nb]);
        json_object_set_new(bo, "arms", json_integer(m->bandit.narms));
        json_object_set_new(bo, "pulls", json_integer(m->bandit.t));
        json_t *pa = json_array();
        for (int a = 0; a < m->bandit.narms; a++)
            json_array_append_new(pa, json_integer(m->bandit.plays[a]));
        json_object_set_new(bo, "pulls_per_arm", pa);
        json_object_set_new(sum, "bandit", bo);
    }
    /* wall-clock solver time: not deterministic; the runner moves this
     * object into the summary's top-level "wall" */
    json_t *wo = json_object();
    out_json_num(wo, "solver_time_per_slot_mean_s",
                 m->solves ? m->solve_wall_s / (double)m->solves : NAN);
    out_json_num(wo, "solver_time_per_slot_max_s", m->solves ? m->solve_wall_max_s : NAN);
    json_object_set_new(sum, "wall", wo);
    samples_fini(&qd);
    samples_fini(&lat);

    char b1[40], b2[40], b3[40], b4[40];
    FILE *f = out_file(o, "classes.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "class,slo_s,requests,slo_failures,slo_failure_rate,inference_loss,latency_p99_s\n");
    for (int c = 0; c < m->C; c++) {
        fmt(b1, sizeof b1, m->slo_s[c]);
        fmt(b2, sizeof b2, cn[c] ? (double)cf[c] / (double)cn[c] : NAN);
        fmt(b3, sizeof b3, cn[c] ? closs[c] / (double)cn[c] : NAN);
        fmt(b4, sizeof b4, cp99[c]);
        fprintf(f, "%s,%s,%lld,%lld,%s,%s,%s\n", m->cname[c], b1, (long long)cn[c],
                (long long)cf[c], b2, b3, b4);
    }
    if (!(f = out_file(o, "edges.csv", e)))
        return e->code;
    fprintf(f, "edge,device,served,utilisation,batches,mean_batch\n");
    for (int j = 0; j < m->E; j++) {
        edge *ed = &m->e[j];
        fmt(b1, sizeof b1, ed->busy_ps / (double)now);
        fmt(b2, sizeof b2, ed->batches ? (double)ed->batched_reqs / (double)ed->batches : NAN);
        fprintf(f, "%s,%s,%lld,%s,%lld,%s\n", ed->name, ed->curve[0]->device,
                (long long)served[j], b1, (long long)ed->batches, b2);
    }
    if (!(f = out_file(o, "slots.csv", e)))
        return e->code;
    fprintf(f, "time_s,arm,a,beta,solver_status,fallback,objective,offload_fraction,"
               "last_slot_loss");
    for (int j = 0; j < m->E; j++)
        fprintf(f, ",bcap_%s", m->e[j].name);
    for (int j = 0; j < m->E; j++)
        fprintf(f, ",level_%s", m->e[j].name);
    fprintf(f, "\n");
    for (size_t i = 0; i < m->nrows; i++) {
        slot_row *r = &m->rows[i];
        fmt(b1, sizeof b1, r->t_s);
        fmt(b2, sizeof b2, r->obj);
        fmt(b3, sizeof b3, r->offload);
        fmt(b4, sizeof b4, r->loss);
        char ba[40], bb[40];
        fmt(ba, sizeof ba, r->a);
        fmt(bb, sizeof bb, r->beta);
        fprintf(f, "%s,%d,%s,%s,%d,%d,%s,%s,%s", b1, r->arm, ba, bb, r->status, r->fallback, b2,
                b3, b4);
        for (int j = 0; j < m->E; j++)
            fprintf(f, ",%d", r->bcap[j]);
        for (int j = 0; j < m->E; j++)
            fprintf(f, ",%d", r->level[j]);
        fprintf(f, "\n");
    }
    return 0;
}

