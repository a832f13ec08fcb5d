/*
 * rdma_telemetry.c - HPCC's in-band network telemetry (Li et al., SIGCOMM
 * 2019): every switch egress port a data packet enters stamps a hop record
 * (time, bytes the port has transmitted, its queue, its line rate) through
 * the hook chain (hook.h); the receiver hands the record to its ACK; the
 * sender reads it (rdma_cc_hpcc.c).  The records live in a table of the
 * transport, the packet carries an index (pkt.h: h.rdma.int_slot), so
 * struct pkt stays small; a record is freed with its packet.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "rdma_int.h"

void rdma_int_attach(rdma_tp *tp, pkt *p)
{
    uint32_t i;
    if (tp->int_free) {
        i = tp->int_free - 1;
        tp->int_free = tp->ints[i].next_free;
    } else {
        if (tp->nints == tp->intcap) {
            tp->intcap = tp->intcap ? 2 * tp->intcap : 1024;
            tp->ints = xrealloc(tp->ints, tp->intcap * sizeof *tp->ints);
        }
        i = tp->nints++;
    }
    tp->ints[i].n = 0;
    tp->ints[i].next_free = 0;
    p->h.rdma.int_slot = i + 1;
}

void rdma_int_free(rdma_tp *tp, pkt *p)
{
    uint32_t s = p->h.rdma.int_slot;
    if (!s)
        return;
    tp->ints[s - 1].next_free = tp->int_free;
    tp->int_free = s;
    p->h.rdma.int_slot = 0;
}

const struct rdma_int *rdma_int_of(const rdma_qp *qp, const pkt *p)
{
    uint32_t s = p->h.rdma.int_slot;
    return s ? &qp->tp->ints[s - 1] : NULL;
}

void rdma_int_fini(rdma_tp *tp)
{
    free(tp->ints);
    tp->ints = NULL;
}

/* The hook: a data packet entering a switch port gets the port's record. */
static int stamp(hook *h, port *q, pkt *p)
{
    rdma_tp *tp = h->ctx;
    uint32_t s = p->h.rdma.int_slot;
    if (p->kind != PKT_DATA || !s)
        return HOOK_PASS;
    struct rdma_int *r = &tp->ints[s - 1];
    if (r->n < RDMA_INT_HOPS)
        r->hop[r->n++] = (rdma_int_hop){.ts_ps = sim_now(q->s), .rate_bps = q->cfg.rate_bps,
                                        .tx_bytes = q->stat_tx_bytes,
                                        .qlen = (uint32_t)q->bytes};
    return HOOK_PASS;
}

int rdma_int_attach_fabric(rdma_tp *tp, topo *t)
{
    hook_init(&tp->int_hook, stamp, tp, "hpcc.int");
    for (size_t n = 0; n < topo_nodes(t); n++)
        if (topo_node_kind(t, (int)n) == NODE_SWITCH)
            hook_attach_node(t, (int)n, &tp->int_hook);
    return 0;
}
