/*
 * join.c - the link's two threads (join.h): the loop registers the node,
 * heartbeats, applies the assignments the poller received, watches the
 * worker and fences; the poller holds the long poll.  With
 * one_connection there is no poller: the loop reads the assignments
 * itself, on its own connection, when an answer says a generation newer
 * than the one it has.
 *
 * The loop, every 100 ms or when woken:
 *   worker events into the ledger (a run that ended: heartbeat now);
 *   not registered: PUT the inventory (with what runs and what ended),
 *     retried every second until answered 200;
 *   heartbeat due: POST it; an answer moves the fence clock and forgets
 *     the acknowledged runs; 404 (the controller forgot the node): PUT;
 *   the latest assignments applied (again until whole);
 *   no answer for fence_after: stop every job, start nothing.
 * The fence clock and its length are kept in STATE/fence, so an agent
 * that restarts cut off from the controller still stops its jobs in time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/join_impl.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/cond.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define LOOP_MS	       100
#define RETRY_MS       1000
#define POLL_WAIT_S    30
#define REQ_TIMEOUT_MS 10000

/* Whole milliseconds on the monotonic clock. */
static int64_t mono_ms(void)
{
	return (int64_t)gf_clock_ms();
}

/* ---- the fence clock on disk ---------------------------------------- */

static void fence_save(const struct gf_join *j)
{
	char tmp[sizeof(j->fence) + 8];
	if (gf_fmt(tmp, sizeof(tmp), "%s.tmp", j->fence) != 0)
		return; /* cannot be: room for the suffix */
	FILE *f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%" PRId64 " %" PRId64 "\n", j->last_ok_wall,
		j->fence_after_ms);
	if (fclose(f) == 0)
		rename(tmp, j->fence);
}

/* A restarted agent: the clock goes on from the last answered heartbeat
 * of the one before (wall clock: the only one that survives). */
static void fence_load(struct gf_join *j)
{
	FILE *f = fopen(j->fence, "re");
	int64_t at = 0, after = 0;
	if (!f)
		return;
	if (fscanf(f, "%" SCNd64 " %" SCNd64, &at, &after) == 2 && at > 0 &&
	    after > 0) {
		j->last_ok_wall = at;
		j->fence_after_ms = after;
		int64_t age = gf_clock_wall_ms() - at;
		j->last_ok_mono = mono_ms() - (age > 0 ? age : 0);
	}
	fclose(f);
}

static void check_fence(struct gf_join *j)
{
	if (j->fence_after_ms <= 0 || j->fenced ||
	    mono_ms() - j->last_ok_mono < j->fence_after_ms)
		return;
	j->fenced = true;
	gf_log(GF_LOG_ERROR, "join",
	       "no answer from the controller for %lld s: stopping every job "
	       "(the controller requeues them elsewhere soon; nothing starts "
	       "here until it answers again)",
	       (long long)(j->fence_after_ms / 1000));
	gf__join_stop_all(j, "fenced");
}

/* ---- talking to the controller -------------------------------------- */

static int exchange(struct gf_join *j, struct gf_client *c, unsigned method,
		    const char *url, const struct gf_buf *body,
		    struct gf_client_answer *a)
{
	struct gf_client_req q = { .method = method,
				   .url = url,
				   .token = j->o.token,
				   .body = body ? body->data : NULL,
				   .body_len = body ? body->len : 0,
				   .timeout_ms = REQ_TIMEOUT_MS };
	q.ca = j->o.ca;
	q.insecure_http = j->o.insecure_http;
	struct gf_err e;
	int rc = gf_client_request(c, &q, a, &e);
	if (rc)
		gf_log(GF_LOG_DEBUG, "join", "%s", e.msg);
	return rc;
}

/* The controller's answer to a PUT or a heartbeat sent at sent_mono. */
static void acked(struct gf_join *j, const struct gf_client_answer *a,
		  int64_t sent_mono, int64_t sent_wall)
{
	struct gf_jv *v = NULL;
	struct gf_np_ack ack;
	struct gf_err e;
	if (gf_jv_parse(a->body.data, a->body.len, &v, &e) != 0 ||
	    gf_np_ack_read(v, &ack, &e) != 0) {
		gf_log(GF_LOG_WARN, "join", "the controller's answer: %s",
		       e.msg);
		gf_jv_free(v);
		return;
	}
	gf_jv_free(v);
	if (j->fenced)
		gf_log(GF_LOG_INFO, "join",
		       "the controller answers again: jobs may start");
	j->fenced = false;
	j->last_ok_mono = sent_mono;
	j->last_ok_wall = sent_wall;
	j->hb_every_ms = ack.heartbeat_ms;
	j->fence_after_ms = ack.fence_after_ms;
	j->acked_gen = ack.generation;
	fence_save(j);
	gf__join_acked(j, &ack);
	gf_np_ack_release(&ack);
	pthread_mutex_lock(&j->lock);
	j->st.heartbeats++;
	pthread_mutex_unlock(&j->lock);
}

static void said_no(const char *what, const struct gf_client_answer *a)
{
	gf_log(a->status == 401 || a->status == 403 ? GF_LOG_ERROR
						    : GF_LOG_WARN,
	       "join", "%s: %ld %.300s", what, a->status, gf_buf_str(&a->body));
}

/* PUT or POST the node's state; 0 when answered 200. */
static int send_state(struct gf_join *j, struct gf_client *c, bool reg)
{
	struct gf_buf b;
	struct gf_json js;
	struct gf_np_heartbeat hb;
	gf_json_open(&js, &b, GF_NP_BODY_MAX);
	gf__join_heartbeat(j, &hb);
	gf_json_obj_begin(&js, NULL);
	if (reg)
		gf_np_inventory_write(&js, &j->inv, j->o.topology,
				      j->o.topology ? strlen(j->o.topology)
						    : 0);
	gf_np_heartbeat_write(&js, &hb);
	gf_json_obj_end(&js);
	gf_np_heartbeat_release(&hb);
	int rc = -1;
	if (gf_json_error(&js)) {
		gf_log(GF_LOG_ERROR, "join", "the %s is over %u bytes",
		       reg ? "registration" : "heartbeat", GF_NP_BODY_MAX);
		gf_buf_release(&b);
		return rc;
	}
	struct gf_client_answer a;
	int64_t sent_mono = mono_ms(), sent_wall = gf_clock_wall_ms();
	int xrc = exchange(j, c, reg ? GF_HTTP_PUT : GF_HTTP_POST,
			   reg ? j->url_put : j->url_hb, &b, &a);
	if (xrc == 0 && a.status == 200) {
		acked(j, &a, sent_mono, sent_wall);
		rc = 0;
	} else if (xrc == 0 && a.status == 404 && !reg) {
		gf_log(GF_LOG_INFO, "join",
		       "the controller does not know this node: registering");
		pthread_mutex_lock(&j->lock);
		j->need_register = true;
		pthread_mutex_unlock(&j->lock);
	} else if (xrc == 0) {
		said_no(reg ? "registration" : "heartbeat", &a);
	}
	if (rc) {
		pthread_mutex_lock(&j->lock);
		j->st.heartbeat_failures++;
		pthread_mutex_unlock(&j->lock);
	}
	gf_client_answer_release(&a);
	gf_buf_release(&b);
	return rc;
}

/* ---- the loop ------------------------------------------------------- */

static void wait_ms(struct gf_join *j, int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&j->lock);
	if (!j->stop && !j->have_next)
		pthread_cond_timedwait(&j->wake, &j->lock, &ts);
	pthread_mutex_unlock(&j->lock);
}

/* Take the assignments the poller left, if any, into cur. */
static bool take_next(struct gf_join *j, struct gf_np_assignments *cur)
{
	bool got = false;
	pthread_mutex_lock(&j->lock);
	if (j->have_next) {
		gf_np_assignments_release(cur);
		*cur = j->next;
		memset(&j->next, 0, sizeof(j->next));
		j->have_next = false;
		got = true;
	}
	pthread_mutex_unlock(&j->lock);
	return got;
}

static void publish_stats(struct gf_join *j, bool registered)
{
	int run = 0, rep = 0;
	for (int i = 0; i < j->led.n; i++) {
		run += j->led.v[i].st == GF_LE_RUNNING;
		rep += j->led.v[i].st == GF_LE_ENDED;
	}
	pthread_mutex_lock(&j->lock);
	j->st.registered = registered;
	j->st.fenced = j->fenced;
	j->st.generation = j->applied;
	j->st.running = run;
	j->st.pending_reports = rep;
	pthread_mutex_unlock(&j->lock);
}

static int fetch(struct gf_join *j, struct gf_client *c, int wait_s,
		 uint64_t after);
static void fetch_if_newer(struct gf_join *j, struct gf_client *c);

static void *loop(void *arg)
{
	struct gf_join *j = arg;
	struct gf_client *c = gf_client_new();
	struct gf_np_assignments cur = { 0 };
	bool have_cur = false, applied_cur = true, registered = false;
	int64_t next_hb = 0, next_reg = 0;
	for (;;) {
		pthread_mutex_lock(&j->lock);
		bool stop = j->stop, reg = j->need_register;
		pthread_mutex_unlock(&j->lock);
		if (stop)
			break;
		bool ended = gf__join_events(j);
		int64_t now = mono_ms();
		if (reg && now >= next_reg) {
			if (send_state(j, c, true) == 0) {
				pthread_mutex_lock(&j->lock);
				j->need_register = false;
				pthread_mutex_unlock(&j->lock);
				registered = true;
				gf_log(GF_LOG_INFO, "join",
				       "registered as '%s' with %s", j->o.name,
				       j->o.controller);
				next_hb = now + j->hb_every_ms;
				if (j->o.one_connection) /* what it has */
					(void)fetch(j, c, 0, 0);
			} else {
				next_reg = now + RETRY_MS;
			}
		} else if (!reg && (now >= next_hb || ended)) {
			int rc = send_state(j, c, false);
			if (rc == 0 && j->o.one_connection)
				fetch_if_newer(j, c);
			next_hb = now + (rc == 0 ? j->hb_every_ms
						 : (j->hb_every_ms < RETRY_MS
							    ? j->hb_every_ms
							    : RETRY_MS));
		}
		check_fence(j);
		if (take_next(j, &cur)) {
			have_cur = true;
			applied_cur = false;
		}
		if (have_cur && !applied_cur)
			applied_cur = gf__join_apply(j, &cur);
		if (have_cur)
			gf__join_jobs(j, &cur);
		publish_stats(j, registered);
		int64_t left = next_hb - mono_ms();
		wait_ms(j, left < LOOP_MS ? (left > 0 ? left : 1) : LOOP_MS);
	}
	gf_np_assignments_release(&cur);
	gf_client_free(c);
	return NULL;
}

/* ---- the poller ----------------------------------------------------- */

static bool stopping(struct gf_join *j)
{
	pthread_mutex_lock(&j->lock);
	bool s = j->stop;
	pthread_mutex_unlock(&j->lock);
	return s;
}

/* The node's assignments after generation `after`, waiting up to
 * wait_s for a newer one (0: answered at once), handed to the loop
 * (j->next).  0, or -1 (logged; a 404 asks the loop to register). */
static int fetch(struct gf_join *j, struct gf_client *c, int wait_s,
		 uint64_t after)
{
	char url[sizeof(j->url_poll) + 64];
	if (gf_fmt(url, sizeof(url), "%s?wait=%ds&after=%" PRIu64, j->url_poll,
		   wait_s, after) != 0)
		return -1; /* cannot be: room for the query kept */
	struct gf_client_req q = { .url = url,
				   .token = j->o.token,
				   .timeout_ms = wait_s * 1000 + REQ_TIMEOUT_MS,
				   .answer_max = 64u << 20,
				   .cancel = &j->cancel };
	q.ca = j->o.ca;
	q.insecure_http = j->o.insecure_http;
	struct gf_client_answer a;
	struct gf_err e;
	int rc = gf_client_request(c, &q, &a, &e);
	struct gf_jv *v = NULL;
	struct gf_np_assignments got;
	if (rc == 0 && a.status == 200 &&
	    gf_jv_parse(a.body.data, a.body.len, &v, &e) == 0 &&
	    gf_np_assignments_read(v, &got, &e) == 0) {
		pthread_mutex_lock(&j->lock);
		gf_np_assignments_release(&j->next);
		j->next = got;
		j->have_next = true;
		j->received = got.generation;
		pthread_cond_broadcast(&j->wake);
		pthread_mutex_unlock(&j->lock);
	} else {
		if (rc == 0 && a.status == 200)
			gf_log(GF_LOG_WARN, "join",
			       "the controller's assignments: %s", e.msg);
		else if (rc == 0)
			said_no("assignments", &a);
		if (rc == 0 && a.status == 404) {
			pthread_mutex_lock(&j->lock);
			j->need_register = true;
			pthread_mutex_unlock(&j->lock);
		}
		rc = -1;
	}
	gf_jv_free(v);
	gf_client_answer_release(&a);
	return rc;
}

static void *poller(void *arg)
{
	struct gf_join *j = arg;
	struct gf_client *c = gf_client_new();
	int64_t backoff = 0;
	while (!stopping(j)) {
		if (backoff) {
			wait_ms(j, backoff);
			if (stopping(j))
				break;
		}
		pthread_mutex_lock(&j->lock);
		bool registered = j->st.registered && !j->need_register;
		uint64_t after = j->received;
		pthread_mutex_unlock(&j->lock);
		if (!registered) {
			backoff = 200;
			continue;
		}
		backoff = fetch(j, c, POLL_WAIT_S, after) == 0 ? 0 : RETRY_MS;
	}
	gf_client_free(c);
	return NULL;
}

/* One connection: the assignments read at once when the last answer
 * said a generation newer than the one received. */
static void fetch_if_newer(struct gf_join *j, struct gf_client *c)
{
	pthread_mutex_lock(&j->lock);
	uint64_t have = j->received;
	pthread_mutex_unlock(&j->lock);
	if (j->acked_gen > have)
		(void)fetch(j, c, 0, have); /* failed: the next answer */
}

/* ---- start and stop ------------------------------------------------- */

static int urls(struct gf_join *j, struct gf_err *e)
{
	const char *base = j->o.controller, *name = j->o.name;
	if (gf_fmt(j->url_put, sizeof(j->url_put), "%s/v1/nodes/%s", base,
		   name) != 0 ||
	    gf_fmt(j->url_hb, sizeof(j->url_hb), "%s/v1/nodes/%s/heartbeat",
		   base, name) != 0 ||
	    gf_fmt(j->url_poll, sizeof(j->url_poll),
		   "%s/v1/nodes/%s/assignments", base, name) != 0)
		return gf_err_set(e, GF_EINVAL,
				  "join: controller URL '%.100s' with node "
				  "'%.64s' is longer than %zu bytes",
				  base, name, sizeof(j->url_put) - 1);
	return 0;
}

/* STATE/name into out; GF_ETOOBIG naming the state directory. */
static int state_path(const char *state_dir, const char *name, char *out,
		      size_t size, struct gf_err *e)
{
	if (gf_fmt(out, size, "%s/%s", state_dir, name) == 0)
		return 0;
	return gf_err_set(e, GF_ETOOBIG,
			  "join: state directory '%.100s%s' is %zu bytes, too "
			  "long for '%s' under it (%zu at most)",
			  state_dir, strlen(state_dir) > 100 ? "..." : "",
			  strlen(state_dir), name, size - 2 - strlen(name));
}

/* The paths under the state directory, and every check of the worker's
 * options, before anything is made on disk. */
static int prepare(struct gf_join *j, struct gf_worker_opts *wo, char *wdir,
		   char *ldir, size_t size, struct gf_err *e)
{
	const char *state = j->o.state_dir;
	int rc = state_path(state, "worker", wdir, size, e);
	if (rc == 0 && !j->o.log_dir)
		rc = state_path(state, "logs", ldir, size, e);
	if (rc == 0)
		rc = state_path(state, "fence", j->fence, sizeof(j->fence), e);
	if (rc == 0)
		rc = gf__ledger_init(&j->led, state, e);
	if (rc == 0)
		rc = urls(j, e);
	*wo = (struct gf_worker_opts){ .state_dir = wdir,
				       .log_dir = j->o.log_dir ? j->o.log_dir
							       : ldir,
				       .node_name = j->o.name,
				       .node = j->o.node,
				       .env_only = !j->o.bind,
				       .grace_ms = j->o.kill_grace_ms,
				       .default_user = j->o.default_user,
				       .cgroup = j->o.cgroup,
				       /* the shims fence too: a dead agent's
					* jobs stop in time as well */
				       .lease_path = j->fence };
	return rc ? rc : gf_worker_check_opts(wo, e);
}

/* A restarted agent says what it found running and what it has yet to
 * report: the operator's view of a restart. */
static void log_recovered(struct gf_join *j)
{
	struct gf_worker_job run[16];
	int n = gf_worker_running(j->w, run, 16), ended = 0;
	for (int i = 0; i < j->led.n; i++)
		ended += j->led.v[i].st == GF_LE_ENDED;
	if (n == 0 && ended == 0)
		return;
	/* the first ones whole, within 512 bytes (the buffer's failure is
	 * sticky: the rest are said as "...") */
	struct gf_buf list;
	gf_buf_init(&list, 512);
	for (int i = 0; i < n && i < 16; i++)
		(void)gf_buf_printf(&list, "%s%s/%d (attempt %d, pid %d)",
				    i ? ", " : "", run[i].job, run[i].replica,
				    run[i].attempt, run[i].pid);
	bool more = n > 16 || gf_buf_error(&list);
	gf_log(GF_LOG_INFO, "join",
	       "recovered %d running replica%s%s%s%s and %d ended awaiting "
	       "their report",
	       n, n == 1 ? "" : "s", n ? ": " : "", gf_buf_str(&list),
	       more ? ", ..." : "", ended);
	gf_buf_release(&list);
}

int gf_join_start(struct gf_join **out, const struct gf_join_opts *o,
		  struct gf_err *e)
{
	*out = NULL;
	if (!o->controller || !o->name || !o->state_dir || !o->node)
		return gf_err_set(e, GF_EINVAL,
				  "join: controller, name, state directory and "
				  "node are required");
	struct gf_join *j = gf_calloc(1, sizeof(*j));
	j->o = *o;
	j->hb_every_ms = 2000;
	j->need_register = true;
	atomic_init(&j->cancel, false);
	pthread_mutex_init(&j->lock, NULL);
	gf_cond_init_mono(&j->wake);
	char wdir[GF_WORKER_PATH_MAX], ldir[GF_WORKER_PATH_MAX];
	struct gf_worker_opts wo;
	int rc = prepare(j, &wo, wdir, ldir, sizeof(wdir), e);
	if (rc == 0)
		rc = gf_mkdir_p(o->state_dir, 0700, e);
	if (rc == 0)
		rc = gf__ledger_open(&j->led, e);
	if (rc == 0)
		rc = gf_worker_open(&wo, &j->w, e);
	if (rc == 0)
		rc = gf__join_inventory(j, e);
	if (rc) {
		gf_worker_close(j->w);
		gf__ledger_close(&j->led);
		pthread_mutex_destroy(&j->lock);
		pthread_cond_destroy(&j->wake);
		gf_np_inventory_release(&j->inv);
		gf_free(j);
		return rc;
	}
	fence_load(j);
	if (o->agent && gf_agent_serve_logs(o->agent, wo.log_dir, o->token))
		gf_log(GF_LOG_ERROR, "join",
		       "the jobs' logs are not served: their directory's "
		       "path is too long");
	gf_log(GF_LOG_INFO, "join", "jobs isolated by %s",
	       gf_worker_isolation(j->w));
	log_recovered(j);
	pthread_create(&j->loop_tid, NULL, loop, j);
	if (!o->one_connection)
		pthread_create(&j->poll_tid, NULL, poller, j);
	*out = j;
	return 0;
}

void gf_join_stop(struct gf_join *j)
{
	if (!j)
		return;
	gf_cond_raise(&j->lock, &j->wake, &j->stop);
	atomic_store(&j->cancel, true); /* the long poll gives up */
	if (!j->o.one_connection)
		pthread_join(j->poll_tid, NULL);
	pthread_join(j->loop_tid, NULL);
	gf_np_assignments_release(&j->next);
	gf_np_inventory_release(&j->inv);
	gf_worker_close(j->w);
	gf__ledger_close(&j->led);
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->wake);
	gf_free(j);
}

void gf_join_stats(struct gf_join *j, struct gf_join_stats *st)
{
	pthread_mutex_lock(&j->lock);
	*st = j->st;
	pthread_mutex_unlock(&j->lock);
}
