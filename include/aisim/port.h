/*
 * port.h - the packet plane's elements: a switch or NIC egress port (queue +
 * serialiser) and a wire (propagation delay).
 *
 * Port.  Packets wait in strict-priority FIFOs and are serialised at the
 * line rate, one at a time; a port keeps one pending event, the end of the
 * current transmission (sim_timer).  On arrival a packet is admitted or
 * dropped (drop-tail against the port's buffer) and may be ECN-marked: the
 * DCTCP step (mark an ECN-capable packet when the queue of its class
 * already holds more than K bytes, as in Alizadeh et al., SIGCOMM 2010;
 * other packets are left to drop-tail) or a linear ramp on its class's
 * queue or an EWMA of it (DCQCN's Kmin/Kmax/Pmax; the red_* fields; no
 * count, no idle correction), marking ECN-capable packets and dropping the
 * others (RFC 3168).  Marking is per queue, as switches mark per egress
 * queue: a high-priority class with a short queue is not marked because a
 * low one is long.  That is the inline path; other disciplines (RED as
 * Floyd and Jacobson give it, DWRR, ...) are ops tables (qdisc.h) that
 * cfg.qdisc names.
 *
 * Lossless.  A packet that came over a PFC link and is dropped at
 * admission fails the run (sim_fail): the topology check (lossless.c)
 * refuses buffers that fan-in can overflow, so such a drop is a broken
 * invariant, not a result.
 *
 * What a buffer holds.  A packet occupies its port's buffer, its switch's
 * shared pool and the PFC count of the link it came in on from its
 * admission until its transmission starts: the packet being serialised has
 * left the buffer (it is in the serialiser; ns-3's device queue and
 * DCTCP's K count the same way).  buffer_bytes, the pool, the ECN
 * thresholds and PFC's XOFF/XON all compare against bytes waiting.
 * Counters are stat_* fields, read by the output code, never logged.
 *
 * PFC (IEEE 802.1Qbb).  A port whose link has pfc_xoff_bytes set is paused
 * per priority by the switch it feeds: that switch counts, per class, the
 * bytes it holds that arrived over this link (in any of its egress queues;
 * the count lives in the link's wire, the switch's ingress, and the wire
 * stamps each packet it delivers with itself, so the switch finds the
 * ingress of any packet whatever else its route holds);
 * above XOFF it sends a pause, at or below XON a resume, each taking effect
 * one propagation delay later; a paused class is not served (the packet
 * being serialised finishes).  A paused port's own queue then grows and
 * pauses its upstream in turn: pauses propagate hop by hop.  The frames are
 * modelled as control events, not as packets on the wire.  Headroom is the
 * buffer above XOFF: it must hold what arrives during the pause's round
 * trip, or drop-tail still drops.
 *
 * Marking at dequeue (port_set_mark_dequeue).  By default a packet is
 * marked as it joins its queue, on the bytes ahead of it.  A port may
 * instead mark as a packet leaves its queue (its transmission starts), on
 * the bytes of its class it leaves behind, as the HPCC ns-3 fork's switches
 * do (SwitchNotifyDequeue: the egress count is decreased, then
 * ShouldSendCN): the DCTCP step and RED, on ECN-capable packets only
 * (others are left to drop-tail; RED's average is then updated as packets
 * leave).  It uses the start-of-transmission callback (tap), so a port
 * that marks at enqueue pays nothing for it; captures use that callback on
 * host ports, so it is for switch ports.
 *
 * Flow round robin (host NICs).  By default a port is FIFO per class.  A
 * host NIC may instead keep one queue per flow and serve the flows with
 * packets waiting in turn, one packet each (port_set_flow_rr), as a
 * per-flow NIC scheduler (Linux's fq) does: a short flow does not wait
 * behind a long flow's whole window.  Strict priority still applies
 * between classes; the round robin runs within each.
 *
 * Pulling sources (RDMA NICs).  A port may also pull its packets from a
 * source (port_set_source): when class c has nothing queued and is not
 * paused by PFC, the port asks the source for a packet of that class as it
 * would take the head of its queue, so a NIC schedules its queue pairs (round
 * robin, pacing) at the moment the link is free, and a PFC pause stops the
 * pull: nothing waits in, or is dropped from, a queue at the sender.  A
 * pulled packet counts as an arrival and passes the port's hooks, but is
 * not admitted to the buffer (it goes straight to the serialiser).  Queued
 * packets of a class (acknowledgements) go before pulled ones.
 *
 * Shared buffer.  The egress ports of a switch may draw from one pool
 * (shbuf) instead of each holding its own: the dynamic thresholds of
 * Choudhury and Hahne (IEEE/ACM ToN 1998), as in common shared-buffer
 * ASICs.  A packet joins queue (port, class) only if that queue, with the
 * packet, stays within alpha times the pool's free space before it
 * (q + size <= alpha * (B - used)), and the pool has room.  With one
 * congested queue it settles at alpha/(1+alpha) B, with n at
 * alpha/(1+n alpha) B each.  Packets that arrived over a PFC link are
 * lossless traffic: PFC, not the threshold, keeps them within the pool (the
 * pool-full check still applies).  A packet occupies the pool until its
 * transmission starts, as it does its port's buffer (above).  The port's
 * own buffer_bytes remains a per-port cap.
 * PFC may use the pool's state too (pfc_alpha > 0, as ASICs' dynamic PG
 * thresholds do): the XOFF threshold of each (ingress link, class) becomes
 * min(pfc_xoff, pfc_alpha x free pool), with XON the same distance
 * (pfc_xoff - pfc_xon) below it, so senders are paused earlier when the
 * pool fills.
 *
 * Wire.  A ring of (due time, packet) with one timer for its head: every
 * packet on a wire has the same delay, so arrival order is departure order.
 *
 * Both embed a sink first; a route lists them (port, wire, port, wire, ...),
 * possibly with other elements between them (port_of_sink and wire_of_sink
 * tell the two kinds apart).
 */
#ifndef AISIM_PORT_H
#define AISIM_PORT_H

#include <stdint.h>

#include "aisim/pkt.h"
#include "aisim/rng.h"
#include "aisim/sim.h"

#define PORT_MAX_PRIO 8

typedef struct port_cfg {
    /* Read for every arriving packet (first, so that they share a line): */
    int64_t rate_bps;       /* line rate, > 0 */
    int64_t buffer_bytes;   /* drop-tail capacity over all priorities */
    int64_t ecn_k_bytes;    /* DCTCP step threshold; 0: off */
    int64_t red_min_bytes;  /* ramp: no marking below (average queue); 0: off */
    int nprio;              /* strict priority classes, 1..PORT_MAX_PRIO */
    const struct qdisc_ops *qdisc;  /* the discipline (qdisc.h), on the same line;
                                       NULL or an inline one: the inline path */
    /* RED and PFC only: */
    int64_t red_max_bytes;  /* RED: mark/drop everything above */
    double red_max_p;       /* RED: marking probability at red_max_bytes */
    double red_weight;      /* RED: EWMA weight of the average (e.g. 0.002) */
    int64_t pfc_xoff_bytes; /* PFC on this link direction: the receiving
                               switch pauses this port for a class when it
                               holds more than this many bytes of that class
                               from it; 0: PFC off */
    int64_t pfc_xon_bytes;  /* ... and resumes it at or below this */
    const void *qdisc_conf; /* the discipline's settings (its configure) */
} port_cfg;

/* A switch's shared buffer pool (see above). */
typedef struct shbuf {
    int64_t size_bytes;     /* B */
    double alpha;           /* dynamic threshold factor, > 0 */
    double pfc_alpha;       /* > 0: PFC's XOFF is at most pfc_alpha x the free
                               pool (see port.h); 0: static thresholds */
    int64_t used_bytes;     /* waiting at any of its ports (not in service) */
    int64_t stat_max_used;  /* largest used_bytes seen */
    uint64_t stat_dt_drops; /* refused by the dynamic threshold */
    uint64_t stat_full_drops;   /* refused because the pool was full */
} shbuf;

typedef struct port_rr port_rr;    /* per-flow queues (port.c) */
typedef struct port_source port_source;
typedef struct hook_chain hook_chain;  /* arrival hooks (hook.h) */
typedef struct hook_wm hook_wm;        /* queue watermarks (hook.h) */

/* One strict-priority class: its FIFO, byte count and RED average (32
 * bytes: two classes a line, indexed by a shift). */
typedef struct port_class {
    pkt *head, *tail;       /* FIFO (unused with per-flow round robin) */
    int64_t bytes;          /* queued bytes of the class */
    double red_avg;         /* RED average queue, bytes (RED only) */
} port_class;

/* Field order is for the cache: ports are many and each packet touches its
 * port at arrival, start and end of transmission, so the fields every
 * packet touches come first and fill whole lines (five with one class,
 * when the port is 64-byte aligned as topo.c places it); what only RED,
 * PFC, failures, captures or the report use comes last.  Measured with
 * cachegrind: docs/benchmarks.md, "Issue 9's platform". */
typedef struct port {
    /* line 0: every packet */
    sink base;              /* recv: admit, mark, enqueue */
    sink *next;             /* its wire (packets forwarded by entropy) */
    sim *s;
    pkt *tx;                /* packet being serialised, or NULL */
    int64_t bytes;          /* queued bytes, all priorities (not the one in service) */
    shbuf *sb;              /* the switch's shared pool, or NULL: own buffer */
    uint32_t npkts;         /* queued packets */
    uint8_t down;           /* link failed: everything arriving is dropped */
    uint8_t pfc_in;         /* a link into this port's node runs PFC: account
                               arrivals (set by topo_finish); 0 keeps PFC off
                               the per-packet path */
    uint8_t pfc_paused;     /* bit c: PFC XOFF in force, class c not served */
    uint8_t pulls;          /* has a source (port_set_source) */
    /* line 1: every packet */
    port_rr *rr;            /* per-flow round robin, or NULL: FIFO per class */
    hook_chain *hooks;      /* arrival hooks (hook.h); NULL: none, one test per arrival */
    hook_wm *wm;            /* watermarks (hook.h); NULL: none */
    void (*tap)(void *ctx, const pkt *p);   /* sees every packet as its transmission
                                               starts (pcap: what a capture on
                                               the host records); NULL: off */
    int64_t busy_since;     /* start of the current busy period */
    uint64_t stat_rx_pkts;
    uint64_t stat_rx_bytes;     /* every arrival, admitted or not */
    int64_t stat_max_bytes; /* largest queue seen */
    /* line 2: departures */
    sim_timer done;         /* end of the current transmission */
    uint64_t stat_tx_pkts, stat_tx_bytes;
    int64_t stat_busy_ps;   /* time spent serialising, up to the last departure */
    int64_t ps_per_byte;    /* serialisation time of a byte when the rate
                               divides 8e12 bit-ps/s exactly (every usual
                               rate), so a packet's is one multiplication;
                               0: units_tx_time_ps (a 128-bit division) */
    /* line 3: the classes (class 0 first) */
    port_class cls[PORT_MAX_PRIO];
    port_cfg cfg;           /* its first six fields are read per packet;
                               fixed after port_init */
    /* cold */
    pkt_pool *pool;         /* dropped packets go back here */
    rng *r;                 /* RED draws; may be NULL without RED */
    void *tap_ctx;
    uint64_t stat_pfc_pauses;           /* XOFF frames received */
    uint64_t stat_drop_pkts, stat_mark_pkts, stat_drop_bytes;
    uint64_t stat_fail_drops;   /* packets lost to a link failure (also in stat_drop_pkts) */
    uint64_t stat_hook_drops;   /* packets dropped by hooks (also in stat_drop_pkts) */
    int64_t hook_held_bytes;    /* held by hooks (delayed): still in the network */
    uint32_t hook_held_pkts;
    port_source *source;    /* pulled from when a class's queue is empty (a NIC
                               scheduling its queue pairs), or NULL; `pulls`
                               says so on the hot line */
    int64_t stat_pfc_paused_ps;         /* time classes spent paused (summed over
                                           classes; a pause in force counts from
                                           pfc_since until its resume) */
    int64_t pfc_since[PORT_MAX_PRIO];   /* when class c's pause took effect */
    int64_t deq_ecn_k_bytes;    /* marking at dequeue: cfg's ecn_k_bytes and */
    int64_t deq_red_min_bytes;  /* red_min_bytes, moved here (cfg's read 0) */
    void *qd_priv;          /* cfg.qdisc's state (its priv_size), or NULL */
    uint64_t stat_lossless_drops;   /* admission drops of packets that came over a
                                       PFC link (each fails the run: port.c) */
    /* PFC deadlock watch (pfc_watch.h): called as a pause takes effect */
    void (*pfc_watch)(void *ctx, struct port *q, int c);
    void *pfc_watch_ctx;
    uint32_t pfc_watch_id;  /* the port's index for the watch */
} port;

/* Initialises a caller-owned port.  `name` must outlive it. */
void port_init(port *q, sim *s, pkt_pool *pool, rng *r, const port_cfg *cfg, const char *name);
/* Frees what port_set_flow_rr allocated. */
void port_fini(port *q);
/* Serves the port's flows round robin within each class (call before any
 * packet arrives). */
void port_set_flow_rr(port *q);
/* Marks at dequeue instead of enqueue (see above; before any packet
 * arrives, on a port without a tap). */
void port_set_mark_dequeue(port *q);
/* True if the port ECN-marks (the DCTCP step or RED), at either point. */
int port_marks_ecn(const port *q);
/* True if RED is on at the port, at either point. */
int port_red_on(const port *q);
/* A source the port pulls packets from (see "Pulling sources" above). */
struct port_source {
    /* The packet of class c to send now, or NULL (nothing ready; the source
     * calls port_kick when it has one). */
    pkt *(*pull)(port_source *self, port *q, int c);
};
/* Makes q pull from src whenever a class has no packet queued. */
void port_set_source(port *q, port_source *src);
/* The source has a packet ready: an idle port starts serving it. */
void port_kick(port *q);
/* Bytes queued plus the packet in service. */
int64_t port_backlog(const port *q);
/* The port whose sink s is, or NULL if s is another element. */
const port *port_of_sink(const sink *s);
/* Fails (down = 1) or repairs the port's link direction.  Failing drops the
 * queued packets and the one being serialised (counted as failure drops);
 * while down, arrivals are dropped. */
void port_set_down(port *q, int down);
/* Admits p as if it had just arrived, past the hooks (hook.h): the failed-
 * link check, drop-tail, ECN, enqueue.  For hooks that re-inject. */
void port_admit(port *q, pkt *p);

typedef struct wire_slot {
    int64_t due;            /* when the packet leaves the wire */
    pkt *p;
} wire_slot;

/* As a port's, the field order is for the cache: a packet's arrival and
 * departure touch the first line and the timer's. */
typedef struct wire {
    sink base;              /* recv: start propagating */
    sink *next;             /* the far end: a switch's forwarder or a host's
                               receive sink (packets forwarded by entropy) */
    wire_slot *ring;        /* packets in flight, oldest first */
    uint32_t cap, head, len;
    uint8_t stamp_in;       /* sets pkt.in on delivery: its far end runs PFC
                               (topo_finish; 1 by default).  Elsewhere
                               nothing reads it, and not writing it keeps a
                               line of the packet out of the cache */
    int64_t delay_ps;       /* propagation delay */
    sim *s;
    sim_timer arrive;       /* the head's arrival */
    uint64_t stat_pkts;     /* packets carried */
    uint64_t stat_lost_bytes;   /* lost at failures (wire_drop_all) */
    /* PFC at the receiving switch, for packets that came over this wire,
     * on a line of its own (class 0's count on it too): every packet the
     * switch admits and sends touches it, and nothing else.  The feeding
     * port's thresholds are copied here by wire_set_src, so that the
     * accounting does not reach into that port's cold lines. */
    _Alignas(64) int64_t pfc_xoff_bytes;    /* the feeding port's cfg */
    int64_t pfc_xon_bytes;
    port *src;              /* the port that feeds it, or NULL (wire_set_src,
                               called by topo_add_link): PFC pauses it */
    uint8_t pfc_on;         /* src runs PFC (pfc_xoff_bytes > 0) */
    uint8_t pfc_nprio;      /* src's classes */
    uint8_t pfc_xoff[PORT_MAX_PRIO];    /* XOFF sent (in flight or in force) */
    int64_t pfc_bytes[PORT_MAX_PRIO];   /* bytes it holds, per class */
} wire;

void wire_init(wire *w, sim *s, int64_t delay_ps, const char *name);
/* The port feeding w (its near end): PFC pauses it, with its thresholds
 * (read from its cfg now: a port's cfg is fixed after port_init). */
void wire_set_src(wire *w, port *src);
/* The wire whose sink s is, or NULL if s is another element. */
const wire *wire_of_sink(const sink *s);
void wire_fini(wire *w);
/* Loses every packet on the wire (link failure): freed to pool, counted.
 * Returns how many. */
/* Bytes of the packets on the wire now. */
uint64_t wire_bytes(const wire *w);
uint32_t wire_drop_all(wire *w, pkt_pool *pool);

#endif
