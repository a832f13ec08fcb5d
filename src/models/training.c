/*
 * training.c - the `training` model: LLM training jobs sharing a GPU
 * cluster (docs/training.md).  Configuration glue between a scenario's
 * `training` section, the network (network.h), the workloads (training.h:
 * SimAI files, AICB logs, model descriptions, the 1F1B builder) and the
 * ranks running on the network (training_run.h).
 *
 * Scenario section `training:`
 *   topology, transport, routing, ...   the network (aisim/netkeys.h, as in `net`)
 *   comm       packet (default): every rank on the packet-level network,
 *              collectives through collective.h; analytical: no network
 *              traffic, the sans-I/O evaluation (trn_eval) with bus
 *              bandwidths intra_host_busbw (TP) and network_busbw (others)
 *   intra_host, intra_host_busbw   packet mode: collectives of a group
 *              inside one server as a timer at that bus bandwidth
 *              (analytical, default) or as packets over NVLink (packet)
 *   algorithm, channels, chunk     of every collective (collective.h)
 *   fluid      plane: flow only: the collectives in fluid mode (collective.h)
 *   protocol, gpu, min_channels, max_channels, send_latency, ring_order
 *              NCCL's protocol model of every collective (coll_wl.h;
 *              protocol auto by default, none: off)
 *   gpu_tflops, efficiency         the GPU (generated compute, MFU)
 *   bytes_scale  multiplies every message size (small smoke runs; 1: off)
 *   timeline_ranks  ranks per job whose compute/communication bars go to
 *              timeline.csv
 *   jobs       a list of jobs: name, workload | aicb_log | model, tp, pp,
 *              dp, ep, vpp, gpus, micro_batches, zero, bucket, placement
 *              (contiguous | rail_aligned | random) or ranks (a list of
 *              endpoint names), iterations, start
 *
 * Tables: jobs.csv (per job and iteration: time, compute, exposed
 * communication, overlap, tokens/s, MFU), placement.csv (each rank's
 * endpoint), collectives.csv (per call: group,
 * collective, bytes, ranks, time, busbw), link_layers.csv (per layer of
 * links: mean and max utilisation, imbalance max/mean), timeline.csv (and
 * timeline_plot.csv: its bars as segments for `aisim plot`), and the
 * network's own tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/model.h"
#include "aisim/network.h"
#include "aisim/rng.h"
#include "aisim/training.h"
#include "aisim/units.h"
#include "aisim/netkeys.h"
#include "workload/training_run.h"

static const char *const comm_modes[] = {"packet", "analytical", NULL};
static const char *const intra_modes[] = {"analytical", "packet", NULL};
static const char *const placements[] = {"contiguous", "rail_aligned", "random", NULL};

typedef struct trn_cfg {
    network_cfg net;
    int comm, intra, algo;
    int64_t intra_bps, net_bps, channels, chunk, timeline;
    double tflops, eff, scale;
    bool fluid;
    coll_nccl_cfg nccl;
    char *busbw;
    cfg_node *jobs;
    trn_busbw bb;               /* busbw read */
} trn_cfg;

static const cfg_key trn_keys[] = {
    NET_KEYS(trn_cfg, net),
    {.name = "comm", .type = CFG_ENUM, .off = offsetof(trn_cfg, comm), .def = "packet",
     .choices = comm_modes, .help = "packet: ranks on the packet-level network; analytical: "
     "bus-bandwidth formulas, no network traffic"},
    {.name = "intra_host", .type = CFG_ENUM, .off = offsetof(trn_cfg, intra), .def = "analytical",
     .choices = intra_modes, .help = "collectives inside one server: at intra_host_busbw "
     "(analytical) or as packets over NVLink"},
    {.name = "intra_host_busbw", .type = CFG_RATE, .off = offsetof(trn_cfg, intra_bps),
     .def = "2400Gbps", .flags = CFG_MIN_EXCL, .min = 0, .help = "bus bandwidth of a collective "
     "inside one server (300 GB/s: SimAI's NVLink all-reduce)"},
    {.name = "busbw_file", .type = CFG_STR, .off = offsetof(trn_cfg, busbw),
     .flags = CFG_OPTIONAL, .help = "comm: analytical only: SimAI's busbw.yaml (GB/s per "
     "group and collective; what it leaves out or null takes intra_host_busbw / "
     "network_busbw)"},
    {.name = "network_busbw", .type = CFG_RATE, .off = offsetof(trn_cfg, net_bps),
     .def = "200Gbps", .flags = CFG_MIN_EXCL, .min = 0, .help = "comm: analytical only: bus "
     "bandwidth of collectives and sends between servers"},
    {.name = "algorithm", .type = CFG_ENUM, .off = offsetof(trn_cfg, algo), .def = "auto",
     .choices = coll_algo_names, .help = "algorithm of every collective (collective.h)"},
    {.name = "channels", .type = CFG_INT, .off = offsetof(trn_cfg, channels), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 64, .help = "parallel rings / trees"},
    {.name = "chunk", .type = CFG_SIZE, .off = offsetof(trn_cfg, chunk), .def = "512KiB",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "largest message of a collective"},
    {.name = "fluid", .type = CFG_BOOL, .off = offsetof(trn_cfg, fluid), .def = "false",
     .help = "plane: flow only: every collective fluid (a ring phase one flow per rank, "
     "the steps' latency added; docs/flow-level.md)"},
    COLL_NCCL_KEYS(trn_cfg, nccl),
    {.name = "gpu_tflops", .type = CFG_FLOAT, .off = offsetof(trn_cfg, tflops), .def = "312",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "peak dense TFLOP/s of a GPU (A100 bf16: 312)"},
    {.name = "efficiency", .type = CFG_FLOAT, .off = offsetof(trn_cfg, eff), .def = "0.5",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "achieved fraction of the "
     "peak in compute (generated workloads)"},
    {.name = "bytes_scale", .type = CFG_FLOAT, .off = offsetof(trn_cfg, scale), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "multiplies every message "
     "size (small smoke runs)"},
    {.name = "timeline_ranks", .type = CFG_INT, .off = offsetof(trn_cfg, timeline),
     .def = "8", .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1 << 20,
     .help = "ranks per job (0, 1, ...) whose bars go to timeline.csv"},
    {.name = "jobs", .type = CFG_NODE, .off = offsetof(trn_cfg, jobs),
     .help = "a list of training jobs"},
    {0},
};

typedef struct job_cfg {
    const char *name, *workload, *aicb;
    cfg_node *model, *ranks;
    int64_t tp, pp, dp, ep, vpp, gpus, mbs, zero, bucket, iters, start;
    int placement;
} job_cfg;

static const cfg_key job_keys[] = {
    {.name = "name", .type = CFG_STR, .off = offsetof(job_cfg, name), .flags = CFG_OPTIONAL,
     .help = "the job's name (default job0, job1, ...)"},
    {.name = "workload", .type = CFG_STR, .off = offsetof(job_cfg, workload),
     .flags = CFG_OPTIONAL, .help = "a SimAI workload file"},
    {.name = "aicb_log", .type = CFG_STR, .off = offsetof(job_cfg, aicb),
     .flags = CFG_OPTIONAL, .help = "an AICB physical per-call log (compute from `model`)"},
    {.name = "model", .type = CFG_NODE, .off = offsetof(job_cfg, model), .flags = CFG_OPTIONAL,
     .help = "a model description {layers, hidden, heads, ffn, vocab, seq, micro_batch, ...}"},
    {.name = "tp", .type = CFG_INT, .off = offsetof(job_cfg, tp), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1 << 16, .help = "tensor parallelism"},
    {.name = "pp", .type = CFG_INT, .off = offsetof(job_cfg, pp), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1 << 12, .help = "pipeline stages"},
    {.name = "dp", .type = CFG_INT, .off = offsetof(job_cfg, dp), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1 << 20, .help = "data parallelism (0: "
     "gpus / (tp x pp))"},
    {.name = "ep", .type = CFG_INT, .off = offsetof(job_cfg, ep), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1 << 16, .help = "expert parallelism (divides "
     "dp)"},
    {.name = "vpp", .type = CFG_INT, .off = offsetof(job_cfg, vpp), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 64, .help = "virtual stages per stage"},
    {.name = "gpus", .type = CFG_INT, .off = offsetof(job_cfg, gpus), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1 << 24, .help = "GPUs of the job (0: tp x "
     "pp x dp)"},
    {.name = "micro_batches", .type = CFG_INT, .off = offsetof(job_cfg, mbs), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1 << 16, .help = "micro-batches per iteration "
     "(0: the file's ga, else 1)"},
    {.name = "zero", .type = CFG_INT, .off = offsetof(job_cfg, zero), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 3, .help = "ZeRO stage (generated workloads)"},
    {.name = "bucket", .type = CFG_SIZE, .off = offsetof(job_cfg, bucket), .def = "100MB",
     .flags = CFG_MIN, .min = 0, .help = "DP gradient bucket (0: one per layer)"},
    {.name = "placement", .type = CFG_ENUM, .off = offsetof(job_cfg, placement),
     .def = "contiguous", .choices = placements, .help = "where ranks go, unless `ranks`"},
    {.name = "ranks", .type = CFG_NODE, .off = offsetof(job_cfg, ranks), .flags = CFG_OPTIONAL,
     .help = "explicit placement: the endpoint of each rank"},
    {.name = "iterations", .type = CFG_INT, .off = offsetof(job_cfg, iters), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000, .help = "iterations to run"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(job_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "when the job starts"},
    {0},
};

typedef struct model_cfg {
    int64_t layers, hidden, heads, ffn, vocab, seq, mb, experts, topk;
    bool sp, gated;
} model_cfg;

#define MK(n, f, d, lo, h) {.name = n, .type = CFG_INT, .off = offsetof(model_cfg, f), .def = d, \
                            .flags = CFG_MIN | CFG_MAX, .min = lo, .max = 1 << 24, .help = h}
static const cfg_key model_keys[] = {
    MK("layers", layers, NULL, 1, "transformer layers"),
    MK("hidden", hidden, NULL, 1, "hidden size"),
    MK("heads", heads, NULL, 1, "attention heads"),
    MK("ffn", ffn, NULL, 1, "FFN hidden size"),
    MK("vocab", vocab, "50304", 0, "vocabulary size"),
    MK("seq", seq, NULL, 1, "sequence length"),
    MK("micro_batch", mb, "1", 1, "sequences per micro-batch"),
    MK("experts", experts, "0", 0, "experts per MoE layer (0: dense)"),
    MK("topk", topk, "1", 1, "experts per token"),
    {.name = "sp", .type = CFG_BOOL, .off = offsetof(model_cfg, sp), .def = "false",
     .help = "sequence parallelism"},
    {.name = "gated", .type = CFG_BOOL, .off = offsetof(model_cfg, gated), .def = "false",
     .help = "gated MLP (SwiGLU, LLaMA): three h x ffn matrices instead of two"},
    {0},
};

typedef struct trn_model_st {
    trn_cfg cfg;
    network *n;
    int njobs;
    trn_job *jobs;
    trn_stage_stats **ana;      /* analytical mode: per job, per stage */
    int64_t *ana_T;
    int *server_of, *local_of, nservers, gpus_per_server;
} trn_model_st;

/* Servers from endpoint names "s{i}.g{j}"; any other name is a server of
 * its own. */
static void servers(trn_model_st *m)
{
    topo *t = network_topo(m->n);
    size_t nh = topo_hosts(t);
    m->server_of = xmalloc(nh * sizeof *m->server_of);
    m->local_of = xmalloc(nh * sizeof *m->local_of);
    int maxs = -1, maxg = 0;
    bool named = true;
    for (size_t h = 0; h < nh; h++) {
        int s, g, k = 0;
        const char *nm = topo_node_name(t, topo_host_node(t, (int)h));
        if (sscanf(nm, "s%d.g%d%n", &s, &g, &k) == 2 && !nm[k]) {
            m->server_of[h] = s;
            m->local_of[h] = g;
            maxs = s > maxs ? s : maxs;
            maxg = g + 1 > maxg ? g + 1 : maxg;
        } else
            named = false;
    }
    if (!named) {
        for (size_t h = 0; h < nh; h++) {
            m->server_of[h] = (int)h;
            m->local_of[h] = 0;
        }
        maxs = (int)nh - 1;
        maxg = 1;
    }
    m->nservers = maxs + 1;
    m->gpus_per_server = maxg;
}

static int place(trn_model_st *m, trn_job *j, const job_cfg *jc, bool *used, cfg_node *jn,
                 const char *jp, const model_env *env, err *e)
{
    size_t nh = network_endpoints(m->n);
    j->eps = xmalloc((size_t)j->n * sizeof *j->eps);
    char kp[256];
    if (jc->ranks) {
        cfg_path(kp, sizeof kp, jp, "ranks");
        long len = cfg_expect_list(jc->ranks, kp, "endpoint names", e);
        if (len < 0)
            return (int)len;
        if (len != j->n)
            return cfg_err(e, AISIM_EINVAL, jc->ranks, kp, "expected %d endpoints (tp x pp x dp),"
                           " found %ld", j->n, len);
        for (long i = 0; i < len; i++) {
            char ip[280];
            cfg_path_index(ip, sizeof ip, kp, (size_t)i);
            int h = network_endpoint(m->n, cfg_scalar(cfg_at(jc->ranks, (size_t)i)),
                                     cfg_at(jc->ranks, (size_t)i), ip, e);
            if (h < 0)
                return h;
            if (used[h])
                return cfg_err(e, AISIM_EINVAL, cfg_at(jc->ranks, (size_t)i), ip, "endpoint "
                               "already taken by another rank");
            used[h] = true;
            j->eps[i] = h;
        }
        return 0;
    }
    size_t free_n = 0;
    for (size_t h = 0; h < nh; h++)
        free_n += !used[h];
    if ((size_t)j->n > free_n)
        return cfg_err(e, AISIM_EINVAL, jn, jp, "the job needs %d GPUs, and %zu of the %zu "
                       "endpoints are free", j->n, free_n, nh);
    if (jc->placement == 0) {           /* contiguous: the first free */
        int r = 0;
        for (size_t h = 0; h < nh && r < j->n; h++)
            if (!used[h])
                j->eps[r++] = (int)h, used[h] = true;
        return 0;
    }
    if (jc->placement == 2) {           /* random: shuffled free endpoints */
        int *fr = xmalloc(free_n * sizeof *fr), k = 0;
        for (size_t h = 0; h < nh; h++)
            if (!used[h])
                fr[k++] = (int)h;
        rng g;
        rng_init(&g, env->seed, "training.placement", (uint64_t)j->idx);
        rng_shuffle(&g, fr, free_n, sizeof *fr);
        for (int r = 0; r < j->n; r++)
            j->eps[r] = fr[r], used[fr[r]] = true;
        free(fr);
        return 0;
    }
    /* rail-aligned: whole servers; a TP group on one server, rank (t, d, s)
     * on local GPU t + tp (s mod q), server d + dp (s / q), q = gpus / tp:
     * the members of a DP group share a rail */
    int G = m->gpus_per_server;
    if (G % j->tp)
        return cfg_err(e, AISIM_EINVAL, jn, jp, "rail_aligned placement needs tp (%d) to divide "
                       "the GPUs per server (%d)", j->tp, G);
    int q = G / j->tp, need = j->dp * ((j->pp + q - 1) / q);
    int *srv = xmalloc((size_t)m->nservers * sizeof *srv), ns = 0;
    int *h_of = xmalloc((size_t)m->nservers * G * sizeof *h_of);
    for (int i = 0; i < m->nservers * G; i++)
        h_of[i] = -1;
    for (size_t h = 0; h < nh; h++)
        h_of[m->server_of[h] * G + m->local_of[h]] = (int)h;
    for (int sv = 0; sv < m->nservers && ns < need; sv++) {
        bool all = true;
        for (int g = 0; g < G; g++)
            if (h_of[sv * G + g] < 0 || used[h_of[sv * G + g]])
                all = false;
        if (all)
            srv[ns++] = sv;
    }
    int r = 0;
    if (ns < need)
        r = cfg_err(e, AISIM_EINVAL, jn, jp, "rail_aligned placement needs %d whole free "
                    "servers, found %d", need, ns);
    for (int s = 0; s < j->pp && !r; s++)
        for (int d = 0; d < j->dp; d++)
            for (int t = 0; t < j->tp; t++) {
                int h = h_of[srv[d + j->dp * (s / q)] * G + t + j->tp * (s % q)];
                j->eps[t + j->tp * (d + j->dp * s)] = h;
                used[h] = true;
            }
    free(srv);
    free(h_of);
    return r;
}

static int data_err(err *e, const cfg_node *at, const char *kp)
{
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    return cfg_err(e, AISIM_EINVAL, at, kp, "%s", msg);
}

static void resolve(char *buf, size_t n, const model_env *env, const char *p)
{
    if (p[0] == '/' || !env->base_dir || !env->base_dir[0])
        snprintf(buf, n, "%s", p);
    else
        snprintf(buf, n, "%s/%s", env->base_dir, p);
}

/* Every field of a SimAI header the job can contradict, checked against
 * it (0 or absent: the file does not say): model_parallel_NPU_group (tp),
 * pp, ep, vpp (when pp > 1: SimAI writes vpp 8 for pipelines of one
 * stage too), all_gpus; ga is the micro-batch count, bounded as
 * micro_batches is and equal to it when both are given.  The message
 * names the file's line 1, the field and both values. */
static int simai_header_check(const trn_wl *w, const trn_job *j, const job_cfg *jc,
                              const char *path, err *e)
{
    static const char fmt[] = "%s:1: %s: expected the job's %s = %lld, found %lld";
    if (w->tp && w->tp != j->tp)
        return ERR(e, AISIM_EINVAL, fmt, path, "model_parallel_NPU_group", "tp",
                   (long long)j->tp, (long long)w->tp);
    if (w->pp && w->pp != j->pp)
        return ERR(e, AISIM_EINVAL, fmt, path, "pp", "pp", (long long)j->pp, (long long)w->pp);
    if (w->ep && w->ep != j->ep)
        return ERR(e, AISIM_EINVAL, fmt, path, "ep", "ep", (long long)j->ep, (long long)w->ep);
    if (w->vpp && j->pp > 1 && w->vpp != jc->vpp)
        return ERR(e, AISIM_EINVAL, fmt, path, "vpp", "vpp", (long long)jc->vpp,
                   (long long)w->vpp);
    if (w->all_gpus && w->all_gpus != j->n)
        return ERR(e, AISIM_EINVAL, fmt, path, "all_gpus", "GPUs (tp x pp x dp)",
                   (long long)j->n, (long long)w->all_gpus);
    if (w->ga_raw > (1 << 16))
        return ERR(e, AISIM_ERANGE, "%s:1: ga: expected micro-batches 1 .. 65536 (as "
                   "micro_batches), found %llu", path, (unsigned long long)w->ga_raw);
    if (w->ga && jc->mbs && w->ga != jc->mbs)
        return ERR(e, AISIM_EINVAL, fmt, path, "ga", "micro_batches", (long long)jc->mbs,
                   (long long)w->ga);
    return 0;
}

/* The group sizes of an AICB log against the job's: TP (its largest
 * tp_group), DP (its first dp_group), every rank (CommGroup.all); the
 * message names the line and both values. */
static int aicb_groups_check(const trn_log *l, const trn_job *j, const char *path, err *e)
{
    static const char fmt[] = "%s:%d: comm_group_size of %s: expected the job's %s = %d, "
                              "found %d";
    if (l->tp && l->tp != j->tp)
        return ERR(e, AISIM_EINVAL, fmt, path, l->tp_line, "CommGroup.tp_group", "tp", j->tp,
                   l->tp);
    if (l->dp && l->dp != j->dp)
        return ERR(e, AISIM_EINVAL, fmt, path, l->dp_line, "CommGroup.dp_group", "dp", j->dp,
                   l->dp);
    if (l->all && l->all != j->n)
        return ERR(e, AISIM_EINVAL, fmt, path, l->all_line, "CommGroup.all",
                   "GPUs (tp x pp x dp)", j->n, l->all);
    return 0;
}

/* A workload file's compute against the GPU's peak: the model's FLOPs
 * of an iteration over the job's GPUs at gpu_tflops take at least
 * `need`; the file's compute per GPU (its layers' forward, input- and
 * weight-gradient times, times the micro-batches, over the stages) below
 * that is an MFU above 1, which no GPU reaches: refused, with both times. */
static int compute_vs_peak(const trn_wl *w, const trn_model *md, const trn_job *j, int mbs,
                           const char *path, err *e)
{
    double file_ps = 0;
    for (size_t i = 0; i < w->n; i++)
        file_ps += (double)w->layers[i].fwd_ps + (double)w->layers[i].ig_ps +
                   (double)w->layers[i].wg_ps;
    double file_s = file_ps * 1e-12 * mbs / j->pp;
    double flops = trn_model_flops_per_token(md) * mbs * md->micro_batch * md->seq * j->dp;
    double need_s = flops / ((double)j->n * md->gpu_flops);
    if (file_s < need_s)
        return ERR(e, AISIM_EINVAL, "%s: compute: expected at least %.6g s per GPU and "
                   "iteration (the model's %.4g FLOP on %d GPUs at %.4g TFLOP/s), found %.6g s "
                   "in the file's %zu layers x %d micro-batches (MFU %.3f > 1)", path, need_s,
                   flops, j->n, md->gpu_flops / 1e12, file_s, w->n, mbs, need_s / file_s);
    return 0;
}

static int job_configure(trn_model_st *m, int i, cfg_node *jn, const char *jp, bool *used,
                         const model_env *env, err *e)
{
    trn_job *j = &m->jobs[i];
    job_cfg jc = {0};
    int r = cfg_bind(jn, jp, job_keys, &jc, e);
    if (r)
        return r;
    char kp[256], path[1024];
    j->idx = i;
    snprintf(j->name, sizeof j->name, "%s", jc.name ? jc.name : "");
    if (!jc.name)
        snprintf(j->name, sizeof j->name, "job%d", i);
    int src = !!jc.workload + !!jc.aicb;
    if (src > 1 || (!src && !jc.model))
        return cfg_err(e, AISIM_EINVAL, jn, jp, "expected one of workload (a SimAI file), "
                       "aicb_log (with model) or model");
    if (jc.aicb && !jc.model)
        return cfg_err(e, AISIM_EINVAL, jn, jp, "aicb_log needs a model (for compute times)");
    j->tp = (int)jc.tp, j->pp = (int)jc.pp, j->ep = (int)jc.ep;
    int64_t tpp = jc.tp * jc.pp;
    j->dp = (int)jc.dp;
    if (jc.gpus) {
        cfg_path(kp, sizeof kp, jp, "gpus");
        if (jc.gpus % tpp)
            return cfg_err(e, AISIM_EINVAL, cfg_get(jn, "gpus"), kp, "expected a multiple of tp "
                           "x pp = %lld, found %lld", (long long)tpp, (long long)jc.gpus);
        if (jc.dp && jc.dp * tpp != jc.gpus)
            return cfg_err(e, AISIM_EINVAL, cfg_get(jn, "gpus"), kp, "expected tp x pp x dp = "
                           "%lld, found %lld", (long long)(jc.dp * tpp), (long long)jc.gpus);
        j->dp = (int)(jc.gpus / tpp);
    }
    if (!j->dp)
        j->dp = 1;
    if (j->dp % j->ep) {
        cfg_path(kp, sizeof kp, jp, "ep");
        return cfg_err(e, AISIM_EINVAL, cfg_get(jn, "ep"), kp, "expected a divisor of dp = %d, "
                       "found %d", j->dp, j->ep);
    }
    j->n = j->tp * j->pp * j->dp;
    size_t nh = network_endpoints(m->n);
    if ((size_t)j->n > nh)
        return cfg_err(e, AISIM_EINVAL, jn, jp, "tp x pp x dp = %d GPUs, but the cluster has "
                       "%zu", j->n, nh);
    j->iterations = (int)jc.iters;
    j->start_ps = jc.start;
    /* the model, if described */
    trn_model md = {0};
    if (jc.model) {
        model_cfg mc = {0};
        cfg_path(kp, sizeof kp, jp, "model");
        if ((r = cfg_bind(jc.model, kp, model_keys, &mc, e)))
            return r;
        md = (trn_model){.layers = (int)mc.layers, .hidden = (int)mc.hidden,
                         .heads = (int)mc.heads, .ffn = (int)mc.ffn, .vocab = (int)mc.vocab,
                         .seq = (int)mc.seq, .micro_batch = (int)mc.mb,
                         .experts = (int)mc.experts, .topk = (int)mc.topk, .sp = mc.sp, .gated = mc.gated,
                         .tp = j->tp, .pp = j->pp, .dp = j->dp, .ep = j->ep,
                         .zero = (int)jc.zero, .gpu_flops = m->cfg.tflops * 1e12,
                         .efficiency = m->cfg.eff, .bytes_per_param = 2};
        if (trn_model_check(&md, e))
            return data_err(e, jc.model, kp);
    }
    int mbs = (int)jc.mbs;
    j->progs = xcalloc((size_t)j->pp, sizeof *j->progs);
    trn_wl w = {0};
    if (jc.aicb) {
        cfg_path(kp, sizeof kp, jp, "aicb_log");
        resolve(path, sizeof path, env, jc.aicb);
        trn_log l;
        if (trn_read_aicb(&l, path, e))
            return data_err(e, cfg_get(jn, "aicb_log"), kp);
        if (l.stages != j->pp) {
            trn_log_free(&l);
            return cfg_err(e, AISIM_EINVAL, cfg_get(jn, "aicb_log"), kp, "the log has %d "
                           "pipeline stages, the job pp = %d", l.stages, j->pp);
        }
        if ((r = aicb_groups_check(&l, j, path, e))) {
            trn_log_free(&l);
            return data_err(e, cfg_get(jn, "aicb_log"), kp);
        }
        double f = trn_layer_fwd_flops(&md) * md.layers / md.pp;
        int64_t fps = (int64_t)(f / (md.gpu_flops * md.efficiency) * 1e12);
        r = trn_build_aicb(j->progs, &l, fps, 2 * fps, &mbs, e);
        trn_log_free(&l);
        if (r)
            return data_err(e, cfg_get(jn, "aicb_log"), kp);
    } else {
        if (jc.workload) {
            cfg_path(kp, sizeof kp, jp, "workload");
            resolve(path, sizeof path, env, jc.workload);
            if (trn_read_simai(&w, path, e))
                return data_err(e, cfg_get(jn, "workload"), kp);
            if ((r = simai_header_check(&w, j, &jc, path, e))) {
                trn_wl_free(&w);
                return data_err(e, cfg_get(jn, "workload"), kp);
            }
        } else
            trn_generate(&w, &md);
        if (!mbs)
            mbs = w.ga ? w.ga : 1;
        trn_build_cfg bc = {.pp = j->pp, .vpp = (int)jc.vpp, .micro_batches = mbs,
                            .zero = (int)jc.zero, .bucket_bytes = (uint64_t)jc.bucket,
                            .act_bytes = w.pp_bytes};
        if (jc.model && !w.pp_bytes)
            bc.act_bytes = (uint64_t)md.micro_batch * md.seq * md.hidden * 2;
        if (jc.workload && jc.model && (r = compute_vs_peak(&w, &md, j, mbs, path, e))) {
            trn_wl_free(&w);
            return data_err(e, cfg_get(jn, "workload"), kp);
        }
        r = trn_build(j->progs, &w, &bc, e);
        trn_wl_free(&w);
        if (r)
            return data_err(e, jn, jp);
    }
    if (jc.model) {
        j->tokens_per_iter = (double)mbs * md.micro_batch * md.seq * j->dp;
        j->model_flops_per_iter = trn_model_flops_per_token(&md) * j->tokens_per_iter;
    }
    j->peak_flops = m->cfg.tflops * 1e12;
    j->algo = (enum coll_algo)m->cfg.algo;
    j->channels = (int)m->cfg.channels;
    j->chunk_bytes = (uint64_t)m->cfg.chunk;
    j->fluid = m->cfg.fluid;
    j->nccl = m->cfg.nccl;
    j->bytes_scale = m->cfg.scale;
    j->intra_analytical = m->cfg.intra == 0;
    j->intra_Bps = (double)m->cfg.intra_bps / 8;
    j->timeline_ranks = (int)m->cfg.timeline;
    return place(m, j, &jc, used, jn, jp, env, e);
}

static int trn_configure(void *st, cfg_node *sec, const char *path, const model_env *env,
                         err *e)
{
    trn_model_st *m = st;
    int r = cfg_bind(sec, path, trn_keys, &m->cfg, e);
    if (r)
        return r;
    if (m->cfg.fluid && m->cfg.net.plane != NET_PLANE_FLOW) {
        char kp[256];
        return cfg_err(e, AISIM_EINVAL, cfg_get(sec, "fluid"), cfg_path(kp, sizeof kp, path,
                       "fluid"), "a fluid collective needs the flow plane (plane: flow); "
                       "found plane: packet, whose messages are packets");
    }
    if (m->cfg.busbw) {
        char kp[256];
        cfg_path(kp, sizeof kp, path, "busbw_file");
        if (m->cfg.comm != 1)
            return cfg_err(e, AISIM_EINVAL, cfg_get(sec, "busbw_file"), kp, "expected comm: "
                           "analytical (a bus-bandwidth table replaces the network), found "
                           "comm: packet");
        char full[4096];
        resolve(full, sizeof full, env, m->cfg.busbw);
        if ((r = trn_read_busbw(&m->cfg.bb, full, e)))
            return data_err(e, cfg_get(sec, "busbw_file"), kp);
    }
    if ((r = network_create(&m->n, &m->cfg.net, sec, path, env, e)))
        return r;
    servers(m);
    char kp[256];
    cfg_path(kp, sizeof kp, path, "jobs");
    long nj = cfg_expect_list(m->cfg.jobs, kp, "training jobs", e);
    if (nj < 0)
        return (int)nj;
    if (nj == 0)
        return cfg_err(e, AISIM_EINVAL, m->cfg.jobs, kp, "expected at least one job");
    m->jobs = xcalloc((size_t)nj, sizeof *m->jobs);
    bool *used = xcalloc(network_endpoints(m->n), sizeof *used);
    for (long i = 0; i < nj && !r; i++) {
        char jp[280];
        cfg_path_index(jp, sizeof jp, kp, (size_t)i);
        m->njobs = (int)i + 1;
        r = job_configure(m, (int)i, cfg_at(m->cfg.jobs, (size_t)i), jp, used, env, e);
    }
    free(used);
    if (r)
        return r;
    if (m->cfg.comm == 0)
        for (int i = 0; i < m->njobs; i++)
            trn_job_init(&m->jobs[i], m->n, m->server_of);
    return 0;
}

static void on_complete(void *ctx, network *n, const net_msg *msg)
{
    (void)msg;
    (void)n;
    (void)ctx;
}

/* Ends the run when every job is done (polled after each message and by
 * the jobs' own completion through the monitor). */
static void check_done(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    trn_model_st *m = obj;
    for (int i = 0; i < m->njobs; i++)
        if (!trn_job_done(&m->jobs[i])) {
            sim_schedule_in(s, 1000000, check_done, m, 0);   /* 1 us */
            return;
        }
    sim_stop(s);
}

static int trn_start(void *st, sim *s, err *e)
{
    trn_model_st *m = st;
    if (m->cfg.comm == 1) {     /* analytical: evaluate, no events */
        m->ana = xcalloc((size_t)m->njobs, sizeof *m->ana);
        m->ana_T = xcalloc((size_t)m->njobs, sizeof *m->ana_T);
        for (int i = 0; i < m->njobs; i++) {
            trn_job *j = &m->jobs[i];
            trn_cost c = {0};
            for (int g = 0; g < TRN_G_NGROUP; g++) {
                c.bw_Bps[g] = (double)m->cfg.net_bps / 8 / m->cfg.scale;
                c.lat_ps[g] = 1000000;
            }
            /* TP inside a server when tp divides the GPUs per server */
            if (m->gpus_per_server % j->tp == 0)
                c.bw_Bps[TRN_G_TP] = (double)m->cfg.intra_bps / 8 / m->cfg.scale;
            /* SimAI's table where it gives a figure (DP_EP: DP's unless
             * the file has its own) */
            for (int g = 0; g < TRN_G_NGROUP; g++) {
                int src = g == TRN_G_DPEP && !(m->cfg.bb.groups & 1u << TRN_G_DPEP) ? TRN_G_DP : g;
                for (int k = 0; k < TRN_C_NCOLL; k++)
                    c.coll_Bps[g][k] = m->cfg.bb.GBps[src][k] * 1e9 / m->cfg.scale;
            }
            c.size[TRN_G_TP] = j->tp;
            c.size[TRN_G_DP] = j->dp;
            c.size[TRN_G_EP] = j->ep;
            c.size[TRN_G_DPEP] = j->dp / j->ep;
            c.size[TRN_G_PP] = 2;
            m->ana[i] = xcalloc((size_t)j->pp, sizeof **m->ana);
            m->ana_T[i] = trn_eval(j->progs, j->pp, &c, m->ana[i], e);
            if (m->ana_T[i] < 0)
                return (int)m->ana_T[i];
        }
        sim_stop(s);
        return 0;
    }
    network_on_complete(m->n, on_complete, m);
    network_start(m->n);
    for (int i = 0; i < m->njobs; i++)
        trn_job_start(&m->jobs[i]);
    sim_schedule(s, 0, check_done, m, 0);
    return 0;
}

/* Utilisation per layer of links: a layer is the pair of node classes a
 * port joins (host, nvs, tor, agg, ...), e.g. "tor->agg". */
static const char *node_class(const char *nm, bool host)
{
    if (host)
        return "gpu";
    if (strstr(nm, ".nvs"))
        return "nvswitch";
    if (strstr(nm, "tor"))
        return "tor";
    if (strstr(nm, "agg"))
        return "agg";
    if (strstr(nm, "spine") || strstr(nm, "core"))
        return "spine";
    return "switch";
}

static int write_layers(trn_model_st *m, out *o, double T, json_t *sum, err *e)
{
    FILE *f = out_file(o, "link_layers.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "layer,links,mean_utilisation,max_utilisation,imbalance\n");
    topo *t = network_topo(m->n);
    size_t nl = topo_links(t);
    enum { MAXL = 32 };
    char names[MAXL][48];
    double su[MAXL], mx[MAXL];
    int cnt[MAXL], nlay = 0;
    double worst = 0;
    for (size_t l = 0; l < nl; l++)
        for (int d = 0; d < 2; d++) {
            int a, b;
            topo_link_ends(t, (int)l, &a, &b);
            if (d)
                a ^= b, b ^= a, a ^= b;
            char key[48];
            snprintf(key, sizeof key, "%s->%s",
                     node_class(topo_node_name(t, a), topo_node_kind(t, a) == NODE_HOST),
                     node_class(topo_node_name(t, b), topo_node_kind(t, b) == NODE_HOST));
            int k = 0;
            while (k < nlay && strcmp(names[k], key))
                k++;
            if (k == nlay) {
                if (nlay == MAXL)
                    continue;
                snprintf(names[nlay], sizeof names[nlay], "%s", key);
                su[nlay] = mx[nlay] = 0;
                cnt[nlay++] = 0;
            }
            port *q = topo_link_port(t, (int)l, d);
            double u = T > 0 ? ps_to_s(q->stat_busy_ps) / T : 0;
            su[k] += u;
            mx[k] = u > mx[k] ? u : mx[k];
            cnt[k]++;
        }
    json_t *lay = json_object();
    for (int k = 0; k < nlay; k++) {
        double mean = su[k] / cnt[k], imb = mean > 0 ? mx[k] / mean : NAN;
        fprintf(f, "%s,%d,", names[k], cnt[k]);
        net_csv_num(f, mean, ",");
        net_csv_num(f, mx[k], ",");
        net_csv_num(f, imb, "\n");
        if (mean > 0 && imb > worst && strcmp(names[k], "gpu->nvswitch") &&
            strcmp(names[k], "nvswitch->gpu"))
            worst = imb;
        json_t *o1 = json_object();
        out_json_num(o1, "mean_utilisation", mean);
        out_json_num(o1, "max_utilisation", mx[k]);
        out_json_num(o1, "imbalance", imb);
        json_object_set_new(lay, names[k], o1);
    }
    json_object_set_new(sum, "link_layers", lay);
    out_json_num(sum, "max_network_imbalance", worst);
    return 0;
}

static int trn_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    trn_model_st *m = st;
    FILE *f = out_file(o, "jobs.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "job,iteration,gpus,tp,pp,dp,start_s,iteration_s,compute_s,exposed_comm_s,"
               "overlap_s,idle_s,tokens_per_s,mfu\n");
    json_t *jobs = json_array();
    for (int i = 0; i < m->njobs; i++) {
        trn_job *j = &m->jobs[i];
        int ni;
        trn_iter_stats *it = xcalloc((size_t)j->iterations, sizeof *it);
        if (m->cfg.comm == 1) {
            ni = 1;
            it[0].end_ps = m->ana_T[i];
            for (int k = 0; k < j->pp; k++) {
                it[0].compute_ps += m->ana[i][k].compute_ps / j->pp;
                it[0].comm_ps += m->ana[i][k].comm_ps / j->pp;
                it[0].exposed_ps += m->ana[i][k].exposed_ps / j->pp;
            }
        } else
            ni = trn_job_iters(j, it);
        json_t *jo = json_object();
        json_object_set_new(jo, "name", json_string(j->name));
        json_object_set_new(jo, "gpus", json_integer(j->n));
        json_object_set_new(jo, "iterations_done", json_integer(ni));
        for (int k = 0; k < ni; k++) {
            double T = ps_to_s(it[k].end_ps - it[k].start_ps);
            double comp = ps_to_s(it[k].compute_ps), exp = ps_to_s(it[k].exposed_ps);
            double ovl = ps_to_s(it[k].comm_ps - it[k].exposed_ps);
            double tps = j->tokens_per_iter > 0 && T > 0 ? j->tokens_per_iter / T : NAN;
            double mfu = j->model_flops_per_iter > 0 && T > 0
                             ? j->model_flops_per_iter / (T * j->n * j->peak_flops) : NAN;
            if (mfu > 1) {      /* faster than the GPUs' peak: no result */
                free(it);
                json_decref(jobs);
                return ERR(e, AISIM_EINVAL, "job %s, iteration %d: MFU %.3f > 1: the "
                           "iteration (%.6g s) is shorter than the model's FLOPs take at "
                           "gpu_tflops; its compute times are faster than the GPU's peak",
                           j->name, k, mfu, T);
            }
            fprintf(f, "%s,%d,%d,%d,%d,%d,", j->name, k, j->n, j->tp, j->pp, j->dp);
            net_csv_num(f, ps_to_s(it[k].start_ps), ",");
            net_csv_num(f, T, ",");
            net_csv_num(f, comp, ",");
            net_csv_num(f, exp, ",");
            net_csv_num(f, ovl, ",");
            net_csv_num(f, T - comp - exp > 0 ? T - comp - exp : 0, ",");
            net_csv_num(f, tps, ",");
            net_csv_num(f, mfu, "\n");
            if (k == ni - 1) {
                out_json_num(jo, "iteration_s", T);
                out_json_num(jo, "compute_s", comp);
                out_json_num(jo, "exposed_comm_s", exp);
                out_json_num(jo, "overlap_s", ovl);
                out_json_num(jo, "tokens_per_s", tps);
                out_json_num(jo, "mfu", mfu);
            }
        }
        free(it);
        json_array_append_new(jobs, jo);
    }
    json_object_set_new(sum, "jobs", jobs);
    FILE *pl = out_file(o, "placement.csv", e);
    if (!pl)
        return e->code;
    fprintf(pl, "job,rank,tp_rank,dp_rank,stage,endpoint,server,local_gpu\n");
    topo *t = network_topo(m->n);
    for (int i = 0; i < m->njobs; i++) {
        const trn_job *j = &m->jobs[i];
        for (int r = 0; r < j->n; r++)
            fprintf(pl, "%s,%d,%d,%d,%d,%s,%d,%d\n", j->name, r, r % j->tp, (r / j->tp) % j->dp,
                    r / (j->tp * j->dp), topo_node_name(t, topo_host_node(t, j->eps[r])),
                    m->server_of[j->eps[r]], m->local_of[j->eps[r]]);
    }
    if (m->cfg.comm == 1)
        return 0;
    int r = network_report(m->n, o, sum, e);
    if (r)
        return r;
    FILE *c = out_file(o, "collectives.csv", e);
    FILE *tl = c ? out_file(o, "timeline.csv", e) : NULL;
    FILE *sg = tl ? out_file(o, "timeline_plot.csv", e) : NULL;
    if (!sg)
        return e->code;
    fprintf(sg, "series,time_s,row\n");
    int row0 = 0;
    fprintf(c, "job,group,group_index,collective,ranks,bytes,start_s,time_s,busbw_GBps\n");
    fprintf(tl, "job,rank,stage,kind,start_s,end_s\n");
    for (int i = 0; i < m->njobs; i++) {
        const trn_call_rec *rc;
        size_t n = trn_job_calls(&m->jobs[i], &rc);
        for (size_t k = 0; k < n; k++) {
            fprintf(c, "%s,%s,%d,%s,%d,%llu,", m->jobs[i].name, trn_group_name(rc[k].group),
                    rc[k].gidx, trn_coll_name(rc[k].coll), rc[k].ranks,
                    (unsigned long long)rc[k].bytes);
            net_csv_num(c, ps_to_s(rc[k].start_ps), ",");
            net_csv_num(c, ps_to_s(rc[k].finish_ps - rc[k].start_ps), ",");
            net_csv_num(c, rc[k].busbw_Bps / 1e9, "\n");
        }
        trn_job_timeline(&m->jobs[i], tl, sg, row0);
        row0 += m->jobs[i].timeline_ranks < m->jobs[i].n ? m->jobs[i].timeline_ranks
                                                         : m->jobs[i].n;
    }
    return write_layers(m, o, ps_to_s(sim_now(s)), sum, e);
}

static void trn_fini(void *st)
{
    trn_model_st *m = st;
    for (int i = 0; i < m->njobs; i++) {
        trn_job *j = &m->jobs[i];
        trn_job_fini(j);
        if (j->progs)
            for (int s = 0; s < j->pp; s++)
                trn_prog_free(&j->progs[s]);
        free(j->progs);
        free(j->eps);
        if (m->ana)
            free(m->ana[i]);
    }
    free(m->ana);
    free(m->ana_T);
    free(m->jobs);
    free(m->server_of);
    free(m->local_of);
    network_destroy(m->n);
}

static const plot_spec trn_plots[] = {
    {.csv = "timeline_plot.csv", .x = "time_s", .y = "row", .group = "series",
     .title = "timeline per rank: compute and communication (+0.3)", .out = "timeline",
     .xlabel = "time (s)", .ylabel = "rank (jobs one above the other)"},
    {.csv = "collectives.csv", .x = "bytes", .y = "busbw_GBps", .group = "group",
     .title = "collective bus bandwidth", .out = "collectives_busbw", .xlabel = "bytes",
     .ylabel = "busbw (GB/s)", .logx = 1},
    {0},
};

/* What `aisim run` prints first (model.h). */
static const model_headline trn_headlines[] = {
    {"jobs.*.gpus", "GPUs", "", 0},
    {"jobs.*.iteration_s", "iteration", "s", 0},
    {"jobs.*.compute_s", "compute", "s", 0},
    {"jobs.*.exposed_comm_s", "exposed comm.", "s", 0},
    {"jobs.*.tokens_per_s", "throughput", "tokens/s", 0},
    {"jobs.*.mfu", "MFU", "%", 0},
    MODEL_HEADLINES_NETWORK,
    {NULL, NULL, NULL, 0},
};

const model_ops training_model_ops = {
    .name = "training",
    .summary = "LLM training jobs (SimAI/AICB workloads or model descriptions) on a GPU cluster",
    .state_size = sizeof(trn_model_st),
    .configure = trn_configure,
    .start = trn_start,
    .report = trn_report,
    .fini = trn_fini,
    .plots = trn_plots,
    .headlines = trn_headlines,
};
