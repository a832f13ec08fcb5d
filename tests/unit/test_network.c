/*
 * test_network.c - the network object's message API and the transport
 * interface: messages on persistent connections complete in order with
 * their own counters, a second transport (datagrams) runs with no change
 * to the model, the ports or the tables, and the transport is chosen by
 * name with located errors.
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

#include <pcap/pcap.h>

#include "aisim/network.h"
#include "aisim/units.h"
#include "netfix.h"
#include "testutil.h"

/* A star of four hosts at 10 Gbps, 1 us links, 1 MB buffers. */
#define STAR "topology: {kind: star, hosts: 4, link: {rate: 10Gbps, delay: 1us, buffer: 1MB}}\n"

typedef struct log {
    uint64_t ids[16];
    int64_t at[16];
    net_msg m[16];              /* the records as the callbacks saw them */
    int n;
} log_t;

static void on_done(void *ctx, network *n, const net_msg *m)
{
    log_t *l = ctx;
    l->ids[l->n] = m->id;
    l->m[l->n] = *m;
    l->at[l->n++] = sim_now(network_sim(n));
}

/* The record of message id as its callback saw it. */
static const net_msg *logged(const log_t *l, uint64_t id)
{
    for (int i = 0; i < l->n; i++)
        if (l->ids[i] == id)
            return &l->m[i];
    fail_msg("message %llu did not complete", (unsigned long long)id);
    return NULL;
}

/* Three messages queued at once on one TCP connection complete in order,
 * each when the receiver holds the stream up to its end: the second and
 * third after the first, with their own delivered bytes; a message on
 * another connection is independent. */
static void test_persistent_connection_messages_in_order(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR "transport: {name: tcp, cc: dctcp}\n");
    log_t l = {0};
    conn *c = network_connect(f.n, 1, 0, 0);
    uint64_t a = network_send_on(f.n, c, 100000, 7, 0, on_done, &l);
    uint64_t b = network_send_on(f.n, c, 1000, 8, 0, on_done, &l);
    uint64_t d = network_send_on(f.n, c, 50000, 9, 0, on_done, &l);
    uint64_t x = network_send(f.n, 2, 3, 20000, 0, -1, 0, on_done, &l);
    assert_int_equal(network_active(f.n), 4);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(network_active(f.n), 0);
    assert_int_equal(l.n, 4);
    /* a before b before d; x somewhere */
    int pa = -1, pb = -1, pd = -1;
    for (int i = 0; i < l.n; i++) {
        if (l.ids[i] == a)
            pa = i;
        if (l.ids[i] == b)
            pb = i;
        if (l.ids[i] == d)
            pd = i;
    }
    assert_true(pa >= 0 && pa < pb && pb < pd);
    const net_msg *ma = logged(&l, a), *mb = logged(&l, b), *md = logged(&l, d),
                  *mx = logged(&l, x);
    assert_int_equal(ma->offset, 0);
    assert_int_equal(mb->offset, 100000);
    assert_int_equal(md->offset, 101000);
    assert_int_equal(ma->conn, mb->conn);
    assert_int_not_equal(ma->conn, mx->conn);
    assert_true(ma->finish_ps > 0 && ma->finish_ps <= mb->finish_ps &&
                mb->finish_ps <= md->finish_ps);
    assert_int_equal(mb->tag, 8);
    /* The queued messages started when sent (time 0); the reference FCT is
     * on the empty network: at 10 Gbps, 100 000 B in 69 segments of 1460 +
     * 40 B plus 4 us of propagation, store-and-forward. */
    assert_int_equal(mb->start_ps, 0);
    assert_true(ma->ideal_ps > 69 * 1500 * 800 && ma->ideal_ps < 69 * 1500 * 800 + 10 * PS_PER_US);
    /* Nothing lost on an idle star: each completes within 2x its ideal
     * time plus a few round trips. */
    assert_true(ma->finish_ps - ma->start_ps < 2 * ma->ideal_ps + 50 * PS_PER_US);
    fx_free(&f);
}

/* A datagram stream paced at the NIC's line rate on an idle path completes
 * at exactly its reference time (first packet's store-and-forward latency
 * plus the rest at line rate), with no packet travelling back. */
static void test_dgram_paced_at_line_rate_meets_ideal(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR "transport: {name: dgram}\n");
    log_t l = {0};
    uint64_t id = network_send(f.n, 1, 0, 1000000, 0, -1, 5 * PS_PER_US, on_done, &l);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 1);
    const net_msg *m = logged(&l, id);
    assert_int_equal(m->start_ps, 5 * PS_PER_US);
    assert_int_equal(m->finish_ps - m->start_ps, m->ideal_ps);
    /* 1 000 000 B in 680 datagrams of 1472 B payload + 28 B */
    topo *t = network_topo(f.n);
    port *up = topo_link_port(t, 0, 1);      /* sw0 -> h0 */
    port *back = topo_link_port(t, 0, 0);    /* h0 -> sw0 */
    assert_int_equal(up->stat_tx_pkts, 680);
    assert_int_equal(up->stat_tx_bytes, 1000000 + 680 * 28);
    assert_int_equal(back->stat_tx_pkts, 0);
    fx_free(&f);
}

/* Unpaced (burst) datagrams overflow a small NIC buffer: the lost ones are
 * not resent, the message never completes, delivered bytes say how much
 * arrived, and bytes are conserved. */
static void test_dgram_burst_loses_and_does_not_complete(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: star, hosts: 2, link: {rate: 10Gbps, delay: 1us, "
                "buffer: 15000B}}\ntransport: {name: dgram, burst: true}\n");
    log_t l = {0};
    uint64_t id = network_send(f.n, 0, 1, 100000, 0, -1, 0, on_done, &l);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(l.n, 0);
    assert_int_equal(network_active(f.n), 1);
    assert_true(network_message(f.n, id)->finish_ps < 0);
    port *nic = topo_link_port(network_topo(f.n), 0, 0);
    assert_true(nic->stat_drop_pkts > 50);
    topo_bytes tb;
    topo_byte_counts(network_topo(f.n), &tb);
    assert_int_equal(tb.injected, tb.delivered + tb.dropped + tb.in_network);
    assert_int_equal(tb.delivered, 100000 + 68 * 28 - nic->stat_drop_bytes);
    fx_free(&f);
}

/* The transport is chosen by name; an unknown name, or a key of another
 * transport, is a located error. */
static void test_transport_by_name_and_errors(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *msg;
    } bad[] = {
        {STAR "transport: {name: quic}\n",
         "net.yaml:2:19: net.transport.name: expected one of: tcp, dgram, rocev2, stellar_dgram, stellar_rocev2, found \"quic\""},
        {STAR "transport: {name: dgram, cc: dctcp}\n", "net.yaml:2:26: net.transport.cc: "
                                                       "unknown key"},
        {STAR "transport: {name: tcp, burst: true}\n", "net.yaml:2:24: net.transport.burst: "
                                                       "unknown key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fixture f;
        err e = {0};
        assert_int_not_equal(fx_make(&f, bad[i].yaml, &e), 0);
        if (strncmp(e.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
            fail_msg("case %zu: got \"%s\"", i, e.msg);
        fx_free(&f);
    }
    fixture f;
    fx_open(&f, STAR "transport: {name: dgram}\n");
    assert_string_equal(network_transport(f.n)->name, "dgram");
    fx_free(&f);
    fx_open(&f, STAR "transport: {}\n");
    assert_string_equal(network_transport(f.n)->name, "tcp");
    fx_free(&f);
}

/* The whole model on the datagram transport, with no edit of the model,
 * ports, pcap or tables: nothing is retransmitted, the bottleneck is kept
 * full, and the capture holds UDP datagrams only. */
static void test_net_model_runs_dgram_with_udp_capture(void **state)
{
    (void)state;
    const char *sets[] = {"net.transport={name: dgram}", "net.pcap=[h0]"};
    json_t *sum = tu_run("net/dumbbell", "dg", sets, 2);
    json_t *r = json_object_get(sum, "results");
    assert_int_equal(json_integer_value(json_object_get(r, "retransmits")), 0);
    /* Four long-lived streams paced at 10 Gbps into a 10 Gbps bottleneck:
     * it runs full (goodput within 2 % of its rate) and drops the rest. */
    assert_int_equal(json_integer_value(json_object_get(r, "flows")), 4);
    assert_true(json_integer_value(json_object_get(r, "drops")) > 1000);
    double gp = json_real_value(json_object_get(r, "goodput_bps"));
    assert_true(gp > 0.98 * 10e9 * 1472 / 1500 && gp <= 10e9);
    json_decref(sum);
    char p[256], eb[PCAP_ERRBUF_SIZE];
    snprintf(p, sizeof p, "%s/dg/h0.pcap", tu_tmp);
    pcap_t *pc = pcap_open_offline(p, eb);
    assert_non_null(pc);
    struct pcap_pkthdr *h;
    const u_char *d;
    int n = 0;
    while (pcap_next_ex(pc, &h, &d) == 1) {
        assert_int_equal(d[14 + 9], 17);        /* IPv4 protocol: UDP */
        assert_int_equal(d[14 + 20 + 2] << 8 | d[14 + 20 + 3], 5001);
        n++;
    }
    pcap_close(pc);
    assert_true(n > 100);
}

/* A host's capture records a packet when its transmission starts, as a
 * capture on the host would: three datagrams handed to the NIC at once
 * leave 1.2 us apart at 10 Gbps (1500 B each); with the link down nothing
 * is captured (before: all three at their arrival in the NIC's queue, and
 * packets a failed NIC dropped). */
static void test_capture_at_transmission_not_arrival(void **state)
{
    (void)state;
    for (int down = 0; down < 2; down++) {
        char sub[16];
        snprintf(sub, sizeof sub, "cap%d", down);
        const char *sets[] = {"net.topology={kind: star, hosts: 2, link: {rate: 10Gbps, "
                              "delay: 1us}}",
                              "net.transport={name: dgram, burst: true}", "net.incast=null",
                              "net.flows=[{src: h0, dst: h1, size: 4416B, start: 1us}]", "net.pcap=[h0]",
                              "stop=1ms",
                              down ? "net.failures=[{a: h0, b: sw0, at: 0s}]" : "seed=1"};
        json_t *sum = tu_run("net/incast", sub, sets, 7);
        json_decref(sum);
        char p[300], eb[PCAP_ERRBUF_SIZE];
        snprintf(p, sizeof p, "%s/%s/h0.pcap", tu_tmp, sub);
        pcap_t *pc = pcap_open_offline(p, eb);
        assert_non_null(pc);
        struct pcap_pkthdr *h;
        const u_char *d;
        int n = 0;
        long us[3] = {0};
        while (pcap_next_ex(pc, &h, &d) == 1 && n < 3)
            us[n++] = (long)h->ts.tv_usec;
        pcap_close(pc);
        if (down) {
            assert_int_equal(n, 0);
        } else {
            assert_int_equal(n, 3);
            assert_int_equal(us[0], 1);    /* sent at 1 us */
            assert_int_equal(us[1], 2);    /* 2.2 us, in whole microseconds */
            assert_int_equal(us[2], 3);    /* 3.4 us */
        }
    }
}

/* A packet reaching a host for a connection not bound there is a drop, not
 * a delivery: bytes stay conserved with it on the dropped side. */
static void test_unbound_packet_is_dropped_not_delivered(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR "transport: {name: dgram}\n");
    topo *t = network_topo(f.n);
    const route *rt = topo_route_ecmp(t, 1, 0, 1);
    assert_non_null(rt);
    network_send(f.n, 2, 3, 1000, 0, -1, 0, NULL, NULL);   /* connection 0 */
    sim_run(f.s, SIM_TIME_MAX);
    topo_bytes before;
    topo_byte_counts(t, &before);
    pkt *p = pkt_alloc(network_pool(f.n));
    p->kind = PKT_DATA;
    p->flow_id = 77;                    /* bound to nobody */
    p->size_bytes = 500;
    pkt_send(p, rt);
    sim_run(f.s, SIM_TIME_MAX);
    topo_bytes after;
    topo_byte_counts(t, &after);
    assert_int_equal(after.delivered, before.delivered);
    assert_int_equal(after.dropped, before.dropped + 500);
    assert_int_equal(after.injected, before.injected + 500);
    assert_int_equal(topo_unbound_drops(t), 1);
    fx_free(&f);
}

typedef struct linger_log {
    network *n;
    conn *c[5];                 /* each sender's current connection */
    int sent[5];                /* messages each sender has started */
    int done;
    uint64_t retransmits;
} linger_log;

/* Sender h (1..4) sends its next message on a new connection. */
static void linger_next(linger_log *l, network *n, int h);

static void linger_done(void *ctx, network *n, const net_msg *m)
{
    linger_log *l = ctx;
    int h = m->src;
    conn_stats st;
    network_transport(n)->stats(l->c[h], &st);     /* still alive: lingering */
    l->retransmits += st.retransmits;
    l->done++;
    if (l->sent[h] < 5)
        linger_next(l, n, h);
}

static void linger_next(linger_log *l, network *n, int h)
{
    l->c[h] = network_connect(n, h, 0, 0);         /* reaps the lingering */
    network_send_on(n, l->c[h], 200000, l->sent[h]++, sim_now(network_sim(n)), linger_done, l);
    network_close(n, l->c[h]);
}

static void linger_later(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    linger_log *l = obj;
    linger_next(l, l->n, 1);
}

/* A closed connection is freed only after its packets can no longer be in
 * the network (network.c, conn_maybe_idle).  Here a fault holds a fifth
 * of the packets into the receiver back for 30 ms: the senders recover
 * them by fast retransmission and finish while the held originals (and,
 * behind them, the receiver's answers) are still on their way, and open
 * their next connection, which frees what has lingered long enough.  The
 * late packets must all reach a host that still knows their connection:
 * none is dropped as unbound, and in the end no packet is left.  (Freeing
 * at once drops them; so did a linger that ignored the faults' delay.) */
static void test_closed_connection_lingers_until_its_packets_are_gone(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: star, hosts: 5, link: {rate: 10Gbps, delay: 1us, "
                "buffer: 1MB}}\n"
                "transport: {name: tcp, min_rto: 1ms}\n"
                "faults:\n  - {kind: delay, port: sw0->h0, delay: 30ms, rate: 0.2}\n");
    linger_log l = {.n = f.n};
    for (int h = 1; h <= 4; h++)
        linger_next(&l, f.n, h);
    sim_run(f.s, SIM_TIME_MAX);
    network_int_counts k;
    network_counts(f.n, &k);
    assert_int_equal(k.conns_opened, 20);
    assert_int_equal(k.conns_live, 20);     /* all lingering: 30 ms per hop */
    /* A second later, sender 1's next connection frees them all. */
    l.sent[1] = 4;
    sim_schedule(f.s, sim_now(f.s) + PS_PER_S, linger_later, &l, 0);
    sim_run(f.s, SIM_TIME_MAX);
    network_counts(f.n, &k);
    assert_int_equal(k.conns_opened, 21);
    assert_int_equal(k.conns_live, 1);
    assert_int_equal(l.done, 21);
    assert_true(l.retransmits > 20);    /* the held packets, sent again */
    topo *t = network_topo(f.n);
    assert_int_equal(topo_unbound_drops(t), 0);
    assert_int_equal(topo_packets_in_network(t), 0);
    assert_int_equal(pkt_pool_live(network_pool(f.n)), 0);
    fx_free(&f);
}

/* Paths as link hops (link id * 2 + direction): on the star, h1 -> h0 is
 * h1's link a->b (h1 to sw0) then h0's link b->a, and the reverse route's
 * path is the same links backwards, directions flipped. */
static void test_route_path_as_link_ids(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, STAR "transport: {}\n");
    topo *t = network_topo(f.n);
    const route *rt = topo_route_ecmp(t, 1, 0, 7);
    size_t n, nr;
    const int32_t *p = topo_route_path(t, rt, &n);
    assert_int_equal(n, 2);
    int a, b;
    topo_link_ends(t, p[0] >> 1, &a, &b);
    assert_string_equal(topo_node_name(t, (p[0] & 1) ? b : a), "h1");
    assert_int_equal(p[0], 1 * 2 + 0);     /* star: host i is link i, a = host */
    assert_int_equal(p[1], 0 * 2 + 1);
    const int32_t *r = topo_route_path(t, rt->reverse, &nr);
    assert_int_equal(nr, 2);
    assert_int_equal(r[0], p[1] ^ 1);
    assert_int_equal(r[1], p[0] ^ 1);
    fx_free(&f);
}

/* Finished connections are freed and finished messages leave memory,
 * while flows.csv still has every row: 2 000 messages one after another
 * (each sent when the previous completes) keep only those of the last
 * linger in memory, the run's outputs do not change, and
 * a persistent connection stays until it is closed. */
typedef struct chain {
    network *n;
    int left;
    uint64_t last;
} chain;

static void on_chain(void *ctx, network *n, const net_msg *m)
{
    chain *c = ctx;
    c->last = m->id;
    if (--c->left > 0)
        network_send(n, 1 + c->left % 3, 0, 3000, 0, c->left, sim_now(network_sim(n)),
                     on_chain, c);
}

static void test_finished_connections_and_records_are_freed(void **state)
{
    (void)state;
    fixture f;
    /* 64 KB buffers at 10 Gbps */
    fx_open(&f, "topology: {kind: star, hosts: 4, link: {rate: 10Gbps, delay: 1us, "
                "buffer: 64KB}}\ntransport: {name: tcp, cc: dctcp}\n");
    conn *keep = network_connect(f.n, 3, 2, 0);
    network_send_on(f.n, keep, 1000, -1, 0, NULL, NULL);
    chain c = {f.n, 2000, 0};
    network_send(f.n, 1, 0, 3000, 0, c.left, 0, on_chain, &c);
    sim_run(f.s, SIM_TIME_MAX);
    assert_int_equal(c.left, 0);
    assert_int_equal(network_messages(f.n), 2001);
    network_int_counts cnt;
    network_counts(f.n, &cnt);
    /* of 2 001 opened: those that went idle within the last linger (4 hops
     * at (64 000 + 1 540) B / 10 Gbps + 1 us each: 213.6 us) before the end,
     * those not yet idle (the sender hears the last ACK a round trip after
     * completion), and the persistent one */
    double per = (double)sim_now(f.s) / 2001, linger = 4 * (65500 * 0.8e3 + 1e6);
    if ((double)cnt.conns_live > linger / per + 4 || cnt.msgs_live > cnt.conns_live + 1)
        fail_msg("%zu connections and %zu records in memory; a message every %.0f ps",
                 cnt.conns_live, cnt.msgs_live, per);
    assert_int_equal(cnt.conns_opened, 2001);
    /* the persistent connection (id 0) is still there; closing it frees it
     * once the next connection is opened after its linger */
    network_close(f.n, keep);
    sim_run(f.s, sim_now(f.s) + 10 * PS_PER_MS);
    network_send(f.n, 1, 0, 1000, 0, -1, sim_now(f.s), NULL, NULL);
    sim_run(f.s, SIM_TIME_MAX);
    network_counts(f.n, &cnt);
    assert_true(cnt.conns_live <= 2);
    /* every row reads back, in order, with its size and tag */
    char dir[256];
    snprintf(dir, sizeof dir, "%s/freed", tu_tmp);
    err e = {0};
    out *o = NULL;
    assert_int_equal(out_open(dir, 0, &o, &e), 0);
    json_t *sum = json_object();
    assert_int_equal(network_report(f.n, o, sum, &e), 0);
    assert_int_equal(json_integer_value(json_object_get(sum, "flows_completed")), 2002);
    json_decref(sum);
    assert_int_equal(out_commit(o, &e), 0);
    char p[300];
    snprintf(p, sizeof p, "%s/flows.csv", dir);
    char *csv = tu_slurp(p, NULL);
    assert_non_null(strstr(csv, "\n1,h1,h0,3000,0,"));
    assert_non_null(strstr(csv, "\n2001,h1,h0,1000,"));
    int rows = 0;
    for (const char *q = csv; (q = strchr(q, '\n')); q++)
        rows++;
    assert_int_equal(rows, 1 + 2002);
    free(csv);
    fx_free(&f);
}

/* Random spraying draws from a stream per connection: connection A's
 * datagrams split over the two spines exactly the same whether or not
 * another connection (B, the other way, on other links) sprays at the same
 * time.  With one stream shared by all (before), B's draws changed A's. */
static void test_spray_stream_per_connection(void **state)
{
    (void)state;
    double split[2];
    for (int withb = 0; withb < 2; withb++) {
        char sub[16];
        snprintf(sub, sizeof sub, "spr%d", withb);
        const char *sets[] = {"net.failures=null", "net.routing=spray_random",
                              "net.transport={name: dgram, rate: 2Gbps}",
                              withb ? "net.flows=[{src: h0, dst: h2, size: 3MB}, "
                                      "{src: h3, dst: h1, size: 3MB}]"
                                    : "net.flows=[{src: h0, dst: h2, size: 3MB}]"};
        json_t *sum = tu_run("net/failure", sub, sets, 4);
        json_decref(sum);
        char p[256];
        snprintf(p, sizeof p, "%s/%s/links.csv", tu_tmp, sub);
        char *csv = tu_slurp(p, NULL);
        const char *r = strstr(csv, "\nleaf0->spine0,");
        assert_non_null(r);
        r = strchr(r + 1, ',');
        r = strchr(r + 1, ',');
        split[withb] = strtod(r + 1, NULL);
        free(csv);
    }
    assert_true(split[0] > 0);
    assert_true(split[0] == split[1]);
}

/* Forwarding by path index (round-robin spraying): on a k = 4 fat-tree a
 * packet between pods meets two choices (edge -> agg, agg -> core), so
 * indices 0..3 name the four paths and 8 packets with indices 0..7 cross
 * each core exactly twice.  (Reading the same digit at both hops would
 * reach only two of the cores.) */
static void test_path_index_names_every_path(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, "topology: {kind: fat_tree, k: 4, link: {rate: 10Gbps, delay: 1us}}\n"
                "transport: {name: dgram}\n");
    topo *t = network_topo(f.n);
    int dst = topo_host_node(t, 15);
    for (uint32_t i = 0; i < 8; i++) {
        pkt *p = pkt_alloc(network_pool(f.n));
        p->kind = PKT_DATA;
        p->flow_id = 999;
        p->size_bytes = 1000;
        p->dst_node = (uint32_t)dst;
        p->entropy = i;
        p->flags = PKT_F_PATHIDX;
        sink *fw = topo_node_forwarder(t, topo_host_node(t, 0));
        fw->recv(fw, p);
    }
    sim_run(f.s, SIM_TIME_MAX);
    int cores = 0;
    for (size_t l = 0; l < topo_links(t); l++)
        for (int d = 0; d < 2; d++) {
            const port *q = topo_link_port(t, (int)l, d);
            if (strncmp(q->base.name, "core", 4) != 0 || q->stat_tx_pkts == 0)
                continue;
            assert_int_equal(q->stat_tx_pkts, 2);
            cores++;
        }
    assert_int_equal(cores, 4);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_persistent_connection_messages_in_order),
        cmocka_unit_test(test_dgram_paced_at_line_rate_meets_ideal),
        cmocka_unit_test(test_dgram_burst_loses_and_does_not_complete),
        cmocka_unit_test(test_transport_by_name_and_errors),
        cmocka_unit_test(test_net_model_runs_dgram_with_udp_capture),
        cmocka_unit_test(test_capture_at_transmission_not_arrival),
        cmocka_unit_test(test_unbound_packet_is_dropped_not_delivered),
        cmocka_unit_test(test_closed_connection_lingers_until_its_packets_are_gone),
        cmocka_unit_test(test_route_path_as_link_ids),
        cmocka_unit_test(test_finished_connections_and_records_are_freed),
        cmocka_unit_test(test_spray_stream_per_connection),
        cmocka_unit_test(test_path_index_names_every_path),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
