/*
 * cmd_simulate_autoscale.c - `gpufleet simulate autoscale`: replay an
 * arrival trace against a fleet of LLM replicas under each policy
 * (sim/autoscale.h), print the table, and write the series and the plot.
 * Options and output only.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/as_report.h"
#include "sim/autoscale.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/mem.h"

#define CMD "simulate autoscale"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet simulate autoscale (--trace FILE | "
		"--synthetic N[,HOURS[,SEED]])\n"
		"           [--policy P[,P...]] [--slo S] [--queue-metric "
		"outstanding|waiting]\n"
		"           [--queue-target N] [--util-target PCT] "
		"[--prefill-tps N]\n"
		"           [--decode-tps N] [--max-batch N] [--warmup S] "
		"[--gpus-per-replica N]\n"
		"           [--min-replicas N] [--max-replicas N] "
		"[--start-replicas N]\n"
		"           [--fixed-replicas N] [--occupancy X] [--drain S]\n"
		"           [--occ-target PCT] [--windows S]\n"
		"           [--series FILE.csv] [--svg FILE.svg] [--json]\n"
		"\n"
		"Replay LLM requests against a fleet of replicas under each "
		"autoscaling\npolicy, decided by the same code as 'gpufleet "
		"autoscale': HPA on GPU\nutilisation (util), HPA on the queue "
		"depth per replica without and with\nbehavior (queue-legacy, "
		"queue), the warm-up-aware recommender (warm), a fixed fleet\n"
		"sized with hindsight for the busiest minute (fixed), HPA on "
		"occupancy\n(requests in flight over max batch: occupancy), "
		"and, with --windows, a\nstatic fleet sized from the previous "
		"window (static).  Reports TTFT\np50/p95/p99, the share of "
		"requests over the SLO, GPU-hours, scale events\nand the "
		"peak.  Without --windows the autoscaled policies start cold "
		"(at\n--min-replicas).\n"
		"\n"
		"  --trace FILE        the Azure LLM inference CSV "
		"(TIMESTAMP,ContextTokens,\n"
		"                      GeneratedTokens) or t,tokens_in,"
		"tokens_out\n"
		"  --synthetic N,H,S   N requests over H hours (default 24), "
		"seed S (default 1)\n"
		"  --policy LIST       util,queue-legacy,queue,warm,fixed,"
		"occupancy,static\n"
		"                      or all (default; static with "
		"--windows only)\n"
		"  --slo S             TTFT objective in seconds (default 1)\n"
		"  --queue-metric M    outstanding (waiting + in service, "
		"default) or waiting\n"
		"  --queue-target N    queue depth per replica (default 0.75 x "
		"max batch, or\n"
		"                      max batch / 4 for 'waiting')\n"
		"  --util-target PCT   GPU utilisation target (default 70)\n"
		"  --occ-target PCT    occupancy target (default 75)\n"
		"  --windows S         cut the trace into windows of S s; "
		"simulate each\n"
		"                      from the second on by itself, sized "
		"from the one\n"
		"                      before it (static, the start); a table "
		"per window and\n"
		"                      the spread (sum, mean, min, max) per "
		"policy\n"
		"  the service model (per replica; defaults: Llama-3.1-8B on "
		"one A100 40GB):\n"
		"  --prefill-tps N     prompt tokens/s, one prompt at a time "
		"(10000)\n"
		"  --decode-tps N      output tokens/s per request (62)\n"
		"  --max-batch N       requests in flight (8)\n"
		"  --warmup S          seconds from start to serving (120)\n"
		"  --gpus-per-replica N  GPUs each replica holds (1)\n"
		"  --min-replicas N    (1)   --max-replicas N  (max(32, 4 x "
		"fixed))\n"
		"  --start-replicas N  (min replicas; with --windows: sized for "
		"the\n"
		"                      previous window's busiest minute)\n"
		"  --fixed-replicas N  (sized for the busiest minute, "
		"hindsight)\n"
		"  --occupancy X       slots busy the sizing aims at (0.75)\n"
		"  --drain S           warm: drain a projected backlog within "
		"S s (60)\n"
		"  --series FILE       the per-second series of every policy, "
		"CSV\n"
		"  --svg FILE          queue depth, replicas and TTFT over "
		"time\n"
		"  --json              machine-readable summary\n"
		"  -h, --help          this help\n%s",
		GF_CLI_EXIT_HELP);
}

struct opts {
	const char *trace, *synthetic, *series, *svg;
	bool json, all;
	bool pol[GF_ASP_COUNT];
	double windows;
	struct gf_as_sim_opts so;
};

static bool parse_policies(const char *s, bool *pol, bool *all)
{
	char buf[256];
	if (gf_fmt(buf, sizeof(buf), "%s", s))
		return false;
	if (!strcmp(s, "all")) {
		*all = true;
		return true;
	}
	for (char *tok = buf, *next; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		int p = gf_as_policy_parse(tok);
		if (p < 0)
			return false;
		pol[p] = true;
	}
	return true;
}

/* --policy and --queue-metric (code c): true, or false when a is bad. */
static bool option(int c, const char *a, struct opts *o)
{
	if (c == 'p')
		return parse_policies(a, o->pol, &o->all);
	if (!strcmp(a, "outstanding"))
		o->so.qmetric = GF_AS_Q_OUTSTANDING;
	else if (!strcmp(a, "waiting"))
		o->so.qmetric = GF_AS_Q_WAITING;
	else
		return false;
	return true;
}

/* The options into o: -1 to go on, else the exit status (-h answered,
 * or what was wrong said). */
static int parse(int argc, char **argv, struct opts *o)
{
	struct gf_as_sim_opts *so = &o->so;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("trace", &o->trace),
		GF_OPT_STR("synthetic", &o->synthetic),
		GF_OPT_ARG("policy", 'p'),
		GF_OPT_DURATION("slo", &so->slo_s, 1e-6, 1e6, GF_DUR_BARE_S),
		GF_OPT_ARG("queue-metric", 'q'),
		GF_OPT_REAL("queue-target", &so->queue_target, 1e-3, 1e9,
			    "a queue depth"),
		GF_OPT_REAL("util-target", &so->util_target, 1e-3, 100,
			    "a percentage"),
		GF_OPT_REAL("occ-target", &so->occ_target, 1e-3, 100,
			    "a percentage"),
		GF_OPT_DURATION("windows", &o->windows, 60, 1e7, GF_DUR_BARE_S),
		GF_OPT_REAL("prefill-tps", &so->m.prefill_tps, 1e-3, 1e9,
			    "tokens per second"),
		GF_OPT_REAL("decode-tps", &so->m.decode_tps, 1e-3, 1e9,
			    "tokens per second"),
		GF_OPT_NUM("max-batch", &so->m.max_batch, 1, 1000000,
			   "a batch size"),
		GF_OPT_DURATION("warmup", &so->m.warmup_s, 0, 1e6,
				GF_DUR_BARE_S),
		GF_OPT_NUM("gpus-per-replica", &so->m.gpus, 1, 1000000,
			   "a GPU count"),
		GF_OPT_NUM("min-replicas", &so->min_replicas, 1, 1000000,
			   "a replica count"),
		GF_OPT_NUM("max-replicas", &so->max_replicas, 1, 1000000,
			   "a replica count"),
		GF_OPT_NUM("start-replicas", &so->start_replicas, 1, 1000000,
			   "a replica count"),
		GF_OPT_NUM("fixed-replicas", &so->fixed_replicas, 1, 1000000,
			   "a replica count"),
		GF_OPT_REAL("occupancy", &so->occupancy, 1e-3, 1, "a share"),
		GF_OPT_DURATION("drain", &so->drain_s, 1e-3, 1e6,
				GF_DUR_BARE_S),
		GF_OPT_STR("series", &o->series),
		GF_OPT_STR("svg", &o->svg),
		GF_OPT_END,
	};
	int c;
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.no_args = true;
	args.json = &o->json;
	while ((c = gf_cli_next(&args)) != -1)
		if (!option(c, optarg, o))
			(void)gf_cli_bad_value(&args, "see 'gpufleet simulate "
						      "autoscale -h'");
	if (args.rc >= 0)
		return args.rc;
	if (!o->trace == !o->synthetic) {
		gf_cli_error(CMD, "say --trace FILE or --synthetic N (one of "
				  "them)");
		return GF_EXIT_USAGE;
	}
	return -1;
}

static int load(const struct opts *o, struct gf_as_trace *t)
{
	if (o->trace) {
		struct gf_err e;
		gf_err_clear(&e);
		if (gf_as_trace_read(o->trace, t, &e)) {
			gf_cli_error(CMD, "%s", e.msg);
			return GF_EXIT_FAIL;
		}
		return 0;
	}
	double n = 0, hours = 24, seed = 1;
	char *end;
	n = strtod(o->synthetic, &end);
	if (*end == ',')
		hours = strtod(end + 1, &end);
	if (*end == ',')
		seed = strtod(end + 1, &end);
	if (*end || !(n >= 1 && n <= GF_AST_MAX_REQUESTS) || !(hours > 0) ||
	    hours > 24 * 365 || !(seed >= 0) || n != floor(n)) {
		gf_cli_error(CMD,
			     "cannot parse '--synthetic %s': expected "
			     "N[,HOURS[,SEED]] with 1 <= N <= %d",
			     o->synthetic, GF_AST_MAX_REQUESTS);
		return GF_EXIT_USAGE;
	}
	gf_as_trace_synth(t, (size_t)n, hours, (uint64_t)seed);
	return 0;
}

static int write_file(const char *path, const struct gf_buf *b)
{
	FILE *f = fopen(path, "w");
	if (!f || fwrite(gf_buf_str(b), 1, b->len, f) != b->len) {
		gf_cli_error(CMD, "cannot write '%s': %s", path,
			     strerror(errno));
		if (f)
			fclose(f);
		return GF_EXIT_FAIL;
	}
	if (fclose(f) != 0) {
		gf_cli_error(CMD, "cannot write '%s': %s", path,
			     strerror(errno));
		return GF_EXIT_FAIL;
	}
	return 0;
}

static int outputs(const struct opts *o, const struct gf_as_result *r, size_t n)
{
	int rc = 0;
	struct gf_buf b;
	gf_buf_init(&b, 1u << 30);
	if (o->series) {
		gf_as_report_series(&b, r, n, o->so.tick_s);
		rc = gf_buf_error(&b) ? GF_EXIT_FAIL
				      : write_file(o->series, &b);
		gf_buf_reset(&b);
	}
	if (rc == 0 && o->svg) {
		char title[600];
		gf_note(title, sizeof(title),
			"%s: queue depth, replicas and TTFT (SLO %g s, "
			"warm-up %g s)",
			o->trace ? (strrchr(o->trace, '/')
					    ? strrchr(o->trace, '/') + 1
					    : o->trace)
				 : "synthetic",
			o->so.slo_s, o->so.m.warmup_s);
		gf_as_report_svg(&b, r, n, &o->so, title);
		rc = gf_buf_error(&b) ? GF_EXIT_FAIL : write_file(o->svg, &b);
		gf_buf_reset(&b);
	}
	if (rc == 0) {
		if (o->json)
			gf_as_report_json(&b, r, n, &o->so);
		else
			gf_as_report_table(&b, r, n, &o->so);
		rc = gf_cli_print_buf(CMD, 0, &b);
	}
	gf_buf_release(&b);
	return rc;
}

/* Every selected policy over t into r (n of them); the exit status. */
static int run_policies(const struct opts *o, const struct gf_as_trace *t,
			const struct gf_as_sim_opts *so, struct gf_as_result *r,
			size_t *n)
{
	*n = 0;
	for (int i = 0; i < GF_ASP_COUNT; i++) {
		if (!o->pol[i])
			continue;
		struct gf_err e;
		gf_err_clear(&e);
		double t0 = gf_clock_ms();
		if (gf_as_simulate(t, (enum gf_as_policy)i, so, &r[*n], &e)) {
			gf_cli_error(CMD, "%s", e.msg);
			return GF_EXIT_FAIL;
		}
		r[*n].wall_s = (gf_clock_ms() - t0) / 1000.0;
		(*n)++;
	}
	return 0;
}

static void release_windows(struct gf_as_window *w, size_t nw)
{
	for (size_t i = 0; i < nw; i++)
		for (size_t k = 0; k < w[i].n; k++)
			gf_as_result_release(&w[i].r[k]);
	gf_free(w);
}

/* --windows: each window from the second on, sized from the one before. */
static int run_windows(const struct opts *o, const struct gf_as_trace *t)
{
	if (t->n == 0) {
		gf_cli_error(CMD, "the trace has no requests");
		return GF_EXIT_FAIL;
	}
	double W = o->windows, last = t->r[t->n - 1].t;
	size_t cap = (size_t)(last / W) + 1, nw = 0;
	struct gf_as_window *w = gf_calloc(cap, sizeof(*w));
	int rc = 0;
	for (size_t k = 1; k < cap && rc == 0; k++) {
		struct gf_as_trace prev, cur;
		gf_as_trace_window(t, (double)(k - 1) * W, (double)k * W,
				   &prev);
		gf_as_trace_window(t, (double)k * W, (double)(k + 1) * W, &cur);
		if (cur.n > 0) {
			struct gf_as_sim_opts so = o->so;
			struct gf_as_window *x = &w[nw++];
			so.prev = &prev;
			x->index = k;
			x->start_s = (double)k * W;
			x->requests = cur.n;
			x->prev_sized = gf_as_busiest_size(&prev, &so);
			rc = run_policies(o, &cur, &so, x->r, &x->n);
		}
		gf_as_trace_release(&prev);
		gf_as_trace_release(&cur);
	}
	if (rc == 0 && nw == 0) {
		gf_cli_error(CMD,
			     "--windows %g: the trace spans %.0f s, less than "
			     "two windows",
			     W, last);
		rc = GF_EXIT_USAGE;
	}
	if (rc == 0) {
		struct gf_buf b;
		gf_buf_init(&b, 1u << 30);
		if (o->json)
			gf_as_report_windows_json(&b, w, nw, W, &o->so);
		else
			gf_as_report_windows(&b, w, nw, W, &o->so);
		rc = gf_cli_print_buf(CMD, 0, &b);
		gf_buf_release(&b);
	}
	release_windows(w, nw);
	return rc;
}

int cmd_simulate_autoscale(int argc, char **argv)
{
	struct opts o;
	memset(&o, 0, sizeof(o));
	gf_as_sim_opts_default(&o.so);
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	bool any = false;
	for (int i = 0; i < GF_ASP_COUNT; i++)
		any = any || o.pol[i];
	if (!any || o.all)
		for (int i = 0; i < GF_ASP_COUNT; i++)
			o.pol[i] =
				o.pol[i] || i != GF_ASP_STATIC || o.windows > 0;
	if (o.windows > 0 && (o.series || o.svg)) {
		gf_cli_error(CMD, "--series and --svg are for one run, not "
				  "--windows");
		return GF_EXIT_USAGE;
	}
	o.so.series = o.series || o.svg;
	struct gf_as_trace t;
	if ((rc = load(&o, &t)) != 0)
		return rc;
	if (o.windows > 0) {
		rc = run_windows(&o, &t);
		gf_as_trace_release(&t);
		return rc;
	}
	struct gf_as_result r[GF_ASP_COUNT];
	size_t n = 0;
	rc = run_policies(&o, &t, &o.so, r, &n);
	if (rc == 0)
		rc = outputs(&o, r, n);
	for (size_t i = 0; i < n; i++)
		gf_as_result_release(&r[i]);
	gf_as_trace_release(&t);
	return rc;
}
