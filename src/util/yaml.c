/*
 * yaml.c - libyaml's document loader under a small node API (yaml.h).
 *
 * A struct gf_yn is made for each of libyaml's nodes, in one array in
 * the order of libyaml's node ids, so a child is found by its id without
 * copying anything (an alias is the node it names).
 */
#include "util/yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"

struct gf_yn {
	const struct gf_yaml *y;
	const yaml_node_t *n;
	int line;
};

struct gf_yaml {
	yaml_document_t doc;
	struct gf_yn *nodes; /* nodes[id - 1] is libyaml's node id */
	size_t count;
	char name[256];
};

static const struct gf_yn *by_id(const struct gf_yaml *y, int id)
{
	return id >= 1 && (size_t)id <= y->count ? &y->nodes[id - 1] : NULL;
}

/* The parser's next document into *out: 0 (*out NULL at the end of the
 * stream), or GF_EPARSE. */
static int load_next(yaml_parser_t *p, const char *name, int line0,
		     struct gf_yaml **out, struct gf_err *e)
{
	*out = NULL;
	struct gf_yaml *y = gf_calloc(1, sizeof(*y));
	gf_note(y->name, sizeof(y->name), "%s", name);
	if (!yaml_parser_load(p, &y->doc)) {
		int rc = gf_err_set(e, GF_EPARSE, "%s:%d: malformed YAML: %s",
				    name, (int)p->problem_mark.line + 1 + line0,
				    p->problem ? p->problem : "parse error");
		gf_free(y);
		return rc;
	}
	y->count = (size_t)(y->doc.nodes.top - y->doc.nodes.start);
	if (y->count == 0) { /* the stream's end: a document has a node */
		yaml_document_delete(&y->doc);
		gf_free(y);
		return 0;
	}
	y->nodes = gf_calloc(y->count ? y->count : 1, sizeof(*y->nodes));
	for (size_t i = 0; i < y->count; i++) {
		const yaml_node_t *n = &y->doc.nodes.start[i];
		y->nodes[i] =
			(struct gf_yn){ y, n,
					(int)n->start_mark.line + 1 + line0 };
	}
	*out = y;
	return 0;
}

static int start(yaml_parser_t *p, const char *text, size_t len,
		 const char *name, struct gf_err *e)
{
	if (len > GF_YAML_MAX)
		return gf_err_set(e, GF_ETOOBIG,
				  "%s: YAML text larger than %u bytes", name,
				  GF_YAML_MAX);
	if (!yaml_parser_initialize(p))
		return gf_err_set(e, GF_EINVAL, "%s: cannot start libyaml",
				  name);
	yaml_parser_set_input_string(p, (const unsigned char *)text, len);
	return 0;
}

int gf_yaml_parse(const char *text, size_t len, const char *name, int line0,
		  struct gf_yaml **out, struct gf_err *e)
{
	*out = NULL;
	yaml_parser_t p;
	int rc = start(&p, text, len, name, e);
	if (rc)
		return rc;
	rc = load_next(&p, name, line0, out, e);
	yaml_parser_delete(&p);
	if (rc == 0 && *out == NULL) { /* an empty text: a NULL root */
		*out = gf_calloc(1, sizeof(**out));
		gf_note((*out)->name, sizeof((*out)->name), "%s", name);
	}
	return rc;
}

int gf_yaml_parse_all(const char *text, size_t len, const char *name,
		      struct gf_yaml **docs, size_t max, size_t *n,
		      struct gf_err *e)
{
	*n = 0;
	yaml_parser_t p;
	int rc = start(&p, text, len, name, e);
	while (rc == 0) {
		struct gf_yaml *y;
		rc = load_next(&p, name, 0, &y, e);
		if (rc || y == NULL)
			break;
		if (*n == max) {
			gf_yaml_free(y);
			rc = gf_err_set(e, GF_ETOOBIG,
					"%s: more than %zu YAML documents",
					name, max);
			break;
		}
		docs[(*n)++] = y;
	}
	yaml_parser_delete(&p);
	for (; rc && *n > 0; (*n)--)
		gf_yaml_free(docs[*n - 1]);
	return rc;
}

/* The file's text (at most cap bytes, and never past GF_YAML_MAX). */
static int read_text(const char *path, size_t cap, char **text, size_t *len,
		     struct gf_err *e)
{
	return gf_file_read(path, cap < GF_YAML_MAX ? cap : GF_YAML_MAX, text,
			    len, e);
}

int gf_yaml_read(const char *path, size_t cap, struct gf_yaml **out,
		 struct gf_err *e)
{
	*out = NULL;
	char *text;
	size_t len;
	int rc = read_text(path, cap, &text, &len, e);
	if (rc)
		return rc;
	rc = gf_yaml_parse(text, len, path, 0, out, e);
	gf_free(text);
	return rc;
}

int gf_yaml_read_all(const char *path, size_t cap, struct gf_yaml **docs,
		     size_t max, size_t *n, struct gf_err *e)
{
	*n = 0;
	char *text;
	size_t len;
	int rc = read_text(path, cap, &text, &len, e);
	if (rc)
		return rc;
	rc = gf_yaml_parse_all(text, len, path, docs, max, n, e);
	gf_free(text);
	return rc;
}

void gf_yaml_free(struct gf_yaml *y)
{
	if (!y)
		return;
	yaml_document_delete(&y->doc);
	gf_free(y->nodes);
	gf_free(y);
}

const struct gf_yn *gf_yaml_root(const struct gf_yaml *y)
{
	return y && y->count ? &y->nodes[0] : NULL;
}

const char *gf_yaml_name(const struct gf_yaml *y)
{
	return y->name;
}

enum gf_yn_type gf_yn_type(const struct gf_yn *n)
{
	if (!n)
		return GF_YN_NONE;
	switch (n->n->type) {
	case YAML_SCALAR_NODE:
		return GF_YN_SCALAR;
	case YAML_SEQUENCE_NODE:
		return GF_YN_SEQ;
	case YAML_MAPPING_NODE:
		return GF_YN_MAP;
	default:
		return GF_YN_NONE;
	}
}

int gf_yn_line(const struct gf_yn *n)
{
	return n ? n->line : 0;
}

const char *gf_yn_scalar(const struct gf_yn *n, size_t *len)
{
	if (!n || n->n->type != YAML_SCALAR_NODE)
		return NULL;
	if (len)
		*len = n->n->data.scalar.length;
	return (const char *)n->n->data.scalar.value;
}

const char *gf_yn_str(const struct gf_yn *n)
{
	return gf_yn_scalar(n, NULL);
}

bool gf_yn_null(const struct gf_yn *n)
{
	if (!n)
		return true;
	if (n->n->type != YAML_SCALAR_NODE ||
	    n->n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = gf_yn_str(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

size_t gf_yn_len(const struct gf_yn *n)
{
	if (!n)
		return 0;
	if (n->n->type == YAML_SEQUENCE_NODE)
		return (size_t)(n->n->data.sequence.items.top -
				n->n->data.sequence.items.start);
	if (n->n->type == YAML_MAPPING_NODE)
		return (size_t)(n->n->data.mapping.pairs.top -
				n->n->data.mapping.pairs.start);
	return 0;
}

const struct gf_yn *gf_yn_at(const struct gf_yn *n, size_t i)
{
	if (gf_yn_type(n) != GF_YN_SEQ || i >= gf_yn_len(n))
		return NULL;
	return by_id(n->y, n->n->data.sequence.items.start[i]);
}

bool gf_yn_pair(const struct gf_yn *n, size_t i, const struct gf_yn **key,
		const struct gf_yn **val)
{
	if (gf_yn_type(n) != GF_YN_MAP || i >= gf_yn_len(n))
		return false;
	const yaml_node_pair_t *p = &n->n->data.mapping.pairs.start[i];
	*key = by_id(n->y, p->key);
	if (val)
		*val = by_id(n->y, p->value);
	return true;
}

const struct gf_yn *gf_yn_get(const struct gf_yn *n, const char *key)
{
	const struct gf_yn *k, *v;
	for (size_t i = 0; gf_yn_pair(n, i, &k, &v); i++) {
		const char *s = gf_yn_str(k);
		if (s && !strcmp(s, key))
			return v;
	}
	return NULL;
}

bool gf_yn_bool(const struct gf_yn *n, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes" };
	static const char *const no[] = { "false", "False", "FALSE", "no" };
	const char *s = gf_yn_str(n);
	for (size_t i = 0; s && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
			*out = !strcmp(s, yes[i]);
			return true;
		}
	}
	return false;
}

bool gf_yaml_known(const char *key, const char *known)
{
	size_t n = strlen(key);
	if (strchr(key, ',') || strchr(key, ' '))
		return false;
	for (const char *p = known; n && (p = strstr(p, key)); p += n) {
		bool starts = p == known || p[-1] == ' ' || p[-1] == ',';
		bool ends = p[n] == '\0' || p[n] == ',';
		if (starts && ends)
			return true;
	}
	return false;
}

int gf_yr_fail(const struct gf_yr *r, const struct gf_yn *n, const char *fmt,
	       ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gf_err_set(r->e, GF_EPARSE, "%s:%d: %s", gf_yaml_name(r->y),
			  gf_yn_line(n), msg);
}

int gf_yr_str(const struct gf_yr *r, const struct gf_yn *n, const char *key,
	      size_t min, char *out, size_t size)
{
	size_t len;
	const char *s = gf_yn_scalar(n, &len);
	if (!s)
		return gf_yr_fail(r, n, "key '%s': expected a string", key);
	if (len >= size || len < min || strlen(s) != len)
		return gf_yr_fail(r, n,
				  "key '%s': expected %zu to %zu characters",
				  key, min, size - 1);
	memcpy(out, s, len + 1);
	return 0;
}

/* 0 when ok, else "key 'KEY': expected WHAT, got 'S'" (what as fmt
 * says). */
static int verdict(const struct gf_yr *r, const struct gf_yn *n,
		   const char *key, const char *s, bool ok, const char *fmt,
		   ...) __attribute__((format(printf, 6, 7)));
static int verdict(const struct gf_yr *r, const struct gf_yn *n,
		   const char *key, const char *s, bool ok, const char *fmt,
		   ...)
{
	if (ok)
		return 0;
	char what[128];
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(what, sizeof(what), fmt, ap);
	va_end(ap);
	return gf_yr_fail(r, n, "key '%s': expected %s, got '%.40s'", key, what,
			  s ? s : "(not a number)");
}

int gf_yr_int(const struct gf_yr *r, const struct gf_yn *n, const char *key,
	      long long min, long long max, long long *out)
{
	const char *s = gf_yn_str(n);
	char *end = NULL;
	errno = 0;
	long long v = s ? strtoll(s, &end, 10) : 0;
	int rc = verdict(r, n, key, s,
			 s && *s && !*end && !errno && v >= min && v <= max,
			 "a whole number from %lld to %lld", min, max);
	if (rc == 0)
		*out = v;
	return rc;
}

int gf_yr_double(const struct gf_yr *r, const struct gf_yn *n, const char *key,
		 double min, double max, double *out)
{
	const char *s = gf_yn_str(n);
	char *end = NULL;
	double v = s ? strtod(s, &end) : 0;
	int rc =
		verdict(r, n, key, s,
			s && *s && !*end && isfinite(v) && v >= min && v <= max,
			"a number from %g to %g", min, max);
	if (rc == 0)
		*out = v;
	return rc;
}

int gf_yr_bool(const struct gf_yr *r, const struct gf_yn *n, const char *key,
	       bool *out)
{
	if (!gf_yn_bool(n, out))
		return gf_yr_fail(r, n, "key '%s': expected true or false",
				  key);
	return 0;
}

int gf_yr_keys(const struct gf_yr *r, const struct gf_yn *n, const char *where,
	       const char *known)
{
	if (gf_yn_type(n) != GF_YN_MAP)
		return gf_yr_fail(r, n, "%s: expected a mapping",
				  where ? where : "document");
	const struct gf_yn *k;
	for (size_t i = 0; gf_yn_pair(n, i, &k, NULL); i++) {
		const char *s = gf_yn_str(k);
		if (!s)
			return gf_yr_fail(r, k, "%s: keys are strings",
					  where ? where : "document");
		if (!gf_yaml_known(s, known))
			return gf_yr_fail(r, k,
					  "%s%sunknown key '%.60s' (known: %s)",
					  where ? where : "", where ? ": " : "",
					  s, known);
	}
	return 0;
}

int gf_yr_each(const struct gf_yr *r, const struct gf_yn *n, const char *where,
	       const char *known, gf_yr_field fn, void *obj)
{
	int rc = gf_yr_keys(r, n, where, known);
	const struct gf_yn *k, *v;
	for (size_t i = 0; rc == 0 && gf_yn_pair(n, i, &k, &v); i++)
		rc = fn(r, gf_yn_str(k), v, obj);
	return rc;
}
