/*
 * net.c - the packet-level network model: a topology, TCP or DCTCP flows,
 * and workloads (explicit flows, rounds of incast), with per-flow, per-link
 * and per-port outputs.
 *
 * Scenario section `net:`
 *   topology   the network (docs/network.md: dumbbell, star, leaf_spine,
 *              fat_tree, custom)
 *   transport  TCP settings: cc (newreno | dctcp), mss, header, init_cwnd,
 *              rcv_wnd, min_rto, max_rto, init_rto, max_retries, delayed_ack,
 *              delack_timeout, dctcp_g
 *   hash_seeds ECMP hash seeds per switch: random (default) or equal
 *   routing    ecmp (a path per flow by hash), spray_rr or spray_random (a
 *              path per packet over the equal-cost paths)
 *   failures   a list of {a, b, at, repair, convergence}: the link between
 *              nodes a and b fails at `at` (and comes back at `repair`);
 *              routing avoids it after `convergence`, when every flow
 *              takes the route routing then gives it (packets already sent
 *              keep theirs)
 *   flows      a list of {src, dst, size, start, prio}; without size a flow
 *              is long-lived
 *   incast     {receiver, senders, block, rounds, start, persistent}: rounds
 *              in which `senders` hosts each send `block` bytes to
 *              `receiver`; the next round starts when every block of the
 *              previous one has arrived (the synchronized-read workload of
 *              the incast papers), on one persistent connection per sender
 *              unless persistent is false
 *   background {load, sizes, start, duration, max_flows}: Poisson flow
 *              arrivals between uniformly random pairs of distinct hosts at
 *              `load` times the hosts' total link capacity, sizes from a
 *              distribution (data/flow_sizes/: web search, data mining), as
 *              the traffic generators of the transport papers do
 *   pcap, pcap_max_packets   HOST.pcap for each listed host: every packet it
 *              sends or receives, as Ethernet/IPv4/TCP headers (pcapw.h)
 *   sample_interval, sample_ports   queues.csv: occupancy of the named
 *              ports ("sw0->h0") every interval
 *
 * The run ends at the scenario's stop time or when every finite flow has
 * completed.  Flows are routed by ECMP on a hash of their id.  There are no
 * handshakes, but each flow's RTT estimator starts from the round trip a
 * handshake would have measured on the empty network.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/dist.h"
#include "aisim/log.h"
#include "aisim/model.h"
#include "aisim/pcapw.h"
#include "aisim/port.h"
#include "aisim/stats.h"
#include "aisim/tcp.h"
#include "aisim/topo.h"
#include "aisim/units.h"

static const char *const cc_names[] = {"newreno", "dctcp", NULL};
static const char *const seed_modes[] = {"random", "equal", NULL};
static const char *const routing_modes[] = {"ecmp", "spray_rr", "spray_random", NULL};
enum { ROUTE_ECMP, ROUTE_SPRAY_RR, ROUTE_SPRAY_RANDOM };

typedef struct failure_cfg {
    const char *a, *b;
    int64_t at, repair, convergence;
} failure_cfg;

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

typedef struct transport_cfg {
    int cc;
    int64_t mss, hdr, init_cwnd, rcv_wnd, max_retries;
    int64_t min_rto, max_rto, init_rto, delack;
    bool delayed_ack;
    double g;
} transport_cfg;

static const cfg_key transport_keys[] = {
    {.name = "cc", .type = CFG_ENUM, .off = offsetof(transport_cfg, cc), .def = "newreno",
     .choices = cc_names, .help = "congestion control"},
    {.name = "mss", .type = CFG_SIZE, .off = offsetof(transport_cfg, mss), .def = "1460B",
     .flags = CFG_MIN | CFG_MAX, .min = 64, .max = 65000, .help = "payload per segment"},
    {.name = "header", .type = CFG_SIZE, .off = offsetof(transport_cfg, hdr), .def = "40B",
     .flags = CFG_MIN | CFG_MAX, .min = 20, .max = 1000, .help = "header bytes per packet"},
    {.name = "init_cwnd", .type = CFG_INT, .off = offsetof(transport_cfg, init_cwnd),
     .def = "10", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000,
     .help = "initial window, segments"},
    {.name = "rcv_wnd", .type = CFG_SIZE, .off = offsetof(transport_cfg, rcv_wnd),
     .def = "64MiB", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 4294967295.0,
     .help = "receiver's advertised window"},
    {.name = "min_rto", .type = CFG_TIME, .off = offsetof(transport_cfg, min_rto),
     .def = "200ms", .flags = CFG_MIN_EXCL, .min = 0, .help = "minimum retransmission timeout"},
    {.name = "max_rto", .type = CFG_TIME, .off = offsetof(transport_cfg, max_rto), .def = "60s",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "cap of the backed-off timeout"},
    {.name = "init_rto", .type = CFG_TIME, .off = offsetof(transport_cfg, init_rto),
     .def = "1s", .flags = CFG_MIN_EXCL, .min = 0, .help = "timeout before the first RTT sample"},
    {.name = "max_retries", .type = CFG_INT, .off = offsetof(transport_cfg, max_retries),
     .def = "15", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000,
     .help = "consecutive timeouts before the sender gives up (Linux's tcp_retries2)"},
    {.name = "delayed_ack", .type = CFG_BOOL, .off = offsetof(transport_cfg, delayed_ack),
     .def = "false", .help = "ACK every second segment"},
    {.name = "delack_timeout", .type = CFG_TIME, .off = offsetof(transport_cfg, delack),
     .def = "40ms", .flags = CFG_MIN_EXCL, .min = 0, .help = "delayed-ACK timer"},
    {.name = "dctcp_g", .type = CFG_FLOAT, .off = offsetof(transport_cfg, g), .def = "0.0625",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "DCTCP EWMA gain"},
    {0},
};

typedef struct flow_cfg {
    const char *src, *dst;
    int64_t size, start, prio;
} flow_cfg;

static const cfg_key flow_keys[] = {
    {.name = "src", .type = CFG_STR, .off = offsetof(flow_cfg, src), .help = "sending host"},
    {.name = "dst", .type = CFG_STR, .off = offsetof(flow_cfg, dst), .help = "receiving host"},
    {.name = "size", .type = CFG_SIZE, .off = offsetof(flow_cfg, size), .flags = CFG_OPTIONAL
     | CFG_MIN_EXCL, .min = 0, .help = "bytes to deliver (absent: long-lived)"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(flow_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "start time"},
    {.name = "prio", .type = CFG_INT, .off = offsetof(flow_cfg, prio), .def = "0",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = PORT_MAX_PRIO - 1, .help = "priority class"},
    {0},
};

typedef struct incast_cfg {
    const char *receiver;
    int64_t senders, block, rounds, start;
    bool persistent;
} incast_cfg;

static const cfg_key incast_keys[] = {
    {.name = "receiver", .type = CFG_STR, .off = offsetof(incast_cfg, receiver),
     .help = "receiving host"},
    {.name = "senders", .type = CFG_INT, .off = offsetof(incast_cfg, senders),
     .flags = CFG_MIN, .min = 1, .help = "senders: the first N other hosts"},
    {.name = "block", .type = CFG_SIZE, .off = offsetof(incast_cfg, block), .def = "256KiB",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "bytes each sender sends per round"},
    {.name = "rounds", .type = CFG_INT, .off = offsetof(incast_cfg, rounds), .def = "10",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000000, .help = "rounds"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(incast_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "start of the first round"},
    {.name = "persistent", .type = CFG_BOOL, .off = offsetof(incast_cfg, persistent),
     .def = "true", .help = "one connection per sender for every round (its window carries "
     "over), as in the incast experiments; false: a new connection per block"},
    {0},
};

typedef struct background_cfg {
    double load;
    cfg_node *sizes;
    int64_t start, duration, max_flows;
} background_cfg;

static const cfg_key background_keys[] = {
    {.name = "load", .type = CFG_FLOAT, .off = offsetof(background_cfg, load),
     .flags = CFG_MIN_EXCL | CFG_MAX_EXCL, .min = 0, .max = 1,
     .help = "offered load as a fraction of the hosts' link capacity"},
    {.name = "sizes", .type = CFG_NODE, .off = offsetof(background_cfg, sizes),
     .help = "a flow-size distribution such as {dist: empirical, file: "
     "../../data/flow_sizes/websearch.cdf, unit: 1B}"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(background_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "first possible arrival"},
    {.name = "duration", .type = CFG_TIME, .off = offsetof(background_cfg, duration),
     .flags = CFG_MIN_EXCL, .min = 0, .help = "flows arrive during [start, start + duration)"},
    {.name = "max_flows", .type = CFG_INT, .off = offsetof(background_cfg, max_flows),
     .def = "1000000", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e8,
     .help = "stop generating after this many flows"},
    {0},
};

typedef struct net_cfg {
    cfg_node *topology, *transport, *flows, *incast, *sample_ports, *background, *failures;
    cfg_node *pcap;
    int64_t pcap_max;
    int hash_seeds, routing;
    int64_t sample_ps;
} net_cfg;

static const cfg_key net_keys[] = {
    {.name = "topology", .type = CFG_NODE, .off = offsetof(net_cfg, topology),
     .help = "a topology such as {kind: star, hosts: 9, link: {rate: 10Gbps}}"},
    {.name = "transport", .type = CFG_NODE, .off = offsetof(net_cfg, transport), .def = "{}",
     .help = "TCP settings"},
    {.name = "hash_seeds", .type = CFG_ENUM, .off = offsetof(net_cfg, hash_seeds),
     .def = "random", .choices = seed_modes, .help = "ECMP hash seeds per switch"},
    {.name = "routing", .type = CFG_ENUM, .off = offsetof(net_cfg, routing), .def = "ecmp",
     .choices = routing_modes, .help = "ECMP by flow hash, or per-packet spraying over the "
     "equal-cost paths (round robin or random)"},
    {.name = "failures", .type = CFG_NODE, .off = offsetof(net_cfg, failures),
     .flags = CFG_OPTIONAL, .help = "link failures: a list of {a, b, at, repair, convergence}"},
    {.name = "flows", .type = CFG_NODE, .off = offsetof(net_cfg, flows), .flags = CFG_OPTIONAL,
     .help = "a list of flows {src, dst, size, start}"},
    {.name = "incast", .type = CFG_NODE, .off = offsetof(net_cfg, incast), .flags = CFG_OPTIONAL,
     .help = "rounds of incast {receiver, senders, block, rounds}"},
    {.name = "background", .type = CFG_NODE, .off = offsetof(net_cfg, background),
     .flags = CFG_OPTIONAL, .help = "Poisson flows between random host pairs {load, sizes, "
     "duration}"},
    {.name = "pcap", .type = CFG_NODE, .off = offsetof(net_cfg, pcap), .flags = CFG_OPTIONAL,
     .help = "hosts to capture: a list of names; each gets NAME.pcap"},
    {.name = "pcap_max_packets", .type = CFG_INT, .off = offsetof(net_cfg, pcap_max),
     .def = "1000000", .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1e9,
     .help = "packets kept per capture; more are counted, not captured"},
    {.name = "sample_interval", .type = CFG_TIME, .off = offsetof(net_cfg, sample_ps),
     .def = "0s", .flags = CFG_MIN, .min = 0, .help = "queues.csv period (0s: off)"},
    {.name = "sample_ports", .type = CFG_NODE, .off = offsetof(net_cfg, sample_ports),
     .flags = CFG_OPTIONAL, .help = "a list of port names such as \"sw0->h0\""},
    {0},
};

typedef struct nflow {
    tcp_flow tcp;
    int src, dst;               /* host indices */
    int64_t ideal_ps;           /* FCT on an empty network */
    int round;                  /* incast round, or -1 */
    int64_t wait_start;         /* >= 0: due to start then, but its hosts were
                                   cut off: starts when routing joins them */
} nflow;

struct net_model;

typedef struct capture {
    struct net_model *m;
    pcapw *w;
    int host;
} capture;

/* One row of queues.csv: a sampled port's state at time t_ps (counters
 * cumulative since the start). */
typedef struct qsample {
    int64_t t_ps;
    size_t port;                /* index in sports */
    int64_t bytes;              /* backlog */
    uint64_t tx_bytes, drops, marks, pauses;
} qsample;

typedef struct net_model {
    net_cfg cfg;
    transport_cfg tc;
    tcp_cfg tcp;
    incast_cfg inc;
    sim *s;
    pkt_pool *pool;
    topo *t;
    flow_cfg *specs;            /* explicit flows */
    size_t nspecs;
    int *spec_src, *spec_dst;
    nflow **flows;              /* every flow started, by id */
    size_t nflows, capflows;
    size_t finite_left;         /* finite flows not yet complete */
    /* incast */
    int inc_rx, *inc_tx;
    nflow **inc_flows;          /* persistent incast connections */
    int round, round_left;
    int64_t round_start;
    double *round_secs;         /* duration of each completed round */
    /* captures */
    struct capture *caps;
    size_t ncaps;
    /* link failures */
    failure_cfg *fails;
    int *fail_link;
    size_t nfails;
    rng r_spray;                /* random spraying */
    /* Poisson background */
    background_cfg bg;
    dist bg_sizes;
    rng r_arr, r_size, r_pair;
    double bg_gap_ps;           /* mean gap between arrivals, all hosts together */
    int64_t bg_made;
    /* sampling */
    port **sports;
    const char **sport_names;
    size_t nsports;
    sim_timer sampler;
    qsample *ts;                /* every sample of every sampled port */
    size_t ts_n, ts_cap;
} net_model;

static int host_by_name(net_model *m, const char *name, const cfg_node *n, const char *path,
                        err *e)
{
    int node = topo_find_node(m->t, name);
    if (node < 0)
        return cfg_err(e, AISIM_EINVAL, n, path, "unknown host \"%s\"", name);
    int h = topo_node_host(m->t, node);
    if (h < 0)
        return cfg_err(e, AISIM_EINVAL, n, path, "\"%s\" is a switch; expected a host", name);
    return h;
}

/* The hosts at the two ends of a flow, for the pcap headers. */
static void flow_ends(void *ctx, uint32_t id, int *src, int *dst)
{
    net_model *m = ctx;
    *src = m->flows[id]->src;
    *dst = m->flows[id]->dst;
}

/* A captured host's tap: every packet it sends or receives. */
static void on_tap(void *ctx, const pkt *p, int rx)
{
    (void)rx;
    capture *c = ctx;
    pcapw_add(c->w, sim_now(c->m->s), p);
}

/* An optional list section `key` of `net`: its length (0 if absent), its
 * key path in sub; a non-list is an error (negative). */
static long conf_list(const cfg_node *n, const char *path, const char *key, const char *what,
                      char *sub, size_t nsub, err *e)
{
    if (!n)
        return 0;
    cfg_path(sub, nsub, path, key);
    return cfg_expect_list(n, sub, what, e);
}

/* The `flows` list: each flow's hosts by name, two different ends; a flow
 * without size only in a scenario with a stop (it never ends). */
static int conf_flows(net_model *m, const char *path, int64_t stop_ps, err *e)
{
    char sub[512], sub2[512];
    int r;
    cfg_node *fl = m->cfg.flows;
    long len = conf_list(fl, path, "flows", "flows", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    m->nspecs = (size_t)len;
    m->specs = xcalloc(m->nspecs + 1, sizeof *m->specs);
    m->spec_src = xcalloc(m->nspecs + 1, sizeof *m->spec_src);
    m->spec_dst = xcalloc(m->nspecs + 1, sizeof *m->spec_dst);
    for (size_t i = 0; i < m->nspecs; i++) {
        cfg_node *f = cfg_at(fl, i);
        cfg_path_index(sub2, sizeof sub2, sub, i);
        if ((r = cfg_bind(f, sub2, flow_keys, &m->specs[i], e)))
            return r;
        char kp[600];
        if ((r = host_by_name(m, m->specs[i].src, cfg_get(f, "src"),
                              cfg_path(kp, sizeof kp, sub2, "src"), e)) < 0)
            return r;
        m->spec_src[i] = r;
        if ((r = host_by_name(m, m->specs[i].dst, cfg_get(f, "dst"),
                              cfg_path(kp, sizeof kp, sub2, "dst"), e)) < 0)
            return r;
        m->spec_dst[i] = r;
        if (m->spec_src[i] == m->spec_dst[i])
            return cfg_err(e, AISIM_EINVAL, cfg_get(f, "dst"), kp, "a flow needs two "
                           "different hosts, found \"%s\" twice", m->specs[i].dst);
        if (m->specs[i].size == 0 && stop_ps == SIM_TIME_MAX)
            return cfg_err(e, AISIM_EINVAL, f, sub2, "expected a size, or a top-level stop (a "
                           "flow without size is long-lived and the run would never end), "
                           "found neither");
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

/* A port whose buffer cannot hold one full packet (mss + header) drops
 * every full packet: an error.  Fewer than two is suspicious: a warning. */
static int check_buffers(net_model *m, const char *path, err *e)
{
    int64_t full = m->tc.mss + m->tc.hdr, least = INT64_MAX;
    int at = -1;
    for (size_t l = 0; l < topo_links(m->t); l++)
        for (int dir = 0; dir < 2; dir++) {
            int64_t b = topo_link_port(m->t, (int)l, dir)->cfg.buffer_bytes;
            if (b < least) {
                least = b;
                at = (int)l;
            }
        }
    if (at < 0 || least >= 2 * full)
        return 0;
    int a, b;
    topo_link_ends(m->t, at, &a, &b);
    char tp[512], kp[600];
    cfg_path(tp, sizeof tp, path, "topology");
    if (least >= full) {
        LOG(LOG_WARN, "net", "%s: the buffer of link %s-%s holds one packet (%lld bytes, a "
            "packet is mss + header = %lld bytes): most bursts will lose packets", tp,
            topo_node_name(m->t, a), topo_node_name(m->t, b), (long long)least, (long long)full);
        return 0;
    }
    const cfg_node *n = small_buffer_key(m->cfg.topology, full, kp, sizeof kp, tp);
    return cfg_err(e, AISIM_ERANGE, n ? n : m->cfg.topology, n ? kp : tp,
                   "expected a buffer of at least one packet (mss + header = %lld bytes; a "
                   "smaller one drops every packet) on every port, found %lld bytes on link %s-%s",
                   (long long)full, (long long)least, topo_node_name(m->t, a),
                   topo_node_name(m->t, b));
}

/* The `incast` map: the receiver, and as senders its first `senders` other hosts. */
static int conf_incast(net_model *m, const char *path, err *e)
{
    if (!m->cfg.incast)
        return 0;
    char sub[512], sub2[512];
    int r;
    cfg_path(sub, sizeof sub, path, "incast");
    if ((r = cfg_bind(m->cfg.incast, sub, incast_keys, &m->inc, e)))
        return r;
    if ((r = host_by_name(m, m->inc.receiver, cfg_get(m->cfg.incast, "receiver"),
                          cfg_path(sub2, sizeof sub2, sub, "receiver"), e)) < 0)
        return r;
    m->inc_rx = r;
    if ((size_t)m->inc.senders > topo_hosts(m->t) - 1)
        return cfg_err(e, AISIM_ERANGE, cfg_get(m->cfg.incast, "senders"),
                       cfg_path(sub2, sizeof sub2, sub, "senders"), "the topology has %zu "
                       "other hosts, found %lld senders", topo_hosts(m->t) - 1,
                       (long long)m->inc.senders);
    m->inc_tx = xcalloc((size_t)m->inc.senders, sizeof *m->inc_tx);
    for (int h = 0, k = 0; k < m->inc.senders; h++)
        if (h != m->inc_rx)
            m->inc_tx[k++] = h;
    m->round_secs = xcalloc((size_t)m->inc.rounds, sizeof *m->round_secs);
    m->inc_flows = xcalloc((size_t)m->inc.senders, sizeof *m->inc_flows);
    return 0;
}

/* The `pcap` list: a capture and a tap on each listed host. */
static int conf_pcap(net_model *m, const char *path, err *e)
{
    char sub[512], sub2[512];
    int r;
    cfg_node *pl = m->cfg.pcap;
    long len = conf_list(pl, path, "pcap", "host names", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    m->ncaps = (size_t)len;
    m->caps = xcalloc(m->ncaps + 1, sizeof *m->caps);
    for (size_t i = 0; i < m->ncaps; i++) {
        const char *nm = cfg_scalar(cfg_at(pl, i));
        if ((r = host_by_name(m, nm ? nm : "", cfg_at(pl, i),
                              cfg_path_index(sub2, sizeof sub2, sub, i), e)) < 0)
            return r;
        for (size_t j = 0; j < i; j++)
            if (m->caps[j].host == r)
                return cfg_err(e, AISIM_EINVAL, cfg_at(pl, i), sub2, "host %s is listed "
                               "twice", nm);
        m->caps[i] = (capture){m, pcapw_create((uint64_t)m->cfg.pcap_max, flow_ends, m), r};
        topo_set_host_tap(m->t, r, on_tap, &m->caps[i]);
    }
    return 0;
}

/* The `failures` list: the link between two named nodes; repair after failure. */
static int conf_failures(net_model *m, const char *path, err *e)
{
    char sub[512], sub2[512];
    int r;
    cfg_node *fl = m->cfg.failures;
    long len = conf_list(fl, path, "failures", "failures", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    m->nfails = (size_t)len;
    m->fails = xcalloc(m->nfails + 1, sizeof *m->fails);
    m->fail_link = xcalloc(m->nfails + 1, sizeof *m->fail_link);
    for (size_t i = 0; i < m->nfails; i++) {
        failure_cfg *fc = &m->fails[i];
        cfg_node *fn = cfg_at(fl, i);
        cfg_path_index(sub2, sizeof sub2, sub, i);
        if ((r = cfg_bind(fn, sub2, failure_keys, fc, e)))
            return r;
        int a = topo_find_node(m->t, fc->a), b = topo_find_node(m->t, fc->b);
        char kp[600];
        if (a < 0 || b < 0)
            return cfg_err(e, AISIM_EINVAL, cfg_get(fn, a < 0 ? "a" : "b"),
                           cfg_path(kp, sizeof kp, sub2, a < 0 ? "a" : "b"),
                           "unknown node \"%s\"", a < 0 ? fc->a : fc->b);
        m->fail_link[i] = topo_find_link(m->t, a, b);
        if (m->fail_link[i] < 0)
            return cfg_err(e, AISIM_EINVAL, fn, sub2, "no link between %s and %s", fc->a,
                           fc->b);
        if (fc->repair && fc->repair <= fc->at)
            return cfg_err(e, AISIM_ERANGE, cfg_get(fn, "repair"),
                           cfg_path(kp, sizeof kp, sub2, "repair"),
                           "expected a repair time after the failure");
    }
    return 0;
}

/* The `background` map: the Poisson arrival rate from the load and the mean size. */
static int conf_background(net_model *m, const char *path, const model_env *env, err *e)
{
    if (!m->cfg.background)
        return 0;
    char sub[512], sub2[512];
    int r;
    cfg_path(sub, sizeof sub, path, "background");
    if ((r = cfg_bind(m->cfg.background, sub, background_keys, &m->bg, e)) ||
        (r = dist_from_cfg(m->bg.sizes, cfg_path(sub2, sizeof sub2, sub, "sizes"),
                           DIST_Q_SIZE, env->base_dir, &m->bg_sizes, e)))
        return r;
    /* Aggregate Poisson arrivals: load x (sum of the hosts' link rates)
     * / mean flow size. */
    double cap_bps = 0;
    for (size_t l = 0; l < topo_links(m->t); l++) {
        int a, b;
        topo_link_ends(m->t, (int)l, &a, &b);
        if (topo_node_host(m->t, a) >= 0)
            cap_bps += (double)topo_link_port(m->t, (int)l, 0)->cfg.rate_bps;
        else if (topo_node_host(m->t, b) >= 0)
            cap_bps += (double)topo_link_port(m->t, (int)l, 1)->cfg.rate_bps;
    }
    double mean_bits = 8 * dist_mean(&m->bg_sizes);
    if (!(mean_bits > 0))
        return cfg_err(e, AISIM_ERANGE, m->bg.sizes, sub2, "expected flow sizes with a "
                       "mean > 0");
    m->bg_gap_ps = 1e12 * mean_bits / (m->bg.load * cap_bps);
    rng_init(&m->r_arr, env->seed, "net.background.arrivals", 0);
    rng_init(&m->r_size, env->seed, "net.background.sizes", 0);
    rng_init(&m->r_pair, env->seed, "net.background.pairs", 0);
    return 0;
}

/* The `sample_ports` list: ports by name. */
static int conf_sample_ports(net_model *m, const char *path, err *e)
{
    char sub[512], sub2[512], found[96];
    cfg_node *sp = m->cfg.sample_ports;
    long len = conf_list(sp, path, "sample_ports", "port names", sub, sizeof sub, e);
    if (len <= 0)
        return (int)len;
    m->nsports = (size_t)len;
    m->sports = xcalloc(m->nsports + 1, sizeof *m->sports);
    m->sport_names = xcalloc(m->nsports + 1, sizeof *m->sport_names);
    for (size_t i = 0; i < m->nsports; i++) {
        const char *nm = cfg_scalar(cfg_at(sp, i));
        for (size_t l = 0; nm && l < topo_links(m->t) && !m->sports[i]; l++)
            for (int d = 0; d < 2; d++)
                if (strcmp(topo_link_port(m->t, (int)l, d)->base.name, nm) == 0)
                    m->sports[i] = topo_link_port(m->t, (int)l, d);
        if (!m->sports[i])
            return cfg_err(e, AISIM_EINVAL, cfg_at(sp, i),
                           cfg_path_index(sub2, sizeof sub2, sub, i), "no port named %s; "
                           "ports are named FROM->TO, such as \"sw0->h0\"",
                           cfg_describe(cfg_at(sp, i), found, sizeof found));
        m->sport_names[i] = nm;
    }
    return 0;
}

static int net_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
{
    net_model *m = st;
    char sub[512];
    int r = cfg_bind(sec, path, net_keys, &m->cfg, e);
    if (r)
        return r;
    m->s = env->sim;
    m->pool = pkt_pool_create();
    m->t = topo_create(env->sim, m->pool, env->seed);
    if ((r = topo_from_cfg(m->t, m->cfg.topology, cfg_path(sub, sizeof sub, path, "topology"),
                           e)))
        return r;
    topo_set_hash_seeds(m->t, m->cfg.hash_seeds == 1, 0x5eed);
    if ((r = cfg_bind(m->cfg.transport, cfg_path(sub, sizeof sub, path, "transport"),
                      transport_keys, &m->tc, e)))
        return r;
    tcp_cfg_default(&m->tcp);
    m->tcp.cc = m->tc.cc == 1 ? TCP_DCTCP : TCP_NEWRENO;
    m->tcp.mss_bytes = (uint32_t)m->tc.mss;
    m->tcp.hdr_bytes = (uint32_t)m->tc.hdr;
    m->tcp.init_cwnd_pkts = (uint32_t)m->tc.init_cwnd;
    m->tcp.rcv_wnd_bytes = (uint32_t)m->tc.rcv_wnd;
    m->tcp.min_rto_ps = m->tc.min_rto;
    m->tcp.max_rto_ps = m->tc.max_rto;
    m->tcp.init_rto_ps = m->tc.init_rto;
    m->tcp.max_retries = (uint32_t)m->tc.max_retries;
    m->tcp.delayed_ack = m->tc.delayed_ack;
    m->tcp.delack_ps = m->tc.delack;
    m->tcp.dctcp_g = m->tc.g;

    m->inc_rx = -1;
    rng_init(&m->r_spray, env->seed, "net.spray", 0);
    if ((r = check_buffers(m, path, e)) || (r = conf_flows(m, path, env->stop_ps, e)) ||
        (r = conf_incast(m, path, e)) ||
        (r = conf_pcap(m, path, e)) || (r = conf_failures(m, path, e)) ||
        (r = conf_background(m, path, env, e)))
        return r;
    if (!m->nspecs && !m->cfg.incast && !m->cfg.background)
        return cfg_err(e, AISIM_EINVAL, sec, path, "no traffic: give flows, incast or "
                       "background");
    if ((r = conf_sample_ports(m, path, e)))
        return r;
    return 0;
}

static void flow_done(void *ctx, tcp_flow *tf);

static uint64_t flow_key(uint32_t id)
{
    return (uint64_t)id * 0x9e3779b97f4a7c15u + 1;
}

/* Take the route (or paths) routing offers now, which avoid links that
 * failed more than the convergence delay ago: when routing changes, and
 * at a timeout. */
static void reroute(void *ctx, tcp_flow *tf)
{
    net_model *m = ctx;
    nflow *f = container_of(tf, nflow, tcp);
    const route *rt = topo_route_ecmp(m->t, f->src, f->dst, flow_key(tf->id));
    if (rt)
        tcp_flow_set_routes(tf, rt, rt->reverse);
    if (m->cfg.routing != ROUTE_ECMP) {
        size_t n;
        const route *const *paths = topo_paths(m->t, f->src, f->dst, &n);
        if (n)
            tcp_flow_set_spray(tf, paths, n,
                               m->cfg.routing == ROUTE_SPRAY_RANDOM ? &m->r_spray : NULL);
    }
}

/* Starts flow f at `start` (or at once if that has passed) on the route
 * routing gives it now.  Hosts that a failure has cut off have none: the
 * flow then waits for routing to join them again (on_routing_change); its
 * start time stays `start`, so its FCT includes the wait. */
static void launch(net_model *m, nflow *f, int64_t start)
{
    reroute(m, &f->tcp);
    const route *rt = f->tcp.fwd;
    if (!rt) {
        f->wait_start = f->tcp.start_ps = start;
        return;
    }
    f->wait_start = -1;
    uint64_t size = f->tcp.size_bytes;
    f->ideal_ps = size == UINT64_MAX ? -1 : topo_route_ideal_ps(rt, size, m->tcp.mss_bytes,
                                                                   m->tcp.hdr_bytes);
    /* The round trip a handshake would have measured: a header-only packet
     * there and back on the empty network. */
    tcp_flow_prime_rtt(&f->tcp, topo_route_ideal_ps(rt, 0, m->tcp.mss_bytes, m->tcp.hdr_bytes) +
                                    topo_route_ideal_ps(rt->reverse, 0, m->tcp.mss_bytes,
                                                        m->tcp.hdr_bytes));
    tcp_flow_start(&f->tcp, start > sim_now(m->s) ? start : sim_now(m->s));
    f->tcp.start_ps = start;        /* its FCT counts any wait for a route */
}

static nflow *new_flow(net_model *m, int src, int dst, uint64_t size, int64_t start, int prio,
                       int round)
{
    if (m->nflows == m->capflows) {
        m->capflows = m->capflows ? 2 * m->capflows : 64;
        m->flows = xrealloc(m->flows, m->capflows * sizeof *m->flows);
    }
    uint32_t id = (uint32_t)m->nflows;
    nflow *f = xcalloc(1, sizeof *f);
    m->flows[m->nflows++] = f;
    f->src = src;
    f->dst = dst;
    f->round = round;
    tcp_flow_init(&f->tcp, m->s, m->pool, &m->tcp, id, size);
    f->tcp.prio = (uint8_t)prio;
    f->tcp.on_done = flow_done;
    f->tcp.ctx = m;
    f->tcp.reroute = reroute;
    f->ideal_ps = -1;
    topo_bind_flow(m->t, id, src, &f->tcp.tx, dst, &f->tcp.rx);
    if (size != UINT64_MAX)
        m->finite_left++;
    launch(m, f, start);
    return f;
}

static void start_round(net_model *m, int64_t at)
{
    m->round_start = at;
    m->round_left = (int)m->inc.senders;
    for (int k = 0; k < m->inc.senders; k++) {
        if (!m->inc.persistent || m->round == 0) {
            nflow *f = new_flow(m, m->inc_tx[k], m->inc_rx, (uint64_t)m->inc.block, at, 0,
                                m->round);
            if (m->inc.persistent)
                m->inc_flows[k] = f;
        } else {
            nflow *f = m->inc_flows[k];
            f->round = m->round;
            m->finite_left++;
            tcp_flow_add_bytes(&f->tcp, (uint64_t)m->inc.block);
        }
    }
}

static void flow_done(void *ctx, tcp_flow *tf)
{
    net_model *m = ctx;
    nflow *f = container_of(tf, nflow, tcp);
    m->finite_left--;
    if (f->round >= 0 && --m->round_left == 0) {
        int64_t now = sim_now(m->s);
        m->round_secs[m->round] = ps_to_s(now - m->round_start);
        if (++m->round < m->inc.rounds)
            start_round(m, now);
    }
    bool bg_over = !m->cfg.background || sim_now(m->s) >= m->bg.start + m->bg.duration ||
                   m->bg_made >= m->bg.max_flows;
    if (m->finite_left == 0 && (!m->cfg.incast || m->round == m->inc.rounds) && bg_over)
        sim_stop(m->s);
}

/* The next background flow: a random ordered pair of distinct hosts, a
 * size from the distribution (at least one byte). */
static void on_background(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    net_model *m = obj;
    int64_t now = sim_now(s);
    if (now >= m->bg.start + m->bg.duration || m->bg_made >= m->bg.max_flows)
        return;
    int nh = (int)topo_hosts(m->t);
    int src = (int)rng_below(&m->r_pair, (uint64_t)nh);
    int dst = (int)rng_below(&m->r_pair, (uint64_t)nh - 1);
    if (dst >= src)
        dst++;
    double sz = dist_sample(&m->bg_sizes, &m->r_size);
    new_flow(m, src, dst, sz < 1 ? 1 : (uint64_t)units_round_sat(sz), now, 0, -1);
    m->bg_made++;
    sim_schedule_in(s, units_round_sat(rng_exponential(&m->r_arr, m->bg_gap_ps)), on_background,
                    m, 0);
}

static void on_sample(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    net_model *m = obj;
    for (size_t i = 0; i < m->nsports; i++) {
        if (m->ts_n == m->ts_cap) {
            m->ts_cap = m->ts_cap ? 2 * m->ts_cap : 1024;
            m->ts = xrealloc(m->ts, m->ts_cap * sizeof *m->ts);
        }
        const port *q = m->sports[i];
        m->ts[m->ts_n++] = (qsample){sim_now(s), i, port_backlog(q), q->stat_tx_bytes,
                                     q->stat_drop_pkts, q->stat_mark_pkts, q->stat_pfc_pauses};
    }
    sim_timer_arm(s, &m->sampler, sim_now(s) + m->cfg.sample_ps);
}

/* arg: failure index << 1 | (1: repair, 0: failure). */
static void on_link_event(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    net_model *m = obj;
    size_t i = arg >> 1;
    topo_link_set_up(m->t, m->fail_link[i], arg & 1, m->fails[i].convergence);
}

/* Routing converged after a failure or repair: move every flow, as the
 * switches' new tables would (with ECMP's mod-n hashing, also flows that
 * did not cross the link, as in real ECMP without resilient hashing). */
static void on_routing_change(void *ctx)
{
    net_model *m = ctx;
    for (size_t i = 0; i < m->nflows; i++) {
        nflow *f = m->flows[i];
        if (f->wait_start >= 0)
            launch(m, f, f->wait_start);
        else
            reroute(m, &f->tcp);
    }
}

static int net_start(void *st, sim *s, err *e)
{
    (void)e;
    net_model *m = st;
    if (m->nfails)
        topo_on_routing_change(m->t, on_routing_change, m);
    for (size_t i = 0; i < m->nspecs; i++)
        new_flow(m, m->spec_src[i], m->spec_dst[i],
                 m->specs[i].size ? (uint64_t)m->specs[i].size : UINT64_MAX,
                 m->specs[i].start, (int)m->specs[i].prio, -1);
    if (m->cfg.incast)
        start_round(m, m->inc.start);
    for (size_t i = 0; i < m->nfails; i++) {
        sim_schedule(s, m->fails[i].at, on_link_event, m, (uint64_t)i << 1);
        if (m->fails[i].repair)
            sim_schedule(s, m->fails[i].repair, on_link_event, m, (uint64_t)i << 1 | 1);
    }
    if (m->cfg.background)
        sim_schedule(s, m->bg.start + (int64_t)llround(rng_exponential(&m->r_arr, m->bg_gap_ps)),
                     on_background, m, 0);
    if (m->cfg.sample_ps > 0 && m->nsports) {
        sim_timer_init(&m->sampler, on_sample, m, 0);
        sim_timer_arm(s, &m->sampler, 0);
    }
    return 0;
}

static double net_progress(const void *st, const sim *s)
{
    (void)s;
    const net_model *m = st;
    if (m->cfg.incast && !m->nspecs)
        return (double)m->round / (double)m->inc.rounds;
    return -1;
}

static void csv_num(FILE *f, double v, const char *sep)
{
    char b[40];
    out_fmt_double(b, sizeof b, v);
    fprintf(f, "%s%s", isfinite(v) ? b : "", sep);
}

/* fct_cdf.csv: per size bucket, the empirical distributions of FCT and of
 * slowdown, as their quantile functions: row i of a bucket of n flows has
 * cdf (i+1)/n, the i-th smallest FCT and the i-th smallest slowdown (the
 * two columns are sorted independently).  fct and slow must be sorted. */
static int write_fct_cdf(out *o, const char *const *names, const samples *fct,
                         const samples *slow, int nb, err *e)
{
    FILE *f = out_file(o, "fct_cdf.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "bucket,cdf,fct_s,slowdown\n");
    for (int b = 0; b < nb; b++) {
        assert(fct[b].n == slow[b].n && (fct[b].n < 2 || (fct[b].sorted && slow[b].sorted)));
        for (size_t i = 0; i < fct[b].n; i++) {
            fprintf(f, "%s,", names[b]);
            csv_num(f, (double)(i + 1) / (double)fct[b].n, ",");
            csv_num(f, fct[b].v[i], ",");
            csv_num(f, slow[b].v[i], "\n");
        }
    }
    return 0;
}

static int net_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    net_model *m = st;
    double T = ps_to_s(sim_now(s));
    FILE *f = out_file(o, "flows.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,"
               "delivered_bytes,retransmits,timeouts,round\n");
    samples fct;
    samples_init(&fct);
    /* FCT and slowdown by flow size, the buckets of the transport papers. */
    static const struct {
        const char *name;
        uint64_t max;
    } bk[] = {{"0-10KB", 10000}, {"10KB-100KB", 100000}, {"100KB-1MB", 1000000},
              {"over-1MB", UINT64_MAX}};
    enum { NB = sizeof bk / sizeof *bk };
    samples bfct[NB], bslow[NB];
    for (int b = 0; b < NB; b++) {
        samples_init(&bfct[b]);
        samples_init(&bslow[b]);
    }
    uint64_t delivered = 0, rtx = 0, tos = 0, done = 0, aborted = 0;
    for (size_t i = 0; i < m->nflows; i++) {
        nflow *nf = m->flows[i];
        tcp_flow *t = &nf->tcp;
        bool fin = t->finish_ps >= 0;
        double fct_s = fin ? ps_to_s(t->finish_ps - t->start_ps) : NAN;
        double ideal = nf->ideal_ps >= 0 ? ps_to_s(nf->ideal_ps) : NAN;
        fprintf(f, "%u,%s,%s,", t->id, topo_node_name(m->t, topo_host_node(m->t, nf->src)),
                topo_node_name(m->t, topo_host_node(m->t, nf->dst)));
        if (t->size_bytes == UINT64_MAX)
            fprintf(f, ",");
        else
            fprintf(f, "%llu,", (unsigned long long)t->size_bytes);
        csv_num(f, ps_to_s(t->start_ps), ",");
        csv_num(f, fin ? ps_to_s(t->finish_ps) : NAN, ",");
        csv_num(f, fct_s, ",");
        csv_num(f, ideal, ",");
        csv_num(f, fct_s / ideal, ",");
        fprintf(f, "%llu,%llu,%llu,%d\n", (unsigned long long)tcp_flow_delivered(t),
                (unsigned long long)t->retransmits, (unsigned long long)t->timeouts, nf->round);
        delivered += tcp_flow_delivered(t);
        rtx += t->retransmits;
        tos += t->timeouts;
        aborted += t->aborted;
        if (fin) {
            done++;
            samples_add(&fct, fct_s);
            int b = 0;
            while (t->size_bytes > bk[b].max)
                b++;
            samples_add(&bfct[b], fct_s);
            samples_add(&bslow[b], fct_s / ideal);
        }
    }
    /* Links: both directions of every link. */
    FILE *lf = out_file(o, "links.csv", e);
    if (!lf)
        return e->code;
    fprintf(lf, "port,rate_bps,tx_bytes,utilisation,drops,ecn_marks,max_queue_bytes,"
                "pfc_pauses\n");
    uint64_t drops = 0, marks = 0, hops = 0, pauses = 0;
    for (size_t l = 0; l < topo_links(m->t); l++)
        for (int d = 0; d < 2; d++) {
            port *q = topo_link_port(m->t, (int)l, d);
            int64_t busy = q->stat_busy_ps + (q->tx ? sim_now(s) - q->busy_since : 0);
            fprintf(lf, "%s,%lld,%llu,", q->base.name, (long long)q->cfg.rate_bps,
                    (unsigned long long)q->stat_tx_bytes);
            csv_num(lf, T > 0 ? ps_to_s(busy) / T : NAN, ",");
            fprintf(lf, "%llu,%llu,%lld,%llu\n", (unsigned long long)q->stat_drop_pkts,
                    (unsigned long long)q->stat_mark_pkts, (long long)q->stat_max_bytes,
                    (unsigned long long)q->stat_pfc_pauses);
            pauses += q->stat_pfc_pauses;
            drops += q->stat_drop_pkts;
            marks += q->stat_mark_pkts;
            hops += q->stat_tx_pkts;
        }
    /* Shared buffers: one row per switch. */
    FILE *sf = NULL;
    for (size_t n = 0; n < topo_nodes(m->t); n++) {
        const shbuf *b = topo_node_shbuf(m->t, (int)n);
        if (!b)
            continue;
        if (!sf) {
            if (!(sf = out_file(o, "switches.csv", e)))
                return e->code;
            fprintf(sf, "switch,shared_buffer_bytes,alpha,peak_used_bytes,threshold_drops,"
                        "full_drops\n");
        }
        fprintf(sf, "%s,%lld,", topo_node_name(m->t, (int)n), (long long)b->size_bytes);
        csv_num(sf, b->alpha, ",");
        fprintf(sf, "%lld,%llu,%llu\n", (long long)b->stat_max_used,
                (unsigned long long)b->stat_dt_drops, (unsigned long long)b->stat_full_drops);
    }
    if (m->ts_n) {
        FILE *qf = out_file(o, "queues.csv", e);
        if (!qf)
            return e->code;
        fprintf(qf, "time_s,port,bytes,tx_bps,drops,ecn_marks,pfc_pauses\n");
        /* Samples come in rounds of one per port: tx_bps is the port's rate
         * since its previous sample. */
        for (size_t i = 0; i < m->ts_n; i++) {
            const qsample *x = &m->ts[i];
            const qsample *prev = i >= m->nsports ? &m->ts[i - m->nsports] : NULL;
            csv_num(qf, ps_to_s(x->t_ps), ",");
            fprintf(qf, "%s,%lld,", m->sport_names[x->port], (long long)x->bytes);
            csv_num(qf, prev ? (double)(x->tx_bytes - prev->tx_bytes) * 8 /
                                   ps_to_s(x->t_ps - prev->t_ps) : 0, ",");
            fprintf(qf, "%llu,%llu,%llu\n", (unsigned long long)x->drops,
                    (unsigned long long)x->marks, (unsigned long long)x->pauses);
        }
    }
    for (size_t i = 0; i < m->ncaps; i++) {
        char name[300];
        snprintf(name, sizeof name, "%s.pcap",
                 topo_node_name(m->t, topo_host_node(m->t, m->caps[i].host)));
        FILE *pf = out_file(o, name, e);
        int r = pf ? pcapw_write(m->caps[i].w, pf, e) : e->code;
        if (r)
            return r;
        if (pcapw_missed(m->caps[i].w))
            LOG(LOG_WARN, "net", "%s: %llu packets over pcap_max_packets were not captured",
                name, (unsigned long long)pcapw_missed(m->caps[i].w));
    }
    json_object_set_new(sum, "flows", json_integer((json_int_t)m->nflows));
    json_object_set_new(sum, "flows_completed", json_integer((json_int_t)done));
    json_object_set_new(sum, "flows_aborted", json_integer((json_int_t)aborted));
    out_json_num(sum, "fct_p50_s", samples_quantile(&fct, 0.5));
    out_json_num(sum, "fct_p99_s", samples_quantile(&fct, 0.99));
    out_json_num(sum, "fct_p999_s", samples_quantile(&fct, 0.999));
    out_json_num(sum, "goodput_bps", T > 0 ? (double)delivered * 8 / T : NAN);
    json_object_set_new(sum, "drops", json_integer((json_int_t)drops));
    json_object_set_new(sum, "packet_hops", json_integer((json_int_t)hops));
    json_object_set_new(sum, "pfc_pauses", json_integer((json_int_t)pauses));
    json_object_set_new(sum, "ecn_marks", json_integer((json_int_t)marks));
    json_object_set_new(sum, "retransmits", json_integer((json_int_t)rtx));
    json_object_set_new(sum, "timeouts", json_integer((json_int_t)tos));
    /* Conservation: every packet still allocated is inside the network. */
    json_object_set_new(sum, "packets_in_network_at_end",
                        json_integer((json_int_t)topo_packets_in_network(m->t)));
    json_object_set_new(sum, "packets_allocated_at_end",
                        json_integer((json_int_t)pkt_pool_live(m->pool)));
    topo_bytes tb;
    topo_byte_counts(m->t, &tb);
    json_object_set_new(sum, "bytes_injected", json_integer((json_int_t)tb.injected));
    json_object_set_new(sum, "bytes_delivered", json_integer((json_int_t)tb.delivered));
    json_object_set_new(sum, "bytes_dropped", json_integer((json_int_t)tb.dropped));
    json_object_set_new(sum, "bytes_in_network_at_end",
                        json_integer((json_int_t)tb.in_network));
    samples_fini(&fct);
    json_t *by = json_object();
    for (int b = 0; b < NB; b++) {
        json_t *bo = json_object();
        json_object_set_new(bo, "flows", json_integer((json_int_t)bfct[b].n));
        out_json_num(bo, "fct_p50_s", samples_quantile(&bfct[b], 0.5));
        out_json_num(bo, "fct_p99_s", samples_quantile(&bfct[b], 0.99));
        out_json_num(bo, "fct_p999_s", samples_quantile(&bfct[b], 0.999));
        out_json_num(bo, "slowdown_p50", samples_quantile(&bslow[b], 0.5));
        out_json_num(bo, "slowdown_p99", samples_quantile(&bslow[b], 0.99));
        json_object_set_new(by, bk[b].name, bo);
    }
    json_object_set_new(sum, "fct_by_size", by);
    int rc = 0;
    if (done) {
        const char *names[NB];
        for (int b = 0; b < NB; b++)
            names[b] = bk[b].name;
        rc = write_fct_cdf(o, names, bfct, bslow, NB, e);
    }
    for (int b = 0; b < NB; b++) {
        samples_fini(&bfct[b]);
        samples_fini(&bslow[b]);
    }
    if (rc)
        return rc;
    if (m->cfg.incast) {
        FILE *inf = out_file(o, "incast.csv", e);
        if (!inf)
            return e->code;
        fprintf(inf, "round,duration_s,goodput_bps\n");
        double total = 0;
        for (int i = 0; i < m->round; i++) {
            double bits = (double)m->inc.senders * (double)m->inc.block * 8;
            fprintf(inf, "%d,", i);
            csv_num(inf, m->round_secs[i], ",");
            csv_num(inf, bits / m->round_secs[i], "\n");
            total += m->round_secs[i];
        }
        json_t *ic = json_object();
        json_object_set_new(ic, "senders", json_integer(m->inc.senders));
        json_object_set_new(ic, "block_bytes", json_integer(m->inc.block));
        json_object_set_new(ic, "rounds_completed", json_integer(m->round));
        double gp = m->round ? (double)m->round * (double)m->inc.senders *
                                   (double)m->inc.block * 8 / total : NAN;
        out_json_num(ic, "goodput_bps", gp);
        /* The receiver's link rate: its host's only link. */
        port *rxq = NULL;
        for (size_t l = 0; l < topo_links(m->t) && !rxq; l++) {
            int a, b;
            topo_link_ends(m->t, (int)l, &a, &b);
            if (b == topo_host_node(m->t, m->inc_rx))
                rxq = topo_link_port(m->t, (int)l, 0);
            else if (a == topo_host_node(m->t, m->inc_rx))
                rxq = topo_link_port(m->t, (int)l, 1);
        }
        if (rxq)
            out_json_num(ic, "goodput_fraction_of_link", gp / (double)rxq->cfg.rate_bps);
        json_object_set_new(sum, "incast", ic);
    }
    return 0;
}

static void net_fini(void *st)
{
    net_model *m = st;
    for (size_t i = 0; i < m->nflows; i++) {
        tcp_flow_stop(&m->flows[i]->tcp);
        free(m->flows[i]);
    }
    free(m->flows);
    topo_destroy(m->t);
    pkt_pool_destroy(m->pool);
    free(m->specs);
    free(m->spec_src);
    free(m->spec_dst);
    free(m->inc_tx);
    free(m->inc_flows);
    free(m->round_secs);
    for (size_t i = 0; i < m->ncaps; i++)
        pcapw_destroy(m->caps[i].w);
    free(m->caps);
    free(m->fails);
    free(m->fail_link);
    free(m->sports);
    free(m->sport_names);
    free(m->ts);
    dist_fini(&m->bg_sizes);
}

static const plot_spec net_plots[] = {
    {.csv = "queues.csv", .x = "time_s", .y = "bytes", .group = "port",
     .title = "queue occupancy", .out = "queues", .xlabel = "simulated time (s)",
     .ylabel = "bytes queued"},
    {.csv = "incast.csv", .x = "round", .y = "goodput_bps", .title = "incast goodput per round",
     .out = "incast", .ylabel = "goodput (bit/s)"},
    {.csv = "queues.csv", .x = "time_s", .y = "tx_bps", .group = "port",
     .title = "port throughput", .out = "throughput", .xlabel = "simulated time (s)",
     .ylabel = "bit/s over the sample interval"},
    {.csv = "flows.csv", .x = "id", .y = "fct_s", .title = "flow completion times",
     .out = "flows", .xlabel = "flow id", .ylabel = "FCT (s)"},
    {.csv = "fct_cdf.csv", .x = "slowdown", .y = "cdf", .group = "bucket",
     .title = "FCT slowdown CDF by flow size", .out = "slowdown_cdf",
     .xlabel = "FCT / ideal FCT", .ylabel = "fraction of flows"},
    {.csv = "fct_cdf.csv", .x = "fct_s", .y = "cdf", .group = "bucket",
     .title = "FCT CDF by flow size", .out = "fct_cdf", .xlabel = "FCT (s)",
     .ylabel = "fraction of flows", .logx = 1},
    {0},
};

const model_ops net_model_ops = {
    .name = "net",
    .summary = "packet-level network: topology, TCP/DCTCP flows, incast",
    .state_size = sizeof(net_model),
    .configure = net_configure,
    .start = net_start,
    .progress = net_progress,
    .report = net_report,
    .fini = net_fini,
    .plots = net_plots,
};
