/*
 * json.c - streaming JSON writer, and the reader over jansson.
 *
 * Writer: strings are escaped per RFC 8259; bytes >= 0x80 pass through
 * (our strings are UTF-8 or ASCII).
 *
 * Reader: a struct gf_jv is a jansson json_t, cast at this file's edge
 * and nowhere else.  Invariants: a tree handed out was parsed with
 * JSON_REJECT_DUPLICATES (and jansson's own UTF-8 and NUL checks) and
 * is at most GF_JV_MAX_DEPTH deep; jansson allocates through
 * util/mem.c, so out-of-memory aborts as everywhere else.
 */
#include "util/json.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

void gf_json_init(struct gf_json *j, struct gf_buf *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = true;
	j->in_array[0] = true;
	j->err = 0;
}

void gf_json_open(struct gf_json *j, struct gf_buf *b, size_t cap)
{
	gf_buf_init(b, cap);
	gf_json_init(j, b);
}

static void put_n(struct gf_json *j, const char *s, size_t n)
{
	struct gf_buf *b = j->out;
	if (j->err == 0 && b->err == 0 && n < b->alloc - b->len &&
	    n <= b->cap - b->len) { /* room already: gf_buf_append's copy */
		memcpy(b->data + b->len, s, n);
		b->len += n;
		b->data[b->len] = '\0';
	} else if (j->err == 0) {
		j->err = gf_buf_append(b, s, n);
	}
}

static void put(struct gf_json *j, const char *s)
{
	put_n(j, s, strlen(s));
}

static void indent(struct gf_json *j)
{
	static const char spaces[] = "                                ";
	for (size_t n = 2 * (size_t)j->depth; n > 0;) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;
		put_n(j, spaces, k);
		n -= k;
	}
}

/* s quoted and escaped; runs of bytes that need no escape go out in one
 * append. */
static void put_escaped(struct gf_json *j, const char *s)
{
	put_n(j, "\"", 1);
	const unsigned char *p = (const unsigned char *)s, *run = p;
	for (;; p++) {
		unsigned char c = *p;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put_n(j, (const char *)run, (size_t)(p - run));
		run = p + 1;
		if (c == '\0')
			break;
		/* the short escapes; other control bytes as \u00XX */
		static const char *const short_esc[128] = {
			['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n",
			['\t'] = "\\t", ['\r'] = "\\r",
		};
		char esc[8];
		if (short_esc[c]) {
			put_n(j, short_esc[c], 2);
		} else {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put_n(j, esc, 6);
		}
	}
	put_n(j, "\"", 1);
}

static void prefix(struct gf_json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->first[j->depth])
			put_n(j, "\n", 1);
		else
			put_n(j, ",\n", 2);
		indent(j);
	}
	j->first[j->depth] = false;
	if (key && !j->in_array[j->depth]) {
		put_escaped(j, key);
		put_n(j, ": ", 2);
	}
}

static void open_(struct gf_json *j, const char *key, const char *tok,
		  bool array)
{
	prefix(j, key);
	put(j, tok);
	if (j->depth + 1 >= GF_JSON_MAX_DEPTH) {
		if (j->err == 0)
			j->err = GF_EINVAL;
		return;
	}
	j->depth++;
	j->first[j->depth] = true;
	j->in_array[j->depth] = array;
}

static void close_(struct gf_json *j, const char *tok)
{
	bool empty = j->first[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!empty) {
		put(j, "\n");
		indent(j);
	}
	put(j, tok);
	if (j->depth == 0)
		put(j, "\n");
}

void gf_json_obj_begin(struct gf_json *j, const char *key)
{
	open_(j, key, "{", false);
}

void gf_json_obj_end(struct gf_json *j)
{
	close_(j, "}");
}

void gf_json_arr_begin(struct gf_json *j, const char *key)
{
	open_(j, key, "[", true);
}

void gf_json_arr_end(struct gf_json *j)
{
	close_(j, "]");
}

void gf_json_str(struct gf_json *j, const char *key, const char *v)
{
	prefix(j, key);
	put_escaped(j, v);
}

void gf_json_raw(struct gf_json *j, const char *key, const char *text,
		 size_t len)
{
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	prefix(j, key);
	if (j->err == 0)
		j->err = gf_buf_append(j->out, text, len);
}

/* v in decimal ending at end: where its first digit is. */
static char *digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void gf_json_int(struct gf_json *j, const char *key, int64_t v)
{
	char tmp[32], *end = tmp + sizeof(tmp);
	prefix(j, key);
	/* the magnitude as unsigned: INT64_MIN has no positive twin */
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	char *p = digits(end, m);
	if (v < 0)
		*--p = '-';
	put_n(j, p, (size_t)(end - p));
}

void gf_json_uint(struct gf_json *j, const char *key, uint64_t v)
{
	char tmp[32], *end = tmp + sizeof(tmp);
	prefix(j, key);
	char *p = digits(end, v);
	put_n(j, p, (size_t)(end - p));
}

void gf_json_double(struct gf_json *j, const char *key, double v)
{
	char tmp[64];
	prefix(j, key);
	if (!isfinite(v)) {
		put(j, "null");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.6g", v);
	put(j, tmp);
}

void gf_json_bool(struct gf_json *j, const char *key, bool v)
{
	prefix(j, key);
	put(j, v ? "true" : "false");
}

void gf_json_null(struct gf_json *j, const char *key)
{
	prefix(j, key);
	put(j, "null");
}

int gf_json_error(const struct gf_json *j)
{
	return j->err ? j->err : gf_buf_error(j->out);
}

/* --- reading --------------------------------------------------------- */

static json_t *J(const struct gf_jv *v)
{
	return (json_t *)(uintptr_t)v;
}

static const struct gf_jv *V(const json_t *j)
{
	return (const struct gf_jv *)(const void *)j;
}

static pthread_once_t alloc_once = PTHREAD_ONCE_INIT;

static void jansson_free(void *p)
{
	gf_free(p);
}

static void use_our_allocator(void)
{
	json_set_alloc_funcs(gf_malloc, jansson_free);
}

/* Depth of a tree: 1 for a scalar; stops counting past limit.  jansson
 * itself refuses more than JSON_PARSER_MAX_DEPTH (2048), which bounds
 * this recursion. */
static int depth(json_t *j, int limit)
{
	int max = 0;
	if (limit <= 0)
		return 1;
	if (json_is_array(j)) {
		size_t i;
		json_t *x;
		json_array_foreach(j, i, x)
		{
			int d = depth(x, limit - 1);
			max = d > max ? d : max;
		}
	} else if (json_is_object(j)) {
		const char *k;
		json_t *x;
		json_object_foreach(j, k, x)
		{
			int d = depth(x, limit - 1);
			max = d > max ? d : max;
		}
	}
	return 1 + max;
}

int gf_jv_parse(const char *s, size_t len, struct gf_jv **out, struct gf_err *e)
{
	*out = NULL;
	pthread_once(&alloc_once, use_our_allocator);
	json_error_t je;
	json_t *j = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return gf_err_set(e, GF_EPARSE, "line %d, column %d: %s",
				  je.line, je.column, je.text);
	if (depth(j, GF_JV_MAX_DEPTH) > GF_JV_MAX_DEPTH) {
		json_decref(j);
		return gf_err_set(e, GF_ETOOBIG, "nested deeper than %d levels",
				  GF_JV_MAX_DEPTH);
	}
	*out = (struct gf_jv *)(void *)j;
	return 0;
}

void gf_jv_free(struct gf_jv *root)
{
	if (root)
		json_decref(J(root));
}

enum gf_jv_type gf_jv_type(const struct gf_jv *v)
{
	if (!v)
		return GF_JV_NULL;
	switch (json_typeof(J(v))) {
	case JSON_OBJECT:
		return GF_JV_OBJ;
	case JSON_ARRAY:
		return GF_JV_ARR;
	case JSON_STRING:
		return GF_JV_STR;
	case JSON_INTEGER:
		return GF_JV_INT;
	case JSON_REAL:
		return GF_JV_REAL;
	case JSON_TRUE:
	case JSON_FALSE:
		return GF_JV_BOOL;
	default:
		return GF_JV_NULL;
	}
}

const struct gf_jv *gf_jv_get(const struct gf_jv *v, const char *key)
{
	return v ? V(json_object_get(J(v), key)) : NULL;
}

size_t gf_jv_len(const struct gf_jv *v)
{
	if (!v)
		return 0;
	if (json_is_array(J(v)))
		return json_array_size(J(v));
	return json_is_object(J(v)) ? json_object_size(J(v)) : 0;
}

const struct gf_jv *gf_jv_at(const struct gf_jv *v, size_t i)
{
	return v ? V(json_array_get(J(v), i)) : NULL;
}

const char *gf_jv_next(const struct gf_jv *v, void **it,
		       const struct gf_jv **val)
{
	if (!v || !json_is_object(J(v)))
		return NULL;
	*it = *it ? json_object_iter_next(J(v), *it) : json_object_iter(J(v));
	if (!*it)
		return NULL;
	*val = V(json_object_iter_value(*it));
	return json_object_iter_key(*it);
}

const char *gf_jv_str(const struct gf_jv *v)
{
	return v ? json_string_value(J(v)) : NULL;
}

bool gf_jv_int(const struct gf_jv *v, int64_t *out)
{
	if (!v || !json_is_integer(J(v)))
		return false;
	*out = (int64_t)json_integer_value(J(v));
	return true;
}

bool gf_jv_num(const struct gf_jv *v, double *out)
{
	if (!v || !json_is_number(J(v)))
		return false;
	*out = json_number_value(J(v));
	return true;
}

bool gf_jv_bool(const struct gf_jv *v, bool *out)
{
	if (!v || !json_is_boolean(J(v)))
		return false;
	*out = json_is_true(J(v));
	return true;
}

int gf_jv_dump(const struct gf_jv *v, const char *key, const char *value,
	       struct gf_buf *out)
{
	json_t *j = J(v);
	json_t *copy = NULL;
	if (key && json_is_object(j) && !json_object_get(j, key)) {
		copy = json_deep_copy(j);
		if (!copy ||
		    json_object_set_new(copy, key, json_string(value)) != 0) {
			json_decref(copy);
			return GF_EINVAL;
		}
		j = copy;
	}
	char *text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(copy);
	if (!text)
		return GF_EINVAL;
	int rc = gf_buf_puts(out, text);
	free(text);
	return rc;
}

int gf_jv_pairs(const struct gf_jv *v, const char *reject, char *out,
		size_t size)
{
	void *it = NULL;
	const struct gf_jv *val;
	const char *k;
	size_t len = 0;
	out[0] = '\0';
	while ((k = gf_jv_next(v, &it, &val)) != NULL) {
		const char *s = gf_jv_str(val);
		if (s == NULL || !*k || strpbrk(k, reject) ||
		    strpbrk(s, reject))
			return GF_EINVAL;
		int w = snprintf(out + len, size - len, "%s%s=%s",
				 len ? "," : "", k, s);
		if (w < 0 || (size_t)w >= size - len)
			return GF_ETOOBIG;
		len += (size_t)w;
	}
	return 0;
}

void gf_json_kv(struct gf_json *j, const char *key, const char *kvs)
{
	gf_json_obj_begin(j, key);
	char *copy = gf_strdup(kvs), *save = NULL;
	for (char *kv = strtok_r(copy, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (eq) {
			*eq = '\0';
			gf_json_str(j, kv, eq + 1);
		}
	}
	gf_free(copy);
	gf_json_obj_end(j);
}

void gf_json_str_or_null(struct gf_json *j, const char *key, const char *v)
{
	if (v && *v)
		gf_json_str(j, key, v);
	else
		gf_json_null(j, key);
}

size_t gf_json_squeeze(char *s, size_t len)
{
	size_t n = 0;
	bool in_str = false, esc = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_str) {
			in_str = esc || c != '"';
			esc = !esc && c == '\\';
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue;
		} else {
			in_str = c == '"';
		}
		s[n++] = c;
	}
	s[n] = '\0';
	return n;
}
