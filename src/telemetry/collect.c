/*
 * collect.c - NVML sampling into rings.
 */
#include "telemetry/collect.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/mig.h>

#include "util/log.h"
#include "util/mem.h"

int gf_collector_open(struct gf_collector *c, int ring, struct gf_err *e)
{
	memset(c, 0, sizeof(*c));
	if (ring <= 0)
		ring = GF_RING;
	if (ring > GF_RING_MAX)
		ring = GF_RING_MAX;
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
		g->cap = ring;
		g->ring = gf_calloc((size_t)ring, sizeof(*g->ring));
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
		for (int k = 0; k < GF_GI_ID_MAX; k++)
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

static double field_value(const nvmlFieldValue_t *f)
{
	switch (f->valueType) {
	case NVML_VALUE_TYPE_DOUBLE:
		return f->value.dVal;
	case NVML_VALUE_TYPE_UNSIGNED_INT:
		return f->value.uiVal;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		return (double)f->value.ulVal;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		return (double)f->value.sllVal;
	case NVML_VALUE_TYPE_SIGNED_INT:
		return f->value.siVal;
	default:
		return (double)f->value.ullVal;
	}
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
	/* ECC totals: single-bit = corrected, double-bit = uncorrected */
	for (unsigned t = 0; nv->nvmlDeviceGetTotalEccErrors && t < 4; t++)
		if (CALL(nv->nvmlDeviceGetTotalEccErrors(
			    d,
			    t & 1 ? NVML_MEMORY_ERROR_TYPE_UNCORRECTED
				  : NVML_MEMORY_ERROR_TYPE_CORRECTED,
			    t & 2 ? NVML_AGGREGATE_ECC : NVML_VOLATILE_ECC,
			    &ull)))
			SET(s, GF_M_ECC_SBE_VOL + t, (double)ull);
	nvmlFieldValue_t fv[2] = {
		{ .fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX },
		{ .fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX },
	};
	if (nv->nvmlDeviceGetFieldValues &&
	    nv->nvmlDeviceGetFieldValues(d, 2, fv) == NVML_SUCCESS &&
	    fv[0].nvmlReturn == NVML_SUCCESS &&
	    fv[1].nvmlReturn == NVML_SUCCESS) {
		s->nvlink_ok = true;
		s->nvlink_tx = field_value(&fv[0]) * 1024;
		s->nvlink_rx = field_value(&fv[1]) * 1024;
	}
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
	uint32_t seen = 0;
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
			/* an instance new since the last sample: its profile
			 * looked up once, its GPM history dropped */
			if (id < GF_GI_ID_MAX) {
				seen |= 1u << id;
				if (!(g->gi_seen >> id & 1)) {
					gi_profile(nv, g, id, g->gi_prof[id],
						   sizeof(g->gi_prof[id]));
					g->gpm_gi[id].prev_ok = false;
				}
				snprintf(ms->profile, sizeof(ms->profile), "%s",
					 g->gi_prof[id]);
			} else { /* beyond any driver's ids */
				gi_profile(nv, g, id, ms->profile,
					   sizeof(ms->profile));
			}
			if (nv->nvmlDeviceGetMemoryInfo(mig, &mem) ==
			    NVML_SUCCESS) {
				ms->fb_used = (double)(mem.used >> 20);
				ms->fb_free = (double)(mem.free >> 20);
				ms->fb_ok = true;
			}
			if (g->gpm && id < GF_GI_ID_MAX)
				ms->gpm_valid =
					gpm_read(nv, d, (int)id, &g->gpm_gi[id],
						 ms->gpm);
		}
	}
	g->gi_seen = seen;
#undef CALL
	if (gf_log_get_level() >= GF_LOG_DEBUG) {
		int values = 0;
		for (int m = 0; m < GF_M_COUNT; m++)
			values += s->valid >> m & 1;
		gf_log(GF_LOG_DEBUG, "collect",
		       "GPU%u: %d metrics read; NVML calls: %d, %d failed; "
		       "MIG instances: %d; processes: %d; NVLink bytes: %s",
		       g->index, values, calls, fails, s->nmig, s->nproc,
		       s->nvlink_ok ? "yes" : "no");
	}
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
			gf_log(GF_LOG_INFO, "collect",
			       "GPU%u fell off the bus (GPU_IS_LOST): its "
			       "last values stay, gpufleet_gpu_up 0",
			       g->index);
			continue;
		}
		if (rc != 0)
			g->errors++;
		if (rc < 0)
			continue; /* every call failed: keep the last good */
		g->last = s;
		g->last_good_ms = now_ms;
		g->ring[g->head] = s;
		g->head = (g->head + 1) % g->cap;
		if (g->n < g->cap)
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
	return &g->ring[(g->head - 1 - i + 2 * g->cap) % g->cap];
}

long gf_collector_ring_for(double window_s, long interval_ms)
{
	double n = window_s * 1e3 / (double)interval_ms;
	if (n > 1e9)
		return 1000000000L;
	long k = (long)n;
	return ((double)k < n ? k + 1 : k) + 2;
}

bool gf_mig_value(const struct gf_mig_sample *ms, enum gf_metric m, double *v)
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
