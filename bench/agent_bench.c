/*
 * agent_bench.c - the node agent on 8 GPUs x 7 MIG instances (fake NVML).
 *
 *   agent_bench GPUFLEET_BIN FAKE_NVML_LIB
 * BENCH lines:
 *   agent.collect.cpu_per_sample   CPU time of one sample of 8 GPUs (ms)
 *   agent.scrape.p50 / .p99        GET /metrics on loopback, a new
 *                                  connection each (ms)
 *   agent.rss                      the agent's resident memory (MiB)
 * Targets (issue 5): p99 < 1 ms, collector < 1 ms per sample, RSS < 20 MiB.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "telemetry/expo.h"

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

static void write_fixture(const char *path)
{
	FILE *f = fopen(path, "w");
	fprintf(f, "driver 550.54.15\nprofileset h100\n"
		   "gi_profile 0 19 1 1 0,1,2,3,4,5,6 7\n"
		   "gi_profile 2 9 4 3 0,4 2\n");
	for (int g = 0; g < 8; g++) {
		fprintf(f,
			"gpu 00000000:%02X:00.0\nname NVIDIA H100 80GB HBM3\n"
			"uuid GPU-5e1f0c2a-7d3b-4c8e-9a60-0000000004%02d\n"
			"pci_device_id 0x233010DE\nmemory_total_mib 81559\n"
			"mig 1 1\ngi_profiles h100\n"
			"series power_mw 300000,310000\ngpm 1\n"
			"series gr_active 40,60\nseries tensor_active 20\n",
			0x18 + g * 0x10, g);
		for (int s = 0; s < 7; s++)
			fprintf(f, "gi 19 %d%s\n", s, s % 2 ? " busy" : "");
	}
	fclose(f);
}

/* One GET over a fresh connection; ms, or -1. */
static double get(int port, char *buf, size_t size)
{
	double t0 = now_ms();
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n"
			   "Connection: close\r\n\r\n";
	if (write(fd, req, sizeof(req) - 1) < 0) {
		close(fd);
		return -1;
	}
	size_t got = 0;
	ssize_t n;
	while ((n = read(fd, buf + got, size - got - 1)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	return strstr(buf, "200 OK") ? now_ms() - t0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: agent_bench GPUFLEET_BIN FAKE_LIB\n");
		return 2;
	}
	char fixture[] = "/tmp/gf-agent-bench-XXXXXX";
	int fd = mkstemp(fixture);
	close(fd);
	write_fixture(fixture);
	setenv("GPUFLEET_NVML_LIBRARY", argv[2], 1);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", fixture, 1);

	/* collector CPU time per sample, in process */
	struct gf_collector c;
	struct gf_err e;
	if (gf_collector_open(&c, 0, &e) != 0) {
		printf("# %s\n", e.msg);
		return 1;
	}
	double cpu = 0;
	for (int i = 0; i < 200; i++) {
		gf_collector_sample(&c, i * 1000);
		cpu += c.cpu_ms_last;
	}
	printf("BENCH agent.collect.cpu_per_sample %.3f ms\n", cpu / 200);
	printf("# %d GPUs, %d MIG instances on GPU 0\n", c.n, c.g[0].last.nmig);
	gf_collector_close(&c);

	/* the agent process, scraped, on a port the kernel picks (its
	 * stderr says which) */
	static char agent[] = "agent", lopt[] = "--listen",
		    any[] = "127.0.0.1:0", iopt[] = "--interval", one[] = "1s";
	char *av[] = { argv[1], agent, lopt, any, iopt, one, NULL };
	int err[2];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	if (pipe(err) != 0 || posix_spawn_file_actions_init(&fa) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, err[1], 2) != 0 ||
	    posix_spawn_file_actions_addclose(&fa, err[0]) != 0 ||
	    posix_spawn(&pid, argv[1], &fa, NULL, av, environ) != 0) {
		printf("# cannot start the agent\n");
		return 1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(err[1]);
	FILE *ef = fdopen(err[0], "r");
	char line[512];
	int port = 0;
	static const char say[] = "listening on http://127.0.0.1:";
	while (port == 0 && ef && fgets(line, sizeof(line), ef)) {
		const char *at = strstr(line, say);
		if (at)
			port = (int)strtol(at + sizeof(say) - 1, NULL, 10);
	}
	if (port == 0) {
		printf("# the agent did not say its port\n");
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return 1;
	}
	static char buf[1 << 20];
	for (int i = 0; i < 100 && get(port, buf, sizeof(buf)) < 0; i++)
		usleep(50000);
	/* a second sample, so the page has GPM's families too */
	usleep(1500000);
	enum { N = 2000 };
	static double lat[N];
	int ok = 0;
	for (int i = 0; i < N; i++) {
		double t = get(port, buf, sizeof(buf));
		if (t >= 0)
			lat[ok++] = t;
	}
	qsort(lat, (size_t)ok, sizeof(double), cmp);
	if (ok > 0) {
		printf("BENCH agent.scrape.p50 %.3f ms\n", lat[ok / 2]);
		printf("BENCH agent.scrape.p99 %.3f ms\n", lat[ok * 99 / 100]);
		printf("# %d scrapes, page %zu bytes\n", ok, strlen(buf));
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			printf("BENCH agent.rss %.1f MiB\n",
			       strtod(line + 6, NULL) / 1024.0);
	if (f)
		fclose(f);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	fclose(ef);
	unlink(fixture);
	return 0;
}
