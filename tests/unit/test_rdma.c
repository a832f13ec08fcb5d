/*
 * test_rdma.c - the RoCEv2 transport (rdma.h): queue pairs, loss recovery,
 * the NIC's pulling, and the scenario errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/hook.h"
#include "aisim/netreg.h"
#include "aisim/network.h"
#include "aisim/rdma.h"
#include "aisim/units.h"
#include "netfix.h"
#include "testutil.h"

typedef struct log {
    int n;
    net_msg m[64];
} log_t;

static void on_done(void *ctx, network *n, const net_msg *m)
{
    (void)n;
    log_t *l = ctx;
    l->m[l->n++] = *m;
}

/* Four hosts on one switch at 10 Gbps, 1 us links. */
#define STAR(extra) \
    "topology: {kind: star, hosts: 4, link: {rate: 10Gbps, delay: 1us, buffer: 1MB" extra "}}\n"

/* On an idle path a WRITE completes at its reference time plus the
 * pulling's nothing: 100 000 B = 100 packets of 1000 B payload + 62 B
 * headers at 10 Gbps; the ACKs are 66 B; every packet is freed. */
static void test_write_meets_ideal_and_conserves(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR("") "transport: {name: rocev2, cc: none}\n");
    log_t l = {0};
    network_send(f.n, 1, 0, 100000, 0, -1, 0, on_done, &l);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 1);
    const net_msg *m = &l.m[0];
    assert_false(m->aborted);
    assert_int_equal(m->finish_ps - m->start_ps, m->ideal_ps);
    topo *t = network_topo(f.n);
    port *down = topo_link_port(t, 0, 1);      /* sw0 -> h0 */
    port *back = topo_link_port(t, 0, 0);      /* h0 -> sw0: the ACKs */
    assert_int_equal(down->stat_tx_pkts, 100);
    assert_int_equal(down->stat_tx_bytes, 100000 + 100 * 62);
    assert_int_equal(back->stat_tx_pkts, 100);          /* ack_interval 1 */
    assert_int_equal(back->stat_tx_bytes, 100 * 66);
    assert_int_equal(pkt_pool_live(network_pool(f.n)), 0);
    fx_free(&f);
}

/* A hook dropping the data packet of PSN `psn` once. */
typedef struct dropper {
    hook h;
    uint64_t psn;
    int done;
} dropper;

static int drop_once(hook *h, port *q, pkt *p)
{
    dropper *d = h->ctx;
    if (p->kind == PKT_DATA && p->seq == d->psn && !d->done) {
        d->done = 1;
        hook_drop(h, q, p);
        return HOOK_TAKEN;
    }
    return HOOK_PASS;
}

/* One lost packet (PSN 10 of 100) on the way to h0: go-back-N resends it
 * and everything sent after it before the NACK came back; selective repeat
 * resends it alone.  Packets on the wire = 100 + resends - 1 (the lost one
 * never crosses sw0 -> h0). */
static void run_one_loss(const char *recovery, uint64_t *rtx, uint64_t *onwire, uint64_t *nacks)
{
    char y[512];
    snprintf(y, sizeof y, STAR("") "transport: {name: rocev2, cc: none, recovery: %s}\n",
             recovery);
    fixture f;
    fx_open(&f, y);
    topo *t = network_topo(f.n);
    port *down = topo_link_port(t, 0, 1);
    dropper d = {.psn = 10};
    hook_init(&d.h, drop_once, &d, "drop");
    hook_attach(down, &d.h);
    log_t l = {0};
    conn *c = network_connect(f.n, 1, 0, 0);
    network_send_on(f.n, c, 100000, -1, 0, on_done, &l);
    rdma_qp *qp = (rdma_qp *)c;
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 1);
    assert_false(l.m[0].aborted);
    assert_int_equal(d.done, 1);
    *rtx = qp->st_rtx;
    *nacks = qp->st_nacks;
    assert_int_equal(qp->st_timeouts, 0);
    *onwire = down->stat_tx_pkts;
    hook_detach(down, &d.h);
    hook_fini(&d.h);
    assert_int_equal(pkt_pool_live(network_pool(f.n)), 0);
    fx_free(&f);
}

static void test_go_back_n_vs_selective_repeat_on_the_wire(void **state)
{
    (void)state;
    uint64_t rtx, onwire, nacks;
    run_one_loss("go_back_n", &rtx, &onwire, &nacks);
    /* NACK once for the gap; resent: PSN 10 .. the highest sent when the
     * NACK arrived (about one round trip of packets: 4 us / 0.85 us) */
    assert_int_equal(nacks, 1);
    assert_true(rtx >= 4 && rtx <= 12);
    assert_int_equal(onwire, 100 + rtx - 1);
    run_one_loss("selective_repeat", &rtx, &onwire, &nacks);
    assert_int_equal(rtx, 1);
    assert_int_equal(onwire, 100);
    assert_true(nacks >= 4);    /* one per packet that arrived past the hole */
}

/* Bytes the receiver of c holds. */
static uint64_t got(conn *c) { return ((rdma_qp *)c)->delivered; }

/* Two QPs into one 100 Gbps port (the fork's 100 Gbps RED), the second
 * 1 ms after the first, with transport `tp`: run to t0, then over `span`
 * the goodput of each (*ra, *rb, bps) and the port's largest backlog,
 * sampled every 20 us.  The fixture stays open for the caller. */
static int64_t two_to_one(fixture *f, const char *tp, int64_t t0, int64_t span, conn **a,
                          conn **b, double *ra, double *rb)
{
    char y[512];
    snprintf(y, sizeof y, "topology: {kind: star, hosts: 3, link: {rate: 100Gbps, delay: 1us, "
             "buffer: 32MB, red_min: 400KB, red_max: 1600KB, red_max_p: 0.2, "
             "red_weight: 1}}\ntransport: %s\n", tp);
    fx_open(f, y);
    *a = network_connect(f->n, 1, 0, 0), *b = network_connect(f->n, 2, 0, 0);
    network_send_on(f->n, *a, UINT64_MAX, -1, 0, NULL, NULL);
    network_send_on(f->n, *b, UINT64_MAX, -1, PS_PER_MS, NULL, NULL);
    sim_run(f->s, t0);
    uint64_t a0 = got(*a), b0 = got(*b);
    port *down = topo_link_port(network_topo(f->n), 0, 1);
    int64_t maxq = 0;
    for (int64_t t = t0 + 20 * PS_PER_US; t <= t0 + span; t += 20 * PS_PER_US) {
        sim_run(f->s, t);
        if (port_backlog(down) > maxq)
            maxq = port_backlog(down);
    }
    *ra = (double)(got(*a) - a0) * 8 / ((double)span * 1e-12);
    *rb = (double)(got(*b) - b0) * 8 / ((double)span * 1e-12);
    return maxq;
}

/* DCQCN, two QPs into one 100 Gbps port, every DCQCN and marking value the
 * HPCC fork's default (mix/config.txt: timer 900 us, F 1, Rai 50 Mbps,
 * Rhai 100 Mbps, g 1/256, alpha every 1 us, a decrease at most every 4 us,
 * target clamped only after an increase; marking at 100 Gbps Kmin 400 KB,
 * Kmax 1600 KB, Pmax 0.2 on the instantaneous queue; a CNP per marked
 * packet): the second starts 1 ms after the first; both are cut hard at
 * first (the queue builds past Kmin before any CNP), recover within a few
 * timer periods because the target was kept, and over 20..40 ms each gets
 * within 10 % of half what the port carries, which is >= 90 % of the
 * link's goodput; the queue stays below Kmax; no QP cuts its rate twice
 * within 4 us.  With a receiver CNP timer, no two CNPs closer than it. */
static void test_dcqcn_two_to_one_converges(void **state)
{
    (void)state;
    fixture f;
    conn *a, *b;
    double ra, rb;
    int64_t maxq = two_to_one(&f, "{name: rocev2, cc: dcqcn}", 20 * PS_PER_MS, 20 * PS_PER_MS,
                              &a, &b, &ra, &rb);
    double fair = (ra + rb) / 2;                /* half of what the port carried */
    rdma_qp *qa = (rdma_qp *)a, *qb = (rdma_qp *)b;
    print_message("dcqcn: %.4g %.4g bps (fair %.4g), max queue %lld B, cuts %llu %llu, "
                  "CNPs %llu %llu\n", ra, rb, fair, (long long)maxq,
                  (unsigned long long)qa->st_cuts, (unsigned long long)qb->st_cuts,
                  (unsigned long long)qa->st_cnp_rcvd, (unsigned long long)qb->st_cnp_rcvd);
    assert_true(ra + rb > 0.9 * 100e9 * 1000 / 1062);  /* >= 90 % of the goodput */
    assert_true(ra > 0.9 * fair && ra < 1.1 * fair);
    assert_true(rb > 0.9 * fair && rb < 1.1 * fair);
    assert_true(maxq < 1600000);
    assert_true(qa->st_cuts > 10 && qb->st_cuts > 10);
    assert_true(qa->st_cnp_rcvd > qa->st_cuts);      /* several CNPs per cut */
    assert_true(qa->cut_min_gap_ps >= 4 * PS_PER_US && qb->cut_min_gap_ps >= 4 * PS_PER_US);
    assert_int_equal(qa->st_cnp_rcvd, qa->st_cnp_sent);
    fx_free(&f);
    /* a receiver with a CNP timer (cnp_interval 20 us) sends at most one
     * per QP per 20 us */
    fx_open(&f, "topology: {kind: star, hosts: 3, link: {rate: 100Gbps, delay: 1us, "
                "buffer: 32MB, red_min: 400KB, red_max: 1600KB, red_max_p: 0.2, "
                "red_weight: 1}}\n"
                "transport: {name: rocev2, cc: dcqcn, cnp_interval: 20us}\n");
    a = network_connect(f.n, 1, 0, 0), b = network_connect(f.n, 2, 0, 0);
    network_send_on(f.n, a, UINT64_MAX, -1, 0, NULL, NULL);
    network_send_on(f.n, b, UINT64_MAX, -1, 0, NULL, NULL);
    sim_run(f.s, 5 * PS_PER_MS);
    qa = (rdma_qp *)a;
    print_message("cnp_interval 20 us: %llu CNPs, shortest gap %lld ps\n",
                  (unsigned long long)qa->st_cnp_sent, (long long)qa->cnp_min_gap_ps);
    assert_true(qa->st_cnp_sent > 3);
    assert_true(qa->cnp_min_gap_ps >= 20 * PS_PER_US);
    fx_free(&f);
}

/* The `window: bdp` window of one QP that sent 1 MB on a two-host 100 Gbps
 * star, with the extra transport keys `keys`, seen at rate `rate`. */
static uint64_t one_qp_window(const char *keys, int64_t rate)
{
    char y[256];
    snprintf(y, sizeof y, "topology: {kind: star, hosts: 3, link: {rate: 100Gbps, delay: 1us}}\n"
             "transport: {name: rocev2, cc: dcqcn, window: bdp, %s}\n", keys);
    fixture f;
    fx_open(&f, y);
    conn *a = network_connect(f.n, 1, 0, 0);
    network_send_on(f.n, a, 1000000, -1, 0, NULL, NULL);
    sim_run(f.s, SIM_TIME_MAX);
    rdma_qp *qa = (rdma_qp *)a;
    qa->rate_bps = rate;
    uint64_t w = rdma_window_bytes(qa);
    fx_free(&f);
    return w;
}

/* `window: bdp` (the HPCC fork's HAS_WIN 1, GLOBAL_T 1, VAR_WIN 1): the same
 * two-to-one with each QP allowed one bandwidth-delay product in flight.
 * Two windows fill the port with about one window queued, far below Kmin
 * (400 KB): nothing is marked, DCQCN never cuts, and the QPs share the
 * port by window, each within 10 % of half of >= 90 % of the goodput (the
 * fork: 49.4 / 48.2 Gbps).  The window is line rate x the largest base RTT
 * (here the ring's data + ACK round trip, 4.02 us: 50 248 B), and with
 * var_window it scales with the QP's rate exactly; without, it does not. */
static void test_dcqcn_window_as_the_fork(void **state)
{
    (void)state;
    fixture f;
    conn *a, *b;
    double ra, rb;
    int64_t maxq = two_to_one(&f, "{name: rocev2, cc: dcqcn, window: bdp}", 2 * PS_PER_MS,
                              4 * PS_PER_MS, &a, &b, &ra, &rb);
    double fair = (ra + rb) / 2;
    rdma_qp *qa = (rdma_qp *)a, *qb = (rdma_qp *)b;
    uint64_t w = rdma_window_bytes(qa);
    print_message("window bdp: %.4g %.4g bps, window %llu B, max queue %lld B\n", ra, rb,
                  (unsigned long long)w, (long long)maxq);
    assert_true(ra + rb > 0.9 * 100e9 * 1000 / 1062);
    assert_true(ra > 0.9 * fair && ra < 1.1 * fair);
    assert_true(rb > 0.9 * fair && rb < 1.1 * fair);
    assert_int_equal(qa->st_cuts + qb->st_cuts, 0);
    assert_int_equal(qa->st_cnp_rcvd + qb->st_cnp_rcvd, 0);
    assert_true(maxq < 2 * (int64_t)w + 2 * 1062);
    /* W = 100 Gbps x T / 8, T the largest base RTT */
    int64_t T = qa->tp->max_rtt_ps;
    assert_true(T >= 4 * PS_PER_US && T < 5 * PS_PER_US);
    assert_int_equal(w, (uint64_t)(100000000000LL / 8 * T / PS_PER_S));
    assert_int_equal(rdma_window_bytes(qb), w);
    qa->rate_bps = 25000000000LL;               /* a quarter of the line rate */
    assert_int_equal(rdma_window_bytes(qa), (uint64_t)(25000000000LL / 8 * T / PS_PER_S));
    qa->rate_bps = 1;                           /* never below one byte */
    assert_int_equal(rdma_window_bytes(qa), 1);
    fx_free(&f);
    /* without var_window the window ignores the rate */
    uint64_t w0 = one_qp_window("var_window: false", 100000000000LL);
    assert_int_equal(one_qp_window("var_window: false", 25000000000LL), w0);
    /* a window given in bytes (the fork's maxBdp), scaled by the rate */
    assert_int_equal(one_qp_window("window_bytes: 52000B", 100000000000LL), 52000);
    assert_int_equal(one_qp_window("window_bytes: 52000B", 40000000000LL), 20800);
}

/* topology.mark_at: dequeue moves the switch ports' marking to dequeue
 * (port.h; test_port checks the packets it marks against the fork's rule)
 * and leaves the hosts' ports alone.  A 16-to-1 burst of 20 packets per QP
 * (no congestion control: the same packets either way, only the marks
 * differ) through one switch port marking above 8 packets of 1062 B (DCTCP
 * step K = 8500 B).  At enqueue every arrival but the first 10 meets more
 * than 8 ahead (the first goes into service): 310 of 320, all judged by
 * 30 us, when the burst has arrived.  At dequeue every departure but the
 * first (nothing behind it yet) and the last 9 (8 or fewer behind) leaves
 * more than 8 behind: 310 too, but judged as they leave, one per 0.85 us
 * from 1.85 us: 34 started by 30 us, 33 of them marked. */
static uint64_t burst_marks(const char *at, uint64_t *early)
{
    char y[512];
    snprintf(y, sizeof y, "topology: {kind: star, hosts: 17, mark_at: %s, link: {rate: 10Gbps, "
             "delay: 1us, buffer: 4MB, ecn_k: 8500B}}\n"
             "transport: {name: rocev2, cc: none}\n", at);
    fixture f;
    fx_open(&f, y);
    topo *t = network_topo(f.n);
    const port *sw = topo_link_port(t, 0, 1), *host = topo_link_port(t, 0, 0);
    int deq = strcmp(at, "dequeue") == 0;
    assert_int_equal(sw->cfg.ecn_k_bytes, deq ? 0 : 8500);
    assert_int_equal(sw->deq_ecn_k_bytes, deq ? 8500 : 0);
    assert_int_equal(host->cfg.ecn_k_bytes, 8500);     /* hosts mark at enqueue */
    assert_true(port_marks_ecn(sw) && port_marks_ecn(host));
    log_t l = {0};
    for (int i = 1; i <= 16; i++)
        network_send(f.n, i, 0, 20 * 1000, 0, -1, 0, on_done, &l);
    sim_run(f.s, 30 * PS_PER_US);
    *early = sw->stat_mark_pkts;
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 16);
    assert_int_equal(sw->stat_tx_pkts, 320);
    uint64_t marks = sw->stat_mark_pkts;
    fx_free(&f);
    return marks;
}

static void test_mark_at_dequeue_on_switch_ports(void **state)
{
    (void)state;
    uint64_t e0, d0, enq = burst_marks("enqueue", &e0), deq = burst_marks("dequeue", &d0);
    print_message("16-to-1 burst, K = 8500 B: %llu marked at enqueue (%llu by 30 us), "
                  "%llu at dequeue (%llu by 30 us)\n", (unsigned long long)enq,
                  (unsigned long long)e0, (unsigned long long)deq, (unsigned long long)d0);
    assert_int_equal(enq, 310);
    assert_int_equal(e0, 310);
    assert_int_equal(deq, 310);
    assert_int_equal(d0, 33);
}

/* 16-to-1 incast of 64 KB each on a star of 17 hosts at 10 Gbps with a
 * 400 KB buffer per port, no congestion control.  Lossless (PFC XOFF 16 KB,
 * XON 8 KB per ingress): no drop, pauses, every message complete.  Lossy:
 * drops, recovered by go-back-N, every message complete, no packet left. */
static double paused_s;

static void run_incast(bool lossless, uint64_t *drops, uint64_t *pauses, uint64_t *rtx)
{
    char y[600];
    snprintf(y, sizeof y,
             "topology: {kind: star, hosts: 17, link: {rate: 10Gbps, delay: 1us, "
             "buffer: 400KB%s}}\n"
             "transport: {name: rocev2, cc: none, lossless: %s}\n",
             lossless ? ", pfc_xoff: 16KB, pfc_xon: 8KB" : "", lossless ? "true" : "false");
    fixture f;
    fx_open(&f, y);
    log_t l = {0};
    for (int i = 1; i <= 16; i++)
        network_send(f.n, i, 0, 64000, 0, -1, 0, on_done, &l);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 16);
    *drops = *pauses = *rtx = 0;
    topo *t = network_topo(f.n);
    for (size_t k = 0; k < topo_links(t); k++)
        for (int d = 0; d < 2; d++) {
            *drops += topo_link_port(t, (int)k, d)->stat_drop_pkts;
            *pauses += topo_link_port(t, (int)k, d)->stat_pfc_pauses;
        }
    for (int i = 1; i <= 16; i++)       /* the senders' NICs pull: nothing waits there */
        assert_int_equal(topo_link_port(t, i, 0)->stat_max_bytes, 0);
    for (int i = 0; i < 16; i++) {
        assert_false(l.m[i].aborted);
        *rtx += l.m[i].at_start.retransmits;    /* 0: each the first on its QP */
    }
    json_t *sum = json_object();
    out *o = NULL;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/incast%d", tu_tmp, lossless);
    err e = {0};
    assert_int_equal(out_open(dir, 0, &o, &e), 0);
    assert_int_equal(network_report(f.n, o, sum, &e), 0);
    assert_int_equal(out_commit(o, &e), 0);
    *rtx = (uint64_t)json_integer_value(json_object_get(sum, "rdma_retransmits"));
    paused_s = json_real_value(json_object_get(sum, "pfc_paused_s"));
    assert_int_equal(json_integer_value(json_object_get(sum, "pfc_pauses")), *pauses);
    assert_int_equal(json_integer_value(json_object_get(sum, "packets_allocated_at_end")), 0);
    /* conservation: every byte injected was delivered or dropped (none left) */
    assert_int_equal(json_integer_value(json_object_get(sum, "bytes_injected")),
                     json_integer_value(json_object_get(sum, "bytes_delivered")) +
                         json_integer_value(json_object_get(sum, "bytes_dropped")));
    assert_int_equal(json_integer_value(json_object_get(sum, "bytes_in_network_at_end")), 0);
    json_decref(sum);
    fx_free(&f);
}

static void test_incast_lossless_vs_lossy(void **state)
{
    (void)state;
    uint64_t drops, pauses, rtx;
    run_incast(true, &drops, &pauses, &rtx);
    print_message("lossless: drops %llu pauses %llu rtx %llu\n", (unsigned long long)drops,
                  (unsigned long long)pauses, (unsigned long long)rtx);
    assert_int_equal(drops, 0);
    assert_true(pauses >= 16);
    assert_int_equal(rtx, 0);
    /* 16 x 64 KB through one 10 Gbps port take >= 839 us: the 16 senders
     * together are paused most of that (at most 16 x the run) */
    print_message("paused %.3g s\n", paused_s);
    assert_true(paused_s > 16 * 400e-6 && paused_s < 16 * 900e-6);
    run_incast(false, &drops, &pauses, &rtx);
    print_message("lossy: drops %llu pauses %llu rtx %llu\n", (unsigned long long)drops,
                  (unsigned long long)pauses, (unsigned long long)rtx);
    assert_true(drops > 100);
    assert_int_equal(pauses, 0);
    assert_true(paused_s == 0);
    assert_true(rtx >= drops);
}

/* HPCC with n senders into one 100 Gbps port: after the first 200 us the
 * bottleneck's queue stays below 40 KB while it runs at >= 90 % of the
 * link. */
static void run_hpcc(int n, int64_t *maxq, double *util)
{
    char y[600];
    snprintf(y, sizeof y,
             "topology: {kind: star, hosts: %d, link: {rate: 100Gbps, delay: 1us, buffer: 4MB}}\n"
             "transport: {name: rocev2, cc: hpcc}\n", n + 1);
    fixture f;
    fx_open(&f, y);
    for (int i = 1; i <= n; i++)
        network_send(f.n, i, 0, UINT64_MAX, 0, -1, 0, NULL, NULL);
    sim_run(f.s, 200 * PS_PER_US);
    port *down = topo_link_port(network_topo(f.n), 0, 1);
    uint64_t tx0 = down->stat_tx_bytes;
    *maxq = 0;
    for (int i = 1; i <= 300; i++) {
        sim_run(f.s, 200 * PS_PER_US + i * PS_PER_US);
        if (port_backlog(down) > *maxq)
            *maxq = port_backlog(down);
    }
    *util = (double)(down->stat_tx_bytes - tx0) * 8 / 300e-6 / 100e9;
    fx_free(&f);
}

static void test_hpcc_small_queue_high_utilisation(void **state)
{
    (void)state;
    int ns[] = {2, 16};
    for (int i = 0; i < 2; i++) {
        int64_t q;
        double u;
        run_hpcc(ns[i], &q, &u);
        print_message("hpcc %d senders: max queue %lld B, utilisation %.3f\n", ns[i],
                      (long long)q, u);
        assert_true(q < 40000);
        assert_true(u >= 0.90);
    }
}

/* Located errors: an MTU below the headers, a lossless fabric without PFC,
 * DCQCN's gain out of range. */
static void test_bad_input(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        {STAR("") "transport: {name: rocev2, mtu: 60B}\n",
         "net.yaml:2:32: net.transport.mtu: expected an MTU above the RoCEv2 headers (62 bytes"},
        {STAR("") "transport: {name: rocev2, lossless: true}\n",
         "net.yaml:2:37: net.transport.lossless: expected PFC (topology pfc_xoff > 0) on every "
         "link of a lossless RDMA fabric, found none on"},
        {STAR("") "transport: {name: rocev2, dcqcn_g: 1.5}\n",
         "net.yaml:2:36: net.transport.dcqcn_g:"},
        {STAR(", red_min: 100KB, red_max: 50KB") "transport: {name: rocev2}\n", "red_max"},
        {STAR(", red_min: 50KB, red_max: 100KB, red_max_p: 0") "transport: {name: rocev2}\n",
         "net.transport.cc: expected RED's red_max_p (Pmax) in (0, 1] for dcqcn's marking, "
         "found 0 on h0->sw0"},
        {STAR("") "transport: {name: rocev2, dcqcn_decrease_interval: 0s}\n",
         "net.yaml:2:52: net.transport.dcqcn_decrease_interval:"},
        {STAR("") "transport: {name: rocev2, dcqcn_clamp_target: maybe}\n",
         "net.yaml:2:47: net.transport.dcqcn_clamp_target:"},
        {STAR("") "transport: {name: rocev2, timely_tlow: 600us}\n",
         "net.transport.timely_tlow: expected timely_tlow below timely_thigh"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fixture f;
        err e = {0};
        int r = fx_make(&f, cases[i].yaml, &e);
        if (r == 0 || !strstr(e.msg, cases[i].want))
            fail_msg("case %zu: got \"%s\"", i, e.msg);
        network_destroy(f.n);
        sim_destroy(f.s);
        cfg_free(f.doc);
    }
}

static double res(json_t *sum, const char *k)
{
    json_t *v = json_object_get(json_object_get(sum, "results"), k);
    if (!v)
        v = json_object_get(sum, k);
    if (!v)
        fail_msg("no %s in the summary", k);
    return json_number_value(v);
}

/* The examples at small size (the permutation for 100 us).  incast: lossless has pauses and no drop,
 * lossy drops and still completes.  loss-recovery at 1 %: selective repeat
 * resends about the lost packets only (<= 1.5 x drops), go-back-N several
 * times more.  websearch (2 ms of arrivals): HPCC's largest queue is
 * below an eighth of DCQCN's (measured 14.9 KB vs 145 KB: DCQCN as the fork
 * runs it holds its queue below Kmax = 160 KB), every flow completes,
 * nothing is dropped. */
static void test_examples(void **state)
{
    (void)state;
    const char *ll[] = {"net.incast.rounds=1"};
    json_t *a = tu_run("rdma/incast-lossless", "ex-ll", ll, 1);
    assert_int_equal(res(a, "drops"), 0);
    assert_true(res(a, "pfc_pauses") > 0);
    const char *ly[] = {"net.incast.rounds=1", "net.transport.lossless=false",
                        "net.topology.link.pfc_xoff=0B", "net.topology.link.pfc_xon=0B"};
    json_t *b = tu_run("rdma/incast-lossless", "ex-ly", ly, 4);
    assert_true(res(b, "drops") > 0);
    assert_int_equal(res(b, "pfc_pauses"), 0);
    assert_int_equal(res(b, "flows_completed"), res(b, "flows"));
    json_decref(a);
    json_decref(b);
    const char *gbn[] = {"net.transport.recovery=go_back_n"};
    const char *sr[] = {"net.transport.recovery=selective_repeat"};
    json_t *g = tu_run("rdma/loss-recovery", "ex-gbn", gbn, 1);
    json_t *r = tu_run("rdma/loss-recovery", "ex-sr", sr, 1);
    print_message("loss 1%%: go-back-N %g resends for %g drops, selective repeat %g for %g\n",
                  res(g, "rdma_retransmits"), res(g, "drops"), res(r, "rdma_retransmits"),
                  res(r, "drops"));
    assert_true(res(r, "rdma_retransmits") >= res(r, "drops"));
    assert_true(res(r, "rdma_retransmits") <= 1.5 * res(r, "drops"));
    assert_true(res(g, "rdma_retransmits") >= 4 * res(g, "drops"));
    assert_int_equal(res(g, "flows_completed"), 2);
    assert_int_equal(res(r, "flows_completed"), 2);
    json_decref(g);
    json_decref(r);
    const char *wd[] = {"net.background.duration=2ms", "net.transport.cc=dcqcn"};
    const char *wh[] = {"net.background.duration=2ms", "net.transport.cc=hpcc"};
    json_t *d = tu_run("rdma/websearch-leafspine", "ex-wd", wd, 2);
    json_t *h = tu_run("rdma/websearch-leafspine", "ex-wh", wh, 2);
    for (json_t *x = d; x; x = x == d ? h : NULL) {
        assert_int_equal(res(x, "flows_completed"), res(x, "flows"));
        assert_int_equal(res(x, "drops"), 0);
    }
    print_message("websearch: max queue dcqcn %g hpcc %g\n", res(d, "max_queue_bytes"),
                  res(h, "max_queue_bytes"));
    assert_true(res(h, "max_queue_bytes") * 8 < res(d, "max_queue_bytes"));
    json_decref(d);
    json_decref(h);
    /* the bench's permutation, its first 100 us: 128 QPs at line rate into
     * a lossless fabric: no drop, every packet accounted for */
    const char *fp[] = {"stop=100us"};
    json_t *p = tu_run("rdma/fattree-permutation", "ex-fp", fp, 1);
    assert_int_equal(res(p, "drops"), 0);
    assert_int_equal(res(p, "rdma_qps"), 128);
    assert_true(res(p, "rdma_packets") > 128 * 500);
    assert_int_equal(res(p, "bytes_injected"),
                     res(p, "bytes_delivered") + res(p, "bytes_dropped") +
                         res(p, "bytes_in_network_at_end"));
    json_decref(p);
    const char *dc[] = {"stop=20ms"};
    json_t *c = tu_run("rdma/dcqcn-two-to-one", "ex-dc", dc, 1);
    assert_true(res(c, "rdma_cnps") > 0);
    json_decref(c);
    /* rdma_rate.csv: both QPs every 50 us while they run; QP 0 alone at
     * 100 Gbps before 1 ms, both cut below it after CNPs */
    char path[300];
    snprintf(path, sizeof path, "%s/ex-dc/rdma_rate.csv", tu_tmp);
    char *csv = tu_slurp(path, NULL);
    assert_true(strncmp(csv, "time_s,qp,rate_bps,window_bytes\n", 32) == 0);
    int rows[2] = {0, 0}, cut[2] = {0, 0};
    for (char *line = strchr(csv, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        double t;
        unsigned q;
        long long rate;
        assert_int_equal(sscanf(line, "%lf,%u,%lld", &t, &q, &rate), 3);
        assert_true(q < 2);
        rows[q]++;
        cut[q] |= rate < 100000000000LL;
        assert_true(q == 1 || t >= 1e-3 || rate == 100000000000LL || cut[0]);
    }
    print_message("rate samples: %d %d\n", rows[0], rows[1]);
    assert_int_equal(rows[0], 20 * 1000 / 50);  /* 50 us .. 20 ms (launched after the 0 s one) */
    assert_int_equal(rows[1], 19 * 1000 / 50 + 1);      /* 1 .. 20 ms */
    assert_true(cut[0] && cut[1]);
    free(csv);
}

/* The same seed gives the same bytes: two runs of a lossy run with random
 * loss write identical flows.csv and rdma_qps.csv. */
static void test_deterministic(void **state)
{
    (void)state;
    json_t *a = tu_run("rdma/loss-recovery", "det-a", NULL, 0);
    json_t *b = tu_run("rdma/loss-recovery", "det-b", NULL, 0);
    json_decref(a);
    json_decref(b);
    tu_assert_same_file("det-a", "det-b", "flows.csv");
    tu_assert_same_file("det-a", "det-b", "rdma_qps.csv");
}

/* A capture of h0 in the two-to-one example: UDP to 4791 with a BTH whose
 * opcode is an RC WRITE (first 0x06 / middle 0x07 / last 0x08 / only 0x0a)
 * for data, ACKNOWLEDGE 0x11 or CNP 0x81 back, the PSN in its last 3 bytes. */
static void test_pcap_bth(void **state)
{
    (void)state;
    const char *sets[] = {"stop=200us", "net.pcap=[h0]"};
    json_decref(tu_run("rdma/dcqcn-two-to-one", "pcap", sets, 2));
    char path[300];
    snprintf(path, sizeof path, "%s/pcap/h0.pcap", tu_tmp);
    size_t n;
    char *b = tu_slurp(path, &n);
    const unsigned char *u = (const unsigned char *)b;
    size_t off = 24, data = 0, acks = 0;
    uint32_t last_psn = 0;
    while (off + 16 <= n) {
        uint32_t cap = u[off + 8] | u[off + 9] << 8 | u[off + 10] << 16 |
                       (uint32_t)u[off + 11] << 24;
        const unsigned char *f = u + off + 16;
        assert_int_equal(f[23], 17);                        /* UDP */
        assert_int_equal(f[36] << 8 | f[37], 4791);         /* dport */
        const unsigned char *bth = f + 42;
        uint32_t psn = (uint32_t)bth[9] << 16 | bth[10] << 8 | bth[11];
        if (bth[0] >= 0x06 && bth[0] <= 0x0a) {
            if (data++ && bth[0] != 0x06)
                assert_true(psn >= last_psn);
            last_psn = psn;
        } else {
            if (bth[0] != 0x11 && bth[0] != 0x81)
                fail_msg("opcode 0x%x", bth[0]);
            acks++;
        }
        off += 16 + cap;
    }
    assert_true(data > 100 && acks > 100);
    free(b);
}

/* ACK coalescing: 100 packets with ack_interval 4 give 25 ACKs (every
 * fourth packet; the last is also the message's end); with 3 an ACK at
 * 3, 6, .., 99 and one at the end (100): 34. */
static void test_ack_interval(void **state)
{
    (void)state;
    int64_t want[] = {25, 34};
    for (int i = 0; i < 2; i++) {
        char y[300];
        snprintf(y, sizeof y, STAR("") "transport: {name: rocev2, cc: none, ack_interval: %d}\n",
                 i ? 3 : 4);
        fixture f;
        fx_open(&f, y);
        log_t l = {0};
        network_send(f.n, 1, 0, 100000, 0, -1, 0, on_done, &l);
        sim_run(f.s, SIM_TIME_MAX);
        assert_int_equal(l.n, 1);
        assert_int_equal(topo_link_port(network_topo(f.n), 0, 0)->stat_tx_pkts, want[i]);
        fx_free(&f);
    }
}

/* READ: the destination's request (78 B) travels first, then the
 * response stream: the message completes one request's one-way trip after
 * the same WRITE would, and the request crosses h0 -> sw0. */
static void test_read_is_request_then_response(void **state)
{
    (void)state;
    int64_t fct[2];
    for (int i = 0; i < 2; i++) {
        fixture f;
        fx_open(&f, i ? STAR("") "transport: {name: rocev2, cc: none, verb: read}\n"
                      : STAR("") "transport: {name: rocev2, cc: none, verb: write}\n");
        log_t l = {0};
        network_send(f.n, 1, 0, 100000, 0, -1, 0, on_done, &l);
        sim_run(f.s, SIM_TIME_MAX);
        assert_int_equal(l.n, 1);
        fct[i] = l.m[0].finish_ps - l.m[0].start_ps;
        port *back = topo_link_port(network_topo(f.n), 0, 0);
        assert_int_equal(back->stat_tx_bytes, 100 * 66 + (i ? 78 : 0));
        fx_free(&f);
    }
    /* one way for 78 B: 2 x (62.4 ns + 1 us) */
    int64_t req = 2 * (units_tx_time_ps(78, 10000000000) + PS_PER_US);
    assert_int_equal(fct[1] - fct[0], req);
}

/* The NIC's weighted round robin: h1 runs two QPs (to h0 and to h2) at
 * weights 3 and 1 with no congestion control; while both are backlogged
 * the NIC link splits 3:1.  Pulled packets never wait in the NIC's queue. */
static void test_nic_weighted_round_robin(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR("") "transport: {name: rocev2, cc: none}\n");
    conn *a = network_connect(f.n, 1, 0, 0), *b = network_connect(f.n, 1, 2, 0);
    network_send_on(f.n, a, UINT64_MAX, -1, 0, NULL, NULL);
    network_send_on(f.n, b, UINT64_MAX, -1, 0, NULL, NULL);
    rdma_qp_set_weight((rdma_qp *)a, 3);
    sim_run(f.s, 1 * PS_PER_MS);
    uint64_t ga = got(a), gb = got(b);
    double r = (double)ga / (double)gb;
    print_message("weighted 3:1: %llu / %llu = %.3f\n", (unsigned long long)ga,
                  (unsigned long long)gb, r);
    assert_true(r > 2.95 && r < 3.05);
    port *nic = topo_link_port(network_topo(f.n), 1, 0);    /* h1 -> sw0 */
    assert_int_equal(nic->stat_max_bytes, 0);
    assert_true(nic->stat_tx_bytes > 1250000 * 99 / 100);     /* the link stays busy */
    fx_free(&f);
}

/* The NIC's packet-rate cap: 1 Mpps of 1062 B packets leaves 8.5 of 10
 * Gbps: 1000 packets take 1 ms (999 gaps of 1 us plus the path).  Its
 * processing-rate cap: the same at 5 Gbps spaces them by 1.6992 us. */
static void test_nic_pps_cap(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR("") "transport: {name: rocev2, cc: none, nic_pps: 1000000}\n");
    log_t l = {0};
    network_send(f.n, 1, 0, 1000000, 0, -1, 0, on_done, &l);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 1);
    int64_t fct = l.m[0].finish_ps - l.m[0].start_ps;
    int64_t want = 999 * PS_PER_US + 2 * (units_tx_time_ps(1062, 10000000000) + PS_PER_US);
    assert_int_equal(fct, want);
    fx_free(&f);
    /* a 5 Gbps NIC on a 10 Gbps link: one packet every 1.6992 us */
    fx_open(&f, STAR("") "transport: {name: rocev2, cc: none, nic_rate: 5Gbps}\n");
    l.n = 0;
    network_send(f.n, 1, 0, 1000000, 0, -1, 0, on_done, &l);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 1);
    fct = l.m[0].finish_ps - l.m[0].start_ps;
    want = 999 * units_tx_time_ps(1062, 5000000000) +
           2 * (units_tx_time_ps(1062, 10000000000) + PS_PER_US);
    assert_int_equal(fct, want);
    fx_free(&f);
}

/* A path that drops everything (a blackhole fault on sw0 -> h0): the QP
 * times out max_timeouts + 1 times, 320 us apart, then gives up; its
 * message is aborted; nothing is left allocated. */
static void test_timeouts_then_abort(void **state)
{
    (void)state;
    fixture f;
    err e = {0};
    const char *y = STAR("") "transport: {name: rocev2, cc: none, max_timeouts: 3}\n"
                    "faults: [{kind: blackhole, port: \"sw0->h0\"}]\n";
    memset(&f, 0, sizeof f);
    assert_int_equal(cfg_load_string("net.yaml", y, strlen(y), &f.doc, &e), 0);
    f.s = sim_create();
    network_cfg c = {.pcap_max = 10};
    cfg_node *root = cfg_root(f.doc);
    c.topology = cfg_get(root, "topology");
    c.transport = cfg_get(root, "transport");
    c.faults = cfg_get(root, "faults");
    model_env env = {.sim = f.s, .seed = 1, .base_dir = ".", .stop_ps = SIM_TIME_MAX,
                     .net = net_registry_builtin()};
    if (network_create(&f.n, &c, root, "net", &env, &e))
        fail_msg("%s", e.msg);
    network_start(f.n);
    log_t l = {0};
    conn *k = network_connect(f.n, 1, 0, 0);
    network_send_on(f.n, k, 10000, -1, 0, on_done, &l);
    rdma_qp *qp = (rdma_qp *)k;
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 1);
    assert_true(l.m[0].aborted);
    assert_int_equal(qp->st_timeouts, 4);
    assert_int_equal(qp->st_pkts, 10 * 4);      /* the first send and three resends */
    assert_int_equal(qp->st_rtx, 30);
    assert_int_equal(pkt_pool_live(network_pool(f.n)), 0);
    fx_free(&f);
}

/* n long QPs into one 10 Gbps port under `cc`: the largest queue over
 * 2..10 ms (sampled every 10 us) and the port's utilisation then. */
static void run_cc(const char *cc, const char *link, int n, int64_t *maxq, double *util)
{
    char y[600];
    snprintf(y, sizeof y,
             "topology: {kind: star, hosts: %d, link: {rate: 10Gbps, delay: 1us, buffer: 2MB%s}}\n"
             "transport: {name: rocev2, cc: %s}\n", n + 1, link, cc);
    fixture f;
    fx_open(&f, y);
    for (int i = 1; i <= n; i++)
        network_send(f.n, i, 0, UINT64_MAX, 0, -1, 0, NULL, NULL);
    sim_run(f.s, 2 * PS_PER_MS);
    port *down = topo_link_port(network_topo(f.n), 0, 1);
    uint64_t tx0 = down->stat_tx_bytes;
    *maxq = 0;
    for (int i = 1; i <= 800; i++) {
        sim_run(f.s, 2 * PS_PER_MS + i * 10 * PS_PER_US);
        if (port_backlog(down) > *maxq)
            *maxq = port_backlog(down);
    }
    *util = (double)(down->stat_tx_bytes - tx0) * 8 / 8e-3 / 10e9;
    fx_free(&f);
}

/* DCTCP over RoCE with the step at K = 30 KB and the fork's gain g = 1/256
 * and increase of 1 Gbps per RTT: the queue stays below 300 KB (alpha
 * adapts slowly at that gain, so the queue overshoots K) with the port at
 * >= 90 %.  TIMELY: the
 * queue stays below t_high's worth (500 us at 10 Gbps = 625 KB), far
 * below the 2 MB buffer that no congestion control fills, at >= 80 %
 * (TIMELY's rate oscillates: 86 % here). */
static void test_dctcp_and_timely_bound_the_queue(void **state)
{
    (void)state;
    int64_t q;
    double u;
    run_cc("dctcp", ", ecn_k: 30KB", 4, &q, &u);
    print_message("dctcp: max queue %lld B, utilisation %.3f\n", (long long)q, u);
    assert_true(q < 300000);
    assert_true(u >= 0.90);
    run_cc("timely", "", 4, &q, &u);
    print_message("timely: max queue %lld B, utilisation %.3f\n", (long long)q, u);
    assert_true(q < 625000);
    assert_true(u >= 0.80);
    run_cc("none", "", 4, &q, &u);
    print_message("none: max queue %lld B\n", (long long)q);
    assert_true(q > 1900000);
}

/* Two GPUs of one server: the QP runs over NVLink (NCCL's peer-to-peer
 * path) at the NVLink rate without congestion control; across servers by
 * the NICs.  100 000 B = 100 packets of 1062 B: 0.94 us of serialisation at
 * 900 Gbps, 8.5 us at 100 Gbps. */
static void test_qp_between_gpus_of_a_server_uses_nvlink(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: dual_plane, servers: 2, gpus_per_server: 2, servers_per_tor: 2,"
                " aggs: 1, nic_link: {rate: 100Gbps}, fabric_link: {rate: 100Gbps},"
                " nvlink: {rate: 900Gbps}}\n"
                "transport: {name: rocev2, cc: dcqcn}\n");
    log_t l = {0};
    conn *nv = network_connect(f.n, 0, 1, 0), *nic = network_connect(f.n, 0, 2, 0);
    network_send_on(f.n, nv, 100000, -1, 0, on_done, &l);      /* server 0: GPU 0 -> GPU 1 */
    network_send_on(f.n, nic, 100000, -1, 0, on_done, &l);     /* -> server 1's GPU 0 */
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 2);
    assert_false(l.m[0].aborted || l.m[1].aborted);
    assert_true(l.m[0].dst == 1 && l.m[1].dst == 2);
    assert_ptr_equal(((rdma_qp *)nv)->cc, &rdma_cc_none);
    assert_ptr_equal(((rdma_qp *)nic)->cc, &rdma_cc_dcqcn);
    assert_int_equal(((rdma_qp *)nv)->line_bps, 900000000000LL);
    print_message("nvlink %lld ps, nic %lld ps\n", (long long)l.m[0].finish_ps,
                  (long long)l.m[1].finish_ps);
    assert_true(l.m[0].finish_ps < 2 * PS_PER_US);
    assert_true(l.m[1].finish_ps > 8 * PS_PER_US);
    fx_free(&f);
}

/* A hook dropping the data packets of two PSNs once each. */
typedef struct dropper2 {
    hook h;
    uint64_t psn[2];
    int done[2];
} dropper2;

static int drop_two(hook *h, port *q, pkt *p)
{
    dropper2 *d = h->ctx;
    for (int i = 0; i < 2; i++)
        if (p->kind == PKT_DATA && p->seq == d->psn[i] && !d->done[i]) {
            d->done[i] = 1;
            hook_drop(h, q, p);
            return HOOK_TAKEN;
        }
    return HOOK_PASS;
}

/* Six messages of mixed sizes on one QP (1 B .. 100 KB; 178 packets), two
 * packets lost (PSN 3: the last of message 2; PSN 60: inside message 3),
 * for each recovery and verb: every message completes, in order, the
 * stream is delivered whole; selective repeat resends exactly the two. */
static void test_messages_on_one_qp_with_losses(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {1, 5000, 100000, 1000, 64000, 3000};
    const char *rec[] = {"go_back_n", "selective_repeat"};
    const char *verb[] = {"write", "read", "send"};
    for (int r = 0; r < 2; r++)
        for (int v = 0; v < 3; v++) {
            char y[400];
            snprintf(y, sizeof y, STAR("") "transport: {name: rocev2, cc: none, recovery: %s, "
                     "verb: %s, ack_interval: 2}\n", rec[r], verb[v]);
            fixture f;
            fx_open(&f, y);
            dropper2 d = {.psn = {3, 60}};
            hook_init(&d.h, drop_two, &d, "drop2");
            port *down = topo_link_port(network_topo(f.n), 0, 1);
            hook_attach(down, &d.h);
            log_t l = {0};
            conn *c = network_connect(f.n, 1, 0, 0);
            uint64_t total = 0;
            for (int i = 0; i < 6; i++) {
                network_send_on(f.n, c, sizes[i], i, 0, on_done, &l);
                total += sizes[i];
            }
            rdma_qp *qp = (rdma_qp *)c;
            sim_run(f.s, SIM_TIME_MAX);
            assert_int_equal(l.n, 6);
            for (int i = 0; i < 6; i++) {
                assert_int_equal(l.m[i].tag, i);
                assert_false(l.m[i].aborted);
                assert_true(i == 0 || l.m[i].finish_ps >= l.m[i - 1].finish_ps);
            }
            assert_int_equal(qp->delivered, total);
            assert_int_equal(qp->st_bytes_acked, total);
            assert_int_equal(qp->psn_end, 1 + 5 + 100 + 1 + 64 + 3);
            assert_true(d.done[0] && d.done[1]);
            if (r == 1)
                assert_int_equal(qp->st_rtx, 2);
            else
                assert_true(qp->st_rtx > 2);
            assert_int_equal(qp->st_timeouts, 0);
            hook_detach(down, &d.h);
            hook_fini(&d.h);
            fx_free(&f);
        }
}

/* The default path hook follows the network's routing: with spray_rr a
 * QP's packets take a new path index each, so a 400-packet WRITE between
 * pods of a k = 4 fat-tree crosses all four cores (100 packets each);
 * with ECMP it uses one.  Selective repeat absorbs any reordering. */
static void test_path_hook_sprays(void **state)
{
    (void)state;
    for (int spray = 0; spray < 2; spray++) {
        fx_routing = spray ? NET_ROUTE_SPRAY_RR : NET_ROUTE_ECMP;
        fixture f;
        fx_open(&f, "topology: {kind: fat_tree, k: 4, link: {rate: 10Gbps, delay: 1us}}\n"
                    "transport: {name: rocev2, cc: none, recovery: selective_repeat}\n");
        fx_routing = NET_ROUTE_ECMP;
        log_t l = {0};
        network_send(f.n, 0, 15, 400000, 0, -1, 0, on_done, &l);
        sim_run(f.s, SIM_TIME_MAX);
        assert_int_equal(l.n, 1);
        assert_false(l.m[0].aborted);
        topo *t = network_topo(f.n);
        int used = 0;
        for (int c = 0; c < 4; c++) {   /* data: core -> the destination pod's aggs */
            char pre[32];
            snprintf(pre, sizeof pre, "core%d->agg3_", c);
            uint64_t tx = 0;
            for (size_t k = 0; k < topo_links(t); k++)
                for (int d = 0; d < 2; d++) {
                    const port *q = topo_link_port(t, (int)k, d);
                    if (strncmp(q->base.name, pre, strlen(pre)) == 0)
                        tx += q->stat_tx_pkts;
                }
            if (spray)
                assert_int_equal(tx, 100);
            used += tx > 0;
        }
        assert_int_equal(used, spray ? 4 : 1);
        fx_free(&f);
    }
}

/* A link failure and repair under a QP (h1's link, down from 10 us to
 * 500 us, routing converging 100 us later): the packets lost with it are
 * resent after timeouts and the message completes after the repair, with
 * every packet accounted for. */
static void test_link_failure_and_repair(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        fixture f;
        err e = {0};
        char y[400];
        snprintf(y, sizeof y, STAR("") "transport: {name: rocev2, cc: none, recovery: %s}\n"
                 "failures: [{a: h1, b: sw0, at: 10us, repair: 500us}]\n",
                 r ? "selective_repeat" : "go_back_n");
        memset(&f, 0, sizeof f);
        assert_int_equal(cfg_load_string("net.yaml", y, strlen(y), &f.doc, &e), 0);
        f.s = sim_create();
        network_cfg c = {.pcap_max = 10};
        cfg_node *root = cfg_root(f.doc);
        c.topology = cfg_get(root, "topology");
        c.transport = cfg_get(root, "transport");
        c.failures = cfg_get(root, "failures");
        model_env env = {.sim = f.s, .seed = 1, .base_dir = ".", .stop_ps = SIM_TIME_MAX,
                     .net = net_registry_builtin()};
        if (network_create(&f.n, &c, root, "net", &env, &e))
            fail_msg("%s", e.msg);
        network_start(f.n);
        log_t l = {0};
        conn *k = network_connect(f.n, 1, 0, 0);
        network_send_on(f.n, k, 1000000, -1, 0, on_done, &l);
        rdma_qp *qp = (rdma_qp *)k;
        sim_run(f.s, SIM_TIME_MAX);
        assert_int_equal(l.n, 1);
        assert_false(l.m[0].aborted);
        assert_true(l.m[0].finish_ps > 600 * PS_PER_US);
        assert_true(qp->st_timeouts >= 1);
        assert_true(qp->st_rtx >= 1);
        assert_int_equal(qp->delivered, 1000000);
        assert_int_equal(pkt_pool_live(network_pool(f.n)), 0);
        fx_free(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_meets_ideal_and_conserves),
        cmocka_unit_test(test_go_back_n_vs_selective_repeat_on_the_wire),
        cmocka_unit_test(test_messages_on_one_qp_with_losses),
        cmocka_unit_test(test_dcqcn_two_to_one_converges),
        cmocka_unit_test(test_dcqcn_window_as_the_fork),
        cmocka_unit_test(test_mark_at_dequeue_on_switch_ports),
        cmocka_unit_test(test_incast_lossless_vs_lossy),
        cmocka_unit_test(test_hpcc_small_queue_high_utilisation),
        cmocka_unit_test(test_dctcp_and_timely_bound_the_queue),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_qp_between_gpus_of_a_server_uses_nvlink),
        cmocka_unit_test(test_ack_interval),
        cmocka_unit_test(test_read_is_request_then_response),
        cmocka_unit_test(test_nic_weighted_round_robin),
        cmocka_unit_test(test_path_hook_sprays),
        cmocka_unit_test(test_nic_pps_cap),
        cmocka_unit_test(test_timeouts_then_abort),
        cmocka_unit_test(test_link_failure_and_repair),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_pcap_bth),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
