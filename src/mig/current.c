/*
 * current.c - the "current MIG layout" file (format in current.h).
 * Every error names the file and line; a GPU's layout is checked against
 * its model's rules as soon as its line is read.
 */
#include "mig/current.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"

/* One line's instances into gpu->current; 0 or GF_EPARSE. */
static int read_instances(char *s, struct gf_mig_gpu *gpu, const char *path,
			  int lineno, struct gf_err *e)
{
	gpu->current.n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, " \t\r\n", &save); t;
	     t = strtok_r(NULL, " \t\r\n", &save)) {
		size_t len = strlen(t);
		bool busy = t[len - 1] == '*';
		if (busy)
			t[len - 1] = '\0';
		char *at = strchr(t, '@'), *end = NULL;
		long start = at ? strtol(at + 1, &end, 10) : -1;
		if (at)
			*at = '\0';
		int pi = gf_mig_profile_find(gpu->model, t);
		if (!at || end == at + 1 || *end || start < 0 || start > 7 ||
		    pi < 0)
			return gf_err_set(e, GF_EPARSE,
					  "%s:%d: '%s' is not PROFILE@START of "
					  "a %s profile",
					  path, lineno, t, gpu->model->id);
		if (gpu->current.n >= GF_MIG_MAX_INSTANCES)
			return gf_err_set(e, GF_EPARSE,
					  "%s:%d: more than %d instances", path,
					  lineno, GF_MIG_MAX_INSTANCES);
		gpu->current.inst[gpu->current.n++] =
			(struct gf_mig_instance){ (uint8_t)pi, (uint8_t)start,
						  busy };
	}
	return 0;
}

static int read_line(char *line, struct gf_mig_gpu *g, int n, bool *listed,
		     const char *path, int lineno, struct gf_err *e)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || *p == '\n' || *p == '\r')
		return 0;
	char *end;
	long idx = strtol(p, &end, 10);
	if (end == p || *end != ':' || idx < 0 || idx >= n)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%d: expected 'INDEX: PROFILE@START ...' "
				  "with INDEX 0..%d (the GPUs given beside it)",
				  path, lineno, n - 1);
	if (listed)
		listed[idx] = true;
	int rc = read_instances(end + 1, &g[idx], path, lineno, e);
	if (rc)
		return rc;
	char msg[160];
	if (gf_mig_layout_check(g[idx].model, &g[idx].current, msg,
				sizeof(msg)))
		return gf_err_set(e, GF_EINVAL, "%s:%d: GPU %ld: %s", path,
				  lineno, idx, msg);
	return 0;
}

int gf_mig_current_read(const char *path, struct gf_mig_gpu *g, int n,
			bool *listed, struct gf_err *e)
{
	FILE *f = gf_file_open(path, "r", 1u << 20, e);
	if (!f)
		return e ? e->code : GF_EINVAL;
	char line[GF_MIG_CURRENT_LINE_MAX + 2];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		if (strlen(line) > GF_MIG_CURRENT_LINE_MAX && !feof(f))
			rc = gf_err_set(e, GF_ETOOBIG,
					"%s:%d: line longer than %d bytes",
					path, lineno, GF_MIG_CURRENT_LINE_MAX);
		else
			rc = read_line(line, g, n, listed, path, lineno, e);
	}
	if (rc == 0 && ferror(f))
		rc = gf_err_set(e, GF_EINVAL, "cannot read '%s'", path);
	fclose(f);
	return rc;
}
