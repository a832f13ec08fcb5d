/*
 * topo.h - the network: nodes, links, and the routes between hosts.
 *
 * A topology is a graph of hosts and switches joined by full-duplex links.
 * Each direction of a link is an egress port (queue + serialiser) at the
 * sending node followed by a wire; a host's egress port is its NIC.  Every
 * node has a stable readable name ("h12", "leaf3", "spine0", "agg2_1",
 * "core3", or the names of a custom topology), used in every output.
 *
 * Routes.  Hosts do not forward.  Between two hosts, the equal-cost
 * (shortest in hops) paths form a DAG; a route is one path through it,
 * written as the sinks a packet passes: src NIC port, wire, switch port,
 * wire, ..., and last the destination host's receive sink, which hands the
 * packet to the transport endpoint registered for its flow (topo_bind_flow).
 *
 *   - ECMP (topo_route_ecmp): the path a switch-by-switch hash of the flow
 *     picks: at each node with several equal-cost next hops, the choice is
 *     hash(flow key, node's hash seed) mod (number of next hops).  Each
 *     switch has its own seed (drawn from the run seed, or all equal to
 *     study polarisation), so collisions and polarisation are those of
 *     real ECMP, not of a global path index.
 *   - Spraying (topo_paths): every equal-cost path, in a fixed order, for
 *     transports that choose one per packet.
 * Routes are built once per (flow) or per host pair and cached; they are
 * immutable and owned by the topology.  Each route knows its reverse (the
 * same links backwards, for ACKs).
 *
 * Link failures: topo_link_set_up() takes a link down or up at the current
 * time; packets arriving at a dead link's port are dropped (counted), and
 * routes computed after the routing convergence delay avoid it.
 *
 * Memory: the topology owns nodes, ports, wires, names and routes (one arena),
 * freed by topo_destroy().
 */
#ifndef AISIM_TOPO_H
#define AISIM_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/pkt.h"
#include "aisim/port.h"
#include "aisim/sim.h"

typedef struct topo topo;

enum node_kind { NODE_HOST, NODE_SWITCH };

typedef struct link_cfg {
    int64_t rate_bps;       /* both directions */
    int64_t delay_ps;       /* propagation, each direction */
    port_cfg port;          /* queue settings of both egress ports
                               (port.rate_bps is taken from rate_bps) */
} link_cfg;

/* An empty topology on engine s, with packets from pool. */
topo *topo_create(sim *s, pkt_pool *pool, uint64_t seed);
void topo_destroy(topo *t);

/* Adds a node; returns its id (0, 1, ...).  Names must be unique; the
 * string is copied. */
int topo_add_node(topo *t, const char *name, enum node_kind kind);
/* Adds a full-duplex link between nodes a and b; returns its id. */
int topo_add_link(topo *t, int a, int b, const link_cfg *cfg);
/* Checks the graph (every host reaches every other, no host-host link
 * unless allowed...) and computes distances.  Call once, after adding. */
int topo_finish(topo *t, err *e);

/* Builders: each adds nodes and links to an empty topology and calls
 * topo_finish().  Host ids come first (0..hosts-1) in every builder. */
int topo_build_dumbbell(topo *t, int left, int right, const link_cfg *edge,
                        const link_cfg *bottleneck, err *e);
int topo_build_star(topo *t, int hosts, const link_cfg *edge, err *e);
int topo_build_leaf_spine(topo *t, int leaves, int spines, int hosts_per_leaf,
                          const link_cfg *host_link, const link_cfg *fabric_link, err *e);
int topo_build_fat_tree(topo *t, int k, const link_cfg *link, err *e);

/* Builds any of the above, or a custom topology, from a scenario's
 * `topology` map; errors name the scenario location. */
int topo_from_cfg(topo *t, cfg_node *n, const char *path, err *e);

size_t topo_nodes(const topo *t);
size_t topo_hosts(const topo *t);
size_t topo_links(const topo *t);
const char *topo_node_name(const topo *t, int node);
enum node_kind topo_node_kind(const topo *t, int node);
int topo_find_node(const topo *t, const char *name);        /* -1 if none */
int topo_host_node(const topo *t, int host);                /* host index -> node id */

/* The two egress ports of a link: dir 0 is a->b, dir 1 is b->a. */
port *topo_link_port(topo *t, int link, int dir);
wire *topo_link_wire(topo *t, int link, int dir);
void topo_link_ends(const topo *t, int link, int *a, int *b);

/* Per-switch ECMP hash seeds: random from the run seed (default), or all the
 * same value (to reproduce hash polarisation). */
void topo_set_hash_seeds(topo *t, bool all_equal, uint64_t value);

/* Registers the endpoints of flow `flow_id` (dense ids from 0): packets
 * reaching host `dst_host` are handed to `rx`, those reaching `src_host`
 * (ACKs) to `tx`. */
void topo_bind_flow(topo *t, uint32_t flow_id, int src_host, sink *tx, int dst_host, sink *rx);

/* The ECMP route of a flow from src_host to dst_host; key is the flow's
 * 5-tuple hash.  NULL if unreachable (after failures). */
const route *topo_route_ecmp(topo *t, int src_host, int dst_host, uint64_t key);
/* Every equal-cost route between two hosts (for spraying); *n gets the
 * count.  The array is owned by the topology. */
const route *const *topo_paths(topo *t, int src_host, int dst_host, size_t *n);

/* Takes a link down or up now.  A down link drops what reaches its ports;
 * routes requested after `convergence_ps` from now avoid it. */
void topo_link_set_up(topo *t, int link, bool up, int64_t convergence_ps);

#endif
