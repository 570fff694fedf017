/*
 * scale_impl.h - what the scale room's files share and nobody else
 * needs.
 */
#ifndef GF_CORE_SCALE_IMPL_H
#define GF_CORE_SCALE_IMPL_H

#include <gpufleet/scale.h>

/* The last sync moved cur to another count than the one now decided
 * (desired): make the scale event it stored say cur -> desired, or drop
 * it when desired is cur. */
void gf__hpa_amend(struct gf_hpa *h, int32_t cur, int32_t desired);

#endif
