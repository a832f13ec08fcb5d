/*
 * pin_int.h - what pin.c and pin_uffd.c share inside the pinning library
 * (not a public contract; pin.h is).
 */
#ifndef AISIM_PIN_INT_H
#define AISIM_PIN_INT_H

#include "real/pin/pin.h"

/* Locks block i (not locked yet) for the map cache: evicts the least
 * recently used block if the cache is full, fills the block first on a uffd
 * map if it was never filled, mlocks it and puts it at the head of the
 * recency list.  Caller holds the map's lock.  0 or a negative AISIM_E*. */
int pin__lock_block(pin_map *m, size_t i, err *e);

/* The map's lock (no-ops on a map without userfaultfd). */
void pin__lock(pin_map *m);
void pin__unlock(pin_map *m);

/* Fills block i of a uffd map with zeroed pages without waking a faulting
 * thread (the pages already there are kept).  0 or AISIM_EIO. */
int pin__uffd_fill(pin_map *m, size_t i, err *e);

/* Stops the fault thread, closes the descriptors, frees m->uffd. */
void pin__uffd_stop(pin_map *m);

/* The message for a failed mlock of `bytes` (errno errnum). */
int pin__mlock_error(const pin_map *m, size_t bytes, int errnum, err *e);

/* Whether the effective capability set holds capability `bit`. */
bool pin__has_cap(int bit);

/* The system calls themselves: AddressSanitizer replaces mlock and munlock
 * with no-ops, which would make the sanitizer build pin nothing. */
int pin__sys_mlock(const void *a, size_t n);
int pin__sys_munlock(const void *a, size_t n);

#endif
