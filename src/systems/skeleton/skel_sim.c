/*
 * skel_sim.c - simulator glue of SkeletonHunter (`model: skeleton`,
 * docs/skeletonhunter.md).  One scenario runs one experiment:
 *
 *  - cluster: the containerized cluster (skel_run.c) for `duration`, once
 *    per method and per run (seeds seed, seed+1, ...; the churn and the
 *    failures of a run are the same for every method: common random
 *    numbers), stepped in lockstep by one engine event per simulated
 *    second.  Tables: methods.csv (mean and 95% CI over the runs, next to
 *    the paper's numbers), runs.csv, per_type.csv, ground_truth.csv,
 *    alarms.csv and, with `trace`, trace.csv (the probes of one pair).
 *  - lists: Figs. 15-16 (skel_lists.c).  Table lists.csv.
 *  - packets: probes as packets (skel_pkt.c).
 * The failures file is read by skel_failfile.c.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/stats.h"
#include "systems/skeleton/skel_sim_int.h"

static const char *const exp_names[] = {"cluster", "lists", "packets", NULL};


#define F(x) offsetof(sk_cfg, x)
#define POSI(key, field, dflt, hi, text)                                                      \
    {.name = key, .type = CFG_INT, .off = F(field), .def = dflt, .flags = CFG_MIN | CFG_MAX,   \
     .min = 1, .max = hi, .help = text}
#define POST(key, field, dflt, text)                                                          \
    {.name = key, .type = CFG_TIME, .off = F(field), .def = dflt, .flags = CFG_MIN_EXCL,       \
     .min = 0, .help = text}
#define FRAC(key, field, dflt, text)                                                          \
    {.name = key, .type = CFG_FLOAT, .off = F(field), .def = dflt, .flags = CFG_MIN | CFG_MAX, \
     .min = 0, .max = 1, .help = text}

static const cfg_key probe_keys[] = {
    POST("rtt_median", rtt_median_ps, "14us", "median of the lognormal base RTT"),
    {.name = "rtt_sigma", .type = CFG_FLOAT, .off = F(rtt_sigma), .def = "0.1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 2, .help = "sigma of ln RTT"},
    {.name = "agg_hop", .type = CFG_TIME, .off = F(hop_ps), .def = "2us", .flags = CFG_MIN,
     .min = 0, .help = "added to paths through an aggregation switch"},
    FRAC("spike_probability", spike_p, "0.005", "congestion noise: chance of a spike per probe"),
    POST("spike_mean", spike_mean_ps, "30us", "mean (exponential) of a congestion spike"),
    {.name = "rate", .type = CFG_FLOAT, .off = F(rate), .def = "1", .flags = CFG_MIN | CFG_MAX,
     .min = 1, .max = 100, .help = "targets probed per second per endpoint (whole number)"},
    POST("queue_delay", queue_ps, "10us",
         "queueing behind the job's traffic: mean u/(1-u) x this at each RNIC of utilisation u"),
    {.name = "rnic", .type = CFG_RATE, .off = F(rnic_bps), .def = "200Gbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "RNIC rate (the utilisation of the job's traffic)"},
    {.name = "agent_jitter", .type = CFG_TIME, .off = F(jitter_ps), .def = "1us",
     .flags = CFG_MIN, .min = 0,
     .help = "median of the per-server scale of the agents' scheduling jitter (exponential)"},
    FRAC("drop", drop_p, "0.001", "chance that a whole probe gets no reply (agent, host)"),
    FRAC("baseline_drift", baseline_drift, "0.05",
         "slow variation of a path's baseline RTT (relative amplitude)"),
    POST("baseline_period", baseline_period_ps, "3600s",
         "period of that variation (each path 0.5-1.5 x this)"),
    POSI("packets", probe_packets, "100", 100000, "packets per probe (its loss_rate)"),
    POSI("sweep_packets", sweep_packets, "1000", 1000000,
         "packets per underlay-agent probe of a localization sweep"),
    POSI("timeouts", timeouts, "3", 100, "consecutive 1-s timeouts that make a pair unreachable"),
    {0},
};

static const char *const lof_names[] = {"on", "always", "never", NULL};

static const cfg_key detect_keys[] = {
    FRAC("loss_threshold", loss_threshold, "0.01", "pair loss in a window that raises an alarm"),
    POST("window", window_ps, "30s", "short-term window"),
    POSI("lookback", lookback, "10", 16, "windows in the look-back (10 x 30 s = 5 min)"),
    POSI("lof_k", lof_k, "5", 15, "LOF neighbours"),
    {.name = "lof_max", .type = CFG_FLOAT, .off = F(lof_max), .def = "1.5", .flags = CFG_MIN_EXCL,
     .min = 0, .help = "LOF above which a window is an outlier"},
    {.name = "far_sd", .type = CFG_FLOAT, .off = F(far_sd), .def = "2", .flags = CFG_MIN_EXCL,
     .min = 0, .help = "an outlier must be this many sd from every earlier window"},
    POST("sd_floor", floor_sd_ps, "0.5us", "floor of the look-back sd per statistic"),
    {.name = "suspect_factor", .type = CFG_FLOAT, .off = F(suspect_factor), .def = "1.5",
     .flags = CFG_MIN_EXCL, .min = 1,
     .help = "an RTT above this times the pair's median is retried twice"},
    POST("suspect_max", suspect_abs_ps, "25us",
         "an RTT above this is always suspicious (RoCE RTT should stay under ~20 us)"),
    POST("longterm", longterm_ps, "1800s", "long-term Z-test period"),
    FRAC("z_alpha", z_alpha, "0.001", "long-term test level"),
    FRAC("z_min_shift", z_shift, "0.2", "long-term: smallest relative median shift that counts"),
    POST("holdoff", holdoff_ps, "300s", "no second alarm for a pair within this"),
    {.name = "lof", .type = CFG_ENUM, .off = F(lof_mode), .def = "on", .choices = lof_names,
     .help = "short-term test: on; always (every suspicious window an alarm) or never: ablations"},
    {.name = "ztest", .type = CFG_BOOL, .off = F(ztest), .def = "true",
     .help = "the long-term Z-test (false: ablation)"},
    {.name = "confirm", .type = CFG_BOOL, .off = F(confirm), .def = "true",
     .help = "an outlier window is an alarm only if the pair's next probe is one too"},
    {0},
};

static const cfg_key loc_keys[] = {
    POST("vote_window", vote_window_ps, "60s", "anomalous paths of this age still vote"),
    POST("replay_delay", replay_ps, "1s", "overlay replay (reading both ends' installed tables)"),
    POST("sweep_delay", sweep_ps, "2s", "traceroute sweeps of the underlay agents"),
    POST("check_delay", check_ps, "1s", "a culprit's own check (RNIC counters, queue setting)"),
    POST("reprobe_delay", reprobe_ps, "1s", "validation: the re-probe of the pair"),
    POST("validate_delay", validate_ps, "60s",
         "validation: flow-table dump and compare, counters and configuration of both ends"),
    {.name = "mitigate", .type = CFG_BOOL, .off = F(mitigate), .def = "true",
     .help = "isolate a correctly localized RNIC, host, rule or container (blacklist)"},
    {0},
};

static const cfg_key infer_keys[] = {
    POST("after", infer_after_ps, "600s", "series length before the skeleton is inferred"),
    POSI("stft_window", stft_win, "64", 4096, "STFT window (samples of 1 s)"),
    POSI("stft_hop", stft_hop, "32", 4096, "STFT hop (samples)"),
    POST("period_min", period_min_ps, "5s", "shortest iteration period searched for"),
    POST("period_max", period_max_ps, "120s", "longest iteration period searched for"),
    {.name = "size_tolerance", .type = CFG_FLOAT, .off = F(size_tol), .def = "0.125",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1,
     .help = "a cut's groups may differ from their mean size by this fraction (0.125: one "
             "endpoint off in groups of 8 or more; 0: exactly equal)"},
    {0},
};

static const char *const traffic_names[] = {"synthetic", "training", NULL};

/* The transformer of `traffic: training` (keys as the `training` model's
 * `model`), its schedule and the platform it runs on. */
static const cfg_key train_keys[] = {
    POSI("layers", t_layers, "48", 100000, "transformer layers"),
    POSI("hidden", t_hidden, "12288", 1 << 20, "hidden size"),
    POSI("heads", t_heads, "96", 100000, "attention heads"),
    {.name = "ffn", .type = CFG_INT, .off = F(t_ffn), .def = "0", .flags = CFG_MIN | CFG_MAX,
     .min = 0, .max = 1 << 22, .help = "MLP size (0: 4 x hidden)"},
    POSI("vocab", t_vocab, "51200", 1 << 24, "vocabulary"),
    POSI("seq", t_seq, "2048", 1 << 22, "sequence length"),
    POSI("micro_batch", t_mb, "4", 4096, "sequences per micro-batch"),
    POSI("micro_batches", t_mbs, "16", 100000, "micro-batches per iteration and replica"),
    {.name = "gpu_tflops", .type = CFG_FLOAT, .off = F(t_tflops), .def = "312",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "GPU peak (dense bf16)"},
    {.name = "efficiency", .type = CFG_FLOAT, .off = F(t_eff), .def = "0.5",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "achieved fraction of the peak"},
    {.name = "rnic", .type = CFG_RATE, .off = F(t_rnic_bps), .def = "200Gbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "RNIC rate (DP, EP and PP across hosts)"},
    {.name = "nvlink", .type = CFG_RATE, .off = F(t_nvlink_bps), .def = "2400Gbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "NVLink rate (TP)"},
    {.name = "gap", .type = CFG_TIME, .off = F(t_gap_ps), .def = "2s", .flags = CFG_MIN,
     .min = 0, .help = "iteration time without network traffic (step, data loading)"},
    {.name = "jitter", .type = CFG_TIME, .off = F(t_jitter_ps), .def = "0.3s", .flags = CFG_MIN,
     .min = 0, .help = "sigma of a replica's per-iteration lateness (at most `gap`)"},
    {0},
};

static const cfg_key churn_keys[] = {
    POST("create_median", create_median_ps, "60s", "median container creation delay"),
    {.name = "create_sigma", .type = CFG_FLOAT, .off = F(create_sigma), .def = "0.75",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 3, .help = "sigma of ln creation delay"},
    POST("life_median", life_median_ps, "3600s", "median task lifetime"),
    {.name = "life_sigma", .type = CFG_FLOAT, .off = F(life_sigma), .def = "0.975",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 3,
     .help = "sigma of ln lifetime (70% under 100 min)"},
    {0},
};

static const cfg_key fail_keys[] = {
    {.name = "rate_per_hour", .type = CFG_FLOAT, .off = F(fail_rate), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 10000,
     .help = "random failures per hour, cluster-wide"},
    {.name = "weights", .type = CFG_NODE, .off = F(weights), .def = "{}",
     .help = "weight per failure type (default 1 each of Table 1's, 0 the gray types)"},
    POST("mttr_software", mttr_ps[0], "300s", "mean time to repair: overlay/config"),
    POST("mttr_link", mttr_ps[1], "1800s", "mean time to repair: links, ports, switches"),
    POST("mttr_hardware", mttr_ps[2], "7200s", "mean time to repair: RNICs, host boards"),
    {.name = "scheduled", .type = CFG_NODE, .off = F(scheduled), .def = "[]",
     .help = "list of {at, type, component, duration}"},
    {.name = "file", .type = CFG_STR, .off = F(fail_file), .def = "\"\"",
     .help = "CSV at_s,type,component,duration_s (relative to the scenario)"},
    FRAC("loss", loss_p, "0.02", "packet loss of a CRC-error-like failure"),
    FRAC("flap_loss", flap_loss_p, "0.1", "packet loss of a flapping port"),
    POST("latency", latency_ps, "100us", "added RTT of a high-latency failure (Fig. 18: +104 us)"),
    POST("drift_ramp", drift_ramp_ps, "1800s",
         "slow_drift: the added RTT grows linearly to `latency` over this"),
    POST("flap_period", flap_period_ps, "30s", "link_flapping: one down spell every this"),
    POST("flap_down", flap_down_ps, "5s", "link_flapping: how long each down spell lasts"),
    POST("intermittent_episode", episode_ps, "5s",
         "rnic_intermittent: episodes of this length, each a stall with intermittent_duty"),
    FRAC("intermittent_duty", episode_duty, "0.2",
         "rnic_intermittent: share of its episodes the RNIC stalls in"),
    {0},
};

static const cfg_key sk_keys[] = {
    {.name = "experiment", .type = CFG_ENUM, .off = F(experiment), .def = "cluster",
     .choices = exp_names,
     .help = "cluster (detection), lists (Figs. 15-16) or packets (probes as packets)"},
    {.name = "net", .type = CFG_NODE, .off = F(net), .flags = CFG_OPTIONAL,
     .help = "packets: the packet network (the net model's keys: topology, transport, faults)"},
    POSI("servers", servers, "256", 100000, "servers (8 RNICs each: 256 = 2,048 RNICs)"),
    POSI("gpus_per_server", gpus, "8", 64, "GPUs = RNICs = rails per server"),
    POSI("servers_per_tor", per_tor, "32", 100000, "servers per segment (per rail ToR)"),
    POSI("aggs", aggs, "8", 1024, "aggregation switches"),
    POST("duration", duration_ps, "3600s", "simulated time of a cluster run"),
    POSI("runs", runs, "3", 100, "runs (seeds) per method"),
    {.name = "methods", .type = CFG_NODE, .off = F(methods), .def = "[skeleton]",
     .help = "skeleton, skeleton_noact, basic, fullmesh, rpingmesh, vote007, rpingmesh_pub"},
    {.name = "tasks", .type = CFG_NODE, .off = F(tasks), .def = "[]",
     .help = "explicit tasks {gpus, tp, pp, dp, ep, start, lifetime}; empty: churn"},
    {.name = "task_gpus", .type = CFG_NODE, .off = F(task_gpus), .def = "[]",
     .help = "churn: task sizes drawn from; [] = the paper's 128..2048 set, those that fit"},
    {.name = "trace_src", .type = CFG_STR, .off = F(trace_src), .def = "\"\"",
     .help = "endpoint (s{i}.g{j}) whose probes to trace_dst go to trace.csv"},
    {.name = "trace_dst", .type = CFG_STR, .off = F(trace_dst), .def = "\"\""},
    {.name = "list_rnics", .type = CFG_NODE, .off = F(list_rnics),
     .def = "[32, 64, 128, 256, 512, 1024, 2048]", .help = "lists: task sizes (RNICs)"},
    {.name = "controller_rate", .type = CFG_FLOAT, .off = F(ctl_rate), .def = "33.3",
     .flags = CFG_MIN_EXCL, .min = 0,
     .help = "lists: lists the controller hands out per second (~2,000 container events a "
             "minute, papers.md 1(b))"},
    {.name = "list_pp", .type = CFG_NODE, .off = F(list_pp), .def = "[]",
     .help = "lists: PP of each size (TP = gpus_per_server, DP the rest); [] = the default"},
    {.name = "probe", .type = CFG_MAPOF, .def = "{}", .sub = probe_keys, .help = "probes"},
    {.name = "detect", .type = CFG_MAPOF, .def = "{}", .sub = detect_keys, .help = "detection"},
    {.name = "localize", .type = CFG_MAPOF, .def = "{}", .sub = loc_keys, .help = "localization"},
    {.name = "infer", .type = CFG_MAPOF, .def = "{}", .sub = infer_keys,
     .help = "skeleton inference"},
    POST("traffic_period", traffic_period_ps, "30s",
         "traffic: synthetic: the jobs' iteration period (the inference must find it)"),
    {.name = "traffic", .type = CFG_ENUM, .off = F(traffic), .def = "synthetic",
     .choices = traffic_names,
     .help = "series the skeleton is inferred from: synthetic, or a training job's"},
    {.name = "training", .type = CFG_MAPOF, .def = "{}", .sub = train_keys,
     .help = "traffic: training: the job's model and platform"},
    {.name = "churn", .type = CFG_MAPOF, .def = "{}", .sub = churn_keys,
     .help = "container creation and task lifetime"},
    {.name = "failures", .type = CFG_MAPOF, .def = "{}", .sub = fail_keys,
     .help = "failure injection"},
    {0},
};

typedef struct task_b {
    int64_t gpus, tp, pp, dp, ep, start_ps, life_ps;
} task_b;

static const cfg_key task_keys[] = {
    {.name = "gpus", .type = CFG_INT, .off = offsetof(task_b, gpus), .flags = CFG_MIN | CFG_MAX,
     .min = 1, .max = 1 << 24},
    {.name = "tp", .type = CFG_INT, .off = offsetof(task_b, tp), .def = "8"},
    {.name = "pp", .type = CFG_INT, .off = offsetof(task_b, pp), .def = "1"},
    {.name = "dp", .type = CFG_INT, .off = offsetof(task_b, dp), .flags = CFG_OPTIONAL},
    {.name = "ep", .type = CFG_INT, .off = offsetof(task_b, ep), .def = "1"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(task_b, start_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0},
    {.name = "lifetime", .type = CFG_TIME, .off = offsetof(task_b, life_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "0s: to the end of the run"},
    {0},
};

typedef struct fault_b {
    int64_t at_ps, dur_ps;
    const char *type, *component;
} fault_b;

static const cfg_key fault_keys[] = {
    {.name = "at", .type = CFG_TIME, .off = offsetof(fault_b, at_ps), .flags = CFG_MIN, .min = 0},
    {.name = "type", .type = CFG_STR, .off = offsetof(fault_b, type), .help = "Table 1 type"},
    {.name = "component", .type = CFG_STR, .off = offsetof(fault_b, component),
     .help = "kind:name, e.g. rnic_rule:s0.g0, link:s0.g0-tor0.r0, switch:agg1, host:s3"},
    {.name = "duration", .type = CFG_TIME, .off = offsetof(fault_b, dur_ps), .def = "600s",
     .flags = CFG_MIN_EXCL, .min = 0},
    {0},
};



static int int_list(cfg_node *n, const char *path, const char *what, int lo, int **vals, int *cnt,
                    err *e)
{
    long m = cfg_expect_list(n, path, what, e);
    if (m < 0)
        return (int)m;
    *vals = calloc((size_t)m + 1, sizeof **vals);
    cfg_key k = {.name = "", .type = CFG_INT, .flags = CFG_MIN | CFG_MAX, .min = lo,
                 .max = 1 << 24};
    for (long i = 0; i < m; i++) {
        char ip[256];
        int64_t v;
        int r = cfg_value(cfg_at(n, (size_t)i), cfg_path_index(ip, sizeof ip, path, (size_t)i), &k,
                          &v, e);
        if (r)
            return r;
        (*vals)[i] = (int)v;
    }
    *cnt = (int)m;
    return 0;
}

/* With `traffic: training`, the job's model must fit the parallelism of
 * every task the run can hold (layers per stage, heads per TP rank). */
static int train_fits(sk_sim *s, const skel_par *par, const cfg_node *n, const char *path,
                      err *e)
{
    if (s->c.traffic != 1)
        return 0;
    err te = {0};
    if (!skel_train_prepare(&s->train, par, (int)s->c.gpus, &te))
        return 0;
    return cfg_err(e, AISIM_EINVAL, n, path,
                   "expected a task the training model fits (skeleton.training), found tp %d "
                   "pp %d dp %d ep %d: %s", par->tp, par->pp, par->dp, par->ep, te.msg);
}

static int sk_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
{
    sk_sim *s = st;
    sk_cfg *c = &s->c;
    s->env = *env;
    int r = cfg_bind(sec, path, sk_keys, c, e);
    if (r)
        return r;
    char p[256], q[256];
    s->p = (skel_params){
        .rtt_median_us = ps_us(c->rtt_median_ps), .rtt_sigma = c->rtt_sigma,
        .hop_us = ps_us(c->hop_ps), .spike_p = c->spike_p, .spike_mean_us = ps_us(c->spike_mean_ps),
        .probe_packets = (int)c->probe_packets, .sweep_packets = (int)c->sweep_packets,
        .timeouts = (int)c->timeouts, .rate = floor(c->rate), .loss_threshold = c->loss_threshold,
        .window_s = (int)fmax(1, ps_s(c->window_ps)), .lookback = (int)c->lookback,
        .lof_k = (int)c->lof_k, .lof_max = c->lof_max, .far_sd = c->far_sd,
        .floor_sd_us = ps_us(c->floor_sd_ps), .suspect_factor = c->suspect_factor,
        .suspect_abs_us = ps_us(c->suspect_abs_ps), .longterm_s = (int)fmax(1, ps_s(c->longterm_ps)),
        .z_alpha = c->z_alpha, .z_shift = c->z_shift, .holdoff_s = (int)ps_s(c->holdoff_ps),
        .lof_mode = c->lof_mode, .ztest = c->ztest, .confirm = c->confirm,
        .queue_us = ps_us(c->queue_ps), .rnic_gbps = (double)c->rnic_bps / 1e9,
        .agent_jitter_us = ps_us(c->jitter_ps), .probe_drop = c->drop_p,
        .baseline_drift = c->baseline_drift, .baseline_period_s = ps_s(c->baseline_period_ps),
        .vote_window_s = (int)ps_s(c->vote_window_ps), .validate_s = (int)ceil(ps_s(c->validate_ps)),
        .replay_s = (int)ceil(ps_s(c->replay_ps)), .sweep_s = (int)ceil(ps_s(c->sweep_ps)),
        .check_s = (int)ceil(ps_s(c->check_ps)), .reprobe_s = (int)ceil(ps_s(c->reprobe_ps)),
        .mitigate = c->mitigate,
        .infer_after_s = (int)fmax(1, ps_s(c->infer_after_ps)), .stft_win = (int)c->stft_win,
        .stft_hop = (int)c->stft_hop, .period_min_s = ps_s(c->period_min_ps),
        .period_max_s = ps_s(c->period_max_ps), .size_tol = c->size_tol,
        .create_median_s = ps_s(c->create_median_ps), .create_sigma = c->create_sigma,
        .life_median_s = ps_s(c->life_median_ps), .life_sigma = c->life_sigma,
        .loss_p = c->loss_p, .flap_loss_p = c->flap_loss_p, .latency_us = ps_us(c->latency_ps),
        .drift_ramp_s = ps_s(c->drift_ramp_ps),
        .flap_period_s = (int)fmax(1, ps_s(c->flap_period_ps)),
        .flap_down_s = (int)ceil(ps_s(c->flap_down_ps)),
        .episode_s = (int)fmax(1, ps_s(c->episode_ps)),
        .episode_duty = c->episode_duty};
    s->period_s = ps_s(c->traffic_period_ps);
    s->traffic = (skel_traffic){.ctx = &s->period_s, .series = skel_traffic_synth,
                                .period_s = s->period_s};
    if (c->traffic == 1) {
        s->train = (skel_train){
            .model = {.layers = (int)c->t_layers, .hidden = (int)c->t_hidden,
                      .heads = (int)c->t_heads,
                      .ffn = (int)(c->t_ffn ? c->t_ffn : 4 * c->t_hidden), .vocab = (int)c->t_vocab,
                      .seq = (int)c->t_seq, .micro_batch = (int)c->t_mb,
                      .gpu_flops = c->t_tflops * 1e12, .efficiency = c->t_eff,
                      .bytes_per_param = 2},
            .micro_batches = (int)c->t_mbs, .rnic_bps = (double)c->t_rnic_bps,
            .nvlink_bps = (double)c->t_nvlink_bps, .gap_s = ps_s(c->t_gap_ps),
            .jitter_s = ps_s(c->t_jitter_ps)};
        s->traffic = (skel_traffic){.ctx = &s->train, .series = skel_traffic_train,
                                    .period = skel_train_period};
    }
    if (s->p.stft_win > s->p.infer_after_s) {
        cfg_path(p, sizeof p, path, "infer");
        return cfg_err(e, AISIM_EINVAL, cfg_get(sec, "infer"), p,
                       "stft_window: expected at most the %d samples of `after`, found %d",
                       s->p.infer_after_s, s->p.stft_win);
    }
    if (c->per_tor > c->servers)
        c->per_tor = c->servers;
    if ((r = skel_fabric_init(&s->f, env->sim, (int)c->servers, (int)c->gpus, (int)c->per_tor,
                              (int)c->aggs, env->seed, e)))
        return r;
    int cluster_gpus = (int)(c->servers * c->gpus);
    /* methods */
    cfg_path(p, sizeof p, path, "methods");
    long nm = cfg_expect_list(c->methods, p, "detection methods", e);
    if (nm < 0)
        return (int)nm;
    cfg_key mk = {.name = "", .type = CFG_ENUM, .choices = skel_method_names};
    for (long i = 0; i < nm && i < SKEL_M_COUNT; i++) {
        int v;
        if ((r = cfg_value(cfg_at(c->methods, (size_t)i), cfg_path_index(q, sizeof q, p, (size_t)i),
                           &mk, &v, e)))
            return r;
        s->methods[s->nmethods++] = v;
    }
    /* tasks */
    cfg_path(p, sizeof p, path, "tasks");
    long nt = cfg_expect_list(c->tasks, p, "tasks", e);
    if (nt < 0)
        return (int)nt;
    s->tasks = calloc((size_t)nt + 1, sizeof *s->tasks);
    int used = 0;
    for (long i = 0; i < nt; i++) {
        task_b b = {.dp = -1};
        cfg_node *tn = cfg_at(c->tasks, (size_t)i);
        cfg_path_index(q, sizeof q, p, (size_t)i);
        if ((r = cfg_bind(tn, q, task_keys, &b, e)))
            return r;
        char gp[300];
        cfg_path(gp, sizeof gp, q, "gpus");
        if (b.gpus > cluster_gpus - used)
            return cfg_err(e, AISIM_EINVAL, cfg_get(tn, "gpus"), gp,
                           "expected at most the %d free GPUs of the cluster, found %lld",
                           cluster_gpus - used, (long long)b.gpus);
        if (b.gpus % c->gpus)
            return cfg_err(e, AISIM_EINVAL, cfg_get(tn, "gpus"), gp,
                           "expected a multiple of %lld (whole servers), found %lld",
                           (long long)c->gpus, (long long)b.gpus);
        if (b.dp < 0)
            b.dp = b.tp > 0 && b.pp > 0 ? b.gpus / (b.tp * b.pp) : 0;
        skel_par par = {(int)b.tp, (int)b.pp, (int)b.dp, (int)b.ep};
        const char *why = skel_par_check(&par, (int)b.gpus, (int)c->gpus);
        if (why)
            return cfg_err(e, AISIM_EINVAL, tn, q,
                           "expected a parallelism that divides the task (%s), found tp %d pp %d "
                           "dp %d ep %d for %lld GPUs",
                           why, par.tp, par.pp, par.dp, par.ep, (long long)b.gpus);
        if ((r = train_fits(s, &par, tn, q, e)))
            return r;
        used += (int)b.gpus;
        s->tasks[s->ntasks++] = (skel_task_spec){.gpus = (int)b.gpus, .par = par,
                                                 .start_s = (int64_t)ps_s(b.start_ps),
                                                 .life_s = (int64_t)ps_s(b.life_ps)};
    }
    cfg_path(p, sizeof p, path, "task_gpus");
    if ((r = int_list(c->task_gpus, p, "task sizes in GPUs", 1, &s->task_gpus, &s->ntask_gpus, e)))
        return r;
    if (!s->ntask_gpus) {
        /* Fig. 12's spikes, those that fit the cluster (and a debug size) */
        static const int paper[] = {128, 256, 512, 640, 720, 1024, 1280, 1600, 1800, 2000, 2048};
        s->task_gpus = realloc(s->task_gpus, sizeof paper + sizeof(int));
        for (size_t i = 0; i < sizeof paper / sizeof *paper; i++)
            if (paper[i] <= cluster_gpus && paper[i] % c->gpus == 0)
                s->task_gpus[s->ntask_gpus++] = paper[i];
        if (!s->ntask_gpus)
            s->task_gpus[s->ntask_gpus++] = cluster_gpus;
    }
    for (int i = 0; i < s->ntask_gpus; i++) {
        if (s->task_gpus[i] % c->gpus || (!s->ntasks && s->task_gpus[i] > cluster_gpus))
            return cfg_err(e, AISIM_EINVAL, cfg_at(c->task_gpus, (size_t)i),
                           cfg_path_index(q, sizeof q, p, (size_t)i),
                           "expected a multiple of %lld up to the cluster's %d GPUs, found %d",
                           (long long)c->gpus, cluster_gpus, s->task_gpus[i]);
        skel_par dp = skel_par_default(s->task_gpus[i], (int)c->gpus);
        bool given = cfg_len(c->task_gpus) > (size_t)i;
        if (!s->ntasks && (r = train_fits(s, &dp, given ? cfg_at(c->task_gpus, (size_t)i) : sec,
                                          given ? cfg_path_index(q, sizeof q, p, (size_t)i) : path,
                                          e)))
            return r;
    }
    cfg_path(p, sizeof p, path, "list_rnics");
    if ((r = int_list(c->list_rnics, p, "task sizes in RNICs", (int)c->gpus, &s->list_rnics,
                      &s->nlist, e)))
        return r;
    for (int i = 0; i < s->nlist; i++) {
        if (s->list_rnics[i] % c->gpus ||
            (c->experiment == EXP_LISTS && s->list_rnics[i] > cluster_gpus))
            return cfg_err(e, AISIM_EINVAL, cfg_at(c->list_rnics, (size_t)i),
                           cfg_path_index(q, sizeof q, p, (size_t)i),
                           "expected a multiple of %lld up to the cluster's %d RNICs, found %d",
                           (long long)c->gpus, cluster_gpus, s->list_rnics[i]);
    }
    /* the parallelism of each size: given PP, or the default */
    char pp_path[256];
    cfg_path(pp_path, sizeof pp_path, path, "list_pp");
    if ((r = int_list(c->list_pp, pp_path, "pipeline stages per task size", 1, &s->list_pp,
                      &s->nlist_pp, e)))
        return r;
    if (s->nlist_pp && s->nlist_pp != s->nlist)
        return cfg_err(e, AISIM_EINVAL, c->list_pp, pp_path,
                       "expected one PP per list_rnics size (%d), found %d", s->nlist,
                       s->nlist_pp);
    s->list_par = calloc((size_t)s->nlist + 1, sizeof *s->list_par);
    for (int i = 0; i < s->nlist; i++) {
        skel_par lp = skel_par_default(s->list_rnics[i], (int)c->gpus);
        const cfg_node *at = cfg_at(c->list_rnics, (size_t)i);
        cfg_path_index(q, sizeof q, p, (size_t)i);
        if (s->nlist_pp) {
            int pp = s->list_pp[i], tp = (int)c->gpus;
            at = cfg_at(c->list_pp, (size_t)i);
            cfg_path_index(q, sizeof q, pp_path, (size_t)i);
            lp = (skel_par){.tp = tp, .pp = pp, .dp = s->list_rnics[i] / (tp * pp), .ep = 1};
            if (s->list_rnics[i] % (tp * pp) || skel_par_check(&lp, s->list_rnics[i], tp))
                return cfg_err(e, AISIM_EINVAL, at, q,
                               "expected a PP such that TP x PP (TP %d) divides the task's %d "
                               "RNICs, found %d",
                               tp, s->list_rnics[i], pp);
        }
        if (c->experiment == EXP_LISTS && (r = train_fits(s, &lp, at, q, e)))
            return r;
        s->list_par[i] = lp;
    }
    /* failures */
    char fp[256];
    cfg_path(fp, sizeof fp, path, "failures");
    cfg_node *fsec = cfg_get(sec, "failures");
    if (s->p.flap_down_s >= s->p.flap_period_s)
        return cfg_err(e, AISIM_EINVAL, cfg_get(fsec, "flap_down"),
                       cfg_path(p, sizeof p, fp, "flap_down"),
                       "expected a down spell shorter than flap_period (%d s), found %d s",
                       s->p.flap_period_s, s->p.flap_down_s);
    for (int i = 0; i < SKEL_NFTYPES; i++)
        s->weight[i] = i < SKEL_NTABLE1;   /* the gray types only when weighted */
    cfg_path(p, sizeof p, fp, "weights");
    if (cfg_kind(c->weights) != CFG_MAP && !cfg_is_null(c->weights))
        return cfg_err(e, AISIM_EINVAL, c->weights, p, "expected a map type: weight, found %s",
                       cfg_describe(c->weights, q, sizeof q));
    if (cfg_kind(c->weights) == CFG_MAP) {
        cfg_key wk = {.name = "", .type = CFG_FLOAT, .flags = CFG_MIN, .min = 0};
        for (size_t i = 0; i < cfg_len(c->weights); i++) {
            const char *k = cfg_key_at(c->weights, i);
            int ty = skel_ftype_find(k);
            cfg_path(q, sizeof q, p, k);
            if (ty < 0)
                return cfg_err(e, AISIM_EINVAL, cfg_at(c->weights, i), q,
                               "expected a Table 1 failure type as key, found %s",
                               cfg_quote(k, fp, sizeof fp));
            if ((r = cfg_value(cfg_at(c->weights, i), q, &wk, &s->weight[ty], e)))
                return r;
        }
    }
    cfg_path(p, sizeof p, fp, "scheduled");
    long ns = cfg_expect_list(c->scheduled, p, "scheduled failures", e);
    if (ns < 0)
        return (int)ns;
    for (long i = 0; i < ns; i++) {
        fault_b b = {0};
        cfg_node *fn = cfg_at(c->scheduled, (size_t)i);
        cfg_path_index(q, sizeof q, p, (size_t)i);
        if ((r = cfg_bind(fn, q, fault_keys, &b, e)))
            return r;
        char kp[300];
        if (skel_ftype_find(b.type) < 0)
            return skel_add_fault(s, b.type, b.component, 0, 1, cfg_get(fn, "type"),
                             cfg_path(kp, sizeof kp, q, "type"), NULL, e);
        if ((r = skel_add_fault(s, b.type, b.component, ps_s(b.at_ps), ps_s(b.dur_ps),
                           cfg_get(fn, "component"), cfg_path(kp, sizeof kp, q, "component"), NULL,
                           e)))
            return r;
    }
    if (c->fail_file[0] &&
        (r = skel_load_fault_file(s, cfg_get(fsec, "file"), cfg_path(p, sizeof p, fp, "file"),
                                  e)))
        return r;
    /* trace pair */
    int ts = -1, td = -1;
    if (c->trace_src[0] || c->trace_dst[0]) {
        const char *names[2] = {c->trace_src, c->trace_dst};
        int *ids[2] = {&ts, &td};
        for (int k = 0; k < 2; k++) {
            int node = topo_find_node(s->f.t, names[k]);
            *ids[k] = node >= 0 ? topo_node_host(s->f.t, node) : -1;
            if (*ids[k] < 0)
                return cfg_err(e, AISIM_EINVAL, cfg_get(sec, k ? "trace_dst" : "trace_src"),
                               cfg_path(p, sizeof p, path, k ? "trace_dst" : "trace_src"),
                               "expected an endpoint s{server}.g{gpu}, found %s",
                               cfg_quote(names[k], q, sizeof q));
        }
    }
    s->stop_s = (int64_t)ps_s(c->duration_ps);
    s->w = (skel_world){.f = &s->f, .p = &s->p, .traffic = &s->traffic, .tasks = s->tasks,
                        .ntasks = s->ntasks, .task_gpus = s->task_gpus,
                        .ntask_gpus = s->ntask_gpus, .churn = s->ntasks == 0,
                        .faults = s->faults, .nfaults = s->nfaults, .fail_rate_per_h = c->fail_rate,
                        .type_weight = s->weight,
                        .mttr_s = {(int64_t)ps_s(c->mttr_ps[0]), (int64_t)ps_s(c->mttr_ps[1]),
                                   (int64_t)ps_s(c->mttr_ps[2])},
                        .stop_s = s->stop_s, .trace_src = ts, .trace_dst = td};
    if (c->experiment == EXP_PACKETS) {
        if (!c->net)
            return cfg_err(e, AISIM_EINVAL, sec, cfg_path(p, sizeof p, path, "net"),
                           "expected the packet network of experiment packets ({topology, "
                           "transport, faults}), found nothing");
        return skel_pktexp_configure(&s->pk, c->net, cfg_path(p, sizeof p, path, "net"), env,
                                     (int)c->servers, (int)c->gpus, (int)c->per_tor,
                                     (int)s->stop_s, e);
    }
    return 0;
}

/* ---- running ---------------------------------------------------------------- */

static void tick(sim *sm, void *obj, uint64_t arg)
{
    (void)arg;
    sk_sim *s = obj;
    int n = s->nmethods * (int)s->c.runs;
    for (int i = 0; i < n; i++) {
        if (sim_poll(sm, 1))    /* a signal: the engine stops, the runner discards the run */
            return;
        skel_run_step(s->run[i], s->t);
    }
    s->t++;
    if (s->t < s->stop_s) {
        sim_schedule(sm, sim_now(sm) + PS_PER_S, tick, s, 0);
    } else {
        for (int i = 0; i < n && !sim_poll(sm, 1); i++)
            skel_run_finish(s->run[i]);
        s->done = true;
        sim_stop(sm);
    }
}

static int sk_start(void *st, sim *sm, err *e)
{
    (void)e;
    sk_sim *s = st;
    if (s->c.experiment == EXP_LISTS) {
        skel_lists_start(s, sm);
        return 0;
    }
    if (s->c.experiment == EXP_PACKETS) {
        skel_pktexp_start(&s->pk);
        return 0;
    }
    int n = s->nmethods * (int)s->c.runs;
    s->run = calloc((size_t)n, sizeof *s->run);
    for (int m = 0; m < s->nmethods; m++)
        for (int k = 0; k < s->c.runs; k++)
            s->run[m * s->c.runs + k] =
                skel_run_create(&s->w, s->methods[m], s->env.seed + (uint64_t)k);
    sim_schedule(sm, sim_now(sm), tick, s, 0);
    return 0;
}

static double sk_progress(const void *st, const sim *sm)
{
    const sk_sim *s = st;
    if (s->c.experiment == EXP_PACKETS)
        return s->stop_s ? fmin(1, ps_s(sim_now(sm)) / (double)s->stop_s) : 0;
    return s->done ? 1.0 : s->stop_s ? (double)s->t / (double)s->stop_s : 0;
}

/* ---- reporting ---------------------------------------------------------------- */

/* Mean and 95% half-width of v[0..n) ignoring NaN. */
static void mean_ci(const double *v, int n, double *mean, double *hw)
{
    double s = 0, sq = 0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            s += v[i];
            m++;
        }
    *mean = m ? s / m : NAN;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]))
            sq += (v[i] - *mean) * (v[i] - *mean);
    *hw = m > 1 ? stat_t975(m - 1) * sqrt(sq / (m - 1)) / sqrt((double)m) : NAN;
}

void skel_csv_num(FILE *f, double v, bool last)
{
    char b[40];
    if (isfinite(v))
        out_fmt_double(b, sizeof b, v);
    else
        b[0] = '\0';
    fprintf(f, "%s%s", b, last ? "\n" : ",");
}

enum { Q_PREC, Q_REC, Q_LOC, Q_DDET, Q_DMED, Q_DLOC, Q_ALARMS, Q_FP, Q_FPSTART, Q_PROBES, Q_TARGETS,
       Q_RELEVANT, Q_INFER, Q_IPREC, Q_INC, Q_DTOT, Q_APROBES, Q_ASTATE, Q_N };
static const char *const q_names[Q_N] = {
    "precision", "recall", "localization_accuracy", "detect_delay_s", "detect_delay_median_s",
    "localize_delay_s",
    "alarms", "false_alarms", "startup_false_alarms", "probes_per_s", "targets_per_endpoint",
    "relevant_failures", "skeleton_exact_share", "incident_precision", "incidents",
    "detect_localize_delay_s", "agent_probes_per_s", "agent_state_kb"};

static void quantities(const sk_sim *s, const skel_result *r, double *q)
{
    q[Q_PREC] = r->precision;
    q[Q_REC] = r->recall;
    q[Q_LOC] = r->loc_accuracy;
    q[Q_DDET] = r->detect_delay_s;
    q[Q_DMED] = r->detect_delay_median_s;
    q[Q_DLOC] = r->loc_delay_s;
    q[Q_ALARMS] = (double)r->alarms;
    q[Q_FP] = (double)r->fp;
    q[Q_FPSTART] = (double)r->fp_startup;
    q[Q_PROBES] = (double)r->probes / (double)(s->stop_s ? s->stop_s : 1);
    q[Q_TARGETS] = r->targets_mean;
    q[Q_RELEVANT] = (double)r->relevant;
    q[Q_INFER] = r->inferred ? (double)r->inferred_exact / (double)r->inferred : NAN;
    q[Q_IPREC] = r->incident_precision;
    q[Q_INC] = (double)r->incidents;
    q[Q_DTOT] = r->total_delay_s;
    /* agent cost (Fig. 17): probes an agent sends per second it probes
     * (retries, re-probes and localization sweeps included), and the state
     * of its list */
    q[Q_APROBES] = r->agent_seconds ? (double)r->probes / (double)r->agent_seconds : NAN;
    q[Q_ASTATE] = r->targets_mean * (double)skel_agent_target_bytes(&s->p) / 1024;
}

static int report_cluster(sk_sim *s, out *o, json_t *sum, err *e)
{
    int R = (int)s->c.runs;
    FILE *fm = out_file(o, "methods.csv", e), *fr = out_file(o, "runs.csv", e),
         *ft = out_file(o, "per_type.csv", e), *fg = out_file(o, "ground_truth.csv", e),
         *fa = out_file(o, "alarms.csv", e);
    if (!fm || !fr || !ft || !fg || !fa)
        return e->code;
    fprintf(fm, "method,runs");
    for (int k = 0; k < Q_N; k++)
        fprintf(fm, ",%s,%s_ci95", q_names[k], q_names[k]);
    fprintf(fm, ",paper_precision,paper_recall,paper_localization_accuracy,paper_delay_s\n");
    fprintf(fr, "method,run,seed");
    for (int k = 0; k < Q_N; k++)
        fprintf(fr, ",%s", q_names[k]);
    fprintf(fr, "\n");
    fprintf(ft, "method,type,class,symptom,relevant,detected,localized_ok\n");
    json_t *jm = json_object();
    static const char *const sym[] = {"unreachable", "loss", "high_latency"};
    for (int m = 0; m < s->nmethods; m++) {
        double q[Q_N][100];
        uint64_t rel[SKEL_NFTYPES] = {0}, det[SKEL_NFTYPES] = {0}, lok[SKEL_NFTYPES] = {0};
        for (int k = 0; k < R; k++) {
            skel_run *run = s->run[m * R + k];
            skel_result res;
            skel_run_result(run, &res);
            double v[Q_N];
            quantities(s, &res, v);
            fprintf(fr, "%s,%d,%llu,", skel_method_names[s->methods[m]], k,
                    (unsigned long long)(s->env.seed + (uint64_t)k));
            for (int x = 0; x < Q_N; x++) {
                q[x][k] = v[x];
                skel_csv_num(fr, v[x], x == Q_N - 1);
            }
            for (int ty = 0; ty < SKEL_NFTYPES; ty++) {
                rel[ty] += res.per_type_relevant[ty];
                det[ty] += res.per_type_detected[ty];
                lok[ty] += res.per_type_loc_ok[ty];
            }
            skel_run_write_truth(run, fg, m == 0 && k == 0, k);
            skel_run_write_alarms(run, fa, m == 0 && k == 0, k);
        }
        const char *mn = skel_method_names[s->methods[m]];
        fprintf(fm, "%s,%d,", mn, R);
        json_t *jo = json_object();
        for (int x = 0; x < Q_N; x++) {
            double mean, hw;
            mean_ci(q[x], R, &mean, &hw);
            skel_csv_num(fm, mean, false);
            skel_csv_num(fm, hw, false);
            json_t *jq = json_object();
            out_json_num(jq, "mean", mean);
            out_json_num(jq, "ci95", hw);
            json_object_set_new(jo, q_names[x], jq);
        }
        bool paper = s->methods[m] == SKEL_M_SKELETON;
        fprintf(fm, paper ? "0.982,0.993,0.957,8\n" : ",,,\n");
        json_object_set_new(jm, mn, jo);
        for (int ty = 0; ty < SKEL_NFTYPES; ty++)
            fprintf(ft, "%s,%s,%s,%s,%llu,%llu,%llu\n", mn, skel_ftypes[ty].name,
                    skel_class_names[skel_ftypes[ty].cls], sym[skel_ftypes[ty].symptom],
                    (unsigned long long)rel[ty], (unsigned long long)det[ty],
                    (unsigned long long)lok[ty]);
    }
    json_object_set_new(sum, "methods", jm);
    json_object_set_new(sum, "rnics", json_integer(s->f.neps));
    out_json_num(sum, "duration_s", (double)s->stop_s);
    json_object_set_new(sum, "runs", json_integer(R));
    if (s->w.trace_src >= 0) {
        FILE *tf = out_file(o, "trace.csv", e);
        if (!tf)
            return e->code;
        skel_run_write_trace(s->run[0], tf, true);
    }
    return 0;
}

static int sk_report(void *st, const sim *sm, out *o, json_t *sum, err *e)
{
    (void)sm;
    sk_sim *s = st;
    json_object_set_new(sum, "experiment", json_string(exp_names[s->c.experiment]));
    if (s->c.experiment == EXP_PACKETS)
        return skel_pktexp_report(&s->pk, o, sum, e);
    return s->c.experiment == EXP_LISTS ? skel_lists_report(s, o, sum, e) : report_cluster(s, o, sum, e);
}

static void sk_fini(void *st)
{
    sk_sim *s = st;
    if (s->run)
        for (int i = 0; i < s->nmethods * (int)s->c.runs; i++)
            skel_run_destroy(s->run[i]);
    free(s->run);
    free(s->lrows);
    skel_fabric_fini(&s->f);
    skel_train_fini(&s->train);
    if (s->pk.n)
        skel_pktexp_fini(&s->pk);
    free(s->tasks);
    free(s->task_gpus);
    free(s->faults);
    free(s->list_rnics);
    free(s->list_pp);
    free(s->list_par);
}

static const plot_spec sk_plots[] = {
    {.csv = "lists.csv", .x = "rnics", .y = "full_pairs,basic_pairs,skeleton_pairs",
     .title = "Probe-list size (Fig. 15)", .out = "lists", .xlabel = "RNICs",
     .ylabel = "probe pairs", .logx = 1},
    {.csv = "trace.csv", .x = "t_s", .y = "latency_us", .title = "Probe latency of the traced pair (Fig. 18)",
     .out = "trace", .xlabel = "time (s)", .ylabel = "latency (us)"},
    {0},
};

/* What `aisim run` prints first (model.h). */
static const model_headline sk_headlines[] = {
    {"experiment", "experiment", NULL, 0},
    {"methods.*.precision.mean", "precision", "%", 0},
    {"methods.*.recall.mean", "recall", "%", 0},
    {"methods.*.localization_accuracy.mean", "localisation", "%", 0},
    {"methods.*.detect_delay_s.mean", "detection delay", "s", 0},
    {"methods.*.false_alarms.mean", "false alarms", "", 0},
    {"runs", "runs (mean over)", "", 0},
    {"lists.*.rnics", "RNICs", "", 0},
    {"lists.*.full_pairs", "full mesh pairs", "", 0},
    {"lists.*.skeleton_pairs", "skeleton pairs", "", 0},
    {"lists.*.skeleton_exact", "exact", NULL, 0},
    {"packets.probes", "probes", "", 0},
    {"packets.anomalous", "anomalous probes", "", 0},
    {"packets.first_anomaly_s", "first anomaly", "s", 0},
    {"packets.localized_port", "localised port", NULL, 0},
    MODEL_HEADLINES_NETWORK,
    {NULL, NULL, NULL, 0},
};

const model_ops skeleton_model_ops = {
    .name = "skeleton",
    .summary = "SkeletonHunter: failure detection and localization in containerized LLM training",
    .state_size = sizeof(sk_sim),
    .configure = sk_configure,
    .start = sk_start,
    .progress = sk_progress,
    .report = sk_report,
    .fini = sk_fini,
    .plots = sk_plots,
    .headlines = sk_headlines,
};
