/*
 * err.c - error records, code names, and allocation that cannot fail (it
 * exits 1 with a message instead).
 */
#include "aisim/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rewrites control characters (bytes below 0x20, and 0x7f) as \xNN in
 * place, as far as the buffer allows: a message stays one printable line
 * whatever bytes a scenario smuggled into a value or a key. */
static void escape_controls(char *msg, size_t size)
{
    char tmp[sizeof ((err *)0)->msg];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && o + 1 < sizeof tmp; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            tmp[o++] = (char)*p;
        } else {
            if (o + 5 > sizeof tmp)
                break;
            snprintf(tmp + o, 5, "\\x%02x", *p);
            o += 4;
        }
    }
    tmp[o] = '\0';
    snprintf(msg, size, "%s", tmp);
}

int err_set_(err *e, int code, const char *src, int line, const char *fmt, ...)
{
    if (!e)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    escape_controls(e->msg, sizeof e->msg);
    e->code = code;
    e->src = src;
    e->src_line = line;
    return code;
}

void err_prefix(err *e, const char *fmt, ...)
{
    if (!e)
        return;
    char old[sizeof e->msg];
    memcpy(old, e->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof e->msg)
        snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %.*s",
                 (int)(sizeof e->msg - (size_t)n), old);
    escape_controls(e->msg, sizeof e->msg);
}

void aisim_oom(size_t n)
{
    /* Exit 1 (the run failed), not abort()'s 134: running out of memory is
     * a failure of the run, not a bug.  _exit: flushing other streams could
     * need memory, and nothing written so far is published anyway. */
    fprintf(stderr, "aisim: out of memory (allocating %zu bytes)\n", n);
    _exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        aisim_oom(n);
    return p;
}

void *xaligned_alloc(size_t align, size_t n)
{
    n = (n + align - 1) / align * align;    /* C11 asks for a multiple */
    void *p = aligned_alloc(align, n ? n : align);
    if (!p)
        aisim_oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        aisim_oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        aisim_oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}
