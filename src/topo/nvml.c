/*
 * nvml.c - the run-time NVML loader and the join of NVML facts into a
 * node.  The library is never dlclose()d (NCCL does the same): NVML keeps
 * threads and handlers that do not survive unloading.
 */
#include "topo/nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/log.h"

static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gf_nvml nvml;
static int nvml_refs;

struct sym {
	size_t offset;
	const char *names[3]; /* tried in order */
	int required;
};

#define OFF(f) offsetof(struct gf_nvml, f)
static const struct sym syms[] = {
	{ OFF(nvmlInit), { "nvmlInit_v2", "nvmlInit" }, 1 },
	{ OFF(nvmlShutdown), { "nvmlShutdown" }, 1 },
	{ OFF(nvmlErrorString), { "nvmlErrorString" }, 0 },
	{ OFF(nvmlSystemGetDriverVersion),
	  { "nvmlSystemGetDriverVersion" },
	  0 },
	{ OFF(nvmlDeviceGetCount),
	  { "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount" },
	  1 },
	{ OFF(nvmlDeviceGetHandleByIndex),
	  { "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex" },
	  1 },
	{ OFF(nvmlDeviceGetPciInfo),
	  { "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2" },
	  0 },
	{ OFF(nvmlDeviceGetName), { "nvmlDeviceGetName" }, 0 },
	{ OFF(nvmlDeviceGetUUID), { "nvmlDeviceGetUUID" }, 0 },
	{ OFF(nvmlDeviceGetMemoryInfo), { "nvmlDeviceGetMemoryInfo" }, 0 },
	{ OFF(nvmlDeviceGetMigMode), { "nvmlDeviceGetMigMode" }, 0 },
	{ OFF(nvmlDeviceGetNumaNodeId), { "nvmlDeviceGetNumaNodeId" }, 0 },
	{ OFF(nvmlDeviceGetMinorNumber), { "nvmlDeviceGetMinorNumber" }, 0 },
	{ OFF(nvmlDeviceGetCpuAffinity), { "nvmlDeviceGetCpuAffinity" }, 0 },
	{ OFF(nvmlDeviceGetNvLinkState), { "nvmlDeviceGetNvLinkState" }, 0 },
	{ OFF(nvmlDeviceGetNvLinkRemotePciInfo),
	  { "nvmlDeviceGetNvLinkRemotePciInfo_v2",
	    "nvmlDeviceGetNvLinkRemotePciInfo" },
	  0 },
	{ OFF(nvmlDeviceGetNvLinkRemoteDeviceType),
	  { "nvmlDeviceGetNvLinkRemoteDeviceType" },
	  0 },
	{ OFF(nvmlDeviceSetMigMode), { "nvmlDeviceSetMigMode" }, 0 },
	{ OFF(nvmlDeviceGetGpuInstanceProfileInfo),
	  { "nvmlDeviceGetGpuInstanceProfileInfo" },
	  0 },
	{ OFF(nvmlDeviceGetGpuInstances), { "nvmlDeviceGetGpuInstances" }, 0 },
	{ OFF(nvmlGpuInstanceGetInfo), { "nvmlGpuInstanceGetInfo" }, 0 },
	{ OFF(nvmlDeviceCreateGpuInstanceWithPlacement),
	  { "nvmlDeviceCreateGpuInstanceWithPlacement" },
	  0 },
	{ OFF(nvmlGpuInstanceDestroy), { "nvmlGpuInstanceDestroy" }, 0 },
	{ OFF(nvmlGpuInstanceGetComputeInstanceProfileInfo),
	  { "nvmlGpuInstanceGetComputeInstanceProfileInfo" },
	  0 },
	{ OFF(nvmlGpuInstanceCreateComputeInstance),
	  { "nvmlGpuInstanceCreateComputeInstance" },
	  0 },
	{ OFF(nvmlGpuInstanceGetComputeInstances),
	  { "nvmlGpuInstanceGetComputeInstances" },
	  0 },
	{ OFF(nvmlComputeInstanceDestroy),
	  { "nvmlComputeInstanceDestroy" },
	  0 },
	{ OFF(nvmlDeviceGetMaxMigDeviceCount),
	  { "nvmlDeviceGetMaxMigDeviceCount" },
	  0 },
	{ OFF(nvmlDeviceGetMigDeviceHandleByIndex),
	  { "nvmlDeviceGetMigDeviceHandleByIndex" },
	  0 },
	{ OFF(nvmlDeviceGetGpuInstanceId),
	  { "nvmlDeviceGetGpuInstanceId" },
	  0 },
	{ OFF(nvmlDeviceGetUtilizationRates),
	  { "nvmlDeviceGetUtilizationRates" },
	  0 },
	{ OFF(nvmlDeviceGetEncoderUtilization),
	  { "nvmlDeviceGetEncoderUtilization" },
	  0 },
	{ OFF(nvmlDeviceGetDecoderUtilization),
	  { "nvmlDeviceGetDecoderUtilization" },
	  0 },
	{ OFF(nvmlDeviceGetPowerUsage), { "nvmlDeviceGetPowerUsage" }, 0 },
	{ OFF(nvmlDeviceGetTotalEnergyConsumption),
	  { "nvmlDeviceGetTotalEnergyConsumption" },
	  0 },
	{ OFF(nvmlDeviceGetTemperature), { "nvmlDeviceGetTemperature" }, 0 },
	{ OFF(nvmlDeviceGetClockInfo), { "nvmlDeviceGetClockInfo" }, 0 },
	{ OFF(nvmlDeviceGetPcieThroughput),
	  { "nvmlDeviceGetPcieThroughput" },
	  0 },
	{ OFF(nvmlDeviceGetPcieReplayCounter),
	  { "nvmlDeviceGetPcieReplayCounter" },
	  0 },
	{ OFF(nvmlDeviceGetRemappedRows), { "nvmlDeviceGetRemappedRows" }, 0 },
	{ OFF(nvmlEventSetCreate), { "nvmlEventSetCreate" }, 0 },
	{ OFF(nvmlDeviceRegisterEvents), { "nvmlDeviceRegisterEvents" }, 0 },
	{ OFF(nvmlEventSetWait),
	  { "nvmlEventSetWait_v2", "nvmlEventSetWait" },
	  0 },
	{ OFF(nvmlEventSetFree), { "nvmlEventSetFree" }, 0 },
	{ OFF(nvmlDeviceGetMemoryInfo_v2),
	  { "nvmlDeviceGetMemoryInfo_v2" },
	  0 },
	{ OFF(nvmlDeviceGetTotalEccErrors),
	  { "nvmlDeviceGetTotalEccErrors" },
	  0 },
	{ OFF(nvmlDeviceGetFieldValues), { "nvmlDeviceGetFieldValues" }, 0 },
	{ OFF(nvmlGpmQueryDeviceSupport), { "nvmlGpmQueryDeviceSupport" }, 0 },
	{ OFF(nvmlGpmSampleAlloc), { "nvmlGpmSampleAlloc" }, 0 },
	{ OFF(nvmlGpmSampleFree), { "nvmlGpmSampleFree" }, 0 },
	{ OFF(nvmlGpmSampleGet), { "nvmlGpmSampleGet" }, 0 },
	{ OFF(nvmlGpmMigSampleGet), { "nvmlGpmMigSampleGet" }, 0 },
	{ OFF(nvmlGpmMetricsGet), { "nvmlGpmMetricsGet" }, 0 },
	{ OFF(nvmlDeviceGetComputeRunningProcesses),
	  { "nvmlDeviceGetComputeRunningProcesses_v3",
	    "nvmlDeviceGetComputeRunningProcesses_v2" },
	  0 },
};
#undef OFF

/* every entry point of struct gf_nvml has its row above */
enum {
#define GF__NVML_COUNT(ret, name, args) gf__nvml_idx_##name,
	GF_NVML_FUNCS(GF__NVML_COUNT)
#undef GF__NVML_COUNT
		GF__NVML_NFUNCS
};
_Static_assert(sizeof(syms) / sizeof(syms[0]) == GF__NVML_NFUNCS,
	       "a GF_NVML_FUNCS entry lacks its row in syms[]");

/*
 * A stub per entry point, installed where the library lacks the symbol,
 * so every pointer in struct gf_nvml can be called: it answers
 * NVML_ERROR_FUNCTION_NOT_FOUND (nvmlErrorString answers NULL), as an
 * older driver would.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GF__NVML_STUB(ret, name, args)                                      \
	static ret stub_##name args                                         \
	{                                                                   \
		return _Generic((ret)0, const char *: (ret)0,             \
				default: (ret)(intptr_t)                  \
					NVML_ERROR_FUNCTION_NOT_FOUND); \
	}
GF_NVML_FUNCS(GF__NVML_STUB)
#undef GF__NVML_STUB
#pragma GCC diagnostic pop

static const struct gf_nvml stubs = {
#define GF__NVML_STUB_PTR(ret, name, args) .name = stub_##name,
	GF_NVML_FUNCS(GF__NVML_STUB_PTR)
#undef GF__NVML_STUB_PTR
};

static int resolve(void *dl, struct gf_err *e, const char *path)
{
	int found = 0, total = 0;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = NULL;
		for (int k = 0; k < 3 && syms[i].names[k] && !p; k++)
			p = dlsym(dl, syms[i].names[k]);
		if (p == NULL && syms[i].required)
			return gf_err_set(e, GF_ENVML,
					  "cannot use NVML '%s': symbol '%s' "
					  "missing",
					  path, syms[i].names[0]);
		total++;
		if (p == NULL) {
			gf_log(GF_LOG_DEBUG, "nvml", "'%s' lacks %s: stubbed",
			       path, syms[i].names[0]);
			memcpy((char *)&nvml + syms[i].offset,
			       (const char *)&stubs + syms[i].offset,
			       sizeof(p));
			continue;
		}
		found++;
		/* POSIX guarantees data and function pointers convert. */
		memcpy((char *)&nvml + syms[i].offset, &p, sizeof(p));
	}
	gf_log(GF_LOG_DEBUG, "nvml", "loaded '%s': %d of %d entry points", path,
	       found, total);
	return 0;
}

int gf_nvml_open(const struct gf_nvml **out, struct gf_err *e)
{
	int rc = 0;
	pthread_mutex_lock(&nvml_lock);
	if (nvml_refs > 0) {
		nvml_refs++;
		*out = &nvml;
		goto out_unlock;
	}
	const char *path = getenv("GPUFLEET_NVML_LIBRARY");
	if (path == NULL || *path == '\0')
		path = "libnvidia-ml.so.1";
	if (nvml.dl == NULL) {
		nvml.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (nvml.dl == NULL) {
			const char *why = dlerror();
			rc = gf_err_set(e, GF_ENOTFOUND,
					"NVML not available (%s): %s", path,
					why ? why : "dlopen failed");
			goto out_unlock;
		}
		/* kept for messages: a long one is shown cut */
		gf_note(nvml.path, sizeof(nvml.path), "%s", path);
		rc = resolve(nvml.dl, e, path);
		if (rc) {
			nvml.dl = NULL; /* keep it loaded, but unusable */
			goto out_unlock;
		}
	}
	nvmlReturn_t r = nvml.nvmlInit();
	if (r != NVML_SUCCESS) {
		rc = gf_err_set(e, GF_ENVML, "NVML init failed (%s): %s",
				nvml.path, gf_nvml_strerror(&nvml, r));
		goto out_unlock;
	}
	nvml_refs = 1;
	*out = &nvml;
out_unlock:
	pthread_mutex_unlock(&nvml_lock);
	return rc;
}

void gf_nvml_close(void)
{
	pthread_mutex_lock(&nvml_lock);
	if (nvml_refs > 0 && --nvml_refs == 0)
		nvml.nvmlShutdown();
	pthread_mutex_unlock(&nvml_lock);
}

const char *gf_nvml_strerror(const struct gf_nvml *nv, nvmlReturn_t r)
{
	if (nv) {
		const char *s = nv->nvmlErrorString(r);
		if (s)
			return s;
	}
	switch (r) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return "Function Not Found";
	default:
		return "Unknown Error";
	}
}

static void join_nvlinks(const struct gf_nvml *nv, struct gf_node *n, int g,
			 nvmlDevice_t d)
{
	for (unsigned l = 0; l < GF_NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t on;
		nvmlReturn_t r = nv->nvmlDeviceGetNvLinkState(d, l, &on);
		if (r == NVML_ERROR_NOT_SUPPORTED)
			break;
		if (r != NVML_SUCCESS)
			continue;
		n->nvlink_known = true;
		if (on != NVML_FEATURE_ENABLED)
			continue;
		nvmlIntNvLinkDeviceType_t ty = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
		nv->nvmlDeviceGetNvLinkRemoteDeviceType(d, l, &ty);
		int peer = -1;
		nvmlPciInfo_t pci;
		if (ty != NVML_NVLINK_DEVICE_TYPE_SWITCH &&
		    nv->nvmlDeviceGetNvLinkRemotePciInfo(d, l, &pci) ==
			    NVML_SUCCESS) {
			pci.busId[sizeof(pci.busId) - 1] = '\0';
			peer = gf_node_gpu_by_busid(n, pci.busId);
		}
		if (peer >= 0 && peer != g) {
			if (n->nvlinks[g][peer] < 255)
				n->nvlinks[g][peer]++;
		} else if (ty == NVML_NVLINK_DEVICE_TYPE_SWITCH ||
			   ty == NVML_NVLINK_DEVICE_TYPE_UNKNOWN) {
			/* Not a GPU we know: the far end is an NVSwitch. */
			if (n->nvswitch_links[g] < 255)
				n->nvswitch_links[g]++;
		}
	}
}

static void join_device(const struct gf_nvml *nv, struct gf_node *n, int g,
			nvmlDevice_t d, const nvmlPciInfo_t *pci)
{
	struct gf_gpu *gpu = &n->gpus[g];
	char buf[NVML_DEVICE_UUID_BUFFER_SIZE];
	if (nv->nvmlDeviceGetName(d, buf, sizeof(buf)) == NVML_SUCCESS) {
		buf[sizeof(buf) - 1] = '\0';
		gf_note(gpu->name, sizeof(gpu->name), "%s", buf);
	}
	if (nv->nvmlDeviceGetUUID(d, buf, sizeof(buf)) == NVML_SUCCESS) {
		buf[sizeof(buf) - 1] = '\0';
		gf_note(gpu->uuid, sizeof(gpu->uuid), "%s", buf);
	}
	if (gpu->model == NULL)
		gpu->model =
			gf_catalog_by_pci((uint16_t)(pci->pciDeviceId & 0xffff),
					  (uint16_t)(pci->pciDeviceId >> 16));
	nvmlMemory_t mem;
	if (nv->nvmlDeviceGetMemoryInfo(d, &mem) == NVML_SUCCESS)
		gpu->memory_mib = mem.total >> 20;
	unsigned cur, pend;
	if (nv->nvmlDeviceGetMigMode(d, &cur, &pend) == NVML_SUCCESS) {
		gpu->mig_mode = (int)cur;
		gpu->mig_pending = (int)pend;
	} else if (gpu->mig_mode < 0) {
		gpu->mig_mode = -1;
	}
	unsigned numa, minor;
	if (nv->nvmlDeviceGetNumaNodeId(d, &numa) == NVML_SUCCESS)
		gpu->numa_id = (int)numa;
	/* /dev/nvidiaN's N: not the index in general (Slurm's gres.html) */
	if (nv->nvmlDeviceGetMinorNumber(d, &minor) == NVML_SUCCESS &&
	    minor < 4096) {
		gpu->minor = (int)minor;
		gpu->has_minor = true;
	}
	if (!gpu->locality_known) {
		unsigned long set[GF_BITMAP_BITS / (8 * sizeof(long))];
		memset(set, 0, sizeof(set));
		if (nv->nvmlDeviceGetCpuAffinity(
			    d, (unsigned)(sizeof(set) / sizeof(set[0])), set) ==
		    NVML_SUCCESS) {
			gf_bitmap_zero(&gpu->cpus);
			for (int b = 0; b < GF_BITMAP_BITS; b++)
				if (set[b / (8 * sizeof(long))] >>
					    (b % (8 * sizeof(long))) &
				    1UL)
					gf_bitmap_set(&gpu->cpus, b);
			if (!gf_bitmap_is_empty(&gpu->cpus))
				gpu->locality_known = true;
		}
	}
	join_nvlinks(nv, n, g, d);
	gf_log(GF_LOG_DEBUG, "nvml",
	       "GPU%d %s: %s %s, %llu MiB, MIG %d, NUMA %d", g, pci->busId,
	       gpu->name, gpu->uuid, (unsigned long long)gpu->memory_mib,
	       gpu->mig_mode, gpu->numa_id);
}

int gf_nvml_join(const struct gf_nvml *nv, struct gf_node *n, struct gf_err *e)
{
	unsigned count = 0;
	nvmlReturn_t r = nv->nvmlDeviceGetCount(&count);
	if (r != NVML_SUCCESS)
		return gf_err_set(e, GF_ENVML, "nvmlDeviceGetCount failed: %s",
				  gf_nvml_strerror(nv, r));
	if (count > GF_MAX_GPUS)
		count = GF_MAX_GPUS;
	n->nvml_used = true;
	char ver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	if (nv->nvmlSystemGetDriverVersion(ver, sizeof(ver)) == NVML_SUCCESS) {
		ver[sizeof(ver) - 1] = '\0';
		gf_log(GF_LOG_INFO, "nvml", "driver %s, %u GPUs", ver, count);
	}
	for (unsigned i = 0; i < count; i++) {
		nvmlDevice_t d;
		nvmlPciInfo_t pci;
		r = nv->nvmlDeviceGetHandleByIndex(i, &d);
		if (r != NVML_SUCCESS) {
			gf_node_note(n, "NVML GPU %u: no handle: %s", i,
				     gf_nvml_strerror(nv, r));
			continue;
		}
		r = nv->nvmlDeviceGetPciInfo(d, &pci);
		if (r != NVML_SUCCESS) {
			gf_log(GF_LOG_DEBUG, "nvml",
			       "GPU %u: nvmlDeviceGetPciInfo: %s", i,
			       gf_nvml_strerror(nv, r));
			continue;
		}
		pci.busId[sizeof(pci.busId) - 1] = '\0';
		int g = gf_node_gpu_by_busid(n, pci.busId);
		if (g < 0) {
			gf_node_note(n,
				     "NVML GPU %u at %s is not in this "
				     "topology",
				     i, pci.busId);
			continue;
		}
		join_device(nv, n, g, d, &pci);
	}
	/* A pair counts the links both ends report (max of the two). */
	for (int i = 0; i < n->ngpus; i++)
		for (int j = 0; j < i; j++) {
			uint8_t m = n->nvlinks[i][j] > n->nvlinks[j][i]
					    ? n->nvlinks[i][j]
					    : n->nvlinks[j][i];
			n->nvlinks[i][j] = n->nvlinks[j][i] = m;
		}
	return 0;
}

int gf_nvml_count(const struct gf_nvml *nv, unsigned *count, struct gf_err *e)
{
	*count = 0;
	nvmlReturn_t r = nv->nvmlDeviceGetCount(count);
	if (r != NVML_SUCCESS)
		return gf_err_set(e, GF_ENVML, "nvmlDeviceGetCount failed: %s",
				  gf_nvml_strerror(nv, r));
	return 0;
}

bool gf_nvml_pci(const struct gf_nvml *nv, unsigned i, nvmlDevice_t *d,
		 nvmlPciInfo_t *pci)
{
	if (nv->nvmlDeviceGetHandleByIndex(i, d) != NVML_SUCCESS ||
	    nv->nvmlDeviceGetPciInfo(*d, pci) != NVML_SUCCESS)
		return false;
	pci->busId[sizeof(pci->busId) - 1] = '\0';
	return true;
}

int gf_nvml_busy_gpus(const struct gf_nvml *nv, const struct gf_node *n,
		      struct gf_bitmap *busy, struct gf_err *e)
{
	gf_bitmap_zero(busy);
	unsigned count;
	int rc = gf_nvml_count(nv, &count, e);
	if (rc)
		return rc;
	for (unsigned i = 0; i < count && i < GF_MAX_GPUS; i++) {
		nvmlDevice_t d;
		nvmlPciInfo_t pci;
		if (!gf_nvml_pci(nv, i, &d, &pci))
			continue;
		int g = gf_node_gpu_by_busid(n, pci.busId);
		if (g < 0)
			continue;
		unsigned np = 0;
		nvmlReturn_t r =
			nv->nvmlDeviceGetComputeRunningProcesses(d, &np, NULL);
		/* with no room given, NVML says how many there are */
		if (r == NVML_ERROR_INSUFFICIENT_SIZE ||
		    (r == NVML_SUCCESS && np > 0)) {
			gf_bitmap_set(busy, g);
			gf_log(GF_LOG_DEBUG, "nvml", "GPU%d %s: %u processes",
			       g, pci.busId, np);
		} else if (r != NVML_SUCCESS && rc == 0) {
			rc = gf_err_set(e, GF_ENVML,
					"GPU%d: cannot list its processes: %s",
					g, gf_nvml_strerror(nv, r));
		}
	}
	return rc;
}
