/*
 * costs.c - the fake NVML's cost mode.  GPUFLEET_FAKE_NVML_COSTS=h200
 * (read at nvmlInit) makes each call below cost what it cost on our H200
 * host, so a benchmark of the agent on the fake measures the CPU it would
 * spend on that host; without it every call is free, as before.
 *
 * The figures are ours: measured on the H200 host recorded in
 * ../shared/fixtures/h200 (README.md there, "NVML call cost (mean of 20,
 * ms)", driver 580.159.04).  A call costs CPU time, burnt busy-waiting on
 * CLOCK_THREAD_CPUTIME_ID so that it counts as the caller's CPU, as the
 * driver's ioctls do ("mostly system time" on that host); and blocked
 * time, slept.  Only nvmlDeviceGetPcieThroughput blocks: it waits about
 * 20 ms for the PCIe counters to move, so of its 21.0 ms we charge 20 ms
 * asleep and 1.0 ms of CPU.  Calls the README does not time (encoder and
 * decoder utilisation, ECC totals, GPM metrics, MIG enumeration, events)
 * cost nothing here: the figure a bench reports is a floor for them.
 * nvmlGpmMigSampleGet is charged, and counted, as nvmlGpmSampleGet.
 *
 * Every call of the table is also counted, cost mode or not:
 * gf_fake_nvml_calls("nvmlDeviceGetTotalEnergyConsumption") (exported;
 * since the last nvmlInit) lets a test check how often gpufleet asks, and
 * gf_fake_nvml_cost_ms() what those calls cost on the H200 host (the
 * table's CPU figures times the counts), a figure no clock or load moves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake.h"

struct call_cost {
	const char *name; /* the entry point */
	double cpu_ms;	  /* CPU time; < 0: not timed, free */
	double blocked_ms;
};

/* ../shared/fixtures/h200/README.md, "NVML call cost (mean of 20, ms)" */
static const struct call_cost h200[C_N] = {
	[C_UTIL] = { "nvmlDeviceGetUtilizationRates", 0.001, 0 },
	[C_MEM_V2] = { "nvmlDeviceGetMemoryInfo_v2", 0.006, 0 },
	[C_POWER] = { "nvmlDeviceGetPowerUsage", 0.001, 0 },
	[C_TEMP] = { "nvmlDeviceGetTemperature", 0.001, 0 },
	[C_CLOCK] = { "nvmlDeviceGetClockInfo", 0.001, 0 },
	[C_PROCS] = { "nvmlDeviceGetComputeRunningProcesses", 0.005, 0 },
	[C_FIELDS] = { "nvmlDeviceGetFieldValues", 0.009, 0 },
	[C_GPM_SAMPLE] = { "nvmlGpmSampleGet", 0.031, 0 },
	[C_REMAP] = { "nvmlDeviceGetRemappedRows", 0.002, 0 },
	[C_REPLAY] = { "nvmlDeviceGetPcieReplayCounter", 0.18, 0 },
	[C_MIG_MODE] = { "nvmlDeviceGetMigMode", 0.21, 0 },
	[C_ENERGY] = { "nvmlDeviceGetTotalEnergyConsumption", 4.1, 0 },
	[C_PCIE_TPUT] = { "nvmlDeviceGetPcieThroughput", 1.0, 20.0 },
	[C_ENC] = { "nvmlDeviceGetEncoderUtilization", -1, 0 },
	[C_DEC] = { "nvmlDeviceGetDecoderUtilization", -1, 0 },
	[C_ECC] = { "nvmlDeviceGetTotalEccErrors", -1, 0 },
};

static const struct call_cost *table; /* NULL: every call free */
static unsigned long counts[C_N];

int costs_init(void)
{
	const char *v = getenv("GPUFLEET_FAKE_NVML_COSTS");
	table = NULL;
	memset(counts, 0, sizeof(counts));
	if (v == NULL || *v == '\0')
		return 0;
	if (strcmp(v, "h200") == 0) {
		table = h200;
		return 0;
	}
	fprintf(stderr,
		"fake nvml: GPUFLEET_FAKE_NVML_COSTS='%s': no such cost "
		"table (h200)\n",
		v);
	return -1;
}

static double thread_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void burn(double cpu_ms, double blocked_ms)
{
	if (blocked_ms > 0) {
		long ns = (long)(blocked_ms * 1e6);
		struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	if (cpu_ms <= 0)
		return;
	double end = thread_cpu_ms() + cpu_ms;
	while (thread_cpu_ms() < end)
		;
}

void cost(enum fake_call c)
{
	counts[c]++;
	if (table)
		burn(table[c].cpu_ms, table[c].blocked_ms);
}

/* exported for tests: calls of entry point `name` since the last
 * nvmlInit; ~0UL when the fake does not count it */
unsigned long gf_fake_nvml_calls(const char *name);
unsigned long gf_fake_nvml_calls(const char *name)
{
	for (int c = 0; c < C_N; c++)
		if (strcmp(h200[c].name, name) == 0)
			return counts[c];
	return ~0UL;
}

/* exported for tests: the CPU ms the calls counted since the last
 * nvmlInit cost on the H200 host (calls it does not time count 0) */
double gf_fake_nvml_cost_ms(void);
double gf_fake_nvml_cost_ms(void)
{
	double sum = 0;
	for (int c = 0; c < C_N; c++)
		if (h200[c].cpu_ms > 0)
			sum += (double)counts[c] * h200[c].cpu_ms;
	return sum;
}
