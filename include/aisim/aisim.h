/*
 * aisim.h - the embedding API: run a scenario from another program and
 * read its results as plain C values.
 *
 * This is the stable interface of libaisim (`pkg-config --cflags --libs
 * aisim`); the other headers in include/aisim/ describe the simulator's
 * modules and may change between versions.  Nothing here names a type of
 * a library aisim uses.
 *
 *     aisim_run *r = aisim_open("core/mm1");          // file or built-in example
 *     aisim_set(r, "queue.arrival.mean=2ms");          // as `--set`
 *     aisim_set_out(r, "/tmp/mm1");                    // run directory
 *     if (aisim_exec(r) != 0)
 *         fprintf(stderr, "%s\n", aisim_error(r));
 *     double w;
 *     if (aisim_result_number(r, "mean_wait_s", &w) == 0)
 *         printf("mean wait %g s\n", w);
 *     aisim_close(r);
 *
 * A run writes the same run directory `aisim run` would (summary.json,
 * the model's tables) and is deterministic: the same scenario, overrides
 * and seed give the same results.  Results are the scalars of
 * summary.json's "results", named by their path with dots between members
 * and element indices ("jobs.0.iteration_s").  Built-in examples find their
 * data files under $AISIM_HOME, else the installed share/aisim beside the
 * library or program, else the source tree aisim was built from
 * (aisim_data_dir()).
 *
 * Handles are independent: two may run one after the other in a process;
 * a handle is not to be used from two threads at once.
 */
#ifndef AISIM_AISIM_H
#define AISIM_AISIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of these headers; aisim_version() gives the library's. */
#define AISIM_VERSION_MAJOR 0
#define AISIM_VERSION_MINOR 1
#define AISIM_VERSION_PATCH 0
#define AISIM_VERSION_STRING "0.1.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define AISIM_VERSION_NUMBER \
    (AISIM_VERSION_MAJOR * 10000 + AISIM_VERSION_MINOR * 100 + AISIM_VERSION_PATCH)

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *aisim_version(void);

/* Where built-in examples look for their data files (see above). */
const char *aisim_data_dir(void);

typedef struct aisim_run aisim_run;

/* A run of `scenario`: a YAML file, or the name of a built-in example
 * (`aisim list`).  Nothing is read until aisim_exec().  Never NULL. */
aisim_run *aisim_open(const char *scenario);

/* Overrides one scenario key, "key.path=value" (value is YAML), as
 * `aisim run --set`.  Returns 0, or -1 if the assignment has no '='. */
int aisim_set(aisim_run *r, const char *assignment);

/* The seed of every random stream, as `--seed`. */
void aisim_set_seed(aisim_run *r, long long seed);

/* The run directory (default: out/<scenario name>, relative to the current
 * directory); it must be new, empty or an aisim run directory. */
void aisim_set_out(aisim_run *r, const char *dir);

/* Loads, checks and runs the scenario and writes its run directory.
 * Returns 0; 2 for a bad scenario or override (nothing is written); 1 if
 * the run failed.  aisim_error() then says why.  A handle runs once. */
int aisim_exec(aisim_run *r);

/* Validates the scenario and its overrides without running it (`aisim
 * check`); the same return values. */
int aisim_check(aisim_run *r);

/* The last error message ("" if none), e.g. "core/mm1: queue.load: ..."; it
 * lives as long as the handle. */
const char *aisim_error(const aisim_run *r);

/* The run directory written by aisim_exec(), or NULL. */
const char *aisim_run_dir(const aisim_run *r);

/* Results after a successful aisim_exec().  aisim_result_number() stores
 * the number at path in *v and returns 0, or returns -1 if there is none
 * (absent, not a number, or null: a quantity the run could not measure);
 * aisim_result_string() returns the string at path or NULL.  Booleans are
 * numbers 0 and 1. */
int aisim_result_number(const aisim_run *r, const char *path, double *v);
const char *aisim_result_string(const aisim_run *r, const char *path);

/* The paths of every numeric result, in summary.json's order: i from 0 to
 * aisim_result_count() - 1. */
size_t aisim_result_count(const aisim_run *r);
const char *aisim_result_name(const aisim_run *r, size_t i);

/* Frees the handle (the run directory stays). */
void aisim_close(aisim_run *r);

#ifdef __cplusplus
}
#endif

#endif
