/*
 * bitmap.h - fixed-size sets of small integers: CPU (PU) ids and NUMA node
 * ids, by the operating system's numbering.
 *
 * GF_BITMAP_BITS caps both: a machine with more logical CPUs than that is
 * rejected at load with GF_ETOOBIG rather than silently truncated.
 * Plain value type: copy with `=`, no allocation, no lifecycle.
 */
#ifndef GPUFLEET_BITMAP_H
#define GPUFLEET_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GF_BITMAP_BITS	1024
#define GF_BITMAP_WORDS (GF_BITMAP_BITS / 64)

struct gf_bitmap {
	uint64_t w[GF_BITMAP_WORDS];
};

void gf_bitmap_zero(struct gf_bitmap *b);
/* Returns GF_ERANGE when i is outside [0, GF_BITMAP_BITS). */
int gf_bitmap_set(struct gf_bitmap *b, int i);
void gf_bitmap_clr(struct gf_bitmap *b, int i);
bool gf_bitmap_isset(const struct gf_bitmap *b, int i);
int gf_bitmap_count(const struct gf_bitmap *b);
bool gf_bitmap_is_empty(const struct gf_bitmap *b);
bool gf_bitmap_equal(const struct gf_bitmap *a, const struct gf_bitmap *b);
bool gf_bitmap_intersects(const struct gf_bitmap *a, const struct gf_bitmap *b);
/* True when every bit of a is in b. */
bool gf_bitmap_is_subset(const struct gf_bitmap *a, const struct gf_bitmap *b);
void gf_bitmap_or(struct gf_bitmap *dst, const struct gf_bitmap *src);
void gf_bitmap_and(struct gf_bitmap *dst, const struct gf_bitmap *src);
/* First set bit >= from, or -1. */
int gf_bitmap_next(const struct gf_bitmap *b, int from);
#define gf_bitmap_for_each(i, b)                     \
	for ((i) = gf_bitmap_next((b), 0); (i) >= 0; \
	     (i) = gf_bitmap_next((b), (i) + 1))

/*
 * Write the set as a list ("0-7,16-23"; "" when empty) into out.
 * Returns the length, or GF_ETOOBIG when out is too small (out then holds
 * a truncated, NUL-terminated prefix).
 */
int gf_bitmap_format_list(const struct gf_bitmap *b, char *out, size_t size);

/* Parse a list ("0-3,8,10-11"). Returns 0, GF_EPARSE or GF_ERANGE. */
int gf_bitmap_parse_list(struct gf_bitmap *b, const char *s);

#endif
