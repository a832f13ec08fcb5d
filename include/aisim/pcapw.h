/*
 * pcapw.h - packet captures of chosen hosts, written with libpcap.
 *
 * A capture keeps a compact record of each packet a host sends or receives
 * (time, hosts, size, ECN bits, and the transport header its transport
 * describes: pcap_l4) and, at the end of the run, writes a classic pcap
 * file (LINKTYPE_ETHERNET) in which each record becomes a real Ethernet /
 * IPv4 / TCP or UDP header: addresses 10.<host/256>.<host%256>.1 and MACs
 * 02:00:00:00:<host>, the ECN bits in the IP header (ECT(0), CE), and the
 * transport's fields (for TCP, transport/tcp_transport.c: ports 10000 +
 * (connection id mod 50000) at the sender and 5001 at the receiver,
 * sequence numbers counting from an initial 0 (data byte n is sequence
 * n+1), ECE/CWR, the advertised window scaled by 2^7, as a window-scale
 * option would, and SACK options).  The
 * payload is not stored: each frame is captured up to its headers (caplen)
 * with its full length on the wire (len), as `tcpdump -s 96` would, so
 * Wireshark and tshark decode it; a transport that sets `whole` (datagrams,
 * RoCEv2) has its frames captured whole, the payload as zeros (and with
 * `icrc` the ICRC at the end), as UDP dissectors read the payload.
 * Timestamps have nanosecond precision (the nanosecond pcap format, magic
 * 0xa1b23c4d), truncated from the simulator's picoseconds.
 *
 * Records are kept in memory up to a limit; packets beyond it are counted,
 * not captured.
 */
#ifndef AISIM_PCAPW_H
#define AISIM_PCAPW_H

#include <stdint.h>
#include <stdio.h>

#include "aisim/err.h"
#include "aisim/pkt.h"
#include <stdbool.h>

typedef struct pcapw pcapw;

/* The transport header of a captured packet, as a pcap writer lays it out
 * (pcapw.h): which protocol and its fields. */
typedef struct pcap_l4 {
    uint8_t proto;              /* 6: TCP, 17: UDP */
    uint8_t tcp_flags;          /* TCP flag byte (ACK 0x10, PSH 0x08, ECE, CWR) */
    uint8_t nsack;              /* TCP SACK blocks in sack[] */
    bool reverse;               /* travels dst -> src (an ACK) */
    uint16_t sport, dport;      /* ports as the packet carries them */
    uint16_t wnd;               /* TCP window field as written */
    uint32_t seq, ack;          /* TCP sequence and acknowledgement numbers */
    uint32_t sack[2][2];        /* TCP SACK blocks, absolute */
    uint8_t nextra;             /* UDP: bytes of extra[] written after the UDP
                                   header (RoCEv2: BTH, RETH or AETH), <= 32 */
    uint8_t extra[32];
    uint8_t l2_bytes;           /* bytes of the packet's size that are Ethernet
                                   header and FCS (RoCEv2: 18), not IP */
    bool whole;                 /* UDP: the whole frame is captured, payload as
                                   zeros (a UDP dissector reads the payload:
                                   a truncated one is a short frame) */
    bool icrc;                  /* UDP, whole: the payload ends in RoCEv2's
                                   invariant CRC (computed by the writer) */
} pcap_l4;

/* A capture of up to max_packets records.  `describe(ctx, p, &from, &to,
 * &h)` gives the hosts a packet travels between and its transport header,
 * as the packet's transport lays it out (transport.h). */
pcapw *pcapw_create(uint64_t max_packets,
                    void (*describe)(void *ctx, const pkt *p, int *from, int *to, pcap_l4 *h),
                    void *ctx);
void pcapw_destroy(pcapw *w);

/* Records packet p at time ts_ps. */
void pcapw_add(pcapw *w, int64_t ts_ps, const pkt *p);

uint64_t pcapw_missed(const pcapw *w);      /* packets over the limit */

/* Writes the records as a pcap stream to f (which the caller owns). */
int pcapw_write(pcapw *w, FILE *f, err *e);

#endif
