/*
 * port.c - egress port: admission, ECN marking, strict priorities, line-rate
 * serialisation (see port.h).
 */
#include "aisim/port.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/hook.h"
#include "aisim/qdisc.h"
#include "aisim/units.h"

/* One flow's queue at a round-robin port. */
typedef struct port_fq {
    pkt *head, *tail;
    uint32_t flow;
    int32_t next;           /* next queue in its class's ring; -1: last */
    uint8_t active;         /* in a ring (has packets) */
} port_fq;

struct port_rr {
    port_fq *q;             /* by slot; a flow keeps its slot */
    uint32_t n, cap;
    int32_t *tab;           /* open addressing: flow -> slot + 1, 0: empty */
    uint32_t tabmask;       /* table size - 1 (a power of two) */
    int32_t ring_head[PORT_MAX_PRIO], ring_tail[PORT_MAX_PRIO];
};

static void port_recv(sink *self, pkt *p);
static void port_done(sim *s, void *obj, uint64_t arg);
static void pfc_event(sim *s, void *obj, uint64_t arg);
static void shbuf_release(port *q, const pkt *p);

const port *port_of_sink(const sink *s)
{
    return s->recv == port_recv ? (const port *)(const void *)s : NULL;
}

void port_init(port *q, sim *s, pkt_pool *pool, rng *r, const port_cfg *cfg, const char *name)
{
    memset(q, 0, sizeof *q);
    q->base.recv = port_recv;
    q->base.name = name;
    q->s = s;
    q->pool = pool;
    q->r = r;
    q->cfg = *cfg;
    if (q->cfg.nprio < 1)
        q->cfg.nprio = 1;
    assert(q->cfg.nprio <= PORT_MAX_PRIO);
    assert(q->cfg.rate_bps > 0);
    assert(q->cfg.red_min_bytes == 0 || r);
    /* Exact when the rate divides 8e12; below 2^31 ps a byte, a 32-bit
     * packet size cannot overflow the product. */
    if (INT64_C(8) * PS_PER_S % q->cfg.rate_bps == 0 &&
        INT64_C(8) * PS_PER_S / q->cfg.rate_bps < INT64_C(1) << 31)
        q->ps_per_byte = INT64_C(8) * PS_PER_S / q->cfg.rate_bps;
    sim_timer_init(&q->done, port_done, q, 0);
    const qdisc_ops *qd = q->cfg.qdisc;
    if (qd && qd->is_inline)
        q->cfg.qdisc = qd = NULL;           /* the inline path: no call per packet */
    if (qd) {
        q->qd_priv = qd->priv_size ? xcalloc(1, qd->priv_size) : NULL;
        if (qd->init)
            qd->init(q->qd_priv, q->cfg.qdisc_conf, q);
    }
}

void port_set_flow_rr(port *q)
{
    assert(!q->rr && q->npkts == 0 && !q->tx);
    port_rr *r = xcalloc(1, sizeof *r);
    r->tabmask = 15;
    r->tab = xcalloc(r->tabmask + 1, sizeof *r->tab);
    for (int c = 0; c < PORT_MAX_PRIO; c++)
        r->ring_head[c] = r->ring_tail[c] = -1;
    q->rr = r;
}

void port_fini(port *q)
{
    hook_port_fini(q);
    free(q->qd_priv);
    q->qd_priv = NULL;
    if (q->rr) {
        free(q->rr->q);
        free(q->rr->tab);
        free(q->rr);
        q->rr = NULL;
    }
}

static uint32_t rr_hash(uint32_t flow, uint32_t mask)
{
    return (flow * 0x9e3779b1u) >> 7 & mask;
}

/* The slot of `flow`, made on its first packet.  Integer hashing only. */
static port_fq *rr_slot(port_rr *r, uint32_t flow)
{
    uint32_t i = rr_hash(flow, r->tabmask);
    for (; r->tab[i]; i = (i + 1) & r->tabmask)
        if (r->q[r->tab[i] - 1].flow == flow)
            return &r->q[r->tab[i] - 1];
    if (2 * (r->n + 1) > r->tabmask + 1) {          /* grow: keep it half empty */
        uint32_t mask = 2 * r->tabmask + 1;
        int32_t *tab = xcalloc(mask + 1, sizeof *tab);
        for (uint32_t k = 0; k < r->n; k++) {
            uint32_t j = rr_hash(r->q[k].flow, mask);
            while (tab[j])
                j = (j + 1) & mask;
            tab[j] = (int32_t)k + 1;
        }
        free(r->tab);
        r->tab = tab;
        r->tabmask = mask;
        i = rr_hash(flow, mask);
        while (r->tab[i])
            i = (i + 1) & mask;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->q = xrealloc(r->q, r->cap * sizeof *r->q);
    }
    port_fq *f = &r->q[r->n];
    memset(f, 0, sizeof *f);
    f->flow = flow;
    r->tab[i] = (int32_t)++r->n;
    return f;
}

static void rr_ring_push(port_rr *r, unsigned c, int32_t k)
{
    r->q[k].next = -1;
    if (r->ring_tail[c] >= 0)
        r->q[r->ring_tail[c]].next = k;
    else
        r->ring_head[c] = k;
    r->ring_tail[c] = k;
}

static void rr_push(port_rr *r, unsigned c, pkt *p)
{
    port_fq *f = rr_slot(r, p->flow_id);
    if (f->tail)
        f->tail->next = p;
    else
        f->head = p;
    f->tail = p;
    if (!f->active) {
        f->active = 1;
        rr_ring_push(r, c, (int32_t)(f - r->q));
    }
}

/* The next packet of class c: the head of the first flow in the ring,
 * which then goes to the ring's end if it has more. */
static pkt *rr_pop(port_rr *r, unsigned c)
{
    int32_t k = r->ring_head[c];
    port_fq *f = &r->q[k];
    pkt *p = f->head;
    f->head = p->next;
    if (!f->head)
        f->tail = NULL;
    r->ring_head[c] = f->next;
    if (r->ring_head[c] < 0)
        r->ring_tail[c] = -1;
    if (f->head)
        rr_ring_push(r, c, k);
    else
        f->active = 0;
    return p;
}

/* The wire p came in over, if it is a PFC link into this port's switch,
 * or NULL (no PFC here, p comes from the host's own NIC, or its link runs
 * no PFC).  The wire p arrived over stamped it (p->in) and holds the
 * thresholds of the port feeding it (wire_set_src): no position on the
 * route is assumed, so other elements (hooks, encapsulations) may sit on
 * it. */
static inline wire *pfc_ingress(const port *q, const pkt *p)
{
    if (!q->pfc_in)             /* first: p->in may be on a line of p not yet read */
        return NULL;
    wire *w = p->in;
    return w && w->pfc_on ? w : NULL;
}

static void pfc_cross(port *q, wire *w, int c);

/* PFC accounting at the switch this port belongs to: `delta` bytes of p
 * enter (> 0) or leave (< 0) its buffer, counted per class against the
 * ingress wire (the switch's side of the link).  Crossing XOFF upwards
 * sends a pause to the upstream port (the wire's src), falling to XON a
 * resume, each one wire delay away.  Inline, with the thresholds on the
 * wire's PFC line: per packet, one line and two comparisons unless a
 * threshold may have been crossed (pfc_cross). */
static inline __attribute__((always_inline)) void pfc_account(port *q, const pkt *p,
                                                              int64_t delta)
{
    wire *w = pfc_ingress(q, p);
    if (!w)
        return;
    int c = p->prio < w->pfc_nprio ? p->prio : w->pfc_nprio - 1;
    int64_t b = w->pfc_bytes[c] += delta;
    if (q->sb || (w->pfc_xoff[c] ? b <= w->pfc_xon_bytes : b > w->pfc_xoff_bytes))
        pfc_cross(q, w, c);
}

/* The thresholds of class c at wire w (dynamic with the shared pool's
 * pfc_alpha) and the pause or resume if crossed. */
static void pfc_cross(port *q, wire *w, int c)
{
    int64_t xoff = w->pfc_xoff_bytes, xon = w->pfc_xon_bytes;
    if (q->sb && q->sb->pfc_alpha > 0) {
        double dyn = q->sb->pfc_alpha * (double)(q->sb->size_bytes - q->sb->used_bytes);
        if (dyn < (double)xoff) {
            int64_t d = (int64_t)dyn;
            xon = d - (xoff - xon) > 0 ? d - (xoff - xon) : 0;
            xoff = d;
        }
    }
    if (!w->pfc_xoff[c] && w->pfc_bytes[c] > xoff) {
        w->pfc_xoff[c] = 1;
        sim_schedule(q->s, sim_now(q->s) + w->delay_ps, pfc_event, w->src, (uint64_t)c << 1 | 1);
    } else if (w->pfc_xoff[c] && w->pfc_bytes[c] <= xon) {
        w->pfc_xoff[c] = 0;
        sim_schedule(q->s, sim_now(q->s) + w->delay_ps, pfc_event, w->src, (uint64_t)c << 1);
    }
}

/* Takes the next packet of class c (which has one) off its queue: it
 * leaves the buffer, the shared pool and the PFC count of its ingress
 * (port.h: what a buffer holds). */
static pkt *dequeue(port *q, unsigned c)
{
    pkt *p;
    if (q->rr) {
        p = rr_pop(q->rr, c);
    } else {
        p = q->cls[c].head;
        q->cls[c].head = p->next;
        if (!q->cls[c].head)
            q->cls[c].tail = NULL;
    }
    /* The new head leaves one transmission from now, after hundreds of
     * other events: start loading it.  In a deep queue it has waited long
     * enough to leave the cache, and this load was the largest miss of a
     * PFC-held fabric (docs/benchmarks.md, issue 10's RDMA case). */
    __builtin_prefetch(p->next);
    p->next = NULL;
    q->bytes -= p->size_bytes;
    q->cls[c].bytes -= p->size_bytes;
    q->npkts--;
    shbuf_release(q, p);
    pfc_account(q, p, -(int64_t)p->size_bytes);
    if (q->wm)
        hook_wm_fall(q, c);
    if (q->cfg.qdisc && q->cfg.qdisc->mark && q->cfg.qdisc->mark(q->qd_priv, q, p, c) == QDISC_MARK) {
        p->flags |= PKT_F_CE;
        q->stat_mark_pkts++;
    }
    return p;
}

uint32_t port_head_size(const port *q, unsigned c)
{
    if (q->rr)
        return q->rr->q[q->rr->ring_head[c]].head->size_bytes;
    return q->cls[c].head->size_bytes;
}

void *port_qdisc_priv(const port *q) { return q->qd_priv; }

void port_qdisc_stats(const port *q, unsigned c, qdisc_stats *out)
{
    memset(out, 0, sizeof *out);
    if (q->cfg.qdisc && q->cfg.qdisc->stats)
        q->cfg.qdisc->stats(q->qd_priv, q, c, out);
}

int64_t port_backlog(const port *q)
{
    return q->bytes + (q->tx ? q->tx->size_bytes : 0);
}

void port_set_source(port *q, port_source *src)
{
    q->source = src;
    q->pulls = src != NULL;
}

/* A packet of class c from the port's source: an arrival (counted, past
 * the hooks) that skips the buffer; NULL if none is ready. */
static pkt *pull(port *q, int c)
{
    pkt *p;
    while ((p = q->source->pull(q->source, q, c))) {
        q->stat_rx_pkts++;
        q->stat_rx_bytes += p->size_bytes;
        if (!q->hooks || !hook_run(q, p))
            return p;
    }
    return NULL;
}

static void start_tx_as(port *q, pkt *p);

/* A discipline's scheduler picks among the classes with packets queued and
 * not paused; pulled packets (a NIC's source) come after, in class order. */
static void start_tx_qdisc(port *q)
{
    unsigned ready = 0;
    for (int c = 0; c < q->cfg.nprio; c++)
        if (q->cls[c].bytes && !(q->pfc_paused >> c & 1))
            ready |= 1u << c;
    if (ready) {
        int c = q->cfg.qdisc->dequeue(q->qd_priv, q, ready);
        assert(c >= 0 && (ready >> c & 1));
        start_tx_as(q, dequeue(q, (unsigned)c));
        return;
    }
    pkt *p;
    for (int c = 0; q->pulls && c < q->cfg.nprio; c++)
        if (!(q->pfc_paused >> c & 1) && (p = pull(q, c))) {
            start_tx_as(q, p);
            return;
        }
}

static void start_tx(port *q)
{
    if (__builtin_expect(q->cfg.qdisc && q->cfg.qdisc->dequeue, 0)) {
        start_tx_qdisc(q);
        return;
    }
    for (int c = 0; c < q->cfg.nprio; c++) {
        if (q->pfc_paused >> c & 1)
            continue;
        pkt *p;
        if (q->cls[c].bytes)
            p = dequeue(q, (unsigned)c);
        else if (!q->pulls || !(p = pull(q, c)))
            continue;
        start_tx_as(q, p);
        return;
    }
}

/* p goes to the serialiser. */
static inline void start_tx_as(port *q, pkt *p)
{
    q->tx = p;
    if (q->tap)                 /* as a capture on a host: when it is sent */
        q->tap(q->tap_ctx, p);
    int64_t tx = q->ps_per_byte ? (int64_t)p->size_bytes * q->ps_per_byte
                                : units_tx_time_ps(p->size_bytes, q->cfg.rate_bps);
    sim_timer_arm(q->s, &q->done, sim_now(q->s) + tx);
}

/* A pause (arg & 1) or resume of class arg >> 1 reaches port q. */
static void pfc_event(sim *s, void *obj, uint64_t arg)
{
    port *q = obj;
    int c = (int)(arg >> 1);
    int was = q->pfc_paused >> c & 1;
    if ((arg & 1) && !was)
        q->pfc_since[c] = sim_now(s);
    else if (!(arg & 1) && was)
        q->stat_pfc_paused_ps += sim_now(s) - q->pfc_since[c];
    q->pfc_paused = (uint8_t)((q->pfc_paused & ~(1u << c)) | (arg & 1) << c);
    if (arg & 1) {
        q->stat_pfc_pauses++;
        if (!was && q->pfc_watch)       /* may close a cycle of paused ports */
            q->pfc_watch(q->pfc_watch_ctx, q, c);
    } else if (!q->tx && !q->down) {
        q->busy_since = sim_now(s);
        start_tx(q);
    }
}

/* The inline ramp (DCQCN's Kmin/Kmax/Pmax; qdisc ecn_ramp): the average of
 * class c's queue is updated on each decision (each arrival; each
 * departure when marking at dequeue), without idle-time correction; from
 * min (`min`: cfg's red_min_bytes, or deq_red_min_bytes) to max the marking
 * probability grows linearly to max_p, with no count between marks; above
 * max everything is marked.  Floyd and Jacobson's RED is qdisc_red. */
static int red_says_mark_avg(port *q, unsigned c, int64_t min)
{
    double *avg = &q->cls[c].red_avg;
    *avg += q->cfg.red_weight * ((double)q->cls[c].bytes - *avg);
    if (*avg < (double)min)
        return 0;
    if (*avg >= (double)q->cfg.red_max_bytes)
        return 1;
    double pr = q->cfg.red_max_p * (*avg - (double)min) / (double)(q->cfg.red_max_bytes - min);
    return rng_u01(q->r) < pr;
}

/* With weight 1 (the instantaneous queue, as the HPCC fork's switches
 * mark) the average is the queue itself, exactly (integers in doubles), so
 * below min nothing is computed: the common case costs two comparisons. */
static inline int red_says_mark(port *q, unsigned c, int64_t min)
{
    if (q->cfg.red_weight == 1 && q->cls[c].bytes < min)
        return 0;
    return red_says_mark_avg(q, c, min);
}

/* Marking at dequeue: p has left class c's queue and starts its
 * transmission; the bytes it leaves behind decide (port.h).  The port owns
 * p here: the callback's const is for captures. */
static void mark_at_dequeue(void *ctx, const pkt *cp)
{
    port *q = ctx;
    pkt *p = (pkt *)(uintptr_t)cp;
    if (!(p->flags & PKT_F_ECT))
        return;
    unsigned c = p->prio < q->cfg.nprio ? p->prio : (unsigned)q->cfg.nprio - 1;
    int mark = q->deq_ecn_k_bytes > 0 && q->cls[c].bytes > q->deq_ecn_k_bytes;
    if (q->deq_red_min_bytes > 0 && red_says_mark(q, c, q->deq_red_min_bytes))
        mark = 1;
    if (mark) {
        p->flags |= PKT_F_CE;
        q->stat_mark_pkts++;
    }
}

void port_set_mark_dequeue(port *q)
{
    assert(!q->tap && q->npkts == 0 && !q->tx);
    assert(q->cfg.red_min_bytes == 0 || q->r);
    q->deq_ecn_k_bytes = q->cfg.ecn_k_bytes;
    q->deq_red_min_bytes = q->cfg.red_min_bytes;
    q->cfg.ecn_k_bytes = q->cfg.red_min_bytes = 0;
    q->tap = mark_at_dequeue;
    q->tap_ctx = q;
}

int port_marks_ecn(const port *q)
{
    return q->cfg.ecn_k_bytes > 0 || q->deq_ecn_k_bytes > 0 || port_red_on(q);
}

int port_red_on(const port *q)
{
    return q->cfg.red_min_bytes > 0 || q->deq_red_min_bytes > 0;
}

static void drop(port *q, pkt *p)
{
    q->stat_drop_pkts++;
    q->stat_drop_bytes += p->size_bytes;
    pkt_free(q->pool, p);
}

/* A packet that came over a PFC link is lossless traffic: dropping it is a
 * broken invariant, not an outcome (topology checks refuse buffers that
 * fan-in can overflow: lossless.c), so the run fails, naming the port. */
static void __attribute__((cold, noinline)) lossless_drop(port *q, const pkt *p, const wire *w,
                                                           const char *why)
{
    q->stat_lossless_drops++;
    sim_fail(q->s, "lossless drop: port %s dropped a %u-byte packet of class %u that came over "
             "PFC link %s (%s; queue %lld B, buffer %lld B)", q->base.name,
             (unsigned)p->size_bytes, (unsigned)p->prio, w->base.name, why,
             (long long)q->bytes, (long long)q->cfg.buffer_bytes);
}

/* A drop at admission (buffer, pool or discipline). */
static inline void drop_admit(port *q, pkt *p, const char *why)
{
    const wire *w = pfc_ingress(q, p);
    if (__builtin_expect(w != NULL, 0))
        lossless_drop(q, p, w, why);
    drop(q, p);
}

/* Shared-buffer admission of p into class c (port.h): the pool must have
 * room, and a lossy packet must keep its queue within the dynamic
 * threshold alpha * (free pool). */
static int shbuf_admit(port *q, const pkt *p, unsigned c)
{
    shbuf *b = q->sb;
    int64_t sz = p->size_bytes;
    if (b->used_bytes + sz > b->size_bytes) {
        b->stat_full_drops++;
        return 0;
    }
    if ((double)(q->cls[c].bytes + sz) > b->alpha * (double)(b->size_bytes - b->used_bytes) &&
        !pfc_ingress(q, p)) {           /* lossless traffic is PFC's to bound */
        b->stat_dt_drops++;
        return 0;
    }
    return 1;
}

/* p takes its place in the pool (admitted) ... */
static void shbuf_take(port *q, const pkt *p)
{
    shbuf *b = q->sb;
    if (!b)
        return;
    b->used_bytes += p->size_bytes;
    if (b->used_bytes > b->stat_max_used)
        b->stat_max_used = b->used_bytes;
}

/* ... and leaves it (transmitted or lost). */
static void shbuf_release(port *q, const pkt *p)
{
    if (q->sb)
        q->sb->used_bytes -= p->size_bytes;
}

static inline __attribute__((always_inline)) void enqueue(port *q, pkt *p, unsigned c);

/* Admission and enqueue of an arriving packet (after the hooks).  Forced
 * inline: as a call from port_recv it cost 1.6 % more instructions on
 * net/leafspine-websearch (cachegrind), where the hooks cost nothing. */
static inline __attribute__((always_inline)) void admit(port *q, pkt *p)
{
    if (q->down) {
        q->stat_fail_drops++;
        drop(q, p);
        return;
    }
    unsigned c = p->prio < q->cfg.nprio ? p->prio : (unsigned)q->cfg.nprio - 1;
    if (q->bytes + p->size_bytes > q->cfg.buffer_bytes) {
        drop_admit(q, p, "buffer full");
        return;
    }
    if (q->sb && !shbuf_admit(q, p, c)) {
        drop_admit(q, p, "shared pool full");
        return;
    }
    if (__builtin_expect(q->cfg.qdisc && q->cfg.qdisc->enqueue, 0)) {
        int v = q->cfg.qdisc->enqueue(q->qd_priv, q, p, c);
        if (v == QDISC_DROP) {
            drop_admit(q, p, q->cfg.qdisc->name);
            return;
        }
        if (v == QDISC_MARK) {
            p->flags |= PKT_F_CE;
            q->stat_mark_pkts++;
        }
        enqueue(q, p, c);
        return;
    }
    /* The DCTCP step marks ECN-capable packets and leaves the others to
     * drop-tail; RED marks ECN-capable packets and drops the others
     * (RFC 3168).  Both look at the packet's own queue (class c). */
    int ect = p->flags & PKT_F_ECT;
    int mark = ect && q->cfg.ecn_k_bytes > 0 && q->cls[c].bytes > q->cfg.ecn_k_bytes;
    if (q->cfg.red_min_bytes > 0 && red_says_mark(q, c, q->cfg.red_min_bytes)) {
        if (!ect) {
            drop_admit(q, p, "RED drops what it cannot mark");
            return;
        }
        mark = 1;
    }
    if (mark) {
        p->flags |= PKT_F_CE;
        q->stat_mark_pkts++;
    }
    enqueue(q, p, c);
}

/* p joins class c (admitted). */
static inline __attribute__((always_inline)) void enqueue(port *q, pkt *p, unsigned c)
{
    p->next = NULL;
    if (q->rr) {
        rr_push(q->rr, c, p);
    } else {
        if (q->cls[c].tail)
            q->cls[c].tail->next = p;
        else
            q->cls[c].head = p;
        q->cls[c].tail = p;
    }
    q->bytes += p->size_bytes;
    q->cls[c].bytes += p->size_bytes;
    q->npkts++;
    if (q->bytes > q->stat_max_bytes)
        q->stat_max_bytes = q->bytes;
    shbuf_take(q, p);
    pfc_account(q, p, p->size_bytes);
    if (!q->tx) {
        q->busy_since = sim_now(q->s);
        start_tx(q);
    }
    if (q->wm)                  /* after start_tx: the packet in service is not queued */
        hook_wm_rise(q, c);
    /* A paused class that was empty now holds a packet: it may close a
     * cycle of paused ports (the PFC deadlock watch; line 0, no cost
     * unless paused). */
    if (__builtin_expect(q->pfc_paused >> c & 1, 0) && q->cls[c].bytes == p->size_bytes &&
        q->pfc_watch)
        q->pfc_watch(q->pfc_watch_ctx, q, (int)c);
}

void port_admit(port *q, pkt *p)
{
    admit(q, p);
}

/* Arrival: counted, then the hooks (hook.h), then admission (a capture
 * sees the packet when its transmission starts: start_tx). */
static void port_recv(sink *self, pkt *p)
{
    port *q = (port *)self;
    q->stat_rx_pkts++;
    q->stat_rx_bytes += p->size_bytes;
    if (q->hooks && hook_run(q, p))
        return;
    admit(q, p);
}

void port_kick(port *q)
{
    if (q->tx || q->down)
        return;
    q->busy_since = sim_now(q->s);
    start_tx(q);
}

void port_set_down(port *q, int down)
{
    q->down = down != 0;
    if (!down)
        return;
    if (q->tx) {
        sim_timer_disarm(q->s, &q->done);
        q->stat_busy_ps += sim_now(q->s) - q->busy_since;
        q->stat_fail_drops++;
        drop(q, q->tx);
        q->tx = NULL;
    }
    for (int c = 0; c < q->cfg.nprio; c++)
        while (q->cls[c].bytes) {
            pkt *p = dequeue(q, (unsigned)c);
            q->stat_fail_drops++;
            drop(q, p);
        }
    assert(q->bytes == 0 && q->npkts == 0);
}

static void port_done(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    port *q = obj;
    pkt *p = q->tx;
    q->tx = NULL;
    q->stat_tx_pkts++;
    q->stat_tx_bytes += p->size_bytes;
    start_tx(q);
    if (!q->tx) {
        q->stat_busy_ps += sim_now(s) - q->busy_since;
    }
    pkt_forward(p, q->next);
}
