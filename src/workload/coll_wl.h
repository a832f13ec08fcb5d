/*
 * coll_wl.h - scenario helpers shared by the collective workloads
 * (coll_sweep.c: nccl-tests; coll_jobs.c: concurrent jobs): a
 * communicator read from a list of endpoint names, and coll_check()'s
 * message located at the key it is about.
 */
#ifndef AISIM_WORKLOAD_COLL_WL_H
#define AISIM_WORKLOAD_COLL_WL_H

#include "aisim/cfg.h"
#include "aisim/collective.h"
#include "aisim/network.h"

/* NCCL's protocol model keys of a collective workload (coll_args). */
typedef struct coll_nccl_cfg {
    int proto, arch, order;
    int64_t min_channels, max_channels, send_lat;
    bool pxn;
} coll_nccl_cfg;

extern const char *const coll_order_names[];   /* "topology", "rank" */

/* The keys, bound into member `m` (a coll_nccl_cfg) of struct T. */
#define COLL_NCCL_KEYS(T, m)                                                                   \
    {.name = "protocol", .type = CFG_ENUM, .off = offsetof(T, m.proto), .def = "auto",         \
     .choices = coll_proto_names, .help = "NCCL_PROTO: LL, LL128, Simple; auto: as NCCL's "    \
     "tuner picks by size (also the algorithm if auto, and channels); none: no protocol "     \
     "model (a step costs its message on the network)"},                                      \
    {.name = "gpu", .type = CFG_ENUM, .off = offsetof(T, m.arch), .def = "hopper",            \
     .choices = coll_arch_names, .help = "GPU generation of NCCL's tuning tables"},             \
    {.name = "min_channels", .type = CFG_INT, .off = offsetof(T, m.min_channels), .def = "0",  \
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1024,                                        \
     .help = "NCCL_MIN_NCHANNELS: channels raised to at least this (0: no bound)"},           \
    {.name = "max_channels", .type = CFG_INT, .off = offsetof(T, m.max_channels), .def = "0",  \
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1024,                                        \
     .help = "NCCL_MAX_NCHANNELS: channels capped at this (0: no bound)"},                    \
    {.name = "send_latency", .type = CFG_TIME, .off = offsetof(T, m.send_lat), .def = "0s",   \
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1000000000000,                                \
     .help = "every message handed to the network this late (SimAI's send latency)"},         \
    {.name = "ring_order", .type = CFG_ENUM, .off = offsetof(T, m.order), .def = "topology",  \
     .choices = coll_order_names, .help = "topology: rings rail-aligned per channel; rank: "   \
     "the communicator's rank order, as NCCL and SimAI are given it"},                        \
    {.name = "pxn", .type = CFG_BOOL, .off = offsetof(T, m.pxn), .def = "false",              \
     .help = "NCCL's PXN for all_to_all and send_recv: a message to another server's GPU "   \
     "of another rail goes over NVLink to the local GPU of that rail, then out of its NIC"}

/* An AICB micro-test log (aicb_micro.c): one collective at n sizes,
 * count[i] timed calls of sizes[i] (from file line line[i]) after
 * `warmup` calls of the first size. */
typedef struct coll_micro {
    int type, type_line;        /* enum coll_type, its first row */
    bool has_size;              /* the comm_group_size column */
    int group_size, group_line; /* 0: no such column */
    uint64_t warm_bytes;
    int64_t warmup;
    int warm_line;
    size_t n;
    uint64_t *sizes;
    int64_t *count;
    int *line;
} coll_micro;
/* Reads `path`; 0, or an error naming its line, column, expected, found. */
int coll_read_aicb_micro(coll_micro *m, const char *path, err *e);
void coll_micro_free(coll_micro *m);

/* Copies the keys into a call's arguments. */
void coll_wl_nccl_args(const coll_nccl_cfg *c, coll_args *a);

/* The communicator listed at `ranks` (a list of endpoint names, each once,
 * at key path `path`), or every endpoint of n in host order when ranks is
 * NULL.  Returns 0 and *comm (destroy it), or a located error. */
int coll_wl_comm(network *n, cfg_node *ranks, const char *path, coll_comm **comm, err *e);

/* coll_check() of a on c; its error is reported at the key of `node` (the
 * call's map, at key path `path`) it names: root, peer, the size key
 * `bytes_key` or else `algorithm`. */
int coll_wl_check(const coll_comm *c, const coll_args *a, cfg_node *node, const char *path,
                  const char *bytes_key, err *e);

#endif
