/*
 * source.h - where a node's topology comes from: the live machine (hwloc,
 * joined with NVML), a recorded hwloc XML, an NCCL topology file, or a
 * built-in template.  Every
 * command and service that needs a node builds it here, so they all see
 * the same node for the same source.
 */
#ifndef GF_TOPO_SOURCE_H
#define GF_TOPO_SOURCE_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/node.h>

struct gf_node_source {
	const char *xml;	   /* a recorded hwloc XML file, or NULL */
	const char *nccl_xml;	   /* an NCCL topology file, or NULL */
	const char *template_name; /* a built-in template, or NULL */
	bool this_system;	   /* the XML is a recording of this machine */
	int nvml; /* join NVML: -1 on the live machine only, 0 never, 1 always
		   */
	/* a CPU node (the agent without NVML): the live machine's CPUs and
	 * memory, its GPUs left out, none no error; NVML never joined */
	bool cpu_only;
};

/*
 * Build the node s describes.  NVML problems never fail the load: they
 * become notes on the node (gf_node_note).  Returns 0 with *out set
 * (caller frees with gf_node_free), or a negative code with e set and
 * *out NULL: GF_ENOGPU when the source has no GPU (a machine without one
 * is normal), -errno / GF_ETOPO / GF_EPARSE for an unreadable or
 * malformed file, GF_ENOTFOUND for an unknown template, GF_EINVAL when
 * more than one of xml, nccl_xml and template is given; GF_ENOTTHIS when
 * xml is said to be this machine's (this_system) and is not: its CPUs,
 * NUMA nodes, GPUs' PCI bus ids (NVML's when NVML is joined, else
 * sysfs's) or host name differ from this machine's (topo/this_system.h;
 * e->msg names each difference).
 */
int gf_node_source_load(const struct gf_node_source *s, struct gf_node **out,
			struct gf_err *e) GF_MUST_CHECK;

/*
 * GPUs of n (loaded from s) that run compute processes now, by NVML; an
 * empty set for sources NVML does not describe.  0 or GF_ENVML/GF_ENOTFOUND
 * with e set (busy then holds what could be seen).
 */
int gf_node_source_busy_gpus(const struct gf_node_source *s,
			     const struct gf_node *n, struct gf_bitmap *busy,
			     struct gf_err *e) GF_MUST_CHECK;

/* "this machine", the file, or "template NAME": for messages. */
const char *gf_node_source_name(const struct gf_node_source *s, char *buf,
				unsigned size);

/* A GPU of PCI index pci as the loaders start it: MIG and NUMA unknown
 * (-1), its vendor, its model, name and memory from the catalog when
 * device (0: unknown) is in it.  Whether it is. */
bool gf__topo_gpu_init(struct gf_gpu *g, int pci, unsigned long vendor,
		       unsigned long device);

#endif
