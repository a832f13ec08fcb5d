/*
 * test_fwd.c - forwarders (fwd.h): D-mod-K's routes on k = 4 and k = 8 fat
 * trees equal the formula for every host pair; the adaptive forwarder
 * sends new packets away from a port with a standing queue where random
 * spraying does not; a topology D-mod-K cannot route is a located error;
 * the per-node port iterator walks a node's ports in link id order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "aisim/fault.h"
#include "aisim/fwd.h"
#include "aisim/netreg.h"
#include "aisim/topo.h"
#include "aisim/units.h"
#include "topobed.h"


static link_cfg mk_link(void)
{
    link_cfg c = {.rate_bps = GBPS(10), .delay_ps = US(1)};
    c.port.buffer_bytes = 1 << 20;
    c.port.nprio = 1;
    return c;
}

/* The nodes route rt crosses, by name, joined by spaces. */
static void route_names(const topo *t, const route *rt, int src, char *buf, size_t cap)
{
    size_t n;
    const int32_t *hop = topo_route_path(t, rt, &n);
    int u = src;
    snprintf(buf, cap, "%s", topo_node_name(t, u));
    for (size_t i = 0; i < n; i++) {
        int a, b;
        topo_link_ends(t, hop[i] >> 1, &a, &b);
        u = hop[i] & 1 ? a : b;
        snprintf(buf + strlen(buf), cap - strlen(buf), " %s", topo_node_name(t, u));
    }
}

/* D-mod-K on a k-ary fat tree, h = k/2 (Zahavi 2010; SimGrid's
 * FatTreeZone): going up, the edge switch takes aggregation switch d mod h
 * of its pod, that one core (d mod h) * h + (d div h) mod h. */
static void expected(int k, int s, int d, char *buf, size_t cap)
{
    int h = k / 2, ps = s / (h * h), pd = d / (h * h), es = (s / h) % h, ed = (d / h) % h;
    int a = d % h, c = a * h + (d / h) % h;
    if (s / h == d / h)
        snprintf(buf, cap, "h%d edge%d_%d h%d", s, ps, es, d);
    else if (ps == pd)
        snprintf(buf, cap, "h%d edge%d_%d agg%d_%d edge%d_%d h%d", s, ps, es, ps, a, pd, ed, d);
    else
        snprintf(buf, cap, "h%d edge%d_%d agg%d_%d core%d agg%d_%d edge%d_%d h%d", s, ps, es, ps,
                 a, c, pd, a, pd, ed, d);
}

static void check_dmodk(int k)
{
    bed b;
    bed_init(&b);
    link_cfg l = mk_link();
    err e = {0};
    assert_int_equal(topo_build_fat_tree(b.t, k, &l, &e), 0);
    assert_int_equal(topo_set_forwarder(b.t, &fwd_dmodk, NULL, NULL, "routing", &e), 0);
    int hosts = (int)topo_hosts(b.t);
    char got[256], want[256];
    for (int s = 0; s < hosts; s++)
        for (int d = 0; d < hosts; d++) {
            if (s == d)
                continue;
            const route *rt = topo_route_flow(b.t, s, d, (uint64_t)s * 7919 + (uint64_t)d);
            assert_non_null(rt);
            route_names(b.t, rt, s, got, sizeof got);
            expected(k, s, d, want, sizeof want);
            assert_string_equal(got, want);
        }
    /* Hop by hop, a packet takes the same path: h0 -> the last host. */
    int d = hosts - 1;
    topo_bind_flow(b.t, 0, 0, &b.rx.base, d, &b.rx.base);
    const route *rt = topo_route_flow(b.t, 0, d, 1);
    size_t n;
    const int32_t *hop = topo_route_path(b.t, rt, &n);
    pkt *p = bed_hop_pkt(&b, d, 12345);
    sink *f = topo_node_forwarder(b.t, 0);
    f->recv(f, p);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(topo_link_port(b.t, hop[i] >> 1, hop[i] & 1)->stat_tx_pkts, 1);
    bed_fini(&b);
}

static void test_dmodk_fat_tree_k4(void **state)
{
    (void)state;
    check_dmodk(4);
}

static void test_dmodk_fat_tree_k8(void **state)
{
    (void)state;
    check_dmodk(8);
}

/* D-mod-K needs a tree whose every node of a level has as many up links:
 * a rail fabric (NVSwitches with none beside ToRs with aggs) is not one. */
static void test_dmodk_rejects_non_tree(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    err e = {0};
    topo_rail_cfg c = {.servers = 2, .gpus = 2, .servers_per_tor = 1, .aggs = 2, .planes = 1,
                       .nic = mk_link(), .fabric = mk_link(), .nvlink = mk_link()};
    assert_int_equal(topo_build_rail(b.t, &c, &e), 0);
    assert_int_equal(topo_set_forwarder(b.t, &fwd_dmodk, NULL, NULL, "net.routing", &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "net.routing: expected a tree whose nodes of each level have "
                                  "as many up links (dmodk), found s0.nvs with 0 and tor0.r0 with "
                                  "2 at level 1"));
    bed_fini(&b);
}

/* leaf0's egress port to spine s. */
static port *uplink(topo *t, int s)
{
    char nm[16];
    snprintf(nm, sizeof nm, "spine%d", s);
    int leaf0 = topo_find_node(t, "leaf0");
    int lk = topo_find_link(t, leaf0, topo_find_node(t, nm));
    int a, z;
    topo_link_ends(t, lk, &a, &z);
    return topo_link_port(t, lk, a == leaf0 ? 0 : 1);
}

/* leaf0 has two equal-cost ports up, to spine0 and spine1.  spine0's holds
 * a standing queue of 20 packets (put straight into it); then h0 sends 10
 * packets to h2 (under leaf1), one packet time apart, each forwarded hop
 * by hop.  Returns how many of the 10 left leaf0 by spine0. */
static int via_congested(const fwd_ops *ops)
{
    bed b;
    bed_init(&b);
    link_cfg l = mk_link();
    err e = {0};
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 2, 2, &l, &l, &e), 0);
    assert_int_equal(topo_set_forwarder(b.t, ops, NULL, NULL, "routing", &e), 0);
    port *up[2] = {uplink(b.t, 0), uplink(b.t, 1)};
    topo_bind_flow(b.t, 0, 0, &b.rx.base, 2, &b.rx.base);
    for (int i = 0; i < 30; i++) {
        pkt *p = bed_hop_pkt(&b, 2, (uint32_t)i * 2654435761u);
        if (i < 20) {
            up[0]->base.recv(&up[0]->base, p);
        } else {
            sink *f = topo_node_forwarder(b.t, topo_host_node(b.t, 0));
            f->recv(f, p);
        }
    }
    assert_true(up[0]->bytes >= 18 * 1500);         /* the standing queue */
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 30);
    int n0 = (int)up[0]->stat_tx_pkts - 20;
    assert_int_equal(n0 + (int)up[1]->stat_tx_pkts, 10);
    bed_fini(&b);
    return n0;
}

static void test_adaptive_avoids_standing_queue(void **state)
{
    (void)state;
    /* Every new packet takes the empty port while the other has a queue. */
    assert_int_equal(via_congested(&fwd_adaptive), 0);
    /* Spraying by entropy ignores queues: some take the congested port. */
    assert_true(via_congested(&fwd_spray_random) >= 2);
}

/* Flowlets: a flow's first packet leaves leaf0 by port P; then P gets a
 * standing queue of 20 packets and the flow sends 10 more at once.  Per
 * packet (gap 0) all 10 avoid P; with a 1 ms flowlet gap they follow the
 * first (they come within the gap), and a packet after the gap chooses
 * again and avoids P.  Returns how many of the 11 after the first took P. */
static int flowlet_on_congested(int64_t gap_ps)
{
    bed b;
    bed_init(&b);
    link_cfg l = mk_link();
    err e = {0};
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 2, 2, &l, &l, &e), 0);
    const int64_t cfg = gap_ps;         /* adaptive's keys: the gap */
    assert_int_equal(topo_set_forwarder(b.t, &fwd_adaptive, &cfg, NULL, "routing", &e), 0);
    topo_bind_flow(b.t, 0, 0, &b.rx.base, 2, &b.rx.base);
    sink *f = topo_node_forwarder(b.t, topo_host_node(b.t, 0));
    f->recv(f, bed_hop_pkt(&b, 2, 1));
    sim_run(b.s, SIM_TIME_MAX);
    port *q = uplink(b.t, 0)->stat_tx_pkts ? uplink(b.t, 0) : uplink(b.t, 1);
    assert_int_equal(q->stat_tx_pkts, 1);
    for (int i = 0; i < 20; i++)
        q->base.recv(&q->base, bed_hop_pkt(&b, 2, 100 + (uint32_t)i));
    for (int i = 0; i < 10; i++)
        f->recv(f, bed_hop_pkt(&b, 2, 2 + (uint32_t)i));
    sim_run(b.s, SIM_TIME_MAX);
    /* Much later: past the gap, with P loaded again. */
    sim_run(b.s, sim_now(b.s) + MS(2));
    for (int i = 0; i < 20; i++)
        q->base.recv(&q->base, bed_hop_pkt(&b, 2, 200 + (uint32_t)i));
    f->recv(f, bed_hop_pkt(&b, 2, 50));
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 1 + 20 + 10 + 20 + 1);
    int took = (int)q->stat_tx_pkts - 1 - 40;
    bed_fini(&b);
    return took;
}

static void test_adaptive_flowlets(void **state)
{
    (void)state;
    assert_int_equal(flowlet_on_congested(0), 0);
    assert_int_equal(flowlet_on_congested(MS(1)), 10);
}

/* 20 packets reach leaf0's forwarder at once for h2, all with one entropy
 * (so one uplink by hash).  With the hooks of `faults` then `hooks` (YAML
 * lists, or NULL) read into one set as the network does; n[0], n[1]:
 * packets that left by spine0 and spine1; st: what each hook did.
 * Returns the set's code. */
static int burst(const char *faults, const char *hooks, int n[2], fault_stats st[2], err *e)
{
    bed b;
    bed_init(&b);
    link_cfg l = mk_link();
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 2, 2, &l, &l, e), 0);
    int leaf0 = topo_find_node(b.t, "leaf0");
    fault_set *fs = fault_create(b.t, b.s, net_registry_builtin()->hooks, 1);
    char yaml[512];
    snprintf(yaml, sizeof yaml, "faults: %s\nhooks: %s\n", faults ? faults : "[]",
             hooks ? hooks : "[]");
    cfg_doc *d;
    assert_int_equal(cfg_load_string("h.yaml", yaml, strlen(yaml), &d, e), 0);
    int r = fault_add(fs, cfg_get(cfg_root(d), "faults"), "net.faults", "faults", e);
    if (!r)
        r = fault_add(fs, cfg_get(cfg_root(d), "hooks"), "net.hooks", "hooks", e);
    cfg_free(d);
    if (r) {
        fault_destroy(fs);
        bed_fini(&b);
        return r;
    }
    fault_start(fs);
    topo_bind_flow(b.t, 0, 0, &b.rx.base, 2, &b.rx.base);
    for (int i = 0; i < 20; i++) {
        pkt *p = bed_hop_pkt(&b, 2, 7);
        sink *f = topo_node_forwarder(b.t, leaf0);
        f->recv(f, p);
    }
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 20);
    for (int s = 0; s < 2; s++)
        n[s] = (int)uplink(b.t, s)->stat_tx_pkts;
    memset(st, 0, 2 * sizeof *st);
    for (size_t i = 0; i < fault_count(fs) && i < 2; i++)
        fault_stats_of(fs, i, &st[i]);
    fault_destroy(fs);
    bed_fini(&b);
    return 0;
}

/* A hook by name that changes routes: without it the burst takes one
 * uplink; with deflect (threshold 0) each packet that finds its port's
 * queue longer than the other's moves there: the 1st and 2nd stay (the
 * 1st is in service, the 2nd finds an empty queue), the 3rd and 4th move,
 * then they alternate: 10 and 10, exactly, 10 of them redirected.  A fault
 * listed before it (net.faults, read first) sees every arrival at leaf0's
 * ports: the 20, and the 10 again where they were redirected to. */
static void test_hook_deflect_by_name(void **state)
{
    (void)state;
    err e = {0};
    int n[2];
    fault_stats st[2];
    assert_int_equal(burst(NULL, NULL, n, st, &e), 0);
    assert_true((n[0] == 20 && n[1] == 0) || (n[0] == 0 && n[1] == 20));
    if (burst("[{kind: loss, node: leaf0, rate: 0}]",
              "[{kind: deflect, node: leaf0, threshold: 0B}]", n, st, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(n[0], 10);
    assert_int_equal(n[1], 10);
    assert_int_equal(st[1].redirect_pkts, 10);
    assert_int_equal(st[0].seen_pkts, 30);
    assert_int_equal(st[0].drop_pkts, 0);
    /* Unknown kinds: a located error listing the registered ones. */
    assert_int_equal(burst(NULL, "[{kind: deflekt, node: leaf0}]", n, st, &e), AISIM_EINVAL);
    assert_string_equal(e.msg, "h.yaml:2:16: net.hooks[0].kind: expected one of: loss, delay, "
                               "blackhole, flap, corrupt, deflect, found \"deflekt\"; did you "
                               "mean \"deflect\"?");
    /* deflect acts at a node. */
    assert_int_equal(burst(NULL, "[{kind: deflect, port: leaf0->spine0, threshold: 1KB}]", n, st,
                           &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "net.hooks[0].port: a deflect hook takes a node (node: "
                                  "name), found a port"));
}

static void test_node_port_iterator(void **state)
{
    (void)state;
    bed b;
    bed_init(&b);
    link_cfg l = mk_link();
    err e = {0};
    assert_int_equal(topo_build_fat_tree(b.t, 4, &l, &e), 0);
    int agg = topo_find_node(b.t, "agg2_1");
    assert_int_equal(topo_node_degree(b.t, agg), 4);   /* 2 edges, 2 cores */
    const char *want[] = {"agg2_1->edge2_0", "agg2_1->edge2_1", "agg2_1->core2",
                          "agg2_1->core3"};
    for (size_t i = 0; i < 4; i++) {
        int lk;
        int far = topo_node_adj(b.t, agg, i, &lk);
        assert_string_equal(topo_node_port(b.t, agg, i)->base.name, want[i]);
        int a, z;
        topo_link_ends(b.t, lk, &a, &z);
        assert_int_equal(far, a == agg ? z : a);
    }
    bed_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dmodk_fat_tree_k4),
        cmocka_unit_test(test_dmodk_fat_tree_k8),
        cmocka_unit_test(test_dmodk_rejects_non_tree),
        cmocka_unit_test(test_adaptive_avoids_standing_queue),
        cmocka_unit_test(test_adaptive_flowlets),
        cmocka_unit_test(test_hook_deflect_by_name),
        cmocka_unit_test(test_node_port_iterator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
