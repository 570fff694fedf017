/*
 * schema.c - the schema's migrations and the statements built from the
 * column table, the same text for SQLite and PostgreSQL.
 *
 * Invariants: migrations are versioned and forward-only: an entry of the
 * table below is never edited once released, a change is a new entry
 * with the next version.  Each runs in its own transaction together with
 * its row in schema_version, so a database is always at one version;
 * concurrent opens are serialized by the engine's begin_migration
 * (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction advisory lock), and
 * each re-reads the version inside its transaction.  A database at a
 * version newer than this table is refused, never touched.  Types are
 * the portable ones (BIGINT, INTEGER, TEXT); the one difference, seq's
 * type, is the @KEY@ token (INTEGER on SQLite makes seq the rowid).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store/store_impl.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/log.h"

struct migration {
	int version;
	const char *what;
	const char *sql;
};

static const struct migration migrations[] = {
	{ 1, "jobs table, index on state",
	  "CREATE TABLE jobs (\n"
	  "  seq @KEY@ NOT NULL PRIMARY KEY,\n"
	  "  id TEXT NOT NULL UNIQUE,\n"
	  "  name TEXT NOT NULL,\n"
	  "  team TEXT NOT NULL,\n"
	  "  class TEXT NOT NULL,\n"
	  "  replicas INTEGER NOT NULL,\n"
	  "  gpus INTEGER NOT NULL,\n"
	  "  gpu_model TEXT NOT NULL,\n"
	  "  gpu_milli INTEGER NOT NULL,\n"
	  "  mig_profile TEXT NOT NULL,\n"
	  "  cpu_milli INTEGER NOT NULL,\n"
	  "  memory_mib BIGINT NOT NULL,\n"
	  "  node_selector TEXT NOT NULL,\n"
	  "  max_runtime_s BIGINT NOT NULL,\n"
	  "  command TEXT,\n"
	  "  state TEXT NOT NULL,\n"
	  "  reason TEXT NOT NULL,\n"
	  "  submitted_ms BIGINT NOT NULL,\n"
	  "  started_ms BIGINT NOT NULL,\n"
	  "  ended_ms BIGINT NOT NULL,\n"
	  "  attempts INTEGER NOT NULL,\n"
	  "  preemptions INTEGER NOT NULL,\n"
	  "  exit_code INTEGER NOT NULL,\n"
	  "  block INTEGER NOT NULL,\n"
	  "  placement TEXT\n"
	  ");\n"
	  "CREATE INDEX jobs_state ON jobs (state);\n" },
	{ 2, "jobs.gpu_ms, runs and nodes tables",
	  "ALTER TABLE jobs ADD COLUMN gpu_ms BIGINT NOT NULL DEFAULT 0;\n"
	  "CREATE TABLE runs (\n"
	  "  seq BIGINT NOT NULL,\n"
	  "  attempt INTEGER NOT NULL,\n"
	  "  replica INTEGER NOT NULL,\n"
	  "  node TEXT NOT NULL,\n"
	  "  started_ms BIGINT NOT NULL,\n"
	  "  ended_ms BIGINT NOT NULL,\n"
	  "  exit_code INTEGER NOT NULL,\n"
	  "  gpu_ms BIGINT NOT NULL,\n"
	  "  reason TEXT NOT NULL,\n"
	  "  PRIMARY KEY (seq, attempt, replica)\n"
	  ");\n"
	  "CREATE INDEX runs_ended ON runs (ended_ms);\n"
	  "CREATE TABLE nodes (\n"
	  "  name TEXT NOT NULL PRIMARY KEY,\n"
	  "  inventory TEXT NOT NULL,\n"
	  "  registered_ms BIGINT NOT NULL\n"
	  ");\n" },
	{ 3, "jobs.service, services table",
	  "ALTER TABLE jobs ADD COLUMN service TEXT NOT NULL DEFAULT '';\n"
	  "CREATE TABLE services (\n"
	  "  name TEXT NOT NULL PRIMARY KEY,\n"
	  "  spec TEXT NOT NULL,\n"
	  "  replicas INTEGER NOT NULL,\n"
	  "  updated_ms BIGINT NOT NULL\n"
	  ");\n" },
	{ 4, "jobs.failures, requeues, held; nodes.drain",
	  "ALTER TABLE jobs ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;\n"
	  "ALTER TABLE jobs ADD COLUMN requeues INTEGER NOT NULL DEFAULT 0;\n"
	  "ALTER TABLE jobs ADD COLUMN held TEXT;\n"
	  "UPDATE jobs SET started_ms = 0 WHERE state = 'pending';\n"
	  "ALTER TABLE nodes ADD COLUMN drain TEXT;\n" },
	{ 5, "jobs.origin",
	  "ALTER TABLE jobs ADD COLUMN origin TEXT NOT NULL DEFAULT 'api';\n"
	  /* before it, a pod's job was known by its command (once) */
	  "UPDATE jobs SET origin = 'k8s' "
	  "WHERE substr(command, 1, 8) = 'k8s-pod ';\n" },
	{ 6,
	  "jobs.array_job_id, array_task_id, array_max, dependency, "
	  "user_hold",
	  "ALTER TABLE jobs ADD COLUMN array_job_id TEXT NOT NULL DEFAULT '';\n"
	  "ALTER TABLE jobs ADD COLUMN array_task_id INTEGER NOT NULL "
	  "DEFAULT 0;\n"
	  "ALTER TABLE jobs ADD COLUMN array_max INTEGER NOT NULL DEFAULT 0;\n"
	  "ALTER TABLE jobs ADD COLUMN dependency TEXT NOT NULL DEFAULT '';\n"
	  "ALTER TABLE jobs ADD COLUMN user_hold INTEGER NOT NULL DEFAULT 0;\n"
	  "CREATE INDEX jobs_array ON jobs (array_job_id);\n" },
	{ 7, "jobs.output_path, error_path",
	  "ALTER TABLE jobs ADD COLUMN output_path TEXT;\n"
	  "ALTER TABLE jobs ADD COLUMN error_path TEXT;\n" },
	{ 8, "jobs.env, workdir, run_as",
	  /* env: the job's variables as a JSON object, NULL none; run_as:
	   * its user ("user" is a keyword of PostgreSQL) */
	  "ALTER TABLE jobs ADD COLUMN env TEXT;\n"
	  "ALTER TABLE jobs ADD COLUMN workdir TEXT NOT NULL DEFAULT '';\n"
	  "ALTER TABLE jobs ADD COLUMN run_as TEXT NOT NULL DEFAULT '';\n" },
	{ 9, "runs.gpu_mask, gpu_uuids, mig_uuid, mig_start",
	  /* a run's GPUs: bit i for GPU index i; older rows: unknown */
	  "ALTER TABLE runs ADD COLUMN gpu_mask BIGINT NOT NULL DEFAULT 0;\n"
	  "ALTER TABLE runs ADD COLUMN gpu_uuids TEXT NOT NULL DEFAULT '';\n"
	  "ALTER TABLE runs ADD COLUMN mig_uuid TEXT NOT NULL DEFAULT '';\n"
	  "ALTER TABLE runs ADD COLUMN mig_start INTEGER NOT NULL "
	  "DEFAULT -1;\n" },
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
#define LATEST	    (migrations[NMIGRATIONS - 1].version)

static const char schema_version_ddl[] =
	"CREATE TABLE IF NOT EXISTS schema_version (\n"
	"  version INTEGER NOT NULL PRIMARY KEY,\n"
	"  applied_ms BIGINT NOT NULL,\n"
	"  what TEXT NOT NULL\n"
	")";

/* Apply m unless the database has it; in the caller's transaction. */
static int apply(struct gf_store *s, const struct migration *m,
		 const char *key_type, bool *applied, struct gf_err *e)
{
	const struct gf__store_ops *o = s->ops;
	int64_t cur;
	int rc;
	*applied = false;
	if ((rc = o->exec(s, schema_version_ddl, e)) ||
	    (rc = o->query_i64(s, "SELECT MAX(version) FROM schema_version", 0,
			       &cur, e)))
		return rc;
	if (cur > LATEST)
		return gf_err_set(e, GF_ENOTSUP,
				  "schema version %" PRId64 " is newer than "
				  "this gpufleet's (%d): run a newer gpufleet",
				  cur, LATEST);
	if (cur >= m->version)
		return 0;
	struct gf_buf b;
	gf_buf_init(&b, 64 << 10);
	for (const char *p = m->sql; *p;) {
		if (strncmp(p, "@KEY@", 5) == 0) {
			gf_buf_puts(&b, key_type);
			p += 5;
		} else {
			gf_buf_putc(&b, *p++);
		}
	}
	gf_buf_printf(&b,
		      ";\nINSERT INTO schema_version (version, applied_ms, "
		      "what) VALUES (%d, %" PRId64 ", '%s')",
		      m->version, gf_clock_wall_ms(), m->what);
	rc = gf_buf_error(&b);
	if (rc == 0)
		rc = o->exec(s, gf_buf_str(&b), e);
	gf_buf_release(&b);
	*applied = rc == 0;
	return rc;
}

int gf__store_migrate(struct gf_store *s, const char *key_type,
		      struct gf_err *e)
{
	const struct gf__store_ops *o = s->ops;
	for (int i = 0; i < NMIGRATIONS; i++) {
		const struct migration *m = &migrations[i];
		bool applied;
		int rc = o->begin_migration(s, e);
		if (rc == 0)
			rc = apply(s, m, key_type, &applied, e);
		if (rc == 0)
			rc = o->exec(s, applied ? "COMMIT" : "ROLLBACK", e);
		if (rc) {
			struct gf_err ignored;
			o->exec(s, "ROLLBACK", &ignored);
			if (rc == GF_ENOTSUP) /* a newer schema: says it all */
				return rc;
			char tmp[GF_ERR_MSG_MAX];
			gf_note(tmp, sizeof(tmp), "%s", e ? e->msg : "");
			return gf_err_set(e, rc, "migration %d (%s): %s",
					  m->version, m->what, tmp);
		}
		if (applied)
			gf_log(GF_LOG_INFO, "store",
			       "%s: schema migrated to version %d (%s)", s->url,
			       m->version, m->what);
	}
	return 0;
}

/* --- statements from the column table -------------------------------- */

static pthread_once_t sql_once = PTHREAD_ONCE_INIT;
static char sql_upsert[2048], sql_select[1024];
static char sql_run_insert[512], sql_run_select[512];

static const char *const run_cols[GF__RUN_NCOLS] = {
#define GF__RUN_COL_NAME(name, text) text,
	GF__RUN_COLUMNS(GF__RUN_COL_NAME)
#undef GF__RUN_COL_NAME
};

/* "a, b, c" of n names, or "$1, $2, $3" when names is NULL. */
static void col_list(struct gf_buf *b, const char *const *names, int n)
{
	for (int c = 0; c < n; c++) {
		if (names)
			gf_buf_printf(b, "%s%s", c ? ", " : "", names[c]);
		else
			gf_buf_printf(b, "%s$%d", c ? ", " : "", c + 1);
	}
}

static void build_run_sql(struct gf_buf *b)
{
	gf_buf_reset(b);
	gf_buf_puts(b, "INSERT INTO runs (");
	col_list(b, run_cols, GF__RUN_NCOLS);
	gf_buf_puts(b, ") VALUES (");
	col_list(b, NULL, GF__RUN_NCOLS);
	gf_buf_puts(b, ") ON CONFLICT (seq, attempt, replica) DO NOTHING");
	gf_note(sql_run_insert, sizeof(sql_run_insert), "%s",
		gf_buf_error(b) ? "-- over its buffer" : gf_buf_str(b));
	gf_buf_reset(b);
	gf_buf_puts(b, "SELECT ");
	col_list(b, run_cols, GF__RUN_NCOLS);
	gf_buf_puts(b, " FROM runs ORDER BY seq, attempt, replica");
	gf_note(sql_run_select, sizeof(sql_run_select), "%s",
		gf_buf_error(b) ? "-- over its buffer" : gf_buf_str(b));
}

static void build_sql(void)
{
	struct gf_buf b;
	gf_buf_init(&b, sizeof(sql_upsert) - 1);
	gf_buf_puts(&b, "INSERT INTO jobs (");
	for (int c = 0; c < GF__NCOLS; c++)
		gf_buf_printf(&b, "%s%s", c ? ", " : "",
			      gf__store_col_names[c]);
	gf_buf_puts(&b, ") VALUES (");
	for (int c = 0; c < GF__NCOLS; c++)
		gf_buf_printf(&b, "%s$%d", c ? ", " : "", c + 1);
	gf_buf_puts(&b, ") ON CONFLICT (seq) DO UPDATE SET ");
	for (int c = 1; c < GF__NCOLS; c++)
		gf_buf_printf(&b, "%s%s = excluded.%s", c > 1 ? ", " : "",
			      gf__store_col_names[c], gf__store_col_names[c]);
	/* the sizes are fixed by the column table: a cut is a bug here */
	gf_note(sql_upsert, sizeof(sql_upsert), "%s",
		gf_buf_error(&b) ? "-- upsert over its buffer"
				 : gf_buf_str(&b));
	gf_buf_reset(&b);
	gf_buf_puts(&b, "SELECT ");
	for (int c = 0; c < GF__NCOLS; c++)
		gf_buf_printf(&b, "%s%s", c ? ", " : "",
			      gf__store_col_names[c]);
	gf_buf_puts(&b, " FROM jobs ORDER BY seq");
	gf_note(sql_select, sizeof(sql_select), "%s",
		gf_buf_error(&b) ? "-- select over its buffer"
				 : gf_buf_str(&b));
	build_run_sql(&b);
	gf_buf_release(&b);
}

const char *gf__store_sql_upsert(void)
{
	pthread_once(&sql_once, build_sql);
	return sql_upsert;
}

const char *gf__store_sql_select(void)
{
	pthread_once(&sql_once, build_sql);
	return sql_select;
}

const char *gf__store_sql_run_insert(void)
{
	pthread_once(&sql_once, build_sql);
	return sql_run_insert;
}

const char *gf__store_sql_run_select(void)
{
	pthread_once(&sql_once, build_sql);
	return sql_run_select;
}
