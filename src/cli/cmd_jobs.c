/*
 * cmd_jobs.c - `gpufleet jobs [ID...]`: the controller's jobs, as squeue
 * lists them: one line each, or one job in full.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/fmt.h"

#define CMD "jobs"

static bool expand; /* --expand: an array's tasks one by one */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet jobs [--state S] [--team T] [--limit N] "
		"[--expand]\n"
		"                     [--server URL] [--token-file F] [--json] "
		"[ID...]\n"
		"\n"
		"List jobs (ID, name, team, class, state, GPUs per replica x "
		"replicas, where\nthey run or why they wait); with IDs, those "
		"jobs.\n\n"
		"  --state S           pending, running, succeeded, failed, "
		"cancelled\n"
		"  --team T            one team's jobs\n"
		"  --limit N           at most N (default 1000)\n"
		"  --expand            every task of an array (default: an "
		"array is one line,\n"
		"                      j12_[0-31], with its tasks' states "
		"counted)\n" CONN_HELP GF_CLI_EXIT_HELP);
}

/* "2x1", "250m", "1g.10gb", "-" (a table cell: cut, marked, to fit) */
static void what(const struct gf_jv *j, char *out, size_t size)
{
	int64_t g = gf_remote_num(j, "gpus"), m = gf_remote_num(j, "gpu_milli");
	const char *mig = gf_jv_str(gf_jv_get(j, "mig_profile"));
	if (g)
		gf_note(out, size, "%lldx%lld", (long long)g,
			(long long)gf_remote_num(j, "replicas"));
	else if (m)
		gf_note(out, size, "%lldm", (long long)m);
	else
		gf_note(out, size, "%s", mig ? mig : "-");
}

/* Nodes it runs on, or why it waits. */
static void where(const struct gf_jv *j, char *out, size_t size)
{
	const struct gf_jv *pl = gf_jv_get(j, "placement");
	size_t n = gf_jv_len(pl), len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && len + 40 < size; i++) {
		const struct gf_jv *p = gf_jv_at(pl, i);
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? "," : "", gf_remote_str(p, "node"));
	}
	if (n == 0)
		gf_note(out, size, "%s", gf_remote_str(j, "reason"));
}

static void line(const struct gf_jv *j, const void *arg)
{
	(void)arg;
	char w[32], at[256];
	what(j, w, sizeof(w));
	where(j, at, sizeof(at));
	printf("%-10s %-16.16s %-10.10s %-10.10s %-10s %-8s %s\n",
	       gf_remote_str(j, "id"), gf_remote_str(j, "name"),
	       gf_remote_str(j, "team"), gf_remote_str(j, "class"),
	       gf_remote_str(j, "state"), w, at);
}

static void table(const struct gf_jv *v, const void *arg)
{
	const struct gf_jv *jobs = gf_jv_get(v, "jobs");
	printf("%-10s %-16s %-10s %-10s %-10s %-8s %s\n", "ID", "NAME", "TEAM",
	       "CLASS", "STATE", "GPUS", "NODES/REASON");
	for (size_t i = 0; i < gf_jv_len(jobs); i++)
		if (expand || !gf_cli_jobs_array(jobs, i)) /* jobs_array.c */
			line(gf_jv_at(jobs, i), arg);
	bool more = false;
	if (gf_jv_bool(gf_jv_get(v, "truncated"), &more) && more)
		printf("(more: raise --limit)\n");
}

/* One job: its id goes into the path whole (one too long is said). */
static int one(struct gf_remote *r, const char *id)
{
	char path[GF_REMOTE_PATH_MAX];
	if (gf_fmt(path, sizeof(path), "/v1/jobs/%s", id)) {
		gf_cli_error(CMD, "job id '%.40s...': too long", id);
		return GF_EXIT_USAGE;
	}
	return gf_remote_show(r, GF_HTTP_GET, path, NULL, line, NULL);
}

int cmd_jobs(int argc, char **argv)
{
	static const struct gf_cli_opt opts[] = {
		GF_OPT_ARG("state", 's'),
		GF_OPT_ARG("team", 't'),
		GF_OPT_ARG("limit", 'l'),
		GF_OPT_FLAG("expand", &expand),
		GF_OPT_END,
	};
	struct gf_remote r = { .cmd = CMD };
	char query[400] = "";
	size_t ql = 0;
	int c;
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.remote = &r;
	/* --state, --team, --limit: the server checks the values and names
	 * a bad one */
	while ((c = gf_cli_next(&args)) != -1)
		ql += (size_t)snprintf(query + ql, sizeof(query) - ql,
				       "%c%s=%.100s", ql ? '&' : '?',
				       c == 's'	  ? "state"
				       : c == 't' ? "team"
						  : "limit",
				       optarg);
	if (args.rc >= 0)
		return args.rc;
	int rc = gf_remote_setup(&r);
	if (rc)
		return rc;
	if (optind == argc) {
		char path[sizeof("/v1/jobs") + sizeof(query)];
		if (gf_fmt(path, sizeof(path), "/v1/jobs%s", query))
			return GF_EXIT_FAIL; /* cannot: room for both */
		return gf_remote_show(&r, GF_HTTP_GET, path, NULL, table, NULL);
	}
	for (int i = optind; i < argc && rc == 0; i++)
		rc = one(&r, argv[i]);
	return rc;
}
