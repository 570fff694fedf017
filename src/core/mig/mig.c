/*
 * mig.c - MIG layout rules: validation, placement of a multiset,
 * enumeration of every valid layout, creation order.
 *
 * Memory slices are the unit (bit s of a mask = slice s).  The rules are
 * the model's allowed starts and maxima, no overlap, and the compute
 * slices adding up to at most the model's (7, or 4 on A30).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/mig.h>

#include "util/fmt.h"

static unsigned span(const struct gf_mig_profile *p, int start)
{
	return ((1u << p->mem) - 1u) << start;
}

int gf_mig_layout_check(const struct gf_mig_model *m,
			const struct gf_mig_layout *l, char *msg, unsigned size)
{
	unsigned used = 0;
	int count[GF_MIG_MAX_PROFILES] = { 0 }, compute = 0;
	if (l->n > GF_MIG_MAX_INSTANCES) {
		gf_note(msg, size, "more than %d instances",
			GF_MIG_MAX_INSTANCES);
		return GF_EINVAL;
	}
	for (int i = 0; i < l->n; i++) {
		const struct gf_mig_instance *in = &l->inst[i];
		if (in->profile >= m->nprofiles) {
			gf_note(msg, size, "instance %d: no such profile", i);
			return GF_EINVAL;
		}
		const struct gf_mig_profile *p = &m->profiles[in->profile];
		if (in->start >= m->slices || !(p->starts >> in->start & 1)) {
			gf_note(msg, size, "%s cannot start at slice %d on %s",
				p->name, in->start, m->id);
			return GF_EINVAL;
		}
		unsigned s = span(p, in->start);
		if (used & s) {
			gf_note(msg, size,
				"%s at slice %d overlaps another instance",
				p->name, in->start);
			return GF_EINVAL;
		}
		used |= s;
		compute += p->compute;
		if (++count[in->profile] > p->max) {
			gf_note(msg, size, "more than %d x %s on %s", p->max,
				p->name, m->id);
			return GF_EINVAL;
		}
	}
	if (compute > m->compute) {
		gf_note(msg, size, "%d compute slices, %s has %d", compute,
			m->id, m->compute);
		return GF_EINVAL;
	}
	if (size)
		msg[0] = '\0';
	return 0;
}

bool gf_mig_inst_in(const struct gf_mig_instance *inst, int n,
		    const struct gf_mig_instance *in)
{
	for (int j = 0; j < n; j++)
		if (inst[j].profile == in->profile &&
		    inst[j].start == in->start)
			return true;
	return false;
}

bool gf_mig_layout_holds(const struct gf_mig_layout *l,
			 const struct gf_mig_instance *in)
{
	return gf_mig_inst_in(l->inst, l->n, in);
}

unsigned gf_mig_layout_used(const struct gf_mig_model *m,
			    const struct gf_mig_layout *l)
{
	unsigned used = 0;
	for (int i = 0; i < l->n; i++)
		used |= span(&m->profiles[l->inst[i].profile],
			     l->inst[i].start);
	return used;
}

/* Profiles in placement order: larger memory first, then by index. */
static void order_profiles(const struct gf_mig_model *m, int *ord)
{
	for (int i = 0; i < m->nprofiles; i++)
		ord[i] = i;
	for (int i = 1; i < m->nprofiles; i++)
		for (int j = i; j > 0 && m->profiles[ord[j]].mem >
						 m->profiles[ord[j - 1]].mem;
		     j--) {
			int t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
}

static int place_rec(const struct gf_mig_model *m, const int *ord, int k,
		     int *left, unsigned used, int compute,
		     struct gf_mig_layout *l)
{
	while (k < m->nprofiles && left[ord[k]] == 0)
		k++;
	if (k == m->nprofiles)
		return 0;
	int pi = ord[k];
	const struct gf_mig_profile *p = &m->profiles[pi];
	if (compute + p->compute > m->compute)
		return -1;
	for (int s = 0; s < m->slices; s++) {
		if (!(p->starts >> s & 1) || (used & span(p, s)))
			continue;
		l->inst[l->n++] = (struct gf_mig_instance){ (uint8_t)pi,
							    (uint8_t)s, false };
		left[pi]--;
		if (place_rec(m, ord, k, left, used | span(p, s),
			      compute + p->compute, l) == 0)
			return 0;
		left[pi]++;
		l->n--;
	}
	return -1;
}

int gf_mig_place(const struct gf_mig_model *m, const int *counts,
		 struct gf_mig_layout *l)
{
	int left[GF_MIG_MAX_PROFILES], ord[GF_MIG_MAX_PROFILES], total = l->n;
	int have[GF_MIG_MAX_PROFILES] = { 0 }, compute = 0;
	for (int i = 0; i < l->n; i++) {
		have[l->inst[i].profile]++;
		compute += m->profiles[l->inst[i].profile].compute;
	}
	for (int i = 0; i < m->nprofiles; i++) {
		if (counts[i] < 0 || counts[i] + have[i] > m->profiles[i].max)
			return GF_ENOTFOUND;
		left[i] = counts[i];
		total += counts[i];
	}
	if (total > GF_MIG_MAX_INSTANCES)
		return GF_ENOTFOUND;
	order_profiles(m, ord);
	int n0 = l->n;
	if (place_rec(m, ord, 0, left, gf_mig_layout_used(m, l), compute, l) !=
	    0) {
		l->n = n0;
		return GF_ENOTFOUND;
	}
	return 0;
}

struct enum_state {
	const struct gf_mig_model *m;
	int (*fn)(const struct gf_mig_layout *, void *);
	void *arg;
	long count;
	bool stop;
	int count_by[GF_MIG_MAX_PROFILES];
};

/* Positional layouts: decide slice by slice (lowest free slice first):
 * leave it empty, or start an instance there.  Each layout once. */
static void enum_rec(struct enum_state *st, int slice, unsigned used,
		     int compute, struct gf_mig_layout *l)
{
	const struct gf_mig_model *m = st->m;
	if (st->stop)
		return;
	while (slice < m->slices && (used >> slice & 1))
		slice++;
	if (slice >= m->slices) {
		if (l->n > 0) {
			st->count++;
			if (st->fn && st->fn(l, st->arg))
				st->stop = true;
		}
		return;
	}
	enum_rec(st, slice + 1, used, compute, l); /* slice left empty */
	for (int pi = 0; pi < m->nprofiles; pi++) {
		const struct gf_mig_profile *p = &m->profiles[pi];
		if (!(p->starts >> slice & 1) || (used & span(p, slice)) ||
		    slice + p->mem > m->slices || st->count_by[pi] >= p->max ||
		    compute + p->compute > m->compute)
			continue;
		l->inst[l->n++] =
			(struct gf_mig_instance){ (uint8_t)pi, (uint8_t)slice,
						  false };
		st->count_by[pi]++;
		enum_rec(st, slice + p->mem, used | span(p, slice),
			 compute + p->compute, l);
		st->count_by[pi]--;
		l->n--;
	}
}

long gf_mig_enumerate(const struct gf_mig_model *m,
		      int (*fn)(const struct gf_mig_layout *l, void *arg),
		      void *arg)
{
	struct enum_state st = { .m = m, .fn = fn, .arg = arg };
	struct gf_mig_layout l = { .n = 0 };
	enum_rec(&st, 0, 0, 0, &l);
	return st.count;
}

void gf_mig_creation_order(const struct gf_mig_model *m,
			   struct gf_mig_layout *l)
{
	for (int i = 1; i < l->n; i++)
		for (int j = i; j > 0; j--) {
			const struct gf_mig_instance *a = &l->inst[j - 1],
						     *b = &l->inst[j];
			int ma = m->profiles[a->profile].mem,
			    mb = m->profiles[b->profile].mem;
			if (mb > ma || (mb == ma && b->start < a->start)) {
				struct gf_mig_instance t = l->inst[j];
				l->inst[j] = l->inst[j - 1];
				l->inst[j - 1] = t;
			} else {
				break;
			}
		}
}

static const char *digits(const char *s)
{
	if (!isdigit((unsigned char)*s))
		return NULL;
	while (isdigit((unsigned char)*s))
		s++;
	return s;
}

bool gf_mig_profile_name_ok(const char *name)
{
	const char *p = digits(name);
	if (p == NULL)
		return false;
	if (*p == 'c') { /* <C>c.<G>g.<N>gb */
		if (*++p != '.' || (p = digits(p + 1)) == NULL)
			return false;
	}
	if (*p != 'g' || p[1] != '.' || (p = digits(p + 2)) == NULL)
		return false;
	if (strncmp(p, "gb", 2) != 0)
		return false;
	p += 2;
	if (*p == '\0')
		return true;
	if (*p != '+' && *p != '-')
		return false;
	/* attributes: words of a-z joined by '.', comma separated ("me",
	 * "me.all", "gfx,me"); none empty ("1g.5gb+", "1g.5gb+me..all") */
	for (p++;; p++) {
		if (!islower((unsigned char)*p))
			return false;
		while (islower((unsigned char)*p))
			p++;
		if (*p == '\0')
			return true;
		if (*p != '.' && *p != ',')
			return false;
	}
}

int gf_mig_reach(const struct gf_mig_model *m, const struct gf_mig_layout *cur,
		 const int *counts, struct gf_mig_layout *out,
		 struct gf_mig_instance *busy_out)
{
	int total = 0;
	out->n = 0;
	for (int p = 0; p < m->nprofiles; p++) {
		if (counts[p] < 0 || counts[p] > m->profiles[p].max)
			return GF_ENOTFOUND;
		total += counts[p];
	}
	struct gf_mig_layout empty = { .n = 0 };
	if (total > GF_MIG_MAX_INSTANCES || gf_mig_place(m, counts, &empty))
		return GF_ENOTFOUND;
	/* every busy instance stays; then the largest subset of the idle
	 * ones that can stay too (at most 2^8 tries of gf_mig_place) */
	struct gf_mig_layout busy = { .n = 0 };
	int idle[GF_MIG_MAX_INSTANCES], nidle = 0;
	int left[GF_MIG_MAX_PROFILES];
	for (int p = 0; p < m->nprofiles; p++)
		left[p] = counts[p];
	bool blocked = false;
	struct gf_mig_instance in_way = { 0 };
	for (int i = 0; i < cur->n; i++) {
		if (!cur->inst[i].busy) {
			idle[nidle++] = i;
			continue;
		}
		if (left[cur->inst[i].profile]-- <= 0 && !blocked) {
			blocked = true; /* a busy one the counts lack */
			in_way = cur->inst[i];
		}
		if (busy.n == 0 && !blocked)
			in_way = cur->inst[i];
		busy.inst[busy.n++] = cur->inst[i];
	}
	for (int keep = nidle; keep >= 0 && !blocked; keep--)
		for (unsigned mask = 0; mask < 1u << nidle; mask++) {
			if (__builtin_popcount(mask) != keep)
				continue;
			struct gf_mig_layout l = busy;
			int want[GF_MIG_MAX_PROFILES];
			memcpy(want, left, sizeof(want));
			bool ok = true;
			for (int k = 0; k < nidle && ok; k++) {
				if (!(mask >> k & 1))
					continue;
				const struct gf_mig_instance *in =
					&cur->inst[idle[k]];
				ok = want[in->profile]-- > 0;
				l.inst[l.n++] = *in;
			}
			if (!ok || gf_mig_place(m, want, &l) != 0)
				continue;
			*out = l;
			gf_mig_creation_order(m, out);
			return 0;
		}
	if (busy_out)
		*busy_out = in_way;
	return GF_EINVAL;
}
