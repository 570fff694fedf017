/*
 * fuzz_prometheus.c - what `autoscale run` reads from Prometheus
 * (src/autoscale/source.c): the bytes as a text exposition page (a
 * family with and without label matchers) and as an instant query's
 * JSON answer.
 */
#include "autoscale/autoscale.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_as_source src;
	struct gf_err e = { 0 };
	double v;
	memset(&src, 0, sizeof(src));
	src.kind = GF_AS_SOURCE_METRICS;
	snprintf(src.metric, sizeof(src.metric), "gpufleet_jobs_pending");
	fz_answer("page",
		  gf_as_parse_metrics_page((const char *)data, size, &src, &v,
					   &e),
		  &e);
	src.nlabels = 1;
	snprintf(src.labels[0][0], sizeof(src.labels[0][0]), "class");
	snprintf(src.labels[0][1], sizeof(src.labels[0][1]), "inference");
	fz_answer("page-labels",
		  gf_as_parse_metrics_page((const char *)data, size, &src, &v,
					   &e),
		  &e);
	fz_answer("query",
		  gf_as_parse_query_answer((const char *)data, size, &v, &e),
		  &e);
	return 0;
}
