/*
 * client.h - the HTTP client services and commands share (libcurl):
 * `gpufleet diagnose` asking an agent today; `gpufleet submit/jobs/
 * cancel` and agent registration with the controller next.
 *
 *   struct gf_client_req q = { .method = GF_HTTP_POST,
 *                              .url = "http://127.0.0.1:9300/v1/jobs",
 *                              .token = token, .body = json,
 *                              .body_len = len };
 *   struct gf_client_answer a;
 *   if (gf_client_request(NULL, &q, &a, &e) != 0)
 *           fail("%s", e.msg);  // "cannot POST http://...: Connection refused"
 *   ... a.status, gf_buf_str(&a.body) ...
 *   gf_client_answer_release(&a);
 *
 * Every exchange has a total timeout (connect, send, wait, receive) and
 * a cap on the answer's body.  Any HTTP status is an answer (0 returned):
 * the caller judges it.  Redirects are not followed.  Proxies come from
 * the environment as for curl(1) (http_proxy, no_proxy), except that
 * loopback addresses never go through one.
 *
 * This is the one file of gpufleet on libcurl: the Kubernetes API client
 * (k8s/api.h) runs on it too, with the TLS options of a kubeconfig
 * (struct gf_client_tls: CA file or PEM, client certificate and key,
 * the server's name, verification off).
 */
#ifndef GF_SERVER_CLIENT_H
#define GF_SERVER_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/err.h>

#include "server/router.h"
#include "util/buf.h"

#define GF_CLIENT_TIMEOUT_MS 10000
#define GF_CLIENT_ANSWER_MAX (16u << 20)
#define GF_CLIENT_HEADER_MAX 8192 /* a header line's bytes, token included */

/* TLS beyond --ca, as a kubeconfig gives it (https:// only); each PEM
 * is borrowed for the call, only read (not const: libcurl's blob). */
struct gf_client_tls {
	char *ca_pem; /* CA certificate(s) in PEM; with ca_len */
	size_t ca_len;
	const char *cert_file, *key_file; /* the client's certificate, key */
	char *cert_pem, *key_pem;	  /* or both in PEM */
	size_t cert_len, key_len;
	bool insecure; /* the server's certificate not verified */
	/* the name the server's certificate is checked against (and SNI
	 * sends) instead of the URL's host, which is still where the
	 * connection goes (kubeconfig's tls-server-name); NULL none */
	const char *server_name;
};

struct gf_client_req {
	unsigned method;	  /* GF_HTTP_* (PATCH too); 0: GET */
	const char *url;	  /* http://HOST:PORT/path?query */
	const char *token;	  /* sent as "Authorization: Bearer TOKEN" */
	const void *body;	  /* POST/PUT body, or NULL */
	size_t body_len;	  /* its bytes */
	const char *content_type; /* of the body; NULL: application/json */
	long timeout_ms;	  /* the whole exchange; 0: 10 s */
	size_t answer_max;	  /* cap on the answer's body; 0: 16 MiB */
	/* when it turns true (another thread), the exchange is given up
	 * within about a second: -ECANCELED, "cancelled" (a long poll told
	 * to stop); NULL never */
	atomic_bool *cancel;
	/* https://: a PEM file of the CA(s) the server's certificate must
	 * chain to (--ca); NULL: the system's CAs */
	const char *ca;
	/* send the token over http:// to a host that is not loopback
	 * (--insecure-http); else refused, see gf_client_token_safe() */
	bool insecure_http;
	const struct gf_client_tls *tls; /* NULL: none beyond ca */
	const char *accept;		 /* an Accept header; NULL none */
	/* a 2xx answer's body handed to sink(bytes, n, sink_arg) as it
	 * comes, not kept (a->body holds only another answer's); the
	 * exchange then has no total timeout (timeout_ms bounds the
	 * connection), and a sink returning nonzero ends it: -ECANCELED */
	int (*sink)(const void *p, size_t n, void *arg);
	void *sink_arg;
	const char *user_agent; /* NULL: "gpufleet" */
};

struct gf_client_answer {
	long status;		/* HTTP status */
	char content_type[128]; /* "" when the server gave none */
	struct gf_buf body;	/* release with gf_client_answer_release() */
	double ms;		/* time the exchange took */
	char why[256];		/* on failure, the cause alone */
};

/* A connection cache for one thread's repeated calls (keep-alive); one
 * per thread, never shared. */
struct gf_client;
struct gf_client *gf_client_new(void);
void gf_client_free(struct gf_client *c);

/*
 * Send q and read the answer into *a (caller's storage; release it in
 * every case).  c: a client to reuse connections, or NULL for a one-shot
 * exchange.  Returns 0 when an HTTP answer came (any status; over plain
 * http also one that came before the request was all sent, when sending
 * the rest then failed with EPIPE or ECONNRESET), else a
 * negative code with e->msg naming the method, the URL and the cause,
 * and a->why the cause alone: -ECONNREFUSED and other -errno of the
 * connection ("Connection refused"), GF_ENOTFOUND ("cannot resolve
 * 'x'"), -ETIMEDOUT ("no answer within 10 s"), GF_ETOOBIG ("answer
 * larger than 16 MiB"), GF_EINVAL (a URL libcurl refuses), GF_EPARSE
 * (not an HTTP answer), GF_EAUTH (a token that would cross a
 * non-loopback link in clear: gf_client_token_safe()), and for https://
 * a certificate the CA does not vouch for ("the server's certificate is
 * not trusted (...): give --ca FILE ...") or a TLS handshake that fails.
 * Thread-safe with distinct c (or NULL).
 */
int gf_client_request(struct gf_client *c, const struct gf_client_req *q,
		      struct gf_client_answer *a,
		      struct gf_err *e) GF_MUST_CHECK;
void gf_client_answer_release(struct gf_client_answer *a);

/*
 * A service address as users type it: HOST, HOST:PORT, http://HOST:PORT,
 * https://HOST:PORT, with or without a trailing '/' (default_port when
 * none is given), into out as "http://HOST:PORT" or "https://HOST:PORT"
 * (no trailing '/': append a path).  NULL when good, or what is wrong: a
 * path, another scheme, a bad port, a long host.
 */
const char *gf_client_base_url(const char *in, unsigned default_port, char *out,
			       size_t size);

/*
 * Whether a bearer token may be sent to url: yes over https://, to a
 * loopback host (127.0.0.0/8, ::1, localhost; names are not resolved),
 * or when insecure_http says so; else false with why naming the host
 * and --insecure-http.  No traffic.
 */
bool gf_client_token_safe(const char *url, bool insecure_http, char *why,
			  size_t size);
/* s percent-encoded for a URL's query (every byte but A-Z a-z 0-9 - . _
 * ~, as curl_easy_escape does) into out: 0, or GF_ETOOBIG. */
int gf_client_escape(const char *s, char *out, size_t size) GF_MUST_CHECK;

/* Whether a URL's host ("127.0.0.1", "localhost", "[::1]") is loopback,
 * by its text alone. */
bool gf_client_host_is_loopback(const char *host);

#endif
