/*
 * queue.c - the single-server FIFO queue (G/G/1), the model that proves the
 * core: engine, random streams, distributions, scenario binding and outputs.
 *
 * Customers arrive with i.i.d. interarrival times and need i.i.d. service
 * times; one server serves them first come, first served.  The service time
 * is given directly (`service`), or as a job size and a server rate
 * (`job_size`, `rate`: a packet on a link, service = size / rate).  The run serves
 * `warmup` customers whose statistics are discarded, then `customers` more,
 * and stops.  Reported: mean waiting time in queue Wq (with a 95% confidence
 * interval from batch means), mean time in system W, server utilisation, the
 * time-average number in system L, and Little's law L = lambda*W as a check.
 *
 * With Poisson arrivals the exact mean wait is the Pollaczek-Khinchine
 * formula  Wq = lambda * E[S^2] / (2 (1 - rho)),  rho = lambda * E[S]
 * (Kleinrock, Queueing Systems vol. 1, 5.1), which gives M/M/1
 * (Wq = rho/(mu - lambda)) and M/D/1 (Wq = rho/(2 mu (1 - rho))); the report
 * puts the measured value next to it.
 *
 * Events: one pending arrival and at most one pending departure, so the
 * event set has two entries whatever the load; waiting customers are a ring
 * of arrival times.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/dist.h"
#include "aisim/model.h"
#include "aisim/rng.h"
#include "aisim/stats.h"
#include "aisim/units.h"

typedef struct queue_cfg {
    cfg_node *arrival;      /* interarrival-time distribution */
    cfg_node *service;      /* service-time distribution, or NULL */
    cfg_node *job_size;     /* job-size distribution, or NULL */
    int64_t rate_bps;       /* server rate with job_size */
    int64_t customers;      /* measured customers */
    int64_t warmup;         /* customers discarded first */
    int64_t sample_ps;      /* queue.csv sampling period; 0: off */
} queue_cfg;

static const cfg_key queue_keys[] = {
    {.name = "arrival", .type = CFG_NODE, .off = offsetof(queue_cfg, arrival),
     .help = "an interarrival-time distribution such as {dist: exponential, mean: 1ms}"},
    {.name = "service", .type = CFG_NODE, .off = offsetof(queue_cfg, service),
     .flags = CFG_OPTIONAL,
     .help = "a service-time distribution such as {dist: constant, value: 1ms}"},
    {.name = "job_size", .type = CFG_NODE, .off = offsetof(queue_cfg, job_size),
     .flags = CFG_OPTIONAL,
     .help = "a job-size distribution such as {dist: exponential, mean: 1500B} (with rate)"},
    {.name = "rate", .type = CFG_RATE, .off = offsetof(queue_cfg, rate_bps),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,
     .help = "the server's rate with job_size, e.g. 10Gbps"},
    {.name = "customers", .type = CFG_INT, .off = offsetof(queue_cfg, customers),
     .def = "100000", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e12,
     .help = "customers measured after the warm-up"},
    {.name = "warmup", .type = CFG_INT, .off = offsetof(queue_cfg, warmup), .def = "1000",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1e12,
     .help = "customers served before measuring"},
    {.name = "sample_interval", .type = CFG_TIME, .off = offsetof(queue_cfg, sample_ps),
     .def = "0s", .flags = CFG_MIN, .min = 0,
     .help = "period of the queue.csv time series (0s: no time series)"},
    {0},
};

typedef struct queue_model {
    queue_cfg cfg;
    dist arrival, service;      /* service: times, or sizes with job_size */
    double svc_scale;           /* ps per unit drawn from `service` */
    rng r_arr, r_svc;           /* independent streams */
    int64_t *ring;              /* arrival times of waiting customers, ps */
    size_t ring_cap, head, len; /* ring buffer */
    int busy;                   /* server busy */
    int64_t served;             /* departures so far */
    int64_t in_system;          /* customers present */
    /* measurement (after warm-up) */
    int measuring;
    int64_t t0;                 /* start of measurement, ps */
    batch_means wq;             /* waiting times, s */
    stat_acc w;                 /* times in system, s */
    double area_n;              /* integral of customers present, customer*ps */
    double busy_ps;             /* time the server was busy, ps */
    int64_t t_last;             /* last change of in_system / busy */
    int64_t arrivals_meas;      /* arrivals during measurement */
    int64_t cur_arrival;        /* arrival time of the customer in service */
    samples ts_t, ts_n;         /* time series, kept until report */
    sim_timer sampler;
} queue_model;

static int queue_configure(void *st, cfg_node *sec, const char *path, const model_env *env,
                           err *e)
{
    queue_model *q = st;
    char sub[512];
    int r = cfg_bind(sec, path, queue_keys, &q->cfg, e);
    if (r)
        return r;
    if ((r = dist_from_cfg(q->cfg.arrival, cfg_path(sub, sizeof sub, path, "arrival"),
                           DIST_Q_TIME, env->base_dir, &q->arrival, e)))
        return r;
    if (!q->cfg.service == !q->cfg.job_size || !q->cfg.job_size != !q->cfg.rate_bps) {
        const cfg_node *at = q->cfg.service ? q->cfg.service : q->cfg.job_size ? q->cfg.job_size
                                                                               : sec;
        return cfg_err(e, AISIM_EINVAL, at, path, "give either service, or job_size and rate "
                       "(found %s)", q->cfg.service && q->cfg.job_size ? "service and job_size"
                       : q->cfg.service ? "service and rate" : q->cfg.job_size ? "job_size "
                       "without rate" : q->cfg.rate_bps ? "rate without job_size" : "none");
    }
    if (q->cfg.service) {
        r = dist_from_cfg(q->cfg.service, cfg_path(sub, sizeof sub, path, "service"),
                          DIST_Q_TIME, env->base_dir, &q->service, e);
        q->svc_scale = 1;
    } else {
        r = dist_from_cfg(q->cfg.job_size, cfg_path(sub, sizeof sub, path, "job_size"),
                          DIST_Q_SIZE, env->base_dir, &q->service, e);
        q->svc_scale = 8e12 / (double)q->cfg.rate_bps;
    }
    if (r)
        return r;
    if (!(dist_mean(&q->arrival) > 0))
        return cfg_err(e, AISIM_ERANGE, q->cfg.arrival, cfg_path(sub, sizeof sub, path, "arrival"),
                       "expected a mean interarrival time > 0, found 0");
    rng_init(&q->r_arr, env->seed, "queue.arrival", 0);
    rng_init(&q->r_svc, env->seed, "queue.service", 0);
    bm_init(&q->wq, 32);
    stat_init(&q->w);
    samples_init(&q->ts_t);
    samples_init(&q->ts_n);
    return 0;
}

static int64_t draw(const dist *d, rng *r, double scale)
{
    return units_round_sat(dist_sample(d, r) * scale);
}

/* Accumulates the time integrals up to now. */
static void account(queue_model *q, int64_t now)
{
    if (q->measuring) {
        double dt = (double)(now - q->t_last);
        q->area_n += dt * (double)q->in_system;
        if (q->busy)
            q->busy_ps += dt;
    }
    q->t_last = now;
}

static void on_departure(sim *s, void *obj, uint64_t arg);

static void start_service(queue_model *q, sim *s, int64_t arrived)
{
    int64_t now = sim_now(s);
    if (q->measuring)
        bm_add(&q->wq, ps_to_s(now - arrived));
    q->busy = 1;
    q->cur_arrival = arrived;
    sim_schedule_in(s, draw(&q->service, &q->r_svc, q->svc_scale), on_departure, q, 0);
}

static void on_arrival(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    queue_model *q = obj;
    int64_t now = sim_now(s);
    account(q, now);
    q->in_system++;
    if (q->measuring)
        q->arrivals_meas++;
    sim_schedule_in(s, draw(&q->arrival, &q->r_arr, 1), on_arrival, q, 0);
    if (!q->busy) {
        start_service(q, s, now);
        return;
    }
    if (q->len == q->ring_cap) {            /* grow the ring, keeping order */
        size_t nc = q->ring_cap ? 2 * q->ring_cap : 1024;
        int64_t *nr = xmalloc(nc * sizeof *nr);
        for (size_t i = 0; i < q->len; i++)
            nr[i] = q->ring[(q->head + i) % q->ring_cap];
        free(q->ring);
        q->ring = nr;
        q->ring_cap = nc;
        q->head = 0;
    }
    q->ring[(q->head + q->len++) % q->ring_cap] = now;
}

static void on_departure(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    queue_model *q = obj;
    int64_t now = sim_now(s);
    account(q, now);
    q->in_system--;
    q->busy = 0;
    if (q->measuring)
        stat_add(&q->w, ps_to_s(now - q->cur_arrival));
    q->served++;
    if (q->served == q->cfg.warmup) {
        q->measuring = 1;
        q->t0 = q->t_last = now;
    }
    if (q->served == q->cfg.warmup + q->cfg.customers) {
        sim_stop(s);
        return;
    }
    if (q->len > 0) {
        int64_t a = q->ring[q->head];
        q->head = (q->head + 1) % q->ring_cap;
        q->len--;
        start_service(q, s, a);
    }
}

static void on_sample(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    queue_model *q = obj;
    samples_add(&q->ts_t, ps_to_s(sim_now(s)));
    samples_add(&q->ts_n, (double)q->in_system);
    sim_timer_arm(s, &q->sampler, sim_now(s) + q->cfg.sample_ps);
}

static int queue_start(void *st, sim *s, err *e)
{
    (void)e;
    queue_model *q = st;
    q->measuring = q->cfg.warmup == 0;
    sim_schedule(s, draw(&q->arrival, &q->r_arr, 1), on_arrival, q, 0);
    if (q->cfg.sample_ps > 0) {
        sim_timer_init(&q->sampler, on_sample, q, 0);
        sim_timer_arm(s, &q->sampler, 0);
    }
    return 0;
}

static double queue_progress(const void *st, const sim *s)
{
    (void)s;
    const queue_model *q = st;
    return (double)q->served / (double)(q->cfg.warmup + q->cfg.customers);
}

static int queue_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    queue_model *q = st;
    double T = (double)(sim_now(s) - q->t0);        /* measured span, ps */
    double lambda_meas = T > 0 ? (double)q->arrivals_meas / ps_to_s((int64_t)T) : NAN;
    double wq = bm_mean(&q->wq), hw = bm_halfwidth95(&q->wq);
    double L = T > 0 ? q->area_n / T : NAN;

    json_object_set_new(sum, "customers", json_integer(q->served - q->cfg.warmup));
    out_json_num(sum, "mean_wait_s", wq);
    out_json_num(sum, "mean_wait_ci95_s", hw);
    out_json_num(sum, "mean_time_in_system_s", q->w.n ? q->w.mean : NAN);
    out_json_num(sum, "utilisation", T > 0 ? q->busy_ps / T : NAN);
    out_json_num(sum, "mean_in_system", L);
    out_json_num(sum, "arrival_rate_per_s", lambda_meas);
    /* Little's law: L = lambda * W, measured independently. */
    out_json_num(sum, "littles_law_lambda_w", lambda_meas * (q->w.n ? q->w.mean : NAN));

    json_t *an = json_object();
    if (q->arrival.kind == DIST_EXPONENTIAL) {
        double lambda = 1.0 / ps_to_s((int64_t)dist_mean(&q->arrival));
        double k = q->svc_scale * 1e-12;     /* seconds per unit drawn */
        double es = dist_mean(&q->service) * k, es2 = dist_moment2(&q->service) * k * k;
        double rho = lambda * es;
        const char *formula = q->service.kind == DIST_EXPONENTIAL ? "M/M/1"
                            : q->service.kind == DIST_CONSTANT ? "M/D/1"
                                                               : "M/G/1 (Pollaczek-Khinchine)";
        json_object_set_new(an, "model", json_string(formula));
        out_json_num(an, "load", rho);
        if (rho < 1 && isfinite(es2)) {
            double awq = lambda * es2 / (2 * (1 - rho));
            out_json_num(an, "mean_wait_s", awq);
            out_json_num(an, "mean_time_in_system_s", awq + es);
            out_json_num(an, "mean_in_system", lambda * (awq + es));
            out_json_num(an, "mean_wait_rel_error", (wq - awq) / awq);
        } else {
            json_object_set_new(an, "note", json_string(rho >= 1 ? "unstable: load >= 1"
                                                                  : "E[S^2] is infinite"));
        }
    } else {
        json_object_set_new(an, "model", json_null());
        json_object_set_new(an, "note", json_string("no closed form without Poisson arrivals"));
    }
    json_object_set_new(sum, "analytic", an);

    if (q->ts_t.n > 0) {
        FILE *f = out_file(o, "queue.csv", e);
        if (!f)
            return e->code;
        fprintf(f, "time_s,in_system\n");
        char b[40];
        for (size_t i = 0; i < q->ts_t.n; i++) {
            out_fmt_double(b, sizeof b, q->ts_t.v[i]);
            fprintf(f, "%s,%.0f\n", b, q->ts_n.v[i]);
        }
    }
    return 0;
}

static void queue_fini(void *st)
{
    queue_model *q = st;
    dist_fini(&q->arrival);
    dist_fini(&q->service);
    bm_fini(&q->wq);
    samples_fini(&q->ts_t);
    samples_fini(&q->ts_n);
    free(q->ring);
}

static const plot_spec queue_plots[] = {
    {.csv = "queue.csv", .x = "time_s", .y = "in_system", .title = "customers in system",
     .out = "queue", .xlabel = "simulated time (s)", .ylabel = "customers"},
    {0},
};

/* What `aisim run` prints first (model.h). */
static const model_headline queue_headlines[] = {
    {"mean_wait_s", "mean wait", "s", 0},
    {"mean_wait_ci95_s", "mean wait, 95% CI half-width", "s", 0},
    {"analytic.mean_wait_s", "mean wait, analytic", "s", 0},
    {"analytic.mean_wait_rel_error", "error against analytic", "%", 0},
    {"utilisation", "server utilisation", "%", 0},
    {"customers", "customers served", "", 0},
    {NULL, NULL, NULL, 0},
};

const model_ops queue_model_ops = {
    .name = "queue",
    .summary = "single-server FIFO queue (G/G/1), checked against queueing theory",
    .state_size = sizeof(queue_model),
    .configure = queue_configure,
    .start = queue_start,
    .progress = queue_progress,
    .report = queue_report,
    .fini = queue_fini,
    .plots = queue_plots,
    .headlines = queue_headlines,
};
