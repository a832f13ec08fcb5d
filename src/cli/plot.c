/*
 * plot.c - `aisim plot RUN_DIR`: draws a run's tables with gnuplot.
 *
 * The run's summary.json names the model and the files; the model's
 * plot_spec list (its curated figures) says which columns to draw (and
 * which column splits rows into series); with --all, or for a model that
 * has none, every other CSV gets a default figure, all numeric columns
 * against the first.  The images and scripts drawn are added to the run's
 * summary.json `files`, so a later run into the same directory removes
 * them with its other stale outputs.  A sweep's figures draw the mean over
 * seeds with its 95 % confidence interval as error bars (Student's t), as
 * lines over a numeric key and as bars over a categorical one.  For each figure the data and the commands go into one
 * self-contained gnuplot script beside the image (NAME.gp), so a user can
 * restyle it and run `gnuplot NAME.gp` again inside the run directory.
 * aisim itself runs `gnuplot -c NAME.gp .NAME.png.part` and renames the
 * image when gnuplot succeeds, so a failed plot leaves no image.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "aisim/err.h"
#include "aisim/model.h"
#include "aisim/out.h"
#include "aisim/stats.h"
#include "cli/cli.h"
#include "cli/run.h"

typedef struct table {
    int ncol;
    char **head;            /* column names */
    size_t nrow;
    char ***cell;           /* cell[row][col], strings */
} table;

static void table_free(table *t)
{
    for (size_t r = 0; r < t->nrow; r++) {
        for (int c = 0; c < t->ncol; c++)
            free(t->cell[r][c]);
        free(t->cell[r]);
    }
    for (int c = 0; c < t->ncol; c++)
        free(t->head[c]);
    free(t->cell);
    free(t->head);
    memset(t, 0, sizeof *t);
}

/* Splits a CSV line into at most max fields, in place.  Model tables have no
 * quoting; sweep.csv quotes (RFC 4180) the fields that hold commas. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        char *w = p;
        f[n++] = p;
        if (*p == '"') {
            for (p++; *p && !(p[0] == '"' && p[1] != '"'); p++) {
                if (*p == '"')
                    p++;            /* "" is one quote */
                *w++ = *p;
            }
            if (*p == '"')
                p++;
            memmove(w, p, strlen(p) + 1);
            p = w;
        }
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

static int table_load(const char *path, table *t, err *e)
{
    memset(t, 0, sizeof *t);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return ERR(e, AISIM_ENOENT, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    char *f[256];
    int lineno = 0, r = 0;
    size_t rcap = 0;
    while (getline(&line, &cap, fp) > 0) {
        lineno++;
        int n = split(line, f, 256);
        if (lineno == 1) {
            t->ncol = n;
            t->head = xcalloc((size_t)n, sizeof *t->head);
            for (int c = 0; c < n; c++)
                t->head[c] = xstrdup(f[c]);
            continue;
        }
        if (n != t->ncol) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: expected %d columns, found %d", path, lineno,
                    t->ncol, n);
            break;
        }
        if (t->nrow == rcap) {
            rcap = rcap ? 2 * rcap : 256;
            t->cell = xrealloc(t->cell, rcap * sizeof *t->cell);
        }
        char **row = xcalloc((size_t)n, sizeof *row);
        for (int c = 0; c < n; c++)
            row[c] = xstrdup(f[c]);
        t->cell[t->nrow++] = row;
    }
    free(line);
    fclose(fp);
    if (!r && lineno == 0)
        r = ERR(e, AISIM_EINVAL, "%s: empty table", path);
    if (r)
        table_free(t);
    return r;
}

static int col_of(const table *t, const char *name)
{
    for (int c = 0; c < t->ncol; c++)
        if (strcmp(t->head[c], name) == 0)
            return c;
    return -1;
}

static int numeric(const char *s)
{
    char *end;
    if (!*s)
        return 0;
    strtod(s, &end);
    return *end == '\0';
}

/* Writes gnuplot's quoting of s ('...' with '' for '). */
static void gp_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* Runs `gnuplot -c SCRIPT OUTPUT` inside the run directory. */
static int run_gnuplot(const char *dir, const char *script, const char *output, err *e)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        execlp("gnuplot", "gnuplot", "-c", script, output, (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return ERR(e, AISIM_ERUN, "cannot run gnuplot");
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 127)
        return ERR(e, AISIM_ERUN, "gnuplot is not installed (Debian package gnuplot-nox; "
                   "scripts/deps.sh installs it)");
    if (WEXITSTATUS(st) != 0)
        return ERR(e, AISIM_ERUN, "gnuplot failed on %s", script);
    return 0;
}

/* Writes s as one gnuplot data field: double-quoted, so that a category
 * label with blanks stays one column. */
static void gp_datum(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

/* How draw_table() draws: DRAW_CATEGORICAL, x values are labels placed at
 * 0, 1, 2, ... in row order; DRAW_POINTS, marks on the lines (a sweep has a
 * few points per line, a time series thousands); DRAW_DOTS, marks without
 * lines; DRAW_BARS, bars side by side (with DRAW_CATEGORICAL); DRAW_ERRBARS,
 * the column after each y column is its error. */
enum { DRAW_CATEGORICAL = 1, DRAW_POINTS = 2, DRAW_ERRBARS = 4, DRAW_BARS = 8, DRAW_DOTS = 16 };

/* The figures drawn so far (image and script names, relative to the
 * directory), for summary.json. */
static json_t *drawn_files;

/* Draws one figure from table t (read from sp->csv).  Returns 0 or a
 * negative code. */
/* The run's (or sweep's) scenario name, put before every figure's title so
 * that an image names what it shows; set by cli_plot(). */
static char run_name[256];

/* A column of bytes or bits per second ("bytes", "size", "*_bytes",
 * "*_bps"): its axis gets SI prefixes. */
static int si_column(const char *c)
{
    size_t n = strlen(c);
    return !strcmp(c, "bytes") || !strcmp(c, "size") ||
           (n > 6 && !strcmp(c + n - 6, "_bytes")) || (n > 4 && !strcmp(c + n - 4, "_bps"));
}

static int draw_table(const char *dir, const plot_spec *sp, const table *tp, const char *fmt,
                      unsigned how, err *e)
{
    int categorical = (how & DRAW_CATEGORICAL) != 0;
    const table t = *tp;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, sp->csv);
    int r;
    int xc = col_of(&t, sp->x), gc = sp->group ? col_of(&t, sp->group) : -1;
    if (xc < 0 || (sp->group && gc < 0))
        return ERR(e, AISIM_EINVAL, "%s: no column \"%s\"", path, xc < 0 ? sp->x : sp->group);
    /* With DRAW_ERRBARS the column after each y column is its error (the
     * sweep's ci95). */
    int errbars = (how & DRAW_ERRBARS) != 0;
    int ycols[64], ny = 0;
    char ybuf[512];
    snprintf(ybuf, sizeof ybuf, "%s", sp->y);
    for (char *tok = strtok(ybuf, ","); tok && ny < 64; tok = strtok(NULL, ",")) {
        int c = col_of(&t, tok);
        if (c < 0)
            return ERR(e, AISIM_EINVAL, "%s: no column \"%s\"", path, tok);
        ycols[ny++] = c;
    }
    /* Series: distinct group values in order of appearance. */
    const char **groups = xcalloc(t.nrow + 1, sizeof *groups);
    size_t ng = 0;
    if (gc >= 0) {
        for (size_t i = 0; i < t.nrow; i++) {
            size_t g = 0;
            while (g < ng && strcmp(groups[g], t.cell[i][gc]) != 0)
                g++;
            if (g == ng)
                groups[ng++] = t.cell[i][gc];
        }
    } else {
        groups[ng++] = NULL;
    }
    /* A figure with no point to draw (say, FCTs of a run in which no flow
     * finished) is skipped, not an error. */
    size_t points = 0;
    for (size_t i = 0; i < t.nrow; i++)
        for (int y = 0; y < ny; y++)
            points += (categorical || numeric(t.cell[i][xc])) && numeric(t.cell[i][ycols[y]]);
    if (points == 0) {
        printf("  %s: nothing to draw (no numeric %s values in %s)\n", sp->out, sp->y, sp->csv);
        free(groups);
        return 0;
    }
    char gp[1024], img[1024], part[1100], gpname[300], imgname[300], partname[320];
    snprintf(gpname, sizeof gpname, "%s.gp", sp->out);
    snprintf(imgname, sizeof imgname, "%s.%s", sp->out, fmt);
    snprintf(partname, sizeof partname, ".%s.part", imgname);
    snprintf(gp, sizeof gp, "%s/%s", dir, gpname);
    snprintf(img, sizeof img, "%s/%s", dir, imgname);
    snprintf(part, sizeof part, "%s/%s", dir, partname);
    FILE *f = fopen(gp, "w");
    if (!f) {
        free(groups);
        return ERR(e, AISIM_EIO, "cannot write %s: %s", gp, strerror(errno));
    }
    fprintf(f, "# aisim plot: %s from %s (run: gnuplot %s.gp)\n", sp->out, sp->csv, sp->out);
    fprintf(f, "set terminal %s size 960,560 noenhanced font ',11'\n",
            strcmp(fmt, "svg") == 0 ? "svg" : "pngcairo");
    fprintf(f, "if (ARGC > 0) { set output ARG1 } else { set output ");
    gp_quote(f, imgname);
    fprintf(f, " }\nset title ");
    char full_title[600];
    snprintf(full_title, sizeof full_title, "%s%s%s", run_name, *run_name ? ": " : "",
             sp->title ? sp->title : sp->out);
    gp_quote(f, full_title);
    fprintf(f, "\nset xlabel ");
    gp_quote(f, sp->xlabel ? sp->xlabel : sp->x);
    fprintf(f, "\nset ylabel ");
    gp_quote(f, sp->ylabel ? sp->ylabel : sp->y);
    fprintf(f, "\nset grid\nset key outside right top\nset datafile missing 'nan'\n");
    if (sp->logx)
        fprintf(f, "set logscale x\nset format x \"%%g\"\n");
    /* Bytes and bit rates with SI prefixes (1.5G, 200k): the tick labels
     * of a 400 Gbit/s port are not 4e+11. */
    /* (gnuplot's %s is the mantissa to base 1000, %c its prefix; a log
     * axis ticks at powers of ten, a linear one may tick at 1.5G) */
    if (!categorical && si_column(sp->x))
        fprintf(f, "set format x '%s%%c'\n", sp->logx ? "%.0s" : "%.1s");
    int si_y = ny > 0;
    for (int y = 0; y < ny; y++)
        si_y &= si_column(t.head[ycols[y]]);
    if (si_y)
        fprintf(f, "set format y '%%.1s%%c'\n");
    if (categorical)
        fprintf(f, "set offsets 0.3, 0.3, 0, 0\n");     /* room for the outer labels */
    int nb = 0;
    for (size_t g = 0; g < ng; g++)
        for (int y = 0; y < ny; y++, nb++) {
            fprintf(f, "$D%d << EOD\n", nb);
            for (size_t i = 0; i < t.nrow; i++) {
                if (groups[g] && strcmp(t.cell[i][gc], groups[g]) != 0)
                    continue;
                const char *ev = errbars ? t.cell[i][ycols[y] + 1] : NULL;
                if (ev && !numeric(ev))
                    ev = "0";           /* one seed: no interval */
                if (categorical) {
                    /* A missing value keeps its slot on the axis. */
                    gp_datum(f, t.cell[i][xc]);
                    fprintf(f, " %s%s%s\n", numeric(t.cell[i][ycols[y]]) ? t.cell[i][ycols[y]] : "nan",
                            ev ? " " : "", ev ? ev : "");
                    continue;
                }
                if (!numeric(t.cell[i][xc]) || !numeric(t.cell[i][ycols[y]]))
                    continue;
                fprintf(f, "%s %s%s%s\n", t.cell[i][xc], t.cell[i][ycols[y]], ev ? " " : "",
                        ev ? ev : "");
            }
            fprintf(f, "EOD\n");
        }
    /* Bars over a categorical axis: the series side by side in each slot,
     * together 0.8 of it wide. */
    double bw = 0.8 / (double)(ng * (size_t)ny);
    int bars = categorical && (errbars || (how & DRAW_BARS));
    if (bars)
        fprintf(f, "set style fill solid 0.6 border -1\nset yrange [0:*]\n");
    fprintf(f, "plot");
    nb = 0;
    int nbars = (int)ng * ny;
    for (size_t g = 0; g < ng; g++)
        for (int y = 0; y < ny; y++, nb++) {
            char title[256];
            if (groups[g] && ny > 1)
                snprintf(title, sizeof title, "%s %s", groups[g], t.head[ycols[y]]);
            else
                snprintf(title, sizeof title, "%s", groups[g] ? groups[g] : t.head[ycols[y]]);
            const char *sep = nb ? ", \\\n    " : " ";
            if (bars) {
                double off = ((double)nb - (nbars - 1) / 2.0) * bw;
                fprintf(f, "%s $D%d using ($0%+.4f):2:(%.4f):xtic(1) with boxes lc %d title ", sep,
                        nb, off, bw, nb + 1);
                gp_quote(f, title);
                if (errbars)
                    fprintf(f, ", \\\n    $D%d using ($0%+.4f):2:3 with yerrorbars lc black pt 0 "
                            "notitle", nb, off);
                continue;
            }
            fprintf(f, "%s $D%d using %s with %s lw 2 title ", sep, nb,
                    categorical ? (errbars ? "0:2:3:xtic(1)" : "0:2:xtic(1)")
                                : (errbars ? "1:2:3" : "1:2"),
                    errbars ? "yerrorlines" : how & DRAW_DOTS ? "points" :
                    how & DRAW_POINTS ? "linespoints" : "lines");
            gp_quote(f, title);
        }
    fprintf(f, "\n");
    int bad = ferror(f);
    fclose(f);
    free(groups);
    if (bad)
        return ERR(e, AISIM_EIO, "writing %s failed", gp);
    if ((r = run_gnuplot(dir, gpname, partname, e)))
        return r;
    if (rename(part, img) != 0)
        return ERR(e, AISIM_EIO, "cannot rename %s: %s", part, strerror(errno));
    printf("  %s\n", img);
    if (drawn_files) {
        json_array_append_new(drawn_files, json_string(imgname));
        json_array_append_new(drawn_files, json_string(gpname));
    }
    return 0;
}

/* Draws one figure of a run's table; returns 0 or a negative code. */
static int draw(const char *dir, const plot_spec *sp, const char *fmt, err *e)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, sp->csv);
    table t;
    int r = table_load(path, &t, e);
    if (r)
        return r;
    static const unsigned style_how[] = {[PLOT_LINES] = 0, [PLOT_MARKS] = DRAW_POINTS,
                                         [PLOT_DOTS] = DRAW_DOTS,
                                         [PLOT_BARS] = DRAW_CATEGORICAL | DRAW_BARS};
    unsigned how = sp->style >= 0 && sp->style <= PLOT_BARS ? style_how[sp->style] : 0;
    r = draw_table(dir, sp, &t, fmt, how, e);
    table_free(&t);
    return r;
}

/* ---- sweeps ------------------------------------------------------------- */

/* sweep.csv: the varied keys, seed, run_dir, then the results.  Its figures:
 * each chosen result against the first varied key (the seed if no key
 * varies), one line per combination of the other varied keys, the mean over
 * seeds. */
typedef struct sweep_tab {
    table t;                /* sweep.csv */
    int nv;                 /* varied keys: columns 0 .. nv-1 */
    int first_result;       /* first result column */
    int xc;                 /* x column */
} sweep_tab;

/* The last path component of a key, for series labels. */
static const char *key_label(const char *key)
{
    const char *dot = strrchr(key, '.');
    return dot ? dot + 1 : key;
}

/* A column worth a figure: numeric somewhere, and not the same everywhere. */
static int varying(const table *t, int c)
{
    const char *first = NULL;
    for (size_t i = 0; i < t->nrow; i++) {
        if (!numeric(t->cell[i][c]))
            continue;
        if (first && strtod(first, NULL) != strtod(t->cell[i][c], NULL))
            return 1;
        first = first ? first : t->cell[i][c];
    }
    return 0;
}

/* Columns a and b hold the same number in every row. */
static int same_column(const table *t, int a, int b)
{
    for (size_t i = 0; i < t->nrow; i++)
        if (!numeric(t->cell[i][a]) || !numeric(t->cell[i][b]) ||
            strtod(t->cell[i][a], NULL) != strtod(t->cell[i][b], NULL))
            return 0;
    return 1;
}

/* The series label of row i: "key=value ..." of the varied keys but the
 * first. */
static void series_of(const sweep_tab *s, size_t i, char *b, size_t n)
{
    *b = '\0';
    for (int k = 1; k < s->nv; k++)
        snprintf(b + strlen(b), n - strlen(b), "%s%s=%s", k > 1 ? " " : "",
                 key_label(s->t.head[k]), s->t.cell[i][k]);
}

static const sweep_tab *sort_tab;

/* Numeric x ascending; ties (and everything else) keep the sweep's order. */
static int by_x(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = strtod(sort_tab->t.cell[i][sort_tab->xc], NULL);
    double y = strtod(sort_tab->t.cell[j][sort_tab->xc], NULL);
    return x < y ? -1 : x > y ? 1 : (i > j) - (i < j);
}

/* The table drawn for metric column c: x, series, the mean of c over the
 * rows (seeds) that share x and series and the half-width of its 95 %
 * confidence interval (Student's t with n - 1 degrees of freedom; empty for
 * one seed), rows in the sweep's order (by x if x is numeric). */
static void sweep_means(const sweep_tab *s, int c, int numeric_x, table *dst)
{
    const table *t = &s->t;
    size_t *order = xcalloc(t->nrow + 1, sizeof *order);
    for (size_t i = 0; i < t->nrow; i++)
        order[i] = i;
    sort_tab = s;
    if (numeric_x)
        qsort(order, t->nrow, sizeof *order, by_x);
    memset(dst, 0, sizeof *dst);
    dst->ncol = 4;
    dst->head = xcalloc(4, sizeof *dst->head);
    dst->head[0] = xstrdup(t->head[s->xc]);
    dst->head[1] = xstrdup("series");
    dst->head[2] = xstrdup(t->head[c]);
    dst->head[3] = xstrdup("ci95");
    dst->cell = xcalloc(t->nrow + 1, sizeof *dst->cell);
    stat_acc *acc = xcalloc(t->nrow + 1, sizeof *acc);
    char ser[512];
    for (size_t oi = 0; oi < t->nrow; oi++) {
        size_t i = order[oi], r = 0;
        series_of(s, i, ser, sizeof ser);
        while (r < dst->nrow && (strcmp(dst->cell[r][0], t->cell[i][s->xc]) ||
                                 strcmp(dst->cell[r][1], ser)))
            r++;
        if (r == dst->nrow) {
            dst->cell[r] = xcalloc(4, sizeof **dst->cell);
            stat_init(&acc[r]);
            dst->cell[r][0] = xstrdup(t->cell[i][s->xc]);
            dst->cell[r][1] = xstrdup(ser);
            dst->nrow++;
        }
        if (numeric(t->cell[i][c]))
            stat_add(&acc[r], strtod(t->cell[i][c], NULL));
    }
    for (size_t r = 0; r < dst->nrow; r++) {
        char v[64] = "", h[64] = "";
        if (acc[r].n)
            out_fmt_double(v, sizeof v, acc[r].mean);
        if (acc[r].n > 1)
            out_fmt_double(h, sizeof h, stat_ci95(&acc[r]));
        dst->cell[r][2] = xstrdup(v);
        dst->cell[r][3] = xstrdup(h);
    }
    free(acc);
    free(order);
}

static int sweep_load(const char *dir, sweep_tab *s, err *e)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    int r = table_load(path, &s->t, e);
    if (r)
        return r;
    s->nv = col_of(&s->t, "seed");
    if (s->nv < 0 || col_of(&s->t, "run_dir") != s->nv + 1) {
        table_free(&s->t);
        return ERR(e, AISIM_EINVAL, "%s: not an aisim sweep table (no seed, run_dir columns)",
                   path);
    }
    s->first_result = s->nv + 2;
    s->xc = s->nv ? 0 : s->nv;  /* seed when no key varies */
    return 0;
}

/* Draws the figures of a sweep directory: the chosen metrics (all that vary
 * if none is chosen).  Returns 0 or a negative code; counts figures. */
static int plot_sweep(const char *dir, const char *fmt, char **metrics, int nmetrics,
                      int *drawn, err *e)
{
    sweep_tab s;
    int r = sweep_load(dir, &s, e);
    if (r)
        return r;
    for (int m = 0; m < nmetrics && !r; m++) {
        int c = col_of(&s.t, metrics[m]);
        if (c < s.first_result)
            r = ERR(e, AISIM_EINVAL, "%s/sweep.csv: no result column \"%s\"", dir, metrics[m]);
    }
    int numeric_x = 1;
    for (size_t i = 0; i < s.t.nrow; i++)
        numeric_x &= numeric(s.t.cell[i][s.xc]);
    for (int c = s.first_result; c < s.t.ncol && !r; c++) {
        /* A varied key is a result too (incast.senders): against itself
         * it says nothing. */
        int chosen = nmetrics == 0 && varying(&s.t, c) && !same_column(&s.t, c, s.xc);
        for (int m = 0; m < nmetrics; m++)
            chosen |= strcmp(metrics[m], s.t.head[c]) == 0;
        if (!chosen)
            continue;
        table means;
        sweep_means(&s, c, numeric_x, &means);
        char oname[300], title[400];
        snprintf(oname, sizeof oname, "sweep-%s", s.t.head[c]);
        snprintf(title, sizeof title, "%s%s", s.t.head[c],
                 means.nrow < s.t.nrow ? " (mean over seeds, 95 % CI)" : "");
        for (char *p = oname; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-", *p))
                *p = '_';
        plot_spec sp = {.csv = "sweep.csv", .x = means.head[0], .y = means.head[2],
                        .group = s.nv > 1 ? "series" : NULL, .title = title, .out = oname};
        r = draw_table(dir, &sp, &means, fmt,
                       DRAW_POINTS | DRAW_ERRBARS | (numeric_x ? 0 : DRAW_CATEGORICAL), e);
        *drawn += !r;
        table_free(&means);
    }
    table_free(&s.t);
    return r;
}

#define PLOT_USAGE \
    "usage: aisim plot RUN_DIR|SWEEP_DIR [--format png|svg] [--all] [--metric COL]...\n"

/* Adds the figures drawn (drawn_files) to the `files` list of
 * DIR/summary.json, written again through a temporary and a rename, so that
 * the next run into DIR removes them as stale outputs.  The other values are
 * written as aisim run wrote them (a real printed with 12 digits reads back
 * as the double that prints the same 12 digits). */
static int record_plots(const char *dir, json_t *sum, err *e)
{
    json_t *files = json_object_get(sum, "files");
    if (!json_is_array(files) || json_array_size(drawn_files) == 0)
        return 0;
    size_t i, j;
    json_t *v, *w;
    json_array_foreach(drawn_files, i, v) {
        int have = 0;
        json_array_foreach(files, j, w) have |= json_equal(v, w);
        if (!have)
            json_array_append(files, v);
    }
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    snprintf(tmp, sizeof tmp, "%s/.summary.json.plot-%ld.part", dir, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return ERR(e, AISIM_EIO, "cannot write %s: %s", tmp, strerror(errno));
    int bad = json_dumpf(sum, f, RUN_JSON_FLAGS);
    bad |= fputc('\n', f) == EOF;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return ERR(e, AISIM_EIO, "cannot rewrite %s with the figures' names", path);
    }
    return 0;
}

/* A sweep directory (sweep.csv, from `aisim sweep`): its figures, then the
 * exit code. */
static int cli_plot_sweep(const char *dir, const char *fmt, char **metrics, int nmetrics)
{
    printf("aisim plot %s (sweep):\n", dir);
    err e = {0};
    int drawn = 0, r = plot_sweep(dir, fmt, metrics, nmetrics, &drawn, &e);
    if (r) {
        cli_print_error(&e);
        return run_exit_code(r);
    }
    if (!drawn)
        printf("  (no result varies across the sweep; nothing to draw)\n");
    return EXIT_OK;
}

int cli_plot(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"metric", required_argument, 0, 'm'},
                                         {"all", no_argument, 0, 'a'},
                                         {0, 0, 0, 0}};
    const char *fmt = "png";
    char **metrics = xcalloc((size_t)argc + 1, sizeof *metrics);
    int c, nmetrics = 0, all = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:m:", opts, NULL)) != -1) {
        if (c == 'm') {
            metrics[nmetrics++] = optarg;
            continue;
        }
        if (c == 'a') {
            all = 1;
            continue;
        }
        if (c != 'f' || (strcmp(optarg, "png") && strcmp(optarg, "svg"))) {
            fprintf(stderr, "aisim plot: expected --format png or --format svg\n" PLOT_USAGE);
            free(metrics);
            return EXIT_BAD_INPUT;
        }
        fmt = optarg;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "aisim plot: expected one RUN_DIR\n" PLOT_USAGE);
        free(metrics);
        return EXIT_BAD_INPUT;
    }
    const char *dir = argv[optind];
    char path[1024];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    run_name[0] = 0;
    if (access(path, F_OK) == 0) {
        snprintf(path, sizeof path, "%s/sweep.json", dir);
        json_t *sj = json_load_file(path, 0, NULL);
        const char *nm = json_string_value(json_object_get(sj, "scenario"));
        snprintf(run_name, sizeof run_name, "%s%s", nm ? nm : "", nm ? " sweep" : "");
        json_decref(sj);
        int rc = cli_plot_sweep(dir, fmt, metrics, nmetrics);
        free(metrics);
        return rc;
    }
    if (nmetrics) {
        fprintf(stderr, "aisim plot: --metric applies to a sweep directory (sweep.csv)\n");
        free(metrics);
        return EXIT_BAD_INPUT;
    }
    free(metrics);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_error_t je;
    json_t *sum = json_load_file(path, 0, &je);
    if (!sum) {
        fprintf(stderr, "%s: not a completed aisim run directory (no readable summary.json)\n",
                dir);
        return EXIT_BAD_INPUT;
    }
    const char *sname = json_string_value(json_object_get(sum, "scenario"));
    snprintf(run_name, sizeof run_name, "%s", sname ? sname : "");
    const char *mname = json_string_value(json_object_get(sum, "model"));
    const model_ops *m = mname ? model_find(mname) : NULL;
    json_t *files = json_object_get(sum, "files");
    printf("aisim plot %s:\n", dir);
    err e = {0};
    int r = 0, drawn = 0;
    drawn_files = json_array();
    for (const plot_spec *sp = m ? m->plots : NULL; sp && sp->csv && !r; sp++) {
        snprintf(path, sizeof path, "%s/%s", dir, sp->csv);
        if (access(path, R_OK) != 0)
            continue;               /* the run did not write this table */
        r = draw(dir, sp, fmt, &e);
        drawn += !r;
    }
    /* Default figures for tables without a spec: with --all, or when the
     * model has no curated figures. */
    size_t i;
    json_t *v;
    int defaults = all || !m || !m->plots || !m->plots[0].csv;
    json_array_foreach(files, i, v) {
        const char *name = json_string_value(v);
        size_t len = name ? strlen(name) : 0;
        if (r || !defaults || len < 5 || strcmp(name + len - 4, ".csv") != 0)
            continue;
        int covered = 0;
        for (const plot_spec *sp = m ? m->plots : NULL; sp && sp->csv; sp++)
            covered |= strcmp(sp->csv, name) == 0;
        if (covered)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        table t;
        if ((r = table_load(path, &t, &e)))
            break;
        char y[512] = "", oname[256];
        for (int k = 1; k < t.ncol; k++)
            if (t.nrow && numeric(t.cell[0][k]))
                snprintf(y + strlen(y), sizeof y - strlen(y), "%s%s", *y ? "," : "", t.head[k]);
        snprintf(oname, sizeof oname, "%.*s", (int)(len - 4), name);
        plot_spec sp = {.csv = name, .x = t.head[0], .y = y, .title = oname, .out = oname};
        /* Only tables whose first column is a numeric axis (time, round,
         * id) make a line figure; a per-port summary does not. */
        int axis = t.nrow && numeric(t.cell[0][0]);
        if (*y && axis)
            r = draw(dir, &sp, fmt, &e);
        drawn += *y && axis && !r;
        table_free(&t);
    }
    if (!r)
        r = record_plots(dir, sum, &e);
    json_decref(sum);
    json_decref(drawn_files);
    drawn_files = NULL;
    if (r) {
        cli_print_error(&e);
        return run_exit_code(r);
    }
    if (!drawn)
        printf("  (the run wrote no table to draw)\n");
    return EXIT_OK;
}
