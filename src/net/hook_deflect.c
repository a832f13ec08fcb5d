/*
 * hook_deflect.c - a hook kind that changes routes: `deflect` at a node
 * (net.hooks: [{kind: deflect, node: NAME, threshold: 100KB}]).  A packet
 * forwarded hop by hop (pkt.h: rt NULL) that reaches one of the node's
 * egress ports while that port holds more than `threshold` bytes is sent
 * instead to the least-queued of the node's other equal-cost next hops
 * toward its destination (topo_next_hops), if that one holds fewer bytes;
 * otherwise it stays.  A local, egress-side load balancer in the manner of
 * a switch's congestion-aware rerouting: it reads only the node's own
 * queues.  Source-routed packets (ECMP and D-mod-K flows) keep their
 * route.  It never drops; queue lengths strictly fall along a chain of
 * deflections, so a packet cannot cycle between two deflecting ports.
 *
 * A worked example of a hook kind: this file and one line in
 * src/cli/registry.c (docs/architecture.md).
 */
#include "aisim/fwd.h"
#include "aisim/hook.h"

typedef struct deflect_cfg {
    int64_t threshold;          /* bytes queued above which packets move */
} deflect_cfg;

static const cfg_key deflect_keys[] = {
    {.name = "threshold", .type = CFG_SIZE, .off = offsetof(deflect_cfg, threshold),
     .flags = CFG_MIN, .min = 0, .help = "queued bytes above which a packet is deflected"},
    {0},
};

static int deflect_fn(hook *h, port *q, pkt *p)
{
    hook_inst *in = h->ctx;
    const deflect_cfg *c = in->cfg;
    if (p->rt || q->bytes <= c->threshold)
        return HOOK_PASS;
    in->seen_pkts++;
    const fwd_cand *nh;
    uint32_t n = topo_next_hops(in->t, in->node, (int)p->dst_node, &nh);
    port *best = q;
    for (uint32_t i = 0; i < n; i++)
        if (nh[i].q->bytes < best->bytes)
            best = nh[i].q;
    if (best == q)
        return HOOK_PASS;
    hook_redirect(h, q, p, best);
    return HOOK_TAKEN;
}

const hook_kind hook_deflect = {
    .name = "deflect",
    .summary = "moves packets forwarded hop by hop off a port above threshold to the "
               "least-queued equal-cost port",
    .keys = deflect_keys,
    .cfg_size = sizeof(deflect_cfg),
    .fn = deflect_fn,
    .node_only = true,
};
