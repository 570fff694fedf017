/*
 * str.h - small in-place string helpers.
 */
#ifndef GF_UTIL_STR_H
#define GF_UTIL_STR_H

/* s without its leading blanks (space, tab) and trailing blanks and line
 * ends (space, tab, CR, LF): those at the end are cut in place (s is
 * written), the start is returned. */
char *gf_str_trim(char *s);

/* The end of the list item at s: its first `sep` outside open..close
 * brackets (nested), or its NUL.  "a[1,2],b" with ',', '[' and ']':
 * the comma before b. */
const char *gf_str_item_end(const char *s, char sep, char open, char close);

#endif
