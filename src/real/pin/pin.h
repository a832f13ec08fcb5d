/*
 * pin.h - pinning a process's own memory with mlock(2), in the two ways
 * Stellar compares (Lu et al., SIGCOMM'25, sections 3.1 and 5):
 *
 *  - full pinning (VFIO, HyV/MasQ): every page of a region is locked before
 *    the first DMA (pin_all);
 *  - PVDMA's on-demand pinning: nothing is locked at start; the first touch
 *    of a block (2 MiB in Stellar) locks the whole block and records it in a
 *    map cache; a later touch of the same block is a lookup (pin_touch);
 *    pin_release unlocks the blocks of a released range (an MR
 *    deregistration).
 *
 * This is real code on real memory, not a model: `aisim calibrate pin`
 * measures it to give the Stellar model its pin rate.  The map cache is an
 * array with one byte per block of the region (the region is the guest's
 * RAM, contiguous and known at start), so a lookup is one load.
 *
 * Locked memory counts against RLIMIT_MEMLOCK unless the process has
 * CAP_IPC_LOCK; pin_memlock_raise() raises the soft limit where the hard
 * limit allows, and every mlock failure is reported with the limit, what is
 * locked already and how to allow more.
 *
 * Not thread-safe: one pin_map per thread.
 */
#ifndef AISIM_PIN_H
#define AISIM_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/err.h"

typedef struct pin_map {
    uint8_t *base;          /* region start, aligned to block_bytes */
    size_t len;             /* region length, bytes (a multiple of block_bytes) */
    size_t block_bytes;     /* pin granularity, a power of two >= the page size */
    size_t nblocks;         /* len / block_bytes */
    uint8_t *pinned;        /* the map cache: 1 if block i is locked; owned */
    size_t pinned_blocks;   /* blocks locked now */
    bool owns_mem;          /* pin_map_create mapped the region */
    uint64_t stat_pins;     /* blocks locked by pin_touch / pin_all */
    uint64_t stat_lookups;  /* block touches that found the block locked */
    uint64_t stat_unpins;   /* blocks unlocked */
} pin_map;

/* Maps an anonymous private region of `len` bytes (rounded up to whole
 * blocks) aligned to `block_bytes`, and binds a map to it: nothing is locked
 * and, unless `populate`, nothing is faulted in.  `huge` asks for
 * transparent huge pages (madvise MADV_HUGEPAGE; ignored where unsupported).
 * block_bytes must be a power of two and a multiple of the page size.
 * Returns 0, or a negative AISIM_E* with e filled (nothing mapped). */
int pin_map_create(pin_map *m, size_t len, size_t block_bytes, bool populate, bool huge, err *e);

/* Binds a map to memory the caller owns: base must be block-aligned and len
 * a multiple of block_bytes.  Returns 0 or AISIM_EINVAL. */
int pin_map_init(pin_map *m, void *base, size_t len, size_t block_bytes, err *e);

/* Unlocks every locked block, unmaps the region if pin_map_create mapped it
 * and frees the map cache.  Safe on a zeroed map. */
void pin_map_fini(pin_map *m);

/* On-demand pinning: locks every block overlapping [addr, addr + len) that
 * is not locked yet and records it.  Returns the number of blocks newly
 * locked (0: every block was a map-cache hit), or a negative AISIM_E* with e
 * filled: AISIM_ERANGE if the range leaves the region, AISIM_EIO if mlock
 * fails (the message names RLIMIT_MEMLOCK when that is the cause); blocks
 * locked before the failure stay locked and recorded. */
long pin_touch(pin_map *m, const void *addr, size_t len, err *e);

/* Full pinning: locks the whole region with one mlock call and marks every
 * block.  Returns 0 or a negative AISIM_E* (nothing recorded). */
int pin_all(pin_map *m, err *e);

/* Unlocks the locked blocks that lie entirely inside [addr, addr + len)
 * (a block shared with memory outside the range stays locked).  Returns the
 * number of blocks unlocked, or AISIM_ERANGE. */
long pin_release(pin_map *m, const void *addr, size_t len, err *e);

/* Whether block i is in the map cache. */
static inline bool pin_block_pinned(const pin_map *m, size_t i) { return m->pinned[i] != 0; }

static inline size_t pin_pinned_bytes(const pin_map *m) { return m->pinned_blocks * m->block_bytes; }

/* Locked memory of this process (VmLck in /proc/self/status), bytes, or -1
 * if it cannot be read. */
long long pin_vmlck_bytes(void);

/* Pages of [addr, addr + len) resident in memory (mincore), or -1. */
long pin_resident_pages(const void *addr, size_t len);

/* The soft RLIMIT_MEMLOCK in bytes (RLIM_INFINITY as INT64_MAX), and whether
 * the process may lock memory beyond it (CAP_IPC_LOCK in its effective set). */
int64_t pin_memlock_limit(void);
bool pin_has_ipc_lock(void);

/* Raises the soft RLIMIT_MEMLOCK to at least `want` bytes if it is lower,
 * as far as the hard limit allows.  Returns the bytes this process may lock
 * now (INT64_MAX with CAP_IPC_LOCK or an infinite limit). */
int64_t pin_memlock_raise(int64_t want);

#endif
