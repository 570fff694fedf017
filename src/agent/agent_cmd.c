/*
 * agent_cmd.c - `gpufleet agent` below the command line (agent_cmd.h):
 * its own options, then the run around the agent service (agent.h:
 * sampler, documents, routes), which serves through src/server/, and,
 * with --controller, the node's link to the controller (agent_join.c).
 * The caller has blocked SIGTERM and SIGINT before any thread starts; the
 * main thread waits for one, then stops the link (jobs keep running) and the
 * service (requests in flight finish) and returns 0.
 */
#include "agent/agent_cmd.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "server/server.h"
#include "telemetry/collect.h"
#include "util/log.h"

/* The ring the diagnosis window needs, said when it cannot be had. */
static int ring_size(const struct gf_agent_cmd *g)
{
	const struct gf_agent_opts *o = &g->o;
	long need = gf_collector_ring_for(o->diag.window_s, o->interval_ms);
	if (o->diag.window_s * 1e3 < (double)o->interval_ms)
		gf_agent_say("warning: '--diag-window %s' is shorter than "
			     "'--interval %s': no GPU will be judged",
			     g->window_arg, g->interval_arg);
	else if (need > GF_RING_MAX)
		gf_agent_say("warning: '--diag-window %s' needs %ld samples "
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

int gf_agent_cmd_option(int c, const char *arg, struct gf_agent_cmd *g)
{
	long ms;
	switch (c) {
	case 'i':
		g->interval_arg = arg;
		g->o.interval_ms = gf_diag_parse_duration(arg);
		if (g->o.interval_ms >= 10 && g->o.interval_ms <= 3600000)
			return 0;
		gf_agent_say("cannot parse '--interval %s': expected 10ms to "
			     "1h, like 1s",
			     arg);
		return GF_AGENT_EXIT_USAGE;
	case 'q':
		g->o.xid_quiet_ms = gf_diag_parse_duration(arg);
		if (g->o.xid_quiet_ms >= 1000 &&
		    g->o.xid_quiet_ms <= 168 * 3600000L)
			return 0;
		gf_agent_say("cannot parse '--xid-quiet %s': expected 1s to "
			     "168h, like 300s",
			     arg);
		return GF_AGENT_EXIT_USAGE;
	case 'w':
		g->window_arg = arg;
		ms = gf_diag_parse_duration(arg);
		g->o.diag.window_s = (double)ms / 1e3;
		if (ms >= 100)
			return 0;
		gf_agent_say("cannot parse '--diag-window %s': expected a "
			     "duration of 100ms or more, like 300s",
			     arg);
		return GF_AGENT_EXIT_USAGE;
	default: {
		int rc = 0;
		if (gf_agent_join_option(c, arg, &g->join, &rc))
			return rc;
		return -1;
	}
	}
}

int gf_agent_cmd_check(struct gf_agent_cmd *g)
{
	const char *why = gf_server_listen_check(g->o.listen);
	if (why) {
		gf_agent_say("cannot parse '--listen %s': %s", g->o.listen,
			     why);
		return GF_AGENT_EXIT_USAGE;
	}
	return gf_agent_join_check(&g->join, g->o.listen);
}

/* The counters file, or dcgm-exporter's default set; 0 or an exit code. */
static int read_counters(struct gf_agent_cmd *g)
{
	struct gf_err e;
	gf_err_clear(&e);
	if (!g->counters_file) {
		gf_counters_default(&g->counters);
	} else if (gf_counters_read(g->counters_file, &g->counters, &e) != 0) {
		gf_agent_say("%s", e.msg);
		return GF_AGENT_EXIT_FAIL;
	}
	for (int i = 0; i < g->counters.nskipped; i++)
		gf_agent_say("%s:%d: %s is not collected by gpufleet; skipped",
			     g->counters_file, g->counters.skipped_line[i],
			     g->counters.skipped[i]);
	log_counters(&g->counters, g->counters_file);
	g->o.counters = &g->counters;
	return 0;
}

void gf_agent_cmd_defaults(struct gf_agent_cmd *g)
{
	memset(g, 0, sizeof(*g));
	g->o.listen = "127.0.0.1:9400";
	g->o.interval_ms = 1000;
	g->interval_arg = "1s";
	g->window_arg = "300s";
	gf_diag_defaults(&g->o.diag);
	g->o.diag.window_s = 300;
	g->o.topo.nvml = -1;
	gf_agent_join_defaults(&g->join);
}

int gf_agent_cmd_run(struct gf_agent_cmd *g, const char *version,
		     const sigset_t *stop)
{
	int rc;
	g->o.ring = ring_size(g);
	if ((rc = read_counters(g)) != 0)
		return rc;
	/* this machine without NVML is a CPU node: asked (--no-nvml), or
	 * found so when joining (a recording or template keeps NVML) */
	const struct gf_node_source *src = &g->o.topo;
	bool live = !src->xml && !src->nccl_xml && !src->template_name;
	g->o.cpu_node = live && src->nvml == 0;
	g->o.cpu_fallback = live && g->join.controller[0];
	struct gf_agent *a;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_agent_start(&a, &g->o, &e) != 0) {
		gf_agent_say("%s", e.msg);
		return GF_AGENT_EXIT_FAIL;
	}
	const char *url = gf_agent_url(a);
	const char *cpu = gf_agent_cpu_node(a);
	if (cpu)
		gf_agent_say("%s: running as a CPU node (no GPU, no DCGM "
			     "metrics; jobs without GPUs)",
			     cpu);
	fprintf(stderr, "gpufleet agent: %d GPUs, listening on %s%s\n",
		gf_agent_gpus(a), url,
		strncmp(url, "http://0.0.0.0:", 15) == 0 ? " (every interface)"
							 : "");
	if ((rc = gf_agent_join_start(&g->join, &g->o.topo, a, version)) != 0) {
		gf_agent_stop(a);
		return rc;
	}
	int sig;
	sigwait(stop, &sig);
	fprintf(stderr, "gpufleet agent: %s, stopping\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT");
	gf_agent_join_stop(&g->join);
	gf_agent_stop(a);
	return GF_AGENT_EXIT_OK;
}
