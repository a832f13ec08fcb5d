/*
 * training.h - LLM training jobs: workloads read from SimAI's workload
 * format and AICB's physical per-call logs, or generated from a model
 * description; the iteration as per-stage programs (1F1B, interleaved
 * virtual stages); a sans-I/O evaluation of those programs (no network:
 * for tests and the `analytical` mode of the `training` model).
 * docs/training.md has the formats, the formulas and the schedule.
 *
 * The layers.  A workload is a list of layers, each with a forward compute
 * time and communication, an input-gradient compute and communication and a
 * weight-gradient compute and communication (SimAI's 12 fields per line).
 * Communication names a collective, a group (TP, DP, EP, DP-within-EP) and
 * a size in bytes.
 *
 * The programs.  One iteration of a job is, for each pipeline stage, one
 * list of operations every rank of that stage runs (ranks of a stage
 * differ only in their TP/DP/EP group members): compute for a time, a
 * collective on one of its groups (blocking, or asynchronous on that
 * group's stream), a send to / receive from the previous or next stage
 * (keyed, so that a receive waits for exactly its message), a wait for the
 * rank's asynchronous collectives.  The 1F1B builder and the AICB replay
 * both produce programs; the network executor (training_run.c) and the
 * sans-I/O evaluator (trn_eval) both run them.
 */
#ifndef AISIM_TRAINING_H
#define AISIM_TRAINING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/err.h"

enum trn_coll {
    TRN_C_NONE, TRN_C_ALLREDUCE, TRN_C_ALLGATHER, TRN_C_REDUCESCATTER, TRN_C_ALLTOALL,
    TRN_C_BROADCAST, TRN_C_NCOLL
};
enum trn_group { TRN_G_TP, TRN_G_DP, TRN_G_EP, TRN_G_DPEP, TRN_G_PP, TRN_G_NGROUP };

const char *trn_coll_name(int coll);     /* "allreduce", ... */
const char *trn_group_name(int group);   /* "tp", "dp", ... */
/* nccl-tests' bus bandwidth factor of a collective on n ranks:
 * 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter,
 * all-to-all, 1 for broadcast. */
double trn_busbw_factor(int coll, int n);

typedef struct trn_comm {
    uint8_t coll, group;        /* enum trn_coll, enum trn_group */
    uint64_t bytes;             /* per rank (the collective's message size) */
} trn_comm;

typedef struct trn_layer {
    char name[40];
    int line;                   /* line in its file, 0 if generated */
    int64_t fwd_ps, ig_ps, wg_ps, update_ps;    /* compute times */
    trn_comm fwd, ig, wg;
} trn_layer;

/* A workload: the layers and what the file's first line declared. */
typedef struct trn_wl {
    bool micro;                 /* a MICRO benchmark file */
    int tp, ep, pp, vpp, ga, all_gpus;          /* 0: not given; beyond int:
                                                   INT_MAX */
    uint64_t ga_raw;                            /* ga as written */
    long declared;              /* layer count on line 2 (may differ) */
    uint64_t pp_bytes;          /* "pp_comm N": activation bytes between stages */
    size_t n;
    trn_layer *layers;
} trn_wl;

void trn_wl_free(trn_wl *w);

/* Reads a SimAI workload file (docs/training.md: line 1 the parallelism and
 * its parameters, line 2 a layer count, then one line of 12 whitespace-
 * separated fields per layer, read to the end of the file whatever line 2
 * says).  Compute times are in ns (SimAI's ticks).  Errors (AISIM_EINVAL,
 * one line "file:line: ..."): a wrong field count, a number that does not
 * parse, an unknown collective, no layer.  On error *w holds nothing. */
int trn_read_simai(trn_wl *w, const char *path, err *e);

/* SimAI's bus-bandwidth table (its analytical mode's busbw.yaml): GB/s per
 * group and collective (TRN_C_NONE: PP's sends), 0 where the file gives
 * none or null; groups: the groups the file names (bit per trn_group). */
typedef struct trn_busbw {
    double GBps[TRN_G_NGROUP][TRN_C_NCOLL];
    unsigned groups;
} trn_busbw;
/* Reads `path`; 0, or an error naming the file, line and column. */
int trn_read_busbw(trn_busbw *b, const char *path, err *e);

/* One call of an AICB physical log. */
typedef struct trn_call {
    uint8_t coll;               /* enum trn_coll, or TRN_CALL_* below */
    uint8_t group;              /* enum trn_group (TRN_G_PP for isend/irecv) */
    uint8_t phase;              /* enum trn_phase */
    int group_size;
    uint64_t bytes;
    int line;
} trn_call;
enum { TRN_CALL_ISEND = 100, TRN_CALL_IRECV, TRN_CALL_BARRIER, TRN_CALL_EPOCH };
enum trn_phase { TRN_PH_INIT, TRN_PH_FWD, TRN_PH_BWD, TRN_PH_STEP };

/* An AICB log: one block of calls per pipeline stage (one block if the log
 * has a single rank range). */
typedef struct trn_log {
    int stages;
    size_t *ncalls;             /* per stage */
    trn_call **calls;           /* per stage */
    int tp, dp;                 /* group sizes seen (0: no such call) */
    int all;                    /* CommGroup.all's size (every rank), or 0 */
    int tp_line, dp_line, all_line;     /* where each was read */
} trn_log;

/* Reads an AICB physical log (line 1 a rank-range tag or a pp_stage block
 * tag, then a CSV header, then rows of 12 fields; later pp_stage tags start
 * the next stage's block).  Errors as trn_read_simai. */
int trn_read_aicb(trn_log *l, const char *path, err *e);
void trn_log_free(trn_log *l);

/* ---- a workload from a model description -------------------------------- */

typedef struct trn_model {
    int layers, hidden, heads, ffn, vocab;
    int seq, micro_batch;
    int experts, topk;          /* experts 0: dense */
    int tp, pp, dp, ep;
    int zero;                   /* ZeRO stage 0..3 */
    bool sp;                    /* sequence parallelism (TP all-gather /
                                   reduce-scatter instead of all-reduce) */
    bool gated;                 /* gated MLP (SwiGLU: three h x f matrices) */
    double gpu_flops;           /* peak FLOP/s of one GPU (dense, bf16) */
    double efficiency;          /* achieved fraction of the peak, (0, 1] */
    int bytes_per_param;        /* gradient and parameter width, 2 (bf16) */
} trn_model;

/* Checks the description (positive sizes, hidden divisible by heads and
 * by tp, layers divisible by pp, experts by ep); a message in e if not. */
int trn_model_check(const trn_model *m, err *e);
/* FLOPs of one micro-batch's forward pass through one transformer layer
 * on one TP rank, and of the whole model's forward+backward per token
 * (6 x parameters + attention; for MFU). */
double trn_layer_fwd_flops(const trn_model *m);
double trn_model_flops_per_token(const trn_model *m);
/* Parameters of the whole model (embedding included). */
double trn_model_params(const trn_model *m);
/* The layers of the whole model: m->layers transformer layers (plus the embedding as layer 0 and the
 * output head last), each with compute from FLOPs / (gpu_flops x
 * efficiency) and its TP / EP communication; DP communication is left
 * to the builder (buckets).  *w is filled. */
void trn_generate(trn_wl *w, const trn_model *m);

/* ---- programs ----------------------------------------------------------- */

enum trn_op_kind {
    TRN_OP_COMPUTE,             /* dur_ps */
    TRN_OP_COLL,                /* comm; async: on the group's stream */
    TRN_OP_SEND,                /* to the next (dir 0) / previous (dir 1)
                                   stage, key, bytes */
    TRN_OP_RECV,                /* from the previous (dir 0: activations) /
                                   next (dir 1: gradients) stage, key */
    TRN_OP_WAIT,                /* until the rank's async collectives end */
};

typedef struct trn_op {
    uint8_t kind;
    uint8_t dir;                /* SEND / RECV */
    bool async;                 /* COLL */
    bool bwd;                   /* belongs to a backward pass (timelines) */
    trn_comm comm;              /* COLL; bytes also for SEND */
    int64_t dur_ps;             /* COMPUTE */
    int32_t key;                /* SEND / RECV: message key per direction */
    int32_t mb;                 /* micro-batch (-1: none), for timelines */
} trn_op;

typedef struct trn_prog {
    size_t n, cap;
    trn_op *ops;
    int keys[2];                /* keys per direction (max key + 1) */
} trn_prog;

void trn_prog_free(trn_prog *p);

/* How the builder turns layers into programs. */
typedef struct trn_build_cfg {
    int pp, vpp;                /* stages, virtual stages (chunks) per stage */
    int micro_batches;          /* per iteration (gradient accumulation) */
    int zero;                   /* 0: all-reduce gradients; 1, 2: reduce-
                                   scatter gradients + all-gather parameters
                                   after the step; 3: also all-gather each
                                   layer's parameters before its forward and
                                   backward */
    uint64_t bucket_bytes;      /* DP gradient bucket; 0: one per layer */
    uint64_t act_bytes;         /* PP activation bytes per micro-batch */
    const trn_comm *const *step;    /* per stage: collectives of the step, */
    const size_t *nstep;            /* blocking, after the gradients (or NULL) */
} trn_build_cfg;

/* The iteration of `w` as one program per stage (progs[0..pp-1], to free
 * with trn_prog_free).  Layers are split into pp*vpp contiguous chunks
 * (the first chunks take one more when they do not divide); stage s runs
 * chunks s, s+pp, ...  The order is Megatron's 1F1B (vpp 1) or interleaved
 * 1F1B (vpp > 1, micro_batches a multiple of pp): warm-up forwards, one
 * forward one backward, cool-down backwards; forward of a layer is its
 * fwd compute then its fwd communication (blocking), backward its ig
 * compute and communication (blocking), then its wg compute; weight-grad
 * communication goes into DP buckets, launched asynchronously during the
 * last micro-batch's backward; the step waits for them, then runs the
 * layers' update time.  Errors: vpp > 1 with micro_batches not a multiple
 * of pp, more chunks than layers. */
int trn_build(trn_prog *progs, const trn_wl *w, const trn_build_cfg *c, err *e);

/* The iteration of an AICB log, as the 1F1B builder runs it: stage s's
 * layers are the collectives of the log's first forward pass of that stage
 * (layer i forwards with its i-th call) and of its first backward pass
 * (layer i back-propagates with the call k-1-i of k), the micro-batches
 * are stage 0's forward passes, the activation size the first isend's, and
 * the step runs the log's step calls in order, blocking; compute: fwd_ps
 * (bwd_ps) per micro-batch and stage spread evenly over the layers.  The
 * log's own isend/irecv placement is not replayed (AICB logs a stage's
 * backward irecv after the backward pass it feeds).  Set-up calls (before
 * the first epoch_end) and later iterations are skipped. */
int trn_build_aicb(trn_prog *progs, const trn_log *l, int64_t fwd_ps, int64_t bwd_ps,
                   int *micro_batches, err *e);

/* ---- sans-I/O evaluation ------------------------------------------------ */

/* Cost of communication without a network: a collective of `bytes` on a
 * group of n ranks takes lat_ps[g] + busbw_factor x bytes / bw[g]; a send
 * between stages lat_ps[PP] + bytes / bw[PP]. */
typedef struct trn_cost {
    double bw_Bps[TRN_G_NGROUP];    /* bytes/s per group class */
    int64_t lat_ps[TRN_G_NGROUP];
    int size[TRN_G_NGROUP];         /* ranks per group */
    double coll_Bps[TRN_G_NGROUP][TRN_C_NCOLL];    /* > 0: this collective's
                                       bus bandwidth in the group (SimAI's
                                       busbw.yaml; [PP][NONE]: the sends) */
} trn_cost;

/* What one stage's rank did over the iteration. */
typedef struct trn_stage_stats {
    int64_t end_ps;             /* when its program ended */
    int64_t compute_ps;         /* busy computing */
    int64_t comm_ps;            /* time covered by its communication
                                   (blocking or async; union of intervals) */
    int64_t exposed_ps;         /* communication while not computing */
    int64_t idle_ps;            /* neither (bubbles, waiting for peers) */
} trn_stage_stats;

/* Runs the programs of pp stages, one representative rank per stage
 * (ranks of a stage are symmetric when the network has no contention), all
 * starting at 0.  Fills st[0..pp-1] and returns the iteration time (the
 * last stage end), or AISIM_EINVAL (and a message) if the programs
 * deadlock. */
int64_t trn_eval(const trn_prog *progs, int pp, const trn_cost *c, trn_stage_stats *st,
                 err *e);

/* trn_eval that also reports every communication of a stage's rank:
 * trace(ctx, stage, op, start, end) for a collective (blocking, or async
 * on its stream) over its duration, and for a send from the sender's
 * stage over [sent, arrival] (the receiver is stage+1 for dir 0, stage-1
 * for dir 1).  trace NULL is trn_eval. */
typedef void (*trn_trace_fn)(void *ctx, int stage, const trn_op *op, int64_t start_ps,
                             int64_t end_ps);
int64_t trn_eval_trace(const trn_prog *progs, int pp, const trn_cost *c, trn_stage_stats *st,
                       trn_trace_fn trace, void *ctx, err *e);

/* An interval list [start, end) in ps, grown by trn_iv_add. */
typedef struct trn_ivs {
    size_t n, cap;
    int64_t (*iv)[2];
} trn_ivs;
void trn_iv_add(trn_ivs *v, int64_t start_ps, int64_t end_ps);
void trn_iv_free(trn_ivs *v);
/* With compute intervals comp (disjoint, in order) and communication
 * intervals comm (any order; sorted in place): the length of the union of
 * comm in *comm_ps, and of its part outside comp in *exposed_ps. */
void trn_overlap(const trn_ivs *comp, trn_ivs *comm, int64_t *comm_ps, int64_t *exposed_ps);

#endif
