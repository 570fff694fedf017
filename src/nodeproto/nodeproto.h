/*
 * nodeproto.h - what a node agent and the controller say to each other
 * (docs/cluster.md has the protocol and why it is shaped so): the
 * messages as C structs, each read from JSON and written to JSON here,
 * so that both ends use one definition.
 *
 *   PUT  /v1/nodes/{name}              the node's inventory (and, like a
 *                                      heartbeat, its running jobs and
 *                                      reports): answered with a struct
 *                                      gf_np_ack
 *   POST /v1/nodes/{name}/heartbeat    a struct gf_np_heartbeat, answered
 *                                      with a struct gf_np_ack
 *   GET  /v1/nodes/{name}/assignments?wait=30s&after=G
 *                                      a long poll: answered when the
 *                                      node's generation passes G (or at
 *                                      the wait) with a struct
 *                                      gf_np_assignments: every replica
 *                                      the node should run now
 *
 * The controller always sends the whole desired state of a node (level,
 * not edge): an agent that missed an answer, restarted, or talks to a
 * restarted controller converges on the next one.  Reports of ended runs
 * are resent with every heartbeat until acknowledged, and acknowledged
 * only once committed to the store, so a result is never lost.
 *
 * Reading is strict about what it reads (types, ranges, sizes; the error
 * names the field: "gpus[2].uuid: expected a string") and ignores keys it
 * does not know, so a newer agent can talk to an older controller.
 * Pure: no I/O.
 */
#ifndef GF_NODEPROTO_NODEPROTO_H
#define GF_NODEPROTO_NODEPROTO_H

/* The label naming the block (NVLink domain, IB leaf) an agent node is
 * in, when its inventory names none (agent --block sets the field). */
#define GF_NP_BLOCK_LABEL "gpufleet.io/block"
/* A run's log (agent/worker.h): its marker lines begin with this, and
 * end with GF_NP_LOG_MARK_END; the controller's logs route knows a run's
 * end by its end marker ("... on NODE ended ..."). */
#define GF_NP_LOG_MARK	   "==> gpufleet:"
#define GF_NP_LOG_MARK_END "<=="

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/cluster.h>
#include <gpufleet/ctl.h>
#include <gpufleet/err.h>
#include <gpufleet/gpu_topo.h>
#include <gpufleet/job.h>

#include "util/json.h"

#define GF_NP_UUID_MAX	     96	 /* "GPU-..." or "MIG-...", with NUL */
#define GF_NP_ADDR_MAX	     256 /* a host name or address, with NUL */
#define GF_NP_URL_MAX	     256
#define GF_NP_REASON_MAX     128	/* a GPU's health reason */
#define GF_NP_MAX_RUNNING    4096	/* replicas one node runs at once */
#define GF_NP_MAX_REPORTS    4096	/* reports in one message */
#define GF_NP_BODY_MAX	     (1u << 20) /* bytes of a PUT or heartbeat */
#define GF_NP_MAX_WAIT_S     60		/* a long poll waits at most */
#define GF_NP_DEFAULT_WAIT_S 30
#define GF_NP_POD_UID_MAX    37 /* a pod UID (36: 8-4-4-4-12), with NUL */
#define GF_NP_PODS_PER_GPU   8	/* pods reported on one GPU or instance */
#define GF_NP_MAX_GPU_PODS   (GF_CNODE_MAX_GPUS + GF_CTL_MAX_MIG)

/* A GPU of the node. */
struct gf_np_gpu {
	int index;		   /* NVML's, 0.. */
	char uuid[GF_NP_UUID_MAX]; /* "GPU-...", "" unknown (no NVML) */
	char name[96];		   /* "NVIDIA H100 80GB HBM3" */
	int64_t memory_mib;
	bool mig_mode; /* MIG enabled now */
	bool healthy;
	char reason[GF_NP_REASON_MAX]; /* why not healthy */
};

/* A MIG instance of the node. */
struct gf_np_mig {
	int gpu;
	char profile[GF_MIG_PROFILE_MAX];
	int start;
	char uuid[GF_NP_UUID_MAX]; /* "MIG-...", for CUDA_VISIBLE_DEVICES */
};

/* What a node is (PUT /v1/nodes/{name}). */
struct gf_np_inventory {
	char address[GF_NP_ADDR_MAX];	/* how other nodes reach it ("" : its
					   name); a gang's MASTER_ADDR */
	char agent_url[GF_NP_URL_MAX];	/* its agent's metrics, "" none */
	char version[32];		/* the agent's gpufleet version */
	char labels[GF_CTL_LABELS_MAX]; /* "k=v,k=v" (JSON: an object) */
	char block[GF_NODE_NAME_MAX];	/* "" : the label gpufleet.io/block,
					   else the controller decides */
	int32_t cpu_milli;
	int64_t memory_mib;
	char gpu_model[GF_MODEL_NAME_MAX]; /* catalog id ("h100-sxm") */
	char mig_model[GF_MODEL_NAME_MAX]; /* MIG table id, "" none */
	/* The GPUs and MIG instances, each array as long as what was read
	 * (owned; NULL when none): a controller keeps one inventory per
	 * agent, and fixed arrays of the most a node may have were 13 KiB
	 * of it.  gf_np_inventory_room() makes room to fill one by hand. */
	int ngpus;
	struct gf_np_gpu *gpus; /* [ngpus] */
	int nmig;
	struct gf_np_mig *mig; /* [nmig] */
	bool has_topo;
	struct gf_gpu_topo topo; /* "gpu_topo": pair and nic qualities */
	/* "topology": the node as `topo --json` prints it, kept as text
	 * (borrowed from the parsed document; NULL when absent) */
};

/* A replica the node runs (or was told to). */
struct gf_np_ref {
	char job[GF_JOB_ID_MAX];
	int attempt; /* 1.. */
	int replica; /* 0.. */
};

/* A run that ended on the node: struct gf_job_run without the node
 * (the controller knows who sent it), under the job's id. */
struct gf_np_report {
	struct gf_np_ref ref;
	struct gf_job_run run; /* seq and node filled by the controller */
};

/* The pods whose processes run on one GPU (or MIG instance), by UUID,
 * as the agent maps each process to its pod through /proc/PID/cgroup
 * (Slurm jobs and bare processes are left out). */
struct gf_np_gpu_pods {
	char uuid[GF_NP_UUID_MAX]; /* "GPU-..." or "MIG-..." */
	int npods;
	char pods[GF_NP_PODS_PER_GPU][GF_NP_POD_UID_MAX];
};

/* A heartbeat (POST .../heartbeat), and the heartbeat part of a PUT. */
struct gf_np_heartbeat {
	uint64_t generation; /* the assignments the agent has acted on */
	int nhealth;	     /* GPUs whose health is reported (0: none) */
	struct gf_np_health {
		int index;
		bool healthy;
		char reason[GF_NP_REASON_MAX];
	} health[GF_CNODE_MAX_GPUS];
	int nrunning;
	struct gf_np_ref *running; /* owned; up to GF_NP_MAX_RUNNING */
	int nreports;
	struct gf_np_report *reports; /* owned; up to GF_NP_MAX_REPORTS */
	int ngpu_pods; /* "gpu_pods": GPUs with a pod's process (0: none, or
			  an agent that does not say) */
	struct gf_np_gpu_pods *gpu_pods; /* owned; up to GF_NP_MAX_GPU_PODS */
};

/* The controller's answer to a PUT or a heartbeat. */
struct gf_np_ack {
	char state[16];		/* "ready" */
	uint64_t generation;	/* the node's assignments now */
	int64_t heartbeat_ms;	/* how often to call */
	int64_t fence_after_ms; /* stop every job when no heartbeat got an
				   answer for this long (the controller
				   requeues them after requeue_after) */
	int nacked;
	struct gf_np_ref *acked; /* owned: reports committed, forget them */
};

/* One replica for the node to run. */
struct gf_np_assignment {
	struct gf_np_ref ref;
	char name[GF_JOB_NAME_MAX];
	char team[GF_TEAM_NAME_MAX];
	char *command; /* owned; NULL none */
	/* --output / --error paths with their tokens (job.h); owned, NULL:
	 * the node's own log */
	char *output, *error;
	/*
	 * Where it runs on the node: the core's placement of the replica,
	 * one value from the core to the worker.  Its node and node_name
	 * are not sent (read back as -1 and "").  gpu_milli is the core's
	 * (1000 for whole GPUs, a share) but for a MIG instance, its
	 * fraction of its GPU (where the core keeps 0); mig_start is -1
	 * unless mig.
	 */
	struct gf_job_place place;
	char uuids[GF_CNODE_MAX_GPUS][GF_NP_UUID_MAX]; /* "" unknown */
	bool mig;
	char mig_profile[GF_MIG_PROFILE_MAX];
	char mig_uuid[GF_NP_UUID_MAX];
	int32_t cpu_milli;
	int64_t memory_mib;
	int64_t max_runtime_s; /* 0 none */
	/* a gang (world_size > 1): torchrun's variables */
	int world_size, rank, local_rank, local_world_size;
	char master_addr[GF_NP_ADDR_MAX];
	int master_port;
	/* an array's task (issue 21): its array's id, its index; "" none */
	char array_job[GF_JOB_ID_MAX];
	int array_task;
	/* issue 21: who it runs as, where, with what on top (the job's
	 * spec); refuse_root when the controller's config does not say
	 * allow_root (absent: false, as before) */
	char *env; /* owned: {"NAME": "VALUE"} as compact JSON; NULL none */
	char workdir[GF_JOB_WORKDIR_MAX]; /* "" the user's home */
	char user[GF_JOB_USER_MAX];	  /* "" the node's default user */
	bool refuse_root;
};

/* Whether a variable is one the node's worker sets itself (the GPUs,
 * the gang, an array task's SLURM_ARRAY_*, GPUFLEET_*, PWD): a job's
 * "env" may not name it. */
bool gf_np_env_reserved(const char *name);

/* A MIG layout the controller wants on one of the node's GPUs (its
 * agent applies it when no instance of that GPU is in use, before it
 * starts the replicas placed on the new instances). */
struct gf_np_mig_layout {
	int gpu;
	int n;
	struct gf_np_mig_inst {
		char profile[GF_MIG_PROFILE_MAX];
		int start;
	} inst[8];
};

/* Every replica a node should run now. */
struct gf_np_assignments {
	uint64_t generation;
	int n;
	struct gf_np_assignment *v; /* owned */
	int nlayouts;
	struct gf_np_mig_layout layouts[GF_CNODE_MAX_GPUS];
};

/* Room for ngpus GPUs and nmig MIG instances (zeroed; the counts are the
 * caller's to set as it fills them), in place of any inv held. */
void gf_np_inventory_room(struct gf_np_inventory *inv, int ngpus, int nmig);
/* Its arrays freed, their counts 0 (the rest kept); inv zeroed or read
 * before.  _free: that and inv itself (from gf_calloc), NULL a no-op. */
void gf_np_inventory_release(struct gf_np_inventory *inv);
void gf_np_inventory_free(struct gf_np_inventory *inv);

/* --- reading: 0, or GF_EINVAL / GF_ETOOBIG with e naming the field --- */

/* A PUT body's inventory members (its heartbeat members are read by
 * gf_np_heartbeat_read on the same object; "topology" is not read: the
 * controller keeps the body as it came).  inv holds no arrays before
 * (zeroed or released); after, it holds them (release it) but on an
 * error, where they are freed. */
int gf_np_inventory_read(const struct gf_jv *v, struct gf_np_inventory *inv,
			 struct gf_err *e) GF_MUST_CHECK;
int gf_np_heartbeat_read(const struct gf_jv *v, struct gf_np_heartbeat *hb,
			 struct gf_err *e) GF_MUST_CHECK;
void gf_np_heartbeat_release(struct gf_np_heartbeat *hb);
int gf_np_ack_read(const struct gf_jv *v, struct gf_np_ack *a,
		   struct gf_err *e) GF_MUST_CHECK;
void gf_np_ack_release(struct gf_np_ack *a);
int gf_np_assignments_read(const struct gf_jv *v, struct gf_np_assignments *a,
			   struct gf_err *e) GF_MUST_CHECK;
void gf_np_assignments_release(struct gf_np_assignments *a);

/* --- writing, inside an object the caller opened (the members only), so
 * a PUT writes the inventory's and the heartbeat's into one object --- */

/* topology: `topo --json`'s document, or NULL. */
void gf_np_inventory_write(struct gf_json *j, const struct gf_np_inventory *inv,
			   const char *topology, size_t topology_len);
void gf_np_heartbeat_write(struct gf_json *j, const struct gf_np_heartbeat *hb);
void gf_np_ack_write(struct gf_json *j, const struct gf_np_ack *a);
/* The "mig_layouts" member: n layouts. */
void gf_np_mig_layouts_write(struct gf_json *j,
			     const struct gf_np_mig_layout *l, int n);
/* One assignment: an object inside the caller's "assignments" array. */
void gf_np_assignment_write(struct gf_json *j,
			    const struct gf_np_assignment *a);

/* The node spec the core takes from an inventory (labels and block as
 * given; the controller may override the block from its config). */
void gf_np_inventory_spec(const struct gf_np_inventory *inv,
			  struct gf_ctl_node_spec *spec);

#endif
