/*
 * agent_bench.c - the node agent on the fake NVML: 8 GPUs x 7 MIG
 * instances, and the H200 host with its measured call costs.
 *
 *   agent_bench GPUFLEET_BIN FAKE_NVML_LIB [SHARED_DIR]
 * BENCH lines:
 *   agent.collect.cpu_per_sample   CPU time of one sample of 8 GPUs (ms),
 *                                  calls free
 *   agent.collect.cpu_per_sample.real_costs(.every_call)
 *                                  the collector alone on the H200, each
 *                                  NVML call costing what it cost on the
 *                                  host (the fake's cost mode, costs.c),
 *                                  with the schedule (or every counter
 *                                  every sample, as before it), 100 ms
 *                                  apart (.1s: 1 s apart) (ms)
 *   agent.cpu_per_sample.real_costs(.1s)  the whole agent process on
 *                                  the H200 with those costs at
 *                                  --interval 100ms (1s): its CPU (all
 *                                  threads, /proc/PID/task/TID/schedstat)
 *                                  over 30 s, per sample (ms)
 *   agent.rss.real_costs           that agent's peak RSS (VmHWM, MiB)
 *   agent.scrape.p50 / .p99        GET /metrics on loopback, a new
 *                                  connection each (ms)
 *   agent.rss                      the 8-GPU agent's resident memory (MiB)
 * The H200 is ../shared/fixtures/h200/nvml-dump.json (SHARED_DIR, else
 * $GPUFLEET_SHARED, else ../shared); without it, a text fixture of the
 * same GPU, and a line says so.
 * Targets (issues 5, 9): p99 < 1 ms, at most 1 ms of CPU per sample on the
 * real call costs, RSS < 20 MiB.
 */
#include <arpa/inet.h>
#include <dirent.h>
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

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
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

/* The H200 host's GPU: its NVML dump in the shared dir, else the same
 * facts as a text fixture written to tmp (and said). */
static void h200_fixture(const char *shared, char *out, size_t size,
			 const char *tmp)
{
	snprintf(out, size, "%s/fixtures/h200/nvml-dump.json", shared);
	if (access(out, R_OK) == 0)
		return;
	printf("# shared data absent: %s (set GPUFLEET_SHARED); the H200 "
	       "from a text fixture\n",
	       out);
	FILE *f = fopen(tmp, "w");
	fprintf(f, "driver 580.159.04\ngpu 00000000:00:06.0\n"
		   "name NVIDIA H200\n"
		   "uuid GPU-d1b61e09-1104-374d-b83c-f32dc17ca2d7\n"
		   "pci_device_id 0x233510DE\nmemory_total_mib 143771\n"
		   "mig 0 0\ngpm 1\n");
	fclose(f);
	snprintf(out, size, "%s", tmp);
}

/* One GET over a fresh connection into buf; ms, or -1. */
static double get(int port, const char *path, char *buf, size_t size)
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
	char req[256];
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: x\r\n"
			 "Connection: close\r\n\r\n",
			 path);
	if (write(fd, req, (size_t)n) < 0) {
		close(fd);
		return -1;
	}
	size_t got = 0;
	ssize_t r;
	while ((r = read(fd, buf + got, size - got - 1)) > 0)
		got += (size_t)r;
	close(fd);
	buf[got] = '\0';
	return strstr(buf, "200 OK") ? now_ms() - t0 : -1;
}

/* Mean CPU ms of the collector per sample on `fixture`, n samples step
 * ms apart; every: every counter every sample. */
static double collector_cpu(const char *fixture, bool every, int n,
			    int64_t step)
{
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", fixture, 1);
	struct gf_collector c;
	struct gf_err e;
	if (gf_collector_open(&c, 0, &e) != 0) {
		printf("# %s\n", e.msg);
		return -1;
	}
	for (int k = 0; every && k < GF_SLOW_COUNT; k++)
		c.slow_period_ms[k] = 0;
	double cpu = 0;
	for (int i = 0; i < n; i++) {
		gf_collector_sample(&c, 1000000 + i * step);
		cpu += c.cpu_ms_last;
	}
	gf_collector_close(&c);
	return cpu / n;
}

struct agent {
	pid_t pid;
	FILE *err;
	int port;
};

/* Start `bin agent` on a port the kernel picks at `interval`, with the
 * environment as it is; its stderr says which port. */
static int agent_start(const char *bin, const char *interval, struct agent *a)
{
	char path[512], cmd[] = "agent", lopt[] = "--listen",
			any[] = "127.0.0.1:0", iopt[] = "--interval", every[32];
	snprintf(path, sizeof(path), "%s", bin);
	snprintf(every, sizeof(every), "%s", interval);
	char *av[] = { path, cmd, lopt, any, iopt, every, NULL };
	int err[2];
	posix_spawn_file_actions_t fa;
	if (pipe(err) != 0 || posix_spawn_file_actions_init(&fa) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, err[1], 2) != 0 ||
	    posix_spawn_file_actions_addclose(&fa, err[0]) != 0 ||
	    posix_spawn(&a->pid, bin, &fa, NULL, av, environ) != 0) {
		printf("# cannot start the agent\n");
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(err[1]);
	a->err = fdopen(err[0], "r");
	a->port = 0;
	char line[512];
	static const char say[] = "listening on http://127.0.0.1:";
	while (a->port == 0 && a->err && fgets(line, sizeof(line), a->err)) {
		const char *at = strstr(line, say);
		if (at)
			a->port = (int)strtol(at + sizeof(say) - 1, NULL, 10);
	}
	if (a->port == 0) {
		printf("# the agent did not say its port\n");
		kill(a->pid, SIGTERM);
		waitpid(a->pid, NULL, 0);
		return -1;
	}
	return 0;
}

static void agent_stop(struct agent *a)
{
	kill(a->pid, SIGTERM);
	waitpid(a->pid, NULL, 0);
	if (a->err)
		fclose(a->err);
}

/* A /proc/PID/status field in MiB (VmRSS, VmHWM), or -1. */
static double status_mib(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	double v = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtod(line + n + 1, NULL) / 1024.0;
	if (f)
		fclose(f);
	return v;
}

/* CPU time of every thread of pid (ms), from schedstat (ns); -1. */
static double process_cpu_ms(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	double ns = 0;
	const struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char p[320];
		snprintf(p, sizeof(p), "/proc/%d/task/%s/schedstat", (int)pid,
			 de->d_name);
		FILE *f = fopen(p, "r");
		unsigned long long run = 0;
		if (f && fscanf(f, "%llu", &run) == 1)
			ns += (double)run;
		if (f)
			fclose(f);
	}
	closedir(d);
	return ns / 1e6;
}

/* gpufleet_samples_total from the agent's page, or -1. */
static long samples_of(int port, char *buf, size_t size)
{
	if (get(port, "/metrics", buf, size) < 0)
		return -1;
	const char *at = strstr(buf, "\ngpufleet_samples_total ");
	return at ? strtol(at + 24, NULL, 10) : -1;
}

/*
 * The agent on the H200 with the host's call costs, at --interval 100ms
 * and 1s side by side: CPU per sample from 1 s after their start to
 * 31.5 s, so that every slow counter's read is in (energy's, every 30 s,
 * once), and the 100 ms one's peak RSS.
 */
static void real_costs_agents(const char *bin, const char *fixture)
{
	static char buf[1 << 20];
	static const char *const every[2] = { "100ms", "1s" };
	static const char *const name[2] = { "", ".1s" };
	struct agent a[2];
	long s0[2], s1[2];
	double c0[2], c1[2];
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", fixture, 1);
	setenv("GPUFLEET_FAKE_NVML_COSTS", "h200", 1);
	int rc = agent_start(bin, every[0], &a[0]);
	if (rc == 0 && agent_start(bin, every[1], &a[1]) != 0) {
		agent_stop(&a[0]);
		rc = -1;
	}
	unsetenv("GPUFLEET_FAKE_NVML_COSTS");
	if (rc != 0)
		return;
	sleep_ms(1000);
	for (int i = 0; i < 2; i++) {
		s0[i] = samples_of(a[i].port, buf, sizeof(buf));
		c0[i] = process_cpu_ms(a[i].pid);
	}
	sleep_ms(30500);
	for (int i = 0; i < 2; i++) {
		s1[i] = samples_of(a[i].port, buf, sizeof(buf));
		c1[i] = process_cpu_ms(a[i].pid);
		if (s0[i] >= 0 && s1[i] > s0[i] && c0[i] >= 0)
			printf("BENCH agent.cpu_per_sample.real_costs%s %.3f "
			       "ms\n# %ld samples at --interval %s, %.1f ms of "
			       "CPU\n",
			       name[i],
			       (c1[i] - c0[i]) / (double)(s1[i] - s0[i]),
			       s1[i] - s0[i], every[i], c1[i] - c0[i]);
		else
			printf("# cannot measure the agent's CPU at --interval "
			       "%s\n",
			       every[i]);
	}
	printf("BENCH agent.rss.real_costs %.1f MiB\n",
	       status_mib(a[0].pid, "VmHWM"));
	agent_stop(&a[0]);
	agent_stop(&a[1]);
}

/* The 8-GPU agent scraped: latencies, and its RSS. */
static void scrape_agent(const char *bin, const char *fixture)
{
	static char buf[1 << 20];
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", fixture, 1);
	struct agent a;
	if (agent_start(bin, "1s", &a) != 0)
		return;
	for (int i = 0;
	     i < 100 && get(a.port, "/metrics", buf, sizeof(buf)) < 0; i++)
		sleep_ms(50);
	/* a second sample, so the page has GPM's families too */
	sleep_ms(1500);
	enum { N = 2000 };
	static double lat[N];
	int ok = 0;
	for (int i = 0; i < N; i++) {
		double t = get(a.port, "/metrics", buf, sizeof(buf));
		if (t >= 0)
			lat[ok++] = t;
	}
	qsort(lat, (size_t)ok, sizeof(double), cmp);
	if (ok > 0) {
		printf("BENCH agent.scrape.p50 %.3f ms\n", lat[ok / 2]);
		printf("BENCH agent.scrape.p99 %.3f ms\n", lat[ok * 99 / 100]);
		printf("# %d scrapes, page %zu bytes\n", ok, strlen(buf));
	}
	printf("BENCH agent.rss %.1f MiB\n", status_mib(a.pid, "VmRSS"));
	agent_stop(&a);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: agent_bench GPUFLEET_BIN FAKE_LIB "
				"[SHARED_DIR]\n");
		return 2;
	}
	const char *env = getenv("GPUFLEET_SHARED");
	const char *shared = argc > 3	   ? argv[3]
			     : env && *env ? env
					   : "../shared";
	char fixture[] = "/tmp/gf-agent-bench-XXXXXX";
	char h200_text[] = "/tmp/gf-agent-bench-h200-XXXXXX";
	int fd = mkstemp(fixture);
	close(fd);
	fd = mkstemp(h200_text);
	close(fd);
	write_fixture(fixture);
	char h200[512];
	h200_fixture(shared, h200, sizeof(h200), h200_text);
	setenv("GPUFLEET_NVML_LIBRARY", argv[2], 1);
	unsetenv("GPUFLEET_FAKE_NVML_COSTS");

	double cpu = collector_cpu(fixture, false, 200, 1000);
	printf("BENCH agent.collect.cpu_per_sample %.3f ms\n", cpu);
	printf("# 8 GPUs, 7 MIG instances each, calls free\n");
	setenv("GPUFLEET_FAKE_NVML_COSTS", "h200", 1);
	cpu = collector_cpu(h200, true, 10, 100);
	printf("BENCH agent.collect.cpu_per_sample.real_costs.every_call %.3f "
	       "ms\n",
	       cpu);
	cpu = collector_cpu(h200, false, 600, 100);
	printf("BENCH agent.collect.cpu_per_sample.real_costs %.3f ms\n", cpu);
	cpu = collector_cpu(h200, false, 120, 1000);
	printf("BENCH agent.collect.cpu_per_sample.real_costs.1s %.3f ms\n",
	       cpu);
	printf("# the H200 (%s) with its host's call costs: 60 s of samples "
	       "100 ms apart, 120 s 1 s apart\n",
	       h200);
	unsetenv("GPUFLEET_FAKE_NVML_COSTS");

	real_costs_agents(argv[1], h200);
	scrape_agent(argv[1], fixture);
	unlink(fixture);
	unlink(h200_text);
	return 0;
}
