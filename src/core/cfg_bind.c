/*
 * cfg_bind.c - schemas: cfg_key tables bound to the scenario tree
 * (cfg_bind, cfg_value), with unknown keys and their "did you mean",
 * types, units, exact ranges and defaults written back into the tree
 * (cfg.h).  The tree itself is cfg.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aisim/units.h"
#include "cfg_int.h"

/* ---- schema binding --------------------------------------------------- */

/* Edit distance with adjacent transpositions (optimal string alignment),
 * for "did you mean" (cfg.h). */
int cfg_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    int d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* Appends "; did you mean \"x\"?" to buf if a candidate is close. */
static void suggest(char *buf, size_t len, const char *word, const char *const *cands, size_t n)
{
    int best = 99;
    const char *bw = NULL;
    size_t used0 = strlen(buf);
    /* The same word in another case: names are case-sensitive. */
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(word, cands[i]) == 0 && used0 < len) {
            snprintf(buf + used0, len - used0, "; names are case-sensitive: did you mean "
                     "\"%s\"?", cands[i]);
            return;
        }
    for (size_t i = 0; i < n; i++) {
        int dist = cfg_edit_distance(word, cands[i]);
        if (dist < best) {
            best = dist;
            bw = cands[i];
        }
    }
    int limit = strlen(word) <= 4 ? 1 : 2;
    size_t used = strlen(buf);
    if (bw && best <= limit && used < len)
        snprintf(buf + used, len - used, "; did you mean \"%s\"?", bw);
}

static void list_words(char *buf, size_t len, const char *const *w, size_t n)
{
    size_t used = strlen(buf);
    for (size_t i = 0; i < n && used < len; i++) {
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", w[i]);
        used = strlen(buf);
    }
}

static const char *type_desc(const cfg_key *k, char *buf, size_t len)
{
    switch (k->type) {
    case CFG_BOOL: return "true or false";
    case CFG_INT: return "an integer";
    case CFG_FLOAT: return "a number";
    case CFG_STR: return "a string";
    case CFG_TIME: return "a time such as 1.5us";
    case CFG_RATE: return "a rate such as 100Gbps";
    case CFG_SIZE: return "a size such as 64KiB";
    case CFG_NODE: return k->help ? k->help : "a value";
    case CFG_MAPOF: return "a map";
    case CFG_ENUM: {
        size_t n = 0;
        while (k->choices[n])
            n++;
        snprintf(buf, len, "one of: ");
        list_words(buf, len, k->choices, n);
        return buf;
    }
    }
    return "a value";
}

static const char *bound_text(const cfg_key *k, double v, char *buf, size_t len)
{
    switch (k->type) {
    case CFG_TIME: return units_format(UNIT_TIME, (int64_t)v, buf, (int)len);
    case CFG_RATE: return units_format(UNIT_RATE, (int64_t)v, buf, (int)len);
    case CFG_SIZE: return units_format(UNIT_SIZE, (int64_t)v, buf, (int)len);
    default:
        if (v == floor(v) && fabs(v) < 1e18)
            snprintf(buf, len, "%.0f", v);
        else
            snprintf(buf, len, "%.15g", v);
        return buf;
    }
}

/* x against a bound b, exactly (an int64 converted to double rounds above
 * 2^53: 2^53 + 1 must not pass "<= 2^53"): -1, 0 or 1 as x <, =, > b. */
static int cmp_int_bound(int64_t x, double b)
{
    if (b >= 9223372036854775808.0)
        return -1;
    if (b < -9223372036854775808.0)
        return 1;
    int64_t fl = (int64_t)floor(b);
    if (x != fl)
        return x < fl ? -1 : 1;
    return b == floor(b) ? 0 : -1;
}

/* Range check of v; integral values (ints, times, rates, sizes) also pass
 * their exact value in *exact. */
static int check_range(const cfg_node *n, const char *path, const cfg_key *k, double v,
                       const int64_t *exact, err *e)
{
    char b1[48], b2[48], desc[64] = "", found[64];
    const char *what = k->type == CFG_TIME ? "a time" : k->type == CFG_RATE ? "a rate"
                     : k->type == CFG_SIZE ? "a size" : k->type == CFG_INT ? "an integer"
                                                        : "a number";
    int clo = exact ? cmp_int_bound(*exact, k->min) : v < k->min ? -1 : v > k->min;
    int chi = exact ? cmp_int_bound(*exact, k->max) : v < k->max ? -1 : v > k->max;
    bool lo_ok = true, hi_ok = true;
    if (k->flags & CFG_MIN_EXCL)
        lo_ok = clo > 0;
    else if (k->flags & CFG_MIN)
        lo_ok = clo >= 0;
    if (k->flags & CFG_MAX_EXCL)
        hi_ok = chi < 0;
    else if (k->flags & CFG_MAX)
        hi_ok = chi <= 0;
    if (lo_ok && hi_ok)
        return 0;
    bool has_lo = k->flags & (CFG_MIN | CFG_MIN_EXCL), has_hi = k->flags & (CFG_MAX | CFG_MAX_EXCL);
    if (has_lo && has_hi)
        snprintf(desc, sizeof desc, "in %s%s, %s%s", k->flags & CFG_MIN_EXCL ? "(" : "[",
                 bound_text(k, k->min, b1, sizeof b1), bound_text(k, k->max, b2, sizeof b2),
                 k->flags & CFG_MAX_EXCL ? ")" : "]");
    else if (has_lo)
        snprintf(desc, sizeof desc, "%s %s", k->flags & CFG_MIN_EXCL ? ">" : ">=",
                 bound_text(k, k->min, b1, sizeof b1));
    else
        snprintf(desc, sizeof desc, "%s %s", k->flags & CFG_MAX_EXCL ? "<" : "<=",
                 bound_text(k, k->max, b1, sizeof b1));
    return cfg_err(e, AISIM_ERANGE, n, path, "expected %s %s, found %s", what, desc,
                   cfg_describe(n, found, sizeof found));
}

/* Optional sign, then decimal digits only. */
static bool parse_int_syntax(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return false;
    for (; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    return true;
}

static bool parse_int(const char *s, int64_t *v)
{
    if (!parse_int_syntax(s))
        return false;
    errno = 0;
    long long x = strtoll(s, NULL, 10);
    if (errno)
        return false;
    *v = x;
    return true;
}

static bool parse_float(const char *s, double *v)
{
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
            return false;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(x))
        return false;
    *v = x;
    return true;
}

int cfg_value(const cfg_node *n, const char *path, const cfg_key *k, void *field, err *e)
{
    char tb[256], found[96];
    if (k->type == CFG_NODE) {
        *(const cfg_node **)field = n;
        return 0;
    }
    if (k->type == CFG_MAPOF) {
        if (n->kind != CFG_MAP && !cfg_is_null(n))
            return cfg_err(e, AISIM_EINVAL, n, path, "expected a map, found %s",
                           cfg_describe(n, found, sizeof found));
        return cfg_bind((cfg_node *)n, path, k->sub, field, e);
    }
    if (n->kind != CFG_SCALAR || (cfg_is_null(n) && k->type != CFG_STR))
        return cfg_err(e, AISIM_EINVAL, n, path, "expected %s, found %s",
                       type_desc(k, tb, sizeof tb), cfg_describe(n, found, sizeof found));
    const char *s = node_str(n);
    double v = 0;
    switch (k->type) {
    case CFG_BOOL:
        if (strcmp(s, "true") && strcmp(s, "false"))
            return cfg_err(e, AISIM_EINVAL, n, path, "expected true or false, found %s",
                           cfg_describe(n, found, sizeof found));
        *(bool *)field = s[0] == 't';
        return 0;
    case CFG_INT: {
        int64_t x;
        double f;
        if (!parse_int(s, &x)) {
            /* 1e6 is a fine way to write a million. */
            if (parse_float(s, &f) && f == floor(f) && fabs(f) <= 9007199254740992.0) {
                x = (int64_t)f;
            } else {
                /* Digits only, or a whole number beyond 2^53: too large to
                 * be held exactly, not "not a whole number". */
                int whole = parse_float(s, &f) && f == floor(f);
                const char *why = parse_int_syntax(s) || whole ? " (out of range)"
                                : parse_float(s, &f) ? " (not a whole number)" : "";
                return cfg_err(e, AISIM_EINVAL, n, path, "expected an integer, found %s%s",
                               cfg_describe(n, found, sizeof found), why);
            }
        }
        v = (double)x;
        if (check_range(n, path, k, v, &x, e))
            return e ? e->code : AISIM_ERANGE;
        *(int64_t *)field = x;
        return 0;
    }
    case CFG_FLOAT: {
        if (!parse_float(s, &v))
            return cfg_err(e, AISIM_EINVAL, n, path, "expected a number, found %s",
                           cfg_describe(n, found, sizeof found));
        if (check_range(n, path, k, v, NULL, e))
            return e ? e->code : AISIM_ERANGE;
        *(double *)field = v;
        return 0;
    }
    case CFG_STR:
        *(const char **)field = s;
        return 0;
    case CFG_ENUM: {
        size_t nc = 0;
        while (k->choices[nc])
            nc++;
        for (size_t i = 0; i < nc; i++)
            if (strcmp(s, k->choices[i]) == 0) {
                *(int *)field = (int)i;
                return 0;
            }
        char msg[512] = "expected one of: ";
        list_words(msg, sizeof msg, k->choices, nc);
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ", found %s",
                 cfg_describe(n, found, sizeof found));
        suggest(msg, sizeof msg, s, k->choices, nc);
        return cfg_err(e, AISIM_EINVAL, n, path, "%s", msg);
    }
    case CFG_TIME:
    case CFG_RATE:
    case CFG_SIZE: {
        enum unit_kind uk = k->type == CFG_TIME ? UNIT_TIME : k->type == CFG_RATE ? UNIT_RATE
                                                                                  : UNIT_SIZE;
        int64_t x;
        const char *why;
        if (!units_parse(uk, s, &x, &why))
            return cfg_err(e, AISIM_EINVAL, n, path, "expected %s such as %s, found %s (%s)",
                           uk == UNIT_TIME ? "a time" : uk == UNIT_RATE ? "a rate" : "a size",
                           units_example(uk), cfg_describe(n, found, sizeof found), why);
        if (check_range(n, path, k, (double)x, &x, e))
            return e ? e->code : AISIM_ERANGE;
        if (uk == UNIT_TIME && x > UNITS_TIME_CAP_PS)
            return cfg_err(e, AISIM_ERANGE, n, path, "expected a time <= " UNITS_TIME_CAP_TEXT
                           " (simulated time ends at 2^63-1 ps, about 106.8 days), found %s",
                           cfg_describe(n, found, sizeof found));
        if (uk == UNIT_SIZE && x > UNITS_SIZE_CAP_B)
            return cfg_err(e, AISIM_ERANGE, n, path, "expected a size <= " UNITS_SIZE_CAP_TEXT
                           " (larger sizes overflow simulated time), found %s",
                           cfg_describe(n, found, sizeof found));
        *(int64_t *)field = x;
        return 0;
    }
    default:
        break;
    }
    return ERR(e, AISIM_EINVAL, "internal: bad key type for %s", path);
}

int cfg_bind(cfg_node *n, const char *path, const cfg_key *keys, void *dst, err *e)
{
    char found[96], sub[512];
    if (cfg_is_null(n)) {           /* "section:" with nothing: an empty map */
        cfgi_null_to_map(n);
    }
    if (n->kind != CFG_MAP)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a map, found %s",
                       cfg_describe(n, found, sizeof found));
    size_t nk = 0;
    while (keys[nk].name)
        nk++;
    /* Unknown keys first: a misspelt key explains a "missing" one. */
    for (size_t i = 0; i < n->l.n; i++) {
        const char *kname = node_str(n->l.keys[i]);
        size_t j = 0;
        while (j < nk && strcmp(keys[j].name, kname) != 0)
            j++;
        if (j < nk)
            continue;
        const char **names = xmalloc((nk + 1) * sizeof *names);
        for (j = 0; j < nk; j++)
            names[j] = keys[j].name;
        char msg[640] = "unknown key";
        suggest(msg, sizeof msg, kname, names, nk);
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s", "; expected one of: ");
        list_words(msg, sizeof msg, names, nk);
        free(names);
        return cfg_err(e, AISIM_EINVAL, n->l.keys[i], cfg_path(sub, sizeof sub, path, kname), "%s",
                       msg);
    }
    cfg_node *kbuf[32], *vbuf[32];      /* no malloc for the usual small schema */
    cfg_node **okeys = nk < 32 ? kbuf : xmalloc((nk + 1) * sizeof *okeys);
    cfg_node **ovals = nk < 32 ? vbuf : xmalloc((nk + 1) * sizeof *ovals);
    size_t on = 0;
    int r = 0;
    for (size_t j = 0; j < nk && !r; j++) {
        const cfg_key *k = &keys[j];
        cfg_path(sub, sizeof sub, path, k->name);
        ssize_t i = cfgi_map_find(n, k->name);
        if (i < 0) {
            if (!k->def) {
                if (k->flags & CFG_OPTIONAL)
                    continue;
                char tb[256];
                if (n->implicit)    /* the whole section is missing, not one key */
                    r = cfg_err(e, AISIM_EINVAL, n, path, "section missing; expected a map with "
                                "the required key %s (%s)", k->name, type_desc(k, tb, sizeof tb));
                else
                    r = cfg_err(e, AISIM_EINVAL, n, sub, "missing required key (expected %s)",
                                type_desc(k, tb, sizeof tb));
                break;
            }
            /* The default goes straight into the new order, not through
             * cfgi_map_put(): the arrays are sized once, below. */
            if ((r = cfgi_implicit_entry(n->l.doc, k->name, k->def, n, NULL, &ovals[on], e)))
                break;
            okeys[on] = cfgi_default_key(n->l.doc, k->name, n);
        } else {
            okeys[on] = n->l.keys[i];
            ovals[on] = n->l.vals[i];
        }
        cfg_node *v = ovals[on++];
        if ((k->flags & CFG_OPTIONAL) && !k->def && cfg_is_null(v))
            continue;           /* "key: null" on an optional key: not given */
        char *field = (char *)dst + k->off;
        r = cfg_value(v, sub, k, field, e);
    }
    if (!r) {   /* schema order */
        if (on > n->l.cap) {
            n->l.keys = cfgi_alloc(n->l.doc, on * sizeof *okeys);
            n->l.vals = cfgi_alloc(n->l.doc, on * sizeof *ovals);
            n->l.cap = (uint32_t)on;
        }
        if (on) {
            memcpy(n->l.keys, okeys, on * sizeof *okeys);
            memcpy(n->l.vals, ovals, on * sizeof *ovals);
        }
        n->l.n = (uint32_t)on;
    }
    if (okeys != kbuf) {
        free(okeys);
        free(ovals);
    }
    return r;
}
