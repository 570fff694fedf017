/*
 * agent_cmd.h - `gpufleet agent` below the command line: its own options
 * (--listen, --interval, --counters, --diag-window, --xid-quiet and the
 * joining ones of agent_join.h), their checks, and the run: start the
 * service (agent.h), join a controller when asked, wait for SIGTERM or
 * SIGINT, stop.  cli/cmd_agent.c is the dispatch around it: usage, and
 * the options every command shares (node source, diagnosis thresholds,
 * connection limits).
 */
#ifndef GF_AGENT_CMD_H
#define GF_AGENT_CMD_H

#include <signal.h>
#include <stdio.h>

#include "agent/agent.h"
#include "agent/agent_join.h"

/* What the command line asks for; o.topo and o.diag are filled by the
 * caller's shared options. */
struct gf_agent_cmd {
	struct gf_agent_opts o;
	struct gf_counters counters;
	const char *counters_file;
	const char *interval_arg, *window_arg;
	struct gf_agent_join_args join;
};

void gf_agent_cmd_defaults(struct gf_agent_cmd *g);
/* Apply option c, one that needs taking apart ('i' --interval, 'w'
 * --diag-window, 'q' --xid-quiet, and gf_agent_join_option's; the
 * command line stores the others in g's fields itself): -1 when it is
 * not one of these, else 0 or an exit code (GF_AGENT_EXIT_USAGE) with
 * the error printed. */
int gf_agent_cmd_option(int c, const char *arg,
			struct gf_agent_cmd *g) GF_MUST_CHECK;
/* After parsing: --listen and the joining options; 0 or an exit code. */
int gf_agent_cmd_check(struct gf_agent_cmd *g) GF_MUST_CHECK;
/* Serve (and join, saying version) until a signal of stop (blocked by the
 * caller in this thread before: every thread started here inherits
 * that) arrives; an exit code. */
int gf_agent_cmd_run(struct gf_agent_cmd *g, const char *version,
		     const sigset_t *stop) GF_MUST_CHECK;

#endif
