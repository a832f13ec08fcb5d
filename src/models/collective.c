/*
 * collective.c - the `collective` model: nccl-tests on a packet-level
 * fabric.  Configuration glue, as net.c: the section's network keys build
 * the network (aisim/netkeys.h), `sweep` is the nccl-tests workload
 * (src/workload/coll_sweep.c) whose collectives (collective.h) send their
 * messages through the network's message API.
 *
 * Scenario section `collective:`
 *   topology, transport, routing, hash_seeds, failures, faults, pcap,
 *              sample_interval, sample_ports: the network, as for `net`
 *   sweep      {op, algorithm, ranks, min_bytes, max_bytes, step_factor,
 *              iters, warmup_iters, datatype, redop, channels, chunk, root,
 *              peer, prio, start, fluid}
 *   jobs       a list of {name, ranks, op, algorithm, bytes, channels, chunk,
 *              iters, warmup_iters, start, gap, on, off, on_off}: collective
 *              jobs sharing the fabric, some in the background
 *              (src/workload/coll_jobs.c)
 *
 * One of sweep and jobs at least.  The run ends when the sweep's last call
 * and every measured job's (iters > 0) have completed, without waiting for
 * background jobs' calls (or at the scenario's stop time).  Tables:
 * nccl_tests.csv and nccl_tests.txt (the sweep), collectives.csv (every
 * sweep call), coll_jobs*.csv (the jobs) and the network's (flows.csv,
 * links.csv, ...).
 */
#include <stdlib.h>

#include "aisim/model.h"
#include "aisim/network.h"
#include "aisim/workload.h"
#include "aisim/netkeys.h"

typedef struct coll_model_cfg {
    network_cfg net;
    cfg_node *sweep, *jobs;
} coll_model_cfg;

static const cfg_key coll_model_keys[] = {
    NET_KEYS(coll_model_cfg, net),
    {.name = "sweep", .type = CFG_NODE, .off = offsetof(coll_model_cfg, sweep),
     .flags = CFG_OPTIONAL, .help = "nccl-tests: {op, algorithm, ranks, min_bytes, max_bytes, "
     "step_factor, iters, channels, chunk, ...}"},
    {.name = "jobs", .type = CFG_NODE, .off = offsetof(coll_model_cfg, jobs),
     .flags = CFG_OPTIONAL, .help = "concurrent collective jobs: a list of {name, ranks, op, "
     "bytes, iters (0: background), start, on, off, on_off, ...}"},
    {0},
};

typedef struct coll_model {
    coll_model_cfg cfg;
    network *n;
    void *sweep, *jobs;
} coll_model;

static int cm_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
{
    coll_model *m = st;
    int r = cfg_bind(sec, path, coll_model_keys, &m->cfg, e);
    if (r)
        return r;
    if ((r = network_create(&m->n, &m->cfg.net, sec, path, env, e)))
        return r;
    m->sweep = xcalloc(1, wl_coll_sweep.size);
    m->jobs = xcalloc(1, wl_coll_jobs.size);
    if ((r = wl_coll_sweep.configure(m->sweep, m->n, m->cfg.sweep, path, env, e)) ||
        (r = wl_coll_jobs.configure(m->jobs, m->n, m->cfg.jobs, path, env, e)))
        return r;
    if (!m->cfg.sweep && !m->cfg.jobs)
        return cfg_err(e, AISIM_EINVAL, sec, path, "expected a sweep or jobs, found neither");
    return 0;
}

/* Every call the run waits for has completed. */
static bool cm_finished(const coll_model *m)
{
    return wl_coll_sweep.finished(m->sweep) && wl_coll_jobs.finished(m->jobs);
}

static void cm_on_complete(void *ctx, network *n, const net_msg *msg)
{
    (void)msg;
    coll_model *m = ctx;
    /* Background jobs keep the network busy: with jobs, the last measured
     * call ends the run. */
    if ((m->cfg.jobs || !network_active(n)) && cm_finished(m))
        sim_stop(network_sim(n));
}

static int cm_start(void *st, sim *s, err *e)
{
    (void)s;
    (void)e;
    coll_model *m = st;
    network_on_complete(m->n, cm_on_complete, m);
    network_start(m->n);
    wl_coll_sweep.start(m->sweep);
    wl_coll_jobs.start(m->jobs);
    return 0;
}

static double cm_progress(const void *st, const sim *s)
{
    (void)s;
    const coll_model *m = st;
    return m->cfg.sweep ? wl_coll_sweep.progress(m->sweep) : wl_coll_jobs.progress(m->jobs);
}

static int cm_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    (void)s;
    coll_model *m = st;
    int r = network_report(m->n, o, sum, e);
    if (!r)
        r = wl_coll_sweep.report(m->sweep, o, sum, e);
    if (!r)
        r = wl_coll_jobs.report(m->jobs, o, sum, e);
    if (!r)
        json_object_set_new(sum, "print",
                            json_string(m->cfg.sweep ? "nccl_tests.txt" : "coll_jobs.txt"));
    return r;
}

static void cm_fini(void *st)
{
    coll_model *m = st;
    if (m->sweep) {
        wl_coll_sweep.fini(m->sweep);   /* closes its connections: before the network */
        free(m->sweep);
    }
    if (m->jobs) {
        wl_coll_jobs.fini(m->jobs);
        free(m->jobs);
    }
    network_destroy(m->n);
}

static const plot_spec coll_plots[] = {
    {.csv = "nccl_tests.csv", .x = "size", .y = "busbw_GBps", .title = "bus bandwidth",
     .out = "busbw", .xlabel = "size (B)", .ylabel = "busbw (GB/s)", .logx = 1},
    {.csv = "nccl_tests.csv", .x = "size", .y = "algbw_GBps", .title = "algorithm bandwidth",
     .out = "algbw", .xlabel = "size (B)", .ylabel = "algbw (GB/s)", .logx = 1},
    {.csv = "nccl_tests.csv", .x = "size", .y = "time_us", .title = "time per call",
     .out = "time", .xlabel = "size (B)", .ylabel = "time (us)", .logx = 1},
    {0},
};

/* What `aisim run` prints first (model.h). */
static const model_headline cm_headlines[] = {
    {"nccl_tests.avg_busbw_GBps", "mean bus bandwidth", "B/s", 1e9},
    {"nccl_tests.peak_busbw_GBps", "peak bus bandwidth", "B/s", 1e9},
    {"nccl_tests.largest_bytes", "largest size", "B", 0},
    {"nccl_tests.largest_time_us", "time at the largest size", "s", 1e-6},
    {"coll_jobs.jobs.*.busbw_GBps", "bus bandwidth", "B/s", 1e9},
    {"coll_jobs.jobs.*.mean_time_us", "mean call time", "s", 1e-6},
    MODEL_HEADLINES_NETWORK,
    {NULL, NULL, NULL, 0},
};

const model_ops collective_model_ops = {
    .name = "collective",
    .summary = "nccl-tests on a packet-level fabric: collectives swept over message sizes",
    .state_size = sizeof(coll_model),
    .configure = cm_configure,
    .start = cm_start,
    .progress = cm_progress,
    .report = cm_report,
    .fini = cm_fini,
    .plots = coll_plots,
    .headlines = cm_headlines,
};
