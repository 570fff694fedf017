/*
 * mig_propose.c - new MIG layouts for pending demand (the rules:
 * include/gpufleet/mig_propose.h; docs/mig.md says why).
 *
 * Steps: merge the demand by (model, profile); match it to the free
 * instances of the GPUs that cannot change (an instance in use there, or
 * past the planner's cap); give what they leave unmet, and the GPUs with
 * no instance in use, to the planner, with the fewest GPUs changed
 * before the fewest used and each demand limited to its model; the GPUs
 * it changes are the proposal.  Matching the whole demand to the free
 * instances of every GPU, before and after, makes the summary.
 *
 * Matching serves the demands limited to one model first, then the
 * others: that meets the most (a limited demand has fewer places to go),
 * and it is how the planner counts what it serves (count_served).
 */
#include <string.h>

#include <gpufleet/mig_propose.h>

#include "util/mem.h"

/* Distinct models a fleet may mix (our table has fewer). */
#define MAX_MODELS 64

/* Free instances per model and profile. */
struct supply {
	int nm;
	const struct gf_mig_model *m[MAX_MODELS];
	long n[MAX_MODELS][GF_MIG_MAX_PROFILES];
};

static int model_slot(struct supply *s, const struct gf_mig_model *m)
{
	for (int i = 0; i < s->nm; i++)
		if (s->m[i] == m)
			return i;
	if (s->nm == MAX_MODELS)
		return -1;
	s->m[s->nm] = m;
	memset(s->n[s->nm], 0, sizeof(s->n[s->nm]));
	return s->nm++;
}

/* Add l's free (not busy) instances (check_gpus made sure the fleet
 * has at most MAX_MODELS models). */
static void add_free(struct supply *s, const struct gf_mig_model *m,
		     const struct gf_mig_layout *l)
{
	int k = model_slot(s, m);
	for (int i = 0; k >= 0 && i < l->n; i++)
		s->n[k][l->inst[i].profile] += !l->inst[i].busy;
}

/* met[k]: demand k's instances that s's free instances meet (s is
 * used up as it goes), the demands limited to one model first. */
static void match(struct supply *s, const struct gf_mig_propose_demand *d,
		  int nd, int *met)
{
	for (int k = 0; k < nd; k++)
		met[k] = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < nd; k++) {
			if ((d[k].model != NULL) != (pass == 0))
				continue;
			for (int i = 0; i < s->nm && met[k] < d[k].count; i++) {
				if (d[k].model && s->m[i] != d[k].model)
					continue;
				int pi = gf_mig_profile_find(s->m[i],
							     d[k].profile);
				if (pi < 0)
					continue;
				long take = d[k].count - met[k];
				if (take > s->n[i][pi])
					take = s->n[i][pi];
				met[k] += (int)take;
				s->n[i][pi] -= take;
			}
		}
}

static bool gpu_is_busy(const struct gf_mig_propose_gpu *g)
{
	for (int i = 0; i < g->current.n; i++)
		if (g->current.inst[i].busy)
			return true;
	return false;
}

static int check_gpus(const struct gf_mig_propose_gpu *gpus, int ngpus,
		      struct gf_err *e)
{
	if (ngpus < 0 || ngpus > GF_MIG_PROPOSE_MAX_GPUS)
		return gf_err_set(e, GF_ETOOBIG, "%d GPUs: expected 0 to %d",
				  ngpus, GF_MIG_PROPOSE_MAX_GPUS);
	struct supply models = { 0 };
	for (int i = 0; i < ngpus; i++) {
		const struct gf_mig_propose_gpu *g = &gpus[i];
		char msg[120];
		if (!g->model)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %d (node %d, GPU %d): no MIG "
					  "model",
					  i, g->node, g->gpu);
		if (model_slot(&models, g->model) < 0)
			return gf_err_set(e, GF_ETOOBIG,
					  "more than %d distinct GPU models",
					  MAX_MODELS);
		if (gf_mig_layout_check(g->model, &g->current, msg,
					sizeof(msg)) != 0)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %d (node %d, GPU %d): current "
					  "layout: %s",
					  i, g->node, g->gpu, msg);
	}
	return 0;
}

/* d[0..nd) merged by (model, profile) into p->demand. */
static int merge_demand(const struct gf_mig_propose_demand *d, int nd,
			struct gf_mig_proposal *p, struct gf_err *e)
{
	if (nd < 0 || nd > GF_MIG_PROPOSE_MAX_ENTRIES)
		return gf_err_set(e, GF_ETOOBIG,
				  "%d demand entries: expected 0 to %d", nd,
				  GF_MIG_PROPOSE_MAX_ENTRIES);
	for (int i = 0; i < nd; i++) {
		if (!memchr(d[i].profile, '\0', sizeof(d[i].profile)))
			return gf_err_set(e, GF_EINVAL,
					  "demand %d: profile name not "
					  "terminated",
					  i);
		if (d[i].count < 0 || d[i].count > GF_MIG_PROPOSE_MAX_INSTANCES)
			return gf_err_set(
				e, d[i].count < 0 ? GF_EINVAL : GF_ETOOBIG,
				"demand %d ('%s'): count %d: "
				"expected 0 to %d",
				i, d[i].profile, d[i].count,
				GF_MIG_PROPOSE_MAX_INSTANCES);
		int k = 0;
		while (k < p->ndemands &&
		       (p->demand[k].model != d[i].model ||
			strcmp(p->demand[k].profile, d[i].profile) != 0))
			k++;
		if (k == GF_MIG_PROPOSE_MAX_DEMANDS)
			return gf_err_set(e, GF_ETOOBIG,
					  "more than %d distinct (model, "
					  "profile) demands",
					  GF_MIG_PROPOSE_MAX_DEMANDS);
		if (k == p->ndemands) {
			p->demand[k] = d[i];
			p->demand[k].count = 0;
			p->ndemands++;
		}
		if (p->demand[k].count + d[i].count >
		    GF_MIG_PROPOSE_MAX_INSTANCES)
			return gf_err_set(e, GF_ETOOBIG,
					  "demand '%s': more than %d instances",
					  d[i].profile,
					  GF_MIG_PROPOSE_MAX_INSTANCES);
		p->demand[k].count += d[i].count;
	}
	for (int k = 0; k < p->ndemands; k++)
		p->demanded += p->demand[k].count;
	return 0;
}

/* One planning run: the GPUs that may change and the demand left. */
struct run {
	const struct gf_mig_propose_gpu *gpus;
	int ngpus;
	int *at; /* per planner GPU: its input index */
	struct gf_mig_gpu *pg;
	int npg;
	struct gf_mig_demand pd[GF_MIG_PROPOSE_MAX_DEMANDS];
	const struct gf_mig_model *pm[GF_MIG_PROPOSE_MAX_DEMANDS];
	int pmin[GF_MIG_PROPOSE_MAX_DEMANDS]; /* what they serve now */
	int npd;
};

/* Does a planned GPU of a model demand k may use have its profile? */
static bool servable(const struct run *r, const struct gf_mig_propose_demand *d)
{
	for (int i = 0; i < r->npg; i++)
		if ((!d->model || r->pg[i].model == d->model) &&
		    gf_mig_profile_find(r->pg[i].model, d->profile) >= 0)
			return true;
	return false;
}

/* Split the GPUs: the first GF_MIG_MAX_GPUS with no instance in use go
 * to the planner; the free instances of the others meet what they can
 * of the demand, and the rest of it is the planner's, each demand to be
 * served at least as much as the planner's GPUs serve it now (so no
 * demand met today goes unmet for another). */
static void prepare(struct run *r, struct gf_mig_proposal *p)
{
	struct supply fixed = { 0 }, now = { 0 };
	for (int i = 0; i < r->ngpus; i++) {
		const struct gf_mig_propose_gpu *g = &r->gpus[i];
		bool idle = !gpu_is_busy(g);
		p->idle += idle;
		if (idle && r->npg < GF_MIG_MAX_GPUS) {
			r->at[r->npg] = i;
			r->pg[r->npg].model = g->model;
			r->pg[r->npg++].current = g->current;
			add_free(&now, g->model, &g->current);
		} else {
			add_free(&fixed, g->model, &g->current);
		}
	}
	p->planned = r->npg;
	int met[GF_MIG_PROPOSE_MAX_DEMANDS];
	struct gf_mig_propose_demand left[GF_MIG_PROPOSE_MAX_DEMANDS];
	match(&fixed, p->demand, p->ndemands, met);
	for (int k = 0; k < p->ndemands; k++) {
		const struct gf_mig_propose_demand *d = &p->demand[k];
		if (d->count - met[k] <= 0 || !servable(r, d))
			continue;
		left[r->npd] = *d;
		left[r->npd].count = d->count - met[k];
		memcpy(r->pd[r->npd].profile, d->profile, sizeof(d->profile));
		r->pd[r->npd].count = d->count - met[k];
		r->pm[r->npd++] = d->model;
	}
	match(&now, left, r->npd, r->pmin);
}

/* The planner's changed GPUs into p->changes. */
static void take_changes(const struct run *r, const struct gf_mig_plan *plan,
			 struct gf_mig_proposal *p)
{
	int n = 0;
	for (int i = 0; i < plan->ngpus; i++)
		n += plan->gpus[i].changed;
	if (n == 0)
		return;
	p->changes = gf_calloc((size_t)n, sizeof(*p->changes));
	for (int i = 0; i < plan->ngpus; i++) {
		const struct gf_mig_gpu_plan *gp = &plan->gpus[i];
		if (!gp->changed)
			continue;
		const struct gf_mig_propose_gpu *g = &r->gpus[r->at[i]];
		struct gf_mig_change *c = &p->changes[p->nchanges++];
		c->at = r->at[i];
		c->node = g->node;
		c->gpu = g->gpu;
		c->model = g->model;
		c->current = g->current;
		c->layout = gp->layout;
		c->ndestroy = gp->ndestroy;
		memcpy(c->destroy, gp->destroy, sizeof(c->destroy));
		c->ncreate = gp->ncreate;
		memcpy(c->create, gp->create, sizeof(c->create));
	}
}

/* Met after: every GPU's free instances, a changed one's new layout. */
static void count_after(const struct run *r, struct gf_mig_proposal *p)
{
	struct supply all = { 0 };
	int c = 0;
	for (int i = 0; i < r->ngpus; i++) {
		const struct gf_mig_layout *l = &r->gpus[i].current;
		if (c < p->nchanges && p->changes[c].at == i)
			l = &p->changes[c++].layout;
		add_free(&all, r->gpus[i].model, l);
	}
	match(&all, p->demand, p->ndemands, p->met_after);
	for (int k = 0; k < p->ndemands; k++)
		p->after += p->met_after[k];
}

int gf_mig_propose(const struct gf_mig_propose_gpu *gpus, int ngpus,
		   const struct gf_mig_propose_demand *d, int nd,
		   struct gf_mig_proposal *p, struct gf_err *e)
{
	memset(p, 0, sizeof(*p));
	p->ngpus = ngpus;
	p->optimal = true;
	int rc = check_gpus(gpus, ngpus, e);
	if (rc == 0)
		rc = merge_demand(d, nd, p, e);
	if (rc)
		return rc;
	struct run r = { .gpus = gpus, .ngpus = ngpus };
	size_t n = ngpus < GF_MIG_MAX_GPUS ? (size_t)ngpus : GF_MIG_MAX_GPUS;
	r.at = gf_calloc(n + 1, sizeof(*r.at));
	r.pg = gf_calloc(n + 1, sizeof(*r.pg));
	struct supply before = { 0 };
	for (int i = 0; i < ngpus; i++)
		add_free(&before, gpus[i].model, &gpus[i].current);
	match(&before, p->demand, p->ndemands, p->met_before);
	for (int k = 0; k < p->ndemands; k++)
		p->before += p->met_before[k];
	prepare(&r, p);
	if (r.npg > 0 && r.npd > 0) {
		struct gf_mig_plan plan;
		struct gf_mig_plan_opts o = { .demand_model = r.pm,
					      .demand_min = r.pmin,
					      .fewest_changes = true };
		rc = gf_mig_plan_with(r.pg, r.npg, r.pd, r.npd, &o, &plan, e);
		if (rc == 0) {
			p->optimal = plan.optimal;
			take_changes(&r, &plan, p);
			gf_mig_plan_release(&plan);
		}
	}
	if (rc == 0)
		count_after(&r, p);
	gf_free(r.at);
	gf_free(r.pg);
	if (rc)
		gf_mig_proposal_release(p);
	return rc;
}

void gf_mig_proposal_release(struct gf_mig_proposal *p)
{
	gf_free(p->changes);
	p->nchanges = 0;
}
