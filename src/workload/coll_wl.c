/*
 * coll_wl.c - scenario helpers of the collective workloads (coll_wl.h):
 * a communicator from a list of endpoint names, and coll_check()'s error
 * located at the key it names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/coll_wl.h"

int coll_wl_comm(network *n, cfg_node *ranks, const char *path, coll_comm **comm, err *e)
{
    int ne = (int)network_endpoints(n), nr = ne;
    int *eps;
    if (!ranks) {
        eps = xcalloc((size_t)ne + 1, sizeof *eps);
        for (int i = 0; i < ne; i++)
            eps[i] = i;
    } else {
        long len = cfg_expect_list(ranks, path, "endpoint names", e);
        if (len < 1)
            return len < 0 ? (int)len : cfg_err(e, AISIM_EINVAL, ranks, path, "expected at "
                                               "least one endpoint, found an empty list");
        eps = xcalloc((size_t)len, sizeof *eps);
        nr = (int)len;
        char *seen = xcalloc((size_t)ne, 1);
        for (long i = 0; i < len; i++) {
            char sub[512];
            cfg_node *it = cfg_at(ranks, (size_t)i);
            cfg_path_index(sub, sizeof sub, path, (size_t)i);
            int r = network_endpoint(n, cfg_scalar(it) ? cfg_scalar(it) : "", it, sub, e);
            if (r >= 0 && seen[r]++)
                r = cfg_err(e, AISIM_EINVAL, it, sub, "expected each endpoint once, found "
                            "\"%s\" again", cfg_scalar(it));
            if (r < 0) {
                free(seen);
                free(eps);
                return r;
            }
            eps[i] = r;
        }
        free(seen);
    }
    *comm = coll_comm_create(n, eps, nr);
    free(eps);
    return 0;
}

int coll_wl_check(const coll_comm *c, const coll_args *a, cfg_node *node, const char *path,
                  const char *bytes_key, err *e)
{
    int r = coll_check(c, a, e);
    if (!r)
        return 0;
    /* coll_check's message starts with the key it is about. */
    const char *key = strncmp(e->msg, "fluid", 5) == 0   ? "fluid"
                    : strncmp(e->msg, "protocol", 8) == 0 ? "protocol"
                    : strncmp(e->msg, "channels", 8) == 0 ? "min_channels"
                    : strncmp(e->msg, "pxn", 3) == 0      ? "pxn"
                    : strncmp(e->msg, "root", 4) == 0    ? "root"
                    : strncmp(e->msg, "peer", 4) == 0    ? "peer"
                    : strncmp(e->msg, "bytes", 5) == 0   ? bytes_key
                                                         : "algorithm";
    char msg[sizeof e->msg], sub[512];
    const char *colon = strchr(e->msg, ':');
    snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : e->msg);
    cfg_node *at = cfg_get(node, key) ? cfg_get(node, key) : node;
    return cfg_err(e, r, at, cfg_path(sub, sizeof sub, path, key), "%s", msg);
}

const char *const coll_order_names[] = {"topology", "rank", NULL};

void coll_wl_nccl_args(const coll_nccl_cfg *c, coll_args *a)
{
    a->proto = (enum coll_proto)c->proto;
    a->arch = (enum coll_arch)c->arch;
    a->min_channels = (int)c->min_channels;
    a->max_channels = (int)c->max_channels;
    a->send_lat_ps = c->send_lat;
    a->rank_order = c->order == 1;
    a->pxn = c->pxn;
}
