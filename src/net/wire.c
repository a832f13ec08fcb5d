/*
 * wire.c - propagation delay: a ring of (due, packet) with one timer for the
 * head (see port.h).  The ring doubles when full (its size stays a power of
 * two, so positions wrap with a mask); a wire carries at most bandwidth x
 * delay / smallest packet at once, so it stops growing early.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/port.h"

static void wire_recv(sink *self, pkt *p);
static void wire_arrive(sim *s, void *obj, uint64_t arg);

const wire *wire_of_sink(const sink *s)
{
    return s->recv == wire_recv ? (const wire *)(const void *)s : NULL;
}

void wire_init(wire *w, sim *s, int64_t delay_ps, const char *name)
{
    memset(w, 0, sizeof *w);
    w->base.recv = wire_recv;
    w->base.name = name;
    w->s = s;
    w->delay_ps = delay_ps;
    w->stamp_in = 1;
    sim_timer_init(&w->arrive, wire_arrive, w, 0);
}

void wire_set_src(wire *w, port *src)
{
    w->src = src;
    w->pfc_on = src && src->cfg.pfc_xoff_bytes > 0;
    w->pfc_xoff_bytes = src ? src->cfg.pfc_xoff_bytes : 0;
    w->pfc_xon_bytes = src ? src->cfg.pfc_xon_bytes : 0;
    w->pfc_nprio = src ? (uint8_t)src->cfg.nprio : 1;
}

void wire_fini(wire *w)
{
    free(w->ring);
    w->ring = NULL;
}

static void wire_recv(sink *self, pkt *p)
{
    wire *w = (wire *)self;
    if (w->len == w->cap) {
        uint32_t nc = w->cap ? 2 * w->cap : 16;
        wire_slot *nr = xmalloc(nc * sizeof *nr);
        for (uint32_t i = 0; i < w->len; i++)
            nr[i] = w->ring[(w->head + i) & (w->cap - 1)];
        free(w->ring);
        w->ring = nr;
        w->cap = nc;
        w->head = 0;
    }
    int64_t due = sim_now(w->s) + w->delay_ps;
    w->ring[(w->head + w->len++) & (w->cap - 1)] = (wire_slot){due, p};
    if (w->len == 1)
        sim_timer_arm(w->s, &w->arrive, due);
}

static void wire_arrive(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    wire *w = obj;
    pkt *p = w->ring[w->head].p;
    w->head = (w->head + 1) & (w->cap - 1);
    w->len--;
    w->stat_pkts++;
    if (w->len > 0) {
        sim_timer_arm(s, &w->arrive, w->ring[w->head].due);
        /* The next packet is handled at its arrival, at least one
         * serialisation time from now: start loading it.  On large
         * networks the packets in flight no longer fit in cache and this
         * first touch dominated the profile (k = 16 fat-tree: about 5 %
         * less CPU time with the prefetch, docs/benchmarks.md). */
        __builtin_prefetch(w->ring[w->head].p);
        /* ... and the ring's next line (four slots on): written a whole
         * propagation delay ago, it has left the cache too. */
        __builtin_prefetch(&w->ring[(w->head + 4) & (w->cap - 1)]);
    }
    if (w->stamp_in)
        p->in = w;              /* the receiving switch's ingress (PFC) */
    pkt_forward(p, w->next);
}

uint32_t wire_drop_all(wire *w, pkt_pool *pool)
{
    uint32_t n = w->len;
    for (uint32_t i = 0; i < n; i++) {
        pkt *p = w->ring[(w->head + i) & (w->cap - 1)].p;
        w->stat_lost_bytes += p->size_bytes;
        pkt_free(pool, p);
    }
    w->head = 0;
    w->len = 0;
    sim_timer_disarm(w->s, &w->arrive);
    return n;
}

uint64_t wire_bytes(const wire *w)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < w->len; i++)
        b += w->ring[(w->head + i) & (w->cap - 1)].p->size_bytes;
    return b;
}
