/*
 * demo_more.c - the parts of `aisim demo` for the collective, SDTCP,
 * training and SkeletonHunter models, each a headline table from a
 * built-in example as it is (or with the overrides it prints):
 *
 *   collective  an nccl-tests all-reduce sweep, 16 ranks on a 100 Gbps
 *               rail-optimised fabric (ai/nccl-allreduce-small): the table
 *               nccl-tests prints, under a second
 *   sdtcp       a 32-sender incast beside two long flows, NewReno against
 *               SDTCP and ICTCP (sdtcp/incast-bg), about a second
 *   training    one iteration of GPT-13B and LLaMA-65B on 128 GPUs with the
 *               analytical communication model (ai/gpt13b, ai/llama65b
 *               with training.comm=analytical: the packet-level runs take
 *               minutes; docs/training.md)
 *   skeleton    SkeletonHunter and its baselines over 30 minutes of churn
 *               and random failures on 256 RNICs, one run
 *               (skeleton/small with skeleton.runs=1), a few seconds
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run.h"

int demo_collective(const char *out_root)
{
    char dir[512];
    json_t *sum;
    snprintf(dir, sizeof dir, "%s/collective", out_root);
    printf("collective: nccl-tests all_reduce, ring, 16 GPUs over TCP on a rail-optimised "
           "100 Gbps fabric\n            (examples/ai/nccl-allreduce-small.yaml)\n");
    demo_cite("run", "ai/nccl-allreduce-small", NULL, 0);
    int r = demo_run("ai/nccl-allreduce-small", dir, NULL, 0, &sum);
    if (r)
        return r;
    json_decref(sum);
    char path[600];
    snprintf(path, sizeof path, "%s/nccl_tests.txt", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        char line[512];
        printf("\n");
        while (fgets(line, sizeof line, f))
            printf("  %s", line);
        fclose(f);
    }
    printf("\n  busbw = algbw x 2(n-1)/n, as nccl-tests reports it (docs/collective.md)\n");
    return 0;
}

int demo_sdtcp(const char *out_root)
{
    static const struct { const char *label, *set; } sc[] = {
        {"NewReno (no control)", "net.extensions.sdtcp.scheme=none"},
        {"SDTCP", "net.extensions.sdtcp.scheme=sdtcp"},
        {"ICTCP", "net.extensions.sdtcp.scheme=ictcp"},
    };
    enum { NS = sizeof sc / sizeof *sc };
    printf("sdtcp: 32-sender incast every 10 ms beside 2 long flows into one 1 Gbps port, "
           "150 KB buffer,\n       min RTO 200 ms (examples/sdtcp/incast-bg.yaml, seed 1)\n");
    static const char *const cite[] = {"--vary net.extensions.sdtcp.scheme=none,sdtcp,ictcp"};
    demo_cite("sweep", "sdtcp/incast-bg", cite, 1);
    printf("\n  %-22s %12s %12s %12s %16s\n", "scheme", "QCT p99", "burst goodput",
           "burst loss", "background during");
    for (int i = 0; i < NS; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/sdtcp-%d", out_root, i);
        const char *sets[] = {sc[i].set};
        json_t *sum;
        int r = demo_run("sdtcp/incast-bg", dir, sets, 1, &sum);
        if (r)
            return r;
        char q[32], bg[32];
        cli_fmt_quantity(q, sizeof q, demo_num(sum, "sdtcp", "qct_p99_s"), "s");
        cli_fmt_quantity(bg, sizeof bg, demo_num(sum, "sdtcp", "bg_bps_during"), "bit/s");
        printf("  %-22s %12s %12.1f%% %11.1f%% %16s\n", sc[i].label, q,
               100 * demo_num(sum, "sdtcp", "burst_goodput_fraction"),
               100 * demo_num(sum, "sdtcp", "burst_loss_rate"), bg);
        json_decref(sum);
    }
    printf("\n  QCT: query completion time (every sender's block delivered); the paper's claim\n"
           "  and where this model departs from it: docs/sdtcp.md\n");
    return 0;
}

int demo_training(const char *out_root)
{
    static const char *const ex[] = {"ai/gpt13b", "ai/llama65b"};
    static const char *const sets[] = {"training.comm=analytical"};
    printf("training: one iteration of LLM training on 128 GPUs, communication analytical\n"
           "          (examples/ai/gpt13b.yaml from AICB's SimAI workload, ai/llama65b.yaml)\n");
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++)
        demo_cite("run", ex[i], sets, 1);
    printf("\n  %-10s %6s %11s %11s %14s %16s %7s\n", "job", "GPUs", "iteration", "compute",
           "exposed comm.", "throughput", "MFU");
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/training-%zu", out_root, i);
        json_t *sum;
        int r = demo_run(ex[i], dir, sets, 1, &sum);
        if (r)
            return r;
        json_t *jobs = json_object_get(json_object_get(sum, "results"), "jobs");
        for (size_t j = 0; j < json_array_size(jobs); j++) {
            json_t *o = json_array_get(jobs, j);
            char it[32], co[32], ex_[32], tp[32];
            cli_fmt_quantity(it, sizeof it, json_number_value(json_object_get(o, "iteration_s")),
                             "s");
            cli_fmt_quantity(co, sizeof co, json_number_value(json_object_get(o, "compute_s")),
                             "s");
            cli_fmt_quantity(ex_, sizeof ex_,
                             json_number_value(json_object_get(o, "exposed_comm_s")), "s");
            cli_fmt_quantity(tp, sizeof tp,
                             json_number_value(json_object_get(o, "tokens_per_s")), "tokens/s");
            printf("  %-10s %6lld %11s %11s %14s %16s %6.1f%%\n",
                   json_string_value(json_object_get(o, "name")),
                   (long long)json_integer_value(json_object_get(o, "gpus")), it, co, ex_, tp,
                   100 * json_number_value(json_object_get(o, "mfu")));
        }
        json_decref(sum);
    }
    printf("\n  drop the --set for the packet-level network (minutes); MFU against the GPUs'\n"
           "  peak; docs/training.md\n");
    return 0;
}

int demo_skeleton(const char *out_root)
{
    static const char *const sets[] = {"skeleton.runs=1"};
    printf("skeleton: SkeletonHunter and baselines, 256 RNICs, 30 min of container churn and\n"
           "          random failures of every Table 1 type (examples/skeleton/small.yaml, one run)\n");
    demo_cite("run", "skeleton/small", sets, 1);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/skeleton", out_root);
    json_t *sum;
    int r = demo_run("skeleton/small", dir, sets, 1, &sum);
    if (r)
        return r;
    printf("\n  %-16s %10s %8s %13s %16s %13s\n", "method", "precision", "recall",
           "localisation", "detection delay", "false alarms");
    json_t *ms = json_object_get(json_object_get(sum, "results"), "methods");
    const char *name;
    json_t *m;
    json_object_foreach(ms, name, m) {
#define MEAN(k) json_number_value(json_object_get(json_object_get(m, k), "mean"))
        char d[32];
        cli_fmt_quantity(d, sizeof d, MEAN("detect_delay_s"), "s");
        printf("  %-16s %9.1f%% %7.1f%% %12.1f%% %16s %13.0f\n", name,
               100 * MEAN("precision"), 100 * MEAN("recall"),
               100 * MEAN("localization_accuracy"), d, MEAN("false_alarms"));
#undef MEAN
    }
    json_decref(sum);
    printf("\n  more runs, the paper's cluster and Fig. 18: docs/skeleton.md\n");
    return 0;
}
