/*
 * store_impl.h - what the store's files share: the engine table (SQLite,
 * PostgreSQL), the jobs table's columns, a job as row values and back,
 * and the rules a job obeys on the way in and out.  Not for other rooms.
 */
#ifndef GF_STORE_IMPL_H
#define GF_STORE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>

#include "store/store.h"
#include "util/buf.h"

/* The jobs table's columns, in the order of every SELECT and INSERT. */
#define GF__STORE_COLUMNS(X)              \
	X(SEQ, "seq")                     \
	X(ID, "id")                       \
	X(NAME, "name")                   \
	X(TEAM, "team")                   \
	X(CLASS, "class")                 \
	X(REPLICAS, "replicas")           \
	X(GPUS, "gpus")                   \
	X(GPU_MODEL, "gpu_model")         \
	X(GPU_MILLI, "gpu_milli")         \
	X(MIG_PROFILE, "mig_profile")     \
	X(CPU_MILLI, "cpu_milli")         \
	X(MEMORY_MIB, "memory_mib")       \
	X(NODE_SELECTOR, "node_selector") \
	X(MAX_RUNTIME_S, "max_runtime_s") \
	X(COMMAND, "command")             \
	X(STATE, "state")                 \
	X(REASON, "reason")               \
	X(SUBMITTED_MS, "submitted_ms")   \
	X(STARTED_MS, "started_ms")       \
	X(ENDED_MS, "ended_ms")           \
	X(ATTEMPTS, "attempts")           \
	X(PREEMPTIONS, "preemptions")     \
	X(EXIT_CODE, "exit_code")         \
	X(BLOCK, "block")                 \
	X(PLACEMENT, "placement")         \
	X(GPU_MS, "gpu_ms")               \
	X(SERVICE, "service")             \
	X(FAILURES, "failures")           \
	X(REQUEUES, "requeues")           \
	X(HELD, "held")                   \
	X(ORIGIN, "origin")               \
	X(ARRAY_JOB_ID, "array_job_id")   \
	X(ARRAY_TASK_ID, "array_task_id") \
	X(ARRAY_MAX, "array_max")         \
	X(DEPENDENCY, "dependency")       \
	X(USER_HOLD, "user_hold")         \
	X(OUTPUT, "output_path")          \
	X(ERROR, "error_path")            \
	X(ENV, "env")                     \
	X(WORKDIR, "workdir")             \
	X(RUN_AS, "run_as")

/* The runs table's columns, in the order of its INSERT and SELECT. */
#define GF__RUN_COLUMNS(X)          \
	X(SEQ, "seq")               \
	X(ATTEMPT, "attempt")       \
	X(REPLICA, "replica")       \
	X(NODE, "node")             \
	X(STARTED_MS, "started_ms") \
	X(ENDED_MS, "ended_ms")     \
	X(EXIT_CODE, "exit_code")   \
	X(GPU_MS, "gpu_ms")         \
	X(REASON, "reason")         \
	X(GPU_MASK, "gpu_mask")     \
	X(GPU_UUIDS, "gpu_uuids")   \
	X(MIG_UUID, "mig_uuid")     \
	X(MIG_START, "mig_start")

enum gf__run_col {
#define GF__RUN_COL_ENUM(name, text) GF__RUN_##name,
	GF__RUN_COLUMNS(GF__RUN_COL_ENUM)
#undef GF__RUN_COL_ENUM
		GF__RUN_NCOLS
};

enum gf__store_col {
#define GF__STORE_COL_ENUM(name, text) GF__COL_##name,
	GF__STORE_COLUMNS(GF__STORE_COL_ENUM)
#undef GF__STORE_COL_ENUM
		GF__NCOLS
};

extern const char *const gf__store_col_names[GF__NCOLS];

/* One value read from a row: p NULL for SQL NULL; text of len bytes
 * (integers as decimal text), borrowed until the next row. */
struct gf__cell {
	const char *p;
	size_t len;
};

/* One value to write: SQL NULL, an integer, or text of len bytes. */
struct gf__param {
	enum { GF__P_NULL, GF__P_INT, GF__P_TEXT } kind;
	int64_t i;
	const char *s;
	size_t len;
};

/* A job as the values of its row; placement is the JSON text's buffer
 * (gf__store_params_init / _release around many gf__store_job_params). */
struct gf__params {
	struct gf__param v[GF__NCOLS];
	struct gf_buf placement;
	struct gf_buf held;
};

struct gf__store_ops {
	/* run statements that return no rows */
	int (*exec)(struct gf_store *s, const char *sql, struct gf_err *e);
	/* one integer (SQL NULL: *out = dflt) from the first row */
	int (*query_i64)(struct gf_store *s, const char *sql, int64_t dflt,
			 int64_t *out, struct gf_err *e);
	/* begin a transaction that other processes' migrations wait for */
	int (*begin_migration)(struct gf_store *s, struct gf_err *e);
	/* every row of sql (ncols columns, at most GF__NCOLS), each
	 * through fn (which stops it with nonzero) */
	int (*select)(struct gf_store *s, const char *sql, int ncols,
		      int (*fn)(const struct gf__cell *cells, void *arg),
		      void *arg, struct gf_err *e);
	/* one statement with n text or integer parameters ($1..), in a
	 * transaction of its own, durable when it returns */
	int (*exec_params)(struct gf_store *s, const char *sql, int n,
			   const struct gf__param *params, struct gf_err *e);
	/* the upsert of b's checked jobs and the insert of its runs (a run
	 * already kept is left as it is) in one transaction */
	int (*write)(struct gf_store *s, const struct gf_store_batch *b,
		     struct gf_err *e);
	int (*lead)(struct gf_store *s, bool *leading, struct gf_err *e);
	void (*close)(struct gf_store *s);
};

struct gf_store {
	enum gf_store_kind kind;
	const struct gf__store_ops *ops;
	char url[GF_STORE_URL_MAX]; /* password masked */
	bool leading;
	void *engine; /* the engine's own state */
};

/* Engines: open the connection (no migrations), set s->engine. */
int gf__store_sqlite_open(struct gf_store *s, const char *path,
			  struct gf_err *e) GF_MUST_CHECK;
int gf__store_pg_open(struct gf_store *s, const char *conninfo,
		      struct gf_err *e) GF_MUST_CHECK;

/* Statements built from the column tables (static storage, built once;
 * thread-safe). */
const char *gf__store_sql_upsert(void);
const char *gf__store_sql_select(void);
const char *gf__store_sql_run_insert(void);
const char *gf__store_sql_run_select(void);

/* A run's rules (as gf_store_commit states them): 0 or GF_EINVAL naming
 * the run and field. */
int gf__store_run_check(const struct gf_job_run *r,
			struct gf_err *e) GF_MUST_CHECK;
/* A checked run's row values (pointers borrowed from r) into
 * v[GF__RUN_NCOLS]. */
void gf__store_run_params(const struct gf_job_run *r, struct gf__param *v);
/* "run j12/2/0" of a run, for messages. */
void gf__store_run_name(const struct gf_job_run *r, char *out, size_t size);
/* A row back into a run, checked.  0 or GF_EPARSE naming it. */
int gf__store_row_run(const struct gf__cell *cells, struct gf_job_run *out,
		      struct gf_err *e) GF_MUST_CHECK;

/* The schema's migrations; key_type replaces @KEY@ ("INTEGER" on SQLite,
 * where that makes seq the rowid; "BIGINT" on PostgreSQL). */
int gf__store_migrate(struct gf_store *s, const char *key_type,
		      struct gf_err *e) GF_MUST_CHECK;

/* The rules a job obeys (sizes, ranges, UTF-8, state, placements iff
 * RUNNING, one per replica).  0 or GF_EINVAL, e naming job and field. */
int gf__store_job_check(const struct gf_job *j, struct gf_err *e) GF_MUST_CHECK;

void gf__store_params_init(struct gf__params *p);
void gf__store_params_release(struct gf__params *p);
/* A checked job's row values; pointers borrowed from j and p.  0 or
 * GF_ETOOBIG (placement JSON past GF_STORE_PLACEMENT_MAX). */
int gf__store_job_params(const struct gf_job *j, struct gf__params *p,
			 struct gf_err *e) GF_MUST_CHECK;

/* A row back into a new job (caller frees with gf_job_release and
 * gf_free), checked with gf__store_job_check.  0 or GF_EPARSE / GF_EINVAL
 * with e naming the job and column. */
int gf__store_row_job(const struct gf__cell *cells, struct gf_job **out,
		      struct gf_err *e) GF_MUST_CHECK;

/* A job's origin as the origin column keeps it ("api", "k8s": part of
 * the schema), and back (0, or -1 for a name that is none). */
const char *gf__store_origin_name(enum gf_job_origin o);
int gf__store_origin_parse(const char *name, enum gf_job_origin *out);

/* Whether len bytes of s are well-formed UTF-8 without NUL. */
bool gf__store_utf8_ok(const char *s, size_t len);

/* A keyed document of the nodes or services table: a name of
 * 1..GF_STORE_NODE_NAME_MAX-1 bytes and a text of 1..GF_STORE_INVENTORY_MAX,
 * both UTF-8 without NUL ("node 'n1': ..." in messages).  0 or GF_EINVAL,
 * GF_ETOOBIG. */
int gf__store_check_doc(const char *name, size_t nlen, const char *text,
			size_t len, struct gf_err *e) GF_MUST_CHECK;
/* How a table of keyed documents (nodes, services) is read back: its
 * SELECT of name, text and one whole number, its words for messages
 * ("nodes: node 'n1': ..."), the number's range and what a row out of
 * it (or with a NULL) is called.  One row per such table. */
struct gf__doc_table {
	const char *sql;
	const char *table, *what;
	int64_t lo, hi;
	const char *null_msg, *range_msg;
};
enum { GF__DOC_NODES, GF__DOC_SERVICES };
extern const struct gf__doc_table gf__store_docs[];
/* Write the row of a keyed document: sql (an upsert of $1 name, $2 text,
 * then the nv (at most 2) whole numbers v) once name and text pass
 * gf__store_check_doc and this store leads.  Prefixed errors. */
int gf__store_put_doc(struct gf_store *s, const char *sql, const char *name,
		      const char *text, size_t len, const int64_t *v, int nv,
		      struct gf_err *e) GF_MUST_CHECK;
/* sql (a DELETE of $1 name) where this store leads. */
int gf__store_delete_doc(struct gf_store *s, const char *sql, const char *name,
			 struct gf_err *e) GF_MUST_CHECK;
/* Every row of table (GF__DOC_*) by fn(name, text, len, number, arg) once all
 * of them passed gf__store_check_doc and the range (prefixed errors). */
int gf__store_load_docs(struct gf_store *s, int table,
			int (*fn)(const char *name, const char *text,
				  size_t len, int64_t v, void *arg),
			void *arg, struct gf_err *e) GF_MUST_CHECK;
/* GF_ECONFLICT (prefixed) unless this store leads. */
int gf__store_leader_only(struct gf_store *s, struct gf_err *e) GF_MUST_CHECK;
/* A whole decimal integer cell. */
bool gf__store_cell_i64(const struct gf__cell *c, int64_t *out);

/* e->msg = "'URL': " + e->msg (the code kept); returns e->code. */
int gf__store_err_prefix(const struct gf_store *s, struct gf_err *e);

#endif
