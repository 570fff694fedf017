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

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

bool gf_str_is_env_name(const char *s, size_t len)
{
	if (len == 0 || len >= GF_STR_ENV_NAME_MAX ||
	    (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!word_char(s[i]))
			return false;
	return true;
}

bool gf_str_is_login(const char *s)
{
	size_t n = strnlen(s, GF_STR_LOGIN_MAX);
	if (n == 0 || n >= GF_STR_LOGIN_MAX || s[0] == '-' || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!word_char(s[i]) && s[i] != '-' && s[i] != '.' &&
		    !(s[i] == '$' && i > 0 && i == n - 1))
			return false;
	return true;
}
