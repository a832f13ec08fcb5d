/*
 * skel_failfile.c - SkeletonHunter's injected failures from the scenario:
 * one failure checked against the fabric (skel_add_fault, for
 * failures.scheduled and the file) and the failures file (CSV,
 * docs/skeletonhunter.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/infile.h"
#include "systems/skeleton/skel_sim_int.h"

int skel_add_fault(sk_sim *s, const char *type, const char *comp, double at_s, double dur_s,
                   const cfg_node *n, const char *path, const char *where, err *e)
{
    int ty = skel_ftype_find(type);
    char q[64];
    if (ty < 0) {
        if (n)
            return cfg_err(e, AISIM_EINVAL, n, path,
                           "expected a Table 1 failure type (crc_error, switch_port_down, ..., "
                           "cc_disabled), found %s",
                           cfg_quote(type, q, sizeof q));
        return ERR(e, AISIM_EINVAL, "%s: type: expected a Table 1 failure type, found %s", where,
                   cfg_quote(type, q, sizeof q));
    }
    int32_t c = skel_comp_parse(&s->f, comp);
    const char *bad = NULL;
    if (c < 0)
        bad = "an existing component (kind:name, e.g. rnic:s0.g0, link:s0.g0-tor0.r0)";
    else if (skel_comp_kind(&s->f, c) != skel_ftypes[ty].kind)
        bad = skel_kind_names[skel_ftypes[ty].kind];
    if (bad) {
        if (n)
            return cfg_err(e, AISIM_EINVAL, n, path, "expected %s%s, found %s",
                           c < 0 ? "" : "a component of kind ", bad, cfg_quote(comp, q, sizeof q));
        return ERR(e, AISIM_EINVAL, "%s: component: expected %s%s, found %s", where,
                   c < 0 ? "" : "a component of kind ", bad, cfg_quote(comp, q, sizeof q));
    }
    if (s->nfaults == s->capfaults) {
        s->capfaults = s->capfaults ? 2 * s->capfaults : 16;
        s->faults = realloc(s->faults, (size_t)s->capfaults * sizeof *s->faults);
    }
    s->faults[s->nfaults++] = (skel_fault_spec){.type = ty, .comp = c, .start_s = (int64_t)at_s,
                                                .dur_s = (int64_t)ceil(dur_s)};
    return 0;
}

/* A decimal number of seconds (digits, one point, an exponent: no sign, no
 * hex, no inf or nan) in [lo, hi] (lo excluded if lo_excl). */
static bool file_seconds(const char *v, double lo, bool lo_excl, double hi, double *val)
{
    const char *c = v;
    bool digits = false;
    while (*c >= '0' && *c <= '9')
        c++, digits = true;
    if (*c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++)
            digits = true;
    if (digits && (*c == 'e' || *c == 'E')) {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!(*c >= '0' && *c <= '9'))
            return false;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    if (!digits || *c)
        return false;
    *val = strtod(v, NULL);
    return (lo_excl ? *val > lo : *val >= lo) && *val <= hi;
}

/* failures.file: a header line `at_s,type,component,duration_s`, then at
 * least one row of exactly those four fields (blank lines and lines
 * starting with # are skipped).  A bad row is an error at the scenario's
 * key naming file:line:column, the field and the value found. */
int skel_load_fault_file(sk_sim *s, const cfg_node *at, const char *path, err *e)
{
    static const char header[] = "at_s,type,component,duration_s";
    static const char *const fields[4] = {"at_s", "type", "component", "duration_s"};
    char full[4096], q[160];
    const char *fn = s->c.fail_file;
    if (fn[0] != '/' && s->env.base_dir)
        snprintf(full, sizeof full, "%s/%s", s->env.base_dir, fn);
    else
        snprintf(full, sizeof full, "%s", fn);
    FILE *fp = infile_open(full, "r");
    if (!fp)    /* a missing file or a directory is bad input (exit 2), as elsewhere */
        return cfg_err(e, AISIM_ENOENT, at, path, "%s: cannot open failure file: %s", full,
                       strerror(errno));
    char line[512];
    int ln = 0, rc = 0, rows = 0;
    bool head = false;
    while (!rc && fgets(line, sizeof line, fp)) {
        ln++;
        if (sim_poll(s->env.sim, 1)) {
            rc = ERR(e, AISIM_ERUN, "interrupted while reading %s", full);
            break;
        }
        size_t len = strcspn(line, "\r\n");
        if (len == sizeof line - 1 && !strchr(line, '\n') && !feof(fp)) {
            rc = cfg_err(e, AISIM_EINVAL, at, path, "%s:%d:1: expected a line of at most %zu "
                         "characters, found a longer one", full, ln, sizeof line - 2);
            break;
        }
        line[len] = '\0';
        if (!head) {
            if (strcmp(line, header) != 0)
                rc = cfg_err(e, AISIM_EINVAL, at, path, "%s:%d:1: expected the header %s, found %s",
                             full, ln, header, cfg_quote(line, q, sizeof q));
            head = true;
            continue;
        }
        if (line[0] == '#' || line[0] == '\0')
            continue;
        /* split into fields, remembering their columns */
        char *f[5];
        int col[5], nf = 0;
        for (char *c = line;; c++) {
            if (nf < 5) {
                f[nf] = c;
                col[nf] = (int)(c - line) + 1;
                nf++;
            }
            c = strchr(c, ',');
            if (!c)
                break;
            *c = '\0';
        }
        if (nf != 4) {
            int k = nf < 4 ? nf - 1 : 4;
            rc = cfg_err(e, AISIM_EINVAL, at, path,
                         "%s:%d:%d: expected the 4 fields %s, found %s%s", full, ln, col[k],
                         header, nf < 4 ? "only " : "an extra field ",
                         nf < 4 ? (nf == 1 ? "1 field" : nf == 2 ? "2 fields" : "3 fields")
                                : cfg_quote(f[4], q, sizeof q));
            break;
        }
        double v[2];
        const char *bad = NULL;
        int which = -1;
        if (!file_seconds(f[0], 0, false, 1e6, &v[0])) {
            which = 0;
            bad = "a decimal number of seconds in [0, 1000000]";
        } else if (!file_seconds(f[3], 0, true, 1e6, &v[1])) {
            which = 3;
            bad = "a decimal number of seconds in (0, 1000000]";
        }
        int ty = which < 0 ? skel_ftype_find(f[1]) : 0;
        int32_t c = -1;
        if (which < 0 && ty < 0) {
            which = 1;
            bad = "a Table 1 failure type (crc_error, switch_port_down, ..., cc_disabled)";
        } else if (which < 0 && (c = skel_comp_parse(&s->f, f[2])) < 0) {
            which = 2;
            bad = "an existing component (kind:name, e.g. rnic:s0.g0, link:s0.g0-tor0.r0)";
        } else if (which < 0 && skel_comp_kind(&s->f, c) != skel_ftypes[ty].kind) {
            which = 2;
            bad = skel_kind_names[skel_ftypes[ty].kind];
        }
        if (which >= 0) {
            rc = cfg_err(e, AISIM_EINVAL, at, path, "%s:%d:%d: %s: expected %s%s, found %s", full,
                         ln, col[which], fields[which],
                         which == 2 && c >= 0 ? "a component of kind " : "", bad,
                         cfg_quote(f[which], q, sizeof q));
            break;
        }
        rc = skel_add_fault(s, f[1], f[2], v[0], v[1], NULL, NULL, full, e);
        rows++;
    }
    if (!rc && ferror(fp))
        rc = cfg_err(e, AISIM_EINVAL, at, path, "%s: read error", full);
    else if (!rc && !rows)
        rc = cfg_err(e, AISIM_EINVAL, at, path,
                     "%s: expected the header %s and at least one failure row, found %s", full,
                     header, head ? "no row" : "an empty file");
    fclose(fp);
    return rc;
}
