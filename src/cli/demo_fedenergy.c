/*
 * demo_fedenergy.c - the federated-learning entry of `aisim demo`: runs the
 * built-in digits examples (IID and Dirichlet label skew, 20 heterogeneous
 * devices, 100 rounds of every method) on seeds 1-5 and prints, per method,
 * the headline of docs/fedenergy.md: energy and simulated time to the
 * target test accuracy (93%), final accuracy and final test loss, each as
 * mean +- 95% confidence half-width over the seeds.  The knobs are the
 * examples' defaults, not the tuned values of the docs' tables.  The
 * paper's claim to compare with: at least 30.2% less energy with accuracy
 * preserved.
 */
#include <math.h>
#include <stdio.h>

#include "aisim/stats.h"
#include "cli/cli.h"
#include "cli/run.h"

#define SEEDS 5

static double jnum(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "m +- h" over the finite values of x[0..SEEDS), with how many were finite
 * if not all (Student t, 95%). */
static void cell(char *buf, size_t len, const double *x, double scale, int digits)
{
    double m = 0, ss = 0;
    int n = 0;
    for (int k = 0; k < SEEDS; k++)
        if (isfinite(x[k])) {
            m += x[k] * scale;
            n++;
        }
    if (n == 0) {
        snprintf(buf, len, "not reached");
        return;
    }
    m /= n;
    for (int k = 0; k < SEEDS; k++)
        if (isfinite(x[k]))
            ss += (x[k] * scale - m) * (x[k] * scale - m);
    double h = n > 1 ? stat_t975(n - 1) * sqrt(ss / (n - 1) / n) : NAN;
    int w = snprintf(buf, len, "%.*f +-%.*f", digits, m, digits, h);
    if (n < SEEDS && w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, " (%d/%d)", n, SEEDS);
}

int demo_fedenergy(const char *out_root)
{
    static const char *const examples[] = {"fedenergy/digits_iid", "fedenergy/digits_dirichlet"};
    static const char *const labels[] = {"IID", "Dirichlet 0.5"};
    static const char *const methods[] = {"fedavg",  "fixed",    "fixed_scaled", "random",
                                          "fedprox", "fednova",  "ccfedavg",     "gel",
                                          "online",  "online_pd"};
    enum { NM = sizeof methods / sizeof *methods, NX = 4 };
    static const char *const keys[NX] = {"energy_to_target_j", "time_to_target_s",
                                         "final_accuracy", "final_loss"};
    printf("fedenergy: reduced local iterations with scaled updates, 20 devices, UCI digits,\n"
           "softmax regression, E = 20, 100 rounds, seeds 1-%d (examples/fedenergy/digits_*.yaml);\n"
           "mean +-95%% CI; target: 93%% test accuracy\n", SEEDS);
    char seeds[32];
    snprintf(seeds, sizeof seeds, "--seeds 1..%d", SEEDS);
    const char *cite[] = {seeds};
    for (size_t k = 0; k < sizeof examples / sizeof *examples; k++)
        demo_cite("sweep", examples[k], cite, 1);
    printf("\n");
    printf("  %-13s %-12s %-20s %-20s %-18s %-16s\n", "split", "method", "energy to target J",
           "time to target s", "final accuracy %", "final loss");
    for (size_t k = 0; k < sizeof examples / sizeof *examples; k++) {
        double v[NM][NX][SEEDS];
        for (int sd = 0; sd < SEEDS; sd++) {
            char dir[512], seed[32];
            snprintf(dir, sizeof dir, "%s/fedenergy-%zu-%d", out_root, k, sd + 1);
            snprintf(seed, sizeof seed, "seed=%d", sd + 1);
            const char *sets[] = {seed};
            json_t *sum;
            int r = demo_run(examples[k], dir, sets, 1, &sum);
            if (r)
                return r;
            json_t *ms = json_object_get(json_object_get(sum, "results"), "methods");
            for (size_t m = 0; m < NM; m++)
                for (int x = 0; x < NX; x++)
                    v[m][x][sd] = jnum(json_object_get(ms, methods[m]), keys[x], NULL);
            json_decref(sum);
        }
        for (size_t m = 0; m < NM; m++) {
            char c[NX][48];
            cell(c[0], sizeof c[0], v[m][0], 1, 2);
            cell(c[1], sizeof c[1], v[m][1], 1, 2);
            cell(c[2], sizeof c[2], v[m][2], 100, 2);
            cell(c[3], sizeof c[3], v[m][3], 1, 3);
            printf("  %-13s %-12s %-20s %-20s %-18s %-16s\n", m ? "" : labels[k], methods[m], c[0],
                   c[1], c[2], c[3]);
        }
    }
    printf("\n  paper (abstract): >= 30.2%% less energy than alternatives, accuracy preserved;\n"
           "  tuned (docs/fedenergy.md), online ties fixed_scaled on IID and loses to it on\n"
           "  Dirichlet and device classes (tables, regret vs T); one test sample is\n"
           "  0.28 points (360 held out)\n");
    return 0;
}
