/*
 * registry.c - every model a scenario can name, in `aisim list` order, and
 * the tables a network is built from (netreg.h).  A new model, transport,
 * queue discipline, forwarder, hook kind or network extension adds its ops
 * table here and nowhere else; no net/ or transport/ file lists them.
 */
#include <string.h>

#include "aisim/fault.h"
#include "aisim/fwd.h"
#include "aisim/model.h"
#include "aisim/netext.h"
#include "aisim/netreg.h"
#include "aisim/qdisc.h"
#include "aisim/transport.h"
#include "systems/stellar/stellar_mp_transport.h"
#include "systems/stellar/stellar_rdma.h"

extern const model_ops queue_model_ops;
extern const model_ops net_model_ops;
extern const model_ops birp_model_ops;
extern const model_ops fedenergy_model_ops;
extern const model_ops stellar_model_ops;
extern const model_ops collective_model_ops;
extern const model_ops training_model_ops;
extern const model_ops skeleton_model_ops;

static const model_ops *const models[] = {
    &queue_model_ops,
    &net_model_ops,
    &birp_model_ops,
    &fedenergy_model_ops,
    &stellar_model_ops,
    &collective_model_ops,
    &training_model_ops,
    &skeleton_model_ops,
    NULL,
};

const model_ops *const *model_all(void) { return models; }

const model_ops *model_find(const char *name)
{
    for (size_t i = 0; models[i]; i++)
        if (strcmp(models[i]->name, name) == 0)
            return models[i];
    return NULL;
}

/* The first transport is the default of `transport.name`. */
static const transport_ops *const transports[] = {&tcp_transport, &dgram_transport,
                                                  &rocev2_transport, &stellar_dgram_transport,
                                                  &stellar_rocev2_transport, NULL};

extern const netext_ops sdtcp_ext_ops;

static const netext_ops *const extensions[] = {&sdtcp_ext_ops, NULL};

/* Queue disciplines a link's `qdisc` may name (qdisc.h). */
static const qdisc_ops *const qdiscs[] = {&qdisc_droptail, &qdisc_ecn, &qdisc_ecn_ramp, &qdisc_red,
                                          &qdisc_prio,     &qdisc_dwrr, NULL};

/* `net.routing`; the first three in enum network_routing's order. */
static const fwd_ops *const forwarders[] = {&fwd_ecmp, &fwd_spray_rr, &fwd_spray_random,
                                            &fwd_dmodk, &fwd_adaptive, NULL};

/* `net.hooks` (and `net.faults`) kinds; the fault family first. */
static const hook_kind *const hook_kinds[] = {&fault_loss, &fault_delay, &fault_blackhole,
                                              &fault_flap, &fault_corrupt, &hook_deflect, NULL};

static const net_registry builtin = {
    .transports = transports,
    .qdiscs = qdiscs,
    .forwarders = forwarders,
    .hooks = hook_kinds,
    .extensions = extensions,
};

const net_registry *net_registry_builtin(void) { return &builtin; }
