/*
 * skel_run_int.h - the state of one run (skel_run.c) shared with its
 * failures and localization (skel_locate.c).  Private to
 * src/systems/skeleton/.
 */
#ifndef AISIM_SKEL_RUN_INT_H
#define AISIM_SKEL_RUN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "systems/skeleton/skel_run.h"

#define NWIN 16
#define MAXLB 16

typedef struct tgt {
    int32_t el[8];
    bool pref[8];
    uint8_t nel;
    uint8_t consec_to;
    uint8_t nwin;
    int32_t win_id;
    float win[NWIN];
    uint32_t wsent, wlost;
    uint8_t nref, refpos;
    float (*ref)[SKEL_NSTAT];       /* look-back ring, allocated on first use */
    int64_t holdoff_s;
    int32_t lt_block;
    uint32_t lt_n;
    double lt_sum, lt_sq;
    float lt_mu, lt_sigma;
    bool lt_fit;
} tgt;

typedef struct ep_rt {
    int task;               /* -1: no container */
    bool ready;
    int64_t ready_s;
    skel_agent ag;
    tgt *ts;
    int retry;              /* target index to retry next second, or -1 */
    double frac;            /* sub-second offset of its probes */
} ep_rt;

typedef struct task_rt {
    skel_par par;
    int gpus, nhosts, nready;
    int *server;
    int64_t submit_s, end_s, *ready_s;
    uint64_t seed;
    uint32_t *toff, *tidx;      /* true skeleton (local) */
    bool alive, inferred, infer_ok, exact;
    int64_t infer_s;
} task_rt;

typedef struct fault_rt {
    int type;
    int32_t comp;
    int64_t start_s, end_s;
    bool relevant, detected, localized, loc_ok;
    double detect_t, loc_t;     /* s */
    int32_t loc_comp;
    int loc_cls;
    uint32_t alarms;
} fault_rt;

typedef struct alarm_rt {
    double t;
    int src, dst, sym, fault, cls;
    int32_t comp;
    bool startup;
    int64_t loc_s;
} alarm_rt;

typedef struct recent {
    int64_t t;
    int32_t el[8];
    uint8_t nel;
} recent;

typedef struct trace_rt {
    double t, rtt_us, loss;
    bool ok;
    int32_t tor, agg;       /* switch components of the path (agg -1: none) */
} trace_rt;

struct skel_run {
    const skel_world *w;
    const skel_fabric *f;
    const skel_params *p;
    int method;
    uint64_t seed;
    rng rc, rf, rp, rv;
    int *server_task;
    ep_rt *ep;
    task_rt *task;
    int ntask, captask;
    fault_rt *fault;
    int nfault, capfault;
    int *active;
    int nactive;
    alarm_rt *alarm;
    size_t nalarm, capalarm;
    uint64_t fp_startup, probes;
    recent ring[256];
    int nring, ringpos;
    trace_rt *trace;
    size_t ntrace, captrace;
    int64_t now;
    double targets_sum;
    uint64_t targets_n;
};

static inline bool overlay_method(int m) { return m != SKEL_M_RPING; }
typedef struct effect {
    bool unreach;
    double loss, lat_us;
    int fault;      /* the first failure on the path, or -1 */
} effect;

typedef struct verdict {
    int32_t comp;
    int cls;
    int64_t at_s;
} verdict;

/* skel_locate.c: failures (start, end, random), their effect on a path,
 * and localization by the run's method. */
void start_fault(skel_run *r, int type, int32_t comp, int64_t t, int64_t dur);
void end_fault(skel_run *r, int fi, int64_t t);
void random_faults(skel_run *r, int64_t t);
bool on_path(const skel_run *r, const fault_rt *fa, int a, int b, const int32_t *el, int nel,
             bool overlay);
effect path_effect(const skel_run *r, int a, int b, const int32_t *el, int nel, bool overlay);
double draw_rtt(skel_run *r, int nel, double lat_us);
uint32_t draw_lost(skel_run *r, int packets, double loss);
verdict localize(skel_run *r, int a, int b, const tgt *t);

#endif
