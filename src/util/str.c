/*
 * str.c - small in-place string helpers (see str.h).
 */
#include "util/str.h"

#include <string.h>

char *gf_str_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
		     s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

const char *gf_str_item_end(const char *s, char sep, char open, char close)
{
	int depth = 0;
	while (*s && (depth || *s != sep)) {
		depth += *s == open ? 1 : *s == close ? -1 : 0;
		s++;
	}
	return s;
}
