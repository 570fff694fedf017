/*
 * cmd_cancel.c - `gpufleet cancel ID...`: cancel jobs, as scancel does.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/remote.h"

#define CMD "cancel"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet cancel [--server URL] [--token-file F] "
		"[--json] ID...\n"
		"\n"
		"Cancel each job: a pending one leaves the queue, a running "
		"one releases its\nGPUs.  A finished job cannot be cancelled "
		"(409).\n\n" CONN_HELP GF_CLI_EXIT_HELP);
}

int cmd_cancel(int argc, char **argv)
{
	static const struct option opts[] = { CONN_OPTIONS,
					      { NULL, 0, NULL, 0 } };
	struct gf_remote r = { .cmd = CMD };
	const char *server = NULL, *tokens = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			server = optarg;
			break;
		case 'T':
			tokens = optarg;
			break;
		case 'J':
			r.json = true;
			break;
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			return gf_cli_bad_option(CMD, argv);
		}
	}
	if (optind == argc) {
		gf_cli_error(CMD, "no job given (see 'gpufleet cancel -h')");
		return GF_EXIT_USAGE;
	}
	int rc = gf_remote_setup(&r, server, tokens), ret = GF_EXIT_OK;
	if (rc)
		return rc;
	for (int i = optind; i < argc; i++) {
		char path[256];
		snprintf(path, sizeof(path), "/v1/jobs/%.200s", argv[i]);
		struct gf_client_answer a;
		if (gf_remote_call(&r, GF_HTTP_DELETE, path, NULL, &a) != 0) {
			ret = GF_EXIT_FAIL; /* said; go on with the others */
			continue;
		}
		if (r.json)
			gf_remote_print(&a);
		else
			printf("%s cancelled\n", argv[i]);
		gf_client_answer_release(&a);
	}
	return ret;
}
