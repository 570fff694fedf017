/*
 * server_int.h - what server.c, server_reply.c and doc.c share: the request as
 * the server keeps it, and the one call that queues an answer.  Not for
 * services (they see server.h only).
 */
#ifndef GF_SERVER_SERVER_INT_H
#define GF_SERVER_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/mhd_lib.h"
#include "server/server.h"

/* The server (server.c starts and stops it; server_reply.c answers). */
struct gf_server {
	struct MHD_Daemon *d;
	int fd; /* the listening socket: ours, closed after the daemon */
	const struct gf_route *routes;
	int nroutes;
	struct gf_server_opts o; /* defaults filled in */
	char url[64];
	unsigned port;
	atomic_bool stopping;
	pthread_mutex_t lock;
	pthread_cond_t idle;	  /* signalled when in_flight drops to 0 */
	int in_flight;		  /* under lock */
	struct gf_http_req *held; /* suspended, not yet answered; under lock */
	struct gf_http_stream *streams; /* live (stream.c); under lock */
	atomic_uint open;		/* connections open (libmicrohttpd's) */
	uint64_t nheld;			/* under lock */
	atomic_ullong resumed, batches;
};

struct gf_http_req {
	struct gf_server *srv;
	struct MHD_Connection *conn;
	const char *path;     /* libmicrohttpd's, decoded, without query */
	const char *method_s; /* as the client sent it */
	unsigned method;      /* GF_HTTP_*, or 0 for another */
	struct gf_route_match match;
	char *path_copy; /* match's buf (owned): the path's length */
	size_t body_max;
	struct gf_buf body;
	uint64_t dropped; /* body bytes past the cap, not stored */
	bool too_big;
	unsigned refused; /* a status decided on the first call, or 0 */
	const char *refused_code;
	char refusal[384];
	bool replied;
	bool queue_failed; /* libmicrohttpd refused the answer */
	unsigned status;
	size_t sent; /* body bytes of the answer */
	double t0_ms;
	int nheaders;
	char *hname[GF_SERVER_MAX_HEADERS], *hvalue[GF_SERVER_MAX_HEADERS];
	char client[64];
	/* held (gf_req_suspend): the answer comes from another thread; the
	 * fields below are under srv->lock while suspended */
	bool suspended;
	struct MHD_Response *held; /* the answer, queued on resumption */
	const char *held_type;
	struct gf_http_req *hprev, *hnext; /* the server's held list */
	struct gf_http_req *bnext;	   /* answered in a batch, to resume */
	/* seen by the URI callback, before libmicrohttpd parses the query
	 * (guard.c); started: the first on_request call happened */
	bool started;
	const char *raw_uri; /* in libmicrohttpd's read buffer */
	size_t raw_uri_len;  /* its length as received */
	bool uri_nul;	     /* %00 in it */
	unsigned nargs;	     /* query arguments */
	bool close;	     /* the answer closes the connection */
};

/* guard.c: the refusals of server.h's "Guards", in its order */
/* On the request line, before libmicrohttpd parses the query: count the
 * arguments, look for %00; past GF_SERVER_MAX_ARGS, cut the query (it
 * would exhaust libmicrohttpd's memory pool, which then answers
 * nothing). */
void gf__guard_uri(struct gf_http_req *r, const char *uri);
/* At the first call, headers in (version as libmicrohttpd gave it):
 * true with the refusal set (status, code, detail) when the request
 * must be refused. */
bool gf__guard_request(struct gf_http_req *r, const char *version,
		       unsigned *status, const char **code, char *detail,
		       size_t size);

/*
 * Queue resp (taken: destroyed here, whatever happens) as the answer to
 * r with status, its Content-Type and the headers the handler added; len
 * is the body's size, for the log.  0, or GF_EINVAL when r was answered
 * already or libmicrohttpd refused.
 */
int gf__reply_response(struct gf_http_req *r, unsigned status, const char *type,
		       struct MHD_Response *resp, size_t len) GF_MUST_CHECK;

/* server.c: the server's lock and its list of live streams (under it),
 * for stream.c */
struct gf_http_stream;
pthread_mutex_t *gf__server_lock(struct gf_server *s);
/* Whether the server runs event loops (connections can be suspended). */
bool gf__server_event_loops(const struct gf_server *s);
struct gf_http_stream **gf__server_streams(struct gf_server *s);
/* server_reply.c: answer 503 what a service still holds (a suspended
 * connection must not outlive the daemon); how many were. */
int gf__server_answer_all_held(struct gf_server *s);
/* stream.c: end every live stream (gf_server_stop, before it drains) */
void gf__streams_end_all(struct gf_server *s);

/*
 * tls.c: the daemon's TLS options for t (NULL: none) into o, ended by
 * MHD_OPTION_END (room for 4); how many before the end.
 */
int gf__tls_mhd_options(const struct gf_tls *t, struct MHD_OptionItem *o);

#endif
