/*
 * test_tcpwire.c - TCP window fields, SYN options and checksums: exact
 * values, and the incremental checksum update against full recomputation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "aisim/rng.h"
#include "aisim/tcpwire.h"

static void test_wscale_for(void **state)
{
    (void)state;
    assert_int_equal(tcpwire_wscale_for(0), 0);
    assert_int_equal(tcpwire_wscale_for(65535), 0);
    assert_int_equal(tcpwire_wscale_for(65536), 1);
    assert_int_equal(tcpwire_wscale_for(131070), 1);
    assert_int_equal(tcpwire_wscale_for(131071), 1);
    assert_int_equal(tcpwire_wscale_for(131072), 2);
    assert_int_equal(tcpwire_wscale_for(6291456), 7);       /* Linux's tcp_rmem max, 6 MiB */
    assert_int_equal(tcpwire_wscale_for(32ull << 20), 10);  /* the 1 KiB steps of real flows */
    assert_int_equal(tcpwire_wscale_for(UINT64_MAX), 14);
}

static void test_win_field_rounding(void **state)
{
    (void)state;
    /* one MSS (1448 B) under scale 10: 1.414 units */
    assert_int_equal(tcpwire_win_field(1448, 10, TCPWIRE_ROUND_DOWN), 1);
    assert_int_equal(tcpwire_win_field(1448, 10, TCPWIRE_ROUND_UP), 2);
    assert_int_equal(tcpwire_win_field(1448, 10, TCPWIRE_ROUND_NEAREST), 1);
    assert_int_equal(tcpwire_win_field(1536, 10, TCPWIRE_ROUND_NEAREST), 2);   /* tie: up */
    assert_int_equal(tcpwire_win_field(1000, 10, TCPWIRE_ROUND_DOWN), 0);      /* zero window */
    assert_int_equal(tcpwire_win_field(2048, 10, TCPWIRE_ROUND_UP), 2);        /* exact */
    assert_int_equal(tcpwire_win_field(1448, 0, TCPWIRE_ROUND_DOWN), 1448);
    assert_int_equal(tcpwire_win_field(1u << 20, 0, TCPWIRE_ROUND_DOWN), 65535);  /* saturates */
    assert_int_equal(tcpwire_win_field(100, 15, TCPWIRE_ROUND_UP), 1);         /* shift clamped to 14 */
    assert_int_equal(tcpwire_win_bytes(2, 10), 2048);
    /* a cap never opens a window */
    assert_int_equal(tcpwire_win_cap(3, 10, 1u << 20, TCPWIRE_ROUND_UP), 3);
    assert_int_equal(tcpwire_win_cap(300, 10, 1448, TCPWIRE_ROUND_UP), 2);
    assert_int_equal(tcpwire_win_cap(300, 10, 1448, TCPWIRE_ROUND_DOWN), 1);
}

static void test_syn_opts_roundtrip(void **state)
{
    (void)state;
    uint8_t o[12];
    assert_int_equal(tcpwire_put_syn_opts(o, 1460, 10), 12);
    const uint8_t want[12] = {2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 10};
    assert_memory_equal(o, want, 12);
    tcpwire_opts p;
    assert_true(tcpwire_parse_opts(o, sizeof o, &p));
    assert_true(p.has_mss && p.has_wscale && p.sack_ok && !p.has_ts);
    assert_int_equal(p.mss, 1460);
    assert_int_equal(p.wscale, 10);
    /* Linux's SYN: MSS, SACK-ok, timestamps, NOP, wscale 7 */
    const uint8_t lx[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
    assert_true(tcpwire_parse_opts(lx, sizeof lx, &p));
    assert_true(p.has_ts && p.sack_ok);
    assert_int_equal(p.wscale, 7);
    const uint8_t big[3] = {3, 3, 20};          /* clamped to 14 (RFC 7323) */
    assert_true(tcpwire_parse_opts(big, sizeof big, &p));
    assert_int_equal(p.wscale, 14);
    const uint8_t eol[4] = {1, 0, 3, 3};        /* end of list stops parsing */
    assert_true(tcpwire_parse_opts(eol, sizeof eol, &p));
    assert_false(p.has_wscale);
    const uint8_t runs_over[3] = {2, 4, 5};
    assert_false(tcpwire_parse_opts(runs_over, sizeof runs_over, &p));
    const uint8_t short_len[2] = {5, 1};
    assert_false(tcpwire_parse_opts(short_len, sizeof short_len, &p));
    const uint8_t no_len[1] = {2};
    assert_false(tcpwire_parse_opts(no_len, sizeof no_len, &p));
}

/* RFC 1071's example words sum to 0xddf2 (folded); RFC 1624's example:
 * HC 0xdd2f, m 0x5555 -> m' 0x3285 gives 0x0000 by its eqn. 3. */
static void test_checksum_known(void **state)
{
    (void)state;
    const uint8_t w[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    assert_int_equal(tcpwire_fold(tcpwire_sum(w, sizeof w, 0)), (uint16_t)~0xddf2);
    assert_int_equal(tcpwire_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
    const uint8_t odd[3] = {0x12, 0x34, 0x56};
    assert_int_equal(tcpwire_sum(odd, 3, 0), 0x1234 + 0x5600);
}

static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }

/* The incremental update agrees with a full recomputation (as one's
 * complement numbers: 0x0000 and 0xffff are both zero) for random
 * segments and random changes of the window word. */
static void test_checksum_incremental(void **state)
{
    (void)state;
    rng r;
    rng_init(&r, 7, "tcpwire", 0);
    uint8_t seg[60];
    for (int t = 0; t < 20000; t++) {
        size_t len = 20 + (size_t)(rng_next(&r) % 41);
        for (size_t i = 0; i < len; i++)
            seg[i] = (uint8_t)rng_next(&r);
        if (t % 7 == 0)
            memset(seg, 0, len);                /* the zero edge */
        seg[16] = seg[17] = 0;                  /* the checksum field */
        uint16_t c = tcpwire_fold(tcpwire_sum(seg, len, 0));
        uint16_t oldw = get16(seg + 14), neww = (uint16_t)rng_next(&r);
        seg[14] = (uint8_t)(neww >> 8);
        seg[15] = (uint8_t)neww;
        uint16_t full = tcpwire_fold(tcpwire_sum(seg, len, 0));
        uint16_t inc = tcpwire_csum_update16(c, oldw, neww);
        assert_int_equal(full % 0xffff, inc % 0xffff);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wscale_for),
        cmocka_unit_test(test_win_field_rounding),
        cmocka_unit_test(test_syn_opts_roundtrip),
        cmocka_unit_test(test_checksum_known),
        cmocka_unit_test(test_checksum_incremental),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
