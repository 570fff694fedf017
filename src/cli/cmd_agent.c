/*
 * cmd_agent.c - `gpufleet agent`: sample NVML every interval into rings,
 * render the Prometheus page once per sample, serve it over HTTP
 * (libmicrohttpd) with /healthz, /v1/gpus and /v1/topology.
 *
 * Threads: the sampler owns the collector; libmicrohttpd's thread serves
 * copies of the last rendered documents, swapped under one mutex
 * (`docs_lock`, the only lock).  The main thread waits for SIGTERM or
 * SIGINT, then stops both and exits 0.
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
#include <time.h>

#include <gpufleet/findings.h>

#include "../telemetry/diagnose.h"
#include "../telemetry/expo.h"
#include "../topo/hwloc_load.h"
#include "../topo/render.h"
#include "../util/mem.h"
#include "cli.h"

#define DOC_CAP (8u << 20)

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

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *sampler(void *arg)
{
	struct agent *a = arg;
	struct gf_buf m, g, d, dt;
	gf_buf_init(&m, DOC_CAP);
	gf_buf_init(&g, DOC_CAP);
	gf_buf_init(&d, DOC_CAP);
	gf_buf_init(&dt, DOC_CAP);
	while (!a->stop) {
		int64_t now = wall_ms();
		gf_collector_sample(&a->col, now);
		gf_buf_reset(&m);
		gf_buf_reset(&g);
		gf_buf_reset(&d);
		gf_buf_reset(&dt);
		gf_expo_render(&a->col, &a->counters, now, &m);
		gf_expo_render_diag(&a->col, &a->diag, &m);
		gf_expo_gpus_json(&a->col, now, &g);
		gf_expo_diag_json(&a->col, &a->diag, &d);
		gf_expo_diag_text(&a->col, &a->diag, &dt);
		pthread_mutex_lock(&a->docs_lock);
		struct gf_buf t = a->metrics;
		a->metrics = m;
		m = t;
		t = a->gpus;
		a->gpus = g;
		g = t;
		t = a->diagnose;
		a->diagnose = d;
		d = t;
		t = a->diagtext;
		a->diagtext = dt;
		dt = t;
		a->last_sample_ms = now;
		pthread_mutex_unlock(&a->docs_lock);
		/* sleep to the next tick, in small steps to stop promptly */
		int64_t next = now + a->interval_ms;
		while (!a->stop && wall_ms() < next) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	gf_buf_release(&m);
	gf_buf_release(&g);
	gf_buf_release(&d);
	gf_buf_release(&dt);
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
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
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
	static const char json[] = "application/json";
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(conn, 405, "text/plain", "method not allowed\n",
			     19);
	enum MHD_Result ret;
	pthread_mutex_lock(&a->docs_lock);
	if (!strcmp(url, "/metrics")) {
		ret = reply(conn, 200,
			    "text/plain; version=0.0.4; charset=utf-8",
			    gf_buf_str(&a->metrics), a->metrics.len);
	} else if (!strcmp(url, "/v1/gpus")) {
		ret = reply(conn, 200, json, gf_buf_str(&a->gpus), a->gpus.len);
	} else if (!strcmp(url, "/v1/diagnose.txt")) {
		ret = reply(conn, 200, "text/plain", gf_buf_str(&a->diagtext),
			    a->diagtext.len);
	} else if (!strcmp(url, "/v1/diagnose")) {
		ret = reply(conn, 200, json, gf_buf_str(&a->diagnose),
			    a->diagnose.len);
	} else if (!strcmp(url, "/v1/topology")) {
		ret = reply(conn, (unsigned)a->topo_status, json,
			    gf_buf_str(&a->topo), a->topo.len);
	} else if (!strcmp(url, "/healthz")) {
		/* healthy while samples keep coming */
		bool ok = wall_ms() - a->last_sample_ms <
			  3 * a->interval_ms + 1000;
		ret = ok ? reply(conn, 200, "text/plain", "ok\n", 3)
			 : reply(conn, 503, "text/plain", "sampling stalled\n",
				 17);
	} else {
		ret = reply(conn, 404, "text/plain", "not found\n", 10);
	}
	pthread_mutex_unlock(&a->docs_lock);
	return ret;
}

static int parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sa->sin_addr) != 1)
		return -1;
	return 0;
}

static long parse_interval(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return -1;
	if (!strcmp(end, "ms"))
		return (long)v;
	if (!strcmp(end, "s") || *end == '\0')
		return (long)(v * 1000);
	return -1;
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
		gf_buf_printf(&a->topo, "{\"error\": \"%s\"}\n", e.msg);
		a->topo_status = 503;
	}
	gf_node_free(n);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet agent [--listen 127.0.0.1:9400] [--interval 1s] "
		"[--counters FILE]\n"
		"\n"
		"Sample every GPU through NVML and serve, on loopback unless told "
		"otherwise:\n"
		"  /metrics       Prometheus text 0.0.4, dcgm-exporter's names, "
		"types and labels,\n"
		"                 then gpufleet_* (GPU up, sample age, NVML "
		"errors,\n"
		"                 NVLink bytes, processes and their owners, "
		"diagnoses)\n"
		"  /healthz       200 while samples keep coming\n"
		"  /v1/gpus       the latest sample of each GPU, JSON\n"
		"  /v1/topology   this node's topology (gpufleet topo --json)\n"
		"  /v1/diagnose   GPUs wasted, and why (gpufleet diagnose)\n"
		"\n"
		"  --listen ADDR:PORT  (default 127.0.0.1:9400)\n"
		"  --interval T        sampling period: 1s, 500ms (default 1s)\n"
		"  --counters FILE     dcgm-exporter counters CSV choosing the "
		"metrics\n"
		"                      (default: its default set; ECC totals "
		"and\n"
		"                      DCGM_FI_PROF_SM_ACTIVE only when listed)\n"
		"  --diag-window T     how far back diagnoses look (default "
		"300s)\n"
		"  --idle-util PCT, --overprov F   diagnosis thresholds (see "
		"gpufleet diagnose -h)\n"
		"SIGTERM or SIGINT stop it cleanly (exit 0).\n");
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
			interval = parse_interval(optarg);
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
			window_ms = parse_interval(optarg);
			if (window_ms < 100) {
				gf_cli_error("agent",
					     "cannot parse '--diag-window %s': "
					     "expected a duration like 300s",
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
	struct sockaddr_in sa;
	if (parse_listen(listen_s, &sa) != 0) {
		gf_cli_error("agent",
			     "cannot parse '--listen %s': expected IPv4:PORT "
			     "like 127.0.0.1:9400",
			     listen_s);
		return GF_EXIT_USAGE;
	}
	struct gf_err e;
	gf_err_clear(&e);
	if (counters) {
		if (gf_counters_read(counters, &a.counters, &e) != 0) {
			gf_cli_error("agent", "%s", e.msg);
			return GF_EXIT_FAIL;
		}
		for (int i = 0; i < a.counters.nskipped; i++)
			fprintf(stderr,
				"gpufleet agent: %s: %s is not collected by "
				"gpufleet; skipped\n",
				counters, a.counters.skipped[i]);
	} else {
		gf_counters_default(&a.counters);
	}
	if (gf_collector_open(&a.col, &e) != 0) {
		gf_cli_error("agent", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	a.interval_ms = interval;
	a.diag.window_s = (double)window_ms / 1e3;
	pthread_mutex_init(&a.docs_lock, NULL);
	gf_buf_init(&a.metrics, DOC_CAP);
	gf_buf_init(&a.gpus, DOC_CAP);
	gf_buf_init(&a.diagnose, DOC_CAP);
	gf_buf_puts(&a.diagnose, "{\"findings\": []}\n");
	gf_buf_init(&a.diagtext, DOC_CAP);
	gf_buf_puts(&a.diagtext, "gpufleet diagnose: no sample yet\n");
	topology_doc(&a);
	/* block the stop signals in every thread; main waits for them */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* a first sample before serving, so /metrics is never empty */
	gf_collector_sample(&a.col, wall_ms());
	gf_expo_render(&a.col, &a.counters, wall_ms(), &a.metrics);
	gf_expo_gpus_json(&a.col, wall_ms(), &a.gpus);
	a.last_sample_ms = wall_ms();
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handle, &a,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
		MHD_OPTION_CONNECTION_LIMIT, 64U, MHD_OPTION_CONNECTION_TIMEOUT,
		10U, MHD_OPTION_END);
	int ret = GF_EXIT_OK;
	if (!d) {
		gf_cli_error("agent", "cannot listen on %s: %s", listen_s,
			     gf_strerror(-errno));
		ret = GF_EXIT_FAIL;
		goto out;
	}
	fprintf(stderr, "gpufleet agent: %d GPUs, serving http://%s/metrics\n",
		a.col.n, listen_s);
	pthread_t tid;
	if (pthread_create(&tid, NULL, sampler, &a) != 0) {
		gf_cli_error("agent", "cannot start the sampling thread");
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
