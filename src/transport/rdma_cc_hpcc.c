/*
 * rdma_cc_hpcc.c - HPCC (Li et al., SIGCOMM 2019), as the HPCC ns-3 fork
 * runs it by default (per-ACK reaction, one window per RTT as reference,
 * the largest base RTT as T).
 *
 * Each ACK echoes the telemetry its data packet gathered (one record per
 * switch egress port, rdma_telemetry.c).  Against the previous ACK's
 * records, each hop j gives its utilisation
 *     u_j = min(qlen_j, qlen'_j) / (B_j T) + txRate_j / B_j
 * and the most loaded hop's u, smoothed over T (U = (1 - tau/T) U +
 * tau/T u), sets the window: W = Wc / (U / eta) + W_ai when U >= eta or
 * after max_stage additive steps, else W = Wc + W_ai; the reference Wc
 * takes W once per RTT (when the ACK passes the PSN sent at the last
 * update).  The QP is paced at W / T and limited to W bytes in flight.
 */
#include "rdma_int.h"

typedef struct hpcc {
    rdma_int_hop last[RDMA_INT_HOPS];
    uint32_t nlast;
    double U, W, Wc, wai, T_s;
    int64_t stage;
    uint64_t update_psn;
} hpcc;

static void apply(rdma_qp *qp, hpcc *h)
{
    double Wmax = (double)qp->line_bps / 8 * h->T_s;
    if (h->W > Wmax)
        h->W = Wmax;
    double Wmin = (double)qp->k->min_rate_bps / 8 * h->T_s;
    if (h->W < Wmin)
        h->W = Wmin;
    qp->wnd_bytes = (uint64_t)h->W > qp->payload ? (uint64_t)h->W : qp->payload;
    qp->rate_bps = rdma_clamp_rate(qp, h->W * 8 / h->T_s);
}

static void init(rdma_qp *qp, void *st)
{
    hpcc *h = st;
    int64_t T = qp->tp->max_rtt_ps > qp->base_rtt_ps ? qp->tp->max_rtt_ps : qp->base_rtt_ps;
    h->T_s = (double)T * 1e-12;
    h->W = h->Wc = (double)qp->line_bps / 8 * h->T_s;
    h->wai = qp->k->hpcc_wai_bytes ? (double)qp->k->hpcc_wai_bytes
                                   : (double)qp->k->dcqcn_rai_bps / 8 * h->T_s;
    h->U = 1;
    apply(qp, h);
}

static void on_ack(rdma_qp *qp, void *st, const pkt *a, uint64_t newly)
{
    (void)newly;
    hpcc *h = st;
    const struct rdma_int *r = rdma_int_of(qp, a);
    if (!r || !r->n)
        return;
    if (h->nlast == r->n) {
        double u = 0, tau = 0;
        for (uint32_t j = 0; j < r->n; j++) {
            const rdma_int_hop *x = &r->hop[j], *y = &h->last[j];
            double dt = (double)(x->ts_ps - y->ts_ps) * 1e-12;
            if (dt <= 0)
                continue;
            double B = (double)x->rate_bps;
            double q = x->qlen < y->qlen ? x->qlen : y->qlen;
            double tx = (double)(x->tx_bytes - y->tx_bytes) * 8 / dt;
            double uj = q * 8 / (B * h->T_s) + tx / B;
            if (uj > u) {
                u = uj;
                tau = dt;
            }
        }
        if (tau > h->T_s)
            tau = h->T_s;
        h->U = (1 - tau / h->T_s) * h->U + tau / h->T_s * u;
        double eta = qp->k->hpcc_eta;
        if (h->U >= eta || h->stage >= qp->k->hpcc_max_stage)
            h->W = h->Wc / (h->U / eta) + h->wai;
        else
            h->W = h->Wc + h->wai;
        if (a->seq > h->update_psn) {       /* once per RTT: the new reference */
            if (h->U >= eta || h->stage >= qp->k->hpcc_max_stage)
                h->stage = 0;
            else
                h->stage++;
            h->Wc = h->W;
            h->update_psn = qp->snd_nxt;
        }
        apply(qp, h);
    }
    for (uint32_t j = 0; j < r->n; j++)
        h->last[j] = r->hop[j];
    h->nlast = r->n;
}

const rdma_cc_ops rdma_cc_hpcc = {
    .name = "hpcc",
    .state_size = sizeof(hpcc),
    .init = init,
    .on_send = rdma_cc_nop_send,
    .on_ack = on_ack,
    .on_cnp = NULL,
    .on_nack = rdma_cc_nop,
    .stop = rdma_cc_nop,
};
