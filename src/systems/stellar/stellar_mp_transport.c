/*
 * stellar_mp_transport.c - `transport: {name: stellar_dgram}`: Stellar's
 * multi-path core (stellar_mp.h) driven over acknowledged datagrams.  NOT
 * RDMA: no verbs, no RoCE headers or semantics, no PFC interplay, no
 * DCQCN; it exists to run the core on the packet plane before the RDMA
 * transport (issue 10) lands, and is the pattern issue 15's glue follows.
 *
 * Sender: one smp_qp per connection.  A connection's stream is cut into
 * PSNs of `mss` bytes; whenever the QP's shared window has room it sends
 * (a resend first), each packet forwarded by entropy from the source host
 * (pkt.h) with the entropy of the path the algorithm chose: a path index
 * (PKT_F_PATHIDX, default) or a per-path hash; at the line rate `rate`
 * when given, else as fast as the window lets (the NIC's queue absorbs
 * it).  A timer stands at the oldest transmission's RTO deadline.
 *
 * Receiver: an smp_rxmap of the same window; every data packet placed (or
 * a duplicate) is acknowledged at once on the connection's reverse route
 * with its PSN, path, echoed send time and CE mark, and the cumulative
 * PSN; a packet beyond the window is dropped unacknowledged.  The stream
 * is delivered up to the cumulative PSN.
 *
 * The OBS stream of a connection is seeded from the connection's own
 * random stream (transport.h: the run seed and the connection id).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/stellar_mp.h"
#include "aisim/transport.h"
#include "aisim/units.h"
#include "systems/stellar/stellar_mp_transport.h"

typedef struct smpt_keys {
    int algo, out;
    int64_t paths, mss, header, ack, line_rate, window, rto, avoid_after, avoid, rate;
    bool order_loss, loss_cut;
} smpt_keys;

static const char *const algo_names[] = {"single", "rr", "obs", "bestrtt", "dwrr", "mprdma", NULL};
static const char *const out_names[] = {"pathidx", "hash", NULL};

static const cfg_key smpt_schema[] = {
    {.name = "algo", .type = CFG_ENUM, .off = offsetof(smpt_keys, algo), .def = "obs",
     .choices = algo_names, .help = "path choice per packet"},
    {.name = "paths", .type = CFG_INT, .off = offsetof(smpt_keys, paths), .def = "128",
     .flags = CFG_MIN | CFG_MAX, .min = SMP_PATHS_MIN, .max = SMP_PATHS_MAX,
     .help = "paths (entropy values) per connection"},
    {.name = "entropy", .type = CFG_ENUM, .off = offsetof(smpt_keys, out), .def = "hash",
     .choices = out_names, .help = "hash: a per-path hash each switch hashes again (ECMP on "
                                   "per-path source ports); pathidx: an idealised index each "
                                   "hop divides (no collisions)"},
    {.name = "mss", .type = CFG_SIZE, .off = offsetof(smpt_keys, mss), .def = "4096B",
     .flags = CFG_MIN | CFG_MAX, .min = 64, .max = 65000, .help = "payload per packet"},
    {.name = "header", .type = CFG_SIZE, .off = offsetof(smpt_keys, header), .def = "58B",
     .flags = CFG_MIN | CFG_MAX, .min = 8, .max = 1000,
     .help = "header bytes per packet (RoCEv2's Ethernet+IP+UDP+BTH+ICRC: 58)"},
    {.name = "ack", .type = CFG_SIZE, .off = offsetof(smpt_keys, ack), .def = "64B",
     .flags = CFG_MIN | CFG_MAX, .min = 8, .max = 1000, .help = "bytes of an acknowledgement"},
    {.name = "line_rate", .type = CFG_RATE, .off = offsetof(smpt_keys, line_rate),
     .def = "400Gbps", .flags = CFG_MIN_EXCL, .min = 0,
     .help = "the NIC's rate: the initial window is its BDP"},
    {.name = "rate", .type = CFG_RATE, .off = offsetof(smpt_keys, rate),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,
     .help = "pacing rate (absent: as fast as the window lets)"},
    {.name = "window", .type = CFG_INT, .off = offsetof(smpt_keys, window), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = SMP_WINDOW_MAX,
     .help = "bitmap and sender window in packets, a multiple of 64 (0: one BDP at RTT + RTO)"},
    {.name = "rto", .type = CFG_TIME, .off = offsetof(smpt_keys, rto), .def = "250us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "retransmission timeout"},
    {.name = "avoid_after", .type = CFG_INT, .off = offsetof(smpt_keys, avoid_after), .def = "3",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000,
     .help = "timeouts in a row that avoid a path"},
    {.name = "avoid", .type = CFG_TIME, .off = offsetof(smpt_keys, avoid), .def = "10ms",
     .flags = CFG_MIN, .min = 0, .help = "for how long a path is avoided"},
    {.name = "order_loss", .type = CFG_BOOL, .off = offsetof(smpt_keys, order_loss),
     .def = "false", .help = "also declare loss when a later packet of the same path is acked"},
    {.name = "loss_cut", .type = CFG_BOOL, .off = offsetof(smpt_keys, loss_cut),
     .def = "false", .help = "a retransmission timeout also halves the window"},
    {0},
};

/* The header this transport writes into pkt.h's raw transport header. */
typedef struct smpt_hdr {
    uint64_t psn;               /* DATA: its PSN; ACK: the PSN acknowledged */
    uint64_t cum;               /* ACK: every PSN below received */
    int64_t sent_ps;            /* the data's send time (echoed) */
    uint16_t path;              /* the path the data took (echoed) */
    uint16_t pad_;
    uint32_t bytes;             /* DATA: payload */
} smpt_hdr;

static_assert(sizeof(smpt_hdr) <= sizeof(((pkt *)0)->h.raw), "header fits pkt.h's");

typedef struct smpt_conn {
    conn c;
    sink tx, rx;
    const smpt_keys *k;
    smp_params pr;              /* the network's, with this connection's base RTT */
    smp_qp q;
    smp_rxmap m;
    bool live;                  /* q and m initialised */
    uint64_t size;              /* stream bytes (UINT64_MAX: endless) */
    sim_timer send_t, rto_t;
    int64_t rto_at;             /* the armed RTO deadline, INT64_MAX: none */
    bool pacing;                /* send_t armed */
    uint64_t delivered;         /* stream bytes the receiver holds in order */
    uint64_t retx, timeouts;    /* the QP's counters, kept past stop */
} smpt_conn;

static int smpt_setup(void **tp, const void *bound, const cfg_node *sec, const char *path, err *e)
{
    const smpt_keys *b = bound;
    if (b->window % 64) {
        const cfg_node *w = cfg_get(sec, "window");
        char sub[256];
        snprintf(sub, sizeof sub, "%s.window", path);
        return cfg_err(e, AISIM_EINVAL, w ? w : sec, sub,
                       "expected a multiple of 64 packets (the bitmap's words), found %lld",
                       (long long)b->window);
    }
    smpt_keys *k = xcalloc(1, sizeof *k);
    *k = *b;
    *tp = k;
    return 0;
}

static void smpt_teardown(void *tp) { free(tp); }

static void smpt_framing(const void *tp, uint32_t *payload, uint32_t *header)
{
    const smpt_keys *k = tp;
    *payload = (uint32_t)k->mss;
    *header = (uint32_t)k->header;
}

static uint64_t psns_of(const smpt_conn *d)
{
    uint64_t mss = (uint64_t)d->k->mss;
    return d->size == UINT64_MAX ? UINT64_MAX : (d->size + mss - 1) / mss;
}

static uint32_t psn_bytes(const smpt_conn *d, uint64_t psn)
{
    uint64_t mss = (uint64_t)d->k->mss, left = d->size - psn * mss;
    return (uint32_t)(left < mss ? left : mss);
}

static void arm_rto(smpt_conn *d)
{
    int64_t at = smp_qp_deadline(&d->q);
    if (at == d->rto_at)
        return;
    d->rto_at = at;
    if (at == INT64_MAX)
        sim_timer_disarm(d->c.s, &d->rto_t);
    else
        sim_timer_arm(d->c.s, &d->rto_t, at);
}

/* Sends what the window allows (one packet, then the next at the pacing
 * rate, when paced). */
static void pump(smpt_conn *d)
{
    if (d->pacing || !d->live)
        return;
    sim *s = d->c.s;
    int64_t now = sim_now(s);
    smp_send snd;
    while (smp_qp_can_send(&d->q, d->q.nxt < psns_of(d)) &&
           smp_qp_send(&d->q, now, psn_bytes(d, d->q.nxt), &snd)) {
        pkt *p = pkt_alloc(d->c.pool);
        p->kind = PKT_DATA;
        p->prio = d->c.prio;
        p->flow_id = d->c.id;
        p->flags = PKT_F_ECT | snd.flags;
        p->seq = snd.psn * (uint64_t)d->k->mss;
        p->size_bytes = snd.bytes + (uint32_t)d->k->header;
        p->sent_ps = now;
        p->dst_node = d->c.dst_node;
        p->entropy = snd.entropy;
        smpt_hdr h = {.psn = snd.psn, .sent_ps = now, .path = (uint16_t)snd.path,
                      .bytes = snd.bytes};
        memcpy(p->h.raw, &h, sizeof h);
        d->c.src_fwd->recv(d->c.src_fwd, p);
        if (d->k->rate) {
            d->pacing = true;
            sim_timer_arm(s, &d->send_t, now + units_tx_time_ps(p->size_bytes, d->k->rate));
            break;
        }
    }
    arm_rto(d);
}

static void on_send(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    smpt_conn *d = obj;
    d->pacing = false;
    pump(d);
}

static void on_rto(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    smpt_conn *d = obj;
    d->rto_at = INT64_MAX;
    smp_qp_timer(&d->q, sim_now(s));
    d->c.reroute(&d->c);        /* the acknowledgements' route of now */
    pump(d);
}

/* Acknowledgements. */
static void tx_recv(sink *self, pkt *p)
{
    smpt_conn *d = container_of(self, smpt_conn, tx);
    smpt_hdr h;
    memcpy(&h, p->h.raw, sizeof h);
    bool ce = p->flags & PKT_F_ECE;
    pkt_free(d->c.pool, p);
    if (!d->live)
        return;
    smp_ack a = {.psn = h.psn, .cum = h.cum, .path = h.path, .sent_ps = h.sent_ps, .ce = ce};
    smp_qp_ack(&d->q, sim_now(d->c.s), &a);
    pump(d);
}

/* Data: placed by PSN, acknowledged at once. */
static void rx_recv(sink *self, pkt *p)
{
    smpt_conn *d = container_of(self, smpt_conn, rx);
    smpt_hdr h;
    memcpy(&h, p->h.raw, sizeof h);
    if (!d->live || smp_rxmap_recv(&d->m, h.psn) == SMP_RX_BEYOND || !d->c.rev) {
        pkt_free(d->c.pool, p);
        return;
    }
    bool ce = p->flags & PKT_F_CE;
    /* The data packet becomes its acknowledgement. */
    h.cum = d->m.base;
    *p = (pkt){.kind = PKT_ACK, .prio = d->c.prio, .flow_id = d->c.id,
               .flags = ce ? PKT_F_ECE : 0, .size_bytes = (uint32_t)d->k->ack,
               .seq = d->m.base * (uint64_t)d->k->mss, .sent_ps = sim_now(d->c.s)};
    memcpy(p->h.raw, &h, sizeof h);
    uint64_t got = d->m.base * (uint64_t)d->k->mss;
    got = got < d->size ? got : d->size;
    pkt_send(p, d->c.rev);
    if (got > d->delivered) {
        d->delivered = got;
        if (got >= d->c.mark)
            d->c.delivered(&d->c, got);
    }
}

static void smpt_conn_init(conn *c, sink **at_src, sink **at_dst)
{
    smpt_conn *d = (smpt_conn *)c;
    d->tx = (sink){tx_recv, "stellar_dgram.tx"};
    d->rx = (sink){rx_recv, "stellar_dgram.rx"};
    d->k = c->tp;
    d->rto_at = INT64_MAX;
    sim_timer_init(&d->send_t, on_send, d, 0);
    sim_timer_init(&d->rto_t, on_rto, d, 0);
    *at_src = &d->tx;
    *at_dst = &d->rx;
}

static void smpt_start(conn *c, int64_t at_ps, uint64_t bytes, int64_t base_rtt_ps)
{
    smpt_conn *d = (smpt_conn *)c;
    const smpt_keys *k = d->k;
    smp_params_default(&d->pr);
    d->pr.paths = (uint32_t)k->paths;
    d->pr.out = k->out ? SMP_OUT_HASH : SMP_OUT_PATHIDX;
    d->pr.mss_bytes = (uint32_t)k->mss;
    d->pr.line_rate_bps = k->line_rate;
    if (base_rtt_ps > 0)
        d->pr.base_rtt_ps = base_rtt_ps;
    d->pr.window = (uint32_t)k->window;
    d->pr.rto_ps = k->rto;
    d->pr.avoid_after = (uint32_t)k->avoid_after;
    d->pr.avoid_ps = k->avoid;
    d->pr.order_loss = k->order_loss;
    d->pr.loss_cut = k->loss_cut;
    smp_qp_init(&d->q, &d->pr, smp_path_find(algo_names[k->algo]), c->path_key,
                rng_next(&c->spray_rng), c->id);
    smp_rxmap_init(&d->m, smp_params_window(&d->pr));
    d->live = true;
    d->size = bytes;
    d->pacing = true;           /* until at_ps */
    sim_timer_arm(c->s, &d->send_t, at_ps);
}

static void smpt_append(conn *c, uint64_t bytes)
{
    smpt_conn *d = (smpt_conn *)c;
    d->size += bytes;
    pump(d);
}

static void smpt_paths_changed(conn *c)
{
    (void)c;                    /* data is forwarded by entropy; ACKs read c->rev */
}

static void smpt_stop(conn *c)
{
    smpt_conn *d = (smpt_conn *)c;
    sim_timer_disarm(c->s, &d->send_t);
    sim_timer_disarm(c->s, &d->rto_t);
    if (d->live) {
        d->retx = d->q.retx;
        d->timeouts = d->q.timeouts;
        smp_qp_fini(&d->q);
        smp_rxmap_fini(&d->m);
    }
    d->live = false;
}

static void smpt_stats(const conn *c, conn_stats *st)
{
    const smpt_conn *d = (const smpt_conn *)c;
    st->delivered = d->delivered;
    st->retransmits = d->live ? d->q.retx : d->retx;
    st->timeouts = d->live ? d->q.timeouts : d->timeouts;
}

static bool smpt_idle(const conn *c)
{
    const smpt_conn *d = (const smpt_conn *)c;
    return !d->live || (d->size != UINT64_MAX && d->q.una >= psns_of(d));
}

/* UDP from a source port that carries the entropy, to 4791 (the RoCEv2
 * port, though no BTH follows). */
static void smpt_pcap(const conn *c, const pkt *p, pcap_l4 *h)
{
    (void)c;
    h->proto = 17;
    h->sport = (uint16_t)(49152 + p->entropy % 16384);
    h->dport = 4791;
}

const transport_ops stellar_dgram_transport = {
    .name = "stellar_dgram",
    .summary = "Stellar's multi-path core over acknowledged datagrams (not RDMA)",
    .conn_size = sizeof(smpt_conn),
    .keys = smpt_schema,
    .cfg_size = sizeof(smpt_keys),
    .setup = smpt_setup,
    .teardown = smpt_teardown,
    .framing = smpt_framing,
    .conn_init = smpt_conn_init,
    .start = smpt_start,
    .append = smpt_append,
    .paths_changed = smpt_paths_changed,
    .stop = smpt_stop,
    .stats = smpt_stats,
    .idle = smpt_idle,
    .pcap = smpt_pcap,
};
