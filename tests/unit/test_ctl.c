/*
 * test_ctl.c - the scheduling core (ctl.h) on small clusters whose
 * answers are derived by hand in the comments: typed quotas (by model,
 * by MIG profile, by share), fair share between two teams (the order of
 * starts), gangs inside one block, preemption with the fewest victims,
 * backfill that never delays the head job, GF_ENEVER on every
 * never-placeable request.  test_ctl_life.c has a job's life (the
 * state machine, max runtime, restore), config checks, the typical mix,
 * listing and the randomized run; ctl_build.h the builders both use.
 */
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>
#include <gpufleet/rng.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/typical.h"
#include "ctl_build.h"

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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
