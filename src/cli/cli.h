/*
 * cli.h - the subcommands that live in their own files.
 */
#ifndef AISIM_CLI_CLI_H
#define AISIM_CLI_CLI_H

#include "aisim/err.h"

/* `aisim demo [--out DIR]`: returns an exit code. */
int cli_demo(int argc, char **argv);
/* The per-module parts of the demo: each prints one headline table and
 * returns 0, or an exit code. */
int demo_net(const char *out_root);
int demo_birp(const char *out_root);
int demo_fedenergy(const char *out_root);

/* `aisim bench [--quick]`: returns an exit code. */
int cli_bench(int argc, char **argv);
/* `aisim plot RUN_DIR [--format png|svg]`: returns an exit code. */
int cli_plot(int argc, char **argv);
/* Prints an error as one line (plus its origin under -v). */
void cli_print_error(const err *e);

#endif
