/*
 * test_sim.c - the event engine: ordering, cancellation, timers, run limits,
 * far-future entries, tombstones, and randomised comparisons against
 * reference orders (a sorted array; a linear scan for the least pending
 * event over many seeds and queue re-tunings).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/rng.h"
#include "aisim/sim.h"

typedef struct trace {
    uint64_t got[4096];
    int64_t at[4096];
    size_t n;
} trace;

static void rec(sim *s, void *obj, uint64_t arg)
{
    trace *t = obj;
    t->at[t->n] = sim_now(s);
    t->got[t->n++] = arg;
}

static void test_sim_equal_times_run_in_scheduling_order(void **state)
{
    (void)state;
    sim *s = sim_create();
    trace t = {.n = 0};
    for (uint64_t i = 0; i < 100; i++)
        sim_schedule(s, 1000 * (int64_t)(i % 3), rec, &t, i);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), 0);
    assert_int_equal(t.n, 100);
    /* All of time 0 first (0, 3, 6, ...), then 1000, then 2000; each group in
     * scheduling order. */
    size_t k = 0;
    for (uint64_t g = 0; g < 3; g++)
        for (uint64_t i = g; i < 100; i += 3, k++) {
            assert_int_equal(t.got[k], i);
            assert_int_equal(t.at[k], 1000 * (int64_t)g);
        }
    assert_int_equal(sim_events_run(s), 100);
    sim_destroy(s);
}

static void test_sim_cancel_by_handle_and_stale_ids(void **state)
{
    (void)state;
    sim *s = sim_create();
    trace t = {.n = 0};
    sim_event_id a = sim_schedule(s, 10, rec, &t, 1);
    sim_event_id b = sim_schedule(s, 20, rec, &t, 2);
    sim_event_id c = sim_schedule(s, 30, rec, &t, 3);
    assert_true(sim_is_pending(s, b));
    assert_true(sim_cancel(s, b));
    assert_false(sim_is_pending(s, b));
    assert_false(sim_cancel(s, b));         /* twice: harmless */
    assert_false(sim_cancel(s, 0));
    assert_int_equal(sim_pending(s), 2);
    /* b's slot is reused by d; b's stale id must not cancel d. */
    sim_event_id d = sim_schedule(s, 40, rec, &t, 4);
    assert_int_equal((uint32_t)d, (uint32_t)b);
    assert_false(sim_cancel(s, b));
    assert_true(sim_is_pending(s, d));
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.got[0], 1);
    assert_int_equal(t.got[1], 3);
    assert_int_equal(t.got[2], 4);
    assert_false(sim_cancel(s, a));         /* already ran */
    assert_false(sim_cancel(s, c));
    sim_destroy(s);
}

static void test_sim_run_until_stops_at_limit_and_advances_clock(void **state)
{
    (void)state;
    sim *s = sim_create();
    trace t = {.n = 0};
    sim_schedule(s, 100, rec, &t, 1);
    sim_schedule(s, 200, rec, &t, 2);
    sim_schedule(s, 300, rec, &t, 3);
    assert_int_equal(sim_run(s, 200), 0);   /* events at exactly 200 run */
    assert_int_equal(t.n, 2);
    assert_int_equal(sim_now(s), 200);
    assert_int_equal(sim_run(s, 250), 0);
    assert_int_equal(sim_now(s), 250);      /* nothing ran, clock advanced */
    assert_int_equal(sim_run(s, SIM_TIME_MAX), 0);
    assert_int_equal(sim_now(s), 300);      /* ran dry: clock at last event */
    assert_int_equal(t.n, 3);
    sim_destroy(s);
}

static void stopper(sim *s, void *obj, uint64_t arg)
{
    rec(s, obj, arg);
    sim_stop(s);
}

static void test_sim_stop_returns_after_current_handler(void **state)
{
    (void)state;
    sim *s = sim_create();
    trace t = {.n = 0};
    sim_schedule(s, 5, rec, &t, 1);
    sim_schedule(s, 5, stopper, &t, 2);
    sim_schedule(s, 5, rec, &t, 3);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), 1);
    assert_int_equal(t.n, 2);
    assert_int_equal(sim_pending(s), 1);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), 0);   /* resumes */
    assert_int_equal(t.n, 3);
    sim_destroy(s);
}

static void test_sim_timer_rearm_moves_single_firing(void **state)
{
    (void)state;
    sim *s = sim_create();
    trace t = {.n = 0};
    sim_timer tm;
    sim_timer_init(&tm, rec, &t, 7);
    assert_false(sim_timer_armed(s, &tm));
    sim_timer_arm(s, &tm, 1000);
    sim_timer_arm(s, &tm, 500);             /* earlier */
    sim_timer_arm(s, &tm, 800);             /* later again */
    assert_int_equal(sim_pending(s), 1);
    assert_true(sim_timer_armed(s, &tm));
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.at[0], 800);
    assert_false(sim_timer_armed(s, &tm));
    sim_timer_arm(s, &tm, 900);
    sim_timer_disarm(s, &tm);
    sim_timer_disarm(s, &tm);               /* harmless */
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(t.n, 1);
    sim_destroy(s);
}

static void test_sim_reschedule_goes_after_same_time_events(void **state)
{
    (void)state;
    sim *s = sim_create();
    trace t = {.n = 0};
    sim_event_id a = sim_schedule(s, 10, rec, &t, 1);
    sim_schedule(s, 50, rec, &t, 2);
    assert_true(sim_reschedule(s, a, 50));  /* now behind event 2 */
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(t.got[0], 2);
    assert_int_equal(t.got[1], 1);
    assert_false(sim_reschedule(s, a, 60));
    sim_destroy(s);
}

/* Randomised: schedule, cancel and reschedule at random; the run order must
 * equal the reference order (time, then last scheduling operation). */
typedef struct ref_ev {
    int64_t at;
    uint64_t order;     /* global counter at the last (re)schedule */
    sim_event_id id;
    int alive;
} ref_ev;

static int ref_cmp(const void *a, const void *b)
{
    const ref_ev *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void test_sim_random_ops_match_sorted_reference(void **state)
{
    (void)state;
    enum { N = 4000 };
    static trace t;
    static ref_ev ref[N];
    t.n = 0;
    sim *s = sim_create();
    rng r;
    rng_init(&r, 42, "test.sim", 0);
    uint64_t order = 0;
    for (uint64_t i = 0; i < N; i++) {
        ref[i].at = (int64_t)rng_below(&r, 500);
        ref[i].order = order++;
        ref[i].id = sim_schedule(s, ref[i].at, rec, &t, i);
        ref[i].alive = 1;
    }
    for (int k = 0; k < 3000; k++) {
        uint64_t i = rng_below(&r, N);
        if (rng_below(&r, 2)) {
            assert_int_equal(sim_cancel(s, ref[i].id), ref[i].alive);
            ref[i].alive = 0;
        } else if (ref[i].alive) {
            ref[i].at = (int64_t)rng_below(&r, 500);
            ref[i].order = order++;
            assert_true(sim_reschedule(s, ref[i].id, ref[i].at));
        }
    }
    size_t alive = 0;
    for (size_t i = 0; i < N; i++)
        alive += (size_t)ref[i].alive;
    assert_int_equal(sim_pending(s), alive);
    /* Map arg back to the reference entry, then sort the reference. */
    static ref_ev sorted[N];
    static uint64_t arg_of[N];
    size_t m = 0;
    for (uint64_t i = 0; i < N; i++)
        if (ref[i].alive) {
            sorted[m] = ref[i];
            sorted[m].id = i;
            m++;
        }
    qsort(sorted, m, sizeof *sorted, ref_cmp);
    for (size_t i = 0; i < m; i++)
        arg_of[i] = sorted[i].id;
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(t.n, m);
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(t.got[i], arg_of[i]);
        assert_int_equal(t.at[i], sorted[i].at);
    }
    sim_destroy(s);
}

/* ---- randomised differential test against a reference ----
 *
 * Handlers schedule, cancel, reschedule and re-arm timers at random while
 * the simulation runs, with sim_run() stopped at random limits and more
 * operations done from outside between runs.  Each event that runs must be
 * the least pending one of the reference by (time, last scheduling
 * operation), found by a linear scan.  Delays mix zero (equal times),
 * picoseconds, microseconds to milliseconds (phases whose rate and size
 * change, so that the queue re-tunes itself), 60 s timeouts and
 * SIM_TIME_MAX sentinels; cancelled and re-armed entries leave tombstones
 * in every part of the queue. */
enum { D_MAX = 1 << 18, D_TIMERS = 16 };

typedef struct dref {
    int64_t at;
    uint64_t order;
    sim_event_id id;
    int alive;
} dref;

typedef struct dstate {
    sim *s;
    rng r;
    dref ev[D_MAX];
    uint32_t n;             /* reference entries used */
    uint32_t live[D_MAX];   /* indices of live entries */
    uint32_t pos[D_MAX];    /* position in live[] */
    uint32_t nlive;
    uint64_t order;
    sim_timer tm[D_TIMERS];
    uint32_t tm_ref[D_TIMERS];  /* reference entry of each armed timer */
    int64_t scale;          /* typical delay of this phase, ps */
    uint32_t target;        /* pending events wanted in this phase */
    int draining;           /* handlers stop adding work */
    uint64_t ran, stop_at;  /* events run; sim_stop() when ran reaches stop_at */
} dstate;

static void d_ev(sim *s, void *obj, uint64_t arg);

static void d_live_add(dstate *d, uint32_t i)
{
    d->pos[i] = d->nlive;
    d->live[d->nlive++] = i;
    d->ev[i].alive = 1;
}

static void d_live_del(dstate *d, uint32_t i)
{
    uint32_t p = d->pos[i], last = d->live[--d->nlive];
    d->live[p] = last;
    d->pos[last] = p;
    d->ev[i].alive = 0;
}

static int64_t d_delay(dstate *d)
{
    uint64_t c = rng_below(&d->r, 100);
    int64_t now = sim_now(d->s), dt;
    if (c < 20)
        dt = 0;                                             /* equal times */
    else if (c < 35)
        dt = (int64_t)rng_below(&d->r, 16);
    else if (c < 92)
        dt = (int64_t)rng_below(&d->r, (uint64_t)(2 * d->scale) + 1);
    else if (c < 97)
        dt = 60 * INT64_C(1000000000000) + (int64_t)rng_below(&d->r, 1000); /* RTO */
    else
        return SIM_TIME_MAX - (int64_t)rng_below(&d->r, 3);  /* sentinels */
    return now > SIM_TIME_MAX - dt ? SIM_TIME_MAX : now + dt;
}

static void d_schedule(dstate *d)
{
    if (d->n == D_MAX - D_TIMERS)
        return;
    uint32_t i = d->n++;
    d->ev[i].at = d_delay(d);
    d->ev[i].order = d->order++;
    d->ev[i].id = sim_schedule(d->s, d->ev[i].at, d_ev, d, i);
    d_live_add(d, i);
}

static void d_op(dstate *d)
{
    uint64_t c = rng_below(&d->r, 100);
    if (c < 45 || d->nlive == 0) {
        d_schedule(d);
    } else if (c < 65) {
        uint32_t i = d->live[rng_below(&d->r, d->nlive)];
        if (i >= D_MAX - D_TIMERS)
            return;                         /* timers are disarmed below */
        assert_true(sim_cancel(d->s, d->ev[i].id));
        assert_false(sim_is_pending(d->s, d->ev[i].id));
        d_live_del(d, i);
        assert_false(sim_cancel(d->s, d->ev[i].id));
    } else if (c < 80) {
        uint32_t i = d->live[rng_below(&d->r, d->nlive)];
        if (i >= D_MAX - D_TIMERS)
            return;
        d->ev[i].at = d_delay(d);
        d->ev[i].order = d->order++;
        assert_true(sim_reschedule(d->s, d->ev[i].id, d->ev[i].at));
    } else {
        /* A timer: its reference entry is D_MAX - D_TIMERS + t. */
        uint32_t t = (uint32_t)rng_below(&d->r, D_TIMERS), i = D_MAX - D_TIMERS + t;
        if (c < 95) {
            d->ev[i].at = d_delay(d);
            d->ev[i].order = d->order++;
            sim_timer_arm(d->s, &d->tm[t], d->ev[i].at);
            if (!d->ev[i].alive)
                d_live_add(d, i);
        } else {
            sim_timer_disarm(d->s, &d->tm[t]);
            if (d->ev[i].alive)
                d_live_del(d, i);
        }
        assert_int_equal(sim_timer_armed(d->s, &d->tm[t]), d->ev[i].alive);
    }
}

static void d_ev(sim *s, void *obj, uint64_t arg)
{
    dstate *d = obj;
    uint32_t i = (uint32_t)arg, m = d->live[0];
    for (uint32_t k = 1; k < d->nlive; k++) {
        const dref *a = &d->ev[d->live[k]], *b = &d->ev[m];
        if (a->at < b->at || (a->at == b->at && a->order < b->order))
            m = d->live[k];
    }
    assert_int_equal(i, m);
    assert_int_equal(sim_now(s), d->ev[i].at);
    d_live_del(d, i);
    if (++d->ran == d->stop_at)
        sim_stop(s);
    if (d->draining)
        return;
    if (d->nlive < d->target) {     /* grow towards this phase's size */
        d_schedule(d);
        d_schedule(d);
    }
    int ops = d->nlive > 2 * d->target ? 0 : 1 + (int)rng_below(&d->r, 2);
    for (int k = 0; k < ops; k++)
        d_op(d);
}

static void differential_run(uint64_t seed)
{
    static dstate d;
    memset(&d, 0, sizeof d);
    d.s = sim_create();
    rng_init(&d.r, seed, "test.sim.diff", 0);
    for (uint32_t t = 0; t < D_TIMERS; t++)
        sim_timer_init(&d.tm[t], d_ev, &d, D_MAX - D_TIMERS + t);
    static const struct { int64_t scale; uint32_t target; } phase[] = {
        {1000000, 300}, {40, 2000}, {1000000000, 600}, {3, 30}, {50000, 1000}, {5000000, 100}};
    for (size_t p = 0; p < sizeof phase / sizeof *phase; p++) {
        d.scale = phase[p].scale;
        d.target = phase[p].target;
        uint64_t stop = d.ran + 12000;
        while (d.ran < stop && d.n < D_MAX - D_TIMERS - 64) {
            for (int k = 0; k < 8; k++)
                d_op(&d);
            int64_t now = sim_now(d.s);
            int64_t until = now + (int64_t)rng_below(&d.r, (uint64_t)(50 * d.scale));
            d.stop_at = d.ran + 1 + rng_below(&d.r, 1000);
            if (sim_run(d.s, until) == 0)
                assert_int_equal(sim_now(d.s), until > now ? until : now);
            else
                assert_true(sim_now(d.s) <= until);
            assert_int_equal(sim_pending(d.s), d.nlive);
        }
        assert_true(d.ran >= stop);     /* the phase ran in full */
    }
    d.draining = 1;
    d.stop_at = 0;
    assert_int_equal(sim_run(d.s, SIM_TIME_MAX), 0);
    assert_int_equal(d.nlive, 0);
    assert_int_equal(sim_pending(d.s), 0);
    sim_destroy(d.s);
}

static void test_sim_differential_many_seeds(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        differential_run(seed);
}

/* Far-future entries and sentinels among dense ones; run limits below them
 * must leave them pending. */
static void test_sim_far_future_and_sentinels(void **state)
{
    (void)state;
    sim *s = sim_create();
    static trace t;
    t.n = 0;
    const int64_t rto = 60 * INT64_C(1000000000000);
    sim_schedule(s, SIM_TIME_MAX, rec, &t, 9000);
    sim_schedule(s, rto, rec, &t, 8000);
    sim_schedule(s, SIM_TIME_MAX - 1, rec, &t, 8500);
    sim_schedule(s, SIM_TIME_MAX, rec, &t, 9001);
    for (uint64_t i = 0; i < 3000; i++)         /* 1 us apart, then 1 ps */
        sim_schedule(s, i < 2000 ? (int64_t)i * 1000000 : 2000000000 + (int64_t)i, rec, &t, i);
    assert_int_equal(sim_run(s, rto - 1), 0);
    assert_int_equal(t.n, 3000);
    assert_int_equal(sim_now(s), rto - 1);
    assert_int_equal(sim_pending(s), 4);
    sim_schedule(s, rto - 1, rec, &t, 7000);    /* at now, before the rto */
    assert_int_equal(sim_run(s, SIM_TIME_MAX - 2), 0);
    assert_int_equal(t.n, 3002);
    assert_int_equal(t.got[3000], 7000);
    assert_int_equal(t.got[3001], 8000);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), 0);
    assert_int_equal(t.n, 3005);
    assert_int_equal(t.got[3002], 8500);
    assert_int_equal(t.got[3003], 9000);
    assert_int_equal(t.got[3004], 9001);
    assert_int_equal(sim_now(s), SIM_TIME_MAX);
    for (size_t i = 0; i < 3000; i++)
        assert_int_equal(t.got[i], i);
    sim_destroy(s);
}

static void count_ev(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    (*(uint64_t *)obj)++;
}

/* A timer re-armed a million times without time passing, then many one-shot
 * events cancelled: the tombstones must not pile up (they are filtered when
 * a structure fills) and exactly the live events run. */
static void test_sim_tombstones_do_not_accumulate(void **state)
{
    (void)state;
    sim *s = sim_create();
    uint64_t fired = 0;
    sim_timer tm;
    sim_timer_init(&tm, count_ev, &fired, 0);
    for (int64_t i = 0; i < 1000000; i++)
        sim_timer_arm(s, &tm, 1000 + (i * 7919) % 100000);
    assert_int_equal(sim_pending(s), 1);
    static sim_event_id ids[100000];
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 100000; i++)
            ids[i] = sim_schedule_in(s, (int64_t)i * 104729 % 5000000, count_ev, &fired, 0);
        for (int i = 0; i < 100000; i++)
            if (i % 1000 != 0)
                assert_true(sim_cancel(s, ids[i]));
    }
    assert_int_equal(sim_pending(s), 1 + 5 * 100);
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(fired, 1 + 5 * 100);
    sim_destroy(s);
}

/* The hold model with a bimodal increment (1 % of events 10^4 times
 * further away), checked against a reference: each event that runs must be
 * the least pending one.  Long enough for the queue to re-tune several
 * times. */
typedef struct hold_ref {
    rng r;
    int64_t at[2048];
    uint64_t order[2048], next_order;
    uint64_t left;
} hold_ref;

static void hold_ref_ev(sim *s, void *obj, uint64_t arg)
{
    hold_ref *h = obj;
    for (int i = 0; i < 2048; i++)
        if (h->at[i] >= 0)
            assert_true(h->at[i] > h->at[arg] ||
                        (h->at[i] == h->at[arg] && h->order[i] >= h->order[arg]));
    assert_int_equal(sim_now(s), h->at[arg]);
    h->at[arg] = -1;
    if (h->left == 0)
        return;
    h->left--;
    double mean = rng_below(&h->r, 100) == 0 ? 1e10 : 1e6;
    h->at[arg] = sim_now(s) + (int64_t)rng_exponential(&h->r, mean) / 1000 * 1000;
    h->order[arg] = h->next_order++;
    sim_schedule(s, h->at[arg], hold_ref_ev, h, arg);
}

static void test_sim_bimodal_hold_matches_reference(void **state)
{
    (void)state;
    static hold_ref h;
    sim *s = sim_create();
    rng_init(&h.r, 7, "test.sim.hold", 0);
    for (uint64_t i = 0; i < 2048; i++) {
        h.at[i] = (int64_t)rng_exponential(&h.r, 1e6) / 1000 * 1000; /* ties */
        h.order[i] = h.next_order++;
        sim_schedule(s, h.at[i], hold_ref_ev, &h, i);
    }
    h.left = 60000;
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(sim_events_run(s), 2048 + 60000);
    sim_destroy(s);
}

static void count_mon(void *ctx, sim *s)
{
    (void)s;
    (*(int *)ctx)++;
}

static void nop(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)obj;
    (void)arg;
}

static void test_sim_monitor_called_every_n_events(void **state)
{
    (void)state;
    sim *s = sim_create();
    int calls = 0;
    sim_set_monitor(s, count_mon, &calls, 10);
    for (int i = 0; i < 95; i++)
        sim_schedule(s, i, nop, NULL, 0);
    sim_run(s, SIM_TIME_MAX);
    assert_int_equal(calls, 9);
    sim_destroy(s);
}

static void test_sim_two_simulations_are_independent(void **state)
{
    (void)state;
    sim *a = sim_create(), *b = sim_create();
    trace ta = {.n = 0}, tb = {.n = 0};
    sim_schedule(a, 10, rec, &ta, 1);
    sim_schedule(b, 20, rec, &tb, 2);
    sim_run(a, SIM_TIME_MAX);
    assert_int_equal(sim_now(a), 10);
    assert_int_equal(sim_now(b), 0);
    assert_int_equal(tb.n, 0);
    sim_run(b, SIM_TIME_MAX);
    assert_int_equal(tb.got[0], 2);
    sim_destroy(a);
    sim_destroy(b);
}

/* Runs s up to `until` and checks the events run since the last call
 * against ref[0..n): the live ones due by then, in (time, order); marks
 * them done. */
static void ring_stretch_check(sim *s, trace *t, ref_ev *ref, uint64_t n, int64_t until)
{
    static ref_ev due[4096];
    size_t m = 0, from = t->n;
    for (uint64_t i = 0; i < n; i++)
        if (ref[i].alive && ref[i].at <= until) {
            due[m] = ref[i];
            due[m].id = i;
            m++;
            ref[i].alive = 0;
        }
    qsort(due, m, sizeof *due, ref_cmp);
    sim_run(s, until);
    assert_int_equal(t->n - from, m);
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(t->got[from + i], due[i].id);
        assert_int_equal(t->at[from + i], due[i].at);
    }
}

/* Entries in the ring: every slot carries one ring node of its own; an
 * entry rescheduled while its first node is still filed (a tombstone now)
 * takes a pool node, and a freed slot is reused while its own node is still
 * filed.  Times are spread over the ring's buckets (1 us wide before the
 * first calibration, 256 of them); rescheduling goes both earlier and later,
 * up to three times per event between runs, and the pool overflows (256
 * nodes at first), so it is filtered and grown.  The order must be the
 * reference order (time, then last scheduling operation). */
static void test_sim_reschedule_within_ring_matches_reference(void **state)
{
    (void)state;
    enum { N = 1500 };
    static trace t;
    static ref_ev ref[2 * N];
    t.n = 0;
    sim *s = sim_create();
    rng r;
    rng_init(&r, 7, "test.sim.ring", 0);
    uint64_t order = 0, n = 0;
    int64_t now = 0;
    for (uint64_t i = 0; i < N; i++) {
        ref[n].at = 1000000 + (int64_t)rng_below(&r, 200000000);
        ref[n].order = order++;
        ref[n].id = sim_schedule(s, ref[n].at, rec, &t, n);
        ref[n].alive = 1;
        n++;
    }
    for (int round = 0; round < 4; round++) {
        for (int k = 0; k < 3 * N; k++) {
            uint64_t i = rng_below(&r, n);
            unsigned op = (unsigned)rng_below(&r, 8);
            if (op == 0 && n < 2 * N) {
                /* cancel, then a new event that likely reuses the slot */
                if (ref[i].alive) {
                    assert_true(sim_cancel(s, ref[i].id));
                    ref[i].alive = 0;
                }
                ref[n].at = now + (int64_t)rng_below(&r, 200000000);
                ref[n].order = order++;
                ref[n].id = sim_schedule(s, ref[n].at, rec, &t, n);
                ref[n].alive = 1;
                n++;
            } else if (ref[i].alive) {
                ref[i].at = now + (int64_t)rng_below(&r, 200000000);
                ref[i].order = order++;
                assert_true(sim_reschedule(s, ref[i].id, ref[i].at));
            }
        }
        /* run a stretch: pours buckets with tombstones and both node kinds */
        now += 30000000;
        ring_stretch_check(s, &t, ref, n, round < 3 ? now : SIM_TIME_MAX);
    }
    assert_int_equal(sim_pending(s), 0);
    sim_destroy(s);
}

/* ---- bursts (issue 19.2) ----
 *
 * Ten pending events run long enough for the queue to tune itself to them
 * (nanosecond buckets, the smallest ring); then one handler schedules a
 * million events at once.  The queue must take them without deep recursion
 * or quadratic work, and run them in the reference order (time, then
 * scheduling order).  Six time patterns: all equal, uniform over 1 ms,
 * picosecond steps, descending microsecond steps, spread over 14 orders of
 * magnitude, and far future (beyond any horizon) with a few near ones. */
enum { BURST_N = 1000000, BURST_WARM = 50000 };

typedef struct burst {
    rng r;
    int pattern;
    int64_t warm_left;
    int64_t *at;            /* [BURST_N] times given */
    uint32_t *got;          /* [BURST_N] order run */
    uint32_t ngot;
    int bad_time;
} burst;

typedef struct burst_ref {
    int64_t at;
    uint32_t i;
} burst_ref;

static int burst_cmp(const void *a, const void *b)
{
    const burst_ref *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void burst_ev(sim *s, void *obj, uint64_t arg)
{
    burst *b = obj;
    b->bad_time |= sim_now(s) != b->at[arg];
    b->got[b->ngot++] = (uint32_t)arg;
}

static int64_t burst_delay(burst *b, uint32_t i)
{
    switch (b->pattern) {
    case 0: return 0;
    case 1: return (int64_t)rng_below(&b->r, 1000000000);
    case 2: return i;
    case 3: return (int64_t)(BURST_N - i) * 1000000;
    case 4: return (int64_t)rng_below(&b->r, UINT64_C(1) << rng_below(&b->r, 48));
    default:
        return i % 16 == 0 ? (int64_t)rng_below(&b->r, 1000)
                           : INT64_C(1000000000000000) + (int64_t)rng_below(&b->r, 1000000000000);
    }
}

static void burst_warm(sim *s, void *obj, uint64_t arg)
{
    burst *b = obj;
    (void)arg;
    if (--b->warm_left > 0) {
        sim_schedule_in(s, 10000, burst_warm, b, 0);
        return;
    }
    if (b->warm_left < 0)
        return;             /* the other nine stop */
    for (uint32_t i = 0; i < BURST_N; i++) {
        b->at[i] = sim_now(s) + burst_delay(b, i);
        sim_schedule(s, b->at[i], burst_ev, b, i);
    }
}

static void test_sim_burst_of_a_million_matches_reference(void **state)
{
    (void)state;
    static burst b;
    b.at = malloc(BURST_N * sizeof *b.at);
    b.got = malloc(BURST_N * sizeof *b.got);
    burst_ref *ref = malloc(BURST_N * sizeof *ref);
    assert_non_null(b.at);
    assert_non_null(b.got);
    assert_non_null(ref);
    for (int p = 0; p < 6; p++) {
        sim *s = sim_create();
        rng_init(&b.r, 7, "test.burst", (uint64_t)p);
        b.pattern = p;
        b.warm_left = BURST_WARM;
        b.ngot = 0;
        b.bad_time = 0;
        for (int i = 0; i < 10; i++)
            sim_schedule(s, 1000 * i, burst_warm, &b, 0);
        sim_run(s, SIM_TIME_MAX);
        if (b.ngot != BURST_N)
            fail_msg("pattern %d: %u of %d events ran", p, b.ngot, BURST_N);
        assert_false(b.bad_time);
        for (uint32_t i = 0; i < BURST_N; i++)
            ref[i] = (burst_ref){b.at[i], i};
        qsort(ref, BURST_N, sizeof *ref, burst_cmp);
        for (uint32_t i = 0; i < BURST_N; i++)
            if (b.got[i] != ref[i].i)
                fail_msg("pattern %d: event %u ran %u-th, expected %u", p, b.got[i], i, ref[i].i);
        assert_int_equal(sim_pending(s), 0);
        sim_destroy(s);
    }
    free(ref);
    free(b.at);
    free(b.got);
}

/* ---- 100 k pending, against a reference heap ----
 *
 * The size the engine's bucket ring is tuned for: 100 k events pending,
 * each run schedules another (mostly now + Exp(1 us); a fifth at the same
 * time, some 10 ms and 60 s ahead, some on a 1 us grid up to 2 ms ahead,
 * so that entries filed far ahead meet later ones at equal times, a few
 * SIM_TIME_MAX sentinels), and
 * random pending ones are cancelled or moved.  Every event that runs must
 * be the least (time, scheduling order) of a plain binary heap's, with
 * lazy deletion, holding the same operations; run limits cut the run into
 * pieces. */
typedef struct rh {
    int64_t at;
    uint64_t order;
    uint32_t i;
} rh;

typedef struct big {
    sim *s;
    rng r;
    rh *h;
    uint32_t hn;
    int64_t *at;
    uint64_t *order;
    sim_event_id *id;
    uint8_t *alive;
    uint32_t n, cap, nlive;
    uint64_t next_order, ran, stop_at;
    int bad;
} big;

static bool rh_less(rh a, rh b) { return a.at < b.at || (a.at == b.at && a.order < b.order); }

static void rh_push(big *b, rh e)
{
    uint32_t i = b->hn++;
    while (i > 0 && rh_less(e, b->h[(i - 1) / 2])) {
        b->h[i] = b->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    b->h[i] = e;
}

static void rh_pop(big *b)
{
    rh e = b->h[--b->hn];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= b->hn)
            break;
        if (c + 1 < b->hn && rh_less(b->h[c + 1], b->h[c]))
            c++;
        if (!rh_less(b->h[c], e))
            break;
        b->h[i] = b->h[c];
        i = c;
    }
    b->h[i] = e;
}

/* The reference's least live entry (stale ones dropped). */
static uint32_t rh_min(big *b)
{
    while (b->hn && (!b->alive[b->h[0].i] || b->order[b->h[0].i] != b->h[0].order))
        rh_pop(b);
    return b->hn ? b->h[0].i : UINT32_MAX;
}

static int64_t big_time(big *b)
{
    int64_t now = sim_now(b->s);
    uint64_t c = rng_below(&b->r, 100);
    if (c < 20)
        return now;
    if (c < 95)
        return now + (int64_t)rng_exponential(&b->r, 1e6);
    if (c < 96)
        return now + (int64_t)rng_exponential(&b->r, 1e10);
    if (c < 98)     /* a 1 us grid up to 2 ms ahead: equal times met from afar and near */
        return (now / 1000000 + 1 + (int64_t)rng_below(&b->r, 2000)) * 1000000;
    if (c < 99)
        return now + 60 * INT64_C(1000000000000);
    return SIM_TIME_MAX;
}

static void big_ev(sim *s, void *obj, uint64_t arg);

static void big_sched(big *b)
{
    if (b->n == b->cap)
        return;
    uint32_t i = b->n++;
    b->at[i] = big_time(b);
    b->order[i] = b->next_order++;
    b->id[i] = sim_schedule(b->s, b->at[i], big_ev, b, i);
    b->alive[i] = 1;
    b->nlive++;
    rh_push(b, (rh){b->at[i], b->order[i], i});
}

static void big_ev(sim *s, void *obj, uint64_t arg)
{
    big *b = obj;
    uint32_t i = (uint32_t)arg;
    if (rh_min(b) != i || sim_now(s) != b->at[i])
        b->bad = 1;
    b->alive[i] = 0;
    b->nlive--;
    if (++b->ran == b->stop_at)
        sim_stop(s);
    big_sched(b);
    uint64_t c = rng_below(&b->r, 100);
    uint32_t j = (uint32_t)rng_below(&b->r, b->n);
    if (c < 10 && b->alive[j]) {            /* cancel one, schedule one */
        if (!sim_cancel(s, b->id[j]))
            b->bad = 1;
        b->alive[j] = 0;
        b->nlive--;
        big_sched(b);
    } else if (c < 20 && b->alive[j]) {     /* move one */
        b->at[j] = big_time(b);
        b->order[j] = b->next_order++;
        if (!sim_reschedule(s, b->id[j], b->at[j]))
            b->bad = 1;
        rh_push(b, (rh){b->at[j], b->order[j], j});
    }
}

static void test_sim_100k_pending_matches_reference_heap(void **state)
{
    (void)state;
    enum { PENDING = 100000, EVENTS = 600000 };
    static big b;
    memset(&b, 0, sizeof b);
    b.cap = PENDING + 2 * EVENTS;
    b.h = malloc((size_t)2 * b.cap * sizeof *b.h);
    b.at = malloc(b.cap * sizeof *b.at);
    b.order = malloc(b.cap * sizeof *b.order);
    b.id = malloc(b.cap * sizeof *b.id);
    b.alive = calloc(b.cap, 1);
    assert_true(b.h && b.at && b.order && b.id && b.alive);
    b.s = sim_create();
    rng_init(&b.r, 3, "test.sim.100k", 0);
    for (int i = 0; i < PENDING; i++)
        big_sched(&b);
    while (b.ran < EVENTS && !b.bad) {
        int64_t now = sim_now(b.s);
        b.stop_at = b.ran + 1 + rng_below(&b.r, 50000);
        sim_run(b.s, now + (int64_t)rng_below(&b.r, 2000000));
        assert_int_equal(sim_pending(b.s), b.nlive);
    }
    if (b.bad)
        fail_msg("event %llu ran out of (time, sequence) order, or a cancel or move failed",
                 (unsigned long long)b.ran);
    assert_true(b.nlive > PENDING / 2);
    sim_destroy(b.s);
    free(b.h);
    free(b.at);
    free(b.order);
    free(b.id);
    free(b.alive);
}

/* ---- failures (issue 19.3, 19.6) ---- */

static void self_again(sim *s, void *obj, uint64_t arg)
{
    (*(uint64_t *)obj)++;
    sim_schedule_in(s, 0, self_again, obj, arg);
}

static void far_step(sim *s, void *obj, uint64_t arg)
{
    (*(uint64_t *)obj)++;
    sim_schedule_in(s, (int64_t)arg, far_step, obj, arg);
}

/* Scheduling past the end of time, or before now, fails the simulation with
 * a reason instead of an assertion; sim_run() returns -1 and never runs
 * again. */
static void test_sim_schedule_past_the_end_of_time_fails(void **state)
{
    (void)state;
    sim *s = sim_create();
    uint64_t n = 0;
    /* 2^62 ps steps: the third lands past 2^63 - 1. */
    sim_schedule(s, 0, far_step, &n, UINT64_C(1) << 62);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), -1);
    assert_int_equal(n, 2);
    assert_non_null(sim_failure(s));
    assert_non_null(strstr(sim_failure(s), "past the end of simulated time"));
    assert_int_equal(sim_run(s, SIM_TIME_MAX), -1);
    sim_destroy(s);

    s = sim_create();
    trace t = {.n = 0};
    sim_schedule(s, 100, rec, &t, 1);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), 0);
    assert_null(sim_failure(s));
    assert_int_equal(sim_schedule(s, 50, rec, &t, 2), 0);      /* before now */
    assert_non_null(strstr(sim_failure(s), "before the current time"));
    assert_int_equal(sim_schedule_in(s, -1, rec, &t, 3), 0);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), -1);
    assert_int_equal(t.n, 1);
    sim_destroy(s);
}

/* Time standing still for more than the stall limit fails the run; as many
 * events at one time as a legitimate model makes (two million here, in
 * several bursts) do not. */
static void test_sim_stall_limit_stops_zero_time_loops_only(void **state)
{
    (void)state;
    sim *s = sim_create();
    uint64_t n = 0;
    sim_set_stall_limit(s, 1000);
    sim_schedule(s, 5, self_again, &n, 0);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), -1);
    assert_int_equal(n, 1000);
    assert_non_null(strstr(sim_failure(s), "has not advanced for 1000 events in a row"));
    sim_destroy(s);

    s = sim_create();
    uint64_t fired = 0;
    for (int64_t t = 0; t < 4; t++)
        for (int i = 0; i < 500000; i++)
            sim_schedule(s, t * 1000, count_ev, &fired, 0);
    sim_set_stall_limit(s, 500000);
    assert_int_equal(sim_run(s, SIM_TIME_MAX), 0);
    assert_int_equal(fired, 2000000);
    assert_null(sim_failure(s));
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_equal_times_run_in_scheduling_order),
        cmocka_unit_test(test_sim_cancel_by_handle_and_stale_ids),
        cmocka_unit_test(test_sim_run_until_stops_at_limit_and_advances_clock),
        cmocka_unit_test(test_sim_stop_returns_after_current_handler),
        cmocka_unit_test(test_sim_timer_rearm_moves_single_firing),
        cmocka_unit_test(test_sim_reschedule_goes_after_same_time_events),
        cmocka_unit_test(test_sim_random_ops_match_sorted_reference),
        cmocka_unit_test(test_sim_reschedule_within_ring_matches_reference),
        cmocka_unit_test(test_sim_differential_many_seeds),
        cmocka_unit_test(test_sim_far_future_and_sentinels),
        cmocka_unit_test(test_sim_tombstones_do_not_accumulate),
        cmocka_unit_test(test_sim_bimodal_hold_matches_reference),
        cmocka_unit_test(test_sim_monitor_called_every_n_events),
        cmocka_unit_test(test_sim_two_simulations_are_independent),
        cmocka_unit_test(test_sim_burst_of_a_million_matches_reference),
        cmocka_unit_test(test_sim_100k_pending_matches_reference_heap),
        cmocka_unit_test(test_sim_schedule_past_the_end_of_time_fails),
        cmocka_unit_test(test_sim_stall_limit_stops_zero_time_loops_only),
    };
    return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
