/*
 * stellar_cal.c - reading and writing the pin calibration file (format in
 * stellar_cal.h), through the scenario schema machinery of cfg.h.
 */
#include "systems/stellar/stellar_cal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "aisim/cfg.h"
#include "aisim/units.h"

typedef struct cal_bind {
    stellar_cal c;
    const char *host;
} cal_bind;

#define C(x) offsetof(cal_bind, c.x)

static const cfg_key cal_keys[] = {
    {.name = "block", .type = CFG_SIZE, .off = C(block_bytes), .flags = CFG_MIN, .min = 4096,
     .help = "on-demand pinning granularity measured (a power of two)"},
    {.name = "pin_per_gib", .type = CFG_TIME, .off = C(pin_per_gib_ps),
     .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0, .help = "full pinning of fresh memory, per GiB"},
    {.name = "block_pin", .type = CFG_TIME, .off = C(block_pin_ps),
     .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0, .help = "first touch of one block (on demand)"},
    {.name = "lookup", .type = CFG_TIME, .off = C(lookup_ps), .flags = CFG_MIN, .min = 0,
     .help = "touch of a block already pinned (map-cache hit)"},
    {.name = "unpin_per_gib", .type = CFG_TIME, .off = C(unpin_per_gib_ps), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "unpinning, per GiB"},
    {.name = "max_size", .type = CFG_SIZE, .off = C(max_bytes), .def = "0B", .flags = CFG_MIN,
     .min = 0, .help = "largest region measured"},
    {.name = "host", .type = CFG_STR, .off = offsetof(cal_bind, host), .flags = CFG_OPTIONAL,
     .help = "where and when it was measured"},
    {0},
};

int stellar_cal_load(const char *path, stellar_cal *cal, err *e)
{
    cfg_doc *d;
    int r = cfg_load_file(path, &d, e);
    if (r)
        return r;
    cfg_node *root = cfg_root(d), *n = root ? cfg_get(root, "pin_calibration") : NULL;
    cal_bind b;
    memset(&b, 0, sizeof b);
    char found[64];
    if (!root || cfg_kind(root) != CFG_MAP || cfg_len(root) != 1 || !n) {
        r = root ? cfg_err(e, AISIM_EINVAL, root, "(root)",
                           "expected a calibration file with one map pin_calibration "
                           "(written by aisim calibrate pin), found %s",
                           cfg_describe(root, found, sizeof found))
                 : ERR(e, AISIM_EINVAL, "%s: expected a calibration file with one map "
                                        "pin_calibration, found an empty file", path);
        goto out;
    }
    if ((r = cfg_bind(n, "pin_calibration", cal_keys, &b, e)))
        goto out;
    if (b.c.block_bytes & (b.c.block_bytes - 1)) {
        r = cfg_err(e, AISIM_EINVAL, cfg_get(n, "block"), "pin_calibration.block",
                    "expected a power of two, found %s",
                    units_format(UNIT_SIZE, b.c.block_bytes, found, sizeof found));
        goto out;
    }
    *cal = b.c;
    snprintf(cal->host, sizeof cal->host, "%s", b.host ? b.host : "");
out:
    cfg_free(d);
    return r;
}

/* Four significant digits, so the file reads "2.912s", not picoseconds. */
static const char *fmt_time(int64_t ps, char *buf, int len)
{
    if (ps > 0) {
        double mag = pow(10, floor(log10((double)ps)) - 3);
        if (mag > 1)
            ps = (int64_t)(llround((double)ps / mag) * mag);
    }
    return units_format(UNIT_TIME, ps, buf, len);
}

int stellar_cal_write(FILE *f, const stellar_cal *cal, const char *comment)
{
    char a[48], b[48], c[48], d[48], s1[48], s2[48];
    if (comment)
        for (const char *p = comment; *p;) {
            const char *nl = strchr(p, '\n');
            int n = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(f, "# %.*s\n", n, p);
            p += n + (nl != NULL);
        }
    fprintf(f, "pin_calibration:\n  block: %s\n  pin_per_gib: %s\n  block_pin: %s\n"
               "  lookup: %s\n  unpin_per_gib: %s\n  max_size: %s\n",
            units_format(UNIT_SIZE, cal->block_bytes, s1, sizeof s1),
            fmt_time(cal->pin_per_gib_ps, a, sizeof a), fmt_time(cal->block_pin_ps, b, sizeof b),
            fmt_time(cal->lookup_ps, c, sizeof c), fmt_time(cal->unpin_per_gib_ps, d, sizeof d),
            units_format(UNIT_SIZE, cal->max_bytes, s2, sizeof s2));
    if (cal->host[0])
        fprintf(f, "  host: \"%s\"\n", cal->host);
    return ferror(f) ? AISIM_EIO : 0;
}
