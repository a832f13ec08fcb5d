/*
 * test_cli.c - the aisim command as a user meets it: exit codes, help, list,
 * the corpus of invalid scenarios (exact message, exit 2, no run directory),
 * an interrupted run that leaves nothing that looks complete (sweeps:
 * test_cli_sweep.c).
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
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clitest.h"

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
    /* version too (it used to print and exit 0, ignoring the word) */
    assert_int_equal(run_aisim((const char *[]){"version", "extra", NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "aisim version: takes no arguments"));
    free(e);
}

static void test_cli_help_for_every_command(void **state)
{
    (void)state;
    const char *cmds[] = {"run", "check", "sweep", "list", "demo", "bench", "plot", "version",
                          "help"};
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
    /* Each example with its description (its scenario's description:). */
    const char *line = strstr(o, "\n  core/mm1 ");
    const char *end = line ? strchr(line + 1, '\n') : NULL;
    const char *d = line ? strstr(line, "M/M/1 queue at load 0.8, checked against the analytic "
                                        "mean wait\n") : NULL;
    if (!d || d > end)
        fail_msg("list printed:\n%s", o);
    free(o);
    assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", NULL}, &o, NULL), 0);
    assert_string_equal(o, "core/mm1: ok\n");
    free(o);
    assert_int_equal(run_aisim((const char *[]){"check", "examples/core/md1.yaml", "--set",
                                                "queue.warmup=5", NULL}, &o, NULL), 0);
    free(o);
}

/* aisim run prints the model's headlines first, with units, then the
 * counters that apply: a flow-level run has no packet counters, an
 * analytical training run no network counters and no "0 events". */
static void test_cli_run_prints_headlines_then_counters(void **state)
{
    (void)state;
    char d[256], *o;
    snprintf(d, sizeof d, "%s/hl-mm1", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "--out", d, "-q", NULL}, &o,
                               NULL), 0);
    const char *want = "results:\n"
                       "  mean wait                      3.969 ms\n"
                       "  mean wait, 95% CI half-width   50.54 us\n"
                       "  mean wait, analytic            4 ms\n"
                       "  error against analytic         -0.7823 %\n"
                       "  server utilisation             80 %\n"
                       "  customers served               2000000\n"
                       "counters:\n"
                       "  mean_time_in_system_s          0.00496876\n";
    if (!strstr(o, want))
        fail_msg("core/mm1 printed:\n%s", o);
    assert_null(strstr(o, "  utilisation "));       /* a headline is not repeated */
    free(o);
    /* summary.json says which layout it has, first. */
    char p0[300];
    snprintf(p0, sizeof p0, "%s/summary.json", d);
    o = slurp(p0);
    assert_int_equal(strncmp(o, "{\n  \"schema_version\": 1,\n  \"aisim_version\"", 42), 0);
    free(o);

    snprintf(d, sizeof d, "%s/hl-flow", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"run", "ai/allreduce-flow", "--out", d, "-q",
                                                NULL}, &o, NULL), 0);
    if (!strstr(o, "results:\n  mean bus bandwidth             4.742 GB/s\n") ||
        !strstr(o, "  plane                          flow\n"))
        fail_msg("ai/allreduce-flow printed:\n%s", o);
    static const char *const packet_only[] = {"packet_hops", "bytes_dropped", "drops",
                                              "pfc_pauses", "retransmits", "packet drops"};
    for (size_t i = 0; i < sizeof packet_only / sizeof *packet_only; i++)
        if (strstr(o, packet_only[i]))
            fail_msg("a flow-level run printed %s:\n%s", packet_only[i], o);
    free(o);

    snprintf(d, sizeof d, "%s/hl-ana", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"run", "ai/gpt13b", "--set",
                                                "training.comm=analytical", "--out", d, "-q",
                                                NULL}, &o, NULL), 0);
    char want2[512];
    snprintf(want2, sizeof want2, "run directory: %s\nresults:\n"
             "  jobs    GPUs  iteration   compute  exposed comm.       throughput      MFU\n"
             "  gpt13b   128   502.2 ms  208.2 ms         294 ms  65.25 ktokens/s  13.41 %%\n", d);
    assert_string_equal(o, want2);
    free(o);
    char p[300];
    snprintf(p, sizeof p, "%s/run.log", d);
    o = slurp(p);
    assert_null(strstr(o, "0 events"));
    assert_non_null(strstr(o, "evaluated without simulating events"));
    free(o);

    /* -v: every result, nested ones too. */
    snprintf(d, sizeof d, "%s/hl-mm1-v", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "--out", d, "-q", "-v", NULL},
                               &o, NULL), 0);
    assert_non_null(strstr(o, "counters (every result):\n"));
    assert_non_null(strstr(o, "  analytic.model                 M/M/1\n"));
    free(o);
}

/* Mistakes a user makes, each answered with the fix, exit 2, no run. */
static void test_cli_bad_usage_names_the_fix(void **state)
{
    (void)state;
    static const struct { const char *args[8]; const char *msg; } c[] = {
        {{"run", "net/incst", NULL},
         "net/incst: no such scenario file or built-in example; did you mean net/incast? "
         "(see aisim list)\n"},
        {{"run", "core/mm2", NULL},
         "core/mm2: no such scenario file or built-in example; did you mean core/mm1? "
         "(see aisim list)\n"},
        {{"run", "net/dumbbell", "--set", "net.transport.cc=dcqcn", NULL},
         "--set:1:18: net.transport.cc: expected one of: newreno, dctcp, found \"dcqcn\"; "
         "\"dcqcn\" is a cc of transport rocev2: set transport.name: rocev2\n"},
        {{"run", "net/dumbbell", "--set", "net.transport.cc=DCTCP", NULL},
         "--set:1:18: net.transport.cc: expected one of: newreno, dctcp, found \"DCTCP\"; "
         "names are case-sensitive: did you mean \"dctcp\"?\n"},
        {{"check", "net/dumbbell", "--set", "net.transport.cc", "dctcp", NULL},
         "aisim check: --set expects key.path=value, found \"net.transport.cc\" without '='; "
         "write --set net.transport.cc=dctcp\n"},
        {{"sweep", "net/dumbbell", "--seeds", "2", "--set", "seed", NULL},
         "aisim sweep: --set expects key.path=value, found \"seed\" without '='\n"},
        {{"run", "net/dumbbell", "--seeds", "3", NULL},
         "aisim run: run takes one --seed N; for several seeds run a sweep: aisim sweep "
         "SCENARIO --seeds N (or A..B)\n"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char *e;
        char d[256];
        snprintf(d, sizeof d, "%s/bad-usage-%zu", tu_tmp, i);
        const char *args[12];
        size_t n = 0;
        while (c[i].args[n]) {
            args[n] = c[i].args[n];
            n++;
        }
        args[n++] = "--out";
        args[n++] = d;
        args[n] = NULL;
        assert_int_equal(run_aisim(args, NULL, &e), 2);
        /* the first line is the message (a usage line may follow) */
        char *nl = strchr(e, '\n');
        if (nl)
            nl[1] = 0;
        assert_string_equal(e, c[i].msg);
        assert_false(exists(d));
        free(e);
    }
}


/* The path of the next .yaml file of corpus directory `dir` (open as d)
 * in path; 0 at the end. */
static int next_yaml(DIR *d, const char *dir, char *path, size_t n)
{
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len >= 6 && strcmp(de->d_name + len - 5, ".yaml") == 0) {
            snprintf(path, n, "%s/%s", dir, de->d_name);
            return 1;
        }
    }
    return 0;
}

static void test_cli_bad_scenarios_exit_2_with_exact_message(void **state)
{
    (void)state;
    DIR *d = opendir("tests/scenarios/bad");
    assert_non_null(d);
    int n = 0;
    char path[512], outdir[256];
    while (next_yaml(d, "tests/scenarios/bad", path, sizeof path)) {
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

/* The run-time corpus: scenarios that pass `check` but fail when run.
 * Each file starts "# exit: N" and "# expect: FRAGMENT": `run` exits N, its
 * error contains FRAGMENT, and no run directory is left.  The stall limit
 * is lowered to 10^6 events (AISIM_STALL_EVENTS) to keep this fast. */
static void test_cli_badrun_scenarios_fail_with_exit_code_and_message(void **state)
{
    (void)state;
    DIR *d = opendir("tests/scenarios/badrun");
    assert_non_null(d);
    setenv("AISIM_STALL_EVENTS", "1000000", 1);
    int n = 0;
    char path[512], outdir[256], *e;
    while (next_yaml(d, "tests/scenarios/badrun", path, sizeof path)) {
        char *text = slurp(path);
        int want_rc;
        char want[512];
        if (sscanf(text, "# exit: %d\n# expect: %511[^\n]", &want_rc, want) != 2)
            fail_msg("%s: expected \"# exit: N\" and \"# expect: ...\" lines", path);
        free(text);
        assert_int_equal(run_aisim((const char *[]){"check", path, NULL}, NULL, NULL), 0);
        snprintf(outdir, sizeof outdir, "%s/badrun-%d", tu_tmp, n++);
        int rc = run_aisim((const char *[]){"run", path, "-q", "--out", outdir, NULL}, NULL, &e);
        if (rc != want_rc || !strstr(e, want))
            fail_msg("%s: exit %d (want %d), stderr: %s\n  want: %s", path, rc, want_rc, e, want);
        free(e);
        assert_false(exists(outdir));
    }
    closedir(d);
    unsetenv("AISIM_STALL_EVENTS");
    assert_true(n >= 2);
}

/* issue 19.6: what is suspicious but can work passes check with a warning. */
static void test_cli_suspicious_scenarios_warn(void **state)
{
    (void)state;
    char *e;
    assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", "--set",
                                                "queue.arrival={dist: lognormal, mean: 1ms, "
                                                "sigma: 6}", NULL}, NULL, &e), 0);
    assert_string_equal(e, "aisim: warning: dist: queue.arrival: 28.5% of the draws of this "
                           "lognormal (sigma 6) are 0ps\n");
    free(e);
    assert_int_equal(run_aisim((const char *[]){"check", "net/dumbbell", "--set",
                                                "net.topology.link.buffer=2KB", NULL}, NULL, &e),
                     0);
    assert_non_null(strstr(e, "warning: net: net.topology: the buffer of link"));
    assert_non_null(strstr(e, "holds one packet (2000 bytes"));
    free(e);
}

/* issue 19.3: a point that runs past the end of time fails the sweep with
 * exit 1 naming the point (it used to abort the whole process). */
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

/* Starts a run into dir that would go on for hours (with `ignored` set to
 * SIG_IGN first, unless 0) and returns its pid once it has started
 * writing. */
static pid_t start_endless_run(const char *dir, int ignored)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        if (ignored)
            signal(ignored, SIG_IGN);
        execl(aisim, aisim, "run", "core/mm1", "--set", "queue.customers=1e12", "--out", dir,
              (char *)NULL);
        _exit(127);
    }
    /* Wait until the run has started writing (its directory exists). */
    for (int i = 0; i < 500 && !exists(dir); i++)
        usleep(10000);
    usleep(200000);
    return pid;
}

/* Sends sig to an endless run and checks that it exits 1 and removes the
 * directory it made. */
static void interrupt_run(int sig, const char *sub)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", tu_tmp, sub);
    pid_t pid = start_endless_run(dir, 0);
    kill(pid, sig);
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st))
        fail_msg("signal %d: killed by signal %d", sig, WTERMSIG(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    /* The directory this run created is gone again: no .part file left. */
    assert_false(exists(dir));
}

static void test_cli_interrupted_run_leaves_nothing_complete(void **state)
{
    (void)state;
    interrupt_run(SIGINT, "interrupted");
}

/* SIGHUP (the terminal went away) and SIGTERM as SIGINT: exit 1, nothing
 * left; SIGHUP used to kill the run (129) and leave .part files. */
static void test_cli_hangup_and_term_discard_the_run(void **state)
{
    (void)state;
    interrupt_run(SIGHUP, "hangup");
    interrupt_run(SIGTERM, "terminated");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Starts `aisim run SCENARIO --out DIR sets...` whose work is one long
 * computation (sets: NULL-terminated "--set" values), waits until it has
 * made its directory and computed a while, sends SIGTERM and checks that
 * it ends (well within 5 s: the bound is "ends", not a speed), exit 1,
 * leaving nothing.  These runs used to go on for minutes past the signal. */
static void interrupt_long_work(const char *sub, const char *scenario, const char *const *sets)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", tu_tmp, sub);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        const char *argv[32] = {aisim, "run", scenario, "--out", dir};
        int a = 5;
        for (int i = 0; sets[i] && a < 29; i++) {
            argv[a++] = "--set";
            argv[a++] = sets[i];
        }
        execv(aisim, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 1000 && !exists(dir); i++)
        usleep(10000);
    assert_true(exists(dir));
    usleep(500000);
    int st;
    assert_int_equal(waitpid(pid, &st, WNOHANG), 0);     /* still computing */
    double t0 = now_s();
    kill(pid, SIGTERM);
    while (waitpid(pid, &st, WNOHANG) == 0 && now_s() - t0 < 5)
        usleep(10000);
    if (now_s() - t0 >= 5) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        fail_msg("%s: still running 5 s after SIGTERM", sub);
    }
    if (!WIFEXITED(st))
        fail_msg("%s: killed by signal %d", sub, WTERMSIG(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    assert_false(exists(dir));
}

/* Experiments that are one long event: Stellar's GDR measurement (a
 * million connections: 10^11 requests), its start-up experiment (DMAs of
 * 64 bytes: 4 x 10^7 Map Cache lookups in the first access) and a
 * federated round of a wide CNN on large batches. */
static void test_cli_signal_ends_long_single_events(void **state)
{
    (void)state;
    interrupt_long_work("gdr", "stellar/host-gdr",
                        (const char *const[]){"stellar.gdr.connections=1000000", NULL});
    interrupt_long_work("startup", "stellar/host-startup",
                        (const char *const[]){"stellar.startup.workload.dma=64B", NULL});
    interrupt_long_work("cnn", "fedenergy/mnist_cnn",
                        (const char *const[]){"fedenergy.batch=4000", "fedenergy.filters=64",
                                              NULL});
}

/* A run started with SIGHUP ignored (nohup) is not stopped by a hangup:
 * it used to install its handler over the ignored disposition and discard
 * the run when the terminal went away. */
static void test_cli_nohup_run_survives_hangup(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/nohup", tu_tmp);
    pid_t pid = start_endless_run(dir, SIGHUP);
    kill(pid, SIGHUP);
    usleep(300000);
    int st;
    assert_int_equal(waitpid(pid, &st, WNOHANG), 0);     /* still running */
    kill(pid, SIGTERM);
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    assert_false(exists(dir));
}

/* A sweep running its points in child processes (--jobs 2) passes SIGTERM
 * on to them: they discard their runs, the sweep exits 1 saying so, and
 * nothing is left (it used to die at once, its children running on,
 * orphaned, into its directory). */
static void test_cli_interrupted_parallel_sweep_stops_its_points(void **state)
{
    (void)state;
    char dir[128], pt[192], ep[192];
    snprintf(dir, sizeof dir, "%s/psweep", tu_tmp);
    snprintf(pt, sizeof pt, "%s/customers=1e12", dir);
    snprintf(ep, sizeof ep, "%s/psweep.err", tu_tmp);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY), fe = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fe, 2);
        execl(aisim, aisim, "sweep", "core/mm1", "--vary", "queue.customers=1e12,999999999999",
              "--jobs", "2", "--out", dir, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 500 && !exists(pt); i++)
        usleep(10000);
    usleep(300000);
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st))
        fail_msg("killed by signal %d", WTERMSIG(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    char *e = slurp(ep);
    assert_non_null(strstr(e, "aisim sweep: interrupted"));
    free(e);
    assert_false(exists(pt));
    assert_false(exists(dir));
}

/* RoCEv2's timeout is fixed: one at or below a link's round trip makes
 * every QP across it resend its window (a 1 ms link: 9 571 resends of a
 * 1 MB message at 10 Gbps), so configuring one warns, naming the link;
 * the default (320 us) on 1 us links does not. */
static void test_cli_rdma_rto_below_round_trip_warns(void **state)
{
    (void)state;
    char *e;
    assert_int_equal(run_aisim((const char *[]){"check", "rdma/loss-recovery", "--set",
                                                "net.topology.link.delay=1ms", NULL}, NULL, &e),
                     0);
    assert_non_null(strstr(e, "net.transport: rto 320 us is not above the round trip of the "
                              "link h0->sw0 alone (2000 us)"));
    free(e);
    assert_int_equal(run_aisim((const char *[]){"check", "rdma/loss-recovery", NULL}, NULL, &e),
                     0);
    assert_null(strstr(e, "rto"));
    free(e);
}

/* --seed is an option: its errors name it, and its domain is exact. */
static void test_cli_seed_option_is_exact_and_named(void **state)
{
    (void)state;
    const char *bad[] = {"99999999999999999999", "9007199254740993", "-4", "1e3", "", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *e, want[160];
        assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", "--seed", bad[i], NULL},
                                   NULL, &e), 2);
        snprintf(want, sizeof want, "--seed: expected an integer from 0 to 9007199254740992 "
                 "(2^53), found \"%s\"\n", bad[i]);
        assert_string_equal(e, want);
        free(e);
    }
    assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", "--seed",
                                                "9007199254740992", NULL}, NULL, NULL), 0);
    char *e;
    assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", "--set",
                                                "seed=9007199254740993", NULL}, NULL, &e), 2);
    assert_string_equal(e, "--set:1:6: seed: expected an integer in [0, 9007199254740992], "
                        "found \"9007199254740993\"\n");
    free(e);
}

static void test_cli_set_rejects_trailing_dot(void **state)
{
    (void)state;
    char *e;
    assert_int_equal(run_aisim((const char *[]){"check", "core/mm1", "--set",
                                                "queue.customers.=3", NULL}, NULL, &e), 2);
    assert_string_equal(e, "--set queue.customers.: empty key after the last '.'\n");
    free(e);
}

/* A directory or an endless device as the scenario is bad input (exit 2)
 * with a message saying so; /dev/zero used to be read until memory ran out. */
static void test_cli_directory_and_endless_scenario_exit_2(void **state)
{
    (void)state;
    char *e;
    assert_int_equal(run_aisim((const char *[]){"check", "tests/scenarios", NULL}, NULL, &e), 2);
    assert_string_equal(e, "tests/scenarios: is a directory; expected a scenario file\n");
    free(e);
    assert_int_equal(run_aisim((const char *[]){"check", "/dev/zero", NULL}, NULL, &e), 2);
    assert_string_equal(e, "/dev/zero: larger than 256 MiB, the limit of a scenario file\n");
    free(e);
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

/* Writes `text` to dir/name. */
static char *dir_file(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return slurp(p);
}

static int dir_has(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return exists(p);
}

/* issue 19.1: while one run holds a directory, another fails at once
 * (exit 1) and changes nothing there. */
static void test_cli_out_locked_directory_fails_at_once(void **state)
{
    (void)state;
    char dir[128], *e;
    snprintf(dir, sizeof dir, "%s/locked", tu_tmp);
    const char *mm1[] = {"run", "core/mm1", "-q", "--set", "queue.customers=1000", "--out", dir,
                         NULL};
    assert_int_equal(run_aisim(mm1, NULL, NULL), 0);
    char *before = dir_file(dir, "summary.json");
    char lock[256];
    snprintf(lock, sizeof lock, "%s/.aisim", dir);
    int fd = open(lock, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    const char *md1[] = {"run", "core/md1", "-q", "--set", "queue.customers=1000", "--out", dir,
                         NULL};
    assert_int_equal(run_aisim(md1, NULL, &e), 1);
    if (!strstr(e, "another aisim run is writing into this directory"))
        fail_msg("got: %s", e);
    free(e);
    char *after = dir_file(dir, "summary.json");
    assert_string_equal(before, after);
    free(after);
    /* A sweep into it fails the same way. */
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir, "--vary",
                                                "queue.customers=1000,2000", NULL}, NULL, &e),
                     1);
    assert_non_null(strstr(e, "another aisim run is writing into this directory"));
    free(e);
    assert_false(dir_has(dir, "customers=1000"));
    close(fd);
    assert_int_equal(run_aisim(md1, NULL, NULL), 0);
    after = dir_file(dir, "summary.json");
    assert_string_not_equal(before, after);
    free(after);
    free(before);
}

/* issue 19.1: two runs started together into one directory: whatever
 * happens, the directory holds the run that exited 0, and a run that exits
 * 0 is the one published. */
static void test_cli_two_runs_at_once_publish_the_run_that_succeeded(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/race", tu_tmp);
    const char *names[2] = {"core/mm1", "core/md1"};
    for (int round = 0; round < 3; round++) {
        pid_t pid[2];
        for (int i = 0; i < 2; i++) {
            pid[i] = fork();
            if (pid[i] == 0) {
                int fd = open("/dev/null", O_WRONLY);
                dup2(fd, 1);
                dup2(fd, 2);
                execl(aisim, aisim, "run", names[i], "-q", "--set", "queue.customers=20000",
                      "--out", dir, (char *)NULL);
                _exit(127);
            }
        }
        int rc[2];
        for (int i = 0; i < 2; i++) {
            int st;
            waitpid(pid[i], &st, 0);
            rc[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            assert_true(rc[i] == 0 || rc[i] == 1);
        }
        assert_true(rc[0] == 0 || rc[1] == 0);
        char *sum = dir_file(dir, "summary.json");
        json_t *j = json_loads(sum, 0, NULL);
        assert_non_null(j);
        const char *name = json_string_value(json_object_get(j, "scenario"));
        /* (Both exit 0 only if they ran one after the other.) */
        assert_int_equal(rc[strcmp(name, "mm1") == 0 ? 0 : 1], 0);
        json_decref(j);
        free(sum);
    }
}

/* issue 19.1: temporaries have names of their own: a leftover with the old
 * fixed name (even one that cannot be written over) is no obstacle. */
static void test_cli_out_temporaries_have_unique_names(void **state)
{
    (void)state;
    char dir[128], p[256];
    snprintf(dir, sizeof dir, "%s/tmpnames", tu_tmp);
    const char *mm1[] = {"run", "core/mm1", "-q", "--set", "queue.customers=1000", "--out", dir,
                         NULL};
    assert_int_equal(run_aisim(mm1, NULL, NULL), 0);
    const char *fixed[] = {".summary.json.part", ".run.log.part", ".scenario.yaml.part"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, fixed[i]);
        assert_int_equal(mkdir(p, 0777), 0);
    }
    put(dir, ".run.log.4242-0.part", "left by a killed run\n");
    assert_int_equal(run_aisim(mm1, NULL, NULL), 0);
    assert_false(dir_has(dir, ".run.log.4242-0.part"));    /* stale temporary removed */
    assert_true(dir_has(dir, ".summary.json.part"));        /* not aisim's: kept */
}

/* issue 19.4: --out "" is a usage error, for every command that takes it. */
static void test_cli_out_empty_is_a_usage_error(void **state)
{
    (void)state;
    char *e;
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "--out", "", NULL}, NULL, &e),
                     2);
    assert_non_null(strstr(e, "aisim run: --out expects a directory name, found \"\""));
    free(e);
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "--out", "", "--vary",
                                                "queue.customers=1000,2000", NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "--out expects a directory name"));
    free(e);
    assert_int_equal(run_aisim((const char *[]){"demo", "--out", "", NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "--out expects a directory name"));
    free(e);
    /* The library refuses it too. */
    run_opts o = {.scenario = "core/mm1", .out_dir = "", .sets = (const char *[]){
                      "queue.customers=100"}, .nsets = 1};
    err er = {0};
    assert_int_equal(run_scenario(&o, NULL, NULL, &er), AISIM_EINVAL);
    assert_string_equal(er.msg, "the output directory name is empty");
}

/* issue 19.5: a non-empty directory that is not aisim's is refused (exit 2,
 * nothing written); --force writes into it and deletes nothing of its own,
 * even when a foreign summary.json lists its files. */
static void test_cli_out_refuses_foreign_directory(void **state)
{
    (void)state;
    char dir[128], *e;
    snprintf(dir, sizeof dir, "%s/home", tu_tmp);
    assert_int_equal(mkdir(dir, 0777), 0);
    put(dir, "notes.txt", "mine\n");
    put(dir, "summary.json", "{\"files\": [\"notes.txt\", \"summary.json\"]}\n");
    const char *run[] = {"run", "core/mm1", "-q", "--set", "queue.customers=1000", "--out", dir,
                         NULL, NULL};
    assert_int_equal(run_aisim(run, NULL, &e), 2);
    if (!strstr(e, "not empty and not an aisim output directory") || !strstr(e, "--force"))
        fail_msg("got: %s", e);
    free(e);
    assert_false(dir_has(dir, ".aisim"));
    assert_false(dir_has(dir, "run.log"));
    /* A sweep is refused the same way, before any point runs. */
    assert_int_equal(run_aisim((const char *[]){"sweep", "core/mm1", "-q", "--out", dir, "--vary",
                                                "queue.customers=1000,2000", NULL}, NULL, &e), 2);
    free(e);
    assert_false(dir_has(dir, "customers=1000"));
    run[7] = "--force";
    assert_int_equal(run_aisim(run, NULL, NULL), 0);
    assert_true(dir_has(dir, "notes.txt"));
    assert_true(dir_has(dir, ".aisim"));
    /* Now it is aisim's: a re-run needs no --force and keeps notes.txt. */
    run[7] = NULL;
    assert_int_equal(run_aisim(run, NULL, NULL), 0);
    assert_true(dir_has(dir, "notes.txt"));
    /* A directory written before the marker existed (an aisim summary.json)
     * is still recognised; an empty one is fine. */
    char old[160];
    snprintf(old, sizeof old, "%s/old", tu_tmp);
    assert_int_equal(mkdir(old, 0777), 0);
    put(old, "summary.json", "{\"aisim_version\": \"0.1.0\", \"files\": [\"queue.csv\"]}\n");
    put(old, "queue.csv", "stale\n");
    run[6] = old;
    assert_int_equal(run_aisim(run, NULL, NULL), 0);
    assert_true(dir_has(old, ".aisim"));
}

/* issue 19.14: bench --help lists exactly the cases the binary has. */
static void test_cli_bench_help_lists_every_case(void **state)
{
    (void)state;
    char *o, *e;
    assert_int_equal(run_aisim((const char *[]){"bench", "--help", NULL}, &o, NULL), 0);
    assert_int_equal(run_aisim((const char *[]){"bench", "no-such-case", NULL}, NULL, &e), 2);
    /* "...; cases: a b c\n" */
    char *list = strstr(e, "cases:");
    assert_non_null(list);
    list += 6;
    *strchr(list, '\n') = '\0';
    const char *from = strstr(o, "CASE");
    assert_non_null(from);
    int n = 0;
    for (char *tok = strtok(list, " "); tok; tok = strtok(NULL, " "), n++) {
        char w[64];
        snprintf(w, sizeof w, " %s", tok);
        const char *at = strstr(from, w);
        if (!at || (at[strlen(w)] != ' ' && at[strlen(w)] != '\n'))
            fail_msg("bench --help does not list case %s:\n%s", tok, o);
    }
    assert_true(n >= 11);
    free(o);
    free(e);
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
    /* The figures join the run's files (the model's curated ones only:
     * no default figure of another table without --all) ... */
    snprintf(p, sizeof p, "%s/summary.json", dir);
    json_t *sum = json_load_file(p, 0, NULL);
    assert_non_null(sum);
    char *files = json_dumps(json_object_get(sum, "files"), JSON_COMPACT);
    assert_non_null(strstr(files, "\"queue.png\",\"queue.gp\""));
    free(files);
    json_decref(sum);
    /* ... so a run into the same directory removes them. */
    assert_int_equal(run_aisim((const char *[]){"run", "core/mm1", "-q", "--set",
                                                "queue.customers=2000", "--out", dir, NULL},
                               NULL, NULL), 0);
    snprintf(p, sizeof p, "%s/queue.png", dir);
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s/queue.gp", dir);
    assert_false(exists(p));
    /* A bit rate gets SI prefixes on its axis (82.0M, not 8.2e+07). */
    snprintf(dir, sizeof dir, "%s/plotnet", tu_tmp);
    assert_int_equal(run_aisim((const char *[]){"run", "net/incast", "-q", "--set",
                                                "net.incast.rounds=2", "--out", dir, NULL},
                               NULL, NULL), 0);
    assert_int_equal(run_aisim((const char *[]){"plot", dir, NULL}, NULL, NULL), 0);
    snprintf(p, sizeof p, "%s/incast.gp", dir);
    gp = slurp(p);
    assert_non_null(strstr(gp, "set format y '%.1s%c'\n"));
    free(gp);
    snprintf(p, sizeof p, "%s/flows.gp", dir);
    gp = slurp(p);
    assert_null(strstr(gp, "set format y"));       /* FCTs in seconds: plain */
    free(gp);
    /* Not a run directory: a clear error, exit 2. */
    char *e;
    assert_int_equal(run_aisim((const char *[]){"plot", tu_tmp, NULL}, NULL, &e), 2);
    assert_non_null(strstr(e, "not a completed aisim run directory"));
    free(e);
}

/* ---- aisim sweep ---------------------------------------------------------- */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_exit_codes_for_usage),
        cmocka_unit_test(test_cli_help_for_every_command),
        cmocka_unit_test(test_cli_list_and_check),
        cmocka_unit_test(test_cli_run_prints_headlines_then_counters),
        cmocka_unit_test(test_cli_bad_usage_names_the_fix),
        cmocka_unit_test(test_cli_bad_scenarios_exit_2_with_exact_message),
        cmocka_unit_test(test_cli_badrun_scenarios_fail_with_exit_code_and_message),
        cmocka_unit_test(test_cli_suspicious_scenarios_warn),
        cmocka_unit_test(test_cli_set_errors_and_seed_override),
        cmocka_unit_test(test_cli_interrupted_run_leaves_nothing_complete),
        cmocka_unit_test(test_cli_hangup_and_term_discard_the_run),
        cmocka_unit_test(test_cli_nohup_run_survives_hangup),
        cmocka_unit_test(test_cli_signal_ends_long_single_events),
        cmocka_unit_test(test_cli_rdma_rto_below_round_trip_warns),
        cmocka_unit_test(test_cli_interrupted_parallel_sweep_stops_its_points),
        cmocka_unit_test(test_cli_seed_option_is_exact_and_named),
        cmocka_unit_test(test_cli_set_rejects_trailing_dot),
        cmocka_unit_test(test_cli_directory_and_endless_scenario_exit_2),
        cmocka_unit_test(test_cli_rerun_replaces_earlier_outputs),
        cmocka_unit_test(test_cli_out_locked_directory_fails_at_once),
        cmocka_unit_test(test_cli_two_runs_at_once_publish_the_run_that_succeeded),
        cmocka_unit_test(test_cli_out_temporaries_have_unique_names),
        cmocka_unit_test(test_cli_out_empty_is_a_usage_error),
        cmocka_unit_test(test_cli_out_refuses_foreign_directory),
        cmocka_unit_test(test_cli_bench_help_lists_every_case),
        cmocka_unit_test(test_cli_plot_draws_png_with_gnuplot),
    };
    return cmocka_run_group_tests_name("cli", tests, setup, tu_teardown);
}
