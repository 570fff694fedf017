/*
 * cmd_submit.c - `gpufleet submit`: a job to the controller, as sbatch
 * does: options for what one replica needs, the command after --.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpufleet/job.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "nodeproto/nodeproto.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/str.h"

#define CMD "submit"

extern char **environ; /* the variables --env and --export-env read */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet submit [--name N] [--team T] [--class C] "
		"[--replicas N]\n"
		"                       [--gpus N [--gpu-model M] | "
		"--gpu-milli N | --mig PROFILE]\n"
		"                       [--cpu-milli N] [--memory-mib N] "
		"[--selector k=v]...\n"
		"                       [--time T] [--output PATH] [--error PATH]\n"
		"                       [--env K=V]... [--export-env] [--chdir DIR]\n"
		"                       [--array SPEC] [--dependency DEP] [--hold]\n"
		"                       [--server URL] [--token-file F] "
		"[--json] -- COMMAND...\n"
		"\n"
		"Submit a job; print its id and state.  Per replica it asks "
		"for --gpus whole\nGPUs, or --gpu-milli of one GPU (1-1000), "
		"or one --mig instance: one of the\nthree.  --replicas N > 1 "
		"is a gang: all or none, inside one block.\n\n"
		"  --name N            a name for people (default: the "
		"command's first word)\n"
		"  --team T            (default: the token's team, else "
		"'default')\n"
		"  --class C           inference, training, batch... (default "
		"batch)\n"
		"  --selector k=v      run only on nodes with that label "
		"(repeatable)\n"
		"  --time T            the job fails past it; also lets it "
		"backfill.  As Slurm:\n"
		"                      M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or "
		"90s, 2h, 1d\n"
		"  --max-runtime T     --time, a bare number in seconds\n"
		"  --env K=V           set K in the job's environment "
		"(repeatable); --env K\n"
		"                      takes K's value from here\n"
		"  --export-env        the whole environment here, less "
		"names holding TOKEN,\n"
		"                      SECRET, PASSWORD, PASSWD, KEY, "
		"CREDENTIAL or PRIVATE,\n"
		"                      less PWD OLDPWD SHLVL _ HOME USER LOGNAME "
		"SHELL, and less\n"
		"                      what the node sets (CUDA_VISIBLE_DEVICES, "
		"GPUFLEET_*...)\n"
		"  --chdir DIR         the job's working directory on its "
		"node (default: the\n"
		"                      home of the user it runs as)\n"
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
	/* --env, --export-env, --chdir (an absolute path, owned) */
	const char *env[GF_JOB_ENV_MAX];
	int nenv;
	bool export_env;
	char *workdir;
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

/* Whether the variable name holds a word that looks like a secret's:
 * --export-env leaves it out. */
static bool secret_name(const char *name, size_t len)
{
	static const char *const words[] = { "TOKEN",  "SECRET", "PASSWORD",
					     "PASSWD", "KEY",	 "CREDENTIAL",
					     "PRIVATE" };
	char up[256];
	if (len >= sizeof(up))
		return true; /* no real name is that long: not sent */
	for (size_t i = 0; i < len; i++)
		up[i] = (char)(name[i] >= 'a' && name[i] <= 'z'
				       ? name[i] - 'a' + 'A'
				       : name[i]);
	up[len] = '\0';
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(up, words[i]))
			return true;
	return false;
}

/* What the node sets (the GPUs, the gang, GPUFLEET_*, PWD: nodeproto's
 * list) or takes from the job's user: --export-env leaves it out. */
static bool node_name(const char *name, size_t len)
{
	char n[GF_JOB_ENV_NAME_MAX];
	gf_note(n, sizeof(n), "%.*s", (int)len, name); /* a name: fits */
	if (gf_np_env_reserved(n))
		return true;
	static const char *const names[] = { "PWD",	"OLDPWD", "SHLVL",
					     "_",	"HOME",	  "USER",
					     "LOGNAME", "SHELL" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncmp(name, names[i], len))
			return true;
	return false;
}

/* "K=V" into the job's environment, replacing an earlier K: 0, or
 * GF_EXIT_USAGE (said). */
static int env_put(struct body *x, const char *kv)
{
	size_t len = (size_t)(strchr(kv, '=') - kv);
	for (int i = 0; i < x->nenv; i++)
		if (!strncmp(x->env[i], kv, len + 1)) {
			x->env[i] = kv;
			return 0;
		}
	if (x->nenv == GF_JOB_ENV_MAX) {
		gf_cli_error(CMD,
			     "more than %d variables for the job's "
			     "environment",
			     GF_JOB_ENV_MAX);
		return GF_EXIT_USAGE;
	}
	x->env[x->nenv++] = kv;
	return 0;
}

/* --env K=V, or --env K with K's value here: 0, or GF_EXIT_USAGE. */
static int add_env(struct gf_cli_args *args, struct body *x)
{
	const char *eq = strchr(optarg, '=');
	size_t len = eq ? (size_t)(eq - optarg) : strlen(optarg);
	if (!gf_str_is_env_name(optarg, len))
		return gf_cli_bad_value(args, "expected NAME=VALUE, NAME of "
					      "letters, digits and '_', not "
					      "starting with a digit");
	char name[GF_JOB_ENV_NAME_MAX];
	gf_note(name, sizeof(name), "%.*s", (int)len, optarg); /* fits */
	if (gf_np_env_reserved(name))
		return gf_cli_bad_value(args,
					"'%s' is set by the node (the "
					"GPUs, the gang, GPUFLEET_*, "
					"PWD): a job cannot set it",
					name);
	if (eq)
		return env_put(x, optarg) ? (args->rc = GF_EXIT_USAGE) : 0;
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, optarg, len) && (*e)[len] == '=')
			return env_put(x, *e) ? (args->rc = GF_EXIT_USAGE) : 0;
	return gf_cli_bad_value(args,
				"'%s' is not set here (say "
				"--env %s=VALUE)",
				optarg, optarg);
}

/* --export-env: every variable here but secrets and the node's own,
 * before the --env ones (which replace them). */
static int export_env(struct body *x)
{
	const char *mine[GF_JOB_ENV_MAX];
	int n = x->nenv;
	memcpy(mine, x->env, sizeof(*mine) * (size_t)n);
	x->nenv = 0;
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : 0;
		if (eq && gf_str_is_env_name(*e, len) &&
		    !secret_name(*e, len) && !node_name(*e, len) &&
		    env_put(x, *e))
			return GF_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		if (env_put(x, mine[i]))
			return GF_EXIT_USAGE;
	return 0;
}

/* The environment within the job's caps: 0, or GF_EXIT_USAGE (said). */
static int env_size(const struct body *x)
{
	size_t bytes = 0;
	for (int i = 0; i < x->nenv; i++)
		bytes += strlen(x->env[i]) + 1;
	if (bytes <= GF_JOB_ENV_BYTES)
		return 0;
	gf_cli_error(CMD,
		     "the job's environment is %zu bytes, more than %d "
		     "(pass fewer variables)",
		     bytes, GF_JOB_ENV_BYTES);
	return GF_EXIT_USAGE;
}

/* --chdir DIR, made absolute from here: 0, or GF_EXIT_USAGE. */
static int set_workdir(struct gf_cli_args *args, struct body *x)
{
	char here[GF_JOB_WORKDIR_MAX];
	struct gf_buf b;
	if (optarg[0] == '\0')
		return gf_cli_bad_value(args, "expected a directory");
	if (optarg[0] != '/' && !getcwd(here, sizeof(here)))
		return gf_cli_bad_value(args, "a relative directory, and the "
					      "current one cannot be read");
	gf_buf_init(&b, GF_JOB_WORKDIR_MAX);
	gf_buf_printf(&b, "%s%s%s", optarg[0] == '/' ? "" : here,
		      optarg[0] == '/' ? "" : "/", optarg);
	if (gf_buf_error(&b)) {
		gf_buf_release(&b);
		return gf_cli_bad_value(args, "longer than %d bytes",
					GF_JOB_WORKDIR_MAX - 1);
	}
	gf_free(x->workdir);
	x->workdir = gf_strdup(gf_buf_str(&b));
	gf_buf_release(&b);
	return 0;
}

/* Options that exclude each other, and a command: 0, or GF_EXIT_USAGE
 * (said), before any request. */
static int check_flags(struct gf_cli_args *args, const struct body *x)
{
	static const char *const pairs[][2] = {
		{ "gpus", "gpu-milli" },
		{ "gpus", "mig" },
		{ "gpu-milli", "mig" },
		{ "time", "max-runtime" },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if (!gf_cli_given(args, pairs[i][0]) ||
		    !gf_cli_given(args, pairs[i][1]))
			continue;
		if (i < 2 && x->gpus == 0)
			continue; /* --gpus 0: no whole GPU asked */
		gf_cli_error(CMD,
			     "'--%s' and '--%s' exclude each other: a "
			     "replica asks for %s",
			     pairs[i][0], pairs[i][1],
			     i < 3 ? "whole GPUs, a share of one GPU, or one "
				     "MIG instance"
				   : "one run time");
		return GF_EXIT_USAGE;
	}
	for (int i = optind; i < args->argc; i++)
		if (args->argv[i][strspn(args->argv[i], " \t\r\n")])
			return 0; /* a command, not only blanks */
	gf_cli_error(CMD, "no command given: say it after the options "
			  "(gpufleet submit [options] -- COMMAND...)");
	return GF_EXIT_USAGE;
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

/* The first word of a command (one argument may hold a whole shell
 * line: 'python train.py --lr 3e-4'), cut to what a name holds, never
 * inside a UTF-8 character; "job" for a command of blanks. */
static void first_word(const char *c, char *out, size_t size)
{
	c += strspn(c, " \t\n");
	size_t n = strcspn(c, " \t\n");
	if (n > size - 1) {
		n = size - 1;
		while (n > 0 && ((unsigned char)c[n] & 0xC0) == 0x80)
			n--; /* c[n] continues a character: cut before it */
	}
	if (n == 0)
		gf_note(out, size, "job");
	else
		gf_note(out, size, "%.*s", (int)n, c);
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
	if (x->nenv) {
		gf_json_obj_begin(j, "env");
		for (int i = 0; i < x->nenv; i++) {
			const char *eq = strchr(x->env[i], '=');
			char k[GF_JOB_ENV_NAME_MAX];
			gf_note(k, sizeof(k), "%.*s", (int)(eq - x->env[i]),
				x->env[i]);
			gf_json_str(j, k, eq + 1);
		}
		gf_json_obj_end(j);
	}
	if (x->workdir)
		gf_json_str(j, "workdir", x->workdir);
	if (optind < argc) {
		struct gf_buf cmd;
		gf_buf_init(&cmd, GF_JOB_CMD_MAX);
		for (int i = optind; i < argc; i++)
			gf_cli_shell_word(&cmd, argv[i], argc - optind > 1);
		gf_json_str(j, "command", gf_buf_str(&cmd));
		if (!x->name) {
			char name[GF_JOB_NAME_MAX];
			first_word(argv[optind], name, sizeof(name));
			gf_json_str(j, "name", name);
		}
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
		GF_OPT_NUM("gpu-milli", &x.gpu_milli, 1, 1000,
			   "thousandths of a GPU"),
		GF_OPT_STR("mig", &x.mig),
		GF_OPT_NUM("cpu-milli", &x.cpu_milli, 0, 100000000,
			   "thousandths of a CPU"),
		GF_OPT_NUM("memory-mib", &x.memory_mib, 0, 1LL << 40, "MiB"),
		GF_OPT_ARG("selector", 's'),
		/* environment, directory, run time (issue 21) */
		GF_OPT_DURATION("time", &x.max_runtime, 0, GF_JOB_RUNTIME_MAX_S,
				GF_DUR_BARE_MIN),
		GF_OPT_DURATION("max-runtime", &x.max_runtime, 0,
				GF_JOB_RUNTIME_MAX_S, GF_DUR_BARE_S),
		GF_OPT_ARG("env", 'e'),
		GF_OPT_FLAG("export-env", &x.export_env),
		GF_OPT_ARG("chdir", 'd'),
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
	int c, rc;
	while ((c = gf_cli_next(&args)) != -1)
		(void)!(c == 's'   ? add_selector(&args, &x)
			: c == 'e' ? add_env(&args, &x)
				   : set_workdir(&args, &x));
	/* -h answered (0), or a bad option said; else what the flags ask
	 * checked before any request */
	rc = args.rc >= 0 ? args.rc : check_flags(&args, &x);
	if (rc == 0 && args.rc < 0 && x.export_env)
		rc = export_env(&x);
	if (rc == 0 && args.rc < 0)
		rc = env_size(&x);
	if (rc == 0 && args.rc < 0)
		rc = gf_remote_setup(r);
	if (rc || args.rc >= 0) {
		gf_free(x.workdir);
		return rc;
	}
	struct gf_json j;
	gf_json_init(&j, b);
	write_body(&x, argc, argv, &j);
	gf_free(x.workdir);
	return -1;
}

int cmd_submit(int argc, char **argv)
{
	struct gf_remote r = { .cmd = CMD };
	struct gf_buf b;
	gf_buf_init(&b, 256u << 10); /* --env: up to 64 KiB escaped */
	int rc = gf_cli_submit_body(CMD, argc, argv, usage, &r, &b);
	if (rc < 0)
		rc = gf_remote_show(&r, GF_HTTP_POST, "/v1/jobs",
				    gf_buf_str(&b), accepted, NULL);
	gf_buf_release(&b);
	return rc;
}
