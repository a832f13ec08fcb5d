/*
 * model.h - what a scenario runs.
 *
 * A scenario names one model (`model: queue`) and configures it in the
 * section of the same name.  A model is an ops table, in the style of Linux's
 * Qdisc_ops: the runner allocates `state_size` zeroed bytes, calls
 * configure() (bind and validate the section, load data files: no events, no
 * output; `aisim check` stops here), start() (schedule the first events),
 * runs the engine until the scenario's stop time or until the model calls
 * sim_stop(), then report() (tables and headline metrics) and fini().
 *
 * The registry (src/cli/registry.c) lists every model; `aisim list` prints
 * them.  The five systems plug in here through their simulator glue, while
 * their decision logic stays sans-I/O in src/systems/<name>/.
 */
#ifndef AISIM_MODEL_H
#define AISIM_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/out.h"
#include "aisim/sim.h"

typedef struct model_env {
    sim *sim;               /* the engine the run will use: configure() may
                               build objects on it but schedules nothing */
    uint64_t seed;          /* the run's seed: derive streams with rng_init() */
    const char *base_dir;   /* resolves relative data paths in the scenario */
    int64_t stop_ps;        /* the scenario's stop time (SIM_TIME_MAX: none) */
    const struct net_registry *net; /* transports, disciplines, forwarders,
                                       hooks and extensions a network is
                                       built from (netreg.h); required by
                                       network_create() */
} model_env;

/* A figure `aisim plot` draws from one of the model's CSV tables. */
typedef struct plot_spec {
    const char *csv;        /* table in the run directory; NULL ends a list */
    const char *x;          /* column on the x axis */
    const char *y;          /* column(s) on the y axis, comma-separated */
    const char *group;      /* column whose values split the rows into series,
                               or NULL */
    const char *title;      /* figure title */
    const char *out;        /* image name without extension */
    const char *xlabel, *ylabel;    /* axis labels; NULL: the column names */
    int logx;               /* logarithmic x axis */
    int style;              /* enum plot_style */
} plot_spec;

/* How a figure draws its series: lines (a time series), lines with a mark
 * at each point (a size sweep), points alone (a scatter of events), or bars
 * over a categorical x (one slot per row's x value, series side by side). */
enum plot_style { PLOT_LINES, PLOT_MARKS, PLOT_DOTS, PLOT_BARS };

/* A headline result: what `aisim run` prints first, before the counters.
 * key is a path into the summary's results: members joined by '.', an
 * integer picks an array element (-1 the last), '*' stands for every member
 * of an object or element of an array.  Consecutive headlines with the same
 * part before '*' print as one table: a row per match (an element's "name"
 * member, or its index), a column per headline.  A key the run does not
 * have is not printed.  A list ends with a NULL key. */
typedef struct model_headline {
    const char *key;
    const char *label;      /* a few words; a table's column heading */
    const char *unit;       /* printed with an SI prefix: "s", "bit/s", "B",
                               "B/s", "J", "W", "rps"...; "%": a fraction
                               printed in per cent; "" or NULL: a plain
                               number (or a string) */
    double scale;           /* multiplies the value into `unit` (0: 1), e.g.
                               1e9 for a key in GB/s printed in B/s */
} model_headline;

/* The network's headlines (network_report()'s part of the summary), for
 * the models that build a network: put it in their list. */
#define MODEL_HEADLINES_NETWORK                                                             \
    {"goodput_bps", "goodput", "bit/s", 0}, {"fct_p50_s", "FCT median", "s", 0},             \
    {"fct_p99_s", "FCT p99", "s", 0}, {"flows_completed", "messages completed", "", 0},     \
    {"drops", "packet drops", "", 0}

typedef struct model_ops {
    const char *name;       /* `model:` value and section key */
    const char *summary;    /* one line for `aisim list` */
    size_t state_size;      /* bytes of state, allocated zeroed */

    /* Binds and validates the model's section; loads data files.  Must not
     * schedule events or write output.  Errors name the scenario location. */
    int (*configure)(void *st, cfg_node *section, const char *path,
                     const model_env *env, err *e);
    /* Schedules the first events. */
    int (*start)(void *st, sim *s, err *e);
    /* Fraction of the run done, in [0, 1], or < 0 if the model cannot tell
     * (the runner then uses the stop time).  May be NULL. */
    double (*progress)(const void *st, const sim *s);
    /* Writes the model's tables through o and its headline metrics into
     * `summary` (a JSON object). */
    int (*report)(void *st, const sim *s, out *o, json_t *summary, err *e);
    /* Releases what configure() and start() acquired.  Called whenever
     * configure() was called, even if it failed. */
    void (*fini)(void *st);
    /* Figures for `aisim plot`, or NULL; a CSV without one gets a default
     * figure (every numeric column against the first). */
    const plot_spec *plots;
    /* What `aisim run` prints first, or NULL (model_headline). */
    const model_headline *headlines;
} model_ops;

/* What configure(), start() or report() returns when sim_poll() told it to
 * stop (a signal, or a fuzzer's work budget spent): the runner then
 * discards the run. */
#define MODEL_CUT(e) ERR((e), AISIM_ERUN, "stopped before the end (interrupted, or out of work " \
                         "budget)")

/* The registry. */
const model_ops *model_find(const char *name);
/* NULL-terminated array of every model, in `aisim list` order. */
const model_ops *const *model_all(void);

#endif
