/*
 * skel_run.h - one run of the cluster under one detection method: churn,
 * failures, agents and probes at flow level, SkeletonHunter's (or a
 * baseline's) detection and localization, and the scoring against the
 * ground truth.  Stepped one simulated second at a time by the glue
 * (skel_sim.c) or by tests.
 */
#ifndef AISIM_SKEL_RUN_H
#define AISIM_SKEL_RUN_H

#include <stdio.h>

#include "systems/skeleton/skel_model.h"

enum skel_method {
    SKEL_M_SKELETON,        /* SkeletonHunter */
    SKEL_M_NOACT,           /* SkeletonHunter without incremental activation */
    SKEL_M_BASIC,           /* SkeletonHunter-Basic: rail pruning only */
    SKEL_M_FULL,            /* full mesh (Pingmesh) */
    SKEL_M_RPING,           /* R-Pingmesh-style: underlay ToR mesh + inter-ToR */
    SKEL_M_VOTE007,         /* skeleton lists, 007-style voting only */
    SKEL_M_RPING_PUB,       /* R-Pingmesh at its own rates: ToR mesh 10/s, inter-ToR 1/s */
    SKEL_M_COUNT,
};
extern const char *const skel_method_names[];  /* NULL-terminated */

/* The short-term test: LOF as the paper's, or bypassed (ablations). */
enum { SKEL_LOF_ON, SKEL_LOF_ALWAYS, SKEL_LOF_NEVER };

typedef struct skel_params {
    /* probes */
    double rtt_median_us, rtt_sigma, hop_us;    /* base RTT: lognormal + per agg hop */
    double spike_p, spike_mean_us;              /* congestion noise */
    double queue_us, rnic_gbps;                 /* queueing behind the job's traffic */
    double agent_jitter_us, probe_drop;         /* agent scheduling; whole-probe loss */
    double baseline_drift, baseline_period_s;   /* slow variation of a path's baseline */
    int probe_packets, sweep_packets;
    int timeouts;                               /* consecutive timeouts = unreachable */
    double rate;                                /* targets per second per endpoint */
    /* detection */
    double loss_threshold;
    int lof_mode;                               /* SKEL_LOF_* */
    bool ztest;                                 /* the long-term Z-test runs */
    bool confirm;                               /* an outlier needs the next round too */
    int window_s, lookback, lof_k;
    double lof_max, far_sd, floor_sd_us;
    double suspect_factor, suspect_abs_us;
    int longterm_s;
    double z_alpha, z_shift;
    int holdoff_s;
    /* localization */
    int vote_window_s;
    int replay_s, sweep_s, check_s, reprobe_s, validate_s;  /* each step's latency */
    bool mitigate;                              /* isolate a localized RNIC/host/rule */
    /* inference */
    int infer_after_s, stft_win, stft_hop;
    double period_min_s, period_max_s;          /* range the period is searched in */
    double size_tol;        /* clustering: largest relative deviation of a group's size */
    /* churn */
    double create_median_s, create_sigma, life_median_s, life_sigma;
    /* failure effects by symptom */
    double loss_p, flap_loss_p, latency_us;
    /* gray failures: drift ramp, link flaps, intermittent RNIC episodes */
    double drift_ramp_s;
    int flap_period_s, flap_down_s, episode_s;
    double episode_duty;
} skel_params;

/* The state an agent keeps per target (its window, look-back, long-term
 * fit: skel_run_int.h's tgt), in bytes. */
size_t skel_agent_target_bytes(const skel_params *p);

/* A task of the scenario (explicit) or drawn by the churn. */
typedef struct skel_task_spec {
    int gpus;
    skel_par par;
    int64_t start_s, life_s;        /* life 0: to the end of the run */
} skel_task_spec;

/* A failure: Table 1 type on a component, [start, end). */
typedef struct skel_fault_spec {
    int type;
    int32_t comp;
    int64_t start_s, dur_s;
} skel_fault_spec;

typedef struct skel_world {
    const skel_fabric *f;
    const skel_params *p;
    const skel_traffic *traffic;
    /* tasks: explicit (churn off) or random */
    const skel_task_spec *tasks;
    int ntasks;
    const int *task_gpus;           /* random: sizes to draw from */
    int ntask_gpus;
    bool churn;
    /* failures */
    const skel_fault_spec *faults;
    int nfaults;
    double fail_rate_per_h;         /* random failures, cluster-wide */
    const double *type_weight;      /* SKEL_NFTYPES */
    int64_t mttr_s[3];              /* software, link/port, RNIC/host */
    int64_t stop_s;
    int trace_src, trace_dst;       /* endpoint pair whose probes are traced, or -1 */
} skel_world;

typedef struct skel_run skel_run;

skel_run *skel_run_create(const skel_world *w, int method, uint64_t seed);
void skel_run_destroy(skel_run *r);
/* Advances the run through second t (call with t = 0, 1, 2, ...). */
void skel_run_step(skel_run *r, int64_t t);
/* Finishes scoring at the end of the run. */
void skel_run_finish(skel_run *r);

/* Results of a run. */
typedef struct skel_result {
    double precision, recall, loc_accuracy;     /* precision per alarm */
    double incident_precision;                  /* per alarm episode */
    uint64_t incidents, incidents_true;
    double detect_delay_s, loc_delay_s;         /* means over detected failures: onset to the
                                                   first alarm; that alarm to its verdict */
    double total_delay_s;                       /* detect + localize (the paper's 8 s) */
    double detect_delay_median_s;               /* median of the same */
    uint64_t alarms, tp, fp, fp_startup;
    uint64_t failures, relevant, detected, localized_ok;
    uint64_t probes;
    uint64_t agent_seconds;     /* seconds agents spent probing (summed over agents) */
    double targets_mean;                        /* list length per probing endpoint */
    uint64_t tasks, inferred, inferred_exact;
    uint64_t per_type_relevant[SKEL_NFTYPES], per_type_detected[SKEL_NFTYPES],
        per_type_loc_ok[SKEL_NFTYPES];
    uint64_t per_step[6];                       /* correct verdicts by localization step */
} skel_result;
void skel_run_result(const skel_run *r, skel_result *out);

/* Writes the ground truth (one row per failure, with what the method made
 * of it), the alarms and the probe trace (if any) as CSV. */
void skel_run_write_truth(const skel_run *r, FILE *f, bool header, int rep);
void skel_run_write_alarms(const skel_run *r, FILE *f, bool header, int rep);
void skel_run_write_trace(const skel_run *r, FILE *f, bool header);
/* Test hook: the scorer's copy of the truth gets its components shuffled
 * among failures of the same kind (call before the first step).  The
 * decisions must not change; the scores do. */
void skel_run_permute_truth(skel_run *r, uint64_t seed);

#endif
