/*
 * ctl_mig.c - MIG layouts for the pending demand: the proposal (the MIG
 * planner, include/gpufleet/mig_propose.h, over the nodes' GPUs in MIG
 * mode and the pending jobs that ask a profile), served at
 * GET /v1/mig/proposal, and, when the config's agents: mig_auto_apply is
 * on, applied: the node's layout in the core becomes the proposed one
 * (its GPU must hold no running instance, which the planner and the core
 * both check), and the node's next assignments carry the layout for its
 * agent to make real before it starts the jobs placed there.
 *
 * Invariant: a GPU with an instance in use is never changed; a proposal
 * is computed from one consistent view (under ctl_lock, or on the
 * scheduler thread).
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/mig.h>
#include <gpufleet/mig_propose.h>

#include "controller/service_impl.h"
#include "mig/render.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* Is the instance at (node, gpu, start) used by a running job? */
struct busy {
	int node, gpu, start;
};

static int collect_busy(const struct gf_ctl *ctl, struct busy **out)
{
	int n = 0, cap = 0;
	*out = NULL;
	for (int i = 0, nj = gf_ctl_njobs(ctl); i < nj; i++) {
		const struct gf_job *j = gf_ctl_job_at(ctl, i);
		if (j->state != GF_JOB_RUNNING || !j->spec.mig_profile[0])
			continue;
		for (int r = 0; r < j->spec.replicas; r++) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				*out = gf_reallocarray(*out, (size_t)cap,
						       sizeof(**out));
			}
			(*out)[n++] = (struct busy){ j->place[r].node,
						     j->place[r].gpus[0],
						     j->place[r].mig_start };
		}
	}
	return n;
}

/* The GPUs in MIG mode, each with its layout and busy instances. */
static int mig_gpus(const struct gf_ctl *ctl, struct gf_mig_propose_gpu **out)
{
	struct busy *busy;
	int nbusy = collect_busy(ctl, &busy), n = 0, cap = 0;
	*out = NULL;
	for (int i = 0, nn = gf_ctl_nnodes(ctl); i < nn; i++) {
		const struct gf_ctl_node *x = gf_ctl_node(ctl, i);
		const struct gf_mig_model *m = gf_mig_model_by_id(x->mig_model);
		if (!m || x->nmig == 0)
			continue;
		for (int g = 0; g < GF_CNODE_MAX_GPUS; g++) {
			struct gf_mig_layout l = { 0 };
			for (int k = 0; k < x->nmig; k++) {
				int p = gf_mig_profile_find(m,
							    x->mig[k].profile);
				if (x->mig[k].gpu != g || p < 0 ||
				    l.n == GF_MIG_MAX_INSTANCES)
					continue;
				struct gf_mig_instance *in = &l.inst[l.n++];
				in->profile = (uint8_t)p;
				in->start = (uint8_t)x->mig[k].start;
				for (int b = 0; b < nbusy; b++)
					in->busy |= busy[b].node == i &&
						    busy[b].gpu == g &&
						    busy[b].start == in->start;
			}
			if (l.n == 0)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				*out = gf_reallocarray(*out, (size_t)cap,
						       sizeof(**out));
			}
			(*out)[n++] = (struct gf_mig_propose_gpu){
				.node = i, .gpu = g, .model = m, .current = l
			};
		}
	}
	gf_free(busy);
	return n;
}

/* The pending MIG demand, one entry per job (replicas counted). */
static int mig_demand(const struct gf_ctl *ctl,
		      struct gf_mig_propose_demand **out)
{
	int n = 0, cap = 0;
	*out = NULL;
	for (int i = 0, nj = gf_ctl_njobs(ctl); i < nj; i++) {
		const struct gf_job *j = gf_ctl_job_at(ctl, i);
		if (j->state != GF_JOB_PENDING || !j->spec.mig_profile[0])
			continue;
		if (n == GF_MIG_PROPOSE_MAX_ENTRIES)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			*out = gf_reallocarray(*out, (size_t)cap,
					       sizeof(**out));
		}
		struct gf_mig_propose_demand *d = &(*out)[n++];
		memset(d, 0, sizeof(*d));
		d->model = j->spec.gpu_model[0]
				   ? gf_mig_model_by_id(j->spec.gpu_model)
				   : NULL;
		gf_note(d->profile, sizeof(d->profile), "%s",
			j->spec.mig_profile); /* a profile: never cut */
		d->count = j->spec.replicas;
	}
	return n;
}

int gf__mig_proposal(const struct gf_ctl *ctl, struct gf_mig_proposal *p,
		     struct gf_err *e)
{
	struct gf_mig_propose_gpu *gpus;
	struct gf_mig_propose_demand *d;
	int ng = mig_gpus(ctl, &gpus), nd = mig_demand(ctl, &d);
	int rc = gf_mig_propose(gpus, ng, d, nd, p, e);
	gf_free(gpus);
	gf_free(d);
	return rc;
}

#define AUTO_EVERY_MS 5000

/* With the config's mig_auto_apply: every few seconds, the proposal
 * applied on nodes whose agents are ready; under ctl_lock. */
static void mig_auto(void *arg, int64_t now, struct gf_batch *b)
{
	struct gf_service *s = arg;
	if (!s->o.cfg->agents.mig_auto_apply ||
	    now - s->mig_last_ms < AUTO_EVERY_MS)
		return;
	s->mig_last_ms = now;
	struct gf_mig_proposal p;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf__mig_proposal(s->ctl, &p, &e) != 0) {
		gf_log(GF_LOG_WARN, "serve", "MIG proposal: %s", e.msg);
		return;
	}
	for (int k = 0; k < p.nchanges; k++) {
		const struct gf_mig_change *c = &p.changes[k];
		struct gf_np_mig_layout l = { .gpu = c->gpu, .n = c->layout.n };
		for (int i = 0; i < c->layout.n && i < 8; i++) {
			const struct gf_mig_instance *in = &c->layout.inst[i];
			/* a profile's name: never cut */
			gf_note(l.inst[i].profile, sizeof(l.inst[i].profile),
				"%s", c->model->profiles[in->profile].name);
			l.inst[i].start = in->start;
		}
		if (gf__agents_mig_layout(s->ag, c->node, &l, now, b, &e) != 0)
			gf_log(GF_LOG_INFO, "serve",
			       "MIG layout for node %d GPU %d not applied: %s",
			       c->node, c->gpu, e.msg);
	}
	gf_mig_proposal_release(&p);
}

/* GET /v1/mig/proposal: what the planner would change now. */
int gf__mig_get(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = ((struct gf_call *)arg)->s;
	struct gf_mig_proposal p;
	struct gf_err e;
	gf_err_clear(&e);
	pthread_mutex_lock(&s->ctl_lock);
	bool leading = s->leading;
	int rc = leading ? gf__mig_proposal(s->ctl, &p, &e) : 0;
	pthread_mutex_unlock(&s->ctl_lock);
	if (!leading)
		return gf_reply_error(r, 503, "standby",
				      "this server does not lead");
	if (rc)
		return gf_reply_error(r, 500, "internal", "%s", e.msg);
	struct gf_buf b;
	gf_buf_init(&b, 16u << 20);
	pthread_mutex_lock(&s->ctl_lock); /* the names (the table grows) */
	const struct gf_cluster *c = gf_ctl_cluster(s->ctl);
	const char **names = gf_calloc((size_t)c->n + 1, sizeof(*names));
	for (int i = 0; i < c->n; i++)
		names[i] = c->names[i];
	rc = gf_mig_render_proposal_json(&p, names, &b);
	pthread_mutex_unlock(&s->ctl_lock);
	gf_free(names);
	gf_mig_proposal_release(&p);
	rc = rc ? gf_reply_error(r, 500, "too-big",
				 "the proposal is over "
				 "16 MiB")
		: gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

int gf__mig_register(struct gf_service *s)
{
	struct gf_feature f = { .name = "mig", .arg = s, .step = mig_auto };
	return gf__service_register(s, &f);
}
