/*
 * test_rng.c - random streams, distributions, empirical CDFs and the
 * statistics accumulators.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisim/dist.h"
#include "aisim/rng.h"
#include "aisim/stats.h"

static void test_rng_xoshiro_reference_vector(void **state)
{
    (void)state;
    /* Output of the reference xoshiro256** from state {1, 2, 3, 4}. */
    rng r = {{1, 2, 3, 4}};
    assert_int_equal(rng_next(&r), UINT64_C(11520));
    assert_int_equal(rng_next(&r), UINT64_C(0));
    assert_int_equal(rng_next(&r), UINT64_C(1509978240));
    assert_int_equal(rng_next(&r), UINT64_C(1215971899390074240));
}

static void test_rng_streams_depend_on_name_not_order(void **state)
{
    (void)state;
    rng a1, b1, a2, b2, c;
    rng_init(&a1, 7, "net.ecmp", 0);
    rng_init(&b1, 7, "workload.arrivals", 0);
    /* A new component created in between, other order: same numbers. */
    rng_init(&c, 7, "sdtcp.controller", 0);
    rng_init(&b2, 7, "workload.arrivals", 0);
    rng_init(&a2, 7, "net.ecmp", 0);
    for (int i = 0; i < 5; i++)
        (void)rng_next(&c);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(rng_next(&a1), rng_next(&a2));
        assert_int_equal(rng_next(&b1), rng_next(&b2));
    }
    /* Different names, indices or seeds give different streams. */
    rng x, y, z;
    rng_init(&x, 7, "net.ecmp", 1);
    rng_init(&y, 8, "net.ecmp", 0);
    rng_init(&z, 7, "net.ecmp", 0);
    uint64_t vz = rng_next(&z);
    assert_true(rng_next(&x) != vz);
    assert_true(rng_next(&y) != vz);
}

static void test_rng_below_is_uniform(void **state)
{
    (void)state;
    rng r;
    rng_init(&r, 1, "test.below", 0);
    enum { K = 10, N = 200000 };
    int cnt[K] = {0};
    for (int i = 0; i < N; i++) {
        uint64_t v = rng_below(&r, K);
        assert_true(v < K);
        cnt[v]++;
    }
    double chi2 = 0, e = (double)N / K;
    for (int k = 0; k < K; k++)
        chi2 += (cnt[k] - e) * (cnt[k] - e) / e;
    assert_true(chi2 < 27.9);               /* chi-square, 9 dof, p = 0.001 */
}

/* Sample mean and variance of n draws. */
static void moments(const dist *d, const char *name, int n, double *mean, double *var)
{
    rng r;
    rng_init(&r, 3, name, 0);
    stat_acc a;
    stat_init(&a);
    for (int i = 0; i < n; i++)
        stat_add(&a, dist_sample(d, &r));
    *mean = a.mean;
    *var = stat_var(&a);
}

static void test_dist_moments_match_theory(void **state)
{
    (void)state;
    struct {
        dist d;
        double mean, var;
    } cs[] = {
        {{.kind = DIST_CONSTANT, .a = 5}, 5, 0},
        {{.kind = DIST_UNIFORM, .a = 2, .b = 6}, 4, 16.0 / 12},
        {{.kind = DIST_EXPONENTIAL, .a = 3}, 3, 9},
        {{.kind = DIST_PARETO, .a = 3.5, .b = 1}, 3.5 / 2.5, 3.5 / (2.5 * 2.5 * 1.5)},
        {{.kind = DIST_LOGNORMAL, .a = 0.1, .b = 0.5}, exp(0.1 + 0.125),
         (exp(0.25) - 1) * exp(0.2 + 0.25)},
        {{.kind = DIST_NORMAL, .a = 10, .b = 2, .q = DIST_Q_NUMBER}, 10, 4},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        double m, v;
        moments(&cs[i].d, dist_kind_name(cs[i].d.kind), 400000, &m, &v);
        assert_float_equal(dist_mean(&cs[i].d), cs[i].mean, 1e-12);
        assert_float_equal(dist_moment2(&cs[i].d), cs[i].var + cs[i].mean * cs[i].mean, 1e-9);
        if (fabs(m - cs[i].mean) > 0.01 * cs[i].mean)
            fail_msg("%s: sample mean %g, expected %g", dist_kind_name(cs[i].d.kind), m,
                     cs[i].mean);
        if (fabs(v - cs[i].var) > 0.05 * cs[i].var + 1e-12)
            fail_msg("%s: sample variance %g, expected %g", dist_kind_name(cs[i].d.kind), v,
                     cs[i].var);
    }
}

static void test_dist_normal_clamped_for_times(void **state)
{
    (void)state;
    dist d = {.kind = DIST_NORMAL, .a = 1, .b = 5, .q = DIST_Q_TIME};
    rng r;
    rng_init(&r, 1, "test.clamp", 0);
    for (int i = 0; i < 10000; i++)
        assert_true(dist_sample(&d, &r) >= 0);
}

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/aisim-test-cdf-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_ecdf_sampling_interpolates_and_matches_mean(void **state)
{
    (void)state;
    char *p = write_tmp("# size cdf\n0 0\n100 0.5\n\n300 1.0\n");
    ecdf *t;
    err e = {0};
    assert_int_equal(ecdf_load(p, 1, &t, &e), 0);
    unlink(p);
    assert_int_equal(t->n, 3);
    assert_float_equal(ecdf_mean(t), 0.5 * 50 + 0.5 * 200, 1e-12);
    rng r;
    rng_init(&r, 1, "test.ecdf", 0);
    stat_acc a;
    stat_init(&a);
    int below100 = 0;
    for (int i = 0; i < 200000; i++) {
        double x = ecdf_sample(t, &r);
        assert_true(x >= 0 && x <= 300);
        below100 += x < 100;
        stat_add(&a, x);
    }
    assert_float_equal(a.mean, 125, 1.0);
    assert_float_equal(below100 / 200000.0, 0.5, 0.005);
    ecdf_free(t);
}

static void test_ecdf_rejects_bad_files_naming_the_line(void **state)
{
    (void)state;
    struct {
        const char *text, *msg_tail;
    } cs[] = {
        {"0 0\n200 0.5\n100 1\n", ":3:1: expected a monotone CDF (values and probabilities never "
                                   "decrease), found (100, 1) after (200, 0.5)"},
        {"0 0\n100 0.7\n 200 0.6\n", ":3:2: expected a monotone CDF (values and probabilities never "
                                     "decrease), found (200, 0.6) after (100, 0.7)"},
        {"0 0\n100 0.9\n", ":2: expected the last cumulative probability to be 1, found 0.9"},
        {"0 0\n100 x\n", ":2:1: expected \"value probability\" (two finite numbers), found \"100 x\""},
        {"0 0\n100  1.5\n", ":2:6: expected a probability in [0, 1], found 1.5"},
        {"0 0 7\n", ":1:5: expected two columns, found extra text \"7\""},
        {"# nothing\n", ": expected at least one \"value probability\" line, found none"},
        {"# x\n-5 0\n0 1\n", ":2:1: expected values >= 0, found -5"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char *p = write_tmp(cs[i].text);
        ecdf *t = (ecdf *)1;
        err e = {0};
        assert_true(ecdf_load(p, 1, &t, &e) < 0);
        assert_null(t);
        char want[512];
        snprintf(want, sizeof want, "%s%s", p, cs[i].msg_tail);
        assert_string_equal(e.msg, want);
        unlink(p);
    }
    ecdf *t;
    err e = {0};
    assert_int_equal(ecdf_load("/nonexistent/x.cdf", 1, &t, &e), AISIM_ENOENT);
}

static void test_stats_welford_quantiles_jain(void **state)
{
    (void)state;
    stat_acc a;
    stat_init(&a);
    const double xs[] = {2, 4, 4, 4, 5, 5, 7, 9};
    for (size_t i = 0; i < 8; i++)
        stat_add(&a, xs[i]);
    assert_float_equal(a.mean, 5, 1e-15);
    assert_float_equal(stat_var(&a), 32.0 / 7, 1e-12);
    assert_float_equal(a.min, 2, 0);
    assert_float_equal(a.max, 9, 0);

    samples s;
    samples_init(&s);
    for (int i = 10; i >= 1; i--)
        samples_add(&s, i);
    assert_float_equal(samples_quantile(&s, 0.5), 5.5, 1e-12);   /* numpy: 5.5 */
    assert_float_equal(samples_quantile(&s, 0.9), 9.1, 1e-12);   /* numpy: 9.1 */
    assert_float_equal(samples_quantile(&s, 0), 1, 0);
    assert_float_equal(samples_quantile(&s, 1), 10, 0);
    samples_fini(&s);

    const double eq[] = {3, 3, 3, 3}, one[] = {1, 0, 0, 0};
    assert_float_equal(jain_index(eq, 4), 1.0, 1e-15);
    assert_float_equal(jain_index(one, 4), 0.25, 1e-15);
}

static void test_batch_means_interval_covers_iid_mean(void **state)
{
    (void)state;
    batch_means b;
    bm_init(&b, 32);
    rng r;
    rng_init(&r, 5, "test.bm", 0);
    for (int i = 0; i < 100000; i++)
        bm_add(&b, rng_exponential(&r, 2.0));
    double hw = bm_halfwidth95(&b);
    /* i.i.d. Exp(2): sd of the mean is 2/sqrt(1e5) = 0.0063. */
    assert_true(hw > 0.006 && hw < 0.02);
    assert_true(fabs(bm_mean(&b) - 2.0) < hw);
    assert_true(b.full >= 32 && b.full < 64);
    bm_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng_xoshiro_reference_vector),
        cmocka_unit_test(test_rng_streams_depend_on_name_not_order),
        cmocka_unit_test(test_rng_below_is_uniform),
        cmocka_unit_test(test_dist_moments_match_theory),
        cmocka_unit_test(test_dist_normal_clamped_for_times),
        cmocka_unit_test(test_ecdf_sampling_interpolates_and_matches_mean),
        cmocka_unit_test(test_ecdf_rejects_bad_files_naming_the_line),
        cmocka_unit_test(test_stats_welford_quantiles_jain),
        cmocka_unit_test(test_batch_means_interval_covers_iid_mean),
    };
    return cmocka_run_group_tests_name("rng", tests, NULL, NULL);
}
