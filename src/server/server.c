/*
 * server.c - the HTTP runtime of server.h on libmicrohttpd (MHD): the
 * listening socket, a request's life, start and stop.  The request's
 * accessors for handlers are in server_req.c, answers and held requests
 * in server_reply.c, streamed answers in stream.c.
 *
 * A request's life, on its connection's thread (MHD calls on_request
 * several times per request, then on_done once):
 *
 *   headers in    first call: route it (404/405/414), refuse it while
 *                 stopping (503) or when its Content-Length passes the
 *                 cap (413), before a byte of the body; else count it in
 *                 flight
 *   body chunk    appended to a gf_buf capped at the route's body_max;
 *                 past the cap, dropped and counted (413 at the end),
 *                 and the connection cut past GF_SERVER_DRAIN_MAX more
 *   all in        the handler runs and answers (500 if it did not)
 *   on_done       logged, freed, no longer in flight
 *
 * A held request (gf_req_suspend, event loops only): the handler
 * suspends the connection and returns; another thread's answer is kept
 * in r->held and the connection resumed, and MHD's next call of
 * on_request for it queues the answer on the connection's own thread.
 *
 * Invariants: a request is in flight (s->in_flight) from its first call
 * to on_done, which MHD calls for every request it showed us; at most
 * one answer is queued per request (for a held one, `replied` is set
 * under s->lock, so two answering threads cannot both win);
 * gf_server_stop() waits for in_flight to reach 0 (or drain_ms) after
 * quiescing, answers what is still held, before MHD_stop_daemon() closes
 * what is left (a suspended connection must not outlive the daemon).
 * Lock: s->lock guards in_flight and the held list, and is never held
 * while calling out.
 */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/server_int.h"
#include "util/clock.h"
#include "util/cond.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

/* --- listening ------------------------------------------------------- */

static const char *parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = s ? strrchr(s, ':') : NULL;
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return "expected IPv4:PORT like 127.0.0.1:9400";
	if (colon == s)
		return "no address before the port: 127.0.0.1:PORT for "
		       "loopback, 0.0.0.0:PORT for every interface";
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end || port < 0 || port > 65535)
		return "expected a port from 0 (any free one) to 65535";
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return "expected IPv4:PORT like 127.0.0.1:9400";
	return NULL;
}

const char *gf_server_listen_check(const char *listen)
{
	struct sockaddr_in sa;
	return parse_listen(listen, &sa);
}

/* A socket bound to o->listen and listening; the fd, or -errno / GF_EINVAL
 * with e set.  The address bound goes into s->url and s->port. */
static int listen_on(struct gf_server *s, struct gf_err *e)
{
	struct sockaddr_in sa, bound;
	const char *why = parse_listen(s->o.listen, &sa);
	if (why)
		return gf_err_set(e, GF_EINVAL, "cannot parse '%s': %s",
				  s->o.listen ? s->o.listen : "(null)", why);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gf_err_set(e, -errno, "cannot listen on '%s': %s",
				  s->o.listen, gf_strerror(-errno));
	int one = 1;
	socklen_t len = sizeof(bound);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&bound, &len) != 0) {
		int err = -errno;
		close(fd);
		return gf_err_set(e, err, "cannot listen on '%s': %s",
				  s->o.listen, gf_strerror(err));
	}
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &bound.sin_addr, ip, sizeof(ip));
	s->port = ntohs(bound.sin_port);
	if (gf_fmt(s->url, sizeof(s->url), "%s://%s:%u/",
		   s->o.tls ? "https" : "http", ip, s->port)) {
		close(fd);
		return gf_err_set(e, GF_ETOOBIG, "cannot listen on '%s': %s",
				  s->o.listen, "its URL is too long");
	}
	return fd;
}

/* --- requests in flight ---------------------------------------------- */

static void flight(struct gf_server *s, int delta)
{
	pthread_mutex_lock(&s->lock);
	s->in_flight += delta;
	if (s->in_flight == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}

/* A request, from its request line on (on_uri), or from the first call
 * when libmicrohttpd did not show us its line. */
static struct gf_http_req *req_alloc(struct gf_server *s,
				     struct MHD_Connection *conn)
{
	struct gf_http_req *r = gf_calloc(1, sizeof(*r));
	r->srv = s;
	r->conn = conn;
	return r;
}

/* The first call: what the request line and headers said. */
static void req_start(struct gf_http_req *r, const char *path,
		      const char *method)
{
	struct MHD_Connection *conn = r->conn;
	r->started = true;
	r->path = path;
	r->method_s = method;
	r->method = gf_http_method_parse(method);
	r->t0_ms = gf_clock_ms();
	gf_note(r->client, sizeof(r->client), "?");
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET) {
		const struct sockaddr_in *in =
			(const struct sockaddr_in *)(const void *)
				ci->client_addr;
		char ip[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		gf_note(r->client, sizeof(r->client), "%s:%u", ip,
			ntohs(in->sin_port));
	}
}

static void req_free(struct gf_http_req *r)
{
	for (int i = 0; i < r->nheaders; i++) {
		gf_free(r->hname[i]);
		gf_free(r->hvalue[i]);
	}
	gf_buf_release(&r->body);
	gf_free(r->path_copy);
	gf_free(r);
}

pthread_mutex_t *gf__server_lock(struct gf_server *s)
{
	return &s->lock;
}

bool gf__server_event_loops(const struct gf_server *s)
{
	return s->o.threads > 0;
}

struct gf_http_stream **gf__server_streams(struct gf_server *s)
{
	return &s->streams;
}

/* --- libmicrohttpd's callbacks --------------------------------------- */

/* A refusal decided on the first call: its status, code and detail. */
static void refuse(struct gf_http_req *r, unsigned status, const char *code,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void refuse(struct gf_http_req *r, unsigned status, const char *code,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(r->refusal, sizeof(r->refusal), fmt, ap);
	va_end(ap);
	r->refused = status;
	r->refused_code = code;
}

static void send_refusal(struct gf_http_req *r)
{
	if (r->close)
		gf_reply_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	gf_reply_error(r, r->refused, r->refused_code, "%s", r->refusal);
}

/*
 * The guards (guard.c) and the connection count: true with the refusal
 * set.  A malformed request closes its connection: what follows it
 * cannot be trusted to be the next request.  Past max_connections (the
 * spare slots libmicrohttpd was given), 503 at once.
 */
static bool guarded(struct gf_http_req *r, const char *version)
{
	struct gf_server *s = r->srv;
	unsigned status;
	const char *code;
	char detail[160];
	if (gf__guard_request(r, version, &status, &code, detail,
			      sizeof(detail))) {
		gf_log(GF_LOG_DEBUG, s->o.name, "%s %s from %s: %u, %s",
		       r->method_s, r->path, r->client, status, detail);
		r->close = true;
		refuse(r, status, code, "%s", detail);
		return true;
	}
	unsigned open = atomic_load(&s->open);
	if (open > s->o.max_connections) {
		r->close = true;
		gf_reply_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		refuse(r, 503, "busy",
		       "%u connections open; the server takes %u", open,
		       s->o.max_connections);
		return true;
	}
	return false;
}

/*
 * The first call, headers in: what can be refused before the body is.
 * A refusal of a request with a body is sent now (libmicrohttpd then
 * skips the body and closes the connection); one without waits for the
 * final call, so that the connection stays open for the next request.
 */
static void first_call(struct gf_http_req *r, const char *version)
{
	struct gf_server *s = r->srv;
	size_t plen = strlen(r->path);
	if (plen < GF_HTTP_PATH_MAX) /* longer: 414, nothing kept */
		r->path_copy = gf_malloc(plen + 1);
	gf_route_match(s->routes, s->nroutes, r->method, r->path, r->path_copy,
		       r->path_copy ? plen + 1 : 0, &r->match);
	const struct gf_route *rt =
		r->match.route >= 0 ? &s->routes[r->match.route] : NULL;
	r->body_max = rt && rt->body_max ? rt->body_max : s->o.body_max;
	gf_buf_init(&r->body, r->body_max);
	const char *cl = gf_req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te = gf_req_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	unsigned long long len = cl ? strtoull(cl, NULL, 10) : 0;
	char allow[64];
	if (atomic_load(&s->stopping)) {
		refuse(r, 503, "shutting-down", "the server is stopping");
	} else if (guarded(r, version)) {
		/* refused: malformed, or too many connections */
	} else if (r->match.status == 404) {
		refuse(r, 404, "not-found", "no route for '%s'", r->path);
	} else if (r->match.status == 414) {
		refuse(r, 414, "uri-too-long", "a path of more than %d bytes",
		       GF_HTTP_PATH_MAX - 1);
	} else if (r->match.status == 405) {
		gf_http_allow(r->match.allow, allow, sizeof(allow));
		gf_reply_header(r, MHD_HTTP_HEADER_ALLOW, allow);
		refuse(r, 405, "method-not-allowed", "'%s' takes %s, not %s",
		       r->path, allow, r->method_s);
	} else if (len > r->body_max) {
		refuse(r, 413, "body-too-large",
		       "a body of %llu bytes; %s %s takes at most %zu", len,
		       r->method_s, r->path, r->body_max);
	}
	if (r->refused && (len > 0 || te))
		send_refusal(r);
}

static enum MHD_Result take_body(struct gf_http_req *r, const char *data,
				 size_t *size)
{
	size_t n = *size;
	*size = 0;
	if (!r->too_big && gf_buf_append(&r->body, data, n) == 0)
		return MHD_YES;
	if (!r->too_big) {
		r->too_big = true;
		r->dropped = r->body.len; /* what was taken counts too */
		gf_buf_release(&r->body);
		gf_buf_init(&r->body, 0);
	}
	r->dropped += n;
	if (r->dropped > (uint64_t)r->body_max + GF_SERVER_DRAIN_MAX) {
		gf_log(GF_LOG_DEBUG, r->srv->o.name,
		       "%s %s from %s: body past %zu bytes + %u, cut",
		       r->method_s, r->path, r->client, r->body_max,
		       GF_SERVER_DRAIN_MAX);
		return MHD_NO;
	}
	return MHD_YES;
}

/* All of the request is in: the handler answers. */
static void dispatch(struct gf_http_req *r)
{
	struct gf_server *s = r->srv;
	if (r->too_big) {
		gf_reply_error(r, 413, "body-too-large",
			       "a body of more than %zu bytes; %s %s takes "
			       "at most %zu",
			       r->body_max, r->method_s, r->path, r->body_max);
		return;
	}
	const struct gf_route *rt = &s->routes[r->match.route];
	int rc = rt->fn(r, s->o.arg);
	if (r->suspended) /* another thread answers (and may have already) */
		return;
	if (r->replied)
		return;
	gf_log(GF_LOG_WARN, s->o.name, "%s %s: %s", r->method_s, r->path,
	       rc ? gf_strerror(rc) : "the handler gave no answer");
	gf_reply_error(r, 500, "internal", "%s",
		       rc ? gf_strerror(rc) : "the handler gave no answer");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **ctx)
{
	struct gf_server *s = cls;
	struct gf_http_req *r = *ctx;
	if (!r || !r->started) {
		if (!r)
			r = req_alloc(s, conn);
		req_start(r, url, method);
		*ctx = r;
		flight(s, +1);
		first_call(r, version);
	} else if (*upload_size) {
		if (r->replied) {
			*upload_size = 0;
			return MHD_YES;
		}
		return take_body(r, upload, upload_size);
	} else if (r->suspended) {
		/* resumed: the answer another thread gave (under s->lock until
		 * the resumption, which orders it before this call) */
		struct MHD_Response *resp = r->held;
		r->held = NULL;
		r->suspended = false;
		if (!resp ||
		    MHD_queue_response(conn, r->status, resp) != MHD_YES)
			r->queue_failed = true;
		if (resp)
			MHD_destroy_response(resp);
	} else if (r->refused && !r->replied) {
		send_refusal(r);
	} else if (!r->replied) {
		dispatch(r);
		if (r->suspended)
			return MHD_YES; /* r may be answered by now: not read */
	}
	return r->queue_failed ? MHD_NO : MHD_YES;
}

static void on_done(void *cls, struct MHD_Connection *conn, void **ctx,
		    enum MHD_RequestTerminationCode toe)
{
	(void)conn;
	struct gf_server *s = cls;
	struct gf_http_req *r = *ctx;
	if (!r)
		return;
	if (!r->started) { /* its line came, never its headers */
		req_free(r);
		*ctx = NULL;
		return;
	}
	if (gf_log_get_level() >= GF_LOG_DEBUG)
		gf_log(GF_LOG_DEBUG, s->o.name,
		       "%s %s from %s: %u, %zu bytes in %.2f ms%s", r->method_s,
		       r->path, r->client, r->status, r->sent,
		       gf_clock_ms() - r->t0_ms,
		       toe == MHD_REQUEST_TERMINATED_COMPLETED_OK
			       ? ""
			       : " (connection closed before the end)");
	req_free(r);
	*ctx = NULL;
	flight(s, -1);
}

/* libmicrohttpd's URI callback: the request line is in, its query not
 * parsed yet; the request starts here (its ctx). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct gf_http_req *r = req_alloc(cls, conn);
	gf__guard_uri(r, uri);
	return r;
}

/* Connections open, for the 503 past max_connections. */
static void on_connection(void *cls, struct MHD_Connection *conn,
			  void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	(void)conn;
	(void)socket_ctx;
	struct gf_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		atomic_fetch_add(&s->open, 1);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		atomic_fetch_sub(&s->open, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* libmicrohttpd's own messages (connection limit reached, a client gone
 * mid-request), one debug line each. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	const struct gf_server *s = cls;
	char msg[512];
	gf_vnote(msg, sizeof(msg), fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	gf_log(GF_LOG_DEBUG, s->o.name, "libmicrohttpd: %s", msg);
}

/* --- start and stop -------------------------------------------------- */

/* A connection accepted once the server is stopping is closed at once
 * (event threads: see gf_server_stop). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr,
				     socklen_t len)
{
	(void)addr;
	(void)len;
	const struct gf_server *s = cls;
	return atomic_load(&s->stopping) ? MHD_NO : MHD_YES;
}

static void defaults(struct gf_server_opts *o)
{
	if (!o->name)
		o->name = "server";
	if (!o->max_connections)
		o->max_connections = GF_SERVER_CONNECTIONS;
	if (!o->max_per_client)
		o->max_per_client = GF_SERVER_PER_CLIENT;
	if (o->max_per_client > o->max_connections &&
	    o->max_per_client != GF_SERVER_NO_LIMIT)
		o->max_per_client = o->max_connections;
	if (!o->idle_timeout_s)
		o->idle_timeout_s = GF_SERVER_IDLE_S;
	if (!o->body_max)
		o->body_max = GF_SERVER_BODY_MAX;
	if (!o->drain_ms)
		o->drain_ms = GF_SERVER_DRAIN_MS;
	if (o->threads > GF_SERVER_THREADS_MAX)
		o->threads = GF_SERVER_THREADS_MAX;
}

/*
 * threads 0: one thread per connection.  libmicrohttpd's select() loop
 * accepts, not its poll() one: with poll, 0.9.75 accepts a connection
 * past the limit and closes it at once; with select (and the ITC) it
 * stops polling the socket at the limit, so that the client waits in the
 * kernel's backlog for a free slot.  threads N: N epoll loops, which
 * stop polling the socket at the limit too.  The limit given to
 * libmicrohttpd is max_connections and a few spare slots, in which a
 * request is answered 503 at once (guarded()).
 */
static unsigned spare_slots(unsigned max)
{
	unsigned spare = max / 16 + 4;
	return max > UINT32_MAX - spare ? 0 : spare;
}

static struct MHD_Daemon *start_daemon(struct gf_server *s)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
			 MHD_USE_ERROR_LOG;
	struct MHD_OptionItem tls[6]; /* and the memory per connection */
	int ntls = gf__tls_mhd_options(s->o.tls, tls);
	if (ntls > 0)
		flags |= MHD_USE_TLS;
	if (s->o.conn_memory) {
		tls[ntls++] = (struct MHD_OptionItem){
			MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			(intptr_t)s->o.conn_memory, NULL
		};
		tls[ntls] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	}
	if (s->o.threads == 0)
		flags |= MHD_USE_THREAD_PER_CONNECTION;
	else
		flags |= MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
	unsigned limit =
		s->o.max_connections + spare_slots(s->o.max_connections);
	unsigned per_client = s->o.max_per_client == GF_SERVER_NO_LIMIT
				      ? 0 /* none */
				      : s->o.max_per_client;
	if (s->o.threads > 1)
		return MHD_start_daemon(
			flags, 0, accept_policy, s, on_request, s,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
			MHD_OPTION_THREAD_POOL_SIZE, s->o.threads,
			MHD_OPTION_LISTEN_SOCKET, s->fd,
			MHD_OPTION_CONNECTION_LIMIT, limit,
			MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client,
			MHD_OPTION_CONNECTION_TIMEOUT, s->o.idle_timeout_s,
			MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
			MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
			MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
			MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	return MHD_start_daemon(
		flags, 0, accept_policy, s, on_request, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
		MHD_OPTION_LISTEN_SOCKET, s->fd, MHD_OPTION_CONNECTION_LIMIT,
		limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client,
		MHD_OPTION_CONNECTION_TIMEOUT, s->o.idle_timeout_s,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_done, s, MHD_OPTION_ARRAY, tls,
		MHD_OPTION_END);
}

/*
 * A peer that closes its end while we write (a long poll given up, a
 * scrape timed out) must cost an EPIPE, never the process: libmicrohttpd
 * passes MSG_NOSIGNAL on Linux, but a process that serves ignores
 * SIGPIPE all the same, as its manual asks where any write may lack it.
 */
static void ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

int gf_server_start(struct gf_server **out, const struct gf_route *routes,
		    int nroutes, const struct gf_server_opts *o,
		    struct gf_err *e)
{
	static pthread_once_t sigpipe_once = PTHREAD_ONCE_INIT;
	pthread_once(&sigpipe_once, ignore_sigpipe);
	*out = NULL;
	if (nroutes < 0 || nroutes > GF_SERVER_MAX_ROUTES)
		return gf_err_set(e, GF_EINVAL, "%d routes (at most %d)",
				  nroutes, GF_SERVER_MAX_ROUTES);
	int rc = gf_routes_check(routes, nroutes, e);
	if (!rc)
		rc = gf_dynlib_open(&gf_mhd_lib, e);
	if (rc)
		return rc;
	struct gf_server *s = gf_calloc(1, sizeof(*s));
	s->routes = routes;
	s->nroutes = nroutes;
	s->o = *o;
	defaults(&s->o);
	s->fd = listen_on(s, e);
	if (s->fd < 0) {
		rc = s->fd;
		gf_free(s);
		return rc;
	}
	atomic_init(&s->stopping, false);
	atomic_init(&s->open, 0);
	gf_cond_init_mono(&s->idle);
	pthread_mutex_init(&s->lock, NULL);
	s->d = start_daemon(s);
	if (!s->d) {
		close(s->fd);
		pthread_cond_destroy(&s->idle);
		pthread_mutex_destroy(&s->lock);
		gf_free(s);
		return gf_err_set(e, GF_ENOTSUP,
				  "cannot serve HTTP on '%s': libmicrohttpd "
				  "refused to start",
				  o->listen);
	}
	gf_log(GF_LOG_DEBUG, s->o.name,
	       "serving %d routes on %s (%u connections, %u per client, %u s "
	       "idle timeout, bodies up to %zu bytes, %s)",
	       nroutes, s->url, s->o.max_connections, s->o.max_per_client,
	       s->o.idle_timeout_s, s->o.body_max,
	       s->o.threads ? "event threads" : "a thread per connection");
	*out = s;
	return 0;
}

int gf_server_start_with(struct gf_server **out, const struct gf_route *routes,
			 int nroutes, const struct gf_server_opts *o,
			 pthread_t *tid, void *(*fn)(void *), const char *what,
			 struct gf_err *e)
{
	int rc = gf_server_start(out, routes, nroutes, o, e);
	if (rc)
		return rc;
	rc = -pthread_create(tid, NULL, fn, o->arg);
	if (rc) {
		gf_err_set(e, rc, "cannot start the %s thread: %s", what,
			   gf_strerror(rc));
		gf_server_stop(*out);
		*out = NULL;
	}
	return rc;
}

const char *gf_server_url(const struct gf_server *s)
{
	return s->url;
}

unsigned gf_server_port(const struct gf_server *s)
{
	return s->port;
}

bool gf_server_stopping(const struct gf_server *s)
{
	return atomic_load(&s->stopping);
}

/* Wait until no request is in flight or drain_ms passed; how many are
 * left. */
static int drain(struct gf_server *s)
{
	struct timespec until;
	gf_clock_deadline(&until, (double)s->o.drain_ms);
	pthread_mutex_lock(&s->lock);
	while (s->in_flight > 0)
		if (pthread_cond_timedwait(&s->idle, &s->lock, &until) ==
		    ETIMEDOUT)
			break;
	int left = s->in_flight;
	pthread_mutex_unlock(&s->lock);
	return left;
}

void gf_server_stop(struct gf_server *s)
{
	if (!s)
		return;
	double t0 = gf_clock_ms();
	atomic_store(&s->stopping, true);
	if (s->o.on_stop)
		s->o.on_stop(s->o.arg);
	/*
	 * No new connection.  A thread per connection: MHD stops polling
	 * the socket, and the kernel refuses what would have waited in its
	 * backlog.  Event threads (epoll): libmicrohttpd 0.9.75's quiesce
	 * races its own loop, which may then fail to take the socket out of
	 * its epoll set and abort the process (MHD_epoll's "at the
	 * connection limit" branch; seen in make check), so the socket stays
	 * and each connection it accepts is closed at once (accept_policy);
	 * libmicrohttpd closes the socket at its stop.
	 */
	bool quiesce = s->o.threads == 0;
	if (quiesce) {
		MHD_quiesce_daemon(s->d);
		shutdown(s->fd, SHUT_RDWR);
	}
	gf__streams_end_all(s); /* their connections finish */
	int left = drain(s);
	if (left)
		gf_log(GF_LOG_WARN, s->o.name,
		       "stopping with %d requests still in flight after %u ms",
		       left, s->o.drain_ms);
	if (gf__server_answer_all_held(s))
		drain(s);
	MHD_stop_daemon(s->d);
	if (quiesce) /* handed back to us by MHD_quiesce_daemon */
		close(s->fd);
	gf_log(GF_LOG_DEBUG, s->o.name, "stopped in %.1f ms",
	       gf_clock_ms() - t0);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	gf_free(s);
}
