/*
 * fedenergy.h - the online controller of energy-efficient federated learning
 * (reduced local iterations with scaled updates), sans-I/O: no engine, no
 * files, no training.  The simulator glue and a real FL server can call the
 * same functions.
 *
 * Reconstruction (papers.md section 5(b), [I] items): each round t, device i
 * runs tau_i in 1..E local SGD steps instead of E and the server scales its
 * update by s_i = E / tau_i: FedNova's normalised averaging with the
 * effective step count fixed at E (Wang, Liu, Liang, Joshi, Poor, "Tackling
 * the Objective Inconsistency Problem in Heterogeneous Federated
 * Optimization", NeurIPS 2020, eq. (6)-(7)), so the aggregate keeps FedAvg's
 * effective learning rate whatever the tau_i.  (fedenergy_scale() keeps the
 * damped variant 1 + (E/tau - 1) rho for rho_floor < 1.)  Energy per round is
 * sum_i tau_i e_i + c_i (e_i compute energy per step, c_i communication).
 *
 * Convergence proxy.  FedNova's Theorem 1 (L-smooth objectives, local
 * stochastic gradients of variance <= sigma^2, bounded gradient
 * dissimilarity beta^2, kappa^2) bounds min_t E|grad F(w_t)|^2 by an
 * optimisation term 4 (F(w_0) - F_inf) / (eta tau_eff T), fixed here since
 * tau_eff = E, plus a noise term 4 eta L sigma^2 A / m with
 * A = m tau_eff sum_i p_i^2 |a_i|_2^2 / |a_i|_1^2 = m E sum_i p_i^2 / tau_i
 * for plain local SGD (a_i = [1..1], tau_i entries), plus client-drift terms
 * proportional to eta^2 L^2 (sigma^2 sum_i p_i (tau_i - 1) + kappa^2
 * max_i tau_i (tau_i - 1)) that only shrink as tau_i falls.  Cutting steps and
 * scaling the update therefore costs convergence through A alone: the error
 * of a round is its excess of A over full local training (per participant,
 * m = N devices),
 *     h_t(tau) = sum_i p_i,t g_i,t (E / tau_i - 1),   g_i,t = N p_i,t,
 * with p_i,t the round's FedAvg weights renormalised over its participants
 * (0 if absent): time-varying through participation and data share, known
 * before the round, independent of the decision.  The long-term convergence
 * constraint is  (1/T) sum_t h_t(tau_t) <= epsilon: the time average of
 * the bound's noise term stays within epsilon (in units of
 * 4 eta L sigma^2 E / N) of FedAvg's.  fedenergy_error() is one device's
 * g (E / tau - 1).
 *
 * Algorithm: Lyapunov drift-plus-penalty with one virtual queue
 *     Q_{t+1} = max(Q_t + h_t - epsilon, 0).
 * Each round minimises  V f_t(tau) + N Q_t h_t(tau),
 *     f(tau) = sum_i (e_i / e_mean) tau_i / E,
 * exactly over integers (separable: per device a convex function of one
 * integer, floor or ceiling of the clipped continuous minimiser; O(N)).
 *
 * What is guaranteed (proof in docs/fedenergy.md): (1) deterministic, any
 * coefficient sequence: for every plan tau*_t that meets the budget in every
 * round, sum_t f(tau_t) - f(tau*_t) <= N (sum_t (h_t - eps)^2 + Q_1^2 -
 * Q_{T+1}^2) / (2 V), and the cumulative violation sum_t (h_t - eps) <=
 * Q_{T+1} - Q_1 with Q_t <= max(Q_1, V (E - 1) / (E eps) + max_t h_t - eps);
 * (2) with participation drawn i.i.d. over rounds (the coefficients i.i.d.),
 * the expected regret against the hindsight optimum of the T-round program
 * itself (fedenergy_offline()) is at most T B / V with B = N max (h - eps)^2
 * / 2 (Neely 2010, Theorem 4.8, against the best stationary randomised
 * policy, whose cost lower-bounds the expected hindsight optimum by weak
 * duality), and the violation at most Q_{T+1} = O(V): with V = v sqrt(T)
 * both O(sqrt T).  fedenergy_regret_bound() and fedenergy_queue_bound()
 * evaluate the right-hand sides of (1).
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

/* One device's error term h(tau) = g (E / tau - 1). */
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
 *     L = sum_i (e_i / mean e) x_i + mu N (sum_i p_i h_i(E x_i) - epsilon)
 * after each round (g revealed), the dual variable takes
 *     mu <- max(mu + eta_dual (sum_i p_i h_i - epsilon), 0),
 * and each round's integer iterations are a randomised rounding of E x_i
 * that preserves the expectation (with h = g (E/tau - 1), the g term reads
 * mu N sum_i p_i g_i (1/x_i - 1)).  It decides before seeing the round's g.
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

/* Offline optimum in hindsight: over T rounds and n devices with realised
 * costs cost[t * n + i] (J per local step of device i in round t, 0 if it
 * did not train) and weighted error coefficients coef[t * n + i] = p_i,t
 * g_i,t, chooses integer iters in 1..E minimising
 * sum_t sum_i cost[t n + i] * iters subject to
 * sum_t sum_i coef[t n + i] (E / iters - 1) <= budget * T, as a 0-1 MILP (one
 * binary per extra iteration of a device in a round; GLPK simplex, then
 * branch and bound until the relative gap is below mip_gap, e.g. 1e-4; at
 * most 60 s).  Writes the best plan's compute energy to *energy_j, the
 * LP-relaxation lower bound to *bound_j (if not NULL; the true optimum lies
 * between the two) and, if iters is not NULL, the plan (T * n).  Returns 0,
 * or AISIM_ESOLVER with e filled.  (Infeasibility is impossible: tau = E has
 * zero error.) */
int fedenergy_offline(size_t n, size_t T, int iters_max, const double *cost,
                      const double *coef, double budget, double mip_gap,
                      double *energy_j, double *bound_j, int *iters, err *e);

/* Best fixed plan in hindsight: one tau_i per device for all T rounds,
 * minimising sum_t sum_i cost tau_i subject to the budget on average over
 * the T rounds (the primal-dual comparator).  Same inputs and outputs as
 * fedenergy_offline() (iters: n entries). */
int fedenergy_offline_fixed(size_t n, size_t T, int iters_max, const double *cost,
                            const double *coef, double budget, double mip_gap,
                            double *energy_j, int *iters, err *e);

/* Best plan meeting the budget in every round (the comparator of guarantee
 * (1)): T independent per-round programs.  Writes its compute energy; iters
 * (T * n) if not NULL. */
int fedenergy_offline_per_round(size_t n, size_t T, int iters_max, const double *cost,
                                const double *coef, double budget, double mip_gap,
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
