/*
 * jobs_check.c - gf_ctl_check: every invariant of the scheduling core,
 * recomputed from the jobs and compared with what the core keeps:
 *   the engine's own check (gf_sched_check);
 *   each job (gf_job_check); a RUNNING job holds exactly spec.replicas
 *   placements, on nodes that exist, all in its block, and sits in the
 *   running list; the counts of pending and running jobs;
 *   no GPU given twice: per node and GPU the placements' shares sum to
 *   what the engine says is taken (a held GPU's share counted from what
 *   the engine withholds), CPU and memory likewise, a GPU in MIG mode
 *   holds no share and withholds a whole GPU, and each MIG instance is
 *   used by exactly the job whose placement names it;
 *   the nodes' states (jobs_health.c, gf__nodes_check): cordons and holds in
 *   the engine, no running replica on a node made not ready, nothing
 *   started on a node not ready or an unhealthy GPU since it became so,
 *   running and held replicas per node; the admission groups (admit.c);
 *   quota figures and fair-share usage per team equal a fresh sum over
 *   its running jobs; the pending counters per team and class;
 *   each PENDING job is once in its queue and once in the order;
 *   the blocks' free GPU figures; the job table (order, ids).
 * Debug builds run it after every pass (schedule.c); tests after every
 * step.  O(jobs + nodes x GPUs); allocates its scratch.
 */
#include <stdio.h>
#include <string.h>

#include "core/jobs/admit.h"
#include "core/jobs/arrays.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_health.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/quota.h"
#include "util/fmt.h"
#include "util/mem.h"

struct tally {
	int64_t *cpu, *mem; /* per node */
	int32_t *gpu;	    /* per node x GF_CNODE_MAX_GPUS */
	int *nrep;	    /* per node: running replicas */
	int *inst_user;	    /* per MIG instance */
	struct gf__use *use;
	int64_t *run_milli;
	int *pend_n;	     /* per team x class */
	int64_t *pend_milli; /* per team x class */
	uint8_t *seen;	     /* per jrec */
	int pending, running;
};

static int fail(char *msg, unsigned size, const char *what, const char *id)
{
	gf_note(msg, size, "%s%s%s", id ? id : "", id ? ": " : "", what);
	return GF_EINVAL;
}

/* A running replica's placement p, or a held one's (held: any block). */
static int check_place(const struct gf_ctl *ctl, int jid,
		       const struct gf_job_place *p, bool held, struct tally *t,
		       char *msg, unsigned size)
{
	const struct gf__jrec *j = &ctl->jobs.jr[jid];
	const char *id = j->job->id;
	if (p->node < 0 || p->node >= ctl->c->n ||
	    strcmp(ctl->c->names[p->node], p->node_name) != 0)
		return fail(msg, size, "placement on an unknown node", id);
	if (!held && ctl->nodes.cfg[p->node].block != j->job->block)
		return fail(msg, size, "replica outside the job's block", id);
	t->cpu[p->node] += j->req.cpu;
	t->mem[p->node] += j->req.mem;
	t->nrep[p->node]++;
	if (j->prof >= 0) {
		int x = gf__mig_find(ctl, p->node, p->gpus[0], p->mig_start);
		if (x < 0 || ctl->mig.inst[x].prof != j->prof ||
		    ctl->mig.inst[x].user != jid || t->inst_user[x] >= 0)
			return fail(msg, size,
				    "MIG placement and instance disagree", id);
		t->inst_user[x] = jid;
		return 0;
	}
	for (int g = 0; g < p->ngpus; g++) {
		if (p->gpus[g] >= ctl->c->nodes[p->node].ngpus)
			return fail(msg, size, "GPU the node lacks", id);
		t->gpu[p->node * GF_CNODE_MAX_GPUS + p->gpus[g]] +=
			p->gpu_milli;
	}
	return 0;
}

static int check_job(const struct gf_ctl *ctl, int jid, struct tally *t,
		     char *msg, unsigned size)
{
	const struct gf__jrec *j = &ctl->jobs.jr[jid];
	const struct gf_job *job = j->job;
	int rc = gf_job_check(job, msg, size);
	if (rc)
		return rc;
	int listed = 0;
	for (int k = 0; k < ctl->jobs.holding.n; k++)
		listed += ctl->jobs.holding.v[k] == jid;
	if (listed != (job->nheld > 0))
		return fail(msg, size, "holding list and held replicas differ",
			    job->id);
	for (int k = 0; k < job->nheld; k++)
		if ((rc = check_place(ctl, jid, &job->held[k].place, true, t,
				      msg, size)))
			return rc;
	int tc = j->team * GF_CTL_MAX_CLASSES + j->cls;
	if (job->state == GF_JOB_PENDING) {
		t->pending++;
		t->pend_n[tc]++;
		t->pend_milli[tc] += j->milli;
		if (!j->queued || !j->in_order)
			return fail(msg, size, "pending but not queued",
				    job->id);
	}
	if (job->state != GF_JOB_RUNNING)
		return j->run_pos == -1
			       ? 0
			       : fail(msg, size,
				      "in the running list, not running",
				      job->id);
	t->running++;
	if (j->run_pos < 0 || j->run_pos >= ctl->jobs.running.n ||
	    ctl->jobs.running.v[j->run_pos] != jid)
		return fail(msg, size, "running, not in the running list",
			    job->id);
	for (int r = 0; r < job->spec.replicas; r++)
		if ((rc = check_place(ctl, jid, &job->place[r], false, t, msg,
				      size)))
			return rc;
	gf__use_of(ctl, j, job->place, &t->use[j->team], +1);
	t->run_milli[j->team] += j->milli;
	return 0;
}

static int check_nodes(const struct gf_ctl *ctl, const struct tally *t,
		       char *msg, unsigned size)
{
	for (int i = 0; i < ctl->c->n; i++) {
		const struct gf_cnode *n = &ctl->c->nodes[i];
		const char *name = ctl->c->names[i];
		if (n->cpu_cap - n->cpu_left != t->cpu[i] ||
		    n->mem_cap - n->mem_left != t->mem[i])
			return fail(msg, size,
				    "CPU or memory taken differs from the "
				    "running jobs'",
				    name);
		uint32_t mig = 0;
		for (int x = ctl->mig.node_inst[i];
		     x < ctl->mig.node_inst[i + 1]; x++)
			mig |= UINT32_C(1) << ctl->mig.inst[x].gpu;
		for (int g = 0; g < n->ngpus; g++) {
			int32_t used = t->gpu[i * GF_CNODE_MAX_GPUS + g];
			int free = gf_cluster_gpu_free(ctl->c, i, g);
			bool ok = (mig >> g & 1)
					  ? used == 0 && free == GF_GPU_MILLI &&
						    n->gpu_left[g] == 0
					  : used == GF_GPU_MILLI - free;
			if (!ok) {
				gf_note(msg, size,
					"%s: GPU %d: jobs hold %d milli, the "
					"engine says %d free%s",
					name, g, used, free,
					(mig >> g & 1) ? " (MIG mode)" : "");
				return GF_EINVAL;
			}
		}
	}
	int used = 0;
	for (int x = 0; x < ctl->mig.ninst; x++) {
		if (ctl->mig.inst[x].user != t->inst_user[x])
			return fail(msg, size,
				    "a MIG instance's user runs no placement "
				    "on it",
				    ctl->c->names[ctl->mig.inst[x].node]);
		used += ctl->mig.inst[x].user >= 0;
	}
	if (used != ctl->mig.used)
		return fail(msg, size, "MIG instances used miscounted", NULL);
	return 0;
}

static int check_teams(const struct gf_ctl *ctl, const struct tally *t,
		       char *msg, unsigned size)
{
	for (int k = 0; k < ctl->teams.n; k++) {
		const struct gf__team *tm = &ctl->teams.t[k];
		if (memcmp(&tm->use, &t->use[k], sizeof(tm->use)) != 0)
			return fail(msg, size,
				    "quota figures differ from its running "
				    "jobs'",
				    tm->name);
		if (tm->run_milli != t->run_milli[k])
			return fail(msg, size,
				    "fair-share usage differs from its "
				    "running jobs'",
				    tm->name);
		for (int c = 0; c < GF_CTL_MAX_CLASSES; c++) {
			int tc = k * GF_CTL_MAX_CLASSES + c;
			if (tm->pend_n[c] != t->pend_n[tc] ||
			    tm->pend_milli[c] != t->pend_milli[tc])
				return fail(msg, size, "pending counters",
					    tm->name);
		}
	}
	if (t->pending != ctl->jobs.npending ||
	    t->running != ctl->jobs.running.n)
		return fail(msg, size, "pending or running jobs miscounted",
			    NULL);
	return 0;
}

/* Each PENDING job once in its own queue and once in the order. */
static int check_queues(const struct gf_ctl *ctl, struct tally *t, char *msg,
			unsigned size)
{
	int inq = 0, ino = 0;
	memset(t->seen, 0, (size_t)ctl->jobs.n + 1);
	for (int k = 0; k < ctl->teams.n; k++)
		for (int c = 0; c < ctl->cfg.nclasses; c++) {
			const struct gf__queue *q = &ctl->teams.t[k].q[c];
			for (int i = 0; i < q->n; i++) {
				const struct gf__jrec *j =
					&ctl->jobs.jr[q->ids[i]];
				if (t->seen[q->ids[i]] || j->team != k ||
				    j->cls != c)
					return fail(msg, size,
						    "in a queue twice or not "
						    "its own",
						    j->job->id);
				t->seen[q->ids[i]] = 1;
				inq += j->job->state == GF_JOB_PENDING;
			}
		}
	for (int i = 0; i < ctl->jobs.order.n; i++) {
		const struct gf__jrec *j = &ctl->jobs.jr[ctl->jobs.order.v[i]];
		if (t->seen[ctl->jobs.order.v[i]] & 2)
			return fail(msg, size, "in the order twice",
				    j->job->id);
		t->seen[ctl->jobs.order.v[i]] |= 2;
		ino += j->job->state == GF_JOB_PENDING;
	}
	if (inq != ctl->jobs.npending || ino != ctl->jobs.npending)
		return fail(msg, size, "queues or order miss pending jobs",
			    NULL);
	return 0;
}

static int check_table(const struct gf_ctl *ctl, char *msg, unsigned size)
{
	for (int i = 0; i < ctl->jobs.n; i++) {
		const struct gf_job *job =
			ctl->jobs.jr[ctl->jobs.by_seq[i]].job;
		if (i > 0 &&
		    ctl->jobs.jr[ctl->jobs.by_seq[i - 1]].job->seq >= job->seq)
			return fail(msg, size, "job table out of order",
				    job->id);
		if (gf_ctl_job(ctl, job->id) != job)
			return fail(msg, size, "id not found", job->id);
	}
	for (int b = 0; b < ctl->nodes.nblk; b++) {
		int64_t idle = 0, nfree = 0;
		for (int k = 0; k < ctl->nodes.blk[b].n; k++) {
			idle += ctl->c->nodes[ctl->nodes.blk[b].nodes[k]].idle;
			nfree +=
				ctl->c->nodes[ctl->nodes.blk[b].nodes[k]].nfree;
		}
		if (idle != ctl->nodes.blk[b].idle ||
		    nfree != ctl->nodes.blk[b].nfree)
			return fail(msg, size, "block GPU figures", NULL);
	}
	return 0;
}

static void tally_free(struct tally *t)
{
	gf_free(t->cpu);
	gf_free(t->mem);
	gf_free(t->gpu);
	gf_free(t->nrep);
	gf_free(t->inst_user);
	gf_free(t->use);
	gf_free(t->run_milli);
	gf_free(t->pend_n);
	gf_free(t->pend_milli);
	gf_free(t->seen);
}

int gf_ctl_check(const struct gf_ctl *ctl, char *msg, unsigned size)
{
	char sub[200];
	int rc = gf_sched_check(ctl->s, sub, sizeof(sub));
	if (rc) {
		gf_note(msg, size, "engine: %s", sub);
		return GF_EINVAL;
	}
	size_t n = (size_t)ctl->c->n + 1, nt = (size_t)ctl->teams.n + 1;
	struct tally t = {
		.cpu = gf_calloc(n, sizeof(int64_t)),
		.mem = gf_calloc(n, sizeof(int64_t)),
		.gpu = gf_calloc(n * GF_CNODE_MAX_GPUS, sizeof(int32_t)),
		.nrep = gf_calloc(n, sizeof(int)),
		.inst_user = gf_calloc((size_t)ctl->mig.ninst + 1, sizeof(int)),
		.use = gf_calloc(nt, sizeof(struct gf__use)),
		.run_milli = gf_calloc(nt, sizeof(int64_t)),
		.pend_n = gf_calloc(nt * GF_CTL_MAX_CLASSES, sizeof(int)),
		.pend_milli =
			gf_calloc(nt * GF_CTL_MAX_CLASSES, sizeof(int64_t)),
		.seen = gf_calloc((size_t)ctl->jobs.n + 1, 1),
	};
	for (int x = 0; x < ctl->mig.ninst; x++)
		t.inst_user[x] = -1;
	for (int i = 0; i < ctl->jobs.n && rc == 0; i++)
		rc = check_job(ctl, i, &t, msg, size);
	if (rc == 0)
		rc = check_nodes(ctl, &t, msg, size);
	if (rc == 0)
		rc = check_teams(ctl, &t, msg, size);
	if (rc == 0)
		rc = check_queues(ctl, &t, msg, size);
	if (rc == 0)
		rc = check_table(ctl, msg, size);
	if (rc == 0)
		rc = gf__nodes_check(ctl, t.nrep, msg, size);
	if (rc == 0)
		rc = gf__admit_check(ctl, msg, size);
	if (rc == 0 && gf__arrays_check(ctl, msg, size))
		rc = GF_EINVAL;
	tally_free(&t);
	if (rc == 0 && size)
		msg[0] = '\0';
	return rc;
}
