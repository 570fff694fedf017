/*
 * state.h - what this machine's GPUs hold in MIG terms, read through NVML
 * (the driver, or GPUFLEET_NVML_LIBRARY's stand-in): per GPU its index,
 * UUID, model (our MIG table's, by PCI device id), MIG mode now and
 * pending, and per GPU instance its profile, placement, id, whether a
 * process runs on it, and the UUID of its MIG device ("MIG-...", what
 * CUDA_VISIBLE_DEVICES takes to run a job on that instance).
 *
 * The node agent reports it; mig apply reads each GPU it changes through
 * the same calls (gf_mig_state_read_gpu) and reads it back afterwards.
 * Instances are read per profile of our table: an instance of a profile
 * the table lacks is not seen.  Not thread-safe: calls through NVML are
 * serialised by the caller (topo/nvml.h).
 */
#ifndef GF_MIG_STATE_H
#define GF_MIG_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/mig.h>

#include "topo/nvml.h"

/* Caps: GPUs of one machine (a larger count is an error, never a partial
 * answer), the MIG devices looked at per GPU (NVML's maximum, cut to
 * this), and a UUID with its NUL (NVML's buffer size). */
#define GF_MIG_STATE_MAX_GPUS	     64
#define GF_MIG_STATE_MAX_MIG_DEVICES 64
#define GF_MIG_UUID_SIZE	     NVML_DEVICE_UUID_BUFFER_SIZE

struct gf_mig_gi_state {
	struct gf_mig_instance inst; /* profile index, start, busy */
	const char *profile;	     /* the model's name: "1g.10gb" (static) */
	unsigned id;		     /* NVML's GPU instance id */
	/* its MIG devices (one per compute instance: gpufleet's apply and
	 * mig-parted make one); 0 until a compute instance exists */
	int nmig;
	/* the first MIG device's UUID, "MIG-..."; "" when it has none */
	char uuid[GF_MIG_UUID_SIZE];
	/* NVML's handle, for apply; valid while NVML stays open and the
	 * instance exists (never after gf_mig_state_read returns) */
	nvmlGpuInstance_t handle;
};

struct gf_mig_gpu_state {
	unsigned index; /* NVML's index */
	char uuid[GF_MIG_UUID_SIZE];
	char busid[32];	 /* "00000000:18:00.0" */
	uint16_t devid;	 /* PCI device id (0 when NVML would not say) */
	uint32_t subsys; /* PCI subsystem id, 0x16C010DE (0: unknown) */
	/* our MIG model for devid; NULL: a GPU without MIG or one our table
	 * lacks (nothing below it is read then) */
	const struct gf_mig_model *model;
	bool mig_supported;	/* NVML answered the MIG mode */
	unsigned mode, pending; /* NVML_DEVICE_MIG_ENABLE / _DISABLE */
	/* NVML's GPU-instance profile ids, per profile of the model; UINT_MAX
	 * when the driver does not offer it.  NVML gives them only while MIG
	 * is on: until then our table's ids stand in. */
	unsigned profile_id[GF_MIG_MAX_PROFILES];
	int n; /* GPU instances (only while MIG is on) */
	struct gf_mig_gi_state gi[GF_MIG_MAX_INSTANCES];
	/* why the GPU or its instances could not be read ("" when they
	 * were): gf_mig_state_read keeps reading the other GPUs */
	char error[256];
	nvmlDevice_t dev; /* as handle above */
};

struct gf_mig_node_state {
	int ngpus;
	struct gf_mig_gpu_state *gpus; /* ngpus entries */
};

/*
 * Every GPU of the machine into *s (s->gpus allocated; release with
 * gf_mig_state_release, also after an error).  A GPU that cannot be read
 * (no handle: NVML lost it) or whose instances cannot (a layout our
 * table rejects, more instances than a GPU holds) has its error set and
 * no instances; the others are read.  Returns 0; GF_ENOTFOUND / GF_ENVML
 * when NVML is absent or fails to start (gf_nvml_open's message) or
 * cannot count the GPUs; GF_ETOOBIG for more than GF_MIG_STATE_MAX_GPUS.
 */
int gf_mig_state_read(struct gf_mig_node_state *s,
		      struct gf_err *e) GF_MUST_CHECK;
void gf_mig_state_release(struct gf_mig_node_state *s);

/*
 * GPU `index` into *g with NVML open: handle, PCI id, UUID, model, MIG
 * mode and, while MIG is on, the GPU instances.  Returns 0; GF_ENVML when
 * NVML gives no handle for it (g->dev NULL then); GF_EINVAL when the
 * instances cannot be read.  e->msg (e may be NULL) is "GPU N: why", also
 * in g->error; what else was read stays.
 */
int gf_mig_state_read_gpu(const struct gf_nvml *nv, unsigned index,
			  struct gf_mig_gpu_state *g,
			  struct gf_err *e) GF_MUST_CHECK;

/*
 * Read again the MIG mode and instances of a GPU read before (after
 * apply changed it).  Returns as gf_mig_state_read_gpu.
 */
int gf_mig_state_refresh(const struct gf_nvml *nv, struct gf_mig_gpu_state *g,
			 struct gf_err *e) GF_MUST_CHECK;

/* The GPU's instances as a layout (busy flags set); empty without MIG. */
void gf_mig_state_layout(const struct gf_mig_gpu_state *g,
			 struct gf_mig_layout *l);

/* Is any GPU instance of g busy? */
bool gf_mig_state_is_busy(const struct gf_mig_gpu_state *g);

#endif
