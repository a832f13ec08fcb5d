/*
 * test_stats.c - the Student-t quantile every confidence interval uses
 * (stat_t975): the table's values (two-sided 95 %, e.g. 12.706 at one
 * degree of freedom, 2.776 at four: five seeds), the coarse steps past 30
 * and the normal limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "aisim/stats.h"

static void test_t975(void **state)
{
    (void)state;
    assert_true(isnan(stat_t975(0)));
    assert_true(stat_t975(1) == 12.706);
    assert_true(stat_t975(2) == 4.303);
    assert_true(stat_t975(4) == 2.776);
    assert_true(stat_t975(9) == 2.262);
    assert_true(stat_t975(30) == 2.042);
    assert_true(stat_t975(31) == 2.021);
    assert_true(stat_t975(60) == 2.000);
    assert_true(stat_t975(120) == 1.980);
    assert_true(stat_t975(121) == 1.960);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t975),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
