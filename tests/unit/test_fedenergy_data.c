/*
 * test_fedenergy_data.c - the federated-learning data loaders and partitions:
 * real files load with the documented shapes and class counts; missing,
 * truncated and malformed files fail with messages that name the line or
 * byte; partitions cover every sample, leave no device empty and skew labels
 * as much as alpha says.
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
#include <zlib.h>

#include "systems/fedenergy/fe_data.h"

#define DIGITS "data/uci_digits/digits.csv"
#define MNIST_X "data/mnist_10k/mnist10k-images-idx3-ubyte.gz"
#define MNIST_Y "data/mnist_10k/mnist10k-labels-idx1-ubyte.gz"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_digits_loads(void **state)
{
    (void)state;
    fe_dataset d;
    err e = {0};
    assert_int_equal(fe_data_load_csv(DIGITS, 64, 10, 16, &d, &e), 0);
    assert_int_equal(d.n, 1797);
    assert_int_equal(d.dim, 64);
    int cnt[10] = {0};
    for (size_t i = 0; i < d.n; i++)
        cnt[d.y[i]]++;
    static const int want[10] = {178, 182, 177, 183, 181, 182, 181, 179, 174, 180};
    for (int c = 0; c < 10; c++)
        assert_int_equal(cnt[c], want[c]);
    /* first row, column 2 is 5 -> 5/16 */
    assert_true(d.x[2] == 5.0 / 16);
    assert_int_equal(d.y[0], 0);
    fe_data_fini(&d);
}

static void test_csv_errors_name_the_line(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/fe_test_csv_%d", (int)getpid());
    fe_dataset d;
    err e = {0};

    write_file(path, "1,2,3,0\n4,5,6,1\n7,8,2\n");
    assert_int_equal(fe_data_load_csv(path, 3, 2, 16, &d, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, ":3: expected 4 columns"));
    assert_non_null(strstr(e.msg, "found 3"));

    write_file(path, "1,2,3,0\n4,5,6,1\n7,8");   /* cut mid-line */
    assert_int_equal(fe_data_load_csv(path, 3, 2, 16, &d, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, ":3: expected 4 columns"));
    assert_non_null(strstr(e.msg, "truncated"));

    write_file(path, "1,2,3,0\n4,x,6,1\n");
    assert_int_equal(fe_data_load_csv(path, 3, 2, 16, &d, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, ":2: column 2: expected an integer"));

    write_file(path, "1,2,3,0\n4,5,6,7\n");
    assert_int_equal(fe_data_load_csv(path, 3, 2, 16, &d, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, ":2: column 4: label 7"));

    write_file(path, "1,2,30,0\n");
    assert_int_equal(fe_data_load_csv(path, 3, 2, 16, &d, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, ":1: column 3: feature 30"));
    unlink(path);

    assert_int_equal(fe_data_load_csv("/nonexistent/digits.csv", 64, 10, 16, &d, &e),
                     AISIM_ENOENT);
    assert_non_null(strstr(e.msg, "/nonexistent/digits.csv"));
    assert_null(d.x);
}

/* One rule for byte-order marks (infile.h): a UTF-8 BOM opening a data
 * file is skipped (it used to be refused by some loaders, as a number
 * "\xef\xbb\xbf1" or a column named so, and accepted by others); one
 * anywhere else is data, and the error names its line and column. */
static void test_bom_skipped_at_start_only(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/fe_test_bom_%d", (int)getpid());
    fe_dataset d;
    fe_table t;
    err e = {0};
    write_file(path, "\xef\xbb\xbf" "1,2,3,0\n4,5,6,1\n");
    assert_int_equal(fe_data_load_csv(path, 3, 2, 16, &d, &e), 0);
    assert_int_equal(d.n, 2);
    assert_true(d.x[0] == 1.0 / 16);
    fe_data_fini(&d);
    write_file(path, "\xef\xbb\xbf" "cpu_hz,step_time_s\n1e9,0.5\n");
    assert_int_equal(fe_table_load(path, &t, &e), 0);
    assert_string_equal(t.names[0], "cpu_hz");
    assert_true(t.v[0] == 1e9 && t.v[1] == 0.5);
    fe_table_fini(&t);
    write_file(path, "cpu_hz,step_time_s\n1e9,0.5\n\xef\xbb\xbf" "2e9,0.5\n");
    assert_int_equal(fe_table_load(path, &t, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, ":3:1: cpu_hz: expected a finite number, found \"\xef\xbb\xbf"));
    unlink(path);
}

static void test_mnist_idx_loads(void **state)
{
    (void)state;
    fe_dataset d;
    err e = {0};
    assert_int_equal(fe_data_load_idx(MNIST_X, MNIST_Y, 10, &d, &e), 0);
    assert_int_equal(d.n, 10000);
    assert_int_equal(d.dim, 784);
    int cnt[10] = {0};
    double mx = 0;
    for (size_t i = 0; i < d.n; i++)
        cnt[d.y[i]]++;
    for (size_t i = 0; i < d.n * d.dim; i++)
        mx = d.x[i] > mx ? d.x[i] : mx;
    static const int want[10] = {1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978};
    for (int c = 0; c < 10; c++)
        assert_int_equal(cnt[c], want[c]);
    assert_true(mx == 1.0);
    fe_data_fini(&d);
}

static void test_idx_truncated_and_bad_magic(void **state)
{
    (void)state;
    char xp[64], yp[64];
    snprintf(xp, sizeof xp, "/tmp/fe_test_idx_%d", (int)getpid());
    snprintf(yp, sizeof yp, "/tmp/fe_test_lbl_%d", (int)getpid());
    unsigned char hx[16 + 10] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2};
    unsigned char hy[8 + 2] = {0, 0, 8, 1, 0, 0, 0, 2, 1, 0};
    gzFile g = gzopen(xp, "wb");
    gzwrite(g, hx, sizeof hx);  /* needs 16 + 8 bytes: has 26, fine */
    gzclose(g);
    g = gzopen(yp, "wb");
    gzwrite(g, hy, sizeof hy);
    gzclose(g);
    fe_dataset d;
    err e = {0};
    assert_int_equal(fe_data_load_idx(xp, yp, 10, &d, &e), 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.dim, 4);
    fe_data_fini(&d);

    g = gzopen(xp, "wb");
    gzwrite(g, hx, 16 + 5);     /* 5 of 8 pixel bytes */
    gzclose(g);
    assert_int_equal(fe_data_load_idx(xp, yp, 10, &d, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "truncated"));
    assert_non_null(strstr(e.msg, "needs 8 bytes from byte 16, found 5"));

    hx[3] = 1;                  /* label magic in an image file */
    g = gzopen(xp, "wb");
    gzwrite(g, hx, sizeof hx);
    gzclose(g);
    assert_int_equal(fe_data_load_idx(xp, yp, 10, &d, &e), AISIM_EINVAL);
    assert_non_null(strstr(e.msg, "not an IDX image file"));
    unlink(xp);
    unlink(yp);

    assert_int_equal(fe_data_load_idx("/nonexistent/x.gz", MNIST_Y, 10, &d, &e), AISIM_ENOENT);
    assert_non_null(strstr(e.msg, "/nonexistent/x.gz"));
}

/* Mean over devices of the share of its samples in its most common label. */
static double label_skew(const fe_dataset *d, const int *owner, size_t n_dev, size_t *min_size)
{
    size_t *cnt = calloc(n_dev * 10, sizeof *cnt), *tot = calloc(n_dev, sizeof *tot);
    for (size_t i = 0; i < d->n; i++) {
        assert_true(owner[i] >= 0 && (size_t)owner[i] < n_dev);
        cnt[owner[i] * 10 + d->y[i]]++;
        tot[owner[i]]++;
    }
    double skew = 0;
    *min_size = d->n;
    for (size_t k = 0; k < n_dev; k++) {
        size_t mx = 0;
        for (int c = 0; c < 10; c++)
            mx = cnt[k * 10 + c] > mx ? cnt[k * 10 + c] : mx;
        skew += (double)mx / (double)tot[k];
        if (tot[k] < *min_size)
            *min_size = tot[k];
    }
    free(cnt);
    free(tot);
    return skew / (double)n_dev;
}

static void test_partitions(void **state)
{
    (void)state;
    fe_dataset d;
    err e = {0};
    assert_int_equal(fe_data_load_csv(DIGITS, 64, 10, 16, &d, &e), 0);
    rng r;
    rng_init(&r, 1, "test.partition", 0);
    size_t mn;
    int *o = fe_partition(&d, 20, FE_PART_IID, 0, 0, &r);
    double s_iid = label_skew(&d, o, 20, &mn);
    assert_true(mn >= 89);      /* 1797 / 20 rounded down */
    free(o);
    o = fe_partition(&d, 20, FE_PART_DIRICHLET, 0.1, 0, &r);
    double s_01 = label_skew(&d, o, 20, &mn);
    assert_true(mn >= 1);
    free(o);
    o = fe_partition(&d, 20, FE_PART_DIRICHLET, 100, 0, &r);
    double s_100 = label_skew(&d, o, 20, &mn);
    free(o);
    o = fe_partition(&d, 20, FE_PART_SHARDS, 0, 2, &r);
    double s_sh = label_skew(&d, o, 20, &mn);
    assert_true(mn >= 80);
    free(o);
    o = fe_partition(&d, 1797, FE_PART_DIRICHLET, 0.05, 0, &r);   /* one sample each */
    label_skew(&d, o, 1797, &mn);
    assert_int_equal(mn, 1);
    free(o);
    /* IID ~ 0.2 share of the top label; alpha = 0.1 concentrates labels */
    assert_true(s_iid < 0.3);
    assert_true(s_100 < 0.3);
    assert_true(s_01 > 0.6);
    assert_true(s_sh >= 0.5);
    fe_data_fini(&d);
}

static void test_gamma_mean(void **state)
{
    (void)state;
    rng r;
    rng_init(&r, 7, "test.gamma", 0);
    const double shapes[] = {0.1, 0.5, 1, 3.5};
    for (size_t k = 0; k < 4; k++) {
        double s = 0;
        for (int i = 0; i < 200000; i++)
            s += fe_gamma(&r, shapes[k]);
        assert_float_equal(s / 200000, shapes[k], 0.02 * shapes[k] + 0.005);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digits_loads),
        cmocka_unit_test(test_csv_errors_name_the_line),
        cmocka_unit_test(test_bom_skipped_at_start_only),
        cmocka_unit_test(test_mnist_idx_loads),
        cmocka_unit_test(test_idx_truncated_and_bad_magic),
        cmocka_unit_test(test_partitions),
        cmocka_unit_test(test_gamma_mean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
