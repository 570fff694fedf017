/*
 * test_replay_serve.c - the controller and the replay share one
 * scheduling core (issue 16): the same small trace runs through
 * `simulate replay` (sim/replay.h, virtual clock) and through a real
 * `gpufleet serve` (controller/service.h: a loopback port the kernel
 * picks, SQLite in a temp dir, the nodes from the same CSV, the same
 * core config), and both give the same starts in the same order, on the
 * same nodes and GPUs.
 *
 * The trace (below) has whole GPUs, shares, gangs, two teams, three
 * classes, jobs that wait for others to end, a gang that waits for room
 * and one that preempts a batch job (which starts again later), under
 * two policies (best fit, FGD).  The preemptions are counted both ways
 * too.  Against the service it is played in real time,
 * shortened (SCALE_MS per trace second): each arrival is a POST
 * /v1/jobs, each end of a run a DELETE /v1/jobs/{id}.  A controller
 * with nodes from a CSV and no agents has no other way to end a job;
 * in the core a cancel and a finish both go through the same release
 * (gf__to_final), so the state the next pass sees is the same.
 *
 * Timing.  Nothing here compares times.  The driver is one thread and
 * waits for each answer, and the service answers a request only after
 * the turn that applied it ran its pass, so the events reach the core
 * in the trace's order whatever the load.  Before each event the driver
 * waits for the service to be still (two reads of every job, three
 * ticks apart, alike), so that the pass a tick after a preemption has
 * run too.  It learns which jobs started from the service and ends each
 * one `duration` trace seconds after the event that started it: its own
 * virtual clock, fed by the service's decisions, never by the replay's.
 * Starts are compared grouped by the event after which they happened
 * (the replay's follow-up pass a tick after an event belongs to that
 * event).  The trace keeps its events at least 1 s apart, so no
 * decision depends on which of two events came first; the test checks
 * that of the replay's run.
 */
#include <inttypes.h>

#include "controller/service.h"
#include "serve_helpers.h"
#include "sim/replay.h"
#include "util/mem.h"

#define SCALE_MS 40 /* real ms per trace second */
#define TICK_MS	 20 /* the service's pass period */
#define MAXJ	 32
#define MAXS	 64 /* starts (replicas) */

static char dir[64], db[256], csv[128];

static const char nodes_text[] = "sn,cpu_milli,memory_mib,gpu,model\n"
				 "n1,64000,262144,8,A100\n"
				 "n2,64000,262144,8,A100\n"
				 "n3,32000,131072,4,A100\n";

/* One start of a replica: after which event (its trace ms), where. */
struct start {
	int64_t at;
	int job, replica;
	char node[GF_NODE_NAME_MAX];
	int ngpus;
	int gpus[GF_CNODE_MAX_GPUS];
};

struct starts {
	struct start s[MAXS];
	int n;
};

static int cmp_start(const void *a, const void *b)
{
	const struct start *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if (x->job != y->job)
		return x->job - y->job;
	return x->replica - y->replica;
}

static void start_text(const struct start *s, char *out, size_t size)
{
	int k = snprintf(out, size, "t=%" PRId64 " job %d/%d on %s [", s->at,
			 s->job, s->replica, s->node);
	for (int g = 0; g < s->ngpus && k > 0 && (size_t)k < size; g++)
		k += snprintf(out + k, size - (size_t)k, "%s%d", g ? "," : "",
			      s->gpus[g]);
	if (k > 0 && (size_t)k < size)
		snprintf(out + k, size - (size_t)k, "]");
}

/* ---- the trace ------------------------------------------------------ */

/* A job: arrives at at_s, runs run_s; gpus whole GPUs per replica, or a
 * share when gpus < 0 (-milli). */
static void add(struct gf_replay_trace *t, int at_s, int gpus, int replicas,
		int run_s, const char *cls, const char *team)
{
	struct gf_replay_job j = { .arrival_ms = (int64_t)at_s * 1000,
				   .duration_ms = (int64_t)run_s * 1000,
				   .cpu_milli = 4000,
				   .memory_mib = 16384,
				   .replicas = (int16_t)replicas,
				   .model = -1,
				   .line = t->n + 2 };
	if (gpus >= 0)
		j.gpus = (int16_t)gpus;
	else
		j.gpu_milli = (int16_t)-gpus;
	j.team = (uint16_t)gf_replay_team(t, team);
	j.cls = (uint16_t)gf_replay_class(t, cls);
	assert_int_equal(gf_replay_add(t, &j), 0);
}

/*
 * 20 GPUs on three nodes (8, 8, 4).  Arrivals in trace seconds; every
 * arrival and every end at least 1 s from any other event (checked on
 * the replay's run).
 */
static void make_trace(struct gf_replay_trace *t)
{
	gf_replay_trace_init(t);
	add(t, 0, 4, 1, 41, "training", "a");	   /* 0 */
	add(t, 2, 8, 1, 29, "training", "b");	   /* 1 */
	add(t, 4, -500, 1, 65, "inference", "a");  /* 2: a share */
	add(t, 6, 2, 1, 17, "training", "a");	   /* 3 */
	add(t, 8, -250, 1, 35, "batch", "b");	   /* 4: a share */
	add(t, 10, 4, 2, 21, "training", "b");	   /* 5: a gang, waits */
	add(t, 12, 1, 1, 13, "training", "a");	   /* 6: behind the gang */
	add(t, 14, 2, 1, 57, "batch", "a");	   /* 7: preemptible */
	add(t, 36, 8, 1, 15, "inference", "b");	   /* 8: waits for a node */
	add(t, 38, 1, 1, 11, "training", "b");	   /* 9 */
	add(t, 40, 2, 1, 9, "training", "a");	   /* 10 */
	add(t, 44, -500, 1, 19, "inference", "b"); /* 11: a share */
	add(t, 46, 4, 1, 7, "batch", "b");	   /* 12 */
	add(t, 48, 8, 2, 5, "training",
	    "a"); /* 13: a gang of 16: puts 7 back */
	add(t, 70, 1, 1, 3, "training", "b");  /* 14 */
	add(t, 76, 3, 1, 23, "training", "a"); /* 15 */
}

/* ---- the replay ----------------------------------------------------- */

/* The event instants of a replay: arrivals and the ends it played. */
static int instants(const struct gf_replay_trace *t,
		    const struct gf_replay_result *r, int64_t *at)
{
	int n = 0;
	for (int j = 0; j < t->n; j++) {
		at[n++] = t->jobs[j].arrival_ms;
		if (r->end_at_ms[j] >= 0)
			at[n++] = r->end_at_ms[j];
	}
	for (int i = 1; i < n; i++) /* insertion sort: a few dozen */
		for (int k = i; k > 0 && at[k] < at[k - 1]; k--) {
			int64_t x = at[k];
			at[k] = at[k - 1];
			at[k - 1] = x;
		}
	return n;
}

static void replay(const struct gf_serve_config *cfg,
		   const struct gf_replay_trace *t, struct starts *out,
		   int64_t *preemptions)
{
	struct gf_cluster c;
	struct gf_ctl_node *nodes;
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_serve_config copy = *cfg;
	assert_int_equal(gf_serve_build_nodes(&copy, csv, &c, &nodes, &e), 0);
	struct gf_replay_opts o = { .keep_log = true, .points = 10 };
	struct gf_replay_result r;
	int rc = gf_replay_run(&cfg->ctl, &c, nodes, t, &o, &r, &e);
	if (rc)
		print_message("replay: %s\n", e.msg);
	assert_int_equal(rc, 0);
	char msg[256];
	assert_int_equal(gf_replay_check(t, &r, msg, sizeof(msg)), 0);
	assert_int_equal(r.completed, t->n);
	assert_true(r.preemptions >= 1); /* the trace shows one */
	*preemptions = r.preemptions;
	if (getenv("GF_TEST_VERBOSE"))
		for (int j = 0; j < t->n; j++)
			print_message("job %d: arrives %" PRId64
				      " starts %" PRId64 " ends %" PRId64 "\n",
				      j, t->jobs[j].arrival_ms,
				      r.first_start_ms[j], r.end_at_ms[j]);
	/* the events at least 1 s apart: no decision rests on their order */
	int64_t at[2 * MAXJ];
	int n = instants(t, &r, at);
	for (int i = 1; i < n; i++) {
		if (at[i] - at[i - 1] < 1000)
			print_message("events at %" PRId64 " and %" PRId64
				      " ms: closer than 1 s\n",
				      at[i - 1], at[i]);
		assert_true(at[i] - at[i - 1] >= 1000);
	}
	out->n = 0;
	for (int i = 0; i < r.nlog; i++) {
		const struct gf_replay_start *l = &r.log[i];
		assert_true(out->n < MAXS);
		struct start *s = &out->s[out->n++];
		memset(s, 0, sizeof(*s));
		int k = n - 1; /* the last event at or before the start */
		while (k > 0 && at[k] > l->t_ms)
			k--;
		s->at = at[k];
		s->job = l->job;
		s->replica = l->replica;
		snprintf(s->node, sizeof(s->node), "%s", c.names[l->node]);
		s->ngpus = l->ngpus;
		memcpy(s->gpus, l->gpus, sizeof(s->gpus));
	}
	gf_replay_result_release(&r);
	gf_free(nodes);
	gf_cluster_release(&c);
}

/* ---- the service ---------------------------------------------------- */

/* What the driver knows of each job (trace index). */
struct seen {
	char id[GF_JOB_ID_MAX];
	bool submitted, ended;
	bool running;
	int attempts;
	int64_t end_at; /* trace ms its run ends (running) */
	int preemptions;
};

/* Every job of the service, as "id state attempts;..." (the stillness
 * test) and parsed. */
static struct gf_jv *read_jobs(char *sig, size_t size)
{
	struct gf_jv *v;
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/jobs?limit=1000", NULL, NULL, &v), 200);
	const struct gf_jv *jobs = gf_jv_get(v, "jobs");
	size_t k = 0;
	sig[0] = '\0';
	for (size_t i = 0; i < gf_jv_len(jobs) && k < size; i++) {
		const struct gf_jv *j = gf_jv_at(jobs, i);
		int w = snprintf(sig + k, size - k, "%s %s %" PRId64 ";",
				 str(j, "id"), str(j, "state"),
				 num(j, "attempts"));
		k += w > 0 ? (size_t)w : 0;
	}
	return v;
}

/* The jobs once the service is still: the same twice, 3 ticks apart. */
static struct gf_jv *still_jobs(void)
{
	static char a[8192], b[8192];
	struct gf_jv *v = read_jobs(a, sizeof(a));
	for (int tries = 0; tries < 200; tries++) {
		sleep_ms(3 * TICK_MS);
		struct gf_jv *w = read_jobs(b, sizeof(b));
		gf_jv_free(v);
		v = w;
		if (!strcmp(a, b))
			return v;
		memcpy(a, b, sizeof(a));
	}
	fail_msg("the service never became still");
	return v;
}

static int job_of(const struct gf_replay_trace *t, const struct seen *sn,
		  const char *id)
{
	for (int j = 0; j < t->n; j++)
		if (sn[j].submitted && !strcmp(sn[j].id, id))
			return j;
	return -1;
}

/* New starts since the last look, after the event at `at`. */
static void look(const struct gf_replay_trace *t, struct seen *sn, int64_t at,
		 struct starts *out)
{
	struct gf_jv *v = still_jobs();
	const struct gf_jv *jobs = gf_jv_get(v, "jobs");
	for (size_t i = 0; i < gf_jv_len(jobs); i++) {
		const struct gf_jv *jv = gf_jv_at(jobs, i);
		int j = job_of(t, sn, str(jv, "id"));
		assert_true(j >= 0);
		struct seen *x = &sn[j];
		const char *state = str(jv, "state");
		int attempts = (int)num(jv, "attempts");
		x->preemptions = (int)num(jv, "preemptions");
		if (x->ended)
			continue;
		if (strcmp(state, "running") != 0) {
			assert_string_equal(state, "pending");
			x->running = false;
			continue;
		}
		if (x->running && attempts == x->attempts)
			continue;
		/* a new attempt started: its replicas, where */
		x->running = true;
		x->attempts = attempts;
		x->end_at = at + t->jobs[j].duration_ms;
		const struct gf_jv *pl = gf_jv_get(jv, "placement");
		for (size_t k = 0; k < gf_jv_len(pl); k++) {
			const struct gf_jv *p = gf_jv_at(pl, k);
			assert_true(out->n < MAXS);
			struct start *s = &out->s[out->n++];
			memset(s, 0, sizeof(*s));
			s->at = at;
			s->job = j;
			s->replica = (int)k;
			snprintf(s->node, sizeof(s->node), "%s",
				 str(p, "node"));
			const struct gf_jv *g = gf_jv_get(p, "gpus");
			for (size_t q = 0;
			     q < gf_jv_len(g) && q < GF_CNODE_MAX_GPUS; q++) {
				int64_t x64;
				assert_true(gf_jv_int(gf_jv_at(g, q), &x64));
				s->gpus[s->ngpus++] = (int)x64;
			}
		}
	}
	gf_jv_free(v);
}

static void submit(const struct gf_replay_trace *t, int j, struct seen *x)
{
	const struct gf_replay_job *tj = &t->jobs[j];
	char body[512], res[64];
	if (tj->gpus > 0)
		snprintf(res, sizeof(res), "\"gpus\": %d", tj->gpus);
	else
		snprintf(res, sizeof(res), "\"gpu_milli\": %d", tj->gpu_milli);
	snprintf(body, sizeof(body),
		 "{\"name\": \"job-%d\", \"command\": \"true\", "
		 "\"team\": \"%s\", \"class\": \"%s\", "
		 "\"replicas\": %d, %s, \"cpu_milli\": %d, \"memory_mib\": "
		 "%" PRId64 "}",
		 j, t->teams[tj->team], t->classes[tj->cls], tj->replicas, res,
		 tj->cpu_milli, tj->memory_mib);
	struct gf_jv *v;
	long st = http(GF_HTTP_POST, "/v1/jobs", NULL, body, &v);
	if (st != 201)
		print_message("submit %s: %ld %s\n", body, st,
			      v ? str(v, "detail") : "");
	assert_int_equal(st, 201);
	snprintf(x->id, sizeof(x->id), "%s", str(v, "id"));
	x->submitted = true;
	gf_jv_free(v);
}

static void finish(struct seen *x)
{
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%s", x->id);
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_DELETE, path, NULL, NULL, &v), 200);
	assert_string_equal(str(v, "state"), "cancelled");
	gf_jv_free(v);
	x->ended = true;
	x->running = false;
}

/* The trace through a fresh service: its starts, grouped by event. */
static void serve(const struct gf_serve_config *cfg0,
		  const struct gf_replay_trace *t, struct starts *out,
		  int64_t *preemptions)
{
	static struct gf_serve_config cfg; /* borrowed by the service */
	cfg = *cfg0;
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/state'", dir);
	assert_int_equal(system(cmd), 0);
	struct gf_service_opts o = { .listen = "127.0.0.1:0",
				     .db = db,
				     .cfg = &cfg,
				     .nodes_csv = csv,
				     .tick_ms = TICK_MS };
	struct gf_service *svc;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_service_start(&svc, &o, &e);
	if (rc)
		print_message("start: %s\n", e.msg);
	assert_int_equal(rc, 0);
	snprintf(base, sizeof(base), "%s", gf_service_url(svc));
	base[strlen(base) - 1] = '\0'; /* no trailing '/' */

	struct seen sn[MAXJ];
	memset(sn, 0, sizeof(sn));
	assert_true(t->n <= MAXJ);
	out->n = 0;
	int next = 0; /* arrivals come in trace order (sorted) */
	int64_t now = 0, t0 = mono_ms();
	for (;;) {
		/* the next event: the earliest end of a run, else an
		 * arrival (never at the same instant: see the trace) */
		int end = -1;
		for (int j = 0; j < t->n; j++)
			if (sn[j].running && !sn[j].ended &&
			    (end < 0 || sn[j].end_at < sn[end].end_at))
				end = j;
		int64_t at = INT64_MAX;
		if (end >= 0)
			at = sn[end].end_at;
		bool arrival = next < t->n && t->jobs[next].arrival_ms < at;
		if (arrival)
			at = t->jobs[next].arrival_ms;
		if (at == INT64_MAX)
			break;
		assert_true(at > now || (now == 0 && at == 0));
		int64_t wait = t0 + at * SCALE_MS / 1000 - mono_ms();
		if (wait > 0)
			sleep_ms((long)wait);
		now = at;
		if (arrival) {
			submit(t, next, &sn[next]);
			next++;
		} else {
			finish(&sn[end]);
		}
		look(t, sn, now, out);
	}
	*preemptions = 0;
	for (int j = 0; j < t->n; j++) {
		assert_true(sn[j].submitted && sn[j].ended);
		*preemptions += sn[j].preemptions;
	}
	char msg[256];
	assert_int_equal(gf_service_failed(svc, msg, sizeof(msg)), 0);
	gf_service_stop(svc);
}

/* ---- the test ------------------------------------------------------- */

static void compare(const struct starts *a, const struct starts *b)
{
	char x[160], y[160];
	bool same = a->n == b->n;
	for (int i = 0; same && i < a->n; i++) {
		start_text(&a->s[i], x, sizeof(x));
		start_text(&b->s[i], y, sizeof(y));
		same = !strcmp(x, y);
	}
	if (same)
		return;
	int n = a->n > b->n ? a->n : b->n;
	print_message("%-44s %s\n", "replay", "serve");
	for (int i = 0; i < n; i++) {
		x[0] = y[0] = '\0';
		if (i < a->n)
			start_text(&a->s[i], x, sizeof(x));
		if (i < b->n)
			start_text(&b->s[i], y, sizeof(y));
		print_message("%-44s %s%s\n", x, y,
			      strcmp(x, y) ? "   <<" : "");
	}
	fail_msg("the replay and the service started different jobs or "
		 "placed them differently");
}

static void same_run(enum gf_policy policy)
{
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	gf_replay_config(&cfg.ctl, policy, 42); /* the replay's config */
	struct gf_replay_trace t;
	make_trace(&t);
	static struct starts a, b;
	int64_t pa, pb;
	replay(&cfg, &t, &a, &pa);
	serve(&cfg, &t, &b, &pb);
	qsort(a.s, (size_t)a.n, sizeof(a.s[0]), cmp_start);
	qsort(b.s, (size_t)b.n, sizeof(b.s[0]), cmp_start);
	if (getenv("GF_TEST_VERBOSE"))
		for (int i = 0; i < a.n; i++) {
			char x[160];
			start_text(&a.s[i], x, sizeof(x));
			print_message("%s\n", x);
		}
	compare(&a, &b);
	assert_int_equal(pa, pb);
	gf_replay_trace_release(&t);
	gf_serve_config_release(&cfg);
}

static void test_same_run_bestfit(void **state)
{
	(void)state;
	same_run(GF_POLICY_BESTFIT);
}

static void test_same_run_fgd(void **state)
{
	(void)state;
	same_run(GF_POLICY_FGD);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gf-replay-serve-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "sqlite:%s/state/jobs.db", dir);
	snprintf(csv, sizeof(csv), "%s/nodes.csv", dir);
	write_text(csv, nodes_text);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_run_bestfit),
		cmocka_unit_test(test_same_run_fgd),
	};
	int rc = cmocka_run_group_tests_name("replay_serve", tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
