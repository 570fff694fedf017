/*
 * workload.h - a list of placement requests with their names (the
 * simulator orders them by name, as the FGD experiment does), the
 * spec strings as written, and request classes for score caches.
 *
 * Lifecycle: gf_workload_init(), gf_workload_release().
 */
#ifndef GPUFLEET_WORKLOAD_H
#define GPUFLEET_WORKLOAD_H

#include <gpufleet/cluster.h>
#include <gpufleet/err.h>

#define GF_REQ_NAME_MAX 48
#define GF_SPEC_MAX	1024
#define GF_SPEC_STR_MAX 160
#define GF_MAX_REQUESTS 2000000

struct gf_workload {
	struct gf_req *reqs;
	char (*names)[GF_REQ_NAME_MAX];
	int n;
	int cap;
	char (*specs)[GF_SPEC_STR_MAX]; /* spec_key -> text; 0 is "" */
	int nspecs;
	int nclasses; /* set by gf_workload_classify() */
};

void gf_workload_init(struct gf_workload *w);
void gf_workload_release(struct gf_workload *w);
/* Append (copies r; r->cls is assigned later).  GF_ETOOBIG past caps. */
int gf_workload_add(struct gf_workload *w, const char *name,
		    const struct gf_req *r) GF_MUST_CHECK;
/* Id of a spec string as written (adding it); GF_ETOOBIG past caps. */
int gf_workload_spec_key(struct gf_workload *w, const char *spec) GF_MUST_CHECK;
/* Order requests by name (strcmp), stable. */
void gf_workload_sort_by_name(struct gf_workload *w);
/* Give equal (cpu, GPU share, GPU count, models) requests one class id. */
void gf_workload_classify(struct gf_workload *w);

#endif
