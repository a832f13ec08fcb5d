/*
 * fedenergy.h - the online controller of energy-efficient federated learning
 * (reduced local iterations with scaled updates), sans-I/O: no engine, no
 * files, no training.  The simulator glue and a real FL server can call the
 * same functions.
 *
 * Reconstruction (the design notes, papers.md section 5(b), [I] items): each
 * round t, device i runs tau_i in 1..E local SGD steps instead of E and the
 * server scales its update by
 *     s_i = 1 + (E / tau_i - 1) * rho_i,   rho_i = clip(cos(D_i, D_prev), 0, 1)
 * (D_i the device's reduced update, D_prev the previous global update): the
 * more the model has settled into one direction, the more the short update is
 * extrapolated.  Energy per round is  sum_i tau_i e_i + c_i  (e_i compute
 * energy per step, c_i communication energy).  The substitution error of a
 * device is
 *     h_i,t(tau) = g_i,t * ((E - tau) / E)^2,
 * g_i,t = (norm of the device's first local step from w_t / the same norm
 * in its first round)^2, a gradient-norm proxy that decays as training
 * converges.  The first step is run whatever tau is, so g_i,t is known
 * before tau_i,t is chosen and does not depend on it (the device decides
 * after its first step, from Q_t broadcast with the model).  The long-term
 * convergence constraint is  (1/T) sum_t sum_i p_i h_i,t(tau_i,t) <= epsilon
 * (p_i = n_i / n).
 *
 * Algorithm: Lyapunov drift-plus-penalty with one virtual queue
 *     Q_{t+1} = max(Q_t + h_t - epsilon, 0),   h_t = sum_i p_i h_i,t(tau_i,t).
 * Each round minimises  V f_t(tau) + N Q_t h_t(tau),
 *     f(tau) = sum_i (e_i / e_mean) tau_i / E,
 * exactly over integers (separable: per device a convex function of one
 * integer, floor or ceiling of the clipped continuous minimiser; O(N)).
 *
 * What is guaranteed (deterministic, any g sequence, adaptive or not;
 * proof in docs/fedenergy.md): for every plan tau*_t (fixed or changing
 * each round) that meets the budget in every round, h_t(tau*_t) <= epsilon,
 * on the same g sequence,
 *     sum_t f(tau_t) - f(tau*_t) <= N (sum_t (h_t - epsilon)^2 + Q_1^2 - Q_{T+1}^2) / (2 V),
 * and the cumulative violation sum_t (h_t - epsilon) <= Q_{T+1} - Q_1 with
 *     Q_t <= max(Q_1, V (E - 1) / (E epsilon) + max_t h_t - epsilon).
 * With V = v sqrt(T) both are O(sqrt T).  fedenergy_regret_bound() and
 * fedenergy_queue_bound() evaluate the right-hand sides.  Not guaranteed:
 * regret against the hindsight plan that meets the budget only on average
 * over T rounds (fedenergy_offline() with T rounds): when g drifts (it
 * decays over training) that plan spends the budget late, and the regret
 * against it can grow linearly (measured in docs/fedenergy.md).  Nor is
 * anything claimed against plans that run their own training (a different
 * g sequence); the simulator measures that comparator too.
 */
#ifndef AISIM_FEDENERGY_H
#define AISIM_FEDENERGY_H

#include <stddef.h>

#include "aisim/err.h"
#include "aisim/rng.h"

typedef struct fedenergy_params {
    int iters_max;          /* E: nominal local iterations per round, >= 1 */
    double v;               /* V: weight of energy against the queue, > 0 */
    double budget;          /* epsilon: allowed mean substitution error per round */
    double queue_init;      /* Q_1 */
    double rho_floor;       /* lower clip of rho in the scaling rule, [0, 1] */
} fedenergy_params;

typedef struct fedenergy_ctl {
    fedenergy_params p;
    double queue;           /* Q_t, dimensionless */
    double queue_max;       /* largest Q seen */
    double violation;       /* sum_t (sum_i p_i h_i,t - epsilon), may be < 0 */
    double drift_sq;        /* sum_t (sum_i p_i h_i,t - epsilon)^2 */
    double h_max;           /* largest sum_i p_i h_i,t */
    long rounds;            /* observed rounds */
} fedenergy_ctl;

void fedenergy_init(fedenergy_ctl *c, const fedenergy_params *p);

/* Chooses iters[i] in 1..E for n devices, from their energy per step
 * (J; only ratios matter), weights p[i] (sum 1) and this round's error
 * coefficients g[i] >= 0.  Deterministic; does not change c. */
void fedenergy_decide(const fedenergy_ctl *c, size_t n, const double *step_energy_j,
                      const double *p, const double *g, int *iters);
/* One device's share of fedenergy_decide(): a = e_i / mean e, w = n p_i. */
int fedenergy_decide_dev(const fedenergy_ctl *c, double a, double w, double g);

/* Right-hand sides of the guarantee above after c->rounds rounds, for n
 * devices: the regret bound in units of f (multiply by mean e * E for J)
 * and the bound on every Q_t (infinite if epsilon = 0). */
double fedenergy_regret_bound(const fedenergy_ctl *c, size_t n);
double fedenergy_queue_bound(const fedenergy_ctl *c);

/* The error term h(tau) = g ((E - tau) / E)^2. */
double fedenergy_error(int iters_max, int iters, double g);

/* Scale of a reduced update: 1 + (E / tau - 1) * max(rho_floor, clip(cos)). */
double fedenergy_scale(const fedenergy_params *p, int iters, double cosine);

/* After a round: adds sum_i p[i] h(iters[i]; g_obs[i]) - epsilon to the
 * virtual queue (clipped at 0) and the violation total.  Returns the round's
 * weighted error. */
double fedenergy_observe(fedenergy_ctl *c, size_t n, const double *p, const int *iters,
                         const double *g_obs);

/* The online primal-dual alternative (papers.md 5(b) item 4, as written
 * there): relaxed iterations x_i = tau_i / E in [1/E, 1] take a projected
 * gradient step on the Lagrangian
 *     L = sum_i (e_i / mean e) x_i + mu N (sum_i p_i g_i (1 - x_i)^2 - epsilon)
 * after each round (g revealed), the dual variable takes
 *     mu <- max(mu + eta_dual (sum_i p_i h_i - epsilon), 0),
 * and each round's integer iterations are a randomised rounding of E x_i
 * that preserves the expectation.  It decides before seeing the round's g.
 * The textbook bounds for this scheme with steps ~ 1/sqrt(T), O(sqrt T)
 * regret against the best fixed x meeting the budget on average and
 * O(T^3/4) violation, assume constraint functions drawn i.i.d. (or a fixed
 * known constraint); ours drift with training, so no bound is claimed:
 * regret against the best fixed plan is measured, with the violation beside
 * it.  Starts at x = 1 (FedAvg), mu = queue_init.  O(N) per round. */
typedef struct fedenergy_pd {
    fedenergy_params p;     /* iters_max, budget, queue_init */
    double eta_primal;      /* primal step size */
    double eta_dual;        /* dual step size */
    size_t n;               /* devices */
    double *x;              /* n relaxed iterations / E; owned */
    double mu;              /* dual variable (the virtual queue) */
    double mu_max;          /* largest mu seen */
    double violation;       /* sum_t (sum_i p_i h_i,t - epsilon) */
    long rounds;            /* observed rounds */
    rng r;                  /* randomised rounding */
} fedenergy_pd;

void fedenergy_pd_init(fedenergy_pd *c, const fedenergy_params *p, size_t n, double eta_primal,
                       double eta_dual, const rng *r);
void fedenergy_pd_fini(fedenergy_pd *c);
/* Rounds the current x to iters[i] in 1..E (advances the rounding stream). */
void fedenergy_pd_decide(fedenergy_pd *c, int *iters);
/* After a round: primal step with the revealed g_obs, then dual step with
 * the round's error at the iterations actually run.  Devices with p[i] == 0
 * did not take part: their x is left as is.  Returns the round's error. */
double fedenergy_pd_observe(fedenergy_pd *c, const double *step_energy_j, const double *p,
                            const int *iters, const double *g_obs);

/* Offline optimum in hindsight: over T rounds and n devices with error
 * coefficients g[t * n + i], chooses integer iters in 1..E minimising
 * sum_t sum_i step_energy_j[i] * iters subject to
 * sum_t sum_i p[i] h(iters; g) <= budget * T, as a 0-1 MILP (one binary per
 * extra iteration of a device in a round; GLPK simplex, then branch and
 * bound until the relative gap is below mip_gap, e.g. 1e-4; at most 60 s).
 * Writes the best plan's compute energy to *energy_j, the LP-relaxation
 * lower bound to *bound_j (if not NULL; the true optimum lies between the
 * two) and, if iters is not NULL, the plan (T * n).  Returns 0, or
 * AISIM_ESOLVER with e filled.  (Infeasibility is impossible: tau = E has
 * zero error.) */
int fedenergy_offline(size_t n, size_t T, int iters_max, const double *step_energy_j,
                      const double *p, const double *g, double budget, double mip_gap,
                      double *energy_j, double *bound_j, int *iters, err *e);

/* Best fixed plan in hindsight: one tau_i per device for all T rounds,
 * minimising T sum_i e_i tau_i subject to the budget on average over the T
 * rounds of g (the primal-dual comparator).  Same outputs as
 * fedenergy_offline() (iters: n entries). */
int fedenergy_offline_fixed(size_t n, size_t T, int iters_max, const double *step_energy_j,
                            const double *p, const double *g, double budget, double mip_gap,
                            double *energy_j, int *iters, err *e);

/* Best plan meeting the budget in every round (the drift-plus-penalty
 * comparator): T independent per-round programs.  Writes its compute
 * energy; iters (T * n) if not NULL. */
int fedenergy_offline_per_round(size_t n, size_t T, int iters_max, const double *step_energy_j,
                                const double *p, const double *g, double budget, double mip_gap,
                                double *energy_j, int *iters, err *e);

/* Energy models. */
/* kappa * cycles_per_sample * batch * f^2: J per local step (CPU model). */
double fedenergy_step_energy_j(double kappa, double cycles_per_sample, double batch,
                               double cpu_hz);
/* cycles_per_sample * batch / f: s per local step. */
double fedenergy_step_time_s(double cycles_per_sample, double batch, double cpu_hz);
/* P * bits / rate: J per upload (P_tx, uplink) or download (P_rx, downlink). */
double fedenergy_upload_energy_j(double tx_power_w, double model_bytes, double rate_bps);

#endif
