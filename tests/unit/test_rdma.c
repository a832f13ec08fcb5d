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
#include "aisim/network.h"
#include "aisim/rdma.h"
#include "aisim/units.h"
#include "testutil.h"

typedef struct fixture {
    cfg_doc *doc;
    sim *s;
    network *n;
} fixture;

static int fx_make(fixture *f, const char *yaml, err *e)
{
    memset(f, 0, sizeof *f);
    int r = cfg_load_string("net.yaml", yaml, strlen(yaml), &f->doc, e);
    if (r)
        return r;
    f->s = sim_create();
    network_cfg c = {.pcap_max = 1000};
    cfg_node *root = cfg_root(f->doc);
    c.topology = cfg_get(root, "topology");
    c.transport = cfg_get(root, "transport");
    c.routing = NET_ROUTE_ECMP;
    model_env env = {.sim = f->s, .seed = 1, .base_dir = ".", .stop_ps = SIM_TIME_MAX};
    return network_create(&f->n, &c, root, "net", &env, e);
}

static void fx_open(fixture *f, const char *yaml)
{
    err e = {0};
    if (fx_make(f, yaml, &e))
        fail_msg("%s", e.msg);
    network_start(f->n);
}

static void fx_free(fixture *f)
{
    network_destroy(f->n);
    sim_destroy(f->s);
    cfg_free(f->doc);
}

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_meets_ideal_and_conserves),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
