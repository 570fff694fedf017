/*
 * test_bound.c - the optimum's bound of `simulate fill --bound` (issue
 * 23, sim/bound.h): equal to the optimum on clusters small enough to
 * work out by hand (shares that do not pair, a model restriction, CPU
 * per node); never above any policy, per seed and at every arrived load,
 * on the built-in workload and on the default trace; still a bound when
 * column generation is cut short; bad inputs refused.
 */
#include <math.h>

#include <gpufleet/sim.h>

#include "helpers.h"
#include "sim/bound.h"
#include "sim/pool.h"
#include "sim/report.h"
#include "sim_helpers.h"
#include "trace/synth.h"
#include "trace/trace.h"

#define TRACE "traces/alibaba-gpu-v2023/"

/* The bound's unallocated % at pct (one seed, arrivals not resampled). */
static double bound_at(const struct gf_cluster *c, const struct gf_workload *w,
		       int pct)
{
	struct gf_bound *b;
	struct gf_err e;
	assert_int_equal(gf_bound_new(c, w, &b, &e), 0);
	struct gf_fill_opts o = { .seed = 7 };
	struct gf_fill_result r;
	int lps = 0;
	assert_int_equal(gf_bound_run(b, &o, &pct, 1, 4, &r, &lps, &e), 0);
	assert_true(lps > 0);
	gf_bound_free(b);
	double v;
	assert_true(gf_fill_value(&r, r.alloc_sum, pct, &v));
	return 100.0 - v;
}

/*
 * One node, two GPUs, four requests of 0.6 GPU (test_sim's fill by
 * hand): no GPU holds two, so the best placement gives out 1,200 of
 * 2,000 milli.  At 120 % arrived load the optimum leaves 40 % and so
 * does the bound (the aggregate milli alone would allow 0 %: the
 * GPU-count rows of shares over half make it exact).  At 30 % arrived
 * the bound is the arrived demand: 70 %.
 */
static void test_shares_by_hand(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	by_hand_fill(&c, &w);
	assert_true(fabs(bound_at(&c, &w, 120) - 40.0) < 1e-9);
	assert_true(fabs(bound_at(&c, &w, 90) - 40.0) < 1e-9);
	assert_true(fabs(bound_at(&c, &w, 30) - 70.0) < 1e-9);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/*
 * Node a: model A, 1 GPU, 4 CPUs; node b: model B, 2 GPUs, 8 CPUs.
 * Two requests of 1 GPU and 6 CPUs that need model B (only one fits b's
 * CPU), one of 1 GPU and 1 CPU that runs anywhere, one CPU-only request.
 * The best placement gives out 2 of 3 GPUs: 33.33 % unallocated at
 * 100 % arrived load, which the bound finds (model and CPU per node).
 */
static void test_model_and_cpu_by_hand(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	int ma = gf_cluster_model(&c, "A"), mb = gf_cluster_model(&c, "B");
	assert_true(ma >= 0 && mb >= 0);
	assert_true(gf_cluster_add(&c, "a", 4000, 65536, 1, ma) >= 0);
	assert_true(gf_cluster_add(&c, "b", 8000, 65536, 2, mb) >= 0);
	struct gf_req big = { .cpu = 6000,
			      .mem = 1024,
			      .ngpus = 1,
			      .gpu_milli = 1000,
			      .spec = UINT32_C(1) << mb };
	struct gf_req any = {
		.cpu = 1000, .mem = 1024, .ngpus = 1, .gpu_milli = 1000
	};
	struct gf_req cpu = { .cpu = 1000, .mem = 1024 };
	add_reqs(&w, "big", &big, 2);
	add_reqs(&w, "any", &any, 1);
	add_reqs(&w, "cpu", &cpu, 1);
	double b = bound_at(&c, &w, 100);
	assert_true(fabs(b - 33.33) < 1e-9);
	/* and every policy reaches that optimum here, none goes below */
	gf_workload_classify(&w);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	assert_true(ntyp > 0);
	for (int p = 0; p < GF_POLICY_COUNT; p++) {
		struct gf_fill_opts o = { .policy = (enum gf_policy)p,
					  .seed = 7 };
		struct gf_fill_result r;
		assert_int_equal(
			gf_fill_run(&c, &w, typ, ntyp, &o, &r, NULL, NULL), 0);
		double v;
		assert_true(gf_fill_value(&r, r.alloc_sum, 100, &v));
		assert_true(100.0 - v >= b - 1e-9);
	}
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/*
 * Every policy, every seed, every arrived load both have a value at:
 * the policy's unallocated % is at least the bound's, and both saw the
 * same arrivals (the same count in every bin).  all_bins: the program
 * solved at every load, not only at the report's points.
 */
static void check_policies_above(const struct gf_cluster *c,
				 const struct gf_workload *w, int nseeds,
				 bool all_bins)
{
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w->reqs, w->n, 0.95, &typ);
	assert_true(ntyp > 0);
	int njobs = GF_POLICY_COUNT * nseeds;
	struct gf_fill_job *jobs = calloc((size_t)njobs, sizeof(*jobs));
	gf_fill_jobs_reference(jobs, nseeds);
	struct gf_fill_pool pool = { .c = c,
				     .w = w,
				     .typ = typ,
				     .ntyp = ntyp,
				     .jobs = jobs,
				     .njobs = njobs };
	assert_int_equal(gf_fill_pool_run(&pool, 0, NULL), 0);
	int points[GF_FILL_BINS], npoints = 0;
	if (all_bins)
		for (int i = 0; i < GF_FILL_BINS; i++)
			points[npoints++] = i;
	else
		for (int i = 0; i < GF_REPORT_NPOINTS; i++)
			points[npoints++] = gf_report_points[i];
	struct gf_bound *b;
	struct gf_err e;
	assert_int_equal(gf_bound_new(c, w, &b, &e), 0);
	int checked = 0, tight = 0;
	for (int s = 0; s < nseeds; s++) {
		/* the seed's options (the bound reads no policy) */
		const struct gf_fill_opts *o = &jobs[s].o;
		struct gf_fill_result br;
		int lps = 0;
		assert_int_equal(
			gf_bound_run(b, o, points, npoints, 64, &br, &lps, &e),
			0);
		for (int p = 0; p < GF_POLICY_COUNT; p++) {
			const struct gf_fill_result *r =
				&jobs[p * nseeds + s].res;
			assert_int_equal(r->arrivals, br.arrivals);
			assert_int_equal(r->arrived_milli, br.arrived_milli);
			for (int bin = 0; bin < GF_FILL_BINS; bin++) {
				assert_int_equal(r->count[bin], br.count[bin]);
				double vp, vb;
				if (!gf_fill_value(r, r->alloc_sum, bin, &vp))
					continue;
				assert_true(gf_fill_value(&br, br.alloc_sum,
							  bin, &vb));
				if (vp > vb + 1e-9)
					print_message("policy %s seed %d load "
						      "%d: %.2f %% allocated "
						      "above the bound %.2f\n",
						      gf_policy_name((
							      enum gf_policy)p),
						      42 + s, bin, vp, vb);
				assert_true(vp <= vb + 1e-9);
				checked++;
				tight += vb < 99.995 && vb < bin - 0.005;
			}
		}
	}
	/* the program bound more than the arrived demand somewhere */
	print_message("%d values checked, %d under the arrived demand\n",
		      checked, tight);
	assert_true(checked > 0);
	assert_true(tight > 0);
	gf_bound_free(b);
	free(jobs);
	free(typ);
}

static void test_builtin_policies_above(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	assert_int_equal(gf_synth_cluster(&c), 0);
	assert_int_equal(gf_synth_workload(&c, &w, 1200, 1), 0);
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	check_policies_above(&c, &w, 3, true);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/*
 * With column generation cut short (no round: only the first pattern of
 * each share), the Lagrangian term keeps it a bound: at least what the
 * converged program allows, at every arrived load; and it is looser
 * somewhere (the branch did add something).
 */
static void test_rounds_cut_short(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	assert_int_equal(gf_synth_cluster(&c), 0);
	assert_int_equal(gf_synth_workload(&c, &w, 1200, 1), 0);
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	int points[GF_FILL_BINS], npoints = 0;
	for (int i = 80; i <= 130; i++)
		points[npoints++] = i;
	struct gf_fill_opts o = { .seed = 42, .tune = 1.3, .resample = true };
	struct gf_fill_result full, cut;
	struct gf_err e;
	for (int k = 0; k < 2; k++) {
		struct gf_bound *b;
		assert_int_equal(gf_bound_new(&c, &w, &b, &e), 0);
		if (k == 1)
			gf_bound_set_rounds(b, 0);
		int lps = 0;
		assert_int_equal(gf_bound_run(b, &o, points, npoints, 8,
					      k ? &cut : &full, &lps, &e),
				 0);
		gf_bound_free(b);
	}
	int looser = 0;
	for (int bin = 80; bin <= 130; bin++) {
		double vf, vc;
		if (!gf_fill_value(&full, full.alloc_sum, bin, &vf))
			continue;
		assert_true(gf_fill_value(&cut, cut.alloc_sum, bin, &vc));
		assert_true(vc >= vf - 1e-9);
		looser += vc > vf + 0.005;
	}
	print_message("%d loads looser without rounds\n", looser);
	assert_true(looser > 0);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

static void test_default_trace_policies_above(void **state)
{
	(void)state;
	/* the built-in workload runs the same code under the sanitizer
	 * trees; the real trace there would cost more than it checks */
	const char *later = getenv("GF_LATER_TREE");
	if (later && strcmp(later, "1") == 0) {
		print_message("a later tree: the default trace is checked in "
			      "the first\n");
		skip();
	}
	char nodes[512], pods[512];
	shared_path(nodes, sizeof(nodes), TRACE "openb_node_list_gpu_node.csv");
	shared_path(pods, sizeof(pods), TRACE "openb_pod_list_default.csv");
	if (access(pods, R_OK) != 0 || access(nodes, R_OK) != 0) {
		print_message("shared trace absent: %s\n", pods);
		skip();
	}
	struct gf_cluster c;
	struct gf_workload w;
	struct gf_err e;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	assert_int_equal(gf_trace_load_nodes(nodes, &c, &e), 0);
	assert_int_equal(gf_trace_load_pods(pods, &c, &w, &e), 0);
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	check_policies_above(&c, &w, 1, false);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	struct gf_bound *b;
	struct gf_err e;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	int m = gf_cluster_model(&c, "G1");
	assert_true(m >= 0);
	struct gf_req q = {
		.cpu = 1000, .mem = 1, .ngpus = 1, .gpu_milli = 500
	};
	add_reqs(&w, "p", &q, 2);
	/* no GPU in the cluster */
	assert_true(gf_cluster_add(&c, "cpu", 8000, 1024, 0, m) >= 0);
	assert_int_equal(gf_bound_new(&c, &w, &b, &e), GF_EINVAL);
	assert_null(b);
	assert_non_null(strstr(e.msg, "no GPU"));
	/* a node already in use */
	int i = gf_cluster_add(&c, "n0", 8000, 1024, 2, m);
	assert_true(i >= 0);
	c.nodes[i].cpu_left -= 1000;
	assert_int_equal(gf_bound_new(&c, &w, &b, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "not empty"));
	c.nodes[i].cpu_left += 1000;
	/* an empty workload */
	struct gf_workload none;
	gf_workload_init(&none);
	assert_int_equal(gf_bound_new(&c, &none, &b, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "workload is empty"));
	/* and with both right, a program */
	assert_int_equal(gf_bound_new(&c, &w, &b, &e), 0);
	int nt, nc;
	gf_bound_size(b, &nt, &nc);
	assert_int_equal(nt, 1);
	assert_int_equal(nc, 1);
	gf_bound_free(b);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares_by_hand),
		cmocka_unit_test(test_model_and_cpu_by_hand),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_builtin_policies_above),
		cmocka_unit_test(test_rounds_cut_short),
		cmocka_unit_test(test_default_trace_policies_above),
	};
	return cmocka_run_group_tests_name("bound", tests, NULL, NULL);
}
