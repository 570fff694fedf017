/*
 * test_hpa_upstream.c - the HPA's inputs beyond one External metric:
 * several metrics, an unread metric, unready and missing pods, status
 * replicas apart from spec.  Each case is written from the behaviour
 * kubernetes' pkg/controller/podautoscaler tests document (the upstream
 * test named beside it) and the reference's A1; no upstream code.
 * Per-pod resource levels are percents of the request (equal requests),
 * so a level of 300m on a 1.0 CPU request is 30 (30000 milli).
 */
#include <string.h>

#include <gpufleet/scale.h>

#include "helpers.h"

static struct gf_hpa_spec spec(int32_t min, int32_t max,
			       enum gf_hpa_metric_kind kind,
			       enum gf_hpa_target_type target, int64_t milli)
{
	struct gf_hpa_spec s;
	gf_hpa_spec_init(&s);
	s.min_replicas = min;
	s.max_replicas = max;
	s.kind = kind;
	s.target = target;
	s.target_milli = milli;
	return s;
}

/* One sync from a fresh HPA. */
static struct gf_hpa_output sync1(const struct gf_hpa_spec *s,
				  const struct gf_hpa_input *in,
				  const struct gf_hpa_more *mo)
{
	struct gf_hpa h;
	struct gf_err e;
	assert_int_equal(gf_hpa_init(&h, s, &e), 0);
	struct gf_hpa_output o;
	assert_int_equal(gf_hpa_sync_more(&h, in, mo, &o), 0);
	char msg[200];
	assert_int_equal(gf_hpa_check(&h, msg, sizeof(msg)), 0);
	gf_hpa_release(&h);
	return o;
}

/* replica_calculator_test.go
 * TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods: 3 replicas, 1 of them
 * ready, External Value 8600 against 4400: the ratio times the ready pods,
 * ceil(1.95 * 1) = 2 (6 if all 3 counted). */
static void test_external_ignores_unready(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(1, 10, GF_HPA_EXTERNAL, GF_HPA_VALUE, 4400000);
	struct gf_hpa_input in = { 0, 3, 3, 1, true, 8600000 };
	struct gf_hpa_more mo = { 2, 0, { false }, { 0 } };
	struct gf_hpa_output o = sync1(&s, &in, &mo);
	assert_int_equal(o.proposal, 2);
	/* the same sync with every pod ready: 6, as before */
	in.ready_replicas = 3;
	mo.unready_replicas = 0;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 6);
}

/* horizontal_test.go TestScaleUpOneMetricInvalid: 3 replicas, CPU at
 * 30, 40, 50 % of a 30 % target, a second metric that cannot be read:
 * the valid one still scales up, to ceil(40/30 * 3) = 4. */
static void test_one_metric_invalid_scales_up(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(2, 6, GF_HPA_UTILIZATION, GF_HPA_AVERAGE_VALUE, 30000);
	s.nmore = 1;
	s.more[0] =
		(struct gf_hpa_metric){ GF_HPA_EXTERNAL, GF_HPA_VALUE, 1000 };
	struct gf_hpa_input in = { 0, 3, 3, 3, true, 120000 };
	struct gf_hpa_more mo = { 0, 0, { false }, { 0 } };
	struct gf_hpa_output o = sync1(&s, &in, &mo);
	assert_int_equal(o.reason, GF_HPA_REASON_COMPUTED);
	assert_int_equal(o.replicas, 4);
	assert_true(o.rescale);
}

/* horizontal_test.go TestScaleDownOneMetricInvalid: 5 replicas, CPU at
 * 10, 30, 50, 25, 25 % of 50 % (would go to 3), a second metric unread:
 * no scale-down on an invalid metric, 5 stays. */
static void test_one_metric_invalid_no_scale_down(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(2, 6, GF_HPA_UTILIZATION, GF_HPA_AVERAGE_VALUE, 50000);
	s.nmore = 1;
	s.more[0] = (struct gf_hpa_metric){ GF_HPA_PER_POD,
					    GF_HPA_AVERAGE_VALUE, 1000 };
	struct gf_hpa_input in = { 0, 5, 5, 5, true, 140000 };
	struct gf_hpa_more mo = { 0, 0, { false }, { 0 } };
	struct gf_hpa_output o = sync1(&s, &in, &mo);
	assert_int_equal(o.reason, GF_HPA_REASON_NO_METRIC);
	assert_int_equal(o.replicas, 5);
	assert_false(o.rescale);
	/* the second metric read, at its target: CPU's 3 wins the max */
	mo.ok[0] = true;
	mo.usage_milli[0] = 5000;
	o = sync1(&s, &in, &mo);
	assert_int_equal(o.proposal, 5); /* the Pods metric: within */
	/* both read, the second one low too: the largest, 3 */
	mo.usage_milli[0] = 1000;
	o = sync1(&s, &in, &mo);
	assert_int_equal(o.proposal, 3);
	/* the first unread alone: no scale-down either */
	in.metric_ok = false;
	o = sync1(&s, &in, &mo);
	assert_int_equal(o.reason, GF_HPA_REASON_NO_METRIC);
	/* both unread: no metric at all */
	mo.ok[0] = false;
	o = sync1(&s, &in, &mo);
	assert_int_equal(o.reason, GF_HPA_REASON_NO_METRIC);
	assert_int_equal(o.replicas, 5);
}

/* Several metrics, the largest proposal wins (horizontal.go's
 * computeReplicasForMetrics and the reference's A1 "Multiple metrics";
 * the two-metric setup of horizontal_test.go TestScaleUpOneMetricInvalid
 * with both metrics valid): External AverageValue 5 per pod at 40 (8),
 * a Pods metric at 2x its target over 4 pods (8 too), then 3x (12). */
static void test_largest_proposal(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(1, 20, GF_HPA_EXTERNAL, GF_HPA_AVERAGE_VALUE, 5000);
	s.nmore = 1;
	s.more[0] = (struct gf_hpa_metric){ GF_HPA_PER_POD,
					    GF_HPA_AVERAGE_VALUE, 10000 };
	struct gf_hpa_input in = { 0, 4, 4, 4, true, 40000 };
	struct gf_hpa_more mo = { 0, 0, { true }, { 80000 } };
	assert_int_equal(sync1(&s, &in, &mo).proposal, 8);
	mo.usage_milli[0] = 120000;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 12);
	in.usage_milli = 100000; /* the External metric's 20 now */
	assert_int_equal(sync1(&s, &in, &mo).proposal, 20);
	/* both low: the larger of 1 and 2 */
	in.usage_milli = 5000;
	mo.usage_milli[0] = 20000;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 2);
}

/* horizontal_test.go TestMoreReplicasThanSpecNoScale: spec 4, status 5
 * (a surge), CPU at 50 % on all 5 pods against 50 %: no change, 4. */
static void test_more_replicas_than_spec(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(1, 8, GF_HPA_UTILIZATION, GF_HPA_AVERAGE_VALUE, 50000);
	struct gf_hpa_input in = { 0, 4, 5, 5, true, 250000 };
	struct gf_hpa_output o = sync1(&s, &in, NULL);
	assert_int_equal(o.proposal, 4);
	assert_int_equal(o.replicas, 4);
	assert_false(o.rescale);
}

/* Missing pods (replica_calculator_test.go):
 * TestReplicaCalcMissingMetricsNoChangeEq: 2 replicas, one reports 100 %
 * of a 100 % target, one reports nothing: stays 2.
 * TestReplicaCalcMissingMetricsScaleUp-like: 4 pods, 2 at 90 % of 50 %,
 * 2 missing: they count as 0 on a scale-up, (180/4)/50 within, stays 4.
 * On a scale-down (2 at 10 % of 50 %, 2 missing) they count as 100 %:
 * (20 + 200)/4 = 55 %, the direction flips, stays 4. */
static void test_missing_pods(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(1, 10, GF_HPA_UTILIZATION, GF_HPA_AVERAGE_VALUE, 100000);
	struct gf_hpa_input in = { 0, 2, 2, 1, true, 100000 };
	struct gf_hpa_more mo = { 0, 1, { false }, { 0 } };
	assert_int_equal(sync1(&s, &in, &mo).proposal, 2);
	s.target_milli = 50000;
	in = (struct gf_hpa_input){ 0, 4, 4, 2, true, 180000 };
	mo.missing_replicas = 2;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 4);
	/* 2 at 300 %: ratio 6, the missing at 0: (600/4)/50 = 3, 12 pods
	 * (without them ceil(6 * 2) = 12 too); 2 at 160 %: (320/4)/50 =
	 * 1.6, ceil(6.4) = 7 (without them ceil(3.2 * 2) = 7) */
	in.usage_milli = 600000;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 12);
	in.usage_milli = 320000;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 7);
	/* the scale-down: 2 at 10 %, the missing at 100 %: 55 %, the
	 * direction flips: 4 (1 if the missing were left out) */
	in.usage_milli = 20000;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 4);
	/* a Pods metric on a scale-down: missing at the target */
	s.kind = GF_HPA_PER_POD;
	s.target_milli = 10000;
	in.usage_milli = 4000; /* 2 at 2 of 10: (4 + 20)/4 = 6 -> ceil(2.4) */
	assert_int_equal(sync1(&s, &in, &mo).proposal, 3);
	/* no pod reports: the metric is invalid */
	in.ready_replicas = 0;
	assert_int_equal(sync1(&s, &in, &mo).reason, GF_HPA_REASON_NO_METRIC);
}

/* replica_calculator_test.go TestReplicaCalcScaleUpUnreadyLessScale:
 * 3 pods, 2 ready at 50 and 70 % (avg 60) of 30 %, 1 unready: it counts
 * as 0 on the scale-up, (120/3)/30 = 1.33, ceil(1.33 * 3) = 4 (without
 * the rule ceil(2 * 2) = 4 as well, or 6 over all 3). */
static void test_unready_less_scale(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(1, 10, GF_HPA_UTILIZATION, GF_HPA_AVERAGE_VALUE, 30000);
	struct gf_hpa_input in = { 0, 3, 3, 2, true, 120000 };
	struct gf_hpa_more mo = { 1, 0, { false }, { 0 } };
	assert_int_equal(sync1(&s, &in, &mo).proposal, 4);
	/* 2 ready at 40 and 50 % (45) with 1 unready: (90/3)/30 = 1,
	 * within: stays 3 (ceil(1.5 * 2) = 3 without the rule) */
	in.usage_milli = 90000;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 3);
	/* 2 ready at 40 and 50 % with 2 unready at 4 pods: (90/4)/30 =
	 * 0.73 < 1 after a ratio of 1.5: the direction flips, stays 4 */
	in = (struct gf_hpa_input){ 0, 4, 4, 2, true, 90000 };
	mo.unready_replicas = 2;
	assert_int_equal(sync1(&s, &in, &mo).proposal, 4);
}

/* Counts below zero are refused, the HPA unchanged. */
static void test_bad_counts(void **state)
{
	(void)state;
	struct gf_hpa_spec s =
		spec(1, 10, GF_HPA_PER_POD, GF_HPA_AVERAGE_VALUE, 1000);
	struct gf_hpa h;
	struct gf_err e;
	assert_int_equal(gf_hpa_init(&h, &s, &e), 0);
	struct gf_hpa_input in = { 0, 3, 3, 3, true, 3000 };
	struct gf_hpa_more mo = { -1, 0, { false }, { 0 } };
	struct gf_hpa_output o;
	assert_int_equal(gf_hpa_sync_more(&h, &in, &mo, &o), GF_EINVAL);
	gf_hpa_release(&h);
	s.nmore = 1;
	s.more[0].target_milli = 0;
	assert_int_equal(gf_hpa_init(&h, &s, &e), GF_EINVAL);
	assert_string_equal(e.msg, "metrics[1]'s target: must be positive");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_external_ignores_unready),
		cmocka_unit_test(test_one_metric_invalid_scales_up),
		cmocka_unit_test(test_one_metric_invalid_no_scale_down),
		cmocka_unit_test(test_largest_proposal),
		cmocka_unit_test(test_more_replicas_than_spec),
		cmocka_unit_test(test_missing_pods),
		cmocka_unit_test(test_unready_less_scale),
		cmocka_unit_test(test_bad_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
