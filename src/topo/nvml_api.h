/*
 * nvml_api.h - our own declarations of the NVML types and entry points
 * gpufleet uses.  No nvml.h at build time: the library is loaded at run
 * time (nvml.c).  Layouts follow NVIDIA's nvml.h (API 13) as recorded in
 * reference/topology.md section 3.3, with size checks below; the fake
 * library in tests/fake_nvml includes this same header.
 */
#ifndef GF_TOPO_NVML_API_H
#define GF_TOPO_NVML_API_H

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlReturn_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_UNKNOWN = 999,
};

typedef enum {
	NVML_FEATURE_DISABLED = 0,
	NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

typedef enum {
	NVML_NVLINK_DEVICE_TYPE_GPU = 0,
	NVML_NVLINK_DEVICE_TYPE_IBMNPU = 1,
	NVML_NVLINK_DEVICE_TYPE_SWITCH = 2,
	NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
} nvmlIntNvLinkDeviceType_t;

typedef unsigned int nvmlAffinityScope_t;
#define NVML_AFFINITY_SCOPE_NODE   0U
#define NVML_AFFINITY_SCOPE_SOCKET 1U

/* Upper bound over all API versions (12, 18, then 36). */
#define GF_NVML_NVLINK_MAX_LINKS 36

typedef struct {
	char busIdLegacy[16];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId; /* (device id << 16) | vendor id */
	unsigned int pciSubSystemId;
	char busId[32]; /* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;

typedef struct {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

/* MIG (reference/topology.md 3.4) */
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;

#define NVML_DEVICE_MIG_DISABLE		  0U
#define NVML_DEVICE_MIG_ENABLE		  1U
#define NVML_ERROR_IN_USE		  19
#define NVML_ERROR_INSUFFICIENT_RESOURCES 23

typedef struct {
	unsigned int start;
	unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct {
	unsigned int id;
	unsigned int isP2pSupported;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct {
	nvmlDevice_t device;
	unsigned int id;
	unsigned int profileId;
	nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct {
	unsigned int id;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* telemetry */
typedef struct {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

typedef enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
} nvmlClockType_t;

#define NVML_TEMPERATURE_GPU		   0U
#define NVML_PCIE_UTIL_TX_BYTES		   0U
#define NVML_PCIE_UTIL_RX_BYTES		   1U
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR 0x8ULL
#define NVML_ERROR_TIMEOUT		   10

typedef struct nvmlEventSet_st *nvmlEventSet_t;

typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t is 68 bytes");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "8 bytes");
_Static_assert(sizeof(nvmlEventData_t) == 32, "32 bytes");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "48 bytes");
_Static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24, "24 bytes");
_Static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36, "36 bytes");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "24 bytes");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t is 24 bytes");

/* memory_v2: used excludes reserved (reference/topology.md 3.3) */
typedef struct {
	unsigned int version;
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 (unsigned)(sizeof(nvmlMemory_v2_t) | (2U << 24U))
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t is 40 bytes");

/*
 * GPM, Hopper and newer (nvml.h API 12.x/13): two samples of the GPU (or
 * of one GPU instance) taken apart in time give each metric's value over
 * the interval, in percent.
 */
typedef struct {
	struct nvmlGpmSample_st *handle;
} nvmlGpmSample_t;

typedef struct {
	unsigned int metricId;
	nvmlReturn_t nvmlReturn;
	double value;
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo;
} nvmlGpmMetric_t;

#define NVML_GPM_METRIC_MAX		98
#define NVML_GPM_METRICS_GET_VERSION	1U
#define NVML_GPM_SUPPORT_VERSION	1U
#define NVML_GPM_METRIC_GRAPHICS_UTIL	1U
#define NVML_GPM_METRIC_SM_UTIL		2U
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5U
#define NVML_GPM_METRIC_DRAM_BW_UTIL	10U

typedef struct {
	unsigned int version;
	unsigned int numMetrics;
	nvmlGpmSample_t sample1;
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
	unsigned int version;
	unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

_Static_assert(sizeof(nvmlGpmSample_t) == sizeof(void *), "a handle");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "40 bytes");
_Static_assert(sizeof(nvmlGpmMetricsGet_t) == 24 + 98 * 40, "3944 bytes");

/* nvmlDeviceGetFieldValues (nvml.h): one field of a device per entry */
typedef union {
	double dVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	long long sllVal;
	int siVal;
} nvmlValue_t;

typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	unsigned int valueType; /* nvmlValueType_t */
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "40 bytes, value at 32");

#define NVML_VALUE_TYPE_DOUBLE		   0U
#define NVML_VALUE_TYPE_UNSIGNED_INT	   1U
#define NVML_VALUE_TYPE_UNSIGNED_LONG	   2U
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3U
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG   4U
#define NVML_VALUE_TYPE_SIGNED_INT	   5U
/* NVLink data throughput, cumulative KiB, the GPU's total */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138U
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139U

/* nvmlDeviceGetTotalEccErrors: nvmlMemoryErrorType_t, nvmlEccCounterType_t */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED   0U
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1U
#define NVML_VOLATILE_ECC		   0U
#define NVML_AGGREGATE_ECC		   1U

#define NVML_DEVICE_NAME_BUFFER_SIZE	       96
#define NVML_DEVICE_UUID_BUFFER_SIZE	       96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80

/*
 * The entry points, as an X-macro: X(return, name, parameters).
 * The symbol looked up is the name; for versioned ones, nvml.c tries the
 * _vN export first, then the legacy one.
 */
#define GF_NVML_FUNCS(X)                                                     \
	X(nvmlReturn_t, nvmlInit, (void))                                    \
	X(nvmlReturn_t, nvmlShutdown, (void))                                \
	X(const char *, nvmlErrorString, (nvmlReturn_t r))                   \
	X(nvmlReturn_t, nvmlSystemGetDriverVersion,                          \
	  (char *version, unsigned int length))                              \
	X(nvmlReturn_t, nvmlDeviceGetCount, (unsigned int *count))           \
	X(nvmlReturn_t, nvmlDeviceGetHandleByIndex,                          \
	  (unsigned int index, nvmlDevice_t *device))                        \
	X(nvmlReturn_t, nvmlDeviceGetPciInfo,                                \
	  (nvmlDevice_t d, nvmlPciInfo_t * pci))                             \
	X(nvmlReturn_t, nvmlDeviceGetName,                                   \
	  (nvmlDevice_t d, char *name, unsigned int length))                 \
	X(nvmlReturn_t, nvmlDeviceGetUUID,                                   \
	  (nvmlDevice_t d, char *uuid, unsigned int length))                 \
	X(nvmlReturn_t, nvmlDeviceGetMemoryInfo,                             \
	  (nvmlDevice_t d, nvmlMemory_t * m))                                \
	X(nvmlReturn_t, nvmlDeviceGetMigMode,                                \
	  (nvmlDevice_t d, unsigned int *current, unsigned int *pending))    \
	X(nvmlReturn_t, nvmlDeviceGetNumaNodeId,                             \
	  (nvmlDevice_t d, unsigned int *node))                              \
	X(nvmlReturn_t, nvmlDeviceGetMinorNumber,                            \
	  (nvmlDevice_t d, unsigned int *minor))                             \
	X(nvmlReturn_t, nvmlDeviceGetCpuAffinity,                            \
	  (nvmlDevice_t d, unsigned int cpuSetSize, unsigned long *cpuSet))  \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkState,                            \
	  (nvmlDevice_t d, unsigned int link, nvmlEnableState_t *active))    \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkRemotePciInfo,                    \
	  (nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *pci))           \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkRemoteDeviceType,                 \
	  (nvmlDevice_t d, unsigned int link,                                \
	   nvmlIntNvLinkDeviceType_t *type))                                 \
	X(nvmlReturn_t, nvmlDeviceSetMigMode,                                \
	  (nvmlDevice_t d, unsigned int mode, nvmlReturn_t *activation))     \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfo,                 \
	  (nvmlDevice_t d, unsigned int profile,                             \
	   nvmlGpuInstanceProfileInfo_t *info))                              \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstances,                           \
	  (nvmlDevice_t d, unsigned int profileId, nvmlGpuInstance_t *gis,   \
	   unsigned int *count))                                             \
	X(nvmlReturn_t, nvmlGpuInstanceGetInfo,                              \
	  (nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t * info))              \
	X(nvmlReturn_t, nvmlDeviceCreateGpuInstanceWithPlacement,            \
	  (nvmlDevice_t d, unsigned int profileId,                           \
	   const nvmlGpuInstancePlacement_t *placement,                      \
	   nvmlGpuInstance_t *gi))                                           \
	X(nvmlReturn_t, nvmlGpuInstanceDestroy, (nvmlGpuInstance_t gi))      \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceProfileInfo,        \
	  (nvmlGpuInstance_t gi, unsigned int profile,                       \
	   unsigned int engProfile, nvmlComputeInstanceProfileInfo_t *info)) \
	X(nvmlReturn_t, nvmlGpuInstanceCreateComputeInstance,                \
	  (nvmlGpuInstance_t gi, unsigned int profileId,                     \
	   nvmlComputeInstance_t *ci))                                       \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstances,                  \
	  (nvmlGpuInstance_t gi, unsigned int profileId,                     \
	   nvmlComputeInstance_t *cis, unsigned int *count))                 \
	X(nvmlReturn_t, nvmlComputeInstanceDestroy,                          \
	  (nvmlComputeInstance_t ci))                                        \
	X(nvmlReturn_t, nvmlDeviceGetMaxMigDeviceCount,                      \
	  (nvmlDevice_t d, unsigned int *count))                             \
	X(nvmlReturn_t, nvmlDeviceGetMigDeviceHandleByIndex,                 \
	  (nvmlDevice_t d, unsigned int index, nvmlDevice_t *mig))           \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceId,                          \
	  (nvmlDevice_t mig, unsigned int *id))                              \
	X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses,                \
	  (nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos))   \
	X(nvmlReturn_t, nvmlDeviceGetUtilizationRates,                       \
	  (nvmlDevice_t d, nvmlUtilization_t * u))                           \
	X(nvmlReturn_t, nvmlDeviceGetEncoderUtilization,                     \
	  (nvmlDevice_t d, unsigned int *util, unsigned int *period_us))     \
	X(nvmlReturn_t, nvmlDeviceGetDecoderUtilization,                     \
	  (nvmlDevice_t d, unsigned int *util, unsigned int *period_us))     \
	X(nvmlReturn_t, nvmlDeviceGetPowerUsage,                             \
	  (nvmlDevice_t d, unsigned int *milliwatts))                        \
	X(nvmlReturn_t, nvmlDeviceGetTotalEnergyConsumption,                 \
	  (nvmlDevice_t d, unsigned long long *millijoules))                 \
	X(nvmlReturn_t, nvmlDeviceGetTemperature,                            \
	  (nvmlDevice_t d, unsigned int sensor, unsigned int *celsius))      \
	X(nvmlReturn_t, nvmlDeviceGetClockInfo,                              \
	  (nvmlDevice_t d, nvmlClockType_t type, unsigned int *mhz))         \
	X(nvmlReturn_t, nvmlDeviceGetPcieThroughput,                         \
	  (nvmlDevice_t d, unsigned int counter, unsigned int *kb_per_s))    \
	X(nvmlReturn_t, nvmlDeviceGetPcieReplayCounter,                      \
	  (nvmlDevice_t d, unsigned int *value))                             \
	X(nvmlReturn_t, nvmlDeviceGetRemappedRows,                           \
	  (nvmlDevice_t d, unsigned int *corr, unsigned int *unc,            \
	   unsigned int *pending, unsigned int *failure))                    \
	X(nvmlReturn_t, nvmlEventSetCreate, (nvmlEventSet_t * set))          \
	X(nvmlReturn_t, nvmlDeviceRegisterEvents,                            \
	  (nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set))    \
	X(nvmlReturn_t, nvmlEventSetWait,                                    \
	  (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int ms))     \
	X(nvmlReturn_t, nvmlEventSetFree, (nvmlEventSet_t set))              \
	X(nvmlReturn_t, nvmlDeviceGetMemoryInfo_v2,                          \
	  (nvmlDevice_t d, nvmlMemory_v2_t * m))                             \
	X(nvmlReturn_t, nvmlDeviceGetTotalEccErrors,                         \
	  (nvmlDevice_t d, unsigned int errorType, unsigned int counterType, \
	   unsigned long long *count))                                       \
	X(nvmlReturn_t, nvmlDeviceGetFieldValues,                            \
	  (nvmlDevice_t d, int count, nvmlFieldValue_t *values))             \
	X(nvmlReturn_t, nvmlGpmQueryDeviceSupport,                           \
	  (nvmlDevice_t d, nvmlGpmSupport_t * support))                      \
	X(nvmlReturn_t, nvmlGpmSampleAlloc, (nvmlGpmSample_t * sample))      \
	X(nvmlReturn_t, nvmlGpmSampleFree, (nvmlGpmSample_t sample))         \
	X(nvmlReturn_t, nvmlGpmSampleGet,                                    \
	  (nvmlDevice_t d, nvmlGpmSample_t sample))                          \
	X(nvmlReturn_t, nvmlGpmMigSampleGet,                                 \
	  (nvmlDevice_t d, unsigned int gpuInstanceId,                       \
	   nvmlGpmSample_t sample))                                          \
	X(nvmlReturn_t, nvmlGpmMetricsGet, (nvmlGpmMetricsGet_t * get))

#endif
