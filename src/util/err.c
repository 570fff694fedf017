/*
 * err.c - the error-code table and the context-carrying struct gf_err.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/err.h>

const char *gf_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
#define GF__ERR_MSG(name, val, msg) \
	case val:                   \
		return msg;
		GF_ERRNO_MAP(GF__ERR_MSG)
#undef GF__ERR_MSG
	default:
		break;
	}
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
	switch (code) {
	case 0:
		return "OK";
#define GF__ERR_NAME(name, val, msg) \
	case val:                    \
		return "GF_" #name;
		GF_ERRNO_MAP(GF__ERR_NAME)
#undef GF__ERR_NAME
	default:
		return code < 0 && code > -4000 ? "ERRNO" : "UNKNOWN";
	}
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
