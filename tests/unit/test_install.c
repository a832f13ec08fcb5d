/*
 * test_install.c - aisim as others install and embed it: `make install
 * PREFIX=tmp` lays out the binary, libaisim.a, libaisim.so with its soname,
 * the headers, aisim.pc, the examples and data, and aisim(1); a program
 * outside the tree compiled with `pkg-config --cflags --libs aisim` against
 * the installed tree runs a built-in example through aisim.h (an override,
 * a bad override, results as plain C values) and finds the installed data,
 * as does the installed binary, both from a directory outside the source
 * tree and without AISIM_HOME.
 *
 * Builds the -fPIC objects of the shared library (about a minute of CPU
 * the first time).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aisim/aisim.h"
#include "cli/run.h"
#include "testutil.h"

/* Built with the sanitizers (make test SAN=1), the installed library's
 * objects are instrumented, so the outside program links their runtime too
 * (else ASan refuses to start: its runtime must come first). */
#ifdef __SANITIZE_ADDRESS__
#define SAN_FLAGS "-fsanitize=address,undefined"
#else
#define SAN_FLAGS ""
#endif

static const char *prog =
    "#include <aisim/aisim.h>\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#if AISIM_VERSION_NUMBER < 100\n"
    "#error version macro\n"
    "#endif\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    (void)argc;\n"
    "    if (strcmp(aisim_version(), AISIM_VERSION_STRING))\n"
    "        return 10;\n"
    "    printf(\"data %s\\n\", aisim_data_dir());\n"
    "    aisim_run *bad = aisim_open(\"ai/gpt13b\");\n"
    "    if (aisim_set(bad, \"training.comm analytical\") != -1)\n"
    "        return 11;\n"
    "    aisim_set(bad, \"training.comm=carrier-pigeon\");\n"
    "    if (aisim_exec(bad) != 2 || !strstr(aisim_error(bad), \"training.comm\"))\n"
    "        return 12;\n"
    "    printf(\"error %s\\n\", aisim_error(bad));\n"
    "    aisim_close(bad);\n"
    "    aisim_run *r = aisim_open(\"ai/gpt13b\");\n"
    "    aisim_set(r, \"training.comm=analytical\");\n"
    "    aisim_set_seed(r, 3);\n"
    "    aisim_set_out(r, argv[1]);\n"
    "    if (aisim_exec(r) != 0) {\n"
    "        printf(\"failed: %s\\n\", aisim_error(r));\n"
    "        return 13;\n"
    "    }\n"
    "    double it, gpus;\n"
    "    if (aisim_result_number(r, \"jobs.0.iteration_s\", &it) ||\n"
    "        aisim_result_number(r, \"jobs.0.gpus\", &gpus) ||\n"
    "        aisim_result_number(r, \"no.such\", &it) != -1)\n"
    "        return 14;\n"
    "    printf(\"iteration %.9f gpus %.0f name %s results %zu first %s dir %s\\n\", it, gpus,\n"
    "           aisim_result_string(r, \"jobs.0.name\"), aisim_result_count(r),\n"
    "           aisim_result_name(r, 0), aisim_run_dir(r));\n"
    "    aisim_close(r);\n"
    "    return 0;\n"
    "}\n";

static char *sh(const char *cmd, int *rc)
{
    char out[300], full[4096];
    snprintf(out, sizeof out, "%s/sh.out", tu_tmp);
    snprintf(full, sizeof full, "(%s) > '%s' 2>&1", cmd, out);
    *rc = system(full);
    return tu_slurp(out, NULL);
}

static void test_install_and_embed_with_pkg_config(void **state)
{
    (void)state;
    char cwd[1024], cmd[4096], pre[300];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(pre, sizeof pre, "%s/prefix", tu_tmp);
    int rc;
    snprintf(cmd, sizeof cmd, "env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C '%s' install "
             "PREFIX='%s'", cwd, pre);
    char *o = sh(cmd, &rc);
    if (rc)
        fail_msg("make install failed:\n%s", o);
    free(o);
    static const char *const files[] = {
        "bin/aisim", "lib/libaisim.a", "lib/libaisim.so", "lib/libaisim.so.0",
        "lib/pkgconfig/aisim.pc", "include/aisim/aisim.h", "include/aisim/sim.h",
        "share/man/man1/aisim.1", "share/aisim/examples/core/mm1.yaml",
        "share/aisim/data/llm_comm_workloads"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[600];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", pre, files[i]);
        if (stat(p, &st))
            fail_msg("make install left no %s", files[i]);
    }
    /* The soname, and the man page from the help texts. */
    snprintf(cmd, sizeof cmd, "objdump -p '%s/lib/libaisim.so' | grep SONAME", pre);
    o = sh(cmd, &rc);
    assert_non_null(strstr(o, "libaisim.so.0"));
    free(o);
    snprintf(cmd, sizeof cmd, "grep -c '^\\.SS' '%s/share/man/man1/aisim.1'", pre);
    o = sh(cmd, &rc);
    assert_true(atoi(o) >= 9);
    free(o);

    /* An outside program, built with pkg-config, run from outside the tree. */
    char src[300];
    snprintf(src, sizeof src, "%s/embed.c", tu_tmp);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    fputs(prog, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && export PKG_CONFIG_PATH='%s/lib/pkgconfig' && "
             "cc -std=c11 -Wall -Werror %s $(pkg-config --cflags aisim) embed.c "
             "$(pkg-config --libs aisim) -o embed && "
             "env -u AISIM_HOME LD_LIBRARY_PATH='%s/lib' ./embed '%s/run'", tu_tmp, pre,
             SAN_FLAGS, pre, tu_tmp);
    o = sh(cmd, &rc);
    if (rc)
        fail_msg("the embedding program failed (%d):\n%s", rc, o);
    char want[600];
    snprintf(want, sizeof want, "data %s/share/aisim\n", pre);
    if (!strstr(o, want))
        fail_msg("expected \"%s\" in:\n%s", want, o);
    /* The numbers aisim run gives (training, comm analytical). */
    snprintf(want, sizeof want, "iteration 0.502180867 gpus 128 name gpt13b results ");
    if (!strstr(o, want))
        fail_msg("expected \"%s\" in:\n%s", want, o);
    assert_non_null(strstr(o, "first jobs.0.gpus"));
    free(o);
    /* The installed binary, too. */
    snprintf(cmd, sizeof cmd, "cd '%s' && env -u AISIM_HOME '%s/bin/aisim' version && "
             "env -u AISIM_HOME '%s/bin/aisim' run ai/gpt13b --set training.comm=analytical "
             "--out bin-run -q", tu_tmp, pre, pre);
    o = sh(cmd, &rc);
    snprintf(want, sizeof want, "data: %s/share/aisim\n", pre);
    if (rc || !strstr(o, want) || !strstr(o, "502.2 ms"))
        fail_msg("the installed binary printed:\n%s", o);
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install_and_embed_with_pkg_config),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
