/*
 * cfg.h - scenario files: a YAML tree with source positions, and schemas.
 *
 * Loading (libyaml's event parser) builds a tree of maps, sequences and
 * scalars in which every node remembers file, line and column.  Duplicate
 * keys, anchors/aliases, several documents and syntax errors are rejected at
 * load time.  `--set a.b[2].c=value` overrides edit the tree before it is
 * read.
 *
 * Modules read the tree through schemas: a `cfg_key` table lists each key's
 * name, type (with unit), default and range, and the field it fills.
 * cfg_bind() walks a map against a table: unknown keys (with a "did you mean"
 * hint), wrong types, missing units, values out of range and missing required
 * keys are errors naming file:line:column, the key path, what was expected
 * and what was found.  Defaults are inserted into the tree, so that after
 * binding, cfg_emit() writes the fully resolved scenario.
 *
 * Memory: every node and string lives in the cfg_doc's arena and dies with
 * cfg_free().  Strings bound by cfg_bind() point into it.  A scalar costs
 * 24 bytes plus its text beyond 5 bytes, a map or list 56 plus 8 (16 for a
 * map) per entry; a default cfg_bind() inserts adds its value node only
 * (its key node is shared).  tests/scale/gen-flows.sh makes a big scenario
 * to measure it (docs/benchmarks.md).
 */
#ifndef AISIM_CFG_H
#define AISIM_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aisim/err.h"

typedef struct cfg_doc cfg_doc;
typedef struct cfg_node cfg_node;

enum cfg_kind { CFG_SCALAR, CFG_MAP, CFG_SEQ };

/* Loads YAML from a file / from memory (`name` is used in messages).
 * On error returns a negative code, fills e and sets *out to NULL.  A
 * directory, or a file larger than CFG_MAX_FILE bytes (reading stops there:
 * /dev/zero is refused too), is bad input (AISIM_EINVAL). */
#define CFG_MAX_FILE (256 << 20)
int cfg_load_file(const char *path, cfg_doc **out, err *e);
int cfg_load_string(const char *name, const char *text, size_t len, cfg_doc **out, err *e);
void cfg_free(cfg_doc *d);

cfg_node *cfg_root(const cfg_doc *d);
const char *cfg_doc_name(const cfg_doc *d);

/* Applies "key.path=value": value is parsed as YAML (so lists and maps are
 * allowed); missing maps on the way are created, sequence elements are
 * addressed as key[i] or key.i.  Errors name "--set". */
int cfg_set(cfg_doc *d, const char *assignment, err *e);

/* Tree access. */
enum cfg_kind cfg_kind(const cfg_node *n);
const char *cfg_file(const cfg_node *n);
int cfg_line(const cfg_node *n);            /* 1-based */
int cfg_col(const cfg_node *n);             /* 1-based */
const char *cfg_scalar(const cfg_node *n);  /* NULL unless a scalar */
bool cfg_is_null(const cfg_node *n);        /* ~, null or empty plain scalar */
size_t cfg_len(const cfg_node *n);          /* entries of a map or seq */
cfg_node *cfg_at(const cfg_node *n, size_t i);          /* i-th value */
const char *cfg_key_at(const cfg_node *n, size_t i);    /* i-th key of a map */
cfg_node *cfg_get(const cfg_node *map, const char *key);/* NULL if absent */
/* Short description of what a node is, for "found ..." ("a map", "\"100\""). */
const char *cfg_describe(const cfg_node *n, char *buf, size_t len);
/* Text as it is quoted in messages: "..." with at most 40 characters inside
 * (longer text is cut after a whole character and ends in ...), control
 * bytes as \xNN.  buf needs 48 bytes.  Returns buf. */
const char *cfg_quote(const char *s, char *buf, size_t len);

/* Error about node n: "file:line:col: path: <message>".  Returns code. */
int cfg_err(err *e, int code, const cfg_node *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Writes the tree as YAML (block style, keys in file order). */
int cfg_emit(const cfg_node *root, FILE *f, err *e);

/* ---- schemas ---------------------------------------------------------- */

enum cfg_type {
    CFG_BOOL,   /* bool:        true | false                     */
    CFG_INT,    /* int64_t:     decimal integer, no unit         */
    CFG_FLOAT,  /* double:      decimal number, no unit          */
    CFG_STR,    /* const char*: any scalar                       */
    CFG_ENUM,   /* int:         index into key.choices           */
    CFG_TIME,   /* int64_t ps:  "1.5us"                          */
    CFG_RATE,   /* int64_t bps: "100Gbps"                        */
    CFG_SIZE,   /* int64_t B:   "64KiB"                          */
    CFG_NODE,   /* cfg_node*:   any subtree, read by the caller  */
    CFG_MAPOF,  /* cfg_node*:   a map, checked against key.sub   */
};

enum {
    CFG_OPTIONAL = 1 << 0,  /* absent (or null) and no default: field left
                               untouched; `--set key=null` removes it */
    CFG_MIN      = 1 << 1,  /* value >= min */
    CFG_MAX      = 1 << 2,  /* value <= max */
    CFG_MIN_EXCL = 1 << 3,  /* value >  min */
    CFG_MAX_EXCL = 1 << 4,  /* value <  max */
};

typedef struct cfg_key {
    const char *name;           /* YAML key */
    enum cfg_type type;
    size_t off;                 /* offset of the field in the bound struct */
    const char *def;            /* default as YAML text; NULL: required */
    unsigned flags;             /* CFG_OPTIONAL, CFG_MIN ... */
    double min, max;            /* bounds in base units (ps, bps, bytes) */
    const char *const *choices; /* CFG_ENUM: NULL-terminated names */
    const struct cfg_key *sub;  /* CFG_MAPOF: schema of the nested map,
                                   bound into the same struct */
    const char *help;           /* one line for `aisim help KEY` and docs */
} cfg_key;

/* Binds map n against keys (terminated by an entry with name NULL) into dst.
 * `path` is the key path of n for messages ("" at the root).  Unknown keys,
 * type errors, range errors and missing required keys are errors; absent keys
 * with a default get the default, which is also inserted into the tree. */
int cfg_bind(cfg_node *n, const char *path, const cfg_key *keys, void *dst, err *e);

/* Edit distance of two names (insertions, deletions, substitutions and
 * swaps of neighbours), 99 if either is over 64 characters: what "did you
 * mean" suggestions measure. */
int cfg_edit_distance(const char *a, const char *b);

/* Converts one scalar as key k would (used by cfg_bind, and by modules that
 * read values from lists). */
int cfg_value(const cfg_node *n, const char *path, const cfg_key *k, void *field, err *e);

/* Checks that n is a list; returns its length, or a negative code with
 * "file:line:col: path: expected a list of WHAT, found ..." in e. */
long cfg_expect_list(const cfg_node *n, const char *path, const char *what, err *e);

/* Joins a key path: "a.b" + "c" -> "a.b.c"; "a.b" + index 2 -> "a.b[2]".
 * Returns buf. */
char *cfg_path(char *buf, size_t len, const char *base, const char *key);
char *cfg_path_index(char *buf, size_t len, const char *base, size_t i);

/* Adds key: value (value parsed from YAML text) to map n; used to fill in
 * values a module computes.  Replaces an existing key's value. */
int cfg_put(cfg_doc *d, cfg_node *map, const char *key, const char *yaml, err *e);
/* The inserted nodes were not written: messages about them give the
 * position of `map` (cfg_put) or of `at` (cfg_put_at), and a required key
 * missing from an inserted map is reported as the map (section) missing. */
int cfg_put_at(cfg_doc *d, cfg_node *map, const char *key, const char *yaml, const cfg_node *at,
               err *e);

/* The doc a map or list belongs to (NULL for most scalars). */
cfg_doc *cfg_node_doc(const cfg_node *n);
/* Nodes the doc holds (loaded, --set and defaults): for tests that the
 * tree stays proportional to the input. */
size_t cfg_doc_nodes(const cfg_doc *d);
/* Bytes the doc's arena holds (nodes, their text, entry arrays). */
size_t cfg_doc_bytes(const cfg_doc *d);

#endif
