/*
 * authz.c - the authorization table of `gpufleet serve` (authz.h): for
 * every route, which kinds of caller may call it and within which scope.
 * Pure: the dispatcher (ctl_api.c) asks it once per request.  A route added
 * to the service without a row here is refused to everyone, and
 * gf_authz_check_routes() (run at start and by the tests) names it.
 */
#include "controller/authz.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/cluster.h>
#include <gpufleet/job.h>

#include "server/router.h"
#include "util/fmt.h"

/* the token file (server/auth.h) names teams and nodes as the core does */
_Static_assert(GF_AUTH_TEAM_MAX == GF_TEAM_NAME_MAX, "a token's team fits");
_Static_assert(GF_AUTH_NODE_MAX == GF_NODE_NAME_MAX, "a token's node fits");

#define NO  GF_AZ_NO
#define ALL GF_AZ_ALL
#define OWN GF_AZ_OWN

#define NODE_ONLY	 "a node's token serves only that node's routes"
#define ADMIN_ONLY(what) what ": admin tokens only"
#define NODE_ROUTE	 "node routes take the node's token or an admin's"
#define K8S_ROUTE                                                    \
	"the extender's routes take a client certificate signed by " \
	"--client-ca (kube-scheduler's tlsConfig)"

/* clang-format off */
static const struct gf_authz_rule rules[] = {
	/* route                                      none admin team node k8s */
	{ GF_HTTP_POST,   "/v1/jobs",                    { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/jobs",                    { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/jobs/{id}",               { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_DELETE, "/v1/jobs/{id}",               { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	/* a job's flow (ctl_flow.c): hold, release, requeue */
	{ GF_HTTP_POST,   "/v1/jobs/{id}/hold",          { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_DELETE, "/v1/jobs/{id}/hold",          { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_POST,   "/v1/jobs/{id}/requeue",       { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/jobs/{id}/logs",          { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/queue",                   { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/services",                { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/services/{name}",         { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_PUT,    "/v1/services/{name}",         { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_DELETE, "/v1/services/{name}",         { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_PUT,    "/v1/services/{name}/replicas",{ NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/mig/proposal",            { NO, ALL, NO,  NO, NO },
	  ADMIN_ONLY("the MIG proposal shows every team's demand") },
	{ GF_HTTP_GET,    "/v1/chargeback",              { NO, ALL, OWN, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/nodes",                   { NO, ALL, ALL, NO, NO }, NODE_ONLY },
	{ GF_HTTP_GET,    "/v1/nodes/{name}",            { NO, ALL, ALL, OWN, NO }, NODE_ROUTE },
	{ GF_HTTP_PUT,    "/v1/nodes/{name}",            { NO, ALL, NO,  OWN, NO }, NODE_ROUTE },
	{ GF_HTTP_POST,   "/v1/nodes/{name}/heartbeat",  { NO, ALL, NO,  OWN, NO }, NODE_ROUTE },
	{ GF_HTTP_GET,    "/v1/nodes/{name}/assignments",{ NO, ALL, NO,  OWN, NO }, NODE_ROUTE },
	/* an operator's (drain.c); a node may drain itself (its agent's stop) */
	{ GF_HTTP_POST,   "/v1/nodes/{name}/drain",      { NO, ALL, NO,  OWN, NO }, NODE_ROUTE },
	{ GF_HTTP_POST,   "/v1/nodes/{name}/resume",     { NO, ALL, NO,  OWN, NO }, NODE_ROUTE },
	{ GF_HTTP_POST,   "/v1/jobs/{id}/release",       { NO, ALL, NO,  NO,  NO },
	  ADMIN_ONLY("freeing a completing replica") },
	{ GF_HTTP_GET,    "/healthz",                    { ALL, ALL, ALL, ALL, ALL }, "" },
	{ GF_HTTP_GET,    "/metrics",                    { ALL, ALL, ALL, ALL, ALL }, "" },
	/* the scheduler extender: its client (k8s_client() in ctl_serve.c) */
	{ GF_HTTP_POST,   "/k8s/filter",                 { NO, NO,  NO,  NO, ALL }, K8S_ROUTE },
	{ GF_HTTP_POST,   "/k8s/prioritize",             { NO, NO,  NO,  NO, ALL }, K8S_ROUTE },
	{ GF_HTTP_POST,   "/k8s/preempt",                { NO, NO,  NO,  NO, ALL }, K8S_ROUTE },
	{ GF_HTTP_POST,   "/k8s/bind",                   { NO, NO,  NO,  NO, ALL }, K8S_ROUTE },
	{ GF_HTTP_GET,    "/k8s/reconcile",              { NO, ALL, NO,  NO, NO },
	  "GET /k8s/reconcile takes an admin's token" },
};
/* clang-format on */

int gf_authz_rules(const struct gf_authz_rule **out)
{
	*out = rules;
	return (int)(sizeof(rules) / sizeof(rules[0]));
}

const struct gf_authz_rule *gf_authz_rule(unsigned method, const char *pattern)
{
	if (method == GF_HTTP_HEAD)
		method = GF_HTTP_GET;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if ((rules[i].methods & method) &&
		    !strcmp(rules[i].pattern, pattern))
			return &rules[i];
	return NULL;
}

int gf_authz_check_routes(const struct gf_route *routes, int n,
			  struct gf_err *e)
{
	for (int i = 0; i < n; i++)
		for (unsigned m = 1; m <= GF_HTTP_DELETE; m <<= 1)
			if ((routes[i].methods & m) && m != GF_HTTP_HEAD &&
			    !gf_authz_rule(m, routes[i].pattern))
				return gf_err_set(e, GF_EINVAL,
						  "route %s %s: no "
						  "authorization rule "
						  "(controller/authz.c)",
						  gf_http_method_name(m),
						  routes[i].pattern);
	return 0;
}

enum gf_az_caller gf_authz_kind(const struct gf_auth_entry *who)
{
	if (who == NULL)
		return GF_AZ_NONE;
	if (who->admin)
		return GF_AZ_ADMIN;
	return who->node[0] ? GF_AZ_NODE : GF_AZ_TEAM;
}

unsigned gf_authz_decide(const struct gf_authz_rule *rule,
			 enum gf_az_caller kind,
			 const struct gf_auth_entry *who, const char *node,
			 struct gf_grant *g, char *msg, size_t size)
{
	*g = (struct gf_grant){ kind, who, "", "" };
	unsigned may = rule ? rule->may[kind] : GF_AZ_NO;
	if (rule == NULL) {
		gf_note(msg, size, "this route has no authorization rule");
		return 403;
	}
	if (may == GF_AZ_NO && kind == GF_AZ_NONE) {
		gf_note(msg, size,
			"a valid 'Authorization: Bearer TOKEN' header is "
			"required");
		return 401;
	}
	if (may == GF_AZ_NO) {
		gf_note(msg, size, "%s", rule->refusal);
		return 403;
	}
	if (may == GF_AZ_ALL)
		return 0;
	/* GF_AZ_OWN: the caller's own team, or its own node */
	if (kind == GF_AZ_TEAM) {
		g->team = who->team;
		return 0;
	}
	if (kind == GF_AZ_NODE && node && !strcmp(node, who->node)) {
		g->node = who->node;
		return 0;
	}
	gf_note(msg, size,
		"this token is node '%s''s: it cannot act for node '%.48s'",
		who ? who->node : "", node ? node : "");
	return 403;
}

bool gf_authz_team_ok(const struct gf_grant *g, const char *team)
{
	return !g->team[0] || !strcmp(g->team, team);
}

const char *gf_authz_reason(const char *reason,
			    bool (*hidden)(const char *id, void *arg),
			    void *arg, char *out, size_t size)
{
	if (!strchr(reason, 'j') || size == 0)
		return reason;
	size_t n = 0;
	for (const char *p = reason; *p && n + 1 < size;) {
		size_t len = p[0] == 'j' ? strspn(p + 1, "0123456789") : 0;
		bool word = (p == reason || !isalnum((unsigned char)p[-1])) &&
			    !isalnum((unsigned char)p[len + 1]);
		char id[GF_JOB_ID_MAX];
		if (word && len && len + 1 < sizeof(id)) {
			memcpy(id, p, len + 1); /* len + 1 < sizeof(id) */
			id[len + 1] = '\0';
			if (hidden(id, arg)) {
				int w = snprintf(out + n, size - n, "%s",
						 "another team's job");
				n = w < 0 || (size_t)w >= size - n
					    ? size - 1
					    : n + (size_t)w;
				p += len + 1;
				continue;
			}
		}
		out[n++] = *p++;
	}
	out[n] = '\0';
	return out;
}
