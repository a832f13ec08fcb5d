/*
 * sdn.c - the SDN control plane (sdn.h): switches on the ports' hooks and
 * watermarks, a controller behind per-switch channels, and the messages.
 *
 * State per managed switch: its egress ports (in link order, as
 * hook_attach_node finds them), one hook on all of them, a flow table by
 * flow id (idtab: connection ids are dense) with the ids seen recently in a
 * list for reporting, the window rules (exact ones by flow id in a second
 * idtab, wildcards in a short array) and the watched ports.  Entries are
 * never released while the run lasts (an idtab id is set once): a flow that
 * goes quiet leaves the report list and comes back to it on its next packet.
 *
 * Messages are heap records delivered by one-shot events: they are rare
 * (per congestion episode and per stats period, not per packet).  The
 * controller handles them one at a time (busy_until), as a single-threaded
 * controller does.
 */
#include "aisim/sdn.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/err.h"
#include "aisim/idtab.h"
#include "aisim/sim.h"

#define SDN_QUIET_PS (10 * 1000 * 1000 * (int64_t)1000)   /* 10 ms */

typedef struct sdn_sw sdn_sw;
typedef struct sdn_env sdn_env;

/* A flow entry and whether it is on the report list. */
typedef struct sdn_fent {
    sdn_flow_stat st;
    bool listed;
} sdn_fent;

typedef struct sdn_rule {
    uint32_t flow, port, wnd;
    bool live;
    int64_t idle_ps, hard_at;   /* hard_at: removal time (INT64_MAX: none) */
    int64_t last_ps;            /* installed or last matched */
} sdn_rule;

typedef struct sdn_wp {
    sdn_sw *sw;
    uint32_t idx;               /* port index */
    hook_wm wm[SDN_MAX_LEVELS];
    int nlev;
    int64_t gap_ps;
    int64_t last_cn;            /* INT64_MIN: none yet */
    bool notified;              /* a CN was sent since the last CR */
    int pending_level;          /* >= 0: a rise held back by the rate limit */
    sim_timer gap_timer;
    int64_t renotify_ps;        /* repeat while above (0: never) */
    sim_timer renew;
} sdn_wp;

struct sdn_sw {
    sdn *c;
    int idx, node;
    int64_t lat_ps;
    hook h;
    port **ports;
    uint32_t nports;
    sdn_wp **watch;          /* by port index, or NULL */
    idtab flows;                /* sdn_flow_stat by flow id */
    uint32_t *list;             /* flow ids reported (seen recently) */
    uint32_t nlist, caplist;
    idtab rules;                /* sdn_rule by flow id */
    sdn_rule *wild;             /* wildcard rules */
    uint32_t nwild, capwild;
    uint32_t nrules;            /* live rules, exact and wildcard */
};

struct sdn {
    sim *s;
    topo *t;
    int64_t proc_ps, stats_ps;
    sdn_ctl_fn *fn;
    void *ctx;
    sdn_sw **sw;
    int nsw;
    int64_t busy_until;         /* the controller's queue of messages */
    sdn_env *live;              /* messages in flight, freed by sdn_destroy
                                   if the run ends first */
    sim_timer stats_timer;
    sdn_counts k;
};

/* A message in flight. */
struct sdn_env {
    sdn *c;
    struct sdn_env *prev, *next;        /* in flight (sdn.live) */
    sdn_msg m;
    sdn_flow_stat *flows;       /* owned copy */
    /* flow-mods */
    int sw;
    sdn_match match;
    uint32_t wnd;
    int64_t idle_ps, hard_ps;
    bool del;
};

static sdn_env *env_new(sdn *c)
{
    sdn_env *v = xcalloc(1, sizeof *v);
    v->c = c;
    v->next = c->live;
    if (c->live)
        c->live->prev = v;
    c->live = v;
    return v;
}

static void env_free(sdn_env *v)
{
    if (v->prev)
        v->prev->next = v->next;
    else
        v->c->live = v->next;
    if (v->next)
        v->next->prev = v->prev;
    free(v->flows);
    free(v);
}

/* ---- flow table and rules ---------------------------------------------- */

static sdn_flow_stat *flow_entry(sdn_sw *w, uint32_t flow)
{
    sdn_fent *e = idtab_get(&w->flows, flow);
    if (!e) {
        e = idtab_set(&w->flows, flow);
        e->st.flow = flow;
        e->st.first_ps = sim_now(w->c->s);
    }
    if (!e->listed) {           /* a new entry, or one that went quiet */
        if (w->nlist == w->caplist) {
            w->caplist = w->caplist ? 2 * w->caplist : 64;
            w->list = xrealloc(w->list, w->caplist * sizeof *w->list);
        }
        w->list[w->nlist++] = flow;
        e->listed = true;
    }
    return &e->st;
}

static bool rule_expired(const sdn_rule *r, int64_t now)
{
    return now >= r->hard_at || (r->idle_ps > 0 && now - r->last_ps >= r->idle_ps);
}

static void rule_kill(sdn_sw *w, sdn_rule *r, bool timeout)
{
    r->live = false;
    w->nrules--;
    if (timeout)
        w->c->k.expired++;
}

/* The rule applying to an ACK of `flow` leaving port `pi`, timeouts
 * checked; NULL: none.  The exact rule wins over wildcards; among
 * wildcards, the lowest window. */
static sdn_rule *rule_lookup(sdn_sw *w, uint32_t flow, uint32_t pi, int64_t now)
{
    sdn_rule *r = idtab_get(&w->rules, flow);
    if (r && r->live) {
        if (rule_expired(r, now))
            rule_kill(w, r, true);
        else if (r->port == SDN_ANY || r->port == pi)
            return r;
    }
    sdn_rule *best = NULL;
    for (uint32_t i = 0; i < w->nwild; i++) {
        sdn_rule *x = &w->wild[i];
        if (!x->live)
            continue;
        if (rule_expired(x, now)) {
            rule_kill(w, x, true);
            continue;
        }
        if ((x->port == SDN_ANY || x->port == pi) && (!best || x->wnd < best->wnd))
            best = x;
    }
    return best;
}

static uint32_t port_index(const sdn_sw *w, const port *q)
{
    for (uint32_t i = 0; i < w->nports; i++)
        if (w->ports[i] == q)
            return i;
    return SDN_ANY;
}

/* The switch's data path: data updates its flow entry (and learns whether
 * the port dropped it); an ACK may have its window lowered. */
static int sw_hook(hook *h, port *q, pkt *p)
{
    sdn_sw *w = h->ctx;
    int64_t now = sim_now(w->c->s);
    if (p->kind == PKT_ACK) {
        if (w->nrules == 0)
            return HOOK_PASS;
        sdn_rule *r = rule_lookup(w, p->flow_id, port_index(w, q), now);
        if (r) {
            r->last_ps = now;
            if (p->h.tcp.wnd_bytes > r->wnd) {
                p->h.tcp.wnd_bytes = r->wnd;
                w->c->k.rewrites++;
            }
        }
        return HOOK_PASS;
    }
    sdn_flow_stat *e = flow_entry(w, p->flow_id);
    e->port = port_index(w, q);
    e->prio = p->prio;
    e->pkts++;
    e->bytes += p->size_bytes;
    e->total_pkts++;
    e->total_bytes += p->size_bytes;
    e->last_ps = now;
    uint64_t d0 = q->stat_drop_pkts;
    hook_resume(q, h, p);
    if (q->stat_drop_pkts != d0)
        e->drops++;
    return HOOK_TAKEN;
}

/* ---- messages ------------------------------------------------------------ */

static void ctl_handle(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    sdn_env *v = obj;
    v->c->fn(v->c->ctx, v->c, &v->m);
    env_free(v);
}

/* A message reaches the controller after the channel latency, then waits
 * for the controller and takes proc_ps. */
static void ctl_arrive(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    sdn_env *v = obj;
    sdn *c = v->c;
    int64_t now = sim_now(s);
    int64_t done = (c->busy_until > now ? c->busy_until : now) + c->proc_ps;
    c->busy_until = done;
    sim_schedule(s, done, ctl_handle, v, 0);
}

/* Copies the entries of w's report list that pass `keep` (port pi, or any
 * when pi is SDN_ANY) into v. */
static void attach_flows(sdn_sw *w, sdn_env *v, uint32_t pi, int64_t since)
{
    v->flows = xcalloc(w->nlist + 1, sizeof *v->flows);
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->nlist; i++) {
        const sdn_flow_stat *e = &((sdn_fent *)idtab_get(&w->flows, w->list[i]))->st;
        if (e->last_ps >= since && (pi == SDN_ANY || e->port == pi))
            v->flows[n++] = *e;
    }
    v->m.flows = v->flows;
    v->m.nflows = n;
}

static void sw_send(sdn_sw *w, int kind, uint32_t pi, int level)
{
    sdn *c = w->c;
    int64_t now = sim_now(c->s);
    sdn_env *v = env_new(c);
    v->m.kind = kind;
    v->m.sw = w->idx;
    v->m.port = pi;
    v->m.level = level;
    v->m.sent_ps = now;
    if (pi != SDN_ANY) {
        port *q = w->ports[pi];
        v->m.queue_bytes = q->bytes;
        v->m.rate_bps = q->cfg.rate_bps;
        v->m.buffer_bytes = q->cfg.buffer_bytes;
    }
    int64_t window = c->stats_ps > 0 ? c->stats_ps : SDN_QUIET_PS;
    if (kind == SDN_CONGESTION)
        attach_flows(w, v, pi, now - window);
    else if (kind == SDN_FLOW_STATS)
        attach_flows(w, v, SDN_ANY, now - c->stats_ps);
    if (kind == SDN_CONGESTION)
        c->k.cn++;
    else if (kind == SDN_CLEARED)
        c->k.cr++;
    else
        c->k.stats++;
    sim_schedule(c->s, now + w->lat_ps, ctl_arrive, v, 0);
}

/* The highest level whose mark the queue is above now, or -1. */
static int level_now(const sdn_wp *x)
{
    int lv = -1;
    for (int i = 0; i < x->nlev; i++)
        if (x->wm[i].above)
            lv = i;
    return lv;
}

/* Sends a notification of level lv and arms the repeat. */
static void notify(sdn_wp *x, int lv)
{
    sdn *c = x->sw->c;
    x->last_cn = sim_now(c->s);
    x->notified = true;
    sw_send(x->sw, SDN_CONGESTION, x->idx, lv);
    if (x->renotify_ps > 0)
        sim_timer_arm(c->s, &x->renew, x->last_cn + x->renotify_ps);
}

/* The queue has stayed above a level since the last notification: tell
 * the controller again (the flows and their classes may have changed). */
static void renew(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    sdn_wp *x = obj;
    int lv = level_now(x);
    if (lv >= 0 && x->notified && x->pending_level < 0) {
        x->sw->c->k.cn_repeat++;
        notify(x, lv);
    }
}

static void gap_end(sim *s, void *obj, uint64_t arg)
{
    (void)s;
    (void)arg;
    sdn_wp *x = obj;
    int lv = level_now(x);
    int pend = x->pending_level;
    x->pending_level = -1;
    if (pend >= 0 && lv >= 0)
        notify(x, lv);
}

/* Watermark crossings (inside the port's enqueue/dequeue: only events
 * are scheduled from here). */
static void on_wm(void *ctx, port *q, hook_wm *wm, bool above)
{
    (void)q;
    sdn_wp *x = ctx;
    sdn *c = x->sw->c;
    int lv = (int)(wm - x->wm);
    int64_t now = sim_now(c->s);
    if (above) {
        if (x->last_cn != INT64_MIN && now - x->last_cn < x->gap_ps) {
            if (x->pending_level < 0)
                sim_timer_arm(c->s, &x->gap_timer, x->last_cn + x->gap_ps);
            x->pending_level = lv;
            c->k.cn_suppressed++;
            return;
        }
        notify(x, lv);
    } else if (lv == 0 && x->notified) {
        x->notified = false;
        x->pending_level = -1;
        sim_timer_disarm(c->s, &x->gap_timer);
        sim_timer_disarm(c->s, &x->renew);
        sw_send(x->sw, SDN_CLEARED, x->idx, 0);
    }
}

/* Every stats period: each switch reports the flows seen in it, then
 * forgets the quiet ones' interval counters. */
static void on_stats(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    sdn *c = obj;
    int64_t now = sim_now(s);
    for (int i = 0; i < c->nsw; i++) {
        sdn_sw *w = c->sw[i];
        if (w->nlist)
            sw_send(w, SDN_FLOW_STATS, SDN_ANY, 0);
        uint32_t n = 0;
        for (uint32_t j = 0; j < w->nlist; j++) {
            sdn_fent *e = idtab_get(&w->flows, w->list[j]);
            e->st.pkts = e->st.bytes = 0;
            if (now - e->st.last_ps < 10 * c->stats_ps)
                w->list[n++] = w->list[j];
            else
                e->listed = false;
        }
        w->nlist = n;
        /* rules: drop the timed-out ones from the count */
        for (uint32_t j = 0; j < w->nwild; j++)
            if (w->wild[j].live && rule_expired(&w->wild[j], now))
                rule_kill(w, &w->wild[j], true);
    }
    sim_timer_arm(s, &c->stats_timer, now + c->stats_ps);
}

static void sw_apply(sim *s, void *obj, uint64_t arg)
{
    (void)arg;
    sdn_env *v = obj;
    sdn_sw *w = v->c->sw[v->sw];
    int64_t now = sim_now(s);
    if (v->match.flow != SDN_ANY) {
        sdn_rule *r = idtab_get(&w->rules, v->match.flow);
        if (!r)
            r = idtab_set(&w->rules, v->match.flow);
        if (r->live && (v->del || r->port == v->match.port))
            rule_kill(w, r, false);
        if (!v->del && !r->live) {
            *r = (sdn_rule){.flow = v->match.flow, .port = v->match.port, .wnd = v->wnd,
                            .live = true, .idle_ps = v->idle_ps, .last_ps = now,
                            .hard_at = v->hard_ps > 0 ? now + v->hard_ps : INT64_MAX};
            w->nrules++;
        }
    } else {
        for (uint32_t i = 0; i < w->nwild; i++)
            if (w->wild[i].live && w->wild[i].port == v->match.port)
                rule_kill(w, &w->wild[i], false);
        if (!v->del) {
            uint32_t i = 0;
            while (i < w->nwild && w->wild[i].live)
                i++;
            if (i == w->nwild) {
                if (w->nwild == w->capwild) {
                    w->capwild = w->capwild ? 2 * w->capwild : 4;
                    w->wild = xrealloc(w->wild, w->capwild * sizeof *w->wild);
                }
                w->nwild++;
            }
            w->wild[i] = (sdn_rule){.flow = SDN_ANY, .port = v->match.port, .wnd = v->wnd,
                                    .live = true, .idle_ps = v->idle_ps, .last_ps = now,
                                    .hard_at = v->hard_ps > 0 ? now + v->hard_ps : INT64_MAX};
            w->nrules++;
        }
    }
    env_free(v);
}

static void ctl_send(sdn *c, int sw, sdn_match m, uint32_t wnd, int64_t idle_ps,
                     int64_t hard_ps, bool del)
{
    assert(sw >= 0 && sw < c->nsw);
    sdn_env *v = env_new(c);
    v->sw = sw;
    v->match = m;
    v->wnd = wnd;
    v->idle_ps = idle_ps;
    v->hard_ps = hard_ps;
    v->del = del;
    if (del)
        c->k.dels++;
    else
        c->k.mods++;
    sim_schedule(c->s, sim_now(c->s) + c->sw[sw]->lat_ps, sw_apply, v, 0);
}

void sdn_flow_mod(sdn *c, int sw, sdn_match m, uint32_t wnd_bytes, int64_t idle_ps,
                  int64_t hard_ps)
{
    ctl_send(c, sw, m, wnd_bytes, idle_ps, hard_ps, false);
}

void sdn_flow_delete(sdn *c, int sw, sdn_match m)
{
    ctl_send(c, sw, m, 0, 0, 0, true);
}

/* ---- building ------------------------------------------------------------ */

sdn *sdn_create(sim *s, topo *t, int64_t proc_ps, int64_t stats_ps, sdn_ctl_fn *fn,
                void *ctx)
{
    sdn *c = xcalloc(1, sizeof *c);
    c->s = s;
    c->t = t;
    c->proc_ps = proc_ps;
    c->stats_ps = stats_ps;
    c->fn = fn;
    c->ctx = ctx;
    sim_timer_init(&c->stats_timer, on_stats, c, 0);
    return c;
}

static void collect_port(port *q, hook *h)
{
    sdn_sw *w = h->ctx;
    w->ports = xrealloc(w->ports, (w->nports + 1) * sizeof *w->ports);
    w->ports[w->nports++] = q;
}

int sdn_add_switch(sdn *c, int node, int64_t latency_ps)
{
    sdn_sw *w = xcalloc(1, sizeof *w);
    w->c = c;
    w->idx = c->nsw;
    w->node = node;
    w->lat_ps = latency_ps;
    hook_init(&w->h, sw_hook, w, "sdn");
    /* the ports in hook_attach_node's order */
    for (size_t i = 0; i < topo_node_degree(c->t, node); i++)
        collect_port(topo_node_port(c->t, node, i), &w->h);
    hook_attach_node(c->t, node, &w->h);
    w->watch = xcalloc(w->nports + 1, sizeof *w->watch);
    idtab_init(&w->flows, sizeof(sdn_fent));
    idtab_init(&w->rules, sizeof(sdn_rule));
    c->sw = xrealloc(c->sw, (size_t)(c->nsw + 1) * sizeof *c->sw);
    c->sw[c->nsw++] = w;
    return w->idx;
}

void sdn_watch(sdn *c, int sw, uint32_t i, const int64_t (*levels)[2], int nlevels,
               int64_t cn_gap_ps, int64_t renotify_ps)
{
    sdn_sw *w = c->sw[sw];
    assert(i < w->nports && nlevels > 0 && nlevels <= SDN_MAX_LEVELS && !w->watch[i]);
    sdn_wp *x = xcalloc(1, sizeof *x);
    x->sw = w;
    x->idx = i;
    x->nlev = nlevels;
    x->gap_ps = cn_gap_ps;
    x->last_cn = INT64_MIN;
    x->pending_level = -1;
    sim_timer_init(&x->gap_timer, gap_end, x, 0);
    x->renotify_ps = renotify_ps;
    sim_timer_init(&x->renew, renew, x, 0);
    for (int k = 0; k < nlevels; k++) {
        hook_wm_init(&x->wm[k], -1, levels[k][0], levels[k][1], on_wm, x);
        hook_wm_attach(w->ports[i], &x->wm[k]);
    }
    w->watch[i] = x;
}

void sdn_start(sdn *c)
{
    if (c->stats_ps > 0)
        sim_timer_arm(c->s, &c->stats_timer, sim_now(c->s) + c->stats_ps);
}

void sdn_destroy(sdn *c)
{
    if (!c)
        return;
    sim_timer_disarm(c->s, &c->stats_timer);
    for (int i = 0; i < c->nsw; i++) {
        sdn_sw *w = c->sw[i];
        hook_detach_node(c->t, w->node, &w->h);
        hook_fini(&w->h);
        for (uint32_t j = 0; j < w->nports; j++)
            if (w->watch[j]) {
                for (int k = 0; k < w->watch[j]->nlev; k++)
                    hook_wm_detach(w->ports[j], &w->watch[j]->wm[k]);
                sim_timer_disarm(c->s, &w->watch[j]->gap_timer);
                sim_timer_disarm(c->s, &w->watch[j]->renew);
                free(w->watch[j]);
            }
        free(w->watch);
        free(w->ports);
        free(w->list);
        free(w->wild);
        idtab_fini(&w->flows);
        idtab_fini(&w->rules);
        free(w);
    }
    free(c->sw);
    while (c->live)
        env_free(c->live);
    free(c);
}

/* ---- queries ------------------------------------------------------------- */

uint32_t sdn_switch_ports(const sdn *c, int sw) { return c->sw[sw]->nports; }
port *sdn_port(const sdn *c, int sw, uint32_t i) { return c->sw[sw]->ports[i]; }

uint32_t sdn_rules(const sdn *c, int sw)
{
    return c->sw[sw]->nrules;
}

bool sdn_rule_for(sdn *c, int sw, uint32_t flow, uint32_t pi, uint32_t *wnd)
{
    sdn_rule *r = rule_lookup(c->sw[sw], flow, pi, sim_now(c->s));
    if (r)
        *wnd = r->wnd;
    return r != NULL;
}

const sdn_flow_stat *sdn_flow_entry(const sdn *c, int sw, uint32_t flow)
{
    const sdn_fent *e = idtab_get(&c->sw[sw]->flows, flow);
    return e ? &e->st : NULL;
}

void sdn_get_counts(const sdn *c, sdn_counts *k) { *k = c->k; }

uint64_t sdn_messages(const sdn *c)
{
    return c->k.cn + c->k.cr + c->k.stats + c->k.mods + c->k.dels;
}
