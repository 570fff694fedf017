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
/*
 * A member as a table row: its key, where it lives in the struct read
 * or written (off, size), its kind; a whole number's range (a 4-byte
 * member is an int, an 8-byte one an int64_t).  One table gives both
 * ways the same keys in the same order; a table ends with a row whose
 * key is NULL.
 */
enum gf__np_kind { GF__NP_STR, GF__NP_INT, GF__NP_UINT, GF__NP_BOOL };
struct gf__np_field {
	const char *key;
	enum gf__np_kind kind;
	bool required;
	size_t off, size;
	int64_t lo, hi;
};
#define GF__NP_ROW(T, key, kind, req, m, lo, hi)                            \
	{                                                                   \
		key, kind, req, offsetof(T, m), sizeof(((T *)0)->m), lo, hi \
	}
#define GF__NP_STR(T, key, req, m) GF__NP_ROW(T, key, GF__NP_STR, req, m, 0, 0)
#define GF__NP_INT(T, key, req, m, lo, hi) \
	GF__NP_ROW(T, key, GF__NP_INT, req, m, lo, hi)
/* A uint64_t sent as a whole number 0..INT64_MAX. */
#define GF__NP_UINT(T, key, req, m) \
	GF__NP_ROW(T, key, GF__NP_UINT, req, m, 0, INT64_MAX)
#define GF__NP_BOOL(T, key, req, m) \
	GF__NP_ROW(T, key, GF__NP_BOOL, req, m, 0, 0)

/* The members of table t of object obj into the struct at base, in the
 * table's order; the first problem is the answer. */
int gf__np_fields_read(struct gf_np_rd *r, const struct gf_jv *obj,
		       const struct gf__np_field *t, void *base) GF_MUST_CHECK;
/* The members of table t of the struct at base, in the table's order. */
void gf__np_fields_write(struct gf_json *j, const struct gf__np_field *t,
			 const void *base);
/* Array member key: an object a struct, n structs stride bytes apart
 * from base, each by table t. */
void gf__np_list_write(struct gf_json *j, const char *key,
		       const struct gf__np_field *t, const void *base,
		       size_t stride, int n);
/* The elements of array arr (member key; NULL: none), element i by
 * fn(r, element, i, ctx) with "KEY[i]." as the prefix; *n = how many
 * were read (the one that failed included). */
typedef int (*gf__np_each_fn)(struct gf_np_rd *r, const struct gf_jv *v,
			      size_t i, void *ctx);
int gf__np_walk(struct gf_np_rd *r, const char *key, const struct gf_jv *arr,
		gf__np_each_fn fn, void *ctx, int *n) GF_MUST_CHECK;
/* The array member key of obj (gf__np_arr) walked so. */
int gf__np_each(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
		bool required, size_t max, gf__np_each_fn fn, void *ctx,
		int *n) GF_MUST_CHECK;
/* The same into a new array of its length (*out, elements of elem
 * bytes, zeroed; the caller's to free; untouched when it is empty):
 * fn's ctx is that array. */
int gf__np_each_new(struct gf_np_rd *r, const struct gf_jv *obj,
		    const char *key, bool required, size_t max, size_t elem,
		    void *out, gf__np_each_fn fn, int *n) GF_MUST_CHECK;
/* A document into out (size bytes, zeroed first): an error unless v is
 * a JSON object, its members by table t, then the rest by fn(r, v, out)
 * (which releases what it took when it fails).  Errors into e. */
typedef int (*gf__np_rest_fn)(struct gf_np_rd *r, const struct gf_jv *v,
			      void *out);
int gf__np_doc(const struct gf_jv *v, void *out, size_t size,
	       const struct gf__np_field *t, gf__np_rest_fn fn,
	       struct gf_err *e) GF_MUST_CHECK;
/* An error unless v is an object. */
int gf__np_obj(struct gf_np_rd *r, const struct gf_jv *v) GF_MUST_CHECK;

/* A replica's "job", "attempt", "replica" (struct gf_np_ref). */
extern const struct gf__np_field gf__np_ref_fields[];

/* An error about the field key of the current prefix. */
int gf__np_bad(struct gf_np_rd *r, const char *key, const char *fmt,
	       ...) GF_MUST_CHECK __attribute__((format(printf, 3, 4)));

#endif
