/*
 * netext.h - network extensions: a system that rides on an ordinary network
 * (its topology, transport, failures, faults, sampling and workloads all
 * from the ordinary keys) and acts inside it or measures it: SDTCP's SDN
 * controller rewriting ACK windows at switches (sdn.h), SkeletonHunter's
 * packet-mode probes.
 *
 * A scenario loads extensions by name in the network's section:
 *
 *     net:
 *       topology: {...}
 *       incast: {...}
 *       extensions:
 *         sdtcp: {receiver: h0, scheme: sdtcp, policy: {mode: banded}}
 *
 * `extensions` is a map from extension name to that extension's section
 * (keys in file order are the load order; `--set
 * net.extensions.sdtcp.scheme=none` reaches a key).  Every model whose
 * section holds the network keys (netkeys.h: net, collective,
 * training) takes it, because network_create() loads them: the extension
 * never sees the model.
 *
 * Life cycle, driven by the network object (network.h):
 *   network_create()  allocates state_size zeroed bytes, binds `keys` into
 *                     them (offsets into the state; a key the table does
 *                     not list is a located error), then configure(): check
 *                     names against the network, build what it needs (no
 *                     events, no output);
 *   network_start()   start(), after the network's faults, failures and
 *                     sampler and before any workload sends;
 *   network_send*()   on_send() for every message as it is sent (the
 *                     connection it is on and its record: tag, bytes,
 *                     endpoints), after the network has registered it;
 *   completion        on_done() for every message completed or aborted,
 *                     before the sender's callback;
 *   network_report()  report(): its tables through `o` and its headline
 *                     metrics into `summary` (its own object there, by
 *                     convention named after it);
 *   network_destroy() fini(), whenever the state was allocated (even if
 *                     binding or configure() failed: it sees zeroed or
 *                     partly built state).
 * on_send and on_done may be NULL.  An extension acts on packets through the
 * network's public machinery only (hook.h on ports, sdn.h, topo.h), never
 * through the network's or a transport's internals.
 *
 * The registry (src/cli/registry.c, net_registry.extensions) lists them: a
 * new extension is one new file plus one line there.
 */
#ifndef AISIM_NETEXT_H
#define AISIM_NETEXT_H

#include <jansson.h>
#include <stddef.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/model.h"
#include "aisim/network.h"
#include "aisim/out.h"

typedef struct netext_ops {
    const char *name;           /* its key under `extensions` */
    const char *summary;        /* one line for `aisim list` */
    const cfg_key *keys;        /* its section's keys, bound into the state */
    size_t state_size;          /* bytes of state, allocated zeroed */
    /* After the keys are bound: checks names against n, builds what it
     * needs.  sec is its section at key path `path`. */
    int (*configure)(void *st, network *n, cfg_node *sec, const char *path,
                     const model_env *env, err *e);
    void (*start)(void *st);
    void (*on_send)(void *st, conn *c, const net_msg *m);
    void (*on_done)(void *st, const net_msg *m);
    int (*report)(void *st, out *o, json_t *summary, err *e);
    void (*fini)(void *st);
    /* What `aisim run` prints after the model's headlines, under the
     * extension's name (model.h's model_headline; keys from the top of
     * results, e.g. "sdtcp.qct_p50_s"), or NULL. */
    const struct model_headline *headlines;
} netext_ops;

#endif
