/*
 * simai_wl.c - reader of SimAI's workload format (the files AICB writes
 * for SimAI, and SimAI's own examples), and the names shared by the
 * training workloads.
 *
 * Line 1: the parallelism (HYBRID_TRANSFORMER_FWD_IN_BCKWD, MICRO, ...)
 * then "key: value" pairs (model_parallel_NPU_group, ep, pp, vpp, ga,
 * all_gpus, checkpoints, ...) and an optional "pp_comm N".  Line 2: a
 * layer count, which does not always match the lines that follow (the
 * LLaMA-65B file declares 839 and has 32): we read to the end of the file.
 * Then per layer 12 whitespace-separated fields: name, dependency, forward
 * compute, forward collective, forward bytes, input-grad compute, its
 * collective and bytes, weight-grad compute, its collective and bytes,
 * weight-update time.  Compute times are ns.  A collective is NONE,
 * ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or BROADCAST, optionally
 * suffixed _EP (expert group) or _DP_EP (data-parallel group of the
 * experts); without a suffix forward and input-gradient communication is
 * on the TP group and weight-gradient communication on the DP group.
 *
 * Errors are one line, "file:line: what: expected ..., found ...".
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/infile.h"
#include "aisim/training.h"

static const char *const coll_names[] = {"none", "allreduce", "allgather", "reducescatter",
                                         "alltoall", "broadcast"};
static const char *const group_names[] = {"tp", "dp", "ep", "dp_ep", "pp"};

const char *trn_coll_name(int coll)
{
    return coll >= 0 && coll < TRN_C_NCOLL ? coll_names[coll] : "?";
}

const char *trn_group_name(int group)
{
    return group >= 0 && group < TRN_G_NGROUP ? group_names[group] : "?";
}

double trn_busbw_factor(int coll, int n)
{
    if (n <= 1)
        return 0;
    switch (coll) {
    case TRN_C_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case TRN_C_ALLGATHER:
    case TRN_C_REDUCESCATTER:
    case TRN_C_ALLTOALL:
        return (double)(n - 1) / n;
    case TRN_C_BROADCAST:
        return 1;
    default:
        return 0;
    }
}

void trn_wl_free(trn_wl *w)
{
    free(w->layers);
    memset(w, 0, sizeof *w);
}

/* A collective field: NAME[_EP|_DP_EP]; group is the default one. */
static int parse_coll(const char *s, trn_comm *c, int group)
{
    static const char *const up[] = {"NONE", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER",
                                     "ALLTOALL", "BROADCAST"};
    for (int i = 0; i < TRN_C_NCOLL; i++) {
        size_t n = strlen(up[i]);
        if (strncmp(s, up[i], n))
            continue;
        if (!s[n]) {
            c->coll = (uint8_t)i;
            c->group = (uint8_t)group;
            return 0;
        }
        if (!strcmp(s + n, "_EP") || !strcmp(s + n, "_DP_EP")) {
            c->coll = (uint8_t)i;
            c->group = s[n + 1] == 'E' ? TRN_G_EP : TRN_G_DPEP;
            return 0;
        }
    }
    return -1;
}

static int parse_u64(const char *s, uint64_t *v)
{
    if (!*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *v = x;
    return 0;
}

/* The header's "key: value" pairs we use. */
static void parse_header(trn_wl *w, char *line)
{
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    w->micro = tok && !strcmp(tok, "MICRO");
    char *key = NULL;
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        size_t n = strlen(tok);
        if (n && tok[n - 1] == ':') {
            key = tok;
            tok[n - 1] = '\0';
            continue;
        }
        if (!strcmp(tok, "pp_comm")) {
            key = tok;
            continue;
        }
        uint64_t v;
        if (!key || parse_u64(tok, &v))
            continue;
        /* beyond int: kept as the largest int, which no job has, so that
         * the job's checks refuse it rather than read "not given" */
        int iv = v > INT_MAX ? INT_MAX : (int)v;
        if (!strcmp(key, "model_parallel_NPU_group"))
            w->tp = iv;
        else if (!strcmp(key, "ep"))
            w->ep = iv;
        else if (!strcmp(key, "pp"))
            w->pp = iv;
        else if (!strcmp(key, "vpp"))
            w->vpp = iv;
        else if (!strcmp(key, "ga")) {
            w->ga = iv;
            w->ga_raw = v;
        }
        else if (!strcmp(key, "all_gpus"))
            w->all_gpus = iv;
        else if (!strcmp(key, "pp_comm"))
            w->pp_bytes = v;
        key = NULL;
    }
}

int trn_read_simai(trn_wl *w, const char *path, err *e)
{
    memset(w, 0, sizeof *w);
    FILE *f = infile_open(path, "r");
    if (!f)
        return ERR(e, AISIM_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, nlay = 0;
    int lineno = 0, r = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (lineno == 1) {
            parse_header(w, line);
            continue;
        }
        char *fld[13], *save = NULL;
        int nf = 0;
        for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
            if (nf < 13)
                fld[nf++] = t;
            else
                nf++;
        if (nf == 0)
            continue;
        if (lineno == 2) {
            uint64_t v;
            if (nf != 1 || parse_u64(fld[0], &v)) {
                r = ERR(e, AISIM_EINVAL, "%s:%d: layer count: expected one integer, found %d "
                        "field%s", path, lineno, nf, nf == 1 ? " that is not one" : "s");
                goto out;
            }
            w->declared = (long)(v > 1000000000 ? 1000000000 : v);
            continue;
        }
        if (nf != 12) {
            r = ERR(e, AISIM_EINVAL, "%s:%d: layer: expected 12 fields, found %d", path, lineno,
                    nf);
            goto out;
        }
        if (w->n == nlay) {
            nlay = nlay ? 2 * nlay : 64;
            w->layers = xrealloc(w->layers, nlay * sizeof *w->layers);
        }
        trn_layer *L = &w->layers[w->n];
        memset(L, 0, sizeof *L);
        snprintf(L->name, sizeof L->name, "%s", fld[0]);
        L->line = lineno;
        static const int tfield[4] = {2, 5, 8, 11}, cfield[3] = {3, 6, 9};
        static const char *const tname[4] = {"forward compute", "input-grad compute",
                                             "weight-grad compute", "weight update"};
        int64_t *times[4] = {&L->fwd_ps, &L->ig_ps, &L->wg_ps, &L->update_ps};
        trn_comm *cm[3] = {&L->fwd, &L->ig, &L->wg};
        for (int k = 0; k < 4; k++) {
            uint64_t v;
            if (parse_u64(fld[tfield[k]], &v) || v > 1000000000000ull) {
                r = ERR(e, AISIM_EINVAL, "%s:%d: field %d (%s): expected a time in ns from 0 to "
                        "10^12, found \"%.40s\"", path, lineno, tfield[k] + 1, tname[k],
                        fld[tfield[k]]);
                goto out;
            }
            *times[k] = (int64_t)v * 1000;
        }
        for (int k = 0; k < 3; k++) {
            uint64_t v;
            if (parse_coll(fld[cfield[k]], cm[k], k == 2 ? TRN_G_DP : TRN_G_TP)) {
                r = ERR(e, AISIM_EINVAL, "%s:%d: field %d: expected a collective (NONE, "
                        "ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, BROADCAST, with an "
                        "optional _EP or _DP_EP), found \"%.40s\"", path, lineno, cfield[k] + 1,
                        fld[cfield[k]]);
                goto out;
            }
            if (parse_u64(fld[cfield[k] + 1], &v) || v > (1ull << 50)) {
                r = ERR(e, AISIM_EINVAL, "%s:%d: field %d: expected a size in bytes, found "
                        "\"%.40s\"", path, lineno, cfield[k] + 2, fld[cfield[k] + 1]);
                goto out;
            }
            cm[k]->bytes = cm[k]->coll == TRN_C_NONE ? 0 : v;
            if (!cm[k]->bytes)
                cm[k]->coll = TRN_C_NONE;
        }
        w->n++;
    }
    if (ferror(f))
        r = ERR(e, AISIM_EINVAL, "%s: read error: %s", path, strerror(errno));
    else if (lineno < 2)
        r = ERR(e, AISIM_EINVAL, "%s:%d: expected a header line and a layer count, found the "
                "end of the file", path, lineno + 1);
    else if (!w->n)
        r = ERR(e, AISIM_EINVAL, "%s:%d: expected at least one layer line, found the end of "
                "the file", path, lineno + 1);
out:
    free(line);
    fclose(f);
    if (r)
        trn_wl_free(w);
    return r;
}
