/*
 * test_report.c - what `aisim run` prints (src/cli/report.c) and the
 * progress line's ETA (run.c): SI-prefixed quantities, headline paths with
 * '*' and -1 printed as tables, counters that do not apply to the flow
 * plane left out, and an ETA that is rounded before it is split.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/model.h"
#include "cli/cli.h"

static void test_eta_is_rounded_before_it_is_split(void **state)
{
    (void)state;
    static const struct { double s; const char *want; } c[] = {
        {0, "0s"},         {42.4, "42s"},       {59.4, "59s"},     {59.6, "1m00s"},
        {60, "1m00s"},     {719.6, "12m00s"},   {665, "11m05s"},   {3599.4, "59m59s"},
        {3599.6, "1h00m"}, {7199.9, "2h00m"},   {12000, "3h20m"},  {288244, "80h04m"},
        {-1, "?"},         {NAN, "?"},          {INFINITY, "?"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char b[32];
        cli_fmt_eta(b, sizeof b, c[i].s);
        if (strcmp(b, c[i].want))
            fail_msg("ETA of %g s: %s, expected %s", c[i].s, b, c[i].want);
    }
    /* No value prints 60 seconds or 60 minutes. */
    for (double s = 0; s < 20000; s += 0.1) {
        char b[32];
        cli_fmt_eta(b, sizeof b, s);
        if (strstr(b, "60s") || strstr(b, "60m"))
            fail_msg("ETA of %g s: %s", s, b);
    }
}

static void test_quantities_take_si_prefixes(void **state)
{
    (void)state;
    static const struct { double v; const char *unit, *want; } c[] = {
        {0.000381173598, "s", "381.2 us"},
        {0.00101754608, "s", "1.018 ms"},
        {1800, "s", "1800 s"},
        {5.565, "s", "5.565 s"},
        {17184184926700.0, "bit/s", "17.18 Tbit/s"},
        {73138946.7014, "bit/s", "73.14 Mbit/s"},
        {999960, "bit/s", "1 Mbit/s"},
        {268435456, "B", "268.4 MB"},
        {0, "B", "0 B"},
        {0.0731389467014, "%", "7.314 %"},
        {1, "%", "100 %"},
        {3000832, "", "3000832"},
        {1.40625, "", "1.406"},
        {NAN, "s", "-"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char b[64];
        cli_fmt_quantity(b, sizeof b, c[i].v, c[i].unit);
        if (strcmp(b, c[i].want))
            fail_msg("%.12g %s: \"%s\", expected \"%s\"", c[i].v, c[i].unit, b, c[i].want);
    }
}

/* What fn printed for results (JSON text). */
static char *printed(const char *results, const model_headline *hl, int counters)
{
    json_t *r = json_loads(results, 0, NULL);
    assert_non_null(r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (counters)
        cli_print_counters(f, hl, r, counters > 1);
    else
        cli_print_headlines(f, hl, r, "results");
    fclose(f);
    json_decref(r);
    return buf;
}

static const model_headline hl[] = {
    {"goodput_bps", "goodput", "bit/s", 0},
    {"jobs.*.iteration_s", "iteration", "s", 0},
    {"jobs.*.mfu", "MFU", "%", 0},
    {"gbps.*.-1", "largest", "bit/s", 1e9},
    {"missing.key", "not in this run", "", 0},
    {"drops", "packet drops", "", 0},
    {NULL, NULL, NULL, 0},
};

static void test_headlines_print_scalars_and_tables(void **state)
{
    (void)state;
    char *o = printed("{\"goodput_bps\": 2.5e10, \"drops\": 3,"
                      " \"jobs\": [{\"name\": \"a\", \"iteration_s\": 0.5, \"mfu\": 0.25},"
                      "            {\"iteration_s\": 1.25, \"mfu\": 0.125}],"
                      " \"gbps\": {\"emtt\": [1, 190.0], \"ats\": [1, 150.25]}}", hl, 0);
    assert_string_equal(o, "results:\n"
                           "  goodput                        25 Gbit/s\n"
                           "  jobs  iteration     MFU\n"
                           "  a        500 ms    25 %\n"
                           "  1        1.25 s  12.5 %\n"
                           "  gbps       largest\n"
                           "  emtt    190 Gbit/s\n"
                           "  ats   150.2 Gbit/s\n"
                           "  packet drops                   3\n");
    free(o);
}

static void test_flow_plane_prints_no_packet_counters(void **state)
{
    (void)state;
    const char *flow = "{\"plane\": \"flow\", \"goodput_bps\": 1e9, \"drops\": 0,"
                       " \"packet_hops\": 5937605784, \"bytes_dropped\": 0, \"flows\": 7,"
                       " \"bytes_injected\": 4096}";
    char *o = printed(flow, hl, 0);
    assert_string_equal(o, "results:\n  goodput                        1 Gbit/s\n");
    free(o);
    o = printed(flow, hl, 1);
    /* the fluid plane counts the bytes it injects and delivers */
    assert_string_equal(o, "counters:\n  plane                          flow\n"
                           "  flows                          7\n"
                           "  bytes_injected                 4096\n");
    free(o);
    /* The packet plane keeps them (headlines are not repeated). */
    o = printed("{\"goodput_bps\": 1e9, \"drops\": 0, \"packet_hops\": 12, \"nested\": {\"x\": 1}}",
                hl, 1);
    assert_string_equal(o, "counters:\n  packet_hops                    12\n");
    free(o);
    /* -v: every scalar, nested ones joined with dots. */
    o = printed("{\"goodput_bps\": 1e9, \"nested\": {\"x\": 1, \"l\": [2.5]}}", hl, 2);
    assert_string_equal(o, "counters (every result):\n"
                           "  goodput_bps                    1e+09\n"
                           "  nested.x                       1\n"
                           "  nested.l[0]                    2.5\n");
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eta_is_rounded_before_it_is_split),
        cmocka_unit_test(test_quantities_take_si_prefixes),
        cmocka_unit_test(test_headlines_print_scalars_and_tables),
        cmocka_unit_test(test_flow_plane_prints_no_packet_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
