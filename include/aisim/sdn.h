/*
 * sdn.h - an SDN control plane on the packet plane's switch hooks and queue
 * watermarks (hook.h): a controller node, OpenFlow-style switches, and the
 * messages between them.  Reusable by any module that steers a network from
 * a central view; SDTCP (sdtcp.h) is the first.
 *
 * Controller.  One controller; each managed switch has its own one-way
 * control-channel latency.  A message from a switch reaches the controller
 * `latency` after it is sent and is then handled in arrival order, each
 * taking `proc_ps` of the controller's time (a busy controller queues
 * messages); a flow-mod from the controller reaches its switch `latency`
 * after it is sent and applies at once.  Messages are events, not packets:
 * the control network is out of band, as OpenFlow's usually is.
 *
 * Switch -> controller:
 *   SDN_CONGESTION  an egress port's queue rose above one of its watermark
 *                   levels (sdn_watch): edge-triggered with hysteresis (a
 *                   level must fall to its low mark before it notifies
 *                   again) and rate-limited per port (at most one per
 *                   `cn_gap_ps`; a rise inside the gap is sent when the gap
 *                   ends if the queue is still above a level).  It carries
 *                   the queue, the port's rate and buffer, the level, and
 *                   the flow entries of that port seen in the last stats
 *                   interval (the flows sharing the congested queue).
 *                   While the queue stays above a level the notification
 *                   is repeated every `renotify_ps` (optional): the flows
 *                   sharing the port, and their classes, change meanwhile.
 *   SDN_CLEARED     the queue fell to the lowest level's low mark after a
 *                   notification.
 *   SDN_FLOW_STATS  every `stats_ps`, the switch's flow entries seen in the
 *                   interval: per flow and egress port, packets and bytes
 *                   of data in the interval and since the entry was made,
 *                   drops, and the entry's age (OpenFlow's duration).
 * Controller -> switch:
 *   flow-mod        installs (or replaces) a rule: a match (one flow, the
 *                   stand-in for a 5-tuple, or a wildcard on all flows,
 *                   optionally restricted to one egress port) with the
 *                   action "rewrite the advertised window of matching ACKs
 *                   to min(their window, wnd_bytes)", an idle timeout (no
 *                   matching ACK for that long) and a hard timeout (0: none).
 *   flow-delete     removes the rules with that match.
 * A rule that times out is removed at the switch and counted (OpenFlow's
 * flow-removed; not sent to the controller).
 *
 * Data path.  Each managed switch carries one hook on every egress port: a
 * data packet updates its flow entry (and its drop count: the hook admits
 * the packet itself, hook_resume, and sees whether the port dropped it);
 * an ACK is matched against the rules (exact match by flow id, then the
 * wildcards) and its window rewritten in place.  End hosts are unchanged.
 */
#ifndef AISIM_SDN_H
#define AISIM_SDN_H

#include <stdbool.h>
#include <stdint.h>

#include "aisim/hook.h"
#include "aisim/topo.h"

typedef struct sdn sdn;

enum sdn_msg_kind { SDN_CONGESTION, SDN_CLEARED, SDN_FLOW_STATS };

#define SDN_ANY UINT32_MAX      /* match any flow / any port */
#define SDN_MAX_LEVELS 4        /* watermark levels per port */

/* A flow entry at a switch, as reported. */
typedef struct sdn_flow_stat {
    uint32_t flow;              /* flow (connection) id */
    uint32_t port;              /* egress port index at the switch */
    uint8_t prio;               /* priority class of its data */
    uint64_t pkts, bytes;       /* data in the last interval */
    uint64_t total_pkts, total_bytes;   /* since the entry was made */
    uint64_t drops;             /* data packets the port dropped, total */
    int64_t first_ps;           /* when the entry was made */
    int64_t last_ps;            /* last data packet seen */
} sdn_flow_stat;

/* A message as the controller receives it. */
typedef struct sdn_msg {
    int kind;                   /* enum sdn_msg_kind */
    int sw;                     /* switch index (sdn_add_switch order) */
    uint32_t port;              /* egress port index (CONGESTION, CLEARED) */
    int level;                  /* watermark level crossed (CONGESTION) */
    int64_t queue_bytes;        /* queue when sent */
    int64_t rate_bps, buffer_bytes;     /* the port's */
    int64_t sent_ps;            /* when the switch sent it */
    const sdn_flow_stat *flows; /* CONGESTION: the port's flows; STATS: all */
    uint32_t nflows;
} sdn_msg;

typedef void sdn_ctl_fn(void *ctx, sdn *c, const sdn_msg *m);

typedef struct sdn_match {
    uint32_t flow;              /* a flow id, or SDN_ANY */
    uint32_t port;              /* ACKs leaving this egress port, or SDN_ANY */
} sdn_match;

typedef struct sdn_counts {
    uint64_t cn, cr, stats;     /* switch -> controller messages */
    uint64_t cn_suppressed;     /* rises held back by the rate limit */
    uint64_t cn_repeat;         /* notifications repeated (in cn too) */
    uint64_t mods, dels;        /* controller -> switch messages */
    uint64_t rewrites;          /* ACKs whose window was lowered */
    uint64_t expired;           /* rules removed by a timeout */
} sdn_counts;

/* A controller on engine s whose handler fn(ctx, ...) sees every message;
 * proc_ps: its time per message; stats_ps: the flow-stats period (0: none,
 * and flow entries then live 10 ms after their last packet). */
sdn *sdn_create(sim *s, topo *t, int64_t proc_ps, int64_t stats_ps, sdn_ctl_fn *fn,
                void *ctx);
void sdn_destroy(sdn *c);
/* Manages switch `node` over a channel of one-way latency_ps: hooks its
 * egress ports.  Returns its index.  Call before sdn_start. */
int sdn_add_switch(sdn *c, int node, int64_t latency_ps);
/* Egress ports of switch sw, by index. */
uint32_t sdn_switch_ports(const sdn *c, int sw);
port *sdn_port(const sdn *c, int sw, uint32_t i);
/* Watches port i of switch sw: levels[k] = {high, low} bytes, ascending;
 * cn_gap_ps: the rate limit; renotify_ps: while the queue stays above a
 * level, the notification is repeated this often (0: never).  Call before
 * sdn_start. */
void sdn_watch(sdn *c, int sw, uint32_t i, const int64_t (*levels)[2], int nlevels,
               int64_t cn_gap_ps, int64_t renotify_ps);
/* Starts the stats timer. */
void sdn_start(sdn *c);

/* Controller -> switch, sent now. */
void sdn_flow_mod(sdn *c, int sw, sdn_match m, uint32_t wnd_bytes, int64_t idle_ps,
                  int64_t hard_ps);
void sdn_flow_delete(sdn *c, int sw, sdn_match m);

/* Rules installed at switch sw now (after timeouts checked lazily). */
uint32_t sdn_rules(const sdn *c, int sw);
/* The window rule for ACKs of `flow` leaving port i of sw, if one applies
 * now: true and *wnd set. */
bool sdn_rule_for(sdn *c, int sw, uint32_t flow, uint32_t pi, uint32_t *wnd);
/* The flow entry of `flow` at sw (NULL: none). */
const sdn_flow_stat *sdn_flow_entry(const sdn *c, int sw, uint32_t flow);
void sdn_get_counts(const sdn *c, sdn_counts *k);
/* Control messages, both ways, so far. */
uint64_t sdn_messages(const sdn *c);

#endif
