/*
 * fault.h - injected faults beyond link up/down, with ground truth.
 *
 * A fault set is a list of faults read from a scenario list (fault_conf),
 * each in force over [at, until) (until absent: to the end of the run) on
 * a target: a link (both directions, `link: [a, b]`), one direction of a
 * link (`port: "a->b"`, the port's own name), or a node (`node: name`:
 * every egress port of a switch, or a host's NIC).  A fault is a hook by
 * name (hook.h: hook_kind): the set reads any kind of the list it is given
 * (net_registry.hooks); this file defines the fault family:
 *
 *   loss       each packet arriving at a target port is dropped with
 *              probability `rate`;
 *   delay      each packet (or a fraction `rate` of them) waits `delay`
 *              before entering the port's queue;
 *   blackhole  every packet is dropped: a switch or NIC gone silent, or a
 *              link that drops without routing noticing (a gray failure);
 *   corrupt    packets of priority `prio` (the packet's class, p->prio) are
 *              dropped with probability `rate`, other classes untouched
 *              (a port corrupting, hence dropping, one class's frames);
 *   flap       a link (`link` only) goes down at `at` for `duty` x
 *              `period`, comes back up, and repeats every `period` until
 *              `until`; each change is a real failure or repair
 *              (topo_link_set_up, with `convergence`).
 *
 * All but flap are hooks (hook.h) attached to the target ports at `at` and
 * detached at `until`, so a port costs nothing outside a fault's window;
 * a packet arriving exactly at `at` is affected, one arriving exactly at
 * `until` is not (when fault_start runs before the traffic is scheduled).
 * Several faults may share a port; they act in list order.  Each fault
 * draws from its own random stream, ("net.fault", index in the list), so
 * adding a fault to the end of the list never changes another's draws.
 * Flaps and the `failures` list of the net model both set links up and
 * down: do not put both on one link.
 *
 * Ground truth (fault_write_truth): `faults.csv`, one row per fault (what,
 * where, when, with its parameters, and what it did: packets seen, dropped
 * and delayed, down transitions and time), and `fault_events.csv`, one row
 * per change of state (start, end, down, up) with its time.
 *
 * Memory: the set owns everything it allocates; fault_destroy() detaches
 * its hooks, so it must come before topo_destroy().
 */
#ifndef AISIM_FAULT_H
#define AISIM_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/hook.h"
#include "aisim/out.h"
#include "aisim/sim.h"
#include "aisim/topo.h"

typedef struct fault_set fault_set;

/* The fault family of hook kinds (hook.h), for the registry. */
extern const hook_kind fault_loss, fault_delay, fault_blackhole, fault_flap, fault_corrupt;

/* What one fault did so far. */
typedef struct fault_stats {
    uint64_t seen_pkts;         /* packets its hook saw while in force
                                   (corrupt: of its class only) */
    uint64_t drop_pkts;         /* dropped by it (flap: lost at the link,
                                   in its ports and on its wires, while it
                                   was down) */
    uint64_t drop_bytes;        /* bytes of those (flap: not counted, 0) */
    uint64_t delay_pkts;        /* delayed by it */
    uint64_t redirect_pkts;     /* sent to another port by it (hook_redirect) */
    uint64_t down_events;       /* flap: times the link went down */
    int64_t down_ps;            /* flap: total time down */
} fault_stats;

/* Reads the scenario list `list` (a sequence of fault maps; NULL or absent:
 * an empty set) against topology t and engine s; `path` is the list's key
 * path for messages ("net.faults"), `seed` the run seed.  Errors are
 * "file:line:col: path[i].key: expected ..., found ...": an unknown kind,
 * node or link, a malformed port, keys that do not belong to the kind
 * (unknown key), a missing target or several, a missing rate, delay,
 * period, duty or prio, a value out of range, `until` not after `at`.
 * On success *fsp is a set owned by the caller; on error *fsp is NULL and
 * nothing is left allocated.  Schedules nothing. */
int fault_conf(fault_set **fsp, topo *t, sim *s, const hook_kind *const *kinds, cfg_node *list,
               const char *path, uint64_t seed, err *e);
/* The same in two steps: an empty set whose lists may name `kinds`
 * (NULL-terminated: net_registry.hooks), then a list appended (its hooks
 * numbered after those already in the set, for their streams and rows;
 * `what` names the list's items in messages).
 * On an error from fault_add the set is still the caller's to destroy. */
fault_set *fault_create(topo *t, sim *s, const hook_kind *const *kinds, uint64_t seed);
int fault_add(fault_set *fs, cfg_node *list, const char *path, const char *what, err *e);

/* Schedules every fault's start, end and flaps.  A fault whose `at` is not
 * after now starts at once.  Call once, before the traffic is scheduled. */
void fault_start(fault_set *fs);

/* True if some fault changes links' state (flap): the owner should then
 * follow routing changes (topo_on_routing_change). */
bool fault_changes_routing(const fault_set *fs);

/* The longest any fault holds a packet back at one port (the largest
 * `delay` of the delay faults; 0 without any): what a connection's linger
 * must add per hop (network.c). */
int64_t fault_hold_ps(const fault_set *fs);

size_t fault_count(const fault_set *fs);
/* What fault i did so far (a flap's current down spell included). */
void fault_stats_of(const fault_set *fs, size_t i, fault_stats *st);
/* Faults in force now. */
size_t fault_active(const fault_set *fs);

/* Writes faults.csv and fault_events.csv into the run directory.  Returns
 * 0 or a negative code with e filled. */
int fault_write_truth(fault_set *fs, out *o, err *e);

/* Detaches every hook and frees the set (NULL is fine).  Before
 * topo_destroy(); the engine must not run the set's events afterwards. */
void fault_destroy(fault_set *fs);

#endif
