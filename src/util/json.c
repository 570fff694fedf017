/*
 * json.c - streaming JSON writer.  Strings are escaped per RFC 8259;
 * bytes >= 0x80 pass through (our strings are UTF-8 or ASCII).
 */
#include "util/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include <gpufleet/err.h>

void gf_json_init(struct gf_json *j, struct gf_buf *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = true;
	j->in_array[0] = true;
	j->err = 0;
}

static void put(struct gf_json *j, const char *s)
{
	if (j->err == 0)
		j->err = gf_buf_puts(j->out, s);
}

static void indent(struct gf_json *j)
{
	for (int i = 0; i < j->depth; i++)
		put(j, "  ");
}

static void put_escaped(struct gf_json *j, const char *s)
{
	put(j, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		switch (*p) {
		case '"':
			put(j, "\\\"");
			break;
		case '\\':
			put(j, "\\\\");
			break;
		case '\n':
			put(j, "\\n");
			break;
		case '\t':
			put(j, "\\t");
			break;
		case '\r':
			put(j, "\\r");
			break;
		default:
			if (*p < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				put(j, esc);
			} else {
				esc[0] = (char)*p;
				esc[1] = '\0';
				put(j, esc);
			}
		}
	}
	put(j, "\"");
}

static void prefix(struct gf_json *j, const char *key)
{
	if (j->depth > 0) {
		put(j, j->first[j->depth] ? "\n" : ",\n");
		indent(j);
	}
	j->first[j->depth] = false;
	if (key && !j->in_array[j->depth]) {
		put_escaped(j, key);
		put(j, ": ");
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

void gf_json_int(struct gf_json *j, const char *key, int64_t v)
{
	char tmp[32];
	prefix(j, key);
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	put(j, tmp);
}

void gf_json_uint(struct gf_json *j, const char *key, uint64_t v)
{
	char tmp[32];
	prefix(j, key);
	snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	put(j, tmp);
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
