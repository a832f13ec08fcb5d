/*
 * rdma_pcap.c - how a capture shows a RoCEv2 packet (transport.h's pcap
 * hook, pcapw.h): UDP to 4791 with the InfiniBand BTH, and the RETH or
 * AETH, so that Wireshark's dissector decodes it as RoCEv2.
 */
#include "aisim/rdma.h"
#include "rdma_int.h"

static void put24(uint8_t *b, uint64_t v)
{
    b[0] = (uint8_t)(v >> 16);
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)v;
}

/* UDP to 4791 with the BTH (and RETH or AETH): IB opcodes of the RC
 * transport (SEND/WRITE first, middle, last, only; READ request and
 * response; ACKNOWLEDGE; CNP 0x81), destination QP = connection id. */
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
        if (qp->k->verb == RDMA_WRITE && first)
            n += 16;            /* RETH: address 0, rkey 0, length */
        if (qp->k->verb == RDMA_WRITE && first) {
            uint64_t len = 0;
            for (size_t i = qp->mh; i < qp->mn; i++)
                if (qp->m[i].first_psn == p->seq)
                    len = qp->m[i].end - qp->m[i].start;
            b[24] = (uint8_t)(len >> 24);
            b[25] = (uint8_t)(len >> 16);
            b[26] = (uint8_t)(len >> 8);
            b[27] = (uint8_t)len;
        }
    } else if (op == RDMA_OP_CNP) {
        opc = 0x81;
    } else if (op == RDMA_OP_READ_REQ) {
        opc = 0x0c;
        n += 16;
    } else {
        n += 4;                 /* AETH: syndrome, MSN */
        b[12] = op == RDMA_OP_NACK ? 0x60 : 0x1f;   /* NAK: PSN sequence error; ACK */
    }
    b[0] = opc;
    b[1] = 0x40;                /* migration state; pad 0, version 0 */
    b[2] = b[3] = 0xff;         /* default partition key */
    put24(b + 5, c->id + 1);
    b[8] = op == RDMA_OP_DATA && p->h.rdma.last ? 0x80 : 0;    /* AckReq */
    put24(b + 9, p->seq & 0xffffff);
    h->nextra = (uint8_t)n;
}

