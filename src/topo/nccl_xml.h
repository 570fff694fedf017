/*
 * nccl_xml.h - a node from NCCL's own topology file (the NCCL_TOPO_FILE /
 * NCCL_TOPO_DUMP_FILE format: <system><cpu numaid affinity><pci busid
 * class vendor device><gpu><nvlink target count tclass/></gpu>, <nic><net
 * name gdr/></nic>).  Inside cloud VMs this file, written by the vendor,
 * is often the only true picture of which GPU sits beside which NIC.
 *
 * What the file gives, and how it maps (docs/topology.md has the table):
 *  - each <cpu> is a NUMA node with its CPU mask; its PCI children hang
 *    off one host bridge (NCCL's PATH_PHB: the file does not say which
 *    root complex a device uses, so two devices under one <cpu> are PHB,
 *    never NODE);
 *  - a nested <pci> with class 0x0604 is a PCIe switch (or a cloud
 *    provider's virtual one); a display or accelerator class, or a <gpu>
 *    child, is a GPU; a network class (0x02) or a <nic> child is a NIC;
 *  - <nvlink> with a GPU's class as tclass is a direct link counted as
 *    nvidia-smi does; any other tclass is an NVSwitch.
 * Most vendor files list no NVLink (NCCL reads it from NVML at run time):
 * join NVML on a live node to get it.
 */
#ifndef GF_TOPO_NCCL_XML_H
#define GF_TOPO_NCCL_XML_H

#include <stddef.h>

#include <gpufleet/err.h>
#include <gpufleet/node.h>

/* Files larger than this are refused (GF_ETOOBIG). */
#define GF_NCCL_XML_MAX (16u << 20)

/*
 * Load the file at path (or, when path is NULL, the document buf[0..len),
 * named `what` in messages) into n (initialised by the caller; finished by
 * this call).  Errors name the file, the line and the cause: -errno when
 * unreadable, GF_EPARSE for malformed XML or a bad attribute, GF_ETOOBIG
 * past a limit, GF_ENOGPU when the file lists no GPU.  On error n holds
 * nothing the caller must use.
 */
int gf_nccl_xml_load(struct gf_node *n, const char *path, const char *buf,
		     size_t len, const char *what,
		     struct gf_err *e) GF_MUST_CHECK;

#endif
