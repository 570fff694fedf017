/*
 * fake_nvml.c - a stand-in libnvidia-ml.so.1 for tests, driven by a text
 * fixture (GPUFLEET_FAKE_NVML_FIXTURE).  It exports the same symbol names
 * the driver's library does, with the layouts of ../../src/topo/nvml_api.h,
 * so gpufleet's loader cannot tell the difference.
 *
 * Fixture format, one directive per line, '#' comments:
 *   init_error N            nvmlInit returns N
 *   driver VERSION
 *   gpu BUSID               starts a GPU ("00000000:18:00.0")
 *   name TEXT               product name (rest of line)
 *   uuid TEXT
 *   pci_device_id 0xDDDDVVVV
 *   memory_total_mib N
 *   mig CURRENT PENDING
 *   numa_node N
 *   minor N                 its /dev/nvidiaN (default: its index)
 *   cpu_affinity LIST       "0-7,16-23"
 *   nvlinks N               the GPU has N link slots (absent: NOT_SUPPORTED)
 *   nvlink L ACTIVE gpu|switch [BUSID]
 * MIG, as the driver behaves (reference/mig-and-metrics.md 1):
 *   profileset NAME         starts a GPU-instance profile table, then
 *   gi_profile ENUM ID MEM COMPUTE STARTS MAX   (STARTS "0,2,4")
 *   gi_profiles NAME        the GPU's profile table
 *   gi PROFILE_ID START [busy [PID]]  an instance there now (with a
 *                           compute instance; busy: a process runs on
 *                           it, PID or 4242)
 *   mig_reset_required 1    SetMigMode only sets the pending mode
 * A GPU instance with a compute instance is a MIG device, as on the
 * driver: nvmlDeviceGetMigDeviceHandleByIndex lists them in slot order
 * (an instance without one is not listed), nvmlDeviceGetGpuInstanceId
 * gives its GPU instance's id (ids count up from 1 per GPU and are not
 * reused until the fixture is reloaded), nvmlDeviceGetUUID its UUID,
 * MIG-fa4e0000-GGGG-4000-8000-IIIIIIIIIIII (hex: GPU index, GPU instance
 * id), the same for as long as the instance lives, and a busy instance's
 * MIG device runs one compute process.  Processes, as the driver's v3
 * call gives them: on a MIG device handle, its process; on a GPU's
 * handle, its `proc` processes (gpuInstanceId and computeInstanceId
 * 0xFFFFFFFF: on no instance) and, in MIG mode, each busy instance's
 * process, with its GPU instance id and compute instance 0.
 * Telemetry, replayed per GPU (a "tick" is a call of GetClockInfo(SM),
 * the first call of each of gpufleet's samples):
 *   series NAME V1,V2,...   util memutil power_mw temp sm_clock mem_clock
 *                           fb_used_mib pcie_tx_kbps pcie_rx_kbps enc dec;
 *                           value i at tick i, the last one repeated
 *   fail_every K            every K-th tick, every call fails (Unknown)
 *   lost_after N            from tick N on, every call: GPU is lost
 *   xid_at TICK CODE        an XID event at that tick
 *   proc PID                a compute process on the GPU
 *   series nvlink_tx_kib / nvlink_rx_kib   NVLink data KiB since load
 *                           (field values 138/139; without: not supported)
 *   ecc SV DV SA DA         ECC totals: single/double-bit, volatile and
 *                           aggregate (without it: not supported)
 *   gpm 1                   GPM supported (Hopper and newer); its metrics
 *                           come from the series gr_active sm_active
 *                           tensor_active dram_active (percent), the
 *                           value at the later sample's tick; a GPU
 *                           instance's GPM samples give its GPU's values
 * A fixture path ending in .json is instead a recorded NVML dump, as
 * ../shared/fixtures/h200/nvml-dump.json (json_fixture.c says what is read
 * from it); read where it lies, never copied.
 * Test hooks (environment, read at nvmlInit):
 *   GPUFLEET_FAKE_NVML_LOG=FILE   append one line per call that changes
 *                           MIG state, with its arguments and result
 *                           ("nvmlDeviceSetMigMode gpu=0 mode=1 = 0"), so a
 *                           test can check the calls gpufleet made
 *   GPUFLEET_FAKE_NVML_GEN=N  reload the fixture (fresh state) when N
 *                           differs from the last load's
 *   GPUFLEET_FAKE_NVML_COSTS=h200  each call costs the CPU (and blocked
 *                           time) it cost on our H200 host (costs.c)
 * Faults while a process runs (telemetry.c):
 *   GPUFLEET_FAKE_NVML_EVENTS=FILE  the lines appended to FILE since the
 *                           last read are read at each nvmlEventSetWait
 *                           and each tick, whole lines only, '#'
 *                           comments; GPU is the NVML index:
 *       xid GPU CODE        an XID event on the GPU (delivered after the
 *                           fixture's xid_at events, in file order)
 *       lost GPU            from then on every call for the GPU answers
 *                           GPU_IS_LOST, and an XID 79 event is raised
 *       back GPU            the GPU answers again
 *                           A bad line is reported on stderr and skipped;
 *                           a file shorter than what was read is read
 *                           again from its start.  Append with >>.
 * The fake refuses what the driver refuses: placements outside the
 * allowed starts, overlaps and counts past the maximum (Insufficient
 * Resources), destroying a GPU instance that still has compute instances
 * or a compute instance in use (In Use).  Without an explicit placement it
 * picks the highest free allowed start, so a creation order of small
 * instances before a 3g fails as it does on real A100s.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

static const char *const series_names[S_N] = {
	"util",		 "memutil",	  "power_mw",	 "temp",
	"sm_clock",	 "mem_clock",	  "fb_used_mib", "pcie_tx_kbps",
	"pcie_rx_kbps",	 "enc",		  "dec",	 "gr_active",
	"sm_active",	 "tensor_active", "dram_active", "nvlink_tx_kib",
	"nvlink_rx_kib",
};

static struct pset sets[MAX_SETS];
static int nsets;

struct nvmlDevice_st gpus[MAX_GPUS];
int ngpus;
static int loaded;
static int init_error;
int inited;
static char driver[80] = "000.00";

static void parse_cpus(struct nvmlDevice_st *g, const char *s)
{
	while (*s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long i = lo; i <= hi && i < 1024; i++)
			g->cpus[i / 64] |= 1UL << (i % 64);
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s != '\0' && *s != ',')
			break;
	}
	g->has_cpus = 1;
}

static char loaded_path[512];
static char loaded_gen[32];

/* One line to GPUFLEET_FAKE_NVML_LOG, when set. */
void call_log(const char *fmt, ...)
{
	const char *path = getenv("GPUFLEET_FAKE_NVML_LOG");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

int gpu_index(const struct nvmlDevice_st *d)
{
	return (int)(d - gpus);
}

/* A series "V1,V2,..." into series k of g. */
static void set_series(struct nvmlDevice_st *g, int k, const char *q)
{
	g->nseries[k] = 0;
	while (*q && g->nseries[k] < MAX_SERIES) {
		char *end;
		g->series[k][g->nseries[k]++] = strtod(q, &end);
		if (*end != ',')
			break;
		q = end + 1;
	}
}

static void series_line(struct nvmlDevice_st *g, const char *val)
{
	char nm[32];
	int off = 0;
	if (sscanf(val, "%31s %n", nm, &off) != 1)
		return;
	for (int k = 0; k < S_N; k++)
		if (strcmp(nm, series_names[k]) == 0)
			set_series(g, k, val + off);
}

static void nvlink_line(struct nvmlDevice_st *g, const char *val)
{
	int l, act;
	char ty[16], remote[32] = "";
	if (sscanf(val, "%d %d %15s %31s", &l, &act, ty, remote) < 3 || l < 0 ||
	    l >= MAX_LINKS)
		return;
	g->links[l].active = act;
	g->links[l].type = strcmp(ty, "switch") == 0
				   ? NVML_NVLINK_DEVICE_TYPE_SWITCH
				   : NVML_NVLINK_DEVICE_TYPE_GPU;
	snprintf(g->links[l].remote, sizeof(g->links[l].remote), "%s", remote);
}

static void gi_profile_line(struct pset *ps, const char *val)
{
	struct gip *x = &ps->p[ps->n];
	char st[64];
	if (sscanf(val, "%u %u %u %u %63s %u", &x->enumv, &x->id, &x->mem,
		   &x->compute, st, &x->max) != 6)
		return;
	x->starts = 0;
	for (char *t = strtok(st, ","); t; t = strtok(NULL, ","))
		x->starts |= 1u << atoi(t);
	ps->n++;
}

/* A directive of the GPU being read (format at the top); false when key
 * is none of them. */
static bool gpu_line(struct nvmlDevice_st *g, const char *key, char *val)
{
	if (strcmp(key, "name") == 0) {
		snprintf(g->name, sizeof(g->name), "%s", val);
	} else if (strcmp(key, "uuid") == 0) {
		snprintf(g->uuid, sizeof(g->uuid), "%s", val);
	} else if (strcmp(key, "pci_device_id") == 0) {
		g->pci_device_id = (unsigned)strtoul(val, NULL, 0);
	} else if (strcmp(key, "memory_total_mib") == 0) {
		g->mem_total = strtoull(val, NULL, 10) << 20;
	} else if (strcmp(key, "mig") == 0) {
		g->has_mig =
			sscanf(val, "%d %d", &g->mig_cur, &g->mig_pend) == 2;
	} else if (strcmp(key, "numa_node") == 0) {
		g->numa = atoi(val);
	} else if (strcmp(key, "minor") == 0) {
		g->minor = atoi(val);
	} else if (strcmp(key, "cpu_affinity") == 0) {
		parse_cpus(g, val);
	} else if (strcmp(key, "series") == 0) {
		series_line(g, val);
	} else if (strcmp(key, "proc") == 0) {
		if (g->nprocs < 8)
			g->procs[g->nprocs++] = (unsigned)atoi(val);
	} else if (strcmp(key, "fail_every") == 0) {
		g->fail_every = atoi(val);
	} else if (strcmp(key, "ecc") == 0) {
		g->has_ecc = sscanf(val, "%llu %llu %llu %llu", &g->ecc[0],
				    &g->ecc[1], &g->ecc[2], &g->ecc[3]) == 4;
	} else if (strcmp(key, "gpm") == 0) {
		g->gpm = atoi(val);
	} else if (strcmp(key, "lost_after") == 0) {
		g->lost_after = atoi(val);
	} else if (strcmp(key, "xid_at") == 0) {
		sscanf(val, "%d %d", &g->xid_tick, &g->xid_code);
	} else {
		return false;
	}
	return true;
}

/* The GPU's MIG and NVLink directives; false when key is none of them. */
static bool gpu_mig_line(struct nvmlDevice_st *g, const char *key,
			 const char *val)
{
	if (strcmp(key, "gi_profiles") == 0) {
		for (int i = 0; i < nsets; i++)
			if (strcmp(sets[i].name, val) == 0)
				g->set = &sets[i];
	} else if (strcmp(key, "mig_reset_required") == 0) {
		g->reset_required = atoi(val);
	} else if (strcmp(key, "gi") == 0) {
		unsigned id, start, pid = 0;
		char busy[16] = "";
		if (sscanf(val, "%u %u %15s %u", &id, &start, busy, &pid) >= 2)
			fake_add_gi(g, id, start, strcmp(busy, "busy") == 0,
				    pid);
	} else if (strcmp(key, "nvlinks") == 0) {
		g->nlinks = atoi(val);
		if (g->nlinks > MAX_LINKS)
			g->nlinks = MAX_LINKS;
	} else if (strcmp(key, "nvlink") == 0) {
		nvlink_line(g, val);
	} else {
		return false;
	}
	return true;
}

void gpu_init(struct nvmlDevice_st *g, const char *busid)
{
	memset(g, 0, sizeof(*g));
	g->numa = -1;
	g->minor = -1;
	g->nlinks = -1;
	g->energy0 = 1000000;
	snprintf(g->busid, sizeof(g->busid), "%s", busid);
}

/* The text fixture (format at the top of this file). */
static void load_text(FILE *f)
{
	char line[512];
	struct nvmlDevice_st *g = NULL;
	struct pset *ps = NULL;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\0')
			continue;
		char key[32];
		int off = 0;
		if (sscanf(p, "%31s %n", key, &off) != 1)
			continue;
		char *val = p + off;
		if (strcmp(key, "init_error") == 0) {
			init_error = atoi(val);
		} else if (strcmp(key, "driver") == 0) {
			snprintf(driver, sizeof(driver), "%s", val);
		} else if (strcmp(key, "profileset") == 0 && nsets < MAX_SETS) {
			ps = &sets[nsets++];
			memset(ps, 0, sizeof(*ps));
			snprintf(ps->name, sizeof(ps->name), "%s", val);
		} else if (strcmp(key, "gi_profile") == 0 && ps &&
			   ps->n < MAX_GIP) {
			gi_profile_line(ps, val);
		} else if (strcmp(key, "gpu") == 0 && ngpus < MAX_GPUS) {
			ps = NULL;
			g = &gpus[ngpus++];
			gpu_init(g, val);
		} else if (g && !gpu_line(g, key, val)) {
			gpu_mig_line(g, key, val);
		}
	}
}

/* Forget the last fixture: every GPU, profile set and instance.  The
 * arrays are zero before the first load; clearing them then would only
 * make the fake's pages resident in the process that loads it. */
static void reset(void)
{
	static bool dirty;
	if (dirty) {
		memset(gpus, 0, sizeof(gpus));
		mig_reset();
		memset(sets, 0, sizeof(sets));
	}
	dirty = true;
	ngpus = 0;
	nsets = 0;
	init_error = 0;
	snprintf(driver, sizeof(driver), "000.00");
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* (Re)read the fixture when the variable names another file, or the
 * generation variable changed.  A path ending in .json is a recorded NVML
 * dump (json_fixture.c); anything else the text format. */
static int load(void)
{
	const char *path = getenv("GPUFLEET_FAKE_NVML_FIXTURE");
	const char *gen = getenv("GPUFLEET_FAKE_NVML_GEN");
	if (path == NULL)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (gen == NULL)
		gen = "";
	if (loaded && strcmp(path, loaded_path) == 0 &&
	    strcmp(gen, loaded_gen) == 0)
		return 0;
	snprintf(loaded_gen, sizeof(loaded_gen), "%s", gen);
	loaded = 0;
	reset();
	snprintf(loaded_path, sizeof(loaded_path), "%s", path);
	if (ends_with(path, ".json")) {
		if (load_json(path, driver, sizeof(driver)) != 0)
			return NVML_ERROR_DRIVER_NOT_LOADED;
	} else {
		FILE *f = fopen(path, "r");
		if (f == NULL)
			return NVML_ERROR_DRIVER_NOT_LOADED;
		load_text(f);
		fclose(f);
	}
	loaded = 1;
	return 0;
}

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit_v2(void)
{
	if (costs_init() != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	int rc = load();
	if (rc)
		return rc;
	if (init_error)
		return init_error;
	inited++;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlShutdown(void)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	inited--;
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r);
const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	default:
		return "Unknown Error";
	}
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned len);
nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned len)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (len < strlen(driver) + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(v, len, "%s", driver);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*count = (unsigned)ngpus;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (i >= (unsigned)ngpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &gpus[i];
	return NVML_SUCCESS;
}

static void fill_pci(const char *busid, unsigned devid, unsigned subsys,
		     nvmlPciInfo_t *p)
{
	memset(p, 0, sizeof(*p));
	unsigned dom = 0, bus = 0, dev = 0, fn = 0;
	sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	p->pciDeviceId = devid;
	p->pciSubSystemId = subsys;
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X", dom, bus, dev,
		 fn);
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X",
		 dom & 0xffff, bus, dev, fn);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	CHECK_DEV(d);
	fill_pci(d->busid, d->pci_device_id, d->pci_subsys, p);
	return NVML_SUCCESS;
}

static nvmlReturn_t copy_str(const char *s, char *out, unsigned len)
{
	if (s[0] == '\0')
		return NVML_ERROR_NOT_SUPPORTED;
	if (len < strlen(s) + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(out, len, "%s", s);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *n, unsigned len);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *n, unsigned len)
{
	CHECK_DEV(d);
	return copy_str(d->name, n, len);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *u, unsigned len);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *u, unsigned len)
{
	CHECK_DEV(d);
	return copy_str(d->uuid, u, len);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	CHECK_DEV(d);
	if (d->is_mig) { /* a MIG device: its share of the parent's memory */
		struct fake_gi *gi = d->mig_gi;
		m->total = gi->gpu->mem_total / 8 * gi->prof->mem;
		m->used = gi->busy ? (1024ULL << 20) : 0;
		m->free = m->total - m->used;
		return NVML_SUCCESS;
	}
	nvmlReturn_t fr = fault(d);
	if (fr != NVML_SUCCESS)
		return fr;
	if (d->mem_total == 0)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	/* as the driver: v1's used includes what it reserves */
	m->used = ((unsigned long long)series_at(d, S_FBUSED, 0) << 20) +
		  d->mem_reserved;
	if (m->used > m->total)
		m->used = m->total;
	m->free = m->total - m->used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *c, unsigned *p);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *c, unsigned *p)
{
	COST(C_MIG_MODE);
	CHECK_DEV(d);
	if (!d->has_mig)
		return NVML_ERROR_NOT_SUPPORTED;
	*c = (unsigned)d->mig_cur;
	*p = (unsigned)d->mig_pend;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned *node);
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned *node)
{
	CHECK_DEV(d);
	if (d->numa < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*node = (unsigned)d->numa;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned *minor);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned *minor)
{
	CHECK_DEV(d);
	if (d->is_mig)
		return NVML_ERROR_NOT_SUPPORTED;
	*minor = (unsigned)(d->minor >= 0 ? d->minor : (int)(d - gpus));
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned n,
				      unsigned long *set);
nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned n,
				      unsigned long *set)
{
	CHECK_DEV(d);
	if (!d->has_cpus)
		return NVML_ERROR_NOT_SUPPORTED;
	for (unsigned i = 0; i < n && i < 16; i++)
		set[i] = d->cpus[i];
	return NVML_SUCCESS;
}

/* What the driver answers for link l: not supported without NVLink,
 * invalid past the GPU's links (or, when `active`, on an inactive one). */
static nvmlReturn_t link_ok(nvmlDevice_t d, unsigned l, bool active)
{
	if (d->nlinks < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (l >= (unsigned)d->nlinks || (active && !d->links[l].active))
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned l,
				      nvmlEnableState_t *on);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned l,
				      nvmlEnableState_t *on)
{
	CHECK_DEV(d);
	nvmlReturn_t r = link_ok(d, l, false);
	if (r == NVML_SUCCESS)
		*on = d->links[l].active ? NVML_FEATURE_ENABLED
					 : NVML_FEATURE_DISABLED;
	return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned l,
						 nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned l,
						 nvmlPciInfo_t *p)
{
	CHECK_DEV(d);
	nvmlReturn_t r = link_ok(d, l, true);
	if (r == NVML_SUCCESS)
		fill_pci(d->links[l].remote, 0, 0, p);
	return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned l,
						 nvmlIntNvLinkDeviceType_t *t);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned l,
						 nvmlIntNvLinkDeviceType_t *t)
{
	CHECK_DEV(d);
	nvmlReturn_t r = link_ok(d, l, false);
	if (r == NVML_SUCCESS)
		*t = (nvmlIntNvLinkDeviceType_t)d->links[l].type;
	return r;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
						     unsigned *count,
						     nvmlProcessInfo_t *p);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
						     unsigned *count,
						     nvmlProcessInfo_t *p)
{
	COST(C_PROCS);
	CHECK_DEV(d);
	if (!d->is_mig) { /* the whole GPU: the fixture's processes, and in
			     MIG mode its busy instances' */
		nvmlProcessInfo_t all[8 + MAX_GI];
		unsigned n = 0;
		for (int i = 0; i < d->nprocs; i++) {
			memset(&all[n], 0, sizeof(all[n]));
			all[n].pid = d->procs[i];
			all[n].usedGpuMemory = 1ULL << 30;
			all[n].gpuInstanceId = 0xFFFFFFFFu;
			all[n++].computeInstanceId = 0xFFFFFFFFu;
		}
		for (int s = 0; d->mig_cur && s < MAX_GI; s++) {
			const struct fake_gi *gi = d->gis[s];
			if (!gi || !gi->has_ci || !gi->busy)
				continue;
			memset(&all[n], 0, sizeof(all[n]));
			all[n].pid = gi->pid;
			all[n].usedGpuMemory = 1024ULL << 20;
			all[n++].gpuInstanceId = gi->id;
		}
		if (*count < n) {
			*count = n;
			return NVML_ERROR_INSUFFICIENT_SIZE;
		}
		memcpy(p, all, n * sizeof(all[0]));
		*count = n;
		return NVML_SUCCESS;
	}
	unsigned n = d->mig_gi->busy ? 1 : 0;
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n) {
		memset(p, 0, sizeof(*p));
		p->pid = d->mig_gi->pid;
		p->usedGpuMemory = 1024ULL << 20;
		p->gpuInstanceId = d->mig_gi->id;
	}
	*count = n;
	return NVML_SUCCESS;
}
