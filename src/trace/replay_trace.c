/*
 * replay_trace.c - the traces `gpufleet simulate replay` plays: the
 * Alibaba GPU 2023 pod lists (with their times), Philly as Pollux uses it,
 * and the Alibaba 2025 DLRM instances, read into one list of jobs that
 * arrive and leave (replay.h says how each source's fields map).
 *
 * Every number is range-checked; a bad row is an error naming file:line
 * and the field.  Caps: GF_REPLAY_MAX_JOBS jobs, GF_REPLAY_MAX_NAMES
 * names per table, GF_CSV_LINE_MAX bytes a line.  Nothing is half-loaded:
 * on error the caller releases the trace.
 */
#include "trace/replay_trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/clock.h"
#include "util/csv.h"
#include "util/fmt.h"
#include "util/mem.h"

/* Times in the traces are seconds; beyond ten years is an error. */
#define MAX_TIME_S (10.0 * 366 * 86400)
/* Philly replicas: 8-GPU machines. */
#define PHILLY_NODE_GPUS 8

static const char *const source_names[] = {
	[GF_REPLAY_ALIBABA2023] = "alibaba2023",
	[GF_REPLAY_PHILLY] = "philly",
	[GF_REPLAY_DLRM2025] = "dlrm2025",
};

const char *gf_replay_source_name(enum gf_replay_source s)
{
	if ((unsigned)s >= sizeof(source_names) / sizeof(source_names[0]))
		return "?";
	return source_names[s];
}

int gf_replay_source_parse(const char *s, enum gf_replay_source *out)
{
	for (unsigned i = 0; i < sizeof(source_names) / sizeof(source_names[0]);
	     i++)
		if (strcmp(s, source_names[i]) == 0) {
			*out = (enum gf_replay_source)i;
			return 0;
		}
	return GF_ENOTFOUND;
}

void gf_replay_trace_init(struct gf_replay_trace *t)
{
	memset(t, 0, sizeof(*t));
}

void gf_replay_trace_release(struct gf_replay_trace *t)
{
	gf_free(t->jobs);
	gf_free(t->teams);
	gf_free(t->models);
	memset(t, 0, sizeof(*t));
}

/* Index of name in tab[0..*n) (rows of size width), added when new. */
static int intern(char **tab, int *n, size_t width, const char *name, int max)
{
	if (strlen(name) >= width)
		return GF_ETOOBIG;
	for (int i = 0; i < *n; i++)
		if (strcmp(*tab + (size_t)i * width, name) == 0)
			return i;
	if (*n >= max)
		return GF_ETOOBIG;
	if (*tab == NULL)
		*tab = gf_calloc((size_t)max, width);
	gf_note(*tab + (size_t)*n * width, width, "%s", name);
	return (*n)++;
}

int gf_replay_team(struct gf_replay_trace *t, const char *name)
{
	char *tab = (char *)t->teams;
	int rc = intern(&tab, &t->nteams, GF_TEAM_NAME_MAX, name,
			GF_REPLAY_MAX_NAMES);
	t->teams = (char(*)[GF_TEAM_NAME_MAX])tab;
	return rc;
}

int gf_replay_model(struct gf_replay_trace *t, const char *name)
{
	char *tab = (char *)t->models;
	int rc = intern(&tab, &t->nmodels, GF_GPU_MODEL_MAX, name,
			GF_REPLAY_MAX_NAMES);
	t->models = (char(*)[GF_GPU_MODEL_MAX])tab;
	return rc;
}

int gf_replay_class(struct gf_replay_trace *t, const char *name)
{
	int max = (int)(sizeof(t->classes) / sizeof(t->classes[0]));
	if (strlen(name) >= GF_CLASS_NAME_MAX)
		return GF_ETOOBIG;
	for (int i = 0; i < t->nclasses; i++)
		if (strcmp(t->classes[i], name) == 0)
			return i;
	if (t->nclasses >= max)
		return GF_ETOOBIG;
	gf_note(t->classes[t->nclasses], GF_CLASS_NAME_MAX, "%s", name);
	return t->nclasses++;
}

int gf_replay_add(struct gf_replay_trace *t, const struct gf_replay_job *j)
{
	if (t->n >= GF_REPLAY_MAX_JOBS)
		return GF_ETOOBIG;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		if (t->cap > GF_REPLAY_MAX_JOBS)
			t->cap = GF_REPLAY_MAX_JOBS;
		t->jobs = gf_reallocarray(t->jobs, (size_t)t->cap,
					  sizeof(*t->jobs));
	}
	t->jobs[t->n++] = *j;
	return 0;
}

int gf_replay_scale_arrivals(struct gf_replay_trace *t, double x)
{
	if (!(x > 0) || x > GF_REPLAY_LOAD_MAX)
		return GF_EINVAL;
	if (x == 1)
		return 0;
	for (int i = 0; i < t->n; i++) {
		struct gf_replay_job *j = &t->jobs[i];
		int64_t a = llround((double)j->arrival_ms / x);
		if (j->delete_ms > 0) /* its lifetime kept */
			j->delete_ms = a + (j->delete_ms - j->arrival_ms);
		j->arrival_ms = a;
	}
	return 0;
}

/* ---- fields ---- */

static int64_t ms_of(double s)
{
	return (int64_t)llround(s * 1000.0);
}

static int add_job(struct gf_csv *c, struct gf_replay_trace *t,
		   struct gf_replay_job *j, struct gf_err *e)
{
	j->line = (int32_t)c->line;
	if (gf_replay_add(t, j) != 0)
		return gf_err_set(e, GF_ETOOBIG, "%s:%ld: more than %d jobs",
				  c->path, c->line, GF_REPLAY_MAX_JOBS);
	return 0;
}

static int name_err(struct gf_csv *c, const char *field, const char *v,
		    struct gf_err *e)
{
	return gf_err_set(e, GF_ETOOBIG,
			  "%s:%ld: field '%s': '%.40s' is too long, or more "
			  "than %d distinct values",
			  c->path, c->line, field, v, GF_REPLAY_MAX_NAMES);
}

/* ---- Alibaba GPU 2023 ---- */

static int qos_class(struct gf_csv *c, int i, struct gf_replay_trace *t,
		     struct gf_err *e)
{
	const char *q = i >= 0 ? gf_csv_get(c, i) : "";
	const char *cls;
	if (strcmp(q, "LS") == 0)
		cls = "inference";
	else if (strcmp(q, "Burstable") == 0 || strcmp(q, "Guaranteed") == 0)
		cls = "training";
	else if (strcmp(q, "BE") == 0 || *q == '\0')
		cls = "batch";
	else
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field 'qos': expected LS, "
				  "Burstable, Guaranteed or BE, got '%.40s'",
				  c->path, c->line, q);
	return gf_replay_class(t, cls);
}

static int load_alibaba2023(struct gf_csv *c,
			    const struct gf_replay_load_opts *o,
			    struct gf_replay_trace *t, struct gf_err *e)
{
	int ccpu, cmem, cn, cg, ccr, cdel;
	if ((ccpu = gf_csv_require(c, "cpu_milli", e)) < 0 ||
	    (cmem = gf_csv_require(c, "memory_mib", e)) < 0 ||
	    (cn = gf_csv_require(c, "num_gpu", e)) < 0 ||
	    (cg = gf_csv_require(c, "gpu_milli", e)) < 0 ||
	    (ccr = gf_csv_require(c, "creation_time", e)) < 0 ||
	    (cdel = gf_csv_require(c, "deletion_time", e)) < 0)
		return e->code;
	int csch = gf_csv_column(c, "scheduled_time");
	int cqos = gf_csv_column(c, "qos");
	int cspec = gf_csv_column(c, "gpu_spec");
	int team = gf_replay_team(t, "default");
	int rc;
	while ((rc = gf_csv_next(c, e)) > 0) {
		if (o->limit > 0 && t->n >= o->limit)
			break;
		long long cpu, mem, k, g;
		double cr, del, sch = 0;
		bool has_sch = false, has_del;
		if ((rc = gf_csv_int(c, ccpu, "cpu_milli", 0,
				     GF_JOB_CPU_MILLI_MAX, &cpu, e)) ||
		    (rc = gf_csv_int(c, cmem, "memory_mib", 0,
				     GF_JOB_MEMORY_MIB_MAX, &mem, e)) ||
		    (rc = gf_csv_int(c, cn, "num_gpu", 0, GF_CNODE_MAX_GPUS, &k,
				     e)) ||
		    (rc = gf_csv_int(c, cg, "gpu_milli", 0, 1000, &g, e)) ||
		    (rc = gf_csv_num(c, ccr, "creation_time", 0, MAX_TIME_S,
				     false, &cr, NULL, e)) ||
		    (rc = gf_csv_num(c, cdel, "deletion_time", 0, MAX_TIME_S,
				     true, &del, &has_del, e)) ||
		    (csch >= 0 &&
		     (rc = gf_csv_num(c, csch, "scheduled_time", 0, MAX_TIME_S,
				      true, &sch, &has_sch, e))))
			return rc;
		if (k > 1 && g != 1000)
			return gf_err_set(e, GF_ERANGE,
					  "%s:%ld: field 'gpu_milli': %lld "
					  "with num_gpu %lld; a multi-GPU pod "
					  "takes whole GPUs (1000)",
					  c->path, c->line, g, k);
		if (k > 0 && g == 0)
			return gf_err_set(e, GF_ERANGE,
					  "%s:%ld: field 'gpu_milli': 0 with "
					  "num_gpu %lld",
					  c->path, c->line, k);
		if (has_sch && has_del && del < sch)
			return gf_err_set(e, GF_ERANGE,
					  "%s:%ld: field 'deletion_time': "
					  "before scheduled_time",
					  c->path, c->line);
		if (has_del && del < cr)
			return gf_err_set(e, GF_ERANGE,
					  "%s:%ld: field 'deletion_time': "
					  "before creation_time",
					  c->path, c->line);
		struct gf_replay_job j = { .arrival_ms = ms_of(cr),
					   .cpu_milli = (int32_t)cpu,
					   .memory_mib = mem,
					   .replicas = 1,
					   .team = (uint16_t)team,
					   .model = -1 };
		if (k == 1 && g < 1000)
			j.gpu_milli = (int16_t)g;
		else
			j.gpus = (int16_t)k;
		if (has_sch && has_del) { /* it ran: for as long */
			j.duration_ms = ms_of(del - sch);
			if (j.duration_ms < 1)
				j.duration_ms = 1;
		} else if (has_del) { /* never ran: deleted then */
			j.delete_ms = ms_of(del);
			if (j.delete_ms <= j.arrival_ms)
				j.delete_ms = j.arrival_ms + 1;
		} /* else: never ends */
		int cls = qos_class(c, cqos, t, e);
		if (cls < 0)
			return cls;
		j.cls = (uint16_t)cls;
		const char *spec = cspec >= 0 ? gf_csv_get(c, cspec) : "";
		if (*spec && strchr(spec, '|') == NULL) {
			int m = gf_replay_model(t, spec);
			if (m < 0)
				return name_err(c, "gpu_spec", spec, e);
			j.model = (int16_t)m;
		} /* several models: any (replay.h) */
		if ((rc = add_job(c, t, &j, e)))
			return rc;
	}
	return rc;
}

/* ---- Philly (Pollux's philly.csv) ---- */

/* "YYYY-MM-DD HH:MM:SS" as seconds since the epoch; -1 when not one. */
static int64_t parse_stamp(const char *s)
{
	int y, mo, d, h, mi, sec, n = 0;
	if (sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec,
		   &n) != 6 ||
	    s[n] != '\0' || y < 1970 || y > 9999 || mo < 1 || mo > 12 ||
	    d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || h < 0 ||
	    mi < 0 || sec < 0)
		return -1;
	return gf_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
}

/* n GPUs as replicas of at most 8: the fewest equal replicas. */
static void philly_gang(int n, int16_t *gpus, int16_t *replicas)
{
	int r = (n + PHILLY_NODE_GPUS - 1) / PHILLY_NODE_GPUS;
	while (n % r)
		r++;
	*replicas = (int16_t)r;
	*gpus = (int16_t)(n / r);
}

static int load_philly(struct gf_csv *c, const struct gf_replay_load_opts *o,
		       struct gf_replay_trace *t, struct gf_err *e)
{
	int cts, cdur, cn;
	if ((cts = gf_csv_require(c, "timestamp", e)) < 0 ||
	    (cdur = gf_csv_require(c, "duration", e)) < 0 ||
	    (cn = gf_csv_require(c, "num_gpus", e)) < 0)
		return e->code;
	int cvc = gf_csv_column(c, "cluster");
	int cls = gf_replay_class(t, "training");
	int64_t first = INT64_MAX;
	int rc;
	while ((rc = gf_csv_next(c, e)) > 0) {
		if (o->limit > 0 && t->n >= o->limit)
			break;
		const char *ts = gf_csv_get(c, cts);
		if (*ts == '\0' && *gf_csv_get(c, cdur) == '\0' &&
		    *gf_csv_get(c, cn) == '\0') {
			t->skipped++; /* a row of empty fields */
			continue;
		}
		int64_t at = parse_stamp(ts);
		if (at < 0)
			return gf_err_set(e, GF_EPARSE,
					  "%s:%ld: field 'timestamp': expected "
					  "YYYY-MM-DD HH:MM:SS, got '%.40s'",
					  c->path, c->line, ts);
		double dur;
		long long n;
		if ((rc = gf_csv_num(c, cdur, "duration", 0, MAX_TIME_S, false,
				     &dur, NULL, e)) ||
		    (rc = gf_csv_int(c, cn, "num_gpus", 1, 128, &n, e)))
			return rc;
		const char *vc = cvc >= 0 ? gf_csv_get(c, cvc) : "";
		int team = gf_replay_team(t, *vc ? vc : "default");
		if (team < 0)
			return name_err(c, "cluster", vc, e);
		struct gf_replay_job j = { .arrival_ms = at * 1000,
					   .duration_ms = ms_of(dur),
					   .team = (uint16_t)team,
					   .cls = (uint16_t)cls,
					   .model = -1 };
		if (j.duration_ms < 1)
			j.duration_ms = 1;
		philly_gang((int)n, &j.gpus, &j.replicas);
		if (at < first)
			first = at;
		if ((rc = add_job(c, t, &j, e)))
			return rc;
	}
	for (int i = 0; i < t->n; i++) /* from the first arrival */
		t->jobs[i].arrival_ms -= first * 1000;
	return rc;
}

int gf_replay_philly_vcs(const char *path, char (*names)[GF_NODE_NAME_MAX],
			 int *count, int max, struct gf_err *e)
{
	struct gf_csv c;
	int rc = gf_csv_open(&c, path, e);
	if (rc)
		return rc;
	int cvc = gf_csv_require(&c, "vc", e), cn = -1;
	if (cvc < 0 || (cn = gf_csv_require(&c, "node num", e)) < 0) {
		gf_csv_close(&c);
		return e->code;
	}
	int n = 0;
	while ((rc = gf_csv_next(&c, e)) > 0) {
		long long k;
		const char *vc = gf_csv_get(&c, cvc);
		if (*vc == '\0' || strlen(vc) >= GF_NODE_NAME_MAX) {
			rc = gf_err_set(e, GF_EPARSE,
					"%s:%ld: field 'vc': empty or longer "
					"than %d bytes",
					path, c.line, GF_NODE_NAME_MAX - 1);
			break;
		}
		if ((rc = gf_csv_int(&c, cn, "node num", 1, 100000, &k, e)))
			break;
		if (n >= max) {
			rc = gf_err_set(e, GF_ETOOBIG,
					"%s:%ld: more than %d virtual clusters",
					path, c.line, max);
			break;
		}
		gf_note(names[n], GF_NODE_NAME_MAX, "%s", vc);
		count[n++] = (int)k;
	}
	gf_csv_close(&c);
	if (rc == 0 && n == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: no virtual clusters", path);
	return rc < 0 ? rc : n;
}

/* ---- Alibaba 2025 DLRM instances ---- */

static int load_dlrm(struct gf_csv *c, const struct gf_replay_load_opts *o,
		     struct gf_replay_trace *t, struct gf_err *e)
{
	int crole, capp, ccpu, cgpu, cmem, ccr, cdel;
	if ((crole = gf_csv_require(c, "role", e)) < 0 ||
	    (capp = gf_csv_require(c, "app_name", e)) < 0 ||
	    (ccpu = gf_csv_require(c, "cpu_request", e)) < 0 ||
	    (cgpu = gf_csv_require(c, "gpu_request", e)) < 0 ||
	    (cmem = gf_csv_require(c, "memory_request", e)) < 0 ||
	    (ccr = gf_csv_require(c, "creation_time", e)) < 0 ||
	    (cdel = gf_csv_require(c, "deletion_time", e)) < 0)
		return e->code;
	int cls = gf_replay_class(t, "inference");
	int rc;
	while ((rc = gf_csv_next(c, e)) > 0) {
		if (o->limit > 0 && t->n >= o->limit)
			break;
		const char *role = gf_csv_get(c, crole);
		bool hn = strcmp(role, "HN") == 0;
		if (!hn && strcmp(role, "CN") != 0)
			return gf_err_set(e, GF_EPARSE,
					  "%s:%ld: field 'role': expected HN "
					  "or CN, got '%.40s'",
					  c->path, c->line, role);
		if (!hn && !o->cpu_instances) {
			t->skipped++;
			continue;
		}
		double cpu, mem, cr, del;
		long long g;
		bool has_cr, has_del;
		if ((rc = gf_csv_num(c, ccpu, "cpu_request", 0,
				     GF_JOB_CPU_MILLI_MAX / 1000, false, &cpu,
				     NULL, e)) ||
		    (rc = gf_csv_int(c, cgpu, "gpu_request", 0,
				     GF_CNODE_MAX_GPUS, &g, e)) ||
		    (rc = gf_csv_num(c, cmem, "memory_request", 0, 1 << 30,
				     false, &mem, NULL, e)) ||
		    (rc = gf_csv_num(c, ccr, "creation_time", 0, MAX_TIME_S,
				     true, &cr, &has_cr, e)) ||
		    (rc = gf_csv_num(c, cdel, "deletion_time", 0, MAX_TIME_S,
				     true, &del, &has_del, e)))
			return rc;
		if (hn && g == 0)
			return gf_err_set(e, GF_ERANGE,
					  "%s:%ld: field 'gpu_request': 0 for "
					  "a GPU (HN) instance",
					  c->path, c->line);
		const char *app = gf_csv_get(c, capp);
		int team = gf_replay_team(t, *app ? app : "default");
		if (team < 0)
			return name_err(c, "app_name", app, e);
		struct gf_replay_job j = {
			.arrival_ms = has_cr ? ms_of(cr) : 0,
			.cpu_milli = (int32_t)llround(cpu * 1000),
			.memory_mib = (int64_t)llround(mem * 1024),
			.gpus = (int16_t)g,
			.replicas = 1,
			.team = (uint16_t)team,
			.cls = (uint16_t)cls,
			.model = -1,
		};
		if (has_del) {
			j.delete_ms = ms_of(del);
			if (j.delete_ms <= j.arrival_ms)
				j.delete_ms = j.arrival_ms + 1;
		}
		if ((rc = add_job(c, t, &j, e)))
			return rc;
	}
	return rc;
}

int gf_replay_load(const char *path, enum gf_replay_source s,
		   const struct gf_replay_load_opts *o,
		   struct gf_replay_trace *t, struct gf_err *e)
{
	static const struct gf_replay_load_opts none = { 0 };
	struct gf_csv c;
	int rc = gf_csv_open(&c, path, e);
	if (rc)
		return rc;
	t->source = s;
	if (o == NULL)
		o = &none;
	switch (s) {
	case GF_REPLAY_ALIBABA2023:
		rc = load_alibaba2023(&c, o, t, e);
		break;
	case GF_REPLAY_PHILLY:
		rc = load_philly(&c, o, t, e);
		break;
	case GF_REPLAY_DLRM2025:
		rc = load_dlrm(&c, o, t, e);
		break;
	default:
		rc = gf_err_set(e, GF_EINVAL, "unknown trace source %d",
				(int)s);
	}
	gf_csv_close(&c);
	if (rc == 0 && t->n == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: no jobs", path);
	return rc < 0 ? rc : 0;
}
