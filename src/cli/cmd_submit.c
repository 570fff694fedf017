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
		"                       [--max-runtime SECONDS] [--output PATH] "
		"[--error PATH]\n"
		"                       [--array SPEC] [--dependency DEP] "
		"[--hold]\n"
		"                       [--server URL] [--token-file F]\n"
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
		"lets it backfill\n"
		"  --output PATH       its stdout (and stderr) to PATH on the "
		"node, absolute;\n"
		"                      %%j job id, %%r replica, %%a attempt, "
		"%%n node\n"
		"  --error PATH        its stderr to PATH on the node (the same "
		"tokens)\n"
		"  --array SPEC        an array of tasks: 0-31, 0-31:2 (a step), "
		"1,3,5-7;\n"
		"                      %%N runs at most N at once (0-31%%4)\n"
		"  --dependency DEP    wait for jobs: afterok:ID[:ID],"
		"afterany:ID,afternotok:ID\n"
		"  --hold              submit held: it waits until 'gpufleet "
		"release'\n" CONN_HELP GF_CLI_EXIT_HELP);
}

/* What the options ask for; a number -1 when not given. */
struct body {
	const char *name, *team, *cls, *gpu_model, *mig;
	const char *output, *error; /* logs: --output, --error */
	long long replicas, gpus, gpu_milli, cpu_milli, memory_mib, max_runtime;
	char selector[GF_SELECTOR_MAX];
	const char *array, *dependency; /* issue 21: arrays, dependencies, */
	bool hold;			/* holds */
};

/* --selector k=v, one more: 0, or GF_EXIT_USAGE (said). */
static int add_selector(struct gf_cli_args *args, struct body *x)
{
	size_t len = strlen(x->selector);
	if (!strchr(optarg, '=') ||
	    len + strlen(optarg) + 2 > sizeof(x->selector))
		return gf_cli_bad_value(args, "expected LABEL=VALUE");
	/* its length was checked above */
	if (gf_fmt(x->selector + len, sizeof(x->selector) - len, "%s%s",
		   len ? "," : "", optarg))
		return GF_EXIT_USAGE;
	return 0;
}

/* "ID STATE" of the job the server took */
static void accepted(const struct gf_jv *v, const void *arg)
{
	(void)arg;
	printf("%s %s", gf_remote_str(v, "id"), gf_remote_str(v, "state"));
	size_t n = gf_jv_len(gf_jv_get(v, "tasks")); /* an array's */
	if (n)
		printf(" (array of %zu tasks)", n);
	printf("\n");
}

/* The body the options make (the command after them, and its first
 * word the name unless --name said one). */
static void write_body(struct body *x, int argc, char **argv, struct gf_json *j)
{
	const struct {
		const char *key, *s;
	} strs[] = { { "name", x->name },
		     { "team", x->team },
		     { "class", x->cls },
		     { "gpu_model", x->gpu_model },
		     { "mig_profile", x->mig },
		     { "output", x->output },
		     { "error", x->error },
		     { "array", x->array },
		     { "dependency", x->dependency } };
	const struct {
		const char *key;
		long long v;
	} nums[] = { { "replicas", x->replicas },
		     { "gpus", x->gpus },
		     { "gpu_milli", x->gpu_milli },
		     { "cpu_milli", x->cpu_milli },
		     { "memory_mib", x->memory_mib },
		     { "max_runtime_s", x->max_runtime } };
	gf_json_obj_begin(j, NULL);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i].s)
			gf_json_str(j, strs[i].key, strs[i].s);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (nums[i].v >= 0)
			gf_json_int(j, nums[i].key, nums[i].v);
	if (x->hold)
		gf_json_bool(j, "hold", true);
	if (x->selector[0]) {
		gf_json_obj_begin(j, "node_selector");
		char *save = NULL;
		for (char *kv = strtok_r(x->selector, ",", &save); kv;
		     kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			*eq = '\0';
			gf_json_str(j, kv, eq + 1);
		}
		gf_json_obj_end(j);
	}
	if (optind < argc) {
		struct gf_buf cmd;
		gf_buf_init(&cmd, GF_JOB_CMD_MAX);
		for (int i = optind; i < argc; i++)
			gf_cli_shell_word(&cmd, argv[i], argc - optind > 1);
		gf_json_str(j, "command", gf_buf_str(&cmd));
		if (!x->name)
			gf_json_str(j, "name", argv[optind]);
		gf_buf_release(&cmd);
	}
	gf_json_obj_end(j);
}

int gf_cli_submit_body(const char *cmd, int argc, char **argv,
		       void (*help)(FILE *), struct gf_remote *r,
		       struct gf_buf *b)
{
	struct body x = { .replicas = -1,
			  .gpus = -1,
			  .gpu_milli = -1,
			  .cpu_milli = -1,
			  .memory_mib = -1,
			  .max_runtime = -1 };
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("name", &x.name),
		GF_OPT_STR("team", &x.team),
		GF_OPT_STR("class", &x.cls),
		GF_OPT_NUM("replicas", &x.replicas, 0, 1024, "a replica count"),
		GF_OPT_NUM("gpus", &x.gpus, 0, 16, "a GPU count"),
		GF_OPT_STR("gpu-model", &x.gpu_model),
		GF_OPT_NUM("gpu-milli", &x.gpu_milli, 0, 1000,
			   "thousandths of a GPU"),
		GF_OPT_STR("mig", &x.mig),
		GF_OPT_NUM("cpu-milli", &x.cpu_milli, 0, 100000000,
			   "thousandths of a CPU"),
		GF_OPT_NUM("memory-mib", &x.memory_mib, 0, 1LL << 40, "MiB"),
		GF_OPT_ARG("selector", 's'),
		GF_OPT_NUM("max-runtime", &x.max_runtime, 0,
			   100LL * 365 * 86400, "seconds"),
		/* logs */
		GF_OPT_STR("output", &x.output),
		GF_OPT_STR("error", &x.error),
		GF_OPT_STR("array", &x.array), /* issue 21 */
		GF_OPT_STR("dependency", &x.dependency),
		GF_OPT_FLAG("hold", &x.hold),
		GF_OPT_END,
	};
	r->cmd = cmd;
	struct gf_cli_args args = GF_CLI_ARGS(cmd, argc, argv, opts, help);
	args.shortopts = "+h";
	args.remote = r;
	while (gf_cli_next(&args) != -1) /* 's', --selector */
		(void)!add_selector(&args, &x);
	if (args.rc >= 0)
		return args.rc; /* -h answered (0), or a bad option said */
	int rc = gf_remote_setup(r);
	if (rc)
		return rc;
	struct gf_json j;
	gf_json_init(&j, b);
	write_body(&x, argc, argv, &j);
	return -1;
}

int cmd_submit(int argc, char **argv)
{
	struct gf_remote r = { .cmd = CMD };
	struct gf_buf b;
	gf_buf_init(&b, 64u << 10);
	int rc = gf_cli_submit_body(CMD, argc, argv, usage, &r, &b);
	if (rc < 0)
		rc = gf_remote_show(&r, GF_HTTP_POST, "/v1/jobs",
				    gf_buf_str(&b), accepted, NULL);
	gf_buf_release(&b);
	return rc;
}
