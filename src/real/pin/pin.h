/*
 * pin.h - pinning a process's own memory with mlock(2), in the two ways
 * Stellar compares (Lu et al., SIGCOMM'25, sections 3.1 and 5):
 *
 *  - full pinning (VFIO, HyV/MasQ): every page of a region is locked before
 *    the first DMA (pin_all);
 *  - PVDMA's on-demand pinning: nothing is locked at start; the first touch
 *    of a block (2 MiB in Stellar) locks the whole block and records it in a
 *    map cache; a later touch of the same block is a lookup.  Two triggers:
 *    an explicit touch, as a DMA registration does (pin_touch), and, on a
 *    map made by pin_map_create_uffd(), the first CPU access to a block
 *    (a userfaultfd missing-page fault, handled in user mode by a thread of
 *    the library: the block is filled with zeroed pages, locked, recorded,
 *    and only then is the faulting thread woken).  pin_release unlocks the
 *    blocks of a released range (an MR deregistration).
 *
 * The map cache has a capacity (pin_set_capacity; default every block):
 * locking a block when it is full first evicts the least recently used
 * locked block, and eviction unpins (munlock).  An evicted block keeps its
 * contents and stays resident, so a later CPU access does not fault; the
 * next pin_touch of it pins it again (a re-pin of resident pages, cheaper
 * than a first pin).  Recency is updated by pins and by pin_touch lookups.
 *
 * This is real code on real memory, not a model: `aisim calibrate pin`
 * measures it to give the Stellar model its pin costs.
 *
 * userfaultfd: the descriptor is opened in user mode only
 * (UFFD_USER_MODE_ONLY, so vm.unprivileged_userfaultfd = 0 does not need
 * CAP_SYS_PTRACE on kernels >= 5.11), else without it, else through
 * /dev/userfaultfd; where none works pin_uffd_probe() says why (no kernel
 * support, the sysctl and the capability, the device's permissions).  With
 * user mode only, a kernel access (read(2) into the region, mlock of a block
 * not yet filled) to a page never touched fails with EFAULT: touch from user
 * space, or pin_touch first.
 *
 * Locked memory counts against RLIMIT_MEMLOCK unless the process has
 * CAP_IPC_LOCK; pin_memlock_raise() raises the soft limit where the hard
 * limit allows, and every mlock failure is reported with the limit, what is
 * locked already and how to allow more.
 *
 * One pin_map per thread of the caller; a uffd map's state is shared with
 * its fault thread under a mutex.
 */
#ifndef AISIM_PIN_H
#define AISIM_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/err.h"

struct pin_uffd;                /* the userfaultfd part (pin_uffd.c) */

/* Per-block state bits of pin_map.state. */
enum { PIN_B_LOCKED = 1, PIN_B_PRESENT = 2 };

typedef struct pin_map {
    uint8_t *base;          /* region start, aligned to block_bytes */
    size_t len;             /* region length, bytes (a multiple of block_bytes) */
    size_t block_bytes;     /* pin granularity, a power of two >= the page size */
    size_t nblocks;         /* len / block_bytes (< 2^32 - 1) */
    uint8_t *state;         /* the map cache: PIN_B_* per block; owned */
    size_t pinned_blocks;   /* blocks locked now */
    size_t capacity;        /* blocks the map cache holds locked at most */
    uint32_t *prev, *next;  /* recency list of locked blocks; owned */
    uint32_t head, tail;    /* most and least recently used; UINT32_MAX: none */
    bool owns_mem;          /* pin_map_create* mapped the region */
    struct pin_uffd *uffd;  /* NULL unless pin_map_create_uffd; owned */
    uint64_t stat_pins;     /* blocks locked (first pins, re-pins, pin_all) */
    uint64_t stat_lookups;  /* block touches that found the block locked */
    uint64_t stat_unpins;   /* blocks unlocked (release or eviction) */
    uint64_t stat_evictions;/* blocks unlocked to make room */
    uint64_t stat_faults;   /* userfaultfd faults handled */
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
 * is not locked yet and records it, evicting least recently used blocks
 * when the map cache is full.  Returns the number of blocks newly locked
 * (0: every block was a map-cache hit), or a negative AISIM_E* with e
 * filled: AISIM_ERANGE if the range leaves the region or spans more blocks
 * than the capacity, AISIM_EIO if mlock fails (the message names
 * RLIMIT_MEMLOCK when that is the cause); blocks locked before the failure
 * stay locked and recorded. */
long pin_touch(pin_map *m, const void *addr, size_t len, err *e);

/* Full pinning: locks the whole region with one mlock call and marks every
 * block (on a uffd map, fills the blocks not filled yet first).  Returns 0,
 * AISIM_EINVAL if the capacity is below the region's blocks, or another
 * negative AISIM_E* (nothing recorded). */
int pin_all(pin_map *m, err *e);

/* Unlocks the locked blocks that lie entirely inside [addr, addr + len)
 * (a block shared with memory outside the range stays locked).  Returns the
 * number of blocks unlocked, or AISIM_ERANGE. */
long pin_release(pin_map *m, const void *addr, size_t len, err *e);

/* Sets the map cache's capacity in blocks (0: every block of the region)
 * and evicts least recently used blocks down to it.  Returns the blocks
 * evicted. */
size_t pin_set_capacity(pin_map *m, size_t blocks);

/* Whether userfaultfd can be used here: 0, or a negative AISIM_E* with the
 * reason in why (what is missing and what would allow it). */
int pin_uffd_probe(char *why, size_t n);

/* Like pin_map_create (4 KiB pages, nothing faulted in), and registers the
 * region with a userfaultfd whose fault thread pins a block on the first
 * CPU access to it.  Returns 0, or a negative AISIM_E* with e filled
 * (message "userfaultfd unavailable: REASON" when it cannot be used;
 * nothing mapped, no thread left). */
int pin_map_create_uffd(pin_map *m, size_t len, size_t block_bytes, err *e);

/* The first error the fault thread met (an mlock beyond RLIMIT_MEMLOCK, a
 * failed fill), copied into e: 0 if none.  The faulting access still
 * completed (its page is filled), unpinned.  It takes the map's lock, so it
 * is also the point after which the caller may read the map's fields that
 * the fault thread wrote (the compiler may otherwise keep a stale copy:
 * the fields are plain, guarded by that lock). */
int pin_uffd_error(pin_map *m, err *e);

/* Whether block i is locked (in the map cache). */
static inline bool pin_block_pinned(const pin_map *m, size_t i)
{
    return (m->state[i] & PIN_B_LOCKED) != 0;
}

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
