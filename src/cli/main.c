/*
 * main.c - `gpufleet <command> [options]`: the command table (git.c style).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/log.h"

static const struct gf_cmd commands[] = {
	{ "topo", cmd_topo,
	  "show GPU/NIC/CPU topology (nvidia-smi topo -m) and findings" },
	{ "bind", cmd_bind,
	  "run a command bound to its GPUs' CPUs, memory "
	  "and NIC" },
	{ "simulate", cmd_simulate,
	  "replay a trace through the placement engine (policy tables)" },
	{ "report", cmd_report,
	  "the simulators' JSON as one HTML page with charts" },
	{ "mig", cmd_mig, "plan, validate and apply MIG layouts (mig-parted)" },
	{ "agent", cmd_agent,
	  "node agent: GPU telemetry on /metrics (dcgm-exporter names)" },
	{ "diagnose", cmd_diagnose,
	  "GPUs wasted, and why (from an agent or recorded samples)" },
	{ "serve", cmd_serve,
	  "controller: a durable GPU job queue with quotas, gangs, "
	  "preemption" },
	{ "submit", cmd_submit, "submit a job to the controller" },
	{ "jobs", cmd_jobs, "list the controller's jobs" },
	{ "cancel", cmd_cancel, "cancel jobs" },
	{ "nodes", cmd_nodes, "list the controller's nodes" },
	{ "drain", cmd_drain, "take a node out of scheduling (admin)" },
	{ "resume", cmd_resume, "put a drained node back (admin)" },
	{ "chargeback", cmd_chargeback,
	  "what each team's GPUs cost, idle and waste included" },
	{ "slurm", cmd_slurm,
	  "Slurm: gres.conf from the topology, placement advice, usage" },
	{ "autoscale", cmd_autoscale,
	  "scale inference on queue depth as Kubernetes' HPA/KEDA would" },
	{ "demo", cmd_demo, "the main job on built-in defaults" },
};

#define NCMDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: gpufleet <command> [options]\n\n"
		   "commands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(f,
		"\n'gpufleet <command> -h' describes a command.\n"
		"environment: GPUFLEET_LOG=error|warn|info|debug, "
		"GPUFLEET_NVML_LIBRARY=path to libnvidia-ml\n" GF_CLI_EXIT_HELP);
}

int main(int argc, char **argv)
{
	const char *lvl = getenv("GPUFLEET_LOG");
	enum gf_log_level level;
	if (lvl && gf_log_parse_level(lvl, &level) == 0)
		gf_log_set_level(level);
	else if (lvl && *lvl)
		fprintf(stderr,
			"gpufleet: GPUFLEET_LOG='%s' is not a level "
			"(error, warn, info, debug): ignored\n",
			lvl);
	/* hwloc prints boxed multi-line warnings on odd XML; our loader says
	 * what went wrong in one line.  Debug logging shows hwloc's too. */
	if (gf_log_get_level() < GF_LOG_DEBUG)
		setenv("HWLOC_HIDE_ERRORS", "2", 0);
	if (argc < 2) {
		usage(stderr);
		return GF_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 ||
	    strcmp(name, "help") == 0) {
		usage(stdout);
		return GF_EXIT_OK;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("gpufleet %s\n", GPUFLEET_VERSION);
		return GF_EXIT_OK;
	}
	for (size_t i = 0; i < NCMDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "gpufleet: '%s' is not a command\n", name);
	usage(stderr);
	return GF_EXIT_USAGE;
}
