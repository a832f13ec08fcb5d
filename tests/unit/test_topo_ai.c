/*
 * test_topo_ai.c - AI-cluster topologies: the rail-optimised and dual-plane
 * builders (node and link counts, names, numbering), reachability of every
 * endpoint pair, shortest paths (NVLink within a server, ToR within a rail
 * and segment, aggregation otherwise), ECMP and spraying over both planes,
 * a plane's failure moving routes, sprayed packets and a whole scenario's
 * traffic to the other plane, node ids past 16 bits, and the scenario keys
 * with their errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/topo.h"
#include "aisim/units.h"
#include "testutil.h"
#include "topobed.h"


static link_cfg mk_link(int64_t rate_bps)
{
    link_cfg c = {.rate_bps = rate_bps, .delay_ps = PS_PER_US};
    c.port.buffer_bytes = 1 << 20;
    c.port.nprio = 1;
    return c;
}

/* servers x gpus, `spt` servers per ToR, `aggs` per plane, `planes`. */
static void build(bed *b, int servers, int gpus, int spt, int aggs, int planes)
{
    topo_rail_cfg c = {.servers = servers, .gpus = gpus, .servers_per_tor = spt,
                       .aggs = aggs, .planes = planes, .nic = mk_link(GBPS(200)),
                       .fabric = mk_link(GBPS(400)), .nvlink = mk_link(GBPS(3600))};
    err e = {0};
    if (topo_build_rail(b->t, &c, &e))
        fail_msg("%s", e.msg);
}

static int node(const topo *t, const char *name)
{
    int id = topo_find_node(t, name);
    if (id < 0)
        fail_msg("no node %s", name);
    return id;
}

static int host(const topo *t, const char *name) { return topo_node_host(t, node(t, name)); }

static const char *link_name(topo *t, int l) { return topo_link_port(t, l, 0)->base.name; }

/* The names of the nodes a route visits after its source, "a b c". */
static void route_nodes(const route *r, char *buf, size_t n)
{
    buf[0] = 0;
    for (uint16_t i = 0; i + 1 < r->len; i += 2) {
        const char *pn = r->hop[i]->name;     /* "from->to" */
        const char *to = strstr(pn, "->") + 2;
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", len ? " " : "", to);
    }
}

static int route_links(const route *r) { return (r->len - 1) / 2; }

/* ---- builders ----------------------------------------------------------- */

static void test_rail_optimised_counts_and_names(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    /* 4 servers x 2 GPUs, 2 per ToR: 8 endpoints, 4 NVSwitches, 2
     * segments x 2 rails = 4 ToRs, 2 aggs; links: 8 NIC, 8 NVLink, 4 x 2. */
    build(&b, 4, 2, 2, 2, 1);
    assert_int_equal(topo_hosts(b.t), 8);
    assert_int_equal(topo_nodes(b.t), 18);
    assert_int_equal(topo_links(b.t), 24);
    const char *names[] = {"s0.g0", "s0.g1", "s1.g0", "s1.g1", "s2.g0", "s2.g1", "s3.g0",
                           "s3.g1", "s0.nvs", "s1.nvs", "s2.nvs", "s3.nvs", "tor0.r0",
                           "tor0.r1", "tor1.r0", "tor1.r1", "agg0", "agg1"};
    for (int i = 0; i < 18; i++) {
        assert_string_equal(topo_node_name(b.t, i), names[i]);
        assert_int_equal(topo_node_kind(b.t, i), i < 8 ? NODE_HOST : NODE_SWITCH);
        if (i < 8)
            assert_int_equal(topo_node_host(b.t, i), i);
    }
    /* NIC links in endpoint order, then NVLinks, then ToR-agg. */
    assert_string_equal(link_name(b.t, 0), "s0.g0->tor0.r0");
    assert_string_equal(link_name(b.t, 3), "s1.g1->tor0.r1");
    assert_string_equal(link_name(b.t, 4), "s2.g0->tor1.r0");
    assert_string_equal(link_name(b.t, 8), "s0.g0->s0.nvs");
    assert_string_equal(link_name(b.t, 15), "s3.g1->s3.nvs");
    assert_string_equal(link_name(b.t, 16), "tor0.r0->agg0");
    assert_string_equal(link_name(b.t, 23), "tor1.r1->agg1");
    assert_int_equal(topo_link_port(b.t, 8, 0)->cfg.rate_bps, GBPS(3600));
    assert_true(topo_link_is_intra_host(b.t, 8) && !topo_link_is_intra_host(b.t, 0) &&
                !topo_link_is_intra_host(b.t, 16));
    bed_fini(&b);

    /* One GPU per server: no NVSwitch; a partial last segment. */
    bed_init(&b);
    build(&b, 3, 1, 2, 1, 1);
    assert_int_equal(topo_nodes(b.t), 3 + 2 + 1);
    assert_int_equal(topo_links(b.t), 3 + 2);
    assert_string_equal(topo_node_name(b.t, 3), "tor0.r0");
    assert_string_equal(link_name(b.t, 2), "s2.g0->tor1.r0");
    bed_fini(&b);
}

static void test_dual_plane_counts_and_names(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    /* 4 servers x 2 GPUs, 2 per ToR, 2 aggs per plane: 8 endpoints, 4
     * NVSwitches, 2 planes x 4 ToRs, 2 x 2 aggs; links: 16 NIC ports, 8
     * NVLinks, 2 x 4 x 2 ToR-agg. */
    build(&b, 4, 2, 2, 2, 2);
    assert_int_equal(topo_hosts(b.t), 8);
    assert_int_equal(topo_nodes(b.t), 24);
    assert_int_equal(topo_links(b.t), 40);
    assert_string_equal(topo_node_name(b.t, 12), "p0.tor0.r0");
    assert_string_equal(topo_node_name(b.t, 15), "p0.tor1.r1");
    assert_string_equal(topo_node_name(b.t, 16), "p1.tor0.r0");
    assert_string_equal(topo_node_name(b.t, 20), "p0.agg0");
    assert_string_equal(topo_node_name(b.t, 23), "p1.agg1");
    assert_string_equal(link_name(b.t, 0), "s0.g0->p0.tor0.r0");
    assert_string_equal(link_name(b.t, 1), "s0.g0->p1.tor0.r0");
    assert_string_equal(link_name(b.t, 15), "s3.g1->p1.tor1.r1");
    assert_string_equal(link_name(b.t, 16), "s0.g0->s0.nvs");
    assert_string_equal(link_name(b.t, 24), "p0.tor0.r0->p0.agg0");
    assert_string_equal(link_name(b.t, 39), "p1.tor1.r1->p1.agg1");
    /* Planes share nothing: no link joins a p0 node to a p1 node. */
    for (size_t l = 0; l < topo_links(b.t); l++) {
        int x, y;
        topo_link_ends(b.t, (int)l, &x, &y);
        const char *nx = topo_node_name(b.t, x), *ny = topo_node_name(b.t, y);
        assert_false(nx[0] == 'p' && ny[0] == 'p' && nx[1] != ny[1]);
    }
    bed_fini(&b);
}

/* ---- routing ------------------------------------------------------------ */

static void test_every_pair_reachable_by_shortest_paths(void **state)
{
    (void)state;
    for (int planes = 1; planes <= 2; planes++) {
        bed b;
        bed_init(&b);
        build(&b, 4, 4, 2, 2, planes);
        int n = (int)topo_hosts(b.t);
        for (int s = 0; s < n; s++)
            for (int d = 0; d < n; d++) {
                if (s == d)
                    continue;
                const route *r = topo_route_ecmp(b.t, s, d, (uint64_t)(s * n + d));
                assert_non_null(r);
                int ss = s / 4, sg = s % 4, ds = d / 4, dg = d % 4;
                /* Same server: NVLink (2 hops); same rail and segment: the
                 * ToR (2); otherwise ToR, agg, ToR (4). */
                int want = ss == ds ? 2 : (sg == dg && ss / 2 == ds / 2) ? 2 : 4;
                assert_int_equal(route_links(r), want);
                char buf[256];
                route_nodes(r, buf, sizeof buf);
                if (ss == ds)
                    assert_non_null(strstr(buf, ".nvs"));
                else
                    assert_null(strstr(buf, ".nvs"));   /* never through a server */
                size_t np;
                topo_paths(b.t, s, d, &np);
                /* ECMP fan-out: planes at the source, aggs on the way up. */
                size_t wantp = ss == ds ? 1 : (size_t)planes * (want == 4 ? 2 : 1);
                assert_int_equal(np, wantp);
            }
        bed_fini(&b);
    }
}

static void test_shortest_paths_by_name(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    build(&b, 4, 2, 2, 2, 1);
    char buf[256];
    route_nodes(topo_route_ecmp(b.t, host(b.t, "s0.g0"), host(b.t, "s0.g1"), 1), buf,
                sizeof buf);
    assert_string_equal(buf, "s0.nvs s0.g1");
    route_nodes(topo_route_ecmp(b.t, host(b.t, "s0.g1"), host(b.t, "s1.g1"), 1), buf,
                sizeof buf);
    assert_string_equal(buf, "tor0.r1 s1.g1");
    const route *r = topo_route_ecmp(b.t, host(b.t, "s0.g0"), host(b.t, "s3.g0"), 1);
    route_nodes(r, buf, sizeof buf);
    assert_true(strcmp(buf, "tor0.r0 agg0 tor1.r0 s3.g0") == 0 ||
                strcmp(buf, "tor0.r0 agg1 tor1.r0 s3.g0") == 0);
    route_nodes(r->reverse, buf, sizeof buf);
    assert_true(strncmp(buf, "tor1.r0 agg", 11) == 0 && strstr(buf, "tor0.r0 s0.g0"));
    /* Cross-rail, cross-server: up to an agg and down the other rail (no
     * PXN: the NVSwitch does not relay to the GPU of the other rail). */
    route_nodes(topo_route_ecmp(b.t, host(b.t, "s0.g0"), host(b.t, "s1.g1"), 7), buf,
                sizeof buf);
    assert_true(strncmp(buf, "tor0.r0 agg", 11) == 0 && strstr(buf, " tor0.r1 s1.g1"));
    /* With its NVLink down, a GPU reaches its neighbour through the
     * network (up to an agg and down the other rail). */
    topo_link_set_up(b.t, topo_find_link(b.t, node(b.t, "s0.g0"), node(b.t, "s0.nvs")), false, 0);
    route_nodes(topo_route_ecmp(b.t, host(b.t, "s0.g0"), host(b.t, "s0.g1"), 1), buf,
                sizeof buf);
    assert_true(strncmp(buf, "tor0.r0 agg", 11) == 0 && strstr(buf, " tor0.r1 s0.g1"));
    bed_fini(&b);
}

/* The plane of the first hop of a route from an endpoint: 0 or 1. */
static int plane_of(const route *r)
{
    const char *pn = r->hop[0]->name;
    const char *to = strstr(pn, "->") + 2;
    assert_true(to[0] == 'p');
    return to[1] - '0';
}

static void test_dual_plane_ecmp_spreads_over_both_planes(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    build(&b, 4, 2, 2, 2, 2);
    int s = host(b.t, "s0.g0"), d = host(b.t, "s3.g0");
    int per[2] = {0, 0}, back[2] = {0, 0};
    for (uint64_t k = 0; k < 4000; k++) {
        const route *r = topo_route_ecmp(b.t, s, d, k * 0x9e3779b97f4a7c15u + 1);
        per[plane_of(r)]++;
        back[plane_of(r->reverse)]++;
        /* A flow stays in its plane: every switch on the way is of it. */
        char buf[256];
        route_nodes(r, buf, sizeof buf);
        char want[4] = {'p', (char)('0' + plane_of(r)), '.', 0};
        for (char *x = strchr(buf, 'p'); x; x = strchr(x + 1, 'p'))
            if (x == buf || x[-1] == ' ')
                assert_memory_equal(x, want, 3);
    }
    assert_int_equal(per[0] + per[1], 4000);
    assert_true(per[0] > 1800 && per[1] > 1800);
    assert_int_equal(back[0], per[0]);      /* ACKs come back in the plane */
    bed_fini(&b);
}

/* Sends n packets from endpoint s to d by entropy (spraying), entropy i. */
static void spray(bed *b, int s, int d, int n)
{
    topo_bind_flow(b->t, 0, s, &b->rx.base, d, &b->rx.base);
    for (int i = 0; i < n; i++) {
        pkt *p = bed_hop_pkt(b, d, (uint32_t)i * 2654435761u);
        sink *f = topo_node_forwarder(b->t, topo_host_node(b->t, s));
        f->recv(f, p);
    }
    sim_run(b->s, SIM_TIME_MAX);
}

static uint64_t tx_bytes(topo *t, const char *a, const char *bn)
{
    int l = topo_find_link(t, node(t, a), node(t, bn));
    assert_true(l >= 0);
    int x, y;
    topo_link_ends(t, l, &x, &y);
    return topo_link_port(t, l, x == node(t, a) ? 0 : 1)->stat_tx_bytes;
}

static void test_dual_plane_failure_moves_traffic_to_other_plane(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    build(&b, 4, 2, 2, 2, 2);
    topo *t = b.t;
    int s = host(t, "s0.g0"), d = host(t, "s3.g0");
    /* Sprayed packets use both planes while both are up. */
    spray(&b, s, d, 200);
    assert_int_equal(b.rx.n, 200);
    uint64_t p0 = tx_bytes(t, "s0.g0", "p0.tor0.r0"), p1 = tx_bytes(t, "s0.g0", "p1.tor0.r0");
    assert_true(p0 > 200 * 1500 / 4 && p1 > 200 * 1500 / 4 && p0 + p1 == 200 * 1500);

    /* Every plane-0 ToR uplink fails (100 us convergence): sprayed packets
     * and ECMP routes across segments leave plane 0 alone; within a
     * segment and rail plane 0 still serves (its ToR is up). */
    int64_t at = sim_now(b.s);
    for (size_t l = 0; l < topo_links(t); l++)
        if (strncmp(link_name(t, (int)l), "p0.tor", 6) == 0)
            topo_link_set_up(t, (int)l, false, 100 * PS_PER_US);
    sim_run(b.s, at + 101 * PS_PER_US);
    spray(&b, s, d, 200);
    assert_int_equal(b.rx.n, 400);
    assert_int_equal(tx_bytes(t, "s0.g0", "p0.tor0.r0"), p0);
    assert_int_equal(tx_bytes(t, "s0.g0", "p1.tor0.r0"), p1 + 200 * 1500);
    assert_int_equal(topo_noroute_drops(t), 0);
    for (uint64_t k = 0; k < 200; k++) {
        const route *r = topo_route_ecmp(t, s, d, k * 7919 + 3);
        assert_int_equal(plane_of(r), 1);
        assert_int_equal(plane_of(r->reverse), 1);
    }
    int both[2] = {0, 0};
    for (uint64_t k = 0; k < 200; k++)
        both[plane_of(topo_route_ecmp(t, s, host(t, "s1.g0"), k * 7919 + 3))]++;
    assert_true(both[0] > 50 && both[1] > 50);

    /* One endpoint's plane-1 port fails too: it is cut off from other
     * segments (nothing is routed into plane 0 above the ToRs) but still
     * reaches its rail in its segment through plane 0, and its server's
     * GPUs through NVLink. */
    topo_link_set_up(t, topo_find_link(t, node(t, "s0.g0"), node(t, "p1.tor0.r0")), false, 0);
    assert_null(topo_route_ecmp(t, s, d, 1));
    assert_null(topo_route_ecmp(t, d, s, 1));
    assert_int_equal(plane_of(topo_route_ecmp(t, s, host(t, "s1.g0"), 1)), 0);
    assert_non_null(topo_route_ecmp(t, s, host(t, "s0.g1"), 1));
    spray(&b, s, d, 10);
    assert_int_equal(topo_noroute_drops(t), 10);
    bed_fini(&b);
}

/* ---- 32-bit node ids ---------------------------------------------------- */

static void test_node_ids_past_16_bits(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    link_cfg l = mk_link(GBPS(10));
    err e = {0};
    assert_int_equal(topo_build_star(b.t, 70000, &l, &e), 0);
    assert_int_equal(topo_nodes(b.t), 70001);
    assert_int_equal(node(b.t, "h69999"), 69999);
    assert_int_equal(node(b.t, "sw0"), 70000);
    const route *r = topo_route_ecmp(b.t, 69999, 65536, 1);
    assert_int_equal(route_links(r), 2);
    assert_string_equal(r->hop[2]->name, "sw0->h65536");
    spray(&b, 69998, 65535, 3);
    assert_int_equal(b.rx.n, 3);
    bed_fini(&b);
}

/* ---- scenario keys ------------------------------------------------------ */

static int load_topo(bed *b, const char *yaml, err *e)
{
    cfg_doc *d;
    int rc = cfg_load_string("t.yaml", yaml, strlen(yaml), &d, e);
    if (rc)
        return rc;
    rc = topo_from_cfg(b->t, cfg_get(cfg_root(d), "topology"), "topology", e);
    cfg_free(d);
    return rc;
}

static void test_from_cfg_rail_kinds(void **state)
{
    (void)state;
    bed b;
    err e = {0};
    bed_init(&b);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: rail_optimised\n"
                                   "  servers: 4\n"
                                   "  gpus_per_server: 8\n"
                                   "  rails: 8\n"
                                   "  servers_per_tor: 2\n"
                                   "  aggs: 4\n"
                                   "  nic_link: {rate: 400Gbps, delay: 500ns, ecn_k: 100KB}\n"
                                   "  oversubscription: 2\n", &e), 0);
    assert_int_equal(topo_hosts(b.t), 32);
    /* 32 endpoints, 4 NVSwitches, 2 x 8 ToRs, 4 aggs. */
    assert_int_equal(topo_nodes(b.t), 32 + 4 + 16 + 4);
    /* fabric: 2 x 400 Gbps / (4 aggs x 2) = 100 Gbps, else as nic_link. */
    int f = topo_find_link(b.t, node(b.t, "tor1.r7"), node(b.t, "agg3"));
    assert_int_equal(topo_link_port(b.t, f, 0)->cfg.rate_bps, GBPS(100));
    assert_int_equal(topo_link_port(b.t, f, 0)->cfg.ecn_k_bytes, 100000);
    /* NVLink defaults: 3600 Gbps, 25 ns, 1 MiB. */
    int nv = topo_find_link(b.t, node(b.t, "s2.g5"), node(b.t, "s2.nvs"));
    assert_int_equal(topo_link_port(b.t, nv, 0)->cfg.rate_bps, GBPS(3600));
    assert_int_equal(topo_link_wire(b.t, nv, 0)->delay_ps, 25000);
    assert_int_equal(topo_link_port(b.t, nv, 0)->cfg.buffer_bytes, 1 << 20);
    assert_int_equal(topo_link_port(b.t, nv, 0)->cfg.ecn_k_bytes, 0);
    bed_fini(&b);

    bed_init(&b);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: dual_plane\n"
                                   "  servers: 16\n"
                                   "  gpus_per_server: 8\n"
                                   "  servers_per_tor: 8\n"
                                   "  aggs: 4\n"
                                   "  nic_link: {rate: 200Gbps}\n"
                                   "  fabric_link: {rate: 400Gbps}\n"
                                   "  nvlink: {rate: 2880Gbps, buffer: 4MiB}\n", &e), 0);
    assert_int_equal(topo_hosts(b.t), 128);
    assert_int_equal(topo_nodes(b.t), 128 + 16 + 2 * 16 + 2 * 4);
    assert_int_equal(topo_links(b.t), 256 + 128 + 2 * 16 * 4);
    nv = topo_find_link(b.t, node(b.t, "s15.g7"), node(b.t, "s15.nvs"));
    assert_int_equal(topo_link_port(b.t, nv, 1)->cfg.rate_bps, GBPS(2880));
    assert_int_equal(topo_link_port(b.t, nv, 1)->cfg.buffer_bytes, 4 << 20);
    assert_int_equal(topo_link_wire(b.t, nv, 1)->delay_ps, 25000);
    assert_true(topo_find_link(b.t, node(b.t, "s15.g7"), node(b.t, "p1.tor1.r7")) >= 0);
    bed_fini(&b);
}

/* Custom topologies describe servers by hand: GPU endpoints with NVLinks
 * to their NVSwitch, links by GPU name or by NIC index; a server's GPUs
 * talk over NVLink even when their NICs share a switch. */
static void test_from_cfg_custom_servers(void **state)
{
    (void)state;
    bed b;
    err e = {0};
    bed_init(&b);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: custom\n"
                                   "  hosts: [{name: a, gpus: 2, nics: 2, ports_per_nic: 2},\n"
                                   "          {name: b, gpus: 2}, c]\n"
                                   "  switches: [t0, t1]\n"
                                   "  link: {rate: 100Gbps}\n"
                                   "  nvlink: {delay: 100ns}\n"
                                   "  links:\n"
                                   "    - {a: a, nic: 0, b: t0}\n"
                                   "    - {a: a, nic: 0, b: t1}\n"
                                   "    - {a: a, nic: 1, b: t1}\n"
                                   "    - {a: b.g0, b: t0}\n"
                                   "    - {a: b, nic: 1, b: t1}\n"
                                   "    - {a: c, b: t0}\n"
                                   "    - {a: t0, b: t1, rate: 400Gbps}\n", &e), 0);
    const char *names[] = {"a.g0", "a.g1", "b.g0", "b.g1", "c", "a.nvs", "b.nvs", "t0", "t1"};
    assert_int_equal(topo_nodes(b.t), 9);
    assert_int_equal(topo_hosts(b.t), 5);
    for (int i = 0; i < 9; i++)
        assert_string_equal(topo_node_name(b.t, i), names[i]);
    /* Listed links keep their ids; NVLinks follow. */
    assert_int_equal(topo_links(b.t), 7 + 4);
    assert_string_equal(link_name(b.t, 1), "a.g0->t1");
    assert_string_equal(link_name(b.t, 4), "b.g1->t1");
    assert_string_equal(link_name(b.t, 7), "a.g0->a.nvs");
    assert_int_equal(topo_link_wire(b.t, 7, 0)->delay_ps, 100000);
    assert_true(topo_link_is_intra_host(b.t, 10));
    char buf[256];
    for (uint64_t k = 0; k < 64; k++) {     /* t1 is as near: NVLink wins */
        route_nodes(topo_route_ecmp(b.t, 0, 1, k), buf, sizeof buf);
        assert_string_equal(buf, "a.nvs a.g1");
    }
    size_t np;
    topo_paths(b.t, 0, 1, &np);
    assert_int_equal(np, 1);
    topo_paths(b.t, 0, 3, &np);             /* a.g0 -> b.g1: via t1 only */
    assert_int_equal(np, 1);
    topo_paths(b.t, 4, 0, &np);             /* c -> a.g0: t0, or t0 t1 */
    assert_int_equal(np, 1);
    bed_fini(&b);
}

typedef struct bad_case {
    const char *yaml, *msg;
} bad_case;

static void test_from_cfg_rail_errors(void **state)
{
    (void)state;
    static const bad_case cs[] = {
        {"topology: {kind: dual_plane, servers: 2, gpus_per_server: 8, rails: 4,\n"
         "  servers_per_tor: 2, aggs: 1, nic_link: {rate: 200Gbps}}\n",
         "t.yaml:1:69: topology.rails: expected 8 (one rail per NIC, one NIC per GPU: "
         "gpus_per_server), found 4"},
        {"topology: {kind: rail_optimized, servers: 2}\n",
         "t.yaml:1:18: topology.kind: expected one of: dumbbell, star, leaf_spine, "
         "fat_tree, rail_optimised, dual_plane, custom, found \"rail_optimized\"; did you "
         "mean \"rail_optimised\"?"},
        {"topology: {kind: rail_optimised, servers: 2, gpus_per_server: 2,\n"
         "  servers_per_tor: 2, aggs: 0, nic_link: {rate: 200Gbps}}\n",
         "t.yaml:2:29: topology.aggs: expected an integer in [1, 100000], found \"0\""},
        {"topology: {kind: rail_optimised, servers: 2, gpus_per_server: 2,\n"
         "  servers_per_tor: 2, aggs: 1, nic_link: {rate: 200Gbps},\n"
         "  fabric_link: {rate: 400Gbps}, oversubscription: 2}\n",
         "t.yaml:3:51: topology.oversubscription: give either fabric_link or "
         "oversubscription, not both"},
        {"topology: {kind: dual_plane, servers: 2, gpus_per_server: 2,\n"
         "  servers_per_tor: 2, aggs: 1, nic_link: {rate: 200Gbps}, nvlink: {rate: 0Gbps}}\n",
         "t.yaml:2:74: topology.nvlink.rate: expected a rate > 0bps, found \"0Gbps\""},
        {"topology: {kind: dual_plane, servers: 2, gpus_per_server: 2, planes: 2,\n"
         "  servers_per_tor: 2, aggs: 1, nic_link: {rate: 200Gbps}}\n",
         "t.yaml:1:62: topology.planes: unknown key; expected one of: kind, servers, "
         "gpus_per_server, rails, servers_per_tor, aggs, nic_link, fabric_link, "
         "oversubscription, nvlink, shared_buffer, nic_scheduling, mark_at"},
#define CUSTOM_AB "topology:\n  kind: custom\n  hosts: [{name: a, gpus: 2}, b]\n" \
                  "  switches: [t]\n  link: {rate: 1Gbps}\n  links:\n"
        {CUSTOM_AB "    - {a: a, nic: 2, b: t}\n",
         "t.yaml:7:19: topology.links[0].nic: expected a NIC of server a, 0 .. 1 (one per "
         "GPU), found 2"},
        {CUSTOM_AB "    - {a: a, b: t}\n",
         "t.yaml:7:11: topology.links[0].a: a is a server: give nic: N (0 .. 1) or name one of "
         "its GPUs (a.g0 ..)"},
        {CUSTOM_AB "    - {a: t, b: a}\n",
         "t.yaml:7:17: topology.links[0].b: a is a server: name one of its GPUs (a.g0 .. "
         "a.g1), or put it in a with nic: N"},
        {CUSTOM_AB "    - {a: b, nic: 0, b: t}\n",
         "t.yaml:7:19: topology.links[0].nic: b is not a server (nic picks a NIC of a server "
         "named in a)"},
        {"topology:\n  kind: custom\n  hosts: [{name: a, gpus: 8, nics: 4}]\n  links: []\n",
         "t.yaml:3:36: topology.hosts[0].nics: expected 8 (one NIC per GPU: GPU j uses NIC j, "
         "its rail), found 4"},
        {"topology:\n  kind: custom\n  hosts: [{name: a, gpus: 1, ports_per_nic: 1}, b]\n"
         "  switches: [t, u]\n  link: {rate: 1Gbps}\n  links:\n    - {a: a.g0, b: t}\n"
         "    - {a: a, nic: 0, b: u}\n",
         "t.yaml:8:7: topology.links[1]: NIC 0 of server a has 1 port (ports_per_nic), all "
         "linked already"},
        {"topology:\n  kind: custom\n  hosts: [a.g1, {name: a, gpus: 2}]\n  links: []\n",
         "t.yaml:3:24: topology.hosts[1].name: duplicate node name \"a.g1\" (first given at "
         "line 3, column 11)"},
        {"topology:\n  kind: custom\n  hosts: [{name: a, gpus: 2}, a]\n  links: []\n",
         "t.yaml:3:31: topology.hosts[1]: duplicate node name \"a\" (first given at line 3, "
         "column 18)"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        bed b;
        bed_init(&b);
        err e = {0};
        if (load_topo(&b, cs[i].yaml, &e) >= 0)
            fail_msg("accepted: %s", cs[i].yaml);
        assert_string_equal(e.msg, cs[i].msg);
        bed_fini(&b);
    }
}

/* ---- the example: a plane's failure in a whole run ---------------------- */

/* Bytes sent on the ports named in links.csv of run `sub` whose names
 * start with one of `from` and contain `to`. */
static double csv_bytes(const char *sub, const char *const *from, int nfrom, const char *to)
{
    char p[256], line[512];
    snprintf(p, sizeof p, "%s/%s/links.csv", tu_tmp, sub);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    double sum = 0;
    while (fgets(line, sizeof line, f)) {
        char *c = strchr(line, ',');
        if (!c)
            continue;
        *c = 0;
        for (int i = 0; i < nfrom; i++)
            if (strncmp(line, from[i], strlen(from[i])) == 0 && strstr(line, to)) {
                char *r = strchr(c + 1, ',');      /* rate, then tx_bytes */
                sum += strtod(r + 1, NULL);
            }
    }
    fclose(f);
    return sum;
}

static void test_dual_plane_example_plane_failure(void **state)
{
    (void)state;
    /* Server 0's GPUs lose their plane-0 ports at the start: all their
     * traffic goes through plane 1, and every message still completes. */
    json_t *base = tu_run("net/dual-plane", "base", NULL, 0);
    char fl[2048] = "net.failures=[";
    for (int g = 0; g < 8; g++) {
        size_t n = strlen(fl);
        snprintf(fl + n, sizeof fl - n, "%s{a: s0.g%d, b: p0.tor0.r%d, at: 0s}", g ? ", " : "",
                 g, g);
    }
    strcat(fl, "]");
    const char *sets[] = {fl};
    json_t *fail = tu_run("net/dual-plane", "fail", sets, 1);
    json_t *rb = json_object_get(base, "results"), *rf = json_object_get(fail, "results");
    json_int_t n = json_integer_value(json_object_get(rb, "flows"));
    assert_true(n > 100);
    assert_int_equal(json_integer_value(json_object_get(rf, "flows")), n);
    assert_int_equal(json_integer_value(json_object_get(rf, "flows_completed")), n);
    assert_int_equal(json_integer_value(json_object_get(rb, "flows_completed")), n);

    const char *s0[] = {"s0.g"}, *tors[] = {"p0.tor0.r", "p1.tor0.r"};
    double b0 = csv_bytes("base", s0, 1, "->p0."), b1 = csv_bytes("base", s0, 1, "->p1.");
    double f0 = csv_bytes("fail", s0, 1, "->p0."), f1 = csv_bytes("fail", s0, 1, "->p1.");
    assert_true(b0 > 0 && b1 > 0);              /* both planes carry server 0 */
    assert_true(f0 == 0);                       /* no byte into plane 0 */
    assert_true(f1 > b1 && f1 >= 0.9 * (b0 + b1));
    /* ... nor out of it toward server 0's GPUs. */
    assert_true(csv_bytes("fail", tors, 1, "->s0.g") == 0);
    assert_true(csv_bytes("fail", tors + 1, 1, "->s0.g") > csv_bytes("base", tors + 1, 1,
                                                                       "->s0.g"));
    json_decref(base);
    json_decref(fail);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rail_optimised_counts_and_names),
        cmocka_unit_test(test_dual_plane_counts_and_names),
        cmocka_unit_test(test_every_pair_reachable_by_shortest_paths),
        cmocka_unit_test(test_shortest_paths_by_name),
        cmocka_unit_test(test_dual_plane_ecmp_spreads_over_both_planes),
        cmocka_unit_test(test_dual_plane_failure_moves_traffic_to_other_plane),
        cmocka_unit_test(test_node_ids_past_16_bits),
        cmocka_unit_test(test_from_cfg_rail_kinds),
        cmocka_unit_test(test_from_cfg_custom_servers),
        cmocka_unit_test(test_from_cfg_rail_errors),
        cmocka_unit_test(test_dual_plane_example_plane_failure),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
