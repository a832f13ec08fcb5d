/*
 * rdma_cc_none.c - no congestion control: every QP at its NIC's line rate
 * (what a fabric relying on PFC alone does), and the no-op events other
 * algorithms share.
 */
#include "rdma_int.h"

static void init(rdma_qp *qp, void *st)
{
    (void)st;
    qp->rate_bps = qp->line_bps;
}

void rdma_cc_nop_send(rdma_qp *qp, void *st, const pkt *p)
{
    (void)qp;
    (void)st;
    (void)p;
}

void rdma_cc_nop_ack(rdma_qp *qp, void *st, const pkt *a, uint64_t newly)
{
    (void)qp;
    (void)st;
    (void)a;
    (void)newly;
}

void rdma_cc_nop(rdma_qp *qp, void *st)
{
    (void)qp;
    (void)st;
}

const rdma_cc_ops rdma_cc_none = {
    .name = "none",
    .state_size = 0,
    .init = init,
    .on_send = rdma_cc_nop_send,
    .on_ack = rdma_cc_nop_ack,
    .on_cnp = NULL,
    .on_nack = rdma_cc_nop,
    .stop = rdma_cc_nop,
};
