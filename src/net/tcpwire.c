/* tcpwire.c - TCP window fields, SYN options and checksums (tcpwire.h). */
#include "aisim/tcpwire.h"

uint8_t tcpwire_wscale_for(uint64_t bytes)
{
    uint8_t s = 0;
    while (s < TCPWIRE_WSCALE_MAX && (bytes >> s) > TCPWIRE_WIN_MAX)
        s++;
    return s;
}

uint16_t tcpwire_win_field(uint64_t bytes, uint8_t shift, enum tcpwire_round r)
{
    if (shift > TCPWIRE_WSCALE_MAX)
        shift = TCPWIRE_WSCALE_MAX;
    uint64_t unit = (uint64_t)1 << shift, f = bytes >> shift, rem = bytes & (unit - 1);
    if (rem && (r == TCPWIRE_ROUND_UP || (r == TCPWIRE_ROUND_NEAREST && 2 * rem >= unit)))
        f++;
    return f > TCPWIRE_WIN_MAX ? TCPWIRE_WIN_MAX : (uint16_t)f;
}

uint16_t tcpwire_win_cap(uint16_t field, uint8_t shift, uint64_t cap_bytes,
                         enum tcpwire_round r)
{
    uint16_t c = tcpwire_win_field(cap_bytes, shift, r);
    return c < field ? c : field;
}

bool tcpwire_parse_opts(const uint8_t *opt, size_t len, tcpwire_opts *o)
{
    *o = (tcpwire_opts){0};
    size_t i = 0;
    while (i < len) {
        uint8_t kind = opt[i];
        if (kind == 0)                          /* end of option list */
            return true;
        if (kind == 1) {                        /* NOP */
            i++;
            continue;
        }
        if (i + 1 >= len || opt[i + 1] < 2 || i + opt[i + 1] > len)
            return false;
        uint8_t l = opt[i + 1];
        const uint8_t *v = opt + i + 2;
        if (kind == 2 && l == 4) {
            o->has_mss = true;
            o->mss = (uint16_t)(v[0] << 8 | v[1]);
        } else if (kind == 3 && l == 3) {
            o->has_wscale = true;
            o->wscale = v[0] > TCPWIRE_WSCALE_MAX ? TCPWIRE_WSCALE_MAX : v[0];
        } else if (kind == 4 && l == 2) {
            o->sack_ok = true;
        } else if (kind == 8 && l == 10) {
            o->has_ts = true;
        }
        i += l;
    }
    return true;
}

size_t tcpwire_put_syn_opts(uint8_t *opt, uint16_t mss, uint8_t wscale)
{
    const uint8_t o[12] = {2, 4, (uint8_t)(mss >> 8), (uint8_t)mss,     /* MSS */
                           1, 1, 4, 2,                                  /* NOP NOP SACK-ok */
                           1, 3, 3, wscale > TCPWIRE_WSCALE_MAX ? TCPWIRE_WSCALE_MAX : wscale};
    for (int i = 0; i < 12; i++)
        opt[i] = o[i];
    return 12;
}

uint32_t tcpwire_sum(const void *buf, size_t len, uint32_t sum)
{
    const uint8_t *b = buf;
    for (size_t i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)(b[i] << 8 | b[i + 1]);
        if (sum & 0x80000000u)                  /* fold early: no overflow */
            sum = (sum & 0xffff) + (sum >> 16);
    }
    if (len & 1)
        sum += (uint32_t)b[len - 1] << 8;
    return sum;
}

uint16_t tcpwire_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

uint16_t tcpwire_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word)
{
    uint32_t s = (uint16_t)~csum + (uint32_t)(uint16_t)~old_word + new_word;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}
