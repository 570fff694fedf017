/*
 * expo.c - the collector's samples as pages: Prometheus text (dcgm-exporter's
 * names, then gpufleet's own), diagnoses, and JSON for /v1/gpus.
 */
#include "expo.h"

#include <stdio.h>
#include <string.h>

#include "../util/json.h"
#include "diagnose.h"

/* Label values escaped as the text format asks: \\, \" and \n. */
static void label(struct gf_buf *b, const char *k, const char *v, bool first)
{
	gf_buf_printf(b, "%s%s=\"", first ? "" : ",", k);
	for (const char *p = v; *p; p++) {
		if (*p == '\\' || *p == '"')
			gf_buf_putc(b, '\\');
		if (*p == '\n') {
			gf_buf_puts(b, "\\n");
			continue;
		}
		gf_buf_putc(b, *p);
	}
	gf_buf_putc(b, '"');
}

static void gpu_labels(const struct gf_collector *c, const struct gf_tgpu *g,
		       const struct gf_counters *k,
		       const struct gf_mig_sample *mig, struct gf_buf *b)
{
	char idx[16], dev[32], gi[16];
	snprintf(idx, sizeof(idx), "%u", g->index);
	snprintf(dev, sizeof(dev), "nvidia%u", g->index);
	gf_buf_putc(b, '{');
	label(b, "gpu", idx, true);
	label(b, "UUID", g->uuid, false);
	label(b, "pci_bus_id", g->busid, false);
	label(b, "device", dev, false);
	label(b, "modelName", g->name, false);
	if (mig) {
		snprintf(gi, sizeof(gi), "%u", mig->gi_id);
		label(b, "GPU_I_PROFILE", mig->profile, false);
		label(b, "GPU_I_ID", gi, false);
	}
	label(b, "Hostname", c->hostname, false);
	if (k->driver_label)
		label(b, "DCGM_FI_DRIVER_VERSION", c->driver, false);
	gf_buf_putc(b, '}');
}

/* gpufleet_nvlink_{tx,rx}_bytes_total, for GPUs whose NVML has them. */
static void nvlink_family(const struct gf_collector *c, struct gf_buf *out,
			  const char *dir, const char *verb)
{
	bool head = false;
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		if (!g->last_good_ms || !g->last.nvlink_ok)
			continue;
		if (!head)
			gf_buf_printf(out,
				      "# HELP gpufleet_nvlink_%s_bytes_total "
				      "NVLink data bytes %s by the GPU since "
				      "the driver loaded (NVML field "
				      "NVLINK_THROUGHPUT_DATA).\n# TYPE "
				      "gpufleet_nvlink_%s_bytes_total "
				      "counter\n",
				      dir, verb, dir);
		head = true;
		gf_buf_printf(out,
			      "gpufleet_nvlink_%s_bytes_total{gpu=\"%u\","
			      "UUID=\"%s\"} %.15g\n",
			      dir, g->index, g->uuid,
			      dir[0] == 't' ? g->last.nvlink_tx
					    : g->last.nvlink_rx);
	}
}

/* Whether GPU g has a value of m to show, itself or on an instance. */
static bool has_value(const struct gf_tgpu *g, const struct gf_metric_def *def,
		      enum gf_metric m)
{
	if (!g->last_good_ms)
		return false;
	if (g->last.valid >> m & 1)
		return true;
	double v;
	for (int j = 0; def->per_mig && j < g->last.nmig; j++)
		if (gf_mig_value(&g->last.mig[j], m, &v))
			return true;
	return false;
}

int gf_expo_render(const struct gf_collector *c, const struct gf_counters *k,
		   int64_t now_ms, struct gf_buf *out)
{
	for (int o = 0; o < k->n; o++) {
		enum gf_metric m = k->order[o];
		const struct gf_metric_def *def = gf_metric_def(m);
		bool any = false;
		for (int i = 0; i < c->n && !any; i++)
			any = has_value(&c->g[i], def, m);
		if (!any)
			continue; /* blank everywhere: no family, as dcgm */
		gf_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", def->name,
			      def->help, def->name, def->type);
		for (int i = 0; i < c->n; i++) {
			const struct gf_tgpu *g = &c->g[i];
			if (!g->last_good_ms)
				continue;
			if (g->last.valid >> m & 1) {
				gf_buf_puts(out, def->name);
				gpu_labels(c, g, k, NULL, out);
				gf_buf_printf(out, " %.15g\n", g->last.v[m]);
			}
			for (int j = 0; def->per_mig && j < g->last.nmig; j++) {
				const struct gf_mig_sample *ms =
					&g->last.mig[j];
				double v;
				if (!gf_mig_value(ms, m, &v))
					continue;
				gf_buf_puts(out, def->name);
				gpu_labels(c, g, k, ms, out);
				gf_buf_printf(out, " %.15g\n", v);
			}
		}
	}
	/* gpufleet's own */
	gf_buf_puts(out, "# HELP gpufleet_gpu_up 1 while the GPU answers NVML, "
			 "0 once it fell off the bus.\n# TYPE gpufleet_gpu_up "
			 "gauge\n");
	for (int i = 0; i < c->n; i++)
		gf_buf_printf(out,
			      "gpufleet_gpu_up{gpu=\"%u\",UUID=\"%s\"} %d\n",
			      c->g[i].index, c->g[i].uuid, !c->g[i].lost);
	gf_buf_puts(out, "# HELP gpufleet_sample_age_seconds Age of the values "
			 "shown for the GPU (grows while NVML fails).\n# TYPE "
			 "gpufleet_sample_age_seconds gauge\n");
	for (int i = 0; i < c->n; i++)
		if (c->g[i].last_good_ms)
			gf_buf_printf(out,
				      "gpufleet_sample_age_seconds{gpu=\"%u\","
				      "UUID=\"%s\"} %.3f\n",
				      c->g[i].index, c->g[i].uuid,
				      (double)(now_ms - c->g[i].last_good_ms) /
					      1e3);
	nvlink_family(c, out, "tx", "sent");
	nvlink_family(c, out, "rx", "received");
	gf_buf_puts(out, "# HELP gpufleet_nvml_errors_total Samples in which "
			 "some NVML call failed.\n# TYPE "
			 "gpufleet_nvml_errors_total counter\n");
	for (int i = 0; i < c->n; i++)
		gf_buf_printf(
			out,
			"gpufleet_nvml_errors_total{gpu=\"%u\",UUID=\"%s\"} "
			"%llu\n",
			c->g[i].index, c->g[i].uuid,
			(unsigned long long)c->g[i].errors);
	gf_buf_puts(out, "# HELP gpufleet_gpu_process A compute process on the "
			 "GPU, with its Kubernetes pod and container or Slurm "
			 "job when its cgroup says so.\n# TYPE "
			 "gpufleet_gpu_process gauge\n");
	for (int i = 0; i < c->n; i++)
		for (int p = 0; p < c->g[i].nprocs; p++) {
			const struct gf_owner *o = &c->g[i].owners[p];
			char pid[16];
			snprintf(pid, sizeof(pid), "%u", c->g[i].pids[p]);
			gf_buf_puts(out, "gpufleet_gpu_process{");
			char idx[16];
			snprintf(idx, sizeof(idx), "%u", c->g[i].index);
			label(out, "gpu", idx, true);
			label(out, "UUID", c->g[i].uuid, false);
			label(out, "pid", pid, false);
			label(out, "pod_uid", o->pod_uid, false);
			label(out, "container", o->container, false);
			label(out, "slurm_job", o->slurm_job, false);
			gf_buf_puts(out, "} 1\n");
		}
	gf_buf_printf(out,
		      "# HELP gpufleet_samples_total Sampling rounds done.\n"
		      "# TYPE gpufleet_samples_total counter\n"
		      "gpufleet_samples_total %llu\n",
		      (unsigned long long)c->samples);
	return out->len >= out->cap ? GF_ETOOBIG : 0;
}

int gf_expo_gpus_json(const struct gf_collector *c, int64_t now_ms,
		      struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "hostname", c->hostname);
	gf_json_str(&j, "driver", c->driver);
	gf_json_arr_begin(&j, "gpus");
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "index", g->index);
		gf_json_str(&j, "uuid", g->uuid);
		gf_json_str(&j, "pci_bus_id", g->busid);
		gf_json_str(&j, "name", g->name);
		gf_json_bool(&j, "up", !g->lost);
		if (g->last_good_ms)
			gf_json_double(&j, "sample_age_s",
				       (double)(now_ms - g->last_good_ms) /
					       1e3);
		else
			gf_json_null(&j, "sample_age_s");
		gf_json_obj_begin(&j, "metrics");
		for (int m = 0; m < GF_M_COUNT; m++)
			if (g->last.valid >> m & 1)
				gf_json_double(&j, gf_metric_def(m)->name,
					       g->last.v[m]);
		gf_json_obj_end(&j);
		gf_json_int(&j, "processes", g->last.nproc);
		gf_json_arr_begin(&j, "mig_instances");
		for (int k = 0; k < g->last.nmig; k++) {
			gf_json_obj_begin(&j, NULL);
			gf_json_int(&j, "gpu_instance_id",
				    g->last.mig[k].gi_id);
			gf_json_double(&j, "fb_used_mib",
				       g->last.mig[k].fb_used);
			gf_json_double(&j, "fb_free_mib",
				       g->last.mig[k].fb_free);
			gf_json_obj_end(&j);
		}
		gf_json_arr_end(&j);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}

/* A GPU's ring as diagnosis points, oldest first; mig >= 0: that MIG
 * instance (by position in the samples) instead of the whole GPU. */
static int points_of(const struct gf_tgpu *g, int mig,
		     struct gf_diag_point *out)
{
	int n = 0;
	for (int i = g->n - 1; i >= 0; i--) {
		const struct gf_sample *s = gf_collector_recent(g, i);
		struct gf_diag_point *p = &out[n];
		if (s == NULL)
			continue;
		p->t_ms = s->t_ms;
		if (mig >= 0) {
			if (mig >= s->nmig)
				continue;
			p->util = -1;
			p->fb_used = s->mig[mig].fb_used;
			p->fb_total = s->mig[mig].fb_used + s->mig[mig].fb_free;
			p->pcie_rx = -1;
			p->nproc = s->mig[mig].fb_used > 0 ? 1 : 0;
		} else {
			/* SM activity where GPM gives it, else the duty
			 * cycle */
			p->util = s->valid >> GF_M_PROF_SM_ACTIVE & 1
					  ? 100 * s->v[GF_M_PROF_SM_ACTIVE]
				  : s->valid >> GF_M_GPU_UTIL & 1
					  ? s->v[GF_M_GPU_UTIL]
					  : -1;
			p->fb_used = s->v[GF_M_FB_USED];
			p->fb_total = s->v[GF_M_FB_USED] + s->v[GF_M_FB_FREE];
			p->pcie_rx = s->valid >> GF_M_PCIE_RX & 1
					     ? s->v[GF_M_PCIE_RX]
					     : -1;
			p->nproc = s->nproc;
		}
		n++;
	}
	return n;
}

/* Judge GPU g (mig < 0) or its mig-th instance over its ring.  The
 * points buffer is static: callers are serialised (collect.h). */
static void judge(const struct gf_tgpu *g, int mig,
		  const struct gf_diag_opts *o, struct gf_diag_result *r)
{
	static struct gf_diag_point pts[GF_RING];
	int n = points_of(g, mig, pts);
	gf_diagnose(pts, n, mig >= 0, o, r);
}

typedef void (*hit_fn)(void *ctx, const struct gf_tgpu *g, int mig,
		       enum gf_diag_reason k, const char *why);

/* fn for every reason hit, on every GPU and MIG instance; the count. */
static int each_hit(const struct gf_collector *c, const struct gf_diag_opts *o,
		    hit_fn fn, void *ctx)
{
	int hits = 0;
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		for (int m = -1; m < g->last.nmig; m++) {
			struct gf_diag_result r;
			judge(g, m, o, &r);
			for (int k = 0; k < GF_DIAG_NREASONS; k++)
				if (r.hit[k]) {
					fn(ctx, g, m, (enum gf_diag_reason)k,
					   r.why[k]);
					hits++;
				}
		}
	}
	return hits;
}

int gf_expo_render_diag(const struct gf_collector *c,
			const struct gf_diag_opts *o, struct gf_buf *out)
{
	gf_buf_puts(out, "# HELP gpufleet_diagnosis 1 when gpufleet judges the "
			 "GPU wasted for the reason given.\n# TYPE "
			 "gpufleet_diagnosis gauge\n");
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		struct gf_diag_result r;
		judge(g, -1, o, &r);
		for (int k = 0; k < GF_DIAG_MIG_SLACK; k++)
			gf_buf_printf(
				out,
				"gpufleet_diagnosis{gpu=\"%u\",UUID=\"%s\","
				"reason=\"%s\"} %d\n",
				g->index, g->uuid,
				gf_diag_reason_name((enum gf_diag_reason)k),
				r.hit[k]);
		for (int m = 0; m < g->last.nmig; m++) {
			judge(g, m, o, &r);
			gf_buf_printf(
				out,
				"gpufleet_diagnosis{gpu=\"%u\",UUID=\"%s\","
				"GPU_I_ID=\"%u\",reason=\"mig-slack\"} "
				"%d\n",
				g->index, g->uuid, g->last.mig[m].gi_id,
				r.hit[GF_DIAG_MIG_SLACK]);
		}
	}
	return out->len >= out->cap ? GF_ETOOBIG : 0;
}

static void hit_text(void *ctx, const struct gf_tgpu *g, int mig,
		     enum gf_diag_reason k, const char *why)
{
	struct gf_buf *out = ctx;
	if (mig >= 0)
		gf_buf_printf(out, "  GPU%u GI %u", g->index,
			      g->last.mig[mig].gi_id);
	else
		gf_buf_printf(out, "  GPU%u", g->index);
	gf_buf_printf(out, " [%s]: %s\n", gf_diag_reason_name(k), why);
}

int gf_expo_diag_text(const struct gf_collector *c,
		      const struct gf_diag_opts *o, struct gf_buf *out)
{
	gf_buf_printf(out, "gpufleet diagnose: %s, %d GPUs, window %.0f s\n\n",
		      c->hostname, c->n, o->window_s);
	if (each_hit(c, o, hit_text, out) == 0)
		gf_buf_puts(out, "  no waste found\n");
	return out->len >= out->cap ? GF_ETOOBIG : 0;
}

static void hit_json(void *ctx, const struct gf_tgpu *g, int mig,
		     enum gf_diag_reason k, const char *why)
{
	struct gf_json *j = ctx;
	gf_json_obj_begin(j, NULL);
	gf_json_int(j, "gpu", g->index);
	gf_json_str(j, "uuid", g->uuid);
	if (mig >= 0)
		gf_json_int(j, "gpu_instance_id", g->last.mig[mig].gi_id);
	gf_json_str(j, "reason", gf_diag_reason_name(k));
	gf_json_str(j, "why", why);
	gf_json_obj_end(j);
}

int gf_expo_diag_json(const struct gf_collector *c,
		      const struct gf_diag_opts *o, struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_double(&j, "window_s", o->window_s);
	gf_json_arr_begin(&j, "findings");
	each_hit(c, o, hit_json, &j);
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}
