/*
 * test_replay.c - `gpufleet simulate replay` (sim/replay.h): small traces
 * whose queueing delays and JCTs are worked out by hand (backfill,
 * deletion, preemption); conservation and GPU time on a random trace
 * with gangs, shares, classes and deletions, and on the shared traces;
 * identical results for identical seeds; reader errors naming
 * file:line and the field.
 */
#include <math.h>

#include <gpufleet/ctl.h>

#include "helpers.h"
#include "sim/replay.h"
#include "sim/replay_jobs.h"
#include "trace/synth.h"
#include "trace/trace.h"
#include "util/mem.h"

/* Debug builds check the whole core after every pass: smaller runs. */
#if GF_DEBUG
#define RANDOM_JOBS 600
#define SHARED_CUT  500
#else
#define RANDOM_JOBS 3000
#define SHARED_CUT  0 /* whole traces (Philly: 20,000 jobs) */
#endif

static char tmpdir[] = "/tmp/gf-replay-XXXXXX";

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

/* A job of 'gpus' whole GPUs (or a share when gpus < 0: -milli). */
static void add(struct gf_replay_trace *t, double at_s, int gpus, double run_s,
		double delete_s, const char *cls)
{
	struct gf_replay_job j = { .arrival_ms = (int64_t)(at_s * 1000),
				   .duration_ms = (int64_t)(run_s * 1000),
				   .delete_ms = (int64_t)(delete_s * 1000),
				   .replicas = 1,
				   .model = -1,
				   .line = t->n + 2 };
	if (gpus >= 0)
		j.gpus = (int16_t)gpus;
	else
		j.gpu_milli = (int16_t)-gpus;
	j.team = (uint16_t)gf_replay_team(t, "default");
	j.cls = (uint16_t)gf_replay_class(t, cls);
	assert_int_equal(gf_replay_add(t, &j), 0);
}

/* Run t on c with opts o (keep_log and points set here), through cfg
 * (NULL: gf_replay_config's) and nodes, and check the accounting. */
static void run_with(const struct gf_cluster *c,
		     const struct gf_replay_trace *t,
		     const struct gf_ctl_config *cfg0,
		     const struct gf_ctl_node *nodes, enum gf_policy p,
		     uint64_t seed, struct gf_replay_opts o,
		     struct gf_replay_result *r)
{
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	if (cfg0)
		*cfg = *cfg0;
	else
		gf_replay_config(cfg, p, seed);
	cfg->policy = p;
	cfg->seed = seed;
	o.keep_log = true;
	o.points = 50;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_replay_run(cfg, c, nodes, t, &o, r, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	char msg[256];
	rc = gf_replay_check(t, r, msg, sizeof(msg));
	if (rc)
		print_message("check: %s\n", msg);
	assert_int_equal(rc, 0);
	gf_free(cfg);
}

static void run(const struct gf_cluster *c, const struct gf_replay_trace *t,
		enum gf_policy p, uint64_t seed, bool estimates,
		struct gf_replay_result *r)
{
	struct gf_replay_opts o = { .estimates = estimates };
	run_with(c, t, NULL, NULL, p, seed, o, r);
}

static double wait_s(const struct gf_replay_trace *t,
		     const struct gf_replay_result *r, int j)
{
	return (double)(r->first_start_ms[j] - t->jobs[j].arrival_ms) / 1e3;
}

static double jct_s(const struct gf_replay_trace *t,
		    const struct gf_replay_result *r, int j)
{
	return (double)(r->end_at_ms[j] - t->jobs[j].arrival_ms) / 1e3;
}

/*
 * One node of 2 GPUs, class training, one team, FGD, exact estimates.
 *
 *   job  arrives  GPUs  runs   deleted
 *   A    0        2     10
 *   B    1        1      5
 *   C    2        2      4
 *   D    3        1      3
 *   E    4        2      -     12
 *
 * t=0   A starts (2 GPUs taken)                  wait A = 0
 * t=10  A ends: JCT A = 10 - 0 = 10.  Queue B, C, D, E in order.
 *       B starts (1 GPU)                         wait B = 10 - 1 = 9
 *       C needs 2, 1 free: waits; reserved at 15 (B's max runtime 5 s)
 *       D needs 1 for 3 s: ends at 13 <= 15, cannot delay C: backfilled
 *                                                wait D = 10 - 3 = 7
 *       E needs 2: behind C
 * t=12  E deleted while waiting (never started)
 * t=13  D ends: JCT D = 13 - 3 = 10
 * t=15  B ends: JCT B = 15 - 1 = 14; C starts    wait C = 15 - 2 = 13
 * t=19  C ends: JCT C = 19 - 2 = 17
 * GPU time: A 2x10 + B 1x5 + C 2x4 + D 1x3 = 36 GPU-s.
 */
static void backfill_trace(struct gf_cluster *c, struct gf_replay_trace *t)
{
	gf_cluster_init(c);
	assert_int_equal(gf_synth_uniform(c, 1, 2, 16000, 65536, "a100-80gb"),
			 0);
	gf_replay_trace_init(t);
	add(t, 0, 2, 10, 0, "training");
	add(t, 1, 1, 5, 0, "training");
	add(t, 2, 2, 4, 0, "training");
	add(t, 3, 1, 3, 0, "training");
	add(t, 4, 2, 0, 12, "training");
}

static void test_hand_backfill(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_replay_trace t;
	backfill_trace(&c, &t);
	struct gf_replay_result r;
	run(&c, &t, GF_POLICY_FGD, 42, true, &r);
	assert_int_equal(r.arrived, 5);
	assert_int_equal(r.completed, 4);
	assert_int_equal(r.deleted, 1);
	assert_int_equal(r.started, 4);
	assert_int_equal(r.fate[4], GF_REPLAY_DELETED);
	assert_int_equal(r.first_start_ms[4], -1);
	double w[] = { 0, 9, 13, 7 }, jct[] = { 10, 14, 17, 10 };
	for (int j = 0; j < 4; j++) {
		assert_int_equal(r.fate[j], GF_REPLAY_COMPLETED);
		assert_true(wait_s(&t, &r, j) == w[j]);
		assert_true(jct_s(&t, &r, j) == jct[j]);
	}
	assert_int_equal(r.end_at_ms[4], 12000);
	assert_int_equal(r.end_ms, 19000);
	/* 36 GPU-s = 36,000 GPU-ms = 36,000,000 milli-GPU ms, both ways */
	assert_int_equal(r.gpu_milli_ms_jobs, INT64_C(36000000));
	assert_int_equal(r.gpu_milli_ms_engine, INT64_C(36000000));
	/* the wait: every job that started (B, C and D after the last
	 * arrival, at 4); the window's: A alone started in [0, 4] */
	assert_int_equal(r.wait.n, 4);
	assert_true(r.wait.mean == 29.0 / 4);
	assert_int_equal(r.window.wait.n, 1);
	assert_int_equal(r.tail.wait.n, 3);
	/* JCTs 10, 10, 14, 17: p50 10, max 17 */
	assert_true(r.jct.p50 == 10 && r.jct.max == 17);
	/* the arrival window is [0, 4]: A alone, 2 of 2 GPUs; the tail
	 * [4, 19]: 2 GPUs on [4,10), 2 on [10,13) (B and D), 1 on [13,15),
	 * 2 on [15,19): (12+6+2+8)/15 s over 2 GPUs = 28/30 */
	assert_int_equal(r.window.from_ms, 0);
	assert_int_equal(r.window.to_ms, 4000);
	assert_true(fabs(r.mean_alloc - 1.0) < 1e-12);
	assert_true(fabs(r.tail.mean_alloc - 28.0 / 30) < 1e-12);
	assert_true(r.peak_alloc == 1.0);
	/* the last sample is the end: nothing left */
	assert_int_equal(r.points[r.npoints - 1].t_ms, 19000);
	assert_int_equal(r.points[r.npoints - 1].running, 0);
	gf_replay_result_release(&r);

	/* Over the whole run [0, 19]: (20+6+2+8)/19 s over 2 GPUs = 36/38 */
	struct gf_replay_opts whole = { .estimates = true, .whole_run = true };
	run_with(&c, &t, NULL, NULL, GF_POLICY_FGD, 42, whole, &r);
	assert_true(fabs(r.mean_alloc - 36.0 / 38) < 1e-12);
	/* waits sorted 0, 7, 9, 13: p50 is the 2nd (nearest rank), p95 and
	 * p99 the 4th; mean 29 / 4 */
	assert_int_equal(r.wait.n, 4);
	assert_true(r.wait.p50 == 7 && r.wait.p95 == 13 && r.wait.p99 == 13);
	assert_true(r.wait.mean == 29.0 / 4);
	gf_replay_result_release(&r);

	/* Without estimates the core cannot tell that D ends before C could
	 * start: D waits behind C.  t=15 C starts (B ends), t=19 C ends, D
	 * starts: wait D = 19 - 3 = 16, JCT D = 22 - 3 = 19. */
	run(&c, &t, GF_POLICY_FGD, 42, false, &r);
	assert_true(wait_s(&t, &r, 3) == 16);
	assert_true(jct_s(&t, &r, 3) == 19);
	assert_true(wait_s(&t, &r, 2) == 13);
	assert_int_equal(r.gpu_milli_ms_engine, r.gpu_milli_ms_jobs);
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

/* --jobs-csv's rows of the run worked above (test_hand_backfill): each
 * job's ask, arrival, first start, end, run time and fate. */
static void test_jobs_csv(void **state)
{
	(void)state;
	struct gf_cluster c;
	struct gf_replay_trace t;
	backfill_trace(&c, &t);
	struct gf_replay_result r;
	run(&c, &t, GF_POLICY_FGD, 42, true, &r);
	struct gf_buf b;
	gf_buf_init(&b, 1u << 16);
	gf_replay_jobs_header(&b);
	gf_replay_jobs_rows(&b, &t, &r);
	assert_string_equal(
		gf_buf_str(&b),
		"policy,job,line,team,class,replicas,gpus,gpu_milli,cpu_milli,"
		"memory_mib,model,arrival_s,first_start_s,end_s,run_s,fate\n"
		"fgd,0,2,default,training,1,2,0,0,0,,0.000,0.000,10.000,"
		"10.000,completed\n"
		"fgd,1,3,default,training,1,1,0,0,0,,1.000,10.000,15.000,"
		"5.000,completed\n"
		"fgd,2,4,default,training,1,2,0,0,0,,2.000,15.000,19.000,"
		"4.000,completed\n"
		"fgd,3,5,default,training,1,1,0,0,0,,3.000,10.000,13.000,"
		"3.000,completed\n"
		"fgd,4,6,default,training,1,2,0,0,0,,4.000,,12.000,0.000,"
		"deleted\n");
	assert_string_equal(gf_replay_fate_name(GF_REPLAY_NOT_ARRIVED),
			    "not_arrived");
	assert_string_equal(gf_replay_fate_name((enum gf_replay_fate)99),
			    "unknown");
	gf_buf_release(&b);
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

/*
 * One node of 1 GPU.  P (batch, preemptible) arrives at 0 and runs 10 s;
 * Q (inference) arrives at 2 and runs 3 s.
 * t=0  P starts                                  wait P = 0
 * t=2  Q preempts P (P back to the queue, 2 s run lost); Q starts
 *                                                wait Q = 0
 * t=5  Q ends: JCT Q = 3; P starts again and runs its 10 s again
 * t=15 P ends: JCT P = 15
 * GPU time: P 2 + 10, Q 3: 15 GPU-s.  One preemption.
 */
static void test_hand_preemption(void **state)
{
	(void)state;
	struct gf_cluster c;
	gf_cluster_init(&c);
	assert_int_equal(gf_synth_uniform(&c, 1, 1, 16000, 65536, "a100-80gb"),
			 0);
	struct gf_replay_trace t;
	gf_replay_trace_init(&t);
	add(&t, 0, 1, 10, 0, "batch");
	add(&t, 2, 1, 3, 0, "inference");
	struct gf_replay_result r;
	run(&c, &t, GF_POLICY_BESTFIT, 1, true, &r);
	assert_int_equal(r.preemptions, 1);
	assert_int_equal(r.completed, 2);
	assert_true(wait_s(&t, &r, 0) == 0 && jct_s(&t, &r, 0) == 15);
	assert_true(wait_s(&t, &r, 1) == 0 && jct_s(&t, &r, 1) == 3);
	assert_int_equal(r.run_ms[0], 12000);
	assert_int_equal(r.run_ms[1], 3000);
	assert_int_equal(r.gpu_milli_ms_jobs, INT64_C(15000000));
	assert_int_equal(r.gpu_milli_ms_engine, INT64_C(15000000));
	/* the log: P at 0, Q at 2, P again at 5 */
	assert_int_equal(r.nlog, 3);
	assert_int_equal(r.log[0].job, 0);
	assert_int_equal(r.log[1].job, 1);
	assert_int_equal(r.log[1].t_ms, 2000);
	assert_int_equal(r.log[2].job, 0);
	assert_int_equal(r.log[2].t_ms, 5000);
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

/* 3,000 random jobs on 12 nodes: whole GPUs, shares, CPU only, gangs,
 * three classes, some deleted, some never ending, some unplaceable. */
static void random_trace(struct gf_replay_trace *t, uint64_t seed)
{
	struct gf_rng g;
	gf_rng_seed(&g, seed);
	static const char *const cls[] = { "batch", "training", "inference" };
	static const char *const teams[] = { "a", "b", "c", "d" };
	int64_t at = 0;
	for (int i = 0; i < RANDOM_JOBS; i++) {
		at += (int64_t)gf_rng_below(&g, 6000);
		struct gf_replay_job j = { .arrival_ms = at,
					   .replicas = 1,
					   .model = -1,
					   .cpu_milli = 1000,
					   .memory_mib = 1024,
					   .line = i + 2 };
		int k = (int)gf_rng_below(&g, 10);
		if (k < 3)
			j.gpus = 1;
		else if (k < 5)
			j.gpu_milli = (int16_t)(100 + gf_rng_below(&g, 800));
		else if (k < 6)
			j.gpus = 0;
		else if (k < 8)
			j.gpus = (int16_t)(2 << gf_rng_below(&g, 3));
		else if (k < 9) {
			j.gpus = 8;
			j.replicas = (int16_t)(2 + gf_rng_below(&g, 2));
		} else
			j.gpus = 4;
		if (i % 97 == 0) { /* never placeable on 8-GPU nodes */
			j.gpus = 16;
			j.gpu_milli = 0;
			j.replicas = 1;
		}
		int d = (int)gf_rng_below(&g, 50);
		if (d < 39)
			j.duration_ms = 1 + (int64_t)gf_rng_below(&g, 60000);
		else if (d < 49 || i < RANDOM_JOBS - 100)
			j.delete_ms = at + 1 + (int64_t)gf_rng_below(&g, 90000);
		/* else (a few of the last) runs to the end */
		j.team = (uint16_t)gf_replay_team(t, teams[i % 4]);
		j.cls = (uint16_t)gf_replay_class(t, cls[gf_rng_below(&g, 3)]);
		assert_int_equal(gf_replay_add(t, &j), 0);
	}
}

static void small_cluster(struct gf_cluster *c)
{
	gf_cluster_init(c);
	assert_int_equal(gf_synth_uniform(c, 12, 8, 64000, 524288, "h100-sxm"),
			 0);
}

/* Every job arrives once and ends at most once (gf_replay_check), the
 * counts add up, GPU time agrees both ways, under every policy. */
static void test_conservation_random(void **state)
{
	(void)state;
	struct gf_cluster c;
	small_cluster(&c);
	struct gf_replay_trace t;
	gf_replay_trace_init(&t);
	random_trace(&t, 7);
	for (int p = 0; p < GF_POLICY_COUNT; p++) {
		struct gf_replay_result r;
		run(&c, &t, (enum gf_policy)p, 3, p % 2 == 0, &r);
		assert_int_equal(r.arrived, t.n);
		assert_int_equal(r.refused + r.completed + r.deleted +
					 r.failed + r.running_end +
					 r.queued_end,
				 t.n);
		/* the 16-GPU jobs (every 97th) at least */
		assert_true(r.refused >= (RANDOM_JOBS + 96) / 97);
		assert_true(r.preemptions > 0);
		assert_true(r.deleted > 0);
		assert_true(r.running_end > 0);
		assert_int_equal(r.gpu_milli_ms_engine, r.gpu_milli_ms_jobs);
		/* GPU time is the sum of each job's placed run times */
		int64_t sum = 0;
		for (int j = 0; j < t.n; j++) {
			const struct gf_replay_job *x = &t.jobs[j];
			int64_t milli = x->gpus ? x->gpus * 1000 : x->gpu_milli;
			sum += r.run_ms[j] * milli * x->replicas;
			assert_true(r.arrivals[j] == 1 && r.ends[j] <= 1);
			if (r.fate[j] == GF_REPLAY_COMPLETED &&
			    x->delete_ms == 0 && x->duration_ms > 0)
				assert_true(r.end_at_ms[j] -
						    r.first_start_ms[j] >=
					    x->duration_ms);
		}
		assert_int_equal(sum, r.gpu_milli_ms_jobs);
		assert_true(r.mean_alloc > 0 && r.mean_alloc <= 1);
		gf_replay_result_release(&r);
	}
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

static bool same(const struct gf_replay_trace *t,
		 const struct gf_replay_result *a,
		 const struct gf_replay_result *b)
{
	if (a->nlog != b->nlog || a->preemptions != b->preemptions ||
	    a->passes != b->passes || a->npoints != b->npoints)
		return false;
	for (int j = 0; j < t->n; j++)
		if (a->fate[j] != b->fate[j] ||
		    a->first_start_ms[j] != b->first_start_ms[j] ||
		    a->end_at_ms[j] != b->end_at_ms[j])
			return false;
	for (int i = 0; i < a->nlog; i++)
		if (memcmp(&a->log[i], &b->log[i], sizeof(a->log[i])) != 0)
			return false;
	return memcmp(a->points, b->points,
		      (size_t)a->npoints * sizeof(*a->points)) == 0;
}

/* The same trace, policy and seed: the same run, start by start. */
/* --load X: arrivals X times as dense, run times and lifetimes kept. */
static void test_scale_arrivals(void **state)
{
	(void)state;
	struct gf_replay_trace t;
	gf_replay_trace_init(&t);
	add(&t, 0, 1, 10, 0, "training");
	add(&t, 3, 1, 5, 0, "training");
	add(&t, 9, 2, 0, 12, "batch");
	assert_int_equal(gf_replay_scale_arrivals(&t, 0), GF_EINVAL);
	assert_int_equal(gf_replay_scale_arrivals(&t, -2), GF_EINVAL);
	assert_int_equal(gf_replay_scale_arrivals(&t, NAN), GF_EINVAL);
	assert_int_equal(gf_replay_scale_arrivals(&t, 1001), GF_EINVAL);
	assert_int_equal(t.jobs[1].arrival_ms, 3000); /* nothing changed */
	assert_int_equal(gf_replay_scale_arrivals(&t, 1), 0);
	assert_int_equal(t.jobs[2].arrival_ms, 9000);
	assert_int_equal(gf_replay_scale_arrivals(&t, 4), 0);
	assert_int_equal(t.jobs[0].arrival_ms, 0);
	assert_int_equal(t.jobs[1].arrival_ms, 750);
	assert_int_equal(t.jobs[1].duration_ms, 5000);
	assert_int_equal(t.jobs[2].arrival_ms, 2250);
	assert_int_equal(t.jobs[2].delete_ms, 2250 + 3000);
	gf_replay_trace_release(&t);
}

static void test_same_seed_same_run(void **state)
{
	(void)state;
	struct gf_cluster c;
	small_cluster(&c);
	struct gf_replay_trace t;
	gf_replay_trace_init(&t);
	random_trace(&t, 11);
	enum gf_policy ps[] = { GF_POLICY_RANDOM, GF_POLICY_FGD,
				GF_POLICY_FGDPLUS };
	for (unsigned i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		struct gf_replay_result a, b, d;
		run(&c, &t, ps[i], 5, true, &a);
		run(&c, &t, ps[i], 5, true, &b);
		assert_true(same(&t, &a, &b));
		if (ps[i] == GF_POLICY_RANDOM) { /* the seed matters there */
			run(&c, &t, ps[i], 6, true, &d);
			assert_false(same(&t, &a, &d));
			gf_replay_result_release(&d);
		}
		gf_replay_result_release(&a);
		gf_replay_result_release(&b);
	}
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

/*
 * The arrival window and the tail, by hand.  One node of 4 GPUs, class
 * training, exact estimates.
 *
 *   job  arrives  GPUs  runs
 *   A    0        2     10
 *   B    2        4      5
 *   C    6        2      2
 *
 * t=0   A starts                                 (2 of 4 GPUs)
 * t=2   B needs 4: waits, reserved at 10 (A's max runtime)
 * t=6   C ends at 8 <= 10: backfilled            (4 of 4)
 * t=8   C ends                                   (2 of 4)
 * t=10  A ends, B starts                         (4 of 4)
 * t=15  B ends.
 * Window [0, 6] (first to last arrival): alloc 2/4 throughout = 0.5;
 * pending 0 on [0,2), 4 GPUs on [2,6): 16/6; started in it A and C,
 * waits 0 and 0.  Tail (6, 15]: alloc (2x1 + 2x0.5 + 5x1)/9 = 8/9,
 * pending (2x4 + 2x4)/9 = 16/9; started B, wait 8.  Whole run [0, 15]:
 * alloc (6x0.5 + 8)/15 = 11/15, pending 32/15, waits 0, 8, 0.
 * With C asking 10 s (requested, its run 2 s): C would end at 16 > 10
 * and cannot be backfilled; it starts when B ends, at 15: wait 9.
 */
static void window_trace(struct gf_replay_trace *t, double c_requested_s)
{
	gf_replay_trace_init(t);
	add(t, 0, 2, 10, 0, "training");
	add(t, 2, 4, 5, 0, "training");
	add(t, 6, 2, 2, 0, "training");
	t->jobs[0].requested_ms = 10000;
	t->jobs[1].requested_ms = 5000;
	t->jobs[2].requested_ms = (int64_t)(c_requested_s * 1000);
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static void test_window_and_tail(void **state)
{
	(void)state;
	struct gf_cluster c;
	gf_cluster_init(&c);
	assert_int_equal(gf_synth_uniform(&c, 1, 4, 16000, 65536, "a100-80gb"),
			 0);
	struct gf_replay_trace t;
	window_trace(&t, 2);
	struct gf_replay_result r;
	run(&c, &t, GF_POLICY_FGD, 42, true, &r);
	assert_true(wait_s(&t, &r, 2) == 0 && wait_s(&t, &r, 1) == 8);
	assert_int_equal(r.end_ms, 15000);
	assert_int_equal(r.window.from_ms, 0);
	assert_int_equal(r.window.to_ms, 6000);
	assert_true(near(r.mean_alloc, 0.5) && near(r.window.mean_alloc, 0.5));
	assert_true(near(r.mean_pending_gpus, 16.0 / 6));
	/* the wait counts B, which started in the tail (8 s); of those
	 * that started in the window, none waited */
	assert_int_equal(r.wait.n, 3);
	assert_true(near(r.wait.mean, 8.0 / 3));
	assert_int_equal(r.window.wait.n, 2);
	assert_true(r.window.wait.mean == 0 && r.window.wait.max == 0);
	assert_int_equal(r.tail.from_ms, 6000);
	assert_int_equal(r.tail.to_ms, 15000);
	assert_true(near(r.tail.mean_alloc, 8.0 / 9));
	assert_true(near(r.tail.mean_pending_gpus, 16.0 / 9));
	assert_int_equal(r.tail.started, 1);
	assert_true(r.tail.wait.mean == 8);
	assert_true(r.peak_alloc == 1.0);
	gf_replay_result_release(&r);

	struct gf_replay_opts whole = { .estimates = true, .whole_run = true };
	run_with(&c, &t, NULL, NULL, GF_POLICY_FGD, 42, whole, &r);
	assert_true(near(r.mean_alloc, 11.0 / 15));
	assert_true(near(r.mean_pending_gpus, 32.0 / 15));
	assert_int_equal(r.wait.n, 3);
	assert_true(near(r.wait.mean, 8.0 / 3));
	/* the window and tail are still there */
	assert_true(near(r.window.mean_alloc, 0.5));
	assert_true(near(r.tail.mean_alloc, 8.0 / 9));
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

/* The estimate changes backfill: exact lets C in before B's reservation,
 * requested (10 s for a 2 s run) does not (window_trace's comment). */
static void test_estimate_modes(void **state)
{
	(void)state;
	struct gf_cluster c;
	gf_cluster_init(&c);
	assert_int_equal(gf_synth_uniform(&c, 1, 4, 16000, 65536, "a100-80gb"),
			 0);
	struct gf_replay_trace t;
	window_trace(&t, 10);
	struct gf_replay_result r;
	struct gf_replay_opts o = { .estimates = true,
				    .est = GF_REPLAY_EST_EXACT };
	run_with(&c, &t, NULL, NULL, GF_POLICY_FGD, 42, o, &r);
	assert_true(wait_s(&t, &r, 2) == 0);
	gf_replay_result_release(&r);
	o.est = GF_REPLAY_EST_REQUESTED;
	run_with(&c, &t, NULL, NULL, GF_POLICY_FGD, 42, o, &r);
	assert_true(wait_s(&t, &r, 1) == 8);
	assert_true(wait_s(&t, &r, 2) == 9);
	assert_int_equal(r.failed, 0);
	gf_replay_result_release(&r);
	/* a requested time under the run fails the job there, as Slurm
	 * does: C asks 1 s for its 2 s run */
	t.jobs[2].requested_ms = 1000;
	run_with(&c, &t, NULL, NULL, GF_POLICY_FGD, 42, o, &r);
	assert_int_equal(r.failed, 1);
	assert_int_equal(r.fate[2], GF_REPLAY_FAILED);
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);

	/* noisy: never under the run time (no job fails), the same draw
	 * for the same seed, another for another */
	small_cluster(&c);
	random_trace(&t, 7);
	o.est = GF_REPLAY_EST_NOISY;
	o.est_sigma = 2;
	o.est_seed = 1;
	struct gf_replay_result r2, r3;
	run_with(&c, &t, NULL, NULL, GF_POLICY_BESTFIT, 1, o, &r);
	run_with(&c, &t, NULL, NULL, GF_POLICY_BESTFIT, 1, o, &r2);
	o.est = GF_REPLAY_EST_EXACT;
	run_with(&c, &t, NULL, NULL, GF_POLICY_BESTFIT, 1, o, &r3);
	assert_int_equal(r.failed, 0);
	assert_true(same(&t, &r, &r2));
	assert_false(same(&t, &r, &r3));
	gf_replay_result_release(&r);
	gf_replay_result_release(&r2);
	gf_replay_result_release(&r3);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

/*
 * VCs as node partitions: VC va has nodes 0-1, vb nodes 2-4 (4 GPUs
 * each); 400 jobs of both (1-4 GPUs, some gangs of 2 x 4) arrive faster
 * than they leave.  With partitions no replica of a job is ever placed
 * outside its VC's nodes and a job of a VC with no nodes is refused;
 * without, some are (so the check can fail).
 */
static void test_vc_partitions(void **state)
{
	(void)state;
	char names[2][GF_NODE_NAME_MAX] = { "va", "vb" };
	int count[2] = { 2, 3 };
	struct gf_cluster c;
	gf_cluster_init(&c);
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	gf_replay_config(cfg, GF_POLICY_FGD, 42);
	struct gf_ctl_node *nodes = NULL;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_replay_vc_cluster(names, count, 2, 4, "P100", &c,
					      cfg, &nodes, &e),
			 0);
	assert_int_equal(c.n, 5);
	assert_int_equal(cfg->nteams, 2);
	assert_string_equal(nodes[2].labels, "vc=vb");
	struct gf_replay_trace t;
	gf_replay_trace_init(&t);
	uint64_t x = 12345;
	for (int i = 0; i < 400; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int g = 1 + (int)((x >> 33) % 4);
		struct gf_replay_job j = {
			.arrival_ms = i * 500,
			.duration_ms = 2000 + (int64_t)((x >> 20) % 30000),
			.gpus = (int16_t)(i % 9 == 0 ? 4 : g),
			.replicas = (int16_t)(i % 9 == 0 ? 2 : 1),
			.model = -1,
			.line = i + 2,
		};
		j.team = (uint16_t)gf_replay_team(&t,
						  (x >> 40) % 3 ? "vb" : "va");
		j.cls = (uint16_t)gf_replay_class(&t, "training");
		assert_int_equal(gf_replay_add(&t, &j), 0);
	}
	t.jobs[5].team = (uint16_t)gf_replay_team(&t, "vz"); /* no nodes */
	for (int part = 1; part >= 0; part--) {
		struct gf_replay_opts o = { .estimates = true,
					    .partition_by_team = part };
		int outside = 0;
		for (int p = 0; p < GF_POLICY_COUNT; p++) {
			struct gf_replay_result r;
			run_with(&c, &t, cfg, part ? nodes : NULL,
				 (enum gf_policy)p, 42, o, &r);
			for (int k = 0; k < r.nlog; k++) {
				const struct gf_replay_start *s = &r.log[k];
				bool va = strcmp(t.teams[t.jobs[s->job].team],
						 "va") == 0;
				outside += va != (s->node < 2);
			}
			assert_true(r.started > 300);
			if (part)
				assert_int_equal(r.fate[5], GF_REPLAY_REFUSED);
			gf_replay_result_release(&r);
		}
		if (part)
			assert_int_equal(outside, 0);
		else
			assert_true(outside > 0);
	}
	gf_replay_trace_release(&t);
	gf_free(nodes);
	gf_free(cfg);
	gf_cluster_release(&c);
}

static int load(const char *name, const char *text, enum gf_replay_source s,
		struct gf_replay_trace *t, struct gf_err *e)
{
	gf_replay_trace_init(t);
	gf_err_clear(e);
	return gf_replay_load(tmpfile_with(name, text), s, NULL, t, e);
}

static void expect_error(const char *name, const char *text,
			 enum gf_replay_source s, const char *want)
{
	struct gf_replay_trace t;
	struct gf_err e;
	int rc = load(name, text, s, &t, &e);
	gf_replay_trace_release(&t);
	if (rc == 0 || strstr(e.msg, want) == NULL)
		print_message("want '%s', got %d '%s'\n", want, rc, e.msg);
	assert_true(rc < 0);
	assert_non_null(strstr(e.msg, want));
}

static void test_readers(void **state)
{
	(void)state;
	struct gf_replay_trace t;
	struct gf_err e;
	/* Alibaba 2023: a pod that ran runs deletion - scheduled; one never
	 * scheduled is deleted at deletion_time; qos to classes */
	assert_int_equal(
		load("pods.csv",
		     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
		     "pod_phase,creation_time,deletion_time,scheduled_time\n"
		     "p0,4000,1024,1,500,,LS,Running,10,100,20\n"
		     "p1,4000,1024,2,1000,V100M16,BE,Pending,30,50,\n"
		     "p2,0,0,0,0,A|B,Burstable,Running,40,40,40\n",
		     GF_REPLAY_ALIBABA2023, &t, &e),
		0);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.jobs[0].arrival_ms, 10000);
	assert_int_equal(t.jobs[0].duration_ms, 80000);
	assert_int_equal(t.jobs[0].gpu_milli, 500);
	assert_int_equal(t.jobs[0].gpus, 0);
	assert_string_equal(t.classes[t.jobs[0].cls], "inference");
	assert_int_equal(t.jobs[1].duration_ms, 0);
	assert_int_equal(t.jobs[1].delete_ms, 50000);
	assert_int_equal(t.jobs[1].gpus, 2);
	assert_string_equal(t.models[t.jobs[1].model], "V100M16");
	assert_string_equal(t.classes[t.jobs[1].cls], "batch");
	assert_int_equal(t.jobs[2].duration_ms, 1); /* 0 s runs 1 ms */
	assert_int_equal(t.jobs[2].model, -1);	    /* several: any */
	assert_string_equal(t.classes[t.jobs[2].cls], "training");
	assert_int_equal(t.jobs[2].line, 4);
	gf_replay_trace_release(&t);
	/* Philly: from the first arrival; 12 GPUs: 2 x 6; 16: 2 x 8 */
	assert_int_equal(load("philly.csv",
			      "timestamp,duration,num_gpus,gpu_time,cluster\n"
			      "2017-10-09 07:01:55,66.0,12,792.0,11cb48\n"
			      "2017-10-09 06:13:03,2951.5,1,2951.0,6214e9\n"
			      ",,,,\n"
			      "2017-10-10 06:13:03,10,16,160,6214e9\n",
			      GF_REPLAY_PHILLY, &t, &e),
			 0);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.skipped, 1);
	assert_int_equal(t.jobs[0].arrival_ms, (48 * 60 + 52) * 1000);
	assert_int_equal(t.jobs[0].replicas, 2);
	assert_int_equal(t.jobs[0].gpus, 6);
	assert_int_equal(t.jobs[1].arrival_ms, 0);
	assert_int_equal(t.jobs[1].duration_ms, 2951500);
	assert_int_equal(t.jobs[2].arrival_ms, 86400000);
	assert_int_equal(t.jobs[2].replicas, 2);
	assert_int_equal(t.jobs[2].gpus, 8);
	assert_int_equal(t.nteams, 2);
	assert_string_equal(t.teams[t.jobs[2].team], "6214e9");
	gf_replay_trace_release(&t);
	/* DLRM: GPU instances only (CN skipped); NaN/absent times */
	const char *dlrm =
		"instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,"
		"gpu_limit,rdma_request,rdma_limit,memory_request,"
		"memory_limit,disk_request,disk_limit,max_instance_per_node,"
		"creation_time,scheduled_time,deletion_time\n"
		"i0,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,,,\n"
		"i1,CN,app_1,64,64,0,0,1,1,320.0,320.0,255.0,300.0,-1,"
		"1435629.0,1435629.0,1435760.0\n"
		"i2,HN,app_0,8,8,1,1,25,25,64.5,64.5,1,1,8,100.0,100.0,"
		"NaN\n"
		"i3,HN,app_2,8,8,2,2,25,25,64,64,1,1,8,NaN,NaN,300.5\n";
	assert_int_equal(load("dlrm.csv", dlrm, GF_REPLAY_DLRM2025, &t, &e), 0);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.skipped, 1);
	assert_int_equal(t.jobs[0].arrival_ms, 0);
	assert_int_equal(t.jobs[0].delete_ms, 0);
	assert_int_equal(t.jobs[0].cpu_milli, 12000);
	assert_int_equal(t.jobs[0].memory_mib, 120 * 1024);
	assert_int_equal(t.jobs[1].arrival_ms, 100000);
	assert_int_equal(t.jobs[1].memory_mib, 66048);
	assert_int_equal(t.jobs[2].gpus, 2);
	assert_int_equal(t.jobs[2].delete_ms, 300500);
	assert_string_equal(t.classes[t.jobs[2].cls], "inference");
	gf_replay_trace_release(&t);
	struct gf_replay_load_opts o = { .cpu_instances = true, .limit = 2 };
	gf_replay_trace_init(&t);
	assert_int_equal(gf_replay_load(tmpfile_with("dlrm.csv", dlrm),
					GF_REPLAY_DLRM2025, &o, &t, &e),
			 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.jobs[1].gpus, 0);
	gf_replay_trace_release(&t);
}

/* Bad input: the message names file:line and the field. */
static void test_reader_errors(void **state)
{
	(void)state;
	const char *hdr = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,"
			  "gpu_spec,qos,pod_phase,creation_time,"
			  "deletion_time,scheduled_time\n";
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "%sp0,1,1,1,1000,,LS,Running,0,10,0\n"
		 "p1,1,1,1,1000,,XX,Running,0,10,0\n",
		 hdr);
	expect_error("a.csv", buf, GF_REPLAY_ALIBABA2023,
		     "a.csv:3: field 'qos': expected LS, Burstable");
	snprintf(buf, sizeof(buf), "%sp0,1,1,1,1000,,LS,Running,zz,10,0\n",
		 hdr);
	expect_error("a.csv", buf, GF_REPLAY_ALIBABA2023,
		     "a.csv:2: field 'creation_time': expected a number, got "
		     "'zz'");
	snprintf(buf, sizeof(buf), "%sp0,1,1,1,1000,,LS,Running,5,10,20\n",
		 hdr);
	expect_error("a.csv", buf, GF_REPLAY_ALIBABA2023,
		     "a.csv:2: field 'deletion_time': before scheduled_time");
	snprintf(buf, sizeof(buf), "%sp0,1,1,2,500,,LS,Running,0,10,0\n", hdr);
	expect_error("a.csv", buf, GF_REPLAY_ALIBABA2023,
		     "a.csv:2: field 'gpu_milli': 500 with num_gpu 2");
	expect_error("a.csv", "name,cpu_milli\np,1\n", GF_REPLAY_ALIBABA2023,
		     "a.csv: missing required column 'memory_mib'");
	expect_error("p.csv",
		     "timestamp,duration,num_gpus\n"
		     "2017-10-09 07:01:55,66.0,1\n"
		     "2017-10-09 07:01:55,66.0,0\n",
		     GF_REPLAY_PHILLY,
		     "p.csv:3: field 'num_gpus': 0 is outside 1..128");
	expect_error("p.csv",
		     "timestamp,duration,num_gpus\n"
		     "2017-13-09 07:01:55,66.0,1\n",
		     GF_REPLAY_PHILLY,
		     "p.csv:2: field 'timestamp': expected YYYY-MM-DD "
		     "HH:MM:SS, got '2017-13-09 07:01:55'");
	expect_error("p.csv",
		     "timestamp,duration,num_gpus\n"
		     "2017-10-09 07:01:55,-4,1\n",
		     GF_REPLAY_PHILLY,
		     "p.csv:2: field 'duration': -4 is outside");
	expect_error("p.csv", "timestamp,duration,num_gpus\n", GF_REPLAY_PHILLY,
		     "p.csv: no jobs");
	expect_error("d.csv",
		     "role,app_name,cpu_request,gpu_request,memory_request,"
		     "creation_time,deletion_time\n"
		     "HN,a,1,1,1,,\nGN,a,1,1,1,,\n",
		     GF_REPLAY_DLRM2025,
		     "d.csv:3: field 'role': expected HN or CN, got 'GN'");
	expect_error("d.csv",
		     "role,app_name,cpu_request,gpu_request,memory_request,"
		     "creation_time,deletion_time\n"
		     "HN,a,1,0,1,,\n",
		     GF_REPLAY_DLRM2025,
		     "d.csv:2: field 'gpu_request': 0 for a GPU (HN) instance");
	struct gf_replay_trace t;
	struct gf_err e;
	gf_replay_trace_init(&t);
	gf_err_clear(&e);
	assert_true(gf_replay_load("/nonexistent/x.csv", GF_REPLAY_PHILLY, NULL,
				   &t, &e) < 0);
	assert_non_null(strstr(e.msg, "/nonexistent/x.csv"));
	gf_replay_trace_release(&t);
	char names[4][GF_NODE_NAME_MAX];
	int count[4];
	gf_err_clear(&e);
	assert_int_equal(
		gf_replay_philly_vcs(tmpfile_with("vc.csv", "vc,node num\n"
							    "a,4\nb,x\n"),
				     names, count, 4, &e),
		GF_EPARSE);
	assert_non_null(strstr(e.msg, "vc.csv:3: field 'node num'"));
	assert_int_equal(
		gf_replay_philly_vcs(tmpfile_with("vc.csv", "vc,node num\n"
							    "a,4\nb,2\n"),
				     names, count, 4, &e),
		2);
	assert_string_equal(names[1], "b");
	assert_int_equal(count[0] + count[1], 6);
	enum gf_replay_source s;
	assert_int_equal(gf_replay_source_parse("philly", &s), 0);
	assert_int_equal(s, GF_REPLAY_PHILLY);
	assert_int_equal(gf_replay_source_parse("x", &s), GF_ENOTFOUND);
	assert_string_equal(gf_replay_source_name(GF_REPLAY_DLRM2025),
			    "dlrm2025");
}

/* The shared traces, whole (Alibaba 2023 default, DLRM) or cut (Philly's
 * first 20,000 jobs on its virtual clusters): conservation and GPU
 * time. */
static void test_shared_traces(void **state)
{
	(void)state;
	char pods[512], nodes[512], philly[512], dlrm[512];
	shared_path(pods, sizeof(pods),
		    "traces/alibaba-gpu-v2023/openb_pod_list_default.csv");
	shared_path(nodes, sizeof(nodes),
		    "traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv");
	shared_path(philly, sizeof(philly), "traces/philly-pollux/philly.csv");
	shared_path(dlrm, sizeof(dlrm),
		    "traces/alibaba-gpu-v2025/disaggregated_DLRM_trace.csv");
	if (access(pods, R_OK) || access(philly, R_OK) || access(dlrm, R_OK)) {
		print_message("shared traces absent under %s (set "
			      "GPUFLEET_SHARED)\n",
			      shared_dir());
		skip();
	}
	struct gf_err e;
	struct gf_cluster c;
	struct gf_replay_trace t;
	struct gf_replay_result r;
	gf_err_clear(&e);
	struct gf_replay_load_opts cut = { .limit = SHARED_CUT };
	/* Alibaba 2023 on its own nodes */
	gf_cluster_init(&c);
	gf_replay_trace_init(&t);
	assert_int_equal(gf_trace_load_nodes(nodes, &c, &e), 0);
	assert_int_equal(
		gf_replay_load(pods, GF_REPLAY_ALIBABA2023, &cut, &t, &e), 0);
	int n = SHARED_CUT ? SHARED_CUT : 8152;
	assert_int_equal(t.n, n);
	run(&c, &t, GF_POLICY_FGD, 42, true, &r);
	assert_int_equal(r.arrived, n);
	assert_int_equal(r.completed + r.deleted, n);
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	/* DLRM's GPU instances on the same nodes (no model asked) */
	gf_replay_trace_init(&t);
	assert_int_equal(gf_replay_load(dlrm, GF_REPLAY_DLRM2025, &cut, &t, &e),
			 0);
	assert_int_equal(t.n, SHARED_CUT ? SHARED_CUT : 7386);
	run(&c, &t, GF_POLICY_FGDPLUS, 42, true, &r);
	assert_true(r.running_end > 0);
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
	/* Philly, the first 20,000 jobs, on the built-in cluster */
	gf_cluster_init(&c);
	assert_int_equal(gf_synth_cluster(&c), 0);
	gf_replay_trace_init(&t);
	cut.limit = SHARED_CUT ? SHARED_CUT : 20000;
	assert_int_equal(gf_replay_load(philly, GF_REPLAY_PHILLY, &cut, &t, &e),
			 0);
	assert_int_equal(t.n, cut.limit);
	run(&c, &t, GF_POLICY_BESTFIT, 42, true, &r);
	assert_int_equal(r.completed + r.refused, cut.limit);
	gf_replay_result_release(&r);
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
}

int main(void)
{
	assert_non_null(mkdtemp(tmpdir));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_backfill),
		cmocka_unit_test(test_jobs_csv),
		cmocka_unit_test(test_hand_preemption),
		cmocka_unit_test(test_conservation_random),
		cmocka_unit_test(test_scale_arrivals),
		cmocka_unit_test(test_same_seed_same_run),
		cmocka_unit_test(test_window_and_tail),
		cmocka_unit_test(test_estimate_modes),
		cmocka_unit_test(test_vc_partitions),
		cmocka_unit_test(test_readers),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_shared_traces),
	};
	int rc = cmocka_run_group_tests_name("replay", tests, NULL, NULL);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
