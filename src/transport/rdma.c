/*
 * rdma.c - RoCEv2 reliable-connection queue pairs (rdma.h, docs/rdma.md):
 * segmentation into PSN-numbered packets, coalesced ACKs, NACKs, CNPs,
 * go-back-N and selective repeat, the retransmission timeout, READ
 * requests, and the transport's scenario keys.  The NIC's scheduling is in
 * rdma_nic.c, the tables in rdma_report.c, each congestion control in its
 * own rdma_cc_*.c.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/log.h"
#include "aisim/rdma.h"
#include "aisim/units.h"
#include "rdma_int.h"

static const char *const recoveries[] = {"go_back_n", "selective_repeat", NULL};
static const char *const verbs[] = {"write", "send", "read", NULL};
static const char *const cc_names[] = {"none", "dcqcn", "hpcc", "timely", "dctcp", NULL};
static const rdma_cc_ops *const ccs[] = {&rdma_cc_none, &rdma_cc_dcqcn, &rdma_cc_hpcc,
                                         &rdma_cc_timely, &rdma_cc_dctcp};

#define K(f) offsetof(rdma_keys, f)
static const cfg_key rdma_schema[] = {
    {.name = "mtu", .type = CFG_SIZE, .off = K(mtu), .def = "1062B", .flags = CFG_MAX,
     .max = 65000, .help = "bytes per packet on the wire, RoCEv2 headers (62 B) included"},
    {.name = "recovery", .type = CFG_ENUM, .off = K(recovery), .choices = recoveries,
     .def = "go_back_n", .help = "loss recovery: go_back_n or selective_repeat (IRN)"},
    {.name = "verb", .type = CFG_ENUM, .off = K(verb), .choices = verbs, .def = "write",
     .help = "messages as RDMA WRITE, SEND, or READ (request, then response stream)"},
    {.name = "ack_interval", .type = CFG_INT, .off = K(ack_interval), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1 << 20,
     .help = "packets per ACK (and one at each message's end)"},
    {.name = "rto", .type = CFG_TIME, .off = K(rto_ps), .def = "320us", .flags = CFG_MIN_EXCL,
     .min = 0, .help = "retransmission timeout"},
    {.name = "max_timeouts", .type = CFG_INT, .off = K(max_rto), .def = "16",
     .flags = CFG_MIN, .min = 1, .help = "timeouts in a row before a QP gives up"},
    {.name = "max_outstanding", .type = CFG_INT, .off = K(max_outstanding), .def = "0",
     .flags = CFG_MIN, .min = 0, .help = "packets in flight per QP (0: no limit)"},
    {.name = "nic_pps", .type = CFG_INT, .off = K(nic_pps), .def = "0", .flags = CFG_MIN,
     .min = 0, .help = "NIC packet-rate cap, packets/s (0: none)"},
    {.name = "nic_rate", .type = CFG_RATE, .off = K(nic_rate_bps), .def = "0bps",
     .flags = CFG_MIN, .min = 0,
     .help = "NIC processing rate, below the line rate (0: none)"},
    {.name = "lossless", .type = CFG_BOOL, .off = K(lossless), .def = "false",
     .help = "RDMA runs on a PFC priority: every host link must run PFC"},
    {.name = "cc", .type = CFG_ENUM, .off = K(cc), .choices = cc_names, .def = "dcqcn",
     .help = "congestion control: none, dcqcn, hpcc, timely, dctcp"},
    {.name = "cnp_interval", .type = CFG_TIME, .off = K(cnp_interval_ps), .def = "4us",
     .flags = CFG_MIN, .min = 0, .help = "at most one CNP per QP per interval"},
    {.name = "min_rate", .type = CFG_RATE, .off = K(min_rate_bps), .def = "100Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "lowest sending rate of a QP"},
    {.name = "sample_interval", .type = CFG_TIME, .off = K(sample_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "rdma_rate.csv period (0: off)"},
    {.name = "sample_qps", .type = CFG_INT, .off = K(sample_qps), .def = "8",
     .flags = CFG_MIN, .min = 0, .help = "QPs sampled (the first opened)"},
    {.name = "dcqcn_g", .type = CFG_FLOAT, .off = K(dcqcn_g), .def = "0.00390625",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "DCQCN: alpha's EWMA gain"},
    {.name = "dcqcn_alpha_interval", .type = CFG_TIME, .off = K(dcqcn_alpha_interval_ps),
     .def = "1us", .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: alpha update period"},
    {.name = "dcqcn_timer", .type = CFG_TIME, .off = K(dcqcn_timer_ps), .def = "900us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: rate increase timer"},
    {.name = "dcqcn_byte_counter", .type = CFG_SIZE, .off = K(dcqcn_byte_counter),
     .def = "10MB", .flags = CFG_MIN, .min = 0, .help = "DCQCN: bytes per increase (0: off)"},
    {.name = "dcqcn_rai", .type = CFG_RATE, .off = K(dcqcn_rai_bps), .def = "50Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: additive increase"},
    {.name = "dcqcn_rhai", .type = CFG_RATE, .off = K(dcqcn_rhai_bps), .def = "100Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: hyper increase"},
    {.name = "dcqcn_fast_recovery", .type = CFG_INT, .off = K(dcqcn_fast_recovery), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 100,
     .help = "DCQCN: fast recovery steps (F)"},
    {.name = "dcqcn_rate_on_cnp", .type = CFG_FLOAT, .off = K(dcqcn_rate_on_cnp), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "DCQCN: fraction of the line rate a QP starts at"},
    {.name = "hpcc_eta", .type = CFG_FLOAT, .off = K(hpcc_eta), .def = "0.95",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "HPCC: target utilisation"},
    {.name = "hpcc_max_stage", .type = CFG_INT, .off = K(hpcc_max_stage), .def = "0",
     .flags = CFG_MIN, .min = 0, .help = "HPCC: additive steps before a multiplicative one"},
    {.name = "hpcc_wai", .type = CFG_SIZE, .off = K(hpcc_wai_bytes), .def = "0B",
     .flags = CFG_MIN, .min = 0, .help = "HPCC: additive window step (0: dcqcn_rai x T, the fork's RATE_AI)"},
    {.name = "timely_tlow", .type = CFG_TIME, .off = K(timely_tlow_ps), .def = "50us",
     .flags = CFG_MIN, .min = 0, .help = "TIMELY: below this RTT, additive increase"},
    {.name = "timely_thigh", .type = CFG_TIME, .off = K(timely_thigh_ps), .def = "500us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "TIMELY: above this RTT, decrease"},
    {.name = "timely_min_rtt", .type = CFG_TIME, .off = K(timely_min_rtt_ps), .def = "20us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "TIMELY: gradient normaliser"},
    {.name = "timely_hai_n", .type = CFG_INT, .off = K(timely_hai_n), .def = "5",
     .flags = CFG_MIN, .min = 1, .help = "TIMELY: negative gradients before hyper increase"},
    {.name = "timely_alpha", .type = CFG_FLOAT, .off = K(timely_alpha), .def = "0.875",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = "TIMELY: RTT-difference EWMA"},
    {.name = "timely_beta", .type = CFG_FLOAT, .off = K(timely_beta), .def = "0.8",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "TIMELY: decrease factor"},
    {.name = "dctcp_rai", .type = CFG_RATE, .off = K(dctcp_rai_bps), .def = "1000Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCTCP over RoCE: additive increase"},
    {0},
};

/* ---- setup ------------------------------------------------------------- */

static int rdma_setup(void **tpp, const void *bound, const cfg_node *sec, const char *path,
                      err *e)
{
    rdma_tp *tp = xcalloc(1, sizeof *tp);
    *tpp = tp;
    tp->k = *(const rdma_keys *)bound;
    char kp[600];
    if (tp->k.mtu <= RDMA_HDR_BYTES)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "mtu"), cfg_path(kp, sizeof kp, path, "mtu"),
                       "expected an MTU above the RoCEv2 headers (%d bytes: Ethernet 18, IPv4 "
                       "20, UDP 8, BTH 12, ICRC 4), found %lld bytes", RDMA_HDR_BYTES,
                       (long long)tp->k.mtu);
    if (tp->k.timely_tlow_ps >= tp->k.timely_thigh_ps)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "timely_tlow"),
                       cfg_path(kp, sizeof kp, path, "timely_tlow"),
                       "expected timely_tlow below timely_thigh (%lld ps), found %lld ps",
                       (long long)tp->k.timely_thigh_ps, (long long)tp->k.timely_tlow_ps);
    if (tp->k.dcqcn_rai_bps > tp->k.dcqcn_rhai_bps)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "dcqcn_rai"),
                       cfg_path(kp, sizeof kp, path, "dcqcn_rai"),
                       "expected dcqcn_rai at most dcqcn_rhai (%lld bps), found %lld bps",
                       (long long)tp->k.dcqcn_rhai_bps, (long long)tp->k.dcqcn_rai_bps);
    tp->cc = ccs[tp->k.cc];
    return 0;
}

static void rdma_teardown(void *p)
{
    rdma_tp *tp = p;
    rdma_report_fini(tp);
    rdma_nic_free_all(tp);
    rdma_int_fini(tp);
    free(tp);
}

static void rdma_framing(const void *p, uint32_t *payload, uint32_t *header)
{
    const rdma_tp *tp = p;
    *payload = (uint32_t)(tp->k.mtu - RDMA_HDR_BYTES);
    *header = RDMA_HDR_BYTES;
}

/* ---- messages and PSNs ------------------------------------------------- */

static uint64_t msg_pkts(const rdma_qp *qp, uint64_t bytes)
{
    if (bytes == UINT64_MAX)
        return UINT64_MAX / 4;
    return bytes ? (bytes + qp->payload - 1) / qp->payload : 1;
}

/* The message holding psn (which is below psn_end). */
static size_t msg_at(const rdma_qp *qp, uint64_t psn, size_t from)
{
    size_t lo = from, hi = qp->mn;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (qp->m[mid].first_psn <= psn)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Packet psn: its first byte, payload, and whether it opens / ends its message. */
static void psn_info(const rdma_qp *qp, uint64_t psn, uint64_t *seq, uint32_t *len,
                     bool *first, bool *last)
{
    const rdma_msg *m = &qp->m[msg_at(qp, psn, qp->mh)];
    uint64_t off = psn - m->first_psn;
    *seq = m->start + off * qp->payload;
    uint64_t left = m->end - *seq;
    *len = (uint32_t)(left < qp->payload ? left : qp->payload);
    *first = off == 0;
    *last = m->end - *seq <= qp->payload;
}

/* Bytes of the stream before PSN psn (>= the oldest unacked message's). */
static uint64_t bytes_before(const rdma_qp *qp, uint64_t psn)
{
    if (psn >= qp->psn_end)
        return qp->size;
    const rdma_msg *m = &qp->m[msg_at(qp, psn, qp->mh)];
    uint64_t b = m->start + (psn - m->first_psn) * qp->payload;
    return b < m->end ? b : m->end;
}

static void send_read_request(rdma_qp *qp, size_t i);

static void add_msg(rdma_qp *qp, uint64_t bytes)
{
    if (qp->mn == qp->mcap) {
        if (qp->mh > qp->mcap / 2) {    /* drop the acked ones */
            memmove(qp->m, qp->m + qp->mh, (qp->mn - qp->mh) * sizeof *qp->m);
            qp->mn -= qp->mh;
            qp->rdy = qp->rdy > qp->mh ? qp->rdy - qp->mh : 0;
            qp->mh = 0;
        } else {
            qp->mcap = qp->mcap ? 2 * qp->mcap : 4;
            qp->m = xrealloc(qp->m, qp->mcap * sizeof *qp->m);
        }
    }
    size_t i = qp->mn++;
    uint64_t end = bytes == UINT64_MAX ? UINT64_MAX : qp->size + bytes;
    qp->m[i] = (rdma_msg){.first_psn = qp->psn_end, .start = qp->size, .end = end,
                          .ready = qp->k->verb != RDMA_READ, .req_ps = -1};
    qp->psn_end += msg_pkts(qp, bytes);
    qp->size = end;
    if (!qp->m[i].ready)
        send_read_request(qp, i);
}

/* The first PSN the sender may not send yet: a READ whose request has
 * not arrived, or the stream's end.  Requests arrive in order, mostly: the
 * first message not known ready (rdy) only moves forward. */
static uint64_t send_limit(rdma_qp *qp)
{
    if (qp->k->verb != RDMA_READ)
        return qp->psn_end;
    if (qp->rdy < qp->mh)
        qp->rdy = qp->mh;
    while (qp->rdy < qp->mn && qp->m[qp->rdy].ready)
        qp->rdy++;
    return qp->rdy < qp->mn ? qp->m[qp->rdy].first_psn : qp->psn_end;
}

/* ---- packets ----------------------------------------------------------- */

static pkt *new_pkt(rdma_qp *qp, uint8_t kind, uint8_t op, uint32_t size)
{
    pkt *p = pkt_alloc(qp->c.pool);
    p->kind = kind;
    p->prio = qp->c.prio;
    p->flow_id = qp->c.id;
    p->size_bytes = size;
    p->sent_ps = sim_now(qp->c.s);
    p->h.rdma.op = op;
    p->flags = PKT_F_ECT;       /* every RoCEv2 packet: RED marks, never drops it */
    return p;
}

/* A control packet back to the requester (ACK, NACK, CNP) on the reverse
 * route, queued at the responder's NIC port ahead of its pulled data. */
static void send_back(rdma_qp *qp, pkt *p)
{
    if (!qp->c.rev) {
        rdma_int_free(qp->tp, p);
        pkt_free(qp->c.pool, p);
        return;
    }
    pkt_send(p, qp->c.rev);
}

static void send_read_request(rdma_qp *qp, size_t i)
{
    if (!qp->launched || !qp->c.rev)
        return;                 /* not launched yet: on_launch sends it */
    qp->m[i].req_ps = sim_now(qp->c.s);
    pkt *p = new_pkt(qp, PKT_ACK, RDMA_OP_READ_REQ, RDMA_HDR_BYTES + 16);
    p->seq = qp->m[i].first_psn;
    pkt_send(p, qp->c.rev);
}

void rdma_path_default(rdma_qp *qp, pkt *p)
{
    conn *c = &qp->c;
    if (c->spray == CONN_PATH_FIXED) {
        p->rt = c->fwd;
        p->hop = 1;             /* hop 0 is the NIC port itself */
        return;
    }
    p->rt = NULL;
    p->dst_node = c->dst_node;
    if (c->spray == CONN_SPRAY_RANDOM) {
        p->entropy = (uint32_t)rng_next(&c->spray_rng);
    } else {
        p->entropy = c->spray_next++;
        p->flags |= PKT_F_PATHIDX;
    }
}

/* The PSN to send next, or UINT64_MAX; *hole says it is one of selective
 * repeat's holes. */
static uint64_t next_psn(rdma_qp *qp, bool *hole)
{
    *hole = false;
    if (qp->recovering) {       /* selective repeat: the holes first */
        while (qp->rtx_next < qp->rtx_end && rdma_bits_has(&qp->sacked, qp->rtx_next))
            qp->rtx_next++;
        if (qp->rtx_next < qp->rtx_end) {
            *hole = true;
            return qp->rtx_next;
        }
    }
    if (qp->snd_nxt >= qp->psn_end || qp->snd_nxt >= send_limit(qp))
        return UINT64_MAX;
    uint64_t flight = qp->snd_nxt - qp->snd_una;
    if (qp->k->max_outstanding && flight >= (uint64_t)qp->k->max_outstanding)
        return UINT64_MAX;
    if (qp->wnd_bytes && flight * qp->payload >= qp->wnd_bytes)
        return UINT64_MAX;
    /* selective repeat: a PSN the receiver already holds is skipped */
    while (qp->snd_nxt < qp->snd_max && rdma_bits_has(&qp->sacked, qp->snd_nxt))
        qp->snd_nxt++;
    return qp->snd_nxt < qp->psn_end ? qp->snd_nxt : UINT64_MAX;
}

int rdma_qp_next(rdma_qp *qp, pkt **res, int64_t *at)
{
    if (qp->aborted || !qp->c.fwd)
        return 0;
    bool hole;
    uint64_t psn = next_psn(qp, &hole);
    if (psn == UINT64_MAX)
        return 0;
    int64_t now = sim_now(qp->c.s);
    if (qp->next_tx_ps > now) {
        *at = qp->next_tx_ps;
        return -1;
    }
    uint64_t seq;
    uint32_t len;
    bool first, last;
    psn_info(qp, psn, &seq, &len, &first, &last);
    pkt *p = new_pkt(qp, PKT_DATA, RDMA_OP_DATA, len + RDMA_HDR_BYTES);
    p->seq = psn;
    p->h.rdma.data_bytes = len;
    p->h.rdma.last = last;
    p->h.rdma.aux = first;
    p->h.rdma.ts_ps = now;
    if (qp->tp->cc == &rdma_cc_hpcc)
        rdma_int_attach(qp->tp, p);
    qp->path(qp, p);
    if (psn < qp->snd_max)
        qp->st_rtx++;
    if (hole)
        qp->rtx_next++;
    else
        qp->snd_nxt = psn + 1;
    if (psn + 1 > qp->snd_max)
        qp->snd_max = psn + 1;
    if (!qp->st_pkts++)
        qp->st_first_ps = now;
    if (p->size_bytes != qp->gap_bytes || qp->rate_bps != qp->gap_rate) {
        qp->gap_bytes = p->size_bytes;      /* a 128-bit division: cached */
        qp->gap_rate = qp->rate_bps;
        qp->gap_ps = units_tx_time_ps(p->size_bytes, qp->rate_bps);
    }
    qp->next_tx_ps = now + qp->gap_ps;
    qp->cc->on_send(qp, qp->ccs, p);
    if (!sim_timer_armed(qp->c.s, &qp->rto)) {
        qp->rto_due = now + qp->k->rto_ps;
        sim_timer_arm(qp->c.s, &qp->rto, qp->rto_due);
    }
    *res = p;
    return 1;
}

void rdma_qp_wake(rdma_qp *qp)
{
    if (qp->nic && !qp->aborted)
        rdma_nic_activate(qp->nic, qp);
}

void rdma_qp_set_weight(rdma_qp *qp, uint32_t w)
{
    qp->weight = w ? w : 1;
    qp->turn = qp->weight;
}

/* ---- the responder: data in, ACK / NACK / CNP out ---------------------- */

static void send_ack(rdma_qp *qp, uint8_t op, uint32_t sack_off, pkt *data)
{
    pkt *a = new_pkt(qp, PKT_ACK, op, op == RDMA_OP_CNP ? RDMA_CNP_BYTES : RDMA_ACK_BYTES);
    a->seq = qp->rcv_nxt;
    a->h.rdma.sack_off = sack_off;
    if (data) {
        a->h.rdma.ts_ps = data->h.rdma.ts_ps;       /* RTT (TIMELY), INT (HPCC) */
        a->h.rdma.int_slot = data->h.rdma.int_slot;
        data->h.rdma.int_slot = 0;
        a->flags |= data->flags & PKT_F_CE ? PKT_F_ECE : 0;
    }
    if (op == RDMA_OP_ACK || op == RDMA_OP_NACK)
        qp->since_ack = 0;
    send_back(qp, a);
}

static void maybe_cnp(rdma_qp *qp, const pkt *p)
{
    if (!(p->flags & PKT_F_CE) || !qp->tp->cc->on_cnp)
        return;
    int64_t now = sim_now(qp->c.s);
    if (qp->last_cnp_ps >= 0 && now - qp->last_cnp_ps < qp->k->cnp_interval_ps)
        return;
    if (qp->last_cnp_ps >= 0 && now - qp->last_cnp_ps < qp->cnp_min_gap_ps)
        qp->cnp_min_gap_ps = now - qp->last_cnp_ps;
    qp->last_cnp_ps = now;
    qp->st_cnp_sent++;
    send_ack(qp, RDMA_OP_CNP, 0, NULL);
}

static void deliver(rdma_qp *qp)
{
    qp->delivered = bytes_before(qp, qp->rcv_nxt);
    if (qp->delivered >= qp->c.mark)
        qp->c.delivered(&qp->c, qp->delivered);
}

static void rx_recv(sink *self, pkt *p)
{
    rdma_qp *qp = container_of(self, rdma_qp, rx);
    uint64_t psn = p->seq;
    if (p->h.rdma.op != RDMA_OP_DATA || psn >= qp->psn_end) {
        rdma_int_free(qp->tp, p);
        pkt_free(qp->c.pool, p);
        return;
    }
    maybe_cnp(qp, p);
    bool sr = qp->k->recovery == RDMA_SELECTIVE;
    if (psn == qp->rcv_nxt) {
        qp->rcv_nxt++;
        bool jumped = false;
        while (sr && rdma_bits_take(&qp->ooo, qp->rcv_nxt)) {
            qp->rcv_nxt++;
            jumped = true;
        }
        qp->nack_psn = 0;
        deliver(qp);
        if (++qp->since_ack >= qp->k->ack_interval || p->h.rdma.last || jumped ||
            qp->rcv_nxt >= qp->psn_end || (p->flags & PKT_F_CE && qp->tp->cc == &rdma_cc_dctcp))
            send_ack(qp, RDMA_OP_ACK, 0, p);
    } else if (psn > qp->rcv_nxt) {
        if (sr) {
            rdma_bits_set(&qp->ooo, psn);
            send_ack(qp, RDMA_OP_NACK, (uint32_t)(psn - qp->rcv_nxt), p);
        } else {
            qp->st_ooo_drops++;
            if (qp->nack_psn != qp->rcv_nxt + 1) {
                qp->nack_psn = qp->rcv_nxt + 1;
                send_ack(qp, RDMA_OP_NACK, 0, p);
            }
        }
    } else {
        send_ack(qp, RDMA_OP_ACK, 0, p);    /* a duplicate: the sender may be stuck */
    }
    rdma_int_free(qp->tp, p);
    pkt_free(qp->c.pool, p);
}

/* ---- the requester: ACK / NACK / CNP in -------------------------------- */

/* Progress restarts the timeout.  Lazily: the due time moves, the timer
 * stays where it is and, when it fires early, moves itself to the due time
 * (one event per timeout period instead of a reschedule per ACK). */
static void rearm_rto(rdma_qp *qp)
{
    qp->rto_due = sim_now(qp->c.s) + qp->k->rto_ps;
}

static void on_ack(rdma_qp *qp, pkt *p)
{
    uint64_t cum = p->seq, newly = 0;
    if (cum > qp->snd_max)
        cum = qp->snd_max;
    if (cum > qp->snd_una) {
        newly = bytes_before(qp, cum) - bytes_before(qp, qp->snd_una);
        qp->snd_una = cum;
        qp->st_bytes_acked += newly;
        qp->rtos_in_row = 0;
        while (qp->mh < qp->mn - 1 && qp->m[qp->mh + 1].first_psn <= cum)
            qp->mh++;
        rdma_bits_advance(&qp->sacked, qp->snd_una);
        rearm_rto(qp);
        qp->st_last_ack_ps = sim_now(qp->c.s);
    }
    if (qp->snd_nxt < qp->snd_una)
        qp->snd_nxt = qp->snd_una;
    if (qp->rtx_next < qp->snd_una)
        qp->rtx_next = qp->snd_una;
    if (p->h.rdma.op == RDMA_OP_NACK) {
        qp->st_nacks++;
        if (qp->k->recovery == RDMA_GO_BACK_N) {
            qp->snd_nxt = cum;      /* resend from the gap */
        } else {
            uint64_t s = cum + p->h.rdma.sack_off;
            rdma_bits_set(&qp->sacked, s);
            if (!qp->recovering) {
                qp->recovering = true;
                qp->rtx_next = qp->snd_una;
                qp->recover_to = qp->snd_max;
            }
            if (s > qp->rtx_end)
                qp->rtx_end = s;
        }
        qp->cc->on_nack(qp, qp->ccs);
    }
    if (qp->recovering && qp->snd_una >= qp->recover_to)
        qp->recovering = false;
    qp->cc->on_ack(qp, qp->ccs, p, newly);
    rdma_qp_wake(qp);
}

static void tx_recv(sink *self, pkt *p)
{
    rdma_qp *qp = container_of(self, rdma_qp, tx);
    if (!qp->aborted) {
        switch (p->h.rdma.op) {
        case RDMA_OP_ACK:
        case RDMA_OP_NACK:
            qp->st_acks++;
            on_ack(qp, p);
            break;
        case RDMA_OP_CNP:
            qp->st_cnp_rcvd++;
            if (qp->cc->on_cnp)
                qp->cc->on_cnp(qp, qp->ccs);
            break;
        case RDMA_OP_READ_REQ:
            for (size_t i = qp->mh; i < qp->mn; i++)
                if (qp->m[i].first_psn == p->seq)
                    qp->m[i].ready = 1;
            rdma_qp_wake(qp);
            break;
        default:
            break;
        }
    }
    rdma_int_free(qp->tp, p);
    pkt_free(qp->c.pool, p);
}

/* The retransmission timeout: resend what is unacknowledged (go-back-N
 * from the oldest, selective repeat its holes), and READ requests not
 * answered; after max_timeouts in a row, give up. */
static void on_rto(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    rdma_qp *qp = obj;
    if (qp->rto_due > sim_now(s)) {
        sim_timer_arm(s, &qp->rto, qp->rto_due);
        return;
    }
    bool pending_read = false;
    for (size_t i = qp->mh; i < qp->mn; i++)
        pending_read |= !qp->m[i].ready;
    if (qp->snd_una >= qp->snd_max && !pending_read)
        return;
    qp->st_timeouts++;
    if (++qp->rtos_in_row > qp->k->max_rto) {
        qp->aborted = true;
        rdma_nic_remove(qp->nic, qp);
        qp->c.aborted(&qp->c);
        return;
    }
    qp->c.reroute(&qp->c);
    if (qp->k->recovery == RDMA_GO_BACK_N) {
        qp->snd_nxt = qp->snd_una;
    } else {
        qp->recovering = true;
        qp->rtx_next = qp->snd_una;
        qp->rtx_end = qp->snd_max;
        qp->recover_to = qp->snd_max;
    }
    for (size_t i = qp->mh; i < qp->mn; i++)
        if (!qp->m[i].ready)
            send_read_request(qp, i);
    qp->rto_due = sim_now(qp->c.s) + qp->k->rto_ps;
    sim_timer_arm(qp->c.s, &qp->rto, qp->rto_due);
    rdma_qp_wake(qp);
}

/* ---- the transport interface ------------------------------------------ */

static void rdma_conn_init(conn *c, sink **at_src, sink **at_dst)
{
    rdma_qp *qp = (rdma_qp *)c;
    qp->tp = c->tp;
    qp->k = &qp->tp->k;
    qp->tx = (sink){tx_recv, "rocev2.tx"};
    qp->rx = (sink){rx_recv, "rocev2.rx"};
    qp->path = rdma_path_default;
    qp->payload = (uint32_t)(qp->k->mtu - RDMA_HDR_BYTES);
    qp->last_cnp_ps = -1;
    qp->cnp_min_gap_ps = INT64_MAX;
    qp->st_first_ps = qp->st_last_ack_ps = -1;
    rdma_qp_set_weight(qp, 1);
    sim_timer_init(&qp->rto, on_rto, qp, 0);
    qp->cc = qp->tp->cc;
    qp->ccs = xcalloc(1, qp->cc->state_size ? qp->cc->state_size : 1);
    rdma_report_link(qp->tp, qp);
    *at_src = &qp->tx;
    *at_dst = &qp->rx;
}

/* The QP's NIC: the port its route leaves by. */
static void bind_nic(rdma_qp *qp)
{
    port *q = (port *)port_of_sink(qp->c.fwd->hop[0]);
    rdma_nic *nic = rdma_nic_of(qp->tp, q);
    if (nic == qp->nic)
        return;
    if (qp->nic)
        rdma_nic_remove(qp->nic, qp);
    qp->nic = nic;
    qp->line_bps = q->cfg.rate_bps;
}

/* True if the QP's route leaves its source by a NIC, not over NVLink
 * (two GPUs of one server): RDMA needs NICs at both ends. */
static bool leaves_by_nic(const rdma_qp *qp)
{
    size_t n;
    const int32_t *path = topo_route_path(qp->tp->t, qp->c.fwd, &n);
    for (size_t i = 0; i < n; i++)
        if (topo_link_is_intra_host(qp->tp->t, path[i] / 2))
            return false;
    return true;
}

static void on_launch(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    rdma_qp *qp = obj;
    if (qp->tp->t && qp->c.fwd && !leaves_by_nic(qp)) {
        LOG(LOG_ERROR, "rocev2", "QP %u between hosts %d and %d: its path is inside a "
            "server (NVLink), not between NICs: its messages are aborted", qp->c.id,
            qp->c.src, qp->c.dst);
        qp->aborted = true;
        qp->c.aborted(&qp->c);
        return;
    }
    qp->launched = true;
    for (size_t i = qp->mh; i < qp->mn; i++)
        if (!qp->m[i].ready)
            send_read_request(qp, i);
    rdma_qp_wake(qp);
}

static void rdma_start(conn *c, int64_t at_ps, uint64_t bytes, int64_t base_rtt_ps)
{
    rdma_qp *qp = (rdma_qp *)c;
    qp->base_rtt_ps = base_rtt_ps;
    qp->tp->s = c->s;
    if (base_rtt_ps > qp->tp->max_rtt_ps)
        qp->tp->max_rtt_ps = base_rtt_ps;
    bind_nic(qp);
    qp->rate_bps = qp->line_bps;
    qp->cc->init(qp, qp->ccs);
    add_msg(qp, bytes);
    rdma_report_started(qp->tp, qp);
    sim_schedule(c->s, at_ps, on_launch, qp, 0);
}

static void rdma_append(conn *c, uint64_t bytes)
{
    rdma_qp *qp = (rdma_qp *)c;
    add_msg(qp, bytes);
    rdma_qp_wake(qp);
}

static void rdma_paths_changed(conn *c)
{
    rdma_qp *qp = (rdma_qp *)c;
    if (qp->nic)
        bind_nic(qp);
}

static void rdma_stop(conn *c)
{
    rdma_qp *qp = (rdma_qp *)c;
    sim_timer_disarm(c->s, &qp->rto);
    if (qp->nic)
        rdma_nic_remove(qp->nic, qp);
    qp->cc->stop(qp, qp->ccs);
    rdma_report_unlink(qp->tp, qp);
    free(qp->ccs);
    free(qp->m);
    free(qp->sacked.w);
    free(qp->ooo.w);
    qp->ccs = NULL;
    qp->m = NULL;
    qp->sacked.w = qp->ooo.w = NULL;
}

static bool rdma_idle(const conn *c)
{
    const rdma_qp *qp = (const rdma_qp *)c;
    return qp->aborted || qp->snd_una >= qp->psn_end;
}

static void rdma_stats(const conn *c, conn_stats *st)
{
    const rdma_qp *qp = (const rdma_qp *)c;
    st->delivered = qp->delivered;
    st->retransmits = qp->st_rtx;
    st->timeouts = qp->st_timeouts;
}

static void put24(uint8_t *b, uint64_t v)
{
    b[0] = (uint8_t)(v >> 16);
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)v;
}

/* UDP to 4791 with the BTH (and RETH or AETH): IB opcodes of the RC
 * transport (SEND/WRITE first, middle, last, only; READ request and
 * response; ACKNOWLEDGE; CNP 0x81), destination QP = connection id. */
static void rdma_pcap(const conn *c, const pkt *p, pcap_l4 *h)
{
    const rdma_qp *qp = (const rdma_qp *)c;
    uint8_t op = p->h.rdma.op;
    h->proto = 17;
    h->reverse = op != RDMA_OP_DATA;
    h->sport = (uint16_t)(49152 + (c->path_key >> 7) % 16384);
    h->dport = RDMA_UDP_PORT;
    h->l2_bytes = 18;           /* the Ethernet header and FCS are in the size */
    uint8_t *b = h->extra;
    uint8_t opc = 0x11;         /* ACKNOWLEDGE */
    size_t n = 12;
    if (op == RDMA_OP_DATA) {
        bool first = p->h.rdma.aux & 1, last = p->h.rdma.last;
        static const uint8_t base[] = {0x06, 0x00, 0x0d};    /* WRITE, SEND, READ resp */
        uint8_t o = base[qp->k->verb];
        if (qp->k->verb == RDMA_READ)
            opc = first && last ? 0x10 : first ? 0x0d : last ? 0x0f : 0x0e;
        else
            opc = (uint8_t)(first && last ? o + 4 : first ? o : last ? o + 2 : o + 1);
        if (qp->k->verb == RDMA_WRITE && first)
            n += 16;            /* RETH: address 0, rkey 0, length */
        if (qp->k->verb == RDMA_WRITE && first) {
            uint64_t len = 0;
            for (size_t i = qp->mh; i < qp->mn; i++)
                if (qp->m[i].first_psn == p->seq)
                    len = qp->m[i].end - qp->m[i].start;
            b[24] = (uint8_t)(len >> 24);
            b[25] = (uint8_t)(len >> 16);
            b[26] = (uint8_t)(len >> 8);
            b[27] = (uint8_t)len;
        }
    } else if (op == RDMA_OP_CNP) {
        opc = 0x81;
    } else if (op == RDMA_OP_READ_REQ) {
        opc = 0x0c;
        n += 16;
    } else {
        n += 4;                 /* AETH: syndrome, MSN */
        b[12] = op == RDMA_OP_NACK ? 0x60 : 0x1f;   /* NAK: PSN sequence error; ACK */
    }
    b[0] = opc;
    b[1] = 0x40;                /* migration state; pad 0, version 0 */
    b[2] = b[3] = 0xff;         /* default partition key */
    put24(b + 5, c->id + 1);
    b[8] = op == RDMA_OP_DATA && p->h.rdma.last ? 0x80 : 0;    /* AckReq */
    put24(b + 9, p->seq & 0xffffff);
    h->nextra = (uint8_t)n;
}

/* ---- the fabric: a lossless class needs PFC ---------------------------- */

static int rdma_net_ready(void *p, topo *t, const cfg_node *sec, const char *path, err *e)
{
    rdma_tp *tp = p;
    tp->t = t;
    if (tp->k.lossless) {
        for (size_t l = 0; l < topo_links(t); l++) {
            int a, b;
            topo_link_ends(t, (int)l, &a, &b);
            if (topo_link_is_intra_host(t, (int)l))
                continue;
            for (int d = 0; d < 2; d++)
                if (topo_link_port(t, (int)l, d)->cfg.pfc_xoff_bytes <= 0) {
                    char kp[600];
                    return cfg_err(e, AISIM_EINVAL, cfg_get(sec, "lossless"),
                                   cfg_path(kp, sizeof kp, path, "lossless"),
                                   "expected PFC (topology pfc_xoff > 0) on every link of a "
                                   "lossless RDMA fabric, found none on %s",
                                   topo_link_port(t, (int)l, d)->base.name);
                }
        }
    }
    if (tp->cc == &rdma_cc_dcqcn || tp->cc == &rdma_cc_dctcp) {
        /* DCQCN reacts to RED's marks: Pmax must be in (0, 1] where RED is
         * on; with no marking anywhere it never slows down. */
        bool marks = false;
        for (size_t l = 0; l < topo_links(t); l++)
            for (int d = 0; d < 2; d++) {
                const port *q = topo_link_port(t, (int)l, d);
                marks |= q->cfg.red_min_bytes > 0 || q->cfg.ecn_k_bytes > 0;
                if (q->cfg.red_min_bytes > 0 && !(q->cfg.red_max_p > 0)) {
                    char kp[600];
                    return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "cc"),
                                   cfg_path(kp, sizeof kp, path, "cc"),
                                   "expected RED's red_max_p (Pmax) in (0, 1] for %s's marking, "
                                   "found %g on %s", tp->cc->name, q->cfg.red_max_p,
                                   q->base.name);
                }
            }
        if (!marks)
            LOG(LOG_WARN, "rocev2", "%s: cc %s, but no port marks ECN (topology red_min or "
                "ecn_k): the QPs never slow down", path, tp->cc->name);
    }
    if (tp->cc == &rdma_cc_hpcc)
        return rdma_int_attach_fabric(tp, t);
    return 0;
}

const transport_ops rocev2_transport = {
    .name = "rocev2",
    .summary = "RoCEv2 queue pairs: go-back-N or selective repeat, DCQCN/HPCC/TIMELY/DCTCP",
    .conn_size = sizeof(rdma_qp),
    .keys = rdma_schema,
    .cfg_size = sizeof(rdma_keys),
    .setup = rdma_setup,
    .teardown = rdma_teardown,
    .framing = rdma_framing,
    .conn_init = rdma_conn_init,
    .start = rdma_start,
    .append = rdma_append,
    .paths_changed = rdma_paths_changed,
    .stop = rdma_stop,
    .stats = rdma_stats,
    .idle = rdma_idle,
    .pcap = rdma_pcap,
    .net_ready = rdma_net_ready,
    .report = rdma_report,
};
