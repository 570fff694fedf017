/*
 * yaml.h - YAML read through libyaml into a tree of nodes, the one place
 * in gpufleet that drives libyaml's parser (every YAML reader goes
 * through here: the controller's config, chargeback prices, autoscaler
 * manifests, mig-parted files, kubeconfigs).
 *
 * A loaded document is a tree of opaque struct gf_yn (mapping, sequence
 * or scalar), each knowing its line; no libyaml type crosses this header.
 * The caller owns the document and frees it with gf_yaml_free(); every
 * node and string is borrowed from it and valid until then.  Aliases are
 * kept as libyaml resolves them (the node an anchor names, shared, never
 * copied), so a document of many aliases costs no more than its text.
 *
 * Reading with errors: a struct gf_yr (document + error) and the typed
 * getters below, whose errors read "FILE:LINE: 'KEY': expected ..." with
 * the line of the offending node; gf_yr_keys() refuses a key that the
 * reader does not know, naming the known ones.
 */
#ifndef GF_UTIL_YAML_H
#define GF_UTIL_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/err.h>

#define GF_YAML_MAX (16u << 20) /* bytes of any YAML text read */

struct gf_yaml;
struct gf_yn;

enum gf_yn_type {
	GF_YN_NONE, /* a NULL node: absent */
	GF_YN_SCALAR,
	GF_YN_SEQ,
	GF_YN_MAP,
};

/*
 * Load the first document of len bytes of text (what follows a first
 * document is not read, as libyaml's loader does).  name: the file, for
 * messages; line0 is added to every line (a document embedded in another
 * file's scalar).  0 with *out set (an empty text gives a document whose
 * root is NULL); GF_EPARSE "NAME:LINE: malformed YAML: WHY"; GF_ETOOBIG
 * when len is over GF_YAML_MAX.  *out is NULL on error.
 */
int gf_yaml_parse(const char *text, size_t len, const char *name, int line0,
		  struct gf_yaml **out, struct gf_err *e) GF_MUST_CHECK;
/* The file at path (at most cap bytes, and GF_YAML_MAX) as above. */
int gf_yaml_read(const char *path, size_t cap, struct gf_yaml **out,
		 struct gf_err *e) GF_MUST_CHECK;
/*
 * Every document of a multi-document text ("---" between them), up to
 * max, in docs[0..*n) (an empty text: *n is 0; an empty document between
 * markers: one whose root is a null scalar).  Lines are the text's own.
 * 0, GF_EPARSE at the first malformed one, GF_ETOOBIG past max; on error
 * nothing is left to free.
 */
int gf_yaml_parse_all(const char *text, size_t len, const char *name,
		      struct gf_yaml **docs, size_t max, size_t *n,
		      struct gf_err *e) GF_MUST_CHECK;
/* The file at path (at most cap bytes, and GF_YAML_MAX) as above. */
int gf_yaml_read_all(const char *path, size_t cap, struct gf_yaml **docs,
		     size_t max, size_t *n, struct gf_err *e) GF_MUST_CHECK;
void gf_yaml_free(struct gf_yaml *y);
/* The document's root, or NULL when it is empty. */
const struct gf_yn *gf_yaml_root(const struct gf_yaml *y);
const char *gf_yaml_name(const struct gf_yaml *y);

/* Nodes.  Each takes NULL (an absent node) and answers none/0/NULL. */
enum gf_yn_type gf_yn_type(const struct gf_yn *n);
int gf_yn_line(const struct gf_yn *n); /* 1-based (+ line0); 0 for NULL */
/* A scalar's text (NUL-terminated; *len its bytes when len is not NULL),
 * or NULL when n is not a scalar. */
const char *gf_yn_str(const struct gf_yn *n);
const char *gf_yn_scalar(const struct gf_yn *n, size_t *len);
/* Absent, or a plain scalar that YAML reads as null ("", ~, null). */
bool gf_yn_null(const struct gf_yn *n);
/* Items of a sequence, pairs of a mapping; 0 for anything else. */
size_t gf_yn_len(const struct gf_yn *n);
/* A sequence's item i, or NULL. */
const struct gf_yn *gf_yn_at(const struct gf_yn *n, size_t i);
/* A mapping's pair i: true with *key (and *val) set; false past the end
 * or when n is not a mapping.  Keys come in document order. */
bool gf_yn_pair(const struct gf_yn *n, size_t i, const struct gf_yn **key,
		const struct gf_yn **val);
/* The value of the first key equal to key in mapping n, or NULL. */
const struct gf_yn *gf_yn_get(const struct gf_yn *n, const char *key);
/* true / false as YAML writes them (true True TRUE yes, false False FALSE
 * no): true with *out set, false for anything else. */
bool gf_yn_bool(const struct gf_yn *n, bool *out);
/* Is key one of known, a list "a, b, c"? */
bool gf_yaml_known(const char *key, const char *known);

/* Reading with errors: the document (for its name) and where they go. */
struct gf_yr {
	const struct gf_yaml *y;
	struct gf_err *e;
};

/* GF_EPARSE "NAME:LINE: MSG" with n's line (0 when n is NULL). */
int gf_yr_fail(const struct gf_yr *r, const struct gf_yn *n, const char *fmt,
	       ...) __attribute__((format(printf, 3, 4)));

/*
 * Typed getters: 0 with *out set, or GF_EPARSE naming key and n's line.
 * gf_yr_str copies a scalar of min to size - 1 bytes; gf_yr_int takes a
 * whole decimal number from min to max; gf_yr_double a finite number
 * from min to max; gf_yr_bool one gf_yn_bool() reads.
 */
int gf_yr_str(const struct gf_yr *r, const struct gf_yn *n, const char *key,
	      size_t min, char *out, size_t size) GF_MUST_CHECK;
int gf_yr_int(const struct gf_yr *r, const struct gf_yn *n, const char *key,
	      long long min, long long max, long long *out) GF_MUST_CHECK;
int gf_yr_double(const struct gf_yr *r, const struct gf_yn *n, const char *key,
		 double min, double max, double *out) GF_MUST_CHECK;
int gf_yr_bool(const struct gf_yr *r, const struct gf_yn *n, const char *key,
	       bool *out) GF_MUST_CHECK;
/* n must be a mapping (else "WHERE: expected a mapping") whose keys are
 * scalars in known ("a, b, c"); else GF_EPARSE at the first other key:
 * "WHERE: unknown key 'K' (known: a, b, c)" (where NULL: no "WHERE: "). */
int gf_yr_keys(const struct gf_yr *r, const struct gf_yn *n, const char *where,
	       const char *known) GF_MUST_CHECK;

/* One key of a mapping: 0, or an error (set through r). */
typedef int (*gf_yr_field)(const struct gf_yr *r, const char *key,
			   const struct gf_yn *val, void *obj);
/* gf_yr_keys(), then fn for each pair in document order, stopping at the
 * first error. */
int gf_yr_each(const struct gf_yr *r, const struct gf_yn *n, const char *where,
	       const char *known, gf_yr_field fn, void *obj) GF_MUST_CHECK;

#endif
