/*
 * hook.c - hook chains and watermarks on egress ports (see hook.h).
 *
 * A port's chain is one allocation: a count and an array of hook pointers,
 * grown by doubling when a hook is attached and freed when the last one is
 * detached, so that a port without hooks keeps q->hooks == NULL and its
 * arrival path a single pointer test.  Attaching happens at events (a fault
 * starting), never per packet.
 *
 * Delays: hook_delay() takes a record from the hook's free list (records
 * are allocated on first need and reused, so a warm hook allocates
 * nothing), schedules a one-shot event for the release and counts the
 * packet as held at the port.  Equal delays keep arrival order: the
 * engine runs equal times in scheduling order.  The record remembers the
 * hook's position in the chain, so that the release finds where to resume
 * without a search unless the chain changed meanwhile.
 *
 * Watermarks are a singly linked list per port, in attach order; each
 * keeps one bit of state (above or not), which is what makes a crossing
 * notify once.
 */
#include "aisim/hook.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

struct hook_chain {
    uint32_t n, cap;            /* hooks, slots */
    hook *h[];                  /* in attach order */
};

struct hook_held {
    hook_held *next;            /* free list */
    hook_held *all;             /* every record of the hook */
    hook *h;
    port *q;
    pkt *p;
    uint32_t pos;               /* h's index in q's chain when p was taken */
};

void hook_init(hook *h, hook_fn *fn, void *ctx, const char *name)
{
    memset(h, 0, sizeof *h);
    h->fn = fn;
    h->ctx = ctx;
    h->name = name;
}

void hook_fini(hook *h)
{
    for (hook_held *r = h->held_all, *nr; r; r = nr) {
        nr = r->all;
        free(r);
    }
    h->held_all = h->held_free = NULL;
}

/* ---- chains -------------------------------------------------------------- */

static int64_t chain_find(const hook_chain *c, const hook *h)
{
    if (c)
        for (uint32_t i = 0; i < c->n; i++)
            if (c->h[i] == h)
                return i;
    return -1;
}

void hook_attach(port *q, hook *h)
{
    assert(chain_find(q->hooks, h) < 0);
    hook_chain *c = q->hooks;
    if (!c || c->n == c->cap) {
        uint32_t cap = c ? 2 * c->cap : 2;
        c = xrealloc(c, sizeof *c + cap * sizeof c->h[0]);
        if (!q->hooks)
            c->n = 0;
        c->cap = cap;
        q->hooks = c;
    }
    c->h[c->n++] = h;
}

void hook_detach(port *q, hook *h)
{
    hook_chain *c = q->hooks;
    int64_t i = chain_find(c, h);
    if (i < 0)
        return;
    memmove(&c->h[i], &c->h[i + 1], (c->n - (uint32_t)i - 1) * sizeof c->h[0]);
    if (--c->n == 0) {
        free(c);
        q->hooks = NULL;
    }
}

void hook_port_fini(port *q)
{
    free(q->hooks);
    q->hooks = NULL;
}

/* Calls fn(q, h) for every egress port of `node`; returns how many. */
static int each_node_port(topo *t, int node, hook *h, void (*fn)(port *q, hook *h))
{
    size_t n = topo_node_degree(t, node);
    for (size_t i = 0; i < n; i++)
        fn(topo_node_port(t, node, i), h);
    return (int)n;
}

int hook_attach_node(topo *t, int node, hook *h)
{
    return each_node_port(t, node, h, hook_attach);
}

int hook_detach_node(topo *t, int node, hook *h)
{
    return each_node_port(t, node, h, hook_detach);
}

void hook_redirect(hook *h, port *q, pkt *p, port *to)
{
    assert(!p->rt && to != q);
    (void)q;
    h->stat_redirect_pkts++;
    to->base.recv(&to->base, p);
}

/* Runs the chain from position i; non-zero if a hook took p. */
static int run_from(port *q, pkt *p, uint32_t i)
{
    for (; q->hooks && i < q->hooks->n; i++) {
        hook *h = q->hooks->h[i];
        if (h->fn(h, q, p) != HOOK_PASS)
            return 1;
    }
    return 0;
}

int hook_run(port *q, pkt *p)
{
    return run_from(q, p, 0);
}

/* Where p resumes after h: behind h if h is still attached, else past the
 * whole chain (admission).  `pos` is a guess of h's index. */
static uint32_t resume_pos(const port *q, const hook *h, uint32_t pos)
{
    const hook_chain *c = q->hooks;
    if (!c)
        return 0;
    if (pos < c->n && c->h[pos] == h)
        return pos + 1;
    int64_t i = chain_find(c, h);
    return i >= 0 ? (uint32_t)i + 1 : c->n;
}

static void resume_at(port *q, pkt *p, uint32_t pos)
{
    if (!run_from(q, p, pos))
        port_admit(q, p);
}

void hook_resume(port *q, hook *h, pkt *p)
{
    resume_at(q, p, resume_pos(q, h, 0));
}

/* ---- verdicts ------------------------------------------------------------ */

void hook_drop(hook *h, port *q, pkt *p)
{
    q->stat_drop_pkts++;
    q->stat_drop_bytes += p->size_bytes;
    q->stat_hook_drops++;
    h->stat_drop_pkts++;
    h->stat_drop_bytes += p->size_bytes;
    pkt_free(q->pool, p);
}

static void held_release(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    hook_held *r = obj;
    port *q = r->q;
    pkt *p = r->p;
    uint32_t pos = resume_pos(q, r->h, r->pos);
    q->hook_held_bytes -= p->size_bytes;
    q->hook_held_pkts--;
    r->p = NULL;
    r->next = r->h->held_free;
    r->h->held_free = r;
    resume_at(q, p, pos);
}

void hook_delay(hook *h, port *q, pkt *p, int64_t delay_ps)
{
    assert(delay_ps >= 0);
    hook_held *r = h->held_free;
    if (r) {
        h->held_free = r->next;
    } else {
        r = xmalloc(sizeof *r);
        r->all = h->held_all;
        h->held_all = r;
    }
    int64_t pos = chain_find(q->hooks, h);
    r->h = h;
    r->q = q;
    r->p = p;
    r->pos = pos >= 0 ? (uint32_t)pos : 0;
    q->hook_held_bytes += p->size_bytes;
    q->hook_held_pkts++;
    h->stat_delay_pkts++;
    sim_schedule(q->s, sim_now(q->s) + delay_ps, held_release, r, 0);
}

/* ---- watermarks ---------------------------------------------------------- */

void hook_wm_init(hook_wm *w, int cls, int64_t high_bytes, int64_t low_bytes,
                  hook_wm_fn *fn, void *ctx)
{
    assert(cls >= -1 && cls < PORT_MAX_PRIO);
    assert(0 <= low_bytes && low_bytes <= high_bytes);
    memset(w, 0, sizeof *w);
    w->cls = cls;
    w->high_bytes = high_bytes;
    w->low_bytes = low_bytes;
    w->fn = fn;
    w->ctx = ctx;
}

static int64_t wm_level(const port *q, const hook_wm *w)
{
    return w->cls < 0 ? q->bytes : q->cls[w->cls].bytes;
}

static void wm_check_rise(port *q, hook_wm *w)
{
    if (!w->above && wm_level(q, w) > w->high_bytes) {
        w->above = true;
        w->stat_rises++;
        w->fn(w->ctx, q, w, true);
    }
}

void hook_wm_attach(port *q, hook_wm *w)
{
    hook_wm **pp = &q->wm;
    while (*pp) {
        assert(*pp != w);
        pp = &(*pp)->next;
    }
    w->next = NULL;
    *pp = w;
    wm_check_rise(q, w);
}

void hook_wm_detach(port *q, hook_wm *w)
{
    for (hook_wm **pp = &q->wm; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            w->next = NULL;
            return;
        }
}

void hook_wm_rise(port *q, unsigned c)
{
    for (hook_wm *w = q->wm; w; w = w->next)
        if (w->cls < 0 || (unsigned)w->cls == c)
            wm_check_rise(q, w);
}

void hook_wm_fall(port *q, unsigned c)
{
    for (hook_wm *w = q->wm; w; w = w->next)
        if (w->above && (w->cls < 0 || (unsigned)w->cls == c) &&
            wm_level(q, w) <= w->low_bytes) {
            w->above = false;
            w->stat_falls++;
            w->fn(w->ctx, q, w, false);
        }
}
