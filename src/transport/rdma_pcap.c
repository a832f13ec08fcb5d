/*
 * rdma_pcap.c - how a capture shows a RoCEv2 packet (transport.h's pcap
 * hook, pcapw.h): UDP to 4791 with the InfiniBand BTH, and the RETH or
 * AETH, so that Wireshark's dissector decodes it as RoCEv2: no LRH (the
 * RoCEv2 encapsulation has none), the frame captured whole with its ICRC
 * (pcapw.c computes it), and the RETH of a WRITE's first packet and of a
 * READ request naming the message: virtual address VA_BASE * (QP number)
 * plus the message's offset in the QP's stream, rkey 0x100 + the QP
 * number, and the message's length.  The addresses are made up (the
 * simulator has no memory), but each message has its own, as in a trace.
 */
#include "aisim/rdma.h"
#include "rdma_int.h"

static void put24(uint8_t *b, uint64_t v)
{
    b[0] = (uint8_t)(v >> 16);
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)v;
}

/* The destination QP number a connection's packets carry: above QP0 and
 * QP1, which InfiniBand reserves for management datagrams (a dissector
 * decodes their payload as MADs). */
#define RDMA_PCAP_QPN(c) ((uint64_t)(c)->id + 0x10)

static void put32(uint8_t *b, uint64_t v)
{
    put24(b + 1, v);
    b[0] = (uint8_t)(v >> 24);
}

/* The RETH (virtual address, rkey, length) of the message whose first
 * packet has PSN psn, at b. */
static void put_reth(uint8_t *b, const rdma_qp *qp, uint64_t qpn, uint64_t psn)
{
    uint64_t len = 0, off = 0;
    for (size_t i = qp->mh; i < qp->mn; i++)
        if (qp->m[i].first_psn == psn) {
            len = qp->m[i].end - qp->m[i].start;
            off = qp->m[i].start;
        }
    uint64_t va = ((uint64_t)1 << 40) * (qpn & 0xffff) + off;
    put32(b, va >> 32);
    put32(b + 4, va & 0xffffffffu);
    put32(b + 8, 0x100 + qpn);
    put32(b + 12, len > 0xffffffffu ? 0xffffffffu : len);     /* a flow without end: all ones */
}

/* UDP to 4791 with the BTH (and RETH or AETH): IB opcodes of the RC
 * transport (SEND/WRITE first, middle, last, only; READ request and
 * response; ACKNOWLEDGE; CNP 0x81), destination QP = 0x10 + connection id. */
void rdma_pcap(const conn *c, const pkt *p, pcap_l4 *h)
{
    const rdma_qp *qp = (const rdma_qp *)c;
    uint8_t op = p->h.rdma.op;
    h->proto = 17;
    h->reverse = op != RDMA_OP_DATA;
    h->sport = (uint16_t)(49152 + (c->path_key >> 7) % 16384);
    h->dport = RDMA_UDP_PORT;
    h->l2_bytes = 18;           /* the Ethernet header and FCS are in the size */
    uint8_t *b = h->extra;
    uint8_t opc = 0x11;         /* ACKNOWLEDGE */
    size_t n = 12;
    if (op == RDMA_OP_DATA) {
        bool first = p->h.rdma.aux & 1, last = p->h.rdma.last;
        static const uint8_t base[] = {0x06, 0x00, 0x0d};    /* WRITE, SEND, READ resp */
        uint8_t o = base[qp->k->verb];
        if (qp->k->verb == RDMA_READ)
            opc = first && last ? 0x10 : first ? 0x0d : last ? 0x0f : 0x0e;
        else
            opc = (uint8_t)(first && last ? o + 4 : first ? o : last ? o + 2 : o + 1);
        if (qp->k->verb == RDMA_WRITE && first) {
            put_reth(b + 12, qp, RDMA_PCAP_QPN(c), p->seq);
            n += 16;
        }
    } else if (op == RDMA_OP_CNP) {
        opc = 0x81;
    } else if (op == RDMA_OP_READ_REQ) {
        opc = 0x0c;
        put_reth(b + 12, qp, RDMA_PCAP_QPN(c), p->seq);
        n += 16;
    } else {
        n += 4;                 /* AETH: syndrome, MSN */
        b[12] = op == RDMA_OP_NACK ? 0x60 : 0x1f;   /* NAK: PSN sequence error; ACK */
    }
    b[0] = opc;
    b[1] = 0x40;                /* migration state; pad 0, version 0 */
    b[2] = b[3] = 0xff;         /* default partition key */
    put24(b + 5, RDMA_PCAP_QPN(c));
    b[8] = op == RDMA_OP_DATA && p->h.rdma.last ? 0x80 : 0;    /* AckReq */
    put24(b + 9, p->seq & 0xffffff);
    h->nextra = (uint8_t)n;
    h->whole = h->icrc = true;
}

