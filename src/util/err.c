/*
 * err.c - the error-code table and the context-carrying struct gf_err.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/err.h>

/* 0 and the codes of GF_ERRNO_MAP: the one table of names and
 * messages. */
struct code {
	int code;
	const char *name, *msg;
};
static const struct code codes[] = { { 0, "OK", "success" },
#define GF__ERR_ROW(name, val, msg) { val, "GF_" #name, msg },
				     GF_ERRNO_MAP(GF__ERR_ROW)
#undef GF__ERR_ROW
};

static const struct code *find(int code)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == code)
			return &codes[i];
	return NULL;
}

const char *gf_strerror(int code)
{
	const struct code *c = find(code);
	if (c)
		return c->msg;
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
	const struct code *c = find(code);
	if (c)
		return c->name;
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
