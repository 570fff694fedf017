/*
 * join_apply.c - the loop's work on the worker: assignments made real (start
 * what is assigned and not running, stop what runs and is not assigned),
 * the worker's events into the ledger, the heartbeat's members, and the
 * acknowledged reports forgotten.
 *
 * An assignment is (job, attempt, replica).  Against the ledger entry of
 * (job, replica):
 *   none                      start it
 *   same attempt              nothing (it runs, its report is pending, or
 *                             it ended and is acknowledged: never again)
 *   older attempt, running    stop it; start the new one once it ended
 *                             and its report is acknowledged
 *   older attempt, ended      wait for the acknowledgement
 *   older attempt, done       start the new one
 * The assignments count as applied (the heartbeat says so, and the
 * controller may then declare a replica missing from "running" lost) only
 * when every one of them was started or is present.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/join_impl.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

/* A run that ended, as the report says it. */
static void ended(struct gf_le *le, const struct gf_worker_event *ev)
{
	struct gf_job_run *r = &le->run;
	memset(r, 0, sizeof(*r));
	r->attempt = le->attempt;
	r->replica = le->replica;
	r->started_ms = ev->start_ms > 0 ? ev->start_ms : ev->end_ms;
	r->ended_ms = ev->end_ms >= r->started_ms ? ev->end_ms : r->started_ms;
	if (r->started_ms <= 0)
		r->started_ms = r->ended_ms = gf_clock_wall_ms();
	r->exit_code = ev->signal ? 128 + ev->signal : ev->exit_code;
	if (r->exit_code < 0)
		r->exit_code = 255; /* unknown: a failure */
	r->gpu_ms = ev->gpu_ms;
	const char *why = ev->end == GF_WORKER_END_STOPPED	 ? le->stop_why
			  : ev->end == GF_WORKER_END_FENCED	 ? "fenced"
			  : ev->end == GF_WORKER_END_MAX_RUNTIME ? "max-runtime"
			  : ev->end == GF_WORKER_END_LOST	 ? "lost"
								 : "exited";
	gf_note(r->reason, sizeof(r->reason), "%s", *why ? why : "stopped");
	le->st = GF_LE_ENDED;
}

bool gf__join_events(struct gf_join *j)
{
	struct gf_worker_event ev[32];
	bool any = false;
	int n;
	while ((n = gf_worker_poll(j->w, ev, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			struct gf_le *le = gf__ledger_find(&j->led, ev[i].job,
							   ev[i].replica);
			int attempt = ev[i].attempt > 0 ? ev[i].attempt : 1;
			if (le && le->attempt != attempt)
				continue; /* an older run's end: not ours now */
			if (!le) {	  /* recovered after a restart */
				struct gf_err e;
				le = gf__ledger_add(&j->led, ev[i].job,
						    ev[i].replica, attempt, &e);
				if (!le) {
					gf_log(GF_LOG_ERROR, "join", "%s",
					       e.msg);
					continue;
				}
				le->gpus = UINT32_MAX; /* not known */
			}
			if (ev[i].kind == GF_WORKER_STARTED) {
				le->st = GF_LE_RUNNING;
				continue;
			}
			ended(le, &ev[i]);
			any = true;
			gf_log(GF_LOG_INFO, "join",
			       "%s replica %d attempt %d ended: %s, exit %d, "
			       "%.1f GPU-s",
			       le->job, le->replica, le->attempt,
			       le->run.reason, le->run.exit_code,
			       (double)le->run.gpu_ms / 1000.0);
		}
		if (n < 32)
			break;
	}
	return any;
}

static void stop(struct gf_join *j, struct gf_le *le, const char *why)
{
	if (le->st != GF_LE_RUNNING || le->stopping)
		return;
	struct gf_err e;
	le->stopping = true;
	gf_note(le->stop_why, sizeof(le->stop_why), "%s", why);
	if (gf_worker_stop(j->w, le->job, le->replica, le->attempt, &e) != 0)
		gf_log(GF_LOG_WARN, "join", "stop %s replica %d: %s", le->job,
		       le->replica, e.msg);
	else
		gf_log(GF_LOG_INFO, "join", "stopping %s replica %d: %s",
		       le->job, le->replica, why);
}

void gf__join_stop_all(struct gf_join *j, const char *why)
{
	for (int i = 0; i < j->led.n; i++)
		stop(j, &j->led.v[i], why);
}

/* The worker's assignment for a (borrowed strings): the placement is
 * the controller's value as it came. */
static void to_worker(const struct gf_join *j, const struct gf_np_assignment *a,
		      struct gf_assignment *w)
{
	memset(w, 0, sizeof(*w));
	w->job = a->ref.job;
	w->replica = a->ref.replica;
	w->attempt = a->ref.attempt;
	w->world_size = a->world_size;
	w->rank = a->rank;
	w->local_rank = a->local_rank;
	w->master_addr = a->master_addr;
	w->master_port = a->master_port;
	w->array_job = a->array_job; /* "" none */
	w->array_task = a->array_task;
	w->place = a->place;
	w->kind = a->mig ? GF_WORKER_GPU_MIG
		  : a->place.ngpus == 1 && a->place.gpu_milli < 1000
			  ? GF_WORKER_GPU_SHARE
			  : GF_WORKER_GPU_WHOLE;
	for (int g = 0; g < a->place.ngpus; g++)
		w->gpu_uuids[g] = a->uuids[g];
	if (a->mig) { /* the node's own name for it, fresh after a re-layout */
		const char *u = gf__join_mig_uuid(j, a->place.gpus[0],
						  a->place.mig_start);
		w->mig_uuid = *u ? u : a->mig_uuid;
	}
	w->cpu_milli = a->cpu_milli;
	w->max_runtime_ms = a->max_runtime_s * 1000;
	w->command = a->command ? a->command : "true";
	w->output = a->output;
	w->error = a->error;
	w->workdir = a->workdir[0] ? a->workdir : NULL;
	w->user = a->user;
	w->refuse_root = a->refuse_root;
}

/* The job's "env" (checked when read: nodeproto) as the worker's pairs,
 * pointing into *doc (free it with gf_jv_free after the start): their
 * count, or -1 when it cannot be read. */
static int env_pairs(const char *text, struct gf_jv **doc,
		     struct gf_worker_env *out)
{
	*doc = NULL;
	if (!text)
		return 0;
	struct gf_err e;
	if (gf_jv_parse(text, strlen(text), doc, &e) != 0)
		return -1;
	void *it = NULL;
	const struct gf_jv *v;
	const char *k;
	int n = 0;
	while (n < GF_WORKER_ENV_MAX && (k = gf_jv_next(*doc, &it, &v))) {
		out[n].name = k;
		out[n++].value = gf_jv_str(v);
	}
	return n;
}

/* Start a replica; a failure becomes its report. */
static void start(struct gf_join *j, const struct gf_np_assignment *a)
{
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_le *le = gf__ledger_add(&j->led, a->ref.job, a->ref.replica,
					  a->ref.attempt, &e);
	if (!le) {
		gf_log(GF_LOG_ERROR, "join", "%s replica %d: %s", a->ref.job,
		       a->ref.replica, e.msg);
		return; /* not applied: tried again next time */
	}
	for (int g = 0; g < a->place.ngpus; g++)
		le->gpus |= 1u << a->place.gpus[g];
	struct gf_assignment w;
	to_worker(j, a, &w);
	struct gf_jv *doc;
	struct gf_worker_env *env = gf_calloc(GF_WORKER_ENV_MAX, sizeof(*env));
	w.env = env;
	w.nenv = env_pairs(a->env, &doc, env);
	int rc = w.nenv < 0 ? gf_err_set(&e, GF_EPARSE,
					 "its environment cannot be read")
			    : gf_worker_start(j->w, &w, &e);
	gf_jv_free(doc);
	gf_free(env);
	if (rc == 0) {
		gf_log(GF_LOG_INFO, "join", "started %s replica %d attempt %d",
		       a->ref.job, a->ref.replica, a->ref.attempt);
		return;
	}
	gf_log(GF_LOG_WARN, "join", "%s replica %d: cannot start: %s",
	       a->ref.job, a->ref.replica, e.msg);
	le->st = GF_LE_ENDED;
	le->synthetic = true;
	memset(&le->run, 0, sizeof(le->run));
	le->run.attempt = le->attempt;
	le->run.replica = le->replica;
	le->run.started_ms = le->run.ended_ms = gf_clock_wall_ms();
	le->run.exit_code = 127;
	gf_note(le->run.reason, sizeof(le->run.reason), "start-failed: %s",
		e.msg);
}

static bool assigned(const struct gf_np_assignments *a, const struct gf_le *le)
{
	for (int i = 0; i < a->n; i++)
		if (a->v[i].ref.replica == le->replica &&
		    a->v[i].ref.attempt == le->attempt &&
		    !strcmp(a->v[i].ref.job, le->job))
			return true;
	return false;
}

bool gf__join_apply(struct gf_join *j, const struct gf_np_assignments *a)
{
	bool layouts = gf__join_mig(j, a);
	/* what runs and is no longer assigned stops; old tombstones go */
	for (int i = j->led.n - 1; i >= 0; i--) {
		struct gf_le *le = &j->led.v[i];
		if (assigned(a, le))
			continue;
		if (le->st == GF_LE_RUNNING)
			stop(j, le, "stopped");
		else if (le->st == GF_LE_DONE && a->generation >= le->done_gen)
			gf__ledger_remove(&j->led, le);
	}
	bool all = true;
	for (int i = 0; i < a->n; i++) {
		const struct gf_np_assignment *x = &a->v[i];
		struct gf_le *le =
			gf__ledger_find(&j->led, x->ref.job, x->ref.replica);
		if (le && le->attempt == x->ref.attempt)
			continue;
		if (le && le->attempt > x->ref.attempt)
			continue; /* an older assignment than we ran */
		if (le && le->st == GF_LE_DONE) {
			gf__ledger_remove(&j->led, le);
			le = NULL;
		}
		if (le) { /* an older attempt still here */
			stop(j, le, "stopped");
			all = false;
			continue;
		}
		if (j->fenced || (x->mig && !layouts &&
				  !*gf__join_mig_uuid(j, x->place.gpus[0],
						      x->place.mig_start))) {
			all = false;
			continue;
		}
		start(j, x);
		if (!gf__ledger_find(&j->led, x->ref.job, x->ref.replica))
			all = false;
	}
	if (all && layouts)
		j->applied = a->generation;
	return all && layouts;
}

void gf__join_jobs(struct gf_join *j, const struct gf_np_assignments *a)
{
	if (!j->o.agent)
		return;
	struct gf_dev_job *v = gf_calloc(GF_TEL_MAX_JOBS, sizeof(*v));
	int n = 0;
	for (int i = 0; i < a->n; i++) {
		const struct gf_np_assignment *x = &a->v[i];
		const struct gf_le *le =
			gf__ledger_find(&j->led, x->ref.job, x->ref.replica);
		if (!le || le->st != GF_LE_RUNNING ||
		    le->attempt != x->ref.attempt)
			continue;
		const char *mig = "";
		if (x->mig) {
			mig = gf__join_mig_uuid(j, x->place.gpus[0],
						x->place.mig_start);
			mig = *mig ? mig : x->mig_uuid;
		}
		for (int g = 0; g < x->place.ngpus && n < GF_TEL_MAX_JOBS;
		     g++) {
			struct gf_dev_job *d = &v[n++];
			d->gpu = (unsigned)x->place.gpus[g];
			gf_note(d->mig_uuid, sizeof(d->mig_uuid), "%s", mig);
			gf_note(d->job, sizeof(d->job), "%s", x->ref.job);
			gf_note(d->team, sizeof(d->team), "%s",
				x->team[0] ? x->team : "default");
		}
	}
	gf_agent_set_jobs(j->o.agent, v, n);
	gf_free(v);
}

/* One device's pods into the heartbeat's gpu_pods (room made). */
static void add_dev_pods(struct gf_np_heartbeat *hb,
			 const struct gf_dev_pods *dp)
{
	struct gf_np_gpu_pods *gp = &hb->gpu_pods[hb->ngpu_pods];
	if (!dp->npods || !dp->uuid[0] ||
	    gf_fmt(gp->uuid, sizeof(gp->uuid), "%s", dp->uuid) != 0)
		return; /* a UUID too long is no device's: left out */
	hb->ngpu_pods++;
	for (int k = 0; k < dp->npods && k < GF_NP_PODS_PER_GPU; k++)
		if (gf_fmt(gp->pods[gp->npods], GF_NP_POD_UID_MAX, "%s",
			   dp->pods[k]) == 0)
			gp->npods++;
}

void gf__join_heartbeat(struct gf_join *j, struct gf_np_heartbeat *hb)
{
	memset(hb, 0, sizeof(*hb));
	hb->generation = j->applied;
	if (j->o.agent) {
		/* on the heap: each GPU's per-device pods make it 58 KiB */
		struct gf_gpu_health *h =
			gf_calloc(GF_CNODE_MAX_GPUS, sizeof(*h));
		int n = gf_agent_health(j->o.agent, h, GF_CNODE_MAX_GPUS);
		for (int i = 0; i < n && i < GF_CNODE_MAX_GPUS; i++) {
			hb->health[i].index = (int)h[i].index;
			hb->health[i].healthy = h[i].healthy;
			gf_note(hb->health[i].reason,
				sizeof(hb->health[i].reason), "%s",
				h[i].reason);
			hb->nhealth = i + 1;
		}
		/* the pods on each GPU or MIG instance, by its UUID */
		int ndev = 0;
		for (int i = 0; i < n && i < GF_CNODE_MAX_GPUS; i++)
			ndev += h[i].ndevs;
		hb->gpu_pods =
			gf_calloc((size_t)ndev + 1, sizeof(*hb->gpu_pods));
		for (int i = 0; i < n && i < GF_CNODE_MAX_GPUS; i++)
			for (int d = 0; d < h[i].ndevs &&
					hb->ngpu_pods < GF_NP_MAX_GPU_PODS;
			     d++)
				add_dev_pods(hb, &h[i].devs[d]);
		gf_free(h);
	}
	int nrun = 0, nrep = 0;
	for (int i = 0; i < j->led.n; i++) {
		nrun += j->led.v[i].st == GF_LE_RUNNING;
		nrep += j->led.v[i].st == GF_LE_ENDED;
	}
	hb->running = gf_calloc((size_t)nrun + 1, sizeof(*hb->running));
	hb->reports = gf_calloc((size_t)nrep + 1, sizeof(*hb->reports));
	for (int i = 0; i < j->led.n; i++) {
		const struct gf_le *le = &j->led.v[i];
		struct gf_np_ref ref = { .attempt = le->attempt,
					 .replica = le->replica };
		/* the same size (GF_JOB_ID_MAX): never cut */
		memcpy(ref.job, le->job, sizeof(ref.job));
		if (le->st == GF_LE_RUNNING && hb->nrunning < GF_NP_MAX_RUNNING)
			hb->running[hb->nrunning++] = ref;
		if (le->st == GF_LE_ENDED &&
		    hb->nreports < GF_JOIN_REPORTS_PER_BEAT) {
			struct gf_np_report *r = &hb->reports[hb->nreports++];
			r->ref = ref;
			r->run = le->run;
		}
	}
}

void gf__join_acked(struct gf_join *j, const struct gf_np_ack *a)
{
	for (int k = 0; k < a->nacked; k++) {
		const struct gf_np_ref *ref = &a->acked[k];
		struct gf_le *le =
			gf__ledger_find(&j->led, ref->job, ref->replica);
		if (!le || le->attempt != ref->attempt || le->st != GF_LE_ENDED)
			continue;
		struct gf_err e;
		/* the tombstone first: a crash between the two leaves the
		 * run reported again, never started again */
		if (gf__ledger_done(&j->led, le, a->generation, &e) != 0) {
			gf_log(GF_LOG_WARN, "join", "%s", e.msg);
			continue;
		}
		if (!le->synthetic &&
		    gf_worker_forget(j->w, le->job, le->replica, le->attempt,
				     &e) != 0 &&
		    e.code != GF_ENOTFOUND)
			gf_log(GF_LOG_WARN, "join", "forget %s replica %d: %s",
			       le->job, le->replica, e.msg);
	}
}
