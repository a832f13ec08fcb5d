/*
 * calibrate.c - `aisim calibrate pin`: measures the real pinning library
 * (src/real/pin) on this machine and writes the calibration file the
 * Stellar start-up model reads (`stellar.pin_calibration`; format in
 * src/systems/stellar/stellar_cal.h).
 *
 * The start-up benchmark: --repeat times (at least 5), each on fresh
 * anonymous memory of --max-size bytes (a first pin faults in and zeroes
 * every page, as pinning a new container's RAM does):
 *   full pinning   map the region and mlock it whole: time per GiB;
 *   on demand      map the region (ready_on_demand), then pin_touch the first
 *                  byte of every block in address order (block_pin, per
 *                  block), touch every block again 8 times (lookup), release
 *                  it (unpin_per_gib);
 *   first touch    a userfaultfd map: the program writes one byte of every
 *                  4 KiB page in address order; the first write of a block
 *                  faults and the fault thread pins the block (fault_pin,
 *                  per block); with 4 KiB blocks on at most 16 MiB, every
 *                  page faults (page_fault);
 *   eviction       a map cache of half the blocks, every block touched twice
 *                  in address order: every touch evicts the least recently
 *                  used block and pins again a block pinned before (repin).
 * Each figure is written as the median with the smallest and largest of
 * the repetitions; the three ways take turns going first.  Where
 * userfaultfd cannot be used the file says why and
 * its fault costs are 0.  RLIMIT_MEMLOCK is raised where the hard limit
 * allows; if less than --max-size may be locked, the size stops at what
 * may, and the command says so; if not even two blocks may, it fails with
 * the limit in the message.  Every loop runs a fixed count.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "aisim/units.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "real/pin/pin.h"
#include "systems/stellar/stellar_cal.h"

#define CAL_USAGE                                                                           \
    "usage: aisim calibrate pin [--max-size SIZE] [--block SIZE] [--repeat N] [--huge] "     \
    "[--out FILE]\n"

/* The userfaultfd measurements run on at most this much with 4 KiB blocks. */
#define CAL_PAGE_REGION ((size_t)16 << 20)
#define CAL_MAX_REPEAT 1000

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_size(const char *opt, const char *text, int64_t *v)
{
    const char *why;
    if (!units_parse(UNIT_SIZE, text, v, &why) || *v <= 0) {
        fprintf(stderr, "aisim calibrate: %s: expected a size such as 1GiB, found \"%s\"\n%s",
                opt, text, CAL_USAGE);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median, min and max of v[0..n) (sorted in place), seconds, into cal as ps. */
static void put_stat(stellar_cal *cal, int k, double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    cal->med_ps[k] = (int64_t)(med * 1e12);
    cal->min_ps[k] = (int64_t)(v[0] * 1e12);
    cal->max_ps[k] = (int64_t)(v[n - 1] * 1e12);
}

/* Full pinning of a fresh region: seconds per GiB into t. */
static int measure_full(size_t len, size_t block, bool huge, double *t, err *e)
{
    pin_map m;
    if (pin_map_create(&m, len, block, false, huge, e))
        return e->code;
    double t0 = wall_now();
    int r = pin_all(&m, e);
    t[STELLAR_CAL_PIN_PER_GIB] = (wall_now() - t0) / ((double)m.len / (double)(1 << 30));
    pin_map_fini(&m);
    return r;
}

/* On demand through pin_touch: ready, first touch, lookups, release and
 * eviction, into t. */
static int measure_touch(size_t len, size_t block, bool huge, double *t, err *e)
{
    const double gib = (double)(1 << 30);
    pin_map m;
    int r = 0;
    double t0 = wall_now();
    if (pin_map_create(&m, len, block, false, huge, e))
        return e->code;
    t[STELLAR_CAL_READY_ON_DEMAND] = wall_now() - t0;
    t0 = wall_now();
    for (size_t i = 0; i < m.nblocks && !r; i++)
        r = pin_touch(&m, m.base + i * block, 1, e) < 0 ? e->code : 0;
    t[STELLAR_CAL_BLOCK_PIN] = (wall_now() - t0) / (double)m.nblocks;
    size_t n = 0;
    t0 = wall_now();
    for (size_t k = 0; k < 8 && !r; k++)
        for (size_t i = 0; i < m.nblocks; i++, n++)
            pin_touch(&m, m.base + i * block + k * 64, 1, e);
    t[STELLAR_CAL_LOOKUP] = n ? (wall_now() - t0) / (double)n : 0;
    t0 = wall_now();
    if (!r)
        pin_release(&m, m.base, m.len, e);
    t[STELLAR_CAL_UNPIN_PER_GIB] = (wall_now() - t0) / ((double)m.len / gib);
    /* eviction: half the blocks fit, two passes in address order */
    if (!r && m.nblocks >= 2) {
        pin_set_capacity(&m, m.nblocks / 2);
        for (size_t i = 0; i < m.nblocks && !r; i++)         /* warm: every block resident */
            r = pin_touch(&m, m.base + i * block, 1, e) < 0 ? e->code : 0;
        uint64_t ev0 = m.stat_evictions;
        t0 = wall_now();
        for (size_t i = 0; i < m.nblocks && !r; i++)
            r = pin_touch(&m, m.base + i * block, 1, e) < 0 ? e->code : 0;
        uint64_t ev = m.stat_evictions - ev0;
        t[STELLAR_CAL_REPIN] = ev ? (wall_now() - t0) / (double)ev : 0;
    }
    pin_map_fini(&m);
    return r;
}

/* On first touch through userfaultfd: per block, then per 4 KiB page. */
static int measure_uffd(size_t len, size_t block, double *t, err *e)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int pass = 0; pass < 2; pass++) {
        size_t l = pass ? (len < CAL_PAGE_REGION ? len : CAL_PAGE_REGION) : len;
        pin_map m;
        if (pin_map_create_uffd(&m, l, pass ? page : block, e))
            return e->code;
        double t0 = wall_now();
        for (size_t off = 0; off < m.len; off += page)
            m.base[off] = 1;
        double dt = wall_now() - t0;
        int r = pin_uffd_error(&m, e);
        if (!r && m.pinned_blocks != m.nblocks)
            r = ERR(e, AISIM_EIO, "userfaultfd: %zu of %zu blocks pinned after the first "
                                  "touch", m.pinned_blocks, m.nblocks);
        t[pass ? STELLAR_CAL_PAGE_FAULT : STELLAR_CAL_FAULT_PIN] = dt / (double)m.nblocks;
        pin_map_fini(&m);
        if (r)
            return r;
    }
    return 0;
}

/* One repetition: every figure of the benchmark, seconds, into t.  The
 * three ways run in an order that rotates with the repetition, so that none
 * always gets the memory the machine has not backed yet (in a VM the first
 * touch of guest memory its host never backed costs a host fault too). */
static int measure_once(int rep, size_t len, size_t block, bool huge, bool uffd, double *t,
                        err *e)
{
    int r = 0;
    for (int k = 0; k < 3 && !r; k++)
        switch ((rep + k) % 3) {
        case 0: r = measure_full(len, block, huge, t, e); break;
        case 1: r = measure_touch(len, block, huge, t, e); break;
        default: r = uffd ? measure_uffd(len, block, t, e) : 0; break;
        }
    return r;
}

static int measure(size_t max, size_t block, bool huge, int reps, stellar_cal *cal, err *e)
{
    char why[400];
    bool uffd = pin_uffd_probe(why, sizeof why) == 0;
    if (uffd)
        snprintf(cal->uffd, sizeof cal->uffd, "available");
    else {
        snprintf(cal->uffd, sizeof cal->uffd, "unavailable: %s", why);
        printf("  userfaultfd unavailable (%s): first-touch pinning not measured; on-demand "
               "pinning measured through pin_touch only\n", why);
    }
    double *v = xcalloc((size_t)reps * STELLAR_CAL_NCOSTS, sizeof *v);
    int r = 0;
    for (int i = 0; i < reps && !r; i++) {
        double t[STELLAR_CAL_NCOSTS] = {0};
        r = measure_once(i, max, block, huge, uffd, t, e);
        for (int k = 0; k < STELLAR_CAL_NCOSTS; k++)
            v[(size_t)k * (size_t)reps + (size_t)i] = t[k];
        if (!r)
            printf("  repetition %d: full %.3f s/GiB, block pin %.1f us, first-touch block "
                   "%.1f us, 4 KiB fault %.1f us, re-pin %.1f us, lookup %.1f ns\n", i + 1,
                   t[STELLAR_CAL_PIN_PER_GIB], t[STELLAR_CAL_BLOCK_PIN] * 1e6,
                   t[STELLAR_CAL_FAULT_PIN] * 1e6, t[STELLAR_CAL_PAGE_FAULT] * 1e6,
                   t[STELLAR_CAL_REPIN] * 1e6, t[STELLAR_CAL_LOOKUP] * 1e9);
    }
    for (int k = 0; k < STELLAR_CAL_NCOSTS && !r; k++)
        put_stat(cal, k, v + (size_t)k * (size_t)reps, (size_t)reps);
    free(v);
    return r;
}

int cli_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"max-size", required_argument, 0, 'm'}, {"block", required_argument, 0, 'b'},
        {"out", required_argument, 0, 'o'},      {"huge", no_argument, 0, 'H'},
        {"repeat", required_argument, 0, 'r'},   {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int64_t max = (int64_t)1 << 30, block = 2 << 20;
    const char *outp = "pin-calibration.yml";
    bool huge = false;
    int c, r;
    long reps = 5;
    char *end;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "m:b:o:r:Hh", opts, NULL)) != -1) {
        switch (c) {
        case 'm': if ((r = parse_size("--max-size", optarg, &max))) return r; break;
        case 'b': if ((r = parse_size("--block", optarg, &block))) return r; break;
        case 'o': outp = optarg; break;
        case 'r':
            reps = strtol(optarg, &end, 10);
            if (*end || end == optarg || reps < 5 || reps > CAL_MAX_REPEAT) {
                fprintf(stderr, "aisim calibrate: --repeat: expected a whole number from 5 to "
                                "%d (a median and a spread need repetitions), found \"%s\"\n%s",
                        CAL_MAX_REPEAT, optarg, CAL_USAGE);
                return EXIT_BAD_INPUT;
            }
            break;
        case 'H': huge = true; break;
        case 'h': printf(CAL_USAGE); return EXIT_OK;
        default:
            fprintf(stderr, "aisim calibrate: unknown or incomplete option \"%s\"\n%s",
                    argv[optind - 1], CAL_USAGE);
            return EXIT_BAD_INPUT;
        }
    }
    if (optind != argc - 1 || strcmp(argv[optind], "pin") != 0) {
        fprintf(stderr, "aisim calibrate: expected the target \"pin\"\n%s", CAL_USAGE);
        return EXIT_BAD_INPUT;
    }
    if (block & (block - 1) || block < 4096) {
        fprintf(stderr, "aisim calibrate: --block: expected a power of two of at least 4KiB, "
                        "found %lld bytes\n", (long long)block);
        return EXIT_BAD_INPUT;
    }
    max = max / block * block;
    int64_t may = pin_memlock_raise(max + block);
    long long held = pin_vmlck_bytes();
    if (may != INT64_MAX) {
        int64_t left = (may - (held > 0 ? held : 0)) / block * block;
        if (left < 2 * block) {
            fprintf(stderr, "aisim calibrate: RLIMIT_MEMLOCK allows %lld KiB of locked memory "
                            "and the process has no CAP_IPC_LOCK: not even two %lld-KiB blocks; "
                            "raise it (ulimit -l, limits.conf memlock) or run with "
                            "CAP_IPC_LOCK\n", (long long)may / 1024, (long long)block / 1024);
            return EXIT_RUN_FAILED;
        }
        if (left < max) {
            printf("RLIMIT_MEMLOCK allows %lld MiB: measuring up to that instead of %lld MiB\n",
                   (long long)left >> 20, (long long)max >> 20);
            max = left;
        }
    }
    if (max < block)
        max = block;
    struct utsname u;
    uname(&u);
    time_t now = time(NULL);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    stellar_cal cal = {.block_bytes = block, .max_bytes = max, .repeats = reps};
    snprintf(cal.host, sizeof cal.host, "%s %s %s, %ld CPUs, %s, THP %s, CAP_IPC_LOCK %s",
             u.sysname, u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN), day,
             huge ? "madvise" : "off", pin_has_ipc_lock() ? "yes" : "no");
    printf("aisim calibrate pin: %lld MiB of fresh memory, %lld KiB blocks, %s, %ld "
           "repetitions\n", (long long)max >> 20, (long long)block >> 10,
           huge ? "transparent huge pages" : "4 KiB pages", reps);
    err e = {0};
    if ((r = measure((size_t)max, (size_t)block, huge, (int)reps, &cal, &e))) {
        fprintf(stderr, "aisim calibrate: %s\n", e.msg);
        return EXIT_RUN_FAILED;
    }
    FILE *f = fopen(outp, "w");
    if (!f) {
        perror(outp);
        return EXIT_RUN_FAILED;
    }
    r = stellar_cal_write(f, &cal, "written by `aisim calibrate pin` (src/cli/calibrate.c):\n"
                                   "real pinning (mlock; userfaultfd first touch) measured on\n"
                                   "the machine named in host: medians of `repeats` runs\n"
                                   "with their min and max;\n"
                                   "read by the Stellar model as stellar.pin_calibration");
    if (fclose(f) || r) {
        fprintf(stderr, "aisim calibrate: cannot write %s\n", outp);
        return EXIT_RUN_FAILED;
    }
    printf("full pinning %.4f s per GiB (min %.4f, max %.4f), median of %ld; first touch of "
           "a block %.1f us on demand (pin_touch), %.1f us through userfaultfd; written to %s\n",
           (double)cal.med_ps[STELLAR_CAL_PIN_PER_GIB] * 1e-12,
           (double)cal.min_ps[STELLAR_CAL_PIN_PER_GIB] * 1e-12,
           (double)cal.max_ps[STELLAR_CAL_PIN_PER_GIB] * 1e-12, reps,
           (double)cal.med_ps[STELLAR_CAL_BLOCK_PIN] * 1e-6,
           (double)cal.med_ps[STELLAR_CAL_FAULT_PIN] * 1e-6, outp);
    return EXIT_OK;
}
