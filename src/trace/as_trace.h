/*
 * as_trace.h - the request traces `gpufleet simulate autoscale` replays
 * (sim/autoscale.h): LLM inference requests, read from a CSV or drawn.
 */
#ifndef GF_TRACE_AS_TRACE_H
#define GF_TRACE_AS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#define GF_AST_MAX_REQUESTS 200000000 /* a trace's requests */

struct gf_as_req {
	double t;	  /* arrival, s from the trace's first */
	uint32_t in, out; /* prompt and generated tokens */
};

struct gf_as_trace {
	struct gf_as_req *r;
	size_t n;
};

/*
 * Read an arrival trace: the Azure LLM inference CSV (TIMESTAMP,
 * ContextTokens, GeneratedTokens; timestamps "YYYY-MM-DD hh:mm:ss.f")
 * or a simple CSV t,tokens_in,tokens_out (t in seconds).  Times must
 * not go back; errors name FILE:LINE and the field.  0, or a negative
 * code with e set; release with gf_as_trace_release().
 */
int gf_as_trace_read(const char *path, struct gf_as_trace *t,
		     struct gf_err *e) GF_MUST_CHECK;
/*
 * A synthetic day: n requests over `hours`, a diurnal rate (half again
 * the mean at its peak, half the mean at its trough) and token counts
 * drawn from log-normals with the conversation trace's medians and
 * means (prompts 1020 / 1155, outputs 129 / 211).  Seeded; never fails.
 */
void gf_as_trace_synth(struct gf_as_trace *t, size_t n, double hours,
		       uint64_t seed);
/*
 * The requests of t arriving in [from, to), their times made relative
 * to `from` (a window simulated on its own).  A copy: release it with
 * gf_as_trace_release(); empty when none arrive (w->r NULL).
 */
void gf_as_trace_window(const struct gf_as_trace *t, double from, double to,
			struct gf_as_trace *w);
void gf_as_trace_release(struct gf_as_trace *t);

#endif
