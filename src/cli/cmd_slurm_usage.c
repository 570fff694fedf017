/*
 * cmd_slurm_usage.c - `gpufleet slurm usage`: Slurm's accounting (sacct,
 * run here or saved) as the usage records `gpufleet chargeback --records`
 * reads, or per job with its GPU-seconds (src/slurm/usage.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/charge.h>

#include "chargeback/chargeback.h"
#include "cli/cli.h"
#include "cli/slurm_cli.h"
#include "slurm/usage.h"
#include "util/clock.h"
#include "util/fmt.h"

#define CMD "slurm usage"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet slurm usage --since T [--until T] "
		"[--sacct PROG | --sacct-file FILE]\n"
		"                            [--csv | --json | --table] "
		"[--lenient]\n"
		"\n"
		"Turn Slurm's accounting into the usage records `gpufleet "
		"chargeback --records`\nreads: one per job allocation and "
		"node (TZ=UTC sacct -a -X -P), GPUs from\nAllocTRES gres/gpu "
		"(the model from gres/gpu:TYPE), CPUs and memory as\n"
		"allocated: Slurm bills allocation times elapsed time.  A job "
		"still running\nends now; one that never started is not "
		"usage.\n"
		"\n"
		"  --since T         jobs that ran at or after T: RFC3339, "
		"unix seconds, or a\n"
		"                    duration back from now (90m, 24h, 7d)\n"
		"  --until T         and before T (default now)\n"
		"  --sacct PROG      the sacct to run (default sacct, from "
		"PATH)\n"
		"  --sacct-file F    read saved `sacct -P` output instead "
		"(with these fields:\n"
		"                    " GF_SLURM_SACCT_FIELDS ")\n"
		"  --csv             the records CSV (default): cluster,node,"
		"namespace (account),\n"
		"                    pod (job id),container (user),start,end,"
		"gpus,cpu_req,cpu_use,\n"
		"                    ram_req_gib,ram_use_gib,labels,gpu_model\n"
		"  --json            per job, with its GPU-seconds, and the "
		"total\n"
		"  --table           the same as a table\n"
		"  --lenient         skip records sacct wrote badly (listed "
		"on stderr)\n"
		"  -h, --help        this help\n" GF_CLI_EXIT_HELP);
}

/* A time, or a duration back from now. */
static int parse_when(const char *opt, const char *s, int64_t now, int64_t *out)
{
	if (gf_cb_parse_time(s, out) == 0)
		return 0;
	int64_t a, b;
	struct gf_err e;
	if (!strchr(s, ',') && gf_cb_parse_window(s, now, &a, &b, &e) == 0) {
		*out = a;
		return 0;
	}
	gf_cli_error(CMD,
		     "cannot parse '%s %s': expected an RFC3339 time, unix "
		     "seconds or a duration like 24h",
		     opt, s);
	return GF_EXIT_USAGE;
}

struct args {
	const char *since, *until, *sacct, *file;
	int fmt; /* 0 csv, 1 json, 2 table */
	bool lenient;
};

/* The options into a: -1 to go on, else the exit status (-h answered,
 * or what was wrong said). */
static int parse_args(int argc, char **argv, struct args *a)
{
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("since", &a->since),
		GF_OPT_STR("until", &a->until),
		GF_OPT_STR("sacct", &a->sacct),
		GF_OPT_STR("sacct-file", &a->file),
		GF_OPT_SET("csv", &a->fmt, 0),
		GF_OPT_SET("json", &a->fmt, 1),
		GF_OPT_SET("table", &a->fmt, 2),
		GF_OPT_FLAG("lenient", &a->lenient),
		GF_OPT_END,
	};
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.no_args = true;
	(void)gf_cli_options(&args);
	if (args.rc >= 0)
		return args.rc;
	if (!a->since && !a->file) {
		gf_cli_error(CMD, "say since when: --since T (or give "
				  "--sacct-file)");
		return GF_EXIT_USAGE;
	}
	if (a->sacct && a->file) {
		gf_cli_error(CMD,
			     "--sacct and --sacct-file exclude each other");
		return GF_EXIT_USAGE;
	}
	return -1;
}

/* sacct's output into a private temporary file; its path in out. */
static int run_sacct(const struct args *a, int64_t now, char *out, size_t size)
{
	int64_t since = 0, until = now;
	int rc = parse_when("--since", a->since, now, &since);
	if (rc == 0 && a->until)
		rc = parse_when("--until", a->until, now, &until);
	if (rc)
		return rc;
	if (until < since) {
		gf_cli_error(CMD, "--until is before --since");
		return GF_EXIT_USAGE;
	}
	const char *tmp = getenv("TMPDIR");
	const char *dir = tmp && *tmp ? tmp : "/tmp";
	if (gf_fmt(out, size, "%s/gpufleet-sacct-XXXXXX", dir)) {
		gf_cli_error(CMD,
			     "$TMPDIR '%.60s...': too long for a file name",
			     dir);
		return GF_EXIT_FAIL;
	}
	int fd = mkstemp(out);
	if (fd < 0) {
		gf_cli_error(CMD, "cannot make a temporary file in '%s'",
			     tmp && *tmp ? tmp : "/tmp");
		return GF_EXIT_FAIL;
	}
	close(fd);
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_slurm_run_sacct(a->sacct ? a->sacct : "sacct", since, until, out,
			       &e) != 0) {
		gf_cli_error(CMD, "%s", e.msg);
		unlink(out);
		return GF_EXIT_FAIL;
	}
	return 0;
}

static int render(const struct gf_charge_input *in, int fmt)
{
	struct gf_buf b;
	gf_buf_init(&b, 256u << 20);
	int rc = fmt == 1   ? gf_slurm_usage_json(in, &b)
		 : fmt == 2 ? gf_slurm_usage_table(in, &b)
			    : gf_slurm_usage_csv(in, &b);
	int ret = rc ? GF_EXIT_FAIL : gf_cli_print(gf_buf_str(&b), b.len);
	if (rc)
		gf_cli_error(CMD, "output too large: %s", gf_strerror(rc));
	gf_buf_release(&b);
	return ret;
}

int gf_cmd_slurm_usage(int argc, char **argv)
{
	struct args a = { .fmt = 0 };
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	int64_t now = gf_clock_wall_ms();
	char tmp[4096] = "";
	const char *path = a.file;
	if (!path) {
		rc = run_sacct(&a, now, tmp, sizeof(tmp));
		if (rc)
			return rc;
		path = tmp;
	}
	struct gf_charge_input in;
	struct gf_cb_skips sk = { 0 };
	struct gf_err e;
	gf_err_clear(&e);
	gf_charge_input_init(&in);
	int ret = GF_EXIT_FAIL;
	if (gf_cb_read_sacct(&in, path, now, a.lenient, &sk, &e) != 0) {
		gf_cli_error(CMD, "%s", e.msg);
		goto out;
	}
	for (size_t i = 0; i < sk.n; i++)
		gf_cli_error(CMD, "skipped line %u: %s", sk.v[i].line,
			     sk.v[i].why);
	if (sk.total > sk.n)
		gf_cli_error(CMD, "%zu more lines skipped", sk.total - sk.n);
	ret = render(&in, a.fmt);
out:
	if (tmp[0])
		unlink(tmp);
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
	return ret;
}
