/*
 * skel_detect.c - SkeletonHunter's anomaly detectors (papers.md 1(b),
 * "Anomaly detection"; defaults 1(f)).
 *
 *  - Short-term: a pair's 30-s window is summarised by seven numbers (p25,
 *    p50, p75, min, mean, std, max); its Local Outlier Factor (Breunig et
 *    al., SIGMOD 2000, in the novelty form: neighbours of the query are
 *    taken from the look-back windows, whose own reachability densities are
 *    computed among themselves) against the windows of the 5-minute
 *    look-back flags it when above 1.5 and the window is also more than
 *    2 sd (root mean square over the seven dimensions, each scaled by the
 *    look-back's sd) from every earlier window, i.e. it cannot be clustered
 *    with any of them.
 *  - Long-term: healthy latency is log-normal; mu and sigma of ln x fitted
 *    on one period are tested with a Z-test on the mean of ln x of a later
 *    period; a rejection at alpha counts only with a median shift of at
 *    least `min_shift`, so that huge samples do not flag trivia.
 *
 * Cost: LOF is O(n^2 dim) for n look-back windows (n = 10).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/skeleton.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *s, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return s[n - 1];
    return s[i] + (pos - (double)i) * (s[i + 1] - s[i]);
}

void skel_summary(double *x, size_t n, double out[SKEL_NSTAT])
{
    qsort(x, n, sizeof *x, cmp_double);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (x[i] - mean) * (x[i] - mean);
    out[0] = pct(x, n, 0.25);
    out[1] = pct(x, n, 0.5);
    out[2] = pct(x, n, 0.75);
    out[3] = x[0];
    out[4] = mean;
    out[5] = sqrt(sq / (double)n);
    out[6] = x[n - 1];
}

static double dist(const double *a, const double *b, size_t dim)
{
    double s = 0;
    for (size_t d = 0; d < dim; d++)
        s += (a[d] - b[d]) * (a[d] - b[d]);
    return sqrt(s);
}

/* The k nearest rows of ref to point p (skipping row `self`, -1 for none):
 * their indices into nb and the k-distance returned. */
static double knn(const double *ref, size_t n, size_t dim, const double *p, long self, size_t k,
                  size_t *nb)
{
    double bestd[64];
    size_t cnt = 0;
    for (size_t j = 0; j < n; j++) {
        if ((long)j == self)
            continue;
        double d = dist(p, ref + j * dim, dim);
        size_t pos = cnt < k ? cnt++ : k;
        if (pos == k && d >= bestd[k - 1])
            continue;
        if (pos == k)
            pos = k - 1;
        while (pos > 0 && bestd[pos - 1] > d) {
            bestd[pos] = bestd[pos - 1];
            nb[pos] = nb[pos - 1];
            pos--;
        }
        bestd[pos] = d;
        nb[pos] = j;
    }
    return bestd[cnt - 1];
}

#define LRD_FLOOR 1e-12

double skel_lof(const double *ref, size_t n, size_t dim, const double *q, size_t k)
{
    if (n < 2)
        return 1.0;
    if (k > n - 1)
        k = n - 1;
    if (k > 64)
        k = 64;
    double kd[64], lrd[64];
    size_t nb[64];
    size_t m = n < 64 ? n : 64;
    for (size_t i = 0; i < m; i++)
        kd[i] = knn(ref, m, dim, ref + i * dim, (long)i, k, nb);
    for (size_t i = 0; i < m; i++) {
        knn(ref, m, dim, ref + i * dim, (long)i, k, nb);
        double s = 0;
        for (size_t j = 0; j < k; j++)
            s += fmax(kd[nb[j]], dist(ref + i * dim, ref + nb[j] * dim, dim));
        lrd[i] = 1.0 / fmax(s / (double)k, LRD_FLOOR);
    }
    knn(ref, m, dim, q, -1, k, nb);
    double s = 0, l = 0;
    for (size_t j = 0; j < k; j++) {
        s += fmax(kd[nb[j]], dist(q, ref + nb[j] * dim, dim));
        l += lrd[nb[j]];
    }
    double lrdq = 1.0 / fmax(s / (double)k, LRD_FLOOR);
    return (l / (double)k) / lrdq;
}

bool skel_far_from_all(const double *ref, size_t n, size_t dim, const double *q, double nsd,
                       double floor_sd)
{
    double sd[16];
    if (dim > 16)
        dim = 16;
    for (size_t d = 0; d < dim; d++) {
        double m = 0, v = 0;
        for (size_t i = 0; i < n; i++)
            m += ref[i * dim + d];
        m /= (double)(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            v += (ref[i * dim + d] - m) * (ref[i * dim + d] - m);
        sd[d] = fmax(sqrt(v / (double)(n ? n : 1)), floor_sd);
    }
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t d = 0; d < dim; d++) {
            double z = (q[d] - ref[i * dim + d]) / sd[d];
            s += z * z;
        }
        if (sqrt(s / (double)dim) <= nsd)
            return false;
    }
    return true;
}

bool skel_short_term(const double *ref, size_t n, const double *q, size_t k, double lof_max,
                     double nsd, double floor_sd)
{
    return skel_lof(ref, n, SKEL_NSTAT, q, k) > lof_max &&
           skel_far_from_all(ref, n, SKEL_NSTAT, q, nsd, floor_sd);
}

void skel_lognorm_fit(const double *x, size_t n, double *mu, double *sigma)
{
    double s = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        s += log(x[i]);
    double m = s / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (log(x[i]) - m) * (log(x[i]) - m);
    *mu = m;
    *sigma = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
}

static double skel_ztest_mean(double mean_ln, size_t n, double mu, double sigma, double *z)
{
    double zz = (mean_ln - mu) / (fmax(sigma, 1e-12) / sqrt((double)n));
    if (z)
        *z = zz;
    return erfc(fabs(zz) / sqrt(2.0));
}

double skel_ztest(const double *x, size_t n, double mu, double sigma, double *z)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += log(x[i]);
    return skel_ztest_mean(s / (double)n, n, mu, sigma, z);
}

bool skel_long_term_mean(double mean_ln, size_t n, double mu, double sigma, double alpha,
                         double min_shift)
{
    double p = skel_ztest_mean(mean_ln, n, mu, sigma, NULL);
    return p < alpha && fabs(exp(mean_ln - mu) - 1.0) >= min_shift;
}

bool skel_long_term(const double *x, size_t n, double mu, double sigma, double alpha,
                    double min_shift)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += log(x[i]);
    return skel_long_term_mean(s / (double)n, n, mu, sigma, alpha, min_shift);
}
