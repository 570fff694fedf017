/*
 * siphash.c - SipHash-2-4, from the paper's description (c = 2 rounds
 * per block, d = 4 at the end, little-endian words).  test_util checks
 * the paper's test vector.
 */
#include "util/siphash.h"

#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void round4(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13);
	v[1] ^= v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17);
	v[1] ^= v[2];
	v[2] = ROTL(v[2], 32);
}

uint64_t gf_siphash24(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *in = data;
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ULL,
			  k1 ^ 0x646f72616e646f6dULL,
			  k0 ^ 0x6c7967656e657261ULL,
			  k1 ^ 0x7465646279746573ULL };
	size_t full = len - len % 8;
	for (size_t i = 0; i < full; i += 8) {
		uint64_t m = le64(in + i);
		v[3] ^= m;
		round4(v);
		round4(v);
		v[0] ^= m;
	}
	uint8_t last[8] = { 0 };
	memcpy(last, in + full, len % 8);
	uint64_t b = le64(last) | (uint64_t)(len & 0xff) << 56;
	v[3] ^= b;
	round4(v);
	round4(v);
	v[0] ^= b;
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		round4(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}
