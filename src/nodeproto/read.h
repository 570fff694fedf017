/*
 * read.h - internal to nodeproto: reading members of a parsed JSON
 * object with the path of what is read in every error ("gpus[2].uuid:
 * expected a string").  Absent members leave the destination as it is
 * unless required.
 */
#ifndef GF_NODEPROTO_READ_H
#define GF_NODEPROTO_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "util/json.h"

struct gf_np_rd {
	struct gf_err *e;
	char at[96]; /* "gpus[2]." : the prefix of field names, or "" */
};

/* A member: NULL when absent (an error when required). */
const struct gf_jv *gf__np_get(struct gf_np_rd *r, const struct gf_jv *obj,
			       const char *key, bool required, int *rc);
int gf__np_str(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
	       bool required, char *out, size_t size) GF_MUST_CHECK;
int gf__np_int(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
	       bool required, int64_t lo, int64_t hi,
	       int64_t *out) GF_MUST_CHECK;
int gf__np_int32(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
		 bool required, int lo, int hi, int *out) GF_MUST_CHECK;
int gf__np_bool(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
		bool required, bool *out) GF_MUST_CHECK;
/* An array member (NULL when absent and not required), at most max long. */
const struct gf_jv *gf__np_arr(struct gf_np_rd *r, const struct gf_jv *obj,
			       const char *key, bool required, size_t max,
			       int *rc);
/* "KEY[i]." as the prefix while reading element i; restore with the
 * saved prefix. */
void gf__np_enter(struct gf_np_rd *r, const char *key, size_t i, char *saved,
		  size_t size);
/* "KEY." as the prefix while reading an object member. */
void gf__np_push(struct gf_np_rd *r, const char *key, char *saved, size_t size);
void gf__np_leave(struct gf_np_rd *r, const char *saved);
/* An error about the field key of the current prefix. */
int gf__np_bad(struct gf_np_rd *r, const char *key, const char *fmt,
	       ...) GF_MUST_CHECK __attribute__((format(printf, 3, 4)));

#endif
