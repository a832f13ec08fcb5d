/*
 * birp_cfg.c - the BIRP model's scenario schema and configure: the key
 * tables (top level, edges, links and their pairs, classes, workload,
 * bandit, weights), their binding and checks, the profile and trace loading,
 * each class's SLO-feasible models per edge (best first, and the
 * model_selection Pareto front), and the derived arrival rate and rng
 * streams.
 *
 * Every message names the offending key's path; see birp_sim_int.h for the
 * state it fills.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/units.h"
#include "systems/birp/birp_sim_int.h"

const char *const policy_names[] = {"birp", "birp_static", "serial", "model_selection",
                                    "local", "jsq", "clipper", "batch_only", "triton", NULL};
static const char *const source_names[] = {"trace", "poisson", "onoff", NULL};
static const char *const batcher_names[] = {"qp", "aimd", "triton", NULL};
static const char *const tir_names[] = {"parametric", "profile", NULL};

/* ---- configuration -------------------------------------------------------- */

static const cfg_key top_keys[] = {
    {.name = "policy", .type = CFG_ENUM, .off = offsetof(top_cfg, policy), .def = "birp",
     .choices = policy_names,
     .help = "scheduler: birp, birp_static, serial, model_selection, local, jsq, clipper, "
             "batch_only, triton"},
    {.name = "profiles", .type = CFG_STR, .off = offsetof(top_cfg, profiles),
     .help = "latency-vs-batch profile CSV, relative to the scenario file"},
    {.name = "engine", .type = CFG_STR, .off = offsetof(top_cfg, engine), .def = "TRT_fp16",
     .help = "which engine's rows of the profile file to use"},
    {.name = "slot", .type = CFG_TIME, .off = offsetof(top_cfg, slot_ps), .def = "1s",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "decision epoch"},
    {.name = "warmup", .type = CFG_TIME, .off = offsetof(top_cfg, warmup_ps), .def = "10s",
     .flags = CFG_MIN, .min = 0, .help = "requests arriving earlier are not measured"},
    {.name = "latency_sigma", .type = CFG_FLOAT, .off = offsetof(top_cfg, sigma), .def = "0.1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 2,
     .help = "sigma of the mean-one lognormal run-to-run variation of batch latency"},
    {.name = "parallel", .type = CFG_INT, .off = offsetof(top_cfg, parallel), .def = "2",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 16,
     .help = "batches (or single requests) an accelerator runs at once, under every policy"},
    {.name = "parallel_penalty", .type = CFG_FLOAT, .off = offsetof(top_cfg, gamma), .def = "0.6",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 10,
     .help = "gamma: a batch started with k others running takes (1 + gamma k) times longer"},
    {.name = "drift_at", .type = CFG_TIME, .off = offsetof(top_cfg, drift_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "when the true batching gain changes (0s: never)"},
    {.name = "drift_tir_gain", .type = CFG_FLOAT, .off = offsetof(top_cfg, drift_gain), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1,
     .help = "after drift_at, the true TIR becomes 1 + g (TIR - 1) (co-located load, throttling)"},
    {.name = "edges", .type = CFG_NODE, .off = offsetof(top_cfg, edges),
     .help = "list of edges {name, device, memory, models}"},
    {.name = "links", .type = CFG_NODE, .off = offsetof(top_cfg, links), .def = "{}",
     .help = "inter-edge links {bandwidth, rtt, pairs: [{between: [a, b], bandwidth, rtt}]}"},
    {.name = "classes", .type = CFG_NODE, .off = offsetof(top_cfg, classes),
     .help = "request classes {name, slo, share, input, models}"},
    {.name = "workload", .type = CFG_NODE, .off = offsetof(top_cfg, workload),
     .help = "request stream {source, file, load, origin_shares, on, off}"},
    {.name = "bandit", .type = CFG_NODE, .off = offsetof(top_cfg, bandit), .def = "{}",
     .help = "UCB over TIR parameters {a, beta, hold, c, normalise, discount, window, "
             "static_a, static_beta}"},
    {.name = "clipper", .type = CFG_NODE, .off = offsetof(top_cfg, clipper), .def = "{}",
     .help = "clipper: AIMD adaptive batching {step, backoff, timeout}"},
    {.name = "triton", .type = CFG_NODE, .off = offsetof(top_cfg, triton), .def = "{}",
     .help = "triton: Triton's dynamic batcher {max_queue_delay, preferred, max_batch}"},
    {.name = "batch_grid", .type = CFG_NODE, .off = offsetof(top_cfg, grid),
     .def = "[1, 2, 4, 8, 16, 32, 64]", .help = "breakpoints of the piecewise-linear batch model"},
    {.name = "weights", .type = CFG_NODE, .off = offsetof(top_cfg, weights), .def = "{}",
     .help = "QP objective weights {transfer, batch_latency, queue, balance}"},
    {.name = "downgrade", .type = CFG_BOOL, .off = offsetof(top_cfg, downgrade), .def = "true",
     .help = "birp: switch an overflowing edge to faster models when batching is not enough"},
    {.name = "class_caps", .type = CFG_BOOL, .off = offsetof(top_cfg, class_caps), .def = "true",
     .help = "batching policies: looser SLO classes may take proportionally larger batches"},
    {.name = "target_util", .type = CFG_FLOAT, .off = offsetof(top_cfg, target_util), .def = "0.9",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "model_selection: utilisation above which models are downgraded"},
    {.name = "batcher", .type = CFG_ENUM, .off = offsetof(top_cfg, batcher), .def = "qp",
     .choices = batcher_names,
     .help = "birp, birp_static, batch_only (ablation): batches formed under the QP's caps "
             "(qp), Clipper's AIMD caps (aimd) or Triton's dynamic batcher (triton)"},
    {.name = "tir", .type = CFG_ENUM, .off = offsetof(top_cfg, tir), .def = "parametric",
     .choices = tir_names,
     .help = "the QP's TIR: the bandit-tuned parametric form, or (ablation, an oracle) the "
             "profile's own b l(1) / l(b)"},
    {.name = "switch_cost", .type = CFG_BOOL, .off = offsetof(top_cfg, switch_cost),
     .def = "true", .help = "a model an edge puts in use serves only once its engine is loaded "
                            "(load_setup + engine size / load_rate); false: switching is free"},
    {.name = "load_rate", .type = CFG_RATE, .off = offsetof(top_cfg, load_rate_bps),
     .def = "2Gbps", .flags = CFG_MIN_EXCL, .min = 0,
     .help = "rate an engine file is read and deserialised at when a model is put in use"},
    {.name = "load_setup", .type = CFG_TIME, .off = offsetof(top_cfg, load_setup_ps),
     .def = "100ms", .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 3600e12,
     .help = "fixed part of a model's load time (execution context, warm-up run)"},
    {0},
};

typedef struct edge_cfg {
    const char *name, *device;
    int64_t memory_bytes;
    cfg_node *models;
} edge_cfg;

static const cfg_key edge_keys[] = {
    {.name = "name", .type = CFG_STR, .off = offsetof(edge_cfg, name)},
    {.name = "device", .type = CFG_STR, .off = offsetof(edge_cfg, device),
     .help = "device name as in the profile file"},
    {.name = "memory", .type = CFG_SIZE, .off = offsetof(edge_cfg, memory_bytes), .def = "8GB",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "accelerator memory for model engines"},
    {.name = "models", .type = CFG_NODE, .off = offsetof(edge_cfg, models),
     .help = "deployed models (names in the profile file)"},
    {0},
};

typedef struct link_cfg {
    int64_t bw_bps, rtt_ps;
    cfg_node *pairs, *between;
} link_cfg;

static const cfg_key link_keys[] = {
    {.name = "bandwidth", .type = CFG_RATE, .off = offsetof(link_cfg, bw_bps), .def = "1Gbps",
     .flags = CFG_MIN_EXCL, .min = 0},
    {.name = "rtt", .type = CFG_TIME, .off = offsetof(link_cfg, rtt_ps), .def = "2ms",
     .flags = CFG_MIN, .min = 0},
    {.name = "pairs", .type = CFG_NODE, .off = offsetof(link_cfg, pairs), .def = "[]"},
    {0},
};

static const cfg_key pair_keys[] = {
    {.name = "between", .type = CFG_NODE, .off = offsetof(link_cfg, between),
     .help = "two edge names"},
    {.name = "bandwidth", .type = CFG_RATE, .off = offsetof(link_cfg, bw_bps),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0},
    {.name = "rtt", .type = CFG_TIME, .off = offsetof(link_cfg, rtt_ps),
     .flags = CFG_OPTIONAL | CFG_MIN, .min = 0},
    {0},
};

typedef struct class_cfg {
    const char *name;
    int64_t slo_ps, input_bytes, output_bytes;
    double share;
    cfg_node *models;
} class_cfg;

static const cfg_key class_keys[] = {
    {.name = "name", .type = CFG_STR, .off = offsetof(class_cfg, name)},
    {.name = "slo", .type = CFG_TIME, .off = offsetof(class_cfg, slo_ps), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "response-time SLO"},
    {.name = "share", .type = CFG_FLOAT, .off = offsetof(class_cfg, share), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1e9,
     .help = "relative share of requests (their sum must stay finite)"},
    {.name = "input", .type = CFG_SIZE, .off = offsetof(class_cfg, input_bytes), .def = "150KB",
     .flags = CFG_MIN, .min = 0, .help = "input bytes sent when the request is redistributed"},
    {.name = "output", .type = CFG_SIZE, .off = offsetof(class_cfg, output_bytes), .def = "4KB",
     .flags = CFG_MIN, .min = 0,
     .help = "response bytes sent back to the origin when the request was redistributed"},
    {.name = "models", .type = CFG_NODE, .off = offsetof(class_cfg, models),
     .help = "models that can serve the class"},
    {0},
};

static const cfg_key wl_keys[] = {
    {.name = "source", .type = CFG_ENUM, .off = offsetof(wl_cfg, source), .def = "poisson",
     .choices = source_names},
    {.name = "file", .type = CFG_STR, .off = offsetof(wl_cfg, file), .def = "\"\"",
     .help = "trace CSV (source: trace), relative to the scenario file"},
    {.name = "load", .type = CFG_FLOAT, .off = offsetof(wl_cfg, load), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 100,
     .help = "mean arrival rate as a multiple of the edges' serial capacity with their best models"},
    {.name = "origin_shares", .type = CFG_NODE, .off = offsetof(wl_cfg, origin), .def = "[]",
     .help = "share of arrivals at each edge (default equal)"},
    {.name = "on", .type = CFG_TIME, .off = offsetof(wl_cfg, on_ps), .def = "2s",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "onoff: mean on period"},
    {.name = "off", .type = CFG_TIME, .off = offsetof(wl_cfg, off_ps), .def = "2s",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "onoff: mean off period"},
    {.name = "trace_start", .type = CFG_TIME, .off = offsetof(wl_cfg, start_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "trace: where the first copy starts in the trace"},
    {.name = "speedup", .type = CFG_FLOAT, .off = offsetof(wl_cfg, speedup), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e6,
     .help = "trace: time compression (1: the trace's own time scale); the load is reached by "
             "superposing copies from different offsets"},
    {0},
};

static const cfg_key bandit_keys[] = {
    {.name = "a", .type = CFG_NODE, .off = offsetof(bandit_cfg, a),
     .def = "[0.5, 0.8, 1.1]", .help = "arm values of the TIR gain scale"},
    {.name = "beta", .type = CFG_NODE, .off = offsetof(bandit_cfg, beta),
     .def = "[0.05, 0.1, 0.2]", .help = "arm values of the TIR saturation rate"},
    {.name = "hold", .type = CFG_INT, .off = offsetof(bandit_cfg, hold), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000,
     .help = "slots an arm is kept (one reward per hold)"},
    {.name = "c", .type = CFG_FLOAT, .off = offsetof(bandit_cfg, c), .def = "1.41421356",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 100,
     .help = "exploration constant: bonus c * s * sqrt(ln n / N_arm)"},
    {.name = "normalise", .type = CFG_BOOL, .off = offsetof(bandit_cfg, normalise), .def = "true",
     .help = "s = the rewards' standard deviation (false: s = 1, plain UCB1 on [0, 1])"},
    {.name = "discount", .type = CFG_FLOAT, .off = offsetof(bandit_cfg, discount), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "discounted UCB: weight of a reward per later pull (1: no forgetting)"},
    {.name = "window", .type = CFG_INT, .off = offsetof(bandit_cfg, window),
     .flags = CFG_OPTIONAL | CFG_MIN | CFG_MAX, .min = 1, .max = 100000,
     .help = "sliding-window UCB: only the last `window` rewards count"},
    {.name = "static_a", .type = CFG_FLOAT, .off = offsetof(bandit_cfg, static_a), .def = "1",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "birp_static, batch_only: TIR gain scale"},
    {.name = "static_beta", .type = CFG_FLOAT, .off = offsetof(bandit_cfg, static_beta),
     .def = "0.1", .flags = CFG_MIN_EXCL, .min = 0,
     .help = "birp_static, batch_only: TIR saturation rate"},
    {0},
};

static const cfg_key clipper_keys[] = {
    {.name = "step", .type = CFG_INT, .off = offsetof(clipper_cfg, step), .def = "2",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 256,
     .help = "additive increase of the batch cap after a batch within the objective"},
    {.name = "backoff", .type = CFG_FLOAT, .off = offsetof(clipper_cfg, backoff), .def = "0.9",
     .flags = CFG_MIN_EXCL | CFG_MAX_EXCL, .min = 0, .max = 1,
     .help = "multiplicative decrease of the cap after a batch over the objective"},
    {.name = "timeout", .type = CFG_TIME, .off = offsetof(clipper_cfg, timeout_ps), .def = "2ms",
     .flags = CFG_MIN_EXCL, .min = 0,
     .help = "longest a request waits for its batch to fill"},
    {0},
};

/* Triton's dynamic batcher (model configuration `dynamic_batching`): a
 * batch of the largest preferred size that the queue can form goes at once;
 * otherwise (or with no preferred sizes) the batcher waits until the queue
 * holds max_batch_size requests or its head has waited max_queue_delay,
 * then sends what it has (up to max_batch_size). */
static const cfg_key triton_keys[] = {
    {.name = "max_queue_delay", .type = CFG_TIME, .off = offsetof(triton_cfg, delay_ps),
     .def = "5ms", .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 3600e12,
     .help = "longest the head of a queue waits for a larger batch (Triton's "
             "max_queue_delay_microseconds)"},
    {.name = "max_batch", .type = CFG_INT, .off = offsetof(triton_cfg, max_batch), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 4096,
     .help = "max_batch_size (0: per edge and model, the largest batch within half the "
             "tightest SLO of the classes it serves)"},
    {.name = "preferred", .type = CFG_NODE, .off = offsetof(triton_cfg, preferred), .def = "[]",
     .help = "preferred_batch_size: batch sizes sent as soon as the queue can form them"},
    {0},
};

static const cfg_key weight_keys[] = {
    {.name = "transfer", .type = CFG_FLOAT, .off = offsetof(weight_cfg, tau), .def = "1",
     .flags = CFG_MIN, .min = 0},
    {.name = "batch_latency", .type = CFG_FLOAT, .off = offsetof(weight_cfg, batch), .def = "0.1",
     .flags = CFG_MIN, .min = 0},
    {.name = "queue", .type = CFG_FLOAT, .off = offsetof(weight_cfg, queue), .def = "1",
     .flags = CFG_MIN, .min = 0},
    {.name = "balance", .type = CFG_FLOAT, .off = offsetof(weight_cfg, util), .def = "0.05",
     .flags = CFG_MIN, .min = 0},
    {0},
};

/* ---- helpers -------------------------------------------------------------- */

static int read_floats(cfg_node *n, const char *path, double lo, double *vals, int max, err *e)
{
    char sub[256];
    if (cfg_kind(n) != CFG_SEQ)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a list of numbers");
    if ((int)cfg_len(n) > max)
        return cfg_err(e, AISIM_ERANGE, n, path, "at most %d values", max);
    cfg_key k = {.name = "", .type = CFG_FLOAT, .flags = CFG_MIN_EXCL, .min = lo};
    for (size_t i = 0; i < cfg_len(n); i++) {
        int r = cfg_value(cfg_at(n, i), cfg_path_index(sub, sizeof sub, path, i), &k, &vals[i], e);
        if (r)
            return r;
    }
    return (int)cfg_len(n);
}

static int find_edge(const birp_model *m, const char *name)
{
    for (int j = 0; j < m->E; j++)
        if (!strcmp(m->e[j].name, name))
            return j;
    return -1;
}

/* ---- configure ------------------------------------------------------------ */

static void resolve(char *buf, size_t len, const char *base, const char *file)
{
    if (file[0] == '/' || !base || !*base)
        snprintf(buf, len, "%s", file);
    else
        snprintf(buf, len, "%s/%s", base, file);
}

static int conf_edges(birp_model *m, const char *path, err *e)
{
    char p[256], sub[256];
    cfg_node *n = m->cfg.edges;
    cfg_path(p, sizeof p, path, "edges");
    if (cfg_kind(n) != CFG_SEQ || cfg_len(n) < 1 || cfg_len(n) > BIRP_MAX_EDGES)
        return cfg_err(e, AISIM_EINVAL, n, p, "expected a list of 1 to %d edges", BIRP_MAX_EDGES);
    m->E = (int)cfg_len(n);
    for (int j = 0; j < m->E; j++) {
        edge_cfg ec = {0};
        cfg_node *en = cfg_at(n, (size_t)j);
        char ep[256];
        cfg_path_index(ep, sizeof ep, p, (size_t)j);
        int r = cfg_bind(en, ep, edge_keys, &ec, e);
        if (r)
            return r;
        edge *ed = &m->e[j];
        if (strlen(ec.name) >= sizeof ed->name)
            return cfg_err(e, AISIM_EINVAL, cfg_get(en, "name"), cfg_path(sub, sizeof sub, ep, "name"),
                           "expected a name of at most %zu characters, found %zu", sizeof ed->name - 1,
                           strlen(ec.name));
        snprintf(ed->name, sizeof ed->name, "%s", ec.name);
        if (find_edge(m, ec.name) != j)
            return cfg_err(e, AISIM_EINVAL, cfg_get(en, "name"), cfg_path(sub, sizeof sub, ep, "name"),
                           "expected a unique edge name, found \"%s\" again", ec.name);
        cfg_path(sub, sizeof sub, ep, "models");
        if (cfg_kind(ec.models) != CFG_SEQ || cfg_len(ec.models) < 1 ||
            cfg_len(ec.models) > MAX_MODELS)
            return cfg_err(e, AISIM_EINVAL, ec.models, sub, "expected a list of 1 to %d model names",
                           MAX_MODELS);
        double mem = 0;
        ed->nmodels = (int)cfg_len(ec.models);
        for (int k = 0; k < ed->nmodels; k++) {
            cfg_node *mn = cfg_at(ec.models, (size_t)k);
            const char *name = cfg_scalar(mn);
            char mp[256];
            cfg_path_index(mp, sizeof mp, sub, (size_t)k);
            if (!name)
                return cfg_err(e, AISIM_EINVAL, mn, mp, "expected a model name");
            for (int x = 0; x < k; x++)
                if (!strcmp(ed->curve[x]->model, name))
                    return cfg_err(e, AISIM_EINVAL, mn, mp, "expected each model once per edge, "
                                   "found \"%s\" again", name);
            ed->curve[k] = birp_profiles_find(&m->prof, ec.device, name);
            if (!ed->curve[k])
                return cfg_err(e, AISIM_ENOENT, mn, mp, "no profile for device \"%s\", model "
                               "\"%s\", engine \"%s\" in %s", ec.device, name, m->cfg.engine,
                               m->cfg.profiles);
            mem += ed->curve[k]->size_bytes;
        }
        if (mem > (double)ec.memory_bytes)
            return cfg_err(e, AISIM_ERANGE, cfg_get(en, "memory"), cfg_path(sub, sizeof sub, ep, "memory"),
                           "the deployed model engines need %.1f MB, more than the edge's %.1f MB",
                           mem / 1e6, (double)ec.memory_bytes / 1e6);
    }
    return 0;
}

static int conf_links(birp_model *m, const char *path, err *e)
{
    char p[256], sub[256];
    cfg_path(p, sizeof p, path, "links");
    link_cfg lc = {0};
    int r = cfg_bind(m->cfg.links, p, link_keys, &lc, e);
    if (r)
        return r;
    for (int i = 0; i < m->E; i++)
        for (int j = 0; j < m->E; j++) {
            m->bw_bps[i][j] = lc.bw_bps;
            m->rtt_ps[i][j] = lc.rtt_ps;
        }
    char lp[256];      /* not p itself: cfg_path's source and destination must differ */
    cfg_path(lp, sizeof lp, p, "pairs");
    if (cfg_kind(lc.pairs) != CFG_SEQ)
        return cfg_err(e, AISIM_EINVAL, lc.pairs, lp, "expected a list of {between: [a, b], ...}");
    for (size_t k = 0; k < cfg_len(lc.pairs); k++) {
        link_cfg pc = {.bw_bps = -1, .rtt_ps = -1};
        char pp[256];
        cfg_path_index(pp, sizeof pp, lp, k);
        if ((r = cfg_bind(cfg_at(lc.pairs, k), pp, pair_keys, &pc, e)))
            return r;
        cfg_path(sub, sizeof sub, pp, "between");
        if (cfg_kind(pc.between) != CFG_SEQ || cfg_len(pc.between) != 2)
            return cfg_err(e, AISIM_EINVAL, pc.between, sub, "expected two edge names");
        int ij[2];
        for (int x = 0; x < 2; x++) {
            const char *nm = cfg_scalar(cfg_at(pc.between, (size_t)x));
            ij[x] = nm ? find_edge(m, nm) : -1;
            char bp[256];
            cfg_path_index(bp, sizeof bp, sub, (size_t)x);
            if (ij[x] < 0)
                return cfg_err(e, AISIM_ENOENT, cfg_at(pc.between, (size_t)x), bp,
                               "expected the name of an edge, found \"%.40s\"", nm ? nm : "a non-scalar");
        }
        if (ij[0] == ij[1])
            return cfg_err(e, AISIM_EINVAL, pc.between, sub, "expected two different edges, "
                           "found \"%s\" twice", m->e[ij[0]].name);
        if (pc.bw_bps > 0)
            m->bw_bps[ij[0]][ij[1]] = m->bw_bps[ij[1]][ij[0]] = pc.bw_bps;
        if (pc.rtt_ps >= 0)
            m->rtt_ps[ij[0]][ij[1]] = m->rtt_ps[ij[1]][ij[0]] = pc.rtt_ps;
    }
    return 0;
}

static int conf_classes(birp_model *m, const char *path, err *e)
{
    char p[256], sub[256];
    cfg_node *n = m->cfg.classes;
    cfg_path(p, sizeof p, path, "classes");
    if (cfg_kind(n) != CFG_SEQ || cfg_len(n) < 1 || cfg_len(n) > MAX_CLASSES)
        return cfg_err(e, AISIM_EINVAL, n, p, "expected a list of 1 to %d request classes",
                       MAX_CLASSES);
    m->C = (int)cfg_len(n);
    double tot = 0;
    m->min_slo_s = INFINITY;
    for (int c = 0; c < m->C; c++) {
        class_cfg cc = {0};
        cfg_node *cn = cfg_at(n, (size_t)c);
        char cp[256];
        cfg_path_index(cp, sizeof cp, p, (size_t)c);
        int r = cfg_bind(cn, cp, class_keys, &cc, e);
        if (r)
            return r;
        if (strlen(cc.name) >= sizeof m->cname[c])
            return cfg_err(e, AISIM_EINVAL, cfg_get(cn, "name"), cfg_path(sub, sizeof sub, cp, "name"),
                           "expected a name of at most %zu characters, found %zu",
                           sizeof m->cname[c] - 1, strlen(cc.name));
        snprintf(m->cname[c], sizeof m->cname[c], "%s", cc.name);
        for (int x = 0; x < c; x++)
            if (!strcmp(m->cname[x], m->cname[c]))
                return cfg_err(e, AISIM_EINVAL, cfg_get(cn, "name"), cfg_path(sub, sizeof sub, cp, "name"),
                               "expected a unique class name, found \"%s\" again", cc.name);
        m->slo_s[c] = ps_to_s(cc.slo_ps);
        m->min_slo_s = fmin(m->min_slo_s, m->slo_s[c]);
        m->max_slo_ps = cc.slo_ps > m->max_slo_ps ? cc.slo_ps : m->max_slo_ps;
        m->input_bytes[c] = (double)cc.input_bytes;
        m->output_bytes[c] = (double)cc.output_bytes;
        tot += cc.share;
        m->class_cum[c] = tot;
        m->share[c] = cc.share;
        cfg_path(sub, sizeof sub, cp, "models");
        if (cfg_kind(cc.models) != CFG_SEQ || cfg_len(cc.models) < 1)
            return cfg_err(e, AISIM_EINVAL, cc.models, sub, "expected a list of model names");
        /* every name must be a model some edge deploys: a misspelt one
         * used to be skipped silently */
        for (size_t x = 0; x < cfg_len(cc.models); x++) {
            cfg_node *mn = cfg_at(cc.models, x);
            const char *nm = cfg_scalar(mn);
            bool known = false;
            for (int j = 0; j < m->E && nm && !known; j++)
                for (int k = 0; k < m->e[j].nmodels && !known; k++)
                    known = !strcmp(nm, m->e[j].curve[k]->model);
            if (!known) {
                char mp[256], q[64];
                cfg_path_index(mp, sizeof mp, sub, x);
                return cfg_err(e, AISIM_EINVAL, mn, mp, "expected a model deployed on an edge "
                               "(birp.edges[].models), found %s",
                               cfg_quote(nm ? nm : "", q, sizeof q));
            }
        }
        for (int j = 0; j < m->E; j++) {
            edge *ed = &m->e[j];
            int opts[MAX_MODELS], no = 0;
            for (int k = 0; k < ed->nmodels; k++)
                for (size_t x = 0; x < cfg_len(cc.models); x++) {
                    const char *nm = cfg_scalar(cfg_at(cc.models, x));
                    if (nm && !strcmp(nm, ed->curve[k]->model))
                        opts[no++] = k;
                }
            if (no == 0)
                return cfg_err(e, AISIM_EINVAL, cc.models, sub, "edge \"%s\" has no model that can "
                               "serve class \"%s\" (deploy one of these models there, or allow "
                               "one of the edge's)", ed->name, cc.name);
            /* most accurate first; ties: faster first */
            for (int a = 1; a < no; a++)
                for (int b = a; b > 0; b--) {
                    const birp_curve *x = ed->curve[opts[b]], *y = ed->curve[opts[b - 1]];
                    if (x->acc > y->acc || (x->acc == y->acc && x->lat_s[0] < y->lat_s[0])) {
                        int t = opts[b];
                        opts[b] = opts[b - 1];
                        opts[b - 1] = t;
                    } else {
                        break;
                    }
                }
            /* feasible: two serial runs fit the SLO; model_selection keeps the Pareto front */
            ed->best[c] = -1;
            ed->ms_nopt[c] = 0;
            double fastest = INFINITY;
            for (int a = 0; a < no; a++) {
                const birp_curve *x = ed->curve[opts[a]];
                if (2 * x->lat_s[0] > m->slo_s[c])
                    continue;
                if (ed->best[c] < 0)
                    ed->best[c] = opts[a];
                if (x->lat_s[0] < fastest) {
                    fastest = x->lat_s[0];
                    ed->ms_opt[c][ed->ms_nopt[c]++] = opts[a];
                }
            }
            if (ed->best[c] < 0) {
                double l1 = INFINITY;
                for (int a = 0; a < no; a++)
                    l1 = fmin(l1, ed->curve[opts[a]]->lat_s[0]);
                return cfg_err(e, AISIM_ERANGE, cfg_get(cn, "slo"), cfg_path(sub, sizeof sub, cp, "slo"),
                               "no model on edge \"%s\" meets class \"%s\"'s SLO: the fastest "
                               "takes %.1f ms per request (twice that must fit)", ed->name,
                               cc.name, l1 * 1e3);
            }
            ed->use[c] = ed->best[c];
        }
    }
    for (int c = 0; c < m->C; c++)
        m->share[c] /= tot;
    return 0;
}

static int conf_workload(birp_model *m, const char *path, const model_env *env, err *e)
{
    char p[256], sub[256];
    cfg_path(p, sizeof p, path, "workload");
    int r = cfg_bind(m->cfg.workload, p, wl_keys, &m->wl, e);
    if (r)
        return r;
    double sh[BIRP_MAX_EDGES];
    cfg_path(sub, sizeof sub, p, "origin_shares");
    int n = read_floats(m->wl.origin, sub, -1e-300, sh, BIRP_MAX_EDGES, e);
    if (n < 0)
        return n;
    if (n != 0 && n != m->E)
        return cfg_err(e, AISIM_EINVAL, m->wl.origin, sub, "expected %d shares (one per edge), "
                       "found %d", m->E, n);
    double tot = 0;
    for (int j = 0; j < m->E; j++) {
        tot += n ? sh[j] : 1;
        m->origin_cum[j] = tot;
    }
    if (!(tot > 0))
        return cfg_err(e, AISIM_ERANGE, m->wl.origin, sub, "expected shares summing to more than 0");
    if (m->wl.source == SRC_TRACE) {
        cfg_path(sub, sizeof sub, p, "file");
        if (!m->wl.file[0])
            return cfg_err(e, AISIM_EINVAL, m->cfg.workload, p, "source: trace needs a file");
        char full[1024];
        resolve(full, sizeof full, env->base_dir, m->wl.file);
        if ((r = birp_trace_load(full, &m->trace, e))) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            return cfg_err(e, r, cfg_get(m->cfg.workload, "file"), sub, "%s", msg);
        }
    }
    return 0;
}

static int birp_trace_arrivals(birp_model *m, cfg_node *at, const char *path, uint64_t seed,
                               err *e);

/* Triton's keys; max_batch_size per (edge, model): the key's value, or the
 * largest batch whose profiled latency is within half the tightest SLO of
 * the classes the model may serve there (what a latency-bounded search of
 * the model configuration, as Triton's Model Analyzer runs, would pick). */
static int conf_triton(birp_model *m, const char *path, err *e)
{
    char sub[256], s2[256];
    cfg_path(sub, sizeof sub, path, "triton");
    int r = cfg_bind(m->cfg.triton, sub, triton_keys, &m->tr, e);
    if (r)
        return r;
    double pv[BIRP_MAX_GRID];
    cfg_path(s2, sizeof s2, sub, "preferred");
    int n = read_floats(m->tr.preferred, s2, 0, pv, BIRP_MAX_GRID, e);
    if (n < 0)
        return n;
    for (int k = 0; k < n; k++)
        if (pv[k] != floor(pv[k]) || (k && pv[k] <= pv[k - 1]) || pv[k] > 4096)
            return cfg_err(e, AISIM_EINVAL, m->tr.preferred, s2, "expected increasing integer "
                           "batch sizes up to 4096, found %g at [%d]", pv[k], k);
    m->tr.npref = n;
    for (int k = 0; k < n; k++)
        m->tr.pref[k] = (int)pv[k];
    for (int j = 0; j < m->E; j++) {
        edge *ed = &m->e[j];
        for (int k = 0; k < ed->nmodels; k++) {
            double slo = INFINITY;
            for (int c = 0; c < m->C; c++)
                for (int x = 0; x < ed->ms_nopt[c]; x++)
                    if (ed->ms_opt[c][x] == k || ed->best[c] == k)
                        slo = fmin(slo, m->slo_s[c]);
            int bmax = m->grid[m->K - 1];
            ed->tmax[k] = m->tr.max_batch > 0 ? (int)m->tr.max_batch
                          : isfinite(slo) ? birp_curve_max_batch(ed->curve[k], slo / 2, bmax) : 1;
        }
    }
    return 0;
}

int birp_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
{
    birp_model *m = st;
    char sub[256];
    int r = cfg_bind(sec, path, top_keys, &m->cfg, e);
    if (r)
        return r;
    if (env->stop_ps == SIM_TIME_MAX)
        return cfg_err(e, AISIM_EINVAL, sec, path, "the birp model needs a stop time (top-level "
                       "key stop, e.g. stop: 120s)");
    m->stop_ps = env->stop_ps;
    m->sim = env->sim;
    char full[1024];
    resolve(full, sizeof full, env->base_dir, m->cfg.profiles);
    if ((r = birp_profiles_load(full, m->cfg.engine, &m->prof, e))) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return cfg_err(e, r, cfg_get(sec, "profiles"), cfg_path(sub, sizeof sub, path, "profiles"),
                       "%s", msg);
    }
    if ((r = conf_edges(m, path, e)) || (r = conf_links(m, path, e)) ||
        (r = conf_classes(m, path, e)) || (r = conf_workload(m, path, env, e)))
        return r;
    /* batch grid */
    double g[BIRP_MAX_GRID];
    cfg_path(sub, sizeof sub, path, "batch_grid");
    int n = read_floats(m->cfg.grid, sub, 0, g, BIRP_MAX_GRID, e);
    if (n < 0)
        return n;
    if (n < 1 || g[0] != 1)
        return cfg_err(e, AISIM_EINVAL, m->cfg.grid, sub, "expected a list starting with 1");
    for (int k = 0; k < n; k++) {
        if (g[k] != floor(g[k]) || (k && g[k] <= g[k - 1]) || g[k] > 4096)
            return cfg_err(e, AISIM_EINVAL, m->cfg.grid, sub, "expected increasing integer batch "
                           "sizes up to 4096");
        m->grid[k] = (int)g[k];
    }
    m->K = n;
    /* bandit and weights */
    cfg_path(sub, sizeof sub, path, "bandit");
    m->bc.window = 0;
    if ((r = cfg_bind(m->cfg.bandit, sub, bandit_keys, &m->bc, e)))
        return r;
    double a[16], b[16];
    char s2[256];
    if ((m->na = read_floats(m->bc.a, cfg_path(s2, sizeof s2, sub, "a"), 0, a, 16, e)) < 0)
        return m->na;
    if ((m->nb = read_floats(m->bc.beta, cfg_path(s2, sizeof s2, sub, "beta"), 0, b, 16, e)) < 0)
        return m->nb;
    if (m->na < 1 || m->nb < 1)
        return cfg_err(e, AISIM_EINVAL, m->cfg.bandit, sub, "expected at least one value of a and "
                       "of beta");
    m->arm_a = xmalloc((size_t)m->na * sizeof *m->arm_a);
    m->arm_beta = xmalloc((size_t)m->nb * sizeof *m->arm_beta);
    memcpy(m->arm_a, a, (size_t)m->na * sizeof *a);
    memcpy(m->arm_beta, b, (size_t)m->nb * sizeof *b);
    if (m->bc.window > 0 && m->bc.discount < 1)
        return cfg_err(e, AISIM_EINVAL, cfg_get(m->cfg.bandit, "window"),
                       cfg_path(s2, sizeof s2, sub, "window"), "expected either a window or a "
                       "discount below 1, found both");
    birp_bandit_par bp = {.c = m->bc.c, .discount = m->bc.discount, .window = (int)m->bc.window,
                          .normalise = m->bc.normalise};
    birp_bandit_init(&m->bandit, m->na * m->nb, &bp);
    if ((r = cfg_bind(m->cfg.clipper, cfg_path(sub, sizeof sub, path, "clipper"), clipper_keys,
                      &m->cl, e)))
        return r;
    if ((r = cfg_bind(m->cfg.weights, cfg_path(sub, sizeof sub, path, "weights"), weight_keys,
                      &m->w, e)))
        return r;
    if ((r = conf_triton(m, path, e)))
        return r;
    int pol = m->cfg.policy;
    m->batcher = pol == P_CLIPPER ? B_AIMD : pol == P_TRITON ? B_TRITON
                 : pol == P_BIRP || pol == P_BIRP_STATIC || pol == P_BATCH_ONLY ? m->cfg.batcher
                 : B_QP;                    /* serial policies: caps of 1 */
    /* arrival rate from the serial capacity with each class's best model */
    m->cap_ref = 0;
    for (int j = 0; j < m->E; j++) {
        m->cap_ref += 1 / mix_lat(m, j, 1);
        rng_init(&m->e[j].r_exec, env->seed, "birp.exec", (uint64_t)j);
    }
    m->rate = m->wl.load * m->cap_ref;
    rng_init(&m->r_wl, env->seed, "birp.workload", 0);
    if (m->wl.source == SRC_TRACE)
        return birp_trace_arrivals(m, m->cfg.workload, cfg_path(sub, sizeof sub, path, "workload"),
                                   env->seed, e);
    return 0;
}

/* Sorts v[0..n) ascending: a bottom-up merge sort (stable, O(n log n),
 * n extra words) that polls the engine every 2^16 elements moved, so a
 * signal ends the sort of tens of millions of arrivals at once (qsort
 * cannot be interrupted).  Returns false if it was cut short. */
static bool sort_i64(sim *s, int64_t *v, size_t n)
{
    int64_t *tmp = xmalloc((n ? n : 1) * sizeof *tmp), *a = v, *b = tmp;
    size_t moved = 0;
    bool ok = true;
    for (size_t w = 1; w < n && ok; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                b[k++] = a[j] < a[i] ? a[j++] : a[i++];
            while (i < mid)
                b[k++] = a[i++];
            while (j < hi)
                b[k++] = a[j++];
            moved += hi - lo;
            if (moved >= 0x10000) {
                if (sim_poll(s, moved)) {
                    ok = false;
                    break;
                }
                moved = 0;
            }
        }
        int64_t *t = a;
        a = b;
        b = t;
    }
    if (ok && a != v)
        memcpy(v, a, n * sizeof *v);
    free(tmp);
    return ok;
}

/* Appends the arrivals of one copy of the trace that starts `off` trace ps
 * into it and plays `speedup` times faster, up to the stop time. */
static void trace_copy(birp_model *m, double off, size_t *cap)
{
    const birp_trace *t = &m->trace;
    double span = (double)t->t_ps[t->n - 1], gap = span / (double)(t->n - 1);
    size_t lo = 0, hi = t->n;                               /* first record at or after off */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((double)t->t_ps[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    double base = -off;                                     /* trace ps -> the copy's ps */
    for (size_t i = lo;; i++) {
        if (i == t->n) {
            i = 0;
            base += span + gap;
            m->tr_wraps++;
        }
        double ts = (base + (double)t->t_ps[i]) / m->wl.speedup;
        if (!(ts < (double)m->stop_ps))
            break;
        if ((m->narr & 0xffff) == 0 && sim_poll(m->sim, 0x10000))
            return;
        if (m->narr == *cap) {
            *cap *= 2;
            m->arr_ps = xrealloc(m->arr_ps, *cap * sizeof *m->arr_ps);
        }
        m->arr_ps[m->narr++] = (int64_t)llround(ts);
    }
}

/* The trace at its own time scale (or `speedup` times faster), superposed:
 * copies of the trace, each from its own offset (the first at trace_start,
 * the others uniform, chosen so that a copy does not run past the trace's
 * end when the trace is long enough), are added until they hold at least
 * rate * stop arrivals, and then thinned to that number in expectation.  A
 * copy that runs past the end restarts at the trace's beginning one mean
 * gap later (counted in results.trace.wraps). */
static int birp_trace_arrivals(birp_model *m, cfg_node *at, const char *path, uint64_t seed,
                               err *e)
{
    const birp_trace *t = &m->trace;
    double span = (double)t->t_ps[t->n - 1];                /* > 0: birp_trace_load */
    double r1 = m->wl.speedup * 1e12 * (double)(t->n - 1) / span;  /* req/s per copy */
    double want = m->rate * ps_to_s(m->stop_ps);
    char sub[256];
    if (!(want <= 5e7) || !(m->rate / r1 <= 1e5))
        return cfg_err(e, AISIM_ERANGE, cfg_get(at, "load"), cfg_path(sub, sizeof sub, path, "load"),
                       "expected at most 5e7 trace arrivals in a run and 1e5 copies of the trace, "
                       "found %.3g arrivals from %.3g copies (lower the load or the stop time, or "
                       "raise speedup)", want, ceil(m->rate / r1));
    double window = (double)m->stop_ps * m->wl.speedup;     /* trace ps a copy plays */
    rng r;
    rng_init(&r, seed, "birp.trace", 0);
    size_t cap = (size_t)(want * 1.2) + 1024;
    m->arr_ps = xmalloc(cap * sizeof *m->arr_ps);
    m->narr = 0;
    m->tr_copies = 0;
    while ((double)m->narr < want || m->tr_copies == 0) {
        double off = (double)m->wl.start_ps;
        if (m->tr_copies > 0)
            off = rng_u01(&r) * (window < span ? span - window : span);
        trace_copy(m, fmod(off, span), &cap);
        m->tr_copies++;
        if (sim_poll(m->sim, 1))
            return MODEL_CUT(e);
    }
    double p = want / (double)m->narr;
    size_t n = 0;
    for (size_t i = 0; i < m->narr; i++) {                  /* thin, in copy order */
        if (rng_u01(&r) < p)
            m->arr_ps[n++] = m->arr_ps[i];
        if ((i & 0xffff) == 0xffff && sim_poll(m->sim, 0x10000))
            return MODEL_CUT(e);
    }
    m->narr = n;
    if (!sort_i64(m->sim, m->arr_ps, m->narr))
        return MODEL_CUT(e);
    return 0;
}
