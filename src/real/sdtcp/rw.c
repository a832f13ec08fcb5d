/* rw.c - the real-mode SDTCP rewriter's core (rw.h). */
#include "real/sdtcp/rw.h"

#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

enum { RW_MAX_FLOWS = 1 << 20, RW_NLEVELS = 3 };

typedef struct rw_flow {
    uint32_t raddr, saddr;
    uint16_t rport, sport;
    int8_t rshift;              /* the receiver's announced shift, -1: no option */
    bool rsyn, ssyn, sws;       /* receiver's SYN seen, sender's SYN seen, it had wscale */
    bool have_ack, closed;
    uint32_t ack_hi;
    uint64_t bytes;
    int64_t first_ns, last_ns;
    /* the rule */
    bool capped;
    uint32_t cap;
    int64_t cap_ns, cap_match_ns;
} rw_flow;

typedef struct rw_pending {
    int64_t at_ns;
    sdtcp_mod m;
} rw_pending;

struct rw {
    rw_params p;
    sdtcp *pol;
    rw_flow *f;
    size_t nf, capf;
    uint32_t *hash;             /* index + 1 of the newest flow of a tuple, 0 empty */
    size_t hcap;
    rw_pending *pend;
    size_t npend, cappend;
    sdtcp_flow *obs;
    size_t capobs;
    /* watermarks */
    int64_t mark[RW_NLEVELS];
    bool armed[RW_NLEVELS];
    bool notified;
    bool want;                  /* a rise not sent yet (min_gap) */
    int64_t last_notify_ns;
    rw_counts k;
};

static uint16_t rd16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }
static uint32_t rd32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}
static void wr16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

rw *rw_create(const rw_params *p)
{
    rw *r = xcalloc(1, sizeof *r);
    r->p = *p;
    r->pol = sdtcp_create(&p->pol);
    r->hcap = 1024;
    r->hash = xcalloc(r->hcap, sizeof *r->hash);
    r->mark[0] = (int64_t)(p->notify * (double)p->buffer_bytes);
    r->mark[1] = p->pol.q_low_bytes;
    r->mark[2] = p->pol.q_high_bytes;
    for (int i = 0; i < RW_NLEVELS; i++)
        r->armed[i] = true;
    return r;
}

void rw_destroy(rw *r)
{
    if (!r)
        return;
    sdtcp_destroy(r->pol);
    free(r->f);
    free(r->hash);
    free(r->pend);
    free(r->obs);
    free(r);
}

static size_t tuple_hash(uint32_t ra, uint16_t rp, uint32_t sa, uint16_t sp, size_t cap)
{
    uint64_t h = ((uint64_t)ra << 32 | sa) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)rp << 16 | sp) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 29;
    return (size_t)(h & (cap - 1));
}

static bool same(const rw_flow *f, uint32_t ra, uint16_t rp, uint32_t sa, uint16_t sp)
{
    return f->raddr == ra && f->rport == rp && f->saddr == sa && f->sport == sp;
}

/* The slot of a tuple in the hash (empty or holding it). */
static size_t slot_of(const rw *r, uint32_t ra, uint16_t rp, uint32_t sa, uint16_t sp)
{
    size_t i = tuple_hash(ra, rp, sa, sp, r->hcap);
    while (r->hash[i] && !same(&r->f[r->hash[i] - 1], ra, rp, sa, sp))
        i = (i + 1) & (r->hcap - 1);
    return i;
}

static rw_flow *flow_find(const rw *r, uint32_t ra, uint16_t rp, uint32_t sa, uint16_t sp)
{
    size_t i = slot_of(r, ra, rp, sa, sp);
    return r->hash[i] ? &r->f[r->hash[i] - 1] : NULL;
}

static rw_flow *flow_new(rw *r, uint32_t ra, uint16_t rp, uint32_t sa, uint16_t sp, int64_t now)
{
    if (r->nf >= RW_MAX_FLOWS)
        return NULL;
    if (2 * (r->nf + 1) > r->hcap) {            /* rehash at half full */
        free(r->hash);
        r->hcap *= 2;
        r->hash = xcalloc(r->hcap, sizeof *r->hash);
        for (size_t j = 0; j < r->nf; j++) {
            const rw_flow *g = &r->f[j];
            size_t i = slot_of(r, g->raddr, g->rport, g->saddr, g->sport);
            r->hash[i] = (uint32_t)(j + 1);     /* later flows of a tuple win */
        }
    }
    if (r->nf == r->capf) {
        r->capf = r->capf ? 2 * r->capf : 256;
        r->f = xrealloc(r->f, r->capf * sizeof *r->f);
    }
    rw_flow *f = &r->f[r->nf];
    *f = (rw_flow){.raddr = ra, .saddr = sa, .rport = rp, .sport = sp, .rshift = -1,
                   .first_ns = now, .last_ns = now};
    r->hash[slot_of(r, ra, rp, sa, sp)] = (uint32_t)(++r->nf);
    r->k.flows++;
    return f;
}

/* The shift of the receiver's windows, or -1 while a SYN is missing. */
static int flow_scale(const rw_flow *f)
{
    if (!f->rsyn || !f->ssyn)
        return -1;
    return f->rshift >= 0 && f->sws ? f->rshift : 0;
}

int rw_flow_scale(const rw *r, uint32_t raddr, uint16_t rport, uint32_t saddr, uint16_t sport)
{
    const rw_flow *f = flow_find(r, raddr, rport, saddr, sport);
    return f ? flow_scale(f) : -1;
}

/* The rule of f, after its timeouts. */
static bool cap_live(rw *r, rw_flow *f, int64_t now)
{
    if (!f->capped)
        return false;
    const sdtcp_params *q = &r->p.pol;
    if ((q->idle_ps > 0 && now - f->cap_match_ns > q->idle_ps / 1000) ||
        (q->hard_ps > 0 && now - f->cap_ns > q->hard_ps / 1000)) {
        f->capped = false;
        r->k.expired++;
        return false;
    }
    return true;
}

int rw_packet(rw *r, uint8_t *pkt, size_t len, int64_t now)
{
    r->k.pkts++;
    if (len < 20 || pkt[0] >> 4 != 4 || pkt[9] != 6)
        goto bad;
    size_t ihl = (size_t)(pkt[0] & 15) * 4, tot = rd16(pkt + 2);
    if (ihl < 20 || tot > len || tot < ihl + 20 || (rd16(pkt + 6) & 0x1fff))
        goto bad;                               /* a fragment has no TCP header to edit */
    uint8_t *t = pkt + ihl;
    size_t doff = (size_t)(t[12] >> 4) * 4;
    if (doff < 20 || ihl + doff > tot)
        goto bad;
    uint32_t src = rd32(pkt + 12), dst = rd32(pkt + 16);
    uint16_t sp = rd16(t), dp = rd16(t + 2);
    uint8_t fl = t[13];
    bool from_rcv = src == r->p.receiver_ip;
    uint32_t ra = from_rcv ? src : dst, sa = from_rcv ? dst : src;
    uint16_t rp = from_rcv ? sp : dp, ssp = from_rcv ? dp : sp;
    rw_flow *f = flow_find(r, ra, rp, sa, ssp);
    if (fl & 0x02) {                            /* SYN */
        r->k.syns++;
        tcpwire_opts o;
        tcpwire_parse_opts(t + 20, doff - 20, &o);
        bool synack = fl & 0x10;
        /* a new connection on the tuple: a SYN without ACK, or the first SYN of an
         * unknown or finished tuple */
        if (!f || (!synack && (f->rsyn || f->ssyn)) || f->closed)
            f = flow_new(r, ra, rp, sa, ssp, now);
        if (!f)
            return 0;
        if (from_rcv) {
            r->k.rscale[o.has_wscale ? o.wscale : 15]++;
            f->rsyn = true;
            f->rshift = o.has_wscale ? (int8_t)o.wscale : -1;
        } else {
            f->ssyn = true;
            f->sws = o.has_wscale;
        }
        return 0;
    }
    if (!f || !from_rcv)
        return 0;
    f->last_ns = now;
    if (fl & 0x05) {                            /* FIN or RST */
        r->k.fins++;
        f->closed = true;
    }
    if (!(fl & 0x10))
        return 0;
    r->k.acks++;
    uint32_t ack = rd32(t + 8);
    if (!f->have_ack) {
        f->have_ack = true;
        f->ack_hi = ack;
    } else if ((int32_t)(ack - f->ack_hi) > 0) {
        f->bytes += ack - f->ack_hi;
        f->ack_hi = ack;
    }
    if (!cap_live(r, f, now))
        return 0;
    f->cap_match_ns = now;
    int shift = flow_scale(f);
    if (shift < 0) {
        r->k.unknown_scale++;
        return 0;
    }
    uint16_t old = rd16(t + 14);
    uint16_t nw = tcpwire_win_cap(old, (uint8_t)shift, f->cap, r->p.round);
    if (nw == old)
        return 0;
    if (!r->p.rewrite) {
        r->k.would_rewrite++;
        return 0;
    }
    wr16(t + 14, nw);
    wr16(t + 16, tcpwire_csum_update16(rd16(t + 16), old, nw));
    r->k.rewritten++;
    return 1;
bad:
    r->k.parse_errors++;
    return -1;
}

int rw_tcp_csum_full(const uint8_t *pkt, size_t len)
{
    if (len < 20 || pkt[0] >> 4 != 4 || pkt[9] != 6)
        return -1;
    size_t ihl = (size_t)(pkt[0] & 15) * 4, tot = rd16(pkt + 2);
    if (ihl < 20 || tot > len || tot < ihl + 20)
        return -1;
    size_t tl = tot - ihl;
    uint8_t ph[12];
    memcpy(ph, pkt + 12, 8);
    ph[8] = 0;
    ph[9] = 6;
    wr16(ph + 10, (uint16_t)tl);
    uint32_t s = tcpwire_sum(ph, sizeof ph, 0);
    s = tcpwire_sum(pkt + ihl, 16, s);          /* header up to the checksum */
    s = tcpwire_sum(pkt + ihl + 18, tl - 18, s);
    return tcpwire_fold(s);
}

static void apply(rw *r, const sdtcp_mod *m, int64_t now)
{
    if (m->flow == 0 || m->flow > r->nf)
        return;
    rw_flow *f = &r->f[m->flow - 1];
    if (m->del) {
        f->capped = false;
        return;
    }
    f->capped = true;
    f->cap = m->wnd;
    f->cap_ns = f->cap_match_ns = now;
}

static void apply_due(rw *r, int64_t now)
{
    size_t j = 0;
    for (size_t i = 0; i < r->npend; i++) {
        if (r->pend[i].at_ns <= now)
            apply(r, &r->pend[i].m, now);
        else
            r->pend[j++] = r->pend[i];
    }
    r->npend = j;
}

static void decide(rw *r, int64_t now, int64_t q, bool cleared, rw_event *ev)
{
    const sdtcp_params *pp = &r->p.pol;
    size_t n = 0;
    if (!cleared) {
        int64_t win = r->p.stats_ns;
        for (size_t i = 0; i < r->nf; i++) {
            const rw_flow *f = &r->f[i];
            if (f->closed || now - f->last_ns > win)
                continue;
            if (n == r->capobs) {
                r->capobs = r->capobs ? 2 * r->capobs : 64;
                r->obs = xrealloc(r->obs, r->capobs * sizeof *r->obs);
            }
            r->obs[n++] = (sdtcp_flow){.flow = (uint32_t)(i + 1), .bytes = f->bytes,
                                       .age_ps = (now - f->first_ns) * 1000};
        }
    }
    sdtcp_obs o = {.cleared = cleared, .sw = 0, .port = 0, .queue_bytes = q,
                   .rate_bps = r->p.rate_bps, .flows = r->obs, .nflows = n};
    const sdtcp_mod *mods;
    size_t nm = sdtcp_decide(r->pol, &o, &mods);
    for (size_t i = 0; i < nm; i++) {
        if (r->npend == r->cappend) {
            r->cappend = r->cappend ? 2 * r->cappend : 64;
            r->pend = xrealloc(r->pend, r->cappend * sizeof *r->pend);
        }
        r->pend[r->npend++] = (rw_pending){now + r->p.delay_ns, mods[i]};
        if (mods[i].del)
            r->k.dels++;
        else
            r->k.mods++;
    }
    if (ev) {
        ev->kind = cleared ? 2 : 1;
        ev->band = q < pp->q_low_bytes ? 0 : q < pp->q_high_bytes ? 1 : 2;
        ev->nflows = n;
        ev->nmods = nm;
    }
    if (cleared)
        r->k.clears++;
    else
        r->k.notifications++;
}

void rw_control(rw *r, int64_t now, int64_t q, rw_event *ev)
{
    if (ev)
        *ev = (rw_event){0};
    apply_due(r, now);
    int64_t width = (int64_t)((r->p.notify - r->p.clear) * (double)r->p.buffer_bytes);
    for (int i = 0; i < RW_NLEVELS; i++) {
        if (r->armed[i] && q > r->mark[i]) {
            r->armed[i] = false;
            r->want = true;
        } else if (!r->armed[i] && q <= r->mark[i] - width) {
            r->armed[i] = true;
        }
    }
    int64_t clear_q = (int64_t)(r->p.clear * (double)r->p.buffer_bytes);
    if (q <= r->mark[0])
        r->want = false;
    if (r->notified && q <= clear_q) {
        r->notified = false;
        decide(r, now, q, true, ev);
        if (r->p.delay_ns == 0)
            apply_due(r, now);
        return;
    }
    bool gap_ok = !r->notified || now - r->last_notify_ns >= r->p.min_gap_ns;
    bool again = r->notified && r->p.renotify_ns > 0 && q > r->mark[0] &&
                 now - r->last_notify_ns >= r->p.renotify_ns;
    if (((r->want && q > r->mark[0]) || again) && gap_ok) {
        r->notified = true;
        r->want = false;
        r->last_notify_ns = now;
        decide(r, now, q, false, ev);
        if (r->p.delay_ns == 0)
            apply_due(r, now);
    }
}

void rw_get_counts(const rw *r, rw_counts *k) { *k = r->k; }

size_t rw_rules(const rw *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nf; i++)
        n += r->f[i].capped;
    return n;
}
