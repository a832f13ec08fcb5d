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

#include <stdlib.h>
#include <string.h>

#include "aisim/log.h"
#include "aisim/units.h"

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

/* ---- configuration ---------------------------------------------------- */

int network_endpoint(network *n, const char *name, const cfg_node *at, const char *path,
                     err *e)
{
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

/* The transport section: `name` picks the transport, whose own keys
 * (with defaults) are bound beside it. */
static int conf_transport(network *n, cfg_node *tn, const char *path, err *e)
{
    char sub[512];
    cfg_path(sub, sizeof sub, path, "transport");
    const transport_ops *const *all = transport_all();
    size_t nt = 0;
    while (all[nt])
        nt++;
    static const char *names[16];
    for (size_t i = 0; i < nt && i < 15; i++)
        names[i] = all[i]->name;
    const cfg_key *tk = NULL;
    const transport_ops *ops = all[0];
    cfg_node *nm = cfg_kind(tn) == CFG_MAP ? cfg_get(tn, "name") : NULL;
    if (nm && cfg_scalar(nm) && transport_find(cfg_scalar(nm)))
        ops = transport_find(cfg_scalar(nm));
    tk = ops->keys;
    size_t nk = 0;
    while (tk[nk].name)
        nk++;
    /* name (an enum over every transport), then the transport's keys; the
     * name's int sits after the transport's bound struct. */
    size_t name_off = (ops->cfg_size + 7) & ~(size_t)7;
    cfg_key *keys = xcalloc(nk + 2, sizeof *keys);
    keys[0] = (cfg_key){.name = "name", .type = CFG_ENUM, .off = name_off, .def = all[0]->name,
                        .choices = names, .help = "the transport protocol"};
    memcpy(keys + 1, tk, nk * sizeof *keys);
    n->tcfg = xcalloc(1, name_off + sizeof(int));
    int r = cfg_bind(tn, sub, keys, n->tcfg, e);
    free(keys);
    if (r)
        return r;
    n->ops = ops;
    return ops->setup(&n->tp, n->tcfg, tn, sub, e);
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
    conn *c = p->flow_id < n->nconns ? n->conns[p->flow_id].c : NULL;
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

/* The `sample_ports` list: ports by name. */
static int conf_sample_ports(network *n, cfg_node *sp, const char *path, err *e)
{
    char sub[512], sub2[512], found[96];
    long len = net_list(sp, path, "sample_ports", "port names", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    n->nsports = (size_t)len;
    n->sports = xcalloc(n->nsports + 1, sizeof *n->sports);
    n->sport_names = xcalloc(n->nsports + 1, sizeof *n->sport_names);
    for (size_t i = 0; i < n->nsports; i++) {
        const char *nm = cfg_scalar(cfg_at(sp, i));
        for (size_t l = 0; nm && l < topo_links(n->t) && !n->sports[i]; l++)
            for (int d = 0; d < 2; d++)
                if (strcmp(topo_link_port(n->t, (int)l, d)->base.name, nm) == 0)
                    n->sports[i] = topo_link_port(n->t, (int)l, d);
        if (!n->sports[i])
            return cfg_err(e, AISIM_EINVAL, cfg_at(sp, i),
                           cfg_path_index(sub2, sizeof sub2, sub, i), "no port named %s; "
                           "ports are named FROM->TO, such as \"sw0->h0\"",
                           cfg_describe(cfg_at(sp, i), found, sizeof found));
        n->sport_names[i] = nm;
    }
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

int network_create(network **np, const network_cfg *c, cfg_node *sec, const char *path,
                   const model_env *env, err *e)
{
    (void)sec;
    network *n = xcalloc(1, sizeof *n);
    *np = n;
    n->cfg = *c;
    n->s = env->sim;
    n->seed = env->seed;
    n->pool = pkt_pool_create();
    n->t = topo_create(env->sim, n->pool, env->seed);
    char sub[512];
    int r = topo_from_cfg(n->t, c->topology, cfg_path(sub, sizeof sub, path, "topology"), e);
    if (r)
        return r;
    topo_set_hash_seeds(n->t, c->hash_seeds == 1, 0x5eed);
    if ((r = conf_transport(n, c->transport, path, e)))
        return r;
    n->ops->framing(n->tp, &n->payload, &n->header);
    if ((r = check_buffers(n, path, e)) || (r = conf_pcap(n, c->pcap, path, e)) || (r = conf_failures(n, c->failures, path, e)) ||
        (r = fault_conf(&n->faults, n->t, n->s, c->faults,
                        cfg_path(sub, sizeof sub, path, "faults"), env->seed, e)) ||
        (r = conf_sample_ports(n, c->sample_ports, path, e)))
        return r;
    return 0;
}

void network_destroy(network *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nconns; i++) {
        nconn *k = &n->conns[i];
        if (k->c) {
            n->ops->stop(k->c);
            free(k->c);
        }
        free(k->q);
    }
    free(n->conns);
    free(n->msgs);
    free(n->done);
    fault_destroy(n->faults);
    topo_destroy(n->t);
    pkt_pool_destroy(n->pool);
    if (n->ops && n->tp)
        n->ops->teardown(n->tp);
    free(n->tcfg);
    for (size_t i = 0; i < n->ncaps; i++)
        pcapw_destroy(n->caps[i].w);
    free(n->caps);
    free(n->fails);
    free(n->fail_link);
    free(n->sports);
    free(n->sport_names);
    free(n->ts);
    free(n);
}

topo *network_topo(network *n) { return n->t; }
pkt_pool *network_pool(network *n) { return n->pool; }
sim *network_sim(network *n) { return n->s; }
const transport_ops *network_transport(const network *n) { return n->ops; }
size_t network_endpoints(const network *n) { return topo_hosts(n->t); }
size_t network_active(const network *n) { return n->active; }
size_t network_messages(const network *n) { return n->nmsgs; }
const net_msg *network_message(const network *n, uint64_t id) { return &n->msgs[id]; }

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
    const route *rt = topo_route_ecmp(n->t, c->src, c->dst, c->path_key);
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

static void msg_complete(network *n, uint64_t id, bool aborted)
{
    net_msg *m = &n->msgs[id];
    if (!aborted)
        m->finish_ps = sim_now(n->s);
    m->aborted = aborted;
    if (m->bytes != UINT64_MAX)
        n->active--;
    if (n->done[id].fn)
        n->done[id].fn(n->done[id].ctx, n, &n->msgs[id]);
    if (n->on_complete)
        n->on_complete(n->on_complete_ctx, n, &n->msgs[id]);
}

/* The stream offset at which connection k's oldest pending message
 * completes, for the transport's cheap check (conn.mark). */
static void set_mark(network *n, nconn *k)
{
    const net_msg *m = k->qn ? &n->msgs[k->q[k->qh]] : NULL;
    k->c->mark = !m || m->bytes == UINT64_MAX ? UINT64_MAX : m->offset + m->bytes;
}

static void conn_delivered(conn *c, uint64_t bytes)
{
    network *n = c->owner;
    nconn *k = &n->conns[c->id];
    while (k->qn) {
        uint64_t id = k->q[k->qh];
        const net_msg *m = &n->msgs[id];
        if (m->bytes == UINT64_MAX || m->offset + m->bytes > bytes)
            break;
        k->qh = (k->qh + 1) % k->qcap;
        k->qn--;
        set_mark(n, k);
        msg_complete(n, id, false);
        k = &n->conns[c->id];   /* a callback may have grown the table */
    }
}

static void conn_aborted(conn *c)
{
    network *n = c->owner;
    nconn *k = &n->conns[c->id];
    while (k->qn) {
        uint64_t id = k->q[k->qh];
        k->qh = (k->qh + 1) % k->qcap;
        k->qn--;
        set_mark(n, k);
        msg_complete(n, id, true);
        k = &n->conns[c->id];   /* a callback may have grown the table */
    }
}

conn *network_connect(network *n, int src, int dst, int prio)
{
    if (n->nconns == n->capconns) {
        n->capconns = n->capconns ? 2 * n->capconns : 64;
        n->conns = xrealloc(n->conns, n->capconns * sizeof *n->conns);
    }
    uint32_t id = (uint32_t)n->nconns;
    nconn *k = &n->conns[n->nconns++];
    memset(k, 0, sizeof *k);
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
    c->spray = n->cfg.routing == NET_ROUTE_SPRAY_RR       ? CONN_SPRAY_RR
               : n->cfg.routing == NET_ROUTE_SPRAY_RANDOM ? CONN_SPRAY_RANDOM
                                                          : CONN_PATH_FIXED;
    if (c->spray == CONN_SPRAY_RANDOM)
        rng_init(&c->spray_rng, n->seed, "net.spray", id);
    c->src_fwd = topo_node_forwarder(n->t, topo_host_node(n->t, src));
    c->dst_node = (uint32_t)topo_host_node(n->t, dst);
    c->sprayer = (sink){conn_sprayer_recv, "conn.sprayer"};
    c->mark = UINT64_MAX;
    c->delivered = conn_delivered;
    c->aborted = conn_aborted;
    c->reroute = conn_reroute;
    c->owner = n;
    sink *at_src, *at_dst;
    n->ops->conn_init(c, &at_src, &at_dst);
    topo_bind_flow(n->t, id, src, at_src, dst, at_dst);
    return c;
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
        net_msg *m = &n->msgs[k->q[(k->qh + i) % k->qcap]];
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
    nconn *k = &n->conns[c->id];
    if (n->nmsgs == n->capmsgs) {
        n->capmsgs = n->capmsgs ? 2 * n->capmsgs : 64;
        n->msgs = xrealloc(n->msgs, n->capmsgs * sizeof *n->msgs);
        n->done = xrealloc(n->done, n->capmsgs * sizeof *n->done);
    }
    uint64_t id = n->nmsgs++;
    net_msg *m = &n->msgs[id];
    bool first = !k->started && k->wait_start < 0 && k->stream_end == 0;
    *m = (net_msg){.id = id, .conn = c->id, .src = c->src, .dst = c->dst, .prio = c->prio,
                   .tag = tag, .bytes = bytes, .offset = k->stream_end,
                   .start_ps = first ? start_ps : sim_now(n->s), .finish_ps = -1,
                   .ideal_ps = -1, .next_on_conn = UINT64_MAX};
    n->done[id] = (net_done){fn, ctx};
    if (k->nmsgs++)
        n->msgs[k->last_msg].next_on_conn = id;
    k->last_msg = id;
    n->ops->stats(c, &m->at_start);
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
    return network_send_on(n, c, bytes, tag, start_ps, fn, ctx);
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
        nconn *k = &n->conns[i];
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
    for (size_t i = 0; i < n->nsports; i++) {
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
}
