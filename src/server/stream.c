/*
 * stream.c - answers whose body comes later, from another thread
 * (server.h: gf_reply_stream): a log followed as it grows, through an
 * event-loop server whose handlers never wait.
 *
 * The body is a libmicrohttpd callback response (chunked).  A writer
 * thread appends to the stream's buffer; the connection's event loop
 * takes from it in the content reader.  When the buffer is empty and the
 * stream not ended, the reader suspends the connection (under the
 * stream's lock, before it says so: `parked`) and returns 0; the next
 * write or the end resumes it (outside the lock, after clearing
 * `parked`), so a wake-up is never lost and a connection is never
 * resumed that was not suspended.  On a server with a thread per
 * connection (which cannot suspend) the reader waits on `more` instead:
 * that thread is the connection's own.
 *
 * Lifetime: two references, the writer's (dropped by gf_http_stream_end)
 * and the response's (dropped by libmicrohttpd's free callback when the
 * answer is done or the client went away: `gone`).  The server lists the
 * streams whose response lives; gf_server_stop ends them first, so no
 * connection stays suspended past the daemon.
 *
 * Locks: the server's lock (the list), then a stream's; never the other
 * way.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "server/server_int.h"
#include "util/mem.h"

struct gf_http_stream {
	pthread_mutex_t lock;
	pthread_cond_t room; /* the reader took bytes, or the end */
	pthread_cond_t more; /* bytes, or the end (a thread per connection) */
	bool can_suspend;    /* event loops: suspend; else wait on more */
	struct gf_server *srv;
	struct MHD_Connection *conn;
	char *buf;
	size_t head, len; /* unsent bytes: buf[head, len) */
	bool ended;	  /* the writer's end (or the server's) */
	bool gone;	  /* the response is freed: nobody reads */
	bool parked;	  /* the reader suspended the connection */
	int refs;
	struct gf_http_stream *prev, *next; /* the server's list */
};

static void unref(struct gf_http_stream *st)
{
	pthread_mutex_lock(&st->lock);
	bool last = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	pthread_mutex_destroy(&st->lock);
	pthread_cond_destroy(&st->room);
	pthread_cond_destroy(&st->more);
	gf_free(st->buf);
	gf_free(st);
}

static ssize_t reader(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct gf_http_stream *st = cls;
	ssize_t n = 0;
	pthread_mutex_lock(&st->lock);
	if (st->len > st->head) {
		size_t k = st->len - st->head;
		if (k > max)
			k = max;
		memcpy(out, st->buf + st->head, k);
		st->head += k;
		if (st->head == st->len)
			st->head = st->len = 0;
		n = (ssize_t)k;
		pthread_cond_broadcast(&st->room);
	} else if (st->ended) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else if (st->can_suspend) {
		st->parked = true;
		MHD_suspend_connection(st->conn);
	} else { /* the connection's own thread: it waits, once */
		pthread_cond_wait(&st->more, &st->lock);
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

/* libmicrohttpd is done with the response: nobody reads any more. */
static void on_free(void *cls)
{
	struct gf_http_stream *st = cls;
	pthread_mutex_t *l = gf__server_lock(st->srv);
	pthread_mutex_lock(l);
	struct gf_http_stream **head = gf__server_streams(st->srv);
	if (st->prev)
		st->prev->next = st->next;
	else if (*head == st)
		*head = st->next;
	if (st->next)
		st->next->prev = st->prev;
	st->prev = st->next = NULL;
	pthread_mutex_unlock(l);
	pthread_mutex_lock(&st->lock);
	st->gone = true;
	pthread_cond_broadcast(&st->room);
	pthread_mutex_unlock(&st->lock);
	unref(st);
}

int gf_reply_stream(struct gf_http_req *r, unsigned status, const char *type,
		    struct gf_http_stream **out)
{
	*out = NULL;
	struct gf_http_stream *st = gf_calloc(1, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->room, NULL);
	pthread_cond_init(&st->more, NULL);
	st->can_suspend = gf__server_event_loops(r->srv);
	st->srv = r->srv;
	st->conn = r->conn;
	st->buf = gf_malloc(GF_STREAM_BUF);
	st->refs = 2;
	struct MHD_Response *resp = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, 16384, reader, st, on_free);
	if (!resp) {
		unref(st);
		unref(st);
		return GF_ENOTSUP;
	}
	pthread_mutex_t *l = gf__server_lock(st->srv);
	pthread_mutex_lock(l);
	struct gf_http_stream **head = gf__server_streams(st->srv);
	st->next = *head;
	if (*head)
		(*head)->prev = st;
	*head = st;
	pthread_mutex_unlock(l);
	/* taken: destroyed there on failure, which frees it (on_free) */
	int rc = gf__reply_response(r, status, type, resp, 0);
	if (rc != 0) {
		unref(st);
		return rc;
	}
	*out = st;
	return 0;
}

/* Wake the reader if it parked; under no lock. */
static void wake(struct gf_http_stream *st, bool parked)
{
	if (parked)
		MHD_resume_connection(st->conn);
}

int gf_http_stream_write(struct gf_http_stream *st, const void *p, size_t len)
{
	const char *c = p;
	while (len > 0) {
		pthread_mutex_lock(&st->lock);
		while (!st->gone && !st->ended && st->len == GF_STREAM_BUF)
			pthread_cond_wait(&st->room, &st->lock);
		if (st->gone || st->ended) {
			pthread_mutex_unlock(&st->lock);
			return -EPIPE;
		}
		size_t k = GF_STREAM_BUF - st->len;
		if (k > len)
			k = len;
		memcpy(st->buf + st->len, c, k);
		st->len += k;
		c += k;
		len -= k;
		bool parked = st->parked;
		st->parked = false;
		pthread_cond_broadcast(&st->more);
		pthread_mutex_unlock(&st->lock);
		wake(st, parked);
	}
	return 0;
}

bool gf_http_stream_open(struct gf_http_stream *st)
{
	pthread_mutex_lock(&st->lock);
	bool open = !st->gone && !st->ended;
	pthread_mutex_unlock(&st->lock);
	return open;
}

/* The end: what is buffered is still sent. */
static void end(struct gf_http_stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->ended = true;
	bool parked = st->parked && !st->gone;
	st->parked = false;
	pthread_cond_broadcast(&st->room);
	pthread_cond_broadcast(&st->more);
	pthread_mutex_unlock(&st->lock);
	wake(st, parked);
}

void gf_http_stream_end(struct gf_http_stream *st)
{
	if (!st)
		return;
	end(st);
	unref(st);
}

void gf__streams_end_all(struct gf_server *s)
{
	/* each taken under the list's lock, ended outside it (resuming a
	 * connection never under a lock libmicrohttpd's callbacks take) */
	for (;;) {
		pthread_mutex_t *l = gf__server_lock(s);
		pthread_mutex_lock(l);
		struct gf_http_stream *st = *gf__server_streams(s);
		while (st) {
			pthread_mutex_lock(&st->lock);
			bool live = !st->ended;
			if (live)
				st->refs++;
			pthread_mutex_unlock(&st->lock);
			if (live)
				break;
			st = st->next;
		}
		pthread_mutex_unlock(l);
		if (!st)
			return;
		end(st);
		unref(st);
	}
}
