/*
 * depend.c - dependencies between jobs (jobflow.h), Slurm's afterok,
 * afterany and afternotok: the parser of "afterok:j1:j2,afterany:j3",
 * each pending job's parents found when it is added (parents are always
 * older: a submit names known jobs only, and a restart adds jobs in
 * submission order), and their judgement before each pass.
 *
 * A parent that is an array's id stands for all its tasks: afterok is met
 * when every task succeeded and impossible as soon as one did not;
 * afterany is met when every task ended; afternotok when every task
 * ended and one did not succeed (impossible when all succeeded).
 *
 * Invariants: waiting holds the PENDING jobs whose dependencies are not
 * met, each once, in submission order; a job leaves it for good (met, or
 * cancelled); nothing here starts a job.
 */
#include "core/jobs/depend.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobs/arrays.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_state.h"
#include "util/fmt.h"
#include "util/mem.h"

static const char *const kind_names[] = {
	[GF_DEP_AFTEROK] = "afterok",
	[GF_DEP_AFTERANY] = "afterany",
	[GF_DEP_AFTERNOTOK] = "afternotok",
};

const char *gf_dep_kind_name(enum gf_dep_kind k)
{
	return (int)k >= 0 && k <= GF_DEP_AFTERNOTOK ? kind_names[k] : "?";
}

/* "j12" or "12" of len bytes into out ("j12"): 0 or -1. */
static int dep_id(const char *s, size_t len, char out[GF_JOB_ID_MAX])
{
	if (len > 0 && s[0] == 'j') {
		s++;
		len--;
	}
	if (len == 0 || len > 19)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v == 0)
		return -1;
	return gf_fmt(out, GF_JOB_ID_MAX, "j%" PRIu64, v) ? -1 : 0;
}

/* One "KIND:ID[:ID...]" of len bytes into out[*n..]. */
static int dep_item(const char *s, size_t len, struct gf_dep *out, int *n,
		    struct gf_err *e)
{
	const char *colon = memchr(s, ':', len);
	size_t klen = colon ? (size_t)(colon - s) : len;
	int kind = -1;
	for (int k = 0; k <= GF_DEP_AFTERNOTOK; k++)
		if (strlen(kind_names[k]) == klen &&
		    !memcmp(kind_names[k], s, klen))
			kind = k;
	if (kind < 0)
		return gf_err_set(e, GF_EINVAL,
				  "'dependency': unknown kind '%.*s' "
				  "(known: afterok, afterany, afternotok)",
				  (int)(klen > 20 ? 20 : klen), s);
	if (colon == NULL)
		return gf_err_set(e, GF_EINVAL,
				  "'dependency': %s: expected %s:ID[:ID...]",
				  kind_names[kind], kind_names[kind]);
	const char *p = colon + 1, *end = s + len;
	while (p <= end) {
		const char *q = memchr(p, ':', (size_t)(end - p));
		size_t ilen = (size_t)((q ? q : end) - p);
		if (*n == GF_DEP_IDS_MAX)
			return gf_err_set(e, GF_EINVAL,
					  "'dependency': more than %d jobs",
					  GF_DEP_IDS_MAX);
		if (dep_id(p, ilen, out[*n].id))
			return gf_err_set(e, GF_EINVAL,
					  "'dependency': '%.*s' is no job id "
					  "(expected j12 or 12)",
					  (int)(ilen > 24 ? 24 : ilen), p);
		out[(*n)++].kind = (enum gf_dep_kind)kind;
		if (q == NULL)
			break;
		p = q + 1;
	}
	return 0;
}

/* out[0..n) as "afterok:j1:j2,afterany:j3": 0, or -1 when it would not
 * fit (ids written "12" take a byte more as "j12"). */
static int dep_text(const struct gf_dep *v, int n, char norm[GF_JOB_DEP_MAX])
{
	size_t at = 0;
	norm[0] = '\0';
	for (int i = 0; i < n; i++) {
		int rc;
		if (i > 0 && v[i].kind == v[i - 1].kind)
			rc = gf_fmt(norm + at, GF_JOB_DEP_MAX - at, ":%s",
				    v[i].id);
		else
			rc = gf_fmt(norm + at, GF_JOB_DEP_MAX - at, "%s%s:%s",
				    i ? "," : "", kind_names[v[i].kind],
				    v[i].id);
		if (rc != 0)
			return -1;
		at += strlen(norm + at);
	}
	return 0;
}

int gf_dep_parse(const char *s, struct gf_dep *out, int *n,
		 char norm[GF_JOB_DEP_MAX], struct gf_err *e)
{
	*n = 0;
	if (s == NULL || !s[0])
		return gf_err_set(e, GF_EINVAL,
				  "'dependency': expected KIND:ID[:ID...], "
				  "KIND afterok, afterany or afternotok");
	if (strlen(s) >= GF_JOB_DEP_MAX)
		return gf_err_set(e, GF_EINVAL,
				  "'dependency': longer than %d characters",
				  GF_JOB_DEP_MAX - 1);
	for (const char *p = s;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		int rc = dep_item(p, len, out, n, e);
		if (rc) {
			*n = 0;
			return rc;
		}
		if (c == NULL)
			break;
		p = c + 1;
	}
	if (norm && dep_text(out, *n, norm) != 0) {
		*n = 0;
		return gf_err_set(e, GF_EINVAL,
				  "'dependency': longer than %d characters "
				  "with its ids written j12",
				  GF_JOB_DEP_MAX - 1);
	}
	return 0;
}

int gf_ctl_deps_check(const struct gf_ctl *ctl, const char *dependency,
		      struct gf_err *e)
{
	struct gf_dep v[GF_DEP_IDS_MAX];
	int n, rc;
	if (dependency == NULL || !dependency[0])
		return 0;
	if ((rc = gf_dep_parse(dependency, v, &n, NULL, e)))
		return rc;
	for (int i = 0; i < n; i++)
		if (gf__job_find(&ctl->jobs, v[i].id) < 0)
			return gf_err_set(e, GF_EINVAL,
					  "'dependency': no job %s", v[i].id);
	return 0;
}

void gf__dep_add(struct gf_ctl *ctl, int jid)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	j->dep = -1;
	if (!j->job->spec.dependency[0] || j->job->state != GF_JOB_PENDING)
		return;
	struct gf__deps *ds = &ctl->deps;
	if (ds->n == ds->cap) {
		ds->cap = ds->cap ? 2 * ds->cap : 16;
		ds->d = gf_reallocarray(ds->d, (size_t)ds->cap, sizeof(*ds->d));
	}
	struct gf__dep *d = &ds->d[ds->n];
	memset(d, 0, sizeof(*d));
	struct gf_err e;
	d->bad = gf_dep_parse(j->job->spec.dependency, d->v, &d->n, NULL, &e) !=
		 0;
	for (int i = 0; i < d->n; i++)
		d->target[i] = gf__job_find(&ctl->jobs, d->v[i].id);
	j->dep = ds->n++;
	gf__ids_push(&ds->waiting, jid);
}

enum { WAIT, MET, NEVER };

/* Parent jrec p for kind k (an array's id: all its tasks): WAIT, MET or
 * NEVER, with the task to blame in *who. */
static int judge(const struct gf_ctl *ctl, enum gf_dep_kind k, int p, int *who)
{
	const struct gf__jrec *pj = &ctl->jobs.jr[p];
	const struct gf__arr *a = pj->arr >= 0 ? &ctl->arrays.a[pj->arr] : NULL;
	int n = a && a->tasks.v[0] == p ? a->tasks.n : 1;
	bool all_final = true, not_ok = false;
	*who = p;
	for (int t = 0; t < n; t++) {
		int x = n > 1 ? a->tasks.v[t] : p;
		enum gf_job_state st = ctl->jobs.jr[x].job->state;
		if (!gf_job_is_final(st)) {
			all_final = false;
			continue;
		}
		if (st == GF_JOB_SUCCEEDED)
			continue;
		if (k == GF_DEP_AFTEROK) {
			*who = x;
			return NEVER;
		}
		not_ok = true;
	}
	if (!all_final)
		return WAIT;
	if (k == GF_DEP_AFTERNOTOK)
		return not_ok ? MET : NEVER;
	return MET;
}

/* d judged: WAIT (d->unmet set), MET or NEVER (why says which). */
static int judge_all(const struct gf_ctl *ctl, struct gf__dep *d, char *why,
		     size_t size)
{
	if (d->bad) {
		gf_note(why, size, "dependency unreadable");
		return NEVER;
	}
	int verdict = MET;
	for (int i = d->n - 1; i >= 0; i--) {
		const struct gf_dep *x = &d->v[i];
		if (d->target[i] < 0) {
			gf_note(why, size, "dependency %s:%s: no such job",
				kind_names[x->kind], x->id);
			return NEVER;
		}
		int who, v = judge(ctl, x->kind, d->target[i], &who);
		if (v == NEVER) {
			const struct gf_job *w = ctl->jobs.jr[who].job;
			gf_note(why, size,
				"dependency %s:%s can never be met: %s %s",
				kind_names[x->kind], x->id, w->id,
				gf_job_state_name(w->state));
			return NEVER;
		}
		if (v == WAIT) {
			d->unmet = i;
			verdict = WAIT;
		}
	}
	return verdict;
}

void gf__deps_resolve(struct gf_ctl *ctl, struct gf__pass *ps)
{
	struct gf__ids *w = &ctl->deps.waiting;
	int kept = 0;
	for (int i = 0; i < w->n; i++) {
		int jid = w->v[i];
		struct gf__jrec *j = &ctl->jobs.jr[jid];
		if (j->job->state != GF_JOB_PENDING)
			continue; /* cancelled meanwhile */
		struct gf__dep *d = &ctl->deps.d[j->dep];
		char why[GF_JOB_REASON_MAX];
		int v = judge_all(ctl, d, why, sizeof(why));
		if (v == MET) {
			d->met = true;
			continue;
		}
		if (v == NEVER) {
			gf__to_final(ctl, jid, GF_JOB_CANCELLED, ps->now, why);
			gf__changed(&ctl->jobs, ps, jid);
			continue;
		}
		w->v[kept++] = jid;
	}
	w->n = kept;
}

bool gf__dep_waits(const struct gf_ctl *ctl, int jid, char *why, size_t size)
{
	int dep = ctl->jobs.jr[jid].dep;
	if (dep < 0 || ctl->deps.d[dep].met)
		return false;
	const struct gf__dep *d = &ctl->deps.d[dep];
	gf_note(why, size, "dependency %s", d->n ? d->v[d->unmet].id : "?");
	return true;
}

void gf__deps_free(struct gf__deps *ds)
{
	gf_free(ds->d);
	gf_free(ds->waiting.v);
	ds->n = ds->cap = 0;
}
