/*
 * testutil.h - helpers shared by the test programs that run whole scenarios
 * or the aisim binary: a temporary directory per program (created by the
 * group setup, removed by the teardown) and a run of a scenario into it.
 */
#ifndef AISIM_TESTUTIL_H
#define AISIM_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Runs `spec` (a scenario file or built-in example) with overrides into
 * tu_tmp/sub; fails the test on error.  Returns the summary (decref it). */
static inline json_t *tu_run(const char *spec, const char *sub, const char **sets, int nsets)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", tu_tmp, sub);
    run_opts o = {.scenario = spec, .out_dir = dir, .sets = sets, .nsets = nsets};
    err e = {0};
    json_t *sum = NULL;
    if (run_scenario(&o, &sum, NULL, &e))
        fail_msg("run of %s failed: %s", spec, e.msg);
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

/* Fails the test unless tu_tmp/a/file and tu_tmp/b/file are byte-identical
 * (two runs of one scenario and seed: determinism). */
static inline void tu_assert_same_file(const char *a, const char *b, const char *file)
{
    char pa[320], pb[320];
    snprintf(pa, sizeof pa, "%s/%s/%s", tu_tmp, a, file);
    snprintf(pb, sizeof pb, "%s/%s/%s", tu_tmp, b, file);
    size_t la, lb;
    char *x = tu_slurp(pa, &la), *y = tu_slurp(pb, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
}

/* The number at key k of object o; fails the test if there is none. */
static inline double tu_num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        fail_msg("no %s in the summary", k);
    return json_number_value(v);
}

/* time_us of the row of `bytes` in tu_tmp/sub/nccl_tests.csv (columns
 * size,count,type,redop,root,time_us,...); fails the test if none. */
static inline double tu_nccl_time_us(const char *sub, uint64_t bytes)
{
    char path[320];
    snprintf(path, sizeof path, "%s/%s/nccl_tests.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    double t = NAN;
    for (char *l = strchr(b, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        unsigned long long sz;
        double us;
        if (sscanf(l + 1, "%llu,%*[^,],%*[^,],%*[^,],%*[^,],%lf", &sz, &us) == 2 && sz == bytes)
            t = us;
    }
    free(b);
    if (isnan(t))
        fail_msg("no row of %llu bytes in %s", (unsigned long long)bytes, path);
    return t;
}

#endif
