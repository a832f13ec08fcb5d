/*
 * workload.h - traffic generators that talk to a network through its
 * message API (network.h) only: explicit flows, rounds of incast, Poisson
 * background traffic from a flow-size distribution, and the collectives'
 * sweeps and concurrent jobs.
 *
 * A workload is an ops table.  A model that owns a scenario section binds
 * each workload's key in it as a subtree (CFG_NODE) and hands that subtree
 * to configure(); start() sends the first messages; finished() says that it
 * will send no more (a model ends its run when every workload has finished
 * and the network has no finite message in flight); report() writes the
 * workload's own tables, if any.
 */
#ifndef AISIM_WORKLOAD_H
#define AISIM_WORKLOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "aisim/model.h"
#include "aisim/network.h"
#include "aisim/out.h"

typedef struct workload_ops {
    const char *key;            /* its key in the model's section */
    size_t size;                /* bytes of state, allocated zeroed */
    /* Binds node (at key path `path`) and checks its endpoints on n. */
    int (*configure)(void *w, network *n, cfg_node *node, const char *path,
                     const model_env *env, err *e);
    void (*start)(void *w);
    bool (*finished)(const void *w);
    /* Fraction done in [0, 1], or < 0 if it cannot tell. */
    double (*progress)(const void *w);
    /* Its tables and summary entries; may be NULL. */
    int (*report)(void *w, out *o, json_t *summary, err *e);
    void (*fini)(void *w);
} workload_ops;

extern const workload_ops wl_flows;         /* src/workload/flows.c */
extern const workload_ops wl_incast;        /* src/workload/incast.c */
extern const workload_ops wl_background;    /* src/workload/background.c */
extern const workload_ops wl_coll_sweep;    /* src/workload/coll_sweep.c: nccl-tests */
extern const workload_ops wl_coll_jobs;     /* src/workload/coll_jobs.c: concurrent jobs */

#endif
