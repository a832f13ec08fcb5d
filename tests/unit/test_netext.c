/*
 * test_netext.c - network extensions (netext.h): the loader binds an
 * extension's keys into its state and calls it at the documented points;
 * names and keys are checked with located errors.  The extension here is
 * the worked example of docs/architecture.md (`msgstat`: messages sent and
 * done, bytes delivered, under its section's label).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/netext.h"
#include "aisim/netreg.h"
#include "aisim/network.h"
#include "aisim/sim.h"
#include "aisim/units.h"
#include "testutil.h"

/* ---- the worked example ---------------------------------------------- */

typedef struct msgstat {
    const char *label;          /* first: its key binds here */
    int64_t min_bytes;
    network *n;
    uint64_t sent, done, bytes;
    bool started;
} msgstat;

static const cfg_key msgstat_keys[] = {
    {.name = "label", .type = CFG_STR, .off = offsetof(msgstat, label), .def = "all",
     .help = "its summary object's label"},
    {.name = "min_bytes", .type = CFG_SIZE, .off = offsetof(msgstat, min_bytes), .def = "0B",
     .flags = CFG_MIN, .min = 0, .help = "count messages of at least this size"},
    {0},
};

static int ms_configure(void *st, network *n, cfg_node *sec, const char *path,
                        const model_env *env, err *e)
{
    (void)sec;
    (void)path;
    (void)env;
    (void)e;
    msgstat *x = st;
    x->n = n;
    return 0;
}

static void ms_start(void *st) { ((msgstat *)st)->started = true; }

static void ms_on_send(void *st, conn *c, const net_msg *m)
{
    msgstat *x = st;
    if (x->started && m->bytes >= (uint64_t)x->min_bytes && m->conn == c->id)
        x->sent++;              /* (not started: the count shows it) */
}

static void ms_on_done(void *st, const net_msg *m)
{
    msgstat *x = st;
    if (m->bytes < (uint64_t)x->min_bytes)
        return;
    x->done++;
    x->bytes += m->bytes;
}

static int ms_report(void *st, out *o, json_t *sum, err *e)
{
    (void)o;
    (void)e;
    msgstat *x = st;
    json_t *j = json_object();
    json_object_set_new(j, "label", json_string(x->label));
    json_object_set_new(j, "sent", json_integer((json_int_t)x->sent));
    json_object_set_new(j, "done", json_integer((json_int_t)x->done));
    json_object_set_new(j, "bytes", json_integer((json_int_t)x->bytes));
    json_object_set_new(sum, "msgstat", j);
    return 0;
}

static void ms_fini(void *st) { (void)st; }

static const netext_ops msgstat_ops = {
    .name = "msgstat",
    .summary = "messages sent and done",
    .keys = msgstat_keys,
    .state_size = sizeof(msgstat),
    .configure = ms_configure,
    .start = ms_start,
    .on_send = ms_on_send,
    .on_done = ms_on_done,
    .report = ms_report,
    .fini = ms_fini,
};

/* ---- the tests ---------------------------------------------------------- */

typedef struct bed {
    cfg_doc *doc;
    sim *s;
    network *n;
    net_registry reg;
    const netext_ops *exts[2];
} bed;

static int bed_make(bed *b, const char *yaml, err *e)
{
    memset(b, 0, sizeof *b);
    b->reg = *net_registry_builtin();
    b->exts[0] = &msgstat_ops;
    b->reg.extensions = b->exts;
    int r = cfg_load_string("net.yaml", yaml, strlen(yaml), &b->doc, e);
    if (r)
        return r;
    b->s = sim_create();
    model_env env = {.sim = b->s, .seed = 1, .base_dir = ".", .stop_ps = SIM_TIME_MAX,
                     .net = &b->reg};
    return network_from_section(&b->n, cfg_root(b->doc), "net", &env, e);
}

static void bed_free(bed *b)
{
    network_destroy(b->n);
    sim_destroy(b->s);
    cfg_free(b->doc);
}

static int cb_calls;

static void on_msg(void *ctx, network *n, const net_msg *m)
{
    (void)ctx;
    (void)n;
    (void)m;
    cb_calls++;
}

static const char *topo_yaml = "topology: {kind: star, hosts: 3, link: {rate: 10Gbps, delay: 1us}}\n";

/* Keys bound (the default written back and an explicit one), start, every
 * message seen at send and at completion (the small one filtered by the
 * extension's own key), the summary object written by report(). */
static void test_lifecycle(void **state)
{
    (void)state;
    char yaml[512];
    snprintf(yaml, sizeof yaml, "%sextensions:\n  msgstat: {min_bytes: 1KB}\n", topo_yaml);
    bed b;
    err e = {0};
    if (bed_make(&b, yaml, &e))
        fail_msg("%s", e.msg);
    network_start(b.n);
    cb_calls = 0;
    network_send(b.n, 0, 2, 100000, 0, 7, 5 * PS_PER_US, on_msg, NULL);
    network_send(b.n, 1, 2, 200000, 0, 8, 0, on_msg, NULL);
    network_send(b.n, 1, 0, 10, 0, 9, 0, on_msg, NULL);     /* below min_bytes */
    sim_run(b.s, SIM_TIME_MAX);
    assert_int_equal(cb_calls, 3);
    out *o = NULL;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/life", tu_tmp);
    assert_int_equal(out_open(dir, 0, &o, &e), 0);
    json_t *sum = json_object();
    assert_int_equal(network_report(b.n, o, sum, &e), 0);
    out_abort(o);
    json_t *j = json_object_get(sum, "msgstat");
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "label")), "all");
    assert_int_equal(json_integer_value(json_object_get(j, "sent")), 2);
    assert_int_equal(json_integer_value(json_object_get(j, "done")), 2);
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 300000);
    json_decref(sum);
    bed_free(&b);
}

/* An unknown extension, an unknown key in its section and a section that
 * is not a map are located errors. */
static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *ext, *msg;
    } cases[] = {
        {"  msgstats: {}\n", "net.yaml:3:13: net.extensions.msgstats: expected a network "
                             "extension (msgstat), found \"msgstats\""},
        {"  msgstat: {labl: x}\n", "net.yaml:3:13: net.extensions.msgstat.labl: unknown key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char yaml[512];
        snprintf(yaml, sizeof yaml, "%sextensions:\n%s", topo_yaml, cases[i].ext);
        bed b;
        err e = {0};
        assert_int_not_equal(bed_make(&b, yaml, &e), 0);
        if (strncmp(e.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
            fail_msg("case %zu: %s", i, e.msg);
        bed_free(&b);
    }
    char yaml[512];
    snprintf(yaml, sizeof yaml, "%sextensions: [msgstat]\n", topo_yaml);
    bed b;
    err e = {0};
    assert_int_not_equal(bed_make(&b, yaml, &e), 0);
    assert_non_null(strstr(e.msg, "net.extensions: expected a map from extension name"));
    bed_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
