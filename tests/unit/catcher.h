/*
 * catcher.h - a packet sink for tests of the packet plane: it records the
 * first CATCH_MAX packets it receives (arrival time, seq, flags, kind,
 * advertised window), counts every packet by priority class, and frees
 * each to its pool.
 */
#ifndef AISIM_TEST_CATCHER_H
#define AISIM_TEST_CATCHER_H

#include <string.h>

#include "aisim/port.h"

#define CATCH_MAX 4096

typedef struct catcher {
    sink base;
    pkt_pool *pool;
    sim *s;
    int n;                          /* packets received */
    int64_t at[CATCH_MAX];          /* arrival time, ps */
    uint64_t seq[CATCH_MAX];
    uint16_t flags[CATCH_MAX];
    uint8_t kind[CATCH_MAX];
    uint32_t wnd[CATCH_MAX];        /* h.tcp.wnd_bytes */
    int by_prio[PORT_MAX_PRIO];     /* every packet, by p->prio */
} catcher;

static inline void catcher_recv(sink *self, pkt *p)
{
    catcher *c = (catcher *)self;
    if (c->n < CATCH_MAX) {
        c->at[c->n] = sim_now(c->s);
        c->seq[c->n] = p->seq;
        c->flags[c->n] = p->flags;
        c->kind[c->n] = p->kind;
        c->wnd[c->n] = p->h.tcp.wnd_bytes;
    }
    c->n++;
    c->by_prio[p->prio]++;
    pkt_free(c->pool, p);
}

static inline void catcher_init(catcher *c, sim *s, pkt_pool *pool, const char *name)
{
    memset(c, 0, sizeof *c);
    c->base.recv = catcher_recv;
    c->base.name = name;
    c->pool = pool;
    c->s = s;
}

/* A packet of the given size, class, flags and sequence number, from pool. */
static inline pkt *catcher_pkt(pkt_pool *pool, uint32_t size, uint8_t prio, uint16_t flags,
                               uint64_t seq)
{
    pkt *p = pkt_alloc(pool);
    p->size_bytes = size;
    p->prio = prio;
    p->flags = flags;
    p->seq = seq;
    return p;
}

#endif
