/*
 * test_stellar_rdma.c - Stellar's multi-path core on RoCEv2 QPs (the
 * `multipath:` section of rocev2, stellar_rdma.c) through the example
 * stellar/rdma-permutation (16 NICs of 2 x 200 Gbps on a dual-plane fabric,
 * 16 equal-cost paths between segments, a 16 MB RDMA WRITE per NIC; a QP
 * leaves by one 200 Gbps port):
 *
 *  - OBS over 128 paths: every QP at >= 90 % of its 200 Gbps port (FCT p99
 *    <= 16 MB / 180 Gbps), no drop, no retransmission although the
 *    receivers NACKed > 1,000 out-of-order arrivals (reordering alone
 *    resends nothing);
 *  - one path per QP (`single`, ECMP on the QP hash) on the same seed: FCT
 *    p99 >= 1.5x OBS-128's; multi-QP ECMP (stellar/rdma-permutation-multiqp,
 *    4 QPs of 4 MB per write): all 64 complete, p99 > 1.2x OBS-128's and
 *    below single path's; ConnectX-7-like (multipath off, DCQCN with
 *    NVIDIA's defaults and a 20 us increase timer): CNPs, all 16 QPs done,
 *    p99 > 1.5x OBS-128's and < 2x single path's; the ToR uplinks' (max - min) load at 4 paths
 *    above 128 paths' by > 3x, and at 128 paths below 0.75 of the mean
 *    (hashed entropy, the default: a multinomial over the uplinks);
 *  - a ToR uplink dropping 3 % of its packets (endless QPs, 2 ms): OBS-128
 *    keeps > 95 % of the clean run's goodput, with 50 to 1,000 PSNs resent
 *    (each lost PSN alone, not windows) and conservation;
 *  - stellar/rdma-paths (Fig. 12, small: two NICs, 16 QPs, hashed
 *    entropy, 1 ms): the sender ToR's uplink imbalance (max - min) / 200
 *    Gbps in the worse plane at 4 paths > 2.5x that at 128, 16 above 128,
 *    128 below 0.08; goodput > 95 % of the NIC's 400 Gbps;
 *  - stellar/rdma-allreduce at 16 MiB: with QPs on both RNIC ports
 *    (multipath.ports: all) bus bandwidth > 30 GB/s, above one port's
 *    25, each RNIC's ports within 40/60 %; on the route's port alone
 *    between 23.5 (the RTT cap on the fabric's base RTT; 19.6 on each QP's
 *    own) and 25, a port unused; no resend;
 *  - bad input: multipath on go-back-N, 0 or 257 paths, an unknown
 *    algorithm: exit 2 naming the key;
 *  - determinism: flows.csv and links.csv byte-identical on a rerun;
 *
 * and on one QP of 2,000 packets across a leaf-spine of 8 spines (8
 * uplinks, 100 Gbps), counted on the wtap by a hook on every port, with
 * the idealised `entropy: pathidx` (index i on uplink i mod 8), so that
 * the uplink counts test the choice alone:
 *  - OBS-128: the leaf's 8 uplinks carry 250 packets each within a
 *    chi-square of 8 x 3 = 24 (7 degrees of freedom, p ~ 0.001); the 128
 *    path indices, counted by the core, within chi-square 200 (127 dof);
 *    `single`: every packet on one uplink;
 *  - PSN 500 dropped once: it alone is resent (2,001 data packets leave
 *    the sender's NIC), after one RTO of 250 us, which falls inside the
 *    665 us stream, so the QP completes < 1 us later than loss-free, with another entropy than the lost
 *    copy's; the QP's scoreboard counts 1 retransmission, 1 timeout, no
 *    spurious one; the loss-free run resends nothing;
 *
 * and ECN under spraying (two OBS-128 QPs into one 100 Gbps port over 8
 * spines of 20 Gbps): of the ECE-flagged acknowledgements leaving the
 * receiver a quarter or more are NACKs (154 of 321), the senders count
 * >= 90 % of them as marks on their paths (all 321), and each QP's window
 * is cut on ECN (13 cuts each) to below half its initial BDP.  Checked by
 * breaking: no CE echo on NACKs (rdma.c), the glue dropping a NACK's echo,
 * smp_cc ignoring marks, and a QP held to one port each make a test fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/hook.h"
#include "aisim/netreg.h"
#include "aisim/network.h"
#include "aisim/rdma.h"
#include "systems/stellar/stellar_rdma.h"
#include "testutil.h"

#define EX "stellar/rdma-permutation"

static double jnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *results(json_t *sum) { return json_object_get(sum, "results"); }

/* ToR -> aggregation ports of run `sub`: bytes sent; the largest, over
 * the ToRs, of (max - min) / mean among one ToR's uplinks (a QP leaves by
 * one plane, so the planes carry different loads; within a ToR the paths
 * share it).  *n: uplinks seen. */
static double uplink_spread(const char *sub, int *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/links.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    char tor[8][128] = {{0}};
    double lo[8], hi[8], sum[8];
    int cnt[8] = {0}, ntor = 0;
    *n = 0;
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        char pname[128];
        double rate, tx;
        if (sscanf(line, "%127[^,],%lf,%lf", pname, &rate, &tx) != 3 || !strstr(pname, "tor") ||
            !strstr(pname, "->") || !strstr(strstr(pname, "->"), "agg"))
            continue;
        *strstr(pname, "->") = 0;
        int t = 0;
        while (t < ntor && strcmp(tor[t], pname))
            t++;
        if (t == ntor) {
            assert_true(ntor < 8);
            snprintf(tor[ntor++], sizeof tor[0], "%s", pname);
            lo[t] = INFINITY;
            hi[t] = sum[t] = 0;
        }
        (*n)++;
        cnt[t]++;
        sum[t] += tx;
        lo[t] = tx < lo[t] ? tx : lo[t];
        hi[t] = tx > hi[t] ? tx : hi[t];
    }
    free(b);
    double worst = 0;
    for (int t = 0; t < ntor; t++)
        if (sum[t] > 0 && (hi[t] - lo[t]) / (sum[t] / cnt[t]) > worst)
            worst = (hi[t] - lo[t]) / (sum[t] / cnt[t]);
    return worst;
}

/* Sum of column `col` (0-based) of rdma_qps.csv in run `sub`. */
static double qp_sum(const char *sub, int col)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/rdma_qps.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    double s = 0;
    char *save = NULL;
    for (char *line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] < '0' || line[0] > '9')
            continue;
        char *f = line;
        for (int i = 0; i < col && f; i++) {
            f = strchr(f, ',');
            f = f ? f + 1 : NULL;
        }
        if (f)
            s += atof(f);
    }
    free(b);
    return s;
}

static void test_obs_against_single(void **state)
{
    (void)state;
    const char *single[] = {"net.transport.multipath.algo=single"};
    const char *four[] = {"net.transport.multipath.paths=4"};
    json_t *o = tu_run(EX, "obs", NULL, 0);
    json_t *s = tu_run(EX, "single", single, 1);
    json_t *f = tu_run(EX, "obs4", four, 1);
    json_t *ro = results(o), *rs = results(s);
    assert_int_equal(jnum(ro, "flows_completed"), 16);
    assert_true(jnum(ro, "fct_p99_s") <= 16e6 * 8 / 180e9);
    assert_int_equal(jnum(ro, "drops"), 0);
    assert_int_equal(jnum(ro, "retransmits"), 0);
    double nacks = qp_sum("obs", 12);
    assert_true(nacks > 1000);              /* out-of-order arrivals, no resend */
    assert_int_equal(jnum(rs, "flows_completed"), 16);
    assert_true(jnum(rs, "fct_p99_s") >= 1.5 * jnum(ro, "fct_p99_s"));
    /* the baselines: multi-QP ECMP (4 QPs of 4 MB per write) between OBS
     * and single path; ConnectX-7-like (one path, DCQCN) far behind */
    json_t *mq = tu_run("stellar/rdma-permutation-multiqp", "multiqp", NULL, 0);
    const char *cx[] = {"net.transport.multipath=null"};
    json_t *cx7 = tu_run(EX, "cx7", cx, 1);
    assert_int_equal(jnum(results(mq), "flows_completed"), 64);
    assert_true(jnum(results(mq), "fct_p99_s") > 1.2 * jnum(ro, "fct_p99_s"));
    assert_true(jnum(results(mq), "fct_p99_s") < jnum(rs, "fct_p99_s"));
    /* the tuned DCQCN (NVIDIA's defaults, 20 us timer) completes every QP,
     * within 2 x single path's p99 (its collisions), behind OBS-128 */
    assert_int_equal(jnum(results(cx7), "flows_completed"), 16);
    assert_true(jnum(results(cx7), "rdma_cnps") > 0);
    assert_true(jnum(results(cx7), "fct_p99_s") > 1.5 * jnum(ro, "fct_p99_s"));
    assert_true(jnum(results(cx7), "fct_p99_s") < 2 * jnum(rs, "fct_p99_s"));
    print_message("baselines: multi-QP ECMP p99 %.1f us; CX7-like DCQCN 16 of 16 done, p99 "
                  "%.1f us, %.0f CNPs\n", jnum(results(mq), "fct_p99_s") * 1e6,
                  jnum(results(cx7), "fct_p99_s") * 1e6, jnum(results(cx7), "rdma_cnps"));
    json_decref(mq);
    json_decref(cx7);
    int n128, n4;
    double sp128 = uplink_spread("obs", &n128), sp4 = uplink_spread("obs4", &n4);
    assert_int_equal(n128, 32);
    /* hashed entropy (the default): 128 hashes over a ToR's 8 uplinks are
     * a multinomial, not a partition (0.58 at seed 1; 0.136 with pathidx) */
    assert_true(sp128 < 0.75);
    assert_true(sp4 > 3 * sp128);
    print_message("RDMA OBS-128 p99 %.1f us (%.0f NACKs, 0 resent), single %.1f us; uplink "
                  "(max-min)/mean within a ToR: 128 paths %.3f, 4 paths %.3f\n", jnum(ro, "fct_p99_s") * 1e6,
                  nacks, jnum(rs, "fct_p99_s") * 1e6, sp128, sp4);
    json_decref(o);
    json_decref(s);
    json_decref(f);
}

/* queue_stats.csv of a run: over the ToR uplinks, the mean time-averaged
 * queue of those that queued at all, the hottest one's, and the largest
 * maximum; *n: uplinks. */
typedef struct qstat {
    double avg, hot, max;
    int n;
} qstat;

static qstat uplink_queues(const char *sub)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/queue_stats.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    qstat q = {0};
    int busy = 0;
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        char pname[128];
        double samples, avg, mxs, mx;
        if (sscanf(line, "%127[^,],%lf,%lf,%lf,%lf", pname, &samples, &avg, &mxs, &mx) != 5)
            continue;
        assert_non_null(strstr(pname, ".agg"));
        q.n++;
        q.hot = avg > q.hot ? avg : q.hot;
        q.max = mx > q.max ? mx : q.max;
        if (mx > 0) {
            busy++;
            q.avg += avg;
        }
    }
    free(b);
    q.avg /= busy ? busy : 1;
    return q;
}

/* Fig. 9 at the paper's scale (stellar/rdma-permutation-30: 30 servers,
 * 120 RNICs, 16 MB each), seed 1: OBS-128 completes every write at >= 90 %
 * of the port and keeps the ToR uplinks' time-averaged queue low; single
 * path (per-QP ECMP) leaves uplinks idle and holds a hot one. */
static void test_fig9_paper_scale(void **state)
{
    (void)state;
    const char *single[] = {"net.transport.multipath.algo=single"};
    json_t *o = tu_run("stellar/rdma-permutation-30", "p30", NULL, 0);
    json_t *s = tu_run("stellar/rdma-permutation-30", "p30s", single, 1);
    assert_int_equal(jnum(results(o), "flows_completed"), 120);
    assert_int_equal(jnum(results(s), "flows_completed"), 120);
    /* both ports: 400 Gbps per QP into a 1:1 fabric, now loaded to its
     * capacity, so queues build and ECN marks (736 us; 693 on one port) */
    assert_true(jnum(results(o), "fct_p99_s") <= 16e6 * 8 / 160e9);
    assert_true(jnum(results(o), "ecn_marks") > 0);
    assert_true(jnum(results(s), "fct_p99_s") > 2 * jnum(results(o), "fct_p99_s"));
    qstat qo = uplink_queues("p30"), qs = uplink_queues("p30s");
    assert_int_equal(qo.n, 240);
    assert_int_equal(qs.n, 240);
    /* OBS's QPs offer twice single path's (two ports against one) */
    assert_true(qo.hot * 5 < qs.hot);           /* 13.5 against 82.6 KB */
    assert_true(qo.avg * 1.5 < qs.avg);         /* 4.0 against 9.4 KB */
    assert_true(qo.max * 3 < qs.max);           /* 158 against 601 KB */
    print_message("Fig. 9, 30 servers: ToR uplinks' time-averaged queue OBS-128 %.2f KB (hottest "
                  "%.1f, largest max %.1f), single path %.2f KB (hottest %.1f, largest %.1f); p99 "
                  "%.0f against %.0f us\n", qo.avg / 1e3, qo.hot / 1e3, qo.max / 1e3, qs.avg / 1e3,
                  qs.hot / 1e3, qs.max / 1e3, jnum(results(o), "fct_p99_s") * 1e6,
                  jnum(results(s), "fct_p99_s") * 1e6);
    /* multi-QP ECMP (4 QPs of 4 MB per write): every QP completes, its
     * tail between OBS-128's and single path's, the largest queue of all
     * (480 windows starting at 1 BDP) */
    json_t *m = tu_run("stellar/rdma-permutation-30-multiqp", "p30m", NULL, 0);
    assert_int_equal(jnum(results(m), "flows_completed"), 480);
    assert_true(jnum(results(m), "fct_p99_s") > 1.2 * jnum(results(o), "fct_p99_s"));
    assert_true(jnum(results(m), "fct_p99_s") < jnum(results(s), "fct_p99_s"));
    qstat qm = uplink_queues("p30m");
    assert_true(qm.max > 4 * qo.max);           /* 963 against 158 KB */
    print_message("multi-QP ECMP: p99 %.0f us, largest uplink queue %.1f KB\n",
                  jnum(results(m), "fct_p99_s") * 1e6, qm.max / 1e3);
    json_decref(m);
    json_decref(o);
    json_decref(s);
}

static void test_lossy_link(void **state)
{
    (void)state;
    static char endless[16][40];
    const char *sets[18];
    for (int i = 0; i < 16; i++) {
        snprintf(endless[i], sizeof endless[i], "net.flows[%d].size=null", i);
        sets[i] = endless[i];
    }
    sets[16] = "stop=2ms";
    sets[17] = "net.faults=[{kind: loss, port: p0.tor0.r0->p0.agg0, rate: 0.03}]";
    json_t *c = tu_run(EX, "clean", sets, 17);
    json_t *l = tu_run(EX, "lossy", sets, 18);
    json_t *rc = results(c), *rl = results(l);
    double gc = jnum(rc, "goodput_bps"), gl = jnum(rl, "goodput_bps");
    assert_true(gc > 0.85 * 16 * 200e9);
    assert_true(gl > 0.95 * gc);
    assert_true(gl < gc);
    assert_true(jnum(rl, "retransmits") >= 50 && jnum(rl, "retransmits") < 1000);
    assert_int_equal(jnum(rc, "retransmits"), 0);
    assert_int_equal(jnum(rl, "bytes_injected"), jnum(rl, "bytes_delivered") +
                                                     jnum(rl, "bytes_dropped") +
                                                     jnum(rl, "bytes_in_network_at_end"));
    print_message("RDMA OBS-128, one uplink dropping 3 %%: goodput %.3f Tbps against %.3f "
                  "(-%.2f %%), %.0f PSNs resent\n", gl / 1e12, gc / 1e12, (1 - gl / gc) * 100,
                  jnum(rl, "retransmits"));
    json_decref(c);
    json_decref(l);
}

/* ---- one QP on the wtap -------------------------------------------------- */

#define LS(algo) \
    "topology: {kind: leaf_spine, leaves: 2, spines: 8, hosts_per_leaf: 1,\n" \
    "  host_link: {rate: 100Gbps, delay: 1us, buffer: 4MB},\n" \
    "  fabric_link: {rate: 100Gbps, delay: 1us, buffer: 4MB}}\n" \
    "transport: {name: stellar_rocev2, mtu: 4158B, recovery: selective_repeat,\n" \
    "  multipath: {algo: " algo ", paths: 128, entropy: pathidx}}\n"

typedef struct wtap {
    hook h;
    uint64_t up[8];             /* data packets per leaf0 -> spine port */
    uint64_t nic;               /* data packets leaving host 0 */
    uint64_t drop_psn;          /* dropped once on its first pass */
    int dropped;
    uint32_t ent[4];            /* entropies PSN drop_psn left the NIC with */
    int nent;
    uint64_t ehash;             /* FNV-1a of the entropies leaving host 0, in order */
} wtap;

static int on_wire(hook *h, port *q, pkt *p)
{
    wtap *w = h->ctx;
    if (p->kind != PKT_DATA)
        return HOOK_PASS;
    const char *nm = q->base.name;
    const char *sp = strstr(nm, "->spine");
    if (strncmp(nm, "leaf0", 5) == 0 && sp)
        w->up[atoi(sp + 7) & 7]++;
    if (strncmp(nm, "h0->", 4) == 0) {
        w->nic++;
        w->ehash = (w->ehash ^ p->entropy) * 0x100000001b3ull;
        if (p->seq == w->drop_psn && w->nent < 4)
            w->ent[w->nent++] = p->entropy;
        if (p->seq == w->drop_psn && !w->dropped) {
            w->dropped = 1;
            hook_drop(h, q, p);
            return HOOK_TAKEN;
        }
    }
    return HOOK_PASS;
}

typedef struct qrun {
    int64_t fct_ps;
    uint64_t rtx, timeouts, spurious, nacks;
    double chi_up, chi_paths;
    int busy_up;                /* uplinks that carried data */
} qrun;

static void on_done(void *ctx, network *n, const net_msg *m)
{
    (void)n;
    *(int64_t *)ctx = m->aborted ? -1 : m->finish_ps - m->start_ps;
}

/* A started network of the scenario text yaml (topology, transport), ECMP
 * routing, seed; *s and *doc to free after it. */
static network *make_net(const char *yaml, uint64_t seed, sim **s, cfg_doc **doc)
{
    err e = {0};
    if (cfg_load_string("net.yaml", yaml, strlen(yaml), doc, &e))
        fail_msg("%s", e.msg);
    *s = sim_create();
    network_cfg c = {.pcap_max = 0};
    cfg_node *root = cfg_root(*doc);
    c.topology = cfg_get(root, "topology");
    c.transport = cfg_get(root, "transport");
    c.routing = NET_ROUTE_ECMP;
    model_env env = {.sim = *s, .seed = seed, .base_dir = ".", .stop_ps = SIM_TIME_MAX,
                     .net = net_registry_builtin()};
    network *n;
    if (network_create(&n, &c, root, "net", &env, &e))
        fail_msg("%s", e.msg);
    network_start(n);
    return n;
}

static qrun run_qp(const char *yaml, wtap *w, uint64_t seed)
{
    sim *s;
    cfg_doc *doc;
    w->ehash = 0xcbf29ce484222325ull;
    network *n = make_net(yaml, seed, &s, &doc);
    topo *t = network_topo(n);
    hook_init(&w->h, on_wire, w, "wire");
    for (size_t l = 0; l < topo_links(t); l++)
        for (int d = 0; d < 2; d++)
            hook_attach(topo_link_port(t, (int)l, d), &w->h);
    qrun r = {.fct_ps = -2};
    conn *cn = network_connect(n, 0, 1, 0);
    /* 2,000 packets of 4,096 B */
    network_send_on(n, cn, 2000 * 4096, -1, 0, on_done, &r.fct_ps);
    rdma_qp *qp = (rdma_qp *)cn;
    const smp_qp *q = NULL;
    uint64_t per_path[SMP_PATHS_MAX] = {0};
    /* the scoreboard lives until the QP stops: read it just before the end */
    for (int step = 0; step < 100000 && r.fct_ps == -2; step++) {
        sim_run(s, (int64_t)(step + 1) * 1000000);
        if ((q = stellar_rdma_qp(qp))) {
            for (uint32_t i = 0; i < q->paths.n; i++)
                per_path[i] = q->paths.p[i].sent;
            r.rtx = q->retx;
            r.timeouts = q->timeouts;
            r.spurious = q->spurious;
        }
    }
    sim_run(s, SIM_TIME_MAX);
    r.nacks = qp->st_nacks;
    uint64_t tot = 0;
    for (int i = 0; i < 8; i++)
        tot += w->up[i];
    for (int i = 0; i < 8; i++) {
        double ex = tot / 8.0;
        r.chi_up += (w->up[i] - ex) * (w->up[i] - ex) / ex;
        r.busy_up += w->up[i] > 0;
    }
    for (int i = 0; i < 128; i++) {
        double ex = 2000.0 / 128;
        r.chi_paths += (per_path[i] - ex) * (per_path[i] - ex) / ex;
    }
    assert_int_equal(pkt_pool_live(network_pool(n)), 0);
    hook_fini(&w->h);
    network_destroy(n);
    sim_destroy(s);
    cfg_free(doc);
    return r;
}

static void test_choice_on_the_wire(void **state)
{
    (void)state;
    wtap w = {.drop_psn = UINT64_MAX};
    qrun r = run_qp(LS("obs"), &w, 1);
    assert_true(r.fct_ps > 0);
    assert_int_equal(w.nic, 2000);
    assert_int_equal(w.up[0] + w.up[1] + w.up[2] + w.up[3] + w.up[4] + w.up[5] + w.up[6] +
                         w.up[7], 2000);
    assert_true(r.chi_up < 24);
    assert_true(r.chi_paths < 200);
    assert_int_equal(r.rtx, 0);
    print_message("OBS-128 on RDMA: uplinks %llu %llu %llu %llu %llu %llu %llu %llu (chi2 "
                  "%.1f), per path chi2 %.1f, %llu NACKs, 0 resent\n",
                  (unsigned long long)w.up[0], (unsigned long long)w.up[1],
                  (unsigned long long)w.up[2], (unsigned long long)w.up[3],
                  (unsigned long long)w.up[4], (unsigned long long)w.up[5],
                  (unsigned long long)w.up[6], (unsigned long long)w.up[7], r.chi_up,
                  r.chi_paths, (unsigned long long)r.nacks);
    int64_t clean = r.fct_ps;

    wtap ws = {.drop_psn = UINT64_MAX};
    qrun rs = run_qp(LS("single"), &ws, 1);
    assert_int_equal(rs.busy_up, 1);

    wtap wl = {.drop_psn = 500};
    qrun rl = run_qp(LS("obs"), &wl, 1);
    assert_true(rl.fct_ps > 0);
    assert_int_equal(wl.dropped, 1);
    assert_int_equal(wl.nic, 2001);         /* the lost PSN alone resent */
    assert_int_equal(wl.nent, 2);
    assert_true(wl.ent[0] != wl.ent[1]);    /* on another path */
    assert_int_equal(rl.rtx, 1);
    assert_int_equal(rl.timeouts, 1);
    assert_int_equal(rl.spurious, 0);
    /* its RTO (250 us after it left) falls inside the 665 us stream: the
     * resend costs one packet time, not a stall */
    assert_true(rl.fct_ps >= clean && rl.fct_ps < clean + 1000000);
    print_message("PSN 500 lost: resent once on entropy %u (was %u), FCT %.1f us against "
                  "%.1f us\n", wl.ent[1], wl.ent[0], rl.fct_ps / 1e6, clean / 1e6);
}

/* OBS's draws come from the run seed (through the connection's own
 * stream): the same seed sends the same entropies in the same order, another
 * seed others, each run as uniform over the uplinks. */
static void test_obs_seeded_by_run(void **state)
{
    (void)state;
    wtap a = {.drop_psn = UINT64_MAX}, b = a, c = a;
    qrun ra = run_qp(LS("obs"), &a, 1), rb = run_qp(LS("obs"), &b, 1);
    qrun rc = run_qp(LS("obs"), &c, 2);
    assert_int_equal(a.ehash, b.ehash);
    assert_memory_equal(a.up, b.up, sizeof a.up);
    assert_int_equal(ra.fct_ps, rb.fct_ps);
    assert_true(a.ehash != c.ehash);
    assert_true(memcmp(a.up, c.up, sizeof a.up) != 0);
    assert_int_equal(c.nic, 2000);
    assert_true(rc.chi_up < 24 && rc.chi_paths < 200);
    print_message("OBS seeds 1 and 2: uplink 0 carries %llu and %llu packets, chi2 %.1f and "
                  "%.1f\n", (unsigned long long)a.up[0], (unsigned long long)c.up[0], ra.chi_up,
                  rc.chi_up);
}

/* Fig. 12, small (stellar/rdma-paths): two NICs, 16 QPs of hashed
 * entropy values for 1 ms; per plane, the sender ToR's 8 uplinks:
 * (max - min) / 200 Gbps, the worse plane. */
static double plane_imbalance(const char *sub, double T)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/links.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {0, 0};
    int n[2] = {0, 0};
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        char pname[128];
        double rate, tx;
        if (sscanf(line, "%127[^,],%lf,%lf", pname, &rate, &tx) != 3 || pname[0] != 'p' ||
            strncmp(pname + 2, ".tor0.r0->", 10) || !strstr(pname, "agg"))
            continue;
        int pl = pname[1] == '1';
        n[pl]++;
        lo[pl] = tx < lo[pl] ? tx : lo[pl];
        hi[pl] = tx > hi[pl] ? tx : hi[pl];
    }
    free(b);
    assert_int_equal(n[0], 8);
    assert_int_equal(n[1], 8);
    double a = (hi[0] - lo[0]) * 8 / T / 200e9, c = (hi[1] - lo[1]) * 8 / T / 200e9;
    return a > c ? a : c;
}

static void test_path_count(void **state)
{
    (void)state;
    static const int paths[] = {4, 16, 128};
    double imb[3];
    for (int i = 0; i < 3; i++) {
        char set[64], sub[32];
        snprintf(set, sizeof set, "net.transport.multipath.paths=%d", paths[i]);
        snprintf(sub, sizeof sub, "paths%d", paths[i]);
        const char *sets[] = {set};
        json_t *r = tu_run("stellar/rdma-paths", sub, sets, 1);
        imb[i] = plane_imbalance(sub, jnum(r, "sim_time_s"));
        assert_true(jnum(results(r), "goodput_bps") > 0.95 * 400e9);
        json_decref(r);
    }
    print_message("RDMA uplink imbalance (max - min) / 200 Gbps: 4 paths %.3f, 16 %.3f, "
                  "128 %.3f\n", imb[0], imb[1], imb[2]);
    assert_true(imb[0] > 2.5 * imb[2]);
    assert_true(imb[1] > imb[2]);
    assert_true(imb[2] < 0.08);
}

/* stellar/rdma-allreduce at 16 MiB: the ring completes over multi-path
 * QPs at > 70 % of the 200 Gbps port (bus bandwidth > 17.5 GB/s, measured
 * 19.6), nothing resent. */
/* Bus bandwidth of stellar/rdma-allreduce at 16 MiB (run `sub`, one
 * more --set), and the smallest share an RNIC's less used port carried of
 * its data (links.csv: s*.g0->p0.* against s*.g0->p1.*). */
static double allreduce16(const char *sub, const char *set, double *port_share)
{
    const char *sets[] = {"collective.sweep.min_bytes=16MiB", "collective.sweep.max_bytes=16MiB",
                          set};
    json_t *r = tu_run("stellar/rdma-allreduce", sub, sets, set ? 3 : 2);
    assert_int_equal(jnum(results(r), "rdma_retransmits"), 0);
    assert_int_equal(jnum(results(r), "flows_aborted"), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/%s/nccl_tests.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    char *row = strchr(b, '\n');
    assert_non_null(row);
    double size, count, t, alg, bus;
    assert_int_equal(sscanf(row + 1, "%lf,%lf,float,sum,-1,%lf,%lf,%lf", &size, &count, &t, &alg,
                            &bus), 5);
    assert_true(size == 16777216);
    free(b);
    snprintf(path, sizeof path, "%s/%s/links.csv", tu_tmp, sub);
    b = tu_slurp(path, NULL);
    double tx[64][2] = {{0}};
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        int srv, pl;
        double rate, bytes;
        if (sscanf(line, "s%d.g0->p%d.tor%*[^,],%lf,%lf", &srv, &pl, &rate, &bytes) == 4 &&
            srv >= 0 && srv < 64 && (pl == 0 || pl == 1))
            tx[srv][pl] += bytes;
    }
    free(b);
    *port_share = 1;
    for (int i = 0; i < 64; i++) {
        double all = tx[i][0] + tx[i][1];
        double lo = tx[i][0] < tx[i][1] ? tx[i][0] : tx[i][1];
        if (all > 0 && lo / all < *port_share)
            *port_share = lo / all;
    }
    json_decref(r);
    return bus;
}

/* stellar/rdma-allreduce at 16 MiB: a ring of 16 RNICs of 2 x 200 Gbps
 * (25 GB/s a port).  With `ports: all` every QP sprays over both ports,
 * so the bus bandwidth passes one port's line rate (44.1 GB/s) and every
 * RNIC's less used port carries > 40 % of its data; with `ports: route`
 * (one port per QP, by hash) it stays below 25 GB/s (24.07, DCQCN's on
 * one port: the RTT cap on the fabric's base RTT; 19.6 with each QP's own
 * base RTT, docs/stellar.md section 6) and some port carries nothing.
 * Nothing resent in either. */
static void test_allreduce(void **state)
{
    (void)state;
    double share_all, share_route;
    double bus = allreduce16("ar", NULL, &share_all);
    double bus1 = allreduce16("ar1", "collective.transport.multipath.ports=route", &share_route);
    assert_true(bus > 30);
    assert_true(share_all > 0.4);
    assert_true(bus1 > 23.5 && bus1 < 25);
    assert_true(share_route < 0.05);
    print_message("RDMA OBS-128 ring all-reduce 16 MiB: bus bandwidth %.2f GB/s on both ports "
                  "(least used port %.1f %% of an RNIC's data), %.2f GB/s on the route's port "
                  "(%.1f %%)\n", bus, 100 * share_all, bus1, 100 * share_route);
}

/* ---- ECN on sprayed QPs: echoed on every ACK and NACK, acted on ------------ */

/* Two OBS-128 QPs of 100 Gbps (h0, h1 on leaf0) into h2 (leaf1) over 8
 * spines of 20 Gbps links: the sprayed packets queue at the leaf's
 * uplinks, unequally, so they arrive reordered (many acknowledgements are
 * NACKs), and the leaf1 -> h2 port (160 Gbps in, 100 out) marks from
 * 30 KB, after the reordering, so NACKs carry marks too. */
#define INCAST2 \
    "topology: {kind: leaf_spine, leaves: 2, spines: 8, hosts_per_leaf: 2,\n" \
    "  host_link: {rate: 100Gbps, delay: 1us, buffer: 4MB, ecn_k: 30KB},\n" \
    "  fabric_link: {rate: 20Gbps, delay: 1us, buffer: 4MB, ecn_k: 100KB}}\n" \
    "transport: {name: stellar_rocev2, mtu: 4158B, recovery: selective_repeat,\n" \
    "  multipath: {algo: obs, paths: 128}}\n"

typedef struct ecntap {
    hook h;
    uint64_t ece_ack, ece_nack, nack;   /* leaving h2's NIC */
} ecntap;

static int on_ecn(hook *h, port *q, pkt *p)
{
    ecntap *w = h->ctx;
    if (p->kind == PKT_DATA || strncmp(q->base.name, "h2->", 4))
        return HOOK_PASS;
    bool nack = p->h.rdma.op == RDMA_OP_NACK;
    w->nack += nack;
    if (p->flags & PKT_F_ECE) {
        w->ece_ack += p->h.rdma.op == RDMA_OP_ACK;
        w->ece_nack += nack;
    }
    return HOOK_PASS;
}

/* The receiver echoes CE on every acknowledgement, NACKs included (with
 * ack_interval 1 each data packet has its own), and the sender reacts: of
 * the ECE-flagged ACKs and NACKs leaving h2, NACKs carry part, the two
 * scoreboards count >= 90 % of them as marked on their paths (an ACK whose
 * PSN the cumulative point already covered counts no mark), and each QP's
 * window was cut on ECN, down to below half its initial BDP. */
static void test_ce_echoed_and_acted_on(void **state)
{
    (void)state;
    sim *s;
    cfg_doc *doc;
    network *n = make_net(INCAST2, 1, &s, &doc);
    topo *t = network_topo(n);
    ecntap w = {0};
    hook_init(&w.h, on_ecn, &w, "ecn");
    for (size_t l = 0; l < topo_links(t); l++)
        for (int d = 0; d < 2; d++)
            hook_attach(topo_link_port(t, (int)l, d), &w.h);
    int64_t fct[2] = {-2, -2};
    conn *cn[2];
    for (int i = 0; i < 2; i++) {
        cn[i] = network_connect(n, i, 2, 0);
        network_send_on(n, cn[i], 1000 * 4096, -1, 0, on_done, &fct[i]);
    }
    /* the scoreboards live until their QPs stop: read them every us */
    uint64_t marked[2] = {0}, cuts[2] = {0};
    double cwnd0[2] = {0}, cwnd_min[2] = {0};
    for (int step = 0; step < 100000 && (fct[0] == -2 || fct[1] == -2); step++) {
        sim_run(s, (int64_t)(step + 1) * 1000000);
        for (int i = 0; i < 2; i++) {
            const smp_qp *q = stellar_rdma_qp((rdma_qp *)cn[i]);
            if (!q)
                continue;
            uint64_t m = 0;
            for (uint32_t k = 0; k < q->paths.n; k++)
                m += q->paths.p[k].marked;
            marked[i] = m;
            cuts[i] = q->cc.cuts_ecn;
            if (!cwnd0[i])
                cwnd0[i] = cwnd_min[i] = (double)q->pr->line_rate_bps / 8 *
                                         ((double)q->pr->base_rtt_ps / 1e12);
            if (q->cc.cwnd_bytes < cwnd_min[i])
                cwnd_min[i] = q->cc.cwnd_bytes;
        }
    }
    sim_run(s, SIM_TIME_MAX);
    assert_true(fct[0] > 0 && fct[1] > 0);
    uint64_t ece = w.ece_ack + w.ece_nack;
    print_message("two OBS-128 QPs into one 100 Gbps port: %llu NACKs, %llu ACKs and %llu NACKs "
                  "echo CE, %llu marks counted by the senders, ECN cuts %llu and %llu, window "
                  "down to %.0f and %.0f of %.0f B\n", (unsigned long long)w.nack,
                  (unsigned long long)w.ece_ack, (unsigned long long)w.ece_nack,
                  (unsigned long long)(marked[0] + marked[1]), (unsigned long long)cuts[0],
                  (unsigned long long)cuts[1], cwnd_min[0], cwnd_min[1], cwnd0[0]);
    assert_true(w.nack > 500);              /* sprayed: reordered (952) */
    assert_true(ece > 100);                 /* 167 ACKs and 154 NACKs */
    assert_true(w.ece_nack > ece / 4);
    assert_true(marked[0] + marked[1] <= ece);
    assert_true(marked[0] + marked[1] >= 0.9 * (double)ece);
    for (int i = 0; i < 2; i++) {
        assert_true(cuts[i] > 0);
        assert_true(cwnd_min[i] < 0.5 * cwnd0[i]);
    }
    hook_fini(&w.h);
    network_destroy(n);
    sim_destroy(s);
    cfg_free(doc);
}

static void expect_bad(const char *set, const char *needle)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/bad", tu_tmp);
    const char *sets[] = {set};
    run_opts o = {.scenario = EX, .out_dir = dir, .sets = sets, .nsets = 1};
    err e = {0};
    json_t *sum = NULL;
    int rc = run_scenario(&o, &sum, NULL, &e);
    assert_null(sum);
    assert_int_equal(run_exit_code(rc), EXIT_BAD_INPUT);
    if (!strstr(e.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, needle);
}

/* Bus bandwidth (GB/s) in collectives.csv of run directory sub. */
static double busbw(const char *sub)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/collectives.csv", tu_tmp, sub);
    char *b = tu_slurp(path, NULL);
    char *row = strchr(b, '\n');
    assert_non_null(row);
    double v = -1;
    int f = 0;
    for (char *c = row + 1; *c && f < 9; c++)
        if (*c == ',' && ++f == 9)
            v = strtod(c + 1, NULL);
    free(b);
    assert_true(v > 0);
    return v;
}

/* Fig. 11's example (stellar/rdma-lossy-allreduce: 128 GPUs, hierarchical
 * all-reduce, 8 channels) at 16 MiB, OBS-128: clean, at > 150 GB/s of bus
 * bandwidth and no resend; with its ToR uplink dropping 3 %, every rank
 * completes, each lost data packet resent alone (resends between 1 and the
 * port's drops, which include ACKs), slower: a loss costs its RTO (250 us)
 * in a 0.2 ms collective (docs/stellar.md section 6, Fig. 11). */
static void test_lossy_allreduce(void **state)
{
    (void)state;
    const char *clean[] = {"collective.sweep.min_bytes=16MiB", "collective.sweep.max_bytes=16MiB"};
    const char *lossy[] = {"collective.sweep.min_bytes=16MiB", "collective.sweep.max_bytes=16MiB",
                           "collective.faults[0].rate=0.03"};
    json_t *c = tu_run("stellar/rdma-lossy-allreduce", "f11c", clean, 2);
    json_t *l = tu_run("stellar/rdma-lossy-allreduce", "f11l", lossy, 3);
    double bc = busbw("f11c"), bl = busbw("f11l");
    assert_int_equal(jnum(results(c), "rdma_retransmits"), 0);
    assert_int_equal(jnum(results(l), "flows_aborted"), 0);
    double rtx = jnum(results(l), "rdma_retransmits"), drops = jnum(results(l), "drops");
    assert_true(bc > 150);
    assert_true(rtx >= 1 && rtx <= drops);
    assert_true(bl < bc);
    print_message("Fig. 11 example, 16 MiB: bus bandwidth %.1f GB/s clean, %.1f with 3 %% loss "
                  "(%.0f resent of %.0f dropped)\n", bc, bl, rtx, drops);
    json_decref(c);
    json_decref(l);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_bad("net.transport.recovery=go_back_n", "net.transport.recovery: expected selective_repeat");
    expect_bad("net.transport.multipath.paths=0", "net.transport.multipath.paths");
    expect_bad("net.transport.multipath.paths=257", "net.transport.multipath.paths");
    expect_bad("net.transport.multipath.algo=zigzag", "net.transport.multipath.algo");
    expect_bad("net.transport.multipath.window=100", "net.transport.multipath.window");
}

static void test_deterministic(void **state)
{
    (void)state;
    json_t *a = tu_run(EX, "det-a", NULL, 0);
    json_t *b = tu_run(EX, "det-b", NULL, 0);
    tu_assert_same_file("det-a", "det-b", "flows.csv");
    tu_assert_same_file("det-a", "det-b", "links.csv");
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_obs_against_single),
        cmocka_unit_test(test_lossy_link),
        cmocka_unit_test(test_fig9_paper_scale),
        cmocka_unit_test(test_choice_on_the_wire),
        cmocka_unit_test(test_obs_seeded_by_run),
        cmocka_unit_test(test_ce_echoed_and_acted_on),
        cmocka_unit_test(test_path_count),
        cmocka_unit_test(test_allreduce),
        cmocka_unit_test(test_lossy_allreduce),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
