/*
 * sim.h - the discrete-event engine.
 *
 * Time is an int64_t count of picoseconds.  Events are ordered by
 * (time, sequence number): events at equal times run in the order they were
 * scheduled, so a run is a pure function of the scenario and the seed.
 *
 * The pending set is a timing wheel (a calendar queue with power-of-two
 * bucket widths, re-tuned to the event rate as it runs) in front of two
 * small 4-ary heaps: one sorts the bucket being run, one holds the far
 * future.  Cancellation is O(1): the slot is freed at once and the queued
 * entry is dropped when met (a tombstone).  An event id carries its slot's
 * generation number: cancelling an id that already ran, or was cancelled,
 * is a harmless no-op.  Cost: O(1) expected per schedule, cancel and run
 * (O(log n) for far-future entries).  src/core/sim.c explains the
 * structure; docs/benchmarks.md has the measurements behind it.
 *
 * Objects that re-arm all the time (a queue's service completion, a
 * retransmission timeout) embed a sim_timer; one-shot events use
 * sim_schedule().  Nothing here allocates once the arrays are warm.
 *
 * There is no global state: several simulations can live in one process.
 */
#ifndef AISIM_SIM_H
#define AISIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim sim;

/* An event handler.  `obj` and `arg` are what was given to sim_schedule(). */
typedef void sim_fn(sim *s, void *obj, uint64_t arg);

/* Names a scheduled event; 0 never names one. */
typedef uint64_t sim_event_id;

#define SIM_TIME_MAX INT64_MAX

sim *sim_create(void);
void sim_destroy(sim *s);

/* Schedules fn(s, obj, arg) at absolute time at_ps.  Returns the event's id.
 * A time before sim_now(s) (in practice: a time computation that overflowed
 * past SIM_TIME_MAX) fails the simulation (sim_failure()) and returns 0. */
sim_event_id sim_schedule(sim *s, int64_t at_ps, sim_fn *fn, void *obj, uint64_t arg);

/* Same, `delay_ps` after now.  A negative delay, or one that ends past
 * SIM_TIME_MAX, fails the simulation and returns 0. */
sim_event_id sim_schedule_in(sim *s, int64_t delay_ps, sim_fn *fn, void *obj, uint64_t arg);

/* Cancels a pending event.  Returns false (and does nothing) if the id is 0,
 * already ran or was already cancelled. */
bool sim_cancel(sim *s, sim_event_id id);

/* Moves a pending event to a new time; it then runs after every event already
 * scheduled for that time.  Returns false if the id is not pending (or the
 * time is in the past: that fails the simulation, as in sim_schedule()). */
bool sim_reschedule(sim *s, sim_event_id id, int64_t at_ps);

/* True if the id names an event that has not yet run or been cancelled. */
bool sim_is_pending(const sim *s, sim_event_id id);

/* Runs events in order until none is left, the next is later than until_ps,
 * or a handler calls sim_stop().  If it stops at the time limit, the clock
 * advances to until_ps.  Returns 1 if stopped by sim_stop(), -1 if the
 * simulation failed (sim_failure(); it then never runs again), else 0. */
int sim_run(sim *s, int64_t until_ps);

/* Why the simulation failed, or NULL: an event scheduled in the past or
 * past SIM_TIME_MAX, or simulated time stuck (below). */
const char *sim_failure(const sim *s);

/* A run in which more than this many events in a row run at one simulated
 * time fails: time is not advancing (a zero-time loop).  10^8 is far more
 * events at one instant than any model makes (at ~30 M events/s it takes a
 * few seconds to reach), so it only stops runs that would never end. */
#define SIM_STALL_EVENTS UINT64_C(100000000)
/* Sets that limit (0: back to SIM_STALL_EVENTS); for tests. */
void sim_set_stall_limit(sim *s, uint64_t n);

/* Makes sim_run() return after the current handler. */
void sim_stop(sim *s);

/* A stop asked for from outside the run: the runner's SIGINT, SIGTERM and
 * SIGHUP handler calls sim_interrupt() (async-signal-safe).  Work that can
 * run long inside one handler, or at configure time, polls
 * sim_interrupted() and gives up; the runner then exits 1 and writes
 * nothing.  One flag per process (a signal is). */
void sim_interrupt(void);
bool sim_interrupted(void);
void sim_interrupt_clear(void);

/* The current time (inline: called per packet; the engine's first
 * member, sim.c). */
static inline int64_t sim_now(const sim *s) { return *(const int64_t *)(const void *)s; }
uint64_t sim_events_run(const sim *s);       /* handlers called so far */
size_t sim_pending(const sim *s);            /* events waiting */

/* Calls fn(ctx, s) every `every` events (every > 0) while sim_run() runs:
 * for progress lines.  fn may call sim_stop().  NULL fn removes it. */
void sim_set_monitor(sim *s, void (*fn)(void *ctx, sim *s), void *ctx, uint64_t every);

/* An embedded, re-armable timer: at most one pending firing. */
typedef struct sim_timer {
    sim_event_id id;    /* pending firing, or 0 */
    sim_fn *fn;         /* handler */
    void *obj;          /* handler's object */
    uint64_t arg;       /* handler's argument */
} sim_timer;

void sim_timer_init(sim_timer *t, sim_fn *fn, void *obj, uint64_t arg);
/* Arms the timer for at_ps, moving it if already armed. */
void sim_timer_arm(sim *s, sim_timer *t, int64_t at_ps);
/* Disarms it; harmless if not armed. */
void sim_timer_disarm(sim *s, sim_timer *t);
bool sim_timer_armed(const sim *s, const sim_timer *t);

#endif
