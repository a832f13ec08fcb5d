/*
 * test_training_wl.c - the training workloads without a network: every
 * SimAI workload file and AICB log of data/llm_comm_workloads loads (with
 * the numbers of a few lines checked), malformed lines name file:line, the
 * model generator's FLOPs and bytes, the 1F1B schedule's bubble fraction
 * (p-1)/(m+p-1) and its interleaved form (p-1)/(v m+p-1), DP buckets
 * overlapping the backward pass, ZeRO's collectives, and the AICB replay.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisim/training.h"

#define DATA AISIM_SRCDIR "/data/llm_comm_workloads/"

static const char *const simai_files[] = {
    "aicb_simai/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt",
    "aicb_simai/G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt",
    "aicb_simai/G175B-M1-C03_GPT175B_megatron_tp8_pp1_mbs1_A100.txt",
    "aicb_simai/L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt",
    "aicb_simai/L65B_D1_C08_Llama65B_deepspeed_zero3_A100.txt",
    "aicb_simai/L7B-D1-C02_Llama7B_deepspeed_zero3_A100.txt",
    "aicb_simai/L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt",
    "aicb_simai/all_gather.txt",
    "aicb_simai/all_reduce.txt",
    "aicb_simai/all_to_all.txt",
    "aicb_simai/muti_all_reduce.txt",
    "simai_example/workload_analytical.txt",
    "simai_example/microAllReduce.txt",
};
static const char *const aicb_files[] = {
    "aicb_physical/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1.csv",
    "aicb_physical/L13B-D1-C03_Llama13B_zero2_mbs1.csv",
    "aicb_physical/L65B-M1-C05_Llama65B_megatron_tp2_pp8_mbs1.csv",
    "aicb_physical/L7B-D1-C01_Llama7B_zero2_mbs1.csv",
    "aicb_physical/L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1.csv",
};

static void test_every_simai_file_loads(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof simai_files / sizeof *simai_files; i++) {
        trn_wl w;
        err e = {0};
        char p[512];
        snprintf(p, sizeof p, DATA "%s", simai_files[i]);
        if (trn_read_simai(&w, p, &e))
            fail_msg("%s: %s", simai_files[i], e.msg);
        assert_true(w.n > 0);
        trn_wl_free(&w);
    }
    /* GPT-13B TP8: 92 declared, 92 read; line 3 is "norm -1 0 BROADCAST 16384 ..." */
    trn_wl w;
    err e = {0};
    assert_int_equal(trn_read_simai(&w, DATA "aicb_simai/G13B-M1-C01_GPT13B_megatron_tp8_pp1_"
                                    "mbs1_A100.txt", &e), 0);
    assert_int_equal(w.tp, 8);
    assert_int_equal(w.declared, 92);
    assert_int_equal(w.n, 92);
    assert_string_equal(w.layers[0].name, "norm");
    assert_int_equal(w.layers[0].fwd.coll, TRN_C_BROADCAST);
    assert_int_equal(w.layers[0].fwd.bytes, 16384);
    assert_int_equal(w.layers[1].fwd_ps, 14565000000LL);   /* 14565000 ns */
    assert_int_equal(w.layers[1].wg.coll, TRN_C_REDUCESCATTER);
    assert_int_equal(w.layers[1].wg.group, TRN_G_DP);
    assert_int_equal(w.layers[1].wg.bytes, 6497239040ULL);
    trn_wl_free(&w);
    /* the LLaMA-65B file declares 839 layers and has 33 */
    assert_int_equal(trn_read_simai(&w, DATA "aicb_simai/L65B-M1-C05_Llama65B_megatron_tp8_pp1_"
                                    "mbs1_A100.txt", &e), 0);
    assert_int_equal(w.declared, 839);
    assert_int_equal(w.n, 33);
    trn_wl_free(&w);
    /* the MoE example: TP2 EP16 PP12 VPP8 GA24 on 9216 GPUs, _EP suffixes */
    assert_int_equal(trn_read_simai(&w, DATA "simai_example/workload_analytical.txt", &e), 0);
    assert_int_equal(w.tp, 2);
    assert_int_equal(w.ep, 16);
    assert_int_equal(w.pp, 12);
    assert_int_equal(w.vpp, 8);
    assert_int_equal(w.ga, 24);
    assert_int_equal(w.all_gpus, 9216);
    assert_int_equal(w.pp_bytes, 50331648);
    assert_int_equal(w.n, 1789);
    size_t ep = 0;
    for (size_t i = 0; i < w.n; i++)
        ep += w.layers[i].fwd.group == TRN_G_EP;
    assert_true(ep > 0);
    trn_wl_free(&w);
    assert_int_equal(trn_read_simai(&w, DATA "aicb_simai/all_reduce.txt", &e), 0);
    assert_true(w.micro);
    assert_int_equal(w.n, 19);
    assert_int_equal(w.layers[18].wg.bytes, 1073741824);
    trn_wl_free(&w);
}

static void test_every_aicb_log_loads(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof aicb_files / sizeof *aicb_files; i++) {
        trn_log l;
        err e = {0};
        char p[512];
        snprintf(p, sizeof p, DATA "%s", aicb_files[i]);
        if (trn_read_aicb(&l, p, &e))
            fail_msg("%s: %s", aicb_files[i], e.msg);
        assert_true(l.stages >= 1 && l.stages <= 8);
        /* and runs: every shipped log builds its stages' programs and
         * completes an iteration in the sans-I/O evaluator */
        trn_prog progs[8];
        int mb = 0;
        if (trn_build_aicb(progs, &l, 1000000, 2000000, &mb, &e))
            fail_msg("%s: %s", aicb_files[i], e.msg);
        trn_cost c = {.bw_Bps = {[TRN_G_TP] = 100e9, [TRN_G_DP] = 25e9, [TRN_G_PP] = 25e9},
                      .size = {[TRN_G_TP] = l.tp > 0 ? l.tp : 1, [TRN_G_DP] = l.dp > 0 ? l.dp : 1}};
        trn_stage_stats st[8];
        int64_t T = trn_eval(progs, l.stages, &c, st, &e);
        if (T <= 0)
            fail_msg("%s: %s", aicb_files[i], T < 0 ? e.msg : "no time");
        assert_true(mb >= 1);
        for (int k = 0; k < l.stages; k++)
            trn_prog_free(&progs[k]);
        trn_log_free(&l);
    }
    trn_log l;
    err e = {0};
    assert_int_equal(trn_read_aicb(&l, DATA "aicb_physical/L65B-M1-C05_Llama65B_megatron_tp2_pp8_"
                                   "mbs1.csv", &e), 0);
    assert_int_equal(l.stages, 8);
    assert_int_equal(l.tp, 2);
    assert_int_equal(l.dp, 8);
    size_t tp = 0, calls = 0;
    for (int s = 0; s < 8; s++) {
        calls += l.ncalls[s];
        for (size_t i = 0; i < l.ncalls[s]; i++)
            tp += l.calls[s][i].group == TRN_G_TP && l.calls[s][i].coll == TRN_C_ALLREDUCE &&
                  l.calls[s][i].phase != TRN_PH_INIT;
    }
    /* 21074 lines - 8 tags - 8 headers */
    assert_int_equal(calls, 21058);
    assert_int_equal(tp, 20480 + 128);
    int m = 0;
    trn_prog progs[8];
    assert_int_equal(trn_build_aicb(progs, &l, 1000000, 2000000, &m, &e), 0);
    assert_int_equal(m, 8);
    /* stage 0: 8 forward + 8 backward passes of 163 / 161 calls */
    size_t sends = 0, recvs = 0, colls = 0;
    for (size_t i = 0; i < progs[0].n; i++) {
        sends += progs[0].ops[i].kind == TRN_OP_SEND;
        recvs += progs[0].ops[i].kind == TRN_OP_RECV;
        colls += progs[0].ops[i].kind == TRN_OP_COLL;
    }
    assert_int_equal(sends, 8);
    assert_int_equal(recvs, 8);
    assert_int_equal(colls, 8 * (163 + 161));
    trn_cost c = {.bw_Bps = {[TRN_G_TP] = 100e9, [TRN_G_DP] = 25e9, [TRN_G_PP] = 25e9},
                  .size = {[TRN_G_TP] = 2, [TRN_G_DP] = 8}};
    trn_stage_stats st[8];
    int64_t T = trn_eval(progs, 8, &c, st, &e);
    if (T < 0)
        fail_msg("%s", e.msg);
    assert_true(T > 0);
    for (int s = 0; s < 8; s++)
        trn_prog_free(&progs[s]);
    trn_log_free(&l);
}

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/aisim-trn-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void expect_error(int (*rd)(const char *, err *), const char *text, const char *want)
{
    char *p = write_tmp(text);
    err e = {0};
    assert_int_equal(rd(p, &e), AISIM_EINVAL);
    char full[600];
    snprintf(full, sizeof full, "%s:%s", p, want);
    if (strncmp(e.msg, full, strlen(full)))
        fail_msg("got \"%s\", want prefix \"%s\"", e.msg, full);
    unlink(p);
}

static int rd_simai(const char *p, err *e)
{
    trn_wl w;
    int r = trn_read_simai(&w, p, e);
    if (!r)
        trn_wl_free(&w);
    return r;
}

static int rd_aicb(const char *p, err *e)
{
    trn_log l;
    int r = trn_read_aicb(&l, p, e);
    if (!r)
        trn_log_free(&l);
    return r;
}

static void test_malformed_lines_name_file_and_line(void **state)
{
    (void)state;
    expect_error(rd_simai, "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8\n2\n"
                 "a -1 1 NONE 0 1 NONE 0 1 NONE 0 100\nb -1 1 NONE 0 1 NONE 0 1 NONE 0\n",
                 "4: layer: expected 12 fields, found 11");
    expect_error(rd_simai, "X\n1\na -1 1 ALLSUM 0 1 NONE 0 1 NONE 0 100\n",
                 "3: field 4: expected a collective");
    expect_error(rd_simai, "X\n1\na -1 1x NONE 0 1 NONE 0 1 NONE 0 100\n",
                 "3: field 3 (forward compute): expected a time");
    expect_error(rd_simai, "X\nmany\n", "2: layer count");
    expect_error(rd_simai, "X\n1\n", "3: expected at least one layer");
    expect_error(rd_aicb, "[rank0 ~ rank7]\ncomm_type,comm_group,comm_group_size,msg_size,stage,"
                 "dst,src,additional,_elapsed_time,algbw,busbw,count\n"
                 "CommType.all_reduce,CommGroup.tp_group,8,1024,forward.x,None,None,,None,None,None"
                 ",1\nCommType.all_reduce,CommGroup.tp_group,8,1024,forward.x,None\n",
                 "4: call: expected 12 comma-separated fields, found 6");
    expect_error(rd_aicb, "[rank0 ~ rank7]\nCommType.all_reduce,CommGroup.tp_group,8,lots,f,None,"
                 "None,,None,None,None,1\n", "2: field 4 (msg_size)");
    expect_error(rd_aicb, "CommType.all_reduce\n", "1: expected a rank tag");
}

/* p stages, m micro-batches, one layer per stage of forward f and backward
 * 2f (ig f, wg f), no communication. */
static double bubble(int p, int m, int v, int64_t *T)
{
    trn_wl w = {.n = (size_t)p * v};
    w.layers = calloc(w.n, sizeof *w.layers);
    for (size_t i = 0; i < w.n; i++)
        w.layers[i].fwd_ps = w.layers[i].ig_ps = w.layers[i].wg_ps = 1000000 / v;
    trn_prog progs[16];
    err e = {0};
    trn_build_cfg c = {.pp = p, .vpp = v, .micro_batches = m};
    assert_int_equal(trn_build(progs, &w, &c, &e), 0);
    trn_cost cost = {0};
    trn_stage_stats st[16];
    *T = trn_eval(progs, p, &cost, st, &e);
    if (*T < 0)
        fail_msg("%s", e.msg);
    double idle = 0;
    for (int s = 0; s < p; s++) {
        idle += (double)st[s].idle_ps / (double)*T;
        assert_int_equal(st[s].compute_ps, (int64_t)m * 3000000);
        trn_prog_free(&progs[s]);
    }
    free(w.layers);
    return idle / p;
}

static void test_1f1b_bubble_fraction(void **state)
{
    (void)state;
    static const int cases[][2] = {{4, 8}, {8, 8}, {8, 32}, {2, 16}, {4, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int p = cases[i][0], m = cases[i][1];
        int64_t T;
        double b = bubble(p, m, 1, &T), want = (double)(p - 1) / (m + p - 1);
        if (b < want * 0.98 - 1e-12 || b > want * 1.02 + 1e-12)
            fail_msg("p %d m %d: bubble %g, want %g", p, m, b, want);
        /* the iteration: (m + p - 1) x (f + b) */
        assert_int_equal(T, (int64_t)(m + p - 1) * 3000000);
    }
    /* interleaved: (p-1)/(v m + p - 1) */
    static const int vc[][3] = {{4, 8, 2}, {4, 8, 4}, {8, 16, 2}};
    for (size_t i = 0; i < sizeof vc / sizeof *vc; i++) {
        int p = vc[i][0], m = vc[i][1], v = vc[i][2];
        int64_t T, T1;
        double b = bubble(p, m, v, &T), want = (double)(p - 1) / (v * m + p - 1);
        if (b < want * 0.98 || b > want * 1.02)
            fail_msg("p %d m %d v %d: bubble %g, want %g", p, m, v, b, want);
        bubble(p, m, 1, &T1);
        assert_true(T < T1);
    }
    /* interleaving needs m a multiple of p */
    trn_wl w = {.n = 8};
    w.layers = calloc(8, sizeof *w.layers);
    trn_prog progs[4];
    err e = {0};
    trn_build_cfg c = {.pp = 4, .vpp = 2, .micro_batches = 6};
    assert_int_equal(trn_build(progs, &w, &c, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "multiple of pp"));
    free(w.layers);
}

static const trn_model gpt13b = {
    .layers = 40, .hidden = 5120, .heads = 40, .ffn = 20480, .vocab = 50304, .seq = 2048,
    .micro_batch = 1, .tp = 8, .pp = 1, .dp = 16, .ep = 1, .gpu_flops = 312e12,
    .efficiency = 0.5, .bytes_per_param = 2,
};

static void test_generated_gpt13b(void **state)
{
    (void)state;
    err e = {0};
    assert_int_equal(trn_model_check(&gpt13b, &e), 0);
    /* 40 x (4 h^2 + 2 h f) + 2 h V = 40 x 314.6M + 515M = 13.1e9 */
    double P = trn_model_params(&gpt13b);
    assert_true(P > 13.0e9 && P < 13.2e9);
    /* per layer fwd: (24 b s h^2 + 4 b s^2 h) / 8 */
    double h = 5120, s = 2048;
    assert_float_equal(trn_layer_fwd_flops(&gpt13b), (24 * s * h * h + 4 * s * s * h) / 8, 1);
    trn_wl w;
    trn_generate(&w, &gpt13b);
    assert_int_equal(w.n, 2 + 2 * 40);
    const trn_layer *a = &w.layers[1];
    /* the TP all-reduce of AICB's file: b s h x 2 = 20971520 bytes */
    assert_int_equal(a->fwd.coll, TRN_C_ALLREDUCE);
    assert_int_equal(a->fwd.bytes, 20971520);
    /* attention fwd: (8 s h^2 + 4 s^2 h)/8 FLOPs at 156 TFLOP/s = 0.626 ms */
    double want = (8 * s * h * h + 4 * s * s * h) / 8 / (312e12 * 0.5) * 1e12;
    assert_true(llabs(a->fwd_ps - (int64_t)want) <= 1);
    assert_int_equal(a->wg.coll, TRN_C_ALLREDUCE);
    assert_int_equal(a->wg.bytes, (uint64_t)(4 * h * h / 8 * 2));
    trn_wl_free(&w);
    trn_model z = gpt13b;
    z.zero = 1;
    trn_generate(&w, &z);
    assert_int_equal(w.layers[1].wg.coll, TRN_C_REDUCESCATTER);
    trn_wl_free(&w);
    trn_model bad = gpt13b;
    bad.heads = 12;
    assert_int_equal(trn_model_check(&bad, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "multiple of heads"));
}

/* DP buckets: launched asynchronously in the last micro-batch's backward,
 * their time hidden behind it when it is short enough; ZeRO-1 reduce-
 * scatters and gathers the parameters after the step. */
static void test_dp_buckets_overlap_backward(void **state)
{
    (void)state;
    trn_model m = gpt13b;
    m.layers = 8;
    trn_wl w;
    trn_generate(&w, &m);
    trn_build_cfg c = {.pp = 1, .vpp = 1, .micro_batches = 4, .bucket_bytes = 25 << 20};
    trn_prog p;
    err e = {0};
    assert_int_equal(trn_build(&p, &w, &c, &e), 0);
    size_t async = 0, first_async = 0, bwd_compute_after = 0;
    uint64_t bytes = 0, want = 0;
    for (size_t i = 0; i < w.n; i++)
        want += w.layers[i].wg.bytes;
    for (size_t i = 0; i < p.n; i++) {
        const trn_op *op = &p.ops[i];
        if (op->kind == TRN_OP_COLL && op->async) {
            if (!async++)
                first_async = i;
            bytes += op->comm.bytes;
            assert_int_equal(op->comm.coll, TRN_C_ALLREDUCE);
            assert_int_equal(op->comm.group, TRN_G_DP);
            assert_int_equal(op->mb, 3);
        }
    }
    for (size_t i = first_async; i < p.n; i++)
        bwd_compute_after += p.ops[i].kind == TRN_OP_COMPUTE && p.ops[i].bwd;
    assert_int_equal(bytes, want);
    assert_true(async >= 2);
    assert_true(bwd_compute_after > 0);     /* buckets overlap what follows */
    /* slow DP: exposed communication; fast DP: hidden (a few % exposed) */
    trn_cost cost = {.bw_Bps = {[TRN_G_TP] = 200e9, [TRN_G_DP] = 1e9},
                     .size = {[TRN_G_TP] = 8, [TRN_G_DP] = 16}};
    trn_stage_stats st;
    int64_t Tslow = trn_eval(&p, 1, &cost, &st, &e);
    int64_t exp_slow = st.exposed_ps;
    cost.bw_Bps[TRN_G_DP] = 1000e9;
    int64_t Tfast = trn_eval(&p, 1, &cost, &st, &e);
    assert_true(Tslow > Tfast);
    assert_true(exp_slow > st.exposed_ps);
    assert_true(st.comm_ps > st.exposed_ps);  /* some overlap */
    trn_prog_free(&p);
    trn_wl_free(&w);
    /* ZeRO-1: reduce-scatter buckets, and as many bytes all-gathered */
    m.zero = c.zero = 1;
    trn_generate(&w, &m);
    assert_int_equal(trn_build(&p, &w, &c, &e), 0);
    uint64_t rs = 0, ag = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.ops[i].kind == TRN_OP_COLL && p.ops[i].comm.group == TRN_G_DP) {
            if (p.ops[i].comm.coll == TRN_C_REDUCESCATTER)
                rs += p.ops[i].comm.bytes;
            if (p.ops[i].comm.coll == TRN_C_ALLGATHER)
                ag += p.ops[i].comm.bytes;
        }
    assert_int_equal(rs, want);
    assert_int_equal(ag, want);
    trn_prog_free(&p);
    trn_wl_free(&w);
}

/* A mixture of experts: an all-to-all on the EP group before and after
 * every MLP, in the forward and the input-gradient pass of each
 * micro-batch; ZeRO-3 all-gathers each layer's parameters before its
 * forward and its backward. */
static void test_moe_alltoall_and_zero3(void **state)
{
    (void)state;
    trn_model m = gpt13b;
    m.layers = 4;
    m.experts = 8;
    m.topk = 2;
    m.ep = 4;
    m.dp = 8;
    err e = {0};
    assert_int_equal(trn_model_check(&m, &e), 0);
    trn_wl w;
    trn_generate(&w, &m);
    trn_build_cfg c = {.pp = 1, .vpp = 1, .micro_batches = 3};
    trn_prog p;
    assert_int_equal(trn_build(&p, &w, &c, &e), 0);
    size_t a2a = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.ops[i].kind == TRN_OP_COLL && p.ops[i].comm.coll == TRN_C_ALLTOALL) {
            assert_int_equal(p.ops[i].comm.group, TRN_G_EP);
            assert_int_equal(p.ops[i].comm.bytes, 2048 * 5120 * 2 * 2);
            a2a++;
        }
    assert_int_equal(a2a, 4 * 2 * 2 * 3);      /* layers x 2 x (fwd, ig) x mbs */
    trn_prog_free(&p);
    trn_wl_free(&w);
    m.experts = 0;
    m.ep = 1;
    m.zero = c.zero = 3;
    trn_generate(&w, &m);
    assert_int_equal(trn_build(&p, &w, &c, &e), 0);
    size_t ag = 0;
    for (size_t i = 0; i < p.n; i++)
        ag += p.ops[i].kind == TRN_OP_COLL && !p.ops[i].async &&
              p.ops[i].comm.coll == TRN_C_ALLGATHER && p.ops[i].comm.group == TRN_G_DP;
    /* every layer with weights (embedding, 2 per transformer layer, head),
     * before its forward and its backward, per micro-batch */
    assert_int_equal(ag, (2 + 2 * 4) * 2 * 3);
    trn_prog_free(&p);
    trn_wl_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_simai_file_loads),
        cmocka_unit_test(test_every_aicb_log_loads),
        cmocka_unit_test(test_malformed_lines_name_file_and_line),
        cmocka_unit_test(test_1f1b_bubble_fraction),
        cmocka_unit_test(test_generated_gpt13b),
        cmocka_unit_test(test_dp_buckets_overlap_backward),
        cmocka_unit_test(test_moe_alltoall_and_zero3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
