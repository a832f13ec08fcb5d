/*
 * out.c - the run directory, written atomically file by file, locked
 * while a run writes it.
 */
#include "aisim/out.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
    int was_run_dir;    /* it was an aisim directory before this run */
    int lock_fd;        /* the marker, flock()ed while the out lives */
    unsigned tmp_seq;   /* temporaries made so far (their names' suffix) */
    out_entry *v;
    size_t n, cap;
};

static const char marker_text[] =
    "aisim output directory: aisim writes here (README.md, \"Run directory\").\n";

static char *join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 2;
    char *s = xmalloc(n);
    snprintf(s, n, "%s/%s%s", a, b, c);
    return s;
}

static int mkdir_p(const char *dir, int *created, err *e)
{
    *created = 0;
    if (!*dir)
        return ERR(e, AISIM_EINVAL, "the output directory name is empty");
    char *p = xstrdup(dir);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/')
        p[--len] = '\0';
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

/* True if DIR/summary.json is one aisim wrote: an object with
 * "aisim_version" and a "files" list. */
static int aisim_summary(const char *dir)
{
    char *path = join(dir, OUT_SUMMARY, "");
    json_t *j = json_load_file(path, 0, NULL);
    free(path);
    int ok = json_is_string(json_object_get(j, "aisim_version")) &&
             json_is_array(json_object_get(j, "files"));
    json_decref(j);
    return ok;
}

/* A temporary of an earlier run that was killed: ".NAME.PID-N.part". */
static int stale_temporary(const char *name)
{
    size_t len = strlen(name);
    if (name[0] != '.' || len < 10 || strcmp(name + len - 5, ".part") != 0)
        return 0;
    const char *p = name + len - 5;
    int digits = 0, dash = 0;
    while (p > name + 1 && (isdigit((unsigned char)p[-1]) || (p[-1] == '-' && !dash))) {
        dash += p[-1] == '-';
        digits += p[-1] != '-';
        p--;
    }
    return dash && digits >= 2 && p > name + 1 && p[-1] == '.';
}

/* Counts the entries of an existing directory and says whether the marker
 * is one of them. */
static int survey(const char *dir, size_t *entries, int *marker, err *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return ERR(e, AISIM_EIO, "cannot read directory %s: %s", dir, strerror(errno));
    struct dirent *de;
    *entries = 0;
    *marker = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        ++*entries;
        if (!strcmp(de->d_name, OUT_MARKER))
            *marker = 1;
    }
    closedir(d);
    return 0;
}

/* Removes what runs killed before they could clean up left behind (only
 * while holding the lock: then no other run is writing here). */
static void remove_stale_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)))
        if (stale_temporary(de->d_name)) {
            char *p = join(dir, de->d_name, "");
            unlink(p);
            free(p);
        }
    closedir(d);
}

/* Creates the marker if needed and locks it (flock: released by the
 * kernel if the process dies, so a lock is never stale). */
static int take_lock(out *o, err *e)
{
    char *path = join(o->dir, OUT_MARKER, "");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        int r = ERR(e, AISIM_EIO, "cannot create %s: %s", path, strerror(errno));
        free(path);
        return r;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        int r = busy ? ERR(e, AISIM_ERUN,
                           "%s: another aisim run is writing into this directory (it holds "
                           "the lock on %s); wait for it to finish or choose another --out",
                           o->dir, path)
                     : ERR(e, AISIM_EIO, "cannot lock %s: %s", path, strerror(errno));
        close(fd);
        free(path);
        return r;
    }
    free(path);
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0 &&
        write(fd, marker_text, sizeof marker_text - 1) != (ssize_t)(sizeof marker_text - 1)) {
        close(fd);
        return ERR(e, AISIM_EIO, "cannot write %s/%s", o->dir, OUT_MARKER);
    }
    o->lock_fd = fd;
    return 0;
}

static void out_free(out *o);

int out_open(const char *dir, unsigned flags, out **op, err *e)
{
    *op = NULL;
    int created, marker = 0;
    size_t entries = 0;
    int r = mkdir_p(dir, &created, e);
    if (!r && !created)
        r = survey(dir, &entries, &marker, e);
    if (r)
        return r;
    /* An aisim directory: the marker, or a summary.json of aisim's from
     * before the marker existed. */
    int run_dir = marker || (entries > 0 && aisim_summary(dir));
    if (entries > 0 && !run_dir && !(flags & OUT_FORCE))
        return ERR(e, AISIM_EINVAL,
                   "%s: not empty and not an aisim output directory (no %s marker, no "
                   "summary.json of aisim's); choose a new or empty directory, or give --force "
                   "to write into it anyway (files aisim did not write are kept)",
                   dir, OUT_MARKER);
    out *o = xcalloc(1, sizeof *o);
    o->dir = xstrdup(dir);
    o->created = created;
    o->was_run_dir = run_dir;
    o->lock_fd = -1;
    if ((r = take_lock(o, e))) {
        if (created)
            rmdir(dir);     /* fails harmlessly if the other run made the marker */
        out_free(o);
        return r;
    }
    if (run_dir)
        remove_stale_temporaries(dir);
    *op = o;
    return 0;
}

const char *out_dir(const out *o) { return o->dir; }

const char *out_name(const out *o, size_t i) { return i < o->n ? o->v[i].name : NULL; }

/* Removes the files an earlier run listed in its summary.json that this run
 * does not replace: only in a directory that was aisim's before this run,
 * only regular files, only names without a '/' or a leading '.'. */
static void remove_stale(out *o)
{
    if (!o->was_run_dir)
        return;
    char *path = join(o->dir, OUT_SUMMARY, "");
    json_t *old = json_load_file(path, 0, NULL);
    free(path);
    json_t *files = json_is_string(json_object_get(old, "aisim_version"))
                        ? json_object_get(old, "files") : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(files, i, v) {
        const char *name = json_string_value(v);
        if (!name || !*name || strchr(name, '/') || name[0] == '.')
            continue;
        int mine = 0;
        for (size_t j = 0; j < o->n && !mine; j++)
            mine = strcmp(o->v[j].name, name) == 0;
        struct stat st;
        char *p = join(o->dir, name, "");
        if (!mine && lstat(p, &st) == 0 && S_ISREG(st.st_mode))
            unlink(p);
        free(p);
    }
    json_decref(old);
}

/* Creates a temporary with a name no other process uses:
 * DIR/.NAME.PID-N.part, N counting this out's temporaries. */
static FILE *tmp_create(out *o, const char *name, char **tmp, err *e)
{
    for (int tries = 0; tries < 100; tries++) {
        size_t n = strlen(name) + 48;
        char *tname = xmalloc(n);
        snprintf(tname, n, ".%s.%ld-%u.part", name, (long)getpid(), o->tmp_seq++);
        char *path = join(o->dir, tname, "");
        free(tname);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            FILE *f = fdopen(fd, "w");
            if (f) {
                *tmp = path;
                return f;
            }
            close(fd);
            unlink(path);
        }
        if (fd >= 0 || errno != EEXIST) {
            ERR(e, AISIM_EIO, "cannot write %s: %s", path, strerror(errno));
            free(path);
            return NULL;
        }
        free(path);
    }
    ERR(e, AISIM_EIO, "cannot create a temporary file in %s", o->dir);
    return NULL;
}

FILE *out_file(out *o, const char *name, err *e)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->v[i].name, name) == 0)
            return o->v[i].f;
    if (strchr(name, '/') || name[0] == '.' || !*name) {
        ERR(e, AISIM_EINVAL, "output file name \"%s\" must not contain '/' or start with '.'",
            name);
        return NULL;
    }
    char *tmp;
    FILE *f = tmp_create(o, name, &tmp, e);
    if (!f)
        return NULL;
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
    if (o->lock_fd >= 0)
        close(o->lock_fd);
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
            if ((strcmp(x->name, OUT_SUMMARY) == 0) != (pass == 1))
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
    if (o->created) {
        /* Removed if the marker is all that is left in it. */
        size_t entries;
        int marker;
        if (survey(o->dir, &entries, &marker, NULL) == 0 && entries == 1 && marker) {
            char *m = join(o->dir, OUT_MARKER, "");
            unlink(m);
            free(m);
        }
        rmdir(o->dir);      /* fails harmlessly if not empty */
    }
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
