/*
 * test_pin.c - the real pinning library (src/real/pin): on-demand pinning
 * of a 16 MiB region (or what RLIMIT_MEMLOCK allows) locks only the touched
 * 2 MiB blocks, read back from /proc/self/status VmLck and mincore; a second
 * touch is a map-cache lookup that locks nothing; release unlocks; its start
 * locks nothing and is faster than full pinning of the same region; an mlock
 * beyond RLIMIT_MEMLOCK (in a child without CAP_IPC_LOCK) fails with a
 * message naming the limit; bad block sizes and ranges are errors.
 * `aisim calibrate pin` at 16 MiB writes a file the model's loader reads
 * back (every cost > 0, the block and size asked for); bad options exit 2;
 * without CAP_IPC_LOCK it fails with the limit named when the hard
 * RLIMIT_MEMLOCK allows less than two blocks, and raises the soft limit and
 * measures what the hard limit allows otherwise.
 * The map cache's capacity evicts the least recently used block (and
 * unlocks it), a lookup refreshes recency.  On a userfaultfd map (skipped
 * with the probe's reason where unavailable) the first CPU write to a block
 * returns only once the whole block is filled and locked, later writes to
 * it do not fault, pin_touch pins without a fault, an evicted block keeps
 * its data; under a 4 MiB RLIMIT_MEMLOCK the third block's fault reports
 * the limit and the write still completes.
 * Nothing here asserts a speed beyond "on-demand start beats full pinning".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run.h"
#include "real/pin/pin.h"
#include "systems/stellar/stellar_cal.h"
#include "testutil.h"

#define MIB ((size_t)1 << 20)
#define BLOCK (2 * MIB)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Bytes this test may lock: 16 MiB, or what RLIMIT_MEMLOCK leaves. */
static size_t budget(void)
{
    int64_t lim = pin_memlock_raise((int64_t)(16 * MIB + 8 * MIB));
    long long used = pin_vmlck_bytes();
    if (lim == INT64_MAX)
        return 16 * MIB;
    int64_t left = lim - (used > 0 ? used : 0);
    size_t b = left > 0 ? (size_t)left / BLOCK * BLOCK : 0;
    return b < 16 * MIB ? b : 16 * MIB;
}

/* Skips the test unless userfaultfd works here, saying why. */
static bool uffd_or_skip(void)
{
    char why[400];
    if (pin_uffd_probe(why, sizeof why) == 0)
        return true;
    print_message("skipped: userfaultfd unavailable: %s\n", why);
    return false;
}

static void test_map_cache_evicts_the_least_recently_used(void **state)
{
    (void)state;
    const size_t blk = 64 * 1024;
    if (budget() < 8 * blk) {
        print_message("skipped: RLIMIT_MEMLOCK allows fewer than 8 blocks\n");
        skip();
    }
    err e = {0};
    pin_map m;
    long long lck0 = pin_vmlck_bytes();
    assert_int_equal(pin_map_create(&m, 16 * blk, blk, false, false, &e), 0);
    assert_int_equal(pin_set_capacity(&m, 4), 0);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pin_touch(&m, m.base + i * blk, 1, &e), 1);
    assert_int_equal(pin_touch(&m, m.base, 1, &e), 0);          /* 0 is now most recent */
    assert_int_equal(pin_touch(&m, m.base + 4 * blk, 1, &e), 1);
    assert_true(pin_block_pinned(&m, 0) && !pin_block_pinned(&m, 1));   /* 1 was the LRU */
    assert_int_equal(m.stat_evictions, 1);
    assert_int_equal(m.stat_unpins, 1);
    assert_int_equal(m.pinned_blocks, 4);
    assert_int_equal(pin_vmlck_bytes() - lck0, (long long)(4 * blk));   /* eviction unlocked */
    assert_int_equal(pin_touch(&m, m.base + blk, 1, &e), 1);     /* back: evicts 2 */
    assert_false(pin_block_pinned(&m, 2));
    assert_true(pin_block_pinned(&m, 3));
    /* recency now 1, 4, 0, 3: shrinking to 2 evicts 3 and 0 */
    assert_int_equal(pin_set_capacity(&m, 2), 2);
    assert_true(pin_block_pinned(&m, 1) && pin_block_pinned(&m, 4));
    assert_false(pin_block_pinned(&m, 0) || pin_block_pinned(&m, 3));
    assert_int_equal(pin_vmlck_bytes() - lck0, (long long)(2 * blk));
    /* a DMA wider than the cache, and full pinning, are refused */
    assert_int_equal(pin_touch(&m, m.base, 3 * blk, &e), AISIM_ERANGE);
    assert_non_null(strstr(e.msg, "map cache holds 2"));
    assert_int_equal(pin_all(&m, &e), AISIM_EINVAL);
    pin_map_fini(&m);
    assert_int_equal(pin_vmlck_bytes(), lck0);
}

static void test_uffd_first_touch_pins_the_whole_block(void **state)
{
    (void)state;
    if (!uffd_or_skip() || budget() < 8 * MIB) {
        skip();
        return;
    }
    err e = {0};
    pin_map m;
    long long lck0 = pin_vmlck_bytes();
    assert_int_equal(pin_map_create_uffd(&m, 4 * BLOCK, BLOCK, &e), 0);
    assert_int_equal(pin_vmlck_bytes(), lck0);                  /* nothing at start */
    assert_int_equal(pin_resident_pages(m.base, m.len), 0);
    m.base[2 * BLOCK + 5000] = 7;                               /* first touch of block 2 */
    assert_int_equal(pin_uffd_error(&m, &e), 0);                /* syncs with the fault thread */
    /* the write returned: its block is filled and locked already */
    assert_int_equal(m.stat_faults, 1);
    assert_true(pin_block_pinned(&m, 2));
    assert_int_equal(pin_vmlck_bytes() - lck0, (long long)BLOCK);
    assert_int_equal(pin_resident_pages(m.base + 2 * BLOCK, BLOCK), (long)(BLOCK / 4096));
    assert_int_equal(pin_resident_pages(m.base, 2 * BLOCK), 0);
    for (size_t off = 0; off < BLOCK; off += 4096)
        m.base[2 * BLOCK + off] += 1;                           /* the rest: no fault */
    pin_uffd_error(&m, &e);
    assert_int_equal(m.stat_faults, 1);
    assert_int_equal(m.base[2 * BLOCK + 5000], 7);
    assert_int_equal(m.base[2 * BLOCK + 4096 + 1], 0);
    /* a DMA registration pins without a CPU fault */
    assert_int_equal(pin_touch(&m, m.base, 1, &e), 1);
    assert_int_equal(m.stat_faults, 1);
    assert_int_equal(pin_vmlck_bytes() - lck0, (long long)(2 * BLOCK));
    /* with room for two, the first touch of block 3 evicts block 2, whose
     * data stays */
    pin_touch(&m, m.base, 1, &e);                               /* 0 most recent */
    pin_set_capacity(&m, 2);
    m.base[3 * BLOCK] = 9;
    assert_int_equal(pin_uffd_error(&m, &e), 0);
    assert_int_equal(m.stat_faults, 2);
    assert_true(pin_block_pinned(&m, 3) && pin_block_pinned(&m, 0));
    assert_false(pin_block_pinned(&m, 2));
    assert_int_equal(m.base[2 * BLOCK + 5000], 7);
    assert_int_equal(m.base[2 * BLOCK + 4096], 1);
    assert_int_equal(pin_vmlck_bytes() - lck0, (long long)(2 * BLOCK));
    assert_int_equal(pin_uffd_error(&m, &e), 0);
    pin_map_fini(&m);
    assert_int_equal(pin_vmlck_bytes(), lck0);
}

static void test_on_demand_pins_only_touched_blocks(void **state)
{
    (void)state;
    size_t len = budget();
    if (len < 4 * BLOCK) {
        print_message("skipped: RLIMIT_MEMLOCK (%lld bytes) allows fewer than 4 blocks and "
                      "the process has no CAP_IPC_LOCK\n", (long long)pin_memlock_limit());
        skip();
    }
    err e = {0};
    pin_map m;
    long long lck0 = pin_vmlck_bytes();
    assert_true(lck0 >= 0);
    double t0 = now_s();
    assert_int_equal(pin_map_create(&m, len, BLOCK, false, false, &e), 0);
    double start_ondemand = now_s() - t0;
    assert_int_equal(pin_vmlck_bytes(), lck0);          /* nothing pinned at start */
    assert_int_equal(pin_resident_pages(m.base, m.len), 0);
    /* touch every 4th block, with ranges that straddle no boundary, and one
     * 3-byte range across the boundary of blocks 1 and 2 */
    size_t touched = 0;
    for (size_t i = 0; i < m.nblocks; i += 4) {
        assert_int_equal(pin_touch(&m, m.base + i * BLOCK + 100, 4096, &e), 1);
        touched++;
    }
    assert_int_equal(pin_touch(&m, m.base + 2 * BLOCK - 1, 3, &e), 2);
    touched += 2;
    long long lck1 = pin_vmlck_bytes();
    print_message("region %zu MiB: %zu blocks touched, VmLck +%lld KiB, resident %ld pages\n",
                  len / MIB, touched, (lck1 - lck0) / 1024, pin_resident_pages(m.base, m.len));
    assert_int_equal(lck1 - lck0, (long long)(touched * BLOCK));
    assert_int_equal(pin_pinned_bytes(&m), touched * BLOCK);
    assert_int_equal(pin_resident_pages(m.base, m.len), (long)(touched * BLOCK / 4096));
    assert_true(pin_block_pinned(&m, 0) && pin_block_pinned(&m, 1) && !pin_block_pinned(&m, 3));
    /* idempotent: a re-touch is a lookup */
    uint64_t look0 = m.stat_lookups;
    assert_int_equal(pin_touch(&m, m.base, 2 * BLOCK, &e), 0);
    assert_int_equal(m.stat_lookups, look0 + 2);
    assert_int_equal(pin_vmlck_bytes(), lck1);
    /* release: a range that covers block 0 and half of block 1 unlocks block 0 only */
    assert_int_equal(pin_release(&m, m.base, BLOCK + BLOCK / 2, &e), 1);
    assert_int_equal(pin_vmlck_bytes(), lck1 - (long long)BLOCK);
    assert_int_equal(pin_release(&m, m.base, m.len, &e), (long)touched - 1);
    assert_int_equal(pin_vmlck_bytes(), lck0);
    pin_map_fini(&m);

    /* full pinning of the same size locks everything before the first DMA */
    assert_int_equal(pin_map_create(&m, len, BLOCK, false, false, &e), 0);
    t0 = now_s();
    assert_int_equal(pin_all(&m, &e), 0);
    double full = now_s() - t0;
    assert_int_equal(pin_vmlck_bytes() - lck0, (long long)len);
    assert_int_equal(pin_touch(&m, m.base + 5, 10, &e), 0);
    pin_map_fini(&m);
    assert_int_equal(pin_vmlck_bytes(), lck0);
    print_message("start: on-demand %.6f s, full pinning %.3f s (%.2f GiB/s)\n", start_ondemand,
                  full, (double)len / (1 << 30) / full);
    assert_true(start_ondemand < full);
}

/* In a child: drops CAP_IPC_LOCK and sets the soft RLIMIT_MEMLOCK to
 * `limit` (or the hard limit if lower), and the hard limit too if
 * `hard`.  Returns 0 or an exit code. */
static int drop_ipc_lock(size_t limit, bool hard, struct rlimit *rl)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) == 0) {
        d[0].effective &= ~(1u << CAP_IPC_LOCK);
        d[0].permitted &= ~(1u << CAP_IPC_LOCK);
        if (syscall(SYS_capset, &h, d) != 0)
            return 10;
    }
    if (pin_has_ipc_lock())
        return 11;
    getrlimit(RLIMIT_MEMLOCK, rl);
    rl->rlim_cur = limit;
    if (rl->rlim_max != RLIM_INFINITY && rl->rlim_max < rl->rlim_cur)
        rl->rlim_cur = rl->rlim_max;
    if (hard)
        rl->rlim_max = rl->rlim_cur;
    return setrlimit(RLIMIT_MEMLOCK, rl) != 0 ? 12 : 0;
}

/* Runs fn in a child and returns its exit status. */
static int in_child(int (*fn)(void))
{
    fflush(NULL);
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0)
        _exit(fn());
    int st;
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* In a child under a 4 MiB limit: the third 2 MiB block must fail with a
 * message naming the limit.  Exit 0 if so. */
static int child_over_limit(void)
{
    struct rlimit rl;
    int r = drop_ipc_lock(4 * MIB, false, &rl);
    if (r)
        return r;
    err e = {0};
    pin_map m;
    if (pin_map_create(&m, 16 * MIB, BLOCK, false, false, &e))
        return 13;
    long ok = 0;
    while ((size_t)ok < m.nblocks && pin_touch(&m, m.base + (size_t)ok * BLOCK, 1, &e) >= 0)
        ok++;
    fprintf(stderr, "child: %ld blocks pinned under a %llu-byte limit; %s\n", ok,
            (unsigned long long)rl.rlim_cur, e.msg);
    int bad = ok >= (long)(rl.rlim_cur / BLOCK) + 1 || e.code != AISIM_EIO ||
              !strstr(e.msg, "RLIMIT_MEMLOCK") || !strstr(e.msg, "CAP_IPC_LOCK");
    /* full pinning fails the same way and records nothing */
    pin_map m2;
    if (pin_map_create(&m2, 16 * MIB, BLOCK, false, false, &e) || pin_all(&m2, &e) >= 0 ||
        m2.pinned_blocks != 0 || !strstr(e.msg, "RLIMIT_MEMLOCK"))
        bad = 1;
    pin_map_fini(&m2);
    pin_map_fini(&m);
    /* on first touch: the third block's fault reports the limit, and the
     * write still completes (unpinned) */
    char why[400];
    if (!bad && pin_uffd_probe(why, sizeof why) == 0) {
        err e3 = {0};
        if (pin_map_create_uffd(&m, 16 * MIB, BLOCK, &e3))
            return 15;
        for (size_t i = 0; i < 3; i++)
            m.base[i * BLOCK] = (uint8_t)(i + 1);
        int ru = pin_uffd_error(&m, &e3);
        fprintf(stderr, "child (userfaultfd): %zu blocks pinned; %s\n", m.pinned_blocks, e3.msg);
        bad = ru != AISIM_EIO || !strstr(e3.msg, "RLIMIT_MEMLOCK") || m.pinned_blocks != 2 ||
              m.base[2 * BLOCK] != 3;
        pin_map_fini(&m);
    }
    return bad ? 14 : 0;
}

static void test_over_memlock_limit_is_a_clear_error(void **state)
{
    (void)state;
    assert_int_equal(in_child(child_over_limit), 0);
}

/* `aisim calibrate pin` in a child without CAP_IPC_LOCK: with a hard
 * RLIMIT_MEMLOCK of 1 MiB it fails (exit 1: not even two blocks); with a
 * soft limit of 1 MiB it raises it to the hard limit and measures up to what
 * that allows (at most the 64 MiB asked for). */
static int calibrate_limited(bool hard)
{
    struct rlimit rl;
    int r = drop_ipc_lock(1 * MIB, hard, &rl);
    if (r)
        return r;
    char path[128];
    snprintf(path, sizeof path, "%s/pincal-lim-%d.yml", tu_tmp, (int)getpid());
    char *argv[] = {"calibrate", "--max-size", "64MiB", "--out", path, "pin", NULL};
    int rc = cli_calibrate(6, argv);
    if (hard)
        return rc == EXIT_RUN_FAILED ? 0 : 20;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 2 * BLOCK)
        return rc == EXIT_RUN_FAILED ? 0 : 21;
    stellar_cal cal;
    err e = {0};
    if (rc != EXIT_OK || stellar_cal_load(path, &cal, &e))
        return 22;
    unlink(path);
    if (cal.max_bytes < (int64_t)BLOCK || cal.max_bytes > (int64_t)(64 * MIB) ||
        (rl.rlim_max != RLIM_INFINITY && cal.max_bytes > (int64_t)rl.rlim_max))
        return 23;
    return 0;
}

static int calibrate_hard_limit(void) { return calibrate_limited(true); }
static int calibrate_soft_limit(void) { return calibrate_limited(false); }

static void test_calibrate_under_a_small_limit(void **state)
{
    (void)state;
    assert_int_equal(in_child(calibrate_hard_limit), 0);
    assert_int_equal(in_child(calibrate_soft_limit), 0);
}

static void test_bad_blocks_and_ranges(void **state)
{
    (void)state;
    err e = {0};
    pin_map m;
    assert_int_equal(pin_map_create(&m, 8 * MIB, 3 * MIB, false, false, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "power of two"));
    assert_int_equal(pin_map_create(&m, 8 * MIB, 512, false, false, &e), AISIM_EINVAL);
    assert_int_equal(pin_map_create(&m, 0, BLOCK, false, false, &e), AISIM_EINVAL);
    assert_int_equal(pin_map_create(&m, 3 * MIB, BLOCK, true, true, &e), 0);
    assert_int_equal(m.nblocks, 2);                     /* rounded up to whole blocks */
    assert_int_equal((uintptr_t)m.base % BLOCK, 0);
    assert_int_equal(pin_touch(&m, m.base + m.len, 1, &e), AISIM_ERANGE);
    assert_int_equal(pin_touch(&m, m.base - 1, 2, &e), AISIM_ERANGE);
    assert_int_equal(pin_touch(&m, m.base, 0, &e), AISIM_ERANGE);
    assert_int_equal(pin_release(&m, m.base + 1, m.len, &e), AISIM_ERANGE);
    assert_int_equal(m.pinned_blocks, 0);
    pin_map_fini(&m);
    pin_map_fini(&m);                                   /* harmless twice */
    char buf[64];
    assert_int_equal(pin_map_init(&m, buf + 1, 4096, 4096, &e), AISIM_EINVAL);
}

static void test_calibrate_writes_a_file_the_model_reads(void **state)
{
    (void)state;
    if (budget() < 16 * MIB) {
        print_message("skipped: RLIMIT_MEMLOCK allows less than 16 MiB\n");
        skip();
    }
    char path[128];
    snprintf(path, sizeof path, "%s/pincal.yml", tu_tmp);
    char *argv[] = {"calibrate", "--max-size", "16MiB", "--out", path, "pin", NULL};
    assert_int_equal(cli_calibrate(6, argv), EXIT_OK);
    stellar_cal cal;
    err e = {0};
    assert_int_equal(stellar_cal_load(path, &cal, &e), 0);
    unlink(path);
    assert_int_equal(cal.block_bytes, (int64_t)BLOCK);
    assert_int_equal(cal.max_bytes, (int64_t)(16 * MIB));
    assert_int_equal(cal.repeats, 5);
    assert_true(cal.pin_per_gib_ps > 0 && cal.block_pin_ps > 0 && cal.lookup_ps > 0);
    for (int k = 0; k < STELLAR_CAL_NCOSTS; k++)
        assert_true(cal.min_ps[k] <= cal.med_ps[k] && cal.med_ps[k] <= cal.max_ps[k]);
    char why[400];
    if (pin_uffd_probe(why, sizeof why) == 0) {
        assert_string_equal(cal.uffd, "available");
        assert_true(cal.med_ps[STELLAR_CAL_FAULT_PIN] > 0 && cal.med_ps[STELLAR_CAL_PAGE_FAULT] > 0);
    } else {
        assert_non_null(strstr(cal.uffd, "unavailable: "));
        assert_int_equal(cal.max_ps[STELLAR_CAL_FAULT_PIN], 0);
    }
    assert_true(cal.repin_ps > 0);
    assert_non_null(strstr(cal.host, "CAP_IPC_LOCK"));
    char *bad4[] = {"calibrate", "--repeat", "4", "pin", NULL};
    assert_int_equal(cli_calibrate(4, bad4), EXIT_BAD_INPUT);
    char *bad1[] = {"calibrate", "--block", "3MiB", "pin", NULL};
    assert_int_equal(cli_calibrate(4, bad1), EXIT_BAD_INPUT);
    char *bad2[] = {"calibrate", "mem", NULL};
    assert_int_equal(cli_calibrate(2, bad2), EXIT_BAD_INPUT);
    char *bad3[] = {"calibrate", "--max-size", "0B", "pin", NULL};
    assert_int_equal(cli_calibrate(4, bad3), EXIT_BAD_INPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_demand_pins_only_touched_blocks),
        cmocka_unit_test(test_over_memlock_limit_is_a_clear_error),
        cmocka_unit_test(test_bad_blocks_and_ranges),
        cmocka_unit_test(test_map_cache_evicts_the_least_recently_used),
        cmocka_unit_test(test_uffd_first_touch_pins_the_whole_block),
        cmocka_unit_test(test_calibrate_writes_a_file_the_model_reads),
        cmocka_unit_test(test_calibrate_under_a_small_limit),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
