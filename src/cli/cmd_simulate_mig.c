/*
 * cmd_simulate_mig.c - `gpufleet simulate mig`: a stream of MIG-instance
 * requests served by static layouts (all-1g, all-balanced) and by planned
 * ones; how many GPUs each needs as the stream grows.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/mig.h>

#include "cli/cli.h"
#include "sim/mig_sim.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"

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
		"  --json           machine-readable\n"
		"models:");
	for (int i = 0; i < gf_mig_model_count(); i++)
		fprintf(f, " %s", gf_mig_model_at(i)->id);
	fputs("\n" GF_CLI_EXIT_HELP, f);
}

/* "a100-40gb, a100-80gb, ...": the models --gpu takes. */
static void model_list(char *out, size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < gf_mig_model_count() && len + 24 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? ", " : "", gf_mig_model_at(i)->id);
}

/* "1g.10gb=60,2g.20gb=25" into mix; the count, or -1 (message printed). */
static int parse_mix(const char *mix_s, struct gf_migsim_mix *mix)
{
	int nmix = 0;
	memset(mix, 0, sizeof(*mix) * GF_MIG_MAX_DEMANDS);
	char buf[512], *end;
	if (gf_cli_arg_copy("simulate mig", "--mix", mix_s, buf, sizeof(buf)))
		return -1;
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');
		long w = eq ? strtol(eq + 1, &end, 10) : -1;
		if (!eq || *end || eq[1] == '\0' || w < 0 ||
		    nmix >= GF_MIG_MAX_DEMANDS ||
		    (size_t)(eq - tok) >= sizeof(mix[0].profile)) {
			gf_cli_error("simulate mig",
				     "--mix '%s': cannot parse '%s': expected "
				     "PROFILE=WEIGHT (at most %d)",
				     mix_s, tok, GF_MIG_MAX_DEMANDS);
			return -1;
		}
		*eq = '\0';
		if (gf_fmt(mix[nmix].profile, sizeof(mix[nmix].profile), "%s",
			   tok))
			return -1; /* cannot: its length is checked above */
		mix[nmix++].weight = (int)w;
	}
	return nmix;
}

static void render_json(const struct gf_mig_model *m,
			const struct gf_migsim_mix *mix, int nmix,
			const struct gf_migsim_row *rows, struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "model", m->id);
	gf_json_arr_begin(&j, "points");
	for (int i = 0; i < GF_MIGSIM_POINTS; i++) {
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "requests", rows[i].requests);
		gf_json_obj_begin(&j, "demand");
		for (int k = 0; k < nmix; k++)
			gf_json_int(&j, mix[k].profile, rows[i].demand[k]);
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
		gf_json_bool(&j, "planned_optimal", rows[i].planned_optimal);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
}

static void render_text(const struct gf_mig_model *m, int nmix,
			const struct gf_migsim_row *rows, struct gf_buf *out)
{
	gf_buf_printf(out,
		      "MIG on %s: GPUs needed to serve every request so "
		      "far\n\n%-9s %-30s %8s %13s %8s\n",
		      m->id, "requests", "demand", "all-1g", "all-balanced",
		      "planned");
	for (int i = 0; i < GF_MIGSIM_POINTS; i++) {
		char dem[200] = "";
		size_t len = 0;
		for (int k = 0; k < nmix && len < 160; k++)
			len += (size_t)snprintf(dem + len, sizeof(dem) - len,
						"%s%d", k ? "/" : "",
						rows[i].demand[k]);
		char a[16], b[16];
		gf_note(a, sizeof(a), "%d", rows[i].all_1g);
		gf_note(b, sizeof(b), "%d", rows[i].all_balanced);
		gf_buf_printf(
			out, "%-9d %-30s %8s %13s %8d%s\n", rows[i].requests,
			dem, rows[i].all_1g < 0 ? "never" : a,
			rows[i].all_balanced < 0 ? "never" : b, rows[i].planned,
			rows[i].planned_optimal ? "" : " (bounded)");
	}
	gf_buf_puts(out, "\ndemand: requests per profile, in --mix order; "
			 "never: a static layout without a profile the\n"
			 "stream asks for cannot serve it on any number of "
			 "GPUs\n");
}

int cmd_simulate_mig(int argc, char **argv)
{
	const char *model = NULL, *mix_s = NULL;
	long requests = 200;
	unsigned long long seed = 1;
	bool json = false;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("gpu", &model),
		GF_OPT_STR("mix", &mix_s),
		GF_OPT_NUM("requests", &requests, 4, GF_MIG_MAX_GPUS,
			   "a number"),
		GF_OPT_NUM("seed", &seed, 0, 0, "a seed"),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS("simulate mig", argc, argv, opts, mig_usage);
	args.no_args = true;
	args.json = &json;
	(void)gf_cli_options(&args);
	if (args.rc >= 0)
		return args.rc;
	if (!model || !mix_s) {
		gf_cli_error("simulate mig",
			     "--gpu and --mix are required "
			     "(see 'gpufleet simulate mig -h')");
		return GF_EXIT_USAGE;
	}
	const struct gf_mig_model *m = gf_mig_model_by_id(model);
	if (!m) {
		char known[400];
		model_list(known, sizeof(known));
		gf_cli_error("simulate mig",
			     "--gpu '%s': not a MIG model gpufleet knows "
			     "(known: %s)",
			     model, known);
		return GF_EXIT_USAGE;
	}
	struct gf_migsim_mix mix[GF_MIG_MAX_DEMANDS];
	int nmix = parse_mix(mix_s, mix);
	if (nmix < 0)
		return GF_EXIT_USAGE;
	struct gf_migsim_row rows[GF_MIGSIM_POINTS];
	struct gf_err e;
	if (gf_migsim_run(m, mix, nmix, (int)requests, seed, rows, &e) != 0) {
		gf_cli_error("simulate mig", "--mix '%s': %s", mix_s, e.msg);
		return GF_EXIT_FAIL;
	}
	for (int i = 0; i < GF_MIGSIM_POINTS; i++)
		gf_log(GF_LOG_DEBUG, "mig",
		       "simulate: %d requests: all-1g %d, all-balanced %d, "
		       "planned %d GPUs (%s, %.1f ms)",
		       rows[i].requests, rows[i].all_1g, rows[i].all_balanced,
		       rows[i].planned,
		       rows[i].planned_optimal ? "proved" : "bounded",
		       rows[i].plan_ms);
	struct gf_buf out;
	gf_buf_init(&out, 1 << 20);
	if (json)
		render_json(m, mix, nmix, rows, &out);
	else
		render_text(m, nmix, rows, &out);
	int ret = gf_cli_print_buf("simulate mig", 0, &out);
	gf_buf_release(&out);
	return ret;
}
