/*
 * rdma_bits.c - sets of PSNs for selective repeat (rdma_int.h): the
 * sender's record of what the receiver holds beyond its cumulative ACK,
 * and the receiver's out-of-order arrivals, placed by PSN.
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "rdma_int.h"

bool rdma_bits_has(const rdma_bits *b, uint64_t psn)
{
    if (psn < b->base)
        return true;
    uint64_t i = (psn - b->base) / 64;
    return i < b->n && (b->w[i] >> ((psn - b->base) % 64) & 1);
}

void rdma_bits_set(rdma_bits *b, uint64_t psn)
{
    if (psn < b->base)
        return;
    uint64_t i = (psn - b->base) / 64;
    if (i >= b->n) {
        size_t n = b->n ? b->n : 1;
        while (n <= i)
            n *= 2;
        b->w = xrealloc(b->w, n * sizeof *b->w);
        memset(b->w + b->n, 0, (n - b->n) * sizeof *b->w);
        b->n = n;
    }
    b->w[i] |= UINT64_C(1) << ((psn - b->base) % 64);
}

bool rdma_bits_take(rdma_bits *b, uint64_t psn)
{
    if (psn < b->base || !rdma_bits_has(b, psn))
        return false;
    b->w[(psn - b->base) / 64] &= ~(UINT64_C(1) << ((psn - b->base) % 64));
    rdma_bits_advance(b, psn);
    return true;
}

void rdma_bits_advance(rdma_bits *b, uint64_t psn)
{
    if (psn < b->base + 64)
        return;
    uint64_t drop = (psn - b->base) / 64;
    if (drop >= b->n) {
        if (b->n)
            memset(b->w, 0, b->n * sizeof *b->w);
    } else {
        memmove(b->w, b->w + drop, (b->n - drop) * sizeof *b->w);
        memset(b->w + b->n - drop, 0, drop * sizeof *b->w);
    }
    b->base += drop * 64;
}
