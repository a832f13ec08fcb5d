/*
 * calibrate.c - `aisim calibrate pin`: measures the real pinning library
 * (src/real/pin) on this machine and writes the calibration file the
 * Stellar start-up model reads (`stellar.pin_calibration`; format in
 * src/systems/stellar/stellar_cal.h).
 *
 * Measured, always on fresh anonymous memory (a first pin faults in and
 * zeroes every page, as pinning a new container's RAM does):
 *   full pinning   one mlock of regions of 64 MiB, 128 MiB, ... up to
 *                  --max-size; time per GiB = least-squares slope of time
 *                  against size through the origin;
 *   on demand      the first touch of every block of a --max-size region,
 *                  in address order: time per block;
 *   lookup         touches of blocks already pinned: time per touch;
 *   unpin          releasing the whole region: time per GiB.
 * RLIMIT_MEMLOCK is raised where the hard limit allows; if less than
 * --max-size may be locked, the sizes stop at what may, and the command says
 * so; if not even two blocks may, it fails with the limit in the message.
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
    "usage: aisim calibrate pin [--max-size SIZE] [--block SIZE] [--huge] [--out FILE]\n"

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

/* Seconds to pin a fresh region of `len` bytes in full, or < 0 on error. */
static double time_full(size_t len, size_t block, bool huge, err *e)
{
    pin_map m;
    if (pin_map_create(&m, len, block, false, huge, e))
        return -1;
    double t0 = wall_now();
    int r = pin_all(&m, e);
    double t = wall_now() - t0;
    pin_map_fini(&m);
    return r ? -1 : t;
}

static int measure(size_t max, size_t block, bool huge, stellar_cal *cal, err *e)
{
    const double gib = (double)(1 << 30);
    double sxy = 0, sxx = 0;
    printf("  %-12s %10s %10s\n", "full pin", "seconds", "GiB/s");
    for (size_t len = 64 << 20 < max ? (size_t)64 << 20 : max;; len *= 2) {
        if (len > max)
            len = max;
        double t = time_full(len, block, huge, e);
        if (t < 0)
            return e->code;
        printf("  %9.0f MiB %10.4f %10.3f\n", (double)len / (1 << 20), t, (double)len / gib / t);
        sxy += (double)len / gib * t;
        sxx += ((double)len / gib) * ((double)len / gib);
        if (len == max)
            break;
    }
    cal->pin_per_gib_ps = (int64_t)(sxy / sxx * 1e12);
    pin_map m;
    if (pin_map_create(&m, max, block, false, huge, e))
        return e->code;
    double t0 = wall_now();
    for (size_t i = 0; i < m.nblocks; i++)
        if (pin_touch(&m, m.base + i * block, 1, e) < 0) {
            pin_map_fini(&m);
            return e->code;
        }
    double first = wall_now() - t0;
    size_t rounds = (4u << 20) / m.nblocks + 1, n = 0;
    t0 = wall_now();
    for (size_t k = 0; k < rounds; k++)
        for (size_t i = 0; i < m.nblocks; i++, n++)
            pin_touch(&m, m.base + i * block + k % block, 1, e);
    double look = wall_now() - t0;
    t0 = wall_now();
    pin_release(&m, m.base, m.len, e);
    double unpin = wall_now() - t0;
    cal->block_pin_ps = (int64_t)(first / (double)m.nblocks * 1e12);
    cal->lookup_ps = (int64_t)(look / (double)n * 1e12);
    cal->unpin_per_gib_ps = (int64_t)(unpin / ((double)m.len / gib) * 1e12);
    printf("  on demand: %zu blocks of %zu KiB, first touch %.1f us each (%.3f GiB/s); "
           "lookup %.1f ns; unpin %.3f s/GiB\n", m.nblocks, block / 1024,
           first / (double)m.nblocks * 1e6, (double)m.len / gib / first, look / (double)n * 1e9,
           unpin / ((double)m.len / gib));
    pin_map_fini(&m);
    return 0;
}

int cli_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"max-size", required_argument, 0, 'm'}, {"block", required_argument, 0, 'b'},
        {"out", required_argument, 0, 'o'},      {"huge", no_argument, 0, 'H'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    int64_t max = (int64_t)1 << 30, block = 2 << 20;
    const char *outp = "pin-calibration.yml";
    bool huge = false;
    int c, r;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "m:b:o:Hh", opts, NULL)) != -1) {
        switch (c) {
        case 'm': if ((r = parse_size("--max-size", optarg, &max))) return r; break;
        case 'b': if ((r = parse_size("--block", optarg, &block))) return r; break;
        case 'o': outp = optarg; break;
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
    stellar_cal cal = {.block_bytes = block, .max_bytes = max};
    snprintf(cal.host, sizeof cal.host, "%s %s %s, %ld CPUs, %s, THP %s, CAP_IPC_LOCK %s",
             u.sysname, u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN), day,
             huge ? "madvise" : "off", pin_has_ipc_lock() ? "yes" : "no");
    printf("aisim calibrate pin: up to %lld MiB, %lld KiB blocks, %s\n", (long long)max >> 20,
           (long long)block >> 10, huge ? "transparent huge pages" : "4 KiB pages");
    err e = {0};
    if ((r = measure((size_t)max, (size_t)block, huge, &cal, &e))) {
        fprintf(stderr, "aisim calibrate: %s\n", e.msg);
        return EXIT_RUN_FAILED;
    }
    FILE *f = fopen(outp, "w");
    if (!f) {
        perror(outp);
        return EXIT_RUN_FAILED;
    }
    r = stellar_cal_write(f, &cal, "written by `aisim calibrate pin` (src/cli/calibrate.c):\n"
                                   "real mlock pinning measured on the machine named in host;\n"
                                   "read by the Stellar model as stellar.pin_calibration");
    if (fclose(f) || r) {
        fprintf(stderr, "aisim calibrate: cannot write %s\n", outp);
        return EXIT_RUN_FAILED;
    }
    printf("full pinning %.3f GiB/s (%.4f s per GiB); written to %s\n",
           1e12 / (double)cal.pin_per_gib_ps, (double)cal.pin_per_gib_ps * 1e-12, outp);
    return EXIT_OK;
}
