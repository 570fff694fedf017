/*
 * hash.h - the one hash index of gpufleet: keys to row numbers.
 *
 * Every table in gpufleet keeps its rows in an array of its own; what it
 * needs from a hash table is the way from a key to a row.  gf_hmap is that
 * index: open addressing, linear probing, each slot holding the key's
 * 64-bit hash and the row (a uint32_t).  The caller hashes the key
 * (gf_hash_bytes, gf_hash_str, gf_hash_mix) and tells, through an eq
 * callback, whether a row holds the key; the index never sees keys, so one
 * index serves strings, tuples and structs alike.  Deletion shifts the run
 * back (no tombstones), so a table that churns stays as fast as a new one.
 *
 * gf_hash_bytes is SipHash-2-4 under a fixed key: well mixed and
 * deterministic, so runs replay alike.  Where an adversary chooses keys and
 * must not aim collisions (bearer tokens), hash with gf_siphash24 under a
 * secret key and pass that hash instead.
 *
 * Sizes: at most GF_HMAP_MAX rows; the slots grow to keep the load under
 * 3/4.  Allocation failure aborts (util/mem.h), so put cannot fail short
 * of the cap.
 */
#ifndef GF_UTIL_HASH_H
#define GF_UTIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufleet/err.h"

#define GF_HMAP_MAX (1u << 28)

struct gf_hslot {
	uint64_t h;
	uint32_t row;
	uint32_t used;
};

struct gf_hmap {
	struct gf_hslot *s;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* Does row hold the key?  key is the caller's own (a string, a struct). */
typedef bool (*gf_hmap_eq)(const void *key, uint32_t row);

/* Fast, well-mixed hashes for indexes (not for keys an attacker picks:
 * those take gf_siphash24 under a secret key, util/siphash.h). */
uint64_t gf_hash_bytes(const void *p, size_t n);
uint64_t gf_hash_str(const char *s);
/* Fold v into h (for tuples and structs hashed field by field). */
uint64_t gf_hash_mix(uint64_t h, uint64_t v);

void gf_hmap_init(struct gf_hmap *m);
void gf_hmap_release(struct gf_hmap *m);
/* Forget every row, keep the memory. */
void gf_hmap_clear(struct gf_hmap *m);
/* The row holding key, or -1. */
int64_t gf_hmap_get(const struct gf_hmap *m, uint64_t h, gf_hmap_eq eq,
		    const void *key);
/* Index row under h (the caller knows the key is not there yet):
 * 0, or GF_ETOOBIG past GF_HMAP_MAX rows. */
int gf_hmap_put(struct gf_hmap *m, uint64_t h, uint32_t row) GF_MUST_CHECK;
/* Drop the row holding key; true when there was one. */
bool gf_hmap_del(struct gf_hmap *m, uint64_t h, gf_hmap_eq eq, const void *key);
/* A row moved from old to new (the table compacted its array). */
void gf_hmap_move(struct gf_hmap *m, uint64_t h, uint32_t old_row,
		  uint32_t new_row);

#endif
