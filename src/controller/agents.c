/*
 * agents.c - the node agents' side of the controller (their routes are in
 * agents_http.c, the answers in agents_answer.c, replicas completing in
 * agents_ending.c, what other files read of nodes in agents_read.c, the
 * state they share in agents_impl.h): what the
 * scheduler thread does each turn with what they say (register,
 * heartbeat, long poll for assignments): nodes into the
 * core, GPU health, ended runs into jobs and the store, silent nodes made
 * NotReady then requeued, and each node's assignments kept as an index
 * that changes only where a job changed.
 *
 * Per node: its inventory (as it came, to store, and parsed), when it
 * last called (monotonic), its state, a generation (bumped whenever its
 * assignments change; it starts at this controller's start time in ms,
 * so it only grows across restarts), the generation its agent last said
 * it applied, its assignments (job seq, replica, the generation that
 * gave it), and its parked long polls.
 *
 * Invariants: a node's assignments are exactly the replicas of running
 * jobs placed on it (gf__agents_job_changed is called for every job a
 * turn changes); a run is counted once (the set of runs seen is loaded
 * from the store when leading, and the store refuses a second row), and
 * only from the node that runs the replica or holds it completing; a
 * replica the agent stopped reporting is declared lost only when the
 * agent has applied the generation that assigned it and sent no report
 * for it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/agents_impl.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* ---- small tables --------------------------------------------------- */

static void jside_free(struct jside *x)
{
	if (!x)
		return;
	gf_free(x->node);
	gf_free(x->ended);
	gf_free(x->up);
	gf_free(x);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static size_t run_slot(const struct gf_agents *ag, uint64_t seq, int attempt,
		       int replica)
{
	uint64_t h = mix(seq * 0x9e3779b97f4a7c15ULL ^
			 ((uint64_t)attempt << 20 | (uint64_t)replica));
	size_t mask = ag->seen_cap - 1;
	size_t k = (size_t)h & mask;
	while (ag->seen[k].seq &&
	       (ag->seen[k].seq != seq || ag->seen[k].attempt != attempt ||
		ag->seen[k].replica != replica))
		k = (k + 1) & mask;
	return k;
}

/* Mark a run seen, on node (-1 unknown); false when it was already. */
static bool run_see(struct gf_agents *ag, uint64_t seq, int attempt,
		    int replica, int node)
{
	if (2 * (ag->seen_n + 1) > ag->seen_cap) {
		struct runkey *old = ag->seen;
		size_t oldcap = ag->seen_cap;
		ag->seen_cap = oldcap ? 2 * oldcap : 1024;
		ag->seen = gf_calloc(ag->seen_cap, sizeof(*ag->seen));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].seq)
				ag->seen[run_slot(ag, old[i].seq,
						  old[i].attempt,
						  old[i].replica)] = old[i];
		gf_free(old);
	}
	size_t k = run_slot(ag, seq, attempt, replica);
	if (ag->seen[k].seq)
		return false;
	ag->seen[k] = (struct runkey){ seq, attempt, replica, node };
	ag->seen_n++;
	return true;
}

int gf__agents_run_node(const struct gf_agents *ag, const struct gf_job *j,
			int attempt, int replica, bool *live)
{
	*live = false;
	if (j->state == GF_JOB_RUNNING && j->place && attempt == j->attempts &&
	    replica < j->spec.replicas) {
		*live = true;
		return j->place[replica].node;
	}
	for (int k = 0; k < j->nheld; k++)
		if (j->held[k].attempt == attempt &&
		    j->held[k].replica == replica) {
			*live = true; /* completing: its end is to come */
			return j->held[k].place.node;
		}
	if (ag->seen_cap == 0)
		return GF_ENOTFOUND;
	size_t k = run_slot(ag, j->seq, attempt, replica);
	if (!ag->seen[k].seq)
		return GF_ENOTFOUND;
	return ag->seen[k].node < 0 ? -ENODEV : ag->seen[k].node;
}

_Static_assert(GF_JOB_NODE_MAX >= GF_NODE_NAME_MAX,
	       "a run names its node in full");

/* ---- lifecycle ------------------------------------------------------ */

struct gf_agents *gf__agents_new(struct gf_service *s)
{
	struct gf_agents *ag = gf_calloc(1, sizeof(*ag));
	ag->s = s;
	ag->gen_base = (uint64_t)gf_clock_wall_ms();
	return ag;
}

static void drop_node(struct anode *n)
{
	gf_free(n->text);
	gf_np_inventory_free(n->inv);
	gf_free(n->refs);
	gf_free(n->ends);
	gf_free(n->pending);
	gf_free(n->drain);
	memset(n, 0, sizeof(*n));
}

void gf__agents_free(struct gf_agents *ag)
{
	if (!ag)
		return;
	for (int i = 0; i < ag->cap; i++) {
		/* parked polls were answered by the last turn */
		drop_node(&ag->n[i]);
	}
	for (size_t i = 0; i < ag->jcap; i++)
		jside_free(ag->js[i]);
	gf_free(ag->js);
	gf_free(ag->n);
	gf_free(ag->seen);
	gf_free(ag->wake);
	gf_free(ag);
}

/* Node i's generation moved: its parked polls are answered this turn. */
static void moved(struct gf_agents *ag, int i)
{
	struct anode *n = &ag->n[i];
	n->gen++;
	if (!n->polls || n->woken)
		return;
	if (ag->nwake == ag->wcap) {
		ag->wcap = ag->wcap ? 2 * ag->wcap : 64;
		ag->wake = gf_reallocarray(ag->wake, (size_t)ag->wcap,
					   sizeof(*ag->wake));
	}
	ag->wake[ag->nwake++] = i;
	n->woken = true;
}

/* ---- assignments ---------------------------------------------------- */

static void unassign(struct gf_agents *ag, uint64_t seq, int node)
{
	struct anode *n = gf__anode(ag, node);
	int k = 0;
	for (int i = 0; i < n->nrefs; i++)
		if (n->refs[i].seq != seq)
			n->refs[k++] = n->refs[i];
	if (k != n->nrefs) {
		n->nrefs = k;
		moved(ag, node);
	}
}

static void assign(struct gf_agents *ag, uint64_t seq, int replica, int node)
{
	struct anode *n = gf__anode(ag, node);
	if (n->nrefs == n->rcap) {
		n->rcap = n->rcap ? 2 * n->rcap : 8;
		n->refs = gf_reallocarray(n->refs, (size_t)n->rcap,
					  sizeof(*n->refs));
	}
	moved(ag, node);
	n->refs[n->nrefs++] = (struct aref){ seq, replica, n->gen };
}

/* A gang's MASTER_PORT: the first port from base + seq % range that no
 * other running gang with its master on that node uses. */
static int pick_port(struct gf_agents *ag, uint64_t seq, int master)
{
	struct anode *n = gf__anode(ag, master);
	for (int k = 0; k < MASTER_PORTS; k++) {
		int port = MASTER_PORT_BASE +
			   (int)((seq + (uint64_t)k) % MASTER_PORTS);
		bool used = false;
		for (int i = 0; i < n->nrefs && !used; i++) {
			const struct jside *o = jside_of(ag, n->refs[i].seq);
			used = n->refs[i].replica == 0 && o && o->nrep > 1 &&
			       n->refs[i].seq != seq && o->port == port;
		}
		if (!used)
			return port;
	}
	return MASTER_PORT_BASE + (int)(seq % MASTER_PORTS);
}

void gf__agents_job_changed(struct gf_agents *ag, const struct gf_job *j)
{
	struct jside *x = jside_of(ag, j->seq);
	/* a pod's job runs under Kubernetes: no agent is told to run it,
	 * and what it held is the kubelet's to free */
	bool pod = j->spec.origin == GF_JOB_ORIGIN_K8S;
	bool running = j->state == GF_JOB_RUNNING && j->place && !pod;
	if (x && running && x->attempt == j->attempts)
		return; /* the same attempt where it was */
	if (x) {
		for (int r = 0; r < x->nrep; r++) {
			unassign(ag, j->seq, x->node[r]);
			if (!gf__held_on(j, x->attempt, r, x->node[r]))
				continue;
			if (x->ended[r]) /* reported: gone already */
				gf__agents_gone(ag, j, x->attempt, r,
						x->node[r],
						"its end was reported", NULL);
			else /* its agent stops it and says so */
				gf__agents_ending_add(ag, x->node[r], j->seq,
						      x->attempt, r);
		}
		jside_free(x);
		ag->js[j->seq] = NULL;
	}
	for (int k = j->nheld - 1; pod && k >= 0; k--)
		(void)!gf_ctl_held_release(ag->s->ctl, j->id,
					   j->held[k].attempt,
					   j->held[k].replica, NULL);
	if (!running)
		return;
	if (j->seq >= ag->jcap) {
		size_t cap = ag->jcap ? ag->jcap : 1024;
		while (cap <= j->seq)
			cap *= 2;
		ag->js = gf_reallocarray(ag->js, cap, sizeof(*ag->js));
		memset(ag->js + ag->jcap, 0,
		       (cap - ag->jcap) * sizeof(*ag->js));
		ag->jcap = cap;
	}
	x = gf_calloc(1, sizeof(*x));
	x->attempt = j->attempts;
	x->nrep = j->spec.replicas;
	x->node = gf_calloc((size_t)x->nrep, sizeof(*x->node));
	x->ended = gf_calloc((size_t)x->nrep, sizeof(*x->ended));
	x->up = gf_calloc((size_t)x->nrep, sizeof(*x->up));
	for (int r = 0; r < x->nrep; r++) {
		x->node[r] = j->place[r].node;
		assign(ag, j->seq, r, x->node[r]);
	}
	ag->js[j->seq] = x;
	if (x->nrep > 1)
		x->port = pick_port(ag, j->seq, x->node[0]);
}

void gf__agents_index_all(struct gf_agents *ag)
{
	const struct gf_ctl *ctl = ag->s->ctl;
	for (int i = 0, n = gf_ctl_njobs(ctl); i < n; i++)
		gf__agents_job_changed(ag, gf_ctl_job_at(ctl, i));
	/* replicas completing when the last controller stopped: gone once
	 * their node, having applied this controller's assignments (the
	 * generation starts at gen_base), no longer runs them */
	for (int i = 0, n = gf_ctl_nholding(ctl); i < n; i++) {
		const struct gf_job *j = gf_ctl_holding_at(ctl, i);
		for (int k = 0; k < j->nheld; k++)
			gf__agents_ending_add(ag, j->held[k].place.node, j->seq,
					      j->held[k].attempt,
					      j->held[k].replica);
	}
}

/* ---- loading -------------------------------------------------------- */

/* spec's MIG instances on GPU l->gpu replaced by layout l. */
static void spec_layout(struct gf_ctl_node_spec *spec,
			const struct gf_np_mig_layout *l)
{
	int k = 0;
	for (int i = 0; i < spec->nmig; i++)
		if (spec->mig[i].gpu != l->gpu)
			spec->mig[k++] = spec->mig[i];
	spec->nmig = k;
	for (int i = 0; i < l->n && spec->nmig < GF_CTL_MAX_MIG; i++) {
		struct gf_ctl_mig *m = &spec->mig[spec->nmig++];
		m->gpu = l->gpu;
		m->start = l->inst[i].start;
		GF__COPY_SAME(m->profile, l->inst[i].profile);
	}
}

/* The core's spec for a node's inventory: the config's block and labels
 * for that name over the agent's, and the MIG layouts the controller
 * applied that the agent has not made real yet (n may be NULL). */
static void spec_of(const struct gf_agents *ag, const char *name,
		    const struct gf_np_inventory *inv, const struct anode *n,
		    struct gf_ctl_node_spec *spec)
{
	gf_np_inventory_spec(inv, spec);
	gf_serve_config_node(ag->s->o.cfg, name, spec->block,
			     sizeof(spec->block), spec->labels,
			     sizeof(spec->labels));
	for (int g = 0; n && g < GF_CNODE_MAX_GPUS; g++)
		if (n->mig_pending >> g & 1)
			spec_layout(spec, &n->pending[g]);
}

/* Does the inventory hold exactly layout l on its GPU? */
static bool has_layout(const struct gf_np_inventory *inv,
		       const struct gf_np_mig_layout *l)
{
	int found = 0, on = 0;
	for (int i = 0; i < inv->nmig; i++) {
		if (inv->mig[i].gpu != l->gpu)
			continue;
		on++;
		for (int k = 0; k < l->n; k++)
			found += inv->mig[i].start == l->inst[k].start &&
				 !strcmp(inv->mig[i].profile,
					 l->inst[k].profile);
	}
	return on == l->n && found == l->n;
}

static int take_node(const char *name, const char *text, size_t len, int64_t at,
		     void *arg)
{
	struct gf_agents *ag = arg;
	struct gf_service *s = ag->s;
	struct gf_err e;
	struct gf_jv *v = NULL;
	struct gf_np_inventory *inv = gf_calloc(1, sizeof(*inv));
	struct gf_ctl_node_spec spec;
	int rc = gf_jv_parse(text, len, &v, &e);
	if (rc == 0)
		rc = gf_np_inventory_read(v, inv, &e);
	gf_jv_free(v);
	int idx = -1;
	if (rc == 0) {
		spec_of(ag, name, inv, NULL, &spec);
		idx = rc = gf_ctl_node_add(s->ctl, name, &spec,
					   gf_clock_wall_ms(), NULL, &e);
	}
	if (rc < 0) {
		/* a node the core refuses now (a config changed under it):
		 * said, and left to register again */
		gf_log(GF_LOG_WARN, "serve",
		       "stored node '%s' not restored: %s; it will be when "
		       "its agent registers again",
		       name, e.msg);
		gf_np_inventory_free(inv);
		return 0;
	}
	struct anode *n = gf__anode(ag, idx);
	drop_node(n);
	n->st = AN_NOTREADY; /* until it calls; its jobs run on */
	gf_note(n->why, sizeof(n->why),
		"waiting for its agent since this controller started");
	n->text = gf_strndup(text, len);
	n->len = len;
	n->inv = inv;
	n->registered_ms = at;
	n->last_seen = gf__mono_ms(); /* the full grace from now */
	n->gen = ag->gen_base;
	return 0;
}

static int take_run(const struct gf_job_run *r, void *arg)
{
	struct gf_agents *ag = arg;
	run_see(ag, r->seq, r->attempt, r->replica,
		gf_ctl_node_find(ag->s->ctl, r->node));
	return 0;
}

static int take_drain(const char *name, const char *reason, void *arg)
{
	struct gf_agents *ag = arg;
	int i = gf_ctl_node_find(ag->s->ctl, name);
	if (i >= 0) {
		struct gf_err e;
		gf_err_clear(&e);
		gf__core_warn(gf_ctl_node_drain(ag->s->ctl, i, true, &e), &e,
			      "a stored drain");
		gf__agents_set_drain(ag, i, reason);
	}
	return 0;
}

int gf__agents_load(struct gf_agents *ag, struct gf_err *e)
{
	int rc = gf_store_load_nodes(ag->s->store, take_node, ag, e);
	if (rc == 0)
		rc = gf_store_load_drains(ag->s->store, take_drain, ag, e);
	if (rc == 0)
		rc = gf_store_load_runs(ag->s->store, take_run, ag, e);
	return rc;
}

void gf__agents_set_drain(struct gf_agents *ag, int i, const char *reason)
{
	struct anode *n = gf__anode(ag, i);
	gf_free(n->drain);
	n->drain = reason ? gf_strdup(reason) : NULL;
}

/* ---- what nodes say ------------------------------------------------- */

/* The node of an agent op, known (404 when not). */
static int known_node(struct gf_agents *ag, struct gf_op *op)
{
	struct agent_op *x = agent_op(op);
	int i = gf_ctl_node_find(ag->s->ctl, x->node);
	if (i < 0 || i >= ag->cap || ag->n[i].st == AN_NONE) {
		gf__op_error(op, 404, "not-registered",
			     "node '%s' is not registered: PUT "
			     "/v1/nodes/%s first",
			     x->node, x->node);
		return -1;
	}
	return i;
}

/* A sign of life: ready again if it was not. */
static void alive(struct gf_agents *ag, int i, int64_t now, struct gf_batch *b)
{
	struct anode *n = &ag->n[i];
	n->last_seen = gf__mono_ms();
	if (n->st == AN_READY)
		return;
	struct gf_err e;
	struct gf_ctl_changes ch = { 0 };
	if (gf_ctl_node_ready(ag->s->ctl, i, true, NULL, now, &ch, &e) != 0)
		gf_log(GF_LOG_WARN, "serve", "node '%s': %s",
		       gf_ctl_cluster(ag->s->ctl)->names[i], e.msg);
	gf__core_warn(gf_ctl_node_cordon(ag->s->ctl, i, false, &e), &e,
		      "a node back");
	n->why[0] = '\0';
	for (int k = 0; k < ch.n; k++)
		gf__batch_add(b, gf_ctl_job(ag->s->ctl, ch.ids[k]));
	gf_ctl_changes_release(&ch);
	gf_log(GF_LOG_INFO, "serve", "node '%s' ready",
	       gf_ctl_cluster(ag->s->ctl)->names[i]);
	n->st = AN_READY;
}

static void health(struct gf_agents *ag, int i,
		   const struct gf_np_heartbeat *hb)
{
	struct gf_ctl *ctl = ag->s->ctl;
	int ngpus = gf_ctl_cluster(ctl)->nodes[i].ngpus;
	for (int k = 0; k < hb->nhealth; k++) {
		int g = hb->health[k].index;
		bool ok = hb->health[k].healthy;
		if (g >= ngpus || gf_ctl_gpu_is_healthy(ctl, i, g) == ok)
			continue;
		struct gf_err e;
		gf_err_clear(&e);
		gf__core_warn(gf_ctl_gpu_health(ctl, i, g, ok,
						hb->health[k].reason, &e),
			      &e, "a GPU's health");
		gf_log(ok ? GF_LOG_INFO : GF_LOG_WARN, "serve",
		       "node '%s' GPU %d %s%s%s", gf_ctl_cluster(ctl)->names[i],
		       g, ok ? "healthy again" : "unhealthy", ok ? "" : ": ",
		       ok ? "" : hb->health[k].reason);
	}
}

/* What an ended run does to its job: the last replica's end finishes
 * it; a failure fails it (the others are stopped: no longer assigned);
 * a run the node lost, fenced or could not start requeues it. */
static void run_ended(struct gf_agents *ag, const struct gf_job *j,
		      const struct gf_np_report *rep, int node, int64_t now,
		      struct gf_batch *b)
{
	struct gf_ctl *ctl = ag->s->ctl;
	struct jside *x = jside_of(ag, j->seq);
	int r = rep->ref.replica;
	if (j->state != GF_JOB_RUNNING || !x ||
	    x->attempt != rep->ref.attempt || r >= x->nrep ||
	    x->node[r] != node || x->ended[r])
		return; /* an older attempt, or said already */
	x->ended[r] = 1;
	struct gf_err e;
	const char *why = rep->run.reason;
	char reason[GF_JOB_REASON_MAX];
	int rc;
	if (!strcmp(why, "lost") || !strcmp(why, "fenced") ||
	    !strncmp(why, "start-failed", 12)) {
		gf_note(reason, sizeof(reason), "replica %d on %.48s: %.80s", r,
			gf_ctl_cluster(ctl)->names[node], why);
		rc = gf_ctl_requeue(ctl, j->id, reason, now, &e);
	} else if (rep->run.exit_code != 0) {
		rc = gf_ctl_finish(ctl, j->id, rep->run.exit_code, now, &e);
	} else {
		for (int k = 0; k < x->nrep; k++)
			if (!x->ended[k])
				return; /* the others still run */
		rc = gf_ctl_finish(ctl, j->id, 0, now, &e);
	}
	if (rc == 0)
		gf__batch_add(b, j);
	else
		gf_log(GF_LOG_WARN, "serve", "job %s: %s", j->id, e.msg);
}

/* Does node i run (or hold completing) this replica of this run?  A
 * node speaks only for its own replicas: anything else it reports is
 * ignored before it can count (usage, runs, a second end). */
static bool owns(struct gf_agents *ag, const struct gf_job *j, int attempt,
		 int replica, int i)
{
	const struct jside *x = jside_of(ag, j->seq);
	if (x && x->attempt == attempt && replica < x->nrep &&
	    x->node[replica] == i)
		return true;
	return gf__held_on(j, attempt, replica, i) != NULL;
}

/* Where the reported run ran, as placed: its current placement, or the
 * one held completing on node i. */
static void run_where(struct gf_agents *ag, const struct gf_job *j,
		      struct gf_job_run *run, int i)
{
	const struct gf_job_held *h =
		gf__held_on(j, run->attempt, run->replica, i);
	const struct gf_job_place *p =
		h ? &h->place
		: j->place && run->attempt == j->attempts &&
				run->replica < j->spec.replicas
			? &j->place[run->replica]
			: NULL;
	run->ngpus = 0; /* the node's report says none of it */
	run->gpu_uuids[0] = run->mig_uuid[0] = '\0';
	run->mig_start = -1;
	if (p)
		gf__agents_where(ag, j, p, run);
}

static void reports(struct gf_agents *ag, int i, struct gf_op *op, int64_t now,
		    struct gf_batch *b)
{
	struct agent_op *x = agent_op(op);
	struct gf_ctl *ctl = ag->s->ctl;
	const char *name = gf_ctl_cluster(ctl)->names[i];
	x->acked = gf_calloc((size_t)x->hb->nreports + 1, sizeof(*x->acked));
	for (int k = 0; k < x->hb->nreports; k++) {
		struct gf_np_report *rep = &x->hb->reports[k];
		x->acked[x->nacked++] = rep->ref;
		const struct gf_job *j = gf_ctl_job(ctl, rep->ref.job);
		if (!j || rep->ref.attempt > j->attempts ||
		    rep->ref.replica >= j->spec.replicas) {
			gf_log(GF_LOG_WARN, "serve",
			       "node '%s' reports %s attempt %d replica %d, "
			       "which never ran: ignored",
			       name, rep->ref.job, rep->ref.attempt,
			       rep->ref.replica);
			continue;
		}
		const struct gf_job_held *h =
			gf__held_on(j, rep->ref.attempt, rep->ref.replica, i);
		bool superseded = h && !strcmp(h->why, "requeued");
		if (!owns(ag, j, rep->ref.attempt, rep->ref.replica, i)) {
			gf_log(GF_LOG_WARN, "serve",
			       "node '%s' reports %s attempt %d replica %d, "
			       "which is not its own: ignored",
			       name, j->id, rep->ref.attempt, rep->ref.replica);
			ag->s->foreign_reports++;
			continue;
		}
		if (run_see(ag, j->seq, rep->ref.attempt, rep->ref.replica,
			    i)) {
			struct gf_job_run run = rep->run;
			run.seq = j->seq;
			/* a node's name always fits a run's (static assert
			 * above): never cut */
			gf_note(run.node, sizeof(run.node), "%s", name);
			if (superseded) /* it ran on while moved elsewhere */
				gf_note(run.reason, sizeof(run.reason),
					"superseded");
			run_where(ag, j, &run, i);
			if (b->nruns == b->rcap) {
				b->rcap = b->rcap ? 2 * b->rcap : 64;
				b->runs = gf_reallocarray(b->runs,
							  (size_t)b->rcap,
							  sizeof(*b->runs));
			}
			b->runs[b->nruns++] = run;
			/* j is the core's: its usage is counted */
			gf__core_warn(gf_ctl_job_usage(ctl, j->id, run.gpu_ms),
				      NULL, j->id);
			gf__batch_add(b, j);
			run_ended(ag, j, rep, i, now, b);
		}
		/* sent again or not, its processes are gone */
		if (gf__held_on(j, rep->ref.attempt, rep->ref.replica, i))
			gf__agents_gone(
				ag, j, rep->ref.attempt, rep->ref.replica, i,
				superseded ? "superseded, stopped by its agent"
					   : "its end was reported",
				b);
	}
}

/* A job's first run seen running for the first time: its submit-to-
 * running time (the job's first replica up; once). */
static void first_up(struct gf_agents *ag, const struct jside *x,
		     const char *id, int64_t now)
{
	const struct gf_job *j = gf_ctl_job(ag->s->ctl, id);
	int up = 0;
	for (int r = 0; r < x->nrep; r++)
		up += x->up[r];
	if (!j || x->attempt != 1 || up != 1 || j->submitted_ms <= 0 ||
	    now < j->submitted_ms)
		return;
	gf__hist_observe(ag->s->run_count, &ag->s->run_sum,
			 (double)(now - j->submitted_ms) / 1e3);
}

/* Replicas assigned to the node that its agent, having applied their
 * generation, neither runs nor reported: lost (requeued). */
static void reconcile(struct gf_agents *ag, int i,
		      const struct gf_np_heartbeat *hb, int64_t now,
		      struct gf_batch *b)
{
	struct gf_ctl *ctl = ag->s->ctl;
	struct anode *n = &ag->n[i];
	n->applied = hb->generation;
	gf__agents_endings(ag, i, hb, now, b);
	for (int k = 0; k < n->nrefs; k++) {
		const struct aref *a = &n->refs[k];
		struct jside *x = jside_of(ag, a->seq);
		if (a->gen > hb->generation || !x || x->ended[a->replica])
			continue;
		char id[GF_JOB_ID_MAX], reason[GF_JOB_REASON_MAX];
		gf__job_id(id, a->seq);
		if (gf__hb_runs(hb, id, x->attempt, a->replica)) {
			if (!x->up[a->replica]) {
				x->up[a->replica] = 1;
				first_up(ag, x, id, now);
				gf_log(GF_LOG_INFO, "serve",
				       "job=%s started attempt=%d replica=%d "
				       "node=%s",
				       id, x->attempt, a->replica,
				       gf_ctl_cluster(ctl)->names[i]);
			}
			continue;
		}
		const struct gf_job *j = gf_ctl_job(ctl, id);
		gf_note(reason, sizeof(reason),
			"node %s does not run replica %d (lost)",
			gf_ctl_cluster(ctl)->names[i], a->replica);
		struct gf_err e;
		x->ended[a->replica] = 1; /* not running: nothing to wait for */
		if (j && gf_ctl_requeue(ctl, id, reason, now, &e) == 0) {
			gf_log(GF_LOG_WARN, "serve", "job %s: %s", id, reason);
			gf__batch_add(b, j);
			k = -1; /* the index may have changed: again */
			gf__agents_job_changed(ag, j);
		}
	}
}

static void heartbeat(struct gf_agents *ag, struct gf_op *op, int64_t now,
		      struct gf_batch *b)
{
	struct agent_op *x = agent_op(op);
	int i = known_node(ag, op);
	if (i < 0)
		return;
	if (x->what == AG_HEARTBEAT)
		ag->slow++;
	ag->n[i].qok = false; /* what a quick one was decided on may change */
	alive(ag, i, now, b);
	health(ag, i, x->hb);
	reports(ag, i, op, now, b);
	reconcile(ag, i, x->hb, now, b);
	if (ag->n[i].inv) /* the listeners: pods compared (k8s) */
		gf__service_heartbeat(ag->s, i, x->hb, ag->n[i].inv);
	op->status = 200;
}

static void reg(struct gf_agents *ag, struct gf_op *op, int64_t now,
		struct gf_batch *b)
{
	struct agent_op *x = agent_op(op);
	struct gf_ctl *ctl = ag->s->ctl;
	struct gf_ctl_node_spec spec;
	struct gf_ctl_changes ch = { 0 };
	struct gf_err e;
	gf_err_clear(&e);
	int known = gf_ctl_node_find(ctl, x->node);
	struct anode *was =
		known >= 0 && known < ag->cap ? &ag->n[known] : NULL;
	for (int g = 0; was && g < GF_CNODE_MAX_GPUS; g++)
		if ((was->mig_pending >> g & 1) &&
		    has_layout(x->inv, &was->pending[g]))
			was->mig_pending &=
				(uint16_t) ~(1u << g); /* made real */
	spec_of(ag, x->node, x->inv, was, &spec);
	int i = gf_ctl_node_add(ctl, x->node, &spec, now, &ch, &e);
	for (int k = 0; k < ch.n; k++)
		gf__batch_add(b, gf_ctl_job(ctl, ch.ids[k]));
	gf_ctl_changes_release(&ch);
	if (i < 0) {
		unsigned st = i == GF_ECONFLICT ? 409
			      : i == GF_ETOOBIG ? 413
						: 422;
		gf__op_error(op, st,
			     st == 409	 ? "conflict"
			     : st == 413 ? "too-big"
					 : "invalid",
			     "%s", e.msg);
		return;
	}
	struct anode *n = gf__anode(ag, i);
	bool first = n->st == AN_NONE;
	gf_free(n->text);
	gf_np_inventory_free(n->inv);
	n->text = x->body;
	n->len = x->body_len;
	n->inv = x->inv;
	x->body = NULL;
	x->inv = NULL;
	if (!n->dirty)
		ag->ndirty++;
	n->dirty = true;
	n->registered_ms = now;
	if (first) {
		n->st = AN_NOTREADY;
		n->gen = ag->gen_base;
	}
	/* a new node and one that changed shape start not ready in the
	 * core: the heartbeat below makes them ready */
	if (!gf_ctl_node_is_ready(ctl, i))
		n->st = AN_NOTREADY;
	gf_log(GF_LOG_INFO, "serve",
	       "node '%s' %s: %d GPUs %s, %d MIG instances", x->node,
	       first ? "registered" : "registered again", n->inv->ngpus,
	       n->inv->gpu_model, n->inv->nmig);
	heartbeat(ag, op, now, b);
}

void gf__agents_apply(struct gf_service *s, struct gf_op *op, int64_t now,
		      struct gf_batch *b)
{
	struct gf_agents *ag = s->ag;
	if (agent_op(op)->what == AG_REGISTER)
		reg(ag, op, now, b);
	else if (agent_op(op)->what == AG_HEARTBEAT)
		heartbeat(ag, op, now, b);
	else if (known_node(ag, op) >= 0)
		op->status =
			200; /* a poll: answered or parked after the turn */
}

/* ---- MIG layouts ---------------------------------------------------- */

int gf__agents_mig_layout(struct gf_agents *ag, int i,
			  const struct gf_np_mig_layout *l, int64_t now,
			  struct gf_batch *b, struct gf_err *e)
{
	struct gf_ctl *ctl = ag->s->ctl;
	if (i >= ag->cap || ag->n[i].st != AN_READY || !ag->n[i].inv)
		return gf_err_set(e, GF_ECONFLICT,
				  "node %d has no agent ready to apply it", i);
	struct anode *n = &ag->n[i];
	const char *name = gf_ctl_cluster(ctl)->names[i];
	struct gf_ctl_node_spec spec;
	struct gf_ctl_changes ch = { 0 };
	spec_of(ag, name, n->inv, n, &spec);
	spec_layout(&spec, l);
	int rc = gf_ctl_node_add(ctl, name, &spec, now, &ch, e);
	for (int k = 0; k < ch.n; k++)
		gf__batch_add(b, gf_ctl_job(ctl, ch.ids[k]));
	gf_ctl_changes_release(&ch);
	if (rc < 0)
		return rc;
	if (!n->pending)
		n->pending = gf_calloc(GF_CNODE_MAX_GPUS, sizeof(*n->pending));
	n->pending[l->gpu] = *l;
	n->mig_pending |= (uint16_t)(1u << l->gpu);
	moved(ag, i); /* its agent learns it with its assignments */
	gf_log(GF_LOG_INFO, "serve",
	       "node '%s' GPU %d: MIG layout of %d instances applied; its "
	       "agent makes it real",
	       name, l->gpu, l->n);
	return 0;
}

/* ---- silence -------------------------------------------------------- */

void gf__agents_sweep(struct gf_agents *ag, int64_t now, struct gf_batch *b)
{
	const struct gf_serve_agents *t = &ag->s->o.cfg->agents;
	struct gf_ctl *ctl = ag->s->ctl;
	int64_t mono = gf__mono_ms();
	if (mono < ag->next_sweep)
		return; /* the times are seconds: 100 ms late is nothing */
	ag->next_sweep = mono + SWEEP_MS;
	for (int i = 0; i < ag->cap; i++) {
		struct anode *n = &ag->n[i];
		int64_t quiet = mono - n->last_seen;
		char why[96];
		struct gf_err e;
		if (n->st == AN_READY && quiet > t->notready_after_ms) {
			gf_note(why, sizeof(why), "no heartbeat for %lld s",
				(long long)(quiet / 1000));
			gf_err_clear(&e);
			gf__core_warn(gf_ctl_node_cordon(ctl, i, true, &e), &e,
				      why);
			n->st = AN_NOTREADY;
			gf__service_node_lost(ag->s, i);
			gf_note(n->why, sizeof(n->why), "%s", why);
			gf_log(GF_LOG_WARN, "serve",
			       "node '%s' not ready: %s; its jobs run on until "
			       "%lld s without one",
			       gf_ctl_cluster(ctl)->names[i], why,
			       (long long)(t->requeue_after_ms / 1000));
		} else if (n->st == AN_NOTREADY &&
			   quiet > t->requeue_after_ms) {
			gf_note(why, sizeof(why),
				"no heartbeat for %lld s: its jobs requeued",
				(long long)(quiet / 1000));
			struct gf_ctl_changes ch = { 0 };
			gf_err_clear(&e);
			gf__core_warn(gf_ctl_node_ready(ctl, i, false, why, now,
							&ch, &e),
				      &e, why);
			for (int k = 0; k < ch.n; k++)
				gf__batch_add(b, gf_ctl_job(ctl, ch.ids[k]));
			gf_ctl_changes_release(&ch);
			n->st = AN_LOST;
			gf__service_node_lost(ag->s, i);
			gf_note(n->why, sizeof(n->why), "%s", why);
			gf_log(GF_LOG_WARN, "serve", "node '%s' lost: %s",
			       gf_ctl_cluster(ctl)->names[i], why);
		}
	}
}

int gf__agents_commit(struct gf_agents *ag, struct gf_err *e)
{
	for (int i = 0; ag->ndirty > 0 && i < ag->cap; i++) {
		struct anode *n = &ag->n[i];
		if (!n->dirty)
			continue;
		int rc = gf_store_put_node(
			ag->s->store, gf_ctl_cluster(ag->s->ctl)->names[i],
			n->text, n->len, n->registered_ms, e);
		if (rc)
			return rc;
		n->dirty = false;
		ag->ndirty--;
	}
	return 0;
}
