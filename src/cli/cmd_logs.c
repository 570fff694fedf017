/*
 * cmd_logs.c - `gpufleet logs JOB [--replica R] [--attempt A] [--follow]`:
 * a job's output, from whichever node ran it, through the controller's
 * GET /v1/jobs/{id}/logs (ctl_logs.c), printed as it comes.  Also the
 * stream `gpufleet run` reads (gf_cli_logs_stream).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/fmt.h"
#include "util/json.h"

#define CMD "logs"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet logs [--replica R] [--attempt A] [--follow] "
		"[--server URL]\n"
		"                     [--token-file F] JOB\n"
		"\n"
		"Print a job's output (stdout and stderr) from the node that "
		"ran it.  Each\nattempt's log begins with a line '==> gpufleet: "
		"JOB replica R attempt A on\nNODE started TIME <==' and, once "
		"it ended, ends with one saying why\n('... ended TIME: exit "
		"code 3 <==').  A team's token reads only its team's\njobs.\n\n"
		"  --replica R         which replica (default 0)\n"
		"  --attempt A         which attempt, 1.. (default: the last)\n"
		"  --follow            keep printing as it comes, until that "
		"attempt ends\n" CONN_HELP GF_CLI_EXIT_HELP);
}

/* What a sink writes to: stdout, or (route) marker lines to stderr. */
struct out {
	size_t *seen; /* bytes of the log printed already (skipped) */
	size_t skip;
	bool route;	 /* marker lines to stderr */
	bool line_start; /* the next byte begins a line */
	FILE *to;	 /* where the current line goes */
	char head[16];	 /* a line's first bytes, until they tell */
	size_t nhead;
};

#define MARK	"==> gpufleet: "
#define MARKLEN (sizeof(MARK) - 1)

static int put(struct out *o, const char *p, size_t n)
{
	return n && fwrite(p, 1, n, o->to) != n ? -EIO : 0;
}

/* A line's first bytes are known (or its end came): where it goes. */
static int decide(struct out *o)
{
	o->to = o->nhead == MARKLEN && !memcmp(o->head, MARK, MARKLEN) ? stderr
								       : stdout;
	if (o->to == stderr)
		fflush(stdout);
	int rc = put(o, o->head, o->nhead);
	o->nhead = 0;
	return rc;
}

static int sink(const void *data, size_t n, void *arg)
{
	struct out *o = arg;
	const char *p = data;
	if (o->skip) { /* printed by an earlier stream of this run */
		size_t k = n < o->skip ? n : o->skip;
		o->skip -= k;
		p += k;
		n -= k;
	}
	if (o->seen)
		*o->seen += n;
	if (!o->route) {
		int rc = put(o, p, n);
		fflush(stdout);
		return rc;
	}
	while (n > 0) {
		if (o->line_start) {
			o->line_start = false;
			o->nhead = 0;
			o->to = NULL;
		}
		if (!o->to) { /* the head of a line: gather it */
			while (n > 0 && o->nhead < MARKLEN && *p != '\n') {
				o->head[o->nhead++] = *p++;
				n--;
			}
			if (n == 0 && o->nhead < MARKLEN)
				break; /* wait for the rest of its head */
			if (decide(o))
				return -EIO;
		}
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) + 1 : n;
		if (put(o, p, k))
			return -EIO;
		p += k;
		n -= k;
		if (nl) {
			o->line_start = true;
			if (o->to == stderr)
				fflush(stderr);
		}
	}
	fflush(stdout);
	return 0;
}

int gf_cli_logs_stream(const struct gf_remote *r, const char *job, int replica,
		       int attempt, bool follow, bool route,
		       atomic_bool *cancel, size_t *seen)
{
	char esc[3 * 64 + 1], url[sizeof(r->base) + GF_REMOTE_PATH_MAX];
	if (gf_client_escape(job, esc, sizeof(esc)) != 0 ||
	    gf_fmt(url, sizeof(url),
		   "%s/v1/jobs/%s/logs?replica=%d&attempt=%d%s", r->base, esc,
		   replica, attempt, follow ? "&follow=1" : "") != 0) {
		gf_cli_error(r->cmd, "no job '%.40s...': id too long", job);
		return GF_EXIT_USAGE;
	}
	struct out o = { .seen = seen,
			 .skip = seen ? *seen : 0,
			 .route = route,
			 .line_start = true,
			 .to = stdout };
	struct gf_client_req q = { .url = url,
				   .token = r->token[0] ? r->token : NULL,
				   .ca = r->ca,
				   .insecure_http = r->insecure_http,
				   .accept = "text/plain",
				   .cancel = cancel,
				   .sink = sink,
				   .sink_arg = &o };
	struct gf_client_answer a;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_client_request(NULL, &q, &a, &e);
	if (o.nhead && !o.to) /* a last line without its newline */
		(void)decide(&o);
	fflush(stdout);
	if (rc == -ECANCELED && cancel && atomic_load(cancel)) {
		gf_client_answer_release(&a);
		return GF_EXIT_OK; /* the caller stopped it */
	}
	if (rc != 0) {
		gf_cli_error(r->cmd, "%s", e.msg);
		gf_client_answer_release(&a);
		return GF_EXIT_FAIL;
	}
	if (a.status < 200 || a.status >= 300) {
		struct gf_jv *v = NULL;
		const char *detail = NULL;
		if (gf_jv_parse(gf_buf_str(&a.body), a.body.len, &v, &e) == 0)
			detail = gf_jv_str(gf_jv_get(v, "detail"));
		gf_cli_error(r->cmd, "%ld: %s", a.status,
			     detail ? detail : gf_buf_str(&a.body));
		gf_jv_free(v);
		gf_client_answer_release(&a);
		return GF_EXIT_FAIL;
	}
	gf_client_answer_release(&a);
	return GF_EXIT_OK;
}

int cmd_logs(int argc, char **argv)
{
	int replica = 0, attempt = 0;
	bool follow = false;
	const struct gf_cli_opt opts[] = {
		GF_OPT_NUM("replica", &replica, 0, 1023, "a replica"),
		GF_OPT_NUM("attempt", &attempt, 1, 1000000000, "an attempt"),
		GF_OPT_FLAG("follow", &follow),
		GF_OPT_END,
	};
	struct gf_remote r = { .cmd = CMD };
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.remote = &r;
	while (gf_cli_next(&args) != -1)
		;
	if (args.rc >= 0)
		return args.rc;
	if (optind != argc - 1) {
		gf_cli_error(CMD, "%s (see 'gpufleet logs -h')",
			     optind == argc ? "no job given" : "one job only");
		return GF_EXIT_USAGE;
	}
	int rc = gf_remote_setup(&r);
	if (rc)
		return rc;
	const char *job = argv[optind];
	char id[64];
	if (gf_fmt(id, sizeof(id), "%s%s", gf_remote_job_prefix(job), job) == 0)
		job = id;
	return gf_cli_logs_stream(&r, job, replica, attempt, follow, false,
				  NULL, NULL);
}
