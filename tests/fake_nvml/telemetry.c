/*
 * telemetry.c - the fake NVML's telemetry: clocks, utilisation, power,
 * energy, temperature, PCIe, remapped rows, XID events, ECC, field values
 * and GPM, replayed from the fixture's series (format in fake_nvml.c);
 * and faults injected into a running process through the events file
 * (GPUFLEET_FAKE_NVML_EVENTS), read at each event wait and each tick.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

double series_at(nvmlDevice_t d, int k, double dflt)
{
	if (d->nseries[k] == 0)
		return dflt;
	int i = d->tick - 1;
	if (i < 0)
		i = 0;
	if (i >= d->nseries[k])
		i = d->nseries[k] - 1;
	return d->series[k][i];
}

/* Fault injection for the sample at the current tick. */
nvmlReturn_t fault(nvmlDevice_t d)
{
	if (d->gone)
		return NVML_ERROR_GPU_IS_LOST;
	if (d->lost_after && d->tick >= d->lost_after)
		return NVML_ERROR_GPU_IS_LOST;
	if (d->fail_every && d->tick > 0 && d->tick % d->fail_every == 0)
		return NVML_ERROR_UNKNOWN;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t,
				    unsigned *mhz);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t,
				    unsigned *mhz)
{
	COST(C_CLOCK);
	if (t == NVML_CLOCK_SM)
		events_poll();
	CHECK_DEV(d);
	if (t == NVML_CLOCK_SM)
		d->tick++;
	TEL(d);
	*mhz = (unsigned)(t == NVML_CLOCK_SM ? series_at(d, S_SMCLK, 1980)
					     : series_at(d, S_MEMCLK, 2619));
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d,
					   nvmlUtilization_t *u);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	COST(C_UTIL);
	TEL(d);
	if (d->has_mig && d->mig_cur == 1)
		return NVML_ERROR_NOT_SUPPORTED; /* as on MIG-enabled GPUs */
	u->gpu = (unsigned)series_at(d, S_UTIL, 0);
	u->memory = (unsigned)series_at(d, S_MEMUTIL, 0);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned *u,
					     unsigned *p);
nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned *u,
					     unsigned *p)
{
	COST(C_ENC);
	TEL(d);
	*u = (unsigned)series_at(d, S_ENC, 0);
	*p = 167000;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned *u,
					     unsigned *p);
nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned *u,
					     unsigned *p)
{
	COST(C_DEC);
	TEL(d);
	*u = (unsigned)series_at(d, S_DEC, 0);
	*p = 167000;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw)
{
	COST(C_POWER);
	TEL(d);
	*mw = (unsigned)series_at(d, S_POWER, 70000);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
						 unsigned long long *mj);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
						 unsigned long long *mj)
{
	COST(C_ENERGY);
	TEL(d);
	/* one second of the current power per tick */
	*mj = d->energy0 +
	      (unsigned long long)d->tick *
		      (unsigned long long)series_at(d, S_POWER, 70000);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, unsigned s, unsigned *c);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, unsigned s, unsigned *c)
{
	COST(C_TEMP);
	TEL(d);
	if (s != 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*c = (unsigned)series_at(d, S_TEMP, 40);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, unsigned c,
					 unsigned *kb);
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, unsigned c,
					 unsigned *kb)
{
	COST(C_PCIE_TPUT);
	TEL(d);
	*kb = (unsigned)series_at(d, c == 0 ? S_PCIETX : S_PCIERX, 0);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned *v);
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned *v)
{
	COST(C_REPLAY);
	TEL(d);
	*v = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *c, unsigned *u,
				       unsigned *p, unsigned *f);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *c, unsigned *u,
				       unsigned *p, unsigned *f)
{
	COST(C_REMAP);
	TEL(d);
	*c = *u = *p = *f = 0;
	return NVML_SUCCESS;
}

struct nvmlEventSet_st {
	int created;
	int delivered[MAX_GPUS];
};
static struct nvmlEventSet_st the_set;

/* --- GPUFLEET_FAKE_NVML_EVENTS -------------------------------------- */

#define EVQ_MAX 256 /* Xids waiting to be delivered; more are dropped */

static struct {
	int gpu;
	unsigned code;
} evq[EVQ_MAX];
static int evq_head, evq_n;
static char ev_path[512]; /* the file read, and how far */
static long ev_off;
static int ev_line_no;

static void ev_push(int gpu, unsigned code)
{
	if (evq_n == EVQ_MAX) {
		fprintf(stderr,
			"fake nvml: %s: more than %d Xids waiting; xid %u of "
			"GPU %d dropped\n",
			ev_path, EVQ_MAX, code, gpu);
		return;
	}
	evq[(evq_head + evq_n) % EVQ_MAX].gpu = gpu;
	evq[(evq_head + evq_n) % EVQ_MAX].code = code;
	evq_n++;
}

/* One line of the events file: "xid GPU CODE", "lost GPU", "back GPU". */
static void ev_line(char *line)
{
	char verb[16];
	int gpu = -1, k = 0;
	unsigned code = 0;
	ev_line_no++;
	line[strcspn(line, "\r\n")] = '\0';
	char *p = line + strspn(line, " \t");
	if (*p == '#' || *p == '\0')
		return;
	k = sscanf(p, "%15s %d %u", verb, &gpu, &code);
	bool ok = k >= 2 && gpu >= 0 && gpu < ngpus;
	if (ok && strcmp(verb, "xid") == 0 && k == 3) {
		ev_push(gpu, code);
	} else if (ok && strcmp(verb, "lost") == 0 && k == 2) {
		gpus[gpu].gone = 1; /* as the driver: Xid 79 with it */
		ev_push(gpu, 79);
	} else if (ok && strcmp(verb, "back") == 0 && k == 2) {
		gpus[gpu].gone = 0;
	} else {
		fprintf(stderr,
			"fake nvml: %s:%d: cannot parse '%s': expected 'xid "
			"GPU CODE', 'lost GPU' or 'back GPU' (GPU below %d)\n",
			ev_path, ev_line_no, p, ngpus);
	}
}

/* After a line that filled the buffer: skip to its end, say so; false
 * when it has no end yet. */
static bool too_long(FILE *f)
{
	if (feof(f))
		return false;
	int ch;
	while ((ch = fgetc(f)) != EOF && ch != '\n')
		;
	if (ch == EOF)
		return false;
	fprintf(stderr, "fake nvml: %s:%d: line too long; skipped\n", ev_path,
		++ev_line_no);
	return true;
}

void events_poll(void)
{
	const char *path = getenv("GPUFLEET_FAKE_NVML_EVENTS");
	if (path == NULL || *path == '\0')
		return;
	if (strcmp(path, ev_path) != 0) {
		snprintf(ev_path, sizeof(ev_path), "%s", path);
		ev_off = 0;
		ev_line_no = 0;
	}
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return;
	/* a file shorter than what was read was replaced: from its start */
	if (fseek(f, 0, SEEK_END) == 0 && ftell(f) < ev_off) {
		ev_off = 0;
		ev_line_no = 0;
	}
	if (fseek(f, ev_off, SEEK_SET) == 0) {
		char line[256];
		/* whole lines only: one being written is read next time */
		while (fgets(line, sizeof(line), f)) {
			if (strchr(line, '\n') == NULL && !too_long(f))
				break;
			ev_off = ftell(f);
			if (strchr(line, '\n') != NULL)
				ev_line(line);
		}
	}
	fclose(f);
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	memset(&the_set, 0, sizeof(the_set));
	the_set.created = 1;
	*set = &the_set;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long t,
				      nvmlEventSet_t set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long t,
				      nvmlEventSet_t set)
{
	CHECK_DEV(d);
	(void)t;
	(void)set;
	return NVML_SUCCESS;
}

/* The fixture's xid_at events as their ticks come, then the events
 * file's, in the order they were appended. */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *e,
				 unsigned ms);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *e,
				 unsigned ms)
{
	(void)ms;
	events_poll();
	for (int i = 0; i < ngpus; i++) {
		struct nvmlDevice_st *d = &gpus[i];
		if (d->xid_tick && d->tick >= d->xid_tick &&
		    !set->delivered[i]) {
			set->delivered[i] = 1;
			memset(e, 0, sizeof(*e));
			e->device = d;
			e->eventType = NVML_EVENT_TYPE_XID_CRITICAL_ERROR;
			e->eventData = (unsigned long long)d->xid_code;
			return NVML_SUCCESS;
		}
	}
	if (evq_n > 0) {
		memset(e, 0, sizeof(*e));
		e->device = &gpus[evq[evq_head].gpu];
		e->eventType = NVML_EVENT_TYPE_XID_CRITICAL_ERROR;
		e->eventData = evq[evq_head].code;
		evq_head = (evq_head + 1) % EVQ_MAX;
		evq_n--;
		return NVML_SUCCESS;
	}
	return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	set->created = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	COST(C_MEM_V2);
	CHECK_DEV(d);
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_INVALID_ARGUMENT; /* as the driver checks */
	nvmlMemory_t v1;
	nvmlReturn_t r = nvmlDeviceGetMemoryInfo(d, &v1);
	if (r != NVML_SUCCESS)
		return r;
	/* the driver keeps some for itself: as recorded, else about 0.6 % */
	m->total = v1.total;
	m->reserved = d->mem_reserved ? d->mem_reserved : v1.total / 160;
	m->used = v1.used - d->mem_reserved;
	m->free = v1.total - m->reserved - m->used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, unsigned type,
					 unsigned counter,
					 unsigned long long *n);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, unsigned type,
					 unsigned counter,
					 unsigned long long *n)
{
	COST(C_ECC);
	TEL(d);
	if (type > 1 || counter > 1 || n == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->has_ecc)
		return NVML_ERROR_NOT_SUPPORTED;
	*n = d->ecc[counter * 2 + type];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n,
				      nvmlFieldValue_t *v);
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n,
				      nvmlFieldValue_t *v)
{
	COST(C_FIELDS);
	TEL(d);
	if (n < 0 || (n > 0 && v == NULL))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < n; i++) {
		int k = v[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
				? S_NVL_TX
			: v[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
				? S_NVL_RX
				: -1;
		if (k < 0 || d->nseries[k] == 0) {
			v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
			continue;
		}
		v[i].nvmlReturn = NVML_SUCCESS;
		v[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
		v[i].value.ullVal = (unsigned long long)series_at(d, k, 0);
	}
	return NVML_SUCCESS;
}

/* ---- GPM ---- */

struct nvmlGpmSample_st {
	nvmlDevice_t d;
	int gi; /* -1: the whole GPU */
	int tick, taken;
	double v[4]; /* gr, sm, tensor, dram at that tick */
};

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *s);
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *s)
{
	CHECK_DEV(d);
	if (s == NULL || s->version != NVML_GPM_SUPPORT_VERSION)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->isSupportedDevice = (unsigned)d->gpm;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s);
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	s->handle = calloc(1, sizeof(*s->handle));
	return s->handle ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s);
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s)
{
	free(s.handle);
	return NVML_SUCCESS;
}

static nvmlReturn_t gpm_take(nvmlDevice_t d, int gi, nvmlGpmSample_t s)
{
	TEL(d);
	if (!d->gpm)
		return NVML_ERROR_NOT_SUPPORTED;
	if (s.handle == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	s.handle->d = d;
	s.handle->gi = gi;
	s.handle->tick = d->tick;
	s.handle->taken = 1;
	s.handle->v[0] = series_at(d, S_GR, 0);
	s.handle->v[1] = series_at(d, S_SM, 0);
	s.handle->v[2] = series_at(d, S_TENSOR, 0);
	s.handle->v[3] = series_at(d, S_DRAM, 0);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s);
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s)
{
	COST(C_GPM_SAMPLE);
	return gpm_take(d, -1, s);
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned gi,
				 nvmlGpmSample_t s);
nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned gi, nvmlGpmSample_t s)
{
	COST(C_GPM_SAMPLE);
	CHECK_DEV(d);
	for (int i = 0; i < MAX_GI; i++)
		if (d->gis[i] && d->gis[i]->used && d->gis[i]->id == gi)
			return gpm_take(d, (int)gi, s);
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m);
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (m == NULL || m->version != NVML_GPM_METRICS_GET_VERSION ||
	    m->numMetrics > NVML_GPM_METRIC_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	const struct nvmlGpmSample_st *a = m->sample1.handle,
				      *b = m->sample2.handle;
	/* two samples of the same thing, the second later (as the driver) */
	if (!a || !b || !a->taken || !b->taken || a->d != b->d ||
	    a->gi != b->gi || b->tick <= a->tick)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < m->numMetrics; i++) {
		nvmlGpmMetric_t *x = &m->metrics[i];
		int k = x->metricId == NVML_GPM_METRIC_GRAPHICS_UTIL	 ? 0
			: x->metricId == NVML_GPM_METRIC_SM_UTIL	 ? 1
			: x->metricId == NVML_GPM_METRIC_ANY_TENSOR_UTIL ? 2
			: x->metricId == NVML_GPM_METRIC_DRAM_BW_UTIL	 ? 3
									 : -1;
		x->nvmlReturn = k < 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
		x->value = k < 0 ? 0 : b->v[k];
	}
	return NVML_SUCCESS;
}
