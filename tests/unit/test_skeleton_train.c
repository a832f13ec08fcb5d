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
 * the pipeline's ends, 5 inside), the stage order a chain: the gradient
 * all-reduce of the last stage comes first in 1F1B, so the order read
 * from the burst phases runs backwards (a chain's direction does not
 * change the skeleton). */
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
    skel_clusters c = skel_infer(x, N, len, v, skel_train_period(&t, &p, G), 64, 32, &off, &idx,
                                 stage);
    assert_true(c.ok);
    assert_int_equal(c.dp, 4);
    assert_int_equal(c.k, 4);
    assert_int_equal(N / c.dp, 32);
    skel_true_skeleton(&p, G, &toff, &tidx);
    for (int l = 0; l < N; l++) {
        int pos = (l / G) % 4;
        assert_int_equal(stage[l], 3 - pos);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt_iteration),
        cmocka_unit_test(test_gpt_skeleton),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
