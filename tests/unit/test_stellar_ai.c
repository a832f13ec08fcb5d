/*
 * test_stellar_ai.c - Stellar's Fig. 16 at small size
 * (examples/stellar/fig16-training.yaml, docs/stellar.md "Fig. 16"):
 * training iteration time with OBS over 128 paths against single-path
 * RoCE (Stellar's CC, per-QP ECMP), for rail-aligned ("re-ranked") and
 * random placement of the example's two jobs, seed 1, packet plane, with
 * the models shrunk to hidden 512 (ffn 2048) so that the four runs take a
 * few seconds.
 *
 * Asserted (the measured shape, the paper's direction):
 *  - rail-aligned: OBS and single path within 0.5 % per job (measured:
 *    identical, 3.574 and 2.405 ms): DP rings stay on their rail ToRs and
 *    TP inside a server, nothing crosses the aggregation layer to spread;
 *  - random: the jobs' mean gain (T_single - T_obs) / T_single > 5 %
 *    (measured 6.52 %: job a 2.4 %, job b 10.7 %), and above the
 *    rail-aligned mean gain by more than 5 points;
 *  - random placement costs OBS at least 10 % of iteration time against
 *    rail-aligned (5.31 against 3.57 ms for job a, 3.51 against 2.41 for b).
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

#include "testutil.h"

/* Iteration times of jobs a and b of one run of the small Fig. 16. */
static void run16(const char *algo, const char *placement, double t[2])
{
    char sub[64], a_set[96], p0[96], p1[96];
    snprintf(sub, sizeof sub, "f16-%s-%s", algo, placement);
    snprintf(a_set, sizeof a_set, "training.transport.multipath.algo=%s", algo);
    snprintf(p0, sizeof p0, "training.jobs[0].placement=%s", placement);
    snprintf(p1, sizeof p1, "training.jobs[1].placement=%s", placement);
    const char *sets[] = {a_set, p0, p1,
                          "training.jobs[0].model.hidden=512", "training.jobs[1].model.hidden=512",
                          "training.jobs[0].model.ffn=2048", "training.jobs[1].model.ffn=2048",
                          "training.jobs[0].model.heads=8", "training.jobs[1].model.heads=8"};
    json_t *sum = tu_run("stellar/fig16-training", sub, sets, 9);
    json_t *jobs = json_object_get(json_object_get(sum, "results"), "jobs");
    assert_int_equal(json_array_size(jobs), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *j = json_array_get(jobs, i);
        assert_int_equal(json_integer_value(json_object_get(j, "iterations_done")), 1);
        t[i] = json_number_value(json_object_get(j, "iteration_s"));
        assert_true(t[i] > 0);
    }
    json_decref(sum);
}

static void test_fig16_gain_random_above_rail_aligned(void **state)
{
    (void)state;
    double or[2], sr[2], oa[2], sa[2];
    run16("obs", "random", or);
    run16("single", "random", sr);
    run16("obs", "rail_aligned", oa);
    run16("single", "rail_aligned", sa);
    double g_rand = 0, g_rail = 0;
    for (int i = 0; i < 2; i++) {
        print_message("job %c: random OBS %.3f ms single %.3f ms; rail-aligned OBS %.3f ms "
                      "single %.3f ms\n", 'a' + i, or[i] * 1e3, sr[i] * 1e3, oa[i] * 1e3,
                      sa[i] * 1e3);
        assert_true(fabs(oa[i] - sa[i]) <= 0.005 * sa[i]);
        assert_true(or[i] >= 1.1 * oa[i]);
        g_rand += (sr[i] - or[i]) / sr[i] / 2;
        g_rail += (sa[i] - oa[i]) / sa[i] / 2;
    }
    print_message("mean gain of OBS-128 over single path: random %.2f %%, rail-aligned %.2f %%\n",
                  100 * g_rand, 100 * g_rail);
    assert_true(g_rand > 0.05);
    assert_true(g_rand > g_rail + 0.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fig16_gain_random_above_rail_aligned),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
