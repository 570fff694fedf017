/*
 * expo.c - the collector's samples as pages: Prometheus text (dcgm-exporter's
 * names, then gpufleet's own), diagnoses, and JSON for /v1/gpus.
 */
#include "telemetry/expo.h"

#include <stdio.h>
#include <string.h>

#include "telemetry/diagnose.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

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

/* a, comma-joined onto list (of cap bytes) unless there already */
static void join_once(char *list, size_t cap, const char *a)
{
	size_t n = strlen(a), len = strlen(list);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t k = end ? (size_t)(end - p) : strlen(p);
		if (k == n && !strncmp(p, a, n))
			return;
		p += k + (end != NULL);
	}
	if (len + n + 2 <= cap)
		gf_note(list + len, cap - len, "%s%s", len ? "," : "", a);
}

/* `job` and `team` of the gpufleet jobs on GPU g (mig NULL) or on its
 * instance mig; none when no job runs there. */
static void job_labels(const struct gf_collector *c, const struct gf_tgpu *g,
		       const struct gf_mig_sample *mig, struct gf_buf *b)
{
	const char *dev = "";
	if (mig && mig->gi_id < GF_GI_ID_MAX)
		dev = g->gi_uuid[mig->gi_id];
	if (mig && !dev[0])
		return; /* an instance whose UUID NVML did not give */
	char jobs[256] = "", teams[256] = "";
	for (int i = 0; i < c->njobs; i++) {
		const struct gf_dev_job *x = &c->jobs[i];
		if (x->gpu != g->index || strcmp(x->mig_uuid, dev) != 0)
			continue;
		join_once(jobs, sizeof(jobs), x->job);
		join_once(teams, sizeof(teams), x->team);
	}
	if (!jobs[0])
		return;
	label(b, "job", jobs, false);
	label(b, "team", teams, false);
}

static void gpu_labels(const struct gf_collector *c, const struct gf_tgpu *g,
		       const struct gf_counters *k,
		       const struct gf_mig_sample *mig, struct gf_buf *b)
{
	char idx[16], dev[32], gi[16];
	gf_note(idx, sizeof(idx), "%u", g->index);
	gf_note(dev, sizeof(dev), "nvidia%u", g->index);
	gf_buf_putc(b, '{');
	label(b, "gpu", idx, true);
	label(b, "UUID", g->uuid, false);
	label(b, "pci_bus_id", g->busid, false);
	label(b, "device", dev, false);
	label(b, "modelName", g->name, false);
	if (mig) {
		gf_note(gi, sizeof(gi), "%u", mig->gi_id);
		label(b, "GPU_I_PROFILE", mig->profile, false);
		label(b, "GPU_I_ID", gi, false);
	}
	label(b, "Hostname", c->hostname, false);
	if (k->driver_label)
		label(b, "DCGM_FI_DRIVER_VERSION", c->driver, false);
	job_labels(c, g, mig, b);
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

/* gpufleet_gpu_healthy and gpufleet_gpu_xid_total (health.h). */
static void health_families(const struct gf_collector *c, struct gf_buf *out)
{
	gf_buf_puts(out, "# HELP gpufleet_gpu_healthy 1 while the GPU may take "
			 "new work, 0 after an Xid that needs a reset, during "
			 "a transient Xid's quiet period, or off the bus.\n"
			 "# TYPE gpufleet_gpu_healthy gauge\n");
	for (int i = 0; i < c->n; i++)
		gf_buf_printf(out,
			      "gpufleet_gpu_healthy{gpu=\"%u\",UUID=\"%s\"} "
			      "%d\n",
			      c->g[i].index, c->g[i].uuid,
			      gf_health_is_healthy(&c->health, i));
	gf_buf_puts(out, "# HELP gpufleet_gpu_xid_total Xid events of the GPU "
			 "since the agent started, by class (reset, "
			 "transient, application).\n# TYPE "
			 "gpufleet_gpu_xid_total counter\n");
	for (int i = 0; i < c->n; i++) {
		const struct gf_health_gpu *h = gf_health_gpu(&c->health, i);
		for (int k = 0; k < GF_XID_NCLASS; k++)
			gf_buf_printf(
				out,
				"gpufleet_gpu_xid_total{gpu=\"%u\",UUID=\"%s\","
				"class=\"%s\"} %llu\n",
				c->g[i].index, c->g[i].uuid,
				gf_xid_class_name((enum gf_xid_class)k),
				h ? (unsigned long long)h->by_class[k] : 0ULL);
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
	health_families(c, out);
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
			gf_note(pid, sizeof(pid), "%u", c->g[i].pids[p]);
			gf_buf_puts(out, "gpufleet_gpu_process{");
			char idx[16];
			gf_note(idx, sizeof(idx), "%u", c->g[i].index);
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
	return gf_buf_error(out);
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
		char why[GF_HEALTH_REASON_MAX];
		const struct gf_health_gpu *h = gf_health_gpu(&c->health, i);
		gf_json_bool(&j, "healthy",
			     gf_health_is_healthy(&c->health, i));
		gf_json_str(&j, "health_reason",
			    gf_health_reason(&c->health, i, why, sizeof(why)));
		if (h) {
			gf_json_int(&j, "health_since_ms", h->since_ms);
			gf_json_uint(&j, "xids", h->xids);
		} else {
			gf_json_null(&j, "health_since_ms");
			gf_json_uint(&j, "xids", 0);
		}
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
			gf_json_str(&j, "gpu_instance_profile",
				    g->last.mig[k].profile);
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

/* Bit m set when the page exports metric m. */
static uint32_t exported(const struct gf_counters *k)
{
	uint32_t ex = 0;
	for (int i = 0; i < k->n; i++)
		ex |= 1u << k->order[i];
	return ex;
}

/* The activity signals, and the metric each reads. */
static const enum gf_metric act_metric[GF_DIAG_NACT] = {
	[GF_DIAG_GR] = GF_M_PROF_GR,
	[GF_DIAG_SM] = GF_M_PROF_SM_ACTIVE,
	[GF_DIAG_TENSOR] = GF_M_PROF_TENSOR,
	[GF_DIAG_UTIL] = GF_M_GPU_UTIL,
};

/* Sample s as a diagnosis point of the whole GPU, from what ex exports. */
static void gpu_point(const struct gf_sample *s, uint32_t ex,
		      struct gf_diag_point *p)
{
	uint32_t has = s->valid & ex;
#define HAS(m) (has >> (m)&1)
	gf_diag_point_init(p, s->t_ms);
	for (int a = 0; a < GF_DIAG_NACT; a++)
		if (HAS(act_metric[a]))
			/* GPM gives DCGM's ratios, utilisation percent */
			p->act[a] = a == GF_DIAG_UTIL
					    ? s->v[act_metric[a]]
					    : 100 * s->v[act_metric[a]];
	if (HAS(GF_M_FB_USED))
		p->fb_used = s->v[GF_M_FB_USED];
	/* a GPU in MIG mode: its instances are judged for memory
	 * (mig-slack), not the GPU, which no smaller profile could replace */
	if (HAS(GF_M_FB_USED) && HAS(GF_M_FB_FREE) && s->nmig == 0)
		p->fb_total =
			s->v[GF_M_FB_USED] + s->v[GF_M_FB_FREE] +
			(HAS(GF_M_FB_RESERVED) ? s->v[GF_M_FB_RESERVED] : 0);
	if (HAS(GF_M_PCIE_RX))
		p->pcie_rx = s->v[GF_M_PCIE_RX];
	p->nproc = s->nproc;
#undef HAS
}

/* Instance gi of sample s as a diagnosis point; false when s has none. */
static bool mig_point(const struct gf_sample *s, unsigned gi, uint32_t ex,
		      struct gf_diag_point *p)
{
	const struct gf_mig_sample *ms = NULL;
	for (int j = 0; j < s->nmig && !ms; j++)
		if (s->mig[j].gi_id == gi)
			ms = &s->mig[j];
	if (!ms)
		return false;
	gf_diag_point_init(p, s->t_ms);
	double v;
	for (int a = GF_DIAG_GR; a < GF_DIAG_UTIL; a++)
		if (ex >> act_metric[a] & 1 &&
		    gf_mig_value(ms, act_metric[a], &v))
			p->act[a] = 100 * v;
	if (ex >> GF_M_FB_USED & 1 && ms->fb_ok) {
		p->fb_used = ms->fb_used;
		/* NVML gives no processes per instance: memory in use
		 * stands in */
		p->nproc = ms->fb_used > 0;
		if (ex >> GF_M_FB_FREE & 1)
			p->fb_total = ms->fb_used + ms->fb_free;
	}
	return true;
}

/* Judge GPU g (gi < 0) or its instance gi over its ring. */
static void judge(const struct gf_tgpu *g, int gi, uint32_t ex,
		  const struct gf_diag_opts *o, struct gf_diag_point *pts,
		  struct gf_diag_result *r)
{
	int n = 0;
	for (int i = g->n - 1; i >= 0; i--) {
		const struct gf_sample *s = gf_collector_recent(g, i);
		if (gi < 0)
			gpu_point(s, ex, &pts[n++]);
		else if (mig_point(s, (unsigned)gi, ex, &pts[n]))
			n++;
	}
	gf_diagnose(pts, n, gi >= 0, o, r);
}

int gf_expo_judge(const struct gf_collector *c, const struct gf_counters *k,
		  const struct gf_diag_opts *o, struct gf_diag_verdict **out)
{
	int n = 0, cap = 0, ring = 1;
	for (int i = 0; i < c->n; i++) {
		cap += 1 + c->g[i].last.nmig;
		ring = c->g[i].cap > ring ? c->g[i].cap : ring;
	}
	struct gf_diag_verdict *v = gf_calloc((size_t)cap + 1, sizeof(*v));
	struct gf_diag_point *pts = gf_calloc((size_t)ring, sizeof(*pts));
	uint32_t ex = exported(k);
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		for (int m = -1; m < g->last.nmig; m++) {
			struct gf_diag_verdict *x = &v[n++];
			x->gpu = (int)g->index;
			x->gi = m < 0 ? -1 : (int)g->last.mig[m].gi_id;
			x->uuid = g->uuid;
			x->lost = g->lost;
			judge(g, x->gi, ex, o, pts, &x->r);
		}
	}
	gf_free(pts);
	*out = v;
	return n;
}

int gf_expo_render_diag(const struct gf_diag_verdict *v, int n,
			struct gf_buf *out)
{
	gf_buf_puts(out, "# HELP gpufleet_diagnosis 1 when gpufleet judges the "
			 "GPU wasted for the reason given (absent until "
			 "enough history is recorded).\n# TYPE "
			 "gpufleet_diagnosis gauge\n");
	for (int i = 0; i < n; i++) {
		const struct gf_diag_verdict *x = &v[i];
		if (x->lost || !x->r.judged)
			continue;
		if (x->gi >= 0) {
			gf_buf_printf(
				out,
				"gpufleet_diagnosis{gpu=\"%d\",UUID=\"%s\","
				"GPU_I_ID=\"%d\",reason=\"mig-slack\"} "
				"%d\n",
				x->gpu, x->uuid, x->gi,
				x->r.hit[GF_DIAG_MIG_SLACK]);
			continue;
		}
		for (int k = 0; k < GF_DIAG_MIG_SLACK; k++)
			gf_buf_printf(
				out,
				"gpufleet_diagnosis{gpu=\"%d\",UUID=\"%s\","
				"reason=\"%s\"} %d\n",
				x->gpu, x->uuid,
				gf_diag_reason_name((enum gf_diag_reason)k),
				x->r.hit[k]);
	}
	return gf_buf_error(out);
}

int gf_expo_diag_text(const struct gf_collector *c,
		      const struct gf_diag_verdict *v, int n, double window_s,
		      struct gf_buf *out)
{
	gf_buf_printf(out, "gpufleet diagnose: %s, %d GPUs, window %.0f s\n\n",
		      c->hostname, c->n, window_s);
	return gf_diag_report_text(v, n, out);
}
