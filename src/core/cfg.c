/*
 * cfg.c - the scenario tree: loading (libyaml event parser), access,
 * `--set`, emitting.  Schema binding is in cfg_bind.c; the tree's
 * representation in cfg_int.h.
 *
 * The tree is built from libyaml's event stream rather than its document
 * API so that duplicate keys can be reported with both positions and
 * anchors/aliases rejected where they appear.  Nesting is limited to
 * CFG_MAX_DEPTH levels so that hostile input cannot exhaust the stack (the
 * fuzzer's first finding).
 *
 * Every node lives in its doc's arena (cfg_int.h), freed at once.  Maps
 * keep their entries in file order; cfg_bind() reorders a bound map into
 * schema order, so the resolved scenario reads like the documentation.
 */
#include "aisim/cfg.h"

#include <ctype.h>
#include <stdalign.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "aisim/infile.h"
#include "aisim/units.h"

#include "cfg_int.h"

static const char DEFAULT_SRC[] = "(default)";

void *cfgi_alloc(cfg_doc *d, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    arena_chunk *c = d->arena;
    if (c && c->cap - c->used >= n) {
        void *p = c->mem + c->used;
        c->used += n;
        return p;
    }
    size_t cap = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
    arena_chunk *nc = xmalloc(sizeof *nc + cap);
    nc->cap = cap;
    nc->used = n;
    if (c && cap == n) {        /* a big one: keep filling the current chunk */
        nc->next = c->next;
        c->next = nc;
    } else {
        nc->next = c;
        d->arena = nc;
    }
    return nc->mem;
}


static bool is_null_text(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

/* A map or list (str NULL), or a scalar with text str. */
static cfg_node *node_new(cfg_doc *d, enum cfg_kind k, const char *file, int line, int col,
                          const char *str, int quoted)
{
    bool full = k != CFG_SCALAR || (!quoted && is_null_text(str));
    size_t size = offsetof(cfg_node, text0) + (k == CFG_SCALAR ? strlen(str) + 1 : 0);
    if (full && size < sizeof(cfg_node))
        size = sizeof(cfg_node);
    cfg_node *n = memset(cfgi_alloc(d, size), 0, size);
    n->kind = (unsigned char)k;
    n->file = file;
    n->line = line;
    n->col = col;
    n->quoted = (unsigned char)quoted;
    if (k == CFG_SCALAR)
        strcpy(node_str(n), str);
    if (full)
        n->l.doc = d;
    d->nodes++;
    return n;
}

/* A null scalar ("key:" with nothing) becomes an empty map in place. */
void cfgi_null_to_map(cfg_node *n)
{
    n->kind = CFG_MAP;
    n->l.n = n->l.cap = 0;
    n->l.keys = n->l.vals = NULL;
}

static void node_push(cfg_node *n, cfg_node *key, cfg_node *val)
{
    if (n->l.n == n->l.cap) {       /* the old arrays stay in the arena */
        uint32_t cap = n->l.cap ? 2 * n->l.cap : 4;
        cfg_node **v = cfgi_alloc(n->l.doc, cap * sizeof *v);
        if (n->l.n)
            memcpy(v, n->l.vals, n->l.n * sizeof *v);
        n->l.vals = v;
        if (n->kind == CFG_MAP) {
            cfg_node **k = cfgi_alloc(n->l.doc, cap * sizeof *k);
            if (n->l.n)
                memcpy(k, n->l.keys, n->l.n * sizeof *k);
            n->l.keys = k;
        }
        n->l.cap = cap;
    }
    if (n->kind == CFG_MAP)
        n->l.keys[n->l.n] = key;
    n->l.vals[n->l.n++] = val;
}

void cfg_free(cfg_doc *d)
{
    if (!d)
        return;
    for (arena_chunk *c = d->arena, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    for (size_t i = 0; i < d->nnames; i++)
        free(d->names[i]);
    free(d->names);
    free(d->dk_name);
    free(d->dk_node);
    free(d->name);
    free(d);
}

size_t cfg_doc_nodes(const cfg_doc *d) { return d->nodes; }

size_t cfg_doc_bytes(const cfg_doc *d)
{
    size_t b = sizeof *d;
    for (const arena_chunk *c = d->arena; c; c = c->next)
        b += sizeof *c + c->cap;
    return b;
}

static const char *doc_intern_name(cfg_doc *d, const char *name)
{
    for (size_t i = 0; i < d->nnames; i++)
        if (strcmp(d->names[i], name) == 0)
            return d->names[i];
    d->names = xrealloc(d->names, (d->nnames + 1) * sizeof *d->names);
    return d->names[d->nnames++] = xstrdup(name);
}

/* ---- errors ----------------------------------------------------------- */

int cfg_err(err *e, int code, const cfg_node *n, const char *path, const char *fmt, ...)
{
    if (!e)
        return code;
    char body[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    char where[256];
    if (n && n->line > 0)
        snprintf(where, sizeof where, "%s:%d:%d: ", n->file, n->line, n->col);
    else if (n)
        snprintf(where, sizeof where, "%s: ", n->file);
    else
        where[0] = '\0';
    if (path && *path)
        return ERR(e, code, "%s%s: %s", where, path, body);
    return ERR(e, code, "%s%s", where, body);
}

const char *cfg_describe(const cfg_node *n, char *buf, size_t len)
{
    if (!n)
        snprintf(buf, len, "nothing");
    else if (n->kind == CFG_MAP)
        snprintf(buf, len, "a map");
    else if (n->kind == CFG_SEQ)
        snprintf(buf, len, "a list");
    else if (cfg_is_null(n))
        snprintf(buf, len, "nothing (null)");
    else
        cfg_quote(node_str(n), buf, len);
    return buf;
}

/* Bytes of s quoted: at most CFG_QUOTE_MAX characters between the quotes
 * (a longer value is cut, after a whole character, and ends in "..."), and
 * control bytes written \xNN, so that a 300-digit number or binary junk in a
 * scenario still makes a short one-line message. */
const char *cfg_quote(const char *s, char *buf, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t total = 0;
    for (size_t i = 0; u[i]; i++)
        total += u[i] < 0x20 || u[i] == 0x7f ? 4 : 1;
    size_t room = total <= CFG_QUOTE_MAX ? CFG_QUOTE_MAX : CFG_QUOTE_MAX - 3;
    char q[CFG_QUOTE_MAX + 8];
    size_t o = 0, i = 0;
    for (; u[i]; i++) {
        int ctl = u[i] < 0x20 || u[i] == 0x7f;
        if (o + (ctl ? 4 : 1) > room)
            break;
        if (ctl)
            o += (size_t)snprintf(q + o, 5, "\\x%02x", u[i]);
        else
            q[o++] = (char)u[i];
    }
    if (u[i]) {                 /* cut: not inside a UTF-8 character */
        while (i > 0 && (u[i] & 0xc0) == 0x80) {
            i--;
            o--;
        }
        memcpy(q + o, "...", 3);
        o += 3;
    }
    q[o] = '\0';
    snprintf(buf, len, "\"%s\"", q);
    return buf;
}

/* ---- parsing ---------------------------------------------------------- */

typedef struct parse_ctx {
    yaml_parser_t p;
    cfg_doc *d;
    const char *file;       /* name for positions */
    int line_off, col_off;  /* added to libyaml's 0-based marks (for --set) */
    int one_line;           /* --set value: every mark is on line 1 */
    int text_len;           /* length of the parsed text */
    const char *text;       /* the parsed text (for reader errors' offsets) */
    err *e;
    cfg_node **stk;         /* entries of the maps and lists being parsed, */
    size_t nstk, capstk;    /* moved to exact-size arrays at their end */
} parse_ctx;

static void stk_push(parse_ctx *c, cfg_node *n)
{
    if (c->nstk == c->capstk) {
        c->capstk = c->capstk ? 2 * c->capstk : 256;
        c->stk = xrealloc(c->stk, c->capstk * sizeof *c->stk);
    }
    c->stk[c->nstk++] = n;
}

/* Moves the entries pushed since base into n's arrays, sized exactly: a
 * million small maps would otherwise carry half-empty doubled arrays. */
static void stk_take(parse_ctx *c, cfg_node *n, size_t base)
{
    size_t per = n->kind == CFG_MAP ? 2 : 1, cnt = (c->nstk - base) / per;
    n->l.n = n->l.cap = (uint32_t)cnt;
    if (cnt) {
        n->l.vals = cfgi_alloc(c->d, cnt * sizeof *n->l.vals);
        if (per == 2)
            n->l.keys = cfgi_alloc(c->d, cnt * sizeof *n->l.keys);
        for (size_t i = 0; i < cnt; i++) {
            if (per == 2)
                n->l.keys[i] = c->stk[base + 2 * i];
            n->l.vals[i] = c->stk[base + per * i + per - 1];
        }
    }
    c->nstk = base;
}

static int mark_line(parse_ctx *c, yaml_mark_t m)
{
    return c->one_line ? 1 : (int)m.line + 1 + c->line_off;
}

static int mark_col(parse_ctx *c, yaml_mark_t m)
{
    if (c->one_line)    /* past the end of a one-line value: point at its end */
        return (m.line == 0 ? (int)m.column : c->text_len) + 1 + c->col_off;
    return (int)m.column + 1 + (m.line == 0 ? c->col_off : 0);
}

/* libyaml's reader (bad UTF-8, control characters) reports a byte offset
 * and leaves the marks at zero: count lines and characters up to it. */
static int reader_err(parse_ctx *c)
{
    yaml_parser_t *p = &c->p;
    size_t off = p->problem_offset < (size_t)c->text_len ? p->problem_offset
                                                         : (size_t)c->text_len;
    yaml_mark_t m = {0};
    for (size_t i = 0; i < off; i++) {
        unsigned char b = (unsigned char)c->text[i];
        if (b == '\n') {
            m.line++;
            m.column = 0;
        } else if ((b & 0xc0) != 0x80) {
            m.column++;
        }
    }
    char val[32] = "";
    if (p->problem_value >= 0)
        snprintf(val, sizeof val, " (byte 0x%02x)", (unsigned)p->problem_value & 0xffu);
    return ERR(c->e, AISIM_EINVAL, "%s:%d:%d: YAML syntax error: %s%s; a scenario is UTF-8 text",
               c->file, mark_line(c, m), mark_col(c, m), p->problem ? p->problem : "bad input",
               val);
}

static int syntax_err(parse_ctx *c, const char *path)
{
    yaml_parser_t *p = &c->p;
    if (p->error == YAML_READER_ERROR)
        return reader_err(c);
    char ctx[256] = "";
    if (p->context)
        snprintf(ctx, sizeof ctx, " (%s at line %d, column %d)", p->context,
                 mark_line(c, p->context_mark), mark_col(c, p->context_mark));
    char in[200] = "";
    if (path && *path)
        snprintf(in, sizeof in, " in %s", path);
    return ERR(c->e, AISIM_EINVAL, "%s:%d:%d: YAML syntax error%s: %s%s", c->file,
               mark_line(c, p->problem_mark), mark_col(c, p->problem_mark), in,
               p->problem ? p->problem : "unknown problem", ctx);
}

static int next_event(parse_ctx *c, yaml_event_t *ev, const char *path)
{
    if (!yaml_parser_parse(&c->p, ev))
        return syntax_err(c, path);
    return 0;
}

static int parse_node(parse_ctx *c, yaml_event_t *ev, const char *path, int depth, cfg_node **out);

static int reject_anchor(parse_ctx *c, yaml_event_t *ev, const char *path)
{
    const yaml_char_t *anchor = NULL;
    if (ev->type == YAML_SCALAR_EVENT)
        anchor = ev->data.scalar.anchor;
    else if (ev->type == YAML_MAPPING_START_EVENT)
        anchor = ev->data.mapping_start.anchor;
    else if (ev->type == YAML_SEQUENCE_START_EVENT)
        anchor = ev->data.sequence_start.anchor;
    if (!anchor && ev->type != YAML_ALIAS_EVENT)
        return 0;
    char where[64];
    snprintf(where, sizeof where, "%d:%d", mark_line(c, ev->start_mark), mark_col(c, ev->start_mark));
    return ERR(c->e, AISIM_EINVAL, "%s:%s: %s: YAML anchors and aliases are not supported; "
               "write the value out", c->file, where, *path ? path : "(root)");
}

/* The keys of a map being parsed, for the duplicate check: scanned while
 * there are few, hashed (open addressing over their stack positions) once
 * there are more, so that a map of a million keys is not quadratic. */
typedef struct keyset {
    size_t *slot;           /* stack index + 1; 0 = empty */
    size_t cap, n;
} keyset;

static size_t str_hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* Records that the key `name` is (or is about to be) at stack index at. */
static void keyset_add(keyset *ks, const char *name, size_t at)
{
    size_t h = str_hash(name) & (ks->cap - 1);
    while (ks->slot[h])
        h = (h + 1) & (ks->cap - 1);
    ks->slot[h] = at + 1;
    ks->n++;
}

/* The earlier key of this map (keys at base, base + 2, ...) named `name`,
 * or NULL; the caller then pushes the new key. */
static const cfg_node *dup_key(parse_ctx *c, keyset *ks, size_t base, const char *name)
{
    size_t nkeys = (c->nstk - base) / 2;
    if (nkeys < 16) {
        for (size_t i = base; i < c->nstk; i += 2)
            if (strcmp(node_str(c->stk[i]), name) == 0)
                return c->stk[i];
        return NULL;
    }
    if (2 * (nkeys + 1) > ks->cap) {        /* (re)build the table */
        free(ks->slot);
        ks->cap = 64;
        while (ks->cap < 4 * (nkeys + 1))
            ks->cap *= 2;
        ks->slot = xcalloc(ks->cap, sizeof *ks->slot);
        ks->n = 0;
        for (size_t i = base; i < c->nstk; i += 2)
            keyset_add(ks, node_str(c->stk[i]), i);
    }
    for (size_t h = str_hash(name) & (ks->cap - 1); ks->slot[h]; h = (h + 1) & (ks->cap - 1))
        if (strcmp(node_str(c->stk[ks->slot[h] - 1]), name) == 0)
            return c->stk[ks->slot[h] - 1];
    keyset_add(ks, name, c->nstk);  /* where the caller pushes it */
    return NULL;
}

static int parse_map_entries(parse_ctx *c, cfg_node *m, const char *path, int depth,
                             keyset *seen)
{
    size_t base = c->nstk;
    for (;;) {
        yaml_event_t kev;
        int r = next_event(c, &kev, path);
        if (r)
            return r;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            stk_take(c, m, base);
            return 0;
        }
        if ((r = reject_anchor(c, &kev, path))) {
            yaml_event_delete(&kev);
            return r;
        }
        int kl = mark_line(c, kev.start_mark), kc = mark_col(c, kev.start_mark);
        if (kev.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&kev);
            return ERR(c->e, AISIM_EINVAL, "%s:%d:%d: %s: expected a plain key, found %s",
                       c->file, kl, kc, *path ? path : "(root)",
                       kev.type == YAML_MAPPING_START_EVENT ? "a map" : "a list");
        }
        cfg_node *k = node_new(c->d, CFG_SCALAR, c->file, kl, kc,
                               (const char *)kev.data.scalar.value, 0);
        yaml_event_delete(&kev);
        char sub[512];
        cfg_path(sub, sizeof sub, path, node_str(k));
        const cfg_node *o = dup_key(c, seen, base, node_str(k));
        if (o)
            return ERR(c->e, AISIM_EINVAL, "%s:%d:%d: %s: duplicate key (first given at "
                       "line %d, column %d)", c->file, kl, kc, sub, o->line, o->col);
        stk_push(c, k);
        yaml_event_t vev;
        if ((r = next_event(c, &vev, sub)))
            return r;
        cfg_node *v;
        r = parse_node(c, &vev, sub, depth + 1, &v);
        yaml_event_delete(&vev);
        if (r)
            return r;
        stk_push(c, v);
    }
}

static int parse_map(parse_ctx *c, cfg_node *m, const char *path, int depth)
{
    keyset seen = {0};
    int r = parse_map_entries(c, m, path, depth, &seen);
    free(seen.slot);
    return r;
}

static int parse_seq(parse_ctx *c, cfg_node *s, const char *path, int depth)
{
    size_t base = c->nstk;
    for (;;) {
        yaml_event_t ev;
        char sub[512];
        cfg_path_index(sub, sizeof sub, path, c->nstk - base);
        int r = next_event(c, &ev, sub);
        if (r)
            return r;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            stk_take(c, s, base);
            return 0;
        }
        cfg_node *v;
        r = parse_node(c, &ev, sub, depth + 1, &v);
        yaml_event_delete(&ev);
        if (r)
            return r;
        stk_push(c, v);
    }
}

static int parse_node(parse_ctx *c, yaml_event_t *ev, const char *path, int depth, cfg_node **out)
{
    int r = reject_anchor(c, ev, path);
    if (r)
        return r;
    int line = mark_line(c, ev->start_mark), col = mark_col(c, ev->start_mark);
    if (depth > CFG_MAX_DEPTH)
        return ERR(c->e, AISIM_EINVAL, "%s:%d:%d: %s: nested deeper than %d levels", c->file,
                   line, col, *path ? path : "(root)", CFG_MAX_DEPTH);
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        *out = node_new(c->d, CFG_SCALAR, c->file, line, col,
                        (const char *)ev->data.scalar.value,
                        ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE);
        return 0;
    }
    case YAML_MAPPING_START_EVENT:
        *out = node_new(c->d, CFG_MAP, c->file, line, col, NULL, 0);
        return parse_map(c, *out, path, depth);
    case YAML_SEQUENCE_START_EVENT:
        *out = node_new(c->d, CFG_SEQ, c->file, line, col, NULL, 0);
        return parse_seq(c, *out, path, depth);
    default:
        return ERR(c->e, AISIM_EINVAL, "%s:%d:%d: %s: unexpected YAML event", c->file, line, col,
                   *path ? path : "(root)");
    }
}

/* Parses one YAML document from text into *out (NULL for an empty stream). */
static int parse_text(cfg_doc *d, const char *file, const char *text, size_t len, int line_off,
                      int col_off, const char *path, cfg_node **out, err *e)
{
    parse_ctx c = {.d = d, .file = file, .line_off = line_off, .col_off = col_off, .e = e,
                   .one_line = col_off > 0 && !memchr(text, '\n', len), .text_len = (int)len,
                   .text = text};
    *out = NULL;
    if (!yaml_parser_initialize(&c.p))
        return ERR(e, AISIM_EIO, "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&c.p, (const unsigned char *)text, len);
    yaml_event_t ev;
    int r = 0, docs = 0;
    for (;;) {
        if ((r = next_event(&c, &ev, path)))
            break;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            r = ERR(e, AISIM_EINVAL, "%s:%d:%d: a scenario is one YAML document; found a second",
                    file, mark_line(&c, ev.start_mark), mark_col(&c, ev.start_mark));
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_SCALAR_EVENT || t == YAML_MAPPING_START_EVENT ||
            t == YAML_SEQUENCE_START_EVENT || t == YAML_ALIAS_EVENT) {
            r = parse_node(&c, &ev, path, 0, out);
            yaml_event_delete(&ev);
            if (r)
                break;
            continue;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&c.p);
    free(c.stk);
    return r;
}

static cfg_doc *doc_new(const char *name)
{
    cfg_doc *d = xcalloc(1, sizeof *d);
    d->name = xstrdup(name);
    return d;
}

int cfg_load_string(const char *name, const char *text, size_t len, cfg_doc **out, err *e)
{
    cfg_doc *d = doc_new(name);
    *out = NULL;
    int r = parse_text(d, d->name, text, len, 0, 0, "", &d->root, e);
    if (!r && !d->root)
        r = ERR(e, AISIM_EINVAL, "%s:1:1: empty scenario; expected a map of keys", name);
    if (r) {
        cfg_free(d);
        return r;
    }
    *out = d;
    return 0;
}

int cfg_load_file(const char *path, cfg_doc **out, err *e)
{
    *out = NULL;
    FILE *f = infile_open(path, "rb");
    if (!f && errno == EISDIR)
        return ERR(e, AISIM_EINVAL, "%s: is a directory; expected a scenario file", path);
    if (!f)
        return ERR(e, AISIM_ENOENT, "%s: cannot open: %s", path, strerror(errno));
    /* Read at most CFG_MAX_FILE + 1 bytes: /dev/zero or a runaway pipe stops
     * at the cap instead of growing the buffer until memory runs out. */
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    size_t k;
    while (n <= CFG_MAX_FILE && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap && n <= CFG_MAX_FILE)
            buf = xrealloc(buf, cap = cap * 2 > CFG_MAX_FILE + 1 ? CFG_MAX_FILE + 1 : cap * 2);
    }
    int en = ferror(f) ? errno : 0;
    fclose(f);
    int r;
    if (en)
        r = ERR(e, AISIM_EIO, "%s: read error: %s", path, strerror(en));
    else if (n > CFG_MAX_FILE)
        r = ERR(e, AISIM_EINVAL, "%s: larger than %d MiB, the limit of a scenario file", path,
                CFG_MAX_FILE >> 20);
    else
        r = cfg_load_string(path, buf, n, out, e);
    free(buf);
    return r;
}

cfg_node *cfg_root(const cfg_doc *d) { return d->root; }
const char *cfg_doc_name(const cfg_doc *d) { return d->name; }
cfg_doc *cfg_node_doc(const cfg_node *n)
{
    return n->kind != CFG_SCALAR || cfg_is_null(n) ? n->l.doc : NULL;
}

/* ---- access ----------------------------------------------------------- */

enum cfg_kind cfg_kind(const cfg_node *n) { return n->kind; }
const char *cfg_file(const cfg_node *n) { return n->file; }
int cfg_line(const cfg_node *n) { return n->line; }
int cfg_col(const cfg_node *n) { return n->col; }
const char *cfg_scalar(const cfg_node *n)
{
    return n && n->kind == CFG_SCALAR ? node_str(n) : NULL;
}
size_t cfg_len(const cfg_node *n) { return n && n->kind != CFG_SCALAR ? n->l.n : 0; }
cfg_node *cfg_at(const cfg_node *n, size_t i) { return i < cfg_len(n) ? n->l.vals[i] : NULL; }

const char *cfg_key_at(const cfg_node *n, size_t i)
{
    return n && n->kind == CFG_MAP && i < n->l.n ? node_str(n->l.keys[i]) : NULL;
}

bool cfg_is_null(const cfg_node *n)
{
    return n && n->kind == CFG_SCALAR && !n->quoted && is_null_text(node_str(n));
}

ssize_t cfgi_map_find(const cfg_node *m, const char *key)
{
    if (!m || m->kind != CFG_MAP)
        return -1;
    for (size_t i = 0; i < m->l.n; i++)
        if (strcmp(node_str(m->l.keys[i]), key) == 0)
            return (ssize_t)i;
    return -1;
}

cfg_node *cfg_get(const cfg_node *map, const char *key)
{
    ssize_t i = cfgi_map_find(map, key);
    return i < 0 ? NULL : map->l.vals[i];
}

long cfg_expect_list(const cfg_node *n, const char *path, const char *what, err *e)
{
    char found[96];
    if (n->kind != CFG_SEQ)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a list of %s, found %s", what,
                       cfg_describe(n, found, sizeof found));
    return (long)n->l.n;
}

char *cfg_path(char *buf, size_t len, const char *base, const char *key)
{
    /* Paths are for messages: a key longer than CFG_QUOTE_MAX is cut (after
     * a whole UTF-8 character) and ends in "...". */
    size_t kl = strlen(key);
    const char *more = "";
    if (kl > CFG_QUOTE_MAX) {
        kl = CFG_QUOTE_MAX - 3;
        while (kl > 0 && ((unsigned char)key[kl] & 0xc0) == 0x80)
            kl--;
        more = "...";
    }
    /* memcpy, not snprintf: this runs for every key of the file. */
    size_t bl = base && *base ? strlen(base) : 0, ml = strlen(more), o = 0;
    if (len == 0)
        return buf;
    const char *parts[] = {bl ? base : "", ".", key, more};
    size_t lens[] = {bl, bl ? 1 : 0, kl, ml};
    for (int i = 0; i < 4; i++) {
        size_t n = lens[i] < len - 1 - o ? lens[i] : len - 1 - o;
        memcpy(buf + o, parts[i], n);
        o += n;
    }
    buf[o] = '\0';
    return buf;
}

char *cfg_path_index(char *buf, size_t len, const char *base, size_t i)
{
    snprintf(buf, len, "%s[%zu]", base ? base : "", i);
    return buf;
}

static void cfgi_map_put(cfg_node *m, cfg_node *key, cfg_node *val)
{
    ssize_t i = cfgi_map_find(m, node_str(key));
    if (i >= 0)
        m->l.vals[i] = val;
    else
        node_push(m, key, val);
}

/* An inserted value has no place in the file: messages about it (a
 * required key missing from a defaulted section) point at the map it went
 * into, which was written. */
static void mark_implicit(cfg_node *n, const cfg_node *at)
{
    n->implicit = 1;
    n->file = at->file;
    n->line = at->line;
    n->col = at->col;
    for (size_t i = 0; i < cfg_len(n); i++) {
        if (n->kind == CFG_MAP)
            mark_implicit(n->l.keys[i], at);
        mark_implicit(n->l.vals[i], at);
    }
}

int cfg_put(cfg_doc *d, cfg_node *map, const char *key, const char *yaml, err *e)
{
    return cfg_put_at(d, map, key, yaml, map, e);
}

/* A default such as 0s, 15, true, newreno or 1.5us: the plain scalar it is
 * as YAML, without starting a YAML parser (which allocates kilobytes) for
 * each of a million list elements' defaults. */
static bool is_simple_plain(const char *s)
{
    if (!isalnum((unsigned char)s[0]) &&
        !(strchr("+-.", s[0]) && s[0] && isdigit((unsigned char)s[1])))
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._+-", *p))
            return false;
    return true;
}

/* The value node of an inserted `key: yaml`, and its key node if kp is not
 * NULL, placed at `at`. */
int cfgi_implicit_entry(cfg_doc *d, const char *key, const char *yaml, const cfg_node *at,
                          cfg_node **kp, cfg_node **vp, err *e)
{
    cfg_node *v;
    int r = 0;
    if (is_simple_plain(yaml))
        v = node_new(d, CFG_SCALAR, DEFAULT_SRC, 0, 0, yaml, 0);
    else
        r = parse_text(d, DEFAULT_SRC, yaml, strlen(yaml), -1, 0, key, &v, e);
    if (r)
        return r;
    if (!v)
        v = node_new(d, CFG_SCALAR, DEFAULT_SRC, 0, 0, "", 0);
    mark_implicit(v, at);
    *vp = v;
    if (kp) {
        *kp = node_new(d, CFG_SCALAR, DEFAULT_SRC, 0, 0, key, 0);
        mark_implicit(*kp, at);
    }
    return 0;
}

/* The key node of schema key `name` (a cfg_key's name: the pointer is the
 * identity) as cfg_bind() inserts it with its default, made once per doc:
 * a million list elements share it.  Nothing reads an inserted key's
 * position or changes a key. */
cfg_node *cfgi_default_key(cfg_doc *d, const char *name, const cfg_node *at)
{
    if (2 * (d->dk_n + 1) > d->dk_cap) {
        size_t cap = d->dk_cap ? 2 * d->dk_cap : 64;
        const char **nn = xcalloc(cap, sizeof *nn);
        cfg_node **nd = xcalloc(cap, sizeof *nd);
        for (size_t i = 0; i < d->dk_cap; i++) {
            if (!d->dk_name[i])
                continue;
            size_t h = ((uintptr_t)d->dk_name[i] >> 3) & (cap - 1);
            while (nn[h])
                h = (h + 1) & (cap - 1);
            nn[h] = d->dk_name[i];
            nd[h] = d->dk_node[i];
        }
        free(d->dk_name);
        free(d->dk_node);
        d->dk_name = nn;
        d->dk_node = nd;
        d->dk_cap = cap;
    }
    size_t h = ((uintptr_t)name >> 3) & (d->dk_cap - 1);
    while (d->dk_name[h] && d->dk_name[h] != name)
        h = (h + 1) & (d->dk_cap - 1);
    if (!d->dk_name[h]) {
        d->dk_name[h] = name;
        d->dk_node[h] = node_new(d, CFG_SCALAR, DEFAULT_SRC, 0, 0, name, 0);
        mark_implicit(d->dk_node[h], at);
        d->dk_n++;
    }
    return d->dk_node[h];
}

int cfg_put_at(cfg_doc *d, cfg_node *map, const char *key, const char *yaml, const cfg_node *at,
               err *e)
{
    cfg_node *k, *v;
    int r = cfgi_implicit_entry(d, key, yaml, at, &k, &v, e);
    if (!r)
        cfgi_map_put(map, k, v);
    return r;
}

/* ---- --set ------------------------------------------------------------ */

int cfg_set(cfg_doc *d, const char *a, err *e)
{
    const char *SET = doc_intern_name(d, "--set");
    const char *eq = strchr(a, '=');
    if (!eq || eq == a)
        return ERR(e, AISIM_EINVAL, "--set %s: expected key.path=value", a);
    char path[512];
    size_t plen = (size_t)(eq - a);
    if (plen >= sizeof path)
        return ERR(e, AISIM_EINVAL, "--set: key path too long");
    memcpy(path, a, plen);
    path[plen] = '\0';

    cfg_node *cur = d->root, *parent = NULL;
    size_t parent_i = 0;
    char done[512] = "";
    const char *p = path;
    while (*p) {
        char comp[256];
        size_t k = 0;
        int is_index = 0;
        if (*p == '[') {
            p++;
            while (*p && *p != ']' && k + 1 < sizeof comp)
                comp[k++] = *p++;
            if (*p != ']')
                return ERR(e, AISIM_EINVAL, "--set %s: unclosed '['", path);
            p++;
            is_index = 1;
        } else {
            while (*p && *p != '.' && *p != '[' && k + 1 < sizeof comp)
                comp[k++] = *p++;
        }
        comp[k] = '\0';
        if (*p == '.' && !*++p)
            return ERR(e, AISIM_EINVAL, "--set %s: empty key after the last '.'", path);
        if (k == 0)
            return ERR(e, AISIM_EINVAL, "--set %s: empty key in path", path);
        int last = *p == '\0';
        /* A null or absent node on the way becomes a map. */
        if (cfg_is_null(cur) && !is_index) {
            cfgi_null_to_map(cur);
        }
        char next[512];
        if (cur->kind == CFG_SEQ) {
            char *end;
            errno = 0;
            unsigned long idx = strtoul(comp, &end, 10);
            if (*end || errno || !isdigit((unsigned char)comp[0]))
                return ERR(e, AISIM_EINVAL, "--set %s: %s is a list; expected an index, found "
                           "\"%s\"", path, *done ? done : "(root)", comp);
            if (idx >= cur->l.n)
                return ERR(e, AISIM_EINVAL, "--set %s: %s has %zu elements; index %lu is out of "
                           "range", path, *done ? done : "(root)", (size_t)cur->l.n, idx);
            cfg_path_index(next, sizeof next, done, idx);
            parent = cur;
            parent_i = idx;
        } else if (cur->kind == CFG_MAP && !is_index) {
            cfg_path(next, sizeof next, done, comp);
            ssize_t i = cfgi_map_find(cur, comp);
            if (i < 0) {
                cfg_node *kn = node_new(d, CFG_SCALAR, SET, 1, 1, comp, 0);
                cfg_node *vn = node_new(d, last ? CFG_SCALAR : CFG_MAP, SET, 1, 1,
                                        last ? "" : NULL, 0);
                node_push(cur, kn, vn);
                i = (ssize_t)cur->l.n - 1;
            }
            parent = cur;
            parent_i = (size_t)i;
        } else {
            return ERR(e, AISIM_EINVAL, "--set %s: %s is %s; cannot address \"%s\" in it", path,
                       *done ? done : "(root)", cur->kind == CFG_MAP ? "a map" : "a value", comp);
        }
        snprintf(done, sizeof done, "%s", next);
        cur = parent->l.vals[parent_i];
    }
    cfg_node *v;
    const char *val = eq + 1;
    int r = parse_text(d, SET, val, strlen(val), 0, (int)(val - a), done, &v, e);
    if (r)
        return r;
    if (!v) {
        v = node_new(d, CFG_SCALAR, SET, 1, (int)(val - a) + 1, "", 0);
    }
    parent->l.vals[parent_i] = v;
    return 0;
}

/* ---- emitting --------------------------------------------------------- */

static int emit_node(yaml_emitter_t *em, const cfg_node *n)
{
    yaml_event_t ev;
    switch (n->kind) {
    case CFG_SCALAR:
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)node_str(n),
                                     (int)strlen(node_str(n)), 1, 1, n->quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                     : YAML_ANY_SCALAR_STYLE);
        return yaml_emitter_emit(em, &ev);
    case CFG_MAP:
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (!yaml_emitter_emit(em, &ev))
            return 0;
        for (size_t i = 0; i < n->l.n; i++)
            if (!emit_node(em, n->l.keys[i]) || !emit_node(em, n->l.vals[i]))
                return 0;
        yaml_mapping_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev);
    case CFG_SEQ: {
        /* Short lists of scalars read best on one line. */
        int flow = n->l.n <= 16;
        for (size_t i = 0; i < n->l.n && flow; i++)
            flow = n->l.vals[i]->kind == CFG_SCALAR;
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                             flow ? YAML_FLOW_SEQUENCE_STYLE
                                                  : YAML_BLOCK_SEQUENCE_STYLE);
        if (!yaml_emitter_emit(em, &ev))
            return 0;
        for (size_t i = 0; i < n->l.n; i++)
            if (!emit_node(em, n->l.vals[i]))
                return 0;
        yaml_sequence_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev);
    }
    }
    return 0;
}

int cfg_emit(const cfg_node *root, FILE *f, err *e)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em))
        return ERR(e, AISIM_EIO, "cannot initialise the YAML emitter");
    yaml_emitter_set_output_file(&em, f);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, 100);
    int ok = 1;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    ok = ok && yaml_emitter_emit(&em, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    ok = ok && yaml_emitter_emit(&em, &ev);
    ok = ok && emit_node(&em, root);
    yaml_document_end_event_initialize(&ev, 1);
    ok = ok && yaml_emitter_emit(&em, &ev);
    yaml_stream_end_event_initialize(&ev);
    ok = ok && yaml_emitter_emit(&em, &ev);
    int r = ok ? 0 : ERR(e, AISIM_EIO, "YAML emitter: %s", em.problem ? em.problem : "failed");
    yaml_emitter_delete(&em);
    return r;
}

