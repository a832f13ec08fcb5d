/*
 * rdma_int.h - what the files of the RoCEv2 transport share (rdma.h has
 * the public part): PSN sets, HPCC's telemetry records, the tables.
 */
#ifndef AISIM_RDMA_INT_H
#define AISIM_RDMA_INT_H

#include "aisim/rdma.h"

/* Keys, setup and fabric checks (rdma_config.c); the capture (rdma_pcap.c). */
int rdma_setup(void **tpp, const void *bound, const cfg_node *sec, const char *path, err *e);
void rdma_teardown(void *tp);
void rdma_framing(const void *tp, uint32_t *payload, uint32_t *header);
int rdma_net_ready(void *tp, topo *t, const cfg_node *sec, const char *path, err *e);
/* The network's spraying (transport_ops.spray_check). */
int rdma_spray_check(void *tp, const char *routing, const cfg_node *sec, const char *path,
                     err *e);
void rdma_pcap(const conn *c, const pkt *p, pcap_l4 *h);

/* PSN sets (rdma_bits.c). */
bool rdma_bits_has(const rdma_bits *b, uint64_t psn);
void rdma_bits_set(rdma_bits *b, uint64_t psn);
/* Removes psn; true if it was there. */
bool rdma_bits_take(rdma_bits *b, uint64_t psn);
/* Everything below psn is in the set: drops the words below it. */
void rdma_bits_advance(rdma_bits *b, uint64_t psn);

/* HPCC telemetry (rdma_telemetry.c): a record for data packet p, freed
 * with the packet (or handed to its ACK). */
void rdma_int_attach(rdma_tp *tp, pkt *p);
void rdma_int_free(rdma_tp *tp, pkt *p);
void rdma_int_fini(rdma_tp *tp);
/* Attaches the stamping hook to every switch port. */
int rdma_int_attach_fabric(rdma_tp *tp, topo *t);

/* Tables (rdma_report.c). */
typedef struct rdma_row {
    uint32_t id;
    int32_t src, dst;
    uint64_t bytes, pkts, rtx, timeouts, cnp_sent, cnp_rcvd, nacks, ooo_drops;
    int64_t start_ps, finish_ps;
    bool aborted;
} rdma_row;
typedef struct rdma_rsample {
    int64_t t_ps;
    uint32_t qp;
    int64_t rate_bps;
    uint64_t wnd_bytes;
} rdma_rsample;
void rdma_report_link(rdma_tp *tp, rdma_qp *qp);
void rdma_report_started(rdma_tp *tp, rdma_qp *qp);
void rdma_report_unlink(rdma_tp *tp, rdma_qp *qp);
void rdma_report_fini(rdma_tp *tp);
int rdma_report(void *tp, out *o, json_t *summary, err *e);


/* Clamps a rate to [min_rate, line rate]. */
static inline int64_t rdma_clamp_rate(const rdma_qp *qp, double r)
{
    if (r > (double)qp->line_bps)
        return qp->line_bps;
    if (r < (double)qp->k->min_rate_bps)
        return qp->k->min_rate_bps;
    return (int64_t)r;
}

#endif
