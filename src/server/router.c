/*
 * router.c - route tables and matching (rules in router.h).
 *
 * Invariants: a match never allocates; every parameter value points into
 * m->buf (the caller's), a NUL-separated copy of the path; a pattern's
 * specificity is a 32-bit key whose bit (31 - i) is set when segment i is
 * literal, so the larger key is the more specific pattern (literal first at the
 * first difference).  gf_routes_check() guarantees at most one row has the
 * largest key among those matching one request.
 */
#include "server/router.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct seg {
	const char *p;
	size_t len;
	bool param; /* "{name}": p and len are the name's */
};

/* Split a pattern into segments; their number, or -1 when malformed. */
static int split_pattern(const char *pat, struct seg *s, int max)
{
	if (!pat || pat[0] != '/')
		return -1;
	if (strcmp(pat, "/") == 0)
		return 0;
	int n = 0;
	const char *p = pat + 1;
	for (;;) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 0 || n == max)
			return -1;
		s[n].param = p[0] == '{';
		s[n].p = s[n].param ? p + 1 : p;
		s[n].len = s[n].param ? len - 2 : len;
		if (s[n].param && (len < 3 || p[len - 1] != '}'))
			return -1;
		for (size_t i = 0; i < s[n].len; i++) {
			char c = s[n].p[i];
			if (c == '{' || c == '}')
				return -1;
			if (s[n].param && !((c >= 'a' && c <= 'z') ||
					    (c >= '0' && c <= '9') || c == '_'))
				return -1;
		}
		n++;
		if (!end)
			return n;
		p = end + 1;
	}
}

/* GET answers HEAD too. */
static unsigned with_head(unsigned methods)
{
	return methods & GF_HTTP_GET ? methods | GF_HTTP_HEAD : methods;
}

static uint32_t key_of(const struct seg *s, int n)
{
	uint32_t k = 0;
	for (int i = 0; i < n; i++)
		if (!s[i].param)
			k |= 1u << (31 - i);
	return k;
}

int gf_routes_check(const struct gf_route *r, int n, struct gf_err *e)
{
	struct seg a[GF_ROUTE_MAX_SEGMENTS], b[GF_ROUTE_MAX_SEGMENTS];
	for (int i = 0; i < n; i++) {
		const char *pat = r[i].pattern ? r[i].pattern : "(null)";
		int na = split_pattern(r[i].pattern, a, GF_ROUTE_MAX_SEGMENTS);
		int params = 0;
		for (int k = 0; k < na; k++)
			params += a[k].param;
		if (na < 0 || params > GF_ROUTE_MAX_PARAMS)
			return gf_err_set(e, GF_EINVAL,
					  "route %d '%s': malformed pattern "
					  "(expected /literal/{name}, at most "
					  "%d segments and %d parameters)",
					  i, pat, GF_ROUTE_MAX_SEGMENTS,
					  GF_ROUTE_MAX_PARAMS);
		if (!r[i].methods || r[i].methods & ~GF_HTTP_METHODS ||
		    !r[i].fn)
			return gf_err_set(e, GF_EINVAL,
					  "route %d '%s': no method or no "
					  "handler",
					  i, pat);
		for (int j = 0; j < i; j++) {
			int nb = split_pattern(r[j].pattern, b,
					       GF_ROUTE_MAX_SEGMENTS);
			bool same = nb == na &&
				    key_of(a, na) == key_of(b, nb) &&
				    (with_head(r[i].methods) &
				     with_head(r[j].methods));
			for (int k = 0; same && k < na; k++)
				same = a[k].param ||
				       (a[k].len == b[k].len &&
					memcmp(a[k].p, b[k].p, a[k].len) == 0);
			if (same)
				return gf_err_set(e, GF_EINVAL,
						  "routes %d '%s' and %d '%s' "
						  "match the same requests",
						  j, r[j].pattern, i, pat);
		}
	}
	return 0;
}

/* Whether a pattern's segments match the path's; parameters into m. */
static bool match_one(const struct seg *s, int ns, char *const *path, int np,
		      struct gf_route_match *m)
{
	if (ns != np)
		return false;
	for (int i = 0; i < ns; i++) {
		if (s[i].param && path[i][0] == '\0')
			return false;
		if (!s[i].param && (strlen(path[i]) != s[i].len ||
				    memcmp(path[i], s[i].p, s[i].len) != 0))
			return false;
	}
	m->nparams = 0;
	for (int i = 0; i < ns; i++)
		if (s[i].param) {
			struct gf_route_param *p = &m->param[m->nparams++];
			p->name = s[i].p;
			p->name_len = s[i].len;
			p->value = path[i];
		}
	return true;
}

/* The path's segments, split in place in m->buf; their number, or -1 when
 * there are more than any pattern has. */
static int split_path(struct gf_route_match *m, char **seg)
{
	if (strcmp(m->buf, "/") == 0)
		return 0;
	int n = 0;
	char *p = m->buf + 1;
	for (;;) {
		if (n == GF_ROUTE_MAX_SEGMENTS)
			return -1;
		seg[n++] = p;
		char *slash = strchr(p, '/');
		if (!slash)
			return n;
		*slash = '\0';
		p = slash + 1;
	}
}

void gf_route_match(const struct gf_route *r, int n, unsigned method,
		    const char *path, char *buf, size_t size,
		    struct gf_route_match *m)
{
	m->route = -1;
	m->status = 404;
	m->allow = 0;
	m->nparams = 0;
	m->buf = buf;
	size_t len = strlen(path);
	if (len >= GF_HTTP_PATH_MAX || len >= size) {
		m->status = 414;
		return;
	}
	if (path[0] != '/')
		return;
	char whole[GF_HTTP_PATH_MAX]; /* path may be buf: split below */
	memcpy(whole, path, len + 1);
	memcpy(m->buf, path, len + 1);
	char *seg[GF_ROUTE_MAX_SEGMENTS];
	int np = split_path(m, seg);
	if (np < 0)
		return;
	struct seg s[GF_ROUTE_MAX_SEGMENTS];
	uint32_t best_key = 0;
	for (int i = 0; i < n; i++) {
		/* the pattern's literal head (up to its first parameter) is
		 * whole segments: a path that does not start with it cannot
		 * match (most rows, at one strncmp each) */
		const char *pat = r[i].pattern;
		if (pat && strncmp(whole, pat, strcspn(pat, "{")) != 0)
			continue;
		int ns = split_pattern(pat, s, GF_ROUTE_MAX_SEGMENTS);
		struct gf_route_match tmp;
		if (ns < 0 || !match_one(s, ns, seg, np, &tmp))
			continue;
		unsigned methods = with_head(r[i].methods);
		m->allow |= methods;
		uint32_t key = key_of(s, ns);
		if (!(methods & method) || (m->route >= 0 && key <= best_key))
			continue;
		m->route = i;
		best_key = key;
		m->nparams = tmp.nparams;
		memcpy(m->param, tmp.param, sizeof(tmp.param));
	}
	if (m->route >= 0)
		m->status = 0;
	else if (m->allow)
		m->status = 405;
}

const char *gf_route_param(const struct gf_route_match *m, const char *name)
{
	size_t len = strlen(name);
	for (int i = 0; i < m->nparams; i++)
		if (m->param[i].name_len == len &&
		    memcmp(m->param[i].name, name, len) == 0)
			return m->param[i].value;
	return NULL;
}

static const char *const method_names[] = { "GET", "HEAD", "POST", "PUT",
					    "DELETE" };
#define NMETHODS (sizeof(method_names) / sizeof(method_names[0]))

unsigned gf_http_method_parse(const char *s)
{
	for (size_t i = 0; s && i < NMETHODS; i++)
		if (strcmp(s, method_names[i]) == 0)
			return 1u << i;
	return 0;
}

const char *gf_http_method_name(unsigned m)
{
	for (size_t i = 0; i < NMETHODS; i++)
		if (m == 1u << i)
			return method_names[i];
	return "?";
}

size_t gf_http_allow(unsigned methods, char *buf, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NMETHODS; i++) {
		if (!(methods & 1u << i))
			continue;
		int k = snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
				 method_names[i]);
		if (k < 0 || (size_t)k >= size - len) {
			buf[len] = '\0'; /* whole names only */
			break;
		}
		len += (size_t)k;
	}
	return len;
}
