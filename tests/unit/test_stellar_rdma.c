/*
 * test_stellar_rdma.c - Stellar's multi-path core on RoCEv2 QPs (the
 * `multipath:` section of rocev2, stellar_rdma.c) through the example
 * stellar/rdma-permutation (16 NICs of 2 x 200 Gbps on a dual-plane fabric,
 * 16 equal-cost paths between segments, a 16 MB RDMA WRITE per NIC; a QP
 * leaves by one 200 Gbps port):
 *
 *  - OBS over 128 paths: every QP at >= 90 % of its 200 Gbps port (FCT p99
 *    <= 16 MB / 180 Gbps), no drop, no retransmission although the
 *    receivers NACKed > 1,000 out-of-order arrivals (reordering alone
 *    resends nothing);
 *  - one path per QP (`single`, ECMP on the QP hash) on the same seed: FCT
 *    p99 >= 1.5x OBS-128's; the ToR uplinks' (max - min) load at 4 paths
 *    above 128 paths' by > 3x;
 *  - a ToR uplink dropping 3 % of its packets (endless QPs, 2 ms): OBS-128
 *    keeps > 95 % of the clean run's goodput, with 50 to 1,000 PSNs resent
 *    (each lost PSN alone, not windows) and conservation;
 *  - bad input: multipath on go-back-N, 0 or 257 paths, an unknown
 *    algorithm: exit 2 naming the key;
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

#define EX "stellar/rdma-permutation"

static double jnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *results(json_t *sum) { return json_object_get(sum, "results"); }

/* ToR -> aggregation ports of run `sub`: bytes sent; the largest, over
 * the ToRs, of (max - min) / mean among one ToR's uplinks (a QP leaves by
 * one plane, so the planes carry different loads; within a ToR the paths
 * share it).  *n: uplinks seen. */
static double uplink_spread(const char *sub, int *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/links.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    char tor[8][128] = {{0}};
    double lo[8], hi[8], sum[8];
    int cnt[8] = {0}, ntor = 0;
    *n = 0;
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        char port[128];
        double rate, tx;
        if (sscanf(line, "%127[^,],%lf,%lf", port, &rate, &tx) != 3 || !strstr(port, "tor") ||
            !strstr(port, "->") || !strstr(strstr(port, "->"), "agg"))
            continue;
        *strstr(port, "->") = 0;
        int t = 0;
        while (t < ntor && strcmp(tor[t], port))
            t++;
        if (t == ntor) {
            assert_true(ntor < 8);
            snprintf(tor[ntor++], sizeof tor[0], "%s", port);
            lo[t] = INFINITY;
            hi[t] = sum[t] = 0;
        }
        (*n)++;
        cnt[t]++;
        sum[t] += tx;
        lo[t] = tx < lo[t] ? tx : lo[t];
        hi[t] = tx > hi[t] ? tx : hi[t];
    }
    free(b);
    double worst = 0;
    for (int t = 0; t < ntor; t++)
        if (sum[t] > 0 && (hi[t] - lo[t]) / (sum[t] / cnt[t]) > worst)
            worst = (hi[t] - lo[t]) / (sum[t] / cnt[t]);
    return worst;
}

/* Sum of column `col` (0-based) of rdma_qps.csv in run `sub`. */
static double qp_sum(const char *sub, int col)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/rdma_qps.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    double s = 0;
    char *save = NULL;
    for (char *line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] < '0' || line[0] > '9')
            continue;
        char *f = line;
        for (int i = 0; i < col && f; i++) {
            f = strchr(f, ',');
            f = f ? f + 1 : NULL;
        }
        if (f)
            s += atof(f);
    }
    free(b);
    return s;
}

static void test_obs_against_single(void **state)
{
    (void)state;
    const char *single[] = {"net.transport.multipath.algo=single"};
    const char *four[] = {"net.transport.multipath.paths=4"};
    json_t *o = tu_run(EX, "obs", NULL, 0);
    json_t *s = tu_run(EX, "single", single, 1);
    json_t *f = tu_run(EX, "obs4", four, 1);
    json_t *ro = results(o), *rs = results(s);
    assert_int_equal(jnum(ro, "flows_completed"), 16);
    assert_true(jnum(ro, "fct_p99_s") <= 16e6 * 8 / 180e9);
    assert_int_equal(jnum(ro, "drops"), 0);
    assert_int_equal(jnum(ro, "retransmits"), 0);
    double nacks = qp_sum("obs", 12);
    assert_true(nacks > 1000);              /* out-of-order arrivals, no resend */
    assert_int_equal(jnum(rs, "flows_completed"), 16);
    assert_true(jnum(rs, "fct_p99_s") >= 1.5 * jnum(ro, "fct_p99_s"));
    int n128, n4;
    double sp128 = uplink_spread("obs", &n128), sp4 = uplink_spread("obs4", &n4);
    assert_int_equal(n128, 32);
    assert_true(sp128 < 0.15);
    assert_true(sp4 > 3 * sp128);
    print_message("RDMA OBS-128 p99 %.1f us (%.0f NACKs, 0 resent), single %.1f us; uplink "
                  "(max-min)/mean within a ToR: 128 paths %.3f, 4 paths %.3f\n", jnum(ro, "fct_p99_s") * 1e6,
                  nacks, jnum(rs, "fct_p99_s") * 1e6, sp128, sp4);
    json_decref(o);
    json_decref(s);
    json_decref(f);
}

static void test_lossy_link(void **state)
{
    (void)state;
    static char endless[16][40];
    const char *sets[18];
    for (int i = 0; i < 16; i++) {
        snprintf(endless[i], sizeof endless[i], "net.flows[%d].size=null", i);
        sets[i] = endless[i];
    }
    sets[16] = "stop=2ms";
    sets[17] = "net.faults=[{kind: loss, port: p0.tor0.r0->p0.agg0, rate: 0.03}]";
    json_t *c = tu_run(EX, "clean", sets, 17);
    json_t *l = tu_run(EX, "lossy", sets, 18);
    json_t *rc = results(c), *rl = results(l);
    double gc = jnum(rc, "goodput_bps"), gl = jnum(rl, "goodput_bps");
    assert_true(gc > 0.85 * 16 * 200e9);
    assert_true(gl > 0.95 * gc);
    assert_true(gl < gc);
    assert_true(jnum(rl, "retransmits") >= 50 && jnum(rl, "retransmits") < 1000);
    assert_int_equal(jnum(rc, "retransmits"), 0);
    assert_int_equal(jnum(rl, "bytes_injected"), jnum(rl, "bytes_delivered") +
                                                     jnum(rl, "bytes_dropped") +
                                                     jnum(rl, "bytes_in_network_at_end"));
    print_message("RDMA OBS-128, one uplink dropping 3 %%: goodput %.3f Tbps against %.3f "
                  "(-%.2f %%), %.0f PSNs resent\n", gl / 1e12, gc / 1e12, (1 - gl / gc) * 100,
                  jnum(rl, "retransmits"));
    json_decref(c);
    json_decref(l);
}

static void expect_bad(const char *set, const char *needle)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/bad", tu_tmp);
    const char *sets[] = {set};
    run_opts o = {.scenario = EX, .out_dir = dir, .sets = sets, .nsets = 1};
    err e = {0};
    json_t *sum = NULL;
    int rc = run_scenario(&o, &sum, NULL, &e);
    assert_null(sum);
    assert_int_equal(run_exit_code(rc), EXIT_BAD_INPUT);
    if (!strstr(e.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, needle);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_bad("net.transport.recovery=go_back_n", "net.transport.recovery: expected selective_repeat");
    expect_bad("net.transport.multipath.paths=0", "net.transport.multipath.paths");
    expect_bad("net.transport.multipath.paths=257", "net.transport.multipath.paths");
    expect_bad("net.transport.multipath.algo=zigzag", "net.transport.multipath.algo");
    expect_bad("net.transport.multipath.window=100", "net.transport.multipath.window");
}

static void test_deterministic(void **state)
{
    (void)state;
    json_t *a = tu_run(EX, "det-a", NULL, 0);
    json_t *b = tu_run(EX, "det-b", NULL, 0);
    static const char *const files[] = {"flows.csv", "links.csv"};
    for (int i = 0; i < 2; i++) {
        char pa[512], pb[512];
        snprintf(pa, sizeof pa, "%s/det-a/%s", tu_tmp, files[i]);
        snprintf(pb, sizeof pb, "%s/det-b/%s", tu_tmp, files[i]);
        size_t na, nb;
        char *x = tu_slurp(pa, &na), *y = tu_slurp(pb, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(x, y, na);
        free(x);
        free(y);
    }
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_obs_against_single),
        cmocka_unit_test(test_lossy_link),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
