/*
 * skel_run_int.h - the state of one run (skel_run.c) shared with its
 * failures and localization (skel_locate.c).  Private to
 * src/systems/skeleton/.
 */
#ifndef AISIM_SKEL_RUN_INT_H
#define AISIM_SKEL_RUN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "systems/skeleton/skel_obs.h"

#define NWIN 16
#define MAXLB 16

typedef struct tgt {
    int32_t el[8];
    bool pref[8];
    uint8_t nel;
    uint8_t consec_to;
    uint8_t pending;        /* the last probe's window was an outlier */
    uint8_t nwin;
    int32_t win_id;
    float win[NWIN];
    uint32_t wsent, wlost;
    uint8_t nref, refpos;
    float (*ref)[SKEL_NSTAT];       /* look-back ring, allocated on first use */
    int64_t holdoff_s;
    int32_t lt_block;
    uint32_t lt_n;
    double lt_sum, lt_sq;
    float lt_mu, lt_sigma;
    bool lt_fit;
} tgt;

typedef struct ep_rt {
    int task;               /* -1: no container */
    bool ready;
    int64_t ready_s;
    skel_agent ag;
    tgt *ts;
    int retry;              /* target index to retry next second, or -1 */
    double frac;            /* sub-second offset of its probes */
} ep_rt;

typedef struct task_rt {
    skel_par par;
    int gpus, nhosts, nready;
    int *server;
    int64_t submit_s, end_s, *ready_s;
    uint64_t seed;
    uint32_t *toff, *tidx;      /* true skeleton (local) */
    bool alive, inferred, infer_ok, exact;
    int64_t infer_s;
    double period_s;            /* the period inferred from its traffic */
} task_rt;

/* An alarm and its verdict (decisions), then what the scorer made of it. */
typedef struct alarm_rt {
    double t;
    int64_t now_s;          /* the second it was raised in */
    int src, dst, sym, cls;
    int32_t comp;           /* the verdict, or -1 */
    int64_t loc_s;          /* when the verdict was in */
    uint8_t step;           /* LOC_* step that gave the verdict */
    bool target_ready;      /* the target's container was up (for the scorer) */
    int32_t el[8];
    uint8_t nel;
    /* scorer */
    int fault;              /* the failure that explains it, or -1 */
    bool startup;
} alarm_rt;

/* The localization step that named the culprit. */
enum { LOC_NONE, LOC_REPLAY, LOC_VOTE, LOC_PORT, LOC_QUEUE, LOC_VALIDATE, LOC_N };

typedef struct recent {
    int64_t t;
    int32_t el[8];
    uint8_t nel;
} recent;

typedef struct trace_rt {
    double t, rtt_us, loss;
    bool ok;
    int32_t tor, agg;       /* switch components of the path (agg -1: none) */
} trace_rt;

struct skel_run {
    const skel_world *w;
    const skel_fabric *f;
    const skel_params *p;
    int method;
    uint64_t seed;
    rng rc;                 /* churn */
    skel_wld *wld;          /* the world, behind skel_obs.h */
    struct skel_score *score;   /* the scorer's (truth side) */
    bool *ep_up;            /* per endpoint: its container is up */
    int *server_task;
    ep_rt *ep;
    task_rt *task;
    int ntask, captask;
    alarm_rt *alarm;
    size_t nalarm, capalarm;
    uint64_t fp_startup, probes;
    recent ring[256];
    int nring, ringpos;
    trace_rt *trace;
    size_t ntrace, captrace;
    int64_t now;
    double targets_sum;
    uint64_t targets_n;
};

static inline bool overlay_method(int m) { return m != SKEL_M_RPING && m != SKEL_M_RPING_PUB; }
typedef struct verdict {
    int32_t comp;
    int cls;
    int64_t at_s;
    int step;
} verdict;

/* skel_locate.c: localization by the run's method, from observations. */
verdict localize(skel_run *r, int a, int b, const tgt *t, double tsec);
/* skel_run.c: the endpoint's index in its task (local), and the run's
 * method lists; for the scorer. */
int skel_run_ep_of(const skel_run *r, const task_rt *k, int l);

/* skel_score.c: the scorer, the only reader of the world's truth. */
struct skel_score *skel_score_create(skel_run *r);
void skel_score_destroy(struct skel_score *sc);
void skel_score_step(skel_run *r, int64_t t);
void skel_score_finish(skel_run *r);

#endif
