/*
 * qdisc_aqm.c - the disciplines that decide admission and marking
 * (qdisc.h): drop-tail, the DCTCP step and DCQCN's ramp (the port's inline
 * path: configure only writes the port's settings), and RED as Floyd and
 * Jacobson (1993) specify it, with the idle-time correction of the average
 * and the count of packets since the last mark.
 */
#include <math.h>
#include <stddef.h>

#include "aisim/qdisc.h"
#include "aisim/rng.h"
#include "aisim/units.h"

/* ---- drop-tail ------------------------------------------------------------ */

const qdisc_ops qdisc_droptail = {
    .name = "droptail",
    .help = "drop-tail against the buffer, no marking (the inline path)",
    .is_inline = 1,
    .is_aqm = 1,
};

/* ---- the DCTCP step (Alizadeh et al., SIGCOMM 2010) ------------------------ */

typedef struct ecn_conf {
    int64_t k_bytes;
} ecn_conf;

static const cfg_key ecn_keys[] = {
    {.name = "k", .type = CFG_SIZE, .off = offsetof(ecn_conf, k_bytes), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "mark an ECN-capable packet when its class holds more than K bytes"},
    {0},
};

static int ecn_configure(void *conf, const cfg_node *at, const char *path, port_cfg *pc, err *e)
{
    (void)at, (void)path, (void)e;
    pc->ecn_k_bytes = ((const ecn_conf *)conf)->k_bytes;
    return 0;
}

const qdisc_ops qdisc_ecn = {
    .name = "ecn",
    .help = "drop-tail with the DCTCP step: CE above K bytes queued (the inline path)",
    .conf_size = sizeof(ecn_conf),
    .keys = ecn_keys,
    .configure = ecn_configure,
    .is_inline = 1,
    .is_aqm = 1,
};

/* ---- DCQCN's ramp (Zhu et al., SIGCOMM 2015): Kmin, Kmax, Pmax ------------ */

typedef struct ramp_conf {
    int64_t kmin, kmax;
    double pmax, weight;
} ramp_conf;

static const cfg_key ramp_keys[] = {
    {.name = "kmin", .type = CFG_SIZE, .off = offsetof(ramp_conf, kmin), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "no marking below this queue"},
    {.name = "kmax", .type = CFG_SIZE, .off = offsetof(ramp_conf, kmax), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "mark every ECN-capable packet above this queue"},
    {.name = "pmax", .type = CFG_FLOAT, .off = offsetof(ramp_conf, pmax), .def = "0.1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = "marking probability at kmax"},
    {.name = "weight", .type = CFG_FLOAT, .off = offsetof(ramp_conf, weight), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "EWMA weight of the queue it decides on (1: the instantaneous queue)"},
    {0},
};

static int ramp_configure(void *conf, const cfg_node *at, const char *path, port_cfg *pc, err *e)
{
    const ramp_conf *r = conf;
    if (r->kmax <= r->kmin) {
        char kp[512];
        const cfg_node *kn = cfg_kind(at) == CFG_MAP && cfg_get(at, "kmax") ? cfg_get(at, "kmax") : at;
        return cfg_err(e, AISIM_EINVAL, kn, cfg_path(kp, sizeof kp, path, "kmax"),
                       "expected kmax > kmin (%lld B), found %lld B", (long long)r->kmin,
                       (long long)r->kmax);
    }
    pc->red_min_bytes = r->kmin;
    pc->red_max_bytes = r->kmax;
    pc->red_max_p = r->pmax;
    pc->red_weight = r->weight;
    return 0;
}

const qdisc_ops qdisc_ecn_ramp = {
    .name = "ecn_ramp",
    .help = "DCQCN's marking: probability pmax (q-kmin)/(kmax-kmin), all above kmax; no count, "
            "no idle correction (the inline path, what red_min selects)",
    .conf_size = sizeof(ramp_conf),
    .keys = ramp_keys,
    .configure = ramp_configure,
    .is_inline = 1,
    .is_aqm = 1,
};

/* ---- RED (Floyd and Jacobson, IEEE/ACM ToN 1993) ------------------------- */

typedef struct red_conf {
    int64_t min_bytes, max_bytes, avpkt_bytes;
    double max_p, weight;
    bool gentle, ecn;
} red_conf;

static const cfg_key red_keys[] = {
    {.name = "min", .type = CFG_SIZE, .off = offsetof(red_conf, min_bytes), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "min_th: no early marking below this average queue"},
    {.name = "max", .type = CFG_SIZE, .off = offsetof(red_conf, max_bytes), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "max_th: mark (or drop) every packet above this average"},
    {.name = "max_p", .type = CFG_FLOAT, .off = offsetof(red_conf, max_p), .def = "0.02",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "marking probability p_b at max_th (the paper's 1/50)"},
    {.name = "weight", .type = CFG_FLOAT, .off = offsetof(red_conf, weight), .def = "0.002",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "w_q: EWMA weight of the average"},
    {.name = "avpkt", .type = CFG_SIZE, .off = offsetof(red_conf, avpkt_bytes), .def = "1000B",
     .flags = CFG_MIN_EXCL, .min = 0,
     .help = "typical packet: idle time / its transmission time is the m of (1-w_q)^m"},
    {.name = "gentle", .type = CFG_BOOL, .off = offsetof(red_conf, gentle), .def = "false",
     .help = "from max_th to 2 max_th p_b rises from max_p to 1 (Floyd 2000)"},
    {.name = "ecn", .type = CFG_BOOL, .off = offsetof(red_conf, ecn), .def = "true",
     .help = "mark ECN-capable packets (others are dropped); false: drop every packet chosen"},
    {0},
};

static int red_configure(void *conf, const cfg_node *at, const char *path, port_cfg *pc, err *e)
{
    (void)pc;
    const red_conf *r = conf;
    if (r->max_bytes <= r->min_bytes) {
        char kp[512];
        const cfg_node *kn = cfg_kind(at) == CFG_MAP && cfg_get(at, "max") ? cfg_get(at, "max") : at;
        return cfg_err(e, AISIM_EINVAL, kn, cfg_path(kp, sizeof kp, path, "max"),
                       "expected max > min (%lld B), found %lld B", (long long)r->min_bytes,
                       (long long)r->max_bytes);
    }
    return 0;
}

typedef struct red_cls {
    double avg;             /* the average queue, bytes */
    double prob;            /* the last p_a */
    int64_t count;          /* packets since the last mark; -1: below min_th */
    int64_t q_time;         /* when the queue last became empty (or the last
                               idle correction) */
    uint64_t marks, drops;
} red_cls;

typedef struct red_priv {
    const red_conf *c;
    int64_t s_ps;           /* transmission time of avpkt at the line rate */
    red_cls cls[PORT_MAX_PRIO];
} red_priv;

static void red_init(void *priv, const void *conf, port *q)
{
    red_priv *r = priv;
    r->c = conf;
    r->s_ps = units_tx_time_ps(r->c->avpkt_bytes, q->cfg.rate_bps);
    if (r->s_ps < 1)
        r->s_ps = 1;
    for (int c = 0; c < PORT_MAX_PRIO; c++)
        r->cls[c].count = -1;
}

/* Floyd and Jacobson's algorithm (their figure 2), for each arrival at
 * class c, whose queue holds `bytes`:
 *   queue nonempty: avg <- (1 - w_q) avg + w_q q
 *   else:           m <- (time - q_time) / s;  avg <- (1 - w_q)^m avg
 *   min_th <= avg < max_th: count++; p_b <- max_p (avg - min_th)/(max_th - min_th);
 *                           p_a <- p_b / (1 - count p_b); with probability p_a:
 *                           mark, count <- 0
 *   max_th <= avg:          mark, count <- 0
 *   else:                   count <- -1
 * and q_time <- time when the queue becomes empty (red_mark).  After an
 * idle correction q_time moves to now, so a drop into an empty queue does
 * not decay the same idle time twice.  Gentle (optional): from max_th to
 * 2 max_th, p_b <- max_p + (1 - max_p)(avg - max_th)/max_th. */
static int red_enqueue(void *priv, port *q, pkt *p, unsigned c)
{
    red_priv *r = priv;
    red_cls *k = &r->cls[c];
    const red_conf *cf = r->c;
    int64_t now = sim_now(q->s);
    if (q->cls[c].bytes > 0) {
        k->avg += cf->weight * ((double)q->cls[c].bytes - k->avg);
    } else {
        double m = (double)(now - k->q_time) / (double)r->s_ps;
        k->avg *= pow(1 - cf->weight, m);
        k->q_time = now;
    }
    double mn = (double)cf->min_bytes, mx = (double)cf->max_bytes;
    int hit;
    if (k->avg < mn) {
        k->count = -1;
        k->prob = 0;
        return QDISC_PASS;
    } else if (k->avg < mx || (cf->gentle && k->avg < 2 * mx)) {
        k->count++;
        double pb = k->avg < mx ? cf->max_p * (k->avg - mn) / (mx - mn)
                                : cf->max_p + (1 - cf->max_p) * (k->avg - mx) / mx;
        double cp = (double)k->count * pb;
        k->prob = cp >= 1 ? 1 : pb / (1 - cp);
        hit = rng_u01(q->r) < k->prob;
    } else {
        k->prob = 1;
        hit = 1;
    }
    if (!hit)
        return QDISC_PASS;
    k->count = 0;
    if (cf->ecn && (p->flags & PKT_F_ECT)) {
        k->marks++;
        return QDISC_MARK;
    }
    k->drops++;
    return QDISC_DROP;
}

static int red_mark(void *priv, port *q, pkt *p, unsigned c)
{
    (void)p;
    if (q->cls[c].bytes == 0)
        ((red_priv *)priv)->cls[c].q_time = sim_now(q->s);
    return QDISC_PASS;
}

static void red_stats(const void *priv, const port *q, unsigned c, qdisc_stats *out)
{
    (void)q;
    const red_cls *k = &((const red_priv *)priv)->cls[c];
    out->avg_bytes = k->avg;
    out->prob = k->prob;
    out->count = k->count;
    out->marks = k->marks;
    out->drops = k->drops;
}

const qdisc_ops qdisc_red = {
    .name = "red",
    .help = "RED (Floyd and Jacobson 1993): EWMA with idle correction, p_a = p_b/(1-count p_b)",
    .conf_size = sizeof(red_conf),
    .priv_size = sizeof(red_priv),
    .keys = red_keys,
    .configure = red_configure,
    .init = red_init,
    .enqueue = red_enqueue,
    .mark = red_mark,
    .stats = red_stats,
    .is_aqm = 1,
};
