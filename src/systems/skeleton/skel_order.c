/*
 * skel_order.c - pipeline-stage order of a rail's groups (skel_order.h).
 *
 * Neighbours: a member of stage s shares every transfer it carries with a
 * member of s-1 or s+1 of its own replica (both ends of an activation or
 * gradient send carry it in the same seconds), and none with a member two
 * stages away.  So the groups' similarity is the co-variation of their
 * members' 1-s series, and the pipeline is the chain through the groups
 * that maximises the similarity of neighbours.  Direction: stage 0 starts
 * an iteration (its forward passes feed the others), so the onset of a
 * group's traffic after the iteration's quiet part grows along the chain.
 *
 * Why not the phase of each group's bursts (the earlier method): that
 * phase mixes the pipeline traffic with the gradient all-reduce, and in
 * 1F1B the ends of the pipeline carry half the activations plus the
 * embedding and head gradients, so their centroid moves toward the
 * all-reduce and, at PP 8, they land in the middle of the order.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/skeleton.h"
#include "systems/skeleton/skel_order.h"

/* ---- similarity ------------------------------------------------------------ */

void skel_group_similarity(const double *series, size_t len, const size_t *mem, size_t m,
                           const int32_t *host, const int *label, int k, double *S)
{
    /* rows summed over SKEL_SIM_WINDOW consecutive samples, z-scored: the
     * correlation is then a dot product */
    size_t w = SKEL_SIM_WINDOW, nl = len >= w ? len - w + 1 : 0;
    double *z = xmalloc((m ? m : 1) * (nl ? nl : 1) * sizeof *z);
    for (size_t x = 0; x < m; x++) {
        const double *s = series + mem[x] * len;
        double *r = z + x * nl, mu = 0, var = 0;
        for (size_t t = 0; t < nl; t++) {
            r[t] = 0;
            for (size_t q = 0; q < w; q++)
                r[t] += s[t + q];
            mu += r[t];
        }
        mu /= (double)(nl ? nl : 1);
        for (size_t t = 0; t < nl; t++)
            var += (r[t] - mu) * (r[t] - mu);
        double inv = var > 0 ? 1.0 / sqrt(var) : 0;     /* constant: all zero */
        for (size_t t = 0; t < nl; t++)
            r[t] = (r[t] - mu) * inv;
    }
    /* best[x * k + g]: x's largest correlation with a member of g */
    double *best = xmalloc((m ? m : 1) * (size_t)k * sizeof *best);
    for (size_t i = 0; i < m * (size_t)k; i++)
        best[i] = -INFINITY;
    for (size_t x = 0; x < m; x++)
        for (size_t y = x + 1; y < m; y++) {
            if (host[x] == host[y])
                continue;
            double c = 0;
            for (size_t t = 0; t < nl; t++)
                c += z[x * nl + t] * z[y * nl + t];
            double *bx = &best[x * (size_t)k + label[y]], *by = &best[y * (size_t)k + label[x]];
            if (c > *bx)
                *bx = c;
            if (c > *by)
                *by = c;
        }
    /* mean over a's members, then symmetrised */
    double *sum = xcalloc((size_t)k * (size_t)k, sizeof *sum);
    int *cnt = xcalloc((size_t)k * (size_t)k, sizeof *cnt);
    for (size_t x = 0; x < m; x++)
        for (int g = 0; g < k; g++)
            if (isfinite(best[x * (size_t)k + g])) {
                sum[label[x] * k + g] += best[x * (size_t)k + g];
                cnt[label[x] * k + g]++;
            }
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
            double sab = cnt[a * k + b] ? sum[a * k + b] / cnt[a * k + b] : 0;
            double sba = cnt[b * k + a] ? sum[b * k + a] / cnt[b * k + a] : 0;
            S[a * k + b] = 0.5 * (sab + sba);
        }
    free(z);
    free(best);
    free(sum);
    free(cnt);
}

/* ---- the chain --------------------------------------------------------------- */

static double chain_sum(const double *S, int k, const int *order)
{
    double s = 0;
    for (int i = 0; i + 1 < k; i++)
        s += S[order[i] * k + order[i + 1]];
    return s;
}

/* Held-Karp for paths: best[mask * k + v] = the best chain through the
 * groups of mask ending at v. */
static double chain_exact(const double *S, int k, int *order)
{
    size_t full = (size_t)1 << k;
    double *best = xmalloc(full * (size_t)k * sizeof *best);
    int8_t *from = xmalloc(full * (size_t)k * sizeof *from);
    for (size_t i = 0; i < full * (size_t)k; i++)
        best[i] = -INFINITY;
    for (int v = 0; v < k; v++) {
        best[((size_t)1 << v) * (size_t)k + (size_t)v] = 0;
        from[((size_t)1 << v) * (size_t)k + (size_t)v] = -1;
    }
    for (size_t mask = 1; mask < full; mask++)
        for (int v = 0; v < k; v++) {
            double cur = best[mask * (size_t)k + (size_t)v];
            if (cur == -INFINITY)
                continue;
            for (int w = 0; w < k; w++) {
                if (mask & ((size_t)1 << w))
                    continue;
                size_t m2 = (mask | ((size_t)1 << w)) * (size_t)k + (size_t)w;
                double nv = cur + S[v * k + w];
                if (nv > best[m2]) {
                    best[m2] = nv;
                    from[m2] = (int8_t)v;
                }
            }
        }
    int end = 0;
    for (int v = 1; v < k; v++)
        if (best[(full - 1) * (size_t)k + (size_t)v] > best[(full - 1) * (size_t)k + (size_t)end])
            end = v;
    double total = best[(full - 1) * (size_t)k + (size_t)end];
    size_t mask = full - 1;
    for (int i = k - 1, v = end; i >= 0; i--) {
        order[i] = v;
        int prev = from[mask * (size_t)k + (size_t)v];
        mask &= ~((size_t)1 << v);
        v = prev;
    }
    free(best);
    free(from);
    return total;
}

/* Greedy chain from `start`, growing at whichever end gains more, then
 * 2-opt: reversing order[i..j] swaps the edges (i-1, i) and (j, j+1) for
 * (i-1, j) and (i, j+1). */
static void chain_greedy(const double *S, int k, int start, int *order, unsigned char *used)
{
    memset(used, 0, (size_t)k);
    int *buf = xmalloc(2 * (size_t)k * sizeof *buf);
    int lo = k, hi = k;         /* chain = buf[lo..hi] */
    buf[lo] = start;
    used[start] = 1;
    for (int n = 1; n < k; n++) {
        int bw = -1, at_hi = 1;
        double bv = -INFINITY;
        for (int w = 0; w < k; w++) {
            if (used[w])
                continue;
            if (S[buf[hi] * k + w] > bv) {
                bv = S[buf[hi] * k + w];
                bw = w;
                at_hi = 1;
            }
            if (S[buf[lo] * k + w] > bv) {
                bv = S[buf[lo] * k + w];
                bw = w;
                at_hi = 0;
            }
        }
        used[bw] = 1;
        if (at_hi)
            buf[++hi] = bw;
        else
            buf[--lo] = bw;
    }
    memcpy(order, buf + lo, (size_t)k * sizeof *order);
    free(buf);
    for (bool better = true; better;) {
        better = false;
        for (int i = 0; i < k; i++)
            for (int j = i + 1; j < k; j++) {
                double before = 0, after = 0;
                if (i > 0) {
                    before += S[order[i - 1] * k + order[i]];
                    after += S[order[i - 1] * k + order[j]];
                }
                if (j + 1 < k) {
                    before += S[order[j] * k + order[j + 1]];
                    after += S[order[i] * k + order[j + 1]];
                }
                if (after > before + 1e-12) {
                    for (int a = i, b = j; a < b; a++, b--) {
                        int tmp = order[a];
                        order[a] = order[b];
                        order[b] = tmp;
                    }
                    better = true;
                }
            }
    }
}

double skel_chain(const double *S, int k, int *order)
{
    if (k <= 0)
        return 0;
    if (k == 1) {
        order[0] = 0;
        return 0;
    }
    if (k <= SKEL_CHAIN_EXACT)
        return chain_exact(S, k, order);
    int *cand = xmalloc((size_t)k * sizeof *cand);
    unsigned char *used = xmalloc((size_t)k);
    double total = -INFINITY;
    for (int s = 0; s < k; s++) {
        chain_greedy(S, k, s, cand, used);
        double v = chain_sum(S, k, cand);
        if (v > total + 1e-12) {
            total = v;
            memcpy(order, cand, (size_t)k * sizeof *order);
        }
    }
    free(cand);
    free(used);
    return total;
}

/* ---- direction --------------------------------------------------------------- */

#define ORDER_BIN_S 0.1         /* folded profile resolution */
#define ORDER_ACTIVE 0.1        /* active: floor + this x (mean - floor) */
#define ORDER_TOL_BINS 1.5      /* onset steps within this abstain */

/* floor + ORDER_ACTIVE x (mean - floor) of a folded profile (empty bins
 * have cnt 0 and are skipped). */
static double active_level(const double *prof, const int *cnt, int nb)
{
    double lo = INFINITY, mean = 0;
    int n = 0;
    for (int b = 0; b < nb; b++)
        if (cnt[b]) {
            mean += prof[b];
            n++;
            if (prof[b] < lo)
                lo = prof[b];
        }
    if (!n)
        return INFINITY;
    mean /= n;
    return lo + ORDER_ACTIVE * (mean - lo);
}

/* The circular difference b - a wrapped to [-period/2, period/2). */
static double wrap(double d, double period)
{
    return d - period * floor(d / period + 0.5);
}

int skel_chain_direction(const double *gmean, int k, size_t len, double period, const int *order,
                         int *votes)
{
    if (votes)
        *votes = 0;
    if (k < 2 || !(period >= 2 * ORDER_BIN_S) || !len)
        return 1;
    double nbd = fmin(ceil(period / ORDER_BIN_S), 1 << 14);
    int nb = (int)nbd;
    double bin = period / nb;
    double *prof = xcalloc((size_t)(k + 1) * (size_t)nb, sizeof *prof);
    double *tot = prof + (size_t)k * (size_t)nb;
    int *cnt = xcalloc((size_t)nb, sizeof *cnt);
    for (size_t t = 0; t < len; t++) {
        int b = (int)(fmod((double)t, period) / bin);
        if (b >= nb)
            b = nb - 1;
        cnt[b]++;
        for (int g = 0; g < k; g++)
            prof[(size_t)g * (size_t)nb + (size_t)b] += gmean[(size_t)g * len + t];
    }
    for (int b = 0; b < nb; b++)
        if (cnt[b])
            for (int g = 0; g < k; g++) {
                prof[(size_t)g * (size_t)nb + (size_t)b] /= cnt[b];
                tot[b] += prof[(size_t)g * (size_t)nb + (size_t)b];
            }
    /* the iteration boundary: start of the longest inactive run of the total */
    double tlev = active_level(tot, cnt, nb);
    int ref = -1, reflen = -1;
    for (int b0 = 0; b0 < nb; b0++) {
        if (!cnt[b0] || tot[b0] >= tlev)
            continue;
        int prev = (b0 + nb - 1) % nb;
        while (!cnt[prev])
            prev = (prev + nb - 1) % nb;
        if (prev != b0 && tot[prev] < tlev)
            continue;           /* not the start of a run */
        int run = 0;
        for (int j = 0; j < nb; j++) {
            int b = (b0 + j) % nb;
            if (!cnt[b])
                continue;
            if (tot[b] >= tlev)
                break;
            run = j + 1;
        }
        if (run > reflen) {
            reflen = run;
            ref = b0;
        }
    }
    int dir = 1;
    if (ref >= 0) {
        /* scan from the middle of the quiet run: past the previous
         * iteration's tails, before any onset */
        for (int j = reflen / 2; j < nb; j++)
            if (cnt[(ref + j) % nb]) {
                ref = (ref + j) % nb;
                break;
            }
        /* each group's onset (bins after ref), -1 if none */
        int *onset = xmalloc((size_t)k * sizeof *onset);
        for (int g = 0; g < k; g++) {
            const double *p = prof + (size_t)g * (size_t)nb;
            double lev = active_level(p, cnt, nb);
            bool seen_idle = false;
            onset[g] = -1;
            for (int j = 0; j < nb && onset[g] < 0; j++) {
                int b = (ref + j) % nb;
                if (!cnt[b])
                    continue;
                if (p[b] < lev)
                    seen_idle = true;
                else if (seen_idle)
                    onset[g] = j;
            }
        }
        int v = 0;
        for (int i = 0; i + 1 < k; i++) {
            int a = onset[order[i]], b = onset[order[i + 1]];
            if (a < 0 || b < 0)
                continue;
            double d = wrap((double)(b - a) * bin, period);
            if (d > ORDER_TOL_BINS * bin)
                v++;
            else if (d < -ORDER_TOL_BINS * bin)
                v--;
        }
        free(onset);
        if (votes)
            *votes = v;
        if (v)
            dir = v > 0 ? 1 : -1;
        else {
            /* tie: the end with the later centroid (the last all-reduce) */
            double d = wrap(skel_burst_phase(gmean + (size_t)order[k - 1] * len, len, period) -
                                skel_burst_phase(gmean + (size_t)order[0] * len, len, period),
                            period);
            dir = d > ORDER_TOL_BINS * bin ? -1 : 1;
        }
    }
    free(prof);
    free(cnt);
    return dir;
}
