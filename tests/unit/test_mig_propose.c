/*
 * test_mig_propose.c - MIG layout proposals for pending demand
 * (gf_mig_propose) on cases worked out by hand: one empty GPU, a busy
 * GPU never changed, demand already met, two models and demand limited
 * to one, mixed profiles, the fewest GPUs changed before the fewest
 * used, the caps; the rules checked on random fleets; the JSON renderer
 * and its cap.
 */
#include <gpufleet/mig_propose.h>

#include "helpers.h"
#include "mig/render.h"
#include "util/json.h"

static const struct gf_mig_model *M(const char *id)
{
	const struct gf_mig_model *m = gf_mig_model_by_id(id);
	assert_non_null(m);
	return m;
}

/* GPU gpu of node node, of model id, holding nothing yet. */
static struct gf_mig_propose_gpu G(int node, int gpu, const char *id) {
	struct gf_mig_propose_gpu g = { node, gpu, M(id), { 0 } };
	return g;
}

/* An instance of `name` at `start` on g (busy: a job runs on it). */
static void
put(struct gf_mig_propose_gpu *g, const char *name, int start, bool busy)
{
	int p = gf_mig_profile_find(g->model, name);
	assert_true(p >= 0);
	g->current.inst[g->current.n++] =
		(struct gf_mig_instance){ (uint8_t)p, (uint8_t)start, busy };
}

static struct gf_mig_propose_demand D(const char *model, const char *profile,
				      int count) {
	struct gf_mig_propose_demand d = { model ? M(model) : NULL, "", count };
	snprintf(d.profile, sizeof(d.profile), "%s", profile);
	return d;
}

static int
count_of(const struct gf_mig_model *m, const struct gf_mig_layout *l,
	 const char *name)
{
	int n = 0;
	for (int i = 0; i < l->n; i++)
		n += !strcmp(m->profiles[l->inst[i].profile].name, name);
	return n;
}

static bool has(const struct gf_mig_layout *l, const struct gf_mig_instance *in)
{
	for (int i = 0; i < l->n; i++)
		if (l->inst[i].profile == in->profile &&
		    l->inst[i].start == in->start)
			return true;
	return false;
}

static bool same_instances(const struct gf_mig_layout *a,
			   const struct gf_mig_layout *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (!has(b, &a->inst[i]))
			return false;
	return true;
}

/* The rules of mig_propose.h, checked on any proposal. */
static void check_rules(const struct gf_mig_propose_gpu *g, int n,
			const struct gf_mig_proposal *p)
{
	int last = -1;
	for (int c = 0; c < p->nchanges; c++) {
		const struct gf_mig_change *ch = &p->changes[c];
		const struct gf_mig_propose_gpu *gpu = &g[ch->at];
		assert_true(ch->at > last && ch->at < n); /* input order */
		last = ch->at;
		assert_int_equal(ch->node, gpu->node);
		assert_int_equal(ch->gpu, gpu->gpu);
		assert_ptr_equal(ch->model, gpu->model);
		/* only a GPU with no instance in use changes */
		for (int i = 0; i < gpu->current.n; i++)
			assert_false(gpu->current.inst[i].busy);
		char msg[160];
		assert_int_equal(gf_mig_layout_check(ch->model, &ch->layout,
						     msg, sizeof(msg)),
				 0);
		assert_false(same_instances(&ch->layout, &gpu->current));
		/* destroy + kept = current; create = layout - current */
		int kept = 0;
		for (int i = 0; i < gpu->current.n; i++)
			kept += has(&ch->layout, &gpu->current.inst[i]);
		assert_int_equal(kept + ch->ndestroy, gpu->current.n);
		for (int i = 0; i < ch->ndestroy; i++)
			assert_false(has(&ch->layout, &ch->destroy[i]));
		assert_int_equal(kept + ch->ncreate, ch->layout.n);
		for (int i = 0; i < ch->ncreate; i++)
			assert_false(has(&gpu->current, &ch->create[i]));
		/* a change creates (never only destroys), and every instance
		 * it holds is of a profile the demand asks on this model */
		if (p->optimal)
			assert_true(ch->ncreate > 0);
		for (int i = 0; i < ch->layout.n; i++) {
			const char *name =
				ch->model->profiles[ch->layout.inst[i].profile]
					.name;
			bool asked = false;
			for (int k = 0; k < p->ndemands; k++)
				asked |= (!p->demand[k].model ||
					  p->demand[k].model == ch->model) &&
					 !strcmp(p->demand[k].profile, name) &&
					 p->demand[k].count > 0;
			assert_true(asked);
		}
	}
	long before = 0, after = 0, demanded = 0;
	for (int k = 0; k < p->ndemands; k++) {
		assert_true(p->met_before[k] <= p->met_after[k]);
		assert_true(p->met_after[k] <= p->demand[k].count);
		before += p->met_before[k];
		after += p->met_after[k];
		demanded += p->demand[k].count;
	}
	assert_int_equal(before, p->before);
	assert_int_equal(after, p->after);
	assert_int_equal(demanded, p->demanded);
	if (p->before == p->demanded)
		assert_int_equal(p->nchanges, 0);
	if (p->nchanges > 0)
		assert_true(p->after > p->before);
}

static void propose_ok(const struct gf_mig_propose_gpu *g, int n,
		       const struct gf_mig_propose_demand *d, int nd,
		       struct gf_mig_proposal *p)
{
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_mig_propose(g, n, d, nd, p, &e);
	if (rc)
		print_message("propose: %s\n", e.msg);
	assert_int_equal(rc, 0);
	check_rules(g, n, p);
}

/* 3 x 1g.10gb, one empty H100: it is re-laid with the three (the planner
 * creates what is asked, no more). */
static void test_one_empty_gpu(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[1] = { G(4, 2, "h100-80gb") };
	struct gf_mig_propose_demand d[1] = { D(NULL, "1g.10gb", 3) };
	struct gf_mig_proposal p;
	propose_ok(g, 1, d, 1, &p);
	assert_int_equal(p.nchanges, 1);
	const struct gf_mig_change *c = &p.changes[0];
	assert_int_equal(c->at, 0);
	assert_int_equal(c->node, 4);
	assert_int_equal(c->gpu, 2);
	assert_true(count_of(c->model, &c->layout, "1g.10gb") >= 3);
	assert_int_equal(c->ndestroy, 0);
	assert_int_equal(c->ncreate, c->layout.n);
	assert_int_equal(p.met_before[0], 0);
	assert_int_equal(p.met_after[0], 3);
	assert_int_equal(p.idle, 1);
	assert_int_equal(p.planned, 1);
	assert_true(p.optimal);
	gf_mig_proposal_release(&p);
	assert_null(p.changes);
}

/* A GPU with one busy instance is never changed, however much room it
 * has; an empty one beside it takes the demand. */
static void test_busy_gpu_never_changed(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[2] = { G(0, 0, "h100-80gb"),
					   G(0, 1, "h100-80gb") };
	put(&g[0], "1g.10gb", 0, true);
	struct gf_mig_propose_demand d[1] = { D(NULL, "2g.20gb", 2) };
	struct gf_mig_proposal p;
	propose_ok(g, 1, d, 1, &p); /* the busy GPU alone: nothing */
	assert_int_equal(p.nchanges, 0);
	assert_int_equal(p.idle, 0);
	assert_int_equal(p.met_after[0], 0);
	gf_mig_proposal_release(&p);
	propose_ok(g, 2, d, 1, &p);
	assert_int_equal(p.nchanges, 1);
	assert_int_equal(p.changes[0].at, 1);
	assert_int_equal(
		count_of(p.changes[0].model, &p.changes[0].layout, "2g.20gb"),
		2);
	assert_int_equal(p.met_after[0], 2);
	gf_mig_proposal_release(&p);
}

/* Demand the free instances already meet: no proposal.  Free instances
 * on a busy GPU count too. */
static void test_demand_already_met(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[2] = { G(0, 0, "h100-80gb"),
					   G(1, 0, "h100-80gb") };
	for (int s = 0; s < 7; s++)
		put(&g[0], "1g.10gb", s, false);
	put(&g[1], "3g.40gb", 4, true);
	put(&g[1], "2g.20gb", 0, false);
	struct gf_mig_propose_demand d[2] = { D(NULL, "1g.10gb", 5),
					      D("h100-80gb", "2g.20gb", 1) };
	struct gf_mig_proposal p;
	propose_ok(g, 2, d, 2, &p);
	assert_int_equal(p.nchanges, 0);
	assert_int_equal(p.before, 6);
	assert_int_equal(p.after, 6);
	assert_int_equal(p.met_before[0], 5);
	assert_int_equal(p.met_before[1], 1);
	gf_mig_proposal_release(&p);
	/* no demand at all, or no GPU: empty, not an error */
	propose_ok(g, 2, d, 0, &p);
	assert_int_equal(p.nchanges, 0);
	assert_int_equal(p.ndemands, 0);
	propose_ok(NULL, 0, d, 2, &p);
	assert_int_equal(p.nchanges, 0);
	assert_int_equal(p.after, 0);
}

/* Demand limited to one model lands there; a model the fleet lacks
 * leaves its demand unmet, no error; limited demand is matched first. */
static void test_two_models(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[2] = { G(0, 0, "h100-80gb"),
					   G(1, 0, "a100-40gb") };
	struct gf_mig_propose_demand d1[2] = { D("a100-40gb", "1g.10gb", 2),
					       D("a30", "1g.6gb", 1) };
	struct gf_mig_proposal p;
	propose_ok(g, 2, d1, 2, &p);
	assert_int_equal(p.nchanges, 1);
	assert_int_equal(p.changes[0].at, 1);
	assert_int_equal(
		count_of(M("a100-40gb"), &p.changes[0].layout, "1g.10gb"), 2);
	assert_int_equal(p.met_after[0], 2);
	assert_int_equal(p.met_after[1], 0);
	gf_mig_proposal_release(&p);

	/* the H100's seven 1g.10gb serve the demand limited to H100s; the
	 * two asked of any model go to the A100 (matching the unlimited
	 * demand first would take the H100's and leave the limited unmet) */
	for (int s = 0; s < 7; s++)
		put(&g[0], "1g.10gb", s, false);
	struct gf_mig_propose_demand d2[2] = { D(NULL, "1g.10gb", 2),
					       D("h100-80gb", "1g.10gb", 7) };
	propose_ok(g, 2, d2, 2, &p);
	assert_int_equal(p.met_before[0], 0);
	assert_int_equal(p.met_before[1], 7);
	assert_int_equal(p.nchanges, 1);
	assert_int_equal(p.changes[0].at, 1);
	assert_int_equal(
		count_of(M("a100-40gb"), &p.changes[0].layout, "1g.10gb"), 2);
	assert_int_equal(p.after, 9);
	gf_mig_proposal_release(&p);

	/* one model each: both change */
	g[0].current.n = 0;
	struct gf_mig_propose_demand d3[2] = { D(NULL, "3g.20gb", 1),
					       D(NULL, "4g.40gb", 1) };
	propose_ok(g, 2, d3, 2, &p);
	assert_int_equal(p.nchanges, 2);
	assert_int_equal(
		count_of(M("h100-80gb"), &p.changes[0].layout, "4g.40gb"), 1);
	assert_int_equal(
		count_of(M("a100-40gb"), &p.changes[1].layout, "3g.20gb"), 1);
	gf_mig_proposal_release(&p);
}

/* Mixed profiles: 3g.40gb + 2 x 2g.20gb fill one H100 exactly
 * (3g@4, 2g@0, 2g@2: 8 memory slices, 7 compute); a free 3g.40gb there
 * already stays where it is. */
static void test_mixed_profiles(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[2] = { G(0, 0, "h100-80gb"),
					   G(0, 1, "h100-80gb") };
	struct gf_mig_propose_demand d[3] = { D(NULL, "3g.40gb", 1),
					      D(NULL, "2g.20gb", 2),
					      D(NULL, "1g.10gb", 1) };
	struct gf_mig_proposal p;
	propose_ok(g, 2, d, 2, &p);
	assert_int_equal(p.nchanges, 1);
	const struct gf_mig_change *c = &p.changes[0];
	assert_int_equal(c->layout.n, 3);
	assert_int_equal(count_of(c->model, &c->layout, "3g.40gb"), 1);
	assert_int_equal(count_of(c->model, &c->layout, "2g.20gb"), 2);
	assert_int_equal(p.after, 3);
	gf_mig_proposal_release(&p);

	put(&g[1], "3g.40gb", 4, false);
	propose_ok(g, 2, d, 2, &p);
	assert_int_equal(p.met_before[0], 1);
	assert_int_equal(p.nchanges, 1);
	c = &p.changes[0];
	assert_int_equal(c->at, 1); /* the GPU with the 3g: the fewest used */
	assert_int_equal(c->ndestroy, 0);
	assert_int_equal(c->ncreate, 2);
	assert_true(has(&c->layout, &g[1].current.inst[0]));
	gf_mig_proposal_release(&p);

	/* with the 1g too, the GPU with the 3g would have no room left:
	 * the empty one takes both 2g and the 1g, one change still */
	propose_ok(g, 2, d, 3, &p);
	assert_int_equal(p.nchanges, 1);
	c = &p.changes[0];
	assert_int_equal(c->at, 0);
	assert_int_equal(count_of(c->model, &c->layout, "2g.20gb"), 2);
	assert_int_equal(count_of(c->model, &c->layout, "1g.10gb"), 1);
	assert_int_equal(p.after, 4);
	gf_mig_proposal_release(&p);
}

/* The fewest GPUs changed come before the fewest used: two H100s each
 * with a wanted free 4g.40gb have room for a 3g.40gb each, an empty one
 * for both; the empty one changes, alone.  (Fewest used would change the
 * two.)  Changing one GPU only to clear it never happens. */
static void test_fewest_changes(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[3] = { G(0, 0, "h100-80gb"),
					   G(0, 1, "h100-80gb"),
					   G(0, 2, "h100-80gb") };
	put(&g[0], "4g.40gb", 0, false);
	put(&g[1], "4g.40gb", 0, false);
	struct gf_mig_propose_demand d[2] = { D(NULL, "4g.40gb", 2),
					      D(NULL, "3g.40gb", 2) };
	struct gf_mig_proposal p;
	propose_ok(g, 3, d, 2, &p);
	assert_int_equal(p.nchanges, 1);
	assert_int_equal(p.changes[0].at, 2);
	assert_int_equal(
		count_of(p.changes[0].model, &p.changes[0].layout, "3g.40gb"),
		2);
	assert_int_equal(p.after, 4);
	gf_mig_proposal_release(&p);

	/* two GPUs of unwanted 1g.10gb and an empty one; one 3g.40gb asked:
	 * one change, never a second one that only clears */
	struct gf_mig_propose_gpu h[3] = { G(0, 0, "h100-80gb"),
					   G(0, 1, "h100-80gb"),
					   G(0, 2, "h100-80gb") };
	for (int s = 0; s < 7; s++) {
		put(&h[0], "1g.10gb", s, false);
		put(&h[1], "1g.10gb", s, false);
	}
	struct gf_mig_propose_demand d3[1] = { D(NULL, "3g.40gb", 1) };
	propose_ok(h, 3, d3, 1, &p);
	assert_int_equal(p.nchanges, 1);
	assert_int_equal(p.changes[0].ncreate, 1);
	gf_mig_proposal_release(&p);
}

/* Demand met today stays met: seven free 1g.10gb on an idle H100 are
 * not traded for a 7g.80gb (more units) on it; an empty GPU takes the
 * 7g. */
static void test_met_demand_stays_met(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[2] = { G(0, 0, "h100-80gb"),
					   G(0, 1, "h100-80gb") };
	for (int s = 0; s < 7; s++)
		put(&g[0], "1g.10gb", s, false);
	struct gf_mig_propose_demand d[2] = { D(NULL, "1g.10gb", 7),
					      D(NULL, "7g.80gb", 1) };
	struct gf_mig_proposal p;
	propose_ok(g, 1, d, 2, &p);
	assert_int_equal(p.nchanges, 0);
	assert_int_equal(p.met_after[0], 7);
	assert_int_equal(p.met_after[1], 0);
	propose_ok(g, 2, d, 2, &p);
	assert_int_equal(p.nchanges, 1);
	assert_int_equal(p.changes[0].at, 1);
	assert_int_equal(p.after, 8);
	gf_mig_proposal_release(&p);
}

/* Free instances on a GPU that cannot change meet demand first; what is
 * left goes to the idle GPUs, whose unwanted instances go. */
static void test_busy_gpus_free_instances_first(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[2] = { G(0, 0, "h100-80gb"),
					   G(1, 0, "h100-80gb") };
	put(&g[0], "3g.40gb", 4, true);
	put(&g[0], "1g.10gb", 0, false);
	put(&g[1], "1g.10gb", 0, false);
	struct gf_mig_propose_demand d[2] = { D(NULL, "1g.10gb", 1),
					      D(NULL, "3g.40gb", 1) };
	struct gf_mig_proposal p;
	propose_ok(g, 2, d, 2, &p);
	assert_int_equal(p.met_before[0], 1);
	assert_int_equal(p.nchanges, 1);
	const struct gf_mig_change *c = &p.changes[0];
	assert_int_equal(c->at, 1);
	assert_int_equal(count_of(c->model, &c->layout, "3g.40gb"), 1);
	assert_int_equal(c->ndestroy, 1); /* its 1g.10gb is not wanted */
	assert_int_equal(p.after, 2);
	gf_mig_proposal_release(&p);
}

/* Caps and bad input: each refused with a message, nothing allocated. */
static void test_caps_and_errors(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[1] = { G(0, 0, "h100-80gb") };
	struct gf_mig_propose_demand d[1] = { D(NULL, "1g.10gb", 1) };
	struct gf_mig_proposal p;
	struct gf_err e;
	assert_int_equal(
		gf_mig_propose(g, GF_MIG_PROPOSE_MAX_GPUS + 1, d, 1, &p, &e),
		GF_ETOOBIG);
	assert_int_equal(gf_mig_propose(g, -1, d, 1, &p, &e), GF_ETOOBIG);
	assert_int_equal(
		gf_mig_propose(g, 1, d, GF_MIG_PROPOSE_MAX_ENTRIES + 1, &p, &e),
		GF_ETOOBIG);
	struct gf_mig_propose_demand bad = D(NULL, "1g.10gb", -1);
	assert_int_equal(gf_mig_propose(g, 1, &bad, 1, &p, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "count -1"));
	bad.count = GF_MIG_PROPOSE_MAX_INSTANCES + 1;
	assert_int_equal(gf_mig_propose(g, 1, &bad, 1, &p, &e), GF_ETOOBIG);
	/* two entries of one demand over the cap together */
	struct gf_mig_propose_demand two[2] = { D(NULL, "1g.10gb",
						  GF_MIG_PROPOSE_MAX_INSTANCES),
						D(NULL, "1g.10gb", 1) };
	assert_int_equal(gf_mig_propose(g, 1, two, 2, &p, &e), GF_ETOOBIG);
	memset(bad.profile, 'x', sizeof(bad.profile));
	bad.count = 1;
	assert_int_equal(gf_mig_propose(g, 1, &bad, 1, &p, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "not terminated"));
	/* more distinct (model, profile) demands than the planner takes;
	 * entries of the same demand merge and do not count */
	struct gf_mig_propose_demand many[GF_MIG_PROPOSE_MAX_DEMANDS + 1];
	for (int k = 0; k <= GF_MIG_PROPOSE_MAX_DEMANDS; k++) {
		many[k] = D(NULL, "1g.10gb", 1);
		snprintf(many[k].profile, sizeof(many[k].profile), "%dg.%dgb",
			 k % 7 + 1, k + 1);
	}
	assert_int_equal(gf_mig_propose(g, 1, many,
					GF_MIG_PROPOSE_MAX_DEMANDS + 1, &p, &e),
			 GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "distinct"));
	for (int k = 0; k <= GF_MIG_PROPOSE_MAX_DEMANDS; k++)
		many[k] = D(NULL, "1g.10gb", 1);
	propose_ok(g, 1, many, GF_MIG_PROPOSE_MAX_DEMANDS + 1, &p);
	assert_int_equal(p.ndemands, 1);
	assert_int_equal(p.demand[0].count, GF_MIG_PROPOSE_MAX_DEMANDS + 1);
	assert_int_equal(p.after, 7); /* an H100 holds seven */
	gf_mig_proposal_release(&p);
	/* GPUs: no model, a current layout the rules reject */
	struct gf_mig_propose_gpu b = G(3, 1, "h100-80gb");
	b.model = NULL;
	assert_int_equal(gf_mig_propose(&b, 1, d, 1, &p, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "node 3, GPU 1"));
	b = G(3, 1, "h100-80gb");
	put(&b, "3g.40gb", 2, false);
	assert_int_equal(gf_mig_propose(&b, 1, d, 1, &p, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "current layout"));
	/* an unknown profile is unmet demand, not an error */
	struct gf_mig_propose_demand unk = D(NULL, "9g.99gb", 2);
	propose_ok(g, 1, &unk, 1, &p);
	assert_int_equal(p.nchanges, 0);
	assert_int_equal(p.after, 0);
}

/* The rules on 200 random mixed fleets: random current layouts, some
 * instances busy, demand of the fleet's names, some limited to a model;
 * the same input twice gives the same proposal. */
static void test_random_fleets(void **state)
{
	(void)state;
	static const char *const ids[4] = { "h100-80gb", "a100-40gb",
					    "a100-80gb", "a30" };
	struct gf_rng r;
	gf_rng_seed(&r, 7);
	int changed = 0;
	for (int t = 0; t < 200; t++) {
		struct gf_mig_propose_gpu g[12];
		int n = 1 + (int)gf_rng_below(&r, 12);
		for (int i = 0; i < n; i++) {
			g[i] = G(i / 4, i % 4, ids[gf_rng_below(&r, 4)]);
			if (gf_rng_below(&r, 2) == 0)
				continue;
			g[i].current = random_mig_layout(&r, g[i].model);
			for (int k = 0; k < g[i].current.n; k++)
				g[i].current.inst[k].busy =
					gf_rng_below(&r, 6) == 0;
		}
		struct gf_mig_propose_demand d[5];
		int nd = 1 + (int)gf_rng_below(&r, 5);
		for (int k = 0; k < nd; k++) {
			const struct gf_mig_model *m =
				g[gf_rng_below(&r, (uint64_t)n)].model;
			const char *name =
				m->profiles[gf_rng_below(
						    &r, (uint64_t)m->nprofiles)]
					.name;
			d[k] = D(NULL, name, (int)gf_rng_below(&r, 9));
			if (gf_rng_below(&r, 3) == 0)
				d[k].model = m;
		}
		struct gf_mig_proposal p, q;
		propose_ok(g, n, d, nd, &p);
		propose_ok(g, n, d, nd, &q);
		assert_int_equal(p.nchanges, q.nchanges);
		for (int c = 0; c < p.nchanges; c++)
			assert_memory_equal(&p.changes[c], &q.changes[c],
					    sizeof(p.changes[c]));
		changed += p.nchanges;
		gf_mig_proposal_release(&p);
		gf_mig_proposal_release(&q);
	}
	assert_true(changed > 50); /* the cases do propose */
}

/* ---- an independent exhaustive search on small fleets ---- */

#define EX_MAX_OPTS 256

/* What an idle GPU may become: kept as it is (option 0), or any multiset
 * of demanded profiles a layout of its model holds. */
struct ex_gpu {
	const struct gf_mig_model *m;
	int nopt;
	int8_t counts[EX_MAX_OPTS][GF_MIG_MAX_PROFILES];
};

struct ex_collect {
	struct ex_gpu *g;
	const bool *asked; /* per profile of g->m */
};

static int ex_cb(const struct gf_mig_layout *l, void *arg)
{
	struct ex_collect *c = arg;
	int8_t cnt[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < l->n; i++) {
		if (!c->asked[l->inst[i].profile])
			return 0;
		cnt[l->inst[i].profile]++;
	}
	for (int o = 1; o < c->g->nopt; o++)
		if (!memcmp(c->g->counts[o], cnt, sizeof(cnt)))
			return 0;
	assert_true(c->g->nopt < EX_MAX_OPTS);
	memcpy(c->g->counts[c->g->nopt++], cnt, sizeof(cnt));
	return 0;
}

struct ex_best {
	long units;
	int changes, used;
};

struct ex_search {
	const struct gf_mig_propose_gpu *g;
	int n;
	const struct gf_mig_propose_demand *d;
	int nd;
	struct ex_gpu *ex; /* per GPU; NULL m: busy, never changes */
	int *choice;
	int before[8];
	struct ex_best best;
};

/* Instances of `name` the fleet offers with the choices made. */
static long ex_supply(const struct ex_search *S, const char *name)
{
	long n = 0;
	for (int i = 0; i < S->n; i++) {
		const struct gf_mig_propose_gpu *g = &S->g[i];
		int pi = gf_mig_profile_find(g->model, name);
		if (pi < 0)
			continue;
		if (S->ex[i].m && S->choice[i] > 0) {
			n += S->ex[i].counts[S->choice[i]][pi];
			continue;
		}
		for (int k = 0; k < g->current.n; k++)
			n += g->current.inst[k].profile == pi &&
			     !g->current.inst[k].busy;
	}
	return n;
}

static void ex_eval(struct ex_search *S)
{
	struct ex_best b = { 0, 0, 0 };
	for (int k = 0; k < S->nd; k++) {
		long met = ex_supply(S, S->d[k].profile);
		if (met > S->d[k].count)
			met = S->d[k].count;
		if (met < S->before[k])
			return; /* demand met today must stay met */
		b.units += met * gf_mig_profile_units(S->d[k].profile);
	}
	for (int i = 0; i < S->n; i++) {
		if (!S->ex[i].m)
			continue;
		int o = S->choice[i];
		b.changes += o > 0;
		int ninst = o > 0 ? 0 : S->g[i].current.n;
		for (int p = 0; o > 0 && p < GF_MIG_MAX_PROFILES; p++)
			ninst += S->ex[i].counts[o][p];
		b.used += ninst > 0;
	}
	struct ex_best *w = &S->best;
	if (b.units > w->units ||
	    (b.units == w->units &&
	     (b.changes < w->changes ||
	      (b.changes == w->changes && b.used < w->used))))
		*w = b;
}

static void ex_walk(struct ex_search *S, int i)
{
	if (i == S->n) {
		ex_eval(S);
		return;
	}
	int nopt = S->ex[i].m ? S->ex[i].nopt : 1;
	for (int o = 0; o < nopt; o++) {
		S->choice[i] = o;
		ex_walk(S, i + 1);
	}
}

/* The options of idle GPU i: keep, or a multiset of asked profiles
 * other than the one it holds. */
static void ex_options(struct ex_search *S, int i)
{
	const struct gf_mig_propose_gpu *g = &S->g[i];
	struct ex_gpu *x = &S->ex[i];
	x->m = g->model;
	x->nopt = 1;
	memset(x->counts[0], 0, sizeof(x->counts[0]));
	bool asked[GF_MIG_MAX_PROFILES] = { false };
	for (int k = 0; k < S->nd; k++) {
		int pi = gf_mig_profile_find(g->model, S->d[k].profile);
		if (pi >= 0 && S->d[k].count > 0)
			asked[pi] = true;
	}
	/* the empty layout, then every other */
	x->nopt = 2;
	memset(x->counts[1], 0, sizeof(x->counts[1]));
	struct ex_collect c = { x, asked };
	gf_mig_enumerate(g->model, ex_cb, &c);
	int8_t cur[GF_MIG_MAX_PROFILES] = { 0 };
	for (int k = 0; k < g->current.n; k++)
		cur[g->current.inst[k].profile]++;
	for (int o = 1; o < x->nopt; o++)
		if (!memcmp(x->counts[o], cur, sizeof(cur))) {
			memmove(x->counts[o], x->counts[o + 1],
				(size_t)(x->nopt - o - 1) *
					sizeof(x->counts[0]));
			x->nopt--;
			break;
		}
}

/* 120 small fleets (1 to 3 GPUs that may change, up to 2 that may not;
 * H100, A30, A100 40GB; 1 to 3 demands of distinct names): the most
 * units met, then the fewest GPUs changed, then the fewest used, equal
 * to an exhaustive search over every multiset of asked profiles per GPU
 * that keeps every demand met today met. */
static void test_small_fleets_exhaustive(void **state)
{
	(void)state;
	static const char *const ids[3] = { "h100-80gb", "a30", "a100-40gb" };
	static struct ex_gpu ex[5];
	struct gf_rng r;
	gf_rng_seed(&r, 19);
	int changed = 0;
	for (int t = 0; t < 120; t++) {
		struct gf_mig_propose_gpu g[5];
		int nidle = 1 + (int)gf_rng_below(&r, 3);
		int n = nidle + (int)gf_rng_below(&r, 3);
		for (int i = 0; i < n; i++) {
			g[i] = G(0, i, ids[gf_rng_below(&r, 3)]);
			if (i < nidle && gf_rng_below(&r, 2) == 0)
				continue;
			do {
				g[i].current =
					random_mig_layout(&r, g[i].model);
			} while (g[i].current.n < 2 && i >= nidle);
			if (i >= nidle) /* one busy at least */
				g[i].current.inst[0].busy = true;
		}
		struct gf_mig_propose_demand d[3];
		int nd = 0, want = 1 + (int)gf_rng_below(&r, 3);
		for (int tries = 0; nd < want && tries < 20; tries++) {
			const struct gf_mig_model *m =
				g[gf_rng_below(&r, (uint64_t)n)].model;
			const char *name =
				m->profiles[gf_rng_below(
						    &r, (uint64_t)m->nprofiles)]
					.name;
			bool dup = false;
			for (int k = 0; k < nd; k++)
				dup |= !strcmp(d[k].profile, name);
			if (!dup)
				d[nd++] =
					D(NULL, name, (int)gf_rng_below(&r, 7));
		}
		struct gf_mig_proposal p;
		propose_ok(g, n, d, nd, &p);
		int choice[5];
		struct ex_search S = { g,  n,	   d,	  nd,
				       ex, choice, { 0 }, { -1, 0, 0 } };
		for (int k = 0; k < nd; k++)
			S.before[k] = p.met_before[k];
		for (int i = 0; i < n; i++) {
			ex[i].m = NULL;
			if (i < nidle)
				ex_options(&S, i);
		}
		ex_walk(&S, 0);
		long units = 0;
		for (int k = 0; k < nd; k++)
			units += (long)p.met_after[k] *
				 gf_mig_profile_units(d[k].profile);
		int used = 0, c = 0;
		for (int i = 0; i < nidle; i++) {
			const struct gf_mig_layout *l = &g[i].current;
			if (c < p.nchanges && p.changes[c].at == i)
				l = &p.changes[c++].layout;
			used += l->n > 0;
		}
		if (units != S.best.units || p.nchanges != S.best.changes ||
		    used != S.best.used)
			print_message("case %d: proposal %ld units, %d "
				      "changes, %d used; search %ld, %d, %d\n",
				      t, units, p.nchanges, used, S.best.units,
				      S.best.changes, S.best.used);
		assert_int_equal(units, S.best.units);
		assert_int_equal(p.nchanges, S.best.changes);
		assert_int_equal(used, S.best.used);
		changed += p.nchanges > 0;
		gf_mig_proposal_release(&p);
	}
	print_message("%d of 120 fleets changed\n", changed);
	assert_true(changed > 30);
}

static void render(const struct gf_mig_proposal *p, struct gf_buf *b)
{
	gf_buf_init(b, 1 << 20);
	assert_int_equal(gf_mig_render_proposal_json(p, NULL, b), 0);
}

/* The JSON: each field, parsed back; too small a buffer is GF_ETOOBIG,
 * never a cut document. */
static void test_render_json(void **state)
{
	(void)state;
	struct gf_mig_propose_gpu g[2] = { G(3, 5, "h100-80gb"),
					   G(3, 6, "h100-80gb") };
	put(&g[0], "1g.10gb", 6, false);
	put(&g[1], "7g.80gb", 0, true);
	struct gf_mig_propose_demand d[2] = { D(NULL, "3g.40gb", 1),
					      D("h100-80gb", "1g.10gb", 1) };
	struct gf_mig_proposal p;
	propose_ok(g, 2, d, 2, &p);
	assert_int_equal(p.nchanges, 1);
	struct gf_buf b;
	render(&p, &b);
	struct gf_jv *root;
	struct gf_err e;
	assert_int_equal(gf_jv_parse(b.data, b.len, &root, &e), 0);
	const struct gf_jv *ch = gf_jv_get(root, "changes");
	assert_int_equal(gf_jv_len(ch), 1);
	int64_t v;
	assert_true(gf_jv_int(gf_jv_get(gf_jv_at(ch, 0), "node"), &v));
	assert_int_equal(v, 3);
	assert_true(gf_jv_int(gf_jv_get(gf_jv_at(ch, 0), "gpu"), &v));
	assert_int_equal(v, 5);
	assert_string_equal(gf_jv_str(gf_jv_get(gf_jv_at(ch, 0), "model")),
			    "h100-80gb");
	const struct gf_jv *cur = gf_jv_get(gf_jv_at(ch, 0), "current");
	assert_int_equal(gf_jv_len(cur), 1);
	assert_string_equal(gf_jv_str(gf_jv_get(gf_jv_at(cur, 0), "profile")),
			    "1g.10gb");
	const struct gf_jv *lay = gf_jv_get(gf_jv_at(ch, 0), "layout");
	assert_int_equal(gf_jv_len(lay), 2); /* the 1g kept, a 3g */
	assert_int_equal(gf_jv_len(gf_jv_get(gf_jv_at(ch, 0), "create")), 1);
	assert_int_equal(gf_jv_len(gf_jv_get(gf_jv_at(ch, 0), "destroy")), 0);
	const struct gf_jv *dm = gf_jv_get(root, "demand");
	assert_int_equal(gf_jv_len(dm), 2);
	assert_int_equal(gf_jv_type(gf_jv_get(gf_jv_at(dm, 0), "model")),
			 GF_JV_NULL);
	assert_string_equal(gf_jv_str(gf_jv_get(gf_jv_at(dm, 1), "model")),
			    "h100-80gb");
	assert_true(gf_jv_int(gf_jv_get(gf_jv_at(dm, 1), "met_before"), &v));
	assert_int_equal(v, 1);
	assert_true(gf_jv_int(gf_jv_get(gf_jv_at(dm, 0), "met_after"), &v));
	assert_int_equal(v, 1);
	const struct gf_jv *tot = gf_jv_get(root, "totals");
	assert_true(gf_jv_int(gf_jv_get(tot, "changed_gpus"), &v));
	assert_int_equal(v, 1);
	assert_true(gf_jv_int(gf_jv_get(tot, "idle_gpus"), &v));
	assert_int_equal(v, 1);
	assert_true(gf_jv_int(gf_jv_get(tot, "met_after"), &v));
	assert_int_equal(v, 2);
	gf_jv_free(root);
	size_t full = b.len;
	gf_buf_release(&b);
	for (size_t cap = 1; cap < full; cap += full / 41 + 1) {
		gf_buf_init(&b, cap);
		assert_int_equal(gf_mig_render_proposal_json(&p, NULL, &b),
				 GF_ETOOBIG);
		gf_buf_release(&b);
	}
	gf_mig_proposal_release(&p);
	/* an empty proposal renders too */
	propose_ok(g, 2, d, 0, &p);
	render(&p, &b);
	assert_non_null(strstr(b.data, "\"changes\": []"));
	gf_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_empty_gpu),
		cmocka_unit_test(test_busy_gpu_never_changed),
		cmocka_unit_test(test_demand_already_met),
		cmocka_unit_test(test_two_models),
		cmocka_unit_test(test_mixed_profiles),
		cmocka_unit_test(test_fewest_changes),
		cmocka_unit_test(test_met_demand_stays_met),
		cmocka_unit_test(test_busy_gpus_free_instances_first),
		cmocka_unit_test(test_caps_and_errors),
		cmocka_unit_test(test_random_fleets),
		cmocka_unit_test(test_small_fleets_exhaustive),
		cmocka_unit_test(test_render_json),
	};
	return cmocka_run_group_tests_name("mig_propose", tests, NULL, NULL);
}
