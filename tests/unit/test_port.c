/*
 * test_port.c - packet plane elements: pool, port (serialisation, drop-tail,
 * ECN step marking, RED, strict priority), wire, routes; and an M/D/1 check
 * of a port against Pollaczek-Khinchine.
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
#include "aisim/port.h"
#include "aisim/stats.h"
#include "aisim/topo.h"
#include "aisim/units.h"

typedef struct catcher {
    sink base;
    pkt_pool *pool;
    sim *s;
    int n;
    int64_t at[256];
    uint64_t seq[256];
    uint16_t flags[256];
    stat_acc delay;         /* arrival - sent, seconds */
} catcher;

static void catch_recv(sink *self, pkt *p)
{
    catcher *c = (catcher *)self;
    if (c->n < 256) {
        c->at[c->n] = sim_now(c->s);
        c->seq[c->n] = p->seq;
        c->flags[c->n] = p->flags;
    }
    c->n++;
    stat_add(&c->delay, ps_to_s(sim_now(c->s) - p->sent_ps));
    pkt_free(c->pool, p);
}

typedef struct bed {
    sim *s;
    pkt_pool *pool;
    rng r;
    port q;
    wire w;
    catcher c;
    route *rt;
} bed;

static void bed_init(bed *b, const port_cfg *cfg, int64_t delay_ps)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    rng_init(&b->r, 1, "test.port", 0);
    port_init(&b->q, b->s, b->pool, &b->r, cfg, "port0");
    wire_init(&b->w, b->s, delay_ps, "wire0");
    b->c.base.recv = catch_recv;
    b->c.base.name = "sink";
    b->c.pool = b->pool;
    b->c.s = b->s;
    stat_init(&b->c.delay);
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

static void send_flow(bed *b, uint32_t flow, uint32_t size, uint64_t seq)
{
    pkt *p = pkt_alloc(b->pool);
    p->size_bytes = size;
    p->flow_id = flow;
    p->seq = seq;
    p->sent_ps = sim_now(b->s);
    pkt_send(p, b->rt);
}

static void send(bed *b, uint32_t size, uint8_t prio, uint16_t flags, uint64_t seq)
{
    pkt *p = pkt_alloc(b->pool);
    p->size_bytes = size;
    p->prio = prio;
    p->flags = flags;
    p->seq = seq;
    p->sent_ps = sim_now(b->s);
    pkt_send(p, b->rt);
}

static const port_cfg base_cfg = {.rate_bps = 10000000000, .buffer_bytes = 1 << 30, .nprio = 1};

/* Serialisation is exact at any rate: one multiplication where the rate
 * divides 8e12 (port.h, ps_per_byte), the rounded-up division elsewhere;
 * back-to-back packets leave one transmission time apart. */
static void test_port_serialisation_exact_at_any_rate(void **state)
{
    (void)state;
    static const int64_t rates[] = {INT64_C(100000000000), INT64_C(400000000000),
                                    INT64_C(7000000000), INT64_C(3333333333), 1000};
    static const uint32_t sizes[] = {1500, 9000, 64, 1};
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
            port_cfg cfg = base_cfg;
            cfg.rate_bps = rates[i];
            bed b;
            bed_init(&b, &cfg, 0);
            send(&b, sizes[j], 0, 0, 0);
            send(&b, sizes[j], 0, 0, 1);
            sim_run(b.s, SIM_TIME_MAX);
            assert_int_equal(b.c.n, 2);
            int64_t tx = units_tx_time_ps(sizes[j], rates[i]);
            assert_int_equal(b.c.at[0], tx);
            assert_int_equal(b.c.at[1], 2 * tx);
            bed_fini(&b);
        }
    /* The two paths: 7 Gbps does not divide 8e12, 100 Gbps does (80 ps). */
    assert_int_equal(units_tx_time_ps(1500, INT64_C(7000000000)), 1714286);
    assert_int_equal(units_tx_time_ps(1500, INT64_C(100000000000)), 120000);
}

static void test_port_serialises_at_line_rate_then_wire_delay(void **state)
{
    (void)state;
    bed b;
    bed_init(&b, &base_cfg, US(1));
    for (int i = 0; i < 10; i++)
        send(&b, 1500, 0, 0, (uint64_t)i);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 10);
    for (int i = 0; i < 10; i++) {
        /* 1500 B at 10 Gbps = 1.2 us each, then 1 us on the wire. */
        assert_int_equal(b.c.at[i], (i + 1) * NS(1200) + US(1));
        assert_int_equal(b.c.seq[i], i);
    }
    assert_int_equal(b.q.stat_tx_bytes, 15000);
    assert_int_equal(b.q.stat_busy_ps, NS(12000));
    assert_int_equal(b.w.stat_pkts, 10);
    bed_fini(&b);
}

static void test_port_drop_tail_counts_and_conserves(void **state)
{
    (void)state;
    port_cfg cfg = base_cfg;
    cfg.buffer_bytes = 4500;
    bed b;
    bed_init(&b, &cfg, US(1));
    for (int i = 0; i < 10; i++)
        send(&b, 1500, 0, 0, (uint64_t)i);
    /* One in service, three waiting: the rest dropped. */
    assert_int_equal(b.q.stat_drop_pkts, 6);
    assert_int_equal(b.q.stat_drop_bytes, 9000);
    assert_int_equal(pkt_pool_live(b.pool), 4);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 4);
    assert_int_equal(b.q.stat_rx_pkts, b.q.stat_tx_pkts + b.q.stat_drop_pkts);
    assert_int_equal(b.q.stat_max_bytes, 4500);
    bed_fini(&b);
}

static void test_port_ecn_step_marks_above_k(void **state)
{
    (void)state;
    port_cfg cfg = base_cfg;
    cfg.ecn_k_bytes = 3000;
    bed b;
    bed_init(&b, &cfg, 0);
    for (int i = 0; i < 10; i++)
        send(&b, 1500, 0, PKT_F_ECT, (uint64_t)i);
    send(&b, 1500, 0, 0, 10);               /* not ECN-capable: neither marked nor dropped */
    sim_run(b.s, SIM_TIME_MAX);
    /* Packet k meets (k-1)*1500 queued bytes (packet 0 is in service):
     * marked when that exceeds 3000, i.e. k >= 4. */
    for (int i = 0; i < 10; i++)
        assert_int_equal(!!(b.c.flags[i] & PKT_F_CE), i >= 4);
    assert_int_equal(b.c.n, 11);
    assert_int_equal(b.c.flags[10], 0);
    assert_int_equal(b.q.stat_mark_pkts, 6);
    assert_int_equal(b.q.stat_drop_pkts, 0);
    bed_fini(&b);
}

/* RED from min to max bytes, on the instantaneous queue (weight 1). */
static port_cfg red_cfg(int64_t min, int64_t max, double max_p)
{
    port_cfg cfg = base_cfg;
    cfg.red_min_bytes = min;
    cfg.red_max_bytes = max;
    cfg.red_max_p = max_p;
    cfg.red_weight = 1.0;
    return cfg;
}

static void test_port_red_drops_non_ect_and_marks_ect(void **state)
{
    (void)state;
    port_cfg cfg = red_cfg(1500, 2000, 0.1);   /* instantaneous: deterministic */
    bed b;
    bed_init(&b, &cfg, 0);
    for (int i = 0; i < 6; i++)
        send(&b, 1500, 0, i % 2 ? PKT_F_ECT : 0, (uint64_t)i);
    /* Queue met by packet k: 0 (k=0 goes into service), 0, 1500 (at min:
     * probability 0), 3000, 4500, 4500.  At or above max every arrival is
     * marked if ECN-capable (odd k: 3, 5) or dropped (k = 4). */
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.q.stat_mark_pkts, 2);
    assert_int_equal(b.q.stat_drop_pkts, 1);
    assert_int_equal(b.c.n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(!!(b.c.flags[i] & PKT_F_CE), b.c.seq[i] == 3 || b.c.seq[i] == 5);
    bed_fini(&b);
}

/* RED on the instantaneous queue (weight 1) between min and max: 100
 * ECN-capable packets of 1000 B at once, packet k meeting (k-1) x 1000 B;
 * from 2000 B on each arrival draws once and is marked with probability
 * (q - 2000) / 98000.  Replaying the same stream by hand gives the same
 * marks packet by packet: below min nothing is drawn (the fast path),
 * at min and above exactly one draw per arrival. */
static void test_port_red_instantaneous_marks_as_drawn(void **state)
{
    (void)state;
    port_cfg cfg = red_cfg(2000, 100000, 1);
    bed b;
    bed_init(&b, &cfg, 0);
    for (int i = 0; i < 100; i++)
        send(&b, 1000, 0, PKT_F_ECT, (uint64_t)i);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 100);
    rng r;
    rng_init(&r, 1, "test.port", 0);            /* bed_init's stream */
    int marks = 0;
    for (int k = 0; k < 100; k++) {
        double q = k > 0 ? (k - 1) * 1000.0 : 0;
        int m = q >= 2000 && rng_u01(&r) < (q - 2000) / 98000;
        assert_int_equal(!!(b.c.flags[k] & PKT_F_CE), m);
        marks += m;
    }
    assert_int_equal(b.q.stat_mark_pkts, marks);
    assert_true(marks > 30 && marks < 70);      /* about half of 97 draws */
    bed_fini(&b);
}

/* Marking at dequeue (port_set_mark_dequeue), as the HPCC ns-3 fork's
 * switches mark: a burst of 21 packets of 1000 B arrives at once, 20
 * ECN-capable and a last one not; packet k meets (k-1) x 1000 B queued
 * ahead (packet 0 goes into service at once) and, when it leaves, leaves
 * (20-k) x 1000 B behind (packet 0: nothing; the others had not arrived).
 * Threshold 4500 B, marked above it: at enqueue the tail, packets 6..19
 * (14); at dequeue the head, 1..15 (15), the ones the fork marks (egress
 * bytes > Kmax after the dequeue, switch-mmu.cc ShouldSendCN).  Also with RED (instantaneous queue, Kmin
 * 4500 B, Kmax 4600 B: no queue length of the burst falls between them, so
 * the draw never decides), and a packet that is not ECN-capable is neither
 * marked nor dropped at dequeue. */
static void burst_marks(const port_cfg *cfg, int at_dequeue, int *first, int *last, int *n)
{
    bed b;
    bed_init(&b, cfg, 0);
    if (at_dequeue) {
        port_set_mark_dequeue(&b.q);
        assert_true(port_marks_ecn(&b.q));
        assert_int_equal(b.q.cfg.ecn_k_bytes + b.q.cfg.red_min_bytes, 0);
    }
    for (int i = 0; i < 20; i++)
        send(&b, 1000, 0, PKT_F_ECT, (uint64_t)i);
    send(&b, 1000, 0, 0, 20);                  /* not ECN-capable, last */
    sim_run(b.s, SIM_TIME_MAX);
    /* RED at enqueue drops it (19000 B ahead, above Kmax); at dequeue it
     * is left to drop-tail */
    int dropped = !at_dequeue && cfg->red_min_bytes > 0;
    assert_int_equal(b.c.n, 21 - dropped);
    assert_int_equal(b.q.stat_drop_pkts, dropped);
    if (!dropped)
        assert_int_equal(b.c.flags[20], 0);
    *first = *last = -1;
    *n = 0;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(b.c.seq[i], i);
        if (b.c.flags[i] & PKT_F_CE) {
            if (*first < 0)
                *first = i;
            *last = i;
            ++*n;
        }
    }
    assert_int_equal((uint64_t)*n, b.q.stat_mark_pkts);
    bed_fini(&b);
}

static void test_port_marks_at_dequeue_on_the_queue_left_behind(void **state)
{
    (void)state;
    int first, last, n;
    port_cfg step = base_cfg;
    step.ecn_k_bytes = 4500;
    burst_marks(&step, 0, &first, &last, &n);
    assert_int_equal(first, 6);
    assert_int_equal(last, 19);
    assert_int_equal(n, 14);
    burst_marks(&step, 1, &first, &last, &n);
    assert_int_equal(first, 1);
    assert_int_equal(last, 15);
    assert_int_equal(n, 15);
    port_cfg red = red_cfg(4500, 4600, 0.5);
    burst_marks(&red, 0, &first, &last, &n);
    assert_int_equal(first, 6);
    assert_int_equal(last, 19);
    assert_int_equal(n, 14);
    burst_marks(&red, 1, &first, &last, &n);
    assert_int_equal(first, 1);
    assert_int_equal(last, 15);
    assert_int_equal(n, 15);
}

static void test_port_strict_priority_overtakes(void **state)
{
    (void)state;
    port_cfg cfg = base_cfg;
    cfg.nprio = 2;
    bed b;
    bed_init(&b, &cfg, 0);
    for (int i = 0; i < 5; i++)
        send(&b, 1500, 1, 0, (uint64_t)i);         /* low priority */
    send(&b, 64, 0, 0, 100);                        /* high priority */
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 6);
    assert_int_equal(b.c.seq[0], 0);               /* was in service already */
    assert_int_equal(b.c.seq[1], 100);             /* next, ahead of 1..4 */
    assert_int_equal(b.c.seq[2], 1);
    bed_fini(&b);
}

static void test_port_failure_drops_queue_wire_and_arrivals(void **state)
{
    (void)state;
    bed b;
    bed_init(&b, &base_cfg, US(10));
    for (int i = 0; i < 5; i++)
        send(&b, 1500, 0, 0, (uint64_t)i);
    sim_run(b.s, NS(3000));         /* two serialised (on the wire), one in service */
    assert_int_equal(b.w.len, 2);
    port_set_down(&b.q, 1);         /* in service + 2 queued lost */
    assert_int_equal(wire_drop_all(&b.w, b.pool), 2);
    assert_int_equal(b.q.stat_fail_drops, 3);
    send(&b, 1500, 0, 0, 9);        /* arrives at a dead port */
    assert_int_equal(b.q.stat_fail_drops, 4);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 0);
    port_set_down(&b.q, 0);         /* repaired: carries traffic again */
    send(&b, 1500, 0, 0, 10);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 1);
    assert_int_equal(b.c.seq[0], 10);
    bed_fini(&b);
}

/* A round-robin NIC: flow 1 queues 10 packets, then flow 2 queues 10: FIFO
 * would send all of flow 1 first; round robin alternates once both wait
 * (flow 1's first packet is already on the wire when flow 2 arrives). */
static void test_port_flow_round_robin_alternates(void **state)
{
    (void)state;
    bed b;
    bed_init(&b, &base_cfg, US(1));
    port_set_flow_rr(&b.q);
    for (int i = 0; i < 10; i++)
        send_flow(&b, 1, 1500, 100 + (uint64_t)i);
    for (int i = 0; i < 10; i++)
        send_flow(&b, 2, 1500, 200 + (uint64_t)i);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 20);
    static const uint64_t want[20] = {100, 101, 200, 102, 201, 103, 202, 104, 203, 105,
                                      204, 106, 205, 107, 206, 108, 207, 109, 208, 209};
    for (int i = 0; i < 20; i++) {
        assert_int_equal(b.c.seq[i], want[i]);
        assert_int_equal(b.c.at[i], (i + 1) * NS(1200) + US(1));   /* still line rate */
    }
    bed_fini(&b);
}

/* 100 flows (past the table's first size) of two packets each: round robin
 * over all 100 flows.  Then 40 packets of 20 flows meet a link failure:
 * the one on the wire and every flow's queue are dropped. */
static void test_port_flow_round_robin_many_flows_and_failure(void **state)
{
    (void)state;
    bed b;
    bed_init(&b, &base_cfg, US(1));
    port_set_flow_rr(&b.q);
    for (uint32_t f = 0; f < 100; f++)
        for (int i = 0; i < 2; i++)
            send_flow(&b, 1000 + f * 7919, 1000, f * 2 + (uint64_t)i);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 200);
    /* flow 0's first packet, flow 0's second (its queue rang first), then
     * every other flow's first packet, then their second ones. */
    assert_int_equal(b.c.seq[0], 0);
    assert_int_equal(b.c.seq[1], 1);
    for (int f = 1; f < 100; f++) {
        assert_int_equal(b.c.seq[1 + f], (uint64_t)f * 2);
        assert_int_equal(b.c.seq[100 + f], (uint64_t)f * 2 + 1);
    }
    for (uint32_t f = 0; f < 20; f++)
        for (int i = 0; i < 2; i++)
            send_flow(&b, f, 1000, 0);
    port_set_down(&b.q, 1);
    assert_int_equal(b.q.stat_fail_drops, 40);
    assert_int_equal(b.q.npkts, 0);
    bed_fini(&b);
}

/* The ingress bytes of link 0 seen when its XOFF flag fell (a resume
 * sent), smallest and largest over the last incast_pair run with PFC. */
static int64_t resume_min, resume_max;

/* Two senders at 10 Gbps into one 10 Gbps switch port with a 64 KB buffer:
 * without PFC the port overflows; with PFC on both links (XOFF 20 KB, XON
 * 10 KB) the senders' NICs are paused and nothing is lost.  The run is
 * stepped every 50 ns to watch link 0's resumes (resume_min / max): a
 * dequeue every 1.2 us, and no arrival over a paused link. */
static void incast_pair(int pfc, shbuf *sb, uint64_t *drops, uint64_t *delivered, uint64_t *pauses,
                        int64_t *qmax)
{
    sim *s = sim_create();
    pkt_pool *pool = pkt_pool_create();
    port_cfg nic = {.rate_bps = 10000000000, .buffer_bytes = INT64_C(1) << 40, .nprio = 1};
    if (pfc) {
        nic.pfc_xoff_bytes = 20000;
        nic.pfc_xon_bytes = 10000;
    }
    port_cfg sw = {.rate_bps = 10000000000, .buffer_bytes = 64000, .nprio = 1};
    port n[2], q;
    wire w[2], wq;
    catcher c = {.base = {.recv = catch_recv, .name = "sink"}, .pool = pool, .s = s};
    stat_init(&c.delay);
    port_init(&q, s, pool, NULL, &sw, "sw->sink");
    q.pfc_in = pfc;                 /* what topo_finish sets for PFC links */
    q.sb = sb;
    wire_init(&wq, s, US(1), "wq");
    route *rt[2];
    for (int i = 0; i < 2; i++) {
        port_init(&n[i], s, pool, NULL, &nic, "nic");
        wire_init(&w[i], s, US(1), "w");
        wire_set_src(&w[i], &n[i]);    /* what topo_add_link sets */
        sink *hops[] = {&n[i].base, &w[i].base, &q.base, &wq.base, &c.base};
        rt[i] = route_create(hops, 5);
        for (int k = 0; k < 200; k++) {
            pkt *p = pkt_alloc(pool);
            p->size_bytes = 1500;
            pkt_send(p, rt[i]);
        }
    }
    resume_min = INT64_MAX, resume_max = INT64_MIN;
    for (int64_t t = 50000, was = 0; pfc && sim_pending(s); t += 50000) {
        sim_run(s, t);
        if (was && !w[0].pfc_xoff[0]) {
            resume_min = w[0].pfc_bytes[0] < resume_min ? w[0].pfc_bytes[0] : resume_min;
            resume_max = w[0].pfc_bytes[0] > resume_max ? w[0].pfc_bytes[0] : resume_max;
        }
        was = w[0].pfc_xoff[0];
    }
    sim_run(s, SIM_TIME_MAX);
    *drops = q.stat_drop_pkts;
    *delivered = (uint64_t)c.n;
    *pauses = n[0].stat_pfc_pauses + n[1].stat_pfc_pauses;
    *qmax = q.stat_max_bytes;
    assert_int_equal(w[0].pfc_bytes[0] + w[1].pfc_bytes[0], 0);    /* all accounted back */
    assert_int_equal(pkt_pool_live(pool), 0);
    for (int i = 0; i < 2; i++) {
        wire_fini(&w[i]);
        free(rt[i]);
    }
    wire_fini(&wq);
    pkt_pool_destroy(pool);
    sim_destroy(s);
}

static void test_port_pfc_makes_the_switch_lossless(void **state)
{
    (void)state;
    uint64_t drops, got, pauses;
    int64_t qmax;
    incast_pair(0, NULL, &drops, &got, &pauses, &qmax);
    assert_true(drops > 100);
    assert_int_equal(got + drops, 400);
    assert_int_equal(pauses, 0);
    incast_pair(1, NULL, &drops, &got, &pauses, &qmax);
    assert_int_equal(drops, 0);
    assert_int_equal(got, 400);
    assert_true(pauses > 0);
    /* each resume is sent by the dequeue that takes the link's bytes to
     * XON (10 KB) or below: one 1500-B packet under it at most */
    assert_true(resume_min != INT64_MAX);
    assert_true(resume_min > 10000 - 1500 && resume_max <= 10000);
    /* XOFF 20 KB per link plus what arrives while the pause travels back
     * (1 us each way, one packet in service): well inside 64 KB. */
    assert_true(qmax <= 2 * (20000 + 3 * 1500 + 2500));
}

/* host -> S1 -> S2 -> sink, with S2's port at 1 Gbps: S2 pauses S1's port,
 * whose queue then grows and pauses the host's NIC: hop by hop. */
static void test_port_pfc_pauses_propagate_hop_by_hop(void **state)
{
    (void)state;
    sim *s = sim_create();
    pkt_pool *pool = pkt_pool_create();
    port_cfg fast = {.rate_bps = 10000000000, .buffer_bytes = 64000, .nprio = 1,
                     .pfc_xoff_bytes = 20000, .pfc_xon_bytes = 10000};
    port_cfg host = fast;
    host.buffer_bytes = INT64_C(1) << 40;
    port_cfg slow = {.rate_bps = 1000000000, .buffer_bytes = 64000, .nprio = 1};
    port nic, p1, p2;
    wire w0, w1, w2;
    catcher c = {.base = {.recv = catch_recv, .name = "sink"}, .pool = pool, .s = s};
    stat_init(&c.delay);
    port_init(&nic, s, pool, NULL, &host, "h->s1");
    port_init(&p1, s, pool, NULL, &fast, "s1->s2");
    port_init(&p2, s, pool, NULL, &slow, "s2->sink");
    p1.pfc_in = p2.pfc_in = 1;      /* what topo_finish sets for PFC links */
    wire_init(&w0, s, US(1), "w0");
    wire_init(&w1, s, US(1), "w1");
    wire_init(&w2, s, US(1), "w2");
    wire_set_src(&w0, &nic);      /* what topo_add_link sets */
    wire_set_src(&w1, &p1);
    wire_set_src(&w2, &p2);
    sink *hops[] = {&nic.base, &w0.base, &p1.base, &w1.base, &p2.base, &w2.base, &c.base};
    route *rt = route_create(hops, 7);
    for (int k = 0; k < 300; k++) {
        pkt *p = pkt_alloc(pool);
        p->size_bytes = 1500;
        pkt_send(p, rt);
    }
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(c.n, 300);
    assert_int_equal(p1.stat_drop_pkts + p2.stat_drop_pkts, 0);
    assert_true(p1.stat_pfc_pauses > 0);        /* paused by S2 */
    assert_true(nic.stat_pfc_pauses > 0);       /* and in turn the host */
    assert_true(p1.stat_max_bytes > 20000);     /* S1 held traffic */
    /* The slow port set the pace: 300 packets at 1 Gbps. */
    assert_true(c.at[255] >= 256 * US(12));
    assert_int_equal(pkt_pool_live(pool), 0);
    wire_fini(&w0);
    wire_fini(&w1);
    wire_fini(&w2);
    free(rt);
    pkt_pool_destroy(pool);
    sim_destroy(s);
}

/* Poisson arrivals of fixed-size packets: an M/D/1 queue. */
typedef struct gen {
    bed *b;
    rng r;
    int64_t mean_gap_ps;
    int left;
} gen;

/* Dynamic thresholds (Choudhury & Hahne): n ports of one switch share a
 * pool of B bytes; a burst of 1500 B packets, interleaved across the n
 * ports, arrives at once.  Each queue stops at the largest q with
 * q + 1500 <= alpha (B - used), used counting every queue (not the packet
 * each port has in service, which has left the buffer: port.h): the fixed
 * point alpha/(1 + n alpha) B of the analysis, within a packet.
 * Everything refused is a threshold drop. */
static void shared_burst(int n, double alpha, int64_t B)
{
    sim *s = sim_create();
    pkt_pool *pool = pkt_pool_create();
    shbuf sb = {.size_bytes = B, .alpha = alpha};
    port_cfg cfg = {.rate_bps = 1000000000, .buffer_bytes = INT64_C(1) << 40, .nprio = 1};
    port q[4];
    wire w[4];
    route *rt[4];
    catcher c = {.base = {.recv = catch_recv, .name = "sink"}, .pool = pool, .s = s};
    stat_init(&c.delay);
    for (int i = 0; i < n; i++) {
        port_init(&q[i], s, pool, NULL, &cfg, "sw->x");
        q[i].sb = &sb;
        wire_init(&w[i], s, US(1), "w");
        sink *hops[] = {&q[i].base, &w[i].base, &c.base};
        rt[i] = route_create(hops, 3);
    }
    int sent = 0;
    for (int k = 0; k < 400; k++)
        for (int i = 0; i < n; i++) {
            pkt *p = pkt_alloc(pool);
            p->size_bytes = 1500;
            pkt_send(p, rt[i]);
            sent++;
        }
    /* The fixed point: n queues of q bytes. */
    double qstar = alpha * (double)B / (1 + n * alpha);
    uint64_t dropped = 0;
    int64_t queued = 0;
    for (int i = 0; i < n; i++) {
        queued += q[i].bytes;
        assert_true(q[i].tx != NULL);
        assert_true(fabs((double)q[i].bytes - qstar) <= 1500 * (1 + alpha));
        /* admitted with q + 1500 <= alpha (B - n q_before): at most a
         * packet past the fixed point */
        assert_true((double)q[i].bytes <= alpha * (double)B / (1 + n * alpha) + 1500);
        dropped += q[i].stat_drop_pkts;
    }
    assert_int_equal(sb.used_bytes, queued);
    assert_true(sb.used_bytes <= B);
    assert_int_equal(sb.stat_dt_drops, dropped);
    assert_int_equal(sb.stat_full_drops, 0);
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal((uint64_t)c.n + dropped, (uint64_t)sent);
    assert_int_equal(sb.used_bytes, 0);             /* every byte given back */
    assert_int_equal(pkt_pool_live(pool), 0);
    for (int i = 0; i < n; i++) {
        wire_fini(&w[i]);
        free(rt[i]);
    }
    pkt_pool_destroy(pool);
    sim_destroy(s);
}

static void test_port_shared_buffer_dynamic_thresholds(void **state)
{
    (void)state;
    const double alphas[] = {0.5, 1, 2, 8};
    for (int a = 0; a < 4; a++)
        for (int n = 1; n <= 4; n++)
            shared_burst(n, alphas[a], 1500 * 200);
}

/* A shared buffer whose threshold drops lossy traffic does not drop
 * lossless traffic: with PFC, the pause (not the threshold) bounds it. */
static void test_port_shared_buffer_leaves_pfc_traffic_to_pfc(void **state)
{
    (void)state;
    uint64_t drops, got, pauses;
    int64_t qmax;
    shbuf sb = {.size_bytes = 64000, .alpha = 0.125};
    incast_pair(0, &sb, &drops, &got, &pauses, &qmax);
    /* alpha/(1+alpha) of 64 KB is 7.1 KB: 4 packets queued at most. */
    assert_true(qmax <= 7112);
    assert_int_equal(sb.stat_dt_drops, drops);
    /* Two packets arrive per one sent: half of the 400 are lost, less the
     * few the threshold lets wait. */
    assert_in_range(drops, 190, 200);
    assert_int_equal(got + drops, 400);
    memset(&sb, 0, sizeof sb);
    sb.size_bytes = 64000;
    sb.alpha = 0.125;
    incast_pair(1, &sb, &drops, &got, &pauses, &qmax);
    assert_int_equal(drops, 0);
    assert_int_equal(got, 400);
    assert_true(pauses > 0);
    assert_true(qmax > 7112);                       /* past the lossy threshold */
    assert_true(sb.stat_max_used <= 64000);
    assert_int_equal(sb.used_bytes, 0);
}

/* PFC's XOFF made dynamic (pfc_alpha): with pfc_alpha 0.125 of a 64 KB pool
 * the threshold is at most 8 KB per link instead of the static 20 KB, so
 * the senders are paused sooner and more often and the switch holds less;
 * still nothing is lost. */
static void test_port_pfc_dynamic_threshold_pauses_sooner(void **state)
{
    (void)state;
    uint64_t drops, got, pauses_s, pauses_d;
    int64_t qmax_s, qmax_d;
    shbuf sb = {.size_bytes = 64000, .alpha = 1};
    incast_pair(1, &sb, &drops, &got, &pauses_s, &qmax_s);
    assert_int_equal(drops, 0);
    shbuf sd = {.size_bytes = 64000, .alpha = 1, .pfc_alpha = 0.125};
    incast_pair(1, &sd, &drops, &got, &pauses_d, &qmax_d);
    assert_int_equal(drops, 0);
    assert_int_equal(got, 400);
    assert_int_equal(sd.used_bytes, 0);
    /* Each link: XOFF at <= 8 KB plus what arrives while the pause travels
     * (as in test_port_pfc_makes_the_switch_lossless). */
    printf("  static: switch holds at most %lld B, %llu pauses; pfc_alpha 0.125: %lld B, %llu\n",
           (long long)qmax_s, (unsigned long long)pauses_s, (long long)qmax_d,
           (unsigned long long)pauses_d);
    if (!(qmax_d <= 2 * (8000 + 3 * 1500 + 2500) && qmax_d < qmax_s && pauses_d > pauses_s))
        fail_msg("static: queue %lld, %llu pauses; dynamic: %lld, %llu", (long long)qmax_s,
                 (unsigned long long)pauses_s, (long long)qmax_d, (unsigned long long)pauses_d);
}

static void gen_fire(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    gen *g = obj;
    send(g->b, 1500, 0, 0, 0);
    if (--g->left > 0)
        sim_schedule(s, sim_now(s) + (int64_t)llround(rng_exponential(&g->r, (double)g->mean_gap_ps)),
                     gen_fire, g, 0);
}

static void test_port_md1_delay_matches_pollaczek_khinchine(void **state)
{
    (void)state;
    bed b;
    bed_init(&b, &base_cfg, US(1));
    gen g = {.b = &b, .mean_gap_ps = NS(1500), .left = 1000000};
    rng_init(&g.r, 1, "test.port.arrivals", 0);
    sim_schedule(b.s, 0, gen_fire, &g, 0);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 1000000);
    /* rho = 1.2/1.5 = 0.8; Wq = rho * S / (2 (1 - rho)) = 2.4 us; delay =
     * Wq + S + wire = 2.4 + 1.2 + 1 = 4.6 us. */
    double want = 4.6e-6;
    if (fabs(b.c.delay.mean - want) > 0.02 * want)
        fail_msg("mean delay %.4g us, M/D/1 predicts %.4g us", b.c.delay.mean * 1e6, want * 1e6);
    assert_int_equal(b.c.delay.min * 1e12 + 0.5, 2200000);  /* S + wire, to the ps */
    bed_fini(&b);
}

/* ECN marks per queue: class 1 holds 13.5 KB, far above K = 3000 B, while
 * class 0's queue stays short: class 0 is not marked (the DCTCP step) and
 * neither marked nor dropped (RED), because its own queue is short. */
static void test_port_ecn_marks_per_class(void **state)
{
    (void)state;
    port_cfg cfg = base_cfg;
    cfg.nprio = 2;
    cfg.ecn_k_bytes = 3000;
    bed b;
    bed_init(&b, &cfg, 0);
    for (int i = 0; i < 10; i++)
        send(&b, 1500, 1, PKT_F_ECT, (uint64_t)i);     /* 0 in service, 9 waiting */
    for (int i = 0; i < 3; i++)
        send(&b, 1500, 0, PKT_F_ECT, 100 + (uint64_t)i);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.c.n, 13);
    for (int i = 0; i < 13; i++) {
        uint64_t q = b.c.seq[i];
        /* class 1's packet k met (k-1) x 1500 B of class 1: marked from
         * k = 4; class 0's met at most 3000 B of class 0 */
        assert_int_equal(!!(b.c.flags[i] & PKT_F_CE), q < 100 && q >= 4);
    }
    assert_int_equal(b.q.stat_mark_pkts, 6);
    bed_fini(&b);

    cfg.ecn_k_bytes = 0;
    cfg.red_min_bytes = 1500;
    cfg.red_max_bytes = 2000;
    cfg.red_max_p = 0.1;
    cfg.red_weight = 1.0;           /* average = instantaneous */
    bed_init(&b, &cfg, 0);
    for (int i = 0; i < 10; i++)
        send(&b, 1500, 1, PKT_F_ECT, (uint64_t)i);
    uint64_t marks = b.q.stat_mark_pkts;
    send(&b, 1500, 0, 0, 100);                      /* not ECN-capable */
    send(&b, 1500, 0, PKT_F_ECT, 101);
    assert_int_equal(b.q.stat_drop_pkts, 0);
    assert_int_equal(b.q.stat_mark_pkts, marks);
    sim_run(b.s, SIM_TIME_MAX);
    for (int i = 0; i < b.c.n; i++)
        if (b.c.seq[i] >= 100)
            assert_int_equal(b.c.flags[i] & PKT_F_CE, 0);
    bed_fini(&b);
}

/* The port's own buffer and the shared pool count the same bytes: those
 * waiting, not the packet being serialised (port.h).  A 4500 B port buffer
 * takes one packet into service and three more; the pool then holds 4500 B
 * too, and a pool of exactly 4500 B admits the same packets. */
static void test_port_buffer_and_shared_pool_count_the_same_bytes(void **state)
{
    (void)state;
    for (int tight = 0; tight < 2; tight++) {
        port_cfg cfg = base_cfg;
        cfg.buffer_bytes = 4500;
        shbuf sb = {.size_bytes = tight ? 4500 : 1 << 20, .alpha = 1e9};
        bed b;
        bed_init(&b, &cfg, US(1));
        b.q.sb = &sb;
        for (int i = 0; i < 10; i++)
            send(&b, 1500, 0, 0, (uint64_t)i);
        assert_int_equal(b.q.bytes, 4500);
        assert_int_equal(sb.used_bytes, b.q.bytes);
        assert_int_equal(b.q.stat_drop_pkts, 6);
        assert_int_equal(sb.stat_full_drops, 0);   /* the port's cap refused first */
        sim_run(b.s, NS(1300));             /* the second packet in service */
        assert_int_equal(sb.used_bytes, b.q.bytes);
        assert_int_equal(b.q.bytes, 3000);
        sim_run(b.s, SIM_TIME_MAX);
        assert_int_equal(b.c.n, 4);
        assert_int_equal(sb.used_bytes, 0);
        bed_fini(&b);
    }
}

static void send_burst(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    route *rt = obj;
    pkt_pool *pool = ((catcher *)(void *)rt->hop[rt->len - 1])->pool;
    for (int i = 0; i < 200; i++) {
        pkt *p = pkt_alloc(pool);
        p->size_bytes = 1500;
        p->prio = (uint8_t)arg;
        p->seq = (uint64_t)i;
        pkt_send(p, rt);
    }
}

/* PFC pauses a class, not the port, and counts each class apart: a host
 * NIC sends 200 packets of class 1 to a 1 Gbps switch port at 0, then 200
 * of class 0 to a 10 Gbps one at 100 us, over the same link.  Class 1
 * backs up in the switch and is paused at the NIC (not class 0: counting
 * it there would leave class 1 running into a full buffer); class 0 flows
 * at the line rate meanwhile instead of waiting for class 1 to drain. */
static void test_port_pfc_pauses_only_the_congested_class(void **state)
{
    (void)state;
    sim *s = sim_create();
    pkt_pool *pool = pkt_pool_create();
    port_cfg host = {.rate_bps = 10000000000, .buffer_bytes = INT64_C(1) << 40, .nprio = 2,
                     .pfc_xoff_bytes = 20000, .pfc_xon_bytes = 10000};
    port_cfg slow = {.rate_bps = 1000000000, .buffer_bytes = 64000, .nprio = 2};
    port_cfg fast = slow;
    fast.rate_bps = 10000000000;
    port nic, ps, pf;
    wire w0, ws, wf;
    catcher c[2];
    for (int k = 0; k < 2; k++) {
        memset(&c[k], 0, sizeof c[k]);
        c[k].base.recv = catch_recv;
        c[k].base.name = "sink";
        c[k].pool = pool;
        c[k].s = s;
        stat_init(&c[k].delay);
    }
    port_init(&nic, s, pool, NULL, &host, "h->sw");
    port_init(&ps, s, pool, NULL, &slow, "sw->slow");
    port_init(&pf, s, pool, NULL, &fast, "sw->fast");
    ps.pfc_in = pf.pfc_in = 1;      /* what topo_finish sets for PFC links */
    wire_init(&w0, s, US(1), "w0");
    wire_init(&ws, s, US(1), "ws");
    wire_init(&wf, s, US(1), "wf");
    wire_set_src(&w0, &nic);      /* what topo_add_link sets */
    sink *h0[] = {&nic.base, &w0.base, &pf.base, &wf.base, &c[0].base};
    sink *h1[] = {&nic.base, &w0.base, &ps.base, &ws.base, &c[1].base};
    route *rt[2] = {route_create(h0, 5), route_create(h1, 5)};
    send_burst(s, rt[1], 1);
    sim_schedule(s, US(100), send_burst, rt[0], 0);
    sim_run(s, US(100));
    assert_int_equal(nic.pfc_paused >> 1 & 1, 1);   /* class 1 paused ... */
    assert_int_equal(nic.pfc_paused & 1, 0);        /* ... class 0 not */
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(c[0].n, 200);
    assert_int_equal(c[1].n, 200);
    assert_int_equal(ps.stat_drop_pkts + pf.stat_drop_pkts, 0);
    assert_true(nic.stat_pfc_pauses > 0);
    /* Class 0 left at 10 Gbps from 100 us on: done 200 packet times later
     * (and a few microseconds); class 1 drains at 1 Gbps (2.4 ms). */
    if (c[0].at[199] > US(100) + 200 * NS(1200) + US(10))
        fail_msg("class 0 done at %.1f us: held back by class 1's pause", c[0].at[199] / 1e6);
    assert_true(c[1].at[199] >= 200 * US(12));
    assert_int_equal(w0.pfc_bytes[0] + w0.pfc_bytes[1], 0);
    assert_int_equal(pkt_pool_live(pool), 0);
    for (int k = 0; k < 2; k++)
        free(rt[k]);
    wire_fini(&w0);
    wire_fini(&ws);
    wire_fini(&wf);
    pkt_pool_destroy(pool);
    sim_destroy(s);
}

/* An element that only passes packets on (a hook, an encapsulation). */
typedef struct passer {
    sink base;
    uint64_t n;
} passer;

static void pass_recv(sink *self, pkt *p)
{
    ((passer *)self)->n++;
    pkt_send_on(p);
}

/* An engine, a pool, a catcher, and two wires and a passer on the heap
 * (where ASan sees a read past their ends: an element taken for another
 * kind), for routes through elements other than ports and wires. */
typedef struct chain {
    sim *s;
    pkt_pool *pool;
    wire *w[2];
    passer *pass;
    catcher c;
} chain;

static void chain_init(chain *h, int64_t delay0, int64_t delay1)
{
    memset(h, 0, sizeof *h);
    h->s = sim_create();
    h->pool = pkt_pool_create();
    h->w[0] = xcalloc(1, sizeof *h->w[0]);
    h->w[1] = xcalloc(1, sizeof *h->w[1]);
    h->pass = xcalloc(1, sizeof *h->pass);
    h->pass->base.recv = pass_recv;
    h->pass->base.name = "pass";
    wire_init(h->w[0], h->s, delay0, "w0");
    wire_init(h->w[1], h->s, delay1, "w1");
    h->c.base.recv = catch_recv;
    h->c.base.name = "sink";
    h->c.pool = h->pool;
    h->c.s = h->s;
    stat_init(&h->c.delay);
}

static void chain_fini(chain *h)
{
    assert_int_equal(pkt_pool_live(h->pool), 0);
    for (int i = 0; i < 2; i++) {
        wire_fini(h->w[i]);
        free(h->w[i]);
    }
    free(h->pass);
    pkt_pool_destroy(h->pool);
    sim_destroy(h->s);
}

/* PFC with another element on the route (here between the host's NIC and
 * its wire): the switch must still find the link the packet came in on
 * (the wire stamps it), not count back three hops along the route, which
 * took the small element for a port and read past its end
 * (heap-buffer-overflow under ASan).  host -> S -> 1 Gbps sink: S pauses
 * the host, nothing is lost. */
static void test_port_pfc_finds_the_ingress_past_other_elements(void **state)
{
    (void)state;
    port_cfg host = {.rate_bps = 10000000000, .buffer_bytes = INT64_C(1) << 40, .nprio = 1,
                     .pfc_xoff_bytes = 20000, .pfc_xon_bytes = 10000};
    port_cfg slow = {.rate_bps = 1000000000, .buffer_bytes = 64000, .nprio = 1};
    port nic, sw;
    chain h;
    chain_init(&h, US(1), US(1));
    port_init(&nic, h.s, h.pool, NULL, &host, "h->s");
    port_init(&sw, h.s, h.pool, NULL, &slow, "s->sink");
    sw.pfc_in = 1;
    wire_set_src(h.w[0], &nic);
    wire_set_src(h.w[1], &sw);
    sink *hops[] = {&nic.base, &h.pass->base, &h.w[0]->base, &sw.base, &h.w[1]->base,
                    &h.c.base};
    route *rt = route_create(hops, 6);
    for (int k = 0; k < 300; k++) {
        pkt *p = pkt_alloc(h.pool);
        p->size_bytes = 1500;
        pkt_send(p, rt);
    }
    sim_run(h.s, SIM_TIME_MAX);
    assert_int_equal(h.c.n, 300);
    assert_int_equal(h.pass->n, 300);
    assert_int_equal(sw.stat_drop_pkts, 0);
    assert_true(nic.stat_pfc_pauses > 0);
    assert_true(sw.stat_max_bytes <= 20000 + 4 * 1500);
    assert_int_equal(h.w[0]->pfc_bytes[0], 0);
    free(rt);
    chain_fini(&h);
}

/* The empty-network transfer time of a route does not depend on other
 * elements in it: ports serialise, wires delay, the rest costs nothing. */
static void test_port_route_ideal_time_skips_other_elements(void **state)
{
    (void)state;
    port_cfg fast = {.rate_bps = 10000000000, .buffer_bytes = 1 << 20, .nprio = 1};
    port_cfg slow = fast;
    slow.rate_bps = 1000000000;
    port p1, p2;
    chain h;
    chain_init(&h, US(1), US(2));
    port_init(&p1, h.s, h.pool, NULL, &fast, "p1");
    port_init(&p2, h.s, h.pool, NULL, &slow, "p2");
    sink *plain[] = {&p1.base, &h.w[0]->base, &p2.base, &h.w[1]->base, &h.c.base};
    sink *extra[] = {&p1.base,      &h.w[0]->base, &h.pass->base, &p2.base,
                     &h.pass->base, &h.w[1]->base, &h.c.base};
    route *a = route_create(plain, 5), *b = route_create(extra, 7);
    /* 14600 B in 10 packets of 1500 B: the first at 10 and 1 Gbps plus 3 us
     * of wires, the other nine at 1 Gbps. */
    int64_t want = NS(1200) + US(12) + US(3) + 9 * US(12);
    assert_int_equal(topo_route_ideal_ps(a, 14600, 1460, 40), want);
    assert_int_equal(topo_route_ideal_ps(b, 14600, 1460, 40), want);
    free(a);
    free(b);
    chain_fini(&h);
}

static void test_pool_reuses_packets_without_growth(void **state)
{
    (void)state;
    pkt_pool *pp = pkt_pool_create();
    pkt *ps[100];
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 100; i++)
            ps[i] = pkt_alloc(pp);
        for (int i = 0; i < 100; i++)
            pkt_free(pp, ps[i]);
    }
    assert_int_equal(pkt_pool_allocated(pp), 1024);    /* one slab, reused */
    assert_int_equal(pkt_pool_live(pp), 0);
    pkt *p = pkt_alloc(pp);
    assert_int_equal(p->flags, 0);                     /* handed out zeroed */
    assert_int_equal(p->size_bytes, 0);
    pkt_free(pp, p);
    pkt_pool_destroy(pp);
    assert_true(sizeof(pkt) <= 128);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port_serialisation_exact_at_any_rate),
        cmocka_unit_test(test_port_serialises_at_line_rate_then_wire_delay),
        cmocka_unit_test(test_port_drop_tail_counts_and_conserves),
        cmocka_unit_test(test_port_ecn_step_marks_above_k),
        cmocka_unit_test(test_port_red_drops_non_ect_and_marks_ect),
        cmocka_unit_test(test_port_red_instantaneous_marks_as_drawn),
        cmocka_unit_test(test_port_marks_at_dequeue_on_the_queue_left_behind),
        cmocka_unit_test(test_port_strict_priority_overtakes),
        cmocka_unit_test(test_port_failure_drops_queue_wire_and_arrivals),
        cmocka_unit_test(test_port_pfc_makes_the_switch_lossless),
        cmocka_unit_test(test_port_pfc_pauses_propagate_hop_by_hop),
        cmocka_unit_test(test_port_flow_round_robin_alternates),
        cmocka_unit_test(test_port_flow_round_robin_many_flows_and_failure),
        cmocka_unit_test(test_port_shared_buffer_dynamic_thresholds),
        cmocka_unit_test(test_port_shared_buffer_leaves_pfc_traffic_to_pfc),
        cmocka_unit_test(test_port_pfc_dynamic_threshold_pauses_sooner),
        cmocka_unit_test(test_port_md1_delay_matches_pollaczek_khinchine),
        cmocka_unit_test(test_pool_reuses_packets_without_growth),
        cmocka_unit_test(test_port_ecn_marks_per_class),
        cmocka_unit_test(test_port_buffer_and_shared_pool_count_the_same_bytes),
        cmocka_unit_test(test_port_pfc_pauses_only_the_congested_class),
        cmocka_unit_test(test_port_pfc_finds_the_ingress_past_other_elements),
        cmocka_unit_test(test_port_route_ideal_time_skips_other_elements),
    };
    return cmocka_run_group_tests_name("port", tests, NULL, NULL);
}
