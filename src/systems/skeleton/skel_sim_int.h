/*
 * skel_sim_int.h - the state of SkeletonHunter's simulator glue, shared by
 * skel_sim.c (keys, engine, cluster tables), skel_failfile.c (the failures
 * file and the scheduled failures) and skel_lists.c (the lists experiment,
 * Figs. 15-16).  Private to src/systems/skeleton/.
 */
#ifndef AISIM_SKEL_SIM_INT_H
#define AISIM_SKEL_SIM_INT_H

#include <math.h>
#include <stdio.h>

#include "aisim/model.h"
#include "aisim/units.h"
#include "systems/skeleton/skel_pkt.h"
#include "systems/skeleton/skel_run.h"

enum { EXP_CLUSTER, EXP_LISTS, EXP_PACKETS };

typedef struct sk_cfg {
    int experiment;
    int64_t servers, gpus, per_tor, aggs;
    int64_t duration_ps;
    int64_t runs;
    cfg_node *methods, *tasks, *task_gpus, *scheduled, *weights, *list_rnics, *list_pp, *net;
    const char *fail_file, *trace_src, *trace_dst;
    double fail_rate;
    int64_t mttr_ps[3];
    /* probes */
    int64_t rtt_median_ps, hop_ps, spike_mean_ps, suspect_abs_ps, floor_sd_ps;
    double rtt_sigma, spike_p, rate, loss_p, flap_loss_p;
    int64_t queue_ps, rnic_bps, jitter_ps, baseline_period_ps, traffic_period_ps;
    double drop_p, baseline_drift;
    int64_t latency_ps;
    int64_t drift_ramp_ps, flap_period_ps, flap_down_ps, episode_ps;
    double episode_duty;
    int64_t probe_packets, sweep_packets, timeouts;
    /* detection */
    double loss_threshold, lof_max, far_sd, suspect_factor, z_alpha, z_shift;
    int lof_mode;
    bool ztest, confirm;
    int64_t window_ps, lookback, lof_k, longterm_ps, holdoff_ps;
    /* localization */
    int64_t vote_window_ps, validate_ps, replay_ps, sweep_ps, check_ps, reprobe_ps;
    bool mitigate;
    /* inference */
    int64_t infer_after_ps, stft_win, stft_hop, period_min_ps, period_max_ps;
    double size_tol;
    double ctl_rate;
    /* training traffic */
    int traffic;
    int64_t t_layers, t_hidden, t_heads, t_ffn, t_vocab, t_seq, t_mb, t_mbs;
    double t_tflops, t_eff;
    int64_t t_rnic_bps, t_nvlink_bps, t_gap_ps, t_jitter_ps;
    /* churn */
    int64_t create_median_ps, life_median_ps;
    double create_sigma, life_sigma;
} sk_cfg;

typedef struct sk_sim {
    sk_cfg c;
    model_env env;
    skel_params p;
    skel_fabric f;
    skel_world w;
    skel_traffic traffic;
    skel_train train;
    skel_pktexp pk;
    double period_s;
    skel_task_spec *tasks;
    int ntasks;
    int *task_gpus;
    int ntask_gpus;
    skel_fault_spec *faults;
    int nfaults, capfaults;
    double weight[SKEL_NFTYPES];
    int methods[SKEL_M_COUNT];
    int nmethods;
    int *list_rnics;
    int nlist;
    int *list_pp;               /* PP per size, or NULL: skel_par_default */
    int nlist_pp;
    skel_par *list_par;
    struct list_row *lrows;     /* lists: one per task size, computed by events */
    int nlist_done;
    skel_run **run;             /* nmethods x runs */
    int64_t t, stop_s;
    bool done;
} sk_sim;

static inline double ps_s(int64_t ps) { return (double)ps / (double)PS_PER_S; }
static inline double ps_us(int64_t ps) { return (double)ps / (double)PS_PER_US; }

/* A number for a CSV cell (empty when not finite), then "," or a newline. */
void skel_csv_num(FILE *f, double v, bool last);

/* skel_failfile.c: one failure of type `type` on component `comp` from
 * at_s for dur_s seconds; an error at node n (path) or, without n, naming
 * `where`.  skel_load_fault_file: the rows of failures.file (error at the
 * scenario's key `at`, path). */
int skel_add_fault(sk_sim *s, const char *type, const char *comp, double at_s, double dur_s,
                   const cfg_node *n, const char *path, const char *where, err *e);
int skel_load_fault_file(sk_sim *s, const cfg_node *at, const char *path, err *e);

/* skel_lists.c: the lists experiment: schedules its sizes, one event each,
 * then writes lists.csv and the summary's `lists`. */
void skel_lists_start(sk_sim *s, sim *sm);
int skel_lists_report(sk_sim *s, out *o, json_t *sum, err *e);

#endif
