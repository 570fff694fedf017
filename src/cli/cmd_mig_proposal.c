/*
 * cmd_mig_proposal.c - `gpufleet mig proposal`: the MIG layouts the
 * controller's pending demand wants (GET /v1/mig/proposal), as a table or
 * the server's JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/mig_cli.h"
#include "cli/remote.h"

#define CMD "mig proposal"

void gf_mig_proposal_help(FILE *f)
{
	fprintf(f,
		"gpufleet mig proposal [--server URL] [--token-file F] "
		"[--json]\n"
		"  The MIG layouts the controller's pending MIG demand wants: "
		"for each GPU it\n"
		"  would change (only GPUs with no instance in use), the "
		"layout now and the\n"
		"  one proposed; for each profile asked, how many instances "
		"free ones meet\n"
		"  now and would meet.  With the config's agents: "
		"mig_auto_apply, the\n"
		"  controller applies it through the nodes' agents.\n"
		"%s",
		CONN_HELP);
}

/* "1g.10gb@0 1g.10gb@1 ..." of an instance list. */
static void instances(const struct gf_jv *l)
{
	for (size_t i = 0; i < gf_jv_len(l); i++) {
		const struct gf_jv *x = gf_jv_at(l, i);
		printf("%s%s@%lld", i ? " " : "", gf_remote_str(x, "profile"),
		       (long long)gf_remote_num(x, "start"));
	}
	if (gf_jv_len(l) == 0)
		printf("(none)");
}

static void print(const struct gf_jv *v)
{
	const struct gf_jv *ch = gf_jv_get(v, "changes");
	const struct gf_jv *d = gf_jv_get(v, "demand");
	if (gf_jv_len(ch) == 0)
		printf("no change proposed\n");
	for (size_t i = 0; i < gf_jv_len(ch); i++) {
		const struct gf_jv *c = gf_jv_at(ch, i);
		printf("%s GPU %lld (%s)\n  now:      ",
		       gf_remote_str(c, "node"),
		       (long long)gf_remote_num(c, "gpu"),
		       gf_remote_str(c, "model"));
		instances(gf_jv_get(c, "current"));
		printf("\n  proposed: ");
		instances(gf_jv_get(c, "layout"));
		printf("\n");
	}
	if (gf_jv_len(d))
		printf("\n%-10s %-12s %8s %8s %8s\n", "MODEL", "PROFILE",
		       "PENDING", "MET_NOW", "MET_THEN");
	for (size_t i = 0; i < gf_jv_len(d); i++) {
		const struct gf_jv *x = gf_jv_at(d, i);
		const char *m = gf_jv_str(gf_jv_get(x, "model"));
		printf("%-10s %-12s %8lld %8lld %8lld\n", m ? m : "any",
		       gf_remote_str(x, "profile"),
		       (long long)gf_remote_num(x, "count"),
		       (long long)gf_remote_num(x, "met_before"),
		       (long long)gf_remote_num(x, "met_after"));
	}
}

int gf_cmd_mig_proposal(int argc, char **argv)
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
			printf("usage: ");
			gf_mig_proposal_help(stdout);
			fputs(GF_CLI_EXIT_HELP, stdout);
			return GF_EXIT_OK;
		default:
			return gf_cli_bad_option(CMD, argv);
		}
	}
	if (optind < argc) {
		gf_cli_error(CMD, "unexpected argument '%s'", argv[optind]);
		return GF_EXIT_USAGE;
	}
	int rc = gf_remote_setup(&r, server, tokens);
	struct gf_client_answer a;
	if (rc || (rc = gf_remote_call(&r, GF_HTTP_GET, "/v1/mig/proposal",
				       NULL, &a)) != 0)
		return rc;
	if (r.json) {
		rc = gf_remote_print(&a);
	} else {
		struct gf_jv *v = gf_remote_json(&r, &a);
		rc = v ? GF_EXIT_OK : GF_EXIT_FAIL;
		if (v)
			print(v);
		gf_jv_free(v);
	}
	gf_client_answer_release(&a);
	return rc;
}
