/*
 * recorded.h - recorded samples for `gpufleet diagnose --fixture`: a CSV
 * (ours) with one row per sample of a GPU or MIG instance.
 *
 *   t_s,gpu,gi,util,fb_used_mib,fb_total_mib,pcie_rx_bps,procs
 *
 * t_s: seconds; gpu: its index; gi: the GPU instance id, -1 for the whole
 * GPU; util: DCGM_FI_DEV_GPU_UTIL (%); fb_used_mib: DCGM_FI_DEV_FB_USED;
 * pcie_rx_bps: DCGM_FI_PROF_PCIE_RX_BYTES; procs: compute processes.
 * Optional columns, as DCGM's ratios: DCGM_FI_PROF_GR_ENGINE_ACTIVE,
 * DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE.  -1 in util,
 * pcie_rx_bps, procs or an activity column: not recorded.  Rows of one
 * series in time order (series may interleave).
 */
#ifndef GF_TELEMETRY_RECORDED_H
#define GF_TELEMETRY_RECORDED_H

#include <gpufleet/err.h>

#include "telemetry/diagnose.h"

#define GF_REC_MAX_SERIES 256
#define GF_REC_MAX_POINTS 100000 /* per series */

struct gf_rec_series {
	int gpu, gi;
	struct gf_diag_point *p;
	int n, cap;
};

struct gf_recording {
	struct gf_rec_series s[GF_REC_MAX_SERIES];
	int n;
};

/*
 * Read a samples file into r (caller's storage).  Errors name the file,
 * and the line and field when one is wrong (GF_EPARSE), or the limit
 * (GF_ETOOBIG); r is released on error.  A file without any row is
 * GF_EPARSE.
 */
int gf_recording_read(const char *path, struct gf_recording *r,
		      struct gf_err *e) GF_MUST_CHECK;
void gf_recording_release(struct gf_recording *r);

/*
 * Judge every series of r with o, as the agent judges its rings.
 * Returns how many verdicts *out holds (one per series, in r's order;
 * caller frees with gf_free()); UUIDs are NULL.
 */
int gf_recording_judge(const struct gf_recording *r,
		       const struct gf_diag_opts *o,
		       struct gf_diag_verdict **out) GF_MUST_CHECK;

#endif
