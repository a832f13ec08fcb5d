/*
 * maxmin.h - max-min fair rates of flows over capacitated links, by
 * progressive filling, recomputed incrementally (the flow-level plane's
 * solver; sans-I/O: no clock, no engine).
 *
 * Each flow crosses a set of links with a weight per link (1 on a single
 * path; k/P on a link that k of a sprayed flow's P equal-cost paths cross:
 * the flow's rate r uses w·r of the link) and may have a rate cap.  The
 * max-min allocation is the one progressive filling finds: every flow's
 * rate rises together until a link is full (Σ w·r = capacity) or a flow
 * reaches its cap; the flows of that link (that flow) are frozen; the rest
 * go on rising (Bertsekas & Gallager, Data Networks, §6.5.2; SimGrid's
 * fluid model).  It is computed as the bottleneck algorithm: a heap of the
 * links' fair shares (remaining capacity / weight of the unfrozen flows),
 * smallest first; a share only grows as flows freeze, so stale heap
 * entries are skipped.  Cost O((F·h + L) log L) for F flows of h hops.
 *
 * Incremental: adding or removing a flow marks its links; mmf_solve()
 * recomputes only the flows a change can reach through saturated links
 * (a flow whose shared links all have room is held by a bottleneck the
 * change does not touch), growing that set when filling finds a new
 * bottleneck outside it, and reports the flows whose rate changed.
 * mmf_solve_all() recomputes every connected component from scratch; the
 * two agree to rounding (tests: 1e-9 relative over random sequences).
 *
 * Memory: 72 bytes per link, 40 bytes per flow plus 24 bytes per hop (16
 * in the flow's list, 8 in the link's).
 */
#ifndef AISIM_MAXMIN_H
#define AISIM_MAXMIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct mmf mmf;

/* A solver over `links` links, every capacity 0 (mmf_set_capacity). */
mmf *mmf_create(size_t links);
void mmf_destroy(mmf *m);
/* Capacity of link l (>= 0; 0: a failed link, its flows get rate 0).
 * Marks the link: its component is recomputed at the next solve. */
void mmf_set_capacity(mmf *m, uint32_t l, double cap);
double mmf_capacity(const mmf *m, uint32_t l);

/* Adds a flow over links[0..n) with weights w (NULL: all 1; a link listed
 * twice adds its weights), rate cap `cap` (<= 0: none); returns its id
 * (ids are reused after mmf_remove).  Its rate is 0 until the next solve. */
uint32_t mmf_add(mmf *m, const uint32_t *links, const double *w, size_t n, double cap);
void mmf_remove(mmf *m, uint32_t f);
double mmf_rate(const mmf *m, uint32_t f);
/* Sum of the rates·weights of the flows on link l. */
double mmf_link_load(const mmf *m, uint32_t l);
size_t mmf_flows(const mmf *m);         /* flows present */

/* Recomputes the components touched since the last solve; fn(ctx, f,
 * old_rate) for each flow whose rate changed (in component order), fn may
 * be NULL.  Returns the number of flows recomputed. */
size_t mmf_solve(mmf *m, void (*fn)(void *ctx, uint32_t f, double old), void *ctx);
/* Recomputes every component from scratch (tests, reference). */
void mmf_solve_all(mmf *m);
/* Bytes the solver holds (memory accounting). */
size_t mmf_bytes(const mmf *m);

#endif
