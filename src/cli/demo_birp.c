/*
 * demo_birp.c - the BIRP part of `aisim demo`: the CI-size paper setting
 * (examples/birp/small.yaml: three Jetson edges, 40 s of the Azure trace at
 * 2x the edges' serial capacity) under BIRP and each baseline, on one seed,
 * as one table of inference loss and SLO failure rate, each next to the
 * model-selection baseline the paper compares with.  About two seconds.
 */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/run.h"

static double jnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int demo_birp(const char *out_root)
{
    static const char *const policies[] = {"model_selection", "birp", "birp_static", "serial",
                                           "local", "jsq"};
    enum { NP = sizeof policies / sizeof *policies };
    double loss[NP], fail[NP], tput[NP], acc[NP];
    printf("birp: batch-aware inference redistribution, 3 Jetson edges, Azure trace at 2x serial "
           "capacity\n      (examples/birp/small.yaml, seed 1)\n\n");
    for (int i = 0; i < NP; i++) {
        char dir[512], set[64];
        snprintf(dir, sizeof dir, "%s/birp-%s", out_root, policies[i]);
        snprintf(set, sizeof set, "birp.policy=%s", policies[i]);
        const char *sets[] = {set};
        json_t *sum;
        int r = demo_run("birp/small", dir, sets, 1, &sum);
        if (r)
            return r;
        json_t *res = json_object_get(sum, "results");
        loss[i] = jnum(res, "inference_loss");
        fail[i] = jnum(res, "slo_failure_rate");
        tput[i] = jnum(res, "goodput_rps");
        acc[i] = jnum(res, "served_accuracy");
        json_decref(sum);
    }
    printf("  %-16s %9s %12s %9s %12s %10s %9s\n", "policy", "inf.loss", "vs model-sel",
           "SLO fail", "x model-sel", "goodput/s", "accuracy");
    for (int i = 0; i < NP; i++)
        printf("  %-16s %9.4f %+11.1f%% %8.2f%% %12.2f %10.1f %8.1f%%\n", policies[i], loss[i],
               100 * (loss[i] - loss[0]) / loss[0], 100 * fail[i], fail[i] / fail[0], tput[i],
               100 * acc[i]);
    printf("\n  paper (ICPP'23 abstract): BIRP >= 32.9%% lower loss than model selection, SLO "
           "failure rate 0.198x;\n  inference loss = 1 - top-1 accuracy, 1 for an SLO miss "
           "(docs/birp.md)\n");
    return 0;
}
