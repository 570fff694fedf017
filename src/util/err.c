/*
 * err.c - the error-code table and the context-carrying struct gf_err.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/err.h>

/* The codes of GF_ERRNO_MAP: the one table of names and messages. */
static const struct {
	int code;
	const char *name, *msg;
} codes[] = {
#define GF__ERR_ROW(name, val, msg) { val, "GF_" #name, msg },
	GF_ERRNO_MAP(GF__ERR_ROW)
#undef GF__ERR_ROW
};

static int find(int code)
{
	for (int i = 0; i < (int)(sizeof(codes) / sizeof(codes[0])); i++)
		if (codes[i].code == code)
			return i;
	return -1;
}

const char *gf_strerror(int code)
{
	int i = find(code);
	if (code == 0)
		return "success";
	if (i >= 0)
		return codes[i].msg;
	if (code < 0 && code > -4000) {
		static _Thread_local char buf[128];
		int en = -code;
		if (strerror_r(en, buf, sizeof(buf)) != 0)
			snprintf(buf, sizeof(buf), "errno %d", en);
		return buf;
	}
	return "unknown error";
}

const char *gf_err_name(int code)
{
	int i = find(code);
	if (code == 0)
		return "OK";
	if (i >= 0)
		return codes[i].name;
	return code < 0 && code > -4000 ? "ERRNO" : "UNKNOWN";
}

int gf_err_set(struct gf_err *e, int code, const char *fmt, ...)
{
	if (e == NULL)
		return code;
	e->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void gf_err_clear(struct gf_err *e)
{
	if (e == NULL)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}
