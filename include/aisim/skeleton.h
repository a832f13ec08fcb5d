/*
 * skeleton.h - SkeletonHunter's decision logic, sans I/O (SIGCOMM'25,
 * papers.md section 1; docs/skeletonhunter.md).
 *
 * Observations in (endpoint placement, per-RNIC throughput series, probe
 * results, paths and their verdicts), probe lists, alarms and verdicts out.
 * Nothing here reads a clock or schedules an event: the simulator glue
 * (src/systems/skeleton/skel_sim.c) and the tests drive each step.
 *
 *  1. Basic list: same-rail pairs of a task's endpoints, at submission.
 *  2. Incremental activation: an agent probes a target only once the
 *     target's container has registered as ready.
 *  3. Skeleton inference: the iteration period from the traffic's
 *     autocorrelation, STFT features of the 1-s throughput series
 *     (FFTW), agglomerative clustering under Eqs. 1-3 (equal group sizes,
 *     N mod round(mean size) = 0, no two RNICs of one host in a group),
 *     pipeline order from the time shift of bursts.
 *  4. Anomaly detection: loss threshold; short-term LOF over 30-s window
 *     summaries against a 5-min look-back; long-term log-normal Z-test.
 *  5. Localization (Algorithm 1): overlay reachability replay, physical
 *     link voting, then validation (the glue reads the observations:
 *     skel_locate.c); six component classes.
 *  6. Baseline probe lists: full mesh, Basic, R-Pingmesh-style.
 */
#ifndef AISIM_SKELETON_H
#define AISIM_SKELETON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- endpoints and probe lists ------------------------------------------ */

/* An endpoint: one (container, RNIC) pair.  `host` is the server (a
 * container is bound to one server here), `rail` the RNIC index, `tor` the
 * ToR the RNIC hangs off (for the R-Pingmesh list). */
typedef struct skel_ep {
    int32_t host;
    int32_t rail;
    int32_t tor;
} skel_ep;

/* Probe-list strategies. */
enum skel_list {
    SKEL_LIST_FULL,     /* every other endpoint of the task (Pingmesh) */
    SKEL_LIST_BASIC,    /* same rail, other host (SkeletonHunter-Basic) */
    SKEL_LIST_RPING,    /* same ToR, plus one endpoint under every other ToR */
};

/* Writes into out (capacity n) the targets of endpoint i among eps[0..n)
 * under strategy `how`, in index order; returns their count. */
size_t skel_targets(const skel_ep *eps, size_t n, size_t i, enum skel_list how, uint32_t *out);

/* ---- incremental activation --------------------------------------------- */

/* An agent's list: targets (endpoint ids) and which have registered.  The
 * caller owns the arrays (capacity cap).  skel_agent_next() walks the
 * active targets round robin. */
typedef struct skel_agent {
    uint32_t *target;   /* endpoint ids */
    uint8_t *active;    /* 1 once the target's container registered */
    size_t n;           /* targets */
    size_t n_active;
    size_t cursor;      /* next index to consider */
    bool incremental;   /* false: every target is active from the start */
} skel_agent;

/* Loads a list into the agent; with incremental false every target is
 * active at once (the ablation), else none is until it registers. */
void skel_agent_load(skel_agent *a, const uint32_t *targets, size_t n, bool incremental);
/* Registration of endpoint `ep` (its container became ready): activates it
 * if it is a target.  Returns true if it was a target and inactive. */
bool skel_agent_register(skel_agent *a, uint32_t ep);
/* Deregistration (the container left): deactivates it. */
bool skel_agent_deregister(skel_agent *a, uint32_t ep);
/* The next active target, round robin, or -1 when none is active. */
int64_t skel_agent_next(skel_agent *a);

/* ---- skeleton inference ------------------------------------------------- */

/* STFT features: for windows of `win` samples every `hop` samples (Hann
 * window, real FFT through FFTW), the real and imaginary parts of bins
 * 1..win/2 (the mean is dropped), series normalised to unit energy.
 * Returns the feature count for a series of `len` samples (0 if len < win);
 * writes them to feat when feat is not NULL. */
size_t skel_stft_features(const double *series, size_t len, size_t win, size_t hop, double *feat);

/* Result of a constrained clustering. */
typedef struct skel_clusters {
    int k;              /* groups */
    int dp;             /* round(mean group size): the DP degree */
    double variance;    /* Eq. 1 sigma^2 of the group sizes */
    bool ok;            /* a cut met Eqs. 2 and 3 with near-equal sizes */
} skel_clusters;

/* Agglomerative clustering (average linkage, Euclidean) of n points of
 * `dim` features; two clusters holding RNICs of one host (host[i]) never
 * merge (Eq. 3).  Of the dendrogram's cuts with groups of >= 2, the one
 * kept satisfies N mod round(mean) = 0 (Eq. 2), has the least size
 * variance (Eq. 1) and, among those, the largest gap to the next merge;
 * one group is kept instead unless that cut's groups are near-equal (every
 * size within size_tol x the mean of the mean; 0: exactly equal) and its
 * next merge is at least 1.5x farther than its last (a real structure).
 * label[i] gets the group (0..k-1, numbered by first member).  O(n^3). */
skel_clusters skel_cluster(const double *feat, size_t n, size_t dim, const int32_t *host,
                           double size_tol, int *label);

/* The iteration period (s) of a task's traffic: series is n x len 1-s
 * samples; the autocorrelation of their sum has its first peak within 80%
 * of the highest in [min_s, max_s] (so not a multiple) at lag L = P;
 * then for m = 2, 4, 8, ... while m P fits in half the series, the best
 * lag within round(m P) +- 1, refined by a parabola through its
 * neighbours, gives P = lag / m.  0 when no lag fits. */
double skel_period_estimate(const double *series, size_t n, size_t len, double min_s,
                            double max_s);

/* Burst onset of a series relative to the period: the phase (in samples,
 * [0, period)) of the series' circular centroid folded over `period`. */
double skel_burst_phase(const double *series, size_t len, double period);

/* The inferred skeleton of one task's endpoints.  series is n x len
 * (row i = endpoint i), one sample per second; eps gives host and rail.
 * `period` is the iteration period in samples, win/hop the STFT shape,
 * size_tol the clustering's tolerance for near-equal groups (skel_cluster).
 * Fills nbr (CSR: off[n+1], idx) with each endpoint's skeleton targets:
 * its group peers plus, in the adjacent groups of the pipeline order on
 * the same rail, the member whose deviation from its group's mean series
 * correlates best with its own (same replica).
 * stage[i] gets the pipeline position of endpoint i's group.  Returns the
 * clustering of rail 0 (all rails must agree, else ok = false and the
 * caller keeps the Basic list).  The caller frees *off and *idx. */
skel_clusters skel_infer(const double *series, size_t n, size_t len, const skel_ep *eps,
                         double period, size_t win, size_t hop, double size_tol,
                         uint32_t **off, uint32_t **idx, int *stage);

/* ---- anomaly detection -------------------------------------------------- */

#define SKEL_NSTAT 7    /* p25, p50, p75, min, mean, std, max */

/* Summary of a window of n >= 1 latencies (sorted internally: x is
 * modified).  Percentiles by linear interpolation; std is the population
 * standard deviation. */
void skel_summary(double *x, size_t n, double out[SKEL_NSTAT]);

/* Local Outlier Factor of query q against the reference set ref (n rows
 * of dim), k nearest neighbours (k < n + 1 is clamped to n).  Euclidean
 * distances; lrd with a floor so identical points give finite values. */
double skel_lof(const double *ref, size_t n, size_t dim, const double *q, size_t k);

/* True if q cannot be clustered with any earlier window: its distance to
 * every row of ref, each dimension scaled by the look-back's standard
 * deviation (floored at `floor_sd`), exceeds `nsd`. */
bool skel_far_from_all(const double *ref, size_t n, size_t dim, const double *q, double nsd,
                       double floor_sd);

/* Short-term verdict: LOF(q) > lof_max and q is far (> nsd) from every
 * look-back window. */
bool skel_short_term(const double *ref, size_t n, const double *q, size_t k, double lof_max,
                     double nsd, double floor_sd);

/* Log-normal fit: mu and sigma of ln x (x > 0, n >= 2; sample sd). */
void skel_lognorm_fit(const double *x, size_t n, double *mu, double *sigma);
/* Z-test of the mean of ln x against N(mu, sigma^2): returns the two-sided
 * p-value and the statistic in *z. */
double skel_ztest(const double *x, size_t n, double mu, double sigma, double *z);
bool skel_long_term_mean(double mean_ln, size_t n, double mu, double sigma, double alpha,
                         double min_shift);
/* Long-term verdict: p < alpha and the median moved by >= min_shift
 * (relative, e.g. 0.2) from exp(mu). */
bool skel_long_term(const double *x, size_t n, double mu, double sigma, double alpha,
                    double min_shift);

/* ---- failures and components -------------------------------------------- */

enum skel_symptom { SKEL_SYM_UNREACH, SKEL_SYM_LOSS, SKEL_SYM_LATENCY };

/* The six component classes of the paper (plus none). */
enum skel_class {
    SKEL_CLS_SWITCH,        /* physical switches and links */
    SKEL_CLS_RNIC,
    SKEL_CLS_HOST,          /* host boards */
    SKEL_CLS_VSWITCH,
    SKEL_CLS_RUNTIME,       /* container runtime */
    SKEL_CLS_CONFIG,
    SKEL_CLS_NONE,
};
extern const char *const skel_class_names[];    /* NULL-terminated */

/* Component kinds of the model. */
enum skel_kind {
    SKEL_K_LINK,        /* underlay link (host-ToR or ToR-agg) */
    SKEL_K_SWITCH,      /* ToR or aggregation switch */
    SKEL_K_RNIC,
    SKEL_K_HOST,        /* server board (PCIe, GDR, hugepage config) */
    SKEL_K_VPORT,       /* container network interface (runtime) */
    SKEL_K_VSW,         /* the endpoint's vSwitch (OVS) rule */
    SKEL_K_RULE,        /* the RNIC offloaded rule */
    SKEL_K_VTEP,        /* the VXLAN tunnel endpoint */
    SKEL_K_COUNT,
};
extern const char *const skel_kind_names[];     /* NULL-terminated */

/* Gray failures beyond Table 1 (their effect varies in time). */
enum skel_gray {
    SKEL_GRAY_NONE,
    SKEL_GRAY_DRIFT,            /* added latency ramps up over drift_ramp */
    SKEL_GRAY_FLAP,             /* down flap_down s of every flap_period s */
    SKEL_GRAY_INTERMITTENT,     /* stalls in random episodes (intermittent_duty of them) */
};

/* Table 1: the 19 failure types, then the gray types of the magnitude
 * sweep (slow drift, a flapping link, an intermittent RNIC), which random
 * injection leaves out unless failures.weights names them. */
typedef struct skel_ftype {
    const char *name;           /* scenario name */
    const char *issue;          /* Table 1 wording */
    enum skel_kind kind;        /* the component it sits on */
    enum skel_symptom symptom;
    enum skel_class cls;
    bool underlay_visible;      /* underlay agents' probes see it */
    bool replay_visible;        /* the overlay replay finds it */
    enum skel_gray gray;
} skel_ftype;
#define SKEL_NTABLE1 19
#define SKEL_NFTYPES 22
extern const skel_ftype skel_ftypes[SKEL_NFTYPES];
/* Index of a type by name, or -1. */
int skel_ftype_find(const char *name);

/* ---- localization (Algorithm 1) ----------------------------------------- */

/* OverlayReachability: replays a logical forwarding chain from hop 0.
 * forward(ctx, hop) returns the next hop, -1 if the hop forwards nothing,
 * or `n` when the chain reaches the underlay.  Returns -1 if the chain is
 * intact, else the hop that broke it; *loop is set when the chain came
 * back to an element already visited (bad rules). */
int skel_overlay_replay(int (*forward)(void *ctx, int hop), void *ctx, int n, bool *loop);

/* PhysicalIntersection: counters of anomalous and healthy paths per
 * underlay element (links and switches share one id space of n). */
typedef struct skel_votes {
    uint32_t *bad;      /* anomalous paths through the element */
    uint8_t *good;      /* 1 if a healthy path crossed it */
    size_t n;
} skel_votes;
void skel_votes_init(skel_votes *v, size_t n);
void skel_votes_fini(skel_votes *v);
/* Adds one path (elements el[0..len)) as anomalous or healthy. */
void skel_votes_add(skel_votes *v, const int32_t *el, size_t len, bool anomalous);
/* The culprit on path el: elements not exonerated by a healthy path and
 * with count >= 2; of those the highest count, ties to the later-listed
 * `prefer` elements (prefer[i] true: e.g. switches over links).  -1 when
 * every element has count <= 1 (no underlay fault).  With exonerate
 * false the healthy paths are ignored (007-style voting). */
int32_t skel_votes_culprit(const skel_votes *v, const int32_t *el, const bool *prefer, size_t len,
                           bool exonerate);

#endif
