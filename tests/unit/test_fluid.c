/*
 * test_fluid.c - fluid collectives (coll_fluid.c, docs/flow-level.md
 * "Fluid collectives") against the step-by-step run at flow level, the
 * ring formula, the 100 000-GPU example at small size, a training
 * iteration, and the flow solver's batched solves against per-change ones.
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

#include "aisim/rng.h"
#include "net/flow/maxmin.h"
#include "testutil.h"
/* Runs `scenario` with sets and sweep.fluid false, then true; returns the
 * fluid run's summary results' message count in *fluid_flows. */
static void both(const char *scenario, const char *tag, const char **sets, int n,
                 double *step_flows, double *fluid_flows)
{
    const char *s[16];
    char a[64], b[64];
    memcpy(s, sets, (size_t)n * sizeof *s);
    s[n] = "collective.sweep.fluid=false";
    snprintf(a, sizeof a, "%s-step", tag);
    json_t *j = tu_run(scenario, a, s, n + 1);
    *step_flows = tu_num(json_object_get(j, "results"), "flows");
    json_decref(j);
    s[n] = "collective.sweep.fluid=true";
    snprintf(b, sizeof b, "%s-fluid", tag);
    j = tu_run(scenario, b, s, n + 1);
    json_t *r = json_object_get(j, "results");
    *fluid_flows = tu_num(r, "flows");
    assert_true(tu_num(r, "flows_completed") == *fluid_flows);
    json_decref(j);
}

/* |fluid / step - 1| of size `bytes` in the runs of `tag`. */
static double rel(const char *tag, uint64_t bytes)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "%s-step", tag);
    snprintf(b, sizeof b, "%s-fluid", tag);
    return tu_nccl_time_us(b, bytes) / tu_nccl_time_us(a, bytes) - 1;
}

/* Every size lo, lo x factor, ... up to hi of run pair `tag`: fluid within
 * 1 % of the step run. */
static void all_within_1pc(const char *tag, uint64_t lo, uint64_t hi, uint64_t factor)
{
    for (uint64_t s = lo; s <= hi; s *= factor)
        assert_true(fabs(rel(tag, s)) < 0.01);
}

/* 64 GPUs, 8 servers x 8 on the 400 G rail fabric of the 100k example. */
#define NSETS(a) ((int)(sizeof(a) / sizeof *(a)))
#define RAIL64 "collective.topology.servers=8", "collective.topology.servers_per_tor=8"

/* Ring over 64 GPUs (NVLink and NIC hops alike in the ring: its step
 * latency is the sum around the ring, not steps x one hop's): 64 KiB
 * (latency-bound) to 64 MiB within 1 % of the step-by-step run; one
 * message per rank and call instead of 2(n-1) x sub-buffers. */
static void test_fluid_ring_matches_steps(void **state)
{
    (void)state;
    const char *sets[] = {RAIL64, "collective.sweep.algorithm=ring",
                          "collective.sweep.min_bytes=64KiB", "collective.sweep.max_bytes=64MiB",
                          "collective.sweep.step_factor=16"};
    double fs, ff;
    both("ai/allreduce-100k-flow", "ring64", sets, NSETS(sets), &fs, &ff);
    all_within_1pc("ring64", 64u << 10, 64u << 20, 16);
    assert_true(ff == 64 * 3);                  /* 3 sizes x 64 ranks */
    assert_true(fs > 100 * ff);
}

/* Hierarchical over 64 GPUs with NCCL's protocol model (its step
 * latencies and LL / LL128 / Simple by size): within 1 % at every size
 * from 64 KiB to 64 MiB (measured: 0.00 % to -0.21 %).  A fluid flow's
 * message counts as arrived its own hop's step latency late, as a step's
 * does: without that the fluid run is one NVLink step (1 us with LL)
 * early, 1.3 % at 64 KiB. */
static void test_fluid_hierarchical_matches_steps(void **state)
{
    (void)state;
    const char *sets[] = {RAIL64, "collective.sweep.min_bytes=64KiB",
                          "collective.sweep.max_bytes=64MiB", "collective.sweep.step_factor=4"};
    double fs, ff;
    both("ai/allreduce-100k-flow", "hier64", sets, NSETS(sets), &fs, &ff);
    all_within_1pc("hier64", 64u << 10, 64u << 20, 4);
    assert_true(ff == 64 * 3 * 6);              /* 3 phases x 64 ranks x 6 sizes */
}

/* Halving-doubling on a 16-host star: its 2 log2 16 steps as phases of
 * one flow per rank, overlapped as the step run's sub-buffers overlap
 * them: within 1 % at every size from 64 KiB (latency-bound) to 64 MiB
 * (measured: equal to the nanosecond), 8 messages per rank and call.
 * On 12 hosts (4 fold in and out) the fluid run is faster, within 12 %
 * (docs/flow-level.md). */
static void test_fluid_halving_doubling_matches_steps(void **state)
{
    (void)state;
    const char *sets[] = {"collective.topology.hosts=16",
                          "collective.sweep.algorithm=halving_doubling",
                          "collective.sweep.min_bytes=64KiB", "collective.sweep.max_bytes=64MiB",
                          "collective.sweep.step_factor=16"};
    double fs, ff;
    both("ai/allreduce-flow", "hd16", sets, NSETS(sets), &fs, &ff);
    all_within_1pc("hd16", 64u << 10, 64u << 20, 16);
    assert_true(ff == 16 * 8 * 3);              /* 8 steps x 16 ranks x 3 sizes */
    const char *odd[] = {"collective.topology.hosts=12",
                         "collective.sweep.algorithm=halving_doubling",
                         "collective.sweep.min_bytes=16MiB", "collective.sweep.max_bytes=16MiB"};
    both("ai/allreduce-flow", "hd12", odd, NSETS(odd), &fs, &ff);
    double r = rel("hd12", 16u << 20);
    assert_true(r < 0 && r > -0.12);
}

/* Four channels on 32 GPUs: rail-aligned rings leave a GPU by its NIC in
 * one channel and by NVLink in the others, so a hop's link is shared by
 * the channels whose hop from that rank is of its kind (ring_shares):
 * ring within 1 % from 4 MiB (+2.5 % at 256 KiB), halving-doubling
 * (every channel on the same links) within 1 % at all three sizes; both
 * without the protocol model.  With it the rail-aligned ring is up to
 * 11 % slow fluid (docs/workloads.md: the fluid chain assumes the
 * channels sharing a link send at once; with the step latencies they
 * drift apart and seldom do). */
static void test_fluid_channels(void **state)
{
    (void)state;
    const char *ring[] = {"collective.topology.servers=4", "collective.sweep.channels=4",
                          "collective.sweep.algorithm=ring", "collective.sweep.min_bytes=256KiB",
                          "collective.sweep.max_bytes=64MiB", "collective.sweep.step_factor=16",
                          "collective.sweep.protocol=none"};
    double fs, ff;
    both("ai/allreduce-100k-flow", "ch4r", ring, NSETS(ring), &fs, &ff);
    assert_true(fabs(rel("ch4r", 4u << 20)) < 0.01);
    assert_true(fabs(rel("ch4r", 64u << 20)) < 0.01);
    assert_true(fabs(rel("ch4r", 256u << 10)) < 0.03);
    const char *hd[] = {"collective.topology.servers=4", "collective.sweep.channels=4",
                        "collective.sweep.algorithm=halving_doubling",
                        "collective.sweep.min_bytes=256KiB", "collective.sweep.max_bytes=64MiB",
                        "collective.sweep.step_factor=16"};
    both("ai/allreduce-100k-flow", "ch4h", hd, NSETS(hd), &fs, &ff);
    all_within_1pc("ch4h", 256u << 10, 64u << 20, 16);
    /* rings in rank order, with the protocol model: every channel on the
     * same ring, so they share every link (the fluid rings followed the
     * topology's order whatever ring_order said: -66 % at 16 MiB);
     * measured within 1.4 % */
    const char *rk[] = {"collective.topology.servers=4", "collective.sweep.channels=4",
                        "collective.sweep.algorithm=ring", "collective.sweep.ring_order=rank",
                        "collective.sweep.min_bytes=1MiB", "collective.sweep.max_bytes=16MiB",
                        "collective.sweep.step_factor=4"};
    both("ai/allreduce-100k-flow", "ch4k", rk, NSETS(rk), &fs, &ff);
    for (uint64_t s = 1u << 20; s <= 16u << 20; s *= 4)
        assert_true(fabs(rel("ch4k", s)) < 0.015);
}

/* The fluid ring against the formula 2(N-1)/N S/B (8 hosts, 100 G star,
 * B TCP's payload rate): within 1 % at 16 and 64 MiB. */
static void test_fluid_ring_formula(void **state)
{
    (void)state;
    const char *sets[] = {"collective.sweep.fluid=true", "collective.sweep.min_bytes=16MiB",
                          "collective.sweep.protocol=none"};   /* the network's part */
    json_decref(tu_run("ai/allreduce-flow", "ringf", sets, 3));
    for (uint64_t s = 16u << 20; s <= 64u << 20; s *= 4) {
        double f = 2.0 * 7 / 8 * (double)s * 8 / (100e9 * 1460 / 1500) * 1e6;
        double t = tu_nccl_time_us("ringf", s);
        assert_true(t >= f && t <= f * 1.01);
    }
}

/* The 100 000-GPU example at 2 000 GPUs (250 servers, 2 segments): 3
 * flows per GPU; the rail ring of 250 servers is latency-bound (its 498
 * steps' chain of hops), so the time lies between that chain and the
 * chain plus the bandwidth terms of the three phases. */
static void test_fluid_100k_example_small(void **state)
{
    (void)state;
    const char *sets[] = {"collective.topology.servers=250"};
    json_t *j = tu_run("ai/allreduce-100k-flow", "a2k", sets, 1);
    json_t *r = json_object_get(j, "results");
    assert_true(tu_num(r, "flows") == 6000);
    assert_true(tu_num(r, "flows_completed") == 6000);
    json_decref(j);
    double t = tu_nccl_time_us("a2k", 1u << 30) * 1e-6;
    double B = 400e9 / 8 * 4096 / (4096 + 40 + 14 + 20 + 4), S = 1 << 30;
    /* rail hop: NIC + ToR ports, 2 x 500 ns wire; a ring step's chain */
    double hop = 1e-6 + (4096 + 78) * 8 / 400e9, rail_bw = 2.0 * 249 / 250 * S / 8 / B;
    double chain = 2 * 249 * hop;
    assert_true(t > chain && t > rail_bw);
    assert_true(t < chain + rail_bw + 2 * (7.0 / 8 * S / (3600e9 / 8)) * 1.1);
}

/* GPT-175B TP8 PP8 DP2 at flow level, collectives fluid or step by step:
 * the same iteration within 0.1 %, with fewer messages. */
static void test_fluid_training(void **state)
{
    (void)state;
    const char *s0[] = {"training.topology.servers=16", "training.jobs[0].gpus=128"};
    const char *s1[] = {"training.topology.servers=16", "training.jobs[0].gpus=128",
                        "training.fluid=true"};
    json_t *a = tu_run("ai/gpt175b-flow", "t0", s0, 2), *b = tu_run("ai/gpt175b-flow", "t1",
                                                                      s1, 3);
    json_t *ja = json_array_get(json_object_get(json_object_get(a, "results"), "jobs"), 0);
    json_t *jb = json_array_get(json_object_get(json_object_get(b, "results"), "jobs"), 0);
    assert_true(fabs(tu_num(jb, "iteration_s") / tu_num(ja, "iteration_s") - 1) < 0.001);
    assert_true(tu_num(json_object_get(b, "results"), "flows") <
                tu_num(json_object_get(a, "results"), "flows") / 4);
    json_decref(a);
    json_decref(b);
}

/* Batched solving: the same random starts and stops solved once per batch
 * (one solve per instant, as the plane does) and once per change give the
 * same rates after every batch, to 1e-9. */
static void test_batched_solve_equals_per_change(void **state)
{
    (void)state;
    enum { L = 16, F = 400 };
    mmf *one = mmf_create(L), *bat = mmf_create(L);
    for (uint32_t l = 0; l < L; l++) {
        double c = 1e9 * (1 + l % 4);
        mmf_set_capacity(one, l, c);
        mmf_set_capacity(bat, l, c);
    }
    rng g;
    rng_init(&g, 7, "batch", 0);
    uint32_t id1[F], id2[F];
    bool on[F] = {0};
    for (int batch = 0; batch < 200; batch++) {
        int changes = 1 + (int)(rng_next(&g) % 8);
        for (int c = 0; c < changes; c++) {
            int f = (int)(rng_next(&g) % F);
            if (on[f]) {
                mmf_remove(one, id1[f]);
                mmf_remove(bat, id2[f]);
                on[f] = false;
            } else {
                uint32_t ls[3];
                size_t n = 1 + rng_next(&g) % 3;
                for (size_t k = 0; k < n; k++)
                    ls[k] = (uint32_t)(rng_next(&g) % L);
                double cap = rng_next(&g) % 4 == 0 ? 3e8 : 0;
                id1[f] = mmf_add(one, ls, NULL, n, cap);
                id2[f] = mmf_add(bat, ls, NULL, n, cap);
                on[f] = true;
            }
            mmf_solve(one, NULL, NULL);
        }
        mmf_solve(bat, NULL, NULL);
        for (int f = 0; f < F; f++)
            if (on[f]) {
                double x = mmf_rate(one, id1[f]), y = mmf_rate(bat, id2[f]);
                assert_true(fabs(x - y) <= 1e-9 * fmax(1, fabs(x)));
            }
    }
    mmf_destroy(one);
    mmf_destroy(bat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fluid_ring_matches_steps),
        cmocka_unit_test(test_fluid_hierarchical_matches_steps),
        cmocka_unit_test(test_fluid_halving_doubling_matches_steps),
        cmocka_unit_test(test_fluid_channels),
        cmocka_unit_test(test_fluid_ring_formula),
        cmocka_unit_test(test_fluid_100k_example_small),
        cmocka_unit_test(test_fluid_training),
        cmocka_unit_test(test_batched_solve_equals_per_change),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
