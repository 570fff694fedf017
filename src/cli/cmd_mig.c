/*
 * cmd_mig.c - `gpufleet mig plan|validate|apply`.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/mig_plan.h>

#include "../mig/apply.h"
#include "../mig/migparted.h"
#include "../mig/render.h"
#include "../util/file.h"
#include "../util/mem.h"
#include "cli.h"

#define OUT_CAP (16u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet mig plan --gpus MODEL:N[,MODEL:N] --demand "
		"PROFILE=N[,...]\n"
		"                         [--current FILE] [--json | --yaml] "
		"[--name CONFIG]\n"
		"       gpufleet mig validate FILE\n"
		"       gpufleet mig apply FILE CONFIG [--dry-run]\n"
		"\n"
		"plan      choose MIG layouts that serve the demand (in memory "
		"slices) on the\n"
		"          fewest GPUs, moving no busy instance and changing "
		"the fewest GPUs\n"
		"  --gpus      models:");
	for (int i = 0; i < gf_mig_model_count(); i++)
		fprintf(f, " %s", gf_mig_model_at(i)->id);
	fprintf(f,
		"\n"
		"  --demand    instances wanted, e.g. 1g.10gb=20,3g.40gb=4\n"
		"  --current   the layouts there now: one line per GPU, "
		"\"INDEX: PROFILE@START[*] ...\"\n"
		"              ('*' marks a busy instance: never moved)\n"
		"  --json      per GPU its instances (profile, start) and the "
		"totals\n"
		"  --yaml      a config nvidia-mig-parted accepts (named by "
		"--name, default\n"
		"              gpufleet-plan)\n"
		"validate  check a mig-parted file: schema, and every config "
		"against the MIG\n"
		"          rules of the GPUs it names; errors as file:line\n"
		"apply     make this machine's GPUs match CONFIG of FILE through "
		"NVML: enable\n"
		"          MIG where needed, destroy idle instances not in the "
		"plan, create the\n"
		"          rest with explicit placements, verify; never touches "
		"a busy instance\n"
		"  --dry-run   list the NVML calls it would make\n"
		"\nexit status: 0 ok, 1 failure (invalid file, NVML error), 2 "
		"usage\n");
}

static int parse_gpus(const char *s, struct gf_mig_gpu **out, int *n)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	*out = NULL;
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
			if (*end || count < 1 || count > GF_MIG_MAX_GPUS) {
				gf_cli_error("mig",
					     "cannot parse '--gpus %s': "
					     "count must be 1 to %d",
					     s, GF_MIG_MAX_GPUS);
				return -1;
			}
		}
		const struct gf_mig_model *m = gf_mig_model_by_id(tok);
		if (!m) {
			gf_cli_error("mig",
				     "unknown or non-MIG GPU model '%s' (see "
				     "'gpufleet mig -h')",
				     tok);
			return -1;
		}
		if (*n + count > GF_MIG_MAX_GPUS) {
			gf_cli_error("mig", "more than %d GPUs",
				     GF_MIG_MAX_GPUS);
			return -1;
		}
		*out = gf_reallocarray(*out, (size_t)(*n + count),
				       sizeof(**out));
		for (long i = 0; i < count; i++) {
			memset(&(*out)[*n], 0, sizeof(**out));
			(*out)[(*n)++].model = m;
		}
	}
	if (*n == 0) {
		gf_cli_error("mig", "--gpus names no GPU");
		return -1;
	}
	return 0;
}

static int parse_demand(const char *s, struct gf_mig_demand *d, int *n)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (char *tok = buf, *next; tok && *tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		char *eq = strchr(tok, '=');
		char *end = NULL;
		long c = eq ? strtol(eq + 1, &end, 10) : -1;
		if (eq)
			*eq = '\0';
		if (!eq || *end || c < 0 || c > 1000000 ||
		    !gf_mig_profile_name_ok(tok) ||
		    strlen(tok) >= sizeof(d[0].profile)) {
			gf_cli_error("mig",
				     "cannot parse demand '%s': expected "
				     "PROFILE=COUNT like 1g.10gb=20",
				     tok);
			return -1;
		}
		int k;
		for (k = 0; k < *n; k++)
			if (!strcmp(d[k].profile, tok))
				break;
		if (k == *n) {
			if (*n >= GF_MIG_MAX_DEMANDS) {
				gf_cli_error("mig", "more than %d demands",
					     GF_MIG_MAX_DEMANDS);
				return -1;
			}
			/* length checked above */
			memcpy(d[k].profile, tok, strlen(tok) + 1);
			d[k].count = 0;
			(*n)++;
		}
		d[k].count += (int)c;
	}
	return 0;
}

/* "INDEX: PROFILE@START[*] ..." per line; '#' comments. */
static int read_current(const char *path, struct gf_mig_gpu *g, int n)
{
	struct gf_err e;
	FILE *f = gf_file_open(path, "r", 1u << 20, &e);
	if (!f) {
		gf_cli_error("mig plan", "%s", e.msg);
		return -1;
	}
	char line[1024];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '\n')
			continue;
		char *end;
		long idx = strtol(p, &end, 10);
		if (end == p || *end != ':' || idx < 0 || idx >= n) {
			gf_cli_error("mig",
				     "%s:%d: expected 'INDEX: PROFILE@START "
				     "...' with INDEX 0..%d",
				     path, lineno, n - 1);
			rc = -1;
			break;
		}
		struct gf_mig_gpu *gpu = &g[idx];
		gpu->current.n = 0;
		for (char *t = strtok(end + 1, " \t\n"); t;
		     t = strtok(NULL, " \t\n")) {
			char *at = strchr(t, '@');
			bool busy = t[strlen(t) - 1] == '*';
			if (busy)
				t[strlen(t) - 1] = '\0';
			long start = at ? strtol(at + 1, &end, 10) : -1;
			if (at)
				*at = '\0';
			int pi = gf_mig_profile_find(gpu->model, t);
			if (!at || *end || start < 0 || start > 7 || pi < 0 ||
			    gpu->current.n >= GF_MIG_MAX_INSTANCES) {
				gf_cli_error("mig",
					     "%s:%d: '%s' is not PROFILE@START "
					     "of a %s profile",
					     path, lineno, t, gpu->model->id);
				rc = -1;
				break;
			}
			gpu->current.inst[gpu->current.n++] =
				(struct gf_mig_instance){ (uint8_t)pi,
							  (uint8_t)start,
							  busy };
		}
		char msg[160];
		if (rc == 0 && gf_mig_layout_check(gpu->model, &gpu->current,
						   msg, sizeof(msg))) {
			gf_cli_error("mig", "%s:%d: GPU %ld: %s", path, lineno,
				     idx, msg);
			rc = -1;
		}
	}
	fclose(f);
	return rc;
}

static int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpus", required_argument, NULL, 'g' },
		{ "demand", required_argument, NULL, 'd' },
		{ "current", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "yaml", no_argument, NULL, 'y' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *gpus_s = NULL, *demand_s = NULL, *current = NULL;
	const char *name = "gpufleet-plan";
	bool json = false, yaml = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			gpus_s = optarg;
			break;
		case 'd':
			demand_s = optarg;
			break;
		case 'c':
			current = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'y':
			yaml = true;
			break;
		case 'n':
			name = optarg;
			break;
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			return gf_cli_bad_option("mig plan", argv);
		}
	}
	if (!gpus_s || !demand_s || optind < argc || (json && yaml)) {
		gf_cli_error("mig plan",
			     "--gpus and --demand are required; "
			     "--json and --yaml exclude each other");
		return GF_EXIT_USAGE;
	}
	struct gf_mig_gpu *gpus = NULL;
	struct gf_mig_demand d[GF_MIG_MAX_DEMANDS];
	int ngpus, nd, ret = GF_EXIT_FAIL;
	if (parse_gpus(gpus_s, &gpus, &ngpus) ||
	    parse_demand(demand_s, d, &nd)) {
		gf_free(gpus);
		return GF_EXIT_USAGE;
	}
	struct gf_mig_plan p;
	struct gf_err e;
	struct gf_buf out;
	gf_buf_init(&out, OUT_CAP);
	if (current && read_current(current, gpus, ngpus) != 0)
		goto out;
	if (gf_mig_plan(gpus, ngpus, d, nd, &p, &e) != 0) {
		gf_cli_error("mig plan", "%s", e.msg);
		goto out;
	}
	int rc = json	? gf_mig_render_json(gpus, d, &p, &out)
		 : yaml ? gf_mig_render_yaml(gpus, &p, name, &out)
			: gf_mig_render_text(gpus, d, &p, &out);
	gf_mig_plan_release(&p);
	if (rc == 0)
		ret = gf_cli_print(gf_buf_str(&out), out.len);
out:
	gf_buf_release(&out);
	gf_free(gpus);
	return ret;
}

static int cmd_validate(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		if (argc == 2 &&
		    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			usage(stdout);
			return GF_EXIT_OK;
		}
		gf_cli_error("mig validate", "expected one FILE");
		return GF_EXIT_USAGE;
	}
	struct gf_mp_file f;
	struct gf_err e;
	if (gf_mp_read(argv[1], &f, &e) != 0) {
		fprintf(stderr, "%s\n", e.msg);
		return GF_EXIT_FAIL;
	}
	struct gf_buf out;
	gf_buf_init(&out, OUT_CAP);
	int warnings, errors = gf_mp_validate(&f, &out, &warnings);
	int entries = 0;
	for (int i = 0; i < f.n; i++)
		entries += f.configs[i].n;
	fputs(gf_buf_str(&out), stderr);
	printf("%s: %d configs, %d entries: %s (%d error%s, %d warning%s)\n",
	       argv[1], f.n, entries, errors ? "invalid" : "valid", errors,
	       errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
	gf_buf_release(&out);
	gf_mp_release(&f);
	return errors ? GF_EXIT_FAIL : GF_EXIT_OK;
}

static int cmd_apply(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool dry = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'n')
			dry = true;
		else if (c == 'h') {
			usage(stdout);
			return GF_EXIT_OK;
		} else
			return gf_cli_bad_option("mig apply", argv);
	}
	if (argc - optind != 2) {
		gf_cli_error("mig apply", "expected FILE and CONFIG");
		return GF_EXIT_USAGE;
	}
	const char *path = argv[optind], *config = argv[optind + 1];
	struct gf_mp_file f;
	struct gf_err e;
	if (gf_mp_read(path, &f, &e) != 0) {
		fprintf(stderr, "%s\n", e.msg);
		return GF_EXIT_FAIL;
	}
	const struct gf_mp_config *cfg = gf_mp_find(&f, config);
	int ret = GF_EXIT_FAIL;
	if (!cfg) {
		gf_cli_error("mig apply", "'%s' has no config '%s'", path,
			     config);
		goto out;
	}
	struct gf_buf log;
	gf_buf_init(&log, OUT_CAP);
	int rc = gf_mig_apply(cfg, dry, &log, &e);
	fputs(gf_buf_str(&log), stdout);
	gf_buf_release(&log);
	if (rc != 0)
		gf_cli_error("mig apply", "%s", e.msg);
	else
		ret = GF_EXIT_OK;
out:
	gf_mp_release(&f);
	return ret;
}

int cmd_mig(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? GF_EXIT_USAGE : GF_EXIT_OK;
	}
	if (!strcmp(argv[1], "plan"))
		return cmd_plan(argc - 1, argv + 1);
	if (!strcmp(argv[1], "validate"))
		return cmd_validate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "apply"))
		return cmd_apply(argc - 1, argv + 1);
	gf_cli_error("mig", "unknown subcommand '%s' (plan, validate, apply)",
		     argv[1]);
	return GF_EXIT_USAGE;
}
