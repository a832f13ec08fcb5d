/*
 * test_tcp.c - TCP NewReno and DCTCP on a hand-built dumbbell: N senders,
 * one switch, one receiver; every link 10 Gbps, 1 us each way.
 *
 *   sender i: NIC port -> wire -> [switch port to receiver: bottleneck]
 *             -> wire -> receiver
 *   ACKs:     receiver NIC port -> wire -> switch port to i -> wire -> i
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

#include "aisim/port.h"
#include "aisim/stats.h"
#include "aisim/tcp.h"
#include "aisim/units.h"

#define MAXN 64
#define RATE 10000000000LL

typedef struct bell {
    sim *s;
    pkt_pool *pool;
    rng r;
    int n;
    tcp_cfg cfg;
    port nic[MAXN], sw_to[MAXN], bott, rnic;
    wire up[MAXN], dn[MAXN], bdown, rup;
    tcp_flow f[MAXN];
    route *fwd[MAXN], *rev[MAXN];
    int done;               /* flows finished */
    stat_acc q;             /* sampled bottleneck queue, bytes */
    sim_timer sampler;
    int64_t sample_from;
} bell;

static void sample(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    bell *b = obj;
    if (sim_now(s) >= b->sample_from)
        stat_add(&b->q, (double)b->bott.bytes);
    sim_timer_arm(s, &b->sampler, sim_now(s) + US(5));
}

/* Stops the run when every flow has delivered everything. */
static void flow_done(void *ctx, tcp_flow *f)
{
    (void)f;
    bell *b = ctx;
    if (++b->done == b->n)
        sim_stop(b->s);
}

static void bell_init(bell *b, int n, enum tcp_cc cc, int64_t buffer, int64_t ecn_k,
                      uint64_t size)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    b->n = n;
    tcp_cfg_default(&b->cfg);
    b->cfg.cc = cc;
    port_cfg host = {.rate_bps = RATE, .buffer_bytes = INT64_C(1) << 40, .nprio = 1};
    port_cfg sw = {.rate_bps = RATE, .buffer_bytes = buffer, .ecn_k_bytes = ecn_k, .nprio = 1};
    port_init(&b->bott, b->s, b->pool, NULL, &sw, "sw->recv");
    wire_init(&b->bdown, b->s, US(1), "wire sw->recv");
    port_init(&b->rnic, b->s, b->pool, NULL, &host, "recv nic");
    wire_init(&b->rup, b->s, US(1), "wire recv->sw");
    for (int i = 0; i < n; i++) {
        port_init(&b->nic[i], b->s, b->pool, NULL, &host, "nic");
        wire_init(&b->up[i], b->s, US(1), "up");
        port_init(&b->sw_to[i], b->s, b->pool, NULL, &sw, "sw->sender");
        wire_init(&b->dn[i], b->s, US(1), "down");
        tcp_flow_init(&b->f[i], b->s, b->pool, &b->cfg, (uint32_t)i, size);
        sink *fw[] = {&b->nic[i].base, &b->up[i].base, &b->bott.base, &b->bdown.base,
                      &b->f[i].rx};
        sink *rv[] = {&b->rnic.base, &b->rup.base, &b->sw_to[i].base, &b->dn[i].base,
                      &b->f[i].tx};
        b->fwd[i] = route_create(fw, 5);
        b->rev[i] = route_create(rv, 5);
        tcp_flow_set_routes(&b->f[i], b->fwd[i], b->rev[i]);
        b->f[i].on_done = flow_done;
        b->f[i].ctx = b;
    }
    stat_init(&b->q);
    sim_timer_init(&b->sampler, sample, b, 0);
}

/* Samples the bottleneck queue every 5 us from `from` on. */
static void bell_sample(bell *b, int64_t from)
{
    b->sample_from = from;
    sim_timer_arm(b->s, &b->sampler, from);
}

/* Bytes sent = delivered + dropped + still in the network, per packet. */
static void bell_fini(bell *b)
{
    for (int i = 0; i < b->n; i++) {
        tcp_flow_stop(&b->f[i]);
        free(b->fwd[i]);
        free(b->rev[i]);
        wire_fini(&b->up[i]);
        wire_fini(&b->dn[i]);
    }
    wire_fini(&b->bdown);
    wire_fini(&b->rup);
    sim_destroy(b->s);
    pkt_pool_destroy(b->pool);
}

static uint64_t drops(const bell *b)
{
    uint64_t d = b->bott.stat_drop_pkts + b->rnic.stat_drop_pkts;
    for (int i = 0; i < b->n; i++)
        d += b->nic[i].stat_drop_pkts + b->sw_to[i].stat_drop_pkts;
    return d;
}

static void test_tcp_single_flow_fills_idle_path(void **state)
{
    (void)state;
    bell b;
    bell_init(&b, 1, TCP_NEWRENO, 1 << 20, 0, 100000000);      /* 100 MB */
    tcp_flow_start(&b.f[0], 0);
    sim_run(b.s, SIM_TIME_MAX);     /* stops when the receiver has it all */
    tcp_flow *f = &b.f[0];
    assert_true(f->finish_ps > 0);
    assert_int_equal(tcp_flow_delivered(f), 100000000);
    double goodput = 8e8 / ps_to_s(f->finish_ps - f->start_ps);
    double util = (double)b.bott.stat_busy_ps / (double)(f->finish_ps - f->start_ps);
    /* Payload is 1460 of every 1500 bytes: 97.3% of the line is the most
     * goodput can be. */
    if (goodput < 0.95 * 0.9733 * RATE || util < 0.95)
        fail_msg("goodput %.3f Gbps, bottleneck busy %.1f%%", goodput / 1e9, 100 * util);
    sim_run(b.s, SIM_TIME_MAX);     /* the last ACKs come home */
    assert_int_equal(pkt_pool_live(b.pool), 0);
    bell_fini(&b);
}

static void test_tcp_conservation_sent_delivered_dropped(void **state)
{
    (void)state;
    bell b;
    bell_init(&b, 4, TCP_NEWRENO, 100000, 0, 5000000);
    for (int i = 0; i < 4; i++)
        tcp_flow_start(&b.f[i], US(i));
    sim_run(b.s, MS(3));            /* mid-run: packets in flight */
    uint64_t data_pkts = 0;
    for (int i = 0; i < 4; i++)
        data_pkts += b.f[i].segs_sent;
    /* Every packet allocated is delivered-and-freed, dropped-and-freed, or
     * still live in a queue or on a wire. */
    uint64_t in_net = b.bott.npkts + (b.bott.tx != NULL) + b.bdown.len + b.rnic.npkts +
                      (b.rnic.tx != NULL) + b.rup.len;
    for (int i = 0; i < 4; i++)
        in_net += b.nic[i].npkts + (b.nic[i].tx != NULL) + b.up[i].len + b.sw_to[i].npkts +
                  (b.sw_to[i].tx != NULL) + b.dn[i].len;
    assert_int_equal(pkt_pool_live(b.pool), in_net);
    assert_true(drops(&b) > 0);     /* the shallow buffer did overflow */
    assert_true(data_pkts > 0);
    sim_run(b.s, SIM_TIME_MAX);     /* until the last flow completes */
    sim_run(b.s, SIM_TIME_MAX);     /* and its last ACKs come home */
    for (int i = 0; i < 4; i++)
        assert_int_equal(tcp_flow_delivered(&b.f[i]), 5000000);
    assert_int_equal(pkt_pool_live(b.pool), 0);
    bell_fini(&b);
}

/* Long flows through one bottleneck: Jain's index of their goodputs over
 * a long window, and the bottleneck's utilisation. */
static void fairness(enum tcp_cc cc, int64_t k, double *jain, double *util, double *qmean)
{
    bell b;
    bell_init(&b, 4, cc, 1 << 20, k, UINT64_MAX);
    for (int i = 0; i < 4; i++)
        tcp_flow_start(&b.f[i], US(10 * i));
    bell_sample(&b, MS(20));
    sim_run(b.s, MS(20));
    uint64_t d0[4];
    for (int i = 0; i < 4; i++)
        d0[i] = tcp_flow_delivered(&b.f[i]);
    sim_run(b.s, MS(120));
    double x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (double)(tcp_flow_delivered(&b.f[i]) - d0[i]);
    *jain = jain_index(x, 4);
    double total = 0;
    for (int i = 0; i < 4; i++)
        total += x[i];
    *util = total * 8 / ps_to_s(MS(100)) / (0.9733 * RATE);
    *qmean = b.q.mean;
    for (int i = 0; i < 4; i++)
        printf("  flow %d: %.3f Gbps, %llu retransmits, %llu timeouts, %llu fast\n", i,
               x[i] * 8 / ps_to_s(MS(100)) / 1e9, (unsigned long long)b.f[i].retransmits,
               (unsigned long long)b.f[i].timeouts, (unsigned long long)b.f[i].fast_retransmits);
    bell_fini(&b);
}

static void test_tcp_newreno_flows_share_fairly_and_fill_buffer(void **state)
{
    (void)state;
    double jain, util, q;
    fairness(TCP_NEWRENO, 0, &jain, &util, &q);
    if (jain < 0.95 || util < 0.95)
        fail_msg("NewReno: Jain %.3f, goodput %.1f%% of the payload rate", jain, 100 * util);
    /* Drop-tail NewReno keeps the 1 MiB buffer far above DCTCP's K. */
    if (q < 0.3 * (1 << 20))
        fail_msg("NewReno mean queue %.0f bytes: expected it to fill the buffer", q);
}

static void test_dctcp_flows_share_fairly_and_hold_queue_near_k(void **state)
{
    (void)state;
    double jain, util, q;
    const double K = 65 * 1500;     /* the DCTCP paper's K for 10 Gbps */
    fairness(TCP_DCTCP, (int64_t)K, &jain, &util, &q);
    if (jain < 0.95 || util < 0.95)
        fail_msg("DCTCP: Jain %.3f, goodput %.1f%% of the payload rate", jain, 100 * util);
    /* DCTCP analysis (Alizadeh et al. 2010, sec. 3.3): the queue peaks at
     * Q_max = K + N packets and swings by A = N/2 * sqrt(2 W*), W* = (C RTT +
     * K) / N.  Here N = 4, C RTT ~ 4 packets: W* ~ 17, A ~ 12 packets, so the
     * queue lives in [K - 8, K + 4] packets; allow for the sampling. */
    if (q < K - 12 * 1500 || q > K + 6 * 1500)
        fail_msg("DCTCP mean queue %.1f packets, K = 65", q / 1500);
}

/* ---- loss recovery on a path that drops chosen transmissions ---------- */

/* Drops the first `drop[i]` transmissions of data segment i (seq / MSS);
 * CE-marks every mark_every-th data packet; delivers every data packet
 * 1 + dup times. */
typedef struct dropper {
    sink base;
    pkt_pool *pool;
    uint32_t mss;
    uint8_t drop[512], seen[512];
    uint32_t rx[512];       /* transmissions that got through, per segment */
    uint32_t mark_every;    /* 0: no marks */
    uint64_t ndata;         /* data packets seen */
    int dup;                /* extra copies of each data packet */
    int order[512], norder; /* segments sent again, in the order sent */
} dropper;

static void dropper_recv(sink *self, pkt *p)
{
    dropper *d = (dropper *)self;
    uint64_t i = p->seq / d->mss;
    if (p->kind == PKT_DATA && i < 512 && d->seen[i] && d->norder < 512)
        d->order[d->norder++] = (int)i;
    if (p->kind == PKT_DATA && i < 512 && d->seen[i]++ < d->drop[i]) {
        pkt_free(d->pool, p);
        return;
    }
    if (p->kind == PKT_DATA && i < 512)
        d->rx[i]++;
    if (p->kind == PKT_DATA && d->mark_every && d->ndata % d->mark_every == 0)
        p->flags |= PKT_F_CE;
    if (p->kind == PKT_DATA)
        d->ndata++;
    for (int k = 0; p->kind == PKT_DATA && k < d->dup; k++) {
        pkt *c = pkt_alloc(d->pool);
        *c = *p;
        pkt_send_on(c);
    }
    pkt_send_on(p);
}

/* Sits before the sender on the ACK path and watches it: how often alpha
 * changed between two ACKs, alpha's mean from `from` on, and the most data
 * outstanding seen at an ACK's arrival since the last reset. */
typedef struct spy {
    sink base;
    tcp_flow *f;
    sim *s;
    int64_t from;
    double last_alpha;
    uint64_t acks, alpha_changes;
    stat_acc alpha;
    uint64_t max_flight;
    /* pipe (in segments) and recovery after each ACK was processed */
    uint64_t pipe[512];
    bool rec[512];
    int npipe;
} spy;

/* Runs just after the sender handled the ACK the spy passed on. */
static void spy_after(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    spy *y = obj;
    if (y->npipe < 512) {
        y->rec[y->npipe] = y->f->in_recovery;
        y->pipe[y->npipe++] = y->f->in_recovery ? y->f->pipe / y->f->cfg->mss_bytes : 0;
    }
}

static void spy_recv(sink *self, pkt *p)
{
    spy *y = (spy *)self;
    tcp_flow *f = y->f;
    y->acks++;
    if (f->alpha != y->last_alpha)
        y->alpha_changes++;
    y->last_alpha = f->alpha;
    if (sim_now(y->s) >= y->from)
        stat_add(&y->alpha, f->alpha);
    if (f->snd_nxt - f->snd_una > y->max_flight)
        y->max_flight = f->snd_nxt - f->snd_una;
    sim_schedule(y->s, sim_now(y->s), spy_after, y, 0);
    pkt_send_on(p);
}

typedef struct lossy {
    uint32_t max_retries;   /* 0: the default */
    enum tcp_cc cc;         /* 0: NewReno */
    enum tcp_recovery rec;  /* 0: RFC 6675 */
    uint32_t rcv_wnd;       /* 0: the default */
    int64_t lift_at;        /* > 0: the receiver's window becomes 64 MiB then */
    spy y;
    int done;               /* on_done calls */
    sim *s;
    pkt_pool *pool;
    tcp_cfg cfg;
    port nic, rnic;
    wire up, down;
    dropper d;
    tcp_flow f;
    route *fwd, *rev;
} lossy;

static void lossy_done(void *ctx, tcp_flow *f)
{
    (void)f;
    ((lossy *)ctx)->done++;
}

static void lift_rwnd(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    lossy *l = obj;
    l->cfg.rcv_wnd_bytes = 64u << 20;
    l->y.max_flight = 0;
}

/* sender NIC -> wire -> dropper -> receiver; ACKs: NIC -> wire -> spy ->
 * sender.  10 Gbps, 10 us each way, NewReno (or l->cc), SACK; `segs`
 * segments of data.  Builds and starts; lossy_run() runs it. */
static void lossy_setup(lossy *l, uint32_t init_cwnd, int segs)
{
    l->s = sim_create();
    l->pool = pkt_pool_create();
    tcp_cfg_default(&l->cfg);
    l->cfg.cc = l->cc;
    l->cfg.recovery = l->rec;
    if (l->rcv_wnd)
        l->cfg.rcv_wnd_bytes = l->rcv_wnd;
    l->cfg.init_cwnd_pkts = init_cwnd;
    l->cfg.min_rto_ps = MS(1);
    if (l->max_retries)
        l->cfg.max_retries = l->max_retries;
    port_cfg host = {.rate_bps = RATE, .buffer_bytes = INT64_C(1) << 40, .nprio = 1};
    port_init(&l->nic, l->s, l->pool, NULL, &host, "nic");
    port_init(&l->rnic, l->s, l->pool, NULL, &host, "rnic");
    wire_init(&l->up, l->s, US(10), "up");
    wire_init(&l->down, l->s, US(10), "down");
    l->d.base.recv = dropper_recv;
    l->d.base.name = "dropper";
    l->d.pool = l->pool;
    l->d.mss = l->cfg.mss_bytes;
    tcp_flow_init(&l->f, l->s, l->pool, &l->cfg, 0, (uint64_t)segs * l->cfg.mss_bytes);
    l->y.base.recv = spy_recv;
    l->y.base.name = "spy";
    l->y.f = &l->f;
    l->y.s = l->s;
    l->y.last_alpha = l->f.alpha;
    stat_init(&l->y.alpha);
    sink *fw[] = {&l->nic.base, &l->up.base, &l->d.base, &l->f.rx};
    sink *rv[] = {&l->rnic.base, &l->down.base, &l->y.base, &l->f.tx};
    l->fwd = route_create(fw, 4);
    l->rev = route_create(rv, 4);
    if (l->lift_at > 0)
        sim_schedule(l->s, l->lift_at, lift_rwnd, l, 0);
    tcp_flow_set_routes(&l->f, l->fwd, l->rev);
    l->f.on_done = lossy_done;
    l->f.ctx = l;
    tcp_flow_prime_rtt(&l->f, US(45));
    tcp_flow_start(&l->f, 0);
}

/* lossy_setup(), then runs until the flow completes or gives up. */
static void lossy_run(lossy *l, uint32_t init_cwnd, int segs)
{
    lossy_setup(l, init_cwnd, segs);
    sim_run(l->s, SIM_TIME_MAX);
    if (!l->f.aborted) {
        assert_int_equal(tcp_flow_delivered(&l->f), (uint64_t)segs * l->cfg.mss_bytes);
        assert_int_equal(l->done, 1);
    }
}

static void lossy_fini(lossy *l)
{
    tcp_flow_stop(&l->f);
    assert_int_equal(pkt_pool_live(l->pool), 0);
    free(l->fwd);
    free(l->rev);
    wire_fini(&l->up);
    wire_fini(&l->down);
    sim_destroy(l->s);
    pkt_pool_destroy(l->pool);
}

/* 100 segments in one window; every other one of the first 80 is lost (40
 * holes, each with SACKed data above it), and so is segment 0's first
 * retransmission.  Recovery retransmits the 40 holes once each.  RFC 6675
 * does not detect a lost retransmission: segment 0 waits for the timeout
 * (1 timeout, 41 retransmissions).  RACK does: data sent after segment
 * 0's retransmission is delivered, so it is lost and resent at once (0
 * timeouts, 41).  Nothing arrives twice either way. */
static void lost_retransmission(enum tcp_recovery rec, uint64_t timeouts)
{
    lossy l;
    memset(&l, 0, sizeof l);
    l.rec = rec;
    for (int i = 0; i < 80; i += 2)
        l.d.drop[i] = 1;
    l.d.drop[0] = 2;
    lossy_run(&l, 100, 300);
    if (l.f.timeouts != timeouts || l.f.retransmits != 41)
        fail_msg("%s: %llu timeouts, %llu retransmissions (want %llu and 41: 40 holes + 1 lost "
                 "retransmission)", rec == TCP_REC_RACK ? "rack" : "rfc6675",
                 (unsigned long long)l.f.timeouts, (unsigned long long)l.f.retransmits,
                 (unsigned long long)timeouts);
    for (int i = 0; i < 300; i++)
        assert_int_equal(l.d.rx[i], 1);         /* nothing arrived twice */
    lossy_fini(&l);
}

static void test_tcp_lost_retransmission_rfc6675_times_out_rack_resends(void **state)
{
    (void)state;
    lost_retransmission(TCP_REC_RFC6675, 1);
    lost_retransmission(TCP_REC_RACK, 0);
}

/* Segments 0-2 of a 20-segment window are lost, and so are their fast
 * retransmissions; nothing new can be sent, so the timer fires.  The
 * receiver holds segments 3-19 (SACKed): after the timeout only 0-2 are
 * sent again, as Linux does (it keeps the SACK scoreboard across a
 * timeout; aisim's receivers never renege), not the whole window. */
static void test_tcp_timeout_resends_only_what_was_not_sacked(void **state)
{
    (void)state;
    lossy l;
    memset(&l, 0, sizeof l);
    for (int i = 0; i < 3; i++)
        l.d.drop[i] = 2;
    lossy_run(&l, 20, 20);
    if (l.f.timeouts != 1 || l.f.retransmits != 6)
        fail_msg("%llu timeouts, %llu retransmissions (want 1 and 6)",
                 (unsigned long long)l.f.timeouts, (unsigned long long)l.f.retransmits);
    for (int i = 0; i < 20; i++)
        assert_int_equal(l.d.rx[i], 1);
    lossy_fini(&l);
}

/* A segment that is lost every time: the sender backs off (1, 2, 4, 8 ms)
 * and gives up after max_retries = 3 consecutive timeouts, telling its
 * owner; the run then ends instead of probing for ever. */
static void test_tcp_gives_up_after_max_retries(void **state)
{
    (void)state;
    lossy l;
    memset(&l, 0, sizeof l);
    l.max_retries = 3;
    l.d.drop[5] = 255;
    lossy_run(&l, 10, 10);
    assert_true(l.f.aborted);
    assert_int_equal(l.done, 1);
    assert_int_equal(l.f.timeouts, 4);
    assert_true(l.f.finish_ps < 0);
    assert_int_equal(tcp_flow_delivered(&l.f), 5 * l.cfg.mss_bytes);
    /* 1 + 2 + 4 + 8 ms of back-off after the first segment's loss. */
    assert_true(sim_now(l.s) >= MS(15) && sim_now(l.s) < MS(16));
    lossy_fini(&l);
}

/* A path that delivers every data segment four times (in order): each
 * later copy's ACK repeats the cumulative ACK but SACKs nothing new.  It is
 * not a duplicate ACK (RFC 6675): no fast retransmit, no window inflation,
 * nothing resent.  Counting such ACKs made a sprayed flow's spurious
 * retransmissions inflate its window (net/spray-permutation). */
static void test_tcp_ack_of_a_duplicate_segment_is_not_a_dupack(void **state)
{
    (void)state;
    lossy l;
    memset(&l, 0, sizeof l);
    l.d.dup = 3;
    lossy_run(&l, 10, 2000);
    if (l.f.fast_retransmits != 0 || l.f.retransmits != 0)
        fail_msg("%llu fast retransmits, %llu retransmissions on a path that loses nothing",
                 (unsigned long long)l.f.fast_retransmits, (unsigned long long)l.f.retransmits);
    lossy_fini(&l);
}

/* The receiver advertises 16 KB (less than the path's 26 KB bandwidth-
 * delay product): the sender is held by that window, not by cwnd, so cwnd
 * must not grow past it (RFC 7661).  When the window lifts to 64 MiB at
 * 3 ms, the sender goes on from the cwnd it has (slow start: at most
 * doubling per round trip), instead of sending a burst of a cwnd grown
 * without bound meanwhile; cwnd then grows past the old cap. */
static void test_tcp_receive_window_limited_sender_keeps_cwnd_bounded(void **state)
{
    (void)state;
    lossy l;
    memset(&l, 0, sizeof l);
    l.rcv_wnd = 16000;
    l.lift_at = MS(3);
    lossy_setup(&l, 10, 6000);
    const double mss = l.cfg.mss_bytes;
    sim_run(l.s, MS(3) - 1);
    double cwnd0 = l.f.cwnd;
    if (cwnd0 > 16000 + 2 * mss || l.y.max_flight > 16000)
        fail_msg("held by a 16 KB window: cwnd %.0f bytes, %llu outstanding", cwnd0,
                 (unsigned long long)l.y.max_flight);
    sim_run(l.s, MS(3) + US(21));   /* one round trip after the lift */
    if ((double)l.y.max_flight > 2 * cwnd0 + 2 * mss)
        fail_msg("window lifted with cwnd %.0f: %llu bytes outstanding within a round trip",
                 cwnd0, (unsigned long long)l.y.max_flight);
    sim_run(l.s, SIM_TIME_MAX);
    assert_int_equal(tcp_flow_delivered(&l.f), 6000 * mss);
    assert_true(l.f.cwnd > 4 * cwnd0);                /* and grew from there */
    lossy_fini(&l);
}

/* DCTCP's alpha on a path that CE-marks every mark_every-th data packet
 * (fraction F = 1/mark_every): alpha <- (1 - g) alpha + g F' once per
 * window of data, F' the window's marked fraction, so alpha converges to F
 * and changes once per window, not at every ACK. */
static void alpha_on_fixed_fraction(uint32_t mark_every)
{
    lossy l;
    memset(&l, 0, sizeof l);
    l.cc = TCP_DCTCP;
    l.d.mark_every = mark_every;
    l.y.from = MS(5);               /* (15/16)^n: converged long before */
    lossy_run(&l, 10, 20000);
    double F = 1.0 / mark_every;
    if (fabs(l.y.alpha.mean - F) > 0.02 || l.y.alpha_changes * 2 > l.y.acks)
        fail_msg("F = %.3f: alpha averages %.4f (min %.4f, max %.4f); it changed at %llu of "
                 "%llu ACKs", F, l.y.alpha.mean, l.y.alpha.min, l.y.alpha.max,
                 (unsigned long long)l.y.alpha_changes, (unsigned long long)l.y.acks);
    lossy_fini(&l);
}

static void test_dctcp_alpha_converges_to_marked_fraction_once_per_window(void **state)
{
    (void)state;
    alpha_on_fixed_fraction(4);
    alpha_on_fixed_fraction(2);
    alpha_on_fixed_fraction(10);
}

/* Prints what a scripted run did (for the failure message). */
static void print_trace(const lossy *l)
{
    fprintf(stderr, "  resent:");
    for (int i = 0; i < l->d.norder; i++)
        fprintf(stderr, " %d", l->d.order[i]);
    fprintf(stderr, "\n  pipe after each ACK (segments; - outside recovery):");
    for (int i = 0; i < l->y.npipe; i++)
        if (l->y.rec[i])
            fprintf(stderr, " %llu", (unsigned long long)l->y.pipe[i]);
        else
            fprintf(stderr, " -");
    fprintf(stderr, "\n");
}

/* Segments 3 and 7 of a 20-segment window (init_cwnd 20, nothing more to
 * send) are lost once.  RFC 6675 by hand, in segments (MSS 1460):
 *   ACKs of 0-2 advance; those of 4, 5, 6 SACK new data: the third
 *   duplicate ACK (IsLost(3) too) starts recovery: RecoveryPoint 20,
 *   ssthresh = cwnd = FlightSize / 2 = 8.5, segment 3 resent, HighRxt =
 *   RescueRxt = 4; pipe = 13 un-SACKed not lost (7-19) + 1 below HighRxt
 *   (3) = 14;
 *   SACKs of 8, 9: pipe 13, 12 (7 not yet lost: 1, 2 SACKed above it);
 *   SACK of 10: three above 7, IsLost(7): pipe 10; 11: 9; 12: 8 (cwnd -
 *   pipe = 0.5 < 1);
 *   SACK of 13: pipe 7, cwnd - pipe = 1.5: NextSeg rule 1 resends 7
 *   (HighRxt 8), pipe 8;
 *   SACKs of 14-19: pipe 7 .. 2 (3 and 7 below HighRxt count 1 each);
 *   rules 1-3 find nothing (no hole above HighRxt, no new data) and rule
 *   4 waits for snd_una to pass RescueRxt;
 *   the resent 3 arrives: cumulative ACK of 7, partial; pipe 1 (7's
 *   retransmission); rule 4: snd_una 7 > RescueRxt 4: the rescue
 *   retransmission of the highest un-SACKed segment, 7 (RescueRxt = 20),
 *   pipe 2;
 *   the resent 7 acknowledges 20: recovery ends; the rescue copy's ACK.
 * So 3, 7, 7 are resent, and pipe after each ACK is as below.  Breaking
 * IsLost's threshold changes the pipe values; dropping rule 4 the second
 * resend of 7. */
static void test_tcp_rfc6675_two_losses_in_a_window(void **state)
{
    (void)state;
    lossy l;
    memset(&l, 0, sizeof l);
    l.d.drop[3] = 1;
    l.d.drop[7] = 1;
    lossy_run(&l, 20, 20);
    static const int resent[] = {3, 7, 7};
    /* -1: not in recovery after that ACK */
    static const int pipe[] = {-1, -1, -1, -1, -1, 14, 13, 12, 10, 9, 8,
                               8, 7, 6, 5, 4, 3, 2, 2, -1, -1};
    bool ok = l.d.norder == 3 && l.y.npipe == 21 && l.f.timeouts == 0 &&
              l.f.retransmits == 3 && l.f.fast_retransmits == 1;
    for (int i = 0; ok && i < 3; i++)
        ok = l.d.order[i] == resent[i];
    for (int i = 0; ok && i < 21; i++)
        ok = pipe[i] < 0 ? !l.y.rec[i] : l.y.rec[i] && l.y.pipe[i] == (uint64_t)pipe[i];
    if (!ok) {
        print_trace(&l);
        fail_msg("not RFC 6675's retransmissions and pipe (want resent 3 7 7; pipe - - - - - "
                 "14 13 12 10 9 8 8 7 6 5 4 3 2 2 - -)");
    }
    assert_int_equal(l.f.cwnd, 8.5 * l.cfg.mss_bytes);     /* ssthresh after recovery */
    lossy_fini(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcp_single_flow_fills_idle_path),
        cmocka_unit_test(test_tcp_conservation_sent_delivered_dropped),
        cmocka_unit_test(test_tcp_newreno_flows_share_fairly_and_fill_buffer),
        cmocka_unit_test(test_dctcp_flows_share_fairly_and_hold_queue_near_k),
        cmocka_unit_test(test_tcp_lost_retransmission_rfc6675_times_out_rack_resends),
        cmocka_unit_test(test_tcp_timeout_resends_only_what_was_not_sacked),
        cmocka_unit_test(test_tcp_rfc6675_two_losses_in_a_window),
        cmocka_unit_test(test_tcp_gives_up_after_max_retries),
        cmocka_unit_test(test_tcp_ack_of_a_duplicate_segment_is_not_a_dupack),
        cmocka_unit_test(test_tcp_receive_window_limited_sender_keeps_cwnd_bounded),
        cmocka_unit_test(test_dctcp_alpha_converges_to_marked_fraction_once_per_window),
    };
    return cmocka_run_group_tests_name("tcp", tests, NULL, NULL);
}
