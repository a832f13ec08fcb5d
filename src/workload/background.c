/*
 * background.c - the `background` workload: Poisson flow arrivals between
 * uniformly random ordered pairs of distinct hosts, at `load` times the
 * hosts' total link capacity, sizes from a distribution (data/flow_sizes/:
 * web search, data mining), as the traffic generators of the transport
 * papers do.  Each flow is one message on its own connection.
 */
#include <math.h>

#include "aisim/dist.h"
#include "aisim/rng.h"
#include "aisim/units.h"
#include "aisim/workload.h"

typedef struct background_cfg {
    double load;
    cfg_node *sizes;
    int64_t start, duration, max_flows;
} background_cfg;

static const cfg_key background_keys[] = {
    {.name = "load", .type = CFG_FLOAT, .off = offsetof(background_cfg, load),
     .flags = CFG_MIN_EXCL | CFG_MAX_EXCL, .min = 0, .max = 1,
     .help = "offered load as a fraction of the hosts' link capacity"},
    {.name = "sizes", .type = CFG_NODE, .off = offsetof(background_cfg, sizes),
     .help = "a flow-size distribution such as {dist: empirical, file: "
     "../../data/flow_sizes/websearch.cdf, unit: 1B}"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(background_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "first possible arrival"},
    {.name = "duration", .type = CFG_TIME, .off = offsetof(background_cfg, duration),
     .flags = CFG_MIN_EXCL, .min = 0, .help = "flows arrive during [start, start + duration)"},
    {.name = "max_flows", .type = CFG_INT, .off = offsetof(background_cfg, max_flows),
     .def = "1000000", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e8,
     .help = "stop generating after this many flows"},
    {0},
};

typedef struct background_wl {
    network *n;
    bool on;
    background_cfg c;
    dist sizes;
    rng r_arr, r_size, r_pair;
    double gap_ps;              /* mean gap between arrivals, all hosts together */
    int64_t made;
} background_wl;

static int bg_configure(void *st, network *n, cfg_node *node, const char *path,
                        const model_env *env, err *e)
{
    background_wl *w = st;
    w->n = n;
    if (!node)
        return 0;
    w->on = true;
    char sub[512], sub2[512];
    int r;
    cfg_path(sub, sizeof sub, path, "background");
    if ((r = cfg_bind(node, sub, background_keys, &w->c, e)) ||
        (r = dist_from_cfg(w->c.sizes, cfg_path(sub2, sizeof sub2, sub, "sizes"), DIST_Q_SIZE,
                           env->base_dir, &w->sizes, e)))
        return r;
    /* Aggregate Poisson arrivals: load x (sum of the hosts' link rates)
     * / mean flow size. */
    double mean_bits = 8 * dist_mean(&w->sizes);
    if (!(mean_bits > 0))
        return cfg_err(e, AISIM_ERANGE, w->c.sizes, sub2, "expected flow sizes with a "
                       "mean > 0");
    w->gap_ps = 1e12 * mean_bits / (w->c.load * network_host_capacity_bps(n));
    rng_init(&w->r_arr, env->seed, "net.background.arrivals", 0);
    rng_init(&w->r_size, env->seed, "net.background.sizes", 0);
    rng_init(&w->r_pair, env->seed, "net.background.pairs", 0);
    return 0;
}

static bool bg_finished(const void *st)
{
    const background_wl *w = st;
    return !w->on || sim_now(network_sim(w->n)) >= w->c.start + w->c.duration ||
           w->made >= w->c.max_flows;
}

/* The next flow: a random ordered pair of distinct hosts, a size from the
 * distribution (at least one byte). */
static void on_arrival(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    background_wl *w = obj;
    int64_t now = sim_now(s);
    if (bg_finished(w))
        return;
    int nh = (int)network_endpoints(w->n);
    int src = (int)rng_below(&w->r_pair, (uint64_t)nh);
    int dst = (int)rng_below(&w->r_pair, (uint64_t)nh - 1);
    if (dst >= src)
        dst++;
    double sz = dist_sample(&w->sizes, &w->r_size);
    network_send(w->n, src, dst, sz < 1 ? 1 : (uint64_t)units_round_sat(sz), 0, -1, now, NULL,
                 NULL);
    w->made++;
    sim_schedule_in(s, units_round_sat(rng_exponential(&w->r_arr, w->gap_ps)), on_arrival, w, 0);
}

static void bg_start(void *st)
{
    background_wl *w = st;
    if (w->on)
        sim_schedule(network_sim(w->n),
                     w->c.start + (int64_t)llround(rng_exponential(&w->r_arr, w->gap_ps)),
                     on_arrival, w, 0);
}

static double bg_progress(const void *st)
{
    (void)st;
    return -1;
}

static void bg_fini(void *st)
{
    background_wl *w = st;
    dist_fini(&w->sizes);
}

const workload_ops wl_background = {
    .key = "background",
    .size = sizeof(background_wl),
    .configure = bg_configure,
    .start = bg_start,
    .finished = bg_finished,
    .progress = bg_progress,
    .fini = bg_fini,
};
