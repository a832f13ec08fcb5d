/*
 * coll_int.h - the insides of a collective call (collective.c), shared
 * with the fluid mode's builders (coll_fluid.c): the world of connections,
 * the graph of operations and the plan of a call.  Private to
 * src/workload.
 */
#ifndef AISIM_COLL_INT_H
#define AISIM_COLL_INT_H

#include "aisim/collective.h"

/* A persistent connection, by (src endpoint, dst endpoint, channel, class). */
typedef struct conn_slot {
    int32_t src, dst, chan, prio;
    conn *c;                    /* NULL: empty slot */
} conn_slot;

/* What a communicator and its sub-communicators share. */
typedef struct coll_world {
    network *net;
    int refs;                   /* communicators using it */
    size_t active;              /* calls running */
    conn_slot *slots;           /* open addressing, power-of-two size */
    size_t nslots, used;
    int *server;                /* per endpoint: its server's id, or -1
                                   until computed (hierarchical) */
    int *server_slot;           /* scratch by server id: -1 (group_servers) */
    struct coll_run *runs;      /* calls running (freed with the world if a
                                   run stops before they complete) */
    bool rates_known;           /* coll_nccl.c: the slowest endpoint's */
    double nic_GBps, nvl_GBps;  /* NIC and NVLink rates */
} coll_world;

struct coll_comm {
    coll_world *w;
    int n;                      /* ranks */
    int *eps;                   /* endpoint of each rank */
};

typedef struct coll_run coll_run;

typedef struct op {
    coll_run *run;
    int32_t src, dst;           /* ranks */
    int32_t chan;
    int32_t deps;               /* arrivals still awaited; -1: handed over */
    uint64_t bytes;
    uint32_t succ, nsucc;       /* its successors: run->succ[succ ..] */
    int64_t delay_ps;           /* it counts as arrived this long after its
                                   message arrived (after its dependencies,
                                   if it has no bytes): the fluid mode's
                                   latencies (coll_fluid.c) */
} op;

struct coll_run {
    coll_comm *c;
    coll_args a;
    coll_done_fn fn;
    void *ctx;
    op *ops;
    size_t nops, capops, left;
    uint32_t *succ;             /* CSR of successors */
    uint32_t *stack;            /* worklist of arrived operations */
    uint32_t (*edges)[2];       /* while building: (from, to) */
    size_t nedges, capedges;
    uint64_t wire_bytes;
    int64_t start_ps;
    bool aborted;
    coll_world *w;
    coll_run *prev, *next;      /* in w->runs */
    int64_t intra_ps, inter_ps; /* protocol model: each message counts as
                                   arrived this long late, by link */
};

enum { NONE = -1 };

/* Layouts computed once per call and shared by its sub-buffers. */
typedef struct plan {
    int n;
    int *rk;                    /* 0..n-1 */
    int *none;                  /* NONE x max(n, ...) */
    int *out;                   /* scratch */
    uint64_t *seg;              /* scratch: segment bytes */
    /* trees: positions, their parent and children (CSR), depth order */
    int *parent, *kids, *kid0, *order, *map[2];
    /* hierarchical: servers x local ranks */
    int servers, local;
    bool grouped;               /* grid is valid (equal servers) */
    int *grid;                  /* grid[m * local + l]: rank */
    bool chains;                /* trees: NCCL's chains in servers
                                   (coll_tree_order maps them per channel) */
    int *where;                 /* PXN: per rank, m * local + l (NULL: off) */
    int *col, *o1, *o2;         /* scratch per server / per rank */
    uint64_t *seg2;
} plan;

/* Adds an operation (a message of `bytes`, 0: none, from rank src to rank
 * dst on channel chan) and returns its index. */
int coll_add_op(coll_run *r, int src, int dst, int chan, uint64_t bytes);
/* Operation `to` waits for `from` to arrive (nothing if from is NONE). */
void coll_add_dep(coll_run *r, int from, int to);
/* Part i of `parts` of `total` bytes, in whole elements of elem bytes. */
uint64_t coll_split(uint64_t total, uint64_t parts, uint64_t i, uint64_t elem);
/* The persistent connection of (src, dst, chan, prio), opened on first use. */
conn *coll_world_conn(coll_world *w, int src, int dst, int chan, int prio);
/* p->rk: channel ch's ring over servers (rail-aligned hops). */
void coll_ring_order(plan *p, int ch);

/* Per endpoint: its server's id (endpoints sharing an NVLink switch share
 * one; a host alone is its own). */
const int *coll_world_servers(coll_world *w);
/* Bytes on the wire for `bytes` of payload in protocol p (LL: twice;
 * LL128: 128 per 120, whole lines; else as is). */
uint64_t coll_proto_wire(enum coll_proto p, uint64_t bytes);
/* The protocol model's latency of a step from rank src to rank dst (ps;
 * 0 without the model). */
int64_t coll_step_ps(const coll_run *r, int src, int dst);

/* Fluid mode (coll_fluid.c): adds channel chan's operations for `bytes`
 * (the channel's share) in phases of concurrent flows; `subs` is the
 * number of sub-buffers the step-by-step call would pipeline.  False:
 * not an algorithm of phased rings (nothing added). */
bool coll_fluid_build(coll_run *r, plan *p, uint64_t bytes, int chan, uint64_t subs);
/* Whether the call can run fluid (flow plane; else an error). */
int coll_fluid_check(const coll_comm *c, const coll_args *a, err *e);

#endif
