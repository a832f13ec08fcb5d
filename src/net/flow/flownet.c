/*
 * flownet.c - the flow-level plane (flownet.h; docs/flow-level.md).
 *
 * It is a transport (transport.h) that sends no packets: the network keeps
 * its connections, messages, tables, failures and reaping as on the packet
 * plane, so every workload of the message API runs unchanged on either
 * plane, and the packet plane's per-packet code does not know this one
 * exists.
 *
 * A connection with bytes left to send is one flow of the max-min solver
 * (maxmin.h) over its path's directed links (link id * 2 + direction, as
 * topo_route_path gives them): its ECMP route, or, when the scenario
 * sprays, every equal-cost path with an equal share (weight k/P on a link
 * that k of the P paths cross).  A link offers rate × payload/(payload +
 * header) of the scenario's transport × `efficiency` to its flows; a flow
 * gets at most `rate_cap`.  Rates are recomputed when a flow starts or
 * ends, when a message is appended to an idle connection, at a failure or
 * repair and when routing moves flows: one solve per instant (an event at
 * the current time collects every change of that instant), over the
 * components those changes touch.  Each flow keeps the bytes it has sent
 * at its last rate change and one pending event: the moment its sent bytes
 * reach the end of its oldest unsent message.  Then that message's last
 * byte arrives `delay` later: the propagation delay of the path plus the
 * first packet's serialisation at every hop but the slowest (whose rate
 * the fluid already counts), so a message alone on an empty path completes
 * at the packet plane's ideal time (topo_route_ideal_ps) for whole packets.
 * A message of full packets and a short last one has its own delay: its
 * ideal time less its fluid time at the slowest port's payload rate, so
 * that it too meets the ideal time when alone instead of beating it by up
 * to a header's serialisation (the fluid spreads the headers over the
 * payload).  A message shorter than one packet keeps the path's delay, a
 * full first packet's (the fluid collectives, coll_fluid.c, are matched to
 * that): never below its ideal time.
 *
 * Failures: a failed link offers 0 from the failure on (its flows stall,
 * as a blackholed path does), and routing moves flows at convergence
 * (network.c calls paths_changed), as on the packet plane.
 *
 * Not modelled: queues, losses, congestion control dynamics (slow start,
 * incast timeouts), PFC, priorities: see docs/flow-level.md.
 */
#include "net/flow/flownet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/log.h"
#include "aisim/units.h"
#include "net/flow/maxmin.h"
#include "net/network_int.h"

typedef struct flow_keys {
    double efficiency;
    int64_t rate_cap;
    bool flows_csv;
} flow_keys;

static const cfg_key flow_schema[] = {
    {.name = "efficiency", .type = CFG_FLOAT, .off = offsetof(flow_keys, efficiency),
     .def = "1", .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "share of each link's payload rate that flows get (a congestion control's "
             "utilisation, e.g. 0.95)"},
    {.name = "rate_cap", .type = CFG_RATE, .off = offsetof(flow_keys, rate_cap),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,
     .help = "the most one connection may get, payload bit/s (a NIC's or a queue pair's "
             "limit; absent: none)"},
    {.name = "flows_csv", .type = CFG_BOOL, .off = offsetof(flow_keys, flows_csv),
     .def = "true", .help = "write flows.csv and fct_cdf.csv (a row per message); false: "
     "only their summary (fct_by_size), for runs of millions of messages"},
    {0},
};

typedef struct fl_conn fl_conn;

typedef struct flownet {
    network *n;
    sim *s;
    topo *t;
    const transport_ops *inner;     /* the scenario's transport (framing) */
    void *inner_tp;
    flow_keys k;
    double goodput;                 /* payload / (payload + header) */
    mmf *mm;
    size_t nl;                      /* directed links: 2 per link */
    double *cap_bps;                /* what each offers when up, payload bit/s */
    double *bytes;                  /* payload bytes each has carried */
    fl_conn **of;                   /* solver flow id -> connection */
    size_t nof;
    bool solve_pending;
    bool fails_armed;
    uint64_t solves, recomputed;    /* solves run; flows they recomputed */
    size_t peak_flows;
    double sent, arrived;           /* payload bytes sent and arrived, every flow */
    uint64_t cut_off;               /* connections aborted: destination unreachable */
} flownet;

struct fl_conn {
    conn c;
    flownet *f;
    uint32_t mf;                    /* solver flow id; UINT32_MAX: not sending */
    bool starting;                  /* its start event is pending */
    sim_event_id start_ev, ev;      /* start; next message end sent */
    double sent;                    /* payload bytes sent by last_ps */
    int64_t last_ps;
    double rate_bps;                /* payload bit/s since last_ps */
    uint64_t stream;                /* bytes to send (UINT64_MAX: endless) */
    int64_t delay_ps;               /* a byte's arrival after it is sent */
    int64_t slowest_bps;            /* the slowest port's line rate on its route */
    uint64_t last_end;              /* end of the last message sent */
    uint64_t *tg;                   /* message ends not yet sent, a ring */
    size_t th, tn, tcap;
    uint64_t delivered;             /* bytes the receiver holds (message ends arrived) */
    bool cut;                       /* aborted: its destination became unreachable */
    uint32_t in_flight;             /* arrival events pending */
    uint32_t *hl;                   /* its links and weights (solver's view) */
    double *hw;
    uint32_t nh;
    sink rx;                        /* never receives: no packets here */
};

/* ---- the transport's hooks that are not the plane's business --------- */

static int fl_setup(void **tp, const void *bound, const cfg_node *sec, const char *path,
                    err *e)
{
    (void)tp, (void)bound, (void)sec, (void)path, (void)e;
    return 0;                       /* attached by flownet_attach, not by name */
}

static void fl_teardown(void *tp)
{
    flownet *f = tp;
    if (f->inner)
        f->inner->teardown(f->inner_tp);
    mmf_destroy(f->mm);
    free(f->cap_bps);
    free(f->bytes);
    free(f->of);
    free(f);
}

static void fl_framing(const void *tp, uint32_t *payload, uint32_t *header)
{
    const flownet *f = tp;
    f->inner->framing(f->inner_tp, payload, header);
}

static void no_packets(sink *self, pkt *p)
{
    (void)self, (void)p;
    abort();                        /* the flow plane makes none */
}

static void fl_pcap(const conn *c, const pkt *p, pcap_l4 *h)
{
    (void)c, (void)p;
    memset(h, 0, sizeof *h);
}

static const transport_ops flow_plane;

/* ---- flows in the solver ---------------------------------------------- */

/* Brings fc's sent bytes and its links' counters to now, at its rate. */
static void settle(flownet *f, fl_conn *fc)
{
    int64_t now = sim_now(f->s);
    if (fc->mf != UINT32_MAX && fc->rate_bps > 0 && now > fc->last_ps) {
        double b = fc->rate_bps * (double)(now - fc->last_ps) / 8e12;
        if (fc->stream != UINT64_MAX && fc->sent + b > (double)fc->stream)
            b = (double)fc->stream - fc->sent;
        fc->sent += b;
        f->sent += b;
        for (uint32_t i = 0; i < fc->nh; i++)
            f->bytes[fc->hl[i]] += fc->hw[i] * b;
    }
    fc->last_ps = now;
}

static void on_solve(sim *s, void *obj, uint64_t arg);

static void want_solve(flownet *f)
{
    if (f->solve_pending)
        return;
    f->solve_pending = true;
    sim_schedule(f->s, sim_now(f->s), on_solve, f, 0);
}

static void on_target(sim *s, void *obj, uint64_t arg);

/* Schedules fc's next event: its oldest unsent message's end sent. */
static void arm(flownet *f, fl_conn *fc)
{
    if (fc->ev) {
        sim_cancel(f->s, fc->ev);
        fc->ev = 0;
    }
    if (!fc->tn)
        return;                     /* endless: nothing completes */
    double need = (double)fc->tg[fc->th] - fc->sent;
    int64_t at;
    if (need <= 0)
        at = sim_now(f->s);
    else if (fc->rate_bps > 0)
        at = fc->last_ps + (int64_t)ceil(need * 8e12 / fc->rate_bps);
    else
        return;                     /* stalled until a rate comes */
    fc->ev = sim_schedule(f->s, at, on_target, fc, 0);
}

static void rate_changed(void *ctx, uint32_t id, double old)
{
    (void)old;
    flownet *f = ctx;
    fl_conn *fc = f->of[id];
    settle(f, fc);
    fc->rate_bps = mmf_rate(f->mm, id);
    arm(f, fc);
}

static void on_solve(sim *s, void *obj, uint64_t arg)
{
    (void)s, (void)arg;
    flownet *f = obj;
    f->solve_pending = false;
    f->solves++;
    f->recomputed += mmf_solve(f->mm, rate_changed, f);
}

static void add_hop(fl_conn *fc, uint32_t l, double w, size_t *cap)
{
    for (uint32_t i = 0; i < fc->nh; i++)
        if (fc->hl[i] == l) {
            fc->hw[i] += w;
            return;
        }
    if (fc->nh == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        fc->hl = xrealloc(fc->hl, *cap * sizeof *fc->hl);
        fc->hw = xrealloc(fc->hw, *cap * sizeof *fc->hw);
    }
    fc->hl[fc->nh] = l;
    fc->hw[fc->nh++] = w;
}

/* The delay of a byte from sent to received on route fwd, and the
 * slowest port's line rate on it (*slowest). */
static int64_t path_delay(network *n, const route *fwd, int64_t *slowest)
{
    size_t len;
    const int32_t *hops = topo_route_path(n->t, fwd, &len);
    *slowest = INT64_MAX;
    for (size_t i = 0; i < len; i++) {
        int64_t r = topo_link_port(n->t, hops[i] >> 1, hops[i] & 1)->cfg.rate_bps;
        *slowest = r < *slowest ? r : *slowest;
    }
    uint32_t full = n->payload + n->header;
    return topo_route_ideal_ps(fwd, n->payload, n->payload, n->header) -
           units_tx_time_ps(full, *slowest);
}

bool network_flow_path(network *n, const conn *c, double *rate_bps, int64_t *delay_ps)
{
    if (n->ops != &flow_plane)
        return false;
    /* a connection that has not sent yet: the route it will take */
    const route *fwd = c->fwd ? c->fwd : topo_route_flow(n->t, c->src, c->dst, c->path_key);
    if (!fwd)
        return false;
    const flownet *f = n->tp;
    int64_t slowest;
    *delay_ps = path_delay(n, fwd, &slowest);
    double r = (double)slowest * f->goodput * f->k.efficiency;
    *rate_bps = f->k.rate_cap > 0 && (double)f->k.rate_cap < r ? (double)f->k.rate_cap : r;
    return true;
}

/* fc's links now: its route, or every equal-cost path when spraying; and
 * the delay of a byte from sent to received, from its route. */
static void take_path(flownet *f, fl_conn *fc)
{
    conn *c = &fc->c;
    network *n = f->n;
    size_t cap = 0, np = 1, len;
    free(fc->hl);
    free(fc->hw);
    fc->hl = NULL;
    fc->hw = NULL;
    fc->nh = 0;
    const route *const *paths = &c->fwd;
    if (c->spray != CONN_PATH_FIXED)
        paths = topo_paths(f->t, c->src, c->dst, &np);
    for (size_t p = 0; p < np; p++) {
        const int32_t *hops = topo_route_path(f->t, paths[p], &len);
        for (size_t i = 0; i < len; i++)
            add_hop(fc, (uint32_t)hops[i], 1.0 / (double)np, &cap);
    }
    fc->delay_ps = path_delay(n, c->fwd, &fc->slowest_bps);
}

/* The delay after which the last byte of a message of `bytes` arrives once
 * the fluid has sent it: the path's delay for whole packets and for less
 * than one; otherwise the message's ideal time less its transfer at the
 * slowest port's payload rate (at least the path's delay: the ideal time
 * holds every header). */
static int64_t msg_delay(const flownet *f, const fl_conn *fc, uint64_t bytes)
{
    const network *n = f->n;
    if (bytes <= n->payload || bytes % n->payload == 0 || !fc->c.fwd)
        return fc->delay_ps;
    double fluid_ps = (double)bytes * 8 / ((double)fc->slowest_bps * f->goodput) * 1e12;
    double d = (double)topo_route_ideal_ps(fc->c.fwd, bytes, n->payload, n->header) - fluid_ps;
    return d > (double)fc->delay_ps ? (int64_t)llround(d) : fc->delay_ps;
}

static void enter(flownet *f, fl_conn *fc)
{
    take_path(f, fc);
    fc->mf = mmf_add(f->mm, fc->hl, fc->hw, fc->nh, (double)f->k.rate_cap);
    if (fc->mf >= f->nof) {
        size_t nc = f->nof ? 2 * f->nof : 64;
        while (nc <= fc->mf)
            nc *= 2;
        f->of = xrealloc(f->of, nc * sizeof *f->of);
        memset(f->of + f->nof, 0, (nc - f->nof) * sizeof *f->of);
        f->nof = nc;
    }
    f->of[fc->mf] = fc;
    if (mmf_flows(f->mm) > f->peak_flows)
        f->peak_flows = mmf_flows(f->mm);
    fc->rate_bps = 0;
    fc->last_ps = sim_now(f->s);
    want_solve(f);
    arm(f, fc);                     /* a message of 0 bytes is sent at once */
}

static void leave(flownet *f, fl_conn *fc)
{
    settle(f, fc);
    if (fc->ev)
        sim_cancel(f->s, fc->ev);
    fc->ev = 0;
    mmf_remove(f->mm, fc->mf);
    f->of[fc->mf] = NULL;
    fc->mf = UINT32_MAX;
    fc->rate_bps = 0;
    want_solve(f);
}

static void on_arrive(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    fl_conn *fc = obj;
    fc->in_flight--;
    if (fc->cut)
        return;                     /* aborted: nothing more is delivered */
    if (arg > fc->delivered) {
        fc->f->arrived += (double)(arg - fc->delivered);
        fc->delivered = arg;
    }
    fc->c.delivered(&fc->c, arg);
}

/* fc's oldest unsent message is sent: its last byte arrives delay_ps on. */
static void on_target(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    fl_conn *fc = obj;
    flownet *f = fc->f;
    fc->ev = 0;
    settle(f, fc);
    uint64_t end = fc->tg[fc->th];
    fc->th = (fc->th + 1) % fc->tcap;
    fc->tn--;
    if ((double)end > fc->sent) {
        f->sent += (double)end - fc->sent;
        fc->sent = (double)end;     /* rounding of the fluid, at most a byte */
    }
    fc->in_flight++;
    sim_schedule(s, sim_now(s) + msg_delay(f, fc, end - fc->last_end), on_arrive, fc, end);
    fc->last_end = end;
    if (fc->stream != UINT64_MAX && fc->sent >= (double)fc->stream)
        leave(f, fc);
    else
        arm(f, fc);
}

static void push_target(fl_conn *fc, uint64_t end)
{
    if (fc->tn == fc->tcap) {
        size_t nc = fc->tcap ? 2 * fc->tcap : 4;
        uint64_t *q = xcalloc(nc, sizeof *q);
        for (size_t i = 0; i < fc->tn; i++)
            q[i] = fc->tg[(fc->th + i) % fc->tcap];
        free(fc->tg);
        fc->tg = q;
        fc->th = 0;
        fc->tcap = nc;
    }
    fc->tg[(fc->th + fc->tn++) % fc->tcap] = end;
}

/* ---- failures ---------------------------------------------------------- */

static void set_link(flownet *f, int link, bool up)
{
    for (int d = 0; d < 2; d++) {
        uint32_t l = (uint32_t)(2 * link + d);
        mmf_set_capacity(f->mm, l, up ? f->cap_bps[l] : 0);
    }
    want_solve(f);
}

static void abort_flow(flownet *f, fl_conn *fc)
{
    if (fc->mf != UINT32_MAX)
        leave(f, fc);
    fc->tn = 0;                     /* nothing more completes */
    if (fc->stream == UINT64_MAX)
        fc->stream = (uint64_t)fc->sent;
    fc->cut = true;
    f->cut_off++;
    fc->c.aborted(&fc->c);
}

/* Routing has converged after failure i: a flow whose endpoints no route
 * joins any more, with no repair to come, is aborted, as the packet
 * plane's transport gives up on an unreachable receiver (TCP after
 * max_retries timeouts; here at once, there being no timeouts to count). */
static void on_converged(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    flownet *f = obj;
    network *n = f->n;
    int64_t now = sim_now(s);
    for (size_t i = 0; i < n->nfails; i++)
        if (n->fails[i].repair > now)
            return;                 /* a repair may join them again */
    for (size_t i = 0; i < f->nof; i++) {
        fl_conn *fc = f->of[i];
        if (fc && fc->stream != 0 &&
            !topo_route_ecmp(f->t, fc->c.src, fc->c.dst, fc->c.path_key))
            abort_flow(f, fc);
    }
}

/* arg: failure index << 1 | (1: repair). */
static void on_link_event(sim *s, void *obj, uint64_t arg)
{
    flownet *f = obj;
    size_t i = arg >> 1;
    set_link(f, f->n->fail_link[i], arg & 1);
    if (!(arg & 1))
        sim_schedule(s, sim_now(s) + f->n->fails[i].convergence, on_converged, f, i);
}

static void arm_failures(flownet *f)
{
    network *n = f->n;
    f->fails_armed = true;
    int64_t now = sim_now(f->s);
    for (size_t i = 0; i < n->nfails; i++) {
        int64_t at = n->fails[i].at, rep = n->fails[i].repair;
        sim_schedule(f->s, at > now ? at : now, on_link_event, f, (uint64_t)i << 1);
        if (rep)
            sim_schedule(f->s, rep > now ? rep : now, on_link_event, f, (uint64_t)i << 1 | 1);
    }
}

/* ---- connections ------------------------------------------------------- */

static void fl_conn_init(conn *c, sink **at_src, sink **at_dst)
{
    fl_conn *fc = (fl_conn *)c;
    flownet *f = c->tp;
    fc->f = f;
    fc->mf = UINT32_MAX;
    fc->rx = (sink){no_packets, "flow.none"};
    *at_src = *at_dst = &fc->rx;
    if (!f->fails_armed)
        arm_failures(f);
}

static void on_start(sim *s, void *obj, uint64_t arg)
{
    (void)s, (void)arg;
    fl_conn *fc = obj;
    fc->starting = false;
    fc->start_ev = 0;
    enter(fc->f, fc);
}

static void fl_start(conn *c, int64_t at_ps, uint64_t bytes, int64_t base_rtt_ps)
{
    (void)base_rtt_ps;
    fl_conn *fc = (fl_conn *)c;
    flownet *f = fc->f;
    network *n = f->n;
    fc->stream = bytes;
    /* The ends of the messages queued so far (usually one). */
    const nconn *k = idtab_get(&n->conns, c->id);
    for (size_t i = 0; i < k->qn; i++) {
        const nmsg *e = idtab_get(&n->msgs, k->q[(k->qh + i) % k->qcap]);
        if (e->m.bytes != UINT64_MAX)
            push_target(fc, e->m.offset + e->m.bytes);
    }
    if (at_ps > sim_now(f->s)) {
        fc->starting = true;
        fc->start_ev = sim_schedule(f->s, at_ps, on_start, fc, 0);
    } else {
        enter(f, fc);
    }
}

static void fl_append(conn *c, uint64_t bytes)
{
    fl_conn *fc = (fl_conn *)c;
    fc->stream += bytes;
    push_target(fc, fc->stream);
    if (fc->mf == UINT32_MAX && !fc->starting)
        enter(fc->f, fc);
}

static void fl_paths_changed(conn *c)
{
    fl_conn *fc = (fl_conn *)c;
    flownet *f = fc->f;
    if (fc->mf == UINT32_MAX)
        return;                     /* takes its path when it next sends */
    leave(f, fc);
    enter(f, fc);
}

static void fl_stop(conn *c)
{
    fl_conn *fc = (fl_conn *)c;
    flownet *f = fc->f;
    if (fc->start_ev)
        sim_cancel(f->s, fc->start_ev);
    if (fc->ev)
        sim_cancel(f->s, fc->ev);
    if (fc->mf != UINT32_MAX) {
        mmf_remove(f->mm, fc->mf);
        f->of[fc->mf] = NULL;
    }
    free(fc->tg);
    free(fc->hl);
    free(fc->hw);
}

/* What the receiver holds now: the ends of messages that have arrived, or,
 * past the last message end sent, the bytes sent one path delay ago (a
 * message without a size, or one the run's end cut, delivers as it goes,
 * as on the packet plane). */
static uint64_t held_now(const fl_conn *fc)
{
    const flownet *f = fc->f;
    if (fc->cut || fc->mf == UINT32_MAX || fc->rate_bps <= 0)
        return fc->delivered;
    int64_t at = sim_now(f->s) - fc->delay_ps;
    double sent = fc->sent + fc->rate_bps * (double)(at - fc->last_ps) / 8e12;
    if (fc->stream != UINT64_MAX && sent > (double)fc->stream)
        sent = (double)fc->stream;
    if (!(sent > (double)fc->last_end) || fc->delivered < fc->last_end)
        return fc->delivered;
    return (uint64_t)sent;
}

static void fl_stats(const conn *c, conn_stats *st)
{
    *st = (conn_stats){.delivered = held_now((const fl_conn *)c)};
}

static bool fl_idle(const conn *c)
{
    const fl_conn *fc = (const fl_conn *)c;
    return fc->mf == UINT32_MAX && !fc->starting && !fc->in_flight && !fc->tn &&
           fc->stream != UINT64_MAX;
}

static const transport_ops flow_plane = {
    .name = "flow",
    .summary = "the flow-level plane: max-min fair fluid flows, no packets",
    .conn_size = sizeof(fl_conn),
    .keys = flow_schema,
    .cfg_size = sizeof(flow_keys),
    .setup = fl_setup,
    .teardown = fl_teardown,
    .framing = fl_framing,
    .conn_init = fl_conn_init,
    .start = fl_start,
    .append = fl_append,
    .paths_changed = fl_paths_changed,
    .stop = fl_stop,
    .stats = fl_stats,
    .idle = fl_idle,
    .pcap = fl_pcap,
};

/* ---- attaching, reporting ---------------------------------------------- */

static int packet_only(const cfg_node *v, const char *path, const char *key, const char *what,
                       err *e)
{
    char sub[512];
    if (!v || (cfg_kind(v) == CFG_SEQ && cfg_len(v) == 0))
        return 0;
    return cfg_err(e, AISIM_EINVAL, v, cfg_path(sub, sizeof sub, path, key),
                   "%s needs the packet plane (net.plane: packet); found net.plane: flow, "
                   "whose flows have no packets", what);
}

int flownet_attach(network *n, cfg_node *sec, cfg_node *fsec, const char *path, err *e)
{
    (void)sec;
    int r;
    if ((r = packet_only(n->cfg.pcap, path, "pcap", "a packet capture", e)) ||
        (r = packet_only(n->cfg.sample_ports, path, "sample_ports", "queue sampling", e)) ||
        (r = packet_only(n->cfg.faults, path, "faults", "packet faults (loss, delay, "
                         "corruption)", e)))
        return r;
    flownet *f = xcalloc(1, sizeof *f);
    f->n = n;
    f->s = n->s;
    f->t = n->t;
    f->inner = n->ops;
    f->inner_tp = n->tp;
    n->ops = &flow_plane;
    n->tp = f;
    char sub[512];
    cfg_path(sub, sizeof sub, path, "flow");
    if (fsec && (r = cfg_bind(fsec, sub, flow_schema, &f->k, e)))
        return r;
    if (!fsec) {
        f->k.efficiency = 1;
        f->k.flows_csv = true;
    }
    f->goodput = (double)n->payload / (double)(n->payload + n->header);
    f->nl = 2 * topo_links(n->t);
    f->mm = mmf_create(f->nl);
    f->cap_bps = xcalloc(f->nl ? f->nl : 1, sizeof *f->cap_bps);
    f->bytes = xcalloc(f->nl ? f->nl : 1, sizeof *f->bytes);
    for (size_t l = 0; l < f->nl; l++) {
        double rate = (double)topo_link_port(n->t, (int)(l >> 1), (int)(l & 1))->cfg.rate_bps;
        f->cap_bps[l] = rate * f->goodput * f->k.efficiency;
        mmf_set_capacity(f->mm, (uint32_t)l, f->cap_bps[l]);
    }
    return 0;
}

void flownet_report(network *n, json_t *sum)
{
    flownet *f = n->tp;
    for (size_t i = 0; i < f->nof; i++)
        if (f->of[i])
            settle(f, f->of[i]);
    uint32_t full = n->payload + n->header;
    for (size_t l = 0; l < f->nl; l++) {
        port *q = topo_link_port(n->t, (int)(l >> 1), (int)(l & 1));
        double wb = f->bytes[l] / f->goodput;
        q->stat_tx_bytes = (uint64_t)llround(wb);
        q->stat_tx_pkts = (uint64_t)ceil(wb / full);
        q->stat_busy_ps = q->cfg.rate_bps ? (int64_t)llround(wb * 8e12 /
                                                             (double)q->cfg.rate_bps) : 0;
    }
    json_object_set_new(sum, "plane", json_string("flow"));
    if (f->cut_off)
        LOG(LOG_WARN, "net", "%llu connection(s) aborted: link failures left no route between "
            "their endpoints", (unsigned long long)f->cut_off);
    json_object_set_new(sum, "flow_solves", json_integer((json_int_t)f->solves));
    json_object_set_new(sum, "flow_rates_recomputed", json_integer((json_int_t)f->recomputed));
    json_object_set_new(sum, "flow_peak_flows", json_integer((json_int_t)f->peak_flows));
    json_object_set_new(sum, "flow_solver_bytes", json_integer((json_int_t)mmf_bytes(f->mm)));
}

void flownet_bytes(const network *n, topo_bytes *b)
{
    const flownet *f = n->tp;
    /* bytes of the flows' own, as the packet plane counts packets'
     * (payload and headers); arrived also counts what the receivers of
     * live flows hold now beyond the last message end (held_now) */
    double arrived = f->arrived;
    for (size_t i = 0; i < f->nof; i++)
        if (f->of[i])
            arrived += (double)(held_now(f->of[i]) - f->of[i]->delivered);
    b->injected = (uint64_t)llround(f->sent / f->goodput);
    b->delivered = (uint64_t)llround(arrived / f->goodput);
    b->delivered = b->delivered < b->injected ? b->delivered : b->injected;
    b->dropped = 0;
    b->in_network = b->injected - b->delivered;
}

bool flownet_flows_csv(const network *n)
{
    return ((const flownet *)n->tp)->k.flows_csv;
}
