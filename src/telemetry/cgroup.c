/*
 * cgroup.c - pod and job owners from cgroup paths.
 */
#include "telemetry/cgroup.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Copy the run of chars allowed by ok() starting at s into out. */
static void take(const char *s, char *out, size_t size, int (*ok)(int))
{
	size_t n = 0;
	while (s[n] && ok((unsigned char)s[n]) && n + 1 < size) {
		out[n] = s[n];
		n++;
	}
	out[n] = '\0';
}

static int uid_char(int c)
{
	return isxdigit(c) || c == '-' || c == '_';
}

static int id_char(int c)
{
	return isalnum(c);
}

static int digit(int c)
{
	return isdigit(c);
}

static void owner_from_path(const char *path, struct gf_owner *o)
{
	const char *p = strstr(path, "pod");
	while (p && !strstr(path, "kubepods"))
		p = NULL;
	if (p) {
		/* the last "pod<uid>" segment */
		const char *q;
		while ((q = strstr(p + 3, "pod")) != NULL)
			p = q;
		take(p + 3, o->pod_uid, sizeof(o->pod_uid), uid_char);
		for (char *c = o->pod_uid; *c; c++)
			if (*c == '_')
				*c = '-';
		/* the container: the segment after the pod's */
		const char *slash = strchr(p, '/');
		if (slash) {
			const char *seg = slash + 1;
			const char *dash = strrchr(seg, '-');
			if (strstr(seg, ".scope") && dash)
				seg = dash + 1;
			take(seg, o->container, sizeof(o->container), id_char);
		}
	}
	const char *j = strstr(path, "job_");
	if (j && (strstr(path, "slurm") != NULL))
		take(j + 4, o->slurm_job, sizeof(o->slurm_job), digit);
}

bool gf_cgroup_owner(const char *text, struct gf_owner *out)
{
	memset(out, 0, sizeof(*out));
	/* lines "hierarchy-id:controllers:path"; any line with an owner */
	char line[1024];
	const char *s = text;
	while (*s) {
		size_t n = strcspn(s, "\n");
		size_t k = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
		memcpy(line, s, k);
		line[k] = '\0';
		const char *path = strchr(line, ':');
		path = path ? strchr(path + 1, ':') : NULL;
		if (path)
			owner_from_path(path + 1, out);
		if (out->pod_uid[0] || out->slurm_job[0])
			return true;
		s += n;
		if (*s == '\n')
			s++;
	}
	return false;
}
