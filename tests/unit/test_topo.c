/*
 * test_topo.c - topologies and routing: builder counts and names, route
 * lengths, end-to-end delivery with exact latency, flow binding, ECMP
 * spreading and polarisation, equal-cost path lists, link failure with
 * convergence delay, and the scenario `topology:` map with its errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/rng.h"
#include "aisim/topo.h"
#include "aisim/units.h"

typedef struct catcher {
    sink base;
    pkt_pool *pool;
    sim *s;
    int n;
    int64_t at[64];
    uint8_t kind[64];
} catcher;

static void catch_recv(sink *self, pkt *p)
{
    catcher *c = (catcher *)self;
    if (c->n < 64) {
        c->at[c->n] = sim_now(c->s);
        c->kind[c->n] = p->kind;
    }
    c->n++;
    pkt_free(c->pool, p);
}

typedef struct bed {
    sim *s;
    pkt_pool *pool;
    topo *t;
    catcher tx, rx;
} bed;

static void bed_init(bed *b, uint64_t seed)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    b->t = topo_create(b->s, b->pool, seed);
    catcher *cs[] = {&b->tx, &b->rx};
    for (int i = 0; i < 2; i++) {
        cs[i]->base.recv = catch_recv;
        cs[i]->base.name = i ? "rx" : "tx";
        cs[i]->pool = b->pool;
        cs[i]->s = b->s;
    }
}

static void bed_fini(bed *b)
{
    assert_int_equal(pkt_pool_live(b->pool), 0);    /* no packet leaked */
    topo_destroy(b->t);
    pkt_pool_destroy(b->pool);
    sim_destroy(b->s);
}

static link_cfg mk_link(int64_t rate_bps, int64_t delay_ps)
{
    link_cfg c = {.rate_bps = rate_bps, .delay_ps = delay_ps};
    c.port.buffer_bytes = 1 << 20;
    c.port.nprio = 1;
    return c;
}

static void send_pkt(bed *b, const route *rt, uint32_t flow, uint8_t kind, uint32_t size)
{
    pkt *p = pkt_alloc(b->pool);
    p->flow_id = flow;
    p->kind = kind;
    p->size_bytes = size;
    p->sent_ps = sim_now(b->s);
    pkt_send(p, rt);
}

/* Links a route crosses: (len - 1) / 2. */
static int route_links(const route *r) { return (r->len - 1) / 2; }

static int node(const topo *t, const char *name)
{
    int id = topo_find_node(t, name);
    if (id < 0)
        fail_msg("no node %s", name);
    return id;
}

/* ---- builders ----------------------------------------------------------- */

static void test_topo_builders_counts_and_names(void **state)
{
    (void)state;
    link_cfg l = mk_link(GBPS(10), US(1)), f = mk_link(GBPS(40), US(1));
    err e = {0};
    bed b;

    bed_init(&b, 1);
    assert_int_equal(topo_build_fat_tree(b.t, 4, &l, &e), 0);
    assert_int_equal(topo_hosts(b.t), 16);
    assert_int_equal(topo_nodes(b.t), 36);          /* 16 hosts + 20 switches */
    assert_int_equal(topo_links(b.t), 48);
    assert_string_equal(topo_node_name(b.t, 0), "h0");
    assert_string_equal(topo_node_name(b.t, 15), "h15");
    assert_string_equal(topo_node_name(b.t, 16), "edge0_0");
    assert_string_equal(topo_node_name(b.t, 23), "edge3_1");
    assert_string_equal(topo_node_name(b.t, 24), "agg0_0");
    assert_string_equal(topo_node_name(b.t, 32), "core0");
    assert_string_equal(topo_node_name(b.t, 35), "core3");
    assert_int_equal(topo_node_kind(b.t, 15), NODE_HOST);
    assert_int_equal(topo_node_kind(b.t, 16), NODE_SWITCH);
    assert_int_equal(topo_host_node(b.t, 5), 5);
    assert_int_equal(topo_node_host(b.t, 5), 5);
    assert_int_equal(topo_node_host(b.t, 20), -1);
    /* h5 is in pod 1 (hosts 4..7), under edge1_0 (h4, h5). */
    int a, z;
    topo_link_ends(b.t, 5, &a, &z);
    assert_int_equal(a, 5);
    assert_string_equal(topo_node_name(b.t, z), "edge1_0");
    assert_int_equal(topo_find_link(b.t, node(b.t, "agg2_1"), node(b.t, "core3")), 16 + 16 + 11);
    assert_int_equal(topo_find_link(b.t, node(b.t, "agg2_1"), node(b.t, "core0")), -1);
    assert_string_equal(topo_link_port(b.t, 5, 0)->base.name, "h5->edge1_0");
    assert_string_equal(topo_link_port(b.t, 5, 1)->base.name, "edge1_0->h5");
    assert_string_equal(topo_link_wire(b.t, 5, 1)->base.name, "edge1_0->h5/wire");
    assert_int_equal(topo_link_port(b.t, 5, 0)->cfg.rate_bps, GBPS(10));
    /* Ports and wires start on cache lines, so that what each packet
     * touches fills the fewest lines (port.h); so do packets (pkt.h). */
    for (int k = 0; k < (int)topo_links(b.t); k++)
        for (int d = 0; d < 2; d++) {
            assert_int_equal((uintptr_t)topo_link_port(b.t, k, d) % 64, 0);
            assert_int_equal((uintptr_t)topo_link_wire(b.t, k, d) % 64, 0);
        }
    pkt *pk = pkt_alloc(b.pool);
    assert_int_equal((uintptr_t)pk % 32, 0);
    pkt_free(b.pool, pk);
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(topo_build_fat_tree(b.t, 8, &l, &e), 0);
    assert_int_equal(topo_hosts(b.t), 128);
    assert_int_equal(topo_nodes(b.t), 128 + 80);
    assert_int_equal(topo_links(b.t), 3 * 128);
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(topo_build_leaf_spine(b.t, 4, 2, 8, &l, &f, &e), 0);
    assert_int_equal(topo_hosts(b.t), 32);
    assert_int_equal(topo_nodes(b.t), 38);
    assert_int_equal(topo_links(b.t), 32 + 8);
    assert_string_equal(topo_node_name(b.t, 32), "leaf0");
    assert_string_equal(topo_node_name(b.t, 37), "spine1");
    topo_link_ends(b.t, 12, &a, &z);
    assert_string_equal(topo_node_name(b.t, z), "leaf1");
    assert_string_equal(topo_link_port(b.t, 32 + 2 * 3 + 1, 0)->base.name, "leaf3->spine1");
    assert_int_equal(topo_link_port(b.t, 32 + 7, 1)->cfg.rate_bps, GBPS(40));
    assert_int_equal(topo_link_port(b.t, 31, 1)->cfg.rate_bps, GBPS(10));
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(topo_build_dumbbell(b.t, 3, 2, &l, &f, &e), 0);
    assert_int_equal(topo_hosts(b.t), 5);
    assert_int_equal(topo_nodes(b.t), 7);
    assert_int_equal(topo_links(b.t), 6);
    assert_string_equal(topo_link_port(b.t, 5, 0)->base.name, "left->right");
    assert_string_equal(topo_link_port(b.t, 3, 0)->base.name, "h3->right");
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(topo_build_star(b.t, 33, &l, &e), 0);
    assert_int_equal(topo_hosts(b.t), 33);
    assert_int_equal(topo_nodes(b.t), 34);
    assert_int_equal(topo_links(b.t), 33);
    assert_string_equal(topo_node_name(b.t, 33), "sw0");
    bed_fini(&b);
}

static void test_topo_route_lengths_and_reverse(void **state)
{
    (void)state;
    link_cfg l = mk_link(GBPS(10), US(1));
    err e = {0};
    bed b;
    bed_init(&b, 1);
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 4, 4, &l, &l, &e), 0);
    const route *same = topo_route_ecmp(b.t, 0, 3, 42);
    assert_int_equal(route_links(same), 2);              /* h0 -> leaf0 -> h3 */
    assert_int_equal(same->len, 5);
    assert_string_equal(same->hop[0]->name, "h0->leaf0");
    assert_string_equal(same->hop[1]->name, "h0->leaf0/wire");
    assert_string_equal(same->hop[2]->name, "leaf0->h3");
    assert_ptr_equal(same->hop[4], topo_host_sink(b.t, 3));
    assert_string_equal(same->hop[4]->name, "h3");
    const route *across = topo_route_ecmp(b.t, 0, 5, 42);
    assert_int_equal(route_links(across), 4);            /* h0 leaf0 spine leaf1 h5 */
    const route *rev = across->reverse;
    assert_non_null(rev);
    assert_ptr_equal(rev->reverse, across);
    assert_int_equal(rev->len, 9);
    assert_string_equal(rev->hop[0]->name, "h5->leaf1");
    assert_ptr_equal(rev->hop[8], topo_host_sink(b.t, 0));
    /* The same links backwards: the spine the forward route took. */
    char want[32];
    snprintf(want, sizeof want, "%s->leaf0", strstr(across->hop[2]->name, "->") + 2);
    assert_string_equal(rev->hop[4]->name, want);
    /* Interned: the same key gives the same object; route ids are dense. */
    assert_ptr_equal(topo_route_ecmp(b.t, 0, 5, 42), across);
    assert_true(across->id < 4 && rev->id < 4);

    bed_fini(&b);
    bed_init(&b, 1);
    assert_int_equal(topo_build_fat_tree(b.t, 4, &l, &e), 0);
    assert_int_equal(route_links(topo_route_ecmp(b.t, 0, 1, 7)), 2);    /* same edge */
    assert_int_equal(route_links(topo_route_ecmp(b.t, 0, 2, 7)), 4);    /* same pod */
    assert_int_equal(route_links(topo_route_ecmp(b.t, 0, 15, 7)), 6);   /* across pods */
    bed_fini(&b);
}

/* A packet follows its route through ports and wires to the bound
 * endpoint; latency = sum over links of serialisation + propagation. */
static void test_topo_delivers_end_to_end_with_exact_latency(void **state)
{
    (void)state;
    link_cfg hl = mk_link(GBPS(10), NS(500)), fl = mk_link(GBPS(40), US(2));
    err e = {0};
    bed b;
    bed_init(&b, 1);
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 2, 2, &hl, &fl, &e), 0);
    topo_bind_flow(b.t, 7, 0, &b.tx.base, 3, &b.rx.base);
    const route *rt = topo_route_ecmp(b.t, 0, 3, 1234);
    assert_int_equal(route_links(rt), 4);
    send_pkt(&b, rt, 7, PKT_DATA, 1500);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 1);
    assert_int_equal(b.tx.n, 0);
    /* 1500 B: 1.2 us at 10 Gbps (host links), 0.3 us at 40 Gbps (fabric);
     * 2 x (1.2 + 0.5) + 2 x (0.3 + 2) = 8 us. */
    assert_int_equal(b.rx.at[0], US(8));
    assert_int_equal(b.rx.kind[0], PKT_DATA);

    /* The ACK goes back on the reverse route to the sender's endpoint. */
    int64_t t0 = sim_now(b.s);
    send_pkt(&b, rt->reverse, 7, PKT_ACK, 64);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.tx.n, 1);
    assert_int_equal(b.tx.kind[0], PKT_ACK);
    /* 64 B: 51.2 ns at 10 Gbps, 12.8 ns at 40 Gbps. */
    assert_int_equal(b.tx.at[0] - t0, 2 * (NS(51.2) + NS(500)) + 2 * (NS(12.8) + US(2)));

    /* A flow nobody bound is dropped at the host and counted. */
    send_pkt(&b, rt, 8, PKT_DATA, 1500);
    send_pkt(&b, rt, 100000, PKT_DATA, 1500);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 1);
    assert_int_equal(topo_unbound_drops(b.t), 2);
    bed_fini(&b);
}


/* ---- ECMP --------------------------------------------------------------- */

/* Keys of N flows: random 64-bit 5-tuple hashes from a seeded stream. */
static uint64_t flow_key(int i)
{
    rng r;
    rng_init(&r, 99, "topo.test.keys", (uint64_t)i);
    return rng_next(&r);
}

/* Index of the port among ports[0..n) that route r passes, or -1. */
static int port_on_route(const route *r, port *const *ports, int n)
{
    for (int h = 0; h < r->len; h++)
        for (int i = 0; i < n; i++)
            if (r->hop[h] == &ports[i]->base)
                return i;
    return -1;
}

static void test_topo_ecmp_spreads_flows_across_spines(void **state)
{
    (void)state;
    link_cfg l = mk_link(GBPS(10), US(1));
    err e = {0};
    bed b;
    bed_init(&b, 1);
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 4, 2, &l, &l, &e), 0);
    port *up[4];
    int leaf0 = node(b.t, "leaf0");
    for (int s = 0; s < 4; s++) {
        char name[32];
        snprintf(name, sizeof name, "spine%d", s);
        up[s] = topo_link_port(b.t, topo_find_link(b.t, leaf0, node(b.t, name)), 0);
    }
    enum { N = 20000 };     /* binomial sd of a count: 61 = 1.2 % of N/4 */
    int cnt[4] = {0};
    for (int i = 0; i < N; i++) {
        int s = port_on_route(topo_route_ecmp(b.t, i % 2, 2 + i % 2, flow_key(i)), up, 4);
        assert_true(s >= 0);
        cnt[s]++;
    }
    double chi2 = 0;
    for (int s = 0; s < 4; s++) {
        chi2 += (cnt[s] - N / 4.0) * (cnt[s] - N / 4.0) / (N / 4.0);
        assert_in_range(cnt[s], 4750, 5250);        /* within 5 % of N/4 */
    }
    /* 3 degrees of freedom: 11.34 is the 1 % critical value. */
    print_message("ECMP over 4 spines: %d %d %d %d, chi2 %.2f\n", cnt[0], cnt[1], cnt[2], cnt[3],
                  chi2);
    assert_true(chi2 < 11.34);
    /* Four paths between the pair; every ECMP route is one of them. */
    size_t n;
    const route *const *ps = topo_paths(b.t, 0, 2, &n);
    assert_int_equal(n, 4);
    for (int s = 0; s < 4; s++)
        assert_int_equal(port_on_route(ps[s], up, 4), s);   /* fixed order: by spine */
    const route *r = topo_route_ecmp(b.t, 0, 2, flow_key(0));
    assert_ptr_equal(r, ps[port_on_route(r, up, 4)]);
    assert_ptr_equal(topo_paths(b.t, 0, 2, &n), ps);         /* cached */
    bed_fini(&b);
}

/* Fat tree k=4, pod 0 to pod 1: the edge switch picks one of 2 aggs, the
 * agg one of 2 cores.  With independent seeds the four cores share the
 * flows; with equal seeds both choices are the same function of the key
 * (hash mod 2), so agg j always picks its core j: only core0 (agg0, core 0)
 * and core3 (agg1, core 1) carry traffic - hash polarisation. */
static void count_cores(bed *b, int cnt[4], int nflows)
{
    port *down[4];
    for (int c = 0; c < 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "core%d", c);
        int core = node(b->t, name);
        /* core c's link down into pod 1: to agg1_{c / 2}. */
        int agg = node(b->t, c < 2 ? "agg1_0" : "agg1_1");
        down[c] = topo_link_port(b->t, topo_find_link(b->t, agg, core), 1);
    }
    memset(cnt, 0, 4 * sizeof *cnt);
    for (int i = 0; i < nflows; i++) {
        int c = port_on_route(topo_route_ecmp(b->t, i % 4, 4 + i % 4, flow_key(i)), down, 4);
        assert_true(c >= 0);
        cnt[c]++;
    }
}

static void test_topo_ecmp_polarises_with_equal_seeds(void **state)
{
    (void)state;
    link_cfg l = mk_link(GBPS(10), US(1));
    err e = {0};
    bed b;
    bed_init(&b, 1);
    assert_int_equal(topo_build_fat_tree(b.t, 4, &l, &e), 0);
    int cnt[4];
    count_cores(&b, cnt, 4000);
    print_message("cores, own seeds: %d %d %d %d\n", cnt[0], cnt[1], cnt[2], cnt[3]);
    for (int c = 0; c < 4; c++)
        assert_in_range(cnt[c], 900, 1100);         /* within 10 % of N/4 */
    topo_set_hash_seeds(b.t, true, 12345);
    count_cores(&b, cnt, 4000);
    print_message("cores, equal seeds: %d %d %d %d\n", cnt[0], cnt[1], cnt[2], cnt[3]);
    assert_int_equal(cnt[1], 0);
    assert_int_equal(cnt[2], 0);
    assert_int_equal(cnt[0] + cnt[3], 4000);
    assert_in_range(cnt[0], 1900, 2100);
    /* Back to per-switch seeds: the first spread again, exactly. */
    int again[4];
    topo_set_hash_seeds(b.t, false, 0);
    count_cores(&b, again, 4000);
    topo_set_hash_seeds(b.t, false, 0);
    count_cores(&b, cnt, 4000);
    assert_memory_equal(cnt, again, sizeof cnt);
    assert_int_equal(cnt[1] > 0 && cnt[2] > 0, 1);
    bed_fini(&b);
}

static void test_topo_paths_counts(void **state)
{
    (void)state;
    link_cfg l = mk_link(GBPS(10), US(1));
    err e = {0};
    bed b;
    size_t n;
    bed_init(&b, 1);
    assert_int_equal(topo_build_fat_tree(b.t, 4, &l, &e), 0);
    const route *const *ps = topo_paths(b.t, 0, 15, &n);
    assert_int_equal(n, 4);                         /* across pods: (k/2)^2 */
    for (size_t i = 0; i < n; i++) {
        char want[64];
        assert_int_equal(route_links(ps[i]), 6);
        snprintf(want, sizeof want, "core%d->agg3_%d", (int)i, (int)i / 2);
        assert_string_equal(ps[i]->hop[6]->name, want);     /* path i via core i */
        assert_ptr_equal(ps[i]->reverse->reverse, ps[i]);
    }
    assert_int_equal((topo_paths(b.t, 0, 2, &n), n), 2);    /* same pod: k/2 aggs */
    assert_int_equal((topo_paths(b.t, 0, 1, &n), n), 1);    /* same edge */
    /* Reverse direction: the reverses of the forward paths, same order. */
    const route *const *back = topo_paths(b.t, 15, 0, &n);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(back[i], ps[i]->reverse);
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(topo_build_fat_tree(b.t, 8, &l, &e), 0);
    assert_int_equal((topo_paths(b.t, 0, 127, &n), n), 16);
    assert_int_equal((topo_paths(b.t, 0, 4, &n), n), 4);
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(topo_build_dumbbell(b.t, 2, 2, &l, &l, &e), 0);
    ps = topo_paths(b.t, 0, 3, &n);
    assert_int_equal(n, 1);
    assert_int_equal(route_links(ps[0]), 3);
    assert_string_equal(ps[0]->hop[2]->name, "left->right");
    bed_fini(&b);
}


/* Per-packet spraying over topo_paths: every path delivers; round robin
 * puts exactly N/4 packets on each spine, random choice within 5 %. */
static void test_topo_paths_deliver_and_spray_evenly(void **state)
{
    (void)state;
    link_cfg l = mk_link(GBPS(100), US(1));
    err e = {0};
    bed b;
    bed_init(&b, 1);
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 4, 1, &l, &l, &e), 0);
    topo_bind_flow(b.t, 0, 0, &b.tx.base, 1, &b.rx.base);
    size_t n;
    const route *const *ps = topo_paths(b.t, 0, 1, &n);
    assert_int_equal(n, 4);
    enum { N = 8000 };
    for (int i = 0; i < N; i++) {
        send_pkt(&b, ps[i % 4], 0, PKT_DATA, 1500);
        if (i % 64 == 63)
            sim_run(b.s, sim_now(b.s) + US(10));    /* keep the NIC queue short */
    }
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, N);
    int leaf0 = node(b.t, "leaf0");
    for (int s = 0; s < 4; s++) {
        char name[32];
        snprintf(name, sizeof name, "spine%d", s);
        port *q = topo_link_port(b.t, topo_find_link(b.t, leaf0, node(b.t, name)), 0);
        assert_int_equal(q->stat_tx_pkts, N / 4);
    }
    rng r;
    rng_init(&r, 5, "topo.test.spray", 0);
    int cnt[4] = {0};
    for (int i = 0; i < N; i++) {
        int k = (int)rng_below(&r, n);
        cnt[k]++;
        send_pkt(&b, ps[k], 0, PKT_DATA, 1500);
        if (i % 64 == 63)
            sim_run(b.s, sim_now(b.s) + US(10));
    }
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 2 * N);
    for (int s = 0; s < 4; s++)
        assert_in_range(cnt[s], N / 4 * 95 / 100, N / 4 * 105 / 100);
    bed_fini(&b);
}

/* ---- failures ----------------------------------------------------------- */

/* Records when routing told its owner of a change. */
static int64_t changed_at[8];
static int nchanged;
static sim *change_sim;
static void on_change(void *ctx)
{
    assert_ptr_equal(ctx, &nchanged);
    if (nchanged < 8)
        changed_at[nchanged] = sim_now(change_sim);
    nchanged++;
}

static void test_topo_failed_link_avoided_after_convergence(void **state)
{
    (void)state;
    link_cfg hl = mk_link(GBPS(10), US(1)), fl = mk_link(GBPS(40), US(1));
    err e = {0};
    bed b;
    bed_init(&b, 1);
    assert_int_equal(topo_build_leaf_spine(b.t, 2, 2, 1, &hl, &fl, &e), 0);
    topo_bind_flow(b.t, 0, 0, &b.tx.base, 1, &b.rx.base);
    int dead = topo_find_link(b.t, node(b.t, "leaf0"), node(b.t, "spine0"));
    assert_int_equal(dead, 2);
    port *via0 = topo_link_port(b.t, dead, 0);
    port *via[2] = {via0, topo_link_port(b.t, 3, 0)};
    /* A flow key whose ECMP route uses spine0. */
    uint64_t k0 = 0;
    int i = 0;
    while (port_on_route(topo_route_ecmp(b.t, 0, 1, flow_key(i)), via, 2) != 0)
        i++;
    k0 = flow_key(i);
    const route *r0 = topo_route_ecmp(b.t, 0, 1, k0);
    nchanged = 0;
    change_sim = b.s;
    topo_on_routing_change(b.t, on_change, &nchanged);

    /* The packet leaves leaf0 at 1.2 + 1 + 0.3 = 2.5 us and is on the wire
     * leaf0->spine0 until 3.5 us: fail the link at 3 us. */
    send_pkt(&b, r0, 0, PKT_DATA, 1500);
    sim_run(b.s, US(3));
    topo_link_set_up(b.t, dead, false, US(100));
    assert_false(topo_link_is_up(b.t, dead));
    assert_int_equal(topo_link_wire_losses(b.t, dead), 1);
    assert_int_equal(pkt_pool_live(b.pool), 0);

    /* Before convergence routing still offers the dead link ... */
    size_t n;
    topo_paths(b.t, 0, 1, &n);
    assert_int_equal(n, 2);
    assert_ptr_equal(topo_route_ecmp(b.t, 0, 1, k0), r0);
    send_pkt(&b, r0, 0, PKT_DATA, 1500);            /* lost at leaf0->spine0 */
    sim_run(b.s, US(50));
    assert_int_equal(via0->stat_fail_drops, 1);
    assert_int_equal(b.rx.n, 0);

    /* ... and after it, every route avoids it, in both directions; the
     * owner of routes was told at the moment routing learnt of it. */
    sim_run(b.s, US(103));
    assert_int_equal(nchanged, 1);
    assert_int_equal(changed_at[0], US(103));
    const route *const *ps = topo_paths(b.t, 0, 1, &n);
    assert_int_equal(n, 1);
    assert_int_equal(port_on_route(ps[0], via, 2), 1);
    for (int j = 0; j < 200; j++) {
        const route *r = topo_route_ecmp(b.t, 0, 1, flow_key(j));
        assert_ptr_equal(r, ps[0]);
        assert_ptr_equal(topo_route_ecmp(b.t, 1, 0, flow_key(j)), r->reverse);
    }
    send_pkt(&b, topo_route_ecmp(b.t, 0, 1, k0), 0, PKT_DATA, 1500);
    int64_t t0 = sim_now(b.s);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 1);
    assert_int_equal(b.rx.at[0] - t0, US(1.2 + 1 + 0.3 + 1 + 0.3 + 1 + 1.2 + 1));

    /* Repaired with no convergence delay: the old path is back at once. */
    topo_link_set_up(b.t, dead, true, 0);
    assert_true(topo_link_is_up(b.t, dead));
    assert_int_equal((topo_paths(b.t, 0, 1, &n), n), 2);
    assert_ptr_equal(topo_route_ecmp(b.t, 0, 1, k0), r0);
    assert_int_equal(nchanged, 2);
    send_pkt(&b, r0, 0, PKT_DATA, 1500);
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(b.rx.n, 2);
    topo_link_set_up(b.t, dead, true, 0);           /* no change: not told */
    assert_int_equal(nchanged, 2);

    /* The destination's own link down: cut off. */
    topo_link_set_up(b.t, 1, false, 0);
    assert_null(topo_route_ecmp(b.t, 0, 1, k0));
    assert_null(topo_route_ecmp(b.t, 1, 0, k0));            /* both directions */
    topo_link_set_up(b.t, 1, true, 0);

    /* Both spine links of leaf0 down: unreachable. */
    topo_link_set_up(b.t, 2, false, 0);
    topo_link_set_up(b.t, 3, false, 0);
    assert_null(topo_route_ecmp(b.t, 0, 1, k0));
    assert_null(topo_paths(b.t, 0, 1, &n));
    assert_int_equal(n, 0);
    bed_fini(&b);
}


/* ---- scenario ----------------------------------------------------------- */

static int load_topo(bed *b, const char *yaml, err *e, cfg_doc **dout)
{
    cfg_doc *d;
    int rc = cfg_load_string("t.yaml", yaml, strlen(yaml), &d, e);
    if (rc)
        return rc;
    rc = topo_from_cfg(b->t, cfg_get(cfg_root(d), "topology"), "topology", e);
    if (dout)
        *dout = d;
    else
        cfg_free(d);
    return rc;
}

/* topology.shared_buffer gives each switch one pool, used by all of its
 * egress ports and by no host NIC. */
static void test_topo_shared_buffer_per_switch(void **state)
{
    (void)state;
    err e = {0};
    bed b;
    bed_init(&b, 1);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: leaf_spine\n"
                                   "  leaves: 2\n"
                                   "  spines: 2\n"
                                   "  hosts_per_leaf: 2\n"
                                   "  host_link: {rate: 10Gbps}\n"
                                   "  shared_buffer: {size: 3MiB, alpha: 0.5}\n", &e, NULL), 0);
    for (size_t l = 0; l < topo_links(b.t); l++)
        for (int d = 0; d < 2; d++) {
            int a, z;
            topo_link_ends(b.t, (int)l, &a, &z);
            int from = d ? z : a;
            const port *q = topo_link_port(b.t, (int)l, d);
            assert_ptr_equal(q->sb, topo_node_shbuf(b.t, from));
            assert_int_equal(q->sb == NULL, topo_node_kind(b.t, from) == NODE_HOST);
        }
    const shbuf *l0 = topo_node_shbuf(b.t, node(b.t, "leaf0"));
    assert_non_null(l0);
    assert_ptr_not_equal(l0, topo_node_shbuf(b.t, node(b.t, "leaf1")));
    assert_int_equal(l0->size_bytes, 3 << 20);
    assert_true(l0->alpha == 0.5);
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: star\n"
                                   "  hosts: 3\n"
                                   "  link: {rate: 10Gbps}\n"
                                   "  shared_buffer: {size: 1MiB, alfa: 2}\n", &e, NULL),
                     AISIM_EINVAL);
    assert_string_equal(e.msg, "t.yaml:5:31: topology.shared_buffer.alfa: unknown key; "
                               "expected one of: size, alpha, pfc_alpha");
    bed_fini(&b);
}

static void test_topo_from_cfg_builds_each_kind(void **state)
{
    (void)state;
    err e = {0};
    bed b;

    bed_init(&b, 1);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: leaf_spine\n"
                                   "  leaves: 4\n"
                                   "  spines: 2\n"
                                   "  hosts_per_leaf: 8\n"
                                   "  host_link: {rate: 10Gbps, delay: 500ns, buffer: 256KiB,"
                                   " ecn_k: 30KB}\n"
                                   "  oversubscription: 2\n", &e, NULL), 0);
    assert_int_equal(topo_hosts(b.t), 32);
    assert_int_equal(topo_links(b.t), 40);
    port *hp = topo_link_port(b.t, 0, 0), *fp = topo_link_port(b.t, 32, 0);
    assert_int_equal(hp->cfg.rate_bps, GBPS(10));
    assert_int_equal(hp->cfg.buffer_bytes, 256 * 1024);
    assert_int_equal(hp->cfg.ecn_k_bytes, 30000);
    assert_int_equal(topo_link_wire(b.t, 0, 0)->delay_ps, NS(500));
    /* 8 x 10 Gbps / (2 spines x 2) = 20 Gbps, other settings as host_link. */
    assert_int_equal(fp->cfg.rate_bps, GBPS(20));
    assert_int_equal(fp->cfg.ecn_k_bytes, 30000);
    assert_string_equal(fp->base.name, "leaf0->spine0");
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(load_topo(&b, "topology: {kind: fat_tree, k: 4, link: {rate: 100Gbps}}\n",
                               &e, NULL), 0);
    assert_int_equal(topo_links(b.t), 48);
    assert_int_equal(topo_link_wire(b.t, 47, 1)->delay_ps, US(1));          /* default */
    assert_int_equal(topo_link_port(b.t, 47, 1)->cfg.buffer_bytes, 1 << 20);  /* default */
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: dumbbell\n"
                                   "  left: 2\n"
                                   "  right: 3\n"
                                   "  link: {rate: 10Gbps}\n"
                                   "  bottleneck: {rate: 1Gbps, delay: 10us}\n", &e, NULL), 0);
    assert_int_equal(topo_hosts(b.t), 5);
    assert_int_equal(topo_link_port(b.t, 5, 0)->cfg.rate_bps, GBPS(1));
    assert_int_equal(topo_link_wire(b.t, 5, 1)->delay_ps, US(10));
    assert_int_equal(topo_link_port(b.t, 4, 1)->cfg.rate_bps, GBPS(10));
    bed_fini(&b);

    bed_init(&b, 1);
    assert_int_equal(load_topo(&b, "topology: {kind: star, hosts: 17, link: {rate: 1Gbps}}\n",
                               &e, NULL), 0);
    assert_int_equal(topo_hosts(b.t), 17);
    assert_int_equal(topo_nodes(b.t), 18);
    bed_fini(&b);

    bed_init(&b, 1);
    cfg_doc *d;
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: custom\n"
                                   "  hosts: [a, b, c]\n"
                                   "  switches: [s1, s2]\n"
                                   "  link: {rate: 10Gbps}\n"
                                   "  links:\n"
                                   "    - {a: a, b: s1}\n"
                                   "    - {a: b, b: s1}\n"
                                   "    - {a: c, b: s2, delay: 5us}\n"
                                   "    - {a: s1, b: s2, rate: 40Gbps}\n", &e, &d), 0);
    assert_int_equal(topo_hosts(b.t), 3);
    assert_int_equal(topo_nodes(b.t), 5);
    assert_int_equal(topo_links(b.t), 4);
    assert_int_equal(topo_find_node(b.t, "s2"), 4);
    assert_int_equal(topo_link_port(b.t, 3, 0)->cfg.rate_bps, GBPS(40));
    assert_int_equal(topo_link_wire(b.t, 3, 0)->delay_ps, US(1));
    assert_int_equal(topo_link_wire(b.t, 2, 0)->delay_ps, US(5));
    assert_int_equal(topo_link_port(b.t, 2, 0)->cfg.rate_bps, GBPS(10));
    const route *r = topo_route_ecmp(b.t, 0, 2, 1);
    assert_int_equal(route_links(r), 3);
    assert_string_equal(r->hop[2]->name, "s1->s2");
    /* Defaults are written into the tree (the resolved scenario). */
    cfg_node *ln = cfg_get(cfg_get(cfg_root(d), "topology"), "link");
    assert_string_equal(cfg_scalar(cfg_get(ln, "buffer")), "1MiB");
    cfg_free(d);
    bed_fini(&b);

    /* Dual-homed hosts: two paths, one per switch, both ways. */
    bed_init(&b, 1);
    assert_int_equal(load_topo(&b, "topology:\n"
                                   "  kind: custom\n"
                                   "  hosts: [a, b]\n"
                                   "  switches: [s1, s2]\n"
                                   "  links:\n"
                                   "    - {a: a, b: s1, rate: 10Gbps}\n"
                                   "    - {a: a, b: s2, rate: 10Gbps}\n"
                                   "    - {a: b, b: s1, rate: 10Gbps}\n"
                                   "    - {a: b, b: s2, rate: 10Gbps}\n", &e, NULL), 0);
    size_t n;
    const route *const *ps = topo_paths(b.t, 0, 1, &n);
    assert_int_equal(n, 2);
    assert_string_equal(ps[0]->hop[2]->name, "s1->b");
    assert_string_equal(ps[1]->hop[2]->name, "s2->b");
    assert_int_equal((topo_paths(b.t, 1, 0, &n), n), 2);
    topo_link_set_up(b.t, 2, false, 0);                     /* b - s1 */
    ps = topo_paths(b.t, 1, 0, &n);
    assert_int_equal(n, 1);
    assert_string_equal(ps[0]->hop[0]->name, "b->s2");
    bed_fini(&b);
}

typedef struct bad_case {
    const char *yaml, *msg;
} bad_case;

/* The bad inputs first: zero hosts (star, custom), a rate of 0, a
 * link to an unknown node, a disconnected custom graph, a duplicate node
 * name; then the other checks. */
static void test_topo_from_cfg_errors_name_the_location(void **state)
{
    (void)state;
    static const bad_case cs[] = {
        {"topology: {kind: star, hosts: 0, link: {rate: 1Gbps}}\n",
         "t.yaml:1:31: topology.hosts: expected an integer in [2, 100000], "
         "found \"0\""},
        {"topology:\n  kind: custom\n  hosts: []\n  links: []\n",
         "t.yaml:3:10: topology.hosts: expected at least one host, found none"},
        {"topology: {kind: fat_tree, k: 4, link: {rate: 0Gbps}}\n",
         "t.yaml:1:47: topology.link.rate: expected a rate > 0bps, found \"0Gbps\""},
        {"topology:\n  kind: custom\n  hosts: [a, b]\n  switches: [s1]\n"
         "  link: {rate: 10Gbps}\n  links:\n    - {a: a, b: s1}\n    - {a: b, b: s9}\n",
         "t.yaml:8:17: topology.links[1].b: unknown node \"s9\" (not in hosts or "
         "switches)"},
        {"topology:\n  kind: custom\n  hosts: [a, b, c]\n  switches: [s1, s2]\n"
         "  link: {rate: 10Gbps}\n  links:\n    - {a: a, b: s1}\n    - {a: b, b: s1}\n"
         "    - {a: c, b: s2}\n",
         "t.yaml:2:3: topology: hosts a and c are not connected (hosts do not "
         "forward, so a path must run through switches)"},
        {"topology:\n  kind: custom\n  hosts: [a, b]\n  switches: [s1, a]\n"
         "  links: []\n",
         "t.yaml:4:18: topology.switches[1]: duplicate node name \"a\" (first "
         "given at line 3, column 11)"},
        {"topology: {kind: fat_tree, k: 3, link: {rate: 10Gbps}}\n",
         "t.yaml:1:31: topology.k: expected an even integer, found \"3\""},
        {"topology: {kind: fat-tree, k: 4}\n",
         "t.yaml:1:18: topology.kind: expected one of: dumbbell, star, "
         "leaf_spine, fat_tree, rail_optimised, dual_plane, custom, found "
         "\"fat-tree\"; did you mean \"fat_tree\"?"},
        {"topology: {k: 4}\n",
         "t.yaml:1:11: topology.kind: missing required key (expected one of: "
         "dumbbell, star, leaf_spine, fat_tree, rail_optimised, dual_plane, "
         "custom)"},
        {"topology:\n  kind: custom\n  hosts: [a, b]\n  switches: [s1]\n"
         "  links:\n    - {a: a, b: s1, rate: 1Gbps}\n    - {a: b, b: b, rate: 1Gbps}\n",
         "t.yaml:7:7: topology.links[1]: a link from b to itself"},
        {"topology:\n  kind: custom\n  hosts: [a, b]\n  switches: [s1]\n"
         "  links:\n    - {a: a, b: s1, rate: 1Gbps}\n    - {a: b, b: s1}\n",
         "t.yaml:7:7: topology.links[1].rate: missing required key (expected a "
         "rate such as 100Gbps)"},
        {"topology:\n  kind: leaf_spine\n  leaves: 2\n  spines: 2\n  hosts_per_leaf: 2\n"
         "  host_link: {rate: 10Gbps}\n  fabric_link: {rate: 40Gbps}\n"
         "  oversubscription: 2\n",
         "t.yaml:8:21: topology.oversubscription: give either fabric_link or "
         "oversubscription, not both"},
        {"topology:\n  kind: dumbbell\n  left: 1\n  right: 1\n"
         "  link: {rate: 10Gbps, red_min: 20KB, red_max: 10KB}\n",
         "t.yaml:5:48: topology.link.red_max: expected red_max > red_min (20000 "
         "B), found 10000 B"},
        {"topology: {kind: star, hosts: 3, link: {rate: 1Gbps, ratee: 2Gbps}}\n",
         "t.yaml:1:54: topology.link.ratee: unknown key; did you mean \"rate\"?; "
         "expected one of: rate, delay, buffer, ecn_k, red_min, red_max, "
         "red_max_p, red_weight, priorities, pfc_xoff, pfc_xon, qdisc"},
        {"topology: {kind: star, hosts: 3, link: {rate: 1Gbps}, spines: 2}\n",
         "t.yaml:1:55: topology.spines: unknown key; expected one of: kind, "
         "hosts, link, shared_buffer, nic_scheduling, mark_at"},
        {"topology:\n  kind: custom\n  hosts: [a, b c]\n  links: []\n",
         "t.yaml:3:14: topology.hosts[1]: expected a node name (letters, "
         "digits, '_', '.', '-') or a server {name, gpus}, found \"b c\""},
        {"topology: {kind: fat_tree, k: 130, link: {rate: 1Gbps}}\n",
         "t.yaml:1:31: topology.k: expected an integer in [2, 128], found \"130\""},
        {"other: 1\n",
         "topology: missing required key (expected a map with kind: dumbbell, "
         "star, leaf_spine, fat_tree, rail_optimised, dual_plane or custom)"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        bed b;
        bed_init(&b, 1);
        err e = {0};
        if (load_topo(&b, cs[i].yaml, &e, NULL) >= 0)
            fail_msg("accepted: %s", cs[i].yaml);
        assert_string_equal(e.msg, cs[i].msg);
        bed_fini(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_builders_counts_and_names),
        cmocka_unit_test(test_topo_route_lengths_and_reverse),
        cmocka_unit_test(test_topo_delivers_end_to_end_with_exact_latency),
        cmocka_unit_test(test_topo_ecmp_spreads_flows_across_spines),
        cmocka_unit_test(test_topo_ecmp_polarises_with_equal_seeds),
        cmocka_unit_test(test_topo_paths_counts),
        cmocka_unit_test(test_topo_paths_deliver_and_spray_evenly),
        cmocka_unit_test(test_topo_failed_link_avoided_after_convergence),
        cmocka_unit_test(test_topo_shared_buffer_per_switch),
        cmocka_unit_test(test_topo_from_cfg_builds_each_kind),
        cmocka_unit_test(test_topo_from_cfg_errors_name_the_location),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
