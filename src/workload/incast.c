/*
 * incast.c - the `incast` workload: rounds in which `senders` hosts (the
 * first other hosts, those on other servers first, so that on GPU
 * topologies the incast crosses the network, not NVLink) each send
 * `block` bytes to `receiver`; the next round starts when every block
 * of the previous one has arrived (the synchronized-read workload of the
 * incast papers), on one persistent connection per sender unless
 * `persistent` is false.  With a `period`, round k starts at start + k
 * period, or when round k-1 has completed if that is later (queries on a
 * clock, as in the SDTCP and ICTCP experiments); with a `jitter`, each
 * sender answers after a uniform delay in [0, jitter) (server time).
 * `senders` is a count (the first N other hosts, as above) or a list of
 * host names.  Each block is one message (one row of flows.csv, tagged
 * with its round); incast.csv has each round's duration and goodput.
 */
#include <math.h>
#include <stdlib.h>

#include "aisim/rng.h"
#include "aisim/units.h"
#include "aisim/workload.h"

typedef struct incast_cfg {
    const char *receiver;
    cfg_node *senders;
    int64_t block, rounds, start, period, jitter;
    bool persistent;
} incast_cfg;

static const cfg_key incast_keys[] = {
    {.name = "receiver", .type = CFG_STR, .off = offsetof(incast_cfg, receiver),
     .help = "receiving host"},
    {.name = "senders", .type = CFG_NODE, .off = offsetof(incast_cfg, senders),
     .help = "senders: a count N (the first N other hosts, hosts on other servers first) "
     "or a list of host names"},
    {.name = "block", .type = CFG_SIZE, .off = offsetof(incast_cfg, block), .def = "256KiB",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "bytes each sender sends per round"},
    {.name = "rounds", .type = CFG_INT, .off = offsetof(incast_cfg, rounds), .def = "10",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000000, .help = "rounds"},
    {.name = "start", .type = CFG_TIME, .off = offsetof(incast_cfg, start), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "start of the first round"},
    {.name = "period", .type = CFG_TIME, .off = offsetof(incast_cfg, period), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "round k starts at start + k period or when round "
     "k-1 completes, whichever is later (0s: back to back)"},
    {.name = "jitter", .type = CFG_TIME, .off = offsetof(incast_cfg, jitter), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "each sender answers after a uniform delay in [0, "
     "jitter)"},
    {.name = "persistent", .type = CFG_BOOL, .off = offsetof(incast_cfg, persistent),
     .def = "true", .help = "one connection per sender for every round (its window carries "
     "over), as in the incast experiments; false: a new connection per block"},
    {0},
};

typedef struct incast_wl {
    network *n;
    incast_cfg c;
    int rx, *tx, nsenders;
    rng jr;                     /* answer delays */
    sim_timer next;             /* the next round (with a period) */
    conn **conns;               /* persistent connections, per sender */
    int round, round_left;
    int64_t round_start;
    double *round_secs;         /* duration of each completed round */
} incast_wl;

/* Which hosts share host rx's server: those joined to it by intra-server
 * links through one switch (its NVSwitch).  An array by host index. */
static bool *same_server(topo *t, int rx)
{
    size_t nh = topo_hosts(t), nl = topo_links(t);
    bool *near = xcalloc(nh + 1, sizeof *near);
    int rxn = topo_host_node(t, rx);
    for (size_t l = 0; l < nl; l++) {
        int a, b;
        topo_link_ends(t, (int)l, &a, &b);
        if (!topo_link_is_intra_host(t, (int)l) || (a != rxn && b != rxn))
            continue;
        int sw = a == rxn ? b : a;
        for (size_t m = 0; m < nl; m++) {
            int c, d;
            topo_link_ends(t, (int)m, &c, &d);
            if (!topo_link_is_intra_host(t, (int)m) || (c != sw && d != sw))
                continue;
            int h = topo_node_host(t, c == sw ? d : c);
            if (h >= 0)
                near[h] = true;
        }
    }
    return near;
}

/* `senders`: a count (the first N other hosts, those on other servers
 * first: on GPU topologies the receiver's own server's GPUs would send over
 * NVLink, not through the network the incast is about), or a list of
 * distinct host names other than the receiver. */
static int conf_senders(incast_wl *w, cfg_node *node, const char *sub, err *e)
{
    char kp[600], kp2[700];
    cfg_node *sn = w->c.senders;
    cfg_path(kp, sizeof kp, sub, "senders");
    int nh = (int)network_endpoints(w->n);
    if (cfg_kind(sn) == CFG_SEQ) {
        size_t len = cfg_len(sn);
        if (len == 0)
            return cfg_err(e, AISIM_EINVAL, sn, kp, "expected at least one sender, found an "
                           "empty list");
        w->tx = xcalloc(len, sizeof *w->tx);
        for (size_t i = 0; i < len; i++) {
            cfg_node *it = cfg_at(sn, i);
            cfg_path_index(kp2, sizeof kp2, kp, i);
            int r = network_endpoint(w->n, cfg_scalar(it), it, kp2, e);
            if (r < 0)
                return r;
            bool dup = r == w->rx;
            for (int j = 0; j < w->nsenders; j++)
                dup |= w->tx[j] == r;
            if (dup)
                return cfg_err(e, AISIM_EINVAL, it, kp2, "expected a host other than the "
                               "receiver and the senders before it, found \"%s\" again",
                               cfg_scalar(it));
            w->tx[w->nsenders++] = r;
        }
        return 0;
    }
    static const cfg_key count = {.name = "senders", .type = CFG_INT, .flags = CFG_MIN,
                                  .min = 1};
    int64_t ns = 0;
    int r = cfg_value(sn, kp, &count, &ns, e);
    if (r)
        return r;
    if (ns > nh - 1)
        return cfg_err(e, AISIM_ERANGE, cfg_get(node, "senders"), kp, "the topology has %d "
                       "other hosts, found %lld senders", nh - 1, (long long)ns);
    bool *near = same_server(network_topo(w->n), w->rx);
    w->tx = xcalloc((size_t)ns, sizeof *w->tx);
    for (int pass = 0; pass < 2; pass++)
        for (int h = 0; h < nh && w->nsenders < ns; h++)
            if (h != w->rx && near[h] == (pass == 1))
                w->tx[w->nsenders++] = h;
    free(near);
    return 0;
}

static int incast_configure(void *st, network *n, cfg_node *node, const char *path,
                            const model_env *env, err *e)
{
    incast_wl *w = st;
    w->n = n;
    w->rx = -1;
    if (!node)
        return 0;
    char sub[512], sub2[512];
    int r;
    cfg_path(sub, sizeof sub, path, "incast");
    if ((r = cfg_bind(node, sub, incast_keys, &w->c, e)))
        return r;
    if ((r = network_endpoint(n, w->c.receiver, cfg_get(node, "receiver"),
                              cfg_path(sub2, sizeof sub2, sub, "receiver"), e)) < 0)
        return r;
    w->rx = r;
    if ((r = conf_senders(w, node, sub, e)))
        return r;
    rng_init(&w->jr, env->seed, "incast.jitter", 0);
    w->round_secs = xcalloc((size_t)w->c.rounds, sizeof *w->round_secs);
    w->conns = xcalloc((size_t)w->nsenders, sizeof *w->conns);
    return 0;
}

static void on_block(void *ctx, network *n, const net_msg *m);

static void start_round(incast_wl *w, int64_t now)
{
    w->round_start = now;
    w->round_left = w->nsenders;
    for (int k = 0; k < w->nsenders; k++) {
        int64_t at = now + (w->c.jitter ? (int64_t)rng_below(&w->jr, (uint64_t)w->c.jitter)
                                        : 0);
        if (!w->c.persistent) {
            network_send(w->n, w->tx[k], w->rx, (uint64_t)w->c.block, 0, w->round, at,
                         on_block, w);
            continue;
        }
        if (w->round == 0)
            w->conns[k] = network_connect(w->n, w->tx[k], w->rx, 0);
        network_send_on(w->n, w->conns[k], (uint64_t)w->c.block, w->round, at, on_block, w);
    }
}

static void on_block(void *ctx, network *n, const net_msg *m)
{
    (void)m;
    incast_wl *w = ctx;
    if (--w->round_left == 0) {
        int64_t now = sim_now(network_sim(n));
        w->round_secs[w->round] = ps_to_s(now - w->round_start);
        if (++w->round == w->c.rounds)
            return;
        int64_t due = w->c.start + w->round * w->c.period;
        if (w->c.period)
            sim_timer_arm(network_sim(n), &w->next, due > now ? due : now);
        else
            start_round(w, now);
    }
}

static void on_next(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    start_round(obj, sim_now(s));
}

static void incast_start(void *st)
{
    incast_wl *w = st;
    if (w->rx < 0)
        return;
    /* on a clock, every round starts from the timer (at its time) */
    sim_timer_init(&w->next, on_next, w, 0);
    if (w->c.period)
        sim_timer_arm(network_sim(w->n), &w->next, w->c.start);
    else
        start_round(w, w->c.start);
}

static bool incast_finished(const void *st)
{
    const incast_wl *w = st;
    return w->rx < 0 || w->round == w->c.rounds;
}

static double incast_progress(const void *st)
{
    const incast_wl *w = st;
    return w->rx < 0 ? -1 : (double)w->round / (double)w->c.rounds;
}

static int incast_report(void *st, out *o, json_t *sum, err *e)
{
    incast_wl *w = st;
    if (w->rx < 0)
        return 0;
    FILE *inf = out_file(o, "incast.csv", e);
    if (!inf)
        return e->code;
    fprintf(inf, "round,duration_s,goodput_bps\n");
    double total = 0, bits = (double)w->nsenders * (double)w->c.block * 8;
    for (int i = 0; i < w->round; i++) {
        fprintf(inf, "%d,", i);
        net_csv_num(inf, w->round_secs[i], ",");
        net_csv_num(inf, bits / w->round_secs[i], "\n");
        total += w->round_secs[i];
    }
    json_t *ic = json_object();
    json_object_set_new(ic, "senders", json_integer(w->nsenders));
    json_object_set_new(ic, "block_bytes", json_integer(w->c.block));
    json_object_set_new(ic, "rounds_completed", json_integer(w->round));
    double gp = w->round ? (double)w->round * bits / total : NAN;
    out_json_num(ic, "goodput_bps", gp);
    /* The receiver's network capacity: the rates of the links into it (both
     * ports of a dual-port NIC), not counting an intra-server (NVLink) link. */
    topo *t = network_topo(w->n);
    int rxn = topo_host_node(t, w->rx);
    double in_bps = 0;
    for (size_t l = 0; l < topo_links(t); l++) {
        int a, b;
        topo_link_ends(t, (int)l, &a, &b);
        if (topo_link_is_intra_host(t, (int)l))
            continue;
        if (b == rxn)
            in_bps += (double)topo_link_port(t, (int)l, 0)->cfg.rate_bps;
        else if (a == rxn)
            in_bps += (double)topo_link_port(t, (int)l, 1)->cfg.rate_bps;
    }
    if (in_bps > 0)
        out_json_num(ic, "goodput_fraction_of_link", gp / in_bps);
    json_object_set_new(sum, "incast", ic);
    return 0;
}

static void incast_fini(void *st)
{
    incast_wl *w = st;
    free(w->tx);
    free(w->conns);
    free(w->round_secs);
}

const workload_ops wl_incast = {
    .key = "incast",
    .size = sizeof(incast_wl),
    .configure = incast_configure,
    .start = incast_start,
    .finished = incast_finished,
    .progress = incast_progress,
    .report = incast_report,
    .fini = incast_fini,
};
