/*
 * dgram.c - a datagram transport (UDP-like): no handshake, no
 * acknowledgement, no retransmission, no congestion control.
 *
 * A message is cut into datagrams of at most `payload` bytes plus `header`
 * bytes on the wire.  The sender paces them at `rate` (absent: the line
 * rate of its NIC, the first port of its route, which is what a sender
 * blocked on its NIC queue achieves; a paced sender never overflows its own
 * NIC), or hands them all to the NIC at once with `burst: true`.  Each
 * datagram follows the connection's route, or is sprayed (transport.h).
 *
 * The receiver counts what arrives for each message; a message completes
 * when every one of its bytes has arrived and every earlier message on the
 * connection has completed (the network's messages complete in order).  A
 * lost datagram is not resent: its message never completes and flows.csv
 * shows what was delivered.  Probing systems (SkeletonHunter's probes) and
 * open-loop background traffic use it.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/port.h"
#include "aisim/transport.h"
#include "aisim/units.h"

typedef struct dgram_keys {
    int64_t payload, header, rate;
    bool burst;
} dgram_keys;

static const cfg_key dgram_schema[] = {
    {.name = "payload", .type = CFG_SIZE, .off = offsetof(dgram_keys, payload), .def = "1472B",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 65000, .help = "payload per datagram"},
    {.name = "header", .type = CFG_SIZE, .off = offsetof(dgram_keys, header), .def = "28B",
     .flags = CFG_MIN | CFG_MAX, .min = 8, .max = 1000,
     .help = "header bytes per datagram (IPv4 + UDP: 28)"},
    {.name = "rate", .type = CFG_RATE, .off = offsetof(dgram_keys, rate),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,
     .help = "pacing rate per connection (absent: the sender's NIC line rate)"},
    {.name = "burst", .type = CFG_BOOL, .off = offsetof(dgram_keys, burst), .def = "false",
     .help = "hand every datagram to the NIC at once instead of pacing"},
    {0},
};

typedef struct dgram_msg {
    uint64_t start, end;        /* its bytes in the stream */
    uint64_t got;               /* of them arrived */
} dgram_msg;

typedef struct dgram_conn {
    conn c;
    sink tx, rx;
    const dgram_keys *k;
    uint64_t size;              /* stream length (UINT64_MAX: endless) */
    uint64_t next;              /* next byte to send */
    sim_timer pace;
    bool sending;               /* pace timer armed or burst in progress */
    /* receiver */
    dgram_msg *m;               /* messages not yet complete, in order */
    size_t mh, mn, mcap;
    uint64_t done_to;           /* the stream is complete up to here */
    uint64_t received;          /* payload bytes arrived */
    uint64_t sent_pkts;
} dgram_conn;

static int dgram_setup(void **tp, const void *bound, const cfg_node *sec, const char *path,
                       err *e)
{
    (void)sec;
    (void)path;
    (void)e;
    dgram_keys *k = xcalloc(1, sizeof *k);
    *k = *(const dgram_keys *)bound;
    *tp = k;
    return 0;
}

static void dgram_teardown(void *tp) { free(tp); }

static void dgram_framing(const void *tp, uint32_t *payload, uint32_t *header)
{
    const dgram_keys *k = tp;
    *payload = (uint32_t)k->payload;
    *header = (uint32_t)k->header;
}

/* Nothing travels back; a stray packet is freed. */
static void tx_recv(sink *self, pkt *p)
{
    dgram_conn *d = container_of(self, dgram_conn, tx);
    pkt_free(d->c.pool, p);
}

static void rx_recv(sink *self, pkt *p)
{
    dgram_conn *d = container_of(self, dgram_conn, rx);
    uint64_t seq = p->seq, len = p->h.dg.data_bytes;
    pkt_free(d->c.pool, p);
    d->received += len;
    for (size_t i = 0; i < d->mn; i++) {
        dgram_msg *m = &d->m[(d->mh + i) % d->mcap];
        if (seq >= m->start && seq < m->end) {
            m->got += len;
            break;
        }
    }
    bool moved = false;
    while (d->mn && d->m[d->mh].got >= d->m[d->mh].end - d->m[d->mh].start) {
        d->done_to = d->m[d->mh].end;
        d->mh = (d->mh + 1) % d->mcap;
        d->mn--;
        moved = true;
    }
    if (moved)
        d->c.delivered(&d->c, d->done_to);
}

/* Payload of the next datagram. */
static uint64_t seg_len(const dgram_conn *d)
{
    uint64_t left = d->size - d->next, max = (uint64_t)d->k->payload;
    return left < max ? left : max;
}

static void send_one(dgram_conn *d)
{
    uint64_t len = seg_len(d);
    pkt *p = pkt_alloc(d->c.pool);
    p->kind = PKT_DATA;
    p->prio = d->c.prio;
    p->flow_id = d->c.id;
    p->seq = d->next;
    p->size_bytes = (uint32_t)(len + (uint64_t)d->k->header);
    p->sent_ps = sim_now(d->c.s);
    p->h.dg.data_bytes = (uint32_t)len;
    d->next += len;
    d->sent_pkts++;
    conn_send_data(&d->c, p);
}

static int64_t pace_rate(const dgram_conn *d)
{
    if (d->k->rate)
        return d->k->rate;
    /* The sender's NIC: the first element of every route topo builds. */
    const port *nic = container_of(d->c.fwd->hop[0], port, base);
    return nic->cfg.rate_bps;
}

static void on_pace(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    dgram_conn *d = obj;
    if (d->next >= d->size || !d->c.fwd) {
        d->sending = false;
        return;
    }
    if (d->k->burst) {
        while (d->next < d->size)
            send_one(d);
        d->sending = false;
        return;
    }
    uint64_t len = seg_len(d);
    send_one(d);
    sim_timer_arm(s, &d->pace,
                  sim_now(s) + units_tx_time_ps((int64_t)len + d->k->header, pace_rate(d)));
}

static void add_msg(dgram_conn *d, uint64_t start, uint64_t end)
{
    if (d->mn == d->mcap) {
        size_t nc = d->mcap ? 2 * d->mcap : 4;
        dgram_msg *m = xcalloc(nc, sizeof *m);
        for (size_t i = 0; i < d->mn; i++)
            m[i] = d->m[(d->mh + i) % d->mcap];
        free(d->m);
        d->m = m;
        d->mh = 0;
        d->mcap = nc;
    }
    d->m[(d->mh + d->mn++) % d->mcap] = (dgram_msg){start, end, 0};
}

static void dgram_conn_init(conn *c, sink **at_src, sink **at_dst)
{
    dgram_conn *d = (dgram_conn *)c;
    d->tx = (sink){tx_recv, "dgram.tx"};
    d->rx = (sink){rx_recv, "dgram.rx"};
    d->k = c->tp;
    sim_timer_init(&d->pace, on_pace, d, 0);
    *at_src = &d->tx;
    *at_dst = &d->rx;
}

static void dgram_start(conn *c, int64_t at_ps, uint64_t bytes, int64_t base_rtt_ps)
{
    (void)base_rtt_ps;
    dgram_conn *d = (dgram_conn *)c;
    d->size = bytes;
    add_msg(d, 0, bytes);
    d->sending = true;
    sim_timer_arm(c->s, &d->pace, at_ps);
}

static void dgram_append(conn *c, uint64_t bytes)
{
    dgram_conn *d = (dgram_conn *)c;
    add_msg(d, d->size, d->size + bytes);
    d->size += bytes;
    if (!d->sending) {
        d->sending = true;
        sim_timer_arm(c->s, &d->pace, sim_now(c->s));
    }
}

static void dgram_paths_changed(conn *c)
{
    (void)c;                    /* conn_send_data reads the header */
}

static void dgram_stop(conn *c)
{
    dgram_conn *d = (dgram_conn *)c;
    sim_timer_disarm(c->s, &d->pace);
    free(d->m);
    d->m = NULL;
}

/* Everything sent and every message complete at the receiver. */
static bool dgram_idle(const conn *c)
{
    const dgram_conn *d = (const dgram_conn *)c;
    return d->next >= d->size && d->mn == 0 && !d->sending;
}

static void dgram_stats(const conn *c, conn_stats *st)
{
    const dgram_conn *d = (const dgram_conn *)c;
    st->delivered = d->received;
    st->retransmits = 0;
    st->timeouts = 0;
}

/* UDP from port 10000 + (connection id mod 50000) to 5001, captured whole
 * (the payload as zeros: a UDP dissector reads it). */
static void dgram_pcap(const conn *c, const pkt *p, pcap_l4 *h)
{
    (void)p;
    h->proto = 17;
    h->whole = true;
    h->sport = (uint16_t)(10000 + c->id % 50000);
    h->dport = 5001;
}

const transport_ops dgram_transport = {
    .name = "dgram",
    .summary = "datagrams without acknowledgement or congestion control, paced",
    .conn_size = sizeof(dgram_conn),
    .keys = dgram_schema,
    .cfg_size = sizeof(dgram_keys),
    .setup = dgram_setup,
    .teardown = dgram_teardown,
    .framing = dgram_framing,
    .conn_init = dgram_conn_init,
    .start = dgram_start,
    .append = dgram_append,
    .paths_changed = dgram_paths_changed,
    .stop = dgram_stop,
    .stats = dgram_stats,
    .idle = dgram_idle,
    .pcap = dgram_pcap,
};
