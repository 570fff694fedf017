/*
 * test_serve_nodes.c - the node agents' routes of the controller
 * (PUT /v1/nodes/{name}, POST .../heartbeat, GET .../assignments, GET
 * /v1/nodes[/{name}]) against a real service on a loopback port the
 * kernel picks, with a real store: SQLite in a temp dir, or a fresh
 * database on the PostgreSQL server named by $GF_TEST_DB (created here,
 * dropped at the end; tests/integration/serve.sh runs this suite on
 * one), nodes only from agents (--agents).
 *
 * The agents are played here: each registers with the node protocol's
 * own writers, and a pump thread heartbeats every agent that is alive
 * every 200 ms with what it has applied and runs (the agent's level
 * state), so that nodes stay ready under the config's short times
 * (heartbeat 1 s, NotReady after 2 s, requeued after 8 s) however slow
 * the machine.  A test that sends a heartbeat of its own holds the
 * pump's lock while it changes its agent and sends, so that no pump
 * heartbeat crosses it.  Each node carries a label t=ITS-NAME and its
 * test's jobs select it, so tests sharing the service never share
 * nodes.
 *
 * Timing: every wait polls against a deadline; the one sleep that lets
 * silence pass is checked only from below (NotReady no sooner than 2 s
 * after the last heartbeat, the requeue no sooner than 8 s), so a slow
 * machine can only make it pass later, never fail.
 */
#include <inttypes.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>

#include "controller/service.h"
#include "nodeproto/nodeproto.h"
#include "serve_helpers.h"
#include "util/mem.h"

#define ADMIN "adminadminadmin0001"
#define TOKA  "nodetokenaaaaaa0001"
#define TOKB  "nodetokenbbbbbb0002"
#define TOKC  "nodetokencccccc0004" /* node PFX-f2-a's */
#define TEAM  "teamteamteamtea0003"

#define DEADLINE_MS 30000 /* for anything that should happen "soon" */

static char dir[64], db[256], cfgpath[128], tokpath[128];
static char pg_admin[256], pg_name[64]; /* PostgreSQL: the server's URL
					   given, our database */
static char pfx[16];			/* node names: PFX-NAME, new per run */
static struct gf_serve_config cfg;
static struct gf_auth auth;
static struct gf_service *svc;

static const char config_text[] = "agents:\n"
				  "  heartbeat_s: 1\n"
				  "  notready_after_s: 2\n"
				  "  requeue_after_s: 8\n"
				  "  kill_grace_s: 1\n";

/* ---- the agents ----------------------------------------------------- */

#define MAX_AGENTS 16
#define MAX_RUN	   8

struct agent {
	char name[GF_NODE_NAME_MAX];
	char tag[GF_NODE_NAME_MAX]; /* its label t=TAG (its name), its jobs'
				       selector */
	const char *token;	    /* what it calls with */
	int ngpus;
	bool beating;	  /* the pump heartbeats it */
	uint64_t applied; /* the generation it has acted on */
	int nrun;
	struct gf_np_ref run[MAX_RUN]; /* what it runs */
};

/* alock: the agents and `base`; held by the pump for a whole round */
static pthread_mutex_t alock = PTHREAD_MUTEX_INITIALIZER;
static struct agent agents[MAX_AGENTS];
static int nagents;
static pthread_t pump_tid;
static atomic_bool pump_stop;

static struct agent *agent_new(const char *tag, int ngpus, const char *token)
{
	pthread_mutex_lock(&alock);
	assert_true(nagents < MAX_AGENTS);
	struct agent *a = &agents[nagents++];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s-%s", pfx, tag);
	memcpy(a->tag, a->name, sizeof(a->tag));
	a->token = token;
	a->ngpus = ngpus;
	pthread_mutex_unlock(&alock);
	return a;
}

/* The heartbeat members of a (and x's health and reports) into j. */
static void hb_members(struct gf_json *j, struct agent *a,
		       const struct gf_np_heartbeat *x)
{
	struct gf_np_heartbeat hb;
	if (x)
		hb = *x;
	else
		memset(&hb, 0, sizeof(hb));
	hb.generation = a->applied;
	hb.nrunning = a->nrun;
	hb.running = a->run;
	gf_np_heartbeat_write(j, &hb);
}

/* A heartbeat body (caller frees). */
static char *hb_body(struct agent *a, const struct gf_np_heartbeat *x)
{
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 1u << 20);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	hb_members(&j, a, x);
	gf_json_obj_end(&j);
	char *s = gf_strndup(b.data, b.len);
	gf_buf_release(&b);
	return s;
}

static void *pump(void *arg)
{
	(void)arg;
	while (!atomic_load(&pump_stop)) {
		pthread_mutex_lock(&alock);
		for (int i = 0; i < nagents; i++) {
			struct agent *a = &agents[i];
			if (!a->beating)
				continue;
			char path[128], *body = hb_body(a, NULL);
			snprintf(path, sizeof(path), "/v1/nodes/%.*s/heartbeat",
				 GF_NODE_NAME_MAX - 1, a->name);
			long st;
			struct gf_err e;
			http_try(base, GF_HTTP_POST, path, a->token, body,
				 strlen(body), 2000, &st, NULL, &e);
			gf_free(body);
		}
		pthread_mutex_unlock(&alock);
		sleep_ms(200);
	}
	return NULL;
}

/* A heartbeat from a now, with x's health and reports (NULL none):
 * call with alock held.  The status; *ack read when 200 (ack may be
 * NULL). */
static long beat_locked(struct agent *a, const struct gf_np_heartbeat *x,
			struct gf_np_ack *ack)
{
	char path[128], *body = hb_body(a, x);
	snprintf(path, sizeof(path), "/v1/nodes/%s/heartbeat", a->name);
	struct gf_jv *v;
	long st = 0;
	struct gf_err e;
	int rc = http_try(base, GF_HTTP_POST, path, a->token, body,
			  strlen(body), 0, &st, &v, &e);
	gf_free(body);
	if (rc)
		print_message("heartbeat: %s\n", e.msg);
	assert_int_equal(rc, 0);
	if (st == 200 && ack) {
		rc = gf_np_ack_read(v, ack, &e);
		if (rc)
			print_message("ack: %s\n", e.msg);
		assert_int_equal(rc, 0);
	} else if (st != 200) {
		print_message("heartbeat: %ld %s\n", st,
			      v ? str(v, "detail") : "");
	}
	gf_jv_free(v);
	return st;
}

static long beat(struct agent *a, const struct gf_np_heartbeat *x,
		 struct gf_np_ack *ack)
{
	pthread_mutex_lock(&alock);
	long st = beat_locked(a, x, ack);
	pthread_mutex_unlock(&alock);
	return st;
}

/* a's PUT body: its inventory (ngpus H100s, UUIDs GPU-NAME-G, label
 * t=TAG) and its heartbeat members. */
static char *put_body(struct agent *a)
{
	struct gf_np_inventory *inv = gf_calloc(1, sizeof(*inv));
	snprintf(inv->address, sizeof(inv->address), "%s.example", a->name);
	snprintf(inv->version, sizeof(inv->version), "test");
	snprintf(inv->labels, sizeof(inv->labels), "t=%s", a->tag);
	inv->cpu_milli = 64000;
	inv->memory_mib = 524288;
	snprintf(inv->gpu_model, sizeof(inv->gpu_model), "h100-sxm");
	gf_np_inventory_room(inv, a->ngpus, 0);
	inv->ngpus = a->ngpus;
	for (int g = 0; g < a->ngpus; g++) {
		inv->gpus[g].index = g;
		snprintf(inv->gpus[g].uuid, sizeof(inv->gpus[g].uuid),
			 "GPU-%s-%d", a->name, g);
		snprintf(inv->gpus[g].name, sizeof(inv->gpus[g].name),
			 "NVIDIA H100 80GB HBM3");
		inv->gpus[g].memory_mib = 81559;
		inv->gpus[g].healthy = true;
	}
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 1u << 20);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	static const char topology[] = "{\"gpus\": [], \"source\": \"test\"}";
	gf_np_inventory_write(&j, inv, topology, strlen(topology));
	hb_members(&j, a, NULL);
	gf_json_obj_end(&j);
	char *s = gf_strndup(b.data, b.len);
	gf_buf_release(&b);
	gf_np_inventory_free(inv);
	return s;
}

/* a registers (200, the ack's fields checked) and is heartbeaten from
 * then on.  The ack's generation. */
static uint64_t register_agent(struct agent *a)
{
	char path[128], *body = put_body(a);
	snprintf(path, sizeof(path), "/v1/nodes/%s", a->name);
	struct gf_jv *v;
	long st = http(GF_HTTP_PUT, path, a->token, body, &v);
	gf_free(body);
	if (st != 200)
		print_message("register %s: %ld %s\n", a->name, st,
			      v ? str(v, "detail") : "");
	assert_int_equal(st, 200);
	assert_string_equal(str(v, "name"), a->name);
	struct gf_np_ack ack;
	struct gf_err e;
	assert_int_equal(gf_np_ack_read(v, &ack, &e), 0);
	assert_string_equal(ack.state, "ready");
	assert_true(ack.generation > 0);
	assert_int_equal(ack.heartbeat_ms, 1000);
	/* agents never fence unless the config says fence: true */
	assert_int_equal(ack.fence_after_ms, 0);
	assert_int_equal(ack.nacked, 0);
	gf_np_ack_release(&ack);
	gf_jv_free(v);
	pthread_mutex_lock(&alock);
	a->beating = true;
	pthread_mutex_unlock(&alock);
	return ack.generation;
}

/* GET .../assignments?wait=WAIT&after=AFTER without assertions (for a
 * thread): 0 with *status and, when 200, *out read (release it). */
static int poll_try(const struct agent *a, const char *at, uint64_t after,
		    const char *wait, long client_ms, long *status,
		    struct gf_np_assignments *out, struct gf_err *e)
{
	char path[192];
	snprintf(path, sizeof(path),
		 "/v1/nodes/%s/assignments?wait=%s&after=%" PRIu64, a->name,
		 wait, after);
	struct gf_jv *v;
	memset(out, 0, sizeof(*out));
	int rc = http_try(at, GF_HTTP_GET, path, a->token, NULL, 0, client_ms,
			  status, &v, e);
	if (rc == 0 && *status == 200)
		rc = v ? gf_np_assignments_read(v, out, e) : GF_EPARSE;
	gf_jv_free(v);
	return rc;
}

static long poll_within(const struct agent *a, uint64_t after, const char *wait,
			long client_ms, struct gf_np_assignments *out)
{
	long st = 0;
	struct gf_err e;
	int rc = poll_try(a, base, after, wait, client_ms, &st, out, &e);
	if (rc)
		print_message("poll: %s\n", e.msg);
	assert_int_equal(rc, 0);
	return st;
}

static long poll_asg(const struct agent *a, uint64_t after, const char *wait,
		     struct gf_np_assignments *out)
{
	return poll_within(a, after, wait, 90000, out);
}

/* A poll the server must answer at once: its wait is the longest there
 * is (60 s), the client gives up after 20 s, so an answer at all says it
 * was not parked for its wait. */
static long poll_at_once(const struct agent *a, uint64_t after,
			 struct gf_np_assignments *out)
{
	return poll_within(a, after, "60s", 20000, out);
}

static const struct gf_np_assignment *
find_asg(const struct gf_np_assignments *s, const char *id)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].ref.job, id))
			return &s->v[i];
	return NULL;
}

/* Long-poll a's assignments until job id is there (with attempt, when
 * attempt > 0): *out holds them (release it). */
static void wait_assigned(const struct agent *a, const char *id, int attempt,
			  struct gf_np_assignments *out)
{
	int64_t end = mono_ms() + DEADLINE_MS;
	uint64_t after = 0;
	while (mono_ms() < end) {
		assert_int_equal(poll_asg(a, after, "2s", out), 200);
		const struct gf_np_assignment *x = find_asg(out, id);
		if (x && (attempt == 0 || x->ref.attempt == attempt))
			return;
		after = out->generation;
		gf_np_assignments_release(out);
	}
	fail_msg("job %s never assigned to %s", id, a->name);
}

/* a acts on s: applies its generation and runs every replica in it. */
static void apply(struct agent *a, const struct gf_np_assignments *s)
{
	pthread_mutex_lock(&alock);
	a->applied = s->generation;
	a->nrun = 0;
	for (int i = 0; i < s->n && a->nrun < MAX_RUN; i++)
		a->run[a->nrun++] = s->v[i].ref;
	pthread_mutex_unlock(&alock);
}

/* ---- jobs and nodes ----------------------------------------------- */

/* Submit a job for a's nodes: its id. */
static void submit(const char *tag, const char *extra, char *id, size_t size)
{
	char body[256];
	snprintf(body, sizeof(body),
		 "{\"gpus\": 1, %s\"node_selector\": {\"t\": \"%s\"}%s%s}",
		 /* every job runs a command (issue 21): "true" unless said */
		 extra && strstr(extra, "\"command\"")
			 ? ""
			 : "\"command\": \"true\", ",
		 tag, extra ? ", " : "", extra ? extra : "");
	struct gf_jv *v;
	long st = http(GF_HTTP_POST, "/v1/jobs", ADMIN, body, &v);
	if (st != 201)
		print_message("submit %s: %ld %s\n", body, st,
			      v ? str(v, "detail") : "");
	assert_int_equal(st, 201);
	snprintf(id, size, "%s", str(v, "id"));
	gf_jv_free(v);
}

static struct gf_jv *job_get(const char *id)
{
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_GET, path, ADMIN, NULL, &v), 200);
	assert_non_null(v);
	return v;
}

/* Wait until job id is in state: the job (caller frees). */
static struct gf_jv *wait_job(const char *id, const char *state)
{
	int64_t end = mono_ms() + DEADLINE_MS;
	for (;;) {
		struct gf_jv *v = job_get(id);
		if (!strcmp(str(v, "state"), state))
			return v;
		if (mono_ms() > end) {
			print_message("job %s: %s (attempts %lld): %s\n", id,
				      str(v, "state"),
				      (long long)num(v, "attempts"),
				      str(v, "reason"));
			gf_jv_free(v);
			fail_msg("job %s never reached %s", id, state);
			return NULL;
		}
		gf_jv_free(v);
		sleep_ms(20);
	}
}

static double gpu_seconds(const struct gf_jv *job)
{
	double x = -1;
	assert_true(gf_jv_num(gf_jv_get(job, "gpu_seconds"), &x));
	return x;
}

/* GET /v1/nodes: the list (caller frees) and *node the one named (NULL
 * when absent). */
static struct gf_jv *node_list(const char *name, const struct gf_jv **node)
{
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_GET, "/v1/nodes", ADMIN, NULL, &v), 200);
	const struct gf_jv *nodes = gf_jv_get(v, "nodes");
	assert_int_equal(gf_jv_type(nodes), GF_JV_ARR);
	*node = NULL;
	for (size_t i = 0; i < gf_jv_len(nodes); i++)
		if (!strcmp(str(gf_jv_at(nodes, i), "name"), name))
			*node = gf_jv_at(nodes, i);
	return v;
}

/* N of a silent node's reason "no heartbeat for N s...": the silence
 * the controller measured; -1 when the reason says no such thing. */
static long silence_s(const char *reason)
{
	const char *p = strstr(reason, "no heartbeat for ");
	if (p == NULL)
		return -1;
	char *end;
	long s = strtol(p + strlen("no heartbeat for "), &end, 10);
	return strncmp(end, " s", 2) ? -1 : s;
}

static bool node_in_state(const char *name, const char *state)
{
	const struct gf_jv *n;
	struct gf_jv *v = node_list(name, &n);
	bool yes = n && !strcmp(str(n, "state"), state);
	gf_jv_free(v);
	return yes;
}

/* ---- the service -------------------------------------------------- */

static void start(void)
{
	gf_serve_config_defaults(&cfg);
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_serve_config_read(cfgpath, &cfg, &e);
	if (rc)
		print_message("config: %s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(gf_auth_read(tokpath, &auth, &e), 0);
	struct gf_service_opts o = { .listen = "127.0.0.1:0",
				     .db = db,
				     .cfg = &cfg,
				     .auth = &auth,
				     .agents_only = true,
				     .tick_ms = 20 };
	rc = gf_service_start(&svc, &o, &e);
	if (rc)
		print_message("start: %s\n", e.msg);
	assert_int_equal(rc, 0);
	pthread_mutex_lock(&alock);
	snprintf(base, sizeof(base), "%s", gf_service_url(svc));
	base[strlen(base) - 1] = '\0'; /* no trailing '/' */
	pthread_mutex_unlock(&alock);
}

static void stop(void)
{
	gf_service_stop(svc);
	svc = NULL;
	gf_auth_release(&auth);
	gf_serve_config_release(&cfg);
}

/* sql on the PostgreSQL server given: true when it went through. */
static bool pg_exec(const char *sql)
{
	PGconn *c = PQconnectdb(pg_admin);
	bool ok = PQstatus(c) == CONNECTION_OK;
	if (ok) {
		PGresult *r = PQexec(c, sql);
		ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (!ok)
			print_message("%s: %s\n", sql, PQresultErrorMessage(r));
		PQclear(r);
	} else {
		print_message("connect: %s\n", PQerrorMessage(c));
	}
	PQfinish(c);
	return ok;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gf-nodes-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(pfx, sizeof(pfx), "np%d", (int)(getpid() % 100000));
	const char *pg = getenv("GF_TEST_DB");
	if (pg && *pg) {
		/* a database of our own: a store another suite used holds
		 * jobs that would compete for our nodes */
		snprintf(pg_admin, sizeof(pg_admin), "%s", pg);
		const char *slash = strrchr(pg_admin, '/');
		assert_non_null(slash);
		snprintf(pg_name, sizeof(pg_name), "gf_nodes_%d_%lld",
			 (int)getpid(), (long long)time(NULL));
		char sql[128];
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", pg_name);
		assert_true(pg_exec(sql));
		snprintf(db, sizeof(db), "%.*s/%s", (int)(slash - pg_admin),
			 pg_admin, pg_name);
	} else {
		snprintf(db, sizeof(db), "sqlite:%s/state/jobs.db", dir);
	}
	snprintf(cfgpath, sizeof(cfgpath), "%s/serve.yaml", dir);
	snprintf(tokpath, sizeof(tokpath), "%s/tokens", dir);
	write_text(cfgpath, config_text);
	char tokens[512];
	snprintf(tokens, sizeof(tokens),
		 ADMIN " admin\n" TOKA " node:%s-tok-a\n" TOKB
		       " node:%s-tok-b\n" TEAM " team:vision\n" TOKC
		       " node:%s-f2-a\n",
		 pfx, pfx, pfx);
	write_text(tokpath, tokens);
	start();
	atomic_store(&pump_stop, false);
	assert_int_equal(pthread_create(&pump_tid, NULL, pump, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	atomic_store(&pump_stop, true);
	pthread_join(pump_tid, NULL);
	if (svc)
		stop();
	if (pg_name[0]) {
		char sql[128];
		snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s",
			 pg_name);
		pg_exec(sql);
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the tests ------------------------------------------------------ */

/* A node registers (the ack), is listed ready with its GPUs' UUIDs, and
 * GET /v1/nodes/{name} gives its inventory back; registering again the
 * same changes nothing. */
static void test_register(void **state)
{
	(void)state;
	struct agent *a = agent_new("reg", 2, ADMIN);
	uint64_t gen = register_agent(a);
	const struct gf_jv *n;
	struct gf_jv *v = node_list(a->name, &n);
	assert_non_null(n);
	assert_string_equal(str(n, "state"), "ready");
	const struct gf_jv *gpus = gf_jv_get(n, "gpus");
	assert_int_equal(gf_jv_len(gpus), 2);
	for (size_t g = 0; g < 2; g++) {
		const struct gf_jv *x = gf_jv_at(gpus, g);
		char uuid[96];
		snprintf(uuid, sizeof(uuid), "GPU-%s-%zu", a->name, g);
		assert_int_equal(num(x, "index"), (int64_t)g);
		assert_string_equal(str(x, "uuid"), uuid);
		bool healthy = false;
		assert_true(gf_jv_bool(gf_jv_get(x, "healthy"), &healthy));
		assert_true(healthy);
	}
	assert_string_equal(str(gf_jv_get(n, "labels"), "t"), a->name);
	gf_jv_free(v);

	char path[128];
	snprintf(path, sizeof(path), "/v1/nodes/%s", a->name);
	assert_int_equal(http(GF_HTTP_GET, path, ADMIN, NULL, &v), 200);
	assert_string_equal(str(v, "name"), a->name);
	assert_string_equal(str(v, "state"), "ready");
	const struct gf_jv *inv = gf_jv_get(v, "inventory");
	assert_string_equal(str(inv, "gpu_model"), "h100-sxm");
	assert_int_equal(gf_jv_len(gf_jv_get(inv, "gpus")), 2);
	assert_string_equal(str(gf_jv_get(inv, "topology"), "source"), "test");
	gf_jv_free(v);

	/* the same inventory again: 200, ready, the same generation */
	char *body = put_body(a);
	assert_int_equal(http(GF_HTTP_PUT, path, ADMIN, body, &v), 200);
	gf_free(body);
	assert_string_equal(str(v, "state"), "ready");
	assert_int_equal(num(v, "generation"), (int64_t)gen);
	gf_jv_free(v);
}

struct bg_poll {
	const struct agent *a;
	char at[128];
	uint64_t after;
	int rc;
	long status;
	struct gf_np_assignments got;
	bool finished; /* under alock */
};

/* The parked poll waits 60 s, the longest there is, and its client gives
 * up after 20 s: answered at all, it was woken by a change. */
static void *bg_poll_run(void *arg)
{
	struct bg_poll *p = arg;
	struct gf_err e;
	p->rc = poll_try(p->a, p->at, p->after, "60s", 20000, &p->status,
			 &p->got, &e);
	pthread_mutex_lock(&alock);
	p->finished = true;
	pthread_mutex_unlock(&alock);
	return NULL;
}

/* The long poll: after=0 answers at once; after=the generation waits
 * out its wait when nothing changes, and is answered as soon as a job is
 * placed on the node, long before its wait.  No clock is read: "at once"
 * and "woken" are answers that came although the wait was longer than
 * the client's patience, and "parked" is a poll still unanswered after
 * another one's whole (shorter) wait ended. */
/* The value of a counter (no labels) on /metrics, -1 when absent. */
static long long metric(const char *name)
{
	char url[256];
	snprintf(url, sizeof(url), "%s/metrics", base);
	struct gf_client_req q = { .url = url };
	struct gf_client_answer ans;
	struct gf_err e;
	assert_int_equal(gf_client_request(NULL, &q, &ans, &e), 0);
	long long v = -1;
	char key[128];
	snprintf(key, sizeof(key), "\n%s ", name);
	const char *at = strstr(gf_buf_str(&ans.body), key);
	if (at)
		v = strtoll(at + strlen(key), NULL, 10);
	gf_client_answer_release(&ans);
	return v;
}

#define POLLS_HERE "gpufleet_agent_polls_total{path=\"arrival\"}"
#define POLLS_TURN "gpufleet_agent_polls_total{path=\"turn\"}"

static void test_long_poll(void **state)
{
	(void)state;
	struct agent *a = agent_new("poll", 2, ADMIN);
	register_agent(a);
	struct gf_np_assignments s;
	assert_int_equal(poll_at_once(a, 0, &s), 200);
	uint64_t gen = s.generation;
	assert_true(gen > 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.nlayouts, 0);
	gf_np_assignments_release(&s);

	/* a poll parked until the node changes */
	struct bg_poll p = { .a = a, .after = gen };
	pthread_mutex_lock(&alock);
	snprintf(p.at, sizeof(p.at), "%s", base);
	pthread_mutex_unlock(&alock);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, bg_poll_run, &p), 0);
	/* nothing changes: another poll is answered at the end of its
	 * wait, unchanged, and the first is still parked */
	assert_int_equal(poll_asg(a, gen, "600ms", &s), 200);
	assert_true(s.generation == gen);
	assert_int_equal(s.n, 0);
	gf_np_assignments_release(&s);
	pthread_mutex_lock(&alock);
	bool early = p.finished;
	pthread_mutex_unlock(&alock);
	assert_false(early);
	/* a job placed there wakes it */
	char id[32];
	submit(a->tag, NULL, id, sizeof(id));
	pthread_join(t, NULL);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.status, 200);
	assert_true(p.got.generation > gen);
	assert_int_equal(p.got.n, 1);
	const struct gf_np_assignment *x = &p.got.v[0];
	assert_string_equal(x->ref.job, id);
	assert_int_equal(x->ref.attempt, 1);
	assert_int_equal(x->ref.replica, 0);
	assert_int_equal(x->place.ngpus, 1);
	char uuid[96];
	snprintf(uuid, sizeof(uuid), "GPU-%s-%d", a->name, x->place.gpus[0]);
	assert_string_equal(x->uuids[0], uuid);
	assert_int_equal(x->place.gpu_milli, 1000);
	assert_int_equal(x->world_size, 1);
	assert_false(x->mig);
	gf_np_assignments_release(&p.got);
	/* asked again after an older generation: at once; after what it
	 * got: it waits again, to the end of its wait, unchanged */
	assert_int_equal(poll_at_once(a, gen, &s), 200);
	uint64_t now_gen = s.generation;
	assert_true(now_gen > gen);
	gf_np_assignments_release(&s);
	long long here = metric(POLLS_HERE), turn = metric(POLLS_TURN);
	assert_int_equal(poll_asg(a, now_gen, "300ms", &s), 200);
	assert_true(s.generation == now_gen);
	assert_int_equal(s.n, 1);
	gf_np_assignments_release(&s);
	/* that one was parked by its handler, not the scheduler thread */
	assert_true(here >= 0 && turn >= 0);
	assert_int_equal(metric(POLLS_HERE), here + 1);
	assert_int_equal(metric(POLLS_TURN), turn);
}

/* A job submitted for a's nodes (extra: more body members), assigned,
 * run by a and seen running: its replica's reference. */
static struct gf_np_ref run_one(struct agent *a, const char *extra, char *id,
				size_t size)
{
	submit(a->tag, extra, id, size);
	struct gf_np_assignments s;
	wait_assigned(a, id, 1, &s);
	apply(a, &s);
	const struct gf_np_assignment *mine = find_asg(&s, id);
	struct gf_np_ref ref = { 0 };
	if (mine == NULL)
		fail_msg("%s not assigned", id);
	else
		ref = mine->ref;
	gf_np_assignments_release(&s);
	gf_jv_free(wait_job(id, "running"));
	return ref;
}

/* A run that ended with exit 0 finishes its job (succeeded, its GPU time
 * as reported); the report is acked; sent again it is acked and counted
 * once. */
static void test_report_finishes_job(void **state)
{
	(void)state;
	struct agent *a = agent_new("fin", 2, ADMIN);
	register_agent(a);
	char id[32];
	struct gf_np_ref ref = run_one(a, "\"name\": \"fin\"", id, sizeof(id));
	struct gf_jv *v;
	/* a few heartbeats while it runs: nothing changes */
	sleep_ms(500);
	v = job_get(id);
	assert_string_equal(str(v, "state"), "running");
	assert_int_equal(num(v, "attempts"), 1);
	gf_jv_free(v);

	struct gf_np_heartbeat x;
	memset(&x, 0, sizeof(x));
	struct gf_np_report rep;
	memset(&rep, 0, sizeof(rep));
	rep.ref = ref;
	rep.run.started_ms = 1700000000000;
	rep.run.ended_ms = 1700000007250;
	rep.run.exit_code = 0;
	rep.run.gpu_ms = 7250;
	snprintf(rep.run.reason, sizeof(rep.run.reason), "exited");
	x.nreports = 1;
	x.reports = &rep;
	struct gf_np_ack ack;
	pthread_mutex_lock(&alock);
	a->nrun = 0; /* it ended: no longer running */
	assert_int_equal(beat_locked(a, &x, &ack), 200);
	pthread_mutex_unlock(&alock);
	assert_int_equal(ack.nacked, 1);
	assert_string_equal(ack.acked[0].job, id);
	assert_int_equal(ack.acked[0].attempt, 1);
	assert_int_equal(ack.acked[0].replica, 0);
	gf_np_ack_release(&ack);
	/* acked means committed: the job is final already */
	v = job_get(id);
	assert_string_equal(str(v, "state"), "succeeded");
	assert_int_equal(num(v, "exit_code"), 0);
	assert_true(gpu_seconds(v) == 7.25);
	gf_jv_free(v);

	/* the ack lost, the report sent again: acked, counted once */
	assert_int_equal(beat(a, &x, &ack), 200);
	assert_int_equal(ack.nacked, 1);
	assert_string_equal(ack.acked[0].job, id);
	gf_np_ack_release(&ack);
	v = job_get(id);
	assert_string_equal(str(v, "state"), "succeeded");
	assert_true(gpu_seconds(v) == 7.25);
	gf_jv_free(v);
	/* and its node no longer holds it */
	struct gf_np_assignments s;
	assert_int_equal(poll_asg(a, 0, "1s", &s), 200);
	assert_null(find_asg(&s, id));
	gf_np_assignments_release(&s);
}

/* A heartbeat of a with one report of ref: its run ended with exit 0
 * after gpu_ms GPU-milliseconds.  The status; *ack read when 200. */
static long report(struct agent *a, struct gf_np_ref ref, int64_t gpu_ms,
		   struct gf_np_ack *ack)
{
	struct gf_np_heartbeat x;
	memset(&x, 0, sizeof(x));
	struct gf_np_report rep;
	memset(&rep, 0, sizeof(rep));
	rep.ref = ref;
	rep.run.started_ms = 1700000000000;
	rep.run.ended_ms = 1700000007250;
	rep.run.gpu_ms = gpu_ms;
	snprintf(rep.run.reason, sizeof(rep.run.reason), "exited");
	x.nreports = 1;
	x.reports = &rep;
	pthread_mutex_lock(&alock);
	for (int i = 0; i < a->nrun; i++) /* it ended: no longer running */
		if (!strcmp(a->run[i].job, ref.job))
			a->run[i--] = a->run[--a->nrun];
	long st = beat_locked(a, &x, ack);
	pthread_mutex_unlock(&alock);
	return st;
}

/* Issue 20 F2: node a reports a run of a replica placed on node b (with
 * a's own token): acked, ignored and counted; the job, its GPU time and
 * its runs unchanged; then b's own report is taken and finishes it. */
static void test_report_of_another_node(void **state)
{
	(void)state;
	struct agent *a = agent_new("f2-a", 1, TOKC);
	register_agent(a);
	struct agent *b = agent_new("f2-b", 1, ADMIN);
	register_agent(b);
	char id[32];
	struct gf_np_ref ref = run_one(b, "\"name\": \"f2\"", id, sizeof(id));
	/* a's token acts for a only: not as b */
	char path[128];
	snprintf(path, sizeof(path), "/v1/nodes/%s/heartbeat", b->name);
	assert_int_equal(http(GF_HTTP_POST, path, TOKC, "{}", NULL), 403);
	long long ignored = metric("gpufleet_node_reports_ignored_total");

	struct gf_np_ack ack;
	assert_int_equal(report(a, ref, 1000000000000LL, &ack), 200);
	assert_int_equal(ack.nacked, 1); /* a need not send it again */
	gf_np_ack_release(&ack);
	struct gf_jv *v = job_get(id);
	assert_string_equal(str(v, "state"), "running");
	assert_int_equal(num(v, "attempts"), 1);
	assert_true(gpu_seconds(v) == 0);
	gf_jv_free(v);
	assert_true(ignored >= 0);
	assert_int_equal(metric("gpufleet_node_reports_ignored_total"),
			 ignored + 1);

	/* b's own report: taken, not a duplicate */
	assert_int_equal(report(b, ref, 7250, &ack), 200);
	assert_int_equal(ack.nacked, 1);
	gf_np_ack_release(&ack);
	v = job_get(id);
	assert_string_equal(str(v, "state"), "succeeded");
	assert_true(gpu_seconds(v) == 7.25);
	gf_jv_free(v);
	/* a's again, after the job ended: still nothing */
	assert_int_equal(report(a, ref, 1000000000000LL, &ack), 200);
	gf_np_ack_release(&ack);
	v = job_get(id);
	assert_true(gpu_seconds(v) == 7.25);
	gf_jv_free(v);
	assert_int_equal(metric("gpufleet_node_reports_ignored_total"),
			 ignored + 2);
}

/* A replica the agent has applied but does not run is lost: requeued
 * (attempt 2); before the agent applied it, its absence means nothing. */
static void test_lost_replica_requeued(void **state)
{
	(void)state;
	struct agent *a = agent_new("lost", 2, ADMIN);
	register_agent(a);
	char id[32];
	submit(a->tag, NULL, id, sizeof(id));
	struct gf_np_assignments s;
	wait_assigned(a, id, 1, &s);
	/* not applied yet: heartbeats without it change nothing */
	struct gf_np_ack ack;
	assert_int_equal(beat(a, NULL, &ack), 200);
	gf_np_ack_release(&ack);
	sleep_ms(500);
	struct gf_jv *v = job_get(id);
	assert_string_equal(str(v, "state"), "running");
	assert_int_equal(num(v, "attempts"), 1);
	gf_jv_free(v);
	/* applied, yet not running */
	pthread_mutex_lock(&alock);
	a->applied = s.generation;
	a->nrun = 0;
	assert_int_equal(beat_locked(a, NULL, &ack), 200);
	pthread_mutex_unlock(&alock);
	gf_np_ack_release(&ack);
	gf_np_assignments_release(&s);
	/* requeued, and placed again on the only node it may use */
	int64_t end = mono_ms() + DEADLINE_MS;
	for (;;) {
		v = job_get(id);
		if (num(v, "attempts") >= 2 &&
		    !strcmp(str(v, "state"), "running"))
			break;
		gf_jv_free(v);
		assert_true(mono_ms() < end);
		sleep_ms(20);
	}
	assert_int_equal(num(v, "attempts"), 2);
	gf_jv_free(v);
	/* the new attempt is assigned at a later generation than the agent
	 * has applied: heartbeats without it leave it alone */
	sleep_ms(500);
	v = job_get(id);
	assert_int_equal(num(v, "attempts"), 2);
	assert_string_equal(str(v, "state"), "running");
	gf_jv_free(v);
	wait_assigned(a, id, 2, &s);
	apply(a, &s);
	gf_np_assignments_release(&s);
	assert_int_equal(beat(a, NULL, &ack), 200);
	gf_np_ack_release(&ack);
	sleep_ms(300);
	v = job_get(id);
	assert_int_equal(num(v, "attempts"), 2);
	assert_string_equal(str(v, "state"), "running");
	gf_jv_free(v);
}

/* A GPU reported unhealthy shows in GET /v1/nodes and gets no new job;
 * healthy again, it does. */
static void test_unhealthy_gpu(void **state)
{
	(void)state;
	struct agent *a = agent_new("sick", 2, ADMIN);
	register_agent(a);
	struct gf_np_heartbeat x;
	memset(&x, 0, sizeof(x));
	x.nhealth = 1;
	x.health[0].index = 1;
	x.health[0].healthy = false;
	snprintf(x.health[0].reason, sizeof(x.health[0].reason),
		 "xid 79: fallen off the bus");
	assert_int_equal(beat(a, &x, NULL), 200);
	const struct gf_jv *n;
	struct gf_jv *v = node_list(a->name, &n);
	assert_non_null(n);
	assert_string_equal(str(n, "state"), "ready");
	const struct gf_jv *gpus = gf_jv_get(n, "gpus");
	bool healthy = true;
	assert_true(
		gf_jv_bool(gf_jv_get(gf_jv_at(gpus, 1), "healthy"), &healthy));
	assert_false(healthy);
	assert_non_null(strstr(str(gf_jv_at(gpus, 1), "reason"), "xid 79"));
	assert_true(
		gf_jv_bool(gf_jv_get(gf_jv_at(gpus, 0), "healthy"), &healthy));
	assert_true(healthy);
	gf_jv_free(v);

	char first[32], second[32];
	submit(a->tag, NULL, first, sizeof(first));
	v = wait_job(first, "running");
	const struct gf_jv *p0 = gf_jv_at(gf_jv_get(v, "placement"), 0);
	assert_string_equal(str(p0, "node"), a->name);
	int64_t g0 = -1;
	assert_true(gf_jv_int(gf_jv_at(gf_jv_get(p0, "gpus"), 0), &g0));
	assert_int_equal(g0, 0);
	gf_jv_free(v);
	/* the only GPU left is the sick one: it waits */
	submit(a->tag, NULL, second, sizeof(second));
	sleep_ms(500); /* many scheduling passes */
	v = job_get(second);
	assert_string_equal(str(v, "state"), "pending");
	gf_jv_free(v);
	/* healthy again: placed there */
	x.health[0].healthy = true;
	x.health[0].reason[0] = '\0';
	assert_int_equal(beat(a, &x, NULL), 200);
	v = wait_job(second, "running");
	p0 = gf_jv_at(gf_jv_get(v, "placement"), 0);
	assert_true(gf_jv_int(gf_jv_at(gf_jv_get(p0, "gpus"), 0), &g0));
	assert_int_equal(g0, 1);
	gf_jv_free(v);
}

#define QUICK  "gpufleet_agent_heartbeats_total{path=\"quick\"}"
#define REPEAT "gpufleet_agent_heartbeats_total{path=\"repeat\"}"
#define TURN   "gpufleet_agent_heartbeats_total{path=\"turn\"}"

/* The three heartbeat counters now: quick, repeat, turn. */
static void paths(long long c[3])
{
	c[0] = metric(QUICK);
	c[1] = metric(REPEAT);
	c[2] = metric(TURN);
}

/* Issue 24: a heartbeat that changes nothing is answered on arrival
 * (agents_quick.c: read and checked; or, the same bytes as the node's
 * last such one, not read again), one that changes something by the
 * scheduler's turn; the pump is held, so every heartbeat counted is
 * this test's.  Counted under the pump's lock, checked after it (a
 * failed check holding it would stop the pump). */
static void test_heartbeat_paths(void **state)
{
	(void)state;
	struct agent *a = agent_new("quick", 2, ADMIN);
	register_agent(a);
	struct gf_np_heartbeat x;
	memset(&x, 0, sizeof(x));
	x.nhealth = 1;
	x.health[0].index = 1;
	snprintf(x.health[0].reason, sizeof(x.health[0].reason), "xid 79");
	/* each step: the heartbeat (NULL: a plain one), and the path it
	 * takes: 0 quick, 1 repeat, 2 turn */
	const struct gf_np_heartbeat *hb[] = { NULL, NULL, NULL, &x,
					       &x,   &x,   NULL, NULL };
	static const int path[] = { 0, 1, 1, 2, 0, 1, 2, 0 };
	enum { STEPS = sizeof(path) / sizeof(path[0]) };
	long long c[STEPS + 1][3];
	long st[STEPS];
	struct gf_np_ack ack;
	pthread_mutex_lock(&alock);
	paths(c[0]);
	for (int k = 0; k < STEPS; k++) {
		if (k == 6) /* another generation applied: reconciled */
			a->applied++;
		st[k] = beat_locked(a, hb[k], &ack);
		paths(c[k + 1]);
	}
	a->applied--;
	pthread_mutex_unlock(&alock);
	assert_string_equal(ack.state, "ready");
	for (int k = 0; k < STEPS; k++) {
		assert_int_equal(st[k], 200);
		for (int p = 0; p < 3; p++)
			assert_int_equal(c[k + 1][p],
					 c[k][p] + (p == path[k] ? 1 : 0));
	}

	/* a job runs there: its repeats answered quick; cancelled, the
	 * same bytes are the turn's (the node's generation moved, its
	 * replica completing) */
	char id[32], path_del[64];
	run_one(a, "\"name\": \"rep\"", id, sizeof(id));
	snprintf(path_del, sizeof(path_del), "/v1/jobs/%s", id);
	long long d[3][3];
	long dst[3], del = 0;
	struct gf_err e;
	pthread_mutex_lock(&alock);
	dst[0] = beat_locked(a, NULL, NULL); /* up seen, if not yet */
	dst[1] = beat_locked(a, NULL, NULL);
	paths(d[0]);
	dst[2] = beat_locked(a, NULL, NULL);
	paths(d[1]);
	int rc = http_try(base, GF_HTTP_DELETE, path_del, ADMIN, NULL, 0, 0,
			  &del, NULL, &e);
	long again = beat_locked(a, NULL, NULL);
	paths(d[2]);
	pthread_mutex_unlock(&alock);
	assert_int_equal(rc, 0);
	assert_true(del == 200 || del == 202);
	assert_true(dst[0] == 200 && dst[1] == 200 && dst[2] == 200 &&
		    again == 200);
	assert_int_equal(d[1][1], d[0][1] + 1); /* a repeat */
	assert_int_equal(d[2][1], d[1][1]);	/* not a repeat */
	assert_int_equal(d[2][2], d[1][2] + 1); /* the turn's */
	const struct gf_jv *n;
	struct gf_jv *v = node_list(a->name, &n);
	assert_non_null(n);
	assert_string_equal(str(n, "state"), "ready");
	gf_jv_free(v);
}

/* A node silent past notready_after_s is NotReady (its job runs on),
 * past requeue_after_s its job is requeued; when it calls again it is
 * ready and the job runs there again. */
static void test_silent_node(void **state)
{
	(void)state;
	struct agent *a = agent_new("quiet", 1, ADMIN);
	register_agent(a);
	char id[32];
	submit(a->tag, NULL, id, sizeof(id));
	struct gf_np_assignments s;
	wait_assigned(a, id, 1, &s);
	apply(a, &s);
	gf_np_assignments_release(&s);
	struct gf_jv *v = wait_job(id, "running");
	gf_jv_free(v);

	pthread_mutex_lock(&alock);
	a->beating = false; /* no round is in flight: we hold its lock */
	pthread_mutex_unlock(&alock);
	int64_t end = mono_ms() + DEADLINE_MS;
	while (!node_in_state(a->name, "notready")) {
		assert_true(mono_ms() < end);
		sleep_ms(50);
	}
	/* not before its time: the silence the controller saw, in its own
	 * words, is notready_after_s (2) or more */
	const struct gf_jv *n;
	v = node_list(a->name, &n);
	long quiet = silence_s(str(n, "reason"));
	print_message("notready: '%s'\n", str(n, "reason"));
	assert_true(quiet >= 2);
	gf_jv_free(v);
	/* its job runs on: still running, or (on a machine too slow to
	 * look before requeue_after) requeued by the node's silence */
	v = job_get(id);
	bool running = !strcmp(str(v, "state"), "running");
	gf_jv_free(v);
	if (!running) {
		v = node_list(a->name, &n);
		assert_non_null(strstr(str(n, "reason"), "its jobs requeued"));
		gf_jv_free(v);
	}

	end = mono_ms() + DEADLINE_MS;
	for (;;) {
		v = job_get(id);
		if (strcmp(str(v, "state"), "running"))
			break;
		gf_jv_free(v);
		assert_true(mono_ms() < end);
		sleep_ms(100);
	}
	/* nowhere else to go */
	assert_string_equal(str(v, "state"), "pending");
	gf_jv_free(v);
	/* requeued by the silence, not before requeue_after_s (8) */
	v = node_list(a->name, &n);
	print_message("requeued: '%s'\n", str(n, "reason"));
	assert_non_null(strstr(str(n, "reason"), "its jobs requeued"));
	assert_true(silence_s(str(n, "reason")) >= 8);
	gf_jv_free(v);
	assert_true(node_in_state(a->name, "notready"));

	/* it calls again, still running the old replica: ready, but its
	 * GPU stays held by that replica (issue 19) */
	struct gf_np_ack ack;
	assert_int_equal(beat(a, NULL, &ack), 200);
	assert_string_equal(ack.state, "ready");
	gf_np_ack_release(&ack);
	assert_true(node_in_state(a->name, "ready"));
	for (int k = 0; k < 3; k++) { /* passes go by: still held */
		assert_int_equal(beat(a, NULL, NULL), 200);
		sleep_ms(100);
	}
	v = job_get(id);
	assert_string_equal(str(v, "state"), "pending");
	const struct gf_jv *c0 = gf_jv_at(gf_jv_get(v, "completing"), 0);
	assert_non_null(c0);
	assert_string_equal(str(c0, "node"), a->name);
	assert_string_equal(str(c0, "why"), "requeued");
	gf_jv_free(v);
	/* its agent learns the replica moved, stops it and says so: the GPU
	 * is free, the job runs there again, the requeue not counted */
	uint64_t gen = ack.generation;
	struct gf_np_assignments s2;
	assert_int_equal(poll_asg(a, 0, "0s", &s2), 200);
	assert_true(s2.generation >= gen);
	assert_null(find_asg(&s2, id));
	apply(a, &s2);
	gf_np_assignments_release(&s2);
	pthread_mutex_lock(&alock);
	a->beating = true;
	pthread_mutex_unlock(&alock);
	v = wait_job(id, "running");
	assert_int_equal(num(v, "attempts"), 2);
	/* its runs (issue 21): the second runs, not ended */
	const struct gf_jv *runs = gf_jv_get(v, "runs");
	const struct gf_jv *r1 = gf_jv_at(runs, gf_jv_len(runs) - 1);
	assert_non_null(r1);
	assert_int_equal(num(r1, "attempt"), 2);
	assert_string_equal(str(r1, "node"), a->name);
	assert_int_equal(gf_jv_type(gf_jv_get(r1, "ended")), GF_JV_NULL);
	assert_int_equal(gf_jv_type(gf_jv_get(r1, "exit_code")), GF_JV_NULL);
	assert_int_equal(num(v, "requeues"), 1);
	assert_int_equal(num(v, "failures"), 0);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "completing")), 0);
	gf_jv_free(v);
}

struct bad {
	const char *token;
	unsigned method;
	const char *path; /* '@': the node's name */
	const char *body;
	long status;
	const char *error;
	const char *detail;
};

/* path with its '@' replaced by name. */
static void subst(const char *path, const char *name, char *out, size_t size)
{
	const char *at = strchr(path, '@');
	if (at)
		snprintf(out, size, "%.*s%s%s", (int)(at - path), path, name,
			 at + 1);
	else
		snprintf(out, size, "%s", path);
}

/* Bad requests: the status, the error and the field named; a node that
 * was not registered is not registered by them. */
static void test_bad_requests(void **state)
{
	(void)state;
	struct agent *a = agent_new("bad", 2, ADMIN);
	register_agent(a);
	char ghost[64];
	snprintf(ghost, sizeof(ghost), "%s-ghost", pfx);
	static char huge[GF_NP_BODY_MAX + 16];
	memset(huge, ' ', sizeof(huge) - 1);
	huge[0] = '{';
	huge[sizeof(huge) - 2] = '}';
	/* 4097 replicas running: a list over its cap */
	struct gf_buf many;
	gf_buf_init(&many, 1u << 20);
	gf_buf_puts(&many, "{\"running\": [");
	for (int i = 0; i <= GF_NP_MAX_RUNNING; i++)
		gf_buf_printf(&many,
			      "%s{\"job\": \"j1\", \"attempt\": 1, "
			      "\"replica\": 0}",
			      i ? ", " : "");
	gf_buf_puts(&many, "]}");
	assert_int_equal(gf_buf_error(&many), 0);
	static const char inv[] = "\"cpu_milli\": 1000, \"memory_mib\": 1024, "
				  "\"gpu_model\": \"h100-sxm\", ";
	char b[16][512];
	snprintf(b[0], sizeof(b[0]),
		 "{%s\"gpus\": [{\"index\": 0}, "
		 "{\"index\": 3}]}",
		 inv);
	snprintf(b[1], sizeof(b[1]),
		 "{%s\"gpus\": [{\"index\": 0}, "
		 "{\"index\": 1}], \"gpu_topo\": {\"pair\": [[0, 9], [7, 0]], "
		 "\"nic\": [0, 0]}}",
		 inv);
	snprintf(b[2], sizeof(b[2]), "{%s\"labels\": {\"a\": \"b=c\"}}", inv);
	snprintf(b[3], sizeof(b[3]),
		 "{%s\"running\": [{\"job\": \"j1\", "
		 "\"attempt\": 0, \"replica\": 0}]}",
		 inv);
	snprintf(b[4], sizeof(b[4]),
		 "{%s\"gpus\": [{\"index\": 0, "
		 "\"mig_mode\": false}], \"mig\": [{\"gpu\": 0, \"profile\": "
		 "\"1g.10gb\", \"start\": 0}]}",
		 inv);
	char gpus17[1024];
	int len = snprintf(gpus17, sizeof(gpus17), "{%s\"gpus\": [", inv);
	for (int g = 0; g < 17; g++)
		len += snprintf(gpus17 + len, sizeof(gpus17) - (size_t)len,
				"%s{\"index\": %d}", g ? ", " : "", g);
	snprintf(gpus17 + len, sizeof(gpus17) - (size_t)len, "]}");
	const struct bad cases[] = {
		/* PUT */
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", "{\"memory_mib\": 1}", 400,
		  "invalid", "'cpu_milli': required" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", b[0], 400, "invalid",
		  "'gpus[1].index': expected 1" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", b[1], 400, "invalid",
		  "'gpu_topo.pair': not symmetric at [0][1]" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", b[2], 400, "invalid",
		  "'labels'" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", b[3], 400, "invalid",
		  "'running[0].attempt'" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", b[4], 400, "invalid",
		  "'mig[0].gpu': GPU 0 is not in MIG mode" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", gpus17, 413, "invalid",
		  "'gpus': 17 entries, at most 16" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", "{\"cpu_milli\": ", 400,
		  "malformed-json", "" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", "", 400, "malformed-json",
		  "" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", huge, 413, "", "" },
		{ ADMIN, GF_HTTP_PUT,
		  "/v1/nodes/"
		  "n0123456789012345678901234567890123456789012345678",
		  "{\"cpu_milli\": 1, \"memory_mib\": 1}", 400, "invalid",
		  "a node name is 1 to 47 bytes" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/bad~name",
		  "{\"cpu_milli\": 1, \"memory_mib\": 1}", 422, "invalid",
		  "node name 'bad~name'" },
		/* heartbeats */
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat",
		  "{\"running\": []}", 404, "not-registered",
		  "PUT /v1/nodes/" },
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat", "{}", 404,
		  "not-registered", "is not registered" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?after=0", NULL,
		  404, "not-registered", "" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@", NULL, 404, "not-found",
		  "" },
	};
	/* against the registered node: reading comes first */
	const struct bad known[] = {
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat",
		  "{\"reports\": [{\"job\": \"j1\", \"attempt\": 1, "
		  "\"replica\": 0, \"started_ms\": 20, \"ended_ms\": 10, "
		  "\"exit_code\": 0, \"gpu_ms\": 0}]}",
		  400, "invalid", "'reports[0].ended_ms': before started_ms" },
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat",
		  "{\"health\": [{\"index\": \"0\"}]}", 400, "invalid",
		  "'health[0].index': expected a whole number" },
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat",
		  "{\"generation\": -3}", 400, "invalid", "'generation'" },
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat", many.data, 413,
		  "invalid", "'running': 4097 entries, at most 4096" },
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat", huge, 413, "",
		  "" },
		{ ADMIN, GF_HTTP_POST, "/v1/nodes/@/heartbeat", "[", 400,
		  "malformed-json", "" },
		{ ADMIN, GF_HTTP_PUT, "/v1/nodes/@", b[0], 400, "invalid",
		  "'gpus[1].index'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?wait=61s", NULL,
		  400, "invalid", "'wait'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?wait=abc", NULL,
		  400, "invalid", "'wait'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?wait=-1s", NULL,
		  400, "invalid", "'wait'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?wait=5m", NULL,
		  400, "invalid", "'wait'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?after=x", NULL,
		  400, "invalid", "'after'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?after=-1", NULL,
		  400, "invalid", "'after'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nodes/@/assignments?after=", NULL,
		  400, "invalid", "'after'" },
		/* the largest wait is allowed (after=0: answered at once) */
		{ ADMIN, GF_HTTP_GET,
		  "/v1/nodes/@/assignments?wait=60s&after=0", NULL, 200, "",
		  "" },
		{ ADMIN, GF_HTTP_GET,
		  "/v1/nodes/@/assignments?wait=60000ms&after=0", NULL, 200, "",
		  "" },
	};
	for (int round = 0; round < 2; round++) {
		const struct bad *c = round ? known : cases;
		size_t n = round ? sizeof(known) / sizeof(known[0])
				 : sizeof(cases) / sizeof(cases[0]);
		const char *name = round ? a->name : ghost;
		for (size_t i = 0; i < n; i++) {
			char path[256];
			subst(c[i].path, name, path, sizeof(path));
			struct gf_jv *v;
			long st = http(c[i].method, path, c[i].token, c[i].body,
				       &v);
			const char *err = v ? str(v, "error") : "";
			const char *d = v ? str(v, "detail") : "";
			bool ok = st == c[i].status &&
				  (!*c[i].error || !strcmp(err, c[i].error)) &&
				  strstr(d, c[i].detail);
			if (!ok)
				print_message("case %d.%zu %s: %ld '%s' '%s'\n",
					      round, i, path, st, err, d);
			assert_true(ok);
			gf_jv_free(v);
		}
	}
	gf_buf_release(&many);
	/* none of it registered the ghost */
	const struct gf_jv *n;
	struct gf_jv *v = node_list(ghost, &n);
	assert_null(n);
	gf_jv_free(v);
	v = node_list("bad~name", &n);
	assert_null(n);
	gf_jv_free(v);
	assert_true(node_in_state(a->name, "ready"));
}

/* A node's token acts for its node only, on node routes only; an admin
 * acts for any node; a wrong or missing token is 401. */
static void test_tokens(void **state)
{
	(void)state;
	struct agent *ta = agent_new("tok-a", 1, TOKA);
	register_agent(ta);
	struct agent *tb = agent_new("tok-b", 1, ADMIN); /* an admin's */
	register_agent(tb);
	char pa[128], pb[128], hb_b[128], poll_b[160], poll_a[160], hb_a[128];
	snprintf(pa, sizeof(pa), "/v1/nodes/%s", ta->name);
	snprintf(pb, sizeof(pb), "/v1/nodes/%s", tb->name);
	snprintf(hb_a, sizeof(hb_a), "/v1/nodes/%s/heartbeat", ta->name);
	snprintf(hb_b, sizeof(hb_b), "/v1/nodes/%s/heartbeat", tb->name);
	snprintf(poll_a, sizeof(poll_a), "/v1/nodes/%s/assignments?after=0",
		 ta->name);
	snprintf(poll_b, sizeof(poll_b), "/v1/nodes/%s/assignments?after=0",
		 tb->name);
	char *body_b = put_body(tb);
	const struct bad cases[] = {
		/* node a's token: its own node */
		{ TOKA, GF_HTTP_POST, hb_a, "{}", 200, "", "" },
		{ TOKA, GF_HTTP_GET, poll_a, NULL, 200, "", "" },
		{ TOKA, GF_HTTP_GET, pa, NULL, 200, "", "" },
		/* not node b */
		{ TOKA, GF_HTTP_PUT, pb, body_b, 403, "forbidden",
		  "cannot act for node" },
		{ TOKA, GF_HTTP_POST, hb_b, "{}", 403, "forbidden",
		  "cannot act for node" },
		{ TOKA, GF_HTTP_GET, poll_b, NULL, 403, "forbidden", "" },
		{ TOKA, GF_HTTP_GET, pb, NULL, 403, "forbidden", "" },
		/* nor the job routes */
		{ TOKA, GF_HTTP_POST, "/v1/jobs", "{\"gpus\": 1}", 403,
		  "forbidden",
		  "a node's token serves only that node's routes" },
		{ TOKA, GF_HTTP_GET, "/v1/jobs", NULL, 403, "forbidden", "" },
		/* a team's token is no node's */
		{ TEAM, GF_HTTP_POST, hb_a, "{}", 403, "forbidden",
		  "node routes take the node's token or an admin's" },
		{ TEAM, GF_HTTP_GET, poll_a, NULL, 403, "forbidden", "" },
		/* wrong or missing */
		{ "nodetokenaaaaaa0002", GF_HTTP_POST, hb_a, "{}", 401,
		  "unauthorized", "Bearer" },
		{ "nodetokenaaaaaa000", GF_HTTP_GET, poll_a, NULL, 401,
		  "unauthorized", "" },
		{ NULL, GF_HTTP_PUT, pa, "{}", 401, "unauthorized", "" },
		/* node b's own token, and an admin's for either */
		{ TOKB, GF_HTTP_POST, hb_b, "{}", 200, "", "" },
		{ TOKB, GF_HTTP_POST, hb_a, "{}", 403, "forbidden", "" },
		{ ADMIN, GF_HTTP_PUT, pb, body_b, 200, "", "" },
		{ ADMIN, GF_HTTP_POST, hb_a, "{}", 200, "", "" },
		{ ADMIN, GF_HTTP_GET, poll_a, NULL, 200, "", "" },
		{ ADMIN, GF_HTTP_GET, pa, NULL, 200, "", "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *c = &cases[i];
		struct gf_jv *v;
		long st = http(c->method, c->path, c->token, c->body, &v);
		const char *err = v ? str(v, "error") : "";
		const char *d = v ? str(v, "detail") : "";
		bool ok = st == c->status &&
			  (!*c->error || !strcmp(err, c->error)) &&
			  strstr(d, c->detail);
		if (!ok)
			print_message("case %zu %s: %ld '%s' '%s'\n", i,
				      c->path, st, err, d);
		assert_true(ok);
		gf_jv_free(v);
	}
	gf_free(body_b);
}

/* Stopped and started again on the same store: the node is kept, not
 * ready until its agent calls, its running job still running and still
 * assigned to it (at a larger generation); a heartbeat makes it ready. */
static void test_restart(void **state)
{
	(void)state;
	struct agent *a = agent_new("boot", 2, ADMIN);
	register_agent(a);
	char id[32];
	submit(a->tag, NULL, id, sizeof(id));
	struct gf_np_assignments s;
	wait_assigned(a, id, 1, &s);
	apply(a, &s);
	uint64_t gen = s.generation;
	gf_np_assignments_release(&s);
	struct gf_jv *v = wait_job(id, "running");
	gf_jv_free(v);

	pthread_mutex_lock(&alock);
	a->beating = false; /* the agent waits out the restart */
	pthread_mutex_unlock(&alock);
	stop();
	start();

	const struct gf_jv *n;
	v = node_list(a->name, &n);
	assert_non_null(n);
	assert_string_equal(str(n, "state"), "notready");
	assert_non_null(strstr(str(n, "reason"), "waiting for its agent"));
	char uuid[96];
	snprintf(uuid, sizeof(uuid), "GPU-%s-1", a->name);
	assert_string_equal(str(gf_jv_at(gf_jv_get(n, "gpus"), 1), "uuid"),
			    uuid);
	gf_jv_free(v);
	v = job_get(id);
	assert_string_equal(str(v, "state"), "running");
	assert_int_equal(num(v, "attempts"), 1);
	assert_string_equal(str(gf_jv_at(gf_jv_get(v, "placement"), 0), "node"),
			    a->name);
	gf_jv_free(v);
	/* its assignments survive, at a generation past any before */
	assert_int_equal(poll_asg(a, 0, "1s", &s), 200);
	assert_true(s.generation > gen);
	const struct gf_np_assignment *x = find_asg(&s, id);
	if (x == NULL) {
		fail_msg("%s not assigned after the restart", id);
		return;
	}
	assert_int_equal(x->ref.attempt, 1);
	apply(a, &s);
	gf_np_assignments_release(&s);

	struct gf_np_ack ack;
	assert_int_equal(beat(a, NULL, &ack), 200);
	assert_string_equal(ack.state, "ready");
	gf_np_ack_release(&ack);
	pthread_mutex_lock(&alock);
	a->beating = true;
	pthread_mutex_unlock(&alock);
	assert_true(node_in_state(a->name, "ready"));
	sleep_ms(300);
	v = job_get(id);
	assert_string_equal(str(v, "state"), "running");
	assert_int_equal(num(v, "attempts"), 1);
	gf_jv_free(v);
}

/* A job's origin is a field, not its command: a job a client submits
 * whose command happens to read like a pod's ("k8s-pod UID NS/NAME") is
 * still an API job, assigned to an agent and run (it was taken for a
 * Kubernetes pod, which no agent is ever given), and still one after a
 * restart (the store keeps its origin; it guessed it from the command). */
static void test_origin_not_command(void **state)
{
	(void)state;
	struct agent *a = agent_new("orig", 1, ADMIN);
	register_agent(a);
	char id[32];
	struct gf_np_ref ref = run_one(a,
				       "\"name\": \"looks-like-pod\", "
				       "\"command\": \"k8s-pod uid-1 ns/p\"",
				       id, sizeof(id));
	assert_string_equal(ref.job, id);
	struct gf_jv *v = job_get(id);
	assert_string_equal(str(v, "state"), "running");
	gf_jv_free(v);

	pthread_mutex_lock(&alock);
	a->beating = false; /* the agent waits out the restart */
	pthread_mutex_unlock(&alock);
	stop();
	start();
	struct gf_np_assignments s;
	assert_int_equal(poll_asg(a, 0, "1s", &s), 200);
	const struct gf_np_assignment *x = find_asg(&s, id);
	if (x == NULL) {
		gf_np_assignments_release(&s);
		fail_msg("%s not assigned after the restart: taken for a pod",
			 id);
		return;
	}
	assert_int_equal(x->ref.attempt, ref.attempt);
	apply(a, &s);
	gf_np_assignments_release(&s);
	struct gf_np_ack ack; /* the agent says it runs it */
	assert_int_equal(beat(a, NULL, &ack), 200);
	assert_string_equal(ack.state, "ready");
	gf_np_ack_release(&ack);
	pthread_mutex_lock(&alock);
	a->beating = true;
	pthread_mutex_unlock(&alock);
	v = job_get(id);
	assert_string_equal(str(v, "state"), "running");
	gf_jv_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_long_poll),
		cmocka_unit_test(test_report_finishes_job),
		cmocka_unit_test(test_report_of_another_node),
		cmocka_unit_test(test_lost_replica_requeued),
		cmocka_unit_test(test_unhealthy_gpu),
		cmocka_unit_test(test_heartbeat_paths),
		cmocka_unit_test(test_silent_node),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_origin_not_command),
	};
	return cmocka_run_group_tests_name("serve-nodes", tests, setup,
					   teardown);
}
