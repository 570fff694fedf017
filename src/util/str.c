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
