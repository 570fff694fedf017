/*
 * flow.h - internal to src/core/jobs (flow.c): whether a pending job may
 * be tried by the pass at all (its user's hold, its dependencies, its
 * array's %max), asked first for each job the pass visits.
 */
#ifndef GF_CORE_JOBS_FLOW_H
#define GF_CORE_JOBS_FLOW_H

#include <stdbool.h>

struct gf_ctl;

/* Is job jid kept from starting now (held, a dependency unmet, its
 * array's %max reached)?  true with its reason set: it waits and blocks
 * no one. */
bool gf__flow_gated(struct gf_ctl *ctl, int jid);

#endif
