/*
 * json.h - JSON both ways.
 *
 * Writing: a small streaming writer on a bounded buffer.  Output is
 * pretty-printed with two-space indents, keys in the order written, so
 * --json output is stable and diffable in golden tests.  Errors (buffer
 * cap reached, nesting too deep) are sticky: check gf_json_error() once
 * at the end.
 *
 * Reading: gf_jv_parse() over jansson (docs/server.md says why jansson),
 * wrapped so that no jansson type crosses this header: a parsed document
 * is a tree of opaque struct gf_jv.  The caller owns the root and frees it
 * with gf_jv_free(); every other gf_jv and string is borrowed from it and
 * valid until then.  A tree is read-only, so several threads may read one.
 */
#ifndef GF_UTIL_JSON_H
#define GF_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "util/buf.h"

#define GF_JSON_MAX_DEPTH 32

struct gf_json {
	struct gf_buf *out;
	int depth;
	bool first[GF_JSON_MAX_DEPTH];
	bool in_array[GF_JSON_MAX_DEPTH];
	int err;
};

void gf_json_init(struct gf_json *j, struct gf_buf *out);
/* gf_json_init into b begun anew, cap bytes at most (gf_buf_init); the
 * caller releases b. */
void gf_json_open(struct gf_json *j, struct gf_buf *b, size_t cap);
/* key is NULL inside arrays and at top level. */
void gf_json_obj_begin(struct gf_json *j, const char *key);
void gf_json_obj_end(struct gf_json *j);
void gf_json_arr_begin(struct gf_json *j, const char *key);
void gf_json_arr_end(struct gf_json *j);
void gf_json_str(struct gf_json *j, const char *key, const char *v);
void gf_json_int(struct gf_json *j, const char *key, int64_t v);
void gf_json_uint(struct gf_json *j, const char *key, uint64_t v);
void gf_json_double(struct gf_json *j, const char *key, double v);
void gf_json_bool(struct gf_json *j, const char *key, bool v);
void gf_json_null(struct gf_json *j, const char *key);
/* v, or null when v is NULL or "". */
void gf_json_str_or_null(struct gf_json *j, const char *key, const char *v);
/* "k=v,k=v" (labels, a node selector) as the object {"k": "v", ...}
 * under key (an entry without '=' left out): gf_jv_pairs the other way. */
void gf_json_kv(struct gf_json *j, const char *key, const char *kvs);
/* len bytes of text that are one whole JSON value, written as they are
 * (trailing white space dropped); the caller vouches for the text (a
 * document it rendered or parsed). */
void gf_json_raw(struct gf_json *j, const char *key, const char *text,
		 size_t len);
/* 0, or the first error (GF_ETOOBIG, GF_EINVAL). */
int gf_json_error(const struct gf_json *j);
/* The white space between the tokens of len bytes of JSON text (one
 * parsed: valid; s holds len + 1 bytes) dropped in place, strings as
 * they are; the new length (s NUL-terminated there).  The same value,
 * in fewer bytes. */
size_t gf_json_squeeze(char *s, size_t len);

#define GF_JV_MAX_DEPTH 64 /* nesting a parsed document may have */

struct gf_jv;

enum gf_jv_type {
	GF_JV_NULL,
	GF_JV_BOOL,
	GF_JV_INT,
	GF_JV_REAL,
	GF_JV_STR,
	GF_JV_ARR,
	GF_JV_OBJ,
};

/*
 * Parse len bytes of s (no NUL needed) as one JSON object or array.
 * Strict: valid UTF-8, no NUL in strings, no duplicate keys, nothing
 * after the value, integers that fit int64_t.  Returns 0 with *out set
 * (caller frees with gf_jv_free()), or GF_EPARSE with e saying where and
 * what ("line 1, column 9: ...") or GF_ETOOBIG (nested deeper than
 * GF_JV_MAX_DEPTH); *out is NULL then.  The caller caps len.
 */
int gf_jv_parse(const char *s, size_t len, struct gf_jv **out,
		struct gf_err *e);
void gf_jv_free(struct gf_jv *root);

/* v's kind; GF_JV_NULL for NULL (an absent member reads as null). */
enum gf_jv_type gf_jv_type(const struct gf_jv *v);
/* An object's member, or NULL (absent, or v is not an object). */
const struct gf_jv *gf_jv_get(const struct gf_jv *v, const char *key);
/* Members of an object or elements of an array; 0 for anything else. */
size_t gf_jv_len(const struct gf_jv *v);
/* An array's element i, or NULL. */
const struct gf_jv *gf_jv_at(const struct gf_jv *v, size_t i);
/*
 * An object's members in document order: start with *it = NULL; each
 * call returns the next key (value in *val) or NULL at the end.
 */
const char *gf_jv_next(const struct gf_jv *v, void **it,
		       const struct gf_jv **val);

/* An object of string values written "k=v,k=v" into out (labels, node
 * selectors): 0; GF_EINVAL when a value is not a string, or a key is
 * empty, or a key or value holds one of the characters in reject;
 * GF_ETOOBIG past size.  v must be an object. */
int gf_jv_pairs(const struct gf_jv *v, const char *reject, char *out,
		size_t size);
/* The value if v holds one of that kind; NULL / false otherwise.  An
 * integer is also a number; a real is never an integer. */
const char *gf_jv_str(const struct gf_jv *v);
bool gf_jv_int(const struct gf_jv *v, int64_t *out);
bool gf_jv_num(const struct gf_jv *v, double *out);
bool gf_jv_bool(const struct gf_jv *v, bool *out);

/* v as compact JSON text appended to out, with the string member
 * key: value added when v is an object without key (key NULL:
 * as it is).  0, or the buffer's GF_ETOOBIG, GF_EINVAL (no memory). */
int gf_jv_dump(const struct gf_jv *v, const char *key, const char *value,
	       struct gf_buf *out);

#endif
