/*
 * sim.c - the event engine: a 4-ary min-heap with lazy cancellation.
 *
 * Layout.  The heap is an array of 16-byte entries {key, at_ps}; key packs
 * the event's sequence number (high 40 bits) and its slot index (low 24
 * bits).  Read as one unsigned 128-bit number an entry is (at << 64 | seq
 * << 24 | slot), so one comparison orders by time, then by scheduling
 * order.  The array starts 3 entries into a 64-byte aligned block, so the
 * four children of a node fill exactly one cache line, and the least of
 * them is found without branches.  After a pop the hole sinks to a leaf
 * along the least children and the last entry rises from there (Floyd's
 * bottom-up variant: the last entry belongs near the bottom).
 *
 * Slots hold the handler, its object and argument, the sequence number of
 * the slot's pending entry and a generation.  An event id is (generation
 * << 32 | slot).  Cancelling frees the slot at once (generation + 1) and
 * leaves the heap entry behind as a tombstone: when it reaches the top its
 * sequence number no longer matches its slot's, and it is dropped.  So no
 * heap move ever writes to the slot array (keeping heap positions in the
 * slots costs a random write per level; see docs/benchmarks.md for the
 * measurements of both designs).  Tombstones are compacted away (filter
 * and re-heapify, O(n)) when they outnumber live events, so the heap stays
 * within twice the pending count.  A stale id (the event ran or was
 * cancelled) is recognised by its generation and ignored.
 *
 * Cost: O(log4 n) per schedule and run; O(1) per cancel, plus the amortised
 * compaction.  Limits: 2^24 - 1 slots (pending events), 2^40 events
 * scheduled per run (both checked).
 */
#include "aisim/sim.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

#define SLOT_BITS 24
#define SLOT_MASK ((UINT64_C(1) << SLOT_BITS) - 1)
#define SEQ_MAX (UINT64_C(1) << (64 - SLOT_BITS))
#define NO_FREE UINT32_MAX

/* Field order matters: on a little-endian machine the 16 bytes read as one
 * unsigned 128-bit number.  Times are never negative (sim_schedule
 * asserts). */
typedef struct hent {
    uint64_t key;       /* seq << SLOT_BITS | slot */
    int64_t at;         /* firing time, ps */
} hent;

typedef unsigned __int128 u128;

typedef struct slot {
    sim_fn *fn;         /* handler */
    void *obj;          /* handler object */
    uint64_t arg;       /* handler argument */
    uint64_t seq;       /* sequence number of the pending entry; 0 if none */
    uint32_t gen;       /* generation, >= 1 */
    uint32_t next_free; /* free list link while the slot is free */
} slot;

struct sim {
    hent *heap;         /* entries, heap-ordered: heap_mem + 3 */
    hent *heap_mem;     /* 64-byte aligned allocation */
    uint32_t n;         /* entries, tombstones included */
    uint32_t cap;       /* heap capacity */
    uint32_t live;      /* pending events (entries that are not tombstones) */
    slot *slots;        /* callback data, indexed by slot */
    uint32_t nslots;    /* slots in use or on the free list */
    uint32_t slot_cap;
    uint32_t free_head; /* free slot list, NO_FREE if empty */
    uint64_t seq;       /* next sequence number (starts at 1) */
    int64_t now;        /* current time, ps */
    uint64_t events;    /* handlers run */
    int stopped;        /* sim_stop() called during this sim_run() */
    void (*mon_fn)(void *ctx, sim *s);
    void *mon_ctx;
    uint64_t mon_every, mon_left;
};

static inline u128 hkey(hent e)
{
    return (u128)(uint64_t)e.at << 64 | e.key;
}

static inline bool hless(hent a, hent b)
{
    return hkey(a) < hkey(b);
}

/* Index of the least of the four children starting at c (all exist). */
static inline uint32_t min4(const hent *h, uint32_t c)
{
    u128 k0 = hkey(h[c]), k1 = hkey(h[c + 1]), k2 = hkey(h[c + 2]), k3 = hkey(h[c + 3]);
    uint32_t a = k1 < k0 ? c + 1 : c, b = k3 < k2 ? c + 3 : c + 2;
    u128 ka = k1 < k0 ? k1 : k0, kb = k3 < k2 ? k3 : k2;
    return kb < ka ? b : a;
}

/* Index of the least child, given that child c exists. */
static inline uint32_t min_child(const hent *h, uint32_t n, uint32_t c)
{
    if (c + 3 < n)
        return min4(h, c);
    uint32_t m = c;
    for (uint32_t j = c + 1; j < n; j++)
        if (hless(h[j], h[m]))
            m = j;
    return m;
}

/* (Re)allocates the heap for `cap` entries, keeping its contents; the array
 * starts 3 entries into a 64-byte aligned block, so that the children of
 * node i (entries 4i+1 .. 4i+4) fill exactly one cache line. */
static void heap_alloc(sim *s, uint32_t cap)
{
    size_t bytes = ((size_t)cap + 3) * sizeof(hent);
    bytes = (bytes + 63) & ~(size_t)63;
    hent *mem = aligned_alloc(64, bytes);
    if (!mem) {
        fprintf(stderr, "aisim: out of memory (event heap of %u entries)\n", cap);
        abort();
    }
    if (s->heap_mem) {
        memcpy(mem + 3, s->heap, (size_t)s->n * sizeof(hent));
        free(s->heap_mem);
    }
    s->heap_mem = mem;
    s->heap = mem + 3;
}

sim *sim_create(void)
{
    sim *s = xcalloc(1, sizeof *s);
    s->cap = 64;
    heap_alloc(s, s->cap);
    s->slot_cap = 64;
    s->slots = xmalloc(s->slot_cap * sizeof *s->slots);
    s->free_head = NO_FREE;
    s->seq = 1;
    return s;
}

void sim_destroy(sim *s)
{
    if (!s)
        return;
    free(s->heap_mem);
    free(s->slots);
    free(s);
}

static void sift_up(hent *h, uint32_t i, hent e)
{
    while (i > 0) {
        uint32_t p = (i - 1) >> 2;
        if (!hless(e, h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static void sift_down(hent *h, uint32_t n, uint32_t i, hent e)
{
    for (;;) {
        uint32_t c = 4 * i + 1;
        if (c >= n)
            break;
        uint32_t m = min_child(h, n, c);
        if (!hless(h[m], e))
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = e;
}

/* Removes the root (Floyd's bottom-up refill). */
static void pop_root(sim *s)
{
    hent *h = s->heap;
    uint32_t n = --s->n, i = 0;
    if (n == 0)
        return;
    hent last = h[n];
    for (;;) {
        uint32_t c = 4 * i + 1;
        if (c >= n)
            break;
        uint32_t m = min_child(h, n, c);
        h[i] = h[m];
        i = m;
    }
    sift_up(h, i, last);
}

static inline bool is_live(const sim *s, hent e)
{
    return s->slots[e.key & SLOT_MASK].seq == e.key >> SLOT_BITS;
}

/* Drops every tombstone and rebuilds the heap (Floyd's heapify). */
static void compact(sim *s)
{
    hent *h = s->heap;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (is_live(s, h[i]))
            h[k++] = h[i];
    s->n = k;
    for (uint32_t i = k > 1 ? (k - 2) / 4 + 1 : 0; i-- > 0;)
        sift_down(h, k, i, h[i]);
}

static uint32_t slot_get(sim *s)
{
    if (s->free_head != NO_FREE) {
        uint32_t i = s->free_head;
        s->free_head = s->slots[i].next_free;
        return i;
    }
    if (s->nslots == s->slot_cap) {
        if (s->slot_cap > SLOT_MASK / 2) {
            fprintf(stderr, "aisim: more than %llu pending events\n",
                    (unsigned long long)SLOT_MASK);
            abort();
        }
        s->slot_cap *= 2;
        s->slots = xrealloc(s->slots, s->slot_cap * sizeof *s->slots);
    }
    s->slots[s->nslots].gen = 1;
    return s->nslots++;
}

static inline void slot_put(sim *s, uint32_t i)
{
    slot *sl = &s->slots[i];
    sl->gen = sl->gen + 1 ? sl->gen + 1 : 1;
    sl->seq = 0;                /* no entry matches: any left are tombstones */
    sl->next_free = s->free_head;
    s->free_head = i;
}

/* A new sequence number (from 1: 0 marks a slot with no pending entry). */
static inline uint64_t next_seq(sim *s)
{
    if (s->seq >= SEQ_MAX) {
        fprintf(stderr, "aisim: event sequence numbers exhausted\n");
        abort();
    }
    return s->seq++;
}

static void push(sim *s, uint32_t i, int64_t at_ps)
{
    uint64_t q = next_seq(s);
    s->slots[i].seq = q;
    if (s->n == s->cap) {
        if (s->live < s->n / 2) {
            compact(s);
        } else {
            s->cap *= 2;
            heap_alloc(s, s->cap);
        }
    }
    sift_up(s->heap, s->n++, (hent){q << SLOT_BITS | i, at_ps});
}

sim_event_id sim_schedule(sim *s, int64_t at_ps, sim_fn *fn, void *obj, uint64_t arg)
{
    assert(at_ps >= s->now);
    assert(fn);
    uint32_t i = slot_get(s);
    slot *sl = &s->slots[i];
    sl->fn = fn;
    sl->obj = obj;
    sl->arg = arg;
    push(s, i, at_ps);
    s->live++;
    return (uint64_t)sl->gen << 32 | i;
}

sim_event_id sim_schedule_in(sim *s, int64_t delay_ps, sim_fn *fn, void *obj, uint64_t arg)
{
    assert(delay_ps >= 0);
    return sim_schedule(s, s->now + delay_ps, fn, obj, arg);
}

/* Slot index of a pending id, or -1. */
static inline int64_t pending_slot(const sim *s, sim_event_id id)
{
    uint32_t i = (uint32_t)id;
    if (id == 0 || i >= s->nslots || s->slots[i].gen != (uint32_t)(id >> 32))
        return -1;
    return i;
}

bool sim_is_pending(const sim *s, sim_event_id id)
{
    return pending_slot(s, id) >= 0;
}

bool sim_cancel(sim *s, sim_event_id id)
{
    int64_t i = pending_slot(s, id);
    if (i < 0)
        return false;
    slot_put(s, (uint32_t)i);   /* its heap entry is now a tombstone */
    s->live--;
    return true;
}

bool sim_reschedule(sim *s, sim_event_id id, int64_t at_ps)
{
    assert(at_ps >= s->now);
    int64_t i = pending_slot(s, id);
    if (i < 0)
        return false;
    push(s, (uint32_t)i, at_ps);    /* the old entry no longer matches: tombstone */
    return true;
}

int sim_run(sim *s, int64_t until_ps)
{
    s->stopped = 0;
    while (s->n > 0 && !s->stopped) {
        hent top = s->heap[0];
        if (top.at > until_ps)
            break;
        uint32_t i = (uint32_t)(top.key & SLOT_MASK);
        pop_root(s);
        slot *sl = &s->slots[i];
        if (sl->seq != top.key >> SLOT_BITS)
            continue;               /* tombstone */
        sim_fn *fn = sl->fn;
        void *obj = sl->obj;
        uint64_t arg = sl->arg;
        slot_put(s, i);
        s->live--;
        s->now = top.at;
        s->events++;
        fn(s, obj, arg);
        if (s->mon_fn && --s->mon_left == 0) {
            s->mon_left = s->mon_every;
            s->mon_fn(s->mon_ctx, s);
        }
    }
    if (s->stopped)
        return 1;
    if (until_ps != SIM_TIME_MAX && until_ps > s->now)
        s->now = until_ps;
    return 0;
}

void sim_stop(sim *s) { s->stopped = 1; }
int64_t sim_now(const sim *s) { return s->now; }
uint64_t sim_events_run(const sim *s) { return s->events; }
size_t sim_pending(const sim *s) { return s->live; }

void sim_set_monitor(sim *s, void (*fn)(void *ctx, sim *s), void *ctx, uint64_t every)
{
    s->mon_fn = fn;
    s->mon_ctx = ctx;
    s->mon_every = every ? every : 1;
    s->mon_left = s->mon_every;
}

void sim_timer_init(sim_timer *t, sim_fn *fn, void *obj, uint64_t arg)
{
    t->id = 0;
    t->fn = fn;
    t->obj = obj;
    t->arg = arg;
}

void sim_timer_arm(sim *s, sim_timer *t, int64_t at_ps)
{
    if (!sim_reschedule(s, t->id, at_ps))
        t->id = sim_schedule(s, at_ps, t->fn, t->obj, t->arg);
}

void sim_timer_disarm(sim *s, sim_timer *t)
{
    sim_cancel(s, t->id);
    t->id = 0;
}

bool sim_timer_armed(const sim *s, const sim_timer *t)
{
    return sim_is_pending(s, t->id);
}
