/*
 * log.h - diagnostics for people, never results.
 *
 * LOG() checks the level before evaluating its arguments (as Redis's
 * serverLog does).  Lines go to stderr (from LOG_WARN up, or everything with
 * -v) and to the run's run.log when one is attached.  Nothing logs on the
 * per-packet or per-event path: results are counters, written through out.h.
 * The logger is process-wide; it holds no simulation state.
 */
#ifndef AISIM_LOG_H
#define AISIM_LOG_H

#include <stdio.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

extern int log_stderr_level;    /* lines at or above go to stderr */
extern FILE *log_file;          /* run.log of the current run, or NULL */

void log_write(enum log_level lvl, const char *comp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define LOG(lvl, comp, ...)                                                   \
    do {                                                                      \
        if ((lvl) >= log_stderr_level || (log_file && (lvl) >= LOG_INFO))     \
            log_write((lvl), (comp), __VA_ARGS__);                            \
    } while (0)

#endif
