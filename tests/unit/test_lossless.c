/*
 * test_lossless.c - lossless classes (src/net/lossless.c): the headroom
 * bound and the topology check that refuses buffers fan-in can overflow,
 * a run at the bound that never drops, a lossless drop failing the run,
 * and the PFC deadlock of a switch ring reported with its cycle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "aisim/network.h"
#include "aisim/topo.h"
#include "net/lossless.h"
#include "netfix.h"

static void on_done(void *ctx, network *n, const net_msg *m)
{
    (void)n, (void)m;
    (*(int *)ctx)++;
}

/* A 10 Gbps, 1 us link, XOFF 64 KB, one class, 1062-byte packets
 * (RoCEv2: 1000 B payload + 62 B of headers):
 *   1 x (64000 + 1062) + 2 x 1 us x 10 Gbps / 8 (= 2500) + 1062 = 68624 B. */
static void test_lossless_link_bound_by_hand(void **state)
{
    (void)state;
    port q;
    memset(&q, 0, sizeof q);
    q.cfg.rate_bps = 10000000000;
    q.cfg.nprio = 1;
    q.cfg.pfc_xoff_bytes = 64000;
    assert_int_equal(lossless_link_bound(&q, 1000000, 1062), 68624);
    q.cfg.nprio = 2;            /* XOFF and its crossing packet per class */
    assert_int_equal(lossless_link_bound(&q, 1000000, 1062), 68624 + 65062);
    q.cfg.nprio = 1;            /* 333 ns at 10 Gbps: 2 x 416.25 B, rounded up */
    assert_int_equal(lossless_link_bound(&q, 333000, 1062), 64000 + 1062 + 833 + 1062);
}

#define STAR(BUF)                                                                           \
    "topology: {kind: star, hosts: 4, link: {rate: 10Gbps, delay: 1us, buffer: " BUF        \
    ", pfc_xoff: 64KB, pfc_xon: 32KB}}\n"                                                   \
    "transport: {name: rocev2, cc: none, lossless: true}\n"

/* Three senders may each have 68624 B at the switch, all for h0's port:
 * 205872 B.  A 100 KB buffer is refused with that arithmetic; at 205872 B
 * an incast that fills it never drops, and the queue stays within it. */
static void test_lossless_fanin_refused_or_never_drops(void **state)
{
    (void)state;
    fixture f;
    err e = {0};
    assert_int_not_equal(fx_make(&f, STAR("100KB"), &e), 0);
    assert_non_null(strstr(e.msg, "net.topology: a lossless (PFC) class can overflow port "
                                  "sw0->h0: its buffer is 100000 B, but its 3 PFC ingress links "
                                  "may hold 205872 B together"));
    assert_non_null(strstr(e.msg, "1 x (pfc_xoff 64000 + packet 1062) + in flight 2 x 1 us x "
                                  "10 Gbps = 2500 + packet 1062 = 68624 B"));
    fx_free(&f);
    fx_open(&f, STAR("205872B"));
    int done = 0;
    for (int i = 1; i <= 3; i++)
        network_send(f.n, i, 0, 2000000, 0, -1, 0, on_done, &done);
    assert_int_equal(sim_run(f.s, SIM_TIME_MAX), 0);
    assert_null(sim_failure(f.s));
    assert_int_equal(done, 3);
    const port *down = topo_link_port(network_topo(f.n), 0, 1);     /* sw0 -> h0 */
    assert_int_equal(down->stat_drop_pkts, 0);
    assert_true(down->stat_pfc_pauses == 0);
    assert_true(down->stat_max_bytes > 150000);     /* it came near the bound */
    assert_true(down->stat_max_bytes <= 205872);
    fx_free(&f);
}

/* What the check cannot rule out still fails the run: RED without ECN
 * drops RoCEv2 packets that came over a PFC link. */
static void test_lossless_drop_fails_the_run(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: star, hosts: 3, link: {rate: 10Gbps, delay: 1us, buffer: 1MB,"
                " pfc_xoff: 64KB, pfc_xon: 32KB, qdisc: {kind: red, min: 5KB, max: 20KB,"
                " weight: 1, ecn: false}}}\n"
                "transport: {name: rocev2, cc: none, lossless: true}\n");
    int done = 0;
    for (int i = 1; i <= 2; i++)
        network_send(f.n, i, 0, 1000000, 0, -1, 0, on_done, &done);
    assert_int_equal(sim_run(f.s, SIM_TIME_MAX), -1);
    assert_non_null(sim_failure(f.s));
    assert_non_null(strstr(sim_failure(f.s), "lossless drop: port sw0->h0 dropped a 1062-byte "
                                             "packet of class 0 that came over PFC link "));
    assert_non_null(strstr(sim_failure(f.s), "(red;"));
    fx_free(&f);
}

/* Five switches in a ring, a host on each. */
#define RING                                                                                \
    "topology:\n  kind: custom\n  hosts: [h0, h1, h2, h3, h4]\n"                            \
    "  switches: [s0, s1, s2, s3, s4]\n"                                                    \
    "  link: {rate: 10Gbps, delay: 1us, buffer: 64KB, pfc_xoff: 20KB, pfc_xon: 10KB}\n"      \
    "  links:\n"                                                                            \
    "    - {a: h0, b: s0}\n    - {a: h1, b: s1}\n    - {a: h2, b: s2}\n"                    \
    "    - {a: h3, b: s3}\n    - {a: h4, b: s4}\n"                                         \
    "    - {a: s0, b: s1}\n    - {a: s1, b: s2}\n    - {a: s2, b: s3}\n"                    \
    "    - {a: s3, b: s4}\n    - {a: s4, b: s0}\n"                                         \
    "transport: {name: rocev2, cc: none, lossless: true}\n"

/* Five switches in a ring, each host sending to the host two switches on:
 * every ring port carries two flows, pauses spread around the ring and
 * close a cycle of paused ports that holds.  Reported as a deadlock with
 * the five ports, 1 ms after it closed. */
static void test_lossless_ring_deadlock_is_reported(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, RING);
    int done = 0;
    for (int i = 0; i < 5; i++)
        network_send(f.n, i, (i + 2) % 5, 10000000, 0, -1, 0, on_done, &done);
    assert_int_equal(sim_run(f.s, SIM_TIME_MAX), -1);
    const char *why = sim_failure(f.s);
    assert_non_null(why);
    assert_non_null(strstr(why, "PFC deadlock: 5 ports in a cycle paused in class 0 for 1 ms "
                                "without release: "));
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "s%d->s%d", i, (i + 1) % 5);
        assert_non_null(strstr(why, name));
    }
    assert_true(sim_now(f.s) > PFC_DEADLOCK_HOLD_PS);
    assert_true(sim_now(f.s) < 2 * PFC_DEADLOCK_HOLD_PS);
    assert_int_equal(done, 0);
    fx_free(&f);
}

/* The same ring with one flow: no cycle, nothing reported. */
static void test_lossless_ring_without_cycle_runs(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, RING);
    int done = 0;
    network_send(f.n, 0, 2, 1000000, 0, -1, 0, on_done, &done);
    network_send(f.n, 1, 2, 1000000, 0, -1, 0, on_done, &done);
    assert_int_equal(sim_run(f.s, SIM_TIME_MAX), 0);
    assert_null(sim_failure(f.s));
    assert_int_equal(done, 2);
    fx_free(&f);
}

/* Ring port i: s{i} -> s{i+1} (links 5..9 of RING, direction 0). */
static port *ring_port(fixture *f, int i) { return topo_link_port(network_topo(f->n), 5 + i, 0); }

/* Pauses the five ring ports by hand, then queues in each a packet that
 * came over the previous one's wire: the last enqueue (into a paused,
 * empty class) closes the cycle, and the watch holds it to the test. */
static void close_ring_by_hand(fixture *f, int from_host)
{
    for (int i = 0; i < 5; i++) {
        ring_port(f, i)->pfc_paused = 1;
        ring_port(f, i)->pfc_since[0] = 0;
    }
    for (int i = 0; i < 5; i++) {
        pkt *p = pkt_alloc(network_pool(f->n));
        p->size_bytes = 1000;
        /* from_host: the packet came from the switch's own host (h{i} ->
         * s{i}, link i direction 0), so the port does not hold up the
         * previous ring port: no cycle of waiting, only of pauses */
        p->in = topo_link_wire(network_topo(f->n), from_host ? i : 5 + (i + 4) % 5, 0);
        port_admit(ring_port(f, i), p);
    }
}

static void repause(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    ((port *)obj)->pfc_since[0] = sim_now(s);   /* released and paused again */
}

/* A cycle closed by enqueues is found; it is a deadlock only if no port of
 * it was released in the hold time: one port released and paused again at
 * 0.5 ms is not reported (the cycle is held again from there and reported
 * 1 ms after that); ports paused in a ring whose packets came from their
 * own hosts wait for nobody on the ring and are not a cycle. */
static void test_lossless_watch_holds_a_cycle_to_the_test(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, RING);
    close_ring_by_hand(&f, 0);
    assert_int_equal(sim_run(f.s, PFC_DEADLOCK_HOLD_PS + 1), -1);
    assert_non_null(strstr(sim_failure(f.s), "PFC deadlock: 5 ports"));
    fx_free(&f);

    fx_open(&f, RING);
    close_ring_by_hand(&f, 0);
    sim_schedule(f.s, PFC_DEADLOCK_HOLD_PS / 2, repause, ring_port(&f, 2), 0);
    assert_int_equal(sim_run(f.s, PFC_DEADLOCK_HOLD_PS + 1), 0);
    assert_null(sim_failure(f.s));
    assert_int_equal(sim_run(f.s, 2 * PFC_DEADLOCK_HOLD_PS + 1), -1);
    assert_non_null(strstr(sim_failure(f.s), "PFC deadlock: 5 ports"));
    fx_free(&f);

    fx_open(&f, RING);
    close_ring_by_hand(&f, 1);
    assert_int_equal(sim_run(f.s, 3 * PFC_DEADLOCK_HOLD_PS), 0);
    assert_null(sim_failure(f.s));
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lossless_link_bound_by_hand),
        cmocka_unit_test(test_lossless_fanin_refused_or_never_drops),
        cmocka_unit_test(test_lossless_drop_fails_the_run),
        cmocka_unit_test(test_lossless_ring_deadlock_is_reported),
        cmocka_unit_test(test_lossless_ring_without_cycle_runs),
        cmocka_unit_test(test_lossless_watch_holds_a_cycle_to_the_test),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
