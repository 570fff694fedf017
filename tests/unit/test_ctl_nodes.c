/*
 * test_ctl_nodes.c - the scheduling core (ctl.h) with nodes that come,
 * change and get sick at run time, on small clusters whose answers are
 * derived by hand in the comments: nodes joining an empty core one by
 * one (jobs wait, then start on the right node; a gang waits for its
 * block); a node not ready (exactly its jobs requeued, attempts counted,
 * a gang whole, nothing new there until ready again); unhealthy GPUs
 * (whole, shares, MIG instances); a known node updated (labels, block,
 * MIG layout, refusals, shape); a controller restart (nodes waiting for
 * their agents keep the jobs restored onto them); GPU topology; bad
 * specs; then a randomized run checked (gf_ctl_check) after every step.
 */
#include <gpufleet/catalog.h>
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>
#include <gpufleet/rng.h>

#include "core/jobs/ctl_impl.h"
#include "ctl_helpers.h"
#include "util/fmt.h"
#include "util/mem.h"

static uint64_t next_seq;
/* the next core holds until gone, batch preemptible by "once" (issue 19) */
static bool hold_mode;

static struct gf_ctl_config *cfg_new(void)
{
	struct gf_ctl_config *c = gf_calloc(1, sizeof(*c));
	c->hold_until_gone = hold_mode;
	c->classes[0].preemptible = hold_mode;
	c->classes[1].priority = hold_mode ? 10 : 0;
	c->policy = GF_POLICY_FGD;
	c->nclasses = 2;
	snprintf(c->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	snprintf(c->classes[1].name, GF_CLASS_NAME_MAX, "once");
	c->classes[1].max_attempts = 1;
	c->nblocks = 1;
	snprintf(c->blocks[0], GF_NODE_NAME_MAX, "b0");
	c->open_teams = true;
	c->seed = 1;
	return c;
}

/* A core over no node with configuration cfg (freed here). */
static struct gf_ctl *ctl_of(struct gf_ctl_config *cfg)
{
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	struct gf_ctl *ctl;
	struct gf_err e;
	assert_int_equal(gf_ctl_new(cfg, c, NULL, &ctl, &e), 0);
	gf_free(cfg);
	next_seq = 0;
	check(ctl);
	return ctl;
}

/* A core over no node, placing with policy p. */
static struct gf_ctl *empty_ctl_with(enum gf_policy p)
{
	struct gf_ctl_config *cfg = cfg_new();
	cfg->policy = p;
	return ctl_of(cfg);
}

static struct gf_ctl *empty_ctl(void)
{
	return empty_ctl_with(GF_POLICY_FGD);
}

static struct gf_ctl_node_spec spec_of(int ngpus, const char *model,
				       const char *block, const char *labels)
{
	struct gf_ctl_node_spec s = { .cpu_milli = 128000,
				      .memory_mib = 1 << 20,
				      .ngpus = ngpus };
	snprintf(s.gpu_model, sizeof(s.gpu_model), "%s", model ? model : "");
	snprintf(s.block, sizeof(s.block), "%s", block ? block : "");
	snprintf(s.labels, sizeof(s.labels), "%s", labels ? labels : "");
	return s;
}

static void mig_add(struct gf_ctl_node_spec *s, int gpu, const char *profile,
		    int start)
{
	struct gf_ctl_mig *x = &s->mig[s->nmig++];
	x->gpu = gpu;
	snprintf(x->profile, sizeof(x->profile), "%s", profile);
	x->start = start;
}

static int add(struct gf_ctl *ctl, const char *name,
	       const struct gf_ctl_node_spec *s, struct gf_ctl_changes *ch)
{
	struct gf_err e;
	if (ch)
		ch->n = 0;
	int i = gf_ctl_node_add(ctl, name, s, 500, ch, &e);
	if (i < 0)
		print_message("gf_ctl_node_add %s: %s\n", name, e.msg);
	assert_true(i >= 0);
	check(ctl);
	return i;
}

static void ready(struct gf_ctl *ctl, int node, bool on, const char *why,
		  struct gf_ctl_changes *ch)
{
	struct gf_err e;
	if (ch)
		ch->n = 0;
	assert_int_equal(gf_ctl_node_ready(ctl, node, on, why, 600, ch, &e), 0);
	check(ctl);
}

/* Added and made ready: an agent registering. */
static int join(struct gf_ctl *ctl, const char *name,
		const struct gf_ctl_node_spec *s)
{
	int i = add(ctl, name, s, NULL);
	ready(ctl, i, true, NULL, NULL);
	return i;
}

static void health(struct gf_ctl *ctl, int node, int gpu, bool ok,
		   const char *why)
{
	struct gf_err e;
	assert_int_equal(gf_ctl_gpu_health(ctl, node, gpu, ok, why, &e), 0);
	check(ctl);
}

static struct gf_job *job(const char *cls, int replicas, int gpus)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++next_seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "default");
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "%s", cls);
	j->spec.replicas = replicas;
	j->spec.gpus = gpus;
	j->spec.cpu_milli = 1000;
	j->spec.memory_mib = 1024;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 1;
	j->block = -1;
	return j;
}

static struct gf_job *sel(struct gf_job *j, const char *selector)
{
	snprintf(j->spec.node_selector, sizeof(j->spec.node_selector), "%s",
		 selector);
	return j;
}

/* Add (the store committed it); admission is not asked: on a core with
 * few nodes it may say never, and the job waits. */
static const char *put(struct gf_ctl *ctl, struct gf_job *j)
{
	struct gf_err e;
	assert_int_equal(gf_ctl_add(ctl, j, &e), 0);
	check(ctl);
	return gf_ctl_job(ctl, j->id)->id;
}

static const char *node_of(const struct gf_ctl *ctl, const char *id, int r)
{
	return J(ctl, id)->place[r].node_name;
}

/* Is id among the changes? */
static bool changed(const struct gf_ctl_changes *ch, const char *id)
{
	for (int i = 0; i < ch->n; i++)
		if (strcmp(ch->ids[i], id) == 0)
			return true;
	return false;
}

static void finish(struct gf_ctl *ctl, const char *id)
{
	struct gf_err e;
	assert_int_equal(gf_ctl_finish(ctl, id, 0, 5000, &e), 0);
	check(ctl);
}

/* ---- nodes joining an empty core ---- */

/*
 * No node at first: a 4-GPU h100-80gb job, a CPU-only job, a gang of
 * 2 x 8 GPUs and two 1-GPU l40s jobs are added and wait, as never
 * placeable (no such model, no node).  An l40s node of 4 GPUs joins (not
 * ready yet): the CPU and l40s jobs may run there now, but the node takes
 * nothing before it is ready: "no node has room now"; ready, they start
 * there.  h1 (8 x h100-80gb, block nvl1) joins: the 4-GPU job
 * starts on it; the gang is still never placeable (one node of 8 GPUs in
 * the block: the largest block holds 1).  h2 joins nvl1: the gang may
 * run, but h1 has 4 GPUs taken: it waits for the block; once the 4-GPU
 * job ends, it starts on h1 and h2.  The blocks were made on the fly.
 */
static void test_join_empty(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	assert_int_equal(gf_ctl_nnodes(ctl), 0);
	struct gf_job *a = job("batch", 1, 4);
	snprintf(a->spec.gpu_model, sizeof(a->spec.gpu_model), "h100-80gb");
	struct gf_err e;
	assert_int_equal(gf_ctl_admit(ctl, &a->spec, &e), GF_ENEVER);
	const char *ja = put(ctl, a);
	const char *jc = put(ctl, job("batch", 1, 0));
	const char *jg = put(ctl, job("batch", 2, 8));
	const char *jl[2]; /* alike: one group of jobs marked never */
	for (int k = 0; k < 2; k++) {
		struct gf_job *l = job("batch", 1, 1);
		snprintf(l->spec.gpu_model, sizeof(l->spec.gpu_model), "l40s");
		jl[k] = put(ctl, l);
	}
	assert_string_equal(why(ctl, ja), "can never be placed here: no node "
					  "has GPU model 'h100-80gb'");
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, jc), GF_JOB_PENDING);

	struct gf_ctl_node_spec l40 = spec_of(4, "l40s", "rack1", NULL);
	int a1 = add(ctl, "a1", &l40, NULL);
	assert_false(gf_ctl_node_is_ready(ctl, a1));
	assert_string_equal(gf_ctl_node_reason(ctl, a1),
			    "waiting for its agent");
	assert_string_equal(why(ctl, jc), ""); /* no longer never */
	assert_string_equal(why(ctl, jl[0]), "");
	assert_string_equal(why(ctl, jl[1]), "");
	assert_true(strstr(why(ctl, jg), "can never be placed here") != NULL);
	pass(ctl, 1100, NULL);
	assert_string_equal(why(ctl, jc),
			    "every candidate node is NotReady or draining (1 "
			    "node)");
	ready(ctl, a1, true, NULL, NULL);
	assert_true(gf_ctl_node_is_ready(ctl, a1));
	assert_string_equal(gf_ctl_node_reason(ctl, a1), "");
	pass(ctl, 1200, NULL);
	assert_int_equal(st(ctl, jc), GF_JOB_RUNNING);
	assert_string_equal(node_of(ctl, jc, 0), "a1");
	assert_int_equal(st(ctl, jl[0]), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, jl[1]), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, ja), GF_JOB_PENDING);

	struct gf_ctl_node_spec h100 = spec_of(8, "h100-80gb", "nvl1", NULL);
	join(ctl, "h1", &h100);
	assert_string_equal(why(ctl, jg),
			    "can never be placed here: gang of 2 replicas does "
			    "not fit any block on one GPU model: the largest "
			    "holds 1");
	pass(ctl, 1300, NULL);
	assert_int_equal(st(ctl, ja), GF_JOB_RUNNING);
	assert_string_equal(node_of(ctl, ja, 0), "h1");
	assert_int_equal(st(ctl, jg), GF_JOB_PENDING);

	join(ctl, "h2", &h100);
	pass(ctl, 1400, NULL);
	assert_int_equal(st(ctl, jg), GF_JOB_PENDING);
	assert_string_equal(why(ctl, jg), "gang of 2 does not fit one block "
					  "now");
	finish(ctl, ja);
	pass(ctl, 1500, NULL);
	assert_int_equal(st(ctl, jg), GF_JOB_RUNNING);
	const struct gf_ctl_config *cfg = gf_ctl_config(ctl);
	assert_int_equal(cfg->nblocks, 3);
	assert_string_equal(cfg->blocks[1], "rack1");
	assert_string_equal(cfg->blocks[2], "nvl1");
	assert_int_equal(J(ctl, jg)->block, 2);
	assert_int_equal(gf_ctl_node_find(ctl, "h2"), 2);
	assert_int_equal(gf_ctl_node_find(ctl, "zz"), -1);
	gf_ctl_free(ctl);
}

/* ---- a node not ready ---- */

/*
 * n0 (host=n0, rack=a) and n1 (host=n1, rack=a) in block 0, n2 (host=n2)
 * in block 1; 8 GPUs each.  j1 2 GPUs on n0; j2 a gang of 2 x 6 GPUs on
 * rack a: n0 has 6 left, n1 8 (not 12): one replica on each; j3 1 GPU on
 * n1; j4 1 GPU on n1, class "once" (max 1 attempt); j5 1 GPU on n2.
 * n1 not ready: j2 (a replica there: the whole gang), j3 and j4 back to
 * PENDING with the reason (a lost node is not the job's failure: j4's one
 * attempt is not spent, issue 19); j1 and j5 untouched.
 * Nothing new lands on n1 (j6, 1 GPU on any node, goes elsewhere; j2 and
 * j3 wait though n1 is empty: j2 holds the reservation, n0 alone cannot
 * hold it; j3 says n1, the one node it may use, is not ready); ready
 * again, j2 and j3 start there.
 */
static struct gf_ctl *three_nodes(void)
{
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s =
		spec_of(8, "h100-80gb", "", "host=n0,rack=a");
	join(ctl, "n0", &s);
	s = spec_of(8, "h100-80gb", "", "host=n1,rack=a");
	join(ctl, "n1", &s);
	s = spec_of(8, "h100-80gb", "other", "host=n2,rack=b");
	join(ctl, "n2", &s);
	return ctl;
}

static void test_not_ready(void **state)
{
	(void)state;
	struct gf_ctl *ctl = three_nodes();
	const char *j1 = put(ctl, sel(job("batch", 1, 2), "host=n0"));
	pass(ctl, 1000, NULL);
	const char *j2 = put(ctl, sel(job("batch", 2, 6), "rack=a"));
	pass(ctl, 1001, NULL);
	const char *j3 = put(ctl, sel(job("batch", 1, 1), "host=n1"));
	const char *j4 = put(ctl, sel(job("once", 1, 1), "host=n1"));
	const char *j5 = put(ctl, sel(job("batch", 1, 1), "host=n2"));
	pass(ctl, 1002, NULL);
	for (const char *const *id =
		     (const char *const[]){ j1, j2, j3, j4, j5, NULL };
	     *id; id++)
		assert_int_equal(st(ctl, *id), GF_JOB_RUNNING);
	assert_string_equal(node_of(ctl, j2, 0), "n0");
	assert_string_equal(node_of(ctl, j2, 1), "n1");
	int n1 = gf_ctl_node_find(ctl, "n1");
	struct gf_ctl_changes ch = { 0 };
	ready(ctl, n1, false, "no heartbeat for 12 s", &ch);
	assert_int_equal(ch.n, 3);
	assert_true(changed(&ch, j2) && changed(&ch, j3) && changed(&ch, j4));
	assert_int_equal(st(ctl, j2), GF_JOB_PENDING);
	assert_string_equal(why(ctl, j2),
			    "node n1 not ready: no heartbeat for 12 s");
	assert_int_equal(st(ctl, j3), GF_JOB_PENDING);
	assert_int_equal(st(ctl, j4), GF_JOB_PENDING);
	assert_string_equal(why(ctl, j4),
			    "node n1 not ready: no heartbeat for 12 s");
	assert_int_equal(J(ctl, j4)->requeues, 1);
	assert_int_equal(J(ctl, j4)->failures, 0);
	assert_int_equal(J(ctl, j4)->started_ms, 0);
	assert_int_equal(st(ctl, j1), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, j5), GF_JOB_RUNNING);
	assert_false(gf_ctl_node_is_ready(ctl, n1));
	assert_string_equal(gf_ctl_node_reason(ctl, n1),
			    "no heartbeat for 12 s");
	/* the same again: only the reason moves */
	ready(ctl, n1, false, "no heartbeat for 20 s", &ch);
	assert_int_equal(ch.n, 0);
	assert_string_equal(gf_ctl_node_reason(ctl, n1),
			    "no heartbeat for 20 s");
	const char *j6 = put(ctl, job("batch", 1, 1));
	pass(ctl, 2000, &ch);
	assert_int_equal(st(ctl, j6), GF_JOB_RUNNING);
	assert_string_not_equal(node_of(ctl, j6, 0), "n1");
	/* j2 heads the queue (n0 alone cannot hold it), j3 waits for it */
	assert_int_equal(st(ctl, j3), GF_JOB_PENDING);
	assert_string_equal(why(ctl, j2), "gang of 2 does not fit one block "
					  "now");
	/* j3 may use n1 only: not j2's reservation but n1 keeps it */
	assert_string_equal(why(ctl, j3),
			    "every candidate node is NotReady or draining (1 "
			    "node)");
	const struct gf_cnode *c1 = &gf_ctl_cluster(ctl)->nodes[n1];
	assert_int_equal(c1->idle, 8000);
	assert_int_equal(c1->cpu_left, c1->cpu_cap);
	struct gf_ctl_stats stats;
	gf_ctl_stats(ctl, &stats);
	assert_int_equal(stats.nodes_ready, 2);
	assert_int_equal(stats.nodes_notready, 1);
	assert_int_equal(stats.gpus_unavailable_milli, 8000);
	ready(ctl, n1, true, NULL, &ch);
	assert_int_equal(ch.n, 0);
	pass(ctl, 3000, &ch);
	assert_int_equal(st(ctl, j2), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, j3), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, j4), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, j2)->attempts, 2);
	assert_string_equal(node_of(ctl, j3, 0), "n1");
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

/* Not ready with no changes list: the next pass reports them. */
static void test_not_ready_later(void **state)
{
	(void)state;
	struct gf_ctl *ctl = three_nodes();
	const char *j1 = put(ctl, sel(job("batch", 1, 2), "host=n0"));
	pass(ctl, 1000, NULL);
	ready(ctl, 0, false, NULL, NULL);
	assert_string_equal(why(ctl, j1), "node n0 not ready");
	assert_string_equal(gf_ctl_node_reason(ctl, 0), "not ready");
	struct gf_ctl_changes ch = { 0 };
	pass(ctl, 2000, &ch);
	assert_true(changed(&ch, j1));
	struct gf_err e;
	assert_int_equal(gf_ctl_node_ready(ctl, 3, true, NULL, 1, NULL, &e),
			 GF_EINVAL);
	assert_string_equal(e.msg, "no node 3 (3 nodes)");
	assert_int_equal(gf_ctl_node_ready(ctl, 0, true, NULL, 0, NULL, &e),
			 GF_EINVAL);
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

/* A node's reason, or a job's, longer than the core keeps is cut with a
 * mark: it ends in "..." (it was cut silently). */
static void test_not_ready_long_reason(void **state)
{
	(void)state;
	struct gf_ctl *ctl = three_nodes();
	char why[300];
	memset(why, 'x', sizeof(why) - 1);
	why[sizeof(why) - 1] = '\0';
	ready(ctl, 0, false, why, NULL);
	const char *r = gf_ctl_node_reason(ctl, 0);
	assert_int_equal(strlen(r), GF_JOB_REASON_MAX - 1);
	assert_string_equal(r + strlen(r) - 3, "...");
	assert_int_equal(strspn(r, "x"), GF_JOB_REASON_MAX - 4);
	/* a job requeued for a reason that long: the same mark */
	const char *j1 = put(ctl, sel(job("batch", 1, 1), "host=n1"));
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, j1), GF_JOB_RUNNING);
	struct gf_err e;
	assert_int_equal(gf_ctl_requeue(ctl, j1, why, 2000, &e), 0);
	r = gf_ctl_job(ctl, j1)->reason;
	assert_int_equal(strlen(r), GF_JOB_REASON_MAX - 1);
	assert_string_equal(r + strlen(r) - 3, "...");
	gf_ctl_free(ctl);
}

/* Names and ids are found as the index grows past many rehashes (util's
 * gf_hmap): 1,500 nodes and 5,000 jobs, each found; unknown ones not; a
 * known name added again is the same node. */
static void test_many_names(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", "", "rack=a");
	struct gf_err e;
	char name[32];
	for (int i = 0; i < 1500; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_int_equal(gf_ctl_node_add(ctl, name, &s, 500, NULL, &e),
				 i);
	}
	for (int i = 0; i < 1500; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_int_equal(gf_ctl_node_find(ctl, name), i);
	}
	assert_int_equal(gf_ctl_node_find(ctl, "node-1500"), -1);
	assert_int_equal(gf_ctl_node_add(ctl, "node-7", &s, 500, NULL, &e), 7);
	uint64_t first = next_seq + 1;
	for (int k = 0; k < 5000; k++) {
		struct gf_job *j = job("batch", 1, 1);
		assert_int_equal(gf_ctl_add(ctl, j, &e), 0);
	}
	for (uint64_t q = first; q < first + 5000; q++) {
		char id[GF_JOB_ID_MAX];
		snprintf(id, sizeof(id), "j%llu", (unsigned long long)q);
		const struct gf_job *j = gf_ctl_job(ctl, id);
		assert_non_null(j);
		assert_string_equal(j->id, id);
	}
	assert_null(gf_ctl_job(ctl, "j999999"));
	check(ctl);
	gf_ctl_free(ctl);
}

/* ---- GPU health ---- */

/*
 * One node, 4 x h100-80gb, GPU 3 in MIG mode (7 x 1g.10gb).  GPU 1
 * unhealthy: two 1-GPU jobs start, on GPUs 0 and 2.  GPU 3 unhealthy: a
 * 1g.10gb job waits; well again, it starts.  A third 1-GPU job waits, and
 * a share of 500 (0 and 2 taken, 1 unhealthy, 3 in MIG mode); GPU 1 well
 * again: the third job starts on it, the share still waits.  GPU 0
 * unhealthy while its job runs: the job runs on; when it ends the GPU
 * takes nothing new (a 1-GPU job waits) until it is well.
 */
static void test_gpu_health(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(4, "h100-80gb", NULL, NULL);
	for (int k = 0; k < 7; k++)
		mig_add(&s, 3, "1g.10gb", k);
	int n = join(ctl, "n0", &s);
	health(ctl, n, 1, false, "Xid 79: fell off the bus");
	assert_false(gf_ctl_gpu_is_healthy(ctl, n, 1));
	assert_true(gf_ctl_gpu_is_healthy(ctl, n, 0));
	assert_string_equal(gf_ctl_gpu_reason(ctl, n, 1),
			    "Xid 79: fell off the bus");
	assert_string_equal(gf_ctl_gpu_reason(ctl, n, 0), "");
	const char *a = put(ctl, job("batch", 1, 1));
	const char *b = put(ctl, job("batch", 1, 1));
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, a), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, b), GF_JOB_RUNNING);
	int ga = J(ctl, a)->place[0].gpus[0], gb = J(ctl, b)->place[0].gpus[0];
	assert_int_equal(ga + gb, 2); /* 0 and 2 */
	assert_true(ga != 1 && gb != 1);

	health(ctl, n, 3, false, NULL);
	struct gf_job *m = job("batch", 1, 0);
	snprintf(m->spec.mig_profile, sizeof(m->spec.mig_profile), "1g.10gb");
	const char *jm = put(ctl, m);
	pass(ctl, 1100, NULL);
	assert_int_equal(st(ctl, jm), GF_JOB_PENDING);
	assert_string_equal(why(ctl, jm), "n0 has no free 1g.10gb instance");
	health(ctl, n, 3, true, NULL);
	pass(ctl, 1200, NULL);
	assert_int_equal(st(ctl, jm), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, jm)->place[0].gpus[0], 3);

	const char *c = put(ctl, job("batch", 1, 1));
	struct gf_job *sh = job("batch", 1, 0);
	sh->spec.gpu_milli = 500;
	const char *d = put(ctl, sh);
	pass(ctl, 1250, NULL);
	assert_int_equal(st(ctl, c), GF_JOB_PENDING);
	assert_int_equal(st(ctl, d), GF_JOB_PENDING);
	struct gf_ctl_stats stats;
	gf_ctl_stats(ctl, &stats);
	assert_int_equal(stats.gpus_unhealthy, 1);
	assert_int_equal(stats.gpus_unavailable_milli, 1000);
	assert_int_equal(stats.gpus_alloc_milli, 2000 + 142); /* + 1/7 */

	health(ctl, n, 1, true, NULL);
	pass(ctl, 1300, NULL);
	assert_int_equal(st(ctl, c), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, c)->place[0].gpus[0], 1);
	assert_int_equal(st(ctl, d), GF_JOB_PENDING);
	struct gf_err err;
	assert_int_equal(gf_ctl_cancel(ctl, d, 1300, &err), 0);

	const char *on0 = ga == 0 ? a : b;
	health(ctl, n, 0, false, "Xid 48: double bit ECC error");
	pass(ctl, 1400, NULL);
	assert_int_equal(st(ctl, on0), GF_JOB_RUNNING);
	finish(ctl, on0);
	gf_ctl_stats(ctl, &stats);
	assert_int_equal(stats.gpus_unavailable_milli, 1000);
	const char *e = put(ctl, job("batch", 1, 1));
	pass(ctl, 1500, NULL);
	assert_int_equal(st(ctl, e), GF_JOB_PENDING);
	health(ctl, n, 0, true, NULL);
	pass(ctl, 1600, NULL);
	assert_int_equal(st(ctl, e), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, e)->place[0].gpus[0], 0);
	assert_int_equal(gf_ctl_gpu_health(ctl, n, 4, false, NULL, &err),
			 GF_EINVAL);
	assert_string_equal(err.msg, "node n0: no GPU 4 (4 GPUs)");
	gf_ctl_free(ctl);
}

/* ---- a known node updated ---- */

/*
 * n0 (zone=a, rack=r) and n1 (zone=b, rack=r) in block b1, 8 GPUs each.
 * js asks for zone=c: never placeable.  x (1 GPU, zone=a) runs on n0,
 * y (1 GPU, zone=b) on n1, the gang g (2 x 7 GPUs, rack=r) one replica on
 * each (7 + 1 = 8 on each).  n1 relabelled zone=c: js may run (after g
 * ends: n1 is full).  n0 moved to block b2: g is requeued (it would span
 * blocks, and can never run now: each block has one 8-GPU node), x
 * moves with n0 (its block is b2).  Back in b1, the gang may run again.
 */
static void test_update_labels_block(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s0 =
		spec_of(8, "h100-80gb", "b1", "zone=a,rack=r");
	struct gf_ctl_node_spec s1 =
		spec_of(8, "h100-80gb", "b1", "zone=b,rack=r");
	int n0 = join(ctl, "n0", &s0), n1 = join(ctl, "n1", &s1);
	const char *js = put(ctl, sel(job("batch", 1, 1), "zone=c"));
	assert_string_equal(why(ctl, js), "can never be placed here: no node "
					  "matches node_selector 'zone=c'");
	const char *x = put(ctl, sel(job("batch", 1, 1), "zone=a"));
	const char *y = put(ctl, sel(job("batch", 1, 1), "zone=b"));
	pass(ctl, 1000, NULL);
	const char *g = put(ctl, sel(job("batch", 2, 7), "rack=r"));
	pass(ctl, 1001, NULL);
	assert_int_equal(st(ctl, g), GF_JOB_RUNNING);
	struct gf_ctl_changes ch = { 0 };
	/* the same spec again: nothing happens */
	assert_int_equal(add(ctl, "n1", &s1, &ch), n1);
	assert_int_equal(ch.n, 0);
	snprintf(s1.labels, sizeof(s1.labels), "zone=c,rack=r");
	assert_int_equal(add(ctl, "n1", &s1, &ch), n1);
	assert_int_equal(ch.n, 0);
	assert_string_equal(why(ctl, js), "");
	assert_int_equal(st(ctl, y), GF_JOB_RUNNING); /* it runs on */
	snprintf(s0.block, sizeof(s0.block), "b2");
	assert_int_equal(add(ctl, "n0", &s0, &ch), n0);
	assert_int_equal(ch.n, 2);
	assert_true(changed(&ch, g) && changed(&ch, x));
	/* requeued; and with one 8-GPU node per block, never placeable */
	assert_int_equal(st(ctl, g), GF_JOB_PENDING);
	assert_int_equal(J(ctl, g)->attempts, 1);
	assert_string_equal(why(ctl, g),
			    "can never be placed here: gang of 2 replicas does "
			    "not fit any block: the largest holds 1");
	assert_int_equal(st(ctl, x), GF_JOB_RUNNING);
	assert_int_equal(J(ctl, x)->block, 2);
	assert_int_equal(gf_ctl_node(ctl, n0)->block, 2);
	pass(ctl, 2000, NULL);
	assert_int_equal(st(ctl, js), GF_JOB_RUNNING);
	assert_string_equal(node_of(ctl, js, 0), "n1");
	/* n0 back in b1: the gang may run again, and does */
	snprintf(s0.block, sizeof(s0.block), "b1");
	add(ctl, "n0", &s0, &ch);
	assert_string_equal(why(ctl, g), "");
	finish(ctl, js);
	pass(ctl, 6000, NULL);
	assert_int_equal(st(ctl, g), GF_JOB_RUNNING);
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

/*
 * n1: 8 x h100-80gb; y (1 GPU) takes GPU 0 (lowest free).  Its MIG
 * layout becomes 7 x 1g.10gb on GPU 7 (free): a 1g.10gb job runs there.
 * Then: GPU 7 as one 7g.80gb while that job runs: refused, naming the
 * instance and the job; GPU 0 into MIG mode while y runs: refused,
 * naming y; nothing changed either time.  Re-registered with 4 GPUs: y
 * and the MIG job are requeued, the node rebuilt empty.
 */
static void test_update_mig_shape(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", NULL, NULL);
	int n1 = join(ctl, "n1", &s);
	const char *y = put(ctl, job("batch", 1, 1));
	struct gf_job *m = job("batch", 1, 0);
	snprintf(m->spec.mig_profile, sizeof(m->spec.mig_profile), "1g.10gb");
	const char *jm = put(ctl, m);
	pass(ctl, 1000, NULL);
	assert_int_equal(J(ctl, y)->place[0].gpus[0], 0);
	assert_int_equal(st(ctl, jm), GF_JOB_PENDING);
	struct gf_ctl_changes ch = { 0 };
	for (int k = 0; k < 7; k++)
		mig_add(&s, 7, "1g.10gb", k);
	add(ctl, "n1", &s, &ch);
	assert_int_equal(ch.n, 0);
	assert_int_equal(gf_ctl_node(ctl, n1)->nmig, 7);
	assert_string_equal(gf_ctl_node(ctl, n1)->mig_model, "h100-80gb");
	pass(ctl, 1100, NULL);
	assert_int_equal(st(ctl, jm), GF_JOB_RUNNING);
	int slice = J(ctl, jm)->place[0].mig_start;
	struct gf_ctl_stats before;
	gf_ctl_stats(ctl, &before);
	assert_int_equal(before.mig_total, 7);
	assert_int_equal(before.mig_used, 1);

	struct gf_ctl_node_spec t = spec_of(8, "h100-80gb", NULL, "x=1");
	mig_add(&t, 7, "7g.80gb", 0);
	struct gf_err e;
	assert_int_equal(gf_ctl_node_add(ctl, "n1", &t, 1200, &ch, &e),
			 GF_ECONFLICT);
	char want[160];
	snprintf(want, sizeof(want),
		 "node n1: GPU 7: MIG instance 1g.10gb at slice %d is in use "
		 "by %s",
		 slice, jm);
	assert_string_equal(e.msg, want);
	t = s;
	mig_add(&t, 0, "7g.80gb", 0);
	assert_int_equal(gf_ctl_node_add(ctl, "n1", &t, 1200, &ch, &e),
			 GF_ECONFLICT);
	snprintf(want, sizeof(want),
		 "node n1: GPU 0 is in use by %s: it cannot enter MIG mode", y);
	assert_string_equal(e.msg, want);
	assert_string_equal(gf_ctl_node(ctl, n1)->labels, "");
	assert_int_equal(gf_ctl_node(ctl, n1)->nmig, 7);
	check(ctl);

	struct gf_ctl_node_spec four = spec_of(4, "h100-80gb", NULL, NULL);
	assert_int_equal(add(ctl, "n1", &four, &ch), n1);
	assert_int_equal(ch.n, 2);
	assert_int_equal(st(ctl, y), GF_JOB_PENDING);
	assert_string_equal(why(ctl, y), "node n1 changed shape");
	assert_int_equal(st(ctl, jm), GF_JOB_PENDING);
	const struct gf_cnode *c = &gf_ctl_cluster(ctl)->nodes[n1];
	assert_int_equal(c->ngpus, 4);
	assert_int_equal(c->idle, 4000);
	assert_int_equal(gf_ctl_cluster(ctl)->gpu_milli_total, 4000);
	assert_true(gf_ctl_node_is_ready(ctl, n1));
	/* no instance now: the MIG job can never be placed */
	assert_true(strstr(why(ctl, jm), "can never be placed here") != NULL);
	pass(ctl, 1300, NULL);
	assert_int_equal(st(ctl, y), GF_JOB_RUNNING);
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

/* ---- a controller restart ---- */

/*
 * Core a: n0 and n1 (8 GPUs) ready; 4-GPU and share jobs run on n0,
 * 3-GPU and 1-GPU jobs on n1.  Core b (the restart): n0 and n1 known again,
 * waiting for their agents; every job added again: the running ones stay
 * RUNNING on the same GPUs and hold them.  A new job starts nowhere (no node
 * ready); n0 ready: it starts there beside the restored ones.  n1 never comes
 * back: not ready, its jobs are requeued; a job restored onto it now goes back
 * to PENDING.
 */
static void test_restart(void **state)
{
	(void)state;
	struct gf_ctl *a = empty_ctl();
	struct gf_ctl_node_spec s0 = spec_of(8, "h100-80gb", NULL, "host=n0");
	struct gf_ctl_node_spec s1 = spec_of(8, "h100-80gb", NULL, "host=n1");
	join(a, "n0", &s0);
	join(a, "n1", &s1);
	put(a, sel(job("batch", 1, 4), "host=n0"));
	put(a, sel(job("batch", 1, 3), "host=n1"));
	struct gf_job *sh = sel(job("batch", 1, 0), "host=n0");
	sh->spec.gpu_milli = 300;
	put(a, sh);
	put(a, sel(job("batch", 1, 1), "host=n1"));
	pass(a, 1000, NULL);
	struct gf_ctl *b = empty_ctl();
	add(b, "n0", &s0, NULL);
	int n1 = add(b, "n1", &s1, NULL);
	struct gf_err e;
	for (int i = 0; i < gf_ctl_njobs(a); i++) {
		assert_int_equal(
			gf_ctl_add(b, job_clone(gf_ctl_job_at(a, i)), &e), 0);
		check(b);
	}
	struct gf_ctl_stats sa, sb;
	gf_ctl_stats(a, &sa);
	gf_ctl_stats(b, &sb);
	assert_int_equal(sa.running, 4);
	assert_int_equal(sb.running, 4);
	assert_int_equal(sb.gpus_alloc_milli, sa.gpus_alloc_milli);
	assert_int_equal(sb.nodes_notready, 2);
	next_seq = 10;
	const char *fresh = put(b, job("batch", 1, 1));
	pass(b, 2000, NULL);
	assert_int_equal(st(b, fresh), GF_JOB_PENDING);
	gf_ctl_stats(b, &sb);
	assert_int_equal(sb.running, 4);
	ready(b, 0, true, NULL, NULL);
	pass(b, 2100, NULL);
	assert_int_equal(st(b, fresh), GF_JOB_RUNNING);
	assert_string_equal(node_of(b, fresh, 0), "n0");
	int on1 = 0;
	for (int i = 0; i < gf_ctl_njobs(a); i++) {
		const struct gf_job *x = gf_ctl_job_at(a, i);
		on1 += strcmp(x->place[0].node_name, "n1") == 0;
	}
	assert_int_equal(on1, 2);
	struct gf_ctl_changes ch = { 0 };
	ready(b, n1, false, "agent did not come back", &ch);
	assert_int_equal(ch.n, on1);
	for (int i = 0; i < ch.n; i++) {
		assert_int_equal(st(b, ch.ids[i]), GF_JOB_PENDING);
		assert_string_equal(why(b, ch.ids[i]),
				    "node n1 not ready: agent did not come "
				    "back");
	}
	const struct gf_job *x = NULL;
	for (int i = 0; i < gf_ctl_njobs(a) && x == NULL; i++)
		if (!strcmp(gf_ctl_job_at(a, i)->place[0].node_name, "n1"))
			x = gf_ctl_job_at(a, i);
	struct gf_job *late = job_clone(x);
	late->seq = 100;
	snprintf(late->id, sizeof(late->id), "j100");
	assert_int_equal(gf_ctl_add(b, late, &e), 0);
	check(b);
	assert_int_equal(st(b, "j100"), GF_JOB_PENDING);
	assert_string_equal(why(b, "j100"),
			    "restored placement no longer fits: node n1 is not "
			    "ready: agent did not come back");
	gf_ctl_changes_release(&ch);
	gf_ctl_free(a);
	gf_ctl_free(b);
}

/*
 * A 4-GPU job ran on GPUs 0-3 of n0 (the lowest free); after the restart
 * n0 comes back with GPU 3 in MIG mode: the job cannot be restored there
 * (a GPU in MIG mode is never given whole), it waits.
 */
static void test_restart_mig_mode(void **state)
{
	(void)state;
	struct gf_ctl *a = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", NULL, NULL);
	join(a, "n0", &s);
	const char *j = put(a, job("batch", 1, 4));
	pass(a, 1000, NULL);
	assert_int_equal(st(a, j), GF_JOB_RUNNING);
	assert_int_equal(J(a, j)->place[0].gpus[3], 3);
	struct gf_ctl *b = empty_ctl();
	mig_add(&s, 3, "7g.80gb", 0);
	add(b, "n0", &s, NULL);
	struct gf_err e;
	assert_int_equal(gf_ctl_add(b, job_clone(J(a, j)), &e), 0);
	check(b);
	assert_int_equal(st(b, j), GF_JOB_PENDING);
	assert_string_equal(why(b, j), "restored placement no longer fits: "
				       "replica 0 no longer fits on n0");
	gf_ctl_free(a);
	gf_ctl_free(b);
}

/* ---- GPU topology, refusals ---- */

/*
 * A node of 4 GPUs whose pairs are all SYS but 2-3, joined by 4 NVLinks:
 * a 2-GPU job gets GPUs 2 and 3, not the first two free.
 */
static void test_topology(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_gpu_topo t = { .ngpus = 4 };
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			t.pair[i][k] = i == k ? 0 : GF_GQ_SYS;
	t.pair[2][3] = t.pair[3][2] = GF_GQ_NVLINK + 4;
	struct gf_ctl_node_spec s = spec_of(4, "h100-sxm", NULL, NULL);
	s.topo = &t;
	int n = join(ctl, "n0", &s);
	assert_int_equal(gf_ctl_cluster(ctl)->nodes[n].topo, 1);
	const char *j = put(ctl, job("batch", 1, 2));
	pass(ctl, 1000, NULL);
	assert_int_equal(J(ctl, j)->place[0].gpus[0], 2);
	assert_int_equal(J(ctl, j)->place[0].gpus[1], 3);
	/* h100-sxm is a catalog id: its MIG model comes by PCI id */
	assert_string_equal(gf_ctl_node(ctl, n)->mig_model, "h100-80gb");
	/* registered again without a topology: none now */
	s.topo = NULL;
	add(ctl, "n0", &s, NULL);
	assert_int_equal(gf_ctl_cluster(ctl)->nodes[n].topo, 0);
	gf_ctl_free(ctl);
}

static void refused(struct gf_ctl *ctl, const char *name,
		    const struct gf_ctl_node_spec *s, int code, const char *msg)
{
	struct gf_err e;
	int n = gf_ctl_nnodes(ctl), nb = gf_ctl_config(ctl)->nblocks;
	assert_int_equal(gf_ctl_node_add(ctl, name, s, 100, NULL, &e), code);
	assert_string_equal(e.msg, msg);
	assert_int_equal(gf_ctl_nnodes(ctl), n);
	assert_int_equal(gf_ctl_config(ctl)->nblocks, nb);
	check(ctl);
}

static void test_refusals(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", "nb", NULL);
	refused(ctl, "a b", &s, GF_EINVAL,
		"node name 'a b': 1 to 47 letters, digits, '.', '_', '-'");
	s.ngpus = 17;
	refused(ctl, "n", &s, GF_EINVAL,
		"node n: 'ngpus': expected 0 to 16, got 17");
	s = spec_of(8, "", "nb", NULL);
	refused(ctl, "n", &s, GF_EINVAL,
		"node n: 'gpu_model': a name under 32 bytes, required with "
		"GPUs");
	s = spec_of(8, "h100-80gb", "nb", "a=b,,c");
	refused(ctl, "n", &s, GF_EINVAL,
		"node n: labels: expected k=v,k=v at byte 4 (keys and values: "
		"letters, digits, '.', '_', '-', '/')");
	s = spec_of(8, "h100-80gb", "n b", NULL);
	refused(ctl, "n", &s, GF_EINVAL,
		"node n: block: letters, digits, '.', '_', '-'");
	s = spec_of(8, "G2", "nb", NULL);
	mig_add(&s, 0, "1g.10gb", 0);
	refused(ctl, "n", &s, GF_EINVAL,
		"node n: MIG instances on model 'G2', which has no MIG");
	s = spec_of(8, "h100-80gb", "nb", NULL);
	snprintf(s.mig_model, sizeof(s.mig_model), "k80");
	refused(ctl, "n", &s, GF_EINVAL, "node n: unknown MIG model 'k80'");
	s = spec_of(8, "h100-80gb", "nb", NULL);
	mig_add(&s, 3, "4g.40gb", 0);
	mig_add(&s, 3, "3g.40gb", 0);
	refused(ctl, "n", &s, GF_EINVAL,
		"node n: GPU 3: 3g.40gb at slice 0 overlaps another instance");
	s = spec_of(8, "h100-80gb", "nb", NULL);
	struct gf_gpu_topo t = { .ngpus = 4 };
	s.topo = &t;
	refused(ctl, "n", &s, GF_EINVAL,
		"node n: GPU topology of 4 GPUs, the node has 8");
	s = spec_of(8, "h100-80gb", "nb", NULL);
	struct gf_err e;
	assert_int_equal(gf_ctl_node_add(ctl, "n", &s, 0, NULL, &e), GF_EINVAL);
	for (int m = 0; m < GF_MAX_MODELS; m++) {
		char model[16];
		snprintf(model, sizeof(model), "m%d", m);
		s = spec_of(1, model, NULL, NULL);
		char name[16];
		snprintf(name, sizeof(name), "x%d", m);
		add(ctl, name, &s, NULL);
	}
	s = spec_of(1, "one-too-many", NULL, NULL);
	refused(ctl, "y", &s, GF_ETOOBIG,
		"node y: model 'one-too-many': more than 32 GPU models");
	gf_ctl_free(ctl);
}

/* ---- randomized ---- */

static const char *const models[] = { "h100-80gb", "a100-80gb", "l40s" };
static const char *const zones[] = { "zone=a", "zone=b", "zone=c" };

static struct gf_ctl_node_spec random_spec(struct gf_rng *r)
{
	int m = (int)gf_rng_below(r, 3);
	int ngpus = m == 2 ? 4 : 8;
	char block[8];
	snprintf(block, sizeof(block), "b%d", (int)gf_rng_below(r, 3));
	struct gf_ctl_node_spec s =
		spec_of(ngpus, models[m], block, zones[gf_rng_below(r, 3)]);
	if (m < 2 && gf_rng_below(r, 3) == 0) {
		int g = ngpus - 1;
		if (gf_rng_below(r, 2)) {
			for (int k = 0; k < 7; k++)
				mig_add(&s, g, "1g.10gb", k);
		} else {
			mig_add(&s, g, "3g.40gb", 0);
			mig_add(&s, g, "3g.40gb", 4);
		}
	}
	return s;
}

static struct gf_job *random_job(struct gf_rng *r)
{
	struct gf_job *j = job(gf_rng_below(r, 4) ? "batch" : "once", 1, 0);
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
			 gf_rng_below(r, 2) ? "1g.10gb" : "3g.40gb");
		break;
	default:
		break;
	}
	if (gf_rng_below(r, 6) == 0)
		s->replicas = 2 + (int)gf_rng_below(r, 3);
	if (s->gpus && gf_rng_below(r, 4) == 0)
		snprintf(s->gpu_model, sizeof(s->gpu_model), "%s",
			 models[gf_rng_below(r, 3)]);
	if (gf_rng_below(r, 5) == 0)
		snprintf(s->node_selector, sizeof(s->node_selector), "%s",
			 zones[gf_rng_below(r, 3)]);
	if (gf_rng_below(r, 2))
		s->max_runtime_s = 1 + (int64_t)gf_rng_below(r, 100);
	s->cpu_milli = 1000 * (int)gf_rng_below(r, 16);
	s->memory_mib = 1024 * (int64_t)gf_rng_below(r, 64);
	return j;
}

static const char *pick(struct gf_ctl *ctl, struct gf_rng *r, int state)
{
	int n = gf_ctl_njobs(ctl);
	int start = n ? (int)gf_rng_below(r, (uint64_t)n) : 0;
	for (int k = 0; k < n; k++) {
		const struct gf_job *j = gf_ctl_job_at(ctl, (start + k) % n);
		if (state < 0 || (int)j->state == state)
			return j->id;
	}
	return NULL;
}

/* ---- GPU products and model names (issue 22, GFD) ---- */

/*
 * Agents register each GPU by the catalog id of its NVML name; a job
 * selecting nvidia.com/gpu.product as GPU feature discovery writes it
 * (gpu-feature-discovery internal/lm/resource_test.go,
 * TestGPUResourceLabeler "no sharing": the NVML name, spaces as '-')
 * runs on that model's node, for every catalog model.  A node labelled
 * with another product by its config keeps its label: the selector
 * matches the label, not the model.
 */
static void test_gfd_products_agents(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	int n = gf_catalog_count();
	for (int i = 0; i < n; i++) {
		const struct gf_gpu_model *g = gf_catalog_at(i);
		char name[16];
		assert_int_equal(gf_fmt(name, sizeof(name), "n%d", i), 0);
		struct gf_ctl_node_spec s =
			spec_of(2, gf_catalog_by_name(g->name)->id, NULL, NULL);
		join(ctl, name, &s);
	}
	struct gf_ctl_node_spec lab =
		spec_of(1, "h200", NULL, "nvidia.com/gpu.product=NVIDIA-L40S");
	join(ctl, "lab", &lab);
	const char *ids[GF_MAX_MODELS];
	for (int i = 0; i < n; i++) {
		char want[GF_CTL_LABELS_MAX];
		assert_int_equal(gf_fmt(want, sizeof(want),
					"nvidia.com/gpu.product=%s",
					gf_catalog_at(i)->gfd_product),
				 0);
		ids[i] = put(ctl, sel(job("batch", 1, 1), want));
		assert_string_equal(why(ctl, ids[i]), "");
	}
	const char *h200 = put(
		ctl, sel(job("batch", 1, 1), "nvidia.com/gpu.product=h200"));
	pass(ctl, 1000, NULL);
	for (int i = 0; i < n; i++) {
		assert_int_equal(st(ctl, ids[i]), GF_JOB_RUNNING);
		const char *on = node_of(ctl, ids[i], 0);
		char want[16];
		assert_int_equal(gf_fmt(want, sizeof(want), "n%d", i), 0);
		if (strcmp(gf_catalog_at(i)->id, "l40s") == 0)
			assert_true(!strcmp(on, want) || !strcmp(on, "lab"));
		else
			assert_string_equal(on, want);
	}
	/* the labelled h200 node is not an h200 to a product selector */
	assert_int_equal(st(ctl, h200), GF_JOB_RUNNING);
	assert_string_not_equal(node_of(ctl, h200, 0), "lab");
	int k = 0;
	while (strcmp(gf_catalog_at(k)->id, "h200") != 0)
		k++;
	char hn[16];
	assert_int_equal(gf_fmt(hn, sizeof(hn), "n%d", k), 0);
	assert_string_equal(node_of(ctl, h200, 0), hn);
	gf_ctl_free(ctl);
}

/*
 * A quota on "h100-80gb" (the MIG catalog's id, the catalog's alias of
 * h100-sxm) counts the GPUs of agent nodes registering h100-sxm: team ml
 * may hold 2 of them; a 1-GPU job runs, a 2-GPU job then waits on the
 * quota, naming the model as nodes register it.
 */
static void test_quota_alias_agents(void **state)
{
	(void)state;
	struct gf_ctl_config *cfg = cfg_new();
	struct gf_ctl_team *t = &cfg->teams[cfg->nteams++];
	snprintf(t->name, sizeof(t->name), "ml");
	t->milli = -1;
	t->ngpus = 1;
	snprintf(t->gpus[0].what, sizeof(t->gpus[0].what), "h100-80gb");
	t->gpus[0].limit = 2;
	t->has_quota = true;
	struct gf_ctl *ctl = ctl_of(cfg);
	struct gf_job *a = job("batch", 1, 1), *b = job("batch", 1, 2);
	snprintf(a->spec.team, sizeof(a->spec.team), "ml");
	snprintf(b->spec.team, sizeof(b->spec.team), "ml");
	const char *x = put(ctl, a);
	struct gf_ctl_node_spec s = spec_of(
		8, gf_catalog_by_name("NVIDIA H100 80GB HBM3")->id, NULL, NULL);
	join(ctl, "h", &s);
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, x), GF_JOB_RUNNING);
	const char *y = put(ctl, b);
	pass(ctl, 2000, NULL);
	assert_int_equal(st(ctl, y), GF_JOB_PENDING);
	assert_string_equal(why(ctl, y),
			    "quota: team ml would use 3 of 2 h100-sxm GPUs");
	gf_ctl_free(ctl);
}

/* A node event: one joins, one is registered again (maybe changed), one
 * is ready or not, a GPU is well or not. */
static void node_event(struct gf_ctl *ctl, struct gf_rng *r, int64_t now,
		       int *nodes, int *events)
{
	struct gf_err e;
	struct gf_ctl_changes ch = { 0 };
	uint64_t op = gf_rng_below(r, 10);
	int n = gf_ctl_nnodes(ctl);
	if (op < 2 || n == 0) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", n);
		struct gf_ctl_node_spec s = random_spec(r);
		assert_int_equal(gf_ctl_node_add(ctl, name, &s, now, &ch, &e),
				 n);
		(*nodes)++;
	} else if (op < 4) {
		int i = (int)gf_rng_below(r, (uint64_t)n);
		char name[GF_NODE_NAME_MAX];
		snprintf(name, sizeof(name), "%s",
			 gf_ctl_cluster(ctl)->names[i]);
		struct gf_ctl_node_spec s = random_spec(r);
		int rc = gf_ctl_node_add(ctl, name, &s, now, &ch, &e);
		assert_true(rc == i || rc == GF_ECONFLICT);
	} else if (op < 7) {
		int i = (int)gf_rng_below(r, (uint64_t)n);
		bool on = gf_rng_below(r, 3) != 0;
		assert_int_equal(
			gf_ctl_node_ready(ctl, i, on, "lost", now, &ch, &e), 0);
		for (int k = 0; !on && k < ch.n; k++)
			assert_int_not_equal(st(ctl, ch.ids[k]),
					     GF_JOB_RUNNING);
	} else {
		int i = (int)gf_rng_below(r, (uint64_t)n);
		int ng = gf_ctl_cluster(ctl)->nodes[i].ngpus;
		if (ng > 0)
			assert_int_equal(
				gf_ctl_gpu_health(
					ctl, i,
					(int)gf_rng_below(r, (uint64_t)ng),
					gf_rng_below(r, 2), "xid", &e),
				0);
	}
	(*events)++;
	gf_ctl_changes_release(&ch);
}

static void random_run(enum gf_policy policy, int steps, uint64_t seed)
{
	struct gf_ctl *ctl = empty_ctl_with(policy);
	struct gf_rng r;
	gf_rng_seed(&r, seed);
	int64_t now = 1000;
	int started = 0, nodes = 0, events = 0;
	struct gf_ctl_changes ch = { 0 };
	struct gf_err e;
	for (int step = 0; step < steps; step++) {
		uint64_t op = gf_rng_below(&r, 24);
		now += (int64_t)gf_rng_below(&r, 4000);
		if (op < 7) {
			struct gf_job *j = random_job(&r);
			assert_int_equal(gf_ctl_add(ctl, j, &e), 0);
		} else if (op < 12) {
			pass(ctl, now, &ch);
			for (int i = 0; i < ch.n; i++)
				started += st(ctl, ch.ids[i]) == GF_JOB_RUNNING;
		} else if (op < 15) {
			const char *id = pick(ctl, &r, GF_JOB_RUNNING);
			if (id)
				assert_int_equal(
					gf_ctl_finish(ctl, id,
						      (int)gf_rng_below(&r, 2),
						      now, &e),
					0);
		} else if (op < 16) {
			const char *id = pick(ctl, &r, GF_JOB_PENDING);
			if (id)
				assert_int_equal(
					gf_ctl_cancel(ctl, id, now, &e), 0);
		} else {
			node_event(ctl, &r, now, &nodes, &events);
		}
		check(ctl);
	}
	print_message("%s, %d steps: %d nodes, %d node events, %d starts\n",
		      gf_policy_name(policy), steps, nodes, events, started);
	assert_true(started > 100 && nodes > 20);
	gf_ctl_changes_release(&ch);
	gf_ctl_free(ctl);
}

static void test_random(void **state)
{
	(void)state;
	random_run(GF_POLICY_FGD, 3000, 11);
	random_run(GF_POLICY_BESTFIT, 2000, 12);
	random_run(GF_POLICY_RANDOM, 2000, 13);
	random_run(GF_POLICY_FGDPLUS, 2000, 14);
}

/* ---- replicas completing (issue 19) ---- */

static int64_t alloc_milli(const struct gf_ctl *ctl)
{
	struct gf_ctl_stats st;
	gf_ctl_stats(ctl, &st);
	return st.gpus_alloc_milli;
}

static void release(struct gf_ctl *ctl, const char *id, int attempt,
		    int replica, int want)
{
	struct gf_err e;
	assert_int_equal(gf_ctl_held_release(ctl, id, attempt, replica, &e),
			 want);
	check(ctl);
}

/*
 * One node of 8 GPUs, the core holding until gone.  A cancelled 8-GPU job
 * keeps its GPUs until its replica is released: the next 8-GPU job waits,
 * then starts on them.  A preempted job likewise: the job that preempted
 * it waits for it (and preempts nothing more, nor counts the victim
 * twice), then starts.  A node lost: its job is requeued (not counted as
 * a failure) and runs elsewhere while its old replica stays held on the
 * lost node until released.  A restart restores what is held.
 */
static void test_held_until_gone(void **state)
{
	(void)state;
	hold_mode = true;
	struct gf_ctl *ctl = empty_ctl();
	hold_mode = false;
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", "", "host=n0");
	int n0 = join(ctl, "n0", &s);
	struct gf_err e;
	const char *a = put(ctl, job("batch", 1, 8));
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, a), GF_JOB_RUNNING);
	assert_int_equal(gf_ctl_cancel(ctl, a, 1100, &e), 0);
	check(ctl);
	assert_int_equal(st(ctl, a), GF_JOB_CANCELLED);
	assert_int_equal(J(ctl, a)->nheld, 1);
	assert_string_equal(J(ctl, a)->held[0].why, "cancelled");
	assert_int_equal(J(ctl, a)->held[0].since_ms, 1100);
	assert_int_equal(J(ctl, a)->held[0].place.ngpus, 8);
	assert_int_equal(gf_ctl_nholding(ctl), 1);
	assert_int_equal(gf_ctl_node_replicas(ctl, n0), 1);
	assert_int_equal(alloc_milli(ctl), 8000);
	const char *b = put(ctl, job("batch", 1, 8));
	pass(ctl, 1200, NULL);
	assert_int_equal(st(ctl, b), GF_JOB_PENDING); /* a still lives */
	release(ctl, a, 2, 0, GF_ENOTFOUND);	      /* no such run */
	release(ctl, a, 1, 0, 0);
	release(ctl, a, 1, 0, GF_ENOTFOUND); /* once */
	assert_int_equal(gf_ctl_nholding(ctl), 0);
	pass(ctl, 1300, NULL);
	assert_int_equal(st(ctl, b), GF_JOB_RUNNING);
	/* preemption: c (class once, priority 10) stops b and waits */
	const char *c = put(ctl, job("once", 1, 8));
	pass(ctl, 1400, NULL);
	assert_int_equal(st(ctl, b), GF_JOB_PENDING);
	assert_int_equal(J(ctl, b)->preemptions, 1);
	assert_int_equal(J(ctl, b)->started_ms, 0);
	assert_string_equal(J(ctl, b)->held[0].why, "preempted");
	assert_int_equal(st(ctl, c), GF_JOB_PENDING);
	assert_string_equal(why(ctl, c),
			    "preempted j2: waits for their processes to be "
			    "gone");
	pass(ctl, 1500, NULL);
	pass(ctl, 1600, NULL);
	assert_int_equal(st(ctl, c), GF_JOB_PENDING);
	assert_int_equal(J(ctl, b)->preemptions, 1);
	assert_string_equal(why(ctl, c),
			    "waits for the processes of the jobs it preempted "
			    "to be gone");
	release(ctl, b, 1, 0, 0);
	pass(ctl, 1700, NULL);
	assert_int_equal(st(ctl, c), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, b), GF_JOB_PENDING);
	assert_int_equal(J(ctl, b)->attempts, 1);
	assert_int_equal(J(ctl, b)->failures, 0);
	assert_int_equal(J(ctl, b)->requeues, 0);
	/* a node lost: c requeued onto n1, its old replica held on n0 */
	s = spec_of(8, "h100-80gb", "", "host=n1");
	join(ctl, "n1", &s);
	ready(ctl, n0, false, "no heartbeat for 15 s", NULL);
	assert_int_equal(st(ctl, c), GF_JOB_PENDING);
	assert_int_equal(J(ctl, c)->requeues, 1);
	assert_int_equal(J(ctl, c)->nheld, 1);
	pass(ctl, 1800, NULL);
	assert_int_equal(st(ctl, c), GF_JOB_RUNNING);
	assert_string_equal(node_of(ctl, c, 0), "n1");
	assert_int_equal(J(ctl, c)->attempts, 2);
	/* n0 back: still held until its agent says the replica is gone */
	ready(ctl, n0, true, NULL, NULL);
	pass(ctl, 1900, NULL);
	assert_int_equal(st(ctl, b), GF_JOB_PENDING);
	assert_int_equal(gf_ctl_node_replicas(ctl, n0), 1);
	/* a restart: the held replica is restored with the job */
	struct gf_job *copy = gf_calloc(1, sizeof(*copy));
	*copy = *J(ctl, c);
	copy->spec.command = NULL;
	copy->place = gf_calloc(1, sizeof(*copy->place));
	copy->place[0] = J(ctl, c)->place[0];
	copy->held = gf_calloc(1, sizeof(*copy->held));
	copy->held[0] = J(ctl, c)->held[0];
	gf_ctl_free(ctl);
	hold_mode = true;
	ctl = empty_ctl();
	hold_mode = false;
	s = spec_of(8, "h100-80gb", "", "host=n0");
	add(ctl, "n0", &s, NULL);
	s = spec_of(8, "h100-80gb", "", "host=n1");
	add(ctl, "n1", &s, NULL);
	assert_int_equal(gf_ctl_add(ctl, copy, &e), 0);
	check(ctl);
	assert_int_equal(alloc_milli(ctl), 16000);
	release(ctl, "j3", 1, 0, 0);
	assert_int_equal(alloc_milli(ctl), 8000);
	gf_ctl_free(ctl);
}

/* A drained node takes nothing new; what runs there runs on. */
static void test_drain(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", "", "host=n0");
	int n0 = join(ctl, "n0", &s);
	struct gf_err e;
	const char *a = put(ctl, job("batch", 1, 4));
	pass(ctl, 1000, NULL);
	assert_int_equal(gf_ctl_node_drain(ctl, n0, true, &e), 0);
	check(ctl);
	assert_true(gf_ctl_node_is_draining(ctl, n0));
	const char *b = put(ctl, job("batch", 1, 4));
	pass(ctl, 1100, NULL);
	assert_int_equal(st(ctl, a), GF_JOB_RUNNING);
	assert_int_equal(st(ctl, b), GF_JOB_PENDING);
	assert_int_equal(gf_ctl_node_replicas(ctl, n0), 1);
	assert_int_equal(gf_ctl_finish(ctl, a, 0, 1200, &e), 0);
	assert_int_equal(gf_ctl_node_replicas(ctl, n0), 0);
	/* ready again does not lift a drain */
	ready(ctl, n0, false, "quiet", NULL);
	ready(ctl, n0, true, NULL, NULL);
	pass(ctl, 1300, NULL);
	assert_int_equal(st(ctl, b), GF_JOB_PENDING);
	assert_int_equal(gf_ctl_node_drain(ctl, n0, false, &e), 0);
	pass(ctl, 1400, NULL);
	assert_int_equal(st(ctl, b), GF_JOB_RUNNING);
	assert_int_equal(gf_ctl_node_drain(ctl, 7, true, &e), GF_EINVAL);
	gf_ctl_free(ctl);
}

/* A gang without gpu_model stays on one model: 2 x 8 GPUs with one H100
 * and one L40S node free waits; a second H100 node lets it start there. */
static void test_gang_one_model(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", "", "host=h1");
	join(ctl, "h1", &s);
	s = spec_of(8, "l40s", "", "host=l1");
	join(ctl, "l1", &s);
	const char *g = put(ctl, job("batch", 2, 8));
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, g), GF_JOB_PENDING);
	/* admission says so: only one node of each model */
	struct gf_err e;
	struct gf_job *probe = job("batch", 2, 8);
	assert_int_equal(gf_ctl_admit(ctl, &probe->spec, &e), GF_ENEVER);
	assert_string_equal(e.msg, "gang of 2 replicas does not fit any "
				   "block on one GPU model: the largest holds "
				   "1");
	s = spec_of(8, "h100-80gb", "", "host=h2");
	join(ctl, "h2", &s);
	pass(ctl, 1100, NULL);
	assert_int_equal(st(ctl, g), GF_JOB_RUNNING);
	assert_int_equal(node_of(ctl, g, 0)[0], 'h');
	assert_int_equal(node_of(ctl, g, 1)[0], 'h');
	assert_int_equal(gf_ctl_admit(ctl, &probe->spec, &e), 0);
	gf_job_release(probe);
	gf_free(probe);
	/* a gang naming no GPU kind is not bound to a model */
	struct gf_job *cpu = job("batch", 2, 0);
	const char *c = put(ctl, cpu);
	pass(ctl, 1200, NULL);
	assert_int_equal(st(ctl, c), GF_JOB_RUNNING);
	gf_ctl_free(ctl);
}

/* Why a job waits names what is short where (issue 19): a 1-GPU job
 * beside 5 free GPUs but 0.7 of a CPU; a node drained. */
static void test_reasons(void **state)
{
	(void)state;
	struct gf_ctl *ctl = empty_ctl();
	struct gf_ctl_node_spec s = spec_of(8, "h100-80gb", "", "host=b");
	s.cpu_milli = 4000;
	int b = join(ctl, "hgx-b", &s);
	struct gf_job *big = job("batch", 1, 3);
	big->spec.cpu_milli = 3300;
	const char *a = put(ctl, big);
	const char *one = put(ctl, job("batch", 1, 1));
	pass(ctl, 1000, NULL);
	assert_int_equal(st(ctl, a), GF_JOB_RUNNING);
	assert_string_equal(why(ctl, one),
			    "hgx-b has 5 free GPUs but 700 of 1000 milli-CPU "
			    "free");
	struct gf_err e;
	assert_int_equal(gf_ctl_node_drain(ctl, b, true, &e), 0);
	struct gf_job *small = job("batch", 1, 1);
	small->spec.cpu_milli = 100;
	const char *c = put(ctl, small);
	pass(ctl, 1100, NULL);
	assert_string_equal(why(ctl, c),
			    "every candidate node is NotReady or draining (1 "
			    "node)");
	gf_ctl_free(ctl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_empty),
		cmocka_unit_test(test_not_ready),
		cmocka_unit_test(test_not_ready_later),
		cmocka_unit_test(test_not_ready_long_reason),
		cmocka_unit_test(test_many_names),
		cmocka_unit_test(test_gpu_health),
		cmocka_unit_test(test_update_labels_block),
		cmocka_unit_test(test_update_mig_shape),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_restart_mig_mode),
		cmocka_unit_test(test_topology),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_gfd_products_agents),
		cmocka_unit_test(test_quota_alias_agents),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_held_until_gone),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_gang_one_model),
		cmocka_unit_test(test_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
