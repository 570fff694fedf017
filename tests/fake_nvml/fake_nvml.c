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
 *   cpu_affinity LIST       "0-7,16-23"
 *   nvlinks N               the GPU has N link slots (absent: NOT_SUPPORTED)
 *   nvlink L ACTIVE gpu|switch [BUSID]
 * Later issues extend it (telemetry series, MIG state).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/nvml_api.h"

#define MAX_GPUS  64
#define MAX_LINKS GF_NVML_NVLINK_MAX_LINKS

struct fake_link {
	int active;
	int type;
	char remote[32];
};

struct nvmlDevice_st {
	char busid[32];
	char name[96];
	char uuid[96];
	unsigned pci_device_id;
	unsigned long long mem_total;
	int mig_cur, mig_pend, has_mig;
	int numa;
	unsigned long cpus[16];
	int has_cpus;
	int nlinks; /* -1: NVLink not supported */
	struct fake_link links[MAX_LINKS];
};

static struct nvmlDevice_st gpus[MAX_GPUS];
static int ngpus;
static int loaded;
static int init_error;
static int inited;
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

/* (Re)read the fixture when the variable names another file. */
static int load(void)
{
	const char *path = getenv("GPUFLEET_FAKE_NVML_FIXTURE");
	if (path == NULL)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (loaded && strcmp(path, loaded_path) == 0)
		return 0;
	loaded = 0;
	ngpus = 0;
	init_error = 0;
	snprintf(driver, sizeof(driver), "000.00");
	snprintf(loaded_path, sizeof(loaded_path), "%s", path);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	char line[512];
	struct nvmlDevice_st *g = NULL;
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
		} else if (strcmp(key, "gpu") == 0 && ngpus < MAX_GPUS) {
			g = &gpus[ngpus++];
			memset(g, 0, sizeof(*g));
			g->numa = -1;
			g->nlinks = -1;
			snprintf(g->busid, sizeof(g->busid), "%s", val);
		} else if (g == NULL) {
			continue;
		} else if (strcmp(key, "name") == 0) {
			snprintf(g->name, sizeof(g->name), "%s", val);
		} else if (strcmp(key, "uuid") == 0) {
			snprintf(g->uuid, sizeof(g->uuid), "%s", val);
		} else if (strcmp(key, "pci_device_id") == 0) {
			g->pci_device_id = (unsigned)strtoul(val, NULL, 0);
		} else if (strcmp(key, "memory_total_mib") == 0) {
			g->mem_total = strtoull(val, NULL, 10) << 20;
		} else if (strcmp(key, "mig") == 0) {
			g->has_mig = sscanf(val, "%d %d", &g->mig_cur,
					    &g->mig_pend) == 2;
		} else if (strcmp(key, "numa_node") == 0) {
			g->numa = atoi(val);
		} else if (strcmp(key, "cpu_affinity") == 0) {
			parse_cpus(g, val);
		} else if (strcmp(key, "nvlinks") == 0) {
			g->nlinks = atoi(val);
			if (g->nlinks > MAX_LINKS)
				g->nlinks = MAX_LINKS;
		} else if (strcmp(key, "nvlink") == 0) {
			int l, act;
			char ty[16], remote[32] = "";
			if (sscanf(val, "%d %d %15s %31s", &l, &act, ty,
				   remote) >= 3 &&
			    l >= 0 && l < MAX_LINKS) {
				g->links[l].active = act;
				g->links[l].type =
					strcmp(ty, "switch") == 0
						? NVML_NVLINK_DEVICE_TYPE_SWITCH
						: NVML_NVLINK_DEVICE_TYPE_GPU;
				snprintf(g->links[l].remote,
					 sizeof(g->links[l].remote), "%s",
					 remote);
			}
		}
	}
	fclose(f);
	loaded = 1;
	return 0;
}

#define CHECK_DEV(d)                                        \
	do {                                                \
		if (!inited)                                \
			return NVML_ERROR_UNINITIALIZED;    \
		if ((d) == NULL)                            \
			return NVML_ERROR_INVALID_ARGUMENT; \
	} while (0)

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit_v2(void)
{
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

static void fill_pci(const char *busid, unsigned devid, nvmlPciInfo_t *p)
{
	memset(p, 0, sizeof(*p));
	unsigned dom = 0, bus = 0, dev = 0, fn = 0;
	sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	p->pciDeviceId = devid;
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X", dom, bus, dev,
		 fn);
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X",
		 dom & 0xffff, bus, dev, fn);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	CHECK_DEV(d);
	fill_pci(d->busid, d->pci_device_id, p);
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
	if (d->mem_total == 0)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	m->used = 0;
	m->free = d->mem_total;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *c, unsigned *p);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *c, unsigned *p)
{
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

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned l,
				      nvmlEnableState_t *on);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned l,
				      nvmlEnableState_t *on)
{
	CHECK_DEV(d);
	if (d->nlinks < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (l >= (unsigned)d->nlinks)
		return NVML_ERROR_INVALID_ARGUMENT;
	*on = d->links[l].active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned l,
						 nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned l,
						 nvmlPciInfo_t *p)
{
	CHECK_DEV(d);
	if (d->nlinks < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (l >= (unsigned)d->nlinks || !d->links[l].active)
		return NVML_ERROR_INVALID_ARGUMENT;
	fill_pci(d->links[l].remote, 0, p);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned l,
						 nvmlIntNvLinkDeviceType_t *t);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned l,
						 nvmlIntNvLinkDeviceType_t *t)
{
	CHECK_DEV(d);
	if (d->nlinks < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (l >= (unsigned)d->nlinks)
		return NVML_ERROR_INVALID_ARGUMENT;
	*t = (nvmlIntNvLinkDeviceType_t)d->links[l].type;
	return NVML_SUCCESS;
}
