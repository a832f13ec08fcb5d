/*
 * coll_wl.h - scenario helpers shared by the collective workloads
 * (coll_sweep.c: nccl-tests; coll_jobs.c: concurrent jobs): a
 * communicator read from a list of endpoint names, and coll_check()'s
 * message located at the key it is about.
 */
#ifndef AISIM_WORKLOAD_COLL_WL_H
#define AISIM_WORKLOAD_COLL_WL_H

#include "aisim/cfg.h"
#include "aisim/collective.h"
#include "aisim/network.h"

/* The communicator listed at `ranks` (a list of endpoint names, each once,
 * at key path `path`), or every endpoint of n in host order when ranks is
 * NULL.  Returns 0 and *comm (destroy it), or a located error. */
int coll_wl_comm(network *n, cfg_node *ranks, const char *path, coll_comm **comm, err *e);

/* coll_check() of a on c; its error is reported at the key of `node` (the
 * call's map, at key path `path`) it names: root, peer, the size key
 * `bytes_key` or else `algorithm`. */
int coll_wl_check(const coll_comm *c, const coll_args *a, cfg_node *node, const char *path,
                  const char *bytes_key, err *e);

#endif
