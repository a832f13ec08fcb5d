/*
 * fuzz_scenario.c - libFuzzer target for the scenario loader.
 *
 * Input: optional lines "--set key=value" followed by YAML.  The target does
 * what `aisim check` does: parse, apply the overrides, bind the top-level
 * keys, configure the model (which binds its section and reads any data
 * file), emit the resolved scenario, and release everything.  A crash, a
 * sanitizer report or a leak is a bug; an error return is the expected
 * answer to bad input, and its message must be non-empty.
 *
 *   make fuzz FUZZ_SECONDS=60
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/model.h"
#include "aisim/netreg.h"
#include "aisim/sim.h"
#include "cli/scenario.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Work units (sim_poll) configure may spend on one input. */
#define FUZZ_CHECK_WORK 2000000

/* configure, then emit the resolved scenario. */
static int check_and_emit(scenario *sc, err *e)
{
    void *st = calloc(1, sc->model->state_size);
    sim *s = sim_create();
    model_env env = {.sim = s, .seed = (uint64_t)sc->seed, .base_dir = sc->base_dir,
                     .stop_ps = sc->stop_ps,
                     .net = net_registry_builtin()};
    sim_set_work_budget(s, FUZZ_CHECK_WORK);   /* configure's own long loops */
    int r = sc->model->configure(st, sc->section, sc->model->name, &env, e);
    sc->model->fini(st);
    free(st);
    sim_destroy(s);
    if (r == 0) {
        FILE *f = fopen("/dev/null", "w");
        if (cfg_emit(cfg_root(sc->doc), f, e) != 0)
            abort();
        fclose(f);
    }
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_one(data, size, check_and_emit);
}
