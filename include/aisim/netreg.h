/*
 * netreg.h - the tables a network is built from: transports, queue
 * disciplines, forwarders, hook kinds and network extensions.
 *
 * The network layer never lists an implementation itself: src/cli/registry.c
 * is the one place that does (net_registry_builtin()), and a model hands the
 * registry to network_create() through its model_env.  A new transport,
 * discipline, forwarder, hook kind or extension is one new file plus one line
 * there; an embedding program may pass a registry of its own.
 *
 * Every list is NULL-terminated; an absent family is NULL (none).
 */
#ifndef AISIM_NETREG_H
#define AISIM_NETREG_H

struct transport_ops;
struct qdisc_ops;
struct fwd_ops;
struct hook_kind;
struct netext_ops;

typedef struct net_registry {
    const struct transport_ops *const *transports; /* the first is the default */
    const struct qdisc_ops *const *qdiscs;         /* queue disciplines (port egress) */
    const struct fwd_ops *const *forwarders;       /* switch next-hop choice */
    const struct hook_kind *const *hooks;          /* `net.hooks` kinds (faults among them) */
    const struct netext_ops *const *extensions;    /* systems riding on the network */
} net_registry;

/* The tables built into aisim (src/cli/registry.c). */
const net_registry *net_registry_builtin(void);

#endif
