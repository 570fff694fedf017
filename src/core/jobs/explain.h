/*
 * explain.h - internal to src/core/jobs (explain.c): why a job waits.
 * gf__explain sets its reason: the resource short on the node that comes
 * closest, or that every node it may use is not ready or drained.
 * gf__room_somewhere: could it start now, no reservation held (a gang:
 * room for all its replicas, blocks not told apart)?
 */
#ifndef GF_CORE_JOBS_EXPLAIN_H
#define GF_CORE_JOBS_EXPLAIN_H

#include "core/jobs/ctl_impl.h"

void gf__explain(struct gf_ctl *ctl, struct gf__jrec *j,
		 const struct gf_req *r);
bool gf__room_somewhere(struct gf_ctl *ctl, struct gf__jrec *j,
			const struct gf_req *r);

#endif
