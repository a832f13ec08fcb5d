/*
 * rdma_cc_timely.c - TIMELY (Mittal et al., SIGCOMM 2015): rate control
 * from the RTT's gradient, with the HPCC ns-3 fork's defaults.
 *
 * Each ACK echoes its data packet's send time, giving an RTT sample.  Once
 * per RTT (when the ACK passes the PSN sent at the last update): the RTT
 * difference is smoothed (rtt_diff = (1 - alpha) rtt_diff + alpha (rtt -
 * prev_rtt)) and normalised by min_rtt; below t_low the rate grows by
 * delta (= dcqcn_rai), above t_high it shrinks by beta (1 - t_high / rtt),
 * otherwise a gradient <= 0 grows it by delta (n delta after hai_n such
 * updates in a row: hyper increase) and a positive one shrinks it by beta
 * x gradient.
 */
#include "rdma_int.h"

typedef struct timely {
    double rate, rtt_diff;
    int64_t prev_rtt;
    int64_t neg_n;
    uint64_t update_psn;
} timely;

static void init(rdma_qp *qp, void *st)
{
    timely *t = st;
    t->rate = (double)qp->line_bps;
    t->prev_rtt = -1;
    qp->rate_bps = qp->line_bps;
}

static void on_ack(rdma_qp *qp, void *st, const pkt *a, uint64_t newly)
{
    (void)newly;
    timely *t = st;
    const rdma_keys *k = qp->k;
    if (!a->h.rdma.ts_ps || a->seq <= t->update_psn)
        return;
    t->update_psn = qp->snd_nxt;
    int64_t rtt = sim_now(qp->c.s) - (int64_t)a->h.rdma.ts_ps;
    if (t->prev_rtt < 0) {
        t->prev_rtt = rtt;
        return;
    }
    double diff = (double)(rtt - t->prev_rtt);
    t->prev_rtt = rtt;
    t->rtt_diff = (1 - k->timely_alpha) * t->rtt_diff + k->timely_alpha * diff;
    double grad = t->rtt_diff / (double)k->timely_min_rtt_ps;
    double delta = (double)k->dcqcn_rai_bps;
    if (rtt < k->timely_tlow_ps) {
        t->rate += delta;
        t->neg_n = 0;
    } else if (rtt > k->timely_thigh_ps) {
        t->rate *= 1 - k->timely_beta * (1 - (double)k->timely_thigh_ps / (double)rtt);
        t->neg_n = 0;
    } else if (grad <= 0) {
        t->rate += (++t->neg_n >= k->timely_hai_n ? (double)k->timely_hai_n : 1) * delta;
    } else {
        t->rate *= 1 - k->timely_beta * (grad < 1 ? grad : 1);
        t->neg_n = 0;
    }
    qp->rate_bps = rdma_clamp_rate(qp, t->rate);
    t->rate = (double)qp->rate_bps;
}

const rdma_cc_ops rdma_cc_timely = {
    .name = "timely",
    .state_size = sizeof(timely),
    .init = init,
    .on_send = rdma_cc_nop_send,
    .on_ack = on_ack,
    .on_cnp = NULL,
    .on_nack = rdma_cc_nop,
    .stop = rdma_cc_nop,
};
