/*
 * test_job.c - the job on its own (job.h): state names, the spec's field
 * checks with their messages, copies, and gf_job_check's invariants.
 */
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>

#include "helpers.h"
#include "util/mem.h"

static struct gf_job_spec spec(void)
{
	struct gf_job_spec s;
	memset(&s, 0, sizeof(s));
	snprintf(s.team, sizeof(s.team), "default");
	snprintf(s.class_name, sizeof(s.class_name), "batch");
	s.replicas = 1;
	return s;
}

static void expect(const struct gf_job_spec *s, const char *msg)
{
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_job_spec_check(s, &e);
	if (msg == NULL) {
		if (rc)
			print_message("unexpected: %s\n", e.msg);
		assert_int_equal(rc, 0);
		return;
	}
	assert_int_equal(rc, GF_EINVAL);
	assert_string_equal(e.msg, msg);
}

static void test_states(void **state)
{
	(void)state;
	const char *names[] = { "pending", "running", "succeeded", "failed",
				"cancelled" };
	for (int i = 0; i < 5; i++) {
		enum gf_job_state st;
		assert_string_equal(gf_job_state_name((enum gf_job_state)i),
				    names[i]);
		assert_int_equal(gf_job_state_parse(names[i], &st), 0);
		assert_int_equal((int)st, i);
		assert_int_equal(gf_job_is_final(st), i >= 2);
	}
	enum gf_job_state st;
	assert_int_equal(gf_job_state_parse("Running", &st), GF_ENOTFOUND);
	assert_int_equal(gf_job_state_parse("", &st), GF_ENOTFOUND);
	assert_string_equal(gf_job_state_name((enum gf_job_state)9), "?");
}

static void test_spec_check(void **state)
{
	(void)state;
	struct gf_job_spec s = spec();
	expect(&s, NULL);
	s.gpu_milli = 1500;
	expect(&s, "'gpu_milli': expected 1 to 1000, got 1500");
	s.gpu_milli = -1;
	expect(&s, "'gpu_milli': expected 1 to 1000, got -1");
	s = spec();
	s.replicas = 0;
	expect(&s, "'replicas': expected 1 to 1024, got 0");
	s.replicas = 1025;
	expect(&s, "'replicas': expected 1 to 1024, got 1025");
	s = spec();
	s.gpus = 17;
	expect(&s, "'gpus': expected 0 to 16, got 17");
	s = spec();
	s.cpu_milli = -5;
	expect(&s, "'cpu_milli': expected 0 to 100000000, got -5");
	s = spec();
	s.max_runtime_s = -1;
	expect(&s, "'max_runtime_s': expected 0 to 3162240000, got -1");
	s = spec();
	s.gpus = 2;
	s.gpu_milli = 500;
	expect(&s, "'gpus', 'gpu_milli' and 'mig_profile' exclude each "
		   "other: got 'gpus' 'gpu_milli' ");
	s = spec();
	s.gpu_milli = 500;
	snprintf(s.mig_profile, sizeof(s.mig_profile), "1g.10gb");
	expect(&s, "'gpus', 'gpu_milli' and 'mig_profile' exclude each "
		   "other: got 'gpu_milli' 'mig_profile'");
	s = spec();
	snprintf(s.mig_profile, sizeof(s.mig_profile), "big");
	expect(&s, "'mig_profile': expected a MIG profile such as 1g.10gb");
	s = spec();
	snprintf(s.gpu_model, sizeof(s.gpu_model), "h100");
	expect(&s, "'gpu_model': given without 'gpus', 'gpu_milli' or "
		   "'mig_profile'");
	s.gpus = 1;
	expect(&s, NULL);
	s = spec();
	snprintf(s.team, sizeof(s.team), "a b");
	expect(&s, "'team': expected 1 to 47 of letters, digits, '.', '_' "
		   "or '-'");
	s = spec();
	s.class_name[0] = '\0';
	expect(&s, "'class': expected 1 to 31 of letters, digits, '.', '_' "
		   "or '-'");
	s = spec();
	memset(s.name, 'x', sizeof(s.name));
	expect(&s, "'name': longer than 63 bytes");
	s = spec();
	snprintf(s.name, sizeof(s.name), "a\tb");
	expect(&s, "'name': control character at byte 1");
}

static void test_selector_syntax(void **state)
{
	(void)state;
	struct gf_job_spec s = spec();
	const char *good[] = { "zone=a", "zone=a,pool=gpu-1",
			       "k8s.io/arch=amd64" };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(s.node_selector, sizeof(s.node_selector), "%s",
			 good[i]);
		expect(&s, NULL);
	}
	struct {
		const char *sel, *msg;
	} bad[] = {
		{ "zone", "'node_selector': expected k=v,k=v at byte 4 (keys "
			  "and values: letters, digits, '.', '_', '-', '/')" },
		{ "zone=", "'node_selector': key 'zone' has no value" },
		{ "zone=a,", "'node_selector': expected ',' at byte 6" },
		{ "zone=a,zone=b", "'node_selector': key 'zone' twice" },
		{ "zone=a b", "'node_selector': expected ',' at byte 6" },
		{ "=a", "'node_selector': expected k=v,k=v at byte 0 (keys "
			"and values: letters, digits, '.', '_', '-', '/')" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(s.node_selector, sizeof(s.node_selector), "%s",
			 bad[i].sel);
		expect(&s, bad[i].msg);
	}
}

static void test_copy_release(void **state)
{
	(void)state;
	struct gf_job_spec s = spec(), d;
	s.command = gf_strdup("python train.py");
	gf_job_spec_copy(&d, &s);
	assert_ptr_not_equal(d.command, s.command);
	assert_string_equal(d.command, "python train.py");
	gf_job_spec_release(&s);
	assert_null(s.command);
	char big[GF_JOB_CMD_MAX + 1];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	gf_free(d.command);
	d.command = big;
	expect(&d, "'command': longer than 4095 bytes");
}

static struct gf_job running_job(void)
{
	struct gf_job j;
	memset(&j, 0, sizeof(j));
	j.seq = 7;
	snprintf(j.id, sizeof(j.id), "j7");
	j.spec = spec();
	j.spec.gpus = 2;
	j.state = GF_JOB_RUNNING;
	j.submitted_ms = 100;
	j.started_ms = 200;
	j.attempts = 1;
	j.block = 0;
	return j;
}

static void test_job_check(void **state)
{
	(void)state;
	char msg[256];
	struct gf_job j = running_job();
	struct gf_job_place pl = { .node = 0,
				   .ngpus = 2,
				   .gpus = { 0, 3 },
				   .gpu_milli = 1000,
				   .mig_start = -1 };
	snprintf(pl.node_name, sizeof(pl.node_name), "n0");
	j.place = &pl;
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), 0);
	pl.gpus[1] = 0; /* a GPU twice */
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
	pl.gpus[1] = 3;
	pl.gpu_milli = 500; /* not what the spec asks */
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
	pl.gpu_milli = 1000;
	j.place = NULL; /* running without placements */
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
	j.place = &pl;
	j.started_ms = 0; /* has run but no start time */
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
	j.started_ms = 200;
	snprintf(j.id, sizeof(j.id), "j8"); /* id is not j<seq> */
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
	snprintf(j.id, sizeof(j.id), "j7");
	j.state = GF_JOB_SUCCEEDED; /* final: no placements, an end */
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
	j.place = NULL;
	j.block = -1;
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
	j.ended_ms = 300;
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), 0);
	j.preemptions = 2; /* more than it started */
	assert_int_equal(gf_job_check(&j, msg, sizeof(msg)), GF_EINVAL);
}

/* --output / --error paths (logs): absolute, capped, known tokens. */
static void test_output_paths(void **state)
{
	(void)state;
	struct gf_err e;
	assert_int_equal(gf_job_path_check("output", NULL, &e), 0);
	assert_int_equal(gf_job_path_check("output", "/o/%j.%r.%a.%n.%%", &e),
			 0);
	assert_int_equal(gf_job_path_check("output", "o/x", &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'output': expected an absolute path"));
	assert_int_equal(gf_job_path_check("error", "/o/%x", &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'error': '%x' is no token"));
	assert_int_equal(gf_job_path_check("error", "/o/%", &e), GF_EINVAL);
	assert_int_equal(gf_job_path_check("error", "/o/a\nb", &e), GF_EINVAL);
	char *long_path = gf_malloc(GF_JOB_PATH_MAX + 1);
	memset(long_path, 'a', GF_JOB_PATH_MAX);
	long_path[0] = '/';
	long_path[GF_JOB_PATH_MAX] = '\0';
	assert_int_equal(gf_job_path_check("output", long_path, &e), GF_EINVAL);
	long_path[GF_JOB_PATH_MAX - 1] = '\0';
	assert_int_equal(gf_job_path_check("output", long_path, &e), 0);
	/* in a spec: checked, copied, released */
	struct gf_job_spec sp = { .replicas = 1,
				  .team = "t",
				  .class_name = "c" };
	sp.output = long_path;
	char rel[] = "rel", abs[] = "/e/%j";
	sp.error = rel;
	assert_int_equal(gf_job_spec_check(&sp, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'error'"));
	sp.error = abs;
	struct gf_job_spec cp;
	gf_job_spec_copy(&cp, &sp);
	assert_ptr_not_equal(cp.output, sp.output);
	assert_string_equal(cp.error, "/e/%j");
	gf_job_spec_release(&cp);
	gf_free(long_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_spec_check),
		cmocka_unit_test(test_selector_syntax),
		cmocka_unit_test(test_copy_release),
		cmocka_unit_test(test_job_check),
		cmocka_unit_test(test_output_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
