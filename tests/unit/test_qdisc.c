/*
 * test_qdisc.c - queue disciplines (qdisc.h): RED against Floyd and
 * Jacobson's algorithm worked by hand, DWRR's byte shares, strict
 * priority's order, and a link's `qdisc` key read from a scenario.
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

#include "aisim/err.h"
#include "aisim/netreg.h"
#include "aisim/port.h"
#include "aisim/qdisc.h"
#include "aisim/topo.h"
#include "aisim/units.h"
#include "catcher.h"

/* A port straight into a catcher (no wire: the disciplines decide at the
 * port; arrival times do not matter). */
typedef struct bed {
    sim *s;
    pkt_pool *pool;
    rng r;
    catcher c;
    route *rt;
    port q;
} bed;

static void bed_init(bed *b, const port_cfg *cfg)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    rng_init(&b->r, 1, "test.qdisc", 0);
    port_init(&b->q, b->s, b->pool, &b->r, cfg, "port0");
    catcher_init(&b->c, b->s, b->pool, "sink");
    b->rt = route_create((sink *[]){&b->q.base, &b->c.base}, 2);
}

static void bed_fini(bed *b)
{
    assert_int_equal(pkt_pool_live(b->pool), 0);
    port_fini(&b->q);
    free(b->rt);
    pkt_pool_destroy(b->pool);
    sim_destroy(b->s);
}

static void send(bed *b, uint32_t size, uint8_t prio, uint16_t flags, uint64_t seq)
{
    pkt_send(catcher_pkt(b->pool, size, prio, flags, seq), b->rt);
}

/* 8 Gbps: a 1000-byte packet takes exactly 1 us. */
static const port_cfg base_cfg = {.rate_bps = 8000000000, .buffer_bytes = 1 << 30, .nprio = 1};

/* topo_conf_alloc with no topology is not available: a plain allocator for
 * the tests (the settings are freed with the bed). */
static void *conf_alloc(void *ctx, size_t n)
{
    void **slot = ctx;
    *slot = calloc(1, n);
    return *slot;
}

/* Reads the qdisc value of `yaml` into pc (settings into *conf); returns
 * qdisc_configure's code, its message in e. */
static int qconf(port_cfg *pc, const char *yaml, void **conf, err *e)
{
    const net_registry *reg = net_registry_builtin();
    cfg_doc *d;
    assert_int_equal(cfg_load_string("q.yaml", yaml, strlen(yaml), &d, e), 0);
    int rc = qdisc_configure(reg->qdiscs, cfg_get(cfg_root(d), "qdisc"), "link.qdisc", pc,
                             conf_alloc, conf, e);
    cfg_free(d);
    return rc;
}

static void qcfg(port_cfg *pc, const char *yaml, void **conf)
{
    err e = {0};
    if (qconf(pc, yaml, conf, &e))
        fail_msg("%s", e.msg);
}

/* A bed whose port has `nprio` classes and the discipline of `yaml`. */
static void bed_open(bed *b, int nprio, const char *yaml, void **conf)
{
    port_cfg cfg = base_cfg;
    cfg.nprio = nprio;
    *conf = NULL;
    qcfg(&cfg, yaml, conf);
    bed_init(b, &cfg);
}

static void bed_close(bed *b, void *conf)
{
    bed_fini(b);
    free(conf);
}

/* n packets of class 0 (size0, seq i) and class 1 (size1, seq 100 + i)
 * queued at once, in turn. */
static void fill2(bed *b, int n0, uint32_t size0, int n1, uint32_t size1)
{
    for (int i = 0; i < n0 || i < n1; i++) {
        if (i < n0)
            send(b, size0, 0, 0, (uint64_t)i);
        if (i < n1)
            send(b, size1, 1, 0, 100 + (uint64_t)i);
    }
}

/* The class of the i-th packet received (fill2's numbering). */
#define CLS(b, i) ((b).c.seq[i] >= 100)

typedef struct red_step {
    double avg;             /* after the arrival */
    int64_t count;
    double prob;            /* p_a */
} red_step;

/* RED, by hand.  min_th = 1000 B, max_th = 5000 B, max_p = 0.1, w_q = 0.5,
 * avpkt 1000 B (s = 1 us at 8 Gbps); ECN-capable packets of 1000 B.
 *
 * t = 0: eight packets arrive together.  P1 finds the port idle and goes to
 * the serialiser; each later one finds q = (its index - 2) x 1000 B waiting.
 *   P1: q = 0, empty: m = (0 - 0)/s = 0, avg = 0.5^0 x 0 = 0 < min: count -1
 *   P2: q = 0 (P1 is in service), m = 0: avg 0, count -1
 *   P3: q = 1000: avg = 0 + 0.5 (1000 - 0)      =  500    < min: count -1
 *   P4: q = 2000: avg = 500 + 0.5 (2000 - 500)  = 1250:  count 0,
 *       p_b = 0.1 (1250 - 1000)/4000 = 0.00625,  p_a = p_b / (1 - 0) = 0.00625
 *   P5: q = 3000: avg = 2125,   count 1, p_b = 0.1 x 1125/4000 = 0.028125,
 *       p_a = 0.028125 / (1 - 0.028125)        = 0.0289389...
 *   P6: q = 4000: avg = 3062.5, count 2, p_b = 0.1 x 2062.5/4000 = 0.0515625,
 *       p_a = 0.0515625 / (1 - 2 x 0.0515625)  = 0.0574913...
 *   P7: q = 5000: avg = 4031.25, count 3, p_b = 0.07578125,
 *       p_a = 0.07578125 / (1 - 3 x 0.07578125) = 0.0980788...
 *   P8: q = 6000: avg = 5015.625 >= max_th: marked, count 0
 * (P4-P7 are not marked: the port's draws for them are 0.33, 0.57, 0.20,
 * 0.26, above each p_a; asserted below with a twin of the port's stream.)
 * The queue empties when P8 enters service at t = 7 us: q_time = 7 us.
 * t = 12 us: P9 finds the queue empty: m = (12 - 7)/1 = 5,
 *   avg = 0.5^5 x 5015.625 = 156.73828125 < min: count -1, not marked.
 *   (Without the idle correction avg would be 0.5 x 5015.625 = 2507.8, in
 *   the marking range.)
 * Without the count, P5's probability would be p_b = 0.028125. */
static const red_step red_hand[] = {
    {0, -1, 0},
    {0, -1, 0},
    {500, -1, 0},
    {1250, 0, 0.00625},
    {2125, 1, 0.028125 / (1 - 0.028125)},
    {3062.5, 2, 0.0515625 / (1 - 2 * 0.0515625)},
    {4031.25, 3, 0.07578125 / (1 - 3 * 0.07578125)},
    {5015.625, 0, 1},
    {156.73828125, -1, 0},
};

static void check_red(const bed *b, int i)
{
    qdisc_stats st;
    port_qdisc_stats(&b->q, 0, &st);
    assert_float_equal(st.avg_bytes, red_hand[i].avg, 1e-9);
    assert_int_equal(st.count, red_hand[i].count);
    assert_float_equal(st.prob, red_hand[i].prob, 1e-12);
}

static void late_send(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    send(obj, 1000, 0, PKT_F_ECT, arg);
}

static void test_red_matches_floyd_jacobson_by_hand(void **state)
{
    (void)state;
    void *conf;
    bed b;
    bed_open(&b, 1, "qdisc: {kind: red, min: 1000B, max: 5000B, max_p: 0.1, weight: 0.5}\n",
             &conf);
    assert_ptr_equal(b.q.cfg.qdisc, &qdisc_red);
    rng twin;
    rng_init(&twin, 1, "test.qdisc", 0);
    for (int i = 0; i < 8; i++) {
        send(&b, 1000, 0, PKT_F_ECT, (uint64_t)i);
        check_red(&b, i);
        if (i >= 3 && i <= 6) {  /* in range: one draw each, above p_a */
            double u = rng_u01(&twin);
            assert_true(u >= red_hand[i].prob);
        }
    }
    assert_int_equal(b.q.stat_mark_pkts, 1);        /* P8 only */
    sim_schedule(b.s, 12 * PS_PER_US, late_send, &b, 8);
    sim_run(b.s, 11 * PS_PER_US);
    qdisc_stats st;
    port_qdisc_stats(&b.q, 0, &st);
    assert_float_equal(st.avg_bytes, 5015.625, 1e-9);   /* nothing arrived since */
    sim_run(b.s, 12 * PS_PER_US);
    check_red(&b, 8);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 9);
    assert_int_equal(b.q.stat_mark_pkts, 1);
    assert_true(b.c.flags[7] & PKT_F_CE);
    for (int i = 0; i < 9; i++)
        if (i != 7)
            assert_false(b.c.flags[i] & PKT_F_CE);
    bed_close(&b, conf);
}

/* Above max_th RED drops what it cannot mark; with ecn: false it drops
 * ECN-capable packets too. */
static void test_red_drops_what_it_cannot_mark(void **state)
{
    (void)state;
    for (int ecn = 0; ecn < 2; ecn++) {
        void *conf;
        bed b;
        bed_open(&b, 1,
                 ecn ? "qdisc: {kind: red, min: 1000B, max: 2000B, weight: 1}\n"
                     : "qdisc: {kind: red, min: 1000B, max: 2000B, weight: 1, ecn: false}\n",
                 &conf);
        /* q at arrival 0, 0, 1000, 2000, 3000: the last two are above max. */
        for (int i = 0; i < 5; i++)
            send(&b, 1000, 0, PKT_F_ECT, (uint64_t)i);
        sim_run(b.s, SIM_TIME_MAX);
        qdisc_stats st;
        port_qdisc_stats(&b.q, 0, &st);
        if (ecn) {
            assert_int_equal(b.c.n, 5);
            assert_true(st.marks >= 2);
            assert_int_equal(st.drops, 0);
        } else {
            assert_true(st.drops >= 2);
            assert_int_equal(st.marks, 0);
            assert_int_equal(b.c.n, 5 - (int)st.drops);
            assert_int_equal(b.q.stat_drop_pkts, st.drops);
        }
        bed_close(&b, conf);
    }
}

/* DWRR: with both classes backlogged, class 0 (quantum 1500 B) sends one
 * 1500-byte packet per round and class 1 (4500 B) three, in that order; the
 * shares are of bytes, not packets: 500-byte packets of class 0 with equal
 * quanta go three for one. */
static void test_dwrr_serves_byte_shares_by_quantum(void **state)
{
    (void)state;
    void *conf;
    bed b;
    bed_open(&b, 2, "qdisc: {kind: dwrr, quanta: [1500B, 4500B]}\n", &conf);
    fill2(&b, 40, 1500, 40, 1500);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 80);
    /* 0, then 1 1 1 0 1 1 1 0 ... while both have packets (13 rounds of
     * class 1 use 39 of its 40). */
    assert_int_equal(CLS(b, 0), 0);
    for (int k = 0; k < 13; k++) {
        for (int j = 1; j <= 3; j++)
            assert_int_equal(CLS(b, 4 * k + j), 1);
        assert_int_equal(CLS(b, 4 * k + 4), 0);
    }
    int64_t bytes[2] = {0, 0};
    for (int i = 0; i < 52; i++)
        bytes[CLS(b, i)] += 1500;
    /* The first 52: class 0's first and 12 more, 39 of class 1. */
    assert_int_equal(bytes[0], 13 * 1500);
    assert_int_equal(bytes[1], 3 * bytes[0]);
    bed_close(&b, conf);

    bed_open(&b, 2, "qdisc: {kind: dwrr, quantum: 1500B}\n", &conf);
    fill2(&b, 60, 500, 20, 1500);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 80);
    int64_t by[2] = {0, 0};
    int np[2] = {0, 0};
    for (int i = 0; i < 40; i++) {
        by[CLS(b, i)] += CLS(b, i) ? 1500 : 500;
        np[CLS(b, i)]++;
    }
    /* The first packet of class 0 went straight to the serialiser; after it
     * each round is 3 x 500 B of class 0 and 1 x 1500 B of class 1. */
    assert_true(llabs(by[0] - by[1]) <= 1500);
    assert_true(np[0] >= 3 * np[1] - 3 && np[0] <= 3 * np[1] + 3);
    bed_close(&b, conf);
}

/* prio: every class-0 packet before any class-1, class 1 before class 2,
 * FIFO within a class; peek names the class dequeue then takes. */
static void test_prio_serves_in_class_order(void **state)
{
    (void)state;
    void *conf;
    bed b;
    bed_open(&b, 3, "qdisc: prio\n", &conf);
    assert_ptr_equal(b.q.cfg.qdisc, &qdisc_prio);
    send(&b, 1000, 2, 0, 0);            /* in service at once */
    for (int i = 1; i <= 9; i++)
        send(&b, 1000, (uint8_t)(2 - i % 3), 0, (uint64_t)i);
    /* queued: class 1: 1 4 7; class 0: 2 5 8; class 2: 3 6 9 */
    assert_int_equal(qdisc_prio.peek(port_qdisc_priv(&b.q), &b.q, 7u), 0);
    assert_int_equal(qdisc_prio.peek(port_qdisc_priv(&b.q), &b.q, 6u), 1);
    sim_run(b.s, SIM_TIME_MAX);
    static const uint64_t want[] = {0, 2, 5, 8, 1, 4, 7, 3, 6, 9};
    assert_int_equal(b.c.n, 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(b.c.seq[i], want[i]);
    bed_close(&b, conf);
}

/* DWRR's peek is its dequeue without the side effects. */
static void test_dwrr_peek_changes_nothing(void **state)
{
    (void)state;
    void *conf;
    bed b;
    bed_open(&b, 2, "qdisc: {kind: dwrr, quanta: [1500B, 4500B]}\n", &conf);
    fill2(&b, 4, 1500, 4, 1500);
    void *pv = port_qdisc_priv(&b.q);
    int a = qdisc_dwrr.peek(pv, &b.q, 3u), a2 = qdisc_dwrr.peek(pv, &b.q, 3u);
    assert_int_equal(a, a2);
    assert_int_equal(a, 1);     /* class 0 spent its quantum on the first packet */
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(CLS(b, 1), 1);
    bed_close(&b, conf);
}

/* The inline disciplines write the port's own settings and take the inline
 * path; a marking discipline refuses the inline AQM keys; bad values are
 * located. */
static void test_qdisc_key_inline_and_errors(void **state)
{
    (void)state;
    port_cfg cfg = base_cfg;
    void *conf = NULL;
    qcfg(&cfg, "qdisc: {kind: ecn, k: 30KB}\n", &conf);
    assert_ptr_equal(cfg.qdisc, &qdisc_ecn);
    assert_int_equal(cfg.ecn_k_bytes, 30000);
    bed b;
    bed_init(&b, &cfg);
    assert_null(b.q.cfg.qdisc);         /* inline: no call per packet */
    bed_fini(&b);
    free(conf);
    conf = NULL;
    cfg = base_cfg;
    qcfg(&cfg, "qdisc: {kind: ecn_ramp, kmin: 10KB, kmax: 40KB, pmax: 0.2}\n", &conf);
    assert_int_equal(cfg.red_min_bytes, 10000);
    assert_int_equal(cfg.red_max_bytes, 40000);
    assert_float_equal(cfg.red_max_p, 0.2, 0);
    assert_float_equal(cfg.red_weight, 1, 0);
    free(conf);

    static const struct {
        const char *yaml;
        int64_t ecn_k;
        const char *msg;
    } bad[] = {
        {"qdisc: codel\n", 0,
         "q.yaml:1:8: link.qdisc: expected one of: droptail, ecn, ecn_ramp, red, prio or dwrr, "
         "found \"codel\""},
        {"qdisc: red\n", 0,
         "q.yaml:1:8: link.qdisc: qdisc red: missing required key min (give qdisc: {kind: red, "
         "min: ...})"},
        {"qdisc: {kind: red, min: 20KB, max: 10KB}\n", 0,
         "q.yaml:1:36: link.qdisc.max: expected max > min (20000 B), found 10000 B"},
        {"qdisc: {kind: red, min: 1KB, max: 10KB}\n", 5000,
         "q.yaml:1:15: link.qdisc.kind: expected no ecn_k or red_min on a link whose qdisc red "
         "decides marking (give its settings in the qdisc map), found ecn_k 5000 B"},
        {"qdisc: {kind: dwrr, quanta: [1500B]}\n", 0,
         "q.yaml:1:29: link.qdisc.quanta: expected 2 quanta (one per class: priorities), found 1"},
        {"qdisc: {kind: dwrr, quanta: [1500B, 10B]}\n", 0,
         "q.yaml:1:37: link.qdisc.quanta[1]: expected a size in [64B, 1GiB], found \"10B\""},
        {"qdisc: {min: 1KB}\n", 0,
         "q.yaml:1:8: link.qdisc.kind: missing required key (expected one of: droptail, ecn, "
         "ecn_ramp, red, prio or dwrr)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        port_cfg pc = base_cfg;
        pc.nprio = 2;
        pc.ecn_k_bytes = bad[i].ecn_k;
        err e = {0};
        void *slot = NULL;
        assert_int_not_equal(qconf(&pc, bad[i].yaml, &slot, &e), 0);
        assert_string_equal(e.msg, bad[i].msg);
        free(slot);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_red_matches_floyd_jacobson_by_hand),
        cmocka_unit_test(test_red_drops_what_it_cannot_mark),
        cmocka_unit_test(test_dwrr_serves_byte_shares_by_quantum),
        cmocka_unit_test(test_dwrr_peek_changes_nothing),
        cmocka_unit_test(test_prio_serves_in_class_order),
        cmocka_unit_test(test_qdisc_key_inline_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
