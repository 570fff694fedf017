/*
 * serve_helpers.h - what the controller's service tests share
 * (test_serve_api.c, test_serve_nodes.c): the base URL of the service
 * under test, one HTTP exchange with it, a member of a parsed answer,
 * files and the clock.
 */
#ifndef GF_TEST_SERVE_HELPERS_H
#define GF_TEST_SERVE_HELPERS_H

#include <time.h>

#include "helpers.h"
#include "server/client.h"
#include "util/json.h"

/* "http://127.0.0.1:PORT" of the service under test (no trailing '/'). */
static char base[128];

static inline void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * One exchange with the service at `at` (no assertion: usable from any
 * thread): 0 with the status in *status and, when out is not NULL, the
 * parsed body in *out (NULL when empty or not JSON; the caller frees
 * it); else the client's error, with e saying it.  timeout_ms 0: the
 * client's default.
 */
static inline int http_try(const char *at, unsigned method, const char *path,
			   const char *token, const char *body, size_t len,
			   long timeout_ms, long *status, struct gf_jv **out,
			   struct gf_err *e)
{
	char url[512];
	snprintf(url, sizeof(url), "%s%s", at, path);
	struct gf_client_req q = { .method = method,
				   .url = url,
				   .token = token,
				   .body = body,
				   .body_len = body ? len : 0,
				   .timeout_ms = timeout_ms };
	struct gf_client_answer a;
	struct gf_err pe;
	if (out)
		*out = NULL;
	int rc = gf_client_request(NULL, &q, &a, e);
	if (rc == 0) {
		*status = a.status;
		if (out && a.body.len &&
		    gf_jv_parse(gf_buf_str(&a.body), a.body.len, out, &pe))
			*out = NULL;
	}
	gf_client_answer_release(&a);
	return rc;
}

/* One exchange with the service under test: the status; *out the parsed
 * body (may be NULL). */
static inline long http(unsigned method, const char *path, const char *token,
			const char *body, struct gf_jv **out)
{
	long st = 0;
	struct gf_err e;
	int rc = http_try(base, method, path, token, body,
			  body ? strlen(body) : 0, 0, &st, out, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	return st;
}

/* A string member, "" when absent or not a string. */
static inline const char *str(const struct gf_jv *v, const char *k)
{
	const char *s = gf_jv_str(gf_jv_get(v, k));
	return s ? s : "";
}

/* An integer member, -1 when absent or not an integer. */
static inline int64_t num(const struct gf_jv *v, const char *k)
{
	int64_t x;
	return gf_jv_int(gf_jv_get(v, k), &x) ? x : -1;
}

/* Monotonic milliseconds. */
static inline int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

#endif
