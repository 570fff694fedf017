/*
 * cmd_cancel.c - `gpufleet cancel ID...`: cancel jobs, as scancel does.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"

#define CMD "cancel"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet cancel [--server URL] [--token-file F] "
		"[--json] ID...\n"
		"\n"
		"Cancel each job (j13, or 13 as scancel takes it): a pending "
		"one leaves the\nqueue, a running one releases its GPUs.  A finished job cannot be cancelled "
		"(409).\n\n" CONN_HELP GF_CLI_EXIT_HELP);
}

int cmd_cancel(int argc, char **argv)
{
	struct gf_remote r = { .cmd = CMD };
	int rc = gf_remote_options(&r, argc, argv, usage);
	if (rc >= 0)
		return rc;
	if (optind == argc) {
		gf_cli_error(CMD, "no job given (see 'gpufleet cancel -h')");
		return GF_EXIT_USAGE;
	}
	rc = gf_remote_setup(&r);
	if (rc)
		return rc;
	int ret = GF_EXIT_OK;
	for (int i = optind; i < argc; i++) {
		struct gf_client_answer a;
		const char *j = gf_remote_job_prefix(argv[i]);
		if (gf_remote_callf(&r, GF_HTTP_DELETE, NULL, &a,
				    "/v1/jobs/%s%s", j, argv[i]) != 0) {
			ret = GF_EXIT_FAIL; /* said; go on with the others */
			continue;
		}
		if (r.json && gf_remote_print(&a) != 0)
			ret = GF_EXIT_FAIL;
		else if (!r.json)
			printf("%s%s cancelled\n", j, argv[i]);
		gf_client_answer_release(&a);
	}
	return ret;
}
