/*
 * ictcp.c - ICTCP as a hook on the receiver's NIC egress port (ictcp.h).
 *
 * Per connection (by flow id, in an idtab; ids are dense): the window it
 * advertises, the highest cumulative ACK seen, that ACK at the start of
 * the sub-slot and of the slot, the measured throughput and the count of
 * slots in a row with d > gamma2.  Connections with ACKs in the last slot
 * are on a list the timer walks; the timer runs only while some are.
 */
#include "systems/sdtcp/ictcp.h"

#include <stdbool.h>
#include <stdlib.h>

#include "aisim/err.h"
#include "aisim/hook.h"
#include "aisim/idtab.h"

typedef struct ic_flow {
    uint32_t rwnd;
    uint64_t ack, ack_sub, ack_slot;
    double bm;                  /* measured throughput, bytes/s */
    int nbad;                   /* slots in a row with d > gamma2 */
    bool listed;
    int64_t last_ps;
} ic_flow;

struct ictcp {
    ictcp_params p;
    port *nic;
    sim *s;
    hook h;
    double cap_Bps;             /* link rate, bytes/s */
    idtab flows;
    uint32_t *list;
    uint32_t nlist, caplist;
    int sub;                    /* 0: first sub-slot, 1: second */
    double bw_a;                /* available bandwidth (second sub-slot) */
    sim_timer tick;
    uint64_t inc, dec, rewrites;
};

void ictcp_params_default(ictcp_params *p, uint32_t mss)
{
    *p = (ictcp_params){.alpha = 0.9, .beta = 0.75, .gamma1 = 0.1, .gamma2 = 0.5,
                        .rtt_ps = 100 * 1000000LL, .mss = mss, .min_wnd = 2 * mss,
                        .init_wnd = 2 * mss};
}

static int ic_hook(hook *h, port *q, pkt *p)
{
    (void)q;
    ictcp *x = h->ctx;
    if (p->kind != PKT_ACK)
        return HOOK_PASS;
    ic_flow *f = idtab_get(&x->flows, p->flow_id);
    if (!f) {
        f = idtab_set(&x->flows, p->flow_id);
        f->rwnd = x->p.init_wnd;
        f->ack = f->ack_sub = f->ack_slot = 0;
    }
    if (!f->listed) {
        if (x->nlist == x->caplist) {
            x->caplist = x->caplist ? 2 * x->caplist : 64;
            x->list = xrealloc(x->list, x->caplist * sizeof *x->list);
        }
        x->list[x->nlist++] = p->flow_id;
        f->listed = true;
        f->ack_sub = f->ack_slot = f->ack > p->seq ? f->ack : p->seq;
        if (!sim_timer_armed(x->s, &x->tick))
            sim_timer_arm(x->s, &x->tick, sim_now(x->s) + x->p.rtt_ps);
    }
    if (p->seq > f->ack)
        f->ack = p->seq;
    f->last_ps = sim_now(x->s);
    if (p->h.tcp.wnd_bytes > f->rwnd) {
        p->h.tcp.wnd_bytes = f->rwnd;
        x->rewrites++;
    }
    return HOOK_PASS;
}

/* One connection's control decision at the end of a slot. */
static void adjust(ictcp *x, ic_flow *f)
{
    const ictcp_params *p = &x->p;
    double slot_s = 2.0 * (double)p->rtt_ps * 1e-12;
    double bs = (double)(f->ack - f->ack_slot) / slot_s;
    double bm = p->beta * f->bm + (1 - p->beta) * bs;
    f->bm = bs > bm ? bs : bm;
    double rtt_s = (double)p->rtt_ps * 1e-12;
    double be = (double)f->rwnd / rtt_s;
    if (f->bm > be)
        be = f->bm;
    double d = be > 0 ? (be - f->bm) / be : 0;
    if (d <= p->gamma1) {
        f->nbad = 0;
        double need = (double)p->mss / rtt_s;
        if (x->bw_a >= need) {
            f->rwnd += p->mss;
            x->bw_a -= need;
            x->inc++;
        }
    } else if (d > p->gamma2) {
        if (++f->nbad >= 3 && f->rwnd >= p->min_wnd + p->mss) {
            f->rwnd -= p->mss;
            f->nbad = 0;
            x->dec++;
        }
    } else {
        f->nbad = 0;
    }
    f->ack_slot = f->ack;
}

static void on_tick(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    ictcp *x = obj;
    int64_t now = sim_now(s);
    double t_s = (double)x->p.rtt_ps * 1e-12;
    double bw_t = 0;
    for (uint32_t i = 0; i < x->nlist; i++) {
        ic_flow *f = idtab_get(&x->flows, x->list[i]);
        bw_t += (double)(f->ack - f->ack_sub) / t_s;
        f->ack_sub = f->ack;
    }
    if (x->sub == 0) {
        double a = x->p.alpha * x->cap_Bps - bw_t;
        x->bw_a = a > 0 ? a : 0;
        x->sub = 1;
    } else {
        uint32_t n = 0;
        for (uint32_t i = 0; i < x->nlist; i++) {
            ic_flow *f = idtab_get(&x->flows, x->list[i]);
            adjust(x, f);
            if (now - f->last_ps < 4 * x->p.rtt_ps)
                x->list[n++] = x->list[i];
            else
                f->listed = false;
        }
        x->nlist = n;
        x->sub = 0;
    }
    if (x->nlist)
        sim_timer_arm(s, &x->tick, now + x->p.rtt_ps);
}

ictcp *ictcp_attach(port *nic, const ictcp_params *p)
{
    ictcp *x = xcalloc(1, sizeof *x);
    x->p = *p;
    x->nic = nic;
    x->s = nic->s;
    x->cap_Bps = (double)nic->cfg.rate_bps / 8.0;
    idtab_init(&x->flows, sizeof(ic_flow));
    sim_timer_init(&x->tick, on_tick, x, 0);
    hook_init(&x->h, ic_hook, x, "ictcp");
    hook_attach(nic, &x->h);
    return x;
}

void ictcp_destroy(ictcp *x)
{
    if (!x)
        return;
    sim_timer_disarm(x->s, &x->tick);
    hook_detach(x->nic, &x->h);
    hook_fini(&x->h);
    idtab_fini(&x->flows);
    free(x->list);
    free(x);
}

void ictcp_counts(const ictcp *x, uint64_t *inc, uint64_t *dec, uint64_t *rewrites)
{
    *inc = x->inc;
    *dec = x->dec;
    *rewrites = x->rewrites;
}
