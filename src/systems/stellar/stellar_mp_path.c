/*
 * stellar_mp_path.c - the paths of one QP and the choice of a path per
 * packet (stellar_mp.h): the common per-path state every algorithm reads,
 * path avoidance, the entropy of a path, and the six algorithms of the
 * paper's section 7.2, each a small ops table.
 *
 * Per-path state is updated by the core from feedback: an ACK updates the
 * path's smoothed RTT and ECN fraction (EWMA, gain path_g), clears its run
 * of timeouts and decrements what it has in flight; a loss decrements it
 * too, and a timeout counts toward avoidance: `avoid_after` timeouts in a
 * row without an ACK in between avoid the path for `avoid_ps` (papers.md
 * 2(f): 3 RTOs, 10 ms).  When every path is avoided the choice ignores
 * avoidance (a QP must be able to send).
 *
 * The algorithms [I where the paper gives no rule; docs/stellar.md]:
 *  - single: the path key mod paths, always (ECMP on the QP hash);
 *  - rr: the next eligible path in index order;
 *  - obs: a path uniformly at random from the QP's own stream, drawn again
 *    (from the eligible ones) when avoided;
 *  - bestrtt: the eligible path of least smoothed RTT (paths with no
 *    sample first; on ties the one with least in flight, then the lowest
 *    index): greedy, so it piles onto few paths, as the paper observes;
 *  - dwrr: deficit weighted round robin; a path's quantum is one MSS
 *    scaled by min RTT / its RTT and by (1 - ecn / 2);
 *  - mprdma: MP-RDMA's per-path ECN-driven windows (Lu et al., NSDI 2018):
 *    +1/cwnd per unmarked ACK, -1/2 per marked one, floor 1; a packet goes
 *    on the next eligible path (round-robin order) with room for it
 *    (cwnd - inflight >= 1), or, when none has, on the one with most room
 *    (the QP's shared window, not the paths', limits what is in flight).
 * Cost: O(1) for single, rr (when nothing is avoided) and obs; O(paths) for
 * bestrtt, dwrr's refill and mprdma.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/pkt.h"
#include "aisim/stellar_mp.h"

void smp_paths_init(smp_paths *ps, const smp_path_ops *ops, const smp_params *pr, uint64_t key,
                    uint64_t seed, uint64_t qp)
{
    memset(ps, 0, sizeof *ps);
    ps->ops = ops;
    ps->pr = pr;
    ps->n = pr->paths;
    ps->key = key;
    ps->exclude = -1;
    rng_init(&ps->r, seed, "stellar.mp.path", qp);
    ps->p = xcalloc(ps->n, sizeof *ps->p);
    for (uint32_t i = 0; i < ps->n; i++)
        ps->p[i].cwnd = 1.0;
}

void smp_paths_set_planes(smp_paths *ps, uint32_t planes)
{
    ps->planes = planes > 1 && !ps->ops->pinned && ps->n >= 2 * planes ? planes : 0;
    ps->plane = 0;
}

void smp_paths_fini(smp_paths *ps)
{
    free(ps->p);
    ps->p = NULL;
}

static uint32_t pinned_path(const smp_paths *ps) { return (uint32_t)(ps->key % ps->n); }

uint32_t smp_path_choose(smp_paths *ps, uint32_t bytes, int64_t now_ps, int32_t exclude)
{
    if (ps->ops->pinned)
        return pinned_path(ps);
    ps->now_ps = now_ps;
    ps->exclude = ps->n > 1 ? exclude : -1;
    ps->ignore_avoid = false;
    uint32_t ok = 0;
    for (uint32_t i = 0; i < ps->n && !ok; i++)
        ok += smp_path_ok(ps, i);
    if (!ok)
        ps->ignore_avoid = true;
    uint32_t i = ps->ops->choose(ps, bytes);
    ps->exclude = -1;
    return i;
}

uint64_t smp_path_sent(smp_paths *ps, uint32_t i)
{
    smp_path *p = &ps->p[i];
    p->sent++;
    p->inflight++;
    return p->tx_seq++;
}

static void ewma_rtt(smp_path *p, int64_t rtt_ps, double g)
{
    if (rtt_ps <= 0)
        return;
    p->srtt_ps = p->srtt_ps ? p->srtt_ps + (int64_t)llround(g * (double)(rtt_ps - p->srtt_ps))
                            : rtt_ps;
}

void smp_path_ack(smp_paths *ps, uint32_t i, int64_t rtt_ps, bool ce, bool counted, int64_t now_ps)
{
    (void)now_ps;
    smp_path *p = &ps->p[i];
    double g = ps->pr->path_g;
    p->acked++;
    p->marked += ce;
    if (counted && p->inflight)
        p->inflight--;
    p->consec_to = 0;
    ewma_rtt(p, rtt_ps, g);
    p->ecn += g * ((ce ? 1.0 : 0.0) - p->ecn);
    if (ps->ops->on_ack)
        ps->ops->on_ack(ps, i, ce);
}

void smp_path_lost(smp_paths *ps, uint32_t i, bool timeout, int64_t now_ps)
{
    smp_path *p = &ps->p[i];
    p->lost++;
    if (p->inflight)
        p->inflight--;
    if (!timeout)
        return;
    p->timeouts++;
    if (++p->consec_to >= ps->pr->avoid_after) {
        p->consec_to = 0;
        p->avoid_until_ps = now_ps + ps->pr->avoid_ps;
        p->avoided++;
    }
}

/* A 32-bit mix of the QP key and a path index: the per-path source port
 * whose hash switches take (distinct paths may collide, as in ECMP). */
static uint32_t path_hash(uint64_t key, uint32_t i)
{
    uint64_t x = key ^ ((uint64_t)i * 0x9e3779b97f4a7c15u);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdu;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53u;
    x ^= x >> 33;
    return (uint32_t)x;
}

uint32_t smp_path_entropy(const smp_paths *ps, uint32_t i, uint16_t *flags)
{
    if (ps->pr->out == SMP_OUT_PATHIDX) {
        /* Consecutive indices from a per-QP offset: a QP's paths are
         * distinct routes, and different QPs' first paths differ. */
        *flags = PKT_F_PATHIDX;
        return path_hash(ps->key, UINT32_MAX) + i;
    }
    *flags = 0;
    return path_hash(ps->key, i);
}

/* ---- the algorithms ---- */

/* The first eligible path at or after `from` (one exists). */
static uint32_t next_ok(const smp_paths *ps, uint32_t from)
{
    for (uint32_t k = 0; k < ps->n; k++) {
        uint32_t i = (from + k) % ps->n;
        if (smp_path_ok(ps, i))
            return i;
    }
    return from % ps->n;
}

static uint32_t single_choose(smp_paths *ps, uint32_t bytes)
{
    (void)bytes;
    return pinned_path(ps);
}

static uint32_t rr_choose(smp_paths *ps, uint32_t bytes)
{
    (void)bytes;
    uint32_t i = next_ok(ps, ps->next);
    ps->next = (i + 1) % ps->n;
    return i;
}

static uint32_t obs_choose(smp_paths *ps, uint32_t bytes)
{
    (void)bytes;
    uint32_t i;
    if (ps->planes > 1)         /* uniform over the sending port's paths */
        i = ps->plane + ps->planes * (uint32_t)rng_below(&ps->r, (ps->n - ps->plane +
                                                                  ps->planes - 1) / ps->planes);
    else
        i = (uint32_t)rng_below(&ps->r, ps->n);
    if (smp_path_ok(ps, i))
        return i;
    /* Avoided or excluded: a fresh draw among the eligible paths. */
    uint32_t ok = 0;
    for (uint32_t k = 0; k < ps->n; k++)
        ok += smp_path_ok(ps, k);
    uint32_t pick = (uint32_t)rng_below(&ps->r, ok);
    for (uint32_t k = 0; k < ps->n; k++)
        if (smp_path_ok(ps, k) && pick-- == 0)
            return k;
    return i;
}

static uint32_t bestrtt_choose(smp_paths *ps, uint32_t bytes)
{
    (void)bytes;
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < ps->n; i++) {
        if (!smp_path_ok(ps, i))
            continue;
        const smp_path *a = &ps->p[i], *b = best == UINT32_MAX ? NULL : &ps->p[best];
        if (!b || a->srtt_ps < b->srtt_ps ||
            (a->srtt_ps == b->srtt_ps && a->inflight < b->inflight))
            best = i;
    }
    return best;
}

/* DWRR's quantum of path i: one MSS scaled down by its RTT against the
 * best path's and by its ECN fraction. */
static int64_t dwrr_quantum(const smp_paths *ps, uint32_t i, int64_t min_rtt)
{
    const smp_path *p = &ps->p[i];
    double w = 1.0;
    if (p->srtt_ps > 0 && min_rtt > 0)
        w = (double)min_rtt / (double)p->srtt_ps;
    w *= 1.0 - p->ecn / 2;
    int64_t q = (int64_t)llround(w * ps->pr->mss_bytes);
    return q > 0 ? q : 1;
}

static uint32_t dwrr_choose(smp_paths *ps, uint32_t bytes)
{
    int64_t min_rtt = 0;
    for (uint32_t i = 0; i < ps->n; i++)
        if (ps->p[i].srtt_ps > 0 && (!min_rtt || ps->p[i].srtt_ps < min_rtt))
            min_rtt = ps->p[i].srtt_ps;
    /* Visit paths from the pointer; the pointer stays on a path while its
     * deficit covers the packet, and a path gets its quantum as the
     * pointer arrives on it.  Bounded: each round adds >= 1 byte. */
    for (;;) {
        uint32_t i = ps->next;
        smp_path *p = &ps->p[i];
        if (smp_path_ok(ps, i) && p->deficit >= (int64_t)bytes) {
            p->deficit -= bytes;
            return i;
        }
        if (!smp_path_ok(ps, i) && smp_path_on_plane(ps, i))
            p->deficit = 0;     /* avoided or excluded (another port's keeps its credit) */
        ps->next = (i + 1) % ps->n;
        smp_path *q = &ps->p[ps->next];
        if (smp_path_ok(ps, ps->next))
            q->deficit += dwrr_quantum(ps, ps->next, min_rtt);
    }
}

static uint32_t mprdma_choose(smp_paths *ps, uint32_t bytes)
{
    (void)bytes;
    uint32_t best = UINT32_MAX;
    double room = 0;
    for (uint32_t k = 0; k < ps->n; k++) {
        uint32_t i = (ps->next + k) % ps->n;
        if (!smp_path_ok(ps, i))
            continue;
        double r = ps->p[i].cwnd - (double)ps->p[i].inflight;
        if (r >= 1.0) {             /* the next path with room, in turn */
            best = i;
            break;
        }
        if (best == UINT32_MAX || r > room) {
            best = i;
            room = r;
        }
    }
    ps->next = (best + 1) % ps->n;
    return best;
}

static void mprdma_ack(smp_paths *ps, uint32_t i, bool ce)
{
    smp_path *p = &ps->p[i];
    p->cwnd += ce ? -0.5 : 1.0 / p->cwnd;
    if (p->cwnd < 1.0)
        p->cwnd = 1.0;
}

const smp_path_ops smp_single = {
    .name = "single", .summary = "one path per QP: ECMP on the QP hash", .pinned = true,
    .choose = single_choose};
const smp_path_ops smp_rr = {
    .name = "rr", .summary = "round robin over the paths", .choose = rr_choose};
const smp_path_ops smp_obs = {
    .name = "obs", .summary = "oblivious spraying: a uniformly random path per packet",
    .choose = obs_choose};
const smp_path_ops smp_bestrtt = {
    .name = "bestrtt", .summary = "the path of least smoothed RTT", .choose = bestrtt_choose};
const smp_path_ops smp_dwrr = {
    .name = "dwrr", .summary = "deficit weighted round robin, weights from RTT and ECN",
    .choose = dwrr_choose};
const smp_path_ops smp_mprdma = {
    .name = "mprdma", .summary = "MP-RDMA-style per-path ECN-driven windows",
    .choose = mprdma_choose, .on_ack = mprdma_ack};

static const smp_path_ops *const all_ops[] = {&smp_single, &smp_rr,   &smp_obs, &smp_bestrtt,
                                              &smp_dwrr,   &smp_mprdma, NULL};

const smp_path_ops *const *smp_path_all(void) { return all_ops; }

const smp_path_ops *smp_path_find(const char *name)
{
    for (const smp_path_ops *const *o = all_ops; *o; o++)
        if (!strcmp((*o)->name, name))
            return *o;
    return NULL;
}
