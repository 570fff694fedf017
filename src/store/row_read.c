/*
 * row_read.c - a row of the jobs table back into a struct gf_job.
 *
 * Invariants: the row's cells are untrusted (another program, a disk, a
 * hand may have written them).  Each column is parsed strictly into a job
 * of our own: integers as whole decimal text within the field's type,
 * text without NUL, valid UTF-8 and shorter than its field, a state the
 * schema knows, the placement JSON as row.c writes it (exactly its four
 * keys, one object per replica), the held replicas likewise.  The whole job
 * then passes gf__store_job_check.  Any failure frees the job and reports
 * GF_EPARSE naming the job (or the row's seq, before the id is known) and
 * column.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/req.h>

#include "store/store_impl.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

struct rd {
	const struct gf__cell *c;
	struct gf_job *j;
	char who[GF_JOB_ID_MAX + 48];
	struct gf_err *e;
	int pcol; /* the JSON column being read: placement or held */
};

static int bad(struct rd *r, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct rd *r, int col, const char *fmt, ...)
{
	char tmp[GF_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	return gf_err_set(r->e, GF_EPARSE, "%s: column '%s': %s", r->who,
			  gf__store_col_names[col], tmp);
}

static int rd_i64(struct rd *r, int col, int64_t lo, int64_t hi, int64_t *out)
{
	const struct gf__cell *c = &r->c[col];
	char tmp[24];
	if (!c->p)
		return bad(r, col, "NULL where an integer belongs");
	if (c->len == 0 || c->len >= sizeof(tmp))
		return bad(r, col, "not an integer");
	memcpy(tmp, c->p, c->len);
	tmp[c->len] = '\0';
	const char *d = tmp[0] == '-' ? tmp + 1 : tmp;
	if (!*d || strspn(d, "0123456789") != strlen(d))
		return bad(r, col, "not an integer: '%s'", tmp);
	errno = 0;
	char *end;
	long long v = strtoll(tmp, &end, 10);
	if (errno == ERANGE || v < lo || v > hi)
		return bad(r, col, "%s out of range %" PRId64 " to %" PRId64,
			   tmp, lo, hi);
	*out = (int64_t)v;
	return 0;
}

static int rd_int(struct rd *r, int col, int *out)
{
	int64_t v;
	int rc = rd_i64(r, col, INT_MIN, INT_MAX, &v);
	if (rc == 0)
		*out = (int)v;
	return rc;
}

/* Text into dst of size bytes. */
static int rd_text(struct rd *r, int col, char *dst, size_t size)
{
	const struct gf__cell *c = &r->c[col];
	if (!c->p)
		return bad(r, col, "NULL where text belongs");
	if (c->len >= size)
		return bad(r, col, "%zu bytes, the most is %zu", c->len,
			   size - 1);
	if (!gf__store_utf8_ok(c->p, c->len))
		return bad(r, col, "not valid UTF-8 text");
	memcpy(dst, c->p, c->len);
	dst[c->len] = '\0';
	return 0;
}

static int rd_command(struct rd *r)
{
	const struct gf__cell *c = &r->c[GF__COL_COMMAND];
	if (!c->p)
		return 0; /* no command */
	if (c->len >= GF_JOB_CMD_MAX)
		return bad(r, GF__COL_COMMAND, "%zu bytes, the most is %d",
			   c->len, GF_JOB_CMD_MAX - 1);
	if (!gf__store_utf8_ok(c->p, c->len))
		return bad(r, GF__COL_COMMAND, "not valid UTF-8 text");
	r->j->spec.command = gf_strndup(c->p, c->len);
	return 0;
}

/* --output / --error: NULL, or a path the core's check takes */
static int rd_path(struct rd *r, enum gf__store_col col, char **dst)
{
	const struct gf__cell *c = &r->c[col];
	if (!c->p)
		return 0;
	if (c->len >= GF_JOB_PATH_MAX)
		return bad(r, col, "%zu bytes, the most is %d", c->len,
			   GF_JOB_PATH_MAX - 1);
	if (!gf__store_utf8_ok(c->p, c->len))
		return bad(r, col, "not valid UTF-8 text");
	*dst = gf_strndup(c->p, c->len);
	return 0;
}

/* The job's variables (JSON text), NULL none; as the API kept them. */
static int rd_env(struct rd *r)
{
	const struct gf__cell *c = &r->c[GF__COL_ENV];
	if (!c->p)
		return 0;
	if (c->len >= 8 * GF_JOB_ENV_BYTES)
		return bad(r, GF__COL_ENV, "%zu bytes, the most is %d", c->len,
			   8 * GF_JOB_ENV_BYTES - 1);
	if (!gf__store_utf8_ok(c->p, c->len))
		return bad(r, GF__COL_ENV, "not valid UTF-8 text");
	r->j->spec.env = gf_strndup(c->p, c->len);
	return 0;
}

static int rd_origin(struct rd *r)
{
	char name[8];
	int rc = rd_text(r, GF__COL_ORIGIN, name, sizeof(name));
	if (rc == 0 && gf__store_origin_parse(name, &r->j->spec.origin) != 0)
		rc = bad(r, GF__COL_ORIGIN, "unknown origin '%s'", name);
	return rc;
}

static int rd_state(struct rd *r)
{
	const struct gf__cell *c = &r->c[GF__COL_STATE];
	char name[16];
	if (!c->p)
		return bad(r, GF__COL_STATE, "NULL where a state belongs");
	if (c->len < sizeof(name) && !memchr(c->p, '\0', c->len)) {
		memcpy(name, c->p, c->len);
		name[c->len] = '\0';
		if (gf_job_state_parse(name, &r->j->state) == 0)
			return 0;
	}
	return bad(r, GF__COL_STATE, "unknown state '%.*s'",
		   c->len > 32 ? 32 : (int)c->len, c->p);
}

static int json_int(struct rd *r, const struct gf_jv *v, const char *what,
		    int i, int *out)
{
	int64_t x;
	if (!gf_jv_int(v, &x) || x < INT_MIN || x > INT_MAX)
		return bad(r, r->pcol, "replica %d: '%s': expected an integer",
			   i, what);
	*out = (int)x;
	return 0;
}

static int rd_one_place(struct rd *r, const struct gf_jv *o, int i,
			struct gf_job_place *p)
{
	void *it = NULL;
	const struct gf_jv *v;
	const char *k;
	int found = 0, rc;
	if (gf_jv_type(o) != GF_JV_OBJ)
		return bad(r, r->pcol, "replica %d: not an object", i);
	p->node = -1;
	while ((k = gf_jv_next(o, &it, &v))) {
		found++;
		if (strcmp(k, "node") == 0) {
			const char *s = gf_jv_str(v);
			size_t len = s ? strlen(s) : 0;
			if (!s || len >= sizeof(p->node_name))
				return bad(r, r->pcol,
					   "replica %d: 'node': expected a "
					   "name under %zu bytes",
					   i, sizeof(p->node_name));
			memcpy(p->node_name, s, len + 1);
		} else if (strcmp(k, "gpus") == 0) {
			size_t n = gf_jv_len(v);
			if (gf_jv_type(v) != GF_JV_ARR || n > GF_CNODE_MAX_GPUS)
				return bad(r, r->pcol,
					   "replica %d: 'gpus': expected up to "
					   "%d GPU indexes",
					   i, GF_CNODE_MAX_GPUS);
			p->ngpus = (int)n;
			for (size_t g = 0; g < n; g++)
				if ((rc = json_int(r, gf_jv_at(v, g), "gpus", i,
						   &p->gpus[g])))
					return rc;
		} else if (strcmp(k, "gpu_milli") == 0) {
			if ((rc = json_int(r, v, k, i, &p->gpu_milli)))
				return rc;
		} else if (strcmp(k, "mig_start") == 0) {
			if ((rc = json_int(r, v, k, i, &p->mig_start)))
				return rc;
		} else {
			return bad(r, r->pcol,
				   "replica %d: unknown key '%.32s'", i, k);
		}
	}
	if (found != 4)
		return bad(r, r->pcol,
			   "replica %d: expected the keys node, gpus, "
			   "gpu_milli and mig_start",
			   i);
	return 0;
}

static int rd_place(struct rd *r)
{
	const struct gf__cell *c = &r->c[GF__COL_PLACEMENT];
	struct gf_jv *root = NULL;
	struct gf_err je;
	int rc;
	r->pcol = GF__COL_PLACEMENT;
	if (!c->p)
		return 0; /* none; the check says whether one was due */
	if (c->len > GF_STORE_PLACEMENT_MAX)
		return bad(r, GF__COL_PLACEMENT, "over %d bytes",
			   GF_STORE_PLACEMENT_MAX);
	gf_err_clear(&je);
	if (gf_jv_parse(c->p, c->len, &root, &je) != 0)
		return bad(r, GF__COL_PLACEMENT, "not JSON: %s", je.msg);
	size_t n = gf_jv_len(root);
	if (gf_jv_type(root) != GF_JV_ARR || n != (size_t)r->j->spec.replicas) {
		rc = bad(r, GF__COL_PLACEMENT,
			 "expected an array of %d replicas",
			 r->j->spec.replicas);
		goto out;
	}
	r->j->place = gf_calloc(n, sizeof(*r->j->place));
	for (size_t i = 0; i < n; i++)
		if ((rc = rd_one_place(r, gf_jv_at(root, i), (int)i,
				       &r->j->place[i])))
			goto out;
	rc = 0;
out:
	gf_jv_free(root);
	return rc;
}

/* One held replica: {"attempt", "replica", "since", "why", "place"}. */
static int rd_one_held(struct rd *r, const struct gf_jv *o, int i,
		       struct gf_job_held *h)
{
	const struct gf_jv *a = gf_jv_get(o, "attempt"),
			   *rep = gf_jv_get(o, "replica"),
			   *since = gf_jv_get(o, "since"),
			   *why = gf_jv_get(o, "why"),
			   *pl = gf_jv_get(o, "place");
	int64_t x;
	int rc;
	if (gf_jv_type(o) != GF_JV_OBJ || !a || !rep || !since || !why || !pl ||
	    gf_jv_len(o) != 5)
		return bad(r, GF__COL_HELD,
			   "entry %d: expected the keys attempt, replica, "
			   "since, why and place",
			   i);
	if ((rc = json_int(r, a, "attempt", i, &h->attempt)) ||
	    (rc = json_int(r, rep, "replica", i, &h->replica)))
		return rc;
	if (!gf_jv_int(since, &x) || x < 0)
		return bad(r, GF__COL_HELD, "entry %d: 'since': expected ms",
			   i);
	h->since_ms = x;
	const char *w = gf_jv_str(why);
	if (!w || strlen(w) >= sizeof(h->why))
		return bad(r, GF__COL_HELD,
			   "entry %d: 'why': expected text under %zu bytes", i,
			   sizeof(h->why));
	gf_note(h->why, sizeof(h->why), "%s", w);
	return rd_one_place(r, pl, i, &h->place);
}

/* The held column: NULL, or an array of held replicas. */
static int rd_held(struct rd *r)
{
	const struct gf__cell *c = &r->c[GF__COL_HELD];
	struct gf_jv *root = NULL;
	struct gf_err je;
	int rc;
	r->pcol = GF__COL_HELD;
	if (!c->p)
		return 0;
	if (c->len > GF_STORE_PLACEMENT_MAX)
		return bad(r, GF__COL_HELD, "over %d bytes",
			   GF_STORE_PLACEMENT_MAX);
	gf_err_clear(&je);
	if (gf_jv_parse(c->p, c->len, &root, &je) != 0)
		return bad(r, GF__COL_HELD, "not JSON: %s", je.msg);
	size_t n = gf_jv_len(root);
	if (gf_jv_type(root) != GF_JV_ARR || n == 0 || n > GF_JOB_HELD_MAX) {
		rc = bad(r, GF__COL_HELD, "expected an array of 1 to %d",
			 GF_JOB_HELD_MAX);
		goto out;
	}
	r->j->held = gf_calloc(n, sizeof(*r->j->held));
	r->j->nheld = (int)n;
	for (size_t i = 0; i < n; i++)
		if ((rc = rd_one_held(r, gf_jv_at(root, i), (int)i,
				      &r->j->held[i])))
			goto out;
	rc = 0;
out:
	gf_jv_free(root);
	return rc;
}

static int rd_ids(struct rd *r)
{
	struct gf_job *j = r->j;
	int64_t seq;
	int rc;
	gf_note(r->who, sizeof(r->who), "a row");
	if ((rc = rd_i64(r, GF__COL_SEQ, 1, INT64_MAX, &seq)))
		return rc;
	j->seq = (uint64_t)seq;
	gf_note(r->who, sizeof(r->who), "the row of seq %" PRId64, seq);
	if ((rc = rd_text(r, GF__COL_ID, j->id, sizeof(j->id))))
		return rc;
	gf_note(r->who, sizeof(r->who), "job '%s' (seq %" PRId64 ")", j->id,
		seq);
	return 0;
}

static int rd_spec(struct rd *r)
{
	struct gf_job_spec *s = &r->j->spec;
	int rc;
	if ((rc = rd_text(r, GF__COL_NAME, s->name, sizeof(s->name))) ||
	    (rc = rd_text(r, GF__COL_TEAM, s->team, sizeof(s->team))) ||
	    (rc = rd_text(r, GF__COL_CLASS, s->class_name,
			  sizeof(s->class_name))) ||
	    (rc = rd_int(r, GF__COL_REPLICAS, &s->replicas)) ||
	    (rc = rd_int(r, GF__COL_GPUS, &s->gpus)) ||
	    (rc = rd_text(r, GF__COL_GPU_MODEL, s->gpu_model,
			  sizeof(s->gpu_model))) ||
	    (rc = rd_int(r, GF__COL_GPU_MILLI, &s->gpu_milli)) ||
	    (rc = rd_text(r, GF__COL_MIG_PROFILE, s->mig_profile,
			  sizeof(s->mig_profile))) ||
	    (rc = rd_int(r, GF__COL_CPU_MILLI, &s->cpu_milli)) ||
	    (rc = rd_i64(r, GF__COL_MEMORY_MIB, INT64_MIN, INT64_MAX,
			 &s->memory_mib)) ||
	    (rc = rd_text(r, GF__COL_NODE_SELECTOR, s->node_selector,
			  sizeof(s->node_selector))) ||
	    (rc = rd_i64(r, GF__COL_MAX_RUNTIME_S, INT64_MIN, INT64_MAX,
			 &s->max_runtime_s)) ||
	    (rc = rd_text(r, GF__COL_SERVICE, s->service,
			  sizeof(s->service))) ||
	    (rc = rd_command(r)) || (rc = rd_origin(r)) ||
	    (rc = rd_text(r, GF__COL_ARRAY_JOB_ID, s->array_id,
			  sizeof(s->array_id))) ||
	    (rc = rd_int(r, GF__COL_ARRAY_TASK_ID, &s->array_task)) ||
	    (rc = rd_int(r, GF__COL_ARRAY_MAX, &s->array_max)) ||
	    (rc = rd_text(r, GF__COL_DEPENDENCY, s->dependency,
			  sizeof(s->dependency))) ||
	    (rc = rd_path(r, GF__COL_OUTPUT, &s->output)) ||
	    (rc = rd_path(r, GF__COL_ERROR, &s->error)) || (rc = rd_env(r)) ||
	    (rc = rd_text(r, GF__COL_WORKDIR, s->workdir,
			  sizeof(s->workdir))) ||
	    (rc = rd_text(r, GF__COL_RUN_AS, s->user, sizeof(s->user))))
		return rc;
	if (s->replicas < 1 || s->replicas > GF_JOB_MAX_REPLICAS)
		return bad(r, GF__COL_REPLICAS, "expected 1 to %d, got %d",
			   GF_JOB_MAX_REPLICAS, s->replicas);
	return 0;
}

static int rd_status(struct rd *r)
{
	struct gf_job *j = r->j;
	int rc;
	if ((rc = rd_state(r)) ||
	    (rc = rd_text(r, GF__COL_REASON, j->reason, sizeof(j->reason))) ||
	    (rc = rd_i64(r, GF__COL_SUBMITTED_MS, INT64_MIN, INT64_MAX,
			 &j->submitted_ms)) ||
	    (rc = rd_i64(r, GF__COL_STARTED_MS, INT64_MIN, INT64_MAX,
			 &j->started_ms)) ||
	    (rc = rd_i64(r, GF__COL_ENDED_MS, INT64_MIN, INT64_MAX,
			 &j->ended_ms)) ||
	    (rc = rd_int(r, GF__COL_ATTEMPTS, &j->attempts)) ||
	    (rc = rd_int(r, GF__COL_PREEMPTIONS, &j->preemptions)) ||
	    (rc = rd_int(r, GF__COL_FAILURES, &j->failures)) ||
	    (rc = rd_int(r, GF__COL_REQUEUES, &j->requeues)) ||
	    (rc = rd_int(r, GF__COL_EXIT_CODE, &j->exit_code)) ||
	    (rc = rd_int(r, GF__COL_BLOCK, &j->block)) ||
	    (rc = rd_i64(r, GF__COL_GPU_MS, INT64_MIN, INT64_MAX, &j->gpu_ms)))
		return rc;
	int hold;
	if ((rc = rd_int(r, GF__COL_USER_HOLD, &hold)))
		return rc;
	j->user_hold = hold != 0;
	return 0;
}

static void free_job(struct gf_job *j)
{
	gf_job_release(j);
	gf__free(j);
}

int gf__store_row_job(const struct gf__cell *cells, struct gf_job **out,
		      struct gf_err *e)
{
	struct rd r = { .c = cells, .e = e };
	int rc;
	*out = NULL;
	r.j = gf_calloc(1, sizeof(*r.j));
	if ((rc = rd_ids(&r)) || (rc = rd_spec(&r)) || (rc = rd_status(&r)) ||
	    (rc = rd_place(&r)) || (rc = rd_held(&r)))
		goto fail;
	if ((rc = gf__store_job_check(r.j, e))) {
		/* a stored value out of the rules: the row is corrupt */
		rc = GF_EPARSE;
		if (e)
			e->code = rc;
		goto fail;
	}
	*out = r.j;
	return 0;
fail:
	free_job(r.j);
	return rc;
}
