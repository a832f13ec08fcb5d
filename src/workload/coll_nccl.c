/*
 * coll_nccl.c - NCCL's protocol and latency model (collective.h:
 * coll_tune; docs/workloads.md, "NCCL's protocols").
 *
 * The constants are those of NCCL 2.30.7's tuner (src/graph/tuning.cc,
 * commit 5067397c of github.com/NVIDIA/nccl): per algorithm and protocol
 * a base latency per call, a hardware latency per step over NVLink or the
 * network, per-channel bandwidth caps by GPU generation; the selection
 * (src/enqueue.cc, topoGetAlgoInfo) picks the algorithm and protocol of
 * least estimated time lat + bytes / bw and trims channels while a call
 * is too small for them.  Only ring and tree (NCCL's two algorithms that
 * aisim has) are tuned; NVLS, CollNet and PAT are not modelled.
 *
 * What is NCCL's here and what is aisim's: the tables and formulas are
 * NCCL's; the bandwidths NCCL's graph search finds (bwIntra, bwInter per
 * channel) are aisim's reading of the topology: a channel's ring leaves
 * each server on its own rail, so c channels over servers of G GPUs use
 * min(c, G) NICs of the slowest endpoint's rate, and never more than its
 * NVLink (a single server: its NVLink; a tree on two servers: twice that
 * NIC bandwidth, as NCCL's search raises a tree graph's bwIntra and its
 * tuner reads bwIntra for two nodes).
 */
#include <math.h>

#include "aisim/collective.h"
#include "aisim/port.h"
#include "aisim/topo.h"
#include "workload/coll_int.h"

const char *const coll_proto_names[] = {"none", "auto", "LL", "LL128", "Simple", NULL};
const char *const coll_arch_names[] = {"volta", "ampere", "hopper", "blackwell", NULL};

enum { P_LL, P_LL128, P_SIMPLE };   /* NCCL's protocol order */
enum { A_TREE, A_RING };            /* NCCL's algorithm order */
enum { HW_NVLINK, HW_PCI, HW_NET };

/* tuning.cc: baseLatencies[algo][proto] (us) */
static const double base_lat[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
/* hwLatencies[hw][algo][proto] (us) */
static const double hw_lat[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},    /* NVLink */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},     /* PCI */
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}},     /* network */
};
/* llMaxBws[index1][nodes: 1, 2, more] (GB/s); index1: the GPU generation
 * on one server, the CPU (0: Intel) on several */
static const double ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double ring_ll128_bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double tree_ll128_bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double tree_bw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
/* treeCorrectionFactor[proto][log2(bytes / 64)] */
static const double tree_corr[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
     1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
     1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};
/* device.h / comm.h: threads per channel and bytes per thread before a
 * channel is worth it */
static const int max_threads[3] = {512, 640, 512};
static const int thread_threshold[3] = {8, 8, 64};
enum { PCI_BW_GBPS = 12 };              /* topo.h: PCI_BW, Gen3 x16 */
static const double net_overhead_us = 1.0;      /* getNetOverhead: x86 Intel */

static int log2i(uint64_t v)
{
    int l = -1;
    while (v) {
        v >>= 1;
        l++;
    }
    return l;
}

/* Slowest endpoint's NIC and NVLink rates (GB/s) of the world's fabric;
 * NVLink 0 if no endpoint has one. */
static void world_rates(coll_world *w, double *nic, double *nvl)
{
    if (!w->rates_known) {
        topo *t = network_topo(w->net);
        size_t nl = topo_links(t);
        double mn = INFINITY, mv = INFINITY;
        for (size_t l = 0; l < nl; l++) {
            int a, b;
            topo_link_ends(t, (int)l, &a, &b);
            for (int d = 0; d < 2; d++) {
                int from = d ? b : a;
                if (topo_node_host(t, from) < 0)
                    continue;
                double r = (double)topo_link_port(t, (int)l, d)->cfg.rate_bps / 8e9;
                if (topo_link_is_intra_host(t, (int)l))
                    mv = r < mv ? r : mv;
                else
                    mn = r < mn ? r : mn;
            }
        }
        w->nic_GBps = isfinite(mn) ? mn : 0;
        w->nvl_GBps = isfinite(mv) ? mv : 0;
        w->rates_known = true;
    }
    *nic = w->nic_GBps;
    *nvl = w->nvl_GBps;
}

void coll_tune(coll_comm *c, const coll_args *a, coll_tuning *t)
{
    *t = (coll_tuning){.algo = a->algo, .proto = a->proto};
    int n = c->n, arch = (int)a->arch;
    const int *srv = coll_world_servers(c->w);
    int *slot = c->w->server_slot, nodes = 0;
    int *ids = xcalloc((size_t)n, sizeof *ids);
    for (int i = 0; i < n; i++)
        if (slot[srv[c->eps[i]]] < 0) {
            slot[srv[c->eps[i]]] = nodes;
            ids[nodes++] = srv[c->eps[i]];
        }
    for (int k = 0; k < nodes; k++)
        slot[ids[k]] = -1;
    free(ids);
    int ppn = n / nodes, G = ppn > 0 ? ppn : 1;
    t->nodes = nodes;
    t->ppn = ppn;
    double nic, nvl;
    world_rates(c->w, &nic, &nvl);
    int nc = a->channels > 0 ? a->channels : 1;
    if (a->max_channels > 0 && nc > a->max_channels)
        nc = a->max_channels;
    if (a->min_channels > nc)
        nc = a->min_channels;
    double rails = nc < G ? nc : G;
    double bus_simple = nodes == 1 ? (nvl > 0 ? nvl : nic)
                                   : (nvl > 0 && nvl < rails * nic ? nvl : rails * nic);
    int i2 = nodes <= 2 ? nodes - 1 : 2, i1 = nodes == 1 ? arch : 0;
    int intra_hw = nvl > 0 ? HW_NVLINK : HW_PCI;
    bool ar = a->type == COLL_ALLREDUCE;
    int nsteps = ar ? 2 * (n - 1)
               : a->type == COLL_REDUCE_SCATTER || a->type == COLL_ALLGATHER ? n - 1 : n;
    double lat[2][3], bw[2][3];
    for (int al = 0; al < 2; al++)
        for (int p = 0; p < 3; p++) {
            double busbw = bus_simple, l = base_lat[al][p];
            double intra = hw_lat[intra_hw][al][p];
            double inter = ppn == 1 ? hw_lat[HW_NET][A_TREE][p] : hw_lat[HW_NET][al][p];
            if (al == A_RING) {
                if (p == P_LL)
                    busbw = fmin(ll_max_bw[i1][i2], busbw * .5);
                if (p == P_LL128)
                    busbw = fmin(busbw * .92, nc * ring_ll128_bw[arch][i2]);
                double ovh = nodes > 1 ? net_overhead_us * (p == P_SIMPLE ? 3 : 1) : 0;
                double in = fmax(intra, ovh);
                int ninter = nodes == 1 ? 0 : ar ? 2 * (nodes - 1) : nodes - 1;
                if (ninter > nsteps)
                    ninter = nsteps;
                l += (nsteps - ninter) * in + ninter * inter;
                busbw *= (double)n / nsteps;
            } else {
                /* two servers: NCCL's tuner reads the tree graph's intra
                 * bandwidth, which its search raises up to twice the
                 * inter-server one (search.cc, "increase bwIntra for
                 * trees (2 nodes or collnet)"; tuning.cc, nNodes <= 2):
                 * a tree's servers exchange S each way, half a ring's */
                if (nodes == 2)
                    busbw = nvl > 0 ? fmin(2 * rails * nic, nvl) : 2 * rails * nic;
                if (ar)
                    busbw = fmin(busbw * .92, nc * tree_bw[arch][i2]);
                if (p == P_LL)
                    busbw = fmin(busbw / 3.8, ll_max_bw[i1][i2]);
                if (p == P_LL128)
                    busbw = fmin(busbw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                                 nc * tree_ll128_bw[arch][i2]);
                if (ar)
                    l += 2 * ((ppn - 1) * intra + log2i((uint64_t)nodes) * inter);
                busbw *= .5;
            }
            lat[al][p] = l;
            bw[al][p] = busbw;
        }
    /* estimates (ncclTopoGetAlgoTime, one operation) and the pick */
    bool tree_ok = ar && (a->algo == COLL_ALGO_AUTO || a->algo == COLL_ALGO_TREE);
    bool ring_ok = a->algo != COLL_ALGO_TREE;
    double best = INFINITY;
    int ba = A_RING, bp = P_SIMPLE;
    for (int al = 0; al < 2; al++)
        for (int p = 0; p < 3; p++) {
            double b = bw[al][p], l = lat[al][p];
            int ls = log2i(a->bytes >> 6);
            if (al == A_TREE && ar && ls >= 0 && ls < 23)
                b *= tree_corr[p][ls];
            if (al == A_RING && p == P_SIMPLE && nodes > 1 && ar &&
                a->bytes / ((uint64_t)nc * (uint64_t)n) >= 64)
                l *= arch == COLL_ARCH_VOLTA ? 1.9 : 1.4;   /* ring plateau */
            bool ok = (al == A_TREE ? tree_ok : ring_ok) && b > 0 &&
                      (a->proto == COLL_PROTO_AUTO || (int)a->proto == COLL_PROTO_LL + p);
            double tm = l + (double)a->bytes / (1000 * b);
            t->time_us[al == A_TREE][p] = ok ? tm : -1;
            if (ok && tm < best) {
                best = tm;
                ba = al;
                bp = p;
            }
        }
    /* all-to-all and send/recv are point to point: Simple (NCCL's p2p
     * path, not its tuner) */
    if (a->type == COLL_ALLTOALL || a->type == COLL_SENDRECV)
        bp = a->proto == COLL_PROTO_AUTO ? P_SIMPLE : (int)a->proto - COLL_PROTO_LL;
    if (a->algo == COLL_ALGO_AUTO && ar)
        t->algo = ba == A_TREE ? COLL_ALGO_TREE : COLL_ALGO_RING;
    else if (a->algo == COLL_ALGO_AUTO && a->type != COLL_ALLTOALL && a->type != COLL_SENDRECV)
        t->algo = COLL_ALGO_RING;
    t->proto = (enum coll_proto)(COLL_PROTO_LL + bp);
    int al = t->algo == COLL_ALGO_TREE ? A_TREE : A_RING;
    t->base_us = base_lat[al][bp];
    if (al == A_TREE) {
        t->intra_us = hw_lat[intra_hw][A_TREE][bp];
        t->inter_us = hw_lat[HW_NET][A_TREE][bp];
    } else {
        double ovh = nodes > 1 ? net_overhead_us * (bp == P_SIMPLE ? 3 : 1) : 0;
        t->intra_us = fmax(hw_lat[intra_hw][A_RING][bp], ovh);
        t->inter_us = ppn == 1 ? hw_lat[HW_NET][A_TREE][bp] : hw_lat[HW_NET][A_RING][bp];
        if (bp == P_SIMPLE && nodes > 1 && ar && a->bytes / ((uint64_t)nc * (uint64_t)n) >= 64) {
            double f = arch == COLL_ARCH_VOLTA ? 1.9 : 1.4;
            t->base_us *= f;
            t->intra_us *= f;
            t->inter_us *= f;
        }
    }
    t->bw_GBps = bw[al][bp];
    /* channels: trimmed while the call is smaller than nc x threads x
     * bytes per thread (ring LL: per rank) */
    if (a->type == COLL_ALLTOALL || a->type == COLL_SENDRECV) {
        t->channels = nc;       /* p2p: not trimmed here */
        return;
    }
    int nt = max_threads[bp];
    if (al == A_RING && bp == P_SIMPLE && bus_simple <= PCI_BW_GBPS)
        nt = 256;
    uint64_t thr = (uint64_t)thread_threshold[bp] * (al == A_RING && bp == P_LL ? (uint64_t)n : 1);
    while (a->bytes < (uint64_t)nc * (uint64_t)nt * thr && nc >= 2)
        nc--;
    t->channels = nc;
}

uint64_t coll_proto_wire(enum coll_proto p, uint64_t bytes)
{
    switch (p) {
    case COLL_PROTO_LL:
        return 2 * bytes;
    case COLL_PROTO_LL128:
        return (bytes + 119) / 120 * 128;
    default:
        return bytes;
    }
}

int64_t coll_step_ps(const coll_run *r, int src, int dst)
{
    if (r->a.proto == COLL_PROTO_NONE)
        return 0;
    const int *srv = coll_world_servers(r->c->w);
    bool same = srv[r->c->eps[src]] == srv[r->c->eps[dst]];
    return same ? r->intra_ps : r->inter_ps;
}
