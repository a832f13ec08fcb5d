/*
 * units.c - exact parsing and formatting of time, rate and size quantities.
 *
 * A quantity is a decimal number (optional sign, fraction and exponent) and a
 * unit.  The number is kept as an integer mantissa and a power of ten, so
 * "0.1s" becomes exactly 100000000000 ps; the result must be a whole number
 * of the base unit and fit in int64_t.  Arithmetic is in __int128.
 */
#include "aisim/units.h"

#include <stdio.h>
#include <string.h>

typedef struct unit_def {
    const char *name;
    int64_t mult;       /* base units per unit */
} unit_def;

static const unit_def time_units[] = {
    {"ps", 1}, {"ns", PS_PER_NS}, {"us", PS_PER_US}, {"ms", PS_PER_MS}, {"s", PS_PER_S},
    {NULL, 0},
};
static const unit_def rate_units[] = {
    {"bps", 1}, {"Kbps", 1000}, {"kbps", 1000}, {"Mbps", 1000000},
    {"Gbps", INT64_C(1000000000)}, {"Tbps", INT64_C(1000000000000)},
    {NULL, 0},
};
static const unit_def size_units[] = {
    {"B", 1}, {"KB", 1000}, {"kB", 1000}, {"MB", 1000000}, {"GB", INT64_C(1000000000)},
    {"TB", INT64_C(1000000000000)}, {"KiB", INT64_C(1) << 10}, {"MiB", INT64_C(1) << 20},
    {"GiB", INT64_C(1) << 30}, {"TiB", INT64_C(1) << 40},
    {NULL, 0},
};

static const unit_def *units_of(enum unit_kind k)
{
    switch (k) {
    case UNIT_TIME: return time_units;
    case UNIT_RATE: return rate_units;
    case UNIT_SIZE: return size_units;
    }
    return time_units;
}

const char *units_example(enum unit_kind k)
{
    switch (k) {
    case UNIT_TIME: return "1.5us";
    case UNIT_RATE: return "100Gbps";
    case UNIT_SIZE: return "64KiB";
    }
    return "";
}

#define MANT_MAX ((__int128)1000000000000000000 * 1000000)   /* 1e24 */

bool units_parse(enum unit_kind kind, const char *text, int64_t *out, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    const char *p = text;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = (*p++ == '-');
    __int128 mant = 0;
    int exp10 = 0, ndigits = 0;
    while (*p >= '0' && *p <= '9') {
        if (mant > MANT_MAX) { *why = "too many digits"; return false; }
        mant = mant * 10 + (*p++ - '0');
        ndigits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            if (mant > MANT_MAX) { *why = "too many digits"; return false; }
            mant = mant * 10 + (*p++ - '0');
            exp10--;
            ndigits++;
        }
    }
    if (ndigits == 0) {
        *why = "not a number";
        return false;
    }
    if ((*p == 'e' || *p == 'E') && (p[1] == '-' || p[1] == '+' || (p[1] >= '0' && p[1] <= '9'))) {
        p++;
        bool eneg = false;
        if (*p == '+' || *p == '-')
            eneg = (*p++ == '-');
        if (!(*p >= '0' && *p <= '9')) { *why = "bad exponent"; return false; }
        int e = 0;
        while (*p >= '0' && *p <= '9') {
            if (e > 1000) { *why = "exponent too large"; return false; }
            e = e * 10 + (*p++ - '0');
        }
        exp10 += eneg ? -e : e;
    }
    if (*p == ' ')
        p++;
    if (*p == '\0') {
        *why = "missing unit";
        return false;
    }
    const unit_def *u = units_of(kind);
    for (; u->name; u++)
        if (strcmp(p, u->name) == 0)
            break;
    if (!u->name) {
        *why = "unknown unit";
        return false;
    }
    __int128 v = mant * u->mult;         /* <= 1e24 * 1.1e12 < 2^127 */
    const __int128 lim = (__int128)INT64_MAX;
    for (; exp10 > 0; exp10--) {
        if (v > lim) { *why = "too large"; return false; }
        v *= 10;
    }
    for (; exp10 < 0; exp10++) {
        if (v % 10 != 0) {
            *why = kind == UNIT_TIME ? "not a whole number of picoseconds"
                 : kind == UNIT_RATE ? "not a whole number of bits per second"
                                     : "not a whole number of bytes";
            return false;
        }
        v /= 10;
    }
    if (v > lim) { *why = "too large"; return false; }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* Writes a / m with up to 3 decimals (exact by the caller's check). */
static void fmt_in(char *buf, size_t len, int neg, uint64_t a, const unit_def *u)
{
    uint64_t m = (uint64_t)u->mult;
    uint64_t whole = a / m, frac = (uint64_t)(((__int128)(a % m) * 1000) / m);
    if (frac == 0) {
        snprintf(buf, len, "%s%llu%s", neg ? "-" : "", (unsigned long long)whole, u->name);
        return;
    }
    char f[24];
    snprintf(f, sizeof f, "%03llu", (unsigned long long)frac);
    for (int i = 2; i > 0 && f[i] == '0'; i--)
        f[i] = '\0';
    snprintf(buf, len, "%s%llu.%s%s", neg ? "-" : "", (unsigned long long)whole, f, u->name);
}

char *units_format(enum unit_kind kind, int64_t v, char *buf, int len)
{
    /* The shortest exact rendering with at most 3 decimals; on a tie, the
     * larger unit.  The base unit always qualifies. */
    const unit_def *u = units_of(kind);
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (kind == UNIT_TIME && v == 0) {
        snprintf(buf, (size_t)len, "0s");
        return buf;
    }
    fmt_in(buf, (size_t)len, v < 0, a, &u[0]);
    for (const unit_def *c = u + 1; c->name && a != 0; c++) {
        uint64_t m = (uint64_t)c->mult;
        if (c->name[0] == 'k' || a < m || ((__int128)a * 1000) % m != 0)
            continue;               /* "k" spellings: print the canonical "K" */
        char cand[48];
        fmt_in(cand, sizeof cand, v < 0, a, c);
        if (strlen(cand) <= strlen(buf))
            snprintf(buf, (size_t)len, "%s", cand);
    }
    return buf;
}

int64_t units_tx_time_ps(int64_t bytes, int64_t rate_bps)
{
    __int128 num = (__int128)bytes * 8 * PS_PER_S;
    return (int64_t)((num + rate_bps - 1) / rate_bps);
}
