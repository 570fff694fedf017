/*
 * guard.c - what the HTTP runtime refuses before routing a request,
 * because it is malformed in a way that other parsers (a proxy in front,
 * libmicrohttpd itself, a C string) would read differently, or because
 * it would exhaust the server (server.h, "Guards").
 *
 * libmicrohttpd 0.9.75 hands the URL, headers and query to us as C
 * strings: a NUL byte (raw, or %00 once decoded) silently cuts them, so
 * that "/v1/jobs/j1%00x" reaches the router as "/v1/jobs/j1" and
 * "Bearer TOKEN\0junk" as "Bearer TOKEN".  It keeps the request line
 * and each header line in its read buffer, in order, with the line ends
 * overwritten by NULs; so a line was cut by a NUL exactly when bytes
 * other than NUL (or the blanks it trims) lie between where the string
 * ends and where the next one starts.  The checks below compare those
 * positions and never read outside the buffer's lines.
 *
 * It uses the first Content-Length, and lets Transfer-Encoding win over
 * it: a proxy that picks the other one sees a different body and a
 * different next request (request smuggling).  Both are refused.
 *
 * Its memory pool (32 KiB a connection) holds a record per query
 * argument: a query of a few hundred arguments exhausts it while the
 * request line is parsed, and then it closes the connection without an
 * answer.  The query is cut before it parses it (gf__guard_uri) and the
 * request answered 414 here.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/server_int.h"
#include "util/fmt.h"

void gf__guard_uri(struct gf_http_req *r, const char *uri)
{
	if (!uri)
		return;
	r->raw_uri = uri;
	r->raw_uri_len = strlen(uri);
	for (const char *p = strchr(uri, '%'); p; p = strchr(p + 1, '%'))
		if (p[1] == '0' && p[2] == '0')
			r->uri_nul = true;
	const char *q = strchr(uri, '?');
	if (!q || q[1] == '\0')
		return;
	r->nargs = 1;
	for (const char *p = q + 1; *p; p++)
		r->nargs += *p == '&';
	if (r->nargs > GF_SERVER_MAX_ARGS) {
		/* libmicrohttpd found the '?' already and parses what
		 * follows it next: nothing, now (its buffer: writable) */
		char *w = (char *)(uintptr_t)(q + 1);
		*w = '\0';
	}
}

/* The headers as the scan sees them. */
struct scan {
	int n;
	int ncl;	      /* Content-Length headers */
	const char *cl;	      /* the first one's value */
	bool cl_differ;	      /* another one differs */
	bool cl_bad;	      /* not a decimal number */
	bool te;	      /* Transfer-Encoding */
	const char *end;      /* where the last string seen ends */
	const char *nul_in;   /* the header a NUL cut, or NULL */
	const char *last_val; /* the last header's value and length */
	size_t last_len;
};

/* Only NULs and blanks between the end of one string and the start of
 * the next one in the read buffer: nothing was cut.  Strings out of
 * order (not one buffer) are not judged. */
static bool gap_clean(const char *end, const char *next)
{
	if (!end || next < end || next - end > 65536)
		return true;
	for (const char *p = end; p < next; p++)
		if (*p != '\0' && *p != ' ' && *p != '\t')
			return false;
	return true;
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind,
				   const char *key, size_t key_len,
				   const char *value, size_t value_len)
{
	(void)kind;
	struct scan *sc = cls;
	sc->n++;
	if (!sc->nul_in && (!gap_clean(sc->end, key) ||
			    (value && !gap_clean(key + key_len, value))))
		sc->nul_in = key;
	if (value) {
		sc->end = value + value_len;
		sc->last_val = value;
		sc->last_len = value_len;
	} else {
		sc->end = key + key_len;
	}
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		const char *v = value ? value : "";
		sc->cl_bad |=
			*v == '\0' || strspn(v, "0123456789") != value_len;
		if (sc->ncl++ == 0)
			sc->cl = v;
		else if (strcmp(sc->cl, v) != 0)
			sc->cl_differ = true;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		sc->te = true;
	}
	return MHD_YES;
}

/*
 * A NUL in the request target: the URI callback measured it as received
 * (up to its first NUL); libmicrohttpd's version string starts one space
 * after the target's real end.
 */
static bool target_cut(const struct gf_http_req *r, const char *version)
{
	if (r->uri_nul)
		return true;
	if (!r->raw_uri || !version || !*version || version <= r->raw_uri)
		return false;
	return (size_t)(version - 1 - r->raw_uri) != r->raw_uri_len;
}

bool gf__guard_request(struct gf_http_req *r, const char *version,
		       unsigned *status, const char **code, char *detail,
		       size_t size)
{
	struct scan sc = { 0 };
	if (version && *version)
		sc.end = version + strlen(version);
	MHD_get_connection_values_n(r->conn, MHD_HEADER_KIND, scan_header, &sc);
	/* the last header: its line end and the empty line follow it, two
	 * NULs at least; a byte other than NUL there was cut off */
	if (!sc.nul_in && sc.last_val && sc.last_val[sc.last_len + 1] != '\0')
		sc.nul_in = "the last header";
	*status = 400;
	*code = "bad-request";
	if (r->nargs > GF_SERVER_MAX_ARGS) {
		*status = 414;
		*code = "too-many-arguments";
		gf_note(detail, size, "%u query arguments; at most %d",
			r->nargs, GF_SERVER_MAX_ARGS);
	} else if (sc.n > GF_SERVER_MAX_REQ_HEADERS) {
		*status = 431;
		*code = "too-many-headers";
		gf_note(detail, size, "%d request headers; at most %d", sc.n,
			GF_SERVER_MAX_REQ_HEADERS);
	} else if (target_cut(r, version)) {
		gf_note(detail, size, "a NUL byte in the request target");
	} else if (sc.nul_in) {
		gf_note(detail, size, "a NUL byte in header '%.64s'",
			sc.nul_in);
	} else if (sc.cl_differ) {
		gf_note(detail, size,
			"Content-Length given twice, with "
			"different values");
	} else if (sc.cl_bad) {
		gf_note(detail, size,
			"Content-Length: expected a decimal number");
	} else if (sc.ncl && sc.te) {
		gf_note(detail, size,
			"both Content-Length and "
			"Transfer-Encoding");
	} else {
		return false;
	}
	return true;
}
