/*
 * hook.h - switch hooks and queue-watermark notifications on egress ports.
 *
 * Hooks.  A port may carry a chain of hooks, called in attach order for
 * every packet that arrives at the port, after its arrival counters and
 * capture tap and before admission (failed-link check, drop-tail, shared
 * buffer, ECN marking).  A hook may
 *   - inspect the packet and let it go on (HOOK_PASS);
 *   - rewrite header fields in place (p->prio, p->flags, p->h.tcp.wnd_bytes
 *     ...) and let it go on (HOOK_PASS); it must not touch p->next, p->rt,
 *     p->hop or p->size_bytes (the port has counted the bytes already);
 *   - drop it: hook_drop() frees it to the port's pool and counts it (the
 *     port's stat_drop_pkts/bytes and stat_hook_drops, the hook's
 *     stat_drop_*), then the hook returns HOOK_TAKEN;
 *   - delay it: hook_delay() holds it and re-injects it `delay_ps` later
 *     after this hook in the chain (the hooks behind it, then admission),
 *     then the hook returns HOOK_TAKEN;
 *   - change its route: hook_redirect() hands a packet forwarded hop by hop
 *     (p->rt NULL) to another egress port of the same node (one of its
 *     next hops, topo_next_hops), then the hook returns HOOK_TAKEN.  A
 *     source-routed packet's route is fixed: its remaining hops are the
 *     ports and wires after this one.
 * Ownership: a hook that returns HOOK_TAKEN owns the packet and must have
 * freed it (hook_drop) or hold it for re-injection (hook_delay, or its own
 * scheduling followed by hook_resume).  Held packets count as in the
 * network (port hook_held_*, topo_packets_in_network, topo_byte_counts), so
 * byte conservation holds with hooks that drop or delay.
 *
 * A hook object may be attached to many ports (hook_attach_node attaches
 * it to every egress port of a switch or host), and a port may carry many
 * hooks.  Attaching and detaching are for events, not for hook functions:
 * a hook must not attach or detach hooks of the port it runs at from its
 * own fn.  A packet re-injected after a delay continues after its hook in
 * the chain of that moment; if the hook has been detached meanwhile, it
 * goes straight to admission.
 *
 * Cost: a port with no hook has hooks == NULL and pays one pointer test
 * per arrival (measured, docs/benchmarks.md); detaching the last hook
 * frees the chain and restores that.
 *
 * Watermarks.  A port may carry watermarks, each on one priority class or
 * on the whole port: fn(ctx, q, w, true) runs when the queued bytes (not
 * counting the packet being serialised, as ECN marking) rise above
 * high_bytes, and fn(ctx, q, w, false) when they then fall to low_bytes or
 * below (hysteresis: low_bytes <= high_bytes).  Each crossing notifies
 * once, whatever the number of packets on either side.  Rises are checked
 * as packets join the queue, falls as they leave it (start of transmission,
 * or a failure that empties it).  The callback runs inside the port's
 * enqueue or dequeue: it may read the port and change hooks' state, but it
 * must not send packets or change the port; schedule an event for that.
 * Cost: one pointer test per enqueue and dequeue when a port has none.
 */
#ifndef AISIM_HOOK_H
#define AISIM_HOOK_H

#include <stdbool.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/pkt.h"
#include "aisim/port.h"
#include "aisim/rng.h"
#include "aisim/topo.h"

typedef struct hook hook;

enum hook_verdict {
    HOOK_PASS = 0,          /* the packet goes on (maybe rewritten) */
    HOOK_TAKEN = 1,         /* the hook owns it: dropped or held */
};

/* Called for each packet p arriving at port q while h is attached there.
 * Returns enum hook_verdict. */
typedef int hook_fn(hook *h, port *q, pkt *p);

typedef struct hook_held hook_held;     /* a delayed packet (hook.c) */

struct hook {
    hook_fn *fn;
    void *ctx;                  /* the owner's */
    const char *name;           /* for diagnostics; must outlive the hook */
    uint64_t stat_drop_pkts;    /* dropped through hook_drop */
    uint64_t stat_drop_bytes;
    uint64_t stat_delay_pkts;   /* held through hook_delay */
    uint64_t stat_redirect_pkts;    /* handed to another port (hook_redirect) */
    hook_held *held_free;       /* private: records for hook_delay */
    hook_held *held_all;        /* private: every record, for hook_fini */
};

/* Initialises a caller-owned hook. */
void hook_init(hook *h, hook_fn *fn, void *ctx, const char *name);
/* Frees the hook's delay records.  Detach it first; packets it still holds
 * stay live in their pool (as packets left in queues at the end of a run),
 * and the engine must not run their re-injection afterwards. */
void hook_fini(hook *h);

/* Appends h to q's chain (h must not be there already). */
void hook_attach(port *q, hook *h);
/* Removes h from q's chain; harmless if absent.  The last detach frees the
 * chain (q->hooks back to NULL). */
void hook_detach(port *q, hook *h);
/* Attaches / detaches h at every egress port of `node` (a switch's ports,
 * a host's NIC), in link id order.  Returns the number of ports. */
int hook_attach_node(topo *t, int node, hook *h);
int hook_detach_node(topo *t, int node, hook *h);

/* For hook functions: frees p to q's pool and counts it as a drop at q and
 * by h.  The hook then returns HOOK_TAKEN. */
void hook_drop(hook *h, port *q, pkt *p);
/* For hook functions: holds p and re-injects it at q `delay_ps` (>= 0)
 * from now, after h in the chain.  Packets with equal delays keep their
 * order.  The hook then returns HOOK_TAKEN. */
void hook_delay(hook *h, port *q, pkt *p, int64_t delay_ps);
/* Re-injects p at q after h in the chain (the hooks behind h, then
 * admission): for hooks that hold packets by their own means.  Ownership of
 * p passes to the port. */
void hook_resume(port *q, hook *h, pkt *p);

/* For hook functions: hands p, which arrived at q, to port `to` instead
 * (another egress port of the same node: a change of route).  Only for a
 * packet forwarded hop by hop (p->rt NULL): it goes on from `to`'s far end
 * as from any next hop; a source-routed packet's remaining hops are fixed
 * (asserted).  Counted by h (stat_redirect_pkts); p counts as an arrival
 * at both ports.  The hook then returns HOOK_TAKEN.  A hook must not
 * redirect in a cycle (to a port whose hooks send it back). */
void hook_redirect(hook *h, port *q, pkt *p, port *to);

/* ---- hooks by name (net.hooks) ----------------------------------------- */

/* A kind of hook a scenario attaches by name: `net.hooks: [{kind: NAME,
 * at, until, link | port | node, ...its keys}]` (faults are one family of
 * kinds, fault.h; `net.faults` takes the same list).  The set that reads
 * the list (fault.c) resolves the target, binds the kind's keys, draws
 * from the instance's own stream, attaches the instance's hook to the
 * target's ports at `at` and detaches it at `until`, and writes the
 * ground truth.  src/cli/registry.c lists the kinds (net_registry.hooks);
 * a new kind is one file plus a line there. */
typedef struct hook_inst hook_inst;

typedef struct hook_kind {
    const char *name;           /* `kind` */
    const char *summary;        /* one line for messages and docs */
    const cfg_key *keys;        /* its own keys besides kind, the target, at and
                                   until ({0}-terminated), binding into cfg */
    size_t cfg_size;            /* bytes they bind into */
    hook_fn *fn;                /* per packet; h->ctx is the hook_inst.  NULL: a
                                   kind the set runs itself (flap) */
    bool node_only;             /* the target must be a node (node: name) */
    /* Checks the bound keys (may be NULL): a located error at n, path. */
    int (*check)(hook_inst *in, const cfg_node *n, const char *path, err *e);
} hook_kind;

/* One hook from the list, as its kind's fn sees it. */
struct hook_inst {
    hook h;                     /* h.ctx is this instance */
    const hook_kind *kind;
    void *cfg;                  /* the kind's keys, bound */
    topo *t;
    int node;                   /* the target node, or -1 (a link or a port) */
    rng r;                      /* its own stream ("net.fault", index in the list) */
    uint64_t seen_pkts;         /* packets it looked at (its fn counts) */
};

/* A kind that changes routes (hook_deflect.c): at a node, packets forwarded
 * hop by hop move off a port above `threshold` bytes to the least-queued
 * equal-cost port. */
extern const hook_kind hook_deflect;

/* ---- watermarks -------------------------------------------------------- */

typedef struct hook_wm hook_wm;

/* `above`: true when the backlog has risen above w->high_bytes, false when
 * it has fallen back to w->low_bytes or below. */
typedef void hook_wm_fn(void *ctx, port *q, hook_wm *w, bool above);

struct hook_wm {
    hook_wm *next;              /* next watermark of the same port */
    int cls;                    /* priority class watched; -1: the whole port */
    int64_t high_bytes;         /* rising above this notifies (above) */
    int64_t low_bytes;          /* falling to this or below notifies (!above) */
    hook_wm_fn *fn;
    void *ctx;
    bool above;                 /* state: above since the last rise */
    uint64_t stat_rises, stat_falls;   /* notifications made */
};

/* Initialises a caller-owned watermark; 0 <= low_bytes <= high_bytes,
 * -1 <= cls < PORT_MAX_PRIO (asserted). */
void hook_wm_init(hook_wm *w, int cls, int64_t high_bytes, int64_t low_bytes,
                  hook_wm_fn *fn, void *ctx);
/* Attaches w to q (w must outlive its attachment).  If q's backlog is
 * already above high_bytes, w rises at once. */
void hook_wm_attach(port *q, hook_wm *w);
/* Detaches w; harmless if absent.  Its state is kept. */
void hook_wm_detach(port *q, hook_wm *w);

/* ---- for port.c -------------------------------------------------------- */

/* Runs q's chain on p; returns non-zero if a hook took p. */
int hook_run(port *q, pkt *p);
/* Checks q's watermarks after bytes joined / left class c. */
void hook_wm_rise(port *q, unsigned c);
void hook_wm_fall(port *q, unsigned c);
/* Frees q's chain (port_fini). */
void hook_port_fini(port *q);

#endif
