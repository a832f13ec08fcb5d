/*
 * network.h - the network object: one packet-level network (topology,
 * packet pool, transport, connections, link failures, captures, sampling)
 * and the message API that workloads talk to.
 *
 * A workload never sees a transport or a route.  It sends messages:
 *
 *     network_send(n, src, dst, bytes, prio, tag, start, on_done, ctx)
 *
 * opens a connection of the scenario's transport from endpoint src to
 * endpoint dst, delivers `bytes` on it from `start` on, and calls
 * on_done(ctx, n, msg) when the receiver holds them all (or the transport
 * gave up: msg->aborted).  A workload that wants a persistent connection
 * (requests one after another on one TCP connection, messages on one
 * queue pair) opens it with network_connect() and sends on it with
 * network_send_on(); its messages complete in order.
 *
 * Connections opened by network_send() (and persistent ones after
 * network_close()) are freed once their transport is idle and a linger
 * long enough for their last packets to arrive has passed; a message's
 * record leaves memory for a file once it is complete and its counters are
 * final, so a run of 10^7 short messages holds only those in flight.
 *
 * Every message is one row of flows.csv: its start (the time asked for,
 * even if the endpoints were cut apart then and it waited for routing to
 * join them), its completion, the reference completion time on the empty
 * network (ideal), and the transport's retransmissions and timeouts while
 * it was in flight.  The tables of a run (flows, links, queues, switches,
 * FCT CDFs, pcap captures) are written by network_report(), so that every
 * model built on a network reports the same way.
 *
 * Endpoints are host indices (topo.h: 0..hosts-1).
 *
 * Life cycle: network_create() at configure time (builds everything, checks
 * every name; schedules nothing), network_start() at start, before any
 * message (faults, failures, sampling), messages from then on,
 * network_report(), network_destroy().
 */
#ifndef AISIM_NETWORK_H
#define AISIM_NETWORK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/model.h"
#include "aisim/out.h"
#include "aisim/topo.h"
#include "aisim/transport.h"

typedef struct network network;

/* The network's part of a scenario section, bound by the model that owns
 * the section (net.c lists the keys: topology, transport, hash_seeds,
 * routing, forwarder, failures, faults, hooks, pcap, pcap_max_packets,
 * sample_interval, sample_ports, sample_output, plane, flow, extensions). */
typedef struct network_cfg {
    cfg_node *topology, *transport, *failures, *faults, *hooks, *pcap, *sample_ports;
    cfg_node *flow;             /* the flow plane's keys (src/net/flow/flownet.h) */
    cfg_node *forwarder;        /* the forwarder's keys (fwd.h), or NULL */
    cfg_node *extensions;       /* name -> section of each extension (netext.h) */
    int plane;                  /* enum network_plane */
    int hash_seeds;             /* 0: random per switch, 1: all equal */
    const char *routing_name;   /* `routing`: a forwarder's name (fwd.h); NULL: */
    int routing;                /* ... its index in net_registry.forwarders
                                   (enum network_routing for the built-in one) */
    int64_t pcap_max;           /* records kept per capture */
    int64_t sample_ps;          /* queues.csv period, 0: off */
    int sample_out;             /* 0: queues.csv rows and queue_stats.csv,
                                   1: queue_stats.csv only */
} network_cfg;

/* The first forwarders of the built-in registry (src/cli/registry.c). */
enum network_routing { NET_ROUTE_ECMP, NET_ROUTE_SPRAY_RR, NET_ROUTE_SPRAY_RANDOM };
/* Packets through ports and wires, or max-min fair fluid flows
 * (docs/flow-level.md): the same messages, connections and tables. */
enum network_plane { NET_PLANE_PACKET, NET_PLANE_FLOW };

/* One message (one row of flows.csv). */
typedef struct net_msg {
    uint64_t id;                /* dense from 0, in the order sent */
    uint32_t conn;              /* its connection's id */
    int32_t src, dst;           /* endpoints */
    uint8_t prio;
    bool aborted;               /* the transport gave up on it */
    int64_t tag;                /* the workload's label (incast: the round) */
    uint64_t bytes;             /* UINT64_MAX: endless (never completes) */
    uint64_t offset;            /* where it starts in the connection's stream */
    int64_t start_ps;           /* when it was due to start */
    int64_t finish_ps;          /* < 0 while running */
    int64_t ideal_ps;           /* empty-network completion time, < 0: none */
    conn_stats at_start;        /* the connection's counters when it began;
                                   a message's retransmissions and timeouts
                                   are those until the next message on its
                                   connection began (or until the report) */
    uint64_t next_on_conn;      /* that next message, or UINT64_MAX */
} net_msg;

/* m is valid until the callback sends a message (the table may grow). */
typedef void (*net_done_fn)(void *ctx, network *n, const net_msg *m);

/* Builds the network of `c` (the section `sec` at key path `path`):
 * topology, transport, failures, captures and sampled ports; errors name
 * the scenario location.  On error *out is still set (destroy it). */
int network_create(network **np, const network_cfg *c, cfg_node *sec, const char *path,
                   const model_env *env, err *e);
/* The same for a section that holds the network keys (netkeys.h) and
 * nothing else: binds them, then network_create(). */
int network_from_section(network **np, cfg_node *sec, const char *path, const model_env *env,
                         err *e);
void network_destroy(network *n);
/* Schedules the faults (fault.h), the failures and the sampler. */
void network_start(network *n);

topo *network_topo(network *n);
pkt_pool *network_pool(network *n);
sim *network_sim(network *n);
const transport_ops *network_transport(const network *n);
size_t network_endpoints(const network *n);
/* The transport's framing: payload and header bytes of a full packet. */
void network_framing(const network *n, uint32_t *payload, uint32_t *header);
/* The endpoint named `name` (a host), or a located error (negative). */
int network_endpoint(network *n, const char *name, const cfg_node *at, const char *path,
                     err *e);
/* Sum of the line rates of the hosts' links (offered-load arithmetic). */
double network_host_capacity_bps(network *n);

/* Sends a message on a new connection (see above); returns its id. */
uint64_t network_send(network *n, int src, int dst, uint64_t bytes, int prio, int64_t tag,
                      int64_t start_ps, net_done_fn fn, void *ctx);
/* Opens a persistent connection (nothing is sent until network_send_on). */
conn *network_connect(network *n, int src, int dst, int prio);
/* Appends a message of `bytes` (finite) to c; it starts at start_ps (the
 * first message on c) or at once (later ones, behind those in flight). */
uint64_t network_send_on(network *n, conn *c, uint64_t bytes, int64_t tag, int64_t start_ps,
                         net_done_fn fn, void *ctx);
/* At flow level (net.plane: flow): the rate a flow of c gets alone on
 * the empty network (payload bit/s: its path's slowest link as the plane
 * offers it, capped by rate_cap) into *rate_bps and the time a byte takes
 * from sent to received (propagation and the first packet's serialisation
 * but at the slowest hop) into *delay_ps; returns true.  At packet level
 * false (nothing written).  The fluid collectives' step latency. */
bool network_flow_path(network *n, const conn *c, double *rate_bps, int64_t *delay_ps);
/* Says that no more messages will be sent on c: it is freed once idle, as
 * the connections of network_send() are. */
void network_close(network *n, conn *c);
/* Called after every message's own callback (e.g. to end the run). */
void network_on_complete(network *n, net_done_fn fn, void *ctx);
/* What the network holds: connections and message records opened and
 * still in memory (the others freed, their rows in the spill file). */
typedef struct network_int_counts {
    size_t conns_opened, conns_live, msgs_live;
} network_int_counts;
void network_counts(const network *n, network_int_counts *c);
/* Finite messages sent and not yet complete. */
size_t network_active(const network *n);
size_t network_messages(const network *n);
/* The record of message id while it is in memory (in flight, or its
 * counters not yet final), else NULL: a workload learns a message's result
 * from its callback; flows.csv has every one. */
const net_msg *network_message(const network *n, uint64_t id);

/* Writes flows.csv, links.csv, switches.csv, queues.csv, fct_cdf.csv, the
 * captures and the faults' ground truth (faults.csv, fault_events.csv),
 * and the network's headline metrics into summary. */
int network_report(network *n, out *o, json_t *summary, err *e);

/* An optional list `l` at key `key` under `path`: its length (0 if l is
 * NULL), its key path in sub; anything but a list is a located error
 * (negative). */
long net_list(const cfg_node *l, const char *path, const char *key, const char *what,
              char *sub, size_t nsub, err *e);

/* Writes v (shortest round-trip form; empty if not finite) and sep. */
void net_csv_num(FILE *f, double v, const char *sep);

/* The figures of those tables, for a model's plot list. */
extern const plot_spec network_plots[];

#endif
