/*
 * fmt.c - checked formatting into fixed arrays (see fmt.h).
 */
#include "util/fmt.h"

#include <stdio.h>
#include <string.h>

int gf_vfmt(char *dst, size_t cap, const char *fmt, va_list ap)
{
	if (!dst || cap == 0)
		return GF_EINVAL;
	int n = vsnprintf(dst, cap, fmt, ap);
	if (n < 0) {
		dst[0] = '\0';
		return GF_EINVAL;
	}
	return (size_t)n < cap ? 0 : GF_ETOOBIG;
}

int gf_fmt(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = gf_vfmt(dst, cap, fmt, ap);
	va_end(ap);
	return rc;
}

void gf_vnote(char *dst, size_t cap, const char *fmt, va_list ap)
{
	if (!dst || cap == 0)
		return;
	int n = vsnprintf(dst, cap, fmt, ap);
	if (n < 0) {
		dst[0] = '\0';
		return;
	}
	if ((size_t)n < cap)
		return;
	/* cut: end with "..." where there is room for it */
	static const char mark[] = "...";
	size_t m = sizeof mark - 1;
	if (cap > m)
		memcpy(dst + cap - 1 - m, mark, m + 1);
}

void gf_note(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(dst, cap, fmt, ap);
	va_end(ap);
}
