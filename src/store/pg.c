/*
 * pg.c - the store on PostgreSQL (tested with 15) through libpq: one
 * session, the leader lock a session-level advisory lock.
 *
 * Durability: a batch commits when the server acknowledges it, with
 * synchronous_commit as the server has it (on by default: the WAL is
 * flushed, and with synchronous standbys configured, replicated).
 *
 * A batch is one pipeline (libpq's pipeline mode): the upserts are sent
 * without waiting, in chunks of CHUNK with a flush request after each so
 * neither side's socket buffer fills, and one Sync at the end.  Without
 * BEGIN, the statements before a Sync form one implicit transaction that
 * the Sync commits; an error in any of them rolls back all of them.  So a
 * batch costs about n / CHUNK + 1 round trips instead of n + 2.
 *
 * Invariants: the session is never replaced silently.  Only lead
 * reconnects (PQreset), and a session that was lost while leading is
 * first reported by lead as *leading false (q->lost), so the service sees
 * every loss.  Every write goes through the session that took the lock;
 * a session-level lock ends only with its session, so while a write can
 * commit, the lock is held: a deposed leader's writes fail.  Connection
 * settings put ours first so the URL's own win (connect_timeout 5 s,
 * client and server TCP keepalives so a dead peer is noticed in about
 * ten seconds, UTF8, application_name gpufleet).
 */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/dynlib.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* libpq, opened when a postgres:// store is (util/dynlib.h) */
#define PQ_FUNCS(X)             \
	X(PQclear)              \
	X(PQconnectdbParams)    \
	X(PQenterPipelineMode)  \
	X(PQerrorMessage)       \
	X(PQexec)               \
	X(PQexecParams)         \
	X(PQexitPipelineMode)   \
	X(PQfinish)             \
	X(PQflush)              \
	X(PQgetResult)          \
	X(PQgetisnull)          \
	X(PQgetlength)          \
	X(PQgetvalue)           \
	X(PQnfields)            \
	X(PQntuples)            \
	X(PQpipelineSync)       \
	X(PQprepare)            \
	X(PQreset)              \
	X(PQresultErrorMessage) \
	X(PQresultStatus)       \
	X(PQsendFlushRequest)   \
	X(PQsendQuery)          \
	X(PQsendQueryPrepared)  \
	X(PQserverVersion)      \
	X(PQsetNoticeProcessor) \
	X(PQsetSingleRowMode)   \
	X(PQstatus)
GF_DYNLIB_DEFINE(pq_lib, pq_fns, "libpq.so.5", "libpq5", PQ_FUNCS);
#define PQ(name)	     (GF_DYNLIB_FNS(&pq_lib, pq_fns)->name)
#define PQclear		     PQ(PQclear)
#define PQconnectdbParams    PQ(PQconnectdbParams)
#define PQenterPipelineMode  PQ(PQenterPipelineMode)
#define PQerrorMessage	     PQ(PQerrorMessage)
#define PQexec		     PQ(PQexec)
#define PQexecParams	     PQ(PQexecParams)
#define PQexitPipelineMode   PQ(PQexitPipelineMode)
#define PQfinish	     PQ(PQfinish)
#define PQflush		     PQ(PQflush)
#define PQgetResult	     PQ(PQgetResult)
#define PQgetisnull	     PQ(PQgetisnull)
#define PQgetlength	     PQ(PQgetlength)
#define PQgetvalue	     PQ(PQgetvalue)
#define PQnfields	     PQ(PQnfields)
#define PQntuples	     PQ(PQntuples)
#define PQpipelineSync	     PQ(PQpipelineSync)
#define PQprepare	     PQ(PQprepare)
#define PQreset		     PQ(PQreset)
#define PQresultErrorMessage PQ(PQresultErrorMessage)
#define PQresultStatus	     PQ(PQresultStatus)
#define PQsendFlushRequest   PQ(PQsendFlushRequest)
#define PQsendQuery	     PQ(PQsendQuery)
#define PQsendQueryPrepared  PQ(PQsendQueryPrepared)
#define PQserverVersion	     PQ(PQserverVersion)
#define PQsetNoticeProcessor PQ(PQsetNoticeProcessor)
#define PQsetSingleRowMode   PQ(PQsetSingleRowMode)
#define PQstatus	     PQ(PQstatus)

#define STMT	 "gf_upsert"
#define STMT_RUN "gf_run_insert"
#define CHUNK	 256 /* upserts in flight before reading their results */
/* the keys as SQL literals: the leader's (store.h), and the one
 * migrations serialize on (a transaction lock) */
#define LOCK_KEY_SQL	"29115507808757108"
#define MIGRATE_KEY_SQL "29115507808757109"
_Static_assert(GF_STORE_PG_LOCK_KEY == 29115507808757108LL,
	       "LOCK_KEY_SQL is GF_STORE_PG_LOCK_KEY");
#define STR2(x) #x
#define STR(x)	STR2(x)

struct pgs {
	PGconn *c;
	bool prepared; /* STMT exists in this session */
	bool lost;     /* lead was lost; not yet reported by lead */
};

static struct pgs *PG(struct gf_store *s)
{
	return s->engine;
}

/* libpq's message on one line: newlines and tabs folded, no tail. */
static void one_line(const char *m, char *out, size_t size)
{
	size_t o = 0;
	bool space = false;
	for (; *m && o + 1 < size; m++) {
		if (*m == '\n' || *m == '\t' || *m == ' ') {
			space = o > 0;
			continue;
		}
		if (space && o + 2 < size)
			out[o++] = ' ';
		space = false;
		out[o++] = *m;
	}
	out[o] = '\0';
}

/* The session died under us: stop leading, remember to report it. */
static void check_lost(struct gf_store *s)
{
	struct pgs *q = PG(s);
	if (PQstatus(q->c) != CONNECTION_BAD)
		return;
	q->prepared = false;
	if (s->leading) {
		s->leading = false;
		q->lost = true;
		gf_log(GF_LOG_WARN, "store",
		       "%s: lost the database session: no longer leading",
		       s->url);
	}
}

static int pg_fail(struct gf_store *s, const PGresult *r, const char *what,
		   struct gf_err *e)
{
	char m[GF_ERR_MSG_MAX];
	one_line(r ? PQresultErrorMessage(r) : PQerrorMessage(PG(s)->c), m,
		 sizeof(m));
	if (!*m)
		one_line(PQerrorMessage(PG(s)->c), m, sizeof(m));
	check_lost(s);
	return gf_err_set(e, GF_ECONFLICT, "%s: %s", what,
			  *m ? m : "no answer from the server");
}

static int pg_exec(struct gf_store *s, const char *sql, struct gf_err *e)
{
	PGresult *r = PQexec(PG(s)->c, sql);
	ExecStatusType st = PQresultStatus(r);
	int rc = 0;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		rc = pg_fail(s, r, "SQL", e);
	PQclear(r);
	return rc;
}

/* Whole decimal text into an int64. */
static bool parse_i64(const char *t, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(t, &end, 10);
	if (!*t || *end || errno == ERANGE)
		return false;
	*out = (int64_t)v;
	return true;
}

static int pg_query_i64(struct gf_store *s, const char *sql, int64_t dflt,
			int64_t *out, struct gf_err *e)
{
	PGresult *r = PQexec(PG(s)->c, sql);
	int rc = 0;
	*out = dflt;
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		rc = pg_fail(s, r, sql, e);
	else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) &&
		 !parse_i64(PQgetvalue(r, 0, 0), out))
		rc = gf_err_set(e, GF_EPARSE, "%s: not an integer: '%.32s'",
				sql, PQgetvalue(r, 0, 0));
	PQclear(r);
	return rc;
}

static int pg_begin_migration(struct gf_store *s, struct gf_err *e)
{
	return pg_exec(
		s, "BEGIN; SELECT pg_advisory_xact_lock(" MIGRATE_KEY_SQL ")",
		e);
}

/* Rows one at a time (single-row mode: a large table is never held
 * whole by libpq). */
static int pg_select(struct gf_store *s, const char *sql, int ncols,
		     int (*fn)(const struct gf__cell *cells, void *arg),
		     void *arg, struct gf_err *e)
{
	PGconn *c = PG(s)->c;
	struct gf__cell cells[GF__NCOLS];
	PGresult *r;
	int rc = 0;
	if (ncols > GF__NCOLS)
		return gf_err_set(e, GF_EINVAL, "read: %d columns", ncols);
	if (!PQsendQuery(c, sql))
		return pg_fail(s, NULL, "read", e);
	PQsetSingleRowMode(c);
	while ((r = PQgetResult(c))) {
		ExecStatusType st = PQresultStatus(r);
		if (rc == 0 && st == PGRES_SINGLE_TUPLE) {
			if (PQnfields(r) != ncols) {
				rc = gf_err_set(e, GF_EPARSE,
						"read: %d columns, not %d",
						PQnfields(r), ncols);
			} else {
				for (int k = 0; k < ncols; k++) {
					bool null = PQgetisnull(r, 0, k);
					cells[k].p = null ? NULL
							  : PQgetvalue(r, 0, k);
					cells[k].len =
						(size_t)PQgetlength(r, 0, k);
				}
				rc = fn(cells, arg);
			}
		} else if (rc == 0 && st != PGRES_TUPLES_OK) {
			rc = pg_fail(s, r, "read", e);
		}
		PQclear(r); /* after an error, drain the rest */
	}
	return rc;
}

/* What item i of a batch's pipeline is, for messages: the job, or the
 * run after the jobs. */
static void item_name(const struct gf_store_batch *b, int i, char *out,
		      size_t size)
{
	if (i < b->n)
		gf_note(out, size, "job '%s' (seq %" PRIu64 ")", b->jobs[i]->id,
			b->jobs[i]->seq);
	else
		gf__store_run_name(&b->runs[i - b->n], out, size);
}

/* The results of items [from, to) of a pipeline: the first failure's
 * message in e (rc), the others aborted by it. */
static int read_results(struct gf_store *s, const struct gf_store_batch *b,
			int from, int to, int rc, struct gf_err *e)
{
	PGconn *c = PG(s)->c;
	for (int i = from; i < to; i++) {
		PGresult *r = PQgetResult(c);
		if (!r) /* the connection broke */
			return rc ? rc : pg_fail(s, NULL, "write", e);
		ExecStatusType st = PQresultStatus(r);
		if (st == PGRES_FATAL_ERROR && rc == 0) {
			char what[GF_JOB_ID_MAX + 48];
			item_name(b, i, what, sizeof(what));
			rc = pg_fail(s, r, what, e);
		} else if (st != PGRES_COMMAND_OK && rc == 0) {
			rc = pg_fail(s, r, "write", e);
		}
		PQclear(r);
		while ((r = PQgetResult(c))) /* to this query's end */
			PQclear(r);
		if (PQstatus(c) == CONNECTION_BAD)
			return rc ? rc : pg_fail(s, NULL, "write", e);
	}
	return rc;
}

/* Parameters as libpq's text values (num: n slots of 24 bytes; text is
 * NUL-free, checked UTF-8). */
static void pg_values(int n, const struct gf__param *p, char (*num)[24],
		      const char **vals)
{
	for (int k = 0; k < n; k++) {
		const struct gf__param *v = &p[k];
		if (v->kind == GF__P_INT) {
			gf_note(num[k], sizeof(num[k]), "%" PRId64, v->i);
			vals[k] = num[k];
		} else {
			vals[k] = v->kind == GF__P_TEXT ? v->s : NULL;
		}
	}
}

static int send_params(PGconn *c, const char *stmt, int n,
		       const struct gf__param *v)
{
	char num[GF__NCOLS][24];
	const char *vals[GF__NCOLS];
	pg_values(n, v, num, vals);
	return PQsendQueryPrepared(c, stmt, n, vals, NULL, NULL, 0);
}

/* Send item i of the batch (a job's upsert, then the runs' inserts). */
static int send_item(struct gf_store *s, const struct gf_store_batch *b, int i,
		     struct gf__params *p, struct gf_err *e)
{
	PGconn *c = PG(s)->c;
	int rc, ok;
	if (i < b->n) {
		if ((rc = gf__store_job_params(b->jobs[i], p, e)))
			return rc;
		ok = send_params(c, STMT, GF__NCOLS, p->v);
	} else {
		struct gf__param v[GF__RUN_NCOLS];
		gf__store_run_params(&b->runs[i - b->n], v);
		ok = send_params(c, STMT_RUN, GF__RUN_NCOLS, v);
	}
	return ok ? 0 : pg_fail(s, NULL, "write", e);
}

static int pg_exec_params(struct gf_store *s, const char *sql, int n,
			  const struct gf__param *params, struct gf_err *e)
{
	char num[GF__NCOLS][24];
	const char *vals[GF__NCOLS];
	if (n > GF__NCOLS)
		return gf_err_set(e, GF_EINVAL, "%d parameters", n);
	pg_values(n, params, num, vals);
	PGresult *r = PQexecParams(PG(s)->c, sql, n, NULL, vals, NULL, NULL, 0);
	int rc = 0;
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = pg_fail(s, r, "write", e);
	PQclear(r);
	return rc;
}

/* Send and read the batch's statements, chunk by chunk; the caller
 * syncs. */
static int pipeline_rows(struct gf_store *s, const struct gf_store_batch *b,
			 struct gf_err *e)
{
	PGconn *c = PG(s)->c;
	struct gf__params p;
	int rc = 0, sent = 0, n = b->n + b->nruns;
	gf__store_params_init(&p);
	while (sent < n && rc == 0) {
		int from = sent, to = n - sent > CHUNK ? sent + CHUNK : n;
		for (; sent < to && rc == 0; sent++)
			if ((rc = send_item(s, b, sent, &p, e)))
				break;
		if (rc == 0 && (!PQsendFlushRequest(c) || PQflush(c) != 0))
			rc = pg_fail(s, NULL, "write", e);
		if (rc == 0 || PQstatus(c) != CONNECTION_BAD)
			rc = read_results(s, b, from, sent, rc, e);
	}
	gf__store_params_release(&p);
	return rc;
}

/* Prepare name once per session. */
static int prepare(struct gf_store *s, const char *name, const char *sql, int n,
		   struct gf_err *e)
{
	PGresult *r = PQprepare(PG(s)->c, name, sql, n, NULL);
	int rc = PQresultStatus(r) == PGRES_COMMAND_OK
			 ? 0
			 : pg_fail(s, r, "prepare", e);
	PQclear(r);
	return rc;
}

static int pg_write(struct gf_store *s, const struct gf_store_batch *b,
		    struct gf_err *e)
{
	struct pgs *q = PG(s);
	PGresult *r;
	int rc;
	if (!q->prepared) {
		if ((rc = prepare(s, STMT, gf__store_sql_upsert(), GF__NCOLS,
				  e)) ||
		    (rc = prepare(s, STMT_RUN, gf__store_sql_run_insert(),
				  GF__RUN_NCOLS, e)))
			return rc;
		q->prepared = true;
	}
	if (!PQenterPipelineMode(q->c))
		return pg_fail(s, NULL, "pipeline", e);
	rc = pipeline_rows(s, b, e);
	/* the Sync commits (or, after an error, ends the rollback) */
	if (PQstatus(q->c) != CONNECTION_BAD) {
		if (!PQpipelineSync(q->c)) {
			rc = rc ? rc : pg_fail(s, NULL, "commit", e);
		} else {
			r = PQgetResult(q->c);
			if (PQresultStatus(r) != PGRES_PIPELINE_SYNC && !rc)
				rc = pg_fail(s, r, "commit", e);
			PQclear(r);
		}
	}
	if (PQstatus(q->c) != CONNECTION_BAD && !PQexitPipelineMode(q->c) &&
	    !rc)
		rc = pg_fail(s, NULL, "pipeline", e);
	check_lost(s);
	return rc;
}

static int pg_lead(struct gf_store *s, bool *leading, struct gf_err *e)
{
	struct pgs *q = PG(s);
	PGresult *r;
	*leading = false;
	check_lost(s);
	if (q->lost) { /* report the loss before anything else */
		q->lost = false;
		return 0;
	}
	if (PQstatus(q->c) != CONNECTION_OK) {
		gf_log(GF_LOG_INFO, "store", "%s: reconnecting", s->url);
		PQreset(q->c);
		q->prepared = false;
		if (PQstatus(q->c) != CONNECTION_OK)
			return pg_fail(s, NULL, "cannot reconnect", e);
	}
	if (s->leading) { /* the lock lives as long as the session */
		r = PQexec(q->c, "SELECT 1");
		bool alive = PQresultStatus(r) == PGRES_TUPLES_OK;
		PQclear(r);
		if (alive) {
			*leading = true;
			return 0;
		}
		check_lost(s); /* reported by this call */
		s->leading = q->lost = false;
		return 0;
	}
	r = PQexec(q->c, "SELECT pg_try_advisory_lock(" LOCK_KEY_SQL ")");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		int rc = pg_fail(s, r, "leader lock", e);
		PQclear(r);
		return rc;
	}
	s->leading = *leading = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	return 0;
}

static void pg_close(struct gf_store *s)
{
	struct pgs *q = PG(s);
	if (!q)
		return;
	PQfinish(q->c); /* the session ends: the server frees the lock */
	gf_free(s->engine);
}

static const struct gf__store_ops pg_ops = {
	.exec = pg_exec,
	.query_i64 = pg_query_i64,
	.begin_migration = pg_begin_migration,
	.select = pg_select,
	.exec_params = pg_exec_params,
	.write = pg_write,
	.lead = pg_lead,
	.close = pg_close,
};

static void notice(void *arg, const char *msg)
{
	char m[GF_ERR_MSG_MAX];
	(void)arg;
	one_line(msg, m, sizeof(m));
	gf_log(GF_LOG_DEBUG, "store", "postgres: %s", m);
}

int gf__store_pg_open(struct gf_store *s, const char *conninfo,
		      struct gf_err *e)
{
	/* ours first: with expand_dbname, the URL's settings override */
	static const char *const keys[] = { "connect_timeout",
					    "application_name",
					    "client_encoding",
					    "keepalives",
					    "keepalives_idle",
					    "keepalives_interval",
					    "keepalives_count",
					    "tcp_user_timeout",
					    "options",
					    "dbname",
					    NULL };
	const char *vals[] = {
		STR(GF_STORE_PG_CONNECT_TIMEOUT_S),
		"gpufleet",
		"UTF8",
		"1",
		"5",
		"2",
		"3",
		"10000",
		"-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 "
		"-c tcp_keepalives_count=3",
		conninfo,
		NULL
	};
	int rc = gf_dynlib_open(&pq_lib, e);
	if (rc)
		return rc;
	struct pgs *q = gf_calloc(1, sizeof(*q));
	s->engine = q;
	s->ops = &pg_ops;
	q->c = PQconnectdbParams(keys, vals, 1);
	if (!q->c) {
		gf_free(s->engine);
		s->ops = NULL;
		return gf_err_set(e, GF_ECONFLICT, "cannot connect: no memory");
	}
	PQsetNoticeProcessor(q->c, notice, NULL);
	if (PQstatus(q->c) != CONNECTION_OK)
		rc = pg_fail(s, NULL, "cannot connect", e);
	else if (PQserverVersion(q->c) < 90500)
		rc = gf_err_set(e, GF_ENOTSUP,
				"PostgreSQL %d is too old (9.5 or newer, "
				"15 tested)",
				PQserverVersion(q->c));
	if (rc) {
		pg_close(s);
		s->ops = NULL;
	}
	return rc;
}
