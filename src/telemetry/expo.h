/*
 * expo.h - what the agent serves, rendered from the collector's samples:
 * the Prometheus page, diagnoses (gauges, JSON, text) and /v1/gpus.
 * Each returns 0 or the buffer's error.  Pure over the collector.
 */
#ifndef GF_TELEMETRY_EXPO_H
#define GF_TELEMETRY_EXPO_H

#include "../util/buf.h"
#include "collect.h"

/* The page: dcgm-exporter's metrics then gpufleet's own. */
int gf_expo_render(const struct gf_collector *c, const struct gf_counters *k,
		   int64_t now_ms, struct gf_buf *out);

struct gf_diag_opts;
/* gpufleet_diagnosis gauges (per GPU and reason, 0 or 1; mig-slack per
 * MIG instance), appended to a page. */
int gf_expo_render_diag(const struct gf_collector *c,
			const struct gf_diag_opts *o, struct gf_buf *out);
/* /v1/diagnose: the reasons hit, with why, as JSON. */
int gf_expo_diag_json(const struct gf_collector *c,
		      const struct gf_diag_opts *o, struct gf_buf *out);

/* /v1/diagnose.txt: the same for people. */
int gf_expo_diag_text(const struct gf_collector *c,
		      const struct gf_diag_opts *o, struct gf_buf *out);

/* /v1/gpus: the latest sample of each GPU as JSON. */
int gf_expo_gpus_json(const struct gf_collector *c, int64_t now_ms,
		      struct gf_buf *out);

#endif
