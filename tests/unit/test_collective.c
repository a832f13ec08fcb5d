/*
 * test_collective.c - collectives over the message API (collective.h) and
 * the `collective` model (nccl-tests runs).
 *
 * Times against the alpha-beta formulas on an idle non-blocking star (each
 * host one NIC, every ring hop through one switch): with S bytes, N ranks,
 * B the payload rate of a NIC and alpha the latency of one step,
 *   ring all-reduce       2(N-1)/N S/B + 2(N-1) alpha
 *   reduce-scatter, all-gather  (N-1)/N S/B + (N-1) alpha
 * B is the line rate times mss / (mss + 2 header): a NIC carries its own
 * data and the ACKs of the data it receives (one per segment), both with
 * the transport's header.  alpha = two propagation delays plus one
 * packet's serialisation (the switch stores and forwards).  Bytes moved
 * are checked exactly per algorithm (the sum of the messages' payloads),
 * and per link class from the ports' counters for the hierarchical one.
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

#include "aisim/collective.h"
#include "aisim/netreg.h"
#include "aisim/units.h"
#include "testutil.h"

typedef struct fixture {
    cfg_doc *doc;
    sim *s;
    network *n;
    coll_comm *c;
} fixture;

/* A network from the YAML of a section, and a communicator of its first
 * `ranks` endpoints (all with 0). */
static void fx_open(fixture *f, const char *yaml, int ranks)
{
    memset(f, 0, sizeof *f);
    err e = {0};
    if (cfg_load_string("coll.yaml", yaml, strlen(yaml), &f->doc, &e))
        fail_msg("%s", e.msg);
    f->s = sim_create();
    network_cfg c = {.pcap_max = 1000, .routing = NET_ROUTE_ECMP};
    cfg_node *root = cfg_root(f->doc);
    c.topology = cfg_get(root, "topology");
    c.transport = cfg_get(root, "transport");
    model_env env = {.sim = f->s, .seed = 1, .base_dir = ".", .stop_ps = SIM_TIME_MAX,
                     .net = net_registry_builtin()};
    if (network_create(&f->n, &c, root, "coll", &env, &e))
        fail_msg("%s", e.msg);
    network_start(f->n);
    int n = ranks ? ranks : (int)network_endpoints(f->n);
    int *eps = calloc((size_t)n, sizeof *eps);
    for (int i = 0; i < n; i++)
        eps[i] = i;
    f->c = coll_comm_create(f->n, eps, n);
    free(eps);
}

static void fx_free(fixture *f)
{
    coll_comm_destroy(f->c);
    network_destroy(f->n);
    sim_destroy(f->s);
    cfg_free(f->doc);
}

static void on_done(void *ctx, const coll_result *r)
{
    coll_result *dst = ctx;
    assert_int_equal(dst->ranks, 0);    /* once */
    *dst = *r;
}

/* Runs one call to completion; fails the test if it does not complete. */
static coll_result run1(fixture *f, coll_comm *c, coll_args a)
{
    coll_result r = {0};
    err e = {0};
    if (coll_start(c, &a, on_done, &r, &e))
        fail_msg("%s", e.msg);
    sim_run(f->s, SIM_TIME_MAX);
    assert_int_equal(r.ranks, coll_comm_size(c));
    assert_false(r.aborted);
    assert_int_equal(coll_active(c), 0);
    return r;
}

/* 8 hosts, 100 Gbps, 1 us wires, NewReno with jumbo frames (mss 8960). */
#define STAR8 "topology: {kind: star, hosts: 8, link: {rate: 100Gbps, delay: 1us, buffer: 8MB}}\n" \
              "transport: {name: tcp, cc: newreno, mss: 8960B}\n"
static const double STAR_RATE = 100e9 / 8, MSS = 8960, HDR = 40;

static double payload_rate(void) { return STAR_RATE * MSS / (MSS + 2 * HDR); }
static double alpha_s(void) { return 2e-6 + (MSS + HDR) / STAR_RATE; }

static void test_ring_allreduce_meets_alpha_beta(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR8, 0);
    const double S = 16 << 20, N = 8;
    coll_result r = run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE, .algo = COLL_ALGO_RING,
                                              .bytes = (uint64_t)S});
    double want = 2 * (N - 1) / N * S / payload_rate() + 2 * (N - 1) * alpha_s();
    print_message("ring all-reduce 16 MiB on 8: %.1f us, formula %.1f us\n", r.time_s * 1e6,
                  want * 1e6);
    assert_true(fabs(r.time_s / want - 1) < 0.05);
    assert_int_equal(r.wire_bytes, (uint64_t)(2 * (N - 1) * S));
    assert_true(fabs(r.busbw_Bps - r.algbw_Bps * 2 * 7 / 8) < 1e-6 * r.busbw_Bps);
    /* a one-element call is latency only: 2(N-1) steps */
    coll_result s = run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE, .bytes = 32});
    double lat = 2 * (N - 1) * (2e-6 + (4 + HDR) / STAR_RATE);
    print_message("ring all-reduce 32 B: %.2f us, 2(N-1) alpha %.2f us\n", s.time_s * 1e6,
                  lat * 1e6);
    assert_true(s.time_s >= lat * 0.99 && s.time_s < lat * 1.05);
    fx_free(&f);
}

static void test_reduce_scatter_and_all_gather_meet_alpha_beta(void **state)
{
    (void)state;
    const double S = 16 << 20, N = 8;
    for (int t = 0; t < 2; t++) {
        fixture f;
        fx_open(&f, STAR8, 0);
        coll_result r = run1(&f, f.c, (coll_args){.type = t ? COLL_ALLGATHER
                                                            : COLL_REDUCE_SCATTER,
                                                  .bytes = (uint64_t)S});
        double want = (N - 1) / N * S / payload_rate() + (N - 1) * alpha_s();
        print_message("%s 16 MiB: %.1f us, formula %.1f us\n", coll_type_names[r.type],
                      r.time_s * 1e6, want * 1e6);
        assert_true(fabs(r.time_s / want - 1) < 0.05);
        assert_int_equal(r.wire_bytes, (uint64_t)((N - 1) * S));
        assert_true(fabs(r.busbw_Bps / r.algbw_Bps - 7.0 / 8) < 1e-12);
        fx_free(&f);
    }
}

/* Large messages: busbw is the NIC's line rate within 5 % (nccl-tests'
 * point of busbw), for ring all-reduce and all-gather. */
static void test_busbw_is_link_rate_for_large_messages(void **state)
{
    (void)state;
    enum coll_type ts[] = {COLL_ALLREDUCE, COLL_ALLGATHER};
    for (int t = 0; t < 2; t++) {
        fixture f;
        fx_open(&f, STAR8, 0);
        coll_result r = run1(&f, f.c, (coll_args){.type = ts[t], .bytes = 64 << 20});
        print_message("%s 64 MiB busbw %.3f GB/s of %.3f\n", coll_type_names[ts[t]],
                      r.busbw_Bps / 1e9, STAR_RATE / 1e9);
        assert_true(r.busbw_Bps > 0.95 * STAR_RATE && r.busbw_Bps <= STAR_RATE);
        fx_free(&f);
    }
}

/* Every algorithm completes and moves exactly its bytes: the sum of its
 * messages' payloads, on 8 ranks (a power of two) and 6 (not), with 96 KiB
 * (many chunks) and 12 B (3 floats: most segments empty, which must
 * neither hang the graph nor count twice). */
static void test_every_algorithm_moves_its_bytes(void **state)
{
    (void)state;
    for (int pass = 0; pass < 4; pass++) {
        int n = pass % 2 ? 6 : 8;
        const uint64_t S = pass < 2 ? 96 * 1024 : 12;
        fixture f;
        fx_open(&f, STAR8, n);
        struct {
            enum coll_type t;
            enum coll_algo a;
            uint64_t bytes;
        } want[] = {
            {COLL_ALLREDUCE, COLL_ALGO_RING, 2 * (uint64_t)(n - 1) * S},
            {COLL_ALLREDUCE, COLL_ALGO_TREE, 2 * (uint64_t)(n - 1) * S},
            /* 2(p-1) S over the p = 4 or 8 ranks of the power of two, plus
             * the 2 rem = 2 (n = 6) whole buffers folded in and out */
            {COLL_ALLREDUCE, COLL_ALGO_HD, n == 6 ? 2 * 3 * S + 2 * 2 * S : 2 * 7 * S},
            {COLL_REDUCE_SCATTER, COLL_ALGO_RING, (uint64_t)(n - 1) * S},
            {COLL_ALLGATHER, COLL_ALGO_RING, (uint64_t)(n - 1) * S},
            {COLL_ALLTOALL, COLL_ALGO_AUTO, (uint64_t)(n - 1) * S},
            {COLL_BROADCAST, COLL_ALGO_RING, (uint64_t)(n - 1) * S},
            {COLL_BROADCAST, COLL_ALGO_TREE, (uint64_t)(n - 1) * S},
            {COLL_SENDRECV, COLL_ALGO_AUTO, S},
            {COLL_REDUCE_SCATTER, COLL_ALGO_HD, (uint64_t)(n - 1) * S},
            {COLL_ALLGATHER, COLL_ALGO_HD, (uint64_t)(n - 1) * S},
        };
        int cases = n == 6 ? 9 : 11;    /* HD reduce-scatter / all-gather: 2^k */
        for (int i = 0; i < cases; i++) {
            for (int ch = 1; ch <= 2; ch++) {
                coll_result r = run1(&f, f.c, (coll_args){.type = want[i].t, .algo = want[i].a,
                                                          .bytes = S, .channels = ch,
                                                          .chunk_bytes = 8192, .root = 1,
                                                          .peer = 4});
                if (r.wire_bytes != want[i].bytes)
                    fail_msg("%s/%s on %d ranks, %d channels: %llu bytes, expected %llu",
                             coll_type_names[want[i].t], coll_algo_names[want[i].a], n, ch,
                             (unsigned long long)r.wire_bytes,
                             (unsigned long long)want[i].bytes);
                assert_true(r.time_s > 0);
            }
        }
        fx_free(&f);
    }
}

/* The double binary tree: every rank is an inner node of at most one
 * tree, so no NIC sends more than 2 S (plus headers and ACKs); with both
 * trees alike (or in-order trees) some rank sent 2.5 S. */
static void test_tree_sends_at_most_2S_per_rank(void **state)
{
    (void)state;
    for (int n = 6; n <= 8; n += 2) {
        fixture f;
        fx_open(&f, STAR8, n);
        const double S = 1 << 20;
        run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE, .algo = COLL_ALGO_TREE,
                                  .bytes = (uint64_t)S});
        topo *t = network_topo(f.n);
        double most = 0;
        for (int h = 0; h < n; h++)     /* star: host h is link h, dir 0 its NIC */
            if ((double)topo_link_port(t, h, 0)->stat_tx_bytes > most)
                most = (double)topo_link_port(t, h, 0)->stat_tx_bytes;
        print_message("tree on %d: most a NIC sent %.3f S\n", n, most / S);
        assert_true(most <= 2 * S * (MSS + 2 * HDR) / MSS * 1.001);
        assert_true(most >= 2 * S);
        fx_free(&f);
    }
}

/* Ports of one class: GPU -> NVSwitch (intra-host) or GPU -> ToR (NIC),
 * ToR -> agg (fabric): bytes sent. */
static uint64_t class_bytes(network *n, int cls)
{
    topo *t = network_topo(n);
    uint64_t sum = 0;
    for (size_t l = 0; l < topo_links(t); l++) {
        int a, b;
        topo_link_ends(t, (int)l, &a, &b);
        bool ha = topo_node_kind(t, a) == NODE_HOST, hb = topo_node_kind(t, b) == NODE_HOST;
        bool intra = topo_link_is_intra_host(t, (int)l);
        int c = intra ? 0 : (ha || hb) ? 1 : 2;
        if (c != cls)
            continue;
        if (cls == 2) {
            sum += topo_link_port(t, (int)l, 0)->stat_tx_bytes +
                   topo_link_port(t, (int)l, 1)->stat_tx_bytes;
            continue;
        }
        sum += topo_link_port(t, (int)l, ha ? 0 : 1)->stat_tx_bytes;
    }
    return sum;
}

/* Hierarchical all-reduce on 4 servers x 4 GPUs: NVLink carries
 * 2(G-1)/G S per GPU (reduce-scatter and all-gather inside the server),
 * NICs 2(M-1)/M S/G per GPU (a ring per rail), and nothing crosses the
 * aggregation layer.  Counted at the GPUs' egress ports, where each byte
 * of payload costs (mss + 2 header) / mss on the wire (its segment's
 * header, and the ACK its receiver sends back on the same class). */
static void test_hierarchical_bytes_per_link_class(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: rail_optimised, servers: 4, gpus_per_server: 4, "
                "servers_per_tor: 4, aggs: 2, nic_link: {rate: 100Gbps, buffer: 8MB}}\n"
                "transport: {name: tcp, mss: 8960B}\n", 0);
    const double S = 8 << 20, G = 4, M = 4, n = 16, cost = (MSS + 2 * HDR) / MSS;
    coll_result r = run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE, .algo = COLL_ALGO_HIER,
                                              .bytes = (uint64_t)S, .channels = 2});
    double nv = (double)class_bytes(f.n, 0), nic = (double)class_bytes(f.n, 1);
    double want_nv = n * 2 * (G - 1) / G * S, want_nic = n * 2 * (M - 1) / M * S / G;
    print_message("hierarchical 8 MiB: NVLink %.0f B (payload %.0f), NIC %.0f B (%.0f), "
                  "fabric %llu B, %.1f us\n", nv, want_nv, nic, want_nic,
                  (unsigned long long)class_bytes(f.n, 2), r.time_s * 1e6);
    assert_int_equal(r.wire_bytes, (uint64_t)(want_nv + want_nic));
    assert_true(fabs(nv / (want_nv * cost) - 1) < 0.005);
    assert_true(fabs(nic / (want_nic * cost) - 1) < 0.005);
    assert_int_equal(class_bytes(f.n, 2), 0);
    fx_free(&f);
    /* The flat ring on the same fabric sends 2(n-1)/n S per GPU, of which
     * the hops between servers (M of the ring's n) take NICs. */
    fx_open(&f, "topology: {kind: rail_optimised, servers: 4, gpus_per_server: 4, "
                "servers_per_tor: 4, aggs: 2, nic_link: {rate: 100Gbps, buffer: 8MB}}\n"
                "transport: {name: tcp, mss: 8960B}\n", 0);
    run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE, .bytes = (uint64_t)S});
    nic = (double)class_bytes(f.n, 1);
    double ring_nic = M * 2 * (n - 1) / n * S;
    assert_true(fabs(nic / (ring_nic * cost) - 1) < 0.005);
    assert_int_equal(class_bytes(f.n, 2), 0);  /* rail-aware ring: ToRs only */
    fx_free(&f);
    /* In the communicator's rank order (ring_order: rank, as SimAI's and
     * NCCL's rings given that order), every hop between servers joins GPU
     * 3 of one to GPU 0 of the next: across rails, through the
     * aggregation layer, with the same NIC bytes. */
    fx_open(&f, "topology: {kind: rail_optimised, servers: 4, gpus_per_server: 4, "
                "servers_per_tor: 4, aggs: 2, nic_link: {rate: 100Gbps, buffer: 8MB}}\n"
                "transport: {name: tcp, mss: 8960B}\n", 0);
    run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE, .bytes = (uint64_t)S, .rank_order = true});
    nic = (double)class_bytes(f.n, 1);
    assert_true(fabs(nic / (ring_nic * cost) - 1) < 0.005);
    double fab = (double)class_bytes(f.n, 2);
    print_message("ring in rank order, 8 MiB: ToR-agg %.0f B\n", fab);
    /* each of the 4 server hops goes up to an agg and down: 2 links */
    assert_true(fabs(fab / (2 * ring_nic * cost) - 1) < 0.005);
    fx_free(&f);
}

/* NCCL's tree on 4 servers x 4 GPUs (chain_tree): a chain of 4 GPUs per
 * server over NVLink, the servers' double binary tree between the chains'
 * heads.  Each tree carries S/2 up and S/2 down each of its M - 1 edges
 * between servers, so the NICs carry 2 (M - 1) S in all; with 2 channels
 * the heads sit on rails 0 and 1, ToRs only.  (NewReno's windows overflow
 * the 2:1 incast at a parent's head: one retransmission timeout, counted
 * in the time, not in the bytes' 0.5 %.) */
static void test_tree_chains_in_servers(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: rail_optimised, servers: 4, gpus_per_server: 4, "
                "servers_per_tor: 4, aggs: 2, nic_link: {rate: 100Gbps, buffer: 8MB}}\n"
                "transport: {name: tcp, mss: 8960B}\n", 0);
    const double S = 8 << 20, M = 4, n = 16, cost = (MSS + 2 * HDR) / MSS;
    coll_result r = run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE, .algo = COLL_ALGO_TREE,
                                              .bytes = (uint64_t)S, .channels = 2});
    double nv = (double)class_bytes(f.n, 0), nic = (double)class_bytes(f.n, 1);
    print_message("tree 8 MiB: NVLink %.0f B, NIC %.0f B, fabric %llu B, %.1f us\n", nv, nic,
                  (unsigned long long)class_bytes(f.n, 2), r.time_s * 1e6);
    assert_int_equal(r.wire_bytes, (uint64_t)(2 * (n - 1) * S));
    assert_true(fabs(nic / (2 * (M - 1) * S * cost) - 1) < 0.005);
    assert_true(fabs(nv / ((2 * (n - 1) - 2 * (M - 1)) * S * cost) - 1) < 0.005);
    assert_int_equal(class_bytes(f.n, 2), 0);
    fx_free(&f);
}

/* Drops, PFC pauses and ECN marks summed over every port. */
static void port_totals(network *n, uint64_t *drops, uint64_t *pauses, uint64_t *marks)
{
    topo *t = network_topo(n);
    *drops = *pauses = *marks = 0;
    for (size_t l = 0; l < topo_links(t); l++)
        for (int d = 0; d < 2; d++) {
            const port *q = topo_link_port(t, (int)l, d);
            *drops += q->stat_drop_pkts;
            *pauses += q->stat_pfc_pauses;
            *marks += q->stat_mark_pkts;
        }
}

/* Ring all-reduce over RoCEv2 on a lossless rail-optimised fabric (the
 * ai/nccl-allreduce-rdma example: 4 servers of 4 GPUs, 100 Gbps NICs,
 * 2 channels) meets the same formula as over TCP, 2(N-1)/N (S/2)/B per
 * channel plus one NIC step's latency, within 5 %.  The ring's NIC hops are
 * its bottleneck (NVLink is 36 x faster); each NIC port carries one
 * channel's data and the ACKs of the other channel's data it receives, so
 * B = line x payload / (data packet + ACK): TCP mss 4096 with 40 B headers
 * each, RoCEv2 1000 B in 1062 B with 66 B ACKs.  Over RoCEv2: nothing
 * dropped, every byte in the right place.  With DCQCN (the fork's
 * defaults) at 4 MiB the queue the ACKs add (6 % over the line) stays below
 * Kmin: no mark, no pause.  Without congestion control at 16 MiB it passes
 * PFC's XOFF: pauses counted, still nothing dropped, the time still the
 * formula's. */
#define RAIL_RDMA(cc) \
    "topology: {kind: rail_optimised, servers: 4, gpus_per_server: 4, servers_per_tor: 4, " \
    "aggs: 2, nic_link: {rate: 100Gbps, delay: 500ns, buffer: 4MiB, red_min: 400KB, " \
    "red_max: 1600KB, red_max_p: 0.2, red_weight: 1, pfc_xoff: 512KB, pfc_xon: 256KB}}\n" \
    "transport: {name: rocev2, cc: " cc ", lossless: true}\n"

/* PXN (coll_args.pxn) on 4 servers x 4 GPUs, lossless RoCEv2: in a 4 MiB
 * all-to-all each GPU's 9 messages to other servers' GPUs of other rails
 * go over NVLink to the local GPU of the destination's rail first, so the
 * payload is 15 S + 9 S = 24 S (15 S without) and nothing crosses the
 * aggregation layer (without PXN those 9 of 15 do: 85.5 MB at the
 * ToR-agg ports); measured 285.1 us against 665.6 us without. */
static void test_pxn_keeps_all_to_all_on_rails(void **state)
{
    (void)state;
    const double S = 4 << 20;
    for (int pxn = 0; pxn < 2; pxn++) {
        fixture f;
        fx_open(&f, RAIL_RDMA("dcqcn"), 0);
        coll_result r = run1(&f, f.c, (coll_args){.type = COLL_ALLTOALL, .bytes = (uint64_t)S,
                                                  .channels = 2, .pxn = pxn});
        uint64_t fab = class_bytes(f.n, 2);
        print_message("all-to-all 4 MiB, pxn %d: %.1f us, payload %llu B, ToR-agg %llu B\n",
                      pxn, r.time_s * 1e6, (unsigned long long)r.wire_bytes,
                      (unsigned long long)fab);
        assert_int_equal(r.wire_bytes, (uint64_t)((pxn ? 24 : 15) * S));
        if (pxn)
            assert_int_equal(fab, 0);
        else
            assert_true(fab > 0);
        fx_free(&f);
    }
}

static void test_ring_allreduce_over_rdma_meets_the_tcp_formula(void **state)
{
    (void)state;
    const double N = 16, line = 100e9 / 8, alpha = 2 * 500e-9 + 1062 / line;
    const char *yaml[3] = {
        "topology: {kind: rail_optimised, servers: 4, gpus_per_server: 4, servers_per_tor: 4, "
        "aggs: 2, nic_link: {rate: 100Gbps, delay: 500ns, buffer: 4MiB, ecn_k: 400KB}}\n"
        "transport: {name: tcp, cc: newreno, min_rto: 1ms, mss: 4096B}\n",
        RAIL_RDMA("dcqcn"), RAIL_RDMA("none")};
    const double B[3] = {line * 4096 / (4096 + 80), line * 1000 / (1062 + 66),
                         line * 1000 / (1062 + 66)};
    const double S[3] = {4 << 20, 4 << 20, 16 << 20};
    for (int i = 0; i < 3; i++) {
        fixture f;
        fx_open(&f, yaml[i], 0);
        coll_result r = run1(&f, f.c, (coll_args){.type = COLL_ALLREDUCE,
                                                  .algo = COLL_ALGO_RING,
                                                  .bytes = (uint64_t)S[i], .channels = 2});
        double want = 2 * (N - 1) / N * S[i] / 2 / B[i] + alpha;
        uint64_t drops, pauses, marks;
        port_totals(f.n, &drops, &pauses, &marks);
        print_message("ring all-reduce %.0f MiB, %s: %.1f us, formula %.1f us; drops %llu, "
                      "PFC pauses %llu, marks %llu\n", S[i] / (1 << 20),
                      i == 0 ? "tcp" : i == 1 ? "rocev2 dcqcn" : "rocev2 none",
                      r.time_s * 1e6, want * 1e6, (unsigned long long)drops,
                      (unsigned long long)pauses, (unsigned long long)marks);
        assert_true(fabs(r.time_s / want - 1) < 0.05);
        assert_int_equal(r.wire_bytes, (uint64_t)(2 * (N - 1) * S[i]));
        if (i > 0) {
            assert_int_equal(drops, 0);
            assert_int_equal(topo_packets_in_network(network_topo(f.n)), 0);
        }
        if (i == 1)
            assert_true(marks == 0 && pauses == 0);
        if (i == 2)
            assert_true(pauses > 0);
        fx_free(&f);
    }
}

/* Sub-communicators (TP groups: stride 1; DP groups: stride TP) run
 * concurrently on shared connections, each with its own result. */
static void on_count(void *ctx, const coll_result *r)
{
    int *k = ctx;
    assert_false(r->aborted);
    (*k)++;
}

static void test_sub_communicators_run_together(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR8, 0);
    coll_comm *tp[2], *dp[4];
    int k = 0;
    err e = {0};
    for (int i = 0; i < 2; i++) {
        tp[i] = coll_comm_sub(f.c, 4 * i, 1, 4);
        assert_int_equal(coll_comm_endpoint(tp[i], 3), 4 * i + 3);
        assert_int_equal(coll_start(tp[i], &(coll_args){.type = COLL_ALLREDUCE,
                                                        .bytes = 1 << 20}, on_count, &k, &e),
                         0);
    }
    for (int i = 0; i < 4; i++) {
        dp[i] = coll_comm_sub(f.c, i, 4, 2);
        assert_int_equal(coll_comm_endpoint(dp[i], 1), i + 4);
        assert_int_equal(coll_start(dp[i], &(coll_args){.type = COLL_ALLGATHER,
                                                        .bytes = 1 << 20}, on_count, &k, &e),
                         0);
    }
    assert_int_equal(coll_active(f.c), 6);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(k, 6);
    for (int i = 0; i < 2; i++)
        coll_comm_destroy(tp[i]);
    for (int i = 0; i < 4; i++)
        coll_comm_destroy(dp[i]);
    /* bad calls: nothing starts */
    coll_args bad = {.type = COLL_ALLREDUCE};
    assert_int_equal(coll_start(f.c, &bad, on_count, &k, &e), AISIM_ERANGE);
    assert_string_equal(e.msg, "bytes: expected a size > 0 for all_reduce, found 0");
    bad = (coll_args){.type = COLL_NTYPES, .bytes = 1};
    assert_int_equal(coll_start(f.c, &bad, on_count, &k, &e), AISIM_EINVAL);
    assert_int_equal(coll_active(f.c), 0);
    /* endpoints checked before a communicator is made */
    assert_int_equal(coll_comm_check(f.n, (int[]){0, 3, 3}, 3, NULL, "ranks", &e),
                     AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "ranks: rank 2: endpoint 3 is already rank of this "
                                  "communicator"));
    assert_int_equal(coll_comm_check(f.n, (int[]){0, 8}, 2, NULL, "ranks", &e), AISIM_ERANGE);
    assert_non_null(strstr(e.msg, "rank 1: expected an endpoint 0 .. 7, found 8"));
    assert_int_equal(coll_comm_check(f.n, (int[]){7, 0}, 2, NULL, "ranks", &e), 0);
    fx_free(&f);
}

/* The example the suite runs: 16 GPUs on a rail-optimised fabric, a
 * sweep 1 KiB .. 4 MiB by 4.  busbw grows with size and reaches two
 * NICs' rate (two channels, each ring on its own rails) within 10 %. */
static void test_example_sweep_table(void **state)
{
    (void)state;
    /* the network's ceiling: without NCCL's protocol model */
    static const char *none[] = {"collective.sweep.protocol=none"};
    json_t *sum = tu_run("ai/nccl-allreduce-small", "small", none, 1);
    json_t *nt = json_object_get(json_object_get(sum, "results"), "nccl_tests");
    assert_non_null(nt);
    assert_int_equal(json_integer_value(json_object_get(nt, "sizes_completed")), 7);
    double big = json_real_value(json_object_get(nt, "largest_busbw_GBps"));
    print_message("small example: busbw at 4 MiB %.2f GB/s\n", big);
    assert_true(big > 0.9 * 2 * 12.5 && big <= 2 * 12.5);
    char path[256];
    snprintf(path, sizeof path, "%s/small/nccl_tests.csv", tu_tmp);
    char *csv = tu_slurp(path, NULL);
    assert_non_null(strstr(csv, "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps\n"
                                "1024,256,float,sum,-1,"));
    double last = 0;
    int rows = 0;
    for (char *l = strchr(csv, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        char *end = strchr(l, '\n'), *c = end;
        while (c > l && c[-1] != ',')
            c--;
        double bus = atof(c);
        assert_true(bus >= last * 0.99);
        last = bus;
        rows++;
    }
    assert_int_equal(rows, 7);
    /* Determinism: the same run again gives the same tables, byte for byte. */
    json_decref(tu_run("ai/nccl-allreduce-small", "again", none, 1));
    const char *files[] = {"nccl_tests.csv", "collectives.csv", "flows.csv", "links.csv"};
    for (int i = 0; i < 4; i++)
        tu_assert_same_file("small", "again", files[i]);
    free(csv);
    json_decref(sum);
}

/* The RDMA example the suite runs (64 KiB .. 4 MiB over RoCEv2 with
 * DCQCN, lossless): every size completes, busbw grows with size and at
 * 4 MiB is within 5 % of two NICs' RoCEv2 payload rate with ACKs
 * (2 x 12.5 GB/s x 1000 / 1128 = 22.2 GB/s), no QP aborted, nothing
 * dropped, PFC pauses reported (none: DCQCN keeps the queues below XOFF). */
static void test_example_over_rdma(void **state)
{
    (void)state;
    static const char *none[] = {"collective.sweep.protocol=none"};
    json_t *sum = tu_run("ai/nccl-allreduce-rdma", "rdma", none, 1);
    json_t *res = json_object_get(sum, "results");
    json_t *nt = json_object_get(res, "nccl_tests");
    assert_int_equal(json_integer_value(json_object_get(nt, "sizes_completed")), 4);
    double big = json_real_value(json_object_get(nt, "largest_busbw_GBps"));
    double want = 2 * 12.5 * 1000 / 1128;
    print_message("rdma example: busbw at 4 MiB %.2f GB/s (%.2f)\n", big, want);
    assert_true(big > 0.95 * want && big <= want);
    assert_int_equal(json_integer_value(json_object_get(res, "rdma_aborted_qps")), 0);
    assert_int_equal(json_integer_value(json_object_get(res, "drops")), 0);
    json_t *pfc = json_object_get(res, "pfc_pauses");
    assert_non_null(pfc);
    assert_int_equal(json_integer_value(pfc), 0);
    /* every byte sent is delivered or still on its way (the last ACKs) */
#define R(k) json_integer_value(json_object_get(res, k))
    assert_int_equal(R("bytes_injected"), R("bytes_delivered") + R("bytes_in_network_at_end"));
#undef R
    char path[256];
    snprintf(path, sizeof path, "%s/rdma/nccl_tests.csv", tu_tmp);
    char *csv = tu_slurp(path, NULL);
    double last = 0;
    int rows = 0;
    for (char *l = strchr(csv, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        char *c = strchr(l, '\n');
        while (c > l && c[-1] != ',')
            c--;
        assert_true(atof(c) > last);
        last = atof(c);
        rows++;
    }
    assert_int_equal(rows, 4);
    free(csv);
    json_decref(sum);
}

/* Warm-up calls are run and not timed; the time of a size is the mean of
 * its timed calls (collectives.csv has them all). */
static void test_sweep_warmup_and_mean_of_iters(void **state)
{
    (void)state;
    const char *sets[] = {"collective.sweep.min_bytes=64KiB", "collective.sweep.max_bytes=64KiB",
                          "collective.sweep.iters=3", "collective.sweep.warmup_iters=2"};
    json_decref(tu_run("ai/nccl-allreduce-small", "iters", sets, 4));
    char path[256];
    snprintf(path, sizeof path, "%s/iters/collectives.csv", tu_tmp);
    char *calls = tu_slurp(path, NULL);
    double t[8], sum = 0;
    int n = 0;
    for (char *l = strchr(calls, '\n') + 1; *l && n < 8; l = strchr(l, '\n') + 1) {
        int k = 0;
        char *c = l;
        while (k < 7)               /* the 8th field: time_us */
            k += *c++ == ',';
        t[n++] = atof(c);
    }
    assert_int_equal(n, 5);
    for (int i = 2; i < 5; i++)
        sum += t[i];
    snprintf(path, sizeof path, "%s/iters/nccl_tests.csv", tu_tmp);
    char *tab = tu_slurp(path, NULL);
    char *row = strchr(tab, '\n') + 1;
    int k = 0;
    while (k < 5)
        k += *row++ == ',';
    print_message("calls %.3f %.3f | %.3f %.3f %.3f us; reported %.3f\n", t[0], t[1], t[2], t[3],
                  t[4], atof(row));
    assert_true(fabs(atof(row) - sum / 3) < 1e-9 * sum);
    free(calls);
    free(tab);
}

/* The 128-GPU example at one size (4 MiB), ring and hierarchical: every
 * call completes; ring's busbw with 8 channels exceeds one NIC's 50 GB/s
 * (each channel's ring leaves servers on its own rail).  And the model's
 * first figure is busbw against size on a log x axis. */
/* A run that stops while a call is in flight (its `stop:` reached) frees
 * the call with the communicators: under `make test SAN=1` LeakSanitizer
 * fails this test if it does not (the fuzzer's bounded runs found it). */
static void test_run_stopped_mid_call_frees_it(void **state)
{
    (void)state;
    static const char *sets[] = {"stop=20us", "collective.sweep.protocol=none"};
    json_t *sum = tu_run("ai/nccl-allreduce-small", "stopped", sets, 2);
    json_t *res = json_object_get(sum, "results");
    /* stopped with a call's messages still in the network */
    assert_true(json_integer_value(json_object_get(res, "flows_completed")) <
                json_integer_value(json_object_get(res, "flows")));
    assert_true(json_integer_value(json_object_get(res, "packets_in_network_at_end")) > 0);
    json_decref(sum);
}

/* A collective queues each rank's chunks on one connection before the
 * earlier ones arrive; every completed message still delivered all its
 * bytes (flows.csv's delivered_bytes = size_bytes) and the summary's
 * goodput is their sum over the run, on both planes.  (The counters of a
 * message used to end when the next was queued: 2 320 of the 6 720
 * messages of ai/nccl-allreduce-small, and 2 848 of 3 024 of
 * ai/allreduce-flow, reported less, down to 0.) */
static void test_pipelined_messages_report_all_their_bytes(void **state)
{
    (void)state;
    const char *sets[][2] = {{"collective.sweep.max_bytes=256KiB", "collective.plane=packet"},
                             {"collective.sweep.max_bytes=256KiB", "collective.plane=flow"}};
    for (int p = 0; p < 2; p++) {
        const char *sub = p ? "pipe-flow" : "pipe-packet";
        json_t *sum = tu_run("ai/allreduce-flow", sub, sets[p], 2);
        char path[320];
        snprintf(path, sizeof path, "%s/%s/flows.csv", tu_tmp, sub);
        char *csv = tu_slurp(path, NULL);
        double bytes = 0;
        int rows = 0, whole = 0;
        for (char *l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
            unsigned long long size, got;
            /* id,src,dst,size,start,finish,fct,ideal,slowdown,delivered,... */
            if (sscanf(l + 1, "%*[^,],%*[^,],%*[^,],%llu,%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%llu",
                       &size, &got) != 2)
                fail_msg("bad row in %s: %.60s", path, l + 1);
            rows++;
            whole += got == size;
            bytes += (double)got;
        }
        free(csv);
        json_t *res = json_object_get(sum, "results");
        print_message("%s: %d of %d messages delivered whole\n", sub, whole, rows);
        assert_true(rows > 100);
        assert_int_equal(tu_num(res, "flows_completed"), rows);
        assert_int_equal(whole, rows);
        double T = tu_num(sum, "sim_time_s");
        assert_true(fabs(tu_num(res, "goodput_bps") - bytes * 8 / T) <= 1e-9 * bytes * 8 / T);
        json_decref(sum);
    }
}

/* A communicator of one rank moves nothing: every call takes 0 us and
 * its bandwidths are 0 in nccl_tests.csv, nccl_tests.txt, collectives.csv
 * and the summary alike (nccl_tests.txt used to print nan, the csv an
 * empty field, the summary null, while collectives.csv had 0). */
static void test_one_rank_reports_zero_not_nan(void **state)
{
    (void)state;
    const char *sets[] = {"collective.sweep.ranks=[h0]", "collective.sweep.max_bytes=4KiB"};
    json_t *sum = tu_run("ai/allreduce-flow", "one", sets, 2);
    json_t *nt = json_object_get(json_object_get(sum, "results"), "nccl_tests");
    assert_int_equal(json_integer_value(json_object_get(nt, "ranks")), 1);
    assert_int_equal(json_integer_value(json_object_get(nt, "sizes_completed")), 2);
    assert_true(json_is_number(json_object_get(nt, "largest_busbw_GBps")));
    assert_true(tu_num(nt, "largest_busbw_GBps") == 0);
    char path[320];
    snprintf(path, sizeof path, "%s/one/nccl_tests.csv", tu_tmp);
    char *csv = tu_slurp(path, NULL);
    assert_string_equal(csv, "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps\n"
                             "1024,256,float,sum,-1,0,0,0\n4096,1024,float,sum,-1,0,0,0\n");
    free(csv);
    snprintf(path, sizeof path, "%s/one/nccl_tests.txt", tu_tmp);
    char *txt = tu_slurp(path, NULL);
    assert_null(strstr(txt, "nan"));
    assert_non_null(strstr(txt, "        1024           256     float     sum      -1     0.00"
                                "    0.00    0.00    N/A     0.00    0.00    0.00    N/A\n"));
    free(txt);
    json_decref(sum);
}

static void test_example_128_at_one_size(void **state)
{
    (void)state;
    const char *algos[] = {"collective.sweep.algorithm=ring",
                           "collective.sweep.algorithm=hierarchical"};
    for (int i = 0; i < 2; i++) {
        const char *sets[] = {"collective.sweep.min_bytes=4MiB",
                              "collective.sweep.max_bytes=4MiB", algos[i],
                              "collective.sweep.protocol=none"};
        json_t *sum = tu_run("ai/nccl-allreduce-128", i ? "h128" : "r128", sets, 4);
        json_t *nt = json_object_get(json_object_get(sum, "results"), "nccl_tests");
        assert_int_equal(json_integer_value(json_object_get(nt, "ranks")), 128);
        assert_int_equal(json_integer_value(json_object_get(nt, "sizes_completed")), 1);
        double bus = json_real_value(json_object_get(nt, "largest_busbw_GBps"));
        print_message("128 GPUs, 4 MiB, %s: busbw %.1f GB/s\n", algos[i] + 27, bus);
        assert_true(bus > 0 && bus < 8 * 50);
        if (i == 0)
            assert_true(bus > 50);
        json_decref(sum);
    }
    const plot_spec *p = model_find("collective")->plots;
    assert_string_equal(p->csv, "nccl_tests.csv");
    assert_string_equal(p->x, "size");
    assert_string_equal(p->y, "busbw_GBps");
    assert_int_equal(p->logx, 1);
}

/* Two servers of 4 GPUs, 4 channels (4 NICs of 12.5 GB/s, NVLink 300
 * GB/s): NCCL's tuner reads the tree's intra-server bandwidth there, which
 * its graph search raises to twice the NICs' (50 -> 100 GB/s), so tree
 * Simple is 100 x 0.92 x 0.5 = 46 GB/s of algbw against the ring's 50 x
 * 8 / 14 = 28.6, and auto takes the tree for a large all-reduce (with the
 * NICs' 50 GB/s for both it took the ring: 23 against 28.6; the test
 * fails so without the rule). */
static void test_nccl_two_servers_tree_bandwidth(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: rail_optimised, servers: 2, gpus_per_server: 4, "
                "servers_per_tor: 2, aggs: 1, nic_link: {rate: 100Gbps}, "
                "nvlink: {rate: 2400Gbps}}\ntransport: {name: tcp, mss: 8960B}\n", 0);
    coll_args a = {.type = COLL_ALLREDUCE, .algo = COLL_ALGO_TREE, .bytes = 256u << 20,
                   .channels = 4, .proto = COLL_PROTO_SIMPLE, .arch = COLL_ARCH_HOPPER};
    coll_tuning t;
    coll_tune(f.c, &a, &t);
    assert_int_equal(t.nodes, 2);
    assert_float_equal(t.bw_GBps, 46.0, 1e-9);
    a.algo = COLL_ALGO_RING;
    coll_tune(f.c, &a, &t);
    assert_float_equal(t.bw_GBps, 50.0 * 8 / 14, 1e-9);
    a.algo = COLL_ALGO_AUTO;
    a.proto = COLL_PROTO_AUTO;
    coll_tune(f.c, &a, &t);
    assert_int_equal(t.algo, COLL_ALGO_TREE);
    /* LL128: 92 x 120/128 x 0.5 = 43.1 against Simple's 46 x 0.9 (NCCL's
     * tree correction at 256 MiB) = 41.4 */
    assert_int_equal(t.proto, COLL_PROTO_LL128);
    fx_free(&f);
}

/* NCCL's tuner (coll_tune, NCCL 2.30.7's tables) on 8 hosts of a star
 * (8 servers of one GPU, 12.5 GB/s NICs, no NVLink: PCI latencies),
 * one channel, Hopper: the all-reduce's algorithm and protocol change
 * exactly at these sizes (worked out by hand from tuning.cc's formulas,
 * tree correction factors included): tree LL up to 41 524 B, tree LL128
 * from 41 528 B, ring LL from 397 552 B, ring LL128 from 441 228 B, ring
 * Simple from 12 581 004 B. */
static void test_nccl_protocol_at_size_boundaries(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR8, 0);
    static const struct {
        uint64_t bytes;
        enum coll_algo algo;
        enum coll_proto proto;
    } want[] = {
        {4, COLL_ALGO_TREE, COLL_PROTO_LL},
        {41524, COLL_ALGO_TREE, COLL_PROTO_LL},
        {41528, COLL_ALGO_TREE, COLL_PROTO_LL128},
        {397548, COLL_ALGO_TREE, COLL_PROTO_LL128},
        {397552, COLL_ALGO_RING, COLL_PROTO_LL},
        {441224, COLL_ALGO_RING, COLL_PROTO_LL},
        {441228, COLL_ALGO_RING, COLL_PROTO_LL128},
        {12581000, COLL_ALGO_RING, COLL_PROTO_LL128},
        {12581004, COLL_ALGO_RING, COLL_PROTO_SIMPLE},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        coll_args a = {.type = COLL_ALLREDUCE, .bytes = want[i].bytes, .channels = 1,
                       .proto = COLL_PROTO_AUTO, .arch = COLL_ARCH_HOPPER};
        coll_tuning t;
        coll_tune(f.c, &a, &t);
        print_message("%llu B: %s %s\n", (unsigned long long)want[i].bytes,
                      coll_algo_names[t.algo], coll_proto_names[t.proto]);
        assert_int_equal(t.algo, want[i].algo);
        assert_int_equal(t.proto, want[i].proto);
        assert_int_equal(t.nodes, 8);
        assert_int_equal(t.ppn, 1);
    }
    /* forced: NCCL_ALGO=ring, NCCL_PROTO=Simple at 4 B */
    coll_args a = {.type = COLL_ALLREDUCE, .algo = COLL_ALGO_RING, .bytes = 4, .channels = 1,
                   .proto = COLL_PROTO_SIMPLE, .arch = COLL_ARCH_HOPPER};
    coll_tuning t;
    coll_tune(f.c, &a, &t);
    assert_int_equal(t.algo, COLL_ALGO_RING);
    assert_int_equal(t.proto, COLL_PROTO_SIMPLE);
    assert_true(t.time_us[1][0] < 0 && t.time_us[0][0] < 0 && t.time_us[0][2] > 0);
    /* ring Simple on 8 servers of one GPU: base 8.4 us; 14 steps, all
     * between servers: ppn 1 takes the tree's network latency, 14 us */
    assert_true(t.base_us == 8.4 && t.inter_us == 14.0);
    /* channels: NCCL_MAX_NCHANNELS caps, then 64 KiB of Simple keeps
     * channels while bytes >= channels x 512 threads x 64 B: 2 of 4 */
    a = (coll_args){.type = COLL_ALLGATHER, .bytes = 65536, .channels = 8, .max_channels = 4,
                    .proto = COLL_PROTO_SIMPLE, .arch = COLL_ARCH_HOPPER};
    coll_tune(f.c, &a, &t);
    assert_int_equal(t.channels, 2);
    a.bytes = 65532;
    coll_tune(f.c, &a, &t);
    assert_int_equal(t.channels, 1);
    /* NCCL_MIN_NCHANNELS raises the communicator's channels, the call
     * trims: 1 MiB keeps all 6 */
    a = (coll_args){.type = COLL_ALLGATHER, .bytes = 1 << 20, .channels = 1, .min_channels = 6,
                    .proto = COLL_PROTO_SIMPLE, .arch = COLL_ARCH_HOPPER};
    coll_tune(f.c, &a, &t);
    assert_int_equal(t.channels, 6);
    fx_free(&f);
}

/* A one-step collective (all-gather on 2 hosts of the star) pays exactly
 * the protocol's terms on top of what the same messages cost on the
 * network: Simple 8.4 us base + 14 us for its network step; LL 6.6 + 5.0
 * us with twice the bytes on the wire; LL128 14.0 + 8.5 us with 128 B per
 * 120; SimAI's send latency once more per message on the way. */
static int64_t one_step_ps(coll_args a)
{
    fixture f;
    fx_open(&f, STAR8, 2);
    a.type = COLL_ALLGATHER;
    a.channels = 1;
    a.arch = COLL_ARCH_HOPPER;
    coll_result r = run1(&f, f.c, a);
    fx_free(&f);
    return r.finish_ps - r.start_ps;
}

static void test_nccl_one_step_latency_terms(void **state)
{
    (void)state;
    int64_t none = one_step_ps((coll_args){.bytes = 65536});
    assert_int_equal(one_step_ps((coll_args){.bytes = 65536, .proto = COLL_PROTO_SIMPLE}) - none,
                     (8400 + 14000) * 1000LL);
    assert_int_equal(one_step_ps((coll_args){.bytes = 65536, .proto = COLL_PROTO_SIMPLE,
                                             .send_lat_ps = 3000000}) - none,
                     (8400 + 14000 + 3000) * 1000LL);
    int64_t none2 = one_step_ps((coll_args){.bytes = 131072});
    assert_int_equal(one_step_ps((coll_args){.bytes = 65536, .proto = COLL_PROTO_LL}) - none2,
                     (6600 + 5000) * 1000LL);
    int64_t none3 = one_step_ps((coll_args){.bytes = 65536});
    assert_int_equal(one_step_ps((coll_args){.bytes = 61440, .proto = COLL_PROTO_LL128}) - none3,
                     (14000 + 8500) * 1000LL);
    /* the tuner's own pick at 64 KiB on 2 servers runs too, and says so */
    fixture f;
    fx_open(&f, STAR8, 2);
    coll_result r = run1(&f, f.c, (coll_args){.type = COLL_ALLGATHER, .bytes = 65536,
                                              .proto = COLL_PROTO_AUTO,
                                              .arch = COLL_ARCH_HOPPER});
    assert_true(r.proto >= COLL_PROTO_LL && r.proto <= COLL_PROTO_SIMPLE);
    assert_int_equal(r.algo, COLL_ALGO_RING);
    fx_free(&f);
}

/* `aisim run ai/nccl-allreduce-small` prints what a script written for
 * all_reduce_perf parses: data lines are those not starting with '#',
 * 13 whitespace-separated fields (size count type redop root, then time
 * algbw busbw #wrong out of place and in place), in nccl-tests' columns
 * (the size ends at column 12, every line 116 characters), #wrong N/A;
 * the out-of-bounds line and "# Avg bus bandwidth    : X" after them. */
static void test_nccl_tests_layout(void **state)
{
    (void)state;
    json_decref(tu_run("ai/nccl-allreduce-small", "layout", NULL, 0));
    char path[256];
    snprintf(path, sizeof path, "%s/layout/nccl_tests.txt", tu_tmp);
    char *txt = tu_slurp(path, NULL);
    assert_non_null(strstr(txt, "# Collective test starting: all_reduce_perf\n"));
    assert_non_null(strstr(txt, "#       size         count      type   redop    root     time "
                                "  algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"));
    int rows = 0;
    double sum = 0, avg = -1;
    int oob = -1;
    for (char *l = txt; *l; l = strchr(l, '\n') + 1) {
        char *end = strchr(l, '\n');
        assert_non_null(end);
        if (*l == '#') {
            sscanf(l, "# Avg bus bandwidth    : %lf", &avg);
            sscanf(l, "# Out of bounds values : %d OK", &oob);
            continue;
        }
        assert_int_equal(end - l, 116);
        assert_true(l[11] != ' ' && l[12] == ' ');
        long long size, count;
        int root;
        char type[16], op[16], w1[8], w2[8];
        double t1, a1, b1, t2, a2, b2;
        assert_int_equal(sscanf(l, "%lld %lld %15s %15s %d %lf %lf %lf %7s %lf %lf %lf %7s",
                                &size, &count, type, op, &root, &t1, &a1, &b1, w1, &t2, &a2, &b2,
                                w2), 13);
        assert_int_equal(size, 1024LL << (2 * rows));
        assert_int_equal(count, size / 4);
        assert_string_equal(type, "float");
        assert_string_equal(op, "sum");
        assert_int_equal(root, -1);
        assert_string_equal(w1, "N/A");
        assert_string_equal(w2, "N/A");
        assert_true(t1 == t2 && b1 == b2 && t1 > 0 && b1 > 0);
        sum += b1;
        rows++;
    }
    assert_int_equal(rows, 7);
    assert_int_equal(oob, 0);
    assert_true(fabs(avg - sum / rows) < 0.01);
    free(txt);
}

/* AICB's own micro-test log (workload/physical/micro_test/, all-reduce
 * 4 KiB .. 8 GiB, 100 warm-up calls then 100 per size) as the sweep:
 * with max_bytes 64 KiB and iters 2, the sizes 4 KiB .. 64 KiB in the
 * log's order, 2 timed calls each after its 100 warm-up calls. */
static void test_aicb_micro_log(void **state)
{
    (void)state;
    const char *sets[] = {"collective.sweep.aicb_micro=../../data/llm_comm_workloads/"
                          "aicb_micro/all_reduce_workload.csv",
                          "collective.sweep.max_bytes=64KiB", "collective.sweep.iters=2"};
    json_t *sum = tu_run("ai/nccl-allreduce-small", "micro", sets, 3);
    json_t *nt = json_object_get(json_object_get(sum, "results"), "nccl_tests");
    assert_int_equal(json_integer_value(json_object_get(nt, "sizes")), 5);
    assert_int_equal(json_integer_value(json_object_get(nt, "sizes_completed")), 5);
    assert_int_equal(json_integer_value(json_object_get(nt, "calls")), 100 + 5 * 2);
    assert_string_equal(json_string_value(json_object_get(nt, "op")), "all_reduce");
    for (uint64_t b = 4096; b <= 65536; b *= 2)
        assert_true(tu_nccl_time_us("micro", b) > 0);
    json_decref(sum);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_allreduce_meets_alpha_beta),
        cmocka_unit_test(test_reduce_scatter_and_all_gather_meet_alpha_beta),
        cmocka_unit_test(test_busbw_is_link_rate_for_large_messages),
        cmocka_unit_test(test_every_algorithm_moves_its_bytes),
        cmocka_unit_test(test_tree_sends_at_most_2S_per_rank),
        cmocka_unit_test(test_hierarchical_bytes_per_link_class),
        cmocka_unit_test(test_tree_chains_in_servers),
        cmocka_unit_test(test_pxn_keeps_all_to_all_on_rails),
        cmocka_unit_test(test_ring_allreduce_over_rdma_meets_the_tcp_formula),
        cmocka_unit_test(test_sub_communicators_run_together),
        cmocka_unit_test(test_example_sweep_table),
        cmocka_unit_test(test_example_over_rdma),
        cmocka_unit_test(test_sweep_warmup_and_mean_of_iters),
        cmocka_unit_test(test_example_128_at_one_size),
        cmocka_unit_test(test_pipelined_messages_report_all_their_bytes),
        cmocka_unit_test(test_one_rank_reports_zero_not_nan),
        cmocka_unit_test(test_run_stopped_mid_call_frees_it),
        cmocka_unit_test(test_nccl_protocol_at_size_boundaries),
        cmocka_unit_test(test_nccl_one_step_latency_terms),
        cmocka_unit_test(test_nccl_two_servers_tree_bandwidth),
        cmocka_unit_test(test_nccl_tests_layout),
        cmocka_unit_test(test_aicb_micro_log),
    };
    return cmocka_run_group_tests_name("collective", tests, tu_setup, tu_teardown);
}
