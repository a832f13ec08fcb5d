/*
 * test_golden.c - whole-run regression references.
 *
 * Each line of tests/golden/cases.txt names a short run (a built-in example
 * and --set overrides); tests/golden/NAME.txt is its fingerprint: every value
 * of summary.json (the `wall` objects and the version left out, reals to 17
 * significant digits) and the size and CRC-32 of every other file the run
 * writes (its tables, captures, log and resolved scenario).  A refactor that
 * changes any result fails here, naming the values and files that differ.
 *
 * When a change of results is intended, rewrite the references with
 *     make golden-update
 * (AISIM_GOLDEN_UPDATE=1 build/tests/test_golden) and review `git diff
 * tests/golden`: every changed line is a changed result, to be explained in
 * the commit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli/blaspin.h"
#include "testutil.h"

#define GOLDEN_DIR "tests/golden"
#define MAX_CASES 64
#define MAX_SETS 8

typedef struct gcase {
    char name[64];
    char scenario[128];
    const char *sets[MAX_SETS];
    int nsets;
    char line[512];             /* the cases.txt line, split in place */
} gcase;

static gcase cases[MAX_CASES];
static int ncases;

/* A growing text of "key value" lines. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void addf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->s = realloc(t->s, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One line per scalar of v, keys sorted, under the dotted path `at`. */
static void flatten(text *t, const char *at, json_t *v)
{
    char sub[512];
    if (json_is_object(v)) {
        size_t n = json_object_size(v), i = 0;
        const char **keys = calloc(n ? n : 1, sizeof *keys);
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) keys[i++] = k;
        qsort(keys, n, sizeof *keys, cmp_str);
        for (i = 0; i < n; i++) {
            if (strcmp(keys[i], "wall") == 0 || (!*at && strcmp(keys[i], "aisim_version") == 0))
                continue;
            snprintf(sub, sizeof sub, "%s%s%s", at, *at ? "." : "", keys[i]);
            flatten(t, sub, json_object_get(v, keys[i]));
        }
        free(keys);
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", at, i);
            flatten(t, sub, json_array_get(v, i));
        }
        if (json_array_size(v) == 0)
            addf(t, "summary %s []\n", at);
    } else if (json_is_integer(v)) {
        addf(t, "summary %s %lld\n", at, (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        addf(t, "summary %s %.17g\n", at, json_real_value(v));
    } else if (json_is_string(v)) {
        addf(t, "summary %s \"%s\"\n", at, json_string_value(v));
    } else {
        addf(t, "summary %s %s\n", at, json_is_null(v) ? "null" : json_is_true(v) ? "true" : "false");
    }
}

/* Size and CRC-32 of every file of the run directory but the marker and the
 * summary, in name order. */
static void fingerprint_files(text *t, const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256)
        if (de->d_name[0] != '.' && strcmp(de->d_name, "summary.json") != 0)
            names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        size_t len;
        char *b = tu_slurp(p, &len);
        uLong crc = crc32(0L, Z_NULL, 0);
        for (size_t off = 0; off < len;) {
            uInt chunk = len - off > (1u << 30) ? (1u << 30) : (uInt)(len - off);
            crc = crc32(crc, (const Bytef *)b + off, chunk);
            off += chunk;
        }
        addf(t, "file %s %zu %08lx\n", names[i], len, (unsigned long)crc);
        free(b);
        free(names[i]);
    }
}

/* The value of `key` (the text up to the last space) in a fingerprint, as a
 * pointer into it, or NULL. */
static const char *find_line(const char *fp, const char *key, size_t klen, size_t *vlen)
{
    for (const char *l = fp; *l;) {
        const char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) : strlen(l);
        if (ll > klen && strncmp(l, key, klen) == 0 && l[klen] == ' ') {
            *vlen = ll - klen - 1;
            return l + klen + 1;
        }
        l += ll + (e ? 1 : 0);
    }
    return NULL;
}

/* Key of a fingerprint line: "summary PATH" or "file NAME". */
static size_t key_len(const char *l, size_t ll)
{
    const char *sp = memchr(l, ' ', ll);
    if (!sp)
        return ll;
    const char *sp2 = memchr(sp + 1, ' ', ll - (size_t)(sp + 1 - l));
    return sp2 ? (size_t)(sp2 - l) : ll;
}

/* Prints what differs between the reference and the new fingerprint;
 * returns the number of differing lines. */
static int report_diff(const char *name, const char *want, const char *got)
{
    int nd = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *a = pass ? got : want, *b = pass ? want : got;
        for (const char *l = a; *l;) {
            const char *e = strchr(l, '\n');
            size_t ll = e ? (size_t)(e - l) : strlen(l);
            if (*l != '#' && ll) {
                size_t kl = key_len(l, ll), vl;
                const char *v = find_line(b, l, kl, &vl);
                const char *mine = kl < ll ? l + kl + 1 : "";
                size_t ml = kl < ll ? ll - kl - 1 : 0;
                if (!v && ++nd <= 40)
                    fprintf(stderr, "golden %s: %s %.*s: %s\n", name, pass ? "new" : "missing",
                            (int)kl, l, pass ? "not in the reference" : "no longer written");
                else if (v && !pass && (vl != ml || memcmp(v, mine, ml) != 0) && ++nd <= 40)
                    fprintf(stderr, "golden %s: %.*s: reference %.*s, now %.*s\n", name, (int)kl,
                            l, (int)ml, mine, (int)vl, v);
            }
            l += ll + (e ? 1 : 0);
        }
    }
    if (nd > 40)
        fprintf(stderr, "golden %s: ... %d differences in all\n", name, nd);
    return nd;
}

/* Every column of a CSV the run wrote is listed under the table's heading
 * in docs/tables.md ("| `col` |"; "| `prefix_<edge>` |" stands for every
 * column that starts with prefix_).  Returns the columns missing, printed. */
static int tables_documented(const char *dir)
{
    char *doc = tu_slurp("docs/tables.md", NULL);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int missing = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t nl = strlen(de->d_name);
        if (de->d_name[0] == '.' || nl < 5 || strcmp(de->d_name + nl - 4, ".csv") != 0)
            continue;
        char head[300], p[512];
        snprintf(head, sizeof head, "\n## `%s`\n", de->d_name);
        char *sec = strstr(doc, head), *end = sec ? strstr(sec + 1, "\n## ") : NULL;
        if (!sec) {
            fprintf(stderr, "docs/tables.md: no section \"## `%s`\"\n", de->d_name);
            missing++;
            continue;
        }
        size_t slen = end ? (size_t)(end - sec) : strlen(sec);
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        char *csv = tu_slurp(p, NULL);
        csv[strcspn(csv, "\n")] = '\0';
        for (char *c = strtok(csv, ","); c; c = strtok(NULL, ",")) {
            char want[300];
            snprintf(want, sizeof want, "| `%s` |", c);
            const char *hit = strstr(sec, want);
            int found = hit && hit < sec + slen;
            /* a per-edge column: "| `bcap_<edge>` |" */
            for (char *q = sec; !found && (q = strstr(q, "| `")) && q < sec + slen; q++) {
                const char *lt = strchr(q + 3, '<'), *bt = strchr(q + 3, '`');
                size_t pl = lt && bt && lt < bt ? (size_t)(lt - (q + 3)) : 0;
                found = pl > 0 && strncmp(c, q + 3, pl) == 0 && c[pl] != '\0';
            }
            if (!found) {
                fprintf(stderr, "docs/tables.md: `%s` has no row for column \"%s\"\n",
                        de->d_name, c);
                missing++;
            }
        }
        free(csv);
    }
    closedir(d);
    free(doc);
    return missing;
}

static void test_golden_case(void **state)
{
    const gcase *c = *state;
    const char *sets[MAX_SETS];
    memcpy(sets, c->sets, sizeof sets);
    json_t *sum = tu_run(c->scenario, c->name, sets, c->nsets);
    text t = {0};
    addf(&t, "# %s %s", c->name, c->scenario);
    for (int i = 0; i < c->nsets; i++)
        addf(&t, " --set %s", c->sets[i]);
    addf(&t, "\n");
    flatten(&t, "", sum);
    json_decref(sum);
    char dir[256], ref[256];
    snprintf(dir, sizeof dir, "%s/%s", tu_tmp, c->name);
    fingerprint_files(&t, dir);
    int undocumented = tables_documented(dir);
    snprintf(ref, sizeof ref, "%s/%s.txt", GOLDEN_DIR, c->name);
    const char *upd = getenv("AISIM_GOLDEN_UPDATE");
    if (upd && strcmp(upd, "1") == 0) {
        FILE *f = fopen(ref, "w");
        assert_non_null(f);
        fwrite(t.s, 1, t.n, f);
        assert_int_equal(fclose(f), 0);
        free(t.s);
        return;
    }
    if (access(ref, F_OK) != 0) {
        free(t.s);
        fail_msg("%s is missing: run `make golden-update` and review it", ref);
    }
    char *want = tu_slurp(ref, NULL);
    int nd = strcmp(want, t.s) == 0 ? 0 : report_diff(c->name, want, t.s);
    if (nd == 0 && strcmp(want, t.s) != 0)
        nd = 1;                 /* same lines, other order or header */
    free(want);
    free(t.s);
    if (nd)
        fail_msg("%s: %d result(s) differ from %s; if intended, `make golden-update` and "
                 "explain the change in the commit",
                 c->name, nd, ref);
    if (undocumented)
        fail_msg("%s: %d table column(s) not in docs/tables.md (listed above)", c->name,
                 undocumented);
}

/* Reads tests/golden/cases.txt: "NAME SCENARIO [KEY=VALUE]..." per line. */
static void load_cases(void)
{
    FILE *f = fopen(GOLDEN_DIR "/cases.txt", "r");
    if (!f) {
        fprintf(stderr, "cannot read %s/cases.txt\n", GOLDEN_DIR);
        exit(1);
    }
    char buf[512];
    while (fgets(buf, sizeof buf, f)) {
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        if (ncases == MAX_CASES) {
            fprintf(stderr, "cases.txt: more than %d cases\n", MAX_CASES);
            exit(1);
        }
        gcase *c = &cases[ncases];
        snprintf(c->line, sizeof c->line, "%s", buf);
        char *save = NULL, *w = strtok_r(c->line, " \t\n", &save);
        int k = 0;
        for (; w; w = strtok_r(NULL, " \t\n", &save), k++) {
            if (k == 0)
                snprintf(c->name, sizeof c->name, "%s", w);
            else if (k == 1)
                snprintf(c->scenario, sizeof c->scenario, "%s", w);
            else if (c->nsets < MAX_SETS)
                c->sets[c->nsets++] = w;
            else {
                fprintf(stderr, "cases.txt: %s: more than %d overrides\n", c->name, MAX_SETS);
                exit(1);
            }
        }
        if (k < 2) {
            fprintf(stderr, "cases.txt: \"%s\": expected NAME SCENARIO [KEY=VALUE]...\n", buf);
            exit(1);
        }
        ncases++;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    (void)argc;
    /* the same BLAS kernels as the aisim program (blaspin.h): the
     * references hold on every x86-64 machine with AVX2 and FMA */
    aisim_blas_pin(argv);
    load_cases();
    struct CMUnitTest tests[MAX_CASES];
    for (int i = 0; i < ncases; i++)
        tests[i] = (struct CMUnitTest){.name = cases[i].name,
                                       .test_func = test_golden_case,
                                       .initial_state = &cases[i]};
    return _cmocka_run_group_tests("golden", tests, (size_t)ncases, tu_setup, tu_teardown);
}
