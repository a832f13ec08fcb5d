/*
 * sim.c - the event engine: a ring of coarse buckets, each an unsorted
 * array of entries, radix-sorted into a run array when the clock reaches
 * it; two small 4-ary heaps beside it; lazy cancellation.
 *
 * Keys.  Every pending entry is 16 bytes {key, at_ps}; key packs the
 * event's sequence number (high 40 bits) and its slot index (low 24 bits).
 * Read as one unsigned 128-bit number an entry is (at << 64 | seq << 24 |
 * slot), so one comparison orders by time, then by scheduling order.  All
 * the structures below order by exactly this key, so the run order is the
 * same as with a single heap (and as with any other correct priority
 * queue): outputs do not depend on the queue's shape or tuning.
 *
 * Structure.  Time is cut into buckets of 2^k ps; bucket number idx =
 * at >> k.  `cur` is the bucket being run.  An entry goes
 *   - into the bottom heap `bot` if idx <= cur (due in the bucket being
 *     run, or, after sim_run() stopped early, an earlier one);
 *   - into the ring if cur < idx < cur + nb: appended to its bucket's
 *     array (of nb, a power of two), in no order: the array's tail is in
 *     cache (there are a few hundred to a few thousand buckets), so an
 *     insert touches no cold memory;
 *   - else into the overflow heap `ovf` (the far future: 60 s RTOs,
 *     SIM_TIME_MAX sentinels, anything beyond the ring's horizon).
 * When the run array and `bot` are both empty the engine moves to the next
 * occupied bucket (a scan of the occupancy bitmap), first moving the
 * overflow entries now within the horizon, swaps that bucket's array with
 * the run array (no copy) and sorts it: a stable LSD radix sort on the
 * time's low k bits (11 bits a pass), then an insertion pass that puts
 * equal times in key order (the array is in scheduling order but for
 * entries moved in from the overflow heap, so it rarely moves anything).
 * The next event is the lesser of the run array's next entry and bot's
 * top.  Running the sorted array front to back, the engine prefetches the
 * slot of the entry PREFETCH places ahead, so the one cold access per
 * event (its handler data, scattered over the slot table) overlaps the
 * events before it instead of stalling.  The wheel this replaced kept a
 * linked list per bucket of 1-2 events and checked every entry's slot as
 * it poured a bucket: three dependent cache misses per event at 100 k
 * pending (docs/benchmarks.md).
 *
 * Tuning: every max(8192, pending) events the engine measures the mean
 * time between the events it ran, g, and wants buckets of about BATCH g
 * (a few hundred events each, sorted in cache) and nb of about 4 pending
 * / BATCH (a horizon of ~4 x the mean time an event waits: for exponential
 * waits ~98 % of inserts land in the ring).  When k is off by 2 or more,
 * or nb by 4x or more, the ring is rebuilt (O(n), amortised over at least
 * n events).  A wrong setting costs speed, never order.
 *
 * Slots hold the handler, its object and argument, the sequence number of
 * the slot's pending entry and a generation.  An event id is (generation
 * << 32 | slot).  Cancelling frees the slot at once (generation + 1) and
 * leaves the entry behind as a tombstone wherever it is: its sequence
 * number no longer matches its slot's, so it is dropped when it comes up.
 * Re-arming a timer is a new entry plus a tombstone.  A structure that
 * fills up with tombstones is filtered before it grows (heaps: filter and
 * re-heapify; the ring: filtered when it holds more than twice the pending
 * count plus 4096), so memory stays within about twice the pending count.
 * A stale id (the event ran or was cancelled) is recognised by its
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

#define NB_MIN 64u                  /* ring size bounds (buckets) */
#define NB_MAX (1u << 18)
#define CAL_MIN 8192u               /* events between two calibrations, at least */
#define BATCH 2048u                /* events per bucket wanted, at most */
#define PREFETCH 16                  /* slots prefetched ahead of the run array */
#define RADIX_BITS 11u

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

/* A bucket: an unsorted array of entries. */
typedef struct bucket {
    hent *v;
    uint32_t n, cap;
} bucket;

struct sim {
    int64_t now;        /* current time, ps; first: sim_now() reads it inline (sim.h) */
    /* the sorted run array of bucket `cur` */
    hent *run;
    uint32_t rn, ri, rcap;  /* entries, next to run, capacity */
    heap bot;           /* entries with bucket <= cur that came after the sort */
    heap ovf;           /* entries beyond the ring's horizon */
    /* the ring */
    bucket *bk;
    uint64_t *occ;      /* occupancy bitmap: bit b set iff bk[b].n > 0 */
    uint32_t nb;        /* buckets, a power of two */
    unsigned k;         /* bucket width 2^k ps */
    uint64_t cur;       /* bucket being run */
    uint64_t wcount;    /* entries in the ring, tombstones included */
    hent *tmp;          /* radix sort's scratch */
    uint32_t tmp_cap;
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
    int cut;            /* sim_poll() returned true: the run ends */
    const volatile sig_atomic_t *intr;   /* sim_set_interrupt(), or NULL */
    uint64_t work, work_budget; /* sim_poll() units spent; the budget (0: none) */
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
static void vfail(sim *s, const char *fmt, va_list ap)
{
    if (!s->failure[0])
        vsnprintf(s->failure, sizeof s->failure, fmt, ap);
    s->stopped = 1;
}

static void fail(sim *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(s, fmt, ap);
    va_end(ap);
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

static void ring_alloc(sim *s, unsigned k, uint32_t nb)
{
    s->k = k;
    s->nb = nb;
    s->bk = xcalloc(nb, sizeof *s->bk);
    s->occ = xcalloc(nb / 64, sizeof *s->occ);
}

static void ring_free(sim *s)
{
    for (uint32_t b = 0; b < s->nb; b++)
        free(s->bk[b].v);
    free(s->bk);
    free(s->occ);
}

static void __attribute__((noinline)) bucket_grow(bucket *q)
{
    if (q->cap > (SLOT_MASK + 1) * 4)
        over_limit("event ring overflow");
    q->cap = q->cap ? q->cap * 2 : 16;
    q->v = realloc(q->v, (size_t)q->cap * sizeof *q->v);
    if (!q->v)
        oom("event bucket", q->cap);
}

static void ring_compact(sim *s);

static inline void ring_add(sim *s, uint64_t idx, hent e)
{
    uint32_t b = (uint32_t)idx & (s->nb - 1);
    bucket *q = &s->bk[b];
    if (q->n == q->cap)
        bucket_grow(q);
    q->v[q->n++] = e;
    s->occ[b >> 6] |= UINT64_C(1) << (b & 63);
    if (++s->wcount > 2 * (uint64_t)s->live + 4096)
        ring_compact(s);
}

/* Files an entry by its bucket. */
static inline void insert(sim *s, hent e)
{
    uint64_t idx = (uint64_t)e.at >> s->k;
    if (idx <= s->cur)
        heap_push(s, &s->bot, e);
    else if (idx - s->cur < s->nb)
        ring_add(s, idx, e);
    else
        heap_push(s, &s->ovf, e);
}

/* Drops the ring's tombstones: more than half its entries are (it holds
 * more than twice the pending count), so this O(ring) pass is paid for by
 * the inserts since the last one. */
static void __attribute__((noinline)) ring_compact(sim *s)
{
    s->wcount = 0;
    for (uint32_t w = 0; w < s->nb / 64; w++)
        for (uint64_t bits = s->occ[w]; bits; bits &= bits - 1) {
            uint32_t b = w << 6 | (uint32_t)__builtin_ctzll(bits);
            bucket *q = &s->bk[b];
            uint32_t m = 0;
            for (uint32_t i = 0; i < q->n; i++)
                if (is_live(s, q->v[i]))
                    q->v[m++] = q->v[i];
            q->n = m;
            s->wcount += m;
            if (m == 0)
                s->occ[w] &= ~(UINT64_C(1) << (b & 63));
        }
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

/* qsort order of entries at one time: by key (scheduling order). */
static int hent_key_cmp(const void *x, const void *y)
{
    uint64_t a = ((const hent *)x)->key, b = ((const hent *)y)->key;
    return (a > b) - (a < b);
}

static unsigned ilog2(uint64_t x) { return x ? 63u - (unsigned)__builtin_clzll(x) : 0; }

/* Sorts the run array by (at, key): a stable LSD radix sort on the time's
 * bits below 2^k (all its entries share the bits above), then an insertion
 * pass for equal times (in scheduling order already, but for entries that
 * came from the overflow heap). */
static void run_sort(sim *s)
{
    hent *a = s->run;
    uint32_t n = s->rn;
    if (n > 32) {
        if (s->tmp_cap < n) {
            free(s->tmp);
            s->tmp_cap = s->rcap;
            s->tmp = xmalloc((size_t)s->tmp_cap * sizeof *s->tmp);
        }
        hent *b = s->tmp;
        uint64_t lo = UINT64_MAX, hi = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t t = (uint64_t)a[i].at;
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
        }
        uint64_t span = hi - lo;
        /* digits of about log2(n) bits: a histogram no longer than the
         * array */
        unsigned bits = ilog2(n);
        bits = bits > RADIX_BITS ? RADIX_BITS : bits;
        uint32_t nd = 1u << bits, dm = nd - 1;
        uint32_t cnt[1u << RADIX_BITS];
        for (unsigned sh = 0; sh < 64 && (span >> sh) != 0; sh += bits) {
            memset(cnt, 0, nd * sizeof *cnt);
            for (uint32_t i = 0; i < n; i++)
                cnt[(((uint64_t)a[i].at - lo) >> sh) & dm]++;
            uint32_t sum = 0;
            for (uint32_t d = 0; d < nd; d++) {
                uint32_t c = cnt[d];
                cnt[d] = sum;
                sum += c;
            }
            for (uint32_t i = 0; i < n; i++)
                b[cnt[(((uint64_t)a[i].at - lo) >> sh) & dm]++] = a[i];
            hent *t = a;
            a = b;
            b = t;
        }
        if (a != s->run) {      /* odd passes: the sorted copy is the scratch */
            s->tmp = s->run;
            s->run = a;
            uint32_t c = s->tmp_cap;
            s->tmp_cap = s->rcap;
            s->rcap = c;
        }
    }
    /* Equal times: in scheduling order already unless entries came from
     * the overflow heap (in heap order); a run out of order is sorted by
     * key, so that many events at one instant cost O(m log m), not the
     * O(m^2) of an insertion pass (500 k at one time took minutes). */
    if (n <= 32) {      /* short runs: an insertion sort is the whole sort */
        for (uint32_t i = 1; i < n; i++) {
            hent e = a[i];
            uint32_t j = i;
            while (j > 0 && hless(e, a[j - 1])) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = e;
        }
        return;
    }
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        bool sorted = true;
        for (; j < n && a[j].at == a[i].at; j++)
            sorted = sorted && a[j - 1].key < a[j].key;
        if (!sorted)
            qsort(a + i, j - i, sizeof *a, hent_key_cmp);
        i = j;
    }
}

/* Makes bucket b (cur's) the run array, sorted. */
static void take(sim *s, uint32_t b)
{
    bucket *q = &s->bk[b];
    hent *v = q->v;
    uint32_t n = q->n, cap = q->cap;
    q->v = s->run;          /* the old run array, drained, becomes the bucket's */
    q->cap = s->rcap;
    q->n = 0;
    s->occ[b >> 6] &= ~(UINT64_C(1) << (b & 63));
    s->wcount -= n;
    s->run = v;
    s->rcap = cap;
    s->rn = n;
    s->ri = 0;
    run_sort(s);
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

/* Re-files every pending entry of the ring, the run array and the bottom
 * heap for bucket width 2^k and nb buckets, dropping tombstones. */
static void ring_rebuild(sim *s, unsigned k, uint32_t nb)
{
    size_t m = 0, cap = s->wcount + (s->rn - s->ri) + s->bot.n;
    hent *all = malloc((cap ? cap : 1) * sizeof *all);
    if (!all)
        oom("event ring rebuild", cap);
    for (uint32_t w = 0; w < s->nb / 64; w++)
        for (uint64_t bits = s->occ[w]; bits; bits &= bits - 1) {
            bucket *q = &s->bk[w << 6 | (uint32_t)__builtin_ctzll(bits)];
            for (uint32_t i = 0; i < q->n; i++)
                if (is_live(s, q->v[i]))
                    all[m++] = q->v[i];
        }
    for (uint32_t i = s->ri; i < s->rn; i++)
        if (is_live(s, s->run[i]))
            all[m++] = s->run[i];
    for (uint32_t i = 0; i < s->bot.n; i++)
        if (is_live(s, s->bot.h[i]))
            all[m++] = s->bot.h[i];
    ring_free(s);
    ring_alloc(s, k, nb);
    s->wcount = 0;
    s->rn = s->ri = 0;
    s->bot.n = 0;
    /* The new cur: the bucket of the earliest entry, or of now; nothing
     * pending is earlier than now. */
    uint64_t first = (uint64_t)s->now;
    for (size_t i = 0; i < m; i++)
        if ((uint64_t)all[i].at < first)
            first = (uint64_t)all[i].at;
    s->cur = first >> k;
    for (size_t i = 0; i < m; i++)
        insert(s, all[i]);
    free(all);
    migrate(s);
}

/* Re-tunes the bucket width and the ring size to the recent event rate. */
static void calibrate(sim *s)
{
    /* BATCH events a bucket, fewer with few pending (a bucket must stay
     * short of the mean wait, or most inserts go to the bottom heap) */
    uint64_t batch = s->live / 16 < 32 ? 32 : s->live / 16 > BATCH ? BATCH : s->live / 16;
    u128 dt = (u128)(uint64_t)(s->now - s->cal_t0), w = dt * batch / s->cal_events;
    if (dt == 0) {          /* all at one time: no rate to tune to */
        s->cal_events = 0;
        return;
    }
    unsigned k = ilog2(w > UINT64_MAX ? UINT64_MAX : (uint64_t)w);
    if (k > 56)
        k = 56;
    /* a horizon of 4 x the mean wait, live x g */
    u128 want = 4 * dt * s->live / s->cal_events >> k;
    uint32_t nb = NB_MIN;
    while (nb < want && nb < NB_MAX)
        nb *= 2;
    s->cal_events = 0;
    s->cal_t0 = s->now;
    if (k + 1 < s->k || k > s->k + 1 || nb >= 4 * s->nb || 4 * nb <= s->nb)
        ring_rebuild(s, k, nb);
}

/* Loads the next occupied bucket (or the overflow heap's first) into the
 * run array, unless it is later than until_ps's: `cur` never runs ahead
 * of the run limit, or a later sim_schedule() for a time in between would
 * have to go to the bottom heap (and so would every event after it, if
 * the bucket was a far-future sentinel's).  Returns false if nothing is
 * pending up to the limit.  The run array and bot are empty. */
static bool advance(sim *s, int64_t until_ps)
{
    if (s->cal_events >= CAL_MIN && s->cal_events >= s->live)
        calibrate(s);
    if (s->bot.n > 0 || s->ri < s->rn)
        return true;        /* the rebuild filed entries due now */
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
    if (s->bk[b].n > 0)
        take(s, b);
    return true;
}

/* ---- slots ---- */

sim *sim_create(void)
{
    sim *s = xcalloc(1, sizeof *s);
    heap_alloc(&s->bot, 64);
    heap_alloc(&s->ovf, 64);
    ring_alloc(s, 20, NB_MIN);      /* 1 us buckets until the first calibration */
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
    ring_free(s);
    free(s->run);
    free(s->tmp);
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
    if (s->cut)
        return 1;
    s->stopped = 0;
    while (!s->stopped) {
        /* A big bottom heap: the buckets are too wide for the event rate
         * (a burst scheduled at once, before the first calibration). */
        if (s->bot.n > 4096 && s->cal_events >= CAL_MIN)
            calibrate(s);
        hent top;
        bool from_bot;
        if (s->ri < s->rn) {
            top = s->run[s->ri];
            from_bot = s->bot.n > 0 && hless(s->bot.h[0], top);
            if (from_bot)
                top = s->bot.h[0];
        } else if (s->bot.n > 0) {
            top = s->bot.h[0];
            from_bot = true;
        } else {
            if (!advance(s, until_ps))
                break;
            continue;
        }
        if (top.at > until_ps)
            break;
        if (from_bot) {
            heap_pop(&s->bot);
        } else {
            s->ri++;
            if (s->ri + PREFETCH < s->rn) {
                const char *p = (const char *)&s->slots[s->run[s->ri + PREFETCH].key & SLOT_MASK];
                __builtin_prefetch(p);
                __builtin_prefetch(p + sizeof(slot) - 1);
            }
        }
        uint32_t i = (uint32_t)(top.key & SLOT_MASK);
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
        if (s->work_budget && sim_poll(s, 1))
            break;
    }
    if (s->failure[0])
        return -1;
    if (s->stopped)
        return 1;
    if (until_ps != SIM_TIME_MAX && until_ps > s->now)
        s->now = until_ps;
    return 0;
}

void sim_stop(sim *s) { s->stopped = 1; }

bool sim_poll(sim *s, uint64_t work)
{
    if (!s)
        return false;
    if (s->cut)
        return true;
    s->work += work;
    if ((s->intr && *s->intr) || (s->work_budget && s->work > s->work_budget)) {
        s->cut = 1;
        s->stopped = 1;
        return true;
    }
    return false;
}

void sim_set_interrupt(sim *s, const volatile sig_atomic_t *flag) { s->intr = flag; }
void sim_set_work_budget(sim *s, uint64_t units) { s->work_budget = units; }
bool sim_was_cut(const sim *s) { return s->cut; }
const char *sim_failure(const sim *s) { return s->failure[0] ? s->failure : NULL; }

void sim_fail(sim *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(s, fmt, ap);
    va_end(ap);
}
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
