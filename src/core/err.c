/*
 * err.c - error records, code names, and allocation that cannot fail.
 */
#include "aisim/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int err_set_(err *e, int code, const char *src, int line, const char *fmt, ...)
{
    if (!e)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
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
}

const char *aisim_errname(int code)
{
    switch (code) {
#define AISIM_ERR_NAME(name, val, desc) case val: return #name;
        AISIM_ERRNO_MAP(AISIM_ERR_NAME)
#undef AISIM_ERR_NAME
    }
    return "EUNKNOWN";
}

const char *aisim_strerror(int code)
{
    switch (code) {
#define AISIM_ERR_DESC(name, val, desc) case val: return desc;
        AISIM_ERRNO_MAP(AISIM_ERR_DESC)
#undef AISIM_ERR_DESC
    }
    return "unknown error";
}

static void oom(size_t n)
{
    fprintf(stderr, "aisim: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}
