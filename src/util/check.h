/*
 * check.h - what a debug build does when a consistency checker
 * (gf_<module>_check) finds a broken invariant: say which, and abort, so
 * the core itself never prints.
 */
#ifndef GF_UTIL_CHECK_H
#define GF_UTIL_CHECK_H

/* "gpufleet: <module> broken: <msg>" on stderr, then abort(). */
_Noreturn void gf_check_failed(const char *module, const char *msg);

#endif
