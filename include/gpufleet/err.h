/*
 * err.h - gpufleet error codes.
 *
 * Every function that can fail returns an int: 0 on success, a negative
 * code on failure.  System failures pass -errno through unchanged; our own
 * codes live in their own range (-4000 and below) so the two never collide.
 * The table is append-only: never renumber a code, scripts may match on it.
 *
 * Where context matters (file, line, field) a function also takes a
 * struct gf_err that receives a one-line message, failure first.
 */
#ifndef GPUFLEET_ERR_H
#define GPUFLEET_ERR_H

#include <stddef.h>

/* X(name, value, message) */
#define GF_ERRNO_MAP(X)                                         \
	X(EINVAL, -4001, "invalid argument")                    \
	X(ETOOBIG, -4002, "input exceeds a size limit")         \
	X(EPARSE, -4003, "cannot parse input")                  \
	X(ENOGPU, -4004, "no GPU found")                        \
	X(ENOTFOUND, -4005, "not found")                        \
	X(ETOPO, -4006, "cannot load topology")                 \
	X(ENVML, -4007, "NVML call failed")                     \
	X(ENOTSUP, -4008, "not supported")                      \
	X(ERANGE, -4009, "value out of range")                  \
	X(ENOTTHIS, -4010, "topology is not this machine")      \
	X(EBIND, -4011, "cannot bind")                          \
	X(ENEVER, -4012, "can never be placed")                 \
	X(ECONFLICT, -4013, "conflicts with the current state") \
	X(EAUTH, -4014, "not authorised")

enum gf_errno {
#define GF__ERR_ENUM(name, val, msg) GF_##name = (val),
	GF_ERRNO_MAP(GF__ERR_ENUM)
#undef GF__ERR_ENUM
};

#define GF_ERR_MSG_MAX 512

/*
 * A function whose int result says whether it worked is marked must-check:
 * the compiler warns where a caller drops the result.  A caller that means
 * to ignore it writes (void)! before the call: gcc does not take a plain
 * (void) cast as a use of the result, clang does, both take (void)!.
 */
#if defined(__GNUC__) || defined(__clang__)
#define GF_MUST_CHECK __attribute__((warn_unused_result))
#else
#define GF_MUST_CHECK
#endif

/* A message for the user, filled by the function that failed. */
struct gf_err {
	int code;
	char msg[GF_ERR_MSG_MAX];
};

/* Text for a code: ours, or strerror for -errno.  Never NULL; static. */
const char *gf_strerror(int code);

/* Symbolic name of a code ("GF_EPARSE", "ENOENT" style), static. */
const char *gf_err_name(int code);

/*
 * Record an error: sets e->code and formats e->msg.  Returns code, so a
 * caller may write `return gf_err_set(e, GF_EPARSE, "...")`.  e may be NULL.
 */
int gf_err_set(struct gf_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reset e to "no error". */
void gf_err_clear(struct gf_err *e);

#endif
