/*
 * coll_sweep.c - the `sweep` workload: nccl-tests on a simulated fabric.
 *
 * One collective on one communicator, for every size from min_bytes to
 * max_bytes (times step_factor each time, as nccl-tests' -b -e -f): at
 * each size warmup_iters calls that are not timed, then iters timed calls,
 * one after the other (each starts when the previous has completed, as
 * nccl-tests' loop with a stream synchronisation between sizes); the time
 * of a size is the mean of its timed calls.  Output, as nccl-tests prints
 * it: size (B), count (elements), type, redop, root, time (us), algbw and
 * busbw (GB/s, 10^9 bytes) with nccl-tests' bus factors (collective.h), in
 * nccl_tests.csv and as nccl-tests' text table in nccl_tests.txt (the run
 * prints it).  Every call is also in collectives.csv (start, finish, size,
 * busbw) and every message in flows.csv, tagged with its call's index.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/collective.h"
#include "aisim/units.h"
#include "aisim/workload.h"
#include "workload/coll_wl.h"

static const char *const dtype_names[] = {"int8", "uint8", "half", "bfloat16", "float",
                                          "int32", "uint32", "double", "int64", "uint64", NULL};
static const int dtype_bytes[] = {1, 1, 2, 2, 4, 4, 4, 8, 8, 8};
static const char *const redop_names[] = {"sum", "prod", "max", "min", "avg", NULL};

typedef struct sweep_cfg {
    int type, algo, dtype, redop;
    cfg_node *ranks;
    int64_t min_bytes, max_bytes, chunk, start, iters, warmup, channels, root, peer, prio;
    double factor;
    bool fluid;
    coll_nccl_cfg nccl;
    char *micro;
} sweep_cfg;

static const cfg_key sweep_keys[] = {
    {.name = "op", .type = CFG_ENUM, .off = offsetof(sweep_cfg, type), .def = "all_reduce",
     .choices = coll_type_names, .help = "the collective"},
    {.name = "algorithm", .type = CFG_ENUM, .off = offsetof(sweep_cfg, algo), .def = "auto",
     .choices = coll_algo_names, .help = "ring, tree (double binary tree), halving_doubling, "
     "hierarchical (NVLink, rails, NVLink); auto: ring"},
    {.name = "ranks", .type = CFG_NODE, .off = offsetof(sweep_cfg, ranks),
     .flags = CFG_OPTIONAL, .help = "the communicator: a list of endpoint names in rank order "
     "(default: every endpoint in host order)"},
    {.name = "min_bytes", .type = CFG_SIZE, .off = offsetof(sweep_cfg, min_bytes),
     .def = "1KiB", .flags = CFG_MIN_EXCL, .min = 0, .help = "first size (nccl-tests -b)"},
    {.name = "max_bytes", .type = CFG_SIZE, .off = offsetof(sweep_cfg, max_bytes),
     .def = "4GiB", .flags = CFG_MIN_EXCL, .min = 0, .help = "last size (nccl-tests -e)"},
    {.name = "step_factor", .type = CFG_FLOAT, .off = offsetof(sweep_cfg, factor), .def = "2",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 1, .max = 1024,
     .help = "size multiplier between steps (nccl-tests -f)"},
    {.name = "iters", .type = CFG_INT, .off = offsetof(sweep_cfg, iters), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 100000,
     .help = "timed calls per size (nccl-tests -n)"},
    {.name = "warmup_iters", .type = CFG_INT, .off = offsetof(sweep_cfg, warmup), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 100000,
     .help = "untimed calls per size before them (nccl-tests -w)"},
    {.name = "datatype", .type = CFG_ENUM, .off = offsetof(sweep_cfg, dtype), .def = "float",
     .choices = dtype_names, .help = "element type: sets the count column and keeps chunks "
     "whole elements (nccl-tests -d)"},
    {.name = "redop", .type = CFG_ENUM, .off = offsetof(sweep_cfg, redop), .def = "sum",
     .choices = redop_names, .help = "reduction (a label: reductions take no time)"},
    {.name = "channels", .type = CFG_INT, .off = offsetof(sweep_cfg, channels), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1024,
     .help = "parallel rings or trees, each on its own connections (NCCL's channels)"},
    {.name = "chunk", .type = CFG_SIZE, .off = offsetof(sweep_cfg, chunk), .def = "512KiB",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "largest message: the pipelining unit"},
    {.name = "root", .type = CFG_INT, .off = offsetof(sweep_cfg, root), .def = "0",
     .flags = CFG_MIN, .min = 0, .help = "broadcast root, send_recv sender (rank)"},
    {.name = "peer", .type = CFG_INT, .off = offsetof(sweep_cfg, peer), .def = "1",
     .flags = CFG_MIN, .min = 0, .help = "send_recv receiver (rank)"},
    {.name = "prio", .type = CFG_INT, .off = offsetof(sweep_cfg, prio), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 7, .help = "traffic class"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(sweep_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "start of the first call"},
    {.name = "fluid", .type = CFG_BOOL, .off = offsetof(sweep_cfg, fluid), .def = "false",
     .help = "flow plane only: each ring phase one flow per rank carrying all its steps' "
     "bytes, the steps' latency added (docs/flow-level.md)"},
    COLL_NCCL_KEYS(sweep_cfg, nccl),
    {.name = "aicb_micro", .type = CFG_STR, .off = offsetof(sweep_cfg, micro),
     .flags = CFG_OPTIONAL, .help = "an AICB micro-test log (workload/physical/micro_test/, "
     "a CSV): its collective, sizes, calls per size and warm-up replace op, min_bytes .. "
     "max_bytes, iters and warmup_iters (given, min/max_bytes keep a range of its sizes, "
     "iters and warmup_iters cap its counts)"},
    {0},
};

/* One row: a size's mean time over its timed calls. */
typedef struct sweep_row {
    uint64_t bytes;
    double time_s;              /* mean of the timed calls */
    int done;                   /* timed calls done */
    int64_t warm, iters;        /* untimed calls first, timed calls */
} sweep_row;

typedef struct sweep_wl {
    network *n;
    sweep_cfg c;
    bool on;                    /* configured */
    coll_comm *comm;
    sweep_row *rows;
    size_t nrows, row;          /* sizes, current */
    int64_t iter;               /* call within the size, warmup first */
    coll_result *calls;         /* every call, for collectives.csv */
    size_t ncalls, capcalls;
    bool aborted;
    err fail;                   /* a call that could not start */
    bool given[5];              /* op, min_bytes, max_bytes, iters, warmup_iters
                                   in the scenario (before defaults) */
} sweep_wl;

/* The sweep of an AICB micro-test log (key aicb_micro): its sizes in
 * order, each with the log's calls (iters, if given, caps them), the
 * log's warm-up (or warmup_iters) before the first. */
static int micro_configure(sweep_wl *w, cfg_node *node, const char *sub, const model_env *env,
                           err *e)
{
    char full[4096], kp[512];
    cfg_node *at = cfg_get(node, "aicb_micro");
    cfg_path(kp, sizeof kp, sub, "aicb_micro");
    if (w->c.micro[0] == '/' || !env->base_dir || !env->base_dir[0])
        snprintf(full, sizeof full, "%s", w->c.micro);
    else
        snprintf(full, sizeof full, "%s/%s", env->base_dir, w->c.micro);
    coll_micro m;
    int r = coll_read_aicb_micro(&m, full, e);
    char msg[sizeof e->msg];
    if (r) {
        snprintf(msg, sizeof msg, "%s", e->msg);
        return cfg_err(e, r, at, kp, "%s", msg);
    }
    if (w->given[0] && w->c.type != m.type) {
        r = cfg_err(e, AISIM_EINVAL, cfg_get(node, "op"), cfg_path(kp, sizeof kp, sub, "op"),
                    "expected the micro-test's %s (%s:%d) or no op, found %s",
                    coll_type_names[m.type], full, m.type_line, coll_type_names[w->c.type]);
    } else if (m.group_size && m.group_size != coll_comm_size(w->comm)) {
        r = cfg_err(e, AISIM_EINVAL, at, kp, "%s:%d: comm_group_size: expected the "
                    "communicator's %d ranks, found %d", full, m.group_line, coll_comm_size(w->comm),
                    m.group_size);
    }
    w->c.type = m.type;
    bool lo = w->given[1], hi = w->given[2], it = w->given[3], wu = w->given[4];
    uint64_t big = 0;
    for (size_t i = 0; !r && i < m.n; i++) {
        if ((lo && m.sizes[i] < (uint64_t)w->c.min_bytes) ||
            (hi && m.sizes[i] > (uint64_t)w->c.max_bytes))
            continue;
        if (m.sizes[i] % (uint64_t)dtype_bytes[w->c.dtype]) {
            r = cfg_err(e, AISIM_EINVAL, at, kp, "%s:%d: msg_size: expected whole elements of "
                        "%s (%d B), found %llu B", full, m.line[i], dtype_names[w->c.dtype],
                        dtype_bytes[w->c.dtype], (unsigned long long)m.sizes[i]);
            break;
        }
        int64_t n = it && m.count[i] > w->c.iters ? w->c.iters : m.count[i];
        w->rows = xrealloc(w->rows, (w->nrows + 1) * sizeof *w->rows);
        w->rows[w->nrows++] = (sweep_row){.bytes = m.sizes[i], .iters = n};
        big = m.sizes[i] > big ? m.sizes[i] : big;
    }
    if (!r && !w->nrows)
        r = cfg_err(e, AISIM_EINVAL, at, kp, "expected a size of the micro-test within "
                    "min_bytes .. max_bytes, found none (%s: %llu .. %llu B)", full,
                    (unsigned long long)m.sizes[0], (unsigned long long)m.sizes[m.n - 1]);
    if (!r) {
        w->rows[0].warm = wu ? w->c.warmup : m.warmup;
        w->c.min_bytes = (int64_t)w->rows[0].bytes;
        w->c.max_bytes = (int64_t)big;
        w->c.warmup = w->rows[0].warm;
        w->c.iters = w->rows[0].iters;
        if (w->nrows > 1)       /* the preamble's step: AICB doubles */
            w->c.factor = (double)w->rows[1].bytes / (double)w->rows[0].bytes;
        coll_args a = {.type = w->c.type, .algo = w->c.algo, .bytes = big,
                       .root = (int)w->c.root, .peer = (int)w->c.peer, .fluid = w->c.fluid};
        coll_wl_nccl_args(&w->c.nccl, &a);
        r = coll_wl_check(w->comm, &a, node, sub, "aicb_micro", e);
    }
    coll_micro_free(&m);
    if (!r)
        w->on = true;
    return r;
}

static int sweep_configure(void *st, network *n, cfg_node *node, const char *path,
                           const model_env *env, err *e)
{
    (void)env;
    sweep_wl *w = st;
    w->n = n;
    if (!node)
        return 0;
    char sub[512], sub2[512];
    int r;
    cfg_path(sub, sizeof sub, path, "sweep");
    static const char *const gk[] = {"op", "min_bytes", "max_bytes", "iters", "warmup_iters"};
    for (int k = 0; k < 5; k++)
        w->given[k] = cfg_get(node, gk[k]) != NULL;
    if ((r = cfg_bind(node, sub, sweep_keys, &w->c, e)))
        return r;
    /* nccl-tests moves count = size / element whole elements: a size below
     * one element would be a call of nothing, reported as one of 1 B. */
    if (w->c.min_bytes < dtype_bytes[w->c.dtype])
        return cfg_err(e, AISIM_ERANGE, cfg_get(node, "min_bytes"),
                       cfg_path(sub2, sizeof sub2, sub, "min_bytes"), "expected at least one "
                       "element of %s (%d B), found %lld B", dtype_names[w->c.dtype],
                       dtype_bytes[w->c.dtype], (long long)w->c.min_bytes);
    if (w->c.max_bytes < w->c.min_bytes)
        return cfg_err(e, AISIM_ERANGE, cfg_get(node, "max_bytes"),
                       cfg_path(sub2, sizeof sub2, sub, "max_bytes"), "expected at least "
                       "min_bytes (%lld B), found %lld B", (long long)w->c.min_bytes,
                       (long long)w->c.max_bytes);
    if ((r = coll_wl_comm(n, w->c.ranks, cfg_path(sub2, sizeof sub2, sub, "ranks"), &w->comm,
                          e)))
        return r;
    if (w->c.micro)
        return micro_configure(w, node, sub, env, e);
    /* Every call's arguments, checked now: the largest size stands for all. */
    coll_args a = {.type = w->c.type, .algo = w->c.algo, .bytes = (uint64_t)w->c.max_bytes,
                   .root = (int)w->c.root, .peer = (int)w->c.peer, .fluid = w->c.fluid};
    coll_wl_nccl_args(&w->c.nccl, &a);
    if ((r = coll_wl_check(w->comm, &a, node, sub, "max_bytes", e)))
        return r;
    for (double b = (double)w->c.min_bytes; b <= (double)w->c.max_bytes * (1 + 1e-12);
         b *= w->c.factor) {
        w->rows = xrealloc(w->rows, (w->nrows + 1) * sizeof *w->rows);
        w->rows[w->nrows++] = (sweep_row){.bytes = (uint64_t)llround(b), .warm = w->c.warmup,
                                          .iters = w->c.iters};
        if (w->nrows > 100000)
            return cfg_err(e, AISIM_ERANGE, cfg_get(node, "step_factor"),
                           cfg_path(sub2, sizeof sub2, sub, "step_factor"), "expected at most "
                           "100000 sizes, found more");
    }
    w->on = true;
    return 0;
}

static void next_call(sweep_wl *w, int64_t at);

static void on_call(void *ctx, const coll_result *res)
{
    sweep_wl *w = ctx;
    if (w->ncalls == w->capcalls) {
        w->capcalls = w->capcalls ? 2 * w->capcalls : 64;
        w->calls = xrealloc(w->calls, w->capcalls * sizeof *w->calls);
    }
    w->calls[w->ncalls++] = *res;
    w->aborted |= res->aborted;
    sweep_row *row = &w->rows[w->row];
    if (w->iter++ >= row->warm) {
        row->time_s += res->time_s;
        row->done++;
    }
    if (w->iter == row->warm + row->iters) {
        row->time_s /= row->done;
        w->row++;
        w->iter = 0;
    }
    next_call(w, res->finish_ps);
}

static void next_call(sweep_wl *w, int64_t at)
{
    if (w->row == w->nrows)
        return;
    coll_args a = {.type = w->c.type, .algo = w->c.algo, .bytes = w->rows[w->row].bytes,
                   .elem_bytes = dtype_bytes[w->c.dtype], .channels = (int)w->c.channels,
                   .chunk_bytes = (uint64_t)w->c.chunk, .prio = (int)w->c.prio,
                   .tag = (int64_t)w->ncalls, .root = (int)w->c.root, .peer = (int)w->c.peer,
                   .start_ps = at, .fluid = w->c.fluid};
    coll_wl_nccl_args(&w->c.nccl, &a);
    /* Checked at configure time for the largest size; the others differ
     * only in bytes > 0. */
    if (coll_start(w->comm, &a, on_call, w, &w->fail))
        w->row = w->nrows;
}

static void sweep_start(void *st)
{
    sweep_wl *w = st;
    if (w->on)
        next_call(w, w->c.start);
}

static bool sweep_finished(const void *st)
{
    const sweep_wl *w = st;
    return !w->on || w->row == w->nrows;
}

static double sweep_progress(const void *st)
{
    const sweep_wl *w = st;
    if (!w->on)
        return -1;
    /* By bytes moved: the last sizes dominate the run.  The current size
     * counts by its calls done, so the fraction moves within a size (the
     * largest is half the work of a doubling sweep). */
    double all = 0, done = 0;
    for (size_t i = 0; i < w->nrows; i++) {
        all += (double)w->rows[i].bytes;
        if (i < w->row)
            done += (double)w->rows[i].bytes;
        else if (i == w->row)
            done += (double)w->rows[i].bytes * (double)w->iter /
                    (double)(w->rows[i].warm + w->rows[i].iters);
    }
    return all > 0 ? done / all : -1;
}

/* nccl-tests' program of each collective (coll_type order). */
static const char *const nt_program[] = {"all_reduce_perf", "reduce_scatter_perf",
                                         "all_gather_perf", "alltoall_perf", "broadcast_perf",
                                         "sendrecv_perf"};

/* nccl-tests' number in `width` columns: 2 decimals, fewer if it does not
 * fit, then an exponent (its getFloatStr). */
static void nt_num(char *s, int width, double v)
{
    if (snprintf(s, (size_t)width + 1, "%*.2f", width, v) <= width)
        return;
    if (snprintf(s, (size_t)width + 1, "%*.1f", width, v) <= width)
        return;
    if (snprintf(s, (size_t)width + 1, "%*.0f", width, v) <= width)
        return;
    snprintf(s, (size_t)width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

/* One group of time, algbw, busbw and #wrong (N/A: nothing is checked). */
static void nt_body(FILE *f, double time_us, double alg, double bus)
{
    char t[8], a[7], b[7];
    nt_num(t, 7, time_us);
    nt_num(a, 6, alg);
    nt_num(b, 6, bus);
    fprintf(f, "  %7s  %6s  %6s    N/A", t, a, b);
}

/* nccl-tests' preamble (run line, one device line per rank, the two
 * header lines), with aisim's settings where nccl-tests has its own. */
static void nt_preamble(FILE *f, const sweep_wl *w, int n)
{
    topo *t = network_topo(w->n);
    fprintf(f, "# aisim simulation of nccl-tests (no GPU, no data): %s, algorithm %s, protocol "
            "%s, %d ranks, %lld channel(s), chunk %lld B\n",
            coll_type_names[w->c.type], coll_algo_names[w->c.algo],
            coll_proto_names[w->c.nccl.proto], n, (long long)w->c.channels, (long long)w->c.chunk);
    fprintf(f, "# Collective test starting: %s\n", nt_program[w->c.type]);
    fprintf(f, "# nThread 1 nGpus 1 minBytes %lld maxBytes %lld step: %g(factor) warmup iters: %lld "
            "iters: %lld agg iters: 1 validation: 0 graph: 0 unalign: 0\n#\n# Using devices\n",
            (long long)w->c.min_bytes, (long long)w->c.max_bytes, w->c.factor,
            (long long)w->c.warmup, (long long)w->c.iters);
    int *local = xcalloc((size_t)n, sizeof *local);
    coll_comm_local_ranks(w->comm, local);
    for (int i = 0; i < n; i++) {
        const char *host = topo_node_name(t, topo_host_node(t, coll_comm_endpoint(w->comm, i)));
        fprintf(f, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", i, 0,
                0, host, local[i], 0, 0, 0, "simulated GPU");
    }
    free(local);
    fprintf(f, "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
            "in-place          \n", "", "", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
            "busbw", "#wrong", 0, "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
            0, "");
}

static int sweep_report(void *st, out *o, json_t *sum, err *e)
{
    sweep_wl *w = st;
    if (!w->on)
        return 0;
    FILE *csv = out_file(o, "nccl_tests.csv", e), *txt = csv ? out_file(o, "nccl_tests.txt", e)
                                                             : NULL,
         *calls = txt ? out_file(o, "collectives.csv", e) : NULL;
    if (!calls)
        return e->code;
    int n = coll_comm_size(w->comm), eb = dtype_bytes[w->c.dtype];
    bool rooted = w->c.type == COLL_BROADCAST || w->c.type == COLL_SENDRECV;
    fprintf(csv, "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps\n");
    nt_preamble(txt, w, n);
    double sum_bus = 0, peak_bus = 0, factor = coll_busbw_factor(w->c.type, n);
    /* nccl-tests' redop column names the reduction of reducing
     * collectives, "none" for the others; root is -1 unless rooted. */
    bool reduces = w->c.type == COLL_ALLREDUCE || w->c.type == COLL_REDUCE_SCATTER ||
                   w->c.type == COLL_SENDRECV;
    const char *opname = reduces ? redop_names[w->c.redop] : "none";
    for (size_t i = 0; i < w->row; i++) {
        sweep_row *r = &w->rows[i];
        /* a call that moves nothing (one rank) takes 0 s: 0 GB/s, as in
         * collectives.csv, rather than nan */
        double alg = r->time_s > 0 ? (double)r->bytes / r->time_s / 1e9 : 0,
               bus = alg * factor;
        uint64_t count = r->bytes / (uint64_t)eb;
        int root = rooted ? (int)w->c.root : -1;
        fprintf(csv, "%llu,%llu,%s,%s,%d,", (unsigned long long)r->bytes,
                (unsigned long long)count, dtype_names[w->c.dtype], redop_names[w->c.redop],
                root);
        net_csv_num(csv, r->time_s * 1e6, ",");
        net_csv_num(csv, alg, ",");
        net_csv_num(csv, bus, "\n");
        fprintf(txt, "%12llu  %12llu  %8s  %6s  %6d", (unsigned long long)r->bytes,
                (unsigned long long)count, dtype_names[w->c.dtype], opname, root);
        /* out-of-place, then in-place: one simulated time stands for both
         * (no buffers are modelled); no data are checked: #wrong N/A */
        for (int g = 0; g < 2; g++)
            nt_body(txt, r->time_s * 1e6, alg, bus);
        fputc('\n', txt);
        if (isfinite(bus)) {
            sum_bus += bus;
            peak_bus = bus > peak_bus ? bus : peak_bus;
        }
    }
    double avg = w->row ? sum_bus / (double)w->row : NAN;
    fprintf(txt, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
    fprintf(txt, "# %-20s : %g \n#\n# Collective test concluded: %s\n#\n", "Avg bus bandwidth",
            avg, nt_program[w->c.type]);
    fprintf(calls, "call,op,algorithm,ranks,bytes,start_s,finish_s,time_us,algbw_GBps,"
            "busbw_GBps,messages,aborted,protocol,channels\n");
    for (size_t i = 0; i < w->ncalls; i++) {
        coll_result *c = &w->calls[i];
        fprintf(calls, "%zu,%s,%s,%d,%llu,", i, coll_type_names[c->type],
                coll_algo_names[c->algo], c->ranks, (unsigned long long)c->bytes);
        net_csv_num(calls, ps_to_s(c->start_ps), ",");
        net_csv_num(calls, ps_to_s(c->finish_ps), ",");
        net_csv_num(calls, c->time_s * 1e6, ",");
        net_csv_num(calls, c->algbw_Bps / 1e9, ",");
        net_csv_num(calls, c->busbw_Bps / 1e9, ",");
        fprintf(calls, "%llu,%d,%s,%d\n", (unsigned long long)c->messages, c->aborted,
                coll_proto_names[c->proto], c->channels);
    }
    json_t *s = json_object();
    json_object_set_new(s, "op", json_string(coll_type_names[w->c.type]));
    json_object_set_new(s, "algorithm", json_string(coll_algo_names[w->c.algo]));
    json_object_set_new(s, "protocol", json_string(coll_proto_names[w->c.nccl.proto]));
    json_object_set_new(s, "ranks", json_integer(n));
    json_object_set_new(s, "sizes", json_integer((json_int_t)w->nrows));
    json_object_set_new(s, "sizes_completed", json_integer((json_int_t)w->row));
    json_object_set_new(s, "calls", json_integer((json_int_t)w->ncalls));
    json_object_set_new(s, "aborted", json_boolean(w->aborted));
    out_json_num(s, "avg_busbw_GBps", avg);
    out_json_num(s, "peak_busbw_GBps", peak_bus);
    if (w->row) {
        sweep_row *last = &w->rows[w->row - 1];
        out_json_num(s, "largest_bytes", (double)last->bytes);
        out_json_num(s, "largest_time_us", last->time_s * 1e6);
        out_json_num(s, "largest_busbw_GBps",
                     last->time_s > 0 ? (double)last->bytes / last->time_s / 1e9 * factor : 0);
    }
    if (w->fail.code)
        json_object_set_new(s, "error", json_string(w->fail.msg));
    json_object_set_new(sum, "nccl_tests", s);
    return 0;
}

static void sweep_fini(void *st)
{
    sweep_wl *w = st;
    coll_comm_destroy(w->comm);
    free(w->rows);
    free(w->calls);
}

const workload_ops wl_coll_sweep = {
    .key = "sweep",
    .size = sizeof(sweep_wl),
    .configure = sweep_configure,
    .start = sweep_start,
    .finished = sweep_finished,
    .progress = sweep_progress,
    .report = sweep_report,
    .fini = sweep_fini,
};
