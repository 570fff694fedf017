/*
 * node.h - the node model: one machine's CPUs, NUMA nodes, PCI tree, GPUs,
 * NICs and the links between them.
 *
 * A node is filled by an adapter (hwloc live or XML, a built-in template),
 * then gf_node_finish() sorts devices into their canonical order (GPUs by
 * PCI bus id, as NVML numbers them; NICs by name, as nvidia-smi does) and
 * computes each device's locality.  After that the node is read-only and
 * may be shared between threads.
 *
 * The PCI tree is kept in an abstract form (host bridges, bridges,
 * devices) so the link classifier in link.h is pure and testable on
 * hand-built trees.
 *
 * Lifecycle: gf_node_init() on caller storage, gf_node_release() frees.
 * Limits (each exceeded is GF_ETOOBIG at load, never a truncation):
 * GF_MAX_GPUS, GF_MAX_NICS, GF_MAX_NUMA, GF_MAX_PCI, GF_BITMAP_BITS CPUs.
 */
#ifndef GPUFLEET_NODE_H
#define GPUFLEET_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/bitmap.h>
#include <gpufleet/catalog.h>
#include <gpufleet/err.h>

#define GF_MAX_GPUS  64
#define GF_MAX_NICS  64
#define GF_MAX_NUMA  64
#define GF_MAX_LOCS  256
#define GF_MAX_PCI   8192
#define GF_MAX_NOTES 16

enum gf_pci_kind {
	GF_PCI_HOSTBRIDGE = 0, /* root of a PCI hierarchy; has a locality */
	GF_PCI_BRIDGE,	       /* PCI-PCI bridge: root or switch port */
	GF_PCI_DEVICE,	       /* an endpoint function */
};

struct gf_pci_obj {
	int parent; /* index into node->pci; -1 for host bridges */
	int loc;    /* host bridges: index into node->locs */
	enum gf_pci_kind kind;
	uint16_t domain;
	uint8_t bus, dev, func;
	uint16_t vendor_id, device_id, class_id;
};

/* Where a host bridge attaches on the CPU side (Package, Group, Machine). */
struct gf_locality {
	struct gf_bitmap cpus;
	struct gf_bitmap mems; /* NUMA node os indexes */
	bool known;	       /* false when the firmware gave no locality */
};

struct gf_numa {
	int os_index;
	struct gf_bitmap cpus;
	uint64_t memory_bytes;
};

enum gf_gpu_vendor { GF_VENDOR_NVIDIA = 0, GF_VENDOR_AMD };

struct gf_gpu {
	int pci;	 /* index into node->pci */
	char bus_id[16]; /* "0000:18:00.0" */
	enum gf_gpu_vendor vendor;
	const struct gf_gpu_model *model; /* NULL when not in the catalog */
	char name[96];			  /* NVML's name, else the catalog's */
	char uuid[96];			  /* "" when unknown */
	char osdev[32];	     /* hwloc OS device name, e.g. "cuda0" */
	uint64_t memory_mib; /* 0 when unknown */
	int mig_mode;	     /* -1 unknown, 0 disabled, 1 enabled */
	int mig_pending;     /* -1 unknown */
	int numa_id;	     /* GPU memory as NUMA node; -1 = N/A */
	int minor;	     /* N of its /dev/nvidiaN (NVML), if has_minor */
	bool has_minor;
	/* Set by gf_node_finish(): */
	struct gf_bitmap cpus;
	struct gf_bitmap mems;
	bool locality_known;
};

struct gf_nic {
	int pci;
	char bus_id[16];
	char name[32];	 /* RDMA device (mlx5_0) or netdev when not RDMA */
	char netdev[32]; /* "" when none */
	bool rdma;
	struct gf_bitmap cpus;
	struct gf_bitmap mems;
	bool locality_known;
};

struct gf_node {
	char hostname[64];
	char source[256];      /* "live", an XML path, "template:NAME" */
	bool this_system;      /* binding applies to this machine */
	bool nvml_used;	       /* NVML answered for this node */
	struct gf_bitmap cpus; /* all PUs */
	/* PU os index -> its core's logical index (hwloc's Core L#: cores
	 * numbered package by package, which is Slurm's abstract core id),
	 * -1 when no such PU */
	int16_t pu_core[GF_BITMAP_BITS];
	/* PU os index -> its package's (socket's) logical index, -1 when
	 * the source does not say (an NCCL topology file) */
	int16_t pu_package[GF_BITMAP_BITS];
	struct gf_numa numa[GF_MAX_NUMA];
	int nnuma;
	struct gf_locality *locs;
	int nlocs;
	struct gf_pci_obj *pci;
	int npci;
	struct gf_gpu gpus[GF_MAX_GPUS];
	int ngpus;
	struct gf_nic nics[GF_MAX_NICS];
	int nnics;
	/* NVLink: direct links between GPU pairs, and links into NVSwitches. */
	uint8_t nvlinks[GF_MAX_GPUS][GF_MAX_GPUS];
	uint8_t nvswitch_links[GF_MAX_GPUS];
	bool nvlink_known;	       /* some source told us about NVLink */
	char notes[GF_MAX_NOTES][160]; /* adapter remarks for the user */
	int nnotes;
};

void gf_node_init(struct gf_node *n);
void gf_node_release(struct gf_node *n);
/* Heap variants (the struct is ~100 KiB): caller frees with gf_node_free. */
struct gf_node *gf_node_new(void);
void gf_node_free(struct gf_node *n);
/* Index of the GPU / NIC on PCI object i, or -1. */
int gf_node_gpu_by_pci(const struct gf_node *n, int pci);
int gf_node_gpu_by_busid(const struct gf_node *n, const char *bus_id);

/* Append; return the new index, or GF_ETOOBIG. */
int gf_node_add_loc(struct gf_node *n,
		    const struct gf_locality *loc) GF_MUST_CHECK;
int gf_node_add_pci(struct gf_node *n,
		    const struct gf_pci_obj *obj) GF_MUST_CHECK;
int gf_node_add_numa(struct gf_node *n,
		     const struct gf_numa *numa) GF_MUST_CHECK;
int gf_node_add_gpu(struct gf_node *n, const struct gf_gpu *gpu) GF_MUST_CHECK;
int gf_node_add_nic(struct gf_node *n, const struct gf_nic *nic) GF_MUST_CHECK;
void gf_node_note(struct gf_node *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Sort GPUs and NICs into canonical order and fill their locality.
 * Call once after the adapter added PCI objects, GPUs and NICs, and
 * before it fills nvlinks[] or joins NVML data (both use final indexes).
 */
void gf_node_finish(struct gf_node *n);

/* Index of the host bridge above PCI object i. */
int gf_node_pci_root(const struct gf_node *n, int i);

/* NVLink count nvidia-smi would print between GPUs a and b (0 = none). */
int gf_node_nvlinks(const struct gf_node *n, int a, int b);

/* Format a PCI bus id "dddd:bb:dd.f" into out (>= 13 bytes). */
void gf_pci_format_busid(const struct gf_pci_obj *o, char *out, unsigned size);

/* Parse "dddd:bb:dd.f", "bb:dd.f" or NVML's "00000000:BB:DD.F". */
int gf_pci_parse_busid(const char *s, uint16_t *domain, uint8_t *bus,
		       uint8_t *dev, uint8_t *func) GF_MUST_CHECK;

/*
 * Consistency check (SQLite-style): returns 0, or GF_EINVAL with a message
 * naming the first broken invariant.  Run by tests and debug builds.
 */
int gf_node_check(const struct gf_node *n, char *msg,
		  unsigned size) GF_MUST_CHECK;

#endif
