/*
 * fuzz_http.c - HTTP request handling (src/server).  The request line,
 * headers and query are parsed by libmicrohttpd; what the project adds
 * around it (the path's routing and parameters, query arguments,
 * headers, the bearer token, the JSON body, the refusals of server.c)
 * has no separable parser, so the raw bytes go to a real gf_server on
 * 127.0.0.1 (one per process, started on the first input) over a TCP
 * connection: written whole, the write side shut, the answer read to
 * its end.  The request line's method and path also go straight
 * through the router (gf_http_method_parse, gf_route_match).
 *
 * An answer that never comes is not a crash: the harness gives up after
 * 3 s (a hang is then seen as a slow input by libFuzzer's -timeout).
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "server/router.h"
#include "server/server.h"
#include "util/json.h"
#include "util/log.h"

static int h_echo(struct gf_http_req *r, void *arg)
{
	(void)arg;
	(void)gf_req_method(r);
	(void)gf_req_path(r);
	(void)gf_req_param(r, "id");
	(void)gf_req_param(r, "name");
	(void)gf_req_query(r, "window");
	(void)gf_req_query(r, "team");
	(void)gf_req_query(r, "wait");
	(void)gf_req_header(r, "Content-Type");
	(void)gf_req_header(r, "X-Forwarded-For");
	(void)gf_req_bearer(r);
	(void)gf_req_client(r);
	size_t len = 0;
	(void)gf_req_body(r, &len);
	struct gf_jv *v = NULL;
	if (gf_req_json(r, &v) != 0)
		return 0; /* it answered 400 */
	gf_jv_free(v);
	return gf_reply(r, 200, "text/plain", "ok\n", 3);
}

static const struct gf_route routes[] = {
	{ GF_HTTP_GET | GF_HTTP_POST | GF_HTTP_PUT | GF_HTTP_DELETE, "/v1/jobs",
	  h_echo, 0, NULL },
	{ GF_HTTP_GET | GF_HTTP_DELETE, "/v1/jobs/{id}", h_echo, 0, NULL },
	{ GF_HTTP_PUT | GF_HTTP_GET, "/v1/nodes/{name}", h_echo, 0, NULL },
	{ GF_HTTP_POST, "/v1/nodes/{name}/heartbeat", h_echo, 4096, NULL },
	{ GF_HTTP_GET, "/metrics", h_echo, 0, NULL },
};
#define NROUTES ((int)(sizeof(routes) / sizeof(routes[0])))

static struct gf_server *srv;
static struct gf_server_opts opts = {
	.name = "fuzz",
	.listen = "127.0.0.1:0",
	.idle_timeout_s = 2,
};

static void stop_server(void)
{
	if (srv)
		gf_server_stop(srv);
	srv = NULL;
}

static void start_server(void)
{
	struct gf_err e = { 0 };
	gf_log_set_level(GF_LOG_ERROR);
	if (gf_server_start(&srv, routes, NROUTES, &opts, &e) != 0) {
		fprintf(stderr, "fuzz_http: %s\n", e.msg);
		abort();
	}
	atexit(stop_server);
}

/* The router on the request line's method and path. */
static void route_line(const uint8_t *data, size_t size)
{
	char line[GF_HTTP_PATH_MAX + 64];
	size_t n = 0;
	while (n < size && n < sizeof(line) - 1 && data[n] != '\r' &&
	       data[n] != '\n')
		n++;
	memcpy(line, data, n);
	line[n] = '\0';
	char *sp = strchr(line, ' ');
	if (sp == NULL)
		return;
	*sp = '\0';
	char *path = sp + 1;
	path[strcspn(path, " ?")] = '\0';
	struct gf_route_match m;
	char buf[GF_HTTP_PATH_MAX];
	gf_route_match(routes, NROUTES, gf_http_method_parse(line), path, buf,
		       sizeof(buf), &m);
	if (m.status == 0)
		(void)gf_route_param(&m, "id");
}

static void send_all(int fd, const uint8_t *data, size_t size)
{
	while (size > 0) {
		ssize_t w = send(fd, data, size, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the server closed: it refused the request */
		data += w;
		size -= (size_t)w;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (srv == NULL)
		start_server();
	route_line(data, size);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		abort();
	struct sockaddr_in sa = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)gf_server_port(srv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		abort();
	send_all(fd, data, size);
	shutdown(fd, SHUT_WR);
	char buf[4096];
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int pr = poll(&p, 1, 3000);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
	}
	close(fd);
	return 0;
}
