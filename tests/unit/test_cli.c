/*
 * test_cli.c - the aisim command as a user meets it: exit codes, help, list,
 * the corpus of invalid scenarios (exact message, exit 2, no run directory),
 * and an interrupted run that leaves nothing that looks complete.
 *
 * The binary is $AISIM (set by `make test`), run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static const char *aisim;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(1, (size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    return b;
}

/* Runs aisim with args (NULL-terminated); returns the exit status and the
 * output (caller frees). */
static int run_aisim(const char *const *args, char **out, char **errout)
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
    if (out)
        *out = o;
    else
        free(o);
    if (errout)
        *errout = e;
    else
        free(e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int setup(void **state)
{
    aisim = getenv("AISIM");
    if (!aisim)
        aisim = "build/aisim";
    return tu_setup(state);
}

static void test_cli_exit_codes_for_usage(void **state)
{
    (void)state;
    char *o, *e;
    assert_int_equal(run_aisim((const char *[]){"version", NULL}, &o, NULL), 0);
    assert_non_null(strstr(o, "aisim "));
    free(o);
    assert_int_equal(run_aisim((const char *[]){NULL}, NULL, NULL), 2);
    assert_int_equal(run_aisim((const char *[]){"frobnicate", NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "unknown command \"frobnicate\""));
    free(e);
    assert_int_equal(run_aisim((const char *[]){"run", NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "missing SCENARIO"));
    free(e);
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "--bogus", NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "unknown or incomplete option \"--bogus\""));
    free(e);
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "--seed", "-4", NULL}, NULL,
                               NULL), 2);
    assert_int_equal(run_aisim((const char *[]){"run", "no/such", NULL}, NULL, &e), 2);
    assert_string_equal(e, "no/such: no such scenario file or built-in example (see aisim list)\n");
    free(e);
    assert_int_equal(run_aisim((const char *[]){"list", "extra", NULL}, NULL, NULL), 2);
}

static void test_cli_help_for_every_command(void **state)
{
    (void)state;
    const char *cmds[] = {"run", "check", "list", "demo", "bench", "plot", "version", "help"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *o;
        assert_int_equal(run_aisim((const char *[]){cmds[i], "--help", NULL}, &o, NULL), 0);
        char want[64];
        snprintf(want, sizeof want, "usage: aisim %s", cmds[i]);
        if (!strstr(o, want))
            fail_msg("%s --help printed: %s", cmds[i], o);
        free(o);
    }
}

static void test_cli_list_and_check(void **state)
{
    (void)state;
    char *o;
    assert_int_equal(run_aisim((const char *[]){"list", NULL}, &o, NULL), 0);
    assert_non_null(strstr(o, "queue"));
    assert_non_null(strstr(o, "core/mm1"));
    free(o);
    assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", NULL}, &o, NULL), 0);
    assert_string_equal(o, "core/mm1: ok\n");
    free(o);
    assert_int_equal(run_aisim((const char *[]){"check", "examples/core/md1.yaml", "--set",
                                                "queue.warmup=5", NULL}, &o, NULL), 0);
    free(o);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void test_cli_bad_scenarios_exit_2_with_exact_message(void **state)
{
    (void)state;
    DIR *d = opendir("tests/scenarios/bad");
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[512], outdir[256];
        snprintf(path, sizeof path, "tests/scenarios/bad/%s", de->d_name);
        char *text = slurp(path);
        assert_true(strncmp(text, "# expect: ", 10) == 0);
        char *nl = strchr(text, '\n');
        *nl = '\0';
        const char *want = text + 10;
        char *e;
        int rc = run_aisim((const char *[]){"check", path, NULL}, NULL, &e);
        if (rc != 2)
            fail_msg("%s: check exited %d", path, rc);
        char *enl = strchr(e, '\n');
        if (!enl || enl[1] != '\0')
            fail_msg("%s: expected exactly one line, got: %s", path, e);
        *enl = '\0';
        if (strcmp(e, want) != 0)
            fail_msg("%s:\n  want: %s\n  got:  %s", path, want, e);
        free(e);
        /* `run` fails the same way and creates no run directory. */
        snprintf(outdir, sizeof outdir, "%s/run-%d", tu_tmp, n);
        rc = run_aisim((const char *[]){"run", path, "--out", outdir, NULL}, NULL, &e);
        assert_int_equal(rc, 2);
        assert_true(strncmp(e, want, strlen(want)) == 0);
        assert_false(exists(outdir));
        free(e);
        free(text);
        n++;
    }
    closedir(d);
    assert_true(n >= 30);
}

static void test_cli_set_errors_and_seed_override(void **state)
{
    (void)state;
    char *e, *o;
    assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", "--set",
                                                "queue.customers=lots", NULL}, NULL, &e), 2);
    assert_string_equal(e, "--set:1:17: queue.customers: expected an integer, found \"lots\"\n");
    free(e);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/seeded", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"run", "core/md1", "-q", "--seed", "77", "--set",
                                                "queue.customers=1000", "--out", dir, NULL},
                               &o, NULL), 0);
    free(o);
    char p[256];
    snprintf(p, sizeof p, "%s/scenario.yaml", dir);
    char *y = slurp(p);
    assert_non_null(strstr(y, "seed: 77\n"));
    assert_non_null(strstr(y, "customers: 1000\n"));
    free(y);
    snprintf(p, sizeof p, "%s/summary.json", dir);
    y = slurp(p);
    assert_non_null(strstr(y, "\"seed\": 77,"));
    free(y);
}

static void test_cli_interrupted_run_leaves_nothing_complete(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/interrupted", tu_tmp);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(aisim, aisim, "run", "core/mm1", "--set", "queue.customers=1e12", "--out", dir,
              (char *)NULL);
        _exit(127);
    }
    /* Wait until the run has started writing (its directory exists). */
    for (int i = 0; i < 500 && !exists(dir); i++)
        usleep(10000);
    usleep(200000);
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    /* The directory this run created is gone again. */
    assert_false(exists(dir));
}

static void test_cli_rerun_replaces_earlier_outputs(void **state)
{
    (void)state;
    char dir[128], p[256];
    snprintf(dir, sizeof dir, "%s/rerun", tu_tmp);
    /* First run writes queue.csv; the second does not sample, so its
     * directory must not keep the stale queue.csv. */
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "-q", "--set",
                                                "queue.customers=1000", "--out", dir, NULL},
                               NULL, NULL), 0);
    snprintf(p, sizeof p, "%s/queue.csv", dir);
    assert_true(exists(p));
    assert_int_equal(run_aisim((const char *[]){"run", "core/md1", "-q", "--set",
                                                "queue.customers=1000", "--out", dir, NULL},
                               NULL, NULL), 0);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/summary.json", dir);
    assert_true(exists(p));
}

static void test_cli_plot_draws_png_with_gnuplot(void **state)
{
    (void)state;
    char dir[128], p[256];
    snprintf(dir, sizeof dir, "%s/plotted", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "-q", "--set",
                                                "queue.customers=20000", "--set",
                                                "queue.sample_interval=100ms", "--out", dir, NULL},
                               NULL, NULL), 0);
    char *o;
    assert_int_equal(run_aisim((const char *[]){"plot", dir, NULL}, &o, NULL), 0);
    free(o);
    snprintf(p, sizeof p, "%s/queue.png", dir);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    unsigned char sig[8];
    assert_int_equal(fread(sig, 1, 8, f), 8);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
    assert_true(size > 5000);               /* a drawn figure, not an empty canvas */
    snprintf(p, sizeof p, "%s/queue.gp", dir);
    char *gp = slurp(p);
    assert_non_null(strstr(gp, "set output 'queue.png'"));
    free(gp);
    /* Not a run directory: a clear error, exit 2. */
    char *e;
    assert_int_equal(run_aisim((const char *[]){"plot", tu_tmp, NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "not a completed aisim run directory"));
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_exit_codes_for_usage),
        cmocka_unit_test(test_cli_help_for_every_command),
        cmocka_unit_test(test_cli_list_and_check),
        cmocka_unit_test(test_cli_bad_scenarios_exit_2_with_exact_message),
        cmocka_unit_test(test_cli_set_errors_and_seed_override),
        cmocka_unit_test(test_cli_interrupted_run_leaves_nothing_complete),
        cmocka_unit_test(test_cli_rerun_replaces_earlier_outputs),
        cmocka_unit_test(test_cli_plot_draws_png_with_gnuplot),
    };
    return cmocka_run_group_tests_name("cli", tests, setup, tu_teardown);
}
