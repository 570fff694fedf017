/*
 * cmd_jobs.c - `gpufleet jobs [ID...]`: the controller's jobs, as squeue
 * lists them (newest first, filtered, a page at a time): one line each,
 * or one job; `gpufleet history ID` (= `jobs ID --runs`): a job's runs as
 * sacct lists steps.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/ctl.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/clock.h"
#include "util/fmt.h"

#define CMD "jobs"

static bool expand; /* --expand: an array's tasks one by one */
/* The window `jobs` shows finished jobs in without --all. */
#define RECENT "24h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet jobs [--state S[,S...]] [--name PATTERN] "
		"[--node N] [--team T]\n"
		"                     [--since TIME] [--until TIME] [--all] "
		"[--limit N]\n"
		"                     [--before ID] [--expand] [--server URL]\n"
		"                     [--token-file F] [--json]\n"
		"       gpufleet jobs ID... [--runs] [--json]\n"
		"\n"
		"List jobs, newest first (ID, name, team, class, state, "
		"elapsed time, GPUs per\nreplica x replicas, where they run "
		"or why they wait); finished jobs that ended\nmore than "
		"24 h ago only with --all (or --since/--until).  With IDs, "
		"those jobs;\nwith --runs, their runs as sacct shows steps "
		"(also: gpufleet history ID).\n\n"
		"  --state S[,S...]    pending, running, succeeded, failed, "
		"cancelled (any case)\n"
		"  --name PATTERN      names matching it ('*' and '?' as in "
		"the shell)\n"
		"  --node N            jobs that run or ran on node N\n"
		"  --team T            one team's jobs\n"
		"  --since TIME        jobs not ended before TIME: ISO-8601 "
		"(2026-12-02T10:00Z,\n"
		"                      UTC without a zone) or a time ago "
		"(90s, 30m, 2h, 7d)\n"
		"  --until TIME        jobs submitted by TIME\n"
		"  --all               every job, finished ones of any age\n"
		"  --limit N           at most N (default 1000, at most "
		"10000)\n"
		"  --before ID         the jobs submitted before ID (the next "
		"page)\n"
		"  --expand            every task of an array (default: an "
		"array is one line,\n"
		"                      j12_[0-31], with its tasks' states "
		"counted)\n"
		"  --runs              with IDs: each replica's run of each "
		"attempt\n" CONN_HELP GF_CLI_EXIT_HELP);
}

static void history_usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet history ID... [--server URL] [--token-file "
		"F] [--json]\n"
		"\n"
		"A job's runs as sacct shows steps, one line per replica of "
		"each attempt:\nwhere it ran (node, GPUs), when, how long, its "
		"exit code and why it ended\n(a run still going: '-').  "
		"Same as gpufleet jobs ID --runs.\n\n" CONN_HELP
			GF_CLI_EXIT_HELP);
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

/* Nodes it runs (or, finished, last ran) on, or why it waits. */
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

/* A time of the answer in ms, or 0 (null, absent, unreadable). */
static int64_t when(const struct gf_jv *o, const char *k)
{
	const char *s = gf_jv_str(gf_jv_get(o, k));
	int64_t t;
	return s && gf_job_time_parse(s, 0, &t) == 0 ? t : 0;
}

/* Slurm's elapsed form: "M:SS", "H:MM:SS", "D-HH:MM:SS"; "-" for none. */
static void elapsed(int64_t from, int64_t to, char *out, size_t size)
{
	if (from <= 0 || to < from) {
		gf_note(out, size, "-");
		return;
	}
	long long s = (to - from) / 1000;
	long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;
	if (d)
		gf_note(out, size, "%lld-%02lld:%02lld:%02lld", d, h, m,
			s % 60);
	else if (h)
		gf_note(out, size, "%lld:%02lld:%02lld", h, m, s % 60);
	else
		gf_note(out, size, "%lld:%02lld", m, s % 60);
}

/* How long it ran: to its end, or to now (the server's clock is not
 * known here: this machine's). */
static void job_elapsed(const struct gf_jv *j, char *out, size_t size)
{
	int64_t end = when(j, "ended");
	elapsed(when(j, "started"), end ? end : gf_clock_wall_ms(), out, size);
}

static void line(const struct gf_jv *j, const void *arg)
{
	(void)arg;
	char w[32], at[256], el[32];
	what(j, w, sizeof(w));
	where(j, at, sizeof(at));
	job_elapsed(j, el, sizeof(el));
	printf("%-10s %-16.16s %-10.10s %-10.10s %-10s %11s %-8s %s\n",
	       gf_remote_str(j, "id"), gf_remote_str(j, "name"),
	       gf_remote_str(j, "team"), gf_remote_str(j, "class"),
	       gf_remote_str(j, "state"), el, w, at);
}

static void table(const struct gf_jv *v, const void *arg)
{
	const struct gf_jv *jobs = gf_jv_get(v, "jobs");
	printf("%-10s %-16s %-10s %-10s %-10s %11s %-8s %s\n", "ID", "NAME",
	       "TEAM", "CLASS", "STATE", "ELAPSED", "GPUS", "NODES/REASON");
	for (size_t i = 0; i < gf_jv_len(jobs); i++)
		if (expand || !gf_cli_jobs_array(jobs, i)) /* jobs_array.c */
			line(gf_jv_at(jobs, i), arg);
	bool more = false;
	const char *next = gf_jv_str(gf_jv_get(v, "next_before"));
	if (gf_jv_bool(gf_jv_get(v, "truncated"), &more) && more)
		printf(next ? "(more: --before %s)\n"
			    : "(more: raise --limit)\n",
		       next);
}

/* A run's cell of GPUs: "0,1,2,3", or "-". */
static void run_gpus(const struct gf_jv *r, char *out, size_t size)
{
	const struct gf_jv *g = gf_jv_get(r, "gpus");
	size_t len = 0;
	gf_note(out, size, "-");
	for (size_t i = 0; i < gf_jv_len(g) && len + 8 < size; i++) {
		int64_t x = 0;
		(void)gf_jv_int(gf_jv_at(g, i), &x);
		len += (size_t)snprintf(out + len, size - len, "%s%lld",
					i ? "," : "", (long long)x);
	}
}

/* "2026-12-02T10:00:00Z" of a time of the answer (no fraction), "-". */
static void start_cell(const struct gf_jv *r, char *out, size_t size)
{
	const char *s = gf_jv_str(gf_jv_get(r, "started"));
	if (s && strlen(s) >= 19)
		gf_note(out, size, "%.19sZ", s);
	else
		gf_note(out, size, "-");
}

/* One job's runs, one line each (sacct's steps). */
static void runs_table(const struct gf_jv *j, const void *arg)
{
	(void)arg;
	const struct gf_jv *runs = gf_jv_get(j, "runs");
	printf("%-10s %7s %7s %-16s %-12s %-20s %11s %8s %s\n", "JOBID",
	       "ATTEMPT", "REPLICA", "NODE", "GPUS", "START", "ELAPSED",
	       "EXITCODE", "STATE/REASON");
	for (size_t i = 0; i < gf_jv_len(runs); i++) {
		const struct gf_jv *r = gf_jv_at(runs, i);
		char gpus[64], start[32], el[32], code[16];
		run_gpus(r, gpus, sizeof(gpus));
		start_cell(r, start, sizeof(start));
		int64_t end = when(r, "ended");
		elapsed(when(r, "started"), end ? end : gf_clock_wall_ms(), el,
			sizeof(el));
		int64_t x = 0;
		if (gf_jv_int(gf_jv_get(r, "exit_code"), &x))
			gf_note(code, sizeof(code), "%lld", (long long)x);
		else
			gf_note(code, sizeof(code), "-");
		const char *why = gf_jv_str(gf_jv_get(r, "reason"));
		printf("%-10s %7lld %7lld %-16.16s %-12.12s %-20s %11s %8s "
		       "%s\n",
		       gf_remote_str(j, "id"),
		       (long long)gf_remote_num(r, "attempt"),
		       (long long)gf_remote_num(r, "replica"),
		       gf_remote_str(r, "node"), gpus, start, el, code,
		       end ? (why && why[0] ? why : "ended")
			   : (why && why[0] ? why : "running"));
	}
	if (gf_jv_len(runs) == 0)
		printf("%-10s (no run yet: %s)\n", gf_remote_str(j, "id"),
		       gf_remote_str(j, "state"));
}

/* One job: its id goes into the path whole (one too long is said); a
 * bare number is that job ("12": j12). */
static int one(struct gf_remote *r, const char *id, bool runs)
{
	char path[GF_REMOTE_PATH_MAX];
	if (gf_fmt(path, sizeof(path), "/v1/jobs/%s%s",
		   gf_remote_job_prefix(id), id)) {
		gf_cli_error(CMD, "job id '%.40s...': too long", id);
		return GF_EXIT_USAGE;
	}
	return gf_remote_show(r, GF_HTTP_GET, path, NULL,
			      runs ? runs_table : line, NULL);
}

/* v into the query as "&key=v", percent-encoded; false when it is full. */
static bool add(char *q, size_t size, size_t *len, const char *key,
		const char *v)
{
	int n = snprintf(q + *len, size - *len, "%s%s=", *len ? "&" : "?", key);
	if (n < 0 || (size_t)n >= size - *len)
		return false;
	*len += (size_t)n;
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*len + 4 >= size)
			return false;
		if (isalnum(*p) || strchr("-._~*,:", *p))
			q[(*len)++] = (char)*p;
		else
			*len += (size_t)snprintf(q + *len, size - *len,
						 "%%%02X", *p);
	}
	q[*len] = '\0';
	return true;
}

/* The values a list is asked for, checked here as the server would
 * check them (a bad one is a usage error before any request). */
struct list_args {
	const char *state, *name, *node, *team, *since, *until, *before, *limit;
	bool all;
};

static int check(struct gf_cli_args *a, int c, const char *v)
{
	unsigned st;
	int64_t t;
	long n;
	char *end;
	if (c == 's' && gf_job_states_parse(v, &st) != 0)
		return gf_cli_bad_value(a, "expected pending, running, "
					   "succeeded, failed or cancelled "
					   "(several by commas)");
	if ((c == 'S' || c == 'U') && gf_job_time_parse(v, 1, &t) != 0)
		return gf_cli_bad_value(a, "expected an ISO-8601 time "
					   "(2026-12-02T10:00Z) or a time ago "
					   "(90s, 30m, 2h, 7d)");
	if (c == 'l' &&
	    ((n = strtol(v, &end, 10)) < 1 || n > 10000 || *end || !*v))
		return gf_cli_bad_value(a, "expected a job count from 1 to "
					   "10000");
	return 0;
}

static int list(struct gf_remote *r, const struct list_args *l)
{
	char q[GF_REMOTE_PATH_MAX - sizeof("/v1/jobs")];
	size_t len = 0;
	bool ok =
		add(q, sizeof(q), &len, "order", "desc") &&
		add(q, sizeof(q), &len, "limit", l->limit ? l->limit : "1000");
	const char *keys[] = { "state", "name",	 "node",  "team",
			       "since", "until", "before" };
	const char *vals[] = { l->state, l->name,  l->node,  l->team,
			       l->since, l->until, l->before };
	for (size_t k = 0; ok && k < sizeof(keys) / sizeof(keys[0]); k++)
		if (vals[k])
			ok = add(q, sizeof(q), &len, keys[k], vals[k]);
	/* finished jobs of the last day only, unless asked otherwise */
	if (ok && !l->all && !l->since && !l->until)
		ok = add(q, sizeof(q), &len, "since", RECENT);
	if (!ok) {
		gf_cli_error(CMD, "the filters are over %zu bytes", sizeof(q));
		return GF_EXIT_USAGE;
	}
	char path[GF_REMOTE_PATH_MAX];
	if (gf_fmt(path, sizeof(path), "/v1/jobs%s", q))
		return GF_EXIT_FAIL; /* cannot: room for both */
	return gf_remote_show(r, GF_HTTP_GET, path, NULL, table, NULL);
}

int cmd_jobs(int argc, char **argv)
{
	static const struct gf_cli_opt opts[] = {
		GF_OPT_ARG("state", 's'),  GF_OPT_ARG("name", 'n'),
		GF_OPT_ARG("node", 'N'),   GF_OPT_ARG("team", 't'),
		GF_OPT_ARG("since", 'S'),  GF_OPT_ARG("until", 'U'),
		GF_OPT_ARG("limit", 'l'),  GF_OPT_FLAG("expand", &expand),
		GF_OPT_ARG("before", 'b'), GF_OPT_CODE("all", 'a'),
		GF_OPT_CODE("runs", 'r'),  GF_OPT_END,
	};
	struct gf_remote r = { .cmd = CMD };
	struct list_args l = { 0 };
	bool runs = false;
	int c;
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.remote = &r;
	while ((c = gf_cli_next(&args)) != -1) {
		if (c != 'a' && c != 'r' && check(&args, c, optarg))
			break;
		const char **to = c == 's'   ? &l.state
				  : c == 'n' ? &l.name
				  : c == 'N' ? &l.node
				  : c == 't' ? &l.team
				  : c == 'S' ? &l.since
				  : c == 'U' ? &l.until
				  : c == 'l' ? &l.limit
				  : c == 'b' ? &l.before
					     : NULL;
		if (to)
			*to = optarg;
		l.all |= c == 'a';
		runs |= c == 'r';
	}
	if (args.rc >= 0)
		return args.rc;
	if (runs && optind == argc) {
		gf_cli_error(CMD, "--runs shows the runs of the jobs named: "
				  "give their IDs (see 'gpufleet jobs -h')");
		return GF_EXIT_USAGE;
	}
	if (optind < argc &&
	    (l.state || l.name || l.node || l.team || l.since || l.until ||
	     l.limit || l.before || l.all)) {
		gf_cli_error(CMD, "the list's filters do not go with job IDs "
				  "(see 'gpufleet jobs -h')");
		return GF_EXIT_USAGE;
	}
	int rc = gf_remote_setup(&r);
	if (rc)
		return rc;
	if (optind == argc)
		return list(&r, &l);
	for (int i = optind; i < argc && rc == 0; i++)
		rc = one(&r, argv[i], runs);
	return rc;
}

int cmd_history(int argc, char **argv)
{
	static const struct gf_cli_opt opts[] = { GF_OPT_END };
	struct gf_remote r = { .cmd = "history" };
	struct gf_cli_args args =
		GF_CLI_ARGS("history", argc, argv, opts, history_usage);
	args.remote = &r;
	int rc = gf_cli_options(&args);
	if (rc >= 0)
		return rc;
	if (optind == argc) {
		gf_cli_error("history", "say which job: gpufleet history ID "
					"(see 'gpufleet history -h')");
		return GF_EXIT_USAGE;
	}
	if ((rc = gf_remote_setup(&r)) != 0)
		return rc;
	for (int i = optind; i < argc && rc == 0; i++)
		rc = one(&r, argv[i], true);
	return rc;
}
