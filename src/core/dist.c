/*
 * dist.c - distributions from scenario maps, and empirical CDFs from files.
 *
 * Parameters are stored in base units (ps for times, bytes for sizes):
 *   constant    a = value
 *   uniform     a = min, b = max
 *   exponential a = mean
 *   pareto      a = shape, b = scale (the minimum; mean = scale*shape/(shape-1))
 *   lognormal   a = mu, b = sigma of the underlying normal (mean = e^(mu+sigma^2/2))
 *   normal      a = mean, b = standard deviation
 */
#include "aisim/dist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/infile.h"
#include "aisim/log.h"
#include "aisim/units.h"

static const char *const kind_names[] = {"constant", "uniform", "exponential", "pareto",
                                         "lognormal", "normal", "empirical", NULL};

const char *dist_kind_name(enum dist_kind k) { return kind_names[k]; }

typedef struct dist_keys {
    int kind;
    const cfg_node *value, *min, *max, *mean, *scale, *stddev, *unit;
    double shape, sigma;
    const char *file;
} dist_keys;

#define NODE_KEY(n, f, d) {.name = n, .type = CFG_NODE, .off = offsetof(dist_keys, f), .def = d}
#define KIND_KEY {.name = "dist", .type = CFG_ENUM, .off = offsetof(dist_keys, kind), \
                  .choices = kind_names, .help = "distribution family"}

static const cfg_key k_constant[] = {KIND_KEY, NODE_KEY("value", value, NULL), {0}};
static const cfg_key k_uniform[] = {KIND_KEY, NODE_KEY("min", min, NULL), NODE_KEY("max", max, NULL), {0}};
static const cfg_key k_exponential[] = {KIND_KEY, NODE_KEY("mean", mean, NULL), {0}};
static const cfg_key k_pareto[] = {
    KIND_KEY,
    {.name = "shape", .type = CFG_FLOAT, .off = offsetof(dist_keys, shape), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "tail index alpha"},
    {.name = "mean", .type = CFG_NODE, .off = offsetof(dist_keys, mean), .flags = CFG_OPTIONAL},
    {.name = "scale", .type = CFG_NODE, .off = offsetof(dist_keys, scale), .flags = CFG_OPTIONAL},
    {0}};
static const cfg_key k_lognormal[] = {
    KIND_KEY, NODE_KEY("mean", mean, NULL),
    {.name = "sigma", .type = CFG_FLOAT, .off = offsetof(dist_keys, sigma),
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 10,
     .help = "standard deviation of the logarithm"},
    {0}};
static const cfg_key k_normal[] = {KIND_KEY, NODE_KEY("mean", mean, NULL),
                                   NODE_KEY("stddev", stddev, NULL), {0}};
static const cfg_key k_empirical_time[] = {
    KIND_KEY, {.name = "file", .type = CFG_STR, .off = offsetof(dist_keys, file)},
    NODE_KEY("unit", unit, "1s"), {0}};
static const cfg_key k_empirical_size[] = {
    KIND_KEY, {.name = "file", .type = CFG_STR, .off = offsetof(dist_keys, file)},
    NODE_KEY("unit", unit, "1B"), {0}};
static const cfg_key k_empirical_num[] = {
    KIND_KEY, {.name = "file", .type = CFG_STR, .off = offsetof(dist_keys, file)},
    NODE_KEY("unit", unit, "1"), {0}};

/* Converts a quantity node to a double in base units; `positive` demands
 * > 0, otherwise >= 0 is demanded for times and sizes. */
static int quantity(const cfg_node *n, const char *path, const char *name, enum dist_quantity q,
                    int positive, double *out, err *e)
{
    char sub[512];
    cfg_path(sub, sizeof sub, path, name);
    cfg_key k = {.name = name, .flags = CFG_MIN | (positive ? CFG_MIN_EXCL : 0), .min = 0};
    k.type = q == DIST_Q_TIME ? CFG_TIME : q == DIST_Q_SIZE ? CFG_SIZE : CFG_FLOAT;
    if (q == DIST_Q_NUMBER && !positive)
        k.flags = 0;
    if (k.type == CFG_FLOAT) {
        return cfg_value(n, sub, &k, out, e);
    }
    int64_t v;
    int r = cfg_value(n, sub, &k, &v, e);
    *out = (double)v;
    return r;
}

int dist_from_cfg(cfg_node *n, const char *path, enum dist_quantity q, const char *base_dir,
                  dist *d, err *e)
{
    memset(d, 0, sizeof *d);
    d->q = q;
    char found[96], sub[512];
    if (cfg_kind(n) != CFG_MAP)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a distribution such as {dist: "
                       "exponential, mean: %s}, found %s",
                       q == DIST_Q_TIME ? "1ms" : q == DIST_Q_SIZE ? "64KB" : "1",
                       cfg_describe(n, found, sizeof found));
    cfg_node *kn = cfg_get(n, "dist");
    if (!kn)
        return cfg_err(e, AISIM_EINVAL, n, cfg_path(sub, sizeof sub, path, "dist"),
                       "missing required key (expected one of: constant, uniform, exponential, "
                       "pareto, lognormal, normal, empirical)");
    dist_keys dk = {0};
    static const cfg_key kind_only = KIND_KEY;
    int r = cfg_value(kn, cfg_path(sub, sizeof sub, path, "dist"), &kind_only, &dk.kind, e);
    if (r)
        return r;
    const cfg_key *keys[] = {k_constant, k_uniform, k_exponential, k_pareto, k_lognormal, k_normal,
                             q == DIST_Q_TIME ? k_empirical_time
                             : q == DIST_Q_SIZE ? k_empirical_size : k_empirical_num};
    if ((r = cfg_bind(n, path, keys[dk.kind], &dk, e)))
        return r;
    d->kind = (enum dist_kind)dk.kind;
    switch (d->kind) {
    case DIST_CONSTANT:
        return quantity(dk.value, path, "value", q, 0, &d->a, e);
    case DIST_UNIFORM:
        if ((r = quantity(dk.min, path, "min", q, 0, &d->a, e)) ||
            (r = quantity(dk.max, path, "max", q, 0, &d->b, e)))
            return r;
        if (d->b < d->a)
            return cfg_err(e, AISIM_ERANGE, dk.max, cfg_path(sub, sizeof sub, path, "max"),
                           "expected max >= min, found %s", cfg_describe(dk.max, found, sizeof found));
        return 0;
    case DIST_EXPONENTIAL:
        return quantity(dk.mean, path, "mean", q, 1, &d->a, e);
    case DIST_PARETO:
        d->a = dk.shape;
        if (!!dk.mean == !!dk.scale)
            return cfg_err(e, AISIM_EINVAL, n, path, "a pareto distribution takes exactly one of "
                           "mean and scale, found %s", dk.mean ? "both" : "neither");
        if (dk.scale)
            return quantity(dk.scale, path, "scale", q, 1, &d->b, e);
        if ((r = quantity(dk.mean, path, "mean", q, 1, &d->b, e)))
            return r;
        if (dk.shape <= 1)
            return cfg_err(e, AISIM_ERANGE, dk.mean, cfg_path(sub, sizeof sub, path, "mean"),
                           "the mean is infinite for shape <= 1 (found shape %g); give scale "
                           "instead", dk.shape);
        d->b = d->b * (dk.shape - 1) / dk.shape;
        return 0;
    case DIST_LOGNORMAL: {
        double mean;
        if ((r = quantity(dk.mean, path, "mean", q, 1, &mean, e)))
            return r;
        d->b = dk.sigma;
        d->a = log(mean) - dk.sigma * dk.sigma / 2;
        /* Half the draws are below the median e^mu: below one picosecond
         * (byte) they are 0, and time does not advance. */
        if (q != DIST_Q_NUMBER && exp(d->a) < 1) {
            cfg_node *sn = cfg_get(n, "sigma");
            return cfg_err(e, AISIM_ERANGE, sn, cfg_path(sub, sizeof sub, path, "sigma"),
                           "expected a sigma that keeps the median mean*exp(-sigma^2/2) at 1%s "
                           "or more, else most draws are 0 (sigma <= %.3g for this mean), "
                           "found %s", q == DIST_Q_TIME ? "ps" : "B", sqrt(2 * log(mean)),
                           cfg_describe(sn, found, sizeof found));
        }
        /* P(X < 0.5), the draws that round to 0: suspicious above 1 %. */
        double p0 = dk.sigma > 0 ? 0.5 * erfc(-(log(0.5) - d->a) / (dk.sigma * sqrt(2))) : 0;
        if (q != DIST_Q_NUMBER && p0 > 0.01)
            LOG(LOG_WARN, "dist", "%s: %.3g%% of the draws of this lognormal (sigma %g) are "
                "0%s", path, 100 * p0, dk.sigma, q == DIST_Q_TIME ? "ps" : "B");
        return 0;
    }
    case DIST_NORMAL:
        if ((r = quantity(dk.mean, path, "mean", q, q != DIST_Q_NUMBER ? 0 : 0, &d->a, e)) ||
            (r = quantity(dk.stddev, path, "stddev", q, 0, &d->b, e)))
            return r;
        if (d->b < 0)
            return cfg_err(e, AISIM_ERANGE, dk.stddev, cfg_path(sub, sizeof sub, path, "stddev"),
                           "expected a standard deviation >= 0");
        return 0;
    case DIST_EMPIRICAL: {
        double unit;
        if ((r = quantity(dk.unit, path, "unit", q, 1, &unit, e)))
            return r;
        char full[1024];
        if (dk.file[0] == '/' || !base_dir || !*base_dir)
            snprintf(full, sizeof full, "%s", dk.file);
        else
            snprintf(full, sizeof full, "%s/%s", base_dir, dk.file);
        r = ecdf_load(full, unit, &d->table, e);
        cfg_node *fn = cfg_get(n, "file");
        if (r) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e ? e->msg : "");
            return cfg_err(e, r, fn, cfg_path(sub, sizeof sub, path, "file"), "%s", msg);
        }
        double top = d->table->x[d->table->n - 1];
        double cap = q == DIST_Q_TIME ? (double)UNITS_TIME_CAP_PS : (double)UNITS_SIZE_CAP_B;
        if (q != DIST_Q_NUMBER && top > cap)
            return cfg_err(e, AISIM_ERANGE, fn, cfg_path(sub, sizeof sub, path, "file"),
                           "expected a CDF whose values (times unit) are <= %s (simulated time "
                           "ends at 2^63-1 ps), found %g%s in %s", q == DIST_Q_TIME
                           ? UNITS_TIME_CAP_TEXT : UNITS_SIZE_CAP_TEXT, top,
                           q == DIST_Q_TIME ? "ps" : "B", full);
        return 0;
    }
    }
    return 0;
}

void dist_fini(dist *d)
{
    ecdf_free(d->table);
    d->table = NULL;
}

double dist_sample(const dist *d, rng *r)
{
    double x = 0;
    switch (d->kind) {
    case DIST_CONSTANT: return d->a;
    case DIST_UNIFORM: return rng_uniform(r, d->a, d->b);
    case DIST_EXPONENTIAL: return rng_exponential(r, d->a);
    case DIST_PARETO: return rng_pareto(r, d->a, d->b);
    case DIST_LOGNORMAL: return rng_lognormal(r, d->a, d->b);
    case DIST_NORMAL:
        x = rng_normal(r, d->a, d->b);
        return d->q != DIST_Q_NUMBER && x < 0 ? 0 : x;
    case DIST_EMPIRICAL: return ecdf_sample(d->table, r);
    }
    return x;
}

double dist_mean(const dist *d)
{
    switch (d->kind) {
    case DIST_CONSTANT: return d->a;
    case DIST_UNIFORM: return (d->a + d->b) / 2;
    case DIST_EXPONENTIAL: return d->a;
    case DIST_PARETO: return d->a > 1 ? d->a * d->b / (d->a - 1) : INFINITY;
    case DIST_LOGNORMAL: return exp(d->a + d->b * d->b / 2);
    case DIST_NORMAL: return d->a;      /* ignores clamping at 0 */
    case DIST_EMPIRICAL: return ecdf_mean(d->table);
    }
    return NAN;
}

double dist_moment2(const dist *d)
{
    switch (d->kind) {
    case DIST_CONSTANT: return d->a * d->a;
    case DIST_UNIFORM: return (d->a * d->a + d->a * d->b + d->b * d->b) / 3;
    case DIST_EXPONENTIAL: return 2 * d->a * d->a;
    case DIST_PARETO: return d->a > 2 ? d->a * d->b * d->b / (d->a - 2) : INFINITY;
    case DIST_LOGNORMAL: return exp(2 * d->a + 2 * d->b * d->b);
    case DIST_NORMAL: return d->a * d->a + d->b * d->b;
    case DIST_EMPIRICAL: {
        const ecdf *t = d->table;
        double m = t->p[0] * t->x[0] * t->x[0];
        for (size_t i = 1; i < t->n; i++) {
            double a = t->x[i - 1], b = t->x[i];
            m += (t->p[i] - t->p[i - 1]) * (a * a + a * b + b * b) / 3;
        }
        return m;
    }
    }
    return NAN;
}


/* ---- empirical CDF ---------------------------------------------------- */

int ecdf_load(const char *path, double unit, ecdf **out, err *e)
{
    *out = NULL;
    FILE *f = infile_open(path, "r");
    if (!f)
        return ERR(e, AISIM_ENOENT, "cannot open CDF file %s: %s", path, strerror(errno));
    ecdf *t = xcalloc(1, sizeof *t);
    size_t cap = 0;
    char line[1024];
    int lineno = 0, first_line = 0, r = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line;
        char *hash = strchr(s, '#');
        if (hash)
            *hash = '\0';
        for (char *c = s; *c; c++)
            if (*c == ',' || *c == '\t' || *c == '\r' || *c == '\n')
                *c = ' ';
        while (*s == ' ')
            s++;
        size_t len = strlen(s);
        while (len > 0 && s[len - 1] == ' ')
            s[--len] = '\0';
        if (!*s)
            continue;
        char *end1, *end2;
        errno = 0;
        double x = strtod(s, &end1);
        double p = end1 != s ? strtod(end1, &end2) : 0;
        if (end1 == s || end2 == end1 || errno || !isfinite(x) || !isfinite(p)) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: expected \"value probability\" (two finite "
                    "numbers), found \"%.40s\"", path, lineno, (int)(s - line) + 1, s);
            break;
        }
        while (*end2 == ' ')
            end2++;
        if (*end2) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: expected two columns, found extra text \"%.20s\"",
                    path, lineno, (int)(end2 - line) + 1, end2);
            break;
        }
        if (p < 0 || p > 1) {
            const char *pc = end1;
            while (*pc == ' ')
                pc++;
            r = ERR(e, AISIM_ERANGE, "%s:%d:%d: expected a probability in [0, 1], found %g", path,
                    lineno, (int)(pc - line) + 1, p);
            break;
        }
        if (t->n > 0 && (x < t->x[t->n - 1] / unit || p < t->p[t->n - 1])) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: expected a monotone CDF (values and "
                    "probabilities never decrease), found (%g, %g) after (%g, %g)",
                    path, lineno, (int)(s - line) + 1, x, p, t->x[t->n - 1] / unit,
                    t->p[t->n - 1]);
            break;
        }
        if (t->n == cap) {
            cap = cap ? 2 * cap : 32;
            t->x = xrealloc(t->x, cap * sizeof *t->x);
            t->p = xrealloc(t->p, cap * sizeof *t->p);
        }
        if (t->n == 0)
            first_line = lineno;
        t->x[t->n] = x * unit;
        t->p[t->n++] = p;
    }
    if (!r && ferror(f))
        r = ERR(e, AISIM_EIO, "%s: read error", path);
    fclose(f);
    if (!r && t->n == 0)
        r = ERR(e, AISIM_EINVAL, "%s: expected at least one \"value probability\" line, "
                "found none", path);
    if (!r && t->p[t->n - 1] != 1.0)
        r = ERR(e, AISIM_EINVAL, "%s:%d: expected the last cumulative probability to be 1, "
                "found %g", path, lineno, t->p[t->n - 1]);
    if (!r && t->x[0] < 0)
        r = ERR(e, AISIM_ERANGE, "%s:%d:1: expected values >= 0, found %g", path, first_line,
                t->x[0] / unit);
    if (r) {
        ecdf_free(t);
        return r;
    }
    *out = t;
    return 0;
}

void ecdf_free(ecdf *t)
{
    if (!t)
        return;
    free(t->x);
    free(t->p);
    free(t);
}

double ecdf_sample(const ecdf *t, rng *r)
{
    double u = rng_u01(r);
    /* First point with p > u (binary search). */
    size_t lo = 0, hi = t->n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->p[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo == 0)
        return t->x[0];
    double dp = t->p[lo] - t->p[lo - 1];
    return t->x[lo - 1] + (t->x[lo] - t->x[lo - 1]) * (u - t->p[lo - 1]) / dp;
}

double ecdf_mean(const ecdf *t)
{
    double m = t->p[0] * t->x[0];
    for (size_t i = 1; i < t->n; i++)
        m += (t->p[i] - t->p[i - 1]) * (t->x[i] + t->x[i - 1]) / 2;
    return m;
}
