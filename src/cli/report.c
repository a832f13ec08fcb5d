/*
 * report.c - what `aisim run` prints when a run completes: the model's
 * headline results (model_headline) in a short table with SI-prefixed
 * units, then the counters: the top-level scalars of the summary's results
 * that are not headlines, or with -v every scalar, nested keys joined with
 * dots.  Counters that do not apply to the run are left out: on the flow
 * plane (results.plane "flow") the packet plane's counters (drops, hops,
 * marks, pauses, retransmissions, the byte balance) are not measured, so
 * their zeros are not shown.  Then the table a model names in
 * results.print (nccl_tests.txt), as before.
 *
 * Formatting only: nothing here changes summary.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/model.h"
#include "aisim/netext.h"
#include "aisim/netreg.h"
#include "cli/cli.h"

/* network_report()'s counters of packets on the wire: none of them is
 * measured on the flow plane (flownet.c moves no packets; it counts the
 * bytes injected, delivered and in flight, which are printed). */
static const char *const packet_counters[] = {
    "drops", "packet_hops", "pfc_pauses", "ecn_marks", "retransmits", "timeouts",
    "packets_in_network_at_end", "packets_allocated_at_end", "bytes_dropped", NULL};

static int applies(const json_t *res, const char *key)
{
    const char *plane = json_string_value(json_object_get(res, "plane"));
    if (!plane || strcmp(plane, "flow"))
        return 1;
    for (size_t i = 0; packet_counters[i]; i++)
        if (!strcmp(packet_counters[i], key))
            return 0;
    return 1;
}

void cli_fmt_quantity(char *b, size_t n, double v, const char *unit)
{
    static const struct { int exp; const char *p; } pre[] = {
        {18, "E"}, {15, "P"}, {12, "T"}, {9, "G"}, {6, "M"}, {3, "k"}, {0, ""},
        {-3, "m"}, {-6, "u"}, {-9, "n"}, {-12, "p"}};
    enum { NP = sizeof pre / sizeof *pre };
    if (!isfinite(v)) {
        snprintf(b, n, "%s", isnan(v) ? "-" : v > 0 ? "inf" : "-inf");
        return;
    }
    if (!unit || !*unit) {
        if (v == floor(v) && fabs(v) < 1e15)
            snprintf(b, n, "%.0f", v);
        else
            snprintf(b, n, "%.4g", v);
        return;
    }
    if (!strcmp(unit, "%")) {
        snprintf(b, n, "%.4g %%", 100 * v);
        return;
    }
    /* Seconds take no prefix above one: 1800 s, not 1.8 ks. */
    int top = !strcmp(unit, "s") ? 6 : 0;
    size_t i = (size_t)top;
    if (v != 0) {
        while (i + 1 < NP && fabs(v) < pow(10, pre[i].exp))
            i++;
        /* 999.96 k rounds to 1000 k: take the next prefix up instead. */
        char t[32];
        snprintf(t, sizeof t, "%.4g", fabs(v) / pow(10, pre[i].exp));
        if (atof(t) >= 1000 && i > (size_t)top)
            i--;
    } else {
        i = 6;
    }
    double m = v / pow(10, pre[i].exp);
    snprintf(b, n, fabs(m) >= 1000 ? "%.0f %s%s" : "%.4g %s%s", m, pre[i].p, unit);
}

/* Follows key (a headline path) from v.  Calls fn once per match with the
 * name matched by '*' ("" when the key has none). */
typedef void match_fn(void *ctx, const char *name, json_t *v);

static void follow(json_t *v, const char *key, const char *name, match_fn *fn, void *ctx)
{
    if (!v)
        return;
    if (!*key) {
        fn(ctx, name, v);
        return;
    }
    const char *dot = strchr(key, '.');
    size_t len = dot ? (size_t)(dot - key) : strlen(key);
    const char *rest = dot ? dot + 1 : key + len;
    char comp[128];
    if (len >= sizeof comp)
        return;
    memcpy(comp, key, len);
    comp[len] = 0;
    if (!strcmp(comp, "*")) {
        if (json_is_object(v)) {
            const char *k;
            json_t *x;
            json_object_foreach(v, k, x)
                follow(x, rest, k, fn, ctx);
        } else if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v); i++) {
                json_t *x = json_array_get(v, i);
                const char *nm = json_string_value(json_object_get(x, "name"));
                char idx[32];
                snprintf(idx, sizeof idx, "%zu", i);
                follow(x, rest, nm ? nm : idx, fn, ctx);
            }
        }
        return;
    }
    if (json_is_array(v)) {
        char *end;
        long i = strtol(comp, &end, 10);
        if (*end || end == comp)
            return;
        if (i < 0)
            i += (long)json_array_size(v);
        follow(i >= 0 ? json_array_get(v, (size_t)i) : NULL, rest, name, fn, ctx);
        return;
    }
    follow(json_object_get(v, comp), rest, name, fn, ctx);
}

static void fmt_value(char *b, size_t n, json_t *v, const model_headline *h)
{
    if (json_is_string(v))
        snprintf(b, n, "%s", json_string_value(v));
    else if (json_is_boolean(v))
        snprintf(b, n, "%s", json_is_true(v) ? "yes" : "no");
    else if (json_is_number(v))
        cli_fmt_quantity(b, n, json_number_value(v) * (h->scale ? h->scale : 1), h->unit);
    else
        snprintf(b, n, "-");
}

/* One scalar headline: the first match. */
typedef struct one_match { json_t *v; } one_match;

static void take_first(void *ctx, const char *name, json_t *v)
{
    (void)name;
    one_match *m = ctx;
    if (!m->v)
        m->v = v;
}

/* A table's cells: rows by name in the order first met. */
enum { MAX_ROWS = 64, MAX_COLS = 12, CELL = 40 };
typedef struct htable {
    const model_headline *h[MAX_COLS];
    size_t ncols, nrows, col;
    char row[MAX_ROWS][48];
    char cell[MAX_ROWS][MAX_COLS][CELL];
} htable;

static void take_cell(void *ctx, const char *name, json_t *v)
{
    htable *t = ctx;
    size_t r = 0;
    while (r < t->nrows && strcmp(t->row[r], name))
        r++;
    if (r == t->nrows) {
        if (t->nrows == MAX_ROWS)
            return;
        snprintf(t->row[t->nrows++], sizeof t->row[0], "%s", name);
        for (size_t c = 0; c < MAX_COLS; c++)
            strcpy(t->cell[r][c], "-");
    }
    fmt_value(t->cell[r][t->col], CELL, v, t->h[t->col]);
}

/* The part of key before '*', or 0 if it has none. */
static size_t star_prefix(const char *key)
{
    const char *s = strchr(key, '*');
    return s ? (size_t)(s - key) + 1 : 0;
}

static int is_headline_key(const model_headline *hl, const char *key)
{
    for (; hl && hl->key; hl++)
        if (!strcmp(hl->key, key))
            return 1;
    return 0;
}

static void print_table(FILE *f, htable *t, const char *key, size_t plen)
{
    if (!t->nrows)
        return;
    /* The row heading: the component before '*' ("methods"), or "item". */
    char head[64] = "item";
    if (plen >= 2) {
        size_t e = plen - 2, s = e;
        while (s > 0 && key[s - 1] != '.')
            s--;
        if (e > s && e - s < sizeof head) {
            memcpy(head, key + s, e - s);
            head[e - s] = 0;
        }
    }
    int w0 = (int)strlen(head);
    for (size_t r = 0; r < t->nrows; r++)
        if ((int)strlen(t->row[r]) > w0)
            w0 = (int)strlen(t->row[r]);
    int w[MAX_COLS];
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = (int)strlen(t->h[c]->label);
        for (size_t r = 0; r < t->nrows; r++)
            if ((int)strlen(t->cell[r][c]) > w[c])
                w[c] = (int)strlen(t->cell[r][c]);
    }
    fprintf(f, "  %-*s", w0, head);
    for (size_t c = 0; c < t->ncols; c++)
        fprintf(f, "  %*s", w[c], t->h[c]->label);
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        fprintf(f, "  %-*s", w0, t->row[r]);
        for (size_t c = 0; c < t->ncols; c++)
            fprintf(f, "  %*s", w[c], t->cell[r][c]);
        fputc('\n', f);
    }
}

void cli_print_headlines(FILE *f, const model_headline *hl, json_t *res, const char *title)
{
    int any = 0;
    for (const model_headline *h = hl; h && h->key;) {
        size_t plen = star_prefix(h->key);
        if (!plen) {
            one_match m = {0};
            follow(res, h->key, "", take_first, &m);
            h++;
            if (!m.v || json_is_null(m.v) || !applies(res, h[-1].key))
                continue;
            char b[128];
            fmt_value(b, sizeof b, m.v, &h[-1]);
            if (!any++)
                fprintf(f, "%s:\n", title);
            fprintf(f, "  %-30s %s\n", h[-1].label, b);
            continue;
        }
        htable *t = xcalloc(1, sizeof *t);
        const model_headline *first = h;
        while (h->key && t->ncols < MAX_COLS && star_prefix(h->key) == plen &&
               !strncmp(h->key, first->key, plen)) {
            t->col = t->ncols;
            t->h[t->ncols++] = h;
            follow(res, h->key, "", take_cell, t);
            h++;
        }
        if (t->nrows && !any++)
            fprintf(f, "%s:\n", title);
        print_table(f, t, first->key, plen);
        free(t);
    }
}

void cli_json_scalars(json_t *v, const char *path, int bracket_index,
                      void (*fn)(void *ctx, const char *path, json_t *v), void *ctx)
{
    char k2[512];
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            snprintf(k2, sizeof k2, "%s%s%s", path, *path ? "." : "", k);
            cli_json_scalars(x, k2, bracket_index, fn, ctx);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (bracket_index)
                snprintf(k2, sizeof k2, "%s[%zu]", path, i);
            else
                snprintf(k2, sizeof k2, "%s%s%zu", path, *path ? "." : "", i);
            cli_json_scalars(json_array_get(v, i), k2, bracket_index, fn, ctx);
        }
    } else if (!json_is_null(v)) {
        fn(ctx, path, v);
    }
}

/* One counter line. */
static void print_scalar(void *ctx, const char *path, json_t *v)
{
    FILE *f = ctx;
    if (json_is_integer(v))
        fprintf(f, "  %-30s %lld\n", path, (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(f, "  %-30s %.6g\n", path, json_real_value(v));
    else if (json_is_string(v))
        fprintf(f, "  %-30s %s\n", path, json_string_value(v));
    else
        fprintf(f, "  %-30s %s\n", path, json_is_true(v) ? "true" : "false");
}

void cli_print_counters(FILE *f, const model_headline *hl, json_t *res, int all)
{
    const char *k;
    json_t *v;
    int any = 0;
    json_object_foreach(res, k, v) {
        if (!strcmp(k, "print") || !applies(res, k))
            continue;
        int scalar = json_is_number(v) || json_is_string(v) || json_is_boolean(v);
        if (!all && (!scalar || is_headline_key(hl, k)))
            continue;
        if (!any++)
            fprintf(f, all ? "counters (every result):\n" : "counters:\n");
        cli_json_scalars(v, k, 1, print_scalar, f);
    }
}

void cli_print_results(FILE *f, const char *dir, json_t *sum, int all)
{
    fprintf(f, "run directory: %s\n", dir);
    json_t *res = json_object_get(sum, "results");
    const model_ops *ops = model_find(json_string_value(json_object_get(sum, "model")) ?
                                      json_string_value(json_object_get(sum, "model")) : "");
    const model_headline *hl = ops ? ops->headlines : NULL;
    cli_print_headlines(f, hl, res, "results");
    /* then each network extension's, under its name, when the run had it */
    const net_registry *reg = net_registry_builtin();
    for (size_t i = 0; reg->extensions && reg->extensions[i]; i++)
        if (reg->extensions[i]->headlines && json_object_get(res, reg->extensions[i]->name))
            cli_print_headlines(f, reg->extensions[i]->headlines, res, reg->extensions[i]->name);
    cli_print_counters(f, hl, res, all);
    /* A model's table for the reader (results.print names it). */
    const char *tab = json_string_value(json_object_get(res, "print"));
    char path[4096];
    FILE *t = tab && snprintf(path, sizeof path, "%s/%s", dir, tab) < (int)sizeof path
                  ? fopen(path, "r") : NULL;
    if (t) {
        char line[512];
        fputc('\n', f);
        while (fgets(line, sizeof line, t))
            fputs(line, f);
        fclose(t);
    }
}
