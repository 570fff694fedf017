/*
 * cli.h - what the command files share: the command table entry, exit
 * codes, and the node loading every topology-based command does.
 */
#ifndef GF_CLI_H
#define GF_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <gpufleet/err.h>

#ifndef GPUFLEET_VERSION
#define GPUFLEET_VERSION "0.1.0"
#endif

#include <gpufleet/node.h>
#include <gpufleet/sched.h>

#include "topo/source.h"

enum { GF_EXIT_OK = 0, GF_EXIT_FAIL = 1, GF_EXIT_USAGE = 2 };

/* The last line of every command's -h. */
#define GF_CLI_EXIT_HELP "\nexit status: 0 ok, 1 failure, 2 usage error\n"

struct gf_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_topo(int argc, char **argv);
int cmd_bind(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_simulate_mig(int argc, char **argv); /* simulate mig */
int cmd_report(int argc, char **argv);
int cmd_mig(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_drain(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_nodes(int argc, char **argv);
int cmd_autoscale(int argc, char **argv);
int cmd_simulate_autoscale(int argc, char **argv); /* simulate autoscale */
int cmd_simulate_replay(int argc, char **argv);	   /* simulate replay */
int cmd_chargeback(int argc, char **argv);
int cmd_slurm(int argc, char **argv);

/* Where a command's node comes from (--xml, --template, live). */
struct gf_node_opts {
	const char *cmd; /* for error messages */
	struct gf_node_source src;
};

/* getopt_long entries for the node source options, with their codes. */
#define GF_CLI_NODE_OPTIONS                                   \
	{ "xml", required_argument, NULL, 'x' },              \
		{ "nccl-xml", required_argument, NULL, 'X' }, \
		{ "template", required_argument, NULL, 't' }, \
		{ "this-system", no_argument, NULL, 'S' },    \
		{ "nvml", no_argument, NULL, 'N' },           \
	{                                                     \
		"no-nvml", no_argument, NULL, 'n'             \
	}

/* Apply option c (one of GF_CLI_NODE_OPTIONS); false when not one. */
bool gf_cli_node_option(int c, const char *arg, struct gf_node_opts *o);

/* Usage errors in the combination; GF_EXIT_USAGE or 0. */
int gf_cli_node_check(const struct gf_node_opts *o) GF_MUST_CHECK;

/*
 * Load and finish a node as the options say, joining NVML data when
 * asked.  Prints a one-line error and returns NULL on failure; the caller
 * frees with gf_node_free().
 */
struct gf_node *gf_cli_load_node(const struct gf_node_opts *o);

/* gf_cli_node_check, then gf_cli_load_node: 0 with *n (the caller frees
 * it with gf_node_free()), or the exit status, what was wrong said. */
int gf_cli_node_get(const struct gf_node_opts *o,
		    struct gf_node **n) GF_MUST_CHECK;

/* Print a node as `gpufleet topo` does (text or JSON, with findings);
 * GF_EXIT_OK or GF_EXIT_FAIL (message printed). */
int gf_cli_topo_print(struct gf_node *n, bool json, bool pcie) GF_MUST_CHECK;

/* getopt_long entries for diagnosis thresholds, and their parser: true
 * when c was one of them (false and an error printed when its value is
 * bad: *bad set). */
#define GF_CLI_DIAG_OPTIONS                               \
	{ "idle-util", required_argument, NULL, 1001 },   \
	{                                                 \
		"overprov", required_argument, NULL, 1002 \
	}
struct gf_diag_opts;
bool gf_cli_diag_option(const char *cmd, int c, const char *arg,
			struct gf_diag_opts *o, bool *bad);

/* getopt_long entries for the HTTP connection limits of serve and the
 * agent (src/server/server.h), and their parser: true when c was one of
 * them (with an error printed and *bad set when its value is bad).
 * --max-conns-per-client 0 means no limit (GF_SERVER_NO_LIMIT). */
#define GF_CLI_CONN_OPTIONS                                           \
	{ "max-conns", required_argument, NULL, 1101 },               \
	{                                                             \
		"max-conns-per-client", required_argument, NULL, 1102 \
	}
#define GF_CLI_CONN_HELP                                                     \
	"  --max-conns N       HTTP connections at once (default %u); past " \
	"it a few\n"                                                         \
	"                      more are answered 503, then clients wait\n"   \
	"  --max-conns-per-client N   from one client address (default %u; " \
	"0: no\n"                                                            \
	"                      limit); past it a new one is closed at once\n"
bool gf_cli_conn_option(const char *cmd, int c, const char *arg, unsigned *max,
			unsigned *per_client, bool *bad);

/* Print "gpufleet CMD: msg" on stderr. */
void gf_cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* --policy LIST (names, comma-separated, or "all") into out (room for
 * GF_POLICY_COUNT), *n set; a repeated name counts once.  -1 after
 * saying why as cmd. */
int gf_cli_policies(const char *cmd, const char *s, enum gf_policy *out,
		    int *n) GF_MUST_CHECK;

/*
 * Report a bad option the way every command does (one line, pointing at
 * -h) and return GF_EXIT_USAGE.  Call when getopt_long returns '?' or ':'
 * with opterr set to 0.
 */
int gf_cli_bad_option(const char *cmd, char **argv);

/* An option that only stores: its value into *str, or true into *flag.
 * A command's table of them ends with code 0. */
struct gf_cli_store {
	int code;
	const char **str;
	bool *flag;
};
/* Option c with its value arg stored as its row in store says: true, or
 * false when no row has code c. */
bool gf_cli_store_take(const struct gf_cli_store *store, int c,
		       const char *arg);

/*
 * The option loop every command runs: getopt_long over opts from argv[1]
 * with opterr off.  gf_cli_next() gives the next option's code, or -1
 * when the options end; -h (usage printed on stdout) and an unknown
 * option or a missing value (said as gf_cli_bad_option does) end them
 * too, with rc the exit status to return, which stays -1 otherwise.
 * What json, node, store, remote, policies and parse name is taken here,
 * never returned:
 *
 *	struct gf_cli_args a = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
 *	while ((c = gf_cli_next(&a)) != -1)
 *		switch (c) { ... }
 *	if (a.rc >= 0)
 *		return a.rc;
 */
struct gf_remote;
struct gf_cli_args {
	const char *cmd;
	int argc;
	char **argv;
	const struct option *opts;
	void (*usage)(FILE *);
	const char *shortopts; /* NULL: "h"; "+h" stops at an argument */
	bool *json; /* when set, --json (GF_CLI_OPT_JSON) sets it itself */
	struct gf_node_opts *node; /* when set, GF_CLI_NODE_OPTIONS go here */
	const struct gf_cli_store *store; /* options that only store */
	/* when set, the connection options (CONN_OPTIONS) go here */
	struct gf_remote *remote;
	/* when set, --policy LIST (code 'P') goes here as gf_cli_policies
	 * takes it; a bad list ends the options with rc GF_EXIT_USAGE */
	enum gf_policy *policies;
	int *npolicies;
	/* when set, every other option goes to parse(code, value, ctx):
	 * nonzero ends the options with "cannot parse '--NAME VALUE'" said
	 * and rc GF_EXIT_USAGE */
	int (*parse)(int c, const char *arg, void *ctx);
	void *ctx;
	int index; /* the long option's row in opts */
	int rc;
	bool started;
};
#define GF_CLI_ARGS(cmd_, argc_, argv_, opts_, usage_)           \
	{                                                        \
		.cmd = (cmd_), .argc = (argc_), .argv = (argv_), \
		.opts = (opts_), .usage = (usage_), .rc = -1     \
	}
int gf_cli_next(struct gf_cli_args *a);

/* The whole loop, for a command whose every option is taken by what a
 * names (json, node, store, remote, policies, parse): a->rc. */
int gf_cli_options(struct gf_cli_args *a);

/* --json, for a command whose gf_cli_args.json points at its flag. */
#define GF_CLI_OPT_JSON                        \
	{                                      \
		"json", no_argument, NULL, 'j' \
	}

/* The last rows of a command's option table: --help and the end. */
#define GF_CLI_OPTS_END                     \
	{ "help", no_argument, NULL, 'h' }, \
	{                                   \
		NULL, 0, NULL, 0            \
	}

/* Arguments left after the options: "unexpected argument 'X'" said and
 * GF_EXIT_USAGE, or 0 when there are none. */
int gf_cli_no_args(const char *cmd, int argc, char **argv) GF_MUST_CHECK;

/*
 * A command made of subcommands (`gpufleet mig plan ...`): argv[1] names
 * one of table (ended by a NULL name), which runs with argv from there;
 * -h or --help prints usage.  No name: missing said; a name not in the
 * table: "unknown WHAT 'NAME' KNOWN".  The exit status.  The texts left
 * NULL are made from the table's names: missing "say what: a, b or c (see
 * 'gpufleet CMD -h')", what "subcommand", known "(known: a, b, c)".
 */
struct gf_cli_subs {
	const char *cmd;
	void (*usage)(FILE *);
	const char *missing; /* or NULL */
	const char *what;    /* "experiment", or NULL */
	const char *known;   /* or NULL */
	const struct gf_cmd *table;
};
int gf_cli_subcommand(const struct gf_cli_subs *s, int argc,
		      char **argv) GF_MUST_CHECK;

/* An option's value s (opt "--gpus") copied into buf to be taken
 * apart: 0, or -1 with "cannot parse 'OPT S': longer than N bytes" said
 * as cmd. */
int gf_cli_arg_copy(const char *cmd, const char *opt, const char *s, char *buf,
		    size_t size) GF_MUST_CHECK;

/* run(arg, p) with a progress line on stderr headed "gpufleet CMD" (none
 * when no thread can draw it: the same run); what run returns. */
struct gf_progress;
int gf_cli_with_progress(const char *cmd,
			 int (*run)(void *arg, struct gf_progress *p),
			 void *arg);

/* Write a whole buffer to stdout; 0 or GF_EXIT_FAIL. */
int gf_cli_print(const char *s, unsigned long len) GF_MUST_CHECK;

#endif
