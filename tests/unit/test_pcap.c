/*
 * test_pcap.c - the captures (pcapw.c and the transports' pcap ops) as
 * Wireshark reads them: each capture is decoded by tshark, which must find
 * no malformed or short frame and no expert error; RoCEv2 frames carry the
 * BTH without an LRH, a RETH with a virtual address, an rkey and a length
 * on a WRITE's first packet, an AETH on ACKs and the ICRC; timestamps are in
 * nanoseconds (the nanosecond pcap magic, and back-to-back 100 Gbps frames
 * 85 ns apart each keep their own time).
 *
 * tshark comes from `scripts/deps.sh tshark` (make test runs it); where it
 * is not installed the decoding tests are skipped and say why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run.h"
#include "testutil.h"

static int have_tshark(void)
{
    if (system("tshark --version >/dev/null 2>&1") == 0)
        return 1;
    print_message("skipped: tshark is not installed (scripts/deps.sh tshark installs it)\n");
    return 0;
}

/* The lines tshark prints for `args` on the capture at path (free it). */
static char *tshark(const char *path, const char *args)
{
    char cmd[1024], out[300];
    snprintf(out, sizeof out, "%s/tshark.out", tu_tmp);
    snprintf(cmd, sizeof cmd, "tshark -r '%s' %s > '%s' 2>/dev/null", path, args, out);
    if (system(cmd) != 0)
        fail_msg("tshark failed: %s", cmd);
    return tu_slurp(out, NULL);
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Runs scenario with a capture of h0 and checks tshark's decoding; returns
 * the capture's path in p. */
static void capture(const char *scenario, const char *sub, const char **sets, int nsets,
                    char *p, size_t n)
{
    json_decref(tu_run(scenario, sub, sets, nsets));
    snprintf(p, n, "%s/%s/h0.pcap", tu_tmp, sub);
    /* The nanosecond format: magic 0xa1b23c4d in the writer's byte order. */
    size_t len;
    char *b = tu_slurp(p, &len);
    assert_true(len > 24);
    uint32_t magic;
    memcpy(&magic, b, 4);
    assert_int_equal(magic, 0xa1b23c4du);
    free(b);
}

static void assert_clean(const char *p)
{
    char *all = tshark(p, "");
    char *bad = tshark(p, "-Y '_ws.malformed or _ws.short or _ws.expert.severity == error'");
    assert_true(lines(all) > 100);
    if (*bad)
        fail_msg("%s: %zu of %zu frames malformed, short or with an expert error, e.g.\n%.400s",
                 p, lines(bad), lines(all), bad);
    free(all);
    free(bad);
}

static void test_roce_frames_decode_without_errors(void **state)
{
    (void)state;
    if (!have_tshark())
        skip();
    char p[300];
    const char *sets[] = {"net.pcap=[h0]", "stop=200us"};
    capture("rdma/dcqcn-two-to-one", "roce", sets, 2, p, sizeof p);
    assert_clean(p);
    /* No LRH: RoCEv2 carries the BTH straight after UDP 4791. */
    char *o = tshark(p, "-Y 'infiniband.lrh'");
    assert_string_equal(o, "");
    free(o);
    /* The first packet of the WRITE: RETH with an address, key and length
     * (a flow without end: all ones), and the ICRC. */
    o = tshark(p, "-Y 'infiniband.reth' -T fields -e infiniband.reth.va -e infiniband.reth.r_key "
                  "-e infiniband.reth.dmalen -e infiniband.invariant.crc");
    char va[64], key[64];
    unsigned long long len;
    assert_int_equal(sscanf(o, "%63s %63s %llu", va, key, &len), 3);
    assert_string_not_equal(va, "0x0000000000000000");
    assert_string_not_equal(key, "0x00000000");
    assert_int_equal(len, 0xffffffffu);
    free(o);
    /* Every ACK has its AETH, every frame its ICRC. */
    char *acks = tshark(p, "-Y 'infiniband.bth.opcode == 17'");
    char *aeth = tshark(p, "-Y 'infiniband.bth.opcode == 17 and infiniband.aeth'");
    char *all = tshark(p, ""), *crc = tshark(p, "-Y 'infiniband.invariant.crc'");
    assert_true(lines(acks) > 10);
    assert_int_equal(lines(acks), lines(aeth));
    assert_int_equal(lines(all), lines(crc));
    free(acks);
    free(aeth);
    free(crc);
    /* Nanoseconds: the 1 KB frames 85 ns apart at 100 Gbps keep distinct
     * times (a data frame and the ACK sent at its arrival share one). */
    char *ts = tshark(p, "-T fields -e frame.time_epoch"), *u = ts;
    size_t distinct = 0;
    char prev[64] = "";
    for (char *l = strtok(u, "\n"); l; l = strtok(NULL, "\n")) {
        distinct += strcmp(l, prev) != 0;
        snprintf(prev, sizeof prev, "%s", l);
    }
    assert_true(distinct * 2 >= lines(all) - 2);
    free(ts);
    free(all);
}

static void test_tcp_and_datagram_frames_decode_without_errors(void **state)
{
    (void)state;
    if (!have_tshark())
        skip();
    char p[300];
    const char *tcp[] = {"net.pcap=[h0]", "stop=5ms"};
    capture("net/dumbbell", "tcp", tcp, 2, p, sizeof p);
    assert_clean(p);
    const char *dg[] = {"net.pcap=[h0]", "stop=5ms", "net.transport={name: dgram}"};
    capture("net/dumbbell", "dgram", dg, 3, p, sizeof p);
    assert_clean(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roce_frames_decode_without_errors),
        cmocka_unit_test(test_tcp_and_datagram_frames_decode_without_errors),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
