/*
 * sweep.c - `aisim sweep`: the cartesian product of --vary value lists, times
 * seeds, each point one ordinary run, and one table of every point's results.
 *
 * A point is exactly `aisim run SCENARIO --set ... --set KEY=VALUE ...
 * --seed N --out DIR/<point>`, so a sweep can never disagree with the runs a
 * user would make by hand.  Every point is checked (configure, as `aisim
 * check` does) before any runs: a typo in the last value of a list must not
 * cost the hours of the points before it, and leaves nothing behind.  The
 * table (sweep.csv, and sweep.json with the same content) is read back from
 * the points' summary.json files, so its numbers are the files' numbers to
 * the digit, and it is renamed into place only once every point completed.
 *
 * Points run in a fixed order (first --vary slowest, seed fastest); with
 * --jobs N they run in N child processes, but the table is still assembled
 * in that order, so it does not depend on N.  Started by `mpirun -n N`
 * (sweep_mpi.h), rank r runs the points i with i mod N = r, one after
 * another, into the same directory (a file system every rank sees); rank 0
 * checks the points first and writes the table once every rank is done,
 * or names the failed point and its rank.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "aisim/out.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "cli/scenario.h"
#include "cli/sweep_mpi.h"

/* Longest value or key label in a point name; longer ones are cut (and made
 * unique again), so that names stay readable and within NAME_MAX. */
#define TAG_MAX 40
#define NAME_MAX_LEN 200

typedef struct vary {
    char *key;          /* full key path, as given */
    char *label;        /* its part of a point name: the last path component */
    int nval;
    char **val;         /* YAML texts */
    char **tag;         /* filesystem-safe forms of val, unique within the list */
} vary;

typedef struct sweep {
    const char *scenario;
    const char *out_root;
    const char **sets;  /* --set assignments */
    int nsets;
    vary *v;
    int nv;
    int seeded;         /* --seeds given: seeds belong to point names */
    long long seed_lo, seed_hi;
    int quiet, jobs;
    int force;              /* --force: out_open(OUT_FORCE) for the sweep and its points */
    size_t npoints;
} sweep;

/* One point: indexes into each vary list, and its seed (if seeded). */
typedef struct point {
    int *idx;
    long long seed;
    char seed_s[24];
    char *name;
    const char **assign;    /* sets, then one KEY=VALUE per vary */
    int nassign;
} point;

static int sweep_usage(const char *msg)
{
    fprintf(stderr, "aisim sweep: %s\nusage: " CLI_SWEEP_USAGE "\n", msg);
    return EXIT_BAD_INPUT;
}

/* ---- parsing ------------------------------------------------------------ */

/* Splits a value list on commas outside brackets, braces and quotes, so that
 * a value can itself be a YAML flow map or list.  Values are trimmed. */
static int split_values(const char *list, vary *v, char *msg, size_t msglen)
{
    const char *start = list;
    int depth = 0;
    char quote = 0, prev = ',';   /* last character outside blanks */
    for (const char *p = list;; p++) {
        char c = *p;
        /* A quote opens a YAML quoted scalar only where one can start
         * ("don't" is a plain scalar). */
        int opens = (c == '\'' || c == '"') && strchr(",[{:", prev);
        if (c != ' ' && c != '\t')
            prev = c;
        if (quote && c == quote)
            quote = 0;
        else if (quote && c)
            continue;
        else if (opens)
            quote = c;
        else if (c == '[' || c == '{')
            depth++;
        else if ((c == ']' || c == '}') && --depth < 0)
            break;
        if (c && (c != ',' || depth > 0 || quote))
            continue;
        if (c == '\0' && (depth || quote))
            break;
        const char *a = start, *b = p;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (a == b) {
            snprintf(msg, msglen, "--vary %s: empty value in \"%s\"", v->key, list);
            return -1;
        }
        v->val = xrealloc(v->val, (size_t)(v->nval + 1) * sizeof *v->val);
        v->val[v->nval] = xmalloc((size_t)(b - a) + 1);
        memcpy(v->val[v->nval], a, (size_t)(b - a));
        v->val[v->nval][b - a] = '\0';
        for (int i = 0; i < v->nval; i++)
            if (strcmp(v->val[i], v->val[v->nval]) == 0) {
                snprintf(msg, msglen, "--vary %s: value \"%s\" given twice", v->key, v->val[i]);
                free(v->val[v->nval]);
                return -1;
            }
        v->nval++;
        if (c == '\0')
            return 0;
        start = p + 1;
    }
    snprintf(msg, msglen, "--vary %s: unbalanced brackets or quotes in \"%s\"", v->key, list);
    return -1;
}

/* A filesystem-safe form of s in b: letters, digits and ._+- are kept, every
 * other run of characters becomes one '_'; no leading or trailing '_'.  A
 * name must not start with '.' or '-' (a hidden file, an option), so only
 * text that does not start a name (lead_ok) may: a value "-5" stays "-5". */
static void safe_tag(char *b, size_t n, const char *s, int lead_ok)
{
    size_t k = 0;
    int gap = 0;
    for (; *s && k + 2 < n; s++) {
        unsigned char c = (unsigned char)*s;
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   ((k > 0 || lead_ok) && (c == '.' || c == '_' || c == '+' || c == '-'));
        if (!keep) {
            gap = k > 0;
            continue;
        }
        if (gap)
            b[k++] = '_';
        gap = 0;
        b[k++] = (char)c;
    }
    b[k] = '\0';
    if (k == 0)
        snprintf(b, n, "empty");
}

static int tags_unique(char **tag, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(tag[i], tag[j]) == 0)
                return 0;
    return 1;
}

/* Tags for one list: the safe form of each value; values whose forms
 * collide ("{a: 1}" and "[a, 1]") get their position appended; if even
 * that collides, every value is named by its position. */
static void make_tags(vary *v)
{
    char b[TAG_MAX + 16];
    v->tag = xcalloc((size_t)v->nval, sizeof *v->tag);
    for (int i = 0; i < v->nval; i++) {
        safe_tag(b, TAG_MAX + 1, v->val[i], 1);
        v->tag[i] = xstrdup(b);
    }
    char **plain = xcalloc((size_t)v->nval, sizeof *plain);
    memcpy(plain, v->tag, (size_t)v->nval * sizeof *plain);
    for (int i = 0; i < v->nval; i++) {
        int clash = 0;
        for (int j = 0; j < v->nval; j++)
            clash |= j != i && strcmp(plain[i], plain[j]) == 0;
        if (clash) {
            snprintf(b, sizeof b, "%s_%d", plain[i], i + 1);
            v->tag[i] = xstrdup(b);
        }
    }
    for (int i = 0; i < v->nval; i++)
        if (v->tag[i] != plain[i])
            free(plain[i]);
    free(plain);
    if (tags_unique(v->tag, v->nval))
        return;
    for (int i = 0; i < v->nval; i++) {
        free(v->tag[i]);
        snprintf(b, sizeof b, "v%d", i + 1);
        v->tag[i] = xstrdup(b);
    }
}

/* Labels: the key's last path component ("net.background.load" -> "load");
 * keys whose last components coincide are named by their whole path. */
static void make_labels(sweep *sw)
{
    char b[TAG_MAX + 1];
    for (int i = 0; i < sw->nv; i++) {
        const char *k = sw->v[i].key, *dot = strrchr(k, '.');
        safe_tag(b, sizeof b, dot ? dot + 1 : k, 0);
        sw->v[i].label = xstrdup(b);
    }
    for (int i = 0; i < sw->nv; i++) {
        int clash = 0;
        for (int j = 0; j < sw->nv; j++)
            clash |= j != i && strcmp(sw->v[i].label, sw->v[j].label) == 0;
        if (clash) {
            safe_tag(b, sizeof b, sw->v[i].key, 0);
            free(sw->v[i].label);
            sw->v[i].label = xstrdup(b);
        }
    }
}

static int parse_vary(sweep *sw, const char *arg, char *msg, size_t msglen)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        snprintf(msg, msglen, "--vary expects KEY=V1,V2,..., found \"%s\"", arg);
        return -1;
    }
    sw->v = xrealloc(sw->v, (size_t)(sw->nv + 1) * sizeof *sw->v);
    vary *v = &sw->v[sw->nv++];
    memset(v, 0, sizeof *v);
    v->key = xmalloc((size_t)(eq - arg) + 1);
    memcpy(v->key, arg, (size_t)(eq - arg));
    v->key[eq - arg] = '\0';
    if (strcmp(v->key, "seed") == 0) {
        snprintf(msg, msglen, "vary the seed with --seeds N or --seeds A..B, not --vary seed");
        return -1;
    }
    for (int i = 0; i < sw->nv - 1; i++)
        if (strcmp(sw->v[i].key, v->key) == 0) {
            snprintf(msg, msglen, "--vary %s given twice", v->key);
            return -1;
        }
    return split_values(eq + 1, v, msg, msglen);
}

static int parse_count(const char *s, long long *val)
{
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (!*s || *end || s[0] == '-' || errno || n > 9007199254740992LL)
        return -1;
    *val = n;
    return 0;
}

/* --seeds N (seeds 1..N) or --seeds A..B. */
static int parse_seeds(sweep *sw, const char *arg)
{
    const char *dots = strstr(arg, "..");
    if (!dots) {
        if (parse_count(arg, &sw->seed_hi) || sw->seed_hi < 1)
            return -1;
        sw->seed_lo = 1;
    } else {
        char lo[32];
        if ((size_t)(dots - arg) >= sizeof lo)
            return -1;
        memcpy(lo, arg, (size_t)(dots - arg));
        lo[dots - arg] = '\0';
        if (parse_count(lo, &sw->seed_lo) || parse_count(dots + 2, &sw->seed_hi) ||
            sw->seed_lo > sw->seed_hi)
            return -1;
    }
    sw->seeded = 1;
    return 0;
}

static void sweep_free(sweep *sw)
{
    for (int i = 0; i < sw->nv; i++) {
        vary *v = &sw->v[i];
        for (int k = 0; k < v->nval; k++) {
            free(v->val[k]);
            if (v->tag)
                free(v->tag[k]);
        }
        free(v->val);
        free(v->tag);
        free(v->key);
        free(v->label);
    }
    free(sw->v);
    free(sw->sets);
}

/* ---- points ------------------------------------------------------------- */

/* Point i of the product: first --vary slowest, seed fastest. */
static void point_make(const sweep *sw, size_t i, point *p)
{
    memset(p, 0, sizeof *p);
    size_t nseeds = sw->seeded ? (size_t)(sw->seed_hi - sw->seed_lo + 1) : 1;
    p->seed = sw->seed_lo + (long long)(i % nseeds);
    snprintf(p->seed_s, sizeof p->seed_s, "%lld", p->seed);
    i /= nseeds;
    p->idx = xcalloc((size_t)sw->nv + 1, sizeof *p->idx);
    for (int k = sw->nv - 1; k >= 0; k--) {
        p->idx[k] = (int)(i % (size_t)sw->v[k].nval);
        i /= (size_t)sw->v[k].nval;
    }
    p->assign = xcalloc((size_t)(sw->nsets + sw->nv) + 1, sizeof *p->assign);
    for (int k = 0; k < sw->nsets; k++)
        p->assign[p->nassign++] = sw->sets[k];
    size_t len = 1;
    for (int k = 0; k < sw->nv; k++) {
        const vary *v = &sw->v[k];
        size_t n = strlen(v->key) + strlen(v->val[p->idx[k]]) + 2;
        char *a = xmalloc(n);
        snprintf(a, n, "%s=%s", v->key, v->val[p->idx[k]]);
        p->assign[p->nassign++] = a;
        len += strlen(v->label) + strlen(v->tag[p->idx[k]]) + 2;
    }
    len += sizeof p->seed_s + 8;
    p->name = xcalloc(1, len);
    for (int k = 0; k < sw->nv; k++)
        snprintf(p->name + strlen(p->name), len - strlen(p->name), "%s%s=%s", k ? "," : "",
                 sw->v[k].label, sw->v[k].tag[p->idx[k]]);
    if (sw->seeded)
        snprintf(p->name + strlen(p->name), len - strlen(p->name), "%sseed=%lld",
                 sw->nv ? "," : "", p->seed);
}

static void point_free(const sweep *sw, point *p)
{
    for (int k = 0; k < sw->nv; k++)
        free((char *)p->assign[sw->nsets + k]);
    free(p->assign);
    free(p->idx);
    free(p->name);
}

/* Point names are unique by construction (labels unique, tags unique per
 * list); only very long ones are replaced by their number. */
static void points_make(const sweep *sw, point *pts)
{
    for (size_t i = 0; i < sw->npoints; i++) {
        point_make(sw, i, &pts[i]);
        if (strlen(pts[i].name) > NAME_MAX_LEN)
            snprintf(pts[i].name, strlen(pts[i].name) + 1, "point-%04zu", i + 1);
    }
}

static run_opts point_opts(const sweep *sw, const point *p, const char *dir, int check)
{
    return (run_opts){.scenario = sw->scenario, .out_dir = dir, .seed = p->seed_s,
                      .sets = p->assign, .nsets = p->nassign, .check_only = check,
                      .force = sw->force};
}

/* Checks every point; on the first bad one prints the scenario's error and
 * says which point, returns the exit code. */
static int points_check(const sweep *sw, const point *pts)
{
    for (size_t i = 0; i < sw->npoints; i++) {
        run_opts o = point_opts(sw, &pts[i], NULL, 1);
        err e = {0};
        int r = run_scenario(&o, NULL, NULL, &e);
        if (r) {
            cli_print_error(&e);
            fprintf(stderr, "aisim sweep: point %s is invalid; nothing was run\n",
                    pts[i].name);
            return run_exit_code(r);
        }
    }
    return 0;
}

static char *point_dir(const sweep *sw, const point *p)
{
    size_t n = strlen(sw->out_root) + strlen(p->name) + 2;
    char *d = xmalloc(n);
    snprintf(d, n, "%s/%s", sw->out_root, p->name);
    return d;
}

/* Runs one point in this process; returns an exit code. */
static int point_run(const sweep *sw, const point *p)
{
    char *dir = point_dir(sw, p);
    run_opts o = point_opts(sw, p, dir, 0);
    err e = {0};
    int r = run_scenario(&o, NULL, NULL, &e);
    free(dir);
    if (r)
        cli_print_error(&e);
    return run_exit_code(r);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(const sweep *sw, size_t done, const point *p, double secs)
{
    if (!sw->quiet)
        printf("  [%zu/%zu] %s  %.1fs\n", done, sw->npoints, p->name, secs);
    fflush(stdout);
}

static int point_failed(const point *p, int rc)
{
    fprintf(stderr, "aisim sweep: point %s failed; no sweep.csv written\n", p->name);
    return rc ? rc : EXIT_RUN_FAILED;
}

static int points_run_serial(const sweep *sw, const point *pts)
{
    for (size_t i = 0; i < sw->npoints; i++) {
        double t0 = wall_now();
        int rc = point_run(sw, &pts[i]);
        if (rc)
            return point_failed(&pts[i], rc);
        progress(sw, i + 1, &pts[i], wall_now() - t0);
    }
    return 0;
}

static volatile sig_atomic_t sweep_stop;

static void on_stop(int sig) { sweep_stop = sig; }

/* --jobs N: up to N points at a time, each in a child process that writes
 * its own run directory; the first failure stops launching new points.
 * SIGINT, SIGTERM or SIGHUP to this process (unless it was started with
 * the signal ignored, as under nohup) stops launching and is passed on to
 * the running points, which discard their runs as a single run does; then
 * the sweep exits 1 (without this, the parent died and its children ran
 * on, orphaned, writing into the sweep's directory). */
static int points_run_parallel(const sweep *sw, const point *pts)
{
    pid_t *pid = xcalloc(sw->npoints, sizeof *pid);
    double *t0 = xcalloc(sw->npoints, sizeof *t0);
    size_t next = 0, done = 0, running = 0;
    int rc = 0;
    const point *bad = NULL;
    static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa = {.sa_handler = on_stop}, old_sa[3];
    sigemptyset(&sa.sa_mask);
    sweep_stop = 0;
    for (int i = 0; i < 3; i++)
        run_catch_signal(stop_sigs[i], &sa, &old_sa[i]);
    bool passed_on = false;
    while (running || (next < sw->npoints && !rc && !sweep_stop)) {
        while (!rc && !sweep_stop && running < (size_t)sw->jobs && next < sw->npoints) {
            fflush(NULL);   /* a child must not write our buffered output again */
            pid_t c = fork();
            if (c == 0) {
                for (int i = 0; i < 3; i++)     /* the run installs its own */
                    sigaction(stop_sigs[i], &old_sa[i], NULL);
                _exit(point_run(sw, &pts[next]));
            }
            if (c < 0) {
                fprintf(stderr, "aisim sweep: cannot start a process: %s\n", strerror(errno));
                rc = EXIT_RUN_FAILED;
                break;
            }
            pid[next] = c;
            t0[next++] = wall_now();
            running++;
        }
        if (!running)
            break;
        if (sweep_stop && !passed_on) {
            for (size_t i = 0; i < next; i++)
                if (pid[i] > 0)
                    kill(pid[i], sweep_stop);
            passed_on = true;
        }
        int st;
        pid_t c = wait(&st);
        if (c < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        size_t i = 0;
        while (i < next && pid[i] != c)
            i++;
        if (i == next)
            continue;
        pid[i] = 0;
        running--;
        int prc = WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_RUN_FAILED;
        if (prc && !rc) {
            rc = prc;
            bad = &pts[i];
        } else if (!prc) {
            progress(sw, ++done, &pts[i], wall_now() - t0[i]);
        }
    }
    free(pid);
    free(t0);
    for (int i = 0; i < 3; i++)
        sigaction(stop_sigs[i], &old_sa[i], NULL);
    if (sweep_stop) {
        fprintf(stderr, "aisim sweep: interrupted; the running points were stopped and no "
                        "sweep.csv was written\n");
        return EXIT_RUN_FAILED;
    }
    return rc ? (bad ? point_failed(bad, rc) : rc) : 0;
}

/* Under MPI: this rank's points (i mod size = rank), one after another; the
 * first failure stops them, its index in *failed. */
static int points_run_rank(const sweep *sw, const point *pts, int rank, int size, long *failed)
{
    *failed = -1;
    for (size_t i = (size_t)rank; i < sw->npoints; i += (size_t)size) {
        double t0 = wall_now();
        int rc = point_run(sw, &pts[i]);
        if (rc) {
            *failed = (long)i;
            return rc;
        }
        if (!sw->quiet)
            printf("  [rank %d] %s  %.1fs\n", rank, pts[i].name, wall_now() - t0);
        fflush(stdout);
    }
    return 0;
}

/* Every rank's outcome at rank 0: the failed point of the lowest failing
 * rank is named with its rank; the exit code is shared by all ranks. */
static int ranks_outcome(const point *pts, int rank, int size, int rc, long failed)
{
    int *rcs = xcalloc((size_t)size, sizeof *rcs);
    long *at = xcalloc((size_t)size, sizeof *at);
    sweep_mpi_gather(rc, failed, rcs, at);
    int all = 0;
    for (int r = 0; rank == 0 && r < size && !all; r++)
        if (rcs[r]) {
            all = rcs[r];
            if (at[r] >= 0)
                fprintf(stderr, "aisim sweep: point %s failed on rank %d; no sweep.csv "
                        "written\n", pts[at[r]].name, r);
        }
    free(rcs);
    free(at);
    return sweep_mpi_bcast(rank == 0 ? all : 0);
}

/* ---- the table ---------------------------------------------------------- */

typedef struct row {
    size_t n;
    char **col, **text;     /* result column name and its CSV text ("" for null) */
    json_t **val;           /* the same as JSON (number or null) */
} row;

typedef struct columns {
    size_t n, cap;
    char **name;
} columns;

static void columns_add(columns *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->name[i], name) == 0)
            return;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 32;
        c->name = xrealloc(c->name, c->cap * sizeof *c->name);
    }
    c->name[c->n++] = xstrdup(name);
}

static void row_add(row *r, columns *c, const char *name, json_t *v)
{
    char b[64] = "";
    if (json_is_integer(v))
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        out_fmt_double(b, sizeof b, json_real_value(v));
    r->col = xrealloc(r->col, (r->n + 1) * sizeof *r->col);
    r->text = xrealloc(r->text, (r->n + 1) * sizeof *r->text);
    r->val = xrealloc(r->val, (r->n + 1) * sizeof *r->val);
    r->col[r->n] = xstrdup(name);
    r->text[r->n] = xstrdup(b);
    r->val[r->n++] = json_is_number(v) ? json_incref(v) : json_null();
    columns_add(c, name);
}

/* Every numeric (or null: a metric without a value) leaf under v, named by
 * its dotted path.  Objects named "wall" hold wall-clock figures, which
 * differ from run to run; they stay out so that the table repeats. */
static void flatten(json_t *v, const char *path, row *r, columns *c)
{
    if (json_is_number(v) || json_is_null(v)) {
        row_add(r, c, path, v);
        return;
    }
    char sub[512];
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            if (strcmp(k, "wall") == 0)
                continue;
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k);
            flatten(x, sub, r, c);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            snprintf(sub, sizeof sub, "%s%s%zu", path, *path ? "." : "", i);
            flatten(x, sub, r, c);
        }
    }
}

static void row_free(row *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->col[i]);
        free(r->text[i]);
        json_decref(r->val[i]);
    }
    free(r->col);
    free(r->text);
    free(r->val);
}

static size_t row_find(const row *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->col[i], name) == 0)
            return i;
    return SIZE_MAX;
}

/* Reads each point's summary.json (what the run wrote, to the digit). */
static int rows_load(const sweep *sw, const point *pts, row *rows, columns *c, err *e)
{
    for (size_t i = 0; i < sw->npoints; i++) {
        char *dir = point_dir(sw, &pts[i]);
        size_t n = strlen(dir) + 16;
        char *path = xmalloc(n);
        snprintf(path, n, "%s/summary.json", dir);
        free(dir);
        json_error_t je;
        json_t *sum = json_load_file(path, 0, &je);
        if (!sum) {
            int r = ERR(e, AISIM_EIO, "%s: cannot read: %s", path, je.text);
            free(path);
            return r;
        }
        free(path);
        flatten(json_object_get(sum, "results"), "", &rows[i], c);
        json_decref(sum);
    }
    return 0;
}

/* A CSV field, quoted (RFC 4180) when it holds a comma, quote or newline:
 * point names and flow-map values do. */
static void csv_field(FILE *f, const char *s, int first)
{
    if (!first)
        fputc(',', f);
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(FILE *f, const sweep *sw, const point *pts, const row *rows,
                      const columns *c)
{
    for (int k = 0; k < sw->nv; k++)
        csv_field(f, sw->v[k].key, k == 0);
    csv_field(f, "seed", sw->nv == 0);
    csv_field(f, "run_dir", 0);
    for (size_t j = 0; j < c->n; j++)
        csv_field(f, c->name[j], 0);
    fputc('\n', f);
    for (size_t i = 0; i < sw->npoints; i++) {
        for (int k = 0; k < sw->nv; k++)
            csv_field(f, sw->v[k].val[pts[i].idx[k]], k == 0);
        csv_field(f, pts[i].seed_s, sw->nv == 0);
        csv_field(f, pts[i].name, 0);
        for (size_t j = 0; j < c->n; j++) {
            size_t at = row_find(&rows[i], c->name[j]);
            csv_field(f, at == SIZE_MAX ? "" : rows[i].text[at], 0);
        }
        fputc('\n', f);
    }
}

/* A varied value as JSON: a number if the YAML text is a plain number,
 * else the text. */
static json_t *value_json(const char *s)
{
    char *end;
    if (!*s || strspn(s, "0123456789+-.eE") != strlen(s))
        return json_string(s);
    errno = 0;
    long long i = strtoll(s, &end, 10);
    if (!*end && !errno)
        return json_integer(i);
    double d = strtod(s, &end);
    return !*end && isfinite(d) ? json_real(d) : json_string(s);
}

static json_t *sweep_json(const sweep *sw, const char *name, const point *pts, const row *rows,
                          const columns *c)
{
    json_t *root = json_object(), *jvary = json_array(), *cols = json_array(),
           *prow = json_array();
    json_object_set_new(root, "scenario", json_string(name));
    for (int k = 0; k < sw->nv; k++) {
        json_t *vk = json_object(), *vals = json_array();
        json_object_set_new(vk, "key", json_string(sw->v[k].key));
        for (int i = 0; i < sw->v[k].nval; i++)
            json_array_append_new(vals, json_string(sw->v[k].val[i]));
        json_object_set_new(vk, "values", vals);
        json_array_append_new(jvary, vk);
        json_array_append_new(cols, json_string(sw->v[k].key));
    }
    json_object_set_new(root, "vary", jvary);
    json_array_append_new(cols, json_string("seed"));
    json_array_append_new(cols, json_string("run_dir"));
    for (size_t j = 0; j < c->n; j++)
        json_array_append_new(cols, json_string(c->name[j]));
    json_object_set_new(root, "columns", cols);
    for (size_t i = 0; i < sw->npoints; i++) {
        json_t *o = json_object();
        for (int k = 0; k < sw->nv; k++)
            json_object_set_new(o, sw->v[k].key, value_json(sw->v[k].val[pts[i].idx[k]]));
        json_object_set_new(o, "seed", json_integer(pts[i].seed));
        json_object_set_new(o, "run_dir", json_string(pts[i].name));
        for (size_t j = 0; j < c->n; j++) {
            size_t at = row_find(&rows[i], c->name[j]);
            json_object_set(o, c->name[j], at == SIZE_MAX ? json_null() : rows[i].val[at]);
        }
        json_array_append_new(prow, o);
    }
    json_object_set_new(root, "points", prow);
    return root;
}

/* sweep.csv and sweep.json into the sweep directory od, renamed into place
 * together (out.h); commits or aborts od. */
static int write_table(const sweep *sw, const char *name, const point *pts, out *od, err *e)
{
    row *rows = xcalloc(sw->npoints, sizeof *rows);
    columns c = {0};
    int r = rows_load(sw, pts, rows, &c, e);
    FILE *fc = r ? NULL : out_file(od, "sweep.csv", e);
    FILE *fj = fc ? out_file(od, "sweep.json", e) : NULL;
    if (!r && !fj)
        r = e->code;
    if (!r) {
        write_csv(fc, sw, pts, rows, &c);
        json_t *j = sweep_json(sw, name, pts, rows, &c);
        json_dumpf(j, fj, RUN_JSON_FLAGS);
        fputc('\n', fj);
        json_decref(j);
        r = out_commit(od, e);
        od = NULL;
    }
    out_abort(od);
    if (!r && !sw->quiet)
        printf("sweep: %s/sweep.csv (%zu points, %zu result columns)\n", sw->out_root,
               sw->npoints, c.n);
    for (size_t i = 0; i < sw->npoints; i++)
        row_free(&rows[i]);
    free(rows);
    for (size_t j = 0; j < c.n; j++)
        free(c.name[j]);
    free(c.name);
    return r;
}

/* A table from an earlier sweep into the same directory must not outlive a
 * sweep that fails: it would look like this sweep's result. */
static void remove_old_table(const char *root)
{
    static const char *const names[] = {"sweep.csv", "sweep.json"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(root) + strlen(names[i]) + 2;
        char *p = xmalloc(n);
        snprintf(p, n, "%s/%s", root, names[i]);
        unlink(p);
        free(p);
    }
}

/* ---- the command -------------------------------------------------------- */

static int parse_args(int argc, char **argv, sweep *sw)
{
    static const struct option opts[] = {
        {"vary", required_argument, 0, 'V'}, {"seeds", required_argument, 0, 'N'},
        {"out", required_argument, 0, 'o'},  {"set", required_argument, 0, 'S'},
        {"quiet", no_argument, 0, 'q'},      {"jobs", required_argument, 0, 'j'},
        {"force", no_argument, 0, 'f'},      {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    char msg[1024];
    long long jobs;
    int c;
    sw->sets = xcalloc((size_t)argc + 1, sizeof *sw->sets);
    sw->jobs = 1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "V:N:o:S:qj:fh", opts, NULL)) != -1) {
        switch (c) {
        case 'V':
            if (parse_vary(sw, optarg, msg, sizeof msg))
                return sweep_usage(msg);
            break;
        case 'N':
            if (parse_seeds(sw, optarg))
                return sweep_usage("--seeds expects N (seeds 1..N) or A..B (0 <= A <= B)");
            break;
        case 'o':
            if (!*optarg)
                return sweep_usage("--out expects a directory name, found \"\"");
            sw->out_root = optarg;
            break;
        case 'S':
            if (cli_bad_set(optarg, optind < argc ? argv[optind] : NULL, msg, sizeof msg))
                return sweep_usage(msg);
            sw->sets[sw->nsets++] = optarg;
            break;
        case 'q': sw->quiet = 1; break;
        case 'f': sw->force = 1; break;
        case 'h': return CLI_HELP;
        case 'j':
            if (parse_count(optarg, &jobs) || jobs < 1 || jobs > 1024)
                return sweep_usage("--jobs expects an integer from 1 to 1024");
            sw->jobs = (int)jobs;
            break;
        default:
            snprintf(msg, sizeof msg, "unknown or incomplete option \"%s\"", argv[optind - 1]);
            return sweep_usage(msg);
        }
    }
    if (optind != argc - 1)
        return sweep_usage(optind >= argc ? "missing SCENARIO" : "expected one SCENARIO");
    if (sw->nv == 0 && !sw->seeded)
        return sweep_usage("nothing to sweep: give --vary KEY=V1,V2,... or --seeds");
    sw->scenario = argv[optind];
    sw->npoints = sw->seeded ? (size_t)(sw->seed_hi - sw->seed_lo + 1) : 1;
    for (int k = 0; k < sw->nv; k++)
        sw->npoints *= (size_t)sw->v[k].nval;
    if (sw->npoints > 100000)
        return sweep_usage("more than 100000 points; split the sweep");
    for (int k = 0; k < sw->nv; k++)
        make_tags(&sw->v[k]);
    make_labels(sw);
    return 0;
}

/* The scenario's name (for the default directory) and, without --seeds, its
 * own seed (after --set), which every point then uses. */
static int base_scenario(sweep *sw, char *name, size_t n)
{
    scenario sc;
    err e = {0};
    int r = scenario_load(&sc, sw->scenario, sw->sets, sw->nsets, NULL, &e);
    if (r) {
        cli_print_error(&e);
        return run_exit_code(r);
    }
    snprintf(name, n, "%s", sc.name);
    if (!sw->seeded)
        sw->seed_lo = sw->seed_hi = sc.seed;
    scenario_fini(&sc);
    return 0;
}

int cli_sweep(int argc, char **argv)
{
    sweep sw = {0};
    char name[256], defdir[300];
    int rc = parse_args(argc, argv, &sw);
    if (!rc)
        rc = base_scenario(&sw, name, sizeof name);
    /* Under mpirun every rank runs this command; the collectives below are
     * called by every rank in the same order, whatever happened. */
    int rank = 0, size = 1;
    bool mpi = !rc && sweep_mpi_launched();
    if (mpi) {
        char msg[300];
        if (sweep_mpi_init(&rank, &size, msg, sizeof msg)) {
            fprintf(stderr, "aisim sweep: %s\n", msg);
            rc = EXIT_BAD_INPUT;
            mpi = false;
        }
    }
    if (rc) {
        sweep_free(&sw);
        return rc;
    }
    if (!sw.out_root) {
        snprintf(defdir, sizeof defdir, "out/%s-sweep", name);
        sw.out_root = defdir;
    }
    point *pts = xcalloc(sw.npoints, sizeof *pts);
    points_make(&sw, pts);
    rc = rank == 0 ? points_check(&sw, pts) : 0;
    /* The sweep directory stays locked (out.h) until the table is in place:
     * a second sweep into it fails at once. */
    out *od = NULL;
    err e = {0};
    if (!rc && rank == 0 && (rc = out_open(sw.out_root, sw.force ? OUT_FORCE : 0, &od, &e))) {
        cli_print_error(&e);
        rc = run_exit_code(rc);
    }
    if (mpi)
        rc = sweep_mpi_bcast(rc);
    long failed = -1;
    if (!rc) {
        if (!sw.quiet && rank == 0) {
            printf("aisim sweep %s: %zu points into %s", sw.scenario, sw.npoints, sw.out_root);
            printf(mpi ? " over %d MPI ranks\n" : "\n", size);
            fflush(stdout);
        }
        if (rank == 0)
            remove_old_table(sw.out_root);
        rc = mpi            ? points_run_rank(&sw, pts, rank, size, &failed)
             : sw.jobs > 1 ? points_run_parallel(&sw, pts)
                           : points_run_serial(&sw, pts);
    }
    if (mpi)
        rc = ranks_outcome(pts, rank, size, rc, failed);
    if (!rc && rank == 0) {
        int r = write_table(&sw, name, pts, od, &e);
        od = NULL;
        if (r) {
            cli_print_error(&e);
            rc = EXIT_RUN_FAILED;
        }
    }
    out_abort(od);
    if (mpi) {
        rc = sweep_mpi_bcast(rc);
        sweep_mpi_finalize();
    }
    for (size_t i = 0; i < sw.npoints; i++)
        point_free(&sw, &pts[i]);
    free(pts);
    sweep_free(&sw);
    return rc;
}
