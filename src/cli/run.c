/*
 * run.c - one run: scenario -> model -> engine -> run directory.
 *
 * Order matters for "no partial results": the scenario is loaded and the
 * model configured (which reads every data file) before the output
 * directory is touched, so bad input never creates anything; after that,
 * files are written under temporary names and renamed only once the run has
 * completed (out.h).  SIGINT, SIGTERM and SIGHUP stop the engine at the next
 * monitor tick and the run is discarded (exit 1), unless the process was
 * started with that signal ignored (`nohup aisim run ...` survives the
 * terminal's hangup).
 */
#include "cli/run.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aisim/log.h"
#include "aisim/netreg.h"
#include "aisim/model.h"
#include "aisim/out.h"
#include "aisim/sim.h"
#include "aisim/units.h"
#include "cli/cli.h"
#include "cli/scenario.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

void run_catch_signal(int sig, const struct sigaction *sa, struct sigaction *old)
{
    sigaction(sig, NULL, old);
    if (old->sa_handler != SIG_IGN)
        sigaction(sig, sa, NULL);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct monitor {
    const model_ops *ops;
    const void *st;
    int64_t stop_ps;
    int show;               /* print a progress line */
    double t_start, t_last; /* wall clock */
    uint64_t ev_last;
    int printed;
} monitor;

void cli_fmt_eta(char *b, size_t n, double s)
{
    /* Rounded once, then split: 719.6 s is 12m00s, not 11m60s. */
    if (!isfinite(s) || s < 0 || s > 1e9) {
        snprintf(b, n, "?");
        return;
    }
    long long t = llround(s);
    if (t < 60)
        snprintf(b, n, "%llds", t);
    else if (t < 3600)
        snprintf(b, n, "%lldm%02llds", t / 60, t % 60);
    else {
        long long m = llround(s / 60);
        snprintf(b, n, "%lldh%02lldm", m / 60, m % 60);
    }
}

/* Simulated time for people: 4 significant digits in a fitting unit. */
static void fmt_sim_time(char *b, size_t n, int64_t ps)
{
    static const struct { int64_t div; const char *name; } u[] = {
        {PS_PER_S, "s"}, {PS_PER_MS, "ms"}, {PS_PER_US, "us"}, {PS_PER_NS, "ns"}, {1, "ps"}};
    size_t i = 0;
    while (i < 4 && ps < u[i].div)
        i++;
    double v = (double)ps / (double)u[i].div;
    snprintf(b, n, v >= 1000 ? "%.0f%s" : "%.4g%s", v, u[i].name);
}

static void on_monitor(void *ctx, sim *s)
{
    monitor *m = ctx;
    if (interrupted) {
        sim_stop(s);
        return;
    }
    if (!m->show)
        return;
    double now = wall_now();
    if (now - m->t_last < 0.5)
        return;
    double frac = m->ops->progress ? m->ops->progress(m->st, s) : -1;
    if (frac < 0 && m->stop_ps != SIM_TIME_MAX)
        frac = (double)sim_now(s) / (double)m->stop_ps;
    double rate = (double)(sim_events_run(s) - m->ev_last) / (now - m->t_last);
    double el = now - m->t_start;
    char eta[32], t[32];
    /* The model's fraction is of its work (bytes, messages, rounds), so
     * the wall time per unit of work so far estimates the rest; below 1 %
     * of the work done, the start-up and the first (smallest) sizes of a
     * sweep dominate and the estimate means nothing: "?". */
    cli_fmt_eta(eta, sizeof eta, frac >= 0.01 ? el * (1 - frac) / frac : NAN);
    fmt_sim_time(t, sizeof t, sim_now(s));
    fprintf(stderr, "\r\033[K  sim %s  %.2f Mev/s  %s%.0f%%  ETA %s", t, rate / 1e6,
            frac >= 0 ? "" : "?", frac >= 0 ? 100 * frac : 0.0, eta);
    m->printed = 1;
    m->t_last = now;
    m->ev_last = sim_events_run(s);
}

int cli_bad_set(const char *arg, const char *next, char *msg, size_t n)
{
    if (strchr(arg, '='))
        return 0;
    if (next && next[0] != '-')
        snprintf(msg, n, "--set expects key.path=value, found \"%s\" without '='; "
                 "write --set %s=%s", arg, arg, next);
    else
        snprintf(msg, n, "--set expects key.path=value, found \"%s\" without '='", arg);
    return 1;
}

void cli_print_error(const err *e)
{
    fprintf(stderr, "%s\n", e->msg);
    if (log_stderr_level <= LOG_DEBUG && e->src)
        fprintf(stderr, "  (raised at %s:%d)\n", e->src, e->src_line);
}

int run_exit_code(int rc)
{
    switch (rc) {
    case 0: return EXIT_OK;
    case AISIM_EINVAL: case AISIM_ENOENT: case AISIM_ERANGE: return EXIT_BAD_INPUT;
    default: return EXIT_RUN_FAILED;
    }
}

int run_scenario(const run_opts *o, json_t **summary, char **out_dir_used, err *e)
{
    scenario sc;
    if (summary)
        *summary = NULL;
    if (out_dir_used)
        *out_dir_used = NULL;
    int r = scenario_load(&sc, o->scenario, o->sets, o->nsets, o->seed, e);
    if (r)
        return r;
    const model_ops *ops = sc.model;
    void *st = xcalloc(1, ops->state_size);
    sim *s = sim_create();
    model_env env = {.sim = s, .seed = (uint64_t)sc.seed, .base_dir = sc.base_dir,
                     .stop_ps = sc.stop_ps,
                     .net = net_registry_builtin()};
    out *od = NULL;
    json_t *sum = NULL;
    char *dir = NULL;

    /* Signals are caught from set-up on (a configure or start that builds
     * or computes for long polls the flag through sim_poll()); SIGHUP too: a
     * closed terminal must not leave .part files behind. */
    static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa = {.sa_handler = on_signal}, old_sa[3];
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    for (int i = 0; i < 3; i++)
        run_catch_signal(stop_sigs[i], &sa, &old_sa[i]);
    sim_set_interrupt(s, &interrupted);

    r = ops->configure(st, sc.section, ops->name, &env, e);
    if (r || o->check_only || interrupted)
        goto done;

    if ((r = ops->start(st, s, e)) || interrupted)
        goto done;

    if (o->out_dir) {
        dir = xstrdup(o->out_dir);
    } else {
        dir = xmalloc(strlen(sc.name) + 8);
        sprintf(dir, "out/%s", sc.name);
    }
    if ((r = out_open(dir, o->force ? OUT_FORCE : 0, &od, e)))
        goto done;
    FILE *logf = out_file(od, "run.log", e);
    if (!logf) {
        r = e->code;
        goto done;
    }
    log_file = logf;
    LOG(LOG_INFO, "run", "aisim %s: scenario %s (%s), model %s, seed %lld", AISIM_VERSION,
        sc.name, cfg_doc_name(sc.doc), ops->name, (long long)sc.seed);

    monitor mon = {.ops = ops, .st = st, .stop_ps = sc.stop_ps, .show = o->progress};
    mon.t_start = mon.t_last = wall_now();
    sim_set_monitor(s, on_monitor, &mon, 1u << 16);
    const char *stall = getenv("AISIM_STALL_EVENTS");
    if (stall)
        sim_set_stall_limit(s, strtoull(stall, NULL, 10));
    sim_run(s, sc.stop_ps);
    double wall = wall_now() - mon.t_start;
    if (mon.printed)
        fprintf(stderr, "\r\033[K");
    if (interrupted)
        goto done;
    if (sim_failure(s)) {
        r = ERR(e, AISIM_ERUN, "run failed at simulated time %.6f s: %s; no results written",
                ps_to_s(sim_now(s)), sim_failure(s));
        goto done;
    }
    /* A model that evaluates its result without events (training with
     * comm: analytical) simulated no time: say so rather than "0 events". */
    if (sim_events_run(s))
        LOG(LOG_INFO, "run", "stopped at simulated time %.12g s after %llu events",
            ps_to_s(sim_now(s)), (unsigned long long)sim_events_run(s));
    else
        LOG(LOG_INFO, "run", "evaluated without simulating events (an analytical model)");

    sum = json_object();
    json_t *results = json_object();
    if ((r = ops->report(st, s, od, results, e)) || interrupted) {
        json_decref(results);
        goto done;
    }
    /* The layout of this file: raised when a key changes meaning or goes
     * (docs/outputs.md); a new key does not raise it. */
    json_object_set_new(sum, "schema_version", json_integer(AISIM_SUMMARY_SCHEMA));
    json_object_set_new(sum, "aisim_version", json_string(AISIM_VERSION));
    json_object_set_new(sum, "scenario", json_string(sc.name));
    json_object_set_new(sum, "model", json_string(ops->name));
    json_object_set_new(sum, "seed", json_integer(sc.seed));
    json_object_set_new(sum, "sim_time_s", json_real(ps_to_s(sim_now(s))));
    json_object_set_new(sum, "events", json_integer((json_int_t)sim_events_run(s)));
    json_object_set_new(sum, "results", results);
    json_t *w = json_object();
    json_object_set_new(w, "seconds", json_real(wall));
    json_object_set_new(w, "events_per_second",
                        json_real(wall > 0 ? (double)sim_events_run(s) / wall : 0));
    json_object_set_new(w, "sim_seconds_per_second",
                        json_real(wall > 0 ? ps_to_s(sim_now(s)) / wall : 0));
    /* a model's own wall-clock figures (results.wall) join the top-level
     * "wall", the only part of summary.json that may differ between runs */
    json_t *mw = json_object_get(results, "wall");
    if (json_is_object(mw)) {
        json_object_update(w, mw);
        json_object_del(results, "wall");
    }
    json_object_set_new(sum, "wall", w);

    FILE *f = out_file(od, "scenario.yaml", e);
    if (!f || (r = cfg_emit(cfg_root(sc.doc), f, e))) {
        r = r ? r : e->code;
        goto done;
    }
    json_t *files = json_array();
    for (size_t i = 0; out_name(od, i); i++)
        json_array_append_new(files, json_string(out_name(od, i)));
    json_array_append_new(files, json_string("summary.json"));
    json_object_set_new(sum, "files", files);
    if (!(f = out_file(od, "summary.json", e))) {
        r = e->code;
        goto done;
    }
    json_dumpf(sum, f, RUN_JSON_FLAGS);
    fputc('\n', f);
    log_file = NULL;
    r = out_commit(od, e);
    od = NULL;

done:
    log_file = NULL;
    for (int i = 0; i < 3; i++)
        sigaction(stop_sigs[i], &old_sa[i], NULL);
    if (interrupted) {
        /* whatever the model said while it stopped, the answer is this */
        r = ERR(e, AISIM_ERUN, "interrupted at simulated time %.6f s; no results written",
                ps_to_s(sim_now(s)));
    }
    if (r) {
        out_abort(od);
        json_decref(sum);
        sum = NULL;
    }
    if (!r && out_dir_used && dir)
        *out_dir_used = xstrdup(dir);
    if (summary)
        *summary = sum;
    else
        json_decref(sum);
    free(dir);
    ops->fini(st);
    free(st);
    sim_destroy(s);
    scenario_fini(&sc);
    return r;
}
