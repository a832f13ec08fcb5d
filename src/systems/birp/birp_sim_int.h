/*
 * birp_sim_int.h - private to the BIRP model (birp_sim.c, birp_cfg.c,
 * birp_report.c): the policy and source enums, the bound configuration
 * structs, the simulation state (requests, EDF queues, batches, edges, slot
 * rows, birp_model), the small helpers several files use, and the functions
 * the files call across each other.
 *
 * Nothing outside src/systems/birp/ includes it; the model is reached through
 * birp_model_ops (birp_sim.c).
 */
#ifndef AISIM_BIRP_SIM_INT_H
#define AISIM_BIRP_SIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/rng.h"      /* before model.h: its inline code names a local "out" */
#include "aisim/model.h"
#include "systems/birp/birp.h"
#include "systems/birp/birp_data.h"

#define MAX_CLASSES 8
#define MAX_MODELS 8        /* deployed per edge */
#define PULL_RING 64        /* bandit pulls awaiting their reward */

enum policy { P_BIRP, P_BIRP_STATIC, P_SERIAL, P_MS, P_LOCAL, P_JSQ, P_CLIPPER, P_BATCH_ONLY,
              P_TRITON };
extern const char *const policy_names[];     /* indexed by enum policy; in birp_cfg.c */
enum source { SRC_TRACE, SRC_POISSON, SRC_ONOFF };
enum batcher { B_QP, B_AIMD, B_TRITON };    /* how a queue forms its batches */
enum tir_kind { TIR_PARAMETRIC, TIR_PROFILE };

/* ---- configuration (bound in birp_cfg.c) ---------------------------------- */

typedef struct top_cfg {
    int policy;
    const char *profiles, *engine;
    int64_t slot_ps, warmup_ps;
    double sigma, gamma;
    int64_t parallel;
    int64_t drift_ps;
    double drift_gain;
    cfg_node *edges, *links, *classes, *workload, *bandit, *grid, *weights, *clipper, *triton;
    double target_util;
    bool downgrade, class_caps;
    bool switch_cost;                       /* a model put in use is loaded first */
    int batcher;                            /* enum batcher (the QP policies; ablation) */
    int tir;                                /* enum tir_kind: the QP's TIR (ablation) */
    int64_t load_rate_bps, load_setup_ps;   /* load time = setup + engine bytes / rate */
} top_cfg;

typedef struct wl_cfg {
    int source;
    const char *file;
    double load;
    cfg_node *origin;
    int64_t on_ps, off_ps, start_ps;
    double speedup;
} wl_cfg;

typedef struct bandit_cfg {
    cfg_node *a, *beta;
    int64_t hold, window;
    double c, discount, static_a, static_beta;
    bool normalise;
} bandit_cfg;

typedef struct clipper_cfg {
    int64_t step, timeout_ps;
    double backoff;
} clipper_cfg;

typedef struct triton_cfg {
    int64_t delay_ps;                       /* max_queue_delay */
    int64_t max_batch;                      /* 0: per (edge, model) from the SLO */
    cfg_node *preferred;
    int pref[BIRP_MAX_GRID], npref;         /* preferred batch sizes, increasing */
} triton_cfg;

typedef struct weight_cfg {
    double tau, batch, queue, util;
} weight_cfg;

/* ---- state ---------------------------------------------------------------- */

enum { R_PENDING, R_OK, R_LATE, R_DROPPED };

typedef struct req {
    int64_t t_arr;          /* arrival at the origin, ps */
    int64_t deadline;       /* t_arr + SLO, ps */
    int64_t t_enq;          /* arrival at the executing edge, ps */
    int64_t t_start;        /* batch start, ps (-1: not started) */
    int64_t t_done;         /* completion or drop, ps */
    int32_t pull;           /* the bandit pull in force at arrival (-1: none) */
    uint8_t cls, origin, dest, model;   /* model: index into the edge's deployed list */
    uint8_t state;
} req;

typedef struct rheap {      /* EDF: min-heap of request ids by (deadline, id) */
    uint32_t *v;
    size_t n, cap;
} rheap;

typedef struct batch {
    struct batch *prev, *next; /* in-flight list, freed at fini */
    int edge, model, n;
    int64_t start;
    uint32_t ids[];
} batch;

typedef struct edge {
    char name[32];
    const birp_curve *curve[MAX_MODELS];    /* deployed models */
    int nmodels;
    int best[MAX_CLASSES];                  /* most accurate SLO-feasible model per class */
    int ms_opt[MAX_CLASSES][MAX_MODELS];    /* model_selection options per class, best first */
    int ms_nopt[MAX_CLASSES];
    int use[MAX_CLASSES];                   /* model chosen per class (the plan) */
    int run[MAX_CLASSES];                   /* model new arrivals of the class go to: use[c]
                                               once loaded, the previous one until then */
    int64_t ready_at[MAX_MODELS];           /* engine loaded from then on (-1: not loaded) */
    int tmax[MAX_MODELS];                   /* triton: max_batch_size per model */
    rheap q[MAX_MODELS];                    /* EDF queue per model */
    int queued;
    int running;                            /* batches on the accelerator */
    int bcap;                               /* batch-size cap for the tightest SLO */
    int ccap[MAX_CLASSES];                  /* batch-size cap when the queue's head is of class c */
    double aimd[MAX_MODELS];                /* clipper: AIMD batch cap per model queue */
    int64_t wake_at;                        /* clipper: a batch-timeout wake-up is pending then */
    int conc;                               /* concurrent batches allowed */
    rng r_exec;
    /* accounting */
    int64_t busy_since;
    double busy_ps;
    int64_t batches, batched_reqs, enq_slot;
    int64_t switches;                       /* engine loads after the start */
    int64_t arr_slot;                       /* arrivals at this origin in the slot */
    double lam_est;                         /* EWMA arrival rate, req/s */
    double wrr[BIRP_MAX_EDGES];             /* smooth WRR credit per destination */
} edge;

typedef struct slot_row {
    double t_s;
    int arm, status, fallback;
    double a, beta, obj, loss, offload;
    int bcap[BIRP_MAX_EDGES];
    int level[BIRP_MAX_EDGES];
} slot_row;

typedef struct birp_model {
    top_cfg cfg;
    wl_cfg wl;
    bandit_cfg bc;
    clipper_cfg cl;
    triton_cfg tr;
    weight_cfg w;
    sim *sim;                               /* polled (sim_poll) in long loops */
    int batcher;                            /* enum batcher in force */
    int E, C;
    edge e[BIRP_MAX_EDGES];
    char cname[MAX_CLASSES][32];
    double slo_s[MAX_CLASSES], share[MAX_CLASSES], input_bytes[MAX_CLASSES];
    double output_bytes[MAX_CLASSES];
    double min_slo_s;
    double origin_cum[BIRP_MAX_EDGES], class_cum[MAX_CLASSES];
    int64_t bw_bps[BIRP_MAX_EDGES][BIRP_MAX_EDGES], rtt_ps[BIRP_MAX_EDGES][BIRP_MAX_EDGES];
    int64_t link_free[BIRP_MAX_EDGES][BIRP_MAX_EDGES];
    int grid[BIRP_MAX_GRID], K;
    double *arm_a, *arm_beta;
    int na, nb;
    birp_profiles prof;
    birp_trace trace;
    double rate;                            /* mean arrivals, req/s */
    double cap_ref;                         /* serial capacity at load 1, req/s */
    int64_t stop_ps;
    /* workload */
    rng r_wl;
    int64_t *arr_ps;                        /* trace: the run's arrival times, sorted; owned */
    size_t narr, arr_idx;
    int tr_copies;                          /* trace: copies superposed */
    int64_t tr_wraps;                       /* trace: times a copy ran past the trace's end */
    int64_t on_end, on_start;
    /* decisions */
    double y[BIRP_MAX_EDGES][BIRP_MAX_EDGES];
    birp_bandit bandit;
    int arm, held;
    /* Pulls awaiting their reward: requests are credited to the pull in
     * force when they arrived; a pull's reward is final once the deadline of
     * its last request has passed (undecided ones then count as failures). */
    struct pull_acc {
        int arm;
        int64_t end_ps;                     /* when the pull's last slot ended */
        int64_t n_arr, n_dec;               /* requests arrived, decided */
        double loss;                        /* loss sum of those decided */
    } pend[PULL_RING];
    int32_t pull_cur, pull_fin;             /* current pull; first not yet rewarded */
    int64_t max_slo_ps;
    double slot_loss;                       /* the current slot: loss sum, requests */
    int64_t slot_n;
    double prev_load[BIRP_MAX_EDGES];
    int64_t solves, fallbacks, trivial;
    double solve_wall_s, solve_wall_max_s;
    sim_timer slot_timer;
    batch *inflight;                        /* running batches */
    /* requests */
    req *r;
    size_t nr, capr;
    slot_row *rows;
    size_t nrows, caprows;
} birp_model;

/* ---- small helpers -------------------------------------------------------- */

static inline int64_t slot_of(const birp_model *m) { return m->cfg.slot_ps; }

static inline double model_lat(const edge *ed, int mi, double b)
{
    return birp_curve_latency_s(ed->curve[mi], b);
}

/* Share-weighted latency of edge j at batch b with the models in use. */
static inline double mix_lat(const birp_model *m, int j, double b)
{
    double l = 0;
    for (int c = 0; c < m->C; c++)
        l += m->share[c] * model_lat(&m->e[j], m->e[j].use[c], b);
    return l;
}

static inline void account_busy(edge *ed, int64_t now)
{
    if (ed->running > 0)
        ed->busy_ps += (double)(now - ed->busy_since);
    ed->busy_since = now;
}

/* ---- across the files ----------------------------------------------------- */

/* birp_cfg.c: binds and checks the model's section, loads the profiles and
 * the trace, fills the static part of the state. */
int birp_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e);

/* birp_report.c: summary.json results and classes.csv, edges.csv, slots.csv. */
int birp_report(void *st, const sim *s, out *o, json_t *sum, err *e);

#endif
