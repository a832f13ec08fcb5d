/*
 * cli.h - the subcommands that live in their own files.
 */
#ifndef AISIM_CLI_CLI_H
#define AISIM_CLI_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "aisim/err.h"

/* `aisim demo [--out DIR]`: returns an exit code. */
int cli_demo(int argc, char **argv);
/* Runs one scenario of the demo into `dir` and returns its summary in
 * *sum (decref it) and 0; on failure prints the error and returns the exit
 * code. */
int demo_run(const char *scenario, const char *dir, const char *const *sets, int nsets,
             json_t **sum);
/* Prints "  $ aisim VERB EXAMPLE ARGS": how to reproduce a table; an
 * argument starting with '-' is printed as is (--vary k=..., --seeds 1..5),
 * any other is a --set assignment. */
void demo_cite(const char *verb, const char *example, const char *const *args, int nargs);
/* The number at results.key (and .sub, if not NULL), or NAN. */
double demo_num(json_t *sum, const char *key, const char *sub);

/* The per-module parts of the demo: each prints one headline table and
 * returns 0, or an exit code. */
int demo_net(const char *out_root);
int demo_birp(const char *out_root);
int demo_fedenergy(const char *out_root);
int demo_stellar(const char *out_root);
int demo_collective(const char *out_root);
int demo_sdtcp(const char *out_root);
int demo_training(const char *out_root);
int demo_skeleton(const char *out_root);

/* `aisim calibrate pin [...]`: measures the real pinning library and writes
 * the Stellar pin calibration file; returns an exit code. */
int cli_calibrate(int argc, char **argv);
/* `aisim bench [--quick]`: returns an exit code. */
int cli_bench(int argc, char **argv);
/* Writes the names of every bench case, in table order, as lines that start
 * with `indent` and end before column `width` (for `aisim bench --help`). */
void cli_bench_list_cases(FILE *f, const char *indent, size_t width);
/* `aisim sweep ...`: returns an exit code, or CLI_HELP for --help (the help
 * text lives with the others in main.c). */
#define CLI_SWEEP_USAGE                                                                     \
    "aisim sweep SCENARIO --vary KEY=V1,V2,... [--vary KEY=...]... [--seeds N|A..B]\n"      \
    "                   [--out DIR] [--force] [--set key.path=value]... [-q] [--jobs N]"
enum { CLI_HELP = -1 };
int cli_sweep(int argc, char **argv);
/* `aisim plot RUN_DIR [--format png|svg]`: returns an exit code. */
int cli_plot(int argc, char **argv);
/* What `aisim run` prints (report.c): the run directory, the model's
 * headlines, the counters (all: every scalar, nested ones too) and the
 * table named by results.print. */
struct model_headline;
void cli_print_results(FILE *f, const char *dir, json_t *sum, int all);
/* The headlines found in results, under the line "title:". */
void cli_print_headlines(FILE *f, const struct model_headline *hl, json_t *results,
                         const char *title);
void cli_print_counters(FILE *f, const struct model_headline *hl, json_t *results, int all);
/* Calls fn(ctx, path, x) for every scalar x under v (null left out), path
 * the members from v joined with dots after `path`, array elements as
 * "[i]" (bracket_index) or ".i". */
void cli_json_scalars(json_t *v, const char *path, int bracket_index,
                      void (*fn)(void *ctx, const char *path, json_t *v), void *ctx);
/* v in unit with an SI prefix and 4 significant digits ("381.2 us",
 * "17.18 Tbit/s"); unit "%": a fraction in per cent; "" or NULL: a plain
 * number; seconds take no prefix above one. */
void cli_fmt_quantity(char *b, size_t n, double v, const char *unit);
/* A wall-clock duration for a progress line: "42s", "11m05s", "3h20m";
 * rounded before it is split, so never "60s" or "60m"; "?" if s is not a
 * finite non-negative number. */
void cli_fmt_eta(char *b, size_t n, double s);

/* A --set argument without '=' (`--set k v`): writes the message, naming
 * the fix with the next argument when there is one, into msg and returns
 * 1; 0 if arg is an assignment. */
int cli_bad_set(const char *arg, const char *next, char *msg, size_t n);

/* Prints an error as one line (plus its origin under -v). */
void cli_print_error(const err *e);

#endif
