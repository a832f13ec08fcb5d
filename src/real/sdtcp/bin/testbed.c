/*
 * testbed.c - `aisim-sdtcp-real testbed FILE`: network namespaces built
 * from a testbed file, real kernel TCP incast through a Linux router, the
 * arms (sdtcp, observe, kernel) interleaved for `repeats` rounds.
 *
 *   P-s0 .. P-s{N+B-1}  senders (10.1.i.2/24), one per incast sender and
 *                       background flow, each running `server`; its route
 *                       to the router sets initcwnd and rto_min, its
 *                       tcp_congestion_control the cc
 *   P-r                 the router: a veth vs<i> per sender (10.1.i.1), vrcv to
 *                       the receiver (10.2.0.1) with the bottleneck qdisc
 *                       (tbf rate, burst, limit = buffer); forwarding on;
 *                       arms sdtcp and observe add two iptables rules (the
 *                       receiver's TCP packets, SYNs toward it) to NFQUEUE 0
 *                       and run `router` there; arm kernel runs `router`
 *                       with no queue (it only polls the qdisc)
 *   P-d                 the receiver (10.2.0.2), running `client` per run
 *
 * P is "asr<pid>".  Everything lives in these namespaces: deleting them
 * removes every link, address, route, rule and qdisc, and the testbed
 * deletes them on every exit path (SIGINT, SIGTERM and SIGHUP included);
 * namespaces left by a testbed that was killed with SIGKILL (the pid in
 * the name no longer runs) are deleted at the next start.  Children get
 * SIGTERM if the testbed dies.  Every wait is bounded (run_limit per run).
 *
 * Exit: 0, 1 (a run failed), 2 (bad input), 4 (cannot run here: not root,
 * a tool, network namespaces or NFQUEUE missing; the message says which),
 * 130/143 (stopped by a signal, cleaned up).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aisim/stats.h"
#include "real/sdtcp/bin/tb.h"

enum { TB_EXIT_CANNOT = 4, MAX_NS = 96, MAX_PIDS = 128 };

static volatile sig_atomic_t got_sig;
static void on_sig(int s) { got_sig = s; }

static char self_exe[4096];
static char pfx[32];
static char ns_made[MAX_NS][40];
static int nns;
static pid_t pids[MAX_PIDS];
static int npids;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs argv (a program on the PATH) in namespace ns ("" for here); its
 * stdout goes to out (NULL: /dev/null); returns the exit status, -1 if it
 * could not run.  Waits at most 20 s. */
static int run_in(const char *ns, char *const argv[], const char *out, pid_t *bg)
{
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (ns[0]) {
            char path[96];
            snprintf(path, sizeof path, "/run/netns/%s", ns);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0 || setns(fd, CLONE_NEWNET)) {
                fprintf(stderr, "aisim-sdtcp-real testbed: cannot enter namespace %s: %s\n", ns,
                        strerror(errno));
                _exit(127);
            }
        }
        int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (o >= 0)
            dup2(o, 1);
        execvp(argv[0], argv);
        fprintf(stderr, "aisim-sdtcp-real testbed: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (bg) {
        *bg = p;
        if (npids < MAX_PIDS)
            pids[npids++] = p;
        return 0;
    }
    int st = 0;
    for (int i = 0; i < 2000; i++) {
        pid_t w = waitpid(p, &st, WNOHANG);
        if (w == p)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        sleep_ms(10);
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    return -1;
}

#define RUN(ns, ...) run_in((ns), (char *const[]){__VA_ARGS__, NULL}, NULL, NULL)

/* Stops a background child: SIGTERM, up to 5 s, then SIGKILL. */
static int stop_child(pid_t p)
{
    int st = 0;
    if (p <= 0)
        return -1;
    kill(p, SIGTERM);
    for (int i = 0; i < 500; i++) {
        if (waitpid(p, &st, WNOHANG) == p)
            goto gone;
        sleep_ms(10);
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
gone:
    for (int i = 0; i < npids; i++)
        if (pids[i] == p)
            pids[i] = pids[--npids];
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cleanup(void)
{
    while (npids > 0)
        stop_child(pids[npids - 1]);
    for (int i = nns - 1; i >= 0; i--)
        RUN("", "ip", "netns", "del", ns_made[i]);
    nns = 0;
}

static int ns_add(const char *suffix, char *name, size_t len)
{
    snprintf(name, len, "%s-%s", pfx, suffix);
    if (RUN("", "ip", "netns", "add", name))
        return -1;
    if (nns < MAX_NS)
        snprintf(ns_made[nns++], sizeof ns_made[0], "%s", name);
    return 0;
}

/* Namespaces asr<pid>-* whose testbed no longer runs. */
void tb_clean_stale(void)
{
    DIR *d = opendir("/run/netns");
    if (!d)
        return;
    struct dirent *de;
    char stale[MAX_NS][280];
    int n = 0;
    for (int i = 0; i < 4096 && (de = readdir(d)); i++) {
        long pid;
        char rest[8];
        if (sscanf(de->d_name, "asr%ld-%7s", &pid, rest) == 2 && pid > 0 &&
            kill((pid_t)pid, 0) && errno == ESRCH && n < MAX_NS)
            snprintf(stale[n++], sizeof stale[0], "%s", de->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        fprintf(stderr, "aisim-sdtcp-real testbed: deleting namespace %s left by a killed run\n",
                stale[i]);
        RUN("", "ip", "netns", "del", stale[i]);
    }
}

static int write_in(const char *ns, const char *file, const char *val)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "echo %s > %s", val, file);
    return RUN(ns, "sh", "-c", cmd);
}

/* Tcp InCsumErrors and RetransSegs of the namespace process pid is in. */
static void tcp_snmp(pid_t pid, uint64_t *out, uint64_t *re)
{
    char path[64], h[2048], v[2048];
    snprintf(path, sizeof path, "/proc/%d/net/snmp", (int)pid);
    FILE *f = fopen(path, "r");
    *out = *re = 0;
    if (!f)
        return;
    while (fgets(h, sizeof h, f) && fgets(v, sizeof v, f)) {
        if (strncmp(h, "Tcp:", 4))
            continue;
        char *sh, *sv, *a = strtok_r(h, " \n", &sh), *b = strtok_r(v, " \n", &sv);
        while ((a = strtok_r(NULL, " \n", &sh)) && (b = strtok_r(NULL, " \n", &sv))) {
            if (!strcmp(a, "InCsumErrors"))
                *out = strtoull(b, NULL, 10);
            else if (!strcmp(a, "RetransSegs"))
                *re = strtoull(b, NULL, 10);
        }
    }
    fclose(f);
}

/* The value of "key v" in a key value file, or NaN. */
static double kv(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    char line[256], k[64];
    double v = NAN, x;
    if (!f)
        return NAN;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63s %lf", k, &x) == 2 && !strcmp(k, key))
            v = x;
    fclose(f);
    return v;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    double r = p * (n - 1);
    int i = (int)r;
    return i + 1 < n ? v[i] + (r - i) * (v[i + 1] - v[i]) : v[n - 1];
}

typedef struct run_res {
    int arm, rep, ok;
    int nq;
    double p50, p99, loss, bg_during, bg_after, retx_burst, retx_bg, rewritten, qmean, qmax;
    double csum_errors;         /* TCP segments the senders' kernels refused */
    double rtt_us;              /* the client's base RTT */
} run_res;

static void mean_ci(const run_res *r, int n, int arm, size_t off, double *m, double *ci)
{
    stat_acc a;
    stat_init(&a);
    for (int i = 0; i < n; i++) {
        double x = *(const double *)((const char *)&r[i] + off);
        if (r[i].ok && r[i].arm == arm && !isnan(x))
            stat_add(&a, x);
    }
    *m = a.n ? a.mean : NAN;
    *ci = a.n > 1 ? stat_ci95(&a) : 0;
}

static int tool_missing(void)
{
    const char *tools[] = {"ip", "tc", "iptables", "sh"};
    for (int i = 0; i < 4; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "command -v %s", tools[i]);
        if (RUN("", "sh", "-c", cmd)) {
            fprintf(stderr, "aisim-sdtcp-real testbed: cannot run here: %s is missing (Debian: "
                    "iproute2, iptables)\n", tools[i]);
            return 1;
        }
    }
    return 0;
}

int tb_testbed(int argc, char **argv)
{
    static const struct option lo[] = {{"out", 1, 0, 'o'}, {"set", 1, 0, 's'}, {0, 0, 0, 0}};
    const char *outdir = "out/sdtcp-real";
    char *sets[32];
    int nsets = 0, ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (ch == 'o')
            outdir = optarg;
        else if (ch == 's' && nsets < 32)
            sets[nsets++] = optarg;
        else
            goto usage;
    }
    if (optind != argc - 1)
        goto usage;
    const char *file = argv[optind];
    tb_cfg c;
    cfg_doc *doc = NULL;
    err e = {0};
    if (tb_load(file, sets, nsets, &c, &doc, &e)) {
        fprintf(stderr, "aisim-sdtcp-real testbed: %s\n", e.msg);
        cfg_free(doc);
        return 2;
    }
    if (geteuid() != 0) {
        fprintf(stderr, "aisim-sdtcp-real testbed: cannot run here: needs root (it creates "
                "network namespaces, veths, a qdisc and iptables rules)\n");
        cfg_free(doc);
        return TB_EXIT_CANNOT;
    }
    ssize_t sl = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (sl <= 0 || access("/run", W_OK) || tool_missing()) {
        if (sl <= 0)
            fprintf(stderr, "aisim-sdtcp-real testbed: cannot run here: no /proc/self/exe\n");
        cfg_free(doc);
        return TB_EXIT_CANNOT;
    }
    self_exe[sl] = 0;
    mkdir(outdir, 0755);
    struct sigaction sa = {.sa_handler = on_sig};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    snprintf(pfx, sizeof pfx, "asr%d", (int)getpid());
    tb_clean_stale();
    int ret = 1, nh = (int)(c.senders + c.background);
    char R[40], D[40], S[MAX_NS][40], name[16], ip[32], peer[32], tmp[64];
    run_res *res = xcalloc((size_t)(c.repeats * c.narms), sizeof *res);
    int nres = 0;
    pid_t srv[MAX_NS] = {0};
    if (ns_add("r", R, sizeof R) || ns_add("d", D, sizeof D)) {
        fprintf(stderr, "aisim-sdtcp-real testbed: cannot run here: `ip netns add` failed "
                "(network namespaces missing?)\n");
        ret = TB_EXIT_CANNOT;
        goto out;
    }
    /* the receiver */
    int bad = RUN("", "ip", "link", "add", "vrcv", "netns", R, "type", "veth", "peer", "name",
                  "eth0", "netns", D);
    bad |= RUN(R, "ip", "addr", "add", "10.2.0.1/24", "dev", "vrcv");
    bad |= RUN(D, "ip", "addr", "add", "10.2.0.2/24", "dev", "eth0");
    bad |= RUN(R, "ip", "link", "set", "vrcv", "up") | RUN(D, "ip", "link", "set", "eth0", "up");
    bad |= RUN(D, "ip", "link", "set", "lo", "up") | RUN(R, "ip", "link", "set", "lo", "up");
    bad |= RUN(D, "ip", "route", "add", "default", "via", "10.2.0.1");
    bad |= write_in(R, "/proc/sys/net/ipv4/ip_forward", "1");
    char rate[32], burst[32], limit[32], iw[16], rto[32];
    snprintf(rate, sizeof rate, "%lldbit", (long long)c.rate);
    snprintf(burst, sizeof burst, "%lldb", (long long)c.burst);
    snprintf(limit, sizeof limit, "%lldb", (long long)c.buffer);
    snprintf(iw, sizeof iw, "%lld", (long long)c.init_cwnd);
    snprintf(rto, sizeof rto, "%lldms", (long long)(c.min_rto / 1000000000));
    if (c.qdisc == 0) {
        bad |= RUN(R, "tc", "qdisc", "add", "dev", "vrcv", "root", "tbf", "rate", rate, "burst",
                   burst, "limit", limit);
    } else {                                    /* htb: one class, a bfifo under it */
        bad |= RUN(R, "tc", "qdisc", "add", "dev", "vrcv", "root", "handle", "1:", "htb",
                   "default", "1");
        bad |= RUN(R, "tc", "class", "add", "dev", "vrcv", "parent", "1:", "classid", "1:1",
                   "htb", "rate", rate, "ceil", rate, "burst", burst);
        bad |= RUN(R, "tc", "qdisc", "add", "dev", "vrcv", "parent", "1:1", "bfifo", "limit",
                   limit);
    }
    for (int i = 0; i < nh && !bad; i++) {
        snprintf(tmp, sizeof tmp, "s%d", i);
        if (ns_add(tmp, S[i], sizeof S[i])) {
            bad = 1;
            break;
        }
        snprintf(name, sizeof name, "vs%d", i);
        snprintf(ip, sizeof ip, "10.1.%d.2/24", i);
        snprintf(peer, sizeof peer, "10.1.%d.1", i);
        bad |= RUN("", "ip", "link", "add", name, "netns", R, "type", "veth", "peer", "name",
                   "eth0", "netns", S[i]);
        snprintf(tmp, sizeof tmp, "%s/24", peer);
        bad |= RUN(R, "ip", "addr", "add", tmp, "dev", name);
        bad |= RUN(S[i], "ip", "addr", "add", ip, "dev", "eth0");
        bad |= RUN(R, "ip", "link", "set", name, "up") | RUN(S[i], "ip", "link", "set", "eth0", "up");
        bad |= RUN(S[i], "ip", "link", "set", "lo", "up");
        bad |= RUN(S[i], "ip", "route", "add", "default", "via", peer, "initcwnd", iw, "rto_min",
                   rto);
        bad |= write_in(S[i], "/proc/sys/net/ipv4/tcp_congestion_control", tb_cc_names[c.cc]);
    }
    if (bad || got_sig) {
        if (!got_sig)
            fprintf(stderr, "aisim-sdtcp-real testbed: building the namespaces failed (the "
                    "command's message is above)\n");
        goto out;
    }
    /* NFQUEUE: probe once */
    if (RUN(R, "iptables", "-A", "FORWARD", "-i", "vrcv", "-p", "tcp", "-j", "NFQUEUE",
            "--queue-num", "0", "--queue-bypass")) {
        fprintf(stderr, "aisim-sdtcp-real testbed: cannot run here: iptables -j NFQUEUE failed "
                "(the kernel's NFQUEUE target, xt_NFQUEUE or nft queue, is missing)\n");
        ret = TB_EXIT_CANNOT;
        goto out;
    }
    RUN(R, "iptables", "-F", "FORWARD");
    char dur[32];
    snprintf(dur, sizeof dur, "%llds",
             (long long)(c.run_limit / 1000000000000LL + 1) * (c.repeats * c.narms + 1));
    for (int i = 0; i < nh; i++)
        if (run_in(S[i], (char *const[]){self_exe, "server", "--port", "5001", "--duration", dur,
                                         NULL}, NULL, &srv[i])) {
            fprintf(stderr, "aisim-sdtcp-real testbed: cannot start the server in %s\n", S[i]);
            goto out;
        }
    sleep_ms(300);
    char servers[1024] = "", bgs[256] = "";
    for (int i = 0; i < nh; i++) {
        char *dst = i < c.senders ? servers : bgs;
        size_t cap = i < c.senders ? sizeof servers : sizeof bgs;
        snprintf(dst + strlen(dst), cap - strlen(dst), "%s10.1.%d.2", dst[0] ? "," : "", i);
    }
    char runs_csv[512], q_csv[512];
    snprintf(runs_csv, sizeof runs_csv, "%s/runs.csv", outdir);
    snprintf(q_csv, sizeof q_csv, "%s/queries.csv", outdir);
    FILE *fr = fopen(runs_csv, "w"), *fq = fopen(q_csv, "w");
    if (!fr || !fq) {
        perror(outdir);
        if (fr)
            fclose(fr);
        if (fq)
            fclose(fq);
        goto out;
    }
    fprintf(fr, "run,arm,repeat,queries,qct_p50_ms,qct_p99_ms,loss,bg_during_mbps,"
                "bg_after_mbps,burst_retrans,bg_retrans,rewritten,queue_mean_B,queue_max_B,csum_errors,rtt_us\n");
    fprintf(fq, "run,arm,repeat,query,qct_ms\n");
    char blk[32], rnd[16], per[32], wu[32], tl[32], lim[32];
    snprintf(blk, sizeof blk, "%lldB", (long long)c.block);
    snprintf(rnd, sizeof rnd, "%lld", (long long)c.rounds);
    snprintf(per, sizeof per, "%lldus", (long long)(c.period / 1000000));
    snprintf(wu, sizeof wu, "%lldus", (long long)(c.warmup / 1000000));
    snprintf(tl, sizeof tl, "%lldus", (long long)(c.tail / 1000000));
    snprintf(lim, sizeof lim, "%lldus", (long long)(c.run_limit / 1000000));
    int failed = 0;
    for (int rep = 0; rep < c.repeats && !got_sig; rep++) {
        for (int j = 0; j < c.narms && !got_sig; j++) {
            int arm = c.arm[(j + rep) % c.narms], k = nres;
            run_res *rr = &res[nres++];
            *rr = (run_res){.arm = arm, .rep = rep};
            char rlog[512], rout[512], cout[512], rdump[512];
            snprintf(rdump, sizeof rdump, "%s/run%d-%s.dump", outdir, k, tb_arm_names[arm]);
            snprintf(rlog, sizeof rlog, "%s/run%d-%s.log", outdir, k, tb_arm_names[arm]);
            snprintf(rout, sizeof rout, "%s/run%d-%s.router", outdir, k, tb_arm_names[arm]);
            snprintf(cout, sizeof cout, "%s/run%d-%s.client", outdir, k, tb_arm_names[arm]);
            unlink(rlog);
            if (arm != TB_ARM_KERNEL &&
                (RUN(R, "iptables", "-A", "FORWARD", "-i", "vrcv", "-p", "tcp", "-j", "NFQUEUE",
                     "--queue-num", "0", "--queue-bypass") ||
                 RUN(R, "iptables", "-A", "FORWARD", "-o", "vrcv", "-p", "tcp", "--tcp-flags",
                     "SYN", "SYN", "-j", "NFQUEUE", "--queue-num", "0", "--queue-bypass"))) {
                failed = 1;
                break;
            }
            char *rargv[17 + 2 * 32 + 3] = {self_exe, "router", (char *)file, "--arm",
                                    (char *)tb_arm_names[arm], "--dev", "vrcv", "--receiver",
                                    "10.2.0.2", "--queue", "0", "--duration", lim, "--log", rlog,
                                    "--out", rout};
            int ra = 17;
            for (int s = 0; s < nsets; s++) {
                rargv[ra++] = "--set";
                rargv[ra++] = sets[s];
            }
            if (arm == TB_ARM_SDTCP) {
                rargv[ra++] = "--dump";
                rargv[ra++] = rdump;
            }
            rargv[ra] = NULL;
            pid_t rp = 0, cp = 0;
            run_in(R, rargv, NULL, &rp);
            for (int w = 0; w < 300 && access(rlog, F_OK) && !got_sig; w++)
                sleep_ms(10);
            uint64_t o0[2] = {0}, r0[2] = {0}, o1[2] = {0}, r1[2] = {0}, a, b;
            for (int i = 0; i < nh; i++) {
                tcp_snmp(srv[i], &a, &b);
                o0[i >= c.senders] += a;
                r0[i >= c.senders] += b;
            }
            run_in(D, (char *const[]){self_exe, "client", "--servers", servers, "--bg",
                                      bgs[0] ? bgs : "", "--block", blk, "--rounds", rnd,
                                      "--period", per, "--warmup", wu, "--tail", tl,
                                      "--deadline", lim, NULL}, cout, &cp);
            int st = 0, done = 0;
            int64_t until = tb_now_ns() + c.run_limit / 1000 + 2000000000LL;
            while (!got_sig && tb_now_ns() < until)
                if (waitpid(cp, &st, WNOHANG) == cp) {
                    done = 1;
                    break;
                } else {
                    sleep_ms(10);
                }
            if (done)
                for (int i = 0; i < npids; i++)
                    if (pids[i] == cp)
                        pids[i] = pids[--npids];
            if (!done)
                stop_child(cp);
            stop_child(rp);
            RUN(R, "iptables", "-F", "FORWARD");
            for (int i = 0; i < nh; i++) {
                tcp_snmp(srv[i], &a, &b);
                o1[i >= c.senders] += a;
                r1[i >= c.senders] += b;
            }
            rr->csum_errors = (double)(o1[0] + o1[1] - o0[0] - o0[1]);
            if (got_sig)
                break;
            /* the run's numbers */
            FILE *f = fopen(cout, "r");
            double qct[10000];
            int nq = 0;
            char line[256];
            while (f && fgets(line, sizeof line, f)) {
                int qi;
                double t0, d;
                if (sscanf(line, "query %d %lf %lf", &qi, &t0, &d) == 3 && nq < 10000) {
                    fprintf(fq, "%d,%s,%d,%d,%.3f\n", k, tb_arm_names[arm], rep, qi, d);
                    qct[nq++] = d;
                }
            }
            if (f)
                fclose(f);
            double drops = kv(rout, "qdisc_drops"), pk = kv(rout, "qdisc_packets");
            rr->nq = nq;
            rr->ok = done && WIFEXITED(st) && WEXITSTATUS(st) == 0 && nq == c.rounds &&
                     !isnan(drops);
            rr->p99 = pct(qct, nq, 0.99);
            rr->p50 = pct(qct, nq, 0.5);
            rr->loss = drops / (drops + pk);
            rr->bg_during = kv(cout, "bg_during_bps") * 1e-6;
            rr->bg_after = kv(cout, "bg_after_bps") * 1e-6;
            rr->retx_burst = (double)(r1[0] - r0[0]);
            rr->retx_bg = (double)(r1[1] - r0[1]);
            rr->rewritten = kv(rout, "rewritten");
            rr->qmean = kv(rout, "queue_mean");
            rr->qmax = kv(rout, "queue_max");
            rr->rtt_us = kv(cout, "handshake_rtt_us");
            fprintf(fr, "%d,%s,%d,%d,%.3f,%.3f,%.5f,%.2f,%.2f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.1f\n", k,
                    tb_arm_names[arm], rep, nq, rr->p50, rr->p99, rr->loss, rr->bg_during,
                    rr->bg_after, rr->retx_burst, rr->retx_bg, rr->rewritten, rr->qmean,
                    rr->qmax, rr->csum_errors, rr->rtt_us);
            fflush(fr);
            fflush(fq);
            fprintf(stderr, "run %d %-7s: %d queries, QCT p50 %.1f ms, loss %.4f, bg %.1f Mb/s, "
                    "%.0f ACKs rewritten%s\n", k, tb_arm_names[arm], nq, rr->p50, rr->loss,
                    rr->bg_during, rr->rewritten, rr->ok ? "" : " (FAILED)");
            failed |= !rr->ok;
        }
    }
    fclose(fr);
    fclose(fq);
    if (got_sig)
        goto out;
    printf("| arm | runs | QCT p50 ms | QCT p99 ms | loss | bg during Mb/s | burst retrans "
           "| ACKs rewritten | queue mean KB |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int a = 0; a < TB_NARMS; a++) {
        int runs = 0;
        for (int i = 0; i < nres; i++)
            runs += res[i].ok && res[i].arm == a;
        if (!runs)
            continue;
        double m[7], h[7];
        size_t offs[7] = {offsetof(run_res, p50), offsetof(run_res, p99),
                          offsetof(run_res, loss), offsetof(run_res, bg_during),
                          offsetof(run_res, retx_burst), offsetof(run_res, rewritten),
                          offsetof(run_res, qmean)};
        for (int i = 0; i < 7; i++)
            mean_ci(res, nres, a, offs[i], &m[i], &h[i]);
        printf("| %s | %d | %.1f ± %.1f | %.1f ± %.1f | %.4f ± %.4f | %.1f ± %.1f | %.0f ± %.0f "
               "| %.0f ± %.0f | %.1f ± %.1f |\n", tb_arm_names[a], runs, m[0], h[0], m[1], h[1],
               m[2], h[2], m[3], h[3], m[4], h[4], m[5], h[5], m[6] / 1e3, h[6] / 1e3);
    }
    ret = failed;
out:
    cfg_free(doc);
    free(res);
    cleanup();
    if (got_sig) {
        fprintf(stderr, "aisim-sdtcp-real testbed: stopped by signal %d; namespaces deleted\n",
                (int)got_sig);
        return 128 + got_sig;
    }
    return ret;
usage:
    fprintf(stderr, "usage: aisim-sdtcp-real testbed TESTBED.yaml [--out DIR] "
                    "[--set KEY=VALUE]...\n");
    return 2;
}
