/*
 * cli.h - what the command files share: the command table entry, exit
 * codes, and the node loading every topology-based command does.
 */
#ifndef GF_CLI_H
#define GF_CLI_H

#include <getopt.h>
#include <limits.h>
#include <signal.h>
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
#include "util/duration.h"

enum { GF_EXIT_OK = 0, GF_EXIT_FAIL = 1, GF_EXIT_USAGE = 2 };

/* The last line of every command's -h. */
#define GF_CLI_EXIT_HELP "\nexit status: 0 ok, 1 failure, 2 usage error\n"

/* A row of the command table (main.c): a command; or a group of
 * subcommands (`gpufleet mig plan`), with fn NULL and usage set, whose
 * subcommands are the rows named "GROUP SUB" (summary NULL). */
struct gf_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;   /* NULL for a subcommand */
	void (*usage)(FILE *); /* a group's -h */
	/* what a group says (gf_cli_subcommand), or NULL */
	const char *missing, *what, *known;
};

int cmd_topo(int argc, char **argv);
int cmd_bind(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_simulate_fill(int argc, char **argv); /* simulate fill */
int cmd_simulate_mig(int argc, char **argv);  /* simulate mig */
int cmd_report(int argc, char **argv);
void gf_cli_simulate_usage(FILE *f); /* the groups' -h */
void gf_cli_mig_usage(FILE *f);
void gf_cli_slurm_usage(FILE *f);
void gf_cli_autoscale_usage(FILE *f);
int cmd_mig_plan(int argc, char **argv);
int cmd_mig_validate(int argc, char **argv);
int cmd_mig_apply(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* submit's options (cmd_submit.c) as cmd's, into r (set up) and b (the
 * request body of POST /v1/jobs; the command is what follows the options
 * in argv, from optind): -1 to go on, else the exit status (-h answered
 * with help, a bad option said). */
struct gf_remote;
struct gf_buf;
int gf_cli_submit_body(const char *cmd, int argc, char **argv,
		       void (*help)(FILE *), struct gf_remote *r,
		       struct gf_buf *b);
/* A command word appended to b: with quote, preceded by a space unless
 * first and single-quoted for /bin/sh when it holds anything but
 * [A-Za-z0-9_./=:,+@%^-]; without, as it is (a lone word after -- is a
 * shell command line already: `submit -- "make -j8 && ./a.out"`). */
void gf_cli_shell_word(struct gf_buf *b, const char *w, bool quote);
int cmd_jobs(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
/* cmd_hold.c: a job's flow (issue 21) */
int cmd_hold(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_requeue(int argc, char **argv);
/* jobs_array.c: job j (the i-th of the list jobs) is an array's task:
 * true, and the array's one line printed when it is the first of its
 * tasks in the list (`gpufleet jobs` without --expand) */
struct gf_jv;
bool gf_cli_jobs_array(const struct gf_jv *jobs, size_t i);
int cmd_drain(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_nodes(int argc, char **argv);
int cmd_autoscale_recommend(int argc, char **argv);
int cmd_autoscale_run(int argc, char **argv);
int cmd_autoscale_manifests(int argc, char **argv);
int cmd_simulate_autoscale(int argc, char **argv); /* simulate autoscale */
int cmd_simulate_replay(int argc, char **argv);	   /* simulate replay */
int cmd_chargeback(int argc, char **argv);
int cmd_slurm_gres(int argc, char **argv);

/* Where a command's node comes from (--xml, --template, live). */
struct gf_node_opts {
	const char *cmd; /* for error messages */
	struct gf_node_source src;
};

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

/* The rows of the diagnosis thresholds (--idle-util, --overprov), into
 * d (a struct gf_diag_opts *). */
#define GF_CLI_DIAG_OPTS(d)                                                    \
	GF_OPT_REAL("idle-util", &(d)->idle_util_pct, 0, 100, "a percentage"), \
		GF_OPT_REAL("overprov", &(d)->overprov_frac, 0, 1, "a share")

/* The rows of the HTTP connection limits of serve and the agent
 * (src/server/server.h): --max-conns into *max (unsigned *), and
 * --max-conns-per-client into *per (long *, -1 before), which
 * gf_cli_conn_limits() then puts into the server's option. */
#define GF_CLI_CONN_OPTS(max, per)                                      \
	GF_OPT_NUM("max-conns", max, 1, 1000000, "a connection count"), \
		GF_OPT_NUM("max-conns-per-client", per, 0, 1000000,     \
			   "a connection count (0: no limit)")
#define GF_CLI_CONN_HELP                                                     \
	"  --max-conns N       HTTP connections at once (default %u); past " \
	"it a few\n"                                                         \
	"                      more are answered 503, then clients wait\n"   \
	"  --max-conns-per-client N   from one client address (default %u; " \
	"0: no\n"                                                            \
	"                      limit); past it a new one is closed at once\n"
/* --max-conns-per-client per (-1: not given) into *out: 0 is no limit
 * (GF_SERVER_NO_LIMIT). */
void gf_cli_conn_limits(long per, unsigned *out);

/* Print "gpufleet CMD: msg" on stderr. */
void gf_cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* --policy LIST (names, comma-separated, or "all") into out (room for
 * GF_POLICY_COUNT), *n set; a repeated name counts once.  -1 after
 * saying why as cmd. */
int gf_cli_policies(const char *cmd, const char *s, enum gf_policy *out,
		    int *n) GF_MUST_CHECK;
/* --fgdplus-without LIST (NULL: none) into *mask: 0, or GF_EXIT_USAGE
 * after saying why as cmd. */
int gf_cli_fgdplus_without(const char *cmd, const char *s,
			   unsigned *mask) GF_MUST_CHECK;

/*
 * Report a bad option the way every command does (one line, pointing at
 * -h) and return GF_EXIT_USAGE.  Call when getopt_long returns '?' or ':'
 * with opterr set to 0.
 */
int gf_cli_bad_option(const char *cmd, char **argv);

/*
 * The option layer.  A command declares its options as one table of
 * gf_cli_opt rows, ended by GF_OPT_END; a row names the long option, the
 * kind of its value and where it goes:
 *
 *	GF_OPT_STR("hpa", &hpa)                  the value (const char *)
 *	GF_OPT_FLAG("dry-run", &dry)             true (bool)
 *	GF_OPT_NUM("count", &n, 1, 64, "a GPU count")
 *	                  a whole number from 1 to 64 (int, long, long long
 *	                  or unsigned, as the target is; GF_CLI_NO_MAX: none)
 *	GF_OPT_REAL("tune", &f, 0, 100, "a factor")    a double from 0 to 100
 *	GF_OPT_ABOVE("load", &f, 0, 10, "a number")    above 0, at most 10
 *	GF_OPT_ARG("gpus", 'g')    a value the command takes apart itself:
 *	                           gf_cli_next() returns 'g', the value in
 *	                           optarg
 *	GF_OPT_CODE("all", 'a')    no value: gf_cli_next() returns 'a'
 *	GF_OPT_SET("nvml", &i, 1)  no value: 1 into the int i
 *	GF_OPT_LIST("sacct", files, &n)   repeatable: each value into the
 *	                           array files (const char *[N]), n of them;
 *	                           more than N said
 *	GF_OPT_DURATION("interval", &s, 1, 86400, GF_DUR_BARE_S)
 *	                  a duration (util/duration.h: "90s", "1:30",
 *	                  "2-12") from 1 s to 1 d, in whole seconds (int,
 *	                  long or long long; double: any fraction); a bare
 *	                  number in the last argument's unit
 *	GF_OPT_DURATION_MS("tick", &ms, 0.001, 60, GF_DUR_BARE_MS)
 *	                  the same in whole milliseconds
 *
 * A number that is not one, or out of its range, is said as
 *	cannot parse '--count x': expected a GPU count from 1 to 64
 * and ends the options with rc GF_EXIT_USAGE.
 */
enum gf_cli_kind {
	GF_CLI_CODE,   /* no value; the row's code handed back */
	GF_CLI_ARG,    /* a value; the code handed back, the value in optarg */
	GF_CLI_STR,    /* const char *: the value */
	GF_CLI_FLAG,   /* bool: true */
	GF_CLI_INT,    /* int, from min to max */
	GF_CLI_LONG,   /* long */
	GF_CLI_LLONG,  /* long long */
	GF_CLI_UINT,   /* unsigned */
	GF_CLI_ULLONG, /* unsigned long long: any, min and max unused */
	GF_CLI_DOUBLE, /* double, from dmin to dmax (above dmin: min 1) */
	GF_CLI_SET,    /* no value; int: min */
	GF_CLI_LIST,   /* const char *[max]: one more value, *count of them */
	/* durations (util/duration.h): dmin..dmax seconds; min is the unit
	 * of a bare number and max the target's unit, in ms */
	GF_CLI_DUR_INT,
	GF_CLI_DUR_LONG,
	GF_CLI_DUR_LLONG,
	GF_CLI_DUR_DOUBLE,
};
struct gf_cli_opt {
	const char *name; /* the long option, without "--" */
	enum gf_cli_kind kind;
	int code; /* GF_CLI_CODE and GF_CLI_ARG: what gf_cli_next() returns */
	void *to; /* the other kinds: where the value goes */
	long long min, max;
	double dmin, dmax;
	const char *noun; /* numbers: what one is, for the error */
	int *count;	  /* GF_CLI_LIST: the values in to so far */
};
#define GF_CLI_NO_MAX LLONG_MAX
#define GF_OPT_ROW(n, k, c, p, lo, hi, dlo, dhi, what)                     \
	{                                                                  \
		(n), (k), (c), (p), (lo), (hi), (dlo), (dhi), (what), NULL \
	}
#define GF_CLI_INT_KIND(p) \
	_Generic((p), int *: GF_CLI_INT, long *: GF_CLI_LONG,      \
		 long long *: GF_CLI_LLONG, unsigned *: GF_CLI_UINT, \
		 unsigned long long *: GF_CLI_ULLONG)
#define GF_OPT_CODE(n, c)   GF_OPT_ROW(n, GF_CLI_CODE, c, NULL, 0, 0, 0, 0, NULL)
#define GF_OPT_ARG(n, c)    GF_OPT_ROW(n, GF_CLI_ARG, c, NULL, 0, 0, 0, 0, NULL)
#define GF_OPT_STR(n, p)    GF_OPT_ROW(n, GF_CLI_STR, 0, p, 0, 0, 0, 0, NULL)
#define GF_OPT_FLAG(n, p)   GF_OPT_ROW(n, GF_CLI_FLAG, 0, p, 0, 0, 0, 0, NULL)
#define GF_OPT_SET(n, p, v) GF_OPT_ROW(n, GF_CLI_SET, 0, p, v, 0, 0, 0, NULL)
#define GF_OPT_NUM(n, p, lo, hi, what) \
	GF_OPT_ROW(n, GF_CLI_INT_KIND(p), 0, p, lo, hi, 0, 0, what)
#define GF_OPT_REAL(n, p, lo, hi, what) \
	GF_OPT_ROW(n, GF_CLI_DOUBLE, 0, p, 0, 0, lo, hi, what)
/* A double above lo (not lo itself) and at most hi. */
#define GF_OPT_ABOVE(n, p, lo, hi, what) \
	GF_OPT_ROW(n, GF_CLI_DOUBLE, 0, p, 1, 0, lo, hi, what)
#define GF_OPT_LIST(n, arr, cnt)                                               \
	{                                                                      \
		(n), GF_CLI_LIST, 0, (arr), 0, sizeof(arr) / sizeof((arr)[0]), \
			0, 0, NULL, (cnt)                                      \
	}
#define GF_CLI_DUR_KIND(p) \
	_Generic((p), int *: GF_CLI_DUR_INT, long *: GF_CLI_DUR_LONG, \
		 long long *: GF_CLI_DUR_LLONG, double *: GF_CLI_DUR_DOUBLE)
#define GF_OPT_DURATION(n, p, lo, hi, bare)                               \
	GF_OPT_ROW(n, GF_CLI_DUR_KIND(p), 0, p, (long long)((bare)*1000), \
		   1000, lo, hi, NULL)
#define GF_OPT_DURATION_MS(n, p, lo, hi, bare)                               \
	GF_OPT_ROW(n, GF_CLI_DUR_KIND(p), 0, p, (long long)((bare)*1000), 1, \
		   lo, hi, NULL)
#define GF_OPT_END GF_OPT_ROW(NULL, GF_CLI_CODE, 0, NULL, 0, 0, 0, 0, NULL)

/* Rows at the most in a table, with those gf_cli_args adds. */
#define GF_CLI_OPTS_MAX 64

/*
 * The option loop every command runs: getopt_long over the table opts
 * (and the rows json, node, remote and policies add, and --help) from
 * argv[1], opterr off.  gf_cli_next() gives the code of the next
 * GF_OPT_CODE or GF_OPT_ARG row, or -1 when the options end; -h (usage
 * printed on stdout), an unknown option or a missing value (said as
 * gf_cli_bad_option does) and a bad value end them too, with rc the exit
 * status to return, which stays -1 otherwise.  Every other row, and what
 * json, node, remote and policies name, is taken here:
 *
 *	const struct gf_cli_opt opts[] = { ..., GF_OPT_END };
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
	const struct gf_cli_opt *opts;
	void (*usage)(FILE *);
	const char *shortopts;	   /* NULL: "h"; "+h" stops at an argument */
	bool *json;		   /* when set, --json sets it */
	struct gf_node_opts *node; /* when set, --xml, --nccl-xml, --template,
				      --this-system, --nvml, --no-nvml */
	/* when set, --server, --token-file, --json, --ca, --insecure-http */
	struct gf_remote *remote;
	/* when set, --policy LIST goes here as gf_cli_policies takes it; a
	 * bad list ends the options with rc GF_EXIT_USAGE */
	enum gf_policy *policies;
	int *npolicies;
	/* when set, an argument left after the options ends them with rc
	 * GF_EXIT_USAGE, said as gf_cli_no_args says it */
	bool no_args;
	struct gf_cli_opt group[16]; /* the rows of json, node and remote */
	int index;		     /* the long option's row in built */
	unsigned long long given;    /* bit i: built[i] was given */
	int rc;
	bool started;
	struct option built[GF_CLI_OPTS_MAX]; /* getopt_long's table */
};
#define GF_CLI_ARGS(cmd_, argc_, argv_, opts_, usage_)           \
	{                                                        \
		.cmd = (cmd_), .argc = (argc_), .argv = (argv_), \
		.opts = (opts_), .usage = (usage_), .rc = -1     \
	}
int gf_cli_next(struct gf_cli_args *a);

/* The whole loop, for a command none of whose rows hands a code back:
 * a->rc. */
int gf_cli_options(struct gf_cli_args *a);

/* Whether the long option name (without "--") was given so far. */
bool gf_cli_given(const struct gf_cli_args *a, const char *name);

/* The value of the option gf_cli_next() just returned is bad: "cannot
 * parse '--NAME VALUE': WHY" said (WHY as printf makes it from fmt),
 * a->rc set, and GF_EXIT_USAGE. */
int gf_cli_bad_value(struct gf_cli_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Arguments left after the options: "unexpected argument 'X' (see
 * 'gpufleet CMD -h')" said and
 * GF_EXIT_USAGE, or 0 when there are none. */
int gf_cli_no_args(const char *cmd, int argc, char **argv) GF_MUST_CHECK;

/*
 * The group g's subcommand (`gpufleet mig plan ...`): argv[1] names one
 * of the rows "GROUP NAME" of table (n rows), which runs with argv from
 * there; -h or --help prints g's usage.  No name: g's missing said; a
 * name not in the table: "unknown WHAT 'NAME' KNOWN".  The exit status.
 * The texts g leaves NULL are made from the rows' names: missing "say
 * what: a, b or c (see 'gpufleet GROUP -h')", what "subcommand", known
 * "(known: a, b, c)".
 */
int gf_cli_subcommand(const struct gf_cmd *table, size_t n,
		      const struct gf_cmd *g, int argc,
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

/* The output rendered into b, written as gf_cli_print does, unless rc
 * (what rendering it returned) or b's error says it did not fit: then
 * "cannot write the output: larger than N MiB" said as cmd.  GF_EXIT_OK
 * or GF_EXIT_FAIL; b stays the caller's to release. */
struct gf_buf;
int gf_cli_print_buf(const char *cmd, int rc,
		     const struct gf_buf *b) GF_MUST_CHECK;

/* Block SIGTERM and SIGINT in this thread and every thread it starts from
 * now on, for a daemon's main thread to wait for one in set (sigwait). */
void gf_cli_block_stop(sigset_t *set);

/* Write a whole buffer to stdout; 0 or GF_EXIT_FAIL. */
int gf_cli_print(const char *s, unsigned long len) GF_MUST_CHECK;

#endif
