/*
 * test_nvml.c - the run-time NVML loader against the fake libnvidia-ml
 * built from tests/fake_nvml (found beside this binary), and the join of
 * its answers into a recorded topology.
 */
#include <gpufleet/link.h>

#include "helpers.h"
#include "topo/nvml.h"

static char fake_lib[512];

static void use_fixture(const char *path)
{
	setenv("GPUFLEET_NVML_LIBRARY", fake_lib, 1);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", path, 1);
}

static void write_fixture(char *path, size_t size, const char *text)
{
	snprintf(path, size, "/tmp/gf-nvml-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_missing_library(void **state)
{
	(void)state;
	const struct gf_nvml *nv;
	struct gf_err e;
	setenv("GPUFLEET_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	assert_int_equal(gf_nvml_open(&nv, &e), GF_ENOTFOUND);
	assert_non_null(strstr(e.msg, "NVML not available"));
	/* a library without NVML's symbols */
	setenv("GPUFLEET_NVML_LIBRARY", "libm.so.6", 1);
	assert_int_equal(gf_nvml_open(&nv, &e), GF_ENVML);
	assert_non_null(strstr(e.msg, "nvmlInit_v2"));
}

static void test_init_failure(void **state)
{
	(void)state;
	char fx[64];
	const struct gf_nvml *nv;
	struct gf_err e;
	write_fixture(fx, sizeof(fx), "init_error 9\n");
	use_fixture(fx);
	assert_int_equal(gf_nvml_open(&nv, &e), GF_ENVML);
	assert_non_null(strstr(e.msg, "Driver Not Loaded"));
	unlink(fx);
}

static void test_join_hgx(void **state)
{
	(void)state;
	struct gf_node *n =
		load_shared("topologies/synthetic/hgx-h100-like-synthetic.xml");
	const struct gf_nvml *nv;
	struct gf_err e;
	use_fixture("tests/fixtures/nvml/hgx-h100.nvml");
	assert_int_equal(gf_nvml_open(&nv, &e), 0);
	assert_int_equal(gf_nvml_join(nv, n, &e), 0);
	gf_nvml_close();
	assert_true(n->nvml_used);
	assert_string_equal(n->gpus[0].name, "NVIDIA H100 80GB HBM3");
	assert_string_equal(n->gpus[7].uuid,
			    "GPU-5e1f0c2a-7d3b-4c8e-9a60-000000000007");
	assert_int_equal(n->gpus[0].memory_mib, 81559);
	assert_int_equal(n->gpus[3].mig_mode, 1);
	assert_int_equal(n->gpus[2].mig_mode, 0);
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 8; b++)
			if (a != b)
				assert_int_equal(gf_node_nvlinks(n, a, b), 18);
	assert_int_equal(n->nnotes, 0);
	char msg[128];
	assert_int_equal(gf_node_check(n, msg, sizeof(msg)), 0);
	gf_node_free(n);
}

static void test_join_mismatch_and_direct_links(void **state)
{
	(void)state;
	/* GPU0-GPU1 bridged by 2 direct links; a third GPU the topology
	 * lacks; affinity from NVML where hwloc had it already */
	char fx[64];
	write_fixture(fx, sizeof(fx),
		      "gpu 00000000:04:00.0\nname Tesla P100-PCIE-16GB\n"
		      "nvlinks 4\nnvlink 0 1 gpu 00000000:07:00.0\n"
		      "nvlink 1 1 gpu 00000000:07:00.0\nnvlink 2 0 gpu\n"
		      "gpu 00000000:07:00.0\nnvlinks 4\n"
		      "nvlink 0 1 gpu 00000000:04:00.0\n"
		      "nvlink 1 1 gpu 00000000:04:00.0\n"
		      "gpu 00000000:99:00.0\nname ghost\n");
	struct gf_node *n = load_shared(
		"topologies/hwloc-xml/LLNL_mpibind/cts1-pascal.xml");
	const struct gf_nvml *nv;
	struct gf_err e;
	use_fixture(fx);
	assert_int_equal(gf_nvml_open(&nv, &e), 0);
	assert_int_equal(gf_nvml_join(nv, n, &e), 0);
	gf_nvml_close();
	assert_int_equal(gf_node_nvlinks(n, 0, 1), 2);
	struct gf_link l = gf_link_between(n, 0, 1, false);
	assert_int_equal(l.cls, GF_LINK_NV);
	assert_int_equal(n->nnotes, 1);
	assert_non_null(strstr(n->notes[0], "00000000:99:00.0"));
	assert_int_equal(n->gpus[1].mig_mode, -1); /* not supported */
	gf_node_free(n);
	unlink(fx);
}

/*
 * The real H200 host (../shared/fixtures/h200): its hwloc XML joined with
 * its NVML dump, answered by the fake from the dump itself.  The facts are
 * the host's, as its README states them: one GPU, CPUs 0-15, NUMA node 0,
 * MIG off, one NIC (eth0, no RDMA).
 */
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
	struct gf_node *n = load_shared("fixtures/h200/h200-hwloc.xml");
	const struct gf_nvml *nv;
	struct gf_err e;
	use_fixture(dump);
	assert_int_equal(gf_nvml_open(&nv, &e), 0);
	unsigned count = 0;
	assert_int_equal(nv->nvmlDeviceGetCount(&count), NVML_SUCCESS);
	assert_int_equal(count, 1);
	/* NVML's own answers, as the dump recorded them */
	nvmlDevice_t d;
	assert_int_equal(nv->nvmlDeviceGetHandleByIndex(0, &d), NVML_SUCCESS);
	unsigned long set[4] = { 0 };
	assert_int_equal(nv->nvmlDeviceGetCpuAffinity(d, 4, set), NVML_SUCCESS);
	assert_true(set[0] == 0xffff && set[1] == 0 && set[2] == 0 &&
		    set[3] == 0);
	unsigned cur = 9, pend = 9, numa;
	assert_int_equal(nv->nvmlDeviceGetMigMode(d, &cur, &pend),
			 NVML_SUCCESS);
	assert_int_equal(cur, 0);
	assert_int_equal(pend, 0);
	assert_int_equal(nv->nvmlDeviceGetNumaNodeId(d, &numa),
			 NVML_ERROR_NOT_SUPPORTED);
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	assert_int_equal(nv->nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_SUCCESS);
	assert_true(m2.total == 150754820096ULL &&
		    m2.reserved == 644939776ULL && m2.used == 0 &&
		    m2.free == 150109880320ULL);
	nvmlMemory_t m1;
	assert_int_equal(nv->nvmlDeviceGetMemoryInfo(d, &m1), NVML_SUCCESS);
	assert_true(m1.used == 644939776ULL && m1.free == 150109880320ULL);
	/* joined into the host's topology */
	assert_int_equal(gf_nvml_join(nv, n, &e), 0);
	assert_int_equal(n->ngpus, 1);
	assert_int_equal(n->nnotes, 0);
	const struct gf_gpu *g = &n->gpus[0];
	assert_string_equal(g->name, "NVIDIA H200");
	assert_string_equal(g->uuid,
			    "GPU-d1b61e09-1104-374d-b83c-f32dc17ca2d7");
	assert_string_equal(g->bus_id, "0000:00:06.0");
	assert_int_equal(g->memory_mib, 143771); /* the README's MiB */
	assert_int_equal(g->mig_mode, 0);
	assert_int_equal(g->mig_pending, 0);
	assert_int_equal(g->numa_id, -1); /* NVML: Not Supported */
	char list[64];
	gf_bitmap_format_list(&g->cpus, list, sizeof(list));
	assert_string_equal(list, "0-15");
	gf_bitmap_format_list(&g->mems, list, sizeof(list));
	assert_string_equal(list, "0");
	assert_int_equal(n->nnuma, 1);
	assert_int_equal(n->nnics, 1);
	assert_string_equal(n->nics[0].name, "eth0");
	assert_false(n->nics[0].rdma);
	assert_false(n->nvlink_known); /* the dump: NVLink Not Supported */
	/* CPU affinity from NVML alone, where hwloc gave none */
	struct gf_node *bare = load_shared("fixtures/h200/h200-hwloc.xml");
	bare->gpus[0].locality_known = false;
	gf_bitmap_zero(&bare->gpus[0].cpus);
	assert_int_equal(gf_nvml_join(nv, bare, &e), 0);
	gf_bitmap_format_list(&bare->gpus[0].cpus, list, sizeof(list));
	assert_string_equal(list, "0-15");
	gf_nvml_close();
	gf_node_free(bare);
	gf_node_free(n);
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *env = getenv("GF_TEST_FAKE_NVML");
	if (env)
		snprintf(fake_lib, sizeof(fake_lib), "%s", env);
	else
		fake_nvml_path(argv[0], fake_lib, sizeof(fake_lib));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_init_failure),
		cmocka_unit_test(test_join_hgx),
		cmocka_unit_test(test_join_mismatch_and_direct_links),
		cmocka_unit_test(test_h200_dump),
	};
	return cmocka_run_group_tests_name("nvml", tests, NULL, NULL);
}
