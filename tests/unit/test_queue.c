/*
 * test_queue.c - end-to-end validation of the core through the single-server
 * queue: measured mean waits against queueing theory, Little's law, and
 * byte-identical run directories for the same scenario and seed.
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

#include "testutil.h"

static double num(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(o, "results"), a);
    if (b)
        v = json_object_get(v, b);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* Checks the measured mean wait against the analytic one: within `tol`
 * relative, and within 3 half-widths of the batch-means interval. */
static void check_wait(json_t *sum, double analytic_s, double tol)
{
    double wq = num(sum, "mean_wait_s", NULL), hw = num(sum, "mean_wait_ci95_s", NULL);
    assert_float_equal(num(sum, "analytic", "mean_wait_s"), analytic_s, analytic_s * 1e-12);
    if (fabs(wq - analytic_s) > tol * analytic_s)
        fail_msg("mean wait %.6g s, analytic %.6g s: off by %.2f%%", wq, analytic_s,
                 100 * (wq - analytic_s) / analytic_s);
    if (fabs(wq - analytic_s) > 3 * hw)
        fail_msg("analytic %.6g s outside 3 half-widths of %.6g +- %.3g", analytic_s, wq, hw);
    /* Little's law with independently measured L, lambda and W. */
    double L = num(sum, "mean_in_system", NULL), lw = num(sum, "littles_law_lambda_w", NULL);
    assert_float_equal(L, lw, 0.01 * L);
}

static void test_queue_mm1_matches_analytic_at_load_0_5(void **state)
{
    (void)state;
    const char *sets[] = {"queue.arrival.mean=2ms", "queue.customers=2000000"};
    json_t *sum = tu_run("core/mm1", "mm1-0.5", sets, 2);
    /* rho = 0.5, mu = 1000/s: Wq = rho / (mu - lambda) = 1 ms. */
    check_wait(sum, 0.001, 0.02);
    assert_float_equal(num(sum, "utilisation", NULL), 0.5, 0.005);
    json_decref(sum);
}

static void test_queue_mm1_matches_analytic_at_load_0_8(void **state)
{
    (void)state;
    const char *sets[] = {"queue.customers=4000000"};
    json_t *sum = tu_run("core/mm1", "mm1-0.8", sets, 1);
    /* rho = 0.8: Wq = 0.8 / (1000 - 800) = 4 ms. */
    check_wait(sum, 0.004, 0.02);
    assert_float_equal(num(sum, "utilisation", NULL), 0.8, 0.005);
    assert_float_equal(num(sum, "mean_in_system", NULL), 4.0, 0.1);
    json_decref(sum);
}

static void test_queue_md1_matches_pollaczek_khinchine(void **state)
{
    (void)state;
    json_t *sum = tu_run("core/md1", "md1", NULL, 0);
    /* rho = 0.8, deterministic service 1 ms: Wq = rho / (2 mu (1 - rho)) = 2 ms. */
    check_wait(sum, 0.002, 0.02);
    json_decref(sum);
}

static void test_queue_link_job_size_over_rate_is_mm1(void **state)
{
    (void)state;
    const char *sets[] = {"queue.customers=2000000"};
    json_t *sum = tu_run("core/link", "link", sets, 1);
    /* 1500 B at 10 Gbps = 1.2 us service, arrivals every 1.5 us: rho = 0.8,
     * Wq = rho / (mu - lambda) = 0.8 / (1/1.2us - 1/1.5us) = 4.8 us. */
    check_wait(sum, 4.8e-6, 0.02);
    assert_float_equal(num(sum, "analytic", "load"), 0.8, 1e-12);
    json_decref(sum);
}

static void test_queue_same_seed_gives_byte_identical_run_directory(void **state)
{
    (void)state;
    const char *sets[] = {"queue.customers=50000", "queue.sample_interval=100ms"};
    json_t *a = tu_run("core/mm1", "det-a", sets, 2);
    json_t *b = tu_run("core/mm1", "det-b", sets, 2);
    json_t *files = json_object_get(a, "files");
    assert_true(json_equal(files, json_object_get(b, "files")));
    assert_int_equal(json_array_size(files), 4);    /* run.log queue.csv scenario.yaml summary.json */
    size_t i;
    json_t *v;
    json_array_foreach(files, i, v) {
        const char *name = json_string_value(v);
        char pa[256], pb[256];
        snprintf(pa, sizeof pa, "%s/det-a/%s", tu_tmp, name);
        snprintf(pb, sizeof pb, "%s/det-b/%s", tu_tmp, name);
        size_t la, lb;
        char *ca = tu_slurp(pa, &la), *cb = tu_slurp(pb, &lb);
        assert_non_null(ca);
        assert_non_null(cb);
        if (strcmp(name, "summary.json") == 0) {
            /* Identical apart from the wall-clock fields. */
            json_t *ja = json_loads(ca, 0, NULL), *jb = json_loads(cb, 0, NULL);
            assert_non_null(json_object_get(ja, "wall"));
            json_object_del(ja, "wall");
            json_object_del(jb, "wall");
            assert_true(json_equal(ja, jb));
            json_decref(ja);
            json_decref(jb);
        } else {
            assert_int_equal(la, lb);
            assert_memory_equal(ca, cb, la);
        }
        free(ca);
        free(cb);
    }
    /* Another seed gives other numbers. */
    const char *sets2[] = {"queue.customers=50000", "seed=2"};
    json_t *c = tu_run("core/mm1", "det-c", sets2, 2);
    assert_true(num(c, "mean_wait_s", NULL) != num(a, "mean_wait_s", NULL));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_queue_resolved_scenario_reruns_identically(void **state)
{
    (void)state;
    const char *sets[] = {"queue.customers=20000"};
    json_t *a = tu_run("core/md1", "res-a", sets, 1);
    char path[256];
    snprintf(path, sizeof path, "%s/res-a/scenario.yaml", tu_tmp);
    json_t *b = tu_run(path, "res-b", NULL, 0);
    assert_float_equal(num(a, "mean_wait_s", NULL), num(b, "mean_wait_s", NULL), 0);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_mm1_matches_analytic_at_load_0_5),
        cmocka_unit_test(test_queue_mm1_matches_analytic_at_load_0_8),
        cmocka_unit_test(test_queue_md1_matches_pollaczek_khinchine),
        cmocka_unit_test(test_queue_link_job_size_over_rate_is_mm1),
        cmocka_unit_test(test_queue_same_seed_gives_byte_identical_run_directory),
        cmocka_unit_test(test_queue_resolved_scenario_reruns_identically),
    };
    return cmocka_run_group_tests_name("queue", tests, tu_setup, tu_teardown);
}
