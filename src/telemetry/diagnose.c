/*
 * diagnose.c - waste rules over a window of samples.
 */
#include "diagnose.h"

#include <stdio.h>
#include <string.h>

void gf_diag_defaults(struct gf_diag_opts *o)
{
	o->window_s = 300;
	o->idle_util_pct = 1;
	o->held_fb_mib = 512;
	o->starve_low_pct = 10;
	o->starve_high_pct = 50;
	o->starve_min_frac = 0.2;
	o->overprov_frac = 0.25;
}

const char *gf_diag_reason_name(enum gf_diag_reason r)
{
	static const char *const n[GF_DIAG_NREASONS] = {
		"allocated-idle", "data-starvation", "memory-overprovisioned",
		"mig-slack"
	};
	return (unsigned)r < GF_DIAG_NREASONS ? n[r] : "?";
}

int gf_diagnose(const struct gf_diag_point *p, int n, bool mig,
		const struct gf_diag_opts *o, struct gf_diag_result *out)
{
	memset(out, 0, sizeof(*out));
	if (n < 2)
		return 0;
	int64_t end = p[n - 1].t_ms, start = end - (int64_t)(o->window_s * 1e3);
	/* the window must be covered: its first point near its start */
	int first = 0;
	while (first < n && p[first].t_ms < start)
		first++;
	if (first == 0 && p[0].t_ms > start + (int64_t)(o->window_s * 100))
		return 0; /* less than 90 % of the window recorded */
	int k = n - first;
	if (k < 2)
		return 0;
	bool held = true;
	double peak = 0, total = 0, util_sum = 0, util_max = 0;
	int low = 0, high = 0, util_n = 0, rx_low_n = 0, rx_high_n = 0;
	double rx_low = 0, rx_high = 0;
	for (int i = first; i < n; i++) {
		const struct gf_diag_point *x = &p[i];
		held &= x->nproc > 0 || x->fb_used > o->held_fb_mib;
		peak = x->fb_used > peak ? x->fb_used : peak;
		total = x->fb_total > total ? x->fb_total : total;
		if (x->util < 0)
			continue;
		util_n++;
		util_sum += x->util;
		util_max = x->util > util_max ? x->util : util_max;
		if (x->util <= o->starve_low_pct) {
			low++;
			if (x->pcie_rx >= 0)
				rx_low += x->pcie_rx, rx_low_n++;
		} else if (x->util >= o->starve_high_pct) {
			high++;
			if (x->pcie_rx >= 0)
				rx_high += x->pcie_rx, rx_high_n++;
		}
	}
	double span = (double)(end - p[first].t_ms) / 1e3;
	if (mig) {
		if (held && total > 0 && peak < o->overprov_frac * total) {
			out->hit[GF_DIAG_MIG_SLACK] = true;
			snprintf(out->why[GF_DIAG_MIG_SLACK],
				 sizeof(out->why[0]),
				 "peak memory %.0f MiB of the instance's %.0f "
				 "over %.0f s",
				 peak, total, span);
		}
		return out->hit[GF_DIAG_MIG_SLACK];
	}
	if (held && util_n == k && util_max <= o->idle_util_pct) {
		out->hit[GF_DIAG_IDLE] = true;
		snprintf(out->why[GF_DIAG_IDLE], sizeof(out->why[0]),
			 "a process holds %.0f MiB and the GPU did no work for "
			 "%.0f s",
			 peak, span);
	}
	if (held && util_n >= 4 && low >= o->starve_min_frac * util_n &&
	    high >= o->starve_min_frac * util_n && rx_low_n && rx_high_n &&
	    rx_low / rx_low_n > 2 * (rx_high / rx_high_n)) {
		out->hit[GF_DIAG_STARVATION] = true;
		snprintf(
			out->why[GF_DIAG_STARVATION], sizeof(out->why[0]),
			"busy in bursts (%.0f%% of samples idle, mean %.0f%%), "
			"PCIe receive %.1fx higher in the gaps: the input "
			"pipeline feeds it too slowly",
			100.0 * low / util_n, util_sum / util_n,
			(rx_low / rx_low_n) / (rx_high / rx_high_n + 1e-9));
	}
	if (held && total > 0 && peak < o->overprov_frac * total &&
	    !out->hit[GF_DIAG_IDLE]) {
		out->hit[GF_DIAG_OVERPROV] = true;
		snprintf(out->why[GF_DIAG_OVERPROV], sizeof(out->why[0]),
			 "peak memory %.0f MiB of %.0f (%.0f%%) over %.0f s: a "
			 "MIG instance would do",
			 peak, total, 100.0 * peak / total, span);
	}
	int hits = 0;
	for (int r = 0; r < GF_DIAG_NREASONS; r++)
		hits += out->hit[r];
	return hits;
}
