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

/* A fresh HPA at cur, one sync per (t, usage) pair; returns the counts. */
static void run_syncs(const struct gf_hpa_spec *spec, int32_t cur,
		      const int64_t *t_s, const int64_t *usage, size_t n,
		      int32_t *out)
{
	struct gf_hpa h;
	struct gf_err e;
	assert_int_equal(gf_hpa_init(&h, spec, &e), 0);
	for (size_t i = 0; i < n; i++) {
		struct gf_hpa_input in = { MS(t_s[i]),	  cur,
					   cur,		  cur,
					   usage[i] >= 0, usage[i] * 1000 };
		if (usage[i] < 0)
			in.usage_milli = 0;
		struct gf_hpa_output o;
		assert_int_equal(gf_hpa_sync(&h, &in, &o), 0);
		char msg[200];
		if (gf_hpa_check(&h, msg, sizeof(msg)))
			fail_msg("%s", msg);
		cur = o.replicas;
		out[i] = cur;
	}
	gf_hpa_release(&h);
}

/* The first sync stores the current count: on the legacy path it holds
 * for the whole window, and a sample exactly at the cutoff counts (not
 * Before); on the behavior path it must be strictly newer. */
static void test_initial_recommendation_and_ties(void **state)
{
	(void)state;
	int64_t t[23], u[23];
	for (int i = 0; i < 23; i++) {
		t[i] = 15 * i;
		u[i] = 0;
	}
	int32_t out[23];
	struct gf_hpa_spec s = ref_spec();
	run_syncs(&s, 10, t, u, 23, out);
	assert_int_equal(out[20], 10); /* t=300: the t=0 record counts */
	assert_int_equal(out[21], 1);  /* t=315 */
	s.behavior = true;
	run_syncs(&s, 10, t, u, 23, out);
	assert_int_equal(out[19], 10); /* t=285 */
	assert_int_equal(out[20], 1);  /* t=300: t=0 is not After(0) */
}

/* A metric that cannot be read changes nothing and stores nothing. */
static void test_metric_unavailable(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.behavior = true;
	struct gf_hpa h;
	struct gf_err e;
	assert_int_equal(gf_hpa_init(&h, &s, &e), 0);
	struct gf_hpa_input in = { 0, 8, 8, 8, true, 40000 };
	struct gf_hpa_output o;
	assert_int_equal(gf_hpa_sync(&h, &in, &o), 0);
	assert_int_equal(o.replicas, 8);
	size_t nrecs = h.nrecs;
	/* down for 10 minutes: no scale-down, though the window passes */
	for (int i = 1; i <= 40; i++) {
		in = (struct gf_hpa_input){ MS(15 * i), 8, 8, 8, false, 0 };
		assert_int_equal(gf_hpa_sync(&h, &in, &o), 0);
		assert_int_equal(o.replicas, 8);
		assert_false(o.rescale);
		assert_int_equal(o.reason, GF_HPA_REASON_NO_METRIC);
	}
	assert_int_equal(h.nrecs, nrecs);
	/* back, at 0: the old recommendation (8) is out of the window */
	in = (struct gf_hpa_input){ MS(15 * 41), 8, 8, 8, true, 0 };
	assert_int_equal(gf_hpa_sync(&h, &in, &o), 0);
	assert_int_equal(o.replicas, 1);
	gf_hpa_release(&h);
}

static void test_bypasses(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.min_replicas = 2;
	struct gf_hpa_output o = one_sync(&s, 30, 0);
	assert_int_equal(o.replicas, 20); /* above max: max, no window */
	assert_int_equal(o.reason, GF_HPA_REASON_ABOVE_MAX);
	assert_int_equal(o.proposal, -1);
	o = one_sync(&s, 1, 500000);
	assert_int_equal(o.replicas, 2); /* below min: min, not 4 */
	assert_int_equal(o.reason, GF_HPA_REASON_BELOW_MIN);
	o = one_sync(&s, 0, 500000);
	assert_int_equal(o.replicas, 0); /* 0 with min 2: disabled */
	assert_int_equal(o.reason, GF_HPA_REASON_DISABLED);
	assert_false(o.rescale);
}

static void test_value_target_and_zero(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.target = GF_HPA_VALUE;
	s.target_milli = 100000;
	struct gf_hpa h;
	struct gf_err e;
	/* ratio 2.5 over 3 ready of 2 spec: ceil(2.5 * 3) */
	assert_int_equal(gf_hpa_init(&h, &s, &e), 0);
	struct gf_hpa_input in = { 0, 2, 2, 3, true, 250000 };
	struct gf_hpa_output o;
	assert_int_equal(gf_hpa_sync(&h, &in, &o), 0);
	assert_int_equal(o.proposal, 8);
	gf_hpa_release(&h);
	/* scale from zero (min 0): ceil(ratio) */
	s.min_replicas = 0;
	o = one_sync(&s, 0, 250000);
	assert_int_equal(o.proposal, 3);
	assert_int_equal(o.replicas, 3);
	/* AverageValue from zero: +Inf ratio, ceil(usage / target) */
	s = ref_spec();
	s.min_replicas = 0;
	o = one_sync(&s, 0, 12000);
	assert_int_equal(o.proposal, 3);
	assert_int_equal(o.replicas, 3);
	o = one_sync(&s, 0, 0); /* 0/0: NaN, not within: 0 */
	assert_int_equal(o.replicas, 0);
}

static void test_select_policies(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.max_replicas = 100;
	s.behavior = true;
	s.up.has_select = true;
	s.up.select = GF_HPA_SELECT_MIN; /* min(10 + 4, 10 * 2) */
	assert_int_equal(one_sync(&s, 10, 500000).replicas, 14);
	s.up.select = GF_HPA_SELECT_DISABLED;
	assert_int_equal(one_sync(&s, 10, 500000).replicas, 10);
	s = ref_spec();
	s.max_replicas = 100;
	s.behavior = true;
	s.down.has_window = true;
	s.down.window_s = 0;
	s.down.has_policies = true;
	s.down.npolicies = 2;
	s.down.policies[0] = (struct gf_hpa_policy){ GF_HPA_PERCENT, 50, 60 };
	s.down.policies[1] = (struct gf_hpa_policy){ GF_HPA_PODS, 2, 60 };
	/* Max: the biggest change, int(10 * 0.5) = 5; the initial record
	 * is at now, so window 0 does not see it */
	assert_int_equal(one_sync(&s, 10, 0).replicas, 5);
	s.down.has_select = true;
	s.down.select = GF_HPA_SELECT_MIN; /* the smallest change: 10 - 2 */
	assert_int_equal(one_sync(&s, 10, 0).replicas, 8);
}

/* Pods 1 per 60 s: events counted only while strictly newer than the
 * period's cutoff. */
static void test_policy_periods(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.behavior = true;
	s.up.has_policies = true;
	s.up.npolicies = 1;
	s.up.policies[0] = (struct gf_hpa_policy){ GF_HPA_PODS, 1, 60 };
	int64_t t[] = { 0, 15, 45, 60, 75, 120 };
	int64_t u[] = { 100, 100, 100, 100, 100, 100 };
	int32_t out[6];
	run_syncs(&s, 1, t, u, 6, out);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 2);
	assert_int_equal(out[3], 3); /* the t=0 event is not After(0) */
	assert_int_equal(out[4], 3);
	assert_int_equal(out[5], 4);
}

static void test_tolerance_per_direction(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.behavior = true;
	s.up.has_tolerance = true;
	s.up.tolerance = 0; /* ratio 21/20 = 1.05 scales up */
	assert_int_equal(one_sync(&s, 4, 21000).proposal, 5);
	s = ref_spec();
	assert_int_equal(one_sync(&s, 4, 21000).proposal, 4);
	s.tolerance = 0.0; /* the controller's flag */
	assert_int_equal(one_sync(&s, 4, 21000).proposal, 5);
}

static void expect_spec_error(struct gf_hpa_spec s, const char *msg)
{
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_hpa_spec_finish(&s, &e), GF_EINVAL);
	assert_string_equal(e.msg, msg);
}

static void test_spec_validation(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.max_replicas = 0;
	expect_spec_error(s, "maxReplicas 0: must be greater than zero");
	s = ref_spec();
	s.min_replicas = 30;
	expect_spec_error(s, "minReplicas 30: must be less than or equal to "
			     "maxReplicas 20");
	s = ref_spec();
	s.target_milli = 0;
	expect_spec_error(s, "the metric's target: must be positive");
	s = ref_spec();
	s.behavior = true;
	s.down.has_policies = true;
	s.down.npolicies = 0;
	expect_spec_error(s, "behavior.scaleDown.policies: must specify at "
			     "least one policy");
	s.down.npolicies = 1;
	s.down.policies[0] = (struct gf_hpa_policy){ GF_HPA_PODS, 1, 0 };
	expect_spec_error(s, "behavior.scaleDown.policies[0].periodSeconds "
			     "0: must be greater than zero");
	s = ref_spec();
	s.behavior = true;
	s.up.has_window = true;
	s.up.window_s = -1;
	expect_spec_error(s, "behavior.scaleUp.stabilizationWindowSeconds "
			     "-1: must be zero or more");
	/* beyond the API's bounds: the decision takes them as they are */
	s.up.window_s = 3601;
	struct gf_err e;
	assert_int_equal(gf_hpa_spec_finish(&s, &e), 0);
}

static void test_quantities(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int rc;
		int64_t milli;
	} rows[] = {
		{ "5", 0, 5000 },	 { "500m", 0, 500 },
		{ "1.5", 0, 1500 },	 { "2k", 0, 2000000 },
		{ "1Ki", 0, 1024000 },	 { "1e3", 0, 1000000 },
		{ "1.0e-05", 0, 1 },	 { "0.0001", 0, 1 },
		{ ".5", 0, 500 },	 { "5.", 0, 5000 },
		{ "+7", 0, 7000 },	 { "-0", 0, 0 },
		{ "0", 0, 0 },		 { "1P", 0, 1000000000000000000LL },
		{ "-1", GF_ERANGE, 0 },	 { "nan", GF_EPARSE, 0 },
		{ "inf", GF_EPARSE, 0 }, { "", GF_EPARSE, 0 },
		{ "5x", GF_EPARSE, 0 },	 { "1.2.3", GF_EPARSE, 0 },
		{ "1e", GF_EPARSE, 0 },	 { "10E", GF_ERANGE, 0 },
		{ " 5", GF_EPARSE, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int64_t v = -1;
		int rc = gf_quantity_milli(rows[i].s, &v);
		if (rc != rows[i].rc || (rc == 0 && v != rows[i].milli))
			fail_msg("'%s': rc %d value %lld", rows[i].s, rc,
				 (long long)v);
	}
}

/* KEDA: activation strictly above the threshold, cooldown from the
 * last active poll (strictly before now), no scale to zero on errors. */
static struct gf_keda_spec keda_spec(void)
{
	struct gf_keda_spec k;
	gf_keda_spec_init(&k);
	k.hpa.target_milli = 5000;
	k.max_replicas = 10;
	k.activation_milli = 3000;
	k.cooldown_s = 60;
	k.polling_s = 15;
	return k;
}

static int32_t keda_run(const struct gf_keda_spec *ks, int32_t cur,
			const int64_t *usage, size_t n, int32_t *out)
{
	struct gf_keda k;
	struct gf_err e;
	assert_int_equal(gf_keda_init(&k, ks, 0, &e), 0);
	for (size_t i = 0; i < n; i++) {
		struct gf_hpa_input in = { MS(15 * (int64_t)i),
					   cur,
					   cur,
					   cur,
					   usage[i] >= 0,
					   usage[i] >= 0 ? usage[i] * 1000
							 : 0 };
		struct gf_hpa_output o;
		assert_int_equal(gf_keda_sync(&k, &in, &o), 0);
		cur = o.replicas;
		out[i] = cur;
	}
	gf_keda_release(&k);
	return cur;
}

static void test_keda(void **state)
{
	(void)state;
	struct gf_keda_spec ks = keda_spec();
	int32_t out[16];
	/* 3 is not above 3: stays at 0; 4 activates to 1; then the HPA */
	int64_t u1[] = { 3, 4, 4, 40 };
	keda_run(&ks, 0, u1, 4, out);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 1);
	assert_int_equal(out[3], 4); /* the legacy HPA: at most 4 from 1 */
	/* cooldown 60: active at t=0, inactive after; t=60 is not past
	 * 0 + 60, t=75 is */
	int64_t u2[] = { 10, 0, 0, 0, 0, 0 };
	keda_run(&ks, 2, u2, 6, out);
	assert_int_equal(out[3], 2); /* the HPA's window holds 2 */
	assert_int_equal(out[4], 2); /* t=60 */
	assert_int_equal(out[5], 0); /* t=75 */
	/* a scaler error is never active, and never scales to zero */
	int64_t u3[] = { 10, -1, -1, -1, -1, -1, -1, -1 };
	keda_run(&ks, 2, u3, 8, out);
	assert_int_equal(out[7], 2);
	/* minReplicaCount 1: always active, never 0 */
	ks.min_replicas = 1;
	int64_t u4[] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	keda_run(&ks, 3, u4, 8, out);
	assert_int_equal(out[7], 3); /* the HPA's 300 s window holds */
	/* initialCooldownPeriod 120 from creation (t=0): no scale to 0
	 * before t=120 even when never active */
	ks = keda_spec();
	ks.initial_cooldown_s = 120;
	int64_t u5[10] = { 0 };
	keda_run(&ks, 1, u5, 10, out);
	assert_int_equal(out[7], 1); /* t=105 */
	assert_int_equal(out[8], 0); /* t=120: not After(120) any more */
	/* fallback: 2 errors, then the HPA sees 5 * 4 */
	ks = keda_spec();
	ks.fallback_failures = 2;
	ks.fallback_replicas = 4;
	int64_t u6[] = { 10, -1, -1, -1 };
	keda_run(&ks, 2, u6, 4, out);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 4);
}

/* KEDA's idleReplicaCount (kedacore/keda pkg/scaling/executor
 * scale_scaledobjects_test.go; the cases written here from its
 * documented behaviour).  keda_spec(): activation above 3, so a value of
 * 0 is inactive and 10 active. */
static void test_keda_idle(void **state)
{
	(void)state;
	struct gf_keda_spec ks = keda_spec();
	int32_t out[16];
	ks.min_replicas = 5;
	ks.min_set = true;
	ks.idle_replicas = 0;
	/* TestScaleToIdleReplicasWhenNotActive: 10 replicas, inactive, min
	 * 5, idle 0, never active before: to 0 at once (not 10, not 5) */
	int64_t u1[] = { 0, 0, 0, 0, 0, 0 };
	keda_run(&ks, 10, u1, 6, out);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[5], 0); /* the HPA stays off at 0 */
	/* TestScaleFromIdleToMinReplicasWhenActive: at idle (0), active:
	 * to minReplicaCount 5, not 1 */
	int64_t u2[] = { 10, 10 };
	keda_run(&ks, 0, u2, 2, out);
	assert_int_equal(out[0], 5);
	/* TestEventWitTriggerInfo: 2 replicas (below min, above idle),
	 * active, idle set: to min 5 */
	keda_run(&ks, 2, u2, 1, out);
	assert_int_equal(out[0], 5);
	/* idle, then active again, then idle after the cooldown (60 s from
	 * the last active poll, strictly before now): 10 active at t=0
	 * holds, inactive until t=60 holds, t=75 goes to 0; active at t=90
	 * wakes to 5 */
	int64_t u3[] = { 10, 0, 0, 0, 0, 0, 10, 10 };
	keda_run(&ks, 10, u3, 8, out);
	assert_int_equal(out[0], 10);
	assert_int_equal(out[4], 10); /* t=60: still cooling down */
	assert_int_equal(out[5], 0);  /* t=75: to idle */
	assert_int_equal(out[6], 5);  /* t=90: active, from idle to min */
	/* a scaler error is not inactivity: no scale to idle */
	int64_t u4[] = { -1, -1, -1 };
	keda_run(&ks, 7, u4, 3, out);
	assert_int_equal(out[2], 7);
	/* without idleReplicaCount (TestScaleToMinReplicasFromLower
	 * InitialReplicaCount): min 5 keeps the scaler active, below min
	 * goes to min, never under it */
	ks.idle_replicas = -1;
	keda_run(&ks, 10, u1, 1, out);
	assert_int_equal(out[0], 10);
	keda_run(&ks, 1, u1, 1, out);
	assert_int_equal(out[0], 5);
	/* idle 0 with minReplicaCount given as 0 (KEDA's bound is then 1):
	 * accepted, and scales to 0 as min 0 does
	 * (TestScaleToMinReplicasWhenNotActive) */
	ks = keda_spec();
	ks.min_set = true;
	ks.idle_replicas = 0;
	keda_run(&ks, 10, u1, 1, out);
	assert_int_equal(out[0], 0);
	keda_run(&ks, 0, u2, 1, out);
	assert_int_equal(out[0], 1); /* TestScaleFromMinReplicasWhenActive */
}

/* KEDA's CheckReplicaCountBoundsAreValid (TestCheckReplicaCountBounds
 * AreValid in apis/keda/v1alpha1/scaledobject_types_test.go): idle must
 * be below min (min given as 0 counts as 1; min absent as 0). */
static void test_keda_idle_bounds(void **state)
{
	(void)state;
	struct {
		int32_t min;
		bool min_set;
		int32_t idle;
		int rc;
		const char *msg;
	} c[] = {
		{ 1, true, 0, 0, NULL },  /* valid: min 1, idle 0 */
		{ 1, true, -1, 0, NULL }, /* valid: no idle */
		{ 1, true, 1, GF_EINVAL,
		  "idleReplicaCount 1 must be less than minReplicaCount 1" },
		{ 1, true, 2, GF_EINVAL,
		  "idleReplicaCount 2 must be less than minReplicaCount 1" },
		{ 0, true, 0, 0, NULL }, /* min 0 given: bound 1 */
		{ 0, false, 0, GF_EINVAL,
		  "idleReplicaCount 0 must be less than minReplicaCount 0" },
		{ 5, true, -2, GF_EINVAL,
		  "idleReplicaCount -2: expected >= 0" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct gf_keda_spec ks = keda_spec();
		ks.min_replicas = c[i].min;
		ks.min_set = c[i].min_set;
		ks.idle_replicas = c[i].idle;
		struct gf_keda k;
		struct gf_err e;
		gf_err_clear(&e);
		int rc = gf_keda_init(&k, &ks, 0, &e);
		assert_int_equal(rc, c[i].rc);
		if (rc == 0)
			gf_keda_release(&k);
		else
			assert_string_equal(e.msg, c[i].msg);
	}
}

/* KEDA's pause annotations: TestScaleToPausedReplicasCount (executor
 * tests: paused-replicas 0, 2 replicas, active: to 0) and
 * TestNeedToBePausedByAnnotation (paused: held, paused-replicas wins). */
static void test_keda_paused(void **state)
{
	(void)state;
	struct gf_keda_spec ks = keda_spec();
	int32_t out[16];
	int64_t hot[] = { 40, 40, 40, 40 };
	ks.paused_replicas = 0;
	keda_run(&ks, 2, hot, 4, out);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[3], 0); /* no activation, no HPA */
	ks.paused_replicas = 4;
	keda_run(&ks, 9, hot, 4, out);
	assert_int_equal(out[0], 4);
	assert_int_equal(out[3], 4);
	/* paused: held at the current count whatever the metric */
	ks.paused_replicas = -1;
	ks.paused = true;
	keda_run(&ks, 3, hot, 4, out);
	assert_int_equal(out[3], 3);
	int64_t cold[] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	keda_run(&ks, 3, cold, 8, out);
	assert_int_equal(out[7], 3); /* no cooldown to 0 either */
	/* both: paused-replicas wins */
	ks.paused_replicas = 1;
	keda_run(&ks, 3, hot, 1, out);
	assert_int_equal(out[0], 1);
	/* the reason the sync gives */
	struct gf_keda k;
	struct gf_err e;
	assert_int_equal(gf_keda_init(&k, &ks, 0, &e), 0);
	struct gf_hpa_input in = { 0, 3, 3, 3, true, 40000 };
	struct gf_hpa_output o;
	assert_int_equal(gf_keda_sync(&k, &in, &o), 0);
	assert_string_equal(gf_hpa_reason_name(o.reason), "keda-paused");
	assert_true(o.rescale);
	gf_keda_release(&k);
	ks.paused_replicas = -2;
	assert_int_equal(gf_keda_init(&k, &ks, 0, &e), GF_EINVAL);
}

/* gf_warm_need by hand: slots 8, occupancy 0.75 (6 per replica), W 120,
 * drain 60. */
static void test_warm_need(void **state)
{
	(void)state;
	struct gf_warm_spec ws = { 120, 8, 0.75, 60 };
	/* steady: 3 req/s of 4 s each: 12 slots: ceil(12 / 6) = 2 */
	struct gf_warm_input wi = { 2, 0, NULL, 0, 12, 3, 4 };
	assert_int_equal(gf_warm_need(&ws, &wi), 2);
	/* 1 ready replica, 6 req/s: supply 8 * 120 = 960 slot-s; demand
	 * 12 * 2 + 6 * 120 * 4 = 2904: backlog (2904 - 960) / 4 = 486;
	 * need ceil((24 + 486 * 4 / 60) / 6) = ceil(9.4) = 10 */
	wi = (struct gf_warm_input){ 1, 0, NULL, 0, 12, 6, 4 };
	assert_int_equal(gf_warm_need(&ws, &wi), 10);
	/* the same with 3 replicas warming, 30 s left each: supply + 3 *
	 * 90 * 8 = 2160 more: 3120 >= 2904, no backlog: ceil(24 / 6) */
	double left[] = { 30, 30, 30 };
	wi = (struct gf_warm_input){ 1, 3, left, 0, 12, 6, 4 };
	assert_int_equal(gf_warm_need(&ws, &wi), 4);
	/* what is held now: 40 waiting + 8 running over 6 */
	wi = (struct gf_warm_input){ 1, 0, NULL, 40, 8, 0, 4 };
	assert_int_equal(gf_warm_need(&ws, &wi), 8);
}

/* A scale-down never takes a warming replica, and the event the HPA
 * stored says the change that was made. */
static void test_warm_floor(void **state)
{
	(void)state;
	struct gf_hpa_spec s = ref_spec();
	s.behavior = true;
	s.down.has_window = true;
	s.down.window_s = 0;
	struct gf_hpa h;
	struct gf_err e;
	assert_int_equal(gf_hpa_init(&h, &s, &e), 0);
	struct gf_warm_spec ws = { 120, 8, 0.625, 60 };
	double left[] = { 60, 60, 60 };
	struct gf_warm_input wi = { 5, 3, left, 0, 0, 0, 4 };
	struct gf_hpa_input in = { 0, 8, 8, 5, true, 0 };
	struct gf_hpa_output o;
	assert_int_equal(gf_warm_sync(&h, &ws, &wi, &in, &o), 0);
	assert_int_equal(o.replicas, 3);
	assert_int_equal(h.ndowns, 1);
	assert_int_equal(h.downs[0].change, 5);
	char msg[200];
	assert_int_equal(gf_hpa_check(&h, msg, sizeof(msg)), 0);
	gf_hpa_release(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_a_legacy),
		cmocka_unit_test(test_trace_b_defaulted),
		cmocka_unit_test(test_trace_c_pods_policy),
		cmocka_unit_test(test_tolerance_table),
		cmocka_unit_test(test_initial_recommendation_and_ties),
		cmocka_unit_test(test_metric_unavailable),
		cmocka_unit_test(test_bypasses),
		cmocka_unit_test(test_value_target_and_zero),
		cmocka_unit_test(test_select_policies),
		cmocka_unit_test(test_policy_periods),
		cmocka_unit_test(test_tolerance_per_direction),
		cmocka_unit_test(test_spec_validation),
		cmocka_unit_test(test_quantities),
		cmocka_unit_test(test_keda),
		cmocka_unit_test(test_keda_idle),
		cmocka_unit_test(test_keda_idle_bounds),
		cmocka_unit_test(test_keda_paused),
		cmocka_unit_test(test_warm_need),
		cmocka_unit_test(test_warm_floor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
