/*
 * units.h - quantities with units: time, rate, size.
 *
 * Time is an int64_t count of picoseconds (2^63 ps is about 106 days of
 * simulated time).  Rates are int64_t bits per second, sizes int64_t bytes.
 * Parsing is exact: "1.5us" is 1500000 ps with no floating-point rounding;
 * a value that is not a whole number of the base unit ("0.5ps", "1.5bps")
 * or does not fit in 63 bits is rejected.
 *
 * Accepted units (case-sensitive, an optional space before the unit):
 *   time   ps ns us ms s
 *   rate   bps Kbps (kbps) Mbps Gbps Tbps              (powers of 1000)
 *   size   B KB (kB) MB GB TB (powers of 1000)  KiB MiB GiB TiB (powers of 1024)
 * A number without a unit is an error wherever a unit is required.
 */
#ifndef AISIM_UNITS_H
#define AISIM_UNITS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define PS_PER_NS INT64_C(1000)
#define PS_PER_US INT64_C(1000000)
#define PS_PER_MS INT64_C(1000000000)
#define PS_PER_S  INT64_C(1000000000000)

/* The largest time and size a scenario may give (cfg.h checks every time
 * and size key, and dist.h every distribution's values, against them).
 * Simulated time ends at 2^63-1 ps, about 106.8 days: a time of at most
 * 10^6 s (11.6 days) leaves room for the sums a model makes (time now plus
 * a delay, a flow's packets), and a size of at most 1000 TB keeps bytes x 8
 * x 10^12 / rate, a transmission time, representable at 10 Mbps and up. */
#define UNITS_TIME_CAP_PS (1000000 * PS_PER_S)
#define UNITS_TIME_CAP_TEXT "1000000s"
#define UNITS_SIZE_CAP_B  INT64_C(1000000000000000)
#define UNITS_SIZE_CAP_TEXT "1000TB"

/* x rounded to the nearest integer, saturated to [0, INT64_MAX] (NaN: 0):
 * for times and sizes drawn as doubles, so that a huge draw becomes a time
 * the engine refuses (past the end of time) instead of undefined behaviour. */
static inline int64_t units_round_sat(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 9223372036854775807.0)
        return INT64_MAX;
    return (int64_t)llround(x);
}

/* Literal converters; the argument may be fractional (rounded to nearest). */
#define NS(x)   ((int64_t)((x) * 1e3 + 0.5))
#define US(x)   ((int64_t)((x) * 1e6 + 0.5))
#define MS(x)   ((int64_t)((x) * 1e9 + 0.5))
#define SEC(x)  ((int64_t)((x) * 1e12 + 0.5))
#define KBPS(x) ((int64_t)((x) * 1e3))
#define MBPS(x) ((int64_t)((x) * 1e6))
#define GBPS(x) ((int64_t)((x) * 1e9))

enum unit_kind { UNIT_TIME, UNIT_RATE, UNIT_SIZE };

/* Parses text such as "1.5us" into the base unit of `kind`.  Returns true on
 * success.  On failure returns false and, if why is not NULL, points it at a
 * static string saying what is wrong ("missing unit", "unknown unit", ...).
 * Negative values parse (range checks belong to the caller). */
bool units_parse(enum unit_kind kind, const char *text, int64_t *out, const char **why);

/* Example text for error messages: "1.5us", "100Gbps", "64KiB". */
const char *units_example(enum unit_kind kind);

/* Formats a value with the largest unit that keeps it exact, e.g. 1500000 ps
 * as "1500ns"... or "1.5us" (shortest exact decimal).  buf >= 32 bytes. */
char *units_format(enum unit_kind kind, int64_t v, char *buf, int len);

/* Time to serialise `bytes` at `rate_bps`, in ps, rounded up. */
int64_t units_tx_time_ps(int64_t bytes, int64_t rate_bps);

/* Seconds as double, for reports. */
/* A division: the nearest double to the exact quotient, so that times print
 * as their short decimals (10 us: 1e-05, not 9.999999999999999e-06). */
static inline double ps_to_s(int64_t ps) { return (double)ps / 1e12; }

#endif
