/*
 * rdma_cc_dctcp.c - DCTCP over RoCE, rate-based as the HPCC ns-3 fork runs
 * it: the receiver echoes CE in its ACKs (ECE, one ACK per marked packet);
 * once per RTT (when an ACK passes the PSN sent at the last update) the
 * sender updates alpha = (1 - g) alpha + g F, F the fraction of acked
 * bytes that were marked, and sets rate = rate (1 - alpha / 2) if any was,
 * else rate + dctcp_rai.  g is dcqcn_g (the fork's EWMA_GAIN).
 */
#include "rdma_int.h"

typedef struct dctcp {
    double rate, alpha;
    uint64_t acked, marked;
    uint64_t update_psn;
} dctcp;

static void init(rdma_qp *qp, void *st)
{
    dctcp *d = st;
    d->rate = (double)qp->line_bps;
    d->alpha = 1;
    qp->rate_bps = qp->line_bps;
}

static void on_ack(rdma_qp *qp, void *st, const pkt *a, uint64_t newly)
{
    dctcp *d = st;
    d->acked += newly;
    if (a->flags & PKT_F_ECE)
        d->marked += newly ? newly : qp->payload;
    if (a->seq <= d->update_psn)
        return;
    d->update_psn = qp->snd_nxt;
    double F = d->acked ? (double)d->marked / (double)d->acked : 0;
    if (F > 1)
        F = 1;
    d->alpha = (1 - qp->k->dcqcn_g) * d->alpha + qp->k->dcqcn_g * F;
    if (d->marked)
        d->rate *= 1 - d->alpha / 2;
    else
        d->rate += (double)qp->k->dctcp_rai_bps;
    d->acked = d->marked = 0;
    qp->rate_bps = rdma_clamp_rate(qp, d->rate);
    d->rate = (double)qp->rate_bps;
}

const rdma_cc_ops rdma_cc_dctcp = {
    .name = "dctcp",
    .state_size = sizeof(dctcp),
    .init = init,
    .on_send = rdma_cc_nop_send,
    .on_ack = on_ack,
    .on_cnp = NULL,
    .on_nack = rdma_cc_nop,
    .stop = rdma_cc_nop,
};
