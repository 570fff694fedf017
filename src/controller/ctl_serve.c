/*
 * ctl_serve.c - the controller put together: its routes (each with a row
 * in authz.c's table), the dispatcher that decides once per request who
 * may call a route and within which scope (the handler gets that grant
 * in its struct gf_call), and gf_service_start, which registers every
 * feature into the service's core.
 */
#include <pthread.h>

#include "controller/authz.h"
#include "controller/k8s_impl.h"
#include "controller/service_impl.h"
#include "server/tls.h"
#include "util/fmt.h"

static const struct gf_route routes[] = {
	{ GF_HTTP_POST, "/v1/jobs", gf__jobs_submit, GF_SERVE_JOB_BODY_MAX,
	  "submit a job: 201 {id, state}" },
	{ GF_HTTP_GET, "/v1/jobs", gf__jobs_list, 0,
	  "jobs; ?state=S&team=T&limit=N" },
	{ GF_HTTP_GET, "/v1/jobs/{id}", gf__jobs_get, 0,
	  "one job: state, placement" },
	{ GF_HTTP_DELETE, "/v1/jobs/{id}", gf__jobs_cancel, 0, "cancel a job" },
	{ GF_HTTP_GET, "/v1/jobs/{id}/logs", gf__jobs_logs, 0,
	  "a run's output, text: ?replica=R&attempt=A&follow=1" },
	{ GF_HTTP_GET, "/v1/queue", gf__queue_get, 0,
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
	{ GF_HTTP_GET, "/v1/nodes", gf__nodes_get, 0,
	  "nodes: state, GPUs, free, labels, MIG" },
	{ GF_HTTP_GET, "/healthz", gf__healthz, 0,
	  "200 leading, 503 standby or stopped" },
	{ GF_HTTP_GET, "/metrics", gf__metrics_get, 0,
	  "Prometheus: queue, GPUs, nodes, latency" },
	GF__NODE_ROUTES,
	GF__FLOW_ROUTES,
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
	char buf[GF_HTTP_PATH_MAX];
	unsigned method = gf_req_method(r);
	gf_route_match(routes, NROUTES, method, gf_req_path(r), buf,
		       sizeof(buf), &m);
	if (m.route < 0) /* the server matched it: cannot happen */
		return gf_reply_error(r, 404, "not-found", "no route");
	const struct gf_route *rt = &routes[m.route];
	struct gf_call call = { s, GF_GRANT_ALL };
	if (s->o.auth == NULL) /* no token file: open, unscoped */
		return rt->fn(r, &call);
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
	char msg[GF_ERR_MSG_MAX];
	unsigned st = gf_authz_decide(rule, kind, who, gf_req_param(r, "name"),
				      &call.grant, msg, sizeof(msg));
	if (st && rule && rule->may[GF_AZ_K8S] != GF_AZ_NO) {
		/* the extender's routes: a bearer token would not help */
		st = 403;
		gf_note(msg, sizeof(msg), "%s: %s", rule->refusal, why);
	}
	if (st == 401) {
		gf_reply_header(r, "WWW-Authenticate",
				"Bearer realm=\"gpufleet\"");
		return gf_reply_error(r, 401, "unauthorized", "%s", msg);
	}
	if (st)
		return gf_reply_error(r, st, "forbidden", "%s", msg);
	return rt->fn(r, &call); /* the handler's scope: call.grant */
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

/*
 * The service and its features: each registers its hooks and request
 * kinds into the service's core (service.c), which calls none of them
 * by name; this file alone names them all.
 */
int gf_service_start(struct gf_service **out, const struct gf_service_opts *o,
		     struct gf_err *e)
{
	*out = NULL;
	int rc = gf_authz_check_routes(routes, NROUTES, e);
	struct gf_service *s = NULL;
	if (rc == 0)
		rc = gf__service_new(&s, o, e);
	if (rc)
		return rc;
	/* the order of each turn's steps: services' replicas, silent nodes,
	 * MIG, the pods' jobs; listeners: agents, then the log */
	if ((rc = gf__history_register(s)) != 0 ||
	    (rc = gf__services_register(s)) != 0 ||
	    (rc = gf__agents_register(s)) != 0 ||
	    (rc = gf__mig_register(s)) != 0 ||
	    (o->k8s && (rc = gf__k8s_register(s, o->k8s, e)) != 0) ||
	    (rc = gf__translog_register(s)) != 0 ||
	    (rc = gf__logs_register(s)) != 0) {
		if (!e->msg[0])
			gf_err_set(e, rc, "cannot register the features");
		gf__service_free(s);
		return rc;
	}
	const struct gf_route *served;
	int n = gf_service_routes(&served);
	rc = gf__service_run(s, served, n, e);
	if (rc == 0)
		*out = s;
	return rc;
}
