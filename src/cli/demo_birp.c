/*
 * demo_birp.c - the BIRP part of `aisim demo`: the CI-size paper setting
 * (examples/birp/small.yaml: three Jetson edges, 40 s of the Azure trace at
 * its own time scale) at the paper's 1.5x the edges' serial capacity and at
 * 2x, under BIRP and each baseline, on one seed: inference loss and SLO
 * failure rate, each next to the model-selection baseline the paper compares
 * with, and Clipper-style batched model selection beside it, so the table
 * shows where BIRP's gain comes from and where it is gone.  About ten
 * seconds.
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
    static const char *const policies[] = {"model_selection", "clipper", "birp", "birp_static",
                                           "batch_only", "jsq"};
    static const char *const loads[] = {"1.5", "2"};
    enum { NP = sizeof policies / sizeof *policies, NL = sizeof loads / sizeof *loads };
    printf("birp: batch-aware inference redistribution, 3 Jetson edges, Azure trace (own time "
           "scale, superposed)\n      (examples/birp/small.yaml, seed 1)\n");
    static const char *const cite[] = {"--vary birp.workload.load=1.5,2",
                                       "--vary birp.policy=model_selection,clipper,birp,"
                                       "birp_static,batch_only,jsq"};
    demo_cite("sweep", "birp/small", cite, 2);
    for (int l = 0; l < NL; l++) {
        double loss[NP], fail[NP], tput[NP], acc[NP];
        for (int i = 0; i < NP; i++) {
            char dir[512], set[64], lset[64];
            snprintf(dir, sizeof dir, "%s/birp-%s-load%s", out_root, policies[i], loads[l]);
            snprintf(set, sizeof set, "birp.policy=%s", policies[i]);
            snprintf(lset, sizeof lset, "birp.workload.load=%s", loads[l]);
            const char *sets[] = {set, lset};
            json_t *sum;
            int r = demo_run("birp/small", dir, sets, 2, &sum);
            if (r)
                return r;
            json_t *res = json_object_get(sum, "results");
            loss[i] = jnum(res, "inference_loss");
            fail[i] = jnum(res, "slo_failure_rate");
            tput[i] = jnum(res, "goodput_rps");
            acc[i] = jnum(res, "served_accuracy");
            json_decref(sum);
        }
        printf("\n  load %sx serial capacity%s\n", loads[l], l == 0 ? " (the paper's setting)" : "");
        printf("  %-16s %9s %12s %9s %12s %10s %9s\n", "policy", "inf.loss", "vs model-sel",
               "SLO fail", "x model-sel", "goodput/s", "accuracy");
        for (int i = 0; i < NP; i++) {
            char ratio[32];
            if (fail[0] > 0)
                snprintf(ratio, sizeof ratio, "%.2f", fail[i] / fail[0]);
            else
                snprintf(ratio, sizeof ratio, "%s", fail[i] > 0 ? "(ms: 0)" : "-");
            printf("  %-16s %9.4f %+11.1f%% %8.2f%% %12s %10.1f %8.1f%%\n", policies[i], loss[i],
                   100 * (loss[i] - loss[0]) / loss[0], 100 * fail[i], ratio, tput[i],
                   100 * acc[i]);
        }
    }
    printf("\n  paper (ICPP'23 abstract): BIRP >= 32.9%% lower loss than model selection, SLO "
           "failure rate 0.198x.\n  Here the gain is batching's: Clipper-style model selection "
           "with AIMD batching matches BIRP\n  on this trace; docs/birp.md has the sweep over "
           "load and seeds, including where BIRP loses.\n  inference loss = 1 - top-1 accuracy, "
           "1 for an SLO miss (docs/birp.md)\n");
    return 0;
}
