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

#include <stdbool.h>
#include <stdint.h>

#define PS_PER_NS INT64_C(1000)
#define PS_PER_US INT64_C(1000000)
#define PS_PER_MS INT64_C(1000000000)
#define PS_PER_S  INT64_C(1000000000000)

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
const char *units_kind_name(enum unit_kind kind);   /* "time", "rate", "size" */

/* Formats a value with the largest unit that keeps it exact, e.g. 1500000 ps
 * as "1500ns"... or "1.5us" (shortest exact decimal).  buf >= 32 bytes. */
char *units_format(enum unit_kind kind, int64_t v, char *buf, int len);

/* Time to serialise `bytes` at `rate_bps`, in ps, rounded up. */
int64_t units_tx_time_ps(int64_t bytes, int64_t rate_bps);

/* Seconds as double, for reports. */
static inline double ps_to_s(int64_t ps) { return (double)ps * 1e-12; }

#endif
