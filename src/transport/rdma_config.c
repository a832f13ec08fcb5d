/*
 * rdma_config.c - the RoCEv2 transport's scenario keys (`net.transport`
 * with `name: rocev2`), their checks, and the checks against the fabric
 * once the topology is built (rdma.h, docs/rdma.md lists every default with
 * its source).
 */
#include <stdio.h>
#include <stdlib.h>

#include "aisim/log.h"
#include "aisim/rdma.h"
#include "aisim/units.h"
#include "rdma_int.h"

static const char *const recoveries[] = {"go_back_n", "selective_repeat", NULL};
static const char *const verbs[] = {"write", "send", "read", NULL};
static const char *const windows[] = {"none", "bdp", NULL};
static const char *const cc_names[] = {"none", "dcqcn", "hpcc", "timely", "dctcp", NULL};
static const rdma_cc_ops *const ccs[] = {&rdma_cc_none, &rdma_cc_dcqcn, &rdma_cc_hpcc,
                                         &rdma_cc_timely, &rdma_cc_dctcp};

#define K(f) offsetof(rdma_keys, f)
const cfg_key rdma_schema[] = {
    {.name = "mtu", .type = CFG_SIZE, .off = K(mtu), .def = "1062B", .flags = CFG_MAX,
     .max = 65000, .help = "bytes per packet on the wire, RoCEv2 headers (62 B) included"},
    {.name = "recovery", .type = CFG_ENUM, .off = K(recovery), .choices = recoveries,
     .def = "go_back_n", .help = "loss recovery: go_back_n or selective_repeat (IRN)"},
    {.name = "verb", .type = CFG_ENUM, .off = K(verb), .choices = verbs, .def = "write",
     .help = "messages as RDMA WRITE, SEND, or READ (request, then response stream)"},
    {.name = "ack_interval", .type = CFG_INT, .off = K(ack_interval), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1 << 20,
     .help = "packets per ACK (and one at each message's end)"},
    {.name = "rto", .type = CFG_TIME, .off = K(rto_ps), .def = "320us", .flags = CFG_MIN_EXCL,
     .min = 0, .help = "retransmission timeout"},
    {.name = "max_timeouts", .type = CFG_INT, .off = K(max_rto), .def = "16",
     .flags = CFG_MIN, .min = 1, .help = "timeouts in a row before a QP gives up"},
    {.name = "max_outstanding", .type = CFG_INT, .off = K(max_outstanding), .def = "0",
     .flags = CFG_MIN, .min = 0, .help = "packets in flight per QP (0: no limit)"},
    {.name = "window", .type = CFG_ENUM, .off = K(window), .choices = windows, .def = "none",
     .help = "none, or bdp: bytes in flight per QP up to line rate x the largest base RTT "
             "(the HPCC fork's HAS_WIN 1, GLOBAL_T 1); HPCC keeps its own"},
    {.name = "var_window", .type = CFG_BOOL, .off = K(var_window), .def = "true",
     .help = "with window: bdp, the window scales with rate / line rate (the fork's VAR_WIN 1)"},
    {.name = "window_bytes", .type = CFG_SIZE, .off = K(window_bytes), .def = "0B",
     .flags = CFG_MIN, .min = 0,
     .help = "with window: bdp, the window at line rate (0: line rate x the largest base RTT)"},
    {.name = "nic_pps", .type = CFG_INT, .off = K(nic_pps), .def = "0", .flags = CFG_MIN,
     .min = 0, .help = "NIC packet-rate cap, packets/s (0: none)"},
    {.name = "nic_rate", .type = CFG_RATE, .off = K(nic_rate_bps), .def = "0bps",
     .flags = CFG_MIN, .min = 0,
     .help = "NIC processing rate, below the line rate (0: none)"},
    {.name = "lossless", .type = CFG_BOOL, .off = K(lossless), .def = "false",
     .help = "RDMA runs on a PFC priority: every host link must run PFC"},
    {.name = "cc", .type = CFG_ENUM, .off = K(cc), .choices = cc_names, .def = "dcqcn",
     .help = "congestion control: none, dcqcn, hpcc, timely, dctcp"},
    {.name = "cnp_interval", .type = CFG_TIME, .off = K(cnp_interval_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0,
     .help = "at most one CNP per QP per interval (0: one per marked packet, as the fork)"},
    {.name = "min_rate", .type = CFG_RATE, .off = K(min_rate_bps), .def = "100Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "lowest sending rate of a QP"},
    {.name = "sample_interval", .type = CFG_TIME, .off = K(sample_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "rdma_rate.csv period (0: off)"},
    {.name = "sample_qps", .type = CFG_INT, .off = K(sample_qps), .def = "8",
     .flags = CFG_MIN, .min = 0, .help = "QPs sampled (the first opened)"},
    {.name = "dcqcn_g", .type = CFG_FLOAT, .off = K(dcqcn_g), .def = "0.00390625",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "DCQCN: alpha's EWMA gain"},
    {.name = "dcqcn_alpha_interval", .type = CFG_TIME, .off = K(dcqcn_alpha_interval_ps),
     .def = "1us", .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: alpha update period"},
    {.name = "dcqcn_decrease_interval", .type = CFG_TIME, .off = K(dcqcn_decrease_interval_ps),
     .def = "4us", .flags = CFG_MIN_EXCL, .min = 0,
     .help = "DCQCN: at most one rate decrease per interval (if a CNP arrived in it)"},
    {.name = "dcqcn_clamp_target", .type = CFG_BOOL, .off = K(dcqcn_clamp_target),
     .def = "false",
     .help = "DCQCN: every decrease sets the target to the current rate (false: only the "
             "first after an increase, as the fork)"},
    {.name = "dcqcn_timer", .type = CFG_TIME, .off = K(dcqcn_timer_ps), .def = "900us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: rate increase timer"},
    {.name = "dcqcn_byte_counter", .type = CFG_SIZE, .off = K(dcqcn_byte_counter),
     .def = "0B", .flags = CFG_MIN, .min = 0,
     .help = "DCQCN: bytes per increase (0: off, as the fork; the paper's B is 10MB)"},
    {.name = "dcqcn_rai", .type = CFG_RATE, .off = K(dcqcn_rai_bps), .def = "50Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: additive increase"},
    {.name = "dcqcn_rhai", .type = CFG_RATE, .off = K(dcqcn_rhai_bps), .def = "100Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCQCN: hyper increase"},
    {.name = "dcqcn_fast_recovery", .type = CFG_INT, .off = K(dcqcn_fast_recovery), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 100,
     .help = "DCQCN: fast recovery steps (F)"},
    {.name = "dcqcn_start_rate", .type = CFG_FLOAT, .off = K(dcqcn_start_rate), .def = "1",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1,
     .help = "DCQCN: fraction of the line rate a QP starts at"},
    {.name = "hpcc_eta", .type = CFG_FLOAT, .off = K(hpcc_eta), .def = "0.95",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "HPCC: target utilisation"},
    {.name = "hpcc_max_stage", .type = CFG_INT, .off = K(hpcc_max_stage), .def = "0",
     .flags = CFG_MIN, .min = 0, .help = "HPCC: additive steps before a multiplicative one"},
    {.name = "hpcc_wai", .type = CFG_SIZE, .off = K(hpcc_wai_bytes), .def = "0B",
     .flags = CFG_MIN, .min = 0,
     .help = "HPCC: additive window step (0: dcqcn_rai x T, the fork's RATE_AI)"},
    {.name = "timely_tlow", .type = CFG_TIME, .off = K(timely_tlow_ps), .def = "50us",
     .flags = CFG_MIN, .min = 0, .help = "TIMELY: below this RTT, additive increase"},
    {.name = "timely_thigh", .type = CFG_TIME, .off = K(timely_thigh_ps), .def = "500us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "TIMELY: above this RTT, decrease"},
    {.name = "timely_min_rtt", .type = CFG_TIME, .off = K(timely_min_rtt_ps), .def = "20us",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "TIMELY: gradient normaliser"},
    {.name = "timely_hai_n", .type = CFG_INT, .off = K(timely_hai_n), .def = "5",
     .flags = CFG_MIN, .min = 1, .help = "TIMELY: negative gradients before hyper increase"},
    {.name = "timely_alpha", .type = CFG_FLOAT, .off = K(timely_alpha), .def = "0.875",
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = "TIMELY: RTT-difference EWMA"},
    {.name = "timely_beta", .type = CFG_FLOAT, .off = K(timely_beta), .def = "0.8",
     .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0, .max = 1, .help = "TIMELY: decrease factor"},
    {.name = "dctcp_rai", .type = CFG_RATE, .off = K(dctcp_rai_bps), .def = "1000Mbps",
     .flags = CFG_MIN_EXCL, .min = 0, .help = "DCTCP over RoCE: additive increase"},
    {.name = "multipath", .type = CFG_NODE, .off = K(multipath), .flags = CFG_OPTIONAL,
     .help = "the section of a transport that wraps rocev2 (stellar_rocev2: Stellar's "
     "multi-path QPs {algo, paths, ...}, docs/stellar.md); rocev2 alone refuses it"},
    {0},
};

/* ---- setup ------------------------------------------------------------- */

int rdma_setup(void **tpp, const void *bound, const cfg_node *sec, const char *path,
                      err *e)
{
    rdma_tp *tp = xcalloc(1, sizeof *tp);
    *tpp = tp;
    tp->k = *(const rdma_keys *)bound;
    char kp[600];
    if (tp->k.mtu <= RDMA_HDR_BYTES)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "mtu"), cfg_path(kp, sizeof kp, path, "mtu"),
                       "expected an MTU above the RoCEv2 headers (%d bytes: Ethernet 18, IPv4 "
                       "20, UDP 8, BTH 12, ICRC 4), found %lld bytes", RDMA_HDR_BYTES,
                       (long long)tp->k.mtu);
    if (tp->k.timely_tlow_ps >= tp->k.timely_thigh_ps)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "timely_tlow"),
                       cfg_path(kp, sizeof kp, path, "timely_tlow"),
                       "expected timely_tlow below timely_thigh (%lld ps), found %lld ps",
                       (long long)tp->k.timely_thigh_ps, (long long)tp->k.timely_tlow_ps);
    if (tp->k.dcqcn_rai_bps > tp->k.dcqcn_rhai_bps)
        return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "dcqcn_rai"),
                       cfg_path(kp, sizeof kp, path, "dcqcn_rai"),
                       "expected dcqcn_rai at most dcqcn_rhai (%lld bps), found %lld bps",
                       (long long)tp->k.dcqcn_rhai_bps, (long long)tp->k.dcqcn_rai_bps);
    tp->cc = ccs[tp->k.cc];
    if (tp->k.multipath)
        return cfg_err(e, AISIM_EINVAL, tp->k.multipath, cfg_path(kp, sizeof kp, path,
                       "multipath"), "expected no multipath section with rocev2 (Stellar's "
                       "multi-path QPs are the transport stellar_rocev2)");
    return 0;
}

void rdma_tp_set_cc(rdma_tp *tp, const rdma_cc_ops *cc, void *ctx)
{
    tp->cc = cc;
    tp->cc_ctx = ctx;
}

void *rdma_tp_cc_ctx(const rdma_tp *tp) { return tp->cc_ctx; }

void rdma_teardown(void *p)
{
    rdma_tp *tp = p;
    rdma_report_fini(tp);
    rdma_nic_free_all(tp);
    rdma_int_fini(tp);
    free(tp);
}

void rdma_framing(const void *p, uint32_t *payload, uint32_t *header)
{
    const rdma_tp *tp = p;
    *payload = (uint32_t)(tp->k.mtu - RDMA_HDR_BYTES);
    *header = RDMA_HDR_BYTES;
}


/* Whatever reorders a QP's packets (the network's spraying, Stellar's
 * multipath: `what`) needs selective repeat: go-back-N drops every packet
 * that arrives out of order, so a sprayed QP would resend its window at
 * almost every packet. */
int rdma_need_selective(const rdma_tp *tp, const char *what, const cfg_node *sec,
                        const char *path, err *e)
{
    if (tp->k.recovery == RDMA_SELECTIVE)
        return 0;
    const cfg_node *r = cfg_get(sec, "recovery");
    char rp[600];
    return cfg_err(e, AISIM_EINVAL, r ? r : sec, cfg_path(rp, sizeof rp, path, "recovery"),
                   "expected selective_repeat with %s (spraying reorders packets, go-back-N "
                   "drops every one out of order), found go_back_n", what);
}

int rdma_spray_check(void *p, const char *routing, const cfg_node *sec, const char *path,
                     err *e)
{
    char what[64];
    snprintf(what, sizeof what, "routing: %s", routing);
    return rdma_need_selective(p, what, sec, path, e);
}

/* ---- the fabric --------------------------------------------------------- */

/* Once the topology exists: a lossless fabric needs PFC on every link;
 * DCQCN and DCTCP need RED's Pmax in (0, 1] wherever RED is on (and warn
 * when nothing marks); HPCC attaches its telemetry hook to the switches. */
int rdma_net_ready(void *p, topo *t, const cfg_node *sec, const char *path, err *e)
{
    rdma_tp *tp = p;
    tp->t = t;
    if (tp->k.lossless) {
        for (size_t l = 0; l < topo_links(t); l++) {
            int a, b;
            topo_link_ends(t, (int)l, &a, &b);
            if (topo_link_is_intra_host(t, (int)l))
                continue;
            for (int d = 0; d < 2; d++)
                if (topo_link_port(t, (int)l, d)->cfg.pfc_xoff_bytes <= 0) {
                    char kp[600];
                    return cfg_err(e, AISIM_EINVAL, cfg_get(sec, "lossless"),
                                   cfg_path(kp, sizeof kp, path, "lossless"),
                                   "expected PFC (topology pfc_xoff > 0) on every link of a "
                                   "lossless RDMA fabric, found none on %s",
                                   topo_link_port(t, (int)l, d)->base.name);
                }
        }
    }
    if (tp->cc == &rdma_cc_dcqcn || tp->cc == &rdma_cc_dctcp) {
        /* DCQCN reacts to RED's marks: Pmax must be in (0, 1] where RED is
         * on; with no marking anywhere it never slows down. */
        bool marks = false;
        for (size_t l = 0; l < topo_links(t); l++)
            for (int d = 0; d < 2; d++) {
                const port *q = topo_link_port(t, (int)l, d);
                marks |= port_marks_ecn(q);
                if (port_red_on(q) && !(q->cfg.red_max_p > 0)) {
                    char kp[600];
                    return cfg_err(e, AISIM_ERANGE, cfg_get(sec, "cc"),
                                   cfg_path(kp, sizeof kp, path, "cc"),
                                   "expected RED's red_max_p (Pmax) in (0, 1] for %s's marking, "
                                   "found %g on %s", tp->cc->name, q->cfg.red_max_p,
                                   q->base.name);
                }
            }
        if (!marks)
            LOG(LOG_WARN, "rocev2", "%s: cc %s, but no port marks ECN (topology red_min or "
                "ecn_k): the QPs never slow down", path, tp->cc->name);
    }
    /* The timeout is fixed (no RTT estimate): at or below a round trip it
     * fires before any ACK can return and every window is resent. */
    int64_t rtt = 0;
    const char *on = NULL;
    for (size_t l = 0; l < topo_links(t); l++) {
        int64_t d = topo_link_wire(t, (int)l, 0)->delay_ps;
        if (2 * d > rtt && !topo_link_is_intra_host(t, (int)l)) {
            rtt = 2 * d;
            on = topo_link_port(t, (int)l, 0)->base.name;
        }
    }
    if (on && tp->k.rto_ps <= rtt)
        LOG(LOG_WARN, "rocev2", "%s: rto %g us is not above the round trip of the link %s "
            "alone (%g us): QPs crossing it time out before their ACKs return and resend "
            "(raise rto)", path, (double)tp->k.rto_ps / PS_PER_US, on, (double)rtt / PS_PER_US);
    if (tp->cc == &rdma_cc_hpcc)
        return rdma_int_attach_fabric(tp, t);
    return 0;
}

