/*
 * read.c - member readers with the field's path in every error (read.h).
 */
#include "nodeproto/read.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nodeproto/nodeproto.h"
#include "util/fmt.h"
#include "util/mem.h"

int gf__np_bad(struct gf_np_rd *r, const char *key, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* the element itself (key ""): 'gpus[2]', not 'gpus[2].' */
	int n = (int)strlen(r->at);
	if (!*key && n > 0 && r->at[n - 1] == '.')
		n--;
	return gf_err_set(r->e, GF_EINVAL, "'%.*s%s': %s", n, r->at, key, what);
}

const struct gf_jv *gf__np_get(struct gf_np_rd *r, const struct gf_jv *obj,
			       const char *key, bool required, int *rc)
{
	const struct gf_jv *v = gf_jv_get(obj, key);
	*rc = 0;
	if (v == NULL && required)
		*rc = gf__np_bad(r, key, "required");
	return v;
}

int gf__np_str(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
	       bool required, char *out, size_t size)
{
	int rc;
	const struct gf_jv *v = gf__np_get(r, obj, key, required, &rc);
	if (v == NULL)
		return rc;
	const char *s = gf_jv_str(v);
	if (s == NULL)
		return gf__np_bad(r, key, "expected a string");
	if (strlen(s) >= size)
		return gf__np_bad(r, key, "longer than %zu bytes", size - 1);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

int gf__np_int(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
	       bool required, int64_t lo, int64_t hi, int64_t *out)
{
	int rc;
	const struct gf_jv *v = gf__np_get(r, obj, key, required, &rc);
	if (v == NULL)
		return rc;
	int64_t x;
	if (!gf_jv_int(v, &x))
		return gf__np_bad(r, key, "expected a whole number");
	if (x < lo || x > hi)
		return gf__np_bad(r, key, "expected %lld to %lld, got %lld",
				  (long long)lo, (long long)hi, (long long)x);
	*out = x;
	return 0;
}

int gf__np_int32(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
		 bool required, int lo, int hi, int *out)
{
	int64_t x = *out;
	int rc = gf__np_int(r, obj, key, required, lo, hi, &x);
	if (rc == 0)
		*out = (int)x;
	return rc;
}

int gf__np_bool(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
		bool required, bool *out)
{
	int rc;
	const struct gf_jv *v = gf__np_get(r, obj, key, required, &rc);
	if (v == NULL)
		return rc;
	if (!gf_jv_bool(v, out))
		return gf__np_bad(r, key, "expected true or false");
	return 0;
}

const struct gf_jv *gf__np_arr(struct gf_np_rd *r, const struct gf_jv *obj,
			       const char *key, bool required, size_t max,
			       int *rc)
{
	const struct gf_jv *v = gf__np_get(r, obj, key, required, rc);
	if (v == NULL)
		return NULL;
	if (gf_jv_type(v) != GF_JV_ARR) {
		*rc = gf__np_bad(r, key, "expected an array");
		return NULL;
	}
	if (gf_jv_len(v) > max) {
		*rc = gf_err_set(r->e, GF_ETOOBIG,
				 "'%s%s': %zu entries, at most %zu", r->at, key,
				 gf_jv_len(v), max);
		return NULL;
	}
	return v;
}

/* r->at = what tmp holds, cut to fit. */
static void set_at(struct gf_np_rd *r, const char *tmp)
{
	size_t n = strlen(tmp);
	if (n >= sizeof(r->at))
		n = sizeof(r->at) - 1;
	memcpy(r->at, tmp, n);
	r->at[n] = '\0';
}

void gf__np_enter(struct gf_np_rd *r, const char *key, size_t i, char *saved,
		  size_t size)
{
	char tmp[sizeof(r->at) + 64];
	gf_note(saved, size, "%s", r->at);
	gf_note(tmp, sizeof(tmp), "%s%.40s[%zu].", r->at, key, i);
	set_at(r, tmp);
}

void gf__np_push(struct gf_np_rd *r, const char *key, char *saved, size_t size)
{
	char tmp[sizeof(r->at) + 64];
	gf_note(saved, size, "%s", r->at);
	gf_note(tmp, sizeof(tmp), "%s%.40s.", r->at, key);
	set_at(r, tmp);
}

void gf__np_leave(struct gf_np_rd *r, const char *saved)
{
	gf_note(r->at, sizeof(r->at), "%s", saved);
}

int gf__np_fields_read(struct gf_np_rd *r, const struct gf_jv *obj,
		       const struct gf__np_field *t, void *base)
{
	int rc = 0;
	for (; rc == 0 && t->key; t++) {
		char *p = (char *)base + t->off;
		switch (t->kind) {
		case GF__NP_STR:
			rc = gf__np_str(r, obj, t->key, t->required, p,
					t->size);
			break;
		case GF__NP_BOOL:
			rc = gf__np_bool(r, obj, t->key, t->required,
					 (bool *)p);
			break;
		case GF__NP_INT:
			if (t->size == sizeof(int))
				rc = gf__np_int32(r, obj, t->key, t->required,
						  (int)t->lo, (int)t->hi,
						  (int *)p);
			else
				rc = gf__np_int(r, obj, t->key, t->required,
						t->lo, t->hi, (int64_t *)p);
			break;
		case GF__NP_UINT: {
			int64_t x = (int64_t) * (uint64_t *)p;
			rc = gf__np_int(r, obj, t->key, t->required, t->lo,
					t->hi, &x);
			if (rc == 0)
				*(uint64_t *)p = (uint64_t)x;
			break;
		}
		}
	}
	return rc;
}

void gf__np_fields_write(struct gf_json *j, const struct gf__np_field *t,
			 const void *base)
{
	for (; t->key; t++) {
		const char *p = (const char *)base + t->off;
		if (t->kind == GF__NP_STR)
			gf_json_str(j, t->key, p);
		else if (t->kind == GF__NP_BOOL)
			gf_json_bool(j, t->key, *(const bool *)p);
		else if (t->kind == GF__NP_UINT)
			gf_json_uint(j, t->key, *(const uint64_t *)p);
		else if (t->size == sizeof(int))
			gf_json_int(j, t->key, *(const int *)p);
		else
			gf_json_int(j, t->key, *(const int64_t *)p);
	}
}

int gf__np_walk(struct gf_np_rd *r, const char *key, const struct gf_jv *arr,
		gf__np_each_fn fn, void *ctx, int *n)
{
	int rc = 0;
	char saved[96];
	for (size_t i = 0; rc == 0 && i < gf_jv_len(arr); i++) {
		gf__np_enter(r, key, i, saved, sizeof(saved));
		rc = fn(r, gf_jv_at(arr, i), i, ctx);
		gf__np_leave(r, saved);
		*n = (int)i + 1;
	}
	return rc;
}

int gf__np_obj(struct gf_np_rd *r, const struct gf_jv *v)
{
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf__np_bad(r, "", "expected an object");
	return 0;
}

const struct gf__np_field gf__np_ref_fields[] = {
	GF__NP_STR(struct gf_np_ref, "job", true, job),
	GF__NP_INT(struct gf_np_ref, "attempt", true, attempt, 1, INT32_MAX),
	GF__NP_INT(struct gf_np_ref, "replica", true, replica, 0,
		   GF_JOB_MAX_REPLICAS - 1),
	{ 0 },
};

void gf__np_list_write(struct gf_json *j, const char *key,
		       const struct gf__np_field *t, const void *base,
		       size_t stride, int n)
{
	gf_json_arr_begin(j, key);
	for (int i = 0; i < n; i++) {
		gf_json_obj_begin(j, NULL);
		gf__np_fields_write(j, t,
				    (const char *)base + (size_t)i * stride);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

int gf__np_each(struct gf_np_rd *r, const struct gf_jv *obj, const char *key,
		bool required, size_t max, gf__np_each_fn fn, void *ctx, int *n)
{
	int rc;
	const struct gf_jv *arr = gf__np_arr(r, obj, key, required, max, &rc);
	return rc ? rc : gf__np_walk(r, key, arr, fn, ctx, n);
}

int gf__np_each_new(struct gf_np_rd *r, const struct gf_jv *obj,
		    const char *key, bool required, size_t max, size_t elem,
		    void *out, gf__np_each_fn fn, int *n)
{
	int rc;
	const struct gf_jv *arr = gf__np_arr(r, obj, key, required, max, &rc);
	if (rc || !gf_jv_len(arr))
		return rc;
	void *v = gf_calloc(gf_jv_len(arr), elem);
	memcpy(out, &v, sizeof(v));
	return gf__np_walk(r, key, arr, fn, v, n);
}

int gf__np_doc(const struct gf_jv *v, void *out, size_t size,
	       const struct gf__np_field *t, gf__np_rest_fn fn,
	       struct gf_err *e)
{
	struct gf_np_rd r = { .e = e };
	int rc;
	memset(out, 0, size);
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "expected a JSON object");
	if ((rc = gf__np_fields_read(&r, v, t, out)))
		return rc;
	return fn(&r, v, out);
}
