/*
 * flownet.h - the flow-level plane of the network object (network.h,
 * docs/flow-level.md): with `net.plane: flow` the network's connections
 * carry fluid flows whose rates are max-min fair (maxmin.h) instead of
 * packets.  Private to src/net: network.c attaches it, network_report.c
 * asks it to settle the links' counters before the tables.
 */
#ifndef AISIM_FLOWNET_H
#define AISIM_FLOWNET_H

#include <jansson.h>

#include "aisim/network.h"
#include "aisim/topo.h"

/* Replaces n's transport by the flow plane (which keeps the scenario's
 * transport for its framing: the payload share of a packet is the share of
 * a link's rate flows get).  `fsec` is the `flow` section (efficiency,
 * rate_cap; NULL: defaults) at `path`.flow; packet-only features of the
 * section (pcap, sample_ports, faults) are located errors. */
int flownet_attach(network *n, cfg_node *sec, cfg_node *fsec, const char *path, err *e);
/* Brings every flow's and link's counters to now (links.csv) and adds the
 * plane's own figures to summary (solves, flows recomputed, memory). */
void flownet_report(network *n, json_t *summary);
/* The plane's byte counts, as the packet plane's topo_byte_counts() gives
 * them for packets: bytes the flows sent (payload plus the transport's
 * headers, at its framing), bytes their receivers hold, none dropped, the
 * rest in the network. */
void flownet_bytes(const network *n, topo_bytes *b);
/* Whether the per-message tables are wanted (`flow.flows_csv`). */
bool flownet_flows_csv(const network *n);

#endif
