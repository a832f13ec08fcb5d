/*
 * pcapw.h - packet captures of chosen hosts, written with libpcap.
 *
 * A capture keeps a compact record of each packet a host sends or receives
 * (time, flow, sequence numbers, flags, window, SACK blocks, sizes) and, at
 * the end of the run, writes a classic pcap file (LINKTYPE_ETHERNET) in
 * which each record becomes a real Ethernet / IPv4 / TCP header: addresses
 * 10.<host/256>.<host%256>.1 and MACs 02:00:00:00:<host>, ports 10000 +
 * (flow id mod 50000) at the sender and 5001 at the receiver, the ECN bits
 * in the IP header (ECT(0), CE), ECE/CWR in TCP, sequence numbers counting
 * from an initial 0 (data byte n is sequence n+1), the advertised window
 * (scaled by 2^7, as a window-scale option would), and SACK options.  The
 * payload is not stored: each frame is captured up to its headers (caplen)
 * with its full length on the wire (len), as `tcpdump -s 96` would, so
 * Wireshark and tshark decode it.
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

typedef struct pcapw pcapw;

/* A capture of up to max_packets records.  `ip_of(ctx, flow_id, &src,
 * &dst)` gives the host indices at the two ends of a flow. */
pcapw *pcapw_create(uint64_t max_packets,
                    void (*ends_of)(void *ctx, uint32_t flow_id, int *src_host, int *dst_host),
                    void *ctx);
void pcapw_destroy(pcapw *w);

/* Records packet p at time ts_ps. */
void pcapw_add(pcapw *w, int64_t ts_ps, const pkt *p);

uint64_t pcapw_count(const pcapw *w);       /* records kept */
uint64_t pcapw_missed(const pcapw *w);      /* packets over the limit */

/* Writes the records as a pcap stream to f (which the caller owns). */
int pcapw_write(pcapw *w, FILE *f, err *e);

#endif
