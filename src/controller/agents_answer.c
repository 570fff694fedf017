/*
 * agents_answer.c - what the controller answers its node agents: a
 * register's or heartbeat's acknowledgement (on the scheduler thread, or
 * a quick heartbeat's handler), a node's assignments (each running
 * replica placed there, with its GPUs, MIG instance, share, gang
 * variables and pending MIG layouts), long polls answered or parked by
 * their handler (or, when it cannot, the scheduler thread), and the
 * parked polls woken when a node's generation moved or their wait
 * ended.  Parking and waking are under ctl_lock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/mig.h>

#include "controller/agents_impl.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/log.h"

void gf__agents_ack(struct gf_agents *ag, struct gf_buf *b, int i,
		    const char *node, int nacked, struct gf_np_ref *acked)
{
	const struct gf_serve_agents *t = &ag->s->o.cfg->agents;
	struct gf_np_ack a = { .generation = ag->n[i].gen,
			       .heartbeat_ms = t->heartbeat_ms,
			       .fence_after_ms = gf_serve_agents_fence_ms(t),
			       .nacked = nacked,
			       .acked = acked };
	/* the states are short words: never cut */
	gf_note(a.state, sizeof(a.state), "%s", gf__agents_state(ag, i));
	struct gf_json j;
	gf_json_open(&j, b, 4u << 20);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "name", node);
	gf_np_ack_write(&j, &a);
	gf_json_obj_end(&j);
}

/* The MIG instance's share of its GPU, in milli. */
static int mig_milli(const struct gf_ctl *ctl, int node, const char *profile)
{
	const struct gf_mig_model *m =
		gf_mig_model_by_id(gf_ctl_node(ctl, node)->mig_model);
	int p = m ? gf_mig_profile_find(m, profile) : -1;
	if (p < 0 || !m->compute)
		return 1000;
	return 1000 * m->profiles[p].compute / m->compute;
}

/* Assignment a of node i (a running job's replica: the index holds only
 * those) into out; false if the index is out of step (a bug, logged). */
static bool fill(struct gf_agents *ag, int i, const struct aref *a,
		 struct gf_np_assignment *out)
{
	const struct gf_ctl *ctl = ag->s->ctl;
	const struct gf_job *j = gf__job_by_seq(ctl, a->seq);
	const struct jside *x = jside_of(ag, a->seq);
	if (!j || !x || !j->place || j->state != GF_JOB_RUNNING) {
		gf_log(GF_LOG_ERROR, "serve",
		       "node %d: assignment of j%" PRIu64
		       " out of step: skipped",
		       i, a->seq);
		return false;
	}
	const struct gf_job_place *p = &j->place[a->replica];
	const struct gf_np_inventory *inv = ag->n[i].inv;
	memset(out, 0, sizeof(*out));
	GF__COPY_SAME(out->ref.job, j->id);
	out->ref.attempt = x->attempt;
	out->ref.replica = a->replica;
	GF__COPY_SAME(out->name, j->spec.name);
	GF__COPY_SAME(out->team, j->spec.team);
	out->command = j->spec.command; /* borrowed for the write */
	out->output = j->spec.output;
	out->error = j->spec.error;
	out->place = *p;
	for (int g = 0; g < p->ngpus; g++)
		if (inv && p->gpus[g] < inv->ngpus)
			GF__COPY_SAME(out->uuids[g],
				      inv->gpus[p->gpus[g]].uuid);
	if (j->spec.mig_profile[0]) {
		out->mig = true;
		GF__COPY_SAME(out->mig_profile, j->spec.mig_profile);
		out->place.gpu_milli = mig_milli(ctl, i, j->spec.mig_profile);
		for (int k = 0; inv && k < inv->nmig; k++)
			if (inv->mig[k].gpu == p->gpus[0] &&
			    inv->mig[k].start == p->mig_start)
				GF__COPY_SAME(out->mig_uuid, inv->mig[k].uuid);
	}
	out->cpu_milli = j->spec.cpu_milli;
	out->memory_mib = j->spec.memory_mib;
	out->max_runtime_s = j->spec.max_runtime_s;
	GF__COPY_SAME(out->array_job, j->spec.array_id); /* "" none */
	out->array_task = j->spec.array_task;
	/* issue 21: environment, directory, user; borrowed for the write */
	out->env = j->spec.env;
	GF__COPY_SAME(out->workdir, j->spec.workdir);
	GF__COPY_SAME(out->user, j->spec.user);
	out->refuse_root = !ag->s->o.cfg->allow_root;
	out->world_size = j->spec.replicas;
	out->rank = a->replica;
	out->local_world_size = 0;
	for (int r = 0; r < x->nrep; r++)
		if (x->node[r] == i) {
			if (r < a->replica)
				out->local_rank++;
			out->local_world_size++;
		}
	if (j->spec.replicas > 1) {
		int m = x->node[0];
		const struct anode *mn = m < ag->cap ? &ag->n[m] : NULL;
		const char *addr = mn && mn->inv && mn->inv->address[0]
					   ? mn->inv->address
					   : gf_ctl_cluster(ctl)->names[m];
		if (gf_fmt(out->master_addr, sizeof(out->master_addr), "%s",
			   addr) != 0) {
			gf_log(GF_LOG_ERROR, "serve",
			       "%s: master address '%.48s...' too long: "
			       "skipped",
			       j->id, addr);
			return false;
		}
		out->master_port = x->port;
	}
	return true;
}

static void reply_assignments(struct gf_agents *ag, struct gf_op *op, int i)
{
	struct anode *n = &ag->n[i];
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 64u << 20);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_uint(&j, "generation", n->gen);
	gf_json_arr_begin(&j, "assignments");
	for (int k = 0; k < n->nrefs; k++) {
		struct gf_np_assignment a;
		if (fill(ag, i, &n->refs[k], &a))
			gf_np_assignment_write(&j, &a);
	}
	gf_json_arr_end(&j);
	struct gf_np_mig_layout l[GF_CNODE_MAX_GPUS];
	int nl = 0;
	for (int g = 0; g < GF_CNODE_MAX_GPUS; g++)
		if (n->mig_pending >> g & 1)
			l[nl++] = n->pending[g];
	gf_np_mig_layouts_write(&j, l, nl);
	gf_json_obj_end(&j);
	if (gf_json_error(&j))
		gf_reply_error(op->req, 500, "too-big",
			       "the assignments are over 64 MiB");
	else
		gf_reply_json(op->req, 200, &b);
	gf_buf_release(&b);
}

/* A poll of node i answered now (its generation passed what it has, or
 * its wait ended), else parked until the node changes (ctl_lock held:
 * handlers park polls too). */
static void park_or_answer(struct gf_agents *ag, struct gf_op *op, int i)
{
	const struct agent_op *x = agent_op(op);
	struct anode *n = &ag->n[i];
	if (n->gen > x->after || x->deadline <= gf__mono_ms()) {
		reply_assignments(ag, op, i);
		gf__op_free(op);
		return;
	}
	op->next = n->polls;
	n->polls = op;
}

void gf__agents_answer(struct gf_service *s, struct gf_op *op)
{
	struct gf_agents *ag = s->ag;
	struct agent_op *x = agent_op(op);
	int i = op->status == 200 ? gf_ctl_node_find(ag->s->ctl, x->node) : -1;
	if (i < 0) {
		if (op->status == 200)
			gf__op_error(op, 404, "not-registered",
				     "node '%s' is gone", x->node);
		gf__op_reply_error(op);
		gf__op_free(op);
		return;
	}
	if (x->what != AG_POLL) {
		struct gf_buf b;
		gf__agents_ack(ag, &b, i, x->node, x->nacked, x->acked);
		gf_reply_json(op->req, 200, &b);
		gf_buf_release(&b);
		gf__op_free(op);
		return;
	}
	pthread_mutex_lock(&s->ctl_lock); /* the polls: see gf__agents_park */
	ag->polls_turn++;
	park_or_answer(ag, op, i);
	pthread_mutex_unlock(&s->ctl_lock);
}

bool gf__agents_park(struct gf_service *s, struct gf_http_req *r,
		     struct agent_op *x)
{
	struct gf_agents *ag = s->ag;
	if (!ag || x->what != AG_POLL)
		return false;
	pthread_mutex_lock(&s->ctl_lock);
	int i = ag->open && s->leading && !atomic_load(&s->failed)
			? gf_ctl_node_find(s->ctl, x->node)
			: -1;
	bool here = i >= 0 && i < ag->cap && ag->n[i].st != AN_NONE;
	if (here) {
		struct anode *n = &ag->n[i];
		x->op.req = r;
		bool wait = n->gen <= x->after && x->deadline > gf__mono_ms();
		/* held before the wake can see it (under the same lock) */
		here = !wait || gf_req_suspend(r) == 0;
		if (here) {
			ag->polls_here++;
			park_or_answer(ag, &x->op, i);
		}
	}
	pthread_mutex_unlock(&s->ctl_lock);
	return here;
}

/* Answer node i's parked polls that its generation passed, or whose wait
 * ended (all: every one, with status). */
static void wake_node(struct gf_agents *ag, int i, int64_t mono, bool all,
		      unsigned status)
{
	struct anode *n = &ag->n[i];
	struct gf_op **pp = &n->polls;
	while (*pp) {
		struct gf_op *op = *pp;
		const struct agent_op *x = agent_op(op);
		if (!all && n->gen <= x->after && x->deadline > mono) {
			pp = &op->next;
			continue;
		}
		*pp = op->next;
		if (all)
			gf_reply_error(op->req, status,
				       status == 503 ? "unavailable" : "error",
				       "the controller is stopping or not "
				       "leading");
		else
			reply_assignments(ag, op, i);
		gf__op_free(op);
	}
}

/* (ctl_lock held: handlers park polls under it) */
static void wake_locked(struct gf_agents *ag, bool all, unsigned status)
{
	ag->open = !all; /* no poll parked by a handler after an answer to
			    all: it would wait for none */
	int64_t mono = gf__mono_ms();
	for (int k = 0; k < ag->nwake; k++) {
		ag->n[ag->wake[k]].woken = false;
		if (!all)
			wake_node(ag, ag->wake[k], mono, false, status);
	}
	ag->nwake = 0;
	/* waits that ended: a walk at most every SWEEP_MS (a long poll of
	 * 30 s answered up to 0.1 s late) */
	if (!all && mono < ag->next_deadline)
		return;
	ag->next_deadline = mono + SWEEP_MS;
	for (int i = 0; i < ag->cap; i++)
		if (ag->n[i].polls)
			wake_node(ag, i, mono, all, status);
}

void gf__agents_wake(struct gf_agents *ag, bool all, unsigned status)
{
	pthread_mutex_lock(&ag->s->ctl_lock);
	wake_locked(ag, all, status);
	pthread_mutex_unlock(&ag->s->ctl_lock);
}
