/*
 * test_birp_data.c - BIRP's profile and trace loaders: the shipped data
 * loads with the published numbers; bad files are rejected naming the line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "systems/birp/birp_data.h"

#define PROFILES "data/edge_dnn_latency_profiles/arttrt_latency_vs_batch.csv"
#define TRACE "data/azure_llm_inference_2023/AzureLLMInferenceTrace_conv.csv"

static char tmpl[64];

static const char *write_tmp(const char *text)
{
    snprintf(tmpl, sizeof tmpl, "/tmp/test_birp_%s", "XX" "XX" "XX");
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return tmpl;
}

static void test_profiles_load_published_numbers(void **st)
{
    (void)st;
    birp_profiles p = {0};
    err e = {0};
    assert_int_equal(birp_profiles_load(PROFILES, "TRT_fp16", &p, &e), 0);
    const birp_curve *c = birp_profiles_find(&p, "Jetson AGX Xavier", "resnet50");
    assert_non_null(c);
    assert_int_equal(c->npts, 5);
    assert_int_equal(c->batch[1], 32);
    assert_float_equal(c->lat_s[0], 7.6e-3, 1e-12);
    assert_float_equal(c->lat_s[1], 96.0e-3, 1e-12);
    assert_float_equal(c->acc, 0.8035, 1e-9);
    /* linear interpolation between 1 and 32 */
    assert_float_equal(birp_curve_latency_s(c, 16.5), (7.6 + 96.0) / 2 * 1e-3, 1e-12);
    /* the largest batch within 50 ms: 7.6 + (b-1)*88.4/31 <= 50 -> b = 15 */
    assert_int_equal(birp_curve_max_batch(c, 50e-3, 256), 15);
    assert_int_equal(birp_curve_max_batch(c, 1e-3, 256), 1);
    assert_null(birp_profiles_find(&p, "Jetson AGX Xavier", "vgg16"));
    size_t n = p.n;
    birp_profiles_fini(&p);
    /* 6 devices x 6 models, Xavier NX partial */
    assert_true(n >= 31 && n <= 36);
}

static void expect_profile_error(const char *text, const char *needle)
{
    birp_profiles p = {0};
    err e = {0};
    const char *path = write_tmp(text);
    int r = birp_profiles_load(path, "TRT_fp16", &p, &e);
    unlink(path);
    assert_true(r < 0);
    if (!strstr(e.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, needle);
    assert_int_equal(p.n, 0);
}

#define HDR "device,model,batch_size,engine,latency_mean_ms,size_mb,top1_pct\n"

static void test_profiles_reject_bad_files_naming_the_line(void **st)
{
    (void)st;
    expect_profile_error(HDR "D,m,1,TRT_fp16,5.0,10,70\nD,m,32,TRT_fp16,4.0,10,70\n",
                         ":3: non-monotone profile");
    expect_profile_error(HDR "D,m,1,TRT_fp16,-5.0,10,70\n", ":2:16: latency_mean_ms: expected a latency in (0, 3.6e+06] ms, found -5.0");
    /* bounded as the scenario's times are: a latency of 1e300 ms used to load */
    expect_profile_error(HDR "D,m,1,TRT_fp16,1e300,10,70\n",
                         ":2:16: latency_mean_ms: expected a latency in (0, 3.6e+06] ms");
    expect_profile_error(HDR "D,m,1,TRT_fp16,5,1e300,70\n",
                         ":2:18: size_mb: expected a size in [0, 1e+09], found \"1e300\"");
    expect_profile_error(HDR "D,m,1,TRT_fp16,0,10,70\n", ":2:16: latency_mean_ms");
    expect_profile_error(HDR "D,m,32,TRT_fp16,5.0,10,70\nD,m,1,TRT_fp16,6.0,10,70\n",
                         ":3: batch_size 1 of D/m/TRT_fp16 does not follow batch size 32 (line 2)");
    expect_profile_error(HDR "D,m,1,TRT_fp16,abc,10,70\n", ":2:16: latency_mean_ms: expected a number");
    expect_profile_error(HDR "D,m,0,TRT_fp16,1,10,70\n", ":2:5: batch_size: expected an integer");
    expect_profile_error(HDR "D,m,1,TRT_fp16,1,10,170\n", ":2:21: top1_pct");
    expect_profile_error(HDR "D,m,1\n", ":2: expected at least");
    expect_profile_error("device,model,batch_size,engine,latency_ms,top1_pct\n", ":1: header has no "
                         "column \"latency_mean_ms\"");
    expect_profile_error(HDR "D,m,1,TRT_int8,1,10,70\n", "no rows with engine \"TRT_fp16\"");
    /* another engine's bad rows are not read */
    birp_profiles p = {0};
    err e = {0};
    const char *path = write_tmp(HDR "D,m,1,TRT_fp16,1,10,70\nD,m,2,Vanilla,zz,10,70\n");
    assert_int_equal(birp_profiles_load(path, "TRT_fp16", &p, &e), 0);
    unlink(path);
    assert_int_equal(p.n, 1);
    birp_profiles_fini(&p);
}

static void test_trace_loads_azure_conv(void **st)
{
    (void)st;
    birp_trace t = {0};
    err e = {0};
    assert_int_equal(birp_trace_load(TRACE, &t, &e), 0);
    assert_int_equal(t.n, 19366);
    assert_int_equal(t.t_ps[0], 0);
    /* 18:15:46.6805900 -> 18:15:50.9951690 */
    assert_int_equal(t.t_ps[1], INT64_C(4314579000000));
    /* span 18:15:46.68059 .. 19:14:08.40 is about 3502 s */
    double span = (double)t.t_ps[t.n - 1] * 1e-12;
    assert_true(span > 3500 && span < 3503);
    for (size_t i = 1; i < t.n; i++)
        assert_true(t.t_ps[i] >= t.t_ps[i - 1]);
    birp_trace_fini(&t);
}

static void expect_trace_error(const char *text, const char *needle)
{
    birp_trace t = {0};
    err e = {0};
    const char *path = write_tmp(text);
    int r = birp_trace_load(path, &t, &e);
    unlink(path);
    assert_true(r < 0);
    if (!strstr(e.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, needle);
}

static void test_trace_rejects_unsorted_and_malformed(void **st)
{
    (void)st;
    expect_trace_error("TIMESTAMP,a\n2023-11-16 18:00:01.5,1\n2023-11-16 18:00:01.4,1\n",
                       ":3: unsorted trace: timestamp \"2023-11-16 18:00:01.4\" is earlier than "
                       "the one on line 2");
    expect_trace_error("TIMESTAMP,a\n2023-11-16 18:00:01.5,1\n2023-11-16 18:0x:01.6,1\n",
                       ":3: malformed timestamp");
    expect_trace_error("0.5\n1.0\nbanana\n", ":3: malformed timestamp \"banana\"");
    expect_trace_error("0.5\n0.25\n", ":2: unsorted");
    expect_trace_error("t\n1.0\n", "at least 2 arrivals");
    /* seconds format, day rollover */
    birp_trace t = {0};
    err e = {0};
    const char *path = write_tmp("time\n1.25\n2\n2.000000000001\n");
    assert_int_equal(birp_trace_load(path, &t, &e), 0);
    unlink(path);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.t_ps[1], INT64_C(750000000000));
    assert_int_equal(t.t_ps[2], INT64_C(750000000001));
    birp_trace_fini(&t);
    path = write_tmp("2023-12-31 23:59:59.5\n2024-01-01 00:00:00.25\n");
    assert_int_equal(birp_trace_load(path, &t, &e), 0);
    unlink(path);
    assert_int_equal(t.t_ps[1], INT64_C(750000000000));
    birp_trace_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiles_load_published_numbers),
        cmocka_unit_test(test_profiles_reject_bad_files_naming_the_line),
        cmocka_unit_test(test_trace_loads_azure_conv),
        cmocka_unit_test(test_trace_rejects_unsorted_and_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
