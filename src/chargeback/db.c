/*
 * db.c - the controller's store as chargeback records: every run kept
 * (one replica of one attempt of a job, as its node reported it when it
 * ended) becomes a record on the run's node from its start to its end,
 * with the job's team, id, class and name, and the GPUs the job asked
 * for: whole GPUs, a milli share (gpu_milli / 1000), or one MIG instance
 * of its profile (the job's GPU model, or else its node's asset row, to
 * size it).  CPU and memory are the job's requests; the store keeps no
 * usage, so none is claimed.  A job running now adds, per replica whose
 * run of its current attempt is not kept yet, a record from the attempt's
 * start to now (reason "running"): the window's end, or now when the
 * window reaches past it, bounds what it is charged.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/job.h>

#include "chargeback/chargeback.h"
#include "store/store.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

struct jobrow {
	uint64_t seq;
	uint32_t team, id, labels_base, model, mig;
	double gpus, cpu, mem_gib;
	char class_name[GF_CLASS_NAME_MAX];
	char name[GF_JOB_NAME_MAX];
};

/* A replica running now (its job's current attempt). */
struct live {
	uint64_t seq;
	int attempt, replica;
	int64_t start_ms;
	char node[GF_JOB_NODE_MAX];
	bool ended; /* its run is kept: the record is the run's */
};

struct ctx {
	struct gf_charge_input *in;
	struct jobrow *j;
	size_t n, alloc;
	struct live *live; /* in (seq, replica) order */
	size_t nlive, live_alloc;
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
	for (int r = 0; job->state == GF_JOB_RUNNING && job->place &&
			job->started_ms > 0 && r < s->replicas;
	     r++) {
		if (c->nlive == c->live_alloc) {
			c->live_alloc = c->live_alloc ? c->live_alloc * 2 : 64;
			c->live = gf_reallocarray(c->live, c->live_alloc,
						  sizeof(*c->live));
		}
		struct live *l = &c->live[c->nlive++];
		memset(l, 0, sizeof(*l));
		l->seq = job->seq;
		l->attempt = job->attempts;
		l->replica = r;
		l->start_ms = job->started_ms;
		gf_note(l->node, sizeof(l->node), "%s",
			job->place[r].node_name);
	}
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

static int add_record(struct ctx *c, const struct jobrow *j,
		      const struct gf_job_run *run);

/* The running replica a kept run is of, or NULL. */
static struct live *find_live(const struct ctx *c, const struct gf_job_run *r)
{
	size_t lo = 0, hi = c->nlive;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct live *l = &c->live[mid];
		if (l->seq < r->seq ||
		    (l->seq == r->seq && l->replica < r->replica))
			lo = mid + 1;
		else
			hi = mid;
	}
	struct live *l = lo < c->nlive ? &c->live[lo] : NULL;
	return l && l->seq == r->seq && l->replica == r->replica &&
			       l->attempt == r->attempt
		       ? l
		       : NULL;
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
	struct live *l = find_live(c, run);
	if (l)
		l->ended = true;
	return add_record(c, j, run);
}

/* The records of the replicas running now, to now_ms. */
static int take_live(struct ctx *c, int64_t now_ms)
{
	for (size_t i = 0; i < c->nlive; i++) {
		const struct live *l = &c->live[i];
		const struct jobrow *j = find_job(c, l->seq);
		if (l->ended || !j || now_ms <= l->start_ms)
			continue;
		struct gf_job_run run;
		memset(&run, 0, sizeof(run));
		run.seq = l->seq;
		run.attempt = l->attempt;
		run.replica = l->replica;
		memcpy(run.node, l->node, sizeof(run.node));
		run.started_ms = l->start_ms;
		run.ended_ms = now_ms;
		memcpy(run.reason, "running", sizeof("running"));
		if (add_record(c, j, &run))
			return c->rc;
	}
	return 0;
}

/* Run `run` of job j as a record; 0, or 1 with c->rc set. */
static int add_record(struct ctx *c, const struct jobrow *j,
		      const struct gf_job_run *run)
{
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
		  const char *cluster, int64_t now_ms, struct gf_err *e)
{
	struct gf_store *s;
	int rc = gf_store_open(url, &s, e);
	if (rc)
		return rc;
	struct ctx c = { .in = in, .cluster = intern(in, cluster), .e = e };
	rc = gf_store_load_jobs(s, take_job, &c, e);
	if (rc == 0)
		rc = gf_store_load_runs(s, take_run, &c, e);
	if (rc == 0 && c.rc == 0)
		rc = take_live(&c, now_ms);
	if (c.rc)
		rc = c.rc;
	gf_free(c.j);
	gf_free(c.live);
	gf_store_close(s);
	return rc;
}

/* --- assets from the store's nodes ------------------------------------ */

struct nodes_ctx {
	struct gf_charge_input *in;
	const struct gf_cb_prices *p;
	int64_t start_ms, end_ms;
	uint32_t cluster;
	struct gf_err *e;
};

/* One stored node (its inventory, as it registered) priced over the
 * window; 0 or an error naming the node. */
static int take_node(const char *name, const char *inv, size_t len,
		     int64_t registered_ms, void *arg)
{
	(void)registered_ms;
	struct nodes_ctx *c = arg;
	struct gf_jv *v;
	struct gf_err pe;
	if (gf_jv_parse(inv, len, &v, &pe) != 0)
		return gf_err_set(c->e, GF_EPARSE,
				  "node '%s' in the store: its inventory: %s",
				  name, pe.msg);
	int64_t cpu = 0, mem = 0;
	const struct gf_jv *gpus = gf_jv_get(v, "gpus");
	const char *model = gf_jv_str(gf_jv_get(v, "gpu_model"));
	(void)gf_jv_int(gf_jv_get(v, "cpu_milli"), &cpu);
	(void)gf_jv_int(gf_jv_get(v, "memory_mib"), &mem);
	int ngpus = gpus ? (int)gf_jv_len(gpus) : 0;
	model = model && ngpus ? model : "";
	struct gf_charge_asset a = {
		.cluster = c->cluster,
		.node = intern(c->in, name),
		.gpu_model = intern(c->in, model),
		.start_ms = c->start_ms,
		.end_ms = c->end_ms,
		.gpus = ngpus,
		.cpu_cores = (double)cpu / 1000.0,
		.ram_gib = (double)mem / 1024.0,
		.gpu_price_hr = ngpus ? gf_cb_gpu_price(c->p, model) : 0,
		.cpu_price_hr = c->p->cpu_core_hr,
		.ram_price_hr = c->p->ram_gib_hr,
	};
	int rc = 0;
	if (ngpus && isnan(a.gpu_price_hr))
		rc = gf_err_set(c->e, GF_EINVAL,
				"no price for GPU model '%s' (node '%s'): add "
				"it to the prices",
				model, name);
	else if (gf_charge_add_asset(c->in, &a) != 0)
		rc = gf_err_set(c->e, GF_ETOOBIG, "node '%s': too many assets",
				name);
	gf_jv_free(v);
	return rc;
}

int gf_cb_db_assets(struct gf_charge_input *in, const char *url,
		    const char *cluster, const struct gf_cb_prices *p,
		    int64_t start_ms, int64_t end_ms, struct gf_err *e)
{
	struct gf_store *s;
	int rc = gf_store_open(url, &s, e);
	if (rc)
		return rc;
	struct nodes_ctx c = {
		in, p, start_ms, end_ms, intern(in, cluster), e
	};
	rc = gf_store_load_nodes(s, take_node, &c, e);
	gf_store_close(s);
	return rc;
}
