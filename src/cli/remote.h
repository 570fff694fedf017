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

#include "controller/auth.h"
#include "server/client.h"
#include "util/json.h"

#define DEFAULT_SERVER "http://127.0.0.1:9500"

struct gf_remote {
	/* the command, for messages */
	const char *cmd;
	char base[512];
	char token[GF_AUTH_TOKEN_MAX + 1];
	bool json;
};

/* --server and --token-file (or $GPUFLEET_SERVER, $GPUFLEET_TOKEN_FILE);
 * 0 or an exit code (message printed). */
int gf_remote_setup(struct gf_remote *c, const char *server,
		    const char *tokens);

/* One exchange; 0 with *ans (release it) when the server answered 2xx,
 * else the server's {error, detail} (or the cause) printed and an exit
 * code. */
int gf_remote_call(const struct gf_remote *c, unsigned method, const char *path,
		   const char *body, struct gf_client_answer *ans);

/*
 * The option loop of a command that takes only the connection options
 * (--server, --token-file, --json, -h): r->json, *server and *tokens set
 * for gf_remote_setup; -1 to go on with the arguments from optind, else
 * the exit status (usage printed for -h, a bad option said).
 */
int gf_remote_options(struct gf_remote *r, int argc, char **argv,
		      void (*usage)(FILE *), const char **server,
		      const char **tokens);

/* GET path and show it: the server's JSON with --json, else
 * render(the parsed answer); the exit status. */
int gf_remote_show(const struct gf_remote *r, const char *path,
		   void (*render)(const struct gf_jv *v));

/* Print the answer's body as it came. */
int gf_remote_print(const struct gf_client_answer *a);

/* The answer parsed (caller frees with gf_jv_free); NULL, printed, if it
 * is not JSON. */
struct gf_jv *gf_remote_json(const struct gf_remote *c,
			     const struct gf_client_answer *a);

/* A member as a number (0 when absent) or a string ("-" when absent). */
int64_t gf_remote_num(const struct gf_jv *o, const char *k);
const char *gf_remote_str(const struct gf_jv *o, const char *k);

/* getopt_long entries and -h lines every client shares. */

#define CONN_OPTIONS                                            \
	{ "server", required_argument, NULL, 'S' },             \
		{ "token-file", required_argument, NULL, 'T' }, \
		{ "json", no_argument, NULL, 'J' },             \
	{                                                       \
		"help", no_argument, NULL, 'h'                  \
	}

#define CONN_HELP                                                       \
	"  --server URL        the controller (default " DEFAULT_SERVER \
	", or\n"                                                        \
	"                      $GPUFLEET_SERVER)\n"                     \
	"  --token-file FILE   send the file's first token (or "        \
	"$GPUFLEET_TOKEN_FILE)\n"                                       \
	"  --json              the server's JSON answer\n"

#endif
