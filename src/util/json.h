/*
 * json.h - a small streaming JSON writer on a bounded buffer.
 *
 * Output is pretty-printed with two-space indents, keys in the order
 * written, so --json output is stable and diffable in golden tests.
 * Errors (buffer cap reached, nesting too deep) are sticky: check
 * gf_json_error() once at the end.
 */
#ifndef GF_UTIL_JSON_H
#define GF_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>

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
/* 0, or the first error (GF_ETOOBIG, GF_EINVAL). */
int gf_json_error(const struct gf_json *j);

#endif
