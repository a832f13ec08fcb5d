/*
 * qdisc_sched.c - the disciplines that choose which class a port serves
 * (qdisc.h): strict priority and deficit weighted round robin.  Admission
 * stays the port's inline one (drop-tail, ecn_k, red_min apply).
 */
#include <stddef.h>
#include <string.h>

#include "aisim/qdisc.h"

/* ---- strict priority: class 0 first -------------------------------------- */

static int prio_dequeue(void *priv, port *q, unsigned ready)
{
    (void)priv, (void)q;
    return __builtin_ctz(ready);
}

static int prio_peek(void *priv, const port *q, unsigned ready)
{
    (void)priv, (void)q;
    return __builtin_ctz(ready);
}

const qdisc_ops qdisc_prio = {
    .name = "prio",
    .help = "strict priority between the link's classes, class 0 first (as the port's default)",
    .dequeue = prio_dequeue,
    .peek = prio_peek,
};

/* ---- DWRR (Shreedhar and Varghese, SIGCOMM 1995) ------------------------- */

typedef struct dwrr_conf {
    int64_t quantum;            /* every class not in `quanta` */
    cfg_node *quanta;           /* a list, one per class (bound, then read) */
    int64_t q[PORT_MAX_PRIO];   /* the quantum of each class */
} dwrr_conf;

static const cfg_key dwrr_keys[] = {
    {.name = "quantum", .type = CFG_SIZE, .off = offsetof(dwrr_conf, quantum), .def = "1500B",
     .flags = CFG_MIN | CFG_MAX, .min = 64, .max = 1 << 30,
     .help = "bytes a class may send per round (every class, unless quanta)"},
    {.name = "quanta", .type = CFG_NODE, .off = offsetof(dwrr_conf, quanta), .flags = CFG_OPTIONAL,
     .help = "one quantum per class, class 0 first: its share is its quantum over their sum"},
    {0},
};

static int dwrr_configure(void *conf, const cfg_node *at, const char *path, port_cfg *pc, err *e)
{
    (void)at;
    dwrr_conf *d = conf;
    for (int c = 0; c < PORT_MAX_PRIO; c++)
        d->q[c] = d->quantum;
    if (!d->quanta)
        return 0;
    char kp[512];
    cfg_path(kp, sizeof kp, path, "quanta");
    long n = cfg_expect_list(d->quanta, kp, "sizes, one per class", e);
    if (n < 0)
        return (int)n;
    int nprio = pc->nprio < 1 ? 1 : pc->nprio;
    if (n != nprio)
        return cfg_err(e, AISIM_EINVAL, d->quanta, kp,
                       "expected %d quanta (one per class: priorities), found %ld", nprio, n);
    for (long i = 0; i < n; i++) {
        char ip[560];
        snprintf(ip, sizeof ip, "%s[%ld]", kp, i);
        cfg_key k = dwrr_keys[0];
        k.off = 0;
        k.def = NULL;
        int rc = cfg_value(cfg_at(d->quanta, (size_t)i), ip, &k, &d->q[i], e);
        if (rc)
            return rc;
    }
    d->quanta = NULL;           /* the tree is not ours to keep */
    return 0;
}

typedef struct dwrr_priv {
    const dwrr_conf *c;
    int cur;                    /* the class whose turn it is */
    int fresh;                  /* cur has not had its quantum this turn */
    int64_t deficit[PORT_MAX_PRIO];
} dwrr_priv;

static void dwrr_init(void *priv, const void *conf, port *q)
{
    (void)q;
    dwrr_priv *d = priv;
    d->c = conf;
    d->fresh = 1;
}

/* The round: the class whose turn it is adds its quantum to its deficit
 * once per turn and sends while its head fits the deficit; then the turn
 * passes.  A class that empties loses its deficit (dwrr_mark); one that is
 * paused (PFC) keeps it and is passed over. */
static int dwrr_pick(dwrr_priv *d, const port *q, unsigned ready, int commit)
{
    int cur = d->cur, fresh = d->fresh, n = q->cfg.nprio;
    int64_t def[PORT_MAX_PRIO];
    memcpy(def, d->deficit, sizeof def);
    for (;;) {
        if (ready >> cur & 1) {
            if (fresh) {
                def[cur] += d->c->q[cur];
                fresh = 0;
            }
            int64_t sz = port_head_size(q, (unsigned)cur);
            if (sz <= def[cur]) {
                def[cur] -= sz;
                break;
            }
        }
        cur = cur + 1 == n ? 0 : cur + 1;
        fresh = 1;
    }
    if (commit) {
        d->cur = cur;
        d->fresh = fresh;
        memcpy(d->deficit, def, sizeof def);
    }
    return cur;
}

static int dwrr_dequeue(void *priv, port *q, unsigned ready)
{
    return dwrr_pick(priv, q, ready, 1);
}

static int dwrr_peek(void *priv, const port *q, unsigned ready)
{
    return dwrr_pick(priv, q, ready, 0);
}

static int dwrr_mark(void *priv, port *q, pkt *p, unsigned c)
{
    (void)p;
    dwrr_priv *d = priv;
    if (q->cls[c].bytes == 0) {         /* it leaves the round: the turn passes */
        d->deficit[c] = 0;
        if (d->cur == (int)c) {
            d->cur = d->cur + 1 == q->cfg.nprio ? 0 : d->cur + 1;
            d->fresh = 1;
        }
    }
    return QDISC_PASS;
}

const qdisc_ops qdisc_dwrr = {
    .name = "dwrr",
    .help = "deficit weighted round robin between classes, byte shares by quantum",
    .conf_size = sizeof(dwrr_conf),
    .priv_size = sizeof(dwrr_priv),
    .keys = dwrr_keys,
    .configure = dwrr_configure,
    .init = dwrr_init,
    .dequeue = dwrr_dequeue,
    .peek = dwrr_peek,
    .mark = dwrr_mark,
};
