/*
 * diagnose.c - waste rules over a window of samples, and the reports.
 *
 * Activity of a point: the highest GPM engine activity it has (graphics
 * engine, SM, tensor pipe), else its GPU utilisation.  DRAM activity is
 * not read: in a starving GPU's gaps it rises with the very input copies
 * that mark them.  A rule over activity (idle, starvation) needs it in
 * every point of the window; a memory rule needs memory in every point.
 */
#include "telemetry/diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>

#include "util/duration.h"
#include "util/fmt.h"
#include "util/json.h"

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

const char *gf_diag_signal_name(enum gf_diag_signal s)
{
	static const char *const n[GF_DIAG_NSIGNALS] = {
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE",
		"DCGM_FI_PROF_SM_ACTIVE",
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
		"DCGM_FI_DEV_GPU_UTIL",
		"DCGM_FI_DEV_FB_USED",
		"DCGM_FI_PROF_PCIE_RX_BYTES",
	};
	return (unsigned)s < GF_DIAG_NSIGNALS ? n[s] : "?";
}

void gf_diag_point_init(struct gf_diag_point *p, int64_t t_ms)
{
	p->t_ms = t_ms;
	for (int s = 0; s < GF_DIAG_NACT; s++)
		p->act[s] = -1;
	p->fb_used = -1;
	p->fb_total = 0;
	p->pcie_rx = -1;
	p->nproc = -1;
}

const char *gf_diag_reason_name(enum gf_diag_reason r)
{
	static const char *const n[GF_DIAG_NREASONS] = {
		"allocated-idle", "data-starvation", "memory-overprovisioned",
		"mig-slack"
	};
	return (unsigned)r < GF_DIAG_NREASONS ? n[r] : "?";
}

/* A point's activity in %, or < 0; the signals read added to *by. */
static double activity(const struct gf_diag_point *x, uint32_t *by)
{
	double a = -1;
	uint32_t b = 0;
	for (int s = GF_DIAG_GR; s < GF_DIAG_UTIL; s++)
		if (x->act[s] >= 0) {
			a = x->act[s] > a ? x->act[s] : a;
			b |= 1u << s;
		}
	if (a < 0 && x->act[GF_DIAG_UTIL] >= 0) {
		a = x->act[GF_DIAG_UTIL];
		b = 1u << GF_DIAG_UTIL;
	}
	*by |= b;
	return a;
}

/* "(by NAME, NAME)" */
static void by_text(uint32_t by, char *out, size_t size)
{
	size_t n = (size_t)snprintf(out, size, " (by");
	const char *sep = " ";
	for (int s = 0; s < GF_DIAG_NSIGNALS && n < size; s++)
		if (by >> s & 1) {
			n += (size_t)snprintf(
				out + n, size - n, "%s%s", sep,
				gf_diag_signal_name((enum gf_diag_signal)s));
			sep = ", ";
		}
	if (n < size)
		gf_note(out + n, size - n, ")");
}

static void say(struct gf_diag_result *out, enum gf_diag_reason r, uint32_t by,
		const char *text)
{
	char b[160];
	by_text(by, b, sizeof(b));
	out->hit[r] = true;
	out->by[r] = by;
	gf_note(out->why[r], sizeof(out->why[r]), "%s%s", text, b);
}

int gf_diagnose(const struct gf_diag_point *p, int n, bool mig,
		const struct gf_diag_opts *o, struct gf_diag_result *out)
{
	memset(out, 0, sizeof(*out));
	out->window_s = o->window_s;
	if (n < 1)
		return 0;
	int64_t win = (int64_t)(o->window_s * 1e3);
	int64_t end = p[n - 1].t_ms, start = end - win;
	int first = 0;
	while (first < n && p[first].t_ms < start)
		first++;
	int64_t have = end - p[0].t_ms;
	out->observed_s = (double)(have < win ? have : win) / 1e3;
	/* a window holding a single point (samples sparser than it) opens
	 * at the point before it */
	if (first == n - 1 && first > 0)
		first--;
	int k = n - first;
	/* the window must be covered: history before it, or its first
	 * point within 10 % of its start */
	if ((first == 0 && p[0].t_ms > start + win / 10) || k < 2)
		return 0;
	out->judged = true;
	bool held = true;
	double peak = 0, total = 0, act_sum = 0, act_max = 0;
	int low = 0, high = 0, act_n = 0, fb_n = 0, rx_low_n = 0, rx_high_n = 0;
	double rx_low = 0, rx_high = 0;
	uint32_t by = 0;
	for (int i = first; i < n; i++) {
		const struct gf_diag_point *x = &p[i];
		held &= x->nproc > 0 || x->fb_used > o->held_fb_mib;
		if (x->fb_used >= 0) {
			fb_n++;
			peak = x->fb_used > peak ? x->fb_used : peak;
		}
		total = x->fb_total > total ? x->fb_total : total;
		double a = activity(x, &by);
		if (a < 0)
			continue;
		act_n++;
		act_sum += a;
		act_max = a > act_max ? a : act_max;
		if (a <= o->starve_low_pct) {
			low++;
			if (x->pcie_rx >= 0)
				rx_low += x->pcie_rx, rx_low_n++;
		} else if (a >= o->starve_high_pct) {
			high++;
			if (x->pcie_rx >= 0)
				rx_high += x->pcie_rx, rx_high_n++;
		}
	}
	double span = (double)(end - p[first].t_ms) / 1e3;
	bool mem = held && fb_n == k && total > 0 &&
		   peak < o->overprov_frac * total;
	char text[320];
	if (mig) {
		if (mem) {
			gf_note(text, sizeof(text),
				"peak memory %.0f MiB of the instance's %.0f "
				"over %.0f s",
				peak, total, span);
			say(out, GF_DIAG_MIG_SLACK, 1u << GF_DIAG_FB, text);
		}
		return out->hit[GF_DIAG_MIG_SLACK];
	}
	if (held && act_n == k && act_max <= o->idle_util_pct) {
		gf_note(text, sizeof(text),
			"a process holds %.0f MiB and the GPU did no work for "
			"%.0f s",
			peak, span);
		say(out, GF_DIAG_IDLE, by, text);
	}
	if (held && act_n >= 4 && low >= o->starve_min_frac * act_n &&
	    high >= o->starve_min_frac * act_n && rx_low_n && rx_high_n &&
	    rx_low / rx_low_n > 2 * (rx_high / rx_high_n)) {
		gf_note(text, sizeof(text),
			"busy in bursts (%.0f%% of samples idle, mean %.0f%%), "
			"PCIe receive %.1fx higher in the gaps: the input "
			"pipeline feeds it too slowly",
			100.0 * low / act_n, act_sum / act_n,
			(rx_low / rx_low_n) / (rx_high / rx_high_n + 1e-9));
		say(out, GF_DIAG_STARVATION, by | 1u << GF_DIAG_PCIE_RX, text);
	}
	if (mem && !out->hit[GF_DIAG_IDLE]) {
		gf_note(text, sizeof(text),
			"peak memory %.0f MiB of %.0f (%.0f%%) over %.0f s: a "
			"MIG instance would do",
			peak, total, 100.0 * peak / total, span);
		say(out, GF_DIAG_OVERPROV, 1u << GF_DIAG_FB, text);
	}
	int hits = 0;
	for (int r = 0; r < GF_DIAG_NREASONS; r++)
		hits += out->hit[r];
	return hits;
}

/* Seconds as people read them: whole above 10 s, else to a tenth. */
static const char *secs(double s, char *buf, size_t size)
{
	gf_note(buf, size, s >= 10 || s == (double)(long)s ? "%.0f" : "%.1f",
		s);
	return buf;
}

static void series_name(struct gf_buf *b, const struct gf_diag_verdict *v)
{
	if (v->gi >= 0)
		gf_buf_printf(b, "  GPU%d GI %d", v->gpu, v->gi);
	else
		gf_buf_printf(b, "  GPU%d", v->gpu);
}

int gf_diag_report_text(const struct gf_diag_verdict *v, int n,
			struct gf_buf *out)
{
	int hits = 0, judged = 0;
	char a[32], b[32];
	for (int i = 0; i < n; i++) {
		const struct gf_diag_result *r = &v[i].r;
		if (v[i].lost || !r->judged) {
			series_name(out, &v[i]);
			if (v[i].lost)
				gf_buf_puts(out, ": fell off the bus; not "
						 "judged\n");
			else
				gf_buf_printf(out,
					      ": %s s of %s s observed; not "
					      "judged yet\n",
					      secs(r->observed_s, a, sizeof(a)),
					      secs(r->window_s, b, sizeof(b)));
			continue;
		}
		judged++;
		for (int k = 0; k < GF_DIAG_NREASONS; k++) {
			if (!r->hit[k])
				continue;
			hits++;
			series_name(out, &v[i]);
			gf_buf_printf(
				out, " [%s]: %s\n",
				gf_diag_reason_name((enum gf_diag_reason)k),
				r->why[k]);
		}
	}
	if (hits == 0 && judged == n)
		gf_buf_puts(out, "  no waste found\n");
	else if (hits == 0 && judged > 0)
		gf_buf_printf(out, "  no waste found in the %d judged\n",
			      judged);
	return gf_buf_error(out);
}

static void series_json(struct gf_json *j, const struct gf_diag_verdict *v)
{
	gf_json_int(j, "gpu", v->gpu);
	if (v->uuid)
		gf_json_str(j, "uuid", v->uuid);
	if (v->gi >= 0)
		gf_json_int(j, "gpu_instance_id", v->gi);
}

int gf_diag_report_json(const struct gf_diag_verdict *v, int n, double window_s,
			struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_double(&j, "window_s", window_s);
	gf_json_arr_begin(&j, "findings");
	for (int i = 0; i < n; i++) {
		const struct gf_diag_result *r = &v[i].r;
		for (int k = 0; k < GF_DIAG_NREASONS; k++) {
			if (v[i].lost || !r->judged || !r->hit[k])
				continue;
			gf_json_obj_begin(&j, NULL);
			series_json(&j, &v[i]);
			gf_json_str(
				&j, "reason",
				gf_diag_reason_name((enum gf_diag_reason)k));
			gf_json_str(&j, "why", r->why[k]);
			gf_json_arr_begin(&j, "by");
			for (int s = 0; s < GF_DIAG_NSIGNALS; s++)
				if (r->by[k] >> s & 1)
					gf_json_str(
						&j, NULL,
						gf_diag_signal_name((
							enum gf_diag_signal)s));
			gf_json_arr_end(&j);
			gf_json_obj_end(&j);
		}
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "not_judged");
	for (int i = 0; i < n; i++) {
		const struct gf_diag_result *r = &v[i].r;
		if (!v[i].lost && r->judged)
			continue;
		char why[96], a[32], b[32];
		if (v[i].lost)
			gf_note(why, sizeof(why), "fell off the bus");
		else
			gf_note(why, sizeof(why), "%s s of %s s observed",
				secs(r->observed_s, a, sizeof(a)),
				secs(r->window_s, b, sizeof(b)));
		gf_json_obj_begin(&j, NULL);
		series_json(&j, &v[i]);
		gf_json_double(&j, "observed_s", r->observed_s);
		gf_json_str(&j, "why", why);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}

long gf_diag_parse_duration(const char *s)
{
	double secs;
	if (gf_duration_parse(s, GF_DUR_BARE_S, &secs, NULL) != 0)
		return -1;
	return (long)llround(secs * 1e3);
}
