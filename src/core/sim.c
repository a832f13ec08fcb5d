/*
 * sim.c - the event engine: a 4-ary min-heap with removal by handle.
 *
 * Layout.  The heap is an array of 16-byte entries {key, at_ps}; key packs
 * the event's sequence number (high 40 bits) and its slot index (low 24
 * bits), so comparing (at_ps, key) orders by time, then scheduling order,
 * and one entry fits four to a cache line.  The slot array holds the
 * handler, its object and argument, the entry's heap position and a
 * generation counter.  An event id is (generation << 32 | slot): when an
 * event runs or is cancelled its slot's generation moves on, so a stale id
 * is recognised and ignored.
 *
 * Why a 4-ary heap: half the depth of a binary heap with the four children
 * in one cache line; it beat a binary heap in bench/bench_engine.c (see
 * docs/benchmarks.md).  Removal by position keeps the heap free of
 * tombstones, which matters when most retransmission timers are cancelled.
 *
 * Limits: 2^24 - 1 pending events, 2^40 scheduled events per run (both
 * checked).
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
 * unsigned 128-bit number (at << 64 | key), so one comparison orders by
 * time, then sequence.  Times are never negative (sim_schedule asserts). */
typedef struct hent {
    uint64_t key;       /* seq << SLOT_BITS | slot */
    int64_t at;         /* firing time, ps */
} hent;

typedef unsigned __int128 u128;

static inline u128 hkey(hent e)
{
    return (u128)(uint64_t)e.at << 64 | e.key;
}

typedef struct slot {
    sim_fn *fn;         /* handler */
    void *obj;          /* handler object */
    uint64_t arg;       /* handler argument */
    uint32_t pos;       /* heap index while pending; next free slot when free
                           (kept here, not in an array of its own: the heap
                           moves that write it and the run that reads the
                           handler then share a cache line; measured faster) */
    uint32_t gen;       /* generation, >= 1 */
} slot;

struct sim {
    hent *heap;         /* pending events, heap-ordered: heap_mem + 3 */
    hent *heap_mem;     /* 64-byte aligned allocation */
    uint32_t n;         /* pending */
    uint32_t cap;       /* heap capacity */
    slot *slots;        /* callback data, indexed by slot */
    uint32_t nslots;    /* slots in use or on the free list */
    uint32_t slot_cap;
    uint32_t free_head; /* free slot list, NO_FREE if empty */
    uint64_t seq;       /* next sequence number */
    int64_t now;        /* current time, ps */
    uint64_t events;    /* handlers run */
    int stopped;        /* sim_stop() called during this sim_run() */
    void (*mon_fn)(void *ctx, sim *s);
    void *mon_ctx;
    uint64_t mon_every, mon_left;
};

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

/* Index of the least child of i, given that at least one exists. */
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

/* (Re)allocates the heap for `cap` entries, keeping its contents.  The
 * array starts 3 entries into a 64-byte aligned block, so that the four
 * children of node i (entries 4i+1 .. 4i+4) fill exactly one cache line:
 * min4() then touches one line per level instead of two.  Measured in
 * docs/benchmarks.md. */
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

static inline void place(sim *s, uint32_t i, hent e)
{
    s->heap[i] = e;
    s->slots[e.key & SLOT_MASK].pos = i;
}

static void sift_up(sim *s, uint32_t i, hent e)
{
    while (i > 0) {
        uint32_t p = (i - 1) >> 2;
        if (!hless(e, s->heap[p]))
            break;
        place(s, i, s->heap[p]);
        i = p;
    }
    place(s, i, e);
}

static void sift_down(sim *s, uint32_t i, hent e)
{
    hent *h = s->heap;
    uint32_t n = s->n;
    for (;;) {
        uint32_t c = 4 * i + 1;
        if (c >= n)
            break;
        uint32_t m = min_child(h, n, c);
        if (!hless(h[m], e))
            break;
        place(s, i, h[m]);
        i = m;
    }
    place(s, i, e);
}

/* Refills the hole left by removing the root (Floyd's bottom-up variant):
 * the hole sinks to a leaf along the least children, with no comparison
 * against the element being placed, which then rises from there; the last
 * element of a heap belongs near the bottom, so it rarely rises far. */
static void refill_root(sim *s, hent e)
{
    hent *h = s->heap;
    uint32_t n = s->n, i = 0;
    for (;;) {
        uint32_t c = 4 * i + 1;
        if (c >= n)
            break;
        uint32_t m = min_child(h, n, c);
        place(s, i, h[m]);
        i = m;
    }
    sift_up(s, i, e);
}

static uint32_t slot_get(sim *s)
{
    if (s->free_head != NO_FREE) {
        uint32_t i = s->free_head;
        s->free_head = s->slots[i].pos;
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
    sl->pos = s->free_head;
    s->free_head = i;
}

static inline uint64_t next_key(sim *s, uint32_t sl)
{
    if (s->seq >= SEQ_MAX) {
        fprintf(stderr, "aisim: event sequence numbers exhausted\n");
        abort();
    }
    return (s->seq++ << SLOT_BITS) | sl;
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
    if (s->n == s->cap) {
        s->cap *= 2;
        heap_alloc(s, s->cap);
    }
    s->n++;
    sift_up(s, s->n - 1, (hent){next_key(s, i), at_ps});
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

/* Removes heap entry i and returns it. */
static hent heap_remove(sim *s, uint32_t i)
{
    hent gone = s->heap[i];
    s->n--;
    if (i != s->n) {
        hent last = s->heap[s->n];
        if (i > 0 && hless(last, s->heap[(i - 1) >> 2]))
            sift_up(s, i, last);
        else
            sift_down(s, i, last);
    }
    return gone;
}

bool sim_cancel(sim *s, sim_event_id id)
{
    int64_t i = pending_slot(s, id);
    if (i < 0)
        return false;
    heap_remove(s, s->slots[i].pos);
    slot_put(s, (uint32_t)i);
    return true;
}

bool sim_reschedule(sim *s, sim_event_id id, int64_t at_ps)
{
    assert(at_ps >= s->now);
    int64_t i = pending_slot(s, id);
    if (i < 0)
        return false;
    uint32_t pos = s->slots[i].pos;
    hent old = s->heap[pos];
    hent e = {next_key(s, (uint32_t)i), at_ps};
    if (hless(e, old))
        sift_up(s, pos, e);
    else
        sift_down(s, pos, e);
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
        slot sl = s->slots[i];
        s->n--;
        if (s->n > 0)
            refill_root(s, s->heap[s->n]);
        slot_put(s, i);
        s->now = top.at;
        s->events++;
        sl.fn(s, sl.obj, sl.arg);
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
size_t sim_pending(const sim *s) { return s->n; }

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
