/*
 * ctl_logs.c - GET /v1/jobs/{id}/logs?replica=R&attempt=A&follow=1: a
 * run's output, streamed from the agent of the node that ran it (its
 * GET /v1/logs/JOB/REPLICA/ATTEMPT, agent.c) through the controller, as
 * text/plain.
 *
 * The handler finds the run under ctl_lock (the job, visible to the
 * caller's grant; the replica; the attempt, the last one by default;
 * the node: gf__agents_run_node) and answers what it can at once (404:
 * no such job, replica or attempt, or the node is gone).  Then it holds
 * the request and a thread of its own does the rest, since the server's
 * handlers never wait: it reads the agent's file in chunks from an
 * offset (server/client.c), answers the first (a stream, server.h:
 * gf_reply_stream, or 404/502 from what the agent said), and, with
 * follow, asks again every FOLLOW_MS until the run has ended and its end
 * marker is out (worker.h), or the end is FOLLOW_GRACE_MS old without
 * one (an agent that died), or the client went away.  The markers'
 * text is the protocol's (nodeproto.h).
 *
 * Threads: at most GF_LOGS_MAX at once (503 past it).  The service's
 * stop cancels their agent requests and waits for them (free hook);
 * each reads the core only under ctl_lock.  The token sent to the agent
 * is the node's own from the token file, else an admin's (the agent
 * accepts the one it runs with); over plain http, as the agent serves.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/cluster.h>

#include "controller/service_impl.h"
#include "server/auth.h"
#include "server/client.h"
#include "util/clock.h"
#include "util/cond.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define GF_LOGS_MAX	64	   /* log requests served at once */
#define FOLLOW_MS	500	   /* a followed run's agent asked this often */
#define FOLLOW_GRACE_MS 10000	   /* after its end, for its end marker */
#define CHUNK		(1u << 20) /* = the agent's GF_AGENT_LOG_CHUNK */

struct gf_logs {
	struct gf_service *s;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a thread ended, or stop */
	int n;		     /* threads running */
	bool stop;
	atomic_bool cancel; /* their agent requests give up */
};

/* One request's run, and the thread that streams it. */
struct logreq {
	struct gf_logs *lg;
	struct gf_http_req *r;
	char id[GF_JOB_ID_MAX];
	int replica, attempt;
	bool follow;
	char node[GF_NODE_NAME_MAX];
	char url[GF_CLIENT_HEADER_MAX];
	char token[GF_AUTH_TOKEN_MAX + 1];
	char mark[GF_JOB_ID_MAX + GF_NODE_NAME_MAX + 64]; /* end's prefix */
	char tail[1024]; /* the last bytes sent, for the end marker */
	size_t ntail;
};

/* --- finding the run (under ctl_lock) ---------------------------------- */

/* An integer query value 0..max, or def when absent; -1 when bad. */
static long query_int(struct gf_http_req *r, const char *name, long def,
		      long max)
{
	const char *v = gf_req_query(r, name);
	if (!v)
		return def;
	if (!*v || strlen(v) > 9 || strspn(v, "0123456789") != strlen(v))
		return -1;
	long n = strtol(v, NULL, 10);
	return n <= max ? n : -1;
}

/* The token the node's agent takes: its own, else an admin's; "" with no
 * token file. */
static void agent_token(const struct gf_auth *a, const char *node, char *out,
			size_t size)
{
	const char *tok = NULL;
	for (int i = 0; a && i < a->n && !tok; i++)
		if (!strcmp(a->e[i].node, node))
			tok = a->e[i].token;
	if (!tok && a)
		tok = gf_auth_token_for(a, true, NULL);
	gf_note(out, size, "%s", tok ? tok : "");
}

/* Where the run is: 0 with q's node, url and token set; else the status
 * with msg. */
static unsigned locate(struct gf_service *s, const struct gf_grant *g,
		       struct logreq *q, long replica, long attempt, char *msg,
		       size_t size)
{
	const struct gf_job *j = gf_ctl_job(s->ctl, q->id);
	if (!j || !gf_authz_team_ok(g, j->spec.team)) {
		gf_note(msg, size, "no job '%.40s'", q->id);
		return 404;
	}
	if (replica >= j->spec.replicas) {
		gf_note(msg, size,
			"%s has %d replica%s (0 to %d): no replica %ld", j->id,
			j->spec.replicas, j->spec.replicas == 1 ? "" : "s",
			j->spec.replicas - 1, replica);
		return 404;
	}
	if (j->attempts == 0) {
		gf_note(msg, size, "%s has not started yet (%s): no log", j->id,
			gf_job_state_name(j->state));
		return 404;
	}
	if (attempt == 0)
		attempt = j->attempts;
	if (attempt > j->attempts) {
		gf_note(msg, size, "%s ran %d attempt%s: no attempt %ld", j->id,
			j->attempts, j->attempts == 1 ? "" : "s", attempt);
		return 404;
	}
	q->replica = (int)replica;
	q->attempt = (int)attempt;
	bool live;
	int i = gf__agents_run_node(s->ag, j, q->attempt, q->replica, &live);
	if (i == GF_ENOTFOUND) {
		gf_note(msg, size,
			"%s replica %d attempt %d: no node is known to have "
			"run it",
			j->id, q->replica, q->attempt);
		return 404;
	}
	const struct gf_cluster *c = gf_ctl_cluster(s->ctl);
	const char *url = i >= 0 ? gf__agents_url(s->ag, i) : NULL;
	if (!url) {
		const char *why = i >= 0 ? gf__agents_reason(s->ag, i) : "";
		gf_note(msg, size,
			"%s replica %d attempt %d ran on %s%s%s, which is gone "
			"(%s): its log is there",
			j->id, q->replica, q->attempt, i >= 0 ? "node '" : "",
			i >= 0 ? c->names[i]
			       : "a node this controller no "
				 "longer knows",
			i >= 0 ? "'" : "",
			why && *why ? why : "no agent of it answers now");
		return 404;
	}
	gf_note(q->node, sizeof(q->node), "%s", c->names[i]);
	size_t n = strlen(url);
	if (gf_fmt(q->url, sizeof(q->url), "%.*sv1/logs/%s/%d/%d", (int)n, url,
		   j->id, q->replica, q->attempt) != 0 ||
	    n == 0 || url[n - 1] != '/') {
		gf_note(msg, size,
			"node '%s': its agent's URL '%.100s' is "
			"not one to read logs from",
			q->node, url);
		return 502;
	}
	agent_token(s->o.auth, q->node, q->token, sizeof(q->token));
	gf_note(q->mark, sizeof(q->mark), "%s %s replica %d attempt %d on ",
		GF_NP_LOG_MARK, j->id, q->replica, q->attempt);
	return 0;
}

/* Whether the run may still write (runs or completes); under no lock. */
static bool still_live(struct logreq *q)
{
	struct gf_service *s = q->lg->s;
	bool live = false;
	pthread_mutex_lock(&s->ctl_lock);
	const struct gf_job *j = gf_ctl_job(s->ctl, q->id);
	if (j)
		(void)gf__agents_run_node(s->ag, j, q->attempt, q->replica,
					  &live);
	pthread_mutex_unlock(&s->ctl_lock);
	return live;
}

/* --- the thread -------------------------------------------------------- */

/* One chunk from offset: 0 with the answer (any status), or the
 * client's error with why. */
static int fetch(struct logreq *q, struct gf_client *c, long long off,
		 struct gf_client_answer *a, struct gf_err *e)
{
	char url[GF_CLIENT_HEADER_MAX + 32];
	if (gf_fmt(url, sizeof(url), "%s?offset=%lld", q->url, off) != 0)
		return gf_err_set(e, GF_ETOOBIG, "URL too long");
	struct gf_client_req rq = {
		.url = url,
		.token = q->token[0] ? q->token : NULL,
		.insecure_http = true, /* the agent serves plain http */
		.answer_max = CHUNK + 1024,
		.cancel = &q->lg->cancel,
		.accept = "text/plain",
	};
	return gf_client_request(c, &rq, a, e);
}

/* Keep the last bytes sent; true once the run's end marker is among
 * them (a line "==> gpufleet: JOB replica R attempt A on NODE ended"). */
static bool saw_end(struct logreq *q, const char *p, size_t n)
{
	if (n >= sizeof(q->tail) - 1) {
		p += n - (sizeof(q->tail) - 1);
		n = sizeof(q->tail) - 1;
	}
	if (q->ntail + n >= sizeof(q->tail)) {
		size_t drop = q->ntail + n - (sizeof(q->tail) - 1);
		memmove(q->tail, q->tail + drop, q->ntail - drop);
		q->ntail -= drop;
	}
	memcpy(q->tail + q->ntail, p, n);
	q->ntail += n;
	q->tail[q->ntail] = '\0';
	const char *m = strstr(q->tail, q->mark);
	return m && (m == q->tail || m[-1] == '\n') &&
	       strstr(m + strlen(q->mark), " ended ");
}

/* The first answer: a stream, or the error the agent's answer means. */
static struct gf_http_stream *first(struct logreq *q, int rc,
				    const struct gf_client_answer *a,
				    const struct gf_err *e)
{
	struct gf_http_stream *st = NULL;
	if (rc != 0)
		(void)gf_reply_error(q->r, 502, "bad-gateway",
				     "node '%s''s agent: %s", q->node, e->msg);
	else if (a->status == 404)
		(void)gf_reply_error(q->r, 404, "not-found",
				     "%s replica %d attempt %d: node '%s' has "
				     "no log of it (removed?)",
				     q->id, q->replica, q->attempt, q->node);
	else if (a->status != 200)
		(void)gf_reply_error(q->r, 502, "bad-gateway",
				     "node '%s''s agent answered %ld to the "
				     "controller%s",
				     q->node, a->status,
				     a->status == 401
					     ? " (it takes its node's token: "
					       "give that node a line in the "
					       "controller's token file)"
					     : "");
	else if (gf_reply_stream(q->r, 200, "text/plain; charset=utf-8", &st) !=
		 0)
		st = NULL;
	return st;
}

/* Stream the run until its end (follow) or the file's end; returns
 * when done or the reader left. */
static void pump(struct logreq *q, struct gf_client *c,
		 struct gf_http_stream *st, struct gf_client_answer *a,
		 long long off)
{
	int64_t ended_at = 0; /* mono ms the run was first seen ended */
	bool done = false;
	for (;;) {
		size_t n = a->body.len;
		if (n && gf_http_stream_write(st, gf_buf_str(&a->body), n))
			return; /* the reader left */
		done = done || saw_end(q, gf_buf_str(&a->body), n);
		off += (long long)n;
		gf_client_answer_release(a);
		if (n < CHUNK) { /* at the file's end for now */
			if (!q->follow || done)
				return;
			if (!ended_at && !still_live(q))
				ended_at = gf__mono_ms();
			if (ended_at &&
			    gf__mono_ms() - ended_at > FOLLOW_GRACE_MS)
				return;
			pthread_mutex_lock(&q->lg->lock);
			struct timespec until;
			gf_clock_deadline(&until, FOLLOW_MS);
			if (!q->lg->stop)
				pthread_cond_timedwait(&q->lg->cond,
						       &q->lg->lock, &until);
			bool stop = q->lg->stop;
			pthread_mutex_unlock(&q->lg->lock);
			if (stop || !gf_http_stream_open(st))
				return;
		}
		struct gf_err e;
		gf_err_clear(&e);
		memset(a, 0, sizeof(*a));
		if (fetch(q, c, off, a, &e) != 0 || a->status != 200) {
			gf_client_answer_release(a);
			if (!q->follow || ended_at)
				return; /* its agent went away */
			memset(a, 0, sizeof(*a));
			gf_buf_init(&a->body, 1); /* nothing: wait, again */
		}
	}
}

static void *log_thread(void *arg)
{
	struct logreq *q = arg;
	struct gf_client *c = gf_client_new();
	struct gf_client_answer a;
	struct gf_err e;
	gf_err_clear(&e);
	memset(&a, 0, sizeof(a));
	int rc = fetch(q, c, 0, &a, &e);
	if (rc == 0 && a.status == 404 && still_live(q)) {
		/* assigned, not started by its agent yet: nothing so far */
		gf_client_answer_release(&a);
		a.status = 200;
		gf_buf_init(&a.body, 1);
	}
	struct gf_http_stream *st = first(q, rc, &a, &e);
	if (st)
		pump(q, c, st, &a, 0);
	gf_client_answer_release(&a);
	gf_http_stream_end(st);
	gf_client_free(c);
	struct gf_logs *lg = q->lg;
	memset(q->token, 0, sizeof(q->token));
	gf_free(q);
	pthread_mutex_lock(&lg->lock);
	lg->n--;
	pthread_cond_broadcast(&lg->cond);
	pthread_mutex_unlock(&lg->lock);
	return NULL;
}

/* --- the handler -------------------------------------------------------- */

/* A thread for q, counted: 0, or the status to answer (503). */
static unsigned spawn(struct gf_logs *lg, struct logreq *q)
{
	pthread_mutex_lock(&lg->lock);
	bool room = !lg->stop && lg->n < GF_LOGS_MAX;
	if (room)
		lg->n++;
	pthread_mutex_unlock(&lg->lock);
	if (!room)
		return 503;
	pthread_attr_t at;
	pthread_t tid;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&tid, &at, log_thread, q);
	pthread_attr_destroy(&at);
	if (rc == 0)
		return 0;
	pthread_mutex_lock(&lg->lock);
	lg->n--;
	pthread_cond_broadcast(&lg->cond);
	pthread_mutex_unlock(&lg->lock);
	return 503;
}

int gf__jobs_logs(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	long replica = query_int(r, "replica", 0, GF_JOB_MAX_REPLICAS);
	long attempt = query_int(r, "attempt", 0, 1000000000L);
	const char *f = gf_req_query(r, "follow");
	bool follow = f && (!strcmp(f, "1") || !strcmp(f, "true"));
	if (replica < 0 || attempt < 0 ||
	    (f && !follow && strcmp(f, "0") && strcmp(f, "false")))
		return gf_reply_error(r, 400, "bad-request",
				      "expected ?replica=R (0..) &attempt=A "
				      "(1..; 0 or none: the last) &follow=1");
	struct logreq *q = gf_calloc(1, sizeof(*q));
	q->lg = s->logs;
	q->r = r;
	q->follow = follow;
	char msg[GF_ERR_MSG_MAX];
	unsigned st = 404;
	if (gf_fmt(q->id, sizeof(q->id), "%s", gf_req_param(r, "id")) != 0)
		gf_note(msg, sizeof(msg), "no job '%.40s...'",
			gf_req_param(r, "id"));
	else {
		pthread_mutex_lock(&s->ctl_lock);
		if (!gf__service_serving(s, r)) {
			pthread_mutex_unlock(&s->ctl_lock);
			gf_free(q);
			return 0;
		}
		st = locate(s, &c->grant, q, replica, attempt, msg,
			    sizeof(msg));
		pthread_mutex_unlock(&s->ctl_lock);
	}
	if (st == 0 && gf_req_suspend(r) == 0) {
		st = spawn(s->logs, q);
		if (st == 0)
			return 0; /* the thread answers */
		gf_note(msg, sizeof(msg),
			"%d logs are being read already: try again",
			GF_LOGS_MAX);
	}
	memset(q->token, 0, sizeof(q->token));
	gf_free(q);
	if (st == 0) { /* cannot be held: a thread-per-connection server */
		st = 500;
		gf_note(msg, sizeof(msg), "logs need an event-loop server");
	}
	if (st == 503)
		gf_reply_header(r, "Retry-After", "1");
	return gf_reply_error(r, st, gf__error_of(st), "%s", msg);
}

/* --- the feature -------------------------------------------------------- */

static void logs_stopping(void *arg)
{
	struct gf_logs *lg = arg;
	atomic_store(&lg->cancel, true);
	pthread_mutex_lock(&lg->lock);
	lg->stop = true;
	pthread_cond_broadcast(&lg->cond);
	pthread_mutex_unlock(&lg->lock);
}

static void logs_free(void *arg)
{
	struct gf_logs *lg = arg;
	logs_stopping(lg);
	pthread_mutex_lock(&lg->lock);
	while (lg->n > 0)
		pthread_cond_wait(&lg->cond, &lg->lock);
	pthread_mutex_unlock(&lg->lock);
	pthread_mutex_destroy(&lg->lock);
	pthread_cond_destroy(&lg->cond);
	lg->s->logs = NULL;
	gf_free(lg);
}

int gf__logs_register(struct gf_service *s)
{
	struct gf_logs *lg = gf_calloc(1, sizeof(*lg));
	lg->s = s;
	pthread_mutex_init(&lg->lock, NULL);
	gf_cond_init_mono(&lg->cond);
	atomic_init(&lg->cancel, false);
	s->logs = lg;
	struct gf_feature f = {
		.name = "logs",
		.arg = lg,
		.stopping = logs_stopping,
		.free = logs_free,
	};
	int rc = gf__service_register(s, &f);
	if (rc != 0)
		logs_free(lg);
	return rc;
}
