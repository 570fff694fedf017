/*
 * cmd_chargeback.c - `gpufleet chargeback`: who used which GPUs, at what
 * cost, with idle and shared costs allocated as OpenCost allocates them
 * (the core: include/gpufleet/charge.h; the readers and renderers:
 * src/chargeback/).  Options and output only.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpufleet/charge.h>

#include "chargeback/chargeback.h"
#include "cli/cli.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"

#define OUT_MAX	    (1u << 30)
#define SOURCES_MAX 16

struct args {
	const char *records[SOURCES_MAX], *sacct[SOURCES_MAX];
	int nrecords, nsacct;
	const char *db, *cluster, *assets, *prices, *telemetry, *window;
	const char *config; /* serve.yaml: its prices: block */
	const char *aggregate, *html, *mig_rule, *step;
	const char *share[GF_CHARGE_MAX_MATCH], *filter[GF_CHARGE_MAX_MATCH];
	const char *hourly[GF_CHARGE_MAX_SHARED];
	int nshare, nfilter, nhourly;
	bool json, csv, share_idle, idle_by_node, split_idle, lenient, even;
	bool breakdown;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet chargeback --window START,END --assets FILE\n"
		"         (--records FILE | --sacct FILE | --db URL)... "
		"[--aggregate KEY[,KEY]]\n"
		"       gpufleet chargeback --window W --db URL (--config "
		"serve.yaml | --prices FILE)\n"
		"         [--share-idle] [--idle-by-node] [--split-idle] "
		"[--share KEY=VALUE]...\n"
		"         [--share-split weighted|even] [--shared-hourly "
		"NAME=COST]...\n"
		"         [--shared-breakdown] [--filter KEY=VALUE]... [--prices FILE] "
		"[--telemetry FILE]\n"
		"         [--mig-rule compute|memory] [--step 1d] [--lenient]\n"
		"         [--json | --csv] [--html FILE]\n"
		"\n"
		"What each team's GPUs, CPUs and memory cost over a window, "
		"with idle\n"
		"capacity and shared costs allocated as OpenCost does "
		"(docs/chargeback.md).\n"
		"\n"
		"  --window W          START,END (RFC3339 or unix seconds), or "
		"7d, 24h, 90m\n"
		"                      ending now\n"
		"  --records FILE      usage CSV: cluster,node,namespace,pod,"
		"container,start,end,\n"
		"                      gpus,cpu_req,cpu_use,ram_req_gib,"
		"ram_use_gib [,labels,\n"
		"                      gpu_model,mig_profile,gpu_ids,"
		"other_cost]\n"
		"  --sacct FILE        Slurm: TZ=UTC sacct -a -X -P -o JobID,"
		"Account,NodeList,\n"
		"                      Start,End,AllocTRES[,Cluster,User,"
		"Partition,QOS,JobName]\n"
		"  --db URL            the controller's store (sqlite:PATH, "
		"postgres://...)\n"
		"  --cluster NAME      the cluster --db records are in "
		"(default gpufleet)\n"
		"                      (--db: runs kept, and jobs running "
		"now up to now;\n"
		"                      without --assets, the nodes that "
		"joined, priced)\n"
		"  --config FILE       serve.yaml: its prices: block (GPU "
		"model: per GPU-hour,\n"
		"                      cpu_core, ram_gib, currency, "
		"default)\n"
		"  --assets FILE       capacity and prices CSV: cluster,node,"
		"start,end,gpus,\n"
		"                      cpu_cores,ram_gib,gpu_price_hr,"
		"cpu_core_price_hr,\n"
		"                      ram_gib_price_hr [,gpu_model,"
		"node_price_hr]\n"
		"  --prices FILE       YAML: prices per GPU model, CPU core, "
		"GiB; node prices\n"
		"  --telemetry FILE    GPU activity CSV: node,gpu,start,end,"
		"gr_engine_active,\n"
		"                      sm_active,gpu_util,diagnosis (joins "
		"records' gpu_ids)\n"
		"  --aggregate KEYS    cluster, node, namespace, pod, container, "
		"label:NAME,\n"
		"                      gpu_model, controllerKind, controller, "
		"service,\n"
		"                      deployment, statefulset, daemonset, "
		"annotation:NAME;\n"
		"                      team, job, class, user "
		"(default namespace)\n"
		"  --share-idle        spread idle over allocations by cost, "
		"per resource\n"
		"  --idle-by-node      idle per node (default per cluster)\n"
		"  --split-idle        keep one idle row per cluster (or node)\n"
		"  --share KEY=VALUE   allocations matching are shared costs "
		"(repeatable)\n"
		"  --share-split S     spread shared costs weighted by cost "
		"(default) or even\n"
		"  --shared-hourly N=C an overhead of C per hour, spread like "
		"shared costs\n"
		"  --shared-breakdown  JSON: each row's sharedCostBreakdown "
		"(what each shared\n"
		"                      allocation and the overheads gave it)\n"
		"  --filter KEY=VALUE  only allocations matching (one key: any "
		"value; keys: all)\n"
		"  --mig-rule R        MIG instances billed by compute (default) "
		"or memory slices\n"
		"  --step D            one result per step (1d, 1h); default "
		"the whole window\n"
		"  --lenient           skip bad records, saying how many and "
		"which\n"
		"  --json              OpenCost's allocation JSON (5 decimals)\n"
		"  --csv               one CSV line per row\n"
		"  --html FILE         a self-contained page with charts\n" GF_CLI_EXIT_HELP);
}

/* The options into a: -1 to go on, else the exit status (-h answered,
 * or what was wrong said). */
static int parse_args(int argc, char **argv, struct args *a)
{
	const struct gf_cli_opt opts[] = {
		GF_OPT_LIST("records", a->records, &a->nrecords),
		GF_OPT_LIST("sacct", a->sacct, &a->nsacct),
		GF_OPT_STR("db", &a->db),
		GF_OPT_STR("cluster", &a->cluster),
		GF_OPT_STR("assets", &a->assets),
		GF_OPT_STR("prices", &a->prices),
		GF_OPT_STR("config", &a->config),
		GF_OPT_STR("telemetry", &a->telemetry),
		GF_OPT_STR("window", &a->window),
		GF_OPT_STR("aggregate", &a->aggregate),
		GF_OPT_FLAG("share-idle", &a->share_idle),
		GF_OPT_FLAG("idle-by-node", &a->idle_by_node),
		GF_OPT_FLAG("split-idle", &a->split_idle),
		GF_OPT_LIST("share", a->share, &a->nshare),
		GF_OPT_ARG("share-split", 's'),
		GF_OPT_LIST("shared-hourly", a->hourly, &a->nhourly),
		GF_OPT_FLAG("shared-breakdown", &a->breakdown),
		GF_OPT_LIST("filter", a->filter, &a->nfilter),
		GF_OPT_STR("mig-rule", &a->mig_rule),
		GF_OPT_STR("step", &a->step),
		GF_OPT_FLAG("lenient", &a->lenient),
		GF_OPT_FLAG("json", &a->json),
		GF_OPT_FLAG("csv", &a->csv),
		GF_OPT_STR("html", &a->html),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS("chargeback", argc, argv, opts, usage);
	args.no_args = true;
	while (gf_cli_next(&args) != -1) { /* 's', --share-split */
		if (strcmp(optarg, "weighted") && strcmp(optarg, "even"))
			(void)gf_cli_bad_value(&args,
					       "expected weighted or even");
		a->even = strcmp(optarg, "even") == 0;
	}
	if (args.rc >= 0)
		return args.rc;
	/* --db without --assets prices the store's nodes */
	bool store_assets = a->db && (a->config || a->prices);
	const char *missing = !a->window		    ? "--window"
			      : !a->assets && !store_assets ? "--assets"
			      : !a->nrecords && !a->nsacct && !a->db
				      ? "--records, --sacct or --db"
				      : NULL;
	if (missing) {
		gf_cli_error("chargeback",
			     "%s is required (see 'gpufleet "
			     "chargeback -h')",
			     missing);
		return GF_EXIT_USAGE;
	}
	if (a->json && a->csv) {
		gf_cli_error("chargeback", "'--json' and '--csv' exclude each "
					   "other");
		return GF_EXIT_USAGE;
	}
	return -1;
}

/* The options the core takes; GF_EXIT_USAGE with the error printed. */
static int build_opts(struct gf_charge_input *in, const struct args *a,
		      const struct gf_cb_prices *p, struct gf_charge_opts *o)
{
	struct gf_err e = { 0, "" };
	int64_t s, t, now = gf_clock_wall_ms();
	if (gf_cb_parse_window(a->window, now, &s, &t, &e)) {
		gf_cli_error("chargeback", "%s", e.msg);
		return GF_EXIT_USAGE;
	}
	gf_charge_opts_init(o, s, t);
	o->now_ms = now;
	o->share_idle = a->share_idle;
	o->idle_by_node = a->idle_by_node;
	o->split_idle = a->split_idle;
	o->lenient = a->lenient;
	o->shared_breakdown = a->breakdown;
	o->share_split =
		a->even ? GF_CHARGE_SPLIT_EVEN : GF_CHARGE_SPLIT_WEIGHTED;
	if (p->has_mig_rule)
		o->mig_rule = p->mig_rule;
	if (a->mig_rule && strcmp(a->mig_rule, "compute") &&
	    strcmp(a->mig_rule, "memory")) {
		gf_cli_error("chargeback",
			     "cannot parse '--mig-rule %s': expected compute "
			     "or memory",
			     a->mig_rule);
		return GF_EXIT_USAGE;
	}
	if (a->mig_rule)
		o->mig_rule = strcmp(a->mig_rule, "memory") == 0
				      ? GF_CHARGE_MIG_MEMORY
				      : GF_CHARGE_MIG_COMPUTE;
	char keys[512];
	if (gf_cli_arg_copy("chargeback", "--aggregate",
			    a->aggregate ? a->aggregate : "namespace", keys,
			    sizeof(keys)))
		return GF_EXIT_USAGE;
	for (char *k = keys, *next; k && *k; k = next) {
		next = strchr(k, ',');
		if (next)
			*next++ = '\0';
		if (o->nagg == GF_CHARGE_MAX_KEYS) {
			gf_cli_error("chargeback",
				     "'--aggregate %s': at most %d keys",
				     a->aggregate, GF_CHARGE_MAX_KEYS);
			return GF_EXIT_USAGE;
		}
		if (gf_charge_key_parse(in, k, &o->agg[o->nagg++], &e)) {
			gf_cli_error("chargeback", "'--aggregate': %s", e.msg);
			return GF_EXIT_USAGE;
		}
	}
	for (int i = 0; i < a->nshare; i++)
		if (gf_charge_match_parse(in, a->share[i],
					  &o->share[o->nshare++], &e)) {
			gf_cli_error("chargeback", "'--share': %s", e.msg);
			return GF_EXIT_USAGE;
		}
	for (int i = 0; i < a->nfilter; i++)
		if (gf_charge_match_parse(in, a->filter[i],
					  &o->filter[o->nfilter++], &e)) {
			gf_cli_error("chargeback", "'--filter': %s", e.msg);
			return GF_EXIT_USAGE;
		}
	for (int i = 0; i < a->nhourly; i++) {
		const char *eq = strchr(a->hourly[i], '=');
		char *end;
		struct gf_charge_shared_hourly *h =
			&o->shared_hourly[o->nshared_hourly++];
		double v = eq ? strtod(eq + 1, &end) : NAN;
		if (!eq || eq == a->hourly[i] ||
		    (size_t)(eq - a->hourly[i]) >= sizeof(h->name) ||
		    end == eq + 1 || *end || !(v >= 0) || !isfinite(v)) {
			gf_cli_error("chargeback",
				     "cannot parse '--shared-hourly %s': "
				     "expected NAME=COST (per hour, >= 0)",
				     a->hourly[i]);
			return GF_EXIT_USAGE;
		}
		if (gf_fmt(h->name, sizeof(h->name), "%.*s",
			   (int)(eq - a->hourly[i]), a->hourly[i]))
			return GF_EXIT_USAGE; /* cannot: checked above */
		h->cost_hr = v;
	}
	if (a->step) {
		int64_t ss, tt;
		if (gf_cb_parse_window(a->step, 0, &ss, &tt, &e)) {
			gf_cli_error("chargeback",
				     "cannot parse '--step %s': expected a "
				     "duration like 1d or 1h",
				     a->step);
			return GF_EXIT_USAGE;
		}
		o->step_ms = tt - ss;
	}
	return 0;
}

/* Read every input; an exit code (the error printed). */
static int read_inputs(struct gf_charge_input *in, const struct args *a,
		       const struct gf_cb_prices *p,
		       const struct gf_charge_opts *o, struct gf_cb_skips *sk)
{
	struct gf_err e = { 0, "" };
	const char *cluster = a->cluster ? a->cluster : "gpufleet";
	int rc = a->assets ? gf_cb_read_assets(in, a->assets, p, &e)
			   : gf_cb_db_assets(in, a->db, cluster, p, o->start_ms,
					     o->end_ms, &e);
	for (int i = 0; rc == 0 && i < a->nrecords; i++)
		rc = gf_cb_read_records(in, a->records[i], a->lenient, sk, &e);
	for (int i = 0; rc == 0 && i < a->nsacct; i++)
		rc = gf_cb_read_sacct(in, a->sacct[i], gf_clock_wall_ms(),
				      a->lenient, sk, &e);
	if (rc == 0 && a->db)
		rc = gf_cb_read_db(in, a->db, cluster, o->now_ms, &e);
	if (rc == 0 && a->telemetry)
		rc = gf_cb_read_telemetry(in, a->telemetry, a->lenient, sk, &e);
	if (rc) {
		gf_cli_error("chargeback", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	gf_log(GF_LOG_DEBUG, "chargeback",
	       "read %zu records, %zu asset rows, %zu telemetry rows", in->nrec,
	       in->nasset, in->ntele);
	return 0;
}

static int write_file(const char *path, const struct gf_buf *b)
{
	struct gf_err e;
	if (gf_file_write_atomic(path, b->data, b->len, &e) != 0) {
		gf_cli_error("chargeback", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	return 0;
}

static int html_page(const struct gf_cb_view *v, const struct args *a,
		     const struct gf_charge_result *res)
{
	struct gf_charge_opts daily = *v->o;
	struct gf_charge_result d;
	struct gf_err e = { 0, "" };
	daily.step_ms = 86400000;
	int64_t len = daily.end_ms - daily.start_ms;
	bool have_daily = len > daily.step_ms &&
			  len / daily.step_ms < GF_CHARGE_STEPS_MAX &&
			  gf_charge_run(v->in, &daily, &d, &e) == 0;
	struct gf_buf b;
	gf_buf_init(&b, OUT_MAX);
	int rc = gf_cb_render_html(v, res, have_daily ? &d : NULL, &b);
	if (rc)
		gf_cli_error("chargeback", "the page passed %u MiB",
			     OUT_MAX >> 20);
	else
		rc = write_file(a->html, &b);
	gf_buf_release(&b);
	if (have_daily)
		gf_charge_result_release(&d);
	return rc;
}

static int report(const struct gf_cb_view *v, const struct args *a,
		  const struct gf_charge_result *res)
{
	if (v->o->lenient && res->nskipped_total + v->read_skips->total > 0) {
		struct gf_buf b;
		gf_buf_init(&b, OUT_MAX);
		gf_cb_skips_text(v, res, &b);
		size_t n = res->nskipped_total + v->read_skips->total;
		gf_cli_error("chargeback",
			     "skipped %zu bad record%s (--lenient):", n,
			     n == 1 ? "" : "s");
		fputs(gf_buf_str(&b), stderr);
		gf_buf_release(&b);
	}
	struct gf_buf b;
	gf_buf_init(&b, OUT_MAX);
	int rc = a->json   ? gf_cb_render_json(v, res, &b)
		 : a->csv  ? gf_cb_render_csv(v, res, &b)
		 : a->html ? 0
			   : gf_cb_render_table(v, res, &b);
	if (rc) {
		gf_cli_error("chargeback", "the report passed %u MiB",
			     OUT_MAX >> 20);
		rc = GF_EXIT_FAIL;
	} else if (b.len) {
		rc = gf_cli_print(b.data, b.len);
	}
	gf_buf_release(&b);
	if (rc == 0 && a->html)
		rc = html_page(v, a, res);
	return rc;
}

int cmd_chargeback(int argc, char **argv)
{
	struct args a;
	memset(&a, 0, sizeof(a));
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct gf_cb_prices p;
	struct gf_err e = { 0, "" };
	gf_cb_prices_init(&p);
	bool found = false;
	if ((a.prices && gf_cb_read_prices(a.prices, &p, &e)) ||
	    (a.config && gf_cb_read_prices_block(a.config, &p, &found, &e))) {
		gf_cli_error("chargeback", "%s", e.msg);
		gf_cb_prices_release(&p);
		return GF_EXIT_FAIL;
	}
	if (a.config && !found) {
		gf_cli_error("chargeback", "--config '%s': no prices: block",
			     a.config);
		gf_cb_prices_release(&p);
		return GF_EXIT_FAIL;
	}
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_cb_skips sk = { NULL, 0, 0 };
	gf_charge_input_init(&in);
	rc = build_opts(&in, &a, &p, &o);
	if (rc == 0)
		rc = read_inputs(&in, &a, a.prices || a.config ? &p : NULL, &o,
				 &sk);
	struct gf_charge_result res;
	if (rc == 0 && gf_charge_run(&in, &o, &res, &e)) {
		gf_cli_error("chargeback", "%s", e.msg);
		rc = GF_EXIT_FAIL;
	} else if (rc == 0) {
		struct gf_cb_view v = { &in, &o, &sk, p.currency, NULL };
		rc = report(&v, &a, &res);
		gf_charge_result_release(&res);
	}
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
	gf_cb_prices_release(&p);
	return rc;
}
