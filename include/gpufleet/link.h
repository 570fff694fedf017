/*
 * link.h - how two devices of a node are connected, in nvidia-smi's
 * vocabulary (`nvidia-smi topo -m`): X, NV#, PIX, PXB, PHB, NODE, SYS.
 *
 * The PCIe classes come from the node's PCI tree, with the rules NVML
 * uses (reference/topology.md section 1.6 and 3.1):
 *   PIX   at most one PCIe bridge (switch) between the two
 *   PXB   several bridges, no host bridge
 *   PHB   through a PCIe host bridge (the CPU's root complex)
 *   NODE  between host bridges within one NUMA node
 *   SYS   across NUMA nodes (the SMP interconnect, QPI/UPI/xGMI)
 * NV# replaces the PCIe class between two GPUs joined by # NVLinks.
 * Pure functions over a finished node; thread-safe.
 */
#ifndef GPUFLEET_LINK_H
#define GPUFLEET_LINK_H

#include <gpufleet/node.h>

/* Ordered from best to worst; comparisons rely on the order. */
enum gf_link_class {
	GF_LINK_X = 0, /* the device itself */
	GF_LINK_NV,    /* NVLink, see nvlinks */
	GF_LINK_PIX,
	GF_LINK_PXB,
	GF_LINK_PHB,
	GF_LINK_NODE,
	GF_LINK_SYS,
};

struct gf_link {
	enum gf_link_class cls;
	int nvlinks; /* with GF_LINK_NV */
};

/* PCIe class between two PCI objects of the node. */
enum gf_link_class gf_link_pcie(const struct gf_node *n, int pci_a, int pci_b);

/*
 * Link between two devices, numbered as in the matrix: GPUs 0..ngpus-1,
 * then NICs ngpus..ngpus+nnics-1.  pcie_only ignores NVLink
 * (`nvidia-smi topo -mp`).
 */
struct gf_link gf_link_between(const struct gf_node *n, int dev_a, int dev_b,
			       bool pcie_only);

/* "PIX", "SYS", ...; "NV" for GF_LINK_NV (append the count yourself). */
const char *gf_link_class_name(enum gf_link_class c);

/* "NV12", " X ", "PIX": the cell text nvidia-smi prints, into out. */
void gf_link_format(struct gf_link l, char *out, unsigned size);

/* The best PCIe class from GPU g to any NIC; GF_LINK_SYS when no NIC. */
enum gf_link_class gf_link_gpu_best_nic(const struct gf_node *n, int g);

/*
 * The NICs nearest GPU g (all those at the best class), as NIC indexes
 * into out[0..max).  Returns the count (0 when the node has no NIC).
 */
int gf_link_gpu_nearest_nics(const struct gf_node *n, int g, int *out, int max);

#endif
