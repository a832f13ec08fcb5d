/*
 * err.h - error codes and the error record every fallible call fills.
 *
 * aisim has three classes of error (see docs/architecture notes in README):
 *   - bad input (scenario, data files, command line): the function returns a
 *     negative AISIM_E* code and fills an `err`; the CLI prints err.msg and
 *     exits 2 without writing results;
 *   - broken invariants: assert(), which stays on in test and debug builds;
 *   - out of memory: xmalloc() and friends print a message and exit 1.
 *
 * Messages about scenario input start with "file:line:column: key.path: ",
 * then say what was expected and what was found (cfg_err() builds them).
 */
#ifndef AISIM_ERR_H
#define AISIM_ERR_H

#include <stddef.h>

/* X(name, value, description) */
#define AISIM_ERRNO_MAP(X)                                   \
    X(OK,      0,  "success")                                \
    X(EINVAL,  -1, "invalid input")                          \
    X(ENOENT,  -2, "not found")                              \
    X(EIO,     -3, "input/output error")                     \
    X(ERANGE,  -4, "value out of range")                     \
    X(ESOLVER, -5, "solver failed")                          \
    X(ERUN,    -6, "run failed")

enum {
#define AISIM_ERR_ENUM(name, val, desc) AISIM_##name = (val),
    AISIM_ERRNO_MAP(AISIM_ERR_ENUM)
#undef AISIM_ERR_ENUM
};

typedef struct err {
    int code;           /* 0 or a negative AISIM_E* value */
    char msg[1024];     /* human-readable, one line, no trailing newline */
    const char *src;    /* aisim source file that raised it (shown under -v) */
    int src_line;       /* line in that file */
} err;

/* Fills *e (if e is not NULL) with code and a printf-style message and
 * returns code, so that `return ERR(e, AISIM_EINVAL, "...")` reads well. */
int err_set_(err *e, int code, const char *src, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define ERR(e, code, ...) err_set_((e), (code), __FILE__, __LINE__, __VA_ARGS__)

/* Prefixes the existing message with "prefix: " (used to add context). */
void err_prefix(err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation that never returns NULL: on out-of-memory it prints
 * "aisim: out of memory (allocating N bytes)" and exits 1 (aisim_oom()). */
void aisim_oom(size_t n) __attribute__((noreturn));
void *xmalloc(size_t n);
/* Aligned to `align` (a power of two); free() releases it. */
void *xaligned_alloc(size_t align, size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
