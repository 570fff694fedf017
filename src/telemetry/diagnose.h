/*
 * diagnose.h - waste a user should act on, read from recent samples:
 *   allocated-idle          a process holds the GPU, it does no work
 *   data-starvation         it works in bursts, with PCIe receive traffic
 *                           in the idle gaps (input pipeline too slow)
 *   memory-overprovisioned  peak memory far below the GPU's: a smaller MIG
 *                           profile would do
 *   mig-slack               a MIG instance whose peak memory is far below
 *                           its size
 * The rules read the signals the agent exports, under their names: engine
 * activity from GPM (graphics engine, SM, tensor pipe) where a point has
 * any, else GPU utilisation (the duty cycle, which can only under-report
 * waste).  Every verdict says which signals it read.  A series shorter
 * than 90 % of the window is not judged, and says how much it has.
 * Thresholds and their sources: docs/telemetry.md.  Pure: no I/O.
 */
#ifndef GF_TELEMETRY_DIAGNOSE_H
#define GF_TELEMETRY_DIAGNOSE_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "util/buf.h"

struct gf_diag_opts {
	double window_s;	/* look back this far (default 300) */
	double idle_util_pct;	/* at or below: idle (default 1) */
	double held_fb_mib;	/* above: a process holds memory (512) */
	double starve_low_pct;	/* a gap sample (default 10) */
	double starve_high_pct; /* a burst sample (default 50) */
	double starve_min_frac; /* of each kind, at least (0.2) */
	double overprov_frac;	/* peak memory below this share (0.25) */
};

void gf_diag_defaults(struct gf_diag_opts *o);

/*
 * The signals the rules read, named as the agent exports them.  The first
 * GF_DIAG_NACT are activity in percent (GPM's ratios x 100).
 */
enum gf_diag_signal {
	GF_DIAG_GR = 0,	 /* DCGM_FI_PROF_GR_ENGINE_ACTIVE */
	GF_DIAG_SM,	 /* DCGM_FI_PROF_SM_ACTIVE */
	GF_DIAG_TENSOR,	 /* DCGM_FI_PROF_PIPE_TENSOR_ACTIVE */
	GF_DIAG_UTIL,	 /* DCGM_FI_DEV_GPU_UTIL */
	GF_DIAG_FB,	 /* DCGM_FI_DEV_FB_USED */
	GF_DIAG_PCIE_RX, /* DCGM_FI_PROF_PCIE_RX_BYTES */
	GF_DIAG_NSIGNALS
};
#define GF_DIAG_NACT 4

/* The metric name of a signal. */
const char *gf_diag_signal_name(enum gf_diag_signal s);

/* One point of a GPU's (or MIG instance's) history. */
struct gf_diag_point {
	int64_t t_ms;
	double act[GF_DIAG_NACT]; /* %, < 0 when not exported */
	double fb_used;		  /* MiB, < 0 when not exported */
	double fb_total;	  /* MiB, <= 0 when unknown */
	double pcie_rx;		  /* bytes/s, < 0 when not exported */
	int nproc;		  /* < 0 when unknown */
};

/* A point at t_ms with every signal unknown. */
void gf_diag_point_init(struct gf_diag_point *p, int64_t t_ms);

enum gf_diag_reason {
	GF_DIAG_IDLE = 0,
	GF_DIAG_STARVATION,
	GF_DIAG_OVERPROV,
	GF_DIAG_MIG_SLACK,
	GF_DIAG_NREASONS
};

const char *gf_diag_reason_name(enum gf_diag_reason r);

struct gf_diag_result {
	bool judged;	   /* false: less than 90 % of the window recorded */
	double observed_s; /* history there is, up to the window */
	double window_s;
	bool hit[GF_DIAG_NREASONS];
	uint32_t by[GF_DIAG_NREASONS]; /* signals read (bit: gf_diag_signal) */
	char why[GF_DIAG_NREASONS][320];
};

/*
 * Judge one GPU from its points (oldest first; the window ends at the
 * newest point).  mig: these points are a MIG instance's (only mig-slack
 * applies).  Returns the number of reasons hit (0 when not judged).
 */
int gf_diagnose(const struct gf_diag_point *p, int n, bool mig,
		const struct gf_diag_opts *o, struct gf_diag_result *out);

/* A judged series, as the reports print it. */
struct gf_diag_verdict {
	int gpu;
	int gi;		  /* GPU instance id; < 0: the whole GPU */
	const char *uuid; /* NULL when unknown (recorded samples) */
	bool lost;	  /* the GPU fell off the bus: not judged */
	struct gf_diag_result r;
};

/*
 * The body of a text report ("  GPU1 [reason]: why", "  GPU2: 40 s of
 * 300 s observed; not judged yet", "  no waste found" only when every
 * series was judged and none hit), and the JSON report (window_s,
 * findings with the signals they read, not_judged).  0 or GF_ETOOBIG.
 */
int gf_diag_report_text(const struct gf_diag_verdict *v, int n,
			struct gf_buf *out) GF_MUST_CHECK;
int gf_diag_report_json(const struct gf_diag_verdict *v, int n, double window_s,
			struct gf_buf *out) GF_MUST_CHECK;

/* A duration as util/duration.h reads it, a bare number in seconds
 * ("300", "300s", "500ms", "5m", "1h", "5:00"): milliseconds, rounded,
 * or -1 when it is not one. */
long gf_diag_parse_duration(const char *s);

#endif
