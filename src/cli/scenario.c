/*
 * scenario.c - top-level scenario keys (see scenario.h).
 */
#define _GNU_SOURCE             /* dladdr() */
#include "cli/scenario.h"

#include <dlfcn.h>
#include <limits.h>

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aisim/sim.h"
#include "cli/examples.h"

static const struct embedded_example *example_find(const char *name)
{
    for (const struct embedded_example *x = embedded_examples; x->name; x++)
        if (strcmp(x->name, name) == 0)
            return x;
    return NULL;
}

typedef struct top {
    const char *name, *description;
    int64_t seed, stop_ps;
    int model;
    cfg_node *section;
} top;

/* Directory holding the source tree's examples, for embedded examples that
 * name data files; set at build time (scenario_data_dir()). */
#ifndef AISIM_SRCDIR
#define AISIM_SRCDIR "."
#endif

/* PREFIX/share/aisim for a file at PREFIX/<dir>/<name> (the library or the
 * program), into b, if it holds the examples `make install` puts there. */
static int installed_home(const char *file, char *b, size_t n)
{
    char real[PATH_MAX];
    if (!file || !strchr(file, '/') || !realpath(file, real))
        return 0;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(real, '/');
        if (!slash)
            return 0;
        *slash = 0;
    }
    struct stat st;
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/share/aisim/examples", real);
    if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    return snprintf(b, n, "%s/share/aisim", real) < (int)n;
}

const char *scenario_data_dir(void)
{
    static char dir[PATH_MAX + 16];
    const char *home = getenv("AISIM_HOME");
    if (home && *home)
        return home;
    /* Installed: share/aisim beside the library (libaisim.so, which dladdr
     * names) or beside the program (a static link). */
    Dl_info di;
    if (dladdr((void *)scenario_data_dir, &di) && installed_home(di.dli_fname, dir, sizeof dir))
        return dir;
    if (installed_home("/proc/self/exe", dir, sizeof dir))
        return dir;
    return AISIM_SRCDIR;
}

/* The built-in example's name nearest to `name` (a misspelling: at most a
 * third of its length in edits, 1 to 3), or NULL. */
static const char *example_nearest(const char *name)
{
    const char *best = NULL;
    int bd = 99;
    for (const struct embedded_example *x = embedded_examples; x->name; x++) {
        int dist = cfg_edit_distance(name, x->name);
        if (dist < bd) {
            bd = dist;
            best = x->name;
        }
    }
    /* Up to a third of the name's length, at least 1 and at most 3 edits. */
    int limit = (int)strlen(name) / 3;
    limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
    return bd <= limit ? best : NULL;
}

static int bind_top(scenario *sc, const char *spec, const char *const *sets, int nsets,
                    const char *seed_override, err *e);

int scenario_load(scenario *sc, const char *spec, const char *const *sets, int nsets,
                  const char *seed_override, err *e)
{
    memset(sc, 0, sizeof *sc);
    struct stat st;
    int r;
    const struct embedded_example *ex = NULL;
    if (stat(spec, &st) == 0) {
        r = cfg_load_file(spec, &sc->doc, e);
        char *tmp = xstrdup(spec);
        sc->base_dir = xstrdup(dirname(tmp));
        free(tmp);
    } else if ((ex = example_find(spec))) {
        r = cfg_load_string(ex->path, ex->text, strlen(ex->text), &sc->doc, e);
        const char *home = scenario_data_dir();
        char *tmp = xstrdup(ex->path);
        size_t n = strlen(home) + strlen(tmp) + 2;
        sc->base_dir = xmalloc(n);
        snprintf(sc->base_dir, n, "%s/%s", home, dirname(tmp));
        free(tmp);
    } else {
        const char *near = example_nearest(spec);
        if (near)
            r = ERR(e, AISIM_ENOENT, "%s: no such scenario file or built-in example; did you "
                    "mean %s? (see aisim list)", spec, near);
        else
            r = ERR(e, AISIM_ENOENT, "%s: no such scenario file or built-in example (see aisim "
                    "list)", spec);
    }
    if (r)
        goto fail;
    return bind_top(sc, spec, sets, nsets, seed_override, e);
fail:
    scenario_fini(sc);
    return r;
}

int scenario_load_text(scenario *sc, const char *name, const char *text, size_t len,
                       const char *base_dir, const char *const *sets, int nsets, err *e)
{
    memset(sc, 0, sizeof *sc);
    int r = cfg_load_string(name, text, len, &sc->doc, e);
    if (r) {
        scenario_fini(sc);
        return r;
    }
    sc->base_dir = xstrdup(base_dir);
    return bind_top(sc, name, sets, nsets, NULL, e);
}

bool scenario_parse_seed(const char *text, int64_t *seed)
{
    /* Decimal digits only (no sign, no exponent), at most 16 of them
     * before the exact comparison: 2^53 has 16 digits. */
    size_t n = strspn(text, "0123456789");
    if (n == 0 || text[n] || n - strspn(text, "0") > 16)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (text[i] - '0');
    if (v > SCENARIO_SEED_MAX)
        return false;
    *seed = v;
    return true;
}

/* Applies overrides and binds the top-level keys of a loaded scenario; on
 * error frees it. */
static int bind_top(scenario *sc, const char *spec, const char *const *sets, int nsets,
                    const char *seed_override, err *e)
{
    int r = 0;
    for (int i = 0; i < nsets && !r; i++)
        r = cfg_set(sc->doc, sets[i], e);
    if (!r && seed_override) {
        /* Checked here, so that a bad value is reported as --seed (not as an
         * assignment "--set:1:6") and a long one is not cut off. */
        int64_t seed;
        char q[48], a[64];
        if (!scenario_parse_seed(seed_override, &seed))
            r = ERR(e, AISIM_EINVAL, "--seed: expected an integer from 0 to %lld (2^53), found %s",
                    (long long)SCENARIO_SEED_MAX, cfg_quote(seed_override, q, sizeof q));
        else {
            snprintf(a, sizeof a, "seed=%lld", (long long)seed);
            r = cfg_set(sc->doc, a, e);
        }
    }
    if (r)
        goto fail;

    cfg_node *root = cfg_root(sc->doc);
    char found[96];
    if (cfg_kind(root) != CFG_MAP) {
        r = cfg_err(e, AISIM_EINVAL, root, "", "a scenario is a map of keys (name, seed, model, "
                    "...), found %s", cfg_describe(root, found, sizeof found));
        goto fail;
    }

    /* The model decides which section key is allowed. */
    const model_ops *const *all = model_all();
    size_t nm = 0;
    while (all[nm])
        nm++;
    const char **names = xcalloc(nm + 1, sizeof *names);
    for (size_t i = 0; i < nm; i++)
        names[i] = all[i]->name;
    top t = {.model = -1};
    const char *base = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
    snprintf(sc->default_name, sizeof sc->default_name, "%.*s",
             (int)(strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".yaml")
                       ? strlen(base) - 5 : strlen(base)), base);
    cfg_key keys[] = {
        {.name = "name", .type = CFG_STR, .off = offsetof(top, name), .def = sc->default_name,
         .help = "run name (default: the scenario file's base name)"},
        {.name = "description", .type = CFG_STR, .off = offsetof(top, description), .def = "\"\"",
         .help = "free text"},
        {.name = "seed", .type = CFG_INT, .off = offsetof(top, seed), .def = "1",
         .flags = CFG_MIN | CFG_MAX, .min = 0, .max = (double)SCENARIO_SEED_MAX,
         .help = "seed of every random stream of the run"},
        {.name = "stop", .type = CFG_TIME, .off = offsetof(top, stop_ps), .flags = CFG_OPTIONAL
         | CFG_MIN_EXCL, .min = 0, .help = "simulated time at which the run stops"},
        {.name = "model", .type = CFG_ENUM, .off = offsetof(top, model), .choices = names,
         .help = "which model runs (aisim list)"},
        {.name = NULL, .type = CFG_NODE, .off = offsetof(top, section), .def = "{}",
         .help = "the model's section"},
        {0},
    };
    cfg_node *mnode = cfg_get(root, "model");
    if (!mnode) {
        char msg[512] = "missing required key (expected one of:";
        for (size_t i = 0; i < nm; i++)
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s %s", i ? "," : "", names[i]);
        r = cfg_err(e, AISIM_EINVAL, root, "model", "%s)", msg);
        free(names);
        goto fail;
    }
    {
        char path[] = "model";
        r = cfg_value(mnode, path, &keys[4], &t.model, e);
        if (r) {
            free(names);
            goto fail;
        }
        keys[5].name = names[t.model];
        /* No section: an empty one, placed at the model's name, so that a
         * required key it lacks is reported there as the section missing. */
        if (!cfg_get(root, keys[5].name) &&
            (r = cfg_put_at(sc->doc, root, keys[5].name, "{}", mnode, e))) {
            free(names);
            goto fail;
        }
    }
    t.stop_ps = SIM_TIME_MAX;
    r = cfg_bind(root, "", keys, &t, e);
    free(names);
    if (r)
        goto fail;
    sc->name = t.name;
    sc->description = t.description;
    sc->seed = t.seed;
    sc->stop_ps = t.stop_ps;
    sc->model = all[t.model];
    sc->section = t.section;
    return 0;
fail:
    scenario_fini(sc);
    return r;
}

void scenario_fini(scenario *sc)
{
    cfg_free(sc->doc);
    free(sc->base_dir);
    memset(sc, 0, sizeof *sc);
}
