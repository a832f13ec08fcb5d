/*
 * fe_fed.h - federated training rounds for one method: the server, N devices
 * with their data shards and costs, local SGD, (scaled) FedAvg aggregation
 * weighted by sample count, energy and time accounting, and evaluation.
 *
 * A method decides each device's local iterations and update scale:
 *   fedavg        E iterations, scale 1
 *   fixed         `reduced` iterations, scale 1
 *   fixed_scaled  `reduced` iterations, scale E / reduced
 *   random        uniform in 1..E, scale fedenergy_scale() (E / tau at the
 *                 default rho_floor = 1)
 *   fedprox       E iterations with the proximal term prox_mu, scale 1; under
 *                 a deadline a device sends the steps it managed (partial
 *                 work, FedProx's gamma-inexact updates) instead of being
 *                 dropped
 *   fednova       tau_i = clip(round(reduced * mean e / e_i), 1, E): dearer
 *                 steps, fewer iterations; FedNova's normalised averaging,
 *                 scale tau_eff / tau_i with tau_eff = sum_i p_i tau_i
 *   ccfedavg      CC-FedAvg (Zhang et al. 2022, arXiv 2212.13679): device i
 *                 can afford full training (E iterations, scale 1) only every
 *                 k_i = ceil(e_i / (cc_budget * mean e)) of its rounds; in
 *                 the others it sends an estimated update, its last computed
 *                 update D_i reused as is (the paper's model estimation from
 *                 the latest local update), at no compute energy but the
 *                 usual download and upload
 *   gel           GeL (Boukhari et al., arXiv 2110.11486): device i runs
 *                 fednova's tau_i real iterations, then E - tau_i gradientless
 *                 guessed ones, each repeating its last real step (GeL's
 *                 guess from the last computed gradient, with plain SGD
 *                 instead of Adam's moments); scale 1, no compute energy for
 *                 the guesses
 *   online        the drift-plus-penalty controller (fedenergy.h), scale
 *                 fedenergy_scale(); the first `warmup_rounds` rounds run E
 *   online_pd     the online primal-dual controller (fedenergy_pd), same
 *                 scale and warm-up
 * A training device's error coefficient is g_i,t = N p_i,t (fedenergy.h);
 * `online` decides tau_i,t after its first step (ccfedavg's estimation
 * rounds run no step: g = 0, error 0).
 * Every method starts from the same parameters and device i draws its
 * mini-batches from stream ("fedenergy.batch", i) in every method (common
 * random numbers), so differences between methods are the methods'.
 * Availability: device i is unavailable in round t with probability
 * `unavailability` (stream ("fedenergy.availability", t)) or if the
 * availability trace marks it off; with participation < 1, round t's
 * participants (round(participation * available), at least 1) are drawn
 * from stream ("fedenergy.participation", t).  Stragglers: with probability
 * straggler_prob a participant runs straggler_slowdown times slower this
 * round (stream ("fedenergy.straggler", t)).  Dropout: with probability
 * dropout_prob a participant fails after training, before its upload
 * (stream ("fedenergy.dropout", t)): compute spent, update lost.  All of
 * these are the same in
 * every method.  With a deadline, a device whose download + compute +
 * upload exceeds it is dropped (its energy is spent, its update lost;
 * fedprox, gel, online and online_pd cap their iterations at what fits
 * instead); FedAvg weights are renormalised over the updates received.
 *
 * Sans-I/O: no engine, no files; the simulator glue calls fe_run_round() at
 * each round's start and schedules its end after the returned round time.
 */
#ifndef AISIM_FE_FED_H
#define AISIM_FE_FED_H

#include <stddef.h>
#include <stdint.h>

#include "systems/fedenergy/fe_data.h"
#include "systems/fedenergy/fe_model.h"
#include "systems/fedenergy/fedenergy.h"

enum fe_method { FE_M_FEDAVG, FE_M_FIXED, FE_M_FIXED_SCALED, FE_M_RANDOM, FE_M_FEDPROX,
                 FE_M_FEDNOVA, FE_M_CCFEDAVG, FE_M_GEL, FE_M_ONLINE, FE_M_ONLINE_PD, FE_M_COUNT };

extern const char *const fe_method_names[FE_M_COUNT + 1];

typedef struct fe_device {
    size_t *idx;            /* rows of the training set; owned by the problem */
    size_t n;               /* samples */
    double p;               /* n / total: FedAvg weight */
    double step_energy_j;   /* compute energy per local iteration, J */
    double step_time_s;     /* time per local iteration, s */
    double upload_energy_j; /* energy per model upload, J */
    double upload_time_s;   /* time per model upload, s */
    double download_energy_j;   /* energy per model download, J */
    double download_time_s;     /* time per model download, s */
    double idle_power_w;    /* power while waiting for the round to end, W */
} fe_device;

typedef struct fe_problem {
    fe_arch arch;
    const fe_dataset *train;    /* borrowed */
    const fe_dataset *test;     /* borrowed */
    size_t n_dev;
    fe_device *dev;             /* n_dev; borrowed */
    const double *w0;           /* initial parameters (nparam); borrowed */
    int iters_max;              /* E */
    int reduced_iters;          /* fixed / fixed_scaled */
    size_t batch;               /* mini-batch size */
    double lr;                  /* SGD step size */
    double l2;                  /* weight decay */
    int warmup_rounds;          /* online: rounds at E before the controller acts */
    double participation;       /* fraction of devices taking part in a round, (0, 1] */
    fedenergy_params ctl;       /* online controller constants */
    double pd_eta_primal;       /* online_pd primal step size */
    double pd_eta_dual;         /* online_pd dual step size */
    double prox_mu;             /* fedprox proximal weight */
    double cc_budget;           /* ccfedavg: per-round compute budget / mean device's, > 0 */
    double deadline_s;          /* round deadline, s; 0: none */
    double unavailability;      /* probability a device is unavailable in a round, [0, 1) */
    const unsigned char *avail_trace;   /* trace_rounds x n_dev, 1 = available; or NULL */
    size_t trace_rounds;        /* rounds past the trace: available */
    double straggler_prob;      /* probability a participant is slowed down */
    double straggler_slowdown;  /* its compute-time factor, >= 1 */
    double dropout_prob;        /* probability a participant fails before uploading */
    int plan_iters;             /* > 0: online runs this fixed tau after warm-up (comparator) */
    uint64_t seed;              /* run seed */
    struct sim *poll;           /* polled while training (sim_poll); NULL: never */
} fe_problem;

typedef struct fe_round_stats {
    double compute_j;       /* this round's compute energy, J */
    double comm_j;          /* this round's download + upload energy, J */
    double idle_j;          /* this round's idle energy (waiting for the slowest), J */
    double time_s;          /* round duration: slowest device, s */
    double accuracy;        /* test accuracy after aggregation, [0, 1] */
    double loss;            /* test cross-entropy after aggregation */
    double mean_iters;      /* mean local iterations */
    double mean_scale;      /* mean update scale */
    double error;           /* sum_i p_i h_i (substitution error proxy) */
    double queue;           /* online: virtual queue after the round; else 0 */
    int participants;       /* devices that took part */
    int dropped;            /* of them, updates lost to the deadline */
    int estimated;          /* ccfedavg: updates estimated (reused), not trained */
    int guessed;            /* gel: guessed (gradientless) iterations, all devices */
} fe_round_stats;

typedef struct fe_run fe_run;

fe_run *fe_run_create(const fe_problem *pb, enum fe_method m);
void fe_run_destroy(fe_run *r);

/* Runs one round: decide, train locally, aggregate, evaluate.  If the
 * problem's poll says stop, the round ends early with meaningless stats. */
void fe_run_round(fe_run *r, fe_round_stats *st);

/* Rounds run so far. */
/* Current global parameters (nparam). */
const double *fe_run_params(const fe_run *r);
/* Online methods: the controllers, and the realised program of every
 * controlled round (after warm-up), for the offline optimum: per round t
 * and device i, cost[t * n_dev + i] (J per local step, 0 if it did not
 * train) and coef[t * n_dev + i] = p_i,t g_i,t.  Returns the rounds. */
const fedenergy_ctl *fe_run_ctl(const fe_run *r);
const fedenergy_pd *fe_run_pd(const fe_run *r);
size_t fe_run_history(const fe_run *r, const double **cost, const double **coef);
/* Compute energy of the controlled rounds (online methods only), J, and
 * their error sum_t sum_i p_i h_i,t. */
double fe_run_controlled_compute_j(const fe_run *r);
double fe_run_controlled_error(const fe_run *r);

#endif
