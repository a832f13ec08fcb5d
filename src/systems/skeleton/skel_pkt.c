/*
 * skel_pkt.c - SkeletonHunter's probes as packets (skel_pkt.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/skeleton.h"
#include "aisim/topo.h"
#include "aisim/units.h"
#include "systems/skeleton/skel_pkt.h"

static void on_reply(void *ctx, network *n, const net_msg *m)
{
    skel_prober *pr = ctx;
    skel_pprobe *p = &pr->p[m->tag];
    if (!m->aborted)
        p->rtt_ps = sim_now(network_sim(n)) - p->sent_ps;
}

static void on_request(void *ctx, network *n, const net_msg *m)
{
    skel_prober *pr = ctx;
    if (m->aborted)
        return;
    pr->p[m->tag].req_ps = sim_now(network_sim(n)) - pr->p[m->tag].sent_ps;
    network_send(n, m->dst, m->src, pr->bytes, m->prio, m->tag, sim_now(network_sim(n)), on_reply,
                 pr);
}

void skel_prober_plan(skel_prober *pr, size_t neps, const uint32_t *off, const uint32_t *idx,
                      int rounds)
{
    int64_t now = sim_now(network_sim(pr->n));
    for (int k = 0; k < rounds; k++)
        for (size_t e = 0; e < neps; e++) {
            uint32_t m = off[e + 1] - off[e];
            if (!m)
                continue;
            if (pr->np == pr->cap) {
                pr->cap = pr->cap ? 2 * pr->cap : 256;
                pr->p = xrealloc(pr->p, pr->cap * sizeof *pr->p);
            }
            int64_t at = now + k * pr->interval_ps +
                         (int64_t)((double)pr->interval_ps * (double)e / (double)neps);
            int32_t dst = (int32_t)idx[off[e] + (uint32_t)k % m];
            size_t i = pr->np++;
            pr->p[i] = (skel_pprobe){.src = (int32_t)e, .dst = dst, .sent_ps = at, .rtt_ps = -1,
                                     .req_ps = -1};
            network_send(pr->n, (int)e, dst, pr->bytes, 0, (int64_t)i, at, on_request, pr);
        }
}

bool skel_pprobe_bad(const skel_prober *pr, const skel_pprobe *p)
{
    return p->rtt_ps < 0 || p->rtt_ps > pr->timeout_ps || p->rtt_ps > pr->slow_ps;
}

/* The directed hops that every equal-cost path from a to b crosses (into
 * el, at most cap); returns the count. */
static size_t common_hops(topo *t, int a, int b, int32_t *el, size_t cap)
{
    size_t m = 0, np;
    const route *const *rs = topo_paths(t, a, b, &np);
    if (!np)
        return 0;
    size_t n0;
    const int32_t *p0 = topo_route_path(t, rs[0], &n0);
    for (size_t i = 0; i < n0; i++) {
        bool all = true;
        for (size_t r = 1; r < np && all; r++) {
            size_t nr;
            const int32_t *pr = topo_route_path(t, rs[r], &nr);
            bool in = false;
            for (size_t j = 0; j < nr; j++)
                in |= pr[j] == p0[i];
            all = in;
        }
        if (all && m < cap)
            el[m++] = p0[i];
    }
    return m;
}

/* The legs of a probe that vote: the request (src -> dst; lost or late
 * when it did not reach dst in time) and, if the request arrived, the
 * reply (dst -> src).  A slow round trip counts against both legs (the
 * packets do not say which was slow).  Returns the legs (0..2). */
static int legs(const skel_prober *pr, const skel_pprobe *p, int from[2], int to[2], bool bad[2])
{
    bool req = p->req_ps >= 0 && p->req_ps <= pr->timeout_ps;
    bool slow = p->rtt_ps > pr->slow_ps;
    from[0] = p->src;
    to[0] = p->dst;
    bad[0] = !req || slow;
    if (!req)
        return 1;
    from[1] = p->dst;
    to[1] = p->src;
    bad[1] = skel_pprobe_bad(pr, p);
    return 2;
}

int32_t skel_pkt_localize(const skel_prober *pr, size_t from, size_t to, size_t *bad)
{
    topo *t = network_topo(pr->n);
    size_t nh = 2 * topo_links(t);
    skel_votes v;
    skel_votes_init(&v, nh);
    int32_t el[32];
    int a[2], b[2];
    bool lb[2];
    *bad = 0;
    for (size_t i = from; i < to; i++) {
        const skel_pprobe *p = &pr->p[i];
        int nl = legs(pr, p, a, b, lb);
        for (int k = 0; k < nl; k++)
            skel_votes_add(&v, el, common_hops(t, a[k], b[k], el, 32), lb[k]);
        *bad += skel_pprobe_bad(pr, p);
    }
    uint32_t *tally = xcalloc(nh, sizeof *tally);
    int32_t best = -1;
    for (size_t i = from; i < to; i++) {
        int nl = legs(pr, &pr->p[i], a, b, lb);
        for (int k = 0; k < nl; k++) {
            if (!lb[k])
                continue;
            size_t m = common_hops(t, a[k], b[k], el, 32);
            int32_t c = skel_votes_culprit(&v, el, NULL, m, true);
            if (c >= 0 && (++tally[c] > (best >= 0 ? tally[best] : 0) ||
                           (tally[c] == tally[best] && c < best)))
                best = c;
        }
    }
    free(tally);
    skel_votes_fini(&v);
    return best;
}

void skel_prober_fini(skel_prober *pr)
{
    free(pr->p);
    memset(pr, 0, sizeof *pr);
}

/* ---- the `packets` experiment ------------------------------------------- */

int skel_pktexp_configure(skel_pktexp *x, cfg_node *net, const char *path, const model_env *env,
                          int servers, int gpus, int per_tor, int rounds, err *e)
{
    int r = network_from_section(&x->n, net, path, env, e);
    if (r)
        return r;
    size_t n = network_endpoints(x->n);
    if (n != (size_t)servers * (size_t)gpus) {
        char p[300];
        return cfg_err(e, AISIM_EINVAL, cfg_get(net, "topology"), cfg_path(p, sizeof p, path,
                       "topology"), "expected servers x gpus_per_server = %d endpoints (a "
                       "rail fabric of the skeleton's servers), found %zu",
                       servers * gpus, n);
    }
    skel_ep *v = xmalloc(n * sizeof *v);
    for (size_t l = 0; l < n; l++)
        v[l] = (skel_ep){.host = (int32_t)(l / (size_t)gpus), .rail = (int32_t)(l % (size_t)gpus),
                         .tor = (int32_t)((l / (size_t)gpus / (size_t)per_tor) * (size_t)gpus +
                                          l % (size_t)gpus)};
    x->neps = n;
    x->off = xmalloc((n + 1) * sizeof *x->off);
    x->idx = xmalloc(n * n * sizeof *x->idx);
    x->off[0] = 0;
    for (size_t l = 0; l < n; l++)
        x->off[l + 1] = x->off[l] + (uint32_t)skel_targets(v, n, l, SKEL_LIST_BASIC,
                                                           x->idx + x->off[l]);
    free(v);
    x->rounds = rounds;
    x->pr = (skel_prober){.n = x->n, .bytes = 64, .interval_ps = PS_PER_S,
                          .timeout_ps = PS_PER_S, .slow_ps = 100 * PS_PER_US};
    return 0;
}

static void pk_stop(sim *s, void *obj, uint64_t arg)
{
    (void)obj;
    (void)arg;
    sim_stop(s);
}

void skel_pktexp_start(skel_pktexp *x)
{
    network_start(x->n);
    skel_prober_plan(&x->pr, x->neps, x->off, x->idx, x->rounds);
    sim *s = network_sim(x->n);
    sim_schedule(s, sim_now(s) + (int64_t)x->rounds * x->pr.interval_ps + x->pr.timeout_ps,
                 pk_stop, x, 0);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int skel_pktexp_report(skel_pktexp *x, out *o, json_t *sum, err *e)
{
    int r = network_report(x->n, o, sum, e);
    if (r)
        return r;
    FILE *f = out_file(o, "probes.csv", e);
    if (!f)
        return e->code ? e->code : AISIM_EIO;
    topo *t = network_topo(x->n);
    fprintf(f, "sent_s,src,dst,request_us,rtt_us,anomalous\n");
    const skel_prober *pr = &x->pr;
    int64_t *ok = xmalloc((pr->np + 1) * sizeof *ok);
    size_t nok = 0, first = pr->np, lost = 0;
    for (size_t i = 0; i < pr->np; i++) {
        const skel_pprobe *p = &pr->p[i];
        bool bad = skel_pprobe_bad(pr, p);
        char a[40], b[40];
        out_fmt_double(a, sizeof a, p->req_ps >= 0 ? (double)p->req_ps / PS_PER_US : NAN);
        out_fmt_double(b, sizeof b, p->rtt_ps >= 0 ? (double)p->rtt_ps / PS_PER_US : NAN);
        fprintf(f, "%.6f,%s,%s,%s,%s,%d\n", (double)p->sent_ps / PS_PER_S,
                topo_node_name(t, topo_host_node(t, p->src)),
                topo_node_name(t, topo_host_node(t, p->dst)), p->req_ps >= 0 ? a : "",
                p->rtt_ps >= 0 ? b : "", bad);
        if (!bad)
            ok[nok++] = p->rtt_ps;
        else {
            lost += p->rtt_ps < 0;
            if (first == pr->np)
                first = i;
        }
    }
    json_t *j = json_object();
    json_object_set_new(j, "probes", json_integer((json_int_t)pr->np));
    json_object_set_new(j, "anomalous", json_integer((json_int_t)(pr->np - nok)));
    json_object_set_new(j, "lost", json_integer((json_int_t)lost));
    qsort(ok, nok, sizeof *ok, cmp_i64);
    out_json_num(j, "rtt_median_us", nok ? (double)ok[nok / 2] / PS_PER_US : NAN);
    out_json_num(j, "rtt_max_us", nok ? (double)ok[nok - 1] / PS_PER_US : NAN);
    free(ok);
    if (first < pr->np) {
        out_json_num(j, "first_anomaly_s", (double)pr->p[first].sent_ps / PS_PER_S);
        size_t bad;
        int32_t hop = skel_pkt_localize(pr, first, pr->np, &bad);
        if (hop >= 0) {
            int a, b;
            topo_link_ends(t, hop / 2, &a, &b);
            char nm[200];
            snprintf(nm, sizeof nm, "%s->%s", topo_node_name(t, hop % 2 ? b : a),
                     topo_node_name(t, hop % 2 ? a : b));
            json_object_set_new(j, "localized_port", json_string(nm));
        } else
            json_object_set_new(j, "localized_port", json_null());
    }
    json_object_set_new(sum, "packets", j);
    return 0;
}

void skel_pktexp_fini(skel_pktexp *x)
{
    network_destroy(x->n);
    skel_prober_fini(&x->pr);
    free(x->off);
    free(x->idx);
    memset(x, 0, sizeof *x);
}
