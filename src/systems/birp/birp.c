/*
 * birp.c - BIRP's sans-I/O core: TIR, the UCB bandit, the per-slot QP (Ipopt) with its
 * safe fallback, and the model-selection baseline's planner.
 *
 * The slot QP (docs/birp.md, "Formulation"), with L_j = sum_i lambda_i y_ij,
 * S the tightest SLO and Lam = sum_i lambda_i + sum_j B_j:
 *
 *   min  sum_j (1 - acc_j) L_j + w_tau sum_ij lambda_i y_ij tau_ij / S
 *        + w_batch sum_j prev_j sum_k z_jk l_jk / S
 *        + sum_j o_j + w_queue/(2 Lam) sum_j o_j^2
 *        + w_util/2 sum_j (L_j + B_j)^2 / C_j
 *   s.t. sum_j y_ij = 1,  sum_k z_jk = 1,  sum_k z_jk l_jk <= Lb_j,
 *        o_j >= L_j + B_j - sum_k z_jk mu_jk,  y, z in [0, 1],  o >= 0,
 *        y_ij = 0 when tau_ij + 2 l_j(1) > S (i != j), z_jk = 0 when l_jk > Lb_j.
 *
 * Every term is linear or a convex square, so Ipopt's interior point finds
 * the global optimum; the problem has E^2 + E K + E variables (3 edges and
 * 7 breakpoints: 33) and 4E linear constraints.  One solve takes about 8 ms
 * of wall time on the 2-core development machine (docs/birp.md), mostly
 * Ipopt's setup; the model reports it apart from the deterministic results.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <coin/IpStdCInterface.h>

#include "aisim/err.h"
#include "aisim/sim.h"
#include "systems/birp/birp.h"

double birp_tir(double b, double tmax, double a, double beta)
{
    if (b < 1)
        b = 1;
    return 1 + a * (tmax - 1) * (1 - exp(-beta * (b - 1)));
}

double birp_stream_gain(int parallel, double gamma)
{
    return parallel < 1 ? 1 : parallel / (1 + gamma * (parallel - 1));
}

/* ---- UCB bandit ------------------------------------------------------------ */

void birp_bandit_init(birp_bandit *b, int narms, const birp_bandit_par *par)
{
    assert(narms > 0);
    assert(par->discount > 0 && par->discount <= 1 && par->window >= 0);
    memset(b, 0, sizeof *b);
    b->narms = narms;
    b->par = *par;
    if (b->par.window > 0)
        b->par.discount = 1;
    b->plays = xcalloc((size_t)narms, sizeof *b->plays);
    b->cnt = xcalloc((size_t)narms, sizeof *b->cnt);
    b->sum = xcalloc((size_t)narms, sizeof *b->sum);
    if (b->par.window > 0) {
        b->h_arm = xcalloc((size_t)b->par.window, sizeof *b->h_arm);
        b->h_r = xcalloc((size_t)b->par.window, sizeof *b->h_r);
    }
}

void birp_bandit_fini(birp_bandit *b)
{
    free(b->plays);
    free(b->cnt);
    free(b->sum);
    free(b->h_arm);
    free(b->h_r);
    memset(b, 0, sizeof *b);
}

static double birp_bandit_scale(const birp_bandit *b)
{
    if (!b->par.normalise)
        return 1;
    if (b->n <= 0)
        return 0;
    double m = b->s1 / b->n, v = b->s2 / b->n - m * m;
    return v > 0 ? sqrt(v) : 0;
}

int birp_bandit_select(const birp_bandit *b)
{
    /* an arm whose (windowed) count is zero is played first; under
     * discounting counts only shrink towards zero, and the bonus grows */
    for (int a = 0; a < b->narms; a++)
        if (b->cnt[a] <= 0)
            return a;
    int best = 0;
    double bv = -INFINITY, lt = log(b->n > 1 ? b->n : 1), s = birp_bandit_scale(b);
    for (int a = 0; a < b->narms; a++) {
        double v = b->sum[a] / b->cnt[a] + b->par.c * s * sqrt(lt / b->cnt[a]);
        if (v > bv) {
            bv = v;
            best = a;
        }
    }
    return best;
}

static void bandit_add(birp_bandit *b, int arm, double r, double w)
{
    b->cnt[arm] += w;
    b->sum[arm] += w * r;
    b->n += w;
    b->s1 += w * r;
    b->s2 += w * r * r;
}

void birp_bandit_update(birp_bandit *b, int arm, double r)
{
    assert(arm >= 0 && arm < b->narms);
    if (!b->par.normalise)
        r = r < 0 ? 0 : r > 1 ? 1 : r;
    double g = b->par.discount;
    if (g < 1) {
        for (int a = 0; a < b->narms; a++) {
            b->cnt[a] *= g;
            b->sum[a] *= g;
        }
        b->n *= g;
        b->s1 *= g;
        b->s2 *= g;
    }
    if (b->par.window > 0) {
        if (b->h_len == b->par.window) {       /* the oldest leaves the window */
            int oa = b->h_arm[b->h_pos];
            bandit_add(b, oa, b->h_r[b->h_pos], -1);
            if (b->cnt[oa] < 0.5) {            /* exact zero, not rounding residue */
                b->cnt[oa] = 0;
                b->sum[oa] = 0;
            }
        } else {
            b->h_len++;
        }
        b->h_arm[b->h_pos] = arm;
        b->h_r[b->h_pos] = r;
        b->h_pos = (b->h_pos + 1) % b->par.window;
    }
    bandit_add(b, arm, r, 1);
    b->plays[arm]++;
    b->t++;
}

int birp_bandit_best(const birp_bandit *b)
{
    int best = 0;
    double bv = -INFINITY;
    for (int a = 0; a < b->narms; a++)
        if (b->cnt[a] > 0 && b->sum[a] / b->cnt[a] > bv) {
            bv = b->sum[a] / b->cnt[a];
            best = a;
        }
    return best;
}

/* ---- the slot QP ---------------------------------------------------------- */

typedef struct qp {
    int n, m;               /* variables, constraints */
    double *c;              /* linear objective, n */
    double c0;              /* constant */
    int nh;                 /* Hessian entries (lower triangle) */
    int *hr, *hc;
    double *hv;             /* second derivatives of the objective */
    int nj;                 /* Jacobian entries */
    int *jr, *jc;
    double *jv;
    double *xl, *xu, *gl, *gu;
    struct sim *poll;       /* polled per iteration (cb_iter) */
} qp;

static void qp_alloc(qp *q, int n, int m, int maxh, int maxj)
{
    memset(q, 0, sizeof *q);
    q->n = n;
    q->m = m;
    q->c = xcalloc((size_t)n, sizeof *q->c);
    q->hr = xcalloc((size_t)maxh, sizeof(int));
    q->hc = xcalloc((size_t)maxh, sizeof(int));
    q->hv = xcalloc((size_t)maxh, sizeof(double));
    q->jr = xcalloc((size_t)maxj, sizeof(int));
    q->jc = xcalloc((size_t)maxj, sizeof(int));
    q->jv = xcalloc((size_t)maxj, sizeof(double));
    q->xl = xcalloc((size_t)n, sizeof(double));
    q->xu = xcalloc((size_t)n, sizeof(double));
    q->gl = xcalloc((size_t)m, sizeof(double));
    q->gu = xcalloc((size_t)m, sizeof(double));
}

static void qp_free(qp *q)
{
    free(q->c);
    free(q->hr);
    free(q->hc);
    free(q->hv);
    free(q->jr);
    free(q->jc);
    free(q->jv);
    free(q->xl);
    free(q->xu);
    free(q->gl);
    free(q->gu);
}

static void add_h(qp *q, int r, int c, double v)
{
    if (r < c) {
        int t = r;
        r = c;
        c = t;
    }
    q->hr[q->nh] = r;
    q->hc[q->nh] = c;
    q->hv[q->nh++] = v;
}

static void add_j(qp *q, int r, int c, double v)
{
    q->jr[q->nj] = r;
    q->jc[q->nj] = c;
    q->jv[q->nj++] = v;
}

static double qp_obj(const qp *q, const double *x)
{
    double f = q->c0;
    for (int i = 0; i < q->n; i++)
        f += q->c[i] * x[i];
    for (int k = 0; k < q->nh; k++) {
        double t = q->hv[k] * x[q->hr[k]] * x[q->hc[k]];
        f += q->hr[k] == q->hc[k] ? 0.5 * t : t;
    }
    return f;
}

static Bool cb_f(Index n, Number *x, Bool new_x, Number *obj, UserDataPtr ud)
{
    (void)n;
    (void)new_x;
    *obj = qp_obj(ud, x);
    return TRUE;
}

static Bool cb_grad(Index n, Number *x, Bool new_x, Number *g, UserDataPtr ud)
{
    (void)new_x;
    const qp *q = ud;
    for (int i = 0; i < n; i++)
        g[i] = q->c[i];
    for (int k = 0; k < q->nh; k++) {
        int r = q->hr[k], c = q->hc[k];
        g[r] += q->hv[k] * x[c];
        if (r != c)
            g[c] += q->hv[k] * x[r];
    }
    return TRUE;
}

static Bool cb_g(Index n, Number *x, Bool new_x, Index m, Number *g, UserDataPtr ud)
{
    (void)n;
    (void)new_x;
    const qp *q = ud;
    for (int i = 0; i < m; i++)
        g[i] = 0;
    for (int k = 0; k < q->nj; k++)
        g[q->jr[k]] += q->jv[k] * x[q->jc[k]];
    return TRUE;
}

static Bool cb_jac(Index n, Number *x, Bool new_x, Index m, Index nele, Index *ir, Index *jc,
                   Number *v, UserDataPtr ud)
{
    (void)n;
    (void)x;
    (void)new_x;
    (void)m;
    const qp *q = ud;
    for (int k = 0; k < nele; k++) {
        if (v)
            v[k] = q->jv[k];
        else {
            ir[k] = q->jr[k];
            jc[k] = q->jc[k];
        }
    }
    return TRUE;
}

static Bool cb_h(Index n, Number *x, Bool new_x, Number of, Index m, Number *lam, Bool new_lam,
                 Index nele, Index *ir, Index *jc, Number *v, UserDataPtr ud)
{
    (void)n;
    (void)x;
    (void)new_x;
    (void)m;
    (void)lam;
    (void)new_lam;
    const qp *q = ud;
    for (int k = 0; k < nele; k++) {
        if (v)
            v[k] = of * q->hv[k];
        else {
            ir[k] = q->hr[k];
            jc[k] = q->hc[k];
        }
    }
    return TRUE;
}

#define IY(E, i, j) ((i) * (E) + (j))
#define IZ(E, K, j, k) ((E) * (E) + (j) * (K) + (k))
#define IO(E, K, j) ((E) * (E) + (E) * (K) + (j))
#define BIG 1e19

/* Ipopt's per-iteration callback: false ends the solve when the run must
 * stop (a signal, or a fuzzer's work budget). */
static Bool cb_iter(Index alg_mod, Index iter, Number obj, Number inf_pr, Number inf_du, Number mu,
                    Number d_norm, Number reg, Number alpha_du, Number alpha_pr, Index ls_trials,
                    UserDataPtr ud)
{
    (void)alg_mod, (void)iter, (void)obj, (void)inf_pr, (void)inf_du, (void)mu, (void)d_norm;
    (void)reg, (void)alpha_du, (void)alpha_pr, (void)ls_trials;
    return !sim_poll(((qp *)ud)->poll, 1);
}

static double total_load(const birp_slot_in *in)
{
    double t = 0;
    for (int i = 0; i < in->nedges; i++)
        t += in->lambda[i] + in->backlog[i];
    return t;
}

static double cap_norm(const birp_slot_in *in, int j)
{
    double c = 0;
    for (int k = 0; k < in->ngrid; k++)
        if (in->mu[j][k] > c)
            c = in->mu[j][k];
    return c > 0 ? c : 1;
}

/* Whether i may send to j at all: the transfer plus two serial executions
 * (wait for one batch, run one) fit in the SLO. */
static int route_ok(const birp_slot_in *in, int i, int j)
{
    if (i == j)
        return 1;
    if (in->local_only)
        return 0;
    return in->tau_s[i][j] + 2 * in->lat_s[j][0] <= in->slo_s;
}

static void lat_bounds(const birp_slot_in *in, double *lb)
{
    int E = in->nedges;
    for (int j = 0; j < E; j++) {
        double tmax = 0;
        for (int i = 0; i < E; i++)
            if (route_ok(in, i, j) && in->tau_s[i][j] > tmax)
                tmax = in->tau_s[i][j];
        double b = (in->slo_s - tmax) / 2;
        lb[j] = b > in->lat_s[j][0] ? b : in->lat_s[j][0];
    }
}

static double birp_slot_objective(const birp_slot_in *in, const double y[][BIRP_MAX_EDGES],
                           const double z[][BIRP_MAX_GRID])
{
    int E = in->nedges, K = in->ngrid;
    double lam = total_load(in), S = in->slo_s, f = 0;
    for (int j = 0; j < E; j++) {
        double L = 0, cap = 0, lat = 0;
        for (int i = 0; i < E; i++) {
            L += in->lambda[i] * y[i][j];
            f += in->w_tau * in->lambda[i] * y[i][j] * in->tau_s[i][j] / S;
        }
        for (int k = 0; k < K; k++) {
            cap += z[j][k] * in->mu[j][k];
            lat += z[j][k] * in->lat_s[j][k];
        }
        double o = L + in->backlog[j] - cap;
        o = o > 0 ? o : 0;
        f += (1 - in->acc[j]) * L + in->w_batch * in->prev_load[j] * lat / S + o +
             (lam > 0 ? in->w_queue / (2 * lam) * o * o : 0) +
             in->w_util / 2 * (L + in->backlog[j]) * (L + in->backlog[j]) / cap_norm(in, j);
    }
    return f;
}

double birp_slot_violation(const birp_slot_in *in, const birp_slot_out *out)
{
    int E = in->nedges, K = in->ngrid;
    double v = 0, scale = total_load(in) > 1 ? total_load(in) : 1;
#define VIOL(x) do { double t_ = (x); if (t_ > v) v = t_; } while (0)
    for (int i = 0; i < E; i++) {
        double s = 0;
        for (int j = 0; j < E; j++) {
            s += out->y[i][j];
            VIOL(-out->y[i][j]);
            VIOL(out->y[i][j] - 1);
            if (!route_ok(in, i, j))
                VIOL(fabs(out->y[i][j]));
        }
        VIOL(fabs(s - 1));
    }
    for (int j = 0; j < E; j++) {
        double s = 0, lat = 0, cap = 0, L = 0;
        for (int k = 0; k < K; k++) {
            s += out->z[j][k];
            VIOL(-out->z[j][k]);
            lat += out->z[j][k] * in->lat_s[j][k];
            cap += out->z[j][k] * in->mu[j][k];
        }
        for (int i = 0; i < E; i++)
            L += in->lambda[i] * out->y[i][j];
        VIOL(fabs(s - 1));
        VIOL((lat - out->lat_bound_s[j]) / out->lat_bound_s[j]);
        VIOL(-out->o[j] / scale);
        VIOL((L + in->backlog[j] - cap - out->o[j]) / scale);
    }
#undef VIOL
    return v;
}

static double grid_lat(const birp_slot_in *in, int j, double b)
{
    int K = in->ngrid;
    if (b <= in->batch[0])
        return in->lat_s[j][0];
    for (int k = 1; k < K; k++)
        if (b <= in->batch[k])
            return in->lat_s[j][k - 1] + (in->lat_s[j][k] - in->lat_s[j][k - 1]) *
                   (b - in->batch[k - 1]) / (in->batch[k] - in->batch[k - 1]);
    return in->lat_s[j][K - 1];
}

static int round_batch(const birp_slot_in *in, double (*lat)(void *, int, double), void *ctx,
                       int j, double target_s)
{
    int b = 1, bmax = in->batch[in->ngrid - 1];
    for (int c = 2; c <= bmax; c++) {       /* latency non-decreasing: stop at first miss */
        double l = lat ? lat(ctx, j, c) : grid_lat(in, j, c);
        if (l > target_s * (1 + 1e-9))
            break;
        b = c;
    }
    return b;
}

static void set_overflow(const birp_slot_in *in, birp_slot_out *out)
{
    for (int j = 0; j < in->nedges; j++) {
        double L = in->backlog[j], cap = 0;
        for (int i = 0; i < in->nedges; i++)
            L += in->lambda[i] * out->y[i][j];
        for (int k = 0; k < in->ngrid; k++)
            cap += out->z[j][k] * in->mu[j][k];
        out->o[j] = L > cap ? L - cap : 0;
    }
}

static void safe_decision(const birp_slot_in *in, double (*lat)(void *, int, double), void *ctx,
                          birp_slot_out *out)
{
    int E = in->nedges, K = in->ngrid;
    memset(out->y, 0, sizeof out->y);
    memset(out->z, 0, sizeof out->z);
    for (int j = 0; j < E; j++) {
        out->y[j][j] = 1;
        int kb = 0;
        for (int k = 0; k < K; k++)
            if (in->lat_s[j][k] <= out->lat_bound_s[j])
                kb = k;
        out->z[j][kb] = 1;
        out->bcap[j] = round_batch(in, lat, ctx, j, out->lat_bound_s[j]);
    }
    set_overflow(in, out);
    out->obj = birp_slot_objective(in, (const double (*)[BIRP_MAX_EDGES])out->y,
                                   (const double (*)[BIRP_MAX_GRID])out->z);
}

void birp_slot_solve(const birp_slot_in *in, double (*lat)(void *, int, double), void *ctx,
                     birp_slot_out *out)
{
    int E = in->nedges, K = in->ngrid;
    assert(E > 0 && E <= BIRP_MAX_EDGES && K > 0 && K <= BIRP_MAX_GRID && in->batch[0] == 1);
    memset(out, 0, sizeof *out);
    lat_bounds(in, out->lat_bound_s);
    double lam = total_load(in), S = in->slo_s;
    if (!(lam > 1e-9)) {
        out->status = BIRP_STATUS_TRIVIAL;
        safe_decision(in, lat, ctx, out);
        return;
    }
    int n = E * E + E * K + E, m = 4 * E;
    qp q;
    qp_alloc(&q, n, m, E * E * (E + 1) / 2 + E, E * E + 2 * E * K + E * (1 + E + K));
    for (int i = 0; i < E; i++)
        for (int j = 0; j < E; j++) {
            double cu = cap_norm(in, j);
            q.c[IY(E, i, j)] = in->lambda[i] * (1 - in->acc[j]) +
                               in->w_tau * in->lambda[i] * in->tau_s[i][j] / S +
                               in->w_util * in->backlog[j] * in->lambda[i] / cu;
            q.xl[IY(E, i, j)] = 0;
            q.xu[IY(E, i, j)] = route_ok(in, i, j) ? 1 : 0;
        }
    for (int j = 0; j < E; j++) {
        double cu = cap_norm(in, j);
        q.c0 += in->w_util / 2 * in->backlog[j] * in->backlog[j] / cu;
        for (int i = 0; i < E; i++)
            for (int i2 = 0; i2 <= i; i2++)
                add_h(&q, IY(E, i, j), IY(E, i2, j), in->w_util * in->lambda[i] * in->lambda[i2] / cu);
        for (int k = 0; k < K; k++) {
            q.c[IZ(E, K, j, k)] = in->w_batch * in->prev_load[j] * in->lat_s[j][k] / S;
            q.xl[IZ(E, K, j, k)] = 0;
            q.xu[IZ(E, K, j, k)] = (k == 0 || in->lat_s[j][k] <= out->lat_bound_s[j]) ? 1 : 0;
        }
        q.c[IO(E, K, j)] = 1;
        q.xl[IO(E, K, j)] = 0;
        q.xu[IO(E, K, j)] = BIG;
        add_h(&q, IO(E, K, j), IO(E, K, j), in->w_queue / lam);
    }
    /* constraints */
    for (int i = 0; i < E; i++) {
        for (int j = 0; j < E; j++)
            add_j(&q, i, IY(E, i, j), 1);
        q.gl[i] = q.gu[i] = 1;
    }
    for (int j = 0; j < E; j++) {
        for (int k = 0; k < K; k++)
            add_j(&q, E + j, IZ(E, K, j, k), 1);
        q.gl[E + j] = q.gu[E + j] = 1;
        for (int k = 0; k < K; k++)
            add_j(&q, 2 * E + j, IZ(E, K, j, k), in->lat_s[j][k]);
        q.gl[2 * E + j] = -BIG;
        q.gu[2 * E + j] = out->lat_bound_s[j];
        add_j(&q, 3 * E + j, IO(E, K, j), 1);
        for (int i = 0; i < E; i++)
            add_j(&q, 3 * E + j, IY(E, i, j), -in->lambda[i]);
        for (int k = 0; k < K; k++)
            add_j(&q, 3 * E + j, IZ(E, K, j, k), in->mu[j][k]);
        q.gl[3 * E + j] = in->backlog[j];
        q.gu[3 * E + j] = BIG;
    }
    double *x = xcalloc((size_t)n, sizeof *x);
    for (int j = 0; j < E; j++) {
        x[IY(E, j, j)] = 1;
        x[IZ(E, K, j, 0)] = 1;
    }
    IpoptProblem p = CreateIpoptProblem(n, q.xl, q.xu, m, q.gl, q.gu, q.nj, q.nh, 0, cb_f,
                                        cb_g, cb_grad, cb_jac, cb_h);
    enum ApplicationReturnStatus st = Internal_Error;
    if (p) {
        AddIpoptIntOption(p, "print_level", 0);
        AddIpoptStrOption(p, "sb", "yes");
        AddIpoptStrOption(p, "hessian_constant", "yes");
        AddIpoptStrOption(p, "jac_c_constant", "yes");
        AddIpoptStrOption(p, "jac_d_constant", "yes");
        AddIpoptNumOption(p, "tol", 1e-9);
        AddIpoptIntOption(p, "max_iter", in->max_iter > 0 ? in->max_iter : 3000);
        q.poll = in->poll;
        SetIntermediateCallback(p, cb_iter);
        double obj = 0;
        st = IpoptSolve(p, x, NULL, &obj, NULL, NULL, NULL, &q);
        FreeIpoptProblem(p);
    }
    out->status = (int)st;
    int ok = st == Solve_Succeeded || st == Solved_To_Acceptable_Level;
    if (ok) {
        for (int i = 0; i < E; i++) {           /* remove interior-point fuzz */
            double s = 0;
            for (int j = 0; j < E; j++) {
                double v = x[IY(E, i, j)];
                v = v < 1e-9 || !route_ok(in, i, j) ? 0 : v > 1 ? 1 : v;
                out->y[i][j] = v;
                s += v;
            }
            for (int j = 0; j < E && s > 0; j++)
                out->y[i][j] /= s;
        }
        for (int j = 0; j < E; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                double v = x[IZ(E, K, j, k)];
                v = v < 1e-9 || (k > 0 && in->lat_s[j][k] > out->lat_bound_s[j]) ? 0 : v;
                out->z[j][k] = v;
                s += v;
            }
            for (int k = 0; k < K && s > 0; k++)
                out->z[j][k] /= s;
        }
        set_overflow(in, out);
        ok = birp_slot_violation(in, out) <= 1e-6;
    }
    if (!ok) {
        out->fallback = 1;
        safe_decision(in, lat, ctx, out);
    } else {
        for (int j = 0; j < E; j++) {
            double t = 0;
            for (int k = 0; k < K; k++)
                t += out->z[j][k] * in->lat_s[j][k];
            out->bcap[j] = round_batch(in, lat, ctx, j, t);
        }
        out->obj = birp_slot_objective(in, (const double (*)[BIRP_MAX_EDGES])out->y,
                                       (const double (*)[BIRP_MAX_GRID])out->z);
    }
    free(x);
    qp_free(&q);
}

/* ---- model selection ------------------------------------------------------ */

static void birp_route_proportional(int n, const double *lambda, const double *backlog,
                             const double *share, double y[BIRP_MAX_EDGES][BIRP_MAX_EDGES])
{
    double tot = 0, keep[BIRP_MAX_EDGES], def[BIRP_MAX_EDGES], sdef = 0;
    for (int i = 0; i < n; i++)
        tot += lambda[i] + backlog[i];
    for (int i = 0; i < n; i++) {
        double target = share[i] * tot - backlog[i];
        keep[i] = lambda[i] < target ? lambda[i] : target > 0 ? target : 0;
        def[i] = target - keep[i] > 0 ? target - keep[i] : 0;
        sdef += def[i];
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            y[i][j] = 0;
        if (!(lambda[i] > 0) || !(sdef > 0)) {
            y[i][i] = 1;
            continue;
        }
        double sur = lambda[i] - keep[i];
        y[i][i] = keep[i] / lambda[i];
        for (int j = 0; j < n; j++)
            y[i][j] += sur * def[j] / sdef / lambda[i];
    }
}

void birp_ms_plan(const birp_ms_in *in, int level[BIRP_MAX_EDGES],
                  double y[BIRP_MAX_EDGES][BIRP_MAX_EDGES])
{
    int E = in->nedges;
    double load = 0, cap = 0, share[BIRP_MAX_EDGES];
    for (int j = 0; j < E; j++) {
        level[j] = 0;
        load += in->lambda[j] + in->backlog[j];
        cap += in->cap[j][0];
    }
    while (load > in->target_util * cap) {
        int bj = -1;
        double bv = 0;
        for (int j = 0; j < E; j++) {
            int l = level[j];
            if (l + 1 >= in->nlevels[j])
                continue;
            double gain = in->cap[j][l + 1] - in->cap[j][l];
            double cost = in->acc[j][l] - in->acc[j][l + 1];
            if (gain <= 0)
                continue;
            double v = gain / (cost > 1e-6 ? cost : 1e-6);
            if (v > bv) {
                bv = v;
                bj = j;
            }
        }
        if (bj < 0)
            break;
        cap += in->cap[bj][level[bj] + 1] - in->cap[bj][level[bj]];
        level[bj]++;
    }
    for (int j = 0; j < E; j++)
        share[j] = in->cap[j][level[j]] / cap;
    birp_route_proportional(E, in->lambda, in->backlog, share, y);
}
