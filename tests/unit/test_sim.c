/*
 * test_sim.c - trace readers (errors name file:line and field); the
 * accuracy of the fill experiment on the FGD paper's default trace (every
 * policy within 0.5 points of the published mean at 100 % load); the
 * arrivals drawn as the original quadratic loop drew them; progress in
 * every phase; and facts behind the golden files checked independently
 * (a fill worked out by hand, sums and bounds on the built-in workload and
 * on the trace cut).
 */
#include <math.h>
#include <time.h>

#include <gpufleet/rng.h>
#include <gpufleet/sched.h>
#include <gpufleet/sim.h>

#include "helpers.h"
#include "sim/pool.h"
#include "sim/progress.h"
#include "sim/report.h"
#include "sim_helpers.h"
#include "trace/published.h"
#include "trace/synth.h"
#include "trace/trace.h"
#include "util/buf.h"
#include "util/log.h"

#define TRACE "traces/alibaba-gpu-v2023/"

static char tmpdir[] = "/tmp/gf-sim-XXXXXX";

static const char *tmpfile_with(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static int load_pods(const char *text, struct gf_err *e)
{
	struct gf_cluster c;
	struct gf_workload w;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	gf_err_clear(e);
	int rc = gf_trace_load_pods(tmpfile_with("pods.csv", text), &c, &w, e);
	gf_workload_release(&w);
	gf_cluster_release(&c);
	return rc;
}

static void test_reader_errors(void **state)
{
	(void)state;
	struct gf_err e;
	assert_non_null(mkdtemp(tmpdir));
	/* unknown columns ignored; CPU 0 becomes 100 */
	struct gf_cluster c;
	struct gf_workload w;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	const char *p = tmpfile_with("ok.csv",
				     "name,extra,cpu_milli,memory_mib,num_gpu,"
				     "gpu_milli,gpu_spec\n"
				     "p1,x,0,10,1,500,T4|V100M16\n"
				     "p2,y,2000,10,2,1000,\n");
	assert_int_equal(gf_trace_load_pods(p, &c, &w, &e), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.reqs[0].cpu, 100);
	assert_int_equal(w.reqs[0].spec, 3); /* two models interned */
	assert_int_equal(c.nmodels, 2);
	gf_workload_release(&w);
	gf_cluster_release(&c);

	assert_int_equal(load_pods("name,cpu_milli,memory_mib,num_gpu,"
				   "gpu_milli\np1,12x,10,1,500\n",
				   &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "pods.csv:2: field 'cpu_milli': "
				      "expected an integer, got '12x'"));
	assert_int_equal(load_pods("name,cpu_milli,memory_mib,num_gpu,"
				   "gpu_milli\np1,1,10,1,500\np2,1,10,1,1500\n",
				   &e),
			 GF_ERANGE);
	assert_non_null(strstr(e.msg, ":3: field 'gpu_milli': 1500"));
	assert_int_equal(load_pods("name,cpu_milli,memory_mib,gpu_milli\n"
				   "p1,1,10,500\n",
				   &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "missing required column 'num_gpu'"));
	assert_int_equal(load_pods("cpu_milli,memory_mib,num_gpu,gpu_milli\n"
				   "1,10,2,500\n",
				   &e),
			 GF_ERANGE);
	assert_non_null(strstr(e.msg, "multi-GPU request takes whole GPUs"));
	assert_int_equal(load_pods("", &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "empty file"));

	gf_cluster_init(&c);
	p = tmpfile_with("nodes.csv",
			 "sn,cpu_milli,memory_mib,gpu,model\n"
			 "n1,96000,1000,8,G2\nn2,96000,1000,17,G2\n");
	assert_int_equal(gf_trace_load_nodes(p, &c, &e), GF_ERANGE);
	assert_non_null(strstr(e.msg, "nodes.csv:3: field 'gpu': 17 is "
				      "outside 0..16"));
	gf_cluster_release(&c);
	gf_cluster_init(&c);
	p = tmpfile_with("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\n"
				      "n1,96000,1000,8,\n");
	assert_int_equal(gf_trace_load_nodes(p, &c, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "field 'model': empty"));
	gf_cluster_release(&c);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
}

static void test_default_trace_accuracy(void **state)
{
	(void)state;
	char nodes[512], pods[512], pub_path[512];
	shared_path(nodes, sizeof(nodes), TRACE "openb_node_list_gpu_node.csv");
	shared_path(pods, sizeof(pods), TRACE "openb_pod_list_default.csv");
	shared_path(pub_path, sizeof(pub_path),
		    TRACE "fgd_expected_results/analysis_allo_discrete.csv");
	if (access(pods, R_OK) != 0 || access(pub_path, R_OK) != 0) {
		print_message("shared trace absent: %s\n", pods);
		skip();
	}
	/* all ten published seeds: a mean over fewer would be noisier than
	 * the tolerance for Packing, whose seeds spread 7.4..8.9.  The debug
	 * (sanitizer) trees check memory and the core's invariants on one
	 * seed, not the figures the plain tree checks (14 s of CPU less) */
#if GF_DEBUG
	const int nseeds = 1;
#else
	const int nseeds = 10;
#endif
	double pub[GF_POLICY_COUNT];
	struct gf_err e;
	assert_int_equal(
		gf_published_unalloc(pub_path, "default", nseeds, 100, pub, &e),
		0);
	struct gf_cluster c;
	struct gf_workload w;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	assert_int_equal(gf_trace_load_nodes(nodes, &c, &e), 0);
	assert_int_equal(gf_trace_load_pods(pods, &c, &w, &e), 0);
	assert_int_equal(c.n, 1213);
	assert_int_equal(c.gpu_milli_total, 6212000);
	assert_int_equal(w.n, 8152);
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	assert_int_equal(ntyp, 35); /* reference 1.3: 35 of 91 keys */
	struct gf_fill_job jobs[GF_POLICY_COUNT * 10];
	gf_fill_jobs_reference(jobs, nseeds);
	struct gf_fill_pool pool = { .c = &c,
				     .w = &w,
				     .typ = typ,
				     .ntyp = ntyp,
				     .jobs = jobs,
				     .njobs = GF_POLICY_COUNT * nseeds };
	assert_int_equal(gf_fill_pool_run(&pool, 0, NULL), 0);
	for (int p = 0; p < GF_POLICY_COUNT; p++) {
		struct gf_fill_result res[10];
		double wall[10] = { 0 };
		struct gf_fill_summary *sum = calloc(1, sizeof(*sum));
		for (int s = 0; s < nseeds; s++)
			res[s] = jobs[p * nseeds + s].res;
		gf_fill_summarise((enum gf_policy)p, res, wall, nseeds, sum);
		assert_true(sum->have[100]);
		double d = sum->unalloc_mean[100] - pub[p];
		print_message("%-10s published %5.2f ours %5.2f (%+.2f)\n",
			      gf_policy_label((enum gf_policy)p), pub[p],
			      sum->unalloc_mean[100], d);
		if (nseeds < 10) /* one seed: a sane figure, not the bar */
			assert_true(sum->unalloc_mean[100] > 1.0 &&
				    sum->unalloc_mean[100] < 20.0);
		else if (isnan(pub[p])) /* FGD+: issue 16's bar, 15 % under FGD
					 */
			assert_true(sum->unalloc_mean[100] <= 4.05);
		else
			assert_true(fabs(d) <= 0.5);
		free(sum);
	}
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/* ---- arrivals: the same draws as deleting in place ---------------- */

static int64_t demand(const struct gf_req *r)
{
	return (int64_t)r->ngpus * r->gpu_milli;
}

/* The arrivals as the loop of issue 3 drew them (a memmove per deletion:
 * quadratic, kept here as the reference for the sequence). */
static int arrivals_reference(const struct gf_workload *w, int64_t capacity,
			      const struct gf_fill_opts *o, int **seq_out)
{
	struct gf_rng rng;
	gf_rng_seed(&rng, o->seed);
	int cap = w->n + 16;
	int *seq = calloc((size_t)cap, sizeof(*seq));
	int n = w->n;
	for (int i = 0; i < n; i++)
		seq[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)gf_rng_below(&rng, (uint64_t)i + 1);
		int t = seq[i];
		seq[i] = seq[j];
		seq[j] = t;
	}
	if (o->resample && n > 0) {
		double target = o->tune * (double)capacity;
		int64_t total = 0;
		for (int i = 0; i < n; i++)
			total += demand(&w->reqs[seq[i]]);
		if ((double)total < target) {
			for (;;) {
				int p = (int)gf_rng_below(&rng, (uint64_t)w->n);
				if ((double)(total + w->reqs[p].gpu_milli) >
				    target)
					break;
				total += demand(&w->reqs[p]);
				if (n == cap) {
					cap *= 2;
					seq = realloc(seq,
						      (size_t)cap *
							      sizeof(*seq));
				}
				seq[n++] = p;
				if (n >= GF_MAX_REQUESTS)
					break;
			}
		} else {
			while ((double)total > target && n > 0) {
				int k = (int)gf_rng_below(&rng, (uint64_t)n);
				total -= demand(&w->reqs[seq[k]]);
				memmove(&seq[k], &seq[k + 1],
					(size_t)(n - k - 1) * sizeof(*seq));
				n--;
			}
		}
	}
	*seq_out = seq;
	return n;
}

static void builtin(struct gf_cluster *c, struct gf_workload *w, int n)
{
	gf_cluster_init(c);
	gf_workload_init(w);
	assert_int_equal(gf_synth_cluster(c), 0);
	assert_int_equal(gf_synth_workload(c, w, n, 1), 0);
	gf_workload_sort_by_name(w);
	gf_workload_classify(w);
}

static void test_arrivals_same_as_in_place(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	builtin(&c, &w, 20000);
	/* capacity 1088 GPUs: 20,000 requests are far above 1.3x (deletions
	 * down to ~1,500), 1,088 GPUs x 30 far below (copies added); tiny
	 * and zero targets delete all but a few, or all */
	const double tunes[] = { 1.3, 0.9, 30.0, 0.001, 0.0 };
	for (size_t t = 0; t < sizeof(tunes) / sizeof(tunes[0]); t++)
		for (uint64_t seed = 40; seed < 44; seed++) {
			struct gf_fill_opts o = { .seed = seed,
						  .tune = tunes[t],
						  .resample = true };
			int *a, *b;
			int na =
				gf_fill_arrivals(&w, c.gpu_milli_total, &o, &a);
			int nb = arrivals_reference(&w, c.gpu_milli_total, &o,
						    &b);
			assert_int_equal(na, nb);
			for (int i = 0; i < na; i++)
				assert_int_equal(a[i], b[i]);
			free(a);
			free(b);
		}
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/* ---- request classes: the ranks of the distinct keys --------------- */

static int cmp_key_ref(const struct gf_req *x, const struct gf_req *y)
{
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->gpu_milli != y->gpu_milli)
		return x->gpu_milli < y->gpu_milli ? -1 : 1;
	if (x->ngpus != y->ngpus)
		return x->ngpus < y->ngpus ? -1 : 1;
	return (x->spec > y->spec) - (x->spec < y->spec);
}

static int cmp_key_qsort(const void *a, const void *b)
{
	return cmp_key_ref(a, b);
}

static void test_classify_and_sort(void **state)
{
	(void)state;
	struct gf_workload w;
	gf_workload_init(&w);
	struct gf_rng r;
	gf_rng_seed(&r, 5);
	/* names out of order; 3 x 4 x 3 x 2 = 72 possible keys */
	for (int i = 0; i < 3000; i++) {
		struct gf_req q = {
			.cpu = 1000 * (1 + (int32_t)gf_rng_below(&r, 3)),
			.gpu_milli = (int16_t)(250 * (1 + gf_rng_below(&r, 4))),
			.ngpus = (uint16_t)(1 + gf_rng_below(&r, 3)),
			.spec = (uint32_t)gf_rng_below(&r, 2),
		};
		char name[32];
		snprintf(name, sizeof(name), "r-%05d",
			 (int)((uint64_t)i * 7919 % 3000));
		assert_true(gf_workload_add(&w, name, &q) >= 0);
	}
	gf_workload_sort_by_name(&w);
	for (int i = 1; i < w.n; i++)
		assert_true(strcmp(w.names[i - 1], w.names[i]) < 0);
	gf_workload_classify(&w);
	/* a class is the rank of its key among the distinct keys */
	struct gf_req keys[72];
	int nkeys = 0;
	for (int i = 0; i < w.n; i++) {
		int k = 0;
		while (k < nkeys && cmp_key_ref(&keys[k], &w.reqs[i]) != 0)
			k++;
		if (k == nkeys) {
			assert_true(nkeys < 72);
			keys[nkeys++] = w.reqs[i];
		}
	}
	qsort(keys, (size_t)nkeys, sizeof(keys[0]), cmp_key_qsort);
	assert_int_equal(w.nclasses, nkeys);
	for (int i = 0; i < w.n; i++) {
		int k = 0;
		while (cmp_key_ref(&keys[k], &w.reqs[i]) != 0)
			k++;
		assert_int_equal(w.reqs[i].cls, k);
	}
	gf_workload_release(&w);
}

/* ---- progress: every phase reports ---------------------------------- */

struct seen_progress {
	int draw_calls, place_calls;
	int last_phase, last_done, last_total;
	int draw_final; /* steps when the draw ended */
	int place_first_total;
	int bad; /* out of order */
};

static void record_progress(enum gf_fill_phase ph, int done, int total,
			    void *arg)
{
	struct seen_progress *s = arg;
	if (done > total || done < 0)
		s->bad++;
	if (ph == GF_FILL_DRAW) {
		if (s->place_calls > 0 ||
		    (s->draw_calls > 0 &&
		     (done < s->last_done || total < s->last_total)))
			s->bad++;
		s->draw_calls++;
		if (done == total)
			s->draw_final = done;
	} else {
		if (s->place_calls == 0)
			s->place_first_total = total;
		else if (done < s->last_done || total != s->last_total)
			s->bad++;
		s->place_calls++;
	}
	s->last_phase = (int)ph;
	s->last_done = done;
	s->last_total = total;
}

static void test_progress_every_phase(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	/* 400,000 requests for 1,088 GPUs: the resampling deletes most */
	builtin(&c, &w, 400000);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	struct gf_fill_opts o = { .policy = GF_POLICY_BESTFIT,
				  .seed = 42,
				  .tune = 1.3,
				  .resample = true };
	struct gf_fill_result res;
	struct seen_progress s = { 0 };
	assert_int_equal(
		gf_fill_run(&c, &w, typ, ntyp, &o, &res, record_progress, &s),
		0);
	assert_int_equal(s.bad, 0);
	/* the shuffle and the deletions: over 700,000 steps, a report each
	 * 65,536, then the end of the phase */
	assert_true(s.draw_calls >= 10);
	assert_true(s.draw_final > 700000);
	assert_int_equal(s.place_first_total, res.arrivals);
	assert_true(s.place_calls >= 2);
	assert_int_equal(s.last_phase, GF_FILL_PLACE);
	assert_int_equal(s.last_done, res.arrivals);
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

static void test_progress_line(void **state)
{
	(void)state;
	struct gf_fill_job jobs[3];
	memset(jobs, 0, sizeof(jobs));
	struct gf_fill_pool pool = { .jobs = jobs, .njobs = 3 };
	atomic_store(&jobs[0].state, GF_JOB_DONE);
	atomic_store(&jobs[1].state, GF_JOB_DRAWING);
	atomic_store(&jobs[1].done, 450);
	atomic_store(&jobs[1].total, 1000);
	atomic_store(&jobs[2].state, GF_JOB_WAITING);
	FILE *f = tmpfile();
	assert_non_null(f);
	struct gf_progress p;
	gf_progress_init(&p, "gpufleet simulate fill", f);
	assert_false(p.tty);
	p.delay_s = 0;
	p.every_s = 0.01;
	char line[512];
	gf_progress_step(&p, "reading pods '%s'", "pods.csv");
	gf_progress_format(&p, line, sizeof(line));
	assert_non_null(strstr(
		line, "gpufleet simulate fill: reading pods 'pods.csv', "));
	gf_progress_pool(&p, &pool);
	gf_progress_format(&p, line, sizeof(line));
	assert_non_null(strstr(line, "gpufleet simulate fill: 1/3 runs done, "
				     "1 drawing arrivals (45 %), "));
	atomic_store(&jobs[2].state, GF_JOB_PLACING);
	atomic_store(&jobs[2].done, 10);
	atomic_store(&jobs[2].total, 20);
	gf_progress_format(&p, line, sizeof(line));
	assert_non_null(strstr(line, "(45 %), 1 placing (10/20 arrivals), "));
	/* the thread writes lines while the pool draws */
	atomic_store(&jobs[2].state, GF_JOB_WAITING);
	assert_int_equal(gf_progress_start(&p), 0);
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	gf_progress_pool(&p, NULL);
	gf_progress_stop(&p);
	rewind(f);
	char buf[4096];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "gpufleet simulate fill: 1/3 runs done, "
				    "1 drawing arrivals (45 %), 0."));
	assert_null(strchr(buf, '\r')); /* not a terminal: whole lines */
}

/* GPUFLEET_LOG=debug: each run says its arrivals and its phase times */
static void test_debug_log_of_runs(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	builtin(&c, &w, 1200);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	struct gf_fill_job job;
	memset(&job, 0, sizeof(job));
	job.o = (struct gf_fill_opts){ .policy = GF_POLICY_FGD,
				       .seed = 42,
				       .tune = 1.3,
				       .resample = true };
	struct gf_fill_pool pool = { .c = &c,
				     .w = &w,
				     .typ = typ,
				     .ntyp = ntyp,
				     .jobs = &job,
				     .njobs = 1 };
	FILE *f = tmpfile();
	assert_non_null(f);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
	enum gf_log_level level = gf_log_get_level();
	gf_log_set_level(GF_LOG_DEBUG);
	int rc = gf_fill_pool_run(&pool, 1, NULL);
	gf_log_set_level(level);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_int_equal(rc, 0);
	rewind(f);
	char buf[4096];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	char want[128];
	snprintf(want, sizeof(want),
		 "gpufleet: debug: sim: run policy=fgd seed=42: rc=0, %d "
		 "arrivals drawn in ",
		 job.res.arrivals);
	assert_non_null(strstr(buf, want));
	assert_non_null(strstr(buf, " s, placed in "));
	assert_non_null(strstr(buf, "gpufleet: debug: sim: 1 runs on 1 "
				    "threads in "));
	assert_true(job.draw_s > 0 && job.draw_s <= job.wall_s);
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/* ---- a fill worked out by hand ---------------------------------------- */

/*
 * One node, two GPUs (2,000 milli), four requests of 0.6 GPU.  Arrived
 * load after each: 30, 60, 90, 120 %.  The first two take one GPU each
 * (1,200 milli allocated, 60 %); then 400 milli are left on each GPU, too
 * little for 0.6: the last two fail.  So unallocated is 70, 40, 40, 40 %;
 * and the 800 idle milli are all fragmented for the only typical request
 * (F = 800: 100 % of idle, 40 % of capacity).  The same for every policy.
 */
static void test_fill_by_hand(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	by_hand_fill(&c, &w);
	gf_workload_classify(&w);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	assert_int_equal(ntyp, 1);
	for (int p = 0; p < GF_POLICY_COUNT; p++) {
		struct gf_fill_opts o = { .policy = (enum gf_policy)p,
					  .seed = 9 };
		struct gf_fill_result r;
		assert_int_equal(
			gf_fill_run(&c, &w, typ, ntyp, &o, &r, NULL, NULL), 0);
		assert_int_equal(r.arrivals, 4);
		assert_int_equal(r.failed, 2);
		assert_int_equal(r.arrived_milli, 2400);
		const int pct[] = { 30, 60, 90, 120 };
		const double alloc[] = { 30, 60, 60, 60 };
		for (int i = 0; i < 4; i++) {
			double v;
			assert_int_equal(r.count[pct[i]], 1);
			assert_true(gf_fill_value(&r, r.alloc_sum, pct[i], &v));
			assert_true(fabs(v - alloc[i]) < 1e-9);
		}
		double v;
		assert_true(gf_fill_value(&r, r.frag_ratio_sum, 90, &v));
		assert_true(fabs(v - 100.0) < 1e-9);
		assert_true(gf_fill_value(&r, r.frag_amount_sum, 90, &v));
		assert_true(fabs(v - 40.0) < 1e-9);
		/* an empty bin takes its neighbours: 91 from 90 (and 92) */
		assert_true(gf_fill_value(&r, r.alloc_sum, 91, &v));
		assert_true(fabs(v - 60.0) < 1e-9);
		assert_false(gf_fill_value(&r, r.alloc_sum, 100, &v));
	}
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/* ---- sums and bounds behind the golden files ----------------------- */

/*
 * For a run: every arrival was recorded once; the arrived demand is the
 * sum over the drawn sequence (summed here) and sits at the target as the
 * resampling leaves it; allocated GPU never exceeds capacity nor the
 * arrived demand; fragmentation is a share.  Then a replay of the same
 * arrivals straight through the engine: placed + dropped = arrivals, and
 * the GPU the nodes lost is the demand of those placed, within capacity.
 */
static void check_run(const struct gf_cluster *c0, const struct gf_workload *w,
		      const struct gf_typical *typ, int ntyp,
		      const struct gf_fill_opts *o)
{
	struct gf_fill_result r;
	assert_int_equal(gf_fill_run(c0, w, typ, ntyp, o, &r, NULL, NULL), 0);
	int *seq;
	int n = gf_fill_arrivals(w, c0->gpu_milli_total, o, &seq);
	int64_t sum = 0, orig = 0, max_d = 0;
	for (int i = 0; i < n; i++)
		sum += demand(&w->reqs[seq[i]]);
	for (int i = 0; i < w->n; i++) {
		orig += demand(&w->reqs[i]);
		max_d = demand(&w->reqs[i]) > max_d ? demand(&w->reqs[i])
						    : max_d;
	}
	assert_int_equal(r.arrivals, n);
	assert_int_equal(r.arrived_milli, sum);
	assert_true(r.failed >= 0 && r.failed <= n);
	double target = o->tune * (double)c0->gpu_milli_total;
	if ((double)orig > target) { /* deleted down to the target */
		assert_true((double)sum <= target);
		assert_true((double)sum > target - (double)max_d);
	} else { /* copies added: the last one checked by its share */
		assert_true((double)sum > target - GF_GPU_MILLI);
		assert_true((double)sum <= target + (double)max_d);
	}
	int recorded = 0;
	for (int b = 0; b < GF_FILL_BINS; b++) {
		recorded += r.count[b];
		double v;
		if (r.count[b] == 0)
			continue;
		assert_true(gf_fill_value(&r, r.alloc_sum, b, &v));
		assert_true(v >= 0 && v <= 100.0);
		assert_true(v <= b + 0.5); /* allocated <= arrived */
		assert_true(gf_fill_value(&r, r.frag_ratio_sum, b, &v));
		assert_true(v >= 0 && v <= 100.0 + 1e-9);
	}
	assert_int_equal(recorded, n);

	struct gf_cluster c = *c0;
	c.nodes = calloc((size_t)c0->n, sizeof(*c.nodes));
	memcpy(c.nodes, c0->nodes, (size_t)c0->n * sizeof(*c.nodes));
	c.names = NULL;
	struct gf_sched *s;
	assert_int_equal(gf_sched_new(&c, o->policy, typ, ntyp, w->nclasses,
				      o->seed, &s),
			 0);
	int placed = 0, dropped = 0;
	int64_t placed_milli = 0;
	for (int i = 0; i < n; i++) {
		struct gf_placement pl;
		if (gf_sched_place(s, &w->reqs[seq[i]], &pl) == 0) {
			placed++;
			placed_milli += demand(&w->reqs[seq[i]]);
		} else {
			dropped++;
		}
		assert_true(gf_sched_alloc_milli(s) == placed_milli);
		assert_true(gf_sched_alloc_milli(s) <= c.gpu_milli_total);
	}
	assert_int_equal(placed + dropped, n);
	int64_t lost = 0;
	for (int i = 0; i < c.n; i++)
		for (int g = 0; g < c.nodes[i].ngpus; g++)
			lost += GF_GPU_MILLI - c.nodes[i].gpu_left[g];
	assert_true(lost == placed_milli);
	gf_sched_free(s);
	free(c.nodes);
	free(seq);
}

/* golden sim-builtin: --seeds 7 --policy fgd,packing,random */
static void test_builtin_facts(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_workload w;
	builtin(&c, &w, 1200);
	/* "192 nodes, 1088 GPUs": 64 HGX H100 x 8, 32 A100 x 8, 64 L4
	 * servers x 4, 32 T4 servers x 2 */
	assert_int_equal(c.n, 64 + 32 + 64 + 32);
	assert_int_equal(c.gpu_milli_total,
			 (64 * 8 + 32 * 8 + 64 * 4 + 32 * 2) * 1000);
	assert_int_equal(w.n, 1200);
	/* the mix: 13 % CPU-only, 2 % 8-GPU (1200 draws: within 3 sigma) */
	int cpu_only = 0, eight = 0;
	for (int i = 0; i < w.n; i++) {
		cpu_only += w.reqs[i].ngpus == 0;
		eight += w.reqs[i].ngpus == 8;
	}
	assert_true(cpu_only > 120 && cpu_only < 192);
	assert_true(eight > 8 && eight < 40);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	const enum gf_policy pols[] = { GF_POLICY_FGD, GF_POLICY_PACKING,
					GF_POLICY_RANDOM };
	for (int i = 0; i < 3; i++) {
		struct gf_fill_opts o = { .policy = pols[i],
					  .seed = 7,
					  .tune = 1.3,
					  .resample = true };
		check_run(&c, &w, typ, ntyp, &o);
	}
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
}

/* Copy the first `lines` lines of src to dst (the golden trace cut). */
static void head(const char *src, const char *dst, int lines)
{
	FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
	assert_non_null(in);
	assert_non_null(out);
	char buf[4096];
	for (int i = 0; i < lines && fgets(buf, sizeof(buf), in); i++)
		fputs(buf, out);
	fclose(in);
	fclose(out);
}

/* golden sim-trace-cut(-json): the first 40 GPU nodes and 400 pods */
static void test_trace_cut_facts(void **state)
{
	(void)state;
	char nodes[512], pods[512];
	shared_path(nodes, sizeof(nodes), TRACE "openb_node_list_gpu_node.csv");
	shared_path(pods, sizeof(pods), TRACE "openb_pod_list_default.csv");
	if (access(pods, R_OK) != 0) {
		print_message("shared trace absent: %s\n", pods);
		skip();
	}
	char dir[] = "/tmp/gf-cut-XXXXXX", cn[64], cp[64];
	assert_non_null(mkdtemp(dir));
	snprintf(cn, sizeof(cn), "%s/cut-nodes.csv", dir);
	snprintf(cp, sizeof(cp), "%s/cut-pods.csv", dir);
	head(nodes, cn, 41);
	head(pods, cp, 401);
	/* "40 nodes, 174 GPUs": the gpu column summed here, with sscanf */
	FILE *f = fopen(cn, "r");
	char line[512];
	long nn = 0, gpus = 0;
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	while (fgets(line, sizeof(line), f)) {
		char sn[64];
		long cpu, mem, g;
		assert_int_equal(
			sscanf(line, "%63[^,],%ld,%ld,%ld", sn, &cpu, &mem, &g),
			4);
		nn++;
		gpus += g;
	}
	fclose(f);
	assert_int_equal(nn, 40);
	assert_int_equal(gpus, 174);
	struct gf_cluster c;
	struct gf_workload w;
	struct gf_err e;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	assert_int_equal(gf_trace_load_nodes(cn, &c, &e), 0);
	assert_int_equal(gf_trace_load_pods(cp, &c, &w, &e), 0);
	assert_int_equal(c.n, nn);
	assert_int_equal(c.gpu_milli_total, gpus * 1000);
	assert_int_equal(w.n, 400);
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	const uint64_t seeds[] = { 42, 43, 1, 5 };
	for (int p = 0; p < GF_POLICY_COUNT; p++)
		for (int s = 0; s < 4; s++) {
			struct gf_fill_opts o = { .policy = (enum gf_policy)p,
						  .seed = seeds[s],
						  .tune = 1.3,
						  .resample = true };
			check_run(&c, &w, typ, ntyp, &o);
		}
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
	snprintf(line, sizeof(line), "rm -rf '%s'", dir);
	assert_int_equal(system(line), 0);
}

/* ---- reports: --tune 0 is "not scaled", in text and JSON ------------ */

static void test_report_not_scaled(void **state)
{
	(void)state;
	struct gf_fill_summary *sum = calloc(1, sizeof(*sum));
	sum->policy = GF_POLICY_FGD;
	uint64_t seed = 7;
	struct gf_report_info info = { .nodes = 1,
				       .gpus = 2,
				       .requests = 4,
				       .tune = 0,
				       .seeds = &seed,
				       .nseeds = 1,
				       .source = "test" };
	struct gf_buf b;
	gf_buf_init(&b, 1 << 20);
	assert_int_equal(gf_report_text(&info, sum, 1, &b), 0);
	assert_non_null(strstr(gf_buf_str(&b), "4 requests, demand not "
					       "scaled; seeds 7"));
	assert_null(strstr(gf_buf_str(&b), "0.00x"));
	gf_buf_release(&b);
	gf_buf_init(&b, 1 << 20);
	assert_int_equal(gf_report_json(&info, sum, 1, &b), 0);
	assert_non_null(strstr(gf_buf_str(&b), "\"tune\": null"));
	gf_buf_release(&b);
	info.tune = 1.3;
	gf_buf_init(&b, 1 << 20);
	assert_int_equal(gf_report_text(&info, sum, 1, &b), 0);
	assert_non_null(strstr(gf_buf_str(&b), "demand scaled to 1.30x "
					       "capacity"));
	gf_buf_release(&b);
	free(sum);
}

/* Given less room than the report needs, every renderer fails with
 * GF_ETOOBIG; none returns a cut page. */
static void test_report_caps(void **state)
{
	(void)state;
	struct gf_fill_summary *sum = calloc(2, sizeof(*sum));
	for (int p = 0; p < 2; p++) {
		sum[p].policy = (enum gf_policy)p;
		for (int b = 0; b < GF_FILL_BINS; b += 7)
			sum[p].have[b] = true;
	}
	uint64_t seed = 7;
	struct gf_report_info info = { .nodes = 1,
				       .gpus = 2,
				       .requests = 4,
				       .tune = 1.3,
				       .seeds = &seed,
				       .nseeds = 1,
				       .source = "test" };
	for (int kind = 0; kind < 3; kind++) {
		size_t full = 0;
		/* cap 0 stands for "room enough": it measures the page */
		for (size_t cap = 0; cap == 0 || cap < full;
		     cap += full / 61 + 1) {
			struct gf_buf b;
			gf_buf_init(&b, cap ? cap : 1 << 20);
			int rc = kind == 0   ? gf_report_text(&info, sum, 2, &b)
				 : kind == 1 ? gf_report_json(&info, sum, 2, &b)
					     : gf_report_curve_csv(sum, 2, &b);
			assert_int_equal(rc, cap ? GF_ETOOBIG : 0);
			if (cap == 0)
				full = b.len;
			gf_buf_release(&b);
		}
	}
	free(sum);
}

/* A trace variant too long for the published file's workload names is
 * refused by name, never cut into another variant's. */
static void test_published_long_variant(void **state)
{
	(void)state;
	char variant[200];
	memset(variant, 'x', sizeof(variant) - 1);
	variant[sizeof(variant) - 1] = '\0';
	double pub[GF_POLICY_COUNT];
	struct gf_err e;
	assert_int_equal(gf_published_unalloc("/nonexistent.csv", variant, 1,
					      100, pub, &e),
			 GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "too long"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_long_variant),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_default_trace_accuracy),
		cmocka_unit_test(test_arrivals_same_as_in_place),
		cmocka_unit_test(test_classify_and_sort),
		cmocka_unit_test(test_progress_every_phase),
		cmocka_unit_test(test_progress_line),
		cmocka_unit_test(test_debug_log_of_runs),
		cmocka_unit_test(test_fill_by_hand),
		cmocka_unit_test(test_builtin_facts),
		cmocka_unit_test(test_trace_cut_facts),
		cmocka_unit_test(test_report_not_scaled),
		cmocka_unit_test(test_report_caps),
	};
	return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
