/*
 * gang.c - a job's replicas on nodes: one replica through the engine
 * (whole GPUs, shares, CPU only) or on a MIG instance; a gang (replicas >
 * 1) all inside one block, all or nothing.
 *
 * Blocks are tried in an order that fights fragmentation: the block with
 * the least free GPU (MIG: the fewest free instances of the profile) that
 * can still hold the whole gang, so big empty blocks stay whole for big
 * gangs.  "Can hold" is exact: replicas of one shape take, on a node,
 * exactly one unit of the node's capacity for that shape (gf__cap: CPU,
 * memory, fully free GPUs / GPUs asked, the sum of the shares each GPU
 * can give, or free instances), so placing them one by one anywhere in
 * the block succeeds iff the block's capacities sum to the replicas.
 *
 * A node not ready (cordoned in the engine) holds no capacity for new
 * work (gf__cap 0, skipped by the engine's filter and by MIG placement);
 * an unhealthy GPU is held by the engine (no whole GPU, no share) and its
 * MIG instances are not free (jobs_mig.c).
 *
 * Invariants: every change to a node's GPUs goes through the wrappers
 * here (or jobs_health.c's holds), which keep each block's free GPU (idle)
 * and fully free GPUs (nfree) equal to the sums over its nodes, and each
 * node's count of running replicas (nrep); the scratch mask is all zero
 * between calls.
 */
#include "core/jobs/gang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/sched.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/mask.h"
#include "util/mem.h"

/* After a placement of r through the engine's filter (never on a held
 * GPU): block figures. */
static void blk_took(struct gf_ctl *ctl, int node, const struct gf_req *r,
		     const int *gpus)
{
	if (r->ngpus == 0)
		return;
	struct gf__block *b = gf__block_of(&ctl->nodes, node);
	const struct gf_cnode *n = &ctl->c->nodes[node];
	b->idle -= (int64_t)r->ngpus * r->gpu_milli;
	if (r->gpu_milli >= GF_GPU_MILLI)
		b->nfree -= r->ngpus;
	else if (n->gpu_left[gpus[0]] + r->gpu_milli == GF_GPU_MILLI)
		b->nfree--; /* the share took a GPU that was fully free */
}

/* Block figures after node changed from idle, nfree (a commit or an
 * unplace may touch held GPUs, whose shares are not idle). */
static void blk_follow(struct gf_ctl *ctl, int node, int32_t idle,
		       int32_t nfree)
{
	struct gf__block *b = gf__block_of(&ctl->nodes, node);
	const struct gf_cnode *n = &ctl->c->nodes[node];
	b->idle += n->idle - idle;
	b->nfree += n->nfree - nfree;
}

static int eng_place(struct gf_ctl *ctl, const struct gf_req *r,
		     const uint8_t *allowed, struct gf_placement *p)
{
	int rc = gf_sched_place_in(ctl->s, r, allowed, p);
	if (rc == 0) {
		blk_took(ctl, p->node, r, p->gpus);
		ctl->nodes.ns[p->node].nrep++;
	}
	return rc;
}

static int eng_commit(struct gf_ctl *ctl, const struct gf_req *r,
		      const struct gf_placement *p)
{
	if (p->node < 0 || p->node >= ctl->c->n)
		return GF_EINVAL;
	const struct gf_cnode *n = &ctl->c->nodes[p->node];
	int32_t idle = n->idle, nfree = n->nfree;
	int rc = gf_sched_commit(ctl->s, r, p);
	if (rc == 0) {
		blk_follow(ctl, p->node, idle, nfree);
		ctl->nodes.ns[p->node].nrep++;
	}
	return rc;
}

static int eng_unplace(struct gf_ctl *ctl, const struct gf_req *r,
		       const struct gf_placement *p)
{
	const struct gf_cnode *n = &ctl->c->nodes[p->node];
	int32_t idle = n->idle, nfree = n->nfree;
	int rc = gf_sched_unplace(ctl->s, r, p);
	if (rc == 0) {
		blk_follow(ctl, p->node, idle, nfree);
		ctl->nodes.ns[p->node].nrep--;
	}
	return rc;
}

int gf__cap(const struct gf_ctl *ctl, const struct gf__jrec *j,
	    const struct gf_req *r, const struct gf_cnode *n, int node,
	    int mig_free, int most)
{
	(void)ctl;
	(void)node;
	if (n->flags & GF_CNODE_CORDONED)
		return 0;
	int64_t k = most;
	bool gpu_kind = r->ngpus > 0 || j->prof != -1;
	/* without GPU: beyond what the free GPUs keep (the engine's rule,
	 * gf_sched_set_cpu_apart) */
	int32_t idle = gpu_kind ? 0 : n->idle;
	int64_t cpu = n->cpu_left - gf_cpu_kept(n->cpu_cap, n->ngpus, idle);
	int64_t mem = n->mem_left - gf_mem_kept(n->mem_cap, n->ngpus, idle);
	if (cpu < 0 || mem < 0)
		return 0;
	if (r->cpu > 0 && cpu / r->cpu < k)
		k = cpu / r->cpu;
	if (r->mem > 0 && mem / r->mem < k)
		k = mem / r->mem;
	if (gpu_kind && r->spec && !(r->spec >> n->model & 1))
		return 0;
	if (j->prof != -1) {
		if (mig_free < k)
			k = mig_free;
	} else if (r->ngpus > 0 && r->gpu_milli >= GF_GPU_MILLI) {
		if (n->nfree / r->ngpus < k)
			k = n->nfree / r->ngpus;
	} else if (r->ngpus > 0) {
		int64_t s = 0;
		for (int g = 0; g < n->ngpus; g++)
			s += n->gpu_left[g] / r->gpu_milli;
		if (s < k)
			k = s;
	}
	return k > 0 ? (int)k : 0;
}

bool gf__usable(struct gf_ctl *ctl, struct gf__jrec *j, const struct gf_req *r,
		int node)
{
	const uint8_t *mask = gf__mask(ctl, j);
	if (mask && !mask[node])
		return false;
	const struct gf_cnode *n = &ctl->c->nodes[node];
	if ((r->ngpus > 0 || j->prof != -1) && r->spec &&
	    !(r->spec >> n->model & 1))
		return false;
	if (j->prof == -1)
		return r->ngpus == 0 || n->ngpus > 0;
	for (int x = ctl->mig.node_inst[node]; x < ctl->mig.node_inst[node + 1];
	     x++)
		if (ctl->mig.inst[x].prof == j->prof)
			return true;
	return false;
}

static void fill(struct gf_ctl *ctl, int node, struct gf_job_place *out)
{
	memset(out, 0, sizeof(*out));
	GF__ACOPY(out->node_name, ctl->c->names[node]);
	out->node = node;
	out->mig_start = -1;
}

/* One MIG replica: the allowed node with a free instance, CPU and memory
 * that has the fewest free instances of the profile (packing). */
static int place_mig(struct gf_ctl *ctl, int jid, const struct gf_req *r,
		     const uint8_t *allowed, struct gf_job_place *out)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	int best = -1, best_free = 0;
	for (int k = 0; k < ctl->mig.prof_nnodes[j->prof]; k++) {
		int i = ctl->mig.prof_nodes[j->prof][k];
		const struct gf_cnode *n = &ctl->c->nodes[i];
		if ((allowed && !allowed[i]) ||
		    (n->flags & GF_CNODE_CORDONED) || n->cpu_left < r->cpu ||
		    n->mem_left < r->mem ||
		    (r->spec && !(r->spec >> n->model & 1)))
			continue;
		int f = gf__mig_free_on(ctl, i, j->prof);
		if (f > 0 &&
		    (best < 0 || f < best_free ||
		     (f == best_free && n->rank < ctl->c->nodes[best].rank))) {
			best = i;
			best_free = f;
		}
	}
	if (best < 0)
		return GF_ENOTFOUND;
	struct gf_placement p = { .node = best };
	if (eng_commit(ctl, r, &p))
		return GF_ENOTFOUND;
	int x = gf__mig_take(ctl, best, j->prof, jid);
	fill(ctl, best, out);
	out->ngpus = 1;
	out->gpus[0] = ctl->mig.inst[x].gpu;
	out->mig_start = ctl->mig.inst[x].start;
	return 0;
}

static int place_one(struct gf_ctl *ctl, int jid, const struct gf_req *r,
		     const uint8_t *allowed, struct gf_job_place *out)
{
	if (ctl->jobs.jr[jid].prof >= 0)
		return place_mig(ctl, jid, r, allowed, out);
	struct gf_placement p;
	int rc = eng_place(ctl, r, allowed, &p);
	if (rc)
		return rc;
	fill(ctl, p.node, out);
	out->ngpus = p.ngpus;
	memcpy(out->gpus, p.gpus, sizeof(p.gpus));
	out->gpu_milli = r->ngpus ? r->gpu_milli : 0;
	return 0;
}

static void unplace_one(struct gf_ctl *ctl, int jid,
			const struct gf_job_place *pl)
{
	const struct gf__jrec *j = &ctl->jobs.jr[jid];
	struct gf_placement p = { .node = pl->node, .ngpus = 0 };
	if (j->prof >= 0) {
		gf__mig_give(ctl, gf__mig_find(ctl, pl->node, pl->gpus[0],
					       pl->mig_start));
	} else {
		p.ngpus = pl->ngpus;
		memcpy(p.gpus, pl->gpus, sizeof(p.gpus));
	}
	/* cannot fail for a placement this core made; gf_ctl_check would
	 * report the engine and the jobs disagreeing */
	(void)eng_unplace(ctl, &j->req, &p);
}

void gf__unplace_some(struct gf_ctl *ctl, int jid,
		      const struct gf_job_place *pl, int k)
{
	for (int r = k - 1; r >= 0; r--)
		unplace_one(ctl, jid, &pl[r]);
}

void gf__unplace_job(struct gf_ctl *ctl, int jid, const struct gf_job_place *pl)
{
	gf__unplace_some(ctl, jid, pl, ctl->jobs.jr[jid].job->spec.replicas);
}

int gf__replica_commit(struct gf_ctl *ctl, int jid, struct gf_job_place *pl)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	struct gf_placement p = { .node = pl->node, .ngpus = 0 };
	int x = -1;
	if (j->prof >= 0) {
		x = gf__mig_find(ctl, pl->node, pl->gpus[0], pl->mig_start);
		if (x < 0 || ctl->mig.inst[x].prof != j->prof ||
		    ctl->mig.inst[x].user >= 0)
			return GF_EINVAL;
	} else if (j->prof == -1) {
		p.ngpus = pl->ngpus;
		memcpy(p.gpus, pl->gpus, sizeof(p.gpus));
		/* the engine would take a held share: not one in MIG mode */
		for (int g = 0; g < p.ngpus && g < GF_CNODE_MAX_GPUS; g++)
			if (p.gpus[g] >= 0 && p.gpus[g] < GF_CNODE_MAX_GPUS &&
			    (ctl->nodes.ns[pl->node].mig_gpus >> p.gpus[g] & 1))
				return GF_EINVAL;
	} else {
		return GF_EINVAL;
	}
	int rc = eng_commit(ctl, &j->req, &p);
	if (rc == 0 && x >= 0) {
		ctl->mig.inst[x].user = jid;
		ctl->mig.used++;
	}
	return rc;
}

/* Blocks that may hold the gang (id), in the order to try them (key). */
static int gang_blocks(struct gf_ctl *ctl, const struct gf__jrec *j,
		       const struct gf_req *r, int only_block,
		       struct gf__keyed *out)
{
	int64_t R = j->job->spec.replicas, nc = 0;
	int64_t *mig = NULL;
	if (j->prof >= 0) {
		mig = gf_calloc((size_t)ctl->nodes.nblk, sizeof(*mig));
		for (int k = 0; k < ctl->mig.prof_nnodes[j->prof]; k++) {
			int i = ctl->mig.prof_nodes[j->prof][k];
			mig[ctl->nodes.cfg[i].block] +=
				gf__mig_free_on(ctl, i, j->prof);
		}
	}
	bool whole = r->ngpus > 0 && r->gpu_milli >= GF_GPU_MILLI;
	for (int b = 0; b < ctl->nodes.nblk; b++) {
		const struct gf__block *bl = &ctl->nodes.blk[b];
		if ((only_block >= 0 && b != only_block) || bl->n == 0)
			continue;
		if (mig && mig[b] < R)
			continue;
		if (!mig && (bl->idle < R * r->ngpus * (int64_t)r->gpu_milli ||
			     (whole && bl->nfree < R * r->ngpus)))
			continue;
		out[nc].key = mig ? mig[b] : bl->idle;
		out[nc++].id = b;
	}
	gf_free(mig);
	qsort(out, (size_t)nc, sizeof(*out), gf__keyed_cmp);
	return (int)nc;
}

/* The gang's capacity in block b (nodes it may use), marking them in
 * the scratch mask; stops counting at R. */
static int64_t block_cap(struct gf_ctl *ctl, int jid, const struct gf_req *r,
			 int b, const uint8_t *outside)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	const struct gf__block *bl = &ctl->nodes.blk[b];
	int R = j->job->spec.replicas;
	int64_t sum = 0;
	for (int k = 0; k < bl->n; k++) {
		int i = bl->nodes[k];
		if ((outside && !outside[i]) || !gf__usable(ctl, j, r, i))
			continue;
		int mf = j->prof >= 0 ? gf__mig_free_on(ctl, i, j->prof) : 0;
		int cap = gf__cap(ctl, j, r, &ctl->c->nodes[i], i, mf, R);
		if (cap > 0) {
			ctl->scratch[i] = 1;
			sum += cap;
		}
	}
	return sum;
}

static void block_clear(struct gf_ctl *ctl, int b)
{
	const struct gf__block *bl = &ctl->nodes.blk[b];
	for (int k = 0; k < bl->n; k++)
		ctl->scratch[bl->nodes[k]] = 0;
}

/* The gang whole in block b under request r (its model mask as given),
 * or nothing placed. */
static int gang_in(struct gf_ctl *ctl, int jid, const struct gf_req *r, int b,
		   const uint8_t *outside, struct gf_job_place *pl)
{
	int R = ctl->jobs.jr[jid].job->spec.replicas, done = 0;
	if (block_cap(ctl, jid, r, b, outside) >= R) {
		while (done < R &&
		       place_one(ctl, jid, r, ctl->scratch, &pl[done]) == 0)
			done++;
		if (done < R)
			while (done > 0)
				unplace_one(ctl, jid, &pl[--done]);
	}
	block_clear(ctl, b);
	return done == R ? 0 : GF_ENOTFOUND;
}

/* A gang's replicas of one GPU model unless the job named one (or asks
 * for no GPU): the models it may use, one mask each, into out; the
 * count, 0 for "as asked". */
int gf__gang_models(const struct gf_ctl *ctl, const struct gf__jrec *j,
		    const struct gf_req *r, uint32_t *out)
{
	bool gpu_kind = r->ngpus > 0 || j->prof != -1;
	if (!gpu_kind || j->model >= 0 || ctl->c->nmodels < 2)
		return 0;
	int n = 0;
	for (int m = 0; m < ctl->c->nmodels && m < 32; m++)
		if (!r->spec || (r->spec >> m & 1))
			out[n++] = UINT32_C(1) << m;
	return n;
}

static int place_gang(struct gf_ctl *ctl, int jid, const struct gf_req *r,
		      const uint8_t *outside, int only_block,
		      struct gf_job_place *pl, int *block)
{
	struct gf__keyed *bs = gf_calloc((size_t)ctl->nodes.nblk, sizeof(*bs));
	int nb = gang_blocks(ctl, &ctl->jobs.jr[jid], r, only_block, bs);
	uint32_t models[32];
	int nm = gf__gang_models(ctl, &ctl->jobs.jr[jid], r, models);
	int rc = GF_ENOTFOUND;
	for (int k = 0; k < nb && rc; k++) {
		int b = bs[k].id;
		if (nm == 0) {
			rc = gang_in(ctl, jid, r, b, outside, pl);
		} else {
			struct gf_req one = *r;
			for (int m = 0; m < nm && rc; m++) {
				one.spec = models[m];
				rc = gang_in(ctl, jid, &one, b, outside, pl);
			}
		}
		if (rc == 0)
			*block = b;
	}
	gf_free(bs);
	return rc;
}

/* One replica: build the allowed mask from the selector, the nodes
 * outside the reservation and only_node. */
static int place_single(struct gf_ctl *ctl, int jid, const struct gf_req *r,
			const uint8_t *outside, int only_node,
			struct gf_job_place *pl)
{
	const uint8_t *mask = gf__mask(ctl, &ctl->jobs.jr[jid]);
	int n = ctl->c->n, rc;
	if (only_node >= 0) {
		ctl->scratch[only_node] = (!mask || mask[only_node]) &&
					  (!outside || outside[only_node]);
		rc = place_one(ctl, jid, r, ctl->scratch, pl);
		ctl->scratch[only_node] = 0;
	} else if (!outside || !mask) {
		rc = place_one(ctl, jid, r, outside ? outside : mask, pl);
	} else {
		for (int i = 0; i < n; i++)
			ctl->scratch[i] = mask[i] & outside[i];
		rc = place_one(ctl, jid, r, ctl->scratch, pl);
		memset(ctl->scratch, 0, (size_t)n);
	}
	return rc;
}

int gf__place_job(struct gf_ctl *ctl, int jid, const struct gf_req *r,
		  const uint8_t *outside, int only_node, int only_block,
		  struct gf_job_place **out, int *block)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	int R = j->job->spec.replicas, rc;
	if (j->never || j->prof == -2)
		return GF_ENOTFOUND;
	struct gf_job_place *pl = gf_calloc((size_t)R, sizeof(*pl));
	if (R == 1 && only_block < 0) {
		rc = place_single(ctl, jid, r, outside, only_node, pl);
		if (rc == 0)
			*block = ctl->nodes.cfg[pl[0].node].block;
	} else {
		rc = place_gang(ctl, jid, r, outside, only_block, pl, block);
	}
	if (rc) {
		gf_free(pl);
		return GF_ENOTFOUND;
	}
	*out = pl;
	return 0;
}

struct gf__trial *gf__trial_get(struct gf_ctl *ctl, struct gf__trials *ts,
				int i, bool *fresh)
{
	*fresh = ctl->trial_of[i] < 0;
	if (!*fresh)
		return &ts->t[ctl->trial_of[i]];
	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? ts->cap * 2 : 16;
		ts->t = gf_reallocarray(ts->t, (size_t)ts->cap, sizeof(*ts->t));
	}
	struct gf__trial *t = &ts->t[ts->n];
	t->node = i;
	t->base = 0;
	t->n = ctl->c->nodes[i];
	t->mig = ts->prof >= 0 ? gf__mig_free_on(ctl, i, ts->prof) : 0;
	ctl->trial_of[i] = ts->n++;
	return t;
}

void gf__trial_give(const struct gf_ctl *ctl, const struct gf__trials *ts,
		    struct gf__trial *t, int v, const struct gf_job_place *p)
{
	const struct gf__jrec *vj = &ctl->jobs.jr[v];
	int gpus[GF_CNODE_MAX_GPUS];
	memcpy(gpus, p->gpus, sizeof(gpus));
	(void)!gf_cnode_give(&t->n, &vj->req, gpus);
	if (vj->prof >= 0 && vj->prof == ts->prof &&
	    !(ctl->nodes.ns[p->node].sick >> p->gpus[0] & 1))
		t->mig++; /* its instance is free again, and usable */
}

void gf__trials_reset(struct gf_ctl *ctl, struct gf__trials *ts)
{
	for (int k = 0; k < ts->n; k++)
		ctl->trial_of[ts->t[k].node] = -1;
	ts->n = 0;
}
