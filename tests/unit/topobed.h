/*
 * topobed.h - a test bed for topologies: an engine, a packet pool, an
 * empty topology (seed 1) and a catcher (catcher.h) to bind flows to;
 * bed_fini checks that no packet leaked.  Also: a packet forwarded hop by
 * hop (pkt.h), ready for a node's forwarder or a port.
 */
#ifndef AISIM_TEST_TOPOBED_H
#define AISIM_TEST_TOPOBED_H

#include "aisim/topo.h"
#include "catcher.h"

typedef struct bed {
    sim *s;
    pkt_pool *pool;
    topo *t;
    catcher rx;
} bed;

static inline void bed_init(bed *b)
{
    memset(b, 0, sizeof *b);
    b->s = sim_create();
    b->pool = pkt_pool_create();
    b->t = topo_create(b->s, b->pool, 1);
    catcher_init(&b->rx, b->s, b->pool, "rx");
}

static inline void bed_fini(bed *b)
{
    assert_int_equal(pkt_pool_live(b->pool), 0);
    topo_destroy(b->t);
    pkt_pool_destroy(b->pool);
    sim_destroy(b->s);
}

/* A 1500-byte data packet of flow 0 for host dst_host, forwarded hop by
 * hop with this entropy. */
static inline pkt *bed_hop_pkt(bed *b, int dst_host, uint32_t entropy)
{
    pkt *p = pkt_alloc(b->pool);
    p->flow_id = 0;
    p->kind = PKT_DATA;
    p->size_bytes = 1500;
    p->dst_node = (uint32_t)topo_host_node(b->t, dst_host);
    p->entropy = entropy;
    return p;
}

#endif
