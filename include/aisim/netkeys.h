/*
 * netkeys.h - the scenario keys of a packet-level network (network.h's
 * network_cfg), for every model whose section builds one (net, collective,
 * training): one list, so that the keys, defaults and help read the same
 * in each.  A section that holds nothing but a network is built with
 * network_from_section() (network.h) instead.
 *
 * NET_KEYS(T, F) expands to the cfg_key entries binding into the
 * network_cfg field F of struct T; put it in the model's key table.
 */
#ifndef AISIM_NETKEYS_H
#define AISIM_NETKEYS_H

#include <stddef.h>

#include "aisim/cfg.h"
#include "aisim/network.h"

#define NET_KEYS(T, F)                                                                        \
    {.name = "topology", .type = CFG_NODE, .off = offsetof(T, F.topology),                   \
     .help = "a topology such as {kind: star, hosts: 9, link: {rate: 10Gbps}}"},              \
    {.name = "transport", .type = CFG_NODE, .off = offsetof(T, F.transport), .def = "{}",    \
     .help = "the transport: {name: tcp, cc: dctcp, ...} or {name: dgram, ...}"},             \
    {.name = "hash_seeds", .type = CFG_ENUM, .off = offsetof(T, F.hash_seeds),               \
     .def = "random", .choices = net_seed_modes, .help = "ECMP hash seeds per switch"},       \
    {.name = "routing", .type = CFG_STR, .off = offsetof(T, F.routing_name), .def = "ecmp",   \
     .help = "the forwarder (fwd.h): ecmp (flow hash), spray_rr | spray_random (per-packet "  \
     "spraying), dmodk (D-mod-K, fat trees), adaptive (least-queued port, per packet)"},      \
    {.name = "forwarder", .type = CFG_NODE, .off = offsetof(T, F.forwarder),                 \
     .flags = CFG_OPTIONAL, .help = "the forwarder's keys, e.g. {flowlet_gap: 50us} for "     \
     "adaptive"},                                                                             \
    {.name = "plane", .type = CFG_ENUM, .off = offsetof(T, F.plane), .def = "packet",         \
     .choices = net_planes, .help = "packet (ports, queues, the transport's packets) or flow " \
     "(max-min fair fluid flows: docs/flow-level.md)"},                                       \
    {.name = "flow", .type = CFG_NODE, .off = offsetof(T, F.flow), .flags = CFG_OPTIONAL,     \
     .help = "the flow plane's {efficiency, rate_cap}"},                                      \
    {.name = "failures", .type = CFG_NODE, .off = offsetof(T, F.failures),                    \
     .flags = CFG_OPTIONAL, .help = "link failures: a list of {a, b, at, repair, "            \
     "convergence}"},                                                                         \
    {.name = "faults", .type = CFG_NODE, .off = offsetof(T, F.faults), .flags = CFG_OPTIONAL, \
     .help = "injected faults: a list of {kind: loss | delay | blackhole | flap | corrupt, "  \
     "link | port | node, at, until, ...} (fault.h)"},                                        \
    {.name = "hooks", .type = CFG_NODE, .off = offsetof(T, F.hooks), .flags = CFG_OPTIONAL,   \
     .help = "hooks by name: a list of {kind: NAME, link | port | node, at, until, ...} "      \
     "(hook.h; the fault kinds among them)"},                                                 \
    {.name = "pcap", .type = CFG_NODE, .off = offsetof(T, F.pcap), .flags = CFG_OPTIONAL,     \
     .help = "hosts to capture: a list of names; each gets NAME.pcap"},                       \
    {.name = "pcap_max_packets", .type = CFG_INT, .off = offsetof(T, F.pcap_max),            \
     .def = "1000000", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e9,                      \
     .help = "packets kept per capture; more are counted, not captured"},                     \
    {.name = "sample_interval", .type = CFG_TIME, .off = offsetof(T, F.sample_ps),           \
     .def = "0s", .flags = CFG_MIN, .min = 0, .help = "queues.csv period (0s: off)"},         \
    {.name = "sample_ports", .type = CFG_NODE, .off = offsetof(T, F.sample_ports),           \
     .flags = CFG_OPTIONAL, .help = "a list of port names such as \"sw0->h0\", or patterns "   \
     "such as \"tor*->agg*\" (fnmatch)"},                                                     \
    {.name = "sample_output", .type = CFG_ENUM, .off = offsetof(T, F.sample_out),            \
     .def = "series", .choices = net_sample_outs, .help = "series: queues.csv and "           \
     "queue_stats.csv; stats: queue_stats.csv only (per port, the sampled time average)"},   \
    {.name = "extensions", .type = CFG_NODE, .off = offsetof(T, F.extensions),               \
     .flags = CFG_OPTIONAL, .help = "network extensions: a map from name (sdtcp, ...) to "     \
     "its section (netext.h)"}

static const char *const net_seed_modes[] __attribute__((unused)) = {"random", "equal", NULL};
static const char *const net_planes[] __attribute__((unused)) = {"packet", "flow", NULL};
static const char *const net_sample_outs[] __attribute__((unused)) = {"series", "stats", NULL};

#endif
