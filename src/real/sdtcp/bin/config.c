/* config.c - the testbed file of aisim-sdtcp-real (tb.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aisim/units.h"
#include "real/sdtcp/bin/tb.h"

const char *const tb_arm_names[] = {"sdtcp", "observe", "kernel", NULL};
const char *const tb_cc_names[] = {"reno", "cubic", NULL};
const char *const tb_qdisc_names[] = {"tbf", "htb", NULL};
static const char *const modes[] = {"minimal", "banded", "all", "fixed", NULL};
static const char *const rounds[] = {"down", "up", "nearest", NULL};

#define K(n, t, f, d) .name = n, .type = t, .off = offsetof(tb_cfg, f), .def = d

static const cfg_key bn_keys[] = {
    {K("qdisc", CFG_ENUM, qdisc, "tbf"), .choices = tb_qdisc_names,
     .help = "the bottleneck's qdisc on the router's port to the receiver: tbf (limit = "
     "buffer), or htb (one class at rate, bfifo child of limit buffer)"},
    {K("rate", CFG_RATE, rate, "100Mbps"), .flags = CFG_MIN, .min = 1e6, .help = "its rate"},
    {K("buffer", CFG_SIZE, buffer, "150KB"), .flags = CFG_MIN, .min = 3000,
     .help = "its buffer (tbf limit, htb's bfifo limit)"},
    {K("burst", CFG_SIZE, burst, "3000B"), .flags = CFG_MIN, .min = 1600,
     .help = "tbf's bucket, htb's burst"},
    {0},
};

static const cfg_key tr_keys[] = {
    {K("cc", CFG_ENUM, cc, "reno"), .choices = tb_cc_names, .help = "the senders' kernel TCP"},
    {K("init_cwnd", CFG_INT, init_cwnd, "10"), .flags = CFG_MIN | CFG_MAX, .min = 1,
     .max = 100, .help = "initial window, segments (route initcwnd)"},
    {K("min_rto", CFG_TIME, min_rto, "200ms"), .flags = CFG_MIN | CFG_MAX, .min = 1e9,
     .max = 1e12, .help = "RTO_min (route rto_min; Linux's default 200 ms)"},
    {K("mss", CFG_SIZE, mss, "1448B"), .flags = CFG_MIN, .min = 536,
     .help = "segment size (1500-byte MTU with timestamps): the policy's one MSS"},
    {0},
};

static const cfg_key ctl_keys[] = {
    {K("period", CFG_TIME, ctl_period, "1ms"), .flags = CFG_MIN | CFG_MAX, .min = 1e8,
     .max = 1e12, .help = "queue polling period (RTM_GETQDISC)"},
    {K("latency", CFG_TIME, latency, "0s"), .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1e12,
     .help = "one-way latency of a remote controller (added twice)"},
    {K("processing", CFG_TIME, processing, "0s"), .flags = CFG_MIN | CFG_MAX, .min = 0,
     .max = 1e12, .help = "controller time per notification (added once)"},
    {K("stats_interval", CFG_TIME, stats, "10ms"), .flags = CFG_MIN_EXCL, .min = 0,
     .help = "a flow is on the port if an ACK of it passed this recently"},
    {K("notify", CFG_FLOAT, notify, "0.2"), .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0,
     .max = 1, .help = "notification above this fraction of the buffer"},
    {K("clear", CFG_FLOAT, clear, "0.1"), .flags = CFG_MIN | CFG_MAX, .min = 0, .max = 1,
     .help = "cleared at or below this fraction"},
    {K("min_gap", CFG_TIME, min_gap, "100us"), .flags = CFG_MIN, .min = 0,
     .help = "at most one notification per gap"},
    {K("renotify", CFG_TIME, renotify, "1ms"), .flags = CFG_MIN, .min = 0,
     .help = "repeat while above the lowest level (0s: never)"},
    {K("round", CFG_ENUM, round, "up"), .choices = rounds,
     .help = "byte target to 16-bit field (tcpwire.h): up keeps a one-MSS floor"},
    {0},
};

static const cfg_key pol_keys[] = {
    {K("mode", CFG_ENUM, mode, "banded"), .choices = modes, .help = "as the simulator's"},
    {K("rtt", CFG_TIME, rtt, "300us"), .flags = CFG_MIN_EXCL, .min = 0,
     .help = "base RTT of the fair share"},
    {K("q_low", CFG_INT, q_low, "50"), .flags = CFG_MIN, .min = 0, .help = "Q_L, packets"},
    {K("q_high", CFG_INT, q_high, "80"), .flags = CFG_MIN, .min = 0, .help = "Q_H, packets"},
    {K("mtu", CFG_SIZE, mtu, "1500B"), .flags = CFG_MIN, .min = 64,
     .help = "packet size of Q_L and Q_H"},
    {K("f_mild", CFG_FLOAT, f_mild, "0.6667"), .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0,
     .max = 1, .help = "mild band factor"},
    {K("f_moderate", CFG_FLOAT, f_moderate, "0.5"), .flags = CFG_MIN_EXCL | CFG_MAX,
     .min = 0, .max = 1, .help = "moderate band factor"},
    {K("min_window", CFG_SIZE, min_wnd, NULL), .flags = CFG_OPTIONAL,
     .help = "floor of every window (default: one MSS)"},
    {K("fixed_window", CFG_SIZE, fixed_wnd, NULL), .flags = CFG_OPTIONAL,
     .help = "window of mode fixed (default: two MSS)"},
    {K("bg_bytes", CFG_SIZE, bg_bytes, "1MB"), .flags = CFG_MIN, .min = 0,
     .help = "long-lived above this many bytes"},
    {K("bg_age", CFG_TIME, bg_age, "1s"), .flags = CFG_MIN, .min = 0,
     .help = "... or older than this"},
    {K("idle_timeout", CFG_TIME, idle, "10ms"), .flags = CFG_MIN, .min = 0,
     .help = "a rule goes after this long without an ACK (0s: never)"},
    {K("hard_timeout", CFG_TIME, hard, "0s"), .flags = CFG_MIN, .min = 0,
     .help = "a rule goes this long after install (0s: never)"},
    {0},
};

static const cfg_key top_keys[] = {
    {K("name", CFG_STR, name, "sdtcp-real"), .help = "the testbed's name"},
    {.name = "description", .type = CFG_STR, .off = offsetof(tb_cfg, desc), .def = "",
     .flags = CFG_OPTIONAL, .help = "free text"},
    {K("senders", CFG_INT, senders, "8"), .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 64,
     .help = "incast senders, one network namespace each"},
    {K("background", CFG_INT, background, "2"), .flags = CFG_MIN | CFG_MAX, .min = 0,
     .max = 16, .help = "long-lived flows, one sender namespace each"},
    {K("block", CFG_SIZE, block, "64KiB"), .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1 << 30,
     .help = "bytes each sender returns per query"},
    {K("rounds", CFG_INT, rounds, "10"), .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 10000,
     .help = "queries per run"},
    {K("period", CFG_TIME, period, "100ms"), .flags = CFG_MIN_EXCL, .min = 0,
     .help = "a query starts this long after the last, or when it completes if later"},
    {K("warmup", CFG_TIME, warmup, "1s"), .flags = CFG_MIN, .min = 0,
     .help = "background alone before the first query"},
    {K("tail", CFG_TIME, tail, "200ms"), .flags = CFG_MIN, .min = 0,
     .help = "background alone after the last query"},
    {K("repeats", CFG_INT, repeats, "5"), .flags = CFG_MIN | CFG_MAX, .min = 1, .max = 1000,
     .help = "runs of each arm, interleaved"},
    {K("arms", CFG_NODE, arms, "[sdtcp, observe, kernel]"),
     .help = "sdtcp (rewrite), observe (NFQUEUE and the policy, no rewrite), kernel"},
    {K("run_limit", CFG_TIME, run_limit, "60s"), .flags = CFG_MIN_EXCL | CFG_MAX, .min = 0,
     .max = 3600e12, .help = "a run that takes longer is stopped and reported"},
    {.name = "bottleneck", .type = CFG_MAPOF, .sub = bn_keys, .def = "{}",
     .help = "the router's port to the receiver"},
    {.name = "transport", .type = CFG_MAPOF, .sub = tr_keys, .def = "{}",
     .help = "the senders' TCP"},
    {.name = "controller", .type = CFG_MAPOF, .sub = ctl_keys, .def = "{}",
     .help = "the rewriter's control loop"},
    {.name = "policy", .type = CFG_MAPOF, .sub = pol_keys, .def = "{}",
     .help = "SDTCP's parameters (sdtcp.h)"},
    {0},
};

int tb_load(const char *path, char *const *sets, int nsets, tb_cfg *c, cfg_doc **doc, err *e)
{
    *c = (tb_cfg){0};
    int rc = cfg_load_file(path, doc, e);
    if (rc)
        return rc;
    for (int i = 0; i < nsets; i++)
        if ((rc = cfg_set(*doc, sets[i], e)))
            return rc;
    cfg_node *root = cfg_root(*doc);
    if (cfg_kind(root) != CFG_MAP)
        return cfg_err(e, AISIM_EINVAL, root, "", "expected a map of testbed keys");
    if ((rc = cfg_bind(root, "", top_keys, c, e)))
        return rc;
    long n = cfg_expect_list(c->arms, "arms", "arms (sdtcp, observe, kernel)", e);
    if (n < 0)
        return (int)n;
    if (n == 0 || n > 8)
        return cfg_err(e, AISIM_EINVAL, c->arms, "arms", "expected 1 to 8 arms, found %ld", n);
    static const cfg_key arm_key = {.name = "arms", .type = CFG_ENUM, .choices = tb_arm_names};
    for (long i = 0; i < n; i++) {
        char p[32];
        if ((rc = cfg_value(cfg_at(c->arms, (size_t)i), cfg_path_index(p, sizeof p, "arms",
                            (size_t)i), &arm_key, &c->arm[i], e)))
            return rc;
    }
    c->narms = (int)n;
    const cfg_node *pol = cfg_get(root, "policy");
    if (c->q_high < c->q_low)
        return cfg_err(e, AISIM_EINVAL, cfg_get(pol, "q_high"), "policy.q_high",
                       "expected at least q_low (%lld), found %lld", (long long)c->q_low,
                       (long long)c->q_high);
    if (c->q_high * c->mtu > c->buffer)
        return cfg_err(e, AISIM_EINVAL, cfg_get(pol, "q_high"), "policy.q_high",
                       "expected Q_H x mtu within bottleneck.buffer (%lld B), found %lld B",
                       (long long)c->buffer, (long long)(c->q_high * c->mtu));
    const cfg_node *ctl = cfg_get(root, "controller");
    if (c->clear >= c->notify)
        return cfg_err(e, AISIM_EINVAL, cfg_get(ctl, "clear"), "controller.clear",
                       "expected below notify (%g), found %g", c->notify, c->clear);
    if (!c->min_wnd)
        c->min_wnd = c->mss;
    if (!c->fixed_wnd)
        c->fixed_wnd = 2 * c->mss;
    if (c->min_wnd < c->mss)
        return cfg_err(e, AISIM_EINVAL, cfg_get(pol, "min_window"), "policy.min_window",
                       "expected at least one MSS (%lld B), found %lld B", (long long)c->mss,
                       (long long)c->min_wnd);
    return 0;
}

void tb_rw_params(const tb_cfg *c, int arm, uint32_t receiver_ip, rw_params *p)
{
    *p = (rw_params){0};
    sdtcp_params_default(&p->pol, (uint32_t)c->mss);
    p->pol.mode = c->mode;
    p->pol.rtt_ps = c->rtt;
    p->pol.q_low_bytes = c->q_low * c->mtu;
    p->pol.q_high_bytes = c->q_high * c->mtu;
    p->pol.f_mild = c->f_mild;
    p->pol.f_moderate = c->f_moderate;
    p->pol.min_wnd = (uint32_t)c->min_wnd;
    p->pol.fixed_wnd = (uint32_t)c->fixed_wnd;
    p->pol.bg_bytes = (uint64_t)c->bg_bytes;
    p->pol.bg_age_ps = c->bg_age;
    p->pol.idle_ps = c->idle;
    p->pol.hard_ps = c->hard;
    p->receiver_ip = receiver_ip;
    p->rate_bps = c->rate;
    p->buffer_bytes = c->buffer;
    p->notify = c->notify;
    p->clear = c->clear;
    p->min_gap_ns = c->min_gap / 1000;
    p->renotify_ns = c->renotify / 1000;
    p->stats_ns = c->stats / 1000;
    p->delay_ns = (2 * c->latency + c->processing) / 1000;
    p->round = c->round == 0 ? TCPWIRE_ROUND_DOWN : c->round == 1 ? TCPWIRE_ROUND_UP
                                                                  : TCPWIRE_ROUND_NEAREST;
    p->rewrite = arm == TB_ARM_SDTCP;
}

int64_t tb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t opt_unit(enum unit_kind k, const char *what, const char *opt, const char *text)
{
    int64_t v;
    const char *why;
    if (!units_parse(k, text, &v, &why) || v < 0) {
        fprintf(stderr, "aisim-sdtcp-real: %s: expected a %s, found \"%s\"\n", opt, what, text);
        exit(2);
    }
    return v;
}

int64_t tb_opt_time(const char *opt, const char *text)
{
    return opt_unit(UNIT_TIME, "time such as 10ms", opt, text);
}

int64_t tb_opt_size(const char *opt, const char *text)
{
    return opt_unit(UNIT_SIZE, "size such as 64KiB", opt, text);
}
