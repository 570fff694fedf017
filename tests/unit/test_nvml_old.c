/*
 * test_nvml_old.c - the NVML loader against a driver that has only the
 * required entry points (tests/fake_nvml/old_driver.c): every other entry
 * point is a stub answering NVML_ERROR_FUNCTION_NOT_FOUND, so callers
 * need no NULL checks, and a join degrades to notes instead of crashing.
 * Its own binary: a process loads one libnvidia-ml for its lifetime.
 */
#include "helpers.h"
#include "topo/nvml.h"

static char old_lib[512];

static void test_optional_calls_answer_not_found(void **state)
{
	(void)state;
	const struct gf_nvml *nv;
	struct gf_err e;
	gf_err_clear(&e);
	setenv("GPUFLEET_NVML_LIBRARY", old_lib, 1);
	assert_int_equal(gf_nvml_open(&nv, &e), 0);
	unsigned count = 0;
	assert_int_equal(nv->nvmlDeviceGetCount(&count), NVML_SUCCESS);
	assert_int_equal(count, 1);
	nvmlDevice_t d;
	assert_int_equal(nv->nvmlDeviceGetHandleByIndex(0, &d), NVML_SUCCESS);
	char name[64];
	assert_int_equal(nv->nvmlDeviceGetName(d, name, sizeof(name)),
			 NVML_ERROR_FUNCTION_NOT_FOUND);
	unsigned mw;
	assert_int_equal(nv->nvmlDeviceGetPowerUsage(d, &mw),
			 NVML_ERROR_FUNCTION_NOT_FOUND);
	assert_int_equal(nv->nvmlDeviceSetMigMode(d, 1, NULL),
			 NVML_ERROR_FUNCTION_NOT_FOUND);
	assert_int_equal(nv->nvmlGpmMetricsGet(NULL),
			 NVML_ERROR_FUNCTION_NOT_FOUND);
	/* the stub for nvmlErrorString gives no text; ours stands in */
	assert_null(nv->nvmlErrorString(NVML_ERROR_NOT_SUPPORTED));
	assert_string_equal(gf_nvml_strerror(nv, NVML_ERROR_NOT_SUPPORTED),
			    "Not Supported");
	gf_nvml_close();
}

static void test_join_without_optional_calls(void **state)
{
	(void)state;
	struct gf_node *n =
		load_shared("topologies/synthetic/hgx-h100-like-synthetic.xml");
	const struct gf_nvml *nv;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_nvml_open(&nv, &e), 0);
	/* without nvmlDeviceGetPciInfo no GPU can be matched: nothing
	 * joined, nothing invented */
	char uuid0[sizeof(n->gpus[0].uuid)], name0[sizeof(n->gpus[0].name)];
	memcpy(uuid0, n->gpus[0].uuid, sizeof(uuid0));
	memcpy(name0, n->gpus[0].name, sizeof(name0));
	assert_int_equal(gf_nvml_join(nv, n, &e), 0);
	assert_string_equal(n->gpus[0].uuid, uuid0);
	assert_string_equal(n->gpus[0].name, name0);
	assert_int_equal(n->nvlinks[0][1], 0);
	gf_nvml_close();
	gf_node_free(n);
}

int main(int argc, char **argv)
{
	(void)argc;
	char dir[400];
	snprintf(dir, sizeof(dir), "%s", argv[0]);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(old_lib, sizeof(old_lib),
		 "%s/../fake-nvml-old/libnvidia-ml.so.1", dir);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_optional_calls_answer_not_found),
		cmocka_unit_test(test_join_without_optional_calls),
	};
	return cmocka_run_group_tests_name("nvml-old-driver", tests, NULL,
					   NULL);
}
