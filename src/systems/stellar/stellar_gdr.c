/*
 * stellar_gdr.c - GDR address translation, sans-I/O: an LRU cache for the
 * RNIC's ATC and the IOMMU's translation cache, and the DMA pipeline that
 * turns per-request latency into throughput (contract in stellar.h).
 *
 * The pipeline is a closed recurrence rather than events: request r issues
 * when request r - N completes (N outstanding), and completes at
 * max(issue + latency, previous completion + serialisation), so the rate is
 * min(line, N * page / mean latency) (Little's law) once warm.  Under a
 * cyclic access pattern larger than an LRU's capacity every access misses,
 * which is what makes Fig. 8's plateaus: all ATC hits up to a footprint of
 * atc_entries pages, then every request pays the ATS round trip, then also
 * the page walk once the footprint exceeds the IOMMU cache.  eMTT's path
 * looks the page up in the RNIC's MTT cache (an LRU of mtt_entries pages);
 * a miss adds mtt_miss, one read of the entry from host memory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/sim.h"
#include "systems/stellar/stellar.h"

const char *const stellar_gdr_path_names[] = {"ats_atc", "emtt", "hyv_masq", NULL};

#define NIL UINT32_MAX

static size_t hash64(uint64_t k, size_t mask)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    return (size_t)k & mask;
}

void stellar_lru_init(stellar_lru *l, size_t cap)
{
    memset(l, 0, sizeof *l);
    l->cap = cap ? cap : 1;
    l->key = xmalloc(l->cap * sizeof *l->key);
    l->prev = xmalloc(l->cap * sizeof *l->prev);
    l->next = xmalloc(l->cap * sizeof *l->next);
    size_t t = 4;
    while (t < 2 * l->cap)
        t <<= 1;
    l->tmask = t - 1;
    l->table = xcalloc(t, sizeof *l->table);
    l->head = l->tail = NIL;
}

void stellar_lru_fini(stellar_lru *l)
{
    free(l->key);
    free(l->prev);
    free(l->next);
    free(l->table);
    memset(l, 0, sizeof *l);
}

static void unlink_slot(stellar_lru *l, uint32_t s)
{
    if (l->prev[s] != NIL)
        l->next[l->prev[s]] = l->next[s];
    else
        l->head = l->next[s];
    if (l->next[s] != NIL)
        l->prev[l->next[s]] = l->prev[s];
    else
        l->tail = l->prev[s];
}

static void push_front(stellar_lru *l, uint32_t s)
{
    l->prev[s] = NIL;
    l->next[s] = l->head;
    if (l->head != NIL)
        l->prev[l->head] = s;
    l->head = s;
    if (l->tail == NIL)
        l->tail = s;
}

/* Removes the table entry at bucket i (linear probing: shift back the
 * entries that probed past it). */
static void table_erase(stellar_lru *l, size_t i)
{
    size_t j = i;
    for (;;) {
        j = (j + 1) & l->tmask;
        if (!l->table[j])
            break;
        size_t k = hash64(l->key[l->table[j] - 1], l->tmask);
        bool move = i <= j ? (k <= i || k > j) : (k <= i && k > j);
        if (move) {
            l->table[i] = l->table[j];
            i = j;
        }
    }
    l->table[i] = 0;
}

bool stellar_lru_access(stellar_lru *l, uint64_t key)
{
    size_t i = hash64(key, l->tmask);
    while (l->table[i]) {
        uint32_t s = l->table[i] - 1;
        if (l->key[s] == key) {
            if (l->head != s) {
                unlink_slot(l, s);
                push_front(l, s);
            }
            l->hits++;
            return true;
        }
        i = (i + 1) & l->tmask;
    }
    l->misses++;
    uint32_t s;
    if (l->n < l->cap) {
        s = (uint32_t)l->n++;
    } else {
        s = l->tail;
        unlink_slot(l, s);
        size_t j = hash64(l->key[s], l->tmask);
        while (l->table[j] - 1 != s)
            j = (j + 1) & l->tmask;
        table_erase(l, j);
        i = hash64(key, l->tmask);              /* the erase may have moved the hole */
        while (l->table[i])
            i = (i + 1) & l->tmask;
    }
    l->key[s] = key;
    l->table[i] = s + 1;
    push_front(l, s);
    return false;
}

int64_t stellar_goodput_bps(int64_t port_bps, int64_t mtu, int64_t overhead_bytes)
{
    int64_t g = (int64_t)((double)port_bps * (double)mtu / (double)(mtu + overhead_bytes));
    return g > 0 ? g : 1;
}

static int64_t gdr_rate(const stellar_gdr_params *p, enum stellar_gdr_path path)
{
    int64_t rate = p->line_bps;
    if (path == STELLAR_GDR_RC && p->rc_bps < rate)
        rate = p->rc_bps;
    return rate;
}

static double ser_ps(const stellar_gdr_params *p, enum stellar_gdr_path path)
{
    return ceil((double)p->page_bytes * 8 * 1e12 / (double)gdr_rate(p, path));
}

double stellar_gdr_requests(const stellar_gdr_params *p, int64_t msg_bytes,
                            uint64_t min_requests)
{
    double ppm = ceil((double)msg_bytes / (double)p->page_bytes);
    double foot = ppm * (double)p->connections;
    double passes = (double)min_requests > foot ? ceil((double)min_requests / foot) : 1;
    return 2 * foot * passes;
}

double stellar_gdr_horizon_ps(const stellar_gdr_params *p, enum stellar_gdr_path path,
                              int64_t msg_bytes, uint64_t min_requests)
{
    /* completion r <= max(completion r - N + latency, completion r - 1 + ser)
     * <= (r + 1) x (latency + ser) */
    double lat = (double)p->dma_ps + (double)p->ats_rtt_ps + (double)p->walk_ps +
                 (double)p->mtt_miss_ps;
    return stellar_gdr_requests(p, msg_bytes, min_requests) * (lat + ser_ps(p, path));
}

/* Requests between two polls of p->poll. */
#define GDR_POLL_EVERY 4096

void stellar_gdr_run(const stellar_gdr_params *p, enum stellar_gdr_path path,
                     int64_t msg_bytes, uint64_t min_requests, stellar_gdr_result *out)
{
    uint64_t ppm = (uint64_t)((msg_bytes + p->page_bytes - 1) / p->page_bytes);
    uint64_t foot = ppm * (uint64_t)p->connections;
    uint64_t passes = min_requests > foot ? (min_requests + foot - 1) / foot : 1;
    uint64_t warm = foot * passes, total = 2 * warm;
    bool use_atc = path == STELLAR_GDR_ATS, use_mtt = path == STELLAR_GDR_EMTT;
    /* the IOMMU translates: on an ATC miss (ATS), or every untranslated
     * TLP that goes through the root complex (HyV/MasQ; eMTT's host memory) */
    bool use_iommu = path != STELLAR_GDR_EMTT || p->host_memory;
    int64_t ser = (int64_t)ser_ps(p, path);
    stellar_lru atc, mmu, mtt;
    stellar_lru_init(&atc, use_atc ? p->atc_entries : 1);
    stellar_lru_init(&mmu, use_iommu ? p->iommu_entries : 1);
    stellar_lru_init(&mtt, use_mtt ? p->mtt_entries : 1);
    size_t n = (size_t)p->outstanding;
    int64_t *done = xcalloc(n, sizeof *done);
    int64_t last = 0, t0 = 0;
    double lat_sum = 0;
    uint64_t atc_h = 0, atc_n = 0, mmu_h = 0, mmu_n = 0, mtt_h = 0, mtt_n = 0;
    uint64_t r = 0;
    for (; r < total; r++) {
        if (r % GDR_POLL_EVERY == GDR_POLL_EVERY - 1 && sim_poll(p->poll, GDR_POLL_EVERY))
            break;              /* cut short: the result is not used */
        bool meas = r >= warm;
        uint64_t page = r % foot;
        int64_t lat = p->dma_ps;
        bool need_mmu = use_iommu && !use_atc;
        if (use_mtt) {
            bool hit = stellar_lru_access(&mtt, page);
            mtt_h += meas && hit;
            mtt_n += meas;
            if (!hit)
                lat += p->mtt_miss_ps;
        }
        if (use_atc) {
            bool hit = stellar_lru_access(&atc, page);
            atc_h += meas && hit;
            atc_n += meas;
            if (!hit) {
                lat += p->ats_rtt_ps;
                need_mmu = true;
            }
        }
        if (need_mmu) {
            bool hit = stellar_lru_access(&mmu, page);
            mmu_h += meas && hit;
            mmu_n += meas;
            if (!hit)
                lat += p->walk_ps;
        }
        int64_t issue = done[r % n];            /* completion of request r - N */
        int64_t c = issue + lat;
        if (c < last + ser)
            c = last + ser;
        done[r % n] = last = c;
        if (r + 1 == warm)
            t0 = c;
        if (meas)
            lat_sum += (double)lat;
    }
    out->requests = r > warm ? r - warm : 0;
    out->gbps = (double)out->requests * (double)p->page_bytes * 8 / ((double)(last - t0) * 1e-12)
                / 1e9;
    out->atc_hit = atc_n ? (double)atc_h / (double)atc_n : NAN;
    out->iommu_hit = mmu_n ? (double)mmu_h / (double)mmu_n : NAN;
    out->mtt_hit = mtt_n ? (double)mtt_h / (double)mtt_n : NAN;
    out->latency_us = out->requests ? lat_sum / (double)out->requests * 1e-6 : NAN;
    free(done);
    stellar_lru_fini(&atc);
    stellar_lru_fini(&mmu);
    stellar_lru_fini(&mtt);
}
