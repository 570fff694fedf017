/*
 * test_collect.c - the collector's schedule against the fake NVML: the
 * slow counters (energy, PCIe throughput, replays, ECC, MIG mode) read
 * once per their period, counted by the fake; their last values kept
 * between reads with the time they were read, and only fresh reads in
 * the ring; a node's GPUs paying in turn; the CPU a sample costs on the
 * H200 host (the calls made times the fake's table of that host's call
 * costs); and the H200 host's NVML dump sampled.
 */
#include <dlfcn.h>
#include <sys/stat.h>

#include "helpers.h"
#include "telemetry/collect.h"

static char fake[512];

/* A fixture of `text` in a temporary file, used by the next open. */
static void use_text(char *path, size_t size, const char *text)
{
	snprintf(path, size, "/tmp/gf-collect-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	setenv("GPUFLEET_NVML_LIBRARY", fake, 1);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", path, 1);
	unsetenv("GPUFLEET_FAKE_NVML_COSTS");
}

/* How often the fake was asked `call` since the collector opened it. */
static unsigned long calls(const char *call)
{
	void *h = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	void *p = dlsym(h, "gf_fake_nvml_calls");
	assert_non_null(p);
	unsigned long (*count)(const char *);
	memcpy(&count, &p, sizeof(count));
	unsigned long n = count(call);
	dlclose(h);
	assert_true(n != ~0UL);
	return n;
}

static const char h100[] =
	"driver 550.54.15\n"
	"gpu 00000000:18:00.0\nname NVIDIA H100 80GB HBM3\nuuid GPU-a\n"
	"pci_device_id 0x233010DE\nmemory_total_mib 81559\nmig 0 0\n"
	"series power_mw 100000,200000\nseries pcie_rx_kbps 10,20,30\n"
	"ecc 1 0 2 0\n";

static int64_t at(int t)
{
	return 1000000 + (int64_t)t * 1000; /* wall ms of second t */
}

/* One sample a second for 61 s: each slow counter read at its period,
 * the rest every time. */
static void test_slow_counters_by_period(void **state)
{
	(void)state;
	char fx[64];
	use_text(fx, sizeof(fx), h100);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int t = 0; t <= 60; t++)
		gf_collector_sample(&c, at(t));
	assert_int_equal(calls("nvmlDeviceGetPowerUsage"), 61);
	assert_int_equal(calls("nvmlDeviceGetClockInfo"), 2 * 61);
	/* at 0, 30 and 60 s */
	assert_int_equal(calls("nvmlDeviceGetTotalEnergyConsumption"), 3);
	assert_int_equal(calls("nvmlDeviceGetPcieReplayCounter"), 3);
	assert_int_equal(calls("nvmlDeviceGetTotalEccErrors"), 4 * 3);
	/* every 10 s: TX and RX */
	assert_int_equal(calls("nvmlDeviceGetPcieThroughput"), 2 * 7);
	assert_int_equal(calls("nvmlDeviceGetMigMode"), 7);
	/* the ring holds what each sample read: energy at 0, 30 and 60 s;
	 * PCIe receive every 10 s */
	const struct gf_tgpu *g = &c.g[0];
	int energy = 0, rx = 0, power = 0;
	for (int i = 0; i < g->n; i++) {
		const struct gf_sample *s = gf_collector_recent(g, i);
		energy += s->valid >> GF_M_ENERGY & 1;
		rx += s->valid >> GF_M_PCIE_RX & 1;
		power += s->valid >> GF_M_POWER & 1;
	}
	assert_int_equal(energy, 3);
	assert_int_equal(rx, 7);
	assert_int_equal(power, 61);
	gf_collector_close(&c);
	unlink(fx);
}

/* Between reads, the page's values keep each slow counter's last value,
 * read when read_ms says; the ages follow. */
static void test_last_values_and_ages(void **state)
{
	(void)state;
	char fx[64];
	use_text(fx, sizeof(fx), h100);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int t = 0; t <= 45; t++)
		gf_collector_sample(&c, at(t));
	const struct gf_tgpu *g = &c.g[0];
	/* energy read at 30 s, the fake's 31st sample: 1 J at start plus
	 * 31 s of 200 W (the fake counts one second per sample) */
	assert_true(g->last.valid >> GF_M_ENERGY & 1);
	assert_true(g->last.v[GF_M_ENERGY] == 1000000.0 + 31 * 200000.0);
	assert_true(g->read_ms[GF_M_ENERGY] == at(30));
	assert_true(gf_collector_age_s(g, GF_M_ENERGY, at(45)) == 15.0);
	/* PCIe at 40 s: the series' last value, 30 KB/s */
	assert_true(g->last.v[GF_M_PCIE_RX] == 30 * 1024.0);
	assert_true(gf_collector_age_s(g, GF_M_PCIE_RX, at(45)) == 5.0);
	assert_true(g->last.v[GF_M_ECC_SBE_AGG] == 2);
	/* read every sample */
	assert_true(gf_collector_age_s(g, GF_M_POWER, at(45)) == 0.0);
	assert_true(gf_collector_age_s(g, GF_M_POWER, at(46)) == 1.0);
	/* what the fixture does not give: no value, no age */
	assert_false(g->last.valid >> GF_M_PROF_GR & 1);
	assert_true(gf_collector_age_s(g, GF_M_PROF_GR, at(45)) < 0);
	gf_collector_close(&c);
	unlink(fx);
}

/* A period of 0 reads a counter every sample, as the collector did
 * before it had a schedule. */
static void test_every_sample(void **state)
{
	(void)state;
	char fx[64];
	use_text(fx, sizeof(fx), h100);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int k = 0; k < GF_SLOW_COUNT; k++)
		c.slow_period_ms[k] = 0;
	for (int t = 0; t < 5; t++)
		gf_collector_sample(&c, at(t));
	assert_int_equal(calls("nvmlDeviceGetTotalEnergyConsumption"), 5);
	assert_int_equal(calls("nvmlDeviceGetPcieThroughput"), 10);
	assert_int_equal(calls("nvmlDeviceGetMigMode"), 5);
	gf_collector_close(&c);
	unlink(fx);
}

/* Two GPUs: the second's slow counters come due half a period after the
 * first's, so one sample does not pay for both; a wall clock that goes
 * back makes them due again. */
static void test_gpus_take_turns(void **state)
{
	(void)state;
	char fx[64];
	use_text(fx, sizeof(fx),
		 "gpu 00000000:18:00.0\nname A\nmemory_total_mib 1000\n"
		 "gpu 00000000:2A:00.0\nname B\nmemory_total_mib 1000\n");
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	assert_int_equal(c.n, 2);
	for (int t = 0; t <= 40; t++)
		gf_collector_sample(&c, at(t));
	/* GPU0 at 0 and 30 s, GPU1 at 0 and 45 s: not yet */
	assert_int_equal(calls("nvmlDeviceGetTotalEnergyConsumption"), 3);
	assert_true(c.g[0].read_ms[GF_M_ENERGY] == at(30));
	assert_true(c.g[1].read_ms[GF_M_ENERGY] == at(0));
	for (int t = 41; t <= 45; t++)
		gf_collector_sample(&c, at(t));
	assert_true(c.g[1].read_ms[GF_M_ENERGY] == at(45));
	/* the clock steps back an hour: read again at once */
	gf_collector_sample(&c, at(46) - 3600 * 1000);
	assert_true(c.g[0].read_ms[GF_M_ENERGY] == at(46) - 3600 * 1000);
	gf_collector_close(&c);
	unlink(fx);
}

/* What NVML does not give is not kept: no ECC totals without ECC, no MIG
 * enumeration without MIG mode. */
static void test_not_supported(void **state)
{
	(void)state;
	char fx[64];
	use_text(fx, sizeof(fx),
		 "gpu 00000000:18:00.0\nname A\nmemory_total_mib 1000\n");
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int t = 0; t <= 31; t++)
		gf_collector_sample(&c, at(t));
	for (int m = GF_M_ECC_SBE_VOL; m <= GF_M_ECC_DBE_AGG; m++)
		assert_false(c.g[0].last.valid >> m & 1);
	assert_false(c.g[0].mig_on);
	assert_int_equal(c.g[0].errors, 0); /* not supported is no error */
	gf_collector_close(&c);
	unlink(fx);
}

static const char h200[] =
	"driver 580.159.04\n"
	"gpu 00000000:00:06.0\nname NVIDIA H200\n"
	"uuid GPU-d1b61e09-1104-374d-b83c-f32dc17ca2d7\n"
	"pci_device_id 0x233510DE\nmemory_total_mib 143771\nmig 0 0\n"
	"gpm 1\nproc 1\n";

/* What the calls the fake was asked since the collector opened it cost
 * on the H200 host (its table: the call counts times each call's CPU). */
static double host_cost_ms(void)
{
	void *h = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	void *p = dlsym(h, "gf_fake_nvml_cost_ms");
	assert_non_null(p);
	double (*cost)(void);
	memcpy(&cost, &p, sizeof(cost));
	double ms = cost();
	dlclose(h);
	return ms;
}

/* The H200 host's CPU cost of n samples 100 ms apart from t0 (ms). */
static double cost_of(struct gf_collector *c, int n, int64_t t0)
{
	for (int i = 0; i < n; i++)
		gf_collector_sample(c, t0 + i * 100);
	return host_cost_ms();
}

/* With the H200 host's call costs (../shared/fixtures/h200/README.md, the
 * fake's table): every counter every sample costs what the host measured
 * (energy 4.1 ms, PCIe 2 x 1.0 ms of CPU, replays, MIG mode); the
 * schedule keeps 100 ms samples under 1 ms of CPU each.  The cost is the
 * calls made times the table's figures, not a clock: a loaded machine
 * gives the same figure. */
static void test_real_costs(void **state)
{
	(void)state;
	char fx[64];
	use_text(fx, sizeof(fx), h200);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int k = 0; k < GF_SLOW_COUNT; k++)
		c.slow_period_ms[k] = 0;
	double every = cost_of(&c, 3, at(0)) / 3;
	print_message("every counter every sample: %.3f ms of CPU\n", every);
	assert_true(every >= 4.1 + 2 * 1.0 + 0.18 + 0.21);
	gf_collector_close(&c);

	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	double sched = cost_of(&c, 300, at(0)) / 300; /* 30 s */
	print_message("the schedule, 100 ms apart: %.3f ms of CPU\n", sched);
	assert_true(sched <= 1.0);
	gf_collector_close(&c);
	unlink(fx);
}

/* The fake's cost mode refuses a table it does not have. */
static void test_unknown_cost_table(void **state)
{
	(void)state;
	char fx[64];
	use_text(fx, sizeof(fx), h200);
	setenv("GPUFLEET_FAKE_NVML_COSTS", "h900", 1);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), GF_ENVML);
	unsetenv("GPUFLEET_FAKE_NVML_COSTS");
	unlink(fx);
}

/* The H200 host's NVML dump, sampled: identity, memory as the driver
 * split it (615 MiB reserved, nothing used), GPM, MIG off. */
static void test_h200_dump(void **state)
{
	(void)state;
	char dump[512];
	shared_path(dump, sizeof(dump), "fixtures/h200/nvml-dump.json");
	if (access(dump, R_OK) != 0) {
		print_message("shared data absent: %s (set GPUFLEET_SHARED)\n",
			      dump);
		skip();
	}
	setenv("GPUFLEET_NVML_LIBRARY", fake, 1);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", dump, 1);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.driver, "580.159.04");
	const struct gf_tgpu *g = &c.g[0];
	assert_string_equal(g->name, "NVIDIA H200");
	assert_string_equal(g->uuid,
			    "GPU-d1b61e09-1104-374d-b83c-f32dc17ca2d7");
	assert_string_equal(g->busid, "00000000:00:06.0");
	assert_int_equal(g->devid, 0x2335);
	assert_true(g->gpm);
	gf_collector_sample(&c, at(0));
	gf_collector_sample(&c, at(1));
	assert_false(g->mig_on);
	assert_int_equal(g->last.nmig, 0);
	assert_true(g->last.v[GF_M_FB_USED] == 0);
	assert_true(g->last.v[GF_M_FB_RESERVED] == 615);  /* 644939776 B */
	assert_true(g->last.v[GF_M_FB_FREE] == 143155);	  /* 150109880320 B */
	assert_true(g->last.valid >> GF_M_PROF_GR & 1);	  /* 2nd GPM sample */
	assert_true(g->last.v[GF_M_ENERGY] >= 2786346.0); /* the dump's */
	assert_false(g->last.nvlink_ok); /* NVLink: Not Supported */
	gf_collector_close(&c);
}

/* A GPU's pods for the heartbeat: each pod once, Slurm jobs and bare
 * processes left out, at most max devices; with no MIG instance, all
 * under the GPU's UUID. */
static void test_pods_of_gpu(void **state)
{
	(void)state;
	struct gf_tgpu *g = calloc(1, sizeof(*g));
	assert_non_null(g);
	snprintf(g->uuid, sizeof(g->uuid), "GPU-a");
	g->nprocs = 5;
	for (int i = 0; i < 5; i++)
		g->proc_gi[i] = GF_GI_NONE;
	snprintf(g->owners[0].pod_uid, sizeof(g->owners[0].pod_uid), "p1");
	snprintf(g->owners[1].slurm_job, sizeof(g->owners[1].slurm_job), "42");
	snprintf(g->owners[2].pod_uid, sizeof(g->owners[2].pod_uid), "p2");
	snprintf(g->owners[3].pod_uid, sizeof(g->owners[3].pod_uid), "p1");
	/* owners[4]: a bare process */
	struct gf_dev_pods out[2];
	assert_int_equal(gf_collector_pods(g, out, 2), 1);
	assert_string_equal(out[0].uuid, "GPU-a");
	assert_int_equal(out[0].npods, 2);
	assert_string_equal(out[0].pods[0], "p1");
	assert_string_equal(out[0].pods[1], "p2");
	/* on GPU instance 3, which was not listed: still the GPU's */
	g->proc_gi[2] = 3;
	assert_int_equal(gf_collector_pods(g, out, 2), 1);
	assert_int_equal(out[0].npods, 2);
	/* listed, with its UUID: its own device; max devices kept */
	g->gi_seen = 1u << 3;
	snprintf(g->gi_uuid[3], sizeof(g->gi_uuid[3]), "MIG-b");
	assert_int_equal(gf_collector_pods(g, out, 2), 2);
	assert_string_equal(out[1].uuid, "MIG-b");
	assert_int_equal(out[1].npods, 1);
	assert_string_equal(out[1].pods[0], "p2");
	assert_int_equal(gf_collector_pods(g, out, 1), 1);
	assert_int_equal(out[0].npods, 1);
	g->nprocs = 0;
	assert_int_equal(gf_collector_pods(g, out, 2), 0);
	free(g);
}

static const char two_gpus[] =
	"driver 550.54.15\n"
	"profileset h100\n"
	"gi_profile 0 19 1 1 0,1,2,3,4,5,6 7\n"
	"gi_profile 9 15 2 1 0,2,4,6 4\n"
	"gpu 00000000:18:00.0\nname NVIDIA H100 80GB HBM3\nuuid GPU-whole\n"
	"pci_device_id 0x233010DE\nmemory_total_mib 81559\nmig 0 0\n"
	"gi_profiles h100\nproc 501\n"
	"gpu 00000000:2A:00.0\nname NVIDIA H100 80GB HBM3\nuuid GPU-mig\n"
	"pci_device_id 0x233010DE\nmemory_total_mib 81559\nmig 1 1\n"
	"gi_profiles h100\n"
	"gi 15 4 busy 502\n" /* GPU instance 1 */
	"gi 19 0 busy 503\n" /* 2: a Slurm job's */
	"gi 19 1 busy 504\n" /* 3: the same pod as on 1 */
	"gi 19 2\n";	     /* 4: idle */

/* One cgroup file of a fake /proc: ROOT/PID/cgroup holding text. */
static void cgroup_file(const char *root, unsigned pid, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%u", root, pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%u/cgroup", root, pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Through the fake NVML: a pod on a whole GPU under the GPU's UUID; a
 * pod on a MIG instance under that instance's (the fake's MIG UUIDs:
 * GPU index 1, GPU instance id), once though it runs on two; a Slurm
 * job's process on an instance left out. */
static void test_pods_by_device(void **state)
{
	(void)state;
	char fx[64], root[64];
	use_text(fx, sizeof(fx), two_gpus);
	snprintf(root, sizeof(root), "/tmp/gf-proc-XXXXXX");
	assert_non_null(mkdtemp(root));
	cgroup_file(root, 501,
		    "0::/kubepods/burstable/"
		    "pod11111111-1111-4111-8111-111111111111/c1\n");
	cgroup_file(root, 502,
		    "0::/kubepods/burstable/"
		    "pod22222222-2222-4222-8222-222222222222/c2\n");
	cgroup_file(root, 503, "7:devices:/slurm/uid_1000/job_77/step_0\n");
	cgroup_file(root, 504,
		    "0::/kubepods/burstable/"
		    "pod22222222-2222-4222-8222-222222222222/c3\n");
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	c.proc_root = root;
	gf_collector_sample(&c, at(0));
	assert_int_equal(c.n, 2);
	struct gf_dev_pods out[GF_TEL_MAX_MIG + 1];
	assert_int_equal(gf_collector_pods(&c.g[0], out, GF_TEL_MAX_MIG + 1),
			 1);
	assert_string_equal(out[0].uuid, "GPU-whole");
	assert_int_equal(out[0].npods, 1);
	assert_string_equal(out[0].pods[0],
			    "11111111-1111-4111-8111-111111111111");
	assert_int_equal(c.g[1].nprocs, 3);
	assert_int_equal(gf_collector_pods(&c.g[1], out, GF_TEL_MAX_MIG + 1),
			 2);
	assert_string_equal(out[0].uuid,
			    "MIG-fa4e0000-0001-4000-8000-000000000001");
	assert_int_equal(out[0].npods, 1);
	assert_string_equal(out[0].pods[0],
			    "22222222-2222-4222-8222-222222222222");
	assert_string_equal(out[1].uuid,
			    "MIG-fa4e0000-0001-4000-8000-000000000003");
	assert_int_equal(out[1].npods, 1);
	assert_string_equal(out[1].pods[0],
			    "22222222-2222-4222-8222-222222222222");
	gf_collector_close(&c);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, fx);
	assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	fake_nvml_path(argv[0], fake, sizeof(fake));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_counters_by_period),
		cmocka_unit_test(test_last_values_and_ages),
		cmocka_unit_test(test_every_sample),
		cmocka_unit_test(test_gpus_take_turns),
		cmocka_unit_test(test_not_supported),
		cmocka_unit_test(test_real_costs),
		cmocka_unit_test(test_unknown_cost_table),
		cmocka_unit_test(test_h200_dump),
		cmocka_unit_test(test_pods_of_gpu),
		cmocka_unit_test(test_pods_by_device),
	};
	return cmocka_run_group_tests_name("collect", tests, NULL, NULL);
}
