/*
 * coll_fluid.c - fluid collectives: a ring's steps as one flow per rank
 * (collective.h, coll_args.fluid; docs/flow-level.md "Fluid collectives").
 *
 * Step by step, a ring all-reduce over n ranks is 2(n-1) steps in which
 * every rank sends a segment to its neighbour and waits for the one from
 * the other side: 2(n-1) x n messages per sub-buffer (2 x 10^10 at
 * n = 10^5).  All its steps have the same pattern, so at flow level the
 * whole ring is one flow per rank to its neighbour, carrying the sum of
 * the steps' bytes, with rates from max-min as for any flow.  What the
 * steps add on top of the bytes is their latency, added here:
 *
 *   In the pipelined step run, a channel's connection carries K
 *   sub-buffers' messages of c bytes, each taking tx = C c / B on the wire
 *   (C channels share the NIC's payload rate B) and arriving d later (the
 *   flow plane's delay: propagation and the first packet's serialisation).
 *   Message (k, s) leaves once (k, s-1) has arrived from the neighbour, so
 *   a step round takes max(K tx, tx + d): the wire is busy for K tx, a
 *   sub-buffer's dependency chain needs tx + d.  The ring takes
 *   (S-1) max(K tx, tx + d) + K tx + d for S steps; the fluid flow alone
 *   takes S K tx + d; the difference,
 *       extra = (S - 1) max(0, d - (K - 1) tx),
 *   is added after the flow's arrival (an operation delay).  Hops differ
 *   (NVLink, NIC): then the (S-1)(tx + d) is the chain of the S hops that
 *   end at the flow's own, summed around the ring (fluid_ring).
 *   Bandwidth-bound rings (K tx > d) get nothing; a 10^5-rank ring whose
 *   segments are a few hundred bytes gets its 2(n-1) step latencies.
 *
 * The hierarchical all-reduce is three ring phases (reduce-scatter over
 * NVLink, a ring per rail, all-gather over NVLink) that the step run
 * overlaps by its sub-buffers: the next phase starts when the first
 * sub-buffer has come through (head: the phase's time less (K-1) tx, since
 * the ring's rounds serve the sub-buffers in turn) and a rank's phase
 * ends no earlier than its previous phase's end plus one sub-buffer's way
 * through this one (tail: its chain).  Halving-doubling's steps are
 * phases too (fluid_hd).  Those are the operations' delays (zero-byte
 * operations with a delay, joins).
 *
 * All figures come from the empty network (network_flow_path): under
 * contention the flows' rates are max-min's, the added latencies are not
 * re-estimated.  Where the step run differs: a ring step waits for the
 * slowest neighbour every step, the fluid flows run at their own rates for
 * the whole call (docs/flow-level.md measures by how much).
 *
 * Cost: per rank one flow per phase (and up to three delay or join
 * operations), independent of the number of sub-buffers: 3 flows per rank
 * for a hierarchical all-reduce, 2 log2 n for halving-doubling.
 */
#include <math.h>
#include <string.h>

#include "aisim/units.h"
#include "workload/coll_int.h"

int coll_fluid_check(const coll_comm *c, const coll_args *a, err *e)
{
    (void)a;
    if (strcmp(network_transport(c->w->net)->name, "flow") != 0)
        return ERR(e, AISIM_EINVAL, "fluid: a fluid collective needs the flow plane "
                   "(plane: flow); found plane: packet, whose messages are packets");
    return 0;
}

/* One ring phase: where its flows start and what its ranks wait for. */
typedef struct phase {
    int steps, off;             /* ring steps; segment offset (all-gather
                                   after a reduce-scatter: 1) */
    const int *start;           /* per rank: the operation its flow waits
                                   for (NULL or NONE: the call's start) */
    const int *prev_done;       /* per rank: its previous phase's end
                                   (NULL: first phase) */
    int *done;                  /* out, per rank: this phase's end there */
    int *next_start;            /* out (NULL: last phase), per rank: when
                                   the next phase's flow starts */
} phase;

/* The empty network's latency d (ps) and time per byte of the flow from
 * rank a to rank b on channel chan, `share` flows of the call sharing its
 * link (ps/B);
 * 0, 0 if the network has no such figures. */
static void hop_figures(coll_run *r, int a, int b, int chan, double *d_ps, double *ps_per_byte,
                        int share)
{
    coll_world *w = r->c->w;
    conn *k = coll_world_conn(w, r->c->eps[a], r->c->eps[b], chan, r->a.prio);
    double rate = 0;
    int64_t d = 0;
    *d_ps = *ps_per_byte = 0;
    if (network_flow_path(w->net, k, &rate, &d) && rate > 0) {
        /* the protocol model's step latency and line overhead (LL: two
         * bytes per byte) belong to the hop */
        *d_ps = (double)(d + coll_step_ps(r, a, b));
        *ps_per_byte = (double)share * 8e12 / rate *
                       ((double)coll_proto_wire(r->a.proto, 120) / 120.0);
    }
}

/* A zero-byte operation at rank a that arrives `delay` after `dep`. */
static int wait_op(coll_run *r, int a, int chan, int dep, int64_t delay)
{
    int o = coll_add_op(r, a, a, chan, 0);
    r->ops[o].delay_ps = delay;
    coll_add_dep(r, dep, o);
    return o;
}

/* Sum of the `cnt` entries of the cyclic array with prefix sums pre[0..n]
 * that end at index hi, plus q whole turns. */
static double cyc_sum(const double *pre, int n, int hi, int q, int cnt)
{
    double v = q * pre[n];
    int lo = hi - cnt + 1;
    if (cnt)
        v += lo >= 0 ? pre[hi + 1] - pre[lo] : pre[hi + 1] + pre[n] - pre[n + lo];
    return v;
}

/* A ring phase over positions 0..nr-1 (rank rk[i]): position i sends to
 * i+1 the segments (i + off - s) mod nr, s = 0..steps-1, of seg (bytes of
 * the whole channel share), as one flow.  A step of hop h takes
 * v_h = tx_h + d_h for one sub-buffer (tx_h its message's time on the
 * wire); the last message into i+1 ends a chain of `steps` hops ending at
 * hop i, chain_i = the sum of their v.  The pipelined step run takes
 * max(K S tx_i + d_i, chain_i + (K-1) tx_i) there (both bounds exact when
 * every hop is alike: the file's header); the flow alone the first. */
static void fluid_ring(coll_run *r, const int *rk, int nr, const uint64_t *seg, int chan,
                       uint64_t subs, const int *share, const phase *ph)
{
    int S = ph->steps, q = S / nr, rem = S % nr;
    double K = (double)subs;
    double *pre = xcalloc((size_t)nr + 1, sizeof *pre), *vpre = xcalloc((size_t)nr + 1,
                                                                         sizeof *vpre);
    double *tx = xcalloc((size_t)nr, sizeof *tx), *d = xcalloc((size_t)nr, sizeof *d);
    uint64_t *b = xcalloc((size_t)nr, sizeof *b);
    for (int j = 0; j < nr; j++)
        pre[j + 1] = pre[j] + (double)seg[j];
    for (int i = 0; i < nr; i++) {
        /* steps s = 0..S-1 cover segments i+off, i+off-1, ...: q whole
         * turns and `rem` segments ending at (i + off) mod nr */
        int hi = ((i + ph->off) % nr + nr) % nr;
        b[i] = (uint64_t)llround(cyc_sum(pre, nr, hi, q, rem));
        double ppb;
        hop_figures(r, rk[i], rk[(i + 1) % nr], chan, &d[i], &ppb,
                    share ? share[i] : r->a.channels);
        tx[i] = S > 0 ? ppb * (double)b[i] / ((double)S * K) : 0;
        vpre[i + 1] = vpre[i] + tx[i] + d[i];
    }
    for (int i = 0; i < nr; i++) {
        int a = rk[i], to = rk[(i + 1) % nr];
        double chain = cyc_sum(vpre, nr, i, q, rem);
        double alone = K * S * tx[i] + d[i], step = chain + (K - 1) * tx[i];
        int64_t extra = step > alone ? (int64_t)(step - alone + 0.5) : 0;
        int st = ph->start ? ph->start[a] : NONE;
        int f = coll_add_op(r, a, to, chan, b[i]);
        r->ops[f].delay_ps = extra;
        coll_add_dep(r, st, f);
        if (ph->prev_done) {
            /* the last sub-buffer's way through this phase */
            int t = wait_op(r, to, chan, ph->prev_done[to], (int64_t)(chain + 0.5));
            int j = wait_op(r, to, chan, f, 0);
            coll_add_dep(r, t, j);
            ph->done[to] = j;
        } else {
            ph->done[to] = f;
        }
        if (ph->next_start)     /* the first sub-buffer through */
            ph->next_start[to] = wait_op(r, to, chan, st,
                                        (int64_t)(alone + (double)extra - (K - 1) * tx[i] + 0.5));
    }
    free(pre);
    free(vpre);
    free(tx);
    free(d);
    free(b);
}

/* Halving-doubling (collective.c's halving_doubling, Rabenseifner) as
 * phases of one flow per rank each, every step's whole bytes in one
 * message, overlapped as the step run's sub-buffers overlap them: step i+1
 * of rank v starts once the first sub-buffer of its step i has arrived
 * from its partner (head: tx_i + d_i, tx_i one sub-buffer's message on
 * the wire), and ends no earlier than the partner's step i end plus the
 * last sub-buffer's way to v (tail: tx_{i+1} + d_{i+1}), as the step run's
 * dependencies are on arrivals into v; the steps' flows share the
 * NIC by max-min meanwhile.  The extra ranks of a non-power of two fold in
 * before and out after: two more such phases. */
static void fluid_hd(coll_run *r, plan *p, uint64_t bytes, int chan, uint64_t subs)
{
    const coll_args *a = &r->a;
    int n = p->n, pw = 1, lg = 0;
    while (2 * pw <= n) {
        pw *= 2;
        lg++;
    }
    bool rs = a->type != COLL_ALLGATHER, ag = a->type != COLL_REDUCE_SCATTER;
    int rem = n - pw;
    uint64_t elem = (uint64_t)a->elem_bytes;
    int *lo = xcalloc((size_t)pw, sizeof *lo), *len = xcalloc((size_t)pw, sizeof *len);
    int *start = xcalloc((size_t)pw, sizeof *start), *done = xcalloc((size_t)pw, sizeof *done);
    int *nstart = xcalloc((size_t)pw, sizeof *nstart), *ndone = xcalloc((size_t)pw,
                                                                          sizeof *ndone);
    int *flow = xcalloc((size_t)pw, sizeof *flow);
    int64_t *tail = xcalloc((size_t)pw, sizeof *tail);
    uint64_t *pre = xcalloc((size_t)pw + 1, sizeof *pre);
    for (int j = 0; j < pw; j++)
        pre[j + 1] = pre[j] + coll_split(bytes, (uint64_t)pw, (uint64_t)j, elem);
#define REAL(v) ((v) < rem ? 2 * (v) : (v) + rem)
    for (int v = 0; v < pw; v++) {
        lo[v] = ag && !rs ? v : 0;
        len[v] = ag && !rs ? 1 : pw;
        start[v] = done[v] = NONE;
    }
    for (int v = 0; v < rem; v++) {     /* fold in: 2v+1 gives 2v its data */
        double d, ppb;
        hop_figures(r, 2 * v + 1, 2 * v, chan, &d, &ppb, r->a.channels);
        done[v] = coll_add_op(r, 2 * v + 1, 2 * v, chan, bytes);
        start[v] = wait_op(r, 2 * v, chan, NONE,
                           (int64_t)(ppb * (double)bytes / (double)subs + d + 0.5));
    }
    for (int k = 0; k < (rs ? lg : 0) + (ag ? lg : 0); k++) {
        bool halving = rs && k < lg;
        int i = halving ? k : (rs ? 2 * lg - 1 - k : lg - 1 - k);
        int dist = pw >> (i + 1);
        for (int v = 0; v < pw; v++) {
            int w = v ^ dist, slo = lo[v], cnt = len[v];
            if (halving) {
                cnt /= 2;
                slo = (v & dist) == 0 ? lo[v] + cnt : lo[v];
            }
            uint64_t b = pre[slo + cnt] - pre[slo];
            double d, ppb;
            hop_figures(r, REAL(v), REAL(w), chan, &d, &ppb, r->a.channels);
            double tx = ppb * (double)b / (double)subs;
            /* w's next step waits for this flow's first sub-buffer; its
             * end there for the last one, sent once v's own step ended */
            flow[v] = coll_add_op(r, REAL(v), REAL(w), chan, b);
            coll_add_dep(r, start[v], flow[v]);
            nstart[w] = wait_op(r, REAL(w), chan, start[v], (int64_t)(tx + d + 0.5));
            tail[v] = (int64_t)(tx + d + 0.5);
            if (halving) {
                if ((v & dist) != 0)
                    lo[v] += cnt;
                len[v] = cnt;
            }
        }
        for (int v = 0; v < pw; v++) {
            int w = v ^ dist;
            if (done[w] != NONE) {
                int t = wait_op(r, REAL(v), chan, done[w], tail[w]);
                ndone[v] = wait_op(r, REAL(v), chan, flow[w], 0);
                coll_add_dep(r, t, ndone[v]);
            } else {
                ndone[v] = flow[w];
            }
            if (!halving) {
                lo[v] = lo[v] < lo[w] ? lo[v] : lo[w];
            }
        }
        for (int v = 0; v < pw; v++) {
            if (!halving)
                len[v] *= 2;
            done[v] = ndone[v];
            start[v] = nstart[v];
        }
    }
    for (int v = 0; ag && v < rem; v++) {  /* fold out: 2v hands 2v+1 the result */
        double d, ppb;
        hop_figures(r, 2 * v, 2 * v + 1, chan, &d, &ppb, r->a.channels);
        int o = coll_add_op(r, 2 * v, 2 * v + 1, chan, bytes);
        coll_add_dep(r, start[v], o);
        int t = wait_op(r, 2 * v + 1, chan, done[v],
                        (int64_t)(ppb * (double)bytes / (double)subs + d + 0.5));
        int j = wait_op(r, 2 * v + 1, chan, o, 0);
        coll_add_dep(r, t, j);
    }
#undef REAL
    free(lo);
    free(len);
    free(start);
    free(done);
    free(nstart);
    free(ndone);
    free(flow);
    free(tail);
    free(pre);
}

/* How many of the call's channels send over the link of position i's hop
 * in channel chan's ring (p->rk), for each i: channels whose rings are
 * laid over servers (coll_ring_order) leave a GPU by NVLink in some and by
 * its NIC in others, so a hop shares its link with the channels whose
 * next hop from the same rank is of the same kind (inside its server or
 * not); without servers, or in rank order (ring_order: rank), every
 * channel's ring is the same. */
static int *ring_shares(plan *p, int chan, int channels, bool rank_order)
{
    int n = p->n;
    int *share = xcalloc((size_t)n, sizeof *share);
    if (rank_order || !p->grouped || p->servers < 2 || p->local < 2 || channels < 2) {
        for (int i = 0; i < n; i++)
            share[i] = channels;
        return share;
    }
    int *srv = xcalloc((size_t)n, sizeof *srv);
    int *kind = xcalloc((size_t)n * 2, sizeof *kind);  /* per rank: hops inside, out */
    for (int m = 0; m < p->servers; m++)
        for (int l = 0; l < p->local; l++)
            srv[p->grid[m * p->local + l]] = m;
    for (int ch = 0; ch < channels; ch++) {
        coll_ring_order(p, ch);
        for (int i = 0; i < n; i++) {
            int a = p->rk[i], b = p->rk[(i + 1) % n];
            kind[2 * a + (srv[a] != srv[b])]++;
        }
    }
    coll_ring_order(p, chan);
    for (int i = 0; i < n; i++) {
        int a = p->rk[i], b = p->rk[(i + 1) % n];
        share[i] = kind[2 * a + (srv[a] != srv[b])];
    }
    free(srv);
    free(kind);
    return share;
}

bool coll_fluid_build(coll_run *r, plan *p, uint64_t bytes, int chan, uint64_t subs)
{
    const coll_args *a = &r->a;
    int n = p->n;
    uint64_t elem = (uint64_t)a->elem_bytes;
    bool ring = a->algo == COLL_ALGO_RING || a->algo == COLL_ALGO_AUTO;
    if (a->type == COLL_ALLREDUCE && a->algo == COLL_ALGO_HIER) {
        int M = p->servers, G = p->local;
        int *d1 = xcalloc((size_t)n, sizeof *d1), *s2 = xcalloc((size_t)n, sizeof *s2);
        int *d2 = xcalloc((size_t)n, sizeof *d2), *s3 = xcalloc((size_t)n, sizeof *s3);
        int *d3 = xcalloc((size_t)n, sizeof *d3);
        for (int l = 0; l < G; l++)
            p->seg[l] = coll_split(bytes, (uint64_t)G, (uint64_t)l, elem);
        phase rs = {.steps = G - 1, .done = d1, .next_start = s2};
        if (G > 1)
            for (int m = 0; m < M; m++)
                fluid_ring(r, &p->grid[m * G], G, p->seg, chan, subs, NULL, &rs);
        else
            for (int i = 0; i < n; i++)
                d1[i] = s2[i] = NONE;
        phase rail = {.steps = 2 * (M - 1), .start = s2, .prev_done = G > 1 ? d1 : NULL,
                      .done = d2, .next_start = G > 1 ? s3 : NULL};
        for (int l = 0; M > 1 && l < G; l++) {
            for (int m = 0; m < M; m++) {
                p->col[m] = p->grid[m * G + l];
                p->seg2[m] = coll_split(p->seg[(l + 1) % G], (uint64_t)M, (uint64_t)m, elem);
            }
            fluid_ring(r, p->col, M, p->seg2, chan, subs, NULL, &rail);
        }
        if (M == 1)
            for (int i = 0; i < n; i++) {
                d2[i] = d1[i];
                s3[i] = s2[i];
            }
        phase ag = {.steps = G - 1, .off = 1, .start = s3, .prev_done = d2, .done = d3};
        for (int m = 0; G > 1 && m < M; m++)
            fluid_ring(r, &p->grid[m * G], G, p->seg, chan, subs, NULL, &ag);
        free(d1);
        free(s2);
        free(d2);
        free(s3);
        free(d3);
        return true;
    }
    if (a->algo == COLL_ALGO_HD) {
        fluid_hd(r, p, bytes, chan, subs);
        return true;
    }
    if (!ring || (a->type != COLL_ALLREDUCE && a->type != COLL_REDUCE_SCATTER &&
                  a->type != COLL_ALLGATHER))
        return false;
    for (int j = 0; j < n; j++)
        p->seg[j] = coll_split(bytes, (uint64_t)n, (uint64_t)j, elem);
    phase ph = {.steps = a->type == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1, .done = p->out};
    int *share = ring_shares(p, chan, a->channels, a->rank_order);
    fluid_ring(r, p->rk, n, p->seg, chan, subs, share, &ph);
    free(share);
    return true;
}
