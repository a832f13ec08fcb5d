/*
 * out.h - the run directory.
 *
 * A run writes one directory: summary.json, CSV tables, scenario.yaml (the
 * resolved scenario) and run.log.  Every file is written under a temporary
 * name no other process uses (".NAME.PID-N.part") and renamed when the run
 * completes, summary.json last: a run that fails or is interrupted never
 * leaves a file that looks complete, and out_abort() removes the temporaries
 * (and the directory, if this run created it and nothing else is in it).
 *
 * An aisim directory is recognised by its marker file OUT_MARKER (written
 * by out_open(); a summary.json of aisim's, with "aisim_version" and
 * "files", counts too, for directories written before the marker existed).
 * out_open() refuses an existing non-empty directory that is not one,
 * unless given OUT_FORCE, and holds an advisory lock (flock on the marker)
 * until the out is committed or aborted: a second run into the same
 * directory fails at once.  Files an earlier run listed in its summary.json
 * are removed when the new run commits, but only in an aisim directory and
 * only regular files; nothing else is ever deleted.
 */
#ifndef AISIM_OUT_H
#define AISIM_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "aisim/err.h"

typedef struct out out;

#define OUT_MARKER ".aisim"
#define OUT_SUMMARY "summary.json"

enum { OUT_FORCE = 1 };     /* out_open(): accept a non-empty foreign directory */

/* Creates (mkdir -p) or reuses directory `dir` and locks it.  Errors: an
 * empty name or a foreign non-empty directory without OUT_FORCE (AISIM_EINVAL,
 * a usage error), a directory locked by another run (AISIM_ERUN), I/O
 * (AISIM_EIO). */
int out_open(const char *dir, unsigned flags, out **o, err *e);

/* Opens a temporary for DIR/name for writing; the out owns the FILE.  Opening the same
 * name twice returns the same stream. */
FILE *out_file(out *o, const char *name, err *e);

const char *out_dir(const out *o);

/* Name of the i-th file opened, or NULL past the end. */
const char *out_name(const out *o, size_t i);

/* Closes every file, checks for write errors and renames each into place,
 * summary.json last.  Frees o. */
int out_commit(out *o, err *e);

/* Closes and removes every temporary; removes the directory if created by
 * out_open() and now empty.  Frees o.  NULL is fine. */
void out_abort(out *o);

/* Writes `v` with the shortest "%.*g" that reads back the same double, for
 * CSV and JSON fields (deterministic, locale-independent). */
void out_fmt_double(char *buf, size_t len, double v);

/* Sets o[key] to v, or to null when v is not finite (JSON has no NaN). */
void out_json_num(json_t *o, const char *key, double v);

#endif
