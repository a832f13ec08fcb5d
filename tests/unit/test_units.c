/*
 * test_units.c - quantities: exact parsing, rejection, formatting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "aisim/units.h"

typedef struct ok_case {
    enum unit_kind k;
    const char *text;
    int64_t want;
} ok_case;

static const ok_case oks[] = {
    {UNIT_TIME, "1ps", 1},
    {UNIT_TIME, "1.5us", 1500000},
    {UNIT_TIME, "0.1s", 100000000000},
    {UNIT_TIME, "2 ms", 2000000000},
    {UNIT_TIME, "1e-3s", 1000000000},
    {UNIT_TIME, "1.25ms", 1250000000},
    {UNIT_TIME, "-3ns", -3000},
    {UNIT_TIME, "100000s", 100000 * PS_PER_S},
    {UNIT_TIME, "0s", 0},
    {UNIT_RATE, "100Gbps", 100000000000},
    {UNIT_RATE, "2.5Gbps", 2500000000},
    {UNIT_RATE, "1Tbps", 1000000000000},
    {UNIT_RATE, "10kbps", 10000},
    {UNIT_RATE, "10Kbps", 10000},
    {UNIT_RATE, "1bps", 1},
    {UNIT_RATE, "1.6Tbps", 1600000000000},
    {UNIT_SIZE, "64KB", 64000},
    {UNIT_SIZE, "64KiB", 65536},
    {UNIT_SIZE, "1.5KiB", 1536},
    {UNIT_SIZE, "12MiB", 12582912},
    {UNIT_SIZE, "1GB", 1000000000},
    {UNIT_SIZE, "1GiB", 1073741824},
    {UNIT_SIZE, "1TiB", 1099511627776},
    {UNIT_SIZE, "1500B", 1500},
    {UNIT_SIZE, "9000 B", 9000},
};

typedef struct bad_case {
    enum unit_kind k;
    const char *text;
    const char *why;
} bad_case;

static const bad_case bads[] = {
    {UNIT_TIME, "100", "missing unit"},
    {UNIT_TIME, "1.5", "missing unit"},
    {UNIT_TIME, "5 parsecs", "unknown unit"},
    {UNIT_TIME, "1MS", "unknown unit"},
    {UNIT_TIME, "0.5ps", "not a whole number of picoseconds"},
    {UNIT_TIME, "ms", "not a number"},
    {UNIT_TIME, "", "not a number"},
    {UNIT_TIME, "1e30s", "too large"},
    {UNIT_TIME, "9223372036854775808ps", "too large"},
    {UNIT_TIME, "1e-13s", "not a whole number of picoseconds"},
    {UNIT_TIME, "1.0.0s", "unknown unit"},
    {UNIT_RATE, "100Gbit", "unknown unit"},
    {UNIT_RATE, "100GBps", "unknown unit"},
    {UNIT_RATE, "0.5bps", "not a whole number of bits per second"},
    {UNIT_RATE, "100ms", "unknown unit"},
    {UNIT_SIZE, "64kiB", "unknown unit"},
    {UNIT_SIZE, "0.1B", "not a whole number of bytes"},
    {UNIT_SIZE, "64", "missing unit"},
    {UNIT_SIZE, "1  B", "unknown unit"},
};

static void test_units_parse_exact_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof oks / sizeof *oks; i++) {
        int64_t v = -12345;
        const char *why = NULL;
        bool ok = units_parse(oks[i].k, oks[i].text, &v, &why);
        if (!ok)
            fail_msg("\"%s\" rejected: %s", oks[i].text, why);
        assert_int_equal(v, oks[i].want);
    }
}

static void test_units_reject_with_reason(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bads / sizeof *bads; i++) {
        int64_t v;
        const char *why = NULL;
        if (units_parse(bads[i].k, bads[i].text, &v, &why))
            fail_msg("\"%s\" accepted as %lld", bads[i].text, (long long)v);
        assert_string_equal(why, bads[i].why);
    }
}

static void test_units_format_shortest_exact(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_format(UNIT_TIME, 1500000, b, sizeof b), "1.5us");
    assert_string_equal(units_format(UNIT_TIME, PS_PER_S, b, sizeof b), "1s");
    assert_string_equal(units_format(UNIT_TIME, 1, b, sizeof b), "1ps");
    assert_string_equal(units_format(UNIT_TIME, 0, b, sizeof b), "0s");
    assert_string_equal(units_format(UNIT_TIME, 1234567, b, sizeof b), "1234567ps");
    assert_string_equal(units_format(UNIT_RATE, 100000000000, b, sizeof b), "100Gbps");
    assert_string_equal(units_format(UNIT_RATE, 10000, b, sizeof b), "10Kbps");
    assert_string_equal(units_format(UNIT_SIZE, 65536, b, sizeof b), "64KiB");
    assert_string_equal(units_format(UNIT_SIZE, 64000, b, sizeof b), "64KB");
    assert_string_equal(units_format(UNIT_TIME, -2000, b, sizeof b), "-2ns");
}

static void test_units_format_parses_back(void **state)
{
    (void)state;
    const int64_t vals[] = {1, 7, 999, 1000, 1001, 123456789, PS_PER_S * 3 / 2, INT64_C(1) << 40};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
            char b[32];
            int64_t back;
            units_format((enum unit_kind)k, vals[i], b, sizeof b);
            assert_true(units_parse((enum unit_kind)k, b, &back, NULL));
            assert_int_equal(back, vals[i]);
        }
}

static void test_units_tx_time_rounds_up(void **state)
{
    (void)state;
    /* 1500 B at 100 Gbps = 120 ns exactly. */
    assert_int_equal(units_tx_time_ps(1500, 100000000000), 120000);
    /* 1 B at 3 bps = 8/3 s, rounded up to the next ps. */
    assert_int_equal(units_tx_time_ps(1, 3), 2666666666667);
    /* 1 GiB at 1 Mbps: the intermediate (bits * 10^12) exceeds 64 bits. */
    assert_int_equal(units_tx_time_ps(INT64_C(1) << 30, 1000000), INT64_C(8589934592000000));
}

/* ps_to_s gives the double nearest the exact quotient, so table times
 * print as their short decimals: 10 us is 1e-05 (a product with 1e-12
 * gives 9.999999999999999e-06), 100.6 us 0.0001006, 0.1 s 0.1. */
static void test_units_ps_to_s_is_exact_quotient(void **state)
{
    (void)state;
    assert_true(ps_to_s(INT64_C(10000000)) == 1e-05);
    assert_true(ps_to_s(INT64_C(100600000)) == 0.0001006);
    assert_true(ps_to_s(INT64_C(100000000000)) == 0.1);
    assert_true(ps_to_s(INT64_C(200000000000)) == 0.2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_parse_exact_values),
        cmocka_unit_test(test_units_reject_with_reason),
        cmocka_unit_test(test_units_format_shortest_exact),
        cmocka_unit_test(test_units_format_parses_back),
        cmocka_unit_test(test_units_tx_time_rounds_up),
        cmocka_unit_test(test_units_ps_to_s_is_exact_quotient),
    };
    return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
