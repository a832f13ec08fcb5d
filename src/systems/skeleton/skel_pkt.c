/*
 * skel_pkt.c - SkeletonHunter's probes as packets (skel_pkt.h).
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/skeleton.h"
#include "aisim/topo.h"
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
