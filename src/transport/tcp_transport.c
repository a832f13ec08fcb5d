/*
 * tcp_transport.c - TCP (NewReno, DCTCP; tcp.h) as a transport of the
 * network object (transport.h): its scenario keys, its connections (a
 * tcp_flow behind the common header), and its headers in captures.
 *
 * A connection's stream is the tcp_flow's byte stream; a message appended
 * to it is more bytes to deliver (tcp_flow_add_bytes), so a persistent
 * connection keeps its window and RTT estimate from one message to the next.
 * The network learns of delivery from the receiver (on_progress, then
 * on_done), and of a sender that gave up from on_done with f->aborted.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/tcp.h"
#include "aisim/transport.h"

static const char *const cc_names[] = {"newreno", "dctcp", NULL};
static const char *const rec_names[] = {"rfc6675", "rack", NULL};

typedef struct tcp_keys {
    int cc, recovery;
    int64_t mss, hdr, init_cwnd, rcv_wnd, max_retries;
    int64_t min_rto, max_rto, init_rto, delack;
    bool delayed_ack;
    double g, reo_wnd;
} tcp_keys;

static const cfg_key tcp_keys_schema[] = {
    {.name = "cc", .type = CFG_ENUM, .off = offsetof(tcp_keys, cc), .def = "newreno",
     .choices = cc_names, .help = "congestion control"},
    {.name = "mss", .type = CFG_SIZE, .off = offsetof(tcp_keys, mss), .def = "1460B",
     .flags = CFG_MIN | CFG_MAX, .min = 64, .max = 65000, .help = "payload per segment"},
    {.name = "header", .type = CFG_SIZE, .off = offsetof(tcp_keys, hdr), .def = "40B",
     .flags = CFG_MIN | CFG_MAX, .min = 20, .max = 1000, .help = "header bytes per packet"},
    {.name = "init_cwnd", .type = CFG_INT, .off = offsetof(tcp_keys, init_cwnd),
     .def = "10", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000,
     .help = "initial window, segments"},
    {.name = "rcv_wnd", .type = CFG_SIZE, .off = offsetof(tcp_keys, rcv_wnd),
     .def = "64MiB", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 4294967295.0,
     .help = "receiver's advertised window"},
    {.name = "min_rto", .type = CFG_TIME, .off = offsetof(tcp_keys, min_rto),
     .def = "200ms", .flags = CFG_MIN_EXCL, .min = 0, .help = "minimum retransmission timeout"},
    {.name = "max_rto", .type = CFG_TIME, .off = offsetof(tcp_keys, max_rto), .def = "60s",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "cap of the backed-off timeout"},
    {.name = "init_rto", .type = CFG_TIME, .off = offsetof(tcp_keys, init_rto),
     .def = "1s", .flags = CFG_MIN_EXCL, .min = 0, .help = "timeout before the first RTT sample"},
    {.name = "max_retries", .type = CFG_INT, .off = offsetof(tcp_keys, max_retries),
     .def = "15", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000,
     .help = "consecutive timeouts before the sender gives up (Linux's tcp_retries2)"},
    {.name = "delayed_ack", .type = CFG_BOOL, .off = offsetof(tcp_keys, delayed_ack),
     .def = "false", .help = "ACK every second segment"},
    {.name = "delack_timeout", .type = CFG_TIME, .off = offsetof(tcp_keys, delack),
     .def = "40ms", .flags = CFG_MIN_EXCL, .min = 0, .help = "delayed-ACK timer"},
    {.name = "dctcp_g", .type = CFG_FLOAT, .off = offsetof(tcp_keys, g), .def = "0.0625",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "DCTCP EWMA gain"},
    {.name = "recovery", .type = CFG_ENUM, .off = offsetof(tcp_keys, recovery),
     .def = "rfc6675", .choices = rec_names,
     .help = "loss detection: RFC 6675 SACK counting, or RACK's time-based marking"},
    {.name = "rack_reo_wnd", .type = CFG_FLOAT, .off = offsetof(tcp_keys, reo_wnd),
     .def = "0.25", .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 4,
     .help = "RACK's reordering window, as a fraction of the minimum RTT"},
    {0},
};

typedef struct tcp_conn {
    conn c;
    tcp_flow f;
} tcp_conn;

static int tcp_setup(void **tp, const void *bound, const cfg_node *sec, const char *path,
                     err *e)
{
    (void)sec;
    (void)path;
    (void)e;
    const tcp_keys *k = bound;
    tcp_cfg *t = xcalloc(1, sizeof *t);
    tcp_cfg_default(t);
    t->cc = k->cc == 1 ? TCP_DCTCP : TCP_NEWRENO;
    t->mss_bytes = (uint32_t)k->mss;
    t->hdr_bytes = (uint32_t)k->hdr;
    t->init_cwnd_pkts = (uint32_t)k->init_cwnd;
    t->rcv_wnd_bytes = (uint32_t)k->rcv_wnd;
    t->min_rto_ps = k->min_rto;
    t->max_rto_ps = k->max_rto;
    t->init_rto_ps = k->init_rto;
    t->max_retries = (uint32_t)k->max_retries;
    t->delayed_ack = k->delayed_ack;
    t->delack_ps = k->delack;
    t->dctcp_g = k->g;
    t->recovery = k->recovery == 1 ? TCP_REC_RACK : TCP_REC_RFC6675;
    t->rack_reo_wnd = k->reo_wnd;
    *tp = t;
    return 0;
}

static void tcp_teardown(void *tp) { free(tp); }

static void tcp_framing(const void *tp, uint32_t *payload, uint32_t *header)
{
    const tcp_cfg *t = tp;
    *payload = t->mss_bytes;
    *header = t->hdr_bytes;
}

static void on_progress(void *ctx, tcp_flow *f)
{
    conn *c = ctx;
    if (tcp_flow_delivered(f) >= c->mark)
        c->delivered(c, tcp_flow_delivered(f));
}

static void on_done(void *ctx, tcp_flow *f)
{
    conn *c = ctx;
    if (f->aborted)
        c->aborted(c);
    else
        c->delivered(c, tcp_flow_delivered(f));
}

static void on_acked(void *ctx, tcp_flow *f)
{
    (void)f;
    conn *c = ctx;
    c->idle(c);
}

static void on_reroute(void *ctx, tcp_flow *f)
{
    (void)f;
    conn *c = ctx;
    c->reroute(c);
}

static void tcp_conn_init(conn *c, sink **at_src, sink **at_dst)
{
    tcp_conn *t = (tcp_conn *)c;
    tcp_flow_init(&t->f, c->s, c->pool, c->tp, c->id, 0);
    t->f.prio = c->prio;
    t->f.on_done = on_done;
    t->f.on_progress = on_progress;
    t->f.reroute = on_reroute;
    t->f.on_acked = on_acked;
    t->f.ctx = c;
    if (c->spray != CONN_PATH_FIXED)
        tcp_flow_set_data_sink(&t->f, &c->sprayer);
    *at_src = &t->f.tx;
    *at_dst = &t->f.rx;
}

static void tcp_start(conn *c, int64_t at_ps, uint64_t bytes, int64_t base_rtt_ps)
{
    tcp_conn *t = (tcp_conn *)c;
    t->f.size_bytes = bytes;
    tcp_flow_prime_rtt(&t->f, base_rtt_ps);
    tcp_flow_start(&t->f, at_ps);
}

static void tcp_append(conn *c, uint64_t bytes)
{
    tcp_flow_add_bytes(&((tcp_conn *)c)->f, bytes);
}

static void tcp_paths_changed(conn *c)
{
    tcp_flow_set_routes(&((tcp_conn *)c)->f, c->fwd, c->rev);
}

static void tcp_stop(conn *c) { tcp_flow_stop(&((tcp_conn *)c)->f); }

static void tcp_stats(const conn *c, conn_stats *st)
{
    const tcp_flow *f = &((const tcp_conn *)c)->f;
    st->delivered = tcp_flow_delivered(f);
    st->retransmits = f->retransmits;
    st->timeouts = f->timeouts;
}

/* Everything sent is acknowledged and the receiver holds it all, with no
 * delayed ACK pending. */
static bool tcp_idle(const conn *c)
{
    const tcp_flow *f = &((const tcp_conn *)c)->f;
    return f->snd_una >= f->size_bytes && tcp_flow_delivered(f) >= f->size_bytes &&
           !sim_timer_armed(c->s, &f->delack_timer);
}

/* Data from src port 10000 + (id mod 50000) to 5001, ACKs back; data byte
 * n is sequence number n+1; the window scaled by 2^7. */
static void tcp_pcap(const conn *c, const pkt *p, pcap_l4 *h)
{
    bool data = p->kind == PKT_DATA;
    uint16_t eph = (uint16_t)(10000 + c->id % 50000);
    h->proto = 6;
    h->reverse = !data;
    h->sport = data ? eph : 5001;
    h->dport = data ? 5001 : eph;
    h->tcp_flags = 0x10 | (data ? 0x08 : 0) | (p->flags & PKT_F_ECE ? 0x40 : 0) |
                   (p->flags & PKT_F_CWR ? 0x80 : 0);
    h->seq = data ? (uint32_t)(p->seq + 1) : 1;
    h->ack = data ? 1 : (uint32_t)(p->seq + 1);
    /* ACKs carry the receiver's advertised window; our data segments carry
     * none (the reverse direction has no receive buffer to advertise), so
     * they show the largest value rather than a misleading zero window. */
    uint32_t wnd = data ? 65535 : p->h.tcp.wnd_bytes >> 7;
    h->wnd = (uint16_t)(wnd > 65535 ? 65535 : wnd);
    h->nsack = 0;
    for (int i = 0; i < 2; i++) {
        if (p->h.tcp.sack[i][1] <= p->h.tcp.sack[i][0])
            continue;
        h->sack[h->nsack][0] = (uint32_t)(p->seq + 1 + p->h.tcp.sack[i][0]);
        h->sack[h->nsack++][1] = (uint32_t)(p->seq + 1 + p->h.tcp.sack[i][1]);
    }
}

const transport_ops tcp_transport = {
    .name = "tcp",
    .summary = "TCP NewReno with SACK, or DCTCP (cc: dctcp)",
    .conn_size = sizeof(tcp_conn),
    .keys = tcp_keys_schema,
    .cfg_size = sizeof(tcp_keys),
    .setup = tcp_setup,
    .teardown = tcp_teardown,
    .framing = tcp_framing,
    .conn_init = tcp_conn_init,
    .start = tcp_start,
    .append = tcp_append,
    .paths_changed = tcp_paths_changed,
    .stop = tcp_stop,
    .stats = tcp_stats,
    .idle = tcp_idle,
    .pcap = tcp_pcap,
};
