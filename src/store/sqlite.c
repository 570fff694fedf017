/*
 * sqlite.c - the store on SQLite (Debian's libsqlite3): one database file
 * in a state directory, WAL mode, synchronous=FULL.
 *
 * Durability: in WAL mode a commit appends to the WAL; synchronous=FULL
 * fsyncs the WAL at every commit, so a job whose write returned survives
 * a power cut.  NORMAL would fsync only at checkpoints: safe against a
 * crash of the process (kill -9) but not of the machine, where the last
 * commits could roll back after a 201 was sent.  Group commit (many jobs
 * per gf_store_write) is what pays for the fsync.
 *
 * Invariants: one connection (SQLITE_OPEN_NOMUTEX: one thread at a time,
 * as store.h says); journal_mode is checked to be WAL and synchronous to
 * be FULL after open, else the open fails; every write is BEGIN
 * IMMEDIATE ... COMMIT, rolled back on any failure, so a batch is all or
 * nothing; the leader lock is an flock on PATH.lock taken once and held
 * until close (it holds our pid, for whoever looks).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_impl.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define BUSY_TIMEOUT_MS 5000

struct sq {
	sqlite3 *db;
	sqlite3_stmt *upsert;	  /* prepared at the first write */
	sqlite3_stmt *run_insert; /* likewise */
	int lock_fd;
	char lock_path[PATH_MAX];
};

static struct sq *SQ(struct gf_store *s)
{
	return s->engine;
}

/* "MESSAGE (errno text)" when SQLite saw a system error. */
static int sq_err(sqlite3 *db, int code, const char *what, struct gf_err *e)
{
	int en = db ? sqlite3_system_errno(db) : 0;
	const char *msg = db ? sqlite3_errmsg(db) : "out of memory";
	if (en)
		return gf_err_set(e, code, "%s: %s (%s)", what, msg,
				  gf_strerror(-en));
	return gf_err_set(e, code, "%s: %s", what, msg);
}

static int sq_exec(struct gf_store *s, const char *sql, struct gf_err *e)
{
	if (sqlite3_exec(SQ(s)->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sq_err(SQ(s)->db, GF_ECONFLICT, "SQL", e);
	return 0;
}

/* The first column of the first row as text into out. */
static int sq_query_text(struct gf_store *s, const char *sql, char *out,
			 size_t size, struct gf_err *e)
{
	sqlite3_stmt *st;
	out[0] = '\0';
	if (sqlite3_prepare_v2(SQ(s)->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sq_err(SQ(s)->db, GF_ECONFLICT, sql, e);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		gf_note(out, size, "%s", t ? (const char *)t : "");
	} else if (rc != SQLITE_DONE) {
		sq_err(SQ(s)->db, GF_ECONFLICT, sql, e);
		sqlite3_finalize(st);
		return GF_ECONFLICT;
	}
	sqlite3_finalize(st);
	return 0;
}

static int sq_query_i64(struct gf_store *s, const char *sql, int64_t dflt,
			int64_t *out, struct gf_err *e)
{
	sqlite3_stmt *st;
	int rc = 0;
	*out = dflt;
	if (sqlite3_prepare_v2(SQ(s)->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sq_err(SQ(s)->db, GF_ECONFLICT, sql, e);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		int t = sqlite3_column_type(st, 0);
		if (t == SQLITE_INTEGER)
			*out = sqlite3_column_int64(st, 0);
		else if (t != SQLITE_NULL)
			rc = gf_err_set(e, GF_EPARSE, "%s: not an integer",
					sql);
	} else if (step != SQLITE_DONE) {
		rc = sq_err(SQ(s)->db, GF_ECONFLICT, sql, e);
	}
	sqlite3_finalize(st);
	return rc;
}

static int sq_begin_migration(struct gf_store *s, struct gf_err *e)
{
	/* takes the write lock now: another process's migration waits
	 * (busy timeout) and then sees this one's version */
	return sq_exec(s, "BEGIN IMMEDIATE", e);
}

static int sq_select(struct gf_store *s, const char *sql, int ncols,
		     int (*fn)(const struct gf__cell *cells, void *arg),
		     void *arg, struct gf_err *e)
{
	sqlite3 *db = SQ(s)->db;
	sqlite3_stmt *st;
	struct gf__cell cells[GF__NCOLS];
	int rc = 0, step;
	if (ncols > GF__NCOLS)
		return gf_err_set(e, GF_EINVAL, "read: %d columns", ncols);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return sq_err(db, GF_ECONFLICT, "read", e);
	if (sqlite3_column_count(st) != ncols) {
		sqlite3_finalize(st);
		return gf_err_set(e, GF_EPARSE, "read: %d columns, not %d",
				  sqlite3_column_count(st), ncols);
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < ncols; c++) {
			if (sqlite3_column_type(st, c) == SQLITE_NULL) {
				cells[c] = (struct gf__cell){ NULL, 0 };
				continue;
			}
			const unsigned char *t = sqlite3_column_text(st, c);
			cells[c].p = t ? (const char *)t : "";
			cells[c].len = (size_t)sqlite3_column_bytes(st, c);
		}
		if ((rc = fn(cells, arg)) != 0)
			break;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = sq_err(db, GF_ECONFLICT, "read", e);
	sqlite3_finalize(st);
	return rc;
}

static int bind_params(sqlite3_stmt *st, int n, const struct gf__param *p)
{
	int rc = SQLITE_OK;
	for (int c = 0; c < n && rc == SQLITE_OK; c++) {
		const struct gf__param *v = &p[c];
		if (v->kind == GF__P_INT)
			rc = sqlite3_bind_int64(st, c + 1, v->i);
		else if (v->kind == GF__P_TEXT)
			rc = sqlite3_bind_text(st, c + 1, v->s, (int)v->len,
					       SQLITE_STATIC);
		else
			rc = sqlite3_bind_null(st, c + 1);
	}
	return rc;
}

/* Insert each run (one kept already is left); the caller's transaction. */
static int write_runs(struct gf_store *s, const struct gf_job_run *runs, int n,
		      struct gf_err *e)
{
	struct sq *q = SQ(s);
	struct gf__param v[GF__RUN_NCOLS];
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		gf__store_run_params(&runs[i], v);
		if (bind_params(q->run_insert, GF__RUN_NCOLS, v) != SQLITE_OK ||
		    sqlite3_step(q->run_insert) != SQLITE_DONE) {
			char what[80];
			gf__store_run_name(&runs[i], what, sizeof(what));
			rc = sq_err(q->db, GF_ECONFLICT, what, e);
		}
		sqlite3_reset(q->run_insert);
		sqlite3_clear_bindings(q->run_insert);
	}
	return rc;
}

/* Upsert each job; the caller's transaction. */
static int write_rows(struct gf_store *s, const struct gf_job *const *jobs,
		      int n, struct gf_err *e)
{
	struct sq *q = SQ(s);
	struct gf__params p;
	int rc = 0;
	gf__store_params_init(&p);
	for (int i = 0; i < n && rc == 0; i++) {
		if ((rc = gf__store_job_params(jobs[i], &p, e)))
			break;
		if (bind_params(q->upsert, GF__NCOLS, p.v) != SQLITE_OK ||
		    sqlite3_step(q->upsert) != SQLITE_DONE) {
			char what[GF_JOB_ID_MAX + 48];
			gf_note(what, sizeof(what), "job '%s' (seq %llu)",
				jobs[i]->id, (unsigned long long)jobs[i]->seq);
			rc = sq_err(q->db, GF_ECONFLICT, what, e);
		}
		sqlite3_reset(q->upsert);
		sqlite3_clear_bindings(q->upsert);
	}
	gf__store_params_release(&p);
	return rc;
}

/* Prepare *st once for the connection's life, checking its parameters. */
static int prepare_once(struct sq *q, sqlite3_stmt **st, const char *sql,
			int nparams, struct gf_err *e)
{
	if (*st)
		return 0;
	if (sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
			       NULL) != SQLITE_OK)
		return sq_err(q->db, GF_ECONFLICT, "prepare", e);
	if (sqlite3_bind_parameter_count(*st) != nparams) {
		int n = sqlite3_bind_parameter_count(*st);
		sqlite3_finalize(*st);
		*st = NULL;
		return gf_err_set(e, GF_EINVAL,
				  "'%.40s...' has %d parameters, "
				  "not %d",
				  sql, n, nparams);
	}
	return 0;
}

static int sq_write(struct gf_store *s, const struct gf_store_batch *b,
		    struct gf_err *e)
{
	struct sq *q = SQ(s);
	int rc;
	if ((rc = prepare_once(q, &q->upsert, gf__store_sql_upsert(), GF__NCOLS,
			       e)) ||
	    (rc = prepare_once(q, &q->run_insert, gf__store_sql_run_insert(),
			       GF__RUN_NCOLS, e)))
		return rc;
	if ((rc = sq_exec(s, "BEGIN IMMEDIATE", e)))
		return rc;
	rc = write_rows(s, b->jobs, b->n, e);
	if (rc == 0)
		rc = write_runs(s, b->runs, b->nruns, e);
	if (rc == 0 &&
	    sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = sq_err(q->db, GF_ECONFLICT, "commit", e);
	if (rc)
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int sq_exec_params(struct gf_store *s, const char *sql, int n,
			  const struct gf__param *params, struct gf_err *e)
{
	sqlite3 *db = SQ(s)->db;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return sq_err(db, GF_ECONFLICT, "prepare", e);
	int rc = 0;
	if (sqlite3_bind_parameter_count(st) != n)
		rc = gf_err_set(e, GF_EINVAL, "%d parameters, not %d",
				sqlite3_bind_parameter_count(st), n);
	else if (bind_params(st, n, params) != SQLITE_OK ||
		 sqlite3_step(st) != SQLITE_DONE)
		rc = sq_err(db, GF_ECONFLICT, "write", e);
	sqlite3_finalize(st); /* autocommit: durable (synchronous=FULL) */
	return rc;
}

static int sq_lead(struct gf_store *s, bool *leading, struct gf_err *e)
{
	struct sq *q = SQ(s);
	if (s->leading) { /* an flock lasts as long as its descriptor */
		*leading = true;
		return 0;
	}
	*leading = false;
	if (flock(q->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			return 0; /* another server holds this state dir */
		int rc = -errno;
		return gf_err_set(e, rc, "lock '%s': %s", q->lock_path,
				  gf_strerror(rc));
	}
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(q->lock_fd, 0) != 0 ||
	    pwrite(q->lock_fd, pid, (size_t)len, 0) != len)
		gf_log(GF_LOG_WARN, "store", "lock '%s': cannot write pid: %s",
		       q->lock_path, gf_strerror(-errno));
	s->leading = *leading = true;
	return 0;
}

static void sq_close(struct gf_store *s)
{
	struct sq *q = SQ(s);
	if (!q)
		return;
	sqlite3_finalize(q->upsert);
	sqlite3_finalize(q->run_insert);
	sqlite3_close_v2(q->db);
	if (q->lock_fd >= 0)
		close(q->lock_fd); /* releases the flock */
	gf_free(s->engine);
}

static const struct gf__store_ops sqlite_ops = {
	.exec = sq_exec,
	.query_i64 = sq_query_i64,
	.begin_migration = sq_begin_migration,
	.select = sq_select,
	.exec_params = sq_exec_params,
	.write = sq_write,
	.lead = sq_lead,
	.close = sq_close,
};

/* mkdir -p of path's directory; directories it creates are 0700. */
static int make_dirs(const char *path, struct gf_err *e)
{
	char dir[PATH_MAX];
	if (gf_fmt(dir, sizeof(dir), "%s", path))
		return gf_err_set(e, GF_ETOOBIG, "path '%.64s...': too long",
				  path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0; /* the current or the root directory */
	*slash = '\0';
	return gf_mkdir_p(dir, 0700, e);
}

/* WAL and synchronous=FULL, or the open fails. */
static int durability(struct gf_store *s, struct gf_err *e)
{
	char mode[32];
	int64_t sync;
	int rc;
	sqlite3_busy_timeout(SQ(s)->db, BUSY_TIMEOUT_MS);
	/* Switching a new database to WAL takes an exclusive lock, and
	 * SQLite answers SQLITE_BUSY at once (no busy handler) when another
	 * process opening the same file holds a lock: retry for as long as
	 * the busy timeout would have waited. */
	for (int tries = 0;; tries++) {
		rc = sq_query_text(s, "PRAGMA journal_mode=WAL", mode,
				   sizeof(mode), e);
		if (rc == 0 || sqlite3_errcode(SQ(s)->db) != SQLITE_BUSY ||
		    tries * 10 >= BUSY_TIMEOUT_MS)
			break;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (rc)
		return rc;
	if (strcmp(mode, "wal") != 0)
		return gf_err_set(e, GF_ENOTSUP,
				  "WAL mode refused (journal_mode is '%s'): "
				  "the file system must support it",
				  mode);
	if ((rc = sq_exec(s, "PRAGMA synchronous=FULL", e)) ||
	    (rc = sq_query_i64(s, "PRAGMA synchronous", 0, &sync, e)))
		return rc;
	if (sync != 2)
		return gf_err_set(e, GF_ENOTSUP, "synchronous=FULL refused");
	return 0;
}

int gf__store_sqlite_open(struct gf_store *s, const char *path,
			  struct gf_err *e)
{
	struct sq *q;
	int rc;
	if (!*path || strncmp(path, "//", 2) == 0)
		return gf_err_set(e, GF_EINVAL,
				  "expected sqlite:PATH (a file, e.g. "
				  "sqlite:gpufleet-state/jobs.db or "
				  "sqlite:/var/lib/gpufleet/jobs.db)");
	if (strlen(path) + 6 >= PATH_MAX)
		return gf_err_set(e, GF_ETOOBIG, "path over %d bytes",
				  PATH_MAX - 6);
	if ((rc = make_dirs(path, e)))
		return rc;
	q = gf_calloc(1, sizeof(*q));
	q->lock_fd = -1;
	s->engine = q;
	s->ops = &sqlite_ops;
	if (sqlite3_open_v2(path, &q->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		rc = sq_err(q->db, GF_ECONFLICT, "cannot open the database", e);
		goto fail;
	}
	sqlite3_extended_result_codes(q->db, 1);
	if ((rc = durability(s, e)))
		goto fail;
	if (gf_fmt(q->lock_path, sizeof(q->lock_path), "%s.lock", path)) {
		rc = gf_err_set(e, GF_ETOOBIG, "lock '%.64s...': path too long",
				path);
		goto fail;
	}
	q->lock_fd = open(q->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (q->lock_fd < 0) {
		rc = -errno;
		gf_err_set(e, rc, "lock '%s': %s", q->lock_path,
			   gf_strerror(rc));
		goto fail;
	}
	return 0;
fail:
	sq_close(s);
	s->ops = NULL;
	return rc;
}
