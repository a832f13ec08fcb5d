/*
 * skel_order.h - the pipeline-stage order of a task's groups on one rail
 * (skel_order.c), used by skel_infer: which groups are neighbours in the
 * pipeline (the chain that maximises the co-variation of neighbours'
 * traffic) and which end of the chain is stage 0 (the end whose traffic
 * starts first in the iteration).  Sans I/O; only the per-RNIC series and
 * the container placement, as the paper's system sees them.
 */
#ifndef AISIM_SKEL_ORDER_H
#define AISIM_SKEL_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* Up to this many groups the chain is exact (dynamic programme over
 * subsets, O(2^k k^2)); above, greedy chains refined by segment
 * reversals (2-opt). */
#define SKEL_CHAIN_EXACT 16

/* The similarity correlates series summed over this many consecutive
 * samples (2 s): adjacent stages' transfers are fractions of a second
 * apart, and a burst's share of each 1-s sample moves with the jitter of
 * its iteration. */
#define SKEL_SIM_WINDOW 2

/* Similarity of the k groups of one rail.  Member x (0..m-1) has the series
 * series[mem[x] * len ...] (len 1-s samples), host host[x] and group
 * label[x] in 0..k-1.  S[a * k + b] = the mean over the members x of a of
 * the largest Pearson correlation between x's series and that of a member
 * of b on another host (series summed over SKEL_SIM_WINDOW samples), averaged with S[b * k + a] (symmetric; the
 * diagonal is the same measure within a group).  Both ends of an
 * activation transfer carry its bytes in the same seconds, so a member's
 * series co-varies most with its own replica's members of the adjacent
 * stages.  A constant series correlates 0 with everything. */
void skel_group_similarity(const double *series, size_t len, const size_t *mem, size_t m,
                           const int32_t *host, const int *label, int k, double *S);

/* The chain through k groups (a Hamiltonian path) with the largest sum of
 * S between neighbours: order[i] = the group at position i.  Exact for
 * k <= SKEL_CHAIN_EXACT, else the best of the greedy chains grown from
 * every group, each improved by 2-opt until no reversal helps.  Ties go to
 * the chain found first (deterministic).  Returns the sum. */
double skel_chain(const double *S, int k, int *order);

/* Which end of the chain order[0..k) is stage 0, from the groups' mean
 * series gmean (k x len, row = group id), folded over `period` samples in
 * bins of 0.1 s.  A group is active in a bin when its folded traffic is
 * above its floor (lowest bin) by a tenth of its mean over the floor; the
 * iteration boundary is the longest run of bins where the task's total
 * is inactive; a group's onset is its first active bin after that
 * boundary (past any tail of the previous iteration).  Each step of the
 * chain votes for the direction in which the onset grows (steps within
 * 0.15 s abstain): in 1F1B stage s receives its first activation s
 * forward passes after stage 0 starts.  A tie (PP 2: both ends carry the
 * same first transfer) goes to the end whose folded traffic has the later
 * circular centroid: 1F1B's first stage runs the iteration's last
 * backward pass and so its gradient all-reduce comes last.
 * Returns +1 if order[0] is stage 0, -1 if order[k-1] is; `votes` (if not
 * NULL) gets the vote (0: the tie-break decided). */
int skel_chain_direction(const double *gmean, int k, size_t len, double period, const int *order,
                         int *votes);

#endif
