/*
 * read.c - member readers with the field's path in every error (read.h).
 */
#include "nodeproto/read.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/fmt.h"

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
