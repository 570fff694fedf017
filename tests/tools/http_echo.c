/*
 * http_echo.c - a small service on src/server/, for the integration
 * tests (tests/integration/server_http.sh): a route of each method, path
 * and query parameters, a JSON body, a slow route to be in flight when
 * SIGTERM comes.
 *
 *   http_echo [--listen 127.0.0.1:0] [--max-conns N]
 *             [--max-conns-per-client N (0: no limit)] [--idle-timeout S]
 *             [--body-max BYTES] [--drain-ms MS] [--threads N]
 *
 * --threads N: N event loops instead of a thread per connection.
 * Prints "http_echo: listening on http://127.0.0.1:PORT/" on stderr,
 * serves until SIGTERM or SIGINT, then stops the server the way services
 * do (requests in flight finish) and exits 0.
 *
 *   GET    /v1/items/{id}[?q=X]  {"id", "q", "token"}
 *   GET    /v1/items/stats       {"stats": true} (a literal beats {id})
 *   POST   /v1/items             body {"name": STRING}: 201 {"name"} and
 *                                Location; 422 without a name
 *   PUT    /v1/items/{id}        body any JSON: {"id", "members"}
 *   DELETE /v1/items/{id}        {"deleted"}
 *   GET    /v1/slow?ms=N         answers after N ms (at most 10000)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"
#include "util/json.h"
#include "util/log.h"

static int reply_obj(struct gf_http_req *r, unsigned status, const char *k1,
		     const char *v1, const char *k2, const char *v2)
{
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 4096);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	if (v1)
		gf_json_str(&j, k1, v1);
	else
		gf_json_null(&j, k1);
	if (k2 && v2)
		gf_json_str(&j, k2, v2);
	else if (k2)
		gf_json_null(&j, k2);
	gf_json_obj_end(&j);
	int rc = gf_json_error(&j);
	if (rc == 0)
		rc = gf_reply_json(r, status, &b);
	gf_buf_release(&b);
	return rc;
}

static int item_get(struct gf_http_req *r, void *arg)
{
	(void)arg;
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 4096);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "id", gf_req_param(r, "id"));
	const char *q = gf_req_query(r, "q"), *t = gf_req_bearer(r);
	if (q)
		gf_json_str(&j, "q", q);
	else
		gf_json_null(&j, "q");
	if (t)
		gf_json_str(&j, "token", t);
	else
		gf_json_null(&j, "token");
	gf_json_obj_end(&j);
	int rc = gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

static int item_stats(struct gf_http_req *r, void *arg)
{
	(void)arg;
	static const char body[] = "{\"stats\": true}\n";
	return gf_reply(r, 200, "application/json", body, sizeof(body) - 1);
}

static int item_post(struct gf_http_req *r, void *arg)
{
	(void)arg;
	struct gf_jv *v;
	int rc = gf_req_json(r, &v);
	if (rc)
		return rc;
	const char *name = gf_jv_str(gf_jv_get(v, "name"));
	if (!name) {
		rc = gf_reply_error(r, 422, "invalid",
				    "'name': expected a string");
	} else {
		gf_reply_header(r, "Location", "/v1/items/1");
		rc = reply_obj(r, 201, "name", name, NULL, NULL);
	}
	gf_jv_free(v);
	return rc;
}

static int item_put(struct gf_http_req *r, void *arg)
{
	(void)arg;
	struct gf_jv *v;
	int rc = gf_req_json(r, &v);
	if (rc)
		return rc;
	char n[32];
	snprintf(n, sizeof(n), "%zu", gf_jv_len(v));
	rc = reply_obj(r, 200, "id", gf_req_param(r, "id"), "members", n);
	gf_jv_free(v);
	return rc;
}

static int item_delete(struct gf_http_req *r, void *arg)
{
	(void)arg;
	return reply_obj(r, 200, "deleted", gf_req_param(r, "id"), NULL, NULL);
}

static int slow(struct gf_http_req *r, void *arg)
{
	(void)arg;
	const char *q = gf_req_query(r, "ms");
	long ms = q ? strtol(q, NULL, 10) : 0;
	ms = ms < 0 ? 0 : ms > 10000 ? 10000 : ms;
	/* what a test waits for before it stops the server mid-request */
	fprintf(stderr, "http_echo: slow request in flight\n");
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	char body[64];
	int n = snprintf(body, sizeof(body), "slept %ld ms\n", ms);
	return gf_reply(r, 200, "text/plain", body, (size_t)n);
}

static const struct gf_route routes[] = {
	{ GF_HTTP_GET, "/v1/items/{id}", item_get, 0, NULL },
	{ GF_HTTP_GET, "/v1/items/stats", item_stats, 0, NULL },
	{ GF_HTTP_POST, "/v1/items", item_post, 0, NULL },
	{ GF_HTTP_PUT, "/v1/items/{id}", item_put, 0, NULL },
	{ GF_HTTP_DELETE, "/v1/items/{id}", item_delete, 0, NULL },
	{ GF_HTTP_GET, "/v1/slow", slow, 0, NULL },
};

static unsigned long number(const char *opt, const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end) {
		fprintf(stderr, "http_echo: %s: expected a number, got '%s'\n",
			opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct gf_server_opts o = { .name = "http_echo",
				    .listen = "127.0.0.1:0" };
	enum gf_log_level lv; /* GPUFLEET_LOG=debug: each request logged */
	const char *env = getenv("GPUFLEET_LOG");
	if (env && gf_log_parse_level(env, &lv) == 0)
		gf_log_set_level(lv);
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--listen"))
			o.listen = v;
		else if (!strcmp(k, "--max-conns"))
			o.max_connections = (unsigned)number(k, v);
		else if (!strcmp(k, "--max-conns-per-client"))
			o.max_per_client = number(k, v) ? (unsigned)number(k, v)
							: GF_SERVER_NO_LIMIT;
		else if (!strcmp(k, "--idle-timeout"))
			o.idle_timeout_s = (unsigned)number(k, v);
		else if (!strcmp(k, "--body-max"))
			o.body_max = number(k, v);
		else if (!strcmp(k, "--drain-ms"))
			o.drain_ms = (unsigned)number(k, v);
		else if (!strcmp(k, "--threads"))
			o.threads = (unsigned)number(k, v);
		else {
			fprintf(stderr, "http_echo: unknown option '%s'\n", k);
			return 2;
		}
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	struct gf_server *s;
	struct gf_err e;
	if (gf_server_start(&s, routes, sizeof(routes) / sizeof(routes[0]), &o,
			    &e) != 0) {
		fprintf(stderr, "http_echo: %s\n", e.msg);
		return 1;
	}
	fprintf(stderr, "http_echo: listening on %s\n", gf_server_url(s));
	int sig;
	sigwait(&set, &sig);
	fprintf(stderr, "http_echo: %s, stopping\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT");
	gf_server_stop(s);
	fprintf(stderr, "http_echo: stopped\n");
	return 0;
}
