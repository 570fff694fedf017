/*
 * test_agent.c - the agent's collector and page: dcgm-exporter's names,
 * types, help and label keys (from its default counters CSV), last good
 * values with a staleness gauge while NVML fails, a GPU off the bus, the
 * counters CSV parser; diagnoses (rules, the signals they read, history
 * too short to judge, the ring sized by time) and the recorded samples
 * the diagnose golden files judge, checked by hand on tiny series; every
 * renderer the agent serves from refuses a page its buffer cannot hold
 * (GF_ETOOBIG, never a cut page), and the agent service serves only
 * whole documents; the link refuses a state directory too long for its
 * paths before it makes anything.
 */
#include <errno.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/join.h"
#include "helpers.h"
#include "server/client.h"
#include "telemetry/cgroup.h"
#include "telemetry/diagnose.h"
#include "telemetry/expo.h"
#include "telemetry/recorded.h"
#include "topo/render.h"
#include "util/mem.h"

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
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
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
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
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
	/* a lost GPU is not judged on its stale samples */
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = 1;
	struct gf_diag_verdict *v;
	int n = gf_expo_judge(&c, &k, &o, &v);
	gf_buf_reset(&page);
	assert_int_equal(gf_diag_report_text(v, n, &page), 0);
	assert_non_null(strstr(gf_buf_str(&page),
			       "  GPU0: fell off the bus; not judged\n"));
	gf_free(v);
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
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
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

/* A fake NVML fixture of one H100 in a temporary file: its path. */
static void one_gpu(char *path, size_t size, const char *series)
{
	snprintf(path, size, "/tmp/gf-fake-XXXXXX");
	int fd = mkstemp(path);
	char text[1024];
	snprintf(text, sizeof(text),
		 "driver 550.54.15\ngpu 00000000:18:00.0\n"
		 "name NVIDIA H100 80GB HBM3\nuuid GPU-idle\n"
		 "pci_device_id 0x233010DE\nmemory_total_mib 81559\n"
		 "series fb_used_mib 40960\nproc 4242\n%s",
		 series);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	use(path);
}

/* Counters: the default set, or it with DCGM_FI_PROF_SM_ACTIVE. */
static void counters(struct gf_counters *k, bool sm)
{
	gf_counters_default(k);
	if (sm)
		k->order[k->n++] = GF_M_PROF_SM_ACTIVE;
}

/*
 * Twelve samples a second apart of one GPU whose fixture has `series`,
 * judged over 10 s with counters k: the allocated-idle line of the text
 * report into why (empty when not idle); whether the gauge says idle.
 */
static int idle_why(const char *series, const struct gf_counters *k, char *why,
		    size_t size)
{
	char path[64];
	one_gpu(path, sizeof(path), series);
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int t = 1; t <= 12; t++)
		gf_collector_sample(&c, t * 1000);
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = 10;
	struct gf_diag_verdict *v;
	int n = gf_expo_judge(&c, k, &o, &v);
	struct gf_buf page, text;
	gf_buf_init(&page, 1 << 20);
	gf_buf_init(&text, 1 << 20);
	assert_int_equal(gf_expo_render_diag(v, n, &page), 0);
	assert_int_equal(gf_diag_report_text(v, n, &text), 0);
	int hit = strstr(gf_buf_str(&page), "reason=\"allocated-idle\"} 1") !=
		  NULL;
	const char *l = strstr(gf_buf_str(&text), "[allocated-idle]: ");
	snprintf(why, size, "%.*s", l ? (int)strcspn(l, "\n") : 0, l ? l : "");
	gf_buf_release(&page);
	gf_buf_release(&text);
	gf_free(v);
	gf_collector_close(&c);
	unlink(path);
	return hit;
}

static void test_idle_by_sm_activity(void **state)
{
	(void)state;
	struct gf_counters dflt, sm;
	counters(&dflt, false);
	counters(&sm, true);
	char why[400];
	/* 90 % duty cycle, no GPM: busy */
	assert_int_equal(idle_why("series util 90\n", &dflt, why, 400), 0);
	/* no duty cycle, no GPM: idle, and by utilisation */
	assert_int_equal(idle_why("series util 0\n", &dflt, why, 400), 1);
	assert_non_null(strstr(why, "did no work for 10 s (by "
				    "DCGM_FI_DEV_GPU_UTIL)"));
	/* busy by its duty cycle, but GPM says no engine works: idle, by
	 * the GPM signals the page exports */
	const char *idle = "series util 90\ngpm 1\nseries sm_active 0.5\n";
	assert_int_equal(idle_why(idle, &sm, why, 400), 1);
	assert_non_null(strstr(why, "(by DCGM_FI_PROF_GR_ENGINE_ACTIVE, "
				    "DCGM_FI_PROF_SM_ACTIVE, "
				    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)"));
	/* SM activity is opt-in: without it on the page, the verdict does
	 * not read it (nor name it) */
	assert_int_equal(idle_why(idle, &dflt, why, 400), 1);
	assert_non_null(strstr(why, "(by DCGM_FI_PROF_GR_ENGINE_ACTIVE, "
				    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)"));
}

/* Issue 8: a GPU whose GPM shows engine activity did work, whatever its
 * SM activity says; the verdict reads what the page exports. */
static void test_engine_activity_is_work(void **state)
{
	(void)state;
	struct gf_counters dflt, sm;
	counters(&dflt, false);
	counters(&sm, true);
	char why[400];
	/* graphics engine 60 %, tensor pipe 40 %, SM activity 0.5 % */
	const char *busy = "series util 90\ngpm 1\nseries gr_active 60\n"
			   "series sm_active 0.5\nseries tensor_active 40\n";
	assert_int_equal(idle_why(busy, &sm, why, 400), 0);
	assert_int_equal(idle_why(busy, &dflt, why, 400), 0);
	/* the tensor pipe alone is work too */
	const char *tensor = "series util 0\ngpm 1\nseries tensor_active 30\n";
	assert_int_equal(idle_why(tensor, &sm, why, 400), 0);
	/* a counters file without any activity signal: nothing to judge
	 * idleness by, so no verdict of idleness */
	struct gf_counters none = { .n = 0 };
	none.order[none.n++] = GF_M_FB_USED;
	none.order[none.n++] = GF_M_FB_FREE;
	assert_int_equal(idle_why("series util 0\n", &none, why, 400), 0);
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
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
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

/* A point of GPU utilisation (no GPM), memory, PCIe receive, processes. */
static struct gf_diag_point pt(int64_t t_ms, double util, double fb,
			       double total, double rx, int nproc)
{
	struct gf_diag_point p;
	gf_diag_point_init(&p, t_ms);
	p.act[GF_DIAG_UTIL] = util;
	p.fb_used = fb;
	p.fb_total = total;
	p.pcie_rx = rx;
	p.nproc = nproc;
	return p;
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
		p[i] = pt(i * 1000, 0, 30000, 81559, 0, 1);
	assert_int_equal(gf_diagnose(p, 61, false, &o, &r), 1);
	assert_true(r.judged);
	assert_true(r.hit[GF_DIAG_IDLE]);
	assert_int_equal(r.by[GF_DIAG_IDLE], 1u << GF_DIAG_UTIL);
	/* one sample of work in the window: not idle */
	p[30].act[GF_DIAG_UTIL] = 5;
	gf_diagnose(p, 61, false, &o, &r);
	assert_false(r.hit[GF_DIAG_IDLE]);
	/* nothing holds it (no process, little memory): not idle either */
	for (int i = 0; i <= 60; i++)
		p[i] = pt(i * 1000, 0, 100, 81559, 0, 0);
	assert_int_equal(gf_diagnose(p, 61, false, &o, &r), 0);
	assert_true(r.judged);
	/* too short a history for the window: not judged, and how much
	 * there is */
	for (int i = 0; i <= 10; i++)
		p[i] = pt(i * 1000, 0, 30000, 81559, 0, 1);
	assert_int_equal(gf_diagnose(p, 11, false, &o, &r), 0);
	assert_false(r.judged);
	assert_true(r.observed_s == 10);
	/* 90 % of the window is enough */
	for (int i = 0; i <= 54; i++)
		p[i] = pt(i * 1000, 0, 30000, 81559, 0, 1);
	gf_diagnose(p, 55, false, &o, &r);
	assert_true(r.judged && r.hit[GF_DIAG_IDLE]);
	/* bursts without PCIe traffic in the gaps: not starvation */
	for (int i = 0; i <= 60; i++)
		p[i] = pt(i * 1000, i % 2 ? 90 : 0, 60000, 81559, 1e8, 1);
	gf_diagnose(p, 61, false, &o, &r);
	assert_false(r.hit[GF_DIAG_STARVATION]);
	for (int i = 0; i <= 60; i += 2)
		p[i].pcie_rx = 3e9; /* input arrives in the gaps */
	gf_diagnose(p, 61, false, &o, &r);
	assert_true(r.hit[GF_DIAG_STARVATION]);
	assert_int_equal(r.by[GF_DIAG_STARVATION],
			 1u << GF_DIAG_UTIL | 1u << GF_DIAG_PCIE_RX);
	assert_false(r.hit[GF_DIAG_OVERPROV]); /* 60000 of 81559 */
	/* the same bursts by GPM's engine activity, the duty cycle flat at
	 * 100 %: GPM is read where a point has it */
	for (int i = 0; i <= 60; i++) {
		p[i].act[GF_DIAG_UTIL] = 100;
		p[i].act[GF_DIAG_GR] = i % 2 ? 90 : 0;
	}
	gf_diagnose(p, 61, false, &o, &r);
	assert_true(r.hit[GF_DIAG_STARVATION]);
	assert_int_equal(r.by[GF_DIAG_STARVATION],
			 1u << GF_DIAG_GR | 1u << GF_DIAG_PCIE_RX);
	/* a MIG instance: only slack applies */
	for (int i = 0; i <= 60; i++)
		p[i] = pt(i * 1000, -1, 900, 10000, -1, 1);
	assert_int_equal(gf_diagnose(p, 61, true, &o, &r), 1);
	assert_true(r.hit[GF_DIAG_MIG_SLACK]);
	p[20].fb_used = 3000; /* peak 30 %: enough */
	assert_int_equal(gf_diagnose(p, 61, true, &o, &r), 0);
}

/* Issue 8: less history than the window is "not judged yet", never "no
 * waste found", in text and JSON. */
static void test_not_judged_yet(void **state)
{
	(void)state;
	struct gf_diag_opts o;
	gf_diag_defaults(&o); /* 300 s */
	struct gf_diag_point p[5];
	for (int i = 0; i < 5; i++)
		p[i] = pt(1000000 + i * 10000, 0, 30000, 81559, 0, 1);
	struct gf_diag_verdict v[1] = { { .gpu = 2, .gi = -1 } };
	assert_int_equal(gf_diagnose(p, 5, false, &o, &v[0].r), 0);
	struct gf_buf b;
	gf_buf_init(&b, 1 << 16);
	assert_int_equal(gf_diag_report_text(v, 1, &b), 0);
	assert_string_equal(gf_buf_str(&b),
			    "  GPU2: 40 s of 300 s observed; not judged yet\n");
	gf_buf_reset(&b);
	assert_int_equal(gf_diag_report_json(v, 1, o.window_s, &b), 0);
	assert_non_null(strstr(gf_buf_str(&b), "\"findings\": []"));
	assert_non_null(strstr(gf_buf_str(&b), "\"not_judged\": [\n    {\n"
					       "      \"gpu\": 2,\n"
					       "      \"observed_s\": 40,\n"
					       "      \"why\": \"40 s of 300 s "
					       "observed\"\n"));
	/* one judged without waste beside it */
	struct gf_diag_verdict w[2] = { { .gpu = 0, .gi = -1 }, v[0] };
	for (int i = 0; i < 5; i++)
		p[i] = pt(i * 75000, 90, 30000, 81559, 0, 1);
	gf_diagnose(p, 5, false, &o, &w[0].r);
	assert_true(w[0].r.judged);
	gf_buf_reset(&b);
	assert_int_equal(gf_diag_report_text(w, 2, &b), 0);
	assert_string_equal(gf_buf_str(&b),
			    "  GPU2: 40 s of 300 s observed; not judged yet\n"
			    "  no waste found in the 1 judged\n");
	/* every one judged, none wasted: only then "no waste found" */
	gf_buf_reset(&b);
	assert_int_equal(gf_diag_report_text(w, 1, &b), 0);
	assert_string_equal(gf_buf_str(&b), "  no waste found\n");
	gf_buf_release(&b);
}

/* The same from a live agent: a few seconds of samples, a 300 s window. */
static void test_not_judged_live(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	struct gf_err e;
	struct gf_counters k;
	gf_counters_default(&k);
	assert_int_equal(gf_collector_open(
				 &c, (int)gf_collector_ring_for(300, 1000), &e),
			 0);
	assert_int_equal(c.g[0].cap, 302);
	for (int t = 0; t <= 40; t++)
		gf_collector_sample(&c, 1000000 + t * 1000);
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	struct gf_diag_verdict *v;
	int n = gf_expo_judge(&c, &k, &o, &v);
	assert_int_equal(n, 1 + 1 + 1 + 3); /* GPU 2 has three instances */
	struct gf_buf b;
	gf_buf_init(&b, 1 << 20);
	assert_int_equal(gf_expo_diag_text(&c, v, n, o.window_s, &b), 0);
	const char *t = gf_buf_str(&b);
	assert_non_null(strstr(t, ", 3 GPUs, window 300 s\n\n"
				  "  GPU0: 40 s of 300 s observed; not judged "
				  "yet\n"));
	assert_non_null(strstr(t, "  GPU2 GI 1: 40 s of 300 s observed"));
	assert_null(strstr(t, "no waste found"));
	/* no gauge says 0 (no waste) for what was not judged */
	gf_buf_reset(&b);
	assert_int_equal(gf_expo_render_diag(v, n, &b), 0);
	assert_null(strstr(gf_buf_str(&b), "gpufleet_diagnosis{"));
	gf_free(v);
	gf_buf_release(&b);
	gf_collector_close(&c);
}

/* Verdicts of a live agent over its ring: GPU 1 holds 20 GiB at 0 %
 * (every other sample failing); GPU 2, in MIG mode, is not judged for
 * memory as a whole (its instances are), and its 3g.40gb instance with
 * 1 GiB of 40 GiB is slack. */
static void test_live_verdicts(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	struct gf_err e;
	struct gf_counters k;
	gf_counters_default(&k);
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int t = 1; t <= 12; t++)
		gf_collector_sample(&c, t * 1000);
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = 10;
	struct gf_diag_verdict *v;
	int n = gf_expo_judge(&c, &k, &o, &v);
	struct gf_buf b;
	gf_buf_init(&b, 1 << 20);
	assert_int_equal(gf_diag_report_text(v, n, &b), 0);
	assert_string_equal(
		gf_buf_str(&b),
		"  GPU1 [allocated-idle]: a process holds 20480 MiB and the "
		"GPU did no work for 10 s (by DCGM_FI_DEV_GPU_UTIL)\n"
		"  GPU2 GI 1 [mig-slack]: peak memory 1024 MiB of the "
		"instance's 40779 over 10 s (by DCGM_FI_DEV_FB_USED)\n");
	gf_free(v);
	gf_buf_release(&b);
	gf_collector_close(&c);
}

/* The ring is sized by time: a window needs its length over the interval
 * in samples, and a ring too short for the window never judges. */
static void test_ring_by_time(void **state)
{
	(void)state;
	assert_int_equal(gf_collector_ring_for(300, 1000), 302);
	assert_int_equal(gf_collector_ring_for(1, 200), 7);
	assert_int_equal(gf_collector_ring_for(300, 100), 3002);
	assert_true(gf_collector_ring_for(3600, 10) > GF_RING_MAX);
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_counters k;
	gf_counters_default(&k);
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = 10;
	for (int ring = 5; ring <= 12; ring += 7) {
		struct gf_collector c;
		struct gf_err e;
		assert_int_equal(gf_collector_open(&c, ring, &e), 0);
		for (int t = 1; t <= 30; t++)
			gf_collector_sample(&c, t * 1000);
		assert_int_equal(c.g[0].n, ring);
		struct gf_diag_verdict *v;
		assert_true(gf_expo_judge(&c, &k, &o, &v) >= 0);
		assert_int_equal(v[0].r.judged, ring == 12);
		assert_true(v[0].r.observed_s == (ring == 12 ? 10 : 4));
		gf_free(v);
		gf_collector_close(&c);
	}
}

/* /v1/gpus: MIG instances with their profile, as /metrics labels them. */
/* The jobs the agent's assignments put on its devices label their
 * series with `job` and `team` (whole GPUs, shares joined, MIG instances
 * by UUID); the other series and labels stay as they were. */
static void test_job_labels(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	gf_collector_sample(&c, 1000);
	gf_collector_sample(&c, 2000);
	struct gf_counters k;
	gf_counters_default(&k);
	struct gf_buf before, page;
	gf_buf_init(&before, 1 << 20);
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render(&c, &k, 2000, &before), 0);
	assert_null(strstr(gf_buf_str(&before), ",job=\""));
	/* GPU 0 whole, GPU 1 shared by two jobs of two teams, the first MIG
	 * instance of GPU 2 */
	const struct gf_tgpu *mg = &c.g[2];
	assert_true(mg->last.nmig > 0);
	unsigned gi = mg->last.mig[0].gi_id;
	assert_true(mg->gi_uuid[gi][0] != '\0');
	struct gf_dev_job jobs[4] = {
		{ .gpu = 0, .job = "j7", .team = "vision" },
		{ .gpu = 1, .job = "j8", .team = "nlp" },
		{ .gpu = 1, .job = "j9", .team = "vision" },
		{ .gpu = 2, .job = "j10", .team = "nlp" },
	};
	snprintf(jobs[3].mig_uuid, sizeof(jobs[3].mig_uuid), "%s",
		 mg->gi_uuid[gi]);
	c.jobs = jobs;
	c.njobs = 4;
	assert_int_equal(gf_expo_render(&c, &k, 2000, &page), 0);
	const char *p = gf_buf_str(&page);
	assert_non_null(strstr(p, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\","));
	const char *t0 = strstr(p, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",");
	const char *eol = strchr(t0, '\n');
	const char *lab = strstr(t0, ",job=\"j7\",team=\"vision\"}");
	assert_true(lab && lab < eol);
	assert_non_null(strstr(p, ",job=\"j8,j9\",team=\"nlp,vision\"}"));
	char want[160];
	snprintf(want, sizeof(want), "GPU_I_ID=\"%u\",", gi);
	const char *inst = strstr(p, want);
	assert_non_null(inst);
	eol = strchr(inst, '\n');
	lab = strstr(inst, ",job=\"j10\",team=\"nlp\"}");
	assert_true(lab && lab < eol);
	/* the page without the labels is the page before, line by line */
	size_t nb = 0, np = 0;
	for (const char *q = gf_buf_str(&before); *q; q++)
		nb += *q == '\n';
	for (const char *q = p; *q; q++)
		np += *q == '\n';
	assert_int_equal(nb, np);
	gf_buf_release(&before);
	gf_buf_release(&page);
	gf_collector_close(&c);
}

/* A CPU node's collector: no NVML, no GPU; the page keeps gpufleet's
 * node families and has no DCGM one. */
static void test_cpu_node_page(void **state)
{
	(void)state;
	setenv("GPUFLEET_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	struct gf_collector c;
	gf_collector_open_cpu(&c);
	assert_int_equal(c.n, 0);
	gf_collector_sample(&c, 1000);
	gf_collector_sample(&c, 2000);
	struct gf_counters k;
	gf_counters_default(&k);
	struct gf_buf page;
	gf_buf_init(&page, 1 << 20);
	assert_int_equal(gf_expo_render(&c, &k, 2000, &page), 0);
	const char *p = gf_buf_str(&page);
	assert_null(strstr(p, "DCGM_"));
	assert_non_null(strstr(p, "\ngpufleet_samples_total 2\n"));
	assert_non_null(strstr(p, "# TYPE gpufleet_gpu_up gauge\n"));
	gf_buf_release(&page);
	gf_collector_close(&c);
}

static void test_gpus_json_mig_profile(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	struct gf_err e;
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	gf_collector_sample(&c, 1000);
	struct gf_buf b;
	gf_buf_init(&b, 1 << 20);
	assert_int_equal(gf_expo_gpus_json(&c, 1000, &b), 0);
	assert_non_null(
		strstr(gf_buf_str(&b),
		       "\"gpu_instance_id\": 1,\n"
		       "          \"gpu_instance_profile\": \"3g.40gb\""));
	assert_non_null(strstr(gf_buf_str(&b),
			       "\"gpu_instance_profile\": \"1g.10gb\""));
	gf_buf_release(&b);
	gf_collector_close(&c);
}

/* A samples file in a temporary file, read: 0 or the reader's error. */
static int read_csv(const char *text, struct gf_recording *r, struct gf_err *e)
{
	char path[] = "/tmp/gf-samples-XXXXXX";
	int fd = mkstemp(path);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = gf_recording_read(path, r, e);
	unlink(path);
	return rc;
}

/* The text report of a samples file over a window. */
static void report_of(const char *csv, double window_s, bool json,
		      struct gf_buf *out)
{
	static struct gf_recording r;
	struct gf_err e;
	assert_int_equal(read_csv(csv, &r, &e), 0);
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = window_s;
	struct gf_diag_verdict v[16];
	assert_true(r.n <= 16);
	for (int k = 0; k < r.n; k++) {
		v[k] = (struct gf_diag_verdict){ .gpu = r.s[k].gpu,
						 .gi = r.s[k].gi };
		gf_diagnose(r.s[k].p, r.s[k].n, r.s[k].gi >= 0, &o, &v[k].r);
	}
	if (json)
		assert_int_equal(gf_diag_report_json(v, r.n, window_s, out), 0);
	else
		assert_int_equal(gf_diag_report_text(v, r.n, out), 0);
	gf_recording_release(&r);
}

/*
 * The facts the diagnose golden files record, each computed by hand on a
 * tiny series of the same shape (the CSV files of tests/fixtures/diagnose):
 * over 20 s:
 *   GPU0 idle: 3 samples at 0 %, 30000 MiB held;
 *   GPU1 starving: 90,0,90,0,90 % -> 2 of 5 idle (40 %), mean 270/5 =
 *     54 %, PCIe receive 4e9 in the gaps / 1e8 in the bursts = 40.0x;
 *   GPU2 over-provisioned: 8000 of 81559 MiB = 9.8 % -> "10%";
 *   GPU3 busy at 95 % with 70000 MiB: nothing;
 *   GPU4 GI 1: 500 of 40000 MiB: slack.
 */
static const char tiny[] =
	"t_s,gpu,gi,util,fb_used_mib,fb_total_mib,pcie_rx_bps,procs\n"
	"0,0,-1,0,30000,81559,0,1\n"
	"10,0,-1,0,30000,81559,0,1\n"
	"20,0,-1,0,30000,81559,0,1\n"
	"0,1,-1,90,60000,81559,100000000,1\n"
	"5,1,-1,0,60000,81559,4000000000,1\n"
	"10,1,-1,90,60000,81559,100000000,1\n"
	"15,1,-1,0,60000,81559,4000000000,1\n"
	"20,1,-1,90,60000,81559,100000000,1\n"
	"0,2,-1,70,8000,81559,0,1\n"
	"20,2,-1,70,8000,81559,0,1\n"
	"0,3,-1,95,70000,81559,0,1\n"
	"20,3,-1,95,70000,81559,0,1\n"
	"0,4,1,-1,500,40000,-1,1\n"
	"20,4,1,-1,500,40000,-1,1\n";

static void test_golden_facts_by_hand(void **state)
{
	(void)state;
	struct gf_buf b;
	gf_buf_init(&b, 1 << 16);
	/* diagnose-fixture: the text lines */
	report_of(tiny, 20, false, &b);
	assert_string_equal(
		gf_buf_str(&b),
		"  GPU0 [allocated-idle]: a process holds 30000 MiB and the "
		"GPU did no work for 20 s (by DCGM_FI_DEV_GPU_UTIL)\n"
		"  GPU1 [data-starvation]: busy in bursts (40% of samples "
		"idle, mean 54%), PCIe receive 40.0x higher in the gaps: the "
		"input pipeline feeds it too slowly (by DCGM_FI_DEV_GPU_UTIL, "
		"DCGM_FI_PROF_PCIE_RX_BYTES)\n"
		"  GPU2 [memory-overprovisioned]: peak memory 8000 MiB of "
		"81559 (10%) over 20 s: a MIG instance would do (by "
		"DCGM_FI_DEV_FB_USED)\n"
		"  GPU4 GI 1 [mig-slack]: peak memory 500 MiB of the "
		"instance's 40000 over 20 s (by DCGM_FI_DEV_FB_USED)\n");
	/* diagnose-fixture-json: the window and the signals read */
	gf_buf_reset(&b);
	report_of(tiny, 20, true, &b);
	assert_non_null(strstr(gf_buf_str(&b), "{\n  \"window_s\": 20,\n"));
	assert_non_null(
		strstr(gf_buf_str(&b), "\"reason\": \"allocated-idle\",\n"));
	assert_non_null(strstr(gf_buf_str(&b),
			       "\"by\": [\n"
			       "        \"DCGM_FI_DEV_GPU_UTIL\",\n"
			       "        \"DCGM_FI_PROF_PCIE_RX_"
			       "BYTES\"\n      ]"));
	assert_non_null(strstr(gf_buf_str(&b), "\"not_judged\": []"));
	/* diagnose-window-too-long: 20 s of history, a 60 s window */
	gf_buf_reset(&b);
	report_of(tiny, 60, false, &b);
	assert_string_equal(gf_buf_str(&b),
			    "  GPU0: 20 s of 60 s observed; not judged yet\n"
			    "  GPU1: 20 s of 60 s observed; not judged yet\n"
			    "  GPU2: 20 s of 60 s observed; not judged yet\n"
			    "  GPU3: 20 s of 60 s observed; not judged yet\n"
			    "  GPU4 GI 1: 20 s of 60 s observed; not judged "
			    "yet\n");
	gf_buf_release(&b);
}

/*
 * diagnose-gpm: GPM columns win over utilisation.  GPU0 runs at 95 % duty
 * cycle with every engine under 1 %: idle, by the three engines.  GPU1
 * has SM activity 0.5 % but its graphics engine at 70 %: it works.  GPU2
 * records no GPM (-1): utilisation 0 % decides.
 */
static void test_gpm_facts_by_hand(void **state)
{
	(void)state;
	const char *csv =
		"t_s,gpu,gi,util,fb_used_mib,fb_total_mib,pcie_rx_bps,procs,"
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE,DCGM_FI_PROF_SM_ACTIVE,"
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE\n"
		"0,0,-1,95,30000,81559,0,1,0.002,0.005,0\n"
		"10,0,-1,95,30000,81559,0,1,0.004,0.001,0\n"
		"0,1,-1,95,30000,81559,0,1,0.7,0.005,0.5\n"
		"10,1,-1,95,30000,81559,0,1,0.7,0.005,0.5\n"
		"0,2,-1,0,30000,81559,0,1,-1,-1,-1\n"
		"10,2,-1,0,30000,81559,0,1,-1,-1,-1\n";
	struct gf_buf b;
	gf_buf_init(&b, 1 << 16);
	report_of(csv, 10, false, &b);
	assert_string_equal(
		gf_buf_str(&b),
		"  GPU0 [allocated-idle]: a process holds 30000 MiB and the "
		"GPU did no work for 10 s (by DCGM_FI_PROF_GR_ENGINE_ACTIVE, "
		"DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)\n"
		"  GPU2 [allocated-idle]: a process holds 30000 MiB and the "
		"GPU did no work for 10 s (by DCGM_FI_DEV_GPU_UTIL)\n");
	gf_buf_release(&b);
}

/* Errors in a samples file name the file, line and field. */
static void test_recording_errors(void **state)
{
	(void)state;
	static struct gf_recording r;
	struct gf_err e;
	const char *head =
		"t_s,gpu,gi,util,fb_used_mib,fb_total_mib,pcie_rx_bps,procs\n";
	char text[512];
	snprintf(text, sizeof(text), "%s0,0,1.5,0,1,2,0,1\n", head);
	assert_int_equal(read_csv(text, &r, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ":2: field 'gi': expected an integer, "
				      "got '1.5'"));
	snprintf(text, sizeof(text), "%s0,0,-1,150,1,2,0,1\n", head);
	assert_int_equal(read_csv(text, &r, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ":2: field 'util': 150 is out of range "
				      "(0 to 100, or -1 when not recorded)"));
	snprintf(text, sizeof(text), "%s5,0,-1,0,1,2,0,1\n0,0,-1,0,1,2,0,1\n",
		 head);
	assert_int_equal(read_csv(text, &r, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ":3: field 't_s': time goes backwards"));
	assert_int_equal(read_csv(head, &r, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ": no samples after the header"));
	assert_int_equal(read_csv("t_s,gpu\n0,0\n", &r, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ": missing required column 'gi'"));
	snprintf(text, sizeof(text), "%s",
		 "t_s,gpu,gi,util,fb_used_mib,fb_total_mib,pcie_rx_bps,"
		 "procs,DCGM_FI_PROF_SM_ACTIVE\n0,0,-1,0,1,2,0,1,40\n");
	assert_int_equal(read_csv(text, &r, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, ":2: field 'DCGM_FI_PROF_SM_ACTIVE': 40 "
				      "is out of range (0 to 1"));
}

static void test_durations(void **state)
{
	(void)state;
	assert_int_equal(gf_diag_parse_duration("300"), 300000);
	assert_int_equal(gf_diag_parse_duration("300s"), 300000);
	assert_int_equal(gf_diag_parse_duration("500ms"), 500);
	assert_int_equal(gf_diag_parse_duration("5m"), 300000);
	assert_int_equal(gf_diag_parse_duration("1h"), 3600000);
	assert_int_equal(gf_diag_parse_duration("1.5s"), 1500);
	/* util/duration.h's forms (issue 21); 0 is a duration (each flag
	 * checks its own range: --kill-grace 0s is allowed) */
	assert_int_equal(gf_diag_parse_duration("5:00"), 300000);
	assert_int_equal(gf_diag_parse_duration("1:00:00"), 3600000);
	assert_int_equal(gf_diag_parse_duration("1-0"), 86400000);
	assert_int_equal(gf_diag_parse_duration("0"), 0);
	assert_int_equal(gf_diag_parse_duration("1:75"), -1);
	assert_int_equal(gf_diag_parse_duration("-1s"), -1);
	assert_int_equal(gf_diag_parse_duration("5 min"), -1);
	assert_int_equal(gf_diag_parse_duration(""), -1);
	assert_int_equal(gf_diag_parse_duration("nan"), -1);
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

/* One of the documents the agent renders, into out: the renderer's
 * return. */
static int render_doc(int which, const struct gf_collector *c,
		      const struct gf_counters *k,
		      const struct gf_diag_verdict *v, int n,
		      struct gf_buf *out)
{
	switch (which) {
	case 0:
		return gf_expo_render(c, k, 2000, out);
	case 1:
		return gf_expo_render_diag(v, n, out);
	case 2:
		return gf_expo_gpus_json(c, 2000, out);
	case 3:
		return gf_diag_report_json(v, n, 10, out);
	case 4:
		return gf_diag_report_text(v, n, out);
	default:
		return gf_expo_diag_text(c, v, n, 10, out);
	}
}

/* Every renderer of the agent, given any cap below its document's size,
 * returns GF_ETOOBIG (a page cut short is never returned with 0); at
 * the size itself it returns 0 and the same page. */
/* Every cap in the plain tree; the debug (sanitizer) trees, where each
 * render costs ten times more, take every 13th and the last 64 before
 * the whole document (15 of test_agent's 18 s of CPU under ASan were
 * this loop). */
#if GF_DEBUG
#define CAP_STEP(cap, len) ((cap) + 64 >= (len) ? 1 : 13)
#else
#define CAP_STEP(cap, len) 1
#endif

static void test_renderers_refuse_tiny_caps(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_collector c;
	struct gf_err e;
	struct gf_counters k;
	gf_counters_default(&k);
	assert_int_equal(gf_collector_open(&c, 0, &e), 0);
	for (int t = 1; t <= 12; t++)
		gf_collector_sample(&c, t * 1000);
	struct gf_diag_opts o;
	gf_diag_defaults(&o);
	o.window_s = 10;
	struct gf_diag_verdict *v;
	int n = gf_expo_judge(&c, &k, &o, &v);
	for (int which = 0; which < 6; which++) {
		struct gf_buf full, b;
		gf_buf_init(&full, 1 << 20);
		assert_int_equal(render_doc(which, &c, &k, v, n, &full), 0);
		assert_true(full.len > 100);
		for (size_t cap = 0; cap <= full.len;
		     cap += CAP_STEP(cap, full.len)) {
			gf_buf_init(&b, cap);
			int rc = render_doc(which, &c, &k, v, n, &b);
			if (cap < full.len) {
				if (rc != GF_ETOOBIG)
					print_message("doc %d cap %zu: %d\n",
						      which, cap, rc);
				assert_int_equal(rc, GF_ETOOBIG);
			} else {
				assert_int_equal(rc, 0);
				assert_memory_equal(b.data, full.data,
						    full.len);
			}
			gf_buf_release(&b);
		}
		gf_buf_release(&full);
	}
	gf_free(v);
	gf_collector_close(&c);
}

/* GET path from a running agent; the status, the body in a. */
static long agent_get(const struct gf_agent *ag, const char *path,
		      struct gf_client_answer *a)
{
	char url[256];
	snprintf(url, sizeof(url), "%s%s", gf_agent_url(ag), path + 1);
	struct gf_client_req q = { .url = url };
	struct gf_err e;
	int rc = gf_client_request(NULL, &q, a, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	return a->status;
}

/* The agent service on a port the kernel picks: its routes, HEAD and
 * 405 for other methods, /v1/topology as topo --json renders the same
 * source; with documents capped below their size it serves none of
 * them cut (503 "not-ready": nothing whole was ever rendered). */
static void test_agent_service(void **state)
{
	(void)state;
	use("tests/fixtures/nvml/agent.nvml");
	struct gf_counters k;
	gf_counters_default(&k);
	struct gf_agent_opts o = { .listen = "127.0.0.1:0",
				   .interval_ms = 100,
				   .counters = &k,
				   .topo = { .template_name = "hgx-h100" } };
	gf_diag_defaults(&o.diag);
	struct gf_agent *ag;
	struct gf_err e;
	assert_int_equal(gf_agent_start(&ag, &o, &e), 0);
	assert_int_equal(gf_agent_gpus(ag), 3);
	struct gf_client_answer a;
	assert_int_equal(agent_get(ag, "/metrics", &a), 200);
	assert_non_null(strstr(gf_buf_str(&a.body),
			       "\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\""));
	assert_string_equal(a.content_type,
			    "text/plain; version=0.0.4; charset=utf-8");
	gf_client_answer_release(&a);
	assert_int_equal(agent_get(ag, "/healthz", &a), 200);
	gf_client_answer_release(&a);
	assert_int_equal(agent_get(ag, "/nope", &a), 404);
	gf_client_answer_release(&a);
	/* /v1/topology: the node of the source, rendered as topo --json */
	struct gf_node_source src = { .template_name = "hgx-h100" };
	struct gf_node *node;
	assert_int_equal(gf_node_source_load(&src, &node, &e), 0);
	struct gf_finding f[GF_MAX_FINDINGS];
	int nf = gf_findings_compute(node, f, GF_MAX_FINDINGS);
	struct gf_buf want;
	gf_buf_init(&want, 1 << 20);
	assert_int_equal(gf_render_topo_json(node, false, f, nf, &want), 0);
	gf_node_free(node);
	assert_int_equal(agent_get(ag, "/v1/topology", &a), 200);
	assert_string_equal(gf_buf_str(&a.body), gf_buf_str(&want));
	gf_client_answer_release(&a);
	gf_buf_release(&want);
	/* other methods: 405 with Allow */
	char url[256];
	snprintf(url, sizeof(url), "%smetrics", gf_agent_url(ag));
	struct gf_client_req q = {
		.method = GF_HTTP_POST, .url = url, .body = "{}", .body_len = 2
	};
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), 0);
	assert_int_equal(a.status, 405);
	gf_client_answer_release(&a);
	q = (struct gf_client_req){ .method = GF_HTTP_HEAD, .url = url };
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), 0);
	assert_int_equal(a.status, 200);
	assert_int_equal(a.body.len, 0);
	gf_client_answer_release(&a);
	gf_agent_stop(ag);
	/* every document capped below its size: none served cut */
	o.doc_max = 64;
	assert_int_equal(gf_agent_start(&ag, &o, &e), 0);
	static const char *const docs[] = { "/metrics", "/v1/gpus",
					    "/v1/topology", "/v1/diagnose",
					    "/v1/diagnose.txt" };
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		assert_int_equal(agent_get(ag, docs[i], &a), 503);
		assert_non_null(strstr(gf_buf_str(&a.body), "\"not-ready\""));
		gf_client_answer_release(&a);
	}
	assert_int_equal(agent_get(ag, "/healthz", &a), 200);
	gf_client_answer_release(&a);
	gf_agent_stop(ag);
}

/* A state directory too long for the paths under it: gf_join_start says
 * which directory and why (GF_ETOOBIG) before it makes anything on disk
 * (it used to make the directory and its ledger, then the worker refused
 * the path). */
static void test_join_state_dir_too_long(void **state)
{
	(void)state;
	char base[] = "/tmp/gf-join-XXXXXX";
	assert_non_null(mkdtemp(base));
	struct gf_node_source src = { .template_name = "hgx-h100" };
	struct gf_node *node;
	struct gf_err e;
	assert_int_equal(gf_node_source_load(&src, &node, &e), 0);
	/* 1000 bytes: STATE/worker fits, the worker's own paths do not;
	 * 1020: STATE/worker itself does not */
	static const size_t lens[] = { 1000, 1020 };
	static const char *const says[] = { "worker: state directory '",
					    "join: state directory '" };
	for (int i = 0; i < 2; i++) {
		char dir[1100], first[128];
		size_t n = strlen(base);
		memcpy(dir, base, n + 1);
		while (n < lens[i]) { /* components of at most 100 bytes */
			size_t k = lens[i] - n < 100 ? lens[i] - n : 100;
			dir[n] = '/';
			memset(dir + n + 1, 'a', k - 1);
			n += k;
			dir[n] = '\0';
		}
		assert_int_equal(strlen(dir), lens[i]);
		memcpy(first, dir, strlen(base) + 100);
		first[strlen(base) + 100] = '\0';
		struct gf_join_opts o = { .controller = "http://127.0.0.1:9",
					  .name = "n1",
					  .state_dir = dir,
					  .node = node };
		struct gf_join *j = (struct gf_join *)1;
		gf_err_clear(&e);
		assert_int_equal(gf_join_start(&j, &o, &e), GF_ETOOBIG);
		assert_null(j);
		assert_non_null(strstr(e.msg, says[i]));
		assert_non_null(strstr(e.msg, base)); /* names the path */
		assert_int_not_equal(access(first, F_OK), 0); /* made nothing */
		assert_int_equal(errno, ENOENT);
	}
	assert_int_equal(rmdir(base), 0);
	gf_node_free(node);
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
		cmocka_unit_test(test_engine_activity_is_work),
		cmocka_unit_test(test_counters_csv),
		cmocka_unit_test(test_diagnose_rules),
		cmocka_unit_test(test_not_judged_yet),
		cmocka_unit_test(test_not_judged_live),
		cmocka_unit_test(test_live_verdicts),
		cmocka_unit_test(test_ring_by_time),
		cmocka_unit_test(test_gpus_json_mig_profile),
		cmocka_unit_test(test_golden_facts_by_hand),
		cmocka_unit_test(test_job_labels),
		cmocka_unit_test(test_cpu_node_page),
		cmocka_unit_test(test_gpm_facts_by_hand),
		cmocka_unit_test(test_recording_errors),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_join_state_dir_too_long),
		cmocka_unit_test(test_cgroup_owners),
		cmocka_unit_test(test_renderers_refuse_tiny_caps),
		cmocka_unit_test(test_agent_service),
	};
	return cmocka_run_group_tests_name("agent", tests, NULL, NULL);
}
