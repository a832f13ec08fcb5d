/*
 * rdma.h - RoCEv2 over the fabric (docs/rdma.md): reliable-connection queue
 * pairs on the transport interface (transport.h), the NIC that pulls from
 * them, and congestion control as an ops table.
 *
 * A connection of the `rocev2` transport is a queue pair (QP) from a
 * requester NIC to a responder NIC.  Its messages (RDMA WRITE, SEND, or
 * READ: a request from the destination, answered by a response stream) are
 * cut into packets of at most `mtu` bytes on the wire, each with a packet
 * sequence number (PSN, pkt.seq).  The receiver acknowledges every
 * `ack_interval` packets and at the end of each message, answers a gap with
 * a NACK and, when a data packet carries ECN's CE mark, returns a CNP at
 * most once per `cnp_interval`.  Loss recovery is go-back-N (the receiver
 * drops what is out of order and NACKs the first gap once; the sender
 * resends from it) or selective repeat (IRN: the receiver places
 * out-of-order packets by PSN, each NACK carries the PSN that arrived, the
 * sender resends only the holes); a retransmission timeout backs both up.
 *
 * The NIC (rdma_nic.c) is a pulling source of its host port (port.h): when
 * the link is free and the QPs' class is not paused by PFC, it takes the
 * next packet from its active QPs in (weighted) round robin, each QP paced
 * at its congestion-control rate and limited in packets outstanding.
 *
 * For other transports built on these QPs (Stellar's multi-path one):
 *  - the path of a data packet is chosen by qp->path (default: the QP's
 *    ECMP route, or the network's spraying), which may set pkt.entropy;
 *  - congestion control is an rdma_cc_ops table: one file per algorithm;
 *  - selective repeat's receiver accepts packets in any order.
 */
#ifndef AISIM_RDMA_H
#define AISIM_RDMA_H

#include <stdbool.h>
#include <stdint.h>

#include "aisim/hook.h"
#include "aisim/port.h"
#include "aisim/transport.h"

/* RoCEv2 framing, bytes (docs/rdma.md): Ethernet 14 + FCS 4, IPv4 20,
 * UDP 8, BTH 12, ICRC 4; ACK/NACK add an AETH of 4, a CNP 16 reserved. */
#define RDMA_HDR_BYTES 62
#define RDMA_ACK_BYTES (RDMA_HDR_BYTES + 4)
#define RDMA_CNP_BYTES (RDMA_HDR_BYTES + 16)
#define RDMA_UDP_PORT 4791

enum rdma_op { RDMA_OP_DATA, RDMA_OP_ACK, RDMA_OP_NACK, RDMA_OP_CNP, RDMA_OP_READ_REQ };
enum rdma_verb { RDMA_WRITE, RDMA_SEND, RDMA_READ };
enum rdma_recovery { RDMA_GO_BACK_N, RDMA_SELECTIVE };

typedef struct rdma_qp rdma_qp;
typedef struct rdma_nic rdma_nic;
typedef struct rdma_tp rdma_tp;

/* Congestion control: per-QP state of state_size bytes (zeroed), events,
 * and the result in qp->rate_bps (pacing) and qp->wnd_bytes (0: none). */
typedef struct rdma_rec_ops rdma_rec_ops;
typedef struct rdma_cc_ops {
    const char *name;
    size_t state_size;
    void (*init)(rdma_qp *qp, void *st);
    /* A data packet leaves (byte counters). */
    void (*on_send)(rdma_qp *qp, void *st, const pkt *p);
    /* An ACK arrives (after the QP processed it); newly: bytes it acked. */
    void (*on_ack)(rdma_qp *qp, void *st, const pkt *ack, uint64_t newly);
    void (*on_cnp)(rdma_qp *qp, void *st);
    void (*on_nack)(rdma_qp *qp, void *st);
    /* Disarms its timers. */
    void (*stop)(rdma_qp *qp, void *st);
    /* Loss recovery kept by the CC's layer instead of the QP's (NULL: the
     * QP's go-back-N or selective repeat): Stellar's multi-path core. */
    const rdma_rec_ops *rec;
} rdma_cc_ops;

/* A sender scoreboard outside the QP (st: the CC state).  The QP still
 * segments, keeps snd_una from the cumulative ACKs and completes messages;
 * the scoreboard says which PSN goes next (a resend or a new one below
 * `limit`), sees every ACK and NACK, and keeps its own timeouts (the QP's
 * RTO timer stays off).  It sets the path through qp->path. */
struct rdma_rec_ops {
    /* True when a packet may go now (window, resends). */
    bool (*ready)(rdma_qp *qp, void *st, uint64_t limit);
    /* The PSN of the packet going now (ready() was true). */
    uint64_t (*take)(rdma_qp *qp, void *st, uint64_t limit);
    /* An ACK or NACK arrived (before the QP's own processing). */
    void (*ack)(rdma_qp *qp, void *st, const pkt *ack);
};

extern const rdma_cc_ops rdma_cc_none, rdma_cc_dcqcn, rdma_cc_hpcc, rdma_cc_timely,
    rdma_cc_dctcp;

/* `window`: none, or one bandwidth-delay product (line rate x the largest
 * base RTT of the QPs started) of bytes in flight per QP, as the HPCC
 * fork's HAS_WIN 1 / GLOBAL_T 1 give every QP ("DCQCN+win"); with
 * var_window that window times rate / line rate (its VAR_WIN 1).  HPCC
 * keeps its own window and ignores it. */
enum rdma_window { RDMA_WINDOW_NONE, RDMA_WINDOW_BDP };

/* The transport's keys (bound from `net.transport`). */
typedef struct rdma_keys {
    int64_t mtu;                /* bytes per packet on the wire, headers included */
    int recovery;               /* enum rdma_recovery */
    int verb;                   /* enum rdma_verb */
    int64_t ack_interval;       /* packets per coalesced ACK */
    int64_t rto_ps;
    int64_t max_rto;            /* timeouts in a row before the QP gives up */
    int64_t max_outstanding;    /* packets in flight per QP, 0: no limit */
    int window;                 /* enum rdma_window: a BDP window for rate-based CCs */
    bool var_window;            /* ... scaled by the QP's rate / line rate */
    int64_t window_bytes;       /* ... of this many bytes at line rate; 0: the BDP */
    int64_t nic_pps;            /* NIC packet-rate cap, 0: none */
    int64_t nic_rate_bps;       /* NIC processing-rate cap, 0: none */
    bool lossless;              /* RDMA's class must run PFC */
    int cc;                     /* index in rdma_ccs[] */
    int64_t cnp_interval_ps;
    int64_t min_rate_bps;
    int64_t sample_ps;          /* rdma_rate.csv period, 0: off */
    int64_t sample_qps;         /* QPs sampled (the first ones) */
    /* DCQCN */
    double dcqcn_g;
    int64_t dcqcn_alpha_interval_ps, dcqcn_timer_ps, dcqcn_byte_counter, dcqcn_rai_bps,
        dcqcn_rhai_bps, dcqcn_fast_recovery, dcqcn_decrease_interval_ps;
    bool dcqcn_clamp_target;
    double dcqcn_start_rate;
    /* HPCC */
    double hpcc_eta;
    int64_t hpcc_max_stage, hpcc_wai_bytes;
    /* TIMELY */
    int64_t timely_tlow_ps, timely_thigh_ps, timely_min_rtt_ps, timely_hai_n;
    double timely_alpha, timely_beta;
    /* DCTCP over RoCE */
    int64_t dctcp_rai_bps;
    /* `multipath:`, the section of a transport wrapping this one (Stellar's
     * stellar_rocev2); rocev2 alone refuses it.  NULL: none */
    cfg_node *multipath;
} rdma_keys;

/* A message's packets: PSNs [first_psn, first_psn + ceil(bytes / payload)). */
typedef struct rdma_msg {
    uint64_t first_psn, start, end;     /* bytes [start, end) of the stream */
    uint8_t ready;              /* READ: the request has arrived */
    int64_t req_ps;             /* READ: when the request was sent (<0: not yet) */
} rdma_msg;

/* A set of PSNs from `base` on (a multiple of 64); PSNs below base are in
 * it (acknowledged / delivered). */
/* A QP's place in the ring of one NIC port pulling from it; a QP has one
 * per slot (the port's index among its host's ports, below RDMA_NIC_SLOTS),
 * so that the ports of a multi-homed RNIC pull from it alike. */
#define RDMA_NIC_SLOTS 4
typedef struct rdma_ring {
    rdma_qp *prev, *next;       /* in that NIC's ring while active */
    bool active;
} rdma_ring;

typedef struct rdma_bits {
    uint64_t *w;
    uint64_t base;
    size_t n;                   /* words */
} rdma_bits;

struct rdma_qp {
    conn c;                     /* first */
    sink tx, rx;                /* at the requester: ACK/NACK/CNP; at the responder: data */
    rdma_tp *tp;
    const rdma_keys *k;
    rdma_nic *nic;              /* the sending NIC (the first of ports[]) */
    rdma_nic *ports[RDMA_NIC_SLOTS];    /* the NIC ports that pull from it: its
                                   route's, or those rdma_qp_bind_ports() gave */
    uint8_t nports;
    uint8_t tx_port;            /* index in ports[] of the one pulling now */
    bool ports_bound;           /* ports[] set by rdma_qp_bind_ports(), kept
                                   across route changes */
    rdma_ring ring[RDMA_NIC_SLOTS];     /* by the NIC's slot */
    /* Chooses the path of data packet p (sets rt and hop, or dst_node and
     * entropy); default rdma_path_default. */
    void (*path)(rdma_qp *qp, pkt *p);
    void *path_ctx;
    uint32_t weight;            /* packets per round-robin turn, >= 1 */
    uint32_t turn;              /* left in this turn */
    /* messages */
    rdma_msg *m;
    size_t mh, mn, mcap;        /* messages [mh, mn) not yet acked */
    uint64_t size;              /* stream bytes */
    uint64_t psn_end;           /* PSNs of the stream so far */
    uint32_t payload;           /* bytes per full packet */
    /* sender */
    uint64_t snd_una, snd_nxt, snd_max;     /* PSNs: oldest unacked, next, highest sent+1 */
    rdma_bits sacked;           /* selective repeat: PSNs the receiver holds */
    uint64_t rtx_next, rtx_end; /* selective repeat: holes to resend in [rtx_next, rtx_end) */
    bool recovering;
    bool launched;
    uint64_t recover_to;
    int64_t rate_bps, line_bps; /* pacing rate (CC), the NIC's line rate */
    uint64_t wnd_bytes;         /* CC window, 0: none */
    int64_t next_tx_ps;         /* pacing: earliest next send */
    sim_timer rto;
    int64_t rto_due;            /* the timeout is due then (the timer may be earlier) */
    uint32_t gap_bytes;         /* pacing gap cache: size, rate -> gap */
    int64_t gap_rate, gap_ps;
    int64_t rtos_in_row;
    int64_t base_rtt_ps;
    /* receiver */
    uint64_t rcv_nxt;           /* next PSN expected in order */
    rdma_bits ooo;              /* selective repeat: arrived beyond rcv_nxt */
    uint64_t nack_psn;          /* go-back-N: the gap already NACKed (+1), 0: none */
    uint32_t since_ack;
    int64_t last_cnp_ps;        /* < 0: none yet */
    uint64_t delivered;         /* bytes in order at the receiver */
    size_t rdy;                 /* READ: first message whose request may not have arrived */
    /* counters */
    uint64_t st_pkts, st_rtx, st_timeouts, st_cnp_sent, st_cnp_rcvd, st_nacks, st_acks,
        st_ooo_drops, st_bytes_acked;
    int64_t st_first_ps, st_last_ack_ps;
    int64_t cnp_min_gap_ps;     /* shortest gap between two CNPs sent (test) */
    uint64_t st_cuts;           /* DCQCN: rate decreases */
    int64_t last_cut_ps, cut_min_gap_ps;  /* DCQCN: the last, the shortest gap (test) */
    bool aborted;
    /* congestion control */
    const rdma_cc_ops *cc;
    void *ccs;
    rdma_qp *live_prev, *live_next;  /* the transport's list of live QPs */
};

/* The default path: the QP's ECMP route, or the network's spraying. */
void rdma_path_default(rdma_qp *qp, pkt *p);
/* Weight of qp in its NIC's round robin (packets per turn, >= 1). */
void rdma_qp_set_weight(rdma_qp *qp, uint32_t w);
/* The QP has something to send (or its pacing allows it again). */
void rdma_qp_wake(rdma_qp *qp);
/* The `window: bdp` window of qp in bytes, at least 1 (enum rdma_window). */
uint64_t rdma_window_bytes(const rdma_qp *qp);

/* ---- for a transport that wraps rocev2 (Stellar's stellar_rocev2) ------
 * It calls rocev2_transport's setup and teardown around its own and acts
 * through these and the CC / loss-recovery ops (rdma_cc_ops), never by
 * writing a QP's or the transport's fields. */

/* rocev2's scenario keys (binding an rdma_keys), for a wrapper's own table. */
extern const cfg_key rdma_schema[];
/* Makes cc every QP's congestion control (in place of `cc:`); ctx is the
 * wrapper's, for the CC to read (rdma_tp_cc_ctx).  Call from setup. */
void rdma_tp_set_cc(rdma_tp *tp, const rdma_cc_ops *cc, void *ctx);
void *rdma_tp_cc_ctx(const rdma_tp *tp);
/* Selective repeat is required with `what` (a located error naming the
 * transport section's `recovery` otherwise). */
int rdma_need_selective(const rdma_tp *tp, const char *what, const cfg_node *sec,
                        const char *path, err *e);
/* The QP's pacing rate, CC window (0: none) and path hook (NULL: the
 * default, rdma_path_default). */
void rdma_qp_set_rate(rdma_qp *qp, int64_t rate_bps);
void rdma_qp_set_window(rdma_qp *qp, uint64_t wnd_bytes);
void rdma_qp_set_path(rdma_qp *qp, void (*path)(rdma_qp *qp, pkt *p), void *ctx);
/* The source host's NIC ports with a next hop toward the QP's destination
 * (in link id order: plane 0, plane 1 on a dual-plane fabric), at most max;
 * returns their count.  A QP whose packets are forwarded by entropy (its
 * path hook sets rt NULL) may be pulled by several of them: */
size_t rdma_qp_host_ports(rdma_qp *qp, port **res, size_t max);
/* ... the QP is pulled by these n ports (1..RDMA_NIC_SLOTS, from
 * rdma_qp_host_ports) instead of its route's, and its line rate is their
 * sum; the path hook reads which one pulls in qp->tx_port. */
void rdma_qp_bind_ports(rdma_qp *qp, port *const *q, size_t n);
/* The QP's timeout count (its loss recovery's, when a CC owns recovery). */
void rdma_qp_set_timeouts(rdma_qp *qp, uint64_t n);
/* Events a CC algorithm ignores. */
void rdma_cc_nop_send(rdma_qp *qp, void *st, const pkt *p);
void rdma_cc_nop_ack(rdma_qp *qp, void *st, const pkt *a, uint64_t newly);
void rdma_cc_nop(rdma_qp *qp, void *st);

/* ---- inside the transport (rdma*.c) ------------------------------------ */

/* The NIC of port q, slot its index among its host's ports (made on first
 * use), and its scheduler. */
rdma_nic *rdma_nic_of(rdma_tp *tp, port *q, int slot);
void rdma_nic_activate(rdma_nic *nic, rdma_qp *qp);
void rdma_nic_remove(rdma_nic *nic, rdma_qp *qp);
void rdma_nic_free_all(rdma_tp *tp);
/* Builds qp's next packet if it may send now: 1 (*p set), 0 (nothing to
 * send: leave the ring), or -1 (blocked until *at: pacing). */
int rdma_qp_next(rdma_qp *qp, pkt **p, int64_t *at);

/* The per-network state. */
struct rdma_tp {
    rdma_keys k;
    const rdma_cc_ops *cc;
    rdma_nic **nics;            /* by first use */
    size_t nnics;
    rdma_qp *live;              /* live QPs */
    /* finished QPs' rows */
    struct rdma_row *rows;
    size_t nrows, rcap;
    /* rate samples */
    struct rdma_rsample *rs;
    size_t nrs, rscap;
    /* HPCC telemetry records */
    struct rdma_int *ints;
    uint32_t nints, intcap, int_free;
    hook int_hook;
    topo *t;
    sim *s;
    sim_timer sampler;
    bool sampler_on;
    int64_t max_rtt_ps;         /* HPCC's T: the largest base RTT seen */
    void *cc_ctx;               /* a wrapping transport's context for its CC */
};

/* HPCC in-band telemetry: up to RDMA_INT_HOPS hops per packet. */
#define RDMA_INT_HOPS 8
typedef struct rdma_int_hop {
    int64_t ts_ps, rate_bps;
    uint64_t tx_bytes;
    uint32_t qlen;
} rdma_int_hop;
struct rdma_int {
    uint32_t n, next_free;
    rdma_int_hop hop[RDMA_INT_HOPS];
};
/* The telemetry of packet p, or NULL. */
const struct rdma_int *rdma_int_of(const rdma_qp *qp, const pkt *p);

#endif
