/*
 * topo_bench.c - how long topology discovery takes on a recorded node.
 *
 *   topo_bench SHARED_DIR GPUFLEET_BIN
 * Prints BENCH lines (median of repeated runs):
 *   topo.dgx2.load        hwloc XML -> node model, in process
 *   topo.dgx2.render      findings + nvidia-smi matrix text, in process
 *   topo.dgx2.cli         `gpufleet topo --xml` end to end, a new process
 *   topo.dgx2.peer_lstopo hwloc's own `lstopo-no-graphics -i` on the same
 *                         file, for comparison (when installed)
 *   topo.live.cli / .rss  `gpufleet topo` on this machine (time, peak
 *                         RSS), with hwloc's plugins kept out, and
 *   topo.live.with_hwloc_plugins.*  the same letting hwloc load them
 *                         (GPUFLEET_HWLOC_PLUGINS=1), when installed
 * Targets: the CLI under 50 ms (issue 2); live topo under 20 MiB and
 * 50 ms with libhwloc-plugins and pocl installed (issue 9).
 */
#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/findings.h>

#include "bench.h"
#include "topo/hwloc_load.h"
#include "topo/render.h"

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

static long last_rss_kib; /* peak RSS of the last run_ms() child */

/* Wall time of one run of argv with output to /dev/null; <0 on failure
 * (exit 1 counts as a run: a live machine without a GPU says so). */
static double run_ms(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	double t0 = now_ms();
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int st;
	struct rusage ru;
	wait4(pid, &st, 0, &ru);
	double t = now_ms() - t0;
	last_rss_kib = ru.ru_maxrss;
	return WIFEXITED(st) && WEXITSTATUS(st) <= 1 ? t : -1;
}

#define RUNS 21

/* `gpufleet topo` on the live machine: median time, largest peak RSS. */
static void live(char *bin, const char *name)
{
	static char topo[] = "topo";
	char *args[] = { bin, topo, NULL };
	double t[RUNS];
	long rss = 0;
	for (int i = 0; i < RUNS; i++) {
		t[i] = run_ms(args);
		if (t[i] < 0) {
			printf("# %s: 'gpufleet topo' failed\n", name);
			return;
		}
		if (last_rss_kib > rss)
			rss = last_rss_kib;
	}
	printf("BENCH %s.cli %.2f ms\n", name, median(t, RUNS));
	printf("BENCH %s.rss %.1f MiB\n", name, (double)rss / 1024);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: topo_bench SHARED_DIR GPUFLEET_BIN\n");
		return 2;
	}
	char xml[1024];
	snprintf(xml, sizeof(xml),
		 "%s/topologies/hwloc-xml/open-mpi_hwloc/nvidiaDGX2.xml",
		 argv[1]);
	if (access(xml, R_OK) != 0) {
		printf("# skipped topo benchmarks: %s absent (set "
		       "GPUFLEET_SHARED)\n",
		       xml);
		return 0;
	}
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	live(argv[2], "topo.live");
	glob_t g;
	bool plugins =
		glob("/usr/lib*/*/hwloc/hwloc_opencl.so", 0, NULL, &g) == 0;
	if (plugins)
		globfree(&g);
	if (plugins) {
		setenv("GPUFLEET_HWLOC_PLUGINS", "1", 1);
		live(argv[2], "topo.live.with_hwloc_plugins");
		unsetenv("GPUFLEET_HWLOC_PLUGINS");
	} else {
		printf("# libhwloc-plugins not installed: no figure with "
		       "plugins\n");
	}
	double load[RUNS], render[RUNS], cli[RUNS], peer[RUNS];
	for (int i = 0; i < RUNS; i++) {
		struct gf_node *n = gf_node_new();
		struct gf_topo_source src = { .xml_path = xml };
		struct gf_err e;
		double t0 = now_ms();
		if (gf_topo_load(n, &src, &e) != 0) {
			fprintf(stderr, "topo_bench: %s\n", e.msg);
			return 1;
		}
		double t1 = now_ms();
		struct gf_finding f[GF_MAX_FINDINGS];
		int nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
		struct gf_buf b;
		gf_buf_init(&b, 1u << 20);
		BENCH_MUST(gf_render_topo_text(n, false, f, nf, &b));
		double t2 = now_ms();
		gf_buf_release(&b);
		gf_node_free(n);
		load[i] = t1 - t0;
		render[i] = t2 - t1;
	}
	static char topo[] = "topo", xml_opt[] = "--xml",
		    lstopo[] = "lstopo-no-graphics", whole[] = "--whole-io",
		    in[] = "-i";
	char *cli_argv[] = { argv[2], topo, xml_opt, xml, NULL };
	char *peer_argv[] = { lstopo, whole, in, xml, NULL };
	int have_peer = 1;
	for (int i = 0; i < RUNS; i++) {
		cli[i] = run_ms(cli_argv);
		if (cli[i] < 0) {
			fprintf(stderr, "topo_bench: '%s topo' failed\n",
				argv[2]);
			return 1;
		}
		if (have_peer && (peer[i] = run_ms(peer_argv)) < 0)
			have_peer = 0;
	}
	printf("BENCH topo.dgx2.load %.2f ms\n", median(load, RUNS));
	printf("BENCH topo.dgx2.render %.3f ms\n", median(render, RUNS));
	printf("BENCH topo.dgx2.cli %.2f ms\n", median(cli, RUNS));
	if (have_peer)
		printf("BENCH topo.dgx2.peer_lstopo %.2f ms\n",
		       median(peer, RUNS));
	else
		printf("# peer lstopo-no-graphics not installed\n");
	return 0;
}
