/*
 * test_fedenergy_model.c - the trained models: analytic gradients match
 * finite differences (logistic and MLP, with l2), and centralised SGD on the
 * digits set reaches a known test accuracy, deterministically.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "systems/fedenergy/fe_data.h"
#include "systems/fedenergy/fe_model.h"

static void check_grad(fe_arch a)
{
    rng r;
    rng_init(&r, 3, "test.grad", a.kind);
    double x[6 * 36];
    int y[6] = {0, 1, 2, 1, 0, 2};
    for (size_t i = 0; i < 6 * a.dim; i++)
        x[i] = rng_u01(&r);
    double *w = malloc(a.nparam * sizeof *w), *g = malloc(a.nparam * sizeof *g);
    fe_model_init_params(&a, w, &r);
    for (size_t i = 0; i < a.nparam; i++)
        w[i] += rng_uniform(&r, -0.3, 0.3);
    fe_work *wk = fe_work_create(&a, 6);
    fe_model_grad(&a, w, x, y, 6, 0.01, g, wk);
    double *g2 = malloc(a.nparam * sizeof *g2);
    memcpy(g2, g, a.nparam * sizeof *g2);
    for (size_t i = 0; i < a.nparam; i++) {
        double h = 1e-6, keep = w[i];
        w[i] = keep + h;
        double lp = fe_model_grad(&a, w, x, y, 6, 0.01, g, wk);
        w[i] = keep - h;
        double lm = fe_model_grad(&a, w, x, y, 6, 0.01, g, wk);
        w[i] = keep;
        assert_float_equal(g2[i], (lp - lm) / (2 * h), 1e-6);
    }
    free(w);
    free(g);
    free(g2);
    fe_work_destroy(wk);
}

static void test_gradients_match_finite_differences(void **state)
{
    (void)state;
    fe_arch a;
    fe_arch_init(&a, FE_ARCH_LOGISTIC, 5, 3, 4);
    check_grad(a);
    fe_arch_init(&a, FE_ARCH_MLP, 5, 3, 4);
    check_grad(a);
    /* 6 x 6 images, two 3 x 3 filters: 4 x 4 activations, 2 x 2 x 2 pooled */
    assert_int_equal(fe_arch_init_cnn(&a, 6, 3, 2, 3), 0);
    assert_int_equal(a.hidden, 8);
    assert_int_equal(a.nparam, 2 * 9 + 2 + 3 * 8 + 3);
    check_grad(a);
    assert_int_equal(fe_arch_init_cnn(&a, 6, 3, 2, 2), -1);     /* 5 x 5: not poolable */
}

static void train_digits(enum fe_arch_kind kind, int steps, double lr, double *acc, double *loss,
                         double *w_sum)
{
    fe_dataset d, tr, te;
    err e = {0};
    assert_int_equal(fe_data_load_csv("data/uci_digits/digits.csv", 64, 10, 16, &d, &e), 0);
    rng r;
    rng_init(&r, 1, "test.split", 0);
    fe_data_split(&d, &r, 360, 0, &tr, &te);
    assert_int_equal(tr.n, 1437);
    fe_arch a;
    if (kind == FE_ARCH_CNN)
        assert_int_equal(fe_arch_init_cnn(&a, 8, 10, 8, 3), 0);
    else
        fe_arch_init(&a, kind, 64, 10, 32);
    double *w = malloc(a.nparam * sizeof *w);
    rng_init(&r, 1, "test.init", 0);
    fe_model_init_params(&a, w, &r);
    size_t *idx = malloc(tr.n * sizeof *idx);
    for (size_t i = 0; i < tr.n; i++)
        idx[i] = i;
    fe_work *wk = fe_work_create(&a, 32);
    rng_init(&r, 1, "test.batches", 0);
    fe_model_sgd(&a, w, tr.x, tr.y, idx, tr.n, steps, 32, lr, 0, &r, wk);
    fe_model_eval(&a, w, te.x, te.y, te.n, wk, acc, loss);
    *w_sum = 0;
    for (size_t i = 0; i < a.nparam; i++)
        *w_sum += w[i];
    fe_work_destroy(wk);
    free(idx);
    free(w);
    fe_data_fini(&d);
    fe_data_fini(&tr);
    fe_data_fini(&te);
}

static void test_centralised_logistic_reaches_93_percent(void **state)
{
    (void)state;
    fe_model_single_thread();
    double acc, loss, s1, acc2, loss2, s2;
    train_digits(FE_ARCH_LOGISTIC, 2000, 0.5, &acc, &loss, &s1);
    print_message("logistic: test accuracy %.4f, loss %.4f\n", acc, loss);
    assert_true(acc >= 0.93);
    assert_true(loss < 0.3);
    train_digits(FE_ARCH_LOGISTIC, 2000, 0.5, &acc2, &loss2, &s2);
    assert_true(acc == acc2 && loss == loss2 && s1 == s2);  /* bitwise repeatable */
}

static void test_centralised_mlp_learns(void **state)
{
    (void)state;
    double acc, loss, s;
    train_digits(FE_ARCH_MLP, 2000, 0.2, &acc, &loss, &s);
    print_message("mlp: test accuracy %.4f, loss %.4f\n", acc, loss);
    assert_true(acc >= 0.93);
}

static void test_centralised_cnn_learns(void **state)
{
    (void)state;
    double acc, loss, s;
    train_digits(FE_ARCH_CNN, 2000, 0.1, &acc, &loss, &s);
    print_message("cnn (8 3x3 filters, 2x2 pool): test accuracy %.4f, loss %.4f\n", acc, loss);
    assert_true(acc >= 0.93);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients_match_finite_differences),
        cmocka_unit_test(test_centralised_logistic_reaches_93_percent),
        cmocka_unit_test(test_centralised_mlp_learns),
        cmocka_unit_test(test_centralised_cnn_learns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
