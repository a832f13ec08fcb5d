/*
 * sim.c - the event engine: a timing wheel (a calendar queue with
 * power-of-two bucket widths) in front of two small 4-ary heaps, with lazy
 * cancellation.
 *
 * Keys.  Every pending entry is 16 bytes {key, at_ps}; key packs the
 * event's sequence number (high 40 bits) and its slot index (low 24 bits).
 * Read as one unsigned 128-bit number an entry is (at << 64 | seq << 24 |
 * slot), so one comparison orders by time, then by scheduling order.  All
 * three structures below order by exactly this key, so the run order is the
 * same as with a single heap (and as with any other correct priority
 * queue): outputs do not depend on the queue's shape or tuning.
 *
 * Structure.  Time is cut into buckets of 2^k ps; bucket number idx =
 * at >> k.  `cur` is the bucket being run.  An entry goes
 *   - into the bottom heap `bot` if idx <= cur (it is due now: this bucket
 *     or, after sim_run() stopped early, an earlier one);
 *   - into the wheel if cur < idx < cur + nb: an unsorted singly linked
 *     list per bucket, in a ring of nb buckets, so inserting is O(1)
 *     (append a 24-byte node, set a bit in the occupancy bitmap);
 *   - else into the overflow heap `ovf` (the far future: 60 s RTOs,
 *     SIM_TIME_MAX sentinels, anything beyond the ring's horizon).
 * The least pending entry is always the top of `bot`.  When `bot` runs dry
 * the engine moves to the next occupied bucket (a scan of the bitmap, 64
 * buckets a word), first moving every overflow entry now within the
 * horizon, and pours that bucket into `bot`.  With a few events per bucket
 * `bot` stays tiny, so schedule and run cost O(1) expected and touch a
 * couple of cache lines, where a heap of n entries costs log4(n) levels,
 * the lower ones cache misses once n passes ~50 k (docs/benchmarks.md).
 *
 * Tuning (Brown's calendar queue, CACM 1988, resizes the same way): every
 * max(8192, pending) events the engine measures the mean time between the
 * events it ran, g, and wants buckets of about 2g (1-2 events per bucket
 * it visits) and nb of about 2 x pending (a horizon of ~4 x the mean time
 * an event waits, for exponential waits ~98 % of inserts in the ring).
 * When k is off by 2 or more, or nb by 4x or more, the ring is rebuilt
 * (O(n), amortised over at least n events).  A wrong setting costs speed,
 * never order: a burst of equal times all lands in one bucket and the
 * bottom heap sorts it; a tiny width sends most events to the overflow
 * heap, which is the old engine.
 *
 * Slots hold the handler, its object and argument, the sequence number of
 * the slot's pending entry and a generation.  An event id is (generation
 * << 32 | slot).  Cancelling frees the slot at once (generation + 1) and
 * leaves the entry behind as a tombstone wherever it is: its sequence
 * number no longer matches its slot's, so it is dropped when met (at the
 * top of a heap, or when its bucket is poured).  Re-arming a timer is a
 * new entry plus a tombstone.  A structure that fills up with tombstones
 * is filtered before it grows (heaps: filter and re-heapify; ring: rebuild
 * when at least half its nodes are tombstones), so memory stays within
 * about twice the pending count.  Nothing recurses: a rebuild that needs
 * more nodes grows the pool and never starts another rebuild, so a burst
 * of a million events scheduled at once costs O(n log n) at worst.  A
 * stale id (the event ran or was cancelled) is recognised by its
 * generation and ignored.
 *
 * Limits: 2^24 - 1 slots (pending events), 2^40 events scheduled per run
 * (both checked).
 */
#include "aisim/sim.h"

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

#define SLOT_BITS 24
#define SLOT_MASK ((UINT64_C(1) << SLOT_BITS) - 1)
#define SEQ_MAX (UINT64_C(1) << (64 - SLOT_BITS))
#define NONE UINT32_MAX

#define NB_MIN 256u                 /* ring size bounds (buckets) */
#define NB_MAX (1u << 22)
#define CAL_MIN 8192u               /* events between two calibrations, at least */

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

/* A 4-ary min-heap of entries. */
typedef struct heap {
    hent *h;            /* entries, heap-ordered: mem + 3 */
    hent *mem;          /* 64-byte aligned allocation */
    uint32_t n;         /* entries, tombstones included */
    uint32_t cap;
} heap;

/* A ring node: one entry in a bucket's list. */
typedef struct wnode {
    hent e;
    uint32_t next;      /* next node in the bucket, or in the free list; NONE ends */
} wnode;

struct sim {
    int64_t now;        /* current time, ps; first: sim_now() reads it inline (sim.h) */
    heap bot;           /* entries with bucket <= cur */
    heap ovf;           /* entries beyond the ring's horizon */
    /* the ring */
    uint32_t *head;     /* first node of each bucket, NONE if empty */
    uint64_t *occ;      /* occupancy bitmap: bit b set iff head[b] != NONE */
    uint32_t nb;        /* buckets, a power of two */
    unsigned k;         /* bucket width 2^k ps */
    uint64_t cur;       /* bucket being run */
    wnode *nodes;
    uint32_t nnodes;    /* nodes ever handed out (the rest are unused) */
    uint32_t node_cap;
    uint32_t node_free; /* free node list */
    uint32_t wcount;    /* nodes in the ring, tombstones included */
    int rebuilding;     /* inside ring_rebuild(): it must not start another */
    /* calibration */
    uint64_t cal_events;    /* events run since the last calibration */
    int64_t cal_t0;         /* time at the last calibration */
    /* slots and clock */
    slot *slots;        /* callback data, indexed by slot */
    uint32_t nslots;    /* slots in use or on the free list */
    uint32_t slot_cap;
    uint32_t free_head; /* free slot list, NONE if empty */
    uint32_t live;      /* pending events (entries that are not tombstones) */
    uint64_t seq;       /* next sequence number (starts at 1) */
    uint64_t events;    /* handlers run */
    int stopped;        /* sim_stop() called during this sim_run() */
    uint64_t same_time; /* events run in a row at the current time */
    uint64_t stall_limit;   /* more of them is a failure (sim_set_stall_limit) */
    char failure[256];  /* why the simulation failed; "" while it has not */
    void (*mon_fn)(void *ctx, sim *s);
    void *mon_ctx;
    uint64_t mon_every, mon_left;
};

/* Fails the simulation: records the first reason and stops sim_run(). */
static void fail(sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), cold, noinline));
static void fail(sim *s, const char *fmt, ...)
{
    if (!s->failure[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->failure, sizeof s->failure, fmt, ap);
        va_end(ap);
    }
    s->stopped = 1;
}

static void oom(const char *what, size_t n)
{
    fprintf(stderr, "aisim: out of memory (%s of %zu entries)\n", what, n);
    aisim_oom(n);
}

/* A limit of the engine's own tables: the run fails (exit 1, as out of
 * memory does), it is not a bug of the caller's. */
static void __attribute__((noreturn, cold, noinline)) over_limit(const char *what)
{
    fprintf(stderr, "aisim: the run failed: %s\n", what);
    _exit(1);
}

static inline bool is_live(const sim *s, hent e)
{
    return s->slots[e.key & SLOT_MASK].seq == e.key >> SLOT_BITS;
}

/* ---- 4-ary heap ----
 *
 * The array starts 3 entries into a 64-byte aligned block, so the four
 * children of a node fill exactly one cache line, and the least of them is
 * found without branches.  After a pop the hole sinks to a leaf along the
 * least children and the last entry rises from there (Floyd's bottom-up
 * variant: the last entry belongs near the bottom). */

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

/* (Re)allocates the heap for `cap` entries, keeping its contents. */
static void heap_alloc(heap *q, uint32_t cap)
{
    size_t bytes = ((size_t)cap + 3) * sizeof(hent);
    bytes = (bytes + 63) & ~(size_t)63;
    hent *mem = aligned_alloc(64, bytes);
    if (!mem)
        oom("event heap", cap);
    if (q->mem) {
        memcpy(mem + 3, q->h, (size_t)q->n * sizeof(hent));
        free(q->mem);
    }
    q->mem = mem;
    q->h = mem + 3;
    q->cap = cap;
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
static void heap_pop(heap *q)
{
    hent *h = q->h;
    uint32_t n = --q->n, i = 0;
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

/* Drops every tombstone and rebuilds the heap (Floyd's heapify). */
static void heap_compact(const sim *s, heap *q)
{
    hent *h = q->h;
    uint32_t k = 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (is_live(s, h[i]))
            h[k++] = h[i];
    q->n = k;
    for (uint32_t i = k > 1 ? (k - 2) / 4 + 1 : 0; i-- > 0;)
        sift_down(h, k, i, h[i]);
}

/* A full heap is first filtered; it doubles if that frees less than half. */
static inline void heap_push(const sim *s, heap *q, hent e)
{
    if (q->n == q->cap) {
        heap_compact(s, q);
        if (q->n > q->cap / 2)
            heap_alloc(q, q->cap * 2);
    }
    sift_up(q->h, q->n++, e);
}

/* ---- the ring ---- */

static void insert(sim *s, hent e);
static void ring_rebuild(sim *s, unsigned k, uint32_t nb);

static void ring_alloc(sim *s, unsigned k, uint32_t nb)
{
    s->k = k;
    s->nb = nb;
    s->head = xmalloc(nb * sizeof *s->head);
    memset(s->head, 0xff, nb * sizeof *s->head);
    s->occ = xcalloc(nb / 64, sizeof *s->occ);
}

/* Doubles the node pool. */
static void nodes_grow(sim *s)
{
    if (s->node_cap > (SLOT_MASK + 1) * 4)
        over_limit("event ring overflow");
    s->node_cap = s->node_cap ? s->node_cap * 2 : 256;
    s->nodes = realloc(s->nodes, (size_t)s->node_cap * sizeof *s->nodes);
    if (!s->nodes)
        oom("event ring", s->node_cap);
}

/* A free node.  When the pool is full and at least half of the ring's
 * nodes are certainly tombstones (there are twice as many nodes as pending
 * events), the ring is rebuilt without them: that frees half the pool or
 * more, so its O(n) is paid for by the n inserts since the last one.
 * Otherwise, and always during a rebuild, the pool grows: a rebuild never
 * starts another (it used to, from here, recursing once per level with the
 * whole ring re-filed at each, and growing only on the way back). */
static uint32_t node_get(sim *s)
{
    if (s->node_free == NONE && s->nnodes == s->node_cap) {
        if (!s->rebuilding && s->wcount > 0 && s->wcount >= 2 * (uint64_t)s->live)
            ring_rebuild(s, s->k, s->nb);
        if (s->node_free == NONE && s->nnodes == s->node_cap)
            nodes_grow(s);
    }
    if (s->node_free != NONE) {
        uint32_t i = s->node_free;
        s->node_free = s->nodes[i].next;
        return i;
    }
    return s->nnodes++;
}

static inline void ring_add(sim *s, uint64_t idx, hent e)
{
    uint32_t i = node_get(s);
    uint32_t b = (uint32_t)idx & (s->nb - 1);
    s->nodes[i].e = e;
    s->nodes[i].next = s->head[b];
    s->head[b] = i;
    s->occ[b >> 6] |= UINT64_C(1) << (b & 63);
    s->wcount++;
}

/* Files an entry by its bucket. */
static void insert(sim *s, hent e)
{
    uint64_t idx = (uint64_t)e.at >> s->k;
    if (idx <= s->cur)
        heap_push(s, &s->bot, e);
    else if (idx - s->cur < s->nb)
        ring_add(s, idx, e);
    else
        heap_push(s, &s->ovf, e);
}

/* Moves the overflow entries now within the horizon. */
static void migrate(sim *s)
{
    while (s->ovf.n > 0) {
        hent e = s->ovf.h[0];
        uint64_t idx = (uint64_t)e.at >> s->k;
        if (idx > s->cur && idx - s->cur >= s->nb)
            break;
        heap_pop(&s->ovf);
        if (is_live(s, e))
            insert(s, e);
    }
}

/* Empties bucket b into the bottom heap, dropping tombstones. */
static void pour(sim *s, uint32_t b)
{
    uint32_t i = s->head[b];
    s->head[b] = NONE;
    s->occ[b >> 6] &= ~(UINT64_C(1) << (b & 63));
    while (i != NONE) {
        wnode *w = &s->nodes[i];
        uint32_t next = w->next;
        if (is_live(s, w->e))
            heap_push(s, &s->bot, w->e);
        w->next = s->node_free;
        s->node_free = i;
        s->wcount--;
        i = next;
    }
}

/* Position of the first occupied bucket at or after b, circularly (the
 * ring is not empty). */
static uint32_t next_occupied(const sim *s, uint32_t b)
{
    uint32_t words = s->nb / 64, w = b >> 6;
    uint64_t bits = s->occ[w] & (~UINT64_C(0) << (b & 63));
    while (!bits) {
        w = w + 1 == words ? 0 : w + 1;
        bits = s->occ[w];
    }
    return w << 6 | (uint32_t)__builtin_ctzll(bits);
}

/* Re-files everything in the ring for bucket width 2^k and nb buckets,
 * dropping tombstones.  The bottom heap keeps what it holds: all of it is
 * earlier than the new `cur` bucket's end, so it stays first. */
static void ring_rebuild(sim *s, unsigned k, uint32_t nb)
{
    assert(!s->rebuilding);
    s->rebuilding = 1;
    hent *tmp = NULL;
    uint32_t m = 0;
    if (s->wcount) {
        tmp = malloc((size_t)s->wcount * sizeof *tmp);
        if (!tmp)
            oom("event ring rebuild", s->wcount);
        for (uint32_t w = 0; w < s->nb / 64; w++)
            for (uint64_t bits = s->occ[w]; bits; bits &= bits - 1) {
                uint32_t b = w << 6 | (uint32_t)__builtin_ctzll(bits);
                for (uint32_t i = s->head[b]; i != NONE; i = s->nodes[i].next)
                    if (is_live(s, s->nodes[i].e))
                        tmp[m++] = s->nodes[i].e;
            }
    }
    /* The bottom heap holds entries earlier than end = (cur + 1) << k; the
     * new cur is the bucket holding end - 1, so its end is >= end. */
    uint64_t end = (s->cur + 1) << s->k;
    if (nb != s->nb || k != s->k) {
        free(s->head);
        free(s->occ);
        ring_alloc(s, k, nb);
    } else {
        memset(s->head, 0xff, nb * sizeof *s->head);
        memset(s->occ, 0, nb / 64 * sizeof *s->occ);
    }
    s->cur = (end - 1) >> k;
    s->nnodes = 0;
    s->node_free = NONE;
    s->wcount = 0;
    /* m <= the old wcount <= node_cap: re-filing needs no new node; the
     * overflow entries migrate() moves in may grow the pool (node_get). */
    for (uint32_t i = 0; i < m; i++)
        insert(s, tmp[i]);
    free(tmp);
    migrate(s);
    s->rebuilding = 0;
}

static unsigned ilog2(uint64_t x) { return x ? 63u - (unsigned)__builtin_clzll(x) : 0; }

/* Re-tunes the bucket width and the ring size to the recent event rate. */
static void calibrate(sim *s)
{
    uint64_t g = (uint64_t)(s->now - s->cal_t0) / s->cal_events;
    unsigned k = ilog2(2 * g);
    if (k > 56)
        k = 56;
    uint64_t want = 2 * (uint64_t)s->live;
    uint32_t nb = NB_MIN;
    while (nb < want && nb < NB_MAX)
        nb *= 2;
    s->cal_events = 0;
    s->cal_t0 = s->now;
    if (k + 1 < s->k || k > s->k + 1 || nb >= 4 * s->nb || 4 * nb <= s->nb)
        ring_rebuild(s, k, nb);
}

/* Refills the empty bottom heap from the next occupied bucket (or the
 * overflow heap), unless that bucket is later than until_ps's: `cur` never
 * runs ahead of the run limit, or a later sim_schedule() for a time in
 * between would have to go to the bottom heap (and so would every event
 * after it, if the bucket was a far-future sentinel's).  Returns false if
 * nothing is pending up to the limit. */
static bool advance(sim *s, int64_t until_ps)
{
    if (s->cal_events >= CAL_MIN && s->cal_events >= s->live)
        calibrate(s);
    uint64_t j;
    if (s->wcount > 0) {
        uint32_t mask = s->nb - 1, b = (uint32_t)(s->cur + 1) & mask;
        j = s->cur + 1 + ((next_occupied(s, b) - b) & mask);
        if (s->ovf.n > 0 && (uint64_t)s->ovf.h[0].at >> s->k < j)
            j = (uint64_t)s->ovf.h[0].at >> s->k;
    } else if (s->ovf.n > 0) {
        j = (uint64_t)s->ovf.h[0].at >> s->k;
    } else {
        return false;
    }
    if (until_ps < 0 || j > (uint64_t)until_ps >> s->k)
        return false;
    /* Overflow entries of bucket j or earlier go straight to the bottom
     * heap. */
    s->cur = j;
    migrate(s);
    uint32_t b = (uint32_t)j & (s->nb - 1);
    if (s->head[b] != NONE)
        pour(s, b);
    return true;
}

/* ---- slots ---- */

sim *sim_create(void)
{
    sim *s = xcalloc(1, sizeof *s);
    heap_alloc(&s->bot, 64);
    heap_alloc(&s->ovf, 64);
    ring_alloc(s, 20, NB_MIN);      /* 1 us buckets until the first calibration */
    s->node_free = NONE;
    s->slot_cap = 64;
    s->slots = xmalloc(s->slot_cap * sizeof *s->slots);
    s->free_head = NONE;
    s->seq = 1;
    s->stall_limit = SIM_STALL_EVENTS;
    return s;
}

void sim_destroy(sim *s)
{
    if (!s)
        return;
    free(s->bot.mem);
    free(s->ovf.mem);
    free(s->head);
    free(s->occ);
    free(s->nodes);
    free(s->slots);
    free(s);
}

static uint32_t slot_get(sim *s)
{
    if (s->free_head != NONE) {
        uint32_t i = s->free_head;
        s->free_head = s->slots[i].next_free;
        return i;
    }
    if (s->nslots == s->slot_cap) {
        if (s->slot_cap > SLOT_MASK / 2)
            over_limit("more than 2^24 - 1 events pending at once (the engine's limit)");
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
    if (s->seq >= SEQ_MAX)
        over_limit("event sequence numbers exhausted");
    return s->seq++;
}

static void push(sim *s, uint32_t i, int64_t at_ps)
{
    uint64_t q = next_seq(s);
    s->slots[i].seq = q;
    insert(s, (hent){q << SLOT_BITS | i, at_ps});
}

#define END_OF_TIME "the end of simulated time (2^63-1 ps, about 106.8 days)"

static void __attribute__((cold, noinline)) fail_past(sim *s, int64_t at_ps)
{
    fail(s, "an event was scheduled at %lld ps, before the current time %lld ps (a time that "
         "overflowed past " END_OF_TIME "?)", (long long)at_ps, (long long)s->now);
}

sim_event_id sim_schedule(sim *s, int64_t at_ps, sim_fn *fn, void *obj, uint64_t arg)
{
    assert(fn);
    if (at_ps < s->now) {
        fail_past(s, at_ps);
        return 0;
    }
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
    if (delay_ps < 0 || delay_ps > SIM_TIME_MAX - s->now) {
        fail(s, "an event was scheduled %lld ps after %.6g s, %s", (long long)delay_ps,
             (double)s->now * 1e-12, delay_ps < 0 ? "a negative delay" : "past " END_OF_TIME);
        return 0;
    }
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
    int64_t i = pending_slot(s, id);
    if (at_ps < s->now) {
        fail_past(s, at_ps);
        return false;
    }
    if (i < 0)
        return false;
    push(s, (uint32_t)i, at_ps);    /* the old entry no longer matches: tombstone */
    return true;
}

int sim_run(sim *s, int64_t until_ps)
{
    if (s->failure[0])
        return -1;
    s->stopped = 0;
    while (!s->stopped) {
        while (s->bot.n == 0 && advance(s, until_ps))
            ;
        if (s->bot.n == 0)
            break;
        hent top = s->bot.h[0];
        if (top.at > until_ps)
            break;
        uint32_t i = (uint32_t)(top.key & SLOT_MASK);
        heap_pop(&s->bot);
        slot *sl = &s->slots[i];
        if (sl->seq != top.key >> SLOT_BITS)
            continue;               /* tombstone */
        sim_fn *fn = sl->fn;
        void *obj = sl->obj;
        uint64_t arg = sl->arg;
        slot_put(s, i);
        s->live--;
        if (top.at != s->now) {
            s->same_time = 1;
        } else if (++s->same_time > s->stall_limit) {
            fail(s, "simulated time has not advanced for %llu events in a row, at %.6g s: a "
                 "zero-time loop (a distribution that keeps drawing 0, such as a constant 0 or a "
                 "lognormal with a large sigma, or a model that re-schedules itself without "
                 "delay)", (unsigned long long)s->stall_limit, (double)s->now * 1e-12);
            break;
        }
        s->now = top.at;
        s->events++;
        s->cal_events++;
        fn(s, obj, arg);
        if (s->mon_fn && --s->mon_left == 0) {
            s->mon_left = s->mon_every;
            s->mon_fn(s->mon_ctx, s);
        }
    }
    if (s->failure[0])
        return -1;
    if (s->stopped)
        return 1;
    if (until_ps != SIM_TIME_MAX && until_ps > s->now)
        s->now = until_ps;
    return 0;
}

static volatile sig_atomic_t interrupt_flag;

void sim_interrupt(void) { interrupt_flag = 1; }
bool sim_interrupted(void) { return interrupt_flag != 0; }
void sim_interrupt_clear(void) { interrupt_flag = 0; }

void sim_stop(sim *s) { s->stopped = 1; }
const char *sim_failure(const sim *s) { return s->failure[0] ? s->failure : NULL; }
void sim_set_stall_limit(sim *s, uint64_t n) { s->stall_limit = n ? n : SIM_STALL_EVENTS; }
_Static_assert(offsetof(struct sim, now) == 0, "sim_now() in sim.h reads the first member");
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
