/*
 * rng.h - seeded random streams and the distributions drawn from them.
 *
 * The generator is xoshiro256** (Blackman & Vigna, 2018): 256 bits of state,
 * period 2^256 - 1, a few ns per draw.  Each component of a run gets its own
 * stream, derived from (run seed, stream name, index) by hashing: adding a
 * component or drawing more from one stream never changes the numbers
 * another stream produces.
 *
 * Distributions: uniform, exponential, Pareto, lognormal, normal, constant,
 * and an empirical CDF read from a file (dist.h).
 */
#ifndef AISIM_RNG_H
#define AISIM_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng {
    uint64_t s[4];      /* xoshiro256** state, never all zero */
} rng;

/* Initialises r as stream (name, index) of the run seeded with `seed`. */
void rng_init(rng *r, uint64_t seed, const char *name, uint64_t index);

static inline uint64_t rng_rotl_(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* Next 64 random bits. */
static inline uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = rng_rotl_(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl_(s[3], 45);
    return res;
}

/* Uniform double in [0, 1), 53 random bits. */
static inline double rng_u01(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* Uniform double in (0, 1]: safe to take the logarithm of. */
static inline double rng_u01_open0(rng *r) { return ((double)(rng_next(r) >> 11) + 1.0) * 0x1.0p-53; }

/* Uniform integer in [0, n), n > 0, without modulo bias (Lemire 2019). */
uint64_t rng_below(rng *r, uint64_t n);

double rng_uniform(rng *r, double lo, double hi);     /* [lo, hi) */
double rng_exponential(rng *r, double mean);
double rng_pareto(rng *r, double shape, double scale);/* x >= scale */
double rng_normal(rng *r, double mean, double sd);
double rng_lognormal(rng *r, double mu, double sigma);/* exp(N(mu, sigma)) */

/* Fisher-Yates shuffle of n elements of `size` bytes. */
void rng_shuffle(rng *r, void *base, size_t n, size_t size);

#endif
