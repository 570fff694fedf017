/*
 * cmd_hold.c - `gpufleet hold|release|requeue ID...`: a job's flow as
 * Slurm's scontrol hold, release and requeue steer it (issue 21): hold a
 * pending job (it waits "held"), release it, put a running job back in
 * the queue.  An array's id acts on its tasks.  "13" means j13.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/fmt.h"

struct verb {
	const char *cmd;
	unsigned method;
	const char *route; /* after /v1/jobs/ID */
	const char *done;  /* "held" */
	const char *help;
};

static const struct verb verbs[] = {
	{ "hold", GF_HTTP_POST, "/hold", "held",
	  "Hold each pending job: it stays in the queue, reason \"held\", "
	  "and never\nstarts until released.  An array's id holds its "
	  "pending tasks.  A running\njob cannot be held (409): requeue "
	  "it first.\n\n" },
	{ "release", GF_HTTP_DELETE, "/hold", "released",
	  "Release each held job: it is scheduled again.  An array's id "
	  "releases its\nheld tasks.\n\n" },
	{ "requeue", GF_HTTP_POST, "/requeue", "requeued",
	  "Stop each running job and put it back in the queue, pending "
	  "(scontrol\nrequeue); it counts as a requeue, not a failure.  "
	  "An array's id requeues\nits running tasks.  A job that ended "
	  "is refused (409): submit it again.\n\n" },
};

static const struct verb *verb_now;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet %s [--server URL] [--token-file F] "
		"[--json] ID...\n\n%s" CONN_HELP GF_CLI_EXIT_HELP,
		verb_now->cmd, verb_now->help);
}

/* "j12 held", or "j12: 3 tasks held" for an array. */
static void said(const struct gf_jv *v, const char *id)
{
	const struct gf_jv *tasks = gf_jv_get(v, "tasks");
	if (tasks)
		printf("%s: %lld tasks %s\n", id,
		       (long long)gf_remote_num(v, "changed"), verb_now->done);
	else
		printf("%s %s\n", id, verb_now->done);
}

static int run(const struct verb *vb, int argc, char **argv)
{
	verb_now = vb;
	struct gf_remote r = { .cmd = vb->cmd };
	int rc = gf_remote_options(&r, argc, argv, usage);
	if (rc >= 0)
		return rc;
	if (optind == argc) {
		gf_cli_error(vb->cmd, "no job given (see 'gpufleet %s -h')",
			     vb->cmd);
		return GF_EXIT_USAGE;
	}
	rc = gf_remote_setup(&r);
	if (rc)
		return rc;
	int ret = GF_EXIT_OK;
	for (int i = optind; i < argc; i++) {
		const char *id = argv[i];
		struct gf_client_answer a;
		if (gf_remote_callf(&r, vb->method, NULL, &a, "/v1/jobs/%s%s%s",
				    gf_remote_job_prefix(id), id,
				    vb->route) != 0) {
			ret = GF_EXIT_FAIL; /* said; go on with the others */
			continue;
		}
		struct gf_jv *v = NULL;
		if (r.json) {
			if (gf_remote_print(&a) != 0)
				ret = GF_EXIT_FAIL;
		} else if (gf_jv_parse(gf_buf_str(&a.body), a.body.len, &v,
				       NULL) == 0) {
			said(v, gf_remote_str(v, "id"));
		}
		gf_jv_free(v);
		gf_client_answer_release(&a);
	}
	return ret;
}

int cmd_hold(int argc, char **argv)
{
	return run(&verbs[0], argc, argv);
}

int cmd_release(int argc, char **argv)
{
	return run(&verbs[1], argc, argv);
}

int cmd_requeue(int argc, char **argv)
{
	return run(&verbs[2], argc, argv);
}
