/*
 * pcapw.c - pcap output (see pcapw.h).  libpcap writes the file; the
 * Ethernet, IPv4 and TCP headers are built here from each record.
 */
#include "aisim/pcapw.h"

#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "aisim/units.h"

typedef struct rec {
    int64_t ts_ps;
    uint64_t seq;
    uint32_t flow_id, size_bytes, data_bytes, wnd_bytes;
    uint32_t sack[2][2];
    uint16_t flags;
    uint8_t kind;
} rec;

struct pcapw {
    rec *v;
    uint64_t n, cap, max, missed;
    void (*ends_of)(void *ctx, uint32_t flow_id, int *src, int *dst);
    void *ctx;
};

pcapw *pcapw_create(uint64_t max_packets,
                    void (*ends_of)(void *ctx, uint32_t flow_id, int *src, int *dst), void *ctx)
{
    pcapw *w = xcalloc(1, sizeof *w);
    w->max = max_packets;
    w->ends_of = ends_of;
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
    r->ts_ps = ts_ps;
    r->seq = p->seq;
    r->flow_id = p->flow_id;
    r->size_bytes = p->size_bytes;
    r->data_bytes = p->h.tcp.data_bytes;
    r->wnd_bytes = p->h.tcp.wnd_bytes;
    memcpy(r->sack, p->h.tcp.sack, sizeof r->sack);
    r->flags = p->flags;
    r->kind = p->kind;
}

uint64_t pcapw_count(const pcapw *w) { return w->n; }
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

/* Builds the headers of record r into b; returns their length. */
static int frame(const pcapw *w, const rec *r, uint8_t *b)
{
    int src, dst;
    w->ends_of(w->ctx, r->flow_id, &src, &dst);
    int data = r->kind == PKT_DATA;
    int from = data ? src : dst, to = data ? dst : src;
    uint16_t sport = (uint16_t)(10000 + r->flow_id % 50000), dport = 5001;
    if (!data) {
        uint16_t t = sport;
        sport = dport;
        dport = t;
    }
    int nsack = 0;
    for (int i = 0; i < 2; i++)
        nsack += r->sack[i][1] > r->sack[i][0];
    int tcp_len = 20 + (nsack ? 4 + 8 * nsack : 0);
    memset(b, 0, 14 + 20 + tcp_len);
    /* Ethernet */
    mac_of(b, to);
    mac_of(b + 6, from);
    put16(b + 12, 0x0800);
    /* IPv4 */
    uint8_t *ip = b + 14;
    ip[0] = 0x45;
    ip[1] = (r->flags & PKT_F_CE) ? 3 : (r->flags & PKT_F_ECT) ? 2 : 0;
    uint32_t total = r->size_bytes > (uint32_t)(20 + tcp_len) ? r->size_bytes
                                                              : (uint32_t)(20 + tcp_len);
    put16(ip + 2, (uint16_t)(total > 65535 ? 65535 : total));
    put16(ip + 6, 0x4000);                      /* don't fragment */
    ip[8] = 64;
    ip[9] = 6;
    put32(ip + 12, ip_of(from));
    put32(ip + 16, ip_of(to));
    put16(ip + 10, ip_checksum(ip, 20));
    /* TCP */
    uint8_t *tcp = ip + 20;
    put16(tcp, sport);
    put16(tcp + 2, dport);
    uint8_t fl = 0x10;                          /* ACK */
    if (data) {
        put32(tcp + 4, (uint32_t)(r->seq + 1));
        put32(tcp + 8, 1);
        fl |= 0x08;                             /* PSH */
    } else {
        put32(tcp + 4, 1);
        put32(tcp + 8, (uint32_t)(r->seq + 1));
    }
    if (r->flags & PKT_F_ECE)
        fl |= 0x40;
    if (r->flags & PKT_F_CWR)
        fl |= 0x80;
    tcp[12] = (uint8_t)((tcp_len / 4) << 4);
    tcp[13] = fl;
    /* ACKs carry the receiver's advertised window; our data segments carry
     * none (the reverse direction has no receive buffer to advertise), so
     * they show the largest value rather than a misleading zero window. */
    uint32_t wnd = data ? 65535 : r->wnd_bytes >> 7;
    put16(tcp + 14, (uint16_t)(wnd > 65535 ? 65535 : wnd));
    if (nsack) {                                /* NOP NOP SACK */
        uint8_t *o = tcp + 20;
        o[0] = o[1] = 1;
        o[2] = 5;
        o[3] = (uint8_t)(2 + 8 * nsack);
        int k = 0;
        for (int i = 0; i < 2; i++) {
            if (r->sack[i][1] <= r->sack[i][0])
                continue;
            put32(o + 4 + 8 * k, (uint32_t)(r->seq + 1 + r->sack[i][0]));
            put32(o + 8 + 8 * k, (uint32_t)(r->seq + 1 + r->sack[i][1]));
            k++;
        }
    }
    return 14 + 20 + tcp_len;
}

int pcapw_write(pcapw *w, FILE *f, err *e)
{
    pcap_t *pd = pcap_open_dead(DLT_EN10MB, 65535);
    if (!pd)
        return ERR(e, AISIM_EIO, "libpcap: cannot open a capture handle");
    pcap_dumper_t *d = pcap_dump_fopen(pd, f);
    if (!d) {
        int r = ERR(e, AISIM_EIO, "libpcap: %s", pcap_geterr(pd));
        pcap_close(pd);
        return r;
    }
    uint8_t b[128];
    for (uint64_t i = 0; i < w->n; i++) {
        const rec *r = &w->v[i];
        struct pcap_pkthdr h;
        int len = frame(w, r, b);
        h.ts.tv_sec = (time_t)(r->ts_ps / PS_PER_S);
        h.ts.tv_usec = (suseconds_t)((r->ts_ps % PS_PER_S) / PS_PER_US);
        h.caplen = (bpf_u_int32)len;
        h.len = (bpf_u_int32)(14 + (r->size_bytes > (uint32_t)(len - 14) ? r->size_bytes
                                                                          : (uint32_t)(len - 14)));
        pcap_dump((u_char *)d, &h, b);
    }
    /* pcap_dump_close() would fclose f, which the run directory owns; a
     * dumper opened on a FILE holds nothing else, so flushing is enough. */
    int bad = pcap_dump_flush(d) != 0;
    pcap_close(pd);
    return bad ? ERR(e, AISIM_EIO, "writing the capture failed") : 0;
}
