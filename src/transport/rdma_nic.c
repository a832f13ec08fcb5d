/*
 * rdma_nic.c - the RDMA NIC's scheduler (rdma.h): a pulling source of its
 * host port (port.h).  When the link is free and a class is not paused by
 * PFC, the port asks for a packet of that class; the NIC walks its ring of
 * active QPs from where it stopped (round robin, a QP of weight w sending
 * up to w packets per turn) and takes the first whose pacing and window
 * allow a packet now.  A QP with nothing to send leaves the ring (it comes
 * back through rdma_qp_wake); if every QP is paced later, a timer wakes
 * the port at the earliest.  A QP may be pulled by several ports of its
 * host (a dual-port RNIC, rdma_qp_bind_ports): it has a ring place per
 * port slot, and qp->tx_port tells it which one pulls.  Optional caps on the packet rate (nic_pps)
 * and on the processing rate (nic_rate) space the pulls.
 */
#include <stdlib.h>

#include "aisim/err.h"
#include "aisim/units.h"
#include "rdma_int.h"

struct rdma_nic {
    port_source src;            /* first */
    port *q;
    sim *s;
    rdma_qp *cur;               /* next QP to consider; NULL: ring empty */
    size_t n;
    sim_timer wake;
    int64_t wake_at;            /* INT64_MAX: not armed */
    int64_t gap_ps, next_ps;    /* packet-rate cap: the gap, the next pull */
    int64_t rate_bps;           /* processing-rate cap, 0: none */
    int slot;                   /* its port's index among the host's: the
                                   QPs' ring place (rdma_qp.ring[slot]) */
};

static void on_wake(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    rdma_nic *nic = obj;
    nic->wake_at = INT64_MAX;
    port_kick(nic->q);
}

static void wake_at(rdma_nic *nic, int64_t at)
{
    if (at >= nic->wake_at)
        return;
    nic->wake_at = at;
    sim_timer_arm(nic->s, &nic->wake, at);
}

static pkt *nic_pull(port_source *self, port *q, int c)
{
    rdma_nic *nic = (rdma_nic *)self;
    int64_t now = sim_now(nic->s);
    if (!nic->cur)
        return NULL;
    if (now < nic->next_ps) {
        wake_at(nic, nic->next_ps);
        return NULL;
    }
    int64_t soonest = INT64_MAX;
    for (size_t i = 0, n = nic->n; i < n && nic->cur; i++) {
        rdma_qp *qp = nic->cur;
        int cls = qp->c.prio < q->cfg.nprio ? qp->c.prio : q->cfg.nprio - 1;
        rdma_qp *next = qp->ring[nic->slot].next;
        if (cls != c) {
            nic->cur = next;
            continue;
        }
        pkt *p;
        int64_t at;
        for (uint8_t j = 0; j < qp->nports; j++)
            if (qp->ports[j] == nic)
                qp->tx_port = j;
        int r = rdma_qp_next(qp, &p, &at);
        if (r > 0) {
            if (--qp->turn == 0) {
                qp->turn = qp->weight;
                nic->cur = qp->ring[nic->slot].next;
            }
            int64_t gap = nic->gap_ps;
            if (nic->rate_bps) {
                int64_t t = units_tx_time_ps(p->size_bytes, nic->rate_bps);
                gap = t > gap ? t : gap;
            }
            nic->next_ps = now + gap;
            return p;
        }
        if (r == 0) {
            rdma_nic_remove(nic, qp);
        } else {
            if (at < soonest)
                soonest = at;
            nic->cur = next;
        }
    }
    if (soonest < INT64_MAX)
        wake_at(nic, soonest);
    return NULL;
}

rdma_nic *rdma_nic_of(rdma_tp *tp, port *q, int slot)
{
    if (q->source)              /* one NIC per port: found by its source */
        return (rdma_nic *)q->source;
    rdma_nic *nic = xcalloc(1, sizeof *nic);
    nic->src.pull = nic_pull;
    nic->q = q;
    nic->s = q->s;
    nic->wake_at = INT64_MAX;
    nic->slot = slot >= 0 && slot < RDMA_NIC_SLOTS ? slot : RDMA_NIC_SLOTS - 1;
    if (tp->k.nic_pps)
        nic->gap_ps = PS_PER_S / tp->k.nic_pps;
    nic->rate_bps = tp->k.nic_rate_bps;
    sim_timer_init(&nic->wake, on_wake, nic, 0);
    port_set_source(q, &nic->src);
    tp->nics = xrealloc(tp->nics, (tp->nnics + 1) * sizeof *tp->nics);
    tp->nics[tp->nnics++] = nic;
    return nic;
}

void rdma_nic_activate(rdma_nic *nic, rdma_qp *qp)
{
    int k = nic->slot;
    rdma_ring *r = &qp->ring[k];
    if (!r->active) {
        r->active = true;
        if (!nic->cur) {
            r->next = r->prev = qp;
            nic->cur = qp;
        } else {                /* at the ring's end: just before cur */
            r->next = nic->cur;
            r->prev = nic->cur->ring[k].prev;
            r->prev->ring[k].next = qp;
            nic->cur->ring[k].prev = qp;
        }
        nic->n++;
    }
    port_kick(nic->q);
}

void rdma_nic_remove(rdma_nic *nic, rdma_qp *qp)
{
    int k = nic->slot;
    rdma_ring *r = &qp->ring[k];
    if (!r->active)
        return;
    r->active = false;
    if (--nic->n == 0) {
        nic->cur = NULL;
    } else {
        r->prev->ring[k].next = r->next;
        r->next->ring[k].prev = r->prev;
        if (nic->cur == qp)
            nic->cur = r->next;
    }
    r->next = r->prev = NULL;
}

void rdma_nic_free_all(rdma_tp *tp)
{
    /* The ports and the engine may be gone (the network frees the
     * topology first): nothing of them is touched. */
    for (size_t i = 0; i < tp->nnics; i++)
        free(tp->nics[i]);
    free(tp->nics);
    tp->nics = NULL;
    tp->nnics = 0;
}
