/*
 * req.h - what a placement asks for and what it got: the request the
 * placement engine (sched.h) takes and the placement it returns.  Kept
 * apart from the cluster model so the controller, the simulator and the
 * Kubernetes/Slurm adapters can speak of requests without the engine.
 */
#ifndef GPUFLEET_REQ_H
#define GPUFLEET_REQ_H

#include <stdint.h>

#define GF_CNODE_MAX_GPUS 16
#define GF_GPU_MILLI	  1000

enum gf_req_flags {
	/* one replica of a multi-node job: its GPUs want a NIC close by */
	GF_REQ_MULTINODE = 1 << 0,
};

/* A placement request (a pod, a replica of a job). */
struct gf_req {
	int32_t cpu; /* milli */
	int64_t mem; /* MiB */
	uint16_t ngpus;
	int16_t gpu_milli; /* per GPU: < 1000 only when ngpus == 1 */
	uint32_t spec;	   /* allowed models (bit = model id); 0 = any */
	uint16_t spec_key; /* id of the spec as written (typical-pod key) */
	uint16_t cls;	   /* request class, for score caches; < nclasses */
	uint8_t flags;	   /* enum gf_req_flags */
};

/* Where a request went: the node, its GPUs (indexes within the node). */
struct gf_placement {
	int node;
	int ngpus;
	int gpus[GF_CNODE_MAX_GPUS];
	int score;
};

#endif
