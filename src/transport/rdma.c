/*
 * rdma.c - RoCEv2 reliable-connection queue pairs (rdma.h, docs/rdma.md):
 * segmentation into PSN-numbered packets, coalesced ACKs, NACKs, CNPs,
 * go-back-N and selective repeat, the retransmission timeout, READ
 * requests, and the transport's ops table.  The keys and fabric checks are
 * in rdma_config.c, the NIC's scheduling in rdma_nic.c, the capture format
 * in rdma_pcap.c, the tables in rdma_report.c, HPCC's telemetry in
 * rdma_telemetry.c, each congestion control in its own rdma_cc_*.c.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/fwd.h"
#include "aisim/log.h"
#include "aisim/rdma.h"
#include "aisim/units.h"
#include "rdma_int.h"

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

/* The `window: bdp` window of a QP (rdma.h), in bytes, at least 1 (as the
 * fork's GetWin): the largest base RTT of the QPs started so far (the
 * fork's GLOBAL_T, maxBdp over every host pair) times the line rate, or
 * window_bytes if given; times rate / line rate with var_window. */
uint64_t rdma_window_bytes(const rdma_qp *qp)
{
    int64_t r = qp->k->var_window ? qp->rate_bps : qp->line_bps;
    uint64_t w;
    if (qp->k->window_bytes) {  /* given at line rate */
        w = (uint64_t)((unsigned __int128)(uint64_t)qp->k->window_bytes * (uint64_t)r /
                       (uint64_t)qp->line_bps);
    } else {
        int64_t T = qp->tp->max_rtt_ps > qp->base_rtt_ps ? qp->tp->max_rtt_ps : qp->base_rtt_ps;
        w = (uint64_t)((unsigned __int128)r * (uint64_t)T / (8 * (uint64_t)PS_PER_S));
    }
    return w ? w : 1;
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
    conn_spray_stamp(c, p);
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
    if (qp->k->window && !qp->wnd_bytes && flight * qp->payload >= rdma_window_bytes(qp))
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
    const rdma_rec_ops *rec = qp->cc->rec;
    uint64_t psn;
    if (rec)
        psn = rec->ready(qp, qp->ccs, send_limit(qp)) ? 0 : UINT64_MAX;
    else
        psn = next_psn(qp, &hole);
    if (psn == UINT64_MAX)
        return 0;
    int64_t now = sim_now(qp->c.s);
    if (qp->next_tx_ps > now) {
        *at = qp->next_tx_ps;
        return -1;
    }
    if (rec) {
        psn = rec->take(qp, qp->ccs, send_limit(qp));
        hole = false;
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
    else if (!rec || psn >= qp->snd_nxt)
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
    if (!rec && !sim_timer_armed(qp->c.s, &qp->rto)) {
        qp->rto_due = now + qp->k->rto_ps;
        sim_timer_arm(qp->c.s, &qp->rto, qp->rto_due);
    }
    *res = p;
    return 1;
}

void rdma_qp_wake(rdma_qp *qp)
{
    if (qp->aborted)
        return;
    for (uint8_t j = 0; j < qp->nports; j++)
        rdma_nic_activate(qp->ports[j], qp);
}

static void unbind_ports(rdma_qp *qp)
{
    for (uint8_t j = 0; j < qp->nports; j++)
        rdma_nic_remove(qp->ports[j], qp);
}

void rdma_qp_set_weight(rdma_qp *qp, uint32_t w)
{
    qp->weight = w ? w : 1;
    qp->turn = qp->weight;
}

void rdma_qp_set_rate(rdma_qp *qp, int64_t rate_bps) { qp->rate_bps = rate_bps; }
void rdma_qp_set_window(rdma_qp *qp, uint64_t wnd_bytes) { qp->wnd_bytes = wnd_bytes; }
void rdma_qp_set_timeouts(rdma_qp *qp, uint64_t n) { qp->st_timeouts = n; }

void rdma_qp_set_path(rdma_qp *qp, void (*path)(rdma_qp *qp, pkt *p), void *ctx)
{
    qp->path = path ? path : rdma_path_default;
    qp->path_ctx = ctx;
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
    if (qp->cc->rec)
        qp->cc->rec->ack(qp, qp->ccs, p);
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
        if (qp->cc->rec) {
            /* the scoreboard saw it */
        } else if (qp->k->recovery == RDMA_GO_BACK_N) {
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
        unbind_ports(qp);
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

/* The index of port q among the ports of the QP's source host (its NIC's
 * ring slot), or -1. */
static int host_slot(const rdma_qp *qp, const port *q)
{
    topo *t = qp->tp->t;
    if (!t)
        return 0;
    int node = topo_host_node(t, qp->c.src);
    for (size_t i = 0, n = topo_node_degree(t, node); i < n; i++)
        if (topo_node_port(t, node, i) == q)
            return (int)i;
    return -1;
}

/* The QP's NIC: the port its route leaves by (unless its CC bound it to
 * its host's ports: rdma_qp_bind_ports). */
static void bind_nic(rdma_qp *qp)
{
    if (qp->ports_bound)
        return;
    port *q = (port *)port_of_sink(qp->c.fwd->hop[0]);
    rdma_nic *nic = rdma_nic_of(qp->tp, q, host_slot(qp, q));
    if (nic == qp->nic)
        return;
    unbind_ports(qp);
    qp->nic = qp->ports[0] = nic;
    qp->nports = 1;
    qp->tx_port = 0;
    qp->line_bps = q->cfg.rate_bps;
}

size_t rdma_qp_host_ports(rdma_qp *qp, port **res, size_t max)
{
    topo *t = qp->tp->t;
    if (!t || !qp->c.fwd)
        return 0;
    const fwd_cand *c;
    uint32_t n = topo_next_hops(t, topo_host_node(t, qp->c.src), (int)qp->c.dst_node, &c);
    size_t k = 0;
    for (uint32_t i = 0; i < n && k < max; i++) {
        int slot = host_slot(qp, c[i].q);
        if (slot >= 0 && slot < RDMA_NIC_SLOTS)
            res[k++] = c[i].q;
    }
    return k;
}

void rdma_qp_bind_ports(rdma_qp *qp, port *const *q, size_t n)
{
    if (n < 1 || n > RDMA_NIC_SLOTS)
        return;
    unbind_ports(qp);
    qp->line_bps = 0;
    for (size_t j = 0; j < n; j++) {
        qp->ports[j] = rdma_nic_of(qp->tp, q[j], host_slot(qp, q[j]));
        qp->line_bps += q[j]->cfg.rate_bps;
    }
    qp->nic = qp->ports[0];
    qp->nports = (uint8_t)n;
    qp->tx_port = 0;
    qp->ports_bound = true;
}

/* True if the QP's route stays inside a server (two GPUs over NVLink). */
static bool inside_server(const rdma_qp *qp)
{
    size_t n;
    const int32_t *path = topo_route_path(qp->tp->t, qp->c.fwd, &n);
    for (size_t i = 0; i < n; i++)
        if (topo_link_is_intra_host(qp->tp->t, path[i] / 2))
            return true;
    return false;
}

static void on_launch(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    rdma_qp *qp = obj;
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
    /* Two GPUs of one server: the QP stands for NCCL's NVLink peer-to-peer
     * path, sent by the GPU's NVLink port at its rate, without congestion
     * control (NVLink neither marks nor carries CNPs). */
    if (qp->tp->t && qp->c.fwd && inside_server(qp))
        qp->cc = &rdma_cc_none;
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

/* Routing moved the QP (or joined its ends again): it may leave by another
 * NIC port, and a QP that left its ring while cut off sends again. */
static void rdma_paths_changed(conn *c)
{
    rdma_qp *qp = (rdma_qp *)c;
    if (!qp->nic || !c->fwd)
        return;
    bind_nic(qp);
    if (qp->launched)
        rdma_qp_wake(qp);
}

static void rdma_stop(conn *c)
{
    rdma_qp *qp = (rdma_qp *)c;
    sim_timer_disarm(c->s, &qp->rto);
    unbind_ports(qp);
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
    .spray_check = rdma_spray_check,
};
