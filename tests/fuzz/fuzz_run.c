/*
 * fuzz_run.c - libFuzzer target that runs what the loader accepts.
 *
 * Input as for fuzz_scenario.c (optional "--set key=value" lines, then
 * YAML).  A scenario that loads and configures is started and run for at
 * most FUZZ_RUN_EVENTS events, FUZZ_RUN_SIM_PS of simulated time (or its
 * own `stop:` if earlier) and FUZZ_RUN_WALL_S seconds, then reported into a scratch run directory
 * that is thrown away (out_abort), and released.  Memory is bounded by
 * libFuzzer (-malloc_limit_mb, -rss_limit_mb in the Makefile).  A crash, a
 * sanitizer report, a leak, or an error without a message is a bug; an
 * error return from start or report is an answer (e.g. a run that fails).
 *
 *   make fuzz-run FUZZ_SECONDS=60
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aisim/model.h"
#include "aisim/netreg.h"
#include "aisim/out.h"
#include "aisim/sim.h"
#include "aisim/units.h"
#include "cli/scenario.h"
#include "fuzz_input.h"

#define FUZZ_RUN_EVENTS 20000
#define FUZZ_RUN_SIM_PS PS_PER_S
#define FUZZ_RUN_WALL_S 0.25
/* Work units (sim_poll: loop iterations of long computations, and events)
 * an input may spend, set-up included: a single heavy event (a GDR
 * measurement of millions of requests, a federated round on a large batch)
 * is cut inside its loops, which the per-event checks below cannot do. */
#define FUZZ_RUN_WORK 500000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];    /* this process's scratch run directory */

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Checked after every event: some events are heavy (a federated-learning
 * round trains every device), so the event budget alone does not bound the
 * time an input takes. */
static void stop_after_budget(void *ctx, sim *s)
{
    const double *t0 = ctx;
    if (sim_events_run(s) >= FUZZ_RUN_EVENTS || wall_now() - *t0 > FUZZ_RUN_WALL_S)
        sim_stop(s);
}

/* configure, start, bounded run, report; returns the first error. */
static int run_bounded(scenario *sc, err *e)
{
    const model_ops *ops = sc->model;
    void *st = calloc(1, ops->state_size);
    sim *s = sim_create();
    model_env env = {.sim = s, .seed = (uint64_t)sc->seed, .base_dir = sc->base_dir,
                     .stop_ps = sc->stop_ps,
                     .net = net_registry_builtin()};
    out *o = NULL;
    sim_set_work_budget(s, FUZZ_RUN_WORK);
    int r = ops->configure(st, sc->section, ops->name, &env, e);
    if (!r)
        r = ops->start(st, s, e);
    if (!r) {
        double t0 = wall_now();
        sim_set_monitor(s, stop_after_budget, &t0, 1);
        sim_run(s, sc->stop_ps < FUZZ_RUN_SIM_PS ? sc->stop_ps : FUZZ_RUN_SIM_PS);
        r = out_open(scratch, OUT_FORCE, &o, e);
    }
    if (!r) {
        json_t *results = json_object();
        r = ops->report(st, s, o, results, e);
        json_decref(results);
    }
    out_abort(o);
    ops->fini(st);
    free(st);
    sim_destroy(s);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!scratch[0])
        snprintf(scratch, sizeof scratch, "build-fuzz/run-%ld.tmp", (long)getpid());
    return fuzz_one(data, size, run_bounded);
}
