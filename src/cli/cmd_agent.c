/*
 * cmd_agent.c - `gpufleet agent`: sample NVML every interval into rings,
 * render the documents once per sample, serve them over HTTP
 * (libmicrohttpd) on the routes of the table below.
 *
 * Threads: the sampler owns the collector; libmicrohttpd's thread serves
 * copies of the last rendered documents, swapped under one mutex
 * (`docs_lock`, the only lock).  The main thread waits for SIGTERM or
 * SIGINT, then stops both and exits 0.
 *
 * The listening socket is ours (bound before libmicrohttpd starts), so a
 * bind error names its cause and port 0 lets the kernel choose: the
 * address bound is printed at start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/findings.h>

#include "cli/cli.h"
#include "telemetry/diagnose.h"
#include "telemetry/expo.h"
#include "topo/hwloc_load.h"
#include "topo/render.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

#define DOC_CAP (8u << 20)

enum route_id { R_METRICS, R_HEALTHZ, R_GPUS, R_TOPO, R_DIAG, R_DIAG_TXT, NR };

/* Every route served, and its line in -h. */
static const struct {
	const char *path;
	const char *help;
} routes[NR] = {
	[R_METRICS] = { "/metrics",
			"Prometheus text 0.0.4, dcgm-exporter's names, types "
			"and\n"
			"                    labels, then gpufleet_* (GPU up, sample age, "
			"NVML\n"
			"                    errors, NVLink bytes, processes and "
			"their owners,\n"
			"                    diagnoses)" },
	[R_HEALTHZ] = { "/healthz",
			"200 while samples keep coming, 503 once they stall" },
	[R_GPUS] = { "/v1/gpus",
		     "the latest sample of each GPU and MIG instance, JSON" },
	[R_TOPO] = { "/v1/topology",
		     "this node's topology (gpufleet topo --json)" },
	[R_DIAG] = { "/v1/diagnose",
		     "GPUs wasted, and why, JSON (gpufleet diagnose --json)" },
	[R_DIAG_TXT] = { "/v1/diagnose.txt",
			 "the same as text (gpufleet diagnose)" },
};

struct agent {
	struct gf_collector col;
	struct gf_counters counters;
	long interval_ms;
	pthread_mutex_t docs_lock;
	struct gf_diag_opts diag;
	struct gf_buf metrics, gpus, topo, diagnose, diagtext; /* docs_lock */
	int topo_status;
	int64_t last_sample_ms; /* under docs_lock */
	volatile sig_atomic_t stop;
};

/* The documents of one sample, rendered before they are swapped in. */
struct docs {
	struct gf_buf m, g, d, dt;
};

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void docs_init(struct docs *x)
{
	gf_buf_init(&x->m, DOC_CAP);
	gf_buf_init(&x->g, DOC_CAP);
	gf_buf_init(&x->d, DOC_CAP);
	gf_buf_init(&x->dt, DOC_CAP);
}

static void docs_release(struct docs *x)
{
	gf_buf_release(&x->m);
	gf_buf_release(&x->g);
	gf_buf_release(&x->d);
	gf_buf_release(&x->dt);
}

static void swap(struct gf_buf *a, struct gf_buf *b)
{
	struct gf_buf t = *a;
	*a = *b;
	*b = t;
}

/* Sample, render every document into x, and swap them in (x gets the
 * old ones back, to reuse). */
static void sample_once(struct agent *a, struct docs *x)
{
	int64_t now = wall_ms();
	double t0 = mono_ms();
	gf_collector_sample(&a->col, now);
	double t1 = mono_ms();
	gf_buf_reset(&x->m);
	gf_buf_reset(&x->g);
	gf_buf_reset(&x->d);
	gf_buf_reset(&x->dt);
	struct gf_diag_verdict *v;
	int nv = gf_expo_judge(&a->col, &a->counters, &a->diag, &v);
	gf_expo_render(&a->col, &a->counters, now, &x->m);
	gf_expo_render_diag(v, nv, &x->m);
	gf_expo_gpus_json(&a->col, now, &x->g);
	gf_diag_report_json(v, nv, a->diag.window_s, &x->d);
	gf_expo_diag_text(&a->col, v, nv, a->diag.window_s, &x->dt);
	gf_free(v);
	double t2 = mono_ms();
	size_t len = x->m.len;
	/* a document that outgrew its cap is not served cut: the last
	 * whole one stays */
	struct gf_buf *doc[4] = { &a->metrics, &a->gpus, &a->diagnose,
				  &a->diagtext },
		      *fresh[4] = { &x->m, &x->g, &x->d, &x->dt };
	pthread_mutex_lock(&a->docs_lock);
	for (int i = 0; i < 4; i++)
		if (gf_buf_error(fresh[i]) == 0)
			swap(doc[i], fresh[i]);
	a->last_sample_ms = now;
	pthread_mutex_unlock(&a->docs_lock);
	for (int i = 0; i < 4; i++)
		if (gf_buf_error(fresh[i]) != 0)
			gf_log(GF_LOG_ERROR, "agent",
			       "sample %llu: a document passed %u MiB; the "
			       "last whole one is served",
			       (unsigned long long)a->col.samples,
			       DOC_CAP >> 20);
	gf_log(GF_LOG_DEBUG, "agent",
	       "sample %llu: %d GPUs in %.3f ms (%.3f ms CPU), documents "
	       "rendered in %.3f ms (/metrics %zu bytes)",
	       (unsigned long long)a->col.samples, a->col.n, t1 - t0,
	       a->col.cpu_ms_last, t2 - t1, len);
}

static void *sampler(void *arg)
{
	struct agent *a = arg;
	struct docs x;
	docs_init(&x);
	/* the first sample was taken before serving */
	int64_t next = a->last_sample_ms + a->interval_ms;
	for (;;) {
		/* sleep to the next tick, in small steps to stop promptly */
		while (!a->stop && wall_ms() < next) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		if (a->stop)
			break;
		next = wall_ms() + a->interval_ms;
		sample_once(a, &x);
	}
	docs_release(&x);
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *type, const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	if (status == 405)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static void log_request(struct MHD_Connection *conn, const char *method,
			const char *url, unsigned status, size_t len)
{
	if (gf_log_get_level() < GF_LOG_DEBUG)
		return;
	char from[INET_ADDRSTRLEN + 8] = "?";
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET) {
		const struct sockaddr_in *in =
			(const struct sockaddr_in *)(const void *)
				ci->client_addr;
		char ip[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(from, sizeof(from), "%s:%u", ip, ntohs(in->sin_port));
	}
	gf_log(GF_LOG_DEBUG, "agent", "%s %s from %s: %u, %zu bytes", method,
	       url, from, status, len);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **ctx)
{
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)ctx;
	struct agent *a = cls;
	static const char json[] = "application/json",
			  text[] = "text/plain; charset=utf-8";
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		log_request(conn, method, url, 405, 19);
		return reply(conn, 405, text, "method not allowed\n", 19);
	}
	int r = 0;
	while (r < NR && strcmp(url, routes[r].path) != 0)
		r++;
	unsigned status = 200;
	const char *type = json;
	const struct gf_buf *doc = NULL;
	enum MHD_Result ret;
	pthread_mutex_lock(&a->docs_lock);
	switch (r) {
	case R_METRICS:
		type = "text/plain; version=0.0.4; charset=utf-8";
		doc = &a->metrics;
		break;
	case R_GPUS:
		doc = &a->gpus;
		break;
	case R_DIAG_TXT:
		type = text;
		doc = &a->diagtext;
		break;
	case R_DIAG:
		doc = &a->diagnose;
		break;
	case R_TOPO:
		status = (unsigned)a->topo_status;
		doc = &a->topo;
		break;
	default:
		break;
	}
	const char *body;
	size_t len;
	if (doc) {
		body = gf_buf_str(doc);
		len = doc->len;
	} else if (r == R_HEALTHZ &&
		   wall_ms() - a->last_sample_ms < 3 * a->interval_ms + 1000) {
		body = "ok\n";
		len = 3;
	} else if (r == R_HEALTHZ) {
		status = 503;
		body = "sampling stalled\n";
		len = 17;
	} else {
		status = 404;
		body = "not found (routes: gpufleet agent -h)\n";
		len = strlen(body);
	}
	if (!doc)
		type = text;
	ret = reply(conn, status, type, body, len);
	pthread_mutex_unlock(&a->docs_lock);
	log_request(conn, method, url, status, len);
	return ret;
}

/*
 * "HOST:PORT": an IPv4 address (0.0.0.0 for every interface, said so) and
 * a port, 0 for one the kernel picks.  NULL, or what is wrong.
 */
static const char *parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
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

/* A socket bound to sa and listening; its address in *bound.  The fd,
 * or -errno. */
static int listen_on(const struct sockaddr_in *sa, struct sockaddr_in *bound)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	socklen_t len = sizeof(*bound);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 ||
	    listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)bound, &len) != 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static void topology_doc(struct agent *a)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	struct gf_topo_source src = { .xml_path = NULL };
	gf_buf_init(&a->topo, DOC_CAP);
	if (gf_topo_load(n, &src, &e) == 0) {
		struct gf_finding f[GF_MAX_FINDINGS];
		int nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
		gf_render_topo_json(n, false, f, nf, &a->topo);
		a->topo_status = 200;
	} else {
		struct gf_json j;
		gf_json_init(&j, &a->topo);
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "error", e.msg);
		gf_json_obj_end(&j);
		a->topo_status = 503;
	}
	gf_node_free(n);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet agent [--listen 127.0.0.1:9400] [--interval 1s]\n"
		"                      [--counters FILE] [--diag-window 300s]\n"
		"                      [--idle-util PCT] [--overprov F]\n"
		"\n"
		"Sample every GPU through NVML and serve over HTTP:\n");
	for (int r = 0; r < NR; r++)
		fprintf(f, "  %-17s %s\n", routes[r].path, routes[r].help);
	fprintf(f,
		"\n"
		"  --listen ADDR:PORT  IPv4 address and port (default "
		"127.0.0.1:9400, loopback);\n"
		"                      0.0.0.0:PORT serves every interface, "
		"port 0 any free\n"
		"                      port (the address bound is printed); "
		"':PORT' is an error\n"
		"  --interval T        sampling period: 1s, 500ms (default 1s)\n"
		"  --counters FILE     dcgm-exporter counters CSV choosing the "
		"metrics\n"
		"                      (default: its default set; ECC totals "
		"and\n"
		"                      DCGM_FI_PROF_SM_ACTIVE only when listed)\n"
		"  --diag-window T     how far back diagnoses look (default "
		"300s); the ring\n"
		"                      keeps that much history, up to %d "
		"samples per GPU\n"
		"  --idle-util PCT     diagnosis thresholds, as in gpufleet "
		"diagnose -h\n"
		"  --overprov F\n"
		"\n"
		"Diagnoses read only the metrics the page exports, and say "
		"which.\n"
		"SIGTERM or SIGINT stop it cleanly (exit 0).  "
		"GPUFLEET_LOG=debug logs each\n"
		"sample's time, each request served and the metrics read.\n" GF_CLI_EXIT_HELP,
		GF_RING_MAX);
}

/* The ring the diagnosis window needs, said when it cannot be had. */
static int ring_size(const struct agent *a, const char *window_arg,
		     const char *interval_arg)
{
	long need = gf_collector_ring_for(a->diag.window_s, a->interval_ms);
	if (a->diag.window_s * 1e3 < (double)a->interval_ms)
		gf_cli_error("agent",
			     "warning: '--diag-window %s' is shorter than "
			     "'--interval %s': no GPU will be judged",
			     window_arg, interval_arg);
	else if (need > GF_RING_MAX)
		gf_cli_error("agent",
			     "warning: '--diag-window %s' needs %ld samples "
			     "per GPU at '--interval %s', more than the ring "
			     "holds (%d, %.0f s): no GPU will be judged; "
			     "lengthen --interval or shorten --diag-window",
			     window_arg, need, interval_arg, GF_RING_MAX,
			     (double)(GF_RING_MAX - 1) *
				     (double)a->interval_ms / 1e3);
	return need > GF_RING_MAX ? GF_RING_MAX : (int)need;
}

static void log_counters(const struct gf_counters *k, const char *file)
{
	for (int i = 0; i < k->n; i++) {
		const struct gf_metric_def *d = gf_metric_def(k->order[i]);
		gf_log(GF_LOG_DEBUG, "agent", "exporting %s (%s) from %s",
		       d->name, d->type,
		       file ? file : "dcgm-exporter's default set");
	}
}

int cmd_agent(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "counters", required_argument, NULL, 'c' },
		{ "diag-window", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		GF_CLI_DIAG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	static struct agent a;
	const char *listen_s = "127.0.0.1:9400", *counters = NULL;
	const char *interval_arg = "1s", *window_arg = "300s";
	long interval = 1000, window_ms = 300000;
	bool bad = false;
	gf_diag_defaults(&a.diag);
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_s = optarg;
			break;
		case 'i':
			interval_arg = optarg;
			interval = gf_diag_parse_duration(optarg);
			if (interval < 10 || interval > 3600000) {
				gf_cli_error("agent",
					     "cannot parse '--interval %s': "
					     "expected 10ms to 1h, like 1s",
					     optarg);
				return GF_EXIT_USAGE;
			}
			break;
		case 'c':
			counters = optarg;
			break;
		case 'w':
			window_arg = optarg;
			window_ms = gf_diag_parse_duration(optarg);
			if (window_ms < 100) {
				gf_cli_error("agent",
					     "cannot parse '--diag-window %s': "
					     "expected a duration of 100ms or "
					     "more, like 300s",
					     optarg);
				return GF_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			if (gf_cli_diag_option("agent", c, optarg, &a.diag,
					       &bad)) {
				if (bad)
					return GF_EXIT_USAGE;
				break;
			}
			return gf_cli_bad_option("agent", argv);
		}
	}
	if (optind < argc) {
		gf_cli_error("agent",
			     "unexpected argument '%s' (see 'gpufleet agent "
			     "-h')",
			     argv[optind]);
		return GF_EXIT_USAGE;
	}
	struct sockaddr_in sa, bound;
	const char *why = parse_listen(listen_s, &sa);
	if (why) {
		gf_cli_error("agent", "cannot parse '--listen %s': %s",
			     listen_s, why);
		return GF_EXIT_USAGE;
	}
	a.interval_ms = interval;
	a.diag.window_s = (double)window_ms / 1e3;
	int ring = ring_size(&a, window_arg, interval_arg);
	struct gf_err e;
	gf_err_clear(&e);
	if (counters) {
		if (gf_counters_read(counters, &a.counters, &e) != 0) {
			gf_cli_error("agent", "%s", e.msg);
			return GF_EXIT_FAIL;
		}
		for (int i = 0; i < a.counters.nskipped; i++)
			gf_cli_error("agent",
				     "%s:%d: %s is not collected by gpufleet; "
				     "skipped",
				     counters, a.counters.skipped_line[i],
				     a.counters.skipped[i]);
	} else {
		gf_counters_default(&a.counters);
	}
	log_counters(&a.counters, counters);
	if (gf_collector_open(&a.col, ring, &e) != 0) {
		gf_cli_error("agent", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	int fd = listen_on(&sa, &bound);
	if (fd < 0) {
		gf_cli_error("agent", "cannot listen on '--listen %s': %s",
			     listen_s, gf_strerror(fd));
		gf_collector_close(&a.col);
		return GF_EXIT_FAIL;
	}
	pthread_mutex_init(&a.docs_lock, NULL);
	gf_buf_init(&a.metrics, DOC_CAP);
	gf_buf_init(&a.gpus, DOC_CAP);
	gf_buf_init(&a.diagnose, DOC_CAP);
	gf_buf_init(&a.diagtext, DOC_CAP);
	topology_doc(&a);
	/* block the stop signals in every thread; main waits for them */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* a first sample before serving: no document is ever empty */
	struct docs x;
	docs_init(&x);
	sample_once(&a, &x);
	docs_release(&x);
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handle, &a,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, 64U,
		MHD_OPTION_CONNECTION_TIMEOUT, 10U, MHD_OPTION_END);
	int ret = GF_EXIT_OK;
	if (!d) {
		gf_cli_error("agent",
			     "cannot start the HTTP server on '--listen %s' "
			     "(libmicrohttpd refused its options)",
			     listen_s);
		close(fd);
		ret = GF_EXIT_FAIL;
		goto out;
	}
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &bound.sin_addr, ip, sizeof(ip));
	fprintf(stderr,
		"gpufleet agent: %d GPUs, listening on http://%s:%u/%s\n",
		a.col.n, ip, ntohs(bound.sin_port),
		bound.sin_addr.s_addr == htonl(INADDR_ANY)
			? " (every interface)"
			: "");
	pthread_t tid;
	int err = pthread_create(&tid, NULL, sampler, &a);
	if (err != 0) {
		gf_cli_error("agent", "cannot start the sampling thread: %s",
			     gf_strerror(-err));
		MHD_stop_daemon(d);
		ret = GF_EXIT_FAIL;
		goto out;
	}
	int sig;
	sigwait(&set, &sig);
	fprintf(stderr, "gpufleet agent: %s, stopping\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT");
	a.stop = 1;
	pthread_join(tid, NULL);
	MHD_stop_daemon(d);
out:
	gf_collector_close(&a.col);
	gf_buf_release(&a.metrics);
	gf_buf_release(&a.gpus);
	gf_buf_release(&a.topo);
	gf_buf_release(&a.diagnose);
	gf_buf_release(&a.diagtext);
	pthread_mutex_destroy(&a.docs_lock);
	return ret;
}
