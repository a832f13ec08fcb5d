/*
 * test_skeleton_train.c - SkeletonHunter's skeleton inference fed by a
 * training job's traffic (skel_train.c): a GPT-like TP8 PP4 DP4 job on
 * 16 hosts of 8 GPUs, its per-RNIC 1-s series from the 1F1B iteration
 * timeline, inferred groups, stage order and targets against the job's
 * true skeleton.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/skeleton.h"
#include "systems/skeleton/skel_model.h"
#include "systems/skeleton/skel_order.h"

enum { G = 8 };

/* GPT-like, 24 layers of h 6144 (about 11 B parameters), sequences of
 * 2048, micro-batches of 4, 16 per iteration and replica. */
static skel_train gpt(void)
{
    return (skel_train){
        .model = {.layers = 48, .hidden = 12288, .heads = 96, .ffn = 4 * 12288, .vocab = 51200,
                  .seq = 2048, .micro_batch = 4, .gpu_flops = 312e12, .efficiency = 0.5,
                  .bytes_per_param = 2},
        .micro_batches = 16, .rnic_bps = 200e9, .nvlink_bps = 2400e9, .gap_s = 2,
        .jitter_s = 0.3};
}

static void layout(skel_ep *v, int hosts)
{
    for (int l = 0; l < hosts * G; l++)
        v[l] = (skel_ep){.host = l / G, .rail = l % G, .tor = l % G};
}

/* The iteration's traffic on the RNICs: the 1F1B timeline of the job as
 * the evaluator times it, per GPU of a replica. */
static void test_gpt_iteration(void **state)
{
    (void)state;
    skel_train t = gpt();
    skel_par p = {.tp = 8, .pp = 4, .dp = 4, .ep = 1};
    err e = {0};
    assert_int_equal(skel_train_prepare(&t, &p, G, &e), 0);
    assert_float_equal(t.iter_s, 18.29, 0.01);
    assert_float_equal(t.period_s, t.iter_s + 2, 1e-9);
    /* a middle stage's RNIC (stage 1, TP rank 3): per micro-batch it
     * receives and sends activations forward and gradients back (4 x 16
     * transfers of b s h x 2 bytes), and all-reduces its gradients over 4
     * replicas: 2 x 2(n-1)/n x bytes through the RNIC.  The 98 layers
     * (embedding, 48 x (attention 4h^2, MLP 8h^2), head) split 25 25 24
     * 24: stage 1 holds 13 attention and 12 MLP layers, stage 0 the
     * embedding and 12 of each; the first stage has half the PP part */
    double act = 4.0 * 2048 * 12288 * 2, hh = 12288.0 * 12288 / 8 * 2;
    double grad = (13 * 4 + 12 * 8) * hh, grad0 = 12 * 12 * hh + 51200.0 * 12288 / 8 * 2;
    double pp_b[2] = {0, 0}, dp_b[2] = {0, 0};
    for (size_t i = 0; i < t.nev; i++) {
        int which = t.ev[i].gi == 8 + 3 ? 1 : t.ev[i].gi == 3 ? 0 : -1;
        if (which < 0)
            continue;
        assert_true(t.ev[i].a >= 0 && t.ev[i].b <= t.iter_s + 1e-9);
        if (t.ev[i].sync)
            dp_b[which] += t.ev[i].bytes;
        else
            pp_b[which] += t.ev[i].bytes;
    }
    assert_float_equal(pp_b[1], 4 * 16 * act, 1);
    assert_float_equal(pp_b[0], 2 * 16 * act, 1);
    assert_float_equal(dp_b[1], 3 * grad, 1);
    assert_float_equal(dp_b[0], 3 * grad0, 1);
    /* a second call with the same parallelism keeps the timeline */
    skel_tev *ev = t.ev;
    assert_int_equal(skel_train_prepare(&t, &p, G, &e), 0);
    assert_ptr_equal(t.ev, ev);
    /* a parallelism the model does not divide is refused */
    skel_par bad = {.tp = 8, .pp = 5, .dp = 4, .ep = 1};
    assert_int_not_equal(skel_train_prepare(&t, &bad, G, &e), 0);
    skel_train_fini(&t);
}

/* The skeleton inferred from 600 s of the job's series equals its true
 * one: 4 groups of 4 per rail (DP = 4, TP x PP = 32), every endpoint's
 * targets exactly its DP peers and same-rail pipeline neighbours (4 at
 * the pipeline's ends, 5 inside), and the stage order the job's own:
 * stage 0 is the end whose traffic starts first in the iteration. */
static void test_gpt_skeleton(void **state)
{
    (void)state;
    enum { N = 128 };
    const size_t len = 600;
    skel_train t = gpt();
    skel_par p = {.tp = 8, .pp = 4, .dp = 4, .ep = 1};
    double *x = malloc(N * len * sizeof *x), *y = malloc(N * len * sizeof *y);
    skel_traffic_train(&t, &p, G, 7, 0, len, x);
    skel_traffic_train(&t, &p, G, 7, 0, len, y);
    assert_memory_equal(x, y, N * len * sizeof *x);     /* deterministic */
    skel_traffic_train(&t, &p, G, 8, 0, len, y);
    assert_memory_not_equal(x, y, N * len * sizeof *x);
    skel_ep v[N];
    layout(v, N / G);
    uint32_t *off, *idx, *toff, *tidx;
    int stage[N];
    skel_clusters c = skel_infer(x, N, len, v, skel_train_period(&t, &p, G), 64, 32, 0.125, &off,
                                 &idx, stage);
    assert_true(c.ok);
    assert_int_equal(c.dp, 4);
    assert_int_equal(c.k, 4);
    assert_int_equal(N / c.dp, 32);
    skel_true_skeleton(&p, G, &toff, &tidx);
    for (int l = 0; l < N; l++) {
        int pos = (l / G) % 4;
        assert_int_equal(stage[l], pos);
        assert_int_equal(off[l + 1] - off[l], pos == 0 || pos == 3 ? 4 : 5);
    }
    assert_true(skel_same_skeleton(N, off, idx, toff, tidx));
    free(off);
    free(idx);
    free(toff);
    free(tidx);
    free(x);
    free(y);
    skel_train_fini(&t);
}

/* Rail 0's group means by true stage (k x len) of a job's series x. */
static double *stage_means(const double *x, const skel_par *p, size_t len)
{
    int H = p->pp, R = p->dp;
    double *gm = calloc((size_t)H * len, sizeof *gm);
    for (int r = 0; r < R; r++)
        for (int h = 0; h < H; h++)
            for (size_t t = 0; t < len; t++)
                gm[(size_t)h * len + t] += x[(size_t)((r * H + h) * G) * len + t] / R;
    return gm;
}

/* 1F1B at PP 8 (TP8 PP8 DP2, 128 RNICs, 11.27-s iterations: stages 0.16 s
 * apart in the forward pass, under the 1-s sampling): the exact skeleton,
 * 8 groups of 2 per rail in the job's stage order, each endpoint's
 * targets its DP peer and its replica's pipeline neighbours (2 at the
 * ends, 3 inside).  Under it, the two steps: the neighbours' similarity
 * is the largest of each group's (the chain through it is the pipeline),
 * and the onsets vote for stage 0 first, whichever way the chain is read;
 * at PP 2 the onsets tie (both stages carry the first transfer) and the
 * later all-reduce names stage 0. */
static void test_gpt_skeleton_pp8(void **state)
{
    (void)state;
    enum { N = 128, H = 8 };
    const size_t len = 600;
    skel_train t = gpt();
    skel_par p = {.tp = 8, .pp = H, .dp = 2, .ep = 1};
    double *x = malloc(N * len * sizeof *x);
    skel_traffic_train(&t, &p, G, 7, 0, len, x);
    double per = skel_train_period(&t, &p, G);
    assert_float_equal(per, 11.27 + 2, 0.01);
    skel_ep v[N];
    layout(v, N / G);
    uint32_t *off, *idx, *toff, *tidx;
    int stage[N];
    skel_clusters c = skel_infer(x, N, len, v, per, 64, 32, 0.125, &off, &idx, stage);
    assert_true(c.ok);
    assert_int_equal(c.dp, 2);
    assert_int_equal(c.k, H);
    skel_true_skeleton(&p, G, &toff, &tidx);
    for (int l = 0; l < N; l++) {
        int pos = (l / G) % H;
        assert_int_equal(stage[l], pos);
        assert_int_equal(off[l + 1] - off[l], pos == 0 || pos == H - 1 ? 2 : 3);
    }
    assert_true(skel_same_skeleton(N, off, idx, toff, tidx));
    /* rail 0's similarity, groups labelled in a shuffled order: each
     * stage's best match is a neighbour, the chain is the pipeline */
    static const int perm[H] = {5, 2, 7, 0, 3, 6, 1, 4};
    size_t mem[N / G];
    int32_t host[N / G];
    int label[N / G];
    for (int i = 0; i < N / G; i++) {
        mem[i] = (size_t)i * G;
        host[i] = i;
        label[i] = perm[i % H];
    }
    double S[H * H];
    skel_group_similarity(x, len, mem, N / G, host, label, H, S);
    for (int a = 0; a < H; a++) {
        int best = -1;
        for (int b = 0; b < H; b++)
            if (b != perm[a] && (best < 0 || S[perm[a] * H + b] > S[perm[a] * H + best]))
                best = b;
        assert_true((a > 0 && best == perm[a - 1]) || (a + 1 < H && best == perm[a + 1]));
        for (int b = 0; b < H; b++)
            assert_float_equal(S[a * H + b], S[b * H + a], 1e-12);
    }
    int chain[H], fwd[H], rev[H], votes;
    skel_chain(S, H, chain);
    bool ahead = chain[0] == perm[0];
    for (int i = 0; i < H; i++) {
        assert_int_equal(chain[i], perm[ahead ? i : H - 1 - i]);
        fwd[i] = perm[i];
        rev[i] = perm[H - 1 - i];
    }
    double *gs = stage_means(x, &p, len), *gm = malloc(H * len * sizeof *gm);
    for (int h = 0; h < H; h++)
        memcpy(gm + (size_t)perm[h] * len, gs + (size_t)h * len, len * sizeof *gm);
    free(gs);
    assert_int_equal(skel_chain_direction(gm, H, len, per, fwd, &votes), 1);
    assert_true(votes >= 4);
    assert_int_equal(skel_chain_direction(gm, H, len, per, rev, &votes), -1);
    assert_true(votes <= -4);
    free(gm);
    free(off);
    free(idx);
    free(toff);
    free(tidx);
    /* PP 2: no onset vote, the tie-break */
    skel_par p2 = {.tp = 8, .pp = 2, .dp = 2, .ep = 1};
    skel_traffic_train(&t, &p2, G, 7, 0, len, x);
    per = skel_train_period(&t, &p2, G);
    gm = stage_means(x, &p2, len);
    int two[2] = {0, 1}, owt[2] = {1, 0};
    assert_int_equal(skel_chain_direction(gm, 2, len, per, two, &votes), 1);
    assert_int_equal(votes, 0);
    assert_int_equal(skel_chain_direction(gm, 2, len, per, owt, &votes), -1);
    c = skel_infer(x, 32, len, v, per, 64, 32, 0.125, &off, &idx, stage);
    assert_true(c.ok);
    for (int l = 0; l < 32; l++)
        assert_int_equal(stage[l], (l / G) % 2);
    free(gm);
    free(off);
    free(idx);
    free(x);
    skel_train_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt_iteration),
        cmocka_unit_test(test_gpt_skeleton),
        cmocka_unit_test(test_gpt_skeleton_pp8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
