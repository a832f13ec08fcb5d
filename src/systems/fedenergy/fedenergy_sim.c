/*
 * fedenergy_sim.c - simulator glue of energy-efficient federated learning
 * (`model: fedenergy`): binds the scenario, loads and partitions the data,
 * draws the devices' hardware, and runs every method (fe_method_names) as
 * its own sequence of rounds on the shared clock; optionally solves the
 * offline comparators of the online runs with GLPK (per-round plan, the
 * whole-horizon plan and the best fixed plan on the same error
 * coefficients, and the best uniform tau that runs its own training) to
 * report regret beside the bounds of fedenergy.h.
 *
 * Events per method: round start (decide, train, aggregate: fe_fed.c) and
 * round end, the slowest received device's download + compute + upload time
 * (or the deadline) later.  Methods are independent, so their rounds
 * interleave on the clock without interacting; the run stops when every
 * method has done `rounds` rounds.
 *
 * Outputs: rounds.csv (per method and round: time, iterations, energy by
 * kind, accuracy, loss, error proxy, virtual queue, participants, dropped
 * updates), devices.csv, and in summary.json per method: energy, final
 * accuracy and loss, energy saved and accuracy difference against FedAvg,
 * rounds, energy and simulated time to the target accuracy.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/dist.h"
#include "aisim/model.h"
#include "aisim/rng.h"
#include "aisim/units.h"
#include "systems/fedenergy/fe_data.h"
#include "systems/fedenergy/fe_fed.h"
#include "systems/fedenergy/fe_model.h"
#include "systems/fedenergy/fedenergy.h"

static const char *const dataset_names[] = {"digits", "mnist", NULL};
static const char *const arch_names[] = {"logistic", "mlp", "cnn", NULL};
static const char *const part_names[] = {"iid", "dirichlet", "shards", NULL};
static const char *const energy_names[] = {"cpu", "power", NULL};
static const char *const vscale_names[] = {"constant", "sqrt_rounds", NULL};

/* Device-file columns, in the order of fe_sim.devcol[]. */
enum { DC_CPU_HZ, DC_CYCLES, DC_TX_W, DC_BW, DC_BUSY_W, DC_STEP_S, DC_RX_W, DC_DOWN_BPS,
       DC_IDLE_W, DC_COUNT };
static const char *const devcol_names[DC_COUNT] = {
    "cpu_hz", "cycles_per_sample", "tx_power_w", "bandwidth_bps", "busy_power_w",
    "step_time_s", "rx_power_w", "downlink_bps", "idle_power_w"};

typedef struct fe_cfg {
    int dataset;                /* 0 digits, 1 mnist */
    const char *data;           /* digits CSV path */
    const char *images;         /* MNIST IDX images path */
    const char *labels;         /* MNIST IDX labels path */
    int64_t test_samples;       /* held-out test set size */
    int64_t train_samples;      /* training samples used (0: the rest) */
    int arch;                   /* enum fe_arch_kind */
    int64_t hidden;             /* MLP hidden units */
    int64_t filters;            /* CNN convolution filters */
    int64_t kernel;             /* CNN kernel side */
    int64_t devices;            /* N */
    double participation;       /* fraction of devices per round */
    int partition;              /* enum fe_partition */
    double alpha;               /* Dirichlet concentration */
    int64_t shards_per_device;  /* label shards per device */
    int64_t rounds;             /* rounds per method */
    int64_t local_iters;        /* E */
    int64_t reduced_iters;      /* fixed / fixed_scaled / fednova / gel iterations */
    int64_t batch;              /* mini-batch size */
    double lr;                  /* SGD step size */
    double l2;                  /* weight decay */
    double target_accuracy;     /* for rounds / energy to target */
    double prox_mu;             /* fedprox proximal weight */
    double cc_budget;           /* ccfedavg compute budget, fraction of the mean device's */
    int64_t deadline_ps;        /* round deadline; 0: none */
    double availability;        /* probability a device is available in a round */
    const char *avail_file;     /* availability trace (device, from_round, to_round) */
    double straggler_prob;      /* probability a participant is slowed down */
    double straggler_slowdown;  /* its compute-time factor */
    double dropout_prob;        /* probability a participant fails before uploading */
    /* controller */
    double v;                   /* V */
    double budget;              /* epsilon */
    double queue_init;          /* Q_1 */
    double rho_floor;           /* lower clip of rho */
    int64_t warmup_rounds;      /* rounds at E before the controller acts */
    double pd_eta_primal;       /* online_pd primal step x sqrt(rounds) */
    double pd_eta_dual;         /* online_pd dual step x sqrt(rounds) */
    int v_scale;                /* 0: V as given; 1: V * sqrt(rounds) */
    /* energy */
    int energy_model;           /* 0 cpu (kappa c f^2), 1 power (P_busy t_step) */
    cfg_node *busy_power;       /* distribution, W (power model) */
    cfg_node *step_time;        /* distribution, time per step (power model) */
    const char *device_file;    /* per-device values overriding the distributions */
    double kappa;               /* effective switched capacitance, J s^2 / cycle^3 */
    cfg_node *cpu_hz;           /* distribution, Hz */
    cfg_node *cycles;           /* distribution, CPU cycles per sample */
    cfg_node *tx_power;         /* distribution, W */
    cfg_node *bandwidth;        /* distribution, bit/s */
    cfg_node *rx_power;         /* distribution, W */
    cfg_node *downlink;         /* distribution, bit/s */
    cfg_node *idle_power;       /* distribution, W */
    int64_t model_bytes;        /* upload size; 0: 4 bytes per parameter */
    /* offline optimum */
    bool offline;               /* solve the MILP after the run */
    bool own_training;          /* also run the own-training comparator (E runs) */
    int64_t offline_max_vars;   /* skip it above this many binaries */
    double offline_gap;         /* relative MIP gap */
} fe_cfg;

#define F(x) offsetof(fe_cfg, x)

static const cfg_key ctl_keys[] = {
    {.name = "v", .type = CFG_FLOAT, .off = F(v), .def = "20", .flags = CFG_MIN | CFG_MIN_EXCL,
     .min = 0, .help = "drift-plus-penalty weight V of energy against the error queue (> 0)"},
    {.name = "budget", .type = CFG_FLOAT, .off = F(budget), .def = "3", .flags = CFG_MIN,
     .min = 0, .help = "epsilon: long-run mean excess of FedNova's noise term A over FedAvg's "
     "per round (3: every device at E/4 steps)"},
    {.name = "queue_init", .type = CFG_FLOAT, .off = F(queue_init), .def = "1",
     .flags = CFG_MIN, .min = 0, .help = "initial virtual queue Q_1"},
    {.name = "rho_floor", .type = CFG_FLOAT, .off = F(rho_floor), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1,
     .help = "lower clip of the stability score rho in the update scaling (1: E / tau, "
             "FedNova's normalisation)"},
    {.name = "warmup_rounds", .type = CFG_INT, .off = F(warmup_rounds), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1e6,
     .help = "rounds at the full E before the controllers act"},
    {.name = "pd_eta_primal", .type = CFG_FLOAT, .off = F(pd_eta_primal), .def = "1",
     .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0,
     .help = "online_pd: primal step size times sqrt(rounds)"},
    {.name = "pd_eta_dual", .type = CFG_FLOAT, .off = F(pd_eta_dual), .def = "10",
     .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0,
     .help = "online_pd: dual step size times sqrt(rounds)"},
    {.name = "v_scale", .type = CFG_ENUM, .off = F(v_scale), .def = "constant",
     .choices = vscale_names,
     .help = "constant: V = v; sqrt_rounds: V = v * sqrt(rounds), the O(sqrt T) regret tuning"},
    {0},
};

static const cfg_key energy_keys[] = {
    {.name = "model", .type = CFG_ENUM, .off = F(energy_model), .def = "cpu",
     .choices = energy_names,
     .help = "cpu: step energy kappa*cycles*batch*f^2; power: busy_power_w * step_time"},
    {.name = "kappa", .type = CFG_FLOAT, .off = F(kappa), .def = "1e-28",
     .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0,
     .help = "effective switched capacitance: step energy = kappa * cycles * batch * f^2"},
    {.name = "cpu_hz", .type = CFG_NODE, .off = F(cpu_hz),
     .def = "{dist: uniform, min: 0.5e9, max: 2e9}", .help = "device CPU frequency, Hz"},
    {.name = "cycles_per_sample", .type = CFG_NODE, .off = F(cycles),
     .def = "{dist: uniform, min: 1e4, max: 1e5}",
     .help = "CPU cycles per sample per step (papers.md 5(e): 1e4-1e5)"},
    {.name = "busy_power_w", .type = CFG_NODE, .off = F(busy_power),
     .def = "{dist: uniform, min: 3, max: 12}", .help = "power while training, W (power model)"},
    {.name = "step_time", .type = CFG_NODE, .off = F(step_time),
     .def = "{dist: uniform, min: 5ms, max: 40ms}",
     .help = "time per local step (power model)"},
    {.name = "tx_power_w", .type = CFG_NODE, .off = F(tx_power),
     .def = "{dist: uniform, min: 0.2, max: 1}", .help = "transmit power, W"},
    {.name = "bandwidth_bps", .type = CFG_NODE, .off = F(bandwidth),
     .def = "{dist: uniform, min: 1e6, max: 20e6}", .help = "uplink rate, bit/s"},
    {.name = "rx_power_w", .type = CFG_NODE, .off = F(rx_power),
     .def = "{dist: uniform, min: 0.1, max: 0.5}", .help = "receive power while downloading, W"},
    {.name = "downlink_bps", .type = CFG_NODE, .off = F(downlink),
     .def = "{dist: uniform, min: 5e6, max: 50e6}", .help = "downlink rate, bit/s"},
    {.name = "idle_power_w", .type = CFG_NODE, .off = F(idle_power),
     .def = "{dist: uniform, min: 0.05, max: 0.2}",
     .help = "power while waiting for the round to end, W"},
    {.name = "model_size", .type = CFG_SIZE, .off = F(model_bytes), .def = "0B",
     .flags = CFG_MIN, .min = 0, .help = "upload size (0B: 4 bytes per model parameter)"},
    {0},
};

static const cfg_key fe_keys[] = {
    {.name = "dataset", .type = CFG_ENUM, .off = F(dataset), .def = "digits",
     .choices = dataset_names, .help = "digits (8x8 CSV) or mnist (28x28 gzip'd IDX)"},
    {.name = "data", .type = CFG_STR, .off = F(data), .flags = CFG_OPTIONAL,
     .help = "digits CSV file, relative to the scenario file"},
    {.name = "images", .type = CFG_STR, .off = F(images), .flags = CFG_OPTIONAL,
     .help = "MNIST IDX image file (.gz), relative to the scenario file"},
    {.name = "labels", .type = CFG_STR, .off = F(labels), .flags = CFG_OPTIONAL,
     .help = "MNIST IDX label file (.gz), relative to the scenario file"},
    {.name = "test_samples", .type = CFG_INT, .off = F(test_samples), .def = "360",
     .flags = CFG_MIN, .min = 1, .help = "held-out test samples"},
    {.name = "train_samples", .type = CFG_INT, .off = F(train_samples), .def = "0",
     .flags = CFG_MIN, .min = 0, .help = "training samples used (0: all the rest)"},
    {.name = "arch", .type = CFG_ENUM, .off = F(arch), .def = "logistic", .choices = arch_names,
     .help = "logistic (softmax regression), mlp (one ReLU hidden layer) or cnn (one "
             "convolution layer, ReLU, 2x2 average pooling, softmax)"},
    {.name = "filters", .type = CFG_INT, .off = F(filters), .def = "8",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 256, .help = "CNN convolution filters"},
    {.name = "kernel", .type = CFG_INT, .off = F(kernel), .def = "5",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 64,
     .help = "CNN kernel side k; image side - k + 1 must be even"},
    {.name = "hidden", .type = CFG_INT, .off = F(hidden), .def = "32",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 4096, .help = "MLP hidden units"},
    {.name = "devices", .type = CFG_INT, .off = F(devices), .def = "20",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 100000, .help = "number of devices N"},
    {.name = "participation", .type = CFG_FLOAT, .off = F(participation), .def = "1",
     .flags = CFG_MIN | CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "fraction of devices sampled to take part in each round, (0, 1]"},
    {.name = "partition", .type = CFG_ENUM, .off = F(partition), .def = "iid",
     .choices = part_names, .help = "iid, dirichlet (label skew by alpha) or shards"},
    {.name = "alpha", .type = CFG_FLOAT, .off = F(alpha), .def = "0.5",
     .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0,
     .help = "Dirichlet concentration (> 0; smaller = more skewed)"},
    {.name = "shards_per_device", .type = CFG_INT, .off = F(shards_per_device), .def = "2",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000, .help = "label shards per device"},
    {.name = "rounds", .type = CFG_INT, .off = F(rounds), .def = "100",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e6, .help = "rounds per method"},
    {.name = "local_iters", .type = CFG_INT, .off = F(local_iters), .def = "20",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 10000,
     .help = "E: FedAvg's local SGD iterations per round (>= 1)"},
    {.name = "reduced_iters", .type = CFG_INT, .off = F(reduced_iters), .def = "0",
     .flags = CFG_MIN, .min = 0,
     .help = "iterations of fixed and fixed_scaled, the mean of fednova and gel (0: half of "
             "local_iters)"},
    {.name = "batch", .type = CFG_INT, .off = F(batch), .def = "16",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e6, .help = "mini-batch size"},
    {.name = "learning_rate", .type = CFG_FLOAT, .off = F(lr), .def = "0.1",
     .flags = CFG_MIN | CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1e6, .help = "SGD step size"},
    {.name = "l2", .type = CFG_FLOAT, .off = F(l2), .def = "0", .flags = CFG_MIN, .min = 0,
     .help = "weight decay"},
    {.name = "target_accuracy", .type = CFG_FLOAT, .off = F(target_accuracy), .def = "0.9",
     .flags = CFG_MIN | CFG_MIN_EXCL | CFG_MAX | CFG_MAX_EXCL, .min = 0, .max = 1,
     .help = "test accuracy for the rounds/energy/time-to-target metrics, in (0, 1)"},
    {.name = "prox_mu", .type = CFG_FLOAT, .off = F(prox_mu), .def = "0.01", .flags = CFG_MIN,
     .min = 0, .help = "fedprox: weight mu of the proximal term mu/2 |w - w_global|^2"},
    {.name = "cc_budget", .type = CFG_FLOAT, .off = F(cc_budget), .def = "1",
     .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0,
     .help = "ccfedavg: per-round compute budget as a fraction of the mean device's full "
             "training; a device with dearer steps trains every ceil(e_i / (cc_budget mean e)) "
             "rounds and reuses its last update in the others (> 0)"},
    {.name = "deadline", .type = CFG_TIME, .off = F(deadline_ps),
     .flags = CFG_OPTIONAL | CFG_MIN | CFG_MIN_EXCL, .min = 0,
     .help = "round deadline: updates arriving later are dropped (absent: no deadline)"},
    {.name = "availability", .type = CFG_FLOAT, .off = F(availability), .def = "1",
     .flags = CFG_MIN | CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "probability that a device is available in a round, (0, 1]"},
    {.name = "availability_trace", .type = CFG_STR, .off = F(avail_file), .flags = CFG_OPTIONAL,
     .help = "CSV device,from_round,to_round: device unavailable in rounds from..to (1-based)"},
    {.name = "straggler_prob", .type = CFG_FLOAT, .off = F(straggler_prob), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1,
     .help = "probability that a participant computes straggler_slowdown times slower"},
    {.name = "straggler_slowdown", .type = CFG_FLOAT, .off = F(straggler_slowdown), .def = "4",
     .flags = CFG_MIN, .min = 1, .help = "compute-time factor of a straggler, >= 1"},
    {.name = "dropout_prob", .type = CFG_FLOAT, .off = F(dropout_prob), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1,
     .help = "probability that a participant fails after training, before its upload"},
    {.name = "controller", .type = CFG_MAPOF, .off = 0, .def = "{}", .sub = ctl_keys,
     .help = "constants of the online controller"},
    {.name = "energy", .type = CFG_MAPOF, .off = 0, .def = "{}", .sub = energy_keys,
     .help = "device hardware distributions (CPU-frequency energy model)"},
    {.name = "device_file", .type = CFG_STR, .off = F(device_file), .flags = CFG_OPTIONAL,
     .help = "CSV with a header naming some of cpu_hz, cycles_per_sample, busy_power_w, "
             "step_time_s, tx_power_w, bandwidth_bps; row i overrides device i's draws"},
    {.name = "offline", .type = CFG_BOOL, .off = F(offline), .def = "false",
     .help = "solve the offline optimum with GLPK and report the online regret"},
    {.name = "own_training", .type = CFG_BOOL, .off = F(own_training), .def = "true",
     .help = "with offline: also find the best uniform tau on its own training (E extra runs)"},
    {.name = "offline_max_vars", .type = CFG_INT, .off = F(offline_max_vars), .def = "200000",
     .flags = CFG_MIN, .min = 1, .help = "skip the offline optimum above this many binaries"},
    {.name = "offline_gap", .type = CFG_FLOAT, .off = F(offline_gap), .def = "1e-3",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = "relative MIP gap for GLPK"},
    {0},
};

typedef struct fe_row {
    fe_round_stats st;
    double t_s;             /* round end, simulated s */
    double energy_j;        /* cumulative compute + comm, J */
} fe_row;

typedef struct fe_method_run {
    struct fe_sim *owner;
    enum fe_method m;
    fe_run *run;
    fe_round_stats pending;
    fe_row *rows;           /* cfg.rounds */
    int done;               /* rounds recorded */
    double energy_j, compute_j, comm_j, idle_j;
} fe_method_run;

typedef struct fe_offline {
    int done;               /* solved */
    size_t rounds;          /* controlled rounds */
    double on_j;            /* online compute energy over them, J */
    double off_j;           /* long-term optimum on the same g (best plan found), J */
    double bound_j;         /* its LP lower bound, J */
    double per_round_j;     /* online: best plan meeting the budget every round, J */
    double regret_bound_j;  /* online: the guarantee's right-hand side, J */
    double queue_bound;     /* online: bound on every Q_t */
    double fixed_j;         /* online_pd: best fixed plan on the same g, J */
    double own_j;           /* best uniform tau running its own training and meeting
                               the budget on its own g, J (NAN if none) */
    int own_tau;            /* its tau */
    char note[128];         /* why not solved */
} fe_offline;

typedef struct fe_sim {
    fe_cfg cfg;
    fe_dataset all, train, test;
    int *owner;             /* device of each training sample */
    size_t *idx_store;      /* device index lists, concatenated */
    fe_device *dev;
    double *w0;
    fe_problem pb;
    fe_method_run mr[FE_M_COUNT];
    int finished;           /* methods done */
    fe_offline off[2];      /* online, online_pd */
    unsigned char *avail;   /* availability trace, trace_rounds x N */
} fe_sim;

static int data_path(const model_env *env, const char *p, char *buf, size_t len)
{
    if (p[0] == '/' || !env->base_dir || !*env->base_dir)
        return snprintf(buf, len, "%s", p);
    return snprintf(buf, len, "%s/%s", env->base_dir, p);
}

static int load_trace(fe_sim *s, cfg_node *sec, const char *path, const model_env *env,
                      size_t N, err *e);

/* A device's round in the worst case (every step at the straggler
 * slowdown) must fit the engine's times, and its energy must stay a finite
 * number that sums over devices and rounds: bounded here rather than capped
 * or left to overflow (busy power x step time past DBL_MAX used to reach an
 * assertion; a tiny bandwidth gave 1e304 J with the round time capped). */
#define FE_MAX_ROUND_S 1e6
#define FE_MAX_ROUND_J 1e15

static int check_device(const fe_sim *s, size_t k, const int *col, const fe_table *tab,
                        cfg_node *sec, const char *path, const char *file, const char *epath,
                        err *e)
{
    const fe_device *d = &s->dev[k];
    const fe_cfg *c = &s->cfg;
    double E = (double)c->local_iters, slow = c->straggler_slowdown > 1 ? c->straggler_slowdown
                                                                          : 1;
    double t = d->download_time_s + E * slow * d->step_time_s + d->upload_time_s;
    double j = d->download_energy_j + E * d->step_energy_j + d->upload_energy_j +
               d->idle_power_w * FE_MAX_ROUND_S;
    char what[320];
    /* the column of the largest term, where the file gives it */
    int big;
    if (!(t <= FE_MAX_ROUND_S)) {
        double st = E * slow * d->step_time_s;
        big = !(st <= d->download_time_s || st <= d->upload_time_s)
                  ? (c->energy_model == 0 ? DC_CYCLES : DC_STEP_S)
                  : d->upload_time_s >= d->download_time_s ? DC_BW : DC_DOWN_BPS;
    } else {
        double sj = E * d->step_energy_j, ij = d->idle_power_w * FE_MAX_ROUND_S;
        double m = fmax(fmax(sj, ij), fmax(d->upload_energy_j, d->download_energy_j));
        big = !(sj < m) ? (c->energy_model == 0 ? DC_CYCLES : DC_BUSY_W)
              : !(ij < m) ? DC_IDLE_W : !(d->upload_energy_j < m) ? DC_TX_W : DC_RX_W;
    }
    if (!(t <= FE_MAX_ROUND_S))
        snprintf(what, sizeof what, "expected a round of at most %g s (download + local_iters x "
                 "straggler_slowdown x step time + upload), found %.4g s (download %.4g s, step "
                 "%.4g s, upload %.4g s)", FE_MAX_ROUND_S, t, d->download_time_s,
                 d->step_time_s, d->upload_time_s);
    else if (!(j <= FE_MAX_ROUND_J))
        snprintf(what, sizeof what, "expected at most %g J per round (download + local_iters x "
                 "step energy + upload + idle power x %g s), found %.4g J (download %.4g J, "
                 "step %.4g J, upload %.4g J, idle %.4g W)", FE_MAX_ROUND_J, FE_MAX_ROUND_S, j,
                 d->download_energy_j, d->step_energy_j, d->upload_energy_j, d->idle_power_w);
    else
        return 0;
    char sub[512];
    int first = col[big];
    for (int q = 0; q < DC_COUNT && first < 0; q++)
        first = col[q];
    if (first >= 0)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "device_file"),
                       cfg_path(sub, sizeof sub, path, "device_file"), "%s:%d:%d: device %zu: %s",
                       file, tab->line[k], tab->cpos[k * tab->ncol + (size_t)first], k, what);
    return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "energy"), epath, "device %zu: %s", k, what);
}

static int fe_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
{
    fe_sim *s = st;
    fe_cfg *c = &s->cfg;
    char sub[512], full[1024];
    int r = cfg_bind(sec, path, fe_keys, c, e);
    if (r)
        return r;
    fe_model_single_thread();
    if (c->reduced_iters == 0)
        c->reduced_iters = c->local_iters > 1 ? c->local_iters / 2 : 1;
    if (c->reduced_iters > c->local_iters)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "reduced_iters"),
                       cfg_path(sub, sizeof sub, path, "reduced_iters"),
                       "expected at most local_iters (%lld), found %lld",
                       (long long)c->local_iters, (long long)c->reduced_iters);
    /* An SGD step multiplies the weights' distance to the minimum of the
     * quadratic terms (weight decay l2, FedProx's mu) by 1 - lr (l2 + mu):
     * at lr (l2 + mu) >= 2 they grow without bound (nan in rounds.csv). */
    const char *quad = c->lr * c->l2 >= 2 ? "l2" : c->lr * (c->l2 + c->prox_mu) >= 2 ? "prox_mu"
                                                                                     : NULL;
    if (quad)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, quad), cfg_path(sub, sizeof sub, path, quad),
                       "expected learning_rate x (l2 + prox_mu) below 2 (SGD diverges beyond), "
                       "found %g x (%g + %g) = %g", c->lr, c->l2, c->prox_mu,
                       c->lr * (c->l2 + c->prox_mu));
    /* data */
    if (c->dataset == 0) {
        if (!c->data)
            return cfg_err(e, AISIM_EINVAL, sec, cfg_path(sub, sizeof sub, path, "data"),
                           "missing required key for dataset digits (the CSV file)");
        data_path(env, c->data, full, sizeof full);
        r = fe_data_load_csv(full, 64, 10, 16, &s->all, e);
        if (r) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            return cfg_err(e, r, cfg_get(sec, "data"), cfg_path(sub, sizeof sub, path, "data"),
                           "%s", msg);
        }
    } else {
        if (!c->images || !c->labels)
            return cfg_err(e, AISIM_EINVAL, sec,
                           cfg_path(sub, sizeof sub, path, c->images ? "labels" : "images"),
                           "missing required key for dataset mnist (IDX file)");
        char full2[1024];
        data_path(env, c->images, full, sizeof full);
        data_path(env, c->labels, full2, sizeof full2);
        r = fe_data_load_idx(full, full2, 10, &s->all, e);
        if (r) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            const char *k = strstr(msg, full2) ? "labels" : "images";
            return cfg_err(e, r, cfg_get(sec, k), cfg_path(sub, sizeof sub, path, k), "%s", msg);
        }
    }
    if ((size_t)c->test_samples >= s->all.n)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "test_samples"),
                       cfg_path(sub, sizeof sub, path, "test_samples"),
                       "expected fewer than the %zu samples in the data, found %lld", s->all.n,
                       (long long)c->test_samples);
    rng r_split;
    rng_init(&r_split, env->seed, "fedenergy.split", 0);
    fe_data_split(&s->all, &r_split, (size_t)c->test_samples, (size_t)c->train_samples,
                  &s->train, &s->test);
    if ((size_t)c->devices > s->train.n)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "devices"),
                       cfg_path(sub, sizeof sub, path, "devices"),
                       "more devices (%lld) than training samples (%zu)", (long long)c->devices,
                       s->train.n);
    /* devices */
    size_t N = (size_t)c->devices;
    rng r_part;
    rng_init(&r_part, env->seed, "fedenergy.partition", 0);
    s->owner = fe_partition(&s->train, N, (enum fe_partition)c->partition, c->alpha,
                            (int)c->shards_per_device, &r_part);
    s->dev = xcalloc(N, sizeof *s->dev);
    s->idx_store = xmalloc(s->train.n * sizeof *s->idx_store);
    for (size_t i = 0; i < s->train.n; i++)
        s->dev[s->owner[i]].n++;
    size_t off = 0;
    for (size_t k = 0; k < N; k++) {
        s->dev[k].idx = s->idx_store + off;
        s->dev[k].p = (double)s->dev[k].n / (double)s->train.n;
        off += s->dev[k].n;
        s->dev[k].n = 0;
    }
    for (size_t i = 0; i < s->train.n; i++) {
        fe_device *d = &s->dev[s->owner[i]];
        d->idx[d->n++] = i;
    }
    if (c->arch == FE_ARCH_CNN) {
        size_t side = (size_t)llround(sqrt((double)s->train.dim));
        if (side * side != s->train.dim ||
            fe_arch_init_cnn(&s->pb.arch, side, 10, (size_t)c->filters, (size_t)c->kernel))
            return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "kernel"),
                           cfg_path(sub, sizeof sub, path, "kernel"),
                           "expected a kernel side k with %zu x %zu images such that %zu - k + 1 "
                           "is even and >= 2, found %lld", side, side, side, (long long)c->kernel);
    } else {
        fe_arch_init(&s->pb.arch, (enum fe_arch_kind)c->arch, s->train.dim, 10,
                     (size_t)c->hidden);
    }
    double bytes = c->model_bytes > 0 ? (double)c->model_bytes : 4.0 * (double)s->pb.arch.nparam;
    dist dd[DC_COUNT] = {{0}};
    fe_table tab = {0};
    int col[DC_COUNT];
    char epath[512];
    cfg_path(epath, sizeof epath, path, "energy");
    cfg_node *dnode[DC_COUNT] = {c->cpu_hz,     c->cycles,    c->tx_power,
                                 c->bandwidth,  c->busy_power, c->step_time,
                                 c->rx_power,   c->downlink,  c->idle_power};
    static const char *const dkey[DC_COUNT] = {
        "cpu_hz",       "cycles_per_sample", "tx_power_w", "bandwidth_bps", "busy_power_w",
        "step_time",    "rx_power_w",        "downlink_bps", "idle_power_w"};
    for (int k = 0; k < DC_COUNT && !r; k++)
        r = dist_from_cfg(dnode[k], cfg_path(sub, sizeof sub, epath, dkey[k]),
                          k == DC_STEP_S ? DIST_Q_TIME : DIST_Q_NUMBER, env->base_dir, &dd[k], e);
    if (r)
        goto out;
    for (int k = 0; k < DC_COUNT; k++)
        col[k] = -1;
    if (c->device_file) {
        cfg_node *fn = cfg_get(sec, "device_file");
        cfg_path(sub, sizeof sub, path, "device_file");
        data_path(env, c->device_file, full, sizeof full);
        if ((r = fe_table_load(full, &tab, e))) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            r = cfg_err(e, r, fn, sub, "%s", msg);
            goto out;
        }
        for (size_t j = 0; j < tab.ncol; j++) {
            int k = 0;
            while (k < DC_COUNT && strcmp(tab.names[j], devcol_names[k]) != 0)
                k++;
            if (k == DC_COUNT) {
                r = cfg_err(e, AISIM_EINVAL, fn, sub, "%s:1: unknown column \"%s\" (expected "
                            "cpu_hz, cycles_per_sample, busy_power_w, step_time_s, tx_power_w, "
                            "bandwidth_bps, rx_power_w, downlink_bps or idle_power_w)", full,
                            tab.names[j]);
                goto out;
            }
            col[k] = (int)j;
        }
        if (tab.nrow < N) {
            r = cfg_err(e, AISIM_EINVAL, fn, sub, "%s: %zu device rows for %zu devices", full,
                        tab.nrow, N);
            goto out;
        }
    }
    for (size_t k = 0; k < N; k++) {
        rng rd;
        rng_init(&rd, env->seed, "fedenergy.device", k);
        double v[DC_COUNT];
        for (int j = 0; j < DC_COUNT; j++) {
            v[j] = dist_sample(&dd[j], &rd);    /* always drawn: streams stay aligned */
            if (j == DC_STEP_S)
                v[j] *= 1e-12;                  /* ps -> s */
            if (col[j] >= 0)
                v[j] = tab.v[k * tab.ncol + (size_t)col[j]];
        }
        int bad = -1;
        for (int j = 0; j < DC_COUNT && bad < 0; j++)
            if (j == DC_TX_W || j == DC_RX_W || j == DC_IDLE_W ? !(v[j] >= 0) : !(v[j] > 0))
                bad = j;
        if (bad >= 0) {
            r = col[bad] >= 0
                    ? cfg_err(e, AISIM_ERANGE, cfg_get(sec, "device_file"),
                              cfg_path(sub, sizeof sub, path, "device_file"),
                              "%s:%d:%d: device %zu: %s: expected a number %s 0, found %g", full,
                              tab.line[k], tab.cpos[k * tab.ncol + (size_t)col[bad]], k,
                              devcol_names[bad],
                              bad == DC_TX_W || bad == DC_RX_W || bad == DC_IDLE_W ? ">=" : ">",
                              v[bad])
                    : cfg_err(e, AISIM_ERANGE, dnode[bad],
                              cfg_path(sub, sizeof sub, epath, dkey[bad]),
                              "device %zu drew %g; use a distribution above 0", k, v[bad]);
            goto out;
        }
        double b = (double)((size_t)c->batch < s->dev[k].n ? (size_t)c->batch : s->dev[k].n);
        if (c->energy_model == 0) {
            s->dev[k].step_energy_j = fedenergy_step_energy_j(c->kappa, v[DC_CYCLES], b,
                                                              v[DC_CPU_HZ]);
            s->dev[k].step_time_s = fedenergy_step_time_s(v[DC_CYCLES], b, v[DC_CPU_HZ]);
        } else {
            s->dev[k].step_energy_j = v[DC_BUSY_W] * v[DC_STEP_S];
            s->dev[k].step_time_s = v[DC_STEP_S];
        }
        s->dev[k].upload_energy_j = fedenergy_upload_energy_j(v[DC_TX_W], bytes, v[DC_BW]);
        s->dev[k].upload_time_s = bytes * 8 / v[DC_BW];
        s->dev[k].download_energy_j = fedenergy_upload_energy_j(v[DC_RX_W], bytes, v[DC_DOWN_BPS]);
        s->dev[k].download_time_s = bytes * 8 / v[DC_DOWN_BPS];
        s->dev[k].idle_power_w = v[DC_IDLE_W];
        if ((r = check_device(s, k, col, &tab, sec, path, full, epath, e)))
            goto out;
    }
    if (c->avail_file && (r = load_trace(s, sec, path, env, N, e)))
        goto out;
    s->w0 = xmalloc(s->pb.arch.nparam * sizeof *s->w0);
    rng r_init;
    rng_init(&r_init, env->seed, "fedenergy.init", 0);
    fe_model_init_params(&s->pb.arch, s->w0, &r_init);
    s->pb.train = &s->train;
    s->pb.test = &s->test;
    s->pb.n_dev = N;
    s->pb.dev = s->dev;
    s->pb.w0 = s->w0;
    s->pb.iters_max = (int)c->local_iters;
    s->pb.reduced_iters = (int)c->reduced_iters;
    s->pb.batch = (size_t)c->batch;
    s->pb.lr = c->lr;
    s->pb.l2 = c->l2;
    s->pb.warmup_rounds = (int)c->warmup_rounds;
    s->pb.participation = c->participation;
    s->pb.prox_mu = c->prox_mu;
    s->pb.cc_budget = c->cc_budget;
    s->pb.deadline_s = ps_to_s(c->deadline_ps);
    s->pb.unavailability = 1 - c->availability;
    s->pb.avail_trace = s->avail;
    s->pb.trace_rounds = s->avail ? (size_t)c->rounds : 0;
    s->pb.straggler_prob = c->straggler_prob;
    s->pb.straggler_slowdown = c->straggler_slowdown;
    s->pb.dropout_prob = c->dropout_prob;
    double v = c->v_scale ? c->v * sqrt((double)c->rounds) : c->v;
    s->pb.ctl = (fedenergy_params){.iters_max = (int)c->local_iters, .v = v,
                                   .budget = c->budget, .queue_init = c->queue_init,
                                   .rho_floor = c->rho_floor};
    s->pb.pd_eta_primal = c->pd_eta_primal / sqrt((double)c->rounds);
    s->pb.pd_eta_dual = c->pd_eta_dual / sqrt((double)c->rounds);
    s->pb.seed = env->seed;
    s->pb.poll = env->sim;      /* a round trains every device in one event */
out:
    for (int k = 0; k < DC_COUNT; k++)
        dist_fini(&dd[k]);
    fe_table_fini(&tab);
    return r;
}

static void on_round_start(sim *s, void *obj, uint64_t arg);

/* Availability trace: rows device,from_round,to_round (1-based, inclusive)
 * mark a device unavailable; errors name the file and line. */
static int load_trace(fe_sim *s, cfg_node *sec, const char *path, const model_env *env,
                      size_t N, err *e)
{
    char sub[512], full[1024];
    cfg_node *fn = cfg_get(sec, "availability_trace");
    cfg_path(sub, sizeof sub, path, "availability_trace");
    data_path(env, s->cfg.avail_file, full, sizeof full);
    fe_table tab;
    int r = fe_table_load(full, &tab, e);
    if (r) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return cfg_err(e, r, fn, sub, "%s", msg);
    }
    int cd = fe_table_col(&tab, "device"), cf = fe_table_col(&tab, "from_round"),
        ct = fe_table_col(&tab, "to_round");
    if (cd < 0 || cf < 0 || ct < 0) {
        fe_table_fini(&tab);
        return cfg_err(e, AISIM_EINVAL, fn, sub, "%s:1: expected columns device, from_round, "
                       "to_round", full);
    }
    size_t T = (size_t)s->cfg.rounds;
    s->avail = xmalloc(T * N);
    memset(s->avail, 1, T * N);
    for (size_t k = 0; k < tab.nrow && !r; k++) {
        double d = tab.v[k * tab.ncol + (size_t)cd], f = tab.v[k * tab.ncol + (size_t)cf],
               t = tab.v[k * tab.ncol + (size_t)ct];
        if (!(d >= 0 && d < (double)N && d == floor(d)))
            r = cfg_err(e, AISIM_ERANGE, fn, sub, "%s:%d: expected a device in 0..%zu, found %g",
                        full, tab.line[k], N - 1, d);
        else if (!(f >= 1 && t >= f && f == floor(f) && t == floor(t)))
            r = cfg_err(e, AISIM_ERANGE, fn, sub, "%s:%d: expected rounds 1 <= from_round <= "
                        "to_round, found %g..%g", full, tab.line[k], f, t);
        else
            for (double x = f; x <= t && x <= (double)T; x++)
                s->avail[((size_t)x - 1) * N + (size_t)d] = 0;
    }
    fe_table_fini(&tab);
    return r;
}

static void on_round_end(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    fe_method_run *m = obj;
    fe_sim *fs = m->owner;
    fe_row *row = &m->rows[m->done++];
    row->st = m->pending;
    m->compute_j += m->pending.compute_j;
    m->comm_j += m->pending.comm_j;
    m->idle_j += m->pending.idle_j;
    m->energy_j += m->pending.compute_j + m->pending.comm_j + m->pending.idle_j;
    row->energy_j = m->energy_j;
    row->t_s = ps_to_s(sim_now(s));
    if (m->done < fs->cfg.rounds) {
        sim_schedule(s, sim_now(s), on_round_start, m, 0);
        return;
    }
    if (++fs->finished == FE_M_COUNT)
        sim_stop(s);
}

static void on_round_start(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    fe_method_run *m = obj;
    fe_run_round(m->run, &m->pending);
    if (sim_was_cut(s))
        return;                 /* the engine is stopped: the run is discarded */
    double ps = m->pending.time_s * 1e12;
    int64_t dt = ps < 1 ? 1 : ps > 1e18 ? (int64_t)1e18 : (int64_t)llround(ps);
    sim_schedule(s, sim_now(s) + dt, on_round_end, m, 0);
}

static int fe_start(void *st, sim *s, err *e)
{
    (void)e;
    fe_sim *fs = st;
    for (int k = 0; k < FE_M_COUNT; k++) {
        fe_method_run *m = &fs->mr[k];
        m->owner = fs;
        m->m = (enum fe_method)k;
        m->run = fe_run_create(&fs->pb, m->m);
        m->rows = xcalloc((size_t)fs->cfg.rounds, sizeof *m->rows);
        sim_schedule(s, 0, on_round_start, m, 0);
    }
    return 0;
}

static double fe_progress(const void *st, const sim *s)
{
    (void)s;
    const fe_sim *fs = st;
    double done = 0;
    for (int k = 0; k < FE_M_COUNT; k++)
        done += fs->mr[k].done;
    return done / ((double)FE_M_COUNT * (double)fs->cfg.rounds);
}

static void csv_num(FILE *f, double v, const char *sep)
{
    char b[40];
    out_fmt_double(b, sizeof b, v);
    fprintf(f, "%s%s", b, sep);
}

/* Best uniform tau that, running its own training (same data, same
 * mini-batch streams, same warm-up and scaling as `online`), meets the
 * budget on average over its own controlled rounds: the comparator that
 * does not share the online run's trajectory.  E runs of `rounds` rounds. */
static void own_training_plan(fe_sim *fs, fe_offline *res)
{
    res->own_j = NAN;
    res->own_tau = 0;
    for (int k = 1; k <= fs->cfg.local_iters; k++) {
        fe_problem pb = fs->pb;
        pb.plan_iters = k;
        fe_run *run = fe_run_create(&pb, FE_M_ONLINE);
        fe_round_stats st;
        for (int t = 0; t < fs->cfg.rounds && !sim_was_cut(fs->pb.poll); t++)
            fe_run_round(run, &st);
        size_t T = fe_run_history(run, NULL, NULL);
        double err_sum = fe_run_controlled_error(run), j = fe_run_controlled_compute_j(run);
        fe_run_destroy(run);
        if (err_sum <= fs->cfg.budget * (double)T + 1e-12) {
            res->own_j = j;
            res->own_tau = k;
            return;     /* energy grows with tau: the first feasible is the best */
        }
    }
}

/* Solves the offline comparators over an online method's controlled rounds. */
static int solve_offline(fe_sim *fs, int k, fe_offline *res, err *e)
{
    const fe_method_run *m = &fs->mr[k];
    const double *cost, *coef;
    size_t T = fe_run_history(m->run, &cost, &coef);
    size_t N = fs->pb.n_dev, vars = N * T * (size_t)(fs->cfg.local_iters - 1);
    const fe_cfg *c = &fs->cfg;
    if (T == 0) {
        snprintf(res->note, sizeof res->note, "no controlled rounds");
        return 0;
    }
    if (c->deadline_ps > 0) {
        snprintf(res->note, sizeof res->note, "skipped: the offline program has no deadline "
                 "caps");
        return 0;
    }
    if (vars > (size_t)c->offline_max_vars) {
        snprintf(res->note, sizeof res->note, "skipped: %zu binaries > offline_max_vars", vars);
        return 0;
    }
    double mean_e = 0;
    for (size_t i = 0; i < N; i++)
        mean_e += fs->dev[i].step_energy_j / (double)N;
    int E = (int)c->local_iters;
    int r = fedenergy_offline(N, T, E, cost, coef, c->budget, c->offline_gap, &res->off_j,
                              &res->bound_j, NULL, e);
    if (!r && k == FE_M_ONLINE) {
        r = fedenergy_offline_per_round(N, T, E, cost, coef, c->budget, 0, &res->per_round_j,
                                        NULL, e);
        const fedenergy_ctl *ctl = fe_run_ctl(m->run);
        res->regret_bound_j = mean_e * E * fedenergy_regret_bound(ctl, N);
        res->queue_bound = fedenergy_queue_bound(ctl);
        if (c->own_training)
            own_training_plan(fs, res);
    }
    if (!r && k == FE_M_ONLINE_PD)
        r = fedenergy_offline_fixed(N, T, E, cost, coef, c->budget, c->offline_gap, &res->fixed_j,
                                    NULL, e);
    if (r)
        return r;
    res->done = 1;
    res->rounds = T;
    res->on_j = fe_run_controlled_compute_j(m->run);
    return 0;
}

static json_t *offline_json(const fe_offline *o, int online)
{
    json_t *off = json_object();
    if (o->done) {
        double T = (double)o->rounds;
        json_object_set_new(off, "rounds", json_integer((json_int_t)o->rounds));
        out_json_num(off, "online_compute_energy_j", o->on_j);
        /* the hindsight optimum of the T-round program on the realised
         * costs and coefficients (guarantee (2) of fedenergy.h); against its
         * LP bound the regret is an upper bound on the true one */
        out_json_num(off, "offline_compute_energy_j", o->off_j);
        out_json_num(off, "offline_lower_bound_j", o->bound_j);
        out_json_num(off, "regret_j", o->on_j - o->off_j);
        out_json_num(off, "regret_per_round_j", (o->on_j - o->off_j) / T);
        out_json_num(off, "regret_vs_lower_bound_j", o->on_j - o->bound_j);
        if (online) {
            /* the comparator of the drift-plus-penalty guarantee */
            out_json_num(off, "per_round_plan_energy_j", o->per_round_j);
            out_json_num(off, "regret_vs_per_round_j", o->on_j - o->per_round_j);
            out_json_num(off, "regret_bound_j", o->regret_bound_j);
            out_json_num(off, "queue_bound", o->queue_bound);
            if (o->own_tau > 0) {
                json_object_set_new(off, "own_training_tau", json_integer(o->own_tau));
                out_json_num(off, "own_training_energy_j", o->own_j);
                out_json_num(off, "regret_vs_own_training_j", o->on_j - o->own_j);
            }
        } else {
            out_json_num(off, "fixed_plan_energy_j", o->fixed_j);
            out_json_num(off, "regret_vs_fixed_j", o->on_j - o->fixed_j);
        }
    } else {
        json_object_set_new(off, "note", json_string(o->note));
    }
    return off;
}

/* The last completed round of a method; a row of NaN (null in JSON) when
 * none completed (a `stop:` before the first round ended): reading
 * rows[-1] was found by make fuzz-run. */
static const fe_row *last_row(const fe_method_run *m)
{
    static const fe_row none = {.st = {.accuracy = NAN, .loss = NAN}, .t_s = NAN,
                                .energy_j = NAN};
    return m->done > 0 ? &m->rows[m->done - 1] : &none;
}

static int fe_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    (void)s;
    fe_sim *fs = st;
    const fe_cfg *c = &fs->cfg;
    int r;
    if (c->offline && ((r = solve_offline(fs, FE_M_ONLINE, &fs->off[0], e)) ||
                       (r = solve_offline(fs, FE_M_ONLINE_PD, &fs->off[1], e))))
        return r;
    if (sim_was_cut(fs->pb.poll))
        return MODEL_CUT(e);    /* own_training_plan() was cut short */
    FILE *f = out_file(o, "rounds.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "method,round,time_s,mean_iters,mean_scale,compute_j,comm_j,idle_j,energy_j,"
               "accuracy,loss,error,queue,participants,dropped\n");
    for (int k = 0; k < FE_M_COUNT; k++) {
        const fe_method_run *m = &fs->mr[k];
        for (int t = 0; t < m->done; t++) {
            const fe_row *w = &m->rows[t];
            fprintf(f, "%s,%d,", fe_method_names[k], t + 1);
            csv_num(f, w->t_s, ",");
            csv_num(f, w->st.mean_iters, ",");
            csv_num(f, w->st.mean_scale, ",");
            csv_num(f, w->st.compute_j, ",");
            csv_num(f, w->st.comm_j, ",");
            csv_num(f, w->st.idle_j, ",");
            csv_num(f, w->energy_j, ",");
            csv_num(f, w->st.accuracy, ",");
            csv_num(f, w->st.loss, ",");
            csv_num(f, w->st.error, ",");
            csv_num(f, w->st.queue, ",");
            fprintf(f, "%d,%d\n", w->st.participants, w->st.dropped);
        }
    }
    FILE *fd = out_file(o, "devices.csv", e);
    if (!fd)
        return e->code;
    fprintf(fd, "device,samples,weight,step_energy_j,step_time_s,upload_energy_j,upload_time_s,"
                "download_energy_j,download_time_s,idle_power_w\n");
    for (size_t i = 0; i < fs->pb.n_dev; i++) {
        const fe_device *d = &fs->dev[i];
        fprintf(fd, "%zu,%zu,", i, d->n);
        csv_num(fd, d->p, ",");
        csv_num(fd, d->step_energy_j, ",");
        csv_num(fd, d->step_time_s, ",");
        csv_num(fd, d->upload_energy_j, ",");
        csv_num(fd, d->upload_time_s, ",");
        csv_num(fd, d->download_energy_j, ",");
        csv_num(fd, d->download_time_s, ",");
        csv_num(fd, d->idle_power_w, "\n");
    }

    const fe_method_run *base = &fs->mr[FE_M_FEDAVG];
    double base_acc = last_row(base)->st.accuracy;
    json_t *ms = json_object();
    for (int k = 0; k < FE_M_COUNT; k++) {
        const fe_method_run *m = &fs->mr[k];
        const fe_row *last = last_row(m);
        json_t *j = json_object();
        out_json_num(j, "energy_j", m->energy_j);
        out_json_num(j, "compute_energy_j", m->compute_j);
        out_json_num(j, "comm_energy_j", m->comm_j);
        out_json_num(j, "idle_energy_j", m->idle_j);
        out_json_num(j, "final_accuracy", last->st.accuracy);
        out_json_num(j, "final_loss", last->st.loss);
        out_json_num(j, "energy_saved_vs_fedavg", 1 - m->energy_j / base->energy_j);
        out_json_num(j, "accuracy_diff_points", 100 * (last->st.accuracy - base_acc));
        out_json_num(j, "accuracy_per_kj", last->st.accuracy / (m->energy_j / 1e3));
        out_json_num(j, "wall_time_s", last->t_s);
        double mean_iters = 0;
        int hit = -1;
        for (int t = 0; t < m->done; t++) {
            mean_iters += m->rows[t].st.mean_iters / m->done;
            if (hit < 0 && m->rows[t].st.accuracy >= c->target_accuracy)
                hit = t;
        }
        out_json_num(j, "mean_local_iters", mean_iters);
        if (k == FE_M_CCFEDAVG || k == FE_M_GEL) {
            json_int_t n = 0;
            for (int t = 0; t < m->done; t++)
                n += k == FE_M_CCFEDAVG ? m->rows[t].st.estimated : m->rows[t].st.guessed;
            json_object_set_new(j, k == FE_M_CCFEDAVG ? "estimated_updates" : "guessed_iters",
                                json_integer(n));
        }
        if (hit >= 0) {
            json_object_set_new(j, "rounds_to_target", json_integer(hit + 1));
            out_json_num(j, "energy_to_target_j", m->rows[hit].energy_j);
            out_json_num(j, "time_to_target_s", m->rows[hit].t_s);
        } else {
            json_object_set_new(j, "rounds_to_target", json_null());
            json_object_set_new(j, "energy_to_target_j", json_null());
            json_object_set_new(j, "time_to_target_s", json_null());
        }
        if (k == FE_M_ONLINE) {
            const fedenergy_ctl *ctl = fe_run_ctl(m->run);
            out_json_num(j, "queue_final", ctl->queue);
            out_json_num(j, "queue_max", ctl->queue_max);
            out_json_num(j, "violation_per_round",
                    ctl->rounds ? ctl->violation / (double)ctl->rounds : NAN);
            out_json_num(j, "violation_total", ctl->violation);
        }
        if (k == FE_M_ONLINE_PD) {
            const fedenergy_pd *pd = fe_run_pd(m->run);
            out_json_num(j, "queue_final", pd->mu);
            out_json_num(j, "queue_max", pd->mu_max);
            out_json_num(j, "violation_per_round",
                    pd->rounds ? pd->violation / (double)pd->rounds : NAN);
            out_json_num(j, "violation_total", pd->violation);
        }
        if (c->offline && (k == FE_M_ONLINE || k == FE_M_ONLINE_PD))
            json_object_set_new(j, "offline", offline_json(&fs->off[k == FE_M_ONLINE_PD],
                                                           k == FE_M_ONLINE));
        json_object_set_new(ms, fe_method_names[k], j);
    }
    json_object_set_new(sum, "methods", ms);
    const fe_method_run *on = &fs->mr[FE_M_ONLINE];
    out_json_num(sum, "energy_saved_vs_fedavg", 1 - on->energy_j / base->energy_j);
    out_json_num(sum, "accuracy_diff_points",
            100 * (last_row(on)->st.accuracy - base_acc));
    out_json_num(sum, "fedavg_final_accuracy", base_acc);
    out_json_num(sum, "online_final_accuracy", last_row(on)->st.accuracy);
    json_object_set_new(sum, "training_samples", json_integer((json_int_t)fs->train.n));
    json_object_set_new(sum, "test_samples", json_integer((json_int_t)fs->test.n));
    json_object_set_new(sum, "model_parameters", json_integer((json_int_t)fs->pb.arch.nparam));
    if (c->offline)
        json_object_set_new(sum, "offline", offline_json(&fs->off[0], 1));
    return 0;
}

static void fe_fini(void *st)
{
    fe_sim *fs = st;
    for (int k = 0; k < FE_M_COUNT; k++) {
        fe_run_destroy(fs->mr[k].run);
        free(fs->mr[k].rows);
    }
    fe_data_fini(&fs->all);
    fe_data_fini(&fs->train);
    fe_data_fini(&fs->test);
    free(fs->owner);
    free(fs->idx_store);
    free(fs->dev);
    free(fs->w0);
    free(fs->avail);
}

static const plot_spec fe_plots[] = {
    {.csv = "rounds.csv", .x = "energy_j", .y = "accuracy", .group = "method",
     .title = "Test accuracy against cumulative device energy", .out = "accuracy_vs_energy",
     .xlabel = "cumulative energy (J)", .ylabel = "test accuracy"},
    {.csv = "rounds.csv", .x = "round", .y = "energy_j", .group = "method",
     .title = "Cumulative device energy", .out = "energy_vs_round", .xlabel = "round",
     .ylabel = "energy (J)"},
    {.csv = "rounds.csv", .x = "round", .y = "accuracy", .group = "method",
     .title = "Test accuracy", .out = "accuracy_vs_round", .xlabel = "round",
     .ylabel = "test accuracy"},
    {.csv = "rounds.csv", .x = "round", .y = "mean_iters", .group = "method",
     .title = "Mean local iterations per device", .out = "iters_vs_round", .xlabel = "round",
     .ylabel = "iterations"},
    {0},
};

/* What `aisim run` prints first (model.h). */
static const model_headline fe_headlines[] = {
    {"methods.*.energy_j", "energy", "J", 0},
    {"methods.*.energy_saved_vs_fedavg", "saved vs FedAvg", "%", 0},
    {"methods.*.final_accuracy", "final accuracy", "%", 0},
    {"methods.*.wall_time_s", "training time", "s", 0},
    {"methods.*.rounds_to_target", "rounds to target", "", 0},
    {NULL, NULL, NULL, 0},
};

const model_ops fedenergy_model_ops = {
    .name = "fedenergy",
    .summary = "energy-efficient federated learning: reduced local iterations with scaled updates",
    .state_size = sizeof(fe_sim),
    .configure = fe_configure,
    .start = fe_start,
    .progress = fe_progress,
    .report = fe_report,
    .fini = fe_fini,
    .plots = fe_plots,
    .headlines = fe_headlines,
};
