/*
 * bench.c - `aisim bench`: reference benchmarks.
 *
 * Engine:
 *   hold N      the classic hold model (Jones, CACM 1986): N events pending;
 *               each one, when it runs, schedules one more at now + Exp(1us).
 *               Measures the queue at a steady size of 1k, 100k and 1M.
 *   hold-skew   the same at 10k pending with 1 % of increments Exp(10 ms):
 *               the skew of a long timeout among packet events (about 99 %
 *               of the pending events are then far in the future).
 *   timers      a transport-like mix: 10k flows, each a chain of packet
 *               events (Exp(10us) apart) that re-arms the flow's
 *               retransmission timer (200us) on every packet, so nearly every
 *               timer is moved or cancelled before it fires.  Counted: events
 *               run plus timer re-arms.
 *   cancel      the same with one-shot events: cancel the old timeout, schedule
 *               a new one (the pattern of code without embedded timers).
 * Scenarios: built-in examples run end to end (output to a temporary
 * directory): the M/M/1 queue, four DCTCP flows on a 10 Gbps dumbbell,
 * 32-sender incast, and web-search traffic at 50 % load on a 32-host
 * leaf-spine (the reference network scenario); SDTCP's N = 32 incast with
 * two background flows, run again without the controller in the same
 * process (the ratio of wall time per packet hop, and the control
 * messages per simulated second); one iteration of GPT-13B TP8 DP16 on 128
 * GPUs (ai/gpt13b, from AICB's SimAI workload file) with its messages at a
 * tenth of their size (some 150M events; the full size is ten times that,
 * minutes of CPU).
 *
 * Each case runs in a child process so that its peak resident memory
 * (wait4's ru_maxrss) is its own.  Times are wall-clock; compare ratios
 * measured in one run, not absolute numbers across machines.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aisim/rng.h"
#include "aisim/sim.h"
#include "aisim/units.h"
#include "cli/cli.h"
#include "cli/run.h"

typedef struct bres {
    double ops;         /* events (plus timer operations) counted */
    double pkts;        /* packets serialised by ports (network scenarios) */
    double wall;        /* seconds */
    double sim_s;       /* simulated seconds */
    double ctl_per_s;   /* sdtcp: control messages per simulated second */
    double ratio;       /* sdtcp: wall per packet hop, with / without controller */
} bres;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- hold model ---- */

typedef struct hold {
    rng r;
    uint64_t left;
    int bimodal;        /* 1 % of increments Exp(10 ms) instead of Exp(1 us) */
} hold;

static void hold_ev(sim *s, void *obj, uint64_t arg)
{
    hold *h = obj;
    if (h->left-- == 0) {
        sim_stop(s);
        return;
    }
    double mean = h->bimodal && rng_below(&h->r, 100) == 0 ? 1e10 : 1e6;
    sim_schedule(s, sim_now(s) + (int64_t)rng_exponential(&h->r, mean) + 1, hold_ev, h, arg);
}

static bres bench_hold(uint64_t pending, uint64_t events, int bimodal)
{
    sim *s = sim_create();
    hold h = {.bimodal = bimodal};
    rng_init(&h.r, 1, bimodal ? "bench.hold.bimodal" : "bench.hold", pending);
    for (uint64_t i = 0; i < pending; i++)
        sim_schedule(s, (int64_t)rng_exponential(&h.r, 1e6), hold_ev, &h, i);
    h.left = pending;       /* warm-up: every initial event runs once */
    sim_run(s, SIM_TIME_MAX);
    h.left = events;
    uint64_t e0 = sim_events_run(s);
    int64_t t0 = sim_now(s);
    double w0 = wall_now();
    sim_run(s, SIM_TIME_MAX);
    bres b = {.ops = (double)(sim_events_run(s) - e0), .wall = wall_now() - w0,
              .sim_s = (double)(sim_now(s) - t0) * 1e-12};
    sim_destroy(s);
    return b;
}

/* ---- timer mix ---- */

typedef struct flow {
    sim_timer rto;
    sim_event_id rto_id;    /* for the cancel variant */
    struct tmix *m;
} flow;

typedef struct tmix {
    rng r;
    uint64_t left, rearms, fired;
    int use_cancel;
    flow *f;
} tmix;

static void rto_fire(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    flow *f = obj;
    f->m->fired++;
}

static void pkt_ev(sim *s, void *obj, uint64_t arg)
{
    flow *f = obj;
    tmix *m = f->m;
    if (m->left-- == 0) {
        sim_stop(s);
        return;
    }
    int64_t now = sim_now(s);
    if (m->use_cancel) {
        sim_cancel(s, f->rto_id);
        f->rto_id = sim_schedule(s, now + 200 * 1000000LL, rto_fire, f, 0);
    } else {
        sim_timer_arm(s, &f->rto, now + 200 * 1000000LL);
    }
    m->rearms++;
    sim_schedule(s, now + (int64_t)rng_exponential(&m->r, 1e7) + 1, pkt_ev, f, arg);
}

static bres bench_timers(int nflows, uint64_t events, int use_cancel)
{
    sim *s = sim_create();
    tmix m = {.use_cancel = use_cancel};
    rng_init(&m.r, 1, "bench.timers", (uint64_t)use_cancel);
    m.f = xcalloc((size_t)nflows, sizeof *m.f);
    for (int i = 0; i < nflows; i++) {
        m.f[i].m = &m;
        sim_timer_init(&m.f[i].rto, rto_fire, &m.f[i], 0);
        sim_schedule(s, (int64_t)rng_exponential(&m.r, 1e7), pkt_ev, &m.f[i], 0);
    }
    m.left = events;
    double w0 = wall_now();
    sim_run(s, SIM_TIME_MAX);
    bres b = {.ops = (double)(sim_events_run(s) + m.rearms), .wall = wall_now() - w0,
              .sim_s = ps_to_s(sim_now(s))};
    sim_destroy(s);
    free(m.f);
    return b;
}

/* ---- scenarios ---- */

static bres bench_scenario(const char *name, const char *const *sets, int nsets)
{
    char dir[] = "/tmp/aisim-bench-XXXXXX";
    bres b = {0};
    if (!mkdtemp(dir))
        return b;
    char out[sizeof dir + 8];
    snprintf(out, sizeof out, "%s/run", dir);
    run_opts o = {.scenario = name, .out_dir = out, .sets = sets, .nsets = nsets};
    err e = {0};
    json_t *sum;
    if (run_scenario(&o, &sum, NULL, &e) == 0) {
        json_t *w = json_object_get(sum, "wall");
        b.ops = (double)json_integer_value(json_object_get(sum, "events"));
        b.wall = json_number_value(json_object_get(w, "seconds"));
        b.sim_s = json_number_value(json_object_get(sum, "sim_time_s"));
        b.pkts = (double)json_integer_value(
            json_object_get(json_object_get(sum, "results"), "packet_hops"));
        json_t *ctl = json_object_get(
            json_object_get(json_object_get(json_object_get(sum, "results"), "sdtcp"),
                            "controller"), "messages_per_sim_s");
        b.ctl_per_s = ctl ? json_number_value(ctl) : 0;
        json_decref(sum);
    } else {
        cli_print_error(&e);
    }
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "aisim bench: could not remove %s\n", dir);
    return b;
}

/* ---- driver ---- */

typedef struct bcase {
    const char *id;             /* for `aisim bench ID...` */
    const char *label;
    int kind;                   /* 0 hold, 1 timers, 2 cancel, 3 scenario, 4 bimodal hold,
                                   5 scenario with and without the SDN controller */
    uint64_t a, events, quick_events;
    const char *scenario;
    const char *sets[3];
    const char *quick[3];       /* --quick: overrides after sets (a smaller size) */
} bcase;

static const bcase cases[] = {
    {"hold-1k", "engine hold, 1k pending", 0, 1000, 20000000, 1000000, NULL, {NULL}, {NULL}},
    {"hold-100k", "engine hold, 100k pending", 0, 100000, 20000000, 1000000, NULL, {NULL}, {NULL}},
    {"hold-1m", "engine hold, 1M pending", 0, 1000000, 10000000, 1000000, NULL, {NULL}, {NULL}},
    {"hold-skew", "engine hold, 10k, 1% Exp(10 ms)", 4, 10000, 20000000, 1000000, NULL,
     {NULL}, {NULL}},
    {"timers", "engine timers re-armed, 10k flows", 1, 10000, 10000000, 1000000, NULL, {NULL},
     {NULL}},
    {"cancel", "engine timers cancelled, 10k flows", 2, 10000, 10000000, 1000000, NULL, {NULL},
     {NULL}},
    {"mm1", "scenario core/mm1 (2M customers)", 3, 0, 0, 0, "core/mm1", {NULL}, {NULL}},
    {"dumbbell", "scenario net/dumbbell, DCTCP, 50 ms", 3, 0, 0, 0, "net/dumbbell",
     {"net.transport.cc=dctcp", NULL}, {NULL}},
    {"incast", "scenario net/incast, 32 senders, 20 rounds", 3, 0, 0, 0, "net/incast",
     {"net.transport.min_rto=1ms", NULL}, {NULL}},
    {"websearch", "scenario net/leafspine-websearch, 50% load", 3, 0, 0, 0,
     "net/leafspine-websearch", {NULL}, {NULL}},
    {"fattree", "scenario net/fattree-websearch, k=8, 100G", 3, 0, 0, 0,
     "net/fattree-websearch", {NULL}, {"net.background.duration=200us", NULL}},
    /* Forwarding hop by hop: every packet chooses at every switch. */
    {"spray", "scenario net/spray-permutation, random spraying, 2 ms", 3, 0, 0, 0,
     "net/spray-permutation", {"stop=2ms", NULL}, {"stop=500us", NULL}},
    {"spray-rr", "scenario net/spray-permutation, round robin, 2 ms", 3, 0, 0, 0,
     "net/spray-permutation", {"stop=2ms", "net.routing=spray_rr", NULL},
     {"stop=500us", "net.routing=spray_rr", NULL}},
    /* k = 16: 1,024 hosts, 320 switches; 200 us of arrivals keep it to a
     * few seconds (the per-hop cost at scale: docs/benchmarks.md). */
    {"fattree16", "scenario net/fattree-websearch, k=16, 1024 hosts", 3, 0, 0, 0,
     "net/fattree-websearch", {"net.topology.k=16", "net.background.duration=200us", NULL},
     {"net.background.duration=5us", NULL}},
    {"allreduce128", "scenario ai/nccl-allreduce-128, 16 MiB", 3, 0, 0, 0,
     "ai/nccl-allreduce-128",
     {"collective.sweep.min_bytes=16MiB", "collective.sweep.max_bytes=16MiB", NULL},
     {"collective.sweep.min_bytes=1MiB", "collective.sweep.max_bytes=1MiB", NULL}},
    {"sdtcp", "scenario sdtcp/incast-bg, N=32, SDTCP", 5, 0, 0, 0, "sdtcp/incast-bg",
     {"net.extensions.sdtcp.scheme=sdtcp", NULL}, {"net.incast.rounds=3", NULL}},
    {"gpt13b", "scenario ai/gpt13b, 1 iteration, 128 GPUs, bytes x0.1", 3, 0, 0, 0, "ai/gpt13b",
     {"training.bytes_scale=0.1", NULL}, {"training.bytes_scale=0.005", NULL}},
    {"rdma", "scenario rdma/fattree-permutation, DCQCN", 3, 0, 0, 0,
     "rdma/fattree-permutation", {NULL}, {NULL}},
    /* The same permutation over TCP: the rdma case's traffic without PFC,
     * RED or RoCE, so that the two compare transports on equal work. */
    {"rdma-tcp", "scenario rdma/fattree-permutation, TCP", 3, 0, 0, 0,
     "rdma/fattree-permutation",
     {"net.transport={cc: dctcp, min_rto: 1ms}",
      "net.topology.link={rate: 100Gbps, delay: 1us, buffer: 4MB, ecn_k: 200KB}", NULL}, {NULL}},
    {"flow", "scenario net/flow-fattree, flow level, k=16", 3, 0, 0, 0, "net/flow-fattree",
     {NULL}, {"net.background.duration=200us", NULL}},
    {"fluid16k", "scenario ai/allreduce-100k-flow at 16 384 GPUs, fluid, 1 GiB", 3, 0, 0, 0,
     "ai/allreduce-100k-flow", {"collective.topology.servers=2048", NULL},
     {"collective.topology.servers=256", NULL}},
    {"stellar-rdma", "scenario stellar/rdma-permutation, OBS-128 over RoCEv2", 3, 0, 0, 0,
     "stellar/rdma-permutation", {NULL}, {NULL}},
};

#define NCASES (sizeof cases / sizeof *cases)

void cli_bench_list_cases(FILE *f, const char *indent, size_t width)
{
    size_t col = 0;
    for (size_t i = 0; i < NCASES; i++) {
        size_t len = strlen(cases[i].id);
        if (col && col + 1 + len > width) {
            fputc('\n', f);
            col = 0;
        }
        col += (size_t)fprintf(f, "%s%s", col ? " " : indent, cases[i].id);
    }
    fputc('\n', f);
}

/* A case's overrides into sets (room for 6), with --quick's after them;
 * returns how many. */
static int case_sets(const bcase *c, int quick, const char **sets)
{
    int n = 0;
    for (int i = 0; i < 3 && c->sets[i]; i++)
        sets[n++] = c->sets[i];
    for (int i = 0; quick && i < 3 && c->quick[i]; i++)
        sets[n++] = c->quick[i];
    return n;
}

static bres run_case(const bcase *c, int quick)
{
    uint64_t ev = quick ? c->quick_events : c->events;
    switch (c->kind) {
    case 0: return bench_hold(c->a, ev, 0);
    case 4: return bench_hold(c->a, ev, 1);
    case 1: return bench_timers((int)c->a, ev, 0);
    case 2: return bench_timers((int)c->a, ev, 1);
    case 5: {
        /* The same scenario without the controller (scheme none: the
         * switches' measuring hooks stay): the runs differ in what they
         * simulate, so the ratio is of wall time per packet hop. */
        const char *w_sets[6], *wo_sets[6];
        int nw = case_sets(c, quick, w_sets), nwo = case_sets(c, quick, wo_sets);
        wo_sets[0] = "net.extensions.sdtcp.scheme=none";
        bres w = bench_scenario(c->scenario, w_sets, nw);
        bres wo = bench_scenario(c->scenario, wo_sets, nwo);
        if (w.pkts > 0 && wo.pkts > 0 && wo.wall > 0)
            w.ratio = (w.wall / w.pkts) / (wo.wall / wo.pkts);
        return w;
    }
    default: {
        const char *sets[6];
        int n = case_sets(c, quick, sets);
        const char *qs[] = {"queue.customers=100000", NULL};
        if (quick && strcmp(c->scenario, "core/mm1") == 0)
            return bench_scenario(c->scenario, qs, 1);
        return bench_scenario(c->scenario, sets, n);
    }
    }
}

static size_t case_index(const char *id)
{
    size_t k = 0;
    while (k < NCASES && strcmp(cases[k].id, id) != 0)
        k++;
    return k;
}

int cli_bench(int argc, char **argv)
{
    int quick = 0, nsel = 0;
    size_t ncases = NCASES;
    char *sel = xcalloc(ncases, 1);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
            continue;
        }
        size_t k = case_index(argv[i]);
        if (k == ncases) {
            fprintf(stderr, "aisim bench: unknown case \"%s\"; cases:", argv[i]);
            for (k = 0; k < ncases; k++)
                fprintf(stderr, " %s", cases[k].id);
            fprintf(stderr, "\nusage: aisim bench [--quick] [CASE]...\n");
            free(sel);
            return EXIT_BAD_INPUT;
        }
        sel[k] = 1;
        nsel++;
    }
    printf("aisim bench%s: each case in its own process; wall-clock, one run\n\n",
           quick ? " --quick" : "");
    printf("%-10s %-38s %12s %9s %10s %14s %9s %9s\n", "id", "case", "events", "wall s", "Mev/s",
           "sim-s/wall-s", "Mpkt/s", "peak MiB");
    fflush(stdout);
    int failed = 0;
    double *pps = xcalloc(ncases, sizeof *pps);    /* packet-hops per wall second */
    double *evs = xcalloc(ncases, sizeof *evs);    /* events per wall second */
    for (size_t i = 0; i < ncases; i++) {
        if (nsel && !sel[i])
            continue;
        int fd[2];
        if (pipe(fd) != 0)
            return EXIT_RUN_FAILED;
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            bres b = run_case(&cases[i], quick);
            ssize_t w = write(fd[1], &b, sizeof b);
            _exit(w == (ssize_t)sizeof b && b.wall > 0 ? 0 : 1);
        }
        close(fd[1]);
        bres b = {0};
        ssize_t rd = read(fd[0], &b, sizeof b);
        close(fd[0]);
        int status;
        struct rusage ru;
        wait4(pid, &status, 0, &ru);
        if (rd != (ssize_t)sizeof b || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            printf("%-10s %-38s failed\n", cases[i].id, cases[i].label);
            failed = 1;
            continue;
        }
        evs[i] = b.ops / b.wall;
        char mp[32] = "-";
        if (b.pkts > 0) {
            pps[i] = b.pkts / b.wall;
            snprintf(mp, sizeof mp, "%.2f", pps[i] / 1e6);
        }
        printf("%-10s %-38s %12.0f %9.3f %10.2f %14.4g %9s %9.1f\n", cases[i].id, cases[i].label,
               b.ops, b.wall, b.ops / b.wall / 1e6, b.sim_s / b.wall, mp,
               (double)ru.ru_maxrss / 1024.0);
        if (cases[i].kind == 5)
            printf("%-10s   wall per packet hop with / without the controller %.3f; "
                   "control messages per simulated second %.0f\n", "", b.ratio, b.ctl_per_s);
        fflush(stdout);
    }
    free(sel);
    /* Issue 10's criterion, as ratios of this run: the rdma case's packet-hops
     * per second against the TCP cases' (docs/benchmarks.md). */
    static const char *const against[] = {"fattree", "rdma-tcp"};
    size_t ri = case_index("rdma");
    for (size_t j = 0; j < 2 && pps[ri] > 0; j++) {
        size_t k = case_index(against[j]);
        if (pps[k] > 0)
            printf("%-10s   packet-hops per second against %s: %.2f\n", "rdma", against[j],
                   pps[ri] / pps[k]);
    }
    /* The two headline rates of this run side by side. */
    size_t h = case_index("hold-100k"), f16 = case_index("fattree16");
    if (evs[h] > 0 || pps[f16] > 0)
        printf("\nheadline: engine %.2f M events/s at 100k pending; k=16 fat-tree %.2f M "
               "packet-hops/s\n", evs[h] / 1e6, pps[f16] / 1e6);
    free(pps);
    free(evs);
    printf("\nMev/s: million events per wall second (timer cases count re-arms too).\n"
           "Mpkt/s: million packets serialised by ports (one per hop) per wall second.\n");
    return failed ? EXIT_RUN_FAILED : EXIT_OK;
}
