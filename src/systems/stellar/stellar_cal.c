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

const char *const stellar_cal_names[STELLAR_CAL_NCOSTS] = {
    "pin_per_gib", "block_pin", "fault_pin", "page_fault", "repin", "lookup", "unpin_per_gib",
    "ready_on_demand"};

static const char *const cal_help[STELLAR_CAL_NCOSTS] = {
    "full pinning of fresh memory, per GiB",
    "on demand: first pin_touch of one block",
    "on first touch: a userfaultfd fault pinning one block (0s without userfaultfd)",
    "on first touch with page-sized blocks: one fault (0s without userfaultfd)",
    "re-pin of a block evicted from the map cache",
    "touch of a block already pinned (map-cache hit)",
    "unpinning, per GiB",
    "on-demand start: mapping (and registering) the region"};

typedef struct cal_bind {
    stellar_cal c;
    const char *host, *uffd;
} cal_bind;

#define C(x) offsetof(cal_bind, c.x)
#define NKEYS (5 + 3 * STELLAR_CAL_NCOSTS + 1)

/* The schema: fixed keys, then three per cost (median, _min, _max). */
static void cal_schema(cfg_key *k, char names[][48])
{
    int n = 0;
    k[n++] = (cfg_key){.name = "block", .type = CFG_SIZE, .off = C(block_bytes),
                       .flags = CFG_MIN, .min = 4096,
                       .help = "on-demand pinning granularity measured (a power of two)"};
    k[n++] = (cfg_key){.name = "size", .type = CFG_SIZE, .off = C(max_bytes),
                       .flags = CFG_MIN | CFG_MIN_EXCL, .min = 0,
                       .help = "region pinned in each repetition"};
    k[n++] = (cfg_key){.name = "repeats", .type = CFG_INT, .off = C(repeats),
                       .flags = CFG_MIN, .min = 1, .help = "repetitions on fresh memory"};
    k[n++] = (cfg_key){.name = "userfaultfd", .type = CFG_STR, .off = offsetof(cal_bind, uffd),
                       .help = "available, or unavailable: REASON"};
    k[n++] = (cfg_key){.name = "host", .type = CFG_STR, .off = offsetof(cal_bind, host),
                       .flags = CFG_OPTIONAL, .help = "where and when it was measured"};
    for (int i = 0; i < STELLAR_CAL_NCOSTS; i++) {
        static const char *const suf[3] = {"", "_min", "_max"};
        size_t off[3] = {C(med_ps) + (size_t)i * sizeof(int64_t),
                         C(min_ps) + (size_t)i * sizeof(int64_t),
                         C(max_ps) + (size_t)i * sizeof(int64_t)};
        for (int j = 0; j < 3; j++) {
            snprintf(names[3 * i + j], 48, "%s%s", stellar_cal_names[i], suf[j]);
            k[n++] = (cfg_key){.name = names[3 * i + j], .type = CFG_TIME, .off = off[j],
                               .flags = CFG_MIN, .min = 0, .help = cal_help[i]};
        }
    }
    k[n] = (cfg_key){0};
}

int stellar_cal_load(const char *path, stellar_cal *cal, err *e)
{
    cfg_doc *d;
    int r = cfg_load_file(path, &d, e);
    if (r)
        return r;
    cfg_node *root = cfg_root(d), *n = root ? cfg_get(root, "pin_calibration") : NULL;
    cal_bind b;
    memset(&b, 0, sizeof b);
    char found[64], p[96];
    cfg_key keys[NKEYS];
    char names[3 * STELLAR_CAL_NCOSTS][48];
    cal_schema(keys, names);
    if (!root || cfg_kind(root) != CFG_MAP || cfg_len(root) != 1 || !n) {
        r = root ? cfg_err(e, AISIM_EINVAL, root, "(root)",
                           "expected a calibration file with one map pin_calibration "
                           "(written by aisim calibrate pin), found %s",
                           cfg_describe(root, found, sizeof found))
                 : ERR(e, AISIM_EINVAL, "%s: expected a calibration file with one map "
                                        "pin_calibration, found an empty file", path);
        goto out;
    }
    if ((r = cfg_bind(n, "pin_calibration", keys, &b, e)))
        goto out;
    if (b.c.block_bytes & (b.c.block_bytes - 1)) {
        r = cfg_err(e, AISIM_EINVAL, cfg_get(n, "block"), "pin_calibration.block",
                    "expected a power of two, found %s",
                    units_format(UNIT_SIZE, b.c.block_bytes, found, sizeof found));
        goto out;
    }
    bool uffd = strcmp(b.uffd, "available") == 0;
    if (!uffd && strncmp(b.uffd, "unavailable: ", 13) != 0) {
        r = cfg_err(e, AISIM_EINVAL, cfg_get(n, "userfaultfd"), "pin_calibration.userfaultfd",
                    "expected \"available\" or \"unavailable: REASON\", found \"%.40s\"",
                    b.uffd);
        goto out;
    }
    for (int i = 0; i < STELLAR_CAL_NCOSTS; i++) {
        const char *k = stellar_cal_names[i];
        snprintf(p, sizeof p, "pin_calibration.%s", k);
        if (b.c.min_ps[i] > b.c.med_ps[i] || b.c.med_ps[i] > b.c.max_ps[i]) {
            r = cfg_err(e, AISIM_EINVAL, cfg_get(n, k), p,
                        "expected a median between %s_min and %s_max, found %s outside "
                        "[%s, %s]", k, k,
                        units_format(UNIT_TIME, b.c.med_ps[i], found, sizeof found),
                        units_format(UNIT_TIME, b.c.min_ps[i], (char[48]){0}, 48),
                        units_format(UNIT_TIME, b.c.max_ps[i], (char[48]){0}, 48));
            goto out;
        }
        bool fault = i == STELLAR_CAL_FAULT_PIN || i == STELLAR_CAL_PAGE_FAULT;
        bool must_pos = fault ? uffd : i != STELLAR_CAL_LOOKUP && i != STELLAR_CAL_READY_ON_DEMAND;
        if ((must_pos && b.c.med_ps[i] <= 0) || (fault && !uffd && b.c.max_ps[i] != 0)) {
            r = cfg_err(e, AISIM_EINVAL, cfg_get(n, k), p, "expected %s, found %s",
                        must_pos ? "a time > 0s" : "0s (userfaultfd is unavailable)",
                        units_format(UNIT_TIME, b.c.med_ps[i], found, sizeof found));
            goto out;
        }
    }
    *cal = b.c;
    cal->pin_per_gib_ps = cal->med_ps[STELLAR_CAL_PIN_PER_GIB];
    cal->block_pin_ps = cal->med_ps[STELLAR_CAL_BLOCK_PIN];
    cal->lookup_ps = cal->med_ps[STELLAR_CAL_LOOKUP];
    cal->unpin_per_gib_ps = cal->med_ps[STELLAR_CAL_UNPIN_PER_GIB];
    cal->repin_ps = cal->med_ps[STELLAR_CAL_REPIN];
    snprintf(cal->uffd, sizeof cal->uffd, "%s", b.uffd);
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

/* A string as a YAML double-quoted scalar (quotes and backslashes escaped). */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

int stellar_cal_write(FILE *f, const stellar_cal *cal, const char *comment)
{
    char a[48], b[48], c[48];
    if (comment)
        for (const char *p = comment; *p;) {
            const char *nl = strchr(p, '\n');
            int n = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(f, "# %.*s\n", n, p);
            p += n + (nl != NULL);
        }
    fprintf(f, "pin_calibration:\n  block: %s\n  size: %s\n  repeats: %lld\n  userfaultfd: ",
            units_format(UNIT_SIZE, cal->block_bytes, a, sizeof a),
            units_format(UNIT_SIZE, cal->max_bytes, b, sizeof b), (long long)cal->repeats);
    put_quoted(f, cal->uffd);
    fputc('\n', f);
    for (int i = 0; i < STELLAR_CAL_NCOSTS; i++) {
        const char *k = stellar_cal_names[i];
        fprintf(f, "  %s: %s\n  %s_min: %s\n  %s_max: %s\n", k,
                fmt_time(cal->med_ps[i], a, sizeof a), k, fmt_time(cal->min_ps[i], b, sizeof b),
                k, fmt_time(cal->max_ps[i], c, sizeof c));
    }
    if (cal->host[0]) {
        fprintf(f, "  host: ");
        put_quoted(f, cal->host);
        fputc('\n', f);
    }
    return ferror(f) ? AISIM_EIO : 0;
}
