/*
 * test_authz.c - the authorization table of `gpufleet serve`
 * (controller/authz.c) on its own, without a server: every route of the
 * service has a row, each kind of caller gets the decision its column
 * says with the scope it implies, and a job's reason names no job of
 * another team.  test_serve_api.c drives the same table over HTTP.
 */
#include "controller/authz.h"
#include "controller/service.h"
#include "helpers.h"
#include "server/router.h"

static struct gf_auth_entry admin = { .admin = true };
static struct gf_auth_entry team = { .team = "vision" };
static struct gf_auth_entry node = { .node = "gpu-01" };

/* Every method of every route of the service has a rule; a route
 * without one is named. */
static void test_every_route_has_a_rule(void **state)
{
	(void)state;
	const struct gf_route *routes;
	int n = gf_service_routes(&routes);
	struct gf_err e;
	gf_err_clear(&e);
	assert_true(n > 10);
	assert_int_equal(gf_authz_check_routes(routes, n, &e), 0);
	const struct gf_route extra[] = {
		{ GF_HTTP_GET | GF_HTTP_POST, "/v1/jobs", NULL, 0, NULL },
		{ GF_HTTP_GET, "/v1/secret", NULL, 0, NULL },
	};
	assert_int_equal(gf_authz_check_routes(extra, 2, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "GET /v1/secret"));
	/* HEAD is GET's; an unknown route is nobody's */
	assert_ptr_equal(gf_authz_rule(GF_HTTP_HEAD, "/v1/jobs"),
			 gf_authz_rule(GF_HTTP_GET, "/v1/jobs"));
	assert_null(gf_authz_rule(GF_HTTP_PUT, "/v1/jobs"));
	struct gf_grant g;
	char msg[256];
	assert_int_equal(gf_authz_decide(NULL, GF_AZ_ADMIN, &admin, NULL, &g,
					 msg, sizeof(msg)),
			 403);
}

static unsigned decide(unsigned method, const char *pattern,
		       const struct gf_auth_entry *who, const char *name,
		       struct gf_grant *g)
{
	char msg[256];
	const struct gf_authz_rule *r = gf_authz_rule(method, pattern);
	assert_non_null(r);
	enum gf_az_caller kind = gf_authz_kind(who);
	unsigned st = gf_authz_decide(r, kind, who, name, g, msg, sizeof(msg));
	if (st)
		assert_true(msg[0] != '\0');
	return st;
}

/* The columns: 401 without a token, 403 for a refused kind, the scope of
 * an own-only kind. */
static void test_decisions(void **state)
{
	(void)state;
	struct gf_grant g;
	assert_int_equal(decide(GF_HTTP_POST, "/v1/jobs", NULL, NULL, &g), 401);
	assert_int_equal(decide(GF_HTTP_POST, "/v1/jobs", &admin, NULL, &g), 0);
	assert_string_equal(g.team, "");
	assert_true(gf_authz_team_ok(&g, "speech"));
	assert_int_equal(decide(GF_HTTP_POST, "/v1/jobs", &team, NULL, &g), 0);
	assert_string_equal(g.team, "vision");
	assert_true(gf_authz_team_ok(&g, "vision"));
	assert_false(gf_authz_team_ok(&g, "speech"));
	assert_int_equal(decide(GF_HTTP_POST, "/v1/jobs", &node, NULL, &g),
			 403);
	/* F1: services are the job routes' */
	assert_int_equal(
		decide(GF_HTTP_PUT, "/v1/services/{name}", &node, "evil", &g),
		403);
	assert_int_equal(
		decide(GF_HTTP_PUT, "/v1/services/{name}", &team, "vsvc", &g),
		0);
	assert_string_equal(g.team, "vision");
	/* F10 */
	assert_int_equal(
		decide(GF_HTTP_GET, "/v1/mig/proposal", &team, NULL, &g), 403);
	assert_int_equal(
		decide(GF_HTTP_GET, "/v1/mig/proposal", &node, NULL, &g), 403);
	assert_int_equal(decide(GF_HTTP_GET, "/v1/services", &node, NULL, &g),
			 403);
	assert_int_equal(decide(GF_HTTP_GET, "/v1/queue", &team, NULL, &g), 0);
	assert_string_equal(g.team, "vision");
	/* a node's token: its own node only */
	assert_int_equal(decide(GF_HTTP_POST, "/v1/nodes/{name}/heartbeat",
				&node, "gpu-01", &g),
			 0);
	assert_string_equal(g.node, "gpu-01");
	assert_int_equal(decide(GF_HTTP_POST, "/v1/nodes/{name}/heartbeat",
				&node, "gpu-02", &g),
			 403);
	assert_int_equal(decide(GF_HTTP_POST, "/v1/nodes/{name}/heartbeat",
				&team, "gpu-01", &g),
			 403);
	assert_int_equal(decide(GF_HTTP_POST, "/v1/nodes/{name}/heartbeat",
				&admin, "gpu-02", &g),
			 0);
	/* open routes */
	assert_int_equal(decide(GF_HTTP_GET, "/healthz", NULL, NULL, &g), 0);
	assert_int_equal(decide(GF_HTTP_GET, "/metrics", NULL, NULL, &g), 0);
	/* the extender's client; the others as their columns say */
	char msg[128];
	const struct gf_authz_rule *bind =
		gf_authz_rule(GF_HTTP_POST, "/k8s/bind");
	assert_int_equal(gf_authz_decide(bind, GF_AZ_K8S, NULL, NULL, &g, msg,
					 sizeof(msg)),
			 0);
	assert_int_equal(gf_authz_decide(bind, GF_AZ_NONE, NULL, NULL, &g, msg,
					 sizeof(msg)),
			 401);
	assert_int_equal(gf_authz_decide(bind, GF_AZ_TEAM, &team, NULL, &g, msg,
					 sizeof(msg)),
			 403);
	assert_int_equal(decide(GF_HTTP_GET, "/k8s/reconcile", &team, NULL, &g),
			 403);
}

static bool hidden(const char *id, void *arg)
{
	(void)arg;
	return !strcmp(id, "j12") || !strcmp(id, "j7");
}

/* A job's reason: the ids of jobs the reader may not see are not
 * named; its own, and words that only start with j, are kept. */
static void test_reason(void **state)
{
	(void)state;
	char out[160];
	const char *plain = "no node has room now";
	assert_ptr_equal(gf_authz_reason(plain, hidden, NULL, out, sizeof(out)),
			 plain);
	assert_string_equal(
		gf_authz_reason("reserved for j12 (no max runtime: cannot "
				"backfill)",
				hidden, NULL, out, sizeof(out)),
		"reserved for another team's job (no max runtime: cannot "
		"backfill)");
	assert_string_equal(
		gf_authz_reason("behind higher priority work (j7 waits for "
				"room)",
				hidden, NULL, out, sizeof(out)),
		"behind higher priority work (another team's job waits for "
		"room)");
	assert_string_equal(gf_authz_reason("reserved for j3 (j12x, xj12)",
					    hidden, NULL, out, sizeof(out)),
			    "reserved for j3 (j12x, xj12)");
	char small[12];
	assert_string_equal(gf_authz_reason("for j12 now", hidden, NULL, small,
					    sizeof(small)),
			    "for another");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_route_has_a_rule),
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_reason),
	};
	return cmocka_run_group_tests_name("authz", tests, NULL, NULL);
}
