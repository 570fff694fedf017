/*
 * rng.h - a seeded pseudo-random generator (xoshiro256**, seeded through
 * splitmix64).  The core never draws randomness of its own: callers pass
 * a gf_rng they seeded, so every simulation replays exactly.
 * A value type; not thread-safe (one per run).
 */
#ifndef GPUFLEET_RNG_H
#define GPUFLEET_RNG_H

#include <stdint.h>

struct gf_rng {
	uint64_t s[4];
};

void gf_rng_seed(struct gf_rng *r, uint64_t seed);
uint64_t gf_rng_next(struct gf_rng *r);
/* Uniform in [0, n); n > 0.  Unbiased (Lemire's method). */
uint64_t gf_rng_below(struct gf_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double gf_rng_double(struct gf_rng *r);

#endif
