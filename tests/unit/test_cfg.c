/*
 * test_cfg.c - the scenario tree: loading, positions, schema binding,
 * defaults, --set and emitting the resolved scenario.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/cfg.h"
#include "aisim/dist.h"
#include "aisim/units.h"

typedef struct link_cfg {
    int64_t rate_bps, delay_ps, buffer_bytes, count;
    double loss;
    bool ecn;
    int mode;
    const char *name;
    cfg_node *extra;
    int64_t k_bytes;        /* filled by a nested map */
} link_cfg;

static const char *const modes[] = {"droptail", "red", "pfc", NULL};

static const cfg_key inner_keys[] = {
    {.name = "k", .type = CFG_SIZE, .off = offsetof(link_cfg, k_bytes), .def = "30KB"},
    {0},
};

static const cfg_key link_keys[] = {
    {.name = "rate", .type = CFG_RATE, .off = offsetof(link_cfg, rate_bps),
     .flags = CFG_MIN_EXCL, .min = 0},
    {.name = "delay", .type = CFG_TIME, .off = offsetof(link_cfg, delay_ps), .def = "1us",
     .flags = CFG_MIN, .min = 0},
    {.name = "buffer", .type = CFG_SIZE, .off = offsetof(link_cfg, buffer_bytes), .def = "1MiB"},
    {.name = "count", .type = CFG_INT, .off = offsetof(link_cfg, count), .def = "1",
     .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 64},
    {.name = "loss", .type = CFG_FLOAT, .off = offsetof(link_cfg, loss), .def = "0",
     .flags = CFG_MIN | CFG_MAX_EXCL, .min = 0, .max = 1},
    {.name = "ecn", .type = CFG_BOOL, .off = offsetof(link_cfg, ecn), .def = "false"},
    {.name = "mode", .type = CFG_ENUM, .off = offsetof(link_cfg, mode), .def = "droptail",
     .choices = modes},
    {.name = "name", .type = CFG_STR, .off = offsetof(link_cfg, name), .flags = CFG_OPTIONAL},
    {.name = "extra", .type = CFG_NODE, .off = offsetof(link_cfg, extra), .flags = CFG_OPTIONAL},
    {.name = "marking", .type = CFG_MAPOF, .sub = inner_keys, .def = "{}"},
    {0},
};

static int bind_text(const char *text, link_cfg *lc, err *e, cfg_doc **dout)
{
    cfg_doc *d;
    int r = cfg_load_string("t.yaml", text, strlen(text), &d, e);
    if (r)
        return r;
    memset(lc, 0, sizeof *lc);
    r = cfg_bind(cfg_root(d), "link", link_keys, lc, e);
    if (dout && !r)
        *dout = d;
    else
        cfg_free(d);
    return r;
}

static void test_cfg_binds_values_and_fills_defaults(void **state)
{
    (void)state;
    link_cfg lc;
    err e = {0};
    cfg_doc *d;
    assert_int_equal(bind_text("rate: 100Gbps\nmode: red\nextra: [1, 2]\n", &lc, &e, &d), 0);
    assert_int_equal(lc.rate_bps, 100000000000);
    assert_int_equal(lc.delay_ps, PS_PER_US);
    assert_int_equal(lc.buffer_bytes, 1 << 20);
    assert_int_equal(lc.count, 1);
    assert_int_equal(lc.mode, 1);
    assert_int_equal(lc.k_bytes, 30000);
    assert_false(lc.ecn);
    assert_null(lc.name);
    assert_int_equal(cfg_kind(lc.extra), CFG_SEQ);
    assert_int_equal(cfg_len(lc.extra), 2);
    assert_string_equal(cfg_scalar(cfg_at(lc.extra, 1)), "2");
    assert_int_equal(cfg_line(lc.extra), 3);
    assert_int_equal(cfg_col(lc.extra), 8);

    /* The resolved tree lists every key with a default, in schema order. */
    char buf[1024] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(cfg_emit(cfg_root(d), f, &e), 0);
    fclose(f);
    assert_string_equal(buf, "rate: 100Gbps\ndelay: 1us\nbuffer: 1MiB\ncount: 1\nloss: 0\n"
                             "ecn: false\nmode: red\nextra: [1, 2]\nmarking:\n  k: 30KB\n");
    cfg_free(d);
}

typedef struct bad_case {
    const char *yaml, *msg;
} bad_case;

static void test_cfg_errors_name_position_key_expected_found(void **state)
{
    (void)state;
    static const bad_case cs[] = {
        {"rate: 100", "t.yaml:1:7: link.rate: expected a rate such as 100Gbps, found \"100\" "
                      "(missing unit)"},
        {"rate: -5Gbps", "t.yaml:1:7: link.rate: expected a rate > 0bps, found \"-5Gbps\""},
        {"rate: 1Gbps\nrtae: 1", "t.yaml:2:1: link.rtae: unknown key; did you mean \"rate\"?; "
                                 "expected one of: rate, delay, buffer, count, loss, ecn, mode, "
                                 "name, extra, marking"},
        {"delay: 1us", "t.yaml:1:1: link.rate: missing required key (expected a rate such as "
                       "100Gbps)"},
        {"rate: 1Gbps\ncount: 65", "t.yaml:2:8: link.count: expected an integer in [1, 64], "
                                   "found \"65\""},
        {"rate: 1Gbps\ncount: 2.5", "t.yaml:2:8: link.count: expected an integer, found \"2.5\" "
                                    "(not a whole number)"},
        {"rate: 1Gbps\nloss: 1", "t.yaml:2:7: link.loss: expected a number in [0, 1), found \"1\""},
        {"rate: 1Gbps\necn: yes", "t.yaml:2:6: link.ecn: expected true or false, found \"yes\""},
        {"rate: 1Gbps\nmode: rde", "t.yaml:2:7: link.mode: expected one of: droptail, red, pfc, "
                                   "found \"rde\"; did you mean \"red\"?"},
        {"rate: [1Gbps]", "t.yaml:1:7: link.rate: expected a rate such as 100Gbps, found a list"},
        {"rate:", "t.yaml:1:6: link.rate: expected a rate such as 100Gbps, found nothing (null)"},
        {"rate: 1Gbps\nmarking: {k: 5}", "t.yaml:2:14: link.marking.k: expected a size such as "
                                         "64KiB, found \"5\" (missing unit)"},
        {"rate: 1Gbps\nrate: 2Gbps", "t.yaml:2:1: rate: duplicate key (first given at line "
                                     "1, column 1)"},
        {"rate: 1Gbps\nbuffer: 10 Kb", "t.yaml:2:9: link.buffer: expected a size such as 64KiB, "
                                       "found \"10 Kb\" (unknown unit)"},
        {"- 1\n- 2", "t.yaml:1:1: link: expected a map, found a list"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        link_cfg lc;
        err e = {0};
        if (bind_text(cs[i].yaml, &lc, &e, NULL) >= 0)
            fail_msg("accepted: %s", cs[i].yaml);
        assert_string_equal(e.msg, cs[i].msg);
    }
}

static void test_cfg_load_rejects_syntax_aliases_depth_documents(void **state)
{
    (void)state;
    static const bad_case cs[] = {
        {"a: 1\nb: [1, 2\n", "t.yaml:3:1: YAML syntax error in b[2]: did not find expected ',' "
                             "or ']' (while parsing a flow sequence at line 2, column 4)"},
        {"a: &x 1\nb: *x\n", "t.yaml:1:4: a: YAML anchors and aliases are not supported; write "
                             "the value out"},
        {"a: 1\n---\nb: 2\n", "t.yaml:2:1: a scenario is one YAML document; found a second"},
        {"", "t.yaml:1:1: empty scenario; expected a map of keys"},
        {"a: 1\n  b: 2\n", "t.yaml:2:4: YAML syntax error: mapping values are not allowed "
                           "in this context"},
        {"? [a]\n: 1\n", "t.yaml:1:3: (root): expected a plain key, found a list"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        cfg_doc *d = (cfg_doc *)1;
        err e = {0};
        assert_true(cfg_load_string("t.yaml", cs[i].yaml, strlen(cs[i].yaml), &d, &e) < 0);
        assert_null(d);
        assert_string_equal(e.msg, cs[i].msg);
    }
    /* 100 levels of nesting: refused, not a stack overflow. */
    char deep[512] = "";
    for (int i = 0; i < 100; i++)
        strcat(deep, "[");
    cfg_doc *d;
    err e = {0};
    assert_true(cfg_load_string("t.yaml", deep, strlen(deep), &d, &e) < 0);
    assert_non_null(strstr(e.msg, "nested deeper than 64 levels"));
}

static void test_cfg_set_overrides_creates_and_indexes(void **state)
{
    (void)state;
    const char *y = "a:\n  b: 1\nlist:\n  - {x: 1}\n  - {x: 2}\n";
    cfg_doc *d;
    err e = {0};
    assert_int_equal(cfg_load_string("t.yaml", y, strlen(y), &d, &e), 0);
    assert_int_equal(cfg_set(d, "a.b=5", &e), 0);
    assert_int_equal(cfg_set(d, "a.c.d=hello", &e), 0);
    assert_int_equal(cfg_set(d, "list[1].x=7", &e), 0);
    assert_int_equal(cfg_set(d, "list.0.x=[3, 4]", &e), 0);
    assert_int_equal(cfg_set(d, "new={k: v}", &e), 0);
    cfg_node *r = cfg_root(d);
    assert_string_equal(cfg_scalar(cfg_get(cfg_get(r, "a"), "b")), "5");
    cfg_node *bnode = cfg_get(cfg_get(r, "a"), "b");
    assert_string_equal(cfg_file(bnode), "--set");
    assert_int_equal(cfg_col(bnode), 5);
    assert_string_equal(cfg_scalar(cfg_get(cfg_get(cfg_get(r, "a"), "c"), "d")), "hello");
    assert_string_equal(cfg_scalar(cfg_get(cfg_at(cfg_get(r, "list"), 1), "x")), "7");
    assert_int_equal(cfg_kind(cfg_get(cfg_at(cfg_get(r, "list"), 0), "x")), CFG_SEQ);
    assert_string_equal(cfg_scalar(cfg_get(cfg_get(r, "new"), "k")), "v");

    static const bad_case cs[] = {
        {"novalue", "--set novalue: expected key.path=value"},
        {"list[5].x=1", "--set list[5].x: list has 2 elements; index 5 is out of range"},
        {"list.y=1", "--set list.y: list is a list; expected an index, found \"y\""},
        {"a.b.c=1", "--set a.b.c: a.b is a value; cannot address \"c\" in it"},
        {"a.b=[1,", "--set:1:8: YAML syntax error in a.b[1]: did not find expected node content "
                    "(while parsing a flow node at line 1, column 8)"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        err e2 = {0};
        assert_true(cfg_set(d, cs[i].yaml, &e2) < 0);
        assert_string_equal(e2.msg, cs[i].msg);
    }
    cfg_free(d);
}

static void test_cfg_dist_from_map(void **state)
{
    (void)state;
    const char *y = "d1: {dist: exponential, mean: 2ms}\n"
                    "d2: {dist: pareto, shape: 1.5, mean: 3KB}\n"
                    "d3: {dist: lognormal, mean: 1us, sigma: 0.5}\n"
                    "d4: {dist: uniform, min: 2ms, max: 1ms}\n"
                    "d5: {dist: exponental, mean: 1ms}\n"
                    "d6: {dist: exponential, mean: 0s}\n"
                    "d7: {dist: pareto, shape: 1.5}\n"
                    "d8: {dist: constant, value: 5, extra: 1}\n";
    cfg_doc *d;
    err e = {0};
    assert_int_equal(cfg_load_string("t.yaml", y, strlen(y), &d, &e), 0);
    cfg_node *r = cfg_root(d);
    dist x;
    assert_int_equal(dist_from_cfg(cfg_get(r, "d1"), "d1", DIST_Q_TIME, NULL, &x, &e), 0);
    assert_float_equal(dist_mean(&x), 2e9, 0);
    assert_int_equal(dist_from_cfg(cfg_get(r, "d2"), "d2", DIST_Q_SIZE, NULL, &x, &e), 0);
    assert_float_equal(x.b, 1000, 1e-9);            /* scale = mean (a-1)/a */
    assert_float_equal(dist_mean(&x), 3000, 1e-9);
    assert_int_equal(dist_from_cfg(cfg_get(r, "d3"), "d3", DIST_Q_TIME, NULL, &x, &e), 0);
    assert_float_equal(dist_mean(&x), 1e6, 1e-6);
    static const char *msgs[] = {
        "t.yaml:4:36: d4.max: expected max >= min, found \"1ms\"",
        "t.yaml:5:12: d5.dist: expected one of: constant, uniform, exponential, pareto, "
        "lognormal, normal, empirical, found \"exponental\"; did you mean \"exponential\"?",
        "t.yaml:6:31: d6.mean: expected a time > 0s, found \"0s\"",
        "t.yaml:7:5: d7: a pareto distribution takes exactly one of mean and scale, found neither",
        "t.yaml:8:32: d8.extra: unknown key; expected one of: dist, value",
    };
    for (int i = 0; i < 5; i++) {
        char key[16];
        snprintf(key, sizeof key, "d%d", i + 4);
        err e2 = {0};
        assert_true(dist_from_cfg(cfg_get(r, key), key, DIST_Q_TIME, NULL, &x, &e2) < 0);
        assert_string_equal(e2.msg, msgs[i]);
    }
    cfg_free(d);
}

/* Values quoted in messages: at most 40 characters, cut after a whole UTF-8
 * character, control bytes as \xNN. */
static void test_cfg_quote_truncates_and_escapes(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(cfg_quote("1.25", b, sizeof b), "\"1.25\"");
    char forty[41];
    memset(forty, '7', 40);
    forty[40] = '\0';
    assert_string_equal(cfg_quote(forty, b, sizeof b),
                        "\"7777777777777777777777777777777777777777\"");
    char digits[301];
    memset(digits, '1', 300);
    digits[300] = '\0';
    assert_string_equal(cfg_quote(digits, b, sizeof b),
                        "\"1111111111111111111111111111111111111...\"");
    assert_string_equal(cfg_quote("a\x01\x1b[0m", b, sizeof b), "\"a\\x01\\x1b[0m\"");
    /* 36 ASCII bytes then "é" (2 bytes) straddling the cut: cut before it. */
    char u[64];
    snprintf(u, sizeof u, "%.36s\xc3\xa9%s", digits, "xxxxxxxx");
    assert_string_equal(cfg_quote(u, b, sizeof b), "\"111111111111111111111111111111111111...\"");
}

/* Integers are range-checked exactly: 2^53 + 1 is not <= 2^53 although it
 * converts to 2^53 as a double. */
static void test_cfg_int_range_is_exact(void **state)
{
    (void)state;
    cfg_doc *d;
    err e = {0};
    const char *y = "a: 9007199254740993\nb: 9007199254740992\n";
    assert_int_equal(cfg_load_string("t.yaml", y, strlen(y), &d, &e), 0);
    cfg_key k = {.name = "a", .type = CFG_INT, .flags = CFG_MAX, .max = 9007199254740992.0};
    int64_t v = 0;
    assert_int_equal(cfg_value(cfg_get(cfg_root(d), "a"), "a", &k, &v, &e), AISIM_ERANGE);
    assert_string_equal(e.msg, "t.yaml:1:4: a: expected an integer <= 9007199254740992, "
                        "found \"9007199254740993\"");
    assert_int_equal(cfg_value(cfg_get(cfg_root(d), "b"), "b", &k, &v, &e), 0);
    assert_true(v == INT64_C(9007199254740992));
    cfg_free(d);
}

/* libyaml's reader errors carry an offset, not a mark: the position is
 * counted from it (characters, not bytes). */
static void test_cfg_bad_utf8_reported_where_it_is(void **state)
{
    (void)state;
    cfg_doc *d;
    err e = {0};
    const char *y = "a: 1\nb: \xc3\xa9\xc3\xa9 \xfe\n";
    assert_int_equal(cfg_load_string("t.yaml", y, strlen(y), &d, &e), AISIM_EINVAL);
    assert_string_equal(e.msg, "t.yaml:2:7: YAML syntax error: invalid leading UTF-8 octet "
                        "(byte 0xfe); a scenario is UTF-8 text");
}

/* A long list of small maps, each bound with two defaults inserted, as a
 * `flows:` list of a million flows is: the tree stays linear in the list
 * with a small constant (no node of its own per default key, no half-empty
 * arrays, nodes in an arena), and every default is still written back. */
typedef struct flowlike {
    const char *src, *dst;
    int64_t size, start, prio;
} flowlike;

static void test_cfg_long_list_memory_is_linear_and_small(void **state)
{
    (void)state;
    static const cfg_key keys[] = {
        {.name = "src", .type = CFG_STR, .off = offsetof(flowlike, src)},
        {.name = "dst", .type = CFG_STR, .off = offsetof(flowlike, dst)},
        {.name = "size", .type = CFG_SIZE, .off = offsetof(flowlike, size)},
        {.name = "start", .type = CFG_TIME, .off = offsetof(flowlike, start), .def = "0s"},
        {.name = "prio", .type = CFG_INT, .off = offsetof(flowlike, prio), .def = "0"},
        {0},
    };
    enum { N = 20000 };
    char *y = malloc((size_t)N * 48 + 16), *p = y;
    p += sprintf(p, "flows:\n");
    for (int i = 0; i < N; i++)
        p += sprintf(p, "  - {src: h%d, dst: h%d, size: %dKB}\n", i % 32, (i + 1) % 32, 1 + i % 97);
    size_t len = (size_t)(p - y);
    cfg_doc *d;
    err e = {0};
    assert_int_equal(cfg_load_string("flows.yaml", y, len, &d, &e), 0);
    cfg_node *fl = cfg_get(cfg_root(d), "flows");
    for (int i = 0; i < N; i++) {
        flowlike f;
        char path[64];
        snprintf(path, sizeof path, "flows[%d]", i);
        assert_int_equal(cfg_bind(cfg_at(fl, (size_t)i), path, keys, &f, &e), 0);
    }
    /* root map, "flows", the list; per element a map, 3 keys, 3 values and
     * 2 default values; the 2 default keys once. */
    assert_int_equal(cfg_doc_nodes(d), 3 + (size_t)N * 9 + 2);
    /* 56 + 6 * 24 + 2 * 24 + 48 + 80 = 376 bytes per element as built now;
     * before the arena it was over 1,500 (a malloc per node and string, a
     * YAML parser per default). */
    size_t bytes = cfg_doc_bytes(d);
    if (bytes > (size_t)N * 400)
        fail_msg("%zu bytes for %d elements (%zu each)", bytes, N, bytes / N);
    char *out;
    size_t outlen;
    FILE *f = open_memstream(&out, &outlen);
    assert_int_equal(cfg_emit(cfg_root(d), f, &e), 0);
    fclose(f);
    int starts = 0;
    for (char *q = out; (q = strstr(q, "start: 0s")); q++)
        starts++;
    assert_int_equal(starts, N);
    free(out);
    cfg_free(d);
    free(y);
}

/* Duplicate keys in a big map: found through the hash the check switches to
 * after 16 keys (a 200,000-key map took minutes when every key was compared
 * with every earlier one), with the first key's position. */
static void test_cfg_duplicate_key_in_big_map(void **state)
{
    (void)state;
    enum { N = 5000 };
    const int dups[] = {0, 15, 16, 17, N - 1};
    for (size_t t = 0; t < sizeof dups / sizeof *dups; t++) {
        char *y = malloc((size_t)N * 16 + 64), *p = y;
        p += sprintf(p, "m:\n");
        for (int i = 0; i < N; i++)
            p += sprintf(p, "  k%d: %d\n", i, i);
        p += sprintf(p, "  k%d: again\n", dups[t]);
        cfg_doc *d;
        err e = {0};
        assert_int_equal(cfg_load_string("big.yaml", y, (size_t)(p - y), &d, &e), AISIM_EINVAL);
        char want[128];
        snprintf(want, sizeof want, "big.yaml:%d:3: m.k%d: duplicate key (first given at line "
                 "%d, column 3)", N + 2, dups[t], dups[t] + 2);
        assert_string_equal(e.msg, want);
        free(y);
    }
    /* Without a duplicate it loads, every key in order. */
    char *y = malloc((size_t)N * 16 + 64), *p = y;
    p += sprintf(p, "m:\n");
    for (int i = 0; i < N; i++)
        p += sprintf(p, "  k%d: %d\n", i, i);
    cfg_doc *d;
    err e = {0};
    assert_int_equal(cfg_load_string("big.yaml", y, (size_t)(p - y), &d, &e), 0);
    cfg_node *m = cfg_get(cfg_root(d), "m");
    assert_int_equal(cfg_len(m), N);
    assert_string_equal(cfg_key_at(m, N - 1), "k4999");
    cfg_free(d);
    free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfg_binds_values_and_fills_defaults),
        cmocka_unit_test(test_cfg_errors_name_position_key_expected_found),
        cmocka_unit_test(test_cfg_load_rejects_syntax_aliases_depth_documents),
        cmocka_unit_test(test_cfg_set_overrides_creates_and_indexes),
        cmocka_unit_test(test_cfg_dist_from_map),
        cmocka_unit_test(test_cfg_quote_truncates_and_escapes),
        cmocka_unit_test(test_cfg_int_range_is_exact),
        cmocka_unit_test(test_cfg_bad_utf8_reported_where_it_is),
        cmocka_unit_test(test_cfg_long_list_memory_is_linear_and_small),
        cmocka_unit_test(test_cfg_duplicate_key_in_big_map),
    };
    return cmocka_run_group_tests_name("cfg", tests, NULL, NULL);
}
