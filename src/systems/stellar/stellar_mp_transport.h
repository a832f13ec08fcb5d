/*
 * stellar_mp_transport.h - `stellar_dgram`, Stellar's multi-path core
 * (stellar_mp.h) over acknowledged datagrams: a demonstration on the
 * packet plane until the RDMA transport exists.  Not RDMA.
 */
#ifndef AISIM_STELLAR_MP_TRANSPORT_H
#define AISIM_STELLAR_MP_TRANSPORT_H

#include "aisim/transport.h"

extern const transport_ops stellar_dgram_transport;

#endif
