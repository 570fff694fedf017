/*
 * cmd_jobs.c - `gpufleet jobs [ID...]`: the controller's jobs, as squeue
 * lists them: one line each, or one job in full.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"

#define CMD "jobs"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet jobs [--state S] [--team T] [--limit N] "
		"[--server URL]\n"
		"                     [--token-file F] [--json] [ID...]\n"
		"\n"
		"List jobs (ID, name, team, class, state, GPUs per replica x "
		"replicas, where\nthey run or why they wait); with IDs, those "
		"jobs.\n\n"
		"  --state S           pending, running, succeeded, failed, "
		"cancelled\n"
		"  --team T            one team's jobs\n"
		"  --limit N           at most N (default 1000)\n" CONN_HELP
			GF_CLI_EXIT_HELP);
}

/* "2 GPU", "250m", "1g.10gb", "-" */
static void what(const struct gf_jv *j, char *out, size_t size)
{
	int64_t g = gf_remote_num(j, "gpus"), m = gf_remote_num(j, "gpu_milli");
	const char *mig = gf_jv_str(gf_jv_get(j, "mig_profile"));
	if (g)
		snprintf(out, size, "%lldx%lld", (long long)g,
			 (long long)gf_remote_num(j, "replicas"));
	else if (m)
		snprintf(out, size, "%lldm", (long long)m);
	else if (mig)
		snprintf(out, size, "%s", mig);
	else
		snprintf(out, size, "-");
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
		snprintf(out, size, "%s", gf_remote_str(j, "reason"));
}

static void line(const struct gf_jv *j)
{
	char w[32], at[256];
	what(j, w, sizeof(w));
	where(j, at, sizeof(at));
	printf("%-10s %-16.16s %-10.10s %-10.10s %-10s %-8s %s\n",
	       gf_remote_str(j, "id"), gf_remote_str(j, "name"),
	       gf_remote_str(j, "team"), gf_remote_str(j, "class"),
	       gf_remote_str(j, "state"), w, at);
}

static int list(struct gf_remote *r, const char *query)
{
	char path[512];
	snprintf(path, sizeof(path), "/v1/jobs%s", query);
	struct gf_client_answer a;
	int rc = gf_remote_call(r, GF_HTTP_GET, path, NULL, &a);
	if (rc)
		return rc;
	if (r->json) {
		rc = gf_remote_print(&a);
	} else {
		struct gf_jv *v = gf_remote_json(r, &a);
		rc = v ? GF_EXIT_OK : GF_EXIT_FAIL;
		const struct gf_jv *jobs = gf_jv_get(v, "jobs");
		printf("%-10s %-16s %-10s %-10s %-10s %-8s %s\n", "ID", "NAME",
		       "TEAM", "CLASS", "STATE", "GPUS", "NODES/REASON");
		for (size_t i = 0; i < gf_jv_len(jobs); i++)
			line(gf_jv_at(jobs, i));
		bool more = false;
		if (gf_jv_bool(gf_jv_get(v, "truncated"), &more) && more)
			printf("(more: raise --limit)\n");
		gf_jv_free(v);
	}
	gf_client_answer_release(&a);
	return rc;
}

static int one(struct gf_remote *r, const char *id)
{
	char path[256];
	snprintf(path, sizeof(path), "/v1/jobs/%.200s", id);
	struct gf_client_answer a;
	int rc = gf_remote_call(r, GF_HTTP_GET, path, NULL, &a);
	if (rc)
		return rc;
	if (r->json) {
		rc = gf_remote_print(&a);
	} else {
		struct gf_jv *v = gf_remote_json(r, &a);
		rc = v ? GF_EXIT_OK : GF_EXIT_FAIL;
		if (v)
			line(v);
		gf_jv_free(v);
	}
	gf_client_answer_release(&a);
	return rc;
}

int cmd_jobs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "team", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'l' },
		CONN_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct gf_remote r = { .cmd = CMD };
	const char *server = NULL, *tokens = NULL;
	char query[400] = "";
	size_t ql = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 't':
		case 'l':
			/* the server checks the values and names a bad one */
			ql += (size_t)snprintf(query + ql, sizeof(query) - ql,
					       "%c%s=%.100s", ql ? '&' : '?',
					       c == 's'	  ? "state"
					       : c == 't' ? "team"
							  : "limit",
					       optarg);
			break;
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			if (gf_remote_option(&r, c, optarg, &server, &tokens))
				break;
			return gf_cli_bad_option(CMD, argv);
		}
	}
	int rc = gf_remote_setup(&r, server, tokens);
	if (rc)
		return rc;
	if (optind == argc)
		return list(&r, query);
	for (int i = optind; i < argc && rc == 0; i++)
		rc = one(&r, argv[i]);
	return rc;
}
