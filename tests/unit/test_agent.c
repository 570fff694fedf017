/*
 * test_agent.c - the agent's collector and page: dcgm-exporter's names,
 * types, help and label keys (from its default counters CSV), last good
 * values with a staleness gauge while NVML fails, a GPU off the bus, and
 * the counters CSV parser.
 */
#include "helpers.h"
#include "telemetry/cgroup.h"
#include "telemetry/diagnose.h"
#include "telemetry/expo.h"

static char fake[512];

static void use(const char *fixture)
{
	setenv("GPUFLEET_NVML_LIBRARY", fake, 1);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", fixture, 1);
}

/* "# TYPE name type" lines of a page, and the label keys of a sample. */
static bool has_family(const char *page, const char *name, const char *type,
		       const char *help)
{
	char want[512];
	snprintf(want, sizeof(want), "# HELP %s %s\n# TYPE %s %s\n", name, help,
		 name, type);
	return strstr(page, want) != NULL;
}

static void test_names_match_dcgm_exporter(void **state)
{
	(void)state;
	char csv[512];
	shared_path(csv, sizeof(csv),
		    "reference/dcgm-exporter/default-counters.csv");
	FILE *f = fopen(csv, "r");
	if (!f) {
		print_message("shared data absent: %s\n", csv);
		skip();
	}
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, &e), 0);
	gf_collector_sample(&c, 1000);
	gf_collector_sample(&c, 2000); /* GPM needs two samples */
	struct gf_counters k;
	assert_int_equal(gf_counters_read(csv, &k, &e), 0);
	assert_true(k.driver_label);
	struct gf_buf page;
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render(&c, &k, 2000, &page), 0);
	/* what dcgm-exporter's default set has and gpufleet does not give:
	 * vGPU licence, memory temperature (DCGM's own field), NVLink
	 * bandwidth.  Exactly these are absent. */
	static const char *const absent[] = {
		"DCGM_FI_DEV_MEMORY_TEMP",
		"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
		"DCGM_FI_DEV_VGPU_LICENSE_STATUS",
	};
	char line[512];
	int present = 0, missing = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		char name[128], type[32], help[256];
		if (sscanf(line, " %127[^, ] , %31[^, ] , %255[^\n]", name,
			   type, help) != 3 ||
		    !strcmp(type, "label"))
			continue;
		bool is_absent = false;
		for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
			is_absent |= !strcmp(absent[i], name);
		char *end = help + strlen(help);
		while (end > help && (end[-1] == ' ' || end[-1] == '\r'))
			*--end = '\0';
		if (is_absent) {
			char t[160];
			snprintf(t, sizeof(t), "# TYPE %s ", name);
			assert_null(strstr(gf_buf_str(&page), t));
			missing++;
		} else {
			if (!has_family(gf_buf_str(&page), name, type, help))
				print_message("family %s (%s) missing\n", name,
					      type);
			assert_true(has_family(gf_buf_str(&page), name, type,
					       help));
			present++;
		}
	}
	fclose(f);
	assert_int_equal(missing, 3);
	assert_int_equal(present, 22);
	/* label keys of a GPU sample, in dcgm-exporter's order */
	const char *s = strstr(gf_buf_str(&page), "\nDCGM_FI_DEV_GPU_TEMP{");
	assert_non_null(s);
	assert_non_null(strstr(s, "{gpu=\"0\",UUID=\"GPU-"));
	const char *keys[] = { "gpu=",
			       ",UUID=",
			       ",pci_bus_id=",
			       ",device=",
			       ",modelName=",
			       ",Hostname=",
			       ",DCGM_FI_DRIVER_VERSION=\"550.54.15\"}" };
	const char *p = s;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *q = strstr(p, keys[i]);
		assert_non_null(q);
		p = q;
	}
	/* MIG instances carry GPU_I_PROFILE and GPU_I_ID */
	assert_non_null(strstr(gf_buf_str(&page),
			       "GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\""));
	gf_buf_release(&page);
	gf_collector_close(&c);
}

static void test_faults(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent-faults.nvml");
	struct gf_collector c;
	struct gf_err e;
	struct gf_counters k;
	gf_counters_default(&k);
	assert_int_equal(gf_collector_open(&c, &e), 0);
	for (int t = 1; t <= 4; t++)
		gf_collector_sample(&c, t * 1000);
	/* GPU 0 fell off the bus at its 3rd sample; its values stop at 2 */
	assert_true(c.g[0].lost);
	assert_int_equal(c.g[0].last_good_ms, 2000);
	/* GPU 1 failed samples 2 and 4: it shows sample 3's power, aged */
	assert_false(c.g[1].lost);
	assert_int_equal(c.g[1].last_good_ms, 3000);
	assert_int_equal(c.g[1].errors, 2);
	assert_true(c.g[1].last.v[GF_M_POWER] == 220.0);
	assert_int_equal(c.g[1].n, 2); /* ring: samples 1 and 3 */
	assert_true(gf_collector_recent(&c.g[1], 0)->v[GF_M_POWER] == 220.0);
	assert_true(gf_collector_recent(&c.g[1], 1)->v[GF_M_POWER] == 200.0);
	assert_null(gf_collector_recent(&c.g[1], 2));
	struct gf_buf page;
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render(&c, &k, 4000, &page), 0);
	const char *pg = gf_buf_str(&page);
	assert_non_null(strstr(pg, "gpufleet_gpu_up{gpu=\"0\","));
	assert_non_null(strstr(pg, "000000000300\"} 0\n"));
	assert_non_null(strstr(pg, "000000000301\"} 1\n"));
	assert_non_null(strstr(pg, "gpufleet_sample_age_seconds{gpu=\"1\","
				   "UUID=\"GPU-5e1f0c2a-7d3b-4c8e-9a60-"
				   "000000000301\"} 1.000\n"));
	/* the page is whole: every family's TYPE precedes its samples and
	 * the last line ends with a newline */
	assert_int_equal(pg[page.len - 1], '\n');
	gf_buf_release(&page);
	gf_collector_close(&c);
}

/* The value of the sample of `family` whose labels contain `has`. */
static double sample_value(const char *page, const char *family,
			   const char *has)
{
	char head[160];
	snprintf(head, sizeof(head), "\n%s{", family);
	for (const char *p = strstr(page, head); p; p = strstr(p + 1, head)) {
		const char *end = strchr(p + 1, '\n');
		const char *q = strstr(p, has);
		if (q && q < end)
			return strtod(strstr(p, "} ") + 2, NULL);
	}
	return -1;
}

static void test_gpm(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	struct gf_err e;
	struct gf_counters k;
	gf_counters_default(&k);
	assert_int_equal(gf_collector_open(&c, &e), 0);
	assert_true(c.g[0].gpm);
	assert_false(c.g[1].gpm);
	struct gf_buf page;
	gf_buf_init(&page, 1 << 20);
	/* one GPM sample gives no interval yet: no family */
	gf_collector_sample(&c, 1000);
	assert_int_equal(gf_expo_render(&c, &k, 1000, &page), 0);
	assert_null(strstr(gf_buf_str(&page), "DCGM_FI_PROF_GR_ENGINE"));
	gf_buf_release(&page);
	gf_collector_sample(&c, 2000);
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render(&c, &k, 2000, &page), 0);
	const char *pg = gf_buf_str(&page);
	/* percent from GPM, ratios as DCGM; the second sample's values */
	assert_true(sample_value(pg, "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
				 "gpu=\"0\"") == 0.9);
	assert_true(sample_value(pg, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
				 "gpu=\"0\"") == 0.64);
	assert_true(sample_value(pg, "DCGM_FI_PROF_DRAM_ACTIVE", "gpu=\"0\"") ==
		    0.45);
	/* GPU 1 has no GPM: no sample for it */
	assert_true(sample_value(pg, "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
				 "gpu=\"1\"") < 0);
	/* per GPU instance, from its own GPM samples */
	assert_true(sample_value(pg, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
				 "GPU_I_ID=\"1\"") == 0.125);
	assert_true(sample_value(pg, "DCGM_FI_PROF_DRAM_ACTIVE",
				 "GPU_I_ID=\"2\"") == 0.2);
	/* SM activity is opt-in, as in dcgm-exporter's default CSV */
	assert_null(strstr(pg, "DCGM_FI_PROF_SM_ACTIVE"));
	assert_true(c.g[0].last.v[GF_M_PROF_SM_ACTIVE] == 0.82);
	gf_buf_release(&page);
	gf_collector_close(&c);
}

/* A GPU busy by its duty cycle whose SMs do nothing: idle by GPM's SM
 * activity, not by utilisation alone. */
static int idle_hits(bool gpm)
{
	char path[] = "/tmp/gf-fake-XXXXXX";
	int fd = mkstemp(path);
	char text[512];
	snprintf(text, sizeof(text),
		 "driver 550.54.15\ngpu 00000000:18:00.0\n"
		 "name NVIDIA H100 80GB HBM3\nuuid GPU-idle\n"
		 "pci_device_id 0x233010DE\nmemory_total_mib 81559\n"
		 "series util 90\nseries fb_used_mib 40960\nproc 4242\n%s",
		 gpm ? "gpm 1\nseries sm_active 0.5\n" : "");
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	use(path);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, &e), 0);
	for (int t = 1; t <= 12; t++)
		gf_collector_sample(&c, t * 1000);
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = 10;
	struct gf_buf page;
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render_diag(&c, &o, &page), 0);
	int hit = strstr(gf_buf_str(&page), "reason=\"allocated-idle\"} 1") !=
		  NULL;
	gf_buf_release(&page);
	gf_collector_close(&c);
	unlink(path);
	return hit;
}

static void test_idle_by_sm_activity(void **state)
{
	(void)state;
	assert_int_equal(idle_hits(false), 0); /* 90 % duty cycle: busy */
	assert_int_equal(idle_hits(true), 1);  /* SM active 0.5 %: idle */
}

/* Metrics dcgm-exporter's default CSV comments out come only when a
 * counters file lists them: ECC totals, SM activity. */
static void test_opt_in_counters(void **state)
{
	(void)state;
	char path[] = "/tmp/gf-counters-XXXXXX";
	int fd = mkstemp(path);
	const char *text = "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL, counter, x\n"
			   "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL, counter, x\n"
			   "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL, counter, x\n"
			   "DCGM_FI_PROF_SM_ACTIVE, gauge, x\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct gf_counters k, dflt;
	struct gf_err e;
	assert_int_equal(gf_counters_read(path, &k, &e), 0);
	unlink(path);
	assert_int_equal(k.n, 4);
	gf_counters_default(&dflt);
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	assert_int_equal(gf_collector_open(&c, &e), 0);
	gf_collector_sample(&c, 1000);
	gf_collector_sample(&c, 2000);
	struct gf_buf page;
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render(&c, &k, 2000, &page), 0);
	const char *pg = gf_buf_str(&page);
	assert_true(sample_value(pg, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
				 "gpu=\"0\"") == 12);
	assert_true(sample_value(pg, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
				 "gpu=\"0\"") == 340);
	assert_true(sample_value(pg, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
				 "gpu=\"0\"") == 1);
	/* in the file's order; GPU 1 has no ECC: no sample */
	assert_true(strstr(pg, "# TYPE DCGM_FI_DEV_ECC_DBE_AGG_TOTAL counter") <
		    strstr(pg, "# TYPE DCGM_FI_DEV_ECC_SBE_AGG_TOTAL counter"));
	assert_true(sample_value(pg, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
				 "gpu=\"1\"") < 0);
	assert_true(sample_value(pg, "DCGM_FI_PROF_SM_ACTIVE", "gpu=\"0\"") ==
		    0.82);
	assert_null(strstr(pg, "DCGM_FI_DEV_GPU_TEMP"));
	gf_buf_release(&page);
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render(&c, &dflt, 2000, &page), 0);
	assert_null(strstr(gf_buf_str(&page), "_ECC_"));
	/* NVLink counters are gpufleet's own, in every page; KiB -> bytes */
	assert_true(sample_value(gf_buf_str(&page),
				 "gpufleet_nvlink_tx_bytes_total",
				 "gpu=\"0\"") == 3000 * 1024.0);
	assert_true(sample_value(gf_buf_str(&page),
				 "gpufleet_nvlink_rx_bytes_total",
				 "gpu=\"0\"") == 500 * 1024.0);
	assert_true(sample_value(gf_buf_str(&page),
				 "gpufleet_nvlink_tx_bytes_total",
				 "gpu=\"1\"") < 0);
	gf_buf_release(&page);
	gf_collector_close(&c);
}

static void test_counters_csv(void **state)
{
	(void)state;
	char path[] = "/tmp/gf-counters-XXXXXX";
	int fd = mkstemp(path);
	const char *text = "# comment\n\nDCGM_FI_DEV_GPU_UTIL, gauge, x\n"
			   "DCGM_FI_DEV_MEMORY_TEMP, gauge, not ours\n"
			   "DCGM_FI_DRIVER_VERSION, label, Driver Version\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct gf_counters k;
	struct gf_err e;
	assert_int_equal(gf_counters_read(path, &k, &e), 0);
	assert_int_equal(k.n, 1);
	assert_int_equal(k.order[0], GF_M_GPU_UTIL);
	assert_int_equal(k.nskipped, 1);
	assert_true(k.driver_label);
	FILE *f = fopen(path, "w");
	fputs("DCGM_FI_DEV_GPU_UTIL, counter, wrong type\n", f);
	fclose(f);
	assert_int_equal(gf_counters_read(path, &k, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ":1: DCGM_FI_DEV_GPU_UTIL is a gauge"));
	f = fopen(path, "w");
	fputs("DCGM_FI_DEV_GPU_UTIL, gauge, x\nDCGM_FI_DEV_FB_USED, rate, y\n",
	      f);
	fclose(f);
	assert_int_equal(gf_counters_read(path, &k, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ":2: field type 'rate'"));
	unlink(path);
}

static void test_diagnose_rules(void **state)
{
	(void)state;
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = 60;
	struct gf_diag_point p[61];
	struct gf_diag_result r;
	/* idle: held and no work for the whole window */
	for (int i = 0; i <= 60; i++)
		p[i] = (struct gf_diag_point){
			i * 1000, 0, 30000, 81559, 0, 1
		};
	assert_int_equal(gf_diagnose(p, 61, false, &o, &r), 1);
	assert_true(r.hit[GF_DIAG_IDLE]);
	/* one sample of work in the window: not idle */
	p[30].util = 5;
	gf_diagnose(p, 61, false, &o, &r);
	assert_false(r.hit[GF_DIAG_IDLE]);
	/* nothing holds it (no process, little memory): not idle either */
	for (int i = 0; i <= 60; i++)
		p[i] = (struct gf_diag_point){ i * 1000, 0, 100, 81559, 0, 0 };
	assert_int_equal(gf_diagnose(p, 61, false, &o, &r), 0);
	/* too short a history for the window: no verdict */
	for (int i = 0; i <= 10; i++)
		p[i] = (struct gf_diag_point){
			i * 1000, 0, 30000, 81559, 0, 1
		};
	assert_int_equal(gf_diagnose(p, 11, false, &o, &r), 0);
	/* bursts without PCIe traffic in the gaps: not starvation */
	for (int i = 0; i <= 60; i++)
		p[i] = (struct gf_diag_point){ i * 1000, i % 2 ? 90 : 0,
					       60000,	 81559,
					       1e8,	 1 };
	gf_diagnose(p, 61, false, &o, &r);
	assert_false(r.hit[GF_DIAG_STARVATION]);
	for (int i = 0; i <= 60; i += 2)
		p[i].pcie_rx = 3e9; /* input arrives in the gaps */
	gf_diagnose(p, 61, false, &o, &r);
	assert_true(r.hit[GF_DIAG_STARVATION]);
	assert_false(r.hit[GF_DIAG_OVERPROV]); /* 60000 of 81559 */
	/* a MIG instance: only slack applies */
	for (int i = 0; i <= 60; i++)
		p[i] = (struct gf_diag_point){
			i * 1000, -1, 900, 10000, -1, 1
		};
	assert_int_equal(gf_diagnose(p, 61, true, &o, &r), 1);
	assert_true(r.hit[GF_DIAG_MIG_SLACK]);
	p[20].fb_used = 3000; /* peak 30 %: enough */
	assert_int_equal(gf_diagnose(p, 61, true, &o, &r), 0);
}

static void test_cgroup_owners(void **state)
{
	(void)state;
	struct gf_owner o;
	assert_true(gf_cgroup_owner(
		"12:devices:/kubepods/burstable/"
		"pod8a4c6f0e-1234-4abc-9def-0123456789ab/3f5e1b2c4d6e\n",
		&o));
	assert_string_equal(o.pod_uid, "8a4c6f0e-1234-4abc-9def-0123456789ab");
	assert_string_equal(o.container, "3f5e1b2c4d6e");
	assert_true(gf_cgroup_owner(
		"0::/kubepods.slice/kubepods-burstable.slice/"
		"kubepods-burstable-pod8a4c6f0e_1234_4abc_9def_0123456789ab."
		"slice/cri-containerd-7d1f00aa.scope\n",
		&o));
	assert_string_equal(o.pod_uid, "8a4c6f0e-1234-4abc-9def-0123456789ab");
	assert_string_equal(o.container, "7d1f00aa");
	assert_true(gf_cgroup_owner("7:devices:/slurm/uid_1000/job_4242/"
				    "step_0/task_0\n",
				    &o));
	assert_string_equal(o.slurm_job, "4242");
	assert_string_equal(o.pod_uid, "");
	assert_true(gf_cgroup_owner("0::/system.slice/slurmstepd.scope/"
				    "job_777/step_batch/user/task_0\n",
				    &o));
	assert_string_equal(o.slurm_job, "777");
	assert_false(gf_cgroup_owner("0::/user.slice/user-1000.slice/"
				     "session-3.scope\n",
				     &o));
	assert_false(gf_cgroup_owner("", &o));
}

int main(int argc, char **argv)
{
	(void)argc;
	fake_nvml_path(argv[0], fake, sizeof(fake));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_match_dcgm_exporter),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_gpm),
		cmocka_unit_test(test_opt_in_counters),
		cmocka_unit_test(test_idle_by_sm_activity),
		cmocka_unit_test(test_counters_csv),
		cmocka_unit_test(test_diagnose_rules),
		cmocka_unit_test(test_cgroup_owners),
	};
	return cmocka_run_group_tests_name("agent", tests, NULL, NULL);
}
