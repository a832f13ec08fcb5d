/*
 * test_stellar_mp.c - Stellar's multi-path core (stellar_mp.h), driven
 * directly, no engine:
 *
 *  - path choice: round robin exact (every path k times in index order);
 *    OBS uniform (chi-square over 128 paths below the 99.9 % quantile,
 *    182.1, and above the 0.1 % one, 83.3); single path = key mod paths
 *    always; the same seed gives the same draws, another QP others;
 *  - feedback, in a closed loop with per-path RTT and ECN: BestRTT sends
 *    < 1 % on a path of twice the RTT; DWRR gives a path of twice the RTT,
 *    and one whose every ACK is marked, half the share of the others
 *    (1/7 = 14.3 % of 4 paths, within 1 point); MP-RDMA keeps a marked
 *    path at about one packet per RTT; OBS stays at 1/4 regardless;
 *  - the bitmap: any permutation of its window accepted in full, the PSN
 *    one past it rejected, duplicates told;
 *  - loss against reordering: heavy reordering alone resends nothing; one
 *    loss resends that PSN alone, after the RTO, on another path; by path
 *    order the loss is found at the next ACK of its path; 122 resends
 *    after a window's timeout never take their PSN's previous path;
 *  - avoidance: 3 timeouts in a row avoid a path for exactly 10 ms; an ACK
 *    between timeouts resets the count;
 *  - CC: initial window 1 BDP; +1 MSS per window without marks; halving
 *    under full marking; alpha's EWMA exact; RTT above the cap cuts by
 *    beta (rtt - target) / rtt once per RTT; a timeout halves; the floor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/pkt.h"
#include "aisim/stellar_mp.h"
#include "aisim/units.h"

static smp_params params(uint32_t paths)
{
    smp_params pr;
    smp_params_default(&pr);
    pr.paths = paths;
    return pr;
}

static void test_defaults(void **state)
{
    (void)state;
    smp_params pr = params(SMP_PATHS_DEFAULT);
    assert_null(smp_params_check(&pr));
    assert_int_equal(pr.paths, 128);
    assert_int_equal(pr.rto_ps, US(250));
    assert_int_equal(pr.out, SMP_OUT_HASH);     /* hashed entropy; pathidx is idealised */
    /* 400 Gbps x 260 us = 13 MB = 3,174 packets of 4 KiB, rounded to 3,200 */
    assert_int_equal(smp_params_window(&pr), 3200);
    pr.paths = 3;
    assert_non_null(smp_params_check(&pr));
    pr.paths = 257;
    assert_non_null(smp_params_check(&pr));
    pr.paths = 256;
    pr.window = 100;
    assert_non_null(smp_params_check(&pr));
    for (const smp_path_ops *const *o = smp_path_all(); *o; o++)
        assert_ptr_equal(smp_path_find((*o)->name), *o);
    assert_null(smp_path_find("ecmp"));
}

static void test_rr_exact(void **state)
{
    (void)state;
    smp_params pr = params(128);
    smp_paths ps;
    smp_paths_init(&ps, &smp_rr, &pr, 77, 1, 0);
    for (uint32_t k = 0; k < 128 * 50; k++) {
        uint32_t i = smp_path_choose(&ps, 4096, 0, -1);
        assert_int_equal(i, k % 128);
        smp_path_sent(&ps, i);
    }
    for (uint32_t i = 0; i < 128; i++)
        assert_int_equal(ps.p[i].sent, 50);
    smp_paths_fini(&ps);
}

static double chi2(const uint64_t *cnt, uint32_t n, uint64_t total)
{
    double e = (double)total / n, x = 0;
    for (uint32_t i = 0; i < n; i++)
        x += ((double)cnt[i] - e) * ((double)cnt[i] - e) / e;
    return x;
}

static void test_obs_uniform(void **state)
{
    (void)state;
    smp_params pr = params(128);
    uint64_t first[64];
    for (uint64_t seed = 1; seed <= 5; seed++) {
        smp_paths ps;
        smp_paths_init(&ps, &smp_obs, &pr, 77, seed, 3);
        uint64_t cnt[128] = {0};
        for (uint32_t k = 0; k < 128 * 200; k++) {
            uint32_t i = smp_path_choose(&ps, 4096, 0, -1);
            if (seed == 1 && k < 64)
                first[k] = i;
            cnt[i]++;
        }
        double x = chi2(cnt, 128, 128 * 200);
        assert_true(x < 182.1);     /* chi2(127) 99.9 % quantile */
        assert_true(x > 83.3);      /* ... and 0.1 %: not suspiciously even */
        smp_paths_fini(&ps);
    }
    /* The same seed and QP draw the same paths; another QP others. */
    smp_paths a, b;
    smp_paths_init(&a, &smp_obs, &pr, 77, 1, 3);
    smp_paths_init(&b, &smp_obs, &pr, 77, 1, 4);
    int same = 0;
    for (int k = 0; k < 64; k++) {
        assert_int_equal(smp_path_choose(&a, 4096, 0, -1), first[k]);
        same += smp_path_choose(&b, 4096, 0, -1) == first[k];
    }
    assert_true(same < 8);
    smp_paths_fini(&a);
    smp_paths_fini(&b);
}

static void test_single_and_entropy(void **state)
{
    (void)state;
    smp_params pr = params(16);
    smp_paths ps;
    smp_paths_init(&ps, &smp_single, &pr, 1000003, 1, 0);
    for (int k = 0; k < 100; k++)
        assert_int_equal(smp_path_choose(&ps, 4096, 0, k % 16), 1000003 % 16);
    /* a pinned path is never avoided: the QP has no other */
    for (int k = 0; k < 5; k++)
        smp_path_lost(&ps, 1000003 % 16, true, 0);
    assert_int_equal(smp_path_choose(&ps, 4096, 1, -1), 1000003 % 16);
    uint16_t fl = 0;
    pr.out = SMP_OUT_PATHIDX;
    uint32_t e0 = smp_path_entropy(&ps, 0, &fl);
    assert_int_equal(fl, PKT_F_PATHIDX);
    assert_int_equal((uint32_t)(smp_path_entropy(&ps, 5, &fl) - e0), 5);
    smp_paths other;
    smp_paths_init(&other, &smp_single, &pr, 1000004, 1, 1);
    assert_int_not_equal(smp_path_entropy(&other, 0, &fl), e0);     /* per-QP offset */
    smp_paths_fini(&other);
    pr.out = SMP_OUT_HASH;
    uint32_t e5 = smp_path_entropy(&ps, 5, &fl);
    assert_int_equal(fl, 0);
    assert_int_equal(smp_path_entropy(&ps, 5, &fl), e5);
    int distinct = 0;
    for (uint32_t i = 0; i < 16; i++)
        distinct += smp_path_entropy(&ps, i, &fl) != e5 || i == 5;
    assert_int_equal(distinct, 16);
    smp_paths_fini(&ps);
}

/* ---- a closed loop: one packet per tick, path i acked after rtt[i] ticks,
 * marked when mark[i] ---- */

typedef struct loopev { int64_t at; uint32_t path; int64_t sent; } loopev;

static void run_loop(smp_paths *ps, const int64_t *rtt, const bool *mark, int64_t ticks,
                     int64_t warm, uint64_t *share)
{
    loopev *ev = calloc((size_t)ticks, sizeof *ev);
    size_t h = 0, n = 0;  /* acks due in send order per path differ: keep a list */
    const int64_t tick = NS(100);
    for (int64_t t = 0; t < ticks; t++) {
        int64_t now = t * tick;
        /* deliver what is due (a small list: scan) */
        for (size_t k = h; k < n; k++) {
            if (ev[k].at > now || ev[k].at < 0)
                continue;
            smp_path_ack(ps, ev[k].path, ev[k].at - ev[k].sent, mark[ev[k].path], true, now);
            ev[k].at = -1;
        }
        while (h < n && ev[h].at < 0)
            h++;
        uint32_t i = smp_path_choose(ps, 4096, now, -1);
        smp_path_sent(ps, i);
        if (t >= warm)
            share[i]++;
        ev[n++] = (loopev){now + rtt[i] * tick, i, now};
    }
    free(ev);
}

static void test_feedback_algorithms(void **state)
{
    (void)state;
    smp_params pr = params(4);
    const int64_t base[4] = {20, 20, 20, 20}, slow[4] = {20, 20, 40, 20};
    const bool none[4] = {0}, marked1[4] = {0, 1, 0, 0};
    const int64_t T = 20000, W = 2000;
    const double n = (double)(T - W);
    smp_paths ps;

    uint64_t s[4] = {0};
    smp_paths_init(&ps, &smp_bestrtt, &pr, 1, 1, 0);
    run_loop(&ps, slow, none, T, W, s);
    assert_true(s[2] < n / 100);                 /* BestRTT: < 1 % on the slow path */
    smp_paths_fini(&ps);

    /* DWRR: twice the RTT, half the quantum: 0.5 / 3.5 of the packets */
    memset(s, 0, sizeof s);
    smp_paths_init(&ps, &smp_dwrr, &pr, 1, 1, 0);
    run_loop(&ps, slow, none, T, W, s);
    assert_float_equal(s[2] / n, 1.0 / 7, 0.01);
    assert_float_equal(s[0] / n, 2.0 / 7, 0.01);
    smp_paths_fini(&ps);
    /* ... and every ACK of path 1 marked: weight 1 - 1/2 */
    memset(s, 0, sizeof s);
    smp_paths_init(&ps, &smp_dwrr, &pr, 1, 1, 0);
    run_loop(&ps, base, marked1, T, W, s);
    assert_float_equal(s[1] / n, 1.0 / 7, 0.01);
    smp_paths_fini(&ps);

    /* MP-RDMA: a path marked on every ACK keeps a window of 1, so about one
     * packet per RTT (20 ticks): 5 % of the packets, the rest shared */
    memset(s, 0, sizeof s);
    smp_paths_init(&ps, &smp_mprdma, &pr, 1, 1, 0);
    run_loop(&ps, base, marked1, T, W, s);
    assert_true(s[1] <= (uint64_t)(n / 20) + 2);
    assert_true(s[0] > n * 0.3 && s[2] > n * 0.3 && s[3] > n * 0.3);
    assert_float_equal(ps.p[1].cwnd, 1.0, 1e-9);
    smp_paths_fini(&ps);

    /* OBS ignores feedback: a quarter each, within 1.5 points */
    memset(s, 0, sizeof s);
    smp_paths_init(&ps, &smp_obs, &pr, 1, 1, 0);
    run_loop(&ps, slow, marked1, T, W, s);
    for (int i = 0; i < 4; i++)
        assert_float_equal(s[i] / n, 0.25, 0.015);
    smp_paths_fini(&ps);
}

static void test_avoidance(void **state)
{
    (void)state;
    smp_params pr = params(4);
    smp_paths ps;
    smp_paths_init(&ps, &smp_rr, &pr, 1, 1, 0);
    const int64_t t3 = US(800);
    smp_path_lost(&ps, 1, true, US(300));
    smp_path_lost(&ps, 1, true, US(550));
    smp_path_ack(&ps, 1, US(10), false, false, US(560));    /* resets the run */
    smp_path_lost(&ps, 1, true, US(600));
    smp_path_lost(&ps, 1, true, US(700));
    assert_int_equal(ps.p[1].avoided, 0);
    smp_path_lost(&ps, 1, true, t3);                         /* third in a row */
    assert_int_equal(ps.p[1].avoided, 1);
    assert_int_equal(ps.p[1].avoid_until_ps, t3 + MS(10));
    for (int k = 0; k < 300; k++)
        assert_int_not_equal(smp_path_choose(&ps, 4096, t3 + MS(10) - 1, -1), 1);
    int seen = 0;
    for (int k = 0; k < 4; k++)
        seen += smp_path_choose(&ps, 4096, t3 + MS(10), -1) == 1;
    assert_int_equal(seen, 1);
    /* every path avoided: the choice still returns one */
    for (uint32_t i = 0; i < 4; i++)
        ps.p[i].avoid_until_ps = MS(100);
    assert_true(smp_path_choose(&ps, 4096, MS(50), -1) < 4);
    /* OBS and MP-RDMA respect avoidance too */
    smp_paths o;
    smp_paths_init(&o, &smp_obs, &pr, 1, 1, 0);
    o.p[2].avoid_until_ps = MS(1);
    for (int k = 0; k < 1000; k++)
        assert_int_not_equal(smp_path_choose(&o, 4096, 0, -1), 2);
    smp_paths_fini(&o);
    smp_paths_fini(&ps);
}

static void test_bitmap(void **state)
{
    (void)state;
    rng r;
    rng_init(&r, 7, "test", 0);
    smp_rxmap m;
    smp_rxmap_init(&m, 256);
    uint64_t psn[256];
    for (int round = 0; round < 50; round++) {
        uint64_t b = m.base;
        for (int k = 0; k < 256; k++)
            psn[k] = b + (uint64_t)k;
        rng_shuffle(&r, psn, 256, sizeof psn[0]);
        assert_int_equal(smp_rxmap_recv(&m, b + 256), SMP_RX_BEYOND);
        for (int k = 0; k < 256; k++)
            assert_int_equal(smp_rxmap_recv(&m, psn[k]), SMP_RX_PLACED);
        assert_int_equal(m.base, b + 256);
        assert_int_equal(smp_rxmap_recv(&m, psn[0]), SMP_RX_DUP);
    }
    assert_int_equal(m.placed, 50 * 256);
    assert_int_equal(m.beyond, 50);
    /* one hole: the rest of the window is held, the cumulative point waits */
    uint64_t b = m.base;
    for (uint64_t k = 1; k < 256; k++)
        assert_int_equal(smp_rxmap_recv(&m, b + k), SMP_RX_PLACED);
    assert_int_equal(m.base, b);
    assert_int_equal(smp_rxmap_recv(&m, b + 256), SMP_RX_BEYOND);
    assert_int_equal(smp_rxmap_recv(&m, b + 7), SMP_RX_DUP);
    assert_int_equal(smp_rxmap_recv(&m, b), SMP_RX_PLACED);
    assert_int_equal(m.base, b + 256);
    assert_int_equal(m.max_gap, 255);
    smp_rxmap_fini(&m);
}

/* ---- the sender ---- */

static smp_ack ack_of(const smp_send *s, int64_t sent_ps, uint64_t cum)
{
    return (smp_ack){.psn = s->psn, .cum = cum, .path = s->path, .sent_ps = sent_ps};
}

/* Sends n packets at time 0 (window permitting); acks them in `order`
 * (indices; UINT32_MAX: lost) at 10 us, the receiver's bitmap giving cum. */
static void test_reorder_no_retx(void **state)
{
    (void)state;
    smp_params pr = params(16);
    smp_qp q;
    smp_qp_init(&q, &pr, &smp_obs, 5, 1, 0);
    smp_rxmap m;
    smp_rxmap_init(&m, smp_params_window(&pr));
    enum { N = 100 };
    smp_send s[N];
    for (int k = 0; k < N; k++)
        assert_true(smp_qp_send(&q, 0, 4096, &s[k]));
    /* delivered in reverse: the worst reordering of the window */
    for (int k = N - 1; k >= 0; k--) {
        assert_int_equal(smp_rxmap_recv(&m, s[k].psn), SMP_RX_PLACED);
        smp_ack a = ack_of(&s[k], 0, m.base);
        smp_qp_ack(&q, US(10) + (N - k), &a);
        smp_qp_timer(&q, US(10) + (N - k));
    }
    assert_int_equal(q.una, N);
    assert_int_equal(q.retx, 0);
    assert_int_equal(q.timeouts, 0);
    assert_int_equal(q.inflight_bytes, 0);
    assert_int_equal(smp_qp_deadline(&q), INT64_MAX);
    assert_int_equal(m.ooo, N - 1);
    smp_rxmap_fini(&m);
    smp_qp_fini(&q);
}

static void test_single_loss(void **state)
{
    (void)state;
    for (int order = 0; order < 2; order++) {
        smp_params pr = params(16);
        pr.order_loss = order;
        smp_qp q;
        smp_qp_init(&q, &pr, &smp_rr, 5, 1, 0);
        smp_rxmap m;
        smp_rxmap_init(&m, smp_params_window(&pr));
        enum { N = 64, LOST = 5 };
        smp_send s[N];
        for (int k = 0; k < N; k++)
            assert_true(smp_qp_send(&q, NS(10) * k, 4096, &s[k]));
        for (int k = 0; k < N; k++) {
            if (k == LOST)
                continue;
            smp_rxmap_recv(&m, s[k].psn);
            smp_ack a = ack_of(&s[k], NS(10) * k, m.base);
            smp_qp_ack(&q, US(10) + NS(10) * k, &a);
        }
        assert_int_equal(q.una, LOST);
        if (order) {
            /* PSN 21 went on path 5 after PSN 5: its ACK proves 5 lost */
            assert_int_equal(q.lost_order, 1);
            assert_true(smp_qp_can_send(&q, false));
        } else {
            assert_false(smp_qp_can_send(&q, false));
            assert_int_equal(smp_qp_deadline(&q), NS(10) * LOST + US(250));
            smp_qp_timer(&q, NS(10) * LOST + US(250) - 1);
            assert_int_equal(q.timeouts, 0);
            smp_qp_timer(&q, NS(10) * LOST + US(250));
            assert_int_equal(q.timeouts, 1);
            assert_int_equal(q.paths.p[s[LOST].path].timeouts, 1);
            smp_qp_timer(&q, US(290));          /* the acked ones never time out */
            assert_int_equal(q.timeouts, 1);
        }
        int64_t t = US(300);
        smp_send r;
        assert_true(smp_qp_send(&q, t, 4096, &r));
        assert_true(r.retx);
        assert_int_equal(r.psn, LOST);
        assert_int_not_equal(r.path, s[LOST].path);    /* another path */
        assert_false(smp_qp_can_send(&q, false));      /* nothing else resent */
        smp_rxmap_recv(&m, r.psn);
        smp_ack a = ack_of(&r, t, m.base);
        smp_qp_ack(&q, t + US(10), &a);
        assert_int_equal(q.una, N);
        assert_int_equal(q.sent, N + 1);
        assert_int_equal(q.retx, 1);
        assert_int_equal(q.inflight_bytes, 0);
        smp_rxmap_fini(&m);
        smp_qp_fini(&q);
    }
}

/* Every resend avoids the path its PSN was lost on (OBS over 4 paths would
 * draw it again a quarter of the time). */
static void test_resend_elsewhere(void **state)
{
    (void)state;
    smp_params pr = params(4);
    smp_qp q;
    smp_qp_init(&q, &pr, &smp_obs, 5, 1, 0);
    smp_send s;
    uint32_t first[200];
    int n = 0;
    while (n < 200 && smp_qp_send(&q, 0, 4096, &s))
        first[n++] = s.path;
    assert_int_equal(n, 122);           /* the initial window */
    smp_qp_timer(&q, US(250));
    assert_int_equal(q.timeouts, 122);
    int k = 0;
    while (smp_qp_send(&q, US(260), 4096, &s)) {
        assert_true(s.retx);
        assert_int_not_equal(s.path, first[s.psn]);
        k++;
    }
    assert_int_equal(k, 122);
    /* 122 timeouts, about 30 per path: every path avoided (3 in a row),
     * so the resends ignored avoidance rather than stall */
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(q.paths.p[i].avoided, q.paths.p[i].timeouts / 3);
    smp_qp_fini(&q);
}

/* A QP keeps sending new PSNs past a hole, up to its window; the receiver
 * and the sender hold the same window, so nothing is rejected. */
static void test_window_bound(void **state)
{
    (void)state;
    smp_params pr = params(8);
    pr.window = 128;
    pr.line_rate_bps = GBPS(4000);   /* a window's room of congestion window */
    smp_qp q;
    smp_qp_init(&q, &pr, &smp_obs, 5, 1, 0);
    smp_send s;
    int k = 0;
    while (smp_qp_send(&q, 0, 4096, &s))
        k++;
    assert_int_equal(k, 128);
    assert_false(smp_qp_can_send(&q, true));
    smp_ack a = {.psn = 1, .cum = 0, .path = q.e[1].path, .sent_ps = 0};
    smp_qp_ack(&q, US(10), &a);         /* a hole at 0: the window does not move */
    assert_false(smp_qp_can_send(&q, true));
    a = (smp_ack){.psn = 0, .cum = 2, .path = q.e[0].path, .sent_ps = 0};
    smp_qp_ack(&q, US(10), &a);
    assert_int_equal(q.una, 2);
    assert_true(smp_qp_send(&q, US(10), 4096, &s));
    assert_int_equal(s.psn, 128);
    smp_qp_fini(&q);
}

/* ---- congestion control ---- */

static void ack_window(smp_cc *cc, double frac_marked, int64_t rtt, int64_t *now)
{
    static uint64_t k;      /* marks spread evenly across windows */
    double end = cc->win_end, got = 0;
    while (got < end) {
        bool ce = frac_marked > 0 && (double)(k % 100) < frac_marked * 100;
        smp_cc_ack(cc, 4096, rtt, ce, *now);
        got += 4096;
        k++;
    }
    *now += rtt;
}

static void test_cc(void **state)
{
    (void)state;
    smp_params pr = params(128);
    smp_cc cc;
    smp_cc_init(&cc, &pr);
    assert_float_equal(cc.cwnd_bytes, 500000, 1);     /* 400 Gbps x 10 us */
    int64_t now = 0;
    /* no marks, RTT at base: one MSS per window */
    cc.cwnd_bytes = cc.win_end = 100 * 4096;
    double w0 = cc.cwnd_bytes;
    ack_window(&cc, 0, US(10), &now);
    assert_float_equal(cc.cwnd_bytes - w0, 4096, 4096 * 0.02);
    assert_int_equal(cc.cuts_ecn + cc.cuts_rtt, 0);
    /* the unmarked window took alpha from 1 to 15/16; all marked: alpha
     * = 15/16 + (1 - 15/16) / 16 and the window x (1 - alpha / 2) */
    double alpha = 15.0 / 16;
    assert_float_equal(cc.alpha, alpha, 1e-12);
    w0 = cc.cwnd_bytes;
    ack_window(&cc, 1, US(10), &now);
    alpha += (1 - alpha) / 16;
    assert_float_equal(cc.alpha, alpha, 1e-12);
    assert_float_equal(cc.cwnd_bytes, w0 * (1 - alpha / 2), 1e-6);
    assert_int_equal(cc.cuts_ecn, 1);
    /* a quarter marked: alpha += (0.25 - alpha) / 16 */
    cc.win_end = cc.cwnd_bytes = 100 * 4096;
    ack_window(&cc, 0.25, US(10), &now);
    alpha += (0.25 - alpha) / 16;
    assert_float_equal(cc.alpha, alpha, 1e-12);
    /* steady a quarter marked: alpha converges to 0.25 */
    for (int k = 0; k < 300; k++)
        ack_window(&cc, 0.25, US(10), &now);
    assert_float_equal(cc.alpha, 0.25, 0.02);
    /* RTT at 3x base (target 2x): cut by 0.5 x (30 - 20) / 30 = 1/6, once */
    smp_cc_init(&cc, &pr);
    w0 = cc.cwnd_bytes;
    double grow = 4096.0 * 4096 / w0;
    smp_cc_ack(&cc, 4096, US(30), false, US(100));
    assert_float_equal(cc.cwnd_bytes, (w0 + grow) * 5 / 6, 1e-6);
    w0 = cc.cwnd_bytes;
    smp_cc_ack(&cc, 4096, US(30), false, US(100) + US(29));   /* within an RTT */
    assert_int_equal(cc.cuts_rtt, 1);
    smp_cc_ack(&cc, 4096, US(30), false, US(100) + US(30));
    assert_int_equal(cc.cuts_rtt, 2);
    smp_cc_ack(&cc, 4096, US(19), false, US(200));              /* below the cap */
    assert_int_equal(cc.cuts_rtt, 2);
    /* the fabric's base RTT (20 us, a longer path's) sets the cap for every
     * QP: 3x this QP's base (30 us) no longer cuts, 50 us cuts by
     * 0.5 x (50 - 40) / 50 = 1/10; the base is never lowered */
    smp_cc fab;
    smp_cc_init(&fab, &pr);
    smp_cc_cap_base(&fab, US(20));
    smp_cc_cap_base(&fab, US(5));
    assert_int_equal(fab.cap_base_ps, US(20));
    smp_cc_ack(&fab, 4096, US(30), false, US(100));
    assert_int_equal(fab.cuts_rtt, 0);
    double f0 = fab.cwnd_bytes, fgrow = 4096.0 * 4096 / f0;
    smp_cc_ack(&fab, 4096, US(50), false, US(200));
    assert_int_equal(fab.cuts_rtt, 1);
    assert_float_equal(fab.cwnd_bytes, (f0 + fgrow) * 9 / 10, 1e-6);
    /* a timeout halves, once per RTT; the floor holds */
    w0 = cc.cwnd_bytes;
    smp_cc_loss(&cc, US(300));
    smp_cc_loss(&cc, US(301));
    assert_float_equal(cc.cwnd_bytes, w0 / 2, 1e-6);
    assert_int_equal(cc.cuts_loss, 1);
    for (int k = 0; k < 40; k++)
        smp_cc_loss(&cc, US(400) + US(100) * k);
    assert_float_equal(cc.cwnd_bytes, 4096, 1e-9);
}

/* The shared window: whatever the path, packets in flight stay within it. */
static void test_cc_shared(void **state)
{
    (void)state;
    smp_params pr = params(128);
    smp_qp q;
    smp_qp_init(&q, &pr, &smp_obs, 5, 1, 0);
    smp_send s;
    int k = 0;
    while (smp_qp_send(&q, 0, 4096, &s))
        k++;
    /* 500,000 bytes of window: 122 full packets, the first always goes */
    assert_int_equal(k, 122);
    uint32_t used = 0;
    for (uint32_t i = 0; i < 128; i++)
        used += q.paths.p[i].inflight > 0;
    assert_true(used > 50);             /* spread over many paths, one window */
    smp_qp_fini(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_rr_exact),
        cmocka_unit_test(test_obs_uniform),
        cmocka_unit_test(test_single_and_entropy),
        cmocka_unit_test(test_feedback_algorithms),
        cmocka_unit_test(test_avoidance),
        cmocka_unit_test(test_bitmap),
        cmocka_unit_test(test_reorder_no_retx),
        cmocka_unit_test(test_single_loss),
        cmocka_unit_test(test_resend_elsewhere),
        cmocka_unit_test(test_window_bound),
        cmocka_unit_test(test_cc),
        cmocka_unit_test(test_cc_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
