/*
 * arrays.c - job arrays in the core (jobflow.h): each array is kept as
 * its tasks' jrec indexes, found through its first task (the array's id:
 * jrec.arr of every task is the array's slot), its %max and its tasks
 * running now, counted as they start and stop (jobs_state.c), and the
 * parser of an array's "0-31:2%4".
 *
 * Invariants: an array's running equals its tasks RUNNING (gf_ctl_check
 * through gf__arrays_check); its first task is the job its id names; a
 * task's arr is -1 iff its spec names no array.
 */
#include "core/jobs/arrays.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/jobflow.h>

#include "core/jobs/ctl_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

void gf__array_add(struct gf_ctl *ctl, int jid)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	const struct gf_job_spec *s = &j->job->spec;
	j->arr = -1;
	if (!s->array_id[0])
		return;
	int first = gf__job_find(&ctl->jobs, s->array_id);
	if (first >= 0 && first != jid && ctl->jobs.jr[first].arr >= 0) {
		j->arr = ctl->jobs.jr[first].arr;
		gf__ids_push(&ctl->arrays.a[j->arr].tasks, jid);
		return;
	}
	struct gf__arrays *as = &ctl->arrays;
	if (as->n == as->cap) {
		as->cap = as->cap ? 2 * as->cap : 16;
		as->a = gf_reallocarray(as->a, (size_t)as->cap, sizeof(*as->a));
	}
	struct gf__arr *a = &as->a[as->n];
	memset(a, 0, sizeof(*a));
	a->max = s->array_max > 0 ? s->array_max : 0;
	gf__ids_push(&a->tasks, jid);
	j->arr = as->n++;
}

void gf__array_run(struct gf_ctl *ctl, int jid, int sign)
{
	int arr = ctl->jobs.jr[jid].arr;
	if (arr >= 0)
		ctl->arrays.a[arr].running += sign;
}

bool gf__array_throttled(const struct gf_ctl *ctl, int jid, char *why,
			 size_t size)
{
	int arr = ctl->jobs.jr[jid].arr;
	if (arr < 0)
		return false;
	const struct gf__arr *a = &ctl->arrays.a[arr];
	if (a->max <= 0 || a->running < a->max)
		return false;
	gf_note(why, size, "array throttle (%%%d)", a->max);
	return true;
}

int gf__arrays_check(const struct gf_ctl *ctl, char *msg, unsigned size)
{
	for (int k = 0; k < ctl->arrays.n; k++) {
		const struct gf__arr *a = &ctl->arrays.a[k];
		int running = 0;
		for (int t = 0; t < a->tasks.n; t++)
			running += ctl->jobs.jr[a->tasks.v[t]].job->state ==
				   GF_JOB_RUNNING;
		if (running != a->running) {
			gf_note(msg, size,
				"array %s: %d tasks running, counted %d",
				ctl->jobs.jr[a->tasks.v[0]].job->id, running,
				a->running);
			return -1;
		}
	}
	return 0;
}

void gf__arrays_free(struct gf__arrays *as)
{
	for (int k = 0; k < as->n; k++)
		gf_free(as->a[k].tasks.v);
	gf_free(as->a);
	as->n = as->cap = 0;
}

/* The array whose id is array_id, or NULL. */
static const struct gf__arr *array_of(const struct gf_ctl *ctl,
				      const char *array_id)
{
	int jid = gf__job_find(&ctl->jobs, array_id);
	if (jid < 0 || ctl->jobs.jr[jid].arr < 0)
		return NULL;
	const struct gf__arr *a = &ctl->arrays.a[ctl->jobs.jr[jid].arr];
	return a->tasks.v[0] == jid ? a : NULL;
}

int gf_ctl_array_ntasks(const struct gf_ctl *ctl, const char *array_id)
{
	const struct gf__arr *a = array_of(ctl, array_id);
	return a ? a->tasks.n : 0;
}

const struct gf_job *gf_ctl_array_task(const struct gf_ctl *ctl,
				       const char *array_id, int i)
{
	const struct gf__arr *a = array_of(ctl, array_id);
	if (a == NULL || i < 0 || i >= a->tasks.n)
		return NULL;
	return ctl->jobs.jr[a->tasks.v[i]].job;
}

/* ---- "0-31:2%4" ---- */

/* A whole number 0..GF_ARRAY_INDEX_MAX at *p (moved past it): 0 or -1. */
static int num(const char **p, int *out)
{
	if (**p < '0' || **p > '9')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(*p, &end, 10);
	if (errno || v > GF_ARRAY_INDEX_MAX)
		return -1;
	*p = end;
	*out = (int)v;
	return 0;
}

/* Index i taken once; false when seen before. */
static bool take(uint8_t *seen, int i)
{
	uint8_t bit = (uint8_t)(1u << (i & 7));
	if (seen[i >> 3] & bit)
		return false;
	seen[i >> 3] |= bit;
	return true;
}

/* One item "N", "N-M" or "N-M:S" at *p into out. */
static int item(const char **p, struct gf_array_spec *out, uint8_t *seen,
		struct gf_err *e)
{
	int lo, hi, step = 1;
	if (num(p, &lo))
		return gf_err_set(
			e, GF_EINVAL,
			"'array': expected an index 0 to %d at '%.20s'",
			GF_ARRAY_INDEX_MAX, *p);
	hi = lo;
	if (**p == '-') {
		(*p)++;
		if (num(p, &hi) || hi < lo)
			return gf_err_set(e, GF_EINVAL,
					  "'array': range %d-...: expected an "
					  "end %d to %d",
					  lo, lo, GF_ARRAY_INDEX_MAX);
		if (**p == ':') {
			(*p)++;
			if (num(p, &step) || step < 1)
				return gf_err_set(
					e, GF_EINVAL,
					"'array': range %d-%d: "
					"expected a step of 1 or more",
					lo, hi);
		}
	}
	for (int i = lo; i <= hi; i += step) {
		if (out->n == GF_ARRAY_TASKS_MAX)
			return gf_err_set(e, GF_ETOOBIG,
					  "'array': more than %d tasks",
					  GF_ARRAY_TASKS_MAX);
		if (!take(seen, i))
			return gf_err_set(e, GF_EINVAL,
					  "'array': index %d given twice", i);
		out->idx[out->n++] = i;
	}
	return 0;
}

int gf_array_parse(const char *s, struct gf_array_spec *out, struct gf_err *e)
{
	memset(out, 0, sizeof(*out));
	if (s == NULL || !s[0])
		return gf_err_set(e, GF_EINVAL,
				  "'array': expected indexes such as 0-31, "
				  "0-31:2%%4 or 1,3,5-7");
	if (strlen(s) >= GF_ARRAY_SPEC_MAX)
		return gf_err_set(e, GF_EINVAL,
				  "'array': longer than %d characters",
				  GF_ARRAY_SPEC_MAX - 1);
	uint8_t *seen = gf_calloc(GF_ARRAY_INDEX_MAX / 8 + 1, 1);
	const char *p = s;
	int rc = 0;
	while (rc == 0) {
		rc = item(&p, out, seen, e);
		if (rc || *p != ',')
			break;
		p++;
	}
	if (rc == 0 && *p == '%') {
		p++;
		if (num(&p, &out->max) || out->max < 1)
			rc = gf_err_set(e, GF_EINVAL,
					"'array': %%max: expected 1 to %d",
					GF_ARRAY_INDEX_MAX);
	}
	if (rc == 0 && *p)
		rc = gf_err_set(e, GF_EINVAL,
				"'array': unexpected '%.20s' (expected indexes "
				"such as 0-31, 0-31:2%%4 or 1,3,5-7)",
				p);
	gf_free(seen);
	if (rc)
		out->n = 0;
	return rc;
}
