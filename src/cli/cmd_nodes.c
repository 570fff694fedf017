/*
 * cmd_nodes.c - `gpufleet nodes`: the controller's nodes, as sinfo lists
 * them: state, block, GPU model, free GPU, healthy GPUs, CPU and memory;
 * under a node, why it is not ready and which GPU is unhealthy and why.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "util/fmt.h"

#define CMD "nodes"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet nodes [--server URL] [--token-file F] "
		"[--json]\n"
		"\n"
		"List the controller's nodes: state, block, GPU model, GPUs "
		"free of all (whole\nGPUs; shares as fractions), healthy "
		"GPUs, MIG instances, free CPU and memory;\nunder a node, why "
		"it is not ready and each unhealthy GPU with its reason.\n\n" CONN_HELP
			GF_CLI_EXIT_HELP);
}

static void line(const struct gf_jv *n)
{
	const struct gf_jv *g = gf_jv_get(n, "gpus");
	int64_t free_milli = 0;
	size_t healthy = 0;
	for (size_t i = 0; i < gf_jv_len(g); i++) {
		bool ok = true;
		free_milli += gf_remote_num(gf_jv_at(g, i), "free_milli");
		gf_jv_bool(gf_jv_get(gf_jv_at(g, i), "healthy"), &ok);
		healthy += ok;
	}
	char gpus[32], health[16];
	gf_note(gpus, sizeof(gpus), "%.2f/%zu", (double)free_milli / 1000.0,
		gf_jv_len(g));
	gf_note(health, sizeof(health), "%zu/%zu", healthy, gf_jv_len(g));
	printf("%-20.20s %-8s %-12.12s %-12.12s %-10s %-7s %-4zu %8.1f "
	       "%10lld\n",
	       gf_remote_str(n, "name"), gf_remote_str(n, "state"),
	       gf_remote_str(n, "block"), gf_remote_str(n, "gpu_model"), gpus,
	       health, gf_jv_len(gf_jv_get(n, "mig")),
	       (double)gf_remote_num(n, "cpu_free_milli") / 1000.0,
	       (long long)gf_remote_num(n, "memory_free_mib"));
	const char *why = gf_jv_str(gf_jv_get(n, "reason"));
	if (why && *why)
		printf("  %s\n", why);
	for (size_t i = 0; i < gf_jv_len(g); i++) {
		const struct gf_jv *x = gf_jv_at(g, i);
		bool ok = true;
		gf_jv_bool(gf_jv_get(x, "healthy"), &ok);
		if (!ok)
			printf("  GPU %lld unhealthy: %s\n",
			       (long long)gf_remote_num(x, "index"),
			       gf_remote_str(x, "reason"));
	}
}

static void table(const struct gf_jv *v, const void *arg)
{
	(void)arg;
	const struct gf_jv *nodes = gf_jv_get(v, "nodes");
	printf("%-20s %-8s %-12s %-12s %-10s %-7s %-4s %8s %10s\n", "NAME",
	       "STATE", "BLOCK", "MODEL", "GPUS", "HEALTHY", "MIG", "CPU",
	       "MEM_MIB");
	for (size_t i = 0; i < gf_jv_len(nodes); i++)
		line(gf_jv_at(nodes, i));
}

int cmd_nodes(int argc, char **argv)
{
	return gf_remote_get_command(CMD, argc, argv, usage, "/v1/nodes",
				     table);
}
