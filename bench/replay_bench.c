/*
 * replay_bench.c - `gpufleet simulate replay` at the size of issue 16:
 * the whole Philly trace (82,247 jobs, Pollux's philly.csv) on its
 * virtual clusters (352 nodes of 8 GPUs) under every policy, and the
 * Alibaba 2023 default pod list (8,152 pods, with their departures) on
 * its 1,213 GPU nodes.  One core; the figure is gf_replay_run's own
 * wall time (loading not counted; it is printed apart).
 *
 *   replay_bench [SHARED]
 * BENCH lines:
 *   replay.philly.<policy>       s  (target: under 5 s each)
 *   replay.alibaba2023.default   s  (FGD; target: under 1 s)
 *   replay.philly.load           s  (reading philly.csv)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/ctl.h>

#include "bench.h"
#include "sim/replay.h"
#include "trace/trace.h"
#include "util/mem.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_one(const char *name, struct gf_ctl_config *cfg,
		   const struct gf_cluster *c, const struct gf_replay_trace *t)
{
	struct gf_replay_opts o = { .estimates = true };
	struct gf_replay_result r;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_replay_run(cfg, c, NULL, t, &o, &r, &e) != 0) {
		fprintf(stderr, "replay_bench: %s: %s\n", name, e.msg);
		return 1;
	}
	char msg[256];
	int bad = gf_replay_check(t, &r, msg, sizeof(msg));
	if (bad)
		fprintf(stderr, "replay_bench: %s: check: %s\n", name, msg);
	printf("BENCH %s %.3f s\n", name, r.wall_s);
	fprintf(stderr,
		"# %s: %d completed, wait p50/p95/p99 %.0f/%.0f/%.0f s, "
		"alloc %.1f %%, %lld preemptions\n",
		name, r.completed, r.wait.p50, r.wait.p95, r.wait.p99,
		100 * r.mean_alloc, (long long)r.preemptions);
	gf_replay_result_release(&r);
	return bad != 0;
}

static int philly(const char *shared, struct gf_ctl_config *cfg)
{
	char path[1024], vcs[1024];
	snprintf(path, sizeof(path), "%s/traces/philly-pollux/philly.csv",
		 shared);
	snprintf(vcs, sizeof(vcs),
		 "%s/traces/philly-pollux/philly_vc_nodes.HeliosArtifact.csv",
		 shared);
	if (access(path, R_OK) || access(vcs, R_OK)) {
		fprintf(stderr, "replay_bench: %s absent: philly skipped\n",
			path);
		return 0;
	}
	struct gf_err e;
	struct gf_replay_trace t;
	struct gf_cluster c;
	gf_err_clear(&e);
	gf_replay_trace_init(&t);
	gf_cluster_init(&c);
	double t0 = now_s();
	char names[64][GF_NODE_NAME_MAX];
	int count[64], n;
	int rc = 1;
	if (gf_replay_load(path, GF_REPLAY_PHILLY, NULL, &t, &e) != 0 ||
	    (n = gf_replay_philly_vcs(vcs, names, count, 64, &e)) < 0) {
		fprintf(stderr, "replay_bench: %s\n", e.msg);
		goto out;
	}
	printf("BENCH replay.philly.load %.3f s\n", now_s() - t0);
	int m = gf_cluster_model(&c, "P100");
	gf_replay_config(cfg, GF_POLICY_FGD, 42);
	for (int v = 0; v < n; v++) {
		snprintf(cfg->teams[v].name, GF_TEAM_NAME_MAX, "%.47s",
			 names[v]);
		cfg->teams[v].weight = count[v];
		for (int k = 0; k < count[v]; k++) {
			char name[GF_NODE_NAME_MAX];
			snprintf(name, sizeof(name), "%.30s-%03d", names[v], k);
			BENCH_MUST(
				gf_cluster_add(&c, name, 64000, 524288, 8, m));
		}
	}
	cfg->nteams = n;
	rc = 0;
	for (int p = 0; p < GF_POLICY_COUNT; p++) {
		char name[64];
		snprintf(name, sizeof(name), "replay.philly.%s",
			 gf_policy_name((enum gf_policy)p));
		cfg->policy = (enum gf_policy)p;
		rc |= run_one(name, cfg, &c, &t);
	}
out:
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
	return rc;
}

static int alibaba(const char *shared, struct gf_ctl_config *cfg)
{
	char pods[1024], nodes[1024];
	snprintf(pods, sizeof(pods),
		 "%s/traces/alibaba-gpu-v2023/openb_pod_list_default.csv",
		 shared);
	snprintf(nodes, sizeof(nodes),
		 "%s/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv",
		 shared);
	if (access(pods, R_OK) || access(nodes, R_OK)) {
		fprintf(stderr, "replay_bench: %s absent: alibaba skipped\n",
			pods);
		return 0;
	}
	struct gf_err e;
	struct gf_replay_trace t;
	struct gf_cluster c;
	gf_err_clear(&e);
	gf_replay_trace_init(&t);
	gf_cluster_init(&c);
	int rc = 1;
	if (gf_replay_load(pods, GF_REPLAY_ALIBABA2023, NULL, &t, &e) != 0 ||
	    gf_trace_load_nodes(nodes, &c, &e) != 0) {
		fprintf(stderr, "replay_bench: %s\n", e.msg);
		goto out;
	}
	gf_replay_config(cfg, GF_POLICY_FGD, 42);
	rc = run_one("replay.alibaba2023.default", cfg, &c, &t);
out:
	gf_replay_trace_release(&t);
	gf_cluster_release(&c);
	return rc;
}

int main(int argc, char **argv)
{
	const char *shared = argc > 1 ? argv[1] : "../shared";
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	int rc = alibaba(shared, cfg);
	rc |= philly(shared, cfg);
	gf_free(cfg);
	return rc;
}
