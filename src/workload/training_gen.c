/*
 * training_gen.c - a training workload generated from a model description
 * (Megatron-style transformer), in the layer form SimAI's files use.
 *
 * With b the micro-batch, s the sequence length, h the hidden size, f the
 * FFN size, V the vocabulary, t the TP degree, one transformer layer's
 * forward pass costs (matrix multiplies only, 2 FLOPs per multiply-add):
 *     attention  8 b s h^2 (Q, K, V and output projections) + 4 b s^2 h
 *                (scores and their product with V)
 *     MLP        4 b s h f (two matrices; 6 b s h f gated, SwiGLU's three),
 *                x topk for a mixture of experts
 * divided by t; the input-gradient and the weight-gradient passes each cost
 * as much as the forward (backward = 2 x forward).  The output head costs
 * 2 b s h V / t forward.  Time = FLOPs / (gpu_flops x efficiency).
 * Communication per layer and micro-batch (Megatron's tensor parallelism):
 * an all-reduce of b s h x 2 bytes after attention and after the MLP in
 * the forward pass, and in the input-gradient pass (with sequence
 * parallelism: an all-gather before and a reduce-scatter after, of the
 * same size); a mixture of experts adds an all-to-all of b s h x 2 x topk
 * bytes before and after the experts (EP group).  Gradients: each layer's
 * weights (4 h^2 + 2 h f (3 h f gated), the experts' share E/ep of theirs) / t, at
 * bytes_per_param, all-reduced on the DP group (ZeRO >= 1: reduce-
 * scattered; the builder adds the parameter all-gather).
 */
#include <stdio.h>
#include <string.h>

#include "aisim/training.h"

int trn_model_check(const trn_model *m, err *e)
{
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->ffn < 1 || m->seq < 1 ||
        m->micro_batch < 1 || m->vocab < 0)
        return ERR(e, AISIM_EINVAL, "layers, hidden, heads, ffn, seq and micro_batch must be "
                   "positive");
    if (m->hidden % m->heads)
        return ERR(e, AISIM_EINVAL, "hidden (%d) must be a multiple of heads (%d)", m->hidden,
                   m->heads);
    if (m->heads % m->tp)
        return ERR(e, AISIM_EINVAL, "heads (%d) must be a multiple of tp (%d)", m->heads, m->tp);
    if (m->layers % m->pp)
        return ERR(e, AISIM_EINVAL, "layers (%d) must be a multiple of pp (%d)", m->layers,
                   m->pp);
    if (m->experts && m->experts % m->ep)
        return ERR(e, AISIM_EINVAL, "experts (%d) must be a multiple of ep (%d)", m->experts,
                   m->ep);
    if (!m->experts && m->ep > 1)
        return ERR(e, AISIM_EINVAL, "ep %d needs experts", m->ep);
    return 0;
}

static double attn_flops(const trn_model *m)
{
    double b = m->micro_batch, s = m->seq, h = m->hidden;
    return 8 * b * s * h * h + 4 * b * s * s * h;
}

static double mlp_flops(const trn_model *m)
{
    double b = m->micro_batch, s = m->seq, h = m->hidden, f = m->ffn;
    return (m->gated ? 6 : 4) * b * s * h * f * (m->experts ? m->topk : 1);
}

double trn_layer_fwd_flops(const trn_model *m)
{
    return (attn_flops(m) + mlp_flops(m)) / m->tp;
}

double trn_model_flops_per_token(const trn_model *m)
{
    double tokens = (double)m->micro_batch * m->seq;
    double fwd = m->layers * (attn_flops(m) + mlp_flops(m)) +
                 2.0 * m->micro_batch * m->seq * (double)m->hidden * m->vocab;
    return 3 * fwd / tokens;
}

double trn_model_params(const trn_model *m)
{
    double h = m->hidden, f = m->ffn;
    return m->layers * (4 * h * h + (m->gated ? 3 : 2) * h * f * (m->experts ? m->experts : 1)) +
           2.0 * h * m->vocab;
}

static int64_t flops_ps(const trn_model *m, double flops)
{
    double s = flops / (m->gpu_flops * m->efficiency);
    return (int64_t)(s * 1e12 + 0.5);
}

static trn_layer *add(trn_wl *w, size_t *cap, const char *name, int i)
{
    if (w->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        w->layers = xrealloc(w->layers, *cap * sizeof *w->layers);
    }
    trn_layer *L = &w->layers[w->n++];
    memset(L, 0, sizeof *L);
    if (i >= 0)
        snprintf(L->name, sizeof L->name, "%s%d", name, i);
    else
        snprintf(L->name, sizeof L->name, "%s", name);
    return L;
}

static void tp_comm(trn_comm *c, const trn_model *m, uint64_t act, bool before)
{
    if (m->tp <= 1)
        return;
    c->group = TRN_G_TP;
    c->bytes = act;
    c->coll = !m->sp ? TRN_C_ALLREDUCE : before ? TRN_C_ALLGATHER : TRN_C_REDUCESCATTER;
}

void trn_generate(trn_wl *w, const trn_model *m)
{
    memset(w, 0, sizeof *w);
    size_t cap = 0;
    w->tp = m->tp;
    w->pp = m->pp;
    w->ep = m->ep;
    uint64_t act = (uint64_t)m->micro_batch * m->seq * m->hidden * 2;
    w->pp_bytes = act;
    int bpp = m->bytes_per_param;
    uint8_t gcoll = m->zero >= 1 ? TRN_C_REDUCESCATTER : TRN_C_ALLREDUCE;
    double h = m->hidden, f = m->ffn;
    /* the embedding: a lookup (no FLOPs to speak of), its TP all-reduce */
    trn_layer *L = add(w, &cap, "embedding", -1);
    tp_comm(&L->fwd, m, act, false);
    tp_comm(&L->ig, m, act, false);
    L->wg = (trn_comm){gcoll, TRN_G_DP, (uint64_t)((double)m->vocab * h / m->tp * bpp)};
    for (int i = 0; i < m->layers; i++) {
        int64_t ta = flops_ps(m, attn_flops(m) / m->tp), tm = flops_ps(m, mlp_flops(m) / m->tp);
        L = add(w, &cap, "attention", i);
        L->fwd_ps = L->ig_ps = L->wg_ps = ta;
        tp_comm(&L->fwd, m, act, false);
        tp_comm(&L->ig, m, act, false);
        L->wg = (trn_comm){gcoll, TRN_G_DP, (uint64_t)(4 * h * h / m->tp * bpp)};
        if (m->experts) {
            L = add(w, &cap, "dispatch", i);
            L->fwd = L->ig = (trn_comm){TRN_C_ALLTOALL, TRN_G_EP, act * (uint64_t)m->topk};
        }
        L = add(w, &cap, "mlp", i);
        L->fwd_ps = L->ig_ps = L->wg_ps = tm;
        int local = m->experts ? m->experts / m->ep : 1;
        L->wg = (trn_comm){gcoll, TRN_G_DP,
                           (uint64_t)((m->gated ? 3 : 2) * h * f * local / m->tp * bpp)};
        if (m->experts)
            L->fwd = L->ig = (trn_comm){TRN_C_ALLTOALL, TRN_G_EP, act * (uint64_t)m->topk};
        else {
            tp_comm(&L->fwd, m, act, false);
            tp_comm(&L->ig, m, act, false);
        }
    }
    /* the output head: logits, and the vocabulary-parallel cross entropy's
     * small all-reduces (folded into one) */
    L = add(w, &cap, "head", -1);
    L->fwd_ps = L->ig_ps = L->wg_ps =
        flops_ps(m, 2.0 * m->micro_batch * m->seq * h * m->vocab / m->tp);
    if (m->tp > 1)
        L->fwd = (trn_comm){TRN_C_ALLREDUCE, TRN_G_TP, (uint64_t)m->micro_batch * m->seq * 4};
    L->wg = (trn_comm){gcoll, TRN_G_DP, (uint64_t)((double)m->vocab * h / m->tp * bpp)};
    w->declared = (long)w->n;
}
