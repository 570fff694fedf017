/*
 * store.h - where the controller (`gpufleet serve`) keeps its jobs: one
 * interface over SQLite (the default, a file in a state directory) and
 * PostgreSQL 15 (libpq), with the same schema and migrations on both, and
 * the leader lock that lets two servers share one PostgreSQL database.
 * docs/store.md has the schema, the migrations, the durability settings
 * and how to run two servers.
 *
 *   struct gf_store *s;
 *   gf_store_open("sqlite:gpufleet-state/jobs.db", &s, &e);
 *   bool leading;
 *   gf_store_lead(s, &leading, &e);      // every second, leader or not
 *   if (leading) {                       // false -> true: (re)load first
 *           gf_store_load_jobs(s, take_job, ctl, &e);
 *           gf_store_max_seq(s, &seq, &e);
 *           ...
 *           gf_store_write(s, batch, n, &e);  // then answer 201s
 *   }
 *   gf_store_close(s);
 *
 * What is stored: every field of struct gf_job (include/gpufleet/job.h),
 * placements by node *name* (a loaded job's place[i].node is -1: the
 * controller maps names to its node table); and the nodes that joined
 * (gf_store_put_node): a name and the inventory the node registered, as
 * the controller's text (JSON), so that a restarted controller knows its
 * nodes before they call again.
 *
 * Validation both ways: a job that breaks the rules (the core's
 * gf_job_check: fields, caps, id "j<seq>", placements iff RUNNING, one
 * per replica of the kind asked; plus UTF-8 text and a seq that fits a
 * signed 64-bit key) is refused by gf_store_write before anything is
 * written, and a stored row that does not parse or breaks them (an
 * unknown state, a corrupt placement, a NULL where a value belongs)
 * fails gf_store_load_jobs with GF_EPARSE naming the job and the column:
 * never a crash, never half a job.
 *
 * Threads: a store is one connection and must be used by one thread at a
 * time (the service's scheduler thread); nothing here locks.  Two stores
 * (two connections) may be used by two threads.
 *
 * Errors: 0, or a negative code with e->msg naming the store by its URL
 * (any password masked) and the cause.
 */
#ifndef GF_STORE_STORE_H
#define GF_STORE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>

#define GF_STORE_URL_MAX 1024 /* bytes of a URL */
/* jobs in one gf_store_write: a batch is one transaction */
#define GF_STORE_BATCH_MAX 4096
/* bytes of one job's placement JSON (1024 replicas of 16 GPUs fit) */
#define GF_STORE_PLACEMENT_MAX (256 << 10)
/* PostgreSQL's default connect timeout, seconds (connect_timeout= in the
 * URL overrides it) */
#define GF_STORE_PG_CONNECT_TIMEOUT_S 5
/* the leader lock's key on PostgreSQL: pg_try_advisory_lock(this), the
 * bytes "gpfleet" as a number (advisory locks are per database); the
 * migrations serialize on this + 1 */
#define GF_STORE_PG_LOCK_KEY 29115507808757108LL

struct gf_store;

enum gf_store_kind {
	GF_STORE_SQLITE,
	GF_STORE_POSTGRES,
};

/*
 * Open a store and bring its schema to this version (migrations: a
 * schema_version table; versioned, forward-only, each in its own
 * transaction, serialized between processes that open at once).  url:
 *   sqlite:PATH            a database file; its directory is created if
 *                          missing (mode 0700); WAL, synchronous=FULL
 *   postgres://...         a libpq connection URI (postgresql:// too);
 *                          connect_timeout defaults to 5 s
 * 0 with *out set (caller closes with gf_store_close), or a negative
 * code with e set and *out NULL: GF_EINVAL (not such a URL, too long),
 * -errno (the directory or file), GF_ENOTSUP (a schema newer than this
 * gpufleet), GF_EPARSE (a corrupt schema_version), GF_ECONFLICT (the
 * database refused: cannot connect, SQL errors).
 */
int gf_store_open(const char *url, struct gf_store **out,
		  struct gf_err *e) GF_MUST_CHECK;

/* Close the connection; a held leader lock is released.  NULL is ok. */
void gf_store_close(struct gf_store *s);

/* Which engine; the URL with any password masked (borrowed, valid until
 * gf_store_close). */
enum gf_store_kind gf_store_kind(const struct gf_store *s);
const char *gf_store_url(const struct gf_store *s);

/*
 * Every stored job in seq order.  All rows are read and checked first;
 * if one fails, no job is handed over (fn is never called) and the call
 * returns GF_EPARSE ("job 'j12' (seq 12): column 'placement': ...") or a
 * database error.  Then each job is handed to fn, which takes it (it
 * frees it with gf_job_release() and gf_free(), or keeps it): a loaded
 * job's place[i].node is -1.  If fn returns nonzero, loading stops, the
 * jobs not yet handed over are freed, and that value is returned.
 */
int gf_store_load_jobs(struct gf_store *s,
		       int (*fn)(struct gf_job *job, void *arg), void *arg,
		       struct gf_err *e) GF_MUST_CHECK;

/* The highest seq stored, 0 when there is none. */
int gf_store_max_seq(struct gf_store *s, uint64_t *out,
		     struct gf_err *e) GF_MUST_CHECK;

/*
 * Insert or update n jobs (by seq) in ONE transaction: all of them or
 * none.  Only the leader writes (gf_store_lead last said *leading true
 * and the lock was not lost since): otherwise GF_ECONFLICT and nothing
 * is written.  Returns once the transaction is durable (SQLite: the WAL
 * is fsynced, synchronous=FULL; PostgreSQL: COMMIT acknowledged, with
 * synchronous_commit as the server has it, on by default).
 *
 * Errors, with nothing written: GF_EINVAL (a job breaks the rules, named
 * with its field; n out of 1..GF_STORE_BATCH_MAX), GF_ETOOBIG (a
 * placement past GF_STORE_PLACEMENT_MAX), GF_ECONFLICT (not the leader;
 * the database refused the transaction: a constraint such as two seqs
 * with one id, a lost connection).  A batch whose connection was lost
 * while it committed may or may not be there: the caller answers no 201
 * for it, and a failure on PostgreSQL drops the lead (see gf_store_lead).
 * A seq may appear once per batch (the later row would win).
 */
int gf_store_write(struct gf_store *s, const struct gf_job *const *jobs, int n,
		   struct gf_err *e) GF_MUST_CHECK;

/* Jobs and the runs that ended with them, written together. */
struct gf_store_batch {
	const struct gf_job *const *jobs;
	int n; /* 0..GF_STORE_BATCH_MAX */
	const struct gf_job_run *runs;
	int nruns; /* 0..GF_STORE_BATCH_MAX; n + nruns >= 1 */
};

/*
 * As gf_store_write, with runs: the jobs upserted and the runs inserted
 * in ONE transaction.  A run whose (seq, attempt, replica) is kept
 * already is left as it was (a node that sent its report twice), so the
 * caller adds a run's gpu_ms to its job only for a run it had not seen
 * (gf_store_load_runs tells a restarted controller which).  A run's rules:
 * seq 1..INT64_MAX, attempt >= 1, replica 0..GF_JOB_MAX_REPLICAS-1, a
 * node name, 0 < started_ms <= ended_ms, gpu_ms >= 0, UTF-8 text; a run
 * breaking them: GF_EINVAL naming it ("run j12/2/0: 'ended_ms': ..."),
 * nothing written.
 */
int gf_store_commit(struct gf_store *s, const struct gf_store_batch *b,
		    struct gf_err *e) GF_MUST_CHECK;

/* Every kept run, by seq, attempt and replica; each checked (a bad row:
 * GF_EPARSE naming it, before fn sees any).  fn's nonzero stops. */
int gf_store_load_runs(struct gf_store *s,
		       int (*fn)(const struct gf_job_run *r, void *arg),
		       void *arg, struct gf_err *e) GF_MUST_CHECK;

/*
 * Try to lead (never blocks on another server) and say whether this
 * store leads now.  Call it every second or so, leader and standby
 * alike; it is also how a leader learns it has lost the lock.
 *
 * SQLite: an exclusive flock on PATH.lock beside the database (it holds
 * this process's pid); held until close, so a second server on the same
 * state directory never leads.
 *
 * PostgreSQL: pg_try_advisory_lock(GF_STORE_PG_LOCK_KEY), session-level:
 * the server releases it when the session ends, so when a leader dies a
 * standby's next call leads.  A leader's call checks its session is
 * alive (one round trip).  When the session is lost (the check or a
 * write failed), the store stops leading and the loss is reported by
 * exactly one call returning *leading false; the calls after it
 * reconnect (blocking up to connect_timeout) and try the lock again.
 * So a caller never sees true -> true across a loss: on every false ->
 * true it must reload its state from the store before acting, since
 * another server may have led meanwhile.
 *
 * 0 with *leading set; a negative code when the answer is unknown (the
 * database unreachable: GF_ECONFLICT; the lock file: -errno), with
 * *leading false.
 */
int gf_store_lead(struct gf_store *s, bool *leading,
		  struct gf_err *e) GF_MUST_CHECK;

/* Whether this store leads, as of the last gf_store_lead or failed
 * gf_store_write (no round trip). */
bool gf_store_is_leading(const struct gf_store *s);

/* --- nodes ------------------------------------------------------------ */

#define GF_STORE_NODE_NAME_MAX 48	  /* = GF_NODE_NAME_MAX, with NUL */
#define GF_STORE_INVENTORY_MAX (1u << 20) /* bytes of one node's */

/*
 * Insert or replace node `name` with its inventory (len bytes of UTF-8
 * text, no NUL; the store does not parse it) at now_ms, in a transaction
 * of its own, durable when it returns.  Leader only, as gf_store_write.
 * GF_EINVAL (an empty or long name, not UTF-8, len 0), GF_ETOOBIG (past
 * GF_STORE_INVENTORY_MAX), GF_ECONFLICT (not the leader; the database).
 */
int gf_store_put_node(struct gf_store *s, const char *name,
		      const char *inventory, size_t len, int64_t now_ms,
		      struct gf_err *e) GF_MUST_CHECK;

/* Forget node `name` (none is fine).  Leader only. */
int gf_store_delete_node(struct gf_store *s, const char *name,
			 struct gf_err *e) GF_MUST_CHECK;

/*
 * Every stored node by name: fn gets the name, the inventory (NUL
 * terminated, len bytes; borrowed for the call) and when it was put.
 * Rows are checked as on the way in (a bad one: GF_EPARSE naming the
 * node and column, before fn sees any).  fn's nonzero stops and is
 * returned.
 */
int gf_store_load_nodes(struct gf_store *s,
			int (*fn)(const char *name, const char *inventory,
				  size_t len, int64_t registered_ms, void *arg),
			void *arg, struct gf_err *e) GF_MUST_CHECK;

/*
 * Node `name` drained with reason (UTF-8, < GF_STORE_DRAIN_MAX bytes; ""
 * allowed), or resumed (reason NULL): kept across restarts; registering
 * again keeps it.  A name not stored: nothing (0).  Leader only.
 */
#define GF_STORE_DRAIN_MAX 256
int gf_store_node_drain(struct gf_store *s, const char *name,
			const char *reason, struct gf_err *e) GF_MUST_CHECK;
/* Every drained node: fn(name, reason, arg), borrowed for the call;
 * fn's nonzero stops and is returned. */
int gf_store_load_drains(struct gf_store *s,
			 int (*fn)(const char *name, const char *reason,
				   void *arg),
			 void *arg, struct gf_err *e) GF_MUST_CHECK;

/* --- services ---------------------------------------------------------- */

#define GF_STORE_SERVICE_MAX 100000 /* replicas of one service */

/*
 * Insert or replace service `name` (as nodes: a name, the spec's JSON
 * text, both checked as node rows are) with its replica count
 * 0..GF_STORE_SERVICE_MAX, in a transaction of its own.  Leader only.
 */
int gf_store_put_service(struct gf_store *s, const char *name, const char *spec,
			 size_t len, int replicas, int64_t now_ms,
			 struct gf_err *e) GF_MUST_CHECK;
int gf_store_delete_service(struct gf_store *s, const char *name,
			    struct gf_err *e) GF_MUST_CHECK;
/* Every stored service by name (checked; a bad row: GF_EPARSE naming it,
 * before fn sees any). */
int gf_store_load_services(struct gf_store *s,
			   int (*fn)(const char *name, const char *spec,
				     size_t len, int replicas, void *arg),
			   void *arg, struct gf_err *e) GF_MUST_CHECK;

#endif
