/*
 * idtab.h - a table of fixed-size entries indexed by dense, increasing ids
 * (connection ids, message ids) whose memory follows the ids in use, not
 * the ids ever issued.
 *
 * Entries live in chunks of IDTAB_CHUNK; a chunk is allocated (zeroed) when
 * an id in it is first set and freed when every entry it held has been
 * released, so a run that opens 10^7 short connections one after another
 * holds only the chunks of those still open (plus 8 bytes per chunk
 * ever issued for the directory).  Lookup is two loads.  Ids are never
 * reused; a released entry reads as absent.
 */
#ifndef AISIM_IDTAB_H
#define AISIM_IDTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

#define IDTAB_SHIFT 10
#define IDTAB_CHUNK ((size_t)1 << IDTAB_SHIFT)

typedef struct idtab_chunk {
    uint32_t live;              /* entries set and not released */
    uint32_t issued;            /* entries ever set (released ones too) */
    max_align_t data[];         /* IDTAB_CHUNK entries of `size` bytes, then
                                   IDTAB_CHUNK bytes of presence flags */
} idtab_chunk;

typedef struct idtab {
    idtab_chunk **dir;          /* by id >> IDTAB_SHIFT; NULL: none, or freed */
    size_t ndir;
    size_t size;                /* bytes of an entry */
    size_t live;                /* entries set and not released */
} idtab;

static inline void idtab_init(idtab *t, size_t entry_size)
{
    memset(t, 0, sizeof *t);
    t->size = (entry_size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
}

static inline uint8_t *idtab_flags_(const idtab *t, idtab_chunk *c)
{
    return (uint8_t *)c->data + t->size * IDTAB_CHUNK;
}

/* The entry of id, or NULL if it was never set or has been released. */
static inline void *idtab_get(const idtab *t, uint64_t id)
{
    size_t k = (size_t)(id >> IDTAB_SHIFT);
    idtab_chunk *c = k < t->ndir ? t->dir[k] : NULL;
    size_t i = (size_t)id & (IDTAB_CHUNK - 1);
    if (!c || !idtab_flags_(t, c)[i])
        return NULL;
    return (char *)c->data + i * t->size;
}

/* The entry of id if its chunk is in memory (a released entry reads as
 * zeroes), else NULL: one load fewer than idtab_get, for tables whose
 * entries tell by their content whether they are in use. */
static inline void *idtab_peek(const idtab *t, uint64_t id)
{
    size_t k = (size_t)(id >> IDTAB_SHIFT);
    idtab_chunk *c = k < t->ndir ? t->dir[k] : NULL;
    return c ? (char *)c->data + ((size_t)id & (IDTAB_CHUNK - 1)) * t->size : NULL;
}

/* The zeroed entry of a new id (one not set before). */
static inline void *idtab_set(idtab *t, uint64_t id)
{
    size_t k = (size_t)(id >> IDTAB_SHIFT);
    if (k >= t->ndir) {
        size_t nd = t->ndir ? 2 * t->ndir : 16;
        while (nd <= k)
            nd *= 2;
        t->dir = xrealloc(t->dir, nd * sizeof *t->dir);
        memset(t->dir + t->ndir, 0, (nd - t->ndir) * sizeof *t->dir);
        t->ndir = nd;
    }
    idtab_chunk *c = t->dir[k];
    if (!c)
        c = t->dir[k] = xcalloc(1, sizeof *c + t->size * IDTAB_CHUNK + IDTAB_CHUNK);
    size_t i = (size_t)id & (IDTAB_CHUNK - 1);
    idtab_flags_(t, c)[i] = 1;
    c->live++;
    c->issued++;
    t->live++;
    return (char *)c->data + i * t->size;
}

/* Releases id's entry; its chunk is freed once all of its ids have been
 * issued and released. */
static inline void idtab_release(idtab *t, uint64_t id)
{
    size_t k = (size_t)(id >> IDTAB_SHIFT);
    idtab_chunk *c = t->dir[k];
    size_t i = (size_t)id & (IDTAB_CHUNK - 1);
    idtab_flags_(t, c)[i] = 0;
    memset((char *)c->data + i * t->size, 0, t->size);
    c->live--;
    t->live--;
    if (c->live == 0 && c->issued == IDTAB_CHUNK) {
        free(c);
        t->dir[k] = NULL;
    }
}

static inline void idtab_fini(idtab *t)
{
    for (size_t k = 0; k < t->ndir; k++)
        free(t->dir[k]);
    free(t->dir);
    memset(t, 0, sizeof *t);
}

#endif
