/*
 * jobs_nodes.c - nodes at run time (gf_ctl_node_add): a node registered is
 * checked whole before anything changes (plan), then added, or updated
 * in place (labels, block, MIG instances, GPU topology), or rebuilt with
 * another shape once its jobs are requeued.  Also the per-node arrays
 * and the blocks' node lists, which gf_ctl_new fills the same way.
 *
 * A new node starts not ready ("waiting for its agent"): cordoned in the
 * engine until gf_ctl_node_ready (jobs_health.c).  Adding one costs amortized
 * O(classes + blocks + cached masks + jobs marked never, admitted once
 * per alike group: never.c): the arrays
 * double, the engine grows (sched_nodes.c), the admission groups take it
 * in (admit.c).  An update that changes something looks at every job not
 * final again (a selector may match no node now), O(nodes + jobs).
 *
 * Invariants: the per-node arrays (struct gf__nodes' cfg and ns,
 * scratch, not_h, trial_of, node_inst, every cached mask) have room for
 * nodes.cap >= c->n nodes, with scratch and not_h zero and trial_of -1
 * where unused; node i sits at gf__block_of(i)->nodes[ns[i].bpos];
 * cfg.nblocks == nodes.nblk; a call that fails has changed nothing.
 */
#include "core/jobs/jobs_nodes.h"

#include <stdio.h>
#include <string.h>

#include "core/jobs/admit.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/held.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/jobs_health.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/mask.h"
#include "core/jobs/never.h"
#include "core/jobs/quota.h"
#include "util/fmt.h"
#include "util/mem.h"

#define WAITING "waiting for its agent"

/* Grow a per-node array from old to cap entries, the new ones zero. */
static void *grow(void *p, size_t old, size_t cap, size_t size)
{
	p = gf_reallocarray(p, cap, size);
	memset((char *)p + old * size, 0, (cap - old) * size);
	return p;
}

void gf__nodes_reserve(struct gf_ctl *ctl, int n)
{
	if (ctl->nodes.cfg && n <= ctl->nodes.cap)
		return;
	int old = ctl->nodes.cap, cap = old ? old : 16;
	while (cap < n)
		cap *= 2;
	size_t o = (size_t)old, nc = (size_t)cap;
	ctl->nodes.cfg = grow(ctl->nodes.cfg, o, nc, sizeof(*ctl->nodes.cfg));
	ctl->nodes.ns = grow(ctl->nodes.ns, o, nc, sizeof(*ctl->nodes.ns));
	ctl->scratch = grow(ctl->scratch, o, nc, 1);
	ctl->not_h = grow(ctl->not_h, o, nc, 1);
	ctl->trial_of = gf_reallocarray(ctl->trial_of, nc, sizeof(int));
	for (int i = old; i < cap; i++)
		ctl->trial_of[i] = -1;
	/* node_inst[0..c->n] are kept; the rest is set as nodes come */
	ctl->mig.node_inst =
		grow(ctl->mig.node_inst, old ? o + 1 : 0, nc + 1, sizeof(int));
	ctl->nodes.cap = cap;
	gf__masks_grow(ctl, old);
}

void gf__nodes_free(struct gf__nodes *nd, int n)
{
	for (int i = 0; nd->ns && i < n; i++)
		gf_free(nd->ns[i].gpu_why);
	gf_free(nd->ns);
	gf_free(nd->cfg);
	for (int b = 0; nd->blk && b < nd->nblk; b++)
		gf_free(nd->blk[b].nodes);
	gf_free(nd->blk);
	gf_hmap_release(&nd->names);
}

void gf__block_join(struct gf__nodes *nd, const struct gf_cnode *n, int i)
{
	struct gf__block *b = gf__block_of(nd, i);
	b->nodes = gf_grow(b->nodes, sizeof(int), &b->cap, (size_t)b->n, 16);
	nd->ns[i].bpos = b->n;
	b->nodes[b->n++] = i;
	b->idle += n->idle;
	b->nfree += n->nfree;
}

static void block_leave(struct gf__nodes *nd, const struct gf_cnode *n, int i)
{
	struct gf__block *b = gf__block_of(nd, i);
	int pos = nd->ns[i].bpos, last = b->nodes[--b->n];
	b->nodes[pos] = last;
	nd->ns[last].bpos = pos;
	b->idle -= n->idle;
	b->nfree -= n->nfree;
}

/* A node_add checked, before anything changes. */
struct plan {
	const char *name;
	const struct gf_ctl_node_spec *sp;
	int node;  /* its index when known, else -1 */
	int model; /* cluster model id; -1: a model to add */
	int block; /* block index; -1: a block to add */
	const struct gf_mig_model *mig;
	char mig_model[GF_MODEL_NAME_MAX]; /* mig's id, "" none */
	bool reshape;			   /* known, with another shape */
	bool news; /* a model or MIG profile the core lacked */
};

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static int check_fields(const char *name, const struct gf_ctl_node_spec *sp,
			struct gf_err *e)
{
	char why[160];
	if (name == NULL || !gf__name_ok(name, GF_NODE_NAME_MAX))
		return gf_err_set(e, GF_EINVAL,
				  "node name '%.*s': 1 to %d letters, digits, "
				  "'.', '_', '-'",
				  GF_NODE_NAME_MAX - 1, name ? name : "",
				  GF_NODE_NAME_MAX - 1);
	if (sp->cpu_milli < 0 || sp->memory_mib < 0)
		return gf_err_set(e, GF_EINVAL,
				  "node %s: 'cpu_milli' and 'memory_mib': "
				  "expected >= 0",
				  name);
	if (sp->ngpus < 0 || sp->ngpus > GF_CNODE_MAX_GPUS)
		return gf_err_set(e, GF_EINVAL,
				  "node %s: 'ngpus': expected 0 to %d, got %d",
				  name, GF_CNODE_MAX_GPUS, sp->ngpus);
	if (!terminated(sp->gpu_model, sizeof(sp->gpu_model)) ||
	    !terminated(sp->mig_model, sizeof(sp->mig_model)) ||
	    (sp->ngpus > 0 && sp->gpu_model[0] == '\0'))
		return gf_err_set(e, GF_EINVAL,
				  "node %s: 'gpu_model': a name under %d "
				  "bytes, required with GPUs",
				  name, GF_MODEL_NAME_MAX);
	if (!terminated(sp->labels, sizeof(sp->labels)) ||
	    gf__labels_check(sp->labels, why, sizeof(why)))
		return gf_err_set(e, GF_EINVAL, "node %s: labels: %s", name,
				  terminated(sp->labels, sizeof(sp->labels))
					  ? why
					  : "not terminated");
	if (!terminated(sp->block, sizeof(sp->block)) ||
	    (sp->block[0] && !gf__name_ok(sp->block, sizeof(sp->block))))
		return gf_err_set(e, GF_EINVAL,
				  "node %s: block: letters, digits, '.', '_', "
				  "'-'",
				  name);
	if (sp->topo && sp->topo->ngpus != sp->ngpus)
		return gf_err_set(e, GF_EINVAL,
				  "node %s: GPU topology of %d GPUs, the node "
				  "has %d",
				  name, sp->topo->ngpus, sp->ngpus);
	return 0;
}

static int find_block(const struct gf_ctl *ctl, const char *name)
{
	if (name[0] == '\0')
		return 0;
	for (int b = 0; b < ctl->cfg.nblocks; b++)
		if (strcmp(ctl->cfg.blocks[b], name) == 0)
			return b;
	return -1;
}

/* Model, block, MIG and capacity: known, or room to add them. */
static int plan_kinds(struct gf_ctl *ctl, struct plan *p, struct gf_err *e)
{
	const struct gf_ctl_node_spec *sp = p->sp;
	const struct gf_cluster *c = ctl->c;
	p->model = sp->ngpus > 0 ? gf__model_find(c, sp->gpu_model) : 0;
	if (p->model < 0 && c->nmodels >= GF_MAX_MODELS)
		return gf_err_set(e, GF_ETOOBIG,
				  "node %s: model '%s': more than %d GPU "
				  "models",
				  p->name, sp->gpu_model, GF_MAX_MODELS);
	p->news = p->model < 0;
	p->block = find_block(ctl, sp->block);
	if (p->block < 0 && ctl->cfg.nblocks >= GF_CTL_MAX_BLOCKS)
		return gf_err_set(e, GF_ETOOBIG,
				  "node %s: block '%s': more than %d blocks",
				  p->name, sp->block, GF_CTL_MAX_BLOCKS);
	if (p->node < 0 && c->n >= GF_MAX_CNODES)
		return gf_err_set(e, GF_ETOOBIG, "more than %d nodes",
				  GF_MAX_CNODES);
	if (sp->topo && c->ntopos >= UINT16_MAX - 2)
		return gf_err_set(e, GF_ETOOBIG, "too many GPU topologies");
	const char *model = sp->ngpus > 0 ? sp->gpu_model : "";
	if (gf__mig_model_for(sp->mig_model, model, &p->mig))
		return gf_err_set(e, GF_EINVAL,
				  "node %s: unknown MIG model '%s'", p->name,
				  sp->mig_model);
	if (gf_fmt(p->mig_model, sizeof(p->mig_model), "%s",
		   p->mig ? p->mig->id : ""))
		return gf_err_set(e, GF_ETOOBIG,
				  "node %s: MIG model id '%s' too long",
				  p->name, p->mig->id);
	char(*names)[GF_MIG_PROFILE_MAX] =
		gf_calloc(GF__MAX_PROFILES, GF_MIG_PROFILE_MAX);
	int nnames = 0;
	int rc = gf__mig_check(ctl, p->name, sp->ngpus, p->mig, model, sp->mig,
			       sp->nmig, names, &nnames, e);
	gf_free(names);
	p->news |= nnames > 0;
	return rc;
}

static int plan(struct gf_ctl *ctl, const char *name,
		const struct gf_ctl_node_spec *sp, int64_t now, struct plan *p,
		struct gf_err *e)
{
	*p = (struct plan){ .name = name, .sp = sp };
	if (sp == NULL)
		return gf_err_set(e, GF_EINVAL, "no node spec");
	if (now <= 0)
		return gf_err_set(e, GF_EINVAL,
				  "time %lld: expected ms since the epoch",
				  (long long)now);
	int rc = check_fields(name, sp, e);
	if (rc)
		return rc;
	p->node = gf__node_find(ctl, name);
	if ((rc = plan_kinds(ctl, p, e)))
		return rc;
	if (p->node < 0)
		return 0;
	const struct gf_cnode *n = &ctl->c->nodes[p->node];
	p->reshape = n->cpu_cap != sp->cpu_milli ||
		     n->mem_cap != sp->memory_mib || n->ngpus != sp->ngpus ||
		     (sp->ngpus > 0 && n->model != p->model) ||
		     ctl->nodes.ns[p->node].mig != p->mig;
	if (p->reshape)
		return 0;
	return gf__mig_conflict(ctl, p->node, sp->mig, sp->nmig, e);
}

/* Nothing would change: same labels, block, instances, topology. */
static bool unchanged(const struct gf_ctl *ctl, const struct plan *p)
{
	int i = p->node;
	const struct gf_ctl_node *nd = &ctl->nodes.cfg[i];
	const struct gf_ctl_node_spec *sp = p->sp;
	const struct gf_cnode *n = &ctl->c->nodes[i];
	if (strcmp(nd->labels, sp->labels) != 0 || p->block != nd->block ||
	    nd->nmig != sp->nmig || !gf__mig_same(ctl, i, sp->mig, sp->nmig))
		return false;
	if (sp->topo == NULL || n->topo == 0)
		return sp->topo == NULL && n->topo == 0;
	return memcmp(&ctl->c->topos[n->topo - 1], sp->topo,
		      sizeof(*sp->topo)) == 0;
}

/* A new model or profile: the teams' limits by id follow. */
static void limits_refresh(struct gf_ctl *ctl)
{
	for (int t = 0; t < ctl->teams.n; t++)
		if (ctl->teams.t[t].cfg >= 0)
			gf__team_limits(ctl, &ctl->teams.t[t],
					&ctl->cfg.teams[ctl->teams.t[t].cfg]);
}

/* The model and block the plan names, added when new. */
static void make_kinds(struct gf_ctl *ctl, struct plan *p)
{
	if (p->model < 0)
		p->model = gf_cluster_model(ctl->c, p->sp->gpu_model);
	if (p->block < 0) {
		p->block = ctl->cfg.nblocks++;
		ctl->nodes.nblk = ctl->cfg.nblocks;
		GF__ACOPY(ctl->cfg.blocks[p->block], p->sp->block);
	}
}

/* The fields of gf_ctl_node a spec gives. */
static void set_node(struct gf_ctl *ctl, int i, const struct plan *p)
{
	struct gf_ctl_node *nd = &ctl->nodes.cfg[i];
	GF__ACOPY(nd->labels, p->sp->labels);
	nd->nmig = p->sp->nmig;
	if (p->sp->nmig > 0)
		memcpy(nd->mig, p->sp->mig,
		       (size_t)p->sp->nmig * sizeof(nd->mig[0]));
	GF__ACOPY(nd->mig_model, p->mig_model);
	ctl->nodes.ns[i].mig = p->mig;
}

static int add_new(struct gf_ctl *ctl, struct plan *p)
{
	const struct gf_ctl_node_spec *sp = p->sp;
	make_kinds(ctl, p);
	gf__nodes_reserve(ctl, ctl->c->n + 1);
	int i = gf_sched_add_node(ctl->s, p->name, sp->cpu_milli,
				  sp->memory_mib, sp->ngpus, p->model);
	ctl->mig.node_inst[i + 1] = ctl->mig.node_inst[i];
	(void)gf__names_insert(ctl, i); /* p->node < 0: a new name */
	struct gf__node *x = &ctl->nodes.ns[i];
	memset(x, 0, sizeof(*x));
	x->grp = -1;
	x->state = GF__WAITING;
	x->down_epoch = ++ctl->nodes.epoch;
	gf_note(x->reason, sizeof(x->reason), WAITING);
	(void)!gf_sched_cordon(ctl->s, i, true); /* i is in range */
	ctl->nodes.cfg[i].block = p->block;
	set_node(ctl, i, p);
	gf__block_join(&ctl->nodes, &ctl->c->nodes[i], i);
	if (sp->topo)
		(void)!gf_cluster_set_topo(ctl->c, i, sp->topo);
	gf__mig_install(ctl, i);
	gf__masks_node(ctl, i);
	gf__group_join(ctl, i);
	if (p->news)
		limits_refresh(ctl);
	gf__reconsider(ctl, false);
	return i;
}

/* Another shape: its jobs requeued, the node rebuilt empty and healthy. */
static void reshape(struct gf_ctl *ctl, const struct plan *p, int64_t now,
		    struct gf_ctl_changes *out, uint32_t mark)
{
	int i = p->node;
	char why[GF_JOB_REASON_MAX];
	gf_note(why, sizeof(why), "node %s changed shape", p->name);
	gf__requeue_node(ctl, i, why, now, out, mark, false);
	gf__held_drop_node(ctl, i, out, mark); /* the node is rebuilt */
	ctl->nodes.cfg[i].nmig = 0;
	gf__mig_install(ctl, i);
	struct gf__node *x = &ctl->nodes.ns[i];
	x->sick = 0;
	gf_free(x->gpu_why);
	gf__gpu_sync(ctl, i);
	block_leave(&ctl->nodes, &ctl->c->nodes[i], i);
	(void)!gf_sched_reshape(ctl->s, i, p->sp->cpu_milli, p->sp->memory_mib,
				p->sp->ngpus, p->model);
	gf__block_join(&ctl->nodes, &ctl->c->nodes[i], i);
}

/* Another block: gangs with a replica there are requeued (they would
 * span two), single replicas move with the node. */
static void move_block(struct gf_ctl *ctl, const struct plan *p, int64_t now,
		       struct gf_ctl_changes *out, uint32_t mark)
{
	int i = p->node;
	char why[GF_JOB_REASON_MAX];
	gf_note(why, sizeof(why), "node %s moved to block %s", p->name,
		ctl->cfg.blocks[p->block]);
	gf__requeue_node(ctl, i, why, now, out, mark, true);
	block_leave(&ctl->nodes, &ctl->c->nodes[i], i);
	ctl->nodes.cfg[i].block = p->block;
	gf__block_join(&ctl->nodes, &ctl->c->nodes[i], i);
	for (int k = 0; ctl->nodes.ns[i].nrep > 0 && k < ctl->jobs.running.n;
	     k++) {
		int jid = ctl->jobs.running.v[k];
		struct gf_job *job = ctl->jobs.jr[jid].job;
		if (job->spec.replicas == 1 && job->place[0].node == i) {
			job->block = p->block;
			gf__report(&ctl->jobs, out, mark, jid);
		}
	}
}

static int update(struct gf_ctl *ctl, struct plan *p, int64_t now,
		  struct gf_ctl_changes *out)
{
	int i = p->node;
	if (!p->reshape && unchanged(ctl, p))
		return i;
	uint32_t mark = gf__mark(&ctl->jobs);
	make_kinds(ctl, p);
	gf__group_leave(ctl, i);
	if (p->reshape)
		reshape(ctl, p, now, out, mark);
	if (strcmp(ctl->nodes.cfg[i].labels, p->sp->labels) != 0) {
		GF__ACOPY(ctl->nodes.cfg[i].labels, p->sp->labels);
		gf__masks_node(ctl, i);
	}
	if (p->block != ctl->nodes.cfg[i].block)
		move_block(ctl, p, now, out, mark);
	set_node(ctl, i, p);
	gf__mig_install(ctl, i);
	(void)!gf_cluster_set_topo(ctl->c, i, p->sp->topo);
	gf__group_join(ctl, i);
	if (p->news)
		limits_refresh(ctl);
	gf__reconsider(ctl, true);
	return i;
}

int gf_ctl_node_add(struct gf_ctl *ctl, const char *name,
		    const struct gf_ctl_node_spec *spec, int64_t now_ms,
		    struct gf_ctl_changes *out, struct gf_err *e)
{
	gf_err_clear(e);
	struct plan p;
	int rc = plan(ctl, name, spec, now_ms, &p, e);
	if (rc)
		return rc;
	return p.node < 0 ? add_new(ctl, &p) : update(ctl, &p, now_ms, out);
}
