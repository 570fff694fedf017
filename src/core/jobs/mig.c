/*
 * mig.c - the MIG instances nodes offer (gf_ctl_node.mig): checked
 * against the MIG tables at gf_ctl_new, then handed to jobs that ask for
 * a mig_profile, one instance per replica.
 *
 * A GPU holding instances is in MIG mode: the engine must never give it
 * out whole or in shares, so gf__mig_setup zeroes its free share before
 * the engine is built (the engine then counts it as allocated, and its
 * fragmentation as nil).  The CPU and memory of a MIG replica go through
 * the engine as a CPU-only placement on the node (gang.c).
 *
 * Invariants: instances are stored by node (node_inst[i] .. node_inst[i +
 * 1]); each GPU's instances form a valid layout of its model; an
 * instance's user is the jrec running on it or -1, and mig_used counts
 * the instances with a user; prof_nodes[p] lists each node offering
 * profile p once.
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/catalog.h>

#include "core/jobs/ctl_impl.h"
#include "util/mem.h"

const struct gf_mig_model *gf__mig_model_of(const char *model_name)
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

int gf__prof_find(const struct gf_ctl *ctl, const char *name)
{
	for (int p = 0; p < ctl->nprof; p++)
		if (strcmp(ctl->prof_name[p], name) == 0)
			return p;
	return -1;
}

/* One GPU's instances on node i against the model's rules. */
static int check_gpu(const struct gf_ctl *ctl, int i, int gpu,
		     const struct gf_mig_model *m, struct gf_err *e)
{
	const struct gf_ctl_node *nd = &ctl->nodes[i];
	struct gf_mig_layout l = { 0 };
	for (int k = 0; k < nd->nmig; k++) {
		if (nd->mig[k].gpu != gpu)
			continue;
		if (l.n == GF_MIG_MAX_INSTANCES)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: GPU %d: more than %d MIG "
					  "instances",
					  ctl->c->names[i], gpu,
					  GF_MIG_MAX_INSTANCES);
		int p = gf_mig_profile_find(m, nd->mig[k].profile);
		if (nd->mig[k].start < 0 || nd->mig[k].start > UINT8_MAX)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: GPU %d: MIG start %d out "
					  "of range",
					  ctl->c->names[i], gpu,
					  nd->mig[k].start);
		l.inst[l.n].profile = (uint8_t)p;
		l.inst[l.n].start = (uint8_t)nd->mig[k].start;
		l.n++;
	}
	char msg[160];
	if (gf_mig_layout_check(m, &l, msg, sizeof(msg)))
		return gf_err_set(e, GF_EINVAL, "node %s: GPU %d: %s",
				  ctl->c->names[i], gpu, msg);
	return 0;
}

/* Node i's instances: a MIG model, known profiles, GPUs it has, layouts
 * its model allows; names[] gathers the distinct profile names. */
static int check_node(const struct gf_ctl *ctl, int i,
		      char names[][GF_MIG_PROFILE_MAX], int *nnames,
		      struct gf_err *e)
{
	const struct gf_ctl_node *nd = &ctl->nodes[i];
	const struct gf_cnode *cn = &ctl->c->nodes[i];
	const char *model = ctl->c->models[cn->model];
	const struct gf_mig_model *m = gf__mig_model_of(model);
	if (nd->nmig < 0 || nd->nmig > GF_CTL_MAX_MIG)
		return gf_err_set(e, GF_EINVAL,
				  "node %s: %d MIG instances, at most %d",
				  ctl->c->names[i], nd->nmig, GF_CTL_MAX_MIG);
	if (m == NULL)
		return gf_err_set(e, GF_EINVAL,
				  "node %s: MIG instances on model '%s', "
				  "which has no MIG",
				  ctl->c->names[i], model);
	uint32_t gpus = 0;
	for (int k = 0; k < nd->nmig; k++) {
		const struct gf_ctl_mig *x = &nd->mig[k];
		if (x->gpu < 0 || x->gpu >= cn->ngpus)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: MIG instance on GPU %d, "
					  "the node has %d",
					  ctl->c->names[i], x->gpu, cn->ngpus);
		if (!memchr(x->profile, '\0', sizeof(x->profile)) ||
		    gf_mig_profile_find(m, x->profile) < 0)
			return gf_err_set(e, GF_EINVAL,
					  "node %s: MIG profile '%.*s' is not "
					  "one of %s's",
					  ctl->c->names[i],
					  GF_MIG_PROFILE_MAX - 1, x->profile,
					  m->id);
		int p = 0;
		while (p < *nnames && strcmp(names[p], x->profile))
			p++;
		if (p == *nnames) {
			if (*nnames == GF__MAX_PROFILES)
				return gf_err_set(e, GF_ETOOBIG,
						  "more than %d MIG profiles",
						  GF__MAX_PROFILES);
			snprintf(names[(*nnames)++], GF_MIG_PROFILE_MAX, "%s",
				 x->profile);
		}
		gpus |= UINT32_C(1) << x->gpu;
	}
	for (int g = 0; g < cn->ngpus; g++) {
		int rc = (gpus >> g & 1) ? check_gpu(ctl, i, g, m, e) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int validate(const struct gf_ctl *ctl, struct gf_err *e)
{
	char names[GF__MAX_PROFILES][GF_MIG_PROFILE_MAX];
	int nnames = 0;
	for (int i = 0; i < ctl->c->n; i++) {
		int rc = ctl->nodes[i].nmig == 0
				 ? 0
				 : check_node(ctl, i, names, &nnames, e);
		if (rc)
			return rc;
	}
	return 0;
}

static int prof_add(struct gf_ctl *ctl, const char *name,
		    const struct gf_mig_model *m)
{
	int p = gf__prof_find(ctl, name);
	if (p >= 0)
		return p;
	p = ctl->nprof++;
	snprintf(ctl->prof_name[p], GF_MIG_PROFILE_MAX, "%s", name);
	const struct gf_mig_profile *pr =
		&m->profiles[gf_mig_profile_find(m, name)];
	ctl->prof_milli[p] = GF_GPU_MILLI * pr->compute / m->compute;
	return p;
}

/* Build the tables and take MIG GPUs out of the engine's capacity. */
static void build(struct gf_ctl *ctl)
{
	struct gf_cluster *c = ctl->c;
	ctl->node_inst = gf_calloc((size_t)c->n + 1, sizeof(int));
	int total = 0;
	for (int i = 0; i < c->n; i++)
		total += ctl->nodes[i].nmig;
	ctl->inst =
		gf_calloc((size_t)(total > 0 ? total : 1), sizeof(*ctl->inst));
	ctl->prof_nodes = gf_calloc(GF__MAX_PROFILES, sizeof(int *));
	ctl->prof_nnodes = gf_calloc(GF__MAX_PROFILES, sizeof(int));
	for (int i = 0; i < c->n; i++) {
		const struct gf_ctl_node *nd = &ctl->nodes[i];
		ctl->node_inst[i] = ctl->ninst;
		if (nd->nmig == 0)
			continue;
		struct gf_cnode *cn = &c->nodes[i];
		const struct gf_mig_model *m =
			gf__mig_model_of(c->models[cn->model]);
		uint64_t seen = 0;
		for (int k = 0; k < nd->nmig; k++) {
			int p = prof_add(ctl, nd->mig[k].profile, m);
			ctl->inst[ctl->ninst++] = (struct gf__inst){
				.node = i,
				.gpu = nd->mig[k].gpu,
				.start = nd->mig[k].start,
				.prof = p,
				.user = -1,
			};
			if (!(seen >> p & 1)) {
				seen |= UINT64_C(1) << p;
				int *n = &ctl->prof_nnodes[p];
				ctl->prof_nodes[p] = gf_reallocarray(
					ctl->prof_nodes[p], (size_t)*n + 1,
					sizeof(int));
				ctl->prof_nodes[p][(*n)++] = i;
			}
			if (cn->gpu_left[nd->mig[k].gpu] != 0) {
				cn->gpu_left[nd->mig[k].gpu] = 0;
				ctl->mig_gpu_milli += GF_GPU_MILLI;
			}
		}
		gf_cnode_sync(cn);
		cn->version++;
	}
	ctl->node_inst[c->n] = ctl->ninst;
}

int gf__mig_setup(struct gf_ctl *ctl, struct gf_err *e)
{
	int rc = validate(ctl, e);
	if (rc == 0)
		build(ctl);
	return rc;
}

void gf__mig_free(struct gf_ctl *ctl)
{
	for (int p = 0; ctl->prof_nodes && p < GF__MAX_PROFILES; p++)
		gf_free(ctl->prof_nodes[p]);
	gf_free(ctl->prof_nodes);
	gf_free(ctl->prof_nnodes);
	gf_free(ctl->inst);
	gf_free(ctl->node_inst);
}

int gf__mig_free_on(const struct gf_ctl *ctl, int node, int prof)
{
	int k = 0;
	for (int x = ctl->node_inst[node]; x < ctl->node_inst[node + 1]; x++)
		k += ctl->inst[x].prof == prof && ctl->inst[x].user < 0;
	return k;
}

int gf__mig_take(struct gf_ctl *ctl, int node, int prof, int user)
{
	for (int x = ctl->node_inst[node]; x < ctl->node_inst[node + 1]; x++)
		if (ctl->inst[x].prof == prof && ctl->inst[x].user < 0) {
			ctl->inst[x].user = user;
			ctl->mig_used++;
			return x;
		}
	return -1;
}

int gf__mig_find(const struct gf_ctl *ctl, int node, int gpu, int start)
{
	for (int x = ctl->node_inst[node]; x < ctl->node_inst[node + 1]; x++)
		if (ctl->inst[x].gpu == gpu && ctl->inst[x].start == start)
			return x;
	return -1;
}

void gf__mig_give(struct gf_ctl *ctl, int inst)
{
	if (ctl->inst[inst].user >= 0) {
		ctl->inst[inst].user = -1;
		ctl->mig_used--;
	}
}
