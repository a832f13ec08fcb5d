/*
 * test_stellar_mp_net.c - Stellar's multi-path core on the packet plane,
 * through `stellar_dgram` (acknowledged datagrams, NOT RDMA) and the
 * example stellar/mp-permutation (16 NICs of 2 x 200 Gbps on a dual-plane
 * fabric, 16 equal-cost paths between segments, 16 MB each):
 *
 *  - OBS over 128 paths: every flow at >= 75 % of the NIC's 400 Gbps
 *    (FCT p99 <= 16 MB / 300 Gbps), the ToR uplinks within 20 % of their
 *    mean load (max - min), the largest uplink queue < 150 KB, no drop, no
 *    retransmission although packets arrive out of order;
 *  - one path per connection (ECMP on its hash) on the same seed: FCT p99
 *    at least 2x OBS's, uplinks unused and doubly used ((max - min) > 1.5
 *    mean), the largest uplink queue > 3x OBS's;
 *  - OBS over 4 paths: uplink imbalance above 128 paths' by > 5x (Fig. 12's
 *    direction);
 *  - a ToR uplink dropping 3 % of its packets (endless flows, 3 ms):
 *    OBS-128's goodput within 5 % of the loss-free run's (> 80 % of the
 *    NICs' there), 100 to 1,000 PSNs resent (selective, not windows),
 *    none without loss; conservation holds;
 *  - stellar/mp-paths (Fig. 12, small: two NICs, 16 connections, hashed
 *    entropy): the sender ToRs' uplink imbalance (max - min) / 200 Gbps
 *    at 4 paths > 2.5x that at 128, 16 paths above 128, 128 below 0.08;
 *    goodput > 85 % of the NIC;
 *  - determinism: flows.csv and links.csv byte-identical on a rerun.
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

#include "testutil.h"

#define EX "stellar/mp-permutation"

static double jnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The ToR -> aggregation ports of links.csv in run `sub`: bytes sent
 * (min, max, mean) and the largest queue. */
typedef struct uplinks { double min, max, mean, maxq; int n; } uplinks;

static uplinks read_uplinks_of(const char *sub, const char *tor)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/links.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    uplinks u = {.min = INFINITY};
    double sum = 0;
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        char port[128];
        double rate, tx, util, drops, marks, maxq;
        if (sscanf(line, "%127[^,],%lf,%lf,%lf,%lf,%lf,%lf", port, &rate, &tx, &util, &drops,
                   &marks, &maxq) != 7 || !strstr(port, tor) || !strstr(port, "->p"))
            continue;
        if (!strstr(strstr(port, "->"), "agg"))
            continue;
        u.n++;
        sum += tx;
        u.min = tx < u.min ? tx : u.min;
        u.max = tx > u.max ? tx : u.max;
        u.maxq = maxq > u.maxq ? maxq : u.maxq;
    }
    free(b);
    u.mean = sum / u.n;
    return u;
}

static uplinks read_uplinks(const char *sub) { return read_uplinks_of(sub, "tor"); }

static json_t *results(json_t *sum) { return json_object_get(sum, "results"); }

static void test_obs_against_single(void **state)
{
    (void)state;
    const char *single[] = {"net.transport.algo=single"};
    const char *four[] = {"net.transport.paths=4"};
    json_t *o = tu_run(EX, "obs", NULL, 0);
    json_t *s = tu_run(EX, "single", single, 1);
    json_t *f = tu_run(EX, "obs4", four, 1);
    json_t *ro = results(o), *rs = results(s);
    uplinks uo = read_uplinks("obs"), us = read_uplinks("single"), uf = read_uplinks("obs4");
    assert_int_equal(uo.n, 32);

    double line_time = 16e6 * 8 / 300e9;            /* 75 % of 400 Gbps */
    assert_int_equal(jnum(ro, "flows_completed"), 16);
    assert_true(jnum(ro, "fct_p99_s") <= line_time);
    assert_int_equal(jnum(ro, "drops"), 0);
    assert_int_equal(jnum(ro, "retransmits"), 0);   /* reordering alone */
    assert_true((uo.max - uo.min) < 0.2 * uo.mean);
    assert_true(uo.maxq < 150e3);

    assert_int_equal(jnum(rs, "flows_completed"), 16);
    assert_true(jnum(rs, "fct_p99_s") > 2 * jnum(ro, "fct_p99_s"));
    assert_true(us.min == 0);                       /* an uplink no flow hashed to */
    assert_true((us.max - us.min) > 1.5 * us.mean);
    assert_true(us.maxq > 3 * uo.maxq);

    assert_true((uf.max - uf.min) > 5 * (uo.max - uo.min));
    print_message("OBS-128 p99 %.1f us, single %.1f us; (max-min)/mean uplink: OBS-128 %.3f, "
                  "OBS-4 %.3f, single %.3f; max uplink queue OBS-128 %.0f B, single %.0f B\n",
                  jnum(ro, "fct_p99_s") * 1e6, jnum(rs, "fct_p99_s") * 1e6,
                  (uo.max - uo.min) / uo.mean, (uf.max - uf.min) / uf.mean,
                  (us.max - us.min) / us.mean, uo.maxq, us.maxq);
    json_decref(o);
    json_decref(s);
    json_decref(f);
}

/* Endless flows for 3 ms: the throughput of the QPs, clean and with one
 * ToR uplink dropping 3 % of its packets (Fig. 11's experiment, small). */
static void test_lossy_link(void **state)
{
    (void)state;
    static char endless[16][40];
    const char *sets[18];
    for (int i = 0; i < 16; i++) {
        snprintf(endless[i], sizeof endless[i], "net.flows[%d].size=null", i);
        sets[i] = endless[i];
    }
    sets[16] = "stop=3ms";
    sets[17] = "net.faults=[{kind: loss, port: p0.tor0.r0->p0.agg0, rate: 0.03}]";
    json_t *c = tu_run(EX, "clean", sets, 17);
    json_t *l = tu_run(EX, "lossy", sets, 18);
    json_t *rc = results(c), *rl = results(l);
    double gc = jnum(rc, "goodput_bps"), gl = jnum(rl, "goodput_bps");
    assert_true(gc > 0.8 * 16 * 400e9);             /* 80 % of the NICs */
    assert_true(gl > 0.95 * gc);                    /* the loss costs < 5 % */
    assert_true(gl < gc);
    /* every loss recovered by selective resends: a few hundred PSNs, not
     * windows of thousands */
    assert_true(jnum(rl, "retransmits") > 100 && jnum(rl, "retransmits") < 1000);
    assert_int_equal(jnum(rc, "retransmits"), 0);
    assert_int_equal(jnum(rl, "bytes_injected"), jnum(rl, "bytes_delivered") +
                                                     jnum(rl, "bytes_dropped") +
                                                     jnum(rl, "bytes_in_network_at_end"));
    print_message("one uplink dropping 3 %%: goodput %.3f Tbps against %.3f (-%.1f %%), "
                  "%.0f PSNs resent\n", gl / 1e12, gc / 1e12, (1 - gl / gc) * 100,
                  jnum(rl, "retransmits"));
    json_decref(c);
    json_decref(l);
}

/* Fig. 12, small: two NICs, 16 connections of hashed entropy values; the
 * sender ToRs' 16 uplinks over 1 ms: (max - min) / 200 Gbps. */
static void test_path_count(void **state)
{
    (void)state;
    static const int paths[] = {4, 16, 128};
    double imb[3];
    for (int i = 0; i < 3; i++) {
        char set[64], sub[32];
        snprintf(set, sizeof set, "net.transport.paths=%d", paths[i]);
        snprintf(sub, sizeof sub, "paths%d", paths[i]);
        const char *sets[] = {set};
        json_t *r = tu_run("stellar/mp-paths", sub, sets, 1);
        uplinks u = read_uplinks_of(sub, "tor0.r0");
        assert_int_equal(u.n, 16);
        double T = jnum(r, "sim_time_s");
        imb[i] = (u.max - u.min) * 8 / T / 200e9;
        assert_true(jnum(results(r), "goodput_bps") > 0.85 * 400e9);
        json_decref(r);
    }
    print_message("uplink imbalance (max - min) / 200 Gbps: 4 paths %.3f, 16 %.3f, 128 %.3f\n",
                  imb[0], imb[1], imb[2]);
    assert_true(imb[0] > 2.5 * imb[2]);
    assert_true(imb[1] > imb[2]);
    assert_true(imb[2] < 0.08);
}

static void test_deterministic(void **state)
{
    (void)state;
    json_t *a = tu_run(EX, "det-a", NULL, 0);
    json_t *b = tu_run(EX, "det-b", NULL, 0);
    tu_assert_same_file("det-a", "det-b", "flows.csv");
    tu_assert_same_file("det-a", "det-b", "links.csv");
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_obs_against_single),
        cmocka_unit_test(test_lossy_link),
        cmocka_unit_test(test_path_count),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
