/*
 * fedenergy.c - the drift-plus-penalty controller, the scaling rule, the
 * offline MILP and the energy formulas (see fedenergy.h for the model).
 *
 * Per-device subproblem, with x = tau / E, a = e_i / mean(e), w = N p_i:
 *     min_x  V a x + Q w g (1/x - 1)   ->   x* = sqrt(Q w g / (V a)),
 * clipped to [1/E, 1]; the integer optimum of a convex function of tau is
 * the better of floor(E x*) and ceil(E x*) (ties go to more iterations).
 */
#include "systems/fedenergy/fedenergy.h"

#include <assert.h>
#include <glpk.h>
#include <math.h>
#include <stdlib.h>

void fedenergy_init(fedenergy_ctl *c, const fedenergy_params *p)
{
    assert(p->iters_max >= 1 && p->v > 0);
    c->p = *p;
    c->queue = p->queue_init;
    c->queue_max = p->queue_init;
    c->violation = 0;
    c->drift_sq = 0;
    c->h_max = 0;
    c->rounds = 0;
}

double fedenergy_error(int iters_max, int iters, double g)
{
    return g * ((double)iters_max / (double)iters - 1);
}

static double objective(const fedenergy_ctl *c, double a, double w, double g, int tau)
{
    int E = c->p.iters_max;
    return c->p.v * a * tau / E + c->queue * w * fedenergy_error(E, tau, g);
}

int fedenergy_decide_dev(const fedenergy_ctl *c, double a, double w, double g)
{
    int E = c->p.iters_max;
    g = g > 0 ? g : 0;
    double k = c->queue * w * g;
    if (!(k > 0))
        return 1;
    double t = a > 0 ? E * sqrt(k / (c->p.v * a)) : E;
    if (!(t > 1))
        t = 1;
    if (t > E)
        t = E;
    int lo = (int)floor(t), hi = (int)ceil(t);
    int tau = objective(c, a, w, g, hi) <= objective(c, a, w, g, lo) ? hi : lo;
    assert(tau >= 1 && tau <= E);
    return tau;
}

void fedenergy_decide(const fedenergy_ctl *c, size_t n, const double *step_energy_j,
                      const double *p, const double *g, int *iters)
{
    double mean_e = 0;
    for (size_t i = 0; i < n; i++)
        mean_e += step_energy_j[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        iters[i] = fedenergy_decide_dev(c, mean_e > 0 ? step_energy_j[i] / mean_e : 1,
                                        (double)n * p[i], g[i]);
}

double fedenergy_regret_bound(const fedenergy_ctl *c, size_t n)
{
    double q1 = c->p.queue_init;
    return (double)n * (c->drift_sq + q1 * q1 - c->queue * c->queue) / (2 * c->p.v);
}

double fedenergy_queue_bound(const fedenergy_ctl *c)
{
    double eps = c->p.budget, E = c->p.iters_max;
    if (!(eps > 0))
        return INFINITY;
    double b = c->p.v * (E - 1) / (E * eps) + c->h_max - eps;
    return b > c->p.queue_init ? b : c->p.queue_init;
}

double fedenergy_scale(const fedenergy_params *p, int iters, double cosine)
{
    double rho = cosine > 0 ? cosine : 0;
    if (rho > 1)
        rho = 1;
    if (rho < p->rho_floor)
        rho = p->rho_floor;
    if (!isfinite(cosine))
        rho = p->rho_floor;
    return 1 + ((double)p->iters_max / iters - 1) * rho;
}

double fedenergy_observe(fedenergy_ctl *c, size_t n, const double *p, const int *iters,
                         const double *g_obs)
{
    double h = 0;
    for (size_t i = 0; i < n; i++)
        h += p[i] * fedenergy_error(c->p.iters_max, iters[i], g_obs[i]);
    c->queue += h - c->p.budget;
    if (c->queue < 0)
        c->queue = 0;
    if (c->queue > c->queue_max)
        c->queue_max = c->queue;
    c->violation += h - c->p.budget;
    c->drift_sq += (h - c->p.budget) * (h - c->p.budget);
    if (h > c->h_max)
        c->h_max = h;
    c->rounds++;
    return h;
}

void fedenergy_pd_init(fedenergy_pd *c, const fedenergy_params *p, size_t n, double eta_primal,
                       double eta_dual, const rng *r)
{
    assert(p->iters_max >= 1 && n >= 1);
    c->p = *p;
    c->eta_primal = eta_primal;
    c->eta_dual = eta_dual;
    c->n = n;
    c->x = xmalloc(n * sizeof *c->x);
    for (size_t i = 0; i < n; i++)
        c->x[i] = 1;
    c->mu = c->mu_max = p->queue_init;
    c->violation = 0;
    c->rounds = 0;
    c->r = *r;
}

void fedenergy_pd_fini(fedenergy_pd *c)
{
    free(c->x);
    c->x = NULL;
}

void fedenergy_pd_decide(fedenergy_pd *c, int *iters)
{
    int E = c->p.iters_max;
    for (size_t i = 0; i < c->n; i++) {
        double t = c->x[i] * E, f = floor(t);
        int tau = (int)f + (rng_u01(&c->r) < t - f);
        iters[i] = tau < 1 ? 1 : tau > E ? E : tau;
    }
}

double fedenergy_pd_observe(fedenergy_pd *c, const double *step_energy_j, const double *p,
                            const int *iters, const double *g_obs)
{
    int E = c->p.iters_max;
    size_t n = c->n;
    double mean_e = 0, h = 0;
    for (size_t i = 0; i < n; i++) {
        mean_e += step_energy_j[i] / (double)n;
        h += p[i] * fedenergy_error(E, iters[i], g_obs[i]);
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 0)
            continue;           /* did not take part: nothing revealed */
        double a = mean_e > 0 ? step_energy_j[i] / mean_e : 1;
        double grad = a - c->mu * (double)n * p[i] * g_obs[i] / (c->x[i] * c->x[i]);
        double x = c->x[i] - c->eta_primal * grad;
        double lo = 1.0 / E;
        c->x[i] = x < lo ? lo : x > 1 ? 1 : x;
    }
    c->mu += c->eta_dual * (h - c->p.budget);
    if (c->mu < 0)
        c->mu = 0;
    if (c->mu > c->mu_max)
        c->mu_max = c->mu;
    c->violation += h - c->p.budget;
    c->rounds++;
    return h;
}

int fedenergy_offline(size_t n, size_t T, int iters_max, const double *cost,
                      const double *coef, double budget, double mip_gap,
                      double *energy_j, double *bound_j, int *iters, err *e)
{
    /* Incremental form: tau = 1 + sum_k y_k, y_k binary, k = 1..E-1.  The
     * error falls by d_k = c E / (k (k + 1)) with the k-th extra step,
     * decreasing in k at equal cost, so an optimum may take any k-subset: the
     * prefix of the same size costs the same and errs no more.  One covering
     * constraint remains: sum c d_k y_k >= sum c h(1) - budget T. */
    size_t K = (size_t)iters_max - 1, ncol = n * T * K;
    double base_j = 0, need = -budget * (double)T;
    for (size_t j = 0; j < n * T; j++) {
        base_j += cost[j];
        need += fedenergy_error(iters_max, 1, coef[j]);
    }
    if (iters)
        for (size_t j = 0; j < n * T; j++)
            iters[j] = 1;
    if (need <= 1e-12 * (1 + fabs(budget) * (double)T) || K == 0) {
        *energy_j = base_j;
        if (bound_j)
            *bound_j = base_j;
        return 0;
    }
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, 1, GLP_LO, need, 0);
    glp_add_cols(lp, (int)ncol);
    int *ia = xmalloc((ncol + 1) * sizeof *ia), *ja = xmalloc((ncol + 1) * sizeof *ja);
    double *ar = xmalloc((ncol + 1) * sizeof *ar);
    int nz = 0;
    for (size_t j = 0; j < n * T; j++)
        for (size_t k = 1; k <= K; k++) {
            int col = (int)(j * K + k);
            glp_set_col_kind(lp, col, GLP_BV);
            glp_set_obj_coef(lp, col, cost[j]);
            double d = coef[j] * (double)iters_max / ((double)k * (double)(k + 1));
            if (d > 0) {
                nz++;
                ia[nz] = 1;
                ja[nz] = col;
                ar[nz] = d;
            }
        }
    glp_load_matrix(lp, nz, ia, ja, ar);
    free(ia);
    free(ja);
    free(ar);
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    int rc = glp_simplex(lp, &sp);
    int lp_status = glp_get_status(lp);
    if (rc != 0 || lp_status != GLP_OPT) {
        glp_delete_prob(lp);
        return ERR(e, AISIM_ESOLVER, "offline optimum: GLPK glp_simplex returned %d, status %d",
                   rc, lp_status);
    }
    if (bound_j)
        *bound_j = base_j + glp_get_obj_val(lp);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = 60000;
    parm.mip_gap = mip_gap;
    rc = glp_intopt(lp, &parm);
    int st = glp_mip_status(lp);
    if (rc != 0 && rc != GLP_ETMLIM && rc != GLP_EMIPGAP) {
        glp_delete_prob(lp);
        return ERR(e, AISIM_ESOLVER, "offline optimum: GLPK glp_intopt returned %d, status %d",
                   rc, st);
    }
    /* No integer plan within the time limit (large T): the LP optimum of a
     * single covering row has at most one fractional column, so rounding
     * it up is feasible and within one step's energy of the bound. */
    int found = st == GLP_OPT || st == GLP_FEAS;
    double obj = 0;
    for (size_t c = 1; c <= ncol; c++) {
        double v = found ? glp_mip_col_val(lp, (int)c) : ceil(glp_get_col_prim(lp, (int)c) - 1e-9);
        obj += v > 0.5 ? glp_get_obj_coef(lp, (int)c) : 0;
        if (iters && v > 0.5)
            iters[(c - 1) / K]++;
    }
    *energy_j = base_j + (found ? glp_mip_obj_val(lp) : obj);
    glp_delete_prob(lp);
    return 0;
}

int fedenergy_offline_fixed(size_t n, size_t T, int iters_max, const double *cost,
                            const double *coef, double budget, double mip_gap,
                            double *energy_j, int *iters, err *e)
{
    /* Cost and error are linear in the per-round cost and coefficient: a
     * fixed tau_i costs tau_i sum_t cost_t,i and errs sum_t c_t,i (E/tau_i - 1)
     * in total, so the T-round program is a one-round program with summed
     * costs and coefficients and budget T epsilon. */
    double *cs = xcalloc(n, sizeof *cs), *gs = xcalloc(n, sizeof *gs);
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < n; i++) {
            cs[i] += cost[t * n + i];
            gs[i] += coef[t * n + i];
        }
    int r = fedenergy_offline(n, 1, iters_max, cs, gs, budget * (double)T, mip_gap, energy_j,
                              NULL, iters, e);
    free(cs);
    free(gs);
    return r;
}

int fedenergy_offline_per_round(size_t n, size_t T, int iters_max, const double *cost,
                                const double *coef, double budget, double mip_gap,
                                double *energy_j, int *iters, err *e)
{
    double sum = 0;
    for (size_t t = 0; t < T; t++) {
        double one;
        int r = fedenergy_offline(n, 1, iters_max, cost + t * n, coef + t * n, budget, mip_gap,
                                  &one, NULL, iters ? iters + t * n : NULL, e);
        if (r)
            return r;
        sum += one;
    }
    *energy_j = sum;
    return 0;
}

double fedenergy_step_energy_j(double kappa, double cycles_per_sample, double batch,
                               double cpu_hz)
{
    return kappa * cycles_per_sample * batch * cpu_hz * cpu_hz;
}

double fedenergy_step_time_s(double cycles_per_sample, double batch, double cpu_hz)
{
    return cycles_per_sample * batch / cpu_hz;
}

double fedenergy_upload_energy_j(double tx_power_w, double model_bytes, double rate_bps)
{
    return tx_power_w * model_bytes * 8 / rate_bps;
}
