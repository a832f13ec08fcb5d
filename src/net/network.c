/*
 * network.c - the network object (network.h): building it from a scenario,
 * connections and the message API, routing changes, link failures and
 * port sampling.  The tables are written by network_report.c.
 *
 * Connections are kept by id (the id their packets carry), each with the
 * network's record of it (nconn): its messages not yet complete, in
 * stream order, and whether it waits for routing to join its endpoints.
 * A message completes when the transport reports that the receiver holds
 * the stream up to its end.
 */
#include "network_int.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/log.h"
#include "aisim/netext.h"
#include "aisim/netkeys.h"
#include "aisim/netreg.h"
#include "aisim/units.h"
#include "net/flow/flownet.h"
#include "net/lossless.h"

static const cfg_key failure_keys[] = {
    {.name = "a", .type = CFG_STR, .off = offsetof(failure_cfg, a), .help = "one end"},
    {.name = "b", .type = CFG_STR, .off = offsetof(failure_cfg, b), .help = "the other end"},
    {.name = "at", .type = CFG_TIME, .off = offsetof(failure_cfg, at), .flags = CFG_MIN,
     .min = 0, .help = "when the link fails"},
    {.name = "repair", .type = CFG_TIME, .off = offsetof(failure_cfg, repair),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0, .help = "when it comes back (optional)"},
    {.name = "convergence", .type = CFG_TIME, .off = offsetof(failure_cfg, convergence),
     .def = "100us", .flags = CFG_MIN, .min = 0,
     .help = "delay before routing avoids (or uses again) the link"},
    {0},
};

static int64_t hop_sojourn(network *n);

/* ---- configuration ---------------------------------------------------- */

int network_endpoint(network *n, const char *name, const cfg_node *at, const char *path,
                     err *e)
{
    if (!name) {                /* a map or a list where a host name goes */
        char d[64];
        return cfg_err(e, AISIM_EINVAL, at, path, "expected a host name, found %s",
                       cfg_describe(at, d, sizeof d));
    }
    int node = topo_find_node(n->t, name);
    if (node < 0)
        return cfg_err(e, AISIM_EINVAL, at, path, "unknown host \"%s\"", name);
    int h = topo_node_host(n->t, node);
    if (h < 0)
        return cfg_err(e, AISIM_EINVAL, at, path, "\"%s\" is a switch; expected a host", name);
    return h;
}

/* An optional list section `key`: its length (0 if absent), its key path
 * in sub; a non-list is an error (negative). */
long net_list(const cfg_node *l, const char *path, const char *key, const char *what,
                   char *sub, size_t nsub, err *e)
{
    if (!l)
        return 0;
    cfg_path(sub, nsub, path, key);
    return cfg_expect_list(l, sub, what, e);
}

/* After a failed bind of the transport section: if a key's value is not a
 * choice of this transport's key of that name but is one of another
 * transport's (cc: dcqcn under tcp), the message names that transport
 * instead of suggesting a near spelling. */
static void hint_other_transport(err *e, cfg_node *tn, const transport_ops *const *all,
                                 const transport_ops *ops)
{
    for (size_t i = 0; cfg_kind(tn) == CFG_MAP && i < cfg_len(tn); i++) {
        const char *key = cfg_key_at(tn, i), *v = cfg_scalar(cfg_at(tn, i));
        if (!v || !strstr(e->msg, key))
            continue;
        for (const cfg_key *k = ops->keys; k->name; k++) {
            if (strcmp(k->name, key) || k->type != CFG_ENUM)
                continue;
            for (size_t c = 0; k->choices[c]; c++)
                if (!strcmp(k->choices[c], v))
                    return;             /* a valid value: not this key */
            for (size_t t = 0; all[t]; t++)
                for (const cfg_key *o = all[t]->keys; all[t] != ops && o->name; o++)
                    for (size_t c = 0; !strcmp(o->name, key) && o->type == CFG_ENUM &&
                                       o->choices[c]; c++)
                        if (!strcmp(o->choices[c], v)) {
                            char *dym = strstr(e->msg, "; did you mean");
                            if (dym)
                                *dym = 0;
                            size_t used = strlen(e->msg);
                            snprintf(e->msg + used, sizeof e->msg - used,
                                     "; \"%s\" is a %s of transport %s: set transport.name: %s",
                                     v, key, all[t]->name, all[t]->name);
                            return;
                        }
        }
    }
}

/* The transport section: `name` picks the transport, whose own keys
 * (with defaults) are bound beside it. */
static int conf_transport(network *n, const net_registry *reg, cfg_node *tn, const char *path,
                          err *e)
{
    char sub[512];
    cfg_path(sub, sizeof sub, path, "transport");
    const struct transport_ops *const *all = reg->transports;
    size_t nt = 0;
    while (all[nt])
        nt++;
    /* The `name` enum's choices, NULL-terminated, kept with the network
     * (cfg_bind's messages and the resolved scenario read them later). */
    n->tnames = xcalloc(nt + 1, sizeof *n->tnames);
    for (size_t i = 0; i < nt; i++)
        n->tnames[i] = all[i]->name;
    const cfg_key *tk = NULL;
    const transport_ops *ops = all[0];
    cfg_node *nm = cfg_kind(tn) == CFG_MAP ? cfg_get(tn, "name") : NULL;
    for (size_t i = 0; nm && cfg_scalar(nm) && i < nt; i++)
        if (strcmp(all[i]->name, cfg_scalar(nm)) == 0)
            ops = all[i];
    tk = ops->keys;
    size_t nk = 0;
    while (tk[nk].name)
        nk++;
    /* name (an enum over every transport), then the transport's keys; the
     * name's int sits after the transport's bound struct. */
    size_t name_off = (ops->cfg_size + 7) & ~(size_t)7;
    cfg_key *keys = xcalloc(nk + 2, sizeof *keys);
    keys[0] = (cfg_key){.name = "name", .type = CFG_ENUM, .off = name_off, .def = all[0]->name,
                          .choices = n->tnames, .help = "the transport protocol"};
    memcpy(keys + 1, tk, nk * sizeof *keys);
    n->tcfg = xcalloc(1, name_off + sizeof(int));
    int r = cfg_bind(tn, sub, keys, n->tcfg, e);
    free(keys);
    if (r) {
        hint_other_transport(e, tn, all, ops);
        return r;
    }
    n->ops = ops;
    return ops->setup(&n->tp, n->tcfg, tn, sub, e);
}

/* `routing`: a forwarder of the registry by name (or, with no name, by
 * index: embedding programs and tests set network_cfg.routing), handed to
 * the topology; *fw gets it (NULL: none registered, ECMP). */
static int conf_routing(network *n, const net_registry *reg, const network_cfg *c,
                        cfg_node *sec, const char *path, const fwd_ops **fw, err *e)
{
    char sub[512];
    cfg_path(sub, sizeof sub, path, "routing");
    const cfg_node *at = sec && cfg_kind(sec) == CFG_MAP ? cfg_get(sec, "routing") : NULL;
    const struct fwd_ops *const *all = reg->forwarders;
    size_t nf = 0;
    while (all && all[nf])
        nf++;
    *fw = NULL;
    if (c->routing_name) {
        /* An enum over the registry's names, for cfg_value's message. */
        const char **names = xcalloc(nf + 1, sizeof *names);
        for (size_t i = 0; i < nf; i++)
            names[i] = all[i]->name;
        cfg_key k = {.name = "routing", .type = CFG_ENUM, .choices = names};
        int idx = -1, r = 0;
        for (size_t i = 0; i < nf && idx < 0; i++)
            if (strcmp(names[i], c->routing_name) == 0)
                idx = (int)i;
        if (idx < 0)
            r = at ? cfg_value(at, sub, &k, &idx, e)
                   : ERR(e, AISIM_EINVAL, "%s: no forwarder \"%s\"", sub, c->routing_name);
        free(names);
        if (r)
            return r;
        *fw = all[idx];
    } else if (c->routing > 0 || nf) {
        if (c->routing < 0 || (size_t)c->routing >= nf)
            return ERR(e, AISIM_EINVAL, "%s: no forwarder %d registered", sub, c->routing);
        *fw = all[c->routing];
    }
    n->send = *fw ? (*fw)->send : FWD_SEND_ROUTE;
    if (!*fw)
        return 0;
    /* `forwarder`: the forwarder's own keys. */
    char fsub[512];
    cfg_path(fsub, sizeof fsub, path, "forwarder");
    void *cfg = NULL;
    int r = 0;
    if ((*fw)->keys) {
        cfg = xcalloc(1, (*fw)->cfg_size);
        cfg_doc *none = NULL;   /* absent: an empty map, the keys' defaults */
        if (c->forwarder)
            r = cfg_bind(c->forwarder, fsub, (*fw)->keys, cfg, e);
        else if (!(r = cfg_load_string("forwarder", "{}", 2, &none, e)))
            r = cfg_bind(cfg_root(none), fsub, (*fw)->keys, cfg, e);
        cfg_free(none);
    } else if (c->forwarder && !cfg_is_null(c->forwarder)) {
        r = cfg_err(e, AISIM_EINVAL, c->forwarder, fsub,
                    "expected no keys (routing %s has none), found a value", (*fw)->name);
    }
    if (!r)
        r = topo_set_forwarder(n->t, *fw, cfg, at, sub, e);
    free(cfg);
    return r;
}

/* `faults` and `hooks`: one set of hooks by name (hook.h), the faults
 * first (their streams and faults.csv rows as before hooks existed). */
static int conf_hooks(network *n, const net_registry *reg, const network_cfg *c,
                      const char *path, uint64_t seed, err *e)
{
    char sub[512];
    n->faults = fault_create(n->t, n->s, reg->hooks, seed);
    int r = fault_add(n->faults, c->faults, cfg_path(sub, sizeof sub, path, "faults"),
                      "faults", e);
    if (!r)
        r = fault_add(n->faults, c->hooks, cfg_path(sub, sizeof sub, path, "hooks"),
                      "hooks", e);
    return r;
}

/* The `failures` list: the link between two named nodes; repair after failure. */
static int conf_failures(network *n, cfg_node *fl, const char *path, err *e)
{
    char sub[512], sub2[512];
    long len = net_list(fl, path, "failures", "failures", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    n->nfails = (size_t)len;
    n->fails = xcalloc(n->nfails + 1, sizeof *n->fails);
    n->fail_link = xcalloc(n->nfails + 1, sizeof *n->fail_link);
    for (size_t i = 0; i < n->nfails; i++) {
        failure_cfg *fc = &n->fails[i];
        cfg_node *fn = cfg_at(fl, i);
        cfg_path_index(sub2, sizeof sub2, sub, i);
        int r = cfg_bind(fn, sub2, failure_keys, fc, e);
        if (r)
            return r;
        int a = topo_find_node(n->t, fc->a), b = topo_find_node(n->t, fc->b);
        char kp[600];
        if (a < 0 || b < 0)
            return cfg_err(e, AISIM_EINVAL, cfg_get(fn, a < 0 ? "a" : "b"),
                           cfg_path(kp, sizeof kp, sub2, a < 0 ? "a" : "b"),
                           "unknown node \"%s\"", a < 0 ? fc->a : fc->b);
        n->fail_link[i] = topo_find_link(n->t, a, b);
        if (n->fail_link[i] < 0)
            return cfg_err(e, AISIM_EINVAL, fn, sub2, "no link between %s and %s", fc->a,
                           fc->b);
        if (fc->repair && fc->repair <= fc->at)
            return cfg_err(e, AISIM_ERANGE, cfg_get(fn, "repair"),
                           cfg_path(kp, sizeof kp, sub2, "repair"),
                           "expected a repair time after the failure");
    }
    return 0;
}

/* The hosts at the two ends of a packet of connection id, and how its
 * transport describes it, for the pcap writer. */
static void pcap_describe(void *ctx, const pkt *p, int *from, int *to, pcap_l4 *h)
{
    network *n = ctx;
    memset(h, 0, sizeof *h);
    nconn *k = idtab_get(&n->conns, p->flow_id);
    conn *c = k ? k->c : NULL;
    if (!c) {
        *from = *to = 0;
        return;
    }
    n->ops->pcap(c, p, h);
    *from = h->reverse ? c->dst : c->src;
    *to = h->reverse ? c->src : c->dst;
}

/* A captured host's tap: every packet it sends or receives. */
static void on_tap(void *ctx, const pkt *p, int rx)
{
    (void)rx;
    net_capture *c = ctx;
    pcapw_add(c->w, sim_now(c->n->s), p);
}

/* The `pcap` list: a capture and a tap on each listed host. */
static int conf_pcap(network *n, cfg_node *pl, const char *path, err *e)
{
    char sub[512], sub2[512];
    long len = net_list(pl, path, "pcap", "host names", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    n->ncaps = (size_t)len;
    n->caps = xcalloc(n->ncaps + 1, sizeof *n->caps);
    for (size_t i = 0; i < n->ncaps; i++) {
        const char *nm = cfg_scalar(cfg_at(pl, i));
        int r = network_endpoint(n, nm ? nm : "", cfg_at(pl, i),
                                 cfg_path_index(sub2, sizeof sub2, sub, i), e);
        if (r < 0)
            return r;
        for (size_t j = 0; j < i; j++)
            if (n->caps[j].host == r)
                return cfg_err(e, AISIM_EINVAL, cfg_at(pl, i), sub2, "host %s is listed "
                               "twice", nm);
        n->caps[i] = (net_capture){n, pcapw_create((uint64_t)n->cfg.pcap_max, pcap_describe, n),
                                   r};
        topo_set_host_tap(n->t, r, on_tap, &n->caps[i]);
    }
    return 0;
}

/* Adds port q to the sampled ports (once). */
static void add_sport(network *n, port *q, size_t *cap)
{
    for (size_t j = 0; j < n->nsports; j++)
        if (n->sports[j] == q)
            return;
    if (n->nsports == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        n->sports = xrealloc(n->sports, *cap * sizeof *n->sports);
        n->sport_names = xrealloc(n->sport_names, *cap * sizeof *n->sport_names);
    }
    n->sports[n->nsports] = q;
    n->sport_names[n->nsports++] = q->base.name;
}

/* The `sample_ports` list: ports by name, or every port a pattern with
 * *, ? or [ matches (fnmatch), in link order. */
static int conf_sample_ports(network *n, cfg_node *sp, const char *path, err *e)
{
    char sub[512], sub2[512], found[96];
    long len = net_list(sp, path, "sample_ports", "port names", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    size_t cap = 0, before;
    for (size_t i = 0; i < (size_t)len; i++) {
        const char *nm = cfg_scalar(cfg_at(sp, i));
        bool pat = nm && strpbrk(nm, "*?[");
        before = n->nsports;
        for (size_t l = 0; nm && l < topo_links(n->t); l++)
            for (int d = 0; d < 2; d++) {
                port *q = topo_link_port(n->t, (int)l, d);
                if (pat ? fnmatch(nm, q->base.name, 0) == 0 : strcmp(q->base.name, nm) == 0)
                    add_sport(n, q, &cap);
            }
        if (n->nsports == before)
            return cfg_err(e, AISIM_EINVAL, cfg_at(sp, i),
                           cfg_path_index(sub2, sizeof sub2, sub, i), "no port %s %s; "
                           "ports are named FROM->TO, such as \"sw0->h0\"",
                           pat ? "matches" : "named",
                           cfg_describe(cfg_at(sp, i), found, sizeof found));
    }
    n->sq_sum = xcalloc(n->nsports, sizeof *n->sq_sum);
    n->sq_max = xcalloc(n->nsports, sizeof *n->sq_max);
    return 0;
}

/* The first `buffer` key under n whose size is below `below`, or NULL. */
static const cfg_node *small_buffer_key(const cfg_node *n, int64_t below, char *path,
                                        size_t len, const char *base)
{
    for (size_t i = 0; i < cfg_len(n); i++) {
        const cfg_node *c = cfg_at(n, i);
        char sub[512];
        if (cfg_kind(n) == CFG_MAP)
            cfg_path(sub, sizeof sub, base, cfg_key_at(n, i));
        else
            cfg_path_index(sub, sizeof sub, base, i);
        int64_t v;
        const char *why;
        if (cfg_kind(n) == CFG_MAP && strcmp(cfg_key_at(n, i), "buffer") == 0 &&
            cfg_scalar(c) && units_parse(UNIT_SIZE, cfg_scalar(c), &v, &why) && v < below) {
            snprintf(path, len, "%s", sub);
            return c;
        }
        const cfg_node *r = cfg_kind(c) != CFG_SCALAR
                                ? small_buffer_key(c, below, path, len, sub) : NULL;
        if (r)
            return r;
    }
    return NULL;
}

/* A port whose buffer cannot hold one full packet of the transport
 * (payload + header) drops every full packet: an error.  Fewer than two
 * is suspicious: a warning. */
static int check_buffers(network *n, const char *path, err *e)
{
    int64_t full = (int64_t)n->payload + n->header, least = INT64_MAX;
    int at = -1;
    for (size_t l = 0; l < topo_links(n->t); l++)
        for (int dir = 0; dir < 2; dir++) {
            int64_t b = topo_link_port(n->t, (int)l, dir)->cfg.buffer_bytes;
            if (b < least) {
                least = b;
                at = (int)l;
            }
        }
    if (at < 0 || least >= 2 * full)
        return 0;
    int a, b;
    topo_link_ends(n->t, at, &a, &b);
    char tp[512], kp[600];
    cfg_path(tp, sizeof tp, path, "topology");
    if (least >= full) {
        LOG(LOG_WARN, "net", "%s: the buffer of link %s-%s holds one packet (%lld bytes, a "
            "packet is payload + header = %lld bytes): most bursts will lose packets", tp,
            topo_node_name(n->t, a), topo_node_name(n->t, b), (long long)least,
            (long long)full);
        return 0;
    }
    const cfg_node *k = small_buffer_key(n->cfg.topology, full, kp, sizeof kp, tp);
    return cfg_err(e, AISIM_ERANGE, k ? k : n->cfg.topology, k ? kp : tp,
                   "expected a buffer of at least one packet (payload + header = %lld bytes; "
                   "a smaller one drops every packet) on every port, found %lld bytes on link "
                   "%s-%s", (long long)full, (long long)least, topo_node_name(n->t, a),
                   topo_node_name(n->t, b));
}

/* `extensions`: a map from a registered extension's name to its section
 * (netext.h), loaded in file order. */
static int conf_extensions(network *n, const model_env *env, cfg_node *x, const char *path,
                           err *e)
{
    if (!x || cfg_is_null(x))
        return 0;
    char sub[512], kp[700], buf[64];
    cfg_path(sub, sizeof sub, path, "extensions");
    if (cfg_kind(x) != CFG_MAP)
        return cfg_err(e, AISIM_EINVAL, x, sub, "expected a map from extension name to its "
                       "section, found %s", cfg_describe(x, buf, sizeof buf));
    const netext_ops *const *reg = env->net->extensions;
    n->exts = xcalloc(cfg_len(x) + 1, sizeof *n->exts);
    for (size_t i = 0; i < cfg_len(x); i++) {
        const char *name = cfg_key_at(x, i);
        cfg_node *sec = cfg_at(x, i);
        cfg_path(kp, sizeof kp, sub, name);
        const netext_ops *ops = NULL;
        for (size_t j = 0; reg && reg[j] && !ops; j++)
            if (strcmp(reg[j]->name, name) == 0)
                ops = reg[j];
        if (!ops) {
            char list[256] = "";
            for (size_t j = 0; reg && reg[j]; j++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         j ? ", " : "", reg[j]->name);
            return cfg_err(e, AISIM_EINVAL, sec, kp, "expected a network extension (%s), "
                           "found %s", list[0] ? list : "none registered",
                           cfg_quote(name, buf, sizeof buf));
        }
        netext_inst *x1 = &n->exts[n->nexts++];
        x1->ops = ops;
        x1->st = xcalloc(1, ops->state_size);
        int r;
        if ((r = cfg_bind(sec, kp, ops->keys, x1->st, e)) ||
            (r = ops->configure(x1->st, n, sec, kp, env, e)))
            return r;
    }
    return 0;
}

int network_create(network **np, const network_cfg *c, cfg_node *sec, const char *path,
                   const model_env *env, err *e)
{
    network *n = xcalloc(1, sizeof *n);
    *np = n;
    idtab_init(&n->conns, sizeof(nconn));
    idtab_init(&n->msgs, sizeof(nmsg));
    n->cfg = *c;
    n->s = env->sim;
    n->seed = env->seed;
    n->pool = pkt_pool_create();
    n->t = topo_create(env->sim, n->pool, env->seed);
    char sub[512];
    topo_set_qdiscs(n->t, env->net ? env->net->qdiscs : NULL);
    int r = topo_from_cfg(n->t, c->topology, cfg_path(sub, sizeof sub, path, "topology"), e);
    if (r)
        return r;
    topo_set_hash_seeds(n->t, c->hash_seeds == 1, 0x5eed);
    if (!env->net || !env->net->transports || !env->net->transports[0]) {
        return ERR(e, AISIM_EINVAL, "%s: no transport registered (model_env.net)", path);
    }
    if ((r = conf_transport(n, env->net, c->transport, path, e)))
        return r;
    const fwd_ops *fw;
    if ((r = conf_routing(n, env->net, c, sec, path, &fw, e)))
        return r;
    /* Packets forwarded hop by hop may arrive out of order. */
    if (n->send != FWD_SEND_ROUTE && n->ops->spray_check &&
        (r = n->ops->spray_check(n->tp, fw->name, c->transport,
                                 cfg_path(sub, sizeof sub, path, "transport"), e)))
        return r;
    n->ops->framing(n->tp, &n->payload, &n->header);
    n->hop_sojourn_ps = hop_sojourn(n);
    for (size_t l = 0; l < topo_links(n->t); l++)
        n->pfc |= topo_link_port(n->t, (int)l, 0)->cfg.pfc_xoff_bytes > 0 ||
                  topo_link_port(n->t, (int)l, 1)->cfg.pfc_xoff_bytes > 0;
    if (n->ops->net_ready &&
        (r = n->ops->net_ready(n->tp, n->t, c->transport, cfg_path(sub, sizeof sub, path,
                                                                    "transport"), e)))
        return r;
    if (n->pfc && (r = lossless_check(n->t, (int64_t)n->payload + n->header, n->cfg.topology,
                                      cfg_path(sub, sizeof sub, path, "topology"), e)))
        return r;
    if (n->pfc)
        pfc_watch_arm(n->t, n->s);
    if ((r = check_buffers(n, path, e)) || (r = conf_pcap(n, c->pcap, path, e)) || (r = conf_failures(n, c->failures, path, e)) ||
        (r = conf_hooks(n, env->net, c, path, env->seed, e)) ||
        (r = conf_sample_ports(n, c->sample_ports, path, e)))
        return r;
    /* The flow plane takes the transport's place (its framing kept). */
    if (c->plane == NET_PLANE_FLOW && (r = flownet_attach(n, sec, c->flow, path, e)))
        return r;
    return conf_extensions(n, env, c->extensions, path, e);
}

typedef struct net_only {
    network_cfg c;
} net_only;

static const cfg_key net_only_keys[] = {
    NET_KEYS(net_only, c),
    {0},
};

int network_from_section(network **np, cfg_node *sec, const char *path, const model_env *env,
                         err *e)
{
    *np = NULL;
    net_only k = {0};
    int r = cfg_bind(sec, path, net_only_keys, &k, e);
    return r ? r : network_create(np, &k.c, sec, path, env, e);
}

void network_destroy(network *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nconns; i++) {
        nconn *k = idtab_get(&n->conns, i);
        if (k && k->c) {
            n->ops->stop(k->c);
            free(k->c);
        }
        if (k)
            free(k->q);
    }
    for (size_t i = 0; i < n->nexts; i++) {
        n->exts[i].ops->fini(n->exts[i].st);
        free(n->exts[i].st);
    }
    free(n->exts);
    idtab_fini(&n->conns);
    idtab_fini(&n->msgs);
    free(n->reap_id);
    free(n->reap_due);
    if (n->spill)
        fclose(n->spill);
    fault_destroy(n->faults);
    topo_destroy(n->t);
    pkt_pool_destroy(n->pool);
    if (n->ops && n->tp)
        n->ops->teardown(n->tp);
    free(n->tcfg);
    free(n->tnames);
    for (size_t i = 0; i < n->ncaps; i++)
        pcapw_destroy(n->caps[i].w);
    free(n->caps);
    free(n->fails);
    free(n->fail_link);
    free(n->sports);
    free(n->sport_names);
    free(n->sq_sum);
    free(n->sq_max);
    free(n->ts);
    free(n);
}

topo *network_topo(network *n) { return n->t; }
pkt_pool *network_pool(network *n) { return n->pool; }
sim *network_sim(network *n) { return n->s; }
const transport_ops *network_transport(const network *n) { return n->ops; }
size_t network_endpoints(const network *n) { return topo_hosts(n->t); }
void network_framing(const network *n, uint32_t *payload, uint32_t *header)
{
    *payload = n->payload;
    *header = n->header;
}
size_t network_active(const network *n) { return n->active; }
size_t network_messages(const network *n) { return n->nmsgs; }

void network_counts(const network *n, network_int_counts *c)
{
    c->conns_opened = n->nconns;
    c->conns_live = n->conns.live;
    c->msgs_live = n->msgs.live;
}
const net_msg *network_message(const network *n, uint64_t id)
{
    const nmsg *e = idtab_get(&n->msgs, id);
    return e ? &e->m : NULL;
}

void network_on_complete(network *n, net_done_fn fn, void *ctx)
{
    n->on_complete = fn;
    n->on_complete_ctx = ctx;
}

double network_host_capacity_bps(network *n)
{
    double cap_bps = 0;
    for (size_t l = 0; l < topo_links(n->t); l++) {
        int a, b;
        topo_link_ends(n->t, (int)l, &a, &b);
        if (topo_link_is_intra_host(n->t, (int)l))
            continue;                   /* NVLink: not the network */
        if (topo_node_host(n->t, a) >= 0)
            cap_bps += (double)topo_link_port(n->t, (int)l, 0)->cfg.rate_bps;
        else if (topo_node_host(n->t, b) >= 0)
            cap_bps += (double)topo_link_port(n->t, (int)l, 1)->cfg.rate_bps;
    }
    return cap_bps;
}

/* ---- connections and messages ----------------------------------------- */

static uint64_t path_key(uint32_t id)
{
    return (uint64_t)id * 0x9e3779b97f4a7c15u + 1;
}

/* Takes the route routing offers now, which avoids links that failed more
 * than the convergence delay ago: when routing changes, at a launch, and
 * when the transport asks (a timeout).  Sprayed packets need none: every
 * node forwards them by the tables of the moment. */
static void conn_reroute(conn *c)
{
    network *n = c->owner;
    const route *rt = topo_route_flow(n->t, c->src, c->dst, c->path_key);
    if (rt) {
        c->fwd = rt;
        c->rev = rt->reverse;
        n->ops->paths_changed(c);
    }
}

/* The sprayer sink of a connection: data packets handed to it leave by a
 * new entropy value each. */
static void conn_sprayer_recv(sink *self, pkt *p)
{
    conn_send_data(container_of(self, conn, sprayer), p);
}

/* ---- messages: records, completion, the spill file ------------------- */

static nmsg *msg_of(network *n, uint64_t id) { return idtab_get(&n->msgs, id); }

/* The row of message e, its counters from `end` (its connection's counters
 * when it ended, or now).  A finished message delivered all its bytes: its
 * counters end when the next message is queued on its connection, which
 * may be long before it completes (a collective queues its chunks), so
 * `end` alone would undercount what it delivered. */
static void msg_row_of(const nmsg *e, const conn_stats *end, msg_row *r)
{
    const net_msg *m = &e->m;
    uint64_t got = m->finish_ps >= 0 ? m->bytes
                   : end->delivered > m->offset ? end->delivered - m->offset : 0;
    *r = (msg_row){.src = m->src, .dst = m->dst, .tag = m->tag, .bytes = m->bytes,
                   .start_ps = m->start_ps, .finish_ps = m->finish_ps, .ideal_ps = m->ideal_ps,
                   .delivered = got < m->bytes ? got : m->bytes,
                   .retransmits = end->retransmits - m->at_start.retransmits,
                   .timeouts = end->timeouts - m->at_start.timeouts, .aborted = m->aborted,
                   .valid = 1};
}

/* A message that is complete and whose counters are final is written to
 * the spill file (at its id) and leaves memory: a run of 10^7 short
 * messages holds only those in flight. */
static void msg_maybe_final(network *n, uint64_t id)
{
    nmsg *e = msg_of(n, id);
    if (!e->ended || e->busy || (e->m.finish_ps < 0 && !e->m.aborted))
        return;
    if (!n->spill && !(n->spill = tmpfile())) {
        n->spill_failed = true;
        return;                 /* kept in memory instead */
    }
    msg_row r;
    msg_row_of(e, &e->at_end, &r);
    int64_t at = (int64_t)(id * sizeof r);
    if (((n->spill_reading || n->spill_pos != at) &&
         fseeko(n->spill, (off_t)at, SEEK_SET) != 0) ||
        fwrite(&r, sizeof r, 1, n->spill) != 1) {
        n->spill_failed = true;
        n->spill_pos = -1;
        return;
    }
    n->spill_pos = at + (int64_t)sizeof r;
    n->spill_reading = false;
    idtab_release(&n->msgs, id);
}

static void msg_complete(network *n, uint64_t id, bool aborted)
{
    nmsg *e = msg_of(n, id);
    if (!aborted)
        e->m.finish_ps = sim_now(n->s);
    e->m.aborted = aborted;
    if (e->m.bytes != UINT64_MAX)
        n->active--;
    e->busy = true;             /* stays in memory while its callbacks run */
    for (size_t i = 0; i < n->nexts; i++)
        if (n->exts[i].ops->on_done)
            n->exts[i].ops->on_done(n->exts[i].st, &e->m);
    if (e->fn)
        e->fn(e->ctx, n, &e->m);
    if (n->on_complete)
        n->on_complete(n->on_complete_ctx, n, &e->m);
    e->busy = false;
    msg_maybe_final(n, id);
}

/* ---- connections: life, delivery, freeing ----------------------------- */

/* The longest a packet can take over one hop: a full buffer drained at its
 * port's rate, one more packet's serialisation, the wire's delay. */
static int64_t hop_sojourn(network *n)
{
    int64_t worst = 0;
    for (size_t l = 0; l < topo_links(n->t); l++)
        for (int d = 0; d < 2; d++) {
            const port *q = topo_link_port(n->t, (int)l, d);
            int64_t t = units_tx_time_ps(q->cfg.buffer_bytes + n->payload + n->header,
                                         q->cfg.rate_bps) +
                        topo_link_wire(n->t, (int)l, d)->delay_ps;
            if (t > worst)
                worst = t;
        }
    return worst;
}

/* Frees connection id (its linger is over): its transport state, its
 * binding, its record; its last message's counters become final. */
static void conn_free(network *n, uint32_t id)
{
    nconn *k = idtab_get(&n->conns, id);
    conn *c = k->c;
    if (k->nmsgs) {
        nmsg *e = msg_of(n, k->last_msg);
        n->ops->stats(c, &e->at_end);
        e->ended = true;
        msg_maybe_final(n, k->last_msg);
    }
    topo_bind_flow(n->t, id, c->src, NULL, c->dst, NULL);
    n->ops->stop(c);
    free(c);
    free(k->q);
    idtab_release(&n->conns, id);
}

/* Frees the connections whose linger is over. */
static void reap(network *n)
{
    int64_t now = sim_now(n->s);
    while (n->rn && n->reap_due[n->rh] <= now) {
        uint32_t id = n->reap_id[n->rh];
        n->rh = (n->rh + 1) % n->rcap;
        n->rn--;
        conn_free(n, id);
    }
}

/* A closing connection with nothing left to deliver, whose transport is
 * idle, is freed after a linger (TCP's TIME_WAIT, in spirit): long enough
 * for any packet of it still in the network to arrive (its hops there and
 * back, each at the worst a port can hold a packet: a full buffer, plus
 * the longest a delay fault holds one; four times that with PFC or faults,
 * which can hold packets longer).  A packet that still arrives later
 * counts as dropped at an unbound host. */
static void conn_maybe_idle(network *n, nconn *k)
{
    conn *c = k->c;
    if (!k->closing || k->retiring || k->qn || !k->started || !n->ops->idle(c))
        return;
    k->retiring = true;
    size_t hops = (c->fwd ? (size_t)c->fwd->len / 2 : 8) + (c->rev ? (size_t)c->rev->len / 2 : 8);
    int64_t per_hop = n->hop_sojourn_ps + (n->faults ? fault_hold_ps(n->faults) : 0);
    int64_t linger = (int64_t)hops * per_hop;
    if ((n->faults && fault_count(n->faults)) || n->pfc)
        linger *= 4;
    if (n->rn == n->rcap) {
        size_t nc = n->rcap ? 2 * n->rcap : 64;
        uint32_t *ids = xcalloc(nc, sizeof *ids);
        int64_t *due = xcalloc(nc, sizeof *due);
        for (size_t i = 0; i < n->rn; i++) {
            ids[i] = n->reap_id[(n->rh + i) % n->rcap];
            due[i] = n->reap_due[(n->rh + i) % n->rcap];
        }
        free(n->reap_id);
        free(n->reap_due);
        n->reap_id = ids;
        n->reap_due = due;
        n->rh = 0;
        n->rcap = nc;
    }
    /* Lingers differ by path length: keep the queue in due order. */
    size_t i = n->rn++;
    int64_t due = sim_now(n->s) + linger;
    while (i > 0 && n->reap_due[(n->rh + i - 1) % n->rcap] > due) {
        n->reap_id[(n->rh + i) % n->rcap] = n->reap_id[(n->rh + i - 1) % n->rcap];
        n->reap_due[(n->rh + i) % n->rcap] = n->reap_due[(n->rh + i - 1) % n->rcap];
        i--;
    }
    n->reap_id[(n->rh + i) % n->rcap] = c->id;
    n->reap_due[(n->rh + i) % n->rcap] = due;
}

static void conn_idle(conn *c)
{
    network *n = c->owner;
    conn_maybe_idle(n, idtab_get(&n->conns, c->id));
}

/* The stream offset at which connection k's oldest pending message
 * completes, for the transport's cheap check (conn.mark). */
static void set_mark(network *n, nconn *k)
{
    const nmsg *e = k->qn ? msg_of(n, k->q[k->qh]) : NULL;
    k->c->mark = !e || e->m.bytes == UINT64_MAX ? UINT64_MAX : e->m.offset + e->m.bytes;
}

static void conn_delivered(conn *c, uint64_t bytes)
{
    network *n = c->owner;
    nconn *k = idtab_get(&n->conns, c->id);
    while (k->qn) {
        uint64_t id = k->q[k->qh];
        const nmsg *e = msg_of(n, id);
        if (e->m.bytes == UINT64_MAX || e->m.offset + e->m.bytes > bytes)
            break;
        k->qh = (k->qh + 1) % k->qcap;
        k->qn--;
        set_mark(n, k);
        msg_complete(n, id, false);
    }
    conn_maybe_idle(n, k);
}

static void conn_aborted(conn *c)
{
    network *n = c->owner;
    nconn *k = idtab_get(&n->conns, c->id);
    while (k->qn) {
        uint64_t id = k->q[k->qh];
        k->qh = (k->qh + 1) % k->qcap;
        k->qn--;
        set_mark(n, k);
        msg_complete(n, id, true);
    }
    conn_maybe_idle(n, k);
}

conn *network_connect(network *n, int src, int dst, int prio)
{
    reap(n);
    uint32_t id = (uint32_t)n->nconns++;
    nconn *k = idtab_set(&n->conns, id);
    k->wait_start = -1;
    conn *c = xcalloc(1, n->ops->conn_size);
    k->c = c;
    c->ops = n->ops;
    c->tp = n->tp;
    c->s = n->s;
    c->pool = n->pool;
    c->id = id;
    c->src = src;
    c->dst = dst;
    c->prio = (uint8_t)prio;
    c->path_key = path_key(id);
    c->spray = n->send == FWD_SEND_INDEX    ? CONN_SPRAY_RR
               : n->send == FWD_SEND_RANDOM ? CONN_SPRAY_RANDOM
                                            : CONN_PATH_FIXED;
    /* Seeded for every connection: a transport that chooses paths itself
     * (Stellar's OBS) draws from it too, so the run seed varies it. */
    rng_init(&c->spray_rng, n->seed, "net.spray", id);
    c->src_fwd = topo_node_forwarder(n->t, topo_host_node(n->t, src));
    c->dst_node = (uint32_t)topo_host_node(n->t, dst);
    c->sprayer = (sink){conn_sprayer_recv, "conn.sprayer"};
    c->mark = UINT64_MAX;
    c->delivered = conn_delivered;
    c->aborted = conn_aborted;
    c->reroute = conn_reroute;
    c->idle = conn_idle;
    c->owner = n;
    sink *at_src, *at_dst;
    n->ops->conn_init(c, &at_src, &at_dst);
    topo_bind_flow(n->t, id, src, at_src, dst, at_dst);
    return c;
}

void network_close(network *n, conn *c)
{
    nconn *k = idtab_get(&n->conns, c->id);
    k->closing = true;
    conn_maybe_idle(n, k);
}

/* Starts connection k at `start` (or at once if that has passed) on the
 * route routing gives it now, with its whole stream so far.  Endpoints
 * that a failure has cut apart have none: the connection then waits for
 * routing to join them again (on_routing_change). */
static void launch(network *n, nconn *k, int64_t start)
{
    conn *c = k->c;
    conn_reroute(c);
    if (!c->fwd) {
        k->wait_start = start;
        return;
    }
    k->wait_start = -1;
    k->started = true;
    /* The reference completion time of the messages queued so far (the
     * first, in practice), on the path they start on. */
    for (size_t i = 0; i < k->qn; i++) {
        net_msg *m = &msg_of(n, k->q[(k->qh + i) % k->qcap])->m;
        m->ideal_ps = m->bytes == UINT64_MAX ? -1 : topo_route_ideal_ps(c->fwd, m->bytes,
                                                                          n->payload, n->header);
    }
    /* The round trip a handshake would have measured: a header-only packet
     * there and back on the empty network. */
    int64_t rtt = topo_route_ideal_ps(c->fwd, 0, n->payload, n->header) +
                  topo_route_ideal_ps(c->rev, 0, n->payload, n->header);
    int64_t now = sim_now(n->s);
    n->ops->start(c, start > now ? start : now, k->stream_end, rtt);
}

uint64_t network_send_on(network *n, conn *c, uint64_t bytes, int64_t tag, int64_t start_ps,
                         net_done_fn fn, void *ctx)
{
    nconn *k = idtab_get(&n->conns, c->id);
    uint64_t id = n->nmsgs++;
    nmsg *e = idtab_set(&n->msgs, id);
    net_msg *m = &e->m;
    bool first = !k->started && k->wait_start < 0 && k->stream_end == 0;
    *m = (net_msg){.id = id, .conn = c->id, .src = c->src, .dst = c->dst, .prio = c->prio,
                   .tag = tag, .bytes = bytes, .offset = k->stream_end,
                   .start_ps = first ? start_ps : sim_now(n->s), .finish_ps = -1,
                   .ideal_ps = -1};
    e->fn = fn;
    e->ctx = ctx;
    n->ops->stats(c, &m->at_start);
    if (k->nmsgs++) {
        /* The previous message's counters end where this one's begin. */
        nmsg *prev = msg_of(n, k->last_msg);
        prev->at_end = m->at_start;
        prev->ended = true;
        msg_maybe_final(n, k->last_msg);
    }
    k->last_msg = id;
    if (k->qn == k->qcap) {
        size_t nc = k->qcap ? 2 * k->qcap : 4;
        uint64_t *q = xcalloc(nc, sizeof *q);
        for (size_t i = 0; i < k->qn; i++)
            q[i] = k->q[(k->qh + i) % k->qcap];
        free(k->q);
        k->q = q;
        k->qh = 0;
        k->qcap = nc;
    }
    k->q[(k->qh + k->qn++) % k->qcap] = id;
    set_mark(n, k);
    if (bytes != UINT64_MAX)
        n->active++;
    k->stream_end = bytes == UINT64_MAX ? UINT64_MAX : k->stream_end + bytes;
    for (size_t i = 0; i < n->nexts; i++)
        if (n->exts[i].ops->on_send)
            n->exts[i].ops->on_send(n->exts[i].st, c, m);
    if (first) {
        launch(n, k, start_ps);
    } else if (k->started) {
        m->ideal_ps = topo_route_ideal_ps(c->fwd, bytes, n->payload, n->header);
        n->ops->append(c, bytes);
    }
    return id;
}

uint64_t network_send(network *n, int src, int dst, uint64_t bytes, int prio, int64_t tag,
                      int64_t start_ps, net_done_fn fn, void *ctx)
{
    conn *c = network_connect(n, src, dst, prio);
    ((nconn *)idtab_get(&n->conns, c->id))->closing = true;
    return network_send_on(n, c, bytes, tag, start_ps, fn, ctx);
}

/* The row of message id for the report: from memory, or from the spill
 * file.  0, or -1 if it cannot be read back. */
int network_msg_row(network *n, uint64_t id, msg_row *r)
{
    nmsg *e = msg_of(n, id);
    if (e) {
        conn_stats end = e->at_end;
        if (!e->ended) {
            nconn *k = idtab_get(&n->conns, e->m.conn);
            n->ops->stats(k->c, &end);
        }
        msg_row_of(e, &end, r);
        return 0;
    }
    int64_t at = (int64_t)(id * sizeof *r);
    if (((!n->spill_reading || n->spill_pos != at) &&
         fseeko(n->spill, (off_t)at, SEEK_SET) != 0) ||
        fread(r, sizeof *r, 1, n->spill) != 1 || !r->valid) {
        n->spill_pos = -1;
        return -1;
    }
    n->spill_pos = at + (int64_t)sizeof *r;
    n->spill_reading = true;
    return 0;
}

/* ---- routing changes, failures, sampling ------------------------------ */

/* Routing converged after a failure or repair: move every connection, as
 * the switches' new tables would (with ECMP's mod-n hashing, also
 * connections that did not cross the link, as in real ECMP without
 * resilient hashing); start those that waited for a route. */
static void on_routing_change(void *ctx)
{
    network *n = ctx;
    for (size_t i = 0; i < n->nconns; i++) {
        nconn *k = idtab_get(&n->conns, i);
        if (!k)
            continue;
        if (k->wait_start >= 0)
            launch(n, k, k->wait_start);
        else if (k->started)
            conn_reroute(k->c);
    }
}

/* arg: failure index << 1 | (1: repair, 0: failure). */
static void on_link_event(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    network *n = obj;
    size_t i = arg >> 1;
    topo_link_set_up(n->t, n->fail_link[i], arg & 1, n->fails[i].convergence);
}

static void on_sample(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    network *n = obj;
    n->sq_n++;
    for (size_t i = 0; i < n->nsports; i++) {
        int64_t b = port_backlog(n->sports[i]);
        n->sq_sum[i] += b;
        if (b > n->sq_max[i])
            n->sq_max[i] = b;
        if (n->cfg.sample_out)
            continue;           /* queue_stats.csv only */
        if (n->ts_n == n->ts_cap) {
            n->ts_cap = n->ts_cap ? 2 * n->ts_cap : 1024;
            n->ts = xrealloc(n->ts, n->ts_cap * sizeof *n->ts);
        }
        const port *q = n->sports[i];
        n->ts[n->ts_n++] = (net_qsample){sim_now(s), i, port_backlog(q), q->stat_tx_bytes,
                                         q->stat_drop_pkts, q->stat_mark_pkts,
                                         q->stat_pfc_pauses};
    }
    sim_timer_arm(s, &n->sampler, sim_now(s) + n->cfg.sample_ps);
}

void network_start(network *n)
{
    /* Faults first: a packet arriving exactly at a fault's start is
     * affected (fault.h). */
    if (n->faults)
        fault_start(n->faults);
    if (n->nfails || (n->faults && fault_changes_routing(n->faults)))
        topo_on_routing_change(n->t, on_routing_change, n);
    for (size_t i = 0; i < n->nfails; i++) {
        sim_schedule(n->s, n->fails[i].at, on_link_event, n, (uint64_t)i << 1);
        if (n->fails[i].repair)
            sim_schedule(n->s, n->fails[i].repair, on_link_event, n, (uint64_t)i << 1 | 1);
    }
    if (n->cfg.sample_ps > 0 && n->nsports) {
        sim_timer_init(&n->sampler, on_sample, n, 0);
        sim_timer_arm(n->s, &n->sampler, 0);
    }
    for (size_t i = 0; i < n->nexts; i++)
        n->exts[i].ops->start(n->exts[i].st);
}
