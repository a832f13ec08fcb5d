/*
 * test_numfmt.c - out_fmt_double(), the number formatter of every CSV and
 * JSON table: the shortest "%.*g" (precision 6 to 17) that reads back as
 * the same double.  The formatter searches the precision instead of trying
 * each in turn; its output must be exactly what the plain linear search
 * gives, so the run directories do not change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/out.h"

/* The definition for finite v: precisions 6, 7, ... 17 in turn, the first
 * that reads back. */
static void reference(char *buf, size_t len, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void check(double v)
{
    char got[64], want[64];
    out_fmt_double(got, sizeof got, v);
    reference(want, sizeof want, v);
    if (strcmp(got, want) != 0)
        fail_msg("%a: got %s, want %s", v, got, want);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void test_fmt_special_and_simple_values(void **state)
{
    (void)state;
    const double v[] = {0.0, -0.0, 1, -1, 0.1, 0.5, 1.0 / 3, 2.0 / 3, 1e-300, 5e-324,
                        1.7976931348623157e308, 123456, 1234567, 12345678901234567.0,
                        0.30000000000000004, 100e9, 2.5e-6, 1e10, 12345000, 1e15, 1e16,
                        123456789012345678.0, 2.2250738585072014e-308, 2.2e-308, 1e-310,
                        4.9406564584124654e-324, 1.5e-323, -1e-320, 0.1 + 0.2, 1e21, 1e22};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        check(v[i]);
    char b[64];
    out_fmt_double(b, sizeof b, NAN);
    assert_string_equal(b, "nan");
    out_fmt_double(b, sizeof b, -INFINITY);
    assert_string_equal(b, "-inf");
    out_fmt_double(b, sizeof b, 0.1);
    assert_string_equal(b, "0.1");
    out_fmt_double(b, sizeof b, 1.0 / 3);
    assert_string_equal(b, "0.3333333333333333");
    out_fmt_double(b, sizeof b, 0.30000000000000004);
    assert_string_equal(b, "0.30000000000000004");
}

/* Every precision 6..17 is the answer for some of these: decimals of each
 * length, ratios, and arbitrary bit patterns. */
static void test_fmt_same_as_linear_search(void **state)
{
    (void)state;
    uint64_t s = 42;
    for (int i = 0; i < 100000; i++) {
        uint64_t r = splitmix(&s);
        double v;
        switch (i % 5) {
        case 4:     /* a subnormal */
            r &= 0x800fffffffffffffu;
            memcpy(&v, &r, sizeof v);
            break;
        case 0:     /* any finite bit pattern */
            memcpy(&v, &r, sizeof v);
            if (!isfinite(v))
                continue;
            break;
        case 1: {   /* a decimal of 1..17 significant digits */
            char t[40];
            v = (double)(r % 100000000000000000u) / pow(10, (double)((r >> 59) % 17));
            snprintf(t, sizeof t, "%.*g", 1 + (int)(i / 4 % 17), v);
            v = strtod(t, NULL);
            break;
        }
        case 2:     /* a ratio, as the models' means and rates are */
            v = (double)(r % 1000003) / (double)(1 + (r >> 40) % 997);
            break;
        default:    /* times in seconds from picoseconds */
            v = (double)(r % 100000000000000u) * 1e-12;
            break;
        }
        check(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_special_and_simple_values),
        cmocka_unit_test(test_fmt_same_as_linear_search),
    };
    return cmocka_run_group_tests_name("numfmt", tests, NULL, NULL);
}
