/*
 * stellar_rdma.c - Stellar's multi-path core (stellar_mp.h) on RoCEv2 QPs
 * (rdma.h): the transport `stellar_rocev2`, which wraps rocev2 (every key
 * of rocev2, and `multipath`): `net.transport: {name: stellar_rocev2,
 * recovery: selective_repeat, multipath: {algo: obs, paths: 128, ...}}`.
 * docs/stellar.md, section 6.  Registered in src/cli/registry.c.
 *
 * The glue goes through the QP's hooks and rdma.h's setters for wrapping
 * transports; nothing of the QP is copied or written directly:
 *  - congestion control: the rdma_cc_ops table `stellar` (set by the
 *    `multipath` section; `cc:` is then ignored) holds one smp_qp per QP:
 *    one window shared by all its paths (smp_cc), pacing at the line rate;
 *  - loss recovery: its rdma_rec_ops is the QP's sender scoreboard: the PSN
 *    to send next (a lost PSN first, then a new one within the window),
 *    every ACK and NACK (selective: the PSN that arrived), and a timer at
 *    the oldest transmission's RTO (250 us) that declares it lost and
 *    queues that PSN alone for a resend on another path;
 *  - path: qp->path writes the chosen path's entropy (pkt.h) into the data
 *    packet, which the fabric forwards by entropy from the NIC port.
 * The receiver is the QP's selective-repeat receiver (placement by PSN in
 * its bitmap, a NACK naming each out-of-order PSN): the sender never has
 * more than `window` PSNs outstanding, so that bitmap spans at most
 * `window` PSNs.  An ACK names its data packet by the echoed send time
 * (unique per QP: one packet per serialisation), found among the PSNs just
 * below the cumulative point.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/rdma.h"
#include "aisim/stellar_mp.h"
#include "aisim/transport.h"
#include "systems/stellar/stellar_rdma.h"

enum smr_ports { SMR_PORTS_ALL, SMR_PORTS_CHANNEL, SMR_PORTS_ROUTE };

typedef struct smr_keys {
    int algo, out;
    int ports;                  /* enum smr_ports */
    uint32_t *host_qps;         /* `channel`: QPs started so far per source host */
    size_t nhosts;
    int64_t paths, window, rto, avoid_after, avoid;
    bool order_loss, loss_cut;
    int64_t cap_base_ps;        /* the largest data-packet RTT of the QPs
                                   started so far: the RTT cap's base */
    /* the CC's reactions, summed over the QPs as they stop (summary.json) */
    uint64_t acks, marked, cuts_ecn, cuts_rtt, cuts_loss;
} smr_keys;

static const char *const algo_names[] = {"single", "rr", "obs", "bestrtt", "dwrr", "mprdma", NULL};
static const char *const out_names[] = {"pathidx", "hash", NULL};
static const char *const port_names[] = {"all", "channel", "route", NULL};

#define K(f) offsetof(smr_keys, f)
static const cfg_key smr_schema[] = {
    {.name = "algo", .type = CFG_ENUM, .off = K(algo), .def = "obs", .choices = algo_names,
     .help = "path choice per packet"},
    {.name = "paths", .type = CFG_INT, .off = K(paths), .def = "128", .flags = CFG_MIN | CFG_MAX,
     .min = SMP_PATHS_MIN, .max = SMP_PATHS_MAX, .help = "paths (entropy values) per QP"},
    {.name = "entropy", .type = CFG_ENUM, .off = K(out), .def = "hash", .choices = out_names,
     .help = "hash: a per-path hash each switch hashes again (per-path UDP source ports to "
             "ECMP, collisions included); pathidx: an idealised index each hop divides "
             "(no collisions, better than any hash)"},
    {.name = "ports", .type = CFG_ENUM, .off = K(ports), .def = "all", .choices = port_names,
     .help = "the RNIC ports a QP sends on: all (every port toward the destination, both "
             "planes; path i on port i mod ports), channel (NCCL-like: a host's k-th QP on port "
             "k mod ports), route (the port of the QP's ECMP route, chosen by hash)"},
    {.name = "window", .type = CFG_INT, .off = K(window), .def = "0", .flags = CFG_MIN | CFG_MAX,
     .min = 0, .max = SMP_WINDOW_MAX,
     .help = "PSNs outstanding per QP, a multiple of 64 (0: one BDP at RTT + RTO)"},
    {.name = "rto", .type = CFG_TIME, .off = K(rto), .def = "250us", .flags = CFG_MIN_EXCL,
     .min = 0, .help = "per-packet retransmission timeout"},
    {.name = "avoid_after", .type = CFG_INT, .off = K(avoid_after), .def = "3",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000, .help = "timeouts in a row that avoid a path"},
    {.name = "avoid", .type = CFG_TIME, .off = K(avoid), .def = "10ms", .flags = CFG_MIN, .min = 0,
     .help = "for how long a path is avoided"},
    {.name = "order_loss", .type = CFG_BOOL, .off = K(order_loss), .def = "false",
     .help = "also declare loss when a later packet of the same path is acked"},
    {.name = "loss_cut", .type = CFG_BOOL, .off = K(loss_cut), .def = "false",
     .help = "a retransmission timeout also halves the window"},
    {0},
};
#undef K

/* The per-QP state (the CC state of the QP, zeroed by the QP). */
typedef struct smr_st {
    smp_params pr;
    smp_qp q;
    smp_send last;              /* the packet being built */
    sim_timer rto_t;
    int64_t rto_at;             /* armed deadline, INT64_MAX: none */
    bool live;
} smr_st;


static void arm(rdma_qp *qp, smr_st *st)
{
    int64_t at = smp_qp_deadline(&st->q);
    if (at == st->rto_at)
        return;
    st->rto_at = at;
    if (at == INT64_MAX)
        sim_timer_disarm(qp->c.s, &st->rto_t);
    else
        sim_timer_arm(qp->c.s, &st->rto_t, at);
}

static void on_rto(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    rdma_qp *qp = obj;
    smr_st *st = qp->ccs;
    st->rto_at = INT64_MAX;
    smp_qp_timer(&st->q, sim_now(s));
    rdma_qp_set_timeouts(qp, st->q.timeouts);
    qp->c.reroute(&qp->c);      /* the ACKs' route of now */
    arm(qp, st);
    rdma_qp_wake(qp);
}

static void path_hook(rdma_qp *qp, pkt *p)
{
    const smr_st *st = qp->ccs;
    p->rt = NULL;
    p->dst_node = qp->c.dst_node;
    p->entropy = st->last.entropy;
    p->flags |= st->last.flags;
}

/* The round trip of a full data packet and its ACK on the empty network
 * (the network's base RTT is a header-only packet's both ways). */
static int64_t data_rtt(const rdma_qp *qp)
{
    if (!qp->c.fwd || !qp->c.rev)
        return qp->base_rtt_ps;
    return topo_route_ideal_ps(qp->c.fwd, qp->payload, qp->payload, RDMA_HDR_BYTES) +
           topo_route_ideal_ps(qp->c.rev, 0, qp->payload, RDMA_ACK_BYTES);
}

/* The RNIC ports the QP sends on (`ports`): with `all` every port of its
 * host toward the destination, so that its paths span both planes (path i
 * on port i mod ports; a pinned single path on its path's port); with
 * `channel` one port, a host's k-th QP on port k mod ports (NCCL's
 * channels, each on a NIC port in turn); with `route` its ECMP route's.
 * Returns the ports its paths are spread over (1: one). */
static uint32_t bind_ports(rdma_qp *qp, smr_keys *k, const smp_path_ops *ops, uint32_t paths)
{
    port *hp[RDMA_NIC_SLOTS];
    size_t np = k->ports == SMR_PORTS_ROUTE ? 0 : rdma_qp_host_ports(qp, hp, RDMA_NIC_SLOTS);
    if (np < 2)
        return 1;
    if (k->ports == SMR_PORTS_CHANNEL) {
        if ((size_t)qp->c.src >= k->nhosts) {
            size_t n = (size_t)qp->c.src + 1;
            k->host_qps = xrealloc(k->host_qps, n * sizeof *k->host_qps);
            memset(k->host_qps + k->nhosts, 0, (n - k->nhosts) * sizeof *k->host_qps);
            k->nhosts = n;
        }
        rdma_qp_bind_ports(qp, &hp[k->host_qps[qp->c.src]++ % np], 1);
        return 1;
    }
    if (ops->pinned) {          /* its one path's port (smp_single: key mod paths) */
        rdma_qp_bind_ports(qp, &hp[(qp->c.path_key % paths) % np], 1);
        return 1;
    }
    if (paths < 2 * np)
        return 1;
    rdma_qp_bind_ports(qp, hp, np);
    return (uint32_t)np;
}

static void init(rdma_qp *qp, void *v)
{
    smr_st *st = v;
    smr_keys *k = rdma_tp_cc_ctx(qp->tp);
    smp_params_default(&st->pr);
    st->pr.paths = (uint32_t)k->paths;
    st->pr.out = k->out ? SMP_OUT_HASH : SMP_OUT_PATHIDX;
    st->pr.mss_bytes = qp->payload;
    if (qp->base_rtt_ps > 0)
        st->pr.base_rtt_ps = qp->base_rtt_ps;
    st->pr.window = (uint32_t)k->window;
    st->pr.rto_ps = k->rto;
    st->pr.avoid_after = (uint32_t)k->avoid_after;
    st->pr.avoid_ps = k->avoid;
    st->pr.order_loss = k->order_loss;
    st->pr.loss_cut = k->loss_cut;
    /* OBS's stream from the connection's own (seeded from the run's seed
     * and the connection id), so that seeds give independent draws. */
    /* The ports first: the line rate (initial window, pacing) is theirs. */
    const smp_path_ops *ops = smp_path_find(algo_names[k->algo]);
    uint32_t planes = bind_ports(qp, k, ops, st->pr.paths);
    st->pr.line_rate_bps = qp->line_bps;
    smp_qp_init(&st->q, &st->pr, ops, qp->c.path_key, rng_next(&qp->c.spray_rng), qp->c.id);
    smp_paths_set_planes(&st->q.paths, planes);
    /* The RTT cap's base is the fabric's (the longest data-packet round
     * trip of the QPs started so far, raised at every ACK as longer paths
     * start), so every QP of a run gets the same target, as papers.md 2(f)
     * sets one cap for the CC; with each QP's own header-only base RTT, a
     * QP inside one ToR (4 us) had a queueing budget below one ECN threshold
     * (docs/stellar.md section 6: the all-reduce at 16 MiB). */
    int64_t d = data_rtt(qp);
    if (d > k->cap_base_ps)
        k->cap_base_ps = d;
    smp_cc_cap_base(&st->q.cc, k->cap_base_ps);
    sim_timer_init(&st->rto_t, on_rto, qp, 0);
    st->rto_at = INT64_MAX;
    st->live = true;
    rdma_qp_set_rate(qp, qp->line_bps);
    rdma_qp_set_window(qp, 0);
    rdma_qp_set_path(qp, path_hook, st);
}

/* Adds a QP's ACK, echo and cut counts to the run's. */
static void add_counts(smr_keys *k, const smp_qp *q)
{
    for (uint32_t i = 0; i < q->paths.n; i++) {
        k->acks += q->paths.p[i].acked;
        k->marked += q->paths.p[i].marked;
    }
    k->cuts_ecn += q->cc.cuts_ecn;
    k->cuts_rtt += q->cc.cuts_rtt;
    k->cuts_loss += q->cc.cuts_loss;
}

static void stop(rdma_qp *qp, void *v)
{
    smr_st *st = v;
    if (!st->live)
        return;
    add_counts(rdma_tp_cc_ctx(qp->tp), &st->q);
    sim_timer_disarm(qp->c.s, &st->rto_t);
    smp_qp_fini(&st->q);
    st->live = false;
}

static bool ready(rdma_qp *qp, void *v, uint64_t limit)
{
    (void)qp;
    smr_st *st = v;
    return smp_qp_can_send(&st->q, st->q.nxt < limit);
}

static uint64_t take(rdma_qp *qp, void *v, uint64_t limit)
{
    (void)limit;
    smr_st *st = v;
    st->q.paths.plane = qp->tx_port;    /* the port pulling: one of its paths */
    smp_qp_send(&st->q, sim_now(qp->c.s), qp->payload, &st->last);
    arm(qp, st);
    return st->last.psn;
}

/* The data packet an ACK is for: a NACK names it, an ACK echoes its send
 * time, which is one of the few PSNs just below the cumulative point. */
static uint64_t acked_psn(const smp_qp *q, const pkt *a)
{
    if (a->h.rdma.op == RDMA_OP_NACK)
        return a->seq + a->h.rdma.sack_off;
    uint64_t hi = a->seq < q->nxt ? a->seq : q->nxt;
    for (uint64_t psn = hi, n = 0; psn > q->una && n < 64; psn--, n++) {
        const smp_txent *e = &q->e[(psn - 1) % q->win];
        if (e->sent_ps == (int64_t)a->h.rdma.ts_ps)
            return psn - 1;
    }
    return UINT64_MAX;          /* a duplicate's: only the cumulative point counts */
}

static void ack(rdma_qp *qp, void *v, const pkt *a)
{
    smr_st *st = v;
    if (a->h.rdma.op != RDMA_OP_ACK && a->h.rdma.op != RDMA_OP_NACK)
        return;
    smp_cc_cap_base(&st->q.cc, ((const smr_keys *)rdma_tp_cc_ctx(qp->tp))->cap_base_ps);
    uint64_t psn = acked_psn(&st->q, a);
    smp_ack x = {.psn = psn, .cum = a->seq, .sent_ps = (int64_t)a->h.rdma.ts_ps,
                 .ce = a->flags & PKT_F_ECE};
    if (psn >= st->q.una && psn < st->q.nxt)
        x.path = st->q.e[psn % st->q.win].path;
    smp_qp_ack(&st->q, sim_now(qp->c.s), &x);
    arm(qp, st);
}

static const rdma_rec_ops smr_rec = {.ready = ready, .take = take, .ack = ack};

const rdma_cc_ops rdma_cc_stellar = {
    .name = "stellar",
    .state_size = sizeof(smr_st),
    .init = init,
    .on_send = rdma_cc_nop_send,
    .on_ack = rdma_cc_nop_ack,
    .on_cnp = NULL,
    .on_nack = rdma_cc_nop,
    .stop = stop,
    .rec = &smr_rec,
};

/* The QP's multi-path scoreboard, or NULL (tests, tables). */
const smp_qp *stellar_rdma_qp(const rdma_qp *qp)
{
    if (qp->cc != &rdma_cc_stellar)
        return NULL;
    const smr_st *st = qp->ccs;
    return st->live ? &st->q : NULL;
}

/* ---- the transport: rocev2 with the multipath section -------------------- */

/* rocev2's setup (the bound keys without `multipath`, which it refuses),
 * then the section: selective repeat required, its keys bound, Stellar's
 * CC and loss recovery installed.  Without the section (`multipath: null`)
 * the transport is rocev2 itself: the ConnectX-7-like baseline of the same
 * scenario. */
static int smr_setup(void **tpp, const void *bound, const cfg_node *sec, const char *path,
                     err *e)
{
    rdma_keys rk = *(const rdma_keys *)bound;
    cfg_node *mp = rk.multipath;
    rk.multipath = NULL;
    int rc = rocev2_transport.setup(tpp, &rk, sec, path, e);
    if (rc)
        return rc;
    rdma_tp *tp = *tpp;
    if (!mp)
        return 0;
    char kp[600];
    cfg_path(kp, sizeof kp, path, "multipath");
    if ((rc = rdma_need_selective(tp, "multipath", sec, path, e)))
        return rc;
    smr_keys *k = xcalloc(1, sizeof *k);
    rdma_tp_set_cc(tp, &rdma_cc_stellar, k);
    if ((rc = cfg_bind(mp, kp, smr_schema, k, e)))
        return rc;
    if (k->window % 64) {
        char wp[640];
        return cfg_err(e, AISIM_EINVAL, cfg_get(mp, "window"), cfg_path(wp, sizeof wp, kp,
                       "window"), "expected a multiple of 64 packets (the bitmap's words), "
                       "found %lld", (long long)k->window);
    }
    return 0;
}

static void smr_teardown(void *tp)
{
    if (tp && rdma_tp_cc_ctx(tp)) {
        free(((smr_keys *)rdma_tp_cc_ctx(tp))->host_qps);
        free(rdma_tp_cc_ctx(tp));
        rdma_tp_set_cc(tp, NULL, NULL);
    }
    rocev2_transport.teardown(tp);
}

/* Everything else is rocev2's (forwarded: its ops are not constants here). */
static void w_framing(const void *tp, uint32_t *payload, uint32_t *header)
{
    rocev2_transport.framing(tp, payload, header);
}
static void w_conn_init(conn *c, sink **at_src, sink **at_dst)
{
    rocev2_transport.conn_init(c, at_src, at_dst);
}
static void w_start(conn *c, int64_t at_ps, uint64_t bytes, int64_t base_rtt_ps)
{
    rocev2_transport.start(c, at_ps, bytes, base_rtt_ps);
}
static void w_append(conn *c, uint64_t bytes) { rocev2_transport.append(c, bytes); }
static void w_paths_changed(conn *c) { rocev2_transport.paths_changed(c); }
static void w_stop(conn *c) { rocev2_transport.stop(c); }
static void w_stats(const conn *c, conn_stats *st) { rocev2_transport.stats(c, st); }
static bool w_idle(const conn *c) { return rocev2_transport.idle(c); }
static void w_pcap(const conn *c, const pkt *p, pcap_l4 *h) { rocev2_transport.pcap(c, p, h); }
static int w_net_ready(void *tp, topo *t, const cfg_node *sec, const char *path, err *e)
{
    return rocev2_transport.net_ready(tp, t, sec, path, e);
}
/* rocev2's tables, and what Stellar's CC saw and did: ACKs and NACKs with
 * their ECN echoes, and its window cuts by cause. */
static int w_report(void *tp, out *o, json_t *summary, err *e)
{
    int rc = rocev2_transport.report(tp, o, summary, e);
    const smr_keys *done = rdma_tp_cc_ctx(tp);
    if (rc || !done)
        return rc;
    smr_keys sum = *done, *k = &sum;   /* the stopped QPs' and the live ones' */
    for (const rdma_qp *qp = ((const rdma_tp *)tp)->live; qp; qp = qp->live_next)
        if (stellar_rdma_qp(qp))
            add_counts(k, stellar_rdma_qp(qp));
    json_object_set_new(summary, "stellar_acks", json_integer((json_int_t)k->acks));
    json_object_set_new(summary, "stellar_ecn_echoes", json_integer((json_int_t)k->marked));
    json_object_set_new(summary, "stellar_ecn_cuts", json_integer((json_int_t)k->cuts_ecn));
    json_object_set_new(summary, "stellar_rtt_cuts", json_integer((json_int_t)k->cuts_rtt));
    json_object_set_new(summary, "stellar_loss_cuts", json_integer((json_int_t)k->cuts_loss));
    return 0;
}
static int w_spray_check(void *tp, const char *routing, const cfg_node *sec, const char *path,
                         err *e)
{
    return rocev2_transport.spray_check(tp, routing, sec, path, e);
}

const transport_ops stellar_rocev2_transport = {
    .name = "stellar_rocev2",
    .summary = "Stellar's multi-path RoCEv2 QPs: rocev2 with a multipath section",
    .conn_size = sizeof(rdma_qp),
    .keys = rdma_schema,
    .cfg_size = sizeof(rdma_keys),
    .setup = smr_setup,
    .teardown = smr_teardown,
    .framing = w_framing,
    .conn_init = w_conn_init,
    .start = w_start,
    .append = w_append,
    .paths_changed = w_paths_changed,
    .stop = w_stop,
    .stats = w_stats,
    .idle = w_idle,
    .pcap = w_pcap,
    .net_ready = w_net_ready,
    .report = w_report,
    .spray_check = w_spray_check,
};
