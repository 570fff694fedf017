/*
 * ctl_services.c - inference services: a named job spec and a replica count,
 * which the controller keeps true by submitting jobs (each marked with
 * the service's name) or cancelling them.  `gpufleet autoscale run
 * --service NAME` changes the count through PUT /v1/services/NAME/
 * replicas, as an HPA changes a Deployment's.
 *
 *   PUT    /v1/services/{name}            {"replicas": N, "job": {job body}}
 *   PUT    /v1/services/{name}/replicas   {"replicas": N}
 *   GET    /v1/services[/{name}]          the count asked, and how many
 *                                         of its jobs run and wait
 *   DELETE /v1/services/{name}            its jobs cancelled, it is gone
 *
 * The scheduler thread owns the services (as the core): each turn it
 * applies the requests, then, when something changed or a second passed,
 * counts every service's live jobs (pending or running) and submits the
 * missing ones or cancels the surplus (newest pending first, then newest
 * running), so a replica that ended or failed is replaced.  Services are
 * stored (spec and count) after the turn's jobs; a restart reloads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/jobjson.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define RECONCILE_EVERY_MS 1000

struct gf_svc {
	char name[GF_JOB_NAME_MAX];
	char *text; /* the job body as it came (stored) */
	size_t len;
	struct gf_job_spec spec;
	int replicas;
	bool dirty, deleted;
};

/* A request about a service: PUT, its replicas, DELETE. */
enum svc_what { SVC_PUT, SVC_SCALE, SVC_DELETE };

struct svc_op {
	struct gf_op op;
	enum svc_what what;
	char name[GF_JOB_NAME_MAX];
	int64_t replicas;	 /* PUT, scale */
	struct gf_job_spec spec; /* PUT (owned until taken) */
	char *body;		 /* PUT: the job as stored (owned) */
	size_t body_len;
};

static struct svc_op *svc_x(struct gf_op *op)
{
	return (struct svc_op *)op;
}

static const struct gf_op_kind svc_kind;

static struct gf_svc *find(struct gf_service *s, const char *name)
{
	for (int i = 0; i < s->nsvc; i++)
		if (!s->svc[i].deleted && !strcmp(s->svc[i].name, name))
			return &s->svc[i];
	return NULL;
}

static struct gf_svc *add(struct gf_service *s, const char *name)
{
	if (s->nsvc == s->svc_cap) {
		s->svc_cap = s->svc_cap ? 2 * s->svc_cap : 16;
		s->svc = gf_reallocarray(s->svc, (size_t)s->svc_cap,
					 sizeof(*s->svc));
	}
	struct gf_svc *v = &s->svc[s->nsvc++];
	memset(v, 0, sizeof(*v));
	/* callers pass a name that fits (checked where it came in) */
	size_t n = strnlen(name, sizeof(v->name) - 1);
	memcpy(v->name, name, n);
	v->name[n] = '\0';
	return v;
}

static void drop(struct gf_svc *v)
{
	gf_free(v->text);
	gf_job_spec_release(&v->spec);
	v->text = NULL;
}

static void services_free(struct gf_service *s)
{
	for (int i = 0; i < s->nsvc; i++)
		drop(&s->svc[i]);
	gf_free(s->svc);
	s->svc = NULL;
	s->nsvc = s->svc_cap = 0;
}

/* A service's job body into spec (the service's name marked); 0 or an
 * error in e. */
static int parse_spec(const char *name, const char *text, size_t len,
		      struct gf_job_spec *spec, struct gf_err *e)
{
	struct gf_jv *v = NULL;
	int rc = gf_jv_parse(text, len, &v, e);
	memset(spec, 0, sizeof(*spec));
	if (rc == 0)
		rc = gf_jobjson_spec(v, spec, e);
	const struct gf_jv *arr = rc == 0 ? gf_jv_get(v, "array") : NULL;
	if (rc == 0 && ((arr && gf_jv_type(arr) != GF_JV_NULL) ||
			spec->dependency[0] || spec->hold)) /* issue 21 */
		rc = gf_err_set(e, GF_EINVAL,
				"array, dependency and hold are not for a "
				"service's replicas");
	/* a service's name is shorter than a job's (the handler checks;
	 * a stored one is refused below) */
	if (rc == 0 &&
	    (gf_fmt(spec->service, sizeof(spec->service), "%s", name) != 0))
		rc = gf_err_set(e, GF_EINVAL, "service '%.48s...': too long",
				name);
	if (rc == 0 && !spec->name[0])
		GF__COPY_SAME(spec->name, spec->service);
	gf_jv_free(v);
	return rc;
}

static int take_stored(const char *name, const char *text, size_t len,
		       int replicas, void *arg)
{
	struct gf_service *s = arg;
	struct gf_err e;
	if (strlen(name) >= sizeof(s->svc->name)) {
		gf_log(GF_LOG_ERROR, "serve",
		       "stored service '%.64s...' not restored: its name is "
		       "longer than %zu bytes",
		       name, sizeof(s->svc->name) - 1);
		return 0;
	}
	struct gf_svc *v = add(s, name);
	if (parse_spec(name, text, len, &v->spec, &e) != 0) {
		gf_log(GF_LOG_ERROR, "serve",
		       "stored service '%s' not restored: %s", name, e.msg);
		drop(v);
		s->nsvc--;
		return 0;
	}
	v->text = gf_strndup(text, len);
	v->len = len;
	v->replicas = replicas;
	return 0;
}

static int services_load(void *arg, struct gf_err *e)
{
	struct gf_service *s = arg;
	services_free(s);
	s->svc_next_ms = 0;
	return gf_store_load_services(s->store, take_stored, s, e);
}

/* ---- the scheduler thread: requests and the count ------------------- */

/* PUT: the spec (admitted as a submission would be) and the count. */
static void put(struct gf_service *s, struct gf_op *op, struct gf_svc *v)
{
	struct svc_op *x = svc_x(op);
	struct gf_err e;
	gf_err_clear(&e);
	/* the grant's scope (authz.c), applied where the service is found:
	 * the name may be another team's by now */
	if (v && !gf_authz_team_ok(&op->grant, v->spec.team)) {
		gf__op_error(op, 403, "forbidden",
			     "service '%s' is team '%s''s", v->name,
			     v->spec.team);
		return;
	}
	int rc = gf_ctl_admit(s->ctl, &x->spec, &e);
	if (rc == GF_EINVAL || rc == GF_EAUTH || rc == GF_ENEVER) {
		unsigned st = rc == GF_EINVAL  ? 400
			      : rc == GF_EAUTH ? 403
					       : 422;
		gf__op_error(op, st,
			     st == 400	 ? "invalid"
			     : st == 403 ? "forbidden"
					 : "never-placeable",
			     "%s", e.msg);
		return;
	}
	if (!v)
		v = add(s, x->name);
	drop(v);
	v->spec = x->spec;
	memset(&x->spec, 0, sizeof(x->spec)); /* taken */
	v->text = x->body;
	v->len = x->body_len;
	x->body = NULL;
	v->replicas = (int)x->replicas;
	v->dirty = true;
	op->status = 200;
}

static void svc_apply(struct gf_service *s, struct gf_op *op, int64_t now,
		      struct gf_batch *b)
{
	(void)now;
	(void)b;
	struct svc_op *x = svc_x(op);
	struct gf_svc *v = find(s, x->name);
	s->svc_next_ms = 0; /* count now */
	if (x->what == SVC_PUT) {
		put(s, op, v);
		return;
	}
	if (!v || !gf_authz_team_ok(&op->grant, v->spec.team)) {
		gf__op_error(op, 404, "not-found", "no service '%.48s'",
			     x->name);
		return;
	}
	if (x->what == SVC_SCALE) {
		v->replicas = (int)x->replicas;
	} else { /* delete: its count to zero, then gone once stored */
		v->replicas = 0;
		v->deleted = true;
	}
	v->dirty = true;
	op->status = 200;
}

/* Submit one replica of v (as a POST would); false when refused. */
static bool submit_one(struct gf_service *s, struct gf_svc *v, int64_t now,
		       struct gf_batch *b)
{
	struct gf_err e;
	struct gf_job *job = gf_calloc(1, sizeof(*job));
	gf_job_spec_copy(&job->spec, &v->spec);
	job->seq = ++s->seq;
	job->state = GF_JOB_PENDING;
	job->submitted_ms = now;
	job->block = -1;
	gf__job_id(job->id, job->seq);
	if (gf_ctl_add(s->ctl, job, &e) != 0) {
		gf_log(GF_LOG_WARN, "serve", "service '%s': %s", v->name,
		       e.msg);
		gf_job_release(job);
		gf_free(job);
		s->seq--;
		return false;
	}
	gf__batch_add(b, job);
	s->submitted++;
	return true;
}

/* Cancel the newest live job of v, pending before running. */
static bool cancel_one(struct gf_service *s, struct gf_svc *v, int64_t now,
		       struct gf_batch *b)
{
	const struct gf_job *pick = NULL;
	for (int i = gf_ctl_njobs(s->ctl) - 1; i >= 0; i--) {
		const struct gf_job *j = gf_ctl_job_at(s->ctl, i);
		if (strcmp(j->spec.service, v->name) ||
		    gf_job_is_final(j->state))
			continue;
		if (j->state == GF_JOB_PENDING) {
			pick = j;
			break;
		}
		if (!pick)
			pick = j;
	}
	struct gf_err e;
	if (!pick || gf_ctl_cancel(s->ctl, pick->id, now, &e) != 0)
		return false;
	gf__batch_add(b, pick);
	return true;
}

/* Every service's live jobs, counted in one pass over the jobs. */
static void count_live(struct gf_service *s, int *live)
{
	memset(live, 0, (size_t)s->nsvc * sizeof(*live));
	for (int i = 0, n = gf_ctl_njobs(s->ctl); i < n; i++) {
		const struct gf_job *j = gf_ctl_job_at(s->ctl, i);
		if (!j->spec.service[0] || gf_job_is_final(j->state))
			continue;
		for (int k = 0; k < s->nsvc; k++)
			if (!strcmp(s->svc[k].name, j->spec.service)) {
				live[k]++;
				break;
			}
	}
}

/* Each turn: every service's count of live jobs brought to its replicas
 * (once a second, or at once after a request). */
static void services_step(void *arg, int64_t now, struct gf_batch *b)
{
	struct gf_service *s = arg;
	if (s->nsvc == 0 || now < s->svc_next_ms)
		return;
	s->svc_next_ms = now + RECONCILE_EVERY_MS;
	int *live = gf_calloc((size_t)s->nsvc, sizeof(*live));
	count_live(s, live);
	for (int k = 0; k < s->nsvc; k++) {
		struct gf_svc *v = &s->svc[k];
		while (live[k] < v->replicas && submit_one(s, v, now, b))
			live[k]++;
		while (live[k] > v->replicas && cancel_one(s, v, now, b))
			live[k]--;
	}
	gf_free(live);
}

static int services_commit(void *arg, struct gf_err *e)
{
	struct gf_service *s = arg;
	int64_t now = gf_clock_wall_ms();
	for (int k = 0; k < s->nsvc; k++) {
		struct gf_svc *v = &s->svc[k];
		if (!v->dirty)
			continue;
		int rc = v->deleted
				 ? gf_store_delete_service(s->store, v->name, e)
				 : gf_store_put_service(s->store, v->name,
							v->text, v->len,
							v->replicas, now, e);
		if (rc)
			return rc;
		v->dirty = false;
	}
	/* deleted ones whose jobs are all cancelled are dropped; handlers
	 * read the table under ctl_lock, and the store is written without
	 * it, so the table changes under it (ThreadSanitizer saw the race) */
	pthread_mutex_lock(&s->ctl_lock);
	int n = 0;
	for (int k = 0; k < s->nsvc; k++) {
		if (s->svc[k].deleted) {
			drop(&s->svc[k]);
			continue;
		}
		s->svc[n++] = s->svc[k];
	}
	s->nsvc = n;
	pthread_mutex_unlock(&s->ctl_lock);
	return 0;
}

/* ---- answers and readers -------------------------------------------- */

static void svc_json(struct gf_json *j, struct gf_service *s,
		     const struct gf_svc *v)
{
	int running = 0, pending = 0;
	for (int i = 0, n = gf_ctl_njobs(s->ctl); i < n; i++) {
		const struct gf_job *x = gf_ctl_job_at(s->ctl, i);
		if (strcmp(x->spec.service, v->name))
			continue;
		running += x->state == GF_JOB_RUNNING;
		pending += x->state == GF_JOB_PENDING;
	}
	gf_json_obj_begin(j, NULL);
	gf_json_str(j, "name", v->name);
	gf_json_int(j, "replicas", v->replicas);
	gf_json_int(j, "running", running);
	gf_json_int(j, "pending", pending);
	gf_json_str(j, "team", v->spec.team);
	gf_json_str(j, "class", v->spec.class_name);
	gf_json_raw(j, "job", v->text, v->len);
	gf_json_obj_end(j);
}

static void svc_answer(struct gf_service *s, struct gf_op *op)
{
	const char *name = svc_x(op)->name;
	struct gf_buf b;
	struct gf_json j;
	if (!gf__op_answer_open(op, &b, &j, 1u << 20))
		return;
	pthread_mutex_lock(&s->ctl_lock);
	struct gf_svc *v = NULL;
	for (int i = 0; i < s->nsvc; i++)
		if (!strcmp(s->svc[i].name, name))
			v = &s->svc[i];
	if (v && svc_x(op)->what != SVC_DELETE)
		svc_json(&j, s, v);
	pthread_mutex_unlock(&s->ctl_lock);
	/* a failed send: nothing to do */
	if (svc_x(op)->what == SVC_DELETE || !v)
		(void)gf_reply(op->req, 200, "application/json", "{}\n", 3);
	else
		(void)gf_reply_json(op->req, 200, &b);
	gf_buf_release(&b);
	gf__op_free(op);
}

static void svc_release(struct gf_op *op)
{
	gf_job_spec_release(&svc_x(op)->spec);
	gf_free(svc_x(op)->body);
	gf_free(op);
}

/* The services' request kind (PUT, its replicas, DELETE: the op's
 * `what`). */
static const struct gf_op_kind svc_kind = {
	.name = "service",
	.apply = svc_apply,
	.answer = svc_answer,
	.release = svc_release,
};

int gf__services_get(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const struct gf_grant g = c->grant;
	const char *name = gf_req_param(r, "name");
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 16u << 20);
	int found = 0;
	pthread_mutex_lock(&s->ctl_lock);
	if (!name) {
		gf_json_obj_begin(&j, NULL);
		gf_json_arr_begin(&j, "services");
	}
	for (int i = 0; s->leading && i < s->nsvc; i++) {
		const struct gf_svc *v = &s->svc[i];
		if (v->deleted || !gf_authz_team_ok(&g, v->spec.team) ||
		    (name && strcmp(v->name, name)))
			continue;
		svc_json(&j, s, v);
		found++;
	}
	if (!name) {
		gf_json_arr_end(&j);
		gf_json_obj_end(&j);
	}
	bool leading = s->leading;
	pthread_mutex_unlock(&s->ctl_lock);
	int rc = !leading	  ? gf_reply_error(r, 503, "standby",
						   "this server does not lead")
		 : name && !found ? gf_reply_error(r, 404, "not-found",
						   "no service '%.48s'", name)
				  : gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

/* The body's "replicas": 0 with *n, or answered 400. */
static int read_replicas(struct gf_http_req *r, const struct gf_jv *body,
			 int64_t *n)
{
	if (gf_jv_int(gf_jv_get(body, "replicas"), n) && *n >= 0 &&
	    *n <= GF_STORE_SERVICE_MAX)
		return 0;
	gf_reply_error(r, 400, "invalid", "'replicas': expected 0 to %d",
		       GF_STORE_SERVICE_MAX);
	return GF_EINVAL;
}

/* An op of kind about service name, or NULL for a name too long (no
 * service has one: answered 404). */
static struct svc_op *svc_op(struct gf_http_req *r, enum svc_what what,
			     const char *name, const struct gf_grant *g)
{
	struct svc_op *x = gf_calloc(1, sizeof(*x));
	x->op.kind = &svc_kind;
	x->what = what;
	x->op.grant = *g;
	if (gf_fmt(x->name, sizeof(x->name), "%s", name) == 0)
		return x;
	gf__op_free(&x->op);
	(void)gf_reply_error(r, 404, "not-found", "no service '%.48s...'",
			     name);
	return NULL;
}

int gf__services_put(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const struct gf_grant g = c->grant;
	const char *name = gf_req_param(r, "name");
	if (strlen(name) >= GF_JOB_NAME_MAX ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") != strlen(name))
		return gf_reply_error(r, 400, "invalid",
				      "a service name is 1 to %d of letters, "
				      "digits, '.', '_' or '-'",
				      GF_JOB_NAME_MAX - 1);
	struct gf_jv *body;
	if (gf_req_json(r, &body))
		return 0;
	int64_t n;
	struct svc_op *op = NULL;
	const struct gf_jv *job = gf_jv_get(body, "job");
	int rc = read_replicas(r, body, &n);
	if (rc == 0 && gf_jv_type(job) != GF_JV_OBJ) {
		gf_reply_error(r, 400, "invalid",
			       "'job': expected a job body (as POST /v1/jobs "
			       "takes)");
		rc = GF_EINVAL;
	}
	if (rc == 0) {
		/* the job as stored: its own JSON text, the team a team
		 * token implies added */
		struct gf_err e;
		struct gf_buf t;
		gf_buf_init(&t, GF_SERVE_JOB_BODY_MAX);
		op = svc_op(r, SVC_PUT, name, &g); /* a name checked above */
		op->replicas = n;
		bool team = g.team[0] != '\0';
		int drc = gf_jv_dump(job, team ? "team" : NULL,
				     team ? g.team : NULL, &t);
		if (drc ||
		    parse_spec(name, t.data, t.len, &op->spec, &e) != 0) {
			gf_reply_error(r, 400, "invalid", "'job': %s",
				       drc ? "too large" : e.msg);
			rc = GF_EINVAL;
		} else if (!gf_authz_team_ok(&g, op->spec.team)) {
			gf_reply_error(r, 403, "forbidden",
				       "a token of team '%s' runs only that "
				       "team's services",
				       g.team);
			rc = GF_EAUTH;
		}
		op->body = gf_strndup(t.data ? t.data : "", t.len);
		op->body_len = t.len;
		gf_buf_release(&t);
	}
	gf_jv_free(body);
	if (rc) {
		if (op)
			gf__op_free(&op->op);
		return 0;
	}
	return gf__service_hold(s, r, &op->op);
}

int gf__services_scale(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const struct gf_grant g = c->grant;
	struct gf_jv *body;
	if (gf_req_json(r, &body))
		return 0;
	int64_t n;
	int rc = read_replicas(r, body, &n);
	gf_jv_free(body);
	if (rc)
		return 0;
	struct svc_op *op = svc_op(r, SVC_SCALE, gf_req_param(r, "name"), &g);
	if (!op)
		return 0;
	op->replicas = n;
	return gf__service_hold(s, r, &op->op);
}

static int services_delete(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct svc_op *op =
		svc_op(r, SVC_DELETE, gf_req_param(r, "name"), &c->grant);
	return op ? gf__service_hold(c->s, r, &op->op) : 0;
}

int gf__services_one(struct gf_http_req *r, void *arg)
{
	if (gf_req_method(r) == GF_HTTP_DELETE)
		return services_delete(r, arg);
	return gf__services_get(r, arg);
}

static void services_free_arg(void *arg)
{
	services_free(arg);
}

int gf__services_register(struct gf_service *s)
{
	struct gf_feature f = {
		.name = "services",
		.arg = s,
		.load = services_load,
		.step = services_step,
		.commit = services_commit,
		.free = services_free_arg,
	};
	return gf__service_register(s, &f);
}
