/*
 * busbw_yaml.c - reader of SimAI's bus-bandwidth table for its analytical
 * mode (SimAI's example/busbw.yaml, `SimAI_analytical -busbw FILE`): the
 * bus bandwidth (GB/s) of each collective per parallel group.
 *
 *   test                      a name (line 1, optional)
 *   TP:                       a group: TP, DP, EP (DP_EP: the DP group of
 *   allreduce,: 300           an MoE layer) then its collectives, one a
 *   allgather,: 280           line, the comma before the colon optional
 *   alltoall,: null           null: not given (the scenario's busbw)
 *   PP:
 *   busbw: 47.5               the pipeline sends
 *
 * Every line is one of those; anything else is an error naming the file,
 * line and column, what was expected and what was found.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/infile.h"
#include "aisim/training.h"

static const char *const grp_names[] = {"TP", "DP", "EP", "DP_EP", "PP", NULL};
static const int grp_vals[] = {TRN_G_TP, TRN_G_DP, TRN_G_EP, TRN_G_DPEP, TRN_G_PP};
static const char *const col_names[] = {"allreduce", "allgather", "reducescatter", "alltoall",
                                        NULL};
static const int col_vals[] = {TRN_C_ALLREDUCE, TRN_C_ALLGATHER, TRN_C_REDUCESCATTER,
                               TRN_C_ALLTOALL};

static int find(const char *s, size_t n, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && !strncmp(s, names[i], n))
            return i;
    return -1;
}

int trn_read_busbw(trn_busbw *b, const char *path, err *e)
{
    memset(b, 0, sizeof *b);
    FILE *f = infile_open(path, "r");
    if (!f)
        return ERR(e, AISIM_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, r = 0, g = -1;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n#")] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strlen(p);
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = '\0';
        if (!len)
            continue;
        int col = (int)(p - line) + 1;
        char *colon = strchr(p, ':');
        if (!colon) {
            if (lineno == 1 && !b->groups)     /* the table's name */
                continue;
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: expected \"GROUP:\" or \"collective,: GB/s\", "
                    "found \"%.40s\"", path, lineno, col, p);
            goto out;
        }
        size_t kn = (size_t)(colon - p);
        if (kn && p[kn - 1] == ',')
            kn--;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        int vcol = (int)(v - line) + 1;
        if (!*v) {                      /* a group */
            int k = find(p, kn, grp_names);
            if (k < 0) {
                r = ERR(e, AISIM_EINVAL, "%s:%d:%d: group: expected one of TP, DP, EP, DP_EP, "
                        "PP, found \"%.*s\"", path, lineno, col, (int)kn, p);
                goto out;
            }
            g = grp_vals[k];
            b->groups |= 1u << g;
            continue;
        }
        if (g < 0) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: expected a group (\"TP:\") before \"%.*s\"",
                    path, lineno, col, (int)kn, p);
            goto out;
        }
        int c;
        if (g == TRN_G_PP) {
            if (kn != 5 || strncmp(p, "busbw", 5)) {
                r = ERR(e, AISIM_EINVAL, "%s:%d:%d: PP: expected \"busbw\", found \"%.*s\"",
                        path, lineno, col, (int)kn, p);
                goto out;
            }
            c = TRN_C_NONE;     /* the sends */
        } else {
            int k = find(p, kn, col_names);
            if (k < 0) {
                r = ERR(e, AISIM_EINVAL, "%s:%d:%d: %s: expected one of allreduce, allgather, "
                        "reducescatter, alltoall, found \"%.*s\"", path, lineno, col,
                        grp_names[g == TRN_G_DPEP ? 3 : g], (int)kn, p);
                goto out;
            }
            c = col_vals[k];
        }
        if (!strcmp(v, "null") || !strcmp(v, "~"))
            continue;
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (*end || errno || !isfinite(x) || x <= 0) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: %.*s: expected a bus bandwidth in GB/s > 0 or "
                    "null, found \"%.40s\"", path, lineno, vcol, (int)kn, p, v);
            goto out;
        }
        b->GBps[g][c] = x;
    }
    if (ferror(f))
        r = ERR(e, AISIM_EINVAL, "%s: read error: %s", path, strerror(errno));
    else if (!b->groups)
        r = ERR(e, AISIM_EINVAL, "%s:%d: expected at least one group (\"TP:\"), found none",
                path, lineno);
out:
    free(line);
    fclose(f);
    return r;
}
