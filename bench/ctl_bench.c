/*
 * ctl_bench.c - the controller's scheduling core (ctl.h) at the size of
 * issue 10: 10,000 nodes x 8 GPUs (70 % h100, 30 % a100, 40 blocks of
 * 250 nodes, two zones), FGD.
 *
 *   ctl_bench [NODES]
 * BENCH lines:
 *   ctl.schedule.placements_per_s  one gf_ctl_schedule pass over a queue
 *                                  of 4,000 jobs (1 GPU, shares, 2/4/8
 *                                  GPUs, gangs of 2-4 x 8 GPUs in one
 *                                  block, CPU only; some with a model or
 *                                  a zone) on a cluster already in use
 *                                  (12,000 jobs placed, half of them
 *                                  finished: 32 % of GPU allocated, 54 %
 *                                  after): replicas placed per second of
 *                                  the pass (target: 10,000)
 *   ctl.schedule.empty_placements_per_s  the same queue on an empty
 *                                  cluster
 *   ctl.schedule.pass_ms           that first pass (ms)
 *   ctl.admit.per_s                gf_ctl_admit over 1,000 request shapes
 *                                  seen before (admits/s)
 *   ctl.admit.new_shape_per_s      gf_ctl_admit of shapes never seen
 *                                  (admits/s)
 *   ctl.add.per_s                  gf_ctl_add of pending jobs (adds/s)
 *   ctl.schedule.full_queue_pass_ms  a pass over a queue of about 18,000
 *                                  jobs on a full cluster: prod jobs
 *                                  preempt batch ones (about 160
 *                                  preemptions), the rest wait (ms)
 *   ctl.node_add.5000_nodes        a controller whose agents register
 *                                  one by one: 5,000 nodes of 8 GPUs
 *                                  (the same mix, 20 blocks) join an
 *                                  empty core (gf_ctl_node_add, then
 *                                  gf_ctl_node_ready), each followed by
 *                                  one job added and a scheduling pass
 *                                  (a small queue: 32 jobs wait for l40s
 *                                  nodes that never come, looked at
 *                                  again at each add); the whole (s)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpufleet/ctl.h>
#include <gpufleet/frag.h>
#include <gpufleet/rng.h>
#include <gpufleet/sched.h>

#include "bench.h"
#include "util/mem.h"

#define QUEUE 4000

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct gf_ctl_config *make_cfg(int n)
{
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	cfg->policy = GF_POLICY_FGD;
	cfg->nclasses = 2;
	snprintf(cfg->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	cfg->classes[0].preemptible = true;
	snprintf(cfg->classes[1].name, GF_CLASS_NAME_MAX, "prod");
	cfg->classes[1].priority = 100;
	cfg->nteams = 8;
	for (int t = 0; t < 8; t++) {
		snprintf(cfg->teams[t].name, GF_TEAM_NAME_MAX, "t%d", t);
		cfg->teams[t].weight = 1 + t % 3;
		cfg->teams[t].milli = -1;
	}
	cfg->nblocks = (n + 249) / 250;
	for (int b = 0; b < cfg->nblocks; b++)
		snprintf(cfg->blocks[b], GF_NODE_NAME_MAX, "b%d", b);
	cfg->seed = 42;
	return cfg;
}

static struct gf_ctl *make_ctl(int n)
{
	struct gf_ctl_config *cfg = make_cfg(n);
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	int h100 = gf_cluster_model(c, "h100-80gb");
	int a100 = gf_cluster_model(c, "a100-80gb");
	struct gf_ctl_node *nd = gf_calloc((size_t)n, sizeof(*nd));
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "n%05d", i);
		BENCH_MUST(gf_cluster_add(c, name, 128000, 1 << 20, 8,
					  i % 10 < 7 ? h100 : a100));
		nd[i].block = i / 250;
		snprintf(nd[i].labels, sizeof(nd[i].labels), "zone=%c",
			 i % 2 ? 'a' : 'b');
	}
	struct gf_ctl *ctl;
	struct gf_err e;
	if (gf_ctl_new(cfg, c, nd, &ctl, &e)) {
		fprintf(stderr, "ctl_bench: %s\n", e.msg);
		exit(1);
	}
	gf_free(nd);
	gf_free(cfg);
	return ctl;
}

static uint64_t seq;

static struct gf_job *random_job(struct gf_rng *r)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	struct gf_job_spec *s = &j->spec;
	snprintf(s->team, sizeof(s->team), "t%d", (int)gf_rng_below(r, 8));
	snprintf(s->class_name, sizeof(s->class_name), "%s",
		 gf_rng_below(r, 10) ? "batch" : "prod");
	s->replicas = 1;
	uint64_t k = gf_rng_below(r, 100);
	if (k < 35) {
		s->gpus = 1;
	} else if (k < 55) {
		s->gpu_milli = 250 * (1 + (int)gf_rng_below(r, 2));
	} else if (k < 65) {
		s->gpus = 2;
	} else if (k < 75) {
		s->gpus = 4;
	} else if (k < 85) {
		s->gpus = 8;
	} else if (k < 95) {
		s->gpus = 8;
		s->replicas = 2 + (int)gf_rng_below(r, 3);
	}
	s->cpu_milli = 4000 * (s->gpus ? s->gpus : 1);
	s->memory_mib = 16384;
	if (s->gpus && gf_rng_below(r, 5) == 0)
		snprintf(s->gpu_model, sizeof(s->gpu_model), "%s",
			 gf_rng_below(r, 3) ? "h100-80gb" : "a100-80gb");
	if (gf_rng_below(r, 10) == 0)
		snprintf(s->node_selector, sizeof(s->node_selector), "zone=%c",
			 gf_rng_below(r, 2) ? 'a' : 'b');
	if (gf_rng_below(r, 2))
		s->max_runtime_s = 600 + (int64_t)gf_rng_below(r, 3600);
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 1;
	j->block = -1;
	return j;
}

/* Add n jobs; returns adds per second. */
static double add_jobs(struct gf_ctl *ctl, struct gf_rng *r, int n)
{
	double t = 0;
	for (int i = 0; i < n; i++) {
		struct gf_job *j = random_job(r);
		struct gf_err e;
		if (gf_ctl_admit(ctl, &j->spec, &e)) {
			gf_job_release(j);
			gf_free(j);
			continue;
		}
		double t0 = now_s();
		if (gf_ctl_add(ctl, j, &e)) {
			fprintf(stderr, "ctl_bench: add: %s\n", e.msg);
			exit(1);
		}
		t += now_s() - t0;
	}
	return n / t;
}

/* One pass; returns replicas placed per second, *ms its length. */
static double one_pass(struct gf_ctl *ctl, int64_t now, double *ms)
{
	struct gf_ctl_changes ch = { 0 };
	double t0 = now_s();
	(void)!gf_ctl_schedule(ctl, now, &ch);
	double dt = now_s() - t0;
	long placed = 0;
	for (int i = 0; i < ch.n; i++) {
		const struct gf_job *j = gf_ctl_job(ctl, ch.ids[i]);
		if (j->state == GF_JOB_RUNNING && j->started_ms == now)
			placed += j->spec.replicas;
	}
	gf_ctl_changes_release(&ch);
	*ms = dt * 1000;
	printf("# pass at %lld: %ld replicas placed in %.1f ms\n",
	       (long long)now, placed, dt * 1000);
	return (double)placed / dt;
}

static void report(const struct gf_ctl *ctl)
{
	struct gf_ctl_stats st;
	gf_ctl_stats(ctl, &st);
	printf("# %d running, %d pending, %.0f %% of GPU allocated\n",
	       st.running, st.pending,
	       100.0 * (double)st.gpus_alloc_milli /
		       (double)st.gpus_total_milli);
}

/* Finish about half of the running jobs. */
static void finish_half(struct gf_ctl *ctl, struct gf_rng *r, int64_t now)
{
	for (int i = 0; i < gf_ctl_njobs(ctl); i++) {
		const struct gf_job *j = gf_ctl_job_at(ctl, i);
		struct gf_err e;
		if (j->state == GF_JOB_RUNNING && gf_rng_below(r, 2))
			(void)!gf_ctl_finish(ctl, j->id, 0, now, &e);
	}
}

static void bench_admit(struct gf_ctl *ctl, struct gf_rng *r)
{
	struct gf_job_spec *shapes = gf_calloc(1000, sizeof(*shapes));
	for (int i = 0; i < 1000; i++) {
		struct gf_job *j = random_job(r);
		shapes[i] = j->spec;
		shapes[i].cpu_milli = 1000 + 7 * i; /* 1,000 distinct shapes */
		gf_free(j);
	}
	struct gf_err e;
	double t0 = now_s();
	for (int i = 0; i < 1000; i++)
		(void)!gf_ctl_admit(ctl, &shapes[i], &e);
	double cold = now_s() - t0;
	int n = 200000;
	t0 = now_s();
	for (int i = 0; i < n; i++)
		(void)!gf_ctl_admit(ctl, &shapes[gf_rng_below(r, 1000)], &e);
	double warm = now_s() - t0;
	printf("BENCH ctl.admit.per_s %.0f admits/s\n", n / warm);
	printf("BENCH ctl.admit.new_shape_per_s %.0f admits/s\n", 1000 / cold);
	gf_free(shapes);
}

/* What rebuilding the engine at each add would cost instead: a new
 * engine over k nodes and the running work committed again (here one
 * 1-GPU placement per node, as the run above ends with), summed over k =
 * 1..n: about n/2 times the cost at n nodes. */
static double rebuild_estimate(int n)
{
	struct gf_cluster c;
	gf_cluster_init(&c);
	int m = gf_cluster_model(&c, "h100-80gb");
	for (int i = 0; i < n; i++)
		BENCH_MUST(gf_cluster_add(&c, "n", 128000, 1 << 20, 8, m));
	struct gf_req mix[3] = {
		{ .cpu = 8000, .ngpus = 1, .gpu_milli = 1000 },
		{ .cpu = 4000, .ngpus = 1, .gpu_milli = 500 },
		{ .cpu = 32000, .ngpus = 4, .gpu_milli = 1000 }
	};
	struct gf_typical *typ;
	int nt = gf_typical_build(mix, 3, 1.0, &typ);
	struct gf_sched *s;
	double t0 = now_s();
	BENCH_MUST(gf_sched_new(&c, GF_POLICY_FGD, typ, nt, 16, 1, &s));
	struct gf_req one_gpu = mix[0];
	for (int i = 0; i < n; i++) {
		struct gf_placement p = { .node = i, .ngpus = 1 };
		BENCH_MUST(gf_sched_commit(s, &one_gpu, &p));
	}
	double one = now_s() - t0;
	gf_sched_free(s);
	free(typ);
	gf_cluster_release(&c);
	printf("# rebuilding instead: a new engine over %d nodes with its "
	       "running work committed again takes %.2f ms; at each add, "
	       "about %.1f s over %d adds (O(n^2))\n",
	       n, one * 1000, one * (n + 1) / 2, n);
	return one;
}

/* Agents registering one by one: n nodes join an empty core, each
 * followed by one job and a pass. */
static void bench_node_add(int n)
{
	struct gf_ctl_config *cfg = make_cfg(n);
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	struct gf_ctl *ctl;
	struct gf_err e;
	if (gf_ctl_new(cfg, c, NULL, &ctl, &e)) {
		fprintf(stderr, "ctl_bench: %s\n", e.msg);
		exit(1);
	}
	gf_free(cfg);
	struct gf_rng r;
	gf_rng_seed(&r, 3);
	for (int k = 0; k < 32; k++) { /* waiting for nodes that never come */
		struct gf_job *j = random_job(&r);
		j->spec.gpus = 1;
		j->spec.gpu_milli = 0;
		snprintf(j->spec.gpu_model, sizeof(j->spec.gpu_model), "l40s");
		(void)!gf_ctl_add(ctl, j, &e);
	}
	struct gf_ctl_node_spec sp = { .cpu_milli = 128000,
				       .memory_mib = 1 << 20,
				       .ngpus = 8 };
	double t_add = 0, t_pass = 0, t0 = now_s();
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "agent-%05d", i);
		snprintf(sp.gpu_model, sizeof(sp.gpu_model), "%s",
			 i % 10 < 7 ? "h100-80gb" : "a100-80gb");
		snprintf(sp.block, sizeof(sp.block), "b%d", i / 250);
		snprintf(sp.labels, sizeof(sp.labels), "zone=%c",
			 i % 2 ? 'a' : 'b');
		int64_t now = 1000 + (int64_t)i;
		double ta = now_s();
		int k = gf_ctl_node_add(ctl, name, &sp, now, NULL, &e);
		if (k < 0 ||
		    gf_ctl_node_ready(ctl, k, true, NULL, now, NULL, &e)) {
			fprintf(stderr, "ctl_bench: node add: %s\n", e.msg);
			exit(1);
		}
		double tp = now_s();
		t_add += tp - ta;
		if (gf_ctl_add(ctl, random_job(&r), &e)) {
			fprintf(stderr, "ctl_bench: add: %s\n", e.msg);
			exit(1);
		}
		(void)!gf_ctl_schedule(ctl, now, NULL);
		t_pass += now_s() - tp;
	}
	double total = now_s() - t0;
	report(ctl);
	printf("# %d nodes added one by one: %.3f s adding (%.1f us each), "
	       "%.3f s in jobs and passes\n",
	       n, t_add, t_add / n * 1e6, t_pass);
	printf("BENCH ctl.node_add.5000_nodes %.2f s\n", total);
	gf_ctl_free(ctl);
	rebuild_estimate(n);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	struct gf_rng r;
	gf_rng_seed(&r, 1);
	struct gf_ctl *ctl = make_ctl(n);
	double ms, ms_full;
	double adds = add_jobs(ctl, &r, QUEUE);
	double empty = one_pass(ctl, 1000, &ms);
	add_jobs(ctl, &r, 2 * QUEUE); /* fill, then free half */
	one_pass(ctl, 1500, &ms_full);
	finish_half(ctl, &r, 2000);
	one_pass(ctl, 2000, &ms_full); /* settle what was queued */
	report(ctl);
	add_jobs(ctl, &r, QUEUE);
	double loaded = one_pass(ctl, 3000, &ms_full);
	report(ctl);
	printf("BENCH ctl.schedule.placements_per_s %.0f placements/s\n",
	       loaded);
	printf("BENCH ctl.schedule.empty_placements_per_s %.0f placements/s\n",
	       empty);
	printf("BENCH ctl.schedule.pass_ms %.1f ms\n", ms);
	printf("BENCH ctl.add.per_s %.0f adds/s\n", adds);
	/* a full cluster: every job waits; the pass only sets reasons */
	add_jobs(ctl, &r, 6 * QUEUE);
	one_pass(ctl, 4000, &ms_full);
	add_jobs(ctl, &r, QUEUE);
	one_pass(ctl, 5000, &ms_full);
	report(ctl);
	printf("BENCH ctl.schedule.full_queue_pass_ms %.1f ms\n", ms_full);
	bench_admit(ctl, &r);
	gf_ctl_free(ctl);
	seq = 0;
	bench_node_add(5000);
	return 0;
}
