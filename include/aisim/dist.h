/*
 * dist.h - probability distributions configured from a scenario.
 *
 * A distribution is written in a scenario as a map with a `dist` key:
 *
 *   {dist: constant,    value: 1ms}
 *   {dist: uniform,     min: 1us, max: 3us}
 *   {dist: exponential, mean: 1ms}
 *   {dist: pareto,      shape: 1.5, mean: 100KB}     (or scale: the minimum)
 *   {dist: lognormal,   mean: 2ms, sigma: 0.5}       (sigma of the log)
 *   {dist: normal,      mean: 2ms, stddev: 0.3ms}    (clamped at 0 for
 *                                                     times and sizes)
 *   {dist: empirical,   file: data/websearch.cdf, unit: 1B}
 *
 * Parameters carry the unit of the quantity drawn (time, size, or none).
 * An empirical CDF file has lines "value cumulative_probability" (blank lines
 * and '#' comments ignored), values and probabilities non-decreasing,
 * probabilities in [0, 1], the last one 1; `unit` scales the values.
 * Sampling inverts the CDF with linear interpolation between points, as the
 * data-center workload generators of ns-3 and htsim do.
 */
#ifndef AISIM_DIST_H
#define AISIM_DIST_H

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/rng.h"

enum dist_kind { DIST_CONSTANT, DIST_UNIFORM, DIST_EXPONENTIAL, DIST_PARETO,
                 DIST_LOGNORMAL, DIST_NORMAL, DIST_EMPIRICAL };

/* What a distribution's values measure: decides the units of its keys. */
enum dist_quantity { DIST_Q_TIME, DIST_Q_SIZE, DIST_Q_NUMBER };

typedef struct ecdf {
    size_t n;           /* points */
    double *x;          /* values, base units, non-decreasing */
    double *p;          /* cumulative probabilities, non-decreasing, p[n-1]=1 */
} ecdf;

typedef struct dist {
    enum dist_kind kind;
    enum dist_quantity q;
    double a, b;        /* parameters in base units: see dist.c */
    ecdf *table;        /* DIST_EMPIRICAL; owned */
} dist;

/* Reads a distribution map.  `base_dir` resolves a relative `file`.
 * Inserts defaults into the tree like cfg_bind(). */
int dist_from_cfg(cfg_node *n, const char *path, enum dist_quantity q,
                  const char *base_dir, dist *d, err *e);
void dist_fini(dist *d);

double dist_sample(const dist *d, rng *r);
double dist_mean(const dist *d);
/* E[X^2], or INFINITY when it does not exist (Pareto with shape <= 2). */
double dist_moment2(const dist *d);
const char *dist_kind_name(enum dist_kind k);

/* Loads an empirical CDF file; values are multiplied by `unit`.  Errors name
 * "file:line". */
int ecdf_load(const char *path, double unit, ecdf **out, err *e);
void ecdf_free(ecdf *t);
double ecdf_sample(const ecdf *t, rng *r);
double ecdf_mean(const ecdf *t);

#endif
