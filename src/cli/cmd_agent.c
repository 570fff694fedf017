/*
 * cmd_agent.c - `gpufleet agent`: the command line around the node agent
 * (src/agent/agent_cmd.h): usage, the options every command shares (node
 * source, diagnosis thresholds, connection limits), and the dispatch of
 * the agent's own options and its run.
 */
#include <stdio.h>

#include "agent/agent_cmd.h"
#include "cli/cli.h"
#include "server/server.h"

_Static_assert((int)GF_AGENT_EXIT_OK == (int)GF_EXIT_OK &&
		       (int)GF_AGENT_EXIT_FAIL == (int)GF_EXIT_FAIL &&
		       (int)GF_AGENT_EXIT_USAGE == (int)GF_EXIT_USAGE,
	       "the agent's exit codes are the commands'");

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
		"joined); --no-nvml\n"
		"                      on this machine: a CPU node (no GPU, "
		"no DCGM metrics),\n"
		"                      as is a joining node where NVML is not "
		"found\n"
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
		"  --one-connection    one connection to the controller, not "
		"two: no long poll;\n"
		"                      assignments arrive up to a heartbeat "
		"late (1 s)\n"
		"  --default-user LOGIN   who a job without a user (its "
		"token names none)\n"
		"                      runs as; default: the agent's own "
		"user (root: only\n"
		"                      where the controller's config says "
		"allow_root: true)\n"
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

/* Options into g; 0, or an exit code (-h: GF_EXIT_OK with *done). */
static int parse_args(int argc, char **argv, struct gf_agent_cmd *g, bool *done)
{
	long per_client = -1;
	struct gf_agent_join_args *j = &g->join;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("listen", &g->o.listen),
		GF_OPT_ARG("interval", 'i'),
		GF_OPT_STR("counters", &g->counters_file),
		GF_OPT_ARG("diag-window", 'w'),
		GF_OPT_ARG("xid-quiet", 'q'),
		GF_OPT_ARG("controller", 'C'),
		GF_OPT_STR("name", &j->name),
		GF_OPT_STR("token-file", &j->token_file),
		GF_OPT_ARG("label", 'L'),
		GF_OPT_STR("state-dir", &j->state_dir),
		GF_OPT_STR("address", &j->address),
		GF_OPT_ARG("block", 'B'),
		GF_OPT_STR("ca", &j->ca),
		GF_OPT_FLAG("insecure-http", &j->insecure_http),
		GF_OPT_FLAG("one-connection", &j->one_connection),
		GF_OPT_ARG("kill-grace", 'G'),
		GF_OPT_STR("default-user", &j->default_user),
		GF_CLI_DIAG_OPTS(&g->o.diag),
		GF_CLI_CONN_OPTS(&g->o.max_connections, &per_client),
		GF_OPT_END,
	};
	struct gf_node_opts topo = { .cmd = "agent", .src = g->o.topo };
	struct gf_cli_args args = GF_CLI_ARGS("agent", argc, argv, opts, usage);
	args.no_args = true;
	args.node = &topo;
	int c, rc;
	while ((c = gf_cli_next(&args)) != -1)
		if ((rc = gf_agent_cmd_option(c, optarg, g)) != 0)
			return rc; /* every code is one of the agent's */
	*done = args.rc == GF_EXIT_OK;
	if (args.rc >= 0)
		return args.rc;
	gf_cli_conn_limits(per_client, &g->o.max_per_client);
	g->o.topo = topo.src;
	if ((rc = gf_agent_cmd_check(g)) != 0)
		return rc;
	return gf_cli_node_check(&topo);
}

int cmd_agent(int argc, char **argv)
{
	static struct gf_agent_cmd g;
	gf_agent_cmd_defaults(&g);
	bool done = false;
	int rc = parse_args(argc, argv, &g, &done);
	if (rc || done)
		return rc;
	sigset_t stop;
	gf_cli_block_stop(&stop);
	return gf_agent_cmd_run(&g, GPUFLEET_VERSION, &stop);
}
