/*
 * runs.c - the runs table: one row per (job, attempt, replica) whose run
 * ended, as its node reported it, with the GPUs the controller placed it
 * on (a mask of indexes, their UUIDs, the MIG instance's UUID and start
 * slice: schema 6).  The
 * rules a run obeys on the way in and out, its row values, and the load.
 *
 * Invariants: every run written passed gf__store_run_check, and so does
 * every run read back (a row that does not is named, and a load hands
 * over nothing); (seq, attempt, replica) is the key, and a second insert
 * of a key changes nothing (ON CONFLICT DO NOTHING): what a node said
 * first stands.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

void gf__store_run_name(const struct gf_job_run *r, char *out, size_t size)
{
	gf_note(out, size, "run j%" PRIu64 "/%d/%d", r->seq, r->attempt,
		r->replica);
}

/* Terminated inside its array, UTF-8. */
static bool text_ok(const char *s, size_t size)
{
	size_t len = strnlen(s, size);
	return len < size && gf__store_utf8_ok(s, len);
}

/* The GPUs as a mask, bit i for index i; and back. */
static int64_t gpu_mask(const struct gf_job_run *r)
{
	int64_t m = 0;
	for (int g = 0; g < r->ngpus; g++)
		m |= INT64_C(1) << r->gpus[g];
	return m;
}

static bool gpus_of(int64_t m, struct gf_job_run *r)
{
	if (m < 0 || m >= INT64_C(1) << GF_CNODE_MAX_GPUS)
		return false;
	r->ngpus = 0;
	for (int g = 0; g < GF_CNODE_MAX_GPUS; g++)
		if (m & (INT64_C(1) << g))
			r->gpus[r->ngpus++] = g;
	return true;
}

int gf__store_run_check(const struct gf_job_run *r, struct gf_err *e)
{
	char w[80];
	gf__store_run_name(r, w, sizeof(w));
	if (r->seq == 0 || r->seq > (uint64_t)INT64_MAX)
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'seq': expected 1 to %" PRId64, w,
				  INT64_MAX);
	if (r->attempt < 1)
		return gf_err_set(e, GF_EINVAL, "%s: 'attempt': expected >= 1",
				  w);
	if (r->replica < 0 || r->replica >= GF_JOB_MAX_REPLICAS)
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'replica': expected 0 to %d", w,
				  GF_JOB_MAX_REPLICAS - 1);
	size_t nlen = strnlen(r->node, sizeof(r->node));
	if (nlen == 0 || nlen == sizeof(r->node) ||
	    !gf__store_utf8_ok(r->node, nlen))
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'node': expected a UTF-8 name of 1 to "
				  "%zu bytes",
				  w, sizeof(r->node) - 1);
	if (r->started_ms <= 0 || r->ended_ms < r->started_ms)
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'ended_ms': expected 0 < started_ms "
				  "(%" PRId64 ") <= ended_ms (%" PRId64 ")",
				  w, r->started_ms, r->ended_ms);
	if (r->gpu_ms < 0)
		return gf_err_set(e, GF_EINVAL, "%s: 'gpu_ms': negative", w);
	if (r->ngpus < 0 || r->ngpus > GF_CNODE_MAX_GPUS)
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'gpus': expected 0 to %d of them", w,
				  GF_CNODE_MAX_GPUS);
	for (int g = 0; g < r->ngpus; g++)
		if (r->gpus[g] < 0 || r->gpus[g] >= GF_CNODE_MAX_GPUS ||
		    (g > 0 && r->gpus[g] <= r->gpus[g - 1]))
			return gf_err_set(e, GF_EINVAL,
					  "%s: 'gpus': expected indexes 0 to "
					  "%d, ascending",
					  w, GF_CNODE_MAX_GPUS - 1);
	if (r->mig_start < -1 || r->mig_start >= 64)
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'mig_start': expected -1 (none) to 63",
				  w);
	if (!text_ok(r->gpu_uuids, sizeof(r->gpu_uuids)))
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'gpu_uuids': expected UTF-8 text of "
				  "at most %zu bytes",
				  w, sizeof(r->gpu_uuids) - 1);
	if (!text_ok(r->mig_uuid, sizeof(r->mig_uuid)))
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'mig_uuid': expected UTF-8 text of "
				  "at most %zu bytes",
				  w, sizeof(r->mig_uuid) - 1);
	size_t rlen = strnlen(r->reason, sizeof(r->reason));
	if (rlen == sizeof(r->reason) || !gf__store_utf8_ok(r->reason, rlen))
		return gf_err_set(e, GF_EINVAL,
				  "%s: 'reason': expected UTF-8 text of at "
				  "most %zu bytes",
				  w, sizeof(r->reason) - 1);
	return 0;
}

void gf__store_run_params(const struct gf_job_run *r, struct gf__param *v)
{
#define I(col, x) \
	v[GF__RUN_##col] = (struct gf__param){ .kind = GF__P_INT, .i = (x) }
#define T(col, x)                                              \
	v[GF__RUN_##col] = (struct gf__param)                  \
	{                                                      \
		.kind = GF__P_TEXT, .s = (x), .len = strlen(x) \
	}
	I(SEQ, (int64_t)r->seq);
	I(ATTEMPT, r->attempt);
	I(REPLICA, r->replica);
	T(NODE, r->node);
	I(STARTED_MS, r->started_ms);
	I(ENDED_MS, r->ended_ms);
	I(EXIT_CODE, r->exit_code);
	I(GPU_MS, r->gpu_ms);
	T(REASON, r->reason);
	I(GPU_MASK, gpu_mask(r));
	T(GPU_UUIDS, r->gpu_uuids);
	T(MIG_UUID, r->mig_uuid);
	I(MIG_START, r->mig_start);
#undef I
#undef T
}

/* A whole decimal cell in [lo, hi]. */
static bool cell_int(const struct gf__cell *c, int64_t lo, int64_t hi,
		     int64_t *out)
{
	int64_t v;
	if (!gf__store_cell_i64(c, &v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool cell_text(const struct gf__cell *c, char *out, size_t size)
{
	if (!c->p || c->len >= size || memchr(c->p, '\0', c->len))
		return false;
	memcpy(out, c->p, c->len);
	out[c->len] = '\0';
	return true;
}

int gf__store_row_run(const struct gf__cell *c, struct gf_job_run *r,
		      struct gf_err *e)
{
	int64_t v[GF__RUN_NCOLS];
	static const char *const names[GF__RUN_NCOLS] = {
#define GF__RUN_COL_NAME(name, text) text,
		GF__RUN_COLUMNS(GF__RUN_COL_NAME)
#undef GF__RUN_COL_NAME
	};
	memset(r, 0, sizeof(*r));
	for (int k = 0; k < GF__RUN_NCOLS; k++) {
		bool ok =
			k == GF__RUN_NODE
				? cell_text(&c[k], r->node, sizeof(r->node))
			: k == GF__RUN_REASON
				? cell_text(&c[k], r->reason, sizeof(r->reason))
			: k == GF__RUN_GPU_UUIDS
				? cell_text(&c[k], r->gpu_uuids,
					    sizeof(r->gpu_uuids))
			: k == GF__RUN_MIG_UUID
				? cell_text(&c[k], r->mig_uuid,
					    sizeof(r->mig_uuid))
				: cell_int(&c[k], INT64_MIN, INT64_MAX, &v[k]);
		if (!ok)
			return gf_err_set(
				e, GF_EPARSE,
				"runs: a row with a bad '%s' (seq "
				"%.*s)",
				names[k],
				c[0].p ? (int)(c[0].len < 20 ? c[0].len : 20)
				       : 4,
				c[0].p ? c[0].p : "NULL");
	}
	if (v[GF__RUN_SEQ] < 1 || v[GF__RUN_ATTEMPT] < INT32_MIN ||
	    v[GF__RUN_ATTEMPT] > INT32_MAX || v[GF__RUN_REPLICA] < INT32_MIN ||
	    v[GF__RUN_REPLICA] > INT32_MAX ||
	    v[GF__RUN_EXIT_CODE] < INT32_MIN ||
	    v[GF__RUN_EXIT_CODE] > INT32_MAX ||
	    v[GF__RUN_MIG_START] < INT32_MIN ||
	    v[GF__RUN_MIG_START] > INT32_MAX)
		return gf_err_set(e, GF_EPARSE,
				  "runs: seq %" PRId64 ": a value out of range",
				  v[GF__RUN_SEQ]);
	if (!gpus_of(v[GF__RUN_GPU_MASK], r))
		return gf_err_set(e, GF_EPARSE,
				  "runs: seq %" PRId64 ": 'gpu_mask': expected "
				  "a mask of GPU indexes 0 to %d",
				  v[GF__RUN_SEQ], GF_CNODE_MAX_GPUS - 1);
	r->seq = (uint64_t)v[GF__RUN_SEQ];
	r->attempt = (int)v[GF__RUN_ATTEMPT];
	r->replica = (int)v[GF__RUN_REPLICA];
	r->started_ms = v[GF__RUN_STARTED_MS];
	r->ended_ms = v[GF__RUN_ENDED_MS];
	r->exit_code = (int)v[GF__RUN_EXIT_CODE];
	r->gpu_ms = v[GF__RUN_GPU_MS];
	r->mig_start = (int)v[GF__RUN_MIG_START];
	int rc = gf__store_run_check(r, e);
	if (rc && e) {
		char tmp[GF_ERR_MSG_MAX];
		gf_note(tmp, sizeof(tmp), "%s", e->msg);
		gf_err_set(e, GF_EPARSE, "runs: %s", tmp);
	}
	return rc ? GF_EPARSE : 0;
}

struct run_rows {
	struct gf_job_run *v;
	size_t n, cap;
	struct gf_err *e;
};

static int take_run(const struct gf__cell *cells, void *arg)
{
	struct run_rows *l = arg;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = gf_reallocarray(l->v, l->cap, sizeof(*l->v));
	}
	int rc = gf__store_row_run(cells, &l->v[l->n], l->e);
	if (rc == 0)
		l->n++;
	return rc;
}

int gf_store_load_runs(struct gf_store *s,
		       int (*fn)(const struct gf_job_run *r, void *arg),
		       void *arg, struct gf_err *e)
{
	struct run_rows l = { .e = e };
	int rc = s->ops->select(s, gf__store_sql_run_select(), GF__RUN_NCOLS,
				take_run, &l, e);
	if (rc)
		gf__store_err_prefix(s, e);
	for (size_t i = 0; rc == 0 && i < l.n; i++)
		rc = fn(&l.v[i], arg);
	gf_free(l.v);
	return rc;
}
