/*
 * cmd_simulate.c - `gpufleet simulate fill`: replay a trace (or the
 * built-in workload) through the placement engine, per policy and seed,
 * in parallel on all cores, and report unallocated GPU by arrived load.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpufleet/sim.h>

#include "cli/cli.h"
#include "sim/bound.h"
#include "sim/pool.h"
#include "sim/progress.h"
#include "sim/report.h"
#include "trace/synth.h"
#include "trace/trace.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

/* Every message of `simulate fill` starts "gpufleet simulate fill: ". */
#define CMD	     "simulate fill"
#define MAX_SEEDS    1000
#define BUILTIN_REQS 1200
#define OUT_CAP	     (64u << 20)

void gf_cli_simulate_usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet simulate mig ... ('gpufleet simulate mig -h')\n"
		"       gpufleet simulate autoscale ... ('gpufleet simulate "
		"autoscale -h')\n"
		"       gpufleet simulate replay ... ('gpufleet simulate "
		"replay -h')\n"
		"       gpufleet simulate fill [--nodes FILE --pods FILE] "
		"[--policy P[,P...]]\n"
		"                              [--seeds 42-51] [--tune 1.3] "
		"[--curve FILE] [--json]\n"
		"                              [--jobs N] [--requests N] "
		"[--bound] [--fgdplus-t T]\n"
		"                              [--fgdplus-without TERMS]\n"
		"\n"
		"Requests arrive one at a time and never leave; each is placed "
		"by the\nproduction engine or dropped. Reports the unallocated "
		"GPU %% at arrived\nload 90..130 %% of capacity, per policy, over "
		"seeds (the experiment of\n\"Beware of Fragmentation\", USENIX "
		"ATC'23).\n"
		"\n"
		"  --nodes FILE     node CSV (sn,cpu_milli,memory_mib,gpu,model)\n"
		"  --pods FILE      request CSV (name,cpu_milli,memory_mib,"
		"num_gpu,gpu_milli,gpu_spec)\n"
		"                   without both: the built-in cluster and "
		"workload\n"
		"  --policy LIST    random,dotprod,clustering,packing,bestfit,fgd,"
		"fgdplus\n"
		"                   or all (default)\n"
		"  --seeds LIST     seeds, e.g. 42-51 or 1,7 (default 42-51)\n"
		"  --tune X         scale demand to X x capacity by resampling "
		"(default 1.3;\n"
		"                   --inflate is the same)\n"
		"  --curve FILE     write the per-percent curve as CSV\n"
		"  --json           machine-readable summary\n"
		"  --jobs N         worker threads (default: all cores)\n"
		"  --requests N     size of the built-in workload (default %d)\n"
		"  --bound          add a row: a lower bound on unallocated %% "
		"for the same\n"
		"                   arrivals (a linear program, GLPK; mean over "
		"seeds)\n"
		"  --fgdplus-t T    FGD+'s temperature, GPU milli (default %.0f)\n"
		"  --fgdplus-without TERMS  FGD+ without some of its terms, "
		"for ablation:\n"
		"                   stranded, packing, pressure (a comma "
		"list)\n"
		"  -h, --help       this help\n"
		"\n"
		"A progress line goes to stderr once a run takes over a second;\n"
		"GPUFLEET_LOG=debug logs the inputs read and each phase's time.\n"
		"%s",
		BUILTIN_REQS, GF_FGDPLUS_T_DEFAULT, GF_CLI_EXIT_HELP);
}

static int parse_seeds(const char *s, uint64_t *out, int *n)
{
	*n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		unsigned long long a = strtoull(p, &end, 10), b;
		if (end == p)
			return -1;
		b = a;
		if (*end == '-') {
			const char *q = end + 1;
			b = strtoull(q, &end, 10);
			if (end == q || b < a)
				return -1;
		}
		for (unsigned long long x = a; x <= b; x++) {
			if (*n >= MAX_SEEDS)
				return -1;
			out[(*n)++] = x;
		}
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return -1;
		p = end;
	}
	return *n > 0 ? 0 : -1;
}

static int write_file(const char *path, const struct gf_buf *b)
{
	struct gf_err e;
	int rc = gf_file_write_atomic(path, gf_buf_str(b), b->len, &e);
	if (rc != 0)
		gf_cli_error(CMD, "cannot write '--curve %s': %s", path,
			     gf_strerror(rc));
	return rc ? -1 : 0;
}

struct fill_args {
	const char *nodes, *pods, *curve;
	enum gf_policy policies[GF_POLICY_COUNT];
	int npolicies;
	uint64_t seeds[MAX_SEEDS];
	int nseeds;
	double tune;
	double fgdplus_t;
	const char *without; /* --fgdplus-without */
	unsigned without_mask;
	bool json;
	bool bound; /* --bound: the optimum's bound row (issue 23) */
	int jobs;
	int requests;
};

static double now_s(void)
{
	return gf_clock_ms() / 1e3;
}

static int load_trace(const struct fill_args *a, struct gf_cluster *c,
		      struct gf_workload *w, struct gf_progress *prog)
{
	struct gf_err e;
	gf_err_clear(&e);
	double t0 = now_s();
	gf_progress_step(prog, "reading nodes '%s'", a->nodes);
	if (gf_trace_load_nodes(a->nodes, c, &e) != 0) {
		gf_cli_error(CMD, "%s", e.msg);
		return -1;
	}
	gf_log(GF_LOG_DEBUG, "sim",
	       "read nodes '%s': %d nodes, %lld GPUs, %d models in %.3f s",
	       a->nodes, c->n, (long long)(c->gpu_milli_total / 1000),
	       c->nmodels, now_s() - t0);
	t0 = now_s();
	gf_progress_step(prog, "reading pods '%s'", a->pods);
	if (gf_trace_load_pods(a->pods, c, w, &e) != 0) {
		gf_cli_error(CMD, "%s", e.msg);
		return -1;
	}
	gf_log(GF_LOG_DEBUG, "sim",
	       "read pods '%s': %d requests, %d gpu_spec values in %.3f s",
	       a->pods, w->n, w->nspecs > 0 ? w->nspecs - 1 : 0, now_s() - t0);
	if (c->gpu_milli_total <= 0) {
		gf_cli_error(CMD,
			     "'%s': no node has a GPU (nothing to fill: "
			     "the runs need GPU capacity)",
			     a->nodes);
		return -1;
	}
	return 0;
}

static int load_builtin(const struct fill_args *a, struct gf_cluster *c,
			struct gf_workload *w, struct gf_progress *prog)
{
	double t0 = now_s();
	gf_progress_step(prog, "building the built-in workload (%d requests)",
			 a->requests);
	int rc = gf_synth_cluster(c);
	if (rc == 0)
		rc = gf_synth_workload(c, w, a->requests, 1);
	if (rc != 0) {
		gf_cli_error(CMD,
			     "cannot build the built-in cluster and workload "
			     "('--requests %d'): %s",
			     a->requests, gf_strerror(rc));
		return -1;
	}
	gf_log(GF_LOG_DEBUG, "sim",
	       "built-in cluster: %d nodes, %lld GPUs; workload: %d requests "
	       "in %.3f s",
	       c->n, (long long)(c->gpu_milli_total / 1000), w->n,
	       now_s() - t0);
	return 0;
}

/* Solves per arrived-load bin (each bounds the arrivals before it). */
#define BOUND_PER_BIN 32

/*
 * --bound: the program solved for each seed's arrivals (the draws of the
 * runs), summarised over seeds as a policy is.  0, or -1 said.
 */
static int fill_bound(const struct fill_args *a, const struct gf_cluster *c,
		      const struct gf_workload *w, struct gf_progress *prog,
		      struct gf_fill_summary *sum, struct gf_report_bound *rb)
{
	double t0 = now_s(), cpu0 = gf_clock_thread_cpu_ms();
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_bound *b;
	gf_progress_step(prog, "building the bound's linear program");
	if (gf_bound_new(c, w, &b, &e) != 0) {
		gf_cli_error(CMD, "--bound: %s", e.msg);
		return -1;
	}
	gf_bound_size(b, &rb->ntypes, &rb->nclasses);
	struct gf_fill_result *res = gf_calloc((size_t)a->nseeds, sizeof(*res));
	double *wall = gf_calloc((size_t)a->nseeds, sizeof(*wall));
	int rc = 0;
	for (int s = 0; s < a->nseeds && rc == 0; s++) {
		gf_progress_step(prog, "bound: seed %llu (%d of %d), %d LPs",
				 (unsigned long long)a->seeds[s], s + 1,
				 a->nseeds, rb->lps);
		struct gf_fill_opts o = { .seed = a->seeds[s],
					  .tune = a->tune,
					  .resample = a->tune > 0 };
		double ts = now_s();
		rc = gf_bound_run(b, &o, gf_report_points, GF_REPORT_NPOINTS,
				  BOUND_PER_BIN, &res[s], &rb->lps, &e);
		wall[s] = now_s() - ts;
	}
	if (rc != 0)
		gf_cli_error(CMD, "--bound: %s", e.msg);
	else
		gf_fill_summarise(GF_POLICY_BESTFIT, res, wall, a->nseeds, sum);
	rb->s = sum;
	rb->wall_s = now_s() - t0;
	double cpu_s = (gf_clock_thread_cpu_ms() - cpu0) / 1e3;
	gf_log(GF_LOG_DEBUG, "sim",
	       "bound: %.3f s, %.3f CPU-s (%d node types, %d request "
	       "classes, %d LPs)",
	       rb->wall_s, cpu_s, rb->ntypes, rb->nclasses, rb->lps);
	gf_free(res);
	gf_free(wall);
	gf_bound_free(b);
	return rc ? -1 : 0;
}

/* The first failed run, said with its policy and seed. */
static void report_failed_run(const struct gf_fill_job *jobs, int njobs)
{
	for (int i = 0; i < njobs; i++)
		if (jobs[i].rc) {
			gf_cli_error(CMD,
				     "run of policy '%s' with seed %llu: "
				     "%s",
				     gf_policy_name(jobs[i].o.policy),
				     (unsigned long long)jobs[i].o.seed,
				     gf_strerror(jobs[i].rc));
			return;
		}
}

static int fill(void *arg, struct gf_progress *prog)
{
	const struct fill_args *a = arg;
	struct gf_cluster c;
	struct gf_workload w;
	struct gf_typical *typ = NULL;
	struct gf_fill_job *jobs = NULL;
	struct gf_fill_summary *sum = NULL, bsum;
	struct gf_report_bound rb = { 0 };
	struct gf_buf out;
	char source[256];
	int ret = GF_EXIT_FAIL;
	double t_start = now_s();
	gf_cluster_init(&c);
	gf_workload_init(&w);
	gf_buf_init(&out, OUT_CAP);
	if (a->nodes) {
		if (load_trace(a, &c, &w, prog) != 0)
			goto out;
		const char *base = strrchr(a->pods, '/');
		gf_note(source, sizeof(source), "trace %s",
			base ? base + 1 : a->pods);
	} else {
		if (load_builtin(a, &c, &w, prog) != 0)
			goto out;
		gf_note(source, sizeof(source),
			"built-in cluster and workload");
	}
	gf_progress_step(prog, "sorting and classifying %d requests", w.n);
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	if (ntyp <= 0) { /* the loaders refuse an empty workload */
		gf_cli_error(CMD, "no typical request in the workload: %s",
			     gf_strerror(ntyp));
		goto out;
	}
	gf_log(GF_LOG_DEBUG, "sim",
	       "load: %.3f s (%d requests in %d classes, %d typical)",
	       now_s() - t_start, w.n, w.nclasses, ntyp);
	int njobs = a->npolicies * a->nseeds;
	jobs = gf_calloc((size_t)njobs, sizeof(*jobs));
	for (int p = 0; p < a->npolicies; p++)
		for (int s = 0; s < a->nseeds; s++) {
			struct gf_fill_job *j = &jobs[p * a->nseeds + s];
			j->o.policy = a->policies[p];
			j->o.seed = a->seeds[s];
			j->o.tune = a->tune;
			j->o.resample = a->tune > 0;
			j->o.fgdplus_t = a->fgdplus_t;
			j->o.fgdplus_without = a->without_mask;
		}
	struct gf_fill_pool pool = { .c = &c,
				     .w = &w,
				     .typ = typ,
				     .ntyp = ntyp,
				     .jobs = jobs,
				     .njobs = njobs };
	gf_progress_step(prog, "writing the report");
	double t_runs = now_s();
	if (gf_fill_pool_run(&pool, a->jobs, prog) != 0) {
		report_failed_run(jobs, njobs);
		goto out;
	}
	double draw_s = 0, run_s = 0;
	for (int i = 0; i < njobs; i++) {
		draw_s += jobs[i].draw_s;
		run_s += jobs[i].wall_s;
	}
	gf_log(GF_LOG_DEBUG, "sim",
	       "runs: %.3f s for %d runs (summed over runs: drawing arrivals "
	       "%.3f s, placing %.3f s)",
	       now_s() - t_runs, njobs, draw_s, run_s - draw_s);
	sum = gf_calloc((size_t)a->npolicies, sizeof(*sum));
	struct gf_fill_result *res = gf_calloc((size_t)a->nseeds, sizeof(*res));
	double *wall = gf_calloc((size_t)a->nseeds, sizeof(*wall));
	for (int p = 0; p < a->npolicies; p++) {
		for (int s = 0; s < a->nseeds; s++) {
			res[s] = jobs[p * a->nseeds + s].res;
			wall[s] = jobs[p * a->nseeds + s].wall_s;
		}
		gf_fill_summarise(a->policies[p], res, wall, a->nseeds,
				  &sum[p]);
	}
	gf_free(res);
	gf_free(wall);
	if (a->bound && fill_bound(a, &c, &w, prog, &bsum, &rb) != 0)
		goto out;
	struct gf_report_info info = { .nodes = c.n,
				       .gpus = c.gpu_milli_total / 1000,
				       .requests = w.n,
				       .tune = a->tune,
				       .seeds = a->seeds,
				       .nseeds = a->nseeds,
				       .source = source,
				       .bound = a->bound ? &rb : NULL };
	if (a->curve) {
		struct gf_buf cb;
		gf_buf_init(&cb, OUT_CAP);
		int rc = gf_report_curve_csv(sum, a->npolicies, &cb);
		if (rc != 0)
			gf_cli_error(CMD,
				     "cannot write '--curve %s': the curve is "
				     "larger than %u MiB",
				     a->curve, OUT_CAP >> 20);
		else
			rc = write_file(a->curve, &cb);
		gf_buf_release(&cb);
		if (rc)
			goto out;
	}
	ret = gf_cli_print_buf(
		CMD,
		a->json ? gf_report_json(&info, sum, a->npolicies, &out)
			: gf_report_text(&info, sum, a->npolicies, &out),
		&out);
out:
	gf_buf_release(&out);
	gf_free(sum);
	gf_free(jobs);
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
	return ret;
}

int cmd_simulate_fill(int argc, char **argv)
{
	static struct fill_args a;
	memset(&a, 0, sizeof(a));
	a.tune = 1.3;
	a.requests = BUILTIN_REQS;
	a.fgdplus_t = GF_FGDPLUS_T_DEFAULT;
	if (gf_cli_policies(CMD, "all", a.policies, &a.npolicies))
		return GF_EXIT_FAIL; /* cannot: "all" */
	parse_seeds("42-51", a.seeds, &a.nseeds);
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("nodes", &a.nodes),
		GF_OPT_STR("pods", &a.pods),
		GF_OPT_ARG("seeds", 's'),
		GF_OPT_REAL("tune", &a.tune, 0, 100, "a factor"),
		GF_OPT_REAL("inflate", &a.tune, 0, 100, "a factor"),
		GF_OPT_STR("curve", &a.curve),
		GF_OPT_NUM("jobs", &a.jobs, 1, 256, "a number"),
		GF_OPT_FLAG("bound", &a.bound),
		GF_OPT_NUM("requests", &a.requests, 1, GF_MAX_REQUESTS,
			   "a number"),
		GF_OPT_REAL("fgdplus-t", &a.fgdplus_t, GF_FGDPLUS_T_MIN,
			    GF_FGDPLUS_T_MAX, "a temperature in GPU milli"),
		GF_OPT_STR("fgdplus-without", &a.without),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS(CMD, argc, argv, opts, gf_cli_simulate_usage);
	args.no_args = true;
	args.json = &a.json;
	args.policies = a.policies;
	args.npolicies = &a.npolicies;
	while (gf_cli_next(&args) != -1) /* 's', --seeds */
		if (parse_seeds(optarg, a.seeds, &a.nseeds) != 0)
			(void)gf_cli_bad_value(&args,
					       "expected a list like 42-51 or "
					       "1,2,3 (ranges going up, at "
					       "most %d seeds)",
					       MAX_SEEDS);
	if (args.rc >= 0)
		return args.rc;
	if (gf_cli_fgdplus_without(CMD, a.without, &a.without_mask) != 0)
		return GF_EXIT_USAGE;
	if (!a.nodes != !a.pods) {
		gf_cli_error(CMD,
			     "%s needs %s: a trace is a node list and a "
			     "request list",
			     a.nodes ? "--nodes" : "--pods",
			     a.nodes ? "--pods" : "--nodes");
		return GF_EXIT_USAGE;
	}
	return gf_cli_with_progress(CMD, fill, &a);
}
