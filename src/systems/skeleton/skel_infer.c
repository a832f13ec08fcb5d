/*
 * skel_infer.c - traffic-skeleton inference (papers.md 1(b) step 3).
 *
 * The provider cannot see a tenant's parallelism, so it infers it from the
 * per-RNIC throughput series (1-s samples):
 *
 *  1. Features: a Short-Time Fourier Transform (Hann window of `win`
 *     samples every `hop`, real FFT through FFTW), real and imaginary parts
 *     of every bin but the mean, the series first normalised to unit
 *     energy.  Complex bins keep the phase, which tells pipeline stages
 *     apart (their bursts are the same shape, shifted).
 *  2. Groups: agglomerative clustering (average linkage) under Eq. 3 (two
 *     clusters with RNICs of one host never merge); the dendrogram is cut
 *     where Eq. 2 holds (n mod round(mean size) = 0) with the least size
 *     variance (Eq. 1), ties to the largest gap to the next merge; it is
 *     accepted when every group is within `size_tol` of the mean size
 *     (near-equal groups: one endpoint clustered with the wrong position
 *     need not throw the whole task back to the Basic list).  A group
 *     is one position in every DP replica: DP = round(mean size),
 *     TP x PP = N / DP.  Clustering runs per rail: the Basic list already
 *     confines traffic that crosses hosts to one rail, and it keeps the
 *     cost at O((N/8)^3) per rail instead of O(N^3).
 *  3. Order (skel_order.c): the pipeline is the chain through the groups
 *     whose members' series co-vary most with their neighbours' (both ends
 *     of a transfer carry it in the same seconds), exact over subsets up
 *     to 16 groups; stage 0 is the end whose traffic starts first after
 *     the iteration's quiet part (the series folded over the period).
 *  4. Skeleton: an endpoint's group peers, plus in each adjacent stage the
 *     member whose deviations from its group's mean series correlate best
 *     with the endpoint's own (both ends of an activation transfer carry
 *     it at once, and a replica's pipeline has its own jitter).
 */
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/skeleton.h"
#include "systems/skeleton/skel_order.h"

size_t skel_stft_features(const double *series, size_t len, size_t win, size_t hop, double *feat)
{
    if (win < 2 || hop < 1 || len < win)
        return 0;
    size_t nwin = (len - win) / hop + 1, nb = win / 2;
    size_t nf = nwin * nb * 2;
    if (!feat)
        return nf;
    double energy = 0;
    for (size_t t = 0; t < len; t++)
        energy += series[t] * series[t];
    double scale = energy > 0 ? 1.0 / sqrt(energy) : 1.0;
    double *in = fftw_malloc(win * sizeof *in);
    fftw_complex *out = fftw_malloc((win / 2 + 1) * sizeof *out);
    fftw_plan p = fftw_plan_dft_r2c_1d((int)win, in, out, FFTW_ESTIMATE);
    for (size_t w = 0; w < nwin; w++) {
        for (size_t t = 0; t < win; t++) {
            double hann = 0.5 - 0.5 * cos(2 * M_PI * (double)t / (double)win);
            in[t] = series[w * hop + t] * scale * hann;
        }
        fftw_execute(p);
        for (size_t b = 0; b < nb; b++) {
            feat[(w * nb + b) * 2] = out[b + 1][0];
            feat[(w * nb + b) * 2 + 1] = out[b + 1][1];
        }
    }
    fftw_destroy_plan(p);
    fftw_free(in);
    fftw_free(out);
    return nf;
}

/* ---- constrained agglomerative clustering ------------------------------- */

/* a cut into several groups must stand out from the next merge by this
 * factor to be preferred over one group */
#define SKEL_GAP_MIN 1.5

typedef struct level {
    int k;
    double var, gap;
    double dev;         /* largest |size - mean| / mean */
    int dp;
} level;

skel_clusters skel_cluster(const double *feat, size_t n, size_t dim, const int32_t *host,
                           double size_tol, int *label)
{
    skel_clusters res = {.k = (int)n, .dp = 1, .variance = 0, .ok = false};
    for (size_t i = 0; i < n; i++)
        label[i] = (int)i;
    if (n < 2)
        return res;
    double *D = malloc(n * n * sizeof *D);
    uint8_t *C = calloc(n * n, 1);
    int *size = malloc(n * sizeof *size);
    uint8_t *alive = malloc(n);
    int *ma = malloc(n * sizeof *ma), *mb = malloc(n * sizeof *mb);
    double *md = malloc(n * sizeof *md);
    level *lv = calloc(n + 1, sizeof *lv);
    for (size_t i = 0; i < n; i++) {
        size[i] = 1;
        alive[i] = 1;
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t d = 0; d < dim; d++) {
                double x = feat[i * dim + d] - feat[j * dim + d];
                s += x * x;
            }
            D[i * n + j] = sqrt(s);
            C[i * n + j] = i != j && host[i] == host[j];
        }
    }
    size_t merges = 0;
    while (merges < n - 1) {
        double best = INFINITY;
        long ba = -1, bb = -1;
        for (size_t a = 0; a < n; a++) {
            if (!alive[a])
                continue;
            for (size_t b = a + 1; b < n; b++)
                if (alive[b] && !C[a * n + b] && D[a * n + b] < best) {
                    best = D[a * n + b];
                    ba = (long)a;
                    bb = (long)b;
                }
        }
        if (ba < 0)
            break;
        size_t a = (size_t)ba, b = (size_t)bb;
        for (size_t x = 0; x < n; x++) {
            if (!alive[x] || x == a || x == b)
                continue;
            double d = (size[a] * D[a * n + x] + size[b] * D[b * n + x]) / (size[a] + size[b]);
            D[a * n + x] = D[x * n + a] = d;
            C[a * n + x] = C[x * n + a] = C[a * n + x] | C[b * n + x];
        }
        size[a] += size[b];
        alive[b] = 0;
        ma[merges] = (int)a;
        mb[merges] = (int)b;
        md[merges] = best;
        merges++;
        /* the partition after `merges` merges */
        int k = (int)(n - merges);
        double mean = (double)n / k, var = 0, dev = 0;
        for (size_t x = 0; x < n; x++)
            if (alive[x]) {
                var += (size[x] - mean) * (size[x] - mean);
                dev = fmax(dev, fabs(size[x] - mean) / mean);
            }
        lv[merges] = (level){.k = k, .var = var / k, .dev = dev, .dp = (int)lround(mean)};
    }
    /* gap of each level: next merge distance over this one's */
    int pick = -1, one = -1;
    for (size_t m = 1; m <= merges; m++) {
        /* the last level: one group (nothing left to merge: no evidence
         * either way), or the constraints stopped the merging (strong) */
        double next = m < merges ? md[m] : lv[m].k == 1 ? md[m - 1] : INFINITY;
        lv[m].gap = next / fmax(md[m - 1], 1e-12);
        if (lv[m].k * 2 > (int)n || n % (size_t)lv[m].dp != 0)
            continue;
        if (lv[m].k == 1) {
            one = (int)m;
            continue;
        }
        if (pick < 0 || lv[m].var < lv[pick].var - 1e-12 ||
            (fabs(lv[m].var - lv[pick].var) <= 1e-12 && lv[m].gap > lv[pick].gap))
            pick = (int)m;
    }
    /* one group (pure DP on the rail) unless a cut of near-equal groups
     * stands out */
    bool near_equal = pick > 0 && lv[pick].dev <= size_tol + 1e-12;
    if (one > 0 && (pick < 0 || !near_equal || lv[pick].gap < SKEL_GAP_MIN)) {
        pick = one;
        near_equal = true;
    }
    if (pick > 0) {
        /* replay the merges up to the cut with a union-find */
        int *par = malloc(n * sizeof *par);
        for (size_t i = 0; i < n; i++)
            par[i] = (int)i;
        for (int m = 0; m < pick; m++)
            par[mb[m]] = ma[m];
        for (size_t i = 0; i < n; i++) {
            int r = (int)i;
            while (par[r] != r)
                r = par[r];
            label[i] = r;
        }
        free(par);
        /* renumber by first member */
        int *map = malloc(n * sizeof *map);
        for (size_t i = 0; i < n; i++)
            map[i] = -1;
        int next = 0;
        for (size_t i = 0; i < n; i++) {
            if (map[label[i]] < 0)
                map[label[i]] = next++;
            label[i] = map[label[i]];
        }
        free(map);
        res.k = lv[pick].k;
        res.dp = lv[pick].dp;
        res.variance = lv[pick].var;
        res.ok = near_equal;
    }
    free(D);
    free(C);
    free(size);
    free(alive);
    free(ma);
    free(mb);
    free(md);
    free(lv);
    return res;
}

/* ---- burst timing -------------------------------------------------------- */

double skel_burst_phase(const double *series, size_t len, double period)
{
    double c = 0, s = 0;
    for (size_t t = 0; t < len; t++) {
        double a = 2 * M_PI * ((double)t + 0.5) / period;
        c += series[t] * cos(a);
        s += series[t] * sin(a);
    }
    double ph = atan2(s, c) / (2 * M_PI) * period;
    return ph < 0 ? ph + period : ph;
}

/* ---- the whole inference -------------------------------------------------- */

skel_clusters skel_infer(const double *series, size_t n, size_t len, const skel_ep *eps,
                         double period, size_t win, size_t hop, double size_tol,
                         uint32_t **off_out, uint32_t **idx_out, int *stage)
{
    skel_clusters first = {0};
    bool agree = true;
    size_t nf = skel_stft_features(series, len, win, hop, NULL);
    int32_t maxrail = 0;
    for (size_t i = 0; i < n; i++)
        if (eps[i].rail > maxrail)
            maxrail = eps[i].rail;
    int *group = malloc(n * sizeof *group);         /* global group id */
    size_t *mem = malloc(n * sizeof *mem);
    double *feat = malloc((nf ? nf : 1) * n * sizeof *feat);
    int32_t *hosts = malloc(n * sizeof *hosts);
    int *label = malloc(n * sizeof *label);
    double *resid = malloc(n * len * sizeof *resid);  /* series - group mean */
    int ngroups = 0;
    for (size_t i = 0; i < n; i++)
        stage[i] = 0;
    /* per rail: cluster, then order the groups */
    for (int32_t r = 0; r <= maxrail; r++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (eps[i].rail == r)
                mem[m++] = i;
        if (!m)
            continue;
        for (size_t a = 0; a < m; a++) {
            skel_stft_features(series + mem[a] * len, len, win, hop, feat + a * nf);
            hosts[a] = eps[mem[a]].host;
        }
        skel_clusters c = skel_cluster(feat, m, nf, hosts, size_tol, label);
        if (!first.k)
            first = c;
        else if (c.k != first.k || c.dp != first.dp || !c.ok)
            agree = false;
        /* group means; residuals for the neighbour matching */
        double *gm = malloc((size_t)c.k * len * sizeof *gm);
        for (int q = 0; q < c.k; q++) {
            double *sum = gm + (size_t)q * len;
            memset(sum, 0, len * sizeof *sum);
            int cnt = 0;
            for (size_t a = 0; a < m; a++)
                if (label[a] == q) {
                    cnt++;
                    for (size_t t = 0; t < len; t++)
                        sum[t] += series[mem[a] * len + t];
                }
            for (size_t t = 0; t < len; t++)
                sum[t] /= cnt;
            for (size_t a = 0; a < m; a++)
                if (label[a] == q)
                    for (size_t t = 0; t < len; t++)
                        resid[mem[a] * len + t] = series[mem[a] * len + t] - sum[t];
        }
        /* the pipeline: the chain of most co-varying groups, stage 0 at
         * the end whose traffic starts first (without a valid cut the
         * Basic list stays and the groups keep their numbers) */
        int *chain = malloc((size_t)c.k * sizeof *chain), *order = malloc((size_t)c.k * sizeof *order);
        int dir = 1;
        for (int q = 0; q < c.k; q++)
            chain[q] = q;
        if (c.ok) {
            double *S = malloc((size_t)c.k * (size_t)c.k * sizeof *S);
            skel_group_similarity(series, len, mem, m, hosts, label, c.k, S);
            skel_chain(S, c.k, chain);
            dir = skel_chain_direction(gm, c.k, len, period, chain, NULL);
            free(S);
        }
        for (int q = 0; q < c.k; q++)
            order[chain[q]] = dir > 0 ? q : c.k - 1 - q;
        for (size_t a = 0; a < m; a++) {
            stage[mem[a]] = order[label[a]];
            group[mem[a]] = ngroups + order[label[a]];
        }
        free(chain);
        free(order);
        free(gm);
        ngroups += c.k;
    }
    first.ok = first.ok && agree;
    /* skeleton: group peers + best-matching member of the adjacent stages */
    uint32_t *off = calloc(n + 1, sizeof *off);
    size_t cap = 16 * n + 16, used = 0;
    uint32_t *idx = malloc(cap * sizeof *idx);
    for (size_t i = 0; i < n; i++) {
        off[i] = (uint32_t)used;
        for (size_t j = 0; j < n; j++)
            if (j != i && group[j] == group[i]) {
                if (used == cap)
                    idx = realloc(idx, (cap *= 2) * sizeof *idx);
                idx[used++] = (uint32_t)j;
            }
        for (int dir = -1; dir <= 1; dir += 2) {
            long bestj = -1;
            double bv = -INFINITY;
            for (size_t j = 0; j < n; j++) {
                if (eps[j].rail != eps[i].rail || stage[j] != stage[i] + dir ||
                    eps[j].host == eps[i].host)
                    continue;
                /* the same replica shares its pipeline's jitter: its
                 * deviations from the group's mean line up */
                double v = 0;
                for (size_t t = 0; t < len; t++)
                    v += resid[i * len + t] * resid[j * len + t];
                if (bestj < 0 || v > bv) {
                    bv = v;
                    bestj = (long)j;
                }
            }
            if (bestj >= 0) {
                if (used == cap)
                    idx = realloc(idx, (cap *= 2) * sizeof *idx);
                idx[used++] = (uint32_t)bestj;
            }
        }
    }
    off[n] = (uint32_t)used;
    *off_out = off;
    *idx_out = idx;
    free(group);
    free(mem);
    free(feat);
    free(hosts);
    free(label);
    free(resid);
    return first;
}

/* ---- the iteration period --------------------------------------------------- */

/* Autocorrelation of x (mean removed, len samples) at lag L, normalised. */
static double acf(const double *x, size_t len, size_t L, double var)
{
    double s = 0;
    for (size_t t = 0; t + L < len; t++)
        s += x[t] * x[t + L];
    return s / ((double)(len - L) * var);
}

double skel_period_estimate(const double *series, size_t n, size_t len, double min_s,
                            double max_s)
{
    if (len < 4 || n == 0)
        return 0;
    double *x = calloc(len, sizeof *x), mean = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < len; t++)
            x[t] += series[i * len + t];
    for (size_t t = 0; t < len; t++)
        mean += x[t] / (double)len;
    for (size_t t = 0; t < len; t++) {
        x[t] -= mean;
        var += x[t] * x[t] / (double)len;
    }
    size_t lo = (size_t)fmax(2, ceil(min_s)), hi = (size_t)fmin(floor(max_s), (double)len / 2);
    double per = 0;
    if (var > 0 && lo + 1 < hi) {
        size_t nl = hi + 2;
        double *r = malloc(nl * sizeof *r), best = -INFINITY;
        for (size_t L = lo - 1; L <= hi + 1 && L < len; L++)
            r[L] = acf(x, len, L, var);
        for (size_t L = lo; L <= hi; L++)
            best = fmax(best, r[L]);
        size_t pick = 0;
        for (size_t L = lo; L <= hi && !pick; L++)
            if (r[L] >= r[L - 1] && r[L] >= r[L + 1] && r[L] >= 0.8 * best && r[L] > 0)
                pick = L;
        if (pick) {
            /* refine on ever further multiples: at m x P the error of P
             * is m times larger, so each step looks within one lag */
            per = (double)pick;
            for (size_t m = 2; (double)m * per + 2 < (double)len / 2; m *= 2) {
                size_t c = (size_t)lround((double)m * per), bl = c;
                double bv = -INFINITY;
                for (size_t L = c - 1; L <= c + 1; L++) {
                    double v = acf(x, len, L, var);
                    if (v > bv) {
                        bv = v;
                        bl = L;
                    }
                }
                double lo_v = acf(x, len, bl - 1, var), hi_v = acf(x, len, bl + 1, var);
                double den = lo_v - 2 * bv + hi_v, d = 0;
                if (den < 0)
                    d = fmax(-0.5, fmin(0.5, 0.5 * (lo_v - hi_v) / den));
                per = ((double)bl + d) / (double)m;
            }
        }
        free(r);
    }
    free(x);
    return per;
}
