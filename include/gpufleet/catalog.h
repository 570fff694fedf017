/*
 * catalog.h - the built-in GPU catalog: what gpufleet knows about each GPU
 * model without asking the hardware (memory, NVLink, MIG, PCI ids).
 *
 * The table is ours, written from vendors' public data sheets.  Entries are
 * static and immutable; every pointer returned here is borrowed and valid
 * for the life of the process.  Thread-safe.
 */
#ifndef GPUFLEET_CATALOG_H
#define GPUFLEET_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gf_gpu_arch {
	GF_ARCH_UNKNOWN = 0,
	GF_ARCH_PASCAL,
	GF_ARCH_VOLTA,
	GF_ARCH_TURING,
	GF_ARCH_AMPERE,
	GF_ARCH_ADA,
	GF_ARCH_HOPPER,
	GF_ARCH_BLACKWELL,
};

enum gf_nvlink_kind {
	GF_NVLINK_NONE = 0,
	GF_NVLINK_BRIDGE, /* PCIe card with an NVLink bridge to 1 peer */
	GF_NVLINK_MESH,	  /* SXM board, direct GPU-GPU links (hybrid mesh) */
	GF_NVLINK_SWITCH, /* SXM board, all links to NVSwitches */
};

#define GF_GPU_MAX_PCI_IDS 4
#define GF_GPU_MAX_ALIASES 3

/* The node label GPU feature discovery writes the product to. */
#define GF_GFD_PRODUCT_LABEL "nvidia.com/gpu.product"

struct gf_gpu_model {
	const char *id;	  /* stable short id: "h100-sxm" */
	const char *name; /* as NVML names it: "NVIDIA H100 80GB HBM3" */
	enum gf_gpu_arch arch;
	uint16_t vendor_id;			     /* 0x10de */
	uint16_t pci_device_ids[GF_GPU_MAX_PCI_IDS]; /* 0-terminated */
	uint32_t memory_mib;			     /* marketed capacity */
	uint8_t nvlink_gen;			     /* 0 = none */
	uint8_t nvlink_links;			     /* links per GPU */
	uint16_t nvlink_link_gbps; /* GB/s per link per direction */
	enum gf_nvlink_kind nvlink_kind;
	bool mig; /* supports Multi-Instance GPU */
	uint8_t mig_max_instances;
	uint16_t tdp_watts;
	/* nvidia.com/gpu.product as NVIDIA's GPU feature discovery writes it:
	 * the NVML name, spaces as '-' (gf_catalog_gfd_product) */
	const char *gfd_product;
	/* other names of this model (NULL-terminated): trace names
	 * ("V100M32") and ids other tables use ("h100-80gb", the MIG
	 * catalog's); each names one model only */
	const char *aliases[GF_GPU_MAX_ALIASES];
};

/* Number of entries, and the entry at i (0 <= i < count). */
int gf_catalog_count(void);
const struct gf_gpu_model *gf_catalog_at(int i);
/* Lookups; NULL when unknown. */
const struct gf_gpu_model *gf_catalog_by_id(const char *id);
const struct gf_gpu_model *gf_catalog_by_pci(uint16_t vendor, uint16_t device);
/* By NVML's product name (exact, case-insensitive). */
const struct gf_gpu_model *gf_catalog_by_name(const char *name);
/*
 * GFD's product rule: the NVML name with every ' ' as '-' ("NVIDIA H100
 * 80GB HBM3" gives "NVIDIA-H100-80GB-HBM3").  0, or GF_ETOOBIG when out
 * (size bytes) is too small.
 */
int gf_catalog_gfd_product(const char *nvml, char *out, size_t size);
/*
 * The model any of its names names: its id, an alias, its NVML name or
 * its GFD product, compared without case and with ' ', '_' and '-' as
 * one; NULL when none does.
 */
const struct gf_gpu_model *gf_catalog_lookup(const char *name);
/* Do a and b name the same model: equal (case aside), or both naming
 * one catalog entry ("V100M32" and "Tesla-V100-SXM2-32GB")? */
bool gf_catalog_same(const char *a, const char *b);
const char *gf_gpu_arch_name(enum gf_gpu_arch arch);

#endif
