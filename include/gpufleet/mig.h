/*
 * mig.h - Multi-Instance GPU: per-model GPU-instance profiles, layout
 * validation and enumeration (reference/mig-and-metrics.md, section 1).
 *
 * A layout is a set of GPU instances, each a profile at a start slot;
 * starts and sizes count memory slices (8 on A100/H100/H200/B200, 4 on
 * A30), as NVML's nvmlGpuInstancePlacement_t does.  Rules: each profile
 * has allowed starts and a maximum count; instances may not overlap;
 * at most one instance of each "+me" profile.  Pure and thread-safe;
 * every pointer returned is to static data.
 */
#ifndef GPUFLEET_MIG_H
#define GPUFLEET_MIG_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>

enum gf_mig_class {
	GF_MIG_1G = 0, /* 1 compute, 1 memory slice */
	GF_MIG_1G2X,   /* 1 compute, 2 memory slices (1g.20gb on H100) */
	GF_MIG_2G,
	GF_MIG_3G,
	GF_MIG_4G,
	GF_MIG_7G,
	GF_MIG_NCLASSES
};

struct gf_mig_profile {
	const char *name; /* "3g.40gb", "1g.10gb+me" */
	enum gf_mig_class cls;
	bool me;	    /* media-extension variant: at most one */
	uint8_t nvml_enum;  /* NVML_GPU_INSTANCE_PROFILE_* */
	uint8_t profile_id; /* what nvidia-smi prints; NVML's info.id */
	uint8_t compute;    /* SM slices */
	uint8_t mem;	    /* memory slices = placement size */
	uint8_t starts;	    /* bit s: may start at memory slice s */
	uint8_t max;	    /* instances per GPU */
	uint16_t sms;
	float mem_gib;
};

#define GF_MIG_MAX_PROFILES  8
#define GF_MIG_MAX_PCI_IDS   8
#define GF_MIG_MAX_INSTANCES 8

struct gf_mig_model {
	const char *id;			      /* "h100-80gb" */
	const char *name;		      /* "H100 80GB (SXM5, PCIe)" */
	uint16_t pci_ids[GF_MIG_MAX_PCI_IDS]; /* NVIDIA device ids, 0-ended */
	uint8_t slices;			      /* memory slices: 8 or 4 */
	uint8_t compute;		      /* SM slices: 7 or 4 */
	bool uncertain; /* parts of the table inferred, not seen */
	int nprofiles;
	struct gf_mig_profile profiles[GF_MIG_MAX_PROFILES];
};

/* The tables: count, i-th, by id (or alias: h100-sxm, gh200...), by PCI
 * device id, by the GPU catalog's model id.  NULL when unknown. */
int gf_mig_model_count(void);
const struct gf_mig_model *gf_mig_model_at(int i);
const struct gf_mig_model *gf_mig_model_by_id(const char *id);
const struct gf_mig_model *gf_mig_model_by_pci(uint16_t device_id);

/* Index of a profile name in m (exact), or -1. */
int gf_mig_profile_find(const struct gf_mig_model *m, const char *name);

/* Does `name` have the form of a MIG profile ("<G>g.<N>gb[+attr]",
 * "<C>c.<G>g.<N>gb[...]"), whatever the model? */
bool gf_mig_profile_name_ok(const char *name);

/*
 * The planner's unit of demand for a profile name: its memory slices on
 * the model that defines it, which is the model where it takes the
 * fewest (every name but one takes the same number on every model that
 * has it; 1g.10gb is the one-slice profile of the 80 GB models and the
 * two-slice 1g of A100 40GB, and counts 1).  The unit depends on the name
 * only, never on where an instance lands.  0 when no model has it.
 */
int gf_mig_profile_units(const char *name);

/*
 * GPUs NVIDIA's mig-parted configs name that our tables lack (their
 * placements are not known here): their profile names, so a config can
 * still be checked by name.  Sources: the GPU Operator's ConfigMap and
 * mig-parted's default config (reference/mig-parted), grouped by their
 * comments and device filters.
 */
struct gf_mig_untabled {
	const char *name;		      /* "GB200 HGX" */
	uint16_t pci_ids[GF_MIG_MAX_PCI_IDS]; /* 0-ended; may be empty */
	const char *const *profiles;	      /* NULL-ended */
};

int gf_mig_untabled_count(void);
const struct gf_mig_untabled *gf_mig_untabled_at(int i);
const struct gf_mig_untabled *gf_mig_untabled_by_pci(uint16_t device_id);
bool gf_mig_untabled_has(const struct gf_mig_untabled *u, const char *name);

struct gf_mig_instance {
	uint8_t profile; /* index into the model's profiles */
	uint8_t start;	 /* first memory slice */
	bool busy;	 /* has running work: never moved or destroyed */
};

struct gf_mig_layout {
	int n;
	struct gf_mig_instance inst[GF_MIG_MAX_INSTANCES];
};

/*
 * Check a layout against the model's rules.  Returns 0 or GF_EINVAL with
 * msg naming the first broken rule ("3g.40gb cannot start at slice 2").
 */
int gf_mig_layout_check(const struct gf_mig_model *m,
			const struct gf_mig_layout *l, char *msg,
			unsigned size) GF_MUST_CHECK;

/* Whether the n instances at inst hold one of in's profile at in's
 * start (a layout's, a plan's create or fill list). */
bool gf_mig_inst_in(const struct gf_mig_instance *inst, int n,
		    const struct gf_mig_instance *in);

/* Does layout l hold an instance of in's profile at in's start? */
bool gf_mig_layout_holds(const struct gf_mig_layout *l,
			 const struct gf_mig_instance *in);

/* Memory slices used by the layout (bit s = slice s used). */
unsigned gf_mig_layout_used(const struct gf_mig_model *m,
			    const struct gf_mig_layout *l);

/*
 * Place a multiset (counts[i] instances of profile i) on an empty GPU, or
 * around the instances already in *l (kept where they are): fills *l and
 * returns 0, or GF_ENOTFOUND when it does not fit.  Deterministic: large
 * instances first, each at its lowest free allowed start, backtracking.
 */
int gf_mig_place(const struct gf_mig_model *m, const int *counts,
		 struct gf_mig_layout *l) GF_MUST_CHECK;

/* Enumerate every valid non-empty positional layout of m; calls fn for
 * each (stop early by returning non-zero).  Returns the number visited. */
long gf_mig_enumerate(const struct gf_mig_model *m,
		      int (*fn)(const struct gf_mig_layout *l, void *arg),
		      void *arg);

/* Order l's instances for creation: largest first, then by start. */
void gf_mig_creation_order(const struct gf_mig_model *m,
			   struct gf_mig_layout *l);

/*
 * The layout that holds exactly counts[i] instances of each profile i,
 * keeps every busy instance of cur where it is, and keeps the most idle
 * instances of cur where they are (ties: the first in enumeration
 * order).  Fills *out in creation order and returns 0; GF_ENOTFOUND when
 * the multiset does not fit on an empty GPU of m; GF_EINVAL when it does
 * but not around cur's busy instances (*busy_out, when not NULL, is then
 * a busy instance in the way: one not in counts, or else the first).
 */
int gf_mig_reach(const struct gf_mig_model *m, const struct gf_mig_layout *cur,
		 const int *counts, struct gf_mig_layout *out,
		 struct gf_mig_instance *busy_out) GF_MUST_CHECK;

#endif
