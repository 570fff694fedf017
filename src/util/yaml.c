/*
 * yaml.c - one reader of YAML documents (see yaml.h).
 */
#include "util/yaml.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"

int gf_yaml_load(struct gf_yaml *y, const char *path, const char *text,
		 size_t len, struct gf_err *e)
{
	memset(y, 0, sizeof(*y));
	y->path = path;
	y->e = e;
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	int rc = 0;
	if (!yaml_parser_load(&p, &y->doc))
		rc = gf_err_set(e, GF_EPARSE, "%s:%zu: malformed YAML: %s",
				path, p.problem_mark.line + 1,
				p.problem ? p.problem : "?");
	yaml_parser_delete(&p);
	return rc;
}

int gf_yaml_read(struct gf_yaml *y, const char *path, size_t max,
		 struct gf_err *e)
{
	char *text;
	size_t len;
	int rc = gf_file_read(path, max, &text, &len, e);
	if (rc == 0) {
		rc = gf_yaml_load(y, path, text, len, e);
		gf_free(text); /* the document keeps its own copies */
	}
	return rc;
}

void gf_yaml_release(struct gf_yaml *y)
{
	yaml_document_delete(&y->doc);
}

int gf_yaml_line(const struct gf_yaml *y, const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 + y->line0 : 0;
}

int gf_yaml_fail(const struct gf_yaml *y, const yaml_node_t *n, const char *fmt,
		 ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = gf_err_vat(y->e, GF_EPARSE, y->path, gf_yaml_line(y, n), fmt,
			    ap);
	va_end(ap);
	return rc;
}

yaml_node_t *gf_yaml_root(const struct gf_yaml *y)
{
	return gf_yaml_node(y, 1);
}

yaml_node_t *gf_yaml_node(const struct gf_yaml *y, int id)
{
	/* yaml_document_get_node()'s test, on a const document */
	const yaml_document_t *d = &y->doc;
	return id > 0 && d->nodes.start + id <= d->nodes.top
		       ? d->nodes.start + id - 1
		       : NULL;
}

const char *gf_yaml_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		       ? (const char *)n->data.scalar.value
		       : NULL;
}

yaml_node_t *gf_yaml_get(const struct gf_yaml *y, const yaml_node_t *m,
			 const char *key)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++) {
		const char *s = gf_yaml_scalar(gf_yaml_node(y, p->key));
		if (s && !strcmp(s, key))
			return gf_yaml_node(y, p->value);
	}
	return NULL;
}

int gf_yaml_str(const struct gf_yaml *y, const yaml_node_t *n, const char *key,
		char *out, size_t size)
{
	const char *s = gf_yaml_scalar(n);
	if (!s)
		return gf_yaml_fail(y, n, "key '%s': expected a string", key);
	if (*s == '\0' || gf_fmt(out, size, "%s", s))
		return gf_yaml_fail(y, n,
				    "key '%s': expected 1 to %zu characters",
				    key, size - 1);
	return 0;
}

int gf_yaml_int(const struct gf_yaml *y, const yaml_node_t *n, const char *key,
		long long min, long long max, long long *out)
{
	const char *s = gf_yaml_scalar(n);
	char *end;
	errno = 0;
	long long v = s ? strtoll(s, &end, 10) : 0;
	if (!s || *s == '\0' || *end || errno || v < min || v > max)
		return gf_yaml_fail(y, n,
				    "key '%s': expected a whole number from "
				    "%lld to %lld, got '%.40s'",
				    key, min, max, s ? s : "(not a number)");
	*out = v;
	return 0;
}

int gf_yaml_bool(const struct gf_yaml *y, const yaml_node_t *n, const char *key,
		 bool *out)
{
	const char *s = gf_yaml_scalar(n);
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes"))) {
		*out = true;
		return 0;
	}
	if (s && (!strcmp(s, "false") || !strcmp(s, "no"))) {
		*out = false;
		return 0;
	}
	return gf_yaml_fail(y, n, "key '%s': expected true or false", key);
}

int gf_yaml_double(const struct gf_yaml *y, const yaml_node_t *n,
		   const char *key, double min, double max, double *out)
{
	const char *s = gf_yaml_scalar(n);
	char *end;
	double v = s ? strtod(s, &end) : 0;
	if (!s || *s == '\0' || *end || !(v >= min && v <= max))
		return gf_yaml_fail(y, n,
				    "key '%s': expected a number from %g to %g",
				    key, min, max);
	*out = v;
	return 0;
}

int gf_yaml_each_key(const struct gf_yaml *y, const yaml_node_t *n,
		     const char *what, gf_yaml_field_fn fn, void *obj)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return gf_yaml_fail(y, n, "%s: expected a mapping", what);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		const char *k = gf_yaml_scalar(gf_yaml_node(y, p->key));
		if (!k)
			return gf_yaml_fail(y, gf_yaml_node(y, p->key),
					    "%s: keys are strings", what);
		int rc = fn(y, k, gf_yaml_node(y, p->value), obj);
		if (rc)
			return rc;
	}
	return 0;
}

int gf_yaml_unknown(const struct gf_yaml *y, const yaml_node_t *v,
		    const char *where, const char *key, const char *known)
{
	return gf_yaml_fail(y, v, "%s: unknown key '%s' (known: %s)", where,
			    key, known);
}
