/*
 * stellar.c - PVDMA's side of Stellar, sans-I/O: the start-up cost model,
 * the simulated Map Cache and the Fig. 5 doorbell hazard (contract in
 * stellar.h; derivation in docs/stellar.md).
 *
 * Start-up (papers.md 2(e)1): start = hv_base + hv_per_gib * mem, plus
 * mem * pin_per_gib with full pinning.  The defaults (docs/stellar.md): the
 * hypervisor line fitted on Fig. 6's PVDMA points at 32 GiB and 1.6 TiB;
 * the pin rate from a kernel measurement (Linux commit 4d83de6da265, QEMU
 * pinning guest RAM through VFIO: 0.244 s per GiB), not from Fig. 6, whose
 * full-pinning points are then predicted.
 */
#include "systems/stellar/stellar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

/* t_per_gib * bytes / GiB without overflow for TiB-sized memory. */
static int64_t per_gib(int64_t t_per_gib_ps, int64_t bytes)
{
    return (int64_t)((double)t_per_gib_ps * ((double)bytes / (double)STELLAR_GIB) + 0.5);
}

int64_t stellar_hv_ps(const stellar_pin_params *p, int64_t mem_bytes)
{
    return p->hv_base_ps + per_gib(p->hv_per_gib_ps, mem_bytes);
}

int64_t stellar_full_pin_ps(const stellar_pin_params *p, int64_t mem_bytes)
{
    return per_gib(p->pin_per_gib_ps, mem_bytes);
}

int64_t stellar_startup_ps(const stellar_pin_params *p, int64_t mem_bytes, bool full)
{
    return stellar_hv_ps(p, mem_bytes) + (full ? stellar_full_pin_ps(p, mem_bytes) : 0);
}

/* ---- Map Cache ---- */

#define NIL UINT32_MAX

void stellar_mc_init(stellar_mapcache *mc, int64_t mem_bytes, int64_t block_bytes)
{
    memset(mc, 0, sizeof *mc);
    mc->block_bytes = block_bytes;
    mc->nblocks = (size_t)((mem_bytes + block_bytes - 1) / block_bytes);
    mc->capacity = mc->nblocks;
    mc->pinned = xcalloc(mc->nblocks ? mc->nblocks : 1, 1);
    mc->head = mc->tail = NIL;
}

void stellar_mc_fini(stellar_mapcache *mc)
{
    free(mc->pinned);
    free(mc->prev);
    free(mc->next);
    memset(mc, 0, sizeof *mc);
}

void stellar_mc_set_capacity(stellar_mapcache *mc, size_t blocks)
{
    if (blocks == 0 || blocks >= mc->nblocks || mc->prev)
        return;
    mc->capacity = blocks;
    mc->prev = xmalloc(mc->nblocks * sizeof *mc->prev);
    mc->next = xmalloc(mc->nblocks * sizeof *mc->next);
}

static void lru_unlink(stellar_mapcache *mc, uint32_t i)
{
    if (mc->prev[i] != NIL)
        mc->next[mc->prev[i]] = mc->next[i];
    else
        mc->head = mc->next[i];
    if (mc->next[i] != NIL)
        mc->prev[mc->next[i]] = mc->prev[i];
    else
        mc->tail = mc->prev[i];
}

static void lru_push(stellar_mapcache *mc, uint32_t i)
{
    mc->prev[i] = NIL;
    mc->next[i] = mc->head;
    if (mc->head != NIL)
        mc->prev[mc->head] = i;
    mc->head = i;
    if (mc->tail == NIL)
        mc->tail = i;
}

void stellar_mc_pin_all(stellar_mapcache *mc)
{
    memset(mc->pinned, 1, mc->nblocks);
    mc->pinned_blocks = mc->nblocks;
}

size_t stellar_mc_touch(stellar_mapcache *mc, int64_t gpa, int64_t len, size_t *hits)
{
    size_t b0 = (size_t)(gpa / mc->block_bytes);
    size_t b1 = (size_t)((gpa + len + mc->block_bytes - 1) / mc->block_bytes);
    size_t newly = 0, found = 0;
    if (b1 > mc->nblocks)
        b1 = mc->nblocks;
    for (size_t i = b0; i < b1; i++) {
        if (mc->pinned[i] == 1) {
            found++;
            if (mc->prev && mc->head != i) {
                lru_unlink(mc, (uint32_t)i);
                lru_push(mc, (uint32_t)i);
            }
            continue;
        }
        if (mc->prev && mc->pinned_blocks >= mc->capacity) {
            uint32_t v = mc->tail;              /* least recently used */
            lru_unlink(mc, v);
            mc->pinned[v] = 2;
            mc->pinned_blocks--;
            mc->evictions++;
        }
        mc->repins += mc->pinned[i] == 2;
        mc->pinned[i] = 1;
        mc->pinned_blocks++;
        if (mc->prev)
            lru_push(mc, (uint32_t)i);
        newly++;
    }
    mc->misses += newly;
    mc->hits += found;
    if (hits)
        *hits = found;
    return newly;
}

size_t stellar_mc_release(stellar_mapcache *mc, int64_t gpa, int64_t len)
{
    size_t b0 = (size_t)((gpa + mc->block_bytes - 1) / mc->block_bytes);
    size_t b1 = (size_t)((gpa + len) / mc->block_bytes);
    size_t n = 0;
    if (b1 > mc->nblocks)
        b1 = mc->nblocks;
    for (size_t i = b0; i < b1; i++)
        if (mc->pinned[i] == 1) {
            mc->pinned[i] = 0;
            if (mc->prev)
                lru_unlink(mc, (uint32_t)i);
            n++;
        }
    mc->pinned_blocks -= n;
    mc->unpins += n;
    return n;
}

/* ---- Fig. 5 ---- */

enum backing { RAM, DOORBELL };

void stellar_fig5(enum stellar_db_layout layout, int64_t block_bytes, int64_t page_bytes,
                  stellar_hazard *out)
{
    /* Guest RAM: four blocks, one backing entry per page.  The shm I/O
     * region starts well above guest RAM. */
    size_t ppb = (size_t)(block_bytes / page_bytes), npages = 4 * ppb;
    enum backing *ram = xcalloc(npages, sizeof *ram);       /* all RAM */
    enum backing *snap = xcalloc(ppb, sizeof *snap);        /* Map Cache entry of block 1 */
    const int64_t shm_base = (int64_t)1 << 40;
    memset(out, 0, sizeof *out);
    /* 1. The RDMA program maps its vDB; GPU command queue 1 sits right
     *    before it, at the start of block 1. */
    int64_t q1 = block_bytes;
    out->db_gpa = layout == STELLAR_DB_IN_RAM ? q1 + page_bytes : shm_base;
    if (layout == STELLAR_DB_IN_RAM)
        ram[out->db_gpa / page_bytes] = DOORBELL;
    /* 2. The GPU DMAs to queue 1: PVDMA pins and maps its whole block, every
     *    page translated as the guest maps it now. */
    out->block_gpa = q1 / block_bytes * block_bytes;
    size_t first = (size_t)(out->block_gpa / page_bytes);
    memcpy(snap, ram + first, ppb * sizeof *snap);
    /* 3. The RDMA program exits: its vDB page goes back to the guest as RAM;
     *    queue 1 is still in use, so block 1 stays in the Map Cache. */
    if (layout == STELLAR_DB_IN_RAM)
        ram[out->db_gpa / page_bytes] = RAM;
    /* 4. A new GPU command queue at the old vDB address if that is RAM now,
     *    else on the next free page after queue 1; the GPU DMAs to it and
     *    the IOMMU translates through the cached block. */
    out->queue_gpa = layout == STELLAR_DB_IN_RAM ? out->db_gpa : q1 + page_bytes;
    size_t pg = (size_t)(out->queue_gpa / page_bytes);
    bool cached = out->queue_gpa / block_bytes * block_bytes == out->block_gpa;
    enum backing via = cached ? snap[pg - first] : ram[pg];
    out->hazard = via == DOORBELL && ram[pg] == RAM;
    if (out->hazard)
        snprintf(out->what, sizeof out->what,
                 "GPU DMA to command queue at GPA 0x%llx hits the stale %lld-byte PVDMA block "
                 "0x%llx, which still maps the old vDB page to the RNIC doorbell",
                 (unsigned long long)out->queue_gpa, (long long)block_bytes,
                 (unsigned long long)out->block_gpa);
    else
        snprintf(out->what, sizeof out->what,
                 "GPU DMA to command queue at GPA 0x%llx reaches guest RAM (vDB at 0x%llx, %s)",
                 (unsigned long long)out->queue_gpa, (unsigned long long)out->db_gpa,
                 layout == STELLAR_DB_SHM ? "in the shm I/O region" : "in guest RAM");
    free(ram);
    free(snap);
}
