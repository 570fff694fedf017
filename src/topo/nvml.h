/*
 * nvml.h - NVML loaded at run time with dlopen("libnvidia-ml.so.1").
 *
 * No build dependency on NVIDIA's headers or library: a machine without
 * the driver gets GF_ENOTFOUND from gf_nvml_open() and a one-line note,
 * never a failure.  GPUFLEET_NVML_LIBRARY names another library to load
 * instead (the tests' fake NVML, a driver in an odd place).
 *
 * Required symbols: nvmlInit(_v2), nvmlShutdown, nvmlDeviceGetCount(_v2),
 * nvmlDeviceGetHandleByIndex(_v2).  Every other entry point is optional:
 * when the library lacks it, its pointer in struct gf_nvml is a stub that
 * returns NVML_ERROR_FUNCTION_NOT_FOUND (nvmlErrorString: NULL).  Every
 * pointer can therefore be called; none is ever NULL after a successful
 * gf_nvml_open().
 *
 * Thread-safety: open/close under a process-wide mutex, refcounted;
 * calls through gf_nvml are serialised by the caller (NVML has had
 * thread-safety bugs; NCCL serialises too).
 */
#ifndef GF_TOPO_NVML_H
#define GF_TOPO_NVML_H

#include <gpufleet/err.h>
#include <gpufleet/node.h>

#include "topo/nvml_api.h"

struct gf_nvml {
	void *dl;
	char path[256];
#define GF__NVML_PTR(ret, name, args) ret(*name) args;
	GF_NVML_FUNCS(GF__NVML_PTR)
#undef GF__NVML_PTR
};

/*
 * Load the library and call nvmlInit.  Returns 0; GF_ENOTFOUND when the
 * library is absent (e->msg says so in one line); GF_ENVML when it loads
 * but fails to initialise (e.g. no driver).  The returned table is
 * borrowed and valid until the matching gf_nvml_close().
 */
int gf_nvml_open(const struct gf_nvml **out, struct gf_err *e) GF_MUST_CHECK;
void gf_nvml_close(void);

/* NVML's text for r, or our own when the library gives none. */
const char *gf_nvml_strerror(const struct gf_nvml *nv, nvmlReturn_t r);

/* How many devices NVML sees: 0, or GF_ENVML with e. */
int gf_nvml_count(const struct gf_nvml *nv, unsigned *count,
		  struct gf_err *e) GF_MUST_CHECK;

/* Device i's handle and PCI info (busId NUL-terminated); false when NVML
 * does not answer for it. */
bool gf_nvml_pci(const struct gf_nvml *nv, unsigned i, nvmlDevice_t *d,
		 nvmlPciInfo_t *pci);

/*
 * Add what NVML knows to a finished node: name, UUID, memory, MIG mode,
 * GPU NUMA id and NVLink counts, joined to the node's GPUs by PCI bus id.
 * GPUs NVML reports that the topology lacks are noted on the node.
 */
int gf_nvml_join(const struct gf_nvml *nv, struct gf_node *n,
		 struct gf_err *e) GF_MUST_CHECK;

/*
 * GPUs of finished node n that run a compute process now (bit = node GPU
 * index), matched by PCI bus id.  0, or GF_ENVML when NVML cannot list
 * processes (the bitmap then holds what it could see).
 */
int gf_nvml_busy_gpus(const struct gf_nvml *nv, const struct gf_node *n,
		      struct gf_bitmap *busy, struct gf_err *e) GF_MUST_CHECK;

#endif
