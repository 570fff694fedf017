/*
 * cmd_report.c - `gpufleet report FILE... --html OUT`: the JSON of
 * `simulate fill --json` and `simulate replay --json` as one
 * self-contained page (the reader and the page: src/sim/report_html.c).
 * Options and output only.  The page is written whole or not at all (a
 * temporary renamed over OUT).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/report_html.h"
#include "util/file.h"
#include "util/mem.h"

#define CMD	  "report"
#define FILES_MAX 16
#define IN_CAP	  (64u << 20)  /* bytes of one input */
#define OUT_CAP	  (256u << 20) /* bytes of the page */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet report FILE... --html OUT\n"
		"\n"
		"Draw what the simulators wrote as one self-contained HTML "
		"page (inline SVG,\nnothing fetched, no script):\n"
		"  a fill report (gpufleet simulate fill --json): unallocated "
		"GPU %% against\n"
		"    arrived load, one line per policy, and the summary table;\n"
		"  a replay report (gpufleet simulate replay --json): GPU "
		"allocation,\n"
		"    fragmentation and pending GPU demand over time, one line "
		"per policy,\n"
		"    and the tables of jobs, waits and completion times.\n"
		"Each FILE's kind is told by its content; several files make "
		"one page.\n"
		"\n"
		"  --html OUT       write the page to OUT (replaced whole, or "
		"left as it was)\n"
		"  -h, --help       this help\n"
		"\n"
		"At most %d files of %u MiB each.\n"
		"%s",
		FILES_MAX, IN_CAP >> 20, GF_CLI_EXIT_HELP);
}

static int render(char **files, int n, const char *html)
{
	struct gf_rdoc *docs = gf_calloc((size_t)n, sizeof(*docs));
	struct gf_buf page;
	struct gf_err e;
	int nread = 0, ret = GF_EXIT_FAIL;
	gf_buf_init(&page, OUT_CAP);
	for (; nread < n; nread++) {
		char *text;
		size_t len;
		if (gf_file_read(files[nread], IN_CAP, &text, &len, &e) != 0) {
			gf_cli_error(CMD, "%s", e.msg);
			goto out;
		}
		int rc = gf_rdoc_parse(files[nread], text, len, &docs[nread],
				       &e);
		gf_free(text);
		if (rc != 0) {
			gf_cli_error(CMD, "cannot read %s", e.msg);
			goto out;
		}
	}
	if (gf_report_html(docs, n, &page) != 0) {
		gf_cli_error(CMD, "cannot write '%s': the page passed %u MiB",
			     html, OUT_CAP >> 20);
		goto out;
	}
	if (gf_file_write_atomic(html, page.data, page.len, &e) != 0) {
		gf_cli_error(CMD, "%s", e.msg);
		goto out;
	}
	ret = GF_EXIT_OK;
out:
	for (int i = 0; i < nread; i++)
		gf_rdoc_release(&docs[i]);
	gf_free(docs);
	gf_buf_release(&page);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	const char *html = NULL;
	const struct gf_cli_opt opts[] = {
		GF_OPT_ARG("html", 'o'),
		GF_OPT_END,
	};
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	while (gf_cli_next(&args) != -1) { /* 'o', --html */
		if (!*optarg) {
			gf_cli_error(CMD, "'--html' needs a file name");
			return GF_EXIT_USAGE;
		}
		html = optarg;
	}
	if (args.rc >= 0)
		return args.rc;
	int n = argc - optind;
	if (n == 0) {
		gf_cli_error(CMD, "no input given (the JSON of 'gpufleet "
				  "simulate fill --json' or 'simulate replay "
				  "--json'; see 'gpufleet report -h')");
		return GF_EXIT_USAGE;
	}
	if (n > FILES_MAX) {
		gf_cli_error(CMD, "%d inputs, more than the limit of %d", n,
			     FILES_MAX);
		return GF_EXIT_USAGE;
	}
	if (html == NULL) {
		gf_cli_error(CMD, "no output given: --html OUT is required "
				  "(the page is the only output)");
		return GF_EXIT_USAGE;
	}
	return render(argv + optind, n, html);
}
