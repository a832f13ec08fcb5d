/*
 * birp.h - BIRP's decision logic, sans-I/O (Sun et al., "BIRP: Batch-aware
 * Inference workload Redistribution and Parallel scheme for edge
 * collaboration", ICPP 2023).  No engine header: callers pass observations
 * in and get decisions back.  docs/birp.md has the full formulation.
 *
 *  - TIR, the Throughput Improvement Ratio of batch b over serial execution,
 *    TIR(b) = b * l(1) / l(b).  The optimiser uses the two-parameter
 *    saturating form
 *        TIR_j(b; a, beta) = 1 + a * (T_j - 1) * (1 - exp(-beta (b - 1)))
 *    where T_j is edge j's profiled TIR at its largest batch: a scales the
 *    attainable gain (co-located batches and run-to-run noise make the real
 *    gain smaller than the profile's), beta sets how fast it saturates.
 *  - A UCB bandit over a grid of (a, beta) arms, rewarded with 1 - the mean
 *    inference loss of each slot, its bonus scaled to the rewards' spread,
 *    optionally discounted or windowed for drift (see below).
 *  - The slot problem: routing fractions y_ij, a convex combination z_jk of
 *    the batch-size breakpoints b_k per edge (the piecewise-linear stand-in
 *    for the integer batch size), overflow o_j; a convex QP solved with
 *    Ipopt.  Solver status is checked on every call; a failed or
 *    constraint-violating solve falls back to local routing at the largest
 *    SLO-safe batch and is counted.
 *  - The model-selection baseline's planner (Clipper/Jellyfish style: keep the
 *    most accurate models whose serial capacity carries the load, downgrade
 *    the cheapest accuracy first) and its capacity-proportional routing.
 */
#ifndef AISIM_BIRP_H
#define AISIM_BIRP_H

#include <stddef.h>
#include <stdint.h>

struct sim;     /* polled through sim_poll() (aisim/sim.h); NULL: never */


#define BIRP_MAX_EDGES 8
#define BIRP_MAX_GRID 12

/* ---- TIR ------------------------------------------------------------------ */

/* Parametric TIR of batch b (>= 1) for an edge whose profiled maximum TIR
 * is tmax (>= 1). */
double birp_tir(double b, double tmax, double a, double beta);

/* Throughput of `parallel` execution streams relative to one, when a batch
 * started with k others running takes (1 + gamma k) times longer: with
 * every stream busy each batch starts beside parallel - 1 others, so the
 * accelerator serves parallel / (1 + gamma (parallel - 1)) times what one
 * stream does (1.25 for 2 streams and gamma 0.6).  Every planner (the QP's
 * service rates, model selection's and the batching baselines' capacity)
 * multiplies its one-stream capacity by it. */
double birp_stream_gain(int parallel, double gamma);

/* ---- UCB bandit ------------------------------------------------------------- */

/* UCB over a few arms with three choices a stationary UCB1 leaves open:
 *
 *  - scale: with `normalise`, the exploration bonus is c * s * sqrt(ln n / N_i)
 *    where s is the standard deviation of the rewards seen (in the window or
 *    discounted like the rest), i.e. the index of UCB for s-subgaussian
 *    rewards (Lattimore and Szepesvari, "Bandit Algorithms", 2020, ch. 7)
 *    with the unknown s estimated; without it, s = 1 and rewards are clamped
 *    to [0, 1] (UCB1, Auer, Cesa-Bianchi and Fischer 2002).  Rewards that
 *    differ by 0.01 between arms are then compared on their own spread, not
 *    on a [0, 1] range they never use.
 *  - forgetting: discount gamma in (0, 1] (discounted UCB) or a sliding
 *    window of the last `window` pulls (SW-UCB), both from Garivier and
 *    Moulines, "On upper-confidence bound policies for switching bandit
 *    problems", ALT 2011; gamma = 1 and window = 0 are plain UCB.
 *  - counts: N_i and n = sum N_i are the discounted (or windowed) pull
 *    counts, the means the discounted (windowed) reward means. */
typedef struct birp_bandit_par {
    double c;           /* exploration constant (sqrt(2): UCB1) */
    double discount;    /* gamma in (0, 1]; 1: no discounting */
    int window;         /* > 0: only the last `window` pulls count (then discount = 1) */
    int normalise;      /* 1: bonus scaled by the rewards' standard deviation */
} birp_bandit_par;

typedef struct birp_bandit {
    int narms;
    birp_bandit_par par;
    int64_t t;          /* pulls so far */
    int64_t *plays;     /* undiscounted pulls per arm; owned */
    double *cnt;        /* discounted / windowed pulls per arm; owned */
    double *sum;        /* discounted / windowed reward sums per arm; owned */
    double n, s1, s2;   /* discounted / windowed count, sum, sum of squares over all arms */
    int *h_arm;         /* window: ring of the last `window` pulls; owned */
    double *h_r;
    int h_len, h_pos;
} birp_bandit;

void birp_bandit_init(birp_bandit *b, int narms, const birp_bandit_par *par);
void birp_bandit_fini(birp_bandit *b);
/* The arm to play next: each arm with no (windowed) pull first, in index
 * order, then the largest mean_i + c * s * sqrt(ln n / N_i); ties go to the
 * lower index. */
int birp_bandit_select(const birp_bandit *b);
/* Records reward r for arm (clamped to [0, 1] unless normalised). */
void birp_bandit_update(birp_bandit *b, int arm, double r);
/* The arm with the highest (discounted / windowed) mean among played arms,
 * 0 if none. */
int birp_bandit_best(const birp_bandit *b);

/* ---- the slot problem ------------------------------------------------------- */

typedef struct birp_slot_in {
    int nedges;                             /* E, <= BIRP_MAX_EDGES */
    int ngrid;                              /* K, <= BIRP_MAX_GRID */
    double lambda[BIRP_MAX_EDGES];          /* arrivals expected at origin i, req/s */
    double backlog[BIRP_MAX_EDGES];         /* queued at j, expressed as req/s over the slot */
    double prev_load[BIRP_MAX_EDGES];       /* load at j in the last slot, req/s (weights) */
    double tau_s[BIRP_MAX_EDGES][BIRP_MAX_EDGES];   /* transfer delay i -> j, s (0 on i = j) */
    double acc[BIRP_MAX_EDGES];             /* accuracy of the models j runs, [0, 1] */
    int batch[BIRP_MAX_GRID];               /* breakpoints b_k, increasing, batch[0] = 1 */
    double lat_s[BIRP_MAX_EDGES][BIRP_MAX_GRID];    /* l_j(b_k), s */
    double mu[BIRP_MAX_EDGES][BIRP_MAX_GRID];       /* service rate TIR_j(b_k)/l_j(1), req/s */
    double slo_s;                           /* tightest SLO, s */
    int local_only;                         /* 1: y fixed to the identity */
    /* objective weights (docs/birp.md) */
    double w_tau, w_batch, w_queue, w_util;
    int max_iter;                           /* Ipopt iteration limit (tests force failure) */
    struct sim *poll;                       /* polled once per Ipopt iteration; NULL: never */
} birp_slot_in;

typedef struct birp_slot_out {
    double y[BIRP_MAX_EDGES][BIRP_MAX_EDGES];   /* fraction of i's arrivals run at j */
    double z[BIRP_MAX_EDGES][BIRP_MAX_GRID];    /* breakpoint weights */
    double o[BIRP_MAX_EDGES];                   /* overflow, req/s */
    double lat_bound_s[BIRP_MAX_EDGES];         /* batch-latency bound used */
    int bcap[BIRP_MAX_EDGES];                   /* rounded batch-size cap (>= 1) */
    double obj;                                 /* objective at (y, z, o) */
    int status;                                 /* Ipopt ApplicationReturnStatus, or
                                                   BIRP_STATUS_TRIVIAL */
    int fallback;                               /* 1: safe decision used */
} birp_slot_out;

#define BIRP_STATUS_TRIVIAL 100     /* no load: nothing to solve */

/* Fills lat_bound_s and the breakpoints' feasibility from `in`, builds the
 * QP, solves it and rounds it.  Never fails: on solver failure or a solution
 * that violates a constraint by more than 1e-6, out->fallback = 1 and the
 * decision is local routing with the largest batch within the latency bound.
 * lat_curve(j, b) gives l_j(b) for rounding (may be NULL: interpolate the
 * breakpoints).  When in->poll says the run must end, Ipopt stops at its
 * next iteration and the safe decision is returned (fallback = 1). */
void birp_slot_solve(const birp_slot_in *in, double (*lat_curve)(void *ctx, int j, double b),
                     void *ctx, birp_slot_out *out);

/* Largest violation of any constraint by (y, z, o) (0 if feasible). */
double birp_slot_violation(const birp_slot_in *in, const birp_slot_out *out);

/* ---- model-selection baseline ----------------------------------------------- */

#define BIRP_MAX_LEVELS 8

typedef struct birp_ms_in {
    int nedges;
    int nlevels[BIRP_MAX_EDGES];                /* model options per edge, best first */
    double acc[BIRP_MAX_EDGES][BIRP_MAX_LEVELS];/* accuracy of each option */
    double cap[BIRP_MAX_EDGES][BIRP_MAX_LEVELS];/* serial capacity 1/l(1), req/s */
    double lambda[BIRP_MAX_EDGES];              /* arrivals at origin i, req/s */
    double backlog[BIRP_MAX_EDGES];             /* queued at j, req/s over the slot */
    double target_util;                         /* e.g. 0.9 */
} birp_ms_in;

/* Chooses a level per edge: starting from the most accurate, while the load
 * exceeds target_util * total capacity, downgrades the edge whose next level
 * adds the most capacity per accuracy point lost.  Then routes: each edge
 * keeps up to its capacity share of the total load, and sends the excess to
 * the edges below their share in proportion to their spare share. */
void birp_ms_plan(const birp_ms_in *in, int level[BIRP_MAX_EDGES],
                  double y[BIRP_MAX_EDGES][BIRP_MAX_EDGES]);

#endif
