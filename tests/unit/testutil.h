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

static char tu_tmp[64];     /* this program's temporary directory */

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

#endif
