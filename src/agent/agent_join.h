/*
 * agent_join.h - the `gpufleet agent` options that join a controller
 * (--controller, --name, --token-file, --label, --block, --state-dir,
 * --address, --kill-grace, --one-connection) and starting the link with
 * them.
 */
#ifndef GF_AGENT_JOIN_ARGS_H
#define GF_AGENT_JOIN_ARGS_H

#include <stdbool.h>

#include "agent/join.h"
#include "server/auth.h"
#include "topo/source.h"

/* The command's exit codes (cli/cli.h's GF_EXIT_*, which cli/cmd_agent.c
 * checks they equal). */
enum { GF_AGENT_EXIT_OK = 0, GF_AGENT_EXIT_FAIL = 1, GF_AGENT_EXIT_USAGE = 2 };

/* Print "gpufleet agent: msg" on stderr (as every command says errors). */
void gf_agent_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct gf_agent_join_args {
	char controller[512]; /* "" : not joining */
	const char *name, *token_file, *state_dir, *address;
	const char *block;   /* the block a gang stays inside; NULL */
	const char *ca;	     /* --ca FILE: the controller's CA, or NULL */
	bool insecure_http;  /* --insecure-http */
	bool one_connection; /* --one-connection: no long poll */
	/* --default-user LOGIN: who a job without a user runs as; NULL:
	 * the agent's own user (issue 21) */
	const char *default_user;
	char labels[256];
	int64_t kill_grace_ms;
	char host[64], addr_buf[64];
	char token[GF_AUTH_TOKEN_MAX + 1];
	struct gf_node *node;
	char *topology;
	struct gf_join *join;
};

void gf_agent_join_defaults(struct gf_agent_join_args *a);
/* Apply option c, one that needs taking apart ('C' --controller, 'L'
 * --label, 'B' --block, 'G' --kill-grace; the command line stores the
 * others in a's fields itself); false when it is not one of these (*rc:
 * an exit code after a bad value). */
bool gf_agent_join_option(int c, const char *arg, struct gf_agent_join_args *a,
			  int *rc);
/* After parsing: usage errors, defaults (name: the host name; address:
 * the --listen host unless 0.0.0.0, else the name).  0 or an exit code. */
int gf_agent_join_check(struct gf_agent_join_args *a,
			const char *listen) GF_MUST_CHECK;
/* Start the link (nothing without --controller): 0 or an exit code with
 * the error printed. */
int gf_agent_join_start(struct gf_agent_join_args *a,
			const struct gf_node_source *topo,
			struct gf_agent *agent,
			const char *version) GF_MUST_CHECK;
void gf_agent_join_stop(struct gf_agent_join_args *a);

#endif
