/*
 * admit.c - admission: can a job of this spec ever be placed here?
 * Checked against the nodes as they are when empty (MIG GPUs out, MIG
 * instances in), the blocks, the node selectors and the team's whole
 * quota, never against what runs now.
 *
 * Speed: the service admits thousands of submissions a second against
 * 10,000 nodes.  Nodes alike (capacity, usable GPUs, model, block, labels,
 * MIG instances) form one group, built once; a request shape (CPU,
 * memory, GPU kind and size, model, selector) is answered from the groups
 * (the replicas one empty node of each group holds, times its nodes,
 * summed per block) and the answer cached by shape, so a known shape
 * costs a hash lookup.
 *
 * Invariants: groups partition the nodes, each group's nodes identical
 * in every field the answer reads; a cached answer equals a fresh one
 * (nodes and config never change after gf_ctl_new); the cache holds at
 * most SHAPES_MAX/2 shapes and is emptied when it would pass them.
 */
#include <stdio.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "util/mem.h"

#define SHAPES_MAX 8192

struct gf__shape {
	bool used;
	int32_t cpu;
	int gpus, milli, prof, model;
	int64_t mem;
	char sel[GF_SELECTOR_MAX];
	int node_max;  /* replicas the best empty node holds */
	int block_max; /* replicas the best block holds */
};

static int usable_gpus(const struct gf_ctl *ctl, int i)
{
	uint32_t mig = 0;
	for (int x = ctl->node_inst[i]; x < ctl->node_inst[i + 1]; x++)
		mig |= UINT32_C(1) << ctl->inst[x].gpu;
	return ctl->c->nodes[i].ngpus - __builtin_popcount(mig);
}

/* Same profiles, same counts (instances are stored in input order). */
static bool same_mig(const struct gf_ctl *ctl, int a, int b)
{
	int na = ctl->node_inst[a + 1] - ctl->node_inst[a];
	if (na != ctl->node_inst[b + 1] - ctl->node_inst[b])
		return false;
	for (int p = 0; na > 0 && p < ctl->nprof; p++)
		if (gf__mig_free_on(ctl, a, p) != gf__mig_free_on(ctl, b, p))
			return false;
	return true;
}

static bool alike(const struct gf_ctl *ctl, int a, int b)
{
	const struct gf_cnode *x = &ctl->c->nodes[a], *y = &ctl->c->nodes[b];
	return x->cpu_cap == y->cpu_cap && x->mem_cap == y->mem_cap &&
	       x->model == y->model && x->ngpus == y->ngpus &&
	       ctl->nodes[a].block == ctl->nodes[b].block &&
	       usable_gpus(ctl, a) == usable_gpus(ctl, b) &&
	       strcmp(ctl->nodes[a].labels, ctl->nodes[b].labels) == 0 &&
	       same_mig(ctl, a, b);
}

static uint64_t node_hash(const struct gf_ctl *ctl, int i)
{
	const struct gf_cnode *n = &ctl->c->nodes[i];
	uint64_t h = 1469598103934665603u;
	uint64_t v[] = { (uint64_t)n->cpu_cap,
			 (uint64_t)n->mem_cap,
			 n->model,
			 n->ngpus,
			 (uint64_t)ctl->nodes[i].block,
			 (uint64_t)usable_gpus(ctl, i),
			 (uint64_t)(ctl->node_inst[i + 1] -
				    ctl->node_inst[i]) };
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		h = (h ^ v[k]) * 1099511628211u;
	for (const char *s = ctl->nodes[i].labels; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return h;
}

int gf__admit_setup(struct gf_ctl *ctl)
{
	int n = ctl->c->n;
	struct gf__admit *a = ctl->adm;
	size_t cap = 16;
	while (cap < 2 * (size_t)n)
		cap *= 2;
	int *slot = gf_calloc(cap, sizeof(int)); /* group + 1 */
	uint64_t *key = gf_calloc(cap, sizeof(uint64_t));
	a->grp = gf_calloc((size_t)(n > 0 ? n : 1), sizeof(*a->grp));
	for (int i = 0; i < n; i++) {
		uint64_t h = node_hash(ctl, i);
		size_t s = (size_t)(h % cap);
		while (slot[s] &&
		       !(key[s] == h && alike(ctl, a->grp[slot[s] - 1].rep, i)))
			s = (s + 1) % cap;
		if (slot[s] == 0) {
			a->grp[a->ngrp] = (struct gf__group){
				.rep = i,
				.count = 0,
				.block = ctl->nodes[i].block
			};
			slot[s] = ++a->ngrp;
			key[s] = h;
		}
		a->grp[slot[s] - 1].count++;
	}
	gf_free(slot);
	gf_free(key);
	a->cap = SHAPES_MAX;
	a->shapes = gf_calloc(SHAPES_MAX, sizeof(*a->shapes));
	return 0;
}

void gf__admit_free(struct gf_ctl *ctl)
{
	if (ctl->adm == NULL)
		return;
	gf_free(ctl->adm->grp);
	gf_free(ctl->adm->shapes);
	gf_free(ctl->adm);
}

/* Replicas of shape q one empty node of group g holds. */
static int group_cap(const struct gf_ctl *ctl, const struct gf__group *g,
		     const struct gf__shape *q)
{
	const struct gf_cnode *n = &ctl->c->nodes[g->rep];
	int64_t k = GF_JOB_MAX_REPLICAS;
	if (q->cpu > 0 && n->cpu_cap / q->cpu < k)
		k = n->cpu_cap / q->cpu;
	if (q->mem > 0 && n->mem_cap / q->mem < k)
		k = n->mem_cap / q->mem;
	bool gpu_kind = q->gpus > 0 || q->milli > 0 || q->prof >= 0;
	if (gpu_kind && q->model >= 0 && n->model != q->model)
		return 0;
	if (q->sel[0] && !gf__labels_match(ctl->nodes[g->rep].labels, q->sel))
		return 0;
	int usable = usable_gpus(ctl, g->rep);
	if (q->gpus > 0 && usable / q->gpus < k)
		k = usable / q->gpus;
	if (q->milli > 0 && usable * (GF_GPU_MILLI / q->milli) < k)
		k = usable * (GF_GPU_MILLI / q->milli);
	if (q->prof >= 0) {
		int f = 0;
		for (int x = ctl->node_inst[g->rep];
		     x < ctl->node_inst[g->rep + 1]; x++)
			f += ctl->inst[x].prof == q->prof;
		if (f < k)
			k = f;
	}
	return k > 0 ? (int)k : 0;
}

static void shape_answer(const struct gf_ctl *ctl, struct gf__shape *q)
{
	int64_t *blk = gf_calloc((size_t)ctl->nblk, sizeof(*blk));
	q->node_max = q->block_max = 0;
	for (int i = 0; i < ctl->adm->ngrp; i++) {
		const struct gf__group *g = &ctl->adm->grp[i];
		int k = group_cap(ctl, g, q);
		if (k > q->node_max)
			q->node_max = k;
		blk[g->block] += (int64_t)k * g->count;
	}
	for (int b = 0; b < ctl->nblk; b++) {
		int64_t v = blk[b] < GF_JOB_MAX_REPLICAS ? blk[b]
							 : GF_JOB_MAX_REPLICAS;
		if (v > q->block_max)
			q->block_max = (int)v;
	}
	gf_free(blk);
}

static uint64_t shape_hash(const struct gf__shape *q)
{
	uint64_t h = 1469598103934665603u;
	uint64_t v[] = { (uint64_t)q->cpu,  (uint64_t)q->mem,
			 (uint64_t)q->gpus, (uint64_t)q->milli,
			 (uint64_t)q->prof, (uint64_t)q->model };
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		h = (h ^ v[k]) * 1099511628211u;
	for (const char *s = q->sel; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return h;
}

static bool same_shape(const struct gf__shape *a, const struct gf__shape *b)
{
	return a->cpu == b->cpu && a->mem == b->mem && a->gpus == b->gpus &&
	       a->milli == b->milli && a->prof == b->prof &&
	       a->model == b->model && strcmp(a->sel, b->sel) == 0;
}

/* The answer for shape q, from the cache or the groups.  The cache is
 * reached through ctl->adm, a pointer: admission fills it though it
 * takes the core as const (one thread owns the core: ctl.h). */
static void shape_lookup(const struct gf_ctl *ctl, struct gf__shape *q)
{
	struct gf__admit *a = ctl->adm;
	size_t s = (size_t)(shape_hash(q) % (uint64_t)a->cap);
	while (a->shapes[s].used && !same_shape(&a->shapes[s], q))
		s = (s + 1) % (size_t)a->cap;
	if (a->shapes[s].used) {
		q->node_max = a->shapes[s].node_max;
		q->block_max = a->shapes[s].block_max;
		return;
	}
	shape_answer(ctl, q);
	if (2 * (a->nshapes + 1) > a->cap) {
		memset(a->shapes, 0, (size_t)a->cap * sizeof(*a->shapes));
		a->nshapes = 0;
		s = (size_t)(shape_hash(q) % (uint64_t)a->cap);
	}
	a->shapes[s] = *q;
	a->shapes[s].used = true;
	a->nshapes++;
}

/* Why no node holds one replica, in the words a user acts on. */
static int why_no_node(const struct gf_ctl *ctl, const struct gf_job_spec *s,
		       const struct gf__shape *q, struct gf_err *e)
{
	struct gf__shape any = *q;
	any.cpu = 0;
	any.mem = 0;
	any.gpus = any.milli = 0;
	any.prof = -1;
	any.model = -1;
	shape_answer(ctl, &any);
	if (q->sel[0] && any.node_max == 0)
		return gf_err_set(e, GF_ENEVER,
				  "no node matches node_selector '%s'", q->sel);
	char what[96];
	if (s->gpus > 0)
		snprintf(what, sizeof(what), "%d GPUs%s%s", s->gpus,
			 s->gpu_model[0] ? " of " : "", s->gpu_model);
	else if (s->gpu_milli > 0)
		snprintf(what, sizeof(what), "%d milli-GPU%s%s", s->gpu_milli,
			 s->gpu_model[0] ? " of " : "", s->gpu_model);
	else if (s->mig_profile[0])
		snprintf(what, sizeof(what), "a %s instance", s->mig_profile);
	else
		snprintf(what, sizeof(what), "no GPU");
	return gf_err_set(e, GF_ENEVER,
			  "no node%s%s can hold one replica (%s, %d "
			  "milli-CPU, %lld MiB)",
			  q->sel[0] ? " matching " : "", q->sel, what,
			  s->cpu_milli, (long long)s->memory_mib);
}

/* Physical limits first (422), then the fields (400). */
static int fields(const struct gf_job_spec *s, struct gf_err *e)
{
	struct gf_job_spec tmp = *s;
	if (tmp.gpu_milli > GF_GPU_MILLI)
		tmp.gpu_milli = GF_GPU_MILLI;
	if (tmp.gpus > GF_CNODE_MAX_GPUS)
		tmp.gpus = GF_CNODE_MAX_GPUS;
	int rc = gf_job_spec_check(&tmp, e);
	if (rc)
		return rc;
	if (s->gpu_milli > GF_GPU_MILLI)
		return gf_err_set(e, GF_ENEVER,
				  "a share of %d milli-GPU can never be "
				  "placed: a share is of one GPU (at most "
				  "1000)",
				  s->gpu_milli);
	if (s->gpus > GF_CNODE_MAX_GPUS)
		return gf_err_set(e, GF_ENEVER,
				  "%d GPUs per replica can never be placed: "
				  "a node has at most %d",
				  s->gpus, GF_CNODE_MAX_GPUS);
	return 0;
}

static int team_of(const struct gf_ctl *ctl, const char *name)
{
	for (int t = 0; t < ctl->cfg.nteams; t++)
		if (strcmp(ctl->cfg.teams[t].name, name) == 0)
			return t;
	return -1;
}

/* Model and profile as the cluster knows them; 422 when nobody has. */
static int kinds(const struct gf_ctl *ctl, const struct gf_job_spec *s,
		 struct gf__shape *q, struct gf_err *e)
{
	q->model = -1;
	q->prof = -1;
	if (s->gpu_model[0]) {
		q->model = gf__model_find(ctl->c, s->gpu_model);
		if (q->model < 0)
			return gf_err_set(e, GF_ENEVER,
					  "no node has GPU model '%s'",
					  s->gpu_model);
	}
	if (s->mig_profile[0]) {
		q->prof = gf__prof_find(ctl, s->mig_profile);
		if (q->prof < 0)
			return gf_err_set(e, GF_ENEVER,
					  "no node offers MIG profile '%s'",
					  s->mig_profile);
	}
	return 0;
}

int gf__admit_spec(const struct gf_ctl *ctl, const struct gf_job_spec *s,
		   bool api, struct gf_err *e)
{
	int rc = fields(s, e);
	if (rc)
		return rc;
	if (api && gf__class_find(ctl, s->class_name) < 0)
		return gf_err_set(e, GF_EINVAL, "'class': no class '%s'",
				  s->class_name);
	int t = team_of(ctl, s->team);
	if (api && t < 0 && !ctl->cfg.open_teams)
		return gf_err_set(e, GF_EAUTH,
				  "'team': team '%s' is not in the config",
				  s->team);
	struct gf__shape q = {
		.cpu = s->cpu_milli,
		.mem = s->memory_mib,
		.gpus = s->gpus,
		.milli = s->gpu_milli,
	};
	snprintf(q.sel, sizeof(q.sel), "%s", s->node_selector);
	if ((rc = kinds(ctl, s, &q, e)))
		return rc;
	shape_lookup(ctl, &q);
	if (q.node_max == 0)
		return why_no_node(ctl, s, &q, e);
	if (s->replicas > q.block_max)
		return gf_err_set(e, GF_ENEVER,
				  "gang of %d replicas does not fit any "
				  "block: the largest holds %d",
				  s->replicas, q.block_max);
	return gf__quota_never(ctl, t >= 0 ? &ctl->teams[t] : NULL, s, q.model,
			       q.prof, e);
}

int gf_ctl_admit(const struct gf_ctl *ctl, const struct gf_job_spec *spec,
		 struct gf_err *e)
{
	gf_err_clear(e);
	return gf__admit_spec(ctl, spec, true, e);
}
