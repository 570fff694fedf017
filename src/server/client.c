/*
 * client.c - the shared HTTP client (client.h) on libcurl's easy API.
 *
 * Invariants: libcurl is initialised once per process (pthread_once)
 * and never cleaned up (its global state lives as long as the process);
 * a handle is used by one thread at a time (struct gf_client is one
 * thread's, a one-shot call makes its own); no call raises a signal
 * (CURLOPT_NOSIGNAL); an answer's body never grows past answer_max; the
 * cause of a failure is put in words here, once, for every caller; a
 * bearer token goes over plain http only to a loopback host, unless the
 * request says insecure_http (checked before a name is resolved); an
 * answer that came before the whole body was sent is returned, not the
 * send error that followed it (struct tail).
 */
#include "server/client.h"

#include <arpa/inet.h>
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/dynlib.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/*
 * libcurl, opened the first time a client is made (util/dynlib.h).  Its
 * headers wrap the two variadic calls in macros of their own names (the
 * option type check of typecheck-gcc.h, or a three-argument check): off
 * here, as the names now stand for the loaded pointers.
 */
#define CURL_FUNCS(X)          \
	X(curl_easy_cleanup)   \
	X(curl_easy_getinfo)   \
	X(curl_easy_init)      \
	X(curl_easy_perform)   \
	X(curl_easy_reset)     \
	X(curl_easy_setopt)    \
	X(curl_easy_strerror)  \
	X(curl_free)           \
	X(curl_global_init)    \
	X(curl_slist_append)   \
	X(curl_slist_free_all) \
	X(curl_url)            \
	X(curl_url_cleanup)    \
	X(curl_url_get)        \
	X(curl_url_set)
GF_DYNLIB_DEFINE(curl_lib, curl_fns, "libcurl.so.4", "libcurl4", CURL_FUNCS);
#define CURL_FN(name) (GF_DYNLIB_FNS(&curl_lib, curl_fns)->name)
#undef curl_easy_getinfo
#undef curl_easy_setopt
#define curl_easy_cleanup   CURL_FN(curl_easy_cleanup)
#define curl_easy_getinfo   CURL_FN(curl_easy_getinfo)
#define curl_easy_init	    CURL_FN(curl_easy_init)
#define curl_easy_perform   CURL_FN(curl_easy_perform)
#define curl_easy_reset	    CURL_FN(curl_easy_reset)
#define curl_easy_setopt    CURL_FN(curl_easy_setopt)
#define curl_easy_strerror  CURL_FN(curl_easy_strerror)
#define curl_free	    CURL_FN(curl_free)
#define curl_global_init    CURL_FN(curl_global_init)
#define curl_slist_append   CURL_FN(curl_slist_append)
#define curl_slist_free_all CURL_FN(curl_slist_free_all)
#define curl_url	    CURL_FN(curl_url)
#define curl_url_cleanup    CURL_FN(curl_url_cleanup)
#define curl_url_get	    CURL_FN(curl_url_get)
#define curl_url_set	    CURL_FN(curl_url_set)

/*
 * What a plain-http connection still held when libcurl closed it.  A
 * server may answer before the whole body is sent (a 413 at the headers)
 * and close; libcurl, still sending, then fails with a send error (EPIPE,
 * ECONNRESET) while the answer sits unread in the socket.  The socket's
 * close (on_close) reads what is left, and an exchange that failed that
 * way returns that answer, as curl's tool shows it.  The last close wins:
 * a failed connection is the last one its exchange closes.  (https: the
 * bytes are TLS records, not read.)
 */
#define TAIL_MAX 16384
struct tail {
	bool plain;	   /* http://: the bytes are the answer's */
	struct gf_buf got; /* what the last closed connection held */
};

struct gf_client {
	CURL *h;
	struct tail tail; /* its connections close into it */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static CURL *new_handle(void)
{
	pthread_once(&curl_once, curl_init);
	CURL *h = curl_easy_init();
	if (!h) {
		fprintf(stderr, "gpufleet: libcurl cannot make a handle\n");
		abort(); /* out of memory, as util/mem.c does */
	}
	return h;
}

struct gf_client *gf_client_new(void)
{
	struct gf_client *c = gf_calloc(1, sizeof(*c));
	c->h = new_handle();
	return c;
}

void gf_client_free(struct gf_client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->h);
	gf_buf_release(&c->tail.got);
	gf_free(c);
}

/* libcurl closes a socket: what it still holds kept first (plain http). */
static int on_close(void *cls, curl_socket_t fd)
{
	struct tail *t = cls;
	gf_buf_release(&t->got);
	gf_buf_init(&t->got, TAIL_MAX);
	char chunk[4096];
	ssize_t n;
	while (t->plain &&
	       (n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT)) > 0)
		if (gf_buf_append(&t->got, chunk, (size_t)n))
			break;
	return close(fd);
}

/* Header `name` of the head [p, end): its value and length, or NULL. */
static const char *head_value(const char *p, const char *end, const char *name,
			      size_t *len)
{
	size_t nl = strlen(name);
	while (p && p < end) {
		const char *eol = strstr(p, "\r\n"); /* end is one */
		if ((size_t)(eol - p) > nl && !strncasecmp(p, name, nl) &&
		    p[nl] == ':') {
			const char *v = p + nl + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			*len = (size_t)(eol - v);
			return v;
		}
		p = eol + 2;
	}
	return NULL;
}

/* A whole HTTP/1.x answer at the head of got (interim 1xx ones skipped)
 * into a: its status, type and body (of its Content-Length, or all that
 * is left); false, a's body left empty, when got holds none. */
static bool tail_answer(const struct gf_buf *got, struct gf_client_answer *a)
{
	const char *p = gf_buf_str(got), *stop = p + got->len;
	while (!gf_buf_error(got) && stop - p > 12 &&
	       !strncmp(p, "HTTP/1.", 7) && p[8] == ' ') {
		/* the head is text: strstr stops at the NUL after got */
		const char *end = strstr(p, "\r\n\r\n");
		char *after;
		long status = strtol(p + 9, &after, 10);
		if (!end || after != p + 12 || status < 100 || status > 599)
			return false;
		const char *body = end + 4;
		if (status < 200) {
			p = body;
			continue;
		}
		size_t n = (size_t)(stop - body), len;
		const char *cl = head_value(p, end, "Content-Length", &len);
		if (cl) {
			unsigned long long want = strtoull(cl, NULL, 10);
			if (want > n)
				return false; /* cut: not all of it came */
			n = (size_t)want;
		}
		if (gf_buf_append(&a->body, body, n)) {
			gf_buf_reset(&a->body);
			return false;
		}
		a->status = status;
		const char *type = head_value(p, end, "Content-Type", &len);
		gf_note(a->content_type, sizeof(a->content_type), "%.*s",
			type ? (int)len : 0, type ? type : "");
		return true;
	}
	return false;
}

/* Where an answer's body goes: its buffer, or the caller's sink (a 2xx
 * answer's, as it comes). */
struct sinkto {
	struct gf_buf *b;
	CURL *h;
	const struct gf_client_req *q;
	struct gf_client_answer *a;
	bool stopped; /* the sink said stop */
};

static size_t on_data(char *p, size_t size, size_t n, void *cls)
{
	struct sinkto *w = cls;
	size_t len = size * n;
	long code = 0;
	if (w->q->sink &&
	    curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &code) ==
		    CURLE_OK &&
	    code >= 200 && code < 300) {
		if (w->q->sink(p, len, w->q->sink_arg) == 0)
			return len;
		w->stopped = true;
		return 0;
	}
	return gf_buf_append(w->b, p, len) == 0 ? len : 0;
}

/* Loopback never through a proxy; the rest as no_proxy says. */
static void no_proxy(char *out, size_t size)
{
	const char *env = getenv("no_proxy");
	if (!env || !*env)
		env = getenv("NO_PROXY");
	if (env && strcmp(env, "*") == 0) {
		gf_note(out, size, "*"); /* curl's wildcard stands alone */
		return;
	}
	/* a list cut short only proxies hosts it would have spared */
	gf_note(out, size, "localhost,127.0.0.1,::1%s%s",
		env && *env ? "," : "", env && *env ? env : "");
}

/* "10 s", or "1500 ms" */
static void duration(long ms, char *out, size_t size)
{
	if (ms % 1000 == 0)
		gf_note(out, size, "%ld s", ms / 1000);
	else
		gf_note(out, size, "%ld ms", ms);
}

/* The host part of a URL, for messages. */
static void host_of(const char *url, char *out, size_t size)
{
	const char *p = strstr(url, "://");
	p = p ? p + 3 : url;
	size_t n = strcspn(p, ":/?#");
	gf_note(out, size, "%.*s", (int)(n < 200 ? n : 200), p);
}

/* The cause of a failed exchange in words (a->why); its code. */
static int cause(CURL *h, CURLcode rc, const struct gf_client_req *q,
		 long timeout_ms, const char *errbuf,
		 struct gf_client_answer *a)
{
	long os = 0;
	char t[32], host[208];
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
	const char *lib = errbuf[0] ? errbuf : curl_easy_strerror(rc);

	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		duration(timeout_ms, t, sizeof(t));
		gf_note(a->why, sizeof(a->why), "no answer within %s", t);
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		host_of(q->url, host, sizeof(host));
		gf_note(a->why, sizeof(a->why), "cannot resolve '%s'", host);
		return GF_ENOTFOUND;
	case CURLE_WRITE_ERROR:
	case CURLE_FILESIZE_EXCEEDED:
		gf_note(a->why, sizeof(a->why), "answer larger than %zu bytes",
			a->body.cap);
		if (a->body.cap % (1u << 20) == 0)
			gf_note(a->why, sizeof(a->why),
				"answer larger than %zu MiB",
				a->body.cap >> 20);
		return GF_ETOOBIG;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		gf_note(a->why, sizeof(a->why), "%s", lib);
		return GF_EINVAL;
	case CURLE_ABORTED_BY_CALLBACK:
		gf_note(a->why, sizeof(a->why), "cancelled");
		return -ECANCELED;
	case CURLE_GOT_NOTHING:
		gf_note(a->why, sizeof(a->why),
			"the connection closed without an answer");
		return GF_EPARSE;
	case CURLE_WEIRD_SERVER_REPLY:
		gf_note(a->why, sizeof(a->why), "not an HTTP answer (%.200s)",
			lib);
		return GF_EPARSE;
	case CURLE_PEER_FAILED_VERIFICATION:
		gf_note(a->why, sizeof(a->why),
			"the server's certificate is not trusted (%.120s): "
			"give --ca FILE, the CA that signed it",
			lib);
		return GF_EAUTH;
	case CURLE_SSL_CACERT_BADFILE:
		gf_note(a->why, sizeof(a->why),
			"cannot use --ca '%.100s': %.100s", q->ca ? q->ca : "",
			lib);
		return GF_EINVAL;
	case CURLE_SSL_CONNECT_ERROR:
		gf_note(a->why, sizeof(a->why), "TLS handshake failed (%.200s)",
			lib);
		return GF_EPARSE;
	default:
		break;
	}
	if (os > 0) {
		gf_note(a->why, sizeof(a->why), "%s", gf_strerror(-(int)os));
		return -(int)os;
	}
	gf_note(a->why, sizeof(a->why), "%s", lib);
	return -EIO;
}

/* libcurl's progress call (at least once a second): nonzero gives up. */
static int on_progress(void *cls, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return atomic_load((atomic_bool *)cls) ? 1 : 0;
}

/* A method's name, PATCH too (never served, so not in router.c). */
static const char *verb(unsigned m)
{
	return m == GF_HTTP_PATCH ? "PATCH" : gf_http_method_name(m);
}

/* Method and body options; false when the method is not one we send. */
static bool set_method(CURL *h, const struct gf_client_req *q)
{
	unsigned m = q->method ? q->method : GF_HTTP_GET;
	if (q->body || m == GF_HTTP_POST || m == GF_HTTP_PUT ||
	    m == GF_HTTP_PATCH) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS,
				 q->body ? (const char *)q->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(q->body ? q->body_len : 0));
	}
	switch (m) {
	case GF_HTTP_GET:
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
		return q->body == NULL;
	case GF_HTTP_HEAD:
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
		return q->body == NULL;
	case GF_HTTP_POST:
		return true;
	case GF_HTTP_PUT:
	case GF_HTTP_DELETE:
	case GF_HTTP_PATCH:
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, verb(m));
		return true;
	default:
		return false;
	}
}

/* "NAME: VALUE" added to *l: 0, or GF_EINVAL / GF_ETOOBIG with why
 * naming what (what: "the token", "the Accept header"). */
static int header(struct curl_slist **l, const char *name, const char *value,
		  const char *what, char *why, size_t wsize)
{
	char line[GF_CLIENT_HEADER_MAX];
	if (strpbrk(value, "\r\n")) {
		gf_note(why, wsize, "%s is not one header line", what);
		return GF_EINVAL;
	}
	if (gf_fmt(line, sizeof(line), "%s: %s", name, value) != 0) {
		gf_note(why, wsize, "%s is longer than %d bytes", what,
			GF_CLIENT_HEADER_MAX - 32);
		return GF_ETOOBIG;
	}
	*l = curl_slist_append(*l, line);
	return 0;
}

/* The request's headers into *out: 0, or an error with why set when a
 * value would break the header block (*out NULL then). */
static int headers(const struct gf_client_req *q, struct curl_slist **out,
		   char *why, size_t wsize)
{
	struct curl_slist *l = curl_slist_append(NULL, "Expect:");
	char bearer[GF_CLIENT_HEADER_MAX];
	int rc = 0;
	if (q->accept)
		rc = header(&l, "Accept", q->accept, "the Accept header", why,
			    wsize);
	if (rc == 0 && q->token) {
		if (gf_fmt(bearer, sizeof(bearer), "Bearer %s", q->token)) {
			gf_note(why, wsize, "the token is longer than %d bytes",
				GF_CLIENT_HEADER_MAX - 32);
			rc = GF_ETOOBIG;
		} else {
			rc = header(&l, "Authorization", bearer, "the token",
				    why, wsize);
		}
	}
	if (rc == 0 && q->body)
		rc = header(&l, "Content-Type",
			    q->content_type ? q->content_type
					    : "application/json",
			    "the content type", why, wsize);
	if (rc)
		curl_slist_free_all(l);
	*out = rc ? NULL : l;
	return rc;
}
/* The TLS options beyond --ca (client.h's struct gf_client_tls). */
static void set_tls(CURL *h, const struct gf_client_req *q)
{
	const struct gf_client_tls *t = q->tls;
	if (q->ca)
		curl_easy_setopt(h, CURLOPT_CAINFO, q->ca);
	if (!t)
		return;
	if (t->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	/* libcurl copies each blob (the struct and, with CURL_BLOB_COPY,
	 * its bytes) */
	if (t->ca_pem) {
		struct curl_blob b = { t->ca_pem, t->ca_len, CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
	}
	if (t->cert_file)
		curl_easy_setopt(h, CURLOPT_SSLCERT, t->cert_file);
	if (t->key_file)
		curl_easy_setopt(h, CURLOPT_SSLKEY, t->key_file);
	if (t->cert_pem) {
		struct curl_blob b = { t->cert_pem, t->cert_len,
				       CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (t->key_pem) {
		struct curl_blob b = { t->key_pem, t->key_len, CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
}

/* With tls->server_name: *url, the request's URL with that name for its
 * host (what the certificate is checked against, what SNI says), and
 * *to, a CONNECT_TO entry that sends it to the URL's own host and port.
 * 0, or GF_EINVAL / GF_ETOOBIG with why set. */
static int name_server(const struct gf_client_req *q, char **url,
		       struct curl_slist **to, char *why, size_t wsize)
{
	const char *name = q->tls->server_name;
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, line[600];
	int rc = GF_EINVAL;
	if (!u || curl_url_set(u, CURLUPART_URL, q->url ? q->url : "", 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ||
	    curl_url_set(u, CURLUPART_HOST, name, 0) ||
	    curl_url_get(u, CURLUPART_URL, url, 0)) {
		gf_note(why, wsize, "cannot check the server as '%.100s'",
			name);
	} else if (gf_fmt(line, sizeof(line), "%s:%s:%s:%s", name, port, host,
			  port)) {
		gf_note(why, wsize, "server name '%.100s...' too long", name);
		rc = GF_ETOOBIG;
	} else {
		*to = curl_slist_append(NULL, line);
		rc = 0;
	}
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return rc;
}

/* Every option but the method's and the headers'. */
static void set_options(CURL *h, const struct gf_client_req *q, long tmo,
			const char *np, char *errbuf, struct sinkto *w,
			struct tail *t)
{
	struct gf_client_answer *a = w->a;
	curl_easy_setopt(h, CURLOPT_URL, q->url ? q->url : "");
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	/* a sink's answer lasts as long as it comes (a followed log) */
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, q->sink ? 0L : tmo);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, tmo);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOPROXY, np);
	curl_easy_setopt(h, CURLOPT_USERAGENT,
			 q->user_agent ? q->user_agent : "gpufleet");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)a->body.cap);
	t->plain = !strncasecmp(q->url ? q->url : "", "http://", 7);
	curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, on_close);
	curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, t);
	set_tls(h, q);
	if (q->cancel) {
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, q->cancel);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
}

int gf_client_request(struct gf_client *c, const struct gf_client_req *q,
		      struct gf_client_answer *a, struct gf_err *e)
{
	memset(a, 0, sizeof(*a));
	gf_buf_init(&a->body,
		    q->answer_max ? q->answer_max : GF_CLIENT_ANSWER_MAX);
	const char *m = verb(q->method ? q->method : GF_HTTP_GET);
	const char *url = q->url ? q->url : "";
	long tmo = q->timeout_ms > 0 ? q->timeout_ms : GF_CLIENT_TIMEOUT_MS;
	CURL *h = c ? c->h : new_handle();
	if (c)
		curl_easy_reset(h); /* options only: connections stay */
	struct tail one = { 0 }, *t = c ? &c->tail : &one;
	gf_buf_release(&t->got);
	struct curl_slist *hdrs = NULL, *to = NULL;
	char *named = NULL; /* the URL with tls->server_name */
	int rc = GF_EAUTH;
	if (q->token && !gf_client_token_safe(url, q->insecure_http, a->why,
					      sizeof(a->why)))
		goto out;
	rc = headers(q, &hdrs, a->why, sizeof(a->why));
	if (rc == 0 && q->tls && q->tls->server_name)
		rc = name_server(q, &named, &to, a->why, sizeof(a->why));
	if (rc)
		goto out;
	rc = GF_EINVAL;
	if (!set_method(h, q)) {
		gf_note(a->why, sizeof(a->why), "%s takes no body here", m);
		goto out;
	}
	char errbuf[CURL_ERROR_SIZE] = "", np[512];
	no_proxy(np, sizeof(np));
	struct sinkto w = { &a->body, h, q, a, false };
	set_options(h, q, tmo, np, errbuf, &w, t);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (named) {
		curl_easy_setopt(h, CURLOPT_URL, named);
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, to);
	}
	CURLcode cr = curl_easy_perform(h);
	double secs = 0;
	curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &secs);
	a->ms = secs * 1e3;
	long got = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &got);
	long os = 0;
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
	if (cr != CURLE_OK && got == 0 && (os == EPIPE || os == ECONNRESET) &&
	    tail_answer(&t->got, a)) {
		gf_log(GF_LOG_DEBUG, "http",
		       "%s %s: answered before the body was all sent (%s)", m,
		       url, errbuf[0] ? errbuf : curl_easy_strerror(cr));
		rc = 0;
		goto out;
	}
	if (cr != CURLE_OK && w.stopped) {
		gf_note(a->why, sizeof(a->why), "cancelled");
		rc = -ECANCELED;
		goto out;
	}
	if (cr != CURLE_OK) {
		rc = cause(h, cr, q, tmo, errbuf, a);
		goto out;
	}
	const char *type = NULL;
	a->status = got;
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type);
	/* a longer type is cut: callers compare its head */
	gf_note(a->content_type, sizeof(a->content_type), "%s",
		type ? type : "");
	rc = 0;
out:
	/* the handle keeps no pointer into this call's storage */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_CONNECT_TO, NULL);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(to);
	curl_free(named);
	if (!c)
		curl_easy_cleanup(h);
	gf_buf_release(&one.got);
	if (rc)
		gf_err_set(e, rc, "cannot %s %s: %s", m, url, a->why);
	if (rc)
		gf_log(GF_LOG_DEBUG, "http", "%s %s: %s after %.1f ms", m, url,
		       a->why, a->ms);
	else
		gf_log(GF_LOG_DEBUG, "http", "%s %s: %ld, %zu bytes in %.1f ms",
		       m, url, a->status, a->body.len, a->ms);
	return rc;
}

void gf_client_answer_release(struct gf_client_answer *a)
{
	gf_buf_release(&a->body);
}

const char *gf_client_base_url(const char *in, unsigned default_port, char *out,
			       size_t size)
{
	const char *p = in;
	char host[256];
	bool tls = strncasecmp(p, "https://", 8) == 0;
	if (tls)
		p += 8;
	else if (strncasecmp(p, "http://", 7) == 0)
		p += 7;
	else if (strstr(p, "://"))
		return "expected http://HOST:PORT or https://HOST:PORT";
	const char *slash = strchr(p, '/');
	if (slash && strcmp(slash, "/") != 0)
		return "expected no path: the address only, like "
		       "http://127.0.0.1:9400/";
	size_t len = slash ? (size_t)(slash - p) : strlen(p);
	const char *colon = memchr(p, ':', len);
	size_t hlen = colon ? (size_t)(colon - p) : len;
	if (hlen == 0)
		return "expected a host before the port, like "
		       "127.0.0.1:9400";
	if (hlen >= sizeof(host))
		return "host name too long";
	memcpy(host, p, hlen);
	host[hlen] = '\0';
	long port = default_port;
	if (colon) {
		size_t plen = len - hlen - 1;
		char digits[8] = "", *end;
		if (plen > 0 && plen < sizeof(digits))
			memcpy(digits, colon + 1, plen);
		port = strtol(digits, &end, 10);
		if (plen == 0 || plen >= sizeof(digits) || *end ||
		    digits[0] == '-' || digits[0] == '+' || port < 1 ||
		    port > 65535)
			return "expected a port from 1 to 65535 after the host";
	}
	if (gf_fmt(out, size, "%s://%s:%ld", tls ? "https" : "http", host,
		   port))
		return "address too long";
	return NULL;
}

bool gf_client_host_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	char h[64];
	size_t n = strlen(host);
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') { /* [::1] */
		host++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof(h))
		return false;
	memcpy(h, host, n);
	h[n] = '\0';
	if (strcasecmp(h, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, h, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, h, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* The host of url: after the scheme and any user@, before the port and
 * the path ("[::1]" keeps its brackets). */
static void url_host(const char *url, char *out, size_t size)
{
	const char *p = strstr(url, "://");
	p = p ? p + 3 : url;
	size_t n = strcspn(p, "/?#");
	const char *at = memchr(p, '@', n);
	while (at) { /* the last '@' of the authority */
		n -= (size_t)(at + 1 - p);
		p = at + 1;
		at = memchr(p, '@', n);
	}
	const char *end;
	if (p[0] == '[' && (end = memchr(p, ']', n)) != NULL)
		n = (size_t)(end + 1 - p);
	else if ((end = memchr(p, ':', n)) != NULL)
		n = (size_t)(end - p);
	gf_note(out, size, "%.*s", (int)(n < size ? n : size - 1), p);
}

bool gf_client_token_safe(const char *url, bool insecure_http, char *why,
			  size_t size)
{
	char host[256];
	if (strncasecmp(url, "https://", 8) == 0 || insecure_http)
		return true;
	url_host(url, host, sizeof(host));
	if (gf_client_host_is_loopback(host))
		return true;
	gf_note(why, size,
		"refusing to send a bearer token in clear over http to "
		"'%.100s', which is not loopback: use https:// (with --ca "
		"FILE for a private CA), or give --insecure-http",
		host);
	return false;
}

int gf_client_escape(const char *s, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = (*p >= 'A' && *p <= 'Z') ||
			     (*p >= 'a' && *p <= 'z') ||
			     (*p >= '0' && *p <= '9') || *p == '-' ||
			     *p == '.' || *p == '_' || *p == '~';
		if (n + (plain ? 1 : 3) >= size) {
			if (size)
				out[0] = '\0';
			return GF_ETOOBIG;
		}
		if (plain) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	if (size)
		out[n] = '\0';
	return size ? 0 : GF_ETOOBIG;
}
