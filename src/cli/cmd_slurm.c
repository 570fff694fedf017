/*
 * cmd_slurm.c - `gpufleet slurm gres|advise|usage`: gpufleet inside Slurm
 * (docs/slurm.md).  This file holds the dispatch and `gres`; advise and
 * usage have files of their own.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/slurm_cli.h"
#include "slurm/gres.h"

static void usage_gres(FILE *f)
{
	fprintf(f,
		"usage: gpufleet slurm gres [--node-line] [--nodename NAME] "
		"[--type NAME]\n"
		"                           [--dev-dir DIR] [--autodetect "
		"off|nvml] [--no-comments]\n"
		"                           [--xml FILE [--this-system] | "
		"--nccl-xml FILE |\n"
		"                            --template NAME] [--nvml | "
		"--no-nvml]\n"
		"\n"
		"Write gres.conf lines for this node's GPUs (or a recording's, "
		"or a template's):\n"
		"  NodeName=N Name=gpu Type=T File=DIR/nvidiaI Cores=C "
		"Links=L Flags=nvidia_gpu_env\n"
		"one per GPU in PCI bus order (Slurm's device index).  Cores= "
		"are Slurm's\nabstract core ids (hwloc's Core L#, socket by "
		"socket), never OS CPU ids;\nLinks= count direct NVLinks, -1 "
		"for the GPU itself, as AutoDetect=nvml does.\n"
		"\n"
		"  --node-line      the slurm.conf NodeName line instead (as "
		"`slurmd -C` prints\n"
		"                   it, with RealMemory and Gres=gpu:T:N)\n"
		"  --nodename NAME  Slurm's NodeName (default: the topology's "
		"host name)\n"
		"  --type NAME      the gres Type of every GPU (default: the "
		"model, e.g. h100)\n"
		"  --dev-dir DIR    device files DIR/nvidiaN (default /dev)\n"
		"  --autodetect M   write AutoDetect=M (default off; nvml makes "
		"slurmd cross-check\n"
		"                   these lines against NVML)\n"
		"  --no-comments    the lines only\n"
		"  --xml FILE, --nccl-xml FILE, --template NAME, "
		"--this-system, --nvml, --no-nvml\n"
		"                   where the topology comes from, as for "
		"`gpufleet topo`\n"
		"  -h, --help       this help\n" GF_CLI_EXIT_HELP);
}

void gf_cli_slurm_usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet slurm gres|advise|usage [options]\n"
		"\n"
		"  gres    gres.conf lines and the slurm.conf node line from "
		"the topology\n"
		"  advise  GPU fragmentation per node and partition, and where "
		"pending jobs\n"
		"          fragment least (through libslurm)\n"
		"  usage   Slurm's accounting (sacct) as the records `gpufleet "
		"chargeback` reads\n"
		"\n"
		"The SPANK plugin spank_gpufleet.so binds each task to its "
		"GPUs' CPUs, memory\nand NIC (--gpufleet-bind); docs/slurm.md "
		"installs it.\n"
		"'gpufleet slurm SUBCOMMAND -h' describes one.\n" GF_CLI_EXIT_HELP);
}

int cmd_slurm_gres(int argc, char **argv)
{
	struct gf_node_opts no = { .cmd = "slurm gres", .src.nvml = -1 };
	struct gf_slurm_gres_opts go = { .comments = true };
	bool line = false, no_comments = false;
	const struct gf_cli_opt opts[] = {
		GF_OPT_FLAG("node-line", &line),
		GF_OPT_STR("nodename", &go.nodename),
		GF_OPT_STR("type", &go.type),
		GF_OPT_STR("dev-dir", &go.dev_dir),
		GF_OPT_ARG("autodetect", 'a'),
		GF_OPT_FLAG("no-comments", &no_comments),
		GF_OPT_END,
	};
	struct gf_cli_args args =
		GF_CLI_ARGS("slurm gres", argc, argv, opts, usage_gres);
	args.no_args = true;
	args.node = &no;
	while (gf_cli_next(&args) != -1) { /* 'a', --autodetect */
		if (strcmp(optarg, "nvml") && strcmp(optarg, "off")) {
			gf_cli_error("slurm gres",
				     "cannot use '--autodetect %s': expected "
				     "off or nvml",
				     optarg);
			return GF_EXIT_USAGE;
		}
		go.autodetect_nvml = strcmp(optarg, "nvml") == 0;
	}
	if (args.rc >= 0)
		return args.rc;
	go.comments = !no_comments;
	struct gf_node *n;
	int rc = gf_cli_node_get(&no, &n);
	if (rc)
		return rc;
	struct gf_buf b;
	struct gf_err e;
	gf_err_clear(&e);
	gf_buf_init(&b, 1u << 20);
	rc = line ? gf_slurm_node_line(n, &go, &b, &e)
		  : gf_slurm_gres_conf(n, &go, &b, &e);
	int ret = GF_EXIT_FAIL;
	if (rc == 0)
		ret = gf_cli_print(gf_buf_str(&b), b.len);
	else
		gf_cli_error("slurm gres", "%s",
			     e.msg[0] ? e.msg : gf_strerror(rc));
	gf_buf_release(&b);
	gf_node_free(n);
	return ret;
}
