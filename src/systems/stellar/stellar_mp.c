/*
 * stellar_mp.c - Stellar's multi-path core (stellar_mp.h) apart from the
 * path choice: parameters, the per-QP congestion-control context, the
 * receiver's placement bitmap and the sender's scoreboard.
 *
 * Congestion control [papers.md 2(f): DCTCP-style window, additive
 * increase 1 MSS per RTT, RTT cap 2x base]: one window per QP whatever the
 * path of a packet.  Every unmarked ACK grows the window by mss x bytes /
 * cwnd (one MSS per window's worth of ACKs).  At the end of each window
 * (bytes acked >= the window at its start) alpha += g (F - alpha), F the
 * marked fraction of the window's bytes, and if anything was marked the
 * window is multiplied by 1 - alpha / 2 (DCTCP, Alizadeh et al. 2010).  An
 * RTT sample above rtt_cap x base RTT (the fabric's, smp_cc_cap_base:
 * the QP's own until the glue says more) cuts the window by
 * beta x (rtt - target) / rtt (at most by half), and, with loss_cut, a
 * retransmission timeout halves it; these two cut at most once per RTT
 * (loss_cut is off by default: with 128 paths a loss says little about
 * the QP's congestion, and the paper's CC reacts to ECN and RTT).  The window stays
 * within [min_cwnd_pkts, window] packets.
 *
 * Receiver: a ring of `bits` bits indexed by PSN mod bits covers
 * [base, base + bits); placing sets a bit, and the cumulative point moves
 * over set bits, clearing them (a whole word at a time when it can).  The
 * memory is bits / 8 bytes per QP (3,200 PSNs by default: 400 bytes).
 *
 * Sender: an entry per PSN of the window (PSN mod window), a ring of the
 * PSNs to resend and a ring of transmissions in send order: the oldest
 * transmission still outstanding is at its head, so the RTO deadline is
 * O(1) amortised and a timer scan touches only what timed out.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/stellar_mp.h"
#include "aisim/units.h"

enum { TX_FREE, TX_OUT, TX_LOST, TX_ACKED };

void smp_params_default(smp_params *pr)
{
    *pr = (smp_params){
        .paths = SMP_PATHS_DEFAULT, .out = SMP_OUT_HASH, .mss_bytes = 4096,
        .line_rate_bps = GBPS(400), .base_rtt_ps = US(10), .window = 0,
        .rto_ps = US(250), .avoid_after = 3, .avoid_ps = MS(10), .order_loss = false,
        .loss_cut = false,
        .cc_g = 1.0 / 16, .rtt_cap = 2.0, .rtt_beta = 0.5, .min_cwnd_pkts = 1,
        .path_g = 1.0 / 8};
}

static uint64_t bdp_bytes(const smp_params *pr, int64_t rtt_ps)
{
    return (uint64_t)((double)pr->line_rate_bps / 8 * ps_to_s(rtt_ps));
}

uint32_t smp_params_window(const smp_params *pr)
{
    if (pr->window)
        return pr->window;
    /* [I] One BDP at base RTT + RTO: a lost PSN waits for its RTO while the
     * others keep the line busy, so a single loss does not stall the QP. */
    uint64_t w = (bdp_bytes(pr, pr->base_rtt_ps + pr->rto_ps) + pr->mss_bytes - 1) / pr->mss_bytes;
    w = (w + 63) / 64 * 64;
    return w > SMP_WINDOW_MAX ? SMP_WINDOW_MAX : (uint32_t)w;
}

const char *smp_params_check(const smp_params *pr)
{
    if (pr->paths < SMP_PATHS_MIN || pr->paths > SMP_PATHS_MAX)
        return "paths: expected 4 to 256";
    if (!pr->mss_bytes)
        return "mss: expected at least 1 byte";
    if (pr->line_rate_bps <= 0 || pr->base_rtt_ps <= 0 || pr->rto_ps <= 0)
        return "line rate, base RTT and RTO: expected > 0";
    if (pr->window && (pr->window % 64 || pr->window > SMP_WINDOW_MAX))
        return "window: expected a multiple of 64 PSNs up to 65536";
    if (!pr->avoid_after)
        return "avoid_after: expected at least 1 timeout";
    if (pr->cc_g <= 0 || pr->cc_g > 1 || pr->path_g <= 0 || pr->path_g > 1)
        return "EWMA gains: expected in (0, 1]";
    if (pr->rtt_cap < 1 || pr->rtt_beta < 0 || pr->rtt_beta > 1)
        return "rtt_cap >= 1 and rtt_beta in [0, 1] expected";
    if (!pr->min_cwnd_pkts || pr->min_cwnd_pkts > smp_params_window(pr))
        return "min_cwnd: expected 1 packet to the window";
    return NULL;
}

/* ---- congestion control ---- */

static double smp_cc_min(const smp_cc *cc) { return (double)cc->pr->min_cwnd_pkts * cc->pr->mss_bytes; }
static double smp_cc_max(const smp_cc *cc) { return (double)smp_params_window(cc->pr) * cc->pr->mss_bytes; }

static void clamp(smp_cc *cc)
{
    double lo = smp_cc_min(cc), hi = smp_cc_max(cc);
    cc->cwnd_bytes = cc->cwnd_bytes < lo ? lo : cc->cwnd_bytes > hi ? hi : cc->cwnd_bytes;
}

void smp_cc_init(smp_cc *cc, const smp_params *pr)
{
    memset(cc, 0, sizeof *cc);
    cc->pr = pr;
    cc->cwnd_bytes = (double)bdp_bytes(pr, pr->base_rtt_ps);    /* line rate at start */
    clamp(cc);
    cc->alpha = 1.0;                    /* as Linux's DCTCP starts */
    cc->win_end = cc->cwnd_bytes;
    cc->last_cut_ps = INT64_MIN / 2;
    cc->rtt_ps = pr->base_rtt_ps;
    cc->cap_base_ps = pr->base_rtt_ps;
}

static bool may_cut(const smp_cc *cc, int64_t now_ps) { return now_ps - cc->last_cut_ps >= cc->rtt_ps; }

void smp_cc_ack(smp_cc *cc, uint32_t bytes, int64_t rtt_ps, bool ce, int64_t now_ps)
{
    const smp_params *pr = cc->pr;
    if (rtt_ps > 0)
        cc->rtt_ps = rtt_ps;
    cc->win_acked += bytes;
    if (ce)
        cc->win_marked += bytes;
    else
        cc->cwnd_bytes += (double)pr->mss_bytes * bytes / cc->cwnd_bytes;
    double target = pr->rtt_cap * (double)cc->cap_base_ps;
    if (rtt_ps > 0 && (double)rtt_ps > target && may_cut(cc, now_ps)) {
        double f = pr->rtt_beta * ((double)rtt_ps - target) / (double)rtt_ps;
        cc->cwnd_bytes *= 1 - (f > 0.5 ? 0.5 : f);
        cc->cuts_rtt++;
        cc->last_cut_ps = now_ps;
    }
    if ((double)cc->win_acked >= cc->win_end) {
        double frac = (double)cc->win_marked / (double)cc->win_acked;
        cc->alpha += pr->cc_g * (frac - cc->alpha);
        if (cc->win_marked) {
            cc->cwnd_bytes *= 1 - cc->alpha / 2;
            cc->cuts_ecn++;
            cc->last_cut_ps = now_ps;
        }
        cc->win_acked = cc->win_marked = 0;
        clamp(cc);
        cc->win_end = cc->cwnd_bytes;
    }
    clamp(cc);
}

void smp_cc_loss(smp_cc *cc, int64_t now_ps)
{
    if (!may_cut(cc, now_ps))
        return;
    cc->cwnd_bytes /= 2;
    cc->cuts_loss++;
    cc->last_cut_ps = now_ps;
    clamp(cc);
}

/* ---- receiver bitmap ---- */

void smp_rxmap_init(smp_rxmap *m, uint32_t bits)
{
    memset(m, 0, sizeof *m);
    m->bits = bits;
    m->w = xcalloc(bits / 64, sizeof *m->w);
}

void smp_rxmap_fini(smp_rxmap *m)
{
    free(m->w);
    m->w = NULL;
}

enum smp_rx_verdict smp_rxmap_recv(smp_rxmap *m, uint64_t psn)
{
    if (psn < m->base) {
        m->dups++;
        return SMP_RX_DUP;
    }
    if (psn - m->base >= m->bits) {
        m->beyond++;
        return SMP_RX_BEYOND;
    }
    uint64_t i = psn % m->bits, bit = UINT64_C(1) << (i % 64);
    uint64_t *w = &m->w[i / 64];
    if (*w & bit) {
        m->dups++;
        return SMP_RX_DUP;
    }
    *w |= bit;
    m->placed++;
    if (psn > m->base) {
        m->ooo++;
        if (psn - m->base > m->max_gap)
            m->max_gap = psn - m->base;
        return SMP_RX_PLACED;
    }
    /* In order: move the cumulative point over what is now contiguous. */
    for (;;) {
        uint64_t j = m->base % m->bits;
        uint64_t *wj = &m->w[j / 64];
        if (j % 64 == 0 && *wj == UINT64_MAX) {
            *wj = 0;
            m->base += 64;
            continue;
        }
        uint64_t b = UINT64_C(1) << (j % 64);
        if (!(*wj & b))
            break;
        *wj &= ~b;
        m->base++;
    }
    return SMP_RX_PLACED;
}

/* ---- sender scoreboard ---- */

/* Doubles a ring of n elements of sz bytes starting at h, unwrapping it. */
static void *ring_grow(void *buf, uint32_t *cap, uint32_t *h, uint32_t n, size_t sz)
{
    uint32_t nc = *cap ? *cap * 2 : 64;
    char *nb = xmalloc((size_t)nc * sz);
    for (uint32_t k = 0; k < n; k++)
        memcpy(nb + k * sz, (char *)buf + ((*h + k) % *cap) * sz, sz);
    free(buf);
    *cap = nc;
    *h = 0;
    return nb;
}

void smp_qp_init(smp_qp *q, const smp_params *pr, const smp_path_ops *ops, uint64_t key,
                 uint64_t seed, uint64_t qp)
{
    memset(q, 0, sizeof *q);
    q->pr = pr;
    smp_paths_init(&q->paths, ops, pr, key, seed, qp);
    smp_cc_init(&q->cc, pr);
    q->win = smp_params_window(pr);
    q->e = xcalloc(q->win, sizeof *q->e);
}

void smp_qp_fini(smp_qp *q)
{
    smp_paths_fini(&q->paths);
    free(q->e);
    free(q->lost);
    free(q->ord);
    memset(q, 0, sizeof *q);
}

static smp_txent *ent(const smp_qp *q, uint64_t psn) { return &q->e[psn % q->win]; }

static bool lost_valid(const smp_qp *q, uint64_t psn)
{
    return psn >= q->una && psn < q->nxt && ent(q, psn)->state == TX_LOST;
}

/* Drops resend entries acknowledged meanwhile (a spurious loss). */
static void lost_trim(smp_qp *q)
{
    while (q->lost_n && !lost_valid(q, q->lost[q->lost_h])) {
        q->lost_h = (q->lost_h + 1) % q->lost_cap;
        q->lost_n--;
    }
}

static bool has_resend(const smp_qp *q)
{
    for (uint32_t k = 0; k < q->lost_n; k++)
        if (lost_valid(q, q->lost[(q->lost_h + k) % q->lost_cap]))
            return true;
    return false;
}

static bool room(const smp_qp *q)
{
    return !q->inflight_bytes || (double)(q->inflight_bytes + q->pr->mss_bytes) <= q->cc.cwnd_bytes;
}

bool smp_qp_can_send(const smp_qp *q, bool have_new)
{
    if (!room(q))
        return false;
    return has_resend(q) || (have_new && q->nxt < q->una + q->win);
}

bool smp_qp_send(smp_qp *q, int64_t now_ps, uint32_t bytes, smp_send *out)
{
    if (!room(q))
        return false;
    lost_trim(q);
    uint64_t psn;
    int32_t exclude = -1;
    smp_txent *e;
    if (q->lost_n) {
        psn = q->lost[q->lost_h];
        q->lost_h = (q->lost_h + 1) % q->lost_cap;
        q->lost_n--;
        e = ent(q, psn);
        exclude = e->path;
        q->retx++;
    } else {
        if (q->nxt >= q->una + q->win)
            return false;
        psn = q->nxt++;
        e = ent(q, psn);
        *e = (smp_txent){.bytes = bytes};
    }
    uint32_t path = smp_path_choose(&q->paths, e->bytes, now_ps, exclude);
    e->path = (uint16_t)path;
    e->sent_ps = now_ps;
    e->path_seq = smp_path_sent(&q->paths, path);
    e->state = TX_OUT;
    e->ntx++;
    q->inflight_bytes += e->bytes;
    q->sent++;
    if (q->ord_n == q->ord_cap)
        q->ord = ring_grow(q->ord, &q->ord_cap, &q->ord_h, q->ord_n, sizeof *q->ord);
    q->ord[(q->ord_h + q->ord_n++) % q->ord_cap] = (struct smp_txrec){psn, now_ps};
    *out = (smp_send){.psn = psn, .bytes = e->bytes, .path = path, .retx = exclude >= 0};
    out->entropy = smp_path_entropy(&q->paths, path, &out->flags);
    return true;
}

/* Takes psn's outstanding transmission out of flight. */
static void unflight(smp_qp *q, smp_txent *e)
{
    q->inflight_bytes -= e->bytes;
}

static void declare_lost(smp_qp *q, uint64_t psn, bool timeout, int64_t now_ps)
{
    smp_txent *e = ent(q, psn);
    unflight(q, e);
    e->state = TX_LOST;
    smp_path_lost(&q->paths, e->path, timeout, now_ps);
    if (q->lost_n == q->lost_cap)
        q->lost = ring_grow(q->lost, &q->lost_cap, &q->lost_h, q->lost_n, sizeof *q->lost);
    q->lost[(q->lost_h + q->lost_n++) % q->lost_cap] = psn;
}

/* Path order: packets of one path arrive in the order they were sent, so
 * an ACK for send order s on a path proves the earlier ones of that path
 * still outstanding lost (O(window), only when the path's ACKs skip). */
static void order_loss(smp_qp *q, uint32_t path, uint64_t seq, int64_t now_ps)
{
    smp_path *p = &q->paths.p[path];
    if (seq > p->ack_seq)
        for (uint64_t psn = q->una; psn < q->nxt; psn++) {
            smp_txent *e = ent(q, psn);
            if (e->state == TX_OUT && e->path == path && e->path_seq < seq) {
                declare_lost(q, psn, false, now_ps);
                q->lost_order++;
            }
        }
    if (seq + 1 > p->ack_seq)
        p->ack_seq = seq + 1;
}

static void ack_one(smp_qp *q, smp_txent *e, const smp_ack *a, int64_t now_ps)
{
    bool current = e->state == TX_OUT && e->path == a->path && e->sent_ps == a->sent_ps;
    if (e->state == TX_OUT) {
        unflight(q, e);
        if (!current && q->paths.p[e->path].inflight)
            q->paths.p[e->path].inflight--;  /* an older copy won the race */
    } else {
        q->spurious++;                       /* declared lost, yet arrived */
    }
    int64_t rtt = now_ps - a->sent_ps;
    uint64_t seq = e->path_seq;
    e->state = TX_ACKED;
    q->acked++;
    smp_path_ack(&q->paths, a->path, rtt, a->ce, current, now_ps);
    smp_cc_ack(&q->cc, e->bytes, rtt, a->ce, now_ps);
    if (current && q->pr->order_loss)
        order_loss(q, a->path, seq, now_ps);
}

void smp_qp_ack(smp_qp *q, int64_t now_ps, const smp_ack *a)
{
    if (a->psn >= q->una && a->psn < q->nxt) {
        smp_txent *e = ent(q, a->psn);
        if (e->state == TX_OUT || e->state == TX_LOST)
            ack_one(q, e, a, now_ps);
    }
    /* The cumulative point covers PSNs whose own ACK was lost. */
    uint64_t cum = a->cum < q->nxt ? a->cum : q->nxt;
    for (uint64_t psn = q->una; psn < cum; psn++) {
        smp_txent *e = ent(q, psn);
        if (e->state == TX_ACKED)
            continue;
        if (e->state == TX_OUT) {
            unflight(q, e);
            if (q->paths.p[e->path].inflight)
                q->paths.p[e->path].inflight--;
        }
        e->state = TX_ACKED;
        q->acked++;
        smp_cc_ack(&q->cc, e->bytes, 0, false, now_ps);
    }
    while (q->una < q->nxt && ent(q, q->una)->state == TX_ACKED) {
        ent(q, q->una)->state = TX_FREE;
        q->una++;
    }
}

/* Pops send-order records whose transmission is no longer outstanding. */
static void ord_trim(smp_qp *q)
{
    while (q->ord_n) {
        const struct smp_txrec *r = &q->ord[q->ord_h];
        if (r->psn >= q->una && r->psn < q->nxt) {
            const smp_txent *e = ent(q, r->psn);
            if (e->state == TX_OUT && e->sent_ps == r->sent_ps)
                return;
        }
        q->ord_h = (q->ord_h + 1) % q->ord_cap;
        q->ord_n--;
    }
}

int64_t smp_qp_deadline(smp_qp *q)
{
    ord_trim(q);
    return q->ord_n ? q->ord[q->ord_h].sent_ps + q->pr->rto_ps : INT64_MAX;
}

void smp_qp_timer(smp_qp *q, int64_t now_ps)
{
    bool cut = false;
    while (smp_qp_deadline(q) <= now_ps) {
        uint64_t psn = q->ord[q->ord_h].psn;
        q->ord_h = (q->ord_h + 1) % q->ord_cap;
        q->ord_n--;
        declare_lost(q, psn, true, now_ps);
        q->timeouts++;
        cut = true;
    }
    if (cut && q->pr->loss_cut)
        smp_cc_loss(&q->cc, now_ps);
}
