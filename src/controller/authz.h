/*
 * authz.h - who may call which route of `gpufleet serve`, and which team
 * or node it may touch there: one table (authz.c), consulted once per
 * request, at dispatch, before any handler runs.
 *
 * A caller is one of five kinds: no (or a wrong) token, an admin's token,
 * a team's token, a node's token, or the Kubernetes scheduler extender (a
 * "k8s client": today any caller of the /k8s extender routes, which
 * kube-scheduler calls without a bearer token; k8s_client() in ctl_serve.c is
 * where a client certificate check plugs in).  For each route and kind
 * the table says one of:
 *
 *   GF_AZ_NO   refused: 401 for no token, 403 for the others
 *   GF_AZ_ALL  allowed, on anything the route names
 *   GF_AZ_OWN  allowed within the caller's scope: a team token touches
 *              only its team's jobs and services (the team of the body,
 *              of the job or of the service named), a node token only
 *              the node named in the path ({name})
 *
 * For no token, GF_AZ_ALL means an open route (/healthz, /metrics).  With
 * no token file at all (serve without --token-file) every route is open
 * and nothing is scoped, as before tokens existed.
 *
 * What the dispatcher decides is a grant: the caller and its scope.  The
 * handlers and the scheduler thread do not decide again; they read the
 * grant (gf__authz_grant) and test the team of what they touch with
 * gf_authz_team_ok(), the only such test.
 */
#ifndef GF_CONTROLLER_AUTHZ_H
#define GF_CONTROLLER_AUTHZ_H

#include <stdbool.h>

#include "server/auth.h"

struct gf_http_req;
struct gf_route;

enum gf_az {
	GF_AZ_NO = 0,
	GF_AZ_ALL,
	GF_AZ_OWN,
};

enum gf_az_caller {
	GF_AZ_NONE,  /* no token, or one the file does not hold */
	GF_AZ_ADMIN, /* TOKEN admin */
	GF_AZ_TEAM,  /* TOKEN team:NAME */
	GF_AZ_NODE,  /* TOKEN node:NAME */
	GF_AZ_K8S,   /* the scheduler extender's client */
	GF_AZ_NCALLERS,
};

struct gf_authz_rule {
	unsigned methods;    /* GF_HTTP_* bits (GET covers HEAD) */
	const char *pattern; /* as in the route table */
	unsigned char may[GF_AZ_NCALLERS]; /* enum gf_az per caller kind */
	const char *refusal; /* the 403 detail for a refused kind */
};

/*
 * A caller's grant: who (NULL with no token file, or on an open or k8s
 * route), and what it may touch: team "" any team, else only that team's
 * jobs and services; node "" any node, else only that node.  Borrowed
 * strings: valid while the token file is (the service's lifetime).
 */
struct gf_grant {
	enum gf_az_caller kind;
	const struct gf_auth_entry *who;
	const char *team;
	const char *node;
};

/* The table, and its size (for tests and docs). */
int gf_authz_rules(const struct gf_authz_rule **out);

/* The rule of a method (one GF_HTTP_* bit) on a route pattern, or NULL:
 * a route without a rule is refused to everyone (fail closed). */
const struct gf_authz_rule *gf_authz_rule(unsigned method, const char *pattern);

/* Every method of every route has a rule: 0, or GF_EINVAL naming the
 * first that has none. */
int gf_authz_check_routes(const struct gf_route *routes, int n,
			  struct gf_err *e) GF_MUST_CHECK;

/* The kind of the caller with this entry (NULL: no valid token). */
enum gf_az_caller gf_authz_kind(const struct gf_auth_entry *who);

/*
 * The decision, pure: may a caller of this kind (entry who, NULL when
 * none) call this rule's route with path parameter node ({name}, NULL
 * when the route has none)?  0 with *g filled; else the status (401 or
 * 403) with the detail in msg.
 */
unsigned gf_authz_decide(const struct gf_authz_rule *rule,
			 enum gf_az_caller kind,
			 const struct gf_auth_entry *who, const char *node,
			 struct gf_grant *g, char *msg, size_t size);

/* Whether a grant covers a team's job or service. */
bool gf_authz_team_ok(const struct gf_grant *g, const char *team);

/*
 * reason (a job's: "reserved for j12 (...)") with every job id in it for
 * which hidden(id, arg) is true written "another team's job", into out
 * (size bytes, truncated); reason itself when it names no job.
 */
const char *gf_authz_reason(const char *reason,
			    bool (*hidden)(const char *id, void *arg),
			    void *arg, char *out, size_t size);

/* The grant of a no-token-file service: everything, unscoped. */
#define GF_GRANT_ALL ((struct gf_grant){ GF_AZ_ADMIN, NULL, "", "" })

#endif
