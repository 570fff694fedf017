/*
 * apply.h - make this machine's GPUs match a mig-parted config, through
 * NVML (the driver, or GPUFLEET_NVML_LIBRARY's stand-in).
 */
#ifndef GF_MIG_APPLY_H
#define GF_MIG_APPLY_H

#include <stdbool.h>

#include <gpufleet/err.h>

#include "../util/buf.h"
#include "migparted.h"

/*
 * For every GPU the config selects: enable MIG where needed, destroy idle
 * GPU instances not in the plan (compute instances first), create the
 * missing ones largest first with explicit placements (and a full compute
 * instance each), then read the state back and check it.  A busy
 * instance is never moved or destroyed: a config that cannot be reached
 * around one is an error for that GPU.  dry_run: the calls that would
 * change the GPU are logged, not made.  Progress and calls go to log.
 */
int gf_mig_apply(const struct gf_mp_config *cfg, bool dry_run,
		 struct gf_buf *log, struct gf_err *e);

#endif
