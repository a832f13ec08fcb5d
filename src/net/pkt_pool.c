/*
 * pkt_pool.c - packets from slabs, threaded on a free list.
 *
 * Packets are carved from slabs of PKT_SLAB packets; a freed packet goes on
 * the free list, so a warm pool never calls malloc.  Slabs are freed only
 * with the pool.  In debug and test builds (no NDEBUG) a freed packet is
 * poisoned, so a use after free shows up as nonsense instead of a silent
 * reuse.
 */
#include "aisim/pkt.h"

#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

#define PKT_SLAB 1024

struct pkt_pool {
    pkt *free;              /* free list through pkt.next */
    pkt **slabs;            /* every slab */
    size_t nslabs, cap;
    uint64_t live;          /* allocated and not freed */
};

pkt_pool *pkt_pool_create(void)
{
    return xcalloc(1, sizeof(pkt_pool));
}

void pkt_pool_destroy(pkt_pool *pp)
{
    if (!pp)
        return;
    for (size_t i = 0; i < pp->nslabs; i++)
        free(pp->slabs[i]);
    free(pp->slabs);
    free(pp);
}

static void grow(pkt_pool *pp)
{
    /* On cache lines: at 96 bytes a packet's first 32 (what every hop
     * reads: pkt.h) never straddle two. */
    pkt *slab = xaligned_alloc(64, PKT_SLAB * sizeof *slab);
    if (pp->nslabs == pp->cap) {
        pp->cap = pp->cap ? 2 * pp->cap : 16;
        pp->slabs = xrealloc(pp->slabs, pp->cap * sizeof *pp->slabs);
    }
    pp->slabs[pp->nslabs++] = slab;
    for (size_t i = PKT_SLAB; i-- > 0;) {
        slab[i].next = pp->free;
        pp->free = &slab[i];
    }
}

pkt *pkt_alloc(pkt_pool *pp)
{
    if (!pp->free)
        grow(pp);
    pkt *p = pp->free;
    pp->free = p->next;
    memset(p, 0, sizeof *p);
    pp->live++;
    return p;
}

void pkt_free(pkt_pool *pp, pkt *p)
{
    assert(pp->live > 0);
#ifndef NDEBUG
    memset(p, 0xA5, sizeof *p);
#endif
    p->next = pp->free;
    pp->free = p;
    pp->live--;
}

uint64_t pkt_pool_live(const pkt_pool *pp) { return pp->live; }
uint64_t pkt_pool_allocated(const pkt_pool *pp) { return (uint64_t)pp->nslabs * PKT_SLAB; }

route *route_create(sink *const *hops, uint16_t n)
{
    route *r = xcalloc(1, sizeof *r + n * sizeof *hops);
    r->len = n;
    memcpy(r->hop, hops, n * sizeof *hops);
    return r;
}
