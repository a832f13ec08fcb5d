/*
 * tcp.c - TCP NewReno (+SACK-guided recovery) and DCTCP; see tcp.h for the
 * behaviour and the RFCs it follows.
 *
 * Cost per packet: O(1) apart from the SACK scoreboard and the receiver's
 * out-of-order list, sorted arrays of ranges (one per hole: short unless a
 * burst of losses hit the flow).  They grow by doubling, per flow; nothing
 * else is allocated except packets from the pool.
 */
#include "aisim/tcp.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void tcp_cfg_default(tcp_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->cc = TCP_NEWRENO;
    c->mss_bytes = 1460;
    c->hdr_bytes = 40;
    c->init_cwnd_pkts = 10;
    c->rcv_wnd_bytes = 64u << 20;
    c->min_rto_ps = 200 * INT64_C(1000000000);
    c->max_rto_ps = 60 * INT64_C(1000000000000);
    c->init_rto_ps = INT64_C(1000000000000);
    c->max_retries = 15;
    c->delayed_ack = false;
    c->delack_ps = 40 * INT64_C(1000000000);
    c->dctcp_g = 1.0 / 16;
}

static void tx_recv(sink *self, pkt *p);
static void rx_recv(sink *self, pkt *p);
static void on_rto(sim *s, void *obj, uint64_t arg);
static void on_delack(sim *s, void *obj, uint64_t arg);
static void on_start(sim *s, void *obj, uint64_t arg);

void tcp_flow_init(tcp_flow *f, sim *s, pkt_pool *pool, const tcp_cfg *cfg, uint32_t id,
                   uint64_t size_bytes)
{
    memset(f, 0, sizeof *f);
    f->tx.recv = tx_recv;
    f->tx.name = "tcp.tx";
    f->rx.recv = rx_recv;
    f->rx.name = "tcp.rx";
    f->s = s;
    f->pool = pool;
    f->cfg = cfg;
    f->id = id;
    f->size_bytes = size_bytes;
    f->cwnd = (double)cfg->init_cwnd_pkts * cfg->mss_bytes;
    f->ssthresh = INFINITY;
    f->rwnd = cfg->rcv_wnd_bytes;
    f->rto_ps = cfg->init_rto_ps;
    f->alpha = 1.0;             /* as Linux's dctcp_alpha_on_init */
    f->finish_ps = -1;
    sim_timer_init(&f->rto_timer, on_rto, f, 0);
    sim_timer_init(&f->delack_timer, on_delack, f, 0);
}

void tcp_flow_set_routes(tcp_flow *f, const route *fwd, const route *rev)
{
    f->fwd = fwd;
    f->rev = rev;
    f->ack_rt = rev;
}

void tcp_flow_set_data_sink(tcp_flow *f, sink *s)
{
    f->data_sink = s;
}

/* Sends data packet p: on the data route, or to the data sink. */
static void send_data_pkt(tcp_flow *f, pkt *p)
{
    if (f->data_sink)
        f->data_sink->recv(f->data_sink, p);
    else
        pkt_send(p, f->fwd);
}

static void rtt_sample(tcp_flow *f, int64_t r);
static void send_data(tcp_flow *f);

void tcp_flow_prime_rtt(tcp_flow *f, int64_t rtt_ps)
{
    rtt_sample(f, rtt_ps);
}

void tcp_flow_start(tcp_flow *f, int64_t at_ps)
{
    f->start_ps = at_ps;
    sim_schedule(f->s, at_ps, on_start, f, 0);
}

void tcp_flow_add_bytes(tcp_flow *f, uint64_t bytes)
{
    assert(f->size_bytes != UINT64_MAX);
    f->size_bytes += bytes;
    f->finish_ps = -1;
    send_data(f);
}

void tcp_flow_stop(tcp_flow *f)
{
    sim_timer_disarm(f->s, &f->rto_timer);
    sim_timer_disarm(f->s, &f->delack_timer);
    free(f->sacked.r);
    free(f->ooo.r);
    free(f->rxt.r);
    memset(&f->sacked, 0, sizeof f->sacked);
    memset(&f->ooo, 0, sizeof f->ooo);
    memset(&f->rxt, 0, sizeof f->rxt);
}

/* ---- sender ----------------------------------------------------------- */

static uint32_t seg_len(const tcp_flow *f, uint64_t seq)
{
    uint64_t left = f->size_bytes - seq;
    return (uint32_t)MIN(left, (uint64_t)f->cfg->mss_bytes);
}

static void arm_rto(tcp_flow *f)
{
    sim_timer_arm(f->s, &f->rto_timer, sim_now(f->s) + f->rto_ps);
}

/* Records that the segment at seq was retransmitted now, with snd_max as it
 * stands: data sent from then on that gets SACKed three segments beyond
 * shows the retransmission lost (resend_lost_head).  Kept sorted by seq,
 * trimmed as ACKs advance; grows with the episode, never per packet once
 * grown. */
static void rxt_note(tcp_flow *f, uint64_t seq)
{
    tcp_ranges *x = &f->rxt;
    int lo = 0, hi = x->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (x->r[mid][0] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == x->n || x->r[lo][0] != seq) {
        if (x->n == x->cap) {
            x->cap = x->cap ? 2 * x->cap : 16;
            x->r = xrealloc(x->r, (size_t)x->cap * sizeof *x->r);
        }
        memmove(x->r + lo + 1, x->r + lo, (size_t)(x->n - lo) * sizeof *x->r);
        x->n++;
        x->r[lo][0] = seq;
    }
    x->r[lo][1] = f->snd_max;
}

/* Forgets the retransmissions below `ack`: acknowledged, nothing to detect. */
static void rxt_trim(tcp_flow *f, uint64_t ack)
{
    tcp_ranges *x = &f->rxt;
    int k = 0;
    while (k < x->n && x->r[k][0] < ack)
        k++;
    if (k) {
        memmove(x->r, x->r + k, (size_t)(x->n - k) * sizeof *x->r);
        x->n -= k;
    }
}

static void send_segment(tcp_flow *f, uint64_t seq, uint32_t len)
{
    pkt *p = pkt_alloc(f->pool);
    p->kind = PKT_DATA;
    p->prio = f->prio;
    p->flow_id = f->id;
    p->seq = seq;
    p->h.tcp.data_bytes = len;
    p->size_bytes = len + f->cfg->hdr_bytes;
    p->sent_ps = sim_now(f->s);
    if (f->cfg->cc == TCP_DCTCP)
        p->flags = PKT_F_ECT;
    f->bytes_sent += len;
    f->segs_sent++;
    if (seq < f->snd_max) {
        f->retransmits++;
        if (f->in_recovery)             /* remember it for loss detection */
            rxt_note(f, seq);
    }
    if (!sim_timer_armed(f->s, &f->rto_timer))
        arm_rto(f);
    send_data_pkt(f, p);
}

/* Resending from below snd_max (after a timeout): if snd_nxt is inside a
 * SACKed range, move past it and return true; otherwise clip *len so the
 * segment stops where the next SACKed range starts. */
static bool skip_sacked(tcp_flow *f, uint32_t *len)
{
    for (int i = 0; i < f->sacked.n; i++) {
        const uint64_t *r = f->sacked.r[i];
        if (f->snd_nxt >= r[1])
            continue;
        if (f->snd_nxt >= r[0]) {
            f->snd_nxt = r[1];
            return true;
        }
        if (f->snd_nxt + *len > r[0])
            *len = (uint32_t)(r[0] - f->snd_nxt);
        return false;
    }
    return false;
}

/* Sends new (or, after a timeout, resent) data while the window allows. */
static void send_data(tcp_flow *f)
{
    uint64_t wnd = MIN((uint64_t)f->cwnd, f->rwnd);
    while (f->snd_nxt < f->size_bytes) {
        uint32_t len = seg_len(f, f->snd_nxt);
        if (f->snd_nxt < f->snd_max && f->sacked.n && skip_sacked(f, &len))
            continue;
        if (f->snd_nxt + len - f->snd_una > wnd)
            break;
        send_segment(f, f->snd_nxt, len);
        f->snd_nxt += len;
        if (f->snd_nxt > f->snd_max)
            f->snd_max = f->snd_nxt;
    }
    /* Stopped with data left and the congestion window the tighter limit:
     * the window may grow on the next ACK (RFC 7661).  Stopped by the
     * receiver's window, or with nothing left to send, it may not. */
    f->cwnd_limited = f->snd_nxt < f->size_bytes && (uint64_t)f->cwnd <= f->rwnd;
    /* Nothing in flight and the receiver's window too small to send: keep
     * the timer running as a persist timer (a zero-window probe follows). */
    if (f->snd_una == f->snd_max && f->snd_nxt < f->size_bytes &&
        !sim_timer_armed(f->s, &f->rto_timer))
        arm_rto(f);
}

static void on_start(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    send_data(obj);
}

static uint64_t highest_sacked(const tcp_flow *f)
{
    return f->sacked.n ? f->sacked.r[f->sacked.n - 1][1] : 0;
}

/* Adds [a, b) to a range list, merging what it touches.  Returns how many
 * of its bytes the list did not hold before. */
static uint64_t range_add(tcp_ranges *rs, uint64_t a, uint64_t b)
{
    int i = 0, n = rs->n;
    uint64_t (*r)[2] = rs->r;
    const uint64_t a0 = a, b0 = b;
    uint64_t fresh = b - a;
    while (i < n && r[i][1] < a)
        i++;
    int j = i;
    while (j < n && r[j][0] <= b) {
        uint64_t lo = MAX(a0, r[j][0]), hi = MIN(b0, r[j][1]);
        if (hi > lo)
            fresh -= hi - lo;
        a = MIN(a, r[j][0]);
        b = MAX(b, r[j][1]);
        j++;
    }
    int merged = j - i;         /* ranges i..j-1 become [a, b) */
    if (merged == 0) {
        if (rs->n == rs->cap) {
            rs->cap = rs->cap ? 2 * rs->cap : 8;
            rs->r = xrealloc(rs->r, (size_t)rs->cap * sizeof *rs->r);
            r = rs->r;
        }
        memmove(r + i + 1, r + i, (size_t)(n - i) * sizeof *r);
        rs->n++;
    } else if (merged > 1) {
        memmove(r + i + 1, r + j, (size_t)(n - j) * sizeof *r);
        rs->n -= merged - 1;
    }
    r[i][0] = a;
    r[i][1] = b;
    return fresh;
}

/* Drops ranges (or parts) below `below`. */
static void range_trim(tcp_ranges *rs, uint64_t below)
{
    int k = 0;
    while (k < rs->n && rs->r[k][1] <= below)
        k++;
    if (k) {
        memmove(rs->r, rs->r + k, (size_t)(rs->n - k) * sizeof *rs->r);
        rs->n -= k;
    }
    if (rs->n && rs->r[0][0] < below)
        rs->r[0][0] = below;
}

/* Retransmits the next hole below the highest SACKed byte, if any. */
static bool retransmit_hole(tcp_flow *f)
{
    uint64_t h = MAX(f->high_rxt, f->snd_una), top = highest_sacked(f);
    const uint64_t (*r)[2] = (const uint64_t (*)[2])f->sacked.r;
    for (int i = 0; i < f->sacked.n && h < top; i++) {
        if (h >= r[i][1])
            continue;
        if (h >= r[i][0]) {
            h = r[i][1];
            continue;
        }
        uint32_t len = (uint32_t)MIN((uint64_t)seg_len(f, h), r[i][0] - h);
        send_segment(f, h, len);
        f->high_rxt = h + len;
        return true;
    }
    return false;
}

/* In recovery: if the segment at snd_una was retransmitted and data sent
 * after that retransmission has been SACKed three segments beyond, the
 * retransmission was lost: send it again. */
static void resend_lost_head(tcp_flow *f)
{
    const tcp_ranges *x = &f->rxt;     /* sorted, nothing below snd_una */
    if (x->n && x->r[0][0] == f->snd_una &&
        highest_sacked(f) >= x->r[0][1] + 3 * (uint64_t)f->cfg->mss_bytes)
        send_segment(f, f->snd_una, seg_len(f, f->snd_una));
}

static void rtt_sample(tcp_flow *f, int64_t r)
{
    if (r <= 0)
        return;
    if (!f->have_rtt) {
        f->srtt_ps = r;
        f->rttvar_ps = r / 2;
        f->have_rtt = true;
    } else {
        int64_t d = f->srtt_ps > r ? f->srtt_ps - r : r - f->srtt_ps;
        f->rttvar_ps = (3 * f->rttvar_ps + d) / 4;
        f->srtt_ps = (7 * f->srtt_ps + r) / 8;
    }
    int64_t rto = f->srtt_ps + MAX(4 * f->rttvar_ps, (int64_t)1000);
    f->rto_ps = MIN(MAX(rto, f->cfg->min_rto_ps), f->cfg->max_rto_ps);
}

/* ssthresh after a loss (fast retransmit or timeout).  NewReno: half the
 * data outstanding (RFC 5681, eq. 4).  DCTCP: cwnd (1 - alpha/2), as Linux
 * (dctcp_ssthresh, the ssthresh of its congestion ops, used for ECN and
 * loss alike) and ns-3's TcpDctcp::GetSsThresh do: halving at every loss
 * recovery costs a DCTCP flow its rate wherever reordering (spraying)
 * triggers spurious fast retransmits.  A timeout during fast recovery
 * keeps the ssthresh recovery set, as Linux's tcp_enter_loss does (cwnd is
 * inflated then, so cutting from it would raise ssthresh). */
static double loss_ssthresh(const tcp_flow *f)
{
    double mss = f->cfg->mss_bytes;
    if (f->cfg->cc == TCP_DCTCP && f->in_recovery)
        return f->ssthresh;
    if (f->cfg->cc == TCP_DCTCP)
        return MAX(f->cwnd * (1 - f->alpha / 2), 2 * mss);
    return MAX((double)(f->snd_max - f->snd_una) / 2, 2 * mss);
}

static void dctcp_on_ack(tcp_flow *f, uint64_t acked, bool ece)
{
    f->win_acked += acked;
    if (ece)
        f->win_marked += acked;
    if (f->snd_una >= f->win_end) {     /* one window of data observed */
        double frac = f->win_acked ? (double)f->win_marked / (double)f->win_acked : 0;
        f->alpha = (1 - f->cfg->dctcp_g) * f->alpha + f->cfg->dctcp_g * frac;
        f->win_acked = f->win_marked = 0;
        f->win_end = f->snd_nxt;
    }
    if (ece && f->snd_una >= f->cwr_end && !f->in_recovery) {
        double mss = f->cfg->mss_bytes;
        f->cwnd = MAX(f->cwnd * (1 - f->alpha / 2), mss);
        f->ssthresh = f->cwnd;
        f->cwr_end = f->snd_nxt;
    }
}

static void tx_recv(sink *self, pkt *p)
{
    tcp_flow *f = container_of(self, tcp_flow, tx);
    if (f->aborted) {                   /* a late ACK of a closed connection */
        pkt_free(f->pool, p);
        return;
    }
    uint64_t ack = MIN(p->seq, f->snd_max);
    bool ece = p->flags & PKT_F_ECE;
    f->rwnd = p->h.tcp.wnd_bytes;
    int64_t echo = (int64_t)p->h.tcp.ts_echo_ps;
    uint64_t newly_sacked = 0;
    for (int i = 0; i < 2; i++)
        if (p->h.tcp.sack[i][1] > p->h.tcp.sack[i][0])
            newly_sacked += range_add(&f->sacked, p->seq + p->h.tcp.sack[i][0],
                                      p->seq + p->h.tcp.sack[i][1]);
    pkt_free(f->pool, p);
    if (ece)
        f->ece_acks++;
    rtt_sample(f, sim_now(f->s) - echo);

    double mss = f->cfg->mss_bytes;
    uint64_t acked = ack > f->snd_una ? ack - f->snd_una : 0;
    if (acked) {
        f->backoffs = 0;
        f->snd_una = ack;
        range_trim(&f->sacked, ack);
        rxt_trim(f, ack);
        if (f->snd_nxt < f->snd_una)
            f->snd_nxt = f->snd_una;
    }
    if (f->cfg->cc == TCP_DCTCP)
        dctcp_on_ack(f, acked, ece);
    if (acked) {
        f->dupacks = 0;
        if (f->in_recovery) {
            if (ack >= f->recover) {
                f->in_recovery = false;
                f->cwnd = f->ssthresh;
            } else {
                /* Partial ACK (RFC 6582): resend the next missing segment,
                 * deflate by what was acked, add back one segment. */
                if (f->high_rxt <= f->snd_una) {
                    send_segment(f, f->snd_una, seg_len(f, f->snd_una));
                    f->high_rxt = f->snd_una + seg_len(f, f->snd_una);
                } else {
                    resend_lost_head(f);
                }
                f->cwnd = MAX(f->cwnd - (double)acked + mss, mss);
            }
        } else if (!f->cwnd_limited) {
            /* The window did not limit the sender (the receiver's did, or
             * it had nothing to send): it has not been tested, so it does
             * not grow (RFC 7661; Linux's tcp_is_cwnd_limited).  Else a
             * sender held back by a small advertised window would grow it
             * without bound and send a burst of it when the cap lifts. */
        } else if (f->cwnd < f->ssthresh) {
            f->cwnd += MIN((double)acked, mss);     /* slow start (RFC 5681) */
        } else {
            f->cwnd += mss * (double)acked / f->cwnd;         /* avoidance */
        }
        if (f->snd_una < f->snd_max)
            arm_rto(f);
        else
            sim_timer_disarm(f->s, &f->rto_timer);
    } else if (ack == f->snd_una && f->snd_max > f->snd_una && newly_sacked) {
        /* A duplicate ACK is one that SACKs data not SACKed before
         * (RFC 6675, sec. 2; ns-3's TcpSocketBase and Linux, which counts
         * SACKed segments, do the same).  The ACK of a segment that arrived
         * twice (a spurious retransmission) is not one: counting it
         * inflated the window in recovery by a segment for each spurious
         * retransmission, which sent more, which a sprayed flow's
         * reordering turned into more spurious retransmissions. */
        f->dupacks++;
        if (!f->in_recovery && f->dupacks == 3 && f->snd_una >= f->recover) {
            f->ssthresh = loss_ssthresh(f);
            f->cwnd = f->ssthresh + 3 * mss;
            f->recover = f->snd_max;
            f->in_recovery = true;
            f->rxt.n = 0;
            f->fast_retransmits++;
            send_segment(f, f->snd_una, seg_len(f, f->snd_una));
            f->high_rxt = f->snd_una + seg_len(f, f->snd_una);
        } else if (f->in_recovery) {
            f->cwnd += mss;                                   /* inflation */
            resend_lost_head(f);
            retransmit_hole(f);
        }
    }
    if (f->snd_una < f->size_bytes) {
        send_data(f);
    } else {
        sim_timer_disarm(f->s, &f->rto_timer);
        if (f->on_acked)
            f->on_acked(f->ctx, f);
    }
}

static void on_rto(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    tcp_flow *f = obj;
    if (f->snd_una >= f->size_bytes)
        return;
    double mss = f->cfg->mss_bytes;
    f->rto_ps = MIN(2 * f->rto_ps, f->cfg->max_rto_ps);
    if (f->snd_una == f->snd_max) {
        /* Persist: nothing in flight, window closed: probe with a segment. */
        send_segment(f, f->snd_nxt, seg_len(f, f->snd_nxt));
        f->snd_nxt += seg_len(f, f->snd_nxt);
        f->snd_max = MAX(f->snd_max, f->snd_nxt);
        return;
    }
    f->timeouts++;
    if (++f->backoffs > f->cfg->max_retries) {
        /* Give up, as Linux does after tcp_retries2: a receiver that cannot
         * be reached (a host cut off for good) ends the connection instead
         * of probing for ever. */
        f->aborted = true;
        if (f->on_done)
            f->on_done(f->ctx, f);
        return;
    }
    if (f->reroute)
        f->reroute(f->ctx, f);
    f->ssthresh = loss_ssthresh(f);
    f->cwnd = mss;
    f->in_recovery = false;
    f->dupacks = 0;
    f->recover = f->snd_max;
    /* The SACK scoreboard is kept (as Linux does; RFC 2018's advice to drop
     * it guards against receivers that renege, which aisim's never do):
     * send_data() resends only what the receiver does not hold. */
    f->rxt.n = 0;
    f->high_rxt = f->snd_una;
    f->snd_nxt = f->snd_una;
    send_data(f);
}

/* ---- receiver --------------------------------------------------------- */

static void send_ack(tcp_flow *f)
{
    pkt *p = pkt_alloc(f->pool);
    p->kind = PKT_ACK;
    p->prio = f->prio;
    p->flow_id = f->id;
    p->seq = f->rcv_nxt;
    p->size_bytes = f->cfg->hdr_bytes;
    p->sent_ps = sim_now(f->s);
    p->h.tcp.wnd_bytes = f->cfg->rcv_wnd_bytes;
    p->h.tcp.ts_echo_ps = (uint64_t)f->last_echo_ps;
    if (f->cfg->cc == TCP_DCTCP && f->ce_state)
        p->flags |= PKT_F_ECE;
    /* SACK blocks (RFC 2018): first the range holding the segment just
     * received, then the lowest range (the one next to the hole the sender
     * must fill first). */
    int nb = 0;
    for (int i = 0; i < f->ooo.n && nb == 0; i++)
        if (f->ooo.r[i][0] <= f->last_seg && f->last_seg < f->ooo.r[i][1]) {
            p->h.tcp.sack[nb][0] = (uint32_t)(f->ooo.r[i][0] - f->rcv_nxt);
            p->h.tcp.sack[nb++][1] = (uint32_t)(f->ooo.r[i][1] - f->rcv_nxt);
        }
    if (f->ooo.n && (nb == 0 || f->ooo.r[0][0] - f->rcv_nxt != p->h.tcp.sack[0][0])) {
        p->h.tcp.sack[nb][0] = (uint32_t)(f->ooo.r[0][0] - f->rcv_nxt);
        p->h.tcp.sack[nb++][1] = (uint32_t)(f->ooo.r[0][1] - f->rcv_nxt);
    }
    f->unacked_segs = 0;
    sim_timer_disarm(f->s, &f->delack_timer);
    pkt_send(p, f->ack_rt ? f->ack_rt : f->rev);
}

static void on_delack(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    send_ack(obj);
}

static void rx_recv(sink *self, pkt *p)
{
    tcp_flow *f = container_of(self, tcp_flow, rx);
    uint64_t seq = p->seq, end = seq + p->h.tcp.data_bytes, had = f->rcv_nxt;
    bool ce = p->flags & PKT_F_CE;
    int64_t sent = p->sent_ps;
    if (p->rt && p->rt->reverse)
        f->ack_rt = p->rt->reverse;
    pkt_free(f->pool, p);

    /* DCTCP: an immediate ACK for what came before when the CE state
     * changes, so the sender sees the exact marked fraction. */
    if (f->cfg->cc == TCP_DCTCP && ce != f->ce_state) {
        if (f->unacked_segs > 0)
            send_ack(f);
        f->ce_state = ce;
    }
    bool now = !f->cfg->delayed_ack;
    if (end <= f->rcv_nxt) {
        now = true;                             /* duplicate */
    } else if (seq <= f->rcv_nxt) {
        f->rcv_nxt = end;
        if (f->ooo.n) {
            now = true;                         /* fills a hole */
            while (f->ooo.n && f->ooo.r[0][0] <= f->rcv_nxt) {
                f->rcv_nxt = MAX(f->rcv_nxt, f->ooo.r[0][1]);
                range_trim(&f->ooo, f->ooo.r[0][1]);
            }
        }
    } else {
        range_add(&f->ooo, seq, end);
        now = true;                             /* out of order */
    }
    f->last_seg = seq;
    f->last_echo_ps = sent;
    f->unacked_segs++;
    if (now || f->unacked_segs >= 2)
        send_ack(f);
    else if (!sim_timer_armed(f->s, &f->delack_timer))
        sim_timer_arm(f->s, &f->delack_timer, sim_now(f->s) + f->cfg->delack_ps);
    if (f->on_progress && f->rcv_nxt > had)
        f->on_progress(f->ctx, f);
    if (f->rcv_nxt >= f->size_bytes && f->finish_ps < 0) {
        f->finish_ps = sim_now(f->s);
        if (f->on_done)
            f->on_done(f->ctx, f);
    }
}
