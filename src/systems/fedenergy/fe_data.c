/*
 * fe_data.c - data loaders, split and device partitions (see fe_data.h).
 *
 * CSV: read line by line with getline(); every field must be a decimal
 * integer in range and every line must have exactly dim + 1 fields, else the
 * error names the line.  IDX: read through zlib's gzread (which also reads
 * uncompressed files), header fields big-endian; a short read is reported as
 * truncation with the byte counts.  Cost: one pass, O(n * dim).
 */
#include "systems/fedenergy/fe_data.h"

#include <ctype.h>

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "aisim/infile.h"

void fe_data_fini(fe_dataset *d)
{
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

int fe_data_load_csv(const char *path, size_t dim, int classes, double max_value,
                     fe_dataset *d, err *e)
{
    memset(d, 0, sizeof *d);
    FILE *f = infile_open(path, "r");
    if (!f)
        return ERR(e, AISIM_ENOENT, "cannot open data file %s: %s", path, strerror(errno));
    size_t cap = 256, n = 0;
    double *x = xmalloc(cap * dim * sizeof *x);
    int *y = xmalloc(cap * sizeof *y);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int lineno = 0, r = 0;
    while ((len = getline(&line, &lcap, f)) != -1) {
        lineno++;
        if (n == cap) {
            cap *= 2;
            x = xrealloc(x, cap * dim * sizeof *x);
            y = xrealloc(y, cap * sizeof *y);
        }
        const char *p = line;
        size_t col = 0;
        for (;;) {
            char *end;
            errno = 0;
            long v = strtol(p, &end, 10);
            if (end == p || errno) {
                r = ERR(e, AISIM_EINVAL, "%s:%d: column %zu: expected an integer, found \"%.*s\"",
                        path, lineno, col + 1, (int)strcspn(p, ",\r\n"), p);
                goto fail;
            }
            if (col < dim) {
                if (v < 0 || v > max_value) {
                    r = ERR(e, AISIM_EINVAL, "%s:%d: column %zu: feature %ld outside [0, %g]",
                            path, lineno, col + 1, v, max_value);
                    goto fail;
                }
                x[n * dim + col] = (double)v / max_value;
            } else if (col == dim) {
                if (v < 0 || v >= classes) {
                    r = ERR(e, AISIM_EINVAL, "%s:%d: column %zu: label %ld outside [0, %d]", path,
                            lineno, col + 1, v, classes - 1);
                    goto fail;
                }
                y[n] = (int)v;
            }
            col++;
            p = end;
            if (*p == ',') {
                p++;
                continue;
            }
            break;
        }
        while (*p == '\r' || *p == ' ')
            p++;
        if (*p != '\n' && *p != '\0') {
            r = ERR(e, AISIM_EINVAL, "%s:%d: unexpected character '%c' after column %zu", path,
                    lineno, *p, col);
            goto fail;
        }
        if (col != dim + 1) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: expected %zu columns (%zu features and a label), "
                    "found %zu%s", path, lineno, dim + 1, dim, col,
                    *p == '\0' ? " (file truncated?)" : "");
            goto fail;
        }
        n++;
    }
    if (ferror(f)) {
        r = ERR(e, AISIM_EIO, "%s: read error after line %d", path, lineno);
        goto fail;
    }
    if (n == 0) {
        r = ERR(e, AISIM_EINVAL, "%s: no samples", path);
        goto fail;
    }
    free(line);
    fclose(f);
    d->n = n;
    d->dim = dim;
    d->classes = classes;
    d->x = x;
    d->y = y;
    return 0;
fail:
    free(line);
    free(x);
    free(y);
    fclose(f);
    return r;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Reads exactly n bytes; on a short read fills e ("truncated"). */
/* gzopen() for reading that refuses a directory (infile.h); NULL with errno
 * set on failure. */
static gzFile gzopen_input(const char *path)
{
    int fd = infile_open_fd(path);
    if (fd < 0)
        return NULL;
    gzFile g = gzdopen(fd, "rb");
    if (!g) {
        close(fd);
        errno = ENOMEM;
    }
    return g;
}

static int gz_read_all(gzFile g, const char *path, size_t off, void *buf, size_t n,
                       const char *what, err *e)
{
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
        int k = gzread(g, (char *)buf + got, chunk);
        if (k < 0) {
            int zerr;
            const char *m = gzerror(g, &zerr);
            return ERR(e, AISIM_EIO, "%s: %s at byte %zu: %s", path, what, off + got, m);
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    if (got < n)
        return ERR(e, AISIM_EINVAL, "%s: file truncated: %s needs %zu bytes from byte %zu, "
                   "found %zu", path, what, n, off, got);
    return 0;
}

int fe_data_load_idx(const char *images_path, const char *labels_path, int classes,
                     fe_dataset *d, err *e)
{
    memset(d, 0, sizeof *d);
    int r = 0;
    unsigned char h[16], *pix = NULL, *lab = NULL;
    gzFile gi = gzopen_input(images_path), gl = NULL;
    if (!gi)
        return ERR(e, AISIM_ENOENT, "cannot open data file %s: %s", images_path,
                   errno ? strerror(errno) : "zlib error");
    gl = gzopen_input(labels_path);
    if (!gl) {
        r = ERR(e, AISIM_ENOENT, "cannot open data file %s: %s", labels_path,
                errno ? strerror(errno) : "zlib error");
        goto out;
    }
    if ((r = gz_read_all(gi, images_path, 0, h, 16, "the IDX header", e)))
        goto out;
    if (be32(h) != 0x803) {
        r = ERR(e, AISIM_EINVAL, "%s: not an IDX image file (magic 0x%08x, expected 0x00000803)",
                images_path, be32(h));
        goto out;
    }
    size_t n = be32(h + 4), rows = be32(h + 8), cols = be32(h + 12);
    if (n == 0 || rows == 0 || cols == 0 || rows * cols > 1u << 20 || n > 1u << 24) {
        r = ERR(e, AISIM_EINVAL, "%s: implausible IDX dimensions %zu x %zu x %zu", images_path, n,
                rows, cols);
        goto out;
    }
    unsigned char hl[8];
    if ((r = gz_read_all(gl, labels_path, 0, hl, 8, "the IDX header", e)))
        goto out;
    if (be32(hl) != 0x801) {
        r = ERR(e, AISIM_EINVAL, "%s: not an IDX label file (magic 0x%08x, expected 0x00000801)",
                labels_path, be32(hl));
        goto out;
    }
    if (be32(hl + 4) != n) {
        r = ERR(e, AISIM_EINVAL, "%s: %u labels for %zu images in %s", labels_path, be32(hl + 4),
                n, images_path);
        goto out;
    }
    size_t dim = rows * cols;
    pix = xmalloc(n * dim);
    lab = xmalloc(n);
    if ((r = gz_read_all(gi, images_path, 16, pix, n * dim, "the pixels", e)) ||
        (r = gz_read_all(gl, labels_path, 8, lab, n, "the labels", e)))
        goto out;
    for (size_t i = 0; i < n; i++)
        if (lab[i] >= classes) {
            r = ERR(e, AISIM_EINVAL, "%s: label %u of sample %zu (byte %zu) outside [0, %d]",
                    labels_path, lab[i], i, 8 + i, classes - 1);
            goto out;
        }
    d->n = n;
    d->dim = dim;
    d->classes = classes;
    d->x = xmalloc(n * dim * sizeof *d->x);
    d->y = xmalloc(n * sizeof *d->y);
    for (size_t i = 0; i < n * dim; i++)
        d->x[i] = pix[i] / 255.0;
    for (size_t i = 0; i < n; i++)
        d->y[i] = lab[i];
out:
    free(pix);
    free(lab);
    gzclose(gi);
    if (gl)
        gzclose(gl);
    return r;
}

static void take(const fe_dataset *d, const size_t *idx, size_t n, fe_dataset *o)
{
    o->n = n;
    o->dim = d->dim;
    o->classes = d->classes;
    o->x = xmalloc((n ? n : 1) * d->dim * sizeof *o->x);
    o->y = xmalloc((n ? n : 1) * sizeof *o->y);
    for (size_t i = 0; i < n; i++) {
        memcpy(o->x + i * d->dim, d->x + idx[i] * d->dim, d->dim * sizeof *o->x);
        o->y[i] = d->y[idx[i]];
    }
}

void fe_data_split(const fe_dataset *d, rng *r, size_t n_test, size_t n_train,
                   fe_dataset *train, fe_dataset *test)
{
    assert(n_test < d->n);
    size_t *idx = xmalloc(d->n * sizeof *idx);
    for (size_t i = 0; i < d->n; i++)
        idx[i] = i;
    rng_shuffle(r, idx, d->n, sizeof *idx);
    size_t rest = d->n - n_test;
    if (n_train == 0 || n_train > rest)
        n_train = rest;
    take(d, idx, n_test, test);
    take(d, idx + n_test, n_train, train);
    free(idx);
}

double fe_gamma(rng *r, double shape)
{
    if (shape < 1) {
        double u = rng_u01_open0(r);
        return fe_gamma(r, shape + 1) * pow(u, 1.0 / shape);
    }
    double dd = shape - 1.0 / 3, c = 1 / sqrt(9 * dd);
    for (;;) {
        double z = rng_normal(r, 0, 1), v = 1 + c * z;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = rng_u01_open0(r);
        if (log(u) < 0.5 * z * z + dd - dd * v + dd * log(v))
            return dd * v;
    }
}

int *fe_partition(const fe_dataset *d, size_t n_dev, enum fe_partition kind, double alpha,
                  int shards_per_dev, rng *r)
{
    assert(n_dev >= 1 && n_dev <= d->n);
    int *owner = xmalloc(d->n * sizeof *owner);
    size_t *idx = xmalloc(d->n * sizeof *idx);
    for (size_t i = 0; i < d->n; i++)
        idx[i] = i;
    rng_shuffle(r, idx, d->n, sizeof *idx);
    if (kind == FE_PART_IID) {
        for (size_t i = 0; i < d->n; i++)
            owner[idx[i]] = (int)(i % n_dev);
    } else if (kind == FE_PART_DIRICHLET) {
        assert(alpha > 0);
        double *q = xmalloc(n_dev * sizeof *q);
        for (int c = 0; c < d->classes; c++) {
            size_t nc = 0;
            for (size_t i = 0; i < d->n; i++)
                nc += d->y[idx[i]] == c;
            double sum = 0;
            for (size_t k = 0; k < n_dev; k++)
                sum += q[k] = fe_gamma(r, alpha);
            /* cumulative cut points, so the counts add up to nc exactly */
            double cum = 0;
            size_t j = 0, k = 0, lim;
            cum += q[0] / sum;
            lim = (size_t)llround(cum * (double)nc);
            for (size_t i = 0; i < d->n; i++) {
                if (d->y[idx[i]] != c)
                    continue;
                while (j >= lim && k + 1 < n_dev) {
                    k++;
                    cum += q[k] / sum;
                    lim = k + 1 == n_dev ? nc : (size_t)llround(cum * (double)nc);
                }
                owner[idx[i]] = (int)k;
                j++;
            }
        }
        free(q);
    } else {
        size_t ns = n_dev * (size_t)(shards_per_dev > 0 ? shards_per_dev : 1);
        if (ns > d->n)
            ns = d->n;
        /* stable sort of the shuffled order by label: counting sort */
        size_t *by = xmalloc(d->n * sizeof *by), pos = 0;
        for (int c = 0; c < d->classes; c++)
            for (size_t i = 0; i < d->n; i++)
                if (d->y[idx[i]] == c)
                    by[pos++] = idx[i];
        size_t *shard_owner = xmalloc(ns * sizeof *shard_owner);
        for (size_t s = 0; s < ns; s++)
            shard_owner[s] = s % n_dev;
        rng_shuffle(r, shard_owner, ns, sizeof *shard_owner);
        for (size_t i = 0; i < d->n; i++)
            owner[by[i]] = (int)shard_owner[i * ns / d->n];
        free(by);
        free(shard_owner);
    }
    /* no empty device: an empty one takes a sample from the largest */
    size_t *cnt = xcalloc(n_dev, sizeof *cnt);
    for (size_t i = 0; i < d->n; i++)
        cnt[owner[i]]++;
    for (size_t k = 0; k < n_dev; k++) {
        if (cnt[k])
            continue;
        size_t big = 0;
        for (size_t m = 1; m < n_dev; m++)
            if (cnt[m] > cnt[big])
                big = m;
        for (size_t i = 0; i < d->n; i++)
            if (owner[idx[i]] == (int)big) {
                owner[idx[i]] = (int)k;
                cnt[big]--;
                cnt[k]++;
                break;
            }
    }
    free(cnt);
    free(idx);
    return owner;
}

void fe_table_fini(fe_table *t)
{
    for (size_t c = 0; c < t->ncol; c++)
        free(t->names[c]);
    free(t->names);
    free(t->v);
    free(t->line);
    free(t->cpos);
    memset(t, 0, sizeof *t);
}

int fe_table_col(const fe_table *t, const char *name)
{
    for (size_t c = 0; c < t->ncol; c++)
        if (strcmp(t->names[c], name) == 0)
            return (int)c;
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

int fe_table_load(const char *path, fe_table *t, err *e)
{
    memset(t, 0, sizeof *t);
    FILE *f = infile_open(path, "r");
    if (!f)
        return ERR(e, AISIM_ENOENT, "cannot open %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t lcap = 0, cap = 0;
    int lineno = 0, r = 0;
    while (getline(&line, &lcap, f) != -1) {
        lineno++;
        char *s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        if (!t->names) {
            size_t n = 1;
            for (char *q = s; *q; q++)
                n += *q == ',';
            t->names = xcalloc(n, sizeof *t->names);
            char *tok = s;
            for (size_t c = 0; c < n; c++) {
                char *comma = strchr(tok, ',');
                if (comma)
                    *comma = '\0';
                t->names[c] = xstrdup(trim(tok));
                t->ncol = c + 1;
                if (!*t->names[c]) {
                    r = ERR(e, AISIM_EINVAL, "%s:%d: column %zu has no name", path, lineno,
                            c + 1);
                    goto fail;
                }
                tok = comma ? comma + 1 : tok;
            }
            continue;
        }
        if (t->nrow == cap) {
            cap = cap ? 2 * cap : 64;
            t->v = xrealloc(t->v, cap * t->ncol * sizeof *t->v);
            t->line = xrealloc(t->line, cap * sizeof *t->line);
            t->cpos = xrealloc(t->cpos, cap * t->ncol * sizeof *t->cpos);
        }
        t->line[t->nrow] = lineno;
        char *p = s;
        size_t c = 0;
        for (;; c++) {
            char *end;
            while (isspace((unsigned char)*p))
                p++;
            int cp = (int)(p - line) + 1;
            double v = strtod(p, &end);
            if (c < t->ncol) {
                if (end == p || !isfinite(v)) {
                    r = ERR(e, AISIM_EINVAL, "%s:%d:%d: %s: expected a finite number, found "
                            "\"%.*s\"", path, lineno, cp, t->names[c], (int)strcspn(p, ","), p);
                    goto fail;
                }
                t->v[t->nrow * t->ncol + c] = v;
                t->cpos[t->nrow * t->ncol + c] = cp;
            }
            while (isspace((unsigned char)*end))
                end++;
            if (*end != ',') {
                if (*end != '\0') {
                    r = ERR(e, AISIM_EINVAL, "%s:%d: column %zu: unexpected \"%s\"", path,
                            lineno, c + 1, end);
                    goto fail;
                }
                break;
            }
            p = end + 1;
        }
        if (c + 1 != t->ncol) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: expected %zu columns as in the header, found %zu",
                    path, lineno, t->ncol, c + 1);
            goto fail;
        }
        t->nrow++;
    }
    if (!t->names) {
        r = ERR(e, AISIM_EINVAL, "%s: empty file (expected a header line)", path);
        goto fail;
    }
    free(line);
    fclose(f);
    return 0;
fail:
    free(line);
    fclose(f);
    fe_table_fini(t);
    return r;
}
