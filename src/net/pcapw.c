/*
 * pcapw.c - pcap output (see pcapw.h).  libpcap writes the file; the
 * Ethernet, IPv4 and TCP or UDP headers are built here from each record.
 */
#include "aisim/pcapw.h"

#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "aisim/units.h"

typedef struct rec {
    int64_t ts_ps;
    uint32_t size_bytes;
    int32_t from, to;           /* hosts */
    uint16_t flags;             /* PKT_F_* (the ECN bits are written) */
    pcap_l4 h;
} rec;

struct pcapw {
    rec *v;
    uint64_t n, cap, max, missed;
    void (*describe)(void *ctx, const pkt *p, int *from, int *to, pcap_l4 *h);
    void *ctx;
};

pcapw *pcapw_create(uint64_t max_packets,
                    void (*describe)(void *ctx, const pkt *p, int *from, int *to, pcap_l4 *h),
                    void *ctx)
{
    pcapw *w = xcalloc(1, sizeof *w);
    w->max = max_packets;
    w->describe = describe;
    w->ctx = ctx;
    return w;
}

void pcapw_destroy(pcapw *w)
{
    if (!w)
        return;
    free(w->v);
    free(w);
}

void pcapw_add(pcapw *w, int64_t ts_ps, const pkt *p)
{
    if (w->n >= w->max) {
        w->missed++;
        return;
    }
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 1024;
        w->v = xrealloc(w->v, w->cap * sizeof *w->v);
    }
    rec *r = &w->v[w->n++];
    int from, to;
    w->describe(w->ctx, p, &from, &to, &r->h);
    r->ts_ps = ts_ps;
    r->size_bytes = p->size_bytes;
    r->from = from;
    r->to = to;
    r->flags = p->flags;
}

uint64_t pcapw_missed(const pcapw *w) { return w->missed; }

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)(v >> 16));
    put16(b + 2, (uint16_t)v);
}

static void mac_of(uint8_t *m, int host)
{
    m[0] = 0x02;
    m[1] = m[2] = m[3] = 0;
    m[4] = (uint8_t)(host >> 8);
    m[5] = (uint8_t)host;
}

static uint32_t ip_of(int host)
{
    return (10u << 24) | ((uint32_t)(host >> 8) & 0xff) << 16 | ((uint32_t)host & 0xff) << 8 | 1;
}

static uint16_t ip_checksum(const uint8_t *h, int len)
{
    uint32_t s = 0;
    for (int i = 0; i < len; i += 2)
        s += (uint32_t)h[i] << 8 | h[i + 1];
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

/* The largest frame written: an IPv4 packet of 64 KiB and its Ethernet header. */
enum { FRAME_MAX = 14 + 65535 };

/* RoCEv2's invariant CRC (IBTA Annex A17) over the IP packet at ip of
 * `total` bytes, the last 4 of which receive it: CRC-32 of 8 bytes of ones
 * (the LRH RoCEv2 does not carry) and the packet with the fields a router
 * may change masked to ones (DSCP/ECN, TTL, header checksum, UDP checksum,
 * the BTH's reserved byte); little-endian, as Linux's rxe stores it. */
static void put_icrc(uint8_t *ip, uint32_t total)
{
    static uint8_t m[65535 + 8];
    memset(m, 0xff, 8);
    memcpy(m + 8, ip, total - 4);
    uint8_t *mi = m + 8;
    mi[1] = 0xff;                               /* TOS */
    mi[8] = 0xff;                               /* TTL */
    mi[10] = mi[11] = 0xff;                     /* header checksum */
    mi[26] = mi[27] = 0xff;                     /* UDP checksum */
    mi[28 + 4] = 0xff;                          /* BTH resv8a */
    uint32_t c = (uint32_t)crc32(0, m, (uInt)(8 + total - 4));
    uint8_t *o = ip + total - 4;
    o[0] = (uint8_t)c;
    o[1] = (uint8_t)(c >> 8);
    o[2] = (uint8_t)(c >> 16);
    o[3] = (uint8_t)(c >> 24);
}

/* Builds the frame of record r into b (FRAME_MAX bytes); returns the bytes
 * captured: the headers, or the whole frame when h->whole. */
static int frame(const rec *r, uint8_t *b)
{
    const pcap_l4 *h = &r->h;
    int tcp = h->proto != 17;
    int nx = tcp ? 0 : (h->nextra < 32 ? h->nextra : 32);
    int whole = !tcp && h->whole, icrc = whole && h->icrc;
    int l4_len = tcp ? 20 + (h->nsack ? 4 + 8 * h->nsack : 0) : 8 + nx + (icrc ? 4 : 0);
    memset(b, 0, 14 + 20 + (size_t)l4_len);
    /* Ethernet */
    mac_of(b, r->to);
    mac_of(b + 6, r->from);
    put16(b + 12, 0x0800);
    /* IPv4 */
    uint8_t *ip = b + 14;
    ip[0] = 0x45;
    ip[1] = (r->flags & PKT_F_CE) ? 3 : (r->flags & PKT_F_ECT) ? 2 : 0;
    uint32_t ip_size = r->size_bytes - (r->size_bytes > h->l2_bytes ? h->l2_bytes : 0);
    uint32_t total = ip_size > (uint32_t)(20 + l4_len) ? ip_size : (uint32_t)(20 + l4_len);
    if (total > 65535)
        total = 65535;
    put16(ip + 2, (uint16_t)total);
    put16(ip + 6, 0x4000);                      /* don't fragment */
    ip[8] = 64;
    ip[9] = tcp ? 6 : 17;
    put32(ip + 12, ip_of(r->from));
    put32(ip + 16, ip_of(r->to));
    put16(ip + 10, ip_checksum(ip, 20));
    uint8_t *l4 = ip + 20;
    put16(l4, h->sport);
    put16(l4 + 2, h->dport);
    if (!tcp) {                                 /* UDP, no checksum */
        put16(l4 + 4, (uint16_t)(total - 20));
        memcpy(l4 + 8, h->extra, (size_t)nx);  /* e.g. RoCEv2's BTH */
        if (!whole)
            return 14 + 20 + 8 + nx;
        memset(l4 + 8 + nx, 0, total - 28 - (uint32_t)nx);     /* payload */
        if (icrc)
            put_icrc(ip, total);
        return 14 + (int)total;
    }
    put32(l4 + 4, h->seq);
    put32(l4 + 8, h->ack);
    l4[12] = (uint8_t)((l4_len / 4) << 4);
    l4[13] = h->tcp_flags;
    put16(l4 + 14, h->wnd);
    if (h->nsack) {                             /* NOP NOP SACK */
        uint8_t *o = l4 + 20;
        o[0] = o[1] = 1;
        o[2] = 5;
        o[3] = (uint8_t)(2 + 8 * h->nsack);
        for (int k = 0; k < h->nsack; k++) {
            put32(o + 4 + 8 * k, h->sack[k][0]);
            put32(o + 8 + 8 * k, h->sack[k][1]);
        }
    }
    return 14 + 20 + l4_len;
}

int pcapw_write(pcapw *w, FILE *f, err *e)
{
    pcap_t *pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
                                                      PCAP_TSTAMP_PRECISION_NANO);
    if (!pd)
        return ERR(e, AISIM_EIO, "libpcap: cannot open a capture handle");
    pcap_dumper_t *d = pcap_dump_fopen(pd, f);
    if (!d) {
        int r = ERR(e, AISIM_EIO, "libpcap: %s", pcap_geterr(pd));
        pcap_close(pd);
        return r;
    }
    uint8_t *b = xmalloc(FRAME_MAX);
    for (uint64_t i = 0; i < w->n; i++) {
        const rec *r = &w->v[i];
        struct pcap_pkthdr h;
        int len = frame(r, b);
        h.ts.tv_sec = (time_t)(r->ts_ps / PS_PER_S);
        /* nanoseconds in tv_usec: the handle's precision is nano */
        h.ts.tv_usec = (suseconds_t)((r->ts_ps % PS_PER_S) / PS_PER_NS);
        h.caplen = (bpf_u_int32)len;
        uint32_t ip_size = r->size_bytes - (r->size_bytes > r->h.l2_bytes ? r->h.l2_bytes : 0);
        h.len = (bpf_u_int32)(14 + (ip_size > (uint32_t)(len - 14) ? ip_size
                                                                   : (uint32_t)(len - 14)));
        pcap_dump((u_char *)d, &h, b);
    }
    free(b);
    /* pcap_dump_close() would fclose f, which the run directory owns; a
     * dumper opened on a FILE holds nothing else, so flushing is enough. */
    int bad = pcap_dump_flush(d) != 0;
    pcap_close(pd);
    return bad ? ERR(e, AISIM_EIO, "writing the capture failed") : 0;
}
