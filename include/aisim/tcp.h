/*
 * tcp.h - TCP NewReno with RFC 6675 SACK loss recovery (or RACK-style loss
 * marking), RTO per RFC 6298, optional delayed ACKs, the receiver's
 * advertised window, and DCTCP.
 *
 * A tcp_flow holds both ends of one connection: the sender (its `tx` sink
 * receives ACKs) and the receiver (its `rx` sink receives data).  Sequence
 * numbers count bytes from 0; a flow of `size_bytes` is done when the
 * receiver holds them all (its flow completion time is measured there).
 * There is no handshake: the first window leaves at the start time (its RTT
 * estimate can be primed as if one had happened: tcp_flow_prime_rtt).
 *
 * Sender (RFC 5681, 6582, 6298):
 *   - slow start (cwnd grows by the bytes acked), congestion avoidance
 *     (by MSS*acked/cwnd), initial window init_cwnd segments; cwnd grows
 *     only while it limits the sender (RFC 7661, Linux's
 *     tcp_is_cwnd_limited): not while the receiver's window does, nor
 *     while the sender has nothing more to send;
 *   - loss recovery per RFC 6675 (recovery: rfc6675, the default): a
 *     SACK scoreboard; IsLost(s) when DupThresh (3) SACKed segments, or
 *     more than (DupThresh - 1) x MSS SACKed bytes, lie above s; a
 *     duplicate ACK is one that SACKs data not SACKed before (sec. 2;
 *     the ACK of a segment received twice is not one); recovery starts at
 *     the DupThresh-th duplicate ACK or when IsLost(snd_una), sets
 *     ssthresh and cwnd (no window inflation), resends snd_una's segment
 *     and then sends while cwnd - pipe >= MSS, pipe per SetPipe (sec. 4:
 *     un-SACKed bytes not lost, plus un-SACKed bytes below HighRxt), what
 *     to send per NextSeg rules 1-4 (a lost hole above HighRxt; new data;
 *     an un-SACKed hole above HighRxt; once per recovery a rescue
 *     retransmission of the highest un-SACKed segment); it ends at the
 *     recovery point (snd_max at its start).  A lost retransmission is
 *     not detected (as the RFC): the timeout resends it;
 *   - or RACK-style loss marking (recovery: rack; RFC 8985's rule and
 *     reordering timer, without tail loss probes nor the adaptive
 *     window): an un-SACKed segment is lost once data sent after it
 *     (later, or at the same time with higher sequence numbers) has been
 *     delivered and RACK.rtt + the reordering window (rack_reo_wnd x the
 *     minimum RTT) has passed since its last transmission; pipe is the
 *     un-SACKed segments not lost; recovery
 *     resends the lost ones in order and then new data.  It tolerates
 *     reordering shorter than the window (per-packet spraying) and finds
 *     lost retransmissions.  Costs O(segments outstanding) per ACK;
 *   - RTT from the echoed send time of the segment an ACK answers
 *     (timestamps, RFC 7323: valid for retransmissions too), RTO =
 *     max(min_rto, srtt + 4 rttvar), doubled on each timeout up to max_rto;
 *     a timeout sets cwnd to one segment and resends from the first
 *     unacknowledged byte (go-back-N, SACK state cleared);
 *   - never more than min(cwnd, advertised window) bytes outstanding.
 * Receiver: cumulative ACKs carrying the advertised window (a switch or an
 * SDN controller may rewrite it in flight: SDTCP), up to two SACK blocks,
 * and the echo of the segment's send time; delayed ACKs (every second
 * segment or after delack_timeout) when enabled, immediate ACKs for
 * out-of-order data.
 * DCTCP (Alizadeh et al., SIGCOMM 2010): data is ECN-capable; the receiver
 * echoes CE exactly (ECE on the ACK of each marked segment; with delayed
 * ACKs an immediate ACK whenever the CE state changes); the sender keeps
 * alpha <- (1-g) alpha + g F once per window of data, F the fraction of
 * bytes acked with ECE, and on ECE cuts cwnd by alpha/2 at most once per
 * window (not during fast recovery, as Linux, which enters CWR only from
 * the open state); a loss sets ssthresh to cwnd (1 - alpha/2) too, as
 * Linux's dctcp_ssthresh and ns-3's TcpDctcp do, not to half the flight
 * (a timeout during fast recovery keeps recovery's, as Linux does).
 * NewReno here ignores ECN (not ECN-capable).
 */
#ifndef AISIM_TCP_H
#define AISIM_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "aisim/pkt.h"
#include "aisim/rng.h"
#include "aisim/sim.h"

enum tcp_cc { TCP_NEWRENO, TCP_DCTCP };
enum tcp_recovery { TCP_REC_RFC6675, TCP_REC_RACK };

typedef struct tcp_cfg {
    enum tcp_cc cc;
    uint32_t mss_bytes;         /* payload per segment (1460) */
    uint32_t hdr_bytes;         /* headers on the wire per packet (40) */
    uint32_t init_cwnd_pkts;    /* initial window, segments (10) */
    uint32_t rcv_wnd_bytes;     /* receiver's advertised window */
    int64_t min_rto_ps;         /* 200 ms (Linux) or 1 ms (tuned DC) */
    int64_t max_rto_ps;         /* cap of the backed-off RTO (60 s) */
    int64_t init_rto_ps;        /* before the first RTT sample (1 s) */
    uint32_t max_retries;       /* consecutive timeouts before the sender gives
                                   up (15, Linux's tcp_retries2) */
    bool delayed_ack;           /* ACK every second segment */
    int64_t delack_ps;          /* delayed-ACK timeout */
    double dctcp_g;             /* DCTCP EWMA gain (1/16) */
    enum tcp_recovery recovery; /* loss detection (RFC 6675) */
    uint32_t dupthresh;         /* RFC 6675 DupThresh (3) */
    double rack_reo_wnd;        /* RACK reordering window, x min RTT (0.25) */
} tcp_cfg;

/* The defaults listed above. */
void tcp_cfg_default(tcp_cfg *c);

typedef struct tcp_flow tcp_flow;

/* Sorted, disjoint byte ranges [start, end): the sender's SACK scoreboard
 * and the receiver's out-of-order data.  Grows as needed (per flow, rarely;
 * never per packet once grown). */
typedef struct tcp_ranges {
    uint64_t (*r)[2];
    int n, cap;
} tcp_ranges;

/* RACK's record of the segments outstanding, by sequence number: each
 * one's extent and the time of its last transmission. */
typedef struct tcp_sent {
    uint64_t seq, end;
    int64_t at_ps;
} tcp_sent;

typedef struct tcp_sentlog {
    tcp_sent *e;
    int head, n, cap;           /* entries e[head .. n) */
} tcp_sentlog;

struct tcp_flow {
    sink tx;                    /* sender end: receives ACKs */
    sink rx;                    /* receiver end: receives data */
    sim *s;
    pkt_pool *pool;
    const tcp_cfg *cfg;
    uint32_t id;                /* flow id carried by every packet */
    uint8_t prio;               /* priority class of its packets */
    uint64_t size_bytes;        /* bytes to deliver (UINT64_MAX: long-lived) */
    const route *fwd, *rev;     /* data path, ACK path */
    sink *data_sink;            /* takes data packets instead of fwd (per-packet
                                   spraying: transport.h), or NULL */
    const route *ack_rt;        /* receiver: ACK path (reverse of the last
                                   data packet's route, if it had one) */
    /* Called at a retransmission timeout before resending, so the owner can
     * move the flow to a route that avoids a failed link; may be NULL. */
    void (*reroute)(void *ctx, tcp_flow *f);

    /* sender */
    uint64_t snd_una;           /* first unacknowledged byte */
    uint64_t snd_nxt;           /* next new byte to send */
    uint64_t snd_max;           /* highest byte sent + 1 */
    double cwnd;                /* congestion window, bytes */
    double ssthresh;            /* slow-start threshold, bytes */
    uint64_t rwnd;              /* last advertised receive window */
    uint32_t dupacks;           /* duplicate ACKs (RFC 6675: each SACKs new data) */
    bool in_recovery;
    bool cwnd_limited;          /* the last send stopped at cwnd (not at the
                                   receiver's window, nor for lack of data):
                                   ACKs may grow cwnd (RFC 7661) */
    uint64_t recover;           /* RecoveryPoint: snd_max when recovery began */
    uint64_t high_rxt;          /* HighRxt: retransmitted up to here in recovery */
    uint64_t rescue_rxt;        /* RescueRxt */
    uint64_t pipe;              /* SetPipe's estimate at the last ACK, bytes,
                                   plus what was sent since */
    tcp_ranges sacked;          /* SACKed ranges above snd_una */
    tcp_sentlog sent;           /* RACK: segments outstanding */
    int64_t rack_xmit_ps;       /* RACK.xmit_ts: latest send time delivered */
    uint64_t rack_end;          /* RACK.end_seq (the highest byte delivered) */
    int64_t rack_rtt_ps;        /* RACK.rtt: of that latest delivered send */
    sim_timer rack_timer;       /* RACK's reordering timer */
    int64_t min_rtt_ps;         /* RACK: least RTT sample (0: none) */
    int64_t srtt_ps, rttvar_ps, rto_ps;
    bool have_rtt;
    sim_timer rto_timer;
    /* DCTCP sender */
    double alpha;
    uint64_t win_end;           /* end of the current observation window */
    uint64_t win_acked, win_marked;
    uint64_t cwr_end;           /* no further cut until snd_una passes this */

    /* receiver */
    uint64_t rcv_nxt;           /* next in-order byte expected */
    tcp_ranges ooo;             /* out-of-order data held */
    uint64_t last_seg;          /* start of the last segment received */
    int unacked_segs;           /* delayed ACK: segments since the last ACK */
    bool ce_state;              /* DCTCP receiver: CE of the last segment */
    int64_t last_echo_ps;       /* send time to echo on the next ACK */
    sim_timer delack_timer;

    /* results */
    int64_t start_ps, finish_ps;        /* finish_ps < 0 while running */
    uint64_t bytes_sent;        /* data bytes sent, retransmissions included */
    uint64_t segs_sent, retransmits, timeouts, fast_retransmits;
    uint64_t ece_acks;          /* ACKs with ECE seen by the sender */
    uint32_t backoffs;          /* timeouts since snd_una last advanced */
    bool aborted;               /* gave up after max_retries such timeouts */
    void (*on_done)(void *ctx, tcp_flow *f);    /* when the receiver has all,
                                                   or the sender gave up */
    void (*on_progress)(void *ctx, tcp_flow *f);    /* when rcv_nxt advanced
                                                       (before on_done); may be NULL */
    void (*on_acked)(void *ctx, tcp_flow *f);   /* when an ACK covers everything
                                                   to send; may be NULL */
    void *ctx;
};

/* Initialises a caller-owned flow.  cfg must outlive it. */
void tcp_flow_init(tcp_flow *f, sim *s, pkt_pool *pool, const tcp_cfg *cfg, uint32_t id,
                   uint64_t size_bytes);
/* The routes its packets follow: fwd ends at the receiver's host (whose
 * demux, or f->rx itself, takes the data), rev at the sender's. */
void tcp_flow_set_routes(tcp_flow *f, const route *fwd, const route *rev);
/* Hands the flow's data packets to s instead of sending them on fwd: the
 * network's sprayer, which forwards each by its own entropy (pkt.h).  ACKs
 * of packets that arrive without a route go back on rev.  Reordering
 * across paths shows up as duplicate ACKs, as it does in a real network.
 * NULL: back to fwd. */
void tcp_flow_set_data_sink(tcp_flow *f, sink *s);
/* Primes the RTT estimator with the round-trip time a connection handshake
 * would have measured (srtt = rtt, rttvar = rtt/2, as RFC 6298 does for the
 * first sample), so that a loss in the first window waits for
 * max(min_rto, 3 rtt), not the 1 s initial RTO of an unmeasured path.  The
 * network model calls it with the path's empty-network round trip. */
void tcp_flow_prime_rtt(tcp_flow *f, int64_t rtt_ps);
/* Starts sending at at_ps. */
void tcp_flow_start(tcp_flow *f, int64_t at_ps);
/* Gives a running (or finished) flow `bytes` more to deliver, as the next
 * request on a persistent connection: its window and RTT estimate carry
 * over, finish_ps is cleared, and on_done fires again when the receiver has
 * everything.  Not for long-lived flows. */
void tcp_flow_add_bytes(tcp_flow *f, uint64_t bytes);
/* Stops the flow's timers and frees its range lists. */
void tcp_flow_stop(tcp_flow *f);
/* Bytes delivered in order to the receiver. */
static inline uint64_t tcp_flow_delivered(const tcp_flow *f) { return f->rcv_nxt; }

#endif
