/*
 * rw.h - the real-mode SDTCP rewriter's core, without I/O: what a Linux
 * router does with each TCP packet it is shown (NFQUEUE hands it the
 * receiver's ACKs and both directions' SYNs) and each queue reading it
 * polls, driving the simulator's policy (sdtcp.h) unmodified.
 *
 *  - Flows are 4-tuples named from the receiver's side (receiver address
 *    and port, sender address and port), so an ACK and the SYNs of both
 *    directions find the same entry; a SYN from either side starts a new
 *    flow on its tuple (ports are reused).
 *  - Window scale (RFC 7323): the receiver's ACKs count units of 2^s, s
 *    being what the receiver announced in its SYN (or SYN-ACK), provided
 *    the other side announced the option too; otherwise 0.  The scale is
 *    known only once both SYNs passed; an ACK of a flow whose SYNs the
 *    rewriter did not see (it started later) is never rewritten (counted).
 *  - Bytes of a flow (the policy's classification): the advance of the
 *    receiver's cumulative ACK since its first ACK (bytes delivered, where
 *    the simulated switch counts bytes forwarded); age: since its first
 *    SYN.  A FIN or RST ends the flow for the policy.
 *  - Queue readings (rw_control) go through watermarks with hysteresis
 *    like the simulated switch's (sdn.h): levels notify, Q_L and Q_H, each
 *    re-armed when the queue falls by (notify - clear) of the buffer; a
 *    rise above a level notifies, at most one per min_gap; a notification
 *    repeats every renotify while the queue stays above the lowest level;
 *    a fall to `clear` after a notification sends the clear.  The
 *    observation holds the flows whose ACKs passed in the last
 *    stats_interval.  The policy's decisions apply `delay` later (2 x a
 *    one-way controller latency + processing: a remote controller).
 *  - A rule caps a flow's window; it goes after idle_timeout without an
 *    ACK of the flow (and hard_timeout after install), as the simulated
 *    switch's do.  An ACK of a capped flow leaves with
 *    tcpwire_win_cap(field, scale, cap, round) and its checksum updated by
 *    RFC 1624 (tcpwire_csum_update16), never recomputed.
 *
 * Times are nanoseconds on any monotonic clock.
 */
#ifndef AISIM_REAL_SDTCP_RW_H
#define AISIM_REAL_SDTCP_RW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/sdtcp.h"
#include "aisim/tcpwire.h"

typedef struct rw_params {
    sdtcp_params pol;           /* the policy's own parameters */
    uint32_t receiver_ip;       /* host order: the receiver whose ACKs are rewritten */
    int64_t rate_bps;           /* the bottleneck's rate */
    int64_t buffer_bytes;       /* its buffer */
    double notify, clear;       /* fractions of the buffer */
    int64_t min_gap_ns, renotify_ns, stats_ns;
    int64_t delay_ns;           /* notification to rule in force */
    enum tcpwire_round round;
    bool rewrite;               /* false: observe only (decide, count, never write) */
} rw_params;

typedef struct rw_counts {
    uint64_t pkts, acks, syns, fins, parse_errors;
    uint64_t rewritten;         /* ACKs whose window field was lowered */
    uint64_t would_rewrite;     /* observe mode: ACKs that would have been */
    uint64_t unknown_scale;     /* ACKs of capped-able flows whose SYNs were not seen */
    uint64_t notifications, clears, mods, dels, expired;
    uint64_t flows;
    uint64_t rscale[16];        /* receivers' SYNs by announced shift (15: no option) */
} rw_counts;

/* What one control step did (for the log). */
typedef struct rw_event {
    int kind;                   /* 0 nothing, 1 notification, 2 cleared */
    int band;                   /* notification: 0 mild, 1 moderate, 2 severe */
    size_t nflows, nmods;
} rw_event;

typedef struct rw rw;

rw *rw_create(const rw_params *p);
void rw_destroy(rw *r);

/* One IPv4 packet (from its IP header on, len bytes, writable).  Returns 1
 * if the packet was changed (window and checksum), 0 if not, -1 if it is
 * not a TCP/IPv4 packet it can read (counted, left alone). */
int rw_packet(rw *r, uint8_t *pkt, size_t len, int64_t now_ns);

/* One queue reading of `queue_bytes` at now_ns: watermarks, the policy,
 * decisions queued to apply at now + delay; due decisions applied.  *ev
 * (may be NULL) says what happened. */
void rw_control(rw *r, int64_t now_ns, int64_t queue_bytes, rw_event *ev);

void rw_get_counts(const rw *r, rw_counts *k);
/* Rules in force now. */
size_t rw_rules(const rw *r);
/* The window scale the rewriter uses for this flow: 0..14, or -1 if it
 * does not know it (addresses host order; rport the receiver's port). */
int rw_flow_scale(const rw *r, uint32_t raddr, uint16_t rport, uint32_t saddr, uint16_t sport);

/* The TCP checksum of an IPv4 packet computed in full (pseudo-header,
 * header, payload) with the field taken as zero: what the incremental
 * update must equal.  -1 if the packet is not TCP/IPv4. */
int rw_tcp_csum_full(const uint8_t *pkt, size_t len);

#endif
