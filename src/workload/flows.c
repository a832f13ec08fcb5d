/*
 * flows.c - the `flows` workload: a list of {src, dst, size, start, prio},
 * each one message on its own connection; without size a flow is
 * long-lived (an endless stream).
 */
#include <stdlib.h>

#include "aisim/workload.h"

typedef struct flow_cfg {
    const char *src, *dst;
    int64_t size, start, prio;
} flow_cfg;

static const cfg_key flow_keys[] = {
    {.name = "src", .type = CFG_STR, .off = offsetof(flow_cfg, src), .help = "sending host"},
    {.name = "dst", .type = CFG_STR, .off = offsetof(flow_cfg, dst), .help = "receiving host"},
    {.name = "size", .type = CFG_SIZE, .off = offsetof(flow_cfg, size), .flags = CFG_OPTIONAL
     | CFG_MIN_EXCL, .min = 0, .help = "bytes to deliver (absent: long-lived)"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(flow_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "start time"},
    {.name = "prio", .type = CFG_INT, .off = offsetof(flow_cfg, prio), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = PORT_MAX_PRIO - 1, .help = "priority class"},
    {0},
};

typedef struct flows_wl {
    network *n;
    flow_cfg *specs;
    int *src, *dst;
    size_t nspecs;
} flows_wl;

/* Each flow's hosts by name, two different ends; a flow without size only
 * in a scenario with a stop (it never ends). */
static int flows_configure(void *st, network *n, cfg_node *fl, const char *path,
                           const model_env *env, err *e)
{
    flows_wl *w = st;
    w->n = n;
    char sub[512], sub2[512], kp[600];
    long len = net_list(fl, path, "flows", "flows", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    w->nspecs = (size_t)len;
    w->specs = xcalloc(w->nspecs + 1, sizeof *w->specs);
    w->src = xcalloc(w->nspecs + 1, sizeof *w->src);
    w->dst = xcalloc(w->nspecs + 1, sizeof *w->dst);
    for (size_t i = 0; i < w->nspecs; i++) {
        cfg_node *f = cfg_at(fl, i);
        flow_cfg *s = &w->specs[i];
        cfg_path_index(sub2, sizeof sub2, sub, i);
        int r;
        if ((r = cfg_bind(f, sub2, flow_keys, s, e)))
            return r;
        if ((r = network_endpoint(n, s->src, cfg_get(f, "src"),
                                  cfg_path(kp, sizeof kp, sub2, "src"), e)) < 0)
            return r;
        w->src[i] = r;
        if ((r = network_endpoint(n, s->dst, cfg_get(f, "dst"),
                                  cfg_path(kp, sizeof kp, sub2, "dst"), e)) < 0)
            return r;
        w->dst[i] = r;
        if (w->src[i] == w->dst[i])
            return cfg_err(e, AISIM_EINVAL, cfg_get(f, "dst"), kp, "a flow needs two "
                           "different hosts, found \"%s\" twice", s->dst);
        if (s->size == 0 && env->stop_ps == SIM_TIME_MAX)
            return cfg_err(e, AISIM_EINVAL, f, sub2, "expected a size, or a top-level stop (a "
                           "flow without size is long-lived and the run would never end), "
                           "found neither");
    }
    return 0;
}

static void flows_start(void *st)
{
    flows_wl *w = st;
    for (size_t i = 0; i < w->nspecs; i++)
        network_send(w->n, w->src[i], w->dst[i],
                     w->specs[i].size ? (uint64_t)w->specs[i].size : UINT64_MAX,
                     (int)w->specs[i].prio, -1, w->specs[i].start, NULL, NULL);
}

static bool flows_finished(const void *st)
{
    (void)st;
    return true;                /* every message is sent at the start */
}

static double flows_progress(const void *st)
{
    (void)st;
    return -1;
}

static void flows_fini(void *st)
{
    flows_wl *w = st;
    free(w->specs);
    free(w->src);
    free(w->dst);
}

const workload_ops wl_flows = {
    .key = "flows",
    .size = sizeof(flows_wl),
    .configure = flows_configure,
    .start = flows_start,
    .finished = flows_finished,
    .progress = flows_progress,
    .fini = flows_fini,
};
