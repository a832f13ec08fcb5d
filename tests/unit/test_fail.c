/*
 * test_fail.c - failures of the machine rather than of the input, as the
 * README promises them: out of memory exits 1 with a message (not abort()'s
 * 134), a full disk names the file that could not be written and why, and
 * nothing is published; error messages stay one printable line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aisim/err.h"
#include "aisim/out.h"
#include "testutil.h"

/* Under AddressSanitizer a failed malloc must return NULL, as it does
 * without it, instead of ASan reporting and aborting. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static void test_out_of_memory_exits_1_with_a_message(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/oom.err", tu_tmp);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        void *volatile p = xmalloc((size_t)PTRDIFF_MAX);
        (void)p;
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st))
        fail_msg("killed by signal %d", WTERMSIG(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    /* The last line (AddressSanitizer may warn before it). */
    char *msg = tu_slurp(path, NULL);
    char want[96];
    snprintf(want, sizeof want, "aisim: out of memory (allocating %zu bytes)\n",
             (size_t)PTRDIFF_MAX);
    size_t ml = strlen(msg), wl = strlen(want);
    int ok = ml >= wl && strcmp(msg + ml - wl, want) == 0 && (ml == wl || msg[ml - wl - 1] == '\n');
    if (!ok)
        fprintf(stderr, "stderr of the child: %s", msg);
    free(msg);
    assert_true(ok);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* run.log is written fine, the table hits a full disk (/dev/full behind
 * the stream): the error names the table and says why, and no file of the
 * run is published. */
static void test_disk_full_names_the_file_and_the_reason(void **state)
{
    (void)state;
    char dir[128], p[256];
    snprintf(dir, sizeof dir, "%s/full", tu_tmp);
    err e = {0};
    out *o;
    assert_int_equal(out_open(dir, 0, &o, &e), 0);
    FILE *log = out_file(o, "run.log", &e);
    assert_non_null(log);
    fprintf(log, "a line\n");
    FILE *f = out_file(o, "flows.csv", &e);
    assert_non_null(f);
    assert_non_null(freopen("/dev/full", "w", f));
    for (int i = 0; i < 10000; i++)
        fprintf(f, "%d,0.125\n", i);
    assert_non_null(out_file(o, "summary.json", &e));
    int r = out_commit(o, &e);
    assert_int_equal(r, AISIM_EIO);
    snprintf(p, sizeof p, "cannot write %s/flows.csv: No space left on device", dir);
    assert_string_equal(e.msg, p);
    snprintf(p, sizeof p, "%s/summary.json", dir);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/run.log", dir);
    assert_false(exists(p));
}

/* Whatever bytes reach a message, it stays one printable line. */
static void test_messages_escape_control_bytes(void **state)
{
    (void)state;
    err e = {0};
    ERR(&e, AISIM_EINVAL, "found \"%s\"", "a\nb\x01\x7f");
    assert_string_equal(e.msg, "found \"a\\x0ab\\x01\\x7f\"");
    err_prefix(&e, "at %s", "x\ty");
    assert_string_equal(e.msg, "at x\\x09y: found \"a\\x0ab\\x01\\x7f\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_memory_exits_1_with_a_message),
        cmocka_unit_test(test_disk_full_names_the_file_and_the_reason),
        cmocka_unit_test(test_messages_escape_control_bytes),
    };
    return cmocka_run_group_tests_name("fail", tests, tu_setup, tu_teardown);
}
