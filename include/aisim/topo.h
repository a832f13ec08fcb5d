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
 * A host with an intra-host (NVLink, link_cfg.intra_host) next hop takes
 * only those: GPUs of a server talk over NVLink, never through a switch
 * that is as few hops away.
 * Routes are interned per path (a path used by many flows is one route
 * object, shared by ECMP and the path lists); they are immutable, owned by
 * the topology and stay valid until topo_destroy(), also after failures.
 * Each route knows its reverse (the same links backwards, ending at the
 * source's receive sink, for ACKs): route->reverse->reverse == route.
 * A route over n links has 2n+1 hops: n (port, wire) pairs, then the
 * destination's receive sink.
 *
 * Link failures: topo_link_set_up() takes a link down or up at the current
 * time.  Going down, both ports drop what they hold and what reaches them
 * (port stat_fail_drops) and both wires lose what they carry
 * (topo_link_wire_losses); routing learns of the change `convergence_ps`
 * later, so routes requested before then may still use the dead link and
 * routes requested after avoid it.  Routes already handed out are not
 * changed: their owners re-request them when told that routing changed
 * (topo_on_routing_change), as switches' tables would move every flow at
 * convergence; packets already sent keep their route.
 *
 * Memory: the topology owns nodes, ports, wires, names and routes (an
 * arena), freed by topo_destroy(), which must come before the engine's
 * sim_destroy() (and the engine must not run again after it).
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

/* Node ids and hop distances are 32-bit (a distance row is 4 bytes per
 * node); link ids are stored with a direction bit in 32 bits.  In practice
 * memory limits a topology long before these do. */
#define TOPO_MAX_NODES 2147483646
#define TOPO_MAX_LINKS 1073741823

enum node_kind { NODE_HOST, NODE_SWITCH };

typedef struct link_cfg {
    int64_t rate_bps;       /* both directions */
    int64_t delay_ps;       /* propagation, each direction */
    port_cfg port;          /* queue settings of both egress ports
                               (port.rate_bps is taken from rate_bps) */
    bool intra_host;        /* NVLink class, inside a server: not a NIC */
} link_cfg;

/* An empty topology on engine s, with packets from pool. */
topo *topo_create(sim *s, pkt_pool *pool, uint64_t seed);
void topo_destroy(topo *t);

/* Adds a node; returns its id (0, 1, ...), or AISIM_EINVAL if the name is
 * empty or taken, AISIM_ERANGE past TOPO_MAX_NODES.  The string is copied. */
int topo_add_node(topo *t, const char *name, enum node_kind kind);
/* Adds a full-duplex link between nodes a and b (a != b; parallel links
 * are allowed); returns its id, or AISIM_EINVAL for bad ends, AISIM_ERANGE
 * for a rate <= 0, a delay < 0, a buffer <= 0 or past TOPO_MAX_LINKS.  Its
 * ports and wires are initialised at once and named "a->b" and
 * "a->b/wire". */
int topo_add_link(topo *t, int a, int b, const link_cfg *cfg);
/* Checks the graph: at least one host, every host has a link, every two
 * hosts are joined by a path whose inner nodes are switches (a direct
 * host-host link is allowed).  Distances are computed lazily afterwards.
 * Call once, after adding; nothing may be added after it. */
int topo_finish(topo *t, err *e);

/* Builders: each adds nodes and links to an empty topology and calls
 * topo_finish().  Host ids come first (0..hosts-1) in every builder, so
 * node id == host index for hosts, named "h0", "h1", ...
 *   dumbbell:   hosts 0..left-1 on switch "left", the others on "right";
 *               links: host i is link i, the bottleneck left-right is last.
 *   star:       `hosts` hosts on switch "sw0" (host i is link i); for
 *               incast, by convention h0 receives and h1..h{hosts-1} send.
 *   leaf_spine: host i on "leaf{i / hosts_per_leaf}"; links: host i is
 *               link i, then leaf l - "spine{s}" is link hosts + l*spines + s.
 *               Oversubscription = hosts_per_leaf*host rate / (spines*fabric
 *               rate).
 *   fat_tree:   k even >= 2; k pods of k/2 "edge{p}_{i}" and k/2 "agg{p}_{i}",
 *               (k/2)^2 "core{i}"; k^3/4 hosts, host h under edge
 *               (h / (k/2)) in pod order; agg{p}_{j} links to cores
 *               j*k/2 .. j*k/2+k/2-1.  Links: hosts, edge-agg, agg-core. */
int topo_build_dumbbell(topo *t, int left, int right, const link_cfg *edge,
                        const link_cfg *bottleneck, err *e);
int topo_build_star(topo *t, int hosts, const link_cfg *edge, err *e);
int topo_build_leaf_spine(topo *t, int leaves, int spines, int hosts_per_leaf,
                          const link_cfg *host_link, const link_cfg *fabric_link, err *e);
int topo_build_fat_tree(topo *t, int k, const link_cfg *link, err *e);

/* An AI-cluster fabric of rail-aligned GPU servers (docs/network.md,
 * "AI-cluster topologies").  Each server has `gpus` GPUs and as many NICs: GPU j uses
 * NIC j, which belongs to rail j.  An endpoint (a host node) is one GPU with
 * its NIC, named "s{i}.g{j}"; its host index is i * gpus + j.  A NIC has
 * `planes` ports: port p links to a ToR of plane p, so with planes = 2 every
 * endpoint is multi-homed and picks a plane per flow (ECMP) or per packet
 * (spraying) at its first hop; planes share nothing.  Servers are grouped
 * into segments of `servers_per_tor`: in each plane the rail-j NICs of a
 * segment share ToR "tor{seg}.r{j}" ("p{p}.tor{seg}.r{j}" with 2+ planes),
 * and every ToR of a plane links to each of the plane's `aggs` aggregation
 * switches "agg{a}" ("p{p}.agg{a}").  With gpus > 1 each server has an
 * NVSwitch-class switch "s{i}.nvs" joined to its GPUs by `nvlink` links:
 * same-server traffic takes 2 NVLink hops, never the network (hosts do not
 * forward, so the NVSwitch carries nothing else; PXN is not modelled).
 * Node ids: endpoints, NVSwitches, ToRs (plane, segment, rail order), aggs
 * (plane-major).  Link ids: NIC ports (endpoint-major, then plane), then
 * NVLinks (endpoint order), then ToR-agg (plane, ToR, agg).  The last
 * segment may be partial. */
typedef struct topo_rail_cfg {
    int servers;                /* >= 1 */
    int gpus;                   /* GPUs = NICs = rails per server, >= 1 */
    int servers_per_tor;        /* servers per segment, >= 1 */
    int aggs;                   /* aggregation switches per plane, >= 1 */
    int planes;                 /* ports per NIC: 1 rail-optimised, 2 dual-plane */
    link_cfg nic;               /* NIC port - ToR */
    link_cfg fabric;            /* ToR - agg */
    link_cfg nvlink;            /* GPU - NVSwitch (made intra_host) */
} topo_rail_cfg;
int topo_build_rail(topo *t, const topo_rail_cfg *c, err *e);

/* Builds any of the above, or a custom topology, from a scenario's
 * `topology` map (docs/network.md lists the keys); errors name the
 * scenario location ("file:line:col: topology.key: ...").  `path` is the
 * key path of n for messages.  On error the topology is unusable: destroy
 * it. */
int topo_from_cfg(topo *t, cfg_node *n, const char *path, err *e);

size_t topo_nodes(const topo *t);
size_t topo_hosts(const topo *t);
size_t topo_links(const topo *t);
const char *topo_node_name(const topo *t, int node);
enum node_kind topo_node_kind(const topo *t, int node);
int topo_find_node(const topo *t, const char *name);        /* -1 if none */
int topo_host_node(const topo *t, int host);                /* host index -> node id */
int topo_node_host(const topo *t, int node);                /* node id -> host index, -1 */
/* The receive sink of a host (the last hop of routes to it). */
sink *topo_host_sink(topo *t, int host);

/* A node's links, in link id order (the order hook_attach_node attaches
 * in), i in [0, topo_node_degree): the egress port at this node, and the
 * node at the far end (*link, if not NULL, gets the link's id).  O(1)
 * each, for walks over a node's ports without scanning every link. */
size_t topo_node_degree(const topo *t, int node);
port *topo_node_port(topo *t, int node, size_t i);
int topo_node_adj(const topo *t, int node, size_t i, int *link);

/* The two egress ports of a link: dir 0 is a->b, dir 1 is b->a. */
port *topo_link_port(topo *t, int link, int dir);
wire *topo_link_wire(topo *t, int link, int dir);
void topo_link_ends(const topo *t, int link, int *a, int *b);
/* The first link (lowest id) between nodes a and b, or -1. */
int topo_find_link(const topo *t, int a, int b);
bool topo_link_is_up(const topo *t, int link);
/* True for a link of the intra-host class (link_cfg.intra_host: a GPU's
 * NVLink); a host's network capacity is that of its other links. */
bool topo_link_is_intra_host(const topo *t, int link);
/* Packets lost on the link's wires when it failed, both directions. */
uint64_t topo_link_wire_losses(const topo *t, int link);
/* Packets that reached a host for a flow not bound there (freed and counted
 * as dropped bytes, not delivered). */
uint64_t topo_unbound_drops(const topo *t);

/* Per-switch ECMP hash seeds: random from the run seed (default; stream
 * "topo.hash", index node id; `value` is then ignored), or all the same
 * value (to reproduce hash polarisation).  Affects routes requested later. */
void topo_set_hash_seeds(topo *t, bool all_equal, uint64_t value);

/* Gives every switch a shared buffer of `bytes` with dynamic threshold
 * factor `alpha` (port.h: shbuf), used by all its egress ports instead of
 * their own buffers alone (each port's buffer_bytes remains a cap);
 * pfc_alpha > 0 makes PFC's XOFF dynamic too.  Call after building, before
 * traffic.  Hosts keep their NIC buffers. */
void topo_set_shared_buffer(topo *t, int64_t bytes, double alpha, double pfc_alpha);
/* Makes every host NIC serve its flows round robin (port.h) instead of
 * FIFO.  Call after building, before traffic. */
void topo_set_nic_flow_rr(topo *t);
/* Switch ports mark ECN at dequeue, on the queue a packet leaves behind
 * (port_set_mark_dequeue; topology.mark_at: dequeue). */
void topo_set_mark_dequeue(topo *t);
/* The queue disciplines a link's `qdisc` key may name (qdisc.h; the
 * registry's list, NULL-terminated): set before topo_from_cfg.  Without it
 * only the links' inline keys apply. */
void topo_set_qdiscs(topo *t, const struct qdisc_ops *const *list);
const struct qdisc_ops *const *topo_qdiscs(const topo *t);
/* Settings memory that lives as long as t (a discipline's conf). */
void *topo_conf_alloc(void *t, size_t size);
/* A switch's shared pool, or NULL (a host, or no shared buffer). */
const shbuf *topo_node_shbuf(const topo *t, int node);

/* Registers the endpoints of flow `flow_id` (ids dense and increasing, not
 * reused; the table (idtab.h) holds the ids bound now): packets of the flow
 * reaching host `dst_host` are handed to `rx`, those reaching `src_host`
 * (ACKs) to `tx`.  tx and rx both NULL unbinds.  Packets for an unbound
 * flow are freed and counted (topo_unbound_drops).  Rebinding replaces.
 * src_host != dst_host. */
void topo_bind_flow(topo *t, uint32_t flow_id, int src_host, sink *tx, int dst_host, sink *rx);

/* The ECMP route of a flow from src_host to dst_host; key is the flow's
 * 5-tuple hash.  At each node with c > 1 equal-cost next hops (in link id
 * order) the choice is fmix64(key ^ node seed) mod c.  NULL if unreachable
 * (after failures). */
const route *topo_route_ecmp(topo *t, int src_host, int dst_host, uint64_t key);
/* The route of a flow under the topology's forwarder (topo_set_forwarder,
 * fwd.h): at each node with c > 1 next hops, the forwarder's choice for a
 * flow of this key (no packet); the ECMP route where none is set. */
const route *topo_route_flow(topo *t, int src_host, int dst_host, uint64_t key);
/* Sets the forwarder every node uses for packets forwarded hop by hop and
 * topo_route_flow uses for flows (fwd.h), with its state; ops->configure
 * may reject the topology (a located error at n, path).  Call after
 * building, before traffic; cfg: the forwarder's bound keys (fwd_ops.keys)
 * or NULL. */
struct fwd_ops;
struct fwd_cand;
int topo_set_forwarder(topo *t, const struct fwd_ops *ops, const void *cfg, const cfg_node *n,
                       const char *path, err *e);
/* The equal-cost next hops of `node` toward node dst_node (fwd.h: in link
 * id order; *c valid until the next call or routing change); returns their
 * count, 0 if routing has cut dst_node off.  What the node's forwarder
 * chooses among, kept per (node, destination). */
uint32_t topo_next_hops(topo *t, int node, int dst_node, const struct fwd_cand **c);
/* The path of route rt (one topo built) as link hops: for each link it
 * crosses, in order, link id * 2 + direction (0: a->b, 1: b->a); *n gets
 * the count.  The representation of a path that the packet plane shares
 * with the flow-level plane; the reverse route's path is this one
 * backwards with each direction flipped.  Valid until topo_destroy(). */
const int32_t *topo_route_path(const topo *t, const route *rt, size_t *n);

/* The forwarder of a node (pkt.h: forwarding by entropy): a packet with
 * rt NULL, dst_node and entropy set, handed to the forwarder of its source
 * host, is forwarded hop by hop toward dst_node along equal-cost paths,
 * each node choosing its next hop with the topology's forwarder (fwd.h;
 * by default from the entropy: by hash (ECMP with a per-packet value:
 * random spraying), or as a path index (PKT_F_PATHIDX: round robin over
 * the paths)).  Each node keeps its next hops per destination, rebuilt
 * when routing changes, so a hop's cost does not grow with the node's
 * degree.  Packets a node cannot forward (the destination is cut off) are
 * dropped and counted. */
sink *topo_node_forwarder(topo *t, int node);
uint64_t topo_noroute_drops(const topo *t);

/* Every equal-cost route between two hosts (for analysis and tests); *n gets the
 * count (0 and NULL if unreachable).  Order: depth first, next hops in link
 * id order at each node.  The array is owned by the topology and stays
 * valid; after a routing change a new call returns a new array. */
const route *const *topo_paths(topo *t, int src_host, int dst_host, size_t *n);

/* Calls fn(ctx, p, 0) for every packet host `host` sends (as it reaches
 * its NIC) and fn(ctx, p, 1) for every packet it receives: a capture point
 * for pcap output.  One tap per host; NULL removes it. */
void topo_set_host_tap(topo *t, int host, void (*fn)(void *ctx, const pkt *p, int rx),
                       void *ctx);

/* Packets held by the network right now: queued or being serialised at any
 * port, held by a port's hooks (hook.h: delayed), or on any wire.  With
 * the pool's live count this checks conservation: every packet allocated
 * is in the network or held by an endpoint. */
uint64_t topo_packets_in_network(topo *t);

/* Byte conservation: everything hosts put into their NICs (injected) was
 * delivered to a host's endpoint, dropped (at a port, by a port's hooks, on
 * a wire at a failure, at a node with no next hop, or at a host with no
 * endpoint bound for it) or is still in the network (as
 * topo_packets_in_network):
 * injected == delivered + dropped + in_network. */
typedef struct topo_bytes {
    uint64_t injected, delivered, dropped, in_network;
} topo_bytes;
void topo_byte_counts(topo *t, topo_bytes *b);

/* Completion time of a transfer of `bytes` of payload over route rt on an
 * empty network: the first packet's store-and-forward latency along the
 * path plus the remaining packets at the slowest link's rate (packets of
 * mss payload + hdr header bytes).  The reference for FCT slowdown. */
int64_t topo_route_ideal_ps(const route *rt, uint64_t bytes, uint32_t mss, uint32_t hdr);

/* Takes a link down or up now.  A down link drops what reaches its ports;
 * routes requested after `convergence_ps` from now avoid it. */
void topo_link_set_up(topo *t, int link, bool up, int64_t convergence_ps);

/* fn(ctx) runs whenever routing learns of a failure or a repair (the
 * convergence delay after it): the moment to ask for routes again.  One
 * callback; NULL removes it. */
void topo_on_routing_change(topo *t, void (*fn)(void *ctx), void *ctx);

#endif
