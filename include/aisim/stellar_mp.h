/*
 * stellar_mp.h - Stellar's multi-path RDMA core, sans-I/O (Lu et al.,
 * "Stellar: a new generation RDMA network for cloud AI", SIGCOMM 2025,
 * section 7; papers.md section 2(b)-(f)).  No engine header: callers pass
 * the time in and get choices, verdicts and counters back, so an RDMA QP,
 * a test or a toy transport drive it alike.  docs/stellar.md, "The
 * multi-path core", has the model, every default and its source, and the
 * few calls an RDMA transport makes to plug it in.
 *
 * Four parts, usable one by one or bundled in a sender (smp_qp):
 *
 *  - smp_paths: the paths of one QP (4..256, default 128) and the choice of
 *    a path per packet, an ops table per algorithm (single path = ECMP on
 *    the QP hash, round robin, OBS = oblivious pseudo-random per packet,
 *    BestRTT, DWRR, MP-RDMA-style per-path ECN windows).  Per-path feedback
 *    (ACK with RTT and ECN, loss, timeout) updates common per-path state the
 *    algorithms read; a path that times out `avoid_after` times in a row is
 *    avoided for `avoid_ps`.  A choice is a path index; smp_path_entropy()
 *    turns it into the packet's entropy (pkt.h): with PKT_F_PATHIDX the
 *    index plus a per-QP offset (consecutive indices name distinct routes
 *    where the fabric has that many), or a per-path hash that switches
 *    hash hop by hop (what a per-path UDP source port is to ECMP,
 *    collisions included).
 *  - smp_cc: one congestion-control context per QP shared by all its
 *    paths: a window reacting to ECN (DCTCP-style, once per window) and to
 *    RTT (cut when the RTT exceeds rtt_cap x base RTT), additive increase of
 *    one MSS per window.
 *  - smp_rxmap: the receiver's out-of-order placement: a bitmap of
 *    `window` PSNs from the cumulative point; a PSN inside is placed
 *    directly (no reorder-buffer copy), one beyond is rejected.
 *  - smp_qp: the sender's scoreboard: PSNs outstanding within the same
 *    window, per-packet selective ACKs, loss by RTO (250 us) or, optionally,
 *    by path order (a later packet of the same path arrived: paths are
 *    FIFO), retransmission of the lost PSN alone on a different path.
 */
#ifndef AISIM_STELLAR_MP_H
#define AISIM_STELLAR_MP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aisim/rng.h"

#define SMP_PATHS_MIN 4
#define SMP_PATHS_MAX 256
#define SMP_PATHS_DEFAULT 128
#define SMP_WINDOW_MAX 65536        /* bitmap bound, PSNs (8 KiB of bits) */

/* How a path index is written into a packet (smp_path_entropy). */
enum smp_out { SMP_OUT_PATHIDX, SMP_OUT_HASH };

/* Parameters, shared (read-only) by every QP that uses them.  smp_params_
 * default() fills papers.md 2(f)'s defaults; smp_params_check() says what
 * is wrong with a set. */
typedef struct smp_params {
    uint32_t paths;             /* path count, SMP_PATHS_MIN..MAX */
    enum smp_out out;           /* path index or hashed entropy */
    uint32_t mss_bytes;         /* payload of a full packet */
    int64_t line_rate_bps;      /* the NIC's rate (initial window = BDP) */
    int64_t base_rtt_ps;        /* the empty network's round trip */
    uint32_t window;            /* bitmap and sender window, PSNs (0: 1 BDP,
                                   rounded up to a multiple of 64) */
    /* loss */
    int64_t rto_ps;             /* retransmission timeout (250 us) */
    uint32_t avoid_after;       /* consecutive timeouts that avoid a path (3) */
    int64_t avoid_ps;           /* for how long (10 ms) */
    bool order_loss;            /* also declare loss by path order (off) */
    /* congestion control (one context per QP) */
    double cc_g;                /* DCTCP's EWMA gain (1/16) */
    double rtt_cap;             /* cut when RTT > rtt_cap x base RTT (2) */
    double rtt_beta;            /* ... by beta x (rtt - target) / rtt (0.5) */
    uint32_t min_cwnd_pkts;     /* floor of the window, packets (1) */
    bool loss_cut;              /* a timeout also halves the window (off:
                                   the paper's CC reacts to ECN and RTT) */
    /* path choice */
    double path_g;              /* per-path RTT and ECN EWMA gain (1/8) */
} smp_params;

void smp_params_default(smp_params *pr);
/* The window in PSNs the parameters give (resolving window = 0). */
uint32_t smp_params_window(const smp_params *pr);
/* NULL when pr is usable, else a sentence naming the field and the bound. */
const char *smp_params_check(const smp_params *pr);

/* ---- paths and path choice ---------------------------------------- */

/* What the core knows of one path (one entropy value) of a QP. */
typedef struct smp_path {
    int64_t srtt_ps;            /* smoothed RTT; 0: no sample yet */
    double ecn;                 /* EWMA of the marked fraction of its ACKs */
    double cwnd;                /* MP-RDMA's per-path window, packets */
    int64_t deficit;            /* DWRR's credit, bytes */
    uint32_t inflight;          /* packets sent, not yet acked or lost */
    uint32_t consec_to;         /* timeouts since its last ACK */
    int64_t avoid_until_ps;     /* avoided before this time */
    uint64_t tx_seq;            /* packets sent on it (send order) */
    uint64_t ack_seq;           /* highest send order acknowledged + 1 */
    uint64_t sent, acked, marked, lost, timeouts, avoided; /* counters */
} smp_path;

typedef struct smp_paths smp_paths;

/* A path-choice algorithm.  choose() returns a path among the eligible
 * ones (smp_path_ok); the core has made sure at least one is.  on_ack()
 * (NULL: none) runs after the common per-path state is updated. */
typedef struct smp_path_ops {
    const char *name;           /* "obs", "rr", ... */
    const char *summary;        /* one line */
    bool pinned;                /* one path per QP: no avoidance, no change */
    uint32_t (*choose)(smp_paths *ps, uint32_t bytes);
    void (*on_ack)(smp_paths *ps, uint32_t path, bool ce);
} smp_path_ops;

struct smp_paths {
    const smp_path_ops *ops;
    const smp_params *pr;
    uint32_t n;                 /* paths */
    uint64_t key;               /* the QP's hash (ECMP key) */
    rng r;                      /* OBS's stream, the QP's own */
    uint32_t next;              /* round-robin / DWRR pointer */
    int64_t now_ps;             /* time of the choice being made */
    int32_t exclude;            /* path a retransmission must avoid, or -1 */
    bool ignore_avoid;          /* every path avoided: take any */
    uint32_t planes;            /* the QP's NIC ports (0 or 1: one); path i
                                   leaves by port i mod planes */
    uint32_t plane;             /* the port that sends now: only its paths
                                   are eligible (planes > 1) */
    smp_path *p;                /* n paths */
};

const smp_path_ops *const *smp_path_all(void);     /* NULL-terminated */
const smp_path_ops *smp_path_find(const char *name);
extern const smp_path_ops smp_single, smp_rr, smp_obs, smp_bestrtt, smp_dwrr, smp_mprdma;

/* Binds a QP's paths (pr is borrowed; p allocated here): key is the QP's
 * hash (the single path is key mod paths), seed and qp name OBS's stream. */
void smp_paths_init(smp_paths *ps, const smp_path_ops *ops, const smp_params *pr, uint64_t key,
                    uint64_t seed, uint64_t qp);
void smp_paths_fini(smp_paths *ps);
/* The QP sends on `planes` ports (a dual-port RNIC on a dual-plane fabric:
 * 2), path i on port i mod planes; before each choice the sender says which
 * port sends (ps->plane).  Needs paths >= 2 x planes; pinned algorithms
 * ignore it (the QP is bound to its path's port). */
void smp_paths_set_planes(smp_paths *ps, uint32_t planes);

/* True when path i leaves by the port that sends now (every path with one
 * port). */
static inline bool smp_path_on_plane(const smp_paths *ps, uint32_t i)
{
    return ps->planes < 2 || i % ps->planes == ps->plane;
}

/* True when path i may be chosen now (its port's, not avoided, not
 * excluded). */
static inline bool smp_path_ok(const smp_paths *ps, uint32_t i)
{
    return (int32_t)i != ps->exclude && smp_path_on_plane(ps, i) &&
           (ps->ignore_avoid || ps->p[i].avoid_until_ps <= ps->now_ps);
}

/* The path for a packet of `bytes` at now_ps; `exclude` (-1: none) is a
 * path not to take (a retransmission's previous path; ignored with one
 * path or a pinned algorithm).  Records nothing: smp_path_sent() does. */
uint32_t smp_path_choose(smp_paths *ps, uint32_t bytes, int64_t now_ps, int32_t exclude);
/* A packet went out on path i; returns its send order on that path. */
uint64_t smp_path_sent(smp_paths *ps, uint32_t i);
/* An ACK came back for a packet sent on path i, with its RTT and ECN echo;
 * `counted`: the packet was still counted in flight on i. */
void smp_path_ack(smp_paths *ps, uint32_t i, int64_t rtt_ps, bool ce, bool counted, int64_t now_ps);
/* A packet sent on path i was lost: by timeout (counts toward avoiding
 * the path) or by path order. */
void smp_path_lost(smp_paths *ps, uint32_t i, bool timeout, int64_t now_ps);
/* The entropy of path i, and the flags to add to the packet (PKT_F_PATHIDX
 * or none). */
uint32_t smp_path_entropy(const smp_paths *ps, uint32_t i, uint16_t *flags);

/* ---- congestion control: one window per QP ------------------------ */

typedef struct smp_cc {
    const smp_params *pr;
    double cwnd_bytes;          /* the window */
    double alpha;               /* DCTCP's estimate of the marked fraction */
    uint64_t win_acked;         /* bytes acked in the current window */
    uint64_t win_marked;        /* ... of them marked */
    double win_end;             /* bytes that close the current window */
    int64_t last_cut_ps;        /* the last decrease (one per RTT) */
    int64_t rtt_ps;             /* the last RTT sample (base RTT at first) */
    int64_t cap_base_ps;        /* the RTT cap is rtt_cap x this (base RTT at
                                   first; smp_cc_cap_base raises it) */
    uint64_t cuts_ecn, cuts_rtt, cuts_loss;     /* counters */
} smp_cc;

void smp_cc_init(smp_cc *cc, const smp_params *pr);
/* bytes acknowledged with their RTT (0: no sample) and ECN echo. */
void smp_cc_ack(smp_cc *cc, uint32_t bytes, int64_t rtt_ps, bool ce, int64_t now_ps);
/* A retransmission timeout: halves the window, at most once per RTT. */
void smp_cc_loss(smp_cc *cc, int64_t now_ps);
/* The fabric's base RTT, for the RTT cap: one target for every QP of a
 * fabric, not 2x each QP's own path (a short path's budget would be below
 * one ECN threshold, docs/stellar.md section 6); only ever raised. */
static inline void smp_cc_cap_base(smp_cc *cc, int64_t base_ps)
{
    if (base_ps > cc->cap_base_ps)
        cc->cap_base_ps = base_ps;
}

/* ---- receiver: placement by PSN in a bitmap ----------------------- */

enum smp_rx_verdict { SMP_RX_PLACED, SMP_RX_DUP, SMP_RX_BEYOND };

typedef struct smp_rxmap {
    uint64_t base;              /* next PSN expected in order (cumulative) */
    uint32_t bits;              /* window, PSNs (multiple of 64) */
    uint64_t *w;                /* bits/64 words, PSN mod bits */
    uint64_t placed, dups, beyond, ooo; /* counters; ooo: placed above base */
    uint64_t max_gap;           /* largest psn - base seen on a placement */
} smp_rxmap;

void smp_rxmap_init(smp_rxmap *m, uint32_t bits);
void smp_rxmap_fini(smp_rxmap *m);
/* Places psn: PLACED (bit set; base advanced over what is now in order),
 * DUP (below base or already placed: acknowledge again, drop the data) or
 * BEYOND (psn >= base + bits: not placed, dropped, the sender resends). */
enum smp_rx_verdict smp_rxmap_recv(smp_rxmap *m, uint64_t psn);

/* ---- sender: one QP's scoreboard ---------------------------------- */

/* What the QP sends next: PSN, path, entropy and flags for the packet. */
typedef struct smp_send {
    uint64_t psn;
    uint32_t bytes;             /* payload */
    uint32_t path;
    uint32_t entropy;
    uint16_t flags;             /* PKT_F_PATHIDX or 0 */
    bool retx;                  /* a retransmission */
} smp_send;

/* The receiver's acknowledgement of one data packet: what the data packet
 * echoes (PSN, path, send time) and the receiver's cumulative PSN. */
typedef struct smp_ack {
    uint64_t psn;               /* the PSN this ACK is for (selective) */
    uint64_t cum;               /* every PSN below is received */
    uint32_t path;              /* the path the data took */
    int64_t sent_ps;            /* the data's send time (RTT = now - it) */
    bool ce;                    /* the data was ECN-marked */
} smp_ack;

typedef struct smp_txent {
    int64_t sent_ps;            /* last transmission */
    uint64_t path_seq;          /* its send order on its path */
    uint32_t bytes;
    uint16_t path;
    uint8_t state;              /* free, out, lost (to resend), acked */
    uint8_t ntx;                /* transmissions */
} smp_txent;

typedef struct smp_qp {
    const smp_params *pr;
    smp_paths paths;
    smp_cc cc;
    uint32_t win;               /* sender window, PSNs (= the bitmap's) */
    uint64_t una;               /* oldest PSN not acknowledged */
    uint64_t nxt;               /* next new PSN */
    uint64_t inflight_bytes;    /* sent, not acked or lost */
    smp_txent *e;               /* win entries, PSN mod win */
    uint64_t *lost;             /* PSNs to resend, in loss order (ring) */
    uint32_t lost_h, lost_n, lost_cap;
    struct smp_txrec { uint64_t psn; int64_t sent_ps; } *ord; /* send order */
    uint32_t ord_h, ord_n, ord_cap;
    uint64_t sent, retx, timeouts, lost_order, acked, spurious; /* counters */
} smp_qp;

void smp_qp_init(smp_qp *q, const smp_params *pr, const smp_path_ops *ops, uint64_t key,
                 uint64_t seed, uint64_t qp);
void smp_qp_fini(smp_qp *q);
/* True when the QP may send a packet now: a lost PSN to resend, or (when
 * `have_new`) a new PSN within the window; and the window has room. */
bool smp_qp_can_send(const smp_qp *q, bool have_new);
/* Takes the next packet (a resend first, else new PSN of `bytes`): fills
 * *out and records it as sent at now_ps.  Returns false if none may go. */
bool smp_qp_send(smp_qp *q, int64_t now_ps, uint32_t bytes, smp_send *out);
/* An ACK arrived at now_ps. */
void smp_qp_ack(smp_qp *q, int64_t now_ps, const smp_ack *a);
/* When the oldest outstanding transmission times out (INT64_MAX: none):
 * arm a timer for it and call smp_qp_timer() then. */
int64_t smp_qp_deadline(smp_qp *q);
/* Declares lost every transmission older than now - RTO (each counted as
 * a timeout of its path; one window cut when loss_cut) and queues its PSN
 * to resend. */
void smp_qp_timer(smp_qp *q, int64_t now_ps);
/* Every PSN below `psns` acknowledged: the message is complete. */
static inline bool smp_qp_done(const smp_qp *q, uint64_t psns) { return q->una >= psns; }

#endif
