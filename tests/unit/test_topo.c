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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_builders_counts_and_names),
        cmocka_unit_test(test_topo_route_lengths_and_reverse),
        cmocka_unit_test(test_topo_delivers_end_to_end_with_exact_latency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
