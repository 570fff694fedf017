/*
 * test_serve_api.c - the controller's HTTP API against a real server on
 * a loopback port the kernel picks, with a real store: SQLite in a temp
 * dir, or the PostgreSQL named by $GF_TEST_DB (tests/integration/
 * serve_pg.sh starts one and runs this same suite on it).  Every answer
 * is checked for its status and its body; every bad request also for
 * leaving the state as it was.
 */
#include <sys/stat.h>

#include <gpufleet/jobflow.h>

#include "controller/service.h"
#include "serve_helpers.h"
#include "util/buf.h"
#include "util/mem.h"

#define ADMIN  "adminadminadmin0001"
#define VISION "visionvisionvis0002"
#define SPEECH "speechspeechspe0003"
#define NODE   "nodetokennnnnnn0004" /* node NODE_OWN's */
#define WRONG  "wrongwrongwrongwrong"
#define ALICE  "alicealicealic0005"  /* vision's, user alice */
#define ROOTU  "rootrootrootroo0006" /* vision's, user root */

#define NODE_OWN   "a-0000" /* the first node of pool a */
#define NODE_OTHER "b-0001"

static char dir[64], db[256], cfgpath[128], tokpath[128];
static struct gf_serve_config cfg;
static struct gf_auth auth;
static struct gf_service *svc;

static const char config_text[] =
	"policy: fgd\n"
	"open_teams: false\n"
	"classes:\n"
	"  - {name: inference, priority: 200}\n"
	"  - {name: training, priority: 100}\n"
	"  - {name: batch, priority: 10, preemptible: true}\n"
	"teams:\n"
	"  - {name: vision, quota: {gpus: {h100-80gb: 16}}}\n"
	"  - {name: speech, quota: {milli: 2000, mig: {1g.10gb: 3}}}\n"
	"pools:\n"
	"  - {name: a, nodes: 2, model: h100-80gb, gpus: 8, cpu_milli: "
	"96000, memory_mib: 1048576, block: rack-a}\n"
	"  - {name: b, nodes: 2, model: h100-80gb, gpus: 8, cpu_milli: "
	"96000, memory_mib: 1048576, block: rack-b, labels: {tier: gold}}\n"
	"  - {name: m, nodes: 1, model: h100-80gb, gpus: 8, cpu_milli: "
	"96000, memory_mib: 1048576,\n"
	"     mig: {gpus: [7], layout: {1g.10gb: 7}}}\n";

static void start(void)
{
	gf_serve_config_defaults(&cfg);
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_serve_config_read(cfgpath, &cfg, &e), 0);
	assert_int_equal(gf_auth_read(tokpath, &auth, &e), 0);
	struct gf_service_opts o = { .listen = "127.0.0.1:0",
				     .db = db,
				     .cfg = &cfg,
				     .auth = &auth,
				     .tick_ms = 20 };
	int rc = gf_service_start(&svc, &o, &e);
	if (rc)
		print_message("start: %s\n", e.msg);
	assert_int_equal(rc, 0);
	snprintf(base, sizeof(base), "%s", gf_service_url(svc));
	base[strlen(base) - 1] = '\0'; /* no trailing '/' */
}

static void stop(void)
{
	gf_service_stop(svc);
	svc = NULL;
	gf_auth_release(&auth);
	gf_serve_config_release(&cfg);
}

/* Wait until job id is in state (the scheduler runs every 20 ms). */
static struct gf_jv *wait_state(const char *id, const char *state)
{
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	for (int i = 0; i < 200; i++) {
		struct gf_jv *v;
		assert_int_equal(http(GF_HTTP_GET, path, ADMIN, NULL, &v), 200);
		if (!strcmp(str(v, "state"), state))
			return v;
		gf_jv_free(v);
		sleep_ms(10);
	}
	fail_msg("job %s never reached %s", id, state);
	return NULL;
}

static void submit_ok(const char *token, const char *body, char *id,
		      size_t size)
{
	struct gf_jv *v;
	char with[1024];
	if (!strstr(body, "\"command\"") && body[0] == '{') {
		/* every job runs a command (issue 21): "true" unless said */
		snprintf(with, sizeof(with), "{\"command\": \"true\"%s%s",
			 strcmp(body, "{}") ? ", " : "", body + 1);
		body = with;
	}
	long st = http(GF_HTTP_POST, "/v1/jobs", token, body, &v);
	if (st != 201)
		print_message("submit %s: %ld %s\n", body, st,
			      v ? str(v, "detail") : "");
	assert_int_equal(st, 201);
	snprintf(id, size, "%s", str(v, "id"));
	const char *state = str(v, "state");
	assert_true(!strcmp(state, "pending") || !strcmp(state, "running"));
	gf_jv_free(v);
}

static int njobs(void)
{
	struct gf_jv *v;
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/jobs?limit=10000", ADMIN, NULL, &v),
		200);
	int n = (int)gf_jv_len(gf_jv_get(v, "jobs"));
	gf_jv_free(v);
	return n;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gf-serve-XXXXXX");
	assert_non_null(mkdtemp(dir));
	const char *pg = getenv("GF_TEST_DB");
	if (pg && *pg)
		snprintf(db, sizeof(db), "%s", pg);
	else
		snprintf(db, sizeof(db), "sqlite:%s/state/jobs.db", dir);
	snprintf(cfgpath, sizeof(cfgpath), "%s/serve.yaml", dir);
	snprintf(tokpath, sizeof(tokpath), "%s/tokens", dir);
	write_text(cfgpath, config_text);
	write_text(tokpath, ADMIN " admin\n" VISION " team:vision\n" SPEECH
				  " team:speech\n" NODE " node:" NODE_OWN
				  "\n" ALICE " team:vision user:alice\n" ROOTU
				  " team:vision user:root\n");
	start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (svc)
		stop();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A job runs where it says; the list filters; the queue explains. */
static void test_submit_and_read(void **state)
{
	(void)state;
	char id[32], big[32];
	submit_ok(VISION,
		  "{\"name\": \"train\", \"class\": \"training\", \"gpus\": 4}",
		  id, sizeof(id));
	struct gf_jv *v = wait_state(id, "running");
	assert_string_equal(str(v, "team"), "vision");
	const struct gf_jv *pl = gf_jv_get(v, "placement");
	assert_int_equal(gf_jv_len(pl), 1);
	const struct gf_jv *p0 = gf_jv_at(pl, 0);
	assert_int_equal(gf_jv_len(gf_jv_get(p0, "gpus")), 4);
	assert_non_null(strstr(str(p0, "node"), "-000"));
	gf_jv_free(v);
	/* vision's quota is 16 H100s: 4 used, 13 more must wait */
	submit_ok(VISION, "{\"gpus\": 8, \"replicas\": 2}", big, sizeof(big));
	v = wait_state(big, "pending");
	gf_jv_free(v);
	struct gf_jv *q;
	assert_int_equal(http(GF_HTTP_GET, "/v1/queue", ADMIN, NULL, &q), 200);
	const struct gf_jv *first = gf_jv_at(gf_jv_get(q, "queue"), 0);
	assert_string_equal(str(first, "id"), big);
	assert_non_null(strstr(str(first, "reason"), "quota"));
	gf_jv_free(q);
	assert_int_equal(http(GF_HTTP_GET, "/v1/jobs?state=running&team=vision",
			      VISION, NULL, &v),
			 200);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "jobs")), 1);
	gf_jv_free(v);
	/* issue 21: states in any case by commas, newest first, pages */
	char path[160];
	assert_int_equal(http(GF_HTTP_GET,
			      "/v1/jobs?state=PENDING,Running&order=desc"
			      "&limit=1&team=vision",
			      VISION, NULL, &v),
			 200);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "jobs")), 1);
	assert_string_equal(str(gf_jv_at(gf_jv_get(v, "jobs"), 0), "id"), big);
	assert_string_equal(str(v, "next_before"), big);
	gf_jv_free(v);
	snprintf(path, sizeof(path),
		 "/v1/jobs?order=desc&limit=1&team=vision&state=pending,"
		 "running&before=%s",
		 big);
	assert_int_equal(http(GF_HTTP_GET, path, VISION, NULL, &v), 200);
	assert_string_equal(str(gf_jv_at(gf_jv_get(v, "jobs"), 0), "id"), id);
	gf_jv_free(v);
	/* by name (a pattern) and by node; in the window since an hour */
	assert_int_equal(http(GF_HTTP_GET, "/v1/jobs?name=tr*&since=1h", VISION,
			      NULL, &v),
			 200);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "jobs")), 1);
	const struct gf_jv *j0 = gf_jv_at(gf_jv_get(v, "jobs"), 0);
	assert_string_equal(str(j0, "id"), id);
	/* and its run, running */
	const struct gf_jv *r0 = gf_jv_at(gf_jv_get(j0, "runs"), 0);
	assert_int_equal(num(r0, "attempt"), 1);
	assert_int_equal(gf_jv_len(gf_jv_get(r0, "gpus")), 4);
	assert_int_equal(gf_jv_type(gf_jv_get(r0, "ended")), GF_JV_NULL);
	snprintf(path, sizeof(path), "/v1/jobs?node=%s", str(r0, "node"));
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_GET, path, VISION, NULL, &v), 200);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "jobs")), 1);
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_GET, "/v1/jobs?until=2000-01-01", VISION,
			      NULL, &v),
			 200);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "jobs")), 0);
	gf_jv_free(v);
	/* cancel the waiting gang; twice is a conflict */
	snprintf(path, sizeof(path), "/v1/jobs/%s", big);
	assert_int_equal(http(GF_HTTP_DELETE, path, VISION, NULL, &v), 200);
	assert_string_equal(str(v, "state"), "cancelled");
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_DELETE, path, VISION, NULL, NULL), 409);
}

struct bad {
	const char *token;
	unsigned method;
	const char *path;
	const char *body;
	long status;
	const char *detail;
};

/* Each bad request gets its status and its reason, and changes nothing. */
static void test_bad_input(void **state)
{
	(void)state;
	char own[32];
	submit_ok(SPEECH, "{\"gpu_milli\": 500}", own, sizeof(own));
	char other[80];
	snprintf(other, sizeof(other), "/v1/jobs/%s", own);
	static char huge[80 * 1024];
	memset(huge, ' ', sizeof(huge) - 1);
	huge[0] = '{';
	huge[sizeof(huge) - 2] = '}';
	const struct bad cases[] = {
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"gpus\": ", 400,
		  "line 1" },
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"gpu\": 1}", 400,
		  "'gpu': unknown field" },
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"gpus\": -1}", 400,
		  "'gpus'" },
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"replicas\": 99999999}",
		  400, "'replicas'" },
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"cpu_milli\": \"x\"}",
		  400, "'cpu_milli'" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"gpus\": 1, \"gpu_milli\": 100}", 400, "" },
		{ VISION, GF_HTTP_POST, "/v1/jobs", huge, 413, "" },
		{ NULL, GF_HTTP_POST, "/v1/jobs", "{}", 401, "Bearer" },
		{ "wrongwrongwrongwrong", GF_HTTP_GET, "/v1/jobs", NULL, 401,
		  "" },
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"team\": \"speech\"}",
		  403, "team 'vision'" },
		{ VISION, GF_HTTP_GET, "/v1/jobs?team=speech", NULL, 403, "" },
		{ VISION, GF_HTTP_GET, other, NULL, 404, "" },
		{ VISION, GF_HTTP_DELETE, other, NULL, 404, "" },
		{ ADMIN, GF_HTTP_POST, "/v1/jobs",
		  "{\"team\": \"nobody\", \"gpus\": 1, \"command\": \"x\"}",
		  403, "nobody" },
		{ ADMIN, GF_HTTP_POST, "/v1/jobs",
		  "{\"class\": \"vip\", \"command\": \"x\"}", 400, "vip" },
		/* never placeable: 422 with the reason */
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"gpus\": 8, \"replicas\": 3, \"command\": \"x\"}", 422,
		  "" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"gpus\": 1, \"gpu_model\": \"b200\", \"command\": "
		  "\"x\"}",
		  422, "b200" },
		{ SPEECH, GF_HTTP_POST, "/v1/jobs",
		  "{\"gpu_milli\": 1500, \"command\": \"x\"}", 422, "" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"gpus\": 8, \"replicas\": "
		  "2, \"class\": \"batch\", "
		  "\"cpu_milli\": 200000, \"command\": \"x\"}",
		  422, "" },
		{ SPEECH, GF_HTTP_POST, "/v1/jobs",
		  "{\"mig_profile\": "
		  "\"3g.40gb\", \"command\": \"x\"}",
		  422, "3g.40gb" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?state=done", NULL, 400,
		  "'state'" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?limit=0", NULL, 400,
		  "'limit'" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?limit=10001", NULL, 400,
		  "'limit'" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?state=pending,", NULL, 400,
		  "'state'" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?order=newest", NULL, 400,
		  "'order'" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?before=x12", NULL, 400,
		  "'before'" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?since=yesterday", NULL, 400,
		  "'since'" },
		{ ADMIN, GF_HTTP_GET, "/v1/jobs?until=2026-13-01", NULL, 400,
		  "'until'" },
		{ ADMIN, GF_HTTP_PUT, "/v1/jobs", "{}", 405, "" },
		/* issue 21: a command, an environment, a directory, a user */
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"gpus\": 1}", 400,
		  "'command': required" },
		{ VISION, GF_HTTP_POST, "/v1/jobs", "{\"command\": \" \\t\"}",
		  400, "'command': required" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"command\": \"x\", \"env\": {\"1A\": \"b\"}}", 400,
		  "'env': '1A': expected a name" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"command\": \"x\", \"env\": {\"A\": 1}}", 400,
		  "'env': 'A': expected a string" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"command\": \"x\", \"env\": {\"CUDA_VISIBLE_DEVICES\": "
		  "\"0\"}}",
		  400, "is set by the node" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"command\": \"x\", \"env\": [\"A=1\"]}", 400,
		  "'env': expected an object" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"command\": \"x\", \"workdir\": \"tmp\"}", 400,
		  "'workdir': expected an absolute path" },
		{ VISION, GF_HTTP_POST, "/v1/jobs",
		  "{\"command\": \"x\", \"user\": \"bob\"}", 400,
		  "'user': unknown field" },
		{ ROOTU, GF_HTTP_POST, "/v1/jobs", "{\"command\": \"x\"}", 400,
		  "'allow_root: true'" },
		{ ADMIN, GF_HTTP_GET, "/v1/nope", NULL, 404, "" },
	};
	int before = njobs();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gf_jv *v;
		long st = http(cases[i].method, cases[i].path, cases[i].token,
			       cases[i].body, &v);
		const char *d = v ? str(v, "detail") : "";
		if (st != cases[i].status || !strstr(d, cases[i].detail))
			print_message("case %zu: %ld '%s'\n", i, st, d);
		assert_int_equal(st, cases[i].status);
		assert_non_null(strstr(d, cases[i].detail));
		if (v)
			assert_true(*str(v, "error"));
		gf_jv_free(v);
	}
	assert_int_equal(njobs(), before);
}

/* A job's environment, directory and user (issue 21): kept as given,
 * the user the token's; more variables than the cap refused. */
static void test_env_workdir_user(void **state)
{
	(void)state;
	char id[32];
	submit_ok(ALICE,
		  "{\"command\": \"env\", \"env\": {\"A\": \"1\", "
		  "\"B\": \"x \\\"y\\\"\"}, \"workdir\": \"/scratch/a\"}",
		  id, sizeof(id));
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_GET, path, ALICE, NULL, &v), 200);
	const struct gf_jv *env = gf_jv_get(v, "env");
	assert_int_equal(gf_jv_len(env), 2);
	assert_string_equal(str(env, "A"), "1");
	assert_string_equal(str(env, "B"), "x \"y\"");
	assert_string_equal(str(v, "workdir"), "/scratch/a");
	assert_string_equal(str(v, "user"), "alice");
	assert_string_equal(str(v, "team"), "vision");
	gf_jv_free(v);
	/* a token without a user: no user, no env, no workdir */
	submit_ok(VISION, "{\"command\": \"true\"}", id, sizeof(id));
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	assert_int_equal(http(GF_HTTP_GET, path, VISION, NULL, &v), 200);
	assert_int_equal(gf_jv_type(gf_jv_get(v, "user")), GF_JV_NULL);
	assert_int_equal(gf_jv_type(gf_jv_get(v, "workdir")), GF_JV_NULL);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "env")), 0);
	gf_jv_free(v);
	/* GF_JOB_ENV_MAX variables at most */
	struct gf_buf b;
	gf_buf_init(&b, 1 << 16);
	gf_buf_puts(&b, "{\"command\": \"x\", \"env\": {");
	for (int i = 0; i <= GF_JOB_ENV_MAX; i++)
		gf_buf_printf(&b, "%s\"V%d\": \"\"", i ? ", " : "", i);
	gf_buf_puts(&b, "}}");
	long st = http(GF_HTTP_POST, "/v1/jobs", VISION, gf_buf_str(&b), &v);
	assert_int_equal(st, 400);
	assert_non_null(
		strstr(str(v, "detail"), "257 variables, more than 256"));
	gf_jv_free(v);
	gf_buf_release(&b);
}

/* The other endpoints. */
static void test_nodes_health_metrics(void **state)
{
	(void)state;
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_GET, "/v1/nodes", SPEECH, NULL, &v), 200);
	const struct gf_jv *nodes = gf_jv_get(v, "nodes");
	assert_int_equal(gf_jv_len(nodes), 5);
	const struct gf_jv *n4 = gf_jv_at(nodes, 4);
	assert_string_equal(str(n4, "state"), "ready");
	assert_int_equal(gf_jv_len(gf_jv_get(n4, "gpus")), 8);
	assert_int_equal(gf_jv_len(gf_jv_get(n4, "mig")), 7);
	assert_string_equal(str(gf_jv_at(nodes, 2), "block"), "rack-b");
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_GET, "/healthz", NULL, NULL, &v), 200);
	assert_string_equal(str(v, "status"), "leading");
	gf_jv_free(v);
	char url[256];
	snprintf(url, sizeof(url), "%s/metrics", base);
	struct gf_client_req q = { .url = url };
	struct gf_client_answer a;
	struct gf_err e;
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), 0);
	assert_int_equal(a.status, 200);
	const char *m = gf_buf_str(&a.body);
	assert_non_null(strstr(m, "# TYPE gpufleet_queue_pending_jobs gauge"));
	assert_non_null(strstr(m, "# TYPE gpufleet_queue_pending_gpus gauge"));
	assert_non_null(strstr(m, "gpufleet_submit_to_placed_seconds_count"));
	assert_non_null(strstr(m, "gpufleet_gpus{state=\"allocated\"}"));
	assert_non_null(strstr(m, "gpufleet_leader 1"));
	gf_client_answer_release(&a);
}

/* Stopped and started again on the same store: every job is there, once,
 * the running ones where they ran. */
static void test_restart(void **state)
{
	(void)state;
	char id[32];
	submit_ok(SPEECH, "{\"mig_profile\": \"1g.10gb\"}", id, sizeof(id));
	struct gf_jv *v = wait_state(id, "running");
	char node[64];
	snprintf(node, sizeof(node), "%s",
		 str(gf_jv_at(gf_jv_get(v, "placement"), 0), "node"));
	gf_jv_free(v);
	int before = njobs();
	stop();
	start();
	assert_int_equal(njobs(), before);
	v = wait_state(id, "running");
	assert_string_equal(str(gf_jv_at(gf_jv_get(v, "placement"), 0), "node"),
			    node);
	gf_jv_free(v);
	/* numbering goes on: no id given twice */
	char next[32];
	submit_ok(ADMIN, "{\"team\": \"vision\", \"cpu_milli\": 100}", next,
		  sizeof(next));
	assert_true(strtoull(next + 1, NULL, 10) > strtoull(id + 1, NULL, 10));
}

/* method path as token: the status, the answer's detail (or "") in
 * detail. */
static long flow(unsigned method, const char *id, const char *what,
		 const char *token, char *detail, size_t size)
{
	char path[96];
	snprintf(path, sizeof(path), "/v1/jobs/%s%s", id, what);
	struct gf_jv *v;
	long st = http(method, path, token, NULL, &v);
	snprintf(detail, size, "%s",
		 v && str(v, "detail") ? str(v, "detail") : "");
	gf_jv_free(v);
	return st;
}

/* Wait until job id's reason is want. */
static void wait_reason(const char *id, const char *want)
{
	char path[64], got[160] = "";
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	for (int i = 0; i < 300; i++) {
		struct gf_jv *v;
		assert_int_equal(http(GF_HTTP_GET, path, ADMIN, NULL, &v), 200);
		snprintf(got, sizeof(got), "%s",
			 str(v, "reason") ? str(v, "reason") : "");
		gf_jv_free(v);
		if (!strcmp(got, want))
			return;
		sleep_ms(10);
	}
	fail_msg("job %s: reason '%s', never '%s'", id, got, want);
}

static void submit_bad(const char *token, const char *body, const char *want)
{
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_POST, "/v1/jobs", token, body, &v), 400);
	assert_string_equal(str(v, "detail"), want);
	gf_jv_free(v);
}

/*
 * Arrays, dependencies, holds through the API (issue 21): an array of 4
 * with %2 answers its tasks and runs 2; the tasks name their array; bad
 * arrays and dependencies are 400 (another team's job is "no job"); a
 * job submitted held waits "held", another team cannot release it (404),
 * hold twice is 409; a restart keeps the array's throttle and the hold;
 * requeue of the array puts its running tasks back, of a pending job is
 * 409; cancel of the array's id cancels every task, after which the
 * afterany dependant runs once released.
 */
static void test_flow(void **state)
{
	(void)state;
	char detail[256];
	struct gf_jv *v;
	assert_int_equal(
		http(GF_HTTP_POST, "/v1/jobs", VISION,
		     "{\"command\": \"true\", \"gpus\": 1, \"array\": \"0-3%2\"}",
		     &v),
		201);
	const struct gf_jv *tasks = gf_jv_get(v, "tasks");
	assert_non_null(tasks);
	assert_int_equal(gf_jv_len(tasks), 4);
	char arr[32], t[4][32];
	snprintf(arr, sizeof(arr), "%s", str(v, "id"));
	for (int i = 0; i < 4; i++)
		snprintf(t[i], sizeof(t[i]), "%s",
			 gf_jv_str(gf_jv_at(tasks, i)));
	gf_jv_free(v);
	assert_string_equal(arr, t[0]);
	gf_jv_free(wait_state(t[1], "running"));
	wait_reason(t[2], "array throttle (%2)");
	v = wait_state(t[3], "pending");
	assert_string_equal(str(v, "array_job_id"), arr);
	assert_int_equal(num(v, "array_task_id"), 3);
	assert_int_equal(num(v, "array_max"), 2);
	gf_jv_free(v);

	submit_bad(VISION, "{\"command\": \"true\", \"array\": \"0-3%0\"}",
		   "'array': %max: expected 1 to 999999");
	submit_bad(VISION, "{\"command\": \"true\", \"array\": 4}",
		   "'array': expected a string such as \"0-31%4\"");
	submit_bad(
		VISION,
		"{\"command\": \"true\", \"dependency\": \"afterok:j999999\"}",
		"'dependency': no job j999999");
	char body[160], want[96];
	snprintf(body, sizeof(body),
		 "{\"command\": \"true\", \"dependency\": \"afterok:%s\"}",
		 arr);
	snprintf(want, sizeof(want), "'dependency': no job %s", arr);
	submit_bad(SPEECH, body, want);

	/* held, and waiting for the array */
	char held[32];
	snprintf(
		body, sizeof(body),
		"{\"command\": \"true\", \"gpus\": 1, \"hold\": true, \"dependency\": "
		"\"afterany:%s\"}",
		arr + 1); /* "12": the number alone */
	submit_ok(VISION, body, held, sizeof(held));
	wait_reason(held, "held");
	v = wait_state(held, "pending");
	snprintf(want, sizeof(want), "afterany:%s", arr);
	assert_string_equal(str(v, "dependency"), want);
	gf_jv_free(v);
	assert_int_equal(flow(GF_HTTP_DELETE, held, "/hold", SPEECH, detail,
			      sizeof(detail)),
			 404);
	assert_int_equal(flow(GF_HTTP_POST, held, "/hold", VISION, detail,
			      sizeof(detail)),
			 409);
	snprintf(want, sizeof(want), "job %s is already held", held);
	assert_string_equal(detail, want);

	/* a restart keeps the throttle and the hold */
	stop();
	start();
	wait_reason(t[2], "array throttle (%2)");
	wait_reason(held, "held");
	assert_int_equal(flow(GF_HTTP_DELETE, held, "/hold", VISION, detail,
			      sizeof(detail)),
			 200);
	snprintf(want, sizeof(want), "dependency %s", arr);
	wait_reason(held, want);
	assert_int_equal(flow(GF_HTTP_POST, held, "/requeue", VISION, detail,
			      sizeof(detail)),
			 409);
	snprintf(want, sizeof(want), "job %s is pending", held);
	assert_string_equal(detail, want);

	/* the array's id: its running tasks requeued, then all cancelled */
	assert_int_equal(http(GF_HTTP_POST, "/v1/jobs/", VISION, NULL, NULL),
			 404);
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%s/requeue", arr);
	assert_int_equal(http(GF_HTTP_POST, path, VISION, NULL, &v), 200);
	assert_int_equal(num(v, "changed"), 2);
	gf_jv_free(v);
	snprintf(path, sizeof(path), "/v1/jobs/%s", arr);
	assert_int_equal(http(GF_HTTP_DELETE, path, SPEECH, NULL, NULL), 404);
	assert_int_equal(http(GF_HTTP_DELETE, path, VISION, NULL, &v), 200);
	assert_int_equal(num(v, "changed"), 4);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "tasks")), 4);
	gf_jv_free(v);
	for (int i = 0; i < 4; i++)
		gf_jv_free(wait_state(t[i], "cancelled"));
	assert_int_equal(http(GF_HTTP_DELETE, path, VISION, NULL, NULL), 409);
	/* afterany: met by cancelled tasks */
	gf_jv_free(wait_state(held, "running"));
	snprintf(path, sizeof(path), "/v1/jobs/%s", held);
	assert_int_equal(http(GF_HTTP_DELETE, path, VISION, NULL, NULL), 200);
}

/* The service's replicas asked, and its live ones (running + pending),
 * as GET /v1/services/NAME answers; -1 when it answers otherwise. */
static int svc_live(const char *name, const char *token, int *replicas)
{
	char path[96];
	snprintf(path, sizeof(path), "/v1/services/%s", name);
	struct gf_jv *v;
	if (http(GF_HTTP_GET, path, token, NULL, &v) != 200) {
		gf_jv_free(v);
		return -1;
	}
	if (replicas)
		*replicas = (int)num(v, "replicas");
	int live = (int)(num(v, "running") + num(v, "pending"));
	gf_jv_free(v);
	return live;
}

/* Wait until the service has `want` live replicas. */
static void svc_wait(const char *name, int want)
{
	int live = -1;
	for (int i = 0; i < 300 && live != want; i++) {
		live = svc_live(name, ADMIN, NULL);
		if (live != want)
			sleep_ms(10);
	}
	assert_int_equal(live, want);
}

/* A service keeps its count of jobs: put, scaled up and down (the
 * surplus cancelled), a replica that ends replaced, refused input
 * changing nothing, another team not seeing it, a restart keeping it,
 * a delete cancelling its jobs. */
static void test_services(void **state)
{
	(void)state;
	const char *job = "{\"replicas\": 3, \"job\": {\"gpus\": 1, "
			  "\"gpu_model\": \"h100-80gb\", \"class\": "
			  "\"inference\"}}";
	struct gf_jv *v;
	assert_int_equal(
		http(GF_HTTP_PUT, "/v1/services/chat", VISION, job, &v), 200);
	assert_string_equal(str(v, "name"), "chat");
	assert_int_equal(num(v, "replicas"), 3);
	assert_string_equal(str(v, "team"), "vision"); /* the token's */
	gf_jv_free(v);
	svc_wait("chat", 3);
	/* its jobs say whose replicas they are */
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/jobs?limit=10000", ADMIN, NULL, &v),
		200);
	const struct gf_jv *jobs = gf_jv_get(v, "jobs");
	int marked = 0;
	char one[32] = "";
	for (size_t i = 0; i < gf_jv_len(jobs); i++) {
		const struct gf_jv *x = gf_jv_at(jobs, i);
		if (!strcmp(str(x, "service"), "chat") &&
		    !strcmp(str(x, "state"), "running")) {
			marked++;
			snprintf(one, sizeof(one), "%s", str(x, "id"));
		}
	}
	gf_jv_free(v);
	assert_int_equal(marked, 3);

	/* refused: nothing changes */
	int before = njobs();
	static const char *const bad[][3] = {
		{ "/v1/services/chat/replicas", "{\"replicas\": -1}", "400" },
		{ "/v1/services/chat/replicas", "{\"replicas\": \"2\"}",
		  "400" },
		{ "/v1/services/chat", "{\"replicas\": 1, \"job\": 7}", "400" },
		{ "/v1/services/chat", "{\"replicas\": 1}", "400" },
		{ "/v1/services/chat",
		  "{\"replicas\": 1, \"job\": {\"gpus\": 9}}", "422" },
		{ "/v1/services/bad%20name",
		  "{\"replicas\": 1, \"job\": {\"gpus\": 1}}", "400" },
		/* issue 21's keys are for jobs, not a service's replicas */
		{ "/v1/services/chat",
		  "{\"replicas\": 1, \"job\": {\"array\": \"0-3\"}}", "400" },
		{ "/v1/services/chat",
		  "{\"replicas\": 1, \"job\": {\"hold\": true}}", "400" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		long st = http(GF_HTTP_PUT, bad[i][0], VISION, bad[i][1], &v);
		if (st != atol(bad[i][2]))
			print_message("%s %s: %ld\n", bad[i][0], bad[i][1], st);
		assert_int_equal(st, atol(bad[i][2]));
		assert_non_null(v);
		assert_true(str(v, "detail")[0] != '\0');
		gf_jv_free(v);
	}
	int replicas = 0;
	assert_int_equal(svc_live("chat", VISION, &replicas), 3);
	assert_int_equal(replicas, 3);
	assert_int_equal(njobs(), before);

	/* another team neither sees nor scales it */
	assert_int_equal(svc_live("chat", SPEECH, NULL), -1);
	assert_int_equal(http(GF_HTTP_PUT, "/v1/services/chat/replicas", SPEECH,
			      "{\"replicas\": 0}", &v),
			 404);
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_GET, "/v1/services", SPEECH, NULL, &v),
			 200);
	assert_int_equal(gf_jv_len(gf_jv_get(v, "services")), 0);
	gf_jv_free(v);

	/* a replica cancelled by hand is replaced */
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%s", one);
	assert_int_equal(http(GF_HTTP_DELETE, path, ADMIN, NULL, &v), 200);
	gf_jv_free(v);
	svc_wait("chat", 3);
	assert_int_equal(njobs(), before + 1);

	/* scaled up, then down: the surplus cancelled */
	assert_int_equal(http(GF_HTTP_PUT, "/v1/services/chat/replicas", VISION,
			      "{\"replicas\": 5}", &v),
			 200);
	gf_jv_free(v);
	svc_wait("chat", 5);
	assert_int_equal(http(GF_HTTP_PUT, "/v1/services/chat/replicas", VISION,
			      "{\"replicas\": 2}", &v),
			 200);
	gf_jv_free(v);
	svc_wait("chat", 2);

	/* a restart keeps the service and its count */
	stop();
	start();
	svc_wait("chat", 2);
	assert_int_equal(svc_live("chat", ADMIN, &replicas), 2);
	assert_int_equal(replicas, 2);

	/* deleted: its jobs cancelled, it is gone */
	assert_int_equal(
		http(GF_HTTP_DELETE, "/v1/services/chat", VISION, NULL, &v),
		200);
	gf_jv_free(v);
	assert_int_equal(svc_live("chat", ADMIN, NULL), -1);
	int live = 0;
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/jobs?limit=10000", ADMIN, NULL, &v),
		200);
	jobs = gf_jv_get(v, "jobs");
	for (size_t i = 0; i < gf_jv_len(jobs); i++) {
		const struct gf_jv *x = gf_jv_at(jobs, i);
		const char *st = str(x, "state");
		live += !strcmp(str(x, "service"), "chat") &&
			(!strcmp(st, "running") || !strcmp(st, "pending"));
	}
	gf_jv_free(v);
	assert_int_equal(live, 0);
	stop();
	start();
	assert_int_equal(svc_live("chat", ADMIN, NULL), -1);
}

/* "2026-12-02T02:20:00.123Z" as ms since the epoch. */
static int64_t json_ms(const char *t)
{
	struct tm tm = { 0 };
	int ms = 0;
	assert_int_equal(sscanf(t, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year,
				&tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
				&tm.tm_min, &tm.tm_sec, &ms),
			 7);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The histogram's sum and count on /metrics. */
static void placed_hist(double *sum, long *count)
{
	char url[256];
	snprintf(url, sizeof(url), "%s/metrics", base);
	struct gf_client_req q = { .url = url };
	struct gf_client_answer a;
	struct gf_err e;
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), 0);
	const char *m = gf_buf_str(&a.body);
	const char *ps = strstr(m, "gpufleet_submit_to_placed_seconds_sum ");
	const char *pc = strstr(m, "gpufleet_submit_to_placed_seconds_count ");
	assert_non_null(ps);
	assert_non_null(pc);
	*sum = strtod(strchr(ps, ' ') + 1, NULL);
	*count = strtol(strchr(pc, ' ') + 1, NULL, 10);
	gf_client_answer_release(&a);
}

/*
 * The latency clock: a job's submission is its request's arrival, not the
 * scheduler's turn.  On a controller of its own (one node of 2 GPUs): a
 * job placed at once counts above zero (it counted 0 when submission was
 * stamped in the turn that placed it); a job that waits behind it while
 * the test holds the GPUs shows that wait in its submitted and started
 * times and in the histogram's sum.
 */
static void test_latency_clock(void **state)
{
	(void)state;
	char d[128], path[192], dbs[256], tok[192], saved[128];
	snprintf(d, sizeof(d), "%s/latency", dir);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(path, sizeof(path), "%s/serve.yaml", d);
	write_text(path, "policy: fgd\n"
			 "pools:\n"
			 "  - {name: one, nodes: 1, model: h100-80gb, gpus: 2, "
			 "cpu_milli: 8000, memory_mib: 65536}\n");
	snprintf(tok, sizeof(tok), "%s/tokens", d);
	write_text(tok, ADMIN " admin\n");
	snprintf(dbs, sizeof(dbs), "sqlite:%s/jobs.db", d);
	struct gf_serve_config c;
	struct gf_auth au;
	struct gf_service *one;
	struct gf_err e;
	gf_err_clear(&e);
	gf_serve_config_defaults(&c);
	assert_int_equal(gf_serve_config_read(path, &c, &e), 0);
	assert_int_equal(gf_auth_read(tok, &au, &e), 0);
	struct gf_service_opts o = { .listen = "127.0.0.1:0",
				     .db = dbs,
				     .cfg = &c,
				     .auth = &au,
				     .tick_ms = 20 };
	assert_int_equal(gf_service_start(&one, &o, &e), 0);
	snprintf(saved, sizeof(saved), "%s", base);
	snprintf(base, sizeof(base), "%s", gf_service_url(one));
	base[strlen(base) - 1] = '\0';

	char a[32], b[32];
	double sum0, sum1;
	long n0, n1;
	submit_ok(ADMIN, "{\"gpus\": 2}", a, sizeof(a));
	gf_jv_free(wait_state(a, "running"));
	placed_hist(&sum0, &n0);
	assert_int_equal(n0, 1);
	assert_true(sum0 > 0);

	submit_ok(ADMIN, "{\"gpus\": 2}", b, sizeof(b));
	int64_t t1 = wall_ms(); /* b arrived before this */
	gf_jv_free(wait_state(b, "pending"));
	sleep_ms(150); /* the known delay: b cannot start before t2 */
	int64_t t2 = wall_ms();
	char p[64];
	snprintf(p, sizeof(p), "/v1/jobs/%s", a);
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_DELETE, p, ADMIN, NULL, &v), 200);
	gf_jv_free(v);
	v = wait_state(b, "running");
	int64_t sub = json_ms(str(v, "submitted"));
	int64_t run = json_ms(str(v, "started"));
	gf_jv_free(v);
	if (run - sub < t2 - t1)
		print_message("submitted %lld started %lld, held %lld ms\n",
			      (long long)sub, (long long)run,
			      (long long)(t2 - t1));
	assert_true(sub <= t1);
	assert_true(run >= t2);
	placed_hist(&sum1, &n1);
	assert_int_equal(n1, 2);
	assert_true(sum1 - sum0 >= (double)(t2 - t1) / 1e3 - 1e-6);

	gf_service_stop(one);
	gf_auth_release(&au);
	gf_serve_config_release(&c);
	snprintf(base, sizeof(base), "%s", saved);
}

/* Issue 20 F1: a team's token runs services of its own team only, new
 * or existing; a node's token runs none and lists none. */
static void test_services_scope(void **state)
{
	(void)state;
	int before = njobs();
	struct gf_jv *v;
	long st = http(GF_HTTP_PUT, "/v1/services/vsvc", VISION,
		       "{\"replicas\": 2, \"job\": {\"gpus\": 1, "
		       "\"team\": \"speech\"}}",
		       &v);
	assert_int_equal(st, 403);
	assert_string_equal(str(v, "error"), "forbidden");
	assert_non_null(strstr(str(v, "detail"), "team 'vision'"));
	gf_jv_free(v);
	assert_int_equal(svc_live("vsvc", ADMIN, NULL), -1);

	/* speech's service: vision neither replaces nor sees it */
	assert_int_equal(http(GF_HTTP_PUT, "/v1/services/ssvc", SPEECH,
			      "{\"replicas\": 0, \"job\": {\"gpu_milli\": "
			      "100}}",
			      &v),
			 200);
	assert_string_equal(str(v, "team"), "speech");
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_PUT, "/v1/services/ssvc", VISION,
			      "{\"replicas\": 1, \"job\": {\"gpus\": 1}}", &v),
			 403);
	gf_jv_free(v);
	assert_int_equal(svc_live("ssvc", VISION, NULL), -1);
	int replicas = -1;
	assert_int_equal(svc_live("ssvc", ADMIN, &replicas), 0);
	assert_int_equal(replicas, 0);

	/* a node's token: no service route at all */
	st = http(GF_HTTP_PUT, "/v1/services/evil", NODE,
		  "{\"replicas\": 1, \"job\": {\"gpus\": 1, \"command\": "
		  "\"id > /tmp/pwned\", \"node_selector\": {\"tier\": "
		  "\"gold\"}}}",
		  &v);
	assert_int_equal(st, 403);
	assert_non_null(strstr(str(v, "detail"), "node's token"));
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_GET, "/v1/services", NODE, NULL, NULL),
			 403);
	assert_int_equal(http(GF_HTTP_PUT, "/v1/services/ssvc/replicas", NODE,
			      "{\"replicas\": 3}", NULL),
			 403);
	assert_int_equal(svc_live("evil", ADMIN, NULL), -1);
	assert_int_equal(svc_live("ssvc", ADMIN, &replicas), 0);
	assert_int_equal(replicas, 0);
	assert_int_equal(
		http(GF_HTTP_DELETE, "/v1/services/ssvc", SPEECH, NULL, NULL),
		200);
	assert_int_equal(njobs(), before);
}

/* GET /v1/queue as token reads it: *n entries, every one of team (when
 * team is not NULL) at positions 1..n; the count it says. */
static int64_t queue_as(const char *token, const char *team, int *n,
			int *of_team)
{
	struct gf_jv *q;
	assert_int_equal(http(GF_HTTP_GET, "/v1/queue", token, NULL, &q), 200);
	const struct gf_jv *list = gf_jv_get(q, "queue");
	*n = (int)gf_jv_len(list);
	*of_team = 0;
	for (int i = 0; i < *n; i++) {
		const struct gf_jv *x = gf_jv_at(list, (size_t)i);
		*of_team += !strcmp(str(x, "team"), "vision");
		if (team) {
			assert_string_equal(str(x, "team"), team);
			assert_int_equal(num(x, "position"), i + 1);
		}
	}
	int64_t pending = num(q, "pending");
	gf_jv_free(q);
	return pending;
}

/* Issue 20 F10: a team's token sees its own jobs' places in the queue
 * and its own count, not the other teams'; the MIG proposal is an
 * admin's. */
static void test_queue_scope(void **state)
{
	(void)state;
	char id[4][32];
	/* speech's 2000 milli: at least one of these waits */
	for (int i = 0; i < 3; i++)
		submit_ok(SPEECH, "{\"gpu_milli\": 1000}", id[i],
			  sizeof(id[i]));
	/* vision's 16 GPUs, 4 in use: this gang waits */
	submit_ok(VISION, "{\"gpus\": 8, \"replicas\": 2}", id[3],
		  sizeof(id[3]));
	gf_jv_free(wait_state(id[3], "pending"));
	int n, nvision, nv, ignored;
	int64_t all = queue_as(ADMIN, NULL, &n, &nvision);
	assert_true(n > nvision); /* speech's wait too */
	assert_int_equal(all, n);
	int64_t mine = queue_as(VISION, "vision", &nv, &ignored);
	assert_int_equal(nv, nvision);
	assert_int_equal(mine, nvision);
	assert_int_equal(http(GF_HTTP_GET, "/v1/queue", NODE, NULL, NULL), 403);
	struct gf_jv *v;
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/mig/proposal", VISION, NULL, &v), 403);
	assert_non_null(strstr(str(v, "detail"), "admin"));
	gf_jv_free(v);
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/mig/proposal", NODE, NULL, NULL), 403);
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/mig/proposal", ADMIN, NULL, NULL), 200);
	for (int i = 0; i < 4; i++) {
		char path[192];
		snprintf(path, sizeof(path), "/v1/jobs/%s", id[i]);
		assert_int_equal(http(GF_HTTP_DELETE, path, ADMIN, NULL, NULL),
				 200);
	}
}

/* The callers of the route table: no token, a wrong one, an admin's, a
 * team's, node NODE_OWN's. */
enum { C_NONE, C_WRONG, C_ADMIN, C_TEAM, C_NODE, C_N };
static const char *const callers[C_N] = { NULL, WRONG, ADMIN, VISION, NODE };

struct row {
	unsigned method;
	const char *path;
	const char *body;
	long status[C_N];
};

#define OWN   "/v1/nodes/" NODE_OWN
#define OTHER "/v1/nodes/" NODE_OTHER

/* Every route, every kind of caller: the status (authz.c's table, then
 * the handler: the bodies are malformed and the names unknown, so that
 * a call let through changes nothing). */
static const struct row table[] = {
	/* path                      body  none wrong admin team node */
	{ GF_HTTP_POST, "/v1/jobs", "{", { 401, 401, 400, 400, 403 } },
	{ GF_HTTP_GET, "/v1/jobs", NULL, { 401, 401, 200, 200, 403 } },
	{ GF_HTTP_GET, "/v1/jobs/j999999", NULL, { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_DELETE,
	  "/v1/jobs/j999999",
	  NULL,
	  { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_GET, "/v1/queue", NULL, { 401, 401, 200, 200, 403 } },
	{ GF_HTTP_GET, "/v1/mig/proposal", NULL, { 401, 401, 200, 403, 403 } },
	{ GF_HTTP_GET, "/v1/services", NULL, { 401, 401, 200, 200, 403 } },
	{ GF_HTTP_GET,
	  "/v1/services/nosuch",
	  NULL,
	  { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_PUT,
	  "/v1/services/nosuch",
	  "{",
	  { 401, 401, 400, 400, 403 } },
	{ GF_HTTP_DELETE,
	  "/v1/services/nosuch",
	  NULL,
	  { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_PUT,
	  "/v1/services/nosuch/replicas",
	  "{",
	  { 401, 401, 400, 400, 403 } },
	{ GF_HTTP_GET, "/v1/chargeback", NULL, { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_GET, "/v1/nodes", NULL, { 401, 401, 200, 200, 403 } },
	{ GF_HTTP_GET, OWN, NULL, { 401, 401, 200, 200, 200 } },
	{ GF_HTTP_GET, OTHER, NULL, { 401, 401, 200, 200, 403 } },
	{ GF_HTTP_PUT, OWN, "{", { 401, 401, 400, 403, 400 } },
	{ GF_HTTP_PUT, OTHER, "{", { 401, 401, 400, 403, 403 } },
	{ GF_HTTP_POST, OWN "/heartbeat", "{", { 401, 401, 400, 403, 400 } },
	{ GF_HTTP_POST, OTHER "/heartbeat", "{", { 401, 401, 400, 403, 403 } },
	{ GF_HTTP_GET,
	  OWN "/assignments?wait=x",
	  NULL,
	  { 401, 401, 400, 403, 400 } },
	{ GF_HTTP_GET,
	  OTHER "/assignments?wait=x",
	  NULL,
	  { 401, 401, 400, 403, 403 } },
	{ GF_HTTP_POST, OWN "/drain", "{", { 401, 401, 400, 403, 400 } },
	{ GF_HTTP_POST, OTHER "/drain", "{", { 401, 401, 400, 403, 403 } },
	{ GF_HTTP_POST,
	  "/v1/nodes/nosuch/resume",
	  NULL,
	  { 401, 401, 404, 403, 403 } },
	{ GF_HTTP_POST,
	  "/v1/jobs/j999999/release",
	  NULL,
	  { 401, 401, 404, 403, 403 } },
	/* a job's flow (issue 21): its team's, or an admin's */
	{ GF_HTTP_POST,
	  "/v1/jobs/j999999/hold",
	  NULL,
	  { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_DELETE,
	  "/v1/jobs/j999999/hold",
	  NULL,
	  { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_POST,
	  "/v1/jobs/j999999/requeue",
	  NULL,
	  { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_GET,
	  "/v1/jobs/j999999/logs",
	  NULL,
	  { 401, 401, 404, 404, 403 } },
	{ GF_HTTP_GET, "/healthz", NULL, { 200, 200, 200, 200, 200 } },
	{ GF_HTTP_GET, "/metrics", NULL, { 200, 200, 200, 200, 200 } },
	/* the extender's client is a client certificate --client-ca
	 * signed (F11): no token, no bearer token of any kind gets in */
	{ GF_HTTP_POST, "/k8s/filter", "{", { 403, 403, 403, 403, 403 } },
	{ GF_HTTP_POST, "/k8s/prioritize", "{", { 403, 403, 403, 403, 403 } },
	{ GF_HTTP_POST, "/k8s/preempt", "{", { 403, 403, 403, 403, 403 } },
	{ GF_HTTP_POST, "/k8s/bind", "{", { 403, 403, 403, 403, 403 } },
	{ GF_HTTP_GET, "/k8s/reconcile", NULL, { 401, 401, 404, 403, 403 } },
};

/* Each row against the service; and every method of every route of the
 * service has a row (a route added without one fails here). */
static void test_route_table(void **state)
{
	(void)state;
	const struct gf_route *routes;
	int nroutes = gf_service_routes(&routes);
	unsigned covered[64] = { 0 };
	assert_true(nroutes <= 64);
	int before = njobs();
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct row *t = &table[i];
		char path[256];
		snprintf(path, sizeof(path), "%s", t->path);
		path[strcspn(path, "?")] = '\0';
		struct gf_route_match m;
		gf_route_match(routes, nroutes, t->method, path, path,
			       sizeof(path), &m);
		assert_true(m.route >= 0);
		covered[m.route] |= t->method;
		for (int c = 0; c < C_N; c++) {
			struct gf_jv *v;
			long st = http(t->method, t->path, callers[c], t->body,
				       &v);
			if (st != t->status[c])
				print_message("%s %s as caller %d: %ld, not "
					      "%ld: %s\n",
					      gf_http_method_name(t->method),
					      t->path, c, st, t->status[c],
					      v ? str(v, "detail") : "");
			assert_int_equal(st, t->status[c]);
			gf_jv_free(v);
		}
	}
	for (int r = 0; r < nroutes; r++) {
		unsigned want = routes[r].methods & ~(unsigned)GF_HTTP_HEAD;
		if ((covered[r] & want) != want)
			print_message("route %s: no row for a method\n",
				      routes[r].pattern);
		assert_int_equal(covered[r] & want, want);
	}
	assert_int_equal(njobs(), before);
}

/*
 * An array of the most tasks (GF_ARRAY_TASKS_MAX) answers every task's
 * id, whole: the 201 was cut at 4 KiB (about 330 ids), so that `gpufleet
 * submit --array 0-999` said "not JSON" and exited 1 for a submission
 * that had been admitted.  Held, then cancelled: it takes no GPU.
 */
static void test_array_answer_whole(void **state)
{
	(void)state;
	int before = njobs();
	char body[128];
	snprintf(body, sizeof(body),
		 "{\"command\": \"true\", \"gpus\": 1, \"hold\": true, "
		 "\"array\": \"0-%d\"}",
		 GF_ARRAY_TASKS_MAX - 1);
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_POST, "/v1/jobs", VISION, body, &v), 201);
	assert_non_null(v); /* NULL: not JSON */
	const struct gf_jv *tasks = gf_jv_get(v, "tasks");
	assert_int_equal(gf_jv_len(tasks), GF_ARRAY_TASKS_MAX);
	char id[32], path[64];
	snprintf(id, sizeof(id), "%s", str(v, "id"));
	assert_string_equal(gf_jv_str(gf_jv_at(tasks, 0)), id);
	char last[32];
	snprintf(last, sizeof(last), "j%lld",
		 atoll(id + 1) + GF_ARRAY_TASKS_MAX - 1);
	assert_string_equal(gf_jv_str(gf_jv_at(tasks, GF_ARRAY_TASKS_MAX - 1)),
			    last);
	gf_jv_free(v);
	assert_int_equal(njobs(), before + GF_ARRAY_TASKS_MAX);
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	assert_int_equal(http(GF_HTTP_DELETE, path, VISION, NULL, &v), 200);
	gf_jv_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_and_read),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_env_workdir_user),
		cmocka_unit_test(test_nodes_health_metrics),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_services),
		cmocka_unit_test(test_latency_clock),
		cmocka_unit_test(test_services_scope),
		cmocka_unit_test(test_queue_scope),
		cmocka_unit_test(test_route_table),
		cmocka_unit_test(test_flow),
		cmocka_unit_test(test_array_answer_whole),
	};
	return cmocka_run_group_tests_name("serve-api", tests, setup, teardown);
}
