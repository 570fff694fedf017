/*
 * main.c - `gpufleet <command> [options]`: the command table (git.c style).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/mig_cli.h"
#include "cli/slurm_cli.h"
#include "util/log.h"

/* The groups' texts (gf_cli_subcommand). */
static const struct gf_cli_subs cli_simulate = {
	.cmd = "simulate",
	.usage = gf_cli_simulate_usage,
	.missing = "no experiment given (known: fill, mig, autoscale, replay; "
		   "see 'gpufleet simulate -h')",
	.what = "experiment",
};

static const struct gf_cli_subs cli_mig = {
	.cmd = "mig",
	.usage = gf_cli_mig_usage,
	.missing = "expected a subcommand: plan, validate, apply or proposal "
		   "(see 'gpufleet mig -h')",
	.known = "(plan, validate, apply, proposal)",
};

static const struct gf_cli_subs cli_slurm = {
	.cmd = "slurm",
	.usage = gf_cli_slurm_usage,
};

static const struct gf_cli_subs cli_autoscale = {
	.cmd = "autoscale",
	.usage = gf_cli_autoscale_usage,
};

/* The commands, and the groups' subcommands ("GROUP SUB", after their
 * group's row). */
static const struct gf_cmd commands[] = {
	{ "topo", cmd_topo,
	  "show GPU/NIC/CPU topology (nvidia-smi topo -m) and findings", NULL },
	{ "bind", cmd_bind,
	  "run a command bound to its GPUs' CPUs, memory "
	  "and NIC",
	  NULL },
	{ "simulate", NULL,
	  "replay a trace through the placement engine (policy tables)",
	  &cli_simulate },
	{ "simulate fill", cmd_simulate_fill, NULL, NULL },
	{ "simulate mig", cmd_simulate_mig, NULL, NULL },
	{ "simulate autoscale", cmd_simulate_autoscale, NULL, NULL },
	{ "simulate replay", cmd_simulate_replay, NULL, NULL },
	{ "report", cmd_report,
	  "the simulators' JSON as one HTML page with charts", NULL },
	{ "mig", NULL, "plan, validate and apply MIG layouts (mig-parted)",
	  &cli_mig },
	{ "mig plan", cmd_mig_plan, NULL, NULL },
	{ "mig validate", cmd_mig_validate, NULL, NULL },
	{ "mig apply", cmd_mig_apply, NULL, NULL },
	{ "mig proposal", gf_cmd_mig_proposal, NULL, NULL },
	{ "agent", cmd_agent,
	  "node agent: GPU telemetry on /metrics (dcgm-exporter names)", NULL },
	{ "diagnose", cmd_diagnose,
	  "GPUs wasted, and why (from an agent or recorded samples)", NULL },
	{ "serve", cmd_serve,
	  "controller: a durable GPU job queue with quotas, gangs, "
	  "preemption",
	  NULL },
	{ "submit", cmd_submit, "submit a job to the controller", NULL },
	{ "jobs", cmd_jobs, "list the controller's jobs", NULL },
	{ "cancel", cmd_cancel, "cancel jobs", NULL },
	{ "nodes", cmd_nodes, "list the controller's nodes", NULL },
	{ "drain", cmd_drain, "take a node out of scheduling (admin)", NULL },
	{ "resume", cmd_resume, "put a drained node back (admin)", NULL },
	{ "chargeback", cmd_chargeback,
	  "what each team's GPUs cost, idle and waste included", NULL },
	{ "slurm", NULL,
	  "Slurm: gres.conf from the topology, placement advice, usage",
	  &cli_slurm },
	{ "slurm gres", cmd_slurm_gres, NULL, NULL },
	{ "slurm advise", gf_cmd_slurm_advise, NULL, NULL },
	{ "slurm usage", gf_cmd_slurm_usage, NULL, NULL },
	{ "autoscale", NULL,
	  "scale inference on queue depth as Kubernetes' HPA/KEDA would",
	  &cli_autoscale },
	{ "autoscale recommend", cmd_autoscale_recommend, NULL, NULL },
	{ "autoscale run", cmd_autoscale_run, NULL, NULL },
	{ "autoscale manifests", cmd_autoscale_manifests, NULL, NULL },
	{ "demo", cmd_demo, "the main job on built-in defaults", NULL },
};

#define NCMDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: gpufleet <command> [options]\n\n"
		   "commands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		if (commands[i].summary) /* not a subcommand */
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
	for (size_t i = 0; i < NCMDS; i++) {
		const struct gf_cmd *c = &commands[i];
		if (!c->summary || strcmp(name, c->name) != 0)
			continue; /* a subcommand is found through its group */
		if (c->group)
			return gf_cli_subcommand(commands, NCMDS, c->group,
						 argc - 1, argv + 1);
		return c->fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "gpufleet: '%s' is not a command\n", name);
	usage(stderr);
	return GF_EXIT_USAGE;
}
