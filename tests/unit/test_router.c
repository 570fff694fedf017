/*
 * test_router.c - the route tables (src/server/router.c): patterns, path
 * parameters, methods, 404/405/414, ambiguous tables refused, and the
 * method names.
 */
#include "helpers.h"
#include "server/router.h"
#include "server/server.h"

static int nop(struct gf_http_req *r, void *arg)
{
	(void)r;
	(void)arg;
	return 0;
}

/* --- router ---------------------------------------------------------- */

static void test_router_check(void **state)
{
	(void)state;
	struct gf_err e;
	const struct gf_route good[] = {
		{ GF_HTTP_GET | GF_HTTP_POST, "/v1/jobs", nop, 0, NULL },
		{ GF_HTTP_GET, "/v1/jobs/{id}", nop, 0, NULL },
		{ GF_HTTP_DELETE, "/v1/jobs/{job_id}", nop, 0, NULL },
		{ GF_HTTP_GET, "/v1/jobs/stats", nop, 0, NULL },
		{ GF_HTTP_GET, "/", nop, 0, NULL },
	};
	assert_int_equal(gf_routes_check(good, 5, &e), 0);
	static const char *const bad[] = {
		"v1/jobs",   "/v1//jobs",
		"/v1/jobs/", "/{}",
		"/{Id}",     "/a/{x",
		"/a/b}",     "/a/x{y}z",
		"",	     "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_route r = { GF_HTTP_GET, bad[i], nop, 0, NULL };
		gf_err_clear(&e);
		assert_int_equal(gf_routes_check(&r, 1, &e), GF_EINVAL);
		assert_non_null(strstr(e.msg, "malformed pattern"));
	}
	struct gf_route nofn = { GF_HTTP_GET, "/a", NULL, 0, NULL };
	assert_int_equal(gf_routes_check(&nofn, 1, &e), GF_EINVAL);
	struct gf_route nometh = { 0, "/a", nop, 0, NULL };
	assert_int_equal(gf_routes_check(&nometh, 1, &e), GF_EINVAL);
	/* the same shape with a method in common: which one answers would
	 * depend on the order; HEAD counts for GET */
	const struct gf_route amb[] = {
		{ GF_HTTP_GET, "/v1/jobs/{id}", nop, 0, NULL },
		{ GF_HTTP_HEAD | GF_HTTP_PUT, "/v1/jobs/{name}", nop, 0, NULL },
	};
	gf_err_clear(&e);
	assert_int_equal(gf_routes_check(amb, 2, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "routes 0 '/v1/jobs/{id}' and 1 "
				      "'/v1/jobs/{name}' match the same"));
}

static void test_router_match(void **state)
{
	(void)state;
	const struct gf_route r[] = {
		{ GF_HTTP_GET | GF_HTTP_POST, "/v1/jobs", nop, 0, NULL },
		{ GF_HTTP_GET, "/v1/jobs/{id}", nop, 0, NULL },
		{ GF_HTTP_DELETE, "/v1/jobs/{id}", nop, 0, NULL },
		{ GF_HTTP_GET, "/v1/jobs/stats", nop, 0, NULL },
		{ GF_HTTP_PUT, "/v1/nodes/{node}/gpus/{gpu}", nop, 0, NULL },
		{ GF_HTTP_GET, "/", nop, 0, NULL },
	};
	const int n = 6;
	assert_int_equal(gf_routes_check(r, n, NULL), 0);
	struct gf_route_match m;
	char buf[GF_HTTP_PATH_MAX];
	gf_route_match(r, n, GF_HTTP_POST, "/v1/jobs", buf, sizeof(buf), &m);
	assert_int_equal(m.status, 0);
	assert_int_equal(m.route, 0);
	gf_route_match(r, n, GF_HTTP_GET, "/v1/jobs/j-42", buf, sizeof(buf),
		       &m);
	assert_int_equal(m.route, 1);
	assert_string_equal(gf_route_param(&m, "id"), "j-42");
	assert_null(gf_route_param(&m, "i"));
	assert_null(gf_route_param(&m, "idx"));
	/* HEAD is answered by GET rows */
	gf_route_match(r, n, GF_HTTP_HEAD, "/v1/jobs/7", buf, sizeof(buf), &m);
	assert_int_equal(m.route, 1);
	/* one pattern, the row is chosen by the method */
	gf_route_match(r, n, GF_HTTP_DELETE, "/v1/jobs/7", buf, sizeof(buf),
		       &m);
	assert_int_equal(m.route, 2);
	assert_string_equal(gf_route_param(&m, "id"), "7");
	/* a literal beats a parameter, whatever the table's order */
	gf_route_match(r, n, GF_HTTP_GET, "/v1/jobs/stats", buf, sizeof(buf),
		       &m);
	assert_int_equal(m.route, 3);
	assert_int_equal(m.nparams, 0);
	/* ... but only for its methods: DELETE /v1/jobs/stats is a job */
	gf_route_match(r, n, GF_HTTP_DELETE, "/v1/jobs/stats", buf, sizeof(buf),
		       &m);
	assert_int_equal(m.route, 2);
	assert_string_equal(gf_route_param(&m, "id"), "stats");
	gf_route_match(r, n, GF_HTTP_PUT, "/v1/nodes/n3/gpus/5", buf,
		       sizeof(buf), &m);
	assert_int_equal(m.route, 4);
	assert_string_equal(gf_route_param(&m, "node"), "n3");
	assert_string_equal(gf_route_param(&m, "gpu"), "5");
	gf_route_match(r, n, GF_HTTP_GET, "/", buf, sizeof(buf), &m);
	assert_int_equal(m.route, 5);
	/* 405: the path is known; allow holds its methods (GET adds HEAD) */
	gf_route_match(r, n, GF_HTTP_PUT, "/v1/jobs/7", buf, sizeof(buf), &m);
	assert_int_equal(m.status, 405);
	assert_int_equal(m.route, -1);
	char allow[64];
	gf_http_allow(m.allow, allow, sizeof(allow));
	assert_string_equal(allow, "GET, HEAD, DELETE");
	gf_route_match(r, n, 0 /* PATCH */, "/v1/jobs", buf, sizeof(buf), &m);
	assert_int_equal(m.status, 405);
	gf_http_allow(m.allow, allow, sizeof(allow));
	assert_string_equal(allow, "GET, HEAD, POST");
	/* 404: no pattern has the path */
	static const char *const none[] = {
		"/v1/jobs/",
		"/v1/jobs//x",
		"/v1/job",
		"/v1/jobs/7/x",
		"//",
		"",
		"v1/jobs",
		"/v1/nodes/n3/gpus/",
		"/v1/nodes//gpus/1",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		gf_route_match(r, n, GF_HTTP_GET, none[i], buf, sizeof(buf),
			       &m);
		if (m.status != 404)
			print_message("'%s' -> %u\n", none[i], m.status);
		assert_int_equal(m.status, 404);
		assert_int_equal(m.allow, 0);
	}
	/* 414: longer than any path kept */
	char longp[GF_HTTP_PATH_MAX + 8];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	gf_route_match(r, n, GF_HTTP_GET, longp, buf, sizeof(buf), &m);
	assert_int_equal(m.status, 414);
	/* the copy in a buffer of the path's length (as a request keeps
	 * it): the parameters point there; one byte short: 414 */
	static const char p5[] = "/v1/nodes/n3/gpus/5";
	char exact[sizeof(p5)];
	gf_route_match(r, n, GF_HTTP_PUT, p5, exact, sizeof(exact), &m);
	assert_int_equal(m.route, 4);
	assert_string_equal(gf_route_param(&m, "gpu"), "5");
	const char *node = gf_route_param(&m, "node");
	assert_true(node >= exact && node < exact + sizeof(exact));
	gf_route_match(r, n, GF_HTTP_PUT, p5, exact, sizeof(exact) - 1, &m);
	assert_int_equal(m.status, 414);
	assert_int_equal(m.route, -1);
	/* more segments than a pattern may have: 404, nothing overflows */
	char deep[200] = "";
	for (int i = 0; i < 40; i++)
		strcat(deep, "/x");
	gf_route_match(r, n, GF_HTTP_GET, deep, buf, sizeof(buf), &m);
	assert_int_equal(m.status, 404);
}

static void test_methods(void **state)
{
	(void)state;
	assert_int_equal(gf_http_method_parse("GET"), GF_HTTP_GET);
	assert_int_equal(gf_http_method_parse("DELETE"), GF_HTTP_DELETE);
	assert_int_equal(gf_http_method_parse("get"), 0);
	assert_int_equal(gf_http_method_parse("PATCH"), 0);
	assert_int_equal(gf_http_method_parse(NULL), 0);
	assert_string_equal(gf_http_method_name(GF_HTTP_PUT), "PUT");
	assert_string_equal(gf_http_method_name(3), "?");
	char b[8];
	gf_http_allow(GF_HTTP_METHODS, b, sizeof(b)); /* cut whole */
	assert_string_equal(b, "GET");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_router_check),
		cmocka_unit_test(test_router_match),
		cmocka_unit_test(test_methods),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
