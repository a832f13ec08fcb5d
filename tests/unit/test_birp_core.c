/*
 * test_birp_core.c - BIRP's sans-I/O core: the TIR shape, UCB1's regret, the
 * bandit at the deployed reward scale and under a switch of the best arm,
 * the slot QP against brute-force enumeration, the fallback path, and the
 * model-selection planner.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "aisim/rng.h"
#include "aisim/sim.h"
#include "systems/birp/birp.h"

static void test_tir_is_one_at_batch_one_increasing_and_saturating(void **st)
{
    (void)st;
    assert_float_equal(birp_tir(1, 3.7, 1, 0.1), 1, 1e-15);
    double prev = 1;
    for (int b = 2; b <= 256; b++) {
        double t = birp_tir(b, 3.7, 1, 0.1);
        assert_true(t > prev);
        assert_true(t < 3.7);
        /* concave: increments shrink */
        if (b > 2)
            assert_true(t - prev <= prev - birp_tir(b - 2, 3.7, 1, 0.1) + 1e-12);
        prev = t;
    }
    assert_float_equal(birp_tir(256, 3.7, 1, 0.1), 3.7, 1e-9);
    assert_float_equal(birp_tir(1000, 3.7, 0.5, 0.1), 1 + 0.5 * 2.7, 1e-9);
}

/* Mean regret per step of UCB1 on Bernoulli arms, averaged over seeds. */
static double ucb_regret(const double *mu, int narms, int T, int seeds, int *most_pulled)
{
    double best = 0, reg = 0;
    for (int a = 0; a < narms; a++)
        best = mu[a] > best ? mu[a] : best;
    int votes[16] = {0};
    for (int s = 0; s < seeds; s++) {
        rng r;
        rng_init(&r, 42 + (uint64_t)s, "test.bandit", 0);
        birp_bandit b;
        birp_bandit_init(&b, narms, &(birp_bandit_par){.c = sqrt(2.0), .discount = 1});
        for (int t = 0; t < T; t++) {
            int a = birp_bandit_select(&b);
            reg += best - mu[a];
            birp_bandit_update(&b, a, rng_u01(&r) < mu[a] ? 1 : 0);
        }
        int mp = 0;
        for (int a = 1; a < narms; a++)
            if (b.plays[a] > b.plays[mp])
                mp = a;
        votes[mp]++;
        birp_bandit_fini(&b);
    }
    int mp = 0;
    for (int a = 1; a < narms; a++)
        if (votes[a] > votes[mp])
            mp = a;
    *most_pulled = mp;
    return reg / seeds / T;
}

static void test_ucb1_regret_is_sublinear_and_finds_best_arm(void **st)
{
    (void)st;
    const double mu[] = {0.30, 0.50, 0.45, 0.72, 0.60, 0.20, 0.65, 0.40};
    int mp1, mp2, mp3;
    double r1 = ucb_regret(mu, 8, 500, 8, &mp1);
    double r2 = ucb_regret(mu, 8, 5000, 8, &mp2);
    double r3 = ucb_regret(mu, 8, 50000, 8, &mp3);
    print_message("UCB1 regret/T: T=500 %.4f, T=5000 %.4f, T=50000 %.4f\n", r1, r2, r3);
    assert_true(r2 < r1);
    assert_true(r3 < r2);
    assert_true(r3 < 0.02);      /* logarithmic regret: about 0.01 here */
    assert_int_equal(mp2, 3);
    assert_int_equal(mp3, 3);
    birp_bandit b;
    birp_bandit_init(&b, 3, &(birp_bandit_par){.c = 1, .discount = 1});
    assert_int_equal(birp_bandit_select(&b), 0);
    birp_bandit_update(&b, 0, 2.0);          /* clamped to 1 */
    assert_float_equal(b.sum[0], 1, 0);
    assert_int_equal(birp_bandit_select(&b), 1);
    birp_bandit_fini(&b);
}

/* Share of the pulls from `from` on that go to arm `best`, averaged over
 * seeds, for Gaussian rewards whose means switch from mu0 to mu1 at pull
 * `sw` (no switch: sw >= T). */
static double share_on_best(const birp_bandit_par *par, const double *mu0, const double *mu1,
                            int narms, int sw, int T, double sd, int from, int best)
{
    int seeds = 40;
    double share = 0;
    for (int s = 0; s < seeds; s++) {
        rng r;
        rng_init(&r, 7 + (uint64_t)s, "test.bandit.scale", 0);
        birp_bandit b;
        birp_bandit_init(&b, narms, par);
        int on = 0;
        for (int t = 0; t < T; t++) {
            int a = birp_bandit_select(&b);
            on += t >= from && a == best;
            birp_bandit_update(&b, a, rng_normal(&r, (t < sw ? mu0 : mu1)[a], sd));
        }
        share += (double)on / (T - from) / seeds;
        birp_bandit_fini(&b);
    }
    return share;
}

/* The deployed regime (docs/birp.md, "Bandit"): nine arms whose rewards
 * (1 - inference loss of a slot) lie within 0.015 of each other with a
 * per-slot noise of 0.004, 180 pulls.  UCB1 on a [0, 1] scale spreads its
 * pulls evenly (the bonus, about 1, swamps gaps of 0.01); scaled to the
 * rewards' spread, the best arm gets most pulls after a 60-pull warm-up. */
static void test_bandit_concentrates_at_the_deployed_reward_scale(void **st)
{
    (void)st;
    const double mu[9] = {0.800, 0.805, 0.808, 0.807, 0.812, 0.809, 0.797, 0.806, 0.803};
    birp_bandit_par ucb1 = {.c = sqrt(2.0), .discount = 1, .normalise = 0};
    birp_bandit_par scaled = {.c = sqrt(2.0), .discount = 1, .normalise = 1};
    double s1 = share_on_best(&ucb1, mu, mu, 9, 1 << 30, 180, 0.004, 60, 4);
    double s2 = share_on_best(&scaled, mu, mu, 9, 1 << 30, 180, 0.004, 60, 4);
    print_message("best arm's share of pulls 60..180: UCB1 %.2f, scaled %.2f\n", s1, s2);
    assert_true(s1 < 0.2);
    assert_true(s2 > 0.5);
}

/* The best arm changes at pull 100 of 300 (TIR drift): the old best arm
 * falls 0.012 below the new one, every other arm by 0.005.  All three
 * variants move most of their pulls from 150 on to the new best arm: the
 * discounted bandit (Garivier and Moulines 2011, gamma = 1 - sqrt(1/300)/4
 * = 0.986, their choice for one switch), the sliding window, and (here, as
 * the spread of the rewards grows at the switch and with it the bonus) the
 * stationary one.  A bandit that stops exploring fails this test. */
static void test_bandits_follow_a_switch_of_the_best_arm(void **st)
{
    (void)st;
    const double mu0[9] = {0.800, 0.805, 0.808, 0.807, 0.812, 0.809, 0.797, 0.806, 0.803};
    const double mu1[9] = {0.812, 0.800, 0.803, 0.802, 0.800, 0.804, 0.792, 0.801, 0.798};
    birp_bandit_par ucb = {.c = sqrt(2.0), .discount = 1, .normalise = 1};
    birp_bandit_par ducb = {.c = sqrt(2.0), .discount = 0.986, .normalise = 1};
    birp_bandit_par swucb = {.c = sqrt(2.0), .discount = 1, .window = 60, .normalise = 1};
    double s1 = share_on_best(&ucb, mu0, mu1, 9, 100, 300, 0.004, 150, 0);
    double s2 = share_on_best(&ducb, mu0, mu1, 9, 100, 300, 0.004, 150, 0);
    double s3 = share_on_best(&swucb, mu0, mu1, 9, 100, 300, 0.004, 150, 0);
    print_message("new best arm's share of pulls 150..300: UCB %.2f, D-UCB %.2f, SW-UCB %.2f\n",
                  s1, s2, s3);
    assert_true(s1 > 0.5);
    assert_true(s2 > 0.5);
    assert_true(s3 > 0.5);
}

/* ---- slot QP vs brute force ------------------------------------------------ */

static const int grid3[] = {1, 8, 32};

/* Two edges shaped like the Jetson profiles (resnet50, ms). */
static void tiny_instance(birp_slot_in *in, uint64_t seed)
{
    rng r;
    rng_init(&r, seed, "test.qp", 0);
    memset(in, 0, sizeof *in);
    in->nedges = 2;
    in->ngrid = 3;
    memcpy(in->batch, grid3, sizeof grid3);
    const double l1[] = {6.4e-3, 7.6e-3}, l32[] = {57.6e-3, 96.0e-3};
    for (int j = 0; j < 2; j++) {
        double jit = rng_uniform(&r, 0.8, 1.2);
        for (int k = 0; k < 3; k++) {
            double b = grid3[k];
            in->lat_s[j][k] = jit * (l1[j] + (l32[j] - l1[j]) * (b - 1) / 31);
            double tir = birp_tir(b, l1[j] * 32 / l32[j] * 1.1, rng_uniform(&r, 0.6, 1.0), 0.1);
            in->mu[j][k] = tir / in->lat_s[j][0];
        }
        in->acc[j] = rng_uniform(&r, 0.7, 0.82);
        in->backlog[j] = rng_uniform(&r, 0, 50);
        in->prev_load[j] = rng_uniform(&r, 0, 300);
    }
    in->lambda[0] = rng_uniform(&r, 100, 900);     /* hot */
    in->lambda[1] = rng_uniform(&r, 0, 150);
    in->tau_s[0][1] = rng_uniform(&r, 1e-3, 5e-3);
    in->tau_s[1][0] = rng_uniform(&r, 1e-3, 5e-3);
    in->slo_s = rng_uniform(&r, 0.05, 0.2);
    in->w_tau = 1;
    in->w_batch = 0.1;
    in->w_queue = 1;
    in->w_util = 0.05;
}

/* The objective written out again from docs/birp.md, independently of birp.c. */
static double f_edge(const birp_slot_in *in, int j, double L, const double *z, double lam)
{
    double cap = 0, lat = 0, cmax = 0;
    for (int k = 0; k < 3; k++) {
        cap += z[k] * in->mu[j][k];
        lat += z[k] * in->lat_s[j][k];
        cmax = in->mu[j][k] > cmax ? in->mu[j][k] : cmax;
    }
    double o = fmax(0, L + in->backlog[j] - cap);
    return (1 - in->acc[j]) * L + in->w_batch * in->prev_load[j] * lat / in->slo_s + o +
           in->w_queue / (2 * lam) * o * o +
           in->w_util / 2 * (L + in->backlog[j]) * (L + in->backlog[j]) / cmax;
}

static double brute_force(const birp_slot_in *in, const double *lb, double *best_y01)
{
    double lam = in->lambda[0] + in->lambda[1] + in->backlog[0] + in->backlog[1];
    /* best z per edge per load, on a simplex grid of step 1/48 */
    double best = INFINITY;
    const int NY = 160, NZ = 48;
    for (int a = 0; a <= NY; a++) {
        double y01 = (double)a / NY;
        if (y01 > 0 && in->tau_s[0][1] + 2 * in->lat_s[1][0] > in->slo_s)
            continue;
        for (int c = 0; c <= NY; c++) {
            double y10 = (double)c / NY;
            if (y10 > 0 && in->tau_s[1][0] + 2 * in->lat_s[0][0] > in->slo_s)
                continue;
            double L[2] = {in->lambda[0] * (1 - y01) + in->lambda[1] * y10,
                           in->lambda[0] * y01 + in->lambda[1] * (1 - y10)};
            double f = in->w_tau * (in->lambda[0] * y01 * in->tau_s[0][1] +
                                    in->lambda[1] * y10 * in->tau_s[1][0]) / in->slo_s;
            for (int j = 0; j < 2; j++) {
                double fj = INFINITY;
                for (int p = 0; p <= NZ; p++)
                    for (int q = 0; p + q <= NZ; q++) {
                        double z[3] = {(double)(NZ - p - q) / NZ, (double)p / NZ, (double)q / NZ};
                        double lat = z[0] * in->lat_s[j][0] + z[1] * in->lat_s[j][1] +
                                     z[2] * in->lat_s[j][2];
                        if (lat > lb[j] * (1 + 1e-12))
                            continue;
                        /* a breakpoint slower than the bound is not used (docs/birp.md) */
                        if ((z[1] > 0 && in->lat_s[j][1] > lb[j]) ||
                            (z[2] > 0 && in->lat_s[j][2] > lb[j]))
                            continue;
                        double v = f_edge(in, j, L[j], z, lam);
                        fj = v < fj ? v : fj;
                    }
                f += fj;
            }
            if (f < best) {
                best = f;
                *best_y01 = y01;
            }
        }
    }
    return best;
}

static double lat_grid(void *ctx, int j, double b)
{
    const birp_slot_in *in = ctx;
    for (int k = 1; k < in->ngrid; k++)
        if (b <= in->batch[k])
            return in->lat_s[j][k - 1] + (in->lat_s[j][k] - in->lat_s[j][k - 1]) *
                   (b - in->batch[k - 1]) / (in->batch[k] - in->batch[k - 1]);
    return in->lat_s[j][in->ngrid - 1];
}

static void test_slot_qp_is_feasible_and_matches_brute_force(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        birp_slot_in in;
        birp_slot_out out;
        tiny_instance(&in, seed);
        birp_slot_solve(&in, lat_grid, &in, &out);
        assert_int_equal(out.fallback, 0);
        assert_true(out.status == 0 || out.status == 1);
        /* every constraint, checked here rather than through the library */
        for (int i = 0; i < 2; i++) {
            assert_float_equal(out.y[i][0] + out.y[i][1], 1, 1e-9);
            assert_float_equal(out.z[i][0] + out.z[i][1] + out.z[i][2], 1, 1e-9);
            double lat = 0, cap = 0, L = in.lambda[0] * out.y[0][i] + in.lambda[1] * out.y[1][i];
            for (int k = 0; k < 3; k++) {
                assert_true(out.z[i][k] >= 0);
                lat += out.z[i][k] * in.lat_s[i][k];
                cap += out.z[i][k] * in.mu[i][k];
            }
            for (int j = 0; j < 2; j++)
                assert_true(out.y[i][j] >= 0 && out.y[i][j] <= 1);
            assert_true(lat <= out.lat_bound_s[i] * (1 + 1e-7));
            assert_true(out.o[i] >= 0);
            assert_true(out.o[i] >= L + in.backlog[i] - cap - 1e-6);
            assert_true(out.bcap[i] >= 1 && out.bcap[i] <= 32);
            assert_true(lat_grid(&in, i, out.bcap[i]) <= out.lat_bound_s[i] * (1 + 1e-9));
        }
        double by = 0, bf = brute_force(&in, out.lat_bound_s, &by);
        double tol = 2e-3 * fabs(bf) + 1e-6;
        print_message("seed %d: QP %.6f brute %.6f (y01 %.3f vs %.3f)\n", (int)seed, out.obj, bf,
                      out.y[0][1], by);
        assert_true(out.obj <= bf + 1e-6 * fabs(bf) + 1e-9);   /* grid never beats the optimum */
        assert_true(bf - out.obj <= tol);                        /* and gets close to it */
    }
}

static void test_slot_hot_edge_sends_to_idle_and_batches(void **st)
{
    (void)st;
    birp_slot_in in;
    birp_slot_out out;
    tiny_instance(&in, 7);
    in.lambda[0] = 800;
    in.lambda[1] = 0;
    in.backlog[0] = in.backlog[1] = 0;
    in.slo_s = 0.2;
    birp_slot_solve(&in, lat_grid, &in, &out);
    assert_int_equal(out.fallback, 0);
    assert_true(out.y[0][1] > 0.2);
    assert_true(out.bcap[0] > 1);
    /* local only: no flow leaves */
    in.local_only = 1;
    birp_slot_solve(&in, lat_grid, &in, &out);
    assert_float_equal(out.y[0][0], 1, 1e-12);
    assert_true(out.o[0] > 0);
}

static void test_slot_solver_failure_falls_back_safely(void **st)
{
    (void)st;
    birp_slot_in in;
    birp_slot_out out;
    tiny_instance(&in, 3);
    in.max_iter = 1;
    birp_slot_solve(&in, lat_grid, &in, &out);
    assert_int_equal(out.status, -1);            /* Maximum_Iterations_Exceeded */
    assert_int_equal(out.fallback, 1);
    assert_float_equal(out.y[0][0], 1, 0);
    assert_float_equal(out.y[1][1], 1, 0);
    assert_true(birp_slot_violation(&in, &out) <= 1e-9);
    /* no load: trivial, not a fallback */
    in.max_iter = 0;
    in.lambda[0] = in.lambda[1] = in.backlog[0] = in.backlog[1] = 0;
    birp_slot_solve(&in, lat_grid, &in, &out);
    assert_int_equal(out.status, BIRP_STATUS_TRIVIAL);
    assert_int_equal(out.fallback, 0);
}

/* Two streams at gamma 0.6 serve 2 / 1.6 = 1.25 times one stream; one
 * stream, or gamma 1 with two, serve exactly one stream's worth. */
static void test_stream_gain_is_the_parallel_throughput(void **st)
{
    (void)st;
    assert_float_equal(birp_stream_gain(2, 0.6), 1.25, 1e-15);
    assert_float_equal(birp_stream_gain(1, 0.6), 1, 0);
    assert_float_equal(birp_stream_gain(2, 1), 1, 1e-15);
    assert_float_equal(birp_stream_gain(4, 0), 4, 0);
    assert_float_equal(birp_stream_gain(3, 0.5), 1.5, 1e-15);
}

/* A run that must end (the CLI's signal flag set) stops Ipopt at its first
 * iteration: the solve falls back to the safe decision instead of running
 * to the end. */
static void test_slot_solver_stops_when_the_run_must_end(void **st)
{
    (void)st;
    birp_slot_in in;
    birp_slot_out out;
    tiny_instance(&in, 3);
    sim *s = sim_create();
    volatile sig_atomic_t flag = 0;
    sim_set_interrupt(s, &flag);
    in.poll = s;
    birp_slot_solve(&in, lat_grid, &in, &out);
    assert_int_equal(out.fallback, 0);           /* not interrupted: solved */
    flag = 1;
    birp_slot_solve(&in, lat_grid, &in, &out);
    assert_int_equal(out.status, 5);             /* User_Requested_Stop */
    assert_int_equal(out.fallback, 1);
    assert_true(birp_slot_violation(&in, &out) <= 1e-9);
    assert_true(sim_was_cut(s));
    sim_destroy(s);
}

static void test_model_selection_downgrades_under_load(void **st)
{
    (void)st;
    birp_ms_in in = {.nedges = 3, .target_util = 0.9};
    for (int j = 0; j < 3; j++) {
        in.nlevels[j] = 2;
        in.acc[j][0] = 0.80;
        in.acc[j][1] = 0.72;
        in.cap[j][0] = 150 - 10 * j;
        in.cap[j][1] = 280 - 10 * j;
    }
    int lv[BIRP_MAX_EDGES];
    double y[BIRP_MAX_EDGES][BIRP_MAX_EDGES];
    in.lambda[0] = 200;
    birp_ms_plan(&in, lv, y);
    assert_int_equal(lv[0] + lv[1] + lv[2], 0);  /* 200 <= 0.9 * 420 */
    /* proportional: edge 0 keeps 150/420 of the load */
    assert_float_equal(y[0][0], 150.0 / 420, 1e-12);
    assert_float_equal(y[0][0] + y[0][1] + y[0][2], 1, 1e-12);
    in.lambda[0] = 500;
    birp_ms_plan(&in, lv, y);
    assert_true(lv[0] + lv[1] + lv[2] >= 1);
    double cap = 0;
    for (int j = 0; j < 3; j++)
        cap += in.cap[j][lv[j]];
    assert_true(500 <= 0.9 * cap);
    in.lambda[0] = 5000;                          /* everything downgraded */
    birp_ms_plan(&in, lv, y);
    assert_int_equal(lv[0] + lv[1] + lv[2], 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tir_is_one_at_batch_one_increasing_and_saturating),
        cmocka_unit_test(test_ucb1_regret_is_sublinear_and_finds_best_arm),
        cmocka_unit_test(test_bandit_concentrates_at_the_deployed_reward_scale),
        cmocka_unit_test(test_bandits_follow_a_switch_of_the_best_arm),
        cmocka_unit_test(test_slot_qp_is_feasible_and_matches_brute_force),
        cmocka_unit_test(test_slot_hot_edge_sends_to_idle_and_batches),
        cmocka_unit_test(test_slot_solver_failure_falls_back_safely),
        cmocka_unit_test(test_model_selection_downgrades_under_load),
        cmocka_unit_test(test_stream_gain_is_the_parallel_throughput),
        cmocka_unit_test(test_slot_solver_stops_when_the_run_must_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
