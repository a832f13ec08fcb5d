/*
 * rng.c - stream derivation and sampling for xoshiro256**.
 *
 * A stream's state is four outputs of SplitMix64 seeded with a mix of the
 * run seed, the FNV-1a hash of the stream's name and its index; SplitMix64
 * is what the xoshiro authors recommend for seeding, and the hash makes the
 * stream a function of its name, not of creation order.
 */
#include "aisim/rng.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void rng_init(rng *r, uint64_t seed, const char *name, uint64_t index)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);        /* FNV-1a 64 */
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++)
        h = (h ^ *p) * UINT64_C(0x100000001b3);
    uint64_t x = seed;
    uint64_t a = splitmix64(&x);
    x = a ^ h;
    uint64_t b = splitmix64(&x);
    x = b ^ (index * UINT64_C(0xd1342543de82ef95) + UINT64_C(0x2545f4914f6cdd1d));
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
        r->s[0] = 1;
}

uint64_t rng_below(rng *r, uint64_t n)
{
    /* Lemire, "Fast random integer generation in an interval", 2019. */
    __uint128_t m = (__uint128_t)rng_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t t = -n % n;
        while (lo < t) {
            m = (__uint128_t)rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double rng_uniform(rng *r, double lo, double hi)
{
    return lo + (hi - lo) * rng_u01(r);
}

double rng_exponential(rng *r, double mean)
{
    return -mean * log(rng_u01_open0(r));
}

double rng_pareto(rng *r, double shape, double scale)
{
    return scale * pow(rng_u01_open0(r), -1.0 / shape);
}

double rng_normal(rng *r, double mean, double sd)
{
    /* Box-Muller; one of the pair is used, so a draw costs two uniforms and
     * the stream position does not depend on earlier calls' parity. */
    double u1 = rng_u01_open0(r), u2 = rng_u01(r);
    return mean + sd * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double rng_lognormal(rng *r, double mu, double sigma)
{
    return exp(rng_normal(r, mu, sigma));
}

void rng_shuffle(rng *r, void *base, size_t n, size_t size)
{
    unsigned char *b = base, tmp[256];
    if (n < 2)
        return;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rng_below(r, i + 1);
        if (i == j)
            continue;
        for (size_t off = 0; off < size; off += sizeof tmp) {
            size_t k = size - off < sizeof tmp ? size - off : sizeof tmp;
            memcpy(tmp, b + i * size + off, k);
            memcpy(b + i * size + off, b + j * size + off, k);
            memcpy(b + j * size + off, tmp, k);
        }
    }
}
