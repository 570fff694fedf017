/*
 * admit.c - admission: can a job of this spec ever be placed here?
 * Checked against the nodes as they are when empty (MIG GPUs out, MIG
 * instances in), the blocks, the node selectors and the team's whole
 * quota, never against what runs now.
 *
 * The nodes are those the core knows, ready or not (a node not ready is
 * expected back), as they would be empty; health is not looked at.
 *
 * Speed: the service admits thousands of submissions a second against
 * 10,000 nodes.  Nodes alike (capacity, usable GPUs, model, block, labels,
 * MIG instances) form one group; a request shape (CPU, memory, GPU kind
 * and size, model, selector) is answered from the groups (the replicas
 * one empty node of each group holds, times its nodes, summed per block)
 * and the answer cached by shape, so a known shape costs a hash lookup.
 * Nodes join their group as they come (gf__group_join, a hash of their
 * fields) and leave it before they change (gf__group_leave); either
 * drops the cached answers.  Both indexes are util/hash.h's gf_hmap.
 *
 * Invariants: the groups with members partition the nodes (ns[i].grp),
 * each group's nodes identical in every field the answer reads to its
 * rep, a member; empty groups are skipped and, once they are half the
 * groups, built afresh; a cached answer of the current generation equals
 * a fresh one; the cache holds at most SHAPES_MAX shapes, and is emptied
 * when it would pass them.
 */
#include "core/jobs/admit.h"

#include <stdio.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/mask.h"
#include "core/jobs/quota.h"
#include "util/fmt.h"
#include "util/hash.h"
#include "util/mem.h"

#define SHAPES_MAX 4096 /* cached answers (then the cache is emptied) */

struct gf__shape {
	int32_t cpu;
	int gpus, milli, prof, model;
	int64_t mem;
	char sel[GF_SELECTOR_MAX];
	int node_max;  /* replicas the best empty node holds */
	int block_max; /* replicas the best block holds */
};

static int usable_gpus(const struct gf_ctl *ctl, int i)
{
	return ctl->c->nodes[i].ngpus -
	       __builtin_popcount(ctl->nodes.ns[i].mig_gpus);
}

/* Same profiles, same counts. */
static bool same_mig(const struct gf_ctl *ctl, int a, int b)
{
	int na = ctl->mig.node_inst[a + 1] - ctl->mig.node_inst[a];
	if (na != ctl->mig.node_inst[b + 1] - ctl->mig.node_inst[b])
		return false;
	for (int p = 0; na > 0 && p < ctl->mig.nprof; p++)
		if (gf__mig_offered(ctl, a, p) != gf__mig_offered(ctl, b, p))
			return false;
	return true;
}

static bool alike(const struct gf_ctl *ctl, int a, int b)
{
	const struct gf_cnode *x = &ctl->c->nodes[a], *y = &ctl->c->nodes[b];
	return x->cpu_cap == y->cpu_cap && x->mem_cap == y->mem_cap &&
	       x->model == y->model && x->ngpus == y->ngpus &&
	       ctl->nodes.cfg[a].block == ctl->nodes.cfg[b].block &&
	       usable_gpus(ctl, a) == usable_gpus(ctl, b) &&
	       strcmp(ctl->nodes.cfg[a].labels, ctl->nodes.cfg[b].labels) ==
		       0 &&
	       same_mig(ctl, a, b);
}

static uint64_t node_hash(const struct gf_ctl *ctl, int i)
{
	const struct gf_cnode *n = &ctl->c->nodes[i];
	uint64_t h = gf_hash_str(ctl->nodes.cfg[i].labels);
	uint64_t v[] = { (uint64_t)n->cpu_cap,
			 (uint64_t)n->mem_cap,
			 n->model,
			 n->ngpus,
			 (uint64_t)ctl->nodes.cfg[i].block,
			 (uint64_t)usable_gpus(ctl, i),
			 (uint64_t)(ctl->mig.node_inst[i + 1] -
				    ctl->mig.node_inst[i]) };
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		h = gf_hash_mix(h, v[k]);
	return h;
}

/* Room for want groups. */
static void groups_reserve(struct gf__admit *a, int want)
{
	if (want <= a->grp_cap)
		return;
	a->grp_cap = a->grp_cap ? a->grp_cap * 2 : 64;
	while (a->grp_cap < want)
		a->grp_cap *= 2;
	a->grp = gf_reallocarray(a->grp, (size_t)a->grp_cap, sizeof(*a->grp));
}

/* The cached answers are gone. */
static void shapes_drop(struct gf__admit *a)
{
	if (a->nshapes > 0)
		gf_hmap_clear(&a->shape_idx);
	a->nshapes = 0;
}

/* The key the group index's eq reads: a node, and the core. */
struct node_key {
	const struct gf_ctl *ctl;
	int node;
};

/* Does group row hold nodes alike node k->node?  (Empty groups never.) */
static bool group_is(const void *key, uint32_t row)
{
	const struct node_key *k = key;
	const struct gf__group *g = &k->ctl->adm->grp[row];
	return g->count > 0 && alike(k->ctl, g->rep, k->node);
}

void gf__group_join(struct gf_ctl *ctl, int i)
{
	struct gf__admit *a = ctl->adm;
	groups_reserve(a, a->ngrp + 1);
	uint64_t h = node_hash(ctl, i);
	struct node_key key = { ctl, i };
	int64_t g = gf_hmap_get(&a->grp_idx, h, group_is, &key);
	if (g < 0) {
		a->grp[a->ngrp] = (struct gf__group){
			.rep = i, .count = 0, .block = ctl->nodes.cfg[i].block
		};
		g = a->ngrp++;
		int rc = gf_hmap_put(&a->grp_idx, h, (uint32_t)g);
		(void)rc; /* no fail: groups <= nodes < GF_HMAP_MAX */
	}
	a->grp[g].count++;
	ctl->nodes.ns[i].grp = (int)g;
	shapes_drop(a);
}

/* Every node but skip into a group afresh (the empty ones gone). */
static void groups_build(struct gf_ctl *ctl, int skip)
{
	struct gf__admit *a = ctl->adm;
	a->ngrp = a->nempty = 0;
	gf_hmap_clear(&a->grp_idx);
	for (int i = 0; i < ctl->c->n; i++)
		if (i != skip)
			gf__group_join(ctl, i);
}

void gf__group_leave(struct gf_ctl *ctl, int i)
{
	struct gf__admit *a = ctl->adm;
	struct gf__group *g = &a->grp[ctl->nodes.ns[i].grp];
	int k = ctl->nodes.ns[i].grp;
	ctl->nodes.ns[i].grp = -1;
	shapes_drop(a);
	if (--g->count == 0) {
		if (++a->nempty * 2 > a->ngrp)
			groups_build(ctl, i); /* i joins once changed */
		return;
	}
	for (int j = 0; g->rep == i && j < ctl->c->n; j++)
		if (j != i && ctl->nodes.ns[j].grp == k)
			g->rep = j;
}

int gf__admit_setup(struct gf_ctl *ctl)
{
	struct gf__admit *a = ctl->adm;
	groups_reserve(a, ctl->c->n > 0 ? ctl->c->n : 1);
	for (int i = 0; i < ctl->c->n; i++)
		gf__group_join(ctl, i);
	a->shapes = gf_calloc(SHAPES_MAX, sizeof(*a->shapes));
	return 0;
}

void gf__admit_free(struct gf_ctl *ctl)
{
	if (ctl->adm == NULL)
		return;
	gf_free(ctl->adm->grp);
	gf_hmap_release(&ctl->adm->grp_idx);
	gf_hmap_release(&ctl->adm->shape_idx);
	gf_free(ctl->adm->shapes);
	gf_free(ctl->adm);
}

int gf__admit_check(const struct gf_ctl *ctl, char *msg, unsigned size)
{
	const struct gf__admit *a = ctl->adm;
	int *count = gf_calloc((size_t)a->ngrp + 1, sizeof(int)), rc = 0;
	for (int i = 0; i < ctl->c->n && rc == 0; i++) {
		int g = ctl->nodes.ns[i].grp;
		if (g < 0 || g >= a->ngrp || a->grp[g].count <= 0 ||
		    !alike(ctl, a->grp[g].rep, i) ||
		    ctl->nodes.ns[a->grp[g].rep].grp != g) {
			gf_note(msg, size,
				"node %s: not in the admission group of "
				"nodes alike",
				ctl->c->names[i]);
			rc = GF_EINVAL;
		} else {
			count[g]++;
		}
	}
	for (int g = 0; g < a->ngrp && rc == 0; g++)
		if (count[g] != a->grp[g].count) {
			gf_note(msg, size, "admission group %d miscounted", g);
			rc = GF_EINVAL;
		}
	gf_free(count);
	return rc;
}

/* Replicas of shape q one empty node of group g holds. */
static int group_cap(const struct gf_ctl *ctl, const struct gf__group *g,
		     const struct gf__shape *q)
{
	const struct gf_cnode *n = &ctl->c->nodes[g->rep];
	int64_t k = GF_JOB_MAX_REPLICAS;
	bool gpu_kind = q->gpus > 0 || q->milli > 0 || q->prof >= 0;
	/* without GPU: what the node's GPUs, all free, do not keep
	 * (gf_sched_set_cpu_apart) */
	int32_t idle = gpu_kind ? 0 : usable_gpus(ctl, g->rep) * GF_GPU_MILLI;
	int64_t cpu = n->cpu_cap - gf_cpu_kept(n->cpu_cap, n->ngpus, idle);
	int64_t mem = n->mem_cap - gf_mem_kept(n->mem_cap, n->ngpus, idle);
	if (q->cpu > 0 && cpu / q->cpu < k)
		k = cpu / q->cpu;
	if (q->mem > 0 && mem / q->mem < k)
		k = mem / q->mem;
	if (gpu_kind && q->model >= 0 && n->model != q->model)
		return 0;
	if (q->sel[0] && !gf__node_matches(ctl, g->rep, q->sel))
		return 0;
	int usable = usable_gpus(ctl, g->rep);
	if (q->gpus > 0 && usable / q->gpus < k)
		k = usable / q->gpus;
	if (q->milli > 0 && usable * (GF_GPU_MILLI / q->milli) < k)
		k = usable * (GF_GPU_MILLI / q->milli);
	if (q->prof >= 0) {
		int f = 0;
		for (int x = ctl->mig.node_inst[g->rep];
		     x < ctl->mig.node_inst[g->rep + 1]; x++)
			f += ctl->mig.inst[x].prof == q->prof;
		if (f < k)
			k = f;
	}
	return k > 0 ? (int)k : 0;
}

/* What node and block may hold of shape q.  A gang of a GPU kind that
 * names no model stays on one (gang.c): a block's capacity is counted
 * per model then. */
static void shape_answer(const struct gf_ctl *ctl, struct gf__shape *q)
{
	bool per_model =
		(q->gpus > 0 || q->milli > 0 || q->prof >= 0) && q->model < 0;
	int nm = per_model && ctl->c->nmodels > 1 ? ctl->c->nmodels : 1;
	int64_t *blk =
		gf_calloc((size_t)ctl->nodes.nblk * (size_t)nm, sizeof(*blk));
	q->node_max = q->block_max = 0;
	for (int i = 0; i < ctl->adm->ngrp; i++) {
		const struct gf__group *g = &ctl->adm->grp[i];
		if (g->count == 0)
			continue;
		int k = group_cap(ctl, g, q);
		if (k > q->node_max)
			q->node_max = k;
		int m = nm > 1 ? ctl->c->nodes[g->rep].model : 0;
		blk[(size_t)g->block * (size_t)nm + (size_t)m] +=
			(int64_t)k * g->count;
	}
	for (int b = 0; b < ctl->nodes.nblk * nm; b++) {
		int64_t v = blk[b] < GF_JOB_MAX_REPLICAS ? blk[b]
							 : GF_JOB_MAX_REPLICAS;
		if (v > q->block_max)
			q->block_max = (int)v;
	}
	gf_free(blk);
}

static uint64_t shape_hash(const struct gf__shape *q)
{
	uint64_t h = gf_hash_str(q->sel);
	uint64_t v[] = { (uint64_t)q->cpu,  (uint64_t)q->mem,
			 (uint64_t)q->gpus, (uint64_t)q->milli,
			 (uint64_t)q->prof, (uint64_t)q->model };
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		h = gf_hash_mix(h, v[k]);
	return h;
}

static bool same_shape(const struct gf__shape *a, const struct gf__shape *b)
{
	return a->cpu == b->cpu && a->mem == b->mem && a->gpus == b->gpus &&
	       a->milli == b->milli && a->prof == b->prof &&
	       a->model == b->model && strcmp(a->sel, b->sel) == 0;
}

/* The key the shape index's eq reads: a shape, and the cache. */
struct shape_key {
	const struct gf__admit *a;
	const struct gf__shape *q;
};

static bool shape_is(const void *key, uint32_t row)
{
	const struct shape_key *k = key;
	return same_shape(&k->a->shapes[row], k->q);
}

/* The answer for shape q, from the cache or the groups.  The cache is
 * reached through ctl->adm, a pointer: admission fills it though it
 * takes the core as const (one thread owns the core: ctl.h). */
static void shape_lookup(const struct gf_ctl *ctl, struct gf__shape *q)
{
	struct gf__admit *a = ctl->adm;
	uint64_t h = shape_hash(q);
	struct shape_key key = { a, q };
	int64_t s = gf_hmap_get(&a->shape_idx, h, shape_is, &key);
	if (s >= 0) {
		q->node_max = a->shapes[s].node_max;
		q->block_max = a->shapes[s].block_max;
		return;
	}
	shape_answer(ctl, q);
	if (a->nshapes == SHAPES_MAX)
		shapes_drop(a);
	a->shapes[a->nshapes] = *q;
	int rc = gf_hmap_put(&a->shape_idx, h, (uint32_t)a->nshapes);
	(void)rc; /* no fail: SHAPES_MAX rows < GF_HMAP_MAX */
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
		gf_note(what, sizeof(what), "%d GPUs%s%s", s->gpus,
			s->gpu_model[0] ? " of " : "", s->gpu_model);
	else if (s->gpu_milli > 0)
		gf_note(what, sizeof(what), "%d milli-GPU%s%s", s->gpu_milli,
			s->gpu_model[0] ? " of " : "", s->gpu_model);
	else if (s->mig_profile[0])
		gf_note(what, sizeof(what), "a %s instance", s->mig_profile);
	else
		gf_note(what, sizeof(what), "no GPU");
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

/* The config's team index of name, or -1. */
static int team_of(const struct gf_ctl *ctl, const char *name)
{
	return gf__name_index(ctl->cfg.teams, sizeof(ctl->cfg.teams[0]),
			      ctl->cfg.nteams, name);
}

/* Model and profile as the cluster knows them; 422 when nobody has. */
static int kinds(const struct gf_ctl *ctl, const struct gf_job_spec *s,
		 struct gf__shape *q, struct gf_err *e)
{
	q->model = -1;
	q->prof = -1;
	if (s->gpu_model[0]) {
		q->model = gf__model_resolve(ctl->c, s->gpu_model);
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
	GF__ACOPY(q.sel, s->node_selector);
	if ((rc = kinds(ctl, s, &q, e)))
		return rc;
	shape_lookup(ctl, &q);
	if (q.node_max == 0)
		return why_no_node(ctl, s, &q, e);
	bool one_model =
		(s->gpus > 0 || s->gpu_milli > 0 || s->mig_profile[0]) &&
		!s->gpu_model[0] && ctl->c->nmodels > 1;
	if (s->replicas > q.block_max)
		return gf_err_set(e, GF_ENEVER,
				  "gang of %d replicas does not fit any "
				  "block%s: the largest holds %d",
				  s->replicas,
				  one_model ? " on one GPU model" : "",
				  q.block_max);
	return gf__quota_never(ctl, t >= 0 ? &ctl->teams.t[t] : NULL, s,
			       q.model, q.prof, e);
}

int gf_ctl_admit(const struct gf_ctl *ctl, const struct gf_job_spec *spec,
		 struct gf_err *e)
{
	gf_err_clear(e);
	return gf__admit_spec(ctl, spec, true, e);
}

/* What the core keeps beside the job: request, kinds, runtime, share. */
void gf__derive(struct gf_ctl *ctl, struct gf__jrec *j)
{
	const struct gf_job_spec *s = &j->job->spec;
	struct gf_req *r = &j->req;
	memset(r, 0, sizeof(*r));
	r->cpu = s->cpu_milli;
	r->mem = s->memory_mib;
	j->model =
		s->gpu_model[0] ? gf__model_resolve(ctl->c, s->gpu_model) : -1;
	if (s->gpu_model[0] && j->model < 0)
		j->model = -2;
	j->prof = s->mig_profile[0] ? gf__prof_find(ctl, s->mig_profile) : -1;
	if (s->mig_profile[0] && j->prof < 0)
		j->prof = -2;
	if (s->gpus > 0) {
		r->ngpus = (uint16_t)s->gpus;
		r->gpu_milli = GF_GPU_MILLI;
		j->milli = (int64_t)s->gpus * GF_GPU_MILLI;
	} else if (s->gpu_milli > 0) {
		r->ngpus = 1;
		r->gpu_milli = (int16_t)s->gpu_milli;
		j->milli = s->gpu_milli;
	} else if (j->prof >= 0) {
		j->milli = ctl->mig.prof_milli[j->prof];
	}
	j->milli *= s->replicas;
	if (j->model >= 0) {
		r->spec = UINT32_C(1) << j->model;
		r->spec_key = (uint16_t)(j->model + 1);
	}
	if (s->replicas > 1 && r->ngpus > 0)
		r->flags = GF_REQ_MULTINODE;
	int64_t max_s = s->max_runtime_s > 0
				? s->max_runtime_s
				: ctl->cfg.classes[j->cls].max_runtime_s;
	j->max_ms = max_s * 1000;
	gf_sched_classify(ctl->s, r);
}
