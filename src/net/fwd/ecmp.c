/*
 * ecmp.c - the forwarders by entropy (fwd.h: fwd_by_entropy): ECMP by flow
 * hash, and per-packet spraying by random entropy or round robin over the
 * paths.  All three choose alike at a switch; they differ in what the
 * connection sends: one route per flow (ecmp), or packets forwarded hop by
 * hop with a random entropy (spray_random) or a path index (spray_rr).
 */
#include "aisim/fwd.h"

const fwd_ops fwd_ecmp = {
    .name = "ecmp",
    .summary = "ECMP: one path per flow, hash(flow key, switch seed) mod next hops",
    .send = FWD_SEND_ROUTE,
    .choose = fwd_by_entropy,
};

const fwd_ops fwd_spray_rr = {
    .name = "spray_rr",
    .summary = "per-packet spraying, round robin over the equal-cost paths (a path index)",
    .send = FWD_SEND_INDEX,
    .choose = fwd_by_entropy,
};

const fwd_ops fwd_spray_random = {
    .name = "spray_random",
    .summary = "per-packet spraying, a random entropy value per packet hashed at each switch",
    .send = FWD_SEND_RANDOM,
    .choose = fwd_by_entropy,
};
