/*
 * apply.h - make this machine's GPUs match a mig-parted config, through
 * NVML (the driver, or GPUFLEET_NVML_LIBRARY's stand-in).
 */
#ifndef GF_MIG_APPLY_H
#define GF_MIG_APPLY_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/mig_plan.h>

#include "mig/migparted.h"
#include "util/buf.h"

/*
 * For every GPU the config selects: enable MIG where needed, destroy idle
 * GPU instances not in the target (compute instances first), create the
 * missing ones largest first with explicit placements (and a full compute
 * instance each), then read the state back and check it.  The target is
 * exactly the config's instances, with every busy instance where it is
 * and the most idle ones kept in place: any config that fits the model
 * applies to an idle GPU.  A busy instance is never moved or destroyed:
 * a config that cannot be reached around one is an error for that GPU
 * (the message names the busy instance).  dry_run: the calls that would
 * change the GPU are logged, not made.  Progress and calls go to log
 * (and, at debug level, each NVML call with its result to gf_log).
 * Errors: e->msg is "FILE:LINE: config 'NAME': GPU N: why", LINE the
 * entry's; the first of several failed GPUs and their count.
 */
int gf_mig_apply(const struct gf_mp_config *cfg, bool dry_run,
		 struct gf_buf *log, struct gf_err *e) GF_MUST_CHECK;

/*
 * Make GPU `index` (NVML's index; a GPU of model m, in MIG mode) hold
 * exactly `layout`: the same profiles at the same starts (busy flags
 * ignored).  Refused, with no call that changes the GPU, when the layout
 * breaks m's rules or the GPU is not a m (GF_EINVAL), when MIG mode is
 * off or any GPU instance there is busy (GF_ECONFLICT: a process may have
 * started since the layout was chosen; destroying an instance kills its
 * work), or when there is no such GPU (GF_ENOTFOUND).  Otherwise the
 * instances the layout lacks are destroyed (compute instances first),
 * the missing ones created largest first with explicit placements and a
 * full compute instance each, and the GPU is read back and compared;
 * instances already in place are kept.  dry_run: the calls that would
 * change the GPU are logged, not made.  Progress and calls go to log.
 * Errors read "GPU N: why".  Opens and closes NVML itself.
 */
int gf_mig_apply_gpu(unsigned index, const struct gf_mig_model *m,
		     const struct gf_mig_layout *layout, bool dry_run,
		     struct gf_buf *log, struct gf_err *e) GF_MUST_CHECK;

/*
 * The same without NVML, always a dry run: GPU i is gpus[i] (its model;
 * its current layout when mig_on[i], else MIG off and empty; mig_on may
 * be NULL: all off).  Selection by device-filter uses the model's first
 * PCI id; profile ids are our table's.  Logs the calls gf_mig_apply's dry
 * run would list.
 */
int gf_mig_apply_offline(const struct gf_mp_config *cfg,
			 const struct gf_mig_gpu *gpus, const bool *mig_on,
			 int ngpus, struct gf_buf *log,
			 struct gf_err *e) GF_MUST_CHECK;

/*
 * The layout entry `en` asks of GPU `index` of model m that holds cur:
 * exactly its instances (none when mig-enabled is false), every busy
 * instance of cur in place, the most idle ones kept (gf_mig_reach).
 * 0, or GF_EINVAL with "GPU N: why" (a profile the model lacks, instances
 * that do not fit, the busy instance in the way).
 */
int gf_mig_apply_target(const struct gf_mig_model *m, unsigned index,
			const struct gf_mp_entry *en,
			const struct gf_mig_layout *cur,
			struct gf_mig_layout *want,
			struct gf_err *e) GF_MUST_CHECK;

#endif
