/*
 * diagnose.h - waste a user should act on, read from recent samples:
 *   allocated-idle          a process holds the GPU, it does no work
 *   data-starvation         it works in bursts, with PCIe receive traffic
 *                           in the idle gaps (input pipeline too slow)
 *   memory-overprovisioned  peak memory far below the GPU's: a smaller MIG
 *                           profile would do
 *   mig-slack               a MIG instance whose peak memory is far below
 *                           its size
 * The caller gives SM activity where NVML's GPM has it; without it GPU
 * utilisation (the duty cycle) stands in, which can only under-report waste.
 * Thresholds and their sources: docs/telemetry.md.  Pure.
 */
#ifndef GF_TELEMETRY_DIAGNOSE_H
#define GF_TELEMETRY_DIAGNOSE_H

#include <stdbool.h>
#include <stdint.h>

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

/* One point of a GPU's (or MIG instance's) history. */
struct gf_diag_point {
	int64_t t_ms;
	double util;	 /* %, < 0 when unknown (MIG) */
	double fb_used;	 /* MiB */
	double fb_total; /* MiB */
	double pcie_rx;	 /* bytes/s, < 0 when unknown */
	int nproc;	 /* < 0 when unknown */
};

enum gf_diag_reason {
	GF_DIAG_IDLE = 0,
	GF_DIAG_STARVATION,
	GF_DIAG_OVERPROV,
	GF_DIAG_MIG_SLACK,
	GF_DIAG_NREASONS
};

const char *gf_diag_reason_name(enum gf_diag_reason r);

struct gf_diag_result {
	bool hit[GF_DIAG_NREASONS];
	char why[GF_DIAG_NREASONS][200];
};

/*
 * Judge one GPU from its points (oldest first; the window ends at the
 * newest point).  mig: these points are a MIG instance's (only mig-slack
 * applies).  Returns the number of reasons hit.
 */
int gf_diagnose(const struct gf_diag_point *p, int n, bool mig,
		const struct gf_diag_opts *o, struct gf_diag_result *out);

#endif
