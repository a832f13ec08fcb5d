/*
 * fe_model.h - the models trained by the federated-learning system:
 * multinomial logistic regression (softmax), a one-hidden-layer ReLU MLP and
 * a small CNN (one convolution layer of `filters` k x k kernels on the
 * square single-channel image, valid, stride 1, ReLU, 2 x 2 average
 * pooling, then a softmax layer), trained by mini-batch SGD on the
 * cross-entropy loss, with OpenBLAS doing the matrix products (dgemm; the
 * convolution through im2col).
 *
 * Parameters live in one flat double vector so that FedAvg can average,
 * subtract and scale them without knowing the architecture:
 *   logistic: W (K x D), b (K)
 *   mlp:      W1 (H x D), b1 (H), W2 (K x H), b2 (K)
 *   cnn:      Wc (C x k^2), bc (C), Wo (K x F), bo (K), F = C (O/2)^2 pooled
 *             features (index ((py * O/2) + px) * C + c), O = side - k + 1
 *
 * Determinism: call fe_model_single_thread() once (OpenBLAS then uses one
 * thread, so every reduction has a fixed order); mini-batches are drawn from
 * the caller's rng stream.  No engine header is included.
 */
#ifndef AISIM_FE_MODEL_H
#define AISIM_FE_MODEL_H

#include <stddef.h>

#include "aisim/rng.h"

enum fe_arch_kind { FE_ARCH_LOGISTIC, FE_ARCH_MLP, FE_ARCH_CNN };

typedef struct fe_arch {
    enum fe_arch_kind kind;
    size_t dim;         /* input features D */
    size_t classes;     /* outputs K */
    size_t hidden;      /* MLP hidden units H; CNN pooled features F; 0 for logistic */
    size_t side;        /* CNN: image side (dim = side^2) */
    size_t filters;     /* CNN: convolution filters C */
    size_t kernel;      /* CNN: kernel side k */
    size_t nparam;      /* length of the parameter vector */
} fe_arch;

/* Fills a->nparam from the other fields (logistic, mlp). */
void fe_arch_init(fe_arch *a, enum fe_arch_kind kind, size_t dim, size_t classes, size_t hidden);
/* The CNN on side x side images.  Returns 0, or -1 if side - kernel + 1 is
 * not an even number >= 2 (a is then unusable). */
int fe_arch_init_cnn(fe_arch *a, size_t side, size_t classes, size_t filters, size_t kernel);

/* Initial parameters: zeros (logistic) or Glorot-uniform weights and zero
 * biases drawn from r (MLP, CNN). */
void fe_model_init_params(const fe_arch *a, double *w, rng *r);

/* Scratch space for batches of up to `batch` samples (and evaluation in
 * chunks of that size).  fe_work_create() allocates; destroy frees. */
typedef struct fe_work fe_work;
fe_work *fe_work_create(const fe_arch *a, size_t batch);
void fe_work_destroy(fe_work *wk);
/* Training and evaluation through wk poll the engine (sim_poll) once per
 * step or batch and stop when it says so; NULL (the default): never. */
struct sim;
void fe_work_set_poll(fe_work *wk, struct sim *poll);

/* Mean cross-entropy loss (plus l2/2 * |W|^2) of the n samples x (n x D),
 * y, and its gradient into grad (nparam), for parameters w.  n <= the
 * work's batch size. */
double fe_model_grad(const fe_arch *a, const double *w, const double *x, const int *y, size_t n,
                     double l2, double *grad, fe_work *wk);

/* Runs `steps` SGD steps w -= lr * grad on mini-batches of `batch` samples
 * drawn uniformly with replacement from rows idx[0..n) of (x, y) by r; when
 * batch >= n every step uses all n rows (full-batch gradient descent, no
 * draws).  Returns the mean loss of the last step's batch. */
double fe_model_sgd(const fe_arch *a, double *w, const double *x, const int *y,
                    const size_t *idx, size_t n, int steps, size_t batch, double lr, double l2,
                    rng *r, fe_work *wk);

/* The same with FedProx's proximal term: each step's gradient gets
 * mu (w - center) added (center: the round's global model, nparam). */
double fe_model_sgd_prox(const fe_arch *a, double *w, const double *x, const int *y,
                         const size_t *idx, size_t n, int steps, size_t batch, double lr,
                         double l2, double mu, const double *center, rng *r, fe_work *wk);

/* Accuracy in [0, 1] and mean cross-entropy of w on n samples. */
void fe_model_eval(const fe_arch *a, const double *w, const double *x, const int *y, size_t n,
                   fe_work *wk, double *accuracy, double *loss);

/* Makes OpenBLAS single-threaded (deterministic reductions). */
void fe_model_single_thread(void);

#endif
