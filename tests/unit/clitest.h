/*
 * clitest.h - running the aisim binary from a test: $AISIM (set by `make
 * test`, default build/aisim), its exit status, stdout and stderr.  One
 * test program includes it once (static helpers).
 */
#ifndef AISIM_CLITEST_H
#define AISIM_CLITEST_H

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static const char *aisim;

/* A file's text, or "" if there is none (free it). */
static inline char *slurp(const char *path)
{
    return access(path, F_OK) == 0 ? tu_slurp(path, NULL) : calloc(1, 1);
}

/* Runs aisim with args (NULL-terminated); returns the exit status and the
 * output (caller frees). */
static inline int run_aisim(const char *const *args, char **outp, char **errout)
{
    char po[128], pe[128];
    snprintf(po, sizeof po, "%s/stdout", tu_tmp);
    snprintf(pe, sizeof pe, "%s/stderr", tu_tmp);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fo, 1);
        dup2(fe, 2);
        const char *argv[32] = {aisim};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 1] = args[i];
        execv(aisim, (char *const *)argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    char *o = slurp(po), *e = slurp(pe);
    if (outp)
        *outp = o;
    else
        free(o);
    if (errout)
        *errout = e;
    else
        free(e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline int setup(void **state)
{
    aisim = getenv("AISIM");
    if (!aisim)
        aisim = "build/aisim";
    return tu_setup(state);
}

/* True if path exists. */
static inline int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Writes text to dir/name (fails the test if it cannot). */
static inline void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
