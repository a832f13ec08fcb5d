/*
 * skel_cluster.c - the fabric, its components and paths, task layouts,
 * true skeletons and the synthetic training traffic (skel_model.h).
 *
 * Paths: endpoint a -> its ToR -> (other segment, or other rail) an agg ->
 * the destination's ToR -> b, the agg picked by an ECMP-style hash of
 * (a, b); these are exactly the equal-cost paths topo_paths() lists on the
 * same topology (checked in test_skeleton_model.c).  Elements are listed
 * in path order, links and switches interleaved.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/pkt.h"
#include "aisim/units.h"
#include "systems/skeleton/skel_model.h"

static link_cfg mk_link(int64_t rate_bps)
{
    link_cfg c = {.rate_bps = rate_bps, .delay_ps = PS_PER_US};
    c.port.buffer_bytes = 1 << 20;
    c.port.nprio = 1;
    return c;
}

int skel_fabric_init(skel_fabric *f, sim *s, int servers, int gpus, int per_tor, int aggs,
                     uint64_t seed, err *e)
{
    memset(f, 0, sizeof *f);
    f->servers = servers;
    f->gpus = gpus;
    f->per_tor = per_tor;
    f->aggs = aggs;
    f->segs = (servers + per_tor - 1) / per_tor;
    f->neps = servers * gpus;
    f->t = topo_create(s, NULL, seed);
    topo_rail_cfg c = {.servers = servers, .gpus = gpus, .servers_per_tor = per_tor,
                       .aggs = aggs, .planes = 1, .nic = mk_link(GBPS(200)),
                       .fabric = mk_link(GBPS(400)), .nvlink = mk_link(GBPS(3600))};
    int rc = topo_build_rail(f->t, &c, e);
    if (rc)
        return rc;
    f->nlinks = (int)topo_links(f->t);
    f->nnodes = (int)topo_nodes(f->t);
    f->host_link = malloc((size_t)f->neps * sizeof *f->host_link);
    f->tor_node = malloc((size_t)(f->segs * gpus) * sizeof *f->tor_node);
    f->agg_node = malloc((size_t)aggs * sizeof *f->agg_node);
    f->tor_agg = malloc((size_t)(f->segs * gpus * aggs) * sizeof *f->tor_agg);
    char name[64];
    for (int a = 0; a < aggs; a++) {
        snprintf(name, sizeof name, "agg%d", a);
        f->agg_node[a] = topo_find_node(f->t, name);
    }
    for (int sg = 0; sg < f->segs; sg++)
        for (int r = 0; r < gpus; r++) {
            snprintf(name, sizeof name, "tor%d.r%d", sg, r);
            int tn = topo_find_node(f->t, name);
            f->tor_node[sg * gpus + r] = tn;
            for (int a = 0; a < aggs; a++)
                f->tor_agg[(sg * gpus + r) * aggs + a] = topo_find_link(f->t, tn, f->agg_node[a]);
        }
    for (int ep = 0; ep < f->neps; ep++) {
        int sg = ep / gpus / per_tor, r = ep % gpus;
        f->host_link[ep] = topo_find_link(f->t, topo_host_node(f->t, ep), f->tor_node[sg * gpus + r]);
    }
    f->base_switch = f->nlinks;
    f->base_rnic = f->base_switch + f->nnodes;
    f->base_host = f->base_rnic + f->neps;
    f->base_ovl = f->base_host + servers;
    f->ncomp = f->base_ovl + 4 * f->neps;
    return 0;
}

void skel_fabric_fini(skel_fabric *f)
{
    if (f->t)
        topo_destroy(f->t);
    free(f->host_link);
    free(f->tor_node);
    free(f->agg_node);
    free(f->tor_agg);
    memset(f, 0, sizeof *f);
}

enum skel_kind skel_comp_kind(const skel_fabric *f, int32_t c)
{
    if (c < f->base_switch)
        return SKEL_K_LINK;
    if (c < f->base_rnic)
        return SKEL_K_SWITCH;
    if (c < f->base_host)
        return SKEL_K_RNIC;
    if (c < f->base_ovl)
        return SKEL_K_HOST;
    return (enum skel_kind)(SKEL_K_VPORT + (c - f->base_ovl) / f->neps);
}

int skel_comp_owner(const skel_fabric *f, int32_t c)
{
    switch (skel_comp_kind(f, c)) {
    case SKEL_K_LINK:
    case SKEL_K_SWITCH: return -1;
    case SKEL_K_RNIC: return c - f->base_rnic;
    case SKEL_K_HOST: return c - f->base_host;
    default: return (c - f->base_ovl) % f->neps;
    }
}

const char *skel_comp_name(const skel_fabric *f, int32_t c, char *buf, size_t len)
{
    enum skel_kind k = skel_comp_kind(f, c);
    int a, b;
    switch (k) {
    case SKEL_K_LINK:
        topo_link_ends(f->t, c, &a, &b);
        snprintf(buf, len, "link:%s-%s", topo_node_name(f->t, a), topo_node_name(f->t, b));
        break;
    case SKEL_K_SWITCH:
        snprintf(buf, len, "switch:%s", topo_node_name(f->t, c - f->base_switch));
        break;
    case SKEL_K_HOST: snprintf(buf, len, "host:s%d", c - f->base_host); break;
    default:
        snprintf(buf, len, "%s:%s", skel_kind_names[k],
                 topo_node_name(f->t, topo_host_node(f->t, skel_comp_owner(f, c))));
    }
    return buf;
}

int32_t skel_comp_parse(const skel_fabric *f, const char *s)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return -1;
    size_t kl = (size_t)(colon - s);
    const char *name = colon + 1;
    int k = -1;
    for (int i = 0; skel_kind_names[i]; i++)
        if (strlen(skel_kind_names[i]) == kl && strncmp(s, skel_kind_names[i], kl) == 0)
            k = i;
    if (k < 0)
        return -1;
    if (k == SKEL_K_LINK) {
        char a[64];
        const char *dash = strchr(name, '-');
        if (!dash || (size_t)(dash - name) >= sizeof a)
            return -1;
        memcpy(a, name, (size_t)(dash - name));
        a[dash - name] = '\0';
        int na = topo_find_node(f->t, a), nb = topo_find_node(f->t, dash + 1);
        if (na < 0 || nb < 0)
            return -1;
        int l = topo_find_link(f->t, na, nb);
        return l < 0 || topo_link_is_intra_host(f->t, l) ? -1 : l;
    }
    if (k == SKEL_K_HOST) {
        char *end;
        if (name[0] != 's')
            return -1;
        long sv = strtol(name + 1, &end, 10);
        return *end || end == name + 1 || sv < 0 || sv >= f->servers ? -1
                                                                      : skel_comp_host(f, (int)sv);
    }
    int node = topo_find_node(f->t, name);
    if (node < 0)
        return -1;
    bool sw = topo_node_kind(f->t, node) == NODE_SWITCH;
    if (k == SKEL_K_SWITCH) {
        /* NVSwitches are inside the server: not fabric components */
        return sw && !strstr(name, ".nvs") ? skel_comp_switch(f, node) : -1;
    }
    int ep = topo_node_host(f->t, node);
    if (ep < 0)
        return -1;
    if (k == SKEL_K_RNIC)
        return skel_comp_rnic(f, ep);
    return skel_comp_ovl(f, ep, k - SKEL_K_VPORT);
}

uint64_t skel_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

int skel_path(const skel_fabric *f, int a, int b, int agg, int32_t *el, bool *prefer)
{
    int g = f->gpus;
    int sa = a / g / f->per_tor, sb = b / g / f->per_tor, ra = a % g, rb = b % g;
    int ta = f->tor_node[sa * g + ra], tb = f->tor_node[sb * g + rb];
    int n = 0;
#define PUT(x, p) (el[n] = (x), prefer[n] = (p), n++)
    PUT(skel_comp_link(f, f->host_link[a]), false);
    PUT(skel_comp_switch(f, ta), true);
    if (ta != tb) {
        int k = agg >= 0 ? agg : (int)(skel_mix64(((uint64_t)a << 32) | (uint32_t)b) % (uint64_t)f->aggs);
        PUT(skel_comp_link(f, f->tor_agg[(sa * g + ra) * f->aggs + k]), false);
        PUT(skel_comp_switch(f, f->agg_node[k]), true);
        PUT(skel_comp_link(f, f->tor_agg[(sb * g + rb) * f->aggs + k]), false);
        PUT(skel_comp_switch(f, tb), true);
    }
    PUT(skel_comp_link(f, f->host_link[b]), false);
#undef PUT
    return n;
}

/* ---- tasks ---------------------------------------------------------------- */

const char *skel_par_check(const skel_par *p, int gpus, int gph)
{
    if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->ep < 1)
        return "every degree must be >= 1";
    if ((long)p->tp * p->pp * p->dp != gpus)
        return "tp x pp x dp must equal the task's GPUs";
    if (p->tp > gph)
        return "tp must fit in one host";
    if ((p->tp * p->pp) % gph)
        return "tp x pp must be a multiple of the GPUs per host (a host holds one replica's slice)";
    if (p->dp % p->ep)
        return "ep must divide dp";
    return NULL;
}

skel_par skel_par_default(int gpus, int gph)
{
    skel_par p = {.tp = gph, .pp = 1, .dp = 1, .ep = 1};
    int hosts = gpus / gph;
    for (int pp = 8; pp >= 1; pp /= 2)
        if (hosts % pp == 0 && (hosts / pp >= 2 || pp == 1)) {
            p.pp = pp;
            break;
        }
    p.dp = gpus / (p.tp * p.pp);
    return p;
}

void skel_true_skeleton(const skel_par *p, int gph, uint32_t **off_out, uint32_t **idx_out)
{
    int H = p->tp * p->pp / gph, R = p->dp, n = H * R * gph;
    uint32_t *off = malloc(((size_t)n + 1) * sizeof *off);
    uint32_t *idx = malloc(((size_t)n * (size_t)(R + 1) + 1) * sizeof *idx);
    size_t m = 0;
    for (int l = 0; l < n; l++) {
        off[l] = (uint32_t)m;
        int hi = l / gph, rail = l % gph, r = hi / H, pos = hi % H;
        for (int r2 = 0; r2 < R; r2++)
            if (r2 != r)
                idx[m++] = (uint32_t)((r2 * H + pos) * gph + rail);
        if (pos > 0)
            idx[m++] = (uint32_t)((r * H + pos - 1) * gph + rail);
        if (pos < H - 1)
            idx[m++] = (uint32_t)((r * H + pos + 1) * gph + rail);
    }
    off[n] = (uint32_t)m;
    *off_out = off;
    *idx_out = idx;
}

bool skel_same_skeleton(size_t n, const uint32_t *off, const uint32_t *idx, const uint32_t *toff,
                        const uint32_t *tidx)
{
    for (size_t l = 0; l < n; l++) {
        if (off[l + 1] - off[l] != toff[l + 1] - toff[l])
            return false;
        for (uint32_t i = off[l]; i < off[l + 1]; i++) {
            bool found = false;
            for (uint32_t j = toff[l]; j < toff[l + 1] && !found; j++)
                found = tidx[j] == idx[i];
            if (!found)
                return false;
        }
    }
    return true;
}

/* Adds `area` spread evenly over [lo, hi) (w = hi - lo > 0, from t0) to
 * 1-s bins. */
static void spread_w(double *row, size_t len, double lo, double hi, double w, double area)
{
    for (long t = (long)floor(lo); t < (long)ceil(hi); t++) {
        if (t < 0 || (size_t)t >= len)
            continue;
        double ov = fmin(hi, (double)t + 1) - fmax(lo, (double)t);
        if (ov > 0)
            row[t] += area * ov / w;
    }
}

void skel_spread(double *row, size_t len, double t0, double a, double b, double area)
{
    if (b <= a) {
        long t = (long)floor(a - t0);
        if (t >= 0 && (size_t)t < len)
            row[t] += area;
        return;
    }
    spread_w(row, len, a - t0, b - t0, b - a, area);
}

/* Adds a burst of `area` spread evenly over [c - w/2, c + w/2) to 1-s bins. */
static void burst(double *row, size_t len, double t0, double c, double w, double area)
{
    spread_w(row, len, c - w / 2 - t0, c + w / 2 - t0, w, area);
}

void skel_traffic_synth(void *ctx, const skel_par *p, int gph, uint64_t task_seed, int64_t t0,
                        size_t len, double *out)
{
    const double *period_p = ctx;
    double P = period_p ? *period_p : 30.0;
    int H = p->tp * p->pp / gph, R = p->dp, n = H * R * gph;
    double d = fmin(2.0, 0.6 * P / (H > 0 ? H : 1));
    rng r;
    rng_init(&r, task_seed, "skeleton.traffic", 0);
    double phase = rng_uniform(&r, 0, P);
    /* per-communicator all-reduce offsets (position, rail) */
    double *comm = malloc((size_t)(H * gph) * sizeof *comm);
    for (int i = 0; i < H * gph; i++)
        comm[i] = rng_uniform(&r, 0, 0.5);
    memset(out, 0, (size_t)n * len * sizeof *out);
    long k0 = (long)floor(((double)t0 - phase) / P) - 1;
    long k1 = (long)ceil(((double)t0 + (double)len - phase) / P) + 1;
    for (long k = k0; k <= k1; k++) {
        double tk = phase + (double)k * P;
        for (int rep = 0; rep < R; rep++) {
            rng jr;
            rng_init(&jr, task_seed, "skeleton.jitter", (uint64_t)(k - k0) * (uint64_t)R + (uint64_t)rep);
            double eps = rng_normal(&jr, 0, 0.4);
            for (int pos = 0; pos < H; pos++)
                for (int rail = 0; rail < gph; rail++) {
                    double *row = out + (size_t)((rep * H + pos) * gph + rail) * len;
                    double st = tk + pos * d;
                    /* activations: forward from position pos-1 (received at
                     * st) and to pos+1 (sent one stage later); gradients
                     * back half a period later.  Both ends of a transfer
                     * carry it at the same time. */
                    for (int side = 0; side < 2; side++) {
                        if ((side == 0 && pos == 0) || (side == 1 && pos == H - 1))
                            continue;
                        double at = st + side * d + eps;
                        burst(row, len, (double)t0, at, 1.0, 40.0);
                        burst(row, len, (double)t0, at + 0.5 * P, 1.0, 40.0);
                    }
                    if (R > 1)      /* gradient all-reduce, common to the DP group */
                        burst(row, len, (double)t0, tk + 0.7 * P + pos * d + comm[pos * gph + rail],
                              3.0, 150.0);
                    if (p->ep > 1)  /* MoE all-to-all per layer block */
                        for (int m = 0; m < 4; m++)
                            burst(row, len, (double)t0, st + eps + 0.1 * P + m * 0.08 * P, 0.5,
                                  10.0);
                }
        }
    }
    for (size_t i = 0; i < (size_t)n * len; i++)
        out[i] = fmax(0, out[i] + rng_normal(&r, 0, 1.0)) + 0.5;
    free(comm);
}
