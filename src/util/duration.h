/*
 * duration.h - the one duration syntax of every flag of every command
 * (issue 21): Slurm's forms and a number with a unit.
 *
 *   N[.F]            the caller's unit for a bare number (minutes for
 *                    --time as in Slurm, seconds for most flags)
 *   N[.F]ms|s|m|h|d  milliseconds, seconds, minutes, hours, days
 *   M:S  H:M:S       whole numbers; minutes and seconds after a ':' 0-59
 *   D-H  D-H:M  D-H:M:S   days, then hours 0-23
 *
 * "90s", "2h", "1d", "1:30" (90 s), "1:00:00" (1 h), "2-12" (60 h).
 */
#ifndef GF_UTIL_DURATION_H
#define GF_UTIL_DURATION_H

#include <stddef.h>

#include <gpufleet/err.h>

/* A bare number's unit, in seconds. */
#define GF_DUR_BARE_MS	0.001
#define GF_DUR_BARE_S	1.0
#define GF_DUR_BARE_MIN 60.0

/* The forms in words, for usage text and errors. */
#define GF_DUR_FORMS \
	"M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or with a unit: 90s, 2h, 1d"

/* The longest duration read: 1000 years, in seconds. */
#define GF_DUR_MAX_S (1000.0 * 366 * 86400)

/*
 * s as a duration, in seconds, into *secs (a bare number in bare units
 * of seconds): 0, or GF_EINVAL with *why a phrase saying what is wrong
 * ("seconds above 59", "unknown unit 'x' (ms, s, m, h or d)").  Never
 * negative, at most GF_DUR_MAX_S.
 */
int gf_duration_parse(const char *s, double bare, double *secs,
		      const char **why) GF_MUST_CHECK;

/* secs as the shortest text of whole units ("90s", "2h", "36600d",
 * "250ms", "1.5s" when nothing whole fits), in buf: buf. */
const char *gf_duration_str(double secs, char *buf, size_t size);

#endif
