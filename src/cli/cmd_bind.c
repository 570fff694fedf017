/*
 * cmd_bind.c - `gpufleet bind`: run a command on its GPUs' aligned set:
 * local CPUs, local memory, nearest NIC(s), and the environment that
 * makes CUDA, NCCL and UCX use them.  --dry-run prints the plan and why.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpufleet/bind.h>
#include <gpufleet/link.h>

#include "cli/cli.h"
#include "topo/hwloc_load.h"
#include "util/json.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet bind (--gpus LIST | --count N [--busy LIST]) "
		"[--cpus N]\n"
		"                     [--xml FILE | "
		"--nccl-xml FILE |\n"
		"                     --template NAME]\n"
		"                     [--this-system] [--dry-run] [--json] "
		"[--no-nvml] -- CMD [ARGS...]\n"
		"\n"
		"Run CMD bound to the CPUs and NUMA memory local to its GPUs, "
		"with\nCUDA_VISIBLE_DEVICES, NCCL_IB_HCA and UCX_NET_DEVICES "
		"naming those GPUs and\ntheir nearest NIC(s).\n"
		"\n"
		"  --gpus LIST      GPU indexes in nvidia-smi order: 0,1 or "
		"0-3\n"
		"  --count N        choose the N best connected free GPUs "
		"(all pairs NVLink\n"
		"                   first, then the most NVLink; on a live "
		"node GPUs running\n"
		"                   processes are not free)\n"
		"  --busy LIST      GPUs to treat as taken (with --count)\n"
		"  --cpus N         N logical CPUs (whole cores first) instead "
		"of all local ones\n"
		"  --xml FILE       plan on a recorded hwloc XML (needs "
		"--dry-run, or\n"
		"                   --this-system when it is a recording of "
		"this machine)\n"
		"  --nccl-xml FILE  plan on an NCCL topology file (with "
		"--dry-run)\n"
		"  --template NAME  plan on a built-in node (with --dry-run)\n"
		"  --dry-run        print the plan and the reasons; run "
		"nothing\n"
		"  --json           the plan as JSON (with --dry-run)\n"
		"  --this-system    the --xml file is a recording of this "
		"machine: bind for real\n"
		"  --nvml           join NVML data even for --xml (same "
		"machine)\n"
		"  --no-nvml        do not load NVML (no UUIDs)\n"
		"  -h, --help       this help\n"
		"\n"
		"exit status: 0 ok (CMD's own status once it runs), 1 "
		"failure, 2 usage error\n");
}

static void print_text(const struct gf_node *n, const struct gf_bind_plan *p,
		       char **cmd, struct gf_buf *b)
{
	char cl[2048], ml[256];
	gf_bitmap_format_list(&p->cpus, cl, sizeof(cl));
	gf_bitmap_format_list(&p->mems, ml, sizeof(ml));
	gf_buf_puts(b, "GPUs:    ");
	for (int i = 0; i < p->ngpus; i++) {
		const struct gf_gpu *g = &n->gpus[p->gpus[i]];
		gf_buf_printf(b, "%sGPU%d (%s, %s)", i ? ", " : "", p->gpus[i],
			      g->name, g->bus_id);
	}
	gf_buf_printf(b, "\nCPUs:    %s (%d)\nMemory:  NUMA node %s\nNICs:    ",
		      cl, gf_bitmap_count(&p->cpus), ml);
	for (int i = 0; i < p->nnics; i++)
		gf_buf_printf(b, "%s%s", i ? ", " : "",
			      n->nics[p->nics[i]].name);
	gf_buf_puts(b, p->nnics ? "\n" : "none\n");
	gf_buf_puts(b, "Env:\n");
	for (int i = 0; i < p->nenv; i++)
		gf_buf_printf(b, "  %s=%s\n", p->env_name[i], p->env_value[i]);
	gf_buf_puts(b, "Why:\n");
	for (int i = 0; i < p->nreasons; i++)
		gf_buf_printf(b, "  - %s\n", p->reasons[i]);
	gf_buf_puts(b, "Command: ");
	if (cmd[0] == NULL)
		gf_buf_puts(b, "(none)");
	for (int i = 0; cmd[i]; i++)
		gf_buf_printf(b, "%s%s", i ? " " : "", cmd[i]);
	gf_buf_putc(b, '\n');
}

static void print_json(const struct gf_node *n, const struct gf_bind_plan *p,
		       char **cmd, struct gf_buf *b)
{
	struct gf_json j;
	char tmp[2048];
	gf_json_init(&j, b);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "source", n->source);
	gf_json_arr_begin(&j, "gpus");
	for (int i = 0; i < p->ngpus; i++)
		gf_json_int(&j, NULL, p->gpus[i]);
	gf_json_arr_end(&j);
	gf_bitmap_format_list(&p->cpus, tmp, sizeof(tmp));
	gf_json_str(&j, "cpus", tmp);
	gf_json_int(&j, "cpu_count", gf_bitmap_count(&p->cpus));
	gf_bitmap_format_list(&p->mems, tmp, sizeof(tmp));
	gf_json_str(&j, "numa_nodes", tmp);
	gf_json_bool(&j, "spans_numa", p->spans_numa);
	gf_json_arr_begin(&j, "nics");
	for (int i = 0; i < p->nnics; i++)
		gf_json_str(&j, NULL, n->nics[p->nics[i]].name);
	gf_json_arr_end(&j);
	gf_json_obj_begin(&j, "env");
	for (int i = 0; i < p->nenv; i++)
		gf_json_str(&j, p->env_name[i], p->env_value[i]);
	gf_json_obj_end(&j);
	gf_json_arr_begin(&j, "reasons");
	for (int i = 0; i < p->nreasons; i++)
		gf_json_str(&j, NULL, p->reasons[i]);
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "command");
	for (int i = 0; cmd[i]; i++)
		gf_json_str(&j, NULL, cmd[i]);
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
}

static int run(const struct gf_node *n, const struct gf_bind_plan *p,
	       char **cmd)
{
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_bitmap all_mems;
	gf_bitmap_zero(&all_mems);
	for (int i = 0; i < n->nnuma; i++)
		gf_bitmap_set(&all_mems, n->numa[i].os_index);
	/* Binding memory to every node is a no-op: leave the policy. */
	const struct gf_bitmap *mems =
		gf_bitmap_equal(&p->mems, &all_mems) ? NULL : &p->mems;
	if (gf_topo_bind_self(&p->cpus, mems, &e) != 0) {
		gf_cli_error("bind", "%s", e.msg);
		return GF_EXIT_FAIL;
	}
	for (int i = 0; i < p->nenv; i++)
		if (setenv(p->env_name[i], p->env_value[i], 1) != 0) {
			gf_cli_error("bind", "cannot set %s: %s",
				     p->env_name[i], gf_strerror(-errno));
			return GF_EXIT_FAIL;
		}
	execvp(cmd[0], cmd);
	gf_cli_error("bind", "cannot run '%s': %s", cmd[0],
		     gf_strerror(-errno));
	return GF_EXIT_FAIL;
}

/* --count: the best connected free GPUs; on a live node (or with
 * --nvml) those running processes are taken too. */
static int choose(const struct gf_node_opts *no, const struct gf_node *n,
		  int count, struct gf_bitmap *busy, struct gf_bind_request *r)
{
	struct gf_err e;
	gf_err_clear(&e);
	if (n->nvml_used) {
		struct gf_bitmap running;
		if (gf_node_source_busy_gpus(&no->src, n, &running, &e) != 0)
			gf_cli_error("bind", "warning: %s", e.msg);
		gf_bitmap_or(busy, &running);
	}
	for (int g = gf_bitmap_next(busy, 0); g >= 0;
	     g = gf_bitmap_next(busy, g + 1))
		if (g >= n->ngpus) {
			gf_cli_error("bind",
				     "cannot use '--busy': no GPU %d, this "
				     "node has GPU0..%d",
				     g, n->ngpus - 1);
			return -1;
		}
	if (gf_bind_choose_gpus(n, count, busy, r, &e) != 0) {
		gf_cli_error("bind", "cannot choose %d GPUs: %s", count, e.msg);
		return -1;
	}
	return 0;
}

int cmd_bind(int argc, char **argv)
{
	struct gf_node_opts no = { .cmd = "bind", .src.nvml = -1 };
	struct gf_bind_request req = { .ngpus = 0 };
	const char *gpus = NULL, *busy_s = NULL;
	int count = 0;
	bool dry = false, json = false;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("gpus", &gpus),
		GF_OPT_NUM("count", &count, 1, GF_MAX_GPUS, "a GPU count"),
		GF_OPT_STR("busy", &busy_s),
		GF_OPT_NUM("cpus", &req.cpus, 1, GF_BITMAP_BITS, "a CPU count"),
		GF_OPT_FLAG("dry-run", &dry),
		GF_OPT_END,
	};
	struct gf_cli_args args = GF_CLI_ARGS("bind", argc, argv, opts, usage);
	args.json = &json;
	args.shortopts = "+h"; /* stop at CMD: its own options are its */
	args.node = &no;
	(void)gf_cli_options(&args);
	if (args.rc >= 0)
		return args.rc;
	char **cmd = argv + optind;
	if (!gpus == !count) {
		gf_cli_error("bind", "give --gpus LIST or --count N (one of "
				     "them)");
		return GF_EXIT_USAGE;
	}
	if (busy_s && !count) {
		gf_cli_error("bind", "--busy goes with --count");
		return GF_EXIT_USAGE;
	}
	struct gf_bitmap busy;
	gf_bitmap_zero(&busy);
	if (busy_s && gf_bitmap_parse_list(&busy, busy_s) != 0) {
		gf_cli_error("bind",
			     "cannot parse '--busy %s': expected GPU indexes "
			     "like 0,5 or 2-3",
			     busy_s);
		return GF_EXIT_USAGE;
	}
	if (gpus && gf_bind_parse_gpus(gpus, &req) != 0) {
		gf_cli_error("bind",
			     "cannot parse '--gpus %s': expected indexes like "
			     "0,1 or 0-3",
			     gpus);
		return GF_EXIT_USAGE;
	}
	if (!dry && cmd[0] == NULL) {
		gf_cli_error("bind", "no command to run (put it after --)");
		return GF_EXIT_USAGE;
	}
	if (json && !dry) {
		gf_cli_error("bind", "--json goes with --dry-run");
		return GF_EXIT_USAGE;
	}
	struct gf_node *n;
	int rc = gf_cli_node_get(&no, &n);
	if (rc)
		return rc;
	struct gf_bind_plan *p = malloc(sizeof(*p));
	struct gf_err e;
	int ret = GF_EXIT_FAIL;
	gf_err_clear(&e);
	if (p == NULL) {
		gf_cli_error("bind", "out of memory");
		goto out;
	}
	if (count && choose(&no, n, count, &busy, &req) != 0)
		goto out;
	if (gf_bind_plan(n, &req, p, &e) != 0) {
		gf_cli_error("bind", "%s", e.msg);
		goto out;
	}
	if (dry) {
		struct gf_buf b;
		gf_buf_init(&b, 1u << 20);
		if (json)
			print_json(n, p, cmd, &b);
		else
			print_text(n, p, cmd, &b);
		ret = gf_cli_print(gf_buf_str(&b), b.len);
		gf_buf_release(&b);
		goto out;
	}
	if (!n->this_system) {
		gf_cli_error("bind",
			     "cannot bind: '%s' is a recording, not this "
			     "machine (use --dry-run, or --this-system if it "
			     "was recorded here)",
			     n->source);
		goto out;
	}
	ret = run(n, p, cmd); /* returns only on failure */
out:
	free(p);
	gf_node_free(n);
	return ret;
}
