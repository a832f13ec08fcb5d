/*
 * birp_data.c - loaders for latency profiles and arrival traces (see
 * birp_data.h for the formats and the checks).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/infile.h"
#include "systems/birp/birp_data.h"

#define MAX_COLS 32

/* Splits line in place on commas into at most MAX_COLS fields; returns the
 * number of fields.  Strips a trailing CR/LF first. */
static int split_csv(char *line, char **f)
{
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = 0;
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == MAX_COLS)
            return n;
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            return n;
        *c = 0;
        p = c + 1;
    }
}

/* 1-based column of field fld of line (split_csv splits in place). */
#define COL(fld) ((int)((fld) - line) + 1)

/* Profiles' bounds, as those of the scenario keys they stand for: a
 * latency of at most an hour per batch (SLOs are seconds), a model of at
 * most 1 PB. */
#define BIRP_MAX_LAT_MS 3.6e6
#define BIRP_MAX_SIZE_MB 1e9

static int col_index(char **f, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(f[i], name) == 0)
            return i;
    return -1;
}

static int parse_num(const char *s, double *out)
{
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* ---- profiles ------------------------------------------------------------ */

void birp_profiles_fini(birp_profiles *p)
{
    free(p->c);
    p->c = NULL;
    p->n = 0;
}

static int prof_fail(birp_profiles *p, int rc)
{
    birp_profiles_fini(p);
    return rc;
}

int birp_profiles_load(const char *path, const char *engine, birp_profiles *p, err *e)
{
    FILE *fp = infile_open(path, "r");
    if (!fp)
        return ERR(e, AISIM_ENOENT, "%s: cannot open profile file: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    char *f[MAX_COLS];
    int lineno = 0, rc = 0;
    int c_dev = -1, c_model = -1, c_batch = -1, c_engine = -1, c_lat = -1, c_acc = -1, c_size = -1;
    size_t capc = 0;
    int *last_line = NULL;      /* line of each curve's last point */
    p->n = 0;
    p->c = NULL;
    while (getline(&line, &cap, fp) != -1) {
        lineno++;
        int nf = split_csv(line, f);
        if (nf == 1 && f[0][0] == 0)
            continue;
        if (c_dev < 0) {
            c_dev = col_index(f, nf, "device");
            c_model = col_index(f, nf, "model");
            c_batch = col_index(f, nf, "batch_size");
            c_engine = col_index(f, nf, "engine");
            c_lat = col_index(f, nf, "latency_mean_ms");
            c_acc = col_index(f, nf, "top1_pct");
            c_size = col_index(f, nf, "size_mb");
            const char *miss = c_dev < 0 ? "device" : c_model < 0 ? "model"
                             : c_batch < 0 ? "batch_size" : c_engine < 0 ? "engine"
                             : c_lat < 0 ? "latency_mean_ms" : c_acc < 0 ? "top1_pct" : NULL;
            if (miss) {
                rc = ERR(e, AISIM_EINVAL, "%s:%d: header has no column \"%s\" (expected device, "
                         "model, batch_size, engine, latency_mean_ms, top1_pct)", path, lineno, miss);
                c_dev = 0;
                goto out;
            }
            continue;
        }
        int need = c_dev;
        int cols[] = {c_model, c_batch, c_engine, c_lat, c_acc, c_size};
        for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
            if (cols[i] > need)
                need = cols[i];
        if (nf <= need) {
            rc = ERR(e, AISIM_EINVAL, "%s:%d: expected at least %d comma-separated fields, found %d",
                     path, lineno, need + 1, nf);
            goto out;
        }
        if (strcmp(f[c_engine], engine) != 0)
            continue;
        double b, lat, acc, size = 0;
        if (parse_num(f[c_batch], &b) || b < 1 || b != floor(b) || b > 1e6) {
            rc = ERR(e, AISIM_EINVAL, "%s:%d:%d: batch_size: expected an integer in [1, 1e6], found "
                     "\"%s\"", path, lineno, COL(f[c_batch]), f[c_batch]);
            goto out;
        }
        if (parse_num(f[c_lat], &lat)) {
            rc = ERR(e, AISIM_EINVAL, "%s:%d:%d: latency_mean_ms: expected a number, found \"%s\"",
                     path, lineno, COL(f[c_lat]), f[c_lat]);
            goto out;
        }
        if (lat <= 0 || lat > BIRP_MAX_LAT_MS) {
            rc = ERR(e, AISIM_ERANGE, "%s:%d:%d: latency_mean_ms: expected a latency in (0, %g] "
                     "ms, found %s", path, lineno, COL(f[c_lat]), BIRP_MAX_LAT_MS, f[c_lat]);
            goto out;
        }
        if (parse_num(f[c_acc], &acc) || acc < 0 || acc > 100) {
            rc = ERR(e, AISIM_EINVAL, "%s:%d:%d: top1_pct: expected a percentage in [0, 100], "
                     "found \"%s\"", path, lineno, COL(f[c_acc]), f[c_acc]);
            goto out;
        }
        if (c_size >= 0 && f[c_size][0] &&
            (parse_num(f[c_size], &size) || size < 0 || size > BIRP_MAX_SIZE_MB)) {
            rc = ERR(e, AISIM_EINVAL, "%s:%d:%d: size_mb: expected a size in [0, %g], found "
                     "\"%s\"", path, lineno, COL(f[c_size]), BIRP_MAX_SIZE_MB, f[c_size]);
            goto out;
        }
        if (strlen(f[c_dev]) >= sizeof p->c->device || strlen(f[c_model]) >= sizeof p->c->model) {
            rc = ERR(e, AISIM_EINVAL, "%s:%d: device or model name too long", path, lineno);
            goto out;
        }
        birp_curve *cv = NULL;
        size_t ci;
        for (ci = 0; ci < p->n; ci++)
            if (!strcmp(p->c[ci].device, f[c_dev]) && !strcmp(p->c[ci].model, f[c_model])) {
                cv = &p->c[ci];
                break;
            }
        if (!cv) {
            if (p->n == capc) {
                capc = capc ? 2 * capc : 16;
                p->c = xrealloc(p->c, capc * sizeof *p->c);
                last_line = xrealloc(last_line, capc * sizeof *last_line);
            }
            cv = &p->c[p->n];
            ci = p->n++;
            memset(cv, 0, sizeof *cv);
            snprintf(cv->device, sizeof cv->device, "%s", f[c_dev]);
            snprintf(cv->model, sizeof cv->model, "%s", f[c_model]);
            cv->acc = acc / 100;
            cv->size_bytes = size * 1e6;
        } else {
            int k = cv->npts - 1;
            if (b <= cv->batch[k]) {
                rc = ERR(e, AISIM_EINVAL, "%s:%d: batch_size %d of %s/%s/%s does not follow batch "
                         "size %d (line %d): rows must come in increasing batch size", path,
                         lineno, (int)b, cv->device, cv->model, engine, cv->batch[k],
                         last_line[ci]);
                goto out;
            }
            if (lat < cv->lat_s[k] * 1e3) {
                rc = ERR(e, AISIM_ERANGE, "%s:%d: non-monotone profile: %s/%s/%s latency %g ms at "
                         "batch %d is lower than %g ms at batch %d (line %d)", path, lineno,
                         cv->device, cv->model, engine, lat, (int)b, cv->lat_s[k] * 1e3,
                         cv->batch[k], last_line[ci]);
                goto out;
            }
            if (cv->npts == BIRP_PROFILE_MAX_PTS) {
                rc = ERR(e, AISIM_ERANGE, "%s:%d: more than %d batch sizes for %s/%s", path,
                         lineno, BIRP_PROFILE_MAX_PTS, cv->device, cv->model);
                goto out;
            }
        }
        cv->batch[cv->npts] = (int)b;
        cv->lat_s[cv->npts] = lat * 1e-3;
        cv->npts++;
        last_line[ci] = lineno;
    }
    if (ferror(fp))
        rc = ERR(e, AISIM_EIO, "%s: read error", path);
    else if (c_dev < 0)
        rc = ERR(e, AISIM_EINVAL, "%s: empty profile file (no header)", path);
    else if (p->n == 0)
        rc = ERR(e, AISIM_EINVAL, "%s: no rows with engine \"%s\"", path, engine);
out:
    free(line);
    free(last_line);
    fclose(fp);
    return rc ? prof_fail(p, rc) : 0;
}

const birp_curve *birp_profiles_find(const birp_profiles *p, const char *device, const char *model)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->c[i].device, device) && !strcmp(p->c[i].model, model))
            return &p->c[i];
    return NULL;
}

double birp_curve_latency_s(const birp_curve *c, double b)
{
    if (c->npts == 1)
        return c->lat_s[0] * b / c->batch[0];
    if (b <= c->batch[0])
        return c->lat_s[0];
    int k = 1;
    while (k < c->npts - 1 && b > c->batch[k])
        k++;
    double x0 = c->batch[k - 1], x1 = c->batch[k];
    double y0 = c->lat_s[k - 1], y1 = c->lat_s[k];
    return y0 + (y1 - y0) * (b - x0) / (x1 - x0);
}

int birp_curve_max_batch(const birp_curve *c, double lat_s, int bmax)
{
    int lo = 1, hi = bmax;
    if (birp_curve_latency_s(c, 1) > lat_s)
        return 1;
    while (lo < hi) {          /* latency is non-decreasing in b */
        int mid = lo + (hi - lo + 1) / 2;
        if (birp_curve_latency_s(c, mid) <= lat_s)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* ---- traces -------------------------------------------------------------- */

void birp_trace_fini(birp_trace *t)
{
    free(t->t_ps);
    t->t_ps = NULL;
    t->n = 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Reads n digits at s into *v; returns 0 if all are digits. */
static int digits(const char *s, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        x = 10 * x + (s[i] - '0');
    }
    *v = x;
    return 0;
}

/* Fractional digits after '.', up to 12 (ps); returns ps or -1. */
static int64_t frac_ps(const char *s)
{
    int64_t v = 0, scale = 100000000000;     /* 1e11 ps for the first digit */
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s))
            return -1;
        if (scale > 0) {
            v += (*s - '0') * scale;
            scale /= 10;
        }
    }
    return v;
}

/* Parses one time field into whole seconds since an arbitrary epoch and a
 * fraction in ps (kept apart: epoch seconds in ps overflow 63 bits). */
static int parse_time(const char *s, int64_t *secs_out, int64_t *ps)
{
    int y, mo, d, h, mi, sec;
    if (strlen(s) >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T') &&
        s[13] == ':' && s[16] == ':') {
        if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
            digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &sec))
            return -1;
        if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
            return -1;
        int64_t f = 0;
        if (s[19] == '.') {
            if ((f = frac_ps(s + 20)) < 0)
                return -1;
        } else if (s[19]) {
            return -1;
        }
        *secs_out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
        *ps = f;
        return 0;
    }
    /* decimal seconds: digits[.digits] */
    const char *dot = strchr(s, '.');
    size_t ilen = dot ? (size_t)(dot - s) : strlen(s);
    if (ilen == 0 || ilen > 9)
        return -1;
    int iv;
    if (digits(s, (int)ilen, &iv))
        return -1;
    int64_t f = 0;
    if (dot && (f = frac_ps(dot + 1)) < 0)
        return -1;
    *secs_out = iv;
    *ps = f;
    return 0;
}

int birp_trace_load(const char *path, birp_trace *t, err *e)
{
    FILE *fp = infile_open(path, "r");
    if (!fp)
        return ERR(e, AISIM_ENOENT, "%s: cannot open trace file: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, capn = 0;
    char *f[MAX_COLS];
    int lineno = 0, rc = 0, prev_line = 0;
    int64_t first_s = 0, first_f = 0, prev = 0;
    t->n = 0;
    t->t_ps = NULL;
    while (getline(&line, &cap, fp) != -1) {
        lineno++;
        if (split_csv(line, f) == 1 && !f[0][0])
            continue;                       /* blank line */
        int64_t secs, frac;
        if (parse_time(f[0], &secs, &frac)) {
            if (lineno == 1 && !isdigit((unsigned char)f[0][0]))
                continue;                   /* header */
            rc = ERR(e, AISIM_EINVAL, "%s:%d: malformed timestamp \"%.60s\" (expected "
                     "YYYY-MM-DD HH:MM:SS[.fraction] or seconds)", path, lineno, f[0]);
            goto out;
        }
        if (t->n == 0) {
            first_s = secs;
            first_f = frac;
        }
        /* both directions: an earlier timestamp is reported as unsorted
         * below, but only after (secs - first_s) * 1e12 has been formed */
        if (secs - first_s > INT64_MAX / 1000000000000 - 1 ||
            first_s - secs > INT64_MAX / 1000000000000 - 1) {
            rc = ERR(e, AISIM_ERANGE, "%s:%d: expected timestamps within 106 days of the first, "
                     "found \"%.60s\", more than that %s it", path, lineno, f[0],
                     secs > first_s ? "after" : "before");
            goto out;
        }
        int64_t ps = (secs - first_s) * 1000000000000 + (frac - first_f);
        if (t->n && ps < prev) {
            rc = ERR(e, AISIM_EINVAL, "%s:%d: unsorted trace: timestamp \"%.60s\" is earlier than "
                     "the one on line %d", path, lineno, f[0], prev_line);
            goto out;
        }
        if (t->n == capn) {
            capn = capn ? 2 * capn : 1024;
            t->t_ps = xrealloc(t->t_ps, capn * sizeof *t->t_ps);
        }
        t->t_ps[t->n++] = ps;
        prev = ps;
        prev_line = lineno;
    }
    if (ferror(fp))
        rc = ERR(e, AISIM_EIO, "%s: read error", path);
    else if (t->n < 2)
        rc = ERR(e, AISIM_EINVAL, "%s: a trace needs at least 2 arrivals, found %zu", path, t->n);
    else if (t->t_ps[t->n - 1] <= 0)
        rc = ERR(e, AISIM_EINVAL, "%s:%d: expected timestamps spanning more than 0 s, found all "
                 "%zu equal to the first", path, prev_line, t->n);
out:
    free(line);
    fclose(fp);
    if (rc)
        birp_trace_fini(t);
    return rc;
}
