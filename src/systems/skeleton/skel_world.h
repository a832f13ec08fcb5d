/*
 * skel_world.h - the injected-failure state of the world (skel_world.c).
 * Only the world and the scorer (skel_score.c) include this header: the
 * decision code sees the world through skel_obs.h alone
 * (test_skeleton_model.c enforces it).
 */
#ifndef AISIM_SKEL_WORLD_H
#define AISIM_SKEL_WORLD_H

#include "systems/skeleton/skel_obs.h"

/* One injected failure: a Table 1 type on a component, [start_s, end_s). */
typedef struct wfault {
    int type;
    int32_t comp;
    int64_t start_s, end_s;
    int64_t due_s;          /* its end as injected (or its container's): not moved by isolation */
} wfault;

/* A training job's traffic, cached in chunks (the probes' queueing). */
typedef struct wjob {
    bool on;
    skel_par par;
    uint64_t seed;
    int n;
    int64_t t0;             /* the chunk's first second, or -1 */
    float *load;            /* n x WCHUNK: RNIC utilisation per second */
} wjob;

struct skel_wld {
    const skel_world *w;
    const skel_fabric *f;
    const skel_params *p;
    rng rf, rn;             /* failures; noise of probes */
    wfault *wfault;         /* every failure of the run, in start order */
    int nwfault, capwfault;
    int *wactive;           /* indices into wfault of the active ones */
    int nwactive;
    double *agent_jit_us;   /* per server: its agent's scheduling jitter scale */
    wjob *job;
    int njob;
    int *ep_job, *ep_local; /* per endpoint: job and local index, -1 none */
    int64_t now;
};

/* Does failure fa touch the probe a -> b along el (overlay or underlay)? */
bool wld_on_path(const skel_wld *x, const wfault *fa, int a, int b, const int32_t *el, int nel,
                 bool overlay);

#endif
