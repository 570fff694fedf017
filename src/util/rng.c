/*
 * rng.c - xoshiro256** (Blackman and Vigna), seeded by splitmix64.
 */
#include <gpufleet/rng.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void gf_rng_seed(struct gf_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t gf_rng_next(struct gf_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

__extension__ typedef unsigned __int128 u128;

uint64_t gf_rng_below(struct gf_rng *r, uint64_t n)
{
	u128 m = (u128)gf_rng_next(r) * n;
	uint64_t lo = (uint64_t)m;
	if (lo < n) {
		uint64_t t = (0 - n) % n;
		while (lo < t) {
			m = (u128)gf_rng_next(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double gf_rng_double(struct gf_rng *r)
{
	return (double)(gf_rng_next(r) >> 11) * 0x1.0p-53;
}
