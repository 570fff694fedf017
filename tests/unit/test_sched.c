/*
 * test_sched.c - the placement engine: each policy's score on cases
 * computed by hand from reference/fgd-experiment.md 1.3, the filter,
 * the rank tie-break, fragmentation and the typical mix.
 */
#include <gpufleet/frag.h>
#include <gpufleet/sched.h>
#include <gpufleet/sim.h>
#include <gpufleet/workload.h>

#include "helpers.h"

/* One node: 64 cores, GPUs with 1000, 1000, 500 and 0 milli free. */
static struct gf_cluster *one_node(void)
{
	struct gf_cluster *c = calloc(1, sizeof(*c));
	gf_cluster_init(c);
	int m = gf_cluster_model(c, "G2");
	gf_cluster_add(c, "n0", 64000, 262144, 4, m);
	c->nodes[0].gpu_left[2] = 500;
	c->nodes[0].gpu_left[3] = 0;
	gf_cnode_sync(&c->nodes[0]);
	/* a "share" pod and a "1-gpu" pod are on it */
	c->nodes[0].tags = (1u << 0) | (1u << 1);
	c->nodes[0].gpu_pods = 2;
	return c;
}

static void free_cluster(struct gf_cluster *c)
{
	gf_cluster_release(c);
	free(c);
}

static int score(struct gf_cluster *c, enum gf_policy p,
		 const struct gf_typical *t, int nt, const struct gf_req *r,
		 int *gpu)
{
	struct gf_sched s;
	assert_int_equal(gf_sched_init(&s, c, p, t, nt, 1, 1), 0);
	int sc = gf_sched_score(&s, 0, r, gpu);
	gf_sched_release(&s);
	return sc;
}

static void test_scores_by_hand(void **state)
{
	(void)state;
	struct gf_cluster *c = one_node();
	struct gf_req share = {
		.cpu = 8000, .mem = 1024, .ngpus = 1, .gpu_milli = 300
	};
	int gpu;
	/* L = 2500: s = .5 (56000/128000) + .5 (2200/8000) = .35625 */
	assert_int_equal(score(c, GF_POLICY_BESTFIT, NULL, 0, &share, &gpu),
			 64);
	/* d = (.5 x .0625 + .3125 x .0375) / 2 = .021484375 */
	assert_int_equal(score(c, GF_POLICY_DOTPROD, NULL, 0, &share, &gpu),
			 97);
	/* base floor(25 x 5500 / 8000) = 17; tag present with another: +50 */
	assert_int_equal(score(c, GF_POLICY_CLUSTERING, NULL, 0, &share, &gpu),
			 67);
	/* packing: shared GPU 2 (500 free): 100 - (50 / 10) = 95 */
	assert_int_equal(score(c, GF_POLICY_PACKING, NULL, 0, &share, &gpu),
			 95);
	struct gf_req two = { .cpu = 8000, .ngpus = 2, .gpu_milli = 1000 };
	/* two fully free GPUs used on a used node: max(50 - 2, 33) */
	assert_int_equal(score(c, GF_POLICY_PACKING, NULL, 0, &two, &gpu), 48);
	/* clustering: tag "2-gpu" absent, node has GPU pods: base only */
	assert_int_equal(score(c, GF_POLICY_CLUSTERING, NULL, 0, &two, &gpu),
			 17);
	struct gf_req cpu_only = { .cpu = 4000 };
	assert_int_equal(score(c, GF_POLICY_PACKING, NULL, 0, &cpu_only, &gpu),
			 0);

	/* FGD with one typical request (1 GPU, 500 milli): F(node) = 0.
	 * On GPU 2 the 300 leaves 200 unusable: dF = -200, 100 sigma(-.2)
	 * = 45.  On GPU 0 nothing becomes unusable: dF = 0, score 50. */
	struct gf_typical t = {
		.cpu = 1000, .gpu_milli = 500, .ngpus = 1, .p = 1.0
	};
	assert_true(gf_frag_node(&t, 1, &c->nodes[0]) == 0.0);
	assert_int_equal(score(c, GF_POLICY_FGD, &t, 1, &share, &gpu), 50);
	assert_int_equal(gpu, 0); /* best fit would take GPU 2 */
	int16_t after[4] = { 1000, 1000, 200, 0 };
	assert_true(gf_frag_state(&t, 1, 0, 56000, after, 4) == 200.0);
	free_cluster(c);

	/* an empty 4-GPU node for packing: max(33 - 4, 4) */
	c = one_node();
	c->nodes[0].gpu_left[2] = c->nodes[0].gpu_left[3] = 1000;
	gf_cnode_sync(&c->nodes[0]);
	assert_int_equal(score(c, GF_POLICY_PACKING, NULL, 0, &share, &gpu),
			 29);
	free_cluster(c);
}

static void test_frag_classes(void **state)
{
	(void)state;
	/* F counts all idle GPU for CPU-only requests, for requests whose
	 * model list excludes the node, and when CPU is short */
	int16_t left[2] = { 600, 300 };
	struct gf_typical t[4] = {
		{ .cpu = 0, .ngpus = 0, .p = 0.25 },
		{ .cpu = 1000,
		  .gpu_milli = 500,
		  .ngpus = 1,
		  .spec = 2,
		  .p = 0.25 }, /* model 1 only */
		{ .cpu = 99000, .gpu_milli = 100, .ngpus = 1, .p = 0.25 },
		{ .cpu = 1000, .gpu_milli = 500, .ngpus = 1, .p = 0.25 },
	};
	/* 900 + 900 + 900 + 300 (only GPU 1 is too small) */
	double f = gf_frag_state(t, 4, 0, 8000, left, 2);
	assert_true(f > 749.99 && f < 750.01);
	/* two whole GPUs needed, one free: all idle counts */
	struct gf_typical w = {
		.cpu = 0, .gpu_milli = 1000, .ngpus = 2, .p = 1
	};
	int16_t l2[2] = { 1000, 400 };
	assert_true(gf_frag_state(&w, 1, 0, 8000, l2, 2) == 1400.0);
}

static void test_select_and_filter(void **state)
{
	(void)state;
	struct gf_cluster c;
	gf_cluster_init(&c);
	int a = gf_cluster_model(&c, "A"), b = gf_cluster_model(&c, "B");
	for (int i = 0; i < 3; i++)
		gf_cluster_add(&c, "n", 32000, 65536, 2, i == 2 ? b : a);
	c.nodes[0].rank = 5; /* nodes 0 and 1 are identical */
	c.nodes[1].rank = 2;
	c.nodes[2].rank = 0;
	struct gf_sched s;
	assert_int_equal(
		gf_sched_init(&s, &c, GF_POLICY_BESTFIT, NULL, 0, 1, 1), 0);
	/* only model A allowed: node 2 (rank 0) is filtered out, and the
	 * tie between 0 and 1 goes to the smaller rank */
	struct gf_req r = { .cpu = 1000,
			    .mem = 10,
			    .ngpus = 1,
			    .gpu_milli = 1000,
			    .spec = 1u << a };
	struct gf_placement p;
	assert_int_equal(gf_sched_place(&s, &r, &p), 0);
	assert_int_equal(p.node, 1);
	assert_int_equal(p.gpus[0], 0);
	assert_int_equal(c.nodes[1].gpu_left[0], 0);
	assert_int_equal(s.alloc_milli, 1000);
	/* too much memory anywhere: not placed, nothing changed */
	struct gf_req big = { .cpu = 1000, .mem = 70000 };
	assert_int_equal(gf_sched_place(&s, &big, &p), GF_ENOTFOUND);
	/* three whole GPUs on 2-GPU nodes: never */
	struct gf_req three = { .cpu = 1, .ngpus = 3, .gpu_milli = 1000 };
	assert_int_equal(gf_sched_place(&s, &three, &p), GF_ENOTFOUND);
	char msg[128];
	assert_int_equal(gf_cluster_check(&c, msg, sizeof(msg)), 0);
	gf_sched_release(&s);
	gf_cluster_release(&c);
}

static void test_typical_and_arrivals(void **state)
{
	(void)state;
	struct gf_workload w;
	gf_workload_init(&w);
	struct gf_req r1 = { .cpu = 1000, .ngpus = 1, .gpu_milli = 500 };
	struct gf_req r2 = { .cpu = 2000, .ngpus = 1, .gpu_milli = 1000 };
	struct gf_req r3 = { .cpu = 4000 };
	for (int i = 0; i < 60; i++)
		gf_workload_add(&w, "a", &r1);
	for (int i = 0; i < 38; i++)
		gf_workload_add(&w, "b", &r2);
	for (int i = 0; i < 2; i++)
		gf_workload_add(&w, "c", &r3);
	struct gf_typical *t;
	/* 60 + 38 = 98 >= 95: the rare CPU-only request is left out */
	int nt = gf_typical_build(w.reqs, w.n, 0.95, &t);
	assert_int_equal(nt, 2);
	assert_int_equal(t[0].gpu_milli, 500);
	assert_true(t[0].p > 0.612 && t[0].p < 0.613); /* 60 / 98 */
	free(t);
	gf_workload_classify(&w);
	assert_int_equal(w.nclasses, 3);

	/* demand 60 x 500 + 38 x 1000 = 68,000 milli; target 1.3 x 100,000 */
	struct gf_fill_opts o = { .seed = 3, .tune = 1.3, .resample = true };
	int *seq;
	int n = gf_fill_arrivals(&w, 100000, &o, &seq);
	long total = 0;
	for (int i = 0; i < n; i++)
		total += (long)w.reqs[seq[i]].ngpus * w.reqs[seq[i]].gpu_milli;
	assert_true(n > 100);
	assert_true(total <= 130000 && total > 128000);
	free(seq);
	/* above the target: random deletions down to it */
	n = gf_fill_arrivals(&w, 40000, &o, &seq);
	total = 0;
	for (int i = 0; i < n; i++)
		total += (long)w.reqs[seq[i]].ngpus * w.reqs[seq[i]].gpu_milli;
	assert_true(total <= 52000 && n < 100);
	free(seq);
	gf_workload_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scores_by_hand),
		cmocka_unit_test(test_frag_classes),
		cmocka_unit_test(test_select_and_filter),
		cmocka_unit_test(test_typical_and_arrivals),
	};
	return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
