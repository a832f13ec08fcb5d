/*
 * cfg_int.h - the scenario tree's representation, shared by cfg.c (loading,
 * access, --set, emitting) and cfg_bind.c (schemas).  Not a public header:
 * modules use cfg.h.
 */
#ifndef AISIM_CFG_INT_H
#define AISIM_CFG_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "aisim/cfg.h"

#define CFG_MAX_DEPTH 64
#define CFG_QUOTE_MAX 40    /* characters of a value or key quoted in a message */

/* Nodes live in the doc's arena (see arena_alloc), so a node costs no malloc
 * of its own, and a scalar holds its text inline: it is allocated only up
 * to the end of its text.  Maps, lists and null scalars (which cfg_bind()
 * and cfg_set() turn into maps in place) are allocated in full, with the
 * list fields in the union.  A 54 MB scenario of 1.5 M flows is 15 M nodes:
 * their size is most of what `aisim check` needs (docs/benchmarks.md). */
struct cfg_node {
    int line, col;          /* 1-based; 0 for inserted defaults */
    const char *file;       /* source name (owned by the doc) */
    unsigned char kind;     /* enum cfg_kind */
    unsigned char quoted;   /* scalar was quoted: never null, emitted quoted */
    unsigned char implicit; /* inserted by cfg_put() (a default), not written */
    char text0[5];          /* a scalar's text starts here and runs on over
                               `l`, as long as it is (node_str) */
    struct {                /* maps, lists, and null scalars (whose text
                               fits in text0) */
        uint32_t n, cap;    /* entries */
        cfg_node **keys;    /* map keys (scalar nodes) */
        cfg_node **vals;    /* map values / seq elements */
        cfg_doc *doc;
    } l;
};

/* A scalar's text (computed from the node's address, not through text0, so
 * that it may run past text0's five bytes). */
static inline char *node_str(const cfg_node *n)
{
    return (char *)n + offsetof(cfg_node, text0);
}

/* The arena: chunks of ARENA_CHUNK bytes, each allocation 8-byte aligned;
 * a large one (a long list's array) gets a chunk of its own. */
#define ARENA_CHUNK (64 * 1024)
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    _Alignas(8) unsigned char mem[];
} arena_chunk;

struct cfg_doc {
    char *name;             /* file name used in messages */
    cfg_node *root;
    arena_chunk *arena;     /* every node, string and entry array */
    char **names;           /* extra source names ("--set", "(default)") */
    size_t nnames;
    size_t nodes;           /* nodes made (cfg_doc_nodes) */
    const char **dk_name;   /* default keys cfg_bind() inserted, by schema */
    cfg_node **dk_node;     /* name pointer (open addressing): one node per */
    size_t dk_n, dk_cap;    /* schema key, shared by every map it fills */
};

/* Internal helpers of cfg.c that cfg_bind.c uses: */
void *cfgi_alloc(cfg_doc *d, size_t n);
void cfgi_null_to_map(cfg_node *n);
ssize_t cfgi_map_find(const cfg_node *m, const char *key);
int cfgi_implicit_entry(cfg_doc *d, const char *key, const char *yaml, const cfg_node *at,
                        cfg_node **kp, cfg_node **vp, err *e);
cfg_node *cfgi_default_key(cfg_doc *d, const char *name, const cfg_node *at);

#endif
