/*
 * jobs_mig.c - the MIG instances nodes offer (gf_ctl_node.mig): checked
 * against the node's MIG model (the one it states, or the one its GPU
 * model implies), then handed to jobs that ask for a mig_profile, one
 * instance per replica.  A node's instances may change at run time
 * (gf_ctl_node_add), on GPUs whose instances are all free.
 *
 * A GPU holding instances is in MIG mode: the engine must never give it
 * out whole or in shares, so it is held out of placement (jobs_health.c,
 * gf__gpu_sync: the engine's holds are a node's GPUs in MIG mode and its
 * unhealthy ones); the engine counts it neither idle nor given out.  The
 * CPU and memory of a MIG replica go through the engine as a CPU-only
 * placement on the node (gang.c).  An instance on an unhealthy GPU is
 * not given out (gf__mig_free_on, gf__mig_take); nor one on a node not
 * ready (the callers skip cordoned nodes).
 *
 * Invariants: instances are stored by node (node_inst[i] .. node_inst[i +
 * 1]); each GPU's instances form a valid layout of the node's model; an
 * instance's user is the jrec running on it or -1, and mig_used counts
 * the instances with a user; prof_nodes[p] lists each node offering
 * profile p once; a node's mig_gpus are the GPUs with instances.
 */
#include "core/jobs/jobs_mig.h"

#include <stdio.h>
#include <string.h>

#include <gpufleet/catalog.h>

#include "core/jobs/ctl_impl.h"
#include "util/mem.h"

static const struct gf_mig_model *mig_model_of(const char *model_name)
{
	const struct gf_mig_model *m = gf_mig_model_by_id(model_name);
	if (m)
		return m;
	const struct gf_gpu_model *g = gf_catalog_by_id(model_name);
	if (g == NULL)
		g = gf_catalog_by_name(model_name);
	for (int k = 0; g && k < GF_GPU_MAX_PCI_IDS && g->pci_device_ids[k];
	     k++) {
		m = gf_mig_model_by_pci(g->pci_device_ids[k]);
		if (m)
			return m;
	}
	return NULL;
}

int gf__mig_model_for(const char *mig_id, const char *gpu_model,
		      const struct gf_mig_model **m)
{
	*m = NULL;
	if (mig_id[0]) {
		*m = gf_mig_model_by_id(mig_id);
		return *m ? 0 : GF_EINVAL;
	}
	if (gpu_model[0])
		*m = mig_model_of(gpu_model);
	return 0;
}

int gf__prof_find(const struct gf_ctl *ctl, const char *name)
{
	for (int p = 0; p < ctl->mig.nprof; p++)
		if (strcmp(ctl->mig.prof_name[p], name) == 0)
			return p;
	return -1;
}

/* One GPU's instances against the model's rules. */
static int check_gpu(const char *node, int gpu, const struct gf_mig_model *m,
		     const struct gf_ctl_mig *mig, int nmig, struct gf_err *e)
{
	struct gf_mig_layout l = { 0 };
	for (int k = 0; k < nmig; k++) {
		if (mig[k].gpu != gpu)
			continue;
		if (l.n == GF_MIG_MAX_INSTANCES)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: GPU %d: more than %d MIG "
					  "instances",
					  node, gpu, GF_MIG_MAX_INSTANCES);
		int p = gf_mig_profile_find(m, mig[k].profile);
		if (mig[k].start < 0 || mig[k].start > UINT8_MAX)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: GPU %d: MIG start %d out "
					  "of range",
					  node, gpu, mig[k].start);
		l.inst[l.n].profile = (uint8_t)p;
		l.inst[l.n].start = (uint8_t)mig[k].start;
		l.n++;
	}
	char msg[160];
	if (gf_mig_layout_check(m, &l, msg, sizeof(msg)))
		return gf_err_set(e, GF_EINVAL, "node %s: GPU %d: %s", node,
				  gpu, msg);
	return 0;
}

/* A profile name the core does not know yet, gathered in names[]. */
static int name_new(const struct gf_ctl *ctl, const struct gf_ctl_mig *x,
		    char names[][GF_MIG_PROFILE_MAX], int *nnames,
		    struct gf_err *e)
{
	const char *profile = x->profile;
	if (gf__prof_find(ctl, profile) >= 0)
		return 0;
	for (int p = 0; p < *nnames; p++)
		if (strcmp(names[p], profile) == 0)
			return 0;
	if (ctl->mig.nprof + *nnames >= GF__MAX_PROFILES)
		return gf_err_set(e, GF_ETOOBIG, "more than %d MIG profiles",
				  GF__MAX_PROFILES);
	GF__ACOPY(names[(*nnames)++], x->profile);
	return 0;
}

int gf__mig_check(const struct gf_ctl *ctl, const char *node, int ngpus,
		  const struct gf_mig_model *m, const char *model_name,
		  const struct gf_ctl_mig *mig, int nmig,
		  char names[][GF_MIG_PROFILE_MAX], int *nnames,
		  struct gf_err *e)
{
	if (nmig < 0 || nmig > GF_CTL_MAX_MIG)
		return gf_err_set(e, GF_EINVAL,
				  "node %s: %d MIG instances, at most %d", node,
				  nmig, GF_CTL_MAX_MIG);
	if (nmig == 0)
		return 0;
	if (m == NULL)
		return gf_err_set(e, GF_EINVAL,
				  "node %s: MIG instances on model '%s', "
				  "which has no MIG",
				  node, model_name);
	uint32_t gpus = 0;
	for (int k = 0; k < nmig; k++) {
		const struct gf_ctl_mig *x = &mig[k];
		if (x->gpu < 0 || x->gpu >= ngpus)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: MIG instance on GPU %d, "
					  "the node has %d",
					  node, x->gpu, ngpus);
		if (!memchr(x->profile, '\0', sizeof(x->profile)) ||
		    gf_mig_profile_find(m, x->profile) < 0)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: MIG profile '%.*s' is not "
					  "one of %s's",
					  node, GF_MIG_PROFILE_MAX - 1,
					  x->profile, m->id);
		int rc = name_new(ctl, x, names, nnames, e);
		if (rc)
			return rc;
		gpus |= UINT32_C(1) << x->gpu;
	}
	for (int g = 0; g < ngpus; g++) {
		int rc = (gpus >> g & 1) ? check_gpu(node, g, m, mig, nmig, e)
					 : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* Is instance x of the core in the list mig[0..nmig)? */
static bool listed(const struct gf_ctl *ctl, const struct gf__inst *x,
		   const struct gf_ctl_mig *mig, int nmig)
{
	for (int k = 0; k < nmig; k++)
		if (mig[k].gpu == x->gpu && mig[k].start == x->start &&
		    strcmp(mig[k].profile, ctl->mig.prof_name[x->prof]) == 0)
			return true;
	return false;
}

/* Does GPU g get other instances than it has? */
static bool gpu_changes(const struct gf_ctl *ctl, int i, int g,
			const struct gf_ctl_mig *mig, int nmig)
{
	int now = 0, then = 0;
	for (int k = 0; k < nmig; k++)
		then += mig[k].gpu == g;
	for (int x = ctl->mig.node_inst[i]; x < ctl->mig.node_inst[i + 1];
	     x++) {
		if (ctl->mig.inst[x].gpu != g)
			continue;
		now++;
		if (!listed(ctl, &ctl->mig.inst[x], mig, nmig))
			return true;
	}
	return now != then;
}

bool gf__mig_same(const struct gf_ctl *ctl, int i, const struct gf_ctl_mig *mig,
		  int nmig)
{
	if (ctl->mig.node_inst[i + 1] - ctl->mig.node_inst[i] != nmig)
		return false;
	for (int g = 0; g < ctl->c->nodes[i].ngpus; g++)
		if (gpu_changes(ctl, i, g, mig, nmig))
			return false;
	return true;
}

/* The job holding GPU g of node i (whole or a share), or "a job". */
static const char *gpu_user(const struct gf_ctl *ctl, int i, int g)
{
	for (int k = 0; k < ctl->jobs.running.n; k++) {
		const struct gf_job *job =
			ctl->jobs.jr[ctl->jobs.running.v[k]].job;
		for (int r = 0; r < job->spec.replicas; r++) {
			const struct gf_job_place *p = &job->place[r];
			for (int q = 0; p->node == i && q < p->ngpus; q++)
				if (p->gpus[q] == g)
					return job->id;
		}
	}
	return "a job";
}

int gf__mig_conflict(const struct gf_ctl *ctl, int i,
		     const struct gf_ctl_mig *mig, int nmig, struct gf_err *e)
{
	const char *name = ctl->c->names[i];
	for (int g = 0; g < ctl->c->nodes[i].ngpus; g++) {
		if (!gpu_changes(ctl, i, g, mig, nmig))
			continue;
		for (int x = ctl->mig.node_inst[i];
		     x < ctl->mig.node_inst[i + 1]; x++) {
			const struct gf__inst *in = &ctl->mig.inst[x];
			if (in->gpu == g && in->user >= 0)
				return gf_err_set(
					e, GF_ECONFLICT,
					"node %s: GPU %d: MIG instance %s at "
					"slice %d is in use by %s",
					name, g, ctl->mig.prof_name[in->prof],
					in->start,
					ctl->jobs.jr[in->user].job->id);
		}
		if (!(ctl->nodes.ns[i].mig_gpus >> g & 1) &&
		    gf_cluster_gpu_free(ctl->c, i, g) != GF_GPU_MILLI)
			return gf_err_set(e, GF_ECONFLICT,
					  "node %s: GPU %d is in use by %s: "
					  "it cannot enter MIG mode",
					  name, g, gpu_user(ctl, i, g));
	}
	return 0;
}

static int prof_add(struct gf_ctl *ctl, const struct gf_ctl_mig *x,
		    const struct gf_mig_model *m)
{
	const char *name = x->profile;
	int p = gf__prof_find(ctl, name);
	if (p >= 0)
		return p;
	p = ctl->mig.nprof++;
	GF__ACOPY(ctl->mig.prof_name[p], x->profile);
	const struct gf_mig_profile *pr =
		&m->profiles[gf_mig_profile_find(m, name)];
	ctl->mig.prof_milli[p] = GF_GPU_MILLI * pr->compute / m->compute;
	return p;
}

/* Node i offers profile p now (on), or no longer. */
static void prof_list(struct gf_ctl *ctl, int p, int i, bool on)
{
	int *n = &ctl->mig.prof_nnodes[p];
	if (on) {
		ctl->mig.prof_nodes[p] = gf_reallocarray(
			ctl->mig.prof_nodes[p], (size_t)*n + 1, sizeof(int));
		ctl->mig.prof_nodes[p][(*n)++] = i;
		return;
	}
	for (int k = 0; k < *n; k++)
		if (ctl->mig.prof_nodes[p][k] == i) {
			ctl->mig.prof_nodes[p][k] =
				ctl->mig.prof_nodes[p][--*n];
			return;
		}
}

/* Node i's instance range made k long (later nodes' ranges move). */
static void splice(struct gf_ctl *ctl, int i, int k)
{
	int a = ctl->mig.node_inst[i], b = ctl->mig.node_inst[i + 1],
	    d = k - (b - a);
	if (d == 0)
		return;
	if (ctl->mig.ninst + d > ctl->mig.inst_cap) {
		int cap = ctl->mig.inst_cap ? ctl->mig.inst_cap : 64;
		while (cap < ctl->mig.ninst + d)
			cap *= 2;
		ctl->mig.inst = gf_reallocarray(ctl->mig.inst, (size_t)cap,
						sizeof(*ctl->mig.inst));
		ctl->mig.inst_cap = cap;
	}
	memmove(ctl->mig.inst + b + d, ctl->mig.inst + b,
		(size_t)(ctl->mig.ninst - b) * sizeof(*ctl->mig.inst));
	ctl->mig.ninst += d;
	for (int j = i + 1; j <= ctl->c->n; j++)
		ctl->mig.node_inst[j] += d;
}

void gf__mig_install(struct gf_ctl *ctl, int i)
{
	const struct gf_ctl_node *nd = &ctl->nodes.cfg[i];
	int a = ctl->mig.node_inst[i], b = ctl->mig.node_inst[i + 1],
	    k = nd->nmig;
	if (k == 0 && a == b)
		return;
	if (ctl->mig.prof_nodes == NULL) {
		ctl->mig.prof_nodes =
			gf_calloc(GF__MAX_PROFILES, sizeof(int *));
		ctl->mig.prof_nnodes = gf_calloc(GF__MAX_PROFILES, sizeof(int));
	}
	struct gf__inst *tmp = gf_calloc((size_t)(k > 0 ? k : 1), sizeof(*tmp));
	uint64_t old = 0, now = 0;
	uint16_t gpus = 0;
	for (int x = a; x < b; x++)
		old |= UINT64_C(1) << ctl->mig.inst[x].prof;
	for (int q = 0; q < k; q++) {
		const struct gf_ctl_mig *m = &nd->mig[q];
		int p = prof_add(ctl, m, ctl->nodes.ns[i].mig);
		tmp[q] = (struct gf__inst){ .node = i,
					    .gpu = m->gpu,
					    .start = m->start,
					    .prof = p,
					    .user = -1 };
		for (int x = a; x < b; x++) /* the same instance: its user */
			if (ctl->mig.inst[x].gpu == m->gpu &&
			    ctl->mig.inst[x].start == m->start &&
			    ctl->mig.inst[x].prof == p)
				tmp[q].user = ctl->mig.inst[x].user;
		now |= UINT64_C(1) << p;
		gpus |= (uint16_t)(1u << m->gpu);
	}
	splice(ctl, i, k);
	if (k > 0)
		memcpy(ctl->mig.inst + a, tmp, (size_t)k * sizeof(*tmp));
	gf_free(tmp);
	for (int p = 0; p < ctl->mig.nprof; p++)
		if ((old ^ now) >> p & 1)
			prof_list(ctl, p, i, now >> p & 1);
	ctl->nodes.ns[i].mig_gpus = gpus;
	gf__gpu_sync(ctl, i);
}

void gf__mig_free(struct gf_ctl *ctl)
{
	for (int p = 0; ctl->mig.prof_nodes && p < GF__MAX_PROFILES; p++)
		gf_free(ctl->mig.prof_nodes[p]);
	gf_free(ctl->mig.prof_nodes);
	gf_free(ctl->mig.prof_nnodes);
	gf_free(ctl->mig.inst);
	gf_free(ctl->mig.node_inst);
}

int gf__mig_offered(const struct gf_ctl *ctl, int node, int prof)
{
	int k = 0;
	for (int x = ctl->mig.node_inst[node]; x < ctl->mig.node_inst[node + 1];
	     x++)
		k += ctl->mig.inst[x].prof == prof;
	return k;
}

int gf__mig_free_on(const struct gf_ctl *ctl, int node, int prof)
{
	int k = 0;
	uint16_t sick = ctl->nodes.ns[node].sick;
	for (int x = ctl->mig.node_inst[node]; x < ctl->mig.node_inst[node + 1];
	     x++)
		k += ctl->mig.inst[x].prof == prof &&
		     ctl->mig.inst[x].user < 0 &&
		     !(sick >> ctl->mig.inst[x].gpu & 1);
	return k;
}

int gf__mig_take(struct gf_ctl *ctl, int node, int prof, int user)
{
	uint16_t sick = ctl->nodes.ns[node].sick;
	for (int x = ctl->mig.node_inst[node]; x < ctl->mig.node_inst[node + 1];
	     x++)
		if (ctl->mig.inst[x].prof == prof &&
		    ctl->mig.inst[x].user < 0 &&
		    !(sick >> ctl->mig.inst[x].gpu & 1)) {
			ctl->mig.inst[x].user = user;
			ctl->mig.used++;
			return x;
		}
	return -1;
}

int gf__mig_find(const struct gf_ctl *ctl, int node, int gpu, int start)
{
	for (int x = ctl->mig.node_inst[node]; x < ctl->mig.node_inst[node + 1];
	     x++)
		if (ctl->mig.inst[x].gpu == gpu &&
		    ctl->mig.inst[x].start == start)
			return x;
	return -1;
}

void gf__mig_give(struct gf_ctl *ctl, int inst)
{
	if (ctl->mig.inst[inst].user >= 0) {
		ctl->mig.inst[inst].user = -1;
		ctl->mig.used--;
	}
}

/* The engine holds node i's GPUs in MIG mode and its unhealthy ones
 * (jobs_health.c marks those), no other; the block's figures follow. */
void gf__gpu_sync(struct gf_ctl *ctl, int i)
{
	struct gf_cnode *n = &ctl->c->nodes[i];
	uint16_t want = ctl->nodes.ns[i].sick | ctl->nodes.ns[i].mig_gpus;
	if (want == n->held_gpus)
		return;
	int32_t idle = n->idle, nfree = n->nfree;
	uint32_t diff = (uint32_t)(want ^ n->held_gpus);
	for (int g = 0; g < n->ngpus; g++) {
		if (!(diff >> g & 1))
			continue;
		bool on = want >> g & 1;
		if (ctl->s)
			(void)!gf_sched_hold_gpu(ctl->s, i, g, on);
		else /* gf_ctl_new, before the engine */
			gf_cluster_hold(ctl->c, i, g, on);
	}
	if (ctl->s) { /* built: the node is in its block's figures */
		struct gf__block *b = gf__block_of(&ctl->nodes, i);
		b->idle += n->idle - idle;
		b->nfree += n->nfree - nfree;
	}
}
