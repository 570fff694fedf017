/*
 * mask.h - internal to src/core/jobs (mask.c): labels and node selectors,
 * cached node masks.
 */
#ifndef GF_CORE_JOBS_MASK_H
#define GF_CORE_JOBS_MASK_H

#include "core/jobs/ctl_impl.h"

int gf__labels_check(const char *s, char *why, unsigned size);
/* Does the selector match labels, on a node whose GPU model is model
 * (NULL: none)?  Values of GF_GFD_PRODUCT_LABEL compare as models
 * (gf_catalog_same), and a node without that label has its model as
 * its value: "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3" selects a
 * node of model h100-sxm. */
bool gf__labels_match(const char *labels, const char *model,
		      const char *selector);
/* gf__labels_match on node i's labels and model. */
bool gf__node_matches(const struct gf_ctl *ctl, int i, const char *selector);
/* The job's selector as a node mask (borrowed), NULL for every node. */
const uint8_t *gf__mask(struct gf_ctl *ctl, struct gf__jrec *j);
void gf__masks_free(struct gf_ctl *ctl);
/* Node i's labels are new (or it is): every cached mask follows. */
void gf__masks_node(struct gf_ctl *ctl, int i);
/* The per-node arrays grew from old to nodes.cap entries. */
void gf__masks_grow(struct gf_ctl *ctl, int old);

#endif
