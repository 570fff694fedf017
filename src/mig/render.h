/*
 * render.h - a MIG plan for people (a picture of each GPU's memory
 * slices), for scripts (JSON) and for NVIDIA's mig-parted (YAML).  Each
 * shows instances that the fill option added beyond the demand as such:
 * '+' in the text, a "fill" list per GPU and "filled" totals in JSON, a
 * comment in YAML.
 */
#ifndef GF_MIG_RENDER_H
#define GF_MIG_RENDER_H

#include <gpufleet/mig_plan.h>
#include <gpufleet/mig_propose.h>

#include "util/buf.h"

int gf_mig_render_text(const struct gf_mig_gpu *gpus,
		       const struct gf_mig_demand *d,
		       const struct gf_mig_plan *p,
		       struct gf_buf *out) GF_MUST_CHECK;
int gf_mig_render_json(const struct gf_mig_gpu *gpus,
		       const struct gf_mig_demand *d,
		       const struct gf_mig_plan *p,
		       struct gf_buf *out) GF_MUST_CHECK;
/* One mig-parted config named `name`; GPUs with the same instances share
 * an entry; unused GPUs get mig-enabled: false.  A plan made with fill
 * says so, and what it added, in a comment at the top. */
int gf_mig_render_yaml(const struct gf_mig_gpu *gpus,
		       const struct gf_mig_demand *d,
		       const struct gf_mig_plan *p, const char *name,
		       struct gf_buf *out) GF_MUST_CHECK;

/*
 * A proposal (gf_mig_propose) for the API and `--json`: "changes" (per
 * GPU: node, gpu, model, current, layout, destroy, create; instances as
 * in a plan), "demand" (per merged demand: model, null for any; profile,
 * count, met_before, met_after) and "totals".  names: the node names by
 * the proposal's node index ("node" is then the name), or NULL (the
 * index).  0, or the buffer's GF_ETOOBIG (sticky: never a cut document).
 */
int gf_mig_render_proposal_json(const struct gf_mig_proposal *p,
				const char *const *names,
				struct gf_buf *out) GF_MUST_CHECK;

#endif
