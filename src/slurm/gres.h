/*
 * gres.h - a node model in Slurm's terms: gres.conf lines for its GPUs and
 * the slurm.conf NodeName line, and the mapping between OS CPU ids and
 * Slurm's abstract core ids that Cores= and S_STEP_ALLOC_CORES use.
 *
 * Slurm's abstract core id of a core is its rank when cores are numbered
 * socket by socket, in hwloc's logical order (Slurm's xcpuinfo.c builds
 * its block map that way; gres.conf(5): "Core 0 will be the first core on
 * the first socket, while core 1 will be the second core on the first
 * socket ... This numbering coincides with the logical core number (Core
 * L#) seen in lstopo -l").  The node model keeps exactly that number per
 * PU (gf_node.pu_core), so the mapping is a lookup, never the OS ids.
 *
 * Links= follow gres.conf(5) and what AutoDetect=nvml computes
 * (src/plugins/gpu/nvml/gpu_nvml.c, _nvml_get_nvlink_info): one entry per
 * GPU in PCI bus order, -1 for the GPU itself, else the count of NVLinks
 * whose far end is that GPU; links into NVSwitches end at no GPU and
 * count 0 there, so they count 0 here too.
 *
 * Pure: reads a finished node, writes into a bounded buffer.
 */
#ifndef GF_SLURM_GRES_H
#define GF_SLURM_GRES_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/bitmap.h>
#include <gpufleet/err.h>
#include <gpufleet/node.h>

#include "util/buf.h"

struct gf_slurm_gres_opts {
	const char *nodename; /* NULL: the node's host name */
	const char *type;     /* NULL: from each GPU's model name */
	const char *dev_dir;  /* NULL: "/dev" */
	bool autodetect_nvml; /* AutoDetect=nvml (Slurm cross-checks the
				 lines) instead of AutoDetect=off */
	bool comments;	      /* say where each value comes from */
};

/*
 * The gres.conf lines for n's GPUs: one line per GPU (Links= allows one
 * File per line), in PCI bus order (Slurm's device index).  GF_EINVAL
 * when the node name is empty or has blanks, GF_ETOOBIG from the buffer.
 */
int gf_slurm_gres_conf(const struct gf_node *n,
		       const struct gf_slurm_gres_opts *o, struct gf_buf *out,
		       struct gf_err *e) GF_MUST_CHECK;

/*
 * The slurm.conf line, as `slurmd -C` prints its first part: NodeName,
 * CPUs, Boards, SocketsPerBoard, CoresPerSocket, ThreadsPerCore,
 * RealMemory (the NUMA nodes' memory in MiB, omitted when unknown), then
 * Gres=gpu:TYPE:N per type.  A node whose packages hold different core
 * counts (or cores different thread counts) gets CPUs= alone and a
 * comment line saying why, as Slurm could not describe it either.
 */
int gf_slurm_node_line(const struct gf_node *n,
		       const struct gf_slurm_gres_opts *o, struct gf_buf *out,
		       struct gf_err *e) GF_MUST_CHECK;

/* Slurm's abstract core ids of the cores holding any PU of cpus. */
void gf_slurm_abstract_cores(const struct gf_node *n,
			     const struct gf_bitmap *cpus,
			     struct gf_bitmap *cores);

/* The OS CPU ids (every PU) of a set of abstract core ids. */
void gf_slurm_core_cpus(const struct gf_node *n, const struct gf_bitmap *cores,
			struct gf_bitmap *cpus);

/* True when the node knows each PU's core (hwloc sources, templates). */
bool gf_slurm_cores_known(const struct gf_node *n);

/*
 * The gres Type of GPU g: the first token of its model name (lowercase,
 * blanks as '_' like Slurm's own) that holds a digit ("h100", "a100",
 * "l40s", "mi250x"), else the whole name; "" when the GPU has no name.
 * Always a substring of what AutoDetect=nvml names it, which is what
 * Slurm's cross-check requires.
 */
void gf_slurm_type_name(const struct gf_node *n, int g, char *out, size_t size);

#endif
