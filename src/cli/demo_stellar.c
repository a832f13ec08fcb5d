/*
 * demo_stellar.c - the Stellar part of `aisim demo`: container start-up with
 * full pinning against PVDMA at the three sizes of Fig. 6
 * (examples/stellar/host-startup.yaml, a short training job), each next to
 * the paper's number, and GDR write throughput at three message sizes for
 * the ATS/ATC, eMTT and HyV/MasQ paths (examples/stellar/host-gdr.yaml,
 * Fig. 8).  About a second.
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

int demo_stellar(const char *out_root)
{
    char dir[512];
    json_t *sum;
    static const char *const su[] = {"stellar.startup.workload.iterations=5"};
    snprintf(dir, sizeof dir, "%s/stellar-startup", out_root);
    int r = demo_run("stellar/host-startup", dir, su, 1, &sum);
    if (r)
        return r;
    printf("stellar: container start-up, full pinning vs PVDMA (examples/stellar/host-startup.yaml, "
           "Fig. 6)\n");
    demo_cite("run", "stellar/host-startup", su, 1);
    printf("\n  %10s %14s %14s %9s\n", "memory", "full pin (s)", "PVDMA (s)", "speed-up");
    json_t *rows = json_object_get(json_object_get(sum, "results"), "containers");
    for (size_t i = 0; i + 1 < json_array_size(rows); i += 2) {
        json_t *f = json_array_get(rows, i), *p = json_array_get(rows, i + 1);
        char a[32], b[32];
        snprintf(a, sizeof a, "%.1f (%g)", jnum(f, "startup_s"), jnum(f, "paper_startup_s"));
        snprintf(b, sizeof b, "%.1f (%g)", jnum(p, "startup_s"), jnum(p, "paper_startup_s"));
        printf("  %6.0f GiB %14s %14s %8.1fx\n", jnum(f, "memory_gib"), a, b,
               jnum(p, "speedup"));
    }
    json_decref(sum);
    static const char *const g[] = {"stellar.gdr.messages=[1MiB, 8MiB, 64MiB]",
                                    "stellar.gdr.min_requests=16384"};
    snprintf(dir, sizeof dir, "%s/stellar-gdr", out_root);
    if ((r = demo_run("stellar/host-gdr", dir, g, 2, &sum)))
        return r;
    json_t *gb = json_object_get(json_object_get(sum, "results"), "gbps");
    printf("\n  GDR writes, 16 connections, 200G RNIC (examples/stellar/host-gdr.yaml, Fig. 8), "
           "Gbps\n");
    demo_cite("run", "stellar/host-gdr", g, 2);
    printf("  %10s %9s %9s %9s\n", "message", "ats_atc", "emtt", "hyv_masq");
    static const char *const sizes[] = {"1 MiB", "8 MiB", "64 MiB"};
    for (size_t i = 0; i < 3; i++)
        printf("  %10s %9.1f %9.1f %9.1f\n", sizes[i],
               json_real_value(json_array_get(json_object_get(gb, "ats_atc"), i)),
               json_real_value(json_array_get(json_object_get(gb, "emtt"), i)),
               json_real_value(json_array_get(json_object_get(gb, "hyv_masq"), i)));
    json_decref(sum);
    printf("\n  paper in parentheses; Fig. 8: ATS/ATC 190 -> 170 (> 2 MB) -> 150 Gbps (> 32 MB), "
           "eMTT flat;\n  HyV/MasQ GDR through the root complex 141 Gbps (Fig. 14); "
           "docs/stellar.md\n");
    return 0;
}
