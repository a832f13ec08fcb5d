/*
 * birp_data.h - BIRP's input data: latency-vs-batch profiles of DNN models on
 * edge accelerators, and request-arrival traces.
 *
 * A profile file is a CSV with a header naming at least the columns device,
 * model, batch_size, engine, latency_mean_ms and top1_pct (size_mb is read
 * when present); see data/edge_dnn_latency_profiles/README.md.  Rows of one
 * (device, model, engine) must come in strictly increasing batch size with
 * non-decreasing, positive latency; anything else is an error naming the file
 * and line.  Between measured batch sizes the latency is interpolated
 * linearly (the piecewise-linear profile of the BIRP formulation); past the
 * last point it is extrapolated with the last segment's slope.
 *
 * A trace file is a CSV whose first column is an arrival time, either
 * "YYYY-MM-DD HH:MM:SS[.fraction]" (the Azure LLM inference trace) or a
 * decimal number of seconds; an optional header line comes first.  Times must
 * be non-decreasing; a malformed or earlier time is an error naming the line.
 *
 * Cost: one pass over each file; memory linear in its rows.
 */
#ifndef AISIM_BIRP_DATA_H
#define AISIM_BIRP_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "aisim/err.h"

#define BIRP_PROFILE_MAX_PTS 16

typedef struct birp_curve {
    char device[64];                     /* "Jetson AGX Orin" */
    char model[32];                      /* "resnet50" */
    int npts;                            /* measured batch sizes */
    int batch[BIRP_PROFILE_MAX_PTS];     /* strictly increasing, >= 1 */
    double lat_s[BIRP_PROFILE_MAX_PTS];  /* mean batch latency, s, non-decreasing */
    double acc;                          /* top-1 accuracy in [0, 1] (at the first point) */
    double size_bytes;                   /* engine size, bytes (0 if unknown) */
} birp_curve;

typedef struct birp_profiles {
    size_t n;               /* curves */
    birp_curve *c;          /* owned */
} birp_profiles;

/* Loads the rows of `engine` from a profile CSV into p (zeroed by the
 * caller).  Returns 0, or a negative AISIM_E* code with e naming
 * "path:line" on bad input (p is then empty). */
int birp_profiles_load(const char *path, const char *engine, birp_profiles *p, err *e);
void birp_profiles_fini(birp_profiles *p);
/* The curve of (device, model), or NULL. */
const birp_curve *birp_profiles_find(const birp_profiles *p, const char *device,
                                     const char *model);
/* Latency of a batch of b (>= 1, may be fractional) requests, s. */
double birp_curve_latency_s(const birp_curve *c, double b);
/* Largest integer batch size b in [1, bmax] with latency <= lat_s (1 if
 * even b = 1 is slower). */
int birp_curve_max_batch(const birp_curve *c, double lat_s, int bmax);

typedef struct birp_trace {
    size_t n;               /* arrivals */
    int64_t *t_ps;          /* arrival times relative to the first, ps, non-decreasing; owned */
} birp_trace;

/* Loads arrival times.  Returns 0 or a negative code, e naming "path:line". */
int birp_trace_load(const char *path, birp_trace *t, err *e);
void birp_trace_fini(birp_trace *t);

#endif
