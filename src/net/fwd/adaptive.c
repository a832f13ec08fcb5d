/*
 * adaptive.c - adaptive switch routing: each packet takes, among the
 * equal-cost next hops, the egress port with the fewest bytes queued (as
 * htsim's fat-tree switches' ADAPTIVE_ROUTING strategy compares their
 * candidate queues); ties are broken by the packet's entropy as ECMP
 * would hash it (fwd_by_entropy over the tied ports), so that equal
 * queues do not all send to the first port.  The decision is per packet
 * (no flowlets): a flow's packets may take different paths and arrive out
 * of order, as with spraying, so transports are checked as for spraying
 * (transport_ops.spray_check).  It reads only what the switch sees: the
 * queues of its own egress ports at the moment the packet arrives.
 *
 * For a flow's route (no packet), the ECMP choice.
 */
#include "aisim/fwd.h"

static uint32_t adaptive_choose(void *state, const fwd_hop *h)
{
    if (!h->p)
        return fwd_by_entropy(state, h);
    int64_t least = INT64_MAX;
    uint32_t ties = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        int64_t b = h->c[i].q->bytes;
        if (b < least) {
            least = b;
            ties = 1;
        } else if (b == least) {
            ties++;
        }
    }
    uint32_t k = 0;
    if (ties > 1) {
        fwd_hop sub = *h;
        sub.n = ties;
        k = fwd_by_entropy(state, &sub);
    }
    for (uint32_t i = 0; i < h->n; i++)
        if (h->c[i].q->bytes == least && k-- == 0)
            return i;
    return 0;                   /* not reached */
}

const fwd_ops fwd_adaptive = {
    .name = "adaptive",
    .summary = "adaptive switch routing: per packet, the least-queued equal-cost port",
    .send = FWD_SEND_RANDOM,
    .choose = adaptive_choose,
};
