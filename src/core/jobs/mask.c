/*
 * mask.c - node labels and node selectors: the syntax "k=v,k=v" (keys
 * and values of letters, digits, '.', '_', '-', '/'; no key twice), a
 * selector matching a node when every one of its pairs is among the
 * node's labels (GFD's product key compares as GPU models: mask.h), and
 * the node masks the engine takes (gf_sched_place_in),
 * one per distinct selector, cached.
 *
 * Invariants: a cached mask is exactly the nodes matching its selector
 * (a node added or relabelled updates every mask: gf__masks_node), with
 * room for nodes.cap nodes (gf__masks_grow); a job's (mask, mask_gen) names
 * a valid slot only while mask_gen is the core's; the cache holds at most
 * max(16, 64 MiB / nodes) masks and is emptied (generation bumped) when
 * full, so memory stays bounded whatever selectors arrive.
 */
#include "core/jobs/mask.h"

#include <stdio.h>
#include <string.h>

#include <gpufleet/catalog.h>

#include "core/jobs/ctl_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

#define MASK_BYTES_MAX (64u << 20)

static bool label_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
	       ch == '-' || ch == '/';
}

/* Length of the run of label characters at s. */
static size_t word(const char *s)
{
	size_t n = 0;
	while (label_char(s[n]))
		n++;
	return n;
}

/* Is k (klen) GFD's product key? */
static bool product_key(const char *k, size_t klen)
{
	return klen == strlen(GF_GFD_PRODUCT_LABEL) &&
	       memcmp(k, GF_GFD_PRODUCT_LABEL, klen) == 0;
}

/* Do the values a (alen) and b (blen) of GFD's product key name one
 * model: equal, or one catalog model by any of its names (id, alias,
 * NVML name, GFD product)? */
static bool same_product(const char *a, size_t alen, const char *b, size_t blen)
{
	char x[GF_CTL_LABELS_MAX], y[GF_CTL_LABELS_MAX];
	if (alen >= sizeof(x) || blen >= sizeof(y))
		return false;
	memcpy(x, a, alen);
	x[alen] = '\0';
	memcpy(y, b, blen);
	y[blen] = '\0';
	return gf_catalog_same(x, y);
}

/* Is the pair k (klen) = v (vlen) in the list s?  The product key's
 * values compare as models (same_product); a list without that key has
 * it as the node's model when one is given. */
static bool has_pair(const char *s, const char *model, const char *k,
		     size_t klen, const char *v, size_t vlen)
{
	bool product = product_key(k, klen), keyed = false;
	while (*s) {
		size_t kl = word(s);
		const char *val = s + kl + 1;
		size_t vl = word(val);
		if (kl == klen && memcmp(s, k, klen) == 0) {
			keyed = true;
			if (vl == vlen && memcmp(val, v, vlen) == 0)
				return true;
			if (product && same_product(val, vl, v, vlen))
				return true;
		}
		s = val + vl;
		if (*s == ',')
			s++;
	}
	return product && !keyed && model && model[0] &&
	       same_product(model, strlen(model), v, vlen);
}

/* Is key k (klen) in the first `upto` bytes of the list s? */
static bool has_key(const char *s, size_t upto, const char *k, size_t klen)
{
	const char *end = s + upto;
	while (s < end) {
		size_t kl = word(s);
		if (kl == klen && memcmp(s, k, klen) == 0)
			return true;
		s += kl + 1;
		s += word(s);
		if (*s == ',')
			s++;
	}
	return false;
}

int gf__labels_check(const char *s, char *why, unsigned size)
{
	const char *p = s;
	if (*p == '\0')
		return 0;
	for (;;) {
		size_t kl = word(p);
		if (kl == 0 || p[kl] != '=') {
			gf_note(why, size,
				"expected k=v,k=v at byte %d (keys and "
				"values: letters, digits, '.', '_', '-', "
				"'/')",
				(int)(p - s + (long)kl));
			return GF_EINVAL;
		}
		size_t vl = word(p + kl + 1);
		if (vl == 0) {
			gf_note(why, size, "key '%.*s' has no value", (int)kl,
				p);
			return GF_EINVAL;
		}
		if (has_key(s, (size_t)(p - s), p, kl)) {
			gf_note(why, size, "key '%.*s' twice", (int)kl, p);
			return GF_EINVAL;
		}
		p += kl + 1 + vl;
		if (*p == '\0')
			return 0;
		if (*p != ',' || p[1] == '\0') {
			gf_note(why, size, "expected ',' at byte %d",
				(int)(p - s));
			return GF_EINVAL;
		}
		p++;
	}
}

bool gf__labels_match(const char *labels, const char *model,
		      const char *selector)
{
	const char *p = selector;
	while (*p) {
		size_t kl = word(p);
		const char *v = p + kl + 1;
		size_t vl = word(v);
		if (!has_pair(labels, model, p, kl, v, vl))
			return false;
		p = v + vl;
		if (*p == ',')
			p++;
	}
	return true;
}

bool gf__node_matches(const struct gf_ctl *ctl, int i, const char *selector)
{
	const struct gf_cnode *n = &ctl->c->nodes[i];
	const char *model = n->ngpus > 0 ? ctl->c->models[n->model] : NULL;
	return gf__labels_match(ctl->nodes.cfg[i].labels, model, selector);
}

static void masks_clear(struct gf_ctl *ctl)
{
	for (int i = 0; i < ctl->masks.n; i++)
		gf_free(ctl->masks.m[i].on);
	ctl->masks.n = 0;
	ctl->masks.gen++;
}

void gf__masks_free(struct gf_ctl *ctl)
{
	masks_clear(ctl);
	gf_free(ctl->masks.m);
	ctl->masks.cap = 0;
}

static int mask_new(struct gf_ctl *ctl, const struct gf_job_spec *s)
{
	const char *sel = s->node_selector;
	int n = ctl->c->n;
	size_t most = MASK_BYTES_MAX / (size_t)(n > 0 ? n : 1);
	if (most < 16)
		most = 16;
	if ((size_t)ctl->masks.n >= most)
		masks_clear(ctl);
	if (ctl->masks.n == ctl->masks.cap) {
		ctl->masks.cap = ctl->masks.cap ? ctl->masks.cap * 2 : 16;
		ctl->masks.m =
			gf_reallocarray(ctl->masks.m, (size_t)ctl->masks.cap,
					sizeof(*ctl->masks.m));
	}
	struct gf__mask *m = &ctl->masks.m[ctl->masks.n];
	GF__ACOPY(m->sel, s->node_selector);
	m->on = gf_calloc((size_t)ctl->nodes.cap, 1);
	m->count = 0;
	for (int i = 0; i < n; i++)
		if (gf__node_matches(ctl, i, sel)) {
			m->on[i] = 1;
			m->count++;
		}
	return ctl->masks.n++;
}

const uint8_t *gf__mask(struct gf_ctl *ctl, struct gf__jrec *j)
{
	const char *sel = j->job->spec.node_selector;
	if (sel[0] == '\0')
		return NULL;
	if (j->mask >= 0 && j->mask_gen == ctl->masks.gen)
		return ctl->masks.m[j->mask].on;
	int k = 0;
	while (k < ctl->masks.n && strcmp(ctl->masks.m[k].sel, sel) != 0)
		k++;
	if (k == ctl->masks.n)
		k = mask_new(ctl, &j->job->spec);
	j->mask = k;
	j->mask_gen = ctl->masks.gen;
	return ctl->masks.m[k].on;
}

void gf__masks_grow(struct gf_ctl *ctl, int old)
{
	for (int k = 0; k < ctl->masks.n; k++) {
		struct gf__mask *m = &ctl->masks.m[k];
		m->on = gf_reallocarray(m->on, (size_t)ctl->nodes.cap, 1);
		memset(m->on + old, 0, (size_t)(ctl->nodes.cap - old));
	}
}

void gf__masks_node(struct gf_ctl *ctl, int i)
{
	for (int k = 0; k < ctl->masks.n; k++) {
		struct gf__mask *m = &ctl->masks.m[k];
		uint8_t on = gf__node_matches(ctl, i, m->sel);
		m->count += on - m->on[i];
		m->on[i] = on;
	}
}
