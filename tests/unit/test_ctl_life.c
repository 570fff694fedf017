/*
 * test_ctl_life.c - the scheduling core (ctl.h), a job's life on small
 * clusters whose answers are derived by hand in the comments: the state
 * machine and its refusals, max runtime, restore of running jobs;
 * gf_ctl_new's config checks; the typical mix refreshed; listing; then
 * a randomized run checked (gf_ctl_check) after every step.
 * ctl_build.h has the builders (shared with test_ctl.c).
 */
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>
#include <gpufleet/rng.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/typical.h"
#include "ctl_build.h"

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
		assert_int_equal(
			gf_ctl_add(b, job_clone(gf_ctl_job_at(a, i)), &e), 0);
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
	struct gf_job *twice = job_clone(gf_ctl_job_at(a, 0));
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
	struct gf_job *gone = job_clone(gf_ctl_job_at(a, 0));
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
