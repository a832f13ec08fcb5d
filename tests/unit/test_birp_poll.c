/*
 * test_birp_poll.c - the BIRP model's long loops poll the engine
 * (sim_poll, issue 35): configure stops building the trace's arrivals when
 * the interrupt flag is set, and a signal ends a long run with exit 1 and
 * nothing left behind.  (The QP's per-iteration poll is in test_birp_core.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aisim/err.h"
#include "aisim/model.h"
#include "aisim/sim.h"
#include "cli/scenario.h"
#include "testutil.h"

#define SMALL "examples/birp/small.yaml"

/* Set-up polls the engine: with the interrupt flag already set (a signal
 * during configure) building 3.3 million trace arrivals stops at once with
 * the "stopped" error instead of finishing; without it, it succeeds. */
static void test_configure_stops_when_interrupted(void **st)
{
    (void)st;
    static const char *sets[] = {"stop=1000s", "birp.workload.load=10"};
    for (int flagged = 0; flagged < 2; flagged++) {
        scenario sc;
        err e = {0};
        assert_int_equal(scenario_load(&sc, SMALL, sets, 2, NULL, &e), 0);
        sim *s = sim_create();
        volatile sig_atomic_t flag = (sig_atomic_t)flagged;
        sim_set_interrupt(s, &flag);
        model_env env = {.sim = s, .seed = 1, .base_dir = sc.base_dir, .stop_ps = sc.stop_ps};
        void *mst = calloc(1, sc.model->state_size);
        int r = sc.model->configure(mst, sc.section, sc.model->name, &env, &e);
        if (flagged) {
            assert_int_equal(r, AISIM_ERUN);
            assert_non_null(strstr(e.msg, "stopped before the end"));
        } else {
            assert_int_equal(r, 0);
        }
        sc.model->fini(mst);
        free(mst);
        sim_destroy(s);
        scenario_fini(&sc);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* SIGINT and SIGTERM end a long BIRP run (its set-up builds 6 million
 * arrivals, its slots solve a QP each) with exit 1 and no output left;
 * the bound is "ends" (5 s on a loaded machine), the time is printed. */
static void test_signal_ends_a_long_run(void **st)
{
    (void)st;
    const char *aisim = getenv("AISIM");
    if (!aisim)
        skip();
    int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, "%s/sig%d", tu_tmp, i);
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            dup2(fd, 2);
            execl(aisim, aisim, "run", "birp/paper", "--set", "stop=900s", "--set",
                  "birp.workload.load=20", "--out", dir, (char *)NULL);
            _exit(127);
        }
        usleep(i ? 2500000 : 300000);     /* in set-up, then in the slots */
        int stt;
        assert_int_equal(waitpid(pid, &stt, WNOHANG), 0);
        double t0 = now_s();
        kill(pid, sigs[i]);
        while (waitpid(pid, &stt, WNOHANG) == 0 && now_s() - t0 < 5)
            usleep(5000);
        double dt = now_s() - t0;
        if (dt >= 5) {
            kill(pid, SIGKILL);
            waitpid(pid, &stt, 0);
            fail_msg("signal %d: still running 5 s later", sigs[i]);
        }
        print_message("signal %d: exited %.3f s later\n", sigs[i], dt);
        assert_true(WIFEXITED(stt));
        assert_int_equal(WEXITSTATUS(stt), 1);
        struct stat sb;
        assert_int_not_equal(stat(dir, &sb), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configure_stops_when_interrupted),
        cmocka_unit_test(test_signal_ends_a_long_run),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
