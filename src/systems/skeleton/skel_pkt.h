/*
 * skel_pkt.h - SkeletonHunter's probes as real packets (small runs): each
 * probe is a request message and its reply on the network's message API
 * (network.h), carried by whatever transport the network has (the
 * datagram transport for probes: no retransmission, so a lost packet is a
 * lost probe), through the ports, queues and faults (fault.h) of the packet
 * plane.  The RTT is measured from the packets: from the request's start
 * to the reply's completion at the prober; the responder notes when the
 * request arrived, so a lost request and a lost reply are told apart.
 * Localization votes per leg (request src -> dst, reply dst -> src) on
 * the directed links (ports) that every equal-cost path of the leg
 * crosses (Algorithm 1's physical intersection without a traceroute: an
 * element on only some of the ECMP paths does not vote); one-way legs are
 * what separate a dead ToR port (one direction) from a dead link or NIC.
 */
#ifndef AISIM_SKEL_PKT_H
#define AISIM_SKEL_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "aisim/model.h"
#include "aisim/network.h"
#include "aisim/out.h"

/* One probe. */
typedef struct skel_pprobe {
    int32_t src, dst;           /* endpoints (hosts) */
    int64_t sent_ps;            /* request start */
    int64_t req_ps;             /* request's one-way time (the responder
                                   saw it), < 0: the request was lost */
    int64_t rtt_ps;             /* < 0: no reply (lost) */
} skel_pprobe;

typedef struct skel_prober {
    network *n;
    uint64_t bytes;             /* request and reply payload */
    int64_t interval_ps;        /* between an endpoint's probes (1 s: 1 target/s) */
    int64_t timeout_ps;         /* a reply later than this is a timeout */
    int64_t slow_ps;            /* an RTT above this is anomalous (latency) */
    size_t np, cap;
    skel_pprobe *p;
} skel_prober;

/* Schedules `rounds` rounds: in round k endpoint e (of neps) probes its
 * k-th target (targets off[e]..off[e+1] of idx, cyclic) at k x interval +
 * e x interval / neps.  Call after network_start, before running. */
void skel_prober_plan(skel_prober *pr, size_t neps, const uint32_t *off, const uint32_t *idx,
                      int rounds);
/* Whether a finished probe is anomalous: lost, timed out or slow. */
bool skel_pprobe_bad(const skel_prober *pr, const skel_pprobe *p);

/* Localization over the probes [from, to): every probed pair votes, each
 * anomalous leg once on the directed-link hops (link * 2 + dir) that all
 * of its equal-cost paths share, each healthy leg exonerating them.  Returns the hop most anomalous paths cross
 * (skel_votes_culprit, by majority over the anomalous probes), or -1;
 * *bad gets the anomalous probes. */
int32_t skel_pkt_localize(const skel_prober *pr, size_t from, size_t to, size_t *bad);

void skel_prober_fini(skel_prober *pr);

/* The `packets` experiment of the skeleton model: the section's `net` map
 * (the network keys of the net model: topology, transport, faults, ...)
 * builds the packet plane; every endpoint probes its Basic list (same
 * rail, other server) at 1 target/s for `rounds` s; anomalous probes
 * open a detection, the vote over the probes since the first one
 * localizes.  Tables: probes.csv and the network's own (flows.csv,
 * faults.csv: the ground truth). */
typedef struct skel_pktexp {
    network *n;
    skel_prober pr;
    int rounds;
    size_t neps;
    uint32_t *off, *idx;        /* the Basic list per endpoint */
} skel_pktexp;
/* net: the `net` map at key path `path`.  Errors: the network's, and a
 * topology whose endpoints are not servers x gpus. */
int skel_pktexp_configure(skel_pktexp *x, cfg_node *net, const char *path, const model_env *env,
                          int servers, int gpus, int per_tor, int rounds, err *e);
void skel_pktexp_start(skel_pktexp *x);
int skel_pktexp_report(skel_pktexp *x, out *o, json_t *sum, err *e);
void skel_pktexp_fini(skel_pktexp *x);

#endif
