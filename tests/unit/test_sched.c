/*
 * test_sched.c - the placement engine: each policy's score on cases
 * computed by hand from reference/fgd-experiment.md 1.3, the filter,
 * the rank tie-break, fragmentation and the typical mix; nodes added at
 * run time (the same answers as nodes there from the start), reshaped,
 * GPUs held and nodes cordoned by hand and at random, mixed with work
 * coming and going, ending exactly where they started.
 */
#include <math.h>

#include <gpufleet/frag.h>
#include <gpufleet/rng.h>
#include <gpufleet/sched.h>
#include <gpufleet/sim.h>
#include <gpufleet/workload.h>

#include "core/place/sched_impl.h"
#include "helpers.h"
#include "util/fmt.h"

/* One node: 64 cores, GPUs with 1000, 1000, 500 and 0 milli free. */
static struct gf_cluster *one_node(void)
{
	struct gf_cluster *c = calloc(1, sizeof(*c));
	gf_cluster_init(c);
	int m = gf_cluster_model(c, "G2");
	assert_true(gf_cluster_add(c, "n0", 64000, 262144, 4, m) >= 0);
	c->nodes[0].gpu_left[2] = 500;
	c->nodes[0].gpu_left[3] = 0;
	gf_cnode_sync(&c->nodes[0]);
	/* a "share" pod and a "1-gpu" pod are on it */
	c->nodes[0].tags = (1u << 0) | (1u << 1);
	c->nodes[0].tag_pods[0] = c->nodes[0].tag_pods[1] = 1;
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
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(c, p, t, nt, 1, 1, &s), 0);
	int sc = gf_sched_score(s, 0, r, gpu);
	gf_sched_free(s);
	return sc;
}

/* FGD+'s pressure spreads demand only some models can hold over those
 * models as the GPUs that could hold it, so a model's name does not
 * matter: 8-GPU requests (half the mix, 8/9 of the GPU demand) fit the
 * 20 8-GPU nodes of BIG and the one of SMALL, not the 2-GPU nodes of
 * TWO.  Each 8-GPU model's pressure is its share of that demand over
 * its share of the idle GPU, (8/9) (160/168) / (160/188) = 0.9947 for
 * BIG and (8/9) (8/168) / (8/188) the same for SMALL: 20 points off a
 * 1-GPU request on either (25 / 1250 per milli).  Spread equally per
 * model, SMALL's one node bore half the demand (209 points, BIG 10),
 * and work that could run anywhere was kept off it. */
static void test_fgdplus_pressure_spread(void **state)
{
	(void)state;
	struct gf_cluster *c = calloc(1, sizeof(*c));
	gf_cluster_init(c);
	int big = gf_cluster_model(c, "BIG"),
	    small = gf_cluster_model(c, "SMALL"),
	    two = gf_cluster_model(c, "TWO");
	assert_true(big >= 0 && small >= 0 && two >= 0);
	char name[16];
	for (int i = 0; i < 31; i++) {
		assert_int_equal(gf_fmt(name, sizeof(name), "n%d", i), 0);
		int m = i < 20 ? big : i == 20 ? small : two;
		assert_true(gf_cluster_add(c, name, m == two ? 32000 : 96000,
					   262144, m == two ? 2 : 8, m) >= 0);
	}
	const struct gf_typical t[2] = {
		{ .cpu = 64000, .gpu_milli = 1000, .ngpus = 8, .p = 0.5 },
		{ .cpu = 8000, .gpu_milli = 1000, .ngpus = 1, .p = 0.5 },
	};
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(c, GF_POLICY_FGDPLUS, t, 2, 1, 1, &s), 0);
	struct gf_req one = {
		.cpu = 8000, .mem = 1024, .ngpus = 1, .gpu_milli = 1000
	};
	int gpu;
	const int nodes[2] = { 0, 20 }; /* BIG's first, SMALL's */
	for (int k = 0; k < 2; k++)
		assert_int_equal(
			gf_sched_score_peek(s, nodes[k], &one, &gpu) -
				gf_sched_score(s, nodes[k], &one, &gpu),
			20);
	gf_sched_free(s);
	free_cluster(c);
}

/* Demand that only some nodes of a model can hold presses on those
 * nodes, not on the model's others: 8-GPU requests of 120 cores (half
 * the mix, 8/9 of the GPU demand) fit only BIG's two 128-core nodes;
 * BIG's ten 96-core nodes and OTHER's ten hold none.  The 128-core
 * group's pressure is (8/9) / (16/176) = 9.78: 196 points off a 1-GPU
 * request there (25 / 1250 per milli), none on the 96-core nodes of
 * either model.  Per model, BIG's 96-core nodes bore it too (33
 * points on each of BIG's twelve), and work that could run anywhere
 * still took the 128-core nodes' CPU. */
static void test_fgdplus_pressure_group(void **state)
{
	(void)state;
	struct gf_cluster *c = calloc(1, sizeof(*c));
	gf_cluster_init(c);
	int big = gf_cluster_model(c, "BIG"),
	    other = gf_cluster_model(c, "OTHER");
	assert_true(big >= 0 && other >= 0);
	char name[16];
	for (int i = 0; i < 22; i++) {
		assert_int_equal(gf_fmt(name, sizeof(name), "n%d", i), 0);
		assert_true(gf_cluster_add(c, name, i < 2 ? 128000 : 96000,
					   524288, 8,
					   i < 12 ? big : other) >= 0);
	}
	const struct gf_typical t[2] = {
		{ .cpu = 120000, .gpu_milli = 1000, .ngpus = 8, .p = 0.5 },
		{ .cpu = 8000, .gpu_milli = 1000, .ngpus = 1, .p = 0.5 },
	};
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(c, GF_POLICY_FGDPLUS, t, 2, 1, 1, &s), 0);
	struct gf_req one = {
		.cpu = 8000, .mem = 1024, .ngpus = 1, .gpu_milli = 1000
	};
	int gpu;
	const int nodes[4] = { 0, 1, 2, 12 }; /* 128 cores; BIG's, OTHER's */
	const int want[4] = { 196, 196, 0, 0 };
	for (int k = 0; k < 4; k++)
		assert_int_equal(
			gf_sched_score_peek(s, nodes[k], &one, &gpu) -
				gf_sched_score(s, nodes[k], &one, &gpu),
			want[k]);
	char msg[160];
	assert_int_equal(gf_sched_check(s, msg, sizeof(msg)), 0);
	/* ablation: without the pressure term, no node pays it */
	unsigned mask;
	assert_int_equal(gf_fgdplus_terms_parse("pressure", &mask), 0);
	assert_int_equal(gf_sched_set_fgdplus_without(s, mask), 0);
	assert_int_equal(gf_sched_score_peek(s, 0, &one, &gpu) -
				 gf_sched_score(s, 0, &one, &gpu),
			 0);
	assert_int_equal(gf_sched_set_fgdplus_without(s, 8), GF_EINVAL);
	gf_sched_free(s);
	free_cluster(c);
}

/* --fgdplus-without's words: a comma list of the three terms. */
static void test_fgdplus_terms_parse(void **state)
{
	(void)state;
	unsigned m;
	assert_int_equal(
		gf_fgdplus_terms_parse("stranded,packing,pressure", &m), 0);
	assert_int_equal(m, GF_FGDPLUS_ALL);
	assert_int_equal(gf_fgdplus_terms_parse("packing", &m), 0);
	assert_int_equal(m, GF_FGDPLUS_PACKING);
	assert_int_equal(gf_fgdplus_terms_parse("", &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(gf_fgdplus_terms_parse("pack", &m), GF_EINVAL);
	assert_int_equal(gf_fgdplus_terms_parse("stranded,,x", &m), GF_EINVAL);
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

/* FGD+'s T is honoured at run time: one typical request (1 GPU, 800
 * milli), F = 500 now (GPU 2's 500 is too small).  A 300 share on GPU 2
 * leaves F = 200 (a drop of 300, no packing loss: 500 holds no 800
 * either way); on a free GPU it would lose a whole 800 slot (loss 1,
 * -1000 points).  Score trunc(100 sigma(300 / T)): 55 at T = 1250, 95
 * at T = 100, from the same engine (its score cache emptied). */
static void test_fgdplus_t(void **state)
{
	(void)state;
	struct gf_cluster *c = one_node();
	struct gf_req share = {
		.cpu = 8000, .mem = 1024, .ngpus = 1, .gpu_milli = 300
	};
	struct gf_typical t = {
		.cpu = 1000, .gpu_milli = 800, .ngpus = 1, .p = 1.0
	};
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(c, GF_POLICY_FGDPLUS, &t, 1, 1, 1, &s),
			 0);
	int gpu;
	assert_int_equal(gf_sched_score(s, 0, &share, &gpu), 55);
	assert_int_equal(gpu, 2);
	/* the score generation moves with every setting scores read */
	uint64_t gen = gf_sched_score_gen(s);
	assert_int_equal(gf_sched_set_fgdplus_t(s, 100.0), 0);
	assert_int_equal(gf_sched_score_gen(s), ++gen);
	assert_int_equal(gf_sched_score(s, 0, &share, &gpu), 95);
	assert_int_equal(gf_sched_score_peek(s, 0, &share, &gpu), 95);
	const double bad[] = { 0.0, -1.0, NAN, 5.0, 1e9 };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		assert_int_equal(gf_sched_set_fgdplus_t(s, bad[k]), GF_EINVAL);
	assert_int_equal(gf_sched_score_gen(s), gen); /* refused: kept */
	assert_int_equal(gf_sched_score(s, 0, &share, &gpu), 95); /* kept */
	assert_int_equal(gf_sched_set_fgdplus_t(s, GF_FGDPLUS_T_DEFAULT), 0);
	assert_int_equal(gf_sched_score(s, 0, &share, &gpu), 55);
	assert_int_equal(gf_sched_set_fgdplus_without(s, GF_FGDPLUS_PACKING),
			 0);
	assert_int_equal(gf_sched_set_fgdplus_without(s, 0), 0);
	assert_int_equal(gf_sched_set_typical(s, &t, 1), 0);
	assert_int_equal(gf_sched_score_gen(s), gen + 4);
	assert_int_equal(gf_sched_score(s, 0, &share, &gpu), 55);
	gf_sched_free(s);
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
		assert_true(gf_cluster_add(&c, "n", 32000, 65536, 2,
					   i == 2 ? b : a) >= 0);
	c.nodes[0].rank = 5; /* nodes 0 and 1 are identical */
	c.nodes[1].rank = 2;
	c.nodes[2].rank = 0;
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(&c, GF_POLICY_BESTFIT, NULL, 0, 1, 1, &s),
			 0);
	/* only model A allowed: node 2 (rank 0) is filtered out, and the
	 * tie between 0 and 1 goes to the smaller rank */
	struct gf_req r = { .cpu = 1000,
			    .mem = 10,
			    .ngpus = 1,
			    .gpu_milli = 1000,
			    .spec = 1u << a };
	struct gf_placement p;
	assert_int_equal(gf_sched_place(s, &r, &p), 0);
	assert_int_equal(p.node, 1);
	assert_int_equal(p.gpus[0], 0);
	assert_int_equal(c.nodes[1].gpu_left[0], 0);
	assert_int_equal(gf_sched_alloc_milli(s), 1000);
	/* too much memory anywhere: not placed, nothing changed */
	struct gf_req big = { .cpu = 1000, .mem = 70000 };
	assert_int_equal(gf_sched_place(s, &big, &p), GF_ENOTFOUND);
	/* three whole GPUs on 2-GPU nodes: never */
	struct gf_req three = { .cpu = 1, .ngpus = 3, .gpu_milli = 1000 };
	assert_int_equal(gf_sched_place(s, &three, &p), GF_ENOTFOUND);
	char msg[128];
	assert_int_equal(gf_cluster_check(&c, msg, sizeof(msg)), 0);
	gf_sched_free(s);
	gf_cluster_release(&c);
}

/* CPU work apart (gf_sched_set_cpu_apart): a job without GPU goes to a
 * node without GPU first, then to a GPU node only beyond what its free
 * GPUs keep (half their share); off, the engine places as before. */
static void test_cpu_apart(void **state)
{
	(void)state;
	/* the rule by hand: 8 GPUs, 64 cores, 1 TiB */
	assert_int_equal(gf_cpu_kept(64000, 8, 8000), 32000);
	assert_int_equal(gf_cpu_kept(64000, 8, 4000), 16000);
	assert_int_equal(gf_cpu_kept(64000, 8, 500), 2000);
	assert_int_equal(gf_cpu_kept(64000, 0, 0), 0);
	assert_int_equal(gf_cpu_kept(64000, 8, 0), 0);
	assert_int_equal(gf_mem_kept(1048576, 8, 8000), 524288);
	assert_int_equal(gf_mem_kept(1048576, 8, 2000), 131072);
	for (int on = 0; on < 2; on++) {
		struct gf_cluster c;
		gf_cluster_init(&c);
		int a = gf_cluster_model(&c, "A");
		assert_true(a >= 0);
		/* packing scores 0 without GPU: rank decides, the GPU node */
		assert_int_equal(
			gf_cluster_add(&c, "gpu", 64000, 1048576, 8, a), 0);
		assert_int_equal(gf_cluster_add(&c, "cpu", 128000, 16384, 0, a),
				 1);
		c.nodes[0].rank = 0;
		c.nodes[1].rank = 1;
		struct gf_sched *s;
		assert_int_equal(
			gf_sched_new(&c, GF_POLICY_PACKING, NULL, 0, 1, 1, &s),
			0);
		gf_sched_set_cpu_apart(s, on);
		struct gf_req cpu = { .cpu = 4000, .mem = 8192 };
		struct gf_placement p;
		assert_int_equal(gf_sched_place(s, &cpu, &p), 0);
		/* on: the CPU node, the GPU node free */
		assert_int_equal(p.node, on ? 1 : 0);
		if (!on) {
			gf_sched_free(s);
			gf_cluster_release(&c);
			continue;
		}
		/* a selector that allows only the GPU node: there */
		uint8_t only_gpu[2] = { 1, 0 };
		assert_int_equal(gf_sched_place_in(s, &cpu, only_gpu, &p), 0);
		assert_int_equal(p.node, 0);
		/* the CPU node's memory is short (8192 MiB left): the GPU
		 * node lends 32 of 64 cores when idle; 4 taken, 28 to lend */
		struct gf_req big = { .cpu = 28000, .mem = 9000 };
		assert_int_equal(gf_sched_place(s, &big, &p), 0);
		assert_int_equal(p.node, 0);
		struct gf_req one = { .cpu = 1000 };
		assert_int_equal(gf_sched_place(s, &one, &p), 0);
		assert_int_equal(p.node, 1); /* room on the CPU node */
		struct gf_req more = { .cpu = 1000, .mem = 9000 };
		assert_int_equal(gf_sched_place(s, &more, &p), GF_ENOTFOUND);
		/* a GPU job takes what its GPUs keep; then 4 GPUs busy keep
		 * 16 cores, 64 - 32 - 8 = 24 left, 8 lent */
		struct gf_req gpus = { .cpu = 8000,
				       .ngpus = 4,
				       .gpu_milli = 1000 };
		assert_int_equal(gf_sched_place(s, &gpus, &p), 0);
		assert_int_equal(p.node, 0);
		struct gf_req eight = { .cpu = 8000, .mem = 9000 };
		assert_int_equal(gf_sched_place(s, &eight, &p), 0);
		assert_int_equal(p.node, 0);
		assert_int_equal(gf_sched_place(s, &more, &p), GF_ENOTFOUND);
		/* a GPU request is not held back by the rule */
		struct gf_req g1 = { .cpu = 16000,
				     .ngpus = 4,
				     .gpu_milli = 1000 };
		assert_int_equal(gf_sched_place(s, &g1, &p), 0);
		char msg[128];
		assert_int_equal(gf_sched_check(s, msg, sizeof(msg)), 0);
		gf_sched_free(s);
		gf_cluster_release(&c);
	}
}

/* A mixed cluster: 2-, 4- and 8-GPU nodes of two models, varied CPU. */
static void mixed_cluster(struct gf_cluster *c, int nodes)
{
	gf_cluster_init(c);
	int a = gf_cluster_model(c, "A"), b = gf_cluster_model(c, "B");
	for (int i = 0; i < nodes; i++) {
		static const int gpus[] = { 2, 4, 8, 8, 0 };
		assert_true(gf_cluster_add(c, "n", 16000 * (1 + i % 5), 131072,
					   gpus[i % 5], i % 3 ? a : b) >= 0);
		c->nodes[i].rank = (uint32_t)((i * 7919) % nodes);
	}
}

static struct gf_req random_req(struct gf_rng *rng, int nmodels)
{
	static const int16_t shares[] = { 100, 250, 300, 500, 700 };
	static const uint16_t counts[] = { 1, 1, 2, 4, 8 };
	struct gf_req r = { .cpu = (int32_t)(1000 * (1 + gf_rng_below(rng, 8))),
			    .mem = (int64_t)(1024 *
					     (1 + gf_rng_below(rng, 8))) };
	uint64_t kind = gf_rng_below(rng, 10);
	if (kind < 4) {
		r.ngpus = 1;
		r.gpu_milli = shares[gf_rng_below(rng, 5)];
	} else if (kind < 9) {
		r.ngpus = counts[gf_rng_below(rng, 5)];
		r.gpu_milli = GF_GPU_MILLI;
	}
	if (gf_rng_below(rng, 4) == 0 && r.ngpus)
		r.spec = 1u << gf_rng_below(rng, (uint64_t)nmodels);
	return r;
}

struct held {
	struct gf_req r;
	struct gf_placement p;
};

static void assert_checked(const struct gf_sched *s)
{
	char msg[256];
	int rc = gf_sched_check(s, msg, sizeof(msg));
	if (rc)
		print_message("check: %s\n", msg);
	assert_int_equal(rc, 0);
}

/* Place and unplace at random, checking after every step; unplacing
 * everything, in a random order, returns the engine to where it began. */
static void test_place_unplace_random(void **state)
{
	(void)state;
	for (int pol = 0; pol < GF_POLICY_COUNT; pol++) {
		struct gf_cluster c;
		mixed_cluster(&c, 60);
		struct gf_rng rng;
		gf_rng_seed(&rng, 100 + (uint64_t)pol);
		struct gf_req mix[64];
		/* a class is a request shape: cls = its index in the mix */
		for (int i = 0; i < 64; i++) {
			mix[i] = random_req(&rng, c.nmodels);
			mix[i].cls = (uint16_t)i;
		}
		struct gf_typical *typ;
		int nt = gf_typical_build(mix, 64, 0.95, &typ);
		assert_true(nt > 0);
		struct gf_sched *s;
		assert_int_equal(gf_sched_new(&c, (enum gf_policy)pol, typ, nt,
					      64, 9, &s),
				 0);
		struct gf_cnode *before = calloc((size_t)c.n, sizeof(*before));
		memcpy(before, c.nodes, (size_t)c.n * sizeof(*before));
		double *frag0 = calloc((size_t)c.n, sizeof(*frag0));
		memcpy(frag0, s->frag, (size_t)c.n * sizeof(*frag0));
		uint16_t *bucket0 = calloc((size_t)c.n, sizeof(*bucket0));
		memcpy(bucket0, s->bucket_of, (size_t)c.n * sizeof(*bucket0));
		int64_t frag_q0 = s->frag_q, idle0 = gf_sched_idle_milli(s);
		struct held *h = calloc(4000, sizeof(*h));
		int nh = 0, placed = 0, unplaced = 0;
		for (int step = 0; step < 3000; step++) {
			if (nh == 0 || gf_rng_below(&rng, 10) < 6) {
				h[nh].r = mix[gf_rng_below(&rng, 64)];
				if (gf_sched_place(s, &h[nh].r, &h[nh].p) ==
				    0) {
					nh++;
					placed++;
				}
			} else {
				int k = (int)gf_rng_below(&rng, (uint64_t)nh);
				assert_int_equal(
					gf_sched_unplace(s, &h[k].r, &h[k].p),
					0);
				h[k] = h[--nh];
				unplaced++;
			}
			assert_checked(s);
		}
		assert_true(placed > 500 && unplaced > 500);
		while (nh > 0) {
			int k = (int)gf_rng_below(&rng, (uint64_t)nh);
			assert_int_equal(gf_sched_unplace(s, &h[k].r, &h[k].p),
					 0);
			h[k] = h[--nh];
			assert_checked(s);
		}
		for (int i = 0; i < c.n; i++) {
			before[i].version = c.nodes[i].version;
			assert_memory_equal(&before[i], &c.nodes[i],
					    sizeof(before[i]));
			assert_true(frag0[i] == s->frag[i]);
			assert_int_equal(bucket0[i], s->bucket_of[i]);
		}
		assert_true(frag_q0 == s->frag_q);
		assert_true(idle0 == gf_sched_idle_milli(s));
		assert_int_equal(gf_sched_alloc_milli(s), 0);
		free(h);
		free(before);
		free(frag0);
		free(bucket0);
		free(typ);
		gf_sched_free(s);
		gf_cluster_release(&c);
	}
}

/* Unplace refuses what cannot be a placement; the checker sees a broken
 * engine (so it is not a check that cannot fail). */
static void test_unplace_bad_and_checker(void **state)
{
	(void)state;
	struct gf_cluster c;
	mixed_cluster(&c, 10);
	struct gf_req mix[2] = {
		{ .cpu = 1000, .ngpus = 1, .gpu_milli = 500 },
		{ .cpu = 1000, .ngpus = 2, .gpu_milli = 1000 }
	};
	struct gf_typical *typ;
	int nt = gf_typical_build(mix, 2, 1.0, &typ);
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(&c, GF_POLICY_FGD, typ, nt, 1, 1, &s), 0);
	struct gf_placement p;
	assert_int_equal(gf_sched_place(s, &mix[0], &p), 0);
	struct gf_cnode keep = c.nodes[p.node];
	/* another GPU of that node: its share would pass 1000 */
	struct gf_placement wrong = p;
	wrong.gpus[0] = (p.gpus[0] + 1) % c.nodes[p.node].ngpus;
	assert_int_equal(gf_sched_unplace(s, &mix[0], &wrong), GF_EINVAL);
	wrong = p;
	wrong.node = c.n;
	assert_int_equal(gf_sched_unplace(s, &mix[0], &wrong), GF_EINVAL);
	/* a request that was never placed there */
	assert_int_equal(gf_sched_unplace(s, &mix[1], &p), GF_EINVAL);
	assert_memory_equal(&keep, &c.nodes[p.node], sizeof(keep));
	assert_checked(s);
	/* commit() of a placement chosen elsewhere, then back */
	struct gf_placement q = { .node = p.node == 3 ? 8 : 3,
				  .ngpus = 2,
				  .gpus = { 0, 1 } };
	assert_int_equal(gf_sched_commit(s, &mix[1], &q), 0);
	assert_int_equal(gf_sched_commit(s, &mix[1], &q), GF_EINVAL);
	assert_int_equal(gf_sched_unplace(s, &mix[1], &q), 0);
	assert_checked(s);
	/* break each kind of invariant: the checker says so */
	char msg[256];
	s->frag[2] += 1.0;
	assert_int_equal(gf_sched_check(s, msg, sizeof(msg)), GF_EINVAL);
	assert_non_null(strstr(msg, "fragmentation"));
	s->frag[2] -= 1.0;
	s->idle_milli++;
	assert_int_equal(gf_sched_check(s, msg, sizeof(msg)), GF_EINVAL);
	s->idle_milli--;
	c.nodes[2].gpu_left[5] = 0; /* no sync, no bucket move */
	assert_int_equal(gf_sched_check(s, msg, sizeof(msg)), GF_EINVAL);
	free(typ);
	gf_sched_free(s);
	gf_cluster_release(&c);
}

/* Classes given as shapes come (the controller's way), node masks, and a
 * typical workload replaced: all through the checker. */
static void test_classify_mask_typical(void **state)
{
	(void)state;
	struct gf_cluster c;
	mixed_cluster(&c, 40);
	struct gf_req mix[4] = {
		{ .cpu = 1000, .ngpus = 1, .gpu_milli = 250 },
		{ .cpu = 2000, .ngpus = 2, .gpu_milli = 1000 },
		{ .cpu = 1000, .ngpus = 1, .gpu_milli = 500 },
		{ .cpu = 4000, .ngpus = 8, .gpu_milli = 1000 },
	};
	struct gf_typical *typ, *typ2;
	int nt = gf_typical_build(mix, 2, 1.0, &typ);
	int nt2 = gf_typical_build(mix + 2, 2, 1.0, &typ2);
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(&c, GF_POLICY_FGD, typ, nt, 1, 3, &s), 0);
	/* same shape, same id; new shapes, new ids past the given ones */
	struct gf_req a = mix[0], b = mix[1], a2 = mix[0];
	a2.mem = 77; /* memory is not part of the shape */
	gf_sched_classify(s, &a);
	gf_sched_classify(s, &b);
	gf_sched_classify(s, &a2);
	assert_int_equal(a.cls, 1);
	assert_int_equal(b.cls, 2);
	assert_int_equal(a2.cls, a.cls);
	/* 300 shapes: the cache grows and stays right */
	struct gf_rng rng;
	gf_rng_seed(&rng, 5);
	struct held h[300];
	int nh = 0;
	for (int i = 0; i < 300; i++) {
		h[nh].r =
			(struct gf_req){ .cpu = 100 * (1 + i),
					 .ngpus = 1,
					 .gpu_milli =
						 (int16_t)(100 + i % 9 * 100) };
		gf_sched_classify(s, &h[nh].r);
		if (gf_sched_place(s, &h[nh].r, &h[nh].p) == 0)
			nh++;
		assert_checked(s);
	}
	assert_true(nh > 100);
	/* a mask: only nodes 5 and 7 (8- and 2-GPU nodes) */
	uint8_t allowed[40] = { 0 };
	allowed[5] = allowed[7] = 1;
	struct gf_placement p;
	for (int i = 0; i < 4; i++) {
		int rc = gf_sched_place_in(s, &b, allowed, &p);
		if (rc == 0) {
			assert_true(p.node == 5 || p.node == 7);
			assert_int_equal(gf_sched_unplace(s, &b, &p), 0);
		}
	}
	uint8_t none[40] = { 0 };
	assert_int_equal(gf_sched_place_in(s, &b, none, &p), GF_ENOTFOUND);
	/* another typical mix: fragmentation recomputed, cache emptied */
	assert_int_equal(gf_sched_set_typical(s, typ2, nt2), 0);
	assert_checked(s);
	assert_int_equal(gf_sched_set_typical(s, NULL, 0), GF_EINVAL);
	while (nh > 0) {
		nh--;
		assert_int_equal(gf_sched_unplace(s, &h[nh].r, &h[nh].p), 0);
	}
	assert_checked(s);
	assert_int_equal(gf_sched_alloc_milli(s), 0);
	free(typ);
	free(typ2);
	gf_sched_free(s);
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
		assert_true(gf_workload_add(&w, "a", &r1) >= 0);
	for (int i = 0; i < 38; i++)
		assert_true(gf_workload_add(&w, "b", &r2) >= 0);
	for (int i = 0; i < 2; i++)
		assert_true(gf_workload_add(&w, "c", &r3) >= 0);
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

/* ---- nodes that come, change and get sick ---- */

/* Held GPUs and a cordoned node, by hand, under best fit: one node of
 * four GPUs, 64 cores. */
static void test_hold_cordon_by_hand(void **state)
{
	(void)state;
	struct gf_cluster c;
	gf_cluster_init(&c);
	int m = gf_cluster_model(&c, "A");
	assert_true(gf_cluster_add(&c, "n0", 64000, 262144, 4, m) >= 0);
	struct gf_req half = { .cpu = 1000, .ngpus = 1, .gpu_milli = 500 };
	struct gf_req three = { .cpu = 1000, .ngpus = 3, .gpu_milli = 1000 };
	struct gf_req four = { .cpu = 1000, .ngpus = 4, .gpu_milli = 1000 };
	struct gf_req one = { .cpu = 1000, .ngpus = 1, .gpu_milli = 1000 };
	struct gf_req nothing = { 0 }; /* fits anywhere not cordoned */
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(&c, GF_POLICY_BESTFIT, NULL, 0, 1, 1, &s),
			 0);
	struct gf_placement ph, p3, p1, p0, q;
	/* best fit: all four alike, the lowest index */
	assert_int_equal(gf_sched_place(s, &half, &ph), 0);
	assert_int_equal(ph.gpus[0], 0);
	/* GPU 0 held: its 500 free withheld, neither idle nor allocated */
	assert_int_equal(gf_sched_hold_gpu(s, 0, 0, true), 0);
	assert_int_equal(c.nodes[0].gpu_left[0], 0);
	assert_int_equal(c.held[0][0], 500);
	assert_int_equal(gf_sched_idle_milli(s), 3000);
	assert_int_equal(gf_sched_held_milli(s), 500);
	assert_int_equal(gf_sched_alloc_milli(s), 500);
	assert_checked(s);
	assert_int_equal(gf_sched_place(s, &four, &q), GF_ENOTFOUND);
	assert_int_equal(gf_sched_place(s, &three, &p3), 0);
	assert_int_equal(p3.gpus[0], 1);
	assert_int_equal(p3.gpus[2], 3);
	/* no free share anywhere: GPU 0's 500 is withheld */
	assert_int_equal(gf_sched_place(s, &half, &q), GF_ENOTFOUND);
	/* the share leaves GPU 0: back to what it withholds */
	assert_int_equal(gf_sched_unplace(s, &half, &ph), 0);
	assert_int_equal(c.held[0][0], 1000);
	assert_int_equal(c.nodes[0].gpu_left[0], 0);
	assert_int_equal(gf_sched_held_milli(s), 1000);
	assert_int_equal(gf_sched_alloc_milli(s), 3000);
	assert_int_equal(gf_sched_place(s, &one, &q), GF_ENOTFOUND);
	/* given back: GPU 0 whole again */
	assert_int_equal(gf_sched_hold_gpu(s, 0, 0, false), 0);
	assert_int_equal(gf_sched_held_milli(s), 0);
	assert_int_equal(gf_sched_place(s, &one, &p1), 0);
	assert_int_equal(p1.gpus[0], 0);
	assert_checked(s);
	/* a held GPU fully taken withholds 0; nothing commits onto it */
	assert_int_equal(gf_sched_hold_gpu(s, 0, 3, true), 0);
	assert_int_equal(c.held[0][3], 0);
	q = (struct gf_placement){ .node = 0, .ngpus = 1, .gpus = { 3 } };
	assert_int_equal(gf_sched_commit(s, &half, &q), GF_EINVAL);
	/* cordoned: not even an empty request lands; a commit does */
	assert_int_equal(gf_sched_cordon(s, 0, true), 0);
	assert_true(gf_sched_is_cordoned(s, 0));
	assert_int_equal(gf_sched_place(s, &nothing, &q), GF_ENOTFOUND);
	assert_checked(s);
	p0 = (struct gf_placement){ .node = 0 };
	assert_int_equal(gf_sched_commit(s, &nothing, &p0), 0);
	assert_int_equal(gf_sched_unplace(s, &three, &p3), 0);
	assert_int_equal(c.held[0][3], 1000);
	assert_int_equal(gf_sched_cordon(s, 0, false), 0);
	assert_int_equal(gf_sched_place(s, &nothing, &q), 0);
	assert_int_equal(gf_sched_unplace(s, &nothing, &q), 0);
	assert_int_equal(gf_sched_unplace(s, &nothing, &p0), 0);
	assert_int_equal(gf_sched_unplace(s, &one, &p1), 0);
	assert_int_equal(gf_sched_hold_gpu(s, 0, 3, false), 0);
	assert_int_equal(gf_sched_hold_gpu(s, 0, 4, true), GF_EINVAL);
	assert_int_equal(gf_sched_cordon(s, 1, true), GF_EINVAL);
	assert_checked(s);
	assert_int_equal(gf_sched_idle_milli(s), 4000);
	assert_int_equal(gf_sched_alloc_milli(s), 0);
	/* the checker sees a held GPU showing a share */
	char msg[256];
	c.nodes[0].held_gpus = 1;
	assert_int_equal(gf_sched_check(s, msg, sizeof(msg)), GF_EINVAL);
	assert_non_null(strstr(msg, "held"));
	c.nodes[0].held_gpus = 0;
	gf_sched_free(s);
	gf_cluster_release(&c);
}

/* An engine that starts empty and gets its nodes one by one gives the
 * same answers as one built over them; a node reshaped once empty. */
static void test_add_nodes(void **state)
{
	(void)state;
	struct gf_cluster full, grown;
	mixed_cluster(&full, 300);
	gf_cluster_init(&grown);
	assert_true(gf_cluster_model(&grown, "A") >= 0);
	assert_true(gf_cluster_model(&grown, "B") >= 0);
	struct gf_rng rng;
	gf_rng_seed(&rng, 77);
	struct gf_req mix[16];
	for (int i = 0; i < 16; i++) {
		mix[i] = random_req(&rng, 2);
		mix[i].cls = (uint16_t)i;
	}
	struct gf_typical *typ;
	int nt = gf_typical_build(mix, 16, 0.95, &typ);
	struct gf_sched *a, *b;
	assert_int_equal(gf_sched_new(&full, GF_POLICY_FGD, typ, nt, 16, 3, &a),
			 0);
	assert_int_equal(
		gf_sched_new(&grown, GF_POLICY_FGD, typ, nt, 16, 3, &b), 0);
	for (int i = 0; i < full.n; i++) {
		const struct gf_cnode *n = &full.nodes[i];
		assert_int_equal(gf_sched_add_node(b, "n", n->cpu_cap,
						   n->mem_cap, n->ngpus,
						   n->model),
				 i);
		grown.nodes[i].rank = n->rank;
		/* the engine scores as it goes: the cache grows in use */
		struct gf_placement p;
		if (gf_sched_place(b, &mix[i % 16], &p) == 0)
			assert_int_equal(gf_sched_unplace(b, &mix[i % 16], &p),
					 0);
	}
	assert_checked(b);
	assert_true(b->ncap >= 300);
	for (int k = 0; k < 2000; k++) {
		struct gf_req r = mix[gf_rng_below(&rng, 16)];
		struct gf_placement pa, pb;
		int ra = gf_sched_place(a, &r, &pa);
		assert_int_equal(gf_sched_place(b, &r, &pb), ra);
		if (ra == 0) {
			assert_int_equal(pa.node, pb.node);
			assert_int_equal(pa.ngpus, pb.ngpus);
			assert_memory_equal(pa.gpus, pb.gpus,
					    (size_t)pa.ngpus * sizeof(int));
		}
	}
	assert_checked(b);
	assert_true(gf_sched_alloc_milli(a) == gf_sched_alloc_milli(b));
	/* reshape: refused while work is there, done once empty */
	int busy = -1;
	for (int i = 0; i < grown.n && busy < 0; i++)
		if (grown.nodes[i].gpu_pods > 0)
			busy = i;
	assert_true(busy >= 0);
	assert_int_equal(gf_sched_reshape(b, busy, 1000, 1024, 2, 0),
			 GF_ECONFLICT);
	struct gf_sched *e;
	struct gf_cluster one;
	gf_cluster_init(&one);
	assert_true(gf_cluster_model(&one, "A") >= 0);
	assert_int_equal(gf_sched_new(&one, GF_POLICY_FGD, typ, nt, 1, 1, &e),
			 0);
	assert_int_equal(gf_sched_add_node(e, "x", 8000, 8192, 8, 0), 0);
	assert_int_equal(gf_sched_hold_gpu(e, 0, 7, true), 0);
	assert_int_equal(gf_sched_cordon(e, 0, true), 0);
	assert_int_equal(gf_sched_reshape(e, 0, 16000, 8192, 4, 0), 0);
	assert_int_equal(one.nodes[0].held_gpus, 0);
	assert_true(gf_sched_is_cordoned(e, 0)); /* the cordon stays */
	assert_int_equal(gf_sched_held_milli(e), 0);
	assert_int_equal(gf_sched_idle_milli(e), 4000);
	assert_int_equal(one.gpu_milli_total, 4000);
	assert_checked(e);
	gf_sched_free(e);
	gf_cluster_release(&one);
	free(typ);
	gf_sched_free(a);
	gf_sched_free(b);
	gf_cluster_release(&full);
	gf_cluster_release(&grown);
}

/* One step of the random run: hold or give back a GPU, cordon or not. */
static void flip(struct gf_sched *s, struct gf_cluster *c, struct gf_rng *rng)
{
	int i = (int)gf_rng_below(rng, (uint64_t)c->n);
	const struct gf_cnode *n = &c->nodes[i];
	if (gf_rng_below(rng, 3) == 0 || n->ngpus == 0) {
		assert_int_equal(
			gf_sched_cordon(s, i, !gf_sched_is_cordoned(s, i)), 0);
		return;
	}
	int g = (int)gf_rng_below(rng, n->ngpus);
	assert_int_equal(gf_sched_hold_gpu(s, i, g, !(n->held_gpus >> g & 1)),
			 0);
}

/* Holds, cordons, places and unplaces at random, checked after every
 * step: nothing new lands on a held GPU or a cordoned node; giving
 * everything back, in a random order, ends where the engine began. */
static void hold_cordon_run(enum gf_policy pol, int steps)
{
	struct gf_cluster c;
	mixed_cluster(&c, 40);
	struct gf_rng rng;
	gf_rng_seed(&rng, 300 + (uint64_t)pol);
	struct gf_req mix[32];
	for (int i = 0; i < 32; i++) {
		mix[i] = random_req(&rng, c.nmodels);
		mix[i].cls = (uint16_t)i;
	}
	struct gf_typical *typ;
	int nt = gf_typical_build(mix, 32, 0.95, &typ);
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(&c, pol, typ, nt, 32, 9, &s), 0);
	struct gf_cnode *before = calloc((size_t)c.n, sizeof(*before));
	memcpy(before, c.nodes, (size_t)c.n * sizeof(*before));
	double *frag0 = calloc((size_t)c.n, sizeof(*frag0));
	memcpy(frag0, s->frag, (size_t)c.n * sizeof(*frag0));
	int64_t frag_q0 = s->frag_q, idle0 = gf_sched_idle_milli(s);
	struct held *h = calloc((size_t)steps, sizeof(*h));
	int nh = 0, placed = 0, flips = 0;
	for (int step = 0; step < steps; step++) {
		uint64_t op = gf_rng_below(&rng, 10);
		if (op < 5 || nh == 0) {
			h[nh].r = mix[gf_rng_below(&rng, 32)];
			if (gf_sched_place(s, &h[nh].r, &h[nh].p) == 0) {
				int node = h[nh].p.node;
				assert_false(gf_sched_is_cordoned(s, node));
				for (int g = 0; g < h[nh].p.ngpus; g++)
					assert_false(c.nodes[node].held_gpus >>
							     h[nh].p.gpus[g] &
						     1);
				nh++;
				placed++;
			}
		} else if (op < 8) {
			int k = (int)gf_rng_below(&rng, (uint64_t)nh);
			assert_int_equal(gf_sched_unplace(s, &h[k].r, &h[k].p),
					 0);
			h[k] = h[--nh];
		} else {
			flip(s, &c, &rng);
			flips++;
		}
		assert_checked(s);
	}
	assert_true(placed > steps / 5 && flips > steps / 20);
	/* give it all back in a random order: work, holds, cordons */
	for (;;) {
		int held = 0;
		for (int i = 0; i < c.n; i++)
			held += c.nodes[i].held_gpus != 0 ||
				gf_sched_is_cordoned(s, i);
		if (nh == 0 && held == 0)
			break;
		if (nh > 0 && (held == 0 || gf_rng_below(&rng, 2))) {
			int k = (int)gf_rng_below(&rng, (uint64_t)nh);
			assert_int_equal(gf_sched_unplace(s, &h[k].r, &h[k].p),
					 0);
			h[k] = h[--nh];
		} else {
			int i = (int)gf_rng_below(&rng, (uint64_t)c.n);
			while (c.nodes[i].held_gpus == 0 &&
			       !gf_sched_is_cordoned(s, i))
				i = (i + 1) % c.n;
			assert_true(gf_sched_cordon(s, i, false) >= 0);
			for (int g = 0; g < c.nodes[i].ngpus; g++)
				assert_true(gf_sched_hold_gpu(s, i, g, false) >=
					    0);
		}
		assert_checked(s);
	}
	for (int i = 0; i < c.n; i++) {
		before[i].version = c.nodes[i].version;
		assert_memory_equal(&before[i], &c.nodes[i], sizeof(before[i]));
		assert_true(frag0[i] == s->frag[i]);
	}
	assert_true(frag_q0 == s->frag_q);
	assert_true(idle0 == gf_sched_idle_milli(s));
	assert_int_equal(gf_sched_alloc_milli(s), 0);
	assert_int_equal(gf_sched_held_milli(s), 0);
	free(h);
	free(before);
	free(frag0);
	free(typ);
	gf_sched_free(s);
	gf_cluster_release(&c);
}

static void test_hold_cordon_random(void **state)
{
	(void)state;
	for (int pol = 0; pol < GF_POLICY_COUNT; pol++)
		hold_cordon_run((enum gf_policy)pol, 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scores_by_hand),
		cmocka_unit_test(test_fgdplus_t),
		cmocka_unit_test(test_fgdplus_pressure_spread),
		cmocka_unit_test(test_fgdplus_pressure_group),
		cmocka_unit_test(test_fgdplus_terms_parse),
		cmocka_unit_test(test_frag_classes),
		cmocka_unit_test(test_select_and_filter),
		cmocka_unit_test(test_cpu_apart),
		cmocka_unit_test(test_typical_and_arrivals),
		cmocka_unit_test(test_place_unplace_random),
		cmocka_unit_test(test_unplace_bad_and_checker),
		cmocka_unit_test(test_classify_mask_typical),
		cmocka_unit_test(test_hold_cordon_by_hand),
		cmocka_unit_test(test_add_nodes),
		cmocka_unit_test(test_hold_cordon_random),
	};
	return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
