/*
 * sdtcp_ext.c - the `sdtcp` network extension (netext.h): SDTCP (sdtcp.h)
 * on the SDN control plane (sdn.h) of an ordinary network, with ICTCP and
 * the transport alone as baselines, measured in the scenario of the incast
 * papers: rounds of queries (the `incast` workload, `period` and `jitter`
 * set) sharing the receiver's port with long-lived background flows (the
 * `flows` workload without sizes).  Everything else (topology, transport,
 * failures, faults, sampling, pcap) is the network's own keys.
 *
 * Section `extensions: {sdtcp: {...}}` of the network's model:
 *   receiver    the host the queries go to: timeline.csv's default port
 *               is the one into it, ICTCP runs at its NIC
 *   scheme      none (the transport alone: NewReno or DCTCP as
 *               transport.cc says) | sdtcp | ictcp
 *   sample      period of timeline.csv (queue, throughputs, rules)
 *   monitor     the port whose queue timeline.csv shows (default: the
 *               port into the receiver)
 *   controller  {switches: [{name, latency}], latency, processing,
 *               stats_interval, notify, clear, min_gap, renotify}: the
 *               switches it manages (default all), the channel latency (one
 *               way; per switch or the default), its time per message, the
 *               flow-stats period, the notification and clear levels as
 *               fractions of each port's buffer, the rate limit
 *   policy      SDTCP's parameters (sdtcp.h), the paper's values by default
 *   ictcp       ICTCP's parameters (ictcp.h)
 *
 * What it measures, from the messages the network shows it (on_send,
 * on_done): a query is the finite messages of one tag >= 0 (the incast
 * workload tags each block with its round), from the first one's sending
 * to the last one's completion; a connection that carries a finite
 * message is a burst flow, one that carries an endless message a
 * background flow.  That split is the measurement's ground truth; the
 * policy never sees it (it classifies by age and bytes, sdtcp.h).
 *
 * Every managed switch carries the sdn.h hook whatever the scheme, so the
 * loss of burst flows is measured the same way for every scheme (the
 * controller, its watermarks and its rules exist only under sdtcp).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/model.h"
#include "aisim/netext.h"
#include "aisim/network.h"
#include "aisim/sdn.h"
#include "aisim/sdtcp.h"
#include "aisim/stats.h"
#include "aisim/units.h"
#include "systems/sdtcp/ictcp.h"

enum { SCHEME_NONE, SCHEME_SDTCP, SCHEME_ICTCP };
static const char *const schemes[] = {"none", "sdtcp", "ictcp", NULL};
static const char *const modes[] = {"minimal", "banded", "all", "fixed", NULL};

typedef struct sd_cfg {
    const char *receiver;
    int scheme;
    int64_t sample;
    const char *monitor;
    /* controller */
    cfg_node *switches;
    int64_t latency, proc, stats_ps, min_gap, renotify;
    double notify, clear;
    /* policy */
    int mode;
    int64_t rtt, q_low, q_high, mtu, min_wnd, fixed_wnd, bg_bytes, bg_age, idle, hard;
    double f_mild, f_moderate;
    /* ictcp */
    double ic_alpha, ic_beta, ic_g1, ic_g2;
    int64_t ic_rtt, ic_min_wnd;
} sd_cfg;

static const cfg_key ctl_keys[] = {
    {.name = "switches", .type = CFG_NODE, .off = offsetof(sd_cfg, switches),
     .flags = CFG_OPTIONAL, .help = "managed switches: a list of {name, latency} (default: "
     "every switch at the default latency)"},
    {.name = "latency", .type = CFG_TIME, .off = offsetof(sd_cfg, latency), .def = "100us",
     .flags = CFG_MIN, .min = 0, .help = "one-way control-channel latency"},
    {.name = "processing", .type = CFG_TIME, .off = offsetof(sd_cfg, proc), .def = "50us",
     .flags = CFG_MIN, .min = 0, .help = "controller time per message"},
    {.name = "stats_interval", .type = CFG_TIME, .off = offsetof(sd_cfg, stats_ps),
     .def = "1ms", .flags = CFG_MIN, .min = 0, .help = "flow-stats period (0s: none)"},
    {.name = "notify", .type = CFG_FLOAT, .off = offsetof(sd_cfg, notify), .def = "0.2",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "congestion notification above this fraction of the port's buffer"},
    {.name = "clear", .type = CFG_FLOAT, .off = offsetof(sd_cfg, clear), .def = "0.1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1,
     .help = "congestion cleared at or below this fraction of the buffer"},
    {.name = "min_gap", .type = CFG_TIME, .off = offsetof(sd_cfg, min_gap), .def = "100us",
     .flags = CFG_MIN, .min = 0, .help = "at most one notification per port per gap"},
    {.name = "renotify", .type = CFG_TIME, .off = offsetof(sd_cfg, renotify), .def = "1ms",
     .flags = CFG_MIN, .min = 0, .help = "repeat a notification this often while the queue "
     "stays above a level (0s: never)"},
    {0},
};

static const cfg_key policy_keys[] = {
    {.name = "mode", .type = CFG_ENUM, .off = offsetof(sd_cfg, mode), .def = "minimal",
     .choices = modes, .help = "minimal (only long-lived flows slowed), banded (bursts "
     "capped in the severe band too), all (ablation: no classes), fixed (ablation: no bands)"},
    {.name = "rtt", .type = CFG_TIME, .off = offsetof(sd_cfg, rtt), .def = "300us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "base RTT of the fair share"},
    {.name = "q_low", .type = CFG_INT, .off = offsetof(sd_cfg, q_low), .def = "50",
     .flags = CFG_MIN, .min = 0, .help = "Q_L, packets: mild band below"},
    {.name = "q_high", .type = CFG_INT, .off = offsetof(sd_cfg, q_high), .def = "80",
     .flags = CFG_MIN, .min = 0, .help = "Q_H, packets: severe band from"},
    {.name = "mtu", .type = CFG_SIZE, .off = offsetof(sd_cfg, mtu), .def = "1500B",
     .flags = CFG_MIN, .min = 64, .help = "packet size of Q_L and Q_H"},
    {.name = "f_mild", .type = CFG_FLOAT, .off = offsetof(sd_cfg, f_mild), .def = "0.6667",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "mild band factor"},
    {.name = "f_moderate", .type = CFG_FLOAT, .off = offsetof(sd_cfg, f_moderate),
     .def = "0.5", .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "moderate band factor"},
    {.name = "min_window", .type = CFG_SIZE, .off = offsetof(sd_cfg, min_wnd),
     .flags = CFG_OPTIONAL, .help = "floor of every window (default: one MSS)"},
    {.name = "fixed_window", .type = CFG_SIZE, .off = offsetof(sd_cfg, fixed_wnd),
     .flags = CFG_OPTIONAL, .help = "window of mode fixed (default: two MSS)"},
    {.name = "bg_bytes", .type = CFG_SIZE, .off = offsetof(sd_cfg, bg_bytes), .def = "1MB",
     .flags = CFG_MIN, .min = 0, .help = "long-lived above this many bytes"},
    {.name = "bg_age", .type = CFG_TIME, .off = offsetof(sd_cfg, bg_age), .def = "1s",
     .flags = CFG_MIN, .min = 0, .help = "... or older than this"},
    {.name = "idle_timeout", .type = CFG_TIME, .off = offsetof(sd_cfg, idle), .def = "10ms",
     .flags = CFG_MIN, .min = 0, .help = "rules go after this long without a match (0s: "
     "never)"},
    {.name = "hard_timeout", .type = CFG_TIME, .off = offsetof(sd_cfg, hard), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "rules go this long after install (0s: never)"},
    {0},
};

static const cfg_key ictcp_keys[] = {
    {.name = "alpha", .type = CFG_FLOAT, .off = offsetof(sd_cfg, ic_alpha), .def = "0.9",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "usable share of the link"},
    {.name = "beta", .type = CFG_FLOAT, .off = offsetof(sd_cfg, ic_beta), .def = "0.75",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = "EWMA weight of b_m"},
    {.name = "gamma1", .type = CFG_FLOAT, .off = offsetof(sd_cfg, ic_g1), .def = "0.1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = "increase at or below"},
    {.name = "gamma2", .type = CFG_FLOAT, .off = offsetof(sd_cfg, ic_g2), .def = "0.5",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = "decrease above"},
    {.name = "rtt", .type = CFG_TIME, .off = offsetof(sd_cfg, ic_rtt), .def = "100us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "sub-slot and RTT"},
    {.name = "min_window", .type = CFG_SIZE, .off = offsetof(sd_cfg, ic_min_wnd),
     .flags = CFG_OPTIONAL, .help = "floor and initial window (default: two MSS)"},
    {0},
};

static const cfg_key sd_keys[] = {
    {.name = "receiver", .type = CFG_STR, .off = offsetof(sd_cfg, receiver),
     .help = "the queries' receiver (timeline.csv's port into it; ICTCP at its NIC)"},
    {.name = "scheme", .type = CFG_ENUM, .off = offsetof(sd_cfg, scheme), .def = "sdtcp",
     .choices = schemes, .help = "none (the transport alone), sdtcp or ictcp"},
    {.name = "sample", .type = CFG_TIME, .off = offsetof(sd_cfg, sample), .def = "100us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "period of timeline.csv"},
    {.name = "monitor", .type = CFG_STR, .off = offsetof(sd_cfg, monitor),
     .flags = CFG_OPTIONAL, .help = "port of timeline.csv's queue, as \"sw0->h0\""},
    {.name = "controller", .type = CFG_MAPOF, .sub = ctl_keys, .def = "{}",
     .help = "the SDN controller"},
    {.name = "policy", .type = CFG_MAPOF, .sub = policy_keys, .def = "{}",
     .help = "SDTCP's parameters"},
    {.name = "ictcp", .type = CFG_MAPOF, .sub = ictcp_keys, .def = "{}",
     .help = "ICTCP's parameters"},
    {0},
};

/* One timeline.csv row. */
typedef struct sd_sample {
    int64_t t_ps, queue;
    double bg_bps, port_tx_bps;
    uint32_t rules;
} sd_sample;

/* One query, as its messages show it. */
typedef struct sd_query {
    int64_t start_ps, end_ps;   /* first block sent, last one done (< 0: not yet) */
    int left;                   /* blocks not done */
} sd_query;

typedef struct sd_ext {
    sd_cfg c;                   /* first: the keys bind into it */
    network *n;
    sim *s;
    const transport_ops *ops;
    uint32_t mss;
    int rx;
    port *mon;                  /* monitored port */
    /* the control plane and the schemes */
    sdn *ctl;
    sdtcp *pol;
    ictcp *ic;
    int64_t *sw_lat;            /* per managed switch (configure) */
    int *sw_node;
    int nsw;
    sdtcp_flow *obs;
    size_t capobs;
    /* queries and flows, from the messages */
    sd_query *q;                /* by tag */
    size_t nq, capq;
    int done;                   /* queries complete, in order */
    uint64_t q_bytes;           /* bytes of the first query */
    uint8_t *burst;             /* by connection id: 1 if it carried a finite message */
    size_t nburst;
    bool *sender;               /* by host: sent a query's block */
    conn **bg;                  /* background connections (an endless message) */
    size_t nbg, capbg, bg_flows;
    uint64_t bg_gone_bytes;     /* delivered by those aborted (and so freed) */
    int64_t bg_start;           /* the first background message's start */
    /* timeline */
    sim_timer tick;
    uint64_t bg_last, port_tx_last;
    sd_sample *ts;
    size_t nts, capts;
    int64_t first_cn_ps;        /* first congestion notification handled */
    int64_t first_cn_sent_ps;   /* ... and sent by its switch */
} sd_ext;

/* ---- controller glue ------------------------------------------------------ */

/* The controller's handler: notifications and clears go to the policy, its
 * decisions back to the switch as flow-mods. */
static void on_ctl(void *ctx, sdn *c, const sdn_msg *m)
{
    sd_ext *md = ctx;
    if (m->kind == SDN_FLOW_STATS)
        return;                 /* the policy decides from the notification's flows */
    if (m->kind == SDN_CONGESTION && md->first_cn_ps < 0) {
        md->first_cn_ps = sim_now(md->s);
        md->first_cn_sent_ps = m->sent_ps;
    }
    if (m->nflows > md->capobs) {
        md->capobs = m->nflows;
        md->obs = xrealloc(md->obs, md->capobs * sizeof *md->obs);
    }
    int64_t now = sim_now(md->s);
    for (uint32_t i = 0; i < m->nflows; i++)
        md->obs[i] = (sdtcp_flow){.flow = m->flows[i].flow, .bytes = m->flows[i].total_bytes,
                                  .age_ps = now - m->flows[i].first_ps};
    sdtcp_obs o = {.cleared = m->kind == SDN_CLEARED, .sw = m->sw, .port = m->port,
                   .queue_bytes = m->queue_bytes, .rate_bps = m->rate_bps,
                   .flows = md->obs, .nflows = m->nflows};
    const sdtcp_mod *mods;
    size_t k = sdtcp_decide(md->pol, &o, &mods);
    for (size_t i = 0; i < k; i++) {
        const sdtcp_mod *d = &mods[i];
        sdn_match mt = {.flow = d->flow, .port = SDN_ANY};
        if (d->del)
            sdn_flow_delete(c, d->sw, mt);
        else
            sdn_flow_mod(c, d->sw, mt, d->wnd, d->idle_ps, d->hard_ps);
    }
}

/* ---- configuration -------------------------------------------------------- */

/* The port named `name` ("a->b"), or NULL. */
static port *port_named(topo *t, const char *name)
{
    for (size_t l = 0; l < topo_links(t); l++)
        for (int d = 0; d < 2; d++) {
            port *q = topo_link_port(t, (int)l, d);
            if (strcmp(q->base.name, name) == 0)
                return q;
        }
    return NULL;
}

/* The port that feeds host `h` (its switch's port toward it). */
static port *port_into_host(topo *t, int h)
{
    int hn = topo_host_node(t, h);
    for (size_t l = 0; l < topo_links(t); l++) {
        int a, b;
        topo_link_ends(t, (int)l, &a, &b);
        if (topo_link_is_intra_host(t, (int)l))
            continue;
        if (b == hn)
            return topo_link_port(t, (int)l, 0);
        if (a == hn)
            return topo_link_port(t, (int)l, 1);
    }
    return NULL;
}

static int conf_switches(sd_ext *m, const char *path, err *e)
{
    topo *t = network_topo(m->n);
    char sub[512], kp[600], kp2[700];
    cfg_path(sub, sizeof sub, path, "controller");
    cfg_path(kp, sizeof kp, sub, "switches");
    long len = net_list(m->c.switches, sub, "switches", "switches", kp, sizeof kp, e);
    if (len < 0)
        return (int)len;
    if (len == 0) {             /* every switch */
        for (size_t i = 0; i < topo_nodes(t); i++)
            if (topo_node_kind(t, (int)i) == NODE_SWITCH) {
                m->sw_node = xrealloc(m->sw_node, (size_t)(m->nsw + 1) * sizeof *m->sw_node);
                m->sw_lat = xrealloc(m->sw_lat, (size_t)(m->nsw + 1) * sizeof *m->sw_lat);
                m->sw_node[m->nsw] = (int)i;
                m->sw_lat[m->nsw++] = m->c.latency;
            }
        return 0;
    }
    static const cfg_key sw_keys[] = {
        {.name = "name", .type = CFG_STR, .off = 0, .help = "a switch of the topology"},
        {.name = "latency", .type = CFG_TIME, .off = sizeof(const char *),
         .flags = CFG_OPTIONAL | CFG_MIN, .min = 0, .help = "its one-way channel latency"},
        {0},
    };
    m->sw_node = xcalloc((size_t)len, sizeof *m->sw_node);
    m->sw_lat = xcalloc((size_t)len, sizeof *m->sw_lat);
    for (long i = 0; i < len; i++) {
        cfg_node *it = cfg_at(m->c.switches, (size_t)i);
        struct {
            const char *name;
            int64_t lat;
        } v = {NULL, -1};
        cfg_path_index(kp2, sizeof kp2, kp, (size_t)i);
        int r = cfg_bind(it, kp2, sw_keys, &v, e);
        if (r)
            return r;
        int node = topo_find_node(t, v.name);
        char sub2[800];
        if (node < 0 || topo_node_kind(t, node) != NODE_SWITCH)
            return cfg_err(e, AISIM_EINVAL, cfg_get(it, "name"),
                           cfg_path(sub2, sizeof sub2, kp2, "name"), "expected a switch of "
                           "the topology, found \"%s\" (%s)", v.name,
                           node < 0 ? "no such node" : "a host");
        for (int j = 0; j < m->nsw; j++)
            if (m->sw_node[j] == node)
                return cfg_err(e, AISIM_EINVAL, cfg_get(it, "name"),
                               cfg_path(sub2, sizeof sub2, kp2, "name"), "expected each "
                               "switch once, found \"%s\" again", v.name);
        m->sw_node[m->nsw] = node;
        m->sw_lat[m->nsw++] = v.lat >= 0 ? v.lat : m->c.latency;
    }
    return 0;
}

/* Q_L, Q_H and the notification level against each watched port's buffer. */
static int check_levels(sd_ext *m, cfg_node *sec, const char *path, err *e)
{
    cfg_node *pol = cfg_get(sec, "policy");
    char sub[512], kp[600];
    cfg_path(sub, sizeof sub, path, "policy");
    int64_t ql = m->c.q_low * m->c.mtu, qh = m->c.q_high * m->c.mtu;
    if (qh < ql)
        return cfg_err(e, AISIM_ERANGE, cfg_get(pol, "q_high"), cfg_path(kp, sizeof kp, sub,
                       "q_high"), "expected Q_H >= Q_L (%lld packets), found %lld",
                       (long long)m->c.q_low, (long long)m->c.q_high);
    if (m->c.clear > m->c.notify) {
        cfg_path(sub, sizeof sub, path, "controller");
        return cfg_err(e, AISIM_ERANGE, cfg_get(cfg_get(sec, "controller"), "clear"),
                       cfg_path(kp, sizeof kp, sub, "clear"), "expected clear <= notify "
                       "(%g), found %g", m->c.notify, m->c.clear);
    }
    topo *t = network_topo(m->n);
    for (int i = 0; i < m->nsw; i++)
        for (size_t l = 0; l < topo_links(t); l++) {
            int a, b;
            topo_link_ends(t, (int)l, &a, &b);
            for (int d = 0; d < 2; d++) {
                if ((d ? b : a) != m->sw_node[i])
                    continue;
                port *q = topo_link_port(t, (int)l, d);
                const char *key = qh > q->cfg.buffer_bytes ? "q_high" :
                                  ql > q->cfg.buffer_bytes ? "q_low" : NULL;
                if (key)
                    return cfg_err(e, AISIM_ERANGE, cfg_get(pol, key),
                                   cfg_path(kp, sizeof kp, sub, key), "expected a threshold "
                                   "within the buffer of port %s (%lld B = %lld packets of "
                                   "%lld B), found %lld packets (%lld B)", q->base.name,
                                   (long long)q->cfg.buffer_bytes,
                                   (long long)(q->cfg.buffer_bytes / m->c.mtu),
                                   (long long)m->c.mtu,
                                   (long long)(strcmp(key, "q_high") ? m->c.q_low
                                                                     : m->c.q_high),
                                   (long long)(strcmp(key, "q_high") ? ql : qh));
            }
        }
    return 0;
}

/* A window key below one MSS is an error (a sender could not send). */
static int check_window(sd_ext *m, cfg_node *sec, const char *path, const char *section,
                        const char *key, int64_t *v, int64_t def, err *e)
{
    if (*v == 0) {
        *v = def;
        return 0;
    }
    if (*v >= (int64_t)m->mss)
        return 0;
    char sub[512], kp[600];
    cfg_path(sub, sizeof sub, path, section);
    return cfg_err(e, AISIM_ERANGE, cfg_get(cfg_get(sec, section), key),
                   cfg_path(kp, sizeof kp, sub, key), "expected a window of at least one "
                   "MSS (%u B), found %lld B", m->mss, (long long)*v);
}

static int sd_configure(void *st, network *n, cfg_node *sec, const char *path,
                        const model_env *env, err *e)
{
    (void)env;
    sd_ext *m = st;
    m->first_cn_ps = -1;
    m->bg_start = -1;
    m->n = n;
    m->s = network_sim(n);
    m->ops = network_transport(n);
    char kp[600];
    if (strcmp(m->ops->name, "tcp") != 0)
        return cfg_err(e, AISIM_EINVAL, sec, path, "expected the tcp transport (the schemes "
                       "act on TCP's window), found %s", m->ops->name);
    uint32_t hdr;
    network_framing(n, &m->mss, &hdr);
    int r;
    if ((r = network_endpoint(n, m->c.receiver, cfg_get(sec, "receiver"),
                              cfg_path(kp, sizeof kp, path, "receiver"), e)) < 0)
        return r;
    m->rx = r;
    topo *t = network_topo(n);
    if (m->c.monitor) {
        m->mon = port_named(t, m->c.monitor);
        if (!m->mon)
            return cfg_err(e, AISIM_EINVAL, cfg_get(sec, "monitor"),
                           cfg_path(kp, sizeof kp, path, "monitor"), "expected a port such as "
                           "\"%s\", found \"%s\"", port_into_host(t, m->rx)->base.name,
                           m->c.monitor);
    } else {
        m->mon = port_into_host(t, m->rx);
    }
    if ((r = conf_switches(m, path, e)))
        return r;
    if ((r = check_window(m, sec, path, "policy", "min_window", &m->c.min_wnd, m->mss, e)) ||
        (r = check_window(m, sec, path, "policy", "fixed_window", &m->c.fixed_wnd,
                          2 * (int64_t)m->mss, e)) ||
        (r = check_window(m, sec, path, "ictcp", "min_window", &m->c.ic_min_wnd,
                          2 * (int64_t)m->mss, e)))
        return r;
    if (m->c.scheme == SCHEME_SDTCP && (r = check_levels(m, sec, path, e)))
        return r;
    m->sender = xcalloc(network_endpoints(n) + 1, sizeof *m->sender);
    return 0;
}

/* ---- what the messages show --------------------------------------------- */

static void mark_burst(sd_ext *m, uint32_t id)
{
    if (id >= m->nburst) {
        size_t nn = m->nburst ? 2 * m->nburst : 256;
        while (nn <= id)
            nn *= 2;
        m->burst = xrealloc(m->burst, nn);
        memset(m->burst + m->nburst, 0, nn - m->nburst);
        m->nburst = nn;
    }
    m->burst[id] = 1;
}

static void sd_on_send(void *st, conn *c, const net_msg *msg)
{
    sd_ext *m = st;
    if (msg->bytes == UINT64_MAX) {
        if (m->nbg == m->capbg) {
            m->capbg = m->capbg ? 2 * m->capbg : 8;
            m->bg = xrealloc(m->bg, m->capbg * sizeof *m->bg);
        }
        m->bg[m->nbg++] = c;
        m->bg_flows++;
        if (m->bg_start < 0 || msg->start_ps < m->bg_start)
            m->bg_start = msg->start_ps;
        return;
    }
    mark_burst(m, c->id);
    if (msg->tag < 0)
        return;
    size_t k = (size_t)msg->tag;
    if (k >= m->capq) {
        size_t nc = m->capq ? 2 * m->capq : 64;
        while (nc <= k)
            nc *= 2;
        m->q = xrealloc(m->q, nc * sizeof *m->q);
        for (size_t i = m->capq; i < nc; i++)
            m->q[i] = (sd_query){.start_ps = -1, .end_ps = -1};
        m->capq = nc;
    }
    if (k >= m->nq)
        m->nq = k + 1;
    if (m->q[k].start_ps < 0)
        m->q[k].start_ps = sim_now(m->s);
    m->q[k].left++;
    if (k == 0)
        m->q_bytes += msg->bytes;
    m->sender[msg->src] = true;
}

static void sd_on_done(void *st, const net_msg *msg)
{
    sd_ext *m = st;
    if (msg->bytes == UINT64_MAX) {
        /* an endless message ends only when its transport gave up: its
         * connection will be freed, so keep what it delivered and forget it */
        for (size_t i = 0; i < m->nbg; i++)
            if (m->bg[i]->id == msg->conn) {
                conn_stats cs;
                m->ops->stats(m->bg[i], &cs);
                m->bg_gone_bytes += cs.delivered;
                m->bg[i] = m->bg[--m->nbg];
                break;
            }
        return;
    }
    if (msg->tag < 0 || (size_t)msg->tag >= m->nq)
        return;
    sd_query *q = &m->q[msg->tag];
    if (--q->left == 0)
        q->end_ps = sim_now(m->s);
    while ((size_t)m->done < m->nq && m->q[m->done].end_ps >= 0)
        m->done++;
}

/* timeline.csv: the monitored queue, the background and burst throughput
 * into the receiver over the last period, the rules installed. */
static void on_tick(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    sd_ext *m = obj;
    uint64_t bg = m->bg_gone_bytes;
    for (size_t i = 0; i < m->nbg; i++) {
        conn_stats st;
        m->ops->stats(m->bg[i], &st);
        bg += st.delivered;
    }
    uint32_t rules = 0;
    for (int i = 0; m->ctl && m->c.scheme == SCHEME_SDTCP && i < m->nsw; i++)
        rules += sdn_rules(m->ctl, i);
    if (m->nts == m->capts) {
        m->capts = m->capts ? 2 * m->capts : 1024;
        m->ts = xrealloc(m->ts, m->capts * sizeof *m->ts);
    }
    double per = ps_to_s(m->c.sample);
    uint64_t tx = m->mon->stat_tx_bytes;
    double mon_bps = (double)(tx - m->port_tx_last) * 8 / per;
    double bg_bps = (double)(bg - m->bg_last) * 8 / per;
    m->ts[m->nts++] = (sd_sample){.t_ps = sim_now(s), .queue = m->mon->bytes,
                                  .bg_bps = bg_bps, .port_tx_bps = mon_bps, .rules = rules};
    m->bg_last = bg;
    m->port_tx_last = tx;
    sim_timer_arm(s, &m->tick, sim_now(s) + m->c.sample);
}

static void sd_start(void *st)
{
    sd_ext *m = st;
    sim *s = m->s;
    topo *t = network_topo(m->n);
    m->ctl = sdn_create(s, t, m->c.proc, m->c.scheme == SCHEME_SDTCP ? m->c.stats_ps : 0,
                        on_ctl, m);
    for (int i = 0; i < m->nsw; i++)
        sdn_add_switch(m->ctl, m->sw_node[i], m->sw_lat[i]);
    if (m->c.scheme == SCHEME_SDTCP) {
        sdtcp_params p;
        sdtcp_params_default(&p, m->mss);
        p.mode = m->c.mode;
        p.rtt_ps = m->c.rtt;
        p.q_low_bytes = m->c.q_low * m->c.mtu;
        p.q_high_bytes = m->c.q_high * m->c.mtu;
        p.f_mild = m->c.f_mild;
        p.f_moderate = m->c.f_moderate;
        p.min_wnd = (uint32_t)m->c.min_wnd;
        p.fixed_wnd = (uint32_t)m->c.fixed_wnd;
        p.bg_bytes = (uint64_t)m->c.bg_bytes;
        p.bg_age_ps = m->c.bg_age;
        p.idle_ps = m->c.idle;
        p.hard_ps = m->c.hard;
        m->pol = sdtcp_create(&p);
        /* Watch every port: notify/clear, then Q_L and Q_H, each with the
         * same hysteresis width (notify - clear). */
        for (int i = 0; i < m->nsw; i++)
            for (uint32_t j = 0; j < sdn_switch_ports(m->ctl, i); j++) {
                port *q = sdn_port(m->ctl, i, j);
                int64_t buf = q->cfg.buffer_bytes;
                int64_t hi = (int64_t)(m->c.notify * (double)buf);
                int64_t lo = (int64_t)(m->c.clear * (double)buf);
                int64_t lv[3][2] = {{hi, lo}};
                int nl = 1;
                int64_t marks[2] = {p.q_low_bytes, p.q_high_bytes};
                for (int k = 0; k < 2; k++)
                    if (marks[k] > lv[nl - 1][0] && marks[k] < buf) {
                        lv[nl][0] = marks[k];
                        lv[nl][1] = marks[k] - (hi - lo);
                        nl++;
                    }
                sdn_watch(m->ctl, i, j, (const int64_t(*)[2])lv, nl, m->c.min_gap,
                          m->c.renotify);
            }
        sdn_start(m->ctl);
    } else if (m->c.scheme == SCHEME_ICTCP) {
        ictcp_params p;
        ictcp_params_default(&p, m->mss);
        p.alpha = m->c.ic_alpha;
        p.beta = m->c.ic_beta;
        p.gamma1 = m->c.ic_g1;
        p.gamma2 = m->c.ic_g2;
        p.rtt_ps = m->c.ic_rtt;
        p.min_wnd = p.init_wnd = (uint32_t)m->c.ic_min_wnd;
        /* the receiver's NIC: the port at its end of its link */
        int hn = topo_host_node(t, m->rx);
        for (size_t l = 0; l < topo_links(t) && !m->ic; l++) {
            int a, b;
            topo_link_ends(t, (int)l, &a, &b);
            if (!topo_link_is_intra_host(t, (int)l) && (a == hn || b == hn))
                m->ic = ictcp_attach(topo_link_port(t, (int)l, a == hn ? 0 : 1), &p);
        }
    }
    sim_timer_init(&m->tick, on_tick, m, 0);
    sim_timer_arm(s, &m->tick, m->c.sample);
}

/* ---- report ----------------------------------------------------------------- */

/* Burst (or background) flows' data drops over every managed switch, and
 * the packets they offered (each flow's largest count at a switch: the
 * first switch it crosses sees all it sent). */
static void flow_losses(const sd_ext *m, bool burst, uint64_t *drops, uint64_t *pkts)
{
    *drops = *pkts = 0;
    network_int_counts k;
    network_counts(m->n, &k);
    for (size_t id = 0; id < k.conns_opened; id++) {
        bool b = id < m->nburst && m->burst[id];
        if (b != burst)
            continue;
        uint64_t mx = 0;
        for (int i = 0; i < m->nsw; i++) {
            const sdn_flow_stat *e = sdn_flow_entry(m->ctl, i, (uint32_t)id);
            if (!e)
                continue;
            *drops += e->drops;
            if (e->total_pkts > mx)
                mx = e->total_pkts;
        }
        *pkts += mx;
    }
}

/* Mean of the background throughput samples in [from, to). */
static double bg_mean(const sd_ext *m, int64_t from, int64_t to)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < m->nts; i++)
        if (m->ts[i].t_ps > from && m->ts[i].t_ps <= to) {
            sum += m->ts[i].bg_bps;
            n++;
        }
    return n ? sum / (double)n : NAN;
}

static int sd_report(void *st, out *o, json_t *sum, err *e)
{
    sd_ext *m = st;
    sim *s = m->s;
    FILE *f = out_file(o, "timeline.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "t_s,queue_bytes,bg_bps,port_tx_bps,rules\n");
    for (size_t i = 0; i < m->nts; i++) {
        const sd_sample *x = &m->ts[i];
        net_csv_num(f, ps_to_s(x->t_ps), ",");
        fprintf(f, "%lld,", (long long)x->queue);
        net_csv_num(f, x->bg_bps, ",");
        net_csv_num(f, x->port_tx_bps, ",");
        fprintf(f, "%u\n", x->rules);
    }
    /* a query's goodput: the first query's bytes over each one's time */
    double bits = (double)m->q_bytes * 8, total = 0;
    samples q;
    samples_init(&q);
    for (int i = 0; i < m->done; i++) {
        double qct = ps_to_s(m->q[i].end_ps - m->q[i].start_ps);
        total += qct;
        samples_add(&q, qct);
    }
    int senders = 0;
    for (size_t h = 0; h < network_endpoints(m->n); h++)
        senders += m->sender[h];
    json_t *j = json_object();
    json_object_set_new(j, "scheme", json_string(schemes[m->c.scheme]));
    if (m->c.scheme == SCHEME_SDTCP)
        json_object_set_new(j, "mode", json_string(modes[m->c.mode]));
    json_object_set_new(j, "senders", json_integer(senders));
    json_object_set_new(j, "background_flows", json_integer((json_int_t)m->bg_flows));
    json_object_set_new(j, "rounds_completed", json_integer(m->done));
    out_json_num(j, "qct_p50_s", samples_quantile(&q, 0.5));
    out_json_num(j, "qct_p99_s", samples_quantile(&q, 0.99));
    samples_fini(&q);
    double gp = m->done ? (double)m->done * bits / total : NAN;
    out_json_num(j, "burst_goodput_bps", gp);
    out_json_num(j, "burst_goodput_fraction", gp / (double)m->mon->cfg.rate_bps);
    uint64_t d, p;
    flow_losses(m, true, &d, &p);
    json_object_set_new(j, "burst_drops", json_integer((json_int_t)d));
    json_object_set_new(j, "burst_packets", json_integer((json_int_t)p));
    out_json_num(j, "burst_loss_rate", p ? (double)d / (double)p : NAN);
    flow_losses(m, false, &d, &p);
    json_object_set_new(j, "background_drops", json_integer((json_int_t)d));
    out_json_num(j, "background_loss_rate", p ? (double)d / (double)p : NAN);
    /* before the first query (its second half: the background's warm-up
     * left out), during the queries, after the last one (its second half) */
    int64_t now = sim_now(s), bg0 = m->bg_start < 0 ? 0 : m->bg_start;
    int64_t first_end = m->nq ? m->q[0].start_ps : now;
    int64_t last_end = m->done ? m->q[m->done - 1].end_ps : now;
    out_json_num(j, "bg_bps_before", bg_mean(m, bg0 + (first_end - bg0) / 2, first_end));
    out_json_num(j, "bg_bps_during", bg_mean(m, first_end, last_end));
    out_json_num(j, "bg_bps_after", bg_mean(m, last_end + (now - last_end) / 2, now));
    int64_t mq = 0;
    for (size_t i = 0; i < m->nts; i++)
        if (m->ts[i].queue > mq)
            mq = m->ts[i].queue;
    json_object_set_new(j, "monitor", json_string(m->mon->base.name));
    json_object_set_new(j, "monitor_max_queue_bytes", json_integer(m->mon->stat_max_bytes));
    json_object_set_new(j, "monitor_max_sampled_queue_bytes", json_integer(mq));
    sdn_counts k;
    sdn_get_counts(m->ctl, &k);
    uint64_t msgs = sdn_messages(m->ctl);
    json_t *c = json_object();
    json_object_set_new(c, "messages", json_integer((json_int_t)msgs));
    out_json_num(c, "messages_per_sim_s", (double)msgs / ps_to_s(sim_now(s)));
    json_object_set_new(c, "congestion", json_integer((json_int_t)k.cn));
    json_object_set_new(c, "congestion_suppressed", json_integer((json_int_t)k.cn_suppressed));
    json_object_set_new(c, "congestion_repeated", json_integer((json_int_t)k.cn_repeat));
    json_object_set_new(c, "cleared", json_integer((json_int_t)k.cr));
    json_object_set_new(c, "flow_stats", json_integer((json_int_t)k.stats));
    json_object_set_new(c, "flow_mods", json_integer((json_int_t)k.mods));
    json_object_set_new(c, "flow_deletes", json_integer((json_int_t)k.dels));
    json_object_set_new(c, "rules_expired", json_integer((json_int_t)k.expired));
    json_object_set_new(c, "acks_rewritten", json_integer((json_int_t)k.rewrites));
    out_json_num(c, "first_notification_sent_s",
                 m->first_cn_ps < 0 ? NAN : ps_to_s(m->first_cn_sent_ps));
    out_json_num(c, "first_notification_handled_s",
                 m->first_cn_ps < 0 ? NAN : ps_to_s(m->first_cn_ps));
    if (m->pol) {
        sdtcp_counts pc;
        sdtcp_get_counts(m->pol, &pc);
        json_object_set_new(c, "capped_background", json_integer((json_int_t)pc.capped_bg));
        json_object_set_new(c, "capped_burst", json_integer((json_int_t)pc.capped_burst));
        json_object_set_new(c, "band_mild", json_integer((json_int_t)pc.band[0]));
        json_object_set_new(c, "band_moderate", json_integer((json_int_t)pc.band[1]));
        json_object_set_new(c, "band_severe", json_integer((json_int_t)pc.band[2]));
    }
    json_object_set_new(j, "controller", c);
    if (m->ic) {
        uint64_t inc, dec, rw;
        ictcp_counts(m->ic, &inc, &dec, &rw);
        json_t *ic = json_object();
        json_object_set_new(ic, "increases", json_integer((json_int_t)inc));
        json_object_set_new(ic, "decreases", json_integer((json_int_t)dec));
        json_object_set_new(ic, "acks_rewritten", json_integer((json_int_t)rw));
        json_object_set_new(j, "ictcp", ic);
    }
    json_object_set_new(sum, "sdtcp", j);
    return 0;
}

static void sd_fini(void *st)
{
    sd_ext *m = st;
    sdtcp_destroy(m->pol);
    ictcp_destroy(m->ic);
    sdn_destroy(m->ctl);
    free(m->bg);
    free(m->sw_node);
    free(m->sw_lat);
    free(m->obs);
    free(m->q);
    free(m->burst);
    free(m->sender);
    free(m->ts);
}

/* What `aisim run` prints under "sdtcp:" (netext.h). */
static const model_headline sd_headlines[] = {
    {"sdtcp.scheme", "scheme", NULL, 0},
    {"sdtcp.qct_p50_s", "query completion median", "s", 0},
    {"sdtcp.qct_p99_s", "query completion p99", "s", 0},
    {"sdtcp.burst_goodput_fraction", "burst goodput, of link", "%", 0},
    {"sdtcp.burst_loss_rate", "burst packet loss", "%", 0},
    {"sdtcp.bg_bps_during", "background during bursts", "bit/s", 0},
    {"sdtcp.controller.flow_mods", "controller flow-mods", "", 0},
    {NULL, NULL, NULL, 0},
};

const netext_ops sdtcp_ext_ops = {
    .name = "sdtcp",
    .summary = "SDTCP: SDN receive-window control of TCP incast, with NewReno/DCTCP/ICTCP",
    .keys = sd_keys,
    .state_size = sizeof(sd_ext),
    .configure = sd_configure,
    .start = sd_start,
    .on_send = sd_on_send,
    .on_done = sd_on_done,
    .report = sd_report,
    .fini = sd_fini,
    .headlines = sd_headlines,
};
