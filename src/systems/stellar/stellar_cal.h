/*
 * stellar_cal.h - the pin calibration file: what `aisim calibrate pin`
 * measures with the real pinning library (src/real/pin) and the Stellar
 * start-up model reads (`stellar.pin_calibration: FILE`).
 *
 * The file is YAML, one map `pin_calibration:`; every cost is the median
 * of `repeats` repetitions on fresh memory, with the smallest and largest
 * (`_min`, `_max`).  It is read through the scenario schema machinery, so a
 * malformed file is reported as "FILE:line:column: pin_calibration.key:
 * expected ..., found ...".  Every key is required (no defaults); each
 * median must lie between its min and max; the fault costs are > 0 when
 * userfaultfd is "available" and 0 otherwise.
 *
 *   pin_calibration:
 *     block: 2MiB             # on-demand granularity measured
 *     size: 1GiB              # region pinned in each repetition
 *     repeats: 5              # repetitions (fresh memory each)
 *     userfaultfd: available  # or "unavailable: REASON"
 *     pin_per_gib: 5.7s       # full pinning (mlock of the region), per GiB
 *     block_pin: 2.1ms        # on demand: first pin_touch of one block
 *     fault_pin: 1.0ms        # on first touch: a uffd fault pinning one block
 *     page_fault: 12us        # on first touch with 4 KiB blocks: one fault
 *     repin: 40us             # re-pin of a block evicted from the map cache
 *     lookup: 30ns            # a touch of a pinned block (map-cache hit)
 *     unpin_per_gib: 130ms    # munlock, per GiB
 *     ready_on_demand: 40us   # on-demand start: map (+ register) the region
 *     host: ...               # free text: where and when it was measured
 * and pin_per_gib_min, pin_per_gib_max, ... for every cost.
 */
#ifndef AISIM_STELLAR_CAL_H
#define AISIM_STELLAR_CAL_H

#include <stdint.h>
#include <stdio.h>

#include "aisim/err.h"

/* The costs, in file order; each has a median, a min and a max. */
enum {
    STELLAR_CAL_PIN_PER_GIB,    /* full pinning, per GiB */
    STELLAR_CAL_BLOCK_PIN,      /* first pin_touch of one block */
    STELLAR_CAL_FAULT_PIN,      /* uffd first touch of one block (0: no uffd) */
    STELLAR_CAL_PAGE_FAULT,     /* uffd fault with page-sized blocks (0: no uffd) */
    STELLAR_CAL_REPIN,          /* re-pin of an evicted block */
    STELLAR_CAL_LOOKUP,         /* map-cache hit */
    STELLAR_CAL_UNPIN_PER_GIB,  /* munlock, per GiB */
    STELLAR_CAL_READY_ON_DEMAND,/* on-demand start of the region */
    STELLAR_CAL_NCOSTS
};
extern const char *const stellar_cal_names[STELLAR_CAL_NCOSTS];

typedef struct stellar_cal {
    int64_t block_bytes;        /* block size measured, a power of two */
    int64_t max_bytes;          /* region pinned in each repetition (key `size`) */
    int64_t repeats;            /* repetitions */
    int64_t med_ps[STELLAR_CAL_NCOSTS], min_ps[STELLAR_CAL_NCOSTS], max_ps[STELLAR_CAL_NCOSTS];
    /* the medians under their old names, which the start-up model reads */
    int64_t pin_per_gib_ps, block_pin_ps, lookup_ps, unpin_per_gib_ps, repin_ps;
    char uffd[512];             /* "available" or "unavailable: REASON" */
    char host[512];             /* free text (machine, kernel, date) */
} stellar_cal;

/* Reads FILE into *cal.  Errors (file missing, not YAML, unknown, missing or
 * malformed keys, block size not a power of two, a median outside its
 * range, fault costs that disagree with `userfaultfd`) return a negative
 * AISIM_E* with a one-line message naming FILE:line:column. */
int stellar_cal_load(const char *path, stellar_cal *cal, err *e);

/* Writes *cal (med/min/max arrays, block, size, repeats, uffd, host) in the
 * format stellar_cal_load reads, with a comment header `comment` (may be
 * NULL). */
int stellar_cal_write(FILE *f, const stellar_cal *cal, const char *comment);

#endif
