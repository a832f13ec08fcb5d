/*
 * out.c - the run directory, written atomically file by file.
 */
#include "aisim/out.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

typedef struct out_entry {
    char *name;         /* final file name inside the directory */
    char *tmp;          /* full path of the temporary */
    char *final;        /* full path of the final file */
    FILE *f;
} out_entry;

struct out {
    char *dir;
    int created;        /* out_open() created the directory */
    out_entry *v;
    size_t n, cap;
};

static int mkdir_p(const char *dir, int *created, err *e)
{
    char *p = xstrdup(dir);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/')
        p[--len] = '\0';
    *created = 0;
    for (char *q = p + 1;; q++) {
        char c = *q;
        if (c != '/' && c != '\0')
            continue;
        *q = '\0';
        if (mkdir(p, 0777) == 0) {
            if (c == '\0')
                *created = 1;
        } else if (errno != EEXIST) {
            int r = ERR(e, AISIM_EIO, "cannot create directory %s: %s", p, strerror(errno));
            free(p);
            return r;
        }
        *q = c;
        if (c == '\0')
            break;
    }
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        int r = ERR(e, AISIM_EIO, "%s exists and is not a directory", p);
        free(p);
        return r;
    }
    free(p);
    return 0;
}

int out_open(const char *dir, out **op, err *e)
{
    *op = NULL;
    int created;
    int r = mkdir_p(dir, &created, e);
    if (r)
        return r;
    out *o = xcalloc(1, sizeof *o);
    o->dir = xstrdup(dir);
    o->created = created;
    *op = o;
    return 0;
}

static char *join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 2;
    char *s = xmalloc(n);
    snprintf(s, n, "%s/%s%s", a, b, c);
    return s;
}

const char *out_dir(const out *o) { return o->dir; }

const char *out_name(const out *o, size_t i) { return i < o->n ? o->v[i].name : NULL; }

/* Removes the files an earlier run listed in its summary.json that this run
 * does not replace. */
static void remove_stale(out *o)
{
    char *path = join(o->dir, "summary.json", "");
    json_t *old = json_load_file(path, 0, NULL);
    free(path);
    json_t *files = old ? json_object_get(old, "files") : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(files, i, v) {
        const char *name = json_string_value(v);
        if (!name || !*name || strchr(name, '/') || name[0] == '.')
            continue;
        int mine = 0;
        for (size_t j = 0; j < o->n && !mine; j++)
            mine = strcmp(o->v[j].name, name) == 0;
        if (!mine) {
            char *p = join(o->dir, name, "");
            unlink(p);
            free(p);
        }
    }
    json_decref(old);
}

FILE *out_file(out *o, const char *name, err *e)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->v[i].name, name) == 0)
            return o->v[i].f;
    if (strchr(name, '/')) {
        ERR(e, AISIM_EINVAL, "output file name %s must not contain '/'", name);
        return NULL;
    }
    char *tname = xmalloc(strlen(name) + 8);
    sprintf(tname, ".%s.part", name);
    char *tmp = join(o->dir, tname, "");
    free(tname);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        ERR(e, AISIM_EIO, "cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return NULL;
    }
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 8;
        o->v = xrealloc(o->v, o->cap * sizeof *o->v);
    }
    o->v[o->n++] = (out_entry){xstrdup(name), tmp, join(o->dir, name, ""), f};
    return f;
}

static void out_free(out *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->v[i].name);
        free(o->v[i].tmp);
        free(o->v[i].final);
    }
    free(o->v);
    free(o->dir);
    free(o);
}

int out_commit(out *o, err *e)
{
    int r = 0;
    /* Name the file that failed, with the reason: a file whose writes
     * already failed comes first (on a full disk every later flush fails
     * too, run.log's included); fflush() again to learn errno. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < o->n; i++) {
            out_entry *x = &o->v[i];
            if (!x->f || (pass == 0 && !ferror(x->f)))
                continue;
            int bad = ferror(x->f);
            errno = 0;
            bad |= fflush(x->f) != 0;
            int en = errno;
            bad |= fclose(x->f) != 0;
            en = en ? en : errno;
            x->f = NULL;
            if (bad && !r)
                r = ERR(e, AISIM_EIO, "cannot write %s: %s", x->final,
                        en ? strerror(en) : "write error");
        }
    if (r) {
        for (size_t i = 0; i < o->n; i++)
            unlink(o->v[i].tmp);
        out_free(o);
        return r;
    }
    remove_stale(o);
    /* summary.json goes last: its presence says the run completed. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < o->n; i++) {
            out_entry *x = &o->v[i];
            if ((strcmp(x->name, "summary.json") == 0) != (pass == 1))
                continue;
            if (rename(x->tmp, x->final) != 0 && !r)
                r = ERR(e, AISIM_EIO, "cannot rename %s: %s", x->tmp, strerror(errno));
        }
    }
    out_free(o);
    return r;
}

void out_abort(out *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        if (o->v[i].f)
            fclose(o->v[i].f);
        unlink(o->v[i].tmp);
    }
    if (o->created)
        rmdir(o->dir);      /* fails harmlessly if not empty */
    out_free(o);
}

/* Significant digits of a "%g" string: leading and trailing zeros of the
 * digits (before any exponent) do not count. */
static int sig_digits(const char *s)
{
    const char *first = NULL, *last = NULL;
    for (; *s && *s != 'e'; s++)
        if (*s >= '1' && *s <= '9') {
            if (!first)
                first = s;
            last = s;
        }
    if (!first)
        return 1;
    int n = 0;
    for (s = first; s <= last; s++)
        n += *s >= '0' && *s <= '9';
    return n;
}

static int fmt_round_trips(char *buf, size_t len, int prec, double v)
{
    snprintf(buf, len, "%.*g", prec, v);
    return strtod(buf, NULL) == v;
}

void out_fmt_double(char *buf, size_t len, double v)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "inf" : "-inf");
        return;
    }
    /* The shortest precision p in 6..17 whose "%.*g" reads back as v, in
     * at most four conversions.  6 first: short numbers are common (counts,
     * round times).  For a normal double, every decimal of at most 15
     * significant digits reads back as the double nearest to it, and two
     * 15-digit decimals are further apart than a double's rounding
     * interval; so if "%.15g" reads back, no shorter decimal than its own
     * significant digits does, and p is their count.  Otherwise p is 16 or
     * 17.  Subnormals carry fewer bits, and take the search by halves over
     * 6..17 (round trip is monotone in p). */
    if (fmt_round_trips(buf, len, 6, v))
        return;
    if (fabs(v) >= DBL_MIN) {
        if (fmt_round_trips(buf, len, 15, v)) {
            int p = sig_digits(buf);
            if (p < 6)
                p = 6;
            if (p != 15)
                snprintf(buf, len, "%.*g", p, v);
        } else if (!fmt_round_trips(buf, len, 16, v)) {
            snprintf(buf, len, "%.17g", v);
        }
        return;
    }
    int lo = 7, hi = 17;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (fmt_round_trips(buf, len, mid, v))
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(buf, len, "%.*g", hi, v);
}

void out_json_num(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}
