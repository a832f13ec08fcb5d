/*
 * demo.c - `aisim demo`: a short tour, one headline table per module, each
 * from a built-in example run at a size that takes a few seconds.
 *
 * The tour, one part per model (all nine): the core's queueing validation
 * (the single-server queue at two loads with exponential service and at one
 * with deterministic service, each next to the Pollaczek-Khinchine value),
 * TCP incast collapse by senders and transport, BIRP against its baselines,
 * energy-efficient federated learning against FedAvg, Stellar's container
 * start-up and GDR paths, an nccl-tests all-reduce sweep, SDTCP against
 * NewReno and ICTCP, LLM training iterations, and SkeletonHunter against its
 * baselines.  Every table prints the commands that reproduce it (demo_cite):
 * the example and exactly the overrides the demo runs it with.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run.h"

typedef struct demo_case {
    const char *label;
    const char *example;
    const char *sets[4];
} demo_case;

static const demo_case queue_cases[] = {
    {"M/M/1", "core/mm1", {"queue.arrival.mean=2ms", NULL}},
    {"M/M/1", "core/mm1", {NULL}},
    {"M/D/1", "core/md1", {NULL}},
};

int demo_run(const char *scenario, const char *dir, const char *const *sets, int nsets,
             json_t **sum)
{
    run_opts o = {.scenario = scenario, .out_dir = dir, .sets = sets, .nsets = nsets};
    err e = {0};
    int r = run_scenario(&o, sum, NULL, &e);
    if (r) {
        cli_print_error(&e);
        return run_exit_code(r);
    }
    return 0;
}

void demo_cite(const char *verb, const char *example, const char *const *args, int nargs)
{
    printf("  $ aisim %s %s", verb, example);
    for (int i = 0; i < nargs; i++) {
        const char *a = args[i];
        /* --vary/--seeds arguments come whole; a bare k=v is a --set. */
        int opt = a[0] == '-';
        int quote = strpbrk(a, " []{},*") && !opt;
        printf(opt ? " %s" : quote ? " --set '%s'" : " --set %s", a);
    }
    printf("\n");
}

double demo_num(json_t *sum, const char *key, const char *sub)
{
    json_t *v = json_object_get(json_object_get(sum, "results"), key);
    if (sub)
        v = json_object_get(v, sub);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int demo_queue(const char *out_root)
{
    printf("core: single-server queue against queueing theory (examples/core/mm1.yaml, md1.yaml)\n");
    for (size_t i = 0; i < sizeof queue_cases / sizeof *queue_cases; i++) {
        int n = 0;
        while (queue_cases[i].sets[n])
            n++;
        demo_cite("run", queue_cases[i].example, queue_cases[i].sets, n);
    }
    printf("\n");
    printf("  %-6s %5s %10s  %-22s %-12s %8s\n", "model", "load", "customers",
           "mean wait (95% CI)", "analytic", "error");
    for (size_t i = 0; i < sizeof queue_cases / sizeof *queue_cases; i++) {
        const demo_case *c = &queue_cases[i];
        int nsets = 0;
        while (c->sets[nsets])
            nsets++;
        char dir[512];
        snprintf(dir, sizeof dir, "%s/queue-%zu", out_root, i);
        json_t *sum;
        int r = demo_run(c->example, dir, c->sets, nsets, &sum);
        if (r)
            return r;
        double wq = demo_num(sum, "mean_wait_s", NULL), hw = demo_num(sum, "mean_wait_ci95_s", NULL);
        double aw = demo_num(sum, "analytic", "mean_wait_s");
        double load = demo_num(sum, "analytic", "load");
        json_t *res = json_object_get(sum, "results");
        char ci[64];
        snprintf(ci, sizeof ci, "%.4f ms (+-%.4f)", wq * 1e3, hw * 1e3);
        printf("  %-6s %5.2f %10lld  %-22s %-12s %+7.2f%%\n", c->label, load,
               (long long)json_integer_value(json_object_get(res, "customers")), ci,
               (snprintf(dir, sizeof dir, "%.4f ms", aw * 1e3), dir), 100 * (wq - aw) / aw);
        json_decref(sum);
    }
    printf("\n  analytic: Pollaczek-Khinchine, Wq = lambda E[S^2] / (2 (1 - rho))\n");
    return 0;
}

int cli_demo(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, 0, 'o'}, {0, 0, 0, 0}};
    const char *out_root = "out/demo";
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c != 'o' || !*optarg) {
            fprintf(stderr, c != 'o' ? "aisim demo: unknown option \"%s\"\n"
                                     : "aisim demo: --out expects a directory name, found \"\"\n",
                    argv[optind - 1]);
            fprintf(stderr, "usage: aisim demo [--out DIR]\n");
            return EXIT_BAD_INPUT;
        }
        out_root = optarg;
    }
    if (optind != argc) {
        fprintf(stderr, "aisim demo: unexpected argument \"%s\"\n", argv[optind]);
        return EXIT_BAD_INPUT;
    }
    printf("aisim demo (run directories under %s)\n\n", out_root);
    int (*const parts[])(const char *) = {demo_queue,     demo_net,     demo_birp,
                                          demo_fedenergy, demo_stellar, demo_collective,
                                          demo_sdtcp,     demo_training, demo_skeleton};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        if (i)
            printf("\n");
        int r = parts[i](out_root);
        if (r)
            return r;
    }
    return 0;
}
