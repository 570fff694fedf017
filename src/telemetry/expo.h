/*
 * expo.h - what the agent serves, rendered from the collector's samples:
 * the Prometheus page, diagnoses (gauges, JSON, text) and /v1/gpus.
 * Each returns 0 or the buffer's error.  Pure over the collector.
 */
#ifndef GF_TELEMETRY_EXPO_H
#define GF_TELEMETRY_EXPO_H

#include <gpufleet/err.h>

#include "telemetry/collect.h"
#include "util/buf.h"

/* The page: dcgm-exporter's metrics then gpufleet's own. */
int gf_expo_render(const struct gf_collector *c, const struct gf_counters *k,
		   int64_t now_ms, struct gf_buf *out) GF_MUST_CHECK;

struct gf_diag_opts;
struct gf_diag_verdict;
/*
 * Judge every GPU and MIG instance over its ring, reading only the
 * signals k exports.  Returns how many verdicts *v holds (caller frees
 * with gf_free()); each borrows its UUID from c.
 */
int gf_expo_judge(const struct gf_collector *c, const struct gf_counters *k,
		  const struct gf_diag_opts *o,
		  struct gf_diag_verdict **v) GF_MUST_CHECK;

/* gpufleet_diagnosis gauges (per GPU and reason, 0 or 1; mig-slack per
 * MIG instance; none for a series not judged), appended to a page. */
int gf_expo_render_diag(const struct gf_diag_verdict *v, int n,
			struct gf_buf *out) GF_MUST_CHECK;

/* /v1/diagnose.txt: a header naming the host, then the report.  (The
 * JSON of /v1/diagnose is gf_diag_report_json().) */
int gf_expo_diag_text(const struct gf_collector *c,
		      const struct gf_diag_verdict *v, int n, double window_s,
		      struct gf_buf *out) GF_MUST_CHECK;

/* /v1/gpus: the latest sample of each GPU as JSON. */
int gf_expo_gpus_json(const struct gf_collector *c, int64_t now_ms,
		      struct gf_buf *out) GF_MUST_CHECK;

#endif
