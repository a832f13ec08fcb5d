/*
 * qdisc.h - queue disciplines of an egress port, as ops tables in the
 * manner of Linux's Qdisc_ops (net/sched): a name, the size of the settings
 * and of the per-port state, configure, init, and the decisions.
 *
 * What a discipline decides and what the port keeps.  The port owns the
 * queues: one FIFO per strict-priority class (or per flow with the host
 * round robin), the byte counts, the buffer and shared-pool admission, PFC
 * (a port mechanism: it pauses classes) and the serialiser (port.h).  A
 * discipline decides, per packet:
 *   - enqueue: whether an arriving packet that fits the buffer joins its
 *     class, joins it CE-marked, or is dropped (an AQM: RED, ECN);
 *   - dequeue: which class the port serves next (a scheduler: strict
 *     priority, DWRR); peek says the same without changing any state;
 *   - mark: the packet leaving its class for the serialiser (marking at
 *     dequeue, the start of an idle period).
 * A NULL function keeps the port's own behaviour: enqueue NULL is the
 * inline admission (drop-tail, the DCTCP step on ecn_k, the linear ramp on
 * red_min); dequeue NULL is strict priority.  So a scheduler combines with
 * the inline AQM keys, and an AQM with strict priority.
 *
 * The default is inline.  A link without a `qdisc` key runs what its keys
 * imply, as before (drop-tail; the DCTCP step if ecn_k > 0; the ramp if
 * red_min > 0), on the port's inline path, which costs no call.  The three
 * inline disciplines are registered too (droptail, ecn, ecn_ramp): naming
 * one selects the same inline path, with its settings given in the qdisc
 * map.
 *
 * In a scenario, per link map (host_link, fabric_link, bottleneck, a custom
 * link...):  qdisc: red  or  qdisc: {kind: red, min: 30KB, max: 90KB}.
 *
 * A new discipline is one file defining a `const qdisc_ops` plus one line in
 * src/cli/registry.c (docs/architecture.md, "A new queue discipline").
 */
#ifndef AISIM_QDISC_H
#define AISIM_QDISC_H

#include <stddef.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/port.h"

enum qdisc_verdict {
    QDISC_PASS = 0,         /* join the class as it is */
    QDISC_MARK = 1,         /* join it with CE set (counted as a mark) */
    QDISC_DROP = 2,         /* drop it (counted as a drop) */
};

/* What a discipline reports of class c (stats). */
typedef struct qdisc_stats {
    double avg_bytes;       /* the average queue an AQM decides on (0: none) */
    double prob;            /* the last marking probability computed */
    int64_t count;          /* RED: packets since the last mark (-1: none) */
    uint64_t marks, drops;  /* decided by the discipline */
} qdisc_stats;

typedef struct qdisc_ops {
    const char *name;       /* the scenario's `kind` */
    const char *help;       /* one line for `aisim keys` and errors */
    size_t conf_size;       /* settings, parsed once per link, shared by its ports */
    size_t priv_size;       /* state per port (zeroed before init) */
    const cfg_key *keys;    /* its settings, bound into conf (NULL: none); a
                               bare name binds their defaults */
    /* After binding: checks across keys (located at `at`, the qdisc key's
     * node) and may write the inline settings of *pc (the inline
     * disciplines do).  NULL: nothing to check. */
    int (*configure)(void *conf, const cfg_node *at, const char *path, port_cfg *pc, err *e);
    /* Per port, before any packet (q->cfg is final). */
    void (*init)(void *priv, const void *conf, port *q);
    /* p, of class c, fits the buffer and the pool: pass, mark or drop. */
    int (*enqueue)(void *priv, port *q, pkt *p, unsigned c);
    /* The class to serve next among `ready` (bit c: class c has a packet
     * queued and is not paused), ready != 0; commits the choice. */
    int (*dequeue)(void *priv, port *q, unsigned ready);
    /* What dequeue would return now, changing nothing. */
    int (*peek)(void *priv, const port *q, unsigned ready);
    /* p has left class c for the serialiser; return QDISC_MARK to set CE. */
    int (*mark)(void *priv, port *q, pkt *p, unsigned c);
    void (*stats)(const void *priv, const port *q, unsigned c, qdisc_stats *out);
    /* Takes the inline path (enqueue, dequeue and mark all NULL). */
    uint8_t is_inline;
    /* Decides admission or marking (its own or the inline one): the inline
     * AQM keys ecn_k and red_min may not be given with it. */
    uint8_t is_aqm;
} qdisc_ops;

/* The disciplines built into aisim (src/net/qdisc_*.c), for the registry. */
extern const qdisc_ops qdisc_droptail, qdisc_ecn, qdisc_ecn_ramp, qdisc_red;
extern const qdisc_ops qdisc_prio, qdisc_dwrr;

/* The discipline named `name` in NULL-terminated list, or NULL. */
const qdisc_ops *qdisc_find(const qdisc_ops *const *list, const char *name);
/* Reads a link's `qdisc` value n (a name, or a map with `kind` and the
 * discipline's keys) at `path` against `list`, with conf_alloc(ctx, size)
 * for the settings (they must outlive the ports), into pc->qdisc and
 * pc->qdisc_conf.  Refuses the inline AQM keys (pc's ecn_k, red_min) with a
 * discipline that decides marking.  Located errors. */
int qdisc_configure(const qdisc_ops *const *list, cfg_node *n, const char *path, port_cfg *pc,
                    void *(*conf_alloc)(void *ctx, size_t size), void *ctx, err *e);

/* Size in bytes of the head packet of class c, which has one. */
uint32_t port_head_size(const port *q, unsigned c);
/* Port q's discipline state, and its stats for class c (zeros without a
 * discipline of its own). */
void *port_qdisc_priv(const port *q);
void port_qdisc_stats(const port *q, unsigned c, qdisc_stats *out);

#endif
