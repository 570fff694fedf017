/*
 * cmd_simulate_replay.c - `gpufleet simulate replay`: play a trace of
 * jobs that arrive and leave through the controller's scheduling core
 * (sim/replay.h), once per policy, and print the summary (or the JSON
 * that `gpufleet report` reads).  Options, inputs and output only.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sim/progress.h"
#include "sim/replay.h"
#include "sim/replay_jobs.h"
#include "trace/synth.h"
#include "trace/trace.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

#define CMD	    "simulate replay"
#define OUT_CAP	    (256u << 20)
#define MAX_VCS	    64
#define PHILLY_GPUS 8
#define PATH_MAX_   1024

/* The trace of each source, and its cluster, under $GPUFLEET_SHARED. */
static const struct {
	const char *trace, *cluster;
} defaults[] = {
	[GF_REPLAY_ALIBABA2023] = { "traces/alibaba-gpu-v2023/"
				    "openb_pod_list_default.csv",
				    "openb_node_list_gpu_node.csv" },
	[GF_REPLAY_PHILLY] = { "traces/philly-pollux/philly.csv",
			       "philly_vc_nodes.HeliosArtifact.csv" },
	[GF_REPLAY_DLRM2025] = { "traces/alibaba-gpu-v2025/"
				 "disaggregated_DLRM_trace.csv",
				 NULL },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet simulate replay SOURCE [TRACE] [--policy "
		"P[,P...]] [--seed N]\n"
		"           [--nodes FILE | --vcs FILE | --builtin] [--limit N] "
		"[--until S]\n"
		"           [--load X] [--points N] [--runtime-estimate M | "
		"--no-estimates]\n"
		"           [--vc-partitions] [--whole-run] [--cpu-instances] "
		"[--jobs-csv FILE]\n"
		"           [--fgdplus-without TERMS] [--json]\n"
		"\n"
		"Replay a trace of jobs that arrive and leave on a virtual "
		"clock through the\ncontroller's scheduling core (the one "
		"'gpufleet serve' runs: classes, fair\nshare, gangs, backfill, "
		"preemption, the placement engine), once per policy.\nReports "
		"queueing delay and JCT (p50/p95/p99), GPU allocation, "
		"fragmentation,\npending GPU demand and preemptions, in total "
		"and over time (--json).\nAllocation, fragmentation and pending "
		"demand are taken over the arrival\nwindow (first to last "
		"arrival), the tail (the drain after the last arrival)\n"
		"apart; queueing delay over every job that started (each "
		"arrived in the\nwindow), the tail's share of it apart.\n"
		"\n"
		"  SOURCE           alibaba2023 (pod list with creation, "
		"scheduled and deletion\n"
		"                   times), philly (Pollux's philly.csv), "
		"dlrm2025 (Alibaba\n"
		"                   2025 DLRM instances)\n"
		"  TRACE            the trace CSV (default: the source's file "
		"under\n"
		"                   $GPUFLEET_SHARED, else ../shared)\n"
		"  --policy LIST    random,dotprod,clustering,packing,bestfit,fgd,"
		"fgdplus\n"
		"                   or all (default fgd)\n"
		"  --seed N         the core's seed (default 42)\n"
		"  --nodes FILE     the cluster: a node CSV (sn,cpu_milli,"
		"memory_mib,gpu,model)\n"
		"  --vcs FILE       the cluster: Philly's virtual clusters "
		"(vc,node num), 8-GPU\n"
		"                   nodes, each VC a team weighted by its "
		"nodes\n"
		"  --builtin        the built-in cluster (192 nodes, 1,088 "
		"GPUs)\n"
		"                   default: the node list beside the trace "
		"(alibaba2023:\n"
		"                   openb_node_list_gpu_node.csv, philly: "
		"philly_vc_nodes.\n"
		"                   HeliosArtifact.csv) when there, else "
		"built-in\n"
		"  --limit N        the first N jobs of the trace\n"
		"  --until S        stop S seconds into the trace (its "
		"clock after --load)\n"
		"  --load X         X times the load: every arrival time "
		"divided by X (run\n"
		"                   times kept), 0 < X <= 1000 (default 1)\n"
		"  --points N       samples in the time series (default 400)\n"
		"  --runtime-estimate M  the max runtime each job states, which "
		"backfill\n"
		"                   reads: exact (its run time), requested (the "
		"trace's\n"
		"                   requested time), noisy[:SIGMA] (run time x "
		"exp(SIGMA |Z|),\n"
		"                   Z normal, seeded; SIGMA 0..10, default 1); "
		"default: requested\n"
		"                   where the trace has it, else noisy:1\n"
		"  --no-estimates   jobs give no max runtime (backfill then "
		"has none to use)\n"
		"  --vc-partitions  philly: each VC's jobs run only on its own "
		"nodes (the VC\n"
		"                   file's node counts; a VC it does not list "
		"has none)\n"
		"  --whole-run      means over the whole run [0, end] (no tail "
		"row)\n"
		"  --cpu-instances  dlrm2025: the CPU-only (CN) instances "
		"too\n"
		"  --jobs-csv FILE  every job under every policy, one CSV row "
		"each: what it\n"
		"                   asked for, arrival, first start, end, fate "
		"(to read the\n"
		"                   waits by shape)\n"
		"  --fgdplus-without TERMS  FGD+ without some of its terms, "
		"for ablation:\n"
		"                   stranded, packing, pressure (a comma "
		"list)\n"
		"  --json           machine-readable summary with the series\n"
		"  -h, --help       this help\n"
		"\n"
		"A progress line goes to stderr once a replay takes over a "
		"second.\n%s",
		GF_CLI_EXIT_HELP);
}

struct args {
	enum gf_replay_source source;
	const char *trace, *nodes, *vcs, *jobs_csv, *without;
	unsigned without_mask; /* --fgdplus-without */
	char trace_buf[PATH_MAX_], cluster_buf[PATH_MAX_];
	bool builtin, json, no_estimates, cpu_instances, vc_partitions,
		whole_run;
	const char *estimate; /* NULL: requested, else noisy */
	enum gf_replay_est est;
	double sigma;
	struct gf_ctl_node *cnodes; /* with vc_partitions */
	enum gf_policy policies[GF_POLICY_COUNT];
	int npolicies;
	uint64_t seed;
	int limit, points;
	int64_t until_ms;
	double load;
};

static const char *shared_dir(void)
{
	const char *s = getenv("GPUFLEET_SHARED");
	return s && *s ? s : "../shared";
}

/* "dir/name" of the directory of path: 0, or GF_ETOOBIG. */
static int beside(const char *path, const char *name, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');
	int n = slash ? (int)(slash - path) : 1;
	return gf_fmt(out, size, "%.*s/%s", n, slash ? path : ".", name);
}

/* The cluster the options say; a description in what. */
static int load_cluster(struct args *a, struct gf_cluster *c,
			struct gf_ctl_config *cfg, char *what, size_t size)
{
	struct gf_err e;
	gf_err_clear(&e);
	const char *nodes = a->nodes, *vcs = a->vcs;
	if (!nodes && !vcs && !a->builtin && defaults[a->source].cluster) {
		/* a path too long to make is a file that is not there */
		if (beside(a->trace, defaults[a->source].cluster,
			   a->cluster_buf, sizeof(a->cluster_buf)) == 0 &&
		    access(a->cluster_buf, R_OK) == 0) {
			if (a->source == GF_REPLAY_PHILLY)
				vcs = a->cluster_buf;
			else
				nodes = a->cluster_buf;
		}
	}
	if (a->vc_partitions && !vcs) {
		gf_cli_error(CMD, "--vc-partitions needs Philly's VC file (the "
				  "philly source's default cluster, or --vcs)");
		return -1;
	}
	if (nodes) {
		if (gf_trace_load_nodes(nodes, c, &e) != 0) {
			gf_cli_error(CMD, "%s", e.msg);
			return -1;
		}
		gf_note(what, size, "%s", nodes);
		return 0;
	}
	if (vcs) {
		char names[MAX_VCS][GF_NODE_NAME_MAX];
		int count[MAX_VCS];
		int n = gf_replay_philly_vcs(vcs, names, count, MAX_VCS, &e);
		if (n < 0) {
			gf_cli_error(CMD, "%s", e.msg);
			return -1;
		}
		if (gf_replay_vc_cluster(
			    names, count, n, PHILLY_GPUS, "P100", c, cfg,
			    a->vc_partitions ? &a->cnodes : NULL, &e) != 0) {
			gf_cli_error(CMD, "%s: %s", vcs, e.msg);
			return -1;
		}
		gf_note(what, size, "%s", vcs);
		return 0;
	}
	if (gf_synth_cluster(c) < 0)
		return gf_cli_error(CMD, "the built-in cluster: too big"), -1;
	gf_note(what, size, "the built-in cluster");
	return 0;
}

struct prog {
	struct gf_progress *p;
	const char *policy;
	int i, n;
};

static void on_progress(void *arg, int arrived, int jobs)
{
	struct prog *x = arg;
	gf_progress_step(x->p, "policy %s (%d/%d): %d/%d arrivals", x->policy,
			 x->i + 1, x->n, arrived, jobs);
}

static void json_dist(struct gf_json *j, const char *key,
		      const struct gf_replay_dist *d)
{
	gf_json_obj_begin(j, key);
	gf_json_int(j, "n", d->n);
	gf_json_double(j, "mean", d->mean);
	gf_json_double(j, "p50", d->p50);
	gf_json_double(j, "p95", d->p95);
	gf_json_double(j, "p99", d->p99);
	gf_json_double(j, "max", d->max);
	gf_json_obj_end(j);
}

static void json_span(struct gf_json *j, const char *key,
		      const struct gf_replay_span *sp)
{
	gf_json_obj_begin(j, key);
	gf_json_double(j, "from_s", (double)sp->from_ms / 1e3);
	gf_json_double(j, "to_s", (double)sp->to_ms / 1e3);
	gf_json_double(j, "mean_alloc", sp->mean_alloc);
	gf_json_double(j, "mean_frag", sp->mean_frag);
	gf_json_double(j, "mean_pending_gpus", sp->mean_pending_gpus);
	gf_json_int(j, "started", sp->started);
	json_dist(j, "wait_s", &sp->wait);
	gf_json_obj_end(j);
}

static void json_result(struct gf_json *j, const struct gf_replay_result *r)
{
	gf_json_obj_begin(j, NULL);
	gf_json_str(j, "policy", gf_policy_name(r->policy));
	gf_json_uint(j, "seed", r->seed);
	gf_json_int(j, "arrived", r->arrived);
	gf_json_int(j, "refused", r->refused);
	gf_json_int(j, "started", r->started);
	gf_json_int(j, "completed", r->completed);
	gf_json_int(j, "deleted", r->deleted);
	gf_json_int(j, "failed", r->failed);
	gf_json_int(j, "running_end", r->running_end);
	gf_json_int(j, "queued_end", r->queued_end);
	gf_json_int(j, "preemptions", r->preemptions);
	json_dist(j, "wait_s", &r->wait);
	json_dist(j, "jct_s", &r->jct);
	gf_json_double(j, "mean_alloc", r->mean_alloc);
	gf_json_double(j, "mean_frag", r->mean_frag);
	gf_json_double(j, "mean_pending_gpus", r->mean_pending_gpus);
	gf_json_double(j, "peak_alloc", r->peak_alloc);
	json_span(j, "window", &r->window); /* wait_s: started in it */
	json_span(j, "tail", &r->tail);
	gf_json_double(j, "gpu_hours",
		       (double)r->gpu_milli_ms_jobs / 1000.0 / 3600e3);
	gf_json_double(j, "wall_s", r->wall_s);
	gf_json_arr_begin(j, "series");
	for (int i = 0; i < r->npoints; i++) {
		const struct gf_replay_point *p = &r->points[i];
		gf_json_obj_begin(j, NULL);
		gf_json_double(j, "t_s", (double)p->t_ms / 1e3);
		gf_json_double(j, "alloc", p->alloc);
		gf_json_double(j, "frag", p->frag);
		gf_json_double(j, "pending_gpus",
			       (double)p->pending_milli / 1000.0);
		gf_json_int(j, "pending", p->pending);
		gf_json_int(j, "running", p->running);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_obj_end(j);
}

static void text_header(struct gf_buf *b)
{
	gf_buf_printf(b,
		      "%-10s %7s %8s %9s %7s %7s %6s %8s %8s %8s %9s %6s %6s "
		      "%8s %7s %6s\n",
		      "policy", "arrived", "refused", "completed", "deleted",
		      "running", "queued", "wait_p50", "wait_p95", "wait_p99",
		      "jct_p50", "alloc", "frag", "pend_gpu", "preempt",
		      "wall_s");
}

static void text_row(struct gf_buf *b, const struct gf_replay_result *r)
{
	gf_buf_printf(b,
		      "%-10s %7d %8d %9d %7d %7d %6d %8.0f %8.0f %8.0f %9.0f "
		      "%5.1f%% %5.1f%% %8.1f %7" PRId64 " %6.2f\n",
		      gf_policy_name(r->policy), r->arrived, r->refused,
		      r->completed, r->deleted, r->running_end, r->queued_end,
		      r->wait.p50, r->wait.p95, r->wait.p99, r->jct.p50,
		      100 * r->mean_alloc, 100 * r->mean_frag,
		      r->mean_pending_gpus, r->preemptions, r->wall_s);
}

static void tail_header(struct gf_buf *b)
{
	gf_buf_printf(b, "%-10s %10s %10s %7s %8s %8s %8s %6s %6s %8s\n",
		      "tail", "from_s", "to_s", "started", "wait_p50",
		      "wait_p95", "wait_p99", "alloc", "frag", "pend_gpu");
}

static void tail_row(struct gf_buf *b, enum gf_policy p,
		     const struct gf_replay_span *t)
{
	gf_buf_printf(b,
		      "%-10s %10.0f %10.0f %7d %8.0f %8.0f %8.0f %5.1f%% "
		      "%5.1f%% %8.1f\n",
		      gf_policy_name(p), (double)t->from_ms / 1e3,
		      (double)t->to_ms / 1e3, t->started, t->wait.p50,
		      t->wait.p95, t->wait.p99, 100 * t->mean_alloc,
		      100 * t->mean_frag, t->mean_pending_gpus);
}

/* The estimate mode: --runtime-estimate, or requested where the trace
 * has requested times, else noisy:1.  0, or -1 (said). */
static int pick_estimate(struct args *a, const struct gf_replay_trace *t)
{
	const char *m = a->estimate;
	bool has = false;
	for (int i = 0; i < t->n && !has; i++)
		has = t->jobs[i].requested_ms > 0;
	if (m == NULL) {
		a->est = has ? GF_REPLAY_EST_REQUESTED : GF_REPLAY_EST_NOISY;
		return 0;
	}
	if (strcmp(m, "requested") == 0) {
		if (!has) {
			gf_cli_error(
				CMD,
				"'--runtime-estimate requested': the trace "
				"'%s' gives no requested time (say exact "
				"or noisy)",
				a->trace);
			return -1;
		}
		a->est = GF_REPLAY_EST_REQUESTED;
		return 0;
	}
	return 0; /* exact and noisy: parsed with the options */
}

static int parse_estimate(struct args *a)
{
	const char *m = a->estimate;
	if (m == NULL || strcmp(m, "requested") == 0)
		return 0;
	a->sigma = GF_REPLAY_SIGMA_DEFAULT;
	if (strcmp(m, "exact") == 0) {
		a->est = GF_REPLAY_EST_EXACT;
		return 0;
	}
	if (strncmp(m, "noisy", 5) == 0 && (m[5] == '\0' || m[5] == ':')) {
		a->est = GF_REPLAY_EST_NOISY;
		if (m[5] == '\0')
			return 0;
		char *end;
		errno = 0;
		double v = strtod(m + 6, &end);
		if (errno == 0 && end != m + 6 && *end == '\0' && v > 0 &&
		    v <= 10) {
			a->sigma = v;
			return 0;
		}
	}
	gf_cli_error(CMD,
		     "cannot parse '--runtime-estimate %s': expected exact, "
		     "requested, noisy or noisy:SIGMA (0 < SIGMA <= 10)",
		     m);
	return -1;
}

static const char *est_name(const struct args *a, char *buf, size_t size)
{
	if (a->no_estimates)
		return "none";
	if (a->est == GF_REPLAY_EST_NOISY) {
		gf_note(buf, size, "noisy:%g", a->sigma);
		return buf;
	}
	return a->est == GF_REPLAY_EST_EXACT ? "exact" : "requested";
}

/* The --jobs-csv file's directory can be written: checked before the
 * replays run, not after.  0, or said (-1). */
static int jobs_dir_ok(const char *path)
{
	char dir[PATH_MAX_];
	const char *slash = strrchr(path, '/');
	if (gf_fmt(dir, sizeof(dir), "%.*s",
		   slash ? (int)(slash - path + (slash == path)) : 1,
		   slash ? path : ".") != 0 ||
	    access(dir, W_OK | X_OK) != 0) {
		gf_cli_error(CMD, "cannot write '--jobs-csv %s': %s", path,
			     strerror(errno ? errno : ENAMETOOLONG));
		return -1;
	}
	return 0;
}

/* The --jobs-csv file, whole or not at all: 0, or said (-1). */
static int write_jobs(const char *path, const struct gf_buf *b)
{
	if (gf_buf_error(b)) {
		gf_cli_error(CMD,
			     "cannot write '--jobs-csv %s': the rows are over "
			     "%u MiB (fewer policies, or --limit)",
			     path, OUT_CAP >> 20);
		return -1;
	}
	struct gf_err e;
	if (gf_file_write_atomic(path, gf_buf_str(b), b->len, &e) != 0) {
		gf_cli_error(CMD, "--jobs-csv: %s", e.msg);
		return -1;
	}
	return 0;
}

static int replay(void *arg, struct gf_progress *p)
{
	struct args *a = arg;
	int ret = GF_EXIT_FAIL;
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_replay_trace t;
	struct gf_cluster c;
	struct gf_buf out, jobs;
	struct gf_json j;
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	gf_replay_trace_init(&t);
	gf_cluster_init(&c);
	gf_buf_init(&out, OUT_CAP);
	gf_buf_init(&jobs, OUT_CAP);
	if (a->jobs_csv)
		gf_replay_jobs_header(&jobs);
	if (access(a->trace, R_OK) != 0) {
		gf_cli_error(CMD,
			     "cannot read the trace '%s': %s (give its path, "
			     "or set GPUFLEET_SHARED to the directory holding "
			     "traces/)",
			     a->trace, strerror(errno));
		goto out;
	}
	gf_progress_step(p, "reading '%s'", a->trace);
	struct gf_replay_load_opts lo = { .cpu_instances = a->cpu_instances,
					  .limit = a->limit };
	if (gf_replay_load(a->trace, a->source, &lo, &t, &e) != 0) {
		gf_cli_error(CMD, "%s", e.msg);
		goto out;
	}
	(void)!gf_replay_scale_arrivals(&t, a->load); /* checked when parsed */
	if (pick_estimate(a, &t) != 0) {
		ret = GF_EXIT_USAGE;
		goto out;
	}
	char estbuf[32];
	const char *est = est_name(a, estbuf, sizeof(estbuf));
	char what[PATH_MAX_ + 32];
	struct gf_replay_span tails[GF_POLICY_COUNT];
	gf_replay_config(cfg, GF_POLICY_FGD, a->seed);
	cfg->fgdplus_without = a->without_mask;
	if (load_cluster(a, &c, cfg, what, sizeof(what)) != 0)
		goto out;
	int64_t gpus = c.gpu_milli_total / 1000;
	if (a->json) {
		gf_json_init(&j, &out);
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "command", "replay");
		gf_json_str(&j, "source", gf_replay_source_name(a->source));
		gf_json_str(&j, "trace", a->trace);
		gf_json_int(&j, "nodes", c.n);
		gf_json_int(&j, "gpus", gpus);
		gf_json_int(&j, "jobs", t.n);
		gf_json_double(&j, "load", a->load);
		gf_json_str(&j, "runtime_estimate", est);
		gf_json_bool(&j, "vc_partitions", a->vc_partitions);
		gf_json_str(&j, "over", a->whole_run ? "run" : "arrivals");
		gf_json_arr_begin(&j, "policies");
	} else {
		gf_buf_printf(&out,
			      "replay %s '%s': %d jobs on %s (%d nodes, "
			      "%" PRId64 " GPUs)\n",
			      gf_replay_source_name(a->source), a->trace, t.n,
			      what, c.n, gpus);
		if (a->load != 1)
			gf_buf_printf(&out,
				      "load %g: arrivals %g times as dense as "
				      "the trace's, run times kept\n",
				      a->load, a->load);
		gf_buf_printf(
			&out,
			"runtime estimates: %s%s\n"
			"times in seconds; alloc, frag and pending GPU "
			"are time-weighted means over %s;\nwait over every "
			"job that started, whenever it did%s\n\n",
			est, a->vc_partitions ? "; VCs as node partitions" : "",
			a->whole_run ? "the whole run" : "the arrival window",
			a->whole_run ? ""
				     : " (the tail below: those after "
				       "the last arrival)");
		text_header(&out);
	}
	for (int i = 0; i < a->npolicies; i++) {
		cfg->policy = a->policies[i];
		struct prog x = { p, gf_policy_name(a->policies[i]), i,
				  a->npolicies };
		struct gf_replay_opts o = { .points = a->points,
					    .estimates = !a->no_estimates,
					    .est = a->est,
					    .est_sigma = a->sigma,
					    .est_seed = a->seed,
					    .whole_run = a->whole_run,
					    .partition_by_team =
						    a->vc_partitions,
					    .until_ms = a->until_ms,
					    .progress = on_progress,
					    .arg = &x };
		struct gf_replay_result r;
		on_progress(&x, 0, t.n);
		if (gf_replay_run(cfg, &c, a->cnodes, &t, &o, &r, &e) != 0) {
			gf_cli_error(CMD, "%s", e.msg);
			goto out;
		}
		char msg[256];
		if (gf_replay_check(&t, &r, msg, sizeof(msg)) != 0) {
			gf_cli_error(CMD,
				     "policy %s: internal check failed: %s",
				     gf_policy_name(a->policies[i]), msg);
			gf_replay_result_release(&r);
			goto out;
		}
		if (a->json)
			json_result(&j, &r);
		else
			text_row(&out, &r);
		if (a->jobs_csv)
			gf_replay_jobs_rows(&jobs, &t, &r);
		tails[i] = r.tail;
		gf_replay_result_release(&r);
	}
	if (!a->json && !a->whole_run) {
		gf_buf_printf(&out, "\nafter the last arrival (the tail):\n");
		tail_header(&out);
		for (int i = 0; i < a->npolicies; i++)
			tail_row(&out, a->policies[i], &tails[i]);
	}
	if (a->json) {
		gf_json_arr_end(&j);
		gf_json_obj_end(&j);
		gf_buf_printf(&out, "\n");
	}
	if (a->jobs_csv && write_jobs(a->jobs_csv, &jobs) != 0)
		goto out;
	ret = gf_cli_print_buf(CMD, 0, &out);
out:
	gf_buf_release(&jobs);
	gf_buf_release(&out);
	gf_cluster_release(&c);
	gf_replay_trace_release(&t);
	gf_free(cfg);
	gf_free(a->cnodes);
	a->cnodes = NULL;
	return ret;
}

int cmd_simulate_replay(int argc, char **argv)
{
	static struct args a;
	memset(&a, 0, sizeof(a));
	a.load = 1;
	a.sigma = GF_REPLAY_SIGMA_DEFAULT;
	a.policies[0] = GF_POLICY_FGD;
	a.npolicies = 1;
	long long seed = 42, until_s = 0;
	const struct gf_cli_opt opts[] = {
		GF_OPT_NUM("seed", &seed, 0, INT64_MAX, "a seed"),
		GF_OPT_STR("nodes", &a.nodes),
		GF_OPT_STR("vcs", &a.vcs),
		GF_OPT_FLAG("builtin", &a.builtin),
		GF_OPT_NUM("limit", &a.limit, 1, GF_REPLAY_MAX_JOBS,
			   "a job count"),
		GF_OPT_DURATION("until", &until_s, 1, INT64_C(1) << 40,
				GF_DUR_BARE_S),
		GF_OPT_NUM("points", &a.points, 2, 100000, "a point count"),
		GF_OPT_ABOVE("load", &a.load, 0, GF_REPLAY_LOAD_MAX,
			     "a number"),
		GF_OPT_FLAG("no-estimates", &a.no_estimates),
		GF_OPT_STR("runtime-estimate", &a.estimate),
		GF_OPT_FLAG("vc-partitions", &a.vc_partitions),
		GF_OPT_FLAG("whole-run", &a.whole_run),
		GF_OPT_FLAG("cpu-instances", &a.cpu_instances),
		GF_OPT_STR("jobs-csv", &a.jobs_csv),
		GF_OPT_STR("fgdplus-without", &a.without),
		GF_OPT_END,
	};
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.json = &a.json;
	args.policies = a.policies;
	args.npolicies = &a.npolicies;
	(void)gf_cli_options(&args);
	a.seed = (uint64_t)seed;
	a.until_ms = until_s * 1000;
	if (args.rc >= 0)
		return args.rc;
	if (optind >= argc) {
		gf_cli_error(CMD, "no source given (known: alibaba2023, "
				  "philly, dlrm2025; see 'gpufleet simulate "
				  "replay -h')");
		return GF_EXIT_USAGE;
	}
	if (gf_replay_source_parse(argv[optind], &a.source) != 0) {
		gf_cli_error(CMD,
			     "unknown source '%s' (known: alibaba2023, philly, "
			     "dlrm2025)",
			     argv[optind]);
		return GF_EXIT_USAGE;
	}
	if (optind + 2 < argc) {
		gf_cli_error(CMD, "unexpected argument '%s'", argv[optind + 2]);
		return GF_EXIT_USAGE;
	}
	if (parse_estimate(&a) != 0)
		return GF_EXIT_USAGE;
	if (gf_cli_fgdplus_without(CMD, a.without, &a.without_mask) != 0)
		return GF_EXIT_USAGE;
	errno = 0;
	if (a.jobs_csv && jobs_dir_ok(a.jobs_csv) != 0)
		return GF_EXIT_FAIL;
	if (a.estimate && a.no_estimates) {
		gf_cli_error(CMD, "--runtime-estimate and --no-estimates: say "
				  "one");
		return GF_EXIT_USAGE;
	}
	if (a.vc_partitions && (a.nodes || a.builtin)) {
		gf_cli_error(CMD, "--vc-partitions needs Philly's VC file (the "
				  "philly source's default cluster, or --vcs), "
				  "not --nodes or --builtin");
		return GF_EXIT_USAGE;
	}
	if (!!a.nodes + !!a.vcs + a.builtin > 1) {
		gf_cli_error(CMD, "--nodes, --vcs and --builtin each give the "
				  "cluster: say one");
		return GF_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		a.trace = argv[optind + 1];
	} else {
		if (gf_fmt(a.trace_buf, sizeof(a.trace_buf), "%s/%s",
			   shared_dir(), defaults[a.source].trace)) {
			gf_cli_error(
				CMD,
				"the default trace's path under '%.60s' is "
				"longer than %zu bytes (name the trace)",
				shared_dir(), sizeof(a.trace_buf) - 1);
			return GF_EXIT_USAGE;
		}
		a.trace = a.trace_buf;
	}
	return gf_cli_with_progress(CMD, replay, &a);
}
