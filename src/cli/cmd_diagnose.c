/*
 * cmd_diagnose.c - `gpufleet diagnose`: waste found by a running agent
 * (--url), or by the same rules over a recorded samples file (--fixture,
 * format in src/telemetry/recorded.h).  Both print the same report
 * (src/telemetry/diagnose.h).
 *
 * --url takes what users copy from the agent's start line or a browser:
 * HOST:PORT, HOST (port 9400), http://HOST:PORT or http://HOST:PORT/.  A
 * path, another scheme or a bad port is a usage error saying so, before
 * any connection; a failure to reach the agent names its cause.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/err.h>

#include "cli/cli.h"
#include "telemetry/diagnose.h"
#include "telemetry/recorded.h"
#include "util/log.h"
#include "util/mem.h"

#define ANSWER_MAX  (16u << 20)
#define TIMEOUT_S   10
#define DEFAULT_URL "127.0.0.1:9400"

struct target {
	char host[256];
	char port[8];
};

/* "[http://]HOST[:PORT][/]" into t; NULL, or what is wrong with it. */
static const char *parse_url(const char *s, struct target *t)
{
	const char *p = s;
	if (strncasecmp(p, "http://", 7) == 0)
		p += 7;
	else if (strstr(p, "://"))
		return "expected http://HOST:PORT (the agent serves plain "
		       "http)";
	const char *slash = strchr(p, '/');
	if (slash && strcmp(slash, "/") != 0)
		return "expected no path: the agent's address only, like "
		       "http://127.0.0.1:9400/";
	size_t len = slash ? (size_t)(slash - p) : strlen(p);
	const char *colon = memchr(p, ':', len);
	size_t hlen = colon ? (size_t)(colon - p) : len;
	if (hlen == 0)
		return "expected a host before the port, like "
		       "127.0.0.1:9400";
	if (hlen >= sizeof(t->host))
		return "host name too long";
	memcpy(t->host, p, hlen);
	t->host[hlen] = '\0';
	if (!colon) {
		snprintf(t->port, sizeof(t->port), "9400");
		return NULL;
	}
	size_t plen = len - hlen - 1;
	char *end;
	char digits[8] = "";
	if (plen > 0 && plen < sizeof(digits))
		memcpy(digits, colon + 1, plen);
	long port = strtol(digits, &end, 10);
	if (plen == 0 || plen >= sizeof(digits) || *end || digits[0] == '-' ||
	    digits[0] == '+' || port < 1 || port > 65535)
		return "expected a port from 1 to 65535 after the host";
	snprintf(t->port, sizeof(t->port), "%ld", port);
	return NULL;
}

/* GET path from the agent at t into out (status line, headers, body).
 * 0, or -1 with the cause in why. */
static int http_get(const struct target *t, const char *path,
		    struct gf_buf *out, char *why, size_t wsize)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM },
			*ai;
	int g = getaddrinfo(t->host, t->port, &hints, &ai);
	if (g != 0) {
		snprintf(why, wsize, "cannot resolve '%s': %s", t->host,
			 gai_strerror(g));
		return -1;
	}
	int rc = -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, wsize, "%s", gf_strerror(-errno));
		goto out;
	}
	struct timeval tv = { TIMEOUT_S, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno == EINPROGRESS || errno == EAGAIN)
			snprintf(why, wsize, "no answer within %d s",
				 TIMEOUT_S);
		else
			snprintf(why, wsize, "%s", gf_strerror(-errno));
		goto out;
	}
	char req[512];
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.0\r\nHost: %s:%s\r\nConnection: "
			 "close\r\n\r\n",
			 path, t->host, t->port);
	if (write(fd, req, (size_t)n) != n) {
		snprintf(why, wsize, "cannot send the request: %s",
			 gf_strerror(-errno));
		goto out;
	}
	char buf[4096];
	ssize_t k;
	while ((k = read(fd, buf, sizeof(buf))) > 0)
		if (gf_buf_append(out, buf, (size_t)k) != 0) {
			snprintf(why, wsize, "answer larger than %u MiB",
				 ANSWER_MAX >> 20);
			goto out;
		}
	if (k < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			snprintf(why, wsize, "no answer within %d s",
				 TIMEOUT_S);
		else
			snprintf(why, wsize, "%s", gf_strerror(-errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

/* Write the report on stdout; an exit code. */
static int print_report(const char *s, size_t len)
{
	if (fwrite(s, 1, len, stdout) != len || fflush(stdout) != 0) {
		gf_cli_error("diagnose",
			     "cannot write the report to stdout: %s",
			     gf_strerror(-errno));
		return GF_EXIT_FAIL;
	}
	return GF_EXIT_OK;
}

/* The report from the agent at url; an exit code. */
static int ask_agent(const char *url, bool json)
{
	struct target t;
	const char *bad = parse_url(url, &t);
	if (bad) {
		gf_cli_error("diagnose", "cannot parse '--url %s': %s", url,
			     bad);
		return GF_EXIT_USAGE;
	}
	const char *path = json ? "/v1/diagnose" : "/v1/diagnose.txt";
	struct gf_buf out;
	gf_buf_init(&out, ANSWER_MAX);
	char why[512];
	int ret = GF_EXIT_FAIL;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (http_get(&t, path, &out, why, sizeof(why)) != 0) {
		gf_cli_error("diagnose",
			     "cannot reach an agent at '--url %s': %s (start "
			     "'gpufleet agent', or use --fixture)",
			     url, why);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	const char *all = gf_buf_str(&out);
	const char *eol = strstr(all, "\r\n");
	const char *body = strstr(all, "\r\n\r\n");
	int status = 0;
	if (!eol || !body || strncmp(all, "HTTP/1.", 7) != 0 ||
	    sscanf(all + 8, " %3d", &status) != 1) {
		gf_cli_error("diagnose",
			     "'--url %s' answered %zu bytes that are not HTTP "
			     "(is it a gpufleet agent?)",
			     url, out.len);
		goto out;
	}
	gf_log(GF_LOG_DEBUG, "diagnose",
	       "GET http://%s:%s%s: %d, %zu bytes in %.1f ms", t.host, t.port,
	       path, status, out.len,
	       (double)(b.tv_sec - a.tv_sec) * 1e3 +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	if (status != 200) {
		gf_cli_error("diagnose",
			     "the agent at '--url %s' answered '%.*s' for %s "
			     "(is it a gpufleet agent?)",
			     url, (int)(eol - all < 80 ? eol - all : 80), all,
			     path);
		goto out;
	}
	body += 4;
	ret = print_report(body, strlen(body));
out:
	gf_buf_release(&out);
	return ret;
}

/* The report over a recorded samples file; an exit code. */
static int judge_fixture(const char *path, const struct gf_diag_opts *o,
			 bool json)
{
	static struct gf_recording rec;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_recording_read(path, &rec, &e) != 0) {
		gf_cli_error("diagnose", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	struct gf_diag_verdict *v = gf_calloc((size_t)rec.n, sizeof(*v));
	long points = 0;
	for (int k = 0; k < rec.n; k++) {
		const struct gf_rec_series *s = &rec.s[k];
		v[k].gpu = s->gpu;
		v[k].gi = s->gi;
		gf_diagnose(s->p, s->n, s->gi >= 0, o, &v[k].r);
		points += s->n;
	}
	gf_log(GF_LOG_DEBUG, "diagnose", "%s: %d series, %ld samples", path,
	       rec.n, points);
	struct gf_buf out;
	gf_buf_init(&out, ANSWER_MAX);
	if (json) {
		gf_diag_report_json(v, rec.n, o->window_s, &out);
	} else {
		gf_buf_printf(&out,
			      "gpufleet diagnose: %s, %d series, window "
			      "%.0f s\n\n",
			      path, rec.n, o->window_s);
		gf_diag_report_text(v, rec.n, &out);
	}
	int ret = print_report(gf_buf_str(&out), out.len);
	gf_buf_release(&out);
	gf_free(v);
	gf_recording_release(&rec);
	return ret;
}

bool gf_cli_diag_option(const char *cmd, int c, const char *arg,
			struct gf_diag_opts *o, bool *bad)
{
	char *end;
	double v;
	if (c != 1001 && c != 1002)
		return false;
	v = strtod(arg, &end);
	if (end == arg || *end || !(v >= 0) || (c == 1001 && v > 100) ||
	    (c == 1002 && v > 1)) {
		if (c == 1001)
			gf_cli_error(cmd,
				     "cannot parse '--idle-util %s': expected "
				     "a percentage from 0 to 100",
				     arg);
		else
			gf_cli_error(cmd,
				     "cannot parse '--overprov %s': expected "
				     "a share from 0 to 1",
				     arg);
		*bad = true;
		return true;
	}
	if (c == 1001)
		o->idle_util_pct = v;
	else
		o->overprov_frac = v;
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet diagnose [--url URL] [--json]\n"
		"       gpufleet diagnose --fixture FILE [--window T] "
		"[--idle-util PCT]\n"
		"                         [--overprov F] [--json]\n"
		"\n"
		"GPUs wasted, and why: allocated-idle, data-starvation,\n"
		"memory-overprovisioned, mig-slack (rules: docs/telemetry.md).\n"
		"Each finding names the metrics it read; a GPU with less "
		"history than the\n"
		"window says how much it has and is not judged yet.\n"
		"\n"
		"  --url URL        ask a running agent: HOST:PORT, "
		"http://HOST:PORT/\n"
		"                   (default " DEFAULT_URL "; port 9400 when "
		"none is given);\n"
		"                   it judges with its own --diag-window and "
		"thresholds\n"
		"  --fixture FILE   judge recorded samples instead (CSV: t_s,gpu,"
		"gi,util,\n"
		"                   fb_used_mib,fb_total_mib,pcie_rx_bps,procs; "
		"optional:\n"
		"                   DCGM_FI_PROF_GR_ENGINE_ACTIVE, "
		"DCGM_FI_PROF_SM_ACTIVE,\n"
		"                   DCGM_FI_PROF_PIPE_TENSOR_ACTIVE as DCGM's "
		"ratios)\n"
		"  --window T       how far back to look: 300, 300s, 5m "
		"(default 300s)\n"
		"  --idle-util PCT  at or below this activity a GPU is idle "
		"(default 1)\n"
		"  --overprov F     peak memory below this share of the GPU is "
		"over-provisioned\n"
		"                   (default 0.25)\n"
		"  --json           machine-readable\n" GF_CLI_EXIT_HELP);
}

int cmd_diagnose(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "fixture", required_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		GF_CLI_DIAG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	bool bad = false;
	const char *url = NULL, *fixture = NULL, *judging = NULL;
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	bool json = false;
	int c;
	long ms;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 'f':
			fixture = optarg;
			break;
		case 'w':
			ms = gf_diag_parse_duration(optarg);
			if (ms < 1) {
				gf_cli_error("diagnose",
					     "cannot parse '--window %s': "
					     "expected a duration like 300, "
					     "300s or 5m",
					     optarg);
				return GF_EXIT_USAGE;
			}
			o.window_s = (double)ms / 1e3;
			judging = "--window";
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			if (gf_cli_diag_option("diagnose", c, optarg, &o,
					       &bad)) {
				if (bad)
					return GF_EXIT_USAGE;
				judging = c == 1001 ? "--idle-util"
						    : "--overprov";
				break;
			}
			return gf_cli_bad_option("diagnose", argv);
		}
	}
	if (optind < argc) {
		gf_cli_error("diagnose",
			     "unexpected argument '%s' (see 'gpufleet "
			     "diagnose -h')",
			     argv[optind]);
		return GF_EXIT_USAGE;
	}
	if (url && fixture) {
		gf_cli_error("diagnose",
			     "'--url' and '--fixture' exclude each other");
		return GF_EXIT_USAGE;
	}
	if (fixture)
		return judge_fixture(fixture, &o, json);
	if (judging) {
		gf_cli_error("diagnose",
			     "'%s' goes with --fixture: an agent judges with "
			     "its own --diag-window, --idle-util and "
			     "--overprov (gpufleet agent -h)",
			     judging);
		return GF_EXIT_USAGE;
	}
	return ask_agent(url ? url : DEFAULT_URL, json);
}
