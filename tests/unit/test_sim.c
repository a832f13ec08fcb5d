/*
 * test_sim.c - the event engine: ordering, cancellation, timers, run limits,
 * and a randomised comparison against a sorted reference.
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
        cmocka_unit_test(test_sim_monitor_called_every_n_events),
        cmocka_unit_test(test_sim_two_simulations_are_independent),
    };
    return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
