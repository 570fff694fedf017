/*
 * hash.c - the hash index (see hash.h).
 */
#include "util/hash.h"

#include <string.h>

#include "util/mem.h"

/* Eight bytes at a time through gf_hash_mix: a third of SipHash's CPU
 * on the scheduler's short keys (its failed-shape index took 27 % of a
 * Philly replay in SipHash), and as good a spread for an index.  The
 * tables keyed by what a client sends (tokens) keep SipHash under a
 * secret key (server/auth.c). */
uint64_t gf_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x243f6a8885a308d3ull ^ (uint64_t)n, w;
	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w, b, 8);
		h = gf_hash_mix(h, w);
	}
	w = 0;
	if (n)
		memcpy(&w, b, n);
	return gf_hash_mix(h, w);
}

uint64_t gf_hash_str(const char *s)
{
	return gf_hash_bytes(s, strlen(s));
}

uint64_t gf_hash_mix(uint64_t h, uint64_t v)
{
	/* splitmix64's finaliser over the pair */
	uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void gf_hmap_init(struct gf_hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void gf_hmap_release(struct gf_hmap *m)
{
	gf_free(m->s);
	m->cap = m->n = 0;
}

void gf_hmap_clear(struct gf_hmap *m)
{
	if (m->s)
		memset(m->s, 0, m->cap * sizeof(*m->s));
	m->n = 0;
}

int64_t gf_hmap_get(const struct gf_hmap *m, uint64_t h, gf_hmap_eq eq,
		    const void *key)
{
	if (m->cap == 0)
		return -1;
	size_t mask = m->cap - 1;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		const struct gf_hslot *s = &m->s[i];
		if (!s->used)
			return -1;
		if (s->h == h && eq(key, s->row))
			return s->row;
	}
}

static void place(struct gf_hslot *s, size_t cap, uint64_t h, uint32_t row)
{
	size_t mask = cap - 1;
	size_t i = (size_t)h & mask;
	while (s[i].used)
		i = (i + 1) & mask;
	s[i] = (struct gf_hslot){ .h = h, .row = row, .used = 1 };
}

int gf_hmap_put(struct gf_hmap *m, uint64_t h, uint32_t row)
{
	if (m->n >= GF_HMAP_MAX)
		return GF_ETOOBIG;
	if ((m->n + 1) * 4 > m->cap * 3) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct gf_hslot *s = gf_calloc(cap, sizeof(*s));
		for (size_t i = 0; i < m->cap; i++)
			if (m->s[i].used)
				place(s, cap, m->s[i].h, m->s[i].row);
		gf_free(m->s);
		m->s = s;
		m->cap = cap;
	}
	place(m->s, m->cap, h, row);
	m->n++;
	return 0;
}

/* empty slot i, then shift back the run after it (Knuth's algorithm R) */
static void vacate(struct gf_hmap *m, size_t i)
{
	size_t mask = m->cap - 1;
	m->s[i].used = 0;
	for (size_t j = (i + 1) & mask; m->s[j].used; j = (j + 1) & mask) {
		size_t home = (size_t)m->s[j].h & mask;
		/* may slot j's entry move to the hole at i? */
		bool between = i <= j ? (home > i && home <= j)
				      : (home > i || home <= j);
		if (between)
			continue;
		m->s[i] = m->s[j];
		m->s[j].used = 0;
		i = j;
	}
	m->n--;
}

bool gf_hmap_del(struct gf_hmap *m, uint64_t h, gf_hmap_eq eq, const void *key)
{
	if (m->cap == 0)
		return false;
	size_t mask = m->cap - 1;
	for (size_t i = (size_t)h & mask; m->s[i].used; i = (i + 1) & mask)
		if (m->s[i].h == h && eq(key, m->s[i].row)) {
			vacate(m, i);
			return true;
		}
	return false;
}

void gf_hmap_move(struct gf_hmap *m, uint64_t h, uint32_t old_row,
		  uint32_t new_row)
{
	if (m->cap == 0)
		return;
	size_t mask = m->cap - 1;
	for (size_t i = (size_t)h & mask; m->s[i].used; i = (i + 1) & mask)
		if (m->s[i].h == h && m->s[i].row == old_row) {
			m->s[i].row = new_row;
			return;
		}
}
