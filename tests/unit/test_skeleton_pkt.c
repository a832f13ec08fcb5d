/*
 * test_skeleton_pkt.c - SkeletonHunter's probes as real packets
 * (skel_pkt.c): probes of the Basic list as datagram request/reply
 * messages on a small rail-optimised fabric, RTTs from the packets, a
 * blackholed ToR port (fault.h) detected from the lost probes and
 * localized to that port by the vote.
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

#include "aisim/network.h"
#include "aisim/skeleton.h"
#include "aisim/topo.h"
#include "aisim/units.h"
#include "systems/skeleton/skel_pkt.h"

#include "netfix.h"

/* 4 servers x 2 GPUs, 2 servers per ToR (2 segments, 2 rails: 4 ToRs), 2
 * aggs; 100 Gbps NIC links, 1 us per link; datagrams. */
#define FABRIC                                                                                \
    "topology: {kind: rail_optimised, servers: 4, gpus_per_server: 2, servers_per_tor: 2,\n" \
    "  aggs: 2, nic_link: {rate: 100Gbps, delay: 1us, buffer: 1MB},\n"                        \
    "  fabric_link: {rate: 100Gbps, delay: 1us, buffer: 1MB},\n"                              \
    "  nvlink: {rate: 1000Gbps, delay: 100ns, buffer: 1MB}}\n"                                \
    "transport: {name: dgram}\n"

enum { NEP = 8 };

/* The Basic list (same rail, other server) of the 8 endpoints, probed for
 * `rounds` seconds at 1 target/s. */
static void probe(fixture *f, skel_prober *pr, int rounds)
{
    skel_ep v[NEP];
    for (int l = 0; l < NEP; l++)
        v[l] = (skel_ep){.host = l / 2, .rail = l % 2, .tor = (l / 4) * 2 + l % 2};
    uint32_t off[NEP + 1], idx[NEP * NEP];
    off[0] = 0;
    for (int l = 0; l < NEP; l++)
        off[l + 1] = off[l] + (uint32_t)skel_targets(v, NEP, (size_t)l, SKEL_LIST_BASIC,
                                                     idx + off[l]);
    assert_int_equal(off[NEP], NEP * 3);
    *pr = (skel_prober){.n = f->n, .bytes = 64, .interval_ps = PS_PER_S, .timeout_ps = PS_PER_S,
                        .slow_ps = 100 * PS_PER_US};
    skel_prober_plan(pr, NEP, off, idx, rounds);
    sim_run(f->s, SIM_TIME_MAX);
}

/* The RTT of a probe on the healthy fabric is the request's and the
 * reply's time on the wire and in the ports: per link 1 us + 92 B (64 B
 * + 28 B of IPv4/UDP) at 100 Gbps = 7.36 ns; same ToR 2 links each way,
 * through an agg 4. */
static void test_rtt_from_packets(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, FABRIC);
    skel_prober pr;
    probe(&f, &pr, 3);
    assert_int_equal(pr.np, 3 * NEP);
    topo *t = network_topo(f.n);
    for (size_t i = 0; i < pr.np; i++) {
        const skel_pprobe *p = &pr.p[i];
        bool same_tor = p->src / 4 == p->dst / 4;
        double hops = same_tor ? 4 : 8;
        assert_true(p->rtt_ps > 0);
        assert_false(skel_pprobe_bad(&pr, p));
        assert_float_equal((double)p->rtt_ps, hops * (1e6 + 7360), 1);
        size_t np;
        const route *const *rs = topo_paths(t, p->src, p->dst, &np);
        assert_int_equal(np, same_tor ? 1 : 2);
        (void)rs;
    }
    size_t bad;
    assert_int_equal(skel_pkt_localize(&pr, 0, pr.np, &bad), -1);
    assert_int_equal(bad, 0);
    skel_prober_fini(&pr);
    fx_free(&f);
}

/* A port goes black at 4.5 s, tor0.r0's to s1.g0 (down) or s1.g0's NIC
 * port to tor0.r0 (up): from then on every probe to or from s1.g0 is lost
 * (its requests, or the replies to it), the others still answer.  The
 * responder's log tells which leg died: down, requests to s1.g0 are lost
 * and s1.g0's own arrive; up, the other way round.  The vote names the
 * port that went black, in its direction, and nothing else. */
static void blackhole(bool down)
{
    fixture f;
    char y[1024];
    snprintf(y, sizeof y, "%sfaults: [{kind: blackhole, port: \"%s\", at: 4.5s}]\n", FABRIC,
             down ? "tor0.r0->s1.g0" : "s1.g0->tor0.r0");
    fx_open(&f, y);
    skel_prober pr;
    probe(&f, &pr, 10);
    topo *t = network_topo(f.n);
    int victim = topo_node_host(t, topo_find_node(t, "s1.g0"));
    assert_int_equal(victim, 2);
    size_t lost = 0, first = pr.np;
    int64_t first_bad = -1;
    for (size_t i = 0; i < pr.np; i++) {
        const skel_pprobe *p = &pr.p[i];
        bool hit = p->sent_ps >= 4500 * PS_PER_MS && (p->src == victim || p->dst == victim);
        assert_int_equal(skel_pprobe_bad(&pr, p), hit);
        if (hit) {
            /* the request reaches s1.g0 iff the down port works (probes
             * to it), leaves it iff the up port does (its own) */
            bool req = p->dst == victim ? !down : down;
            assert_int_equal(p->req_ps >= 0, req);
            assert_true(p->rtt_ps < 0);
            lost++;
            if (first_bad < 0)
                first_bad = p->sent_ps;
            if (first == pr.np)
                first = i;
        } else
            assert_int_equal(p->rtt_ps, 2 * p->req_ps);
    }
    /* lost: s1.g0's own probes (at k + 2/8 s) of rounds 5..9, and its 3
     * rail peers' probes of it (each probes it every third round): s0.g0
     * in rounds 6 and 9, s2.g0 in 4 and 7, s3.g0 in 4 and 7 */
    assert_int_equal(lost, 11);
    /* the first: s2.g0's (at 4 + 4/8 s), sent the instant the port went
     * black */
    assert_int_equal(first_bad, 4 * PS_PER_S + 4 * PS_PER_S / 8);
    /* the vote over the probes since the first anomaly (a healthy probe
     * from before the failure would exonerate the port) */
    size_t bad;
    int32_t hop = skel_pkt_localize(&pr, first, pr.np, &bad);
    assert_int_equal(bad, 11);
    int tor = topo_find_node(t, "tor0.r0"), host = topo_find_node(t, "s1.g0");
    int link = topo_find_link(t, tor, host);
    int a, b;
    topo_link_ends(t, link, &a, &b);
    int from = down ? tor : host;
    assert_int_equal(hop, link * 2 + (a == from ? 0 : 1));
    skel_prober_fini(&pr);
    fx_free(&f);
}

static void test_blackholed_tor_port(void **state)
{
    (void)state;
    blackhole(true);
}

static void test_blackholed_nic_port(void **state)
{
    (void)state;
    blackhole(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rtt_from_packets),
        cmocka_unit_test(test_blackholed_tor_port),
        cmocka_unit_test(test_blackholed_nic_port),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
