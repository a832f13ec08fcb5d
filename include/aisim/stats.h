/*
 * stats.h - accumulators for results.
 *
 * stat_acc: count, mean, variance (Welford's update, numerically stable),
 * min and max.  batch_means: the mean of a correlated series with a 95%
 * confidence interval from non-overlapping batch means (Law & Kelton, ch. 9),
 * the honest error bar for a steady-state simulation output.  samples: a
 * growable array for exact percentiles.
 */
#ifndef AISIM_STATS_H
#define AISIM_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct stat_acc {
    uint64_t n;         /* observations */
    double mean;        /* running mean */
    double m2;          /* sum of squared deviations from the mean */
    double min, max;
} stat_acc;

void stat_init(stat_acc *a);
void stat_add(stat_acc *a, double x);
double stat_var(const stat_acc *a);     /* sample variance (n-1); 0 if n<2 */
double stat_sd(const stat_acc *a);
/* Half-width of the 95 % confidence interval of the mean, t(0.975, n-1) sd /
 * sqrt(n) (stat_t975); NAN for fewer than 2 observations. */
double stat_ci95(const stat_acc *a);

/* Batch means over a series whose length is not known in advance: keeps
 * `nbatch` batches and doubles the batch size when they are full. */
typedef struct batch_means {
    int nbatch;             /* target number of batches (e.g. 32) */
    int full;               /* completed batches */
    uint64_t size;          /* observations per batch */
    uint64_t in_cur;        /* observations in the current batch */
    double cur_sum;         /* sum over the current batch */
    double *sums;           /* sums of completed batches, 2*nbatch */
    stat_acc all;           /* every observation */
} batch_means;

void bm_init(batch_means *b, int nbatch);
void bm_fini(batch_means *b);
void bm_add(batch_means *b, double x);
double bm_mean(const batch_means *b);
/* The 97.5 % quantile of Student's t with df degrees of freedom (a 95 %
 * two-sided interval: mean +- t * sd / sqrt(n), df = n - 1), from the table
 * to df 30, then 40, 60, 120 and the normal's 1.960; NAN for df < 1. */
double stat_t975(int df);
/* Half-width of the 95% confidence interval of the mean (Student t over the
 * completed batches); NAN with fewer than 2 batches. */
double bm_halfwidth95(const batch_means *b);

typedef struct samples {
    double *v;
    size_t n, cap;
    int sorted;
} samples;

void samples_init(samples *s);
void samples_fini(samples *s);
void samples_add(samples *s, double x);
/* q in [0,1]; linear interpolation between order statistics (Hyndman & Fan
 * type 7, as numpy's default).  NAN if empty.  Sorts in place. */
double samples_quantile(samples *s, double q);

/* Jain's fairness index of n values: (sum x)^2 / (n * sum x^2). */
double jain_index(const double *x, size_t n);

#endif
