/*
 * netfix.h - a network on a fresh engine from the YAML of a `net` section
 * (topology, transport, optional faults), for the tests of the network
 * object and of the transports.
 */
#ifndef AISIM_NETFIX_H
#define AISIM_NETFIX_H

#include <string.h>

#include "aisim/network.h"
#include "aisim/netreg.h"

typedef struct fixture {
    cfg_doc *doc;
    sim *s;
    network *n;
} fixture;

static int fx_routing __attribute__((unused)) = NET_ROUTE_ECMP;    /* for the next fx_make */

static inline int fx_make(fixture *f, const char *yaml, err *e)
{
    memset(f, 0, sizeof *f);
    int r = cfg_load_string("net.yaml", yaml, strlen(yaml), &f->doc, e);
    if (r)
        return r;
    f->s = sim_create();
    network_cfg c = {.pcap_max = 1000};
    cfg_node *root = cfg_root(f->doc);
    c.topology = cfg_get(root, "topology");
    c.transport = cfg_get(root, "transport");
    c.faults = cfg_get(root, "faults");
    c.routing = fx_routing;
    model_env env = {.sim = f->s, .seed = 1, .base_dir = ".", .stop_ps = SIM_TIME_MAX,
                     .net = net_registry_builtin()};
    return network_create(&f->n, &c, root, "net", &env, e);
}

static inline void fx_open(fixture *f, const char *yaml)
{
    err e = {0};
    if (fx_make(f, yaml, &e))
        fail_msg("%s", e.msg);
    network_start(f->n);
}

static inline void fx_free(fixture *f)
{
    network_destroy(f->n);
    sim_destroy(f->s);
    cfg_free(f->doc);
}

#endif
