/*
 * router.c - `aisim-sdtcp-real router`: the rewriter on a Linux router.
 *
 * NFQUEUE (libnetfilter_queue) hands it the receiver's TCP packets and the
 * SYNs toward the receiver (the testbed's iptables rules); each goes
 * through rw_packet() and back with a verdict (the edited bytes if the
 * window was lowered).  Every controller period (a timerfd) it reads the
 * bottleneck qdisc's backlog over rtnetlink (libmnl, RTM_GETQDISC) and
 * runs rw_control(): watermarks, sdtcp_decide(), decisions in force after
 * the configured delay.  Arm kernel polls the qdisc only (no queue is
 * bound: the same queue readings, no NFQUEUE); observe decides and counts
 * but returns every packet unchanged.
 *
 * Bounded: it stops after --duration, on SIGINT/SIGTERM, or when its queue
 * goes away; at most 256 packets per wake-up.  At the end it writes its
 * counters (key value lines) to --out, and its log (one line per
 * notification or clear) to --log; --dump FILE keeps the first 2000 packets
 * it changed, each as a 32-bit length (host order) and the packet before
 * and after (what the tests check the checksum update on).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/gen_stats.h>
#include <linux/netfilter.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "real/sdtcp/bin/tb.h"

typedef struct qstat {
    int ok;
    uint64_t bytes, packets;
    uint32_t backlog, qlen, drops, overlimits;
    char kind[16];
} qstat;

typedef struct router {
    rw *r;
    int64_t t0;
    struct mnl_socket *nl;
    unsigned portid, seq;
    int ifindex;
    qstat q;
    uint64_t verdict_errors, reads;
    FILE *dump;                 /* --dump: changed packets, before and after */
    int dumped;
} router;

enum { DUMP_MAX = 2000 };

static int stats_cb(const struct nlattr *a, void *data)
{
    qstat *q = data;
    int t = mnl_attr_get_type(a);
    if (t == TCA_STATS_QUEUE && mnl_attr_get_payload_len(a) >= sizeof(struct gnet_stats_queue)) {
        struct gnet_stats_queue g;
        memcpy(&g, mnl_attr_get_payload(a), sizeof g);
        q->backlog = g.backlog;
        q->qlen = g.qlen;
        q->drops = g.drops;
        q->overlimits = g.overlimits;
        q->ok |= 1;
    } else if (t == TCA_STATS_BASIC && mnl_attr_get_payload_len(a) >= 12) {
        const uint8_t *p = mnl_attr_get_payload(a);
        uint32_t pk;
        memcpy(&q->bytes, p, 8);
        memcpy(&pk, p + 8, 4);
        q->packets = pk;
    }
    return MNL_CB_OK;
}

static int attr_cb(const struct nlattr *a, void *data)
{
    qstat *q = data;
    if (mnl_attr_get_type(a) == TCA_KIND) {
        snprintf(q->kind, sizeof q->kind, "%s", mnl_attr_get_str(a));
    } else if (mnl_attr_get_type(a) == TCA_STATS2) {
        mnl_attr_parse_nested(a, stats_cb, q);
    }
    return MNL_CB_OK;
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
    router *rt = data;
    const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
    if (tcm->tcm_ifindex != rt->ifindex || tcm->tcm_parent != TC_H_ROOT)
        return MNL_CB_OK;
    qstat q = {0};
    mnl_attr_parse(nlh, sizeof *tcm, attr_cb, &q);
    rt->q = q;
    return MNL_CB_OK;
}

/* Reads the root qdisc of the device; 0 or -1 (message on stderr). */
static int qdisc_read(router *rt)
{
    char buf[MNL_SOCKET_BUFFER_SIZE];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_GETQDISC;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    nlh->nlmsg_seq = ++rt->seq;
    struct tcmsg *tcm = mnl_nlmsg_put_extra_header(nlh, sizeof *tcm);
    tcm->tcm_family = AF_UNSPEC;
    tcm->tcm_ifindex = rt->ifindex;
    rt->q.ok = 0;
    if (mnl_socket_sendto(rt->nl, nlh, nlh->nlmsg_len) < 0) {
        perror("aisim-sdtcp-real router: RTM_GETQDISC");
        return -1;
    }
    for (int i = 0; i < 1000; i++) {           /* a dump is a few messages */
        ssize_t n = mnl_socket_recvfrom(rt->nl, buf, sizeof buf);
        if (n <= 0)
            return -1;
        int rc = mnl_cb_run(buf, (size_t)n, rt->seq, rt->portid, qdisc_cb, rt);
        if (rc <= MNL_CB_STOP)
            return rc < 0 ? -1 : (rt->q.ok ? 0 : -1);
    }
    return -1;
}

static int pkt_cb(struct nfq_q_handle *qh, struct nfgenmsg *m, struct nfq_data *d, void *data)
{
    (void)m;
    router *rt = data;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(d);
    uint32_t id = ph ? ntohl(ph->packet_id) : 0;
    unsigned char *p;
    int len = nfq_get_payload(d, &p);
    static uint8_t before[0x10000];
    bool dump = rt->dump && rt->dumped < DUMP_MAX && len > 0 && len <= (int)sizeof before;
    if (dump)
        memcpy(before, p, (size_t)len);
    int changed = len > 0 ? rw_packet(rt->r, p, (size_t)len, tb_now_ns() - rt->t0) : 0;
    if (dump && changed == 1) {
        uint32_t l = (uint32_t)len;
        fwrite(&l, sizeof l, 1, rt->dump);
        fwrite(before, 1, l, rt->dump);
        fwrite(p, 1, l, rt->dump);
        rt->dumped++;
    }
    int rc = changed == 1 ? nfq_set_verdict(qh, id, NF_ACCEPT, (uint32_t)len, p)
                          : nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
    if (rc < 0)
        rt->verdict_errors++;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: aisim-sdtcp-real router TESTBED.yaml --arm sdtcp|observe|kernel "
                    "--dev IF --receiver IPV4 [--queue N] [--duration T] [--log FILE] "
                    "[--out FILE] [--dump FILE] [--set KEY=VALUE]...\n");
    exit(2);
}

int tb_router(int argc, char **argv)
{
    static const struct option lo[] = {
        {"arm", 1, 0, 'a'}, {"dev", 1, 0, 'd'}, {"receiver", 1, 0, 'r'}, {"queue", 1, 0, 'q'},
        {"duration", 1, 0, 't'}, {"log", 1, 0, 'l'}, {"out", 1, 0, 'o'}, {"set", 1, 0, 's'},
        {"dump", 1, 0, 'D'}, {0, 0, 0, 0}};
    const char *arm_s = NULL, *dev = NULL, *rcv = NULL, *logp = NULL, *outp = NULL, *dump = NULL;
    int queue = 0, arm = -1;
    int64_t dur_ps = 60 * 1000000000000LL;
    char *sets[32];
    int nsets = 0, ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'a': arm_s = optarg; break;
        case 'd': dev = optarg; break;
        case 'r': rcv = optarg; break;
        case 'q': queue = atoi(optarg); break;
        case 't': dur_ps = tb_opt_time("--duration", optarg); break;
        case 'l': logp = optarg; break;
        case 'o': outp = optarg; break;
        case 's': if (nsets < 32) sets[nsets++] = optarg; break;
        case 'D': dump = optarg; break;
        default: usage();
        }
    }
    if (optind != argc - 1 || !arm_s || !dev || !rcv)
        usage();
    for (int i = 0; tb_arm_names[i]; i++)
        if (!strcmp(arm_s, tb_arm_names[i]))
            arm = i;
    struct in_addr ra;
    if (arm < 0 || inet_pton(AF_INET, rcv, &ra) != 1)
        usage();
    tb_cfg c;
    cfg_doc *doc = NULL;
    err e = {0};
    if (tb_load(argv[optind], sets, nsets, &c, &doc, &e)) {
        fprintf(stderr, "aisim-sdtcp-real router: %s\n", e.msg);
        cfg_free(doc);
        return 2;
    }
    rw_params rp;
    tb_rw_params(&c, arm, ntohl(ra.s_addr), &rp);
    int qdisc = c.qdisc;
    router rt = {.r = rw_create(&rp), .t0 = tb_now_ns()};
    int64_t period_ns = c.ctl_period / 1000;
    cfg_free(doc);
    int ret = 1;
    struct nfq_handle *h = NULL;
    struct nfq_q_handle *qh = NULL;
    FILE *log = NULL;
    int tfd = -1, sfd = -1;
    rt.ifindex = (int)if_nametoindex(dev);
    if (!rt.ifindex) {
        fprintf(stderr, "aisim-sdtcp-real router: no device %s here\n", dev);
        goto out;
    }
    rt.nl = mnl_socket_open(NETLINK_ROUTE);
    if (!rt.nl || mnl_socket_bind(rt.nl, 0, MNL_SOCKET_AUTOPID) < 0) {
        perror("aisim-sdtcp-real router: rtnetlink");
        goto out;
    }
    rt.portid = mnl_socket_get_portid(rt.nl);
    const char *kind = tb_qdisc_names[qdisc];
    if (qdisc_read(&rt) || strcmp(rt.q.kind, kind)) {
        fprintf(stderr, "aisim-sdtcp-real router: no %s root qdisc on %s (found \"%s\")\n",
                kind, dev, rt.q.kind);
        goto out;
    }
    qstat q0 = rt.q;
    if (arm != TB_ARM_KERNEL) {
        h = nfq_open();
        if (!h || nfq_bind_pf(h, AF_INET) < 0 ||
            !(qh = nfq_create_queue(h, (uint16_t)queue, pkt_cb, &rt)) ||
            nfq_set_mode(qh, NFQNL_COPY_PACKET, 0xffff) < 0) {
            fprintf(stderr, "aisim-sdtcp-real router: cannot bind NFQUEUE %d (the kernel's "
                    "nfnetlink_queue is missing, or another process holds the queue)\n", queue);
            goto out;
        }
        nfq_set_queue_maxlen(qh, 4096);
        /* a full queue passes packets instead of dropping them */
        nfq_set_queue_flags(qh, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN);
    }
    if (dump && !(rt.dump = fopen(dump, "wb"))) {
        perror(dump);
        goto out;
    }
    if (logp && !(log = fopen(logp, "w"))) {
        perror(logp);
        goto out;
    }
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGINT);
    sigaddset(&ss, SIGTERM);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    sfd = signalfd(-1, &ss, SFD_NONBLOCK);
    tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    struct itimerspec its = {{period_ns / 1000000000, period_ns % 1000000000},
                             {period_ns / 1000000000, period_ns % 1000000000}};
    timerfd_settime(tfd, 0, &its, NULL);
    if (log)
        fprintf(log, "t_ms,queue_bytes,event,band,flows,decisions,rules\n");
    int nfd = h ? nfq_fd(h) : -1;
    int64_t deadline = rt.t0 + dur_ps / 1000;
    uint64_t samples = 0;
    double qsum = 0;
    uint32_t qmax = 0;
    static char buf[1 << 17];
    for (;;) {
        int64_t now = tb_now_ns();
        if (now >= deadline)
            break;
        struct pollfd pf[3] = {{sfd, POLLIN, 0}, {tfd, POLLIN, 0}, {nfd, POLLIN, 0}};
        int np = poll(pf, nfd >= 0 ? 3 : 2, 100);
        if (np < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            break;
        if (nfd >= 0 && pf[2].revents) {
            for (int i = 0; i < 256; i++) {
                ssize_t n = recv(nfd, buf, sizeof buf, MSG_DONTWAIT);
                if (n <= 0)
                    break;
                nfq_handle_packet(h, buf, (int)n);
            }
        }
        if (pf[1].revents) {
            uint64_t exp;
            if (read(tfd, &exp, sizeof exp) != sizeof exp)
                continue;
            if (qdisc_read(&rt))
                continue;
            rt.reads++;
            rw_event ev;
            int64_t t = tb_now_ns() - rt.t0;
            rw_control(rt.r, t, rt.q.backlog, &ev);
            samples++;
            qsum += rt.q.backlog;
            qmax = rt.q.backlog > qmax ? rt.q.backlog : qmax;
            if (log && ev.kind)
                fprintf(log, "%.3f,%u,%s,%d,%zu,%zu,%zu\n", (double)t * 1e-6, rt.q.backlog,
                        ev.kind == 1 ? "notify" : "clear", ev.band, ev.nflows, ev.nmods,
                        rw_rules(rt.r));
        }
    }
    qdisc_read(&rt);
    rw_counts k;
    rw_get_counts(rt.r, &k);
    FILE *o = outp ? fopen(outp, "w") : stdout;
    if (!o) {
        perror(outp);
        goto out;
    }
    fprintf(o, "arm %s\npkts %llu\nacks %llu\nsyns %llu\nfins %llu\nparse_errors %llu\n"
               "rewritten %llu\nwould_rewrite %llu\nunknown_scale %llu\nnotifications %llu\n"
               "clears %llu\nmods %llu\ndels %llu\nexpired %llu\nflows %llu\n"
               "verdict_errors %llu\nqueue_reads %llu\nqueue_mean %.0f\nqueue_max %u\n"
               "qdisc_packets %llu\nqdisc_bytes %llu\nqdisc_drops %u\n",
            tb_arm_names[arm], (unsigned long long)k.pkts, (unsigned long long)k.acks,
            (unsigned long long)k.syns, (unsigned long long)k.fins,
            (unsigned long long)k.parse_errors, (unsigned long long)k.rewritten,
            (unsigned long long)k.would_rewrite, (unsigned long long)k.unknown_scale,
            (unsigned long long)k.notifications, (unsigned long long)k.clears,
            (unsigned long long)k.mods, (unsigned long long)k.dels,
            (unsigned long long)k.expired, (unsigned long long)k.flows,
            (unsigned long long)rt.verdict_errors, (unsigned long long)rt.reads,
            samples ? qsum / (double)samples : 0.0, qmax,
            (unsigned long long)(rt.q.packets - q0.packets),
            (unsigned long long)(rt.q.bytes - q0.bytes), rt.q.drops - q0.drops);
    for (int i = 0; i < 15; i++)        /* the receiver's SYNs by window scale */
        if (k.rscale[i])
            fprintf(o, "rcv_syn_wscale_%d %llu\n", i, (unsigned long long)k.rscale[i]);
    if (k.rscale[15])
        fprintf(o, "rcv_syn_wscale_none %llu\n", (unsigned long long)k.rscale[15]);
    if (o != stdout)
        fclose(o);
    ret = 0;
out:
    if (qh)
        nfq_destroy_queue(qh);
    if (h)
        nfq_close(h);
    if (rt.nl)
        mnl_socket_close(rt.nl);
    if (log)
        fclose(log);
    if (rt.dump)
        fclose(rt.dump);
    if (tfd >= 0)
        close(tfd);
    if (sfd >= 0)
        close(sfd);
    rw_destroy(rt.r);
    return ret;
}
