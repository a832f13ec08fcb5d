/*
 * test_coll_jobs.c - the collective model's `jobs` (src/workload/coll_jobs.c):
 * several collective jobs sharing a fabric, measured and background, with
 * start times, repeats and on/off schedules; and Stellar's Fig. 10 examples
 * at small size.
 *
 * On a 4-host star of 10 Gbps links (TCP):
 *  - a 2-rank all-reduce job of 4 MiB, 3 calls of which 1 warm-up, alone:
 *    busbw within 10 % of the 1.25 GB/s link, 3 calls, 2 timed, and the run
 *    ends at its last call's finish;
 *  - the same job while a background job (always on, iters 0) all-reduces
 *    between h2 and h1 (h1's link shared): busbw between 35 % and 75 % of
 *    the alone case, the background made >= 2 calls;
 *  - on/off, fixed 1 ms / 1 ms from t = 0: every background call starts
 *    inside an on-period ([2k, 2k + 1) ms) and some start exactly at one's
 *    beginning (after waiting); exponential periods: the same seed gives
 *    byte-identical coll_jobs.csv, another seed another.
 * Bad keys are tests/scenarios/bad/coll-jobs-*.yaml (test_cli).
 * Stellar's Fig. 10a (examples/stellar/fig10-static.yaml, 4 MiB calls):
 *  - OBS-128's measured busbw >= single path's on seed 1 (where ECMP
 *    collides), both at most the RNIC's 50 GB/s (2 x 200 Gbps), OBS above
 *    15 GB/s.
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

/* A 1 ms minimum RTO: with 200 ms, since TCP follows RFC 6675 (a lost
 * retransmission waits for the timeout) a warm-up call stalled 208 ms on one
 * timeout and the background job happened to be idle during the timed
 * calls, so the test measured a timeout's luck instead of the sharing. */
static const char *star =
    "model: collective\n"
    "seed: %d\n"
    "collective:\n"
    "  topology: {kind: star, hosts: 4, link: {rate: 10Gbps, delay: 1us, buffer: 1MiB}}\n"
    "  transport: {name: tcp, mss: 8960B, min_rto: 1ms}\n"
    "  jobs:\n"
    "    - {name: fg, ranks: [h0, h1], bytes: 4MiB, iters: 3, warmup_iters: 1, start: 100us}\n"
    "%s";

/* Writes the star scenario with extra job lines into tu_tmp/NAME.yaml and
 * runs it into tu_tmp/NAME; returns the summary. */
static json_t *run_star(const char *name, int seed, const char *extra)
{
    char path[256], text[2048];
    snprintf(path, sizeof path, "%s/%s.yaml", tu_tmp, name);
    snprintf(text, sizeof text, star, seed, extra);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return tu_run(path, name, NULL, 0);
}

static json_t *job_of(json_t *sum, const char *job)
{
    json_t *j = json_object_get(json_object_get(json_object_get(json_object_get(sum, "results"),
                                                                "coll_jobs"), "jobs"), job);
    assert_non_null(j);
    return j;
}

/* A call row of coll_jobs.csv. */
typedef struct row {
    char name[32];
    int call, timed;
    double start_s, finish_s, busbw;
} row;

static int read_rows(const char *dir, row *rows, int max)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s/coll_jobs.csv", tu_tmp, dir);
    char *b = tu_slurp(path, NULL), *line = strchr(b, '\n');
    int n = 0;
    while (line && line[1] && n < max) {
        row *r = &rows[n];
        int job, ranks, aborted;
        unsigned long long bytes;
        double t, alg;
        int got = sscanf(line + 1, "%d,%31[^,],%d,all_reduce,%*[^,],%d,%llu,%lf,%lf,%lf,%lf,%lf,%d,%d",
                         &job, r->name, &r->call, &ranks, &bytes, &r->start_s, &r->finish_s, &t,
                         &alg, &r->busbw, &r->timed, &aborted);
        assert_int_equal(got, 12);
        n++;
        line = strchr(line + 1, '\n');
    }
    free(b);
    return n;
}

static void test_measured_alone_and_under_background(void **state)
{
    (void)state;
    json_t *alone = run_star("alone", 1, "");
    json_t *fg = job_of(alone, "fg");
    double bus = tu_num(fg, "busbw_GBps");
    print_message("alone: busbw %.3f GB/s\n", bus);
    assert_true(bus > 0.9 * 1.25 && bus <= 1.25);
    assert_int_equal((int)tu_num(fg, "calls"), 3);
    assert_int_equal((int)tu_num(fg, "timed_calls"), 2);
    row rows[64];
    int n = read_rows("alone", rows, 64);
    assert_int_equal(n, 3);
    assert_int_equal(rows[0].timed, 0);
    assert_int_equal(rows[2].timed, 1);
    assert_true(fabs(rows[0].start_s - 100e-6) < 1e-12);
    assert_true(fabs(tu_num(alone, "sim_time_s") - rows[2].finish_s) < 1e-9);

    json_t *bg = run_star("bg", 1, "    - {name: bg, ranks: [h2, h1], bytes: 4MiB, iters: 0}\n");
    double bus2 = tu_num(job_of(bg, "fg"), "busbw_GBps");
    print_message("under background: busbw %.3f GB/s, background calls %d\n", bus2,
                  (int)tu_num(job_of(bg, "bg"), "calls"));
    assert_true(bus2 > 0.35 * bus && bus2 < 0.75 * bus);
    assert_true(tu_num(job_of(bg, "bg"), "calls") >= 2);
    assert_true(json_is_true(json_object_get(job_of(bg, "bg"), "background")));
    json_decref(alone);
    json_decref(bg);
}

static void test_on_off_fixed_calls_only_in_on_periods(void **state)
{
    (void)state;
    json_t *s = run_star("onoff", 1,
                         "    - {name: bg, ranks: [h2, h3], bytes: 1MiB, iters: 0, on: 1ms, "
                         "off: 1ms}\n");
    row rows[256];
    int n = read_rows("onoff", rows, 256), nbg = 0, waited = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].name, "bg") != 0)
            continue;
        nbg++;
        double ms = rows[i].start_s * 1e3, in = fmod(ms, 2.0);
        assert_true(in < 1.0);
        waited += rows[i].call > 0 && in < 1e-9;
    }
    print_message("on/off: %d background calls, %d at an on-period's start\n", nbg, waited);
    assert_true(nbg >= 4);
    assert_true(waited >= 1);
    json_decref(s);
}

static void test_on_off_exponential_repeats_by_seed(void **state)
{
    (void)state;
    const char *bg = "    - {name: bg, ranks: [h2, h1], bytes: 1MiB, iters: 0, on: 1ms, off: 1ms, "
                     "on_off: exponential}\n";
    json_decref(run_star("e1", 3, bg));
    json_decref(run_star("e2", 3, bg));
    json_decref(run_star("e3", 4, bg));
    char p1[256], p2[256], p3[256];
    snprintf(p1, sizeof p1, "%s/e1/coll_jobs.csv", tu_tmp);
    snprintf(p2, sizeof p2, "%s/e2/coll_jobs.csv", tu_tmp);
    snprintf(p3, sizeof p3, "%s/e3/coll_jobs.csv", tu_tmp);
    size_t l1, l2, l3;
    char *a = tu_slurp(p1, &l1), *b = tu_slurp(p2, &l2), *c = tu_slurp(p3, &l3);
    assert_true(l1 == l2 && memcmp(a, b, l1) == 0);
    assert_false(l1 == l3 && memcmp(a, c, l1) == 0);
    free(a);
    free(b);
    free(c);
}

/* Stellar's Fig. 10a (its example: 4 MiB per call): OBS-128 against single
 * path on seed 1. */
static void test_fig10_static_obs_beats_single(void **state)
{
    (void)state;
    const char *single[] = {"collective.transport.multipath.algo=single"};
    json_t *o = tu_run("stellar/fig10-static", "f10obs", NULL, 0);
    json_t *s = tu_run("stellar/fig10-static", "f10single", single, 1);
    double bo = tu_num(job_of(o, "measured"), "busbw_GBps"),
           bs = tu_num(job_of(s, "measured"), "busbw_GBps");
    print_message("fig10-static 4 MiB, seed 1: OBS-128 %.2f GB/s, single path %.2f GB/s\n", bo,
                  bs);
    assert_true(bo >= bs);
    assert_true(bo > 15 && bo <= 50 && bs <= 50);
    json_decref(o);
    json_decref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured_alone_and_under_background),
        cmocka_unit_test(test_on_off_fixed_calls_only_in_on_periods),
        cmocka_unit_test(test_on_off_exponential_repeats_by_seed),
        cmocka_unit_test(test_fig10_static_obs_beats_single),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
