/*
 * k8s_api_fake.h - the Kubernetes API server test_k8s_serve.c talks to:
 * a thread on a loopback port that records every exchange (method,
 * path, headers, body, status) and answers as the real one does: a Pod
 * for a GET of one it knows, 201 and a Status for a Binding (which it
 * keeps: a second is a 409, a GET shows the pod bound with its job's
 * annotation), 409 for api.conflict's, 504 for api.lost's (made all the
 * same), 201 for api.forget's (not made), 404 for a pod that is not
 * there, PodLists in pages of two with a continue token (one snapshot a
 * list), whole pods from api.bound after the live ones.  Wire level
 * only: no Kubernetes control plane runs here.
 */
#ifndef GF_TEST_K8S_API_FAKE_H
#define GF_TEST_K8S_API_FAKE_H

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/mem.h"

#define MAX_X	  512
#define MAX_LIVE  64
#define MAX_BOUND 128

struct xch {
	char method[16];
	char path[1024];
	char headers[4096]; /* as sent, lower-cased names */
	char *body;
	int status;
};

static struct {
	int fd, port;
	pthread_t tid;
	atomic_bool stop;
	pthread_mutex_t lock;
	struct xch x[MAX_X];
	int n;
	char conflict[64];	 /* a pod whose Binding is refused */
	char live[MAX_LIVE][64]; /* uids of pods not ended */
	int nlive;
	char snap[MAX_LIVE][64]; /* the list a continue token pages on */
	int nsnap;
	char get_name[64], *get_pod; /* GET .../pods/NAME answers this */
	char *bound; /* whole pods (JSON items, comma-separated) listed
			after the live ones, in the list's last page */
	/* the pods Bindings bound (GET answers them bound, a second
	 * Binding is a 409), as the real API server keeps them */
	struct {
		char name[64], uid[64], node[64], job[32];
	} set[MAX_BOUND];
	int nset;
	char lost[64];	 /* a pod whose Binding is made, answered 504 */
	char forget[64]; /* a pod whose Binding is answered 201, not made */
} api = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void api_live(const char *uid, bool on)
{
	pthread_mutex_lock(&api.lock);
	int k = 0;
	for (int i = 0; i < api.nlive; i++)
		if (strcmp(api.live[i], uid) != 0 && k++ != i)
			memcpy(api.live[k - 1], api.live[i],
			       sizeof(api.live[i]));
	api.nlive = k;
	if (on && api.nlive < MAX_LIVE)
		snprintf(api.live[api.nlive++], 64, "%s", uid);
	pthread_mutex_unlock(&api.lock);
}

static void status_body(struct gf_buf *b, int code, const char *reason,
			const char *msg)
{
	gf_buf_printf(b,
		      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":"
		      "{},\"status\":\"%s\",\"message\":\"%s\",\"reason\":"
		      "\"%s\",\"code\":%d}",
		      code < 300 ? "Success" : "Failure", msg, reason, code);
}

/*
 * A page of the pod list: two items, then a continue token.  As the real
 * API server does, the pages of one list show one snapshot (the list as
 * its first page saw it), however pods come and go meanwhile.
 */
static void pod_list(struct gf_buf *b, const char *path)
{
	const char *c = strstr(path, "continue=");
	int from = c ? (int)strtol(c + 9, NULL, 10) : 0;
	if (!c) {
		memcpy(api.snap, api.live, sizeof(api.snap));
		api.nsnap = api.nlive;
	}
	gf_buf_puts(b, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
		       "\"metadata\":{\"resourceVersion\":\"99\"");
	if (from + 2 < api.nsnap)
		gf_buf_printf(b, ",\"continue\":\"%d\"", from + 2);
	gf_buf_puts(b, "},\"items\":[");
	for (int i = from; i < from + 2 && i < api.nsnap; i++)
		gf_buf_printf(b,
			      "%s{\"metadata\":{\"name\":\"p%d\",\"namespace\":"
			      "\"ml\",\"uid\":\"%s\"},\"status\":{\"phase\":"
			      "\"Running\"}}",
			      i > from ? "," : "", i, api.snap[i]);
	if (api.bound && from + 2 >= api.nsnap)
		gf_buf_printf(b, "%s%s", from < api.nsnap ? "," : "",
			      api.bound);
	gf_buf_puts(b, "]}");
}

/* The pod bound by a Binding, or -1 (under api.lock). */
static int set_find(const char *name)
{
	for (int k = 0; k < api.nset; k++)
		if (!strcmp(api.set[k].name, name))
			return k;
	return -1;
}

/* A Binding of pod name: made (its node and job annotation kept) and
 * 201, or 409 when the pod is bound already; api.lost's is made and
 * answered 504, api.forget's answered 201 and not made (under
 * api.lock). */
static int binding(const struct xch *x, const char *name, struct gf_buf *b)
{
	int k = set_find(name);
	if (k >= 0) {
		char msg[1024];
		snprintf(msg, sizeof(msg),
			 "Operation cannot be fulfilled on pods/binding "
			 "\\\"%s\\\": pod %s is already assigned to node "
			 "\\\"%s\\\"",
			 name, name, api.set[k].node);
		status_body(b, 409, "Conflict", msg);
		return 409;
	}
	if (strcmp(name, api.forget) != 0 && api.nset < MAX_BOUND) {
		struct gf_jv *v = NULL;
		struct gf_err e;
		if (gf_jv_parse(x->body, strlen(x->body), &v, &e) != 0)
			v = NULL;
		const struct gf_jv *m = gf_jv_get(v, "metadata");
		const char *uid = gf_jv_str(gf_jv_get(m, "uid"));
		const char *node =
			gf_jv_str(gf_jv_get(gf_jv_get(v, "target"), "name"));
		const char *job = gf_jv_str(gf_jv_get(
			gf_jv_get(m, "annotations"), "gpufleet.io/job"));
		k = api.nset++;
		snprintf(api.set[k].name, 64, "%.63s", name);
		snprintf(api.set[k].uid, 64, "%s", uid ? uid : "");
		snprintf(api.set[k].node, 64, "%s", node ? node : "");
		snprintf(api.set[k].job, 32, "%s", job ? job : "");
		gf_jv_free(v);
	}
	if (!strcmp(name, api.lost)) {
		status_body(b, 504, "Timeout",
			    "Timeout: request did not complete within "
			    "requested timeout");
		return 504;
	}
	status_body(b, 201, "", "");
	return 201;
}

/* The answer the real API server gives (under api.lock). */
static int answer_of(const struct xch *x, struct gf_buf *b)
{
	const char *pods = "/api/v1/namespaces/ml/pods/";
	if (!strcmp(x->method, "GET") &&
	    !strncmp(x->path, "/api/v1/pods?", 13)) {
		pod_list(b, x->path);
		return 200;
	}
	if (strncmp(x->path, pods, strlen(pods)) != 0) {
		status_body(b, 404, "NotFound",
			    "the server could not find "
			    "the requested resource");
		return 404;
	}
	char name[256];
	snprintf(name, sizeof(name), "%s", x->path + strlen(pods));
	char *slash = strchr(name, '/');
	if (slash)
		*slash = '\0';
	if (!strcmp(x->method, "POST") && slash &&
	    !strcmp(slash + 1, "binding")) {
		if (!strcmp(name, api.conflict)) {
			status_body(b, 409, "Conflict",
				    "Operation cannot be fulfilled on "
				    "pods/binding \\\"conflict-0\\\": pod "
				    "conflict-0 is already assigned to node "
				    "\\\"plain\\\"");
			return 409;
		}
		return binding(x, name, b);
	}
	if (!strcmp(x->method, "PATCH")) {
		gf_buf_printf(b,
			      "{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
			      "\"metadata\":{\"name\":\"%s\",\"namespace\":"
			      "\"ml\"}}",
			      name);
		return 200;
	}
	if (!strcmp(x->method, "GET") && api.get_pod &&
	    !strcmp(name, api.get_name)) {
		gf_buf_puts(b, api.get_pod);
		return 200;
	}
	int k = set_find(name);
	if (!strcmp(x->method, "GET") && k >= 0) {
		gf_buf_printf(b,
			      "{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
			      "\"metadata\":{\"name\":\"%s\",\"namespace\":"
			      "\"ml\",\"uid\":\"%s\",\"annotations\":{"
			      "\"gpufleet.io/job\":\"%s\"}},\"spec\":{"
			      "\"nodeName\":\"%s\"},\"status\":{\"phase\":"
			      "\"Pending\"}}",
			      name, api.set[k].uid, api.set[k].job,
			      api.set[k].node);
		return 200;
	}
	status_body(b, 404, "NotFound", "pods not found");
	return 404;
}

/* Read one request from fd into x: 0, or -1. */
static int read_request(int fd, struct xch *x)
{
	static _Thread_local char buf[1 << 20];
	size_t n = 0;
	char *end = NULL;
	while (!end && n < sizeof(buf) - 1) {
		ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (!end)
		return -1;
	*end = '\0';
	size_t hlen = (size_t)(end - buf) + 4;
	if (sscanf(buf, "%15s %1023s", x->method, x->path) != 2)
		return -1;
	char *hl = strstr(buf, "\r\n");
	snprintf(x->headers, sizeof(x->headers), "%s", hl ? hl + 2 : "");
	for (char *c = x->headers; *c; c++) /* names to lower case */
		if (c == x->headers || c[-1] == '\n')
			for (char *d = c; *d && *d != ':'; d++)
				*d = (char)tolower((unsigned char)*d);
	const char *cl = strstr(x->headers, "content-length:");
	size_t len = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
	x->body = gf_calloc(1, len + 1);
	size_t have = n - hlen;
	memcpy(x->body, buf + hlen, have < len ? have : len);
	while (have < len) {
		ssize_t r = recv(fd, x->body + have, len - have, 0);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return 0;
}

static void *api_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&api.stop)) {
		struct pollfd p = { .fd = api.fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		int c = accept(api.fd, NULL, NULL);
		if (c < 0)
			continue;
		struct xch x = { 0 };
		if (read_request(c, &x) == 0) {
			struct gf_buf b;
			gf_buf_init(&b, 1u << 20);
			pthread_mutex_lock(&api.lock);
			x.status = answer_of(&x, &b);
			if (api.n < MAX_X)
				api.x[api.n++] = x;
			else
				gf_free(x.body);
			pthread_mutex_unlock(&api.lock);
			char head[256];
			int hn = snprintf(head, sizeof(head),
					  "HTTP/1.1 %d X\r\nContent-Type: "
					  "application/json\r\nContent-Length: "
					  "%zu\r\nConnection: close\r\n\r\n",
					  x.status, b.len);
			(void)!send(c, head, (size_t)hn, MSG_NOSIGNAL);
			(void)!send(c, gf_buf_str(&b), b.len, MSG_NOSIGNAL);
			gf_buf_release(&b);
		} else {
			gf_free(x.body);
		}
		close(c);
	}
	return NULL;
}

static void api_start(void)
{
	api.fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(api.fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(api.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(api.fd, 64), 0);
	socklen_t len = sizeof(a);
	getsockname(api.fd, (struct sockaddr *)&a, &len);
	api.port = ntohs(a.sin_port);
	atomic_store(&api.stop, false);
	assert_int_equal(pthread_create(&api.tid, NULL, api_main, NULL), 0);
}

static void api_stop(void)
{
	atomic_store(&api.stop, true);
	pthread_join(api.tid, NULL);
	close(api.fd);
	for (int i = 0; i < api.n; i++)
		gf_free(api.x[i].body);
	gf_free(api.get_pod);
}

/* The exchanges recorded since `from` whose path contains `pod`. */
static int api_find(int from, const char *method, const char *path_has,
		    struct xch *out)
{
	int found = -1;
	pthread_mutex_lock(&api.lock);
	for (int i = from; i < api.n && found < 0; i++)
		if (!strcmp(api.x[i].method, method) &&
		    strstr(api.x[i].path, path_has)) {
			found = i;
			*out = api.x[i];
			out->body =
				gf_strdup(api.x[i].body ? api.x[i].body : "");
		}
	pthread_mutex_unlock(&api.lock);
	return found;
}

static int api_count(void)
{
	pthread_mutex_lock(&api.lock);
	int n = api.n;
	pthread_mutex_unlock(&api.lock);
	return n;
}

#endif
