/*
 * fake.h - what the fake NVML's files share: the fixture's GPUs, their
 * MIG instances and telemetry series (fake_nvml.c loads a text fixture,
 * json_fixture.c a recorded NVML dump; telemetry.c replays the series;
 * costs.c charges each call what it cost on a real host, when asked).
 * Internal to the fake: hidden from its exports.
 */
#ifndef GF_FAKE_NVML_H
#define GF_FAKE_NVML_H

#include <stddef.h>

#include "topo/nvml_api.h"

#pragma GCC visibility push(hidden)

#define MAX_GPUS  64
#define MAX_LINKS GF_NVML_NVLINK_MAX_LINKS
#define MAX_SETS  8
#define MAX_GIP	  16
#define MAX_GI	  8

struct gip {
	unsigned enumv, id, mem, compute, starts, max;
};

struct pset {
	char name[32];
	struct gip p[MAX_GIP];
	int n;
};

struct fake_gi;
struct nvmlComputeInstance_st {
	struct fake_gi *gi;
};

struct nvmlGpuInstance_st; /* = struct fake_gi, see below */

struct fake_link {
	int active;
	int type;
	char remote[32];
};

enum {
	S_UTIL,
	S_MEMUTIL,
	S_POWER,
	S_TEMP,
	S_SMCLK,
	S_MEMCLK,
	S_FBUSED,
	S_PCIETX,
	S_PCIERX,
	S_ENC,
	S_DEC,
	S_GR,
	S_SM,
	S_TENSOR,
	S_DRAM,
	S_NVL_TX,
	S_NVL_RX,
	S_N
};
#define MAX_SERIES 64

struct nvmlDevice_st {
	int is_mig;
	double series[S_N][MAX_SERIES];
	int nseries[S_N];
	int tick;
	int fail_every, lost_after;
	int gone; /* lost through GPUFLEET_FAKE_NVML_EVENTS: every call */
	int xid_tick, xid_code;
	int gpm;
	int has_ecc;
	unsigned long long ecc[4]; /* SBE vol, DBE vol, SBE agg, DBE agg */
	unsigned procs[8];
	int nprocs;
	struct fake_gi *mig_gi; /* MIG device handles */
	char busid[32];
	unsigned pci_subsys;
	char name[96];
	char uuid[96];
	unsigned pci_device_id;
	unsigned long long mem_total;
	/* what the driver keeps (memory_v2.reserved), counted in v1's used
	 * as the driver does; 0: total/160, and v1's used leaves it out */
	unsigned long long mem_reserved;
	unsigned long long energy0; /* mJ at tick 0 */
	int mig_cur, mig_pend, has_mig;
	int numa;
	int minor; /* -1: the GPU's index */
	unsigned long cpus[16];
	int has_cpus;
	int nlinks; /* -1: NVLink not supported */
	struct fake_link links[MAX_LINKS];
	struct pset *set;
	int reset_required;
	struct fake_gi *gis[MAX_GI];
	unsigned next_gi_id;
};

struct fake_gi {
	int used;
	struct nvmlDevice_st *gpu;
	const struct gip *prof;
	unsigned id, start;
	int has_ci, busy;
	unsigned pid; /* the busy instance's compute process */
	struct nvmlComputeInstance_st ci;
	struct nvmlDevice_st migdev;
};

extern struct nvmlDevice_st gpus[MAX_GPUS];
extern int ngpus;
extern int inited; /* nvmlInit done and not shut down */

/* Value of series k at the GPU's current tick (the last one repeated),
 * or dflt when the fixture has none. */
double series_at(nvmlDevice_t d, int k, double dflt);
/* Fault injection for the sample at the current tick. */
nvmlReturn_t fault(nvmlDevice_t d);
/* Read what GPUFLEET_FAKE_NVML_EVENTS gained since the last read (format
 * in fake_nvml.c): Xids queued, GPUs lost or back.  No-op when unset. */
void events_poll(void);

/* The GPU's index among the fixture's; one line to GPUFLEET_FAKE_NVML_LOG
 * when it is set (a call that changes MIG state, its arguments and
 * result). */
int gpu_index(const struct nvmlDevice_st *d);
__attribute__((format(printf, 1, 2))) void call_log(const char *fmt, ...);

/* MIG (mig.c): a fixture's instance added (with a compute instance;
 * busy: a process runs on it, pid or 4242), silently skipped where the
 * driver would refuse it; every instance forgotten. */
void fake_add_gi(struct nvmlDevice_st *g, unsigned id, unsigned start, int busy,
		 unsigned pid);
void mig_reset(void);

/* A GPU as a fixture starts it (no NUMA node, NVLink not supported). */
void gpu_init(struct nvmlDevice_st *g, const char *busid);
/* Read a recorded NVML dump (json_fixture.c): 0, or -1 with a message on
 * stderr. */
int load_json(const char *path, char *driver, size_t driver_size);

/*
 * The calls whose cost costs.c knows (and counts): COST(C_X) at the top of
 * an entry point charges it, in the cost mode, and counts the call.
 */
enum fake_call {
	C_UTIL,
	C_MEM_V2,
	C_POWER,
	C_TEMP,
	C_CLOCK,
	C_PROCS,
	C_FIELDS,
	C_GPM_SAMPLE,
	C_REMAP,
	C_REPLAY,
	C_MIG_MODE,
	C_ENERGY,
	C_PCIE_TPUT,
	C_ENC,
	C_DEC,
	C_ECC,
	C_N
};
/* Choose the cost table from GPUFLEET_FAKE_NVML_COSTS (at nvmlInit):
 * 0, or -1 with a message on stderr when it names no table. */
int costs_init(void);
void cost(enum fake_call c);
#define COST(c) cost(c)

#pragma GCC visibility pop

/* exported, and called across the fake's files */
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);

#define CHECK_DEV(d)                                        \
	do {                                                \
		if (!inited)                                \
			return NVML_ERROR_UNINITIALIZED;    \
		if ((d) == NULL)                            \
			return NVML_ERROR_INVALID_ARGUMENT; \
		if ((d)->gone)                              \
			return NVML_ERROR_GPU_IS_LOST;      \
	} while (0)

#define TEL(d)                               \
	do {                                 \
		CHECK_DEV(d);                \
		nvmlReturn_t fr_ = fault(d); \
		if (fr_ != NVML_SUCCESS)     \
			return fr_;          \
	} while (0)

#endif
