/*
 * rdma_report.c - the RoCEv2 transport's tables: rdma_qps.csv (one row per
 * QP: bytes, first packet, last ACK, packets, retransmissions, timeouts,
 * CNPs sent and received, NACKs, out-of-order drops) and rdma_rate.csv
 * (the congestion-control rate and window of the first sample_qps QPs
 * every sample_interval), and the summary's rdma_* keys, pfc_pauses and
 * pfc_paused_s (pause frames received and the time classes spent paused,
 * over every port) and max_queue_bytes (the largest queue of any port).
 */
#include <stdlib.h>

#include "aisim/network.h"
#include "aisim/units.h"
#include "rdma_int.h"

void rdma_report_link(rdma_tp *tp, rdma_qp *qp)
{
    qp->live_prev = NULL;
    qp->live_next = tp->live;
    if (tp->live)
        tp->live->live_prev = qp;
    tp->live = qp;
}

static void row_of(const rdma_qp *qp, rdma_row *r)
{
    *r = (rdma_row){.id = qp->c.id, .src = qp->c.src, .dst = qp->c.dst, .bytes = qp->size,
                    .pkts = qp->st_pkts, .rtx = qp->st_rtx, .timeouts = qp->st_timeouts,
                    .cnp_sent = qp->st_cnp_sent, .cnp_rcvd = qp->st_cnp_rcvd,
                    .nacks = qp->st_nacks, .ooo_drops = qp->st_ooo_drops,
                    .start_ps = qp->st_first_ps,
                    .finish_ps = qp->snd_una >= qp->psn_end ? qp->st_last_ack_ps : -1,
                    .aborted = qp->aborted};
}

void rdma_report_unlink(rdma_tp *tp, rdma_qp *qp)
{
    if (qp->live_prev)
        qp->live_prev->live_next = qp->live_next;
    else
        tp->live = qp->live_next;
    if (qp->live_next)
        qp->live_next->live_prev = qp->live_prev;
    if (tp->nrows == tp->rcap) {
        tp->rcap = tp->rcap ? 2 * tp->rcap : 64;
        tp->rows = xrealloc(tp->rows, tp->rcap * sizeof *tp->rows);
    }
    row_of(qp, &tp->rows[tp->nrows++]);
}

static void on_sample(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    rdma_tp *tp = obj;
    for (rdma_qp *qp = tp->live; qp; qp = qp->live_next) {
        if (qp->c.id >= (uint64_t)tp->k.sample_qps || !qp->launched ||
            qp->snd_una >= qp->psn_end)
            continue;
        if (tp->nrs == tp->rscap) {
            tp->rscap = tp->rscap ? 2 * tp->rscap : 1024;
            tp->rs = xrealloc(tp->rs, tp->rscap * sizeof *tp->rs);
        }
        tp->rs[tp->nrs++] = (rdma_rsample){sim_now(s), qp->c.id, qp->rate_bps,
            qp->wnd_bytes || !tp->k.window ? qp->wnd_bytes : rdma_window_bytes(qp)};
    }
    if (tp->live)
        sim_timer_arm(s, &tp->sampler, sim_now(s) + tp->k.sample_ps);
}

void rdma_report_started(rdma_tp *tp, rdma_qp *qp)
{
    if (!tp->k.sample_ps || qp->c.id >= (uint64_t)tp->k.sample_qps)
        return;
    if (!tp->sampler_on) {
        tp->sampler_on = true;
        tp->s = qp->c.s;
        sim_timer_init(&tp->sampler, on_sample, tp, 0);
    }
    if (!sim_timer_armed(tp->s, &tp->sampler))
        sim_timer_arm(tp->s, &tp->sampler, sim_now(tp->s));
}

void rdma_report_fini(rdma_tp *tp)
{
    free(tp->rows);
    free(tp->rs);
}

static int cmp_row(const void *a, const void *b)
{
    const rdma_row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void csv_time(FILE *f, int64_t ps, const char *sep)
{
    if (ps < 0)
        fprintf(f, "%s", sep);
    else
        net_csv_num(f, ps_to_s(ps), sep);
}

int rdma_report(void *p, out *o, json_t *sum, err *e)
{
    rdma_tp *tp = p;
    /* rows of the live QPs too, then all by id */
    size_t nlive = 0;
    for (rdma_qp *qp = tp->live; qp; qp = qp->live_next)
        nlive++;
    size_t n = tp->nrows + nlive;
    rdma_row *all = xcalloc(n + 1, sizeof *all);
    for (size_t i = 0; i < tp->nrows; i++)
        all[i] = tp->rows[i];
    size_t j = tp->nrows;
    for (rdma_qp *qp = tp->live; qp; qp = qp->live_next)
        row_of(qp, &all[j++]);
    qsort(all, n, sizeof *all, cmp_row);
    FILE *f = out_file(o, "rdma_qps.csv", e);
    if (!f) {
        free(all);
        return -1;
    }
    fprintf(f, "qp,src,dst,bytes,start_s,finish_s,fct_s,packets,retransmits,timeouts,"
               "cnp_sent,cnp_received,nacks,ooo_drops,aborted\n");
    uint64_t tot[7] = {0};
    for (size_t i = 0; i < n; i++) {
        const rdma_row *r = &all[i];
        fprintf(f, "%u,%d,%d,%llu,", r->id, r->src, r->dst, (unsigned long long)r->bytes);
        csv_time(f, r->start_ps, ",");
        csv_time(f, r->finish_ps, ",");
        csv_time(f, r->finish_ps >= 0 && r->start_ps >= 0 ? r->finish_ps - r->start_ps : -1, ",");
        fprintf(f, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%d\n", (unsigned long long)r->pkts,
                (unsigned long long)r->rtx, (unsigned long long)r->timeouts,
                (unsigned long long)r->cnp_sent, (unsigned long long)r->cnp_rcvd,
                (unsigned long long)r->nacks, (unsigned long long)r->ooo_drops, r->aborted);
        uint64_t v[7] = {r->pkts, r->rtx, r->timeouts, r->cnp_sent, r->nacks, r->ooo_drops,
                         r->aborted};
        for (int k = 0; k < 7; k++)
            tot[k] += v[k];
    }
    free(all);
    if (tp->k.sample_ps) {
        FILE *g = out_file(o, "rdma_rate.csv", e);
        if (!g)
            return -1;
        fprintf(g, "time_s,qp,rate_bps,window_bytes\n");
        for (size_t i = 0; i < tp->nrs; i++) {
            net_csv_num(g, ps_to_s(tp->rs[i].t_ps), ",");
            fprintf(g, "%u,%lld,%llu\n", tp->rs[i].qp, (long long)tp->rs[i].rate_bps,
                    (unsigned long long)tp->rs[i].wnd_bytes);
        }
    }
    static const char *const keys[] = {"rdma_packets", "rdma_retransmits", "rdma_timeouts",
                                       "rdma_cnps", "rdma_nacks", "rdma_ooo_drops",
                                       "rdma_aborted_qps"};
    for (int k = 0; k < 7; k++)
        json_object_set_new(sum, keys[k], json_integer((json_int_t)tot[k]));
    json_object_set_new(sum, "rdma_qps", json_integer((json_int_t)n));
    /* PFC at the hosts' NICs and everywhere: pauses received */
    uint64_t pauses = 0;
    int64_t maxq = 0, paused = 0, now = tp->s ? sim_now(tp->s) : 0;
    for (size_t l = 0; tp->t && l < topo_links(tp->t); l++)
        for (int d = 0; d < 2; d++) {
            const port *q = topo_link_port(tp->t, (int)l, d);
            pauses += q->stat_pfc_pauses;
            paused += q->stat_pfc_paused_ps;
            for (int c = 0; c < PORT_MAX_PRIO; c++)     /* pauses still in force */
                if (q->pfc_paused >> c & 1)
                    paused += now - q->pfc_since[c];
            if (q->stat_max_bytes > maxq)
                maxq = q->stat_max_bytes;
        }
    json_object_set_new(sum, "pfc_pauses", json_integer((json_int_t)pauses));
    json_object_set_new(sum, "max_queue_bytes", json_integer((json_int_t)maxq));
    out_json_num(sum, "pfc_paused_s", ps_to_s(paused));
    return 0;
}
