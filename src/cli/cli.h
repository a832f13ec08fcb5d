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
/* The number at results.key (and .sub, if not NULL), or NAN. */
double demo_num(json_t *sum, const char *key, const char *sub);

/* The per-module parts of the demo: each prints one headline table and
 * returns 0, or an exit code. */
int demo_net(const char *out_root);
int demo_birp(const char *out_root);
int demo_fedenergy(const char *out_root);
int demo_stellar(const char *out_root);

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
/* Prints an error as one line (plus its origin under -v). */
void cli_print_error(const err *e);

#endif
