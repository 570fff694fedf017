/*
 * cmd_simulate.c - `gpufleet simulate fill`: replay a trace (or the
 * built-in workload) through the placement engine, per policy and seed,
 * in parallel on all cores, and report unallocated GPU by arrived load.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/sim.h>

#include "../sim/mig_sim.h"
#include "../sim/pool.h"
#include "../sim/report.h"
#include "../sim/synth.h"
#include "../sim/trace.h"
#include "../util/json.h"
#include "../util/mem.h"
#include "cli.h"

#define MAX_SEEDS    1000
#define BUILTIN_REQS 1200
#define OUT_CAP	     (64u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet simulate mig ... ('gpufleet simulate mig -h')\n"
		"       gpufleet simulate fill [--nodes FILE --pods FILE] "
		"[--policy P[,P...]]\n"
		"                              [--seeds 42-51] [--tune 1.3] "
		"[--curve FILE] [--json]\n"
		"                              [--jobs N] [--requests N]\n"
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
		"  --policy LIST    random,dotprod,clustering,packing,bestfit,fgd "
		"or all (default)\n"
		"  --seeds LIST     seeds, e.g. 42-51 or 1,7 (default 42-51)\n"
		"  --tune X         scale demand to X x capacity by resampling "
		"(default 1.3;\n"
		"                   --inflate is the same)\n"
		"  --curve FILE     write the per-percent curve as CSV\n"
		"  --json           machine-readable summary\n"
		"  --jobs N         worker threads (default: all cores)\n"
		"  --requests N     size of the built-in workload (default %d)\n"
		"  -h, --help       this help\n",
		BUILTIN_REQS);
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

static int parse_policies(const char *s, enum gf_policy *out, int *n)
{
	*n = 0;
	if (strcmp(s, "all") == 0) {
		for (int i = 0; i < GF_POLICY_COUNT; i++)
			out[(*n)++] = (enum gf_policy)i;
		return 0;
	}
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = buf, *next; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		enum gf_policy p;
		if (gf_policy_parse(tok, &p) != 0 || *n >= GF_POLICY_COUNT) {
			gf_cli_error("simulate",
				     "unknown policy '%s' (known: random, "
				     "dotprod, clustering, packing, bestfit, "
				     "fgd, all)",
				     tok);
			return -1;
		}
		for (int i = 0; i < *n; i++)
			if (out[i] == p)
				return 0;
		out[(*n)++] = p;
	}
	return 0;
}

static int write_file(const char *path, const struct gf_buf *b)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		gf_cli_error("simulate", "cannot write '%s': %s", path,
			     gf_strerror(-errno));
		return -1;
	}
	bool ok = fwrite(gf_buf_str(b), 1, b->len, f) == b->len;
	if (fclose(f) != 0)
		ok = false;
	if (!ok) {
		gf_cli_error("simulate", "cannot write '%s': %s", path,
			     gf_strerror(-errno));
		return -1;
	}
	return 0;
}

struct fill_args {
	const char *nodes, *pods, *curve;
	enum gf_policy policies[GF_POLICY_COUNT];
	int npolicies;
	uint64_t seeds[MAX_SEEDS];
	int nseeds;
	double tune;
	bool json;
	int jobs;
	int requests;
};

static int load_inputs(const struct fill_args *a, struct gf_cluster *c,
		       struct gf_workload *w, char *source, size_t size)
{
	struct gf_err e;
	gf_err_clear(&e);
	if (a->nodes) {
		if (gf_trace_load_nodes(a->nodes, c, &e) != 0 ||
		    gf_trace_load_pods(a->pods, c, w, &e) != 0) {
			gf_cli_error("simulate", "%s", e.msg);
			return -1;
		}
		const char *base = strrchr(a->pods, '/');
		snprintf(source, size, "trace %s", base ? base + 1 : a->pods);
	} else {
		if (gf_synth_cluster(c) != 0 ||
		    gf_synth_workload(c, w, a->requests, 1) != 0) {
			gf_cli_error("simulate", "cannot build the built-in "
						 "workload");
			return -1;
		}
		snprintf(source, size, "built-in cluster and workload");
	}
	return 0;
}

static int fill(const struct fill_args *a)
{
	struct gf_cluster c;
	struct gf_workload w;
	struct gf_typical *typ = NULL;
	struct gf_fill_job *jobs = NULL;
	struct gf_fill_summary *sum = NULL;
	struct gf_buf out;
	char source[256];
	int ret = GF_EXIT_FAIL;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	gf_buf_init(&out, OUT_CAP);
	if (load_inputs(a, &c, &w, source, sizeof(source)) != 0)
		goto out;
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	if (ntyp <= 0)
		goto out;
	int njobs = a->npolicies * a->nseeds;
	jobs = gf_calloc((size_t)njobs, sizeof(*jobs));
	for (int p = 0; p < a->npolicies; p++)
		for (int s = 0; s < a->nseeds; s++) {
			struct gf_fill_job *j = &jobs[p * a->nseeds + s];
			j->o.policy = a->policies[p];
			j->o.seed = a->seeds[s];
			j->o.tune = a->tune;
			j->o.resample = a->tune > 0;
		}
	struct gf_fill_pool pool = { .c = &c,
				     .w = &w,
				     .typ = typ,
				     .ntyp = ntyp,
				     .jobs = jobs,
				     .njobs = njobs };
	if (gf_fill_pool_run(&pool, a->jobs, true) != 0) {
		gf_cli_error("simulate", "a run failed (empty cluster or "
					 "workload?)");
		goto out;
	}
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
	struct gf_report_info info = { .nodes = c.n,
				       .gpus = c.gpu_milli_total / 1000,
				       .requests = w.n,
				       .tune = a->tune,
				       .seeds = a->seeds,
				       .nseeds = a->nseeds,
				       .source = source };
	if (a->curve) {
		struct gf_buf cb;
		gf_buf_init(&cb, OUT_CAP);
		int rc = gf_report_curve_csv(sum, a->npolicies, &cb);
		if (rc == 0)
			rc = write_file(a->curve, &cb);
		gf_buf_release(&cb);
		if (rc)
			goto out;
	}
	if ((a->json ? gf_report_json(&info, sum, a->npolicies, &out)
		     : gf_report_text(&info, sum, a->npolicies, &out)) != 0) {
		gf_cli_error("simulate", "report larger than %u MiB",
			     OUT_CAP >> 20);
		goto out;
	}
	ret = gf_cli_print(gf_buf_str(&out), out.len);
out:
	gf_buf_release(&out);
	gf_free(sum);
	gf_free(jobs);
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
	return ret;
}

static int fill_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "pods", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "seeds", required_argument, NULL, 's' },
		{ "tune", required_argument, NULL, 't' },
		{ "inflate", required_argument, NULL, 't' },
		{ "curve", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "jobs", required_argument, NULL, 'J' },
		{ "requests", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct fill_args a;
	memset(&a, 0, sizeof(a));
	a.tune = 1.3;
	a.requests = BUILTIN_REQS;
	parse_policies("all", a.policies, &a.npolicies);
	parse_seeds("42-51", a.seeds, &a.nseeds);
	int c;
	char *end;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			a.nodes = optarg;
			break;
		case 'p':
			a.pods = optarg;
			break;
		case 'P':
			if (parse_policies(optarg, a.policies, &a.npolicies))
				return GF_EXIT_USAGE;
			break;
		case 's':
			if (parse_seeds(optarg, a.seeds, &a.nseeds) != 0) {
				gf_cli_error("simulate",
					     "cannot parse '--seeds %s': "
					     "expected 42-51 or 1,2,3 (at most "
					     "%d)",
					     optarg, MAX_SEEDS);
				return GF_EXIT_USAGE;
			}
			break;
		case 't':
			a.tune = strtod(optarg, &end);
			if (*end || a.tune < 0 || a.tune > 100) {
				gf_cli_error("simulate",
					     "cannot parse '--tune %s': "
					     "expected a factor from 0 to 100",
					     optarg);
				return GF_EXIT_USAGE;
			}
			break;
		case 'c':
			a.curve = optarg;
			break;
		case 'j':
			a.json = true;
			break;
		case 'J':
		case 'r': {
			long v = strtol(optarg, &end, 10);
			long max = c == 'J' ? 256 : GF_MAX_REQUESTS;
			if (*end || v < 1 || v > max) {
				gf_cli_error("simulate",
					     "cannot parse '%s': expected 1 "
					     "to %ld",
					     optarg, max);
				return GF_EXIT_USAGE;
			}
			if (c == 'J')
				a.jobs = (int)v;
			else
				a.requests = (int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			return gf_cli_bad_option("simulate", argv);
		}
	}
	if (optind < argc) {
		gf_cli_error("simulate", "unexpected argument '%s'",
			     argv[optind]);
		return GF_EXIT_USAGE;
	}
	if (!a.nodes != !a.pods) {
		gf_cli_error("simulate", "--nodes and --pods go together");
		return GF_EXIT_USAGE;
	}
	return fill(&a);
}

static void mig_usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet simulate mig --gpu MODEL --mix "
		"PROFILE=WEIGHT[,...] [--requests N]\n"
		"                             [--seed S] [--json]\n"
		"\n"
		"A stream of MIG-instance requests drawn from the mix; at 25, 50, "
		"75 and 100 %%\nof it, the GPUs each partitioning needs to serve "
		"every request: NVIDIA's\nstatic all-1g and all-balanced layouts, "
		"and layouts planned for the demand.\n"
		"  --gpu MODEL      a MIG model (h100-80gb, a100-40gb, a30, ...)\n"
		"  --mix LIST       profile weights, e.g. "
		"1g.10gb=60,2g.20gb=25,3g.40gb=15\n"
		"  --requests N     requests in the stream (default 200)\n"
		"  --seed S         (default 1)\n"
		"  --json           machine-readable\n");
}

static int mig_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "mix", required_argument, NULL, 'm' },
		{ "requests", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *model = NULL, *mix_s = NULL;
	long requests = 200;
	unsigned long long seed = 1;
	bool json = false;
	int c;
	char *end;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			model = optarg;
			break;
		case 'm':
			mix_s = optarg;
			break;
		case 'r':
			requests = strtol(optarg, &end, 10);
			if (*end || requests < 4 ||
			    requests > GF_MIG_MAX_GPUS) {
				gf_cli_error("simulate mig",
					     "--requests: expected 4 to %d",
					     GF_MIG_MAX_GPUS);
				return GF_EXIT_USAGE;
			}
			break;
		case 's':
			seed = strtoull(optarg, &end, 10);
			if (*end) {
				gf_cli_error("simulate mig",
					     "--seed: expected a number");
				return GF_EXIT_USAGE;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			mig_usage(stdout);
			return GF_EXIT_OK;
		default:
			return gf_cli_bad_option("simulate mig", argv);
		}
	}
	const struct gf_mig_model *m = model ? gf_mig_model_by_id(model) : NULL;
	if (!m || !mix_s) {
		gf_cli_error("simulate mig", model && !m
						     ? "unknown MIG model"
						     : "--gpu and --mix are "
						       "required");
		return GF_EXIT_USAGE;
	}
	struct gf_migsim_mix mix[GF_MIG_MAX_DEMANDS];
	int nmix = 0;
	memset(mix, 0, sizeof(mix));
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", mix_s);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');
		long w = eq ? strtol(eq + 1, &end, 10) : -1;
		if (!eq || *end || w < 0 || nmix >= GF_MIG_MAX_DEMANDS ||
		    (size_t)(eq - tok) >= sizeof(mix[0].profile)) {
			gf_cli_error("simulate mig",
				     "cannot parse mix entry '%s': expected "
				     "PROFILE=WEIGHT",
				     tok);
			return GF_EXIT_USAGE;
		}
		*eq = '\0';
		snprintf(mix[nmix].profile, sizeof(mix[nmix].profile), "%s",
			 tok);
		mix[nmix++].weight = (int)w;
	}
	struct gf_migsim_row rows[GF_MIGSIM_POINTS];
	struct gf_err e;
	if (gf_migsim_run(m, mix, nmix, (int)requests, seed, rows, &e) != 0) {
		gf_cli_error("simulate mig", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	struct gf_buf out;
	gf_buf_init(&out, 1 << 20);
	if (json) {
		struct gf_json j;
		gf_json_init(&j, &out);
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "model", m->id);
		gf_json_arr_begin(&j, "points");
		for (int i = 0; i < GF_MIGSIM_POINTS; i++) {
			gf_json_obj_begin(&j, NULL);
			gf_json_int(&j, "requests", rows[i].requests);
			gf_json_obj_begin(&j, "demand");
			for (int k = 0; k < nmix; k++)
				gf_json_int(&j, mix[k].profile,
					    rows[i].demand[k]);
			gf_json_obj_end(&j);
			if (rows[i].all_1g < 0)
				gf_json_null(&j, "gpus_all_1g");
			else
				gf_json_int(&j, "gpus_all_1g", rows[i].all_1g);
			if (rows[i].all_balanced < 0)
				gf_json_null(&j, "gpus_all_balanced");
			else
				gf_json_int(&j, "gpus_all_balanced",
					    rows[i].all_balanced);
			gf_json_int(&j, "gpus_planned", rows[i].planned);
			gf_json_bool(&j, "planned_optimal",
				     rows[i].planned_optimal);
			gf_json_obj_end(&j);
		}
		gf_json_arr_end(&j);
		gf_json_obj_end(&j);
	} else {
		gf_buf_printf(&out,
			      "MIG on %s: GPUs needed to serve every request "
			      "so far\n\n%-9s %-30s %8s %13s %8s\n",
			      m->id, "requests", "demand", "all-1g",
			      "all-balanced", "planned");
		for (int i = 0; i < GF_MIGSIM_POINTS; i++) {
			char dem[200] = "";
			size_t len = 0;
			for (int k = 0; k < nmix && len < 160; k++)
				len += (size_t)snprintf(
					dem + len, sizeof(dem) - len, "%s%d",
					k ? "/" : "", rows[i].demand[k]);
			char a[16], b[16];
			snprintf(a, sizeof(a), "%d", rows[i].all_1g);
			snprintf(b, sizeof(b), "%d", rows[i].all_balanced);
			gf_buf_printf(&out, "%-9d %-30s %8s %13s %8d%s\n",
				      rows[i].requests, dem,
				      rows[i].all_1g < 0 ? "never" : a,
				      rows[i].all_balanced < 0 ? "never" : b,
				      rows[i].planned,
				      rows[i].planned_optimal ? ""
							      : " (bounded)");
		}
		gf_buf_puts(&out, "\ndemand: requests per profile, in --mix "
				  "order; never: a static layout without a "
				  "profile the\nstream asks for cannot serve "
				  "it on any number of GPUs\n");
	}
	int ret = gf_cli_print(gf_buf_str(&out), out.len);
	gf_buf_release(&out);
	return ret;
}

int cmd_simulate(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? GF_EXIT_USAGE : GF_EXIT_OK;
	}
	if (strcmp(argv[1], "fill") == 0)
		return fill_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "mig") == 0)
		return mig_main(argc - 1, argv + 1);
	gf_cli_error("simulate", "unknown experiment '%s' (known: fill, mig)",
		     argv[1]);
	return GF_EXIT_USAGE;
}
