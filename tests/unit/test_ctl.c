/*
 * test_ctl.c - the scheduling core (ctl.h) on small clusters whose
 * answers are derived by hand in the comments: typed quotas (by model,
 * by MIG profile, by share), fair share between two teams (the order of
 * starts), gangs inside one block, preemption with the fewest victims,
 * backfill that never delays the head job, GF_ENEVER on every
 * never-placeable request, the state machine and its refusals, restore
 * of running jobs, max runtime, config checks; then a randomized run
 * checked (gf_ctl_check) after every step.
 */
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>
#include <gpufleet/rng.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/typical.h"
#include "helpers.h"
#include "util/mem.h"

/* ---- building clusters, configs and jobs ---- */

static uint64_t next_seq;

struct ndef {
	const char *name;
	int gpus;
	const char *model;
	int block;
	const char *labels;
};

static struct gf_ctl_config *cfg_new(void)
{
	struct gf_ctl_config *c = gf_calloc(1, sizeof(*c));
	c->policy = GF_POLICY_FGD;
	c->nclasses = 1;
	snprintf(c->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	c->classes[0].preemptible = true;
	c->nblocks = 1;
	snprintf(c->blocks[0], GF_NODE_NAME_MAX, "b0");
	c->open_teams = true;
	c->seed = 1;
	return c;
}

static struct gf_ctl_class *cls_add(struct gf_ctl_config *c, const char *name,
				    int prio, bool preemptible)
{
	struct gf_ctl_class *k = &c->classes[c->nclasses++];
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->priority = prio;
	k->preemptible = preemptible;
	return k;
}

static struct gf_ctl_team *team_add(struct gf_ctl_config *c, const char *name,
				    double weight)
{
	struct gf_ctl_team *t = &c->teams[c->nteams++];
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->weight = weight;
	t->milli = -1;
	return t;
}

static void quota(struct gf_ctl_team *t, bool mig, const char *what,
		  int64_t limit)
{
	struct gf_ctl_quota *q =
		mig ? &t->mig[t->nmig++] : &t->gpus[t->ngpus++];
	snprintf(q->what, sizeof(q->what), "%s", what);
	q->limit = limit;
	t->has_quota = true;
}

static struct gf_cluster *cluster_of(const struct ndef *d, int n)
{
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	for (int i = 0; i < n; i++) {
		int m = gf_cluster_model(c,
					 d[i].model ? d[i].model : "h100-80gb");
		assert_true(m >= 0);
		assert_int_equal(gf_cluster_add(c, d[i].name, 128000, 1 << 20,
						d[i].gpus, m),
				 i);
	}
	return c;
}

static struct gf_ctl_node *nodes_of(const struct ndef *d, int n)
{
	struct gf_ctl_node *nd = gf_calloc((size_t)n, sizeof(*nd));
	for (int i = 0; i < n; i++) {
		nd[i].block = d[i].block;
		snprintf(nd[i].labels, sizeof(nd[i].labels), "%s",
			 d[i].labels ? d[i].labels : "");
	}
	return nd;
}

static void mig_add(struct gf_ctl_node *nd, int gpu, const char *profile,
		    int start)
{
	struct gf_ctl_mig *x = &nd->mig[nd->nmig++];
	x->gpu = gpu;
	snprintf(x->profile, sizeof(x->profile), "%s", profile);
	x->start = start;
}

static void check(const struct gf_ctl *ctl)
{
	char msg[256];
	int rc = gf_ctl_check(ctl, msg, sizeof(msg));
	if (rc)
		print_message("gf_ctl_check: %s\n", msg);
	assert_int_equal(rc, 0);
}

static struct gf_ctl *ctl_new(struct gf_ctl_config *cfg, const struct ndef *d,
			      int n, struct gf_ctl_node *nd)
{
	struct gf_cluster *c = cluster_of(d, n);
	bool own = nd == NULL;
	next_seq = 0;
	if (own)
		nd = nodes_of(d, n);
	struct gf_ctl *ctl;
	struct gf_err e;
	int rc = gf_ctl_new(cfg, c, nd, &ctl, &e);
	if (rc)
		print_message("gf_ctl_new: %s\n", e.msg);
	assert_int_equal(rc, 0);
	if (own)
		gf_free(nd);
	gf_free(cfg);
	check(ctl);
	return ctl;
}

static struct gf_job *job(const char *team, const char *cls)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++next_seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "%s", team);
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "%s", cls);
	j->spec.replicas = 1;
	j->spec.cpu_milli = 1000;
	j->spec.memory_mib = 1024;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 1;
	j->block = -1;
	return j;
}

static struct gf_job *gpus(const char *team, const char *cls, int replicas,
			   int n)
{
	struct gf_job *j = job(team, cls);
	j->spec.replicas = replicas;
	j->spec.gpus = n;
	return j;
}

/* Admit and add; the id stays valid (jobs are never dropped). */
static const char *submit(struct gf_ctl *ctl, struct gf_job *j)
{
	struct gf_err e;
	int rc = gf_ctl_admit(ctl, &j->spec, &e);
	if (rc)
		print_message("admit %s: %s\n", j->id, e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(gf_ctl_add(ctl, j, &e), 0);
	check(ctl);
	return gf_ctl_job(ctl, j->id)->id;
}

static void pass(struct gf_ctl *ctl, int64_t now, struct gf_ctl_changes *ch)
{
	if (ch)
		ch->n = 0;
	assert_int_equal(gf_ctl_schedule(ctl, now, ch), 0);
	check(ctl);
}

static const struct gf_job *J(const struct gf_ctl *ctl, const char *id)
{
	const struct gf_job *j = gf_ctl_job(ctl, id);
	assert_non_null(j);
	return j;
}

static enum gf_job_state st(const struct gf_ctl *ctl, const char *id)
{
	return J(ctl, id)->state;
}

static const char *why(const struct gf_ctl *ctl, const char *id)
{
	return J(ctl, id)->reason;
}

/* ---- quotas ---- */

/*
 * Two h100 nodes and one a100 node, 8 GPUs each.  Team a: {h100-80gb: 8}
 * only, so a100 is not allowed at all; team b: {"*": 10}.
 * a: 4 + 4 GPUs of any model run, both on h100 (a100 is unlisted): 8 of
 * 8; a third job of 1 GPU (any model, so h100) would make 9 of 8.  An
 * a100 job can never run for a (422); one the store kept from an older
 * config waits with that reason.  b: 8 GPUs run, then 4 more would be 12
 * of 10 on all models.  Admission: 2 x 8 GPUs for a is 16 > 8.
 */
static void add_anyway(struct gf_ctl *ctl, struct gf_job *j, const char *msg)
{
	struct gf_err e;
	assert_int_equal(gf_ctl_admit(ctl, &j->spec, &e), GF_ENEVER);
	assert_string_equal(e.msg, msg);
	assert_int_equal(gf_ctl_add(ctl, j, &e), 0);
	char want[GF_JOB_REASON_MAX];
	snprintf(want, sizeof(want), "can never be placed here: %s", msg);
	assert_string_equal(j->reason, want);
}

static void test_quota_by_model(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	quota(team_add(cfg, "a", 1), false, "h100-80gb", 8);
	quota(team_add(cfg, "b", 1), false, "*", 10);
	struct ndef d[] = { { "n0", 8, "h100-80gb", 0, NULL },
			    { "n1", 8, "h100-80gb", 0, NULL },
			    { "n2", 8, "a100-80gb", 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 3, NULL);
	const char *a1 = submit(ctl, gpus("a", "batch", 1, 4));
	const char *a2 = submit(ctl, gpus("a", "batch", 1, 4));
	const char *a3 = submit(ctl, gpus("a", "batch", 1, 1));
	struct gf_job *x = gpus("a", "batch", 1, 1);
	snprintf(x->spec.gpu_model, sizeof(x->spec.gpu_model), "a100-80gb");
	add_anyway(ctl, x,
		   "team a's quota allows at most 0 a100-80gb GPUs, the job "
		   "asks for 1");
	const char *a4 = x->id;
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, a1), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, a2), GF_JOB_RUNNING);
	for (int r = 0; r < 2; r++) /* h100 only */
		assert_true(J(ctl, r ? a2 : a1)->place[0].node < 2);
	assert_int_equal(st(ctl, a3), GF_JOB_PENDING);
	assert_string_equal(why(ctl, a3),
			    "quota: team a would use 9 of 8 h100-80gb GPUs");
	assert_int_equal(st(ctl, a4), GF_JOB_PENDING);

	const char *b1 = submit(ctl, gpus("b", "batch", 1, 8));
	const char *b2 = submit(ctl, gpus("b", "batch", 1, 4));
	pass(ctl, 2000, NULL);
	assert_int_equal(st(ctl, b1), GF_JOB_RUNNING);
	assert_string_equal(why(ctl, b2),
			    "quota: team b would use 12 of 10 GPUs (all "
			    "models)");

	/* never within the whole quota */
	struct gf_err e;
	struct gf_job *big = gpus("a", "batch", 2, 8);
	assert_int_equal(gf_ctl_admit(ctl, &big->spec, &e), GF_ENEVER);
	assert_string_equal(e.msg, "team a's quota allows at most 8 GPUs of "
				   "one model, the job asks for 16");
	snprintf(big->spec.gpu_model, sizeof(big->spec.gpu_model), "a100-80gb");
	big->spec.replicas = 1;
	assert_int_equal(gf_ctl_admit(ctl, &big->spec, &e), GF_ENEVER);
	assert_string_equal(e.msg, "team a's quota allows at most 0 "
				   "a100-80gb GPUs, the job asks for 8");
	gf_job_release(big);
	gf_free(big);

	/* a1 ends: 4 of 8 h100 in use, a3 (1 GPU) fits its quota */
	assert_int_equal(gf_ctl_finish(ctl, a1, 0, 3000, &e), 0);
	pass(ctl, 3000, NULL);
	assert_int_equal(st(ctl, a3), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, a4), GF_JOB_PENDING);
	gf_ctl_free(ctl);
}

/*
 * One h100 node: GPU 0 split in 7 x 1g.10gb, GPU 1 in 2 x 3g.40gb; GPUs
 * 2-7 whole.  Team m: {1g.10gb: 2}.  Three 1g.10gb jobs: the third would
 * be 3 of 2; a 3g.40gb job: none in its quota, never (422).  The MIG GPUs are
 * not given whole: 6 GPUs fit, 7 never (admission), and the engine sees 6.
 */
static void test_quota_by_mig_profile(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	quota(team_add(cfg, "m", 1), true, "1g.10gb", 2);
	struct ndef d[] = { { "n0", 8, "h100-80gb", 0, NULL } };
	struct gf_ctl_node *nd = nodes_of(d, 1);
	for (int s = 0; s < 7; s++)
		mig_add(&nd[0], 0, "1g.10gb", s);
	mig_add(&nd[0], 1, "3g.40gb", 0);
	mig_add(&nd[0], 1, "3g.40gb", 4);
	struct gf_ctl *ctl = ctl_new(cfg, d, 1, nd);
	gf_free(nd);
	const char *id[3];
	for (int k = 0; k < 3; k++) {
		struct gf_job *j = job("m", "batch");
		snprintf(j->spec.mig_profile, sizeof(j->spec.mig_profile),
			 "1g.10gb");
		id[k] = submit(ctl, j);
	}
	struct gf_job *big = job("m", "batch");
	snprintf(big->spec.mig_profile, sizeof(big->spec.mig_profile),
		 "3g.40gb");
	add_anyway(ctl, big,
		   "team m's quota allows at most 0 3g.40gb instances, the job "
		   "asks for 1");
	const char *b = big->id;
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, id[0]), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, id[1]), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, id[0])->place[0].gpus[0], 0);
	assert_true(J(ctl, id[0])->place[0].mig_start >= 0);
	assert_int_equal(J(ctl, id[0])->place[0].gpu_milli, 0);
	assert_string_equal(why(ctl, id[2]),
			    "quota: team m would use 3 of 2 1g.10gb instances");
	assert_int_equal(st(ctl, b), GF_JOB_PENDING);
	struct gf_ctl_stats stats;
	gf_ctl_stats(ctl, &stats);
	assert_int_equal(stats.mig_total, 9);
	assert_int_equal(stats.mig_used, 2);
	/* 2 x 1000 x 1/7 compute: 142 each */
	assert_int_equal(stats.gpus_alloc_milli, 2 * 142);
	struct gf_err e;
	struct gf_job *w = gpus("m", "batch", 1, 7);
	assert_int_equal(gf_ctl_admit(ctl, &w->spec, &e), GF_ENEVER);
	w->spec.gpus = 6;
	assert_int_equal(gf_ctl_admit(ctl, &w->spec, &e), 0);
	const char *six = submit(ctl, w);
	pass(ctl, 2000, NULL);
	assert_int_equal(st(ctl, six), GF_JOB_RUNNING);
	for (int g = 0; g < 6; g++) /* never GPU 0 or 1 */
		assert_true(J(ctl, six)->place[0].gpus[g] >= 2);
	gf_ctl_free(ctl);
}

/*
 * Team s: shares capped at 1000 milli.  400 + 400 run; a third 400 would
 * be 1200 of 1000.  A gang of 3 x 400 = 1200 can never run for s.  Whole
 * GPUs are another kind: s has no GPU entry, so they are unlimited.
 */
static void test_quota_by_share(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	struct gf_ctl_team *t = team_add(cfg, "s", 1);
	t->has_quota = true;
	t->milli = 1000;
	struct ndef d[] = { { "n0", 4, NULL, 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 1, NULL);
	const char *id[3];
	for (int k = 0; k < 3; k++) {
		struct gf_job *j = job("s", "batch");
		j->spec.gpu_milli = 400;
		id[k] = submit(ctl, j);
	}
	const char *w = submit(ctl, gpus("s", "batch", 1, 2));
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, id[0]), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, id[1]), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, id[1])->place[0].gpu_milli, 400);
	assert_string_equal(why(ctl, id[2]), "quota: team s would use 1200 of "
					     "1000 milli-GPU in shares");
	assert_int_equal(st(ctl, w), GF_JOB_RUNNING);
	struct gf_err e;
	struct gf_job *g = job("s", "batch");
	g->spec.gpu_milli = 400;
	g->spec.replicas = 3;
	assert_int_equal(gf_ctl_admit(ctl, &g->spec, &e), GF_ENEVER);
	assert_string_equal(e.msg, "team s's quota allows 1000 milli-GPU in "
				   "shares, the job asks for 1200");
	gf_job_release(g);
	gf_free(g);
	gf_ctl_free(ctl);
}

/* ---- fair share ---- */

static void expect_starts(const struct gf_ctl_changes *ch, const char *want)
{
	char got[256] = "";
	for (int i = 0; i < ch->n; i++) {
		size_t l = strlen(got);
		snprintf(got + l, sizeof(got) - l, "%s%s", i ? " " : "",
			 ch->ids[i]);
	}
	assert_string_equal(got, want);
}

/*
 * One node of 8 GPUs; teams a and b each submit six 1-GPU jobs, a first
 * (j1..j6), then b (j7..j12).  Equal weights: shares start 0-0, a tie
 * goes to the older next job (j1); then b has the smaller share (0 <
 * 1000): j7; 1000-1000, older: j2; ... the starts alternate:
 * j1 j7 j2 j8 j3 j9 j4 j10.
 * Weights 3 (a) and 1 (b): share = milli / weight.  0-0: j1 (a: 333);
 * b 0: j7 (b: 1000); a 333: j2 (667), j3 (1000); 1000-1000, older: j4
 * (a: 1333); b 1000: j8 (2000); a: j5 (1667), j6 (2000): 8 GPUs.
 * Starts j1 j7 j2 j3 j4 j8 j5 j6: a holds 6, b 2, as 3:1.
 */
static void fair_share(double wa, const char *want)
{
	struct gf_ctl_config *cfg = cfg_new();
	team_add(cfg, "a", wa);
	team_add(cfg, "b", 1);
	struct ndef d[] = { { "n0", 8, NULL, 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 1, NULL);
	next_seq = 0;
	for (int k = 0; k < 12; k++)
		submit(ctl, gpus(k < 6 ? "a" : "b", "batch", 1, 1));
	struct gf_ctl_changes ch = { 0 };
	pass(ctl, 1000, &ch);
	expect_starts(&ch, want);
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

static void test_fair_share(void **state)
{
	(void)state;
	fair_share(1, "j1 j7 j2 j8 j3 j9 j4 j10");
	fair_share(3, "j1 j7 j2 j3 j4 j8 j5 j6");
}

/* ---- gangs ---- */

/*
 * Blocks 0 {n0, n1} and 1 {n2, n3}, 4 GPUs a node.  Jobs pinned by label
 * take 2 GPUs on n0 and 2 on n2: 6 GPUs free in each block, 12 in all.
 * A gang of 4 x 2 GPUs (8) fits neither block, though 12 are free: it
 * waits.  When n2's job ends, block 1 has 8 free: the gang starts there,
 * every replica on n2 or n3.
 */
static struct gf_ctl *two_blocks(void)
{
	struct gf_ctl_config *cfg = cfg_new();
	cfg->nblocks = 2;
	snprintf(cfg->blocks[1], GF_NODE_NAME_MAX, "b1");
	struct ndef d[] = { { "n0", 4, NULL, 0, "host=n0" },
			    { "n1", 4, NULL, 0, "host=n1" },
			    { "n2", 4, NULL, 1, "host=n2" },
			    { "n3", 4, NULL, 1, "host=n3" } };
	return ctl_new(cfg, d, 4, NULL);
}

static const char *pinned(struct gf_ctl *ctl, const char *host, int n)
{
	struct gf_job *j = gpus("default", "batch", 1, n);
	snprintf(j->spec.node_selector, sizeof(j->spec.node_selector),
		 "host=%s", host);
	return submit(ctl, j);
}

static void test_gang_one_block(void **state)
{
	(void)state;
	struct gf_ctl *ctl = two_blocks();
	pinned(ctl, "n0", 2);
	const char *p2 = pinned(ctl, "n2", 2);
	pass(ctl, 1000, NULL);
	const char *g = submit(ctl, gpus("default", "batch", 4, 2));
	pass(ctl, 2000, NULL);
	assert_int_equal(st(ctl, g), GF_JOB_PENDING);
	assert_string_equal(why(ctl, g),
			    "gang of 4 does not fit one block now");
	struct gf_ctl_stats s;
	gf_ctl_stats(ctl, &s);
	assert_int_equal(s.gpus_total_milli - s.gpus_alloc_milli, 12000);
	struct gf_err e;
	assert_int_equal(gf_ctl_finish(ctl, p2, 0, 3000, &e), 0);
	pass(ctl, 3000, NULL);
	const struct gf_job *gj = J(ctl, g);
	assert_int_equal(gj->state, GF_JOB_RUNNING);
	assert_int_equal(gj->block, 1);
	for (int r = 0; r < 4; r++)
		assert_true(gj->place[r].node == 2 || gj->place[r].node == 3);
	/* a gang bigger than any block, ever: 3 x 4 GPUs, blocks hold 2 */
	struct gf_job *big = gpus("default", "batch", 3, 4);
	assert_int_equal(gf_ctl_admit(ctl, &big->spec, &e), GF_ENEVER);
	assert_string_equal(e.msg, "gang of 3 replicas does not fit any "
				   "block: the largest holds 2");
	gf_job_release(big);
	gf_free(big);
	gf_ctl_free(ctl);
}

/*
 * Block order: with 2 GPUs taken on n0, block 0 has 6 free and block 1
 * has 8.  A gang of 2 x 2 GPUs fits both; the block with the least free
 * GPU that holds it is block 0, which keeps block 1 whole for an 8-GPU
 * gang: 4 x 2 GPUs then still starts at once.
 */
static void test_gang_block_order(void **state)
{
	(void)state;
	struct gf_ctl *ctl = two_blocks();
	pinned(ctl, "n0", 2);
	pass(ctl, 1000, NULL);
	const char *g = submit(ctl, gpus("default", "batch", 2, 2));
	pass(ctl, 2000, NULL);
	assert_int_equal(J(ctl, g)->block, 0);
	const char *big = submit(ctl, gpus("default", "batch", 4, 2));
	pass(ctl, 3000, NULL);
	assert_int_equal(st(ctl, big), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, big)->block, 1);
	gf_ctl_free(ctl);
}

/* ---- preemption ---- */

/*
 * Three nodes of 8 GPUs; class prod (priority 100, not preemptible) runs
 * 4 GPUs on each.  Batch (preemptible) fills the rest: n1 one job of 4
 * GPUs (t=2000), n2 two of 2 GPUs (t=3000), n0 four of 1 GPU (t=4000).
 * A prod job of 4 GPUs arrives.  Room on one node needs: n0 4 victims,
 * n1 1, n2 2; the fewest is 1, the 4-GPU job on n1.  A greedy pick of
 * the most recently started victims (least work lost) would take n0's
 * four 1-GPU jobs; by GPUs freed per victim it could take n2's.
 */
static void test_preempt_fewest(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	cls_add(cfg, "prod", 100, false);
	struct ndef d[] = { { "n0", 8, NULL, 0, "host=n0" },
			    { "n1", 8, NULL, 0, "host=n1" },
			    { "n2", 8, NULL, 0, "host=n2" } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 3, NULL);
	for (int i = 0; i < 3; i++) {
		struct gf_job *p = gpus("default", "prod", 1, 4);
		snprintf(p->spec.node_selector, sizeof(p->spec.node_selector),
			 "host=n%d", i);
		submit(ctl, p);
	}
	pass(ctl, 1000, NULL);
	const char *b1 = pinned(ctl, "n1", 4);
	pass(ctl, 2000, NULL);
	const char *c[2], *dd[4];
	for (int k = 0; k < 2; k++)
		c[k] = pinned(ctl, "n2", 2);
	pass(ctl, 3000, NULL);
	for (int k = 0; k < 4; k++)
		dd[k] = pinned(ctl, "n0", 1);
	pass(ctl, 4000, NULL);
	struct gf_ctl_stats s;
	gf_ctl_stats(ctl, &s);
	assert_int_equal(s.gpus_alloc_milli, 24000);
	const char *x = submit(ctl, gpus("default", "prod", 1, 4));
	struct gf_ctl_changes ch = { 0 };
	pass(ctl, 5000, &ch);
	assert_int_equal(st(ctl, x), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, x)->place[0].node, 1);
	assert_int_equal(st(ctl, b1), GF_JOB_PENDING);
	assert_int_equal(J(ctl, b1)->preemptions, 1);
	char want[64];
	snprintf(want, sizeof(want), "preempted by %s", x);
	assert_string_equal(why(ctl, b1), want);
	for (int k = 0; k < 2; k++)
		assert_int_equal(st(ctl, c[k]), GF_JOB_RUNNING);
	for (int k = 0; k < 4; k++)
		assert_int_equal(st(ctl, dd[k]), GF_JOB_RUNNING);
	expect_starts(&ch, "j4 j11"); /* the victim b1, then x */
	gf_ctl_changes_release(&ch);
	/* the victim is queued again, never lost; it runs when room comes */
	pass(ctl, 6000, NULL);
	assert_string_equal(why(ctl, b1), "n1 has 0 of 4 GPUs free");
	struct gf_err e;
	assert_int_equal(gf_ctl_finish(ctl, x, 0, 7000, &e), 0);
	pass(ctl, 7000, NULL);
	assert_int_equal(st(ctl, b1), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, b1)->attempts, 2);
	gf_ctl_free(ctl);
}

/* ---- backfill ---- */

/*
 * Node A (h100, 8 GPUs) and node B (a100, 8 GPUs).  At t=1000 R1 takes 4
 * GPUs of A with max runtime 100 s (ends by 101000) and RB all of B with
 * none.  At t=2000 the head H asks for 8 h100 GPUs: A has 4 free, so it
 * waits; releasing running jobs by end time, A is whole after R1: the
 * shadow is 101000.  Then:
 *   B1, 2 GPUs, 50 s: 2000 + 50000 = 52000 <= 101000: starts now;
 *   B2, 2 GPUs, 200 s: 202000 > 101000: waits, though A has room;
 *   B3, 2 GPUs, no max runtime: never backfills by time.
 * B is outside what H can use (a100): once RB ends (t=60000), B2 and B3
 * start there.  At t=101000 R1 and B1 are past their max runtimes, A is
 * whole, H starts exactly at the shadow: never delayed.
 */
static void test_backfill_never_delays(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	cfg->classes[0].preemptible = false;
	struct ndef d[] = { { "A", 8, "h100-80gb", 0, NULL },
			    { "B", 8, "a100-80gb", 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 2, NULL);
	struct gf_job *r1 = gpus("default", "batch", 1, 4);
	snprintf(r1->spec.gpu_model, GF_GPU_MODEL_MAX, "h100-80gb");
	r1->spec.max_runtime_s = 100;
	const char *R1 = submit(ctl, r1);
	struct gf_job *rb = gpus("default", "batch", 1, 8);
	snprintf(rb->spec.gpu_model, GF_GPU_MODEL_MAX, "a100-80gb");
	const char *RB = submit(ctl, rb);
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, R1), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, RB), GF_JOB_RUNNING);
	struct gf_job *h = gpus("default", "batch", 1, 8);
	snprintf(h->spec.gpu_model, GF_GPU_MODEL_MAX, "h100-80gb");
	const char *H = submit(ctl, h);
	int64_t max[3] = { 50, 200, 0 };
	const char *B[3];
	for (int k = 0; k < 3; k++) {
		struct gf_job *b = gpus("default", "batch", 1, 2);
		b->spec.max_runtime_s = max[k];
		B[k] = submit(ctl, b);
	}
	pass(ctl, 2000, NULL);
	assert_string_equal(why(ctl, H), "A has 4 of 8 GPUs free");
	assert_int_equal(st(ctl, B[0]), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, B[0])->place[0].node, 0);
	char want[96];
	snprintf(want, sizeof(want),
		 "reserved for %s (backfill cannot finish before it starts)",
		 H);
	assert_string_equal(why(ctl, B[1]), want);
	snprintf(want, sizeof(want),
		 "reserved for %s (no max runtime: cannot backfill)", H);
	assert_string_equal(why(ctl, B[2]), want);
	/* B1 gone early: 4 GPUs of A free, still nothing may take them */
	struct gf_err e;
	assert_int_equal(gf_ctl_finish(ctl, B[0], 0, 30000, &e), 0);
	pass(ctl, 30000, NULL);
	assert_int_equal(st(ctl, B[1]), GF_JOB_PENDING);
	assert_int_equal(st(ctl, B[2]), GF_JOB_PENDING);
	/* B freed: outside what H can use, B2 and B3 start there */
	assert_int_equal(gf_ctl_finish(ctl, RB, 0, 60000, &e), 0);
	pass(ctl, 60000, NULL);
	for (int k = 1; k < 3; k++) {
		assert_int_equal(st(ctl, B[k]), GF_JOB_RUNNING);
		assert_int_equal(J(ctl, B[k])->place[0].node, 1);
	}
	pass(ctl, 100999, NULL);
	assert_int_equal(st(ctl, H), GF_JOB_PENDING);
	pass(ctl, 101000, NULL);
	assert_int_equal(st(ctl, R1), GF_JOB_FAILED);
	assert_string_equal(why(ctl, R1), "max runtime of 100 s passed");
	assert_int_equal(st(ctl, H), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, H)->started_ms, 101000);
	gf_ctl_free(ctl);
}

/*
 * One node of 8 GPUs; R runs 4 GPUs without a max runtime.  The head H
 * (prod, 8 GPUs) waits for R, whose end is unknown: the shadow is
 * unknown, nothing backfills, whatever its max runtime.  (Batch is not
 * preemptible here.)
 */
static void test_backfill_unknown_shadow(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	cfg->classes[0].preemptible = false;
	cls_add(cfg, "prod", 100, false);
	struct ndef d[] = { { "A", 8, NULL, 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 1, NULL);
	submit(ctl, gpus("default", "batch", 1, 4));
	pass(ctl, 1000, NULL);
	const char *H = submit(ctl, gpus("default", "prod", 1, 8));
	struct gf_job *b = gpus("default", "prod", 1, 1);
	b->spec.max_runtime_s = 1;
	const char *B = submit(ctl, b);
	struct gf_job *low = gpus("default", "batch", 1, 1);
	low->spec.max_runtime_s = 1;
	const char *L = submit(ctl, low);
	pass(ctl, 2000, NULL);
	char want[128];
	snprintf(want, sizeof(want),
		 "reserved for %s (its start is unknown: running work has no "
		 "max runtime)",
		 H);
	assert_string_equal(why(ctl, B), want);
	snprintf(want, sizeof(want),
		 "behind higher priority work (%s waits for room)", H);
	assert_string_equal(why(ctl, L), want);
	const struct gf_job *q[4];
	assert_int_equal(gf_ctl_queue(ctl, q, 4), 3);
	assert_string_equal(q[0]->id, H);
	assert_string_equal(q[1]->id, B);
	assert_string_equal(q[2]->id, L);
	gf_ctl_free(ctl);
}

/* ---- admission ---- */

static void expect_admit(struct gf_ctl *ctl, struct gf_job *j, int code,
			 const char *msg)
{
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_ctl_admit(ctl, &j->spec, &e);
	if (rc != code)
		print_message("%s: %d %s\n", msg ? msg : "", rc, e.msg);
	assert_int_equal(rc, code);
	if (msg)
		assert_string_equal(e.msg, msg);
	gf_job_release(j);
	gf_free(j);
}

/*
 * Blocks 0 {n0, n1} and 1 {n2, n3} of 8 h100 GPUs, 128 cores; n2 has GPU
 * 0 in MIG mode (7 x 1g.10gb), so it can hold 7 whole GPUs.  Team q may
 * use 8 h100 GPUs; teams not listed are refused (open_teams off).
 */
static void test_never(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	cfg->open_teams = false;
	cfg->nblocks = 2;
	team_add(cfg, "default", 1);
	quota(team_add(cfg, "q", 1), false, "h100-80gb", 8);
	struct ndef d[] = { { "n0", 8, NULL, 0, "zone=a" },
			    { "n1", 8, NULL, 0, "zone=a" },
			    { "n2", 8, NULL, 1, "zone=b" },
			    { "n3", 8, NULL, 1, "zone=b" } };
	struct gf_ctl_node *nd = nodes_of(d, 4);
	for (int s = 0; s < 7; s++)
		mig_add(&nd[2], 0, "1g.10gb", s);
	struct gf_ctl *ctl = ctl_new(cfg, d, 4, nd);
	gf_free(nd);
	/* block 0 holds 2 replicas of 8 GPUs, block 1 only 1 (n2 has 7) */
	expect_admit(ctl, gpus("default", "batch", 2, 8), 0, NULL);
	expect_admit(ctl, gpus("default", "batch", 3, 8), GF_ENEVER,
		     "gang of 3 replicas does not fit any block: the "
		     "largest holds 2");
	struct gf_job *j = gpus("default", "batch", 1, 1);
	snprintf(j->spec.gpu_model, GF_GPU_MODEL_MAX, "b200");
	expect_admit(ctl, j, GF_ENEVER, "no node has GPU model 'b200'");
	j = job("default", "batch");
	j->spec.gpu_milli = 1500;
	expect_admit(ctl, j, GF_ENEVER,
		     "a share of 1500 milli-GPU can never be placed: a share "
		     "is of one GPU (at most 1000)");
	expect_admit(ctl, gpus("default", "batch", 1, 17), GF_ENEVER,
		     "17 GPUs per replica can never be placed: a node has at "
		     "most 16");
	expect_admit(ctl, gpus("default", "batch", 1, 9), GF_ENEVER,
		     "no node can hold one replica (9 GPUs, 1000 milli-CPU, "
		     "1024 MiB)");
	expect_admit(ctl, gpus("q", "batch", 2, 8), GF_ENEVER,
		     "team q's quota allows at most 8 GPUs of one model, the "
		     "job asks for 16");
	j = job("default", "batch");
	snprintf(j->spec.mig_profile, GF_MIG_PROFILE_MAX, "3g.40gb");
	expect_admit(ctl, j, GF_ENEVER, "no node offers MIG profile '3g.40gb'");
	j = job("default", "batch");
	snprintf(j->spec.mig_profile, GF_MIG_PROFILE_MAX, "1g.10gb");
	expect_admit(ctl, j, 0, NULL);
	j = job("default", "batch");
	snprintf(j->spec.mig_profile, GF_MIG_PROFILE_MAX, "1g.10gb");
	snprintf(j->spec.node_selector, GF_SELECTOR_MAX, "zone=a");
	expect_admit(ctl, j, GF_ENEVER,
		     "no node matching zone=a can hold one replica (a "
		     "1g.10gb instance, 1000 milli-CPU, 1024 MiB)");
	j = job("default", "batch");
	snprintf(j->spec.node_selector, GF_SELECTOR_MAX, "zone=mars");
	expect_admit(ctl, j, GF_ENEVER,
		     "no node matches node_selector 'zone=mars'");
	j = job("default", "batch");
	j->spec.cpu_milli = 200000;
	expect_admit(ctl, j, GF_ENEVER,
		     "no node can hold one replica (no GPU, 200000 milli-CPU, "
		     "1024 MiB)");
	expect_admit(ctl, gpus("nobody", "batch", 1, 1), GF_EAUTH,
		     "'team': team 'nobody' is not in the config");
	expect_admit(ctl, gpus("default", "gold", 1, 1), GF_EINVAL,
		     "'class': no class 'gold'");
	j = job("default", "batch");
	j->spec.gpu_milli = -1;
	expect_admit(ctl, j, GF_EINVAL,
		     "'gpu_milli': expected 1 to 1000, got -1");
	/* a 7-GPU job fits n2 beside its MIG GPU; 4 x 7 fits nowhere as a
	 * gang of one block */
	expect_admit(ctl, gpus("default", "batch", 3, 7), GF_ENEVER, NULL);
	gf_ctl_free(ctl);
}

/* ---- the state machine ---- */

static void test_state_machine(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	cfg->classes[0].max_attempts = 2;
	struct ndef d[] = { { "n0", 8, NULL, 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 1, NULL);
	struct gf_err e;
	const char *a = submit(ctl, gpus("default", "batch", 1, 2));
	const char *b = submit(ctl, gpus("default", "batch", 1, 2));
	const char *c = submit(ctl, gpus("default", "batch", 1, 2));
	const char *p = submit(ctl, gpus("default", "batch", 1, 8));
	/* a pending job cannot finish; a pending job cancels */
	assert_int_equal(gf_ctl_finish(ctl, p, 0, 500, &e), GF_ECONFLICT);
	assert_int_equal(gf_ctl_cancel(ctl, p, 500, &e), 0);
	assert_int_equal(st(ctl, p), GF_JOB_CANCELLED);
	assert_int_equal(J(ctl, p)->ended_ms, 500);
	assert_int_equal(gf_ctl_cancel(ctl, p, 600, &e), GF_ECONFLICT);
	assert_string_equal(e.msg, "job j4 is cancelled");
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, a), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, a)->attempts, 1);
	assert_int_equal(gf_ctl_finish(ctl, a, 0, 2000, &e), 0);
	assert_int_equal(st(ctl, a), GF_JOB_SUCCEEDED);
	assert_null(J(ctl, a)->place);
	/* a failure counts (issue 19): with max_attempts 2 the first sends
	 * it back to the queue, with nothing to show as its start */
	assert_int_equal(gf_ctl_finish(ctl, b, 3, 2000, &e), 0);
	assert_int_equal(st(ctl, b), GF_JOB_PENDING);
	assert_int_equal(J(ctl, b)->failures, 1);
	assert_int_equal(J(ctl, b)->started_ms, 0);
	assert_int_equal(J(ctl, b)->exit_code, 3);
	assert_string_equal(why(ctl, b),
			    "exited with code 3 (failure 1 of 2 allowed)");
	assert_int_equal(gf_ctl_finish(ctl, b, 0, 2000, &e), GF_ECONFLICT);
	assert_int_equal(gf_ctl_cancel(ctl, a, 2000, &e), GF_ECONFLICT);
	assert_int_equal(gf_ctl_requeue(ctl, a, NULL, 2000, &e), GF_ECONFLICT);
	/* requeues by the infrastructure never count: c put back three
	 * times runs a fourth */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(
			gf_ctl_requeue(ctl, c, "node n0 lost", 2000 + k, &e),
			0);
		assert_int_equal(st(ctl, c), GF_JOB_PENDING);
		assert_string_equal(why(ctl, c), "node n0 lost");
		assert_int_equal(J(ctl, c)->started_ms, 0);
		pass(ctl, 3000 + k, NULL);
		assert_int_equal(st(ctl, c), GF_JOB_RUNNING);
		assert_int_equal(J(ctl, c)->started_ms, 3000 + k);
	}
	assert_int_equal(J(ctl, c)->attempts, 4);
	assert_int_equal(J(ctl, c)->requeues, 3);
	assert_int_equal(J(ctl, c)->failures, 0);
	assert_int_equal(J(ctl, c)->preemptions, 0);
	/* b ran again; its second failure is its last */
	assert_int_equal(st(ctl, b), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, b)->attempts, 2);
	assert_int_equal(gf_ctl_finish(ctl, b, 3, 4000, &e), 0);
	assert_int_equal(st(ctl, b), GF_JOB_FAILED);
	assert_int_equal(J(ctl, b)->failures, 2);
	assert_string_equal(why(ctl, b),
			    "exited with code 3 (after 2 failures)");
	assert_int_equal(gf_ctl_finish(ctl, c, 0, 4000, &e), 0);
	/* a running job cancels, its GPUs come back */
	const char *r = submit(ctl, gpus("default", "batch", 1, 8));
	pass(ctl, 5000, NULL);
	assert_int_equal(st(ctl, r), GF_JOB_RUNNING);
	assert_int_equal(gf_ctl_cancel(ctl, r, 6000, &e), 0);
	struct gf_ctl_stats s;
	gf_ctl_stats(ctl, &s);
	assert_int_equal(s.gpus_alloc_milli, 0);
	assert_int_equal(s.running, 0);
	/* unknown ids, bad times, ids twice */
	assert_int_equal(gf_ctl_cancel(ctl, "j99", 6000, &e), GF_ENOTFOUND);
	assert_int_equal(gf_ctl_finish(ctl, "", 0, 6000, &e), GF_ENOTFOUND);
	const char *q = submit(ctl, gpus("default", "batch", 1, 1));
	assert_int_equal(gf_ctl_cancel(ctl, q, 0, &e), GF_EINVAL);
	assert_int_equal(gf_ctl_schedule(ctl, 0, NULL), GF_EINVAL);
	struct gf_job *dup = gpus("default", "batch", 1, 1);
	snprintf(dup->id, sizeof(dup->id), "%s", q);
	dup->seq = J(ctl, q)->seq;
	assert_int_equal(gf_ctl_add(ctl, dup, &e), GF_ECONFLICT);
	dup->seq = 0; /* not a job */
	assert_int_equal(gf_ctl_add(ctl, dup, &e), GF_EINVAL);
	gf_job_release(dup);
	gf_free(dup);
	check(ctl);
	/* listing in submission order */
	assert_int_equal(gf_ctl_njobs(ctl), 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(gf_ctl_job_at(ctl, i)->seq,
				 J(ctl, a)->seq + (uint64_t)i);
	gf_ctl_free(ctl);
}

/* ---- max runtime ---- */

static void test_max_runtime(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	cls_add(cfg, "short", 0, true)->max_runtime_s = 10;
	struct ndef d[] = { { "n0", 8, NULL, 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 1, NULL);
	const char *a = submit(ctl, gpus("default", "short", 1, 1));
	struct gf_job *b = gpus("default", "short", 1, 1);
	b->spec.max_runtime_s = 5; /* the job's own beats its class's */
	const char *bb = submit(ctl, b);
	const char *c = submit(ctl, gpus("default", "batch", 1, 1));
	pass(ctl, 1000, NULL);
	struct gf_ctl_changes ch = { 0 };
	pass(ctl, 5999, &ch);
	assert_int_equal(ch.n, 0);
	pass(ctl, 6000, &ch);
	expect_starts(&ch, bb);
	assert_int_equal(st(ctl, bb), GF_JOB_FAILED);
	assert_string_equal(why(ctl, bb), "max runtime of 5 s passed");
	pass(ctl, 10999, &ch);
	assert_int_equal(st(ctl, a), GF_JOB_RUNNING);
	pass(ctl, 11000, &ch);
	assert_int_equal(st(ctl, a), GF_JOB_FAILED);
	assert_int_equal(J(ctl, a)->ended_ms, 11000);
	pass(ctl, 1000000, &ch);
	assert_int_equal(st(ctl, c), GF_JOB_RUNNING); /* no limit */
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

/* ---- restore ---- */

static struct gf_job *clone(const struct gf_job *j)
{
	struct gf_job *k = gf_calloc(1, sizeof(*k));
	*k = *j;
	gf_job_spec_copy(&k->spec, &j->spec);
	if (j->place) {
		k->place =
			gf_calloc((size_t)j->spec.replicas, sizeof(*k->place));
		memcpy(k->place, j->place,
		       (size_t)j->spec.replicas * sizeof(*k->place));
	}
	return k;
}

static struct gf_ctl *restore_cluster(void)
{
	struct gf_ctl_config *cfg = cfg_new();
	cfg->nblocks = 2;
	struct ndef d[] = { { "n0", 8, NULL, 0, NULL },
			    { "n1", 8, NULL, 0, NULL },
			    { "n2", 8, NULL, 1, NULL } };
	struct gf_ctl_node *nd = nodes_of(d, 3);
	for (int s = 0; s < 7; s++)
		mig_add(&nd[2], 0, "1g.10gb", s);
	struct gf_ctl *ctl = ctl_new(cfg, d, 3, nd);
	gf_free(nd);
	return ctl;
}

/*
 * Run whole, share, MIG and gang jobs on one core; a restart adds copies
 * of every job to a fresh core over the same nodes: the running ones
 * land on the same GPUs (the same figures), the rest keep their states.
 * A running job whose GPUs are taken, or whose node is gone, goes back
 * to PENDING with the reason, and the next pass reports it.
 */
static void test_restore(void **state)
{
	(void)state;
	struct gf_ctl *a = restore_cluster();
	submit(a, gpus("default", "batch", 1, 3));
	submit(a, gpus("default", "batch", 2, 4));
	struct gf_job *s = job("default", "batch");
	s->spec.gpu_milli = 300;
	submit(a, s);
	struct gf_job *m = job("default", "batch");
	snprintf(m->spec.mig_profile, GF_MIG_PROFILE_MAX, "1g.10gb");
	submit(a, m);
	const char *done = submit(a, gpus("default", "batch", 1, 1));
	submit(a, gpus("default", "batch", 1, 8));
	pass(a, 1000, NULL);
	struct gf_err e;
	assert_int_equal(gf_ctl_finish(a, done, 0, 1500, &e), 0);
	struct gf_ctl *b = restore_cluster();
	for (int i = 0; i < gf_ctl_njobs(a); i++) {
		assert_int_equal(gf_ctl_add(b, clone(gf_ctl_job_at(a, i)), &e),
				 0);
		check(b);
	}
	struct gf_ctl_stats sa, sb;
	gf_ctl_stats(a, &sa);
	gf_ctl_stats(b, &sb);
	assert_true(sa.running >= 4);
	assert_int_equal(sb.running, sa.running);
	assert_int_equal(sb.pending, sa.pending);
	assert_int_equal(sb.gpus_alloc_milli, sa.gpus_alloc_milli);
	assert_int_equal(sb.mig_used, 1);
	for (int i = 0; i < gf_ctl_njobs(a); i++) {
		const struct gf_job *x = gf_ctl_job_at(a, i);
		const struct gf_job *y = gf_ctl_job_at(b, i);
		assert_string_equal(x->id, y->id);
		assert_int_equal(x->state, y->state);
		for (int r = 0; x->place && r < x->spec.replicas; r++)
			assert_memory_equal(&x->place[r], &y->place[r],
					    sizeof(x->place[r]));
	}
	/* the same placement again under another id: taken */
	const char *node0 = gf_ctl_job_at(a, 0)->place[0].node_name;
	struct gf_job *twice = clone(gf_ctl_job_at(a, 0));
	twice->seq = 100;
	snprintf(twice->id, sizeof(twice->id), "j100");
	assert_int_equal(gf_ctl_add(b, twice, &e), 0);
	assert_int_equal(st(b, "j100"), GF_JOB_PENDING);
	char want[128];
	snprintf(want, sizeof(want),
		 "restored placement no longer fits: replica 0 no longer "
		 "fits on %s",
		 node0);
	assert_string_equal(why(b, "j100"), want);
	struct gf_job *gone = clone(gf_ctl_job_at(a, 0));
	gone->seq = 101;
	snprintf(gone->id, sizeof(gone->id), "j101");
	snprintf(gone->place[0].node_name, GF_JOB_NODE_MAX, "zz");
	assert_int_equal(gf_ctl_add(b, gone, &e), 0);
	assert_string_equal(why(b, "j101"), "restored placement no longer "
					    "fits: node zz is gone");
	check(b);
	struct gf_ctl_changes ch = { 0 };
	assert_int_equal(gf_ctl_schedule(b, 2000, &ch), 0);
	assert_true(ch.n >= 2);
	assert_string_equal(ch.ids[0], "j100");
	assert_string_equal(ch.ids[1], "j101");
	gf_ctl_changes_release(&ch);
	check(b);
	gf_ctl_free(a);
	gf_ctl_free(b);
}

/* ---- gf_ctl_new refusals ---- */

static void expect_new(struct gf_ctl_config *cfg, const struct ndef *d, int n,
		       struct gf_ctl_node *nd, const char *msg)
{
	struct gf_cluster *c = cluster_of(d, n);
	struct gf_ctl *ctl;
	struct gf_err e;
	assert_int_equal(gf_ctl_new(cfg, c, nd, &ctl, &e), GF_EINVAL);
	assert_null(ctl);
	assert_string_equal(e.msg, msg);
	for (int i = 0; i < c->n; i++) /* nothing changed, nothing taken */
		for (int g = 0; g < c->nodes[i].ngpus; g++)
			assert_int_equal(c->nodes[i].gpu_left[g], 1000);
	gf_cluster_release(c);
	gf_free(c);
}

static void test_new_refusals(void **state)
{
	(void)state;
	struct ndef d[] = { { "n0", 8, "G2", 0, NULL },
			    { "n1", 8, "h100-80gb", 0, NULL } };
	struct gf_ctl_config *cfg = cfg_new();
	struct gf_ctl_node *nd = nodes_of(d, 2);
	mig_add(&nd[0], 0, "1g.10gb", 0);
	expect_new(cfg, d, 2, nd,
		   "node n0: MIG instances on model 'G2', "
		   "which has no MIG");
	memset(nd, 0, 2 * sizeof(*nd));
	mig_add(&nd[1], 0, "1g.5gb", 0);
	expect_new(cfg, d, 2, nd,
		   "node n1: MIG profile '1g.5gb' is not one of h100-80gb's");
	memset(nd, 0, 2 * sizeof(*nd));
	mig_add(&nd[1], 3, "4g.40gb", 0);
	mig_add(&nd[1], 3, "3g.40gb", 0);
	expect_new(cfg, d, 2, nd,
		   "node n1: GPU 3: 3g.40gb at slice 0 overlaps another "
		   "instance");
	memset(nd, 0, 2 * sizeof(*nd));
	mig_add(&nd[1], 8, "1g.10gb", 0);
	expect_new(cfg, d, 2, nd,
		   "node n1: MIG instance on GPU 8, the node has 8");
	memset(nd, 0, 2 * sizeof(*nd));
	nd[1].block = 1;
	expect_new(cfg, d, 2, nd, "node n1: block 1 does not exist (1 blocks)");
	memset(nd, 0, 2 * sizeof(*nd));
	snprintf(nd[0].labels, sizeof(nd[0].labels), "a=b,,c");
	expect_new(cfg, d, 2, nd,
		   "node n0: labels: expected k=v,k=v at byte "
		   "4 (keys and values: letters, digits, '.', "
		   "'_', '-', '/')");
	memset(nd, 0, 2 * sizeof(*nd));
	snprintf(cfg->classes[0].name, GF_CLASS_NAME_MAX, "bulk");
	expect_new(cfg, d, 2, nd, "no class 'batch' (the default class)");
	snprintf(cfg->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	struct gf_ctl_team *t = team_add(cfg, "a", 1);
	quota(t, false, "h100-80gb", 4);
	quota(t, false, "H100-80GB", 8);
	expect_new(cfg, d, 2, nd, "team a: quota for 'H100-80GB' twice");
	gf_free(nd);
	gf_free(cfg);
}

/* The config's teams and classes, entry by entry: its name (well formed,
 * not listed before), then its own fields; the first error wins. */
static void test_new_lists(void **state)
{
	(void)state;
	struct ndef d[] = { { "n0", 8, "h100-80gb", 0, NULL } };
	struct gf_ctl_node *nd = nodes_of(d, 1);
	struct gf_ctl_config *cfg = cfg_new();
	team_add(cfg, "a", 1);
	team_add(cfg, "a", 1);
	expect_new(cfg, d, 1, nd, "team a listed twice");
	snprintf(cfg->teams[1].name, GF_TEAM_NAME_MAX, "b c");
	expect_new(cfg, d, 1, nd,
		   "team 1: a name of letters, digits, '.', '_', '-'");
	cfg->teams[0].milli = -2; /* team 0's quota before team 1's name */
	expect_new(cfg, d, 1, nd,
		   "team a: share quota -2 (milli-GPU, -1 unlimited)");
	gf_free(cfg);

	cfg = cfg_new();
	cls_add(cfg, "x", 1, false)->max_attempts = -1;
	char msg[128];
	snprintf(msg, sizeof(msg),
		 "class x: max runtime 0 to %lld s, max attempts >= 0",
		 (long long)GF_JOB_RUNTIME_MAX_S);
	expect_new(cfg, d, 1, nd, msg);
	snprintf(cfg->classes[1].name, GF_CLASS_NAME_MAX, "batch");
	expect_new(cfg, d, 1, nd, "class batch listed twice");
	snprintf(cfg->classes[0].name, GF_CLASS_NAME_MAX, "bulk");
	cfg->classes[1].name[0] = '\0'; /* a name error before 'no batch' */
	expect_new(cfg, d, 1, nd,
		   "class 1: a name of letters, digits, '.', '_', '-'");
	gf_free(cfg);
	gf_free(nd);
}

/* ---- the typical mix ---- */

static void test_typical_refresh(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	struct ndef d[] = { { "n0", 8, NULL, 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg, d, 1, NULL);
	/* the default mix, a prior of 16 arrivals: 6 shapes cover 95 % */
	assert_int_equal(ctl->typ_base, (int64_t)GF_MIX_PRIOR);
	assert_int_equal(ctl->ntyp, 6);
	assert_int_equal(ctl->typ[0].gpu_milli, 1000);
	for (int k = 0; k < 70; k++) {
		struct gf_job *j = job("default", "batch");
		j->spec.gpu_milli = 250;
		submit(ctl, j);
	}
	pass(ctl, 1000, NULL);
	/* learned from the 70 arrivals, the prior (16, decayed) beside:
	 * 250 milli first, at 70 / (70 + 16 d^70) of the weight */
	assert_int_equal(ctl->typ_base, 85);
	assert_int_equal(ctl->typ[0].gpu_milli, 250);
	assert_true(ctl->ntyp > 1);
	assert_int_equal(ctl->nmix, 8);
	gf_ctl_free(ctl);
}

/* ---- randomized ---- */

static const char *const teams[] = { "a", "b", "c" };
static const char *const classes[] = { "batch", "prod", "low" };
static const char *const profiles[] = { "1g.10gb", "3g.40gb", "4g.40gb" };

static struct gf_ctl *random_cluster(enum gf_policy policy)
{
	struct gf_ctl_config *cfg = cfg_new();
	cfg->policy = policy;
	cfg->nblocks = 4;
	cfg->classes[0].max_attempts = 2;
	cls_add(cfg, "prod", 100, false);
	cls_add(cfg, "low", -10, true)->max_runtime_s = 50;
	struct gf_ctl_team *a = team_add(cfg, "a", 1);
	quota(a, false, "h100-80gb", 16);
	quota(a, false, "*", 24);
	quota(a, true, "1g.10gb", 4);
	a->milli = 3000;
	team_add(cfg, "b", 2);
	struct ndef d[16];
	char names[16][16];
	for (int i = 0; i < 16; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d", i);
		d[i] = (struct ndef){ names[i], i == 15 ? 4 : 8,
				      i % 3 ? "h100-80gb" : "a100-80gb", i / 4,
				      i % 2 ? "zone=a" : "zone=b" };
	}
	struct gf_ctl_node *nd = nodes_of(d, 16);
	for (int s = 0; s < 7; s++)
		mig_add(&nd[1], 0, "1g.10gb", s);
	mig_add(&nd[1], 1, "3g.40gb", 0);
	mig_add(&nd[1], 1, "3g.40gb", 4);
	mig_add(&nd[3], 7, "4g.40gb", 0);
	for (int s = 4; s < 7; s++)
		mig_add(&nd[3], 7, "1g.10gb", s);
	struct gf_ctl *ctl = ctl_new(cfg, d, 16, nd);
	gf_free(nd);
	return ctl;
}

static struct gf_job *random_job(struct gf_rng *r)
{
	struct gf_job *j =
		job(teams[gf_rng_below(r, 3)], classes[gf_rng_below(r, 3)]);
	struct gf_job_spec *s = &j->spec;
	switch (gf_rng_below(r, 5)) {
	case 0:
	case 1:
		s->gpus = 1 + (int)gf_rng_below(r, 8);
		break;
	case 2:
		s->gpu_milli = 100 + 100 * (int)gf_rng_below(r, 9);
		break;
	case 3:
		snprintf(s->mig_profile, sizeof(s->mig_profile), "%s",
			 profiles[gf_rng_below(r, 3)]);
		break;
	default:
		break;
	}
	if (gf_rng_below(r, 6) == 0)
		s->replicas = 2 + (int)gf_rng_below(r, 4);
	if (s->gpus && gf_rng_below(r, 4) == 0)
		snprintf(s->gpu_model, sizeof(s->gpu_model), "%s",
			 gf_rng_below(r, 2) ? "h100-80gb" : "a100-80gb");
	if (gf_rng_below(r, 5) == 0)
		snprintf(s->node_selector, sizeof(s->node_selector), "zone=%c",
			 gf_rng_below(r, 2) ? 'a' : 'b');
	if (gf_rng_below(r, 2))
		s->max_runtime_s = 1 + (int64_t)gf_rng_below(r, 100);
	s->cpu_milli = 1000 * (int)gf_rng_below(r, 16);
	s->memory_mib = 1024 * (int64_t)gf_rng_below(r, 64);
	return j;
}

/* A job in the given state, at random, or NULL. */
static const char *pick(struct gf_ctl *ctl, struct gf_rng *r, int state)
{
	int n = gf_ctl_njobs(ctl);
	if (n == 0)
		return NULL;
	int start = (int)gf_rng_below(r, (uint64_t)n);
	for (int k = 0; k < n; k++) {
		const struct gf_job *j = gf_ctl_job_at(ctl, (start + k) % n);
		if (state < 0 || (int)j->state == state)
			return j->id;
	}
	return NULL;
}

static void random_run(enum gf_policy policy, int steps, uint64_t seed)
{
	struct gf_ctl *ctl = random_cluster(policy);
	struct gf_rng r;
	gf_rng_seed(&r, seed);
	int64_t now = 1000;
	int added = 0, started = 0, preempted = 0;
	struct gf_ctl_changes ch = { 0 };
	struct gf_err e;
	for (int step = 0; step < steps; step++) {
		uint64_t op = gf_rng_below(&r, 20);
		now += (int64_t)gf_rng_below(&r, 4000);
		if (op < 8) {
			struct gf_job *j = random_job(&r);
			int rc = gf_ctl_admit(ctl, &j->spec, &e);
			assert_true(rc == 0 || rc == GF_ENEVER);
			if (rc == 0) {
				assert_int_equal(gf_ctl_add(ctl, j, &e), 0);
				added++;
			} else {
				gf_job_release(j);
				gf_free(j);
			}
		} else if (op < 13) {
			pass(ctl, now, &ch);
			for (int i = 0; i < ch.n; i++) {
				const struct gf_job *j = J(ctl, ch.ids[i]);
				started += j->state == GF_JOB_RUNNING;
				preempted += j->state == GF_JOB_PENDING;
			}
		} else if (op < 16) {
			const char *id = pick(ctl, &r, GF_JOB_RUNNING);
			if (id)
				assert_int_equal(
					gf_ctl_finish(ctl, id,
						      (int)gf_rng_below(&r, 2),
						      now, &e),
					0);
		} else if (op < 18) {
			const char *id = pick(ctl, &r, -1);
			if (id) {
				bool final = gf_job_is_final(st(ctl, id));
				assert_int_equal(
					gf_ctl_cancel(ctl, id, now, &e),
					final ? GF_ECONFLICT : 0);
			}
		} else {
			const char *id = pick(ctl, &r, GF_JOB_RUNNING);
			if (id)
				assert_int_equal(
					gf_ctl_requeue(ctl, id, NULL, now, &e),
					0);
		}
		check(ctl);
		assert_int_equal(gf_ctl_njobs(ctl), added);
	}
	print_message("%s: %d jobs, %d starts, %d preempted\n",
		      gf_policy_name(policy), added, started, preempted);
	assert_true(started > 100);
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

static void test_random(void **state)
{
	(void)state;
	random_run(GF_POLICY_FGD, 3000, 42);
	random_run(GF_POLICY_RANDOM, 1500, 7);
	random_run(GF_POLICY_BESTFIT, 1500, 9);
	random_run(GF_POLICY_FGDPLUS, 1500, 43);
}

/* ---- listing (jobs_list.c, issue 21) ---- */

static bool ran_on_n1(const struct gf_job *j, const char *node, void *arg)
{
	(void)arg; /* the history says: j1 once ran on n1 */
	return !strcmp(j->id, "j1") && !strcmp(node, "n1");
}

/* The ids a filter lists, "j3 j1" (limit 10), and whether more. */
static const char *listed(const struct gf_ctl *ctl,
			  const struct gf_job_filter *f, int limit, bool *more)
{
	static char out[128];
	const struct gf_job *v[16];
	int n = gf_ctl_jobs_list(ctl, f, v, limit, more);
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s",
					i ? " " : "", v[i]->id);
	return out;
}

static void test_listing(void **state)
{
	(void)state;
	const struct ndef d[] = { { "n0", 4, NULL, 0, NULL },
				  { "n1", 4, NULL, 0, NULL } };
	struct gf_ctl *ctl = ctl_new(cfg_new(), d, 2, NULL);
	const char *names[] = { "train-a", "eval", "train-b", "big", "tiny" };
	const char *tm[] = { "a", "b", "a", "b", "a" };
	const int ngpus[] = { 4, 2, 2, 8, 1 };
	for (int i = 0; i < 5; i++) {
		struct gf_job *j = gpus(tm[i], "batch", 1, ngpus[i]);
		snprintf(j->spec.name, sizeof(j->spec.name), "%s", names[i]);
		j->submitted_ms = 1000 * (i + 1);
		if (i == 3) { /* big: 2 replicas of 4 */
			j->spec.replicas = 2;
			j->spec.gpus = 4;
		}
		submit(ctl, j);
	}
	pass(ctl, 10000, NULL);
	/* j1 and j2 start (fair share between the teams), j4 (2x4) waits
	 * at the head, the others behind it */
	assert_int_equal(st(ctl, "j1"), GF_JOB_RUNNING);
	struct gf_err e;
	assert_int_equal(gf_ctl_finish(ctl, "j1", 0, 20000, &e), 0);
	assert_int_equal(gf_ctl_cancel(ctl, "j2", 30000, &e), 0);
	pass(ctl, 40000, NULL); /* something runs again */
	bool more;
	struct gf_job_filter f = { .desc = false };
	assert_string_equal(listed(ctl, &f, 10, &more), "j1 j2 j3 j4 j5");
	assert_false(more);
	f.desc = true; /* newest first, a page of 2, the next from j4 */
	assert_string_equal(listed(ctl, &f, 2, &more), "j5 j4");
	assert_true(more);
	f.before_seq = 4;
	assert_string_equal(listed(ctl, &f, 2, &more), "j3 j2");
	assert_true(more);
	f.before_seq = 2;
	assert_string_equal(listed(ctl, &f, 2, &more), "j1");
	assert_false(more);
	f.before_seq = 0;
	/* states, any case, by commas */
	assert_int_equal(gf_job_states_parse("succeeded,CANCELLED", &f.states),
			 0);
	assert_string_equal(listed(ctl, &f, 10, &more), "j2 j1");
	assert_int_equal(gf_job_states_parse("Pending", &f.states), 0);
	assert_int_equal(f.states, 1u << GF_JOB_PENDING);
	unsigned bad;
	assert_int_equal(gf_job_states_parse("pending,runing", &bad),
			 GF_EINVAL);
	assert_int_equal(gf_job_states_parse("", &bad), GF_EINVAL);
	assert_int_equal(gf_job_states_parse("pending,", &bad), GF_EINVAL);
	assert_int_equal(gf_job_states_parse(",pending", &bad), GF_EINVAL);
	f.states = 0;
	/* name pattern, team */
	f.name = "train*";
	assert_string_equal(listed(ctl, &f, 10, &more), "j3 j1");
	f.team = "a";
	f.name = NULL;
	assert_string_equal(listed(ctl, &f, 10, &more), "j5 j3 j1");
	f.team = NULL;
	/* node: where a job runs now; j1 only by its history */
	const struct gf_job *r = NULL;
	for (int i = 0; i < gf_ctl_njobs(ctl) && !r; i++)
		if (gf_ctl_job_at(ctl, i)->state == GF_JOB_RUNNING)
			r = gf_ctl_job_at(ctl, i);
	assert_non_null(r);
	f.node = r->place[0].node_name;
	const char *got = listed(ctl, &f, 10, &more);
	assert_non_null(strstr(got, r->id));
	assert_null(strstr(got, "j1"));
	f.node = "n1";
	f.ran_on = ran_on_n1;
	assert_non_null(strstr(listed(ctl, &f, 10, &more), "j1"));
	f.node = "n9";
	assert_string_equal(listed(ctl, &f, 10, &more), "");
	f.node = NULL;
	/* window: j1 ended at 20 s, j2 at 30 s; pending/running always in */
	f.since_ms = 25000;
	assert_string_equal(listed(ctl, &f, 10, &more), "j5 j4 j3 j2");
	f.since_ms = 0;
	f.until_ms = 2500; /* submitted by 2.5 s: j1, j2 */
	assert_string_equal(listed(ctl, &f, 10, &more), "j2 j1");
	gf_ctl_free(ctl);
}

/* Times a listing takes: ISO-8601 and times ago. */
static void test_list_times(void **state)
{
	(void)state;
	int64_t t, now = 1796205600000;
	assert_int_equal(gf_job_time_parse("2026-12-02T10:00:00Z", 0, &t), 0);
	assert_int_equal(t, 1796205600000);
	assert_int_equal(gf_job_time_parse("2026-12-02T10:00", 0, &t), 0);
	assert_int_equal(t, 1796205600000); /* UTC without a zone */
	assert_int_equal(
		gf_job_time_parse("2026-12-02 10:00:00.5+01:00", 0, &t), 0);
	assert_int_equal(t, 1796202000500);
	assert_int_equal(gf_job_time_parse("2024-02-29", 0, &t), 0);
	assert_int_equal(t, 1709164800000);
	assert_int_equal(gf_job_time_parse("2h", now, &t), 0);
	assert_int_equal(t, now - 7200000);
	assert_int_equal(gf_job_time_parse("1d12h", now, &t), 0);
	assert_int_equal(t, now - 36 * 3600000LL);
	assert_int_equal(gf_job_time_parse("90s", now, &t), 0);
	assert_int_equal(t, now - 90000);
	assert_int_equal(gf_job_time_parse("now", now, &t), 0);
	assert_int_equal(t, now);
	const char *bad[] = { "",
			      "2h5",
			      "h",
			      "2x",
			      "2025-02-29",
			      "2026-13-01",
			      "2026-12-02T25:00",
			      "2026-12-02T10:00+1",
			      "1700000000",
			      "yesterday" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gf_job_time_parse(bad[i], now, &t) != GF_EINVAL)
			fail_msg("'%s' taken", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_by_model),
		cmocka_unit_test(test_quota_by_mig_profile),
		cmocka_unit_test(test_quota_by_share),
		cmocka_unit_test(test_fair_share),
		cmocka_unit_test(test_gang_one_block),
		cmocka_unit_test(test_gang_block_order),
		cmocka_unit_test(test_preempt_fewest),
		cmocka_unit_test(test_backfill_never_delays),
		cmocka_unit_test(test_backfill_unknown_shadow),
		cmocka_unit_test(test_never),
		cmocka_unit_test(test_state_machine),
		cmocka_unit_test(test_max_runtime),
		cmocka_unit_test(test_restore),
		cmocka_unit_test(test_new_refusals),
		cmocka_unit_test(test_new_lists),
		cmocka_unit_test(test_typical_refresh),
		cmocka_unit_test(test_listing),
		cmocka_unit_test(test_list_times),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
