/*
 * quota.c - typed quotas per team (ctl.h, struct gf_ctl_team), three
 * kinds counted apart:
 *   whole GPUs by model: an entry per model name, "*" for all models
 *       together; a team that lists any GPU entry may use a model only
 *       through its entry or through "*" (a model neither names is 0);
 *   MIG instances by profile: the same rules with profile names;
 *   shares (gpu_milli jobs) in milli-GPU summed: milli, -1 unlimited.
 * A kind with no entries is unlimited, and a team without has_quota (or
 * not in the config) has no limit at all.  A job charges its placements:
 * each replica's whole GPUs to the model of its node, so a gang that
 * lands on two models charges each its part.
 *
 * Before placement a whole-GPU job without a model may land on any model
 * the quota leaves room for all its GPUs on: gf__quota_room narrows the
 * request's model mask to those, so a placement never passes a limit.
 *
 * Invariants: a team's use is the sum of gf__use_of over its RUNNING
 * jobs' placements, and run_milli the sum of their jrec milli
 * (gf_ctl_check recomputes both).  Limits may be passed only by jobs
 * restored running (gf_ctl_add) after the config shrank.
 */
#include "core/jobs/quota.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/teams.h"
#include "util/fmt.h"

int gf__team_get(struct gf_ctl *ctl, const char *name)
{
	int t = gf__teams_find(&ctl->teams, name);
	if (t >= 0)
		return t;
	if (ctl->teams.n >= ctl->cfg.nteams + GF__MAX_OPEN_TEAMS)
		return GF_ETOOBIG;
	t = gf__teams_add(&ctl->teams, name);
	if (t >= 0)
		gf__team_limits(ctl, &ctl->teams.t[t], NULL);
	return t;
}

void gf__team_limits(struct gf_ctl *ctl, struct gf__team *t,
		     const struct gf_ctl_team *cfg)
{
	t->limited = cfg && cfg->has_quota;
	for (int m = 0; m < GF_MAX_MODELS; m++)
		t->gpu_lim[m] = -1;
	for (int p = 0; p < GF__MAX_PROFILES; p++)
		t->mig_lim[p] = -1;
	t->gpu_all_lim = t->mig_all_lim = t->milli_lim = -1;
	t->gpu_listed = t->mig_listed = false;
	if (!cfg || !t->limited)
		return;
	t->gpu_listed = cfg->ngpus > 0;
	for (int k = 0; k < cfg->ngpus; k++) {
		const struct gf_ctl_quota *q = &cfg->gpus[k];
		int m = strcmp(q->what, "*") == 0
				? -2
				: gf__model_resolve(ctl->c, q->what);
		if (m == -2)
			t->gpu_all_lim = q->limit;
		else if (m >= 0)
			t->gpu_lim[m] = q->limit;
	}
	t->mig_listed = cfg->nmig > 0;
	for (int k = 0; k < cfg->nmig; k++) {
		const struct gf_ctl_quota *q = &cfg->mig[k];
		int p = strcmp(q->what, "*") == 0 ? -2
						  : gf__prof_find(ctl, q->what);
		if (p == -2)
			t->mig_all_lim = q->limit;
		else if (p >= 0)
			t->mig_lim[p] = q->limit;
	}
	t->milli_lim = cfg->milli < 0 ? -1 : cfg->milli;
}

void gf__use_of(const struct gf_ctl *ctl, const struct gf__jrec *j,
		const struct gf_job_place *pl, struct gf__use *u, int sign)
{
	const struct gf_job_spec *s = &j->job->spec;
	for (int r = 0; r < s->replicas; r++) {
		if (s->gpus > 0) {
			int m = ctl->c->nodes[pl[r].node].model;
			u->gpus[m] += sign * s->gpus;
			u->gpus_all += sign * s->gpus;
		} else if (s->gpu_milli > 0) {
			u->milli += sign * s->gpu_milli;
		} else if (j->prof >= 0) {
			u->mig[j->prof] += sign;
			u->mig_all += sign;
		}
	}
}

void gf__quota_charge(struct gf_ctl *ctl, const struct gf__jrec *j,
		      const struct gf_job_place *pl, int sign)
{
	struct gf__team *t = &ctl->teams.t[j->team];
	gf__use_of(ctl, j, pl, &t->use, sign);
	t->run_milli += sign * j->milli;
}

/* Room for k more whole GPUs of model m; else why, and *room how close. */
static bool gpu_ok(const struct gf_ctl *ctl, const struct gf__team *t, int m,
		   int64_t k, char *why, unsigned size, int64_t *room)
{
	int64_t lim = t->gpu_lim[m], all = t->gpu_all_lim;
	const char *model = ctl->c->models[m];
	*room = INT64_MAX;
	if (lim < 0 && all < 0) {
		*room = INT64_MIN;
		gf_note(why, size, "quota: team %s has no %s GPUs in its quota",
			t->name, model);
		return false;
	}
	if (lim >= 0)
		*room = lim - t->use.gpus[m];
	if (all >= 0 && all - t->use.gpus_all < *room)
		*room = all - t->use.gpus_all;
	if (lim >= 0 && t->use.gpus[m] + k > lim) {
		gf_note(why, size,
			"quota: team %s would use %" PRId64 " of %" PRId64
			" %s GPUs",
			t->name, t->use.gpus[m] + k, lim, model);
		return false;
	}
	if (all >= 0 && t->use.gpus_all + k > all) {
		gf_note(why, size,
			"quota: team %s would use %" PRId64 " of %" PRId64
			" GPUs (all models)",
			t->name, t->use.gpus_all + k, all);
		return false;
	}
	return true;
}

/* Whole GPUs: the models the job may land on now (mask), or blocked. */
static int gpus_room(struct gf_ctl *ctl, const struct gf__jrec *j,
		     const struct gf__team *t, uint32_t *spec, char *why,
		     unsigned size)
{
	int64_t k = (int64_t)j->job->spec.gpus * j->job->spec.replicas;
	int64_t room, best = INT64_MIN;
	char tmp[GF_JOB_REASON_MAX];
	if (j->model >= 0)
		return gpu_ok(ctl, t, j->model, k, why, size, &room) ? 0 : 1;
	uint32_t ok = 0, all = 0;
	for (int m = 0; m < ctl->c->nmodels; m++) {
		all |= UINT32_C(1) << m;
		if (gpu_ok(ctl, t, m, k, tmp, sizeof(tmp), &room))
			ok |= UINT32_C(1) << m;
		else if (room > best || best == INT64_MIN) {
			best = room;
			gf_note(why, size, "%s", tmp);
		}
	}
	if (ok == 0)
		return 1;
	*spec = ok == all ? 0 : ok;
	return 0;
}

static int mig_room(struct gf_ctl *ctl, const struct gf__jrec *j,
		    const struct gf__team *t, char *why, unsigned size)
{
	int64_t k = j->job->spec.replicas;
	int64_t lim = t->mig_lim[j->prof], all = t->mig_all_lim;
	const char *prof = ctl->mig.prof_name[j->prof];
	if (lim < 0 && all < 0) {
		gf_note(why, size,
			"quota: team %s has no %s instances in its quota",
			t->name, prof);
		return 1;
	}
	if (lim >= 0 && t->use.mig[j->prof] + k > lim) {
		gf_note(why, size,
			"quota: team %s would use %" PRId64 " of %" PRId64
			" %s instances",
			t->name, t->use.mig[j->prof] + k, lim, prof);
		return 1;
	}
	if (all >= 0 && t->use.mig_all + k > all) {
		gf_note(why, size,
			"quota: team %s would use %" PRId64 " of %" PRId64
			" MIG instances (all profiles)",
			t->name, t->use.mig_all + k, all);
		return 1;
	}
	return 0;
}

int gf__quota_room(struct gf_ctl *ctl, const struct gf__jrec *j, uint32_t *spec,
		   char *why, unsigned size)
{
	const struct gf__team *t = &ctl->teams.t[j->team];
	const struct gf_job_spec *s = &j->job->spec;
	*spec = j->req.spec;
	if (!t->limited)
		return 0;
	if (s->gpus > 0 && t->gpu_listed)
		return gpus_room(ctl, j, t, spec, why, size);
	if (s->gpu_milli > 0 && t->milli_lim >= 0 &&
	    t->use.milli + (int64_t)s->gpu_milli * s->replicas > t->milli_lim) {
		gf_note(why, size,
			"quota: team %s would use %" PRId64 " of %" PRId64
			" milli-GPU in shares",
			t->name,
			t->use.milli + (int64_t)s->gpu_milli * s->replicas,
			t->milli_lim);
		return 1;
	}
	if (j->prof >= 0 && t->mig_listed)
		return mig_room(ctl, j, t, why, size);
	return 0;
}

/* The most of one name a team may ever hold: lim its entry for the name
 * (-1 none), all its "*" entry (-1 none); a name neither lists is 0. */
static int64_t most(int64_t lim, int64_t all)
{
	int64_t cap = lim >= 0 ? lim : all >= 0 ? INT64_MAX : 0;
	return all >= 0 && all < cap ? all : cap;
}

/* The most whole GPUs of model m the team may ever hold. */
static int64_t gpu_cap(const struct gf__team *t, int m)
{
	return most(t->gpu_lim[m], t->gpu_all_lim);
}

/* GF_ENEVER when the job's k of what pass the team's cap, else 0. */
static int over(const struct gf__team *t, int64_t cap, int64_t k,
		const char *what, struct gf_err *e)
{
	if (k <= cap)
		return 0;
	return gf_err_set(e, GF_ENEVER,
			  "team %s's quota allows at most %" PRId64
			  " %s, the job asks for %" PRId64,
			  t->name, cap, what, k);
}

int gf__quota_never(const struct gf_ctl *ctl, const struct gf__team *t,
		    const struct gf_job_spec *s, int model, int prof,
		    struct gf_err *e)
{
	if (t == NULL || !t->limited)
		return 0;
	int64_t r = s->replicas;
	if (s->gpus > 0 && t->gpu_listed) {
		char what[GF_MODEL_NAME_MAX + 8];
		int64_t cap = 0;
		if (model >= 0) {
			cap = gpu_cap(t, model);
			gf_note(what, sizeof(what), "%s GPUs",
				ctl->c->models[model]);
		} else {
			for (int m = 0; m < ctl->c->nmodels; m++)
				if (gpu_cap(t, m) > cap)
					cap = gpu_cap(t, m);
			gf_note(what, sizeof(what), "GPUs of one model");
		}
		int rc = over(t, cap, s->gpus * r, what, e);
		if (rc || model >= 0)
			return rc;
	}
	if (s->gpu_milli > 0 && t->milli_lim >= 0 &&
	    s->gpu_milli * r > t->milli_lim)
		return gf_err_set(e, GF_ENEVER,
				  "team %s's quota allows %" PRId64
				  " milli-GPU in shares, the job asks for "
				  "%" PRId64,
				  t->name, t->milli_lim, s->gpu_milli * r);
	if (prof >= 0 && t->mig_listed) {
		char what[GF_MIG_PROFILE_MAX + 16];
		gf_note(what, sizeof(what), "%s instances",
			ctl->mig.prof_name[prof]);
		return over(t, most(t->mig_lim[prof], t->mig_all_lim), r, what,
			    e);
	}
	return 0;
}
