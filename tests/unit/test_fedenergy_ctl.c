/*
 * test_fedenergy_ctl.c - the online controller (fedenergy.h) on synthetic,
 * seeded error sequences: choices stay in 1..E and follow the costs; the
 * virtual queue stays bounded over a long run and the long-run error meets
 * the budget; the exact offline optimum (GLPK MILP) is checked on a case
 * solvable by hand and against brute force; the stated guarantee (1)
 * (regret against every plan that meets the budget each round, and the
 * queue / violation bound) holds on i.i.d. and on drifting error sequences;
 * guarantee (2): with i.i.d. participation the regret against the
 * hindsight optimum of the T-round program, per round, and the violation
 * per round fall as T grows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/rng.h"
#include "systems/fedenergy/fedenergy.h"

#define N 5
#define BUDGET 0.5      /* epsilon of the synthetic runs */

static const double step_j[N] = {0.1, 0.2, 0.4, 0.1, 0.3};
static const double pw[N] = {0.3, 0.2, 0.2, 0.15, 0.15};

/* The offline programs take per-round costs and weighted coefficients:
 * cost[t N + i] = step_j[i], coef[t N + i] = pw[i] g[t N + i]. */
static void expand(size_t T, const double *g, double *cost, double *coef)
{
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < N; i++) {
            cost[t * N + i] = step_j[i];
            coef[t * N + i] = pw[i] * g[t * N + i];
        }
}

/* g_{t,i}: i.i.d. per round, device-dependent mean. */
static double synth_g(rng *r, size_t i) { return (0.3 + 0.15 * (double)i) * rng_uniform(r, 0.5, 1.5); }

static void test_bounds_and_monotone_in_cost(void **state)
{
    (void)state;
    fedenergy_params p = {.iters_max = 20, .v = 1, .budget = 0.05, .queue_init = 0.5};
    fedenergy_ctl c;
    fedenergy_init(&c, &p);
    double e[4] = {1, 2, 4, 8}, w[4] = {0.25, 0.25, 0.25, 0.25}, g[4] = {1, 1, 1, 1};
    int it[4];
    const double queues[] = {0, 1e-9, 0.01, 0.5, 1, 3, 10, 1e6};
    for (size_t q = 0; q < sizeof queues / sizeof *queues; q++) {
        c.queue = queues[q];
        fedenergy_decide(&c, 4, e, w, g, it);
        for (int i = 0; i < 4; i++) {
            assert_true(it[i] >= 1 && it[i] <= 20);
            if (i)
                assert_true(it[i] <= it[i - 1]);  /* dearer steps: no more iterations */
        }
        if (queues[q] == 0)
            for (int i = 0; i < 4; i++)
                assert_int_equal(it[i], 1);
        if (queues[q] == 1e6)
            for (int i = 0; i < 4; i++)
                assert_int_equal(it[i], 20);
    }
    /* integer optimum: brute force agrees */
    c.queue = 1.7;
    fedenergy_decide(&c, 4, e, w, g, it);
    for (int i = 0; i < 4; i++) {
        double best = INFINITY;
        int arg = 0;
        for (int t = 1; t <= 20; t++) {
            double f = p.v * (e[i] / 3.75) * t / 20 + c.queue * 1 * fedenergy_error(20, t, 1);
            if (f < best - 1e-12) {
                best = f;
                arg = t;
            }
        }
        assert_true(abs(arg - it[i]) == 0 ||
                    fabs(p.v * (e[i] / 3.75) * it[i] / 20 + c.queue * fedenergy_error(20, it[i], 1) - best) < 1e-12);
    }
    /* scaling rule */
    assert_float_equal(fedenergy_scale(&p, 5, 1.0), 4.0, 1e-12);
    assert_float_equal(fedenergy_scale(&p, 5, 0.5), 2.5, 1e-12);
    assert_float_equal(fedenergy_scale(&p, 5, -0.3), 1.0, 1e-12);
    assert_float_equal(fedenergy_scale(&p, 20, 0.9), 1.0, 1e-12);
    p.rho_floor = 0.25;
    assert_float_equal(fedenergy_scale(&p, 5, NAN), 1.75, 1e-12);
    /* rho_floor = 1 (the default): FedNova's E / tau whatever the cosine */
    p.rho_floor = 1;
    assert_float_equal(fedenergy_scale(&p, 5, -0.3), 4.0, 1e-12);
    assert_float_equal(fedenergy_scale(&p, 3, NAN), 20.0 / 3, 1e-12);
    assert_float_equal(fedenergy_scale(&p, 20, 0.5), 1.0, 1e-12);
    /* the error term: g (E / tau - 1) */
    assert_float_equal(fedenergy_error(20, 5, 0.5), 1.5, 1e-12);
    assert_float_equal(fedenergy_error(20, 20, 7), 0, 0);
}

/* Runs the controller for T rounds; returns online compute energy and
 * fills the g sequence (T * N). */
static double run_online(size_t T, double v, double budget, double *g, fedenergy_ctl *c,
                         double *qmax_first_half, int drift)
{
    fedenergy_params p = {.iters_max = 10, .v = v, .budget = budget, .queue_init = 1};
    fedenergy_init(c, &p);
    rng r;
    rng_init(&r, 42, "test.synth_g", 0);
    double energy = 0;
    int it[N];
    for (size_t t = 0; t < T; t++) {
        for (size_t i = 0; i < N; i++)
            g[t * N + i] = drift ? synth_g(&r, i) * 3 / (1 + 0.05 * (double)t) : synth_g(&r, i);
        fedenergy_decide(c, N, step_j, pw, g + t * N, it);   /* g known before deciding */
        for (size_t i = 0; i < N; i++) {
            assert_true(it[i] >= 1 && it[i] <= 10);
            energy += step_j[i] * it[i];
        }
        fedenergy_observe(c, N, pw, it, g + t * N);
        if (qmax_first_half && t + 1 == T / 2)
            *qmax_first_half = c->queue_max;
    }
    return energy;
}

static void test_queue_bounded_long_run(void **state)
{
    (void)state;
    size_t T = 20000;
    double *g = malloc(T * N * sizeof *g), qhalf = 0;
    fedenergy_ctl c;
    run_online(T, 10, BUDGET, g, &c, &qhalf, 0);
    print_message("queue max %.3f (first half %.3f), final %.3f, mean violation %.5f\n",
                  c.queue_max, qhalf, c.queue, c.violation / (double)T);
    /* bounded: no growth between the first and second half of the run */
    assert_true(c.queue_max < 50);
    assert_true(c.queue_max <= qhalf * 1.2 + 1e-9);
    /* the long-run constraint holds: mean violation <= Q_T / T */
    assert_true(c.violation / (double)T <= c.queue / (double)T + 1e-12);
    assert_true(c.violation / (double)T < 0.001);
    free(g);
}

static void test_offline_small_case_by_hand(void **state)
{
    (void)state;
    /* 2 devices, 1 round, E = 2: h(1) = g (2/1 - 1) = g.  Device 0 (p .5,
     * g 1, cost 1) and device 1 (p .5, g 1, cost 3) err 0.5 each when cut.
     * Budget 1: both cut, energy 1 + 3 = 4. */
    double e2[2] = {1, 3}, c2[2] = {0.5, 0.5}, opt;
    int plan[2];
    err e = {0};
    assert_int_equal(fedenergy_offline(2, 1, 2, e2, c2, 1.0, 0, &opt, NULL, plan, &e), 0);
    assert_float_equal(opt, 4, 1e-9);
    assert_int_equal(plan[0], 1);
    assert_int_equal(plan[1], 1);
    /* budget 0.6: only one can be cut; cut the dearer one: 2 + 3 = 5 */
    assert_int_equal(fedenergy_offline(2, 1, 2, e2, c2, 0.6, 0, &opt, NULL, plan, &e), 0);
    assert_float_equal(opt, 5, 1e-9);
    assert_int_equal(plan[0], 2);
    assert_int_equal(plan[1], 1);
    /* budget 0: nobody cut */
    assert_int_equal(fedenergy_offline(2, 1, 2, e2, c2, 0, 0, &opt, NULL, plan, &e), 0);
    assert_float_equal(opt, 8, 1e-9);
    /* against brute force: 3 rounds x 2 devices, E = 3 (3^6 plans), a device
     * absent in one round (cost and coefficient 0), several budgets; the
     * MILP at gap 0 finds the exact hindsight optimum and its plan meets
     * the budget */
    double cost[6] = {1, 2.5, 1, 0, 1, 2.5}, coef[6] = {0.4, 0.6, 0.3, 0, 0.5, 0.5};
    const double budgets[] = {0.05, 0.2, 0.45, 0.8, 2};
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
        double best = INFINITY;
        for (int code = 0; code < 729; code++) {
            double en = 0, er = 0;
            for (int j = 0, c = code; j < 6; j++, c /= 3) {
                int tau = 1 + c % 3;
                en += cost[j] * tau;
                er += fedenergy_error(3, tau, coef[j]);
            }
            if (er <= budgets[b] * 3 + 1e-12 && en < best)
                best = en;
        }
        int pl[6];
        double lb;
        assert_int_equal(fedenergy_offline(2, 3, 3, cost, coef, budgets[b], 0, &opt, &lb, pl, &e),
                         0);
        double en = 0, er = 0;
        for (int j = 0; j < 6; j++) {
            en += cost[j] * pl[j];
            er += fedenergy_error(3, pl[j], coef[j]);
        }
        print_message("budget %.2f: brute force %.3f, MILP %.3f (LP bound %.3f)\n", budgets[b],
                      best, opt, lb);
        assert_float_equal(opt, best, 1e-9);
        assert_float_equal(en, opt, 1e-9);
        assert_true(er <= budgets[b] * 3 + 1e-9);
        assert_true(lb <= opt + 1e-9);
    }
}

/* The guarantee as stated in fedenergy.h, on an i.i.d. and on a decaying
 * (drifting) g sequence, V = 0.1 sqrt(T): regret against the best plan that
 * meets the budget in every round is at most the bound computed from the
 * run, the queue never exceeds its bound, the cumulative violation is at
 * most Q_{T+1} - Q_1 (O(sqrt T): violation / T falls by more than 2x
 * from T = 50 to 800).  Regret is negative here: with an empty-ish queue
 * the controller first overshoots the budget (by at most the bound), which
 * is why the violation is asserted beside it.  Against the long-term
 * hindsight optimum (not covered by the guarantee) regret is printed. */
static void test_regret_bound_holds(void **state)
{
    (void)state;
    const size_t Ts[] = {50, 200, 800};
    for (int drift = 0; drift < 2; drift++) {
        double v0 = 0;
        for (size_t k = 0; k < sizeof Ts / sizeof *Ts; k++) {
            size_t T = Ts[k];
            double *g = malloc(T * N * sizeof *g), per, lt, mean_e = 0;
            double *cost = malloc(T * N * sizeof *cost), *coef = malloc(T * N * sizeof *coef);
            fedenergy_ctl c;
            double on = run_online(T, 10 * sqrt((double)T), BUDGET, g, &c, NULL, drift);
            expand(T, g, cost, coef);
            err e = {0};
            assert_int_equal(fedenergy_offline_per_round(N, T, 10, cost, coef, BUDGET, 0, &per,
                                                         NULL, &e), 0);
            lt = NAN;
            if (T <= 200)
                assert_int_equal(fedenergy_offline(N, T, 10, cost, coef, BUDGET, 1e-2, &lt,
                                                   NULL, NULL, &e), 0);
            for (size_t i = 0; i < N; i++)
                mean_e += step_j[i] / N;
            double bound = mean_e * 10 * fedenergy_regret_bound(&c, N);
            double reg = on - per, qb = fedenergy_queue_bound(&c);
            print_message("%s T %4zu: regret vs per-round plan %.4f J (bound %.4f), regret/T "
                          "%.5f, vs long-term plan %.4f J/round; Q max %.3f (bound %.3f), "
                          "violation/T %+.5f\n", drift ? "drift" : "iid  ", T, reg, bound,
                          reg / (double)T, (on - lt) / (double)T, c.queue_max, qb,
                          c.violation / (double)T);
            assert_true(reg <= bound + 1e-9);
            if (T <= 200)
                assert_true(lt <= per * (1 + 1e-2)); /* the long-term plan is the stronger one */
            assert_true(c.queue_max <= qb + 1e-9);
            assert_true(c.violation <= c.queue - c.p.queue_init + 1e-9);
            assert_true(c.violation <= qb);
            if (k == 0)
                v0 = c.violation / (double)T;
            else if (k == 2)
                assert_true(c.violation / (double)T < v0 / 2);
            free(g);
            free(cost);
            free(coef);
        }
    }
}

/* Guarantee (2) of fedenergy.h on its own terms: every device takes part
 * in a round with probability 0.7 (2 seeds of participation), weights
 * renormalised over the participants, g = N p_i,t, absent devices cost
 * nothing; V = 10 sqrt(T).  The regret against the hindsight optimum of
 * the T-round program (measured against its LP lower bound, so an upper
 * bound on the true regret) per round falls by more than 3x from T = 50 to
 * T = 800 by more than 2x (O(sqrt T): 4x; measured 3.9-4.9x), and
 * |violation| per round by more than 3x (measured 4.0x).  A controller
 * whose queue ignored the constraint, or a regret taken against a wrong
 * comparator, fails this. */
static void test_hindsight_regret_sublinear_iid(void **state)
{
    (void)state;
    const size_t Ts[] = {50, 200, 800};
    for (uint64_t seed = 1; seed <= 2; seed++) {
        double reg0 = 0, vio0 = 0;
        for (size_t k = 0; k < sizeof Ts / sizeof *Ts; k++) {
            size_t T = Ts[k];
            double *cost = calloc(T * N, sizeof *cost), *coef = calloc(T * N, sizeof *coef);
            fedenergy_params p = {.iters_max = 10, .v = 10 * sqrt((double)T), .budget = 1,
                                  .queue_init = 1};
            fedenergy_ctl c;
            fedenergy_init(&c, &p);
            rng r;
            rng_init(&r, seed, "test.participation", 0);
            double on = 0, pr[N], g[N];
            int it[N];
            for (size_t t = 0; t < T; t++) {
                double sum = 0;
                int in[N];
                for (size_t i = 0; i < N; i++) {
                    in[i] = rng_u01(&r) < 0.7;
                    sum += in[i] ? pw[i] : 0;
                }
                for (size_t i = 0; i < N; i++) {
                    pr[i] = in[i] ? pw[i] / sum : 0;
                    g[i] = N * pr[i];
                }
                fedenergy_decide(&c, N, step_j, pr, g, it);
                for (size_t i = 0; i < N; i++)
                    if (in[i]) {
                        on += step_j[i] * it[i];
                        cost[t * N + i] = step_j[i];
                        coef[t * N + i] = pr[i] * g[i];
                    }
                fedenergy_observe(&c, N, pr, it, g);
            }
            double opt, lb;
            err e = {0};
            assert_int_equal(fedenergy_offline(N, T, 10, cost, coef, 1, 1, &opt, &lb, NULL, &e),
                             0);
            double reg = (on - lb) / (double)T, vio = c.violation / (double)T;
            print_message("seed %d T %4zu: online %.4f J/round, regret/T vs hindsight LP bound "
                          "%.5f (vs best plan found %.5f), violation/T %+.5f\n", (int)seed, T,
                          on / (double)T, reg, (on - opt) / (double)T, vio);
            assert_true(lb <= opt + 1e-9);
            if (k == 0) {
                reg0 = fabs(reg);
                vio0 = fabs(vio);
            } else if (k == 2) {
                assert_true(fabs(reg) < reg0 / 2);
                assert_true(fabs(vio) < vio0 / 3);
            }
            free(cost);
            free(coef);
        }
    }
}

/* The primal-dual variant, 3 seeds of g: no bound is claimed (fedenergy.h),
 * so what is asserted is measured behaviour with margin: it stays in
 * bounds, its regret per round against the best fixed plan that meets the
 * budget on average over the same g falls by more than 5x from T = 50 to
 * 800 (measured 2.60 to 0.05 J on seed 1), with violation per round below
 * 0.02 at T = 800 (budget 0.5; it errs on the safe side). */
static void test_primal_dual_violation_falls(void **state)
{
    (void)state;
    const size_t Ts[] = {50, 800};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        double vio0 = 0;
        for (size_t k = 0; k < sizeof Ts / sizeof *Ts; k++) {
            size_t T = Ts[k];
            double *g = malloc(T * N * sizeof *g), fixed, on = 0;
            fedenergy_params p = {.iters_max = 10, .v = 1, .budget = BUDGET, .queue_init = 0};
            rng rr, r;
            rng_init(&rr, seed, "test.rounding", 0);
            rng_init(&r, 42 + seed, "test.synth_g", 0);
            fedenergy_pd c;
            fedenergy_pd_init(&c, &p, N, 1 / sqrt((double)T), 10 / sqrt((double)T), &rr);
            int it[N];
            for (size_t t = 0; t < T; t++) {
                fedenergy_pd_decide(&c, it);
                for (size_t i = 0; i < N; i++) {
                    assert_true(it[i] >= 1 && it[i] <= 10);
                    assert_true(c.x[i] >= 0.1 - 1e-12 && c.x[i] <= 1);
                    g[t * N + i] = synth_g(&r, i);
                    on += step_j[i] * it[i];
                }
                fedenergy_pd_observe(&c, step_j, pw, it, g + t * N);
            }
            err e = {0};
            double *cost = malloc(T * N * sizeof *cost), *coef = malloc(T * N * sizeof *coef);
            expand(T, g, cost, coef);
            assert_int_equal(fedenergy_offline_fixed(N, T, 10, cost, coef, BUDGET, 0, &fixed,
                                                     NULL, &e), 0);
            free(cost);
            free(coef);
            double reg = (on - fixed) / (double)T, vio = c.violation / (double)T;
            print_message("primal-dual seed %d T %4zu: regret/T vs best fixed plan %+.4f J, "
                          "violation/T %+.5f\n", (int)seed, T, reg, vio);
            if (k == 0) {
                vio0 = reg;
                assert_true(vio < 0.1);
            } else {
                assert_true(fabs(reg) < fabs(vio0) / 5);
                assert_true(vio < 0.02);
            }
            fedenergy_pd_fini(&c);
            free(g);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_and_monotone_in_cost),
        cmocka_unit_test(test_queue_bounded_long_run),
        cmocka_unit_test(test_offline_small_case_by_hand),
        cmocka_unit_test(test_regret_bound_holds),
        cmocka_unit_test(test_hindsight_regret_sublinear_iid),
        cmocka_unit_test(test_primal_dual_violation_falls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
