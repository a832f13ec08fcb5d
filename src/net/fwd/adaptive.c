/*
 * adaptive.c - adaptive switch routing: a packet takes, among the
 * equal-cost next hops, the egress port with the fewest bytes queued (as
 * htsim's fat-tree switches' adaptive routing compares their candidate
 * queues); ties are broken by the packet's entropy as ECMP would hash it
 * (fwd_by_entropy over the tied ports), so that equal queues do not all
 * send to the first port.  It reads only what the switch sees: the queues
 * of its own egress ports when the packet arrives.
 *
 * Per packet by default (`net.forwarder: {flowlet_gap: 0s}`): a flow's
 * packets may take different paths and arrive out of order, as with
 * spraying, so transports are checked as for spraying (spray_check).
 * With flowlet_gap > 0, per flowlet (Kandula et al.'s FLARE, CONGA's
 * flowlets): a switch keeps, per flow, the port it chose and when the
 * flow's last packet passed; a packet less than the gap after the
 * previous one takes the same port (if still a next hop), a later one
 * chooses again.  The table grows with the flows a switch sees (24 bytes
 * each, open addressing; never shrunk during a run).
 *
 * For a flow's route (no packet), the ECMP choice.
 */
#include <stdlib.h>

#include "aisim/fwd.h"
#include "aisim/topo.h"

typedef struct adaptive_cfg {
    int64_t gap_ps;             /* flowlet gap; 0: per packet */
} adaptive_cfg;

static const cfg_key adaptive_keys[] = {
    {.name = "flowlet_gap", .type = CFG_TIME, .off = offsetof(adaptive_cfg, gap_ps),
     .def = "0s", .flags = CFG_MIN, .min = 0,
     .help = "idle time after which a flow's next packet may change port (0s: per packet)"},
    {0},
};

typedef struct flowlet {
    uint64_t key;               /* node << 32 | flow id, + 1 (0: empty) */
    int64_t last_ps;            /* its last packet at this node */
    int32_t hop;                /* the link hop it took */
} flowlet;

typedef struct adaptive {
    int64_t gap_ps;
    flowlet *tab;
    size_t cap, n;              /* cap a power of two, n <= cap / 2 */
} adaptive;

static int adaptive_configure(void *state, const void *cfg, const topo *t, const cfg_node *n,
                              const char *path, err *e)
{
    (void)t, (void)n, (void)path, (void)e;
    ((adaptive *)state)->gap_ps = cfg ? ((const adaptive_cfg *)cfg)->gap_ps : 0;
    return 0;
}

static void adaptive_fini(void *state) { free(((adaptive *)state)->tab); }

static flowlet *slot(adaptive *a, uint64_t key)
{
    if ((a->n + 1) * 2 > a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 1024;
        flowlet *nt = xcalloc(nc, sizeof *nt);
        for (size_t i = 0; i < a->cap; i++) {
            if (!a->tab[i].key)
                continue;
            size_t j = (a->tab[i].key * UINT64_C(0x9e3779b97f4a7c15)) >> 20 & (nc - 1);
            while (nt[j].key)
                j = (j + 1) & (nc - 1);
            nt[j] = a->tab[i];
        }
        free(a->tab);
        a->tab = nt;
        a->cap = nc;
    }
    size_t j = (key * UINT64_C(0x9e3779b97f4a7c15)) >> 20 & (a->cap - 1);
    while (a->tab[j].key && a->tab[j].key != key)
        j = (j + 1) & (a->cap - 1);
    if (!a->tab[j].key) {
        a->tab[j].key = key;
        a->tab[j].hop = -1;
        a->n++;
    }
    return &a->tab[j];
}

static uint32_t least_queued(void *state, const fwd_hop *h)
{
    int64_t least = INT64_MAX;
    uint32_t ties = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        int64_t b = h->c[i].q->bytes;
        if (b < least) {
            least = b;
            ties = 1;
        } else if (b == least) {
            ties++;
        }
    }
    uint32_t k = 0;
    if (ties > 1) {
        fwd_hop sub = *h;
        sub.n = ties;
        k = fwd_by_entropy(state, &sub);
    }
    for (uint32_t i = 0; i < h->n; i++)
        if (h->c[i].q->bytes == least && k-- == 0)
            return i;
    return 0;                   /* not reached */
}

static uint32_t adaptive_choose(void *state, const fwd_hop *h)
{
    adaptive *a = state;
    if (!h->p)
        return fwd_by_entropy(state, h);
    if (!a->gap_ps)
        return least_queued(state, h);
    flowlet *f = slot(a, ((uint64_t)(uint32_t)h->node << 32 | h->p->flow_id) + 1);
    bool same = f->hop >= 0 && h->now_ps - f->last_ps < a->gap_ps;
    f->last_ps = h->now_ps;
    for (uint32_t i = 0; same && i < h->n; i++)
        if (h->c[i].hop == f->hop)
            return i;
    uint32_t i = least_queued(state, h);
    f->hop = h->c[i].hop;
    return i;
}

const fwd_ops fwd_adaptive = {
    .name = "adaptive",
    .summary = "adaptive switch routing: the least-queued equal-cost port, per packet or "
               "per flowlet",
    .send = FWD_SEND_RANDOM,
    .keys = adaptive_keys,
    .cfg_size = sizeof(adaptive_cfg),
    .state_size = sizeof(adaptive),
    .configure = adaptive_configure,
    .choose = adaptive_choose,
    .fini = adaptive_fini,
};
