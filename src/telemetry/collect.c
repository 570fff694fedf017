/*
 * collect.c - NVML sampling into rings, and the Prometheus page.
 */
#include "collect.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/mig.h>

#include "../util/json.h"
#include "../util/mem.h"
#include "diagnose.h"

int gf_collector_open(struct gf_collector *c, struct gf_err *e)
{
	memset(c, 0, sizeof(*c));
	int rc = gf_nvml_open(&c->nv, e);
	if (rc)
		return rc;
	const struct gf_nvml *nv = c->nv;
	if (gethostname(c->hostname, sizeof(c->hostname)) != 0)
		snprintf(c->hostname, sizeof(c->hostname), "localhost");
	if (nv->nvmlSystemGetDriverVersion)
		nv->nvmlSystemGetDriverVersion(c->driver, sizeof(c->driver));
	unsigned count = 0;
	nv->nvmlDeviceGetCount(&count);
	if (nv->nvmlEventSetCreate &&
	    nv->nvmlEventSetCreate(&c->events) != NVML_SUCCESS)
		c->events = NULL;
	for (unsigned i = 0; i < count && c->n < GF_TEL_MAX_GPUS; i++) {
		struct gf_tgpu *g = &c->g[c->n];
		if (nv->nvmlDeviceGetHandleByIndex(i, &g->dev) != NVML_SUCCESS)
			continue;
		g->index = i;
		if (nv->nvmlDeviceGetUUID)
			nv->nvmlDeviceGetUUID(g->dev, g->uuid, sizeof(g->uuid));
		if (nv->nvmlDeviceGetName)
			nv->nvmlDeviceGetName(g->dev, g->name, sizeof(g->name));
		nvmlPciInfo_t pci;
		if (nv->nvmlDeviceGetPciInfo &&
		    nv->nvmlDeviceGetPciInfo(g->dev, &pci) == NVML_SUCCESS) {
			snprintf(g->busid, sizeof(g->busid), "%s", pci.busId);
			g->devid = (uint16_t)(pci.pciDeviceId >> 16);
		}
		nvmlGpmSupport_t sup = { .version = NVML_GPM_SUPPORT_VERSION };
		g->gpm = nv->nvmlGpmQueryDeviceSupport &&
			 nv->nvmlGpmSampleAlloc && nv->nvmlGpmSampleFree &&
			 nv->nvmlGpmSampleGet && nv->nvmlGpmMetricsGet &&
			 nv->nvmlGpmQueryDeviceSupport(g->dev, &sup) ==
				 NVML_SUCCESS &&
			 sup.isSupportedDevice;
		if (c->events && nv->nvmlDeviceRegisterEvents)
			nv->nvmlDeviceRegisterEvents(
				g->dev, NVML_EVENT_TYPE_XID_CRITICAL_ERROR,
				c->events);
		g->ring = gf_calloc(GF_RING, sizeof(*g->ring));
		c->n++;
	}
	return 0;
}

static void gpm_free(const struct gf_nvml *nv, struct gf_gpm_pair *p)
{
	if (!p->alloc)
		return;
	nv->nvmlGpmSampleFree(p->s[0]);
	nv->nvmlGpmSampleFree(p->s[1]);
	p->alloc = false;
}

void gf_collector_close(struct gf_collector *c)
{
	for (int i = 0; i < c->n; i++) {
		gf_free(c->g[i].ring);
		gpm_free(c->nv, &c->g[i].gpm_gpu);
		for (int k = 0; k < GF_GPM_MAX_GI; k++)
			gpm_free(c->nv, &c->g[i].gpm_gi[k]);
	}
	if (c->events && c->nv->nvmlEventSetFree)
		c->nv->nvmlEventSetFree(c->events);
	gf_nvml_close();
	c->n = 0;
}

#define SET(s, m, x)                     \
	do {                             \
		(s)->v[m] = (x);         \
		(s)->valid |= 1u << (m); \
	} while (0)

/* Who owns a process, from /proc/PID/cgroup (nobody when unreadable). */
static void owner_of(unsigned pid, struct gf_owner *o)
{
	char path[64], text[4096];
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	memset(o, 0, sizeof(*o));
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	gf_cgroup_owner(text, o);
}

/* The profile name of GPU instance `id`: NVML's MIG device handles do
 * not carry it, so match the instance among each profile's. */
static void gi_profile(const struct gf_nvml *nv, const struct gf_tgpu *g,
		       unsigned id, char *out, size_t size)
{
	const struct gf_mig_model *m = gf_mig_model_by_pci(g->devid);
	snprintf(out, size, "unknown");
	if (!m || !nv->nvmlDeviceGetGpuInstanceProfileInfo ||
	    !nv->nvmlDeviceGetGpuInstances || !nv->nvmlGpuInstanceGetInfo)
		return;
	for (int p = 0; p < m->nprofiles; p++) {
		nvmlGpuInstanceProfileInfo_t info;
		nvmlGpuInstance_t gis[GF_MIG_MAX_INSTANCES];
		unsigned n = GF_MIG_MAX_INSTANCES;
		if (nv->nvmlDeviceGetGpuInstanceProfileInfo(
			    g->dev, m->profiles[p].nvml_enum, &info) !=
			    NVML_SUCCESS ||
		    nv->nvmlDeviceGetGpuInstances(g->dev, info.id, gis, &n) !=
			    NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < n; k++) {
			nvmlGpuInstanceInfo_t gi;
			if (nv->nvmlGpuInstanceGetInfo(gis[k], &gi) ==
				    NVML_SUCCESS &&
			    gi.id == id) {
				snprintf(out, size, "%s", m->profiles[p].name);
				return;
			}
		}
	}
}

/* The GPM metrics read, in the order of gf_mig_sample.gpm. */
static const struct {
	unsigned id;
	enum gf_metric m;
} gpm_metrics[4] = {
	{ NVML_GPM_METRIC_GRAPHICS_UTIL, GF_M_PROF_GR },
	{ NVML_GPM_METRIC_ANY_TENSOR_UTIL, GF_M_PROF_TENSOR },
	{ NVML_GPM_METRIC_DRAM_BW_UTIL, GF_M_PROF_DRAM },
	{ NVML_GPM_METRIC_SM_UTIL, GF_M_PROF_SM_ACTIVE },
};

/*
 * Take a GPM sample of the GPU (gi < 0) or of GPU instance gi into p;
 * with the previous one, each metric over the interval as a DCGM ratio
 * (GPM gives percent) into out[], bit i of the result set when out[i]
 * holds one.  The first sample, and any after a failure, gives none.
 */
static uint32_t gpm_read(const struct gf_nvml *nv, nvmlDevice_t d, int gi,
			 struct gf_gpm_pair *p, double out[4])
{
	if (!p->alloc) {
		if (nv->nvmlGpmSampleAlloc(&p->s[0]) != NVML_SUCCESS)
			return 0;
		if (nv->nvmlGpmSampleAlloc(&p->s[1]) != NVML_SUCCESS) {
			nv->nvmlGpmSampleFree(p->s[0]);
			return 0;
		}
		p->alloc = true;
		p->prev_ok = false;
	}
	nvmlGpmSample_t cur = p->s[p->cur], prev = p->s[!p->cur];
	nvmlReturn_t r = gi < 0 ? nv->nvmlGpmSampleGet(d, cur)
			 : nv->nvmlGpmMigSampleGet
				 ? nv->nvmlGpmMigSampleGet(d, (unsigned)gi, cur)
				 : NVML_ERROR_FUNCTION_NOT_FOUND;
	bool had = p->prev_ok;
	p->prev_ok = r == NVML_SUCCESS;
	if (r != NVML_SUCCESS)
		return 0;
	p->cur = !p->cur;
	if (!had)
		return 0;
	nvmlGpmMetricsGet_t mg;
	memset(&mg, 0, sizeof(mg));
	mg.version = NVML_GPM_METRICS_GET_VERSION;
	mg.numMetrics = 4;
	mg.sample1 = prev;
	mg.sample2 = cur;
	for (int i = 0; i < 4; i++)
		mg.metrics[i].metricId = gpm_metrics[i].id;
	if (nv->nvmlGpmMetricsGet(&mg) != NVML_SUCCESS)
		return 0;
	uint32_t valid = 0;
	for (int i = 0; i < 4; i++)
		if (mg.metrics[i].nvmlReturn == NVML_SUCCESS) {
			double v = mg.metrics[i].value / 100.0;
			out[i] = v < 0 ? 0 : v > 1 ? 1 : v;
			valid |= 1u << i;
		}
	return valid;
}

/* Returns the number of NVML calls that failed; *lost when the GPU is. */
static int sample_gpu(struct gf_collector *c, struct gf_tgpu *g,
		      struct gf_sample *s, bool *lost)
{
	const struct gf_nvml *nv = c->nv;
	nvmlDevice_t d = g->dev;
	int fails = 0, calls = 0;
	nvmlReturn_t r;
#define CALL(expr)                                                        \
	(calls++, (r = (expr)) == NVML_SUCCESS                            \
			  ? true                                          \
			  : (fails += r != NVML_ERROR_NOT_SUPPORTED &&    \
				      r != NVML_ERROR_FUNCTION_NOT_FOUND, \
			     *lost |= r == NVML_ERROR_GPU_IS_LOST, false))
	unsigned u, p;
	unsigned long long ull;
	nvmlUtilization_t ut;
	if (nv->nvmlDeviceGetClockInfo &&
	    CALL(nv->nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &u)))
		SET(s, GF_M_SM_CLOCK, u);
	if (nv->nvmlDeviceGetClockInfo &&
	    CALL(nv->nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &u)))
		SET(s, GF_M_MEM_CLOCK, u);
	if (nv->nvmlDeviceGetTemperature &&
	    CALL(nv->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u)))
		SET(s, GF_M_GPU_TEMP, u);
	if (nv->nvmlDeviceGetPowerUsage &&
	    CALL(nv->nvmlDeviceGetPowerUsage(d, &u)))
		SET(s, GF_M_POWER, u / 1000.0);
	if (nv->nvmlDeviceGetTotalEnergyConsumption &&
	    CALL(nv->nvmlDeviceGetTotalEnergyConsumption(d, &ull)))
		SET(s, GF_M_ENERGY, (double)ull);
	if (nv->nvmlDeviceGetPcieReplayCounter &&
	    CALL(nv->nvmlDeviceGetPcieReplayCounter(d, &u)))
		SET(s, GF_M_PCIE_REPLAY, u);
	if (nv->nvmlDeviceGetUtilizationRates &&
	    CALL(nv->nvmlDeviceGetUtilizationRates(d, &ut))) {
		SET(s, GF_M_GPU_UTIL, ut.gpu);
		SET(s, GF_M_MEM_COPY_UTIL, ut.memory);
	}
	if (nv->nvmlDeviceGetEncoderUtilization &&
	    CALL(nv->nvmlDeviceGetEncoderUtilization(d, &u, &p)))
		SET(s, GF_M_ENC_UTIL, u);
	if (nv->nvmlDeviceGetDecoderUtilization &&
	    CALL(nv->nvmlDeviceGetDecoderUtilization(d, &u, &p)))
		SET(s, GF_M_DEC_UTIL, u);
	nvmlMemory_t mem;
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	if (nv->nvmlDeviceGetMemoryInfo_v2 &&
	    CALL(nv->nvmlDeviceGetMemoryInfo_v2(d, &m2))) {
		SET(s, GF_M_FB_FREE, (double)(m2.free >> 20));
		SET(s, GF_M_FB_USED, (double)(m2.used >> 20));
		SET(s, GF_M_FB_RESERVED, (double)(m2.reserved >> 20));
	} else if (nv->nvmlDeviceGetMemoryInfo &&
		   CALL(nv->nvmlDeviceGetMemoryInfo(d, &mem))) {
		/* v1: used includes what the driver reserves */
		SET(s, GF_M_FB_FREE, (double)(mem.free >> 20));
		SET(s, GF_M_FB_USED, (double)(mem.used >> 20));
	}
	unsigned corr, unc, pend, fail;
	if (nv->nvmlDeviceGetRemappedRows &&
	    CALL(nv->nvmlDeviceGetRemappedRows(d, &corr, &unc, &pend, &fail))) {
		SET(s, GF_M_COR_REMAPPED, corr);
		SET(s, GF_M_UNC_REMAPPED, unc);
		SET(s, GF_M_REMAP_FAILURE, fail);
	}
	if (nv->nvmlDeviceGetPcieThroughput &&
	    CALL(nv->nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_TX_BYTES,
						 &u)))
		SET(s, GF_M_PCIE_TX, u * 1024.0);
	if (nv->nvmlDeviceGetPcieThroughput &&
	    CALL(nv->nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES,
						 &u)))
		SET(s, GF_M_PCIE_RX, u * 1024.0);
	SET(s, GF_M_XID, g->last_xid);
	double gv[4];
	uint32_t gvalid = g->gpm ? gpm_read(nv, d, -1, &g->gpm_gpu, gv) : 0;
	for (int i = 0; i < 4; i++)
		if (gvalid >> i & 1)
			SET(s, gpm_metrics[i].m, gv[i]);
	/* processes, and MIG instances (memory per GPU instance) */
	unsigned np = 16;
	nvmlProcessInfo_t procs[16];
	if (nv->nvmlDeviceGetComputeRunningProcesses) {
		r = nv->nvmlDeviceGetComputeRunningProcesses(d, &np, procs);
		s->nproc =
			r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE
				? (int)np
				: 0;
		g->nprocs = r == NVML_SUCCESS ? (int)np : 0;
		for (int i = 0; i < g->nprocs; i++) {
			g->pids[i] = procs[i].pid;
			owner_of(procs[i].pid, &g->owners[i]);
		}
	}
	unsigned cur = 0, pending = 0, max = 0;
	if (nv->nvmlDeviceGetMigMode &&
	    nv->nvmlDeviceGetMigMode(d, &cur, &pending) == NVML_SUCCESS &&
	    cur == NVML_DEVICE_MIG_ENABLE &&
	    nv->nvmlDeviceGetMaxMigDeviceCount &&
	    nv->nvmlDeviceGetMaxMigDeviceCount(d, &max) == NVML_SUCCESS) {
		for (unsigned k = 0; k < max && s->nmig < GF_TEL_MAX_MIG; k++) {
			nvmlDevice_t mig;
			unsigned id;
			if (nv->nvmlDeviceGetMigDeviceHandleByIndex(
				    d, k, &mig) != NVML_SUCCESS ||
			    nv->nvmlDeviceGetGpuInstanceId(mig, &id) !=
				    NVML_SUCCESS)
				continue;
			struct gf_mig_sample *ms = &s->mig[s->nmig++];
			memset(ms, 0, sizeof(*ms));
			ms->gi_id = id;
			gi_profile(nv, g, id, ms->profile, sizeof(ms->profile));
			if (nv->nvmlDeviceGetMemoryInfo(mig, &mem) ==
			    NVML_SUCCESS) {
				ms->fb_used = (double)(mem.used >> 20);
				ms->fb_free = (double)(mem.free >> 20);
				ms->fb_ok = true;
			}
			if (g->gpm && id < GF_GPM_MAX_GI)
				ms->gpm_valid =
					gpm_read(nv, d, (int)id, &g->gpm_gi[id],
						 ms->gpm);
		}
	}
#undef CALL
	return calls > 0 && fails == calls ? -1 : fails;
}

static void drain_xid(struct gf_collector *c)
{
	if (!c->events || !c->nv->nvmlEventSetWait)
		return;
	nvmlEventData_t ev;
	for (int k = 0; k < 64; k++) {
		if (c->nv->nvmlEventSetWait(c->events, &ev, 0) != NVML_SUCCESS)
			break;
		for (int i = 0; i < c->n; i++)
			if (c->g[i].dev == ev.device)
				c->g[i].last_xid = (double)ev.eventData;
	}
}

void gf_collector_sample(struct gf_collector *c, int64_t now_ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	drain_xid(c);
	for (int i = 0; i < c->n; i++) {
		struct gf_tgpu *g = &c->g[i];
		if (g->lost)
			continue;
		struct gf_sample s;
		memset(&s, 0, sizeof(s));
		s.t_ms = now_ms;
		bool lost = false;
		int rc = sample_gpu(c, g, &s, &lost);
		if (lost) {
			g->lost = true;
			continue;
		}
		if (rc != 0)
			g->errors++;
		if (rc < 0)
			continue; /* every call failed: keep the last good */
		g->last = s;
		g->last_good_ms = now_ms;
		g->ring[g->head] = s;
		g->head = (g->head + 1) % GF_RING;
		if (g->n < GF_RING)
			g->n++;
	}
	c->samples++;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	c->cpu_ms_last = (double)(b.tv_sec - a.tv_sec) * 1e3 +
			 (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

const struct gf_sample *gf_collector_recent(const struct gf_tgpu *g, int i)
{
	if (i < 0 || i >= g->n)
		return NULL;
	return &g->ring[(g->head - 1 - i + 2 * GF_RING) % GF_RING];
}

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

/* A per-MIG metric's value on one instance; false when it has none. */
static bool mig_value(const struct gf_mig_sample *ms, enum gf_metric m,
		      double *v)
{
	if (m == GF_M_FB_USED || m == GF_M_FB_FREE) {
		*v = m == GF_M_FB_USED ? ms->fb_used : ms->fb_free;
		return ms->fb_ok;
	}
	for (int i = 0; i < 4; i++)
		if (gpm_metrics[i].m == m && (ms->gpm_valid >> i & 1)) {
			*v = ms->gpm[i];
			return true;
		}
	return false;
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
		if (mig_value(&g->last.mig[j], m, &v))
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
				if (!mig_value(ms, m, &v))
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

int gf_expo_render_diag(const struct gf_collector *c,
			const struct gf_diag_opts *o, struct gf_buf *out)
{
	static struct gf_diag_point pts[GF_RING];
	gf_buf_puts(out, "# HELP gpufleet_diagnosis 1 when gpufleet judges the "
			 "GPU wasted for the reason given.\n# TYPE "
			 "gpufleet_diagnosis gauge\n");
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		struct gf_diag_result r;
		int n = points_of(g, -1, pts);
		gf_diagnose(pts, n, false, o, &r);
		for (int k = 0; k < GF_DIAG_MIG_SLACK; k++)
			gf_buf_printf(
				out,
				"gpufleet_diagnosis{gpu=\"%u\",UUID=\"%s\","
				"reason=\"%s\"} %d\n",
				g->index, g->uuid,
				gf_diag_reason_name((enum gf_diag_reason)k),
				r.hit[k]);
		for (int m = 0; m < g->last.nmig; m++) {
			n = points_of(g, m, pts);
			gf_diagnose(pts, n, true, o, &r);
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

int gf_expo_diag_text(const struct gf_collector *c,
		      const struct gf_diag_opts *o, struct gf_buf *out)
{
	static struct gf_diag_point pts[GF_RING];
	int hits = 0;
	gf_buf_printf(out, "gpufleet diagnose: %s, %d GPUs, window %.0f s\n\n",
		      c->hostname, c->n, o->window_s);
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		for (int m = -1; m < g->last.nmig; m++) {
			struct gf_diag_result r;
			int n = points_of(g, m, pts);
			gf_diagnose(pts, n, m >= 0, o, &r);
			for (int k = 0; k < GF_DIAG_NREASONS; k++) {
				if (!r.hit[k])
					continue;
				hits++;
				if (m >= 0)
					gf_buf_printf(out, "  GPU%u GI %u",
						      g->index,
						      g->last.mig[m].gi_id);
				else
					gf_buf_printf(out, "  GPU%u", g->index);
				gf_buf_printf(out, " [%s]: %s\n",
					      gf_diag_reason_name(
						      (enum gf_diag_reason)k),
					      r.why[k]);
			}
		}
	}
	if (hits == 0)
		gf_buf_puts(out, "  no waste found\n");
	return out->len >= out->cap ? GF_ETOOBIG : 0;
}

int gf_expo_diag_json(const struct gf_collector *c,
		      const struct gf_diag_opts *o, struct gf_buf *out)
{
	static struct gf_diag_point pts[GF_RING];
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_double(&j, "window_s", o->window_s);
	gf_json_arr_begin(&j, "findings");
	for (int i = 0; i < c->n; i++) {
		const struct gf_tgpu *g = &c->g[i];
		for (int m = -1; m < g->last.nmig; m++) {
			struct gf_diag_result r;
			int n = points_of(g, m, pts);
			gf_diagnose(pts, n, m >= 0, o, &r);
			for (int k = 0; k < GF_DIAG_NREASONS; k++) {
				if (!r.hit[k])
					continue;
				gf_json_obj_begin(&j, NULL);
				gf_json_int(&j, "gpu", g->index);
				gf_json_str(&j, "uuid", g->uuid);
				if (m >= 0)
					gf_json_int(&j, "gpu_instance_id",
						    g->last.mig[m].gi_id);
				gf_json_str(&j, "reason",
					    gf_diag_reason_name(
						    (enum gf_diag_reason)k));
				gf_json_str(&j, "why", r.why[k]);
				gf_json_obj_end(&j);
			}
		}
	}
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}
