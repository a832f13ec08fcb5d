/*
 * fe_model.c - softmax regression and a ReLU MLP with dgemm (fe_model.h).
 *
 * Forward for a batch X (B x D):  Z = X W^T + 1 b^T, P = softmax(Z) row-wise
 * (max-subtracted).  Backward: dZ = (P - onehot(y)) / B, dW = dZ^T X,
 * db = column sums of dZ; the MLP adds H = relu(X W1^T + b1) and
 * dH = (dZ W2) .* [H > 0].  The CNN's pooled features play the MLP's H
 * (no mask there): per sample, cols = im2col(x) (O^2 x k^2),
 * A = relu(cols Wc^T + bc) (O^2 x C), H = 2x2 means of A; backward
 * dA = dH / 4 spread over each window, masked by A > 0, dWc += dA^T cols.
 * Cost per step O(B * D * K) (logistic), O(B * H * (D + K)) (MLP) or
 * O(B * (O^2 k^2 C + F K)) (CNN).
 */
#include "systems/fedenergy/fe_model.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/sim.h"

struct fe_work {
    size_t batch;       /* capacity in samples */
    double *xb;         /* batch x D gathered rows */
    int *yb;            /* batch labels */
    double *z;          /* batch x K logits / probabilities / dZ */
    double *h;          /* batch x H hidden activations (MLP) */
    double *dh;         /* batch x H hidden gradient (MLP) */
    double *act;        /* CNN: batch x O^2 C convolution activations */
    double *cols;       /* CNN: O^2 x k^2 im2col of one sample */
    double *dact;       /* CNN: O^2 x C activation gradient of one sample */
    double *grad;       /* nparam */
    struct sim *poll;   /* polled once per step (fe_work_set_poll), or NULL */
};

void fe_work_set_poll(fe_work *wk, struct sim *poll) { wk->poll = poll; }

void fe_arch_init(fe_arch *a, enum fe_arch_kind kind, size_t dim, size_t classes, size_t hidden)
{
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->dim = dim;
    a->classes = classes;
    a->hidden = kind == FE_ARCH_MLP ? hidden : 0;
    a->nparam = kind == FE_ARCH_MLP ? hidden * dim + hidden + classes * hidden + classes
                                    : classes * dim + classes;
}

int fe_arch_init_cnn(fe_arch *a, size_t side, size_t classes, size_t filters, size_t kernel)
{
    memset(a, 0, sizeof *a);
    if (kernel < 1 || kernel > side || (side - kernel + 1) % 2 != 0)
        return -1;
    size_t P = (side - kernel + 1) / 2;
    a->kind = FE_ARCH_CNN;
    a->dim = side * side;
    a->classes = classes;
    a->side = side;
    a->filters = filters;
    a->kernel = kernel;
    a->hidden = filters * P * P;
    a->nparam = filters * kernel * kernel + filters + classes * a->hidden + classes;
    return 0;
}

/* Glorot-uniform weights of a layer with `in` inputs and `out` outputs. */
static void glorot(double *w, size_t out, size_t in, rng *r)
{
    double l = sqrt(6.0 / (double)(in + out));
    for (size_t i = 0; i < out * in; i++)
        w[i] = rng_uniform(r, -l, l);
}

void fe_model_init_params(const fe_arch *a, double *w, rng *r)
{
    memset(w, 0, a->nparam * sizeof *w);
    size_t H = a->hidden, K = a->classes;
    if (a->kind == FE_ARCH_CNN) {
        size_t C = a->filters, k2 = a->kernel * a->kernel;
        glorot(w, C, k2, r);
        glorot(w + C * k2 + C, K, H, r);
    } else if (a->kind == FE_ARCH_MLP) {
        glorot(w, H, a->dim, r);
        glorot(w + H * a->dim + H, K, H, r);
    }
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
    if (a->kind == FE_ARCH_CNN) {
        size_t O = a->side - a->kernel + 1;
        wk->act = xmalloc(batch * O * O * a->filters * sizeof *wk->act);
        wk->cols = xmalloc(O * O * a->kernel * a->kernel * sizeof *wk->cols);
        wk->dact = xmalloc(O * O * a->filters * sizeof *wk->dact);
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
    free(wk->act);
    free(wk->cols);
    free(wk->dact);
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

/* im2col of one side x side image: row (oy * O + ox) holds its k x k window. */
static void im2col(const fe_arch *a, const double *img, double *cols)
{
    size_t S = a->side, k = a->kernel, O = S - k + 1;
    for (size_t oy = 0; oy < O; oy++)
        for (size_t ox = 0; ox < O; ox++) {
            double *row = cols + (oy * O + ox) * k * k;
            for (size_t dy = 0; dy < k; dy++)
                memcpy(row + dy * k, img + (oy + dy) * S + ox, k * sizeof *row);
        }
}

/* CNN features: wk->act (per sample O^2 x C, after ReLU) and the pooled
 * wk->h (n x F). */
static void cnn_features(const fe_arch *a, const double *w, const double *x, size_t n,
                         fe_work *wk)
{
    size_t O = a->side - a->kernel + 1, P = O / 2, C = a->filters, k2 = a->kernel * a->kernel;
    size_t F = a->hidden;
    for (size_t i = 0; i < n; i++) {
        if (sim_poll(wk->poll, 0))
            return;             /* a large batch of a wide CNN takes seconds */
        double *act = wk->act + i * O * O * C, *h = wk->h + i * F;
        im2col(a, x + i * a->dim, wk->cols);
        affine(wk->cols, O * O, k2, w, w + C * k2, C, act);
        for (size_t j = 0; j < O * O * C; j++)
            if (act[j] < 0)
                act[j] = 0;
        memset(h, 0, F * sizeof *h);
        for (size_t oy = 0; oy < O; oy++)
            for (size_t ox = 0; ox < O; ox++)
                for (size_t c = 0; c < C; c++)
                    h[((oy / 2) * P + ox / 2) * C + c] += 0.25 * act[(oy * O + ox) * C + c];
    }
}

/* CNN backward below the pooled features: from wk->dh (n x F) into the
 * convolution's gradient grad[0 .. C k^2 + C). */
static void cnn_backward(const fe_arch *a, const double *x, size_t n, fe_work *wk, double *grad)
{
    size_t O = a->side - a->kernel + 1, P = O / 2, C = a->filters, k2 = a->kernel * a->kernel;
    size_t F = a->hidden;
    memset(grad, 0, (C * k2 + C) * sizeof *grad);
    for (size_t i = 0; i < n; i++) {
        if (sim_poll(wk->poll, 0))
            return;
        const double *act = wk->act + i * O * O * C, *dh = wk->dh + i * F;
        for (size_t oy = 0; oy < O; oy++)
            for (size_t ox = 0; ox < O; ox++)
                for (size_t c = 0; c < C; c++) {
                    size_t j = (oy * O + ox) * C + c;
                    wk->dact[j] = act[j] > 0 ? 0.25 * dh[((oy / 2) * P + ox / 2) * C + c] : 0;
                    grad[C * k2 + c] += wk->dact[j];
                }
        im2col(a, x + i * a->dim, wk->cols);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)C, (int)k2, (int)(O * O), 1.0,
                    wk->dact, (int)C, wk->cols, (int)k2, 1.0, grad, (int)k2);
    }
}

/* Forward pass into wk->z (probabilities) and wk->h; returns summed loss. */
static double forward(const fe_arch *a, const double *w, const double *x, const int *y, size_t n,
                      fe_work *wk, size_t *correct)
{
    size_t D = a->dim, K = a->classes, H = a->hidden;
    if (a->kind == FE_ARCH_LOGISTIC) {
        affine(x, n, D, w, w + K * D, K, wk->z);
    } else if (a->kind == FE_ARCH_CNN) {
        size_t off = a->filters * a->kernel * a->kernel + a->filters;
        cnn_features(a, w, x, n, wk);
        affine(wk->h, n, H, w + off, w + off + K * H, K, wk->z);
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
    size_t off = a->kind == FE_ARCH_LOGISTIC ? 0
                 : a->kind == FE_ARCH_CNN ? a->filters * a->kernel * a->kernel + a->filters
                                          : H * D + H;
    double *gW = grad + off, *gb = grad + off + K * In;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)In, (int)n, 1.0, dz, (int)K,
                in, (int)In, 0.0, gW, (int)In);
    for (size_t k = 0; k < K; k++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += dz[i * K + k];
        gb[k] = s;
    }
    if (a->kind == FE_ARCH_CNN) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)H, (int)K, 1.0, dz,
                    (int)K, w + off, (int)H, 0.0, wk->dh, (int)H);
        cnn_backward(a, x, n, wk, grad);
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
        size_t nw1 = a->kind == FE_ARCH_LOGISTIC ? K * D
                     : a->kind == FE_ARCH_CNN ? a->filters * a->kernel * a->kernel
                                              : H * D;
        for (size_t i = 0; i < nw1; i++) {
            grad[i] += l2 * w[i];
            sq += w[i] * w[i];
        }
        if (a->kind != FE_ARCH_LOGISTIC)
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
        if (sim_poll(wk->poll, B))
            break;              /* cut short: the run is discarded */
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
        if (sim_poll(wk->poll, m))
            break;
        sum += forward(a, w, x + i * a->dim, y + i, m, wk, &correct);
    }
    *accuracy = n ? (double)correct / (double)n : NAN;
    *loss = n ? sum / (double)n : NAN;
}
