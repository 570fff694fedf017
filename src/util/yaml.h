/*
 * yaml.h - one reader of YAML documents (libyaml's document API), built
 * like util/json: load a text, walk nodes, typed getters whose errors
 * name file:line and the key.
 *
 * A reader keeps a struct gf_yaml for the document it walks; every
 * failure goes through gf_yaml_fail() (GF_EPARSE, "path:line: message").
 */
#ifndef GF_UTIL_YAML_H
#define GF_UTIL_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "gpufleet/err.h"

struct gf_yaml {
	yaml_document_t doc;
	const char *path; /* named in every message */
	int line0;	  /* added to node lines (an embedded document) */
	struct gf_err *e;
};

/* Parse text (len bytes) into y->doc; "path:line: malformed YAML: why"
 * when it is not YAML.  On 0 the caller calls gf_yaml_release(). */
int gf_yaml_load(struct gf_yaml *y, const char *path, const char *text,
		 size_t len, struct gf_err *e) GF_MUST_CHECK;
/* gf_yaml_load of the file at path (at most max bytes, util/file's
 * errors when it cannot be read). */
int gf_yaml_read(struct gf_yaml *y, const char *path, size_t max,
		 struct gf_err *e) GF_MUST_CHECK;
void gf_yaml_release(struct gf_yaml *y);

/* GF_EPARSE with "path:line: " before the message (line 0 without n). */
int gf_yaml_fail(const struct gf_yaml *y, const yaml_node_t *n, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));
int gf_yaml_line(const struct gf_yaml *y, const yaml_node_t *n);

yaml_node_t *gf_yaml_root(const struct gf_yaml *y);
yaml_node_t *gf_yaml_node(const struct gf_yaml *y, int id);
/* n's text when n is a scalar, else NULL. */
const char *gf_yaml_scalar(const yaml_node_t *n);
/* The value of key in mapping m, or NULL. */
yaml_node_t *gf_yaml_get(const struct gf_yaml *y, const yaml_node_t *m,
			 const char *key);

/* Typed getters: 0, or gf_yaml_fail() naming key and what was expected. */
int gf_yaml_str(const struct gf_yaml *y, const yaml_node_t *n, const char *key,
		char *out, size_t size) GF_MUST_CHECK;
int gf_yaml_int(const struct gf_yaml *y, const yaml_node_t *n, const char *key,
		long long min, long long max, long long *out) GF_MUST_CHECK;
int gf_yaml_bool(const struct gf_yaml *y, const yaml_node_t *n, const char *key,
		 bool *out) GF_MUST_CHECK;
int gf_yaml_double(const struct gf_yaml *y, const yaml_node_t *n,
		   const char *key, double min, double max,
		   double *out) GF_MUST_CHECK;

/* Walk mapping n ("what: expected a mapping" otherwise), handing each
 * key to fn, which refuses an unknown one with gf_yaml_unknown(). */
typedef int (*gf_yaml_field_fn)(const struct gf_yaml *y, const char *key,
				const yaml_node_t *v, void *obj);
int gf_yaml_each_key(const struct gf_yaml *y, const yaml_node_t *n,
		     const char *what, gf_yaml_field_fn fn,
		     void *obj) GF_MUST_CHECK;
int gf_yaml_unknown(const struct gf_yaml *y, const yaml_node_t *v,
		    const char *where, const char *key, const char *known);

#endif
