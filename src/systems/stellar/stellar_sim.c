/*
 * stellar_sim.c - simulator glue of Stellar's host side (`model: stellar`,
 * docs/stellar.md).  One scenario runs one experiment:
 *
 *  - startup: for every container memory size, one container with full
 *    pinning (VFIO, HyV/MasQ) and one with PVDMA, launched at time 0.  Events:
 *    ready (hypervisor, plus pinning everything for full pinning), then the
 *    workload's memory accesses (a training job: the model load, one
 *    iteration's NCCL and activation buffers per iteration time, weights and
 *    optimizer state at every checkpoint; an inference container: the model
 *    load, then requests each on one buffer of a reused pool), each split
 *    into DMAs that go through the container's Map Cache one after another;
 *    and a sampler of pinned bytes.  The pin costs come from the defaults
 *    (papers.md) or from a calibration file measured with `aisim calibrate
 *    pin`.  The Fig. 5 doorbell hazard is replayed for the chosen layout.
 *  - gdr: throughput of GDR writes by message size for the ATS/ATC, eMTT and
 *    HyV/MasQ paths (stellar_gdr.c).
 *  - devices: the SR-IOV and vStellar capacity plans for a server shape and
 *    a container mix (stellar_dev.c).
 *
 * Outputs: startup.csv, pinned.csv | gdr.csv | devices.csv, and the headline
 * numbers in summary.json.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/model.h"
#include "aisim/units.h"
#include "systems/stellar/stellar.h"
#include "systems/stellar/stellar_cal.h"

enum { EXP_STARTUP, EXP_GDR, EXP_DEVICES };
static const char *const exp_names[] = {"startup", "gdr", "devices", NULL};
static const char *const wl_names[] = {"training", "inference", NULL};
static const char *const db_names[] = {"ram", "shm", NULL};
static const char *const mem_names[] = {"gpu", "host", NULL};

typedef struct st_cfg {
    int experiment;             /* EXP_* */
    const char *calibration;    /* pin calibration file, or NULL */
    /* startup */
    cfg_node *memory;           /* list of container sizes */
    int64_t hv_base_ps, hv_per_gib_ps, pin_per_gib_ps, block_pin_ps, lookup_ps;
    int64_t repin_ps, unpin_ps, map_cache;
    int64_t block_bytes, page_bytes;
    int doorbell;               /* enum stellar_db_layout */
    int64_t sample_ps;          /* pinned-bytes sampling period */
    int wl;                     /* 0 training, 1 inference */
    double params;              /* model parameters */
    double weight_bpp;          /* bytes per parameter of the weights */
    double optim_bpp;           /* bytes per parameter of optimizer state (training) */
    int64_t activation_bytes;   /* activation buffers (training) */
    int64_t nccl_buffers;       /* NCCL buffers (training) */
    int64_t nccl_bytes;         /* each */
    int64_t iterations;         /* training iterations */
    int64_t iteration_ps;       /* one iteration */
    int64_t checkpoint_every;   /* iterations between checkpoints; 0: none */
    int64_t requests;           /* inference requests */
    int64_t request_ps;         /* between requests */
    int64_t request_buffers;    /* pool of reused buffers */
    int64_t request_bytes;      /* each */
    int64_t dma_bytes;          /* DMA size the accesses are split into */
    /* gdr */
    cfg_node *messages, *paths;
    int64_t connections, port_bps, mtu, frame_overhead, outstanding, dma_ps, ats_ps, walk_ps;
    int64_t mtt_entries, mtt_miss_ps;
    int64_t atc_entries, iommu_entries, rc_bps, gpage_bytes, min_requests;
    int gdr_memory;             /* 0 gpu, 1 host */
    /* devices */
    int64_t rnics, switches, lut_entries, vf_max, vf_current, vf_mem, vf_create_ps;
    cfg_node *vf_enable_n, *vf_enable_t;
    int64_t vdev_max, vdev_mem, vdev_create_ps, parallel;
    cfg_node *containers;
} st_cfg;

#define F(x) offsetof(st_cfg, x)
#define POS(key, typ, field, dflt, lo, text)                                                  \
    {.name = key, .type = typ, .off = F(field), .def = dflt, .flags = CFG_MIN | CFG_MIN_EXCL, \
     .min = lo, .help = text}
/* positive and at most hi: counts that size arrays or fit an int */
#define POSMAX(key, typ, field, dflt, hi, text)                                             \
    {.name = key, .type = typ, .off = F(field), .def = dflt,                                \
     .flags = CFG_MIN | CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = hi, .help = text}
#define NONNEG(key, typ, field, dflt, text)                                                   \
    {.name = key, .type = typ, .off = F(field), .def = dflt, .flags = CFG_MIN, .min = 0,      \
     .help = text}

static const cfg_key workload_keys[] = {
    {.name = "kind", .type = CFG_ENUM, .off = F(wl), .def = "training", .choices = wl_names,
     .help = "training (weights, optimizer, activations, NCCL buffers) or inference"},
    POS("params", CFG_FLOAT, params, "1.3e9", 0, "model parameters"),
    POS("weight_bytes_per_param", CFG_FLOAT, weight_bpp, "2", 0, "bytes per weight (bf16: 2)"),
    NONNEG("optimizer_bytes_per_param", CFG_FLOAT, optim_bpp, "12",
           "optimizer state per parameter in host memory (Adam fp32 master + m + v: 12)"),
    NONNEG("activations", CFG_SIZE, activation_bytes, "4GiB", "activation buffers (training)"),
    NONNEG("nccl_buffers", CFG_INT, nccl_buffers, "16", "NCCL buffers (training)"),
    POS("nccl_buffer", CFG_SIZE, nccl_bytes, "4MiB", 0, "size of each NCCL buffer"),
    POS("iterations", CFG_INT, iterations, "50", 0, "training iterations simulated"),
    POS("iteration_time", CFG_TIME, iteration_ps, "1s", 0, "one training iteration"),
    NONNEG("checkpoint_every", CFG_INT, checkpoint_every, "10",
           "iterations between checkpoints of weights and optimizer state (0: none)"),
    POS("requests", CFG_INT, requests, "200", 0, "inference requests simulated"),
    POS("request_interval", CFG_TIME, request_ps, "50ms", 0, "time between requests"),
    POS("request_buffers", CFG_INT, request_buffers, "32", 0, "pool of reused request buffers"),
    POS("request_buffer", CFG_SIZE, request_bytes, "64MiB", 0, "size of each request buffer"),
    POS("dma", CFG_SIZE, dma_bytes, "1MiB", 0, "size of the DMAs an access is split into"),
    {0},
};

static const cfg_key startup_keys[] = {
    {.name = "memory", .type = CFG_NODE, .off = F(memory), .def = "[32GiB, 160GiB, 1638GiB]",
     .help = "container memory sizes (Fig. 6: 32 GiB, 160 GiB, 1.6 TiB)"},
    NONNEG("hypervisor_base", CFG_TIME, hv_base_ps, "8.781s",
           "hypervisor start-up at zero memory (fitted: Fig. 6 PVDMA at 32 GiB and 1.6 TiB)"),
    NONNEG("hypervisor_per_gib", CFG_TIME, hv_per_gib_ps, "6.849ms",
           "hypervisor time per GiB (fitted: Fig. 6 PVDMA, 9 s at 32 GiB to 20 s at 1.6 TiB)"),
    POS("pin_per_gib", CFG_TIME, pin_per_gib_ps, "243.8ms", 0,
        "full pinning per GiB (Linux 4d83de6da265: QEMU/VFIO pins 120 GiB in 29.7 s)"),
    NONNEG("block_pin", CFG_TIME, block_pin_ps, "0s",
           "PVDMA first touch of one block (0s: block x pin_per_gib)"),
    NONNEG("repin", CFG_TIME, repin_ps, "0s",
           "PVDMA pin of a block evicted before (0s: block_pin)"),
    NONNEG("unpin", CFG_TIME, unpin_ps, "0s", "PVDMA unpin of one block at an eviction"),
    NONNEG("map_cache", CFG_INT, map_cache, "0",
           "PVDMA Map Cache capacity, blocks (0: unbounded, papers.md 2(f)); LRU eviction"),
    NONNEG("lookup", CFG_TIME, lookup_ps, "100ns", "PVDMA Map Cache hit (papers.md 2(e))"),
    POSMAX("block", CFG_SIZE, block_bytes, "2MiB", 0x1p40, "PVDMA block, a power of two"),
    POSMAX("page", CFG_SIZE, page_bytes, "4KiB", 0x1p40, "doorbell page, a power of two"),
    {.name = "doorbell", .type = CFG_ENUM, .off = F(doorbell), .def = "shm", .choices = db_names,
     .help = "vDB page in guest RAM (Fig. 5 hazard) or in the shm I/O region (the fix)"},
    POS("sample_interval", CFG_TIME, sample_ps, "1s", 0, "pinned-bytes sampling period"),
    {.name = "workload", .type = CFG_MAPOF, .def = "{}", .sub = workload_keys,
     .help = "the container's memory registrations"},
    {0},
};

static const cfg_key gdr_keys[] = {
    {.name = "messages", .type = CFG_NODE, .off = F(messages),
     .def = "[4KiB, 16KiB, 64KiB, 256KiB, 1MiB, 2MiB, 4MiB, 8MiB, 16MiB, 32MiB, 64MiB, "
            "128MiB, 256MiB]",
     .help = "message sizes (Fig. 8: 4 KB - 256 MB)"},
    {.name = "paths", .type = CFG_NODE, .off = F(paths), .def = "[ats_atc, emtt, hyv_masq]",
     .help = "translation paths: ats_atc, emtt, hyv_masq"},
    POSMAX("connections", CFG_INT, connections, "16", 1 << 30, "QPs written round robin (Fig. 8: 16)"),
    POS("port_rate", CFG_RATE, port_bps, "200Gbps", 0, "RNIC port rate on the wire (CX6: 200G)"),
    POSMAX("mtu", CFG_SIZE, mtu, "4096B", 0x1p20, "RDMA payload per packet (4096)"),
    NONNEG("frame_overhead", CFG_SIZE, frame_overhead, "82B",
           "wire bytes per packet besides payload (Ethernet 38, IPv4 20, UDP 8, BTH 12, ICRC 4)"),
    POSMAX("outstanding", CFG_INT, outstanding, "20", 1 << 20, "DMA requests in flight"),
    POS("dma_latency", CFG_TIME, dma_ps, "2.8us", 0, "request latency with a translation"),
    NONNEG("ats_rtt", CFG_TIME, ats_ps, "1us", "ATC miss: PCIe round trip to the IOMMU"),
    NONNEG("walk", CFG_TIME, walk_ps, "0.5us", "IOMMU cache miss: page walk"),
    POSMAX("atc_entries", CFG_INT, atc_entries, "8192", 1 << 26, "ATC capacity, pages"),
    POSMAX("iommu_entries", CFG_INT, iommu_entries, "131072", 1 << 26, "IOMMU cache coverage, pages"),
    POS("rc_rate", CFG_RATE, rc_bps, "141Gbps", 0, "root-complex GDR ceiling (Fig. 14)"),
    POSMAX("mtt_entries", CFG_INT, mtt_entries, "4194304", 1 << 28,
           "eMTT: translations cached on the RNIC, pages (LRU)"),
    NONNEG("mtt_miss", CFG_TIME, mtt_miss_ps, "1us", "eMTT miss: read of the entry from host memory"),
    POS("page", CFG_SIZE, gpage_bytes, "4KiB", 0, "translation page = DMA request size"),
    {.name = "memory", .type = CFG_ENUM, .off = F(gdr_memory), .def = "gpu",
     .choices = mem_names, .help = "buffers in GPU memory (GDR) or host memory"},
    POS("min_requests", CFG_INT, min_requests, "65536", 0, "requests per measurement at least"),
    {0},
};

static const cfg_key dev_keys[] = {
    POS("rnics", CFG_INT, rnics, "4", 0, "RNICs per server (papers.md 2(a): 4)"),
    POS("switches", CFG_INT, switches, "4", 0, "PCIe switches per server (4)"),
    POS("lut_entries", CFG_INT, lut_entries, "32", 0, "BDFs per switch LUT (32)"),
    POS("vf_max", CFG_INT, vf_max, "127", 0, "VFs per RNIC at most"),
    NONNEG("vf_current", CFG_INT, vf_current, "0", "VFs per RNIC configured now"),
    NONNEG("vf_memory", CFG_SIZE, vf_mem, "2.4GB", "memory per VF (63 queues: 2.4 GB)"),
    NONNEG("vf_create", CFG_TIME, vf_create_ps, "0s",
           "attaching one existing VF to a container (not measured: 0s)"),
    {.name = "vf_enable_counts", .type = CFG_NODE, .off = F(vf_enable_n), .def = "[4, 8, 16, 125]",
     .help = "VF counts of the measured enable times (sriov-network-operator#1015, CX6 Lx)"},
    {.name = "vf_enable_times", .type = CFG_NODE, .off = F(vf_enable_t),
     .def = "[1.6s, 2.6s, 4.5s, 65s]", .help = "time until that many VFs are ready"},
    POS("vdev_max", CFG_INT, vdev_max, "65536", 0, "vStellar devices per server (64K)"),
    NONNEG("vdev_memory", CFG_SIZE, vdev_mem, "0B", "memory per vStellar device at creation"),
    NONNEG("vdev_create", CFG_TIME, vdev_create_ps, "1.5s", "creating one vStellar device"),
    POS("parallel", CFG_INT, parallel, "1", 0, "devices created at once"),
    {.name = "containers", .type = CFG_NODE, .off = F(containers),
     .def = "[{name: inference, count: 128, devices: 1, gdr: true}]",
     .help = "container mix: list of {name, count, devices, gdr}"},
    {0},
};

static const cfg_key st_keys[] = {
    {.name = "experiment", .type = CFG_ENUM, .off = F(experiment), .def = "startup",
     .choices = exp_names, .help = "startup (Fig. 6), gdr (Figs. 8, 14) or devices"},
    {.name = "pin_calibration", .type = CFG_STR, .off = F(calibration), .flags = CFG_OPTIONAL,
     .help = "calibration file from `aisim calibrate pin` (relative to the scenario)"},
    {.name = "startup", .type = CFG_MAPOF, .def = "{}", .sub = startup_keys,
     .help = "container start-up: full pinning against PVDMA"},
    {.name = "gdr", .type = CFG_MAPOF, .def = "{}", .sub = gdr_keys,
     .help = "GDR address translation: ATS/ATC, eMTT, HyV/MasQ"},
    {.name = "devices", .type = CFG_MAPOF, .def = "{}", .sub = dev_keys,
     .help = "virtual devices: SR-IOV against vStellar"},
    {0},
};

/* ---- state ---- */

typedef struct st_region {
    const char *name;
    int64_t gpa, len;
} st_region;

enum { R_WEIGHTS, R_OPTIM, R_ACT, R_NCCL, R_REQ, R_COUNT };
static const char *const region_names[R_COUNT] = {"weights", "optimizer", "activations",
                                                  "nccl", "requests"};

typedef struct st_ctr {
    struct st_sim *owner;
    int64_t mem;                /* bytes */
    bool full;                  /* full pinning, else PVDMA */
    stellar_mapcache mc;
    int64_t hv_ps, pin_ps, ready_ps;
    int64_t busy_until;         /* the DMA path is serial */
    int64_t step;               /* iterations or requests done */
    int64_t end_ps;             /* last access done */
    bool done;
    /* stats */
    uint64_t dmas, miss_dmas;
    double miss_lat_sum_ps, miss_lat_max_ps, hit_lat_sum_ps;
    int64_t first_access_ps;    /* first access (the model load) complete, from launch */
    int64_t first_access_lat;   /* ... from its issue */
    int64_t pin_stall_ps;       /* data-path time spent pinning */
    size_t peak_blocks;
} st_ctr;

typedef struct st_sample {
    int ctr;
    int64_t t_ps;
    int64_t pinned;
} st_sample;

typedef struct st_sim {
    st_cfg c;
    stellar_pin_params pp;
    bool calibrated;
    stellar_cal cal;
    char cal_path[1024];
    /* startup */
    int64_t *mem;
    size_t nmem;
    st_ctr *ctr;                /* 2 * nmem: [i][full=0 | pvdma=1] */
    size_t nctr, ndone;
    st_region reg[R_COUNT];
    st_sample *samples;
    size_t nsamples, cap_samples;
    stellar_hazard hazard;
    /* gdr */
    int64_t *msg;
    size_t nmsg;
    int path[STELLAR_GDR_NPATHS];
    size_t npath;
    stellar_gdr_params gp;
    stellar_gdr_result *gres;   /* npath x nmsg */
    /* devices */
    stellar_server srv;
    stellar_class *cls;
    size_t ncls;
    stellar_plan plan[2];       /* sriov, vstellar */
    int64_t *vf_n, *vf_t;       /* the measured VF enable points */
    size_t nvf;
    sim *sm;                    /* the engine, polled in long accesses */
} st_sim;

/* The longest simulated time an experiment may reach: 2^62 ps (53 days),
 * half of what an int64_t holds, so that sums of two such times fit. */
#define ST_HORIZON_PS (INT64_C(1) << 62)

/* A region at most 64 PiB; a container's Map Cache at most 2^27 blocks (a
 * byte each); at most 10^7 pinned-bytes samples (24 bytes each). */
#define ST_MAX_REGION (INT64_C(1) << 56)
#define ST_MAX_BLOCKS (INT64_C(1) << 27)
#define ST_MAX_SAMPLES 1e7

static bool pow2(int64_t x) { return x > 0 && !(x & (x - 1)); }

static int need_pow2(cfg_node *sec, const char *path, const char *key, int64_t v, err *e)
{
    char p[256], b[48];
    if (pow2(v))
        return 0;
    return cfg_err(e, AISIM_EINVAL, cfg_get(sec, key), cfg_path(p, sizeof p, path, key),
                   "expected a power of two, found %s", units_format(UNIT_SIZE, v, b, sizeof b));
}

/* Reads list `n` at `path` of scalars converted by key k (a 64-bit field)
 * into a new array. */
static int read_list(cfg_node *n, const char *path, const char *what, const cfg_key *k,
                     int64_t **vals, size_t *len, err *e)
{
    long cnt = cfg_expect_list(n, path, what, e);
    if (cnt < 0)
        return (int)cnt;
    if (cnt == 0)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a non-empty list of %s, found []",
                       what);
    *vals = xcalloc((size_t)cnt, sizeof **vals);
    *len = (size_t)cnt;
    for (long i = 0; i < cnt; i++) {
        char p[256];
        int v = 0, r;
        void *field = k->type == CFG_ENUM ? (void *)&v : (void *)&(*vals)[i];
        if ((r = cfg_value(cfg_at(n, (size_t)i), cfg_path_index(p, sizeof p, path, (size_t)i), k,
                           field, e)))
            return r;
        if (k->type == CFG_ENUM)
            (*vals)[i] = v;
    }
    return 0;
}

/* Upper bound of the lookups of one access of len bytes (access_region):
 * each DMA looks up every block it spans.  Unbounded, first pins come on
 * top, once per block of the container at most (nothing is evicted); with a
 * bounded Map Cache every block spanned may cost a (re-)pin and an
 * eviction. */
static double access_bound_ps(const st_sim *s, int64_t len)
{
    const st_cfg *c = &s->c;
    double dmas = ceil((double)len / (double)c->dma_bytes);
    double spans = ceil((double)c->dma_bytes / (double)c->block_bytes) + 1;
    double per = (double)s->pp.lookup_ps;
    if (c->map_cache)
        per += fmax((double)s->pp.block_pin_ps, (double)s->pp.repin_ps) + (double)s->pp.unpin_ps;
    return dmas * spans * per;
}

/* The start-up experiment's times are int64_t ps and its Map Caches hold a
 * byte per block: bound both, and the samples, before start() computes
 * them (a huge memory size used to overflow the times and the allocation). */
static int check_startup_bounds(const st_sim *s, cfg_node *su, const char *sp, err *e)
{
    const st_cfg *c = &s->c;
    char p[256], b[48];
    double ready = 0;
    for (size_t i = 0; i < s->nmem; i++) {
        double blocks = ceil((double)s->mem[i] / (double)c->block_bytes);
        if (blocks > (double)ST_MAX_BLOCKS) {
            cfg_path(p, sizeof p, sp, "memory");
            return cfg_err(e, AISIM_EINVAL, cfg_get(su, "memory"), p,
                           "expected at most %lld blocks of %s per container, found %.4g in "
                           "memory[%zu] (%s)", (long long)ST_MAX_BLOCKS,
                           units_format(UNIT_SIZE, c->block_bytes, b, sizeof b), blocks, i,
                           units_format(UNIT_SIZE, s->mem[i], (char[48]){0}, 48));
        }
        double gib = (double)s->mem[i] / (double)STELLAR_GIB;
        double t = (double)s->pp.hv_base_ps +
                   gib * ((double)s->pp.hv_per_gib_ps + (double)s->pp.pin_per_gib_ps) +
                   blocks * (double)s->pp.block_pin_ps;
        ready = t > ready ? t : ready;
    }
    double step;
    int64_t n;
    if (c->wl == 0) {
        step = (double)c->iteration_ps + access_bound_ps(s, s->reg[R_NCCL].len) +
               access_bound_ps(s, s->reg[R_ACT].len);
        if (c->checkpoint_every)
            step += access_bound_ps(s, s->reg[R_WEIGHTS].len) +
                    access_bound_ps(s, s->reg[R_OPTIM].len);
        n = c->iterations;
    } else {
        step = (double)c->request_ps + access_bound_ps(s, c->request_bytes);
        n = c->requests;
    }
    double h = ready + access_bound_ps(s, s->reg[R_WEIGHTS].len) + (double)n * step;
    if (h >= (double)ST_HORIZON_PS)
        return cfg_err(e, AISIM_EINVAL, su, sp,
                       "expected an experiment that fits in simulated time (%.0f days), found "
                       "one that may take %.4g s (containers ready and pinned after up to %.4g s, then "
                       "%lld steps of up to %.4g s)", (double)ST_HORIZON_PS / 86400e12,
                       h * 1e-12, ready * 1e-12, (long long)n, step * 1e-12);
    double samples = h / (double)c->sample_ps * (double)(2 * s->nmem);
    if (samples > ST_MAX_SAMPLES)
        return cfg_err(e, AISIM_EINVAL, cfg_get(su, "sample_interval"),
                       cfg_path(p, sizeof p, sp, "sample_interval"),
                       "expected an interval giving at most %.0f samples over the experiment "
                       "(up to %.4g s, %zu containers), found %s (%.4g samples)",
                       ST_MAX_SAMPLES, h * 1e-12, 2 * s->nmem,
                       units_format(UNIT_TIME, c->sample_ps, b, sizeof b), samples);
    return 0;
}

static int configure_startup(st_sim *s, cfg_node *sec, const char *path, const model_env *env,
                             err *e)
{
    st_cfg *c = &s->c;
    char sp[256], p[256];
    cfg_node *su = cfg_get(sec, "startup");
    cfg_path(sp, sizeof sp, path, "startup");
    static const cfg_key mem_key = {.name = "memory", .type = CFG_SIZE,
                                    .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0};
    int r = read_list(c->memory, cfg_path(p, sizeof p, sp, "memory"), "sizes such as 32GiB",
                      &mem_key, &s->mem, &s->nmem, e);
    if (r || (r = need_pow2(su, sp, "block", c->block_bytes, e)) ||
        (r = need_pow2(su, sp, "page", c->page_bytes, e)))
        return r;
    if (c->page_bytes > c->block_bytes)
        return cfg_err(e, AISIM_EINVAL, cfg_get(su, "page"), cfg_path(p, sizeof p, sp, "page"),
                       "expected at most the block size (%lld bytes), found %lld bytes",
                       (long long)c->block_bytes, (long long)c->page_bytes);
    s->pp = (stellar_pin_params){.hv_base_ps = c->hv_base_ps, .hv_per_gib_ps = c->hv_per_gib_ps,
                                 .pin_per_gib_ps = c->pin_per_gib_ps,
                                 .block_pin_ps = c->block_pin_ps, .repin_ps = c->repin_ps,
                                 .unpin_ps = c->unpin_ps, .lookup_ps = c->lookup_ps,
                                 .block_bytes = c->block_bytes};
    if (c->calibration) {
        if (c->calibration[0] == '/' || !env->base_dir || !*env->base_dir)
            snprintf(s->cal_path, sizeof s->cal_path, "%s", c->calibration);
        else
            snprintf(s->cal_path, sizeof s->cal_path, "%s/%s", env->base_dir, c->calibration);
        cfg_node *cn = cfg_get(sec, "pin_calibration");
        cfg_path(p, sizeof p, path, "pin_calibration");
        r = stellar_cal_load(s->cal_path, &s->cal, e);
        if (r == AISIM_ENOENT || r == AISIM_EIO) {
            char msg[sizeof e->msg];
            snprintf(msg, sizeof msg, "%s", e->msg);
            return cfg_err(e, AISIM_EINVAL, cn, p, "%s", msg);
        }
        if (r)
            return r;
        if (s->cal.block_bytes != c->block_bytes)
            return cfg_err(e, AISIM_EINVAL, cfg_get(su, "block"),
                           cfg_path(p, sizeof p, sp, "block"),
                           "expected the calibration's block size (%lld bytes, %s), found "
                           "%lld bytes", (long long)s->cal.block_bytes, s->cal_path,
                           (long long)c->block_bytes);
        s->calibrated = true;
        s->pp.pin_per_gib_ps = s->cal.pin_per_gib_ps;
        s->pp.block_pin_ps = s->cal.block_pin_ps;
        s->pp.lookup_ps = s->cal.lookup_ps;
        s->pp.repin_ps = s->cal.repin_ps;
        s->pp.unpin_ps = stellar_full_pin_ps(&(stellar_pin_params){.pin_per_gib_ps =
                                                 s->cal.unpin_per_gib_ps}, c->block_bytes);
        /* the resolved scenario shows the values used */
        char b[48];
        cfg_doc *d = cfg_node_doc(su);
        if ((r = cfg_put(d, su, "pin_per_gib", units_format(UNIT_TIME, s->pp.pin_per_gib_ps, b,
                                                            sizeof b), e)) ||
            (r = cfg_put(d, su, "block_pin", units_format(UNIT_TIME, s->pp.block_pin_ps, b,
                                                          sizeof b), e)) ||
            (r = cfg_put(d, su, "lookup", units_format(UNIT_TIME, s->pp.lookup_ps, b, sizeof b),
                         e)) ||
            (r = cfg_put(d, su, "repin", units_format(UNIT_TIME, s->pp.repin_ps, b, sizeof b),
                         e)) ||
            (r = cfg_put(d, su, "unpin", units_format(UNIT_TIME, s->pp.unpin_ps, b, sizeof b),
                         e)))
            return r;
    }
    if (s->pp.block_pin_ps == 0)
        s->pp.block_pin_ps = stellar_full_pin_ps(&s->pp, c->block_bytes);
    if (s->pp.repin_ps == 0)
        s->pp.repin_ps = s->pp.block_pin_ps;
    /* a DMA must fit in a bounded Map Cache */
    int64_t span = (c->dma_bytes + c->block_bytes - 1) / c->block_bytes + 1;
    if (c->map_cache && c->map_cache < span)
        return cfg_err(e, AISIM_EINVAL, cfg_get(su, "map_cache"),
                       cfg_path(p, sizeof p, sp, "map_cache"),
                       "expected 0 (unbounded) or at least the %lld blocks one DMA of %lld "
                       "bytes may span, found %lld", (long long)span, (long long)c->dma_bytes,
                       (long long)c->map_cache);
    /* the workload's regions, packed from GPA 0, page-aligned; their sizes
     * are products of scenario numbers, bounded before they become int64_t */
    double dlen[R_COUNT] = {0};
    dlen[R_WEIGHTS] = c->params * c->weight_bpp;
    if (c->wl == 0) {
        dlen[R_OPTIM] = c->params * c->optim_bpp;
        dlen[R_ACT] = (double)c->activation_bytes;
        dlen[R_NCCL] = (double)c->nccl_buffers * (double)c->nccl_bytes;
    } else {
        dlen[R_REQ] = (double)c->request_buffers * (double)c->request_bytes;
    }
    int64_t len[R_COUNT] = {0};
    for (int k = 0; k < R_COUNT; k++) {
        if (dlen[k] > (double)ST_MAX_REGION) {
            cfg_path(p, sizeof p, sp, "workload");
            return cfg_err(e, AISIM_EINVAL, cfg_get(su, "workload"), p,
                           "expected a %s region of at most %lld bytes (64 PiB), found %.4g "
                           "bytes", region_names[k], (long long)ST_MAX_REGION, dlen[k]);
        }
        len[k] = (int64_t)dlen[k];
    }
    int64_t at = 0;
    for (int k = 0; k < R_COUNT; k++) {
        s->reg[k] = (st_region){region_names[k], at, len[k]};
        at += (len[k] + c->page_bytes - 1) / c->page_bytes * c->page_bytes;
    }
    for (size_t i = 0; i < s->nmem; i++)
        if (at > s->mem[i]) {
            char b2[48];
            cfg_path(p, sizeof p, sp, "workload");
            return cfg_err(e, AISIM_EINVAL, cfg_get(su, "workload"), p,
                           "expected registrations that fit in every container, found "
                           "%.2f GiB of registrations for a %s container (memory[%zu])",
                           (double)at / (double)STELLAR_GIB,
                           units_format(UNIT_SIZE, s->mem[i], b2, sizeof b2), i);
        }
    return check_startup_bounds(s, su, sp, e);
}

static int configure_gdr(st_sim *s, cfg_node *sec, const char *path, err *e)
{
    st_cfg *c = &s->c;
    char gp[256], p[256];
    cfg_node *g = cfg_get(sec, "gdr");
    cfg_path(gp, sizeof gp, path, "gdr");
    static const cfg_key msg_key = {.name = "messages", .type = CFG_SIZE,
                                    .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0};
    static const cfg_key path_key = {.name = "paths", .type = CFG_ENUM,
                                     .choices = stellar_gdr_path_names};
    int64_t *pv = NULL;
    size_t np = 0;
    int r = read_list(c->messages, cfg_path(p, sizeof p, gp, "messages"), "sizes such as 1MiB",
                      &msg_key, &s->msg, &s->nmsg, e);
    if (!r)
        r = read_list(c->paths, cfg_path(p, sizeof p, gp, "paths"),
                      "paths (ats_atc, emtt, hyv_masq)", &path_key, &pv, &np, e);
    if (!r)
        r = need_pow2(g, gp, "page", c->gpage_bytes, e);
    if (!r && np > STELLAR_GDR_NPATHS)
        r = cfg_err(e, AISIM_EINVAL, c->paths, p, "expected at most %d paths, found %zu",
                    STELLAR_GDR_NPATHS, np);
    for (size_t i = 0; !r && i < np; i++)
        s->path[s->npath++] = (int)pv[i];
    free(pv);
    if (r)
        return r;
    s->gp = (stellar_gdr_params){
        .line_bps = stellar_goodput_bps(c->port_bps, c->mtu, c->frame_overhead), .page_bytes = c->gpage_bytes, .outstanding = (int)c->outstanding,
        .dma_ps = c->dma_ps, .ats_rtt_ps = c->ats_ps, .walk_ps = c->walk_ps,
        .atc_entries = (size_t)c->atc_entries, .iommu_entries = (size_t)c->iommu_entries,
        .rc_bps = c->rc_bps, .mtt_entries = (size_t)c->mtt_entries,
        .mtt_miss_ps = c->mtt_miss_ps, .connections = (int)c->connections, .host_memory = c->gdr_memory};
    /* every time of the recurrence must fit an int64_t (a rate of a few bps
     * took it past 2^63 ps and reported negative throughput) */
    for (size_t a = 0; a < s->npath; a++)
        for (size_t m = 0; m < s->nmsg; m++) {
            enum stellar_gdr_path gpath = (enum stellar_gdr_path)s->path[a];
            double h = stellar_gdr_horizon_ps(&s->gp, gpath, s->msg[m],
                                              (uint64_t)c->min_requests);
            if (h < (double)ST_HORIZON_PS)
                continue;
            char b[48];
            bool rc = gpath == STELLAR_GDR_RC && c->rc_bps < s->gp.line_bps;
            const char *key = rc ? "rc_rate" : "port_rate";
            return cfg_err(e, AISIM_EINVAL, cfg_get(g, key), cfg_path(p, sizeof p, gp, key),
                           "expected a rate at which the measurement fits in simulated time "
                           "(%.0f days), found %s: messages[%zu] (%s) on path %s takes %.4g "
                           "requests of up to %.4g s each", (double)ST_HORIZON_PS / 86400e12,
                           units_format(UNIT_RATE, rc ? c->rc_bps : c->port_bps, b, sizeof b),
                           m, units_format(UNIT_SIZE, s->msg[m], (char[48]){0}, 48),
                           stellar_gdr_path_names[gpath],
                           stellar_gdr_requests(&s->gp, s->msg[m], (uint64_t)c->min_requests),
                           h / stellar_gdr_requests(&s->gp, s->msg[m],
                                                    (uint64_t)c->min_requests) * 1e-12);
        }
    return 0;
}

typedef struct cls_bind {
    const char *name;
    int64_t count, devices;
    bool gdr;
} cls_bind;

static const cfg_key cls_keys[] = {
    {.name = "name", .type = CFG_STR, .off = offsetof(cls_bind, name), .help = "class name"},
    {.name = "count", .type = CFG_INT, .off = offsetof(cls_bind, count),
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e6, .help = "containers"},
    {.name = "devices", .type = CFG_INT, .off = offsetof(cls_bind, devices), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 64, .help = "RDMA devices per container"},
    {.name = "gdr", .type = CFG_BOOL, .off = offsetof(cls_bind, gdr), .def = "true",
     .help = "wants GPUDirect RDMA"},
    {0},
};

static int configure_devices(st_sim *s, cfg_node *sec, const char *path, err *e)
{
    st_cfg *c = &s->c;
    char dp[256], p[256];
    cfg_path(dp, sizeof dp, path, "devices");
    cfg_path(p, sizeof p, dp, "containers");
    long n = cfg_expect_list(c->containers, p, "container classes", e);
    if (n < 0)
        return (int)n;
    cfg_node *dn = cfg_get(sec, "devices");
    static const cfg_key n_key = {.name = "vf_enable_counts", .type = CFG_INT,
                                  .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1 << 20};
    static const cfg_key t_key = {.name = "vf_enable_times", .type = CFG_TIME,
                                  .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0};
    char kp[256];
    size_t nt = 0;
    int rr = read_list(c->vf_enable_n, cfg_path(kp, sizeof kp, dp, "vf_enable_counts"),
                       "VF counts such as 16", &n_key, &s->vf_n, &s->nvf, e);
    if (!rr)
        rr = read_list(c->vf_enable_t, cfg_path(kp, sizeof kp, dp, "vf_enable_times"),
                       "times such as 4.5s", &t_key, &s->vf_t, &nt, e);
    if (!rr && nt != s->nvf)
        rr = cfg_err(e, AISIM_EINVAL, cfg_get(dn, "vf_enable_times"), kp,
                     "expected one time per entry of vf_enable_counts (%zu), found %zu",
                     s->nvf, nt);
    for (size_t i = 1; !rr && i < s->nvf; i++)
        if (s->vf_n[i] <= s->vf_n[i - 1] || s->vf_t[i] < s->vf_t[i - 1]) {
            bool t = s->vf_n[i] > s->vf_n[i - 1];
            const char *key = t ? "vf_enable_times" : "vf_enable_counts";
            char ip[256];
            cfg_path_index(ip, sizeof ip, cfg_path(kp, sizeof kp, dp, key), i);
            rr = cfg_err(e, AISIM_EINVAL, cfg_at(t ? c->vf_enable_t : c->vf_enable_n, i), ip,
                         "expected increasing VF counts with non-decreasing times, found "
                         "entry %zu (%lld VFs) after entry %zu (%lld VFs)", i,
                         (long long)s->vf_n[i], i - 1, (long long)s->vf_n[i - 1]);
        }
    if (rr)
        return rr;
    s->cls = xcalloc((size_t)n + 1, sizeof *s->cls);
    for (long i = 0; i < n; i++) {
        char ip[256];
        cls_bind b = {0};
        int r = cfg_bind(cfg_at(c->containers, (size_t)i),
                         cfg_path_index(ip, sizeof ip, p, (size_t)i), cls_keys, &b, e);
        if (r)
            return r;
        s->cls[s->ncls++] = (stellar_class){b.name, (int)b.count, (int)b.devices, b.gdr};
    }
    s->srv = (stellar_server){
        .rnics = (int)c->rnics, .switches = (int)c->switches, .lut_entries = (int)c->lut_entries,
        .vf_max = (int)c->vf_max, .vf_current = (int)c->vf_current, .vf_mem_bytes = c->vf_mem,
        .vf_create_ps = c->vf_create_ps, .vf_enable_n = s->vf_n, .vf_enable_ps = s->vf_t,
        .vf_enable_points = s->nvf,
        .vdev_max = (int)c->vdev_max, .vdev_mem_bytes = c->vdev_mem,
        .vdev_create_ps = c->vdev_create_ps, .parallel = (int)c->parallel};
    return 0;
}

static int st_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
{
    st_sim *s = st;
    int r = cfg_bind(sec, path, st_keys, &s->c, e);
    if (r)
        return r;
    /* every section is checked, whichever experiment runs */
    if ((r = configure_startup(s, sec, path, env, e)) || (r = configure_gdr(s, sec, path, e)) ||
        (r = configure_devices(s, sec, path, e)))
        return r;
    return 0;
}

/* ---- startup events ---- */

static void sample(st_sim *s, int i, int64_t t, int64_t pinned)
{
    if (s->nsamples == s->cap_samples) {
        s->cap_samples = s->cap_samples ? 2 * s->cap_samples : 256;
        s->samples = xrealloc(s->samples, s->cap_samples * sizeof *s->samples);
    }
    s->samples[s->nsamples++] = (st_sample){i, t, pinned};
}

static int64_t pinned_now(const st_ctr *k, int64_t t)
{
    if (k->full && t < k->ready_ps) {
        if (t <= k->hv_ps)
            return 0;
        return (int64_t)((double)k->mem * (double)(t - k->hv_ps) / (double)k->pin_ps);
    }
    return (int64_t)k->mc.pinned_blocks * k->mc.block_bytes;
}

/* One access to region r: DMAs of c.dma_bytes, each through the Map Cache
 * after the previous one.  Returns when the last completes. */
static int64_t access_region(st_ctr *k, const st_region *r, int64_t now)
{
    const st_sim *s = k->owner;
    const stellar_pin_params *p = &s->pp;
    int64_t t = now > k->busy_until ? now : k->busy_until;
    for (int64_t off = 0; off < r->len; off += s->c.dma_bytes) {
        if (sim_poll(s->sm, 1))
            break;              /* a signal: the run is discarded */
        int64_t len = r->len - off < s->c.dma_bytes ? r->len - off : s->c.dma_bytes;
        uint64_t rep0 = k->mc.repins, ev0 = k->mc.evictions;
        size_t hits, miss = stellar_mc_touch(&k->mc, r->gpa + off, len, &hits);
        int64_t re = (int64_t)(k->mc.repins - rep0), ev = (int64_t)(k->mc.evictions - ev0);
        int64_t pin = ((int64_t)miss - re) * p->block_pin_ps + re * p->repin_ps +
                      ev * p->unpin_ps;
        int64_t cost = pin + (int64_t)(miss + hits) * p->lookup_ps;
        k->dmas++;
        if (miss) {
            k->miss_dmas++;
            k->miss_lat_sum_ps += (double)cost;
            if (cost > k->miss_lat_max_ps)
                k->miss_lat_max_ps = (double)cost;
        } else {
            k->hit_lat_sum_ps += (double)cost;
        }
        k->pin_stall_ps += pin;
        t += cost;
    }
    if (k->mc.pinned_blocks > k->peak_blocks)
        k->peak_blocks = k->mc.pinned_blocks;
    k->busy_until = t;
    return t;
}

static void ev_step(sim *sm, void *obj, uint64_t arg);

static void finish(st_ctr *k, int64_t t)
{
    k->done = true;
    k->end_ps = t;
    k->owner->ndone++;
}

static void ev_ready(sim *sm, void *obj, uint64_t arg)
{
    (void)arg;
    st_ctr *k = obj;
    st_sim *s = k->owner;
    int64_t now = sim_now(sm);
    if (k->full)
        stellar_mc_pin_all(&k->mc);
    sample(s, (int)(k - s->ctr), now, pinned_now(k, now));
    /* the first registration: the model load DMAs the whole weights region */
    int64_t done = access_region(k, &s->reg[R_WEIGHTS], now);
    k->first_access_ps = done;
    k->first_access_lat = done - now;
    int64_t period = s->c.wl == 0 ? s->c.iteration_ps : s->c.request_ps;
    sim_schedule(sm, done + period, ev_step, k, 0);
}

static void ev_step(sim *sm, void *obj, uint64_t arg)
{
    (void)arg;
    st_ctr *k = obj;
    st_sim *s = k->owner;
    const st_cfg *c = &s->c;
    int64_t now = sim_now(sm), done;
    k->step++;
    if (c->wl == 0) {
        access_region(k, &s->reg[R_NCCL], now);
        done = access_region(k, &s->reg[R_ACT], now);
        if (c->checkpoint_every && k->step % c->checkpoint_every == 0) {
            access_region(k, &s->reg[R_WEIGHTS], now);
            done = access_region(k, &s->reg[R_OPTIM], now);
        }
    } else {
        st_region one = s->reg[R_REQ];
        one.gpa += ((k->step - 1) % c->request_buffers) * c->request_bytes;
        one.len = c->request_bytes;
        done = access_region(k, &one, now);
    }
    int64_t n = c->wl == 0 ? c->iterations : c->requests;
    if (k->step >= n) {
        finish(k, done);
        return;
    }
    int64_t period = c->wl == 0 ? c->iteration_ps : c->request_ps;
    sim_schedule(sm, (done > now ? done : now) + period, ev_step, k, 0);
}

static void ev_sample(sim *sm, void *obj, uint64_t arg)
{
    (void)arg;
    st_sim *s = obj;
    int64_t now = sim_now(sm);
    for (size_t i = 0; i < s->nctr; i++)
        sample(s, (int)i, now, pinned_now(&s->ctr[i], now));
    if (s->ndone == s->nctr) {
        sim_stop(sm);
        return;
    }
    sim_schedule(sm, now + s->c.sample_ps, ev_sample, s, 0);
}

static void ev_gdr(sim *sm, void *obj, uint64_t arg)
{
    (void)arg;
    st_sim *s = obj;
    s->gres = xcalloc(s->npath * s->nmsg, sizeof *s->gres);
    s->gp.poll = sm;            /* one event computes it all: a signal cuts it */
    for (size_t a = 0; a < s->npath && !sim_was_cut(sm); a++)
        for (size_t m = 0; m < s->nmsg && !sim_was_cut(sm); m++)
            stellar_gdr_run(&s->gp, (enum stellar_gdr_path)s->path[a], s->msg[m],
                            (uint64_t)s->c.min_requests, &s->gres[a * s->nmsg + m]);
    sim_stop(sm);
}

static void ev_devices(sim *sm, void *obj, uint64_t arg)
{
    (void)arg;
    st_sim *s = obj;
    stellar_plan_sriov(&s->srv, s->cls, s->ncls, &s->plan[0]);
    stellar_plan_vstellar(&s->srv, s->cls, s->ncls, &s->plan[1]);
    sim_stop(sm);
}

static int st_start(void *st, sim *sm, err *e)
{
    (void)e;
    st_sim *s = st;
    if (s->c.experiment == EXP_GDR) {
        sim_schedule(sm, 0, ev_gdr, s, 0);
        return 0;
    }
    if (s->c.experiment == EXP_DEVICES) {
        sim_schedule(sm, 0, ev_devices, s, 0);
        return 0;
    }
    s->sm = sm;
    stellar_fig5((enum stellar_db_layout)s->c.doorbell, s->c.block_bytes, s->c.page_bytes,
                 &s->hazard);
    s->nctr = 2 * s->nmem;
    s->ctr = xcalloc(s->nctr, sizeof *s->ctr);
    for (size_t i = 0; i < s->nctr; i++) {
        st_ctr *k = &s->ctr[i];
        k->owner = s;
        k->mem = s->mem[i / 2];
        k->full = i % 2 == 0;
        stellar_mc_init(&k->mc, k->mem, s->c.block_bytes);
        if (!k->full)
            stellar_mc_set_capacity(&k->mc, (size_t)s->c.map_cache);
        k->hv_ps = stellar_hv_ps(&s->pp, k->mem);
        k->pin_ps = k->full ? stellar_full_pin_ps(&s->pp, k->mem) : 0;
        k->ready_ps = k->hv_ps + k->pin_ps;
        sim_schedule(sm, k->ready_ps, ev_ready, k, 0);
    }
    sim_schedule(sm, 0, ev_sample, s, 0);
    return 0;
}

static double st_progress(const void *st, const sim *sm)
{
    (void)sm;
    const st_sim *s = st;
    return s->c.experiment == EXP_STARTUP && s->nctr ? (double)s->ndone / (double)s->nctr : -1;
}

/* ---- report ---- */

static void csv_num(FILE *f, double v, const char *sep)
{
    char b[40];
    out_fmt_double(b, sizeof b, v);
    fprintf(f, "%s%s", b, sep);
}

/* Fig. 6 of the paper: start-up (s) with full pinning and with PVDMA. */
static bool fig6(int64_t mem, double *full_s, double *pvdma_s)
{
    static const struct { int64_t gib; double full, pv; } pts[] = {
        {32, 14, 9}, {160, 37, 9}, {1638, 305, 20}};
    for (size_t i = 0; i < sizeof pts / sizeof *pts; i++)
        if (mem == pts[i].gib * STELLAR_GIB) {
            *full_s = pts[i].full;
            *pvdma_s = pts[i].pv;
            return true;
        }
    return false;
}

static int report_startup(st_sim *s, out *o, json_t *sum, err *e)
{
    FILE *f = out_file(o, "startup.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "memory_gib,mode,hypervisor_s,pin_s,startup_s,paper_startup_s,speedup,"
               "first_access_s,first_access_latency_s,pinned_at_ready_gib,peak_pinned_gib,"
               "dmas,miss_dmas,miss_latency_mean_us,miss_latency_max_us,hit_latency_mean_us,"
               "pin_stall_s,evictions,repins,startup_lo_s,startup_hi_s\n");
    json_t *rows = json_array();
    double best = 0;
    for (size_t i = 0; i < s->nctr; i++) {
        const st_ctr *k = &s->ctr[i];
        const st_ctr *full = &s->ctr[i & ~(size_t)1];
        double gib = (double)k->mem / (double)STELLAR_GIB;
        double pf, pv, paper = NAN;
        if (fig6(k->mem, &pf, &pv))
            paper = k->full ? pf : pv;
        double speed = (double)full->ready_ps / (double)k->ready_ps;
        double pinned_ready = k->full ? gib : 0;
        double miss_mean = k->miss_dmas ? k->miss_lat_sum_ps / (double)k->miss_dmas : NAN;
        uint64_t hits = k->dmas - k->miss_dmas;
        double hit_mean = hits ? k->hit_lat_sum_ps / (double)hits : NAN;
        csv_num(f, gib, ",");
        fprintf(f, "%s,", k->full ? "full" : "pvdma");
        csv_num(f, ps_to_s(k->hv_ps), ",");
        csv_num(f, ps_to_s(k->pin_ps), ",");
        csv_num(f, ps_to_s(k->ready_ps), ",");
        csv_num(f, paper, ",");
        csv_num(f, speed, ",");
        csv_num(f, ps_to_s(k->first_access_ps), ",");
        csv_num(f, ps_to_s(k->first_access_lat), ",");
        csv_num(f, pinned_ready, ",");
        csv_num(f, (double)k->peak_blocks * (double)k->mc.block_bytes / (double)STELLAR_GIB, ",");
        fprintf(f, "%llu,%llu,", (unsigned long long)k->dmas, (unsigned long long)k->miss_dmas);
        csv_num(f, miss_mean * 1e-6, ",");
        csv_num(f, k->miss_dmas ? k->miss_lat_max_ps * 1e-6 : NAN, ",");
        csv_num(f, hit_mean * 1e-6, ",");
        csv_num(f, ps_to_s(k->pin_stall_ps), ",");
        fprintf(f, "%llu,%llu,", (unsigned long long)k->mc.evictions,
                (unsigned long long)k->mc.repins);
        double lo = ps_to_s(k->ready_ps), hi = lo;
        if (s->calibrated && k->full) {     /* the measured spread of the pin rate */
            double gib_pin = gib * 1e-12;
            lo = ps_to_s(k->hv_ps) + gib_pin * (double)s->cal.min_ps[STELLAR_CAL_PIN_PER_GIB];
            hi = ps_to_s(k->hv_ps) + gib_pin * (double)s->cal.max_ps[STELLAR_CAL_PIN_PER_GIB];
        }
        csv_num(f, lo, ",");
        csv_num(f, hi, "\n");
        json_t *j = json_object();
        out_json_num(j, "memory_gib", gib);
        json_object_set_new(j, "mode", json_string(k->full ? "full" : "pvdma"));
        out_json_num(j, "startup_s", ps_to_s(k->ready_ps));
        out_json_num(j, "paper_startup_s", paper);
        out_json_num(j, "speedup", speed);
        out_json_num(j, "first_access_s", ps_to_s(k->first_access_ps));
        out_json_num(j, "miss_latency_mean_us", miss_mean * 1e-6);
        out_json_num(j, "first_access_latency_s", ps_to_s(k->first_access_lat));
        out_json_num(j, "startup_lo_s", lo);
        out_json_num(j, "startup_hi_s", hi);
        json_object_set_new(j, "evictions", json_integer((json_int_t)k->mc.evictions));
        json_object_set_new(j, "repins", json_integer((json_int_t)k->mc.repins));
        out_json_num(j, "peak_pinned_gib",
                     (double)k->peak_blocks * (double)k->mc.block_bytes / (double)STELLAR_GIB);
        json_array_append_new(rows, j);
        if (speed > best)
            best = speed;
    }
    FILE *g = out_file(o, "pinned.csv", e);
    if (!g)
        return e->code;
    fprintf(g, "container,memory_gib,mode,t_s,pinned_gib\n");
    for (size_t i = 0; i < s->nsamples; i++) {
        const st_sample *x = &s->samples[i];
        const st_ctr *k = &s->ctr[x->ctr];
        double gib = (double)k->mem / (double)STELLAR_GIB;
        char b[40];
        out_fmt_double(b, sizeof b, gib);
        fprintf(g, "%sGiB-%s,%s,%s,", b, k->full ? "full" : "pvdma", b,
                k->full ? "full" : "pvdma");
        csv_num(g, ps_to_s(x->t_ps), ",");
        csv_num(g, (double)x->pinned / (double)STELLAR_GIB, "\n");
    }
    json_object_set_new(sum, "containers", rows);
    out_json_num(sum, "max_speedup", best);
    json_object_set_new(sum, "calibrated", json_boolean(s->calibrated));
    out_json_num(sum, "pin_rate_gib_per_s", 1e12 / (double)s->pp.pin_per_gib_ps);
    out_json_num(sum, "block_pin_us", (double)s->pp.block_pin_ps * 1e-6);
    out_json_num(sum, "lookup_ns", (double)s->pp.lookup_ps * 1e-3);
    out_json_num(sum, "repin_us", (double)s->pp.repin_ps * 1e-6);
    out_json_num(sum, "map_cache_blocks", (double)s->c.map_cache);
    json_t *h = json_object();
    json_object_set_new(h, "layout", json_string(db_names[s->c.doorbell]));
    json_object_set_new(h, "hazard", json_boolean(s->hazard.hazard));
    json_object_set_new(h, "what", json_string(s->hazard.what));
    json_object_set_new(sum, "doorbell", h);
    return 0;
}

static int report_gdr(st_sim *s, out *o, json_t *sum, err *e)
{
    FILE *f = out_file(o, "gdr.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "path,message_bytes,gbps,atc_hit,iommu_hit,mtt_hit,latency_us,requests\n");
    json_t *paths = json_object();
    for (size_t a = 0; a < s->npath; a++) {
        json_t *arr = json_array();
        for (size_t m = 0; m < s->nmsg; m++) {
            const stellar_gdr_result *g = &s->gres[a * s->nmsg + m];
            fprintf(f, "%s,%lld,", stellar_gdr_path_names[s->path[a]], (long long)s->msg[m]);
            csv_num(f, g->gbps, ",");
            csv_num(f, g->atc_hit, ",");
            csv_num(f, g->iommu_hit, ",");
            csv_num(f, g->mtt_hit, ",");
            csv_num(f, g->latency_us, ",");
            fprintf(f, "%llu\n", (unsigned long long)g->requests);
            json_t *v = json_real(g->gbps);
            json_array_append_new(arr, v);
        }
        json_object_set_new(paths, stellar_gdr_path_names[s->path[a]], arr);
    }
    json_t *ms = json_array();
    for (size_t m = 0; m < s->nmsg; m++)
        json_array_append_new(ms, json_integer((json_int_t)s->msg[m]));
    json_object_set_new(sum, "message_bytes", ms);
    json_object_set_new(sum, "gbps", paths);
    return 0;
}

static int report_devices(st_sim *s, out *o, json_t *sum, err *e)
{
    FILE *f = out_file(o, "devices.csv", e);
    if (!f)
        return e->code;
    static const char *const names[2] = {"sriov", "vstellar"};
    fprintf(f, "design,containers,placed,gdr_wanted,gdr_ok,devices,per_rnic,reset,memory_gb,"
               "device_s,create_all_s\n");
    for (int d = 0; d < 2; d++) {
        const stellar_plan *p = &s->plan[d];
        fprintf(f, "%s,%d,%d,%d,%d,%d,%d,%d,", names[d], p->containers, p->placed, p->gdr_wanted,
                p->gdr_ok, p->devices, p->per_rnic, p->reset);
        csv_num(f, (double)p->mem_bytes * 1e-9, ",");
        csv_num(f, ps_to_s(p->device_ps), ",");
        csv_num(f, ps_to_s(p->create_ps), "\n");
        json_t *j = json_object();
        json_object_set_new(j, "containers", json_integer(p->containers));
        json_object_set_new(j, "placed", json_integer(p->placed));
        json_object_set_new(j, "gdr_ok", json_integer(p->gdr_ok));
        json_object_set_new(j, "devices", json_integer(p->devices));
        json_object_set_new(j, "per_rnic", json_integer(p->per_rnic));
        json_object_set_new(j, "reset", json_boolean(p->reset));
        out_json_num(j, "memory_gb", (double)p->mem_bytes * 1e-9);
        out_json_num(j, "device_s", ps_to_s(p->device_ps));
        out_json_num(j, "create_all_s", ps_to_s(p->create_ps));
        json_object_set_new(sum, names[d], j);
    }
    return 0;
}

static int st_report(void *st, const sim *sm, out *o, json_t *sum, err *e)
{
    (void)sm;
    st_sim *s = st;
    json_object_set_new(sum, "experiment", json_string(exp_names[s->c.experiment]));
    switch (s->c.experiment) {
    case EXP_GDR: return report_gdr(s, o, sum, e);
    case EXP_DEVICES: return report_devices(s, o, sum, e);
    default: return report_startup(s, o, sum, e);
    }
}

static void st_fini(void *st)
{
    st_sim *s = st;
    for (size_t i = 0; i < s->nctr; i++)
        stellar_mc_fini(&s->ctr[i].mc);
    free(s->ctr);
    free(s->mem);
    free(s->samples);
    free(s->msg);
    free(s->gres);
    free(s->cls);
    free(s->vf_n);
    free(s->vf_t);
}

static const plot_spec st_plots[] = {
    {.csv = "startup.csv", .x = "memory_gib", .y = "startup_s", .group = "mode",
     .title = "Container start-up: full pinning vs PVDMA (Fig. 6)", .out = "startup",
     .xlabel = "container memory (GiB)", .ylabel = "start-up (s)", .logx = 1},
    {.csv = "pinned.csv", .x = "t_s", .y = "pinned_gib", .group = "container",
     .title = "Pinned memory over time", .out = "pinned", .xlabel = "time (s)",
     .ylabel = "pinned (GiB)"},
    {.csv = "gdr.csv", .x = "message_bytes", .y = "gbps", .group = "path",
     .title = "GDR write throughput by translation path (Figs. 8, 14)", .out = "gdr",
     .xlabel = "message (bytes)", .ylabel = "throughput (Gbps)", .logx = 1},
    {0},
};

/* What `aisim run` prints first (model.h). */
static const model_headline st_headlines[] = {
    {"experiment", "experiment", NULL, 0},
    {"containers.*.mode", "pinning", NULL, 0},
    {"containers.*.memory_gib", "memory (GiB)", "", 0},
    {"containers.*.startup_s", "start-up", "s", 0},
    {"containers.*.paper_startup_s", "paper", "s", 0},
    {"containers.*.speedup", "speed-up", "", 0},
    {"message_bytes.-1", "largest message", "B", 0},
    {"gbps.*.-1", "at the largest message", "bit/s", 1e9},
    {"*.gdr_ok", "containers with GDR", "", 0},
    {"*.device_s", "device creation", "s", 0},
    {"*.create_all_s", "all containers created", "s", 0},
    {"*.memory_gb", "memory reserved", "B", 1e9},
    MODEL_HEADLINES_NETWORK,
    {"coll_jobs.jobs.*.busbw_GBps", "bus bandwidth", "B/s", 1e9},
    {"coll_jobs.jobs.*.mean_time_us", "mean call time", "s", 1e-6},
    {"jobs.*.iteration_s", "iteration", "s", 0},
    {"jobs.*.mfu", "MFU", "%", 0},
    {NULL, NULL, NULL, 0},
};

const model_ops stellar_model_ops = {
    .name = "stellar",
    .summary = "Stellar host side: PVDMA on-demand pinning, eMTT GDR translation, vStellar devices",
    .state_size = sizeof(st_sim),
    .configure = st_configure,
    .start = st_start,
    .progress = st_progress,
    .report = st_report,
    .fini = st_fini,
    .plots = st_plots,
    .headlines = st_headlines,
};
