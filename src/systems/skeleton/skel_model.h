/*
 * skel_model.h - the containerized training cluster SkeletonHunter watches
 * (papers.md 1(e)), shared by the model's files and its tests.
 *
 * Cluster: `servers` hosts of `gpus` GPUs and as many RNICs on the
 * platform's rail-optimised fabric (topo_build_rail: RNIC j of server i is
 * endpoint i*gpus+j under ToR tor{seg}.r{j}, ToRs to every agg).  One
 * container per server (8 RNICs; papers.md: 83% of containers have 8),
 * so an endpoint is (container, RNIC) = a topology host.  Components, one
 * id space: topology links, switches, RNICs, host boards, and per endpoint
 * its overlay chain vPort -> vSwitch rule -> RNIC offloaded rule -> VTEP.
 *
 * Tasks: GPUs, TP/PP/DP/EP; replica r holds hosts r*H .. r*H+H-1 with
 * H = TP*PP/gpus (a host carries one replica's slice, Eq. 3), host
 * position p = stage group.  Local endpoint l = host_index*gpus + rail.
 *
 * Time is in whole seconds of the run (probes at 1 target/s per endpoint;
 * each endpoint has a fixed sub-second offset for its probes).
 */
#ifndef AISIM_SKEL_MODEL_H
#define AISIM_SKEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "aisim/err.h"
#include "aisim/rng.h"
#include "aisim/skeleton.h"
#include "aisim/topo.h"
#include "aisim/training.h"

typedef struct skel_par {
    int tp, pp, dp, ep;
} skel_par;

/* The fabric and the component id space, shared read-only by every run. */
typedef struct skel_fabric {
    int servers, gpus, per_tor, aggs, segs;
    int neps;               /* servers * gpus */
    topo *t;
    int nlinks, nnodes;
    int32_t *host_link;     /* per endpoint: link to its ToR */
    int32_t *tor_node;      /* per (seg, rail): node id */
    int32_t *agg_node;      /* per agg: node id */
    int32_t *tor_agg;       /* per (seg, rail, agg): link id */
    /* component id bases */
    int32_t base_switch, base_rnic, base_host, base_ovl, ncomp;
} skel_fabric;

/* Component ids. */
static inline int32_t skel_comp_link(const skel_fabric *f, int link) { (void)f; return link; }
static inline int32_t skel_comp_switch(const skel_fabric *f, int node)
{
    return f->base_switch + node;
}
static inline int32_t skel_comp_rnic(const skel_fabric *f, int ep) { return f->base_rnic + ep; }
static inline int32_t skel_comp_host(const skel_fabric *f, int server)
{
    return f->base_host + server;
}
/* overlay hop h (0 vport, 1 vswitch rule, 2 rnic rule, 3 vtep) of endpoint ep */
static inline int32_t skel_comp_ovl(const skel_fabric *f, int ep, int h)
{
    return f->base_ovl + h * f->neps + ep;
}
enum skel_kind skel_comp_kind(const skel_fabric *f, int32_t c);
/* The endpoint (overlay, RNIC) or server (host) of a component, else -1. */
int skel_comp_owner(const skel_fabric *f, int32_t c);
/* "kind:name", e.g. "rnic_rule:s3.g1", "link:s0.g0-tor0.r0". */
const char *skel_comp_name(const skel_fabric *f, int32_t c, char *buf, size_t len);
/* Parses a name of skel_comp_name's form; -1 if no such component. */
int32_t skel_comp_parse(const skel_fabric *f, const char *s);

/* Builds the fabric on engine s (topology from topo_build_rail). */
int skel_fabric_init(skel_fabric *f, sim *s, int servers, int gpus, int per_tor, int aggs,
                     uint64_t seed, err *e);
void skel_fabric_fini(skel_fabric *f);

/* A 64-bit mixer (murmur3's finalizer): the ECMP hash, per-path constants. */
uint64_t skel_mix64(uint64_t x);

/* Underlay elements (links and switches, in path order) of the path from
 * endpoint a to b: the ECMP choice of agg hashes (a, b).  With `agg` >= 0
 * the path is pinned through that agg (traceroute of a chosen path).
 * Returns the count (<= 7: el and prefer need 7); prefer[i] marks switches. */
int skel_path(const skel_fabric *f, int a, int b, int agg, int32_t *el, bool *prefer);

/* ---- tasks and their traffic --------------------------------------------- */

/* Checks a parallelism for a task of `gpus` GPUs on `gpus_per_host` hosts:
 * TP*PP*DP = gpus, EP divides DP, TP <= gpus_per_host, TP*PP a multiple of
 * gpus_per_host.  Returns NULL or what is wrong. */
const char *skel_par_check(const skel_par *p, int gpus, int gpus_per_host);
/* A default parallelism for a task of `gpus` GPUs (TP = gpus_per_host,
 * PP the largest of 8, 4, 2, 1 that divides the hosts). */
skel_par skel_par_default(int gpus, int gpus_per_host);

/* The true skeleton of a task (local endpoints, CSR; the caller frees):
 * DP peers (same position, same rail, other replicas) and PP neighbours
 * (adjacent positions of the same replica, same rail). */
void skel_true_skeleton(const skel_par *p, int gpus_per_host, uint32_t **off, uint32_t **idx);
/* True if two skeletons of n endpoints (CSR) give every endpoint the same
 * targets (in any order). */
bool skel_same_skeleton(size_t n, const uint32_t *off, const uint32_t *idx, const uint32_t *toff,
                        const uint32_t *tidx);

/* Traffic source for skeleton inference: fills out (n x len, row = local
 * endpoint) with the 1-s throughput (Gbit/s) of the task's endpoints over
 * seconds [t0, t0 + len).  The synthetic generator below is the default;
 * the training jobs of the AI-workload issue plug in here. */
typedef struct skel_traffic {
    void *ctx;
    void (*series)(void *ctx, const skel_par *p, int gpus_per_host, uint64_t task_seed,
                   int64_t t0, size_t len, double *out);
    double period_s;        /* iteration period the inference folds over */
    /* if set, the period of a task of this parallelism (else period_s) */
    double (*period)(void *ctx, const skel_par *p, int gpus_per_host);
} skel_traffic;

/* Adds `area` spread evenly over [a, b) to the 1-s bins row[0..len) that
 * start at t0 (all of it in the bin of a if b <= a). */
void skel_spread(double *row, size_t len, double t0, double a, double b, double area);

/* The synthetic series (docs/skeletonhunter.md "traffic"): per iteration,
 * a pipeline activation burst at stage offset p*d plus the replica's
 * per-iteration jitter, a DP all-reduce burst common to the DP group
 * (with a per-communicator offset), MoE all-to-all bursts when EP > 1,
 * and noise.  Deterministic in task_seed. */
void skel_traffic_synth(void *ctx, const skel_par *p, int gpus_per_host, uint64_t task_seed,
                        int64_t t0, size_t len, double *out);

/* Traffic of a training job (skel_train.c): the task's parallelism on the
 * transformer `model` (as the `training` model's jobs), one iteration in
 * 1F1B timed by trn_eval_trace, its cross-host communication put on the
 * RNICs, iterations `gap_s` apart with per-replica jitter. */
typedef struct skel_tev {
    int gi;                 /* GPU of the replica: stage * tp + tp rank */
    bool sync;              /* a DP/EP collective (waits for the group) */
    double a, b, bytes;     /* s from the iteration start; RNIC bytes */
} skel_tev;

typedef struct skel_train {
    trn_model model;        /* tp, pp, dp, ep come from the task */
    int micro_batches;      /* per iteration and replica */
    double rnic_bps, nvlink_bps;
    double gap_s;           /* iteration time outside the network's view */
    double jitter_s;        /* sigma of a replica's per-iteration lateness */
    /* the last parallelism prepared */
    bool ready;
    skel_par par;
    int gph;
    double iter_s, period_s;
    size_t nev, capev;
    skel_tev *ev;           /* one iteration's RNIC traffic per replica GPU */
} skel_train;

/* Builds and times the iteration for parallelism p (cached: a second call
 * with the same p does nothing).  Errors: the model does not fit p
 * (trn_model_check), the schedule cannot be built. */
int skel_train_prepare(skel_train *t, const skel_par *p, int gpus_per_host, err *e);
/* skel_traffic.series and .period for ctx = a skel_train. */
void skel_traffic_train(void *ctx, const skel_par *p, int gpus_per_host, uint64_t task_seed,
                        int64_t t0, size_t len, double *out);
double skel_train_period(void *ctx, const skel_par *p, int gpus_per_host);
void skel_train_fini(skel_train *t);

#endif
