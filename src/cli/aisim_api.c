/*
 * aisim_api.c - the embedding API (include/aisim/aisim.h) over
 * run_scenario(): a handle collects the scenario, its overrides, the seed
 * and the run directory, runs once, and keeps the summary's results
 * flattened into (path, number) and (path, string) pairs, so the caller
 * sees no JSON.
 */
#include "aisim/aisim.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "cli/scenario.h"

typedef struct named { char *path; double num; char *str; } named;

struct aisim_run {
    char *scenario, *out, *seed, *dir;
    char **sets;
    int nsets;
    int ran;
    char error[sizeof(((err *)0)->msg) + 64];
    named *res;                 /* numbers first in summary order, strings after */
    size_t nres, nnum, cap;
};

const char *aisim_version(void) { return AISIM_VERSION; }

const char *aisim_data_dir(void) { return scenario_data_dir(); }

aisim_run *aisim_open(const char *spec)
{
    aisim_run *r = xcalloc(1, sizeof *r);
    r->scenario = xstrdup(spec ? spec : "");
    return r;
}

int aisim_set(aisim_run *r, const char *assignment)
{
    if (!assignment || !strchr(assignment, '=')) {
        snprintf(r->error, sizeof r->error, "aisim_set: expected key.path=value, found \"%s\"",
                 assignment ? assignment : "(null)");
        return -1;
    }
    r->sets = xrealloc(r->sets, (size_t)(r->nsets + 1) * sizeof *r->sets);
    r->sets[r->nsets++] = xstrdup(assignment);
    return 0;
}

void aisim_set_seed(aisim_run *r, long long seed)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", seed);
    free(r->seed);
    r->seed = xstrdup(b);
}

void aisim_set_out(aisim_run *r, const char *dir)
{
    free(r->out);
    r->out = dir ? xstrdup(dir) : NULL;
}

static void add(void *ctx, const char *path, json_t *v)
{
    aisim_run *r = ctx;
    if (r->nres == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->res = xrealloc(r->res, r->cap * sizeof *r->res);
    }
    named *n = &r->res[r->nres++];
    n->path = xstrdup(path);
    n->str = json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
    n->num = json_is_number(v) ? json_number_value(v) : json_is_true(v) ? 1 : 0;
}

/* Results as pairs: numbers (and booleans) first, then strings. */
static void add_number(void *ctx, const char *path, json_t *v)
{
    if (json_is_number(v) || json_is_boolean(v))
        add(ctx, path, v);
}

static void add_string(void *ctx, const char *path, json_t *v)
{
    if (json_is_string(v))
        add(ctx, path, v);
}

static int go(aisim_run *r, int check)
{
    if (r->ran) {
        snprintf(r->error, sizeof r->error, "aisim_exec: this handle has run already");
        return EXIT_BAD_INPUT;
    }
    r->ran = 1;
    run_opts o = {.scenario = r->scenario, .out_dir = r->out, .seed = r->seed,
                  .sets = (const char *const *)r->sets, .nsets = r->nsets,
                  .check_only = check};
    err e = {0};
    json_t *sum = NULL;
    int rc = run_scenario(&o, check ? NULL : &sum, check ? NULL : &r->dir, &e);
    if (rc) {
        snprintf(r->error, sizeof r->error, "%s", e.msg);
        return run_exit_code(rc);
    }
    r->error[0] = 0;
    json_t *res = json_object_get(sum, "results");
    cli_json_scalars(res, "", 0, add_number, r);
    r->nnum = r->nres;
    cli_json_scalars(res, "", 0, add_string, r);
    json_decref(sum);
    return EXIT_OK;
}

int aisim_exec(aisim_run *r) { return go(r, 0); }
int aisim_check(aisim_run *r) { return go(r, 1); }

const char *aisim_error(const aisim_run *r) { return r->error; }
const char *aisim_run_dir(const aisim_run *r) { return r->dir; }

static const named *find(const aisim_run *r, const char *path, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (!strcmp(r->res[i].path, path))
            return &r->res[i];
    return NULL;
}

int aisim_result_number(const aisim_run *r, const char *path, double *v)
{
    const named *n = find(r, path, 0, r->nnum);
    if (!n)
        return -1;
    *v = n->num;
    return 0;
}

const char *aisim_result_string(const aisim_run *r, const char *path)
{
    const named *n = find(r, path, r->nnum, r->nres);
    return n ? n->str : NULL;
}

size_t aisim_result_count(const aisim_run *r) { return r->nnum; }

const char *aisim_result_name(const aisim_run *r, size_t i)
{
    return i < r->nnum ? r->res[i].path : NULL;
}

void aisim_close(aisim_run *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nres; i++) {
        free(r->res[i].path);
        free(r->res[i].str);
    }
    for (int i = 0; i < r->nsets; i++)
        free(r->sets[i]);
    free(r->res);
    free(r->sets);
    free(r->scenario);
    free(r->out);
    free(r->seed);
    free(r->dir);
    free(r);
}
