/*
 * ictcp.h - ICTCP (Wu, Feng, Guo, Zhang, "ICTCP: Incast Congestion Control
 * for TCP in Data Center Networks", CoNEXT 2010): the receiver adjusts each
 * connection's advertised window from its measured against its expected
 * throughput, within the bandwidth left on the receiver's link.  The
 * host-side counterpart of SDTCP (papers.md §3(c)), a baseline here.
 *
 * Where it runs: a hook on the receiving host's own NIC egress port, the
 * port its ACKs leave by.  The receiver's stack writes the advertised window
 * of its ACKs; a hook there writing min(window, ICTCP's rwnd) is the same
 * thing with the transport unchanged.  It measures each connection's
 * received bytes from the cumulative acknowledgement its ACKs carry (what
 * the receiver holds in order).
 *
 * Control (the paper's §4): time in slots of two sub-slots of T = rtt_ps.
 *  - In each sub-slot: BW_T = the receiver's total incoming throughput;
 *    in the second sub-slot the available bandwidth is
 *    BW_A = max(0, alpha * C - BW_T) (alpha = 0.9, C the link rate).
 *  - Per connection, once per slot (2 RTT, its control interval):
 *    sample b_s over the slot; measured b_m = max(b_s, beta b_m + (1 -
 *    beta) b_s); expected b_e = max(b_m, rwnd / RTT);
 *    d = (b_e - b_m) / b_e.
 *    d <= gamma1 (0.1): rwnd += 1 MSS if BW_A covers it (BW_A is reduced by
 *    MSS / RTT);  d > gamma2 (0.5) for three slots in a row: rwnd -= 1 MSS;
 *    otherwise unchanged.  rwnd never goes below min_wnd (2 MSS).
 * Simplifications: one RTT for every connection (the configured one, not a
 * per-connection estimate); there is no handshake, so the first flight is
 * the sender's initial window, not ICTCP's initial rwnd.
 */
#ifndef AISIM_ICTCP_H
#define AISIM_ICTCP_H

#include <stdint.h>

#include "aisim/port.h"

typedef struct ictcp_params {
    double alpha, beta, gamma1, gamma2;
    int64_t rtt_ps;             /* sub-slot T and the RTT of b_e */
    uint32_t mss;
    uint32_t min_wnd, init_wnd; /* 2 MSS each */
} ictcp_params;

typedef struct ictcp ictcp;

void ictcp_params_default(ictcp_params *p, uint32_t mss);
/* ICTCP for the receiver whose ACKs leave by `nic` (link rate from it). */
ictcp *ictcp_attach(port *nic, const ictcp_params *p);
void ictcp_destroy(ictcp *x);
/* Window adjustments made (increases, decreases) and ACKs rewritten. */
void ictcp_counts(const ictcp *x, uint64_t *inc, uint64_t *dec, uint64_t *rewrites);

#endif
