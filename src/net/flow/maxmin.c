/*
 * maxmin.c - max-min fairness by progressive filling, per connected
 * component of the flow-link graph (maxmin.h has the model).
 *
 * Links keep the list of the flows that cross them (flow id, hop index);
 * flows keep their hops (link, weight, position in the link's list), so a
 * flow leaves every list in O(hops) by swap-removal.  A solve takes the
 * links marked since the last one and, from each, the part of the
 * flow-link graph a change can reach (through saturated links: see
 * solve()), breadth first (an epoch stamp marks what was seen), and fills
 * it: the heap holds one (share, link) entry per link with unfrozen flows,
 * smallest first; an entry's share is a lower bound (shares only grow),
 * updated when it reaches the top.
 */
#include "net/flow/maxmin.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"

typedef struct mm_hop {
    uint32_t link;              /* link id */
    uint32_t pos;               /* index of this hop's entry in the link's list */
    double w;                   /* the flow's weight on the link */
} mm_hop;

typedef struct mm_ref {
    uint32_t flow;              /* flow id */
    uint32_t hop;               /* index in the flow's hops */
} mm_ref;

typedef struct mm_link {
    double cap;                 /* capacity (the caller's unit, e.g. bit/s) */
    double rem, wsum;           /* filling: capacity left, weight of unfrozen flows */
    mm_ref *f;                  /* flows crossing it */
    uint32_t n, ncap;
    double load;                /* Σ w·rate of its flows after the last solve */
    uint32_t nfree;             /* filling: unfrozen flows of the component */
    uint32_t epoch;             /* last solve that saw it */
    uint32_t xepoch;            /* last solve that expanded it (took all its flows) */
    bool dirty;                 /* in the dirty list */
} mm_link;

typedef struct mm_flow {
    double rate, cap;           /* cap <= 0: none */
    mm_hop *h;
    uint32_t nh;
    uint32_t epoch;
    bool live, frozen;
} mm_flow;

typedef struct mm_ent {
    double share;
    uint32_t id;                /* link id, or MM_FLOW | flow id (a rate cap) */
} mm_ent;
#define MM_FLOW 0x80000000u

struct mmf {
    mm_link *l;
    size_t nl;
    mm_flow *f;
    size_t nf, fcap, live;
    uint32_t *freeids;
    size_t nfree, freecap;
    uint32_t *dirty;            /* links marked since the last solve */
    size_t ndirty, dcap;
    uint32_t epoch;
    /* scratch of a solve */
    uint32_t *cl, *cf;          /* the component's links and flows */
    size_t ncl, ncf, clcap, cfcap;
    uint32_t *queue;            /* links to expand, breadth first */
    size_t nq, qcap;
    bool full;                  /* from scratch: expand every link */
    uint32_t *grow;             /* links a fill found full, not expanded */
    size_t ngrow, gcap;
    uint64_t refills;           /* fills done again after the set grew */
    mm_ent *heap;
    size_t nh, hcap;
};

mmf *mmf_create(size_t links)
{
    mmf *m = xcalloc(1, sizeof *m);
    m->l = xcalloc(links ? links : 1, sizeof *m->l);
    m->nl = links;
    return m;
}

void mmf_destroy(mmf *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nl; i++)
        free(m->l[i].f);
    for (size_t i = 0; i < m->nf; i++)
        free(m->f[i].h);
    free(m->l);
    free(m->f);
    free(m->freeids);
    free(m->dirty);
    free(m->cl);
    free(m->cf);
    free(m->queue);
    free(m->grow);
    free(m->heap);
    free(m);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    *cap = nc;
    return xrealloc(p, nc * size);
}

static void mark(mmf *m, uint32_t l)
{
    if (m->l[l].dirty)
        return;
    m->l[l].dirty = true;
    m->dirty = grow(m->dirty, &m->dcap, m->ndirty + 1, sizeof *m->dirty);
    m->dirty[m->ndirty++] = l;
}

void mmf_set_capacity(mmf *m, uint32_t l, double cap)
{
    m->l[l].cap = cap > 0 ? cap : 0;
    mark(m, l);
}

double mmf_capacity(const mmf *m, uint32_t l) { return m->l[l].cap; }
double mmf_rate(const mmf *m, uint32_t f) { return m->f[f].rate; }
size_t mmf_flows(const mmf *m) { return m->live; }

double mmf_link_load(const mmf *m, uint32_t l)
{
    const mm_link *k = &m->l[l];
    double s = 0;
    for (uint32_t i = 0; i < k->n; i++) {
        const mm_flow *f = &m->f[k->f[i].flow];
        s += f->rate * f->h[k->f[i].hop].w;
    }
    return s;
}

uint32_t mmf_add(mmf *m, const uint32_t *links, const double *w, size_t n, double cap)
{
    uint32_t id;
    if (m->nfree) {
        id = m->freeids[--m->nfree];
    } else {
        m->f = grow(m->f, &m->fcap, m->nf + 1, sizeof *m->f);
        id = (uint32_t)m->nf++;
    }
    mm_flow *f = &m->f[id];
    *f = (mm_flow){.cap = cap, .live = true, .h = xcalloc(n ? n : 1, sizeof *f->h)};
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        uint32_t j = 0;
        while (j < f->nh && f->h[j].link != links[i])
            j++;
        if (j < f->nh) {
            f->h[j].w += wi;
            continue;
        }
        mm_link *k = &m->l[links[i]];
        size_t kc = k->ncap;
        k->f = grow(k->f, &kc, (size_t)k->n + 1, sizeof *k->f);
        k->ncap = (uint32_t)kc;
        f->h[f->nh] = (mm_hop){.link = links[i], .pos = k->n, .w = wi};
        k->f[k->n++] = (mm_ref){id, f->nh};
        f->nh++;
        mark(m, links[i]);
    }
    m->live++;
    return id;
}

void mmf_remove(mmf *m, uint32_t id)
{
    mm_flow *f = &m->f[id];
    for (uint32_t i = 0; i < f->nh; i++) {
        mm_link *k = &m->l[f->h[i].link];
        uint32_t p = f->h[i].pos;
        k->f[p] = k->f[--k->n];
        if (p < k->n)
            m->f[k->f[p].flow].h[k->f[p].hop].pos = p;
        mark(m, f->h[i].link);
    }
    free(f->h);
    *f = (mm_flow){0};
    m->live--;
    m->freeids = grow(m->freeids, &m->freecap, m->nfree + 1, sizeof *m->freeids);
    m->freeids[m->nfree++] = id;
}

/* ---- the heap of shares --------------------------------------------- */

static bool ent_less(const mm_ent *a, const mm_ent *b)
{
    if (a->share != b->share)
        return a->share < b->share;
    return a->id < b->id;
}

static void heap_push(mmf *m, double share, uint32_t id)
{
    m->heap = grow(m->heap, &m->hcap, m->nh + 1, sizeof *m->heap);
    size_t i = m->nh++;
    mm_ent e = {share, id};
    while (i > 0 && ent_less(&e, &m->heap[(i - 1) / 2])) {
        m->heap[i] = m->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    m->heap[i] = e;
}

static mm_ent heap_pop(mmf *m)
{
    mm_ent top = m->heap[0], e = m->heap[--m->nh];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m->nh)
            break;
        if (c + 1 < m->nh && ent_less(&m->heap[c + 1], &m->heap[c]))
            c++;
        if (!ent_less(&m->heap[c], &e))
            break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (m->nh)
        m->heap[i] = e;
    return top;
}

static double share_of(const mm_link *k)
{
    return k->rem > 0 ? k->rem / k->wsum : 0;
}

/* ---- filling one component ------------------------------------------ */

/* A link whose flows use all of it (to 1e-9): only through such links can
 * a change reach other flows (see mmf_solve). */
static bool saturated(const mm_link *k)
{
    return k->load >= k->cap * (1 - 1e-9);
}

static void add_link(mmf *m, uint32_t l)
{
    if (m->l[l].epoch == m->epoch)
        return;
    m->l[l].epoch = m->epoch;
    m->l[l].xepoch = 0;
    m->cl = grow(m->cl, &m->clcap, m->ncl + 1, sizeof *m->cl);
    m->cl[m->ncl++] = l;
}

/* Adds link l's flows (and their links) to the component; links that are
 * saturated (every link, from scratch) are expanded in turn, breadth
 * first. */
static void expand(mmf *m, uint32_t l)
{
    if (m->l[l].epoch == m->epoch && m->l[l].xepoch == m->epoch)
        return;
    add_link(m, l);
    m->l[l].xepoch = m->epoch;
    size_t q = m->nq;
    m->queue = grow(m->queue, &m->qcap, m->nq + 1, sizeof *m->queue);
    m->queue[m->nq++] = l;
    for (; q < m->nq; q++) {
        mm_link *k = &m->l[m->queue[q]];
        for (uint32_t i = 0; i < k->n; i++) {
            uint32_t fid = k->f[i].flow;
            mm_flow *f = &m->f[fid];
            if (f->epoch == m->epoch)
                continue;
            f->epoch = m->epoch;
            m->cf = grow(m->cf, &m->cfcap, m->ncf + 1, sizeof *m->cf);
            m->cf[m->ncf++] = fid;
            for (uint32_t j = 0; j < f->nh; j++) {
                uint32_t l2 = f->h[j].link;
                add_link(m, l2);
                if (m->l[l2].xepoch != m->epoch && (m->full || saturated(&m->l[l2]))) {
                    m->l[l2].xepoch = m->epoch;
                    m->queue = grow(m->queue, &m->qcap, m->nq + 1, sizeof *m->queue);
                    m->queue[m->nq++] = l2;
                }
            }
        }
    }
}

/* Freezes flow fid at rate r.  Its links' shares move up; their heap
 * entries are left as they are (lower bounds) and brought up to date when
 * they reach the top. */
static void freeze(mmf *m, uint32_t fid, double r)
{
    mm_flow *f = &m->f[fid];
    f->rate = r;
    f->frozen = true;
    for (uint32_t j = 0; j < f->nh; j++) {
        mm_link *k = &m->l[f->h[j].link];
        k->rem -= f->h[j].w * r;
        k->wsum -= f->h[j].w;
        k->nfree--;
    }
}

/* Progressive filling of the component's flows; the flows outside it keep
 * their rates and use their part of the component's links.  Returns the
 * number of links that were not expanded but filled up (in m->grow: the
 * component must grow from them and be filled again), 0 when done. */
static size_t fill(mmf *m)
{
    m->ngrow = 0;
    m->nh = 0;
    for (size_t i = 0; i < m->ncl; i++) {
        mm_link *k = &m->l[m->cl[i]];
        k->rem = k->cap;
        k->wsum = 0;
        k->nfree = 0;
        for (uint32_t j = 0; j < k->n; j++) {
            const mm_flow *f = &m->f[k->f[j].flow];
            double w = f->h[k->f[j].hop].w;
            if (f->epoch == m->epoch) {
                k->wsum += w;
                k->nfree++;
            } else {
                k->rem -= w * f->rate;
            }
        }
        if (k->nfree)
            heap_push(m, share_of(k), m->cl[i]);
    }
    for (size_t i = 0; i < m->ncf; i++) {
        mm_flow *f = &m->f[m->cf[i]];
        f->frozen = false;
        if (f->cap > 0)
            heap_push(m, f->cap, MM_FLOW | m->cf[i]);
    }
    while (m->nh) {
        mm_ent e = heap_pop(m);
        if (e.id & MM_FLOW) {
            uint32_t fid = e.id & ~MM_FLOW;
            if (!m->f[fid].frozen)
                freeze(m, fid, e.share);
            continue;
        }
        mm_link *k = &m->l[e.id];
        if (!k->nfree)
            continue;
        /* A share only grows as flows freeze (each at the smallest share
         * of all): an entry is a lower bound of its link's share.  If the
         * share grew, the link goes back with it; else it is the
         * smallest, and its flows freeze at it. */
        double share = share_of(k);
        if (share > e.share) {
            heap_push(m, share, e.id);
            continue;
        }
        if (k->xepoch != m->epoch) {
            /* A new bottleneck shared with flows outside: the component
             * grows from it; filling goes on to find the others. */
            m->grow = grow(m->grow, &m->gcap, m->ngrow + 1, sizeof *m->grow);
            m->grow[m->ngrow++] = e.id;
        }
        for (uint32_t j = 0; j < k->n && k->nfree; j++)
            if (m->f[k->f[j].flow].epoch == m->epoch && !m->f[k->f[j].flow].frozen)
                freeze(m, k->f[j].flow, share);
    }
    if (m->ngrow)
        return m->ngrow;
    for (size_t i = 0; i < m->ncl; i++) {
        mm_link *k = &m->l[m->cl[i]];
        k->load = k->cap - k->rem;
    }
    return 0;
}

/* Incremental solve.  A change (a flow added or removed, a capacity set)
 * can only move the rates of flows it reaches through saturated links: a
 * flow all of whose shared links have room is held by a bottleneck the
 * change does not touch.  So the component grows from the changed links
 * through saturated links only; the flows outside keep their rates and
 * their share of the links the component also uses.  If filling finds a
 * new bottleneck among those other links, the component grows from it and
 * is filled again.  A solve from scratch (full) expands every link. */
static size_t solve(mmf *m, bool full, void (*fn)(void *ctx, uint32_t f, double old), void *ctx)
{
    m->epoch++;
    m->full = full;
    m->ncl = m->ncf = m->nq = 0;
    /* One set from every changed link: a flow reached from two of them
     * is filled once, with everything it is tied to. */
    for (size_t d = 0; d < m->ndirty; d++) {
        uint32_t seed = m->dirty[d];
        m->l[seed].dirty = false;
        expand(m, seed);
    }
    m->ndirty = 0;
    double *old = NULL;
    size_t oldcap = 0, nold = 0;
    for (;;) {
        if (fn) {
            old = grow(old, &oldcap, m->ncf, sizeof *old);
            for (; nold < m->ncf; nold++)
                old[nold] = m->f[m->cf[nold]].rate;
        }
        if (!fill(m))
            break;
        /* The component's rates of this try do not matter (only those of
         * flows outside it are used); old holds the rates from before the
         * solve, also of the flows that join now. */
        m->refills++;
        for (size_t i = 0; i < m->ngrow; i++)
            expand(m, m->grow[i]);
    }
    if (fn)
        for (size_t i = 0; i < m->ncf; i++)
            if (m->f[m->cf[i]].rate != old[i])
                fn(ctx, m->cf[i], old[i]);
    free(old);
    return m->ncf;
}

size_t mmf_solve(mmf *m, void (*fn)(void *ctx, uint32_t f, double old), void *ctx)
{
    return solve(m, false, fn, ctx);
}

void mmf_solve_all(mmf *m)
{
    for (uint32_t l = 0; l < m->nl; l++)
        mark(m, l);
    solve(m, true, NULL, NULL);
}

size_t mmf_bytes(const mmf *m)
{
    size_t b = sizeof *m + m->nl * sizeof *m->l + m->fcap * sizeof *m->f +
               m->freecap * sizeof *m->freeids + m->dcap * sizeof *m->dirty +
               (m->clcap + m->cfcap + m->qcap) * sizeof(uint32_t) + m->hcap * sizeof *m->heap;
    for (size_t i = 0; i < m->nl; i++)
        b += m->l[i].ncap * sizeof(mm_ref);
    for (size_t i = 0; i < m->nf; i++)
        b += m->f[i].nh * sizeof(mm_hop);
    return b;
}
