/*
 * stellar_rdma.h - Stellar's multi-path core on RoCEv2 QPs: the transport
 * stellar_rocev2 (rocev2 with a `multipath:` section, stellar_rdma.c,
 * docs/stellar.md section 6).
 */
#ifndef AISIM_STELLAR_RDMA_H
#define AISIM_STELLAR_RDMA_H

#include "aisim/rdma.h"
#include "aisim/stellar_mp.h"

#include "aisim/transport.h"

extern const rdma_cc_ops rdma_cc_stellar;
extern const transport_ops stellar_rocev2_transport;

/* The QP's multi-path scoreboard (paths, window, counters), or NULL when
 * the QP is not multi-path or has stopped. */
const smp_qp *stellar_rdma_qp(const rdma_qp *qp);

#endif
