/*
 * topo_build.c - the standard topologies (dumbbell, star, leaf-spine,
 * k-ary fat tree), AI-cluster fabrics (rail-optimised, dual-plane) and the
 * scenario's `topology:` map, servers of custom topologies included, built
 * through the public topo.h calls only.
 *
 * Numbering is part of the contract (topo.h): hosts first, named h0, h1,
 * ..., then switches; links to hosts first, in host order, then the fabric.
 * Fat tree after Al-Fares, Loukissas and Vahdat, "A Scalable, Commodity
 * Data Center Network Architecture", SIGCOMM 2008: k pods of k/2 edge and
 * k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts, every
 * switch with k ports.  The dual-plane fabric after Qian et al., "Alibaba
 * HPN: A Data Center Network for Large Language Model Training", SIGCOMM
 * 2024: rail-aligned GPUs, NICs with a port to each of two planes that
 * share nothing, ToRs per rail, plane and segment, aggregation per plane;
 * GPU endpoints are named s{server}.g{gpu} (docs/network.md).
 *
 * Scenario keys are read through cfg_key schemas, so units, ranges and
 * unknown keys are reported by cfg_bind with file:line:column and key path;
 * the checks schemas cannot express (unknown or duplicate node names, an
 * odd k, a disconnected custom graph) produce messages in the same form.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/log.h"
#include "aisim/qdisc.h"
#include "aisim/topo.h"

/* ---- builders ----------------------------------------------------------- */

static int check_link(const link_cfg *c, const char *what, err *e)
{
    if (c->rate_bps <= 0)
        return ERR(e, AISIM_ERANGE, "%s: rate must be > 0, found %lld bps", what,
                   (long long)c->rate_bps);
    if (c->delay_ps < 0)
        return ERR(e, AISIM_ERANGE, "%s: delay must be >= 0", what);
    if (c->port.buffer_bytes <= 0)
        return ERR(e, AISIM_ERANGE, "%s: buffer must be > 0", what);
    return 0;
}

/* Node ids and hop distances are 16-bit: at most TOPO_MAX_NODES nodes. */
static int check_size(int64_t nodes, const char *what, err *e)
{
    if (nodes > TOPO_MAX_NODES)
        return ERR(e, AISIM_ERANGE, "%s: %lld nodes; at most %d are supported", what,
                   (long long)nodes, TOPO_MAX_NODES);
    return 0;
}

static int add_hosts(topo *t, int n)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "h%d", i);
        int id = topo_add_node(t, name, NODE_HOST);
        assert(id == i);
        (void)id;
    }
    return 0;
}

static int add_switch(topo *t, const char *fmt, int i, int j)
{
    char name[48];
    snprintf(name, sizeof name, fmt, i, j);
    int id = topo_add_node(t, name, NODE_SWITCH);
    assert(id >= 0);
    return id;
}

static void link_or_die(topo *t, int a, int b, const link_cfg *c)
{
    int id = topo_add_link(t, a, b, c);
    assert(id >= 0);
    (void)id;
}

int topo_build_dumbbell(topo *t, int left, int right, const link_cfg *edge,
                        const link_cfg *bottleneck, err *e)
{
    assert(topo_nodes(t) == 0);
    if (left < 1 || right < 1)
        return ERR(e, AISIM_EINVAL, "dumbbell: expected at least one host on each side, found "
                   "%d and %d", left, right);
    int rc = check_size((int64_t)left + right + 2, "dumbbell", e);
    if (!rc)
        rc = check_link(edge, "dumbbell link", e);
    if (!rc)
        rc = check_link(bottleneck, "dumbbell bottleneck", e);
    if (rc)
        return rc;
    add_hosts(t, left + right);
    int sl = add_switch(t, "left", 0, 0), sr = add_switch(t, "right", 0, 0);
    for (int i = 0; i < left + right; i++)
        link_or_die(t, i, i < left ? sl : sr, edge);
    link_or_die(t, sl, sr, bottleneck);
    return topo_finish(t, e);
}

int topo_build_star(topo *t, int hosts, const link_cfg *edge, err *e)
{
    assert(topo_nodes(t) == 0);
    if (hosts < 2)
        return ERR(e, AISIM_EINVAL, "star: expected at least 2 hosts, found %d", hosts);
    int rc = check_size((int64_t)hosts + 1, "star", e);
    if (!rc)
        rc = check_link(edge, "star link", e);
    if (rc)
        return rc;
    add_hosts(t, hosts);
    int sw = add_switch(t, "sw0", 0, 0);
    for (int i = 0; i < hosts; i++)
        link_or_die(t, i, sw, edge);
    return topo_finish(t, e);
}

int topo_build_leaf_spine(topo *t, int leaves, int spines, int hosts_per_leaf,
                          const link_cfg *host_link, const link_cfg *fabric_link, err *e)
{
    assert(topo_nodes(t) == 0);
    if (leaves < 1 || spines < 1 || hosts_per_leaf < 1)
        return ERR(e, AISIM_EINVAL, "leaf_spine: expected at least one leaf, spine and host "
                   "per leaf, found %d, %d and %d", leaves, spines, hosts_per_leaf);
    int rc = check_size((int64_t)leaves * hosts_per_leaf + leaves + spines, "leaf_spine", e);
    if (!rc)
        rc = check_link(host_link, "leaf_spine host link", e);
    if (!rc)
        rc = check_link(fabric_link, "leaf_spine fabric link", e);
    if (rc)
        return rc;
    int hosts = leaves * hosts_per_leaf;
    add_hosts(t, hosts);
    int leaf0 = hosts, spine0 = hosts + leaves;
    for (int l = 0; l < leaves; l++)
        add_switch(t, "leaf%d", l, 0);
    for (int s = 0; s < spines; s++)
        add_switch(t, "spine%d", s, 0);
    for (int i = 0; i < hosts; i++)
        link_or_die(t, i, leaf0 + i / hosts_per_leaf, host_link);
    for (int l = 0; l < leaves; l++)
        for (int s = 0; s < spines; s++)
            link_or_die(t, leaf0 + l, spine0 + s, fabric_link);
    return topo_finish(t, e);
}

int topo_build_fat_tree(topo *t, int k, const link_cfg *link, err *e)
{
    assert(topo_nodes(t) == 0);
    if (k < 2 || k % 2)
        return ERR(e, AISIM_EINVAL, "fat_tree: expected an even k >= 2, found %d", k);
    int rc = check_size((int64_t)k * k * k / 4 + (int64_t)5 * k * k / 4, "fat_tree", e);
    if (!rc)
        rc = check_link(link, "fat_tree link", e);
    if (rc)
        return rc;
    int h = k / 2, hosts = k * k * k / 4, per_pod = k * k / 4;
    add_hosts(t, hosts);
    int edge0 = hosts, agg0 = edge0 + k * h, core0 = agg0 + k * h;
    for (int p = 0; p < k; p++)
        for (int i = 0; i < h; i++)
            add_switch(t, "edge%d_%d", p, i);
    for (int p = 0; p < k; p++)
        for (int i = 0; i < h; i++)
            add_switch(t, "agg%d_%d", p, i);
    for (int c = 0; c < h * h; c++)
        add_switch(t, "core%d", c, 0);
    for (int i = 0; i < hosts; i++)
        link_or_die(t, i, edge0 + (i / per_pod) * h + (i % per_pod) / h, link);
    for (int p = 0; p < k; p++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < h; j++)
                link_or_die(t, edge0 + p * h + i, agg0 + p * h + j, link);
    for (int p = 0; p < k; p++)
        for (int j = 0; j < h; j++)
            for (int m = 0; m < h; m++)
                link_or_die(t, agg0 + p * h + j, core0 + j * h + m, link);
    return topo_finish(t, e);
}

static int add_named_node(topo *t, enum node_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int add_named_node(topo *t, enum node_kind kind, const char *fmt, ...)
{
    char name[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    int id = topo_add_node(t, name, kind);
    assert(id >= 0);
    return id;
}

int topo_build_rail(topo *t, const topo_rail_cfg *c, err *e)
{
    assert(topo_nodes(t) == 0);
    const char *kind = c->planes == 1 ? "rail_optimised" : "dual_plane";
    if (c->servers < 1 || c->gpus < 1 || c->servers_per_tor < 1 || c->aggs < 1 ||
        c->planes < 1)
        return ERR(e, AISIM_EINVAL, "%s: expected at least one server, GPU per server, server "
                   "per ToR, aggregation switch and plane, found %d, %d, %d, %d and %d", kind,
                   c->servers, c->gpus, c->servers_per_tor, c->aggs, c->planes);
    int64_t hosts = (int64_t)c->servers * c->gpus;
    int64_t segs = ((int64_t)c->servers + c->servers_per_tor - 1) / c->servers_per_tor;
    int64_t tors = segs * c->gpus;          /* per plane */
    int64_t nvs = c->gpus > 1 ? c->servers : 0;
    int rc = check_size(hosts + nvs + (tors + c->aggs) * c->planes, kind, e);
    if (!rc)
        rc = check_link(&c->nic, "nic_link", e);
    if (!rc)
        rc = check_link(&c->fabric, "fabric_link", e);
    if (!rc && nvs)
        rc = check_link(&c->nvlink, "nvlink", e);
    if (rc)
        return rc;
    for (int i = 0; i < c->servers; i++)
        for (int j = 0; j < c->gpus; j++)
            add_named_node(t, NODE_HOST, "s%d.g%d", i, j);
    int nvs0 = (int)hosts;
    for (int i = 0; i < nvs; i++)
        add_named_node(t, NODE_SWITCH, "s%d.nvs", i);
    int tor0 = nvs0 + (int)nvs, agg0 = tor0 + (int)(tors * c->planes);
    char pl[16] = "";
    for (int p = 0; p < c->planes; p++) {
        if (c->planes > 1)
            snprintf(pl, sizeof pl, "p%d.", p);
        for (int s = 0; s < segs; s++)
            for (int r = 0; r < c->gpus; r++)
                add_named_node(t, NODE_SWITCH, "%stor%d.r%d", pl, s, r);
    }
    for (int p = 0; p < c->planes; p++) {
        if (c->planes > 1)
            snprintf(pl, sizeof pl, "p%d.", p);
        for (int a = 0; a < c->aggs; a++)
            add_named_node(t, NODE_SWITCH, "%sagg%d", pl, a);
    }
    for (int h = 0; h < hosts; h++) {
        int seg = h / c->gpus / c->servers_per_tor, rail = h % c->gpus;
        for (int p = 0; p < c->planes; p++)
            link_or_die(t, h, tor0 + (int)(p * tors) + seg * c->gpus + rail, &c->nic);
    }
    link_cfg nvl = c->nvlink;
    nvl.intra_host = true;
    for (int h = 0; nvs && h < hosts; h++)
        link_or_die(t, h, nvs0 + h / c->gpus, &nvl);
    for (int p = 0; p < c->planes; p++)
        for (int k = 0; k < tors; k++)
            for (int a = 0; a < c->aggs; a++)
                link_or_die(t, tor0 + (int)(p * tors) + k, agg0 + p * c->aggs + a, &c->fabric);
    return topo_finish(t, e);
}

/* ---- scenario ----------------------------------------------------------- */

/* A link's settings as the scenario gives them. */
typedef struct link_raw {
    int64_t rate_bps, delay_ps, buffer_bytes, ecn_k_bytes;
    int64_t red_min_bytes, red_max_bytes;
    double red_max_p, red_weight;
    int64_t priorities;
    int64_t pfc_xoff_bytes, pfc_xon_bytes;
    cfg_node *qdisc;            /* the `qdisc` key, or NULL: what the keys imply */
    port_cfg qd;                /* its resolution (check_red): qd.qdisc, the conf and
                                   the inline AQM settings it writes */
} link_raw;

/* The link keys, for a struct T with a link_raw field F.  DEF selects
 * defaults (a full link map) or none, everything optional (overrides). */
#define LINK_KEYS(T, F, DEF)                                                                 \
    {.name = "rate", .type = CFG_RATE, .off = offsetof(T, F.rate_bps),                       \
     .flags = CFG_MIN_EXCL | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0,                           \
     .help = "line rate of both directions"},                                                \
    {.name = "delay", .type = CFG_TIME, .off = offsetof(T, F.delay_ps),                      \
     .def = (DEF) ? "1us" : NULL, .flags = CFG_MIN | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0,   \
     .help = "propagation delay, each direction"},                                           \
    {.name = "buffer", .type = CFG_SIZE, .off = offsetof(T, F.buffer_bytes),                 \
     .def = (DEF) ? "1MiB" : NULL, .flags = CFG_MIN_EXCL | ((DEF) ? 0 : CFG_OPTIONAL),       \
     .min = 0, .help = "drop-tail buffer of each egress port"},                              \
    {.name = "ecn_k", .type = CFG_SIZE, .off = offsetof(T, F.ecn_k_bytes),                   \
     .def = (DEF) ? "0B" : NULL, .flags = CFG_MIN | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0,    \
     .help = "DCTCP marking threshold K (0: off)"},                                          \
    {.name = "red_min", .type = CFG_SIZE, .off = offsetof(T, F.red_min_bytes),               \
     .def = (DEF) ? "0B" : NULL, .flags = CFG_MIN | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0,    \
     .help = "RED: no marking below this average queue (0: RED off)"},                       \
    {.name = "red_max", .type = CFG_SIZE, .off = offsetof(T, F.red_max_bytes),               \
     .def = (DEF) ? "0B" : NULL, .flags = CFG_MIN | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0,    \
     .help = "RED: mark everything above this average queue"},                               \
    {.name = "red_max_p", .type = CFG_FLOAT, .off = offsetof(T, F.red_max_p),                \
     .def = (DEF) ? "0.1" : NULL, .flags = CFG_MIN | CFG_MAX | ((DEF) ? 0 : CFG_OPTIONAL),   \
     .min = 0, .max = 1, .help = "RED: marking probability at red_max"},                     \
    {.name = "red_weight", .type = CFG_FLOAT, .off = offsetof(T, F.red_weight),              \
     .def = (DEF) ? "0.002" : NULL,                                                          \
     .flags = CFG_MIN_EXCL | CFG_MAX | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0, .max = 1,       \
     .help = "RED: EWMA weight of the average queue"},                                       \
    {.name = "priorities", .type = CFG_INT, .off = offsetof(T, F.priorities),                \
     .def = (DEF) ? "1" : NULL, .flags = CFG_MIN | CFG_MAX | ((DEF) ? 0 : CFG_OPTIONAL),     \
     .min = 1, .max = PORT_MAX_PRIO, .help = "strict-priority classes per port"},             \
    {.name = "pfc_xoff", .type = CFG_SIZE, .off = offsetof(T, F.pfc_xoff_bytes),             \
     .def = (DEF) ? "0B" : NULL, .flags = CFG_MIN | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0,    \
     .help = "PFC: pause the sender above this many bytes held from it per class (0: off)"}, \
    {.name = "pfc_xon", .type = CFG_SIZE, .off = offsetof(T, F.pfc_xon_bytes),               \
     .def = (DEF) ? "0B" : NULL, .flags = CFG_MIN | ((DEF) ? 0 : CFG_OPTIONAL), .min = 0,    \
     .help = "PFC: resume it at or below this"},                                             \
    {.name = "qdisc", .type = CFG_NODE, .off = offsetof(T, F.qdisc), .flags = CFG_OPTIONAL,  \
     .help = "queue discipline: NAME or {kind: NAME, ...} (default: what ecn_k, red_min "   \
             "imply)"}

typedef struct link_item {
    link_raw l;
} link_item;

static const cfg_key link_keys[] = {LINK_KEYS(link_item, l, 1), {0}};
static const cfg_key link_over_keys[] = {LINK_KEYS(link_item, l, 0), {0}};

/* An entry of a custom topology's `links` list. */
typedef struct custom_link {
    const char *a, *b;
    int64_t nic;
    link_raw l;
} custom_link;

#define CUSTOM_ENDS                                                                          \
    {.name = "a", .type = CFG_STR, .off = offsetof(custom_link, a), .help = "one end"},      \
    {.name = "b", .type = CFG_STR, .off = offsetof(custom_link, b), .help = "other end"},    \
    {.name = "nic", .type = CFG_INT, .off = offsetof(custom_link, nic),                      \
     .flags = CFG_OPTIONAL | CFG_MIN, .min = 0,                                              \
     .help = "a is a server: the link is a port of its NIC (and GPU) nic"}

static const cfg_key custom_link_full_keys[] = {CUSTOM_ENDS, LINK_KEYS(custom_link, l, 1), {0}};
static const cfg_key custom_link_over_keys[] = {CUSTOM_ENDS, LINK_KEYS(custom_link, l, 0), {0}};

enum { K_DUMBBELL, K_STAR, K_LEAF_SPINE, K_FAT_TREE, K_RAIL, K_DUAL, K_CUSTOM };
static const char *const kinds[] = {"dumbbell", "star", "leaf_spine", "fat_tree",
                                    "rail_optimised", "dual_plane", "custom", NULL};
#define KIND_LIST "dumbbell, star, leaf_spine, fat_tree, rail_optimised, dual_plane, custom"

typedef struct topo_raw {
    int kind;
    int64_t left, right, hosts, leaves, spines, hosts_per_leaf, k;
    int64_t servers, gpus, rails, servers_per_tor, aggs;
    double oversub;
    cfg_node *link, *bottleneck, *host_link, *fabric_link, *nic_link, *nvlink;
    cfg_node *host_list, *switch_list, *links;
    cfg_node *shared;
    int nic_sched;
    int mark_at;
} topo_raw;

static const char *const nic_scheds[] = {"fifo", "round_robin", NULL};
static const char *const mark_ats[] = {"enqueue", "dequeue", NULL};

/* topology.shared_buffer */
typedef struct shared_raw {
    int64_t bytes;
    double alpha, pfc_alpha;
} shared_raw;

static const cfg_key shared_keys[] = {
    {.name = "size", .type = CFG_SIZE, .off = offsetof(shared_raw, bytes), .flags = CFG_MIN_EXCL,
     .min = 0, .help = "the pool of each switch, shared by its egress ports"},
    {.name = "alpha", .type = CFG_FLOAT, .off = offsetof(shared_raw, alpha), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1024,
     .help = "dynamic threshold: a queue may hold alpha x the free pool"},
    {.name = "pfc_alpha", .type = CFG_FLOAT, .off = offsetof(shared_raw, pfc_alpha), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1024,
     .help = "PFC XOFF at most pfc_alpha x the free pool (0: static pfc_xoff only)"},
    {0},
};

#define KIND_KEY                                                                             \
    {.name = "kind", .type = CFG_ENUM, .off = offsetof(topo_raw, kind), .choices = kinds,    \
     .help = "dumbbell | star | leaf_spine | fat_tree | rail_optimised | dual_plane | custom"}
#define COUNT_KEY(N, F, LO, H)                                                               \
    {.name = N, .type = CFG_INT, .off = offsetof(topo_raw, F), .flags = CFG_MIN | CFG_MAX,   \
     .min = LO, .max = 100000, .help = H}
#define NODE_KEY(N, F, FL, H)                                                                \
    {.name = N, .type = CFG_NODE, .off = offsetof(topo_raw, F), .flags = FL, .help = H}
#define SHARED_KEY                                                                           \
    NODE_KEY("shared_buffer", shared, CFG_OPTIONAL,                                          \
             "{size, alpha}: switches share one buffer with dynamic thresholds"),            \
    {.name = "nic_scheduling", .type = CFG_ENUM, .off = offsetof(topo_raw, nic_sched),        \
     .choices = nic_scheds, .def = "fifo",                                                   \
     .help = "host NICs: fifo, or round_robin among their flows"},                           \
    {.name = "mark_at", .type = CFG_ENUM, .off = offsetof(topo_raw, mark_at),                 \
     .choices = mark_ats, .def = "enqueue",                                                  \
     .help = "switches ECN-mark at enqueue (queue ahead) or dequeue (queue left behind)"}

static const cfg_key dumbbell_keys[] = {
    KIND_KEY,
    COUNT_KEY("left", left, 1, "hosts on the left switch"),
    COUNT_KEY("right", right, 1, "hosts on the right switch"),
    NODE_KEY("link", link, 0, "host links"),
    NODE_KEY("bottleneck", bottleneck, CFG_OPTIONAL, "the switch-switch link (default: link)"),
    SHARED_KEY,
    {0},
};
static const cfg_key star_keys[] = {
    KIND_KEY,
    COUNT_KEY("hosts", hosts, 2, "hosts on the switch (incast: h0 receives)"),
    NODE_KEY("link", link, 0, "host links"),
    SHARED_KEY,
    {0},
};
static const cfg_key leaf_spine_keys[] = {
    KIND_KEY,
    COUNT_KEY("leaves", leaves, 1, "leaf (top-of-rack) switches"),
    COUNT_KEY("spines", spines, 1, "spine switches"),
    COUNT_KEY("hosts_per_leaf", hosts_per_leaf, 1, "hosts under each leaf"),
    NODE_KEY("host_link", host_link, 0, "host-leaf links"),
    NODE_KEY("fabric_link", fabric_link, CFG_OPTIONAL, "leaf-spine links (default: host_link)"),
    {.name = "oversubscription", .type = CFG_FLOAT, .off = offsetof(topo_raw, oversub),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,
     .help = "sets the fabric rate to hosts_per_leaf*host rate/(spines*this)"},
    SHARED_KEY,
    {0},
};
static const cfg_key fat_tree_keys[] = {
    KIND_KEY,
    {.name = "k", .type = CFG_INT, .off = offsetof(topo_raw, k), .flags = CFG_MIN | CFG_MAX,
     .min = 2, .max = 128, .help = "switch radix (even; k^3/4 hosts)"},
    NODE_KEY("link", link, 0, "every link"),
    SHARED_KEY,
    {0},
};
#define RAIL_KEYS(PLANES)                                                                    \
    KIND_KEY,                                                                                \
    COUNT_KEY("servers", servers, 1, "GPU servers"),                                         \
    COUNT_KEY("gpus_per_server", gpus, 1, "GPUs per server, each with its own NIC (rail)"),  \
    {.name = "rails", .type = CFG_INT, .off = offsetof(topo_raw, rails),                      \
     .flags = CFG_OPTIONAL | CFG_MIN | CFG_MAX, .min = 1, .max = 100000,                     \
     .help = "rails: must equal the NICs per server (gpus_per_server)"},                     \
    COUNT_KEY("servers_per_tor", servers_per_tor, 1,                                         \
              "servers whose rail-r NICs share a ToR of rail r (a segment)"),                \
    COUNT_KEY("aggs", aggs, 1, PLANES ? "aggregation switches per plane, each linked to "    \
              "every ToR of its plane" : "aggregation switches, each linked to every ToR"),  \
    NODE_KEY("nic_link", nic_link, 0, PLANES ? "each NIC port - ToR link" : "NIC - ToR links"), \
    NODE_KEY("fabric_link", fabric_link, CFG_OPTIONAL, "ToR - agg links (default: nic_link)"), \
    {.name = "oversubscription", .type = CFG_FLOAT, .off = offsetof(topo_raw, oversub),       \
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,                                         \
     .help = "sets the fabric rate to servers_per_tor*NIC rate/(aggs*this)"},               \
    NODE_KEY("nvlink", nvlink, CFG_OPTIONAL,                                                 \
             "GPU - NVSwitch links (default: rate 3600Gbps, delay 25ns)"),                   \
    SHARED_KEY,                                                                              \
    {0}
static const cfg_key rail_keys[] = {RAIL_KEYS(0)};
static const cfg_key dual_keys[] = {RAIL_KEYS(1)};
static const cfg_key custom_keys[] = {
    KIND_KEY,
    NODE_KEY("hosts", host_list, 0, "host names, or servers {name, gpus, nics, ports_per_nic}"),
    NODE_KEY("switches", switch_list, CFG_OPTIONAL, "switch names"),
    NODE_KEY("link", link, CFG_OPTIONAL, "default settings of every link"),
    NODE_KEY("links", links, 0, "links: {a: NAME, b: NAME, nic: N, ...overrides}"),
    NODE_KEY("nvlink", nvlink, CFG_OPTIONAL,
             "servers' GPU - NVSwitch links (default: rate 3600Gbps, delay 25ns)"),
    SHARED_KEY,
    {0},
};
static const cfg_key *const kind_keys[] = {dumbbell_keys, star_keys, leaf_spine_keys,
                                           fat_tree_keys, rail_keys, dual_keys, custom_keys};

static void raw_to_link(const link_raw *r, link_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->rate_bps = r->rate_bps;
    c->delay_ps = r->delay_ps;
    c->port.rate_bps = r->rate_bps;
    c->port.buffer_bytes = r->buffer_bytes;
    c->port.ecn_k_bytes = r->ecn_k_bytes;
    c->port.red_min_bytes = r->red_min_bytes;
    c->port.red_max_bytes = r->red_max_bytes;
    c->port.red_max_p = r->red_max_p;
    c->port.red_weight = r->red_weight;
    c->port.nprio = (int)r->priorities;
    c->port.pfc_xoff_bytes = r->pfc_xoff_bytes;
    c->port.pfc_xon_bytes = r->pfc_xon_bytes;
    if (r->qdisc) {
        c->port.ecn_k_bytes = r->qd.ecn_k_bytes;
        c->port.red_min_bytes = r->qd.red_min_bytes;
        c->port.red_max_bytes = r->qd.red_max_bytes;
        c->port.red_max_p = r->qd.red_max_p;
        c->port.red_weight = r->qd.red_weight;
        c->port.qdisc = r->qd.qdisc;
        c->port.qdisc_conf = r->qd.qdisc_conf;
    }
}

/* Resolves the link's `qdisc` key (qdisc.h) into r->qd, from the inline
 * keys as given. */
static int check_qdisc(topo *t, link_raw *r, const char *path, err *e)
{
    if (!r->qdisc)
        return 0;
    cfg_node *saved = r->qdisc;
    link_cfg lc;
    r->qdisc = NULL;
    raw_to_link(r, &lc);
    r->qdisc = saved;
    char p[512];
    int rc = qdisc_configure(topo_qdiscs(t), r->qdisc, cfg_path(p, sizeof p, path, "qdisc"),
                             &lc.port, topo_conf_alloc, t, e);
    if (rc)
        return rc;
    r->qd = lc.port;
    return 0;
}

/* Checks what the schema cannot: RED's max above its min, PFC's XON below
 * its XOFF and XOFF inside the buffer. */
static int check_red(topo *t, link_raw *r, const cfg_node *n, const char *path, err *e)
{
    if (r->pfc_xoff_bytes > 0 && (r->pfc_xon_bytes >= r->pfc_xoff_bytes ||
                                  r->pfc_xoff_bytes >= r->buffer_bytes)) {
        char sub[512];
        const cfg_node *at = cfg_get(n, "pfc_xon") ? cfg_get(n, "pfc_xon") : n;
        return cfg_err(e, AISIM_ERANGE, at, cfg_path(sub, sizeof sub, path, "pfc_xon"),
                       "expected pfc_xon < pfc_xoff < buffer, found %lld, %lld and %lld bytes",
                       (long long)r->pfc_xon_bytes, (long long)r->pfc_xoff_bytes,
                       (long long)r->buffer_bytes);
    }
    if (r->red_min_bytes > 0 && r->red_max_bytes <= r->red_min_bytes) {
        char p[256];
        cfg_path(p, sizeof p, path, "red_max");
        const cfg_node *at = cfg_get(n, "red_max") ? cfg_get(n, "red_max") : n;
        return cfg_err(e, AISIM_EINVAL, at, p, "expected red_max > red_min (%lld B), found %lld B",
                       (long long)r->red_min_bytes, (long long)r->red_max_bytes);
    }
    return check_qdisc(t, r, path, e);
}

/* Binds link map n (at key `key` of the topology map) into *out. */
static int bind_link(topo *t, cfg_node *n, const char *path, const char *key, link_raw *out,
                     err *e)
{
    char p[256];
    cfg_path(p, sizeof p, path, key);
    link_item it = {0};
    int rc = cfg_bind(n, p, link_keys, &it, e);
    if (rc)
        return rc;
    rc = check_red(t, &it.l, n, p, e);
    if (rc)
        return rc;
    *out = it.l;
    return 0;
}

/* A node name: letters, digits, '_', '.', '-' (names appear in CSV files). */
static bool name_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.' || *s == '-'))
            return false;
    return true;
}

/* A server of a custom topology ({name, gpus, nics, ports_per_nic}): GPU
 * endpoints "name.g{j}", each with NIC j, and (gpus > 1) an NVSwitch
 * "name.nvs" joined to them by NVLinks. */
typedef struct server_raw {
    const char *name;
    int64_t gpus, nics, ports;
} server_raw;

static const cfg_key server_keys[] = {
    {.name = "name", .type = CFG_STR, .off = offsetof(server_raw, name), .help = "server name"},
    {.name = "gpus", .type = CFG_INT, .off = offsetof(server_raw, gpus),
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 4096,
     .help = "GPU endpoints name.g0 .., GPU j with NIC j"},
    {.name = "nics", .type = CFG_INT, .off = offsetof(server_raw, nics),
     .flags = CFG_OPTIONAL | CFG_MIN | CFG_MAX, .min = 1, .max = 4096,
     .help = "NICs (rails): one per GPU, so equal to gpus"},
    {.name = "ports_per_nic", .type = CFG_INT, .off = offsetof(server_raw, ports),
     .flags = CFG_OPTIONAL | CFG_MIN | CFG_MAX, .min = 1, .max = 64,
     .help = "links each NIC may have (default: any number)"},
    {0},
};

typedef struct csrv {
    const char *name;           /* in the cfg document */
    cfg_node *at;               /* its entry in hosts */
    int first, gpus, ports;     /* node id of name.g0; ports 0: any */
    int nvs;                    /* node id of name.nvs, or -1 */
    int *used;                  /* links per NIC */
} csrv;

typedef struct cbuild {         /* what build_custom tracks */
    cfg_node **where;           /* by node id: where it was given */
    size_t nwhere;
    csrv *srv;
    size_t nsrv;
} cbuild;

static void cb_free(cbuild *cb)
{
    for (size_t i = 0; i < cb->nsrv; i++)
        free(cb->srv[i].used);
    free(cb->srv);
    free(cb->where);
}

static csrv *find_server(cbuild *cb, const char *name)
{
    for (size_t i = 0; i < cb->nsrv; i++)
        if (strcmp(cb->srv[i].name, name) == 0)
            return &cb->srv[i];
    return NULL;
}

/* Adds node `name` given at x (path p); a located error if it is taken. */
static int add_one(topo *t, cbuild *cb, cfg_node *x, const char *p, const char *name,
                   enum node_kind kind, err *e)
{
    int prev = topo_find_node(t, name);
    const csrv *sv = find_server(cb, name);
    if (prev >= 0 || sv) {
        const cfg_node *first = sv ? sv->at : cb->where[prev];
        return cfg_err(e, AISIM_EINVAL, x, p, "duplicate node name \"%s\" (first given "
                       "at line %d, column %d)", name, cfg_line(first), cfg_col(first));
    }
    int id = topo_add_node(t, name, kind);
    if (id < 0)
        return cfg_err(e, id, x, p, "too many nodes");
    cb->where = xrealloc(cb->where, (size_t)(id + 1) * sizeof *cb->where);
    cb->where[id] = x;
    cb->nwhere = (size_t)id + 1;
    return id;
}

/* hosts[i] as a server map. */
static int add_server(topo *t, cbuild *cb, cfg_node *x, const char *pi, err *e)
{
    server_raw sr = {0};
    int rc = cfg_bind(x, pi, server_keys, &sr, e);
    if (rc)
        return rc;
    char p[256], buf[64];
    if (!name_ok(sr.name))
        return cfg_err(e, AISIM_EINVAL, cfg_get(x, "name"), cfg_path(p, sizeof p, pi, "name"),
                       "expected a node name (letters, digits, '_', '.', '-'), found %s",
                       cfg_describe(cfg_get(x, "name"), buf, sizeof buf));
    if (sr.nics && sr.nics != sr.gpus)
        return cfg_err(e, AISIM_EINVAL, cfg_get(x, "nics"), cfg_path(p, sizeof p, pi, "nics"),
                       "expected %lld (one NIC per GPU: GPU j uses NIC j, its rail), found %lld",
                       (long long)sr.gpus, (long long)sr.nics);
    cfg_path(p, sizeof p, pi, "name");
    if (topo_find_node(t, sr.name) >= 0 || find_server(cb, sr.name)) {
        int id = add_one(t, cb, cfg_get(x, "name"), p, sr.name, NODE_HOST, e);
        assert(id < 0);
        return id;
    }
    int first = -1;
    for (int j = 0; j < sr.gpus; j++) {
        char gname[300];
        snprintf(gname, sizeof gname, "%s.g%d", sr.name, j);
        int id = add_one(t, cb, cfg_get(x, "name"), p, gname, NODE_HOST, e);
        if (id < 0)
            return id;
        first = j ? first : id;
    }
    cb->srv = xrealloc(cb->srv, (cb->nsrv + 1) * sizeof *cb->srv);
    cb->srv[cb->nsrv++] = (csrv){sr.name, cfg_get(x, "name"), first, (int)sr.gpus,
                                 (int)sr.ports, -1, xcalloc((size_t)sr.gpus, sizeof(int))};
    return 0;
}

static int add_named(topo *t, cbuild *cb, cfg_node *list, const char *path, const char *key,
                     enum node_kind kind, err *e)
{
    char p[256], pi[256];
    cfg_path(p, sizeof p, path, key);
    char buf[64];
    if (cfg_kind(list) != CFG_SEQ)
        return cfg_err(e, AISIM_EINVAL, list, p, "expected a list of names, found %s",
                       cfg_describe(list, buf, sizeof buf));
    if (kind == NODE_HOST && cfg_len(list) == 0)
        return cfg_err(e, AISIM_EINVAL, list, p, "expected at least one host, found none");
    for (size_t i = 0; i < cfg_len(list); i++) {
        cfg_node *x = cfg_at(list, i);
        cfg_path_index(pi, sizeof pi, p, i);
        if (kind == NODE_HOST && cfg_kind(x) == CFG_MAP) {
            int rc = add_server(t, cb, x, pi, e);
            if (rc)
                return rc;
            continue;
        }
        const char *name = cfg_scalar(x);
        if (!name || cfg_is_null(x) || !name_ok(name))
            return cfg_err(e, AISIM_EINVAL, x, pi, "expected a node name (letters, digits, "
                           "'_', '.', '-')%s, found %s", kind == NODE_HOST ? " or a server "
                           "{name, gpus}" : "", cfg_describe(x, buf, sizeof buf));
        int id = add_one(t, cb, x, pi, name, kind, e);
        if (id < 0)
            return id;
    }
    return 0;
}

/* The node at end `key` of links[i]; for a server in a, its GPU `nic`. */
static int custom_end(topo *t, cbuild *cb, cfg_node *item, const char *path, const char *key,
                      const custom_link *cl, err *e)
{
    char p[256];
    const char *name = key[0] == 'a' ? cl->a : cl->b;
    bool has_nic = cfg_get(item, "nic") != NULL;
    csrv *sv = find_server(cb, name);
    int id = -1;
    if (sv) {
        if (key[0] == 'b')
            return cfg_err(e, AISIM_EINVAL, cfg_get(item, key), cfg_path(p, sizeof p, path, key),
                           "%s is a server: name one of its GPUs (%s.g0 .. %s.g%d), or put "
                           "it in a with nic: N", name, name, name, sv->gpus - 1);
        if (!has_nic)
            return cfg_err(e, AISIM_EINVAL, cfg_get(item, key), cfg_path(p, sizeof p, path, key),
                           "%s is a server: give nic: N (0 .. %d) or name one of its GPUs "
                           "(%s.g0 ..)", name, sv->gpus - 1, name);
        if (cl->nic >= sv->gpus)
            return cfg_err(e, AISIM_ERANGE, cfg_get(item, "nic"),
                           cfg_path(p, sizeof p, path, "nic"),
                           "expected a NIC of server %s, 0 .. %d (one per GPU), found %lld",
                           name, sv->gpus - 1, (long long)cl->nic);
        id = sv->first + (int)cl->nic;
    } else {
        if (key[0] == 'a' && has_nic)
            return cfg_err(e, AISIM_EINVAL, cfg_get(item, "nic"),
                           cfg_path(p, sizeof p, path, "nic"),
                           "%s is not a server (nic picks a NIC of a server named in a)", name);
        id = topo_find_node(t, name);
        if (id < 0)
            return cfg_err(e, AISIM_EINVAL, cfg_get(item, key), cfg_path(p, sizeof p, path, key),
                           "unknown node \"%s\" (not in hosts or switches)", name);
    }
    /* A server's NIC: count its ports. */
    for (size_t i = 0; i < cb->nsrv; i++) {
        csrv *s = &cb->srv[i];
        if (id < s->first || id >= s->first + s->gpus)
            continue;
        int j = id - s->first;
        if (s->ports && s->used[j] == s->ports)
            return cfg_err(e, AISIM_ERANGE, item, path, "NIC %d of server %s has %d port%s "
                           "(ports_per_nic), all linked already", j, s->name, s->ports,
                           s->ports == 1 ? "" : "s");
        s->used[j]++;
    }
    return id;
}

static int bind_nvlink(topo *t, cfg_node *nv, const char *path, link_cfg *out, err *e);

static int build_custom(topo *t, cfg_node *n, const char *path, topo_raw *r, err *e)
{
    cbuild cb = {0};
    int rc = add_named(t, &cb, r->host_list, path, "hosts", NODE_HOST, e);
    char p[256], pi[256];
    cfg_path(p, sizeof p, path, "hosts");
    for (size_t i = 0; !rc && i < cb.nsrv; i++) {
        csrv *sv = &cb.srv[i];
        if (sv->gpus < 2)
            continue;
        char nm[300];
        snprintf(nm, sizeof nm, "%s.nvs", sv->name);
        cfg_path_index(pi, sizeof pi, p, i);
        sv->nvs = add_one(t, &cb, sv->at, pi, nm, NODE_SWITCH, e);
        if (sv->nvs < 0)
            rc = sv->nvs;
    }
    if (!rc && r->switch_list)
        rc = add_named(t, &cb, r->switch_list, path, "switches", NODE_SWITCH, e);
    link_raw def = {0};
    link_cfg nvl;
    if (!rc && r->link)
        rc = bind_link(t, r->link, path, "link", &def, e);
    if (!rc)
        rc = bind_nvlink(t, r->nvlink, path, &nvl, e);
    if (rc)
        goto out;
    cfg_path(p, sizeof p, path, "links");
    char buf[64];
    if (cfg_kind(r->links) != CFG_SEQ) {
        rc = cfg_err(e, AISIM_EINVAL, r->links, p, "expected a list of links, found %s",
                     cfg_describe(r->links, buf, sizeof buf));
        goto out;
    }
    for (size_t i = 0; i < cfg_len(r->links); i++) {
        cfg_node *item = cfg_at(r->links, i);
        cfg_path_index(pi, sizeof pi, p, i);
        custom_link cl = {.l = def};
        rc = cfg_bind(item, pi, r->link ? custom_link_over_keys : custom_link_full_keys, &cl, e);
        if (rc || (rc = check_red(t, &cl.l, item, pi, e)))
            goto out;
        int a = custom_end(t, &cb, item, pi, "a", &cl, e);
        if (a < 0) {
            rc = a;
            goto out;
        }
        int b = custom_end(t, &cb, item, pi, "b", &cl, e);
        if (b < 0) {
            rc = b;
            goto out;
        }
        if (a == b) {
            rc = cfg_err(e, AISIM_EINVAL, item, pi, "a link from %s to itself", cl.a);
            goto out;
        }
        link_cfg lc;
        raw_to_link(&cl.l, &lc);
        int id = topo_add_link(t, a, b, &lc);
        assert(id >= 0);
        (void)id;
    }
    for (size_t i = 0; i < cb.nsrv; i++)
        for (int j = 0; cb.srv[i].nvs >= 0 && j < cb.srv[i].gpus; j++)
            link_or_die(t, cb.srv[i].first + j, cb.srv[i].nvs, &nvl);
    rc = topo_finish(t, e);
    if (rc) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        rc = cfg_err(e, rc, n, path, "%s", msg);
    }
out:
    cb_free(&cb);
    return rc;
}

static int build_kind(topo *t, cfg_node *n, const char *path, topo_raw *rp, err *e);

/* The default NVLink-class link (docs/network.md): 450 GB/s per direction
 * per GPU (H100 SXM: NVLink 4, 900 GB/s bidirectional), 25 ns (SimAI's
 * default nvlink_latency). */
static const link_raw nvlink_default = {
    .rate_bps = INT64_C(3600000000000), .delay_ps = 25000, .buffer_bytes = 1 << 20,
    .red_max_p = 0.1, .red_weight = 0.002, .priorities = 1,
};

/* topology.nvlink (may be absent: the defaults) as an intra-host link. */
static int bind_nvlink(topo *t, cfg_node *nv, const char *path, link_cfg *out, err *e)
{
    link_item it = {nvlink_default};
    if (nv) {
        char p[256];
        cfg_path(p, sizeof p, path, "nvlink");
        int rc = cfg_bind(nv, p, link_over_keys, &it, e);
        if (rc || (rc = check_red(t, &it.l, nv, p, e)))
            return rc;
    }
    raw_to_link(&it.l, out);
    out->intra_host = true;
    return 0;
}

/* The fabric rate oversubscription o gives: down / (up links x o). */
static int oversub_rate(cfg_node *n, const char *path, double down_bps, double ups, double o,
                        int64_t *rate, err *e)
{
    char p[256];
    *rate = (int64_t)(down_bps / (ups * o) + 0.5);
    if (*rate < 1) {
        cfg_path(p, sizeof p, path, "oversubscription");
        return cfg_err(e, AISIM_ERANGE, cfg_get(n, "oversubscription"), p,
                       "makes the fabric rate 0 bps");
    }
    return 0;
}

static int build_rail(topo *t, cfg_node *n, const char *path, topo_raw *r, err *e)
{
    char p[256];
    if (r->rails && r->rails != r->gpus) {
        cfg_path(p, sizeof p, path, "rails");
        return cfg_err(e, AISIM_EINVAL, cfg_get(n, "rails"), p,
                       "expected %lld (one rail per NIC, one NIC per GPU: gpus_per_server), "
                       "found %lld", (long long)r->gpus, (long long)r->rails);
    }
    if (r->fabric_link && r->oversub > 0) {
        cfg_path(p, sizeof p, path, "oversubscription");
        return cfg_err(e, AISIM_EINVAL, cfg_get(n, "oversubscription"), p,
                       "give either fabric_link or oversubscription, not both");
    }
    link_raw nic, fab;
    int rc = bind_link(t, r->nic_link, path, "nic_link", &nic, e);
    if (rc)
        return rc;
    fab = nic;
    if (r->fabric_link && (rc = bind_link(t, r->fabric_link, path, "fabric_link", &fab, e)))
        return rc;
    if (r->oversub > 0 &&
        (rc = oversub_rate(n, path, (double)r->servers_per_tor * (double)nic.rate_bps,
                           (double)r->aggs, r->oversub, &fab.rate_bps, e)))
        return rc;
    topo_rail_cfg c = {
        .servers = (int)r->servers, .gpus = (int)r->gpus,
        .servers_per_tor = (int)r->servers_per_tor, .aggs = (int)r->aggs,
        .planes = r->kind == K_DUAL ? 2 : 1,
    };
    if ((rc = bind_nvlink(t, r->nvlink, path, &c.nvlink, e)))
        return rc;
    raw_to_link(&nic, &c.nic);
    raw_to_link(&fab, &c.fabric);
    rc = topo_build_rail(t, &c, e);
    if (rc) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return cfg_err(e, rc, n, path, "%s", msg);
    }
    double down = (double)r->servers_per_tor * (double)c.nic.rate_bps,
           up = (double)c.aggs * (double)c.fabric.rate_bps;
    LOG(LOG_INFO, "topo", "%s: %d servers x %d GPUs, %d plane%s, %zu nodes, %zu links; ToR "
        "oversubscription %.3g:1 (%d x %.4g Gbps down, %d x %.4g Gbps up)",
        c.planes == 1 ? "rail_optimised" : "dual_plane", c.servers, c.gpus, c.planes,
        c.planes == 1 ? "" : "s", topo_nodes(t), topo_links(t), down / up, c.servers_per_tor,
        (double)c.nic.rate_bps / 1e9, c.aggs, (double)c.fabric.rate_bps / 1e9);
    return 0;
}

/* topology.shared_buffer, once the switches exist. */
static int apply_shared(topo *t, cfg_node *sn, const char *path, err *e)
{
    char p[256];
    cfg_path(p, sizeof p, path, "shared_buffer");
    shared_raw sr = {0};
    int rc = cfg_bind(sn, p, shared_keys, &sr, e);
    if (rc)
        return rc;
    topo_set_shared_buffer(t, sr.bytes, sr.alpha, sr.pfc_alpha);
    return 0;
}

int topo_from_cfg(topo *t, cfg_node *n, const char *path, err *e)
{
    topo_raw r = {0};
    int rc = build_kind(t, n, path, &r, e);
    if (!rc && r.shared)
        rc = apply_shared(t, r.shared, path, e);
    if (!rc && r.nic_sched == 1)
        topo_set_nic_flow_rr(t);
    if (!rc && r.mark_at == 1)
        topo_set_mark_dequeue(t);
    return rc;
}

static int build_kind(topo *t, cfg_node *n, const char *path, topo_raw *rp, err *e)
{
    char buf[64], p[256];
    if (!n)
        return ERR(e, AISIM_EINVAL, "%s: missing required key (expected a map with kind: "
                   "dumbbell, star, leaf_spine, fat_tree, rail_optimised, dual_plane or custom)",
                   path);
    if (cfg_kind(n) != CFG_MAP)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a map, found %s",
                       cfg_describe(n, buf, sizeof buf));
    topo_raw r = {0};
    cfg_node *kn = cfg_get(n, "kind");
    cfg_path(p, sizeof p, path, "kind");
    if (!kn)
        return cfg_err(e, AISIM_EINVAL, n, p, "missing required key (expected one of: "
                       KIND_LIST ")");
    static const cfg_key kind_only = KIND_KEY;
    int rc = cfg_value(kn, p, &kind_only, &r.kind, e);
    if (rc)
        return rc;
    rc = cfg_bind(n, path, kind_keys[r.kind], &r, e);
    if (rc)
        return rc;
    rp->shared = r.shared;
    rp->nic_sched = r.nic_sched;
    rp->mark_at = r.mark_at;
    link_raw a, b;
    link_cfg la, lb;
    switch (r.kind) {
    case K_DUMBBELL:
        if ((rc = bind_link(t, r.link, path, "link", &a, e)))
            return rc;
        b = a;
        if (r.bottleneck && (rc = bind_link(t, r.bottleneck, path, "bottleneck", &b, e)))
            return rc;
        raw_to_link(&a, &la);
        raw_to_link(&b, &lb);
        rc = topo_build_dumbbell(t, (int)r.left, (int)r.right, &la, &lb, e);
        break;
    case K_STAR:
        if ((rc = bind_link(t, r.link, path, "link", &a, e)))
            return rc;
        raw_to_link(&a, &la);
        rc = topo_build_star(t, (int)r.hosts, &la, e);
        break;
    case K_LEAF_SPINE:
        if ((rc = bind_link(t, r.host_link, path, "host_link", &a, e)))
            return rc;
        b = a;
        if (r.fabric_link && r.oversub > 0) {
            cfg_path(p, sizeof p, path, "oversubscription");
            return cfg_err(e, AISIM_EINVAL, cfg_get(n, "oversubscription"), p,
                           "give either fabric_link or oversubscription, not both");
        }
        if (r.fabric_link && (rc = bind_link(t, r.fabric_link, path, "fabric_link", &b, e)))
            return rc;
        if (r.oversub > 0) {
            double rate = (double)r.hosts_per_leaf * (double)a.rate_bps /
                          ((double)r.spines * r.oversub);
            b.rate_bps = (int64_t)(rate + 0.5);
            if (b.rate_bps < 1) {
                cfg_path(p, sizeof p, path, "oversubscription");
                return cfg_err(e, AISIM_ERANGE, cfg_get(n, "oversubscription"), p,
                               "makes the fabric rate 0 bps");
            }
        }
        raw_to_link(&a, &la);
        raw_to_link(&b, &lb);
        rc = topo_build_leaf_spine(t, (int)r.leaves, (int)r.spines, (int)r.hosts_per_leaf, &la,
                                   &lb, e);
        break;
    case K_FAT_TREE:
        if (r.k % 2) {
            cfg_path(p, sizeof p, path, "k");
            return cfg_err(e, AISIM_EINVAL, cfg_get(n, "k"), p,
                           "expected an even integer, found \"%s\"",
                           cfg_scalar(cfg_get(n, "k")));
        }
        if ((rc = bind_link(t, r.link, path, "link", &a, e)))
            return rc;
        raw_to_link(&a, &la);
        rc = topo_build_fat_tree(t, (int)r.k, &la, e);
        break;
    case K_RAIL:
    case K_DUAL:
        return build_rail(t, n, path, &r, e);
    default:
        return build_custom(t, n, path, &r, e);
    }
    if (rc) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return cfg_err(e, rc, n, path, "%s", msg);
    }
    return 0;
}
