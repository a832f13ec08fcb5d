/*
 * test_hook.c - port hooks and queue watermarks: an empty or pass-through
 * chain changes nothing; a rewrite hook edits ACK windows only; drops are
 * counted and bytes conserved on a whole topology; a delay is exact and
 * keeps order, and a delayed packet resumes behind its hook; watermarks
 * notify once per crossing, with hysteresis, per class or per port.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/hook.h"
#include "aisim/topo.h"
#include "aisim/units.h"
#include "catcher.h"

/* ---- a port, a wire and a sink ------------------------------------------ */

typedef struct bed {
    sim *s;
    pkt_pool *pool;
    port q;
    wire w;
    catcher c;
    route *rt;
} bed;

static const port_cfg base_cfg = {.rate_bps = GBPS(10), .buffer_bytes = 1 << 30, .nprio = 2,
                                  .ecn_k_bytes = 3000};

static void bed_init(bed *b)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    port_init(&b->q, b->s, b->pool, NULL, &base_cfg, "port0");
    wire_init(&b->w, b->s, US(1), "wire0");
    catcher_init(&b->c, b->s, b->pool, "sink");
    sink *hops[] = {&b->q.base, &b->w.base, &b->c.base};
    b->rt = route_create(hops, 3);
}

static void bed_fini(bed *b)
{
    assert_int_equal(pkt_pool_live(b->pool), 0);    /* no packet leaked */
    port_fini(&b->q);
    wire_fini(&b->w);
    free(b->rt);
    pkt_pool_destroy(b->pool);
    sim_destroy(b->s);
}

static void send(bed *b, uint32_t size, uint8_t kind, uint8_t prio, uint64_t seq)
{
    pkt *p = pkt_alloc(b->pool);
    p->size_bytes = size;
    p->kind = kind;
    p->prio = prio;
    p->flags = PKT_F_ECT;
    p->seq = seq;
    p->h.tcp.wnd_bytes = 1000000;
    p->sent_ps = sim_now(b->s);
    pkt_send(p, b->rt);
}

/* Sends packet i of a fixed mixed pattern (sizes, kinds, classes) at
 * time i x 500 ns. */
typedef struct pattern {
    bed *b;
    int n;
} pattern;

static void pattern_next(sim *s, void *obj, uint64_t i)
{
    pattern *pt = obj;
    send(pt->b, 200 + (uint32_t)(i * 397 % 1300), i % 3 ? PKT_DATA : PKT_ACK, (uint8_t)(i % 2), i);
    if ((int)i + 1 < pt->n)
        sim_schedule(s, sim_now(s) + NS(500), pattern_next, obj, i + 1);
}

static void run_pattern(bed *b, int n)
{
    static pattern pt;
    pt = (pattern){b, n};
    sim_schedule(b->s, 0, pattern_next, &pt, 0);
    sim_run(b->s, SIM_TIME_MAX);
}

/* Counts what it sees, changes nothing. */
static int count_fn(hook *h, port *q, pkt *p)
{
    (void)q;
    (void)p;
    (*(int *)h->ctx)++;
    return HOOK_PASS;
}

/* ---- chains --------------------------------------------------------------- */

/* A port whose chain was emptied again, and a port with a hook that only
 * looks, deliver the same packets at the same times with the same fields
 * (ECN marks included) as a port that never had a hook. */
static void test_hook_empty_chain_passes_packets_untouched(void **state)
{
    (void)state;
    enum { N = 300 };
    bed ref, emptied, looked;
    int seen = 0;
    hook h;
    hook_init(&h, count_fn, &seen, "count");

    bed_init(&ref);
    run_pattern(&ref, N);

    bed_init(&emptied);
    hook_attach(&emptied.q, &h);
    assert_non_null(emptied.q.hooks);
    hook_detach(&emptied.q, &h);
    assert_null(emptied.q.hooks);           /* back to the one-test fast path */
    run_pattern(&emptied, N);

    bed_init(&looked);
    hook_attach(&looked.q, &h);
    run_pattern(&looked, N);
    assert_int_equal(seen, N);

    assert_int_equal(ref.c.n, N);
    int marked = 0;
    for (bed *b = &emptied; b; b = b == &emptied ? &looked : NULL) {
        assert_int_equal(b->c.n, N);
        for (int i = 0; i < N; i++) {
            assert_int_equal(b->c.at[i], ref.c.at[i]);
            assert_int_equal(b->c.seq[i], ref.c.seq[i]);
            assert_int_equal(b->c.flags[i], ref.c.flags[i]);
            assert_int_equal(b->c.wnd[i], ref.c.wnd[i]);
        }
        assert_int_equal(b->q.stat_mark_pkts, ref.q.stat_mark_pkts);
        assert_int_equal(b->q.stat_drop_pkts, 0);
    }
    for (int i = 0; i < N; i++)
        marked += (ref.c.flags[i] & PKT_F_CE) != 0;
    assert_true(marked > 0);                /* the pattern does queue */
    hook_detach(&looked.q, &h);
    hook_fini(&h);
    bed_fini(&ref);
    bed_fini(&emptied);
    bed_fini(&looked);
}

/* SDTCP's use: a switch caps the advertised window of the ACKs it
 * forwards.  DATA packets keep theirs. */
static int cap_wnd_fn(hook *h, port *q, pkt *p)
{
    (void)q;
    uint32_t cap = *(uint32_t *)h->ctx;
    if (p->kind == PKT_ACK && p->h.tcp.wnd_bytes > cap)
        p->h.tcp.wnd_bytes = cap;
    return HOOK_PASS;
}

static void test_hook_rewrite_changes_wnd_in_acks_only(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    uint32_t cap = 20000;
    hook h;
    hook_init(&h, cap_wnd_fn, &cap, "cap");
    hook_attach(&b.q, &h);
    run_pattern(&b, 90);
    assert_int_equal(b.c.n, 90);
    int acks = 0;
    for (int i = 0; i < 90; i++) {
        assert_int_equal(b.c.kind[i], b.c.seq[i] % 3 ? PKT_DATA : PKT_ACK);
        if (b.c.kind[i] == PKT_ACK) {
            assert_int_equal(b.c.wnd[i], 20000);
            acks++;
        } else {
            assert_int_equal(b.c.wnd[i], 1000000);
        }
    }
    assert_int_equal(acks, 30);
    hook_detach(&b.q, &h);
    hook_fini(&h);
    bed_fini(&b);
}

/* ---- drops and delays on a topology ------------------------------------- */

typedef struct tbed {
    sim *s;
    pkt_pool *pool;
    topo *t;
    catcher rx[2], tx[2];
} tbed;

/* Dumbbell h0,h1 | h2,h3, 10 Gbps, 1 us; flow f: h(f) -> h(f+2). */
static void tbed_init(tbed *b)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    b->t = topo_create(b->s, b->pool, 1);
    link_cfg l = {.rate_bps = GBPS(10), .delay_ps = US(1)};
    l.port.buffer_bytes = 1 << 20;
    l.port.nprio = 1;
    err e = {0};
    assert_int_equal(topo_build_dumbbell(b->t, 2, 2, &l, &l, &e), 0);
    for (uint32_t f = 0; f < 2; f++) {
        catcher_init(&b->rx[f], b->s, b->pool, "rx");
        catcher_init(&b->tx[f], b->s, b->pool, "tx");
        topo_bind_flow(b->t, f, (int)f, &b->tx[f].base, (int)f + 2, &b->rx[f].base);
    }
}

static void tbed_fini(tbed *b)
{
    assert_int_equal(pkt_pool_live(b->pool), 0);
    topo_destroy(b->t);
    pkt_pool_destroy(b->pool);
    sim_destroy(b->s);
}

typedef struct burst {
    tbed *b;
    int left;
} burst;

/* Both flows send one 1000 B packet every 1 us. */
static void burst_next(sim *s, void *obj, uint64_t seq)
{
    burst *u = obj;
    for (uint32_t f = 0; f < 2; f++) {
        pkt *p = pkt_alloc(u->b->pool);
        p->size_bytes = 1000;
        p->flow_id = f;
        p->seq = seq;
        p->sent_ps = sim_now(s);
        pkt_send(p, topo_route_ecmp(u->b->t, (int)f, (int)f + 2, f));
    }
    if (--u->left > 0)
        sim_schedule(s, sim_now(s) + US(1), burst_next, obj, seq + 1);
}

static void assert_conserved(tbed *b)
{
    topo_bytes tb;
    topo_byte_counts(b->t, &tb);
    assert_true(tb.injected > 0);
    assert_int_equal(tb.injected, tb.delivered + tb.dropped + tb.in_network);
    assert_int_equal(pkt_pool_live(b->pool), topo_packets_in_network(b->t));
}

/* Drops every third packet it sees. */
static int third_fn(hook *h, port *q, pkt *p)
{
    int *n = h->ctx;
    if (++*n % 3)
        return HOOK_PASS;
    hook_drop(h, q, p);
    return HOOK_TAKEN;
}

static void test_hook_drop_counted_and_bytes_conserved(void **state)
{
    (void)state;
    tbed b;
    tbed_init(&b);
    int n = 0;
    hook h;
    hook_init(&h, third_fn, &n, "third");
    /* At every egress port of switch "left": towards h0, h1 and "right". */
    assert_int_equal(hook_attach_node(b.t, topo_find_node(b.t, "left"), &h), 3);
    burst u = {&b, 300};
    sim_schedule(b.s, 0, burst_next, &u, 0);
    sim_run(b.s, US(150));
    assert_true(topo_packets_in_network(b.t) > 0);
    assert_conserved(&b);                   /* mid-run */
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(n, 600);               /* both flows cross left->right */
    assert_int_equal(h.stat_drop_pkts, 200);
    assert_int_equal(h.stat_drop_bytes, 200000);
    assert_int_equal(b.rx[0].n + b.rx[1].n, 400);
    port *q = topo_link_port(b.t, 4, 0);    /* the bottleneck, left->right */
    assert_string_equal(q->base.name, "left->right");
    assert_int_equal(q->stat_hook_drops, 200);
    assert_int_equal(q->stat_drop_pkts, 200);
    assert_int_equal(q->stat_drop_bytes, 200000);
    assert_conserved(&b);
    topo_bytes tb;
    topo_byte_counts(b.t, &tb);
    assert_int_equal(tb.injected, 600000);
    assert_int_equal(tb.dropped, 200000);
    assert_int_equal(tb.delivered, 400000);
    assert_int_equal(hook_detach_node(b.t, topo_find_node(b.t, "left"), &h), 3);
    assert_null(q->hooks);
    hook_fini(&h);
    tbed_fini(&b);
}

/* Holds every packet for *ctx ps. */
static int delay_fn(hook *h, port *q, pkt *p)
{
    hook_delay(h, q, p, *(int64_t *)h->ctx);
    return HOOK_TAKEN;
}

/* A delay hook delays by exactly its delay, keeps the order, and held
 * packets count as in the network. */
static void test_hook_delay_is_exact(void **state)
{
    (void)state;
    tbed ref, b;
    tbed_init(&ref);
    tbed_init(&b);
    int64_t d = NS(7300);
    hook h;
    hook_init(&h, delay_fn, &d, "delay");
    hook_attach(topo_link_port(b.t, 4, 0), &h);     /* left->right */
    burst u1 = {&ref, 50}, u2 = {&b, 50};
    sim_schedule(ref.s, 0, burst_next, &u1, 0);
    sim_schedule(b.s, 0, burst_next, &u2, 0);
    sim_run(ref.s, SIM_TIME_MAX);
    sim_run(b.s, US(20));
    assert_true(topo_link_port(b.t, 4, 0)->hook_held_pkts > 0);
    assert_conserved(&b);
    sim_run(b.s, SIM_TIME_MAX);
    for (int f = 0; f < 2; f++) {
        assert_int_equal(b.rx[f].n, 50);
        for (int i = 0; i < 50; i++) {
            assert_int_equal(b.rx[f].seq[i], i);
            assert_int_equal(b.rx[f].at[i], ref.rx[f].at[i] + d);
        }
    }
    assert_int_equal(h.stat_delay_pkts, 100);
    assert_int_equal(topo_link_port(b.t, 4, 0)->hook_held_pkts, 0);
    assert_conserved(&b);
    hook_detach(topo_link_port(b.t, 4, 0), &h);
    hook_fini(&h);
    tbed_fini(&ref);
    tbed_fini(&b);
}

/* Behind a delay hook, the next hook sees each packet once, after the
 * delay: a re-injected packet resumes behind the hook that held it. */
typedef struct stamp {
    sim *s;
    int n;
    int64_t at[8];
} stamp;

static int stamp_fn(hook *h, port *q, pkt *p)
{
    (void)q;
    (void)p;
    stamp *st = h->ctx;
    st->at[st->n++] = sim_now(st->s);
    return HOOK_PASS;
}

static void test_hook_delayed_packet_resumes_behind_its_hook(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    int64_t d = US(3);
    stamp st = {.s = b.s};
    int seen = 0;
    hook first, hd, after;
    hook_init(&first, count_fn, &seen, "first");
    hook_init(&hd, delay_fn, &d, "delay");
    hook_init(&after, stamp_fn, &st, "after");
    hook_attach(&b.q, &first);
    hook_attach(&b.q, &hd);
    hook_attach(&b.q, &after);
    for (int i = 0; i < 4; i++)
        send(&b, 1000, PKT_DATA, 0, (uint64_t)i);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(seen, 4);              /* not run again at re-injection */
    assert_int_equal(hd.stat_delay_pkts, 4);/* delayed once each */
    assert_int_equal(st.n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(st.at[i], d);
    /* Serialised from 3 us, 800 ns each, then 1 us of wire. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(b.c.at[i], d + (i + 1) * NS(800) + US(1));
    hook_detach(&b.q, &first);
    hook_detach(&b.q, &hd);
    hook_detach(&b.q, &after);
    hook_fini(&first);
    hook_fini(&hd);
    hook_fini(&after);
    bed_fini(&b);
}

/* ---- watermarks ------------------------------------------------------------ */

typedef struct wm_log {
    sim *s;
    int n;
    int64_t at[32];
    bool above[32];
    int64_t level[32];
} wm_log;

static void wm_note(void *ctx, port *q, hook_wm *w, bool above)
{
    wm_log *l = ctx;
    assert_true(l->n < 32);
    l->at[l->n] = sim_now(l->s);
    l->above[l->n] = above;
    l->level[l->n] = w->cls < 0 ? q->bytes : q->cls[w->cls].bytes;
    l->n++;
}

typedef struct trickle {
    bed *b;
    int left;
    uint8_t prio;
} trickle;

/* One 1000 B packet every 800 ns: the port's service rate. */
static void trickle_next(sim *s, void *obj, uint64_t i)
{
    trickle *tr = obj;
    send(tr->b, 1000, PKT_DATA, tr->prio, i);
    if (--tr->left > 0)
        sim_schedule(s, sim_now(s) + NS(800), trickle_next, obj, i + 1);
}

static void burst_at(sim *s, void *obj, uint64_t n)
{
    (void)s;
    trickle *tr = obj;
    for (uint64_t i = 0; i < n; i++)
        send(tr->b, 1000, PKT_DATA, tr->prio, i);
}

/* 1000 B packets at 10 Gbps leave every 800 ns.  A burst of 10 at once:
 * one goes into service, 9 wait (9000 B); the queue passes 4500 B as the
 * 6th joins it (5000 B) and falls to 1500 B or below when the 9th starts
 * service (1000 B left), 8 x 800 ns later.  Then a queue held near 5000 B
 * by arrivals at the service rate crosses 4500 B both ways many times and
 * notifies nothing more until it drains. */
static void test_watermark_fires_once_per_crossing_with_hysteresis(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    wm_log l = {.s = b.s};
    hook_wm w;
    hook_wm_init(&w, -1, 4500, 1500, wm_note, &l);
    hook_wm_attach(&b.q, &w);
    trickle tr = {&b, 0, 0};
    sim_schedule(b.s, 0, burst_at, &tr, 10);
    sim_schedule(b.s, US(20), burst_at, &tr, 10);
    /* Third episode: 6 at once (5000 B queued), then one per service time. */
    sim_schedule(b.s, US(40), burst_at, &tr, 6);
    tr.left = 40;
    sim_schedule(b.s, US(40) + NS(400), trickle_next, &tr, 0);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 6);
    const int64_t at[6] = {0, NS(6400), US(20), US(20) + NS(6400), US(40), -1};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(l.above[i], i % 2 == 0);
        if (at[i] >= 0)
            assert_int_equal(l.at[i], at[i]);
        assert_true(l.above[i] ? l.level[i] > 4500 : l.level[i] <= 1500);
    }
    /* The trickle kept the queue between 5000 and 6000 B until it ended
     * at 40.4 us + 39 x 800 ns; the fall comes as it drains. */
    assert_true(l.at[5] > US(40) + NS(400) + 39 * NS(800));
    assert_int_equal(w.stat_rises, 3);
    assert_int_equal(w.stat_falls, 3);
    assert_int_equal(b.c.n, 66);
    hook_wm_detach(&b.q, &w);
    assert_null(b.q.wm);
    bed_fini(&b);
}

/* A class's watermark hears only its class; the port's hears the sum; a
 * failure that empties the queue notifies the fall. */
static void test_watermark_per_class_and_on_failure(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    wm_log l0 = {.s = b.s}, l1 = {.s = b.s}, la = {.s = b.s};
    hook_wm w0, w1, wa;
    hook_wm_init(&w0, 0, 4500, 1500, wm_note, &l0);
    hook_wm_init(&w1, 1, 4500, 1500, wm_note, &l1);
    hook_wm_init(&wa, -1, 6500, 0, wm_note, &la);
    hook_wm_attach(&b.q, &w0);
    hook_wm_attach(&b.q, &w1);
    hook_wm_attach(&b.q, &wa);
    trickle t0 = {&b, 0, 0}, t1 = {&b, 0, 1};
    burst_at(b.s, &t0, 5);                  /* class 0: 4000 B queued */
    burst_at(b.s, &t1, 3);                  /* class 1: 3000 B, port 7000 B */
    assert_int_equal(l0.n, 0);
    assert_int_equal(l1.n, 0);
    assert_int_equal(la.n, 1);
    assert_true(la.above[0]);
    burst_at(b.s, &t1, 3);                  /* class 1: 6000 B */
    assert_int_equal(l1.n, 1);
    assert_int_equal(l1.level[0], 5000);
    assert_int_equal(l0.n, 0);
    port_set_down(&b.q, 1);                 /* drains both classes */
    assert_int_equal(l1.n, 2);
    assert_false(l1.above[1]);
    assert_int_equal(la.n, 2);
    assert_false(la.above[1]);
    assert_int_equal(la.level[1], 0);       /* low 0: only when empty */
    assert_int_equal(l0.n, 0);
    sim_run(b.s, SIM_TIME_MAX);
    hook_wm_detach(&b.q, &w0);
    hook_wm_detach(&b.q, &w1);
    hook_wm_detach(&b.q, &wa);
    bed_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hook_empty_chain_passes_packets_untouched),
        cmocka_unit_test(test_hook_rewrite_changes_wnd_in_acks_only),
        cmocka_unit_test(test_hook_drop_counted_and_bytes_conserved),
        cmocka_unit_test(test_hook_delay_is_exact),
        cmocka_unit_test(test_hook_delayed_packet_resumes_behind_its_hook),
        cmocka_unit_test(test_watermark_fires_once_per_crossing_with_hysteresis),
        cmocka_unit_test(test_watermark_per_class_and_on_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
