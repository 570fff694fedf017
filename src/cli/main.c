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

/* A command; a group of subcommands: its -h, and what it says when the
 * subcommand is missing or unknown (NULL: made from the names); one of a
 * group's subcommands ("GROUP SUB", after the group's row). */
#define CMD(name, fn, summary) ROW(name, fn, summary, NULL, NULL, NULL, NULL)
#define GROUP(name, summary, usage, missing, what, known) \
	ROW(name, NULL, summary, usage, missing, what, known)
#define SUB(name, fn) ROW(name, fn, NULL, NULL, NULL, NULL, NULL)
#define ROW(n, f, s, u, m, w, k)    \
	{                           \
		n, f, s, u, m, w, k \
	}

static const struct gf_cmd commands[] = {
	CMD("topo", cmd_topo,
	    "show GPU/NIC/CPU topology (nvidia-smi topo -m) and findings"),
	CMD("bind", cmd_bind,
	    "run a command bound to its GPUs' CPUs, memory and NIC"),
	GROUP("simulate",
	      "replay a trace through the placement engine (policy tables)",
	      gf_cli_simulate_usage,
	      "no experiment given (known: fill, mig, autoscale, replay; see "
	      "'gpufleet simulate -h')",
	      "experiment", NULL),
	SUB("simulate fill", cmd_simulate_fill),
	SUB("simulate mig", cmd_simulate_mig),
	SUB("simulate autoscale", cmd_simulate_autoscale),
	SUB("simulate replay", cmd_simulate_replay),
	CMD("report", cmd_report,
	    "the simulators' JSON as one HTML page with charts"),
	GROUP("mig", "plan, validate and apply MIG layouts (mig-parted)",
	      gf_cli_mig_usage,
	      "expected a subcommand: plan, validate, apply or proposal (see "
	      "'gpufleet mig -h')",
	      NULL, "(plan, validate, apply, proposal)"),
	SUB("mig plan", cmd_mig_plan),
	SUB("mig validate", cmd_mig_validate),
	SUB("mig apply", cmd_mig_apply),
	SUB("mig proposal", gf_cmd_mig_proposal),
	CMD("agent", cmd_agent,
	    "node agent: GPU telemetry on /metrics (dcgm-exporter names)"),
	CMD("diagnose", cmd_diagnose,
	    "GPUs wasted, and why (from an agent or recorded samples)"),
	CMD("serve", cmd_serve,
	    "controller: a durable GPU job queue with quotas, gangs, "
	    "preemption"),
	CMD("submit", cmd_submit, "submit a job to the controller"),
	CMD("jobs", cmd_jobs, "list the controller's jobs"),
	CMD("history", cmd_history, "a job's runs (as sacct lists steps)"),
	CMD("cancel", cmd_cancel, "cancel jobs"),
	CMD("hold", cmd_hold, "keep pending jobs from starting"),
	CMD("release", cmd_release, "let held jobs start"),
	CMD("requeue", cmd_requeue, "put running jobs back in the queue"),
	CMD("logs", cmd_logs, "print a job's output"),
	CMD("run", cmd_run,
	    "submit a command, print its output, exit with "
	    "its code"),
	CMD("nodes", cmd_nodes, "list the controller's nodes"),
	CMD("drain", cmd_drain, "take a node out of scheduling (admin)"),
	CMD("resume", cmd_resume, "put a drained node back (admin)"),
	CMD("chargeback", cmd_chargeback,
	    "what each team's GPUs cost, idle and waste included"),
	GROUP("slurm",
	      "Slurm: gres.conf from the topology, placement advice, usage",
	      gf_cli_slurm_usage, NULL, NULL, NULL),
	SUB("slurm gres", cmd_slurm_gres),
	SUB("slurm advise", gf_cmd_slurm_advise),
	SUB("slurm usage", gf_cmd_slurm_usage),
	GROUP("autoscale",
	      "scale inference on queue depth as Kubernetes' HPA/KEDA would",
	      gf_cli_autoscale_usage, NULL, NULL, NULL),
	SUB("autoscale recommend", cmd_autoscale_recommend),
	SUB("autoscale run", cmd_autoscale_run),
	SUB("autoscale manifests", cmd_autoscale_manifests),
	CMD("demo", cmd_demo, "the main job on built-in defaults"),
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
		if (!c->fn)	  /* a group */
			return gf_cli_subcommand(commands, NCMDS, c, argc - 1,
						 argv + 1);
		return c->fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "gpufleet: '%s' is not a command\n", name);
	usage(stderr);
	return GF_EXIT_USAGE;
}
