/*
 * test_store.c - the job store against the real engines: one suite run
 * on SQLite (a temporary directory) and on a PostgreSQL server this test
 * starts itself on loopback (tests/tools/pg.sh: initdb in a temporary
 * directory, a free port, stopped by its PID at the end).  The PostgreSQL
 * group is skipped, saying why, only where the server's binaries are
 * absent.  Each case gets a fresh database (a new directory, or CREATE
 * DATABASE).  Raw SQL (sqlite3, libpq) plays the other program that
 * corrupts rows or kills the leader's session.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>

#include "helpers.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/mem.h"

#define SCHEMA_LATEST 9 /* store/schema.c's last migration */
#define SCHEMA_COUNT  9 /* and its entries (1-9) */

struct backend {
	enum gf_store_kind kind;
	char admin[256];    /* PostgreSQL: the server's URL */
	char skip_why[256]; /* the engine is absent: skip */
	char fail_why[256]; /* it is there and would not start: fail */
	char tmp[256];	    /* SQLite: the directory of all cases */
	int ncase;
	char url[512]; /* this case's database */
};

/* --- the engines, raw ------------------------------------------------ */

static struct backend sqlite_b = { .kind = GF_STORE_SQLITE };
static struct backend pg_b = { .kind = GF_STORE_POSTGRES };

/* The SQLite directory, and a PostgreSQL server when one can start. */
static int setup(void **state)
{
	const char *t = getenv("TMPDIR");
	(void)state;
	snprintf(sqlite_b.tmp, sizeof(sqlite_b.tmp), "%s/gf-store-XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(sqlite_b.tmp))
		return -1;
	snprintf(pg_b.tmp, sizeof(pg_b.tmp), "%s", sqlite_b.tmp);
	if (access("tests/tools/pg.sh", R_OK) != 0) {
		snprintf(pg_b.fail_why, sizeof(pg_b.fail_why),
			 "tests/tools/pg.sh not found: run from the "
			 "repository root");
		return 0;
	}
	/* the server's durability is not what these cases test */
	setenv("PG_OPTS", "-c fsync=off -c full_page_writes=off", 1);
	FILE *p = popen("sh tests/tools/pg.sh start", "r");
	if (!p || !fgets(pg_b.admin, sizeof(pg_b.admin), p))
		pg_b.admin[0] = '\0';
	int st = p ? pclose(p) : -1;
	pg_b.admin[strcspn(pg_b.admin, "\n")] = '\0';
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		snprintf(pg_b.skip_why, sizeof(pg_b.skip_why),
			 "PostgreSQL server binaries absent (apt-get install "
			 "postgresql-15)");
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !pg_b.admin[0])
		snprintf(pg_b.fail_why, sizeof(pg_b.fail_why),
			 "tests/tools/pg.sh start failed (status %d): its "
			 "output is above",
			 st);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];
	int rc = 0;
	(void)state;
	if (pg_b.admin[0]) {
		snprintf(cmd, sizeof(cmd), "sh tests/tools/pg.sh stop '%s'",
			 pg_b.admin);
		rc |= system(cmd);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sqlite_b.tmp);
	rc |= system(cmd);
	return rc == 0 ? 0 : -1;
}

static PGconn *pg_connect(const char *url)
{
	PGconn *c = PQconnectdb(url);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("connect %s: %s", url, PQerrorMessage(c));
	return c;
}

/* Run sql on the case's database as another program would. */
static void raw_exec(const char *url, const char *sql)
{
	if (strncmp(url, "sqlite:", 7) == 0) {
		sqlite3 *db;
		char *err = NULL;
		assert_int_equal(sqlite3_open(url + 7, &db), SQLITE_OK);
		sqlite3_busy_timeout(db, 5000);
		int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
		if (rc != SQLITE_OK)
			print_message("%s: %s\n", sql, err);
		sqlite3_free(err);
		sqlite3_close(db);
		assert_int_equal(rc, SQLITE_OK);
		return;
	}
	PGconn *c = pg_connect(url);
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		print_message("%s: %s\n", sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	assert_true(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK);
}

/* The first column of the first row as an integer. */
static long long raw_i64(const char *url, const char *sql)
{
	long long v = -1;
	if (strncmp(url, "sqlite:", 7) == 0) {
		sqlite3 *db;
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_open(url + 7, &db), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
				 SQLITE_OK);
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(db);
		return v;
	}
	PGconn *c = pg_connect(url);
	PGresult *r = PQexec(c, sql);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = atoll(PQgetvalue(r, 0, 0));
	PQclear(r);
	PQfinish(c);
	return v;
}

/* A fresh, empty database for this case; skips where the engine is
 * absent. */
static struct backend *begin(void **state)
{
	struct backend *b = *state;
	if (b->skip_why[0]) {
		print_message("skipped: %s\n", b->skip_why);
		skip();
	}
	if (b->fail_why[0])
		fail_msg("%s", b->fail_why);
	b->ncase++;
	if (b->kind == GF_STORE_SQLITE) {
		snprintf(b->url, sizeof(b->url),
			 "sqlite:%s/case%d/state/jobs.db", b->tmp, b->ncase);
		return b;
	}
	char sql[64];
	snprintf(sql, sizeof(sql), "CREATE DATABASE gf_case%d", b->ncase);
	raw_exec(b->admin, sql);
	snprintf(b->url, sizeof(b->url), "%.*s/gf_case%d",
		 (int)(strrchr(b->admin, '/') - b->admin), b->admin, b->ncase);
	return b;
}

/* --- jobs ------------------------------------------------------------ */

static struct gf_job *job(uint64_t seq)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)seq);
	snprintf(j->spec.name, sizeof(j->spec.name), "train-%llu",
		 (unsigned long long)seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "ml");
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "batch");
	j->spec.replicas = 1;
	j->spec.gpus = 1;
	j->spec.cpu_milli = 4000;
	j->spec.memory_mib = 16384;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 1700000000000LL + (int64_t)(seq % 1000000);
	j->block = -1;
	snprintf(j->reason, sizeof(j->reason), "no placeable node");
	if (seq % 3 == 0) { /* issue 21: an array task, its dependency */
		snprintf(j->spec.array_id, sizeof(j->spec.array_id), "j%llu",
			 (unsigned long long)seq);
		j->spec.array_task = 31;
		j->spec.array_max = 4;
		snprintf(j->spec.dependency, sizeof(j->spec.dependency),
			 "afterok:j1:j2,afternotok:j7");
		j->user_hold = true;
	}
	if (seq % 2 == 0) { /* issue 21: environment, directory, user */
		j->spec.env = gf_strdup("{\"A\":\"1\",\"B\":\"x \\\"y\\\"\"}");
		snprintf(j->spec.workdir, sizeof(j->spec.workdir),
			 "/scratch/%llu", (unsigned long long)seq);
		snprintf(j->spec.user, sizeof(j->spec.user), "alice");
	}
	return j;
}

/* Make j RUNNING on node "node-<r>" per replica, GPUs from first. */
static void run_on(struct gf_job *j, int first)
{
	const struct gf_job_spec *s = &j->spec;
	j->state = GF_JOB_RUNNING;
	j->attempts++;
	j->started_ms = j->submitted_ms + 500;
	j->block = 2;
	j->reason[0] = '\0';
	j->place = gf_calloc(s->replicas, sizeof(*j->place));
	for (int r = 0; r < s->replicas; r++) {
		struct gf_job_place *p = &j->place[r];
		snprintf(p->node_name, sizeof(p->node_name), "node-%d", r);
		p->node = 40 + r; /* the controller's index: not stored */
		p->ngpus = s->gpus > 0				   ? s->gpus
			   : s->gpu_milli > 0 || s->mig_profile[0] ? 1
								   : 0;
		for (int g = 0; g < p->ngpus; g++)
			p->gpus[g] = (first + g) % GF_CNODE_MAX_GPUS;
		p->gpu_milli = s->gpus > 0 ? 1000 : s->gpu_milli;
		p->mig_start = s->mig_profile[0] ? 4 : -1;
	}
	char msg[256];
	if (gf_job_check(j, msg, sizeof(msg)) != 0)
		fail_msg("test job: %s", msg);
}

static void finish(struct gf_job *j, enum gf_job_state st, int code)
{
	gf_free(j->place);
	j->state = st;
	j->block = -1;
	j->ended_ms = j->started_ms + 60000;
	j->exit_code = code;
	snprintf(j->reason, sizeof(j->reason), "exit %d", code);
}

static void free_job(struct gf_job *j)
{
	gf_job_release(j);
	gf_free(j);
}

static void same_job(const struct gf_job *a, const struct gf_job *b)
{
	const struct gf_job_spec *x = &a->spec, *y = &b->spec;
	assert_int_equal(a->seq, b->seq);
	assert_string_equal(a->id, b->id);
	assert_string_equal(x->name, y->name);
	assert_string_equal(x->team, y->team);
	assert_string_equal(x->class_name, y->class_name);
	assert_int_equal(x->replicas, y->replicas);
	assert_int_equal(x->gpus, y->gpus);
	assert_string_equal(x->gpu_model, y->gpu_model);
	assert_int_equal(x->gpu_milli, y->gpu_milli);
	assert_string_equal(x->mig_profile, y->mig_profile);
	assert_int_equal(x->cpu_milli, y->cpu_milli);
	assert_int_equal(x->memory_mib, y->memory_mib);
	assert_string_equal(x->node_selector, y->node_selector);
	assert_string_equal(x->service, y->service);
	assert_int_equal(x->origin, y->origin);
	assert_int_equal(x->max_runtime_s, y->max_runtime_s);
	assert_string_equal(x->array_id, y->array_id);
	assert_int_equal(x->array_task, y->array_task);
	assert_int_equal(x->array_max, y->array_max);
	assert_string_equal(x->dependency, y->dependency);
	assert_int_equal(a->user_hold, b->user_hold);
	assert_true((x->command == NULL) == (y->command == NULL));
	if (x->command)
		assert_string_equal(x->command, y->command);
	assert_true((x->output == NULL) == (y->output == NULL));
	if (x->output)
		assert_string_equal(x->output, y->output);
	assert_true((x->error == NULL) == (y->error == NULL));
	if (x->error)
		assert_string_equal(x->error, y->error);
	assert_true((x->env == NULL) == (y->env == NULL));
	if (x->env)
		assert_string_equal(x->env, y->env);
	assert_string_equal(x->workdir, y->workdir);
	assert_string_equal(x->user, y->user);
	assert_int_equal(a->state, b->state);
	assert_string_equal(a->reason, b->reason);
	assert_int_equal(a->submitted_ms, b->submitted_ms);
	assert_int_equal(a->started_ms, b->started_ms);
	assert_int_equal(a->ended_ms, b->ended_ms);
	assert_int_equal(a->attempts, b->attempts);
	assert_int_equal(a->preemptions, b->preemptions);
	assert_int_equal(a->failures, b->failures);
	assert_int_equal(a->requeues, b->requeues);
	assert_int_equal(a->nheld, b->nheld);
	for (int k = 0; k < a->nheld; k++) {
		const struct gf_job_held *h = &a->held[k], *i = &b->held[k];
		assert_int_equal(h->attempt, i->attempt);
		assert_int_equal(h->replica, i->replica);
		assert_int_equal(h->since_ms, i->since_ms);
		assert_string_equal(h->why, i->why);
		assert_string_equal(h->place.node_name, i->place.node_name);
		assert_int_equal(h->place.ngpus, i->place.ngpus);
		assert_int_equal(h->place.gpus[1], i->place.gpus[1]);
		assert_int_equal(h->place.gpu_milli, i->place.gpu_milli);
	}
	assert_int_equal(a->exit_code, b->exit_code);
	assert_int_equal(a->block, b->block);
	assert_int_equal(a->gpu_ms, b->gpu_ms);
	assert_true((a->place == NULL) == (b->place == NULL));
	for (int r = 0; a->place && r < x->replicas; r++) {
		const struct gf_job_place *p = &a->place[r], *q = &b->place[r];
		assert_string_equal(p->node_name, q->node_name);
		assert_int_equal(q->node, -1); /* loaded: by name only */
		assert_int_equal(p->ngpus, q->ngpus);
		for (int g = 0; g < p->ngpus; g++)
			assert_int_equal(p->gpus[g], q->gpus[g]);
		assert_int_equal(p->gpu_milli, q->gpu_milli);
		assert_int_equal(p->mig_start, q->mig_start);
	}
}

struct list {
	struct gf_job *v[512];
	int n;
	int stop_at; /* return 7 when handed this many (0: never) */
};

static int collect(struct gf_job *j, void *arg)
{
	struct list *l = arg;
	if (l->n >= (int)(sizeof(l->v) / sizeof(l->v[0]))) {
		free_job(j);
		return -1;
	}
	l->v[l->n++] = j;
	return l->stop_at && l->n == l->stop_at ? 7 : 0;
}

static void list_free(struct list *l)
{
	for (int i = 0; i < l->n; i++)
		free_job(l->v[i]);
	l->n = 0;
}

static struct gf_store *open_ok(const char *url)
{
	struct gf_store *s = NULL;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_store_open(url, &s, &e);
	if (rc)
		fail_msg("open %s: %s", url, e.msg);
	return s;
}

static struct gf_store *open_leader(const char *url)
{
	struct gf_store *s = open_ok(url);
	struct gf_err e;
	bool leading = false;
	assert_int_equal(gf_store_lead(s, &leading, &e), 0);
	assert_true(leading);
	return s;
}

static int store_write(struct gf_store *s, struct gf_job **jobs, int n,
		       struct gf_err *e)
{
	gf_err_clear(e);
	return gf_store_write(s, (const struct gf_job *const *)jobs, n, e);
}

static void write_ok(struct gf_store *s, struct gf_job **jobs, int n)
{
	struct gf_err e;
	if (store_write(s, jobs, n, &e))
		fail_msg("write: %s", e.msg);
}

static void load_ok(struct gf_store *s, struct list *l)
{
	struct gf_err e;
	gf_err_clear(&e);
	l->n = 0;
	int rc = gf_store_load_jobs(s, collect, l, &e);
	if (rc)
		fail_msg("load: %s", e.msg);
}

/* --- the cases ------------------------------------------------------- */

/* A long command with every kind of odd character. */
static char *odd_command(void)
{
	static const char piece[] =
		"python3 -c 'print(\"a\\\\b\")' # é 漢字 🙂\n"
		"\techo \"$HOME\" `id` ;; ";
	char *c = gf_malloc(GF_JOB_CMD_MAX);
	size_t n = 0, k = strlen(piece);
	while (n + k < GF_JOB_CMD_MAX - 1) {
		memcpy(c + n, piece, k);
		n += k;
	}
	while (n < GF_JOB_CMD_MAX - 1)
		c[n++] = 'x'; /* exactly the most a command may have */
	c[n] = '\0';
	return c;
}

/* Jobs of every shape and state: the round trip compares them all. */
static int many_shapes(struct gf_job **v)
{
	int n = 0;
	struct gf_job *j = v[n++] = job(1); /* pending, odd text */
	j->spec.command = odd_command();
	j->spec.output = gf_strdup("/scratch/%j/%r.%a.%n.out"); /* logs */
	j->spec.error = gf_strdup("/scratch/%j.err");
	snprintf(j->spec.name, sizeof(j->spec.name), "l'été \"quoted\" 漢");
	snprintf(j->spec.node_selector, sizeof(j->spec.node_selector),
		 "zone=a,k8s.io/arch=amd64");
	snprintf(j->spec.gpu_model, sizeof(j->spec.gpu_model), "h100-80gb");
	j->spec.max_runtime_s = 86400;
	snprintf(j->reason, sizeof(j->reason),
		 "quota: team 'ml' h100 8/8 — "
		 "waits");
	j = v[n++] = job(2); /* a running gang of 3 x 4 GPUs */
	j->spec.replicas = 3;
	j->spec.gpus = 4;
	j->spec.memory_mib = (int64_t)1 << 39;
	run_on(j, 4);
	j = v[n++] = job(3); /* a running share, a replica of a service */
	j->spec.gpus = 0;
	j->spec.gpu_milli = 250;
	snprintf(j->spec.service, sizeof(j->spec.service), "chat-llama");
	run_on(j, 7);
	j = v[n++] = job(4); /* a running MIG instance, preempted once */
	j->spec.gpus = 0;
	snprintf(j->spec.mig_profile, sizeof(j->spec.mig_profile), "1g.10gb");
	j->attempts = 1;
	j->preemptions = 1;
	run_on(j, 3);
	j = v[n++] = job(5); /* a running job without GPUs */
	j->spec.gpus = 0;
	j->spec.command = gf_strdup("");
	run_on(j, 0);
	j = v[n++] = job(6); /* failed, after an hour of GPU time */
	run_on(j, 1);
	finish(j, GF_JOB_FAILED, -9);
	j->gpu_ms = INT64_C(3600) * 1000;
	j = v[n++] = job(7); /* succeeded */
	run_on(j, 1);
	finish(j, GF_JOB_SUCCEEDED, 0);
	j = v[n++] = job(8); /* cancelled while pending */
	j->state = GF_JOB_CANCELLED;
	j->ended_ms = j->submitted_ms + 5;
	j = v[n++] = job(9); /* requeued twice, failed once, its last run's
				replica still completing on node-0 */
	j->spec.gpus = 2;
	run_on(j, 4);
	j->attempts = 3;
	j->requeues = 2;
	j->failures = 1;
	j->held = gf_calloc(2, sizeof(*j->held));
	j->nheld = 2;
	for (int k = 0; k < 2; k++) {
		j->held[k] = (struct gf_job_held){ .attempt = 2 + k,
						   .replica = 0,
						   .since_ms = 1700000009000LL,
						   .place = j->place[0] };
		snprintf(j->held[k].why, sizeof(j->held[k].why), "%s",
			 k ? "cancelled" : "requeued");
	}
	finish(j, GF_JOB_CANCELLED, 0);
	j = v[n++] = job((uint64_t)INT64_MAX); /* the largest seq */
	return n;
}

static void test_roundtrip(void **state)
{
	struct backend *b = begin(state);
	struct gf_job *v[16];
	struct list l = { .n = 0 };
	int n = many_shapes(v);
	struct gf_store *s = open_leader(b->url);
	uint64_t max = 1;
	struct gf_err e;
	assert_int_equal(gf_store_max_seq(s, &max, &e), 0);
	assert_int_equal(max, 0);
	write_ok(s, v, n);
	load_ok(s, &l);
	assert_int_equal(l.n, n);
	for (int i = 0; i < n; i++)
		same_job(v[i], l.v[i]);
	assert_int_equal(strlen(l.v[0]->spec.command), GF_JOB_CMD_MAX - 1);
	assert_int_equal(gf_store_max_seq(s, &max, &e), 0);
	assert_int_equal(max, (uint64_t)INT64_MAX);
	list_free(&l);
	for (int i = 0; i < n; i++)
		free_job(v[i]);
	gf_store_close(s);
}

static void test_update_by_seq(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_leader(b->url);
	struct gf_job *j = job(9), *k = job(10);
	struct gf_job *v[2] = { j, k };
	struct list l = { .n = 0 };
	write_ok(s, v, 2);
	run_on(j, 2); /* placed */
	write_ok(s, v, 1);
	load_ok(s, &l);
	assert_int_equal(l.n, 2);
	same_job(j, l.v[0]);
	same_job(k, l.v[1]);
	list_free(&l);
	finish(j, GF_JOB_SUCCEEDED, 0); /* ended: its placement goes */
	k->state = GF_JOB_CANCELLED;
	k->ended_ms = k->submitted_ms + 1;
	write_ok(s, v, 2);
	load_ok(s, &l);
	assert_int_equal(l.n, 2);
	same_job(j, l.v[0]);
	same_job(k, l.v[1]);
	assert_null(l.v[0]->place);
	list_free(&l);
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM jobs"), 2);
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM jobs WHERE "
					 "placement IS NULL"),
			 2);
	free_job(j);
	free_job(k);
	gf_store_close(s);
}

/* A batch that fails in its middle leaves nothing of itself. */
static void test_failed_batch(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_leader(b->url);
	struct gf_job *v[4] = { job(1), job(2), job(3), job(4) };
	struct list l = { .n = 0 };
	struct gf_err e;
	write_ok(s, v, 1);
	/* another program left a row that holds j3's id: j3's insert
	 * breaks the UNIQUE constraint after j1's update and j2's insert */
	raw_exec(b->url,
		 "INSERT INTO jobs SELECT 99, 'j3', name, team, class, "
		 "replicas, gpus, gpu_model, gpu_milli, mig_profile, "
		 "cpu_milli, memory_mib, node_selector, max_runtime_s, "
		 "command, state, reason, submitted_ms, started_ms, "
		 "ended_ms, attempts, preemptions, exit_code, block, "
		 "placement, gpu_ms, service, failures, requeues, held, "
		 "origin, array_job_id, array_task_id, array_max, "
		 "dependency, user_hold, output_path, error_path, "
		 "env, workdir, run_as "
		 "FROM jobs WHERE seq = 1");
	run_on(v[0], 0);
	assert_int_equal(store_write(s, v, 4, &e), GF_ECONFLICT);
	print_message("expected: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "job 'j3' (seq 3)"));
	assert_non_null(strstr(e.msg, b->kind == GF_STORE_SQLITE
					      ? "UNIQUE constraint failed"
					      : "duplicate key"));
	assert_true(gf_store_is_leading(s)); /* a refused batch: still */
	raw_exec(b->url, "DELETE FROM jobs WHERE seq = 99");
	load_ok(s, &l);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0]->state, GF_JOB_PENDING); /* not updated */
	list_free(&l);
	/* a job against the rules in the middle: refused before any SQL */
	gf_free(v[0]->place);
	v[0]->state = GF_JOB_PENDING;
	v[0]->block = -1;
	v[0]->started_ms = 0; /* a requeued job shows no start */
	v[2]->spec.gpu_milli = 1500;
	assert_int_equal(store_write(s, v, 4, &e), GF_EINVAL);
	print_message("expected: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "job 'j3' (seq 3)"));
	assert_non_null(strstr(e.msg, "'gpu_milli'"));
	v[2]->spec.gpu_milli = 0;
	v[1]->spec.command = gf_strdup("echo \xff\xfe");
	assert_int_equal(store_write(s, v, 4, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'command': not valid UTF-8"));
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM jobs"), 1);
	/* sizes of a batch */
	assert_int_equal(store_write(s, v, 0, &e), GF_EINVAL);
	assert_int_equal(store_write(s, v, GF_STORE_BATCH_MAX + 1, &e),
			 GF_EINVAL);
	for (int i = 0; i < 4; i++)
		free_job(v[i]);
	gf_store_close(s);
}

/* The largest batch in one transaction; one that fails in a late chunk
 * of PostgreSQL's pipeline (past the first 256) leaves nothing. */
static void test_big_batch(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_leader(b->url);
	int n = GF_STORE_BATCH_MAX;
	struct gf_job **v = gf_calloc((size_t)n + 600, sizeof(*v));
	struct gf_err e;
	for (int i = 0; i < n + 600; i++)
		v[i] = job((uint64_t)i + 1);
	write_ok(s, v, n);
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM jobs"), n);
	/* the next 600: a row elsewhere holds the id of the 550th */
	char sql[700];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO jobs SELECT 999999, 'j%d', name, team, class, "
		 "replicas, gpus, gpu_model, gpu_milli, mig_profile, "
		 "cpu_milli, memory_mib, node_selector, max_runtime_s, "
		 "command, state, reason, submitted_ms, started_ms, "
		 "ended_ms, attempts, preemptions, exit_code, block, "
		 "placement, gpu_ms, service, failures, requeues, held, "
		 "origin, array_job_id, array_task_id, array_max, "
		 "dependency, user_hold, output_path, error_path, "
		 "env, workdir, run_as "
		 "FROM jobs WHERE seq = 1",
		 n + 550);
	raw_exec(b->url, sql);
	assert_int_equal(store_write(s, v + n, 600, &e), GF_ECONFLICT);
	print_message("expected: %s\n", e.msg);
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM jobs"), n + 1);
	raw_exec(b->url, "DELETE FROM jobs WHERE seq = 999999");
	write_ok(s, v + n, 600); /* and the session still works */
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM jobs"), n + 600);
	for (int i = 0; i < n + 600; i++)
		free_job(v[i]);
	gf_free(v);
	gf_store_close(s);
}

static void test_reopen(void **state)
{
	struct backend *b = begin(state);
	struct gf_job *v[300];
	struct list l = { .n = 0 };
	struct gf_store *s = open_leader(b->url);
	for (int i = 0; i < 300; i++) {
		v[i] = job((uint64_t)i + 1);
		if (i % 3 == 0)
			run_on(v[i], i);
	}
	write_ok(s, v, 128);
	write_ok(s, v + 128, 172);
	gf_store_close(s);
	s = open_ok(b->url); /* a reader need not lead */
	load_ok(s, &l);
	assert_int_equal(l.n, 300);
	for (int i = 0; i < 300; i++)
		same_job(v[i], l.v[i]);
	list_free(&l);
	uint64_t max;
	struct gf_err e;
	assert_int_equal(gf_store_max_seq(s, &max, &e), 0);
	assert_int_equal(max, 300);
	/* a callback that stops: its value comes back, the rest freed */
	l.stop_at = 5;
	assert_int_equal(gf_store_load_jobs(s, collect, &l, &e), 7);
	assert_int_equal(l.n, 5);
	list_free(&l);
	for (int i = 0; i < 300; i++)
		free_job(v[i]);
	gf_store_close(s);
	if (b->kind == GF_STORE_SQLITE) { /* the state directory is 0700 */
		struct stat st;
		char dir[512];
		snprintf(dir, sizeof(dir), "%s", b->url + 7);
		*strrchr(dir, '/') = '\0';
		assert_int_equal(stat(dir, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0700);
	}
}

static void test_migrations_once(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_ok(b->url), *t = open_ok(b->url);
	gf_store_close(s);
	gf_store_close(t);
	s = open_ok(b->url);
	gf_store_close(s);
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM "
					 "schema_version"),
			 SCHEMA_COUNT);
	assert_int_equal(raw_i64(b->url, "SELECT MAX(version) FROM "
					 "schema_version"),
			 SCHEMA_LATEST);
	/* a database from a newer gpufleet is refused, untouched */
	raw_exec(b->url, "INSERT INTO schema_version VALUES (99, 0, 'future')");
	struct gf_err e;
	assert_int_equal(gf_store_open(b->url, &s, &e), GF_ENOTSUP);
	print_message("expected: %s\n", e.msg);
	assert_null(s);
	assert_non_null(strstr(e.msg, b->url));
	assert_non_null(strstr(e.msg, "schema version 99 is newer"));
}

/* Processes opening one fresh database at once migrate it once. */
static void test_concurrent_open(void **state)
{
	struct backend *b = begin(state);
	pid_t kids[4];
	for (int i = 0; i < 4; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (kids[i] == 0) {
			struct gf_store *s;
			struct gf_err e;
			int rc = gf_store_open(b->url, &s, &e);
			if (rc)
				fprintf(stderr, "child: %s\n", e.msg);
			else
				gf_store_close(s);
			_exit(rc ? 1 : 0);
		}
	}
	for (int i = 0; i < 4; i++) {
		int st;
		assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM "
					 "schema_version"),
			 SCHEMA_COUNT);
}

/* A database of the first release (schema 1: jobs without gpu_ms, no
 * nodes table) with a running job in it: opening it migrates to 2, the
 * job loads with no GPU time, and nodes can be kept. */
static void test_upgrade_from_1(void **state)
{
	struct backend *b = begin(state);
	const char *key = b->kind == GF_STORE_SQLITE ? "INTEGER" : "BIGINT";
	char ddl[2048];
	snprintf(ddl, sizeof(ddl),
		 "CREATE TABLE schema_version (version INTEGER NOT NULL "
		 "PRIMARY KEY, applied_ms BIGINT NOT NULL, what TEXT NOT "
		 "NULL);"
		 "CREATE TABLE jobs (seq %s NOT NULL PRIMARY KEY, id TEXT NOT "
		 "NULL UNIQUE, name TEXT NOT NULL, team TEXT NOT NULL, class "
		 "TEXT NOT NULL, replicas INTEGER NOT NULL, gpus INTEGER NOT "
		 "NULL, gpu_model TEXT NOT NULL, gpu_milli INTEGER NOT NULL, "
		 "mig_profile TEXT NOT NULL, cpu_milli INTEGER NOT NULL, "
		 "memory_mib BIGINT NOT NULL, node_selector TEXT NOT NULL, "
		 "max_runtime_s BIGINT NOT NULL, command TEXT, state TEXT NOT "
		 "NULL, reason TEXT NOT NULL, submitted_ms BIGINT NOT NULL, "
		 "started_ms BIGINT NOT NULL, ended_ms BIGINT NOT NULL, "
		 "attempts INTEGER NOT NULL, preemptions INTEGER NOT NULL, "
		 "exit_code INTEGER NOT NULL, block INTEGER NOT NULL, "
		 "placement TEXT);"
		 "CREATE INDEX jobs_state ON jobs (state);"
		 "INSERT INTO schema_version VALUES (1, 1, 'jobs');"
		 "INSERT INTO jobs VALUES (3, 'j3', 'old', 'ml', 'batch', 1, "
		 "2, '', 0, '', 1000, 1024, '', 0, 'sleep 1', 'running', '', "
		 "1700000000000, 1700000000500, 0, 1, 0, 0, 0, "
		 "'[{\"node\":\"n1\",\"gpus\":[0,1],\"gpu_milli\":1000,"
		 "\"mig_start\":-1}]')",
		 key);
	if (b->kind == GF_STORE_SQLITE) { /* the state directory first */
		struct gf_store *t = open_ok(b->url);
		gf_store_close(t);
		char db[512];
		snprintf(db, sizeof(db), "%s", b->url + 7);
		assert_int_equal(unlink(db), 0);
	}
	raw_exec(b->url, ddl);
	struct gf_store *s = open_leader(b->url);
	assert_int_equal(raw_i64(b->url, "SELECT MAX(version) FROM "
					 "schema_version"),
			 SCHEMA_LATEST);
	struct list l = { .n = 0 };
	load_ok(s, &l);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0]->id, "j3");
	assert_int_equal(l.v[0]->state, GF_JOB_RUNNING);
	assert_int_equal(l.v[0]->gpu_ms, 0);
	list_free(&l);
	struct gf_err e;
	assert_int_equal(gf_store_put_node(s, "n1", "{}", 2, 5, &e), 0);
	gf_store_close(s);
}

static void origins_are(const char *url, const enum gf_job_origin *want, int n)
{
	struct gf_store *s = open_ok(url);
	struct list l = { .n = 0 };
	load_ok(s, &l);
	assert_int_equal(l.n, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(l.v[i]->spec.origin, want[i]);
	list_free(&l);
	gf_store_close(s);
}

/* A job's origin is a column of its own: a client's job whose command
 * reads like a pod's ("k8s-pod UID NS/NAME") is still a client's after a
 * reopen (it was taken for a pod by its command), a pod's still a pod's.
 * A database of schema 4 gets the old prefix rule once, in migration 5. */
static void test_origin(void **state)
{
	struct backend *b = begin(state);
	struct gf_job *v[3] = { job(1), job(2), job(3) };
	v[0]->spec.command = gf_strdup("k8s-pod x y");
	v[1]->spec.command = gf_strdup("k8s-pod uid-2 ns/p");
	v[1]->spec.origin = GF_JOB_ORIGIN_K8S;
	v[2]->spec.command = gf_strdup("echo k8s-pod x");
	struct gf_store *s = open_leader(b->url);
	write_ok(s, v, 3);
	gf_store_close(s);
	const enum gf_job_origin now[3] = { GF_JOB_ORIGIN_API,
					    GF_JOB_ORIGIN_K8S,
					    GF_JOB_ORIGIN_API };
	origins_are(b->url, now, 3);
	assert_int_equal(raw_i64(b->url, "SELECT COUNT(*) FROM jobs WHERE "
					 "origin = 'k8s'"),
			 1);
	/* back to schema 4: no origin column */
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN origin");
	raw_exec(b->url, "DROP INDEX jobs_array"); /* and migration 6's */
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN array_job_id");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN array_task_id");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN array_max");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN dependency");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN user_hold");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN output_path");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN error_path");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN env");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN workdir");
	raw_exec(b->url, "ALTER TABLE jobs DROP COLUMN run_as");
	raw_exec(b->url, "DELETE FROM schema_version WHERE version >= 5");
	/* and schema 9's columns, which come back with it */
	raw_exec(b->url, "ALTER TABLE runs DROP COLUMN gpu_mask");
	raw_exec(b->url, "ALTER TABLE runs DROP COLUMN gpu_uuids");
	raw_exec(b->url, "ALTER TABLE runs DROP COLUMN mig_uuid");
	raw_exec(b->url, "ALTER TABLE runs DROP COLUMN mig_start");
	const enum gf_job_origin old[3] = { GF_JOB_ORIGIN_K8S,
					    GF_JOB_ORIGIN_K8S,
					    GF_JOB_ORIGIN_API };
	origins_are(b->url, old, 3);
	assert_int_equal(raw_i64(b->url, "SELECT MAX(version) FROM "
					 "schema_version"),
			 SCHEMA_LATEST);
	/* the rule ran once: j1 written as the client's again stays so */
	s = open_leader(b->url);
	write_ok(s, v, 1);
	gf_store_close(s);
	origins_are(b->url, now, 3);
	for (int i = 0; i < 3; i++)
		free_job(v[i]);
}

/* --- runs ------------------------------------------------------------ */

static struct gf_job_run run(uint64_t seq, int attempt, int replica,
			     int64_t gpu_ms)
{
	struct gf_job_run r = { .seq = seq,
				.attempt = attempt,
				.replica = replica,
				.started_ms = 1700000000000LL,
				.ended_ms = 1700000060000LL,
				.exit_code = 3,
				.gpu_ms = gpu_ms };
	snprintf(r.node, sizeof(r.node), "node-%d", replica);
	snprintf(r.reason, sizeof(r.reason), "exited");
	return r;
}

struct runs_seen {
	struct gf_job_run v[16];
	int n;
};

static int take_run(const struct gf_job_run *r, void *arg)
{
	struct runs_seen *rs = arg;
	assert_true(rs->n < 16);
	rs->v[rs->n++] = *r;
	return 0;
}

static void runs_ok(struct gf_store *s, struct runs_seen *rs)
{
	struct gf_err e;
	gf_err_clear(&e);
	rs->n = 0;
	if (gf_store_load_runs(s, take_run, rs, &e))
		fail_msg("load runs: %s", e.msg);
}

/* Jobs and their runs in one transaction; a run sent twice keeps the
 * first; a bad run refuses the whole batch; a corrupt row is named. */
static void test_runs(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_leader(b->url);
	struct gf_job *j = job(5);
	run_on(j, 0);
	finish(j, GF_JOB_FAILED, 3);
	j->gpu_ms = 60000;
	struct gf_job_run r[3] = { run(5, 1, 0, 60000), run(5, 1, 0, 999),
				   run(4, 2, 1, 0) };
	r[0].ngpus = 2;
	r[0].gpus[0] = 1;
	r[0].gpus[1] = 3;
	snprintf(r[0].gpu_uuids, sizeof(r[0].gpu_uuids), "GPU-1,GPU-3");
	snprintf(r[2].mig_uuid, sizeof(r[2].mig_uuid), "MIG-x");
	r[2].mig_start = 4;
	r[0].mig_start = -1;
	const struct gf_job *jobs[1] = { j };
	struct gf_store_batch batch = { jobs, 1, r, 1 };
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_store_commit(s, &batch, &e), 0);
	/* the same run again (another gpu_ms): the first stands */
	batch = (struct gf_store_batch){ NULL, 0, r + 1, 2 };
	assert_int_equal(gf_store_commit(s, &batch, &e), 0);
	struct runs_seen rs;
	runs_ok(s, &rs);
	assert_int_equal(rs.n, 2);
	assert_int_equal(rs.v[0].seq, 4); /* by seq */
	assert_int_equal(rs.v[0].attempt, 2);
	assert_int_equal(rs.v[0].replica, 1);
	assert_int_equal(rs.v[1].seq, 5);
	assert_int_equal(rs.v[1].gpu_ms, 60000);
	assert_int_equal(rs.v[1].exit_code, 3);
	assert_string_equal(rs.v[1].node, "node-0");
	assert_string_equal(rs.v[1].reason, "exited");
	assert_int_equal(rs.v[1].started_ms, 1700000000000LL);
	assert_int_equal(rs.v[1].ended_ms, 1700000060000LL);
	/* where it ran (schema 6): GPUs 1 and 3, their UUIDs, no MIG */
	assert_int_equal(rs.v[1].ngpus, 2);
	assert_int_equal(rs.v[1].gpus[0], 1);
	assert_int_equal(rs.v[1].gpus[1], 3);
	assert_string_equal(rs.v[1].gpu_uuids, "GPU-1,GPU-3");
	assert_string_equal(rs.v[1].mig_uuid, "");
	assert_int_equal(rs.v[0].ngpus, 0);
	assert_string_equal(rs.v[0].mig_uuid, "MIG-x");
	assert_int_equal(rs.v[0].mig_start, 4);
	assert_int_equal(rs.v[1].mig_start, -1);
	/* refusals: nothing of the batch written, not even its job */
	struct gf_job *k = job(6);
	const struct gf_job *kj[1] = { k };
	struct gf_job_run bad[] = { run(6, 0, 0, 1),  run(6, 1, -1, 1),
				    run(6, 1, 0, -5), run(6, 1, 0, 1),
				    run(6, 1, 0, 1),  run(6, 1, 0, 1),
				    run(6, 1, 0, 1) };
	bad[3].ended_ms = bad[3].started_ms - 1;
	bad[4].node[0] = '\0';
	bad[5].ngpus = 2; /* not ascending */
	bad[5].gpus[0] = 2;
	bad[5].gpus[1] = 2;
	memset(bad[6].gpu_uuids, 'x', sizeof(bad[6].gpu_uuids));
	const char *why[] = { "'attempt'",  "'replica'", "'gpu_ms'",
			      "'ended_ms'", "'node'",	 "'gpus'",
			      "'gpu_uuids'" };
	for (int i = 0; i < 7; i++) {
		batch = (struct gf_store_batch){ kj, 1, &bad[i], 1 };
		assert_int_equal(gf_store_commit(s, &batch, &e), GF_EINVAL);
		if (!strstr(e.msg, why[i]) || !strstr(e.msg, "run j6/"))
			fail_msg("expected %s in '%s'", why[i], e.msg);
	}
	batch = (struct gf_store_batch){ NULL, 0, NULL, 0 };
	assert_int_equal(gf_store_commit(s, &batch, &e), GF_EINVAL);
	struct list l = { .n = 0 };
	load_ok(s, &l);
	assert_int_equal(l.n, 1); /* job 6 was never written */
	assert_int_equal(l.v[0]->gpu_ms, 60000);
	list_free(&l);
	/* a corrupt row */
	raw_exec(b->url, "UPDATE runs SET gpu_mask = -1 WHERE seq = 5");
	gf_err_clear(&e);
	assert_int_equal(gf_store_load_runs(s, take_run, &rs, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "'gpu_mask'"));
	raw_exec(b->url, "UPDATE runs SET gpu_mask = 10 WHERE seq = 5");
	raw_exec(b->url, "UPDATE runs SET ended_ms = 5 WHERE seq = 4");
	rs.n = 0;
	gf_err_clear(&e);
	assert_int_equal(gf_store_load_runs(s, take_run, &rs, &e), GF_EPARSE);
	print_message("expected: %s\n", e.msg);
	assert_int_equal(rs.n, 0);
	assert_non_null(strstr(e.msg, "run j4/2/1"));
	free_job(j);
	free_job(k);
	gf_store_close(s);
}

/* --- services -------------------------------------------------------- */

struct svc_seen {
	char names[4][64], spec[4][128];
	int replicas[4], n;
};

static int take_svc(const char *name, const char *spec, size_t len,
		    int replicas, void *arg)
{
	struct svc_seen *ss = arg;
	assert_true(ss->n < 4);
	assert_int_equal(strlen(spec), len);
	snprintf(ss->names[ss->n], sizeof(ss->names[0]), "%s", name);
	snprintf(ss->spec[ss->n], sizeof(ss->spec[0]), "%s", spec);
	ss->replicas[ss->n++] = replicas;
	return 0;
}

/* Services kept by name with their spec and count, replaced, deleted;
 * a count out of range refused; a corrupt row named. */
static void test_services(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_leader(b->url), *t = open_ok(b->url);
	struct gf_err e;
	struct svc_seen ss = { .n = 0 };
	const char *spec = "{\"gpu_milli\":250,\"command\":\"serve\"}";
	assert_int_equal(
		gf_store_put_service(s, "chat", spec, strlen(spec), 3, 10, &e),
		0);
	assert_int_equal(
		gf_store_put_service(s, "chat", spec, strlen(spec), 5, 20, &e),
		0);
	assert_int_equal(gf_store_put_service(s, "embed", "{}", 2, 0, 20, &e),
			 0);
	assert_int_equal(gf_store_load_services(t, take_svc, &ss, &e), 0);
	assert_int_equal(ss.n, 2);
	assert_string_equal(ss.names[0], "chat");
	assert_string_equal(ss.spec[0], spec);
	assert_int_equal(ss.replicas[0], 5);
	assert_int_equal(ss.replicas[1], 0);
	assert_int_equal(gf_store_put_service(t, "x", "{}", 2, 1, 1, &e),
			 GF_ECONFLICT);
	assert_int_equal(gf_store_put_service(s, "x", "{}", 2, -1, 1, &e),
			 GF_EINVAL);
	assert_int_equal(gf_store_put_service(s, "x", "{}", 2,
					      GF_STORE_SERVICE_MAX + 1, 1, &e),
			 GF_EINVAL);
	assert_int_equal(gf_store_delete_service(s, "embed", &e), 0);
	ss.n = 0;
	assert_int_equal(gf_store_load_services(s, take_svc, &ss, &e), 0);
	assert_int_equal(ss.n, 1);
	raw_exec(b->url, "UPDATE services SET replicas = -4");
	ss.n = 0;
	assert_int_equal(gf_store_load_services(s, take_svc, &ss, &e),
			 GF_EPARSE);
	print_message("expected: %s\n", e.msg);
	assert_int_equal(ss.n, 0);
	assert_non_null(strstr(e.msg, "service 'chat'"));
	gf_store_close(t);
	gf_store_close(s);
}

/* --- nodes ----------------------------------------------------------- */

struct nodes_seen {
	char names[8][64];
	char inv[8][128];
	int64_t at[8];
	int n;
};

static int take_node(const char *name, const char *inv, size_t len, int64_t at,
		     void *arg)
{
	struct nodes_seen *ns = arg;
	assert_int_equal(strlen(inv), len);
	assert_true(ns->n < 8);
	snprintf(ns->names[ns->n], sizeof(ns->names[0]), "%s", name);
	snprintf(ns->inv[ns->n], sizeof(ns->inv[0]), "%s", inv);
	ns->at[ns->n++] = at;
	return 0;
}

static void nodes_ok(struct gf_store *s, struct nodes_seen *ns)
{
	struct gf_err e;
	gf_err_clear(&e);
	ns->n = 0;
	if (gf_store_load_nodes(s, take_node, ns, &e))
		fail_msg("load nodes: %s", e.msg);
}

/* Nodes kept by name, replaced whole, deleted; refused when bad or when
 * not leading; a corrupt row named and nothing handed over. */
struct drains {
	int n;
	char name[64], reason[GF_STORE_DRAIN_MAX];
};

static int take_drain(const char *name, const char *reason, void *arg)
{
	struct drains *d = arg;
	d->n++;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->reason, sizeof(d->reason), "%s", reason);
	return 0;
}

static void test_nodes(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_leader(b->url), *t = open_ok(b->url);
	struct nodes_seen ns;
	struct gf_err e;
	assert_int_equal(
		gf_store_put_node(s, "gpu-b", "{\"gpus\":[]}", 11, 100, &e), 0);
	const char *han = "{\"v\":\"漢\"}";
	assert_int_equal(
		gf_store_put_node(s, "gpu-a", han, strlen(han), 200, &e), 0);
	assert_int_equal(
		gf_store_put_node(s, "gpu-b", "{\"gpus\":[1]}", 12, 300, &e),
		0);
	nodes_ok(s, &ns);
	assert_int_equal(ns.n, 2);
	assert_string_equal(ns.names[0], "gpu-a"); /* by name */
	assert_string_equal(ns.inv[0], "{\"v\":\"漢\"}");
	assert_int_equal(ns.at[0], 200);
	assert_string_equal(ns.names[1], "gpu-b");
	assert_string_equal(ns.inv[1], "{\"gpus\":[1]}");
	assert_int_equal(ns.at[1], 300);
	/* a drain stays through another registration, a resume lifts it */
	assert_int_equal(gf_store_node_drain(s, "gpu-a", "cable swap", &e), 0);
	assert_int_equal(gf_store_put_node(s, "gpu-a", "{}", 2, 400, &e), 0);
	struct drains d = { 0 };
	assert_int_equal(gf_store_load_drains(s, take_drain, &d, &e), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.name, "gpu-a");
	assert_string_equal(d.reason, "cable swap");
	assert_int_equal(gf_store_node_drain(s, "gpu-a", NULL, &e), 0);
	d.n = 0;
	assert_int_equal(gf_store_load_drains(s, take_drain, &d, &e), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(
		gf_store_put_node(s, "gpu-a", han, strlen(han), 200, &e), 0);
	/* the standby reads, and may not write */
	nodes_ok(t, &ns);
	assert_int_equal(ns.n, 2);
	assert_int_equal(gf_store_put_node(t, "gpu-c", "{}", 2, 1, &e),
			 GF_ECONFLICT);
	assert_non_null(strstr(e.msg, "leader lock"));
	/* refusals, nothing written */
	char longname[64];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(gf_store_put_node(s, longname, "{}", 2, 1, &e),
			 GF_EINVAL);
	assert_int_equal(gf_store_put_node(s, "", "{}", 2, 1, &e), GF_EINVAL);
	assert_int_equal(gf_store_put_node(s, "x", "", 0, 1, &e), GF_EINVAL);
	assert_int_equal(gf_store_put_node(s, "x", "\xff", 1, 1, &e),
			 GF_EINVAL);
	assert_non_null(strstr(e.msg, "not valid UTF-8"));
	char *big = gf_malloc(GF_STORE_INVENTORY_MAX + 2);
	memset(big, ' ', GF_STORE_INVENTORY_MAX + 1);
	big[GF_STORE_INVENTORY_MAX + 1] = '\0';
	assert_int_equal(gf_store_put_node(s, "x", big,
					   GF_STORE_INVENTORY_MAX + 1, 1, &e),
			 GF_ETOOBIG);
	/* the largest fits */
	assert_int_equal(
		gf_store_put_node(s, "x", big, GF_STORE_INVENTORY_MAX, 1, &e),
		0);
	gf_free(big);
	assert_int_equal(gf_store_delete_node(s, "x", &e), 0);
	assert_int_equal(gf_store_delete_node(s, "never-was", &e), 0);
	nodes_ok(s, &ns);
	assert_int_equal(ns.n, 2);
	/* a corrupt row: named, nothing handed over */
	raw_exec(b->url, "UPDATE nodes SET inventory = '' WHERE name = "
			 "'gpu-b'");
	ns.n = 0;
	gf_err_clear(&e);
	assert_int_equal(gf_store_load_nodes(s, take_node, &ns, &e), GF_EPARSE);
	print_message("expected: %s\n", e.msg);
	assert_int_equal(ns.n, 0);
	assert_non_null(strstr(e.msg, "node 'gpu-b': no inventory"));
	gf_store_close(t);
	gf_store_close(s);
}

/* Poll gf_store_lead for up to ms; whether it led. */
static bool lead_within(struct gf_store *s, int ms)
{
	double t0 = gf_clock_ms();
	struct gf_err e;
	bool leading = false;
	while (gf_clock_ms() - t0 < ms) {
		int rc = gf_store_lead(s, &leading, &e);
		if (rc == 0 && leading)
			return true;
		if (rc)
			print_message("lead: %s\n", e.msg);
		usleep(50 * 1000);
	}
	return false;
}

/* Two stores on one database: one leads, the other writes nothing and
 * takes over when the first closes. */
static void test_lead(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *a = open_leader(b->url), *s = open_ok(b->url);
	struct gf_job *v[1] = { job(1) };
	struct gf_err e;
	bool leading = true;
	assert_int_equal(gf_store_lead(s, &leading, &e), 0);
	assert_false(leading);
	assert_false(gf_store_is_leading(s));
	assert_int_equal(store_write(s, v, 1, &e), GF_ECONFLICT);
	print_message("expected: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "leader lock"));
	assert_int_equal(gf_store_lead(a, &leading, &e), 0); /* still */
	assert_true(leading);
	write_ok(a, v, 1);
	gf_store_close(a);
	assert_true(lead_within(s, 5000));
	v[0]->state = GF_JOB_CANCELLED;
	v[0]->ended_ms = 1;
	v[0]->submitted_ms = 1;
	write_ok(s, v, 1);
	free_job(v[0]);
	gf_store_close(s);
}

/* The PostgreSQL backend holding the lock, found as an operator would. */
static int leader_backend(const char *url)
{
	char sql[400];
	snprintf(sql, sizeof(sql),
		 "SELECT pid FROM pg_locks JOIN pg_database d ON d.oid = "
		 "database WHERE d.datname = current_database() AND locktype = "
		 "'advisory' AND granted AND classid = %lld AND objid = %lld "
		 "AND objsubid = 1",
		 GF_STORE_PG_LOCK_KEY >> 32, GF_STORE_PG_LOCK_KEY & 0xffffffff);
	return (int)raw_i64(url, sql);
}

static void kill_leader_backend(const char *url)
{
	char sql[128];
	int pid = leader_backend(url);
	assert_true(pid > 0);
	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%d)", pid);
	raw_exec(url, sql);
}

/* SQLite: a leading process is killed with -9: the flock goes with it. */
static void sqlite_leader_dies(const char *url, struct gf_store *s)
{
	int fds[2];
	char c;
	bool leading;
	struct gf_err e;
	assert_int_equal(pipe(fds), 0);
	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		struct gf_store *t;
		if (gf_store_open(url, &t, &e) ||
		    gf_store_lead(t, &leading, &e) || !leading)
			_exit(1);
		if (write(fds[1], "l", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	assert_int_equal(gf_store_lead(s, &leading, &e), 0);
	assert_false(leading);
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	assert_int_equal(gf_store_lead(s, &leading, &e), 0);
	assert_true(leading);
}

/* PostgreSQL: the leader's session is killed (pg_terminate_backend): the
 * standby leads within seconds; the old leader's write fails, it reports
 * the loss once, reconnects and stands by. */
static void pg_leader_dies(const char *url, struct gf_store *s)
{
	struct gf_store *a = open_leader(url);
	struct gf_job *v[1] = { job(1) };
	struct gf_err e;
	bool leading = true;
	write_ok(a, v, 1);
	assert_int_equal(gf_store_lead(s, &leading, &e), 0);
	assert_false(leading);
	kill_leader_backend(url);
	double t0 = gf_clock_ms();
	assert_true(lead_within(s, 5000));
	print_message("standby led %.0f ms after the leader's session died\n",
		      gf_clock_ms() - t0);
	run_on(v[0], 0);
	assert_int_equal(store_write(a, v, 1, &e), GF_ECONFLICT);
	print_message("expected: %s\n", e.msg);
	assert_false(gf_store_is_leading(a));
	assert_int_equal(gf_store_lead(a, &leading, &e), 0); /* the loss */
	assert_false(leading);
	assert_int_equal(gf_store_lead(a, &leading, &e), 0); /* reconnects */
	assert_false(leading);				     /* s holds it */
	assert_int_equal(store_write(a, v, 1, &e), GF_ECONFLICT);
	write_ok(s, v, 1);
	/* a leader that learns of its death from gf_store_lead alone */
	gf_store_close(s);
	assert_true(lead_within(a, 5000));
	kill_leader_backend(url);
	usleep(200 * 1000);
	assert_int_equal(gf_store_lead(a, &leading, &e), 0);
	assert_false(leading);
	assert_true(lead_within(a, 5000)); /* nobody else: it leads again */
	struct list l = { .n = 0 };
	load_ok(a, &l);
	assert_int_equal(l.n, 1);
	same_job(v[0], l.v[0]);
	list_free(&l);
	free_job(v[0]);
	gf_store_close(a);
}

static void test_leader_dies(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_ok(b->url);
	if (b->kind == GF_STORE_SQLITE) {
		sqlite_leader_dies(b->url, s);
		gf_store_close(s);
	} else {
		pg_leader_dies(b->url, s); /* closes s */
	}
}

/* Rows another program broke: each a clear error naming the job. */
static void test_corrupt_rows(void **state)
{
	struct backend *b = begin(state);
	struct gf_store *s = open_leader(b->url);
	struct gf_job *v[2] = { job(1), job(2) };
	run_on(v[1], 0);
	write_ok(s, v, 2);
	static const struct {
		const char *set, *msg;
		bool sqlite_only;
	} bad[] = {
		{ "placement = '[{\"node\":'", "column 'placement': not JSON",
		  false },
		{ "placement = '[]'",
		  "column 'placement': expected an array of 1 replicas",
		  false },
		{ "placement = '[{\"node\":\"n\",\"gpus\":[0],\"gpu_milli\":"
		  "\"x\",\"mig_start\":-1}]'",
		  "replica 0: 'gpu_milli': expected an integer", false },
		{ "placement = '[{\"node\":\"n\",\"gpus\":[0],\"gpu_milli\":"
		  "1000,\"mig_start\":-1,\"extra\":1}]'",
		  "replica 0: unknown key 'extra'", false },
		{ "placement = '[{\"node\":\"n\",\"gpus\":[16],\"gpu_milli\":"
		  "1000,\"mig_start\":-1}]'",
		  "GPU index 16 bad or twice", false },
		{ "placement = NULL", "running with", false },
		{ "state = 'zombie'", "column 'state': unknown state 'zombie'",
		  false },
		{ "origin = 'mars'", "column 'origin': unknown origin 'mars'",
		  false },
		{ "id = 'j7'", "id is not j<seq>", false },
		{ "replicas = 0", "column 'replicas': expected 1 to 1024",
		  false },
		{ "gpus = 'many'", "column 'gpus': not an integer", true },
		{ "gpus = 4000000000", "column 'gpus': 4000000000 out of range",
		  true },
		{ "name = CAST(x'ff41' AS TEXT)",
		  "column 'name': not valid UTF-8", true },
		/* last: it needs the NOT NULL constraint gone */
		{ "team = NULL", "column 'team': NULL", false },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bad[i].sqlite_only && b->kind != GF_STORE_SQLITE)
			continue; /* PostgreSQL's types refuse it already */
		char sql[512];
		if (strncmp(bad[i].set, "team = NULL", 11) == 0) {
			/* a careless hand drops the constraint (SQLite:
			 * by rebuilding the table) */
			raw_exec(b->url,
				 b->kind == GF_STORE_SQLITE
					 ? "CREATE TABLE j2 AS SELECT * FROM "
					   "jobs; DROP TABLE jobs; ALTER TABLE "
					   "j2 RENAME TO jobs"
					 : "ALTER TABLE jobs ALTER COLUMN team "
					   "DROP NOT NULL");
		}
		snprintf(sql, sizeof(sql), "UPDATE jobs SET %s WHERE seq = 2",
			 bad[i].set);
		raw_exec(b->url, sql);
		struct list l = { .n = 0 };
		struct gf_err e;
		gf_err_clear(&e);
		assert_int_equal(gf_store_load_jobs(s, collect, &l, &e),
				 GF_EPARSE);
		print_message("expected: %s\n", e.msg);
		assert_int_equal(l.n, 0); /* nothing handed over */
		if (!strstr(e.msg, bad[i].msg) || !strstr(e.msg, "seq 2"))
			fail_msg("'%s': expected '%s' about seq 2, got '%s'",
				 bad[i].set, bad[i].msg, e.msg);
		if (i + 1 < sizeof(bad) / sizeof(bad[0]))
			write_ok(s, v + 1, 1); /* the good row again */
	}
	free_job(v[0]);
	free_job(v[1]);
	gf_store_close(s);
}

static void expect_open_fails(const char *url, int code, const char *msg)
{
	struct gf_store *s = (struct gf_store *)1;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_store_open(url, &s, &e);
	print_message("expected: %s\n", e.msg);
	assert_null(s);
	if (code)
		assert_int_equal(rc, code);
	else
		assert_true(rc < 0);
	if (!strstr(e.msg, msg))
		fail_msg("'%s': expected '%s' in '%s'", url, msg, e.msg);
}

static void test_bad_urls(void **state)
{
	struct backend *b = *state;
	char path[512], url[600];
	expect_open_fails("mysql://x/y", GF_EINVAL,
			  "'mysql://x/y': expected sqlite:PATH or postgres://");
	expect_open_fails("sqlite:", GF_EINVAL, "expected sqlite:PATH");
	snprintf(path, sizeof(path), "%s/a-file", b->tmp);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(url, sizeof(url), "sqlite:%s/jobs.db", path);
	expect_open_fails(url, 0, "a-file");
	/* refused at once; the password never shows */
	expect_open_fails("postgres://gf:s3cret@127.0.0.1:1/db", GF_ECONFLICT,
			  "'postgres://gf:***@127.0.0.1:1/db': cannot connect");
	expect_open_fails(
		"postgresql://127.0.0.1:1/db?password=s3cret&sslmode=disable",
		GF_ECONFLICT, "password=***&sslmode=disable");
	/* a server that accepts and never answers: the connect timeout */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(url, sizeof(url),
		 "postgres://gf@127.0.0.1:%d/db?connect_timeout=2",
		 ntohs(sa.sin_port));
	/* it gives up by its connect timeout (said), not by a time a test
	 * would measure */
	expect_open_fails(url, GF_ECONFLICT, "timeout");
	close(fd);
}

#define BOTH(f, name)                                  \
	{ "sqlite/" name, f, NULL, NULL, &sqlite_b },  \
	{                                              \
		"postgres/" name, f, NULL, NULL, &pg_b \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_roundtrip, "roundtrip"),
		BOTH(test_update_by_seq, "update_by_seq"),
		BOTH(test_failed_batch, "failed_batch"),
		BOTH(test_big_batch, "big_batch"),
		BOTH(test_reopen, "reopen"),
		BOTH(test_migrations_once, "migrations_once"),
		BOTH(test_concurrent_open, "concurrent_open"),
		BOTH(test_upgrade_from_1, "upgrade_from_1"),
		BOTH(test_origin, "origin"),
		BOTH(test_nodes, "nodes"),
		BOTH(test_runs, "runs"),
		BOTH(test_services, "services"),
		BOTH(test_lead, "lead"),
		BOTH(test_leader_dies, "leader_dies"),
		BOTH(test_corrupt_rows, "corrupt_rows"),
		{ "bad_urls", test_bad_urls, NULL, NULL, &sqlite_b },
	};
	/* one case: TEST_FILTER='postgres/lead*' build/tests/test_store */
	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests_name("store", tests, setup, teardown);
}
