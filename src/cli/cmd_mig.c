/*
 * cmd_mig.c - `gpufleet mig plan|validate|apply`.
 *
 * Messages on stderr start with "gpufleet mig <subcommand>:" and name the
 * input (the option and its value, FILE:LINE) before the cause.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/mig_plan.h>

#include "cli/cli.h"
#include "cli/mig_cli.h"
#include "mig/apply.h"
#include "mig/current.h"
#include "mig/migparted.h"
#include "mig/render.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define OUT_CAP (16u << 20)

static void models_list(FILE *f)
{
	for (int i = 0; i < gf_mig_model_count(); i++)
		fprintf(f, " %s", gf_mig_model_at(i)->id);
}

static void plan_help(FILE *f)
{
	fprintf(f,
		"usage: gpufleet mig plan --gpus MODEL:N[,MODEL:N] --demand "
		"PROFILE=N[,...]\n"
		"                         [--current FILE] [--fill] "
		"[--json | --yaml] [--name CONFIG]\n"
		"\n"
		"Choose MIG layouts that serve the demand on the fewest GPUs, "
		"moving no busy\ninstance and changing the fewest GPUs; the "
		"most demand first when it does not\nall fit, counted in "
		"units: each instance counts its profile's memory slices on\n"
		"the model that defines the name (the same wherever it "
		"lands).  A plan creates\nthe instances demanded, no more.\n"
		"  --gpus      models:");
	models_list(f);
	fprintf(f,
		"\n"
		"  --demand    instances wanted, e.g. 1g.10gb=20,3g.40gb=4\n"
		"  --current   the layouts there now: one line per GPU, "
		"\"INDEX: PROFILE@START[*] ...\"\n"
		"              ('*' marks a busy instance: never moved)\n"
		"  --fill      then fill each used GPU's free room with more "
		"demanded instances\n"
		"              (shown as such: '+' in text, \"fill\" in JSON, "
		"a comment in YAML)\n"
		"  --json      per GPU its instances (profile, start) and the "
		"totals\n"
		"  --yaml      a config nvidia-mig-parted accepts (named by "
		"--name, default\n"
		"              gpufleet-plan)\n");
}

static void validate_help(FILE *f)
{
	fprintf(f,
		"usage: gpufleet mig validate FILE\n"
		"\n"
		"Check a mig-parted file (or a GPU Operator ConfigMap holding "
		"one): schema, and\nevery config against the MIG rules of the "
		"GPUs it names; a profile no GPU has\nis an error.  Problems "
		"on stderr as FILE:LINE: error|warning|note: ...\n");
}

static void apply_help(FILE *f)
{
	fprintf(f,
		"usage: gpufleet mig apply FILE CONFIG [--dry-run "
		"[--gpus MODEL:N[,...] [--current FILE]]]\n"
		"\n"
		"Make this machine's GPUs hold exactly CONFIG of FILE through "
		"NVML: enable MIG\nwhere needed, destroy idle instances not in "
		"it, create the rest with explicit\nplacements, verify; never "
		"touches a busy instance.\n"
		"  --dry-run   list the NVML calls it would make\n"
		"  --gpus      with --dry-run, no NVML: these GPUs instead "
		"(idle, MIG off)\n"
		"  --current   with --gpus: what they hold now, as for 'mig "
		"plan --current'\n"
		"              (a GPU listed there has MIG on)\n");
}

void gf_cli_mig_usage(FILE *f)
{
	fprintf(f, "usage: gpufleet mig plan|validate|apply|proposal ...\n\n");
	plan_help(f);
	fputc('\n', f);
	validate_help(f);
	fputc('\n', f);
	apply_help(f);
	fputc('\n', f);
	gf_mig_proposal_help(f);
	fputs(GF_CLI_EXIT_HELP, f);
}

/* -h of one subcommand: its part of the usage, and the exit statuses */
static void plan_usage(FILE *f)
{
	plan_help(f);
	fputs(GF_CLI_EXIT_HELP, f);
}

static void apply_usage(FILE *f)
{
	apply_help(f);
	fputs(GF_CLI_EXIT_HELP, f);
}

static int parse_gpus(const char *cmd, const char *s, struct gf_mig_gpu **out,
		      int *n)
{
	char buf[1024];
	*n = 0;
	*out = NULL;
	if (gf_cli_arg_copy(cmd, "--gpus", s, buf, sizeof(buf)))
		return -1;
	for (char *tok = buf, *next; tok && *tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		char *colon = strchr(tok, ':');
		long count = 1;
		if (colon) {
			*colon = '\0';
			char *end;
			count = strtol(colon + 1, &end, 10);
			if (*end || colon[1] == '\0' || count < 1 ||
			    count > GF_MIG_MAX_GPUS) {
				gf_cli_error(cmd,
					     "--gpus '%s': count '%s' of %s "
					     "must be 1 to %d",
					     s, colon + 1, tok,
					     GF_MIG_MAX_GPUS);
				goto fail;
			}
		}
		const struct gf_mig_model *m = gf_mig_model_by_id(tok);
		if (!m) {
			fprintf(stderr,
				"gpufleet %s: --gpus '%s': '%s' is not a MIG "
				"model gpufleet knows (known:",
				cmd, s, tok);
			models_list(stderr);
			fputs(")\n", stderr);
			goto fail;
		}
		if (*n + count > GF_MIG_MAX_GPUS) {
			gf_cli_error(cmd, "--gpus '%s': more than %d GPUs", s,
				     GF_MIG_MAX_GPUS);
			goto fail;
		}
		*out = gf_reallocarray(*out, (size_t)(*n + count),
				       sizeof(**out));
		for (long i = 0; i < count; i++) {
			memset(&(*out)[*n], 0, sizeof(**out));
			(*out)[(*n)++].model = m;
		}
	}
	if (*n == 0) {
		gf_cli_error(cmd, "--gpus '%s' names no GPU", s);
		goto fail;
	}
	return 0;
fail:
	gf_free(*out);
	*n = 0;
	return -1;
}

static int parse_demand(const char *s, struct gf_mig_demand *d, int *n)
{
	char buf[1024];
	*n = 0;
	if (gf_cli_arg_copy("mig plan", "--demand", s, buf, sizeof(buf)))
		return -1;
	for (char *tok = buf, *next; tok && *tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		char whole[1024];
		gf_note(whole, sizeof(whole), "%s", tok); /* for messages */
		char *eq = strchr(tok, '=');
		if (!eq) {
			gf_cli_error("mig plan",
				     "--demand '%s': expected PROFILE=COUNT "
				     "like 1g.10gb=20",
				     whole);
			return -1;
		}
		*eq = '\0';
		char *end;
		errno = 0;
		long c = strtol(eq + 1, &end, 10);
		if (eq[1] == '\0' || *end || errno || c < 0 || c > 1000000) {
			gf_cli_error("mig plan",
				     "--demand '%s': count '%s' is not a "
				     "number from 0 to 1000000",
				     whole, eq + 1);
			return -1;
		}
		if (!gf_mig_profile_name_ok(tok) ||
		    strlen(tok) >= sizeof(d[0].profile)) {
			gf_cli_error("mig plan",
				     "--demand '%s': '%s' is not a MIG "
				     "profile name (like 1g.10gb or 3g.40gb)",
				     whole, tok);
			return -1;
		}
		int k;
		for (k = 0; k < *n; k++)
			if (!strcmp(d[k].profile, tok))
				break;
		if (k == *n) {
			if (*n >= GF_MIG_MAX_DEMANDS) {
				gf_cli_error("mig plan",
					     "--demand '%s': more than %d "
					     "profiles",
					     s, GF_MIG_MAX_DEMANDS);
				return -1;
			}
			/* length checked above */
			memcpy(d[k].profile, tok, strlen(tok) + 1);
			d[k].count = 0;
			(*n)++;
		}
		d[k].count += (int)c;
	}
	if (*n == 0) {
		gf_cli_error("mig plan", "--demand '%s' names no profile", s);
		return -1;
	}
	return 0;
}

/* --current FILE (mig/current.h): 0, or -1 with the message printed. */
static int read_current(const char *cmd, const char *path, struct gf_mig_gpu *g,
			int n, bool *listed)
{
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_mig_current_read(path, g, n, listed, &e) != 0) {
		gf_cli_error(cmd, "--current: %s", e.msg);
		return -1;
	}
	return 0;
}

static void log_plan(const struct gf_mig_plan *p, int ngpus, int nd)
{
	gf_log(GF_LOG_DEBUG, "mig",
	       "plan: %d GPUs in %d groups, %d demands, %d patterns; "
	       "integer program %d columns x %d rows",
	       ngpus, p->ngroups, nd, p->npatterns, p->ncols, p->nrows);
	gf_log(GF_LOG_DEBUG, "mig",
	       "plan: solved in %.1f ms (served %.1f ms %s, GPUs %.1f ms %s, "
	       "unchanged %.1f ms %s); served %ld of %ld units, bound %.0f; "
	       "%d GPUs used, bound %.0f",
	       p->solve_ms, p->stage_ms[0], p->proved[0] ? "proved" : "open",
	       p->stage_ms[1], p->proved[1] ? "proved" : "open", p->stage_ms[2],
	       p->proved[2] ? "proved" : "open", p->served_units,
	       p->demand_units, p->bound_units, p->used_gpus, p->bound_gpus);
}

int cmd_mig_plan(int argc, char **argv)
{
	const char *gpus_s = NULL, *demand_s = NULL, *current = NULL;
	const char *name = "gpufleet-plan";
	bool json = false, yaml = false;
	struct gf_mig_plan_opts po = { .fill = false, .clock_ms = gf_clock_ms };
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("gpus", &gpus_s),
		GF_OPT_STR("demand", &demand_s),
		GF_OPT_STR("current", &current),
		GF_OPT_FLAG("fill", &po.fill),
		GF_OPT_FLAG("yaml", &yaml),
		GF_OPT_STR("name", &name),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS("mig plan", argc, argv, opts, plan_usage);
	args.no_args = true;
	args.json = &json;
	if (gf_cli_options(&args) >= 0)
		return args.rc;
	if (!gpus_s || !demand_s) {
		gf_cli_error("mig plan", "--gpus and --demand are required");
		return GF_EXIT_USAGE;
	}
	if (json && yaml) {
		gf_cli_error("mig plan",
			     "--json and --yaml exclude each other");
		return GF_EXIT_USAGE;
	}
	struct gf_mig_gpu *gpus = NULL;
	struct gf_mig_demand d[GF_MIG_MAX_DEMANDS];
	int ngpus, nd, ret = GF_EXIT_FAIL;
	if (parse_gpus("mig plan", gpus_s, &gpus, &ngpus) ||
	    parse_demand(demand_s, d, &nd)) {
		gf_free(gpus);
		return GF_EXIT_USAGE;
	}
	struct gf_mig_plan p;
	struct gf_err e;
	struct gf_buf out;
	gf_buf_init(&out, OUT_CAP);
	if (current && read_current("mig plan", current, gpus, ngpus, NULL))
		goto out;
	int prc = gf_mig_plan_with(gpus, ngpus, d, nd, &po, &p, &e);
	if (prc == GF_EINVAL) {
		gf_cli_error("mig plan", "--demand '%s': %s", demand_s, e.msg);
		goto out;
	} else if (prc) {
		gf_cli_error("mig plan", "%s", e.msg);
		goto out;
	}
	log_plan(&p, ngpus, nd);
	int rc = json	? gf_mig_render_json(gpus, d, &p, &out)
		 : yaml ? gf_mig_render_yaml(gpus, d, &p, name, &out)
			: gf_mig_render_text(gpus, d, &p, &out);
	gf_mig_plan_release(&p);
	if (rc == 0)
		ret = gf_cli_print(gf_buf_str(&out), out.len);
	else
		gf_cli_error("mig plan", "output larger than %u bytes",
			     OUT_CAP);
out:
	gf_buf_release(&out);
	gf_free(gpus);
	return ret;
}

/* Each line of buf on stderr, after "gpufleet CMD: ". */
static void prefixed(const char *cmd, const char *buf)
{
	while (*buf) {
		const char *nl = strchr(buf, '\n');
		int len = nl ? (int)(nl - buf) : (int)strlen(buf);
		fprintf(stderr, "gpufleet %s: %.*s\n", cmd, len, buf);
		buf += len + (nl != NULL);
	}
}

int cmd_mig_validate(int argc, char **argv)
{
	if (argc == 2 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		validate_help(stdout);
		fputs(GF_CLI_EXIT_HELP, stdout);
		return GF_EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		if (argc == 2)
			gf_cli_error("mig validate",
				     "option '%s' is unknown (see 'gpufleet "
				     "mig validate -h')",
				     argv[1]);
		else
			gf_cli_error("mig validate",
				     "expected one FILE, got %d arguments",
				     argc - 1);
		return GF_EXIT_USAGE;
	}
	struct gf_mp_file f;
	struct gf_err e;
	if (gf_mp_read(argv[1], &f, &e) != 0) {
		gf_cli_error("mig validate", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	struct gf_buf out;
	gf_buf_init(&out, OUT_CAP);
	int warnings, errors = gf_mp_validate(&f, &out, &warnings);
	int entries = 0;
	for (int i = 0; i < f.n; i++)
		entries += f.configs[i].n;
	prefixed("mig validate", gf_buf_str(&out));
	printf("%s: %d configs, %d entries: %s (%d error%s, %d warning%s)\n",
	       argv[1], f.n, entries, errors ? "invalid" : "valid", errors,
	       errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
	gf_buf_release(&out);
	gf_mp_release(&f);
	return errors ? GF_EXIT_FAIL : GF_EXIT_OK;
}

int cmd_mig_apply(int argc, char **argv)
{
	bool dry = false;
	const char *gpus_s = NULL, *current = NULL;
	const struct gf_cli_opt opts[] = {
		GF_OPT_FLAG("dry-run", &dry),
		GF_OPT_STR("gpus", &gpus_s),
		GF_OPT_STR("current", &current),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS("mig apply", argc, argv, opts, apply_usage);
	if (gf_cli_options(&args) >= 0)
		return args.rc;
	if (argc - optind != 2) {
		gf_cli_error("mig apply",
			     "expected FILE and CONFIG, got %d "
			     "arguments",
			     argc - optind);
		return GF_EXIT_USAGE;
	}
	if ((gpus_s || current) && !dry) {
		gf_cli_error("mig apply",
			     "%s describes GPUs for --dry-run only: a real "
			     "apply reads them from NVML",
			     gpus_s ? "--gpus" : "--current");
		return GF_EXIT_USAGE;
	}
	if (current && !gpus_s) {
		gf_cli_error("mig apply",
			     "--current '%s' needs --gpus MODEL:N (the file "
			     "names GPU indexes, not models)",
			     current);
		return GF_EXIT_USAGE;
	}
	const char *path = argv[optind], *config = argv[optind + 1];
	struct gf_mig_gpu *gpus = NULL;
	bool *mig_on = NULL;
	int ngpus = 0;
	if (gpus_s && parse_gpus("mig apply", gpus_s, &gpus, &ngpus))
		return GF_EXIT_USAGE;
	int ret = GF_EXIT_FAIL;
	if (gpus) {
		mig_on = gf_calloc((size_t)ngpus, sizeof(*mig_on));
		if (current &&
		    read_current("mig apply", current, gpus, ngpus, mig_on)) {
			gf_free(mig_on);
			gf_free(gpus);
			return GF_EXIT_FAIL;
		}
	}
	struct gf_mp_file f;
	struct gf_err e;
	if (gf_mp_read(path, &f, &e) != 0) {
		gf_cli_error("mig apply", "%s", e.msg);
		goto out_gpus;
	}
	const struct gf_mp_config *cfg = gf_mp_find(&f, config);
	if (!cfg) {
		gf_cli_error("mig apply", "'%s' has no config '%s'", path,
			     config);
		goto out;
	}
	struct gf_buf log;
	gf_buf_init(&log, OUT_CAP);
	int rc = gpus ? gf_mig_apply_offline(cfg, gpus, mig_on, ngpus, &log, &e)
		      : gf_mig_apply(cfg, dry, &log, &e);
	fputs(gf_buf_str(&log), stdout);
	gf_buf_release(&log);
	if (rc == GF_ENOTFOUND && !gpus)
		gf_cli_error("mig apply",
			     "%s (without NVML, --dry-run --gpus MODEL:N lists "
			     "the calls for GPUs you describe)",
			     e.msg);
	else if (rc != 0)
		gf_cli_error("mig apply", "%s", e.msg);
	else
		ret = GF_EXIT_OK;
out:
	gf_mp_release(&f);
out_gpus:
	gf_free(mig_on);
	gf_free(gpus);
	return ret;
}
