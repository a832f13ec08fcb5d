/*
 * fault.c - injected faults (loss, delay, black hole, per-class corruption,
 * link flapping) on links, ports and nodes, and their ground truth (see
 * fault.h).
 *
 * Every kind but flap is one hook (hook.h) per fault, shared by the
 * fault's target ports: attached at `at`, detached at `until`, by engine
 * events, so the per-packet cost exists only while a fault is in force and
 * only at its ports.  The hook's verdict is a switch on the kind and one
 * draw from the fault's own stream; drops and delays go through
 * hook_drop()/hook_delay(), which keep the ports' counters, and so byte
 * conservation, right.
 *
 * A flap is a small state machine on engine events: down at the start of
 * each period, up duty x period later, until `until`; each change is
 * topo_link_set_up() with the fault's convergence delay, so routing reacts
 * to a flapping link as to any failure.  Its losses are what the link's
 * two ports (stat_fail_drops) and wires lost between each down and the
 * following up.
 *
 * Scenario keys are bound by one cfg_key table per kind (the common keys
 * and the kind's own), so a key that does not belong to the kind is an
 * unknown key with the usual hint.
 */
#include "aisim/fault.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/hook.h"
#include "aisim/rng.h"
#include "aisim/units.h"

static const char *const kind_names[] = {"loss", "delay", "blackhole", "flap", "corrupt", NULL};

typedef struct fault_cfg {
    int kind;                   /* enum fault_kind */
    cfg_node *link;             /* [a, b], or NULL */
    const char *port;           /* "a->b", or NULL */
    const char *node;           /* a node's name, or NULL */
    int64_t at, until;          /* ps; until 0: none */
    double rate;                /* loss, corrupt, delay: probability */
    int64_t delay;              /* delay: ps added */
    int64_t period;             /* flap: ps */
    double duty;                /* flap: fraction of each period down */
    int64_t convergence;        /* flap: routing delay, ps */
    int64_t prio;               /* corrupt: the class */
} fault_cfg;

#define K_KIND                                                                              \
    {.name = "kind", .type = CFG_ENUM, .off = offsetof(fault_cfg, kind), .choices = kind_names, \
     .help = "loss, delay, blackhole, flap or corrupt"}
#define K_TARGET                                                                            \
    {.name = "link", .type = CFG_NODE, .off = offsetof(fault_cfg, link),                    \
     .flags = CFG_OPTIONAL, .help = "both directions of the link between two nodes: [a, b]"}, \
    {.name = "port", .type = CFG_STR, .off = offsetof(fault_cfg, port),                     \
     .flags = CFG_OPTIONAL, .help = "one direction of a link: \"a->b\""},                   \
    {.name = "node", .type = CFG_STR, .off = offsetof(fault_cfg, node),                     \
     .flags = CFG_OPTIONAL, .help = "every egress port of a switch, or a host's NIC"}
#define K_WHEN                                                                              \
    {.name = "at", .type = CFG_TIME, .off = offsetof(fault_cfg, at), .def = "0s",           \
     .flags = CFG_MIN, .min = 0, .help = "when the fault starts"},                          \
    {.name = "until", .type = CFG_TIME, .off = offsetof(fault_cfg, until),                  \
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,                                        \
     .help = "when it ends (optional: the end of the run)"}
#define K_RATE(def_, help_)                                                                 \
    {.name = "rate", .type = CFG_FLOAT, .off = offsetof(fault_cfg, rate), .def = def_,      \
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = help_}

static const cfg_key loss_keys[] = {
    K_KIND, K_TARGET, K_WHEN,
    K_RATE(NULL, "probability that a packet is dropped"),
    {0},
};
static const cfg_key delay_keys[] = {
    K_KIND, K_TARGET, K_WHEN,
    {.name = "delay", .type = CFG_TIME, .off = offsetof(fault_cfg, delay),
     .flags = CFG_MIN_EXCL, .min = 0, .help = "time added before the port's queue"},
    K_RATE("1", "fraction of the packets delayed"),
    {0},
};
static const cfg_key blackhole_keys[] = {K_KIND, K_TARGET, K_WHEN, {0}};
static const cfg_key flap_keys[] = {
    K_KIND, K_TARGET, K_WHEN,
    {.name = "period", .type = CFG_TIME, .off = offsetof(fault_cfg, period),
     .flags = CFG_MIN_EXCL, .min = 0, .help = "one down-up cycle"},
    {.name = "duty", .type = CFG_FLOAT, .off = offsetof(fault_cfg, duty),
     .flags = CFG_MIN_EXCL | CFG_MAX_EXCL, .min = 0, .max = 1,
     .help = "fraction of each period the link is down"},
    {.name = "convergence", .type = CFG_TIME, .off = offsetof(fault_cfg, convergence),
     .def = "100us", .flags = CFG_MIN, .min = 0,
     .help = "delay before routing avoids (or uses again) the link"},
    {0},
};
static const cfg_key corrupt_keys[] = {
    K_KIND, K_TARGET, K_WHEN,
    {.name = "prio", .type = CFG_INT, .off = offsetof(fault_cfg, prio),
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = PORT_MAX_PRIO - 1,
     .help = "the priority class whose packets are dropped"},
    K_RATE(NULL, "probability that a packet of the class is dropped"),
    {0},
};
static const cfg_key *const kind_keys[] = {loss_keys, delay_keys, blackhole_keys, flap_keys,
                                           corrupt_keys};

enum { EV_START, EV_END, EV_DOWN, EV_UP };
static const char *const ev_names[] = {"start", "end", "down", "up"};

typedef struct fault {
    fault_set *fs;
    size_t index;               /* in the list */
    fault_cfg c;                /* parameters (no pointer into the tree kept) */
    const char *target_type;    /* "link", "port" or "node" */
    char *target;               /* "a<->b", "a->b" or the node's name */
    int link;                   /* link id, or -1 */
    int node;                   /* node id, or -1 */
    port *ports[2];             /* link or port targets */
    int nports;
    rng r;                      /* stream ("net.fault", index) */
    hook h;
    bool active;                /* in force now */
    bool down;                  /* flap: link down now */
    int64_t down_len;           /* flap: ps down per period */
    int64_t cycle_start;        /* flap: start of the current period */
    int64_t down_since;         /* flap: when it last went down */
    uint64_t lost_mark;         /* flap: link losses when it went down */
    fault_stats st;
} fault;

typedef struct fault_event {
    int64_t at;                 /* ps */
    uint32_t fault;             /* index */
    uint8_t what;               /* EV_* */
} fault_event;

struct fault_set {
    topo *t;
    sim *s;
    fault *f;
    size_t n;
    fault_event *ev;            /* ground truth, in time order */
    size_t nev, capev;
};

/* ---- configuration -------------------------------------------------------- */

static int node_named(topo *t, const char *name, const cfg_node *n, const char *path, err *e)
{
    int id = topo_find_node(t, name);
    if (id < 0)
        return cfg_err(e, AISIM_EINVAL, n, path, "unknown node \"%s\"", name);
    return id;
}

/* The link between a and b and the direction a->b, or an error at n. */
static int link_between(topo *t, int a, int b, int *dir, const cfg_node *n, const char *path,
                        err *e)
{
    int l = topo_find_link(t, a, b);
    if (l < 0)
        return cfg_err(e, AISIM_EINVAL, n, path, "no link between %s and %s",
                       topo_node_name(t, a), topo_node_name(t, b));
    int la, lb;
    topo_link_ends(t, l, &la, &lb);
    *dir = la == a ? 0 : 1;
    return l;
}

/* Resolves the target of f (exactly one of link, port, node in map n). */
static int conf_target(fault *f, topo *t, const cfg_node *n, const char *path, err *e)
{
    static const char *const keys[] = {"link", "port", "node"};
    char sub[600], found[96];
    const char *given = NULL;
    for (int k = 0; k < 3; k++) {
        if (!cfg_get(n, keys[k]) || cfg_is_null(cfg_get(n, keys[k])))
            continue;
        if (given)
            return cfg_err(e, AISIM_EINVAL, cfg_get(n, keys[k]),
                           cfg_path(sub, sizeof sub, path, keys[k]),
                           "expected one target (link, port or node), found %s and %s", given,
                           keys[k]);
        given = keys[k];
    }
    if (!given)
        return cfg_err(e, AISIM_EINVAL, n, path,
                       "missing target (expected one of link: [a, b], port: \"a->b\", node: "
                       "name)");
    cfg_path(sub, sizeof sub, path, given);
    f->link = f->node = -1;
    int r, dir;
    if (f->c.kind == FAULT_FLAP && strcmp(given, "link") != 0)
        return cfg_err(e, AISIM_EINVAL, cfg_get(n, given), sub,
                       "a flap takes a link (link: [a, b]), found a %s", given);
    if (f->c.link) {
        const cfg_node *ln = f->c.link;
        if (cfg_kind(ln) != CFG_SEQ || cfg_len(ln) != 2 || !cfg_scalar(cfg_at(ln, 0)) ||
            !cfg_scalar(cfg_at(ln, 1)))
            return cfg_err(e, AISIM_EINVAL, ln, sub,
                           "expected a list of two node names such as [leaf0, spine0], found %s",
                           cfg_describe(ln, found, sizeof found));
        int end[2];
        for (int i = 0; i < 2; i++) {
            char s2[640];
            if ((end[i] = node_named(t, cfg_scalar(cfg_at(ln, (size_t)i)), cfg_at(ln, (size_t)i),
                                     cfg_path_index(s2, sizeof s2, sub, (size_t)i), e)) < 0)
                return end[i];
        }
        if ((r = link_between(t, end[0], end[1], &dir, ln, sub, e)) < 0)
            return r;
        f->link = r;
        f->ports[0] = topo_link_port(t, r, 0);
        f->ports[1] = topo_link_port(t, r, 1);
        f->nports = 2;
        f->target_type = "link";
        size_t len = strlen(topo_node_name(t, end[0])) + strlen(topo_node_name(t, end[1])) + 4;
        f->target = xmalloc(len);
        snprintf(f->target, len, "%s<->%s", topo_node_name(t, end[0]), topo_node_name(t, end[1]));
    } else if (f->c.port) {
        const cfg_node *pn = cfg_get(n, "port");
        const char *arrow = strstr(f->c.port, "->");
        if (!arrow || arrow == f->c.port || !arrow[2])
            return cfg_err(e, AISIM_EINVAL, pn, sub,
                           "expected a port name such as \"leaf0->spine0\", found %s",
                           cfg_describe(pn, found, sizeof found));
        char *a = xstrdup(f->c.port);
        a[arrow - f->c.port] = '\0';
        int na = node_named(t, a, pn, sub, e);
        int nb = na < 0 ? na : node_named(t, arrow + 2, pn, sub, e);
        free(a);
        if (nb < 0)
            return nb;
        if ((r = link_between(t, na, nb, &dir, pn, sub, e)) < 0)
            return r;
        f->link = r;
        f->ports[0] = topo_link_port(t, r, dir);
        f->nports = 1;
        f->target_type = "port";
        f->target = xstrdup(f->ports[0]->base.name);
    } else {
        if ((r = node_named(t, f->c.node, cfg_get(n, "node"), sub, e)) < 0)
            return r;
        f->node = r;
        f->target_type = "node";
        f->target = xstrdup(topo_node_name(t, r));
    }
    return 0;
}

static int verdict(hook *h, port *q, pkt *p);

/* Binds fault i from map n. */
static int conf_one(fault_set *fs, size_t i, cfg_node *n, const char *path, uint64_t seed,
                    err *e)
{
    static const cfg_key kind_key = K_KIND;
    char sub[600], found[96];
    fault *f = &fs->f[i];
    f->fs = fs;
    f->index = i;
    if (cfg_kind(n) != CFG_MAP)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a map (a fault), found %s",
                       cfg_describe(n, found, sizeof found));
    const cfg_node *kn = cfg_get(n, "kind");
    cfg_path(sub, sizeof sub, path, "kind");
    if (!kn)
        return cfg_err(e, AISIM_EINVAL, n, sub,
                       "missing required key (expected one of: loss, delay, blackhole, flap, "
                       "corrupt)");
    int r;
    if ((r = cfg_value(kn, sub, &kind_key, &f->c.kind, e)))
        return r;
    if ((r = cfg_bind(n, path, kind_keys[f->c.kind], &f->c, e)))
        return r;
    if ((r = conf_target(f, fs->t, n, path, e)))
        return r;
    f->c.link = NULL;           /* the tree dies after configuration */
    f->c.port = f->c.node = NULL;
    if (f->c.until && f->c.until <= f->c.at) {
        char tb[32];
        return cfg_err(e, AISIM_ERANGE, cfg_get(n, "until"),
                       cfg_path(sub, sizeof sub, path, "until"), "expected a time after at (%s), found %s",
                       units_format(UNIT_TIME, f->c.at, tb, sizeof tb),
                       cfg_describe(cfg_get(n, "until"), found, sizeof found));
    }
    if (f->c.kind == FAULT_FLAP) {
        f->down_len = llround(f->c.duty * (double)f->c.period);
        if (f->down_len <= 0 || f->down_len >= f->c.period)
            return cfg_err(e, AISIM_ERANGE, cfg_get(n, "duty"),
                           cfg_path(sub, sizeof sub, path, "duty"),
                           "duty x period must leave the link down and up for at least 1ps "
                           "each, found %s", cfg_describe(cfg_get(n, "duty"), found,
                                                          sizeof found));
    }
    rng_init(&f->r, seed, "net.fault", i);
    hook_init(&f->h, verdict, f, f->target);
    return 0;
}

int fault_conf(fault_set **fsp, topo *t, sim *s, cfg_node *list, const char *path,
               uint64_t seed, err *e)
{
    *fsp = NULL;
    long len = 0;
    if (list && !cfg_is_null(list) && (len = cfg_expect_list(list, path, "faults", e)) < 0)
        return (int)len;
    fault_set *fs = xcalloc(1, sizeof *fs);
    fs->t = t;
    fs->s = s;
    fs->n = (size_t)len;
    fs->f = xcalloc(fs->n + 1, sizeof *fs->f);
    for (size_t i = 0; i < fs->n; i++) {
        char sub[520];
        int r = conf_one(fs, i, cfg_at(list, i), cfg_path_index(sub, sizeof sub, path, i), seed, e);
        if (r) {
            fs->n = i + 1;      /* free what this one got too */
            fault_destroy(fs);
            return r;
        }
    }
    *fsp = fs;
    return 0;
}

/* ---- running -------------------------------------------------------------- */

static int verdict(hook *h, port *q, pkt *p)
{
    fault *f = h->ctx;
    switch (f->c.kind) {
    case FAULT_CORRUPT:
        if (p->prio != f->c.prio)
            return HOOK_PASS;
        /* fall through */
    case FAULT_LOSS:
        f->st.seen_pkts++;
        if (rng_u01(&f->r) >= f->c.rate)
            return HOOK_PASS;
        hook_drop(h, q, p);
        return HOOK_TAKEN;
    case FAULT_BLACKHOLE:
        f->st.seen_pkts++;
        hook_drop(h, q, p);
        return HOOK_TAKEN;
    case FAULT_DELAY:
        f->st.seen_pkts++;
        if (f->c.rate < 1 && rng_u01(&f->r) >= f->c.rate)
            return HOOK_PASS;
        hook_delay(h, q, p, f->c.delay);
        return HOOK_TAKEN;
    default:
        return HOOK_PASS;
    }
}

static void record(fault *f, int what)
{
    fault_set *fs = f->fs;
    if (fs->nev == fs->capev) {
        fs->capev = fs->capev ? 2 * fs->capev : 16;
        fs->ev = xrealloc(fs->ev, fs->capev * sizeof *fs->ev);
    }
    fs->ev[fs->nev++] = (fault_event){sim_now(fs->s), (uint32_t)f->index, (uint8_t)what};
}

/* Packets the flap's link has lost to failures so far. */
static uint64_t link_losses(const fault *f)
{
    return f->ports[0]->stat_fail_drops + f->ports[1]->stat_fail_drops +
           topo_link_wire_losses(f->fs->t, f->link);
}

static void attach(fault *f, bool on)
{
    topo *t = f->fs->t;
    if (f->node >= 0) {
        if (on)
            hook_attach_node(t, f->node, &f->h);
        else
            hook_detach_node(t, f->node, &f->h);
        return;
    }
    for (int i = 0; i < f->nports; i++) {
        if (on)
            hook_attach(f->ports[i], &f->h);
        else
            hook_detach(f->ports[i], &f->h);
    }
}

static void flap_set(fault *f, bool down)
{
    int64_t now = sim_now(f->fs->s);
    if (down) {
        f->lost_mark = link_losses(f);
        f->down_since = now;
        f->st.down_events++;
    }
    topo_link_set_up(f->fs->t, f->link, !down, f->c.convergence);
    if (!down) {
        f->st.drop_pkts += link_losses(f) - f->lost_mark;
        f->st.down_ps += now - f->down_since;
    }
    f->down = down;
    record(f, down ? EV_DOWN : EV_UP);
}

static void on_event(sim *s, void *obj, uint64_t what)
{
    fault *f = obj;
    int64_t now = sim_now(s);
    switch (what) {
    case EV_START:
        f->active = true;
        record(f, EV_START);
        if (f->c.kind != FAULT_FLAP) {
            attach(f, true);
            break;
        }
        /* A flap starts with the link going down. */
        /* fall through */
    case EV_DOWN:
        if (!f->active)
            break;
        f->cycle_start = now;
        flap_set(f, true);
        if (!f->c.until || now + f->down_len < f->c.until)
            sim_schedule(s, now + f->down_len, on_event, f, EV_UP);
        break;
    case EV_UP:
        if (!f->active)
            break;
        flap_set(f, false);
        if (!f->c.until || f->cycle_start + f->c.period < f->c.until)
            sim_schedule(s, f->cycle_start + f->c.period, on_event, f, EV_DOWN);
        break;
    case EV_END:
        if (!f->active)
            break;
        if (f->c.kind == FAULT_FLAP) {
            if (f->down)
                flap_set(f, false);
        } else {
            attach(f, false);
        }
        f->active = false;
        record(f, EV_END);
        break;
    }
}

void fault_start(fault_set *fs)
{
    int64_t now = sim_now(fs->s);
    for (size_t i = 0; i < fs->n; i++) {
        fault *f = &fs->f[i];
        if (f->c.until && f->c.until <= now)
            continue;
        if (f->c.at <= now)
            on_event(fs->s, f, EV_START);
        else
            sim_schedule(fs->s, f->c.at, on_event, f, EV_START);
        if (f->c.until)
            sim_schedule(fs->s, f->c.until, on_event, f, EV_END);
    }
}

bool fault_changes_routing(const fault_set *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i].c.kind == FAULT_FLAP)
            return true;
    return false;
}

int64_t fault_hold_ps(const fault_set *fs)
{
    int64_t worst = 0;
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i].c.kind == FAULT_DELAY && fs->f[i].c.delay > worst)
            worst = fs->f[i].c.delay;
    return worst;
}

size_t fault_count(const fault_set *fs) { return fs->n; }

enum fault_kind fault_kind_of(const fault_set *fs, size_t i)
{
    assert(i < fs->n);
    return (enum fault_kind)fs->f[i].c.kind;
}

size_t fault_active(const fault_set *fs)
{
    size_t n = 0;
    for (size_t i = 0; i < fs->n; i++)
        n += fs->f[i].active;
    return n;
}

void fault_stats_of(const fault_set *fs, size_t i, fault_stats *st)
{
    assert(i < fs->n);
    const fault *f = &fs->f[i];
    *st = f->st;
    if (f->c.kind == FAULT_FLAP) {
        /* A flap adds up its losses and time at each repair: add the
         * current down spell's so far. */
        if (f->down) {
            st->drop_pkts += link_losses(f) - f->lost_mark;
            st->down_ps += sim_now(fs->s) - f->down_since;
        }
        return;
    }
    st->drop_pkts = f->h.stat_drop_pkts;
    st->drop_bytes = f->h.stat_drop_bytes;
    st->delay_pkts = f->h.stat_delay_pkts;
}

/* ---- ground truth --------------------------------------------------------- */

/* Writes a time in seconds, or nothing if absent (< 0), then sep
 * (ps_to_s divides: 100.6 us prints as 0.0001006). */
static void csv_time(FILE *o, int64_t ps, const char *sep)
{
    char b[40];
    if (ps >= 0) {
        out_fmt_double(b, sizeof b, ps_to_s(ps));
        fputs(b, o);
    }
    fputs(sep, o);
}

static void csv_num(FILE *o, bool given, double v, const char *sep)
{
    char b[40];
    if (given) {
        out_fmt_double(b, sizeof b, v);
        fputs(b, o);
    }
    fputs(sep, o);
}

int fault_write_truth(fault_set *fs, out *o, err *e)
{
    FILE *f = out_file(o, "faults.csv", e);
    if (!f)
        return e->code;
    fprintf(f, "fault,kind,target_type,target,at_s,until_s,rate,delay_s,period_s,duty,prio,"
               "seen_pkts,dropped_pkts,dropped_bytes,delayed_pkts,down_events,down_s\n");
    for (size_t i = 0; i < fs->n; i++) {
        const fault *x = &fs->f[i];
        const fault_cfg *c = &x->c;
        fault_stats sts, *st = &sts;
        fault_stats_of(fs, i, st);
        int k = c->kind;
        bool flap = k == FAULT_FLAP;
        fprintf(f, "%zu,%s,%s,%s,", i, kind_names[k], x->target_type, x->target);
        csv_time(f, c->at, ",");
        csv_time(f, c->until ? c->until : -1, ",");
        csv_num(f, k == FAULT_LOSS || k == FAULT_CORRUPT || k == FAULT_DELAY, c->rate, ",");
        csv_time(f, k == FAULT_DELAY ? c->delay : -1, ",");
        csv_time(f, flap ? c->period : -1, ",");
        csv_num(f, flap, c->duty, ",");
        if (k == FAULT_CORRUPT)
            fprintf(f, "%lld", (long long)c->prio);
        if (flap) {             /* a link's state, not a hook's counts */
            fprintf(f, ",,%llu,,,%llu,", (unsigned long long)st->drop_pkts,
                    (unsigned long long)st->down_events);
            csv_time(f, st->down_ps, "\n");
        } else {
            fprintf(f, ",%llu,%llu,%llu,%llu,,\n", (unsigned long long)st->seen_pkts,
                    (unsigned long long)st->drop_pkts, (unsigned long long)st->drop_bytes,
                    (unsigned long long)st->delay_pkts);
        }
    }
    FILE *v = out_file(o, "fault_events.csv", e);
    if (!v)
        return e->code;
    fprintf(v, "time_s,fault,kind,target,event\n");
    for (size_t i = 0; i < fs->nev; i++) {
        const fault_event *ev = &fs->ev[i];
        const fault *x = &fs->f[ev->fault];
        csv_time(v, ev->at, ",");
        fprintf(v, "%u,%s,%s,%s\n", (unsigned)ev->fault, kind_names[x->c.kind], x->target,
                ev_names[ev->what]);
    }
    return 0;
}

void fault_destroy(fault_set *fs)
{
    if (!fs)
        return;
    for (size_t i = 0; i < fs->n; i++) {
        fault *f = &fs->f[i];
        if (f->target && f->active && f->c.kind != FAULT_FLAP)
            attach(f, false);
        hook_fini(&f->h);
        free(f->target);
    }
    free(fs->f);
    free(fs->ev);
    free(fs);
}
