/*
 * gpu_topo.h - how the GPUs inside a node are connected, as the placement
 * engine needs it: a quality for every GPU pair and for every GPU's path
 * to an RDMA NIC, built from the node model (node.h: NVLink counts, PCIe
 * classes, NICs).  Nodes of one shape share one gf_gpu_topo, so a 10,000
 * node cluster holds a handful.
 *
 * It belongs to the node model (it reads links and nothing else); the
 * placement engine and the bind planner both use it.
 *
 * The choice of GPUs for a multi-GPU request (docs/placement.md states
 * the score): among the sets of k free GPUs, the one with
 *   1. the best weakest pair (every pair NVLink beats any set with a PCIe
 *      pair; among PCIe pairs PIX > PXB > PHB > NODE > SYS),
 *   2. for a multi-node request, the best weakest GPU-to-NIC path,
 *   3. the largest sum of pair qualities (the most NVLink, the fewest
 *      PCIe hops),
 *   4. and on a full tie, the set first in index order.
 * It reads the links only: renumbering the GPUs renumbers the answer.
 * Pure; thread-safe.
 */
#ifndef GPUFLEET_GPU_TOPO_H
#define GPUFLEET_GPU_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>

/* GPUs a gf_gpu_topo describes (a placement node holds as many). */
#define GF_GPU_TOPO_MAX 16

struct gf_node;

/* Qualities: higher is better.  PCIe classes 1 (SYS) .. 5 (PIX); NVLink
 * 16 + links, so one NVLink beats any PCIe path. */
enum {
	GF_GQ_NONE = 0,
	GF_GQ_SYS = 1,
	GF_GQ_NODE = 2,
	GF_GQ_PHB = 3,
	GF_GQ_PXB = 4,
	GF_GQ_PIX = 5,
	GF_GQ_NVLINK = 16,
};

struct gf_gpu_topo {
	uint8_t ngpus;
	uint8_t pair[GF_GPU_TOPO_MAX][GF_GPU_TOPO_MAX]; /* symmetric */
	uint8_t nic[GF_GPU_TOPO_MAX]; /* to the nearest RDMA NIC; 0 none */
	bool uniform; /* every pair and every NIC path alike: no choice */
};

/*
 * Build t from a finished node.  GF_ETOOBIG for more than
 * GF_GPU_TOPO_MAX GPUs.
 */
int gf_gpu_topo_from_node(const struct gf_node *n, struct gf_gpu_topo *t,
			  struct gf_err *e) GF_MUST_CHECK;

/*
 * Choose k GPUs among those set in free_mask (bit g = GPU g), by the
 * order above, into out[0..k) in increasing index.  multinode: rank NIC
 * paths second.  Returns 0, or GF_ENOTFOUND when fewer than k are free.
 */
int gf_gpu_topo_choose(const struct gf_gpu_topo *t, uint32_t free_mask, int k,
		       bool multinode, int *out) GF_MUST_CHECK;

/* The measures of a set (for explanations and tests). */
struct gf_gpu_set_score {
	int min_pair; /* weakest pair quality (GF_GQ_*), 0 for one GPU */
	int min_nic;  /* weakest NIC path */
	int sum_pair; /* sum over pairs */
};
void gf_gpu_topo_score(const struct gf_gpu_topo *t, const int *gpus, int k,
		       struct gf_gpu_set_score *out);

#endif
