/*
 * jobs_list.c - listing the core's jobs (issue 21): a filter (states, a
 * name pattern, team, node, a time window, a page's end) over the job
 * table in submission order or newest first, and the parsers of the
 * values a listing is asked for ("pending,RUNNING", "2h",
 * "2026-12-02T10:00:00Z").
 *
 * Invariants: a list looks at jobs in seq order (the table's) from the
 * page's end, and at no more than it needs: the jobs it returns and the
 * ones that do not match before them, plus one match to say there is more.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include <gpufleet/ctl.h>
#include <gpufleet/err.h>

#include "util/clock.h"

int gf_job_states_parse(const char *list, unsigned *out)
{
	static const char *const names[] = { "pending", "running", "succeeded",
					     "failed", "cancelled" };
	*out = 0;
	if (list == NULL)
		return GF_EINVAL;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		int k = 0;
		while (k < 5 && (strlen(names[k]) != n ||
				 strncasecmp(p, names[k], n) != 0))
			k++;
		if (k == 5)
			return GF_EINVAL;
		*out |= 1u << k;
		p += n;
		if (*p == ',' && *++p == '\0')
			return GF_EINVAL; /* "a," */
	}
	return *out ? 0 : GF_EINVAL;
}

_Static_assert(GF_JOB_PENDING == 0 && GF_JOB_RUNNING == 1 &&
		       GF_JOB_SUCCEEDED == 2 && GF_JOB_FAILED == 3 &&
		       GF_JOB_CANCELLED == 4,
	       "the names above in state order");

/* n digits at *p into v, p moved past them. */
static bool digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int k = 0; k < n; k++) {
		if (!isdigit((unsigned char)(*p)[k]))
			return false;
		*v = *v * 10 + ((*p)[k] - '0');
	}
	*p += n;
	return true;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* "HH:MM[:SS[.fff]]" after the date; ms into *ms. */
static bool clock_part(const char **p, int64_t *ms)
{
	int h, mi, sec = 0, frac = 0, scale = 1000;
	if (!digits(p, 2, &h) || *(*p)++ != ':' || !digits(p, 2, &mi))
		return false;
	if (**p == ':') {
		(*p)++;
		if (!digits(p, 2, &sec))
			return false;
		if (**p == '.') {
			(*p)++;
			if (!isdigit((unsigned char)**p))
				return false;
			for (; isdigit((unsigned char)**p); (*p)++)
				if (scale > 1) {
					scale /= 10;
					frac += (**p - '0') * scale;
				}
		}
	}
	if (h > 23 || mi > 59 || sec > 60)
		return false;
	*ms = ((int64_t)h * 3600 + mi * 60 + sec) * 1000 + frac;
	return true;
}

/* "Z", "+HH:MM", "+HHMM", "-HH", or nothing (UTC): the offset in ms. */
static bool zone_part(const char **p, int64_t *off)
{
	*off = 0;
	if (**p == 'Z' || **p == 'z') {
		(*p)++;
		return true;
	}
	if (**p != '+' && **p != '-')
		return **p == '\0';
	int sign = **p == '-' ? -1 : 1, h, m = 0;
	(*p)++;
	if (!digits(p, 2, &h))
		return false;
	if (**p == ':')
		(*p)++;
	if (**p && !digits(p, 2, &m))
		return false;
	if (h > 23 || m > 59)
		return false;
	*off = sign * ((int64_t)h * 3600 + m * 60) * 1000;
	return true;
}

static bool iso_time(const char *s, int64_t *out)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30,
				     31, 31, 30, 31, 30, 31 };
	const char *p = s;
	int y, mo, d;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) ||
	    *p++ != '-' || !digits(&p, 2, &d) || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (mo == 2 && leap(y)))
		return false;
	int64_t ms = 0, off = 0;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (!clock_part(&p, &ms) || !zone_part(&p, &off))
			return false;
	}
	if (*p != '\0')
		return false;
	*out = gf_days_from_civil(y, mo, d) * 86400000 + ms - off;
	return true;
}

/* "90s", "30m", "2h", "7d", "1w", "1d12h": how long ago, in ms. */
static bool ago(const char *s, int64_t *out)
{
	int64_t total = 0;
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return false;
	while (*p) {
		int64_t n = 0;
		if (!isdigit((unsigned char)*p))
			return false;
		for (; isdigit((unsigned char)*p); p++) {
			n = n * 10 + (*p - '0');
			if (n > INT64_C(1) << 40)
				return false;
		}
		int64_t unit = *p == 's'   ? 1000
			       : *p == 'm' ? 60000
			       : *p == 'h' ? 3600000
			       : *p == 'd' ? 86400000
			       : *p == 'w' ? 7 * INT64_C(86400000)
					   : 0;
		if (unit == 0)
			return false;
		p++;
		total += n * unit;
		if (total > INT64_C(100) * 366 * 86400000)
			return false;
	}
	*out = total;
	return true;
}

int gf_job_time_parse(const char *s, int64_t now_ms, int64_t *out)
{
	int64_t v;
	if (s == NULL)
		return GF_EINVAL;
	if (!strcmp(s, "now")) {
		*out = now_ms;
		return 0;
	}
	if (ago(s, &v)) {
		*out = now_ms - v;
		return 0;
	}
	if (iso_time(s, &v)) {
		*out = v;
		return 0;
	}
	return GF_EINVAL;
}

/* Does job j run, complete or (ran_on) once run on node? */
static bool on_node(const struct gf_job_filter *f, const struct gf_job *j)
{
	for (int r = 0; j->place && r < j->spec.replicas; r++)
		if (!strcmp(j->place[r].node_name, f->node))
			return true;
	for (int k = 0; k < j->nheld; k++)
		if (!strcmp(j->held[k].place.node_name, f->node))
			return true;
	return f->ran_on && f->ran_on(j, f->node, f->arg);
}

bool gf_job_filter_match(const struct gf_job_filter *f, const struct gf_job *j)
{
	if (f->states && !(f->states & (1u << j->state)))
		return false;
	if (f->before_seq && j->seq >= f->before_seq)
		return false;
	if (f->team && strcmp(j->spec.team, f->team))
		return false;
	if (f->name && fnmatch(f->name, j->spec.name, 0) != 0)
		return false;
	/* the window: submitted by its end, not ended before its start */
	if (f->until_ms && j->submitted_ms > f->until_ms)
		return false;
	if (f->since_ms && gf_job_is_final(j->state) &&
	    j->ended_ms < f->since_ms)
		return false;
	return !f->node || on_node(f, j);
}

/* The index of the first job of seq >= seq (n when none). */
static int first_at(const struct gf_ctl *ctl, int n, uint64_t seq)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (gf_ctl_job_at(ctl, mid)->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int gf_ctl_jobs_list(const struct gf_ctl *ctl, const struct gf_job_filter *f,
		     const struct gf_job **out, int limit, bool *more)
{
	int n = gf_ctl_njobs(ctl), got = 0;
	/* a page ends before before_seq: the jobs below it only */
	int end = f->before_seq ? first_at(ctl, n, f->before_seq) : n;
	*more = false;
	for (int k = 0; k < end; k++) {
		const struct gf_job *j =
			gf_ctl_job_at(ctl, f->desc ? end - 1 - k : k);
		if (!gf_job_filter_match(f, j))
			continue;
		if (got == limit) {
			*more = true;
			break;
		}
		out[got++] = j;
	}
	return got;
}
