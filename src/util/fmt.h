/*
 * fmt.h - formatting into a fixed array, never cut without a word.
 *
 * snprintf cuts a string that does not fit and says so only in a result
 * that is easy to drop.  gpufleet formats through these two instead (a
 * lint, tests/tools/snprintf.sh, fails on a statement-level snprintf
 * outside src/util):
 *
 *   gf_fmt()   for what a program reads back: paths, URLs, keys, ids,
 *              numbers.  A result that does not fit is GF_ETOOBIG, and the
 *              caller must check it (GF_MUST_CHECK).
 *   gf_note()  for text a person reads: error messages, reasons, log and
 *              table lines.  A cut is marked with "..." at the end, so the
 *              reader sees that something is missing; nothing to check.
 *
 * Both always leave dst NUL-terminated (when cap > 0).
 */
#ifndef GF_UTIL_FMT_H
#define GF_UTIL_FMT_H

#include <stdarg.h>
#include <stddef.h>

#include "gpufleet/err.h"

/* 0, or GF_ETOOBIG when the result (or GF_EINVAL when the format) failed;
 * dst then holds the part that fit. */
int gf_fmt(char *dst, size_t cap, const char *fmt, ...) GF_MUST_CHECK
	__attribute__((format(printf, 3, 4)));
int gf_vfmt(char *dst, size_t cap, const char *fmt, va_list ap) GF_MUST_CHECK
	__attribute__((format(printf, 3, 0)));

/* Text for people: cut with a trailing "..." when it does not fit. */
void gf_note(char *dst, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void gf_vnote(char *dst, size_t cap, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
