/*
 * test_report_html.c - `gpufleet report`'s reader and page
 * (src/sim/report_html.c): a fill report and a replay report read back
 * and drawn (one polyline per policy and chart, the tables, names
 * escaped, nothing fetched), a fill report from before "curve" drawn
 * from its six points, a long series thinned to the pixel columns, and
 * every bad input named by file and key.
 */
#include <math.h>

#include "helpers.h"
#include "sim/report_html.h"
#include "util/file.h"
#include "util/mem.h"

static const char fill_json[] =
	"{\"source\": \"trace x.csv\", \"nodes\": 4, \"gpus\": 32,"
	" \"requests\": 100, \"tune\": 1.3, \"seeds\": [42, 43, 44],"
	" \"policies\": {"
	"  \"fgd\": {\"unallocated_pct\": {\"mean\": {\"90\": 12.5, \"95\": 8,"
	"   \"100\": 5.25, \"110\": 4, \"120\": null, \"130\": null}},"
	"   \"frag_ratio_pct\": {\"mean\": {\"100\": 80.5}},"
	"   \"failed_mean\": 3, \"arrivals_mean\": 100, \"wall_s\": 0.01,"
	"   \"curve\": {\"arrived_pct\": [0, 50, 90, 100, 110],"
	"    \"unallocated_mean\": [100, 50, 12.5, 5.25, 4],"
	"    \"unallocated_min\": [100, 49, 11, 5, 3.5],"
	"    \"unallocated_max\": [100, 51, 13, 6, 4.5]}},"
	"  \"fgdplus\": {\"unallocated_pct\": {\"mean\": {\"90\": 12, "
	"\"95\": 7,"
	"   \"100\": 4, \"110\": 3, \"120\": null, \"130\": null}},"
	"   \"failed_mean\": 2, \"arrivals_mean\": 100, \"wall_s\": 0.02,"
	"   \"curve\": {\"arrived_pct\": [0, 50, 90, 100, 110],"
	"    \"unallocated_mean\": [100, 50, 12, 4, 3]}}}}";

/* "replay" with one policy whose name needs escaping, and n points. */
static char *replay_json(const char *name, int n)
{
	struct gf_buf b;
	gf_buf_init(&b, 64u << 20);
	gf_buf_printf(&b,
		      "{\"command\": \"replay\", \"source\": \"philly\", "
		      "\"trace\": \"t<1>.csv\", \"nodes\": 2, \"gpus\": 16, "
		      "\"jobs\": 9, \"policies\": [");
	for (int p = 0; p < 2; p++) {
		gf_buf_printf(
			&b,
			"%s{\"policy\": \"%s\", \"seed\": 42, \"arrived\": 9, "
			"\"refused\": 0, \"started\": 9, \"completed\": 8, "
			"\"deleted\": 0, \"failed\": 0, \"running_end\": 1, "
			"\"queued_end\": 0, \"preemptions\": 2, "
			"\"wait_s\": {\"n\": 9, \"mean\": 10, \"p50\": 5, "
			"\"p95\": 30, \"p99\": 31, \"max\": 31}, "
			"\"jct_s\": {\"n\": 8, \"mean\": null, \"p50\": null, "
			"\"p95\": null, \"p99\": null, \"max\": null}, "
			"\"mean_alloc\": 0.5, \"mean_frag\": 0.1, "
			"\"mean_pending_gpus\": 1.5, \"gpu_hours\": 3.25, "
			"\"wall_s\": 0.001, \"series\": [",
			p ? ", " : "", p ? "fgd" : name);
		for (int i = 0; i < n; i++)
			gf_buf_printf(&b,
				      "%s{\"t_s\": %d, \"alloc\": %.3f, "
				      "\"frag\": 0.1, \"pending_gpus\": %d, "
				      "\"pending\": 1, \"running\": 2}",
				      i ? ", " : "", i * 60,
				      (double)(i % 100) / 100.0, i % 7);
		gf_buf_puts(&b, "]}");
	}
	gf_buf_puts(&b, "]}");
	assert_int_equal(gf_buf_error(&b), 0);
	char *s = gf_strdup(gf_buf_str(&b));
	gf_buf_release(&b);
	return s;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* The polylines of the chart with this id: how many, and the most
 * points one has. */
static size_t lines_in(const char *page, const char *id, size_t *most)
{
	char open[64];
	snprintf(open, sizeof(open), "<svg id=\"%s\"", id);
	const char *s = strstr(page, open);
	assert_non_null(s);
	const char *end = strstr(s, "</svg>");
	assert_non_null(end);
	size_t n = 0;
	*most = 0;
	for (const char *p = s; (p = strstr(p, "<polyline class=\"curve\""));
	     p++) {
		if (p > end)
			break;
		n++;
		const char *q = strstr(p, "points=\""), *z = strchr(q + 8, '"');
		size_t pts = 1;
		for (const char *c = q + 8; c < z; c++)
			pts += *c == ' ';
		*most = pts > *most ? pts : *most;
	}
	return n;
}

static void render(const struct gf_rdoc *d, int n, struct gf_buf *b)
{
	gf_buf_init(b, 64u << 20);
	assert_int_equal(gf_report_html(d, n, b), 0);
	const char *s = gf_buf_str(b);
	assert_non_null(strstr(s, "<!DOCTYPE html>"));
	assert_non_null(strstr(s, "</html>"));
	/* self-contained: nothing that fetches or runs */
	assert_null(strstr(s, "<script"));
	assert_null(strstr(s, "url("));
	assert_null(strstr(s, "href="));
	assert_null(strstr(s, "src="));
}

static void test_fill_page(void **state)
{
	(void)state;
	struct gf_rdoc d;
	struct gf_err e;
	assert_int_equal(
		gf_rdoc_parse("f.json", fill_json, strlen(fill_json), &d, &e),
		0);
	assert_int_equal(d.kind, GF_RDOC_FILL);
	assert_int_equal(d.npol, 2);
	assert_string_equal(d.seeds, "42-44");
	assert_int_equal(d.fill[0].n, 5);
	assert_non_null(d.fill[0].hi);
	assert_null(d.fill[1].lo);
	assert_true(isnan(d.fill[0].at[4]));
	struct gf_buf b;
	render(&d, 1, &b);
	const char *s = gf_buf_str(&b);
	size_t most;
	assert_int_equal(lines_in(s, "chart-fill", &most), 2);
	assert_int_equal(most, 5);
	/* the zoom from 80 %: the points at 90, 100, 110 */
	assert_int_equal(lines_in(s, "chart-fill-zoom", &most), 2);
	assert_int_equal(most, 3);
	assert_int_equal(count(s, "data-policy=\"fgdplus\""), 2);
	assert_int_equal(count(s, "<polygon class=\"band\""), 1);
	assert_non_null(strstr(s, "Unallocated GPU (%)"));
	assert_non_null(strstr(s, "<td>5.25</td>"));
	assert_non_null(strstr(s, "<td>80.5 %</td>"));
	assert_non_null(strstr(s, "FGD+</td>"));
	assert_non_null(strstr(s, "demand scaled to 1.30x capacity"));
	gf_buf_release(&b);
	gf_rdoc_release(&d);
}

static void test_fill_without_curve(void **state)
{
	(void)state;
	const char *j =
		"{\"source\": \"s\", \"nodes\": 1, \"gpus\": 8, "
		"\"requests\": 5, \"tune\": null, \"seeds\": [7], "
		"\"policies\": {\"bestfit\": {\"unallocated_pct\": {\"mean\": "
		"{\"90\": 9, \"95\": 6, \"100\": 3, \"110\": null, \"120\": "
		"null, \"130\": null}}, \"failed_mean\": 0, "
		"\"arrivals_mean\": 5, \"wall_s\": 0}}}";
	struct gf_rdoc d;
	struct gf_err e;
	assert_int_equal(gf_rdoc_parse("old.json", j, strlen(j), &d, &e), 0);
	assert_int_equal(d.fill[0].n, 3);
	struct gf_buf b;
	render(&d, 1, &b);
	size_t most;
	assert_int_equal(lines_in(gf_buf_str(&b), "chart-fill", &most), 1);
	assert_int_equal(most, 3);
	assert_non_null(strstr(gf_buf_str(&b), "demand not scaled"));
	gf_buf_release(&b);
	gf_rdoc_release(&d);
}

static void test_replay_page(void **state)
{
	(void)state;
	char *j = replay_json("<b>x&y'\\\"", 30);
	struct gf_rdoc d[2];
	struct gf_err e;
	assert_int_equal(gf_rdoc_parse("r.json", j, strlen(j), &d[0], &e), 0);
	assert_int_equal(gf_rdoc_parse("f.json", fill_json, strlen(fill_json),
				       &d[1], &e),
			 0);
	assert_int_equal(d[0].kind, GF_RDOC_REPLAY);
	assert_int_equal(d[0].npol, 2);
	assert_int_equal(d[0].replay[1].n, 30);
	assert_true(isnan(d[0].replay[0].jct.p50));
	struct gf_buf b;
	render(d, 2, &b);
	const char *s = gf_buf_str(&b);
	size_t most;
	static const char *const ids[] = { "chart-alloc", "chart-frag",
					   "chart-pending", "chart-fill" };
	for (int i = 0; i < 4; i++)
		assert_int_equal(lines_in(s, ids[i], &most), 2);
	assert_int_equal(lines_in(s, "chart-alloc", &most), 2);
	assert_int_equal(most, 30);
	/* the name escaped everywhere; never raw */
	assert_null(strstr(s, "<b>x"));
	assert_int_equal(count(s, "&lt;b&gt;x&amp;y&#39;&quot;"),
			 1 + 3 + 3 + 2);
	assert_non_null(strstr(s, "t&lt;1&gt;.csv"));
	/* ratios drawn as percentages; the tables */
	assert_non_null(strstr(s, "GPU allocated (%)"));
	assert_non_null(strstr(s, "<td>50.0 %</td>"));
	assert_non_null(strstr(s, "<td>3.2</td>") ? strstr(s, "<td>3.2</td>")
						  : strstr(s, "<td>3.3</td>"));
	assert_non_null(strstr(s, "<th>preemptions</th>"));
	assert_non_null(strstr(s, "<td>&mdash;</td>"));
	/* the replay before the fill, as given */
	assert_true(strstr(s, "chart-alloc") < strstr(s, "chart-fill"));
	gf_buf_release(&b);
	gf_rdoc_release(&d[0]);
	gf_rdoc_release(&d[1]);
	gf_free(j);
}

/* 100,000 points: each pixel column keeps its lowest and highest. */
static void test_long_series_thinned(void **state)
{
	(void)state;
	char *j = replay_json("fgdplus", 100000);
	struct gf_rdoc d;
	struct gf_err e;
	assert_int_equal(gf_rdoc_parse("big.json", j, strlen(j), &d, &e), 0);
	struct gf_buf b;
	render(&d, 1, &b);
	size_t most;
	assert_int_equal(lines_in(gf_buf_str(&b), "chart-alloc", &most), 2);
	assert_true(most <= 2 * 870 + 2);
	assert_true(most >= 800);
	/* the peaks survive: 0.99 of the sawtooth is drawn at its height */
	assert_true(b.len < 2u << 20);
	gf_buf_release(&b);
	gf_rdoc_release(&d);
	gf_free(j);
}

static void test_fixture(void **state)
{
	(void)state;
	char *text;
	size_t len;
	struct gf_err e;
	struct gf_rdoc d;
	assert_int_equal(gf_file_read("tests/fixtures/report/replay-small.json",
				      1u << 20, &text, &len, &e),
			 0);
	assert_int_equal(gf_rdoc_parse("fixture", text, len, &d, &e), 0);
	assert_int_equal(d.npol, 3);
	assert_int_equal(d.replay[2].n, 73);
	assert_string_equal(d.replay[2].name, "fgdplus");
	gf_rdoc_release(&d);
	gf_free(text);
}

static void bad(const char *json, int code, const char *msg)
{
	struct gf_rdoc d;
	struct gf_err e;
	int rc = gf_rdoc_parse("in.json", json, strlen(json), &d, &e);
	if (rc != code || strstr(e.msg, msg) == NULL)
		fail_msg("%s\n  rc %d (expected %d): %s\n  expected '%s'", json,
			 rc, code, e.msg, msg);
	assert_int_equal(d.npol, 0);
	assert_null(d.fill);
	assert_null(d.replay);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	bad("{\"a\": ", GF_EPARSE, "'in.json': not JSON: ");
	bad("[1, 2]", GF_EPARSE, "'in.json': expected an object at the top");
	bad("{\"command\": \"fill\"}", GF_EINVAL,
	    "'in.json': key 'command': 'fill' is not a report");
	bad("{\"command\": 3}", GF_EPARSE,
	    "key 'command': expected a string, found a number");
	bad("{\"x\": 1}", GF_EINVAL,
	    "neither a fill report (key 'policies' an object");
	bad("{\"command\": \"replay\", \"source\": \"s\", \"trace\": \"t\", "
	    "\"nodes\": 1, \"gpus\": 8}",
	    GF_EPARSE, "'in.json': key 'jobs' missing (expected an integer)");
	bad("{\"command\": \"replay\", \"source\": \"s\", \"trace\": \"t\", "
	    "\"nodes\": 1, \"gpus\": 8, \"jobs\": 1, \"policies\": []}",
	    GF_EPARSE, "key 'policies': expected policies");
	bad("{\"source\": \"s\", \"nodes\": 1, \"gpus\": 8, \"requests\": 5, "
	    "\"tune\": null, \"seeds\": [7], \"policies\": {\"fgd\": {}}}",
	    GF_EPARSE,
	    "key 'policies.fgd.unallocated_pct' missing (expected an object)");
	bad("{\"source\": \"s\", \"nodes\": 1, \"gpus\": 8, \"requests\": 5, "
	    "\"tune\": \"x\", \"seeds\": [7], \"policies\": {}}",
	    GF_EPARSE, "key 'tune': expected a number or null, found a string");
	bad("{\"source\": \"s\", \"nodes\": 1, \"gpus\": 8, \"requests\": 5, "
	    "\"tune\": 1, \"seeds\": [7], \"policies\": {\"fgd\": "
	    "{\"unallocated_pct\": {\"mean\": {}}, \"failed_mean\": 0, "
	    "\"arrivals_mean\": 5, \"wall_s\": 0, \"curve\": "
	    "{\"arrived_pct\": [1, 2], \"unallocated_mean\": [3]}}}}",
	    GF_EPARSE,
	    "key 'policies.fgd.curve.unallocated_mean': length 1, expected 2");
	char *j = replay_json("fgd", 3);
	char *p = strstr(j, "\"alloc\": 0.010");
	assert_non_null(p);
	memcpy(p + 9, "\"x\"  ", 5);
	bad(j, GF_EPARSE,
	    "key 'policies[0].series[1].alloc': expected a number, found a "
	    "string");
	gf_free(j);
	j = replay_json("fgd", 3);
	p = strstr(j, "\"p95\": 30");
	memcpy(p, "\"p9x\"", 5);
	bad(j, GF_EPARSE,
	    "key 'policies[0].wait_s.p95' missing (expected a number or "
	    "null)");
	gf_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill_page),
		cmocka_unit_test(test_fill_without_curve),
		cmocka_unit_test(test_replay_page),
		cmocka_unit_test(test_long_series_thinned),
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_bad_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
