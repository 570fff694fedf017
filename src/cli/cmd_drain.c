/*
 * cmd_drain.c - `gpufleet drain NODE [--reason TEXT]` and `gpufleet
 * resume NODE`: an operator takes a node out of scheduling (nothing new
 * is placed there, what runs there finishes, as scontrol update
 * state=DRAIN) and puts it back.  Admin token; the controller keeps the
 * drain across restarts.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/buf.h"
#include "util/fmt.h"

static void usage_drain(FILE *f)
{
	fprintf(f, "usage: gpufleet drain [--reason TEXT] [--server URL] "
		   "[--token-file F] [--json] NODE\n"
		   "\n"
		   "Drain NODE: nothing new is placed there, the jobs running "
		   "there finish.\n'gpufleet nodes' shows it draining, then "
		   "drained once empty.  Admin token.\n\n"
		   "  --reason TEXT       why (shown with the node)\n" CONN_HELP
			   GF_CLI_EXIT_HELP);
}

static void usage_resume(FILE *f)
{
	fprintf(f, "usage: gpufleet resume [--server URL] [--token-file F] "
		   "[--json] NODE\n"
		   "\n"
		   "Resume a drained NODE: it takes work again.  Admin "
		   "token.\n\n" CONN_HELP GF_CLI_EXIT_HELP);
}

/* "NODE STATE", as the server now has it */
static void said(const struct gf_jv *v, const void *node)
{
	printf("%s %s\n", (const char *)node, gf_remote_str(v, "state"));
}

static int node_call(const char *cmd, int argc, char **argv,
		     void (*usage)(FILE *), bool drain)
{
	static const struct gf_cli_opt opts[] = {
		GF_OPT_ARG("reason", 'r'),
		GF_OPT_END,
	};
	struct gf_remote r = { .cmd = cmd };
	const char *reason = NULL;
	struct gf_cli_args args = GF_CLI_ARGS(cmd, argc, argv, opts, usage);
	args.remote = &r;
	while (gf_cli_next(&args) != -1) { /* --reason, the one left */
		if (!drain)
			return gf_cli_bad_option(cmd, argv);
		reason = optarg;
	}
	if (args.rc >= 0)
		return args.rc;
	if (argc - optind != 1) {
		gf_cli_error(cmd, "expected one node (see 'gpufleet %s -h')",
			     cmd);
		return GF_EXIT_USAGE;
	}
	const char *node = argv[optind];
	if (strlen(node) > 200) {
		gf_cli_error(cmd, "node name '%.40s...': too long", node);
		return GF_EXIT_USAGE;
	}
	int rc = gf_remote_setup(&r);
	if (rc)
		return rc;
	struct gf_buf body;
	struct gf_json j;
	gf_buf_init(&body, 4096);
	gf_json_init(&j, &body);
	if (reason) {
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "reason", reason);
		gf_json_obj_end(&j);
	}
	if (gf_json_error(&j)) {
		gf_buf_release(&body);
		gf_cli_error(cmd, "--reason: too long");
		return GF_EXIT_USAGE;
	}
	char path[256]; /* the name's length was checked above */
	if (gf_fmt(path, sizeof(path), "/v1/nodes/%s/%s", node,
		   drain ? "drain" : "resume")) {
		gf_buf_release(&body);
		gf_cli_error(cmd, "node name '%.40s...': too long", node);
		return GF_EXIT_USAGE;
	}
	rc = gf_remote_show(&r, GF_HTTP_POST, path,
			    reason ? gf_buf_str(&body) : NULL, said, node);
	gf_buf_release(&body);
	return rc;
}

int cmd_drain(int argc, char **argv)
{
	return node_call("drain", argc, argv, usage_drain, true);
}

int cmd_resume(int argc, char **argv)
{
	return node_call("resume", argc, argv, usage_resume, false);
}
