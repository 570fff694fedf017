/*
 * remote.h - what the controller's clients share (`gpufleet submit`,
 * `jobs`, `cancel`, `nodes`): the server's address and token, one
 * exchange with the server's errors printed, and reading its JSON.
 */
#ifndef GF_CLI_REMOTE_H
#define GF_CLI_REMOTE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <gpufleet/err.h>

#include "server/auth.h"
#include "server/client.h"
#include "util/json.h"

#define DEFAULT_SERVER "http://127.0.0.1:9500"

struct gf_remote {
	/* the command, for messages */
	const char *cmd;
	char base[512];
	char token[GF_AUTH_TOKEN_MAX + 1];
	bool json;
	const char *ca;	    /* --ca FILE (or $GPUFLEET_CA), or NULL */
	bool insecure_http; /* --insecure-http */
	const char *server; /* --server URL as given, or NULL */
	const char *tokens; /* --token-file FILE as given, or NULL */
};

/* c->server and c->tokens (or $GPUFLEET_SERVER, $GPUFLEET_TOKEN_FILE;
 * c->ca from $GPUFLEET_CA when not given); 0 or an exit code (message
 * printed: a token that would go in clear to a host that is not
 * loopback is a usage error naming --insecure-http). */
int gf_remote_setup(struct gf_remote *c) GF_MUST_CHECK;

/* The longest request path a client sends. */
#define GF_REMOTE_PATH_MAX 768

/* One exchange; 0 with *ans (release it) when the server answered 2xx,
 * else the server's {error, detail} (or the cause) printed and an exit
 * code (a path longer than GF_REMOTE_PATH_MAX: GF_EXIT_USAGE, *ans
 * zeroed). */
int gf_remote_call(const struct gf_remote *c, unsigned method, const char *path,
		   const char *body,
		   struct gf_client_answer *ans) GF_MUST_CHECK;

/* What goes before a job's id in a path: "j" when id is a bare number
 * ("13" is j13, as scancel takes a job's number), else "". */
const char *gf_remote_job_prefix(const char *id);

/* gf_remote_call with the path formatted (a job's id in it, say). */
int gf_remote_callf(const struct gf_remote *c, unsigned method,
		    const char *body, struct gf_client_answer *ans,
		    const char *fmt, ...) GF_MUST_CHECK
	__attribute__((format(printf, 5, 6)));

/*
 * The option loop of a command that takes only the connection options
 * (--server, --token-file, --json, -h) into r for gf_remote_setup; -1 to
 * go on with the arguments from optind, else the exit status (usage
 * printed for -h, a bad option said).  A command with options of its own
 * sets gf_cli_args.remote to r instead.
 */
int gf_remote_options(struct gf_remote *r, int argc, char **argv,
		      void (*usage)(FILE *)) GF_MUST_CHECK;

/* The option layer's rows of the connection options (--server,
 * --token-file, --json, --ca, --insecure-http into r) from out on: past
 * the last (room for 5). */
struct gf_cli_opt;
struct gf_cli_opt *gf_remote_opts(struct gf_remote *r, struct gf_cli_opt *out);

/* How an answer is shown without --json: render(the answer parsed, arg). */
typedef void (*gf_remote_render)(const struct gf_jv *v, const void *arg);

/* One exchange (as gf_remote_call) and its answer shown: the server's
 * JSON as it came with --json, else render(v, arg); the exit status. */
int gf_remote_show(const struct gf_remote *r, unsigned method, const char *path,
		   const char *body, gf_remote_render render,
		   const void *arg) GF_MUST_CHECK;

/* The whole run of a command that takes only the connection options and
 * GETs path (`gpufleet nodes`): the exit status. */
int gf_remote_get_command(const char *cmd, int argc, char **argv,
			  void (*usage)(FILE *), const char *path,
			  gf_remote_render render) GF_MUST_CHECK;

/* Print the answer's body as it came. */
int gf_remote_print(const struct gf_client_answer *a) GF_MUST_CHECK;

/* The answer parsed (caller frees with gf_jv_free); NULL, printed, if it
 * is not JSON. */
struct gf_jv *gf_remote_json(const struct gf_remote *c,
			     const struct gf_client_answer *a);

/* A member as a number (0 when absent) or a string ("-" when absent). */
int64_t gf_remote_num(const struct gf_jv *o, const char *k);
const char *gf_remote_str(const struct gf_jv *o, const char *k);

/*
 * GET /v1/jobs/{job}/logs of that replica and attempt (0: the last),
 * printed as it comes (cmd_logs.c): with route, the marker lines
 * ("==> gpufleet: ...") to stderr and the rest to stdout, else all to
 * stdout; with follow, until the attempt ends.  When *cancel turns true
 * (a signal handler) the stream is given up within about a second: 0.
 * seen (NULL: none): bytes of this run's log printed by an earlier call,
 * skipped, and counted on.  The exit status (errors printed).
 */
int gf_cli_logs_stream(const struct gf_remote *r, const char *job, int replica,
		       int attempt, bool follow, bool route,
		       atomic_bool *cancel, size_t *seen) GF_MUST_CHECK;

/* The -h lines every client shares. */

#define CONN_HELP                                                       \
	"  --server URL        the controller (default " DEFAULT_SERVER \
	", or\n"                                                        \
	"                      $GPUFLEET_SERVER)\n"                     \
	"  --token-file FILE   send the file's first token (or "        \
	"$GPUFLEET_TOKEN_FILE)\n"                                       \
	"  --ca FILE           with https://: the CA that signed the "  \
	"server's\n"                                                    \
	"                      certificate (or $GPUFLEET_CA)\n"         \
	"  --insecure-http     send the token over http:// to a host "  \
	"that is not\n"                                                 \
	"                      loopback (refused without it)\n"         \
	"  --json              the server's JSON answer\n"

#endif
