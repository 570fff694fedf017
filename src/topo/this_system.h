/*
 * this_system.h - is a recorded topology this machine's?  hwloc cannot
 * tell: told HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM it believes any XML.  So a
 * recording said to be this machine's (`--xml FILE --this-system`, the
 * agent, the SPANK plugin's topology=) is compared with what the machine
 * itself says, cheaply (no hwloc scan, no NVML unless already asked for):
 *
 *   CPUs        the recording's PUs against the kernel's online CPUs
 *               (/sys/devices/system/cpu/online): count and ids
 *   NUMA nodes  its NUMA nodes against /sys/devices/system/node/online
 *               (node 0 on a kernel without NUMA)
 *   GPUs        its GPUs' PCI bus ids against NVML's when NVML is joined,
 *               else the NVIDIA and AMD GPUs in /sys/bus/pci/devices
 *               (hwloc_load.c's rule)
 *   host name   the recording's HostName, where it has one, against this
 *               machine's (the part before the first '.')
 *
 * A recording must therefore be made on the node itself, outside any
 * cpuset restriction (lstopo-no-graphics --of xml, as root).
 */
#ifndef GF_TOPO_THIS_SYSTEM_H
#define GF_TOPO_THIS_SYSTEM_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/node.h>

#include "topo/nvml.h"

/* What this machine says about itself. */
struct gf_live {
	struct gf_bitmap cpus; /* online CPUs */
	struct gf_bitmap numa; /* online NUMA nodes */
	char hostname[256];
	char gpus[GF_MAX_GPUS][16]; /* PCI bus ids "0000:18:00.0", sorted */
	int ngpus;
	const char *gpus_from; /* "NVML" or "sysfs" */
};

/*
 * Read this machine into l: root NULL or "" is "/", else a directory
 * standing for it (tests: ROOT/sys/..., ROOT/proc/sys/kernel/hostname).
 * GPUs come from sysfs.  0, or an error naming the file that cannot be
 * read (the CPU list; NUMA and GPUs absent are empty, not errors).
 */
int gf_live_read(struct gf_live *l, const char *root,
		 struct gf_err *e) GF_MUST_CHECK;

/*
 * Replace l's GPUs with NVML's (an open table).  0, or GF_ENVML when NVML
 * cannot count its GPUs (l then keeps sysfs's).
 */
int gf_live_nvml_gpus(struct gf_live *l, const struct gf_nvml *nv,
		      struct gf_err *e) GF_MUST_CHECK;

/*
 * Whether finished node n, recorded in `what` (a file name, for the
 * message), is the machine l describes.  0, or GF_ENOTTHIS with e->msg
 * naming every difference: "'FILE' is not a recording of this machine:
 * CPUs 0-31 recorded, 0-1 here; ...".  Pure.
 */
int gf_this_system_check(const struct gf_node *n, const char *what,
			 const struct gf_live *l,
			 struct gf_err *e) GF_MUST_CHECK;

#endif
