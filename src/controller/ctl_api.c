/*
 * ctl_api.c - the controller's HTTP API for people and scripts (issue 10's
 * contract), on the shared server module.  Every request passes the
 * dispatcher (at the end of this file) first, which asks authz.c's table
 * whether its caller may call its route; then handlers parse and
 * validate within the caller's grant, hold the request and hand
 * submissions and cancels to the scheduler thread (service.c, which
 * answers once committed), and read the core under its lock.  The node
 * agents' routes are in agents_http.c.  Errors are {"error", "detail"} with the
 * status that says what went wrong: 400 a bad field, 401 no or a wrong token,
 * 403 another team's (or a node's token), 404, 409 a final job, 413 a body over
 * the cap, 422 a job that can never be placed, 503 a standby or a stopping
 * server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/authz.h"
#include "controller/jobjson.h"
#include "controller/k8s_impl.h"
#include "controller/service_impl.h"
#include "server/tls.h"
#include "util/mem.h"

#define ANSWER_MAX (64u << 20)

void gf__api_grant(const struct gf_service *s, struct gf_http_req *r,
		   struct gf_grant *g)
{
	if (s->o.auth == NULL) {
		*g = GF_GRANT_ALL;
		return;
	}
	const struct gf_auth_entry *who =
		gf_auth_check(s->o.auth, gf_req_header(r, "Authorization"));
	enum gf_az_caller kind = gf_authz_kind(who);
	*g = (struct gf_grant){ kind, who, kind == GF_AZ_TEAM ? who->team : "",
				kind == GF_AZ_NODE ? who->node : "" };
}

static bool visible(const struct gf_grant *g, const struct gf_job *j)
{
	return gf_authz_team_ok(g, j->spec.team);
}

struct seen_by {
	const struct gf_service *s;
	const struct gf_grant *g;
};

/* Is job id one the grant does not cover?  (Under ctl_lock.) */
static bool hidden(const char *id, void *arg)
{
	const struct seen_by *x = arg;
	const struct gf_job *j = gf_ctl_job(x->s->ctl, id);
	return j && !visible(x->g, j);
}

/* A job's reason as the grant may read it (authz.h): the jobs of other
 * teams it names are not named.  Under ctl_lock. */
static const char *reason_for(const struct gf_service *s,
			      const struct gf_grant *g, const char *reason,
			      char *out, size_t size)
{
	if (!g->team[0])
		return reason;
	struct seen_by x = { s, g };
	return gf_authz_reason(reason, hidden, &x, out, size);
}

/* Write a job as the grant may see it (under ctl_lock). */
static void job_json(struct gf_json *j, const struct gf_service *s,
		     const struct gf_grant *g, const struct gf_job *job)
{
	const struct gf_ctl_config *cfg = gf_ctl_config(s->ctl);
	char why[GF_JOB_REASON_MAX];
	const char *reason = reason_for(s, g, job->reason, why, sizeof(why));
	if (reason == job->reason) {
		gf_jobjson_write(j, NULL, job, cfg);
		return;
	}
	struct gf_job shown = *job; /* shallow: read only */
	snprintf(shown.reason, sizeof(shown.reason), "%s", reason);
	gf_jobjson_write(j, NULL, &shown, cfg);
}

/* Under ctl_lock: answered 503 unless this server leads. */
static bool serving(struct gf_service *s, struct gf_http_req *r)
{
	if (s->leading && !atomic_load(&s->failed))
		return true;
	gf_reply_error(r, 503,
		       atomic_load(&s->failed) ? "unavailable" : "standby",
		       "%s",
		       atomic_load(&s->failed)
			       ? "the server stopped: see its log"
			       : "this server is a standby: another one leads");
	return false;
}

static int job_submit(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_grant g;
	gf__api_grant(s, r, &g);
	struct gf_jv *body;
	int rc = gf_req_json(r, &body);
	if (rc)
		return 0; /* answered 400 */
	struct gf_op *op = gf_calloc(1, sizeof(*op));
	struct gf_err e;
	gf_err_clear(&e);
	rc = gf_jobjson_spec(body, &op->spec, &e);
	/* a team token's job is its team's: given when the body names
	 * none, refused when it names another */
	if (rc == 0 && g.team[0] && !gf_jv_get(body, "team"))
		snprintf(op->spec.team, sizeof(op->spec.team), "%s", g.team);
	gf_jv_free(body);
	if (rc) {
		gf__op_free(op);
		return gf_reply_error(r, 400, "invalid", "%s", e.msg);
	}
	if (!gf_authz_team_ok(&g, op->spec.team)) {
		gf__op_free(op);
		return gf_reply_error(r, 403, "forbidden",
				      "a token of team '%s' submits only that "
				      "team's jobs",
				      g.team);
	}
	op->kind = GF_OP_SUBMIT;
	op->grant = g;
	return gf__service_hold(s, r, op); /* service.c answers */
}

static int job_cancel(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_op *op = gf_calloc(1, sizeof(*op));
	op->kind = GF_OP_CANCEL;
	gf__api_grant(s, r, &op->grant);
	snprintf(op->id, sizeof(op->id), "%s", gf_req_param(r, "id"));
	return gf__service_hold(s, r, op); /* service.c answers */
}

static int job_get(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_grant g;
	gf__api_grant(s, r, &g);
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	struct gf_json j;
	gf_json_init(&j, &b);
	int rc;
	pthread_mutex_lock(&s->ctl_lock);
	if (!serving(s, r)) {
		pthread_mutex_unlock(&s->ctl_lock);
		gf_buf_release(&b);
		return 0;
	}
	const struct gf_job *job = gf_ctl_job(s->ctl, gf_req_param(r, "id"));
	if (job && visible(&g, job))
		job_json(&j, s, &g, job);
	pthread_mutex_unlock(&s->ctl_lock);
	if (job && visible(&g, job))
		rc = gf_reply_json(r, 200, &b);
	else
		rc = gf_reply_error(r, 404, "not-found", "no job '%.40s'",
				    gf_req_param(r, "id"));
	gf_buf_release(&b);
	return rc;
}

/* ?state=S&team=T&limit=N: 0, or answered 400/403. */
static int list_filter(struct gf_http_req *r, const struct gf_grant *g,
		       int *state, const char **team, long *limit)
{
	const char *st = gf_req_query(r, "state");
	const char *lim = gf_req_query(r, "limit");
	*team = gf_req_query(r, "team");
	*state = -1;
	*limit = 1000;
	enum gf_job_state x;
	if (st && gf_job_state_parse(st, &x) != 0)
		return gf_reply_error(r, 400, "invalid",
				      "'state': expected pending, running, "
				      "succeeded, failed or cancelled");
	if (st)
		*state = (int)x;
	if (lim) {
		char *end;
		*limit = strtol(lim, &end, 10);
		if (*lim == '\0' || *end || *limit < 1 ||
		    *limit > GF_SERVE_LIST_MAX)
			return gf_reply_error(r, 400, "invalid",
					      "'limit': expected 1 to %d",
					      GF_SERVE_LIST_MAX);
	}
	if (g->team[0]) {
		if (*team && !gf_authz_team_ok(g, *team))
			return gf_reply_error(r, 403, "forbidden",
					      "a token of team '%s' lists "
					      "only that team's jobs",
					      g->team);
		*team = g->team;
	}
	return 0;
}

static int job_list(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_grant g;
	gf__api_grant(s, r, &g);
	int state;
	const char *team;
	long limit;
	if (list_filter(r, &g, &state, &team, &limit) != 0)
		return 0;
	struct gf_buf b;
	gf_buf_init(&b, ANSWER_MAX);
	struct gf_json j;
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_arr_begin(&j, "jobs");
	pthread_mutex_lock(&s->ctl_lock);
	if (!serving(s, r)) {
		pthread_mutex_unlock(&s->ctl_lock);
		gf_buf_release(&b);
		return 0;
	}
	long shown = 0;
	bool more = false;
	for (int i = 0, n = gf_ctl_njobs(s->ctl); i < n; i++) {
		const struct gf_job *job = gf_ctl_job_at(s->ctl, i);
		if ((state >= 0 && (int)job->state != state) ||
		    (team && strcmp(job->spec.team, team)))
			continue;
		if (shown == limit) {
			more = true;
			break;
		}
		job_json(&j, s, &g, job);
		shown++;
	}
	pthread_mutex_unlock(&s->ctl_lock);
	gf_json_arr_end(&j);
	gf_json_bool(&j, "truncated", more);
	gf_json_obj_end(&j);
	int rc = gf_json_error(&j)
			 ? gf_reply_error(r, 500, "too-big",
					  "the list is over %u MiB: use "
					  "?limit=",
					  ANSWER_MAX >> 20)
			 : gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

/* The pending jobs the grant sees (under ctl_lock). */
static int team_pending(const struct gf_service *s, const struct gf_grant *g)
{
	int n = 0;
	for (int i = 0, all = gf_ctl_njobs(s->ctl); i < all; i++) {
		const struct gf_job *x = gf_ctl_job_at(s->ctl, i);
		n += x->state == GF_JOB_PENDING && visible(g, x);
	}
	return n;
}

/* GET /v1/queue: the pending jobs in order.  A team's token sees its
 * own jobs only, their positions and the count among its team's (not
 * how many other teams' jobs wait, nor where). */
static int queue_get(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_grant g;
	gf__api_grant(s, r, &g);
	struct gf_buf b;
	gf_buf_init(&b, ANSWER_MAX);
	struct gf_json j;
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_arr_begin(&j, "queue");
	pthread_mutex_lock(&s->ctl_lock);
	if (!serving(s, r)) {
		pthread_mutex_unlock(&s->ctl_lock);
		gf_buf_release(&b);
		return 0;
	}
	const struct gf_job **q = gf_calloc(GF_SERVE_LIST_MAX, sizeof(*q));
	int n = gf_ctl_queue(s->ctl, q, GF_SERVE_LIST_MAX), pos = 0;
	for (int i = 0; i < n && i < GF_SERVE_LIST_MAX; i++) {
		if (!visible(&g, q[i]))
			continue;
		char why[GF_JOB_REASON_MAX];
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "position", ++pos);
		gf_json_str(&j, "id", q[i]->id);
		gf_json_str(&j, "name", q[i]->spec.name);
		gf_json_str(&j, "team", q[i]->spec.team);
		gf_json_str(&j, "class", q[i]->spec.class_name);
		gf_json_str(&j, "reason",
			    reason_for(s, &g, q[i]->reason, why, sizeof(why)));
		gf_json_obj_end(&j);
	}
	if (g.team[0]) /* its team's pending jobs, all of them */
		n = team_pending(s, &g);
	pthread_mutex_unlock(&s->ctl_lock);
	gf_free(q);
	gf_json_arr_end(&j);
	gf_json_int(&j, "pending", n);
	gf_json_obj_end(&j);
	int rc = gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

/* The replicas completing on GPU g of node i: held by their ending jobs
 * until their processes are gone (docs/cluster.md). */
static void held_by(struct gf_json *j, const struct gf_ctl *ctl, int i, int g)
{
	gf_json_arr_begin(j, "completing");
	for (int k = 0, n = gf_ctl_nholding(ctl); k < n; k++) {
		const struct gf_job *job = gf_ctl_holding_at(ctl, k);
		for (int h = 0; h < job->nheld; h++) {
			const struct gf_job_held *x = &job->held[h];
			bool on = false;
			for (int q = 0; q < x->place.ngpus; q++)
				on |= x->place.gpus[q] == g;
			if (x->place.node != i || !on)
				continue;
			gf_json_obj_begin(j, NULL);
			gf_json_str(j, "job", job->id);
			gf_json_int(j, "attempt", x->attempt);
			gf_json_int(j, "replica", x->replica);
			gf_json_str(j, "why", x->why);
			gf_json_obj_end(j);
		}
	}
	gf_json_arr_end(j);
}

void gf__api_node_json(struct gf_json *j, const struct gf_service *s, int i)
{
	const struct gf_ctl *ctl = s->ctl;
	const struct gf_cluster *c = gf_ctl_cluster(ctl);
	const struct gf_cnode *n = &c->nodes[i];
	const struct gf_ctl_node *x = gf_ctl_node(ctl, i);
	gf_json_obj_begin(j, NULL);
	gf_json_str(j, "name", c->names[i]);
	const char *state = gf__agents_state(s->ag, i);
	gf_json_str(j, "state", state);
	if (strcmp(state, "ready") != 0)
		gf_json_str(j, "reason", gf__agents_reason(s->ag, i));
	gf_json_str(j, "block", gf_ctl_config(ctl)->blocks[x->block]);
	if (n->ngpus)
		gf_json_str(j, "gpu_model", c->models[n->model]);
	else
		gf_json_null(j, "gpu_model");
	gf_json_int(j, "cpu_milli", n->cpu_cap);
	gf_json_int(j, "cpu_free_milli", n->cpu_left);
	gf_json_int(j, "memory_mib", n->mem_cap);
	gf_json_int(j, "memory_free_mib", n->mem_left);
	gf_json_obj_begin(j, "labels");
	char l[GF_CTL_LABELS_MAX], *save = NULL;
	snprintf(l, sizeof(l), "%s", x->labels);
	for (char *kv = strtok_r(l, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (eq) {
			*eq = '\0';
			gf_json_str(j, kv, eq + 1);
		}
	}
	gf_json_obj_end(j);
	gf_json_arr_begin(j, "gpus");
	for (int g = 0; g < n->ngpus; g++) {
		const char *uuid = gf__agents_uuid(s->ag, i, g);
		bool healthy = gf_ctl_gpu_is_healthy(ctl, i, g);
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "index", g);
		if (uuid)
			gf_json_str(j, "uuid", uuid);
		else
			gf_json_null(j, "uuid"); /* a node without an agent */
		gf_json_bool(j, "healthy", healthy);
		if (!healthy)
			gf_json_str(j, "reason", gf_ctl_gpu_reason(ctl, i, g));
		gf_json_int(j, "free_milli", n->gpu_left[g]);
		held_by(j, ctl, i, g);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_arr_begin(j, "mig");
	for (int k = 0; k < x->nmig; k++) {
		gf_json_obj_begin(j, NULL);
		gf_json_int(j, "gpu", x->mig[k].gpu);
		gf_json_str(j, "profile", x->mig[k].profile);
		gf_json_int(j, "start", x->mig[k].start);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
	gf_json_obj_end(j);
}

static int nodes_get(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_buf b;
	gf_buf_init(&b, ANSWER_MAX);
	struct gf_json j;
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_arr_begin(&j, "nodes");
	pthread_mutex_lock(&s->ctl_lock);
	if (!serving(s, r)) {
		pthread_mutex_unlock(&s->ctl_lock);
		gf_buf_release(&b);
		return 0;
	}
	for (int i = 0, n = gf_ctl_nnodes(s->ctl); i < n; i++)
		gf__api_node_json(&j, s, i);
	pthread_mutex_unlock(&s->ctl_lock);
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	int rc = gf_json_error(&j)
			 ? gf_reply_error(r, 500, "too-big",
					  "the node list is over %u MiB",
					  ANSWER_MAX >> 20)
			 : gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

static int healthz(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	pthread_mutex_lock(&s->ctl_lock);
	bool leading = s->leading;
	pthread_mutex_unlock(&s->ctl_lock);
	const char *st = atomic_load(&s->failed) ? "failed"
			 : leading		 ? "leading"
						 : "standby";
	char body[96];
	int len = snprintf(body, sizeof(body), "{\"status\": \"%s\"}\n", st);
	return gf_reply(r, leading && !atomic_load(&s->failed) ? 200 : 503,
			"application/json", body, (size_t)len);
}

static int metrics_get(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_buf b;
	gf_buf_init(&b, 8u << 20);
	pthread_mutex_lock(&s->ctl_lock);
	gf__service_metrics(s, &b);
	pthread_mutex_unlock(&s->ctl_lock);
	int rc = gf_buf_error(&b)
			 ? gf_reply_error(r, 500, "too-big",
					  "the page is over 8 MiB")
			 : gf_reply(r, 200,
				    "text/plain; version=0.0.4; charset=utf-8",
				    gf_buf_str(&b), b.len);
	gf_buf_release(&b);
	return rc;
}

static const struct gf_route routes[] = {
	{ GF_HTTP_POST, "/v1/jobs", job_submit, GF_SERVE_JOB_BODY_MAX,
	  "submit a job: 201 {id, state}" },
	{ GF_HTTP_GET, "/v1/jobs", job_list, 0,
	  "jobs; ?state=S&team=T&limit=N" },
	{ GF_HTTP_GET, "/v1/jobs/{id}", job_get, 0,
	  "one job: state, placement" },
	{ GF_HTTP_DELETE, "/v1/jobs/{id}", job_cancel, 0, "cancel a job" },
	{ GF_HTTP_GET, "/v1/queue", queue_get, 0,
	  "the pending jobs in order, and why" },
	{ GF_HTTP_GET, "/v1/mig/proposal", gf__mig_get, 0,
	  "MIG layouts the pending demand wants" },
	{ GF_HTTP_GET, "/v1/services", gf__services_get, 0,
	  "inference services: replicas asked, running" },
	{ GF_HTTP_GET | GF_HTTP_DELETE, "/v1/services/{name}", gf__services_one,
	  0, "one service; DELETE: its jobs cancelled" },
	{ GF_HTTP_PUT, "/v1/services/{name}", gf__services_put,
	  GF_SERVE_JOB_BODY_MAX, "a service: {replicas, job}" },
	{ GF_HTTP_PUT, "/v1/services/{name}/replicas", gf__services_scale, 0,
	  "its replica count: {replicas}" },
	{ GF_HTTP_GET, "/v1/chargeback", gf__charge_get, 0,
	  "costs by team: ?window=24h&aggregate=team" },
	{ GF_HTTP_GET, "/v1/nodes", nodes_get, 0,
	  "nodes: state, GPUs, free, labels, MIG" },
	{ GF_HTTP_GET, "/healthz", healthz, 0,
	  "200 leading, 503 standby or stopped" },
	{ GF_HTTP_GET, "/metrics", metrics_get, 0,
	  "Prometheus: queue, GPUs, nodes, latency" },
	GF__NODE_ROUTES,
	GF__K8S_ROUTES,
};

#define NROUTES ((int)(sizeof(routes) / sizeof(routes[0])))

/*
 * Whether the caller is the Kubernetes scheduler extender's client (the
 * "k8s" column of authz.c): with a token file (the only case asked), a
 * TLS client certificate that --client-ca verified, which is what
 * kube-scheduler's extender tlsConfig sends (it sends no bearer token).
 * Issue 20, F11.
 */
static bool k8s_client(const struct gf_service *s, struct gf_http_req *r,
		       char *why, size_t size)
{
	(void)s;
	return gf_req_client_cert_ok(r, why, size);
}

/*
 * Every request of the service passes here first: its route's row of the
 * authorization table (authz.c) decides, once, who may call it and what
 * it may touch; then the route's handler runs.  Answered 401/403 when
 * refused.
 */
static int dispatch(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = arg;
	struct gf_route_match m;
	unsigned method = gf_req_method(r);
	gf_route_match(routes, NROUTES, method, gf_req_path(r), &m);
	if (m.route < 0) /* the server matched it: cannot happen */
		return gf_reply_error(r, 404, "not-found", "no route");
	const struct gf_route *rt = &routes[m.route];
	if (s->o.auth == NULL) /* no token file: open, unscoped */
		return rt->fn(r, arg);
	const struct gf_authz_rule *rule = gf_authz_rule(method, rt->pattern);
	const struct gf_auth_entry *who = NULL;
	enum gf_az_caller kind = GF_AZ_K8S;
	char why[160] = "";
	if (!rule || rule->may[GF_AZ_K8S] == GF_AZ_NO ||
	    !k8s_client(s, r, why, sizeof(why))) {
		who = gf_auth_check(s->o.auth,
				    gf_req_header(r, "Authorization"));
		kind = gf_authz_kind(who);
	}
	struct gf_grant g;
	char msg[GF_ERR_MSG_MAX];
	unsigned st = gf_authz_decide(rule, kind, who, gf_req_param(r, "name"),
				      &g, msg, sizeof(msg));
	if (st && rule && rule->may[GF_AZ_K8S] != GF_AZ_NO) {
		/* the extender's routes: a bearer token would not help */
		st = 403;
		snprintf(msg, sizeof(msg), "%s: %s", rule->refusal, why);
	}
	if (st == 401) {
		gf_reply_header(r, "WWW-Authenticate",
				"Bearer realm=\"gpufleet\"");
		return gf_reply_error(r, 401, "unauthorized", "%s", msg);
	}
	if (st)
		return gf_reply_error(r, st, "forbidden", "%s", msg);
	return rt->fn(r, arg);
}

static struct gf_route guarded[NROUTES];
static pthread_once_t guarded_once = PTHREAD_ONCE_INIT;

static void guard(void)
{
	for (int i = 0; i < NROUTES; i++) {
		guarded[i] = routes[i];
		guarded[i].fn = dispatch;
	}
}

int gf_service_routes(const struct gf_route **out)
{
	pthread_once(&guarded_once, guard);
	*out = guarded;
	return NROUTES;
}

int gf__api_check_routes(struct gf_err *e)
{
	return gf_authz_check_routes(routes, NROUTES, e);
}
