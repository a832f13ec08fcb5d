/*
 * stats.c - running moments, batch means with confidence intervals, and
 * exact percentiles.
 */
#include "aisim/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

void stat_init(stat_acc *a)
{
    memset(a, 0, sizeof *a);
    a->min = INFINITY;
    a->max = -INFINITY;
}

void stat_add(stat_acc *a, double x)
{
    a->n++;
    double d = x - a->mean;
    a->mean += d / (double)a->n;
    a->m2 += d * (x - a->mean);
    if (x < a->min)
        a->min = x;
    if (x > a->max)
        a->max = x;
}

double stat_var(const stat_acc *a)
{
    return a->n < 2 ? 0.0 : a->m2 / (double)(a->n - 1);
}

double stat_sd(const stat_acc *a) { return sqrt(stat_var(a)); }

double stat_ci95(const stat_acc *a)
{
    return a->n < 2 ? NAN : stat_t975((int)a->n - 1) * stat_sd(a) / sqrt((double)a->n);
}

void bm_init(batch_means *b, int nbatch)
{
    memset(b, 0, sizeof *b);
    b->nbatch = nbatch < 2 ? 2 : nbatch;
    b->size = 1;
    b->sums = xcalloc((size_t)b->nbatch * 2, sizeof *b->sums);
    stat_init(&b->all);
}

void bm_fini(batch_means *b)
{
    free(b->sums);
    b->sums = NULL;
}

void bm_add(batch_means *b, double x)
{
    stat_add(&b->all, x);
    b->cur_sum += x;
    if (++b->in_cur < b->size)
        return;
    b->sums[b->full++] = b->cur_sum;
    b->cur_sum = 0;
    b->in_cur = 0;
    if (b->full == 2 * b->nbatch) {         /* merge pairs: batches double */
        for (int i = 0; i < b->nbatch; i++)
            b->sums[i] = b->sums[2 * i] + b->sums[2 * i + 1];
        b->full = b->nbatch;
        b->size *= 2;
    }
}

double bm_mean(const batch_means *b) { return b->all.n ? b->all.mean : NAN; }

double stat_t975(int df)
{
    if (df < 1)
        return NAN;
    static const double t[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                               2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                               2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                               2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1)
        return NAN;
    if (df <= 30)
        return t[df];
    if (df <= 40) return 2.021;
    if (df <= 60) return 2.000;
    if (df <= 120) return 1.980;
    return 1.960;
}

double bm_halfwidth95(const batch_means *b)
{
    int k = b->full;
    if (k < 2)
        return NAN;
    stat_acc a;
    stat_init(&a);
    for (int i = 0; i < k; i++)
        stat_add(&a, b->sums[i] / (double)b->size);
    return stat_ci95(&a);
}

void samples_init(samples *s) { memset(s, 0, sizeof *s); }

void samples_fini(samples *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

void samples_add(samples *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = x;
    s->sorted = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double samples_quantile(samples *s, double q)
{
    if (s->n == 0)
        return NAN;
    if (!s->sorted) {
        qsort(s->v, s->n, sizeof *s->v, cmp_double);
        s->sorted = 1;
    }
    if (q <= 0)
        return s->v[0];
    if (q >= 1)
        return s->v[s->n - 1];
    double h = (double)(s->n - 1) * q;
    size_t i = (size_t)h;
    double f = h - (double)i;
    return i + 1 < s->n ? s->v[i] + f * (s->v[i + 1] - s->v[i]) : s->v[i];
}

double jain_index(const double *x, size_t n)
{
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    return n == 0 || s2 == 0 ? NAN : s * s / ((double)n * s2);
}
