/*
 * tcpwire.h - TCP header fields as they are on the wire, shared by the
 * simulator's TCP (its SYN options and advertised windows), the SDN window
 * rewriter of the simulated switch, and the real-mode rewriter that edits
 * real ACKs on a Linux router.
 *
 * The window field is 16 bits; after the handshake it counts units of
 * 2^shift bytes, shift being the window scale the *sender of the segment*
 * announced in its SYN (RFC 7323 sec. 2; 0 if either side left the option
 * out; at most 14).  The SYN's own window is never scaled.  A rewriter that
 * lowers a window to a byte target must round to a whole unit: the rule is
 * a parameter (enum tcpwire_round) so that studies can compare them.
 *
 * Checksums: the Internet checksum (RFC 1071) and its incremental update
 * after a 16-bit field changes (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')),
 * which is what a switch or NFQUEUE rewriter uses instead of summing the
 * whole segment again.
 *
 * Pure functions on plain integers and byte buffers: no allocation, no
 * state, usable from any layer.
 */
#ifndef AISIM_TCPWIRE_H
#define AISIM_TCPWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TCPWIRE_WSCALE_MAX = 14,        /* RFC 7323 sec. 2.3 */
    TCPWIRE_WIN_MAX = 0xffff,
};

/* How a byte target becomes a 16-bit field: DOWN never advertises more
 * than the target (a target below one unit becomes 0, a zero window);
 * UP never less (a one-MSS floor stays at least one MSS); NEAREST the
 * closer of the two (ties up). */
enum tcpwire_round { TCPWIRE_ROUND_DOWN, TCPWIRE_ROUND_UP, TCPWIRE_ROUND_NEAREST };

/* The scale a receiver announces for a receive buffer of `bytes`: the
 * smallest shift with bytes >> shift <= 65535, at most 14 (Linux's
 * tcp_select_initial_window does the same for its space). */
uint8_t tcpwire_wscale_for(uint64_t bytes);

/* Bytes a window field means under `shift`. */
static inline uint64_t tcpwire_win_bytes(uint16_t field, uint8_t shift)
{
    return (uint64_t)field << shift;
}

/* The field for a window of `bytes` under `shift` by rule `r`, saturated
 * at 65535. */
uint16_t tcpwire_win_field(uint64_t bytes, uint8_t shift, enum tcpwire_round r);

/* A rewriter's rule: the field an ACK leaves with when a controller caps
 * its window at `cap_bytes`.  A window is only ever lowered (a rewrite
 * never opens a window the receiver did not offer): the result is
 * min(field, tcpwire_win_field(cap_bytes, shift, r)). */
uint16_t tcpwire_win_cap(uint16_t field, uint8_t shift, uint64_t cap_bytes,
                         enum tcpwire_round r);

/* The options a SYN carried, as far as the window and segment size go. */
typedef struct tcpwire_opts {
    bool has_mss, has_wscale, sack_ok, has_ts;
    uint16_t mss;
    uint8_t wscale;         /* as announced, clamped to 14 as RFC 7323 says */
} tcpwire_opts;

/* Parses the option bytes of a TCP header (after the 20 fixed bytes, `len`
 * of them).  Returns false on a malformed list (a length byte that runs
 * past the end, or below 2), with *o holding what came before. */
bool tcpwire_parse_opts(const uint8_t *opt, size_t len, tcpwire_opts *o);

/* Writes the SYN options MSS, SACK-permitted, window scale (and NOPs to a
 * multiple of 4) into opt, which has room for 12 bytes; returns the bytes
 * written (always 12). */
size_t tcpwire_put_syn_opts(uint8_t *opt, uint16_t mss, uint8_t wscale);

/* The one's-complement sum of len bytes (big-endian 16-bit words, an odd
 * last byte padded with zero) added to `sum`, not folded. */
uint32_t tcpwire_sum(const void *buf, size_t len, uint32_t sum);

/* Folds a sum to 16 bits and complements it: the checksum field. */
uint16_t tcpwire_fold(uint32_t sum);

/* The checksum after one 16-bit word of the covered data changes from
 * `old_word` to `new_word` (RFC 1624 eqn. 3). */
uint16_t tcpwire_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word);

#endif
