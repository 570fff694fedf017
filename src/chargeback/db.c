/*
 * db.c - the controller's store as chargeback records: every run kept
 * (one replica of one attempt of a job, as its node reported it when it
 * ended) becomes a record on the run's node from its start to its end,
 * with the job's team, id, class and name, and the GPUs the job asked
 * for: whole GPUs, a milli share (gpu_milli / 1000), or one MIG instance
 * of its profile (the job's GPU model, or else its node's asset row, to
 * size it).  CPU and memory are the job's requests; the store keeps no
 * usage, so none is claimed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/job.h>

#include "chargeback/chargeback.h"
#include "store/store.h"
#include "util/fmt.h"
#include "util/mem.h"

struct jobrow {
	uint64_t seq;
	uint32_t team, id, labels_base, model, mig;
	double gpus, cpu, mem_gib;
	char class_name[GF_CLASS_NAME_MAX];
	char name[GF_JOB_NAME_MAX];
};

struct ctx {
	struct gf_charge_input *in;
	struct jobrow *j;
	size_t n, alloc;
	uint32_t cluster;
	struct gf_err *e;
	int rc;
};

static uint32_t intern(struct gf_charge_input *in, const char *s)
{
	uint32_t id = 0;
	/* too long: "" (0) */
	(void)!gf_charge_intern(in, s, strnlen(s, GF_CHARGE_STR_MAX), &id);
	return id;
}

static int take_job(struct gf_job *job, void *arg)
{
	struct ctx *c = arg;
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 256;
		c->j = gf_reallocarray(c->j, c->alloc, sizeof(*c->j));
	}
	struct jobrow *w = &c->j[c->n++];
	const struct gf_job_spec *s = &job->spec;
	memset(w, 0, sizeof(*w));
	w->seq = job->seq;
	w->team = intern(c->in, s->team);
	w->id = intern(c->in, job->id);
	w->model = intern(c->in, s->gpu_model);
	w->mig = intern(c->in, s->mig_profile);
	w->gpus = s->mig_profile[0]  ? 1
		  : s->gpu_milli > 0 ? s->gpu_milli / 1000.0
				     : (double)s->gpus;
	w->cpu = s->cpu_milli / 1000.0;
	w->mem_gib = (double)s->memory_mib / 1024.0;
	gf_note(w->class_name, sizeof(w->class_name), "%s", s->class_name);
	gf_note(w->name, sizeof(w->name), "%s", s->name);
	gf_job_release(job);
	gf_free(job);
	return 0;
}

static const struct jobrow *find_job(const struct ctx *c, uint64_t seq)
{
	size_t lo = 0, hi = c->n; /* loaded in seq order */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->j[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->j[lo].seq == seq ? &c->j[lo] : NULL;
}

static void clean(char *s)
{
	for (; *s; s++)
		if (*s == ';' || *s == '=')
			*s = '_';
}

static int take_run(const struct gf_job_run *run, void *arg)
{
	struct ctx *c = arg;
	const struct jobrow *j = find_job(c, run->seq);
	if (!j) {
		c->rc = gf_err_set(c->e, GF_EPARSE,
				   "run of job %" PRIu64 " attempt %d: no such "
				   "job in the store",
				   run->seq, run->attempt);
		return 1;
	}
	char labels[GF_CHARGE_STR_MAX], cls[GF_CLASS_NAME_MAX],
		name[GF_JOB_NAME_MAX], reason[GF_JOB_REASON_MAX];
	gf_note(cls, sizeof(cls), "%s", j->class_name);
	gf_note(name, sizeof(name), "%s", j->name);
	gf_note(reason, sizeof(reason), "%s", run->reason);
	clean(cls);
	clean(name);
	clean(reason);
	gf_note(labels, sizeof(labels),
		"class=%s;job_name=%.60s;attempt=%d;reason=%.40s", cls, name,
		run->attempt, reason);
	char container[16];
	if (gf_fmt(container, sizeof(container), "%d", run->replica)) {
		c->rc = GF_ETOOBIG; /* an int always fits: never */
		return 1;
	}
	struct gf_charge_extra xe;
	memset(&xe, 0, sizeof(xe));
	xe.labels = intern(c->in, labels);
	xe.gpu_model = j->model;
	xe.mig_profile = j->mig;
	struct gf_charge_record r;
	memset(&r, 0, sizeof(r));
	r.cluster = c->cluster;
	r.node = intern(c->in, run->node);
	r.ns = j->team;
	r.pod = j->id;
	r.container = intern(c->in, container);
	r.start_ms = run->started_ms;
	r.end_ms = run->ended_ms;
	r.gpus = j->gpus;
	r.cpu_req = j->cpu;
	r.cpu_use = NAN;
	r.ram_req = j->mem_gib;
	r.ram_use = NAN;
	r.other_cost = NAN;
	char who[96];
	gf_note(who, sizeof(who), "run %s/%d/%d", gf_charge_str(c->in, j->id),
		run->attempt, run->replica);
	r.extra = gf_charge_extra_id(c->in, &xe);
	r.src = intern(c->in, who);
	r.line = 0;
	if (gf_charge_add_record(c->in, &r)) {
		c->rc = gf_err_set(c->e, GF_ETOOBIG, "more than %u records",
				   GF_CHARGE_RECORDS_MAX - 1);
		return 1;
	}
	return 0;
}

int gf_cb_read_db(struct gf_charge_input *in, const char *url,
		  const char *cluster, struct gf_err *e)
{
	struct gf_store *s;
	int rc = gf_store_open(url, &s, e);
	if (rc)
		return rc;
	struct ctx c = { in, NULL, 0, 0, intern(in, cluster), e, 0 };
	rc = gf_store_load_jobs(s, take_job, &c, e);
	if (rc == 0)
		rc = gf_store_load_runs(s, take_run, &c, e);
	if (c.rc)
		rc = c.rc;
	gf_free(c.j);
	gf_store_close(s);
	return rc;
}
