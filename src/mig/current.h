/*
 * current.h - the "current MIG layout" file: what each GPU holds now, for
 * `mig plan --current` and `mig apply --dry-run --current` without NVML.
 *
 *   # comment
 *   INDEX: PROFILE@START[*] ...      (a '*' marks a busy instance)
 *   0: 3g.40gb@4 1g.10gb@0*
 *
 * INDEX counts the GPUs given beside it (--gpus); each line replaces that
 * GPU's layout and must obey the model's placement rules.
 */
#ifndef GF_MIG_CURRENT_H
#define GF_MIG_CURRENT_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/mig_plan.h>

/* Lines longer than this are an error, never split. */
#define GF_MIG_CURRENT_LINE_MAX 1024

/*
 * Read path into g[0..n) (their models set by the caller).  listed[i],
 * when listed is not NULL, is set for each GPU the file names.  Returns 0,
 * or a negative code with e->msg naming file:line and the cause: -errno /
 * GF_EINVAL / GF_ETOOBIG for the file itself, GF_EPARSE for a bad line,
 * GF_EINVAL for a layout that breaks the rules.
 */
int gf_mig_current_read(const char *path, struct gf_mig_gpu *g, int n,
			bool *listed, struct gf_err *e) GF_MUST_CHECK;

#endif
