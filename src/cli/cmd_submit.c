/*
 * cmd_submit.c - `gpufleet submit`: a job to the controller, as sbatch
 * does: options for what one replica needs, the command after --.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/job.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/fmt.h"
#include "util/mem.h"

#define CMD "submit"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet submit [--name N] [--team T] [--class C] "
		"[--replicas N]\n"
		"                       [--gpus N [--gpu-model M] | "
		"--gpu-milli N | --mig PROFILE]\n"
		"                       [--cpu-milli N] [--memory-mib N] "
		"[--selector k=v]...\n"
		"                       [--max-runtime SECONDS] [--server URL] "
		"[--token-file F]\n"
		"                       [--json] [-- COMMAND...]\n"
		"\n"
		"Submit a job; print its id and state.  Per replica it asks "
		"for --gpus whole\nGPUs, or --gpu-milli of one GPU (1-1000), "
		"or one --mig instance.  --replicas\nN > 1 is a gang: all or "
		"none, inside one block.\n\n"
		"  --name N            a name for people (default: the "
		"command's first word)\n"
		"  --team T            (default: the token's team, else "
		"'default')\n"
		"  --class C           inference, training, batch... (default "
		"batch)\n"
		"  --selector k=v      run only on nodes with that label "
		"(repeatable)\n"
		"  --max-runtime S     seconds before the job is failed; also "
		"lets it backfill\n" CONN_HELP GF_CLI_EXIT_HELP);
}

struct body {
	struct gf_buf b;
	struct gf_json j;
	char selector[GF_SELECTOR_MAX];
	bool name;
};

/* A numeric option into the body; 0 or GF_EXIT_USAGE. */
static int num_opt(struct body *x, const char *key, const char *opt,
		   const char *arg, long long max)
{
	char *end;
	long long v = strtoll(arg, &end, 10);
	if (*arg == '\0' || *end || v < 0 || v > max) {
		gf_cli_error(CMD, "cannot parse '--%s %s': expected 0 to %lld",
			     opt, arg, max);
		return GF_EXIT_USAGE;
	}
	gf_json_int(&x->j, key, v);
	return 0;
}

static int option(int c, struct body *x)
{
	size_t len;
	switch (c) {
	case 'n':
		x->name = true;
		gf_json_str(&x->j, "name", optarg);
		return 0;
	case 't':
		gf_json_str(&x->j, "team", optarg);
		return 0;
	case 'c':
		gf_json_str(&x->j, "class", optarg);
		return 0;
	case 'r':
		return num_opt(x, "replicas", "replicas", optarg, 1024);
	case 'g':
		return num_opt(x, "gpus", "gpus", optarg, 16);
	case 'M':
		gf_json_str(&x->j, "gpu_model", optarg);
		return 0;
	case 'm':
		return num_opt(x, "gpu_milli", "gpu-milli", optarg, 1000);
	case 'i':
		gf_json_str(&x->j, "mig_profile", optarg);
		return 0;
	case 'C':
		return num_opt(x, "cpu_milli", "cpu-milli", optarg, 100000000);
	case 'G':
		return num_opt(x, "memory_mib", "memory-mib", optarg,
			       1LL << 40);
	case 'x':
		return num_opt(x, "max_runtime_s", "max-runtime", optarg,
			       100LL * 365 * 86400);
	case 's':
		len = strlen(x->selector);
		if (!strchr(optarg, '=') ||
		    len + strlen(optarg) + 2 > sizeof(x->selector)) {
			gf_cli_error(CMD,
				     "cannot parse '--selector %s': expected "
				     "LABEL=VALUE",
				     optarg);
			return GF_EXIT_USAGE;
		}
		/* its length was checked above */
		if (gf_fmt(x->selector + len, sizeof(x->selector) - len, "%s%s",
			   len ? "," : "", optarg))
			return GF_EXIT_USAGE;
		return 0;
	default: /* cannot: the table has no other */
		return 0;
	}
}

/* "ID STATE" of the job the server took */
static void accepted(const struct gf_jv *v, const void *arg)
{
	(void)arg;
	printf("%s %s\n", gf_remote_str(v, "id"), gf_remote_str(v, "state"));
}

/* The selector and the command close the body. */
static void finish(struct body *x, int argc, char **argv)
{
	if (x->selector[0]) {
		gf_json_obj_begin(&x->j, "node_selector");
		char *save = NULL;
		for (char *kv = strtok_r(x->selector, ",", &save); kv;
		     kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			*eq = '\0';
			gf_json_str(&x->j, kv, eq + 1);
		}
		gf_json_obj_end(&x->j);
	}
	if (optind < argc) {
		struct gf_buf cmd;
		gf_buf_init(&cmd, GF_JOB_CMD_MAX);
		for (int i = optind; i < argc; i++)
			gf_buf_printf(&cmd, "%s%s", i > optind ? " " : "",
				      argv[i]);
		gf_json_str(&x->j, "command", gf_buf_str(&cmd));
		if (!x->name)
			gf_json_str(&x->j, "name", argv[optind]);
		gf_buf_release(&cmd);
	}
	gf_json_obj_end(&x->j);
}

int cmd_submit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "team", required_argument, NULL, 't' },
		{ "class", required_argument, NULL, 'c' },
		{ "replicas", required_argument, NULL, 'r' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "gpu-model", required_argument, NULL, 'M' },
		{ "gpu-milli", required_argument, NULL, 'm' },
		{ "mig", required_argument, NULL, 'i' },
		{ "cpu-milli", required_argument, NULL, 'C' },
		{ "memory-mib", required_argument, NULL, 'G' },
		{ "selector", required_argument, NULL, 's' },
		{ "max-runtime", required_argument, NULL, 'x' },
		CONN_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct gf_remote r = { .cmd = CMD };
	struct body x = { .name = false };
	gf_buf_init(&x.b, 64u << 10);
	gf_json_init(&x.j, &x.b);
	gf_json_obj_begin(&x.j, NULL);
	int c, rc = 0;
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.shortopts = "+h";
	args.remote = &r;
	while (rc == 0 && (c = gf_cli_next(&args)) != -1)
		rc = option(c, &x);
	if (rc == 0 && args.rc < 0)
		rc = gf_remote_setup(&r);
	else if (rc == 0)
		rc = args.rc; /* -h answered (0), or a bad option said */
	if (rc || args.rc >= 0) {
		gf_buf_release(&x.b);
		return rc;
	}
	finish(&x, argc, argv);
	rc = gf_remote_show(&r, GF_HTTP_POST, "/v1/jobs", gf_buf_str(&x.b),
			    accepted, NULL);
	gf_buf_release(&x.b);
	return rc;
}
