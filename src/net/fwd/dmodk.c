/*
 * dmodk.c - D-mod-K static routing for fat trees (Zahavi, "D-Mod-K Routing
 * Providing Non-Blocking Traffic for Shift Permutations on Real Life Fat
 * Trees", 2010; SimGrid's FatTreeZone routes so): going up, a node of level
 * l (hosts 0, edge switches 1, aggregation 2, ...) takes up-port
 *     floor(D / (w_0 w_1 ... w_{l-1})) mod w_l
 * of its w_l up-ports (in link id order), where D is the destination
 * host's index and w_i the up-links of a level-i node.  In a k-ary fat
 * tree (w_0 = 1, w_1 = w_2 = k/2) an edge switch takes aggregation switch
 * D mod k/2 and that one its core (D div k/2) mod k/2: hosts under one
 * edge switch are reached through distinct aggregation switches, and
 * traffic to one host always converges on one core.  Going down there is
 * one next hop.  The choice is static (a flow's route and a packet's next
 * hop alike; the entropy plays no part).
 *
 * Levels are hop distances from the nearest host.  The topology must be
 * such a tree: every node of a level has the same number of up links
 * (fat_tree, leaf_spine, dumbbell, star do; a rail fabric's NVSwitches do
 * not).  After a failure a node with fewer next hops than up-ports takes
 * the formula mod the survivors (a simplification: a subnet manager would
 * recompute its tables).
 */
#include <stdlib.h>

#include "aisim/fwd.h"
#include "aisim/topo.h"

typedef struct dmodk {
    int32_t *level;             /* by node */
    uint64_t *div;              /* by level: w_0 ... w_{l-1} */
} dmodk;

static int dmodk_configure(void *state, const void *cfg, const topo *t, const cfg_node *n,
                           const char *path, err *e)
{
    (void)cfg;
    dmodk *d = state;
    size_t nn = topo_nodes(t);
    d->level = xmalloc(nn * sizeof *d->level);
    int32_t *q = xmalloc(nn * sizeof *q);
    size_t qh = 0, qt = 0;
    for (size_t u = 0; u < nn; u++) {
        d->level[u] = topo_node_kind(t, (int)u) == NODE_HOST ? 0 : -1;
        if (d->level[u] == 0)
            q[qt++] = (int32_t)u;
    }
    int32_t top = 0;
    while (qh < qt) {           /* BFS from every host: levels */
        int32_t u = q[qh++];
        for (size_t i = 0; i < topo_node_degree(t, u); i++) {
            int32_t v = topo_node_adj(t, u, i, NULL);
            if (d->level[v] < 0) {
                d->level[v] = d->level[u] + 1;
                top = d->level[v];
                q[qt++] = v;
            }
        }
    }
    free(q);
    /* Up links per level, the same for every node of it. */
    uint32_t *w = xcalloc((size_t)top + 1, sizeof *w);
    int32_t *first = xmalloc(((size_t)top + 1) * sizeof *first);
    for (int32_t l = 0; l <= top; l++)
        first[l] = -1;
    int r = 0;
    for (size_t u = 0; u < nn && !r; u++) {
        int32_t l = d->level[u];
        uint32_t up = 0;
        for (size_t i = 0; l >= 0 && i < topo_node_degree(t, (int)u); i++)
            up += d->level[topo_node_adj(t, (int)u, i, NULL)] == l + 1;
        if (l < 0)
            continue;
        if (first[l] < 0) {
            first[l] = (int32_t)u;
            w[l] = up;
        } else if (w[l] != up) {
            r = cfg_err(e, AISIM_EINVAL, n, path,
                        "expected a tree whose nodes of each level have as many up links "
                        "(dmodk), found %s with %u and %s with %u at level %d",
                        topo_node_name(t, first[l]), w[l], topo_node_name(t, (int)u), up,
                        (int)l);
        }
    }
    d->div = xmalloc(((size_t)top + 1) * sizeof *d->div);
    d->div[0] = 1;
    for (int32_t l = 1; l <= top; l++) {
        uint64_t m = d->div[l - 1] * (w[l - 1] ? w[l - 1] : 1);
        d->div[l] = m < d->div[l - 1] || m > UINT32_MAX ? UINT32_MAX : m;
    }
    free(w);
    free(first);
    return r;
}

static uint32_t dmodk_choose(void *state, const fwd_hop *h)
{
    const dmodk *d = state;
    return (uint32_t)(((uint64_t)h->dst_host / d->div[d->level[h->node]]) % h->n);
}

static void dmodk_fini(void *state)
{
    dmodk *d = state;
    free(d->level);
    free(d->div);
}

const fwd_ops fwd_dmodk = {
    .name = "dmodk",
    .summary = "D-mod-K static routing for fat trees: floor(D / prod w_i) mod w_l up-port",
    .send = FWD_SEND_ROUTE,
    .state_size = sizeof(dmodk),
    .configure = dmodk_configure,
    .choose = dmodk_choose,
    .fini = dmodk_fini,
};
