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
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>

#include "cli/cli.h"
#include "server/client.h"
#include "telemetry/diagnose.h"
#include "telemetry/recorded.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define ANSWER_MAX  (16u << 20)
#define TIMEOUT_MS  10000
#define DEFAULT_URL "127.0.0.1:9400"

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
	char base[320], full[400];
	const char *bad = gf_client_base_url(url, 9400, base, sizeof(base));
	if (bad) {
		gf_cli_error("diagnose", "cannot parse '--url %s': %s", url,
			     bad);
		return GF_EXIT_USAGE;
	}
	const char *path = json ? "/v1/diagnose" : "/v1/diagnose.txt";
	if (gf_fmt(full, sizeof(full), "%s%s", base, path))
		return GF_EXIT_FAIL; /* cannot: room for both */
	struct gf_client_req q = { .url = full,
				   .timeout_ms = TIMEOUT_MS,
				   .answer_max = ANSWER_MAX };
	struct gf_client_answer a;
	struct gf_err e;
	int ret = GF_EXIT_FAIL;
	if (gf_client_request(NULL, &q, &a, &e) != 0)
		gf_cli_error("diagnose",
			     "cannot reach an agent at '--url %s': %s (start "
			     "'gpufleet agent', or use --fixture)",
			     url, a.why);
	else if (a.status != 200)
		gf_cli_error("diagnose",
			     "the agent at '--url %s' answered HTTP %ld for %s "
			     "(is it a gpufleet agent?)",
			     url, a.status, path);
	else
		ret = print_report(gf_buf_str(&a.body), a.body.len);
	gf_client_answer_release(&a);
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
	struct gf_diag_verdict *v;
	int n = gf_recording_judge(&rec, o, &v);
	long points = 0;
	for (int k = 0; k < rec.n; k++)
		points += rec.s[k].n;
	gf_log(GF_LOG_DEBUG, "diagnose", "%s: %d series, %ld samples", path, n,
	       points);
	struct gf_buf out;
	gf_buf_init(&out, ANSWER_MAX);
	int rc;
	if (json) {
		rc = gf_diag_report_json(v, n, o->window_s, &out);
	} else {
		gf_buf_printf(&out,
			      "gpufleet diagnose: %s, %d series, window "
			      "%.0f s\n\n",
			      path, n, o->window_s);
		rc = gf_diag_report_text(v, n, &out);
	}
	int ret = GF_EXIT_FAIL;
	if (rc)
		gf_cli_error("diagnose", "the report on '%s' passed %u MiB",
			     path, ANSWER_MAX >> 20);
	else
		ret = print_report(gf_buf_str(&out), out.len);
	gf_buf_release(&out);
	gf_free(v);
	gf_recording_release(&rec);
	return ret;
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
	const char *url = NULL, *fixture = NULL;
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	bool json = false;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("url", &url),
		GF_OPT_STR("fixture", &fixture),
		GF_OPT_ARG("window", 'w'),
		GF_CLI_DIAG_OPTS(&o),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS("diagnose", argc, argv, opts, usage);
	args.no_args = true;
	args.json = &json;
	while (gf_cli_next(&args) != -1) { /* 'w', --window */
		long ms = gf_diag_parse_duration(optarg);
		if (ms < 1)
			(void)gf_cli_bad_value(&args, "expected a duration "
						      "like 300, 300s or 5m");
		o.window_s = (double)ms / 1e3;
	}
	if (args.rc >= 0)
		return args.rc;
	if (url && fixture) {
		gf_cli_error("diagnose",
			     "'--url' and '--fixture' exclude each other");
		return GF_EXIT_USAGE;
	}
	if (fixture)
		return judge_fixture(fixture, &o, json);
	const char *judging = gf_cli_given(&args, "window")	 ? "--window"
			      : gf_cli_given(&args, "idle-util") ? "--idle-util"
			      : gf_cli_given(&args, "overprov")	 ? "--overprov"
								 : NULL;
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
