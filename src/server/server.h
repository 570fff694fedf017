/*
 * server.h - one HTTP runtime for gpufleet's services (the node agent,
 * the controller, the scheduler extender), on libmicrohttpd.
 *
 * A service gives a route table (router.h) and options; the server
 * listens on an IPv4 address (port 0: the kernel picks), answers what no
 * row takes (404, 405 with Allow, 413, 414, 400 for malformed JSON) as
 * JSON {"error": CODE, "detail": TEXT}, and calls the handler of the row
 * a request matches once its whole body is in.  docs/server.md has the
 * design: threads, limits, shutdown, and why jansson.
 *
 *   static const struct gf_route routes[] = {
 *     { GF_HTTP_POST, "/v1/jobs", job_submit, 64 << 10, "submit a job" },
 *     { GF_HTTP_GET, "/v1/jobs/{id}", job_get, 0, "one job" },
 *   };
 *   struct gf_server_opts o = { .name = "controller",
 *                               .listen = "127.0.0.1:0", .arg = ctl };
 *   gf_server_start(&s, routes, 2, &o, &e);
 *   ... wait for SIGTERM (the caller decides when) ...
 *   gf_server_stop(s);
 *
 * Threads: by default one thread per connection (at most
 * max_connections; the others wait in the kernel's backlog), so a
 * handler may block, e.g. a long poll waiting on its own condition
 * variable; it should watch gf_server_stopping(), or be woken by
 * on_stop.  A service whose handlers never block (they answer from
 * memory, like the agent's published documents, or hold the request and
 * answer it later from another thread: gf_req_suspend) may ask for
 * `threads` event loops instead, which serve every connection without a
 * thread each: thousands of held long polls cost a few KiB each.  Either
 * way several handlers may run at once and share only what the service
 * locks.
 *
 * Limits: request bodies are capped per route (body_max, default
 * GF_SERVER_BODY_MAX); a declared Content-Length past the cap is refused
 * with 413 before a byte of the body is read, and a chunked body is
 * counted as it streams in, never stored past the cap, answered 413 at
 * its end, and cut (connection closed) once it runs GF_SERVER_DRAIN_MAX
 * past the cap.  A connection idle for idle_timeout_s is closed.
 * Headers are capped by libmicrohttpd (32 KiB per connection: 431).
 *
 * Guards (guard.c; docs/server.md lists each with its default): at most
 * max_per_client connections from one address (past it libmicrohttpd
 * closes a new one at once), and max_connections in all: past it, a few
 * spare slots answer 503 {"error": "busy"} with Retry-After, then new
 * clients wait in the kernel's backlog.  A request with more than
 * GF_SERVER_MAX_ARGS query arguments gets 414, more than
 * GF_SERVER_MAX_REQ_HEADERS headers 431; two Content-Length values,
 * Content-Length with Transfer-Encoding, or a NUL byte (raw or %00) in
 * the request line or a header get 400, and those refusals close the
 * connection (what follows cannot be trusted to be a request).
 *
 * Shutdown (gf_server_stop): stop accepting; requests in flight finish
 * (their answers carry "Connection: close"), requests that arrive on
 * open connections meanwhile get 503 {"error": "shutting-down"}; after
 * at most drain_ms the daemon stops and every connection closes.
 */
#ifndef GF_SERVER_SERVER_H
#define GF_SERVER_SERVER_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "server/router.h"
#include "util/buf.h"

#define GF_SERVER_CONNECTIONS	  64
#define GF_SERVER_IDLE_S	  10
#define GF_SERVER_BODY_MAX	  (1u << 20)
#define GF_SERVER_DRAIN_MAX	  (1u << 20)
#define GF_SERVER_DRAIN_MS	  10000
#define GF_SERVER_MAX_HEADERS	  8 /* a handler may add to its answer */
#define GF_SERVER_MAX_ROUTES	  256
#define GF_SERVER_THREADS_MAX	  64
#define GF_SERVER_PER_CLIENT	  16	      /* connections from one address */
#define GF_SERVER_NO_LIMIT	  0xffffffffu /* max_per_client: none */
#define GF_SERVER_MAX_ARGS	  100	      /* query arguments: 414 past it */
#define GF_SERVER_MAX_REQ_HEADERS 100	      /* request headers: 431 past it */

struct gf_server_opts {
	const char *name;   /* log subsystem: "agent" */
	const char *listen; /* "IPv4:PORT"; see gf_server_listen_check() */
	unsigned max_connections; /* 0: GF_SERVER_CONNECTIONS */
	/* from one client address; 0: GF_SERVER_PER_CLIENT (at most
	 * max_connections), GF_SERVER_NO_LIMIT: none */
	unsigned max_per_client;
	unsigned idle_timeout_s; /* 0: GF_SERVER_IDLE_S */
	size_t body_max;	 /* 0: GF_SERVER_BODY_MAX; a route may differ */
	unsigned drain_ms;	 /* 0: GF_SERVER_DRAIN_MS */
	/* 0: a thread per connection, handlers may block; N (at most
	 * GF_SERVER_THREADS_MAX): N event loops (epoll) serving every
	 * connection, handlers must not block */
	unsigned threads;
	/* called once when gf_server_stop() begins, before it waits for
	 * requests in flight (wake long polls here); may be NULL */
	void (*on_stop)(void *arg);
	void *arg; /* handed to every handler and to on_stop */
	/* HTTPS with these PEMs (server/tls.h), NULL: plain HTTP; borrowed,
	 * must outlive the server */
	const struct gf_tls *tls;
	/* libmicrohttpd's memory per connection (request line, headers,
	 * read and write buffers; bodies stream past it), bytes; 0: its
	 * default, 32 KiB.  Headers past it: 431.  A server with thousands
	 * of mostly idle connections (the controller's agents) asks less. */
	size_t conn_memory;
};

struct gf_server;
struct gf_tls;

/*
 * "HOST:PORT" as --listen takes it: an IPv4 address (0.0.0.0 for every
 * interface) and a port, 0 for one the kernel picks.  NULL when good, or
 * what is wrong, for a usage error.
 */
const char *gf_server_listen_check(const char *listen);

/*
 * Check the routes (router.h), bind, listen and serve.  The table and the
 * options must outlive the server.  Returns 0 with *out set; GF_EINVAL
 * (a bad table or address), -errno (socket, bind: "Address already in
 * use") or GF_ENOTSUP (libmicrohttpd refused to start) with e saying
 * which, naming the address.  Callers that want SIGTERM for themselves
 * block it before this call: the server's threads inherit the mask.
 */
int gf_server_start(struct gf_server **out, const struct gf_route *routes,
		    int nroutes, const struct gf_server_opts *o,
		    struct gf_err *e) GF_MUST_CHECK;

/*
 * gf_server_start, then a thread fn(o->arg) beside it (the service's
 * scheduler, the agent's sampler; what names it in an error): both
 * started, 0 with *tid set; or neither (the server stopped again when
 * the thread cannot start, -errno).
 */
int gf_server_start_with(struct gf_server **out, const struct gf_route *routes,
			 int nroutes, const struct gf_server_opts *o,
			 pthread_t *tid, void *(*fn)(void *), const char *what,
			 struct gf_err *e) GF_MUST_CHECK;

/* "http://127.0.0.1:41234/" ("https://" with TLS): the address bound
 * (borrowed). */
const char *gf_server_url(const struct gf_server *s);
unsigned gf_server_port(const struct gf_server *s);
/* True once gf_server_stop() has begun; any thread. */
bool gf_server_stopping(const struct gf_server *s);

/* What the server counts of held requests (any thread). */
struct gf_server_stats {
	uint64_t held;	  /* held now (gf_req_suspend), not yet answered */
	uint64_t resumed; /* connections resumed with an answer, in all */
	uint64_t batches; /* resume batches (gf_server_batch_end) */
};
void gf_server_stats(struct gf_server *s, struct gf_server_stats *out);

/*
 * Answers given by this thread between these two calls resume their
 * connections together at the end, each once: libmicrohttpd 0.9.75
 * walks every connection suspended on an event loop each time that loop
 * handles resumptions, so a thread that answers many held requests at
 * once (the service's turn) makes that walk once per loop, not once per
 * answer.  Not nested; a thread that answers one request needs neither.
 */
void gf_server_batch_begin(void);
void gf_server_batch_end(void);

/*
 * Stop (see the top of this file) and free s.  Returns once every
 * connection is closed and no handler runs.  Call from one thread, once.
 */
void gf_server_stop(struct gf_server *s);

/* --- inside a handler: the request (every pointer borrowed, valid until
 * the handler returns) --- */

/* GF_HTTP_GET, ... (HEAD requests arrive as GF_HTTP_HEAD). */
unsigned gf_req_method(const struct gf_http_req *r);
const char *gf_req_path(const struct gf_http_req *r);
/* A path parameter of the route's pattern ("id" of {id}), or NULL. */
const char *gf_req_param(const struct gf_http_req *r, const char *name);
/* A query parameter ("wait" of ?wait=30s), decoded; NULL when absent,
 * "" when given without a value. */
const char *gf_req_query(const struct gf_http_req *r, const char *name);
/* A request header, case-insensitive name; NULL when absent. */
const char *gf_req_header(const struct gf_http_req *r, const char *name);
/* The token of "Authorization: Bearer TOKEN"; NULL when there is no such
 * header (another scheme, or an empty token). */
const char *gf_req_bearer(const struct gf_http_req *r);
/* The body ("" and *len 0 when there is none); NUL-terminated. */
const char *gf_req_body(const struct gf_http_req *r, size_t *len);
/* The client, "127.0.0.1:50312", for logs. */
const char *gf_req_client(const struct gf_http_req *r);
/*
 * The body parsed as JSON (util/json.h; the caller frees *out with
 * gf_jv_free()).  On malformed JSON it has already answered 400
 * {"error": "malformed-json", "detail": "line 1, column 9: ..."} and
 * returns GF_EPARSE / GF_ETOOBIG, which the handler may return as is.
 */
struct gf_jv;
int gf_req_json(struct gf_http_req *r, struct gf_jv **out);

/* --- inside a handler: the answer (one per request) ---
 *
 * gf_req_json and gf_reply* are not must-check (yet): about 30 callers
 * (src/controller) answer an error and return their own code, a
 * deliberate ignore, and gcc warns on (void)f() for warn_unused_result. */

/* Add a header to the answer to come (Location, WWW-Authenticate,
 * Retry-After); at most GF_SERVER_MAX_HEADERS.  0 or GF_ETOOBIG. */
int gf_reply_header(struct gf_http_req *r, const char *name, const char *value);
/* Answer status with len bytes of body (copied) of the given type.
 * 0; GF_EINVAL when this request was answered already. */
int gf_reply(struct gf_http_req *r, unsigned status, const char *type,
	     const void *body, size_t len);
/* Answer with a buffer as application/json. */
int gf_reply_json(struct gf_http_req *r, unsigned status,
		  const struct gf_buf *b);
/* Answer {"error": error, "detail": printf(fmt, ...)}, as JSON. */
int gf_reply_error(struct gf_http_req *r, unsigned status, const char *error,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same with fmt's arguments in ap (a handler's own variadic bad()). */
int gf_reply_verror(struct gf_http_req *r, unsigned status, const char *error,
		    const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/*
 * Answer later, from another thread (event-loop servers only: threads >
 * 0).  Inside a handler: gf_req_suspend(r), hand r to whoever will
 * answer, and return 0 without answering.  That thread answers it once
 * with gf_reply*(), which queues the answer and resumes the connection;
 * r must not be touched after that call.  Nothing else may be called on
 * r from the other thread but gf_reply_header() before the answer.
 * While held, the idle timeout does not run and a client that hangs up is
 * not noticed (libmicrohttpd), so a service bounds every hold itself (a
 * long poll's wait=) and answers every held request from on_stop; at stop
 * a request still held after drain_ms is answered 503 by the server (a
 * service bug, logged).  0, GF_ENOTSUP on a thread-per-connection server,
 * GF_EINVAL when r was answered already.
 */
int gf_req_suspend(struct gf_http_req *r) GF_MUST_CHECK;

/* --- answers whose body comes later (stream.c) ---
 *
 * A body written by another thread as it comes (a log followed): answer
 * r (in its handler, or later when held: gf_req_suspend) with status and
 * type, then write to the stream from any one thread and end it.  Sent
 * chunked; the connection waits (suspended, no thread held) while there
 * is nothing to send.  A client that hangs up is noticed at the next
 * write; one that waits while nothing comes is not (bound the stream).
 * gf_server_stop ends every stream (what was written is sent).
 */
#define GF_STREAM_BUF (64u << 10) /* bytes written, not yet sent */
struct gf_http_stream;
/* 0 with *out set (the writer's: end it with gf_http_stream_end), or
 * GF_EINVAL (r answered already, or the server refused) / GF_ENOTSUP. */
int gf_reply_stream(struct gf_http_req *r, unsigned status, const char *type,
		    struct gf_http_stream **out) GF_MUST_CHECK;
/* Append (waits while GF_STREAM_BUF bytes are unsent): 0, or -EPIPE when
 * nobody reads any more (the client left, the server stops). */
int gf_http_stream_write(struct gf_http_stream *st, const void *p,
			 size_t len) GF_MUST_CHECK;
/* Whether someone may still read it (not ended, client not gone). */
bool gf_http_stream_open(struct gf_http_stream *st);
/* The body is complete: sent, then the answer ends; st is freed (NULL:
 * nothing). */
void gf_http_stream_end(struct gf_http_stream *st);

/* --- documents rendered by one thread, served by many ---
 *
 * A service that renders a page periodically (the agent's /metrics)
 * publishes each complete copy; handlers serve the last one published,
 * without copying it and without holding a lock while it is sent.  A
 * copy lives until the last answer sending it is done.
 */
struct gf_http_doc;

/* A document slot served as content type `type` (copied). */
struct gf_http_doc *gf_http_doc_new(const char *type);
/* Free the slot; after the server stopped (answers in flight hold their
 * own reference to the copy they send). */
void gf_http_doc_free(struct gf_http_doc *d);
/*
 * Publish b's content, to be served with status: b's memory is taken
 * (b is left empty, with its cap, ready for the next render).  Refuses
 * a buffer in error (gf_buf_error(), a render that was cut) with that
 * error, leaving the last copy served.  Any thread.
 */
int gf_http_doc_publish(struct gf_http_doc *d, unsigned status,
			struct gf_buf *b) GF_MUST_CHECK;
/* Answer with the last copy published; 503 {"error": "not-ready"}
 * before the first. */
int gf_reply_doc(struct gf_http_req *r, struct gf_http_doc *d) GF_MUST_CHECK;

#endif
