/*
 * ctl_helpers.h - what the scheduling core's tests share (test_ctl.c,
 * test_ctl_life.c, test_ctl_nodes.c): the core checked (gf_ctl_check)
 * and a pass run and checked, a job looked up by id, its state and its
 * reason, a job copied as a restarted controller reads it back.
 */
#ifndef GF_TEST_CTL_HELPERS_H
#define GF_TEST_CTL_HELPERS_H

#include <gpufleet/ctl.h>
#include <gpufleet/job.h>

#include "helpers.h"
#include "util/mem.h"

static inline void check(const struct gf_ctl *ctl)
{
	char msg[256];
	int rc = gf_ctl_check(ctl, msg, sizeof(msg));
	if (rc)
		print_message("gf_ctl_check: %s\n", msg);
	assert_int_equal(rc, 0);
}

static inline void pass(struct gf_ctl *ctl, int64_t now,
			struct gf_ctl_changes *ch)
{
	if (ch)
		ch->n = 0;
	assert_int_equal(gf_ctl_schedule(ctl, now, ch), 0);
	check(ctl);
}

static inline const struct gf_job *J(const struct gf_ctl *ctl, const char *id)
{
	const struct gf_job *j = gf_ctl_job(ctl, id);
	assert_non_null(j);
	return j;
}

static inline enum gf_job_state st(const struct gf_ctl *ctl, const char *id)
{
	return J(ctl, id)->state;
}

static inline const char *why(const struct gf_ctl *ctl, const char *id)
{
	return J(ctl, id)->reason;
}

/* A copy of j for another core (a restart): its spec and placement its
 * own.  j must hold no completing replica: that list is shared, not
 * copied. */
static inline struct gf_job *job_clone(const struct gf_job *j)
{
	struct gf_job *k = gf_calloc(1, sizeof(*k));
	*k = *j;
	gf_job_spec_copy(&k->spec, &j->spec);
	if (j->place) {
		k->place =
			gf_calloc((size_t)j->spec.replicas, sizeof(*k->place));
		memcpy(k->place, j->place,
		       (size_t)j->spec.replicas * sizeof(*k->place));
	}
	return k;
}
#endif
