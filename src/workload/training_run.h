/*
 * training_run.h - (private to the training model) a job's ranks running
 * their stage's program on the network: compute as timed events,
 * collectives through collective.h on the job's TP/DP/EP communicators,
 * pipeline sends with network_send().
 */
#ifndef AISIM_TRAINING_RUN_H
#define AISIM_TRAINING_RUN_H

#include "aisim/collective.h"
#include "aisim/network.h"
#include "aisim/training.h"
#include "workload/coll_wl.h"

typedef struct trn_call_rec {
    uint8_t group, coll;
    int gidx, ranks;
    uint64_t bytes;
    int64_t start_ps, finish_ps;
    double busbw_Bps;
} trn_call_rec;

typedef struct trn_job {
    /* configuration (the model fills it) */
    char name[48];
    int idx;
    int tp, pp, dp, ep, n;          /* n = tp * pp * dp ranks */
    int iterations;
    int64_t start_ps;
    trn_prog *progs;                /* pp programs */
    int *eps;                       /* endpoint of each rank */
    double model_flops_per_iter;    /* 0: not described (no MFU) */
    double tokens_per_iter;         /* 0: unknown */
    double peak_flops;              /* per GPU */
    enum coll_algo algo;
    int channels;
    uint64_t chunk_bytes;
    bool fluid;                     /* collectives in fluid mode */
    coll_nccl_cfg nccl;             /* NCCL's protocol model (coll_wl.h) */
    double bytes_scale;
    bool intra_analytical;          /* groups inside one server: formula */
    double intra_Bps;               /* their bus bandwidth */
    int timeline_ranks;             /* ranks whose timeline is written */
    /* run state (training_run.c) */
    struct trn_rt *rt;
} trn_job;

/* Builds the communicators and rank states; nothing is scheduled. */
void trn_job_init(trn_job *j, network *n, const int *server_of);
/* Schedules the first operations of every rank at j->start_ps. */
void trn_job_start(trn_job *j);
bool trn_job_done(const trn_job *j);
/* Per iteration: end time and the stats of rank 0 of each stage. */
typedef struct trn_iter_stats {
    int64_t start_ps, end_ps;
    int64_t compute_ps, comm_ps, exposed_ps;     /* averaged over ranks */
} trn_iter_stats;
int trn_job_iters(const trn_job *j, trn_iter_stats *res);
size_t trn_job_calls(const trn_job *j, const trn_call_rec **recs);
/* Writes the compute / communication intervals of the first
 * timeline_ranks ranks as rows of timeline.csv (f) and as segments for the
 * plot (seg: series, time_s, row; ranks drawn from row0 on). */
void trn_job_timeline(const trn_job *j, FILE *f, FILE *seg, int row0);
void trn_job_fini(trn_job *j);

#endif
