/*
 * test_fedenergy_ctl.c - the online controller (fedenergy.h) on synthetic,
 * seeded error sequences: choices stay in 1..E and follow the costs; the
 * virtual queue stays bounded over a long run and the long-run error meets
 * the budget; the exact offline optimum (GLPK MILP) is checked on a case
 * solvable by hand; the stated guarantee (regret against every plan that
 * meets the budget each round, and the queue / violation bound) holds on
 * i.i.d. and on drifting error sequences, and regret / T falls as T grows.
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

static const double step_j[N] = {0.1, 0.2, 0.4, 0.1, 0.3};
static const double pw[N] = {0.3, 0.2, 0.2, 0.15, 0.15};

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
    run_online(T, 1, 0.05, g, &c, &qhalf, 0);
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
    /* 2 devices, 1 round, E = 2: h(1) = g/4.  Budget 0.3: device 0 (p .5,
     * g 1, cost 1) and device 1 (p .5, g 1, cost 3): error 0.125 each when
     * cut.  Both cut: 0.25 <= 0.3, energy 1 + 3 = 4. */
    double e2[2] = {1, 3}, p2[2] = {0.5, 0.5}, g2[2] = {1, 1}, opt;
    int plan[2];
    err e = {0};
    assert_int_equal(fedenergy_offline(2, 1, 2, e2, p2, g2, 0.3, 0, &opt, NULL, plan, &e), 0);
    assert_float_equal(opt, 4, 1e-9);
    assert_int_equal(plan[0], 1);
    assert_int_equal(plan[1], 1);
    /* budget 0.2: only one can be cut; cut the dearer one: 2 + 3 = 5 */
    assert_int_equal(fedenergy_offline(2, 1, 2, e2, p2, g2, 0.2, 0, &opt, NULL, plan, &e), 0);
    assert_float_equal(opt, 5, 1e-9);
    assert_int_equal(plan[0], 2);
    assert_int_equal(plan[1], 1);
    /* budget 0: nobody cut */
    assert_int_equal(fedenergy_offline(2, 1, 2, e2, p2, g2, 0, 0, &opt, NULL, plan, &e), 0);
    assert_float_equal(opt, 8, 1e-9);
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
            fedenergy_ctl c;
            double on = run_online(T, 0.1 * sqrt((double)T), 0.05, g, &c, NULL, drift);
            err e = {0};
            assert_int_equal(fedenergy_offline_per_round(N, T, 10, step_j, pw, g, 0.05, 0, &per,
                                                         NULL, &e), 0);
            lt = NAN;
            if (T <= 200)
                assert_int_equal(fedenergy_offline(N, T, 10, step_j, pw, g, 0.05, 1e-2, &lt,
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
        }
    }
}

/* The primal-dual variant, 3 seeds of g: no bound is claimed (fedenergy.h),
 * so what is asserted is measured behaviour with margin: it stays in
 * bounds, its violation per round falls by more than 3x from T = 50 to 800
 * (to below 0.02 against a budget of 0.05), and its regret against the best
 * fixed plan that meets the budget on average over the same g is reported
 * beside the violation (negative regret comes with a positive violation). */
static void test_primal_dual_violation_falls(void **state)
{
    (void)state;
    const size_t Ts[] = {50, 800};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        double vio0 = 0;
        for (size_t k = 0; k < sizeof Ts / sizeof *Ts; k++) {
            size_t T = Ts[k];
            double *g = malloc(T * N * sizeof *g), fixed, on = 0;
            fedenergy_params p = {.iters_max = 10, .v = 1, .budget = 0.05, .queue_init = 0};
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
            assert_int_equal(fedenergy_offline_fixed(N, T, 10, step_j, pw, g, 0.05, 0, &fixed,
                                                     NULL, &e), 0);
            double reg = (on - fixed) / (double)T, vio = c.violation / (double)T;
            print_message("primal-dual seed %d T %4zu: regret/T vs best fixed plan %+.4f J, "
                          "violation/T %+.5f\n", (int)seed, T, reg, vio);
            if (k == 0) {
                vio0 = vio;
                assert_true(vio < 0.1);
            } else {
                assert_true(vio < vio0 / 3);
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
        cmocka_unit_test(test_primal_dual_violation_falls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
