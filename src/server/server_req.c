/*
 * server_req.c - the request as handlers read it (server.h's gf_req_*):
 * method, path, a route's parameter, the query, headers, the bearer
 * token, the body and the body as JSON, the client's address.  They only
 * read what server.c took from libmicrohttpd for the request.
 */
#include <string.h>
#include <strings.h>

#include "server/server.h"
#include "server/server_int.h"
#include "util/buf.h"
#include "util/json.h"

unsigned gf_req_method(const struct gf_http_req *r)
{
	return r->method;
}

const char *gf_req_path(const struct gf_http_req *r)
{
	return r->path;
}

const char *gf_req_param(const struct gf_http_req *r, const char *name)
{
	return gf_route_param(&r->match, name);
}

const char *gf_req_query(const struct gf_http_req *r, const char *name)
{
	const char *v = NULL;
	size_t len = 0;
	if (MHD_lookup_connection_value_n(r->conn, MHD_GET_ARGUMENT_KIND, name,
					  strlen(name), &v, &len) != MHD_YES)
		return NULL;
	return v ? v : "";
}

const char *gf_req_header(const struct gf_http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *gf_req_bearer(const struct gf_http_req *r)
{
	const char *a = gf_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!a || strncasecmp(a, "Bearer ", 7) != 0)
		return NULL;
	a += 7;
	while (*a == ' ')
		a++;
	return *a ? a : NULL;
}

const char *gf_req_body(const struct gf_http_req *r, size_t *len)
{
	*len = r->body.len;
	return gf_buf_str(&r->body);
}

const char *gf_req_client(const struct gf_http_req *r)
{
	return r->client;
}

int gf_req_json(struct gf_http_req *r, struct gf_jv **out)
{
	struct gf_err e;
	gf_err_clear(&e);
	*out = NULL;
	if (r->body.len == 0) {
		gf_reply_error(r, 400, "malformed-json",
			       "expected a JSON body, got none");
		return GF_EPARSE;
	}
	int rc = gf_jv_parse(gf_buf_str(&r->body), r->body.len, out, &e);
	if (rc)
		gf_reply_error(r, 400, "malformed-json", "%s", e.msg);
	return rc;
}
