/*
 * fuzz_report.c - a report document (what `simulate --json` writes,
 * read by `gpufleet report`; src/sim/report_read.c) through
 * gf_rdoc_parse, and a document read rendered as the HTML page.
 */
#include "fuzz.h"
#include "sim/report_html.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_rdoc d;
	struct gf_err e = { 0 };
	int rc = gf_rdoc_parse("fuzz.json", (const char *)data, size, &d, &e);
	fz_answer("report", rc, &e);
	if (rc == 0) {
		struct gf_buf out;
		gf_buf_init(&out, 0);
		(void)!gf_report_html(&d, 1, &out);
		gf_buf_release(&out);
		gf_rdoc_release(&d);
	}
	return 0;
}
