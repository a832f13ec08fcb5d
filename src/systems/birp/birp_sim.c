/*
 * birp_sim.c - the edge-collaboration system on the engine, driven by BIRP
 * (birp.h) or one of its baselines: the model_ops table, start and fini, the
 * engine events (arrivals, routing, link transfers, EDF queues, batch
 * execution, the slot timer) and the per-slot policy decision.
 *
 * The scenario schema and configure are in birp_cfg.c, the metrics and the
 * output files in birp_report.c; birp_sim_int.h holds the state they share.
 * The model is described below.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aisim/units.h"
#include "systems/birp/birp_sim_int.h"

/*
 * Entities: E heterogeneous edges, each an accelerator (a Jetson board from
 * the profile file) with memory and a set of deployed DNN models; directed
 * inter-edge links (bandwidth, RTT) that carry redistributed requests' inputs
 * FIFO; request classes with their own SLO, input size and acceptable models.
 * Requests arrive at an origin edge from a real trace (rescaled to the
 * scenario's load) or a synthetic stream (Poisson, on/off), are routed
 * (possibly over a link) to an executing edge, wait in an earliest-deadline
 * -first queue per (edge, model), and run in batches: an accelerator runs up
 * to `parallel` batches at once, each taking l(n) * (1 + gamma k) * LN(sigma),
 * with l the profile's latency for n requests, k the batches already running
 * and LN a mean-one lognormal (run-to-run variation); every policy gets the
 * same `parallel` slots.  A request whose deadline cannot be met even by a
 * batch of one (plus its response's way back) is dropped when it reaches the
 * head of its queue.  An offloaded request's response returns over the
 * reverse link before the request counts as served.
 *
 * Every `slot` the policy decides: routing fractions per origin (applied to
 * the next slot's arrivals by smooth weighted round robin), the batch-size
 * caps per edge and class, and the model per (edge, class).  Policies: birp
 * (QP + bandit-tuned TIR + batching; faster models only when batching cannot
 * carry the load), birp_static (fixed TIR parameters), batch_only (the same
 * batching, no redistribution), serial (the same QP redistribution, batch
 * 1), model_selection (Clipper/Jellyfish-style model downgrade +
 * proportional redistribution, batch 1), clipper (the same with Clipper's
 * AIMD adaptive batching and a batch timeout), local (batch 1, no
 * redistribution), jsq (join the edge with the shortest expected wait,
 * batch 1).
 *
 * Inference loss (papers.md 4(e)): mean over requests of 1 - top-1 accuracy
 * of the model that served it, or 1 if it missed its SLO or was dropped.
 * Requests arriving before `warmup` are not measured; requests still pending
 * at the stop time count if their deadline has passed (they failed) and are
 * left out otherwise.
 */

/* ---- small helpers -------------------------------------------------------- */

static int heap_less(const birp_model *m, uint32_t a, uint32_t b)
{
    return m->r[a].deadline != m->r[b].deadline ? m->r[a].deadline < m->r[b].deadline : a < b;
}

static void heap_push(birp_model *m, rheap *h, uint32_t id)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->v = xrealloc(h->v, h->cap * sizeof *h->v);
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(m, id, h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = id;
}

static uint32_t heap_pop(birp_model *m, rheap *h)
{
    uint32_t top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && heap_less(m, h->v[c + 1], h->v[c]))
            c++;
        if (!heap_less(m, h->v[c], x))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = x;
    return top;
}
static double mix_lat_cb(void *ctx, int j, double b) { return mix_lat(ctx, j, b); }

static double mix_acc(const birp_model *m, int j)
{
    double a = 0;
    for (int c = 0; c < m->C; c++)
        a += m->share[c] * m->e[j].curve[m->e[j].use[c]]->acc;
    return a;
}

static double draw_cum(rng *r, const double *cum, int n)
{
    double u = rng_u01(r) * cum[n - 1];
    for (int i = 0; i < n; i++)
        if (u < cum[i])
            return i;
    return n - 1;
}


/* ---- execution ------------------------------------------------------------ */

static void decided(birp_model *m, req *q)
{
    double loss = q->state == R_OK ? 1 - m->e[q->dest].curve[q->model]->acc : 1;
    if (q->pull >= m->pull_fin) {
        struct pull_acc *pa = &m->pend[q->pull % PULL_RING];
        pa->loss += loss;
        pa->n_dec++;
    }
    m->slot_loss += loss;
    m->slot_n++;
}

static void on_batch_done(sim *s, void *obj, uint64_t arg);
static void try_dispatch(birp_model *m, sim *s, int j);

static void on_wake(sim *s, void *obj, uint64_t j)
{
    birp_model *m = obj;
    m->e[j].wake_at = 0;
    try_dispatch(m, s, (int)j);
}

/* Time the response of request q takes back to its origin if it left now
 * (0 if it ran at its origin), ps. */
static int64_t return_ps(const birp_model *m, const req *q)
{
    if (q->dest == q->origin)
        return 0;
    return units_tx_time_ps((int64_t)m->output_bytes[q->cls], m->bw_bps[q->dest][q->origin]) +
           m->rtt_ps[q->dest][q->origin] / 2;
}

/* The batch-size cap of queue k at edge j, whose head is request q. */
static int queue_cap(const birp_model *m, const edge *ed, int k, const req *q)
{
    if (m->batcher == B_AIMD)
        return (int)ed->aimd[k];
    if (m->batcher == B_TRITON)
        return ed->tmax[k];
    return ed->ccap[q->cls];
}

/* The batch queue k of edge ed would send now: its size, or 0 if the queue
 * waits (then *due is when it stops waiting).  Clipper waits up to its
 * timeout for a full batch.  Triton's dynamic batcher sends the largest
 * preferred size the queue can form at once; failing that, it waits until
 * the queue holds max_batch_size requests or its head has waited
 * max_queue_delay, then sends what it has.  The other policies send up to
 * their cap at once. */
static int ready_batch(const birp_model *m, const edge *ed, int k, int64_t now, int64_t *due)
{
    const rheap *h = &ed->q[k];
    const req *head = &m->r[h->v[0]];
    int n = (int)h->n, cap = queue_cap(m, ed, k, head);
    int avail = n < cap ? n : cap;
    if (m->batcher == B_AIMD) {
        *due = head->t_enq + m->cl.timeout_ps;
        return n < cap && *due > now ? 0 : avail;
    }
    if (m->batcher == B_TRITON) {
        for (int x = m->tr.npref - 1; x >= 0; x--)
            if (m->tr.pref[x] <= avail)
                return m->tr.pref[x];
        *due = head->t_enq + m->tr.delay_ps;
        return n < cap && *due > now ? 0 : avail;
    }
    return avail;
}

/* The model new arrivals of class c go to at edge ed: the planned one once
 * its engine is loaded, until then the one that served the class before. */
static int serving_model(edge *ed, int c, int64_t now)
{
    int u = ed->use[c];
    if (ed->run[c] != u && ed->ready_at[u] >= 0 && ed->ready_at[u] <= now)
        ed->run[c] = u;
    return ed->run[c];
}

static void try_dispatch(birp_model *m, sim *s, int j)
{
    edge *ed = &m->e[j];
    int64_t now = sim_now(s);
    while (ed->running < ed->conc && ed->queued > 0) {
        int best = -1, size[MAX_MODELS] = {0};
        int64_t wake = INT64_MAX;
        for (int k = 0; k < ed->nmodels; k++) {     /* drop heads that cannot make it */
            rheap *h = &ed->q[k];
            while (h->n) {
                req *q = &m->r[h->v[0]];
                if (now + (int64_t)(model_lat(ed, k, 1) * 1e12) + return_ps(m, q) <= q->deadline)
                    break;
                heap_pop(m, h);
                ed->queued--;
                q->state = R_DROPPED;
                q->t_done = now;
                decided(m, q);
            }
            if (!h->n)
                continue;
            int64_t due = INT64_MAX;
            if (!(size[k] = ready_batch(m, ed, k, now, &due))) {
                wake = due < wake ? due : wake;
                continue;
            }
            if (best < 0 || heap_less(m, h->v[0], ed->q[best].v[0]))
                best = k;
        }
        if (best < 0) {
            if (wake < INT64_MAX && (ed->wake_at <= now || wake < ed->wake_at)) {
                ed->wake_at = wake;
                sim_schedule(s, wake, on_wake, m, (uint64_t)j);
            }
            break;
        }
        rheap *h = &ed->q[best];
        int n = size[best];
        batch *b = xmalloc(sizeof *b + (size_t)n * sizeof(uint32_t));
        b->edge = j;
        b->model = best;
        b->n = n;
        b->start = now;
        b->prev = NULL;
        b->next = m->inflight;
        if (m->inflight)
            m->inflight->prev = b;
        m->inflight = b;
        for (int i = 0; i < n; i++) {
            b->ids[i] = heap_pop(m, h);
            m->r[b->ids[i]].t_start = now;
        }
        ed->queued -= n;
        double lat = model_lat(ed, best, n);
        if (m->cfg.drift_ps > 0 && now >= m->cfg.drift_ps && n > 1) {
            double l1 = model_lat(ed, best, 1), tir = n * l1 / lat;
            lat = n * l1 / (1 + m->cfg.drift_gain * (tir - 1));
        }
        lat *= 1 + m->cfg.gamma * ed->running;
        if (m->cfg.sigma > 0)
            lat *= rng_lognormal(&ed->r_exec, -m->cfg.sigma * m->cfg.sigma / 2, m->cfg.sigma);
        account_busy(ed, now);
        ed->running++;
        ed->batches++;
        ed->batched_reqs += n;
        sim_schedule(s, now + (int64_t)llround(lat * 1e12), on_batch_done, m, (uint64_t)(uintptr_t)b);
    }
}

static void on_batch_done(sim *s, void *obj, uint64_t arg)
{
    birp_model *m = obj;
    batch *b = (batch *)(uintptr_t)arg;
    int64_t now = sim_now(s);
    edge *ed = &m->e[b->edge];
    double obj_s = INFINITY;
    for (int i = 0; i < b->n; i++) {
        req *q = &m->r[b->ids[i]];
        /* an offloaded request's response goes back over the directed link
         * dest -> origin, FIFO behind what that link already carries */
        q->t_done = now;
        if (q->dest != q->origin) {
            int64_t *free_at = &m->link_free[q->dest][q->origin];
            int64_t st = *free_at > now ? *free_at : now;
            *free_at = st + units_tx_time_ps((int64_t)m->output_bytes[q->cls],
                                             m->bw_bps[q->dest][q->origin]);
            q->t_done = *free_at + m->rtt_ps[q->dest][q->origin] / 2;
        }
        q->state = q->t_done <= q->deadline ? R_OK : R_LATE;
        decided(m, q);
        obj_s = fmin(obj_s, m->slo_s[q->cls] / 2);
    }
    if (m->batcher == B_AIMD) {
        /* Clipper's AIMD (Crankshaw et al., NSDI 2017, sec. 4.3): a batch
         * within the latency objective (half the tightest SLO in it, the
         * bound BIRP's QP uses) raises the cap by `step` if it was full; one
         * over it cuts the cap by `backoff` */
        double *cap = &ed->aimd[b->model];
        if (ps_to_s(now - b->start) <= obj_s) {
            if (b->n >= (int)*cap)
                *cap = fmin(*cap + (double)m->cl.step, m->grid[m->K - 1]);
        } else {
            *cap = fmax(1, floor(*cap * m->cl.backoff));
        }
    }
    account_busy(ed, now);
    ed->running--;
    int j = b->edge;
    if (b->prev)
        b->prev->next = b->next;
    else
        m->inflight = b->next;
    if (b->next)
        b->next->prev = b->prev;
    free(b);
    try_dispatch(m, s, j);
}

static void on_enqueue(sim *s, void *obj, uint64_t id)
{
    birp_model *m = obj;
    req *q = &m->r[id];
    edge *ed = &m->e[q->dest];
    q->t_enq = sim_now(s);
    q->model = (uint8_t)serving_model(ed, q->cls, q->t_enq);
    heap_push(m, &ed->q[q->model], (uint32_t)id);
    ed->queued++;
    ed->enq_slot++;
    try_dispatch(m, s, q->dest);
}

/* JSQ: the edge with the least expected wait (queued + running + 1 serial
 * runs) plus transfer. */
static int jsq_pick(birp_model *m, int o, int cls)
{
    int best = o;
    double bv = INFINITY;
    for (int j = 0; j < m->E; j++) {
        edge *ed = &m->e[j];
        double l1 = model_lat(ed, ed->use[cls], 1);
        double v = (ed->queued + ed->running + 1) * l1;
        if (j != o)
            v += ps_to_s(m->rtt_ps[o][j]) + m->input_bytes[cls] * 8 / (double)m->bw_bps[o][j] +
                 m->output_bytes[cls] * 8 / (double)m->bw_bps[j][o];
        if (v < bv) {
            bv = v;
            best = j;
        }
    }
    return best;
}

/* Smooth weighted round robin (nginx): deterministic, follows y exactly over time. */
static int wrr_pick(birp_model *m, int o)
{
    edge *ed = &m->e[o];
    int best = o;
    double tot = 0;
    for (int j = 0; j < m->E; j++) {
        ed->wrr[j] += m->y[o][j];
        tot += m->y[o][j];
        if (ed->wrr[j] > ed->wrr[best] + 1e-12)
            best = j;
    }
    ed->wrr[best] -= tot;
    return best;
}

/* ps from a double, or -1 if it is not before the stop time (also for
 * NaN and values past the int64 range). */
static int64_t before_stop(const birp_model *m, double t)
{
    return t < (double)m->stop_ps ? (int64_t)llround(t) : -1;
}

/* The next synthetic arrival after now, or -1 if none before the stop time. */
static int64_t next_synthetic(birp_model *m, int64_t now)
{
    if (m->wl.source == SRC_POISSON)
        return before_stop(m, (double)now + rng_exponential(&m->r_wl, 1e12 / m->rate));
    double duty = (double)m->wl.on_ps / (double)(m->wl.on_ps + m->wl.off_ps);
    double mean = 1e12 * duty / m->rate;
    int64_t t = now;
    for (;;) {
        if (t < m->on_start)
            t = m->on_start;
        double g = rng_exponential(&m->r_wl, mean);
        if ((double)t + g <= (double)m->on_end)
            return before_stop(m, (double)t + g);
        t = m->on_end;
        double off = rng_exponential(&m->r_wl, (double)m->wl.off_ps);
        double on = rng_exponential(&m->r_wl, (double)m->wl.on_ps);
        if ((m->on_start = before_stop(m, (double)m->on_end + off)) < 0)
            return -1;
        m->on_end = before_stop(m, (double)m->on_start + on);
        if (m->on_end < 0)
            m->on_end = m->stop_ps;
    }
}

static void on_arrival(sim *s, void *obj, uint64_t arg);

static void schedule_next_arrival(birp_model *m, sim *s)
{
    int64_t now = sim_now(s), t;
    if (m->wl.source == SRC_TRACE) {
        if (++m->arr_idx >= m->narr)
            return;
        t = m->arr_ps[m->arr_idx];
        if (t < now)
            t = now;
    } else if ((t = next_synthetic(m, now)) < 0) {
        return;
    }
    if (t < m->stop_ps)
        sim_schedule(s, t, on_arrival, m, 0);
}

static void on_arrival(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    birp_model *m = obj;
    int64_t now = sim_now(s);
    if (m->nr == m->capr) {
        m->capr = m->capr ? 2 * m->capr : 4096;
        m->r = xrealloc(m->r, m->capr * sizeof *m->r);
    }
    uint32_t id = (uint32_t)m->nr++;
    req *q = &m->r[id];
    memset(q, 0, sizeof *q);
    q->cls = (uint8_t)draw_cum(&m->r_wl, m->class_cum, m->C);
    q->origin = (uint8_t)draw_cum(&m->r_wl, m->origin_cum, m->E);
    q->t_arr = now;
    q->deadline = now + (int64_t)llround(m->slo_s[q->cls] * 1e12);
    q->t_start = -1;
    q->pull = -1;
    if (m->cfg.policy == P_BIRP && m->held > 0) {
        q->pull = m->pull_cur;
        m->pend[m->pull_cur % PULL_RING].n_arr++;
    }
    int o = q->origin;
    m->e[o].arr_slot++;
    int d = m->cfg.policy == P_JSQ ? jsq_pick(m, o, q->cls) : wrr_pick(m, o);
    q->dest = (uint8_t)d;
    if (d == o) {
        on_enqueue(s, m, id);
    } else {
        int64_t tx = units_tx_time_ps((int64_t)m->input_bytes[q->cls], m->bw_bps[o][d]);
        int64_t start = m->link_free[o][d] > now ? m->link_free[o][d] : now;
        m->link_free[o][d] = start + tx;
        sim_schedule(s, start + tx + m->rtt_ps[o][d] / 2, on_enqueue, m, id);
    }
    schedule_next_arrival(m, s);
}

/* ---- the slot decision ---------------------------------------------------- */

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Builds the slot problem from the current state and models in use, solves
 * it and counts the solve. */
static void qp_decide(birp_model *m, const double *lam, const double *backlog, double a,
                      double beta, birp_slot_out *so)
{
    int E = m->E;
    birp_slot_in in;
    memset(&in, 0, sizeof in);
    in.nedges = E;
    in.ngrid = m->cfg.policy == P_SERIAL ? 1 : m->K;
    in.local_only = m->cfg.policy == P_BATCH_ONLY;
    memcpy(in.batch, m->grid, sizeof in.batch);
    in.slo_s = m->min_slo_s;
    in.w_tau = m->w.tau;
    in.w_batch = m->w.batch;
    in.w_queue = m->w.queue;
    in.w_util = m->w.util;
    in.poll = m->sim;
    double gain = birp_stream_gain((int)m->cfg.parallel, m->cfg.gamma);
    double bytes = 0, obytes = 0;           /* mean input and response */
    for (int c = 0; c < m->C; c++) {
        bytes += m->share[c] * m->input_bytes[c];
        obytes += m->share[c] * m->output_bytes[c];
    }
    for (int i = 0; i < E; i++) {
        in.lambda[i] = lam[i];
        in.backlog[i] = backlog[i];
        in.prev_load[i] = m->prev_load[i];
        in.acc[i] = mix_acc(m, i);
        for (int j = 0; j < E; j++)
            in.tau_s[i][j] = i == j ? 0 : ps_to_s(m->rtt_ps[i][j]) + bytes * 8 / (double)m->bw_bps[i][j] +
                                          obytes * 8 / (double)m->bw_bps[j][i];
        double tmax = m->grid[m->K - 1] * mix_lat(m, i, 1) / mix_lat(m, i, m->grid[m->K - 1]);
        for (int k = 0; k < in.ngrid; k++) {
            in.lat_s[i][k] = mix_lat(m, i, m->grid[k]);
            double tir = m->cfg.tir == TIR_PROFILE ? m->grid[k] * in.lat_s[i][0] / in.lat_s[i][k]
                                                   : birp_tir(m->grid[k], tmax, a, beta);
            in.mu[i][k] = tir / in.lat_s[i][0] * gain;
        }
    }
    double t0 = wall_s();
    birp_slot_solve(&in, mix_lat_cb, m, so);
    double w = wall_s() - t0;
    if (so->status != BIRP_STATUS_TRIVIAL) {
        m->solves++;
        m->solve_wall_s += w;
        m->solve_wall_max_s = fmax(m->solve_wall_max_s, w);
    } else {
        m->trivial++;
    }
    m->fallbacks += so->fallback;
}

/* Rewards every pull whose requests are all past their deadlines: 1 - their
 * mean loss, undecided ones counting as failures (loss 1).  A pull would
 * leave the ring unrewarded only with SLOs over PULL_RING - 1 holds; it is
 * then rewarded early. */
static void bandit_rewards(birp_model *m, int64_t now)
{
    while (m->pull_fin < m->pull_cur) {
        struct pull_acc *pa = &m->pend[m->pull_fin % PULL_RING];
        if (pa->end_ps > now - m->max_slo_ps && m->pull_cur - m->pull_fin < PULL_RING - 1)
            break;
        if (pa->n_arr > 0)
            birp_bandit_update(&m->bandit, pa->arm,
                               1 - (pa->loss + (double)(pa->n_arr - pa->n_dec)) / (double)pa->n_arr);
        m->pull_fin++;
    }
}

static void decide(birp_model *m, slot_row *row, int64_t now)
{
    int E = m->E;
    double dt = ps_to_s(slot_of(m));
    double lam[BIRP_MAX_EDGES], backlog[BIRP_MAX_EDGES];
    for (int j = 0; j < E; j++) {
        edge *ed = &m->e[j];
        double obs = (double)ed->arr_slot / dt;
        ed->lam_est = ed->lam_est > 0 ? 0.5 * ed->lam_est + 0.5 * obs : obs;
        lam[j] = ed->lam_est;
        backlog[j] = ed->queued / dt;
        m->prev_load[j] = (double)ed->enq_slot / dt;
        ed->arr_slot = ed->enq_slot = 0;
    }
    int p = m->cfg.policy;
    row->arm = -1;
    row->status = -1000;
    memset(m->y, 0, sizeof m->y);
    for (int j = 0; j < E; j++) {
        m->y[j][j] = 1;
        m->e[j].bcap = 1;
        for (int c = 0; c < m->C; c++)
            m->e[j].ccap[c] = 1;
        m->e[j].conc = (int)m->cfg.parallel;    /* the same parallel execution for every policy */
        row->level[j] = 0;
    }
    if (p == P_LOCAL || p == P_JSQ)
        return;
    if (p == P_MS || p == P_CLIPPER || p == P_TRITON) {
        /* capacity as it is: every execution stream, with the inflation of
         * running them side by side (birp_stream_gain) */
        double gain = birp_stream_gain((int)m->cfg.parallel, m->cfg.gamma);
        birp_ms_in in = {.nedges = E, .target_util = m->cfg.target_util};
        for (int j = 0; j < E; j++) {
            edge *ed = &m->e[j];
            /* levels: option l of each class (clamped to its last) */
            int nl = 1;
            for (int c = 0; c < m->C; c++)
                nl = ed->ms_nopt[c] > nl ? ed->ms_nopt[c] : nl;
            nl = nl > BIRP_MAX_LEVELS ? BIRP_MAX_LEVELS : nl;
            in.nlevels[j] = nl;
            for (int l = 0; l < nl; l++) {
                double lat = 0, acc = 0;
                for (int c = 0; c < m->C; c++) {
                    int mi = ed->ms_opt[c][l < ed->ms_nopt[c] ? l : ed->ms_nopt[c] - 1];
                    /* time per request: serial, or (clipper) in the largest
                     * batch within the AIMD objective, half the class's SLO,
                     * or (triton) in a batch of max_batch_size */
                    int b = 1;
                    if (p == P_CLIPPER)
                        b = birp_curve_max_batch(ed->curve[mi], m->slo_s[c] / 2, m->grid[m->K - 1]);
                    else if (p == P_TRITON)
                        b = ed->tmax[mi];
                    lat += m->share[c] * model_lat(ed, mi, b) / b;
                    acc += m->share[c] * ed->curve[mi]->acc;
                }
                in.cap[j][l] = gain / lat;
                in.acc[j][l] = acc;
            }
            in.lambda[j] = lam[j];
            in.backlog[j] = backlog[j];
        }
        int lv[BIRP_MAX_EDGES];
        birp_ms_plan(&in, lv, m->y);
        for (int j = 0; j < E; j++) {
            edge *ed = &m->e[j];
            for (int c = 0; c < m->C; c++)
                ed->use[c] = ed->ms_opt[c][lv[j] < ed->ms_nopt[c] ? lv[j] : ed->ms_nopt[c] - 1];
            row->level[j] = lv[j];
        }
        return;
    }
    /* birp, birp_static, serial: the QP */
    double a = m->bc.static_a, beta = m->bc.static_beta;
    if (p == P_BIRP) {
        /* a new arm every `hold` slots; its reward, 1 - the mean loss of the
         * requests that arrived while it was in force, comes once their
         * deadlines have passed (bandit_rewards; the bandit scales it) */
        if (m->held == 0 || m->held >= m->bc.hold) {
            if (m->held)
                m->pend[m->pull_cur % PULL_RING].end_ps = now;
            bandit_rewards(m, now);
            if (m->held)
                m->pull_cur++;
            m->arm = birp_bandit_select(&m->bandit);
            m->held = 0;
            struct pull_acc *pa = &m->pend[m->pull_cur % PULL_RING];
            memset(pa, 0, sizeof *pa);
            pa->arm = m->arm;
            pa->end_ps = INT64_MAX;
        }
        m->held++;
        a = m->arm_a[m->arm / m->nb];
        beta = m->arm_beta[m->arm % m->nb];
        row->arm = m->arm;
    }
    row->a = a;
    row->beta = beta;
    /* The QP at the current model levels; with `downgrade`, while the
     * optimum still overflows (more than 1% of the load cannot be served in
     * time even batched), the edge that overflows most switches its classes
     * to their next faster model and the QP is solved again. */
    int lv[BIRP_MAX_EDGES] = {0};
    birp_slot_out so;
    for (int iter = 0;; iter++) {
        for (int j = 0; j < E; j++)
            for (int c = 0; c < m->C; c++) {
                edge *ed = &m->e[j];
                ed->use[c] = ed->ms_opt[c][lv[j] < ed->ms_nopt[c] ? lv[j] : ed->ms_nopt[c] - 1];
            }
        qp_decide(m, lam, backlog, a, beta, &so);
        if (!m->cfg.downgrade || p == P_SERIAL || so.fallback)
            break;
        double over = 0, tot = 0;
        int worst = -1;
        for (int j = 0; j < E; j++) {
            over += so.o[j];
            tot += lam[j] + backlog[j];
            int maxl = 0;
            for (int c = 0; c < m->C; c++)
                maxl = m->e[j].ms_nopt[c] - 1 > maxl ? m->e[j].ms_nopt[c] - 1 : maxl;
            if (lv[j] < maxl && so.o[j] > 0 && (worst < 0 || so.o[j] > so.o[worst]))
                worst = j;
        }
        if (over <= 0.01 * tot || worst < 0 || iter >= 4 * E || sim_poll(m->sim, 1))
            break;
        lv[worst]++;
    }
    row->status = so.status;
    row->fallback = so.fallback;
    row->obj = so.obj;
    memcpy(m->y, so.y, sizeof m->y);
    for (int j = 0; j < E; j++) {
        edge *ed = &m->e[j];
        ed->bcap = p == P_SERIAL ? 1 : so.bcap[j];
        /* per-class caps: the QP's batch latency is for the tightest SLO S;
         * a class with SLO S_c may take batches up to S_c / S times longer */
        double t = 0;
        for (int k = 0; k < m->K && p != P_SERIAL; k++)
            t += so.z[j][k] * mix_lat(m, j, m->grid[k]);
        for (int c = 0; c < m->C; c++) {
            ed->ccap[c] = ed->bcap;
            if (p == P_SERIAL || !m->cfg.class_caps || so.fallback)
                continue;
            double tc = t * m->slo_s[c] / m->min_slo_s;
            while (ed->ccap[c] < m->grid[m->K - 1] && mix_lat(m, j, ed->ccap[c] + 1) <= tc)
                ed->ccap[c]++;
        }
        row->level[j] = lv[j];
    }
}

/* Model switching costs the new engine's load time: a model an edge puts
 * in use that is not loaded starts loading now and serves new arrivals of
 * the class from now + load_setup + engine size / load_rate; until then the
 * class stays on the model that served it.  An edge keeps loaded only the
 * engines it uses (or is loading) and those with queued requests, so a
 * model dropped and taken up again is loaded again.  With switch_cost
 * false every load is instantaneous. */
static void apply_switches(birp_model *m, int64_t now)
{
    for (int j = 0; j < m->E; j++) {
        edge *ed = &m->e[j];
        bool keep[MAX_MODELS] = {false};
        for (int c = 0; c < m->C; c++) {
            int u = ed->use[c];
            if (ed->ready_at[u] < 0) {
                int64_t t = 0;
                if (m->cfg.switch_cost)
                    t = m->cfg.load_setup_ps +
                        units_tx_time_ps((int64_t)ed->curve[u]->size_bytes, m->cfg.load_rate_bps);
                ed->ready_at[u] = now + t;
                ed->switches++;
            }
            serving_model(ed, c, now);
            keep[u] = keep[ed->run[c]] = true;
        }
        for (int k = 0; k < ed->nmodels; k++)
            if (!keep[k] && ed->q[k].n == 0)
                ed->ready_at[k] = -1;
    }
}

static void on_slot(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    birp_model *m = obj;
    if (m->nrows == m->caprows) {
        m->caprows = m->caprows ? 2 * m->caprows : 256;
        m->rows = xrealloc(m->rows, m->caprows * sizeof *m->rows);
    }
    slot_row *row = &m->rows[m->nrows++];
    memset(row, 0, sizeof *row);
    row->t_s = ps_to_s(sim_now(s));
    row->loss = m->slot_n > 0 ? m->slot_loss / (double)m->slot_n : NAN;
    m->slot_loss = 0;
    m->slot_n = 0;
    decide(m, row, sim_now(s));
    apply_switches(m, sim_now(s));
    double off = 0;
    for (int i = 0; i < m->E; i++) {
        row->bcap[i] = m->e[i].bcap;
        double oi = 0;
        for (int j = 0; j < m->E; j++)
            if (j != i)
                oi += m->y[i][j];
        off += oi / m->E;
    }
    row->offload = off;
    for (int j = 0; j < m->E; j++)
        try_dispatch(m, s, j);          /* a larger cap may start work at once */
    sim_timer_arm(s, &m->slot_timer, sim_now(s) + slot_of(m));
}

static int birp_start(void *st, sim *s, err *e)
{
    (void)e;
    birp_model *m = st;
    m->sim = s;
    for (int j = 0; j < m->E; j++) {
        /* the engines of the first plan (each class's most accurate
         * feasible model) are loaded before the run */
        for (int k = 0; k < MAX_MODELS; k++)
            m->e[j].ready_at[k] = -1;
        for (int c = 0; c < m->C; c++) {
            m->e[j].run[c] = m->e[j].use[c];
            m->e[j].ready_at[m->e[j].use[c]] = 0;
        }
        m->e[j].bcap = 1;
        for (int c = 0; c < m->C; c++)
            m->e[j].ccap[c] = 1;
        for (int k = 0; k < MAX_MODELS; k++)
            m->e[j].aimd[k] = 1;
        m->e[j].conc = (int)m->cfg.parallel;
        m->e[j].lam_est = m->rate * (m->origin_cum[j] - (j ? m->origin_cum[j - 1] : 0)) /
                          m->origin_cum[m->E - 1];
        m->e[j].arr_slot = (int64_t)llround(m->e[j].lam_est * ps_to_s(slot_of(m)));
        m->y[j][j] = 1;
    }
    sim_timer_init(&m->slot_timer, on_slot, m, 0);
    sim_timer_arm(s, &m->slot_timer, 0);
    if (m->wl.source == SRC_TRACE) {
        m->arr_idx = 0;
        if (m->narr > 0)
            sim_schedule(s, m->arr_ps[0], on_arrival, m, 0);
    } else {
        if (m->wl.source == SRC_ONOFF) {
            m->on_start = 0;
            m->on_end = before_stop(m, rng_exponential(&m->r_wl, (double)m->wl.on_ps));
            if (m->on_end < 0)
                m->on_end = m->stop_ps;
        }
        int64_t t = next_synthetic(m, 0);
        if (t >= 0)
            sim_schedule(s, t, on_arrival, m, 0);
    }
    return 0;
}

static void birp_fini(void *st)
{
    birp_model *m = st;
    for (int j = 0; j < BIRP_MAX_EDGES; j++)
        for (int k = 0; k < MAX_MODELS; k++)
            free(m->e[j].q[k].v);
    while (m->inflight) {
        batch *b = m->inflight;
        m->inflight = b->next;
        free(b);
    }
    birp_profiles_fini(&m->prof);
    birp_trace_fini(&m->trace);
    free(m->arr_ps);
    if (m->bandit.plays)
        birp_bandit_fini(&m->bandit);
    free(m->arm_a);
    free(m->arm_beta);
    free(m->r);
    free(m->rows);
}

/* What `aisim run` prints first (model.h). */
static const model_headline birp_headlines[] = {
    {"policy", "policy", NULL, 0},
    {"throughput_rps", "throughput", "req/s", 0},
    {"goodput_rps", "goodput (within SLO)", "req/s", 0},
    {"slo_failure_rate", "SLO failures", "%", 0},
    {"served_accuracy", "accuracy of served requests", "%", 0},
    {"inference_loss", "inference loss", "", 0},
    {"latency_p99_s", "latency p99", "s", 0},
    {"accelerator_utilisation", "accelerator utilisation", "%", 0},
    {NULL, NULL, NULL, 0},
};

const model_ops birp_model_ops = {
    .name = "birp",
    .summary = "BIRP: batch-aware inference redistribution across heterogeneous edges (ICPP'23)",
    .state_size = sizeof(birp_model),
    .configure = birp_configure,
    .start = birp_start,
    .report = birp_report,
    .fini = birp_fini,
    .headlines = birp_headlines,
};
