/*
 * test_fault.c - injected faults: loss within a binomial bound and on its
 * own random stream, black hole exactly over [at, until), flapping with
 * the configured duty, per-class corruption leaving other classes alone,
 * exact added delay, the ground-truth files, and the error messages of bad
 * fault lists.
 *
 * The network is a dumbbell h0, h1 | h2, h3 (10 Gbps, 1 us links): flow 0
 * sends 1000 B packets h0 -> h2 over h0->left, left->right, right->h2, one
 * per microsecond; a packet sent at s reaches left->right at s + 1.8 us,
 * right->h2 at s + 3.6 us and h2 at s + 5.4 us.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/fault.h"
#include "aisim/netreg.h"
#include "aisim/units.h"
#include "catcher.h"
#include "testutil.h"

typedef struct bed {
    sim *s;
    pkt_pool *pool;
    topo *t;
    fault_set *fs;
    catcher rx, tx;
    const route *rt;
    int left;               /* packets still to send */
    int sent;
    int prio_mod;           /* > 0: packet i has priority i % prio_mod */
} bed;

static const char *const topo_yaml =
    "topology:\n"
    "  kind: dumbbell\n"
    "  left: 2\n"
    "  right: 2\n"
    "  link: {rate: 10Gbps, delay: 1us, priorities: 4}\n";

/* Builds the dumbbell and the fault list given as YAML after "faults:".
 * Returns fault_conf's code (the bed is usable only on 0). */
static int bed_init(bed *b, const char *faults, uint64_t seed, err *e)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    b->t = topo_create(b->s, b->pool, 1);
    char yaml[4096];
    snprintf(yaml, sizeof yaml, "%sfaults:%s", topo_yaml, faults);
    cfg_doc *d;
    if (cfg_load_string("f.yaml", yaml, strlen(yaml), &d, e))
        fail_msg("%s", e->msg);
    if (topo_from_cfg(b->t, cfg_get(cfg_root(d), "topology"), "topology", e))
        fail_msg("%s", e->msg);
    int rc = fault_conf(&b->fs, b->t, b->s, net_registry_builtin()->hooks,
                        cfg_get(cfg_root(d), "faults"), "faults", seed, e);
    cfg_free(d);                            /* the set keeps nothing of the tree */
    catcher_init(&b->rx, b->s, b->pool, "rx");
    catcher_init(&b->tx, b->s, b->pool, "tx");
    topo_bind_flow(b->t, 0, 0, &b->tx.base, 2, &b->rx.base);
    b->rt = topo_route_ecmp(b->t, 0, 2, 0);
    return rc;
}

static void bed_fini(bed *b)
{
    fault_destroy(b->fs);
    topo_destroy(b->t);
    pkt_pool_destroy(b->pool);
    sim_destroy(b->s);
}

static void send_next(sim *s, void *obj, uint64_t seq)
{
    bed *b = obj;
    pkt *p = pkt_alloc(b->pool);
    p->size_bytes = 1000;
    p->seq = seq;
    p->prio = b->prio_mod ? (uint8_t)(seq % (uint64_t)b->prio_mod) : 0;
    p->sent_ps = sim_now(s);
    pkt_send(p, b->rt);
    b->sent++;
    if (--b->left > 0)
        sim_schedule(s, sim_now(s) + US(1), send_next, b, seq + 1);
}

/* Starts the faults, sends n packets from time 0 and runs to the end. */
static void run(bed *b, int n)
{
    fault_start(b->fs);
    b->left = n;
    sim_schedule(b->s, 0, send_next, b, 0);
    sim_run(b->s, SIM_TIME_MAX);
    topo_bytes tb;
    topo_byte_counts(b->t, &tb);
    assert_int_equal(tb.injected, (uint64_t)n * 1000);
    assert_int_equal(tb.injected, tb.delivered + tb.dropped + tb.in_network);
    assert_int_equal(tb.in_network, 0);
    assert_int_equal(pkt_pool_live(b->pool), 0);
}

static fault_stats stats(bed *b, size_t i)
{
    fault_stats st;
    fault_stats_of(b->fs, i, &st);
    return st;
}

static port *port_named(bed *b, const char *from, const char *to)
{
    int l = topo_find_link(b->t, topo_find_node(b->t, from), topo_find_node(b->t, to));
    int a, z;
    topo_link_ends(b->t, l, &a, &z);
    return topo_link_port(b->t, l, a == topo_find_node(b->t, from) ? 0 : 1);
}

/* |k - n p| within 4.5 standard deviations of Binomial(n, p). */
static void assert_binomial(uint64_t k, uint64_t n, double p)
{
    double sd = sqrt((double)n * p * (1 - p));
    if (fabs((double)k - (double)n * p) > 4.5 * sd)
        fail_msg("%llu of %llu: expected %.0f +- %.0f", (unsigned long long)k,
                 (unsigned long long)n, (double)n * p, 4.5 * sd);
}

/* ---- kinds ------------------------------------------------------------------ */

/* Loss at rate 0.1 on one port: the drops are a binomial sample, counted
 * by the fault and the port alike; a fault appended to the list does not
 * change this one's draws. */
static void test_fault_loss_rate_within_binomial_bound(void **state)
{
    (void)state;
    enum { N = 20000 };
    err e = {0};
    bed b, b2;
    assert_int_equal(bed_init(&b, "\n  - {kind: loss, port: left->right, rate: 0.1}\n", 7, &e), 0);
    run(&b, N);
    fault_stats st = stats(&b, 0);
    assert_int_equal(st.seen_pkts, N);
    assert_binomial(st.drop_pkts, N, 0.1);
    assert_int_equal(st.drop_bytes, st.drop_pkts * 1000);
    assert_int_equal(b.rx.n, N - (int)st.drop_pkts);
    assert_int_equal(port_named(&b, "left", "right")->stat_hook_drops, st.drop_pkts);

    assert_int_equal(bed_init(&b2, "\n  - {kind: loss, port: left->right, rate: 0.1}\n"
                                   "  - {kind: loss, port: right->h2, rate: 0.3}\n", 7, &e), 0);
    run(&b2, N);
    fault_stats st0 = stats(&b2, 0), st1 = stats(&b2, 1);
    assert_int_equal(st0.drop_pkts, st.drop_pkts);     /* the same draws */
    assert_int_equal(st1.seen_pkts, N - st.drop_pkts);
    assert_binomial(st1.drop_pkts, st1.seen_pkts, 0.3);
    assert_int_equal(b2.rx.n, N - (int)(st0.drop_pkts + st1.drop_pkts));
    bed_fini(&b);
    bed_fini(&b2);
}

/* A black-holed switch drops everything it would forward during
 * [at, until) and nothing outside: packets reach right->h2 at
 * s + 3.6 us, so with at = 100.6 us and until = 200.6 us exactly the
 * packets sent at 97 .. 196 us are lost (97 arrives exactly at `at`,
 * 197 exactly at `until`). */
static void test_fault_blackhole_drops_everything_in_window_only(void **state)
{
    (void)state;
    err e = {0};
    bed b;
    assert_int_equal(bed_init(&b, "\n  - {kind: blackhole, node: right, at: 100.6us, "
                                  "until: 200.6us}\n", 1, &e), 0);
    run(&b, 300);
    fault_stats st = stats(&b, 0);
    assert_int_equal(st.seen_pkts, 100);
    assert_int_equal(st.drop_pkts, 100);
    assert_int_equal(b.rx.n, 200);
    for (int i = 0; i < b.rx.n; i++) {
        uint64_t s = b.rx.seq[i];
        assert_true(s < 97 || s > 196);
        assert_int_equal(b.rx.at[i], (int64_t)s * US(1) + NS(5400));
    }
    assert_int_equal(fault_active(b.fs), 0);
    assert_null(port_named(&b, "right", "h2")->hooks);     /* detached at until */
    bed_fini(&b);
}

typedef struct sampler {
    bed *b;
    int link;
    int down;
} sampler;

static void sample_link(sim *s, void *obj, uint64_t k)
{
    sampler *sm = obj;
    sm->down += !topo_link_is_up(sm->b->t, sm->link);
    if (k + 1 < 1200)
        sim_schedule(s, (int64_t)(k + 1) * US(1) + NS(500), sample_link, obj, k + 1);
}

/* A link flapping with period 100 us and duty 0.3 from 50 us to 1050 us
 * is down over [50 + 100 j, 80 + 100 j) for j = 0..9: 300 of 1200
 * samples at k + 0.5 us, ten down events, 300 us down in all; the
 * packets lost are exactly those that did not arrive. */
static void test_fault_flap_down_time_matches_duty(void **state)
{
    (void)state;
    err e = {0};
    bed b;
    assert_int_equal(bed_init(&b, "\n  - {kind: flap, link: [left, right], at: 50us, "
                                  "until: 1050us, period: 100us, duty: 0.3, "
                                  "convergence: 0s}\n", 1, &e), 0);
    assert_true(fault_changes_routing(b.fs));
    sampler sm = {&b, topo_find_link(b.t, topo_find_node(b.t, "left"),
                                     topo_find_node(b.t, "right")), 0};
    sim_schedule(b.s, NS(500), sample_link, &sm, 0);
    run(&b, 1200);
    assert_int_equal(sm.down, 300);
    fault_stats st = stats(&b, 0);
    assert_int_equal(st.down_events, 10);
    assert_int_equal(st.down_ps, US(300));
    assert_int_equal(st.drop_pkts, 1200 - b.rx.n);
    assert_true(b.rx.n >= 870 && b.rx.n <= 910);    /* ~30 % of 1000 us lost */
    assert_true(topo_link_is_up(b.t, sm.link));
    bed_fini(&b);
}

/* Corruption of class 1 at rate 0.5 drops about half of class 1 and not
 * one packet of the other classes. */
static void test_fault_corrupt_leaves_other_classes_untouched(void **state)
{
    (void)state;
    enum { N = 8000 };
    err e = {0};
    bed b;
    assert_int_equal(bed_init(&b, "\n  - {kind: corrupt, link: [left, right], prio: 1, "
                                  "rate: 0.5}\n", 3, &e), 0);
    b.prio_mod = 4;
    run(&b, N);
    const int *got = b.rx.by_prio;
    fault_stats st = stats(&b, 0);
    assert_int_equal(st.seen_pkts, N / 4);
    assert_int_equal(got[0], N / 4);
    assert_int_equal(got[2], N / 4);
    assert_int_equal(got[3], N / 4);
    assert_int_equal(got[1], N / 4 - (int)st.drop_pkts);
    assert_binomial(st.drop_pkts, N / 4, 0.5);
    bed_fini(&b);
}

/* A delay fault adds exactly its delay to every packet while in force,
 * and nothing after.  (Packets 41..59 are left out of the timing check:
 * the last delayed ones share the port with the first undelayed ones.) */
static void test_fault_delay_adds_exact_latency(void **state)
{
    (void)state;
    err e = {0};
    bed b;
    assert_int_equal(bed_init(&b, "\n  - {kind: delay, link: [left, right], delay: 2.5us, "
                                  "until: 49.9us}\n", 1, &e), 0);
    run(&b, 100);
    assert_int_equal(b.rx.n, 100);
    fault_stats st = stats(&b, 0);
    assert_int_equal(st.delay_pkts, 49);    /* reach left->right before 49.9 us */
    assert_int_equal(st.drop_pkts, 0);
    int checked = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t s = b.rx.seq[i];
        if (s > 40 && s < 60)
            continue;
        assert_int_equal(b.rx.at[i], (int64_t)s * US(1) + NS(5400) + (s <= 40 ? NS(2500) : 0));
        checked++;
    }
    assert_int_equal(checked, 81);
    bed_fini(&b);
}

/* With rate 0.25 a delay fault holds a binomial quarter of the packets,
 * on its own stream, and loses none. */
static void test_fault_delay_fraction(void **state)
{
    (void)state;
    enum { N = 4000 };
    err e = {0};
    bed b;
    assert_int_equal(bed_init(&b, "\n  - {kind: delay, port: right->h2, delay: 10us, "
                                  "rate: 0.25}\n", 5, &e), 0);
    run(&b, N);
    fault_stats st = stats(&b, 0);
    assert_int_equal(st.seen_pkts, N);
    assert_int_equal(b.rx.n, N);
    assert_binomial(st.delay_pkts, N, 0.25);
    /* Every delayed packet arrives at least 10 us late (more if it then
     * queues behind an undelayed one). */
    assert_true(N <= CATCH_MAX);
    uint64_t late = 0;
    for (int i = 0; i < N; i++)
        late += b.rx.at[i] >= (int64_t)b.rx.seq[i] * US(1) + NS(5400) + US(10);
    assert_true(late >= st.delay_pkts);
    assert_true(late <= st.delay_pkts + st.delay_pkts / 2);
    bed_fini(&b);
}

/* ---- ground truth ----------------------------------------------------------- */

static void test_fault_truth_files(void **state)
{
    (void)state;
    err e = {0};
    bed b;
    assert_int_equal(bed_init(&b, "\n"
                                  "  - {kind: blackhole, node: right, at: 100.6us, "
                                  "until: 200.6us}\n"
                                  "  - {kind: delay, port: left->right, delay: 2us, until: 50us}\n"
                                  "  - {kind: flap, link: [h1, left], at: 10us, until: 100us, "
                                  "period: 20us, duty: 0.25}\n"
                                  "  - {kind: corrupt, link: [left, right], prio: 3, rate: 0.5}\n"
                                  "  - {kind: loss, node: h0, rate: 0, at: 1ms}\n",
                              1, &e), 0);
    run(&b, 300);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/truth", tu_tmp);
    out *o;
    assert_int_equal(out_open(dir, 0, &o, &e), 0);
    assert_int_equal(fault_write_truth(b.fs, o, &e), 0);
    assert_int_equal(out_commit(o, &e), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/faults.csv", dir);
    char *csv = tu_slurp(path, NULL);
    assert_string_equal(csv,
        "fault,kind,target_type,target,at_s,until_s,rate,delay_s,period_s,duty,prio,"
        "seen_pkts,dropped_pkts,dropped_bytes,delayed_pkts,down_events,down_s\n"
        "0,blackhole,node,right,0.0001006,0.0002006,,,,,,100,100,100000,0,,\n"
        "1,delay,port,left->right,0,5e-05,1,2e-06,,,,49,0,0,49,,\n"
        "2,flap,link,h1<->left,1e-05,0.0001,,,2e-05,0.25,,,0,,,5,2.5e-05\n"
        "3,corrupt,link,left<->right,0,,0.5,,,,3,0,0,0,0,,\n"
        "4,loss,node,h0,0.001,,0,,,,,0,0,0,0,,\n");
    free(csv);
    snprintf(path, sizeof path, "%s/fault_events.csv", dir);
    csv = tu_slurp(path, NULL);
    assert_string_equal(csv,
        "time_s,fault,kind,target,event\n"
        "0,1,delay,left->right,start\n"
        "0,3,corrupt,left<->right,start\n"
        "1e-05,2,flap,h1<->left,start\n"
        "1e-05,2,flap,h1<->left,down\n"
        "1.5e-05,2,flap,h1<->left,up\n"
        "3e-05,2,flap,h1<->left,down\n"
        "3.5e-05,2,flap,h1<->left,up\n"
        "5e-05,1,delay,left->right,end\n"
        "5e-05,2,flap,h1<->left,down\n"
        "5.5e-05,2,flap,h1<->left,up\n"
        "7e-05,2,flap,h1<->left,down\n"
        "7.5e-05,2,flap,h1<->left,up\n"
        "9e-05,2,flap,h1<->left,down\n"
        "9.5e-05,2,flap,h1<->left,up\n"
        "0.0001,2,flap,h1<->left,end\n"
        "0.0001006,0,blackhole,right,start\n"
        "0.0002006,0,blackhole,right,end\n"
        "0.001,4,loss,h0,start\n");
    free(csv);
    bed_fini(&b);
}

/* ---- errors ----------------------------------------------------------------- */

static void test_fault_bad_configs_exact_messages(void **state)
{
    (void)state;
    static const struct {
        const char *faults, *msg;
    } bad[] = {
        {"\n  - {kind: los, link: [left, right], rate: 0.1}\n",
         "f.yaml:7:12: faults[0].kind: expected one of: loss, delay, blackhole, flap, "
         "corrupt, deflect, found \"los\"; did you mean \"loss\"?"},
        {"\n  - {link: [left, right], rate: 0.1}\n",
         "f.yaml:7:5: faults[0].kind: missing required key (expected one of: loss, delay, "
         "blackhole, flap, corrupt, deflect)"},
        {"\n  - {kind: loss, link: [left, rigth], rate: 0.1}\n",
         "f.yaml:7:31: faults[0].link[1]: unknown node \"rigth\""},
        {"\n  - {kind: loss, link: [h0, right], rate: 0.1}\n",
         "f.yaml:7:24: faults[0].link: no link between h0 and right"},
        {"\n  - {kind: loss, link: left, rate: 0.1}\n",
         "f.yaml:7:24: faults[0].link: expected a list of two node names such as [leaf0, "
         "spine0], found \"left\""},
        {"\n  - {kind: blackhole, port: leftright}\n",
         "f.yaml:7:29: faults[0].port: expected a port name such as \"leaf0->spine0\", "
         "found \"leftright\""},
        {"\n  - {kind: blackhole, port: left->nowhere}\n",
         "f.yaml:7:29: faults[0].port: unknown node \"nowhere\""},
        {"\n  - {kind: blackhole, node: spine9}\n",
         "f.yaml:7:29: faults[0].node: unknown node \"spine9\""},
        {"\n  - {kind: blackhole}\n",
         "f.yaml:7:5: faults[0]: missing target (expected one of link: [a, b], port: "
         "\"a->b\", node: name)"},
        {"\n  - {kind: blackhole, node: left, port: left->right}\n",
         "f.yaml:7:29: faults[0].node: expected one target (link, port or node), found "
         "port and node"},
        {"\n  - {kind: flap, node: left, period: 1ms, duty: 0.5}\n",
         "f.yaml:7:24: faults[0].node: a flap takes a link (link: [a, b]), found a node"},
        {"\n  - {kind: loss, link: [left, right]}\n",
         "f.yaml:7:5: faults[0].rate: missing required key (expected a number)"},
        {"\n  - {kind: loss, link: [left, right], rate: 1.5}\n",
         "f.yaml:7:45: faults[0].rate: expected a number in [0, 1], found \"1.5\""},
        {"\n  - {kind: loss, link: [left, right], rate: 0.1, period: 1ms}\n",
         "f.yaml:7:50: faults[0].period: unknown key; expected one of: kind, link, port, "
         "node, at, until, rate"},
        {"\n  - {kind: blackhole, node: left, at: 100}\n",
         "f.yaml:7:39: faults[0].at: expected a time such as 1.5us, found \"100\" "
         "(missing unit)"},
        {"\n  - {kind: blackhole, node: left, at: 2ms, until: 1ms}\n",
         "f.yaml:7:51: faults[0].until: expected a time after at (2ms), found \"1ms\""},
        {"\n  - {kind: flap, link: [left, right], period: 1ms, duty: 1}\n",
         "f.yaml:7:58: faults[0].duty: expected a number in (0, 1), found \"1\""},
        {"\n  - {kind: corrupt, link: [left, right], rate: 0.5, prio: 8}\n",
         "f.yaml:7:59: faults[0].prio: expected an integer in [0, 7], found \"8\""},
        {"\n  - {kind: delay, link: [left, right]}\n",
         "f.yaml:7:5: faults[0].delay: missing required key (expected a time such as "
         "1.5us)"},
        {" {kind: loss}\n",
         "f.yaml:6:9: faults: expected a list of faults, found a map"},
        {"\n  - {kind: blackhole, node: left}\n  - 3\n",
         "f.yaml:8:5: faults[1]: expected a map (a fault), found \"3\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err e = {0};
        bed b;
        int rc = bed_init(&b, bad[i].faults, 1, &e);
        if (rc == 0 || strcmp(e.msg, bad[i].msg) != 0)
            fail_msg("case %zu: rc %d, message\n  %s\nexpected\n  %s", i, rc, e.msg, bad[i].msg);
        assert_null(b.fs);
        bed_fini(&b);
    }
}

/* No list, or an empty one: an empty set that does nothing. */
static void test_fault_empty_list(void **state)
{
    (void)state;
    err e = {0};
    bed b;
    assert_int_equal(bed_init(&b, " []\n", 1, &e), 0);
    assert_int_equal(fault_count(b.fs), 0);
    assert_false(fault_changes_routing(b.fs));
    run(&b, 10);
    assert_int_equal(b.rx.n, 10);
    bed_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_loss_rate_within_binomial_bound),
        cmocka_unit_test(test_fault_blackhole_drops_everything_in_window_only),
        cmocka_unit_test(test_fault_flap_down_time_matches_duty),
        cmocka_unit_test(test_fault_corrupt_leaves_other_classes_untouched),
        cmocka_unit_test(test_fault_delay_adds_exact_latency),
        cmocka_unit_test(test_fault_delay_fraction),
        cmocka_unit_test(test_fault_truth_files),
        cmocka_unit_test(test_fault_bad_configs_exact_messages),
        cmocka_unit_test(test_fault_empty_list),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
