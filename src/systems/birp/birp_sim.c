/*
 * birp_sim.c - the edge-collaboration system on the engine, driven by BIRP
 * (birp.h) or one of its baselines.
 *
 * Entities: E heterogeneous edges, each an accelerator (a Jetson board from
 * the profile file) with memory and a set of deployed DNN models; directed
 * inter-edge links (bandwidth, RTT) that carry redistributed requests' inputs
 * FIFO; request classes with their own SLO, input size and acceptable models.
 * Requests arrive at an origin edge from a real trace (rescaled to the
 * scenario's load) or a synthetic stream (Poisson, on/off), are routed
 * (possibly over a link) to an executing edge, wait in an earliest-deadline
 * -first queue per (edge, model), and run in batches: an accelerator runs up
 * to `parallel` batches at once, each taking l(n) * (1 + gamma k) * LN(sigma),
 * with l the profile's latency for n requests, k the batches already running
 * and LN a mean-one lognormal (run-to-run variation).  A request whose
 * deadline cannot be met even by a batch of one is dropped when it reaches the
 * head of its queue.
 *
 * Every `slot` the policy decides: routing fractions per origin (applied to
 * the next slot's arrivals by smooth weighted round robin), the batch-size cap
 * per edge, and the model per (edge, class).  Policies: birp (QP + UCB1-tuned
 * TIR + batching; faster models only when batching cannot carry the load),
 * birp_static (fixed TIR parameters), serial (the same QP
 * redistribution, batch 1), model_selection (Clipper/Jellyfish-style model
 * downgrade + proportional redistribution, serial), local (serial, no
 * redistribution), jsq (join the edge with the shortest expected wait,
 * serial).
 *
 * Inference loss (papers.md 4(e)): mean over requests of 1 - top-1 accuracy
 * of the model that served it, or 1 if it missed its SLO or was dropped.
 * Requests arriving before `warmup` are not measured; requests still pending
 * at the stop time count if their deadline has passed (they failed) and are
 * left out otherwise.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aisim/rng.h"      /* before model.h: its inline code names a local "out" */
#include "aisim/model.h"
#include "aisim/stats.h"
#include "aisim/units.h"
#include "systems/birp/birp.h"
#include "systems/birp/birp_data.h"

#define MAX_CLASSES 8
#define MAX_MODELS 8        /* deployed per edge */

enum policy { P_BIRP, P_BIRP_STATIC, P_SERIAL, P_MS, P_LOCAL, P_JSQ };
static const char *const policy_names[] = {"birp", "birp_static", "serial", "model_selection",
                                           "local", "jsq", NULL};
enum source { SRC_TRACE, SRC_POISSON, SRC_ONOFF };
static const char *const source_names[] = {"trace", "poisson", "onoff", NULL};

/* ---- configuration -------------------------------------------------------- */

typedef struct top_cfg {
    int policy;
    const char *profiles, *engine;
    int64_t slot_ps, warmup_ps;
    double sigma, gamma;
    int64_t parallel;
    int64_t drift_ps;
    double drift_gain;
    cfg_node *edges, *links, *classes, *workload, *bandit, *grid, *weights;
    double target_util;
    bool downgrade;
} top_cfg;

static const cfg_key top_keys[] = {
    {.name = "policy", .type = CFG_ENUM, .off = offsetof(top_cfg, policy), .def = "birp",
     .choices = policy_names, .help = "scheduler: birp, birp_static, serial, model_selection, local, jsq"},
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
     .help = "batches an accelerator runs at once under batching policies"},
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
     .help = "UCB1 over TIR parameters {a, beta, hold, c, static_a, static_beta}"},
    {.name = "batch_grid", .type = CFG_NODE, .off = offsetof(top_cfg, grid),
     .def = "[1, 2, 4, 8, 16, 32, 64]", .help = "breakpoints of the piecewise-linear batch model"},
    {.name = "weights", .type = CFG_NODE, .off = offsetof(top_cfg, weights), .def = "{}",
     .help = "QP objective weights {transfer, batch_latency, queue, balance}"},
    {.name = "downgrade", .type = CFG_BOOL, .off = offsetof(top_cfg, downgrade), .def = "true",
     .help = "birp: switch an overflowing edge to faster models when batching is not enough"},
    {.name = "target_util", .type = CFG_FLOAT, .off = offsetof(top_cfg, target_util), .def = "0.9",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "model_selection: utilisation above which models are downgraded"},
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
    int64_t slo_ps, input_bytes;
    double share;
    cfg_node *models;
} class_cfg;

static const cfg_key class_keys[] = {
    {.name = "name", .type = CFG_STR, .off = offsetof(class_cfg, name)},
    {.name = "slo", .type = CFG_TIME, .off = offsetof(class_cfg, slo_ps), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "response-time SLO"},
    {.name = "share", .type = CFG_FLOAT, .off = offsetof(class_cfg, share), .def = "1",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "relative share of requests"},
    {.name = "input", .type = CFG_SIZE, .off = offsetof(class_cfg, input_bytes), .def = "150KB",
     .flags = CFG_MIN, .min = 0, .help = "input bytes sent when the request is redistributed"},
    {.name = "models", .type = CFG_NODE, .off = offsetof(class_cfg, models),
     .help = "models that can serve the class"},
    {0},
};

typedef struct wl_cfg {
    int source;
    const char *file;
    double load;
    cfg_node *origin;
    int64_t on_ps, off_ps, start_ps;
} wl_cfg;

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
     .flags = CFG_MIN, .min = 0, .help = "trace: skip this much of the (unscaled) trace"},
    {0},
};

typedef struct bandit_cfg {
    cfg_node *a, *beta;
    int64_t hold;
    double c, static_a, static_beta;
} bandit_cfg;

static const cfg_key bandit_keys[] = {
    {.name = "a", .type = CFG_NODE, .off = offsetof(bandit_cfg, a),
     .def = "[0.5, 0.8, 1.1]", .help = "arm values of the TIR gain scale"},
    {.name = "beta", .type = CFG_NODE, .off = offsetof(bandit_cfg, beta),
     .def = "[0.05, 0.1, 0.2]", .help = "arm values of the TIR saturation rate"},
    {.name = "hold", .type = CFG_INT, .off = offsetof(bandit_cfg, hold), .def = "3",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000, .help = "slots an arm is kept"},
    {.name = "c", .type = CFG_FLOAT, .off = offsetof(bandit_cfg, c), .def = "1.41421356",
     .flags = CFG_MIN, .min = 0, .help = "UCB1 exploration constant"},
    {.name = "static_a", .type = CFG_FLOAT, .off = offsetof(bandit_cfg, static_a), .def = "1",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "birp_static: TIR gain scale"},
    {.name = "static_beta", .type = CFG_FLOAT, .off = offsetof(bandit_cfg, static_beta),
     .def = "0.1", .flags = CFG_MIN_EXCL, .min = 0, .help = "birp_static: TIR saturation rate"},
    {0},
};

typedef struct weight_cfg {
    double tau, batch, queue, util;
} weight_cfg;

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

/* ---- state ---------------------------------------------------------------- */

enum { R_PENDING, R_OK, R_LATE, R_DROPPED };

typedef struct req {
    int64_t t_arr;          /* arrival at the origin, ps */
    int64_t deadline;       /* t_arr + SLO, ps */
    int64_t t_enq;          /* arrival at the executing edge, ps */
    int64_t t_start;        /* batch start, ps (-1: not started) */
    int64_t t_done;         /* completion or drop, ps */
    uint8_t cls, origin, dest, model;   /* model: index into the edge's deployed list */
    uint8_t state;
} req;

typedef struct rheap {      /* EDF: min-heap of request ids by (deadline, id) */
    uint32_t *v;
    size_t n, cap;
} rheap;

typedef struct batch {
    struct batch *prev, *next; /* in-flight list, freed at fini */
    int edge, model, n;
    int64_t start;
    uint32_t ids[];
} batch;

typedef struct edge {
    char name[32];
    const birp_curve *curve[MAX_MODELS];    /* deployed models */
    int nmodels;
    int best[MAX_CLASSES];                  /* most accurate SLO-feasible model per class */
    int ms_opt[MAX_CLASSES][MAX_MODELS];    /* model_selection options per class, best first */
    int ms_nopt[MAX_CLASSES];
    int use[MAX_CLASSES];                   /* model in use per class */
    rheap q[MAX_MODELS];                    /* EDF queue per model */
    int queued;
    int running;                            /* batches on the accelerator */
    int bcap;                               /* batch-size cap */
    int conc;                               /* concurrent batches allowed */
    rng r_exec;
    /* accounting */
    int64_t busy_since;
    double busy_ps;
    int64_t batches, batched_reqs, enq_slot;
    int64_t arr_slot;                       /* arrivals at this origin in the slot */
    double lam_est;                         /* EWMA arrival rate, req/s */
    double wrr[BIRP_MAX_EDGES];             /* smooth WRR credit per destination */
} edge;

typedef struct slot_row {
    double t_s;
    int arm, status, fallback;
    double a, beta, obj, loss, offload;
    int bcap[BIRP_MAX_EDGES];
    int level[BIRP_MAX_EDGES];
} slot_row;

typedef struct birp_model {
    top_cfg cfg;
    wl_cfg wl;
    bandit_cfg bc;
    weight_cfg w;
    int E, C;
    edge e[BIRP_MAX_EDGES];
    char cname[MAX_CLASSES][32];
    double slo_s[MAX_CLASSES], share[MAX_CLASSES], input_bytes[MAX_CLASSES];
    double min_slo_s;
    double origin_cum[BIRP_MAX_EDGES], class_cum[MAX_CLASSES];
    int64_t bw_bps[BIRP_MAX_EDGES][BIRP_MAX_EDGES], rtt_ps[BIRP_MAX_EDGES][BIRP_MAX_EDGES];
    int64_t link_free[BIRP_MAX_EDGES][BIRP_MAX_EDGES];
    int grid[BIRP_MAX_GRID], K;
    double *arm_a, *arm_beta;
    int na, nb;
    birp_profiles prof;
    birp_trace trace;
    double rate;                            /* mean arrivals, req/s */
    double cap_ref;                         /* serial capacity at load 1, req/s */
    int64_t stop_ps;
    /* workload */
    rng r_wl;
    size_t tr_idx;
    int64_t tr_base;                        /* offset added to scaled trace times, ps */
    double tr_scale;                        /* trace ps -> sim ps */
    int64_t on_end, on_start;
    /* decisions */
    double y[BIRP_MAX_EDGES][BIRP_MAX_EDGES];
    birp_bandit bandit;
    int arm, held;
    double win_loss;                        /* bandit window: loss sum, requests */
    int64_t win_n;
    double slot_loss;                       /* the current slot: loss sum, requests */
    int64_t slot_n;
    double prev_load[BIRP_MAX_EDGES];
    int64_t solves, fallbacks, trivial;
    double solve_wall_s, solve_wall_max_s;
    sim_timer slot_timer;
    batch *inflight;                        /* running batches */
    /* requests */
    req *r;
    size_t nr, capr;
    slot_row *rows;
    size_t nrows, caprows;
} birp_model;

/* ---- small helpers -------------------------------------------------------- */

static int64_t slot_of(const birp_model *m) { return m->cfg.slot_ps; }

static int heap_less(const birp_model *m, uint32_t a, uint32_t b)
{
    return m->r[a].deadline != m->r[b].deadline ? m->r[a].deadline < m->r[b].deadline : a < b;
}

static void heap_push(birp_model *m, rheap *h, uint32_t id)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->v = xrealloc(h->v, h->cap * sizeof *h->v);
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(m, id, h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = id;
}

static uint32_t heap_pop(birp_model *m, rheap *h)
{
    uint32_t top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && heap_less(m, h->v[c + 1], h->v[c]))
            c++;
        if (!heap_less(m, h->v[c], x))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = x;
    return top;
}

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

static double model_lat(const edge *ed, int mi, double b) { return birp_curve_latency_s(ed->curve[mi], b); }

/* Share-weighted latency of edge j at batch b with the models in use. */
static double mix_lat(const birp_model *m, int j, double b)
{
    double l = 0;
    for (int c = 0; c < m->C; c++)
        l += m->share[c] * model_lat(&m->e[j], m->e[j].use[c], b);
    return l;
}

static double mix_lat_cb(void *ctx, int j, double b) { return mix_lat(ctx, j, b); }

static double mix_acc(const birp_model *m, int j)
{
    double a = 0;
    for (int c = 0; c < m->C; c++)
        a += m->share[c] * m->e[j].curve[m->e[j].use[c]]->acc;
    return a;
}

static double draw_cum(rng *r, const double *cum, int n)
{
    double u = rng_u01(r) * cum[n - 1];
    for (int i = 0; i < n; i++)
        if (u < cum[i])
            return i;
    return n - 1;
}

static int policy_batches(int p) { return p == P_BIRP || p == P_BIRP_STATIC; }

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
        snprintf(ed->name, sizeof ed->name, "%s", ec.name);
        if (find_edge(m, ec.name) != j)
            return cfg_err(e, AISIM_EINVAL, cfg_get(en, "name"), cfg_path(sub, sizeof sub, ep, "name"),
                           "duplicate edge name \"%s\"", ec.name);
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
    cfg_path(p, sizeof p, p, "pairs");
    if (cfg_kind(lc.pairs) != CFG_SEQ)
        return cfg_err(e, AISIM_EINVAL, lc.pairs, p, "expected a list of {between: [a, b], ...}");
    for (size_t k = 0; k < cfg_len(lc.pairs); k++) {
        link_cfg pc = {.bw_bps = -1, .rtt_ps = -1};
        char pp[256];
        cfg_path_index(pp, sizeof pp, p, k);
        if ((r = cfg_bind(cfg_at(lc.pairs, k), pp, pair_keys, &pc, e)))
            return r;
        cfg_path(sub, sizeof sub, pp, "between");
        if (cfg_kind(pc.between) != CFG_SEQ || cfg_len(pc.between) != 2)
            return cfg_err(e, AISIM_EINVAL, pc.between, sub, "expected two edge names");
        int ij[2];
        for (int x = 0; x < 2; x++) {
            const char *nm = cfg_scalar(cfg_at(pc.between, (size_t)x));
            ij[x] = nm ? find_edge(m, nm) : -1;
            if (ij[x] < 0)
                return cfg_err(e, AISIM_ENOENT, cfg_at(pc.between, (size_t)x), sub,
                               "expected the name of an edge");
        }
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
        snprintf(m->cname[c], sizeof m->cname[c], "%s", cc.name);
        m->slo_s[c] = ps_to_s(cc.slo_ps);
        m->min_slo_s = fmin(m->min_slo_s, m->slo_s[c]);
        m->input_bytes[c] = (double)cc.input_bytes;
        tot += cc.share;
        m->class_cum[c] = tot;
        m->share[c] = cc.share;
        cfg_path(sub, sizeof sub, cp, "models");
        if (cfg_kind(cc.models) != CFG_SEQ || cfg_len(cc.models) < 1)
            return cfg_err(e, AISIM_EINVAL, cc.models, sub, "expected a list of model names");
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

static int birp_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
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
    birp_bandit_init(&m->bandit, m->na * m->nb, m->bc.c);
    if ((r = cfg_bind(m->cfg.weights, cfg_path(sub, sizeof sub, path, "weights"), weight_keys,
                      &m->w, e)))
        return r;
    /* arrival rate from the serial capacity with each class's best model */
    m->cap_ref = 0;
    for (int j = 0; j < m->E; j++) {
        m->cap_ref += 1 / mix_lat(m, j, 1);
        rng_init(&m->e[j].r_exec, env->seed, "birp.exec", (uint64_t)j);
    }
    m->rate = m->wl.load * m->cap_ref;
    rng_init(&m->r_wl, env->seed, "birp.workload", 0);
    return 0;
}

/* ---- execution ------------------------------------------------------------ */

static void account_busy(edge *ed, int64_t now)
{
    if (ed->running > 0)
        ed->busy_ps += (double)(now - ed->busy_since);
    ed->busy_since = now;
}

static void decided(birp_model *m, req *q)
{
    double loss = q->state == R_OK ? 1 - m->e[q->dest].curve[q->model]->acc : 1;
    m->win_loss += loss;
    m->win_n++;
    m->slot_loss += loss;
    m->slot_n++;
}

static void on_batch_done(sim *s, void *obj, uint64_t arg);

static void try_dispatch(birp_model *m, sim *s, int j)
{
    edge *ed = &m->e[j];
    int64_t now = sim_now(s);
    while (ed->running < ed->conc && ed->queued > 0) {
        int best = -1;
        for (int k = 0; k < ed->nmodels; k++) {     /* drop heads that cannot make it */
            rheap *h = &ed->q[k];
            while (h->n) {
                req *q = &m->r[h->v[0]];
                if (now + (int64_t)(model_lat(ed, k, 1) * 1e12) <= q->deadline)
                    break;
                heap_pop(m, h);
                ed->queued--;
                q->state = R_DROPPED;
                q->t_done = now;
                decided(m, q);
            }
            if (h->n && (best < 0 || heap_less(m, h->v[0], ed->q[best].v[0])))
                best = k;
        }
        if (best < 0)
            break;
        rheap *h = &ed->q[best];
        int n = (int)h->n < ed->bcap ? (int)h->n : ed->bcap;
        batch *b = xmalloc(sizeof *b + (size_t)n * sizeof(uint32_t));
        b->edge = j;
        b->model = best;
        b->n = n;
        b->start = now;
        b->prev = NULL;
        b->next = m->inflight;
        if (m->inflight)
            m->inflight->prev = b;
        m->inflight = b;
        for (int i = 0; i < n; i++) {
            b->ids[i] = heap_pop(m, h);
            m->r[b->ids[i]].t_start = now;
        }
        ed->queued -= n;
        double lat = model_lat(ed, best, n);
        if (m->cfg.drift_ps > 0 && now >= m->cfg.drift_ps && n > 1) {
            double l1 = model_lat(ed, best, 1), tir = n * l1 / lat;
            lat = n * l1 / (1 + m->cfg.drift_gain * (tir - 1));
        }
        lat *= 1 + m->cfg.gamma * ed->running;
        if (m->cfg.sigma > 0)
            lat *= rng_lognormal(&ed->r_exec, -m->cfg.sigma * m->cfg.sigma / 2, m->cfg.sigma);
        account_busy(ed, now);
        ed->running++;
        ed->batches++;
        ed->batched_reqs += n;
        sim_schedule(s, now + (int64_t)llround(lat * 1e12), on_batch_done, m, (uint64_t)(uintptr_t)b);
    }
}

static void on_batch_done(sim *s, void *obj, uint64_t arg)
{
    birp_model *m = obj;
    batch *b = (batch *)(uintptr_t)arg;
    int64_t now = sim_now(s);
    edge *ed = &m->e[b->edge];
    for (int i = 0; i < b->n; i++) {
        req *q = &m->r[b->ids[i]];
        q->t_done = now;
        q->state = now <= q->deadline ? R_OK : R_LATE;
        decided(m, q);
    }
    account_busy(ed, now);
    ed->running--;
    int j = b->edge;
    if (b->prev)
        b->prev->next = b->next;
    else
        m->inflight = b->next;
    if (b->next)
        b->next->prev = b->prev;
    free(b);
    try_dispatch(m, s, j);
}

static void on_enqueue(sim *s, void *obj, uint64_t id)
{
    birp_model *m = obj;
    req *q = &m->r[id];
    edge *ed = &m->e[q->dest];
    q->t_enq = sim_now(s);
    q->model = (uint8_t)ed->use[q->cls];
    heap_push(m, &ed->q[q->model], (uint32_t)id);
    ed->queued++;
    ed->enq_slot++;
    try_dispatch(m, s, q->dest);
}

/* JSQ: the edge with the least expected wait (queued + running + 1 serial
 * runs) plus transfer. */
static int jsq_pick(birp_model *m, int o, int cls)
{
    int best = o;
    double bv = INFINITY;
    for (int j = 0; j < m->E; j++) {
        edge *ed = &m->e[j];
        double l1 = model_lat(ed, ed->use[cls], 1);
        double v = (ed->queued + ed->running + 1) * l1;
        if (j != o)
            v += ps_to_s(m->rtt_ps[o][j]) / 2 + m->input_bytes[cls] * 8 / (double)m->bw_bps[o][j];
        if (v < bv) {
            bv = v;
            best = j;
        }
    }
    return best;
}

/* Smooth weighted round robin (nginx): deterministic, follows y exactly over time. */
static int wrr_pick(birp_model *m, int o)
{
    edge *ed = &m->e[o];
    int best = o;
    double tot = 0;
    for (int j = 0; j < m->E; j++) {
        ed->wrr[j] += m->y[o][j];
        tot += m->y[o][j];
        if (ed->wrr[j] > ed->wrr[best] + 1e-12)
            best = j;
    }
    ed->wrr[best] -= tot;
    return best;
}

static int64_t next_gap(birp_model *m, int64_t now)
{
    switch (m->wl.source) {
    case SRC_POISSON:
        return (int64_t)llround(rng_exponential(&m->r_wl, 1e12 / m->rate));
    case SRC_ONOFF: {
        double duty = (double)m->wl.on_ps / (double)(m->wl.on_ps + m->wl.off_ps);
        double mean = 1e12 * duty / m->rate;
        int64_t t = now;
        for (;;) {
            if (t < m->on_start)
                t = m->on_start;
            int64_t g = (int64_t)llround(rng_exponential(&m->r_wl, mean));
            if (t + g <= m->on_end)
                return t + g - now;
            t = m->on_end;
            m->on_start = m->on_end + (int64_t)llround(rng_exponential(&m->r_wl, (double)m->wl.off_ps));
            m->on_end = m->on_start + (int64_t)llround(rng_exponential(&m->r_wl, (double)m->wl.on_ps));
        }
    }
    default:
        break;
    }
    return 0;
}

static void on_arrival(sim *s, void *obj, uint64_t arg);

static void schedule_next_arrival(birp_model *m, sim *s)
{
    int64_t now = sim_now(s), t;
    if (m->wl.source == SRC_TRACE) {
        if (m->tr_idx + 1 >= m->trace.n) {      /* wrap: one mean gap after the last */
            double gap = (double)m->trace.t_ps[m->trace.n - 1] / (double)(m->trace.n - 1);
            m->tr_base += (int64_t)llround(((double)m->trace.t_ps[m->trace.n - 1] + gap) * m->tr_scale);
            m->tr_idx = 0;
        } else {
            m->tr_idx++;
        }
        t = m->tr_base + (int64_t)llround((double)m->trace.t_ps[m->tr_idx] * m->tr_scale);
        if (t < now)
            t = now;
    } else {
        t = now + next_gap(m, now);
    }
    if (t < m->stop_ps)
        sim_schedule(s, t, on_arrival, m, 0);
}

static void on_arrival(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    birp_model *m = obj;
    int64_t now = sim_now(s);
    if (m->nr == m->capr) {
        m->capr = m->capr ? 2 * m->capr : 4096;
        m->r = xrealloc(m->r, m->capr * sizeof *m->r);
    }
    uint32_t id = (uint32_t)m->nr++;
    req *q = &m->r[id];
    memset(q, 0, sizeof *q);
    q->cls = (uint8_t)draw_cum(&m->r_wl, m->class_cum, m->C);
    q->origin = (uint8_t)draw_cum(&m->r_wl, m->origin_cum, m->E);
    q->t_arr = now;
    q->deadline = now + (int64_t)llround(m->slo_s[q->cls] * 1e12);
    q->t_start = -1;
    int o = q->origin;
    m->e[o].arr_slot++;
    int d = m->cfg.policy == P_JSQ ? jsq_pick(m, o, q->cls) : wrr_pick(m, o);
    q->dest = (uint8_t)d;
    if (d == o) {
        on_enqueue(s, m, id);
    } else {
        int64_t tx = units_tx_time_ps((int64_t)m->input_bytes[q->cls], m->bw_bps[o][d]);
        int64_t start = m->link_free[o][d] > now ? m->link_free[o][d] : now;
        m->link_free[o][d] = start + tx;
        sim_schedule(s, start + tx + m->rtt_ps[o][d] / 2, on_enqueue, m, id);
    }
    schedule_next_arrival(m, s);
}

/* ---- the slot decision ---------------------------------------------------- */

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Builds the slot problem from the current state and models in use, solves
 * it and counts the solve. */
static void qp_decide(birp_model *m, const double *lam, const double *backlog, double a,
                      double beta, birp_slot_out *so)
{
    int E = m->E;
    birp_slot_in in;
    memset(&in, 0, sizeof in);
    in.nedges = E;
    in.ngrid = m->cfg.policy == P_SERIAL ? 1 : m->K;
    memcpy(in.batch, m->grid, sizeof in.batch);
    in.slo_s = m->min_slo_s;
    in.w_tau = m->w.tau;
    in.w_batch = m->w.batch;
    in.w_queue = m->w.queue;
    in.w_util = m->w.util;
    double bytes = 0;
    for (int c = 0; c < m->C; c++)
        bytes += m->share[c] * m->input_bytes[c];
    for (int i = 0; i < E; i++) {
        in.lambda[i] = lam[i];
        in.backlog[i] = backlog[i];
        in.prev_load[i] = m->prev_load[i];
        in.acc[i] = mix_acc(m, i);
        for (int j = 0; j < E; j++)
            in.tau_s[i][j] = i == j ? 0 : ps_to_s(m->rtt_ps[i][j]) / 2 + bytes * 8 / (double)m->bw_bps[i][j];
        double tmax = m->grid[m->K - 1] * mix_lat(m, i, 1) / mix_lat(m, i, m->grid[m->K - 1]);
        for (int k = 0; k < in.ngrid; k++) {
            in.lat_s[i][k] = mix_lat(m, i, m->grid[k]);
            in.mu[i][k] = birp_tir(m->grid[k], tmax, a, beta) / in.lat_s[i][0];
        }
    }
    double t0 = wall_s();
    birp_slot_solve(&in, mix_lat_cb, m, so);
    double w = wall_s() - t0;
    if (so->status != BIRP_STATUS_TRIVIAL) {
        m->solves++;
        m->solve_wall_s += w;
        m->solve_wall_max_s = fmax(m->solve_wall_max_s, w);
    } else {
        m->trivial++;
    }
    m->fallbacks += so->fallback;
}

static void decide(birp_model *m, slot_row *row)
{
    int E = m->E;
    double dt = ps_to_s(slot_of(m));
    double lam[BIRP_MAX_EDGES], backlog[BIRP_MAX_EDGES];
    for (int j = 0; j < E; j++) {
        edge *ed = &m->e[j];
        double obs = (double)ed->arr_slot / dt;
        ed->lam_est = ed->lam_est > 0 ? 0.5 * ed->lam_est + 0.5 * obs : obs;
        lam[j] = ed->lam_est;
        backlog[j] = ed->queued / dt;
        m->prev_load[j] = (double)ed->enq_slot / dt;
        ed->arr_slot = ed->enq_slot = 0;
    }
    int p = m->cfg.policy;
    row->arm = -1;
    row->status = -1000;
    memset(m->y, 0, sizeof m->y);
    for (int j = 0; j < E; j++) {
        m->y[j][j] = 1;
        m->e[j].bcap = 1;
        m->e[j].conc = 1;
        row->level[j] = 0;
    }
    if (p == P_LOCAL || p == P_JSQ)
        return;
    if (p == P_MS) {
        birp_ms_in in = {.nedges = E, .target_util = m->cfg.target_util};
        for (int j = 0; j < E; j++) {
            edge *ed = &m->e[j];
            /* levels: option l of each class (clamped to its last) */
            int nl = 1;
            for (int c = 0; c < m->C; c++)
                nl = ed->ms_nopt[c] > nl ? ed->ms_nopt[c] : nl;
            nl = nl > BIRP_MAX_LEVELS ? BIRP_MAX_LEVELS : nl;
            in.nlevels[j] = nl;
            for (int l = 0; l < nl; l++) {
                double lat = 0, acc = 0;
                for (int c = 0; c < m->C; c++) {
                    int mi = ed->ms_opt[c][l < ed->ms_nopt[c] ? l : ed->ms_nopt[c] - 1];
                    lat += m->share[c] * model_lat(ed, mi, 1);
                    acc += m->share[c] * ed->curve[mi]->acc;
                }
                in.cap[j][l] = 1 / lat;
                in.acc[j][l] = acc;
            }
            in.lambda[j] = lam[j];
            in.backlog[j] = backlog[j];
        }
        int lv[BIRP_MAX_EDGES];
        birp_ms_plan(&in, lv, m->y);
        for (int j = 0; j < E; j++) {
            edge *ed = &m->e[j];
            for (int c = 0; c < m->C; c++)
                ed->use[c] = ed->ms_opt[c][lv[j] < ed->ms_nopt[c] ? lv[j] : ed->ms_nopt[c] - 1];
            row->level[j] = lv[j];
        }
        return;
    }
    /* birp, birp_static, serial: the QP */
    double a = m->bc.static_a, beta = m->bc.static_beta;
    if (p == P_BIRP) {
        if (m->held == 0 || m->held >= m->bc.hold) {
            if (m->held && m->win_n > 0)
                birp_bandit_update(&m->bandit, m->arm, 1 - m->win_loss / (double)m->win_n);
            m->arm = birp_bandit_select(&m->bandit);
            m->held = 0;
            m->win_loss = 0;
            m->win_n = 0;
        }
        m->held++;
        a = m->arm_a[m->arm / m->nb];
        beta = m->arm_beta[m->arm % m->nb];
        row->arm = m->arm;
    }
    row->a = a;
    row->beta = beta;
    /* The QP at the current model levels; with `downgrade`, while the
     * optimum still overflows (more than 1% of the load cannot be served in
     * time even batched), the edge that overflows most switches its classes
     * to their next faster model and the QP is solved again. */
    int lv[BIRP_MAX_EDGES] = {0};
    birp_slot_out so;
    for (int iter = 0;; iter++) {
        for (int j = 0; j < E; j++)
            for (int c = 0; c < m->C; c++) {
                edge *ed = &m->e[j];
                ed->use[c] = ed->ms_opt[c][lv[j] < ed->ms_nopt[c] ? lv[j] : ed->ms_nopt[c] - 1];
            }
        qp_decide(m, lam, backlog, a, beta, &so);
        if (!m->cfg.downgrade || p == P_SERIAL || so.fallback)
            break;
        double over = 0, tot = 0;
        int worst = -1;
        for (int j = 0; j < E; j++) {
            over += so.o[j];
            tot += lam[j] + backlog[j];
            int maxl = 0;
            for (int c = 0; c < m->C; c++)
                maxl = m->e[j].ms_nopt[c] - 1 > maxl ? m->e[j].ms_nopt[c] - 1 : maxl;
            if (lv[j] < maxl && so.o[j] > 0 && (worst < 0 || so.o[j] > so.o[worst]))
                worst = j;
        }
        if (over <= 0.01 * tot || worst < 0 || iter >= 4 * E)
            break;
        lv[worst]++;
    }
    row->status = so.status;
    row->fallback = so.fallback;
    row->obj = so.obj;
    memcpy(m->y, so.y, sizeof m->y);
    for (int j = 0; j < E; j++) {
        m->e[j].bcap = p == P_SERIAL ? 1 : so.bcap[j];
        m->e[j].conc = policy_batches(p) ? (int)m->cfg.parallel : 1;
        row->level[j] = lv[j];
    }
}

static void on_slot(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    birp_model *m = obj;
    if (m->nrows == m->caprows) {
        m->caprows = m->caprows ? 2 * m->caprows : 256;
        m->rows = xrealloc(m->rows, m->caprows * sizeof *m->rows);
    }
    slot_row *row = &m->rows[m->nrows++];
    memset(row, 0, sizeof *row);
    row->t_s = ps_to_s(sim_now(s));
    row->loss = m->slot_n > 0 ? m->slot_loss / (double)m->slot_n : NAN;
    m->slot_loss = 0;
    m->slot_n = 0;
    decide(m, row);
    double off = 0;
    for (int i = 0; i < m->E; i++) {
        row->bcap[i] = m->e[i].bcap;
        double oi = 0;
        for (int j = 0; j < m->E; j++)
            if (j != i)
                oi += m->y[i][j];
        off += oi / m->E;
    }
    row->offload = off;
    for (int j = 0; j < m->E; j++)
        try_dispatch(m, s, j);          /* a larger cap may start work at once */
    sim_timer_arm(s, &m->slot_timer, sim_now(s) + slot_of(m));
}

static int birp_start(void *st, sim *s, err *e)
{
    (void)e;
    birp_model *m = st;
    for (int j = 0; j < m->E; j++) {
        m->e[j].bcap = 1;
        m->e[j].conc = 1;
        m->e[j].lam_est = m->rate * (m->origin_cum[j] - (j ? m->origin_cum[j - 1] : 0)) /
                          m->origin_cum[m->E - 1];
        m->e[j].arr_slot = (int64_t)llround(m->e[j].lam_est * ps_to_s(slot_of(m)));
        m->y[j][j] = 1;
    }
    sim_timer_init(&m->slot_timer, on_slot, m, 0);
    sim_timer_arm(s, &m->slot_timer, 0);
    if (m->wl.source == SRC_TRACE) {
        /* scale so that the trace's mean rate becomes m->rate */
        double span = (double)m->trace.t_ps[m->trace.n - 1];
        m->tr_scale = (span / (double)(m->trace.n - 1)) * m->rate / 1e12;
        m->tr_scale = 1 / m->tr_scale;
        size_t i = 0;
        while (i + 1 < m->trace.n && m->trace.t_ps[i] < m->wl.start_ps)
            i++;
        m->tr_idx = i;
        m->tr_base = -(int64_t)llround((double)m->trace.t_ps[i] * m->tr_scale);
        sim_schedule(s, 0, on_arrival, m, 0);
    } else {
        if (m->wl.source == SRC_ONOFF) {
            m->on_start = 0;
            m->on_end = (int64_t)llround(rng_exponential(&m->r_wl, (double)m->wl.on_ps));
        }
        sim_schedule(s, next_gap(m, 0), on_arrival, m, 0);
    }
    return 0;
}

/* ---- report --------------------------------------------------------------- */

static void put_num(json_t *o, const char *k, double v)
{
    json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null());
}

static void fmt(char *b, size_t n, double v)
{
    if (isfinite(v))
        out_fmt_double(b, n, v);
    else
        snprintf(b, n, "nan");
}

static int birp_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    birp_model *m = st;
    int64_t now = sim_now(s);
    double span = ps_to_s(now - m->cfg.warmup_ps);
    int64_t n = 0, fail = 0, done = 0, good = 0, drop = 0;
    int64_t cn[MAX_CLASSES] = {0}, cf[MAX_CLASSES] = {0}, served[BIRP_MAX_EDGES] = {0};
    int64_t offloaded = 0, arrived = 0;
    double loss = 0, closs[MAX_CLASSES] = {0}, accsum = 0;
    samples qd, lat;
    samples_init(&qd);
    samples_init(&lat);
    for (size_t i = 0; i < m->nr; i++) {
        req *q = &m->r[i];
        if (q->t_arr < m->cfg.warmup_ps)
            continue;
        arrived++;
        if (q->state == R_PENDING && q->deadline > now)
            continue;                       /* undecided at the stop time */
        n++;
        cn[q->cls]++;
        int ok = q->state == R_OK;
        double l = ok ? 1 - m->e[q->dest].curve[q->model]->acc : 1;
        loss += l;
        closs[q->cls] += l;
        if (!ok) {
            fail++;
            cf[q->cls]++;
        } else {
            good++;
            accsum += 1 - l;
        }
        if (q->state == R_DROPPED)
            drop++;
        if (q->state == R_OK || q->state == R_LATE) {
            done++;
            served[q->dest]++;
            samples_add(&lat, ps_to_s(q->t_done - q->t_arr));
        }
        if (q->t_start >= 0)
            samples_add(&qd, ps_to_s(q->t_start - q->t_enq));
        if (q->dest != q->origin)
            offloaded++;
    }
    double util = 0;
    for (int j = 0; j < m->E; j++) {
        account_busy(&m->e[j], now);
        util += m->e[j].busy_ps / (double)now / m->E;
    }
    json_object_set_new(sum, "policy", json_string(policy_names[m->cfg.policy]));
    json_object_set_new(sum, "requests", json_integer(n));
    put_num(sum, "inference_loss", n ? loss / (double)n : NAN);
    put_num(sum, "slo_failure_rate", n ? (double)fail / (double)n : NAN);
    put_num(sum, "dropped_rate", n ? (double)drop / (double)n : NAN);
    put_num(sum, "served_accuracy", good ? accsum / (double)good : NAN);
    put_num(sum, "throughput_rps", (double)done / span);
    put_num(sum, "goodput_rps", (double)good / span);
    put_num(sum, "offered_rps", m->rate);
    put_num(sum, "arrival_rate_rps", (double)arrived / span);
    put_num(sum, "serial_capacity_rps", m->cap_ref);
    put_num(sum, "offloaded_fraction", n ? (double)offloaded / (double)n : NAN);
    put_num(sum, "accelerator_utilisation", util);
    put_num(sum, "queueing_delay_p50_s", samples_quantile(&qd, 0.5));
    put_num(sum, "queueing_delay_p99_s", samples_quantile(&qd, 0.99));
    put_num(sum, "latency_p50_s", samples_quantile(&lat, 0.5));
    put_num(sum, "latency_p99_s", samples_quantile(&lat, 0.99));
    json_t *so = json_object();
    json_object_set_new(so, "solves", json_integer(m->solves));
    json_object_set_new(so, "fallbacks", json_integer(m->fallbacks));
    json_object_set_new(so, "no_load_slots", json_integer(m->trivial));
    json_object_set_new(sum, "solver", so);
    if (m->cfg.policy == P_BIRP) {
        json_t *bo = json_object();
        int best = birp_bandit_best(&m->bandit);
        put_num(bo, "best_a", m->arm_a[best / m->nb]);
        put_num(bo, "best_beta", m->arm_beta[best % m->nb]);
        json_object_set_new(bo, "arms", json_integer(m->bandit.narms));
        json_object_set_new(bo, "pulls", json_integer(m->bandit.t));
        json_object_set_new(sum, "bandit", bo);
    }
    /* wall-clock solver time: not deterministic, kept apart */
    json_t *wo = json_object();
    put_num(wo, "solver_time_per_slot_mean_s", m->solves ? m->solve_wall_s / (double)m->solves : NAN);
    put_num(wo, "solver_time_per_slot_max_s", m->solves ? m->solve_wall_max_s : NAN);
    json_object_set_new(sum, "wall", wo);
    samples_fini(&qd);
    samples_fini(&lat);

    char b1[40], b2[40], b3[40], b4[40];
    FILE *f = out_file(o, "classes.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "class,slo_s,requests,slo_failures,slo_failure_rate,inference_loss\n");
    for (int c = 0; c < m->C; c++) {
        fmt(b1, sizeof b1, m->slo_s[c]);
        fmt(b2, sizeof b2, cn[c] ? (double)cf[c] / (double)cn[c] : NAN);
        fmt(b3, sizeof b3, cn[c] ? closs[c] / (double)cn[c] : NAN);
        fprintf(f, "%s,%s,%lld,%lld,%s,%s\n", m->cname[c], b1, (long long)cn[c],
                (long long)cf[c], b2, b3);
    }
    if (!(f = out_file(o, "edges.csv", e)))
        return e->code;
    fprintf(f, "edge,device,served,utilisation,batches,mean_batch\n");
    for (int j = 0; j < m->E; j++) {
        edge *ed = &m->e[j];
        fmt(b1, sizeof b1, ed->busy_ps / (double)now);
        fmt(b2, sizeof b2, ed->batches ? (double)ed->batched_reqs / (double)ed->batches : NAN);
        fprintf(f, "%s,%s,%lld,%s,%lld,%s\n", ed->name, ed->curve[0]->device,
                (long long)served[j], b1, (long long)ed->batches, b2);
    }
    if (!(f = out_file(o, "slots.csv", e)))
        return e->code;
    fprintf(f, "time_s,arm,a,beta,solver_status,fallback,objective,offload_fraction,"
               "last_slot_loss");
    for (int j = 0; j < m->E; j++)
        fprintf(f, ",bcap_%s", m->e[j].name);
    for (int j = 0; j < m->E; j++)
        fprintf(f, ",level_%s", m->e[j].name);
    fprintf(f, "\n");
    for (size_t i = 0; i < m->nrows; i++) {
        slot_row *r = &m->rows[i];
        fmt(b1, sizeof b1, r->t_s);
        fmt(b2, sizeof b2, r->obj);
        fmt(b3, sizeof b3, r->offload);
        fmt(b4, sizeof b4, r->loss);
        char ba[40], bb[40];
        fmt(ba, sizeof ba, r->a);
        fmt(bb, sizeof bb, r->beta);
        fprintf(f, "%s,%d,%s,%s,%d,%d,%s,%s,%s", b1, r->arm, ba, bb, r->status, r->fallback, b2,
                b3, b4);
        for (int j = 0; j < m->E; j++)
            fprintf(f, ",%d", r->bcap[j]);
        for (int j = 0; j < m->E; j++)
            fprintf(f, ",%d", r->level[j]);
        fprintf(f, "\n");
    }
    return 0;
}

static void birp_fini(void *st)
{
    birp_model *m = st;
    for (int j = 0; j < BIRP_MAX_EDGES; j++)
        for (int k = 0; k < MAX_MODELS; k++)
            free(m->e[j].q[k].v);
    while (m->inflight) {
        batch *b = m->inflight;
        m->inflight = b->next;
        free(b);
    }
    birp_profiles_fini(&m->prof);
    birp_trace_fini(&m->trace);
    if (m->bandit.pulls)
        birp_bandit_fini(&m->bandit);
    free(m->arm_a);
    free(m->arm_beta);
    free(m->r);
    free(m->rows);
}

const model_ops birp_model_ops = {
    .name = "birp",
    .summary = "BIRP: batch-aware inference redistribution across heterogeneous edges (ICPP'23)",
    .state_size = sizeof(birp_model),
    .configure = birp_configure,
    .start = birp_start,
    .report = birp_report,
    .fini = birp_fini,
};
