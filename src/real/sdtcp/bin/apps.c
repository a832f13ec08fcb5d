/*
 * apps.c - the incast traffic of the testbed: `aisim-sdtcp-real server`
 * (one per sender namespace) and `aisim-sdtcp-real client` (the receiver).
 *
 * The receiver opens every connection (so the window scale the rewriter
 * needs comes from the receiver's own SYN) and sends a 9-byte request:
 * 'B' and a 64-bit big-endian size (a block: the server returns that many
 * bytes and closes) or 'S' (a long-lived flow: the server sends until the
 * receiver closes).  A query opens one new connection to every incast
 * sender at once (as the simulator's `persistent: false`); it completes
 * when the last block has arrived; query k starts at warmup + k * period,
 * or when query k-1 completes if later.  The background flows start at 0
 * and are closed after the tail.
 *
 * The client writes key value lines: per query "query K START_MS QCT_MS",
 * then the background's goodput before (the second half of the warm-up),
 * during (first query's start to last query's end) and after (the tail).
 * Before any traffic it times 20 handshakes with the first sender
 * ("handshake_rtt_us", the quickest: the base RTT of the path).
 * Both programs are single-threaded poll loops, bounded by --deadline
 * (client) or --duration (server) and by SIGINT/SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "real/sdtcp/bin/tb.h"

enum { MAX_CONN = 256, REQ_LEN = 9 };

static volatile sig_atomic_t stop_flag;
static void on_signal(int s)
{
    (void)s;
    stop_flag = 1;
}

static void catch_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static char zeros[1 << 16];

/* ---- server ----------------------------------------------------------- */

typedef struct sconn {
    int fd;
    uint8_t req[REQ_LEN];
    int got;
    int endless;
    uint64_t left;
} sconn;

int tb_server(int argc, char **argv)
{
    int port = 5001;
    int64_t dur_ps = 3600 * 1000000000000LL;
    static const struct option lo[] = {{"port", 1, 0, 'p'}, {"duration", 1, 0, 't'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (ch == 'p')
            port = atoi(optarg);
        else if (ch == 't')
            dur_ps = tb_opt_time("--duration", optarg);
        else {
            fprintf(stderr, "usage: aisim-sdtcp-real server [--port N] [--duration T]\n");
            return 2;
        }
    }
    catch_signals();
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 128)) {
        perror("aisim-sdtcp-real server: bind/listen");
        return 1;
    }
    nonblock(ls);
    static sconn c[MAX_CONN];
    int n = 0;
    int64_t deadline = tb_now_ns() + dur_ps / 1000;
    while (!stop_flag && tb_now_ns() < deadline) {
        struct pollfd pf[MAX_CONN + 1];
        pf[0] = (struct pollfd){ls, POLLIN, 0};
        for (int i = 0; i < n; i++)
            pf[i + 1] = (struct pollfd){c[i].fd, c[i].got < REQ_LEN ? POLLIN : POLLOUT, 0};
        if (poll(pf, (nfds_t)n + 1, 100) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < n; i++) {
            sconn *s = &c[i];
            if (!pf[i + 1].revents)
                continue;
            bool done = false;
            if (s->got < REQ_LEN) {
                ssize_t r = recv(s->fd, s->req + s->got, (size_t)(REQ_LEN - s->got), 0);
                if (r <= 0) {
                    done = r == 0 || (errno != EAGAIN && errno != EINTR);
                } else if ((s->got += (int)r) == REQ_LEN) {
                    s->endless = s->req[0] == 'S';
                    s->left = 0;
                    for (int b = 1; b < REQ_LEN; b++)
                        s->left = s->left << 8 | s->req[b];
                }
            } else {
                size_t want = s->endless || s->left > sizeof zeros ? sizeof zeros : s->left;
                ssize_t w = send(s->fd, zeros, want, MSG_NOSIGNAL);
                if (w < 0)
                    done = errno != EAGAIN && errno != EINTR;
                else if (!s->endless && (s->left -= (uint64_t)w) == 0)
                    done = true;
            }
            if (done) {
                close(s->fd);
                s->fd = -1;
            }
        }
        int j = 0;                              /* drop the closed ones */
        for (int i = 0; i < n; i++)
            if (c[i].fd >= 0)
                c[j++] = c[i];
        n = j;
        if (pf[0].revents) {
            for (int k = 0; k < 64 && n < MAX_CONN; k++) {
                int fd = accept(ls, NULL, NULL);
                if (fd < 0)
                    break;
                nonblock(fd);
                c[n++] = (sconn){.fd = fd};
            }
        }
    }
    for (int i = 0; i < n; i++)
        close(c[i].fd);
    close(ls);
    return 0;
}

/* ---- client ----------------------------------------------------------- */

typedef struct cconn {
    int fd;
    int bg, sent;
    uint64_t got;
} cconn;

static int split_ips(char *s, struct in_addr *out, int max)
{
    int n = 0;
    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ","))
        if (inet_pton(AF_INET, t, &out[n]) == 1)
            n++;
        else
            return -1;
    return n;
}

static int open_conn(struct in_addr ip, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    nonblock(fd);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = ip};
    if (connect(fd, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

int tb_client(int argc, char **argv)
{
    static const struct option lo[] = {
        {"servers", 1, 0, 's'}, {"bg", 1, 0, 'b'}, {"port", 1, 0, 'p'}, {"block", 1, 0, 'k'},
        {"rounds", 1, 0, 'r'}, {"period", 1, 0, 'P'}, {"warmup", 1, 0, 'w'}, {"tail", 1, 0, 't'},
        {"deadline", 1, 0, 'd'}, {0, 0, 0, 0}};
    struct in_addr srv[64], bgs[16];
    int nsrv = 0, nbg = 0, port = 5001, rounds = 1, ch;
    uint64_t block = 65536;
    int64_t period = 100000000, warmup = 0, tail = 0, deadline = 60000000000LL;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 's': nsrv = split_ips(optarg, srv, 64); break;
        case 'b': nbg = split_ips(optarg, bgs, 16); break;
        case 'p': port = atoi(optarg); break;
        case 'k': block = (uint64_t)tb_opt_size("--block", optarg); break;
        case 'r': rounds = atoi(optarg); break;
        case 'P': period = tb_opt_time("--period", optarg) / 1000; break;
        case 'w': warmup = tb_opt_time("--warmup", optarg) / 1000; break;
        case 't': tail = tb_opt_time("--tail", optarg) / 1000; break;
        case 'd': deadline = tb_opt_time("--deadline", optarg) / 1000; break;
        default: nsrv = -1;
        }
    }
    if (nsrv <= 0 || nbg < 0 || rounds < 1 || rounds > 10000) {
        fprintf(stderr, "usage: aisim-sdtcp-real client --servers IP,... [--bg IP,...] "
                        "[--port N] [--block SIZE] [--rounds N] [--period T] [--warmup T] "
                        "[--tail T] [--deadline T]\n");
        return 2;
    }
    catch_signals();
    /* the base RTT, before any traffic: the quickest of 20 handshakes */
    int64_t rtt = INT64_MAX;
    for (int i = 0; i < 20 && !stop_flag; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr = srv[0]};
        struct timeval tv = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        int64_t t = tb_now_ns();
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && tb_now_ns() - t < rtt)
            rtt = tb_now_ns() - t;
        close(fd);
    }
    static cconn c[MAX_CONN];
    int n = 0;
    int64_t t0 = tb_now_ns(), end_ps = t0 + deadline;
    for (int i = 0; i < nbg; i++)
        if ((c[n].fd = open_conn(bgs[i], port)) >= 0)
            c[n++].bg = 1;
    int64_t *qs = xcalloc((size_t)rounds, sizeof *qs), *qe = xcalloc((size_t)rounds, sizeof *qe);
    int k = 0, left = 0, timeout = 0;
    int64_t next = t0 + warmup, last_end = 0;
    uint64_t bg_before = 0, bg_during = 0, bg_after = 0;
    static char buf[1 << 16];
    for (;;) {
        int64_t now = tb_now_ns();
        if (stop_flag || now >= end_ps) {
            timeout = 1;
            break;
        }
        if (k == rounds && left == 0 && now >= last_end + tail)
            break;
        if (left == 0 && k < rounds && now >= next) {       /* a query */
            qs[k] = now;
            for (int i = 0; i < nsrv && n < MAX_CONN; i++)
                if ((c[n].fd = open_conn(srv[i], port)) >= 0) {
                    c[n] = (cconn){.fd = c[n].fd};
                    n++;
                    left++;
                }
            if (left == 0) {
                fprintf(stderr, "aisim-sdtcp-real client: cannot connect\n");
                timeout = 1;
                break;
            }
        }
        struct pollfd pf[MAX_CONN];
        for (int i = 0; i < n; i++)
            pf[i] = (struct pollfd){c[i].fd, c[i].sent ? POLLIN : POLLOUT, 0};
        if (poll(pf, (nfds_t)n, 1) < 0 && errno != EINTR)
            break;
        now = tb_now_ns();
        for (int i = 0; i < n; i++) {
            cconn *q = &c[i];
            if (!pf[i].revents)
                continue;
            if (!q->sent) {
                int er = 0;
                socklen_t el = sizeof er;
                getsockopt(q->fd, SOL_SOCKET, SO_ERROR, &er, &el);
                uint8_t req[REQ_LEN] = {q->bg ? 'S' : 'B'};
                for (int b = 0; b < 8; b++)
                    req[1 + b] = (uint8_t)(block >> (56 - 8 * b));
                if (er || send(q->fd, req, sizeof req, MSG_NOSIGNAL) != (ssize_t)sizeof req) {
                    fprintf(stderr, "aisim-sdtcp-real client: connect: %s\n", strerror(er));
                    timeout = 1;
                    goto done;
                }
                q->sent = 1;
                continue;
            }
            ssize_t r = recv(q->fd, buf, sizeof buf, 0);
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (r > 0) {
                q->got += (uint64_t)r;
                if (q->bg) {
                    int64_t first = k > 0 ? qs[0] : INT64_MAX;
                    if (now < first && now >= t0 + warmup / 2)
                        bg_before += (uint64_t)r;
                    else if (now >= first && (k < rounds || left > 0))
                        bg_during += (uint64_t)r;
                    else if (k == rounds && left == 0)
                        bg_after += (uint64_t)r;
                }
            }
            if (r <= 0 || (!q->bg && q->got >= block)) {
                close(q->fd);
                q->fd = -1;
                if (!q->bg && --left == 0) {
                    qe[k] = now;
                    last_end = now;
                    k++;
                    next = t0 + warmup + (int64_t)k * period;
                }
            }
        }
        int j = 0;
        for (int i = 0; i < n; i++)
            if (c[i].fd >= 0)
                c[j++] = c[i];
        n = j;
    }
done:
    for (int i = 0; i < n; i++)
        close(c[i].fd);
    for (int i = 0; i < k; i++)
        printf("query %d %.3f %.3f\n", i, (double)(qs[i] - t0) * 1e-6,
               (double)(qe[i] - qs[i]) * 1e-6);
    double during_s = k ? (double)(qe[k - 1] - qs[0]) * 1e-9 : 0;
    printf("handshake_rtt_us %.1f\n", rtt == INT64_MAX ? -1.0 : (double)rtt * 1e-3);
    printf("queries %d\ntimeout %d\nbg_before_bps %.0f\nbg_during_bps %.0f\nbg_after_bps %.0f\n",
           k, timeout, warmup > 0 ? 8.0 * (double)bg_before / ((double)warmup * 0.5e-9) : 0.0,
           during_s > 0 ? 8.0 * (double)bg_during / during_s : 0.0,
           tail > 0 ? 8.0 * (double)bg_after / ((double)tail * 1e-9) : 0.0);
    free(qs);
    free(qe);
    return timeout ? 1 : 0;
}
