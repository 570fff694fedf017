/*
 * server_reply.c - the answers of server.h (gf_reply*, gf__reply_response)
 * and held requests: a handler suspends its connection (gf_req_suspend),
 * another thread answers later, the answer is kept in r->held and the
 * connection resumed (at once, or with this thread's batch), and MHD's
 * next call of on_request (server.c) queues it on the connection's own
 * thread.  At the stop, what is still held is answered 503.
 *
 * Invariant: at most one answer per request; for a held one `replied`
 * is set under s->lock, so two answering threads cannot both win.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "server/server.h"
#include "server/server_int.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

/* This thread's batch of answered held requests (gf_server_batch_*):
 * resumed at its end. */
static _Thread_local bool batching;
static _Thread_local struct gf_http_req *batch;

/* Unlink a held request; under s->lock. */
static void unhold(struct gf_server *s, struct gf_http_req *r)
{
	if (r->hprev)
		r->hprev->hnext = r->hnext;
	else if (s->held == r)
		s->held = r->hnext;
	if (r->hnext)
		r->hnext->hprev = r->hprev;
	r->hprev = r->hnext = NULL;
	s->nheld--;
}

static void resume(struct gf_http_req *r)
{
	atomic_fetch_add(&r->srv->resumed, 1);
	MHD_resume_connection(r->conn);
}

void gf_server_batch_begin(void)
{
	batching = true;
}

void gf_server_batch_end(void)
{
	batching = false;
	struct gf_server *last = NULL;
	while (batch) {
		struct gf_http_req *r = batch;
		batch = r->bnext;
		if (r->srv != last) {
			last = r->srv;
			atomic_fetch_add(&last->batches, 1);
		}
		resume(r); /* r may be freed from here on */
	}
}

void gf_server_stats(struct gf_server *s, struct gf_server_stats *out)
{
	pthread_mutex_lock(&s->lock);
	out->held = s->nheld;
	pthread_mutex_unlock(&s->lock);
	out->resumed = atomic_load(&s->resumed);
	out->batches = atomic_load(&s->batches);
}

/* The answer to a held request, from another thread: kept, and the
 * connection resumed (on_request queues it). */
static int answer_held(struct gf_http_req *r, unsigned status,
		       struct MHD_Response *resp, size_t len)
{
	struct gf_server *s = r->srv;
	pthread_mutex_lock(&s->lock);
	if (r->replied) {
		pthread_mutex_unlock(&s->lock);
		MHD_destroy_response(resp);
		return GF_EINVAL;
	}
	r->replied = true;
	r->status = status;
	r->sent = len;
	r->held = resp;
	unhold(s, r);
	pthread_mutex_unlock(&s->lock);
	if (batching) { /* resumed with the others, at the batch's end */
		r->bnext = batch;
		batch = r;
	} else {
		resume(r);
	}
	return 0;
}

int gf__reply_response(struct gf_http_req *r, unsigned status, const char *type,
		       struct MHD_Response *resp, size_t len)
{
	if (!resp)
		return GF_EINVAL;
	if (!r->suspended && r->replied) {
		MHD_destroy_response(resp);
		return GF_EINVAL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	for (int i = 0; i < r->nheaders; i++)
		MHD_add_response_header(resp, r->hname[i], r->hvalue[i]);
	if (atomic_load(&r->srv->stopping))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
					"close");
	if (r->suspended)
		return answer_held(r, status, resp, len);
	r->replied = true;
	r->status = status;
	r->sent = len;
	if (MHD_queue_response(r->conn, status, resp) != MHD_YES)
		r->queue_failed = true;
	MHD_destroy_response(resp);
	return r->queue_failed ? GF_EINVAL : 0;
}

int gf_reply(struct gf_http_req *r, unsigned status, const char *type,
	     const void *body, size_t len)
{
	if (!r->suspended && r->replied)
		return GF_EINVAL;
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	return gf__reply_response(r, status, type, resp, len);
}

int gf_reply_json(struct gf_http_req *r, unsigned status,
		  const struct gf_buf *b)
{
	return gf_reply(r, status, "application/json", gf_buf_str(b), b->len);
}

int gf_reply_error(struct gf_http_req *r, unsigned status, const char *error,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = gf_reply_verror(r, status, error, fmt, ap);
	va_end(ap);
	return rc;
}

int gf_reply_verror(struct gf_http_req *r, unsigned status, const char *error,
		    const char *fmt, va_list ap)
{
	char detail[1024];
	gf_vnote(detail, sizeof(detail), fmt, ap);
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 8192);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "error", error);
	gf_json_str(&j, "detail", detail);
	gf_json_obj_end(&j);
	int rc = gf_reply_json(r, status, &b);
	gf_buf_release(&b);
	return rc;
}

int gf_reply_header(struct gf_http_req *r, const char *name, const char *value)
{
	if (r->nheaders == GF_SERVER_MAX_HEADERS)
		return GF_ETOOBIG;
	r->hname[r->nheaders] = gf_strdup(name);
	r->hvalue[r->nheaders] = gf_strdup(value);
	r->nheaders++;
	return 0;
}

int gf_req_suspend(struct gf_http_req *r)
{
	struct gf_server *s = r->srv;
	if (s->o.threads == 0)
		return GF_ENOTSUP; /* libmicrohttpd: not with a thread each */
	if (r->replied || r->suspended)
		return GF_EINVAL;
	pthread_mutex_lock(&s->lock);
	r->suspended = true;
	r->hnext = s->held;
	if (s->held)
		s->held->hprev = r;
	s->held = r;
	s->nheld++;
	pthread_mutex_unlock(&s->lock);
	MHD_suspend_connection(r->conn);
	return 0;
}

/* Answer 503 what a service still holds (it should have answered in
 * on_stop): a suspended connection must not outlive the daemon.  Each is
 * claimed under the lock (replied set) before its answer is built, so a
 * late answer from the service is refused, never queued twice.  How
 * many were. */
int gf__server_answer_all_held(struct gf_server *s)
{
	static const char body[] = "{\"error\": \"shutting-down\", "
				   "\"detail\": \"the server is stopping\"}";
	int n = 0;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		struct gf_http_req *r = s->held;
		if (r) {
			unhold(s, r);
			r->replied = true;
			r->status = 503;
			r->sent = sizeof(body) - 1;
		}
		pthread_mutex_unlock(&s->lock);
		if (!r)
			break;
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			sizeof(body) - 1, (void *)(uintptr_t)body,
			MHD_RESPMEM_PERSISTENT);
		if (resp) {
			MHD_add_response_header(resp,
						MHD_HTTP_HEADER_CONTENT_TYPE,
						"application/json");
			MHD_add_response_header(
				resp, MHD_HTTP_HEADER_CONNECTION, "close");
		}
		r->held = resp; /* NULL: on_request closes the connection */
		resume(r);
		n++;
	}
	if (n)
		gf_log(GF_LOG_WARN, s->o.name,
		       "%d held requests were never answered by the service: "
		       "503",
		       n);
	return n;
}
