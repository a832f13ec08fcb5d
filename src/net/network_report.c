/*
 * network_report.c - the network object's tables (network.h): flows.csv
 * (one row per message), links.csv, switches.csv, queues.csv, fct_cdf.csv,
 * the captures, and the headline metrics of summary.json.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "aisim/log.h"
#include "aisim/netext.h"
#include "aisim/stats.h"
#include "aisim/units.h"
#include "network_int.h"
#include "net/flow/flownet.h"

void net_csv_num(FILE *f, double v, const char *sep)
{
    char b[40];
    out_fmt_double(b, sizeof b, v);
    fprintf(f, "%s%s", isfinite(v) ? b : "", sep);
}

/* fct_cdf.csv: per size bucket, the empirical distributions of FCT and of
 * slowdown, as their quantile functions: row i of a bucket of n flows has
 * cdf (i+1)/n, the i-th smallest FCT and the i-th smallest slowdown (the
 * two columns are sorted independently).  fct and slow must be sorted. */
static int write_fct_cdf(out *o, const char *const *names, const samples *fct,
                         const samples *slow, int nb, err *e)
{
    FILE *f = out_file(o, "fct_cdf.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "bucket,cdf,fct_s,slowdown\n");
    for (int b = 0; b < nb; b++) {
        assert(fct[b].n == slow[b].n && (fct[b].n < 2 || (fct[b].sorted && slow[b].sorted)));
        for (size_t i = 0; i < fct[b].n; i++) {
            fprintf(f, "%s,", names[b]);
            net_csv_num(f, (double)(i + 1) / (double)fct[b].n, ",");
            net_csv_num(f, fct[b].v[i], ",");
            net_csv_num(f, slow[b].v[i], "\n");
        }
    }
    return 0;
}

/* FCT and slowdown by message size, the buckets of the transport papers. */
static const struct {
    const char *name;
    uint64_t max;
} bk[] = {{"0-10KB", 10000}, {"10KB-100KB", 100000}, {"100KB-1MB", 1000000},
          {"over-1MB", UINT64_MAX}};
enum { NB = sizeof bk / sizeof *bk };

/* The completion times and slowdowns of the messages that completed, by
 * size bucket, for fct_cdf.csv. */
typedef struct fct_buckets {
    samples fct[NB], slow[NB];
    uint64_t done;
} fct_buckets;

/* One row of flows.csv. */
static void write_flow_row(network *n, FILE *f, size_t i, const msg_row *m, bool fin,
                           double fct_s, double ideal)
{
    fprintf(f, "%zu,%s,%s,", i, topo_node_name(n->t, topo_host_node(n->t, m->src)),
            topo_node_name(n->t, topo_host_node(n->t, m->dst)));
    if (m->bytes == UINT64_MAX)
        fprintf(f, ",");
    else
        fprintf(f, "%llu,", (unsigned long long)m->bytes);
    net_csv_num(f, ps_to_s(m->start_ps), ",");
    net_csv_num(f, fin ? ps_to_s(m->finish_ps) : NAN, ",");
    net_csv_num(f, fct_s, ",");
    net_csv_num(f, ideal, ",");
    net_csv_num(f, fct_s / ideal, ",");
    fprintf(f, "%llu,%llu,%llu,%lld\n", (unsigned long long)m->delivered,
            (unsigned long long)m->retransmits, (unsigned long long)m->timeouts,
            (long long)m->tag);
}

/* One row per message, in id order (from memory or the spill file). */
static int write_flows(network *n, out *o, json_t *sum, double T, fct_buckets *fb, bool rows,
                       err *e)
{
    FILE *f = rows ? out_file(o, "flows.csv", e) : NULL;
    if (rows && !f)
        return e->code;
    if (f)
        fprintf(f, "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,"
                   "delivered_bytes,retransmits,timeouts,round\n");
    samples fct;
    samples *bfct = fb->fct, *bslow = fb->slow;
    samples_init(&fct);
    uint64_t delivered = 0, rtx = 0, tos = 0, done = 0, aborted = 0;
    for (size_t i = 0; i < n->nmsgs; i++) {
        msg_row m;
        if (network_msg_row(n, i, &m))
            return ERR(e, AISIM_EIO, "reading back the record of message %zu failed", i);
        bool fin = m.finish_ps >= 0;
        double fct_s = fin ? ps_to_s(m.finish_ps - m.start_ps) : NAN;
        double ideal = m.ideal_ps >= 0 ? ps_to_s(m.ideal_ps) : NAN;
        if (f)
            write_flow_row(n, f, i, &m, fin, fct_s, ideal);
        delivered += m.delivered;
        rtx += m.retransmits;
        tos += m.timeouts;
        aborted += m.aborted;
        if (fin) {
            done++;
            samples_add(&fct, fct_s);
            int b = 0;
            while (m.bytes > bk[b].max)
                b++;
            samples_add(&bfct[b], fct_s);
            samples_add(&bslow[b], fct_s / ideal);
        }
    }
    json_object_set_new(sum, "flows", json_integer((json_int_t)n->nmsgs));
    json_object_set_new(sum, "flows_completed", json_integer((json_int_t)done));
    json_object_set_new(sum, "flows_aborted", json_integer((json_int_t)aborted));
    out_json_num(sum, "fct_p50_s", samples_quantile(&fct, 0.5));
    out_json_num(sum, "fct_p99_s", samples_quantile(&fct, 0.99));
    out_json_num(sum, "fct_p999_s", samples_quantile(&fct, 0.999));
    out_json_num(sum, "goodput_bps", T > 0 ? (double)delivered * 8 / T : NAN);
    json_object_set_new(sum, "retransmits", json_integer((json_int_t)rtx));
    json_object_set_new(sum, "timeouts", json_integer((json_int_t)tos));
    samples_fini(&fct);
    json_t *by = json_object();
    for (int b = 0; b < NB; b++) {
        json_t *bo = json_object();
        json_object_set_new(bo, "flows", json_integer((json_int_t)bfct[b].n));
        out_json_num(bo, "fct_p50_s", samples_quantile(&bfct[b], 0.5));
        out_json_num(bo, "fct_p99_s", samples_quantile(&bfct[b], 0.99));
        out_json_num(bo, "fct_p999_s", samples_quantile(&bfct[b], 0.999));
        out_json_num(bo, "slowdown_p50", samples_quantile(&bslow[b], 0.5));
        out_json_num(bo, "slowdown_p99", samples_quantile(&bslow[b], 0.99));
        json_object_set_new(by, bk[b].name, bo);
    }
    json_object_set_new(sum, "fct_by_size", by);
    fb->done = done;
    return 0;
}

/* Links: both directions of every link. */
static int write_links(network *n, out *o, json_t *sum, double T, err *e)
{
    FILE *lf = out_file(o, "links.csv", e);
    if (!lf)
        return e->code;
    fprintf(lf, "port,rate_bps,tx_bytes,utilisation,drops,ecn_marks,max_queue_bytes,"
                "pfc_pauses\n");
    uint64_t drops = 0, marks = 0, hops = 0, pauses = 0;
    for (size_t l = 0; l < topo_links(n->t); l++)
        for (int d = 0; d < 2; d++) {
            port *q = topo_link_port(n->t, (int)l, d);
            int64_t busy = q->stat_busy_ps + (q->tx ? sim_now(n->s) - q->busy_since : 0);
            fprintf(lf, "%s,%lld,%llu,", q->base.name, (long long)q->cfg.rate_bps,
                    (unsigned long long)q->stat_tx_bytes);
            net_csv_num(lf, T > 0 ? ps_to_s(busy) / T : NAN, ",");
            fprintf(lf, "%llu,%llu,%lld,%llu\n", (unsigned long long)q->stat_drop_pkts,
                    (unsigned long long)q->stat_mark_pkts, (long long)q->stat_max_bytes,
                    (unsigned long long)q->stat_pfc_pauses);
            pauses += q->stat_pfc_pauses;
            drops += q->stat_drop_pkts;
            marks += q->stat_mark_pkts;
            hops += q->stat_tx_pkts;
        }
    json_object_set_new(sum, "drops", json_integer((json_int_t)drops));
    json_object_set_new(sum, "packet_hops", json_integer((json_int_t)hops));
    json_object_set_new(sum, "pfc_pauses", json_integer((json_int_t)pauses));
    json_object_set_new(sum, "ecn_marks", json_integer((json_int_t)marks));
    return 0;
}

/* Shared buffers: one row per switch that has one. */
static int write_switches(network *n, out *o, err *e)
{
    FILE *sf = NULL;
    for (size_t i = 0; i < topo_nodes(n->t); i++) {
        const shbuf *b = topo_node_shbuf(n->t, (int)i);
        if (!b)
            continue;
        if (!sf) {
            if (!(sf = out_file(o, "switches.csv", e)))
                return e->code;
            fprintf(sf, "switch,shared_buffer_bytes,alpha,peak_used_bytes,threshold_drops,"
                        "full_drops\n");
        }
        fprintf(sf, "%s,%lld,", topo_node_name(n->t, (int)i), (long long)b->size_bytes);
        net_csv_num(sf, b->alpha, ",");
        fprintf(sf, "%lld,%llu,%llu\n", (long long)b->stat_max_used,
                (unsigned long long)b->stat_dt_drops, (unsigned long long)b->stat_full_drops);
    }
    return 0;
}

/* Per sampled port: the time average of its backlog over the samples (a
 * sample every sample_interval from time 0, so the mean of the samples is
 * the time average of the sampled backlog), the largest sample and the
 * port's true largest queue. */
static int write_queue_stats(network *n, out *o, err *e)
{
    if (!n->sq_n)
        return 0;
    FILE *f = out_file(o, "queue_stats.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "port,samples,avg_bytes,max_sampled_bytes,max_bytes\n");
    for (size_t i = 0; i < n->nsports; i++) {
        fprintf(f, "%s,%llu,", n->sport_names[i], (unsigned long long)n->sq_n);
        net_csv_num(f, (double)n->sq_sum[i] / (double)n->sq_n, ",");
        fprintf(f, "%lld,%lld\n", (long long)n->sq_max[i], (long long)n->sports[i]->stat_max_bytes);
    }
    return 0;
}

static int write_queues(network *n, out *o, err *e)
{
    if (!n->ts_n)
        return write_queue_stats(n, o, e);
    int r = write_queue_stats(n, o, e);
    if (r)
        return r;
    FILE *qf = out_file(o, "queues.csv", e);
    if (!qf)
        return e->code;
    fprintf(qf, "time_s,port,bytes,tx_bps,drops,ecn_marks,pfc_pauses\n");
    /* Samples come in rounds of one per port: tx_bps is the port's rate
     * since its previous sample. */
    for (size_t i = 0; i < n->ts_n; i++) {
        const net_qsample *x = &n->ts[i];
        const net_qsample *prev = i >= n->nsports ? &n->ts[i - n->nsports] : NULL;
        net_csv_num(qf, ps_to_s(x->t_ps), ",");
        fprintf(qf, "%s,%lld,", n->sport_names[x->port], (long long)x->bytes);
        /* bits * 1e12 / ps: one rounding of two exact integers (bits / s
         * rounded the interval first: 12000 B in 20 us gave 8399999999.999999). */
        net_csv_num(qf, prev ? (double)(x->tx_bytes - prev->tx_bytes) * 8 * (double)PS_PER_S /
                               (double)(x->t_ps - prev->t_ps) : 0, ",");
        fprintf(qf, "%llu,%llu,%llu\n", (unsigned long long)x->drops,
                (unsigned long long)x->marks, (unsigned long long)x->pauses);
    }
    return 0;
}

static int write_captures(network *n, out *o, err *e)
{
    for (size_t i = 0; i < n->ncaps; i++) {
        char name[300];
        snprintf(name, sizeof name, "%s.pcap",
                 topo_node_name(n->t, topo_host_node(n->t, n->caps[i].host)));
        FILE *pf = out_file(o, name, e);
        int r = pf ? pcapw_write(n->caps[i].w, pf, e) : e->code;
        if (r)
            return r;
        if (pcapw_missed(n->caps[i].w))
            LOG(LOG_WARN, "net", "%s: %llu packets over pcap_max_packets were not captured",
                name, (unsigned long long)pcapw_missed(n->caps[i].w));
    }
    return 0;
}

int network_report(network *n, out *o, json_t *sum, err *e)
{
    double T = ps_to_s(sim_now(n->s));
    int r;
    fct_buckets fb;
    for (int b = 0; b < NB; b++) {
        samples_init(&fb.fct[b]);
        samples_init(&fb.slow[b]);
    }
    /* Tables in the order the run directory lists them; summary keys in
     * the order summary.json has always had them. */
    size_t waiting = 0;
    for (size_t i = 0; i < n->nconns; i++) {
        const nconn *k = idtab_get(&n->conns, i);
        waiting += k && k->wait_start >= 0;
    }
    if (waiting)
        LOG(LOG_WARN, "net", "%zu connection(s) never started: link failures left no route "
            "between their endpoints", waiting);
    json_t *fl = json_object(), *li = json_object();
    bool rows = true;               /* flows.csv, fct_cdf.csv */
    if (n->cfg.plane == NET_PLANE_FLOW) {
        flownet_report(n, sum);     /* counters to now, for links.csv */
        rows = flownet_flows_csv(n);
    }
    if (!(r = write_flows(n, o, fl, T, &fb, rows, e)) && !(r = write_links(n, o, li, T, e)) &&
        !(r = write_switches(n, o, e)) && !(r = write_queues(n, o, e)) &&
        !(r = write_captures(n, o, e)) &&
        !(r = n->ops->report ? n->ops->report(n->tp, o, sum, e) : 0) &&
        !(r = n->faults && fault_count(n->faults) ? fault_write_truth(n->faults, o, e) : 0) &&
        fb.done && rows) {
        const char *names[NB];
        for (int b = 0; b < NB; b++)
            names[b] = bk[b].name;
        r = write_fct_cdf(o, names, fb.fct, fb.slow, NB, e);
    }
    for (int b = 0; b < NB; b++) {
        samples_fini(&fb.fct[b]);
        samples_fini(&fb.slow[b]);
    }
    if (r) {
        json_decref(fl);
        json_decref(li);
        return r;
    }
    static const char *const order[] = {"flows", "flows_completed", "flows_aborted",
                                        "fct_p50_s", "fct_p99_s", "fct_p999_s", "goodput_bps",
                                        NULL};
    for (size_t i = 0; order[i]; i++)
        json_object_set(sum, order[i], json_object_get(fl, order[i]));
    json_object_update(sum, li);
    json_object_set(sum, "retransmits", json_object_get(fl, "retransmits"));
    json_object_set(sum, "timeouts", json_object_get(fl, "timeouts"));
    /* Conservation: every packet still allocated is inside the network. */
    json_object_set_new(sum, "packets_in_network_at_end",
                        json_integer((json_int_t)topo_packets_in_network(n->t)));
    json_object_set_new(sum, "packets_allocated_at_end",
                        json_integer((json_int_t)pkt_pool_live(n->pool)));
    topo_bytes tb;
    if (n->cfg.plane == NET_PLANE_FLOW)
        flownet_bytes(n, &tb);      /* no packets: the flows' own bytes */
    else
        topo_byte_counts(n->t, &tb);
    json_object_set_new(sum, "bytes_injected", json_integer((json_int_t)tb.injected));
    json_object_set_new(sum, "bytes_delivered", json_integer((json_int_t)tb.delivered));
    json_object_set_new(sum, "bytes_dropped", json_integer((json_int_t)tb.dropped));
    json_object_set_new(sum, "bytes_in_network_at_end",
                        json_integer((json_int_t)tb.in_network));
    json_object_set(sum, "fct_by_size", json_object_get(fl, "fct_by_size"));
    json_decref(fl);
    json_decref(li);
    for (size_t i = 0; i < n->nexts && !r; i++)
        r = n->exts[i].ops->report(n->exts[i].st, o, sum, e);
    return r;
}

/* The figures of these tables, and of the incast workload's incast.csv
 * (plot skips the tables a run does not have). */
const plot_spec network_plots[] = {
    {.csv = "queues.csv", .x = "time_s", .y = "bytes", .group = "port",
     .title = "queue occupancy", .out = "queues", .xlabel = "simulated time (s)",
     .ylabel = "bytes queued"},
    {.csv = "incast.csv", .x = "round", .y = "goodput_bps", .title = "incast goodput per round",
     .out = "incast", .ylabel = "goodput (bit/s)"},
    {.csv = "queues.csv", .x = "time_s", .y = "tx_bps", .group = "port",
     .title = "port throughput", .out = "throughput", .xlabel = "simulated time (s)",
     .ylabel = "bit/s over the sample interval"},
    {.csv = "flows.csv", .x = "id", .y = "fct_s", .title = "flow completion times",
     .out = "flows", .xlabel = "flow id", .ylabel = "FCT (s)"},
    {.csv = "fct_cdf.csv", .x = "slowdown", .y = "cdf", .group = "bucket",
     .title = "FCT slowdown CDF by flow size", .out = "slowdown_cdf",
     .xlabel = "FCT / ideal FCT", .ylabel = "fraction of flows"},
    {.csv = "fct_cdf.csv", .x = "fct_s", .y = "cdf", .group = "bucket",
     .title = "FCT CDF by flow size", .out = "fct_cdf", .xlabel = "FCT (s)",
     .ylabel = "fraction of flows", .logx = 1},
    {0},
};
