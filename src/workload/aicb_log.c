/*
 * aicb_log.c - reader of AICB's physical per-call collective logs
 * (aicb/workload/physical/): what one rank of each pipeline stage calls,
 * in order, over an iteration.
 *
 * Line 1 is a tag: "[rank0 ~ rank127]" (one block for every rank) or
 * "[ pp_stage0: [rank0, rank1, ...] ]"; each later "[ pp_stageN: ...]" line
 * starts stage N's block.  Each block has the CSV header
 * comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,
 * _elapsed_time,algbw,busbw,count and rows such as
 * "CommType.all_reduce,CommGroup.tp_group,8,20971520,forward.MegatronRowLinear,...".
 * The timing columns are None (the logs are generated, not measured), so
 * the replay takes compute times from a model description.  The `stage`
 * column gives the phase: init.*, forward*, backward*, step*.
 * CommType.epoch_end rows separate the set-up from the iteration (and
 * iterations from one another).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/infile.h"
#include "aisim/training.h"

void trn_log_free(trn_log *l)
{
    for (int s = 0; s < l->stages; s++)
        free(l->calls[s]);
    free(l->calls);
    free(l->ncalls);
    memset(l, 0, sizeof *l);
}

static int lookup(const char *s, const char *prefix, const char *const *names, const int *vals,
                  int *out)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n))
        return -1;
    for (int i = 0; names[i]; i++)
        if (!strcmp(s + n, names[i])) {
            *out = vals[i];
            return 0;
        }
    return -1;
}

static void add_stage(trn_log *l)
{
    l->stages++;
    l->calls = xrealloc(l->calls, (size_t)l->stages * sizeof *l->calls);
    l->ncalls = xrealloc(l->ncalls, (size_t)l->stages * sizeof *l->ncalls);
    l->calls[l->stages - 1] = NULL;
    l->ncalls[l->stages - 1] = 0;
}

int trn_read_aicb(trn_log *l, const char *path, err *e)
{
    static const char *const tnames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                         "all_to_all", "alltoall", "broadcast", "isend",
                                         "irecv", "barrier", "epoch_end", NULL};
    static const int tvals[] = {TRN_C_ALLREDUCE, TRN_C_ALLGATHER, TRN_C_REDUCESCATTER,
                                TRN_C_ALLTOALL, TRN_C_ALLTOALL, TRN_C_BROADCAST, TRN_CALL_ISEND,
                                TRN_CALL_IRECV, TRN_CALL_BARRIER, TRN_CALL_EPOCH};
    static const char *const gnames[] = {"tp_group", "dp_group", "pp_group", "ep_group",
                                         "embedding_group", "all", NULL};
    static const int gvals[] = {TRN_G_TP, TRN_G_DP, TRN_G_PP, TRN_G_EP, TRN_G_PP, TRN_G_DP};

    memset(l, 0, sizeof *l);
    FILE *f = infile_open(path, "r");
    if (!f)
        return ERR(e, AISIM_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, ncap = 0;
    int lineno = 0, r = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (line[0] == '[') {
            if (lineno == 1 || strstr(line, "pp_stage")) {
                if (lineno > 1 || !l->stages)
                    add_stage(l);
                ncap = 0;
                continue;
            }
        }
        if (!l->stages) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: expected a rank tag such as \"[rank0 ~ rank127]\", "
                    "found \"%.40s\"", path, lineno, line);
            goto out;
        }
        if (!strncmp(line, "comm_type,", 10))
            continue;
        char *fld[13], *p = line;
        int nf = 0;
        for (;;) {
            char *c = strchr(p, ',');
            if (nf < 13)
                fld[nf] = p;
            nf++;
            if (!c)
                break;
            *c = '\0';
            p = c + 1;
        }
        if (nf != 12) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: call: expected 12 comma-separated fields, found %d",
                    path, lineno, nf);
            goto out;
        }
        trn_call c = {.line = lineno};
        int t, g = TRN_G_DP;
        if (lookup(fld[0], "CommType.", tnames, tvals, &t)) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: field 1: expected a CommType such as "
                    "CommType.all_reduce, found \"%.40s\"", path, lineno, fld[0]);
            goto out;
        }
        c.coll = (uint8_t)t;
        if (t != TRN_CALL_EPOCH && lookup(fld[1], "CommGroup.", gnames, gvals, &g)) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: field 2: expected a CommGroup such as "
                    "CommGroup.tp_group, found \"%.40s\"", path, lineno, fld[1]);
            goto out;
        }
        c.group = (uint8_t)g;
        char *end;
        long gs = strtol(fld[2], &end, 10);
        if (t != TRN_CALL_EPOCH && (*end || gs < 1 || gs > 1 << 24)) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: field 3 (comm_group_size): expected a positive "
                    "integer, found \"%.40s\"", path, lineno, fld[2]);
            goto out;
        }
        c.group_size = t == TRN_CALL_EPOCH ? 0 : (int)gs;
        errno = 0;
        unsigned long long b = strtoull(fld[3], &end, 10);
        if (*end || !fld[3][0] || fld[3][0] == '-' || errno || b > (1ull << 50)) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: field 4 (msg_size): expected a size in bytes, "
                    "found \"%.40s\"", path, lineno, fld[3]);
            goto out;
        }
        c.bytes = b;
        const char *ph = fld[4];
        c.phase = !strncmp(ph, "init", 4) || !ph[0] ? TRN_PH_INIT
                  : !strncmp(ph, "forward", 7) ? TRN_PH_FWD
                  : !strncmp(ph, "backward", 8) ? TRN_PH_BWD : TRN_PH_STEP;
        bool all = !strcmp(fld[1], "CommGroup.all");
        if (c.group == TRN_G_TP && (!l->tp || (int)gs > l->tp)) {
            l->tp = (int)gs;
            l->tp_line = lineno;
        }
        if (c.group == TRN_G_DP && !all && !l->dp) {
            l->dp = (int)gs;
            l->dp_line = lineno;
        }
        if (all && t != TRN_CALL_EPOCH && !l->all) {
            l->all = (int)gs;
            l->all_line = lineno;
        }
        int s = l->stages - 1;
        if (l->ncalls[s] == ncap) {
            ncap = ncap ? 2 * ncap : 256;
            l->calls[s] = xrealloc(l->calls[s], ncap * sizeof **l->calls);
        }
        l->calls[s][l->ncalls[s]++] = c;
    }
    if (ferror(f))
        r = ERR(e, AISIM_EINVAL, "%s: read error: %s", path, strerror(errno));
    else if (!l->stages)
        r = ERR(e, AISIM_EINVAL, "%s:1: expected a rank tag, found the end of the file", path);
out:
    free(line);
    fclose(f);
    if (r)
        trn_log_free(l);
    return r;
}
