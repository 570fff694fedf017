/*
 * cmd_agent.c - `gpufleet agent`: options and output around the agent
 * service (src/telemetry/agent.h: sampler, documents, routes), which
 * serves through src/server/, and, with --controller, the node's link to
 * the controller (agent_join.c).  The main thread blocks SIGTERM and
 * SIGINT before any thread starts, waits for one, then stops the link
 * (jobs keep running) and the service (requests in flight finish) and
 * exits 0.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent_join.h"
#include "cli/cli.h"
#include "server/server.h"
#include "agent/agent.h"
#include "telemetry/collect.h"
#include "util/log.h"

/* What the command line asks for. */
struct agent_args {
	struct gf_agent_opts o;
	struct gf_node_opts topo;
	struct gf_counters counters;
	const char *counters_file;
	const char *interval_arg, *window_arg;
	struct gf_agent_join_args join;
};

static void usage(FILE *f)
{
	const struct gf_route *r;
	int n = gf_agent_routes(&r);
	fprintf(f,
		"usage: gpufleet agent [--listen 127.0.0.1:9400] [--interval 1s]\n"
		"                      [--counters FILE] [--diag-window 300s]\n"
		"                      [--idle-util PCT] [--overprov F]\n"
		"                      [--xid-quiet 300s] [--max-conns N]\n"
		"                      [--max-conns-per-client N]\n"
		"                      [--xml FILE | --nccl-xml FILE | "
		"--template NAME]\n"
		"                      [--nvml | --no-nvml]\n"
		"                      [--controller URL [--name NODE] "
		"[--token-file F]\n"
		"                       [--label k=v]... [--block NAME] "
		"[--state-dir DIR]\n"
		"                       [--address HOST] [--kill-grace 10s]]\n"
		"\n"
		"Sample every GPU through NVML and serve over HTTP (GET and "
		"HEAD):\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "  %-17s %s\n", r[i].pattern, r[i].help);
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
		"  --xid-quiet T       a GPU that raised a transient Xid is "
		"healthy again after\n"
		"                      T without another one (default 300s); "
		"Xids that need\n"
		"                      a GPU reset never recover by time\n" GF_CLI_CONN_HELP
		"  --idle-util PCT     diagnosis thresholds, as in gpufleet "
		"diagnose -h\n"
		"  --overprov F\n"
		"  --xml, --nccl-xml, --template, --nvml, --no-nvml\n"
		"                      where /v1/topology's node comes from, "
		"as in gpufleet\n"
		"                      topo -h (default: this machine, NVML "
		"joined)\n"
		"\n"
		"Joining a controller (gpufleet serve --agents): the node "
		"registers, heartbeats,\n"
		"and runs the jobs placed on it, bound to their GPUs' CPUs, "
		"memory and NIC.\n"
		"  --controller URL    the controller: HOST[:PORT], "
		"http://HOST:PORT or\n"
		"                      https://HOST:PORT (port 9500)\n"
		"  --name NODE         this node's name (default: the host "
		"name)\n"
		"  --token-file F      a 'TOKEN node:NODE' line (the "
		"controller's token format)\n"
		"  --ca FILE           with https://: the CA that signed the "
		"controller's\n"
		"                      certificate (default: the system's)\n"
		"  --insecure-http     send the token over http:// to a "
		"controller that is not\n"
		"                      loopback (refused without it)\n"
		"  --label k=v         a label (repeat it); jobs select nodes "
		"by them\n"
		"  --block NAME        the block a gang stays inside (an "
		"NVLink domain, an IB\n"
		"                      leaf); or --label gpufleet.io/block=NAME\n"
		"  --state-dir DIR     jobs' records and logs (default "
		"gpufleet-agent-state)\n"
		"  --address HOST      how other nodes reach this one (a "
		"gang's MASTER_ADDR;\n"
		"                      default: the --listen address, else the "
		"name)\n"
		"  --kill-grace T      SIGTERM to SIGKILL when a job is "
		"stopped (default 10s)\n"
		"  --xml FILE --this-system   a recording of this machine: "
		"jobs are bound\n"
		"\n"
		"Diagnoses read only the metrics the page exports, and say "
		"which.\n"
		"SIGTERM or SIGINT stop it cleanly (exit 0).  "
		"GPUFLEET_LOG=debug logs each\n"
		"sample's time, each request served and the metrics read.\n" GF_CLI_EXIT_HELP,
		GF_RING_MAX, (unsigned)GF_SERVER_CONNECTIONS,
		(unsigned)GF_SERVER_PER_CLIENT);
}

/* The ring the diagnosis window needs, said when it cannot be had. */
static int ring_size(const struct agent_args *g)
{
	const struct gf_agent_opts *o = &g->o;
	long need = gf_collector_ring_for(o->diag.window_s, o->interval_ms);
	if (o->diag.window_s * 1e3 < (double)o->interval_ms)
		gf_cli_error("agent",
			     "warning: '--diag-window %s' is shorter than "
			     "'--interval %s': no GPU will be judged",
			     g->window_arg, g->interval_arg);
	else if (need > GF_RING_MAX)
		gf_cli_error("agent",
			     "warning: '--diag-window %s' needs %ld samples "
			     "per GPU at '--interval %s', more than the ring "
			     "holds (%d, %.0f s): no GPU will be judged; "
			     "lengthen --interval or shorten --diag-window",
			     g->window_arg, need, g->interval_arg, GF_RING_MAX,
			     (double)(GF_RING_MAX - 1) *
				     (double)o->interval_ms / 1e3);
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

/* One option (getopt's c); 0, or an exit code. */
static int agent_option(int c, struct agent_args *g, char **argv)
{
	long ms;
	bool bad = false;
	switch (c) {
	case 'l':
		g->o.listen = optarg;
		return 0;
	case 'i':
		g->interval_arg = optarg;
		g->o.interval_ms = gf_diag_parse_duration(optarg);
		if (g->o.interval_ms >= 10 && g->o.interval_ms <= 3600000)
			return 0;
		gf_cli_error("agent",
			     "cannot parse '--interval %s': expected 10ms to "
			     "1h, like 1s",
			     optarg);
		return GF_EXIT_USAGE;
	case 'c':
		g->counters_file = optarg;
		return 0;
	case 'q':
		g->o.xid_quiet_ms = gf_diag_parse_duration(optarg);
		if (g->o.xid_quiet_ms >= 1000 &&
		    g->o.xid_quiet_ms <= 168 * 3600000L)
			return 0;
		gf_cli_error("agent",
			     "cannot parse '--xid-quiet %s': expected 1s to "
			     "168h, like 300s",
			     optarg);
		return GF_EXIT_USAGE;
	case 'w':
		g->window_arg = optarg;
		ms = gf_diag_parse_duration(optarg);
		g->o.diag.window_s = (double)ms / 1e3;
		if (ms >= 100)
			return 0;
		gf_cli_error("agent",
			     "cannot parse '--diag-window %s': expected a "
			     "duration of 100ms or more, like 300s",
			     optarg);
		return GF_EXIT_USAGE;
	default:
		if (gf_cli_node_option(c, optarg, &g->topo))
			return 0;
		int rc = 0;
		if (gf_agent_join_option(c, optarg, &g->join, &rc))
			return rc;
		if (gf_cli_diag_option("agent", c, optarg, &g->o.diag, &bad) ||
		    gf_cli_conn_option("agent", c, optarg,
				       &g->o.max_connections,
				       &g->o.max_per_client, &bad))
			return bad ? GF_EXIT_USAGE : 0;
		return gf_cli_bad_option("agent", argv);
	}
}

/* Options into g; 0, or an exit code (-h: GF_EXIT_OK with *done). */
static int parse_args(int argc, char **argv, struct agent_args *g, bool *done)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "counters", required_argument, NULL, 'c' },
		{ "diag-window", required_argument, NULL, 'w' },
		{ "xid-quiet", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		GF_CLI_DIAG_OPTIONS,
		GF_CLI_CONN_OPTIONS,
		GF_CLI_NODE_OPTIONS,
		GF_AGENT_JOIN_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			*done = true;
			return GF_EXIT_OK;
		}
		if ((rc = agent_option(c, g, argv)) != 0)
			return rc;
	}
	if (optind < argc) {
		gf_cli_error("agent",
			     "unexpected argument '%s' (see 'gpufleet agent "
			     "-h')",
			     argv[optind]);
		return GF_EXIT_USAGE;
	}
	const char *why = gf_server_listen_check(g->o.listen);
	if (why) {
		gf_cli_error("agent", "cannot parse '--listen %s': %s",
			     g->o.listen, why);
		return GF_EXIT_USAGE;
	}
	if ((rc = gf_agent_join_check(&g->join, g->o.listen)) != 0)
		return rc;
	return gf_cli_node_check(&g->topo);
}

/* The counters file, or dcgm-exporter's default set; 0 or an exit code. */
static int read_counters(struct agent_args *g)
{
	struct gf_err e;
	gf_err_clear(&e);
	if (!g->counters_file) {
		gf_counters_default(&g->counters);
	} else if (gf_counters_read(g->counters_file, &g->counters, &e) != 0) {
		gf_cli_error("agent", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	for (int i = 0; i < g->counters.nskipped; i++)
		gf_cli_error("agent",
			     "%s:%d: %s is not collected by gpufleet; skipped",
			     g->counters_file, g->counters.skipped_line[i],
			     g->counters.skipped[i]);
	log_counters(&g->counters, g->counters_file);
	g->o.counters = &g->counters;
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	static struct agent_args g;
	memset(&g, 0, sizeof(g));
	g.o.listen = "127.0.0.1:9400";
	g.o.interval_ms = 1000;
	g.interval_arg = "1s";
	g.window_arg = "300s";
	gf_diag_defaults(&g.o.diag);
	g.o.diag.window_s = 300;
	g.topo.cmd = "agent";
	g.topo.src.nvml = -1;
	gf_agent_join_defaults(&g.join);
	bool done = false;
	int rc = parse_args(argc, argv, &g, &done);
	if (rc || done)
		return rc;
	g.o.ring = ring_size(&g);
	if ((rc = read_counters(&g)) != 0)
		return rc;
	g.o.topo = g.topo.src;
	/* block the stop signals in every thread to come; main waits */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	struct gf_agent *a;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_agent_start(&a, &g.o, &e) != 0) {
		gf_cli_error("agent", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	const char *url = gf_agent_url(a);
	fprintf(stderr, "gpufleet agent: %d GPUs, listening on %s%s\n",
		gf_agent_gpus(a), url,
		strncmp(url, "http://0.0.0.0:", 15) == 0 ? " (every interface)"
							 : "");
	if ((rc = gf_agent_join_start(&g.join, &g.topo, a, GPUFLEET_VERSION)) !=
	    0) {
		gf_agent_stop(a);
		return rc;
	}
	int sig;
	sigwait(&set, &sig);
	fprintf(stderr, "gpufleet agent: %s, stopping\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT");
	gf_agent_join_stop(&g.join);
	gf_agent_stop(a);
	return GF_EXIT_OK;
}
