/*
 * lossless.h - what keeps PFC classes lossless (docs/network.md,
 * "Lossless classes"): a check that no switch buffer can be overflowed by
 * what its PFC ingress links may send, and a watch for PFC deadlock (a
 * cycle of ports paused without release).  Not a public header.
 */
#ifndef AISIM_LOSSLESS_H
#define AISIM_LOSSLESS_H

#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/topo.h"

/* A cycle of ports each paused (in one class) without release for this
 * long is reported as a deadlock: the run fails naming the cycle. */
#define PFC_DEADLOCK_HOLD_PS INT64_C(1000000000)   /* 1 ms */

/* The most the switch at the far end of a PFC link may come to hold from
 * it: per class, XOFF plus the packet that crossed it, and, once the pause
 * is sent, what is on the wire (one delay at the line rate), what the
 * sender sends until the pause reaches it (another) and the packet it is
 * serialising then.  pkt_max: the largest packet (payload + header). */
int64_t lossless_link_bound(const port *feeding, int64_t delay_ps, int64_t pkt_max);

/* Refuses (located at `at`, path `path`) a topology where a switch egress
 * port's buffer, or a switch's shared pool, is smaller than what the PFC
 * links into that switch may hold (lossless_link_bound, summed; a port is
 * not counted against its own link's ingress: no shortest path turns back).
 * The message gives the arithmetic. */
int lossless_check(const topo *t, int64_t pkt_max, const cfg_node *at, const char *path, err *e);

/* Watches every port of t for PFC deadlock (PFC_DEADLOCK_HOLD_PS). */
void pfc_watch_arm(topo *t, sim *s);

#endif
