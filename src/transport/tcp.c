/*
 * tcp.c - TCP NewReno (RFC 6675 or RACK-style loss recovery) and DCTCP;
 * see tcp.h for the behaviour and the RFCs it follows.
 *
 * Cost per packet: O(1) apart from the SACK scoreboard and the receiver's
 * out-of-order list, sorted arrays of ranges (one per hole: short unless a
 * burst of losses hit the flow), and with recovery: rack a walk of the
 * segments outstanding per ACK.  They grow by doubling, per flow; nothing
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
    c->recovery = TCP_REC_RFC6675;
    c->dupthresh = 3;
    c->rack_reo_wnd = 0.25;
}

static void tx_recv(sink *self, pkt *p);
static void rx_recv(sink *self, pkt *p);
static void on_rto(sim *s, void *obj, uint64_t arg);
static void on_delack(sim *s, void *obj, uint64_t arg);
static void on_start(sim *s, void *obj, uint64_t arg);
static void on_rack_timer(sim *s, void *obj, uint64_t arg);

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
    sim_timer_init(&f->rack_timer, on_rack_timer, f, 0);
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
    sim_timer_disarm(f->s, &f->rack_timer);
    free(f->sacked.r);
    free(f->ooo.r);
    free(f->sent.e);
    memset(&f->sacked, 0, sizeof f->sacked);
    memset(&f->ooo, 0, sizeof f->ooo);
    memset(&f->sent, 0, sizeof f->sent);
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

/* ---- RACK's log of the segments outstanding ---- */

/* Index of the first entry that ends after seq. */
static int sent_find(const tcp_sentlog *l, uint64_t seq)
{
    int lo = l->head, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (l->e[mid].end <= seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Records a transmission of [seq, seq + len) now: a new segment is
 * appended; a retransmission moves the time of the entries it covers. */
static void sent_note(tcp_flow *f, uint64_t seq, uint32_t len)
{
    tcp_sentlog *l = &f->sent;
    int64_t now = sim_now(f->s);
    int i = sent_find(l, seq);
    for (; i < l->n && l->e[i].seq < seq + len; i++)
        l->e[i].at_ps = now;
    if (l->n > l->head && l->e[l->n - 1].end >= seq + len)
        return;
    uint64_t from = l->n > l->head ? MAX(seq, l->e[l->n - 1].end) : seq;
    if (l->n == l->cap) {
        if (l->head > 0) {
            memmove(l->e, l->e + l->head, (size_t)(l->n - l->head) * sizeof *l->e);
            l->n -= l->head;
            l->head = 0;
        }
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 64;
            l->e = xrealloc(l->e, (size_t)l->cap * sizeof *l->e);
        }
    }
    l->e[l->n++] = (tcp_sent){from, seq + len, now};
}

/* Forgets the segments acknowledged cumulatively. */
static void sent_trim(tcp_flow *f, uint64_t ack)
{
    tcp_sentlog *l = &f->sent;
    while (l->head < l->n && l->e[l->head].end <= ack)
        l->head++;
    if (l->head == l->n)
        l->head = l->n = 0;
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
    if (seq < f->snd_max)
        f->retransmits++;
    if (f->cfg->recovery == TCP_REC_RACK)
        sent_note(f, seq, len);
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

/* ---- RFC 6675's scoreboard ---- */

/* Bytes of [a, b) not SACKed. */
static uint64_t unsacked(const tcp_flow *f, uint64_t a, uint64_t b)
{
    if (b <= a)
        return 0;
    uint64_t n = b - a;
    for (int i = 0; i < f->sacked.n && f->sacked.r[i][0] < b; i++) {
        uint64_t lo = MAX(a, f->sacked.r[i][0]), hi = MIN(b, f->sacked.r[i][1]);
        if (hi > lo)
            n -= hi - lo;
    }
    return n;
}

/* The first byte at or after x that is not SACKed; *stop: where the
 * un-SACKed stretch from there ends (the next SACKed range, or snd_max). */
static uint64_t next_unsacked(const tcp_flow *f, uint64_t x, uint64_t *stop)
{
    for (int i = 0; i < f->sacked.n; i++) {
        if (x < f->sacked.r[i][0]) {
            *stop = f->sacked.r[i][0];
            return x;
        }
        x = MAX(x, f->sacked.r[i][1]);
    }
    *stop = f->snd_max;
    return x;
}

/* IsLost (RFC 6675, sec. 4) is true for an un-SACKed byte iff DupThresh
 * SACKed segments, or more than (DupThresh - 1) x MSS SACKed bytes, lie
 * above it: SACKed data above a byte only shrinks as the byte rises, so
 * the un-SACKed bytes below one point are lost and none above it.  That
 * point: the start of the highest SACKed range at which the count from
 * the top reaches the threshold (snd_una if it never does). */
static uint64_t lost_end_sack(const tcp_flow *f)
{
    uint64_t mss = f->cfg->mss_bytes, dt = f->cfg->dupthresh, bytes = 0, segs = 0;
    for (int i = f->sacked.n - 1; i >= 0; i--) {
        uint64_t len = f->sacked.r[i][1] - f->sacked.r[i][0];
        bytes += len;
        segs += (len + mss - 1) / mss;
        if (segs >= dt || bytes > (dt - 1) * mss)
            return f->sacked.r[i][0];
    }
    return f->snd_una;
}

/* SetPipe (RFC 6675, sec. 4), for un-SACKed bytes between snd_una and
 * snd_max: one for each not lost (below `lost_end`), one more for each
 * below HighRxt (a retransmission in flight). */
static uint64_t set_pipe(const tcp_flow *f, uint64_t lost_end)
{
    return unsacked(f, MAX(lost_end, f->snd_una), f->snd_max) +
           unsacked(f, f->snd_una, MIN(MAX(f->high_rxt, f->snd_una), f->snd_max));
}

/* NextSeg (RFC 6675, sec. 4) and sends what it returns.  Returns the bytes
 * sent, 0 if there is nothing to send. */
static uint32_t send_next_seg(tcp_flow *f, uint64_t lost_end)
{
    uint64_t top = highest_sacked(f), stop;
    uint64_t h = next_unsacked(f, MAX(f->high_rxt, f->snd_una), &stop);
    uint32_t len;
    /* (1) the first un-SACKed byte above HighRxt, below the highest SACKed
     * byte, if IsLost; (3) the same if not lost, once (2) fails. */
    bool hole = h < top;
    if (hole && h < lost_end) {
        len = (uint32_t)MIN((uint64_t)seg_len(f, h), stop - h);
        goto rxt;
    }
    /* (2) new data, if the receiver's window allows. */
    if (f->snd_nxt < f->size_bytes) {
        len = seg_len(f, f->snd_nxt);
        if (f->snd_nxt + len - f->snd_una <= f->rwnd) {
            send_segment(f, f->snd_nxt, len);
            f->snd_nxt += len;
            f->snd_max = MAX(f->snd_max, f->snd_nxt);
            return len;
        }
    }
    if (hole) {
        len = (uint32_t)MIN((uint64_t)seg_len(f, h), stop - h);
        goto rxt;
    }
    /* (4) once per recovery (after snd_una passed RescueRxt): the segment
     * holding the highest un-SACKed byte outstanding; HighRxt unchanged. */
    if (f->snd_una > f->rescue_rxt) {
        uint64_t u = f->snd_max, lo = f->snd_una;
        for (int i = f->sacked.n - 1; i >= 0; i--) {
            if (f->sacked.r[i][1] < u) {
                lo = MAX(lo, f->sacked.r[i][1]);
                break;
            }
            u = f->sacked.r[i][0];
        }
        if (u > lo) {
            uint64_t a = u - lo > f->cfg->mss_bytes ? u - f->cfg->mss_bytes : lo;
            f->rescue_rxt = f->recover;
            send_segment(f, a, (uint32_t)(u - a));
            return (uint32_t)(u - a);
        }
    }
    return 0;
rxt:
    send_segment(f, h, len);
    f->high_rxt = h + len;
    return len;
}

/* ---- RACK (RFC 8985's loss marking) ---- */

/* Walks the outstanding segments (RFC 8985, sec. 6.2): pipe (un-SACKed,
 * not lost) and the first lost one (-1: none).  A segment is lost when
 * data sent after it was delivered and RACK.rtt + the reordering window
 * have passed since its last transmission; the reordering timer is armed
 * for the first that is still within that time. */
static uint64_t rack_scan(tcp_flow *f, int *first_lost)
{
    const tcp_sentlog *l = &f->sent;
    int64_t reo = (int64_t)(f->cfg->rack_reo_wnd * (double)f->min_rtt_ps);
    int64_t now = sim_now(f->s), wait = -1;
    uint64_t pipe = 0;
    int j = 0;
    *first_lost = -1;
    for (int i = l->head; i < l->n; i++) {
        const tcp_sent *e = &l->e[i];
        uint64_t a = MAX(e->seq, f->snd_una);
        while (j < f->sacked.n && f->sacked.r[j][1] <= a)
            j++;
        if (j < f->sacked.n && f->sacked.r[j][0] <= a && f->sacked.r[j][1] >= e->end)
            continue;                       /* SACKed */
        if (e->at_ps < f->rack_xmit_ps || (e->at_ps == f->rack_xmit_ps && e->end <= f->rack_end)) {
            int64_t left = e->at_ps + f->rack_rtt_ps + reo - now;
            if (left <= 0) {
                if (*first_lost < 0)
                    *first_lost = i;
                continue;
            }
            if (wait < 0 || left < wait)
                wait = left;
        }
        pipe += e->end - a;
    }
    if (wait > 0)
        sim_timer_arm(f->s, &f->rack_timer, now + wait);
    return pipe;
}

/* In RACK recovery: resends the next lost segment, else sends new data. */
static uint32_t rack_send_next(tcp_flow *f)
{
    int i;
    rack_scan(f, &i);
    if (i >= 0) {
        uint64_t a = MAX(f->sent.e[i].seq, f->snd_una);
        uint32_t len = (uint32_t)(f->sent.e[i].end - a);
        send_segment(f, a, len);
        return len;
    }
    if (f->snd_nxt < f->size_bytes) {
        uint32_t len = seg_len(f, f->snd_nxt);
        if (f->snd_nxt + len - f->snd_una <= f->rwnd) {
            send_segment(f, f->snd_nxt, len);
            f->snd_nxt += len;
            f->snd_max = MAX(f->snd_max, f->snd_nxt);
            return len;
        }
    }
    return 0;
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

/* Enters loss recovery (RFC 6675, step 4): the recovery point, ssthresh
 * and cwnd (no inflation), the first hole resent; then the caller sends
 * what cwnd - pipe allows. */
static void enter_recovery(tcp_flow *f)
{
    f->ssthresh = loss_ssthresh(f);
    f->cwnd = f->ssthresh;
    f->recover = f->snd_max;
    f->in_recovery = true;
    f->fast_retransmits++;
    if (f->cfg->recovery == TCP_REC_RACK)
        return;                         /* rack_send_next resends the lost */
    uint32_t len = seg_len(f, f->snd_una);
    uint64_t stop;
    if (next_unsacked(f, f->snd_una, &stop) == f->snd_una && stop - f->snd_una < len)
        len = (uint32_t)(stop - f->snd_una);
    send_segment(f, f->snd_una, len);
    f->high_rxt = f->rescue_rxt = f->snd_una + len;
}

/* In recovery: SetPipe, then NextSeg while cwnd - pipe >= MSS (RFC 6675,
 * step C). */
static void recovery_send(tcp_flow *f)
{
    double mss = f->cfg->mss_bytes;
    uint64_t lost_end = 0;
    int first;
    if (f->cfg->recovery == TCP_REC_RACK) {
        f->pipe = rack_scan(f, &first);
    } else {
        lost_end = lost_end_sack(f);
        f->pipe = set_pipe(f, lost_end);
    }
    while (f->cwnd - (double)f->pipe >= mss) {
        uint32_t n = f->cfg->recovery == TCP_REC_RACK ? rack_send_next(f)
                                                      : send_next_seg(f, lost_end);
        if (n == 0)
            break;
        f->pipe += n;
    }
}

/* Whether loss recovery starts at this ACK: RFC 6675 at the DupThresh-th
 * duplicate ACK or when IsLost(snd_una); RACK when a segment is lost. */
static bool loss_detected(tcp_flow *f)
{
    if (f->snd_una >= f->snd_max || f->snd_una < f->recover)
        return false;
    if (f->cfg->recovery == TCP_REC_RACK) {
        int first;
        rack_scan(f, &first);
        return first >= 0;
    }
    return f->dupacks >= f->cfg->dupthresh || lost_end_sack(f) > f->snd_una;
}

/* RACK's reordering timer: segments within the window when the last ACK
 * came may be lost now. */
static void on_rack_timer(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    tcp_flow *f = obj;
    if (f->aborted || f->snd_una >= f->snd_max)
        return;
    if (!f->in_recovery && loss_detected(f))
        enter_recovery(f);
    if (f->in_recovery)
        recovery_send(f);
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
    int64_t rtt = sim_now(f->s) - echo;
    rtt_sample(f, rtt);
    if (rtt > 0 && (f->min_rtt_ps == 0 || rtt < f->min_rtt_ps))
        f->min_rtt_ps = rtt;
    if (echo >= f->rack_xmit_ps) {
        f->rack_xmit_ps = echo;
        f->rack_rtt_ps = rtt;
    }

    double mss = f->cfg->mss_bytes;
    uint64_t acked = ack > f->snd_una ? ack - f->snd_una : 0;
    if (acked) {
        f->backoffs = 0;
        f->snd_una = ack;
        range_trim(&f->sacked, ack);
        sent_trim(f, ack);
        if (f->snd_nxt < f->snd_una)
            f->snd_nxt = f->snd_una;
    }
    f->rack_end = MAX(f->snd_una, highest_sacked(f));
    if (f->cfg->cc == TCP_DCTCP)
        dctcp_on_ack(f, acked, ece);
    /* Duplicate ACKs (RFC 6675, sec. 2 and step 2-3): a cumulative ACK
     * resets the count; an ACK that SACKs data not SACKed before, with
     * data outstanding, adds one (cumulative or not).  The ACK of a
     * segment that arrived twice SACKs nothing new: not a duplicate (it
     * would count a sprayed flow's spurious retransmissions as losses). */
    if (acked)
        f->dupacks = 0;
    if (newly_sacked && f->snd_max > f->snd_una && !f->in_recovery)
        f->dupacks++;
    if (f->in_recovery && ack >= f->recover) {
        f->in_recovery = false;         /* the recovery point is acknowledged */
        f->cwnd = f->ssthresh;
    } else if (acked && !f->in_recovery) {
        if (!f->cwnd_limited) {
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
    }
    if (acked) {
        if (f->snd_una < f->snd_max)
            arm_rto(f);
        else
            sim_timer_disarm(f->s, &f->rto_timer);
    }
    if (!f->in_recovery && loss_detected(f))
        enter_recovery(f);
    if (f->snd_una >= f->size_bytes) {
        sim_timer_disarm(f->s, &f->rto_timer);
        if (f->on_acked)
            f->on_acked(f->ctx, f);
    } else if (f->in_recovery) {
        recovery_send(f);
    } else {
        send_data(f);
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
