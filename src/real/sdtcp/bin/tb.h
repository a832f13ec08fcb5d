/*
 * tb.h - aisim-sdtcp-real, the real-mode SDTCP program: its testbed
 * description (a YAML file read through cfg.h's schemas), the router's
 * rewriter (NFQUEUE + RTM_GETQDISC around rw.h), the incast client and
 * server, and the testbed that builds network namespaces around them.
 *
 * A separate program, not `aisim real ...`: it links libnetfilter_queue and
 * libmnl and needs root, and neither libaisim nor `aisim` should.
 */
#ifndef AISIM_REAL_SDTCP_TB_H
#define AISIM_REAL_SDTCP_TB_H

#include <stdbool.h>
#include <stdint.h>

#include "aisim/cfg.h"
#include "aisim/err.h"
#include "real/sdtcp/rw.h"

enum { TB_ARM_SDTCP, TB_ARM_OBSERVE, TB_ARM_KERNEL, TB_NARMS };
extern const char *const tb_arm_names[];

typedef struct tb_cfg {
    const char *name, *desc;
    int64_t senders, background, block, rounds, period, warmup, tail, repeats;
    cfg_node *arms;
    int narms, arm[8];
    int64_t run_limit;          /* wall time of one run, at most */
    /* bottleneck */
    int qdisc;
    int64_t rate, buffer, burst;
    /* transport */
    int cc;
    int64_t init_cwnd, min_rto, mss;
    /* controller */
    int64_t ctl_period, latency, processing, stats, min_gap, renotify;
    double notify, clear;
    int round;
    /* policy */
    int mode;
    int64_t rtt, q_low, q_high, mtu, min_wnd, fixed_wnd, bg_bytes, bg_age, idle, hard;
    double f_mild, f_moderate;
} tb_cfg;

extern const char *const tb_cc_names[];
extern const char *const tb_qdisc_names[];

/* Loads and checks a testbed file, applying --set overrides first.
 * Returns 0 or a negative AISIM_E* with a located message in e; *doc must
 * be freed with cfg_free (strings in c point into it). */
int tb_load(const char *path, char *const *sets, int nsets, tb_cfg *c, cfg_doc **doc, err *e);

/* The rewriter's parameters for an arm (receiver address host order). */
void tb_rw_params(const tb_cfg *c, int arm, uint32_t receiver_ip, rw_params *p);

/* Seconds of a monotonic clock, and nanoseconds. */
int64_t tb_now_ns(void);

/* Subcommands. */
int tb_router(int argc, char **argv);
int tb_server(int argc, char **argv);
int tb_client(int argc, char **argv);
int tb_testbed(int argc, char **argv);
/* Deletes the namespaces of testbeds that no longer run (killed with
 * SIGKILL), saying which. */
void tb_clean_stale(void);

/* Parses a time ("1ms") or size option; exits 2 with a message if bad. */
int64_t tb_opt_time(const char *opt, const char *text);
int64_t tb_opt_size(const char *opt, const char *text);

#endif
