/*
 * lossless.c - PFC headroom check and deadlock watch (lossless.h).
 */
#include "lossless.h"

#include <stdio.h>
#include <string.h>

#include "aisim/units.h"
#include "topo_int.h"

int64_t lossless_link_bound(const port *feeding, int64_t delay_ps, int64_t pkt_max)
{
    /* 2 x delay x rate in bytes, rounded up */
    __int128 fly = ((__int128)2 * delay_ps * feeding->cfg.rate_bps + 8 * PS_PER_S - 1) /
                   (8 * PS_PER_S);
    __int128 b = (__int128)feeding->cfg.nprio * (feeding->cfg.pfc_xoff_bytes + pkt_max) + fly +
                 pkt_max;
    return b > INT64_MAX ? INT64_MAX : (int64_t)b;
}

/* The bound of the link into node u at adjacency i (0 if it runs no PFC). */
static int64_t in_bound(const topo *t, const tnode *n, uint32_t i, int64_t pkt_max)
{
    const tlink *k = t->link[n->adj[i].link];
    const port *src = &k->dir[n->adj[i].dir ^ 1].port;      /* feeds this node */
    if (src->cfg.pfc_xoff_bytes <= 0)
        return 0;
    return lossless_link_bound(src, k->cfg.delay_ps, pkt_max);
}

/* "h1->sw0: 1 x (16000 + 1100) + 2500 + 1100 = 20700 B" for the link. */
static void explain(const topo *t, const tnode *n, uint32_t i, int64_t pkt_max, char *buf,
                    size_t len)
{
    const tlink *k = t->link[n->adj[i].link];
    const port *src = &k->dir[n->adj[i].dir ^ 1].port;
    int64_t b = lossless_link_bound(src, k->cfg.delay_ps, pkt_max);
    int64_t fly = b - src->cfg.nprio * (src->cfg.pfc_xoff_bytes + pkt_max) - pkt_max;
    snprintf(buf, len,
             "%s: %d x (pfc_xoff %lld + packet %lld) + in flight 2 x %.6g us x %.6g Gbps = "
             "%lld + packet %lld = %lld B", src->base.name, src->cfg.nprio,
             (long long)src->cfg.pfc_xoff_bytes, (long long)pkt_max,
             (double)k->cfg.delay_ps / 1e6, (double)src->cfg.rate_bps / 1e9, (long long)fly,
             (long long)pkt_max, (long long)b);
}

int lossless_check(const topo *t, int64_t pkt_max, const cfg_node *at, const char *path, err *e)
{
    char how[400];
    for (size_t u = 0; u < t->nnodes; u++) {
        const tnode *n = t->node[u];
        if (n->kind != NODE_SWITCH)
            continue;
        __int128 all = 0;
        int nin = 0;
        uint32_t big = 0;
        for (uint32_t i = 0; i < n->nadj; i++) {
            int64_t b = in_bound(t, n, i, pkt_max);
            if (b > 0) {
                all += b;
                nin++;
                if (b > in_bound(t, n, big, pkt_max))
                    big = i;
            }
        }
        if (!nin)
            continue;
        for (uint32_t j = 0; j < n->nadj; j++) {
            const port *out = &t->link[n->adj[j].link]->dir[n->adj[j].dir].port;
            __int128 need = all - in_bound(t, n, j, pkt_max);
            int cnt = nin - (in_bound(t, n, j, pkt_max) > 0);
            if (need <= out->cfg.buffer_bytes)
                continue;
            explain(t, n, big == j && n->nadj > 1 ? (j + 1) % n->nadj : big, pkt_max, how,
                    sizeof how);
            return cfg_err(e, AISIM_ERANGE, at, path,
                           "a lossless (PFC) class can overflow port %s: its buffer is %lld B, "
                           "but its %d PFC ingress links may hold %lld B together (largest %s); "
                           "give a buffer of at least %lld B or lower pfc_xoff",
                           out->base.name, (long long)out->cfg.buffer_bytes, cnt,
                           (long long)need, how, (long long)need);
        }
        if (n->sb && all > n->sb->size_bytes) {
            explain(t, n, big, pkt_max, how, sizeof how);
            return cfg_err(e, AISIM_ERANGE, at, path,
                           "a lossless (PFC) class can overflow the shared buffer of switch %s: "
                           "it is %lld B, but its %d PFC ingress links may hold %lld B together "
                           "(largest %s); give shared_buffer.size >= %lld B or lower pfc_xoff",
                           n->name, (long long)n->sb->size_bytes, nin, (long long)all, how,
                           (long long)all);
        }
    }
    return 0;
}

/* ---- deadlock watch ------------------------------------------------------ */

#define WATCH_MAX_CYCLE 64

typedef struct pfc_watch {
    topo *t;
    sim *s;
    uint32_t nports;
    port **port;                /* by pfc_watch_id */
    uint32_t *seen;             /* DFS epoch per port */
    int32_t *via;               /* DFS parent per port */
    uint32_t *stack;
    uint32_t epoch;
    int pending;                /* a cycle is being held to the test */
    int cls;                    /* its class */
    uint32_t ncyc;
    uint32_t cyc[WATCH_MAX_CYCLE];
    int64_t since[WATCH_MAX_CYCLE];     /* each port's pfc_since then */
} pfc_watch;

/* Is q a port of class c that is paused and holds class-c packets? */
static int blocked(const port *q, int c)
{
    return c < q->cfg.nprio && (q->pfc_paused >> c & 1) && q->cls[c].bytes > 0;
}

/* Does q hold a class-c packet that came over wire `in`?  (Then the port
 * paused upstream of `in` waits for q.)  A scan of q's queue, made only
 * between blocked ports. */
static int holds_from(const port *q, int c, const wire *in)
{
    if (q->rr)                  /* host NICs: not on a switch cycle */
        return 1;
    for (const pkt *p = q->cls[c].head; p; p = p->next)
        if (p->in == in)
            return 1;
    return 0;
}

/* Finds a cycle of blocked ports through `start`, each waiting for the
 * next: the next is at the node the port sends to and holds packets that
 * came over its link (a switch's egress ports that hold none of them do
 * not hold it up), into w->cyc. */
static int find_cycle(pfc_watch *w, uint32_t start, int c)
{
    w->epoch++;
    uint32_t sp = 0;
    w->stack[sp++] = start;
    w->seen[start] = w->epoch;
    w->via[start] = -1;
    while (sp) {
        uint32_t id = w->stack[--sp];
        const tlink *k = w->t->link[id >> 1];
        const tnode *n = w->t->node[id & 1 ? k->a : k->b];     /* where id's packets go */
        if (n->kind != NODE_SWITCH)
            continue;
        for (uint32_t i = 0; i < n->nadj; i++) {
            uint32_t nid = (uint32_t)n->adj[i].link << 1 | (uint32_t)n->adj[i].dir;
            if (!blocked(w->port[nid], c) || !holds_from(w->port[nid], c, &k->dir[id & 1].wire))
                continue;
            if (nid == start) {
                uint32_t m = 0;
                for (int32_t x = (int32_t)id; x >= 0 && m < WATCH_MAX_CYCLE; x = w->via[x])
                    w->cyc[m++] = (uint32_t)x;
                /* reverse: start first, in the direction of the packets */
                for (uint32_t a = 0, b = m - 1; a < b; a++, b--) {
                    uint32_t tmp = w->cyc[a];
                    w->cyc[a] = w->cyc[b];
                    w->cyc[b] = tmp;
                }
                w->ncyc = m;
                return 1;
            }
            if (w->seen[nid] == w->epoch)
                continue;
            w->seen[nid] = w->epoch;
            w->via[nid] = (int32_t)id;
            w->stack[sp++] = nid;
        }
    }
    return 0;
}

static void watch_check(sim *s, void *obj, uint64_t arg);

static void hold(pfc_watch *w, int c)
{
    w->pending = 1;
    w->cls = c;
    for (uint32_t k = 0; k < w->ncyc; k++)
        w->since[k] = w->port[w->cyc[k]]->pfc_since[c];
    sim_schedule(w->s, sim_now(w->s) + PFC_DEADLOCK_HOLD_PS, watch_check, w, 0);
}

/* A pause took effect at q: a cycle of blocked ports through it is held
 * to the test (watch_check). */
static void on_pause(void *ctx, port *q, int c)
{
    pfc_watch *w = ctx;
    if (w->pending || !blocked(q, c))
        return;
    if (find_cycle(w, q->pfc_watch_id, c))
        hold(w, c);
}

/* PFC_DEADLOCK_HOLD_PS later: if every port of the cycle is still paused
 * by the same pause, nothing in it moved: a deadlock. */
static void watch_check(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    pfc_watch *w = obj;
    w->pending = 0;
    int c = w->cls;
    uint32_t k;
    for (k = 0; k < w->ncyc; k++) {
        const port *q = w->port[w->cyc[k]];
        if (!blocked(q, c) || q->pfc_since[c] != w->since[k])
            break;
    }
    if (k < w->ncyc) {          /* it moved; another cycle may stand */
        for (k = 0; k < w->ncyc; k++)
            if (blocked(w->port[w->cyc[k]], c) && find_cycle(w, w->cyc[k], c)) {
                hold(w, c);
                return;
            }
        return;
    }
    char names[200];
    size_t len = 0;
    names[0] = 0;
    for (k = 0; k < w->ncyc && len < sizeof names; k++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
                                w->port[w->cyc[k]]->base.name);
    sim_fail(s, "PFC deadlock: %u ports in a cycle paused in class %d for %.3g ms without "
             "release: %s", w->ncyc, c, (double)PFC_DEADLOCK_HOLD_PS / 1e9, names);
}

void pfc_watch_arm(topo *t, sim *s)
{
    pfc_watch *w = topo_conf_alloc(t, sizeof *w);
    memset(w, 0, sizeof *w);
    w->t = t;
    w->s = s;
    w->nports = (uint32_t)(2 * t->nlinks);
    w->port = topo_conf_alloc(t, w->nports * sizeof *w->port);
    w->seen = topo_conf_alloc(t, w->nports * sizeof *w->seen);
    w->via = topo_conf_alloc(t, w->nports * sizeof *w->via);
    w->stack = topo_conf_alloc(t, w->nports * sizeof *w->stack);
    memset(w->seen, 0, w->nports * sizeof *w->seen);
    for (size_t l = 0; l < t->nlinks; l++)
        for (int d = 0; d < 2; d++) {
            port *q = &t->link[l]->dir[d].port;
            uint32_t id = (uint32_t)l << 1 | (uint32_t)d;
            w->port[id] = q;
            q->pfc_watch = on_pause;
            q->pfc_watch_ctx = w;
            q->pfc_watch_id = id;
        }
}
