/*
 * cmd_autoscale.c - `gpufleet autoscale recommend|run|manifests`:
 * options and output only; the decisions are core/scale's, the
 * manifests, sources and the loop src/autoscale's (docs/autoscaling.md).
 *
 * `recommend` is a contract for scripts (issue 14): --hpa FILE
 * --samples FILE [--start-replicas N] [--json]; one line `t_s,replicas`
 * per sample, or {"replicas": [...]}.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/autoscale.h"
#include "cli/cli.h"
#include "server/client.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"

#define DEFAULT_METRIC "gpufleet_queue_pending_jobs"

void gf_cli_autoscale_usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet autoscale recommend --hpa FILE --samples FILE "
		"[--start-replicas N] [--json]\n"
		"       gpufleet autoscale run --source URL [--query PROMQL] "
		"--hpa FILE --dry-run\n"
		"       gpufleet autoscale manifests --target NAME "
		"--target-value Q [options]\n"
		"\n"
		"Autoscale an inference service on its queue depth, deciding "
		"exactly as\nKubernetes' HorizontalPodAutoscaler (and KEDA "
		"around it) would.\n"
		"'gpufleet autoscale <subcommand> -h' describes each.\n%s",
		GF_CLI_EXIT_HELP);
}

/* The manifest's unknown fields, as the API server would warn. */
static void warnings(const char *cmd, const struct gf_as_scaler *sc)
{
	for (int i = 0; i < sc->nwarn && i < 8; i++)
		gf_cli_error(cmd, "warning: %s", sc->warn[i]);
	if (sc->nwarn > 8)
		gf_cli_error(cmd, "warning: %d more unknown fields",
			     sc->nwarn - 8);
}

/* ---- recommend ------------------------------------------------------ */

#define RCMD "autoscale recommend"

static void usage_recommend(FILE *f)
{
	fprintf(f,
		"usage: gpufleet autoscale recommend --hpa FILE --samples FILE "
		"[--start-replicas N]\n"
		"                                    [--json]\n"
		"\n"
		"What Kubernetes' HPA controller decides at each sync for "
		"the metric's\ntotals in FILE (replicas ready at once, status = "
		"spec, unless FILE\nsays otherwise), as "
		"pkg/controller/podautoscaler does it: the legacy "
		"path when the manifest\nhas no behavior, the behavior path "
		"(defaulted) when it has one.\n"
		"\n"
		"  --hpa FILE          an autoscaling/v2 HorizontalPodAutoscaler "
		"(minReplicas,\n"
		"                      maxReplicas, 1 to 8 External, Pods or "
		"Resource metrics,\n"
		"                      optional behavior), or a KEDA "
		"ScaledObject\n"
		"                      (keda.sh/v1alpha1, one prometheus "
		"trigger: activation\n"
		"                      and cooldown around the HPA it makes)\n"
		"  --samples FILE      CSV 't_s,value': the metric's total at "
		"each sync (seconds,\n"
		"                      a number or quantity >= 0, '-' when it "
		"could not be read;\n"
		"                      the header is optional); with a header, "
		"also value2..value8\n"
		"                      (one a metric of the HPA), ready, "
		"unready, missing and\n"
		"                      status (pod counts as the HPA saw them; "
		"empty: not given)\n"
		"  --start-replicas N  replicas before the first sync "
		"(default 1)\n"
		"  --json              {\"replicas\": [...]} instead of lines "
		"'t_s,replicas'\n"
		"  -h, --help          this help\n%s",
		GF_CLI_EXIT_HELP);
}

static int print_recommend(const struct gf_as_samples *s, const int32_t *r,
			   bool json)
{
	struct gf_buf b;
	gf_buf_init(&b, (size_t)64 * (s->n + 4));
	if (json) {
		gf_buf_puts(&b, "{\"replicas\": [");
		for (size_t i = 0; i < s->n; i++)
			gf_buf_printf(&b, "%s%d", i ? ", " : "", r[i]);
		gf_buf_puts(&b, "]}\n");
	} else {
		for (size_t i = 0; i < s->n; i++)
			gf_buf_printf(&b, "%s,%d\n", s->t_text[i], r[i]);
	}
	int rc = gf_cli_print_buf(RCMD, 0, &b);
	gf_buf_release(&b);
	return rc;
}

int cmd_autoscale_recommend(int argc, char **argv)
{
	const char *hpa = NULL, *samples = NULL;
	long start = 1;
	bool json = false;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("hpa", &hpa),
		GF_OPT_STR("samples", &samples),
		GF_OPT_NUM("start-replicas", &start, 0, INT32_MAX,
			   "a replica count"),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS(RCMD, argc, argv, opts, usage_recommend);
	args.no_args = true;
	args.json = &json;
	if (gf_cli_options(&args) >= 0)
		return args.rc;
	if (!hpa || !samples) {
		gf_cli_error(RCMD, "--hpa FILE and --samples FILE are needed "
				   "(see 'gpufleet autoscale recommend -h')");
		return GF_EXIT_USAGE;
	}
	struct gf_as_scaler sc;
	struct gf_as_samples s;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_as_read_manifest(hpa, &sc, &e)) {
		gf_cli_error(RCMD, "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	warnings(RCMD, &sc);
	if (gf_as_read_samples(samples, &s, &e)) {
		gf_cli_error(RCMD, "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	int32_t *r = gf_calloc(s.n ? s.n : 1, sizeof(*r));
	int rc = GF_EXIT_OK;
	if (gf_as_recommend(&sc, (int32_t)start, &s, r, &e)) {
		gf_cli_error(RCMD, "%s", e.msg);
		rc = GF_EXIT_FAIL;
	} else {
		rc = print_recommend(&s, r, json);
	}
	gf_free(r);
	gf_as_samples_release(&s);
	return rc;
}

/* ---- run ------------------------------------------------------------ */

#define LCMD "autoscale run"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage_run(FILE *f)
{
	fprintf(f,
		"usage: gpufleet autoscale run --source URL [--query PROMQL | "
		"--metric NAME\n"
		"                              [--class C] [--team T] "
		"[--label K=V]...]\n"
		"                              --hpa FILE (--dry-run | "
		"--service NAME\n"
		"                              [--controller URL])\n"
		"                              [--interval S] [--count N] "
		"[--start-replicas N]\n"
		"                              [--token-file F] [--ca FILE] "
		"[--insecure-http]\n"
		"                              [--json]\n"
		"\n"
		"Every interval, read the queue depth and decide as the "
		"manifest's HPA (or\nKEDA ScaledObject) would.  A source "
		"or a controller that is down changes\nnothing, as in "
		"Kubernetes.  One line per sync on stdout:\n"
		"t_s,metric,replicas,reason (metric 'down' when unread, "
		"reason\ncontroller-unavailable when the count could not be "
		"read or set; the\ncause on stderr).\n"
		"An HPA of several metrics: the first is the queue depth "
		"above, each other\nis read from the same source by its "
		"metric.name and selector.matchLabels\n(Prometheus: "
		"sum(NAME{K=\"V\"}), or the next --query); columns metric2 "
		"..\n('-' when unread: the others may scale up, never "
		"down).  With --service,\ncolumns ready,unready: the "
		"service's running and pending jobs.\n"
		"\n"
		"  --source URL     the controller (its /metrics, summing "
		"--metric, default\n"
		"                   " DEFAULT_METRIC "), or Prometheus with "
		"--query\n"
		"  --query PROMQL   an instant query (/api/v1/query), its "
		"vector summed; again\n"
		"                   for each further metric of the HPA, in "
		"order\n"
		"  --metric NAME    the family summed on /metrics\n"
		"  --class C, --team T, --label K=V\n"
		"                   only the samples with these labels\n"
		"  --path P         the page's path (default /metrics)\n"
		"  --hpa FILE       the HPA or ScaledObject whose decision to "
		"take\n"
		"  --dry-run        print the desired replicas only (the count "
		"is the loop's own)\n"
		"  --service NAME   act on the controller's inference service "
		"NAME (its replica\n"
		"                   count: PUT /v1/services/NAME/replicas)\n"
		"  --controller URL the controller to act on (default: "
		"--source, which must\n"
		"                   then be the controller, not Prometheus)\n"
		"  --interval S     seconds between syncs (default 15)\n"
		"  --count N        stop after N syncs (default: at SIGINT or "
		"SIGTERM)\n"
		"  --start-replicas N  the count before the first sync "
		"(default: minReplicas,\n"
		"                   or 1)\n"
		"  --token-file F   bearer token for the source and the "
		"controller\n"
		"  --ca FILE        with https://: the CA that signed their "
		"certificates\n"
		"  --insecure-http  send the token over http:// to a host that "
		"is not loopback\n"
		"                   (refused without it)\n"
		"  --json           one JSON object per line (t_s, metric, replicas, reason,\n"
		"                   metrics: each value or null, ready and unready when known)\n"
		"  -h, --help       this help\n%s",
		GF_CLI_EXIT_HELP);
}

struct run_out {
	bool json;
	int nmetrics; /* the columns metric, metric2 .. */
	bool pods;    /* the actuator sees pods: the columns ready, unready */
};

/* The header of the text lines (what report() prints after it). */
static void run_header(const struct run_out *o)
{
	printf("# t_s,metric,replicas,reason");
	for (int i = 2; i <= o->nmetrics; i++)
		printf(",metric%d", i);
	printf("%s\n", o->pods ? ",ready,unready" : "");
}

/* The metrics after the first and the pods, as text columns or JSON. */
static void report_more(const struct run_out *o, const struct gf_as_tick *t)
{
	char v[32];
	if (o->json) {
		printf(", \"metrics\": [");
		for (int i = 0; i < t->nmetrics; i++) {
			gf_note(v, sizeof(v), "%.17g", t->values[i]);
			printf("%s%s", i ? ", " : "", t->oks[i] ? v : "null");
		}
		printf("]");
		if (t->ready >= 0)
			printf(", \"ready\": %d, \"unready\": %d", t->ready,
			       t->unready);
		return;
	}
	for (int i = 1; i < o->nmetrics; i++) {
		gf_note(v, sizeof(v), "%.17g", t->values[i]);
		printf(",%s", i < t->nmetrics && t->oks[i] ? v : "-");
	}
	if (o->pods && t->ready >= 0)
		printf(",%d,%d", t->ready, t->unready);
	else if (o->pods)
		printf(",-,-");
}

/* Whether any metric was read at t. */
static bool read_any(const struct gf_as_tick *t)
{
	for (int i = 0; i < t->nmetrics; i++)
		if (t->oks[i])
			return true;
	return false;
}

static void report(void *ctx, const struct gf_as_tick *t)
{
	const struct run_out *o = ctx;
	if (t->act_why[0])
		gf_cli_error(LCMD, "t=%.1f s: cannot act: %s: no change",
			     t->t_s, t->act_why);
	else if (t->why[0] && !read_any(t))
		gf_cli_error(LCMD,
			     "t=%.1f s: metric unavailable: %s: no change",
			     t->t_s, t->why);
	else if (t->why[0])
		gf_cli_error(LCMD,
			     "t=%.1f s: metric unavailable: %s: the others "
			     "may scale up, never down",
			     t->t_s, t->why);
	/* the reason: the decision's, or that the controller did not
	 * answer */
	const char *why = t->act_why[0] ? "controller-unavailable"
					: gf_hpa_reason_name(t->reason);
	char metric[32] = "null";
	if (t->ok)
		gf_note(metric, sizeof(metric), "%.17g", t->value);
	if (o->json)
		printf("{\"t_s\": %.3f, \"metric\": %s, \"replicas\": %d, "
		       "\"reason\": \"%s\"",
		       t->t_s, metric, t->after, why);
	else
		printf("%.3f,%s,%d,%s", t->t_s, t->ok ? metric : "down",
		       t->after, why);
	report_more(o, t);
	printf("%s\n", o->json ? "}" : "");
	fflush(stdout);
}

static int dry_apply(void *ctx, int32_t cur, int32_t desired, struct gf_err *e)
{
	(void)ctx;
	(void)cur;
	(void)desired;
	(void)e;
	return 0;
}

/* The first klen bytes of k, and v, into a label row (each at most 127
 * bytes): 0, or -1 when one is longer. */
static int put_label(char (*row)[128], const char *k, int klen, const char *v)
{
	if (gf_fmt(row[0], 128, "%.*s", klen, k))
		return -1;
	return gf_fmt(row[1], 128, "%s", v) ? -1 : 0;
}

static bool add_label(struct gf_as_source *s, const char *k, const char *v)
{
	if (s->nlabels >= GF_AS_LABELS_MAX ||
	    put_label(s->labels[s->nlabels], k, (int)strlen(k), v))
		return false;
	s->nlabels++;
	return true;
}

static int read_token(const char *path, char **out)
{
	struct gf_err e;
	size_t len;
	if (gf_file_read(path, 4096, out, &len, &e)) {
		gf_cli_error(LCMD, "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	while (len && ((*out)[len - 1] == '\n' || (*out)[len - 1] == '\r'))
		(*out)[--len] = '\0';
	return 0;
}

struct run_opts {
	const char *source, *hpa, *service, *controller, *token_file;
	struct gf_as_source src;
	/* --query, each time given: metrics[i]'s (the first is src.query) */
	const char *queries[GF_HPA_METRICS_MAX];
	int nqueries;
	long interval_s, count, start;
	bool dry, json, query;
};

/* --query, --metric, --class, --team, --label, --path (code c): 0, or
 * -1 when arg is bad. */
static int run_option(int c, const char *arg, struct run_opts *o)
{
	char k[128];
	const char *eq;
	switch (c) {
	case 'q':
		if (o->nqueries >= GF_HPA_METRICS_MAX)
			return -1;
		o->queries[o->nqueries++] = arg;
		if (o->query)
			return 0;
		o->query = true;
		o->src.kind = GF_AS_SOURCE_PROMQL;
		return gf_fmt(o->src.query, sizeof(o->src.query), "%s", arg);
	case 'm':
		return gf_fmt(o->src.metric, sizeof(o->src.metric), "%s", arg);
	case 'c':
		return add_label(&o->src, "class", arg) ? 0 : -1;
	case 't':
		return add_label(&o->src, "team", arg) ? 0 : -1;
	case 'l':
		eq = strchr(arg, '=');
		if (!eq || eq == arg ||
		    gf_fmt(k, sizeof(k), "%.*s", (int)(eq - arg), arg))
			return -1;
		return add_label(&o->src, k, eq + 1) ? 0 : -1;
	default: /* 'P', --path */
		if (arg[0] != '/')
			return -1;
		return gf_fmt(o->src.path, sizeof(o->src.path), "%s", arg);
	}
}

/* The controller whose service the loop acts on: --controller, else
 * --source when that is the controller (not Prometheus); 0 or said. */
static int controller_base(const struct run_opts *o, char *out, size_t size)
{
	if (!o->controller && o->query) {
		gf_cli_error(LCMD, "--service with --query: say the "
				   "controller with --controller URL");
		return -1;
	}
	if (!o->controller) {
		if (gf_fmt(out, size, "%s", o->src.base) == 0)
			return 0;
		gf_cli_error(LCMD, "--source: longer than %zu bytes", size - 1);
		return -1;
	}
	const char *why = gf_client_base_url(o->controller, 9300, out, size);
	if (why)
		gf_cli_error(LCMD, "cannot use '--controller %s': %s",
			     o->controller, why);
	return why ? -1 : 0;
}

/* A token that would go in clear to a host that is not loopback: said,
 * true. */
static bool token_refused(const struct gf_as_source *src, const char *url)
{
	char why[256];
	if (!src->token ||
	    gf_client_token_safe(url, src->insecure_http, why, sizeof(why)))
		return false;
	gf_cli_error(LCMD, "%s", why);
	return true;
}

static int run_check(struct run_opts *o, struct gf_as_scaler *sc,
		     struct gf_as_actuator *act)
{
	if (!o->source || !o->hpa) {
		gf_cli_error(LCMD, "--source URL and --hpa FILE are needed "
				   "(see 'gpufleet autoscale run -h')");
		return GF_EXIT_USAGE;
	}
	if (o->dry == !!o->service) {
		gf_cli_error(LCMD, "say --dry-run (print the decisions) or "
				   "--service NAME (act), one of them");
		return GF_EXIT_USAGE;
	}
	const char *why = gf_client_base_url(o->source, o->query ? 9090 : 9300,
					     o->src.base, sizeof(o->src.base));
	if (why) {
		gf_cli_error(LCMD, "cannot use '--source %s': %s", o->source,
			     why);
		return GF_EXIT_USAGE;
	}
	if (token_refused(&o->src, o->src.base))
		return GF_EXIT_USAGE;
	if (!o->src.metric[0] &&
	    gf_fmt(o->src.metric, sizeof(o->src.metric), "%s", DEFAULT_METRIC))
		return GF_EXIT_FAIL; /* cannot: the default fits */
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_as_read_manifest(o->hpa, sc, &e)) {
		gf_cli_error(LCMD, "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	warnings(LCMD, sc);
	if (o->service) {
		char ctl[sizeof(o->src.base)];
		if (controller_base(o, ctl, sizeof(ctl)))
			return GF_EXIT_USAGE;
		if (token_refused(&o->src, ctl))
			return GF_EXIT_USAGE;
		if (gf_as_controller_actuator(ctl, &o->src, o->service, act,
					      &e)) {
			gf_cli_error(LCMD, "%s", e.msg);
			return GF_EXIT_FAIL;
		}
	} else {
		*act = (struct gf_as_actuator){ "dry-run", dry_apply, NULL,
						NULL, NULL };
	}
	if (o->start < 0) {
		int32_t min = sc->kind == GF_AS_KEDA ? sc->keda.min_replicas
						     : sc->hpa.min_replicas;
		o->start = min > 0 ? min : 1;
	}
	return 0;
}

int cmd_autoscale_run(int argc, char **argv)
{
	struct run_opts o;
	memset(&o, 0, sizeof(o));
	o.interval_s = 15;
	o.start = -1;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("source", &o.source),
		GF_OPT_ARG("query", 'q'),
		GF_OPT_ARG("metric", 'm'),
		GF_OPT_ARG("class", 'c'),
		GF_OPT_ARG("team", 't'),
		GF_OPT_ARG("label", 'l'),
		GF_OPT_ARG("path", 'P'),
		GF_OPT_STR("hpa", &o.hpa),
		GF_OPT_FLAG("dry-run", &o.dry),
		GF_OPT_STR("service", &o.service),
		GF_OPT_STR("controller", &o.controller),
		GF_OPT_DURATION("interval", &o.interval_s, 1, 86400,
				GF_DUR_BARE_S),
		GF_OPT_NUM("count", &o.count, 1, GF_CLI_NO_MAX, "a sync count"),
		GF_OPT_NUM("start-replicas", &o.start, 0, INT32_MAX,
			   "a replica count"),
		GF_OPT_STR("token-file", &o.token_file),
		GF_OPT_STR("ca", &o.src.ca),
		GF_OPT_FLAG("insecure-http", &o.src.insecure_http),
		GF_OPT_END,
	};
	int c;
	struct gf_cli_args args =
		GF_CLI_ARGS(LCMD, argc, argv, opts, usage_run);
	args.no_args = true;
	args.json = &o.json;
	while ((c = gf_cli_next(&args)) != -1)
		if (run_option(c, optarg, &o))
			(void)gf_cli_bad_value(&args, "see 'gpufleet "
						      "autoscale run -h'");
	if (args.rc >= 0)
		return args.rc;
	struct gf_as_scaler sc;
	struct gf_as_actuator act;
	char *token = NULL;
	int rc = 0;
	if (o.token_file && (rc = read_token(o.token_file, &token)) != 0)
		return rc;
	o.src.token = token; /* the source's and the actuator's */
	if ((rc = run_check(&o, &sc, &act)) != 0) {
		gf_free(token);
		return rc;
	}
	/* one source per metric of the HPA, of the first's kind */
	struct gf_as_source *srcs =
		gf_calloc(GF_HPA_METRICS_MAX, sizeof(*srcs));
	int nsrc = 1;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_as_metric_sources(&sc, &o.src, o.queries, o.nqueries, srcs,
				 &nsrc, &e)) {
		gf_cli_error(LCMD, "%s: %s", o.hpa, e.msg);
		rc = GF_EXIT_FAIL;
	} else {
		struct run_out out = { o.json, nsrc, act.pods != NULL };
		struct gf_as_loop l = {
			.scaler = &sc,
			.src = srcs,
			.nsrc = nsrc,
			.start = (int32_t)o.start,
			.interval_ms = o.interval_s * 1000,
			.count = o.count,
			.act = act,
			.report = report,
			.report_ctx = &out,
			.stop = &stop_flag,
		};
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		if (!o.json)
			run_header(&out);
		rc = gf_as_loop_run(&l, &e) ? GF_EXIT_FAIL : GF_EXIT_OK;
		if (rc)
			gf_cli_error(LCMD, "%s", e.msg);
	}
	gf_free(srcs);
	gf_as_actuator_release(&act);
	gf_free(token);
	return rc;
}

/* ---- manifests ------------------------------------------------------ */

#define MCMD "autoscale manifests"

static void usage_manifests(FILE *f)
{
	fprintf(f,
		"usage: gpufleet autoscale manifests --target NAME "
		"--target-value Q [--name N]\n"
		"           [--namespace NS] [--target-kind K] "
		"[--target-api V]\n"
		"           [--prometheus URL] [--query PROMQL] "
		"[--metric NAME] [--class C]\n"
		"           [--team T] [--label K=V]... [--min N] [--max N] "
		"[--activation Q]\n"
		"           [--polling S] [--cooldown S] [--down-window S] "
		"[--only keda|hpa]\n"
		"\n"
		"Write what does the same inside Kubernetes: a KEDA "
		"ScaledObject (a\nprometheus trigger on the queue depth, "
		"scale to zero with --min 0) and an\nautoscaling/v2 "
		"HorizontalPodAutoscaler on the same metric as an External "
		"\nmetric (served by an external-metrics adapter).  Apply one "
		"of them.\n"
		"\n"
		"  --target NAME       the Deployment (or --target-kind) to "
		"scale\n"
		"  --target-value Q    the queue depth per replica "
		"(threshold / averageValue)\n"
		"  --name N            the objects' name (default: the "
		"target's)\n"
		"  --prometheus URL    KEDA's serverAddress (default "
		"http://prometheus:9090)\n"
		"  --query PROMQL      KEDA's query (default: sum of --metric "
		"with the labels)\n"
		"  --metric NAME       default " DEFAULT_METRIC "\n"
		"  --min N, --max N    replicas (default 1, 10)\n"
		"  --activation Q      KEDA activationThreshold (default 0)\n"
		"  --polling S, --cooldown S   KEDA's (default 30, 300)\n"
		"  --down-window S     scaleDown stabilization (default 300)\n"
		"  --only keda|hpa     write one of the two\n"
		"  -h, --help          this help\n%s",
		GF_CLI_EXIT_HELP);
}

/* --class, --team, --label, --only (code c): 0, or -1 when arg is
 * bad. */
static int manifest_option(int c, const char *arg,
			   struct gf_as_manifest_opts *o)
{
	const char *eq = c == 'l' ? strchr(arg, '=') : NULL;
	if (c == 'o' && !strcmp(arg, "keda"))
		o->hpa = false;
	else if (c == 'o' && !strcmp(arg, "hpa"))
		o->keda = false;
	else if (c == 'o' || o->nlabels >= GF_AS_LABELS_MAX)
		return -1;
	else if (c == 'l' && (!eq || eq == arg ||
			      put_label(o->labels[o->nlabels], arg,
					(int)(eq - arg), eq + 1)))
		return -1;
	else if (c != 'l' && put_label(o->labels[o->nlabels],
				       c == 'c' ? "class" : "team", 5, arg))
		return -1;
	else
		o->nlabels++;
	return 0;
}

/* sum(METRIC{k="v",...}): 0, or -1 (said) when longer than size. */
static int default_query(const struct gf_as_manifest_opts *o, char *q,
			 size_t size)
{
	struct gf_buf b;
	gf_buf_init(&b, size);
	gf_buf_printf(&b, "sum(%s", o->metric);
	for (int i = 0; i < o->nlabels; i++)
		gf_buf_printf(&b, "%s%s=\"%s\"", i ? "," : "{", o->labels[i][0],
			      o->labels[i][1]);
	gf_buf_printf(&b, "%s)", o->nlabels ? "}" : "");
	int rc = gf_buf_error(&b) ? -1 : gf_fmt(q, size, "%s", gf_buf_str(&b));
	gf_buf_release(&b);
	if (rc)
		gf_cli_error(MCMD,
			     "the default query is longer than %zu bytes "
			     "(give --query)",
			     size - 1);
	return rc ? -1 : 0;
}

int cmd_autoscale_manifests(int argc, char **argv)
{
	struct gf_as_manifest_opts o;
	memset(&o, 0, sizeof(o));
	o.metric = DEFAULT_METRIC;
	o.prometheus = "http://prometheus:9090";
	o.min_replicas = 1;
	o.max_replicas = 10;
	o.polling_s = 30;
	o.cooldown_s = 300;
	o.down_window_s = 300;
	o.keda = o.hpa = true;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("name", &o.name),
		GF_OPT_STR("namespace", &o.ns),
		GF_OPT_STR("target", &o.target_name),
		GF_OPT_STR("target-kind", &o.target_kind),
		GF_OPT_STR("target-api", &o.target_api),
		GF_OPT_STR("prometheus", &o.prometheus),
		GF_OPT_STR("query", &o.query),
		GF_OPT_STR("metric", &o.metric),
		GF_OPT_ARG("class", 'c'),
		GF_OPT_ARG("team", 't'),
		GF_OPT_ARG("label", 'l'),
		GF_OPT_STR("target-value", &o.target_value),
		GF_OPT_STR("activation", &o.activation),
		GF_OPT_NUM("min", &o.min_replicas, 0, INT32_MAX,
			   "a replica count"),
		GF_OPT_NUM("max", &o.max_replicas, 0, INT32_MAX,
			   "a replica count"),
		GF_OPT_DURATION("polling", &o.polling_s, 0, INT32_MAX,
				GF_DUR_BARE_S),
		GF_OPT_DURATION("cooldown", &o.cooldown_s, 0, INT32_MAX,
				GF_DUR_BARE_S),
		GF_OPT_DURATION("down-window", &o.down_window_s, 0,
				GF_HPA_WINDOW_MAX, GF_DUR_BARE_S),
		GF_OPT_ARG("only", 'o'),
		GF_OPT_END,
	};
	int c;
	struct gf_cli_args args =
		GF_CLI_ARGS(MCMD, argc, argv, opts, usage_manifests);
	args.no_args = true;
	while ((c = gf_cli_next(&args)) != -1)
		if (manifest_option(c, optarg, &o))
			(void)gf_cli_bad_value(&args,
					       "see 'gpufleet "
					       "autoscale manifests -h'");
	if (args.rc >= 0)
		return args.rc;
	if (!o.target_name || !o.target_value) {
		gf_cli_error(MCMD, "--target NAME and --target-value Q are "
				   "needed (see 'gpufleet autoscale manifests "
				   "-h')");
		return GF_EXIT_USAGE;
	}
	if (!o.name)
		o.name = o.target_name;
	char q[2048];
	if (!o.query) {
		if (default_query(&o, q, sizeof(q)))
			return GF_EXIT_USAGE;
		o.query = q;
	}
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	struct gf_err e;
	gf_err_clear(&e);
	int rc = GF_EXIT_OK;
	if (gf_as_render_manifests(&o, &b, &e)) {
		gf_cli_error(MCMD, "%s", e.msg);
		rc = GF_EXIT_FAIL;
	} else {
		rc = gf_cli_print(gf_buf_str(&b), b.len);
	}
	gf_buf_release(&b);
	return rc;
}
