/*
 * test_cli_sweep.c - aisim sweep as a user meets it: the table against the
 * points' own summaries, seeds, errors before anything runs, a point past
 * the end of time, determinism with any number of jobs, plots.
 *
 * The binary is $AISIM (set by `make test`), run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aisim/out.h"
#include "aisim/stats.h"
#include "clitest.h"

static void test_sweep_point_past_the_end_of_time_exits_1(void **state)
{
    (void)state;
    char dir[128], *e;
    snprintf(dir, sizeof dir, "%s/endsweep", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--jobs", "1", "--out",
                                                dir, "--set", "queue.customers=100", "--vary",
                                                "queue.arrival={dist: exponential, mean: 1ms},"
                                                "{dist: constant, value: 1000000s}", NULL},
                               NULL, &e), 1);
    if (!strstr(e, "past the end of simulated time") || !strstr(e, "aisim sweep: point "))
        fail_msg("got: %s", e);
    free(e);
}

/* Splits one CSV line (RFC 4180 quoting, as sweep.csv writes it) into at
 * most max fields, in place; returns the count. */
static int csv_split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    line[strcspn(line, "\n")] = '\0';
    while (n < max) {
        char *w = p;
        f[n++] = w;
        if (*p == '"') {
            for (p++; *p && !(p[0] == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++;
                *w++ = *p;
            }
            if (*p == '"')
                p++;
        } else {
            while (*p && *p != ',')
                *w++ = *p++;
        }
        char c = *p;
        *w = '\0';
        if (c != ',')
            break;
        p++;
    }
    return n;
}

/* sweep.csv as lines (caller frees lines[0] and lines); returns the count. */
static int csv_lines(const char *dir, char ***lines)
{
    char p[256];
    snprintf(p, sizeof p, "%s/sweep.csv", dir);
    char *text = slurp(p);
    int n = 0;
    *lines = calloc(256, sizeof **lines);
    for (char *l = text; *l && n < 256; n++) {
        (*lines)[n] = l;
        char *nl = strchr(l, '\n');
        if (!nl)
            fail_msg("%s: last line has no newline", p);
        *nl = '\0';
        l = nl + 1;
    }
    if (n == 0)
        free(text);
    return n;
}

/* The number at a dotted path under v ("analytic.load"). */
static json_t *json_path(json_t *v, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *k = strtok(buf, "."); k && v; k = strtok(NULL, "."))
        v = json_object_get(v, k);
    return v;
}

static int sweep_mm1(const char *dir, const char *extra1, const char *extra2, char **errout)
{
    return run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir, "--vary",
                                      "queue.customers=1000,2000", "--vary",
                                      "queue.arrival.mean=2ms,1.25ms", extra1, extra2, NULL},
                     NULL, errout);
}

static void test_sweep_2x2_table_matches_point_summaries(void **state)
{
    (void)state;
    char dir[128], p[512];
    snprintf(dir, sizeof dir, "%s/sweep2x2", tu_tmp);
    assert_int_equal(sweep_mm1(dir, NULL, NULL, NULL), 0);
    const char *names[] = {"customers=1000,mean=2ms", "customers=1000,mean=1.25ms",
                           "customers=2000,mean=2ms", "customers=2000,mean=1.25ms"};
    char **lines;
    assert_int_equal(csv_lines(dir, &lines), 5);
    char *head[64];
    int nh = csv_split(lines[0], head, 64);
    assert_true(nh > 6);
    assert_string_equal(head[0], "queue.customers");
    assert_string_equal(head[1], "queue.arrival.mean");
    assert_string_equal(head[2], "seed");
    assert_string_equal(head[3], "run_dir");
    assert_string_equal(head[4], "customers");
    assert_string_equal(head[5], "mean_wait_s");
    for (int i = 0; i < 4; i++) {
        char *f[64];
        assert_int_equal(csv_split(lines[i + 1], f, 64), nh);
        assert_string_equal(f[0], i < 2 ? "1000" : "2000");
        assert_string_equal(f[1], i % 2 ? "1.25ms" : "2ms");
        assert_string_equal(f[2], "1");
        assert_string_equal(f[3], names[i]);
        snprintf(p, sizeof p, "%s/%s/summary.json", dir, names[i]);
        json_t *sum = json_load_file(p, 0, NULL);
        assert_non_null(sum);
        json_t *res = json_object_get(sum, "results");
        /* Every result column holds the point's own number. */
        for (int c = 4; c < nh; c++) {
            json_t *v = json_path(res, head[c]);
            if (!json_is_number(v))
                fail_msg("%s: %s is not a number in %s", names[i], head[c], p);
            if (strtod(f[c], NULL) != json_number_value(v))
                fail_msg("%s: %s is %s in sweep.csv, %.17g in summary.json", names[i], head[c],
                         f[c], json_number_value(v));
        }
        assert_int_equal(strtoll(f[4], NULL, 10), i < 2 ? 1000 : 2000);
        json_decref(sum);
    }
    free(lines[0]);
    free(lines);
    snprintf(p, sizeof p, "%s/sweep.json", dir);
    json_t *j = json_load_file(p, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "points")), 4);
    assert_int_equal(json_array_size(json_object_get(j, "columns")), nh);
    json_decref(j);
}

static void test_sweep_seeds_range_gives_one_row_per_seed(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/seeds", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--seeds", "1..3",
                                                "--set", "queue.customers=500", "--out", dir,
                                                NULL}, NULL, NULL), 0);
    char **lines;
    assert_int_equal(csv_lines(dir, &lines), 4);
    char *head[64], *f[64];
    csv_split(lines[0], head, 64);
    assert_string_equal(head[0], "seed");
    assert_string_equal(head[1], "run_dir");
    assert_string_equal(head[3], "mean_wait_s");
    char waits[3][64];
    for (int i = 0; i < 3; i++) {
        csv_split(lines[i + 1], f, 64);
        char want[32];
        snprintf(want, sizeof want, "%d", i + 1);
        assert_string_equal(f[0], want);
        snprintf(want, sizeof want, "seed=%d", i + 1);
        assert_string_equal(f[1], want);
        snprintf(waits[i], sizeof waits[i], "%s", f[3]);
    }
    /* The seed reached the run: three different samples. */
    assert_string_not_equal(waits[0], waits[1]);
    assert_string_not_equal(waits[1], waits[2]);
    free(lines[0]);
    free(lines);
}

static void test_sweep_bad_point_exits_2_before_running_anything(void **state)
{
    (void)state;
    char dir[128], *e;
    snprintf(dir, sizeof dir, "%s/badsweep", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "--out", dir, "--vary",
                                                "queue.custmers=1000,2000", NULL}, NULL, &e), 2);
    assert_true(strncmp(e, "--set:1:1: queue.custmers: unknown key; did you mean \"customers\"?",
                        63) == 0);
    free(e);
    assert_false(exists(dir));
    /* Only the last value is bad: the first points do not run either. */
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "--out", dir, "--vary",
                                                "queue.customers=1000,lots", NULL}, NULL, &e), 2);
    assert_true(strncmp(e, "--set:1:17: queue.customers: expected an integer, found \"lots\"\n",
                        62) == 0);
    assert_non_null(strstr(e, "point customers=lots is invalid"));
    free(e);
    assert_false(exists(dir));
    /* Usage errors. */
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "nothing to sweep"));
    free(e);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "--vary", "queue.customers=1,{2",
                                                NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "unbalanced"));
    free(e);
}

static void test_sweep_run_failure_exits_1_naming_the_point(void **state)
{
    (void)state;
    char dir[160], *e;
    /* An aisim directory in which the first point's directory is a file. */
    snprintf(dir, sizeof dir, "%s/failsweep", tu_tmp);
    assert_int_equal(mkdir(dir, 0777), 0);
    put(dir, ".aisim", "");
    put(dir, "customers=1000", "");
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir,
                                                "--vary", "queue.customers=1000,2000", NULL},
                               NULL, &e), 1);
    assert_non_null(strstr(e, "aisim sweep: point customers=1000 failed"));
    free(e);
}

static void test_sweep_splits_values_at_top_level_commas(void **state)
{
    (void)state;
    char dir[128], p[512];
    snprintf(dir, sizeof dir, "%s/flowmap", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir,
                                                "--set", "queue.customers=500", "--vary",
                                                "queue.arrival={dist: exponential, mean: 2ms},"
                                                "{dist: constant, value: 1.5ms}", NULL},
                               NULL, NULL), 0);
    char **lines;
    assert_int_equal(csv_lines(dir, &lines), 3);
    char *f[64];
    csv_split(lines[1], f, 64);
    assert_string_equal(f[0], "{dist: exponential, mean: 2ms}");
    assert_string_equal(f[2], "arrival=dist_exponential_mean_2ms");
    csv_split(lines[2], f, 64);
    assert_string_equal(f[0], "{dist: constant, value: 1.5ms}");
    assert_string_equal(f[2], "arrival=dist_constant_value_1.5ms");
    snprintf(p, sizeof p, "%s/%s/scenario.yaml", dir, f[2]);
    char *y = slurp(p);
    assert_non_null(strstr(y, "dist: constant"));
    assert_non_null(strstr(y, "value: 1.5ms"));
    free(y);
    free(lines[0]);
    free(lines);
}

static void test_sweep_repeats_byte_for_byte_with_any_jobs(void **state)
{
    (void)state;
    char a[128], b[128], p[256];
    snprintf(a, sizeof a, "%s/rep-a", tu_tmp);
    snprintf(b, sizeof b, "%s/rep-b", tu_tmp);
    assert_int_equal(sweep_mm1(a, "--seeds", "2", NULL), 0);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", b, "--vary",
                                                "queue.customers=1000,2000", "--vary",
                                                "queue.arrival.mean=2ms,1.25ms", "--seeds", "2",
                                                "--jobs", "3", NULL}, NULL, NULL), 0);
    const char *files[] = {"sweep.csv", "sweep.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", a, files[i]);
        char *x = slurp(p);
        snprintf(p, sizeof p, "%s/%s", b, files[i]);
        char *y = slurp(p);
        assert_true(strlen(x) > 100);
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
}

static void test_sweep_plot_draws_png(void **state)
{
    (void)state;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        skip();
    char dir[128], p[256];
    snprintf(dir, sizeof dir, "%s/sweepplot", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir,
                                                "--vary", "queue.customers=1000,2000,4000",
                                                "--vary", "queue.warmup=0,100", NULL},
                               NULL, NULL), 0);
    char *o;
    assert_int_equal(run_aisim((const char *[]){"plot", dir, NULL}, &o, NULL), 0);
    free(o);
    snprintf(p, sizeof p, "%s/sweep-mean_wait_s.png", dir);
    char *png = slurp(p);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    free(png);
    snprintf(p, sizeof p, "%s/sweep-mean_wait_s.gp", dir);
    char *gp = slurp(p);
    /* Against the first key, one line per value of the second; the title
     * names the run. */
    assert_non_null(strstr(gp, "set xlabel 'queue.customers'"));
    assert_non_null(strstr(gp, "set title 'mm1 sweep: mean_wait_s"));
    assert_non_null(strstr(gp, "title 'warmup=0'"));
    assert_non_null(strstr(gp, "title 'warmup=100'"));
    free(gp);
    /* The analytic values do not depend on either key: no figure. */
    snprintf(p, sizeof p, "%s/sweep-analytic.load.png", dir);
    assert_false(exists(p));
    /* The varied key's own result (customers) against itself: no figure. */
    snprintf(p, sizeof p, "%s/sweep-customers.png", dir);
    assert_false(exists(p));
}

/* The sweep figure's data are the mean over seeds and the half-width of
 * its 95 % confidence interval, t(n-1) s / sqrt(n), computed here again
 * from sweep.csv; a categorical key is drawn as bars with error bars. */
static void test_sweep_plot_error_bars_are_95_percent_cis(void **state)
{
    (void)state;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        skip();
    char dir[128], p[256];
    snprintf(dir, sizeof dir, "%s/sweepci", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir,
                                                "--vary", "queue.customers=1000,2000",
                                                "--seeds", "1..3", NULL},
                               NULL, NULL), 0);
    char **lines;
    assert_int_equal(csv_lines(dir, &lines), 7);
    char *head[64], *f[64];
    int nh = csv_split(lines[0], head, 64), wc = -1;
    for (int i = 0; i < nh; i++)
        if (!strcmp(head[i], "mean_wait_s"))
            wc = i;
    assert_true(wc > 0);
    stat_acc a[2];
    stat_init(&a[0]);
    stat_init(&a[1]);
    for (int i = 1; i < 7; i++) {
        assert_int_equal(csv_split(lines[i], f, 64), nh);
        stat_add(&a[strcmp(f[0], "1000") != 0], strtod(f[wc], NULL));
    }
    free(lines[0]);
    free(lines);
    assert_int_equal(run_aisim((const char *[]){"plot", dir, "--metric", "mean_wait_s", NULL},
                               NULL, NULL), 0);
    snprintf(p, sizeof p, "%s/sweep-mean_wait_s.gp", dir);
    char *gp = slurp(p);
    for (int k = 0; k < 2; k++) {
        char want[200], m[64], h[64];
        out_fmt_double(m, sizeof m, a[k].mean);
        out_fmt_double(h, sizeof h, stat_t975(2) * stat_sd(&a[k]) / sqrt(3.0));
        snprintf(want, sizeof want, "\n%s %s %s\n", k ? "2000" : "1000", m, h);
        if (!strstr(gp, want))
            fail_msg("no line \"%s\" in:\n%s", want + 1, gp);
    }
    assert_non_null(strstr(gp, "using 1:2:3 with yerrorlines"));
    assert_non_null(strstr(gp, "(mean over seeds, 95 % CI)"));
    free(gp);
    snprintf(dir, sizeof dir, "%s/sweepbars", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir, "--set",
                                                "queue.customers=1000", "--vary",
                                                "queue.arrival={dist: exponential, mean: 1ms},"
                                                "{dist: constant, value: 1ms}",
                                                "--seeds", "1..2", NULL},
                               NULL, NULL), 0);
    assert_int_equal(run_aisim((const char *[]){"plot", dir, "--metric", "mean_wait_s", NULL},
                               NULL, NULL), 0);
    snprintf(p, sizeof p, "%s/sweep-mean_wait_s.gp", dir);
    gp = slurp(p);
    assert_non_null(strstr(gp, "with boxes"));
    assert_non_null(strstr(gp, "with yerrorbars"));
    free(gp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_point_past_the_end_of_time_exits_1),
        cmocka_unit_test(test_sweep_2x2_table_matches_point_summaries),
        cmocka_unit_test(test_sweep_seeds_range_gives_one_row_per_seed),
        cmocka_unit_test(test_sweep_bad_point_exits_2_before_running_anything),
        cmocka_unit_test(test_sweep_run_failure_exits_1_naming_the_point),
        cmocka_unit_test(test_sweep_splits_values_at_top_level_commas),
        cmocka_unit_test(test_sweep_repeats_byte_for_byte_with_any_jobs),
        cmocka_unit_test(test_sweep_plot_draws_png),
        cmocka_unit_test(test_sweep_plot_error_bars_are_95_percent_cis),
    };
    return cmocka_run_group_tests_name("cli_sweep", tests, setup, tu_teardown);
}
