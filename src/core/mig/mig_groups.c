/*
 * mig_groups.c - what the MIG planner's programs are made of (mig_plan.c
 * has the programs): the GPUs grouped by model and busy instances; the
 * patterns a group may take (multisets of instances a valid layout of
 * its model holds while keeping the group's busy instances where they
 * are, limited to demanded profiles and what the GPUs hold now); and a
 * chosen pattern realised on one GPU, keeping what it can, with the
 * creations it needs in the driver's order; --fill's extra instances.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mig/mig_plan_impl.h"
#include "util/mem.h"

struct collect {
	struct group *g;
	const bool *useful; /* per profile */
};

static bool same_layout(const struct gf_mig_layout *a,
			const struct gf_mig_layout *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		bool found = false;
		for (int j = 0; j < b->n && !found; j++)
			found = a->inst[i].profile == b->inst[j].profile &&
				a->inst[i].start == b->inst[j].start &&
				a->inst[i].busy == b->inst[j].busy;
		if (!found)
			return false;
	}
	return true;
}

static void counts_of(const struct gf_mig_layout *l, int8_t *c)
{
	memset(c, 0, GF_MIG_MAX_PROFILES);
	for (int i = 0; i < l->n; i++)
		c[l->inst[i].profile]++;
}

/* May demand k be served by GPUs of model m (opts.demand_model)? */
bool gf__mig_demand_on(const struct gf_mig_plan_opts *o, int k,
		       const struct gf_mig_model *m)
{
	return !o || !o->demand_model || !o->demand_model[k] ||
	       o->demand_model[k] == m;
}

static int add_pattern(struct group *g, const int8_t *counts)
{
	for (int i = 0; i < g->npat; i++)
		if (memcmp(g->pat[i].counts, counts, GF_MIG_MAX_PROFILES) == 0)
			return i;
	if (g->npat == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 32;
		g->pat = gf_reallocarray(g->pat, (size_t)g->cap,
					 sizeof(*g->pat));
	}
	struct pattern *p = &g->pat[g->npat];
	memcpy(p->counts, counts, GF_MIG_MAX_PROFILES);
	p->ninst = 0;
	p->holders = 0;
	p->zcol = 0;
	for (int i = 0; i < GF_MIG_MAX_PROFILES; i++)
		p->ninst += counts[i];
	return g->npat++;
}

static int collect_layout(const struct gf_mig_layout *l, void *arg)
{
	struct collect *c = arg;
	const struct gf_mig_layout *cur = &c->g->busy;
	/* keep every busy instance where it is */
	for (int i = 0; i < cur->n; i++) {
		bool kept = false;
		for (int j = 0; j < l->n && !kept; j++)
			kept = l->inst[j].profile == cur->inst[i].profile &&
			       l->inst[j].start == cur->inst[i].start;
		if (!kept)
			return 0;
	}
	int8_t counts[GF_MIG_MAX_PROFILES];
	counts_of(l, counts);
	int8_t busy[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < cur->n; i++)
		busy[cur->inst[i].profile]++;
	for (int p = 0; p < GF_MIG_MAX_PROFILES; p++)
		if (counts[p] > busy[p] && !c->useful[p])
			return 0;
	add_pattern(c->g, counts);
	return 0;
}

void gf__mig_build_patterns(struct group *g, const struct gf_mig_gpu *gpus,
			    const struct gf_mig_demand *d, int nd,
			    const struct gf_mig_plan_opts *o)
{
	bool useful[GF_MIG_MAX_PROFILES] = { false };
	for (int k = 0; k < nd; k++) {
		int p = gf_mig_profile_find(g->m, d[k].profile);
		if (p >= 0 && d[k].count > 0 && gf__mig_demand_on(o, k, g->m))
			useful[p] = true;
	}
	int8_t zero[GF_MIG_MAX_PROFILES] = { 0 };
	if (g->busy.n == 0)
		add_pattern(g, zero);
	struct collect c = { g, useful };
	gf_mig_enumerate(g->m, collect_layout, &c);
	/* what each GPU holds now is a pattern too (valid: checked) */
	for (int i = 0; i < g->n; i++) {
		int8_t cur[GF_MIG_MAX_PROFILES];
		counts_of(&gpus[g->gpus[i]].current, cur);
		g->curpat[i] = add_pattern(g, cur);
		g->pat[g->curpat[i]].holders++;
	}
}

int gf__mig_find_demand_mem(const struct group *g, int ng,
			    const struct gf_mig_demand *d,
			    const struct gf_mig_model *only, int *mem_max)
{
	int found = 0;
	*mem_max = 0;
	for (int i = 0; i < ng; i++) {
		int p = gf_mig_profile_find(g[i].m, d->profile);
		if (p < 0 || (only && g[i].m != only))
			continue;
		found = 1;
		if (g[i].m->profiles[p].mem > *mem_max)
			*mem_max = g[i].m->profiles[p].mem;
	}
	return found;
}

/* Distinct models of the fleet, for y[d][m]. */
int gf__mig_fleet_models(const struct group *g, int ng,
			 const struct gf_mig_model **out)
{
	int n = 0;
	for (int i = 0; i < ng; i++) {
		bool seen = false;
		for (int k = 0; k < n; k++)
			seen |= out[k] == g[i].m;
		if (!seen)
			out[n++] = g[i].m;
	}
	return n;
}

/* Final layout of one GPU for pattern `pat`, keeping what it can. */
void gf__mig_realise(const struct group *g, const struct gf_mig_gpu *gpu,
		     const struct pattern *pat, bool unchanged,
		     struct gf_mig_gpu_plan *out)
{
	const struct gf_mig_model *m = g->m;
	const struct gf_mig_layout *cur = &gpu->current;
	memset(out, 0, sizeof(*out));
	if (unchanged) {
		out->layout = *cur;
	} else {
		/* try busy + idle instances the pattern still wants, then
		 * busy only; busy ones first (an idle instance listed
		 * before a busy one of its profile took its place, and the
		 * busy one was dropped) */
		for (int attempt = 0; attempt < 2; attempt++) {
			struct gf_mig_layout l = { .n = 0 };
			int want[GF_MIG_MAX_PROFILES];
			for (int p = 0; p < GF_MIG_MAX_PROFILES; p++)
				want[p] = p < m->nprofiles ? pat->counts[p] : 0;
			for (int pass = 0; pass < 2 - attempt; pass++)
				for (int i = 0; i < cur->n; i++) {
					const struct gf_mig_instance *in =
						&cur->inst[i];
					if (in->busy == (pass == 0) &&
					    want[in->profile] > 0) {
						l.inst[l.n++] = *in;
						want[in->profile]--;
					}
				}
			if (gf_mig_place(m, want, &l) == 0) {
				out->layout = l;
				break;
			}
		}
	}
	gf_mig_creation_order(m, &out->layout);
	out->used = out->layout.n > 0;
	out->changed = !same_layout(&out->layout, cur);
	for (int i = 0; i < cur->n; i++) {
		bool kept = false;
		for (int j = 0; j < out->layout.n && !kept; j++)
			kept = out->layout.inst[j].profile ==
				       cur->inst[i].profile &&
			       out->layout.inst[j].start == cur->inst[i].start;
		if (!kept)
			out->destroy[out->ndestroy++] = cur->inst[i];
	}
	for (int j = 0; j < out->layout.n; j++) {
		bool existed = false;
		for (int i = 0; i < cur->n && !existed; i++)
			existed =
				out->layout.inst[j].profile ==
					cur->inst[i].profile &&
				out->layout.inst[j].start == cur->inst[i].start;
		if (!existed)
			out->create[out->ncreate++] = out->layout.inst[j];
	}
}

static void busy_of(const struct gf_mig_layout *l, struct gf_mig_layout *b)
{
	b->n = 0;
	for (int i = 0; i < l->n; i++)
		if (l->inst[i].busy)
			b->inst[b->n++] = l->inst[i];
}

int gf__mig_group_gpus(const struct gf_mig_gpu *gpus, int ngpus,
		       struct group *g)
{
	int ng = 0;
	for (int i = 0; i < ngpus; i++) {
		struct gf_mig_layout busy;
		busy_of(&gpus[i].current, &busy);
		int k;
		for (k = 0; k < ng; k++)
			if (g[k].m == gpus[i].model &&
			    same_layout(&g[k].busy, &busy))
				break;
		if (k == ng) {
			memset(&g[ng], 0, sizeof(g[ng]));
			g[ng].m = gpus[i].model;
			g[ng].busy = busy;
			g[ng].gpus = gf_calloc((size_t)ngpus, sizeof(int));
			g[ng].curpat = gf_calloc((size_t)ngpus, sizeof(int));
			ng++;
		}
		g[k].gpus[g[k].n++] = i;
	}
	return ng;
}

/* Busy instances of profile p that every GPU of group g keeps. */
int gf__mig_busy_count(const struct group *g, int p)
{
	int n = 0;
	for (int i = 0; i < g->busy.n; i++)
		n += g->busy.inst[i].profile == p;
	return n;
}

/* The create list: the layout's instances the GPU does not hold now, in
 * the layout's (creation) order. */
static void list_creates(const struct gf_mig_layout *cur,
			 struct gf_mig_gpu_plan *out)
{
	out->ncreate = 0;
	for (int j = 0; j < out->layout.n; j++)
		if (!gf_mig_layout_holds(cur, &out->layout.inst[j]))
			out->create[out->ncreate++] = out->layout.inst[j];
}

struct fill_state {
	const struct gf_mig_model *m;
	const struct gf_mig_layout *base;
	const bool *useful;
	struct gf_mig_layout best;
	int best_mem, best_n;
};

static int fill_cb(const struct gf_mig_layout *l, void *arg)
{
	struct fill_state *st = arg;
	if (l->n < st->base->n)
		return 0;
	for (int i = 0; i < st->base->n; i++)
		if (!gf_mig_layout_holds(l, &st->base->inst[i]))
			return 0;
	int mem = 0, added = 0;
	for (int j = 0; j < l->n; j++) {
		if (gf_mig_layout_holds(st->base, &l->inst[j]))
			continue;
		if (!st->useful[l->inst[j].profile])
			return 0;
		mem += st->m->profiles[l->inst[j].profile].mem;
		added++;
	}
	if (mem > st->best_mem || (mem == st->best_mem && added < st->best_n)) {
		st->best_mem = mem;
		st->best_n = added;
		st->best = *l;
	}
	return 0;
}

/* --fill: each used GPU's free room takes more demanded instances. */
void gf__mig_fill_gpu(const struct gf_mig_gpu *gpu,
		      const struct gf_mig_demand *d, int nd,
		      const struct gf_mig_plan_opts *o,
		      struct gf_mig_gpu_plan *out)
{
	const struct gf_mig_model *m = gpu->model;
	bool useful[GF_MIG_MAX_PROFILES] = { false };
	for (int k = 0; k < nd; k++) {
		int pi = gf_mig_profile_find(m, d[k].profile);
		if (pi >= 0 && d[k].count > 0 && gf__mig_demand_on(o, k, m))
			useful[pi] = true;
	}
	struct fill_state st = { m, &out->layout, useful, out->layout, 0, 0 };
	gf_mig_enumerate(m, fill_cb, &st);
	if (st.best_mem == 0)
		return;
	for (int j = 0; j < st.best.n; j++) {
		struct gf_mig_instance in = st.best.inst[j];
		if (!gf_mig_layout_holds(&out->layout, &in)) {
			in.busy = false;
			out->fill[out->nfill++] = in;
		}
	}
	for (int j = 0; j < out->nfill; j++)
		out->layout.inst[out->layout.n++] = out->fill[j];
	gf_mig_creation_order(m, &out->layout);
	list_creates(&gpu->current, out);
	out->changed = true;
}
