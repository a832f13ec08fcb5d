/*
 * fault.c - hooks by name on links, ports and nodes (net.faults,
 * net.hooks), the fault family of kinds (loss, delay, black hole,
 * per-class corruption, link flapping), and their ground truth (see
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
 * The set reads hooks of any registered kind (hook.h: hook_kind; the five
 * fault kinds are defined here, once).  Scenario keys are bound by one
 * table per entry, the common keys (kind, target, at, until) then the
 * kind's own, into one block (the kind's part after the common one), so a
 * key that does not belong to the kind is an unknown key with the usual
 * hint.
 */
#include "aisim/fault.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/hook.h"
#include "aisim/rng.h"
#include "aisim/units.h"

/* The keys every hook of the list has, bound before its kind's. */
typedef struct hook_common {
    const char *kind;
    cfg_node *link;             /* [a, b], or NULL */
    const char *port;           /* "a->b", or NULL */
    const char *node;           /* a node's name, or NULL */
    int64_t at, until;          /* ps; until 0: none */
} hook_common;

#define COMMON_SIZE ((sizeof(hook_common) + 15) & ~(size_t)15)

static const cfg_key common_keys[] = {
    {.name = "kind", .type = CFG_STR, .off = offsetof(hook_common, kind),
     .help = "the hook's kind (net_registry.hooks)"},
    {.name = "link", .type = CFG_NODE, .off = offsetof(hook_common, link),
     .flags = CFG_OPTIONAL, .help = "both directions of the link between two nodes: [a, b]"},
    {.name = "port", .type = CFG_STR, .off = offsetof(hook_common, port),
     .flags = CFG_OPTIONAL, .help = "one direction of a link: \"a->b\""},
    {.name = "node", .type = CFG_STR, .off = offsetof(hook_common, node),
     .flags = CFG_OPTIONAL, .help = "every egress port of a switch, or a host's NIC"},
    {.name = "at", .type = CFG_TIME, .off = offsetof(hook_common, at), .def = "0s",
     .flags = CFG_MIN, .min = 0, .help = "when the hook starts"},
    {.name = "until", .type = CFG_TIME, .off = offsetof(hook_common, until),
     .flags = CFG_OPTIONAL | CFG_MIN_EXCL, .min = 0,
     .help = "when it ends (optional: the end of the run)"},
};
#define NCOMMON (sizeof common_keys / sizeof common_keys[0])

/* ---- the fault family: loss, delay, blackhole, flap, corrupt -------------- */

typedef struct fault_params {
    double rate;                /* loss, corrupt, delay: probability */
    int64_t delay;              /* delay: ps added */
    int64_t period;             /* flap: ps */
    double duty;                /* flap: fraction of each period down */
    int64_t convergence;        /* flap: routing delay, ps */
    int64_t prio;               /* corrupt: the class */
} fault_params;

#define K_RATE(def_, help_)                                                                 \
    {.name = "rate", .type = CFG_FLOAT, .off = offsetof(fault_params, rate), .def = def_,   \
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1, .help = help_}

static int fn_loss(hook *h, port *q, pkt *p);
static int fn_delay(hook *h, port *q, pkt *p);
static int fn_blackhole(hook *h, port *q, pkt *p);
static int fn_corrupt(hook *h, port *q, pkt *p);

static const cfg_key loss_keys[] = {
    K_RATE(NULL, "probability that a packet is dropped"),
    {0},
};
static const cfg_key delay_keys[] = {
    {.name = "delay", .type = CFG_TIME, .off = offsetof(fault_params, delay),
     .flags = CFG_MIN_EXCL, .min = 0, .help = "time added before the port's queue"},
    K_RATE("1", "fraction of the packets delayed"),
    {0},
};
static const cfg_key no_keys[] = {{0}};
static const cfg_key flap_keys[] = {
    {.name = "period", .type = CFG_TIME, .off = offsetof(fault_params, period),
     .flags = CFG_MIN_EXCL, .min = 0, .help = "one down-up cycle"},
    {.name = "duty", .type = CFG_FLOAT, .off = offsetof(fault_params, duty),
     .flags = CFG_MIN_EXCL | CFG_MAX_EXCL, .min = 0, .max = 1,
     .help = "fraction of each period the link is down"},
    {.name = "convergence", .type = CFG_TIME, .off = offsetof(fault_params, convergence),
     .def = "100us", .flags = CFG_MIN, .min = 0,
     .help = "delay before routing avoids (or uses again) the link"},
    {0},
};
static const cfg_key corrupt_keys[] = {
    {.name = "prio", .type = CFG_INT, .off = offsetof(fault_params, prio),
     .flags = CFG_MIN | CFG_MAX, .min = 0, .max = PORT_MAX_PRIO - 1,
     .help = "the priority class whose packets are dropped"},
    K_RATE(NULL, "probability that a packet of the class is dropped"),
    {0},
};

const hook_kind fault_loss = {.name = "loss", .summary = "drops each packet with probability rate",
                             .keys = loss_keys, .cfg_size = sizeof(fault_params), .fn = fn_loss};
const hook_kind fault_delay = {.name = "delay",
                              .summary = "holds a fraction rate of the packets for delay",
                              .keys = delay_keys, .cfg_size = sizeof(fault_params),
                              .fn = fn_delay};
const hook_kind fault_blackhole = {.name = "blackhole", .summary = "drops every packet",
                                  .keys = no_keys, .cfg_size = sizeof(fault_params),
                                  .fn = fn_blackhole};
const hook_kind fault_flap = {.name = "flap",
                             .summary = "takes a link down for duty x period every period",
                             .keys = flap_keys, .cfg_size = sizeof(fault_params)};
const hook_kind fault_corrupt = {.name = "corrupt",
                                .summary = "drops packets of class prio with probability rate",
                                .keys = corrupt_keys, .cfg_size = sizeof(fault_params),
                                .fn = fn_corrupt};

static bool is_fault(const hook_kind *k)
{
    return k == &fault_loss || k == &fault_delay || k == &fault_blackhole || k == &fault_flap ||
           k == &fault_corrupt;
}

enum { EV_START, EV_END, EV_DOWN, EV_UP };
static const char *const ev_names[] = {"start", "end", "down", "up"};

typedef struct fault {
    hook_inst in;               /* kind, its keys (in.cfg), stream, hook */
    fault_set *fs;
    size_t index;               /* in the list */
    hook_common w;              /* target and window (no pointer into the tree kept) */
    void *blob;                 /* the bound keys: common, then the kind's (in.cfg) */
    const char *target_type;    /* "link", "port" or "node" */
    char *target;               /* "a<->b", "a->b" or the node's name */
    int link;                   /* link id, or -1 */
    int node;                   /* node id, or -1 */
    port *ports[2];             /* link or port targets */
    int nports;
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
    uint64_t seed;
    const hook_kind *const *kinds;  /* the registry's */
    const char **names;         /* their names, an enum's choices */
    fault *f;
    size_t n, cap;
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
    if (f->in.kind == &fault_flap && strcmp(given, "link") != 0)
        return cfg_err(e, AISIM_EINVAL, cfg_get(n, given), sub,
                       "a flap takes a link (link: [a, b]), found a %s", given);
    if (f->in.kind->node_only && strcmp(given, "node") != 0)
        return cfg_err(e, AISIM_EINVAL, cfg_get(n, given), sub,
                       "a %s hook takes a node (node: name), found a %s", f->in.kind->name,
                       given);
    if (f->w.link) {
        const cfg_node *ln = f->w.link;
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
    } else if (f->w.port) {
        const cfg_node *pn = cfg_get(n, "port");
        const char *arrow = strstr(f->w.port, "->");
        if (!arrow || arrow == f->w.port || !arrow[2])
            return cfg_err(e, AISIM_EINVAL, pn, sub,
                           "expected a port name such as \"leaf0->spine0\", found %s",
                           cfg_describe(pn, found, sizeof found));
        char *a = xstrdup(f->w.port);
        a[arrow - f->w.port] = '\0';
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
        if ((r = node_named(t, f->w.node, cfg_get(n, "node"), sub, e)) < 0)
            return r;
        f->node = r;
        f->target_type = "node";
        f->target = xstrdup(topo_node_name(t, r));
    }
    return 0;
}

/* Binds hook i from map n. */
static int conf_one(fault_set *fs, size_t i, cfg_node *n, const char *path, err *e)
{
    char sub[600], found[96];
    fault *f = &fs->f[i];
    f->fs = fs;
    f->index = i;
    if (cfg_kind(n) != CFG_MAP)
        return cfg_err(e, AISIM_EINVAL, n, path, "expected a map (a fault), found %s",
                       cfg_describe(n, found, sizeof found));
    const cfg_node *kn = cfg_get(n, "kind");
    cfg_path(sub, sizeof sub, path, "kind");
    if (!kn) {
        char msg[512] = "missing required key (expected one of: ";
        for (size_t k = 0; fs->names[k]; k++)
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s%s", k ? ", " : "",
                     fs->names[k]);
        return cfg_err(e, AISIM_EINVAL, n, sub, "%s)", msg);
    }
    const cfg_key kind_key = {.name = "kind", .type = CFG_ENUM, .choices = fs->names};
    int r, k;
    if ((r = cfg_value(kn, sub, &kind_key, &k, e)))
        return r;
    const hook_kind *kd = fs->kinds[k];
    f->in.kind = kd;
    /* The common keys, then the kind's, bound into one block. */
    size_t nk = 0;
    while (kd->keys[nk].name)
        nk++;
    cfg_key *keys = xcalloc(NCOMMON + nk + 1, sizeof *keys);
    memcpy(keys, common_keys, sizeof common_keys);
    for (size_t j = 0; j < nk; j++) {
        keys[NCOMMON + j] = kd->keys[j];
        keys[NCOMMON + j].off += COMMON_SIZE;
    }
    f->blob = xcalloc(1, COMMON_SIZE + kd->cfg_size);
    r = cfg_bind(n, path, keys, f->blob, e);
    free(keys);
    if (r)
        return r;
    memcpy(&f->w, f->blob, sizeof f->w);
    f->in.cfg = (char *)f->blob + COMMON_SIZE;
    f->in.t = fs->t;
    if ((r = conf_target(f, fs->t, n, path, e)))
        return r;
    f->in.node = f->node;
    f->w.kind = NULL;           /* the tree dies after configuration */
    f->w.link = NULL;
    f->w.port = f->w.node = NULL;
    if (f->w.until && f->w.until <= f->w.at) {
        char tb[32];
        return cfg_err(e, AISIM_ERANGE, cfg_get(n, "until"),
                       cfg_path(sub, sizeof sub, path, "until"), "expected a time after at (%s), found %s",
                       units_format(UNIT_TIME, f->w.at, tb, sizeof tb),
                       cfg_describe(cfg_get(n, "until"), found, sizeof found));
    }
    if (kd == &fault_flap) {
        const fault_params *c = f->in.cfg;
        f->down_len = llround(c->duty * (double)c->period);
        if (f->down_len <= 0 || f->down_len >= c->period)
            return cfg_err(e, AISIM_ERANGE, cfg_get(n, "duty"),
                           cfg_path(sub, sizeof sub, path, "duty"),
                           "duty x period must leave the link down and up for at least 1ps "
                           "each, found %s", cfg_describe(cfg_get(n, "duty"), found,
                                                          sizeof found));
    }
    if (kd->check && (r = kd->check(&f->in, n, path, e)))
        return r;
    rng_init(&f->in.r, fs->seed, "net.fault", i);
    hook_init(&f->in.h, kd->fn, &f->in, f->target);
    return 0;
}

fault_set *fault_create(topo *t, sim *s, const hook_kind *const *kinds, uint64_t seed)
{
    fault_set *fs = xcalloc(1, sizeof *fs);
    fs->t = t;
    fs->s = s;
    fs->seed = seed;
    fs->kinds = kinds;
    size_t nk = 0;
    while (kinds && kinds[nk])
        nk++;
    fs->names = xcalloc(nk + 1, sizeof *fs->names);
    for (size_t i = 0; i < nk; i++)
        fs->names[i] = kinds[i]->name;
    return fs;
}

int fault_add(fault_set *fs, cfg_node *list, const char *path, const char *what, err *e)
{
    long len = 0;
    if (list && !cfg_is_null(list) && (len = cfg_expect_list(list, path, what, e)) < 0)
        return (int)len;
    size_t first = fs->n;
    if (fs->n + (size_t)len + 1 > fs->cap) {
        fs->cap = fs->n + (size_t)len + 1;
        fs->f = xrealloc(fs->f, fs->cap * sizeof *fs->f);
        for (size_t i = 0; i < first; i++)     /* moved: their hooks' owner too */
            fs->f[i].in.h.ctx = &fs->f[i].in;
    }
    memset(fs->f + first, 0, ((size_t)len + 1) * sizeof *fs->f);
    for (size_t i = 0; i < (size_t)len; i++) {
        char sub[520];
        fs->n = first + i + 1;  /* fault_destroy frees what this one got too */
        int r = conf_one(fs, first + i, cfg_at(list, i),
                         cfg_path_index(sub, sizeof sub, path, i), e);
        if (r)
            return r;
    }
    return 0;
}

int fault_conf(fault_set **fsp, topo *t, sim *s, const hook_kind *const *kinds, cfg_node *list,
               const char *path, uint64_t seed, err *e)
{
    *fsp = NULL;
    fault_set *fs = fault_create(t, s, kinds, seed);
    int r = fault_add(fs, list, path, "faults", e);
    if (r) {
        fault_destroy(fs);
        return r;
    }
    *fsp = fs;
    return 0;
}

/* ---- running -------------------------------------------------------------- */

static int fn_loss(hook *h, port *q, pkt *p)
{
    hook_inst *in = h->ctx;
    const fault_params *c = in->cfg;
    in->seen_pkts++;
    if (rng_u01(&in->r) >= c->rate)
        return HOOK_PASS;
    hook_drop(h, q, p);
    return HOOK_TAKEN;
}

static int fn_corrupt(hook *h, port *q, pkt *p)
{
    const fault_params *c = ((hook_inst *)h->ctx)->cfg;
    return p->prio != c->prio ? HOOK_PASS : fn_loss(h, q, p);
}

static int fn_blackhole(hook *h, port *q, pkt *p)
{
    ((hook_inst *)h->ctx)->seen_pkts++;
    hook_drop(h, q, p);
    return HOOK_TAKEN;
}

static int fn_delay(hook *h, port *q, pkt *p)
{
    hook_inst *in = h->ctx;
    const fault_params *c = in->cfg;
    in->seen_pkts++;
    if (c->rate < 1 && rng_u01(&in->r) >= c->rate)
        return HOOK_PASS;
    hook_delay(h, q, p, c->delay);
    return HOOK_TAKEN;
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
            hook_attach_node(t, f->node, &f->in.h);
        else
            hook_detach_node(t, f->node, &f->in.h);
        return;
    }
    for (int i = 0; i < f->nports; i++) {
        if (on)
            hook_attach(f->ports[i], &f->in.h);
        else
            hook_detach(f->ports[i], &f->in.h);
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
    topo_link_set_up(f->fs->t, f->link, !down,
                      ((const fault_params *)f->in.cfg)->convergence);
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
        if (f->in.kind != &fault_flap) {
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
        if (!f->w.until || now + f->down_len < f->w.until)
            sim_schedule(s, now + f->down_len, on_event, f, EV_UP);
        break;
    case EV_UP: {
        if (!f->active)
            break;
        flap_set(f, false);
        int64_t period = ((const fault_params *)f->in.cfg)->period;
        if (!f->w.until || f->cycle_start + period < f->w.until)
            sim_schedule(s, f->cycle_start + period, on_event, f, EV_DOWN);
        break;
    }
    case EV_END:
        if (!f->active)
            break;
        if (f->in.kind == &fault_flap) {
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
        if (f->w.until && f->w.until <= now)
            continue;
        if (f->w.at <= now)
            on_event(fs->s, f, EV_START);
        else
            sim_schedule(fs->s, f->w.at, on_event, f, EV_START);
        if (f->w.until)
            sim_schedule(fs->s, f->w.until, on_event, f, EV_END);
    }
}

bool fault_changes_routing(const fault_set *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i].in.kind == &fault_flap)
            return true;
    return false;
}

int64_t fault_hold_ps(const fault_set *fs)
{
    int64_t worst = 0;
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i].in.kind == &fault_delay &&
            ((const fault_params *)fs->f[i].in.cfg)->delay > worst)
            worst = ((const fault_params *)fs->f[i].in.cfg)->delay;
    return worst;
}

size_t fault_count(const fault_set *fs) { return fs->n; }

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
    if (f->in.kind == &fault_flap) {
        /* A flap adds up its losses and time at each repair: add the
         * current down spell's so far. */
        if (f->down) {
            st->drop_pkts += link_losses(f) - f->lost_mark;
            st->down_ps += sim_now(fs->s) - f->down_since;
        }
        return;
    }
    st->seen_pkts = f->in.seen_pkts;
    st->drop_pkts = f->in.h.stat_drop_pkts;
    st->drop_bytes = f->in.h.stat_drop_bytes;
    st->delay_pkts = f->in.h.stat_delay_pkts;
    st->redirect_pkts = f->in.h.stat_redirect_pkts;
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
    static const fault_params none;
    for (size_t i = 0; i < fs->n; i++) {
        const fault *x = &fs->f[i];
        const hook_kind *k = x->in.kind;
        const fault_params *c = is_fault(k) ? x->in.cfg : &none;
        fault_stats sts, *st = &sts;
        fault_stats_of(fs, i, st);
        bool flap = k == &fault_flap;
        fprintf(f, "%zu,%s,%s,%s,", i, k->name, x->target_type, x->target);
        csv_time(f, x->w.at, ",");
        csv_time(f, x->w.until ? x->w.until : -1, ",");
        csv_num(f, k == &fault_loss || k == &fault_corrupt || k == &fault_delay, c->rate, ",");
        csv_time(f, k == &fault_delay ? c->delay : -1, ",");
        csv_time(f, flap ? c->period : -1, ",");
        csv_num(f, flap, c->duty, ",");
        if (k == &fault_corrupt)
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
        fprintf(v, "%u,%s,%s,%s\n", (unsigned)ev->fault, x->in.kind->name, x->target,
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
        if (f->target && f->active && f->in.kind != &fault_flap)
            attach(f, false);
        hook_fini(&f->in.h);
        free(f->target);
        free(f->blob);
    }
    free(fs->f);
    free(fs->ev);
    free(fs->names);
    free(fs);
}
