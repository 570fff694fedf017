/*
 * router.h - the route table of an HTTP service and the matching of a
 * request to one of its rows.  Pure: no I/O, no allocation; server.c
 * calls it per request and test_server.c calls it directly.
 *
 * A row is a set of methods, a path pattern and a handler:
 *
 *   { GF_HTTP_GET, "/v1/jobs/{id}", job_get, 0, "one job, JSON" }
 *
 * A pattern is '/' then segments separated by '/'; a segment is literal
 * text or a parameter "{name}" that matches one whole non-empty segment
 * (names: [a-z0-9_], at most GF_ROUTE_MAX_PARAMS per pattern).  "/" is
 * the root.  No trailing '/' ("/v1/jobs/" does not match "/v1/jobs"), no
 * wildcards.  The query string is not part of the path (server.h reads
 * it).
 *
 * Matching (as Go 1.22's ServeMux): of the rows whose pattern matches the
 * path and whose methods include the request's, the most specific wins:
 * at the first segment where two patterns differ, a literal beats a
 * parameter.  No such row but some pattern matches the path: 405, and
 * `allow` holds the methods the path has (for the Allow header).  No
 * pattern matches: 404.  A GET row answers HEAD too.  gf_routes_check()
 * refuses a table in which two rows could both be the most specific for
 * one request (same shape, a method in common), so the answer never
 * depends on the table's order.
 */
#ifndef GF_SERVER_ROUTER_H
#define GF_SERVER_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/err.h>

enum gf_http_method {
	GF_HTTP_GET = 1 << 0,
	GF_HTTP_HEAD = 1 << 1,
	GF_HTTP_POST = 1 << 2,
	GF_HTTP_PUT = 1 << 3,
	GF_HTTP_DELETE = 1 << 4,
	GF_HTTP_PATCH =
		1 << 5, /* sent by client.h (merge patches), not served */
};
#define GF_HTTP_METHODS 0x1fu /* every method served */

#define GF_ROUTE_MAX_PARAMS   8
#define GF_ROUTE_MAX_SEGMENTS 32
#define GF_HTTP_PATH_MAX      2048 /* longer request paths: 414 */

struct gf_http_req;

/*
 * A handler answers through server.h's gf_reply*() and returns 0, or a
 * negative GF_E* code: when it returns without having replied, the
 * server answers 500 {"error": "internal", "detail": its text}.  It runs
 * on the connection's own thread; several run at once.
 */
typedef int (*gf_http_handler)(struct gf_http_req *req, void *arg);

struct gf_route {
	unsigned methods; /* GF_HTTP_* bits; GET implies HEAD */
	const char *pattern;
	gf_http_handler fn;
	size_t body_max;  /* request body cap; 0: the server's */
	const char *help; /* one line for -h listings, or NULL */
};

struct gf_route_param {
	const char *name; /* in the pattern, not NUL-terminated */
	size_t name_len;
	const char *value; /* NUL-terminated, in the caller's buf */
};

struct gf_route_match {
	int route;	 /* the row, or -1 */
	unsigned status; /* 0: matched; 404, 405, or 414 (path too long) */
	unsigned allow;	 /* the path's methods (GET adds HEAD); 0 on 404 */
	int nparams;
	struct gf_route_param param[GF_ROUTE_MAX_PARAMS];
	/* the path's copy, split: the caller's buf, which the parameters
	 * point into (a held request keeps its match; a buffer of the
	 * path's length, not of the longest path, is 2 KiB less each) */
	char *buf;
};

/*
 * Check a table: patterns well formed, methods known, a handler on each
 * row, no two rows ambiguous.  0, or GF_EINVAL with e naming the row.
 */
int gf_routes_check(const struct gf_route *r, int n,
		    struct gf_err *e) GF_MUST_CHECK;

/* Match method (one GF_HTTP_* bit, or 0 for one we do not serve) and
 * path against the table r (checked); the result in *m, its parameters
 * in buf (size bytes, kept by the caller while m is used: strlen(path)
 * + 1 is enough).  A path of GF_HTTP_PATH_MAX bytes or more, or one
 * buf cannot hold, is a 414. */
void gf_route_match(const struct gf_route *r, int n, unsigned method,
		    const char *path, char *buf, size_t size,
		    struct gf_route_match *m);

/* A path parameter of a match by name; borrowed from m, or NULL. */
const char *gf_route_param(const struct gf_route_match *m, const char *name);

/* "GET" -> GF_HTTP_GET; 0 for any other method. */
unsigned gf_http_method_parse(const char *s);
/* GF_HTTP_GET -> "GET"; "?" for anything but one bit. */
const char *gf_http_method_name(unsigned m);
/* methods as an Allow header value ("GET, HEAD, POST") into buf; its
 * length. */
size_t gf_http_allow(unsigned methods, char *buf, size_t size);

#endif
