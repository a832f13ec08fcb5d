/*
 * run.h - running a scenario end to end: load, configure, simulate, report,
 * and write the run directory atomically.  The CLI and the tests call this.
 */
#ifndef AISIM_CLI_RUN_H
#define AISIM_CLI_RUN_H

#include <jansson.h>

#include "aisim/err.h"

typedef struct run_opts {
    const char *scenario;       /* file path or embedded example name */
    const char *out_dir;        /* NULL: out/<scenario name> */
    const char *seed;           /* --seed, or NULL */
    const char *const *sets;    /* --set assignments */
    int nsets;
    int progress;               /* 1: progress line on stderr; 0: quiet */
    int check_only;             /* validate, do not run */
    int force;                  /* write into a non-empty foreign directory (OUT_FORCE) */
} run_opts;

/* summary.json's schema_version. */
#define AISIM_SUMMARY_SCHEMA 1

/* How summary.json and sweep.json are written (aisim plot rewrites a
 * summary with the same flags, so its numbers stay as they were). */
#define RUN_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))

/* Exit codes of the aisim command. */
enum { EXIT_OK = 0, EXIT_RUN_FAILED = 1, EXIT_BAD_INPUT = 2 };

/* Runs (or checks) a scenario.  On success returns 0 and, if summary is not
 * NULL, a new reference to the summary object; if out_dir_used is not NULL
 * it receives the run directory (malloc'ed).  On failure returns a negative
 * code, fills e and leaves no complete-looking output. */
int run_scenario(const run_opts *o, json_t **summary, char **out_dir_used, err *e);

/* Maps a run_scenario() result to an exit code. */
int run_exit_code(int rc);

/* Installs sa for sig and returns the old action in *old, unless sig is
 * ignored (as under nohup, or a shell's `trap '' SIG`): that is kept. */
struct sigaction;
void run_catch_signal(int sig, const struct sigaction *sa, struct sigaction *old);

#endif
