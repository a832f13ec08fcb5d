/*
 * skel_core.c - SkeletonHunter's probe lists, agents, failure catalogue and
 * localization primitives (papers.md 1(b) steps 1-2, Table 1, Algorithm 1).
 *
 *  - Lists: the full mesh (Pingmesh), the Basic list (same rail, other
 *    host: with 8 RNICs a host this drops 7/8 of the pairs), and an
 *    R-Pingmesh-style list (every endpoint under the same ToR plus one under
 *    each other ToR, picked round robin by the prober's index).
 *  - Agents: a list with an `active` flag per target; registration of a
 *    container (in the data plane, announced to its peers' agents) turns
 *    its endpoints on.  Probing walks the active targets round robin.
 *  - Table 1: each failure type, the component kind it sits on, its
 *    symptom and class, and which localization step can see it.
 *  - Algorithm 1: the overlay replay (Forward() hop by hop: a hop that
 *    forwards nothing is the culprit, a revisited hop a loop) and the
 *    physical voting (PhyLinkCounter, exonerated by healthy paths as the
 *    underlay agents' traceroutes allow; a culprit needs two votes).
 */
#include <stdlib.h>
#include <string.h>

#include "aisim/skeleton.h"

size_t skel_targets(const skel_ep *eps, size_t n, size_t i, enum skel_list how, uint32_t *out)
{
    size_t m = 0;
    if (how != SKEL_LIST_RPING) {
        for (size_t j = 0; j < n; j++) {
            if (j == i || eps[j].host == eps[i].host)
                continue;
            if (how == SKEL_LIST_BASIC && eps[j].rail != eps[i].rail)
                continue;
            out[m++] = (uint32_t)j;
        }
        return m;
    }
    int32_t maxt = 0;
    for (size_t j = 0; j < n; j++)
        if (eps[j].tor > maxt)
            maxt = eps[j].tor;
    uint32_t *cnt = calloc((size_t)maxt + 1, sizeof *cnt);
    uint32_t *seen = calloc((size_t)maxt + 1, sizeof *seen);
    for (size_t j = 0; j < n; j++)
        cnt[eps[j].tor]++;
    for (size_t j = 0; j < n; j++) {
        int32_t t = eps[j].tor;
        uint32_t rank = seen[t]++;
        if (j == i)
            continue;
        if (t == eps[i].tor ? eps[j].host != eps[i].host : rank == i % cnt[t])
            out[m++] = (uint32_t)j;
    }
    free(cnt);
    free(seen);
    return m;
}

/* ---- agents -------------------------------------------------------------- */

void skel_agent_load(skel_agent *a, const uint32_t *targets, size_t n, bool incremental)
{
    memcpy(a->target, targets, n * sizeof *targets);
    memset(a->active, incremental ? 0 : 1, n);
    a->n = n;
    a->n_active = incremental ? 0 : n;
    a->cursor = 0;
    a->incremental = incremental;
}

static long find_target(const skel_agent *a, uint32_t ep)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->target[i] == ep)
            return (long)i;
    return -1;
}

bool skel_agent_register(skel_agent *a, uint32_t ep)
{
    long i = find_target(a, ep);
    if (i < 0 || a->active[i])
        return false;
    a->active[i] = 1;
    a->n_active++;
    return true;
}

bool skel_agent_deregister(skel_agent *a, uint32_t ep)
{
    long i = find_target(a, ep);
    if (i < 0 || !a->active[i])
        return false;
    a->active[i] = 0;
    a->n_active--;
    return true;
}

int64_t skel_agent_next(skel_agent *a)
{
    if (!a->n_active)
        return -1;
    for (size_t s = 0; s < a->n; s++) {
        size_t i = a->cursor;
        a->cursor = (a->cursor + 1) % a->n;
        if (a->active[i])
            return (int64_t)i;
    }
    return -1;
}

/* ---- Table 1 ------------------------------------------------------------- */

const char *const skel_class_names[] = {"physical_switch", "rnic", "host_board", "virtual_switch",
                                        "container_runtime", "configuration", "none", NULL};
const char *const skel_kind_names[] = {"link", "switch", "rnic", "host", "vport",
                                       "vswitch_rule", "rnic_rule", "vtep", NULL};

#define U SKEL_SYM_UNREACH
#define L SKEL_SYM_LOSS
#define H SKEL_SYM_LATENCY
const skel_ftype skel_ftypes[SKEL_NFTYPES] = {
    {"crc_error", "CRC error", SKEL_K_LINK, L, SKEL_CLS_SWITCH, true, false, 0},
    {"switch_port_down", "switch port down", SKEL_K_LINK, U, SKEL_CLS_SWITCH, true, false, 0},
    {"switch_port_flapping", "switch port flapping", SKEL_K_LINK, L, SKEL_CLS_SWITCH, true, false,
     0},
    {"switch_offline", "switch offline", SKEL_K_SWITCH, U, SKEL_CLS_SWITCH, true, false, 0},
    {"rnic_hw_failure", "RNIC hardware failure", SKEL_K_RNIC, U, SKEL_CLS_RNIC, true, false, 0},
    {"rnic_fw_unresponsive", "RNIC firmware not responding", SKEL_K_RNIC, H, SKEL_CLS_RNIC, true,
     false, 0},
    {"rnic_port_down", "RNIC port down", SKEL_K_RNIC, U, SKEL_CLS_RNIC, true, false, 0},
    {"rnic_port_flapping", "RNIC port flapping", SKEL_K_RNIC, L, SKEL_CLS_RNIC, true, false, 0},
    {"offload_failure", "offloading failure", SKEL_K_RULE, H, SKEL_CLS_RNIC, false, false, 0},
    {"bond_error", "bond error", SKEL_K_RNIC, U, SKEL_CLS_RNIC, true, false, 0},
    {"gid_change", "RNIC GID change", SKEL_K_RNIC, U, SKEL_CLS_RNIC, true, false, 0},
    {"pcie_nic_error", "PCIe-NIC error", SKEL_K_HOST, H, SKEL_CLS_HOST, false, false, 0},
    {"gdr_error", "GPUDirect RDMA error", SKEL_K_HOST, H, SKEL_CLS_HOST, false, false, 0},
    {"not_using_rdma", "not using RDMA", SKEL_K_VSW, H, SKEL_CLS_VSWITCH, false, true, 0},
    {"repetitive_offload", "repetitive flow offloading", SKEL_K_VSW, H, SKEL_CLS_VSWITCH, false,
     false, 0},
    {"suboptimal_offload", "suboptimal flow offloading", SKEL_K_VSW, H, SKEL_CLS_VSWITCH, false,
     false, 0},
    {"container_crash", "container crash after creation", SKEL_K_VPORT, U, SKEL_CLS_RUNTIME, false,
     true, 0},
    {"hugepage_config", "hugepage config inconsistent with RNIC", SKEL_K_HOST, H, SKEL_CLS_CONFIG,
     false, false, 0},
    {"cc_disabled", "congestion control not enabled on a switch queue", SKEL_K_LINK, H,
     SKEL_CLS_CONFIG, true, false, 0},
    /* gray failures (not in Table 1) */
    {"slow_drift", "link latency drifting up slowly", SKEL_K_LINK, H, SKEL_CLS_SWITCH, true,
     false, SKEL_GRAY_DRIFT},
    {"link_flapping", "link going down and up (seconds at a time)", SKEL_K_LINK, U,
     SKEL_CLS_SWITCH, true, false, SKEL_GRAY_FLAP},
    {"rnic_intermittent", "RNIC stalling intermittently", SKEL_K_RNIC, U, SKEL_CLS_RNIC, true,
     false, SKEL_GRAY_INTERMITTENT},
};
#undef U
#undef L
#undef H

int skel_ftype_find(const char *name)
{
    for (int i = 0; i < SKEL_NFTYPES; i++)
        if (strcmp(skel_ftypes[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- Algorithm 1 ------------------------------------------------------- */

int skel_overlay_replay(int (*forward)(void *ctx, int hop), void *ctx, int n, bool *loop)
{
    uint8_t seen[64] = {0};
    *loop = false;
    int hop = 0;
    while (hop >= 0 && hop < n && hop < 64) {
        seen[hop] = 1;
        int next = forward(ctx, hop);
        if (next < 0)
            return hop;
        if (next < n && next < 64 && seen[next]) {
            *loop = true;
            return hop;
        }
        hop = next;
    }
    return -1;
}

void skel_votes_init(skel_votes *v, size_t n)
{
    v->bad = calloc(n ? n : 1, sizeof *v->bad);
    v->good = calloc(n ? n : 1, 1);
    v->n = n;
}

void skel_votes_fini(skel_votes *v)
{
    free(v->bad);
    free(v->good);
    memset(v, 0, sizeof *v);
}

void skel_votes_add(skel_votes *v, const int32_t *el, size_t len, bool anomalous)
{
    for (size_t i = 0; i < len; i++) {
        if (el[i] < 0 || (size_t)el[i] >= v->n)
            continue;
        if (anomalous)
            v->bad[el[i]]++;
        else
            v->good[el[i]] = 1;
    }
}

int32_t skel_votes_culprit(const skel_votes *v, const int32_t *el, const bool *prefer, size_t len,
                           bool exonerate)
{
    int32_t best = -1;
    uint32_t bc = 1;
    bool bp = false;
    for (size_t i = 0; i < len; i++) {
        int32_t e = el[i];
        if (e < 0 || (size_t)e >= v->n || (exonerate && v->good[e]))
            continue;
        uint32_t c = v->bad[e];
        bool p = prefer && prefer[i];
        if (c > bc || (c == bc && best >= 0 && p && !bp)) {
            best = e;
            bc = c;
            bp = p;
        }
    }
    return best;
}
