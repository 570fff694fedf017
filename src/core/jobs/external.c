/*
 * external.c - jobs another scheduler places: the Kubernetes extender
 * (src/k8s, src/controller/k8s*.c), where kube-scheduler chooses the
 * node and this core records what runs there.  A pod is a job of one
 * replica, started on the node kube-scheduler bound it to, with the
 * GPUs the engine chooses there (gf_ctl_add_on); preemption is asked
 * node by node over the victims kube-scheduler proposes (gf_ctl_victims,
 * the search of preempt.c); and the extender's filter and prioritize
 * read a node without changing anything (gf_ctl_mig_count,
 * gf_ctl_score).
 *
 * Invariants: a job added here goes through the same records as any
 * other (a jrec, the running list, its team's quota figures), so
 * cancel, finish, requeue and gf_ctl_check treat it as they treat the
 * core's own; a refused call takes nothing and changes nothing.
 */
#include <stdio.h>
#include <string.h>

#include "core/jobs/admit.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/gang.h"
#include "core/jobs/jobs_add.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/jobs_state.h"
#include "core/jobs/preempt.h"
#include "core/jobs/quota.h"
#include "core/jobs/table.h"
#include "core/jobs/typical.h"
#include "util/mem.h"

/* The quota room of a job whose record is filled: 0, or GF_ECONFLICT
 * with why (its team is at its quota, or its model is not allowed). */
static int quota_ok(struct gf_ctl *ctl, int jid, int node, struct gf_err *e)
{
	const struct gf__jrec *j = &ctl->jobs.jr[jid];
	uint32_t spec = 0;
	char why[GF_JOB_REASON_MAX];
	if (gf__quota_room(ctl, j, &spec, why, sizeof(why)))
		return gf_err_set(e, GF_ECONFLICT, "%s", why);
	if (spec && j->req.ngpus && !(spec >> ctl->c->nodes[node].model & 1))
		return gf_err_set(e, GF_ECONFLICT,
				  "quota: team %s may not use %s GPUs",
				  ctl->teams.t[j->team].name,
				  ctl->c->models[ctl->c->nodes[node].model]);
	return 0;
}

int gf_ctl_add_on(struct gf_ctl *ctl, struct gf_job *job, int node,
		  int64_t now_ms, struct gf_err *e)
{
	gf_err_clear(e);
	int rc = gf__add_check(ctl, job, e);
	if (rc)
		return rc;
	if (job->state != GF_JOB_PENDING || job->spec.replicas != 1 ||
	    job->attempts != 0)
		return gf_err_set(e, GF_EINVAL,
				  "job %s: expected a new job of one replica",
				  job->id);
	if (node < 0 || node >= ctl->c->n || now_ms <= 0)
		return gf_err_set(e, GF_EINVAL, "job %s: node %d, time %lld",
				  job->id, node, (long long)now_ms);
	int jid = gf__jrec_fill(ctl, job); /* not in the table yet */
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	rc = quota_ok(ctl, jid, node, e);
	if (rc)
		return rc;
	struct gf_job_place *pl;
	int block;
	if (j->prof == -2 ||
	    gf__place_job(ctl, jid, &j->req, NULL, node, -1, &pl, &block))
		return gf_err_set(e, GF_ENOTFOUND,
				  "job %s does not fit on node %s now", job->id,
				  ctl->c->names[node]);
	gf__jobtab_register(&ctl->jobs, jid);
	job->state = GF_JOB_RUNNING;
	job->started_ms = now_ms;
	job->attempts = 1;
	job->reason[0] = '\0';
	j->start_epoch = ctl->nodes.epoch;
	gf__restored(ctl, jid, pl, block);
	gf__typical_arrived(ctl, &j->req, 1);
	return 0;
}

/* A record for a replica of spec that is no job of the core. */
static void probe_rec(struct gf_ctl *ctl, struct gf_job *tmp,
		      const struct gf_job_spec *spec, struct gf__jrec *j)
{
	memset(tmp, 0, sizeof(*tmp));
	tmp->spec = *spec;
	tmp->spec.command = NULL;
	tmp->spec.output = tmp->spec.error = NULL;
	tmp->spec.env = NULL;
	tmp->spec.replicas = 1;
	tmp->spec.node_selector[0] = '\0';
	memset(j, 0, sizeof(*j));
	j->job = tmp;
	j->cls = gf__class_find(ctl, "batch");
	j->run_pos = -1;
	j->mask = -1;
	j->team = -1;
	gf__derive(ctl, j);
}

int gf_ctl_victims(struct gf_ctl *ctl, const struct gf_job_spec *spec, int node,
		   const char *const *ids, int nids, gf_ctl_fit_fn fits,
		   void *arg, int *out)
{
	if (node < 0 || node >= ctl->c->n || nids < 0 || spec == NULL)
		return GF_EINVAL;
	struct gf_job tmp;
	struct gf__jrec j;
	probe_rec(ctl, &tmp, spec, &j);
	if (j.prof == -2 || j.model == -2)
		return GF_ENOTFOUND;
	int *cand = gf_calloc((size_t)nids + 1, sizeof(*cand));
	int *pos = gf_calloc((size_t)nids + 1, sizeof(*pos));
	int *vic = gf_calloc((size_t)nids + 1, sizeof(*vic));
	int nc = 0;
	for (int k = 0; k < nids; k++) {
		int v = gf__job_find(&ctl->jobs, ids[k]);
		if (v < 0 || ctl->jobs.jr[v].job->state != GF_JOB_RUNNING)
			continue;
		bool here = false, seen = false;
		const struct gf_job *vj = ctl->jobs.jr[v].job;
		for (int r = 0; r < vj->spec.replicas; r++)
			here |= vj->place[r].node == node;
		for (int c = 0; c < nc && !seen; c++)
			seen = cand[c] == v;
		if (here && !seen) {
			pos[nc] = k;
			cand[nc++] = v;
		}
	}
	int rc = gf__victims(ctl, &j, node, cand, nc, fits, arg, vic);
	for (int k = 0; k < rc; k++)
		for (int c = 0; c < nc; c++)
			if (cand[c] == vic[k])
				out[k] = pos[c];
	gf_free(cand);
	gf_free(pos);
	gf_free(vic);
	return rc;
}

int gf_ctl_mig_count(const struct gf_ctl *ctl, int node, const char *profile,
		     int *free, struct gf_ctl_mig *first)
{
	*free = 0;
	int p = profile ? gf__prof_find(ctl, profile) : -1;
	if (node < 0 || node >= ctl->c->n || p < 0)
		return 0;
	*free = gf__mig_free_on(ctl, node, p);
	uint16_t sick = ctl->nodes.ns[node].sick;
	for (int x = ctl->mig.node_inst[node];
	     first && x < ctl->mig.node_inst[node + 1]; x++)
		if (ctl->mig.inst[x].prof == p && ctl->mig.inst[x].user < 0 &&
		    !(sick >> ctl->mig.inst[x].gpu & 1)) {
			first->gpu = ctl->mig.inst[x].gpu;
			first->start = ctl->mig.inst[x].start;
			GF__ACOPY(first->profile, ctl->mig.prof_name[p]);
			break;
		}
	return gf__mig_offered(ctl, node, p);
}

int gf_ctl_score(const struct gf_ctl *ctl, int node, const struct gf_req *r,
		 int *gpu)
{
	*gpu = -1;
	if (node < 0 || node >= ctl->c->n)
		return 0;
	return gf_sched_score_peek(ctl->s, node, r, gpu);
}

uint64_t gf_ctl_score_gen(const struct gf_ctl *ctl)
{
	return gf_sched_score_gen(ctl->s);
}
