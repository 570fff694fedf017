/*
 * siphash.h - SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed hash
 * for tables whose keys an adversary chooses (bearer tokens), so that
 * neither collisions nor lookup times tell anything without the key.
 */
#ifndef GF_UTIL_SIPHASH_H
#define GF_UTIL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* The 64-bit SipHash-2-4 of len bytes under a 16-byte key. */
uint64_t gf_siphash24(const uint8_t key[16], const void *data, size_t len);

#endif
