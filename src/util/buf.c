/*
 * buf.c - bounded dynamic buffer.  Invariant: data == NULL or
 * data[len] == '\0' and len < alloc; len <= cap always; once err is set
 * it stays set until gf_buf_reset() (a failed buffer never grows again,
 * so a renderer cannot hand out a page with a hole in it).
 */
#include "util/buf.h"

#include <stdio.h>
#include <string.h>

#include <gpufleet/err.h>

#include "util/mem.h"

void gf_buf_init(struct gf_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->err = 0;
}

void gf_buf_release(struct gf_buf *b)
{
	gf_free(b->data);
	b->len = 0;
	b->alloc = 0;
}

void gf_buf_reset(struct gf_buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int grow(struct gf_buf *b, size_t extra)
{
	if (b->err)
		return b->err;
	if (extra > b->cap - b->len)
		return b->err = GF_ETOOBIG;
	size_t need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	size_t n = b->alloc ? b->alloc : 64;
	while (n < need)
		n *= 2;
	if (n > b->cap + 1)
		n = b->cap + 1;
	b->data = gf_reallocarray(b->data, n, 1);
	b->alloc = n;
	return 0;
}

int gf_buf_append(struct gf_buf *b, const void *p, size_t n)
{
	int rc = grow(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int gf_buf_puts(struct gf_buf *b, const char *s)
{
	return gf_buf_append(b, s, strlen(s));
}

int gf_buf_putc(struct gf_buf *b, char c)
{
	return gf_buf_append(b, &c, 1);
}

int gf_buf_vprintf(struct gf_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return b->err = GF_EINVAL;
	int rc = grow(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int gf_buf_printf(struct gf_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = gf_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int gf_buf_error(const struct gf_buf *b)
{
	return b->err;
}

const char *gf_buf_str(const struct gf_buf *b)
{
	return b->data ? b->data : "";
}
