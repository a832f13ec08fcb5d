/*
 * stellar_cal.h - the pin calibration file: what `aisim calibrate pin`
 * measures with the real pinning library (src/real/pin) and the Stellar
 * start-up model reads (`stellar.pin_calibration: FILE`).
 *
 * The file is YAML, one map `pin_calibration:` with times per GiB and per
 * block; it is read through the scenario schema machinery, so a malformed
 * file is reported as "FILE:line:column: pin_calibration.key: expected ...,
 * found ...".
 *
 *   pin_calibration:
 *     block: 2MiB             # on-demand granularity measured
 *     pin_per_gib: 2.9s       # full pinning of fresh memory, per GiB
 *     block_pin: 1.4ms        # on-demand: first touch of one block
 *     lookup: 6ns             # on-demand: a touch of a pinned block
 *     unpin_per_gib: 40ms     # munlock, per GiB
 *     max_size: 1GiB          # largest region measured
 *     host: ...               # free text: where and when it was measured
 */
#ifndef AISIM_STELLAR_CAL_H
#define AISIM_STELLAR_CAL_H

#include <stdint.h>
#include <stdio.h>

#include "aisim/err.h"

typedef struct stellar_cal {
    int64_t block_bytes;        /* block size measured, a power of two */
    int64_t pin_per_gib_ps;     /* full pinning, per GiB */
    int64_t block_pin_ps;       /* first touch of one block */
    int64_t lookup_ps;          /* map-cache hit */
    int64_t unpin_per_gib_ps;   /* unpinning, per GiB */
    int64_t max_bytes;          /* largest region measured */
    char host[512];             /* free text (machine, kernel, date) */
} stellar_cal;

/* Reads FILE into *cal.  Errors (file missing, not YAML, unknown or
 * malformed keys, block size not a power of two) return a negative AISIM_E*
 * with a one-line message naming FILE:line:column. */
int stellar_cal_load(const char *path, stellar_cal *cal, err *e);

/* Writes *cal in the format stellar_cal_load reads, with a comment header
 * `comment` (may be NULL). */
int stellar_cal_write(FILE *f, const stellar_cal *cal, const char *comment);

#endif
