/*
 * net.c - the packet-level network model: configuration glue between a
 * scenario's `net` section, the network object (network.h: topology,
 * transport, failures, captures, tables) and the workloads that drive it
 * (workload.h: explicit flows, rounds of incast, Poisson background).
 *
 * Scenario section `net:`
 *   topology   the network (docs/network.md: dumbbell, star, leaf_spine,
 *              fat_tree, rail_optimised, dual_plane, custom)
 *   transport  name (tcp | dgram: transport.h) and that transport's keys;
 *              tcp: cc (newreno | dctcp), mss, header, init_cwnd, rcv_wnd,
 *              min_rto, max_rto, init_rto, max_retries, delayed_ack,
 *              delack_timeout, dctcp_g; dgram: payload, header, rate, burst
 *   plane      packet (default) or flow: the same messages as max-min fair
 *              fluid flows (docs/flow-level.md); flow: {efficiency, rate_cap}
 *   hash_seeds ECMP hash seeds per switch: random (default) or equal
 *   routing    ecmp (a path per flow by hash), spray_rr or spray_random (a
 *              path per packet over the equal-cost paths)
 *   faults     injected faults (fault.h): loss, delay, blackhole, flap,
 *              corrupt on a link, a port or a node, over [at, until), with
 *              their ground truth in faults.csv and fault_events.csv
 *   failures   a list of {a, b, at, repair, convergence}: the link between
 *              nodes a and b fails at `at` (and comes back at `repair`);
 *              routing avoids it after `convergence`, when every flow
 *              takes the route routing then gives it (packets already sent
 *              keep theirs)
 *   flows      a list of {src, dst, size, start, prio}; without size a flow
 *              is long-lived
 *   incast     {receiver, senders, block, rounds, start, period, jitter,
 *              persistent}: rounds in which `senders` hosts (a count or a
 *              list) each send `block` bytes to `receiver`; the next round
 *              starts when every block of the previous one has arrived (the
 *              synchronized-read workload of the incast papers), or at
 *              start + k period if later, on one persistent connection per
 *              sender unless persistent is false
 *   background {load, sizes, start, duration, max_flows}: Poisson flow
 *              arrivals between uniformly random pairs of distinct hosts at
 *              `load` times the hosts' total link capacity, sizes from a
 *              distribution (data/flow_sizes/: web search, data mining), as
 *              the traffic generators of the transport papers do
 *   pcap, pcap_max_packets   HOST.pcap for each listed host: every packet it
 *              sends or receives, as Ethernet/IPv4/TCP headers (pcapw.h)
 *   sample_interval, sample_ports   queues.csv: occupancy of the named
 *              ports ("sw0->h0") every interval
 *   tail       the run goes on this long after the workloads are done
 *   extensions systems riding on the network, by name (netext.h): e.g.
 *              {sdtcp: {receiver: h0, scheme: sdtcp}}
 *
 * The run ends at the scenario's stop time, or when every workload has sent
 * all it will and every finite message has completed.  Connections are
 * routed by ECMP on a hash of their id.  There are no handshakes, but each
 * TCP connection's RTT estimator starts from the round trip a handshake
 * would have measured on the empty network.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/model.h"
#include "aisim/network.h"
#include "aisim/workload.h"

#include "aisim/netkeys.h"

typedef struct net_cfg {
    network_cfg net;
    cfg_node *flows, *incast, *background;
    int64_t tail;
} net_cfg;

static const cfg_key net_keys[] = {
    NET_KEYS(net_cfg, net),
    {.name = "flows", .type = CFG_NODE, .off = offsetof(net_cfg, flows), .flags = CFG_OPTIONAL,
     .help = "a list of flows {src, dst, size, start}"},
    {.name = "incast", .type = CFG_NODE, .off = offsetof(net_cfg, incast), .flags = CFG_OPTIONAL,
     .help = "rounds of incast {receiver, senders, block, rounds}"},
    {.name = "background", .type = CFG_NODE, .off = offsetof(net_cfg, background),
     .flags = CFG_OPTIONAL, .help = "Poisson flows between random host pairs {load, sizes, "
     "duration}"},
    {.name = "tail", .type = CFG_TIME, .off = offsetof(net_cfg, tail), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "the run goes on this long after the workloads are "
     "done (long-lived flows and extensions still running)"},
    {0},
};

/* The workloads, in the order they start. */
static const workload_ops *const workloads[] = {&wl_flows, &wl_incast, &wl_background};
enum { NWL = sizeof workloads / sizeof *workloads };

typedef struct net_model {
    net_cfg cfg;
    network *n;
    void *wl[NWL];
    sim_timer end;              /* the tail's end */
    bool ending;                /* the workloads are done; the tail runs */
} net_model;

static int net_configure(void *st, cfg_node *sec, const char *path, const model_env *env, err *e)
{
    net_model *m = st;
    int r = cfg_bind(sec, path, net_keys, &m->cfg, e);
    if (r)
        return r;
    if ((r = network_create(&m->n, &m->cfg.net, sec, path, env, e)))
        return r;
    cfg_node *nodes[NWL] = {m->cfg.flows, m->cfg.incast, m->cfg.background};
    for (int i = 0; i < NWL; i++) {
        m->wl[i] = xcalloc(1, workloads[i]->size);
        if ((r = workloads[i]->configure(m->wl[i], m->n, nodes[i], path, env, e)))
            return r;
    }
    if (!m->cfg.flows && !m->cfg.incast && !m->cfg.background)
        return cfg_err(e, AISIM_EINVAL, sec, path, "no traffic: give flows, incast or "
                       "background");
    return 0;
}

/* After every message: the run is over when no workload will send more and
 * no finite message is in flight. */
static void on_complete(void *ctx, network *n, const net_msg *msg)
{
    (void)msg;
    net_model *m = ctx;
    if (m->ending || network_active(n))
        return;
    for (int i = 0; i < NWL; i++)
        if (!workloads[i]->finished(m->wl[i]))
            return;
    sim *s = network_sim(n);
    if (!m->cfg.tail) {
        sim_stop(s);
        return;
    }
    m->ending = true;
    sim_timer_arm(s, &m->end, sim_now(s) + m->cfg.tail);
}

static void on_end(sim *s, void *obj, uint64_t arg)
{
    (void)obj;
    (void)arg;
    sim_stop(s);
}

static int net_start(void *st, sim *s, err *e)
{
    (void)s;
    (void)e;
    net_model *m = st;
    sim_timer_init(&m->end, on_end, m, 0);
    network_on_complete(m->n, on_complete, m);
    network_start(m->n);
    for (int i = 0; i < NWL; i++)
        workloads[i]->start(m->wl[i]);
    return 0;
}

static double net_progress(const void *st, const sim *s)
{
    (void)s;
    const net_model *m = st;
    if (m->cfg.incast)
        return wl_incast.progress(m->wl[1]);
    return -1;
}

static int net_report(void *st, const sim *s, out *o, json_t *sum, err *e)
{
    (void)s;
    net_model *m = st;
    int r = network_report(m->n, o, sum, e);
    for (int i = 0; i < NWL && !r; i++)
        if (workloads[i]->report)
            r = workloads[i]->report(m->wl[i], o, sum, e);
    return r;
}

static void net_fini(void *st)
{
    net_model *m = st;
    network_destroy(m->n);
    for (int i = 0; i < NWL; i++)
        if (m->wl[i]) {
            workloads[i]->fini(m->wl[i]);
            free(m->wl[i]);
        }
}

/* What `aisim run` prints first (model.h). */
static const model_headline net_headlines[] = {
    MODEL_HEADLINES_NETWORK,
    {"incast.goodput_fraction_of_link", "incast goodput, of link", "%", 0},
    {"incast.rounds_completed", "incast rounds", "", 0},
    {"rdma_cnps", "RoCE CNPs", "", 0},
    {"pfc_pauses", "PFC pauses", "", 0},
    {"max_queue_bytes", "largest queue", "B", 0},
    {NULL, NULL, NULL, 0},
};

const model_ops net_model_ops = {
    .name = "net",
    .summary = "packet-level network: topology, TCP/DCTCP or datagram flows, incast",
    .state_size = sizeof(net_model),
    .configure = net_configure,
    .start = net_start,
    .progress = net_progress,
    .report = net_report,
    .fini = net_fini,
    .plots = network_plots,
    .headlines = net_headlines,
};
