/*
 * cmd_run.c - `gpufleet run [submit's options] -- CMD...`, as srun runs a
 * command for a user without a batch script: submit the job, wait for
 * each attempt to start, print its output as it comes (the logs route,
 * cmd_logs.c; the marker lines to stderr, the job's output to stdout),
 * turn a Ctrl-C into a cancel, and exit with the job's exit code.
 *
 * Exit status: the job's exit code when it has one (128 + N for a job
 * killed by signal N, as the store keeps it); GF_RUN_EXIT_NOCODE (125)
 * when it ended without one (cancelled, lost, never started, max
 * runtime); 1 when gpufleet itself failed (the server unreachable), 2
 * for a usage error; 130 on a second Ctrl-C (the job is cancelled, its
 * end not awaited).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/json.h"

#define CMD		   "run"
#define GF_RUN_EXIT_NOCODE 125
#define POLL_MS		   200

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet run [submit's options] [--server URL] "
		"[--token-file F] -- CMD...\n"
		"\n"
		"Submit CMD as a job (the options of 'gpufleet submit -h'), "
		"wait for it to\nstart, print its output as it comes, and exit "
		"with its exit code, as srun\ndoes.  Each attempt's marker "
		"lines ('==> gpufleet: ...') go to stderr, the\njob's output "
		"to stdout.  Ctrl-C cancels the job (and waits for its end); "
		"a\nsecond one leaves at once.\n\n" CONN_HELP
		"\nexit status: the job's exit code; %d when it ended without "
		"one (cancelled,\nlost, never started); 1 gpufleet failed, 2 "
		"usage error, 130 a second Ctrl-C\n",
		GF_RUN_EXIT_NOCODE);
}

void gf_cli_shell_word(struct gf_buf *b, const char *w, bool quote)
{
	if (b->len)
		(void)gf_buf_append(b, " ", 1);
	if (!quote ||
	    (w[0] && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
			       "tuvwxyz0123456789_./=:,+@%^-") == strlen(w))) {
		(void)gf_buf_append(b, w, strlen(w));
		return;
	}
	(void)gf_buf_append(b, "'", 1);
	for (const char *p = w; *p; p++)
		if (*p == '\'')
			(void)gf_buf_append(b, "'\\''", 4);
		else
			(void)gf_buf_append(b, p, 1);
	(void)gf_buf_append(b, "'", 1);
}

static atomic_bool interrupted; /* a Ctrl-C: the stream gives up */
static volatile sig_atomic_t sigints;

static void on_sigint(int sig)
{
	(void)sig;
	sigints++;
	atomic_store(&interrupted, true);
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&t, NULL); /* a signal cuts it short: fine */
}

/* The job as GET /v1/jobs/{id} says: its state, attempts, exit code (-1
 * none); 0 or an exit status. */
struct jobnow {
	char state[24];
	char reason[160]; /* why it waits, "" none */
	int attempts;
	long exit_code;
	bool final;
};

static int job_now(const struct gf_remote *r, const char *id, struct jobnow *j)
{
	struct gf_client_answer a;
	int rc = gf_remote_callf(r, GF_HTTP_GET, NULL, &a, "/v1/jobs/%s", id);
	if (rc)
		return rc;
	struct gf_jv *v = gf_remote_json(r, &a);
	gf_client_answer_release(&a);
	if (!v)
		return GF_EXIT_FAIL;
	gf_note(j->state, sizeof(j->state), "%s", gf_remote_str(v, "state"));
	const char *why = gf_jv_str(gf_jv_get(v, "reason"));
	gf_note(j->reason, sizeof(j->reason), "%s", why ? why : "");
	j->attempts = (int)gf_remote_num(v, "attempts");
	int64_t ec;
	j->exit_code =
		gf_jv_int(gf_jv_get(v, "exit_code"), &ec) ? (long)ec : -1;
	j->final = !strcmp(j->state, "succeeded") ||
		   !strcmp(j->state, "failed") ||
		   !strcmp(j->state, "cancelled");
	gf_jv_free(v);
	return 0;
}

/* Ctrl-C: cancel the job, once. */
static void cancel_once(const struct gf_remote *r, const char *id, bool *done)
{
	if (*done)
		return;
	*done = true;
	fprintf(stderr, "gpufleet run: cancelling %s\n", id);
	struct gf_client_answer a;
	if (gf_remote_callf(r, GF_HTTP_DELETE, NULL, &a, "/v1/jobs/%s", id) ==
	    0)
		gf_client_answer_release(&a);
}

/* Follow each attempt as it starts until the job is final; its exit
 * status. */
static int follow(const struct gf_remote *r, const char *id)
{
	bool cancelled = false;
	int next = 1;	     /* the attempt to follow next */
	size_t seen = 0;     /* of its log, printed */
	char said[200] = ""; /* the wait last said */
	struct jobnow j;
	for (;;) {
		if (sigints > 1)
			return 130;
		if (sigints)
			cancel_once(r, id, &cancelled);
		atomic_store(&interrupted, false);
		int rc = job_now(r, id, &j);
		if (rc)
			return rc;
		if (j.attempts >= next) {
			rc = gf_cli_logs_stream(r, id, 0, next, true, true,
						&interrupted, &seen);
			if (rc)
				return rc;
			if (!atomic_load(&interrupted)) { /* its end */
				next++;
				seen = 0;
			}
			continue;
		}
		if (j.final)
			break;
		char now[200];
		gf_note(now, sizeof(now), "%s%s%s", j.state,
			j.reason[0] ? ": " : "", j.reason);
		if (strcmp(now, said) !=
		    0) { /* why it waits, when it changes */
			fprintf(stderr, "gpufleet run: %s %s\n", id, now);
			memcpy(said, now, sizeof(said));
		}
		sleep_ms(POLL_MS);
	}
	if (j.exit_code >= 0 && strcmp(j.state, "cancelled") != 0)
		return (int)(j.exit_code & 0xff);
	fprintf(stderr, "gpufleet run: %s %s without an exit code\n", id,
		j.state);
	return GF_RUN_EXIT_NOCODE;
}

int cmd_run(int argc, char **argv)
{
	struct gf_remote r = { .cmd = CMD };
	struct gf_buf b;
	gf_buf_init(&b, 256u << 10); /* as submit: --env up to 64 KiB escaped */
	int rc = gf_cli_submit_body(CMD, argc, argv, usage, &r, &b);
	if (rc < 0 && optind == argc) {
		gf_cli_error(CMD, "no command given: gpufleet run [options] "
				  "-- CMD... (see 'gpufleet run -h')");
		rc = GF_EXIT_USAGE;
	}
	struct gf_client_answer a;
	if (rc < 0 && (rc = gf_remote_call(&r, GF_HTTP_POST, "/v1/jobs",
					   gf_buf_str(&b), &a)) == 0)
		rc = -1; /* posted */
	gf_buf_release(&b);
	if (rc >= 0)
		return rc;
	struct gf_jv *v = gf_remote_json(&r, &a);
	gf_client_answer_release(&a);
	char id[64];
	if (!v || gf_fmt(id, sizeof(id), "%s", gf_remote_str(v, "id")) != 0) {
		gf_jv_free(v);
		gf_cli_error(CMD, "the server's answer names no job");
		return GF_EXIT_FAIL;
	}
	gf_jv_free(v);
	fprintf(stderr, "gpufleet run: %s submitted\n", id);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: waits are cut */
	return follow(&r, id);
}
