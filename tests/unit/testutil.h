/*
 * testutil.h - helpers shared by the test programs that run whole scenarios
 * or the aisim binary: a temporary directory per program (created by the
 * group setup, removed by the teardown) and a run of a scenario into it.
 */
#ifndef AISIM_TESTUTIL_H
#define AISIM_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "cli/run.h"

/* this program's temporary directory (unused by programs that only read
 * files) */
static char tu_tmp[64] __attribute__((unused));

static inline int tu_setup(void **state)
{
    (void)state;
    snprintf(tu_tmp, sizeof tu_tmp, "/tmp/aisim-test-XXXXXX");
    return mkdtemp(tu_tmp) ? 0 : -1;
}

static inline int tu_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_tmp);
    return system(cmd);
}

/* Runs `scenario` (file or built-in example) with overrides into
 * tu_tmp/sub; fails the test on error.  Returns the summary (decref it). */
static inline json_t *tu_run(const char *scenario, const char *sub, const char **sets, int nsets)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", tu_tmp, sub);
    run_opts o = {.scenario = scenario, .out_dir = dir, .sets = sets, .nsets = nsets};
    err e = {0};
    json_t *sum = NULL;
    if (run_scenario(&o, &sum, NULL, &e))
        fail_msg("run of %s failed: %s", scenario, e.msg);
    return sum;
}

/* The whole file at `path`, NUL-terminated (free it), and its size in *len
 * when len is not NULL; fails the test if it cannot be read. */
static inline char *tu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    fclose(f);
    assert_int_equal(got, (size_t)n);
    b[got] = '\0';
    if (len)
        *len = got;
    return b;
}

#endif
