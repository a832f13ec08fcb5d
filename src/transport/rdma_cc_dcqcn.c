/*
 * rdma_cc_dcqcn.c - DCQCN (Zhu et al., SIGCOMM 2015), the reaction point,
 * with the defaults of the HPCC ns-3 fork (docs/rdma.md).
 *
 * A QP starts at start_rate x line rate.  On a CNP: alpha = (1-g) alpha +
 * g, target = current, current = current (1 - alpha/2), and both increase
 * counters restart.  Without CNPs alpha decays by (1-g) per alpha interval
 * (computed when next needed: the same value as a timer per interval,
 * without its events).  The rate timer (every `timer`) and the byte counter
 * (every `byte_counter` bytes sent) each count increase events; with both
 * counts below F the current rate recovers halfway to the target (fast
 * recovery), with one at F or more the target grows by Rai (additive), with
 * both above F by i x Rhai (hyper, i the smaller count minus F); the current
 * rate then moves halfway to the target.
 */
#include <math.h>

#include "rdma_int.h"

typedef struct dcqcn {
    double rc, rt, alpha;       /* current and target rate (bps), alpha */
    int64_t alpha_t0;           /* alpha is current as of this time */
    int64_t timer_n, byte_n;    /* increase events since the last decrease */
    int64_t bytes;              /* sent since the last byte-counter event */
    sim_timer timer;
    rdma_qp *qp;
} dcqcn;

static void set_rate(rdma_qp *qp, dcqcn *d)
{
    qp->rate_bps = rdma_clamp_rate(qp, d->rc);
    d->rc = (double)qp->rate_bps;
}

static void increase(rdma_qp *qp, dcqcn *d)
{
    const rdma_keys *k = qp->k;
    int64_t F = k->dcqcn_fast_recovery;
    int64_t lo = d->timer_n < d->byte_n ? d->timer_n : d->byte_n;
    int64_t hi = d->timer_n > d->byte_n ? d->timer_n : d->byte_n;
    if (hi < F) {
        /* fast recovery: target unchanged */
    } else if (lo > F) {
        d->rt += (double)(lo - F) * (double)k->dcqcn_rhai_bps;
    } else {
        d->rt += (double)k->dcqcn_rai_bps;
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
    if (d->rc < (double)qp->line_bps)
        sim_timer_arm(s, &d->timer, sim_now(s) + qp->k->dcqcn_timer_ps);
}

static void init(rdma_qp *qp, void *st)
{
    dcqcn *d = st;
    d->qp = qp;
    d->alpha = 1;
    d->rc = d->rt = (double)qp->line_bps * qp->k->dcqcn_start_rate;
    d->alpha_t0 = sim_now(qp->c.s);
    sim_timer_init(&d->timer, on_timer, d, 0);
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
    int64_t periods = (now - d->alpha_t0) / k->dcqcn_alpha_interval_ps;
    if (periods > 0) {
        d->alpha *= pow(1 - k->dcqcn_g, (double)periods);
        d->alpha_t0 += periods * k->dcqcn_alpha_interval_ps;
    }
    d->alpha = (1 - k->dcqcn_g) * d->alpha + k->dcqcn_g;
    d->rt = d->rc;
    d->rc *= 1 - d->alpha / 2;
    d->timer_n = d->byte_n = 0;
    d->bytes = 0;
    set_rate(qp, d);
    sim_timer_arm(qp->c.s, &d->timer, now + k->dcqcn_timer_ps);
}

static void stop(rdma_qp *qp, void *st)
{
    dcqcn *d = st;
    sim_timer_disarm(qp->c.s, &d->timer);
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
