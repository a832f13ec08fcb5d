/*
 * sdtcp.h - the SDTCP policy (Lu et al., Sensors 2017; papers.md §3),
 * sans-I/O: observations in (a congestion notification with the flows of
 * the congested port, a congestion-cleared message), decisions out (window
 * rules for the switch: flow-mods and deletions).  It knows nothing of
 * events, packets or the control channel; the glue (src/systems/sdtcp/)
 * feeds it sdn.h messages and sends its decisions as sdn.h flow-mods.
 *
 * Classification: a flow is long-lived (background) when its age at the
 * switch exceeds bg_age_ps or its bytes exceed bg_bytes; otherwise it is a
 * burst (high-priority) flow.
 *
 * Window on a notification for a port of rate C carrying n flows (b
 * background, a = n - b burst) with queue q bytes:
 *   swnd = (C * rtt / 8 + q) / n                      (fair share, bytes)
 *   q <  q_low             background rwnd = f_mild * swnd      (2/3)
 *   q_low <= q < q_high    background rwnd = f_moderate * swnd  (1/2)
 *   q >= q_high            background rwnd = min_wnd (1 MSS); in BANDED
 *                          mode burst flows get (n swnd - b MSS) / a
 * every value floored at min_wnd.
 * Modes:
 *   SDTCP_MINIMAL  only long-lived flows are slowed (the paper's claim);
 *   SDTCP_BANDED   the re-implementation's: bursts capped in the severe band;
 *   SDTCP_ALL      ablation: every flow treated as long-lived (no classes);
 *   SDTCP_FIXED    ablation: long-lived flows get fixed_wnd, whatever q.
 * Restoration: on a congestion-cleared message every rule the policy put
 * on that port is deleted (the hosts' own windows apply again); until then
 * a burst flow capped in the severe band keeps its cap through milder
 * bands.  Rules also carry idle/hard timeouts, so a rule of a flow that
 * ended goes away.
 */
#ifndef AISIM_SDTCP_H
#define AISIM_SDTCP_H

#include <stddef.h>
#include <stdint.h>

enum sdtcp_mode { SDTCP_MINIMAL, SDTCP_BANDED, SDTCP_ALL, SDTCP_FIXED };

typedef struct sdtcp_params {
    int mode;                   /* enum sdtcp_mode */
    int64_t rtt_ps;             /* base RTT in the fair share (300 us) */
    int64_t q_low_bytes;        /* Q_L (50 packets) */
    int64_t q_high_bytes;       /* Q_H (80 packets) */
    double f_mild, f_moderate;  /* 2/3, 1/2 */
    uint32_t min_wnd;           /* floor of every window: 1 MSS */
    uint32_t fixed_wnd;         /* SDTCP_FIXED's window */
    uint64_t bg_bytes;          /* long-lived above this many bytes (1 MB) */
    int64_t bg_age_ps;          /* ... or older than this (1 s) */
    int64_t idle_ps, hard_ps;   /* timeouts of the rules it installs */
} sdtcp_params;

/* A flow on the congested port, as the switch reported it. */
typedef struct sdtcp_flow {
    uint32_t flow;
    uint64_t bytes;             /* since the switch first saw it */
    int64_t age_ps;
} sdtcp_flow;

/* One observation. */
typedef struct sdtcp_obs {
    int cleared;                /* 0: congestion notification; 1: cleared */
    int sw;
    uint32_t port;
    int64_t queue_bytes, rate_bps;
    const sdtcp_flow *flows;
    size_t nflows;
} sdtcp_obs;

/* One decision: install (or replace) a rule, or delete one. */
typedef struct sdtcp_mod {
    int sw;
    uint32_t flow;
    int del;                    /* 1: delete the rule of this flow */
    uint32_t wnd;
    int64_t idle_ps, hard_ps;
} sdtcp_mod;

typedef struct sdtcp sdtcp;

/* The paper's defaults (mss: the transport's segment size). */
void sdtcp_params_default(sdtcp_params *p, uint32_t mss);
sdtcp *sdtcp_create(const sdtcp_params *p);
void sdtcp_destroy(sdtcp *s);
/* Decides on one observation: *out points to the decisions (valid until the
 * next call), their number is returned. */
size_t sdtcp_decide(sdtcp *s, const sdtcp_obs *o, const sdtcp_mod **out);
/* 1 if the policy would call this flow long-lived. */
int sdtcp_is_background(const sdtcp_params *p, const sdtcp_flow *f);

/* Decisions so far: flows capped (rules installed or replaced), rules
 * deleted, notifications with a band (0 mild, 1 moderate, 2 severe). */
typedef struct sdtcp_counts {
    uint64_t capped_bg, capped_burst, deleted, band[3];
} sdtcp_counts;
void sdtcp_get_counts(const sdtcp *s, sdtcp_counts *k);

#endif
