/*
 * duration.c - one duration syntax (duration.h): Slurm's time forms and
 * a number with a unit, for every flag that takes a duration.
 */
#include "util/duration.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"

#define SYNTAX "expected a duration (" GF_DUR_FORMS ")"

/* A whole number of digits at *p (moved past it): 0, or -1. */
static int whole(const char **p, double *out)
{
	const char *s = *p;
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 15)
		return -1;
	double v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	*out = v;
	*p = s + n;
	return 0;
}

/* Slurm's forms: M:S, H:M:S, D-H, D-H:M, D-H:M:S; 0, or GF_EINVAL. */
static int slurm(const char *s, double *secs, const char **why)
{
	double f[3] = { 0 }, days = 0;
	const char *p = s;
	const char *dash = strchr(s, '-');
	if (dash && (whole(&p, &days) || p++ != dash))
		goto syntax;
	int n = 0;
	for (;;) {
		if (whole(&p, &f[n++]))
			goto syntax;
		if (*p != ':' || n == 3)
			break;
		p++;
	}
	if (*p)
		goto syntax;
	/* without days the first field is minutes (M:S) or hours (H:M:S) */
	double h = 0, m = 0, sec = 0;
	if (!dash && n == 2)
		m = f[0], sec = f[1];
	else
		h = f[0], m = f[1], sec = f[2];
	if (dash && h > 23) {
		*why = "hours above 23 after 'D-'";
		return GF_EINVAL;
	}
	if ((dash || n == 3) && m > 59) {
		*why = "minutes above 59";
		return GF_EINVAL;
	}
	if (sec > 59) {
		*why = "seconds above 59";
		return GF_EINVAL;
	}
	*secs = ((days * 24 + h) * 60 + m) * 60 + sec;
	return 0;
syntax:
	*why = SYNTAX;
	return GF_EINVAL;
}

/* A number with a unit, or bare: 0, or GF_EINVAL. */
static int with_unit(const char *s, double bare, double *secs, const char **why)
{
	static const struct {
		const char *name;
		double secs;
	} units[] = { { "ms", 0.001 },
		      { "s", 1 },
		      { "m", 60 },
		      { "h", 3600 },
		      { "d", 86400 } };
	/* the number: digits with at most one '.'; the rest its unit */
	size_t n = strspn(s, "0123456789."), dots = 0;
	for (size_t i = 0; i < n; i++)
		dots += s[i] == '.';
	if (n == 0 || n > 30 || dots > 1 || dots == n) {
		*why = s[0] == '-' ? "negative" : SYNTAX;
		return GF_EINVAL;
	}
	char num[32];
	memcpy(num, s, n);
	num[n] = '\0';
	double v = strtod(num, NULL);
	const char *end = s + n;
	if (*end == '\0') {
		*secs = v * bare;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].name)) {
			*secs = v * units[i].secs;
			return 0;
		}
	*why = "unknown unit (ms, s, m, h or d)";
	return GF_EINVAL;
}

int gf_duration_parse(const char *s, double bare, double *secs,
		      const char **why)
{
	const char *dummy;
	if (why == NULL)
		why = &dummy;
	if (s == NULL || s[0] == '\0') {
		*why = "empty";
		return GF_EINVAL;
	}
	double v = 0;
	bool colon = strchr(s, ':') || (s[0] != '-' && strchr(s, '-'));
	int rc = colon ? slurm(s, &v, why) : with_unit(s, bare, &v, why);
	if (rc)
		return rc;
	if (!(v <= GF_DUR_MAX_S)) {
		*why = "longer than 1000 years";
		return GF_EINVAL;
	}
	*secs = v;
	return 0;
}

const char *gf_duration_str(double secs, char *buf, size_t size)
{
	static const struct {
		const char *name;
		double secs;
	} units[] = { { "d", 86400 },
		      { "h", 3600 },
		      { "m", 60 },
		      { "s", 1 },
		      { "ms", 0.001 } };
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double n = secs / units[i].secs;
		if (n >= 1 && fabs(n - nearbyint(n)) < 1e-9) {
			gf_note(buf, size, "%.0f%s", n, units[i].name);
			return buf;
		}
	}
	if (secs == 0)
		gf_note(buf, size, "0s");
	else
		gf_note(buf, size, "%gs", secs);
	return buf;
}
