/*
 * fe_model.c - softmax regression and a ReLU MLP with dgemm (fe_model.h).
 *
 * Forward for a batch X (B x D):  Z = X W^T + 1 b^T, P = softmax(Z) row-wise
 * (max-subtracted).  Backward: dZ = (P - onehot(y)) / B, dW = dZ^T X,
 * db = column sums of dZ; the MLP adds H = relu(X W1^T + b1) and
 * dH = (dZ W2) .* [H > 0].  Cost per step O(B * D * K) (logistic) or
 * O(B * H * (D + K)) (MLP).
 */
#include "systems/fedenergy/fe_model.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

struct fe_work {
    size_t batch;       /* capacity in samples */
    double *xb;         /* batch x D gathered rows */
    int *yb;            /* batch labels */
    double *z;          /* batch x K logits / probabilities / dZ */
    double *h;          /* batch x H hidden activations (MLP) */
    double *dh;         /* batch x H hidden gradient (MLP) */
    double *grad;       /* nparam */
};

void fe_arch_init(fe_arch *a, enum fe_arch_kind kind, size_t dim, size_t classes, size_t hidden)
{
    a->kind = kind;
    a->dim = dim;
    a->classes = classes;
    a->hidden = kind == FE_ARCH_MLP ? hidden : 0;
    a->nparam = kind == FE_ARCH_MLP ? hidden * dim + hidden + classes * hidden + classes
                                    : classes * dim + classes;
}

void fe_model_init_params(const fe_arch *a, double *w, rng *r)
{
    memset(w, 0, a->nparam * sizeof *w);
    if (a->kind != FE_ARCH_MLP)
        return;
    size_t D = a->dim, H = a->hidden, K = a->classes;
    double l1 = sqrt(6.0 / (double)(D + H)), l2 = sqrt(6.0 / (double)(H + K));
    for (size_t i = 0; i < H * D; i++)
        w[i] = rng_uniform(r, -l1, l1);
    double *w2 = w + H * D + H;
    for (size_t i = 0; i < K * H; i++)
        w2[i] = rng_uniform(r, -l2, l2);
}

fe_work *fe_work_create(const fe_arch *a, size_t batch)
{
    fe_work *wk = xcalloc(1, sizeof *wk);
    wk->batch = batch;
    wk->xb = xmalloc(batch * a->dim * sizeof *wk->xb);
    wk->yb = xmalloc(batch * sizeof *wk->yb);
    wk->z = xmalloc(batch * a->classes * sizeof *wk->z);
    if (a->hidden) {
        wk->h = xmalloc(batch * a->hidden * sizeof *wk->h);
        wk->dh = xmalloc(batch * a->hidden * sizeof *wk->dh);
    }
    wk->grad = xmalloc(a->nparam * sizeof *wk->grad);
    return wk;
}

void fe_work_destroy(fe_work *wk)
{
    if (!wk)
        return;
    free(wk->xb);
    free(wk->yb);
    free(wk->z);
    free(wk->h);
    free(wk->dh);
    free(wk->grad);
    free(wk);
}

void fe_model_single_thread(void) { openblas_set_num_threads(1); }

/* out (n x m) = in (n x k) * W^T (W is m x k) + 1 b^T */
static void affine(const double *in, size_t n, size_t k, const double *W, const double *b,
                   size_t m, double *out)
{
    for (size_t i = 0; i < n; i++)
        memcpy(out + i * m, b, m * sizeof *out);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)m, (int)k, 1.0, in, (int)k,
                W, (int)k, 1.0, out, (int)m);
}

/* Softmax rows of z in place; returns the summed cross-entropy and counts
 * correct predictions (argmax, lowest index on ties) into *correct. */
static double softmax_xent(double *z, const int *y, size_t n, size_t K, size_t *correct)
{
    double loss = 0;
    for (size_t i = 0; i < n; i++) {
        double *r = z + i * K, mx = r[0];
        size_t am = 0;
        for (size_t k = 1; k < K; k++)
            if (r[k] > mx) {
                mx = r[k];
                am = k;
            }
        if (correct && (int)am == y[i])
            (*correct)++;
        double s = 0;
        for (size_t k = 0; k < K; k++)
            s += r[k] = exp(r[k] - mx);
        for (size_t k = 0; k < K; k++)
            r[k] /= s;
        loss -= log(r[y[i]] > 1e-300 ? r[y[i]] : 1e-300);
    }
    return loss;
}

/* Forward pass into wk->z (probabilities) and wk->h; returns summed loss. */
static double forward(const fe_arch *a, const double *w, const double *x, const int *y, size_t n,
                      fe_work *wk, size_t *correct)
{
    size_t D = a->dim, K = a->classes, H = a->hidden;
    if (a->kind == FE_ARCH_LOGISTIC) {
        affine(x, n, D, w, w + K * D, K, wk->z);
    } else {
        affine(x, n, D, w, w + H * D, H, wk->h);
        for (size_t i = 0; i < n * H; i++)
            if (wk->h[i] < 0)
                wk->h[i] = 0;
        const double *w2 = w + H * D + H;
        affine(wk->h, n, H, w2, w2 + K * H, K, wk->z);
    }
    return softmax_xent(wk->z, y, n, K, correct);
}

double fe_model_grad(const fe_arch *a, const double *w, const double *x, const int *y, size_t n,
                     double l2, double *grad, fe_work *wk)
{
    assert(n >= 1 && n <= wk->batch);
    size_t D = a->dim, K = a->classes, H = a->hidden;
    double loss = forward(a, w, x, y, n, wk, NULL) / (double)n;
    double *dz = wk->z;
    for (size_t i = 0; i < n; i++) {
        dz[i * K + y[i]] -= 1;
        for (size_t k = 0; k < K; k++)
            dz[i * K + k] /= (double)n;
    }
    /* the output layer: weights Wo (K x In), input `in` (n x In) */
    const double *in = a->kind == FE_ARCH_LOGISTIC ? x : wk->h;
    size_t In = a->kind == FE_ARCH_LOGISTIC ? D : H;
    size_t off = a->kind == FE_ARCH_LOGISTIC ? 0 : H * D + H;
    double *gW = grad + off, *gb = grad + off + K * In;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)In, (int)n, 1.0, dz, (int)K,
                in, (int)In, 0.0, gW, (int)In);
    for (size_t k = 0; k < K; k++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += dz[i * K + k];
        gb[k] = s;
    }
    if (a->kind == FE_ARCH_MLP) {
        const double *w2 = w + off;
        /* dH = dZ W2, masked by the ReLU */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)H, (int)K, 1.0, dz,
                    (int)K, w2, (int)H, 0.0, wk->dh, (int)H);
        for (size_t i = 0; i < n * H; i++)
            if (wk->h[i] <= 0)
                wk->dh[i] = 0;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)H, (int)D, (int)n, 1.0, wk->dh,
                    (int)H, x, (int)D, 0.0, grad, (int)D);
        for (size_t j = 0; j < H; j++) {
            double s = 0;
            for (size_t i = 0; i < n; i++)
                s += wk->dh[i * H + j];
            grad[H * D + j] = s;
        }
    }
    if (l2 > 0) {
        double sq = 0;
        /* weights only, not biases */
        size_t nw1 = a->kind == FE_ARCH_LOGISTIC ? K * D : H * D;
        for (size_t i = 0; i < nw1; i++) {
            grad[i] += l2 * w[i];
            sq += w[i] * w[i];
        }
        if (a->kind == FE_ARCH_MLP)
            for (size_t i = off; i < off + K * H; i++) {
                grad[i] += l2 * w[i];
                sq += w[i] * w[i];
            }
        loss += 0.5 * l2 * sq;
    }
    return loss;
}

double fe_model_sgd(const fe_arch *a, double *w, const double *x, const int *y,
                    const size_t *idx, size_t n, int steps, size_t batch, double lr, double l2,
                    rng *r, fe_work *wk)
{
    return fe_model_sgd_prox(a, w, x, y, idx, n, steps, batch, lr, l2, 0, NULL, r, wk);
}

double fe_model_sgd_prox(const fe_arch *a, double *w, const double *x, const int *y,
                         const size_t *idx, size_t n, int steps, size_t batch, double lr,
                         double l2, double mu, const double *center, rng *r, fe_work *wk)
{
    size_t D = a->dim, B = batch >= n ? n : batch;
    assert(B <= wk->batch);
    double loss = NAN;
    int full = batch >= n;
    if (full)
        for (size_t i = 0; i < n; i++) {
            memcpy(wk->xb + i * D, x + idx[i] * D, D * sizeof *x);
            wk->yb[i] = y[idx[i]];
        }
    for (int s = 0; s < steps; s++) {
        if (!full)
            for (size_t i = 0; i < B; i++) {
                size_t j = idx[rng_below(r, n)];
                memcpy(wk->xb + i * D, x + j * D, D * sizeof *x);
                wk->yb[i] = y[j];
            }
        loss = fe_model_grad(a, w, wk->xb, wk->yb, B, l2, wk->grad, wk);
        if (mu > 0) {
            cblas_daxpy((int)a->nparam, mu, w, 1, wk->grad, 1);
            cblas_daxpy((int)a->nparam, -mu, center, 1, wk->grad, 1);
        }
        cblas_daxpy((int)a->nparam, -lr, wk->grad, 1, w, 1);
    }
    return loss;
}

void fe_model_eval(const fe_arch *a, const double *w, const double *x, const int *y, size_t n,
                   fe_work *wk, double *accuracy, double *loss)
{
    size_t correct = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i += wk->batch) {
        size_t m = n - i < wk->batch ? n - i : wk->batch;
        sum += forward(a, w, x + i * a->dim, y + i, m, wk, &correct);
    }
    *accuracy = n ? (double)correct / (double)n : NAN;
    *loss = n ? sum / (double)n : NAN;
}
