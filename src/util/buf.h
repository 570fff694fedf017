/*
 * buf.h - a bounded, growable byte buffer (curl's dynbuf idea).
 *
 * Every buffer has a cap fixed at init; an append that would pass it fails
 * with GF_ETOOBIG and leaves the content as it was.  The failure is
 * sticky: every later append fails too, and gf_buf_error() reports it, so
 * a renderer that appends many pieces checks once, at the end, and never
 * returns a page with a piece missing.  gf_buf_reset() clears it.  The
 * content is always NUL-terminated, so b->data can be used as a C string.
 *
 * Lifecycle: gf_buf_init() on caller storage, gf_buf_release() frees.
 */
#ifndef GF_UTIL_BUF_H
#define GF_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct gf_buf {
	char *data; /* NUL-terminated; NULL until first append */
	size_t len;
	size_t alloc;
	size_t cap; /* hard limit on len */
	int err;    /* 0, or the first failure (sticky) */
};

void gf_buf_init(struct gf_buf *b, size_t cap);
void gf_buf_release(struct gf_buf *b);
/* The first failed append's code (GF_ETOOBIG), or 0. */
int gf_buf_error(const struct gf_buf *b);
/* Empty the buffer and clear its failure, keep its memory. */
void gf_buf_reset(struct gf_buf *b);
int gf_buf_append(struct gf_buf *b, const void *p, size_t n);
int gf_buf_puts(struct gf_buf *b, const char *s);
int gf_buf_putc(struct gf_buf *b, char c);
int gf_buf_printf(struct gf_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int gf_buf_vprintf(struct gf_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Borrowed pointer to the content ("" when empty). */
const char *gf_buf_str(const struct gf_buf *b);

#endif
