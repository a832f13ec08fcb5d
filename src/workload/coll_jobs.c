/*
 * coll_jobs.c - the `jobs` workload: several collective jobs sharing one
 * fabric, each a communicator that calls one collective again and again,
 * from its own start time, always or on an on/off schedule (Stellar's
 * Fig. 10: an all-reduce measured while background all-reduces run).
 *
 * A job makes `iters` calls one after the other (a call starts `gap` after
 * the previous one has completed, as a training job's gradient all-reduces
 * do); the first `warmup_iters` are not timed.  `iters: 0` makes a
 * background job: it calls until the run ends, and the run ends when every
 * job with iters > 0 (and the model's sweep, if any) has finished, without
 * waiting for the background calls in flight (they are dropped with the
 * run; only completed calls are reported).
 *
 * On/off: with `on` > 0 the job is active during on-periods and silent
 * during off-periods, alternating from `start` (on first); the periods are
 * `on` and `off` long (`on_off: fixed`) or drawn from exponential
 * distributions of those means (`exponential`, stream
 * "collective.jobs.onoff", index = job).  A call starts only inside an
 * on-period (back to back while it lasts); a call still running when its
 * on-period ends completes, and the next one waits for the next on-period.
 *
 * Tables: coll_jobs.csv (every completed call: job, start, finish, time,
 * algbw, busbw, timed), coll_jobs_summary.csv and coll_jobs.txt (per job:
 * timed calls, mean time and mean bus bandwidth, i.e. bytes x factor over
 * the mean time, as nccl-tests' -n); summary.json results.coll_jobs.
 * Messages are tagged (job + 1) x 10^6 + call in flows.csv.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/collective.h"
#include "aisim/rng.h"
#include "aisim/units.h"
#include "aisim/workload.h"
#include "workload/coll_wl.h"

static const char *const onoff_names[] = {"fixed", "exponential", NULL};

typedef struct cjob_cfg {
    const char *name;
    cfg_node *ranks;
    int type, algo, onoff;
    int64_t bytes, chunk, channels, prio, iters, warmup, start, gap, on, off;
    coll_nccl_cfg nccl;
} cjob_cfg;

static const cfg_key cjob_keys[] = {
    {.name = "name", .type = CFG_STR, .off = offsetof(cjob_cfg, name), .flags = CFG_OPTIONAL,
     .help = "a label for the tables (default job<index>)"},
    {.name = "ranks", .type = CFG_NODE, .off = offsetof(cjob_cfg, ranks),
     .help = "the communicator: a list of endpoint names in rank order"},
    {.name = "op", .type = CFG_ENUM, .off = offsetof(cjob_cfg, type), .def = "all_reduce",
     .choices = coll_type_names, .help = "the collective"},
    {.name = "algorithm", .type = CFG_ENUM, .off = offsetof(cjob_cfg, algo), .def = "auto",
     .choices = coll_algo_names, .help = "ring, tree, halving_doubling, hierarchical; auto: ring"},
    {.name = "bytes", .type = CFG_SIZE, .off = offsetof(cjob_cfg, bytes),
     .flags = CFG_MIN_EXCL, .min = 0, .help = "size of each call (nccl-tests' size column)"},
    {.name = "channels", .type = CFG_INT, .off = offsetof(cjob_cfg, channels), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1024, .help = "NCCL's channels"},
    {.name = "chunk", .type = CFG_SIZE, .off = offsetof(cjob_cfg, chunk), .def = "512KiB",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "largest message: the pipelining unit"},
    {.name = "prio", .type = CFG_INT, .off = offsetof(cjob_cfg, prio), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 7, .help = "traffic class"},
    {.name = "iters", .type = CFG_INT, .off = offsetof(cjob_cfg, iters), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1000000,
     .help = "calls, one after the other; 0: a background job, calling until the run ends"},
    {.name = "warmup_iters", .type = CFG_INT, .off = offsetof(cjob_cfg, warmup), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1000000,
     .help = "first calls not timed"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(cjob_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "start of the first call (and of the first on-period)"},
    {.name = "gap", .type = CFG_TIME, .off = offsetof(cjob_cfg, gap), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "from a call's end to the next call's start"},
    {.name = "on", .type = CFG_TIME, .off = offsetof(cjob_cfg, on), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "on-period (mean with exponential); 0s: always on"},
    {.name = "off", .type = CFG_TIME, .off = offsetof(cjob_cfg, off), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "off-period between on-periods (mean with exponential)"},
    {.name = "on_off", .type = CFG_ENUM, .off = offsetof(cjob_cfg, onoff), .def = "fixed",
     .choices = onoff_names, .help = "period lengths: fixed, or exponential of mean on / off"},
    COLL_NCCL_KEYS(cjob_cfg, nccl),
    {0},
};

typedef struct cjob_call {
    coll_result r;
    bool timed;
} cjob_call;

typedef struct cjob {
    struct cjobs_wl *w;
    int index;
    char name[64];
    cjob_cfg c;
    coll_comm *comm;
    int64_t started;            /* calls started */
    int64_t on_start, on_end;   /* the current or next on-period */
    rng r_onoff;
    double sum_time_s;          /* over the timed calls */
    int64_t timed;
    bool done;                  /* iters > 0 and all completed */
} cjob;

typedef struct cjobs_wl {
    network *n;
    bool on;
    cjob *jobs;
    size_t njobs;
    cjob_call *calls;           /* every completed call, in completion order */
    size_t ncalls, capcalls;
    bool aborted;
    err fail;                   /* a call that could not start */
} cjobs_wl;

static int64_t draw(cjob *j, int64_t mean_ps)
{
    if (j->c.onoff == 0 || mean_ps == 0)
        return mean_ps;
    int64_t d = units_round_sat(rng_exponential(&j->r_onoff, (double)mean_ps));
    return d > 0 ? d : 1;
}

/* The first time >= t inside an on-period (t itself when always on). */
static int64_t on_from(cjob *j, int64_t t)
{
    if (!j->c.on)
        return t;
    while (t >= j->on_end) {
        j->on_start = j->on_end + draw(j, j->c.off);
        j->on_end = j->on_start + draw(j, j->c.on);
    }
    return t > j->on_start ? t : j->on_start;
}

static void job_call(cjob *j, int64_t at);

static void on_wake(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    cjob *j = obj;
    job_call(j, sim_now(s));
}

static void on_done(void *ctx, const coll_result *res)
{
    cjob *j = ctx;
    cjobs_wl *w = j->w;
    if (w->ncalls == w->capcalls) {
        w->capcalls = w->capcalls ? 2 * w->capcalls : 64;
        w->calls = xrealloc(w->calls, w->capcalls * sizeof *w->calls);
    }
    int64_t call = res->tag % 1000000;
    bool timed = call >= j->c.warmup;
    w->calls[w->ncalls++] = (cjob_call){.r = *res, .timed = timed};
    w->aborted |= res->aborted;
    if (timed) {
        j->sum_time_s += res->time_s;
        j->timed++;
    }
    if (j->c.iters && j->started == j->c.iters) {
        j->done = true;
        return;
    }
    job_call(j, res->finish_ps + j->c.gap);
}

/* Starts the job's next call at `at` or, outside an on-period, schedules
 * it for the next one. */
static void job_call(cjob *j, int64_t at)
{
    cjobs_wl *w = j->w;
    sim *s = network_sim(w->n);
    int64_t t = on_from(j, at);
    if (t > sim_now(s)) {
        sim_schedule(s, t, on_wake, j, 0);
        return;
    }
    coll_args a = {.type = j->c.type, .algo = j->c.algo, .bytes = (uint64_t)j->c.bytes,
                   .channels = (int)j->c.channels, .chunk_bytes = (uint64_t)j->c.chunk,
                   .prio = (int)j->c.prio, .tag = (j->index + 1) * (int64_t)1000000 + j->started,
                   .start_ps = t};
    coll_wl_nccl_args(&j->c.nccl, &a);
    j->started++;
    /* Checked at configure time. */
    if (coll_start(j->comm, &a, on_done, j, &w->fail))
        j->done = true;
}

static int jobs_configure(void *st, network *n, cfg_node *node, const char *path,
                          const model_env *env, err *e)
{
    cjobs_wl *w = st;
    w->n = n;
    if (!node)
        return 0;
    char sub[512], sub2[512], sub3[512];
    cfg_path(sub, sizeof sub, path, "jobs");
    long len = cfg_expect_list(node, sub, "collective jobs", e);
    if (len < 1)
        return len < 0 ? (int)len : cfg_err(e, AISIM_EINVAL, node, sub, "expected at least "
                                           "one job, found an empty list");
    w->jobs = xcalloc((size_t)len, sizeof *w->jobs);
    bool finite = false;
    for (long i = 0; i < len; i++) {
        cjob *j = &w->jobs[i];
        cfg_node *jn = cfg_at(node, (size_t)i);
        int r;
        cfg_path_index(sub2, sizeof sub2, sub, (size_t)i);
        if ((r = cfg_bind(jn, sub2, cjob_keys, &j->c, e)))
            return r;
        w->njobs++;
        j->w = w;
        j->index = (int)i;
        snprintf(j->name, sizeof j->name, "%s", j->c.name ? j->c.name : "");
        if (!j->c.name)
            snprintf(j->name, sizeof j->name, "job%ld", i);
        for (long k = 0; k < i; k++)
            if (strcmp(w->jobs[k].name, j->name) == 0)
                return cfg_err(e, AISIM_EINVAL, cfg_get(jn, "name"),
                               cfg_path(sub3, sizeof sub3, sub2, "name"), "expected a name no "
                               "other job has, found \"%s\" again (jobs[%ld])", j->name, k);
        if ((r = coll_wl_comm(n, j->c.ranks, cfg_path(sub3, sizeof sub3, sub2, "ranks"),
                              &j->comm, e)))
            return r;
        coll_args a = {.type = j->c.type, .algo = j->c.algo, .bytes = (uint64_t)j->c.bytes,
                       .root = 0, .peer = 1};
        coll_wl_nccl_args(&j->c.nccl, &a);
        if ((r = coll_wl_check(j->comm, &a, jn, sub2, "bytes", e)))
            return r;
        if (j->c.off && !j->c.on)
            return cfg_err(e, AISIM_EINVAL, cfg_get(jn, "on"),
                           cfg_path(sub3, sizeof sub3, sub2, "on"), "expected an on-period > 0s "
                           "with off: %g s, found 0s", ps_to_s(j->c.off));
        if (j->c.iters && j->c.warmup >= j->c.iters)
            return cfg_err(e, AISIM_ERANGE, cfg_get(jn, "warmup_iters"),
                           cfg_path(sub3, sizeof sub3, sub2, "warmup_iters"), "expected fewer "
                           "than iters (%lld), found %lld", (long long)j->c.iters,
                           (long long)j->c.warmup);
        rng_init(&j->r_onoff, env->seed, "collective.jobs.onoff", (uint64_t)i);
        j->on_start = j->c.start;
        j->on_end = j->c.start + draw(j, j->c.on);
        finite |= j->c.iters > 0;
    }
    if (!finite)
        return cfg_err(e, AISIM_EINVAL, node, sub, "expected a job with iters > 0 (background "
                       "jobs, iters 0, call until the others end), found only background jobs");
    w->on = true;
    return 0;
}

static void jobs_start(void *st)
{
    cjobs_wl *w = st;
    for (size_t i = 0; w->on && i < w->njobs; i++)
        job_call(&w->jobs[i], w->jobs[i].c.start);
}

static bool jobs_finished(const void *st)
{
    const cjobs_wl *w = st;
    for (size_t i = 0; w->on && i < w->njobs; i++)
        if (w->jobs[i].c.iters && !w->jobs[i].done)
            return false;
    return true;
}

static double jobs_progress(const void *st)
{
    const cjobs_wl *w = st;
    double all = 0, done = 0;
    for (size_t i = 0; w->on && i < w->njobs; i++) {
        all += (double)w->jobs[i].c.iters;
        done += (double)w->jobs[i].timed + (double)(w->jobs[i].timed ? w->jobs[i].c.warmup : 0);
    }
    return all > 0 ? (done < all ? done : all) / all : -1;
}

static double job_busbw(const cjob *j)
{
    if (!j->timed)
        return NAN;
    double t = j->sum_time_s / (double)j->timed;
    return (double)j->c.bytes / t * coll_busbw_factor(j->c.type, coll_comm_size(j->comm)) / 1e9;
}

static int jobs_report(void *st, out *o, json_t *sum, err *e)
{
    cjobs_wl *w = st;
    if (!w->on)
        return 0;
    FILE *csv = out_file(o, "coll_jobs.csv", e),
         *jcsv = csv ? out_file(o, "coll_jobs_summary.csv", e) : NULL,
         *txt = jcsv ? out_file(o, "coll_jobs.txt", e) : NULL;
    if (!txt)
        return e->code;
    fprintf(csv, "job,name,call,op,algorithm,ranks,bytes,start_s,finish_s,time_us,algbw_GBps,"
            "busbw_GBps,timed,aborted\n");
    for (size_t i = 0; i < w->ncalls; i++) {
        const coll_result *c = &w->calls[i].r;
        const cjob *j = &w->jobs[c->tag / 1000000 - 1];
        fprintf(csv, "%d,%s,%lld,%s,%s,%d,%llu,", j->index, j->name,
                (long long)(c->tag % 1000000), coll_type_names[c->type],
                coll_algo_names[c->algo], c->ranks, (unsigned long long)c->bytes);
        net_csv_num(csv, ps_to_s(c->start_ps), ",");
        net_csv_num(csv, ps_to_s(c->finish_ps), ",");
        net_csv_num(csv, c->time_s * 1e6, ",");
        net_csv_num(csv, c->algbw_Bps / 1e9, ",");
        net_csv_num(csv, c->busbw_Bps / 1e9, ",");
        fprintf(csv, "%d,%d\n", w->calls[i].timed, c->aborted);
    }
    fprintf(jcsv, "job,name,op,algorithm,ranks,bytes,background,calls,timed_calls,"
            "mean_time_us,busbw_GBps\n");
    fprintf(txt, "# aisim collective jobs: busbw = bytes x bus factor / mean time of the timed "
            "calls\n#%3s %-12s %6s %12s %10s %6s %6s %12s %10s\n", "job", "name", "ranks",
            "bytes", "kind", "calls", "timed", "time (us)", "busbw GB/s");
    json_t *js = json_object();
    for (size_t i = 0; i < w->njobs; i++) {
        const cjob *j = &w->jobs[i];
        size_t calls = 0;
        for (size_t k = 0; k < w->ncalls; k++)
            calls += w->calls[k].r.tag / 1000000 - 1 == j->index;
        double t_us = j->timed ? j->sum_time_s / (double)j->timed * 1e6 : NAN,
               bus = job_busbw(j);
        int nr = coll_comm_size(j->comm);
        fprintf(jcsv, "%d,%s,%s,%s,%d,%lld,%d,%zu,%lld,", j->index, j->name,
                coll_type_names[j->c.type], coll_algo_names[j->c.algo], nr,
                (long long)j->c.bytes, j->c.iters == 0, calls, (long long)j->timed);
        net_csv_num(jcsv, t_us, ",");
        net_csv_num(jcsv, bus, "\n");
        fprintf(txt, " %3d %-12s %6d %12lld %10s %6zu %6lld %12.2f %10.2f\n", j->index, j->name,
                nr, (long long)j->c.bytes, j->c.iters ? "measured" : "background", calls,
                (long long)j->timed, t_us, bus);
        json_t *o1 = json_object();
        json_object_set_new(o1, "ranks", json_integer(nr));
        json_object_set_new(o1, "calls", json_integer((json_int_t)calls));
        json_object_set_new(o1, "timed_calls", json_integer((json_int_t)j->timed));
        json_object_set_new(o1, "background", json_boolean(j->c.iters == 0));
        out_json_num(o1, "mean_time_us", t_us);
        out_json_num(o1, "busbw_GBps", bus);
        json_object_set_new(js, j->name, o1);
    }
    json_t *s = json_object();
    json_object_set_new(s, "jobs", js);
    json_object_set_new(s, "aborted", json_boolean(w->aborted));
    if (w->fail.code)
        json_object_set_new(s, "error", json_string(w->fail.msg));
    json_object_set_new(sum, "coll_jobs", s);
    return 0;
}

static void jobs_fini(void *st)
{
    cjobs_wl *w = st;
    for (size_t i = 0; i < w->njobs; i++)
        coll_comm_destroy(w->jobs[i].comm);
    free(w->jobs);
    free(w->calls);
}

const workload_ops wl_coll_jobs = {
    .key = "jobs",
    .size = sizeof(cjobs_wl),
    .configure = jobs_configure,
    .start = jobs_start,
    .finished = jobs_finished,
    .progress = jobs_progress,
    .report = jobs_report,
    .fini = jobs_fini,
};
