/*
 * test_sweep_mpi.c - `mpirun -n N aisim sweep` (issue 14.4): three ranks
 * (oversubscribed on this machine) give a sweep.csv and sweep.json byte-
 * identical to --jobs 1; more ranks than points leave ranks idle and the
 * same table; a point that fails on one rank is named with its rank, exit
 * 1 and no table.  Built without Open MPI, a sweep under mpirun stops with
 * the message that says so (exit 2).  Skipped when mpirun is absent.
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
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static const char *aisim;

/* Runs `mpirun --allow-run-as-root --oversubscribe -n ranks aisim args...`;
 * returns its exit status, its stderr in *err (free it). */
static int mpirun(int ranks, const char *const *args, char **errout)
{
    char pe[128], n[16];
    snprintf(pe, sizeof pe, "%s/stderr", tu_tmp);
    snprintf(n, sizeof n, "%d", ranks);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open("/dev/null", O_WRONLY);
        int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fo, 1);
        dup2(fe, 2);
        const char *argv[40] = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-n", n,
                                aisim};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 6] = args[i];
        execvp("mpirun", (char *const *)argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    *errout = tu_slurp(pe, NULL);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int sweep_plain(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open("/dev/null", O_WRONLY);
        dup2(fo, 1);
        execl(aisim, aisim, "sweep", "core/mm1", "-q", "--jobs", "1", "--out", dir, "--vary",
              "queue.customers=1000,2000", "--vary", "queue.arrival.mean=2ms,1.25ms,1ms",
              (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = tu_slurp(a, &na), *y = tu_slurp(b, &nb);
    if (na != nb || memcmp(x, y, na) != 0)
        fail_msg("%s and %s differ", a, b);
    free(x);
    free(y);
}

static void test_mpi_sweep_matches_jobs_1_and_names_failures(void **state)
{
    (void)state;
    if (system("command -v mpirun >/dev/null 2>&1") != 0)
        skip();
    char ref[128], d3[128], d9[128], bad[128], p[256], q[256], *e;
    snprintf(ref, sizeof ref, "%s/ref", tu_tmp);
    snprintf(d3, sizeof d3, "%s/mpi3", tu_tmp);
    snprintf(d9, sizeof d9, "%s/mpi9", tu_tmp);
    snprintf(bad, sizeof bad, "%s/bad", tu_tmp);
    assert_int_equal(sweep_plain(ref), 0);
    const char *args3[] = {"sweep", "core/mm1", "-q", "--out", d3, "--vary",
                           "queue.customers=1000,2000", "--vary",
                           "queue.arrival.mean=2ms,1.25ms,1ms", NULL};
    int rc = mpirun(3, args3, &e);
#ifndef AISIM_MPI
    assert_int_equal(rc, 2);
    assert_non_null(strstr(e, "this aisim was built without MPI"));
    free(e);
    return;
#endif
    if (rc)
        fail_msg("mpirun -n 3: exit %d: %s", rc, e);
    free(e);
    const char *files[] = {"sweep.csv", "sweep.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", ref, files[i]);
        snprintf(q, sizeof q, "%s/%s", d3, files[i]);
        same_file(p, q);
    }
    /* Two points, five ranks: three idle, the same table as two points
     * with --jobs 1 would give (the first two rows' runs). */
    const char *args9[] = {"sweep", "core/mm1", "-q", "--out", d9, "--vary",
                           "queue.customers=1000,2000", NULL};
    assert_int_equal(mpirun(5, args9, &e), 0);
    free(e);
    snprintf(p, sizeof p, "%s/sweep.csv", d9);
    char *t = tu_slurp(p, NULL);
    int lines = 0;
    for (char *c = t; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 3);
    free(t);
    /* The second of three points fails on rank 1 (of 3). */
    const char *argsb[] = {"sweep", "core/mm1", "-q", "--out", bad, "--set",
                           "queue.customers=100", "--vary",
                           "queue.arrival={dist: exponential, mean: 1ms},"
                           "{dist: constant, value: 1000000s},"
                           "{dist: exponential, mean: 2ms}", NULL};
    assert_int_equal(mpirun(3, argsb, &e), 1);
    if (!strstr(e, "aisim sweep: point arrival=dist_constant_value_1000000s failed on rank 1; "
                   "no sweep.csv written"))
        fail_msg("got: %s", e);
    free(e);
    snprintf(p, sizeof p, "%s/sweep.csv", bad);
    assert_int_equal(access(p, F_OK), -1);
}

static int setup(void **state)
{
    aisim = getenv("AISIM");
    if (!aisim)
        aisim = "build/aisim";
    /* Open MPI's own allocations at exit are not ours (SAN=1 builds). */
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    setenv("OMPI_MCA_btl", "self,vader", 1);
    return tu_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mpi_sweep_matches_jobs_1_and_names_failures),
    };
    return cmocka_run_group_tests(tests, setup, tu_teardown);
}
