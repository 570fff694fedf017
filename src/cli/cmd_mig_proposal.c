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

static void print(const struct gf_jv *v, const void *arg)
{
	(void)arg;
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

static void usage(FILE *f)
{
	fputs("usage: ", f);
	gf_mig_proposal_help(f);
	fputs(GF_CLI_EXIT_HELP, f);
}

int gf_cmd_mig_proposal(int argc, char **argv)
{
	return gf_remote_get_command(CMD, argc, argv, usage, "/v1/mig/proposal",
				     print);
}
