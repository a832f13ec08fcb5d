/*
 * test_training.c - the `training` model end to end: the examples of
 * examples/ai at small size (GPT-13B from the SimAI file, LLaMA-65B from
 * the AICB log, two jobs on a dual-plane fabric) with their numbers
 * checked, analytical and packet modes, placements, determinism, and the
 * bad input (parallel degrees that do not divide the GPUs, a job larger
 * than the cluster, a workload line with a wrong field count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/training.h"
#include "testutil.h"

#define GPT13B_FILE AISIM_SRCDIR "/data/llm_comm_workloads/aicb_simai/G13B-M1-C01_GPT13B_" \
                    "megatron_tp8_pp1_mbs1_A100.txt"

static json_t *job0(json_t *sum, size_t i)
{
    return json_array_get(json_object_get(json_object_get(sum, "results"), "jobs"), i);
}

/* The compute of one iteration of the GPT-13B file: every layer's forward,
 * input-gradient and weight-gradient time, and the update times. */
static double gpt13b_compute_s(void)
{
    trn_wl w;
    err e = {0};
    assert_int_equal(trn_read_simai(&w, GPT13B_FILE, &e), 0);
    int64_t ps = 0;
    for (size_t i = 0; i < w.n; i++)
        ps += w.layers[i].fwd_ps + w.layers[i].ig_ps + w.layers[i].wg_ps + w.layers[i].update_ps;
    trn_wl_free(&w);
    return (double)ps * 1e-12;
}

/* Analytical GPT-13B: pp 1, so the iteration is compute + exposed
 * communication exactly; the compute is the file's; the DP reduce-scatter
 * of 6.5 GB at 25 GB/s (15/16 of it) is the largest exposed part. */
static void test_gpt13b_analytical(void **state)
{
    (void)state;
    const char *sets[] = {"training.comm=analytical"};
    json_t *sum = tu_run("ai/gpt13b", "g13a", sets, 1);
    json_t *j = job0(sum, 0);
    double T = tu_num(j, "iteration_s"), comp = tu_num(j, "compute_s"), exp = tu_num(j, "exposed_comm_s");
    assert_float_equal(comp, gpt13b_compute_s(), 1e-9);
    assert_float_equal(T, comp + exp, 1e-9);
    assert_true(exp > 6497239040.0 * 15 / 16 / 25e9);
    /* tokens: 16 replicas x 2048 per iteration; MFU = 6.6 GFLOP/token... */
    assert_float_equal(tu_num(j, "tokens_per_s"), 16 * 2048 / T, 1e-6);
    double mfu = tu_num(j, "mfu");
    assert_true(mfu > 0.05 && mfu < 0.5);
    json_decref(sum);
}

/* SimAI's busbw.yaml in the analytical mode: a table equal to the
 * defaults but DP's reduce-scatter at 50 GB/s (twice network_busbw) takes
 * exactly half of that exposed 6.5 GB reduce-scatter's time off the
 * iteration (0.121823232 s); SimAI's own example table runs. */
static void test_gpt13b_busbw_file(void **state)
{
    (void)state;
    const char *base[] = {"training.comm=analytical"};
    json_t *a = tu_run("ai/gpt13b", "g13bb0", base, 1);
    const char *sets[] = {"training.comm=analytical",
                          "training.busbw_file=../../tests/scenarios/data/busbw-dp50.yaml"};
    json_t *b = tu_run("ai/gpt13b", "g13bb1", sets, 2);
    double d = tu_num(job0(a, 0), "iteration_s") - tu_num(job0(b, 0), "iteration_s");
    assert_float_equal(d, 6497239040.0 * 15 / 16 * (1 / 25e9 - 1 / 50e9), 1e-9);
    json_decref(a);
    json_decref(b);
    const char *simai[] = {"training.comm=analytical", "training.busbw_file="
                           "../../data/llm_comm_workloads/simai_example/busbw.yaml"};
    json_t *c = tu_run("ai/gpt13b", "g13bb2", simai, 2);
    /* DP reduce-scatter and all-gather at 380 GB/s, TP all-reduce 300 */
    assert_true(tu_num(job0(c, 0), "exposed_comm_s") < 0.1);
    json_decref(c);
}

/* LLaMA-65B from the AICB log, analytical: 8 stages and 8 micro-batches:
 * idle (bubble) 7/15 of the iteration within 2 % at stage 0. */
static void test_llama65b_bubble(void **state)
{
    (void)state;
    const char *sets[] = {"training.comm=analytical"};
    json_t *sum = tu_run("ai/llama65b", "l65a", sets, 1);
    json_t *j = job0(sum, 0);
    double T = tu_num(j, "iteration_s"), comp = tu_num(j, "compute_s");
    /* compute: 8 micro-batches x 3 x forward of 10 layers */
    trn_model m = {.layers = 80, .hidden = 8192, .heads = 64, .ffn = 22016, .gated = true,
                   .vocab = 32000, .seq = 2048, .micro_batch = 1, .tp = 2, .pp = 8, .dp = 8,
                   .ep = 1, .gpu_flops = 312e12, .efficiency = 0.5, .bytes_per_param = 2};
    double fwd = trn_layer_fwd_flops(&m) * 10 / (312e12 * 0.5);
    assert_float_equal(comp, 8 * 3 * fwd, 1e-6 * comp);
    double idle = (T - comp - tu_num(j, "exposed_comm_s")) / T;
    if (fabs(idle - 7.0 / 15) > 0.02 * 7.0 / 15)
        fail_msg("bubble %g, want 7/15 = %g", idle, 7.0 / 15);
    json_decref(sum);
}

/* LLaMA-65B TP2 PP8 DP8 on its 128 GPUs (stages send across the
 * network), messages scaled down: the packet-level run and the
 * analytical evaluation agree within 0.1 %, both with the 7/15 bubble. */
static void test_llama65b_packet_matches_analytical(void **state)
{
    (void)state;
    /* all 128 GPUs: the log's DP groups have 8 ranks, so a smaller job
     * contradicts it (refused) */
    const char *sets[] = {"training.bytes_scale=0.001", "training.comm=packet"};
    json_t *p = tu_run("ai/llama65b", "l65p", sets, 2);
    sets[1] = "training.comm=analytical";
    json_t *a = tu_run("ai/llama65b", "l65an", sets, 2);
    double Tp = tu_num(job0(p, 0), "iteration_s"), Ta = tu_num(job0(a, 0), "iteration_s");
    if (fabs(Tp - Ta) > 1e-3 * Ta)
        fail_msg("packet %g s, analytical %g s", Tp, Ta);
    double idle = 1 - (tu_num(job0(p, 0), "compute_s") + tu_num(job0(p, 0), "exposed_comm_s")) / Tp;
    assert_true(fabs(idle - 7.0 / 15) < 0.02 * 7.0 / 15);
    json_decref(p);
    json_decref(a);
}

static char *slurp_run(const char *sub, const char *file)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s/%s", tu_tmp, sub, file);
    return tu_slurp(p, NULL);
}

/* Packet level, GPT-13B on 2 servers (DP2), messages scaled down: the
 * iteration ends, its compute is the file's, TP calls run inside servers
 * at the intra-host bus bandwidth, DP calls across the network at no more
 * than the NIC rate. */
static void test_gpt13b_packet_small(void **state)
{
    (void)state;
    const char *sets[] = {"training.topology.servers=2", "training.jobs[0].gpus=16",
                          "training.bytes_scale=0.0005"};
    json_t *sum = tu_run("ai/gpt13b", "g13p", sets, 3);
    json_t *j = job0(sum, 0);
    assert_int_equal(json_integer_value(json_object_get(j, "iterations_done")), 1);
    double T = tu_num(j, "iteration_s"), comp = tu_num(j, "compute_s");
    assert_float_equal(comp, gpt13b_compute_s(), 1e-6);
    assert_true(T >= comp);
    char *c = slurp_run("g13p", "collectives.csv");
    size_t tp = 0, dp = 0;
    for (char *l = strchr(c, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        char job[16], grp[8], coll[16];
        int gi, ranks;
        unsigned long long bytes;
        double st, t, bw;
        if (sscanf(l + 1, "%15[^,],%7[^,],%d,%15[^,],%d,%llu,%lf,%lf,%lf", job, grp, &gi, coll,
                   &ranks, &bytes, &st, &t, &bw) != 9)
            fail_msg("bad row %.60s", l + 1);
        if (!strcmp(grp, "tp")) {
            tp++;
            assert_int_equal(ranks, 8);
        } else if (!strcmp(grp, "dp")) {
            dp++;
            assert_int_equal(ranks, 2);
            assert_true(bw <= 25.0 * 1.01);
        }
    }
    /* 16 TP groups... 2 x (the file's TP calls) ; DP: 8 groups x its DP calls */
    assert_true(tp > 0 && tp % 2 == 0);
    assert_true(dp > 0 && dp % 8 == 0);
    free(c);
    json_decref(sum);
}

/* Two jobs on the dual-plane fabric, small: both finish; the rail-aligned
 * job's DP groups each sit on one rail (same local GPU), its TP groups on
 * one server; the link layers are reported with imbalance >= 1; the same
 * seed gives the same tables. */
static void test_two_jobs_small(void **state)
{
    (void)state;
    const char *sets[] = {"training.bytes_scale=0.001"};
    json_t *sum = tu_run("ai/two-jobs", "two", sets, 1);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(json_integer_value(json_object_get(job0(sum, i), "iterations_done")), 1);
    assert_true(tu_num(json_object_get(sum, "results"), "max_network_imbalance") >= 1);
    char *pl = slurp_run("two", "placement.csv");
    int srv_of[2][4][8], loc_of[2][4][8];     /* job a: [stage][dp][tp] */
    memset(srv_of, -1, sizeof srv_of);
    int rows = 0;
    for (char *l = strchr(pl, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        char job[8], ep[24];
        int r, t, d, s, sv, lg;
        assert_int_equal(sscanf(l + 1, "%7[^,],%d,%d,%d,%d,%23[^,],%d,%d", job, &r, &t, &d, &s,
                                ep, &sv, &lg), 8);
        rows++;
        if (strcmp(job, "a"))
            continue;
        srv_of[s][d][t] = sv;
        loc_of[s][d][t] = lg;
    }
    assert_int_equal(rows, 128);
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < 4; d++)
            for (int t = 0; t < 8; t++) {
                assert_int_equal(srv_of[s][d][t], srv_of[s][d][0]);   /* TP on a server */
                assert_int_equal(loc_of[s][d][t], loc_of[s][0][t]);   /* DP on a rail */
            }
    char *a = slurp_run("two", "jobs.csv");
    json_t *sum2 = tu_run("ai/two-jobs", "two2", sets, 1);
    char *b = slurp_run("two2", "jobs.csv");
    assert_string_equal(a, b);
    free(a);
    free(b);
    free(pl);
    json_decref(sum);
    json_decref(sum2);
}

/* Explicit placement: rank i on the endpoint listed i-th. */
static void test_explicit_placement(void **state)
{
    (void)state;
    char ranks[1024] = "training.jobs[0].ranks=[";
    for (int i = 15; i >= 0; i--)
        snprintf(ranks + strlen(ranks), sizeof ranks - strlen(ranks), "s%d.g%d%s", i / 8, i % 8,
                 i ? ", " : "]");
    const char *sets[] = {"training.topology.servers=2", "training.jobs[0].gpus=16",
                          "training.comm=analytical", ranks};
    json_t *sum = tu_run("ai/gpt13b", "expl", sets, 4);
    char *pl = slurp_run("expl", "placement.csv");
    assert_non_null(strstr(pl, "\ngpt13b,0,0,0,0,s1.g7,1,7\n"));
    assert_non_null(strstr(pl, "\ngpt13b,15,7,1,0,s0.g0,0,0\n"));
    free(pl);
    json_decref(sum);
}

static void expect_bad(const char *scenario, const char **sets, int n, const char *want)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/bad", tu_tmp);
    run_opts o = {.scenario = scenario, .out_dir = dir, .sets = sets, .nsets = n,
                  .check_only = 1};
    err e = {0};
    json_t *sum = NULL;
    int rc = run_scenario(&o, &sum, NULL, &e);
    assert_int_equal(run_exit_code(rc), EXIT_BAD_INPUT);
    if (!strstr(e.msg, want))
        fail_msg("got \"%s\", want \"%s\"", e.msg, want);
    assert_null(strchr(e.msg, '\n'));
}

static void test_bad_input(void **state)
{
    (void)state;
    const char *a[] = {"training.jobs[0].gpus=100"};
        expect_bad("ai/gpt13b", a, 1, "--set:1:23: training.jobs[0].gpus: expected a multiple of tp x pp = 8, "
               "found 100");
    const char *b[] = {"training.jobs[0].gpus=256"};
    expect_bad("ai/gpt13b", b, 1, "examples/ai/gpt13b.yaml:27:7: training.jobs[0]: tp x pp x dp = 256 GPUs, but the cluster has 128");
    const char *c[] = {"training.jobs[1].dp=17"};
    expect_bad("ai/two-jobs", c, 1, "the job needs 68 GPUs, and 64 of the 128 endpoints are free");
    const char *r[] = {"training.jobs[1].ranks=[s0.g0, s0.g1]"};
    expect_bad("ai/two-jobs", r, 1, "training.jobs[1].ranks: expected 64 endpoints (tp x pp x dp), "
               "found 2");
    char bad[128];
    snprintf(bad, sizeof bad, "%s/bad.txt", tu_tmp);
    FILE *f = fopen(bad, "w");
    fputs("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8\n2\n"
          "a -1 1 NONE 0 1 NONE 0 1 NONE 0 100\nb -1 1 NONE 0 1 NONE 0 1 NONE 0\n", f);
    fclose(f);
    char set[200];
    snprintf(set, sizeof set, "training.jobs[0].workload=%s", bad);
    const char *d[] = {set};
    char want[200];
    snprintf(want, sizeof want, "training.jobs[0].workload: %s:4: layer: expected 12 fields, "
             "found 11", bad);
    expect_bad("ai/gpt13b", d, 1, want);
}

/* The two ZeRO-2 logs AICB ships (pure DP128: no forward communication,
 * which the reader once took for "no forward pass in stage 0") run: one
 * micro-batch (one backward pass of gradient buckets), every rank in
 * DP, compute and communication both present, MFU in (0, 1). */
static void test_zero2_aicb_logs_run(void **state)
{
    (void)state;
    const char *l13[] = {"training.jobs[0].aicb_log=../../data/llm_comm_workloads/"
                         "aicb_physical/L13B-D1-C03_Llama13B_zero2_mbs1.csv",
                         "training.jobs[0].model={layers: 40, hidden: 5120, heads: 40, "
                         "ffn: 13824, gated: true, vocab: 32000, seq: 2048}"};
    for (int k = 0; k < 2; k++) {
        json_t *sum = tu_run("ai/llama7b-zero2", k ? "z2-13b" : "z2-7b", k ? l13 : NULL,
                             k ? 2 : 0);
        json_t *j = job0(sum, 0);
        assert_int_equal(json_integer_value(json_object_get(j, "gpus")), 128);
        double T = tu_num(j, "iteration_s"), comp = tu_num(j, "compute_s"),
               mfu = tu_num(j, "mfu");
        print_message("ZeRO-2 %s: iteration %g s, compute %g s, MFU %.3f\n", k ? "13B" : "7B", T,
                      comp, mfu);
        assert_true(comp > 0 && T > comp);
        assert_true(mfu > 0 && mfu < 1);
        json_decref(sum);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt13b_analytical),
        cmocka_unit_test(test_gpt13b_busbw_file),
        cmocka_unit_test(test_zero2_aicb_logs_run),
        cmocka_unit_test(test_llama65b_bubble),
        cmocka_unit_test(test_gpt13b_packet_small),
        cmocka_unit_test(test_llama65b_packet_matches_analytical),
        cmocka_unit_test(test_two_jobs_small),
        cmocka_unit_test(test_explicit_placement),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
