/*
 * aicb_micro.c - reader of AICB's micro-test logs (aicb/workload/physical/
 * micro_test/, `aicb --frame collective_test`): one collective over
 * the whole communicator at a series of sizes, as the `sweep` workload
 * runs them (coll_sweep.c, key aicb_micro).
 *
 * Header comm_type,comm_group,[comm_group_size,]msg_size,stage,dst,src,
 * additional,_elapsed_time,algbw,busbw,count (multi_all_reduce has the
 * group size column, the others not); rows such as
 * "CommType.all_reduce,CommGroup.dp_group,4096,warmup,None,None,,None,None,None,1":
 * the warm-up calls, a CommType.epoch_end row, then the timed calls
 * (stage test_step), consecutive calls of one size forming one size of the
 * sweep.  The timing columns are not read (AICB fills them when it runs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/infile.h"
#include "workload/coll_wl.h"

static const char *const types[] = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                                    "broadcast", NULL};
static const int type_vals[] = {COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER,
                                COLL_ALLTOALL, COLL_BROADCAST};

void coll_micro_free(coll_micro *m)
{
    free(m->sizes);
    free(m->count);
    free(m->line);
    memset(m, 0, sizeof *m);
}

int coll_read_aicb_micro(coll_micro *m, const char *path, err *e)
{
    memset(m, 0, sizeof *m);
    m->type = -1;
    FILE *f = infile_open(path, "r");
    if (!f)
        return ERR(e, AISIM_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, scap = 0;
    int lineno = 0, r = 0, nfields = 0, epoch = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (!nfields) {
            if (strncmp(line, "comm_type,comm_group,", 21)) {
                r = ERR(e, AISIM_EINVAL, "%s:%d:1: expected the header \"comm_type,comm_group,"
                        "...\", found \"%.40s\"", path, lineno, line);
                goto out;
            }
            m->has_size = !strncmp(line + 21, "comm_group_size,", 16);
            nfields = m->has_size ? 12 : 11;
            continue;
        }
        char *fld[12], *p = line;
        int nf = 0, col[12];
        for (;;) {
            char *c = strchr(p, ',');
            if (nf < 12) {
                fld[nf] = p;
                col[nf] = (int)(p - line) + 1;
            }
            nf++;
            if (!c)
                break;
            *c = '\0';
            p = c + 1;
        }
        if (nf != nfields) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:1: expected %d comma-separated fields (as the "
                    "header), found %d", path, lineno, nfields, nf);
            goto out;
        }
        if (!strcmp(fld[0], "CommType.epoch_end")) {
            epoch++;
            continue;
        }
        int t = -1;
        if (!strncmp(fld[0], "CommType.", 9))
            for (int i = 0; types[i]; i++)
                if (!strcmp(fld[0] + 9, types[i]))
                    t = type_vals[i];
        if (t < 0) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:1: comm_type: expected CommType.all_reduce, "
                    "reduce_scatter, all_gather, all_to_all, broadcast or epoch_end, found "
                    "\"%.40s\"", path, lineno, fld[0]);
            goto out;
        }
        if (m->type >= 0 && t != m->type) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:1: comm_type: expected one collective in a "
                    "micro-test (%s from line %d), found \"%.40s\"", path, lineno,
                    coll_type_names[m->type], m->type_line, fld[0]);
            goto out;
        }
        if (m->type < 0) {
            m->type = t;
            m->type_line = lineno;
        }
        if (strcmp(fld[1], "CommGroup.dp_group") && strcmp(fld[1], "CommGroup.all")) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: comm_group: expected CommGroup.dp_group (the "
                    "sweep's whole communicator), found \"%.40s\"", path, lineno, col[1], fld[1]);
            goto out;
        }
        int k = 2;
        char *end;
        if (m->has_size) {
            long gs = strtol(fld[2], &end, 10);
            if (*end || !fld[2][0] || gs < 1 || gs > 1 << 24 ||
                (m->group_size && gs != m->group_size)) {
                r = ERR(e, AISIM_EINVAL, "%s:%d:%d: comm_group_size: expected %s, found "
                        "\"%.40s\"", path, lineno, col[2], m->group_size ? "the size of the "
                        "rows before" : "a positive integer", fld[2]);
                goto out;
            }
            m->group_size = (int)gs;
            m->group_line = lineno;
            k = 3;
        }
        errno = 0;
        unsigned long long b = strtoull(fld[k], &end, 10);
        if (*end || !fld[k][0] || fld[k][0] == '-' || errno || b == 0 || b > (1ull << 50)) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: msg_size: expected a size in bytes > 0, found "
                    "\"%.40s\"", path, lineno, col[k], fld[k]);
            goto out;
        }
        const char *st = fld[k + 1];
        bool warm = !strcmp(st, "warmup");
        if (!warm && strcmp(st, "test_step")) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: stage: expected warmup or test_step, found "
                    "\"%.40s\"", path, lineno, col[k + 1], st);
            goto out;
        }
        if (warm != (epoch == 0)) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: stage: expected %s (%s), found \"%s\"", path,
                    lineno, col[k + 1], epoch ? "test_step" : "warmup",
                    epoch ? "after the epoch_end row" : "before the first epoch_end row", st);
            goto out;
        }
        if (warm) {
            if (m->warmup && b != m->warm_bytes) {
                r = ERR(e, AISIM_EINVAL, "%s:%d:%d: msg_size: expected the warm-up's one size "
                        "%llu, found %llu", path, lineno, col[k], (unsigned long long)m->warm_bytes, b);
                goto out;
            }
            m->warm_bytes = b;
            m->warm_line = lineno;
            m->warmup++;
            continue;
        }
        if (!m->n || m->sizes[m->n - 1] != b) {
            if (m->n == scap) {
                scap = scap ? 2 * scap : 32;
                m->sizes = xrealloc(m->sizes, scap * sizeof *m->sizes);
                m->count = xrealloc(m->count, scap * sizeof *m->count);
                m->line = xrealloc(m->line, scap * sizeof *m->line);
            }
            m->sizes[m->n] = b;
            m->count[m->n] = 0;
            m->line[m->n++] = lineno;
        }
        m->count[m->n - 1]++;
    }
    if (ferror(f))
        r = ERR(e, AISIM_EINVAL, "%s: read error: %s", path, strerror(errno));
    else if (!m->n)
        r = ERR(e, AISIM_EINVAL, "%s:%d: expected test_step calls after an epoch_end row, "
                "found none", path, lineno);
    else if (m->warmup && m->warm_bytes != m->sizes[0])
        r = ERR(e, AISIM_EINVAL, "%s:%d: msg_size: expected the warm-up at the first timed "
                "size %llu, found %llu", path, m->warm_line, (unsigned long long)m->sizes[0],
                (unsigned long long)m->warm_bytes);
out:
    free(line);
    fclose(f);
    if (r)
        coll_micro_free(m);
    return r;
}
