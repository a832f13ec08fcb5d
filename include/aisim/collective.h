/*
 * collective.h - NCCL-style collectives over the network's message API.
 *
 * A communicator is an ordered list of network endpoints (rank i is
 * endpoint eps[i]).  A collective started on it is a dependency graph of
 * messages: each message (a chunk of bytes from one rank to another, on one
 * channel) is handed to network_send_on() when every message it depends on
 * has arrived, and the collective's callback runs when the last one has.
 * Nothing here knows the transport: it works over any (TCP, datagrams,
 * RDMA), as long as messages complete.
 *
 * Messages between two ranks of one channel travel on one persistent
 * connection (network_connect), as NCCL keeps one connection per peer and
 * channel; connections are shared by a communicator and every
 * sub-communicator made from it, and by the collectives running on them
 * (two collectives on the same pair and channel queue behind each other,
 * as two NCCL kernels on one stream do).
 *
 * Sizes follow nccl-tests: `bytes` is the size column of nccl-tests, i.e.
 *   all-reduce       the buffer each rank holds (and gets back reduced)
 *   reduce-scatter   the input each rank holds (it gets bytes / n back)
 *   all-gather       the output each rank gets (it gives bytes / n)
 *   all-to-all       each rank's send buffer (bytes / n to every rank)
 *   broadcast        the root's buffer
 *   send/recv        the message from `root` to `peer`
 * and algbw = bytes / time, busbw = algbw x factor: 2(n-1)/n for
 * all-reduce, (n-1)/n for reduce-scatter, all-gather and all-to-all, 1 for
 * broadcast and send/recv (nccl-tests' doc/PERFORMANCE.md).  Bytes are
 * split into elements of `elem_bytes` (4, float) only for the count column
 * and to keep chunks whole elements; reductions take no time (no GPU
 * compute is modelled).
 *
 * Algorithms (docs/workloads.md gives the bytes each moves and its time):
 *   ring           n-1 steps (2(n-1) for all-reduce) to the next rank;
 *                  broadcast: a chain from the root
 *   tree           double binary tree (all-reduce: reduce up, broadcast
 *                  down, half the data on each tree; broadcast: one tree)
 *   halving_doubling  recursive halving reduce-scatter and recursive
 *                  doubling all-gather (Rabenseifner); non-powers of two
 *                  fold the extra ranks in first and out last
 *   hierarchical   ranks grouped by server (endpoints sharing an NVLink
 *                  switch): intra-server reduce-scatter over NVLink, a ring
 *                  all-reduce per rail (same local index) across servers,
 *                  intra-server all-gather over NVLink
 *   auto           ring; with a protocol model (coll_args.proto), ring or
 *                  tree as NCCL's tuner picks them (coll_tune)
 * Fluid mode (coll_args.fluid, flow plane only): a ring's 2(n-1) steps
 * become one flow per rank to its neighbour carrying the bytes of all of
 * them, halving-doubling's steps one message each (no sub-buffers), the
 * hierarchical algorithm three such ring phases overlapped as the
 * pipeline of sub-buffers overlaps them; the latency the steps would add
 * is added (coll_fluid.c, docs/flow-level.md).
 * Every algorithm runs on `channels` parallel instances, each on its own
 * share of the data and its own connections (NCCL's channels); each
 * share is cut into chunks of at most `chunk_bytes`, and a chunk moves on
 * as soon as it has arrived (pipelining), as NCCL's slices do.
 */
#ifndef AISIM_COLLECTIVE_H
#define AISIM_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/err.h"
#include "aisim/network.h"

enum coll_type {
    COLL_ALLREDUCE,
    COLL_REDUCE_SCATTER,
    COLL_ALLGATHER,
    COLL_ALLTOALL,
    COLL_BROADCAST,
    COLL_SENDRECV,
    COLL_NTYPES
};

enum coll_algo {
    COLL_ALGO_AUTO,             /* ring */
    COLL_ALGO_RING,
    COLL_ALGO_TREE,             /* double binary tree */
    COLL_ALGO_HD,               /* halving-doubling */
    COLL_ALGO_HIER,             /* hierarchical: NVLink, rails, NVLink */
    COLL_NALGOS
};

/* NCCL's protocols (coll_args.proto).  NONE: no protocol model, a step
 * costs what its message costs on the network (the model before NCCL's
 * was added); AUTO: the protocol NCCL's tuner picks by size. */
enum coll_proto {
    COLL_PROTO_NONE,
    COLL_PROTO_AUTO,
    COLL_PROTO_LL,              /* 8 B of data + 8 B of flags per 16 B line */
    COLL_PROTO_LL128,           /* 120 B of data per 128 B line */
    COLL_PROTO_SIMPLE,
    COLL_NPROTOS
};

/* The GPU generation of NCCL's tuning tables (its compute-capability
 * index). */
enum coll_arch { COLL_ARCH_VOLTA, COLL_ARCH_AMPERE, COLL_ARCH_HOPPER, COLL_ARCH_BLACKWELL };

/* Scenario spellings: "all_reduce", "reduce_scatter", "all_gather",
 * "all_to_all", "broadcast", "send_recv"; "auto", "ring", "tree",
 * "halving_doubling", "hierarchical".  NULL-terminated, in enum order. */
extern const char *const coll_type_names[];
extern const char *const coll_algo_names[];
/* "none", "auto", "LL", "LL128", "Simple"; "volta", "ampere", "hopper",
 * "blackwell". */
extern const char *const coll_proto_names[];
extern const char *const coll_arch_names[];
/* nccl-tests' busbw / algbw for `type` on n ranks. */
double coll_busbw_factor(enum coll_type type, int n);

/* A communicator: an ordered list of endpoints of one network. */
typedef struct coll_comm coll_comm;

/* A communicator of the n endpoints eps[0..n-1] (copied) of network net,
 * which must outlive it.  Endpoints must be valid and distinct (asserted:
 * a scenario checks them first, see coll_comm_check). */
coll_comm *coll_comm_create(network *net, const int *eps, int n);
/* A sub-communicator of `count` ranks of parent: parent ranks first,
 * first + stride, ..., first + (count-1) * stride (TP groups: stride 1,
 * DP groups: stride TP * PP...).  Cheap: one small array; it shares the
 * parent's connections.  Destroy it before or after its parent. */
coll_comm *coll_comm_sub(coll_comm *parent, int first, int stride, int count);
/* A sub-communicator of the given parent ranks (copied), in that order. */
coll_comm *coll_comm_subset(coll_comm *parent, const int *ranks, int count);
void coll_comm_destroy(coll_comm *c);
int coll_comm_size(const coll_comm *c);
int coll_comm_endpoint(const coll_comm *c, int rank);
/* Each rank's index among the ranks of its server (endpoints sharing an
 * NVLink switch), in rank order, into local[0..n-1]: nccl-tests' device
 * column. */
void coll_comm_local_ranks(coll_comm *c, int *local);

/* Checks endpoints for a communicator before creating one: each in
 * 0..endpoints-1 and none twice; a located error (node, path) if not. */
int coll_comm_check(network *net, const int *eps, int n, const cfg_node *at, const char *path,
                    err *e);

/* One collective call. */
typedef struct coll_args {
    enum coll_type type;
    enum coll_algo algo;
    uint64_t bytes;             /* nccl-tests size (above), > 0 */
    int elem_bytes;             /* element size; 0: 4 (float) */
    int channels;               /* parallel rings/trees; 0: 1 */
    uint64_t chunk_bytes;       /* largest message; 0: 512 KiB (NCCL's
                                   4 MiB buffer / 8 steps) */
    int prio;                   /* traffic class of its connections */
    int64_t tag;                /* net_msg.tag of its messages (flows.csv) */
    int root;                   /* broadcast root, send/recv sender (rank) */
    int peer;                   /* send/recv receiver (rank) */
    int64_t start_ps;           /* when it starts; before now: now */
    bool fluid;                 /* fluid mode (flow plane only): each phase of
                                   steps with one pattern is one flow per rank
                                   carrying all their bytes, the steps'
                                   latency added (docs/flow-level.md) */
    /* NCCL's protocol model (coll_tune; docs/workloads.md): */
    enum coll_proto proto;      /* NONE (0): off; AUTO: as NCCL's tuner */
    enum coll_arch arch;        /* tuning tables' GPU generation */
    int min_channels, max_channels;     /* NCCL_MIN/MAX_NCHANNELS: bound
                                   `channels` (0: no bound); the tuner then
                                   trims per call by size */
    int64_t send_lat_ps;        /* every message handed to the network this
                                   late (SimAI's per-flow send latency) */
    bool rank_order;            /* rings in rank order, not the topology's
                                   rail-aligned order */
    bool pxn;                   /* NCCL's PXN for all-to-all and send/recv:
                                   a message to another server's GPU of
                                   another rail goes over NVLink to the
                                   local GPU of that rail, then out of its
                                   NIC (equal servers only) */
} coll_args;

/* What NCCL's tuner (its tuning.cc model, NCCL 2.30.7) makes of a call:
 * the algorithm, protocol and channels it picks and the latency terms a
 * run adds (us).  Estimates in time_us[algorithm][protocol] (ring, tree x
 * LL, LL128, Simple; < 0: not available for the call). */
typedef struct coll_tuning {
    enum coll_algo algo;
    enum coll_proto proto;
    int channels;
    int nodes, ppn;             /* servers, ranks per server (rounded down) */
    double base_us;             /* once per call */
    double intra_us, inter_us;  /* per step over NVLink / the network */
    double bw_GBps;             /* the tuner's algorithm bandwidth */
    double time_us[2][3];
} coll_tuning;

/* Tunes call a on c (a->proto != NONE; a checked by coll_check).  Forced
 * algorithm (a->algo != AUTO) and protocol are kept; halving-doubling and
 * hierarchical, which NCCL has not, take the ring's terms. */
void coll_tune(coll_comm *c, const coll_args *a, coll_tuning *t);

/* The outcome of one call, handed to its callback. */
typedef struct coll_result {
    enum coll_type type;
    enum coll_algo algo;        /* as run (auto resolved) */
    enum coll_proto proto;      /* as run (NONE: no protocol model) */
    int channels;               /* as run (the tuner may trim) */
    int ranks;
    uint64_t bytes;             /* as asked */
    int64_t tag;
    int64_t start_ps, finish_ps;
    double time_s;              /* finish - start */
    double algbw_Bps, busbw_Bps;    /* bytes per second (0 if time_s is 0: one rank) */
    uint64_t messages;          /* messages sent */
    uint64_t wire_bytes;        /* payload bytes of those messages */
    bool aborted;               /* a message was given up by the transport */
} coll_result;

/* r is valid during the call only.  The callback may start collectives. */
typedef void (*coll_done_fn)(void *ctx, const coll_result *r);

/* Checks a call without starting it: bytes > 0, type and algorithm known
 * and supported together (tree: all-reduce and broadcast; halving_doubling:
 * all-reduce, reduce-scatter, all-gather; hierarchical: all-reduce on
 * servers with equal numbers of ranks), ranks in range.  Returns 0 or
 * AISIM_EINVAL / AISIM_ERANGE with a message (no location: the scenario
 * glue adds it). */
int coll_check(const coll_comm *c, const coll_args *a, err *e);

/* Starts a collective on c (which must outlive it); fn(ctx, result) runs
 * when its last message has arrived (at once, in the call, if it moves no
 * bytes: one rank).  Returns 0, or coll_check's error (nothing started). */
int coll_start(coll_comm *c, const coll_args *a, coll_done_fn fn, void *ctx, err *e);

/* Collectives started on c (and its sub-communicators' root) and not yet
 * complete. */
size_t coll_active(const coll_comm *c);

#endif
