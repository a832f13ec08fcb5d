/*
 * test_fedenergy_ctl.c - the online controller (fedenergy.h) on synthetic,
 * seeded error sequences: choices stay in 1..E and follow the costs; the
 * virtual queue stays bounded over a long run and the long-run error meets
 * the budget; the exact offline optimum (GLPK MILP) is checked on a case
 * solvable by hand; and regret against it grows sub-linearly.
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
                         double *qmax_first_half)
{
    fedenergy_params p = {.iters_max = 10, .v = v, .budget = budget, .queue_init = 0};
    fedenergy_init(c, &p);
    rng r;
    rng_init(&r, 42, "test.synth_g", 0);
    double gp[N], energy = 0;
    int it[N];
    for (size_t i = 0; i < N; i++)
        gp[i] = 1;
    for (size_t t = 0; t < T; t++) {
        fedenergy_decide(c, N, step_j, pw, gp, it);
        for (size_t i = 0; i < N; i++) {
            assert_true(it[i] >= 1 && it[i] <= 10);
            g[t * N + i] = synth_g(&r, i);
            energy += step_j[i] * it[i];
        }
        fedenergy_observe(c, N, pw, it, g + t * N);
        memcpy(gp, g + t * N, sizeof gp);
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
    run_online(T, 1, 0.05, g, &c, &qhalf);
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

/* Regret against the offline optimum (GLPK) and the constraint violation
 * ("fit"), both per round, with V = 0.1 sqrt(T): the online controller starts
 * with an empty queue, so early on it spends less than the offline plan and
 * overshoots the error budget; both gaps shrink as T grows. */
static void test_regret_sublinear(void **state)
{
    (void)state;
    const size_t Ts[] = {50, 100, 200, 400, 800};
    double prev_r = INFINITY, prev_v = INFINITY, first_v = 0;
    for (size_t k = 0; k < sizeof Ts / sizeof *Ts; k++) {
        size_t T = Ts[k];
        double *g = malloc(T * N * sizeof *g), opt, bound;
        fedenergy_ctl c;
        double on = run_online(T, 0.1 * sqrt((double)T), 0.05, g, &c, NULL);
        err e = {0};
        assert_int_equal(fedenergy_offline(N, T, 10, step_j, pw, g, 0.05, 1e-3, &opt, &bound,
                                           NULL, &e), 0);
        assert_true(bound <= opt + 1e-9 && opt - bound <= 1e-3 * opt);
        double reg = (on - opt) / (double)T, vio = c.violation / (double)T;
        print_message("T %4zu: online %.3f J, offline %.3f J (bound %.3f), regret/T %.5f, "
                      "violation/T %.5f\n", T, on, opt, bound, reg, vio);
        assert_true(fabs(reg) < prev_r);
        assert_true(vio < prev_v);
        prev_r = fabs(reg);
        prev_v = vio;
        if (k == 0)
            first_v = vio;
        free(g);
    }
    /* at T = 800: within 1% of the offline energy per round (~7.2 J), and the
     * violation per round down by more than 3x from T = 50 */
    assert_true(prev_r < 0.072);
    assert_true(prev_v < first_v / 3);
}

/* The primal-dual variant: bounds, then regret and violation per round
 * shrinking with T (steps 1/sqrt(T) primal, 10/sqrt(T) dual). */
static void test_primal_dual_regret_sublinear(void **state)
{
    (void)state;
    const size_t Ts[] = {50, 100, 200, 400, 800};
    double prev_r = INFINITY, prev_v = INFINITY;
    for (size_t k = 0; k < sizeof Ts / sizeof *Ts; k++) {
        size_t T = Ts[k];
        double *g = malloc(T * N * sizeof *g), opt, bound, on = 0;
        fedenergy_params p = {.iters_max = 10, .v = 1, .budget = 0.05, .queue_init = 0};
        rng rr, r;
        rng_init(&rr, 1, "test.rounding", 0);
        rng_init(&r, 42, "test.synth_g", 0);
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
        assert_int_equal(fedenergy_offline(N, T, 10, step_j, pw, g, 0.05, 1e-3, &opt, &bound,
                                           NULL, &e), 0);
        double reg = (on - opt) / (double)T, vio = c.violation / (double)T;
        print_message("primal-dual T %4zu: regret/T %.5f, violation/T %.5f, mu %.3f\n", T, reg,
                      vio, c.mu);
        assert_true(fabs(reg) < prev_r);
        assert_true(vio < prev_v);
        prev_r = fabs(reg);
        prev_v = vio;
        fedenergy_pd_fini(&c);
        free(g);
    }
    assert_true(prev_r < 0.15);
    assert_true(prev_v < 0.02);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_and_monotone_in_cost),
        cmocka_unit_test(test_queue_bounded_long_run),
        cmocka_unit_test(test_offline_small_case_by_hand),
        cmocka_unit_test(test_regret_sublinear),
        cmocka_unit_test(test_primal_dual_regret_sublinear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
