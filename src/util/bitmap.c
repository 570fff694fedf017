/*
 * bitmap.c - fixed-size integer sets, list format as in Linux cpulists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/bitmap.h>
#include <gpufleet/err.h>

void gf_bitmap_zero(struct gf_bitmap *b)
{
	memset(b, 0, sizeof(*b));
}

int gf_bitmap_set(struct gf_bitmap *b, int i)
{
	if (i < 0 || i >= GF_BITMAP_BITS)
		return GF_ERANGE;
	b->w[i / 64] |= UINT64_C(1) << (i % 64);
	return 0;
}

void gf_bitmap_clr(struct gf_bitmap *b, int i)
{
	if (i < 0 || i >= GF_BITMAP_BITS)
		return;
	b->w[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

bool gf_bitmap_isset(const struct gf_bitmap *b, int i)
{
	if (i < 0 || i >= GF_BITMAP_BITS)
		return false;
	return (b->w[i / 64] >> (i % 64)) & 1;
}

int gf_bitmap_count(const struct gf_bitmap *b)
{
	int n = 0;
	for (int i = 0; i < GF_BITMAP_WORDS; i++)
		n += __builtin_popcountll(b->w[i]);
	return n;
}

bool gf_bitmap_is_empty(const struct gf_bitmap *b)
{
	for (int i = 0; i < GF_BITMAP_WORDS; i++)
		if (b->w[i])
			return false;
	return true;
}

bool gf_bitmap_equal(const struct gf_bitmap *a, const struct gf_bitmap *b)
{
	return memcmp(a->w, b->w, sizeof(a->w)) == 0;
}

bool gf_bitmap_intersects(const struct gf_bitmap *a, const struct gf_bitmap *b)
{
	for (int i = 0; i < GF_BITMAP_WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

bool gf_bitmap_is_subset(const struct gf_bitmap *a, const struct gf_bitmap *b)
{
	for (int i = 0; i < GF_BITMAP_WORDS; i++)
		if (a->w[i] & ~b->w[i])
			return false;
	return true;
}

void gf_bitmap_or(struct gf_bitmap *dst, const struct gf_bitmap *src)
{
	for (int i = 0; i < GF_BITMAP_WORDS; i++)
		dst->w[i] |= src->w[i];
}

void gf_bitmap_and(struct gf_bitmap *dst, const struct gf_bitmap *src)
{
	for (int i = 0; i < GF_BITMAP_WORDS; i++)
		dst->w[i] &= src->w[i];
}

int gf_bitmap_next(const struct gf_bitmap *b, int from)
{
	if (from < 0)
		from = 0;
	for (int i = from; i < GF_BITMAP_BITS;) {
		uint64_t w = b->w[i / 64] >> (i % 64);
		if (w)
			return i + __builtin_ctzll(w);
		i = (i / 64 + 1) * 64;
	}
	return -1;
}

int gf_bitmap_format_list(const struct gf_bitmap *b, char *out, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return GF_ETOOBIG;
	out[0] = '\0';
	int i = gf_bitmap_next(b, 0);
	while (i >= 0) {
		int j = i;
		while (gf_bitmap_isset(b, j + 1))
			j++;
		char item[32];
		int n;
		if (j == i)
			n = snprintf(item, sizeof(item), "%s%d", len ? "," : "",
				     i);
		else
			n = snprintf(item, sizeof(item), "%s%d-%d",
				     len ? "," : "", i, j);
		if (len + (size_t)n >= size)
			return GF_ETOOBIG;
		memcpy(out + len, item, (size_t)n + 1);
		len += (size_t)n;
		i = gf_bitmap_next(b, j + 1);
	}
	return (int)len;
}

static int parse_num(const char **p, int *out)
{
	char *end;
	if (**p < '0' || **p > '9')
		return GF_EPARSE;
	long v = strtol(*p, &end, 10);
	if (v >= GF_BITMAP_BITS)
		return GF_ERANGE;
	*out = (int)v;
	*p = end;
	return 0;
}

int gf_bitmap_parse_list(struct gf_bitmap *b, const char *s)
{
	gf_bitmap_zero(b);
	const char *p = s;
	if (*p == '\0')
		return 0;
	for (;;) {
		int lo, hi, rc;
		if ((rc = parse_num(&p, &lo)) != 0)
			return rc;
		hi = lo;
		if (*p == '-') {
			p++;
			if ((rc = parse_num(&p, &hi)) != 0)
				return rc;
			if (hi < lo)
				return GF_EPARSE;
		}
		for (int i = lo; i <= hi; i++)
			gf_bitmap_set(b, i);
		if (*p == '\0')
			return 0;
		if (*p != ',')
			return GF_EPARSE;
		p++;
	}
}
