/*
 * pin.c - on-demand and full pinning of real memory with mlock(2), and the
 * map cache of pinned blocks with its capacity and LRU eviction (contract
 * in pin.h; the userfaultfd trigger is pin_uffd.c).
 *
 * mlock faults in and locks every page of the range: on fresh anonymous
 * memory that is one page fault, one zeroed page and one page-table update
 * per page, which is the work a hypervisor's VFIO pinning does for guest RAM
 * (Stellar section 3.1: 1.6 TB takes minutes).  munlock leaves the pages
 * resident, so a block unlocked and locked again is cheaper than a first
 * pin; the calibration therefore pins fresh memory only.
 *
 * The map cache is a byte of state per block and an intrusive doubly linked
 * recency list of the locked blocks threaded through two uint32_t arrays
 * (head = most recently used): a lookup is one load and a move to the head,
 * an eviction unlinks the tail.
 */
#include "real/pin/pin_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NIL UINT32_MAX

int pin__sys_mlock(const void *a, size_t n) { return (int)syscall(SYS_mlock, a, n); }
int pin__sys_munlock(const void *a, size_t n) { return (int)syscall(SYS_munlock, a, n); }

static bool pow2(size_t x) { return x && !(x & (x - 1)); }

static int check_block(size_t block_bytes, err *e)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (!pow2(block_bytes) || block_bytes < page)
        return ERR(e, AISIM_EINVAL,
                   "pin block of %zu bytes: expected a power of two of at least the page size "
                   "(%zu bytes)", block_bytes, page);
    return 0;
}

int pin_map_init(pin_map *m, void *base, size_t len, size_t block_bytes, err *e)
{
    memset(m, 0, sizeof *m);
    int r = check_block(block_bytes, e);
    if (r)
        return r;
    if (((uintptr_t)base & (block_bytes - 1)) || len == 0 || len % block_bytes)
        return ERR(e, AISIM_EINVAL,
                   "pin region %p + %zu bytes: expected a non-empty whole number of "
                   "%zu-byte blocks starting on a block boundary", base, len, block_bytes);
    if (len / block_bytes >= NIL)
        return ERR(e, AISIM_EINVAL, "pin region of %zu blocks: expected fewer than %u",
                   len / block_bytes, NIL);
    m->base = base;
    m->len = len;
    m->block_bytes = block_bytes;
    m->nblocks = len / block_bytes;
    m->capacity = m->nblocks;
    m->state = xcalloc(m->nblocks, 1);
    m->prev = xmalloc(m->nblocks * sizeof *m->prev);
    m->next = xmalloc(m->nblocks * sizeof *m->next);
    m->head = m->tail = NIL;
    return 0;
}

/* Maps len bytes (rounded up to whole blocks) aligned to block_bytes. */
static uint8_t *map_aligned(size_t *len, size_t block_bytes, err *e)
{
    size_t l = (*len + block_bytes - 1) & ~(block_bytes - 1);
    /* Over-map by one block and trim, so the region starts on a block
     * boundary (mmap only promises page alignment). */
    size_t span = l + block_bytes;
    uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        ERR(e, AISIM_EIO, "mmap of %zu bytes: %s", span, strerror(errno));
        return NULL;
    }
    uint8_t *base = (uint8_t *)(((uintptr_t)raw + block_bytes - 1) & ~(uintptr_t)(block_bytes - 1));
    if (base > raw)
        munmap(raw, (size_t)(base - raw));
    size_t tail = (size_t)(raw + span - (base + l));
    if (tail)
        munmap(base + l, tail);
    *len = l;
    return base;
}

int pin_map_create(pin_map *m, size_t len, size_t block_bytes, bool populate, bool huge, err *e)
{
    memset(m, 0, sizeof *m);
    int r = check_block(block_bytes, e);
    if (r)
        return r;
    if (len == 0)
        return ERR(e, AISIM_EINVAL, "pin region of 0 bytes");
    uint8_t *base = map_aligned(&len, block_bytes, e);
    if (!base)
        return e->code;
    if (huge)
        (void)madvise(base, len, MADV_HUGEPAGE);   /* a hint: EINVAL without THP */
    if (populate)
        for (size_t off = 0; off < len; off += (size_t)sysconf(_SC_PAGESIZE))
            base[off] = 0;
    r = pin_map_init(m, base, len, block_bytes, e);
    if (r) {
        munmap(base, len);
        return r;
    }
    m->owns_mem = true;
    return 0;
}

void pin_map_fini(pin_map *m)
{
    if (!m->state)
        return;
    pin__uffd_stop(m);          /* no fault is handled after this */
    for (size_t i = 0; i < m->nblocks; i++)
        if (m->state[i] & PIN_B_LOCKED)
            pin__sys_munlock(m->base + i * m->block_bytes, m->block_bytes);
    if (m->owns_mem)
        munmap(m->base, m->len);
    free(m->state);
    free(m->prev);
    free(m->next);
    memset(m, 0, sizeof *m);
}

int pin__mlock_error(const pin_map *m, size_t bytes, int errnum, err *e)
{
    if (errnum != ENOMEM && errnum != EPERM && errnum != EAGAIN)
        return ERR(e, AISIM_EIO, "mlock of %zu bytes: %s", bytes, strerror(errnum));
    int64_t lim = pin_memlock_limit();
    long long lck = pin_vmlck_bytes();
    char l[32];
    if (lim == INT64_MAX)
        snprintf(l, sizeof l, "unlimited");
    else
        snprintf(l, sizeof l, "%" PRId64 " KiB", lim / 1024);
    return ERR(e, AISIM_EIO,
               "mlock of %zu bytes failed (%s): RLIMIT_MEMLOCK is %s and %lld KiB are locked "
               "already (%zu KiB by this map); raise the limit (ulimit -l, limits.conf "
               "memlock) or run with CAP_IPC_LOCK", bytes, strerror(errnum), l,
               lck < 0 ? -1 : lck / 1024, pin_pinned_bytes(m) / 1024);
}

/* ---- the recency list ---- */

static void lru_unlink(pin_map *m, uint32_t i)
{
    if (m->prev[i] != NIL)
        m->next[m->prev[i]] = m->next[i];
    else
        m->head = m->next[i];
    if (m->next[i] != NIL)
        m->prev[m->next[i]] = m->prev[i];
    else
        m->tail = m->prev[i];
}

static void lru_push(pin_map *m, uint32_t i)
{
    m->prev[i] = NIL;
    m->next[i] = m->head;
    if (m->head != NIL)
        m->prev[m->head] = i;
    m->head = i;
    if (m->tail == NIL)
        m->tail = i;
}

/* Unlocks locked block i and takes it off the list. */
static void unlock_block(pin_map *m, uint32_t i)
{
    pin__sys_munlock(m->base + (size_t)i * m->block_bytes, m->block_bytes);
    m->state[i] &= (uint8_t)~PIN_B_LOCKED;
    lru_unlink(m, i);
    m->pinned_blocks--;
    m->stat_unpins++;
}

static void evict_to(pin_map *m, size_t cap, size_t *evicted)
{
    while (m->pinned_blocks > cap && m->tail != NIL) {
        unlock_block(m, m->tail);
        m->stat_evictions++;
        (*evicted)++;
    }
}

int pin__lock_block(pin_map *m, size_t i, err *e)
{
    size_t ev = 0;
    if (m->pinned_blocks >= m->capacity)
        evict_to(m, m->capacity - 1, &ev);
    uint8_t *b = m->base + i * m->block_bytes;
    if (m->uffd && !(m->state[i] & PIN_B_PRESENT)) {
        int r = pin__uffd_fill(m, i, e);
        if (r)
            return r;
    }
    if (pin__sys_mlock(b, m->block_bytes) != 0)
        return pin__mlock_error(m, m->block_bytes, errno, e);
    m->state[i] |= PIN_B_LOCKED | PIN_B_PRESENT;
    lru_push(m, (uint32_t)i);
    m->pinned_blocks++;
    m->stat_pins++;
    return 0;
}

size_t pin_set_capacity(pin_map *m, size_t blocks)
{
    size_t ev = 0;
    pin__lock(m);
    m->capacity = blocks == 0 || blocks > m->nblocks ? m->nblocks : blocks;
    evict_to(m, m->capacity, &ev);
    pin__unlock(m);
    return ev;
}

static int range_blocks(const pin_map *m, const void *addr, size_t len, size_t *first,
                        size_t *end, err *e)
{
    const uint8_t *a = addr;
    if (a < m->base || len == 0 || len > m->len || (size_t)(a - m->base) > m->len - len)
        return ERR(e, AISIM_ERANGE, "pin range %p + %zu bytes: outside the region %p + %zu",
                   addr, len, (void *)m->base, m->len);
    size_t off = (size_t)(a - m->base);
    *first = off / m->block_bytes;
    *end = (off + len + m->block_bytes - 1) / m->block_bytes;
    return 0;
}

long pin_touch(pin_map *m, const void *addr, size_t len, err *e)
{
    size_t b0, b1;
    int r = range_blocks(m, addr, len, &b0, &b1, e);
    if (r)
        return r;
    if (b1 - b0 > m->capacity)
        return ERR(e, AISIM_ERANGE, "pin range of %zu blocks: the map cache holds %zu",
                   b1 - b0, m->capacity);
    long newly = 0;
    pin__lock(m);
    for (size_t i = b0; i < b1; i++) {
        if (m->state[i] & PIN_B_LOCKED) {
            m->stat_lookups++;
            if (m->head != i) {
                lru_unlink(m, (uint32_t)i);
                lru_push(m, (uint32_t)i);
            }
            continue;
        }
        if ((r = pin__lock_block(m, i, e))) {
            pin__unlock(m);
            return r;
        }
        newly++;
    }
    pin__unlock(m);
    return newly;
}

int pin_all(pin_map *m, err *e)
{
    if (m->capacity < m->nblocks)
        return ERR(e, AISIM_EINVAL, "full pinning of %zu blocks: the map cache holds %zu",
                   m->nblocks, m->capacity);
    pin__lock(m);
    int r = 0;
    for (size_t i = 0; m->uffd && i < m->nblocks && !r; i++)
        if (!(m->state[i] & PIN_B_PRESENT))
            r = pin__uffd_fill(m, i, e);
    if (!r && pin__sys_mlock(m->base, m->len) != 0)
        r = pin__mlock_error(m, m->len, errno, e);
    for (size_t i = 0; !r && i < m->nblocks; i++)
        if (!(m->state[i] & PIN_B_LOCKED)) {
            m->state[i] |= PIN_B_LOCKED | PIN_B_PRESENT;
            lru_push(m, (uint32_t)i);
            m->stat_pins++;
        }
    if (!r)
        m->pinned_blocks = m->nblocks;
    pin__unlock(m);
    return r;
}

long pin_release(pin_map *m, const void *addr, size_t len, err *e)
{
    size_t b0, b1;
    int r = range_blocks(m, addr, len, &b0, &b1, e);
    if (r)
        return r;
    size_t off = (size_t)((const uint8_t *)addr - m->base);
    if (off % m->block_bytes)
        b0++;                           /* first block only partly inside */
    if ((off + len) % m->block_bytes && b1 > b0)
        b1--;                           /* last block only partly inside */
    long n = 0;
    pin__lock(m);
    for (size_t i = b0; i < b1; i++)
        if (m->state[i] & PIN_B_LOCKED) {
            unlock_block(m, (uint32_t)i);
            n++;
        }
    pin__unlock(m);
    return n;
}

/* The value of field `key` ("VmLck:") in /proc/self/status, in kB, or -1. */
static long long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0) {
            v = strtoll(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

long long pin_vmlck_bytes(void)
{
    long long kb = status_kb("VmLck:");
    return kb < 0 ? -1 : kb * 1024;
}

long pin_resident_pages(const void *addr, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (len + page - 1) / page;
    unsigned char *v = xmalloc(n);
    long res = -1;
    if (mincore((void *)addr, len, v) == 0) {
        res = 0;
        for (size_t i = 0; i < n; i++)
            res += v[i] & 1;
    }
    free(v);
    return res;
}

int64_t pin_memlock_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
        return 0;
    return rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_cur;
}

bool pin__has_cap(int bit)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return false;
    char line[256];
    unsigned long long caps = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "CapEff:", 7) == 0) {
            caps = strtoull(line + 7, NULL, 16);
            break;
        }
    fclose(f);
    return (caps >> bit) & 1;
}

bool pin_has_ipc_lock(void) { return pin__has_cap(14); }   /* CAP_IPC_LOCK */

int64_t pin_memlock_raise(int64_t want)
{
    if (pin_has_ipc_lock())
        return INT64_MAX;
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
        return 0;
    if (rl.rlim_cur != RLIM_INFINITY && (int64_t)rl.rlim_cur < want) {
        rlim_t to = (rlim_t)want;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < to)
            to = rl.rlim_max;
        rl.rlim_cur = to;
        (void)setrlimit(RLIMIT_MEMLOCK, &rl);
    }
    return pin_memlock_limit();
}
