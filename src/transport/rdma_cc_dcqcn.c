/*
 * rdma_cc_dcqcn.c - DCQCN (Zhu et al., SIGCOMM 2015), the reaction point,
 * as the HPCC ns-3 fork runs it (its "Mellanox version", CC_MODE 1), with
 * its defaults (docs/rdma.md lists each with its source).
 *
 * A QP starts at start_rate x line rate, target = current.  Its first CNP
 * sets alpha to 1 and starts two clocks: alpha's (every alpha_interval) and
 * the decrease check's (every decrease_interval, 1 ns after alpha's so that
 * alpha is current).  At each alpha tick alpha = (1-g) alpha, plus g if a
 * CNP arrived since the previous tick (the first CNP does not count).  At
 * each decrease tick with a CNP since the previous one: the target becomes
 * the current rate unless no increase happened since the last decrease
 * (clamp_target off: consecutive cuts keep the target where it was),
 * current = max(min_rate, current (1 - alpha/2)), and the increase stage
 * and the rate timer restart.  Both clocks are computed when needed (alpha
 * from the ticks elapsed, the decrease tick armed only when a CNP waits):
 * the same values as periodic timers, without their idle events.
 *
 * The rate timer fires every `timer`; stage = timer events since the last
 * decrease, counted after the event as the fork does: stage < F fast
 * recovery (target unchanged), stage == F additive (target + Rai), above
 * hyper (target + Rhai); the target is capped at the line rate and the
 * current rate moves halfway to it.  With a byte counter (the DCQCN paper's
 * B; the fork has none, so 0 by default) the paper's rule applies instead:
 * T and BC count timer and byte events, max(T, BC) < F fast recovery,
 * min(T, BC) > F hyper by (min - F) x Rhai, else additive.
 */
#include <math.h>

#include "rdma_int.h"

typedef struct dcqcn {
    double rc, rt, alpha;       /* current and target rate (bps), alpha */
    bool started;               /* a CNP arrived: the clocks run */
    bool alpha_cnp, dec_cnp;    /* a CNP since the last alpha / decrease tick */
    int64_t alpha_next;         /* the next alpha tick */
    int64_t dec0, dec_last;     /* a decrease tick (the clock's phase), the last run */
    int64_t timer_n, byte_n;    /* increase events since the last decrease */
    int64_t bytes;              /* sent since the last byte-counter event */
    sim_timer timer, dec;
    rdma_qp *qp;
} dcqcn;

static void set_rate(rdma_qp *qp, dcqcn *d)
{
    qp->rate_bps = rdma_clamp_rate(qp, d->rc);
    if (d->rc > (double)qp->line_bps)
        d->rc = (double)qp->line_bps;
    if (d->rc < (double)qp->k->min_rate_bps)
        d->rc = (double)qp->k->min_rate_bps;
}

/* Brings alpha to time now: the ticks up to and including now. */
static void alpha_sync(dcqcn *d, const rdma_keys *k, int64_t now)
{
    if (now < d->alpha_next)
        return;
    int64_t n = (now - d->alpha_next) / k->dcqcn_alpha_interval_ps + 1;
    d->alpha = (1 - k->dcqcn_g) * d->alpha + (d->alpha_cnp ? k->dcqcn_g : 0);
    if (n > 1)
        d->alpha *= pow(1 - k->dcqcn_g, (double)(n - 1));
    d->alpha_cnp = false;
    d->alpha_next += n * k->dcqcn_alpha_interval_ps;
}

static void increase(rdma_qp *qp, dcqcn *d)
{
    const rdma_keys *k = qp->k;
    int64_t F = k->dcqcn_fast_recovery;
    if (!k->dcqcn_byte_counter) {
        int64_t stage = d->timer_n - 1;         /* the fork counts after the event */
        if (stage == F)
            d->rt += (double)k->dcqcn_rai_bps;
        else if (stage > F)
            d->rt += (double)k->dcqcn_rhai_bps;
    } else {
        int64_t lo = d->timer_n < d->byte_n ? d->timer_n : d->byte_n;
        int64_t hi = d->timer_n > d->byte_n ? d->timer_n : d->byte_n;
        if (hi < F) {
            /* fast recovery: target unchanged */
        } else if (lo > F) {
            d->rt += (double)(lo - F) * (double)k->dcqcn_rhai_bps;
        } else {
            d->rt += (double)k->dcqcn_rai_bps;
        }
    }
    if (d->rt > (double)qp->line_bps)
        d->rt = (double)qp->line_bps;
    d->rc = (d->rt + d->rc) / 2;
    set_rate(qp, d);
}

static void on_timer(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    dcqcn *d = obj;
    rdma_qp *qp = d->qp;
    d->timer_n++;
    increase(qp, d);
    /* at the line rate the fork's timer only counts stages, which a
     * decrease resets: nothing to do until then */
    if (d->rc < (double)qp->line_bps)
        sim_timer_arm(s, &d->timer, sim_now(s) + qp->k->dcqcn_timer_ps);
}

/* The decrease tick with a CNP pending. */
static void on_decrease(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    dcqcn *d = obj;
    rdma_qp *qp = d->qp;
    const rdma_keys *k = qp->k;
    int64_t now = sim_now(s);
    d->dec_last = now;
    if (!d->dec_cnp)
        return;
    d->dec_cnp = false;
    alpha_sync(d, k, now);
    if (k->dcqcn_clamp_target || d->timer_n + d->byte_n > 0)
        d->rt = d->rc;
    d->rc *= 1 - d->alpha / 2;
    if (qp->st_cuts++ && now - qp->last_cut_ps < qp->cut_min_gap_ps)
        qp->cut_min_gap_ps = now - qp->last_cut_ps;
    qp->last_cut_ps = now;
    d->timer_n = d->byte_n = 0;
    d->bytes = 0;
    set_rate(qp, d);
    sim_timer_arm(s, &d->timer, now + k->dcqcn_timer_ps);
}

static void init(rdma_qp *qp, void *st)
{
    dcqcn *d = st;
    d->qp = qp;
    d->alpha = 1;
    qp->cut_min_gap_ps = INT64_MAX;
    d->rc = d->rt = (double)qp->line_bps * qp->k->dcqcn_start_rate;
    sim_timer_init(&d->timer, on_timer, d, 0);
    sim_timer_init(&d->dec, on_decrease, d, 0);
    set_rate(qp, d);
}

static void on_send(rdma_qp *qp, void *st, const pkt *p)
{
    dcqcn *d = st;
    if (!qp->k->dcqcn_byte_counter || d->rc >= (double)qp->line_bps)
        return;
    d->bytes += p->size_bytes;
    if (d->bytes >= qp->k->dcqcn_byte_counter) {
        d->bytes = 0;
        d->byte_n++;
        increase(qp, d);
    }
}

static void on_cnp(rdma_qp *qp, void *st)
{
    dcqcn *d = st;
    const rdma_keys *k = qp->k;
    int64_t now = sim_now(qp->c.s);
    int64_t D = k->dcqcn_decrease_interval_ps;
    d->dec_cnp = true;
    if (!d->started) {
        /* the fork's first CNP: alpha = 1, this CNP not counted in it */
        d->started = true;
        d->alpha = 1;
        d->alpha_cnp = false;
        d->alpha_next = now + k->dcqcn_alpha_interval_ps;
        d->dec0 = now + D + 1000;               /* 1 ns after alpha's tick */
        d->dec_last = INT64_MIN;
        sim_timer_arm(qp->c.s, &d->dec, d->dec0);
        return;
    }
    alpha_sync(d, k, now);
    d->alpha_cnp = true;
    if (sim_timer_armed(qp->c.s, &d->dec))
        return;
    /* the next tick of the decrease clock not yet run */
    int64_t t = now <= d->dec0 ? d->dec0 : d->dec0 + (now - d->dec0 + D - 1) / D * D;
    if (t <= d->dec_last)
        t += D;
    sim_timer_arm(qp->c.s, &d->dec, t);
}

static void stop(rdma_qp *qp, void *st)
{
    dcqcn *d = st;
    sim_timer_disarm(qp->c.s, &d->timer);
    sim_timer_disarm(qp->c.s, &d->dec);
}

const rdma_cc_ops rdma_cc_dcqcn = {
    .name = "dcqcn",
    .state_size = sizeof(dcqcn),
    .init = init,
    .on_send = on_send,
    .on_ack = rdma_cc_nop_ack,
    .on_cnp = on_cnp,
    .on_nack = rdma_cc_nop,
    .stop = stop,
};
