/*
 * collect.c - NVML sampling into rings.  A sample of a GPU is a pass of
 * named steps (sample_gpu); the slow counters are read when due (the
 * `slow` table: each one's period and the metrics it gives).  Every
 * NVML entry point can be called (topo/nvml.h stubs the missing ones).
 */
#include "telemetry/collect.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/mig.h>

#include "util/check.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define SET(s, m, x)                     \
	do {                             \
		(s)->v[m] = (x);         \
		(s)->valid |= 1u << (m); \
	} while (0)

/* Who owns a process, from ROOT/PID/cgroup (nobody when unreadable). */
static void owner_of(const char *root, unsigned pid, struct gf_owner *o)
{
	char path[512], text[4096];
	memset(o, 0, sizeof(*o));
	if (gf_fmt(path, sizeof(path), "%s/%u/cgroup", root ? root : "/proc",
		   pid))
		return; /* too long a root: nobody */
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
	gf_note(out, size, "unknown");
	if (!m)
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
				gf_note(out, size, "%s", m->profiles[p].name);
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
				: nv->nvmlGpmMigSampleGet(d, (unsigned)gi, cur);
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

/*
 * One GPU's sample in progress: its NVML calls are counted, and any that
 * failed for a reason other than "not supported" (the driver or the GPU
 * lacks it) too.
 */
struct pass {
	const struct gf_nvml *nv;
	struct gf_tgpu *g;
	nvmlDevice_t d;
	struct gf_sample *s;
	int64_t now_ms;
	const char *proc_root; /* gf_collector.proc_root */
	int calls, fails;
	bool lost;
	uint32_t slow_read;   /* bit k: slow counter k was due and asked */
	uint32_t unsupported; /* bit m: NVML does not give metric m */
};

/* Count one call's answer; true when it succeeded. */
static bool ok(struct pass *x, nvmlReturn_t r)
{
	x->calls++;
	if (r == NVML_SUCCESS)
		return true;
	if (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_FUNCTION_NOT_FOUND)
		x->fails++;
	x->lost |= r == NVML_ERROR_GPU_IS_LOST;
	return false;
}

/* As ok(), and metric m (of a slow counter) is marked not given when
 * NVML says it does not have it, so its last value is dropped. */
static bool slow_ok(struct pass *x, nvmlReturn_t r, enum gf_metric m)
{
	if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND)
		x->unsupported |= 1u << m;
	return ok(x, r);
}

static void read_clocks_power(struct pass *x)
{
	const struct gf_nvml *nv = x->nv;
	unsigned u;
	if (ok(x, nv->nvmlDeviceGetClockInfo(x->d, NVML_CLOCK_SM, &u)))
		SET(x->s, GF_M_SM_CLOCK, u);
	if (ok(x, nv->nvmlDeviceGetClockInfo(x->d, NVML_CLOCK_MEM, &u)))
		SET(x->s, GF_M_MEM_CLOCK, u);
	if (ok(x, nv->nvmlDeviceGetTemperature(x->d, NVML_TEMPERATURE_GPU, &u)))
		SET(x->s, GF_M_GPU_TEMP, u);
	if (ok(x, nv->nvmlDeviceGetPowerUsage(x->d, &u)))
		SET(x->s, GF_M_POWER, u / 1000.0);
}

static void read_utilisation(struct pass *x)
{
	const struct gf_nvml *nv = x->nv;
	nvmlUtilization_t ut;
	unsigned u, period;
	if (ok(x, nv->nvmlDeviceGetUtilizationRates(x->d, &ut))) {
		SET(x->s, GF_M_GPU_UTIL, ut.gpu);
		SET(x->s, GF_M_MEM_COPY_UTIL, ut.memory);
	}
	if (ok(x, nv->nvmlDeviceGetEncoderUtilization(x->d, &u, &period)))
		SET(x->s, GF_M_ENC_UTIL, u);
	if (ok(x, nv->nvmlDeviceGetDecoderUtilization(x->d, &u, &period)))
		SET(x->s, GF_M_DEC_UTIL, u);
}

/* Framebuffer: memory_v2 (reserved apart), else v1 (used includes it). */
static void read_memory(struct pass *x)
{
	const struct gf_nvml *nv = x->nv;
	struct gf_sample *s = x->s;
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	nvmlMemory_t mem;
	if (ok(x, nv->nvmlDeviceGetMemoryInfo_v2(x->d, &m2))) {
		SET(s, GF_M_FB_FREE, (double)(m2.free >> 20));
		SET(s, GF_M_FB_USED, (double)(m2.used >> 20));
		SET(s, GF_M_FB_RESERVED, (double)(m2.reserved >> 20));
	} else if (ok(x, nv->nvmlDeviceGetMemoryInfo(x->d, &mem))) {
		SET(s, GF_M_FB_FREE, (double)(mem.free >> 20));
		SET(s, GF_M_FB_USED, (double)(mem.used >> 20));
	}
}

static void read_remapped_rows(struct pass *x)
{
	unsigned corr, unc, pend, fail;
	if (ok(x, x->nv->nvmlDeviceGetRemappedRows(x->d, &corr, &unc, &pend,
						   &fail))) {
		SET(x->s, GF_M_COR_REMAPPED, corr);
		SET(x->s, GF_M_UNC_REMAPPED, unc);
		SET(x->s, GF_M_REMAP_FAILURE, fail);
	}
	SET(x->s, GF_M_XID, x->g->last_xid);
}

/* NVLink data bytes since driver load, from field values 138/139. */
static void read_nvlink(struct pass *x)
{
	nvmlFieldValue_t fv[2] = {
		{ .fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX },
		{ .fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX },
	};
	if (x->nv->nvmlDeviceGetFieldValues(x->d, 2, fv) == NVML_SUCCESS &&
	    fv[0].nvmlReturn == NVML_SUCCESS &&
	    fv[1].nvmlReturn == NVML_SUCCESS) {
		x->s->nvlink_ok = true;
		x->s->nvlink_tx = field_value(&fv[0]) * 1024;
		x->s->nvlink_rx = field_value(&fv[1]) * 1024;
	}
}

static void read_gpm(struct pass *x)
{
	double gv[4];
	uint32_t valid =
		x->g->gpm ? gpm_read(x->nv, x->d, -1, &x->g->gpm_gpu, gv) : 0;
	for (int i = 0; i < 4; i++)
		if (valid >> i & 1)
			SET(x->s, gpm_metrics[i].m, gv[i]);
}

/* Compute processes, their owners and GPU instances; an owner is
 * looked up (in /proc/PID/cgroup) when its process first appears, then
 * kept.  Asked of the GPU's own handle, NVML's v2/v3 process info names
 * the GPU instance of each process on a MIG-mode GPU (0xFFFFFFFF when
 * the GPU is not in MIG mode): the id is kept only in MIG mode, and
 * read_mig's instances give its UUID (gf_collector_pods). */
static void read_processes(struct pass *x)
{
	struct gf_tgpu *g = x->g;
	unsigned np = 16;
	nvmlProcessInfo_t procs[16];
	nvmlReturn_t r =
		x->nv->nvmlDeviceGetComputeRunningProcesses(x->d, &np, procs);
	x->s->nproc = r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE
			      ? (int)np
			      : 0;
	int before = g->nprocs;
	unsigned old_pids[16];
	struct gf_owner old_owners[16];
	memcpy(old_pids, g->pids, sizeof(old_pids));
	memcpy(old_owners, g->owners, sizeof(old_owners));
	g->nprocs = r == NVML_SUCCESS ? (int)np : 0;
	for (int i = 0; i < g->nprocs; i++) {
		int k = 0;
		while (k < before && old_pids[k] != procs[i].pid)
			k++;
		g->pids[i] = procs[i].pid;
		g->proc_gi[i] =
			g->mig_on && procs[i].gpuInstanceId < GF_GI_ID_MAX
				? procs[i].gpuInstanceId
				: GF_GI_NONE;
		if (k < before)
			g->owners[i] = old_owners[k];
		else
			owner_of(x->proc_root, procs[i].pid, &g->owners[i]);
	}
}

/* The UUID of the device process i of g runs on. */
static const char *device_of(const struct gf_tgpu *g, int i)
{
	unsigned id = g->proc_gi[i];
	if (id < GF_GI_ID_MAX && (g->gi_seen >> id & 1) && g->gi_uuid[id][0])
		return g->gi_uuid[id];
	return g->uuid;
}

int gf_collector_pods(const struct gf_tgpu *g, struct gf_dev_pods *out, int max)
{
	int n = 0;
	for (int i = 0; i < g->nprocs; i++) {
		const char *uid = g->owners[i].pod_uid;
		if (!uid[0])
			continue;
		const char *dev = device_of(g, i);
		int d = 0;
		while (d < n && strcmp(out[d].uuid, dev))
			d++;
		if (d == n) {
			if (n == max)
				continue;
			memset(&out[n], 0, sizeof(out[n]));
			gf_note(out[n].uuid, sizeof(out[n].uuid), "%s", dev);
			n++;
		}
		struct gf_dev_pods *dp = &out[d];
		int k = 0;
		while (k < dp->npods && strcmp(dp->pods[k], uid))
			k++;
		if (k == dp->npods && dp->npods < 8)
			gf_note(dp->pods[dp->npods++], sizeof(dp->pods[0]),
				"%s", uid);
	}
	return n;
}

/* MIG instance k of the GPU into a new slot of the sample; its profile
 * is looked up once, when the instance appears (bit id of *seen). */
static void read_mig_instance(struct pass *x, unsigned k, uint32_t *seen)
{
	const struct gf_nvml *nv = x->nv;
	struct gf_tgpu *g = x->g;
	nvmlDevice_t mig;
	unsigned id;
	if (nv->nvmlDeviceGetMigDeviceHandleByIndex(x->d, k, &mig) !=
		    NVML_SUCCESS ||
	    nv->nvmlDeviceGetGpuInstanceId(mig, &id) != NVML_SUCCESS)
		return;
	struct gf_mig_sample *ms = &x->s->mig[x->s->nmig++];
	memset(ms, 0, sizeof(*ms));
	ms->gi_id = id;
	if (id < GF_GI_ID_MAX) {
		*seen |= 1u << id;
		/* new since the last sample: its GPM history dropped too */
		if (!(g->gi_seen >> id & 1)) {
			gi_profile(nv, g, id, g->gi_prof[id],
				   sizeof(g->gi_prof[id]));
			if (nv->nvmlDeviceGetUUID(mig, g->gi_uuid[id],
						  sizeof(g->gi_uuid[id])) !=
			    NVML_SUCCESS)
				g->gi_uuid[id][0] = '\0';
			g->gpm_gi[id].prev_ok = false;
		}
		gf_note(ms->profile, sizeof(ms->profile), "%s", g->gi_prof[id]);
	} else { /* beyond any driver's ids */
		gi_profile(nv, g, id, ms->profile, sizeof(ms->profile));
	}
	nvmlMemory_t mem;
	if (nv->nvmlDeviceGetMemoryInfo(mig, &mem) == NVML_SUCCESS) {
		ms->fb_used = (double)(mem.used >> 20);
		ms->fb_free = (double)(mem.free >> 20);
		ms->fb_ok = true;
	}
	if (g->gpm && id < GF_GI_ID_MAX)
		ms->gpm_valid =
			gpm_read(nv, x->d, (int)id, &g->gpm_gi[id], ms->gpm);
}

/* MIG instances (memory and GPM per GPU instance), when the GPU was in
 * MIG mode at the last look. */
static void read_mig(struct pass *x)
{
	unsigned max = 0;
	uint32_t seen = 0;
	if (x->g->mig_on &&
	    x->nv->nvmlDeviceGetMaxMigDeviceCount(x->d, &max) == NVML_SUCCESS)
		for (unsigned k = 0; k < max && x->s->nmig < GF_TEL_MAX_MIG;
		     k++)
			read_mig_instance(x, k, &seen);
	x->g->gi_seen = seen;
}

/* ---- slow counters ---- */

static void read_energy(struct pass *x)
{
	unsigned long long mj;
	if (slow_ok(x, x->nv->nvmlDeviceGetTotalEnergyConsumption(x->d, &mj),
		    GF_M_ENERGY))
		SET(x->s, GF_M_ENERGY, (double)mj);
}

/* NVML's KB/s over its own 20 ms window, as bytes/s. */
static void read_pcie(struct pass *x)
{
	unsigned kb;
	if (slow_ok(x,
		    x->nv->nvmlDeviceGetPcieThroughput(
			    x->d, NVML_PCIE_UTIL_TX_BYTES, &kb),
		    GF_M_PCIE_TX))
		SET(x->s, GF_M_PCIE_TX, kb * 1024.0);
	if (slow_ok(x,
		    x->nv->nvmlDeviceGetPcieThroughput(
			    x->d, NVML_PCIE_UTIL_RX_BYTES, &kb),
		    GF_M_PCIE_RX))
		SET(x->s, GF_M_PCIE_RX, kb * 1024.0);
}

static void read_replay(struct pass *x)
{
	unsigned u;
	if (slow_ok(x, x->nv->nvmlDeviceGetPcieReplayCounter(x->d, &u),
		    GF_M_PCIE_REPLAY))
		SET(x->s, GF_M_PCIE_REPLAY, u);
}

/* ECC totals: single-bit = corrected, double-bit = uncorrected. */
static void read_ecc(struct pass *x)
{
	for (unsigned t = 0; t < 4; t++) {
		unsigned long long n;
		enum gf_metric m = (enum gf_metric)(GF_M_ECC_SBE_VOL + t);
		if (slow_ok(x,
			    x->nv->nvmlDeviceGetTotalEccErrors(
				    x->d,
				    t & 1 ? NVML_MEMORY_ERROR_TYPE_UNCORRECTED
					  : NVML_MEMORY_ERROR_TYPE_CORRECTED,
				    t & 2 ? NVML_AGGREGATE_ECC
					  : NVML_VOLATILE_ECC,
				    &n),
			    m))
			SET(x->s, m, (double)n);
	}
}

/* Whether the GPU is in MIG mode; on a failure, as last read. */
static void read_mig_mode(struct pass *x)
{
	unsigned cur = 0, pending = 0;
	nvmlReturn_t r = x->nv->nvmlDeviceGetMigMode(x->d, &cur, &pending);
	if (r == NVML_SUCCESS)
		x->g->mig_on = cur == NVML_DEVICE_MIG_ENABLE;
	else if (r == NVML_ERROR_NOT_SUPPORTED ||
		 r == NVML_ERROR_FUNCTION_NOT_FOUND)
		x->g->mig_on = false;
}

static const struct {
	const char *name; /* in the debug log */
	int64_t period_ms;
	void (*read)(struct pass *x);
	uint32_t metrics; /* bit m: the metrics it gives */
} slow[GF_SLOW_COUNT] = {
	[GF_SLOW_ENERGY] = { "energy", 30000, read_energy, 1u << GF_M_ENERGY },
	[GF_SLOW_PCIE] = { "pcie", 10000, read_pcie,
			   1u << GF_M_PCIE_TX | 1u << GF_M_PCIE_RX },
	[GF_SLOW_REPLAY] = { "replays", 30000, read_replay,
			     1u << GF_M_PCIE_REPLAY },
	[GF_SLOW_ECC] = { "ecc", 30000, read_ecc, 0xfu << GF_M_ECC_SBE_VOL },
	[GF_SLOW_MIG_MODE] = { "mig-mode", 10000, read_mig_mode, 0 },
};

/*
 * Read the slow counters that are due.  GPU i of n first comes due again
 * i/n of a period later than the others, so that a node's GPUs do not
 * all pay for the same sample.  A counter due more than two periods
 * ahead means the wall clock went back: it is due now.
 */
static void read_slow(struct pass *x, const struct gf_collector *c, int i)
{
	struct gf_tgpu *g = x->g;
	for (int k = 0; k < GF_SLOW_COUNT; k++) {
		int64_t period = c->slow_period_ms[k],
			next = g->slow_next_ms[k];
		bool first = next == INT64_MIN;
		if (!first && x->now_ms < next &&
		    next - x->now_ms <= 2 * period)
			continue;
		slow[k].read(x);
		x->slow_read |= 1u << k;
		g->slow_next_ms[k] =
			x->now_ms + period +
			(first && c->n > 0 ? period * i / c->n : 0);
	}
}

/* Log what one GPU's sample read (debug). */
static void log_pass(const struct pass *x)
{
	int values = 0;
	for (int m = 0; m < GF_M_COUNT; m++)
		values += x->s->valid >> m & 1;
	char slows[64] = "";
	size_t len = 0;
	for (int k = 0; k < GF_SLOW_COUNT; k++)
		if (x->slow_read >> k & 1 && len < sizeof(slows))
			len += (size_t)snprintf(slows + len,
						sizeof(slows) - len, "%s%s",
						len ? "," : "", slow[k].name);
	gf_log(GF_LOG_DEBUG, "collect",
	       "GPU%u: %d metrics read; NVML calls: %d, %d failed; "
	       "MIG instances: %d; processes: %d; NVLink bytes: %s; slow "
	       "counters read: %s",
	       x->g->index, values, x->calls, x->fails, x->s->nmig, x->s->nproc,
	       x->s->nvlink_ok ? "yes" : "no", len ? slows : "none");
}

/* Sample GPU i into x->s; the number of NVML calls that failed, -1 when
 * every one did; x->lost when the GPU is. */
static int sample_gpu(const struct gf_collector *c, int i, struct pass *x)
{
	read_clocks_power(x);
	read_utilisation(x);
	read_memory(x);
	read_remapped_rows(x);
	read_slow(x, c, i);
	read_nvlink(x);
	read_gpm(x);
	read_processes(x);
	read_mig(x);
	if (gf_log_get_level() >= GF_LOG_DEBUG)
		log_pass(x);
	return x->calls > 0 && x->fails == x->calls ? -1 : x->fails;
}

/*
 * The GPU's latest values: sample s, and each slow counter's last value
 * where s did not read it (kept with its read time) unless NVML said it
 * no longer has it.
 */
static void keep_latest(struct gf_tgpu *g, const struct pass *x)
{
	uint32_t slow_metrics = 0;
	for (int k = 0; k < GF_SLOW_COUNT; k++)
		slow_metrics |= slow[k].metrics;
	uint32_t carry =
		g->last.valid & slow_metrics & ~x->s->valid & ~x->unsupported;
	struct gf_sample prev = g->last;
	g->last = *x->s;
	for (int m = 0; m < GF_M_COUNT; m++) {
		if (x->s->valid >> m & 1)
			g->read_ms[m] = x->now_ms;
		else if (carry >> m & 1)
			SET(&g->last, m, prev.v[m]);
	}
}
/* What a collector is before NVML: no GPU, the host name, the slow
 * counters' periods; the ring clamped. */
static int collector_base(struct gf_collector *c, int ring)
{
	memset(c, 0, sizeof(*c));
	if (ring <= 0)
		ring = GF_RING;
	if (ring > GF_RING_MAX)
		ring = GF_RING_MAX;
	for (int k = 0; k < GF_SLOW_COUNT; k++)
		c->slow_period_ms[k] = slow[k].period_ms;
	if (gethostname(c->hostname, sizeof(c->hostname)) != 0)
		gf_note(c->hostname, sizeof(c->hostname), "localhost");
	c->hostname[sizeof(c->hostname) - 1] = '\0';
	return ring;
}

void gf_collector_open_cpu(struct gf_collector *c)
{
	(void)collector_base(c, 0);
}

int gf_collector_open(struct gf_collector *c, int ring, struct gf_err *e)
{
	ring = collector_base(c, ring);
	int rc = gf_nvml_open(&c->nv, e);
	if (rc) {
		c->nv = NULL;
		return rc;
	}
	const struct gf_nvml *nv = c->nv;
	nv->nvmlSystemGetDriverVersion(c->driver, sizeof(c->driver));
	unsigned count = 0;
	nv->nvmlDeviceGetCount(&count);
	if (nv->nvmlEventSetCreate(&c->events) != NVML_SUCCESS)
		c->events = NULL;
	for (unsigned i = 0; i < count && c->n < GF_TEL_MAX_GPUS; i++) {
		struct gf_tgpu *g = &c->g[c->n];
		if (nv->nvmlDeviceGetHandleByIndex(i, &g->dev) != NVML_SUCCESS)
			continue;
		g->index = i;
		nv->nvmlDeviceGetUUID(g->dev, g->uuid, sizeof(g->uuid));
		nv->nvmlDeviceGetName(g->dev, g->name, sizeof(g->name));
		nvmlPciInfo_t pci;
		if (nv->nvmlDeviceGetPciInfo(g->dev, &pci) == NVML_SUCCESS) {
			gf_note(g->busid, sizeof(g->busid), "%s", pci.busId);
			g->devid = (uint16_t)(pci.pciDeviceId >> 16);
		}
		nvmlGpmSupport_t sup = { .version = NVML_GPM_SUPPORT_VERSION };
		g->gpm = nv->nvmlGpmQueryDeviceSupport(g->dev, &sup) ==
				 NVML_SUCCESS &&
			 sup.isSupportedDevice;
		if (c->events)
			nv->nvmlDeviceRegisterEvents(
				g->dev, NVML_EVENT_TYPE_XID_CRITICAL_ERROR,
				c->events);
		for (int k = 0; k < GF_SLOW_COUNT; k++)
			g->slow_next_ms[k] = INT64_MIN; /* due at once */
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
	if (c->events)
		c->nv->nvmlEventSetFree(c->events);
	if (c->nv) /* a CPU node's collector opened none */
		gf_nvml_close();
	c->nv = NULL;
	c->n = 0;
}

/* Feed the Xid events NVML queued since the last sample to the health
 * machine, at now_ms (NVML's events carry no time). */
static void drain_xid(struct gf_collector *c, int64_t now_ms)
{
	if (!c->events)
		return;
	nvmlEventData_t ev;
	for (int k = 0; k < 64; k++) {
		if (c->nv->nvmlEventSetWait(c->events, &ev, 0) != NVML_SUCCESS)
			break;
		unsigned code = ev.eventData > UINT_MAX
					? UINT_MAX
					: (unsigned)ev.eventData;
		for (int i = 0; i < c->n; i++) {
			if (c->g[i].dev != ev.device)
				continue;
			c->g[i].last_xid = (double)ev.eventData;
			gf_health_xid(&c->health, i, code, now_ms);
			enum gf_xid_class cls = gf_xid_class(code);
			gf_log(GF_LOG_INFO, "collect", "GPU%u: xid %u (%s): %s",
			       c->g[i].index, code, gf_xid_meaning(code),
			       cls == GF_XID_RESET ? "needs a GPU reset"
			       : cls == GF_XID_APP
				       ? "an application error, health unchanged"
				       : "unhealthy for the quiet period");
		}
	}
}

/* GPU i is lost (off the bus), or back: its flag, the health machine's
 * event, a log line. */
static void set_lost(struct gf_collector *c, int i, bool lost, int64_t now_ms)
{
	struct gf_tgpu *g = &c->g[i];
	g->lost = lost;
	if (lost)
		gf_health_lost(&c->health, i, now_ms);
	else
		gf_health_back(&c->health, i, now_ms);
	gf_log(GF_LOG_INFO, "collect", "GPU%u %s", g->index,
	       lost ? "fell off the bus (GPU_IS_LOST): its last values stay, "
		      "gpufleet_gpu_up 0"
		    : "answers again: sampled again, healthy after the quiet "
		      "period");
}

/* A GPU that was lost and answers again (its temperature): true. */
static bool answers_again(struct gf_collector *c, int i, int64_t now_ms)
{
	unsigned t;
	struct gf_tgpu *g = &c->g[i];
	if (c->nv->nvmlDeviceGetTemperature(g->dev, NVML_TEMPERATURE_GPU, &t) !=
	    NVML_SUCCESS)
		return false;
	set_lost(c, i, false, now_ms);
	return true;
}

/* Tick the health machine; log each GPU whose health changed. */
static void health_tick(struct gf_collector *c, const bool *was, int64_t now_ms)
{
	gf_health_tick(&c->health, now_ms);
	for (int i = 0; i < c->n; i++) {
		bool now = gf_health_is_healthy(&c->health, i);
		if (now == was[i])
			continue;
		char why[GF_HEALTH_REASON_MAX];
		gf_health_reason(&c->health, i, why, sizeof(why));
		gf_log(GF_LOG_INFO, "collect", "GPU%u %s%s%s", c->g[i].index,
		       now ? "healthy" : "unhealthy", *why ? ": " : "", why);
	}
#if GF_DEBUG
	char msg[256];
	if (gf_health_check(&c->health, msg, sizeof(msg)) != 0)
		gf_check_failed("GPU health", msg);
#endif
}

void gf_collector_sample(struct gf_collector *c, int64_t now_ms)
{
	double cpu0 = gf_clock_thread_cpu_ms();
	if (c->samples == 0 &&
	    gf_health_init(&c->health, c->n, c->xid_quiet_ms, now_ms))
		gf_log(GF_LOG_WARN, "collect",
		       "GPU health not tracked: %d GPUs or quiet period %lld ms "
		       "out of range",
		       c->n, (long long)c->xid_quiet_ms);
	bool was[GF_TEL_MAX_GPUS];
	for (int i = 0; i < c->n; i++)
		was[i] = gf_health_is_healthy(&c->health, i);
	drain_xid(c, now_ms);
	for (int i = 0; i < c->n; i++) {
		struct gf_tgpu *g = &c->g[i];
		if (g->lost && !answers_again(c, i, now_ms))
			continue;
		struct gf_sample s;
		memset(&s, 0, sizeof(s));
		s.t_ms = now_ms;
		struct pass x = { .nv = c->nv,
				  .g = g,
				  .d = g->dev,
				  .s = &s,
				  .now_ms = now_ms,
				  .proc_root = c->proc_root };
		int rc = sample_gpu(c, i, &x);
		if (x.lost) {
			set_lost(c, i, true, now_ms);
			continue;
		}
		if (rc != 0)
			g->errors++;
		if (rc < 0)
			continue; /* every call failed: keep the last good */
		keep_latest(g, &x);
		g->last_good_ms = now_ms;
		g->ring[g->head] = s;
		g->head = (g->head + 1) % g->cap;
		if (g->n < g->cap)
			g->n++;
	}
	health_tick(c, was, now_ms);
	c->samples++;
	c->cpu_ms_last = gf_clock_thread_cpu_ms() - cpu0;
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

double gf_collector_age_s(const struct gf_tgpu *g, enum gf_metric m,
			  int64_t now_ms)
{
	if (!g->last_good_ms || !(g->last.valid >> m & 1))
		return -1;
	return (double)(now_ms - g->read_ms[m]) / 1e3;
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
