/*
 * log.c - the process-wide diagnostic logger (see log.h).
 */
#include "aisim/log.h"

#include <stdarg.h>

int log_stderr_level = LOG_WARN;
FILE *log_file = NULL;

static const char *const level_name[] = {"debug", "info", "warning", "error"};

void log_write(enum log_level lvl, const char *comp, const char *fmt, ...)
{
    va_list ap;
    if ((int)lvl >= log_stderr_level) {
        fprintf(stderr, "aisim: %s: %s: ", level_name[lvl], comp);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    if (log_file && lvl >= LOG_INFO) {
        fprintf(log_file, "%s: %s: ", level_name[lvl], comp);
        va_start(ap, fmt);
        vfprintf(log_file, fmt, ap);
        va_end(ap);
        fputc('\n', log_file);
    }
}
