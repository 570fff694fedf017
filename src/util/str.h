/*
 * str.h - small in-place string helpers.
 */
#ifndef GF_UTIL_STR_H
#define GF_UTIL_STR_H

#include <stdbool.h>
#include <stddef.h>

/* s without its leading blanks (space, tab) and trailing blanks and line
 * ends (space, tab, CR, LF): those at the end are cut in place (s is
 * written), the start is returned. */
char *gf_str_trim(char *s);

/* The end of the list item at s: its first `sep` outside open..close
 * brackets (nested), or its NUL.  "a[1,2],b" with ',', '[' and ']':
 * the comma before b. */
const char *gf_str_item_end(const char *s, char sep, char open, char close);

/* Whether s[0..len) is an environment variable's name as a shell takes
 * it: letters, digits and '_', not starting with a digit; 1 to 255
 * bytes. */
#define GF_STR_ENV_NAME_MAX 256
bool gf_str_is_env_name(const char *s, size_t len);

/* Whether s is a login name: 1 to 32 of letters, digits, '_', '-', '.',
 * not starting with '-' or '.', an optional '$' at the end. */
#define GF_STR_LOGIN_MAX 33 /* with its NUL */
bool gf_str_is_login(const char *s);

#endif
