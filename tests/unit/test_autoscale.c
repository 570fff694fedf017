/*
 * test_autoscale.c - the autoscaler's adapters and its simulator:
 * manifests read (the legacy/behavior switch, ScaledObjects, errors with
 * their lines), samples files (every bad-input error), the two metric
 * parsers, manifests written and read back, and `simulate autoscale` on
 * traces small enough to compute by hand (TTFT, GPU-hours, warm-up,
 * conservation), which the golden files then rest on.
 */
#include <math.h>

#include <gpufleet/scale.h>

#include "autoscale/autoscale.h"
#include "helpers.h"
#include "sim/autoscale.h"
#include "util/fmt.h"
#include "util/mem.h"

static const char *HPA_HEAD =
	"apiVersion: autoscaling/v2\n"
	"kind: HorizontalPodAutoscaler\n"
	"metadata: {name: llm}\n"
	"spec:\n"
	"  scaleTargetRef: {kind: Deployment, name: llm}\n"
	"  minReplicas: 2\n"
	"  maxReplicas: 9\n"
	"  metrics:\n"
	"  - type: External\n"
	"    external:\n"
	"      metric: {name: q}\n"
	"      target: {type: AverageValue, "
	"averageValue: 500m}\n";

static int parse(const char *tail, struct gf_as_scaler *sc, struct gf_err *e)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s", HPA_HEAD, tail);
	gf_err_clear(e);
	return gf_as_parse_manifest(text, strlen(text), "m.yaml", sc, e);
}

static void test_manifest_hpa(void **state)
{
	(void)state;
	struct gf_as_scaler sc;
	struct gf_err e;
	assert_int_equal(parse("", &sc, &e), 0);
	assert_int_equal(sc.kind, GF_AS_HPA);
	assert_string_equal(sc.name, "llm");
	assert_string_equal(sc.metric, "q");
	assert_int_equal(sc.hpa.min_replicas, 2);
	assert_int_equal(sc.hpa.max_replicas, 9);
	assert_int_equal(sc.hpa.target_milli, 500);
	assert_false(sc.hpa.behavior);
	assert_int_equal(parse("  behavior: null\n", &sc, &e), 0);
	assert_false(sc.hpa.behavior); /* nil: the legacy path */
	assert_int_equal(parse("  behavior: {}\n", &sc, &e), 0);
	assert_true(sc.hpa.behavior);
	assert_int_equal(
		parse("  behavior:\n    scaleDown:\n"
		      "      selectPolicy: Min\n"
		      "      tolerance: 50m\n"
		      "      policies:\n"
		      "      - {type: Pods, value: 1, periodSeconds: 30}\n",
		      &sc, &e),
		0);
	assert_true(sc.hpa.down.has_select && sc.hpa.down.has_policies);
	assert_false(sc.hpa.down.has_window);
	assert_int_equal(sc.hpa.down.select, GF_HPA_SELECT_MIN);
	assert_true(fabs(sc.hpa.down.tolerance - 0.05) < 1e-12);
	assert_int_equal(sc.hpa.down.policies[0].period_s, 30);
	assert_int_equal(sc.nwarn, 0);
	/* beyond the API server's bounds, and unknown fields: warnings */
	assert_int_equal(parse("  behavior:\n    scaleDown:\n"
			       "      stabilizationWindowSeconds: 4000\n"
			       "      policies:\n"
			       "      - {type: Pods, value: 1, periodSeconds: "
			       "2000}\n"
			       "  colour: blue\n",
			       &sc, &e),
			 0);
	assert_int_equal(sc.nwarn, 3);
	assert_string_equal(sc.warn[0], "m.yaml:15: stabilizationWindowSeconds "
					"4000: the API server takes at most "
					"3600 (used as it is)");
	assert_string_equal(sc.warn[1], "m.yaml:17: periodSeconds 2000: the "
					"API server takes at most 1800 (used "
					"as it is)");
	assert_string_equal(sc.warn[2], "m.yaml:18: unknown field 'colour' in "
					"spec: ignored");
	assert_int_equal(sc.hpa.down.window_s, 4000);
}

static void expect_error(const char *tail, const char *msg)
{
	struct gf_as_scaler sc;
	struct gf_err e;
	int rc = parse(tail, &sc, &e);
	if (rc == 0 || strcmp(e.msg, msg))
		fail_msg("got rc %d '%s', want '%s'", rc, e.msg, msg);
}

static void test_manifest_errors(void **state)
{
	(void)state;
	expect_error("  behavior:\n    scaleUp: {selectPolicy: Fast}\n",
		     "m.yaml:14: field 'behavior.scaleUp.selectPolicy': "
		     "'Fast' is not Max, Min or Disabled");
	expect_error("  behavior:\n    scaleUp:\n      policies: []\n",
		     "m.yaml:1: spec: behavior.scaleUp.policies: must specify "
		     "at least one policy");
	expect_error("  behavior:\n    scaleUp:\n      policies:\n"
		     "      - {type: Pods, value: 0, periodSeconds: 15}\n",
		     "m.yaml:1: spec: behavior.scaleUp.policies[0].value 0: "
		     "must be greater than zero");
	expect_error("  behavior:\n    scaleUp:\n      policies:\n"
		     "      - {type: Pods, value: 2}\n",
		     "m.yaml:16: behavior.scaleUp.policies[]: a policy needs "
		     "type, value and periodSeconds");
	struct gf_as_scaler sc;
	struct gf_err e;
	const char *pods = "apiVersion: autoscaling/v2\n"
			   "kind: HorizontalPodAutoscaler\n"
			   "spec:\n"
			   "  maxReplicas: 3\n"
			   "  metrics:\n"
			   "  - type: Pods\n"
			   "    pods: {}\n";
	assert_int_equal(
		gf_as_parse_manifest(pods, strlen(pods), "p.yaml", &sc, &e),
		GF_EPARSE);
	/* Pods metrics are read now (horizontal.go's computeReplicasForMetric
	 * takes Pods, Resource and External), but need a target */
	assert_string_equal(e.msg, "p.yaml:7: pods: field 'target' missing");
	const char *obj = "apiVersion: autoscaling/v2\n"
			  "kind: HorizontalPodAutoscaler\n"
			  "spec:\n"
			  "  maxReplicas: 3\n"
			  "  metrics:\n"
			  "  - type: External\n"
			  "    external:\n"
			  "      metric: {name: q}\n"
			  "      target: {type: Value, value: 1}\n"
			  "  - type: Object\n"
			  "    object: {}\n";
	assert_int_equal(
		gf_as_parse_manifest(obj, strlen(obj), "o.yaml", &sc, &e),
		GF_EPARSE);
	assert_string_equal(e.msg, "o.yaml:10: metrics[1].type 'Object': this "
				   "autoscaler reads External, Pods and "
				   "Resource metrics");
	const char *nomax = "apiVersion: autoscaling/v2\n"
			    "kind: HorizontalPodAutoscaler\n"
			    "spec:\n  minReplicas: 1\n";
	assert_int_equal(
		gf_as_parse_manifest(nomax, strlen(nomax), "n.yaml", &sc, &e),
		GF_EPARSE);
	assert_string_equal(e.msg, "n.yaml:4: spec: field 'maxReplicas' "
				   "missing");
	const char *v1 = "apiVersion: autoscaling/v1\n"
			 "kind: HorizontalPodAutoscaler\nspec: {}\n";
	assert_int_equal(
		gf_as_parse_manifest(v1, strlen(v1), "v.yaml", &sc, &e),
		GF_EPARSE);
	assert_string_equal(e.msg, "v.yaml:1: apiVersion 'autoscaling/v1': "
				   "expected autoscaling/v2");
	const char *bad = "spec: [unclosed\n";
	assert_int_equal(
		gf_as_parse_manifest(bad, strlen(bad), "b.yaml", &sc, &e),
		GF_EPARSE);
}

static void test_manifest_keda(void **state)
{
	(void)state;
	const char *so = "apiVersion: keda.sh/v1alpha1\n"
			 "kind: ScaledObject\n"
			 "metadata: {name: llm}\n"
			 "spec:\n"
			 "  scaleTargetRef: {name: llm}\n"
			 "  minReplicaCount: 0\n"
			 "  maxReplicaCount: 12\n"
			 "  cooldownPeriod: 120\n"
			 "  advanced:\n"
			 "    horizontalPodAutoscalerConfig:\n"
			 "      behavior: {scaleDown: "
			 "{stabilizationWindowSeconds: 60}}\n"
			 "  triggers:\n"
			 "  - type: prometheus\n"
			 "    metadata:\n"
			 "      serverAddress: http://p:9090\n"
			 "      query: sum(q{class=\"x\"})\n"
			 "      threshold: '4.5'\n"
			 "      activationThreshold: '2'\n";
	struct gf_as_scaler sc;
	struct gf_err e;
	assert_int_equal(
		gf_as_parse_manifest(so, strlen(so), "k.yaml", &sc, &e), 0);
	assert_int_equal(sc.kind, GF_AS_KEDA);
	assert_int_equal(sc.keda.min_replicas, 0);
	assert_int_equal(sc.keda.max_replicas, 12);
	assert_int_equal(sc.keda.cooldown_s, 120);
	assert_int_equal(sc.keda.polling_s, 30);
	assert_int_equal(sc.keda.hpa.target_milli, 4500);
	assert_int_equal(sc.keda.activation_milli, 2000);
	assert_true(sc.keda.hpa.behavior);
	assert_int_equal(sc.keda.hpa.down.window_s, 60);
	assert_string_equal(sc.query, "sum(q{class=\"x\"})");
}

/* A ScaledObject with ann (annotations' lines, or "") and extra (spec
 * lines) into sc; the return code, e->msg on error. */
static int keda_doc(const char *ann, const char *extra, struct gf_as_scaler *sc,
		    struct gf_err *e)
{
	char doc[1024];
	gf_note(doc, sizeof(doc),
		"apiVersion: keda.sh/v1alpha1\n"
		"kind: ScaledObject\n"
		"metadata:\n"
		"  name: llm\n"
		"%s"
		"spec:\n"
		"  scaleTargetRef: {name: llm}\n"
		"%s"
		"  triggers:\n"
		"  - type: prometheus\n"
		"    metadata: {threshold: '5'}\n",
		ann, extra);
	gf_err_clear(e);
	return gf_as_parse_manifest(doc, strlen(doc), "k.yaml", sc, e);
}

/* idleReplicaCount and the pause annotations as a ScaledObject gives them
 * (KEDA: TestCheckReplicaCountBoundsAreValid, TestNeedToBePausedBy
 * Annotation, TestHasPausedReplicaAnnotation). */
static void test_manifest_keda_idle_paused(void **state)
{
	(void)state;
	struct gf_as_scaler sc;
	struct gf_err e;
	assert_int_equal(keda_doc("", "", &sc, &e), 0);
	assert_int_equal(sc.keda.idle_replicas, -1);
	assert_int_equal(sc.keda.paused_replicas, -1);
	assert_false(sc.keda.paused);
	assert_int_equal(keda_doc("",
				  "  idleReplicaCount: 0\n"
				  "  minReplicaCount: 5\n",
				  &sc, &e),
			 0);
	assert_int_equal(sc.keda.idle_replicas, 0);
	assert_int_equal(sc.keda.min_replicas, 5);
	assert_int_equal(sc.nwarn, 0);
	/* idle 0 with min given as 0: KEDA's bound is 1 */
	assert_int_equal(keda_doc("",
				  "  idleReplicaCount: 0\n"
				  "  minReplicaCount: 0\n",
				  &sc, &e),
			 0);
	/* idle 2 < min 3: accepted as KEDA does, with its warning */
	assert_int_equal(keda_doc("",
				  "  idleReplicaCount: 2\n"
				  "  minReplicaCount: 3\n",
				  &sc, &e),
			 0);
	assert_int_equal(sc.nwarn, 1);
	assert_string_equal(sc.warn[0],
			    "k.yaml:7: idleReplicaCount 2: KEDA documents "
			    "that only 0 works (its HPA raises the target "
			    "back to minReplicaCount)");
	/* idle >= min, idle without min, idle negative: refused */
	assert_int_equal(keda_doc("",
				  "  idleReplicaCount: 5\n"
				  "  minReplicaCount: 5\n",
				  &sc, &e),
			 GF_EINVAL);
	assert_string_equal(e.msg, "k.yaml:1: spec: idleReplicaCount 5 must "
				   "be less than minReplicaCount 5");
	assert_int_equal(keda_doc("", "  idleReplicaCount: 0\n", &sc, &e),
			 GF_EINVAL);
	assert_string_equal(e.msg, "k.yaml:1: spec: idleReplicaCount 0 must "
				   "be less than minReplicaCount 0");
	assert_int_equal(keda_doc("",
				  "  idleReplicaCount: -1\n"
				  "  minReplicaCount: 5\n",
				  &sc, &e),
			 GF_EPARSE);
	assert_string_equal(
		e.msg, "k.yaml:7: key 'idleReplicaCount': expected a whole "
		       "number from 0 to 2147483647, got '-1'");
	/* the pause annotations */
	const char *pr = "  annotations:\n"
			 "    autoscaling.keda.sh/paused-replicas: \"4\"\n";
	assert_int_equal(keda_doc(pr, "", &sc, &e), 0);
	assert_int_equal(sc.keda.paused_replicas, 4);
	const char *p = "  annotations:\n"
			"    autoscaling.keda.sh/paused: \"true\"\n";
	assert_int_equal(keda_doc(p, "", &sc, &e), 0);
	assert_true(sc.keda.paused);
	const char *pf = "  annotations:\n"
			 "    autoscaling.keda.sh/paused: \"false\"\n";
	assert_int_equal(keda_doc(pf, "", &sc, &e), 0);
	assert_false(sc.keda.paused);
	/* not a boolean: KEDA pauses, we say so */
	const char *pi = "  annotations:\n"
			 "    autoscaling.keda.sh/paused: \"invalid\"\n";
	assert_int_equal(keda_doc(pi, "", &sc, &e), 0);
	assert_true(sc.keda.paused);
	assert_int_equal(sc.nwarn, 1);
	assert_string_equal(sc.warn[0],
			    "k.yaml:6: annotation "
			    "'autoscaling.keda.sh/paused': 'invalid' "
			    "is not a boolean: paused, as KEDA does");
	/* paused-scale-in / -out / -down: not KEDA 2.16's, warned */
	const char *ps = "  annotations:\n"
			 "    autoscaling.keda.sh/paused-scale-in: \"true\"\n"
			 "    other.example/x: y\n";
	assert_int_equal(keda_doc(ps, "", &sc, &e), 0);
	assert_int_equal(sc.nwarn, 1);
	assert_false(sc.keda.paused);
	assert_string_equal(sc.warn[0],
			    "k.yaml:6: annotation 'autoscaling.keda.sh/"
			    "paused-scale-in': not read (KEDA 2.16 has paused "
			    "and paused-replicas)");
	/* a paused-replicas that is not a count */
	const char *bad = "  annotations:\n"
			  "    autoscaling.keda.sh/paused-replicas: "
			  "\"abc\"\n";
	assert_int_equal(keda_doc(bad, "", &sc, &e), GF_EPARSE);
	assert_string_equal(e.msg, "k.yaml:6: key 'metadata.annotations."
				   "autoscaling.keda.sh/paused-replicas': "
				   "expected a whole number from 0 to "
				   "2147483647, got 'abc'");
	const char *neg = "  annotations:\n"
			  "    autoscaling.keda.sh/paused-replicas: "
			  "\"-1\"\n";
	assert_int_equal(keda_doc(neg, "", &sc, &e), GF_EPARSE);
}

static char *write_tmp(const char *text)
{
	char *path = gf_strdup("/tmp/gf-as-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void samples_error(const char *text, const char *want_tail)
{
	char *path = write_tmp(text);
	struct gf_as_samples s;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_as_read_samples(path, &s, &e);
	char want[600];
	snprintf(want, sizeof(want), "%s:%s", path, want_tail);
	if (rc == 0 || strcmp(e.msg, want))
		fail_msg("got rc %d '%s', want '%s'", rc, e.msg, want);
	unlink(path);
	gf_free(path);
}

static void test_samples(void **state)
{
	(void)state;
	char *path = write_tmp("t_s,value\n# a comment\n\n0,4\n15, 2.5 \n"
			       "30,1k\r\n");
	struct gf_as_samples s;
	struct gf_err e;
	assert_int_equal(gf_as_read_samples(path, &s, &e), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.s[1].t_ms, 15000);
	assert_int_equal(s.s[1].usage_milli, 2500);
	assert_int_equal(s.s[2].usage_milli, 1000000);
	assert_string_equal(s.t_text[2], "30");
	gf_as_samples_release(&s);
	unlink(path);
	gf_free(path);
	samples_error("t_s,value\n0,1\n30,1\n15,1\n",
		      "4: field 't_s': '15' is not after the previous "
		      "sample's '30' (samples must be in time order, one per "
		      "sync)");
	samples_error("0,1\n0,2\n", "2: field 't_s': '0' is not after the "
				    "previous sample's '0' (samples must be "
				    "in time order, one per sync)");
	samples_error("t_s,value\n0,1\n2023-11-16,1\n",
		      "3: field 't_s': '2023-11-16' is not a number of "
		      "seconds");
	samples_error("0,NaN\n", "1: field 'value': 'NaN' is not a number "
				 "(NaN and infinities are refused)");
	samples_error("0,-0.5\n", "1: field 'value': '-0.5' is negative or "
				  "too large");
	samples_error("0,\n", "1: field 'value': '' is not a number (NaN "
			      "and infinities are refused)");
	samples_error("0,1,2\n", "1: expected two fields 't_s,value', got "
				 "'0,1,2'");
	samples_error("time,value\n", "1: field 't_s': 'time' is not a "
				      "number of seconds");
	samples_error("t_s,val\n", "1: header column 2 'val': expected t_s "
				   "first, then value, value2 .. value8, "
				   "ready, unready, missing or status");
}

static void test_metrics_page(void **state)
{
	(void)state;
	const char *page =
		"# HELP gpufleet_queue_pending_jobs Jobs waiting.\n"
		"# TYPE gpufleet_queue_pending_jobs gauge\n"
		"gpufleet_queue_pending_jobs{class=\"inference\",team=\"a\"} 3\n"
		"gpufleet_queue_pending_jobs{class=\"inference\",team=\"b\"} 4\n"
		"gpufleet_queue_pending_jobs{class=\"batch\",team=\"a\"} 10\n"
		"gpufleet_queue_pending_jobs_x 99\n"
		"# TYPE other gauge\nother{l=\"a\\\"b\"} 1\n";
	struct gf_as_source src;
	memset(&src, 0, sizeof(src));
	snprintf(src.metric, sizeof(src.metric), "gpufleet_queue_pending_jobs");
	double v = -1;
	struct gf_err e;
	assert_int_equal(
		gf_as_parse_metrics_page(page, strlen(page), &src, &v, &e), 0);
	assert_true(v == 17);
	src.nlabels = 1;
	snprintf(src.labels[0][0], 128, "class");
	snprintf(src.labels[0][1], 128, "inference");
	assert_int_equal(
		gf_as_parse_metrics_page(page, strlen(page), &src, &v, &e), 0);
	assert_true(v == 7);
	snprintf(src.labels[0][1], 128, "none");
	assert_int_equal(
		gf_as_parse_metrics_page(page, strlen(page), &src, &v, &e), 0);
	assert_true(v == 0); /* the family is there, no series: empty */
	snprintf(src.metric, sizeof(src.metric), "absent");
	assert_int_equal(
		gf_as_parse_metrics_page(page, strlen(page), &src, &v, &e),
		GF_ENOTFOUND);
	const char *bad = "# TYPE q gauge\nq{class=\"x} 1\n";
	snprintf(src.metric, sizeof(src.metric), "q");
	assert_int_equal(
		gf_as_parse_metrics_page(bad, strlen(bad), &src, &v, &e),
		GF_EPARSE);
	const char *nan = "q NaN\n";
	src.nlabels = 0;
	assert_int_equal(
		gf_as_parse_metrics_page(nan, strlen(nan), &src, &v, &e),
		GF_ERANGE);
}

static void test_query_answer(void **state)
{
	(void)state;
	double v = -1;
	struct gf_err e;
	const char *vec = "{\"status\":\"success\",\"data\":{\"resultType\":"
			  "\"vector\",\"result\":[{\"metric\":{},\"value\":"
			  "[1.5,\"42\"]},{\"metric\":{\"a\":\"b\"},\"value\":"
			  "[1.5,\"0.5\"]}]}}";
	assert_int_equal(gf_as_parse_query_answer(vec, strlen(vec), &v, &e), 0);
	assert_true(v == 42.5);
	const char *sc = "{\"status\":\"success\",\"data\":{\"resultType\":"
			 "\"scalar\",\"result\":[1.5,\"7\"]}}";
	assert_int_equal(gf_as_parse_query_answer(sc, strlen(sc), &v, &e), 0);
	assert_true(v == 7);
	const char *empty = "{\"status\":\"success\",\"data\":{\"resultType\":"
			    "\"vector\",\"result\":[]}}";
	assert_int_equal(gf_as_parse_query_answer(empty, strlen(empty), &v, &e),
			 0);
	assert_true(v == 0);
	const char *err = "{\"status\":\"error\",\"errorType\":\"bad_data\","
			  "\"error\":\"parse error\"}";
	assert_int_equal(gf_as_parse_query_answer(err, strlen(err), &v, &e),
			 GF_EPARSE);
	assert_string_equal(e.msg, "query answer: status 'error': parse error");
	const char *nan = "{\"status\":\"success\",\"data\":{\"resultType\":"
			  "\"scalar\",\"result\":[1.5,\"NaN\"]}}";
	assert_int_equal(gf_as_parse_query_answer(nan, strlen(nan), &v, &e),
			 GF_ERANGE);
}

/* What manifests writes reads back as the same autoscaler. */
static void test_render_round_trip(void **state)
{
	(void)state;
	struct gf_as_manifest_opts o;
	memset(&o, 0, sizeof(o));
	o.name = "llm";
	o.target_name = "llm";
	o.prometheus = "http://prometheus:9090";
	o.query = "sum(gpufleet_queue_pending_jobs{class=\"inference\"})";
	o.metric = "gpufleet_queue_pending_jobs";
	o.target_value = "6";
	o.activation = "1";
	o.min_replicas = 0;
	o.max_replicas = 12;
	o.polling_s = 30;
	o.cooldown_s = 300;
	o.down_window_s = 120;
	for (int k = 0; k < 2; k++) {
		o.keda = k == 0;
		o.hpa = k == 1;
		struct gf_buf b;
		gf_buf_init(&b, 1 << 16);
		struct gf_err e;
		assert_int_equal(gf_as_render_manifests(&o, &b, &e), 0);
		struct gf_as_scaler sc;
		if (gf_as_parse_manifest(gf_buf_str(&b), b.len, "out.yaml", &sc,
					 &e))
			fail_msg("%s\n%s", e.msg, gf_buf_str(&b));
		if (k == 0) {
			assert_int_equal(sc.kind, GF_AS_KEDA);
			assert_string_equal(sc.query, o.query);
			assert_int_equal(sc.keda.hpa.target_milli, 6000);
			assert_int_equal(sc.keda.activation_milli, 1000);
			assert_int_equal(sc.keda.max_replicas, 12);
			assert_int_equal(sc.keda.hpa.down.window_s, 120);
		} else {
			assert_int_equal(sc.kind, GF_AS_HPA);
			assert_int_equal(sc.hpa.min_replicas, 1);
			assert_int_equal(sc.hpa.target_milli, 6000);
			assert_true(sc.hpa.behavior);
			assert_int_equal(sc.hpa.up.npolicies, 2);
		}
		gf_buf_release(&b);
	}
}

/* ---- the simulator, by hand ------------------------------------------ */

static struct gf_as_sim_opts small_opts(void)
{
	struct gf_as_sim_opts o;
	gf_as_sim_opts_default(&o);
	o.m.prefill_tps = 1000;
	o.m.decode_tps = 10;
	o.m.max_batch = 1;
	o.m.warmup_s = 30;
	o.fixed_replicas = 1;
	o.start_replicas = 1;
	o.max_replicas = 4;
	o.queue_target = 1;
	return o;
}

/* One replica, one slot: request 1 (t 0, 1000 in, 11 out) has its first
 * token at 1 s and is done at 2 s; request 2 (t 0.5, 500 in) waits for
 * the slot until 2, its first token at 2.5: TTFT 2.0; done at 2.5 (1
 * output token).  GPU-hours: 2.5 s. */
static void test_sim_by_hand(void **state)
{
	(void)state;
	struct gf_as_req rq[] = { { 0, 1000, 11 }, { 0.5, 500, 1 } };
	struct gf_as_trace t = { rq, 2 };
	struct gf_as_sim_opts o = small_opts();
	o.series = true;
	struct gf_as_result r;
	struct gf_err e;
	assert_int_equal(gf_as_simulate(&t, GF_ASP_FIXED, &o, &r, &e), 0);
	assert_int_equal(r.requests, 2);
	assert_true(fabs(r.p50 - 1.0) < 1e-6);
	assert_true(fabs(r.p99 - 2.0) < 1e-6);
	assert_true(fabs(r.mean - 1.5) < 1e-6);
	assert_true(fabs(r.over_slo - 0.5) < 1e-12);
	assert_true(fabs(r.end_s - 2.5) < 1e-9);
	assert_true(fabs(r.gpu_hours - 2.5 / 3600) < 1e-12);
	assert_int_equal(r.scale_events, 0);
	assert_true(r.nseries >= 3);
	assert_true(r.series[0].arrivals == 2);
	assert_true(fabs(r.series[0].ttft_max - 2.0) < 1e-6);
	assert_true(r.series[1].waiting == 1); /* at t=1: request 2 waits */
	gf_as_result_release(&r);
}

/* The queue policy scales up at the first sync the queue is long, the
 * new replica serves nothing for the warm-up, and its GPU time counts
 * from its start. */
static void test_sim_warmup(void **state)
{
	(void)state;
	/* 40 requests at t=10, 1 s of prefill each on one slot */
	struct gf_as_req rq[40];
	for (int i = 0; i < 40; i++)
		rq[i] = (struct gf_as_req){ 10, 1000, 1 };
	struct gf_as_trace t = { rq, 40 };
	struct gf_as_sim_opts o = small_opts();
	o.series = true;
	struct gf_as_result r;
	struct gf_err e;
	assert_int_equal(gf_as_simulate(&t, GF_ASP_QUEUE, &o, &r, &e), 0);
	/* t=15: 39 waiting + 1 running = 40 over target 1: 1 -> 5 by the
	 * policies (4 pods per 15 s), capped at max 4 */
	assert_true(r.series[15].desired == 4);
	assert_true(r.series[15].warming == 3);
	assert_true(r.series[44].ready == 1); /* warming until t=45 */
	assert_true(r.series[45].ready == 4);
	assert_int_equal(r.peak_replicas, 4);
	/* one replica served 35 requests by t=45, then 4 share 5 more */
	assert_true(r.end_s > 45 && r.end_s < 48);
	/* the fleet's GPU-seconds: 1 from 0, 3 from 15, each to its end */
	assert_true(r.gpu_hours * 3600 < r.end_s + 3 * (r.end_s - 15) + 1e-6);
	for (size_t i = 0; i + 1 < r.nseries; i++)
		assert_true(r.series[i].ready + r.series[i].warming >= 1);
	gf_as_result_release(&r);
}

/* Every request gets a TTFT of at least its prefill; the share over the
 * SLO agrees with the percentiles; all policies see the same requests. */
static void test_sim_conservation(void **state)
{
	(void)state;
	struct gf_as_trace t;
	gf_as_trace_synth(&t, 20000, 1, 7);
	struct gf_as_sim_opts o;
	gf_as_sim_opts_default(&o);
	double min_prefill = 1e9;
	for (size_t i = 0; i < t.n; i++) {
		double p = t.r[i].in / o.m.prefill_tps;
		if (p < min_prefill)
			min_prefill = p;
		if (i)
			assert_true(t.r[i].t >= t.r[i - 1].t);
	}
	o.prev = &t; /* static needs a window to size from */
	for (int p = 0; p < GF_ASP_COUNT; p++) {
		struct gf_as_result r;
		struct gf_err e;
		assert_int_equal(
			gf_as_simulate(&t, (enum gf_as_policy)p, &o, &r, &e),
			0);
		assert_int_equal(r.requests, t.n);
		assert_true(r.p50 >= min_prefill - 1e-6);
		assert_true(r.p50 <= r.p95 && r.p95 <= r.p99);
		if (r.over_slo > 0.01)
			assert_true(r.p99 > o.slo_s);
		if (r.over_slo < 0.01)
			assert_true(r.p99 <= o.slo_s);
		assert_true(r.gpu_hours > 0);
		assert_true(r.peak_replicas <= r.max);
		gf_as_result_release(&r);
	}
	gf_as_trace_release(&t);
}

/* One request in flight on one replica of two slots for the whole first
 * sync: occupancy reads 50 % (in flight over max batch), where DCGM's
 * duty cycle reads 100 %.  At t=15 occupancy target 50 keeps 1 replica
 * (ratio 1.0), target 40 asks 2 (1.25, over the 10 % tolerance), and
 * utilisation at 70 asks 2 (100 / 70). */
static void test_sim_occupancy(void **state)
{
	(void)state;
	struct gf_as_req rq[] = { { 0, 10, 200 } }; /* decodes ~20 s */
	struct gf_as_trace t = { rq, 1 };
	struct gf_as_sim_opts o = small_opts();
	o.m.max_batch = 2;
	o.series = true;
	const struct {
		enum gf_as_policy p;
		double target;
		float want;
	} cases[] = { { GF_ASP_OCC, 50, 1 },
		      { GF_ASP_OCC, 40, 2 },
		      { GF_ASP_UTIL, 70, 2 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o.occ_target = o.util_target = cases[i].target;
		struct gf_as_result r;
		struct gf_err e;
		assert_int_equal(gf_as_simulate(&t, cases[i].p, &o, &r, &e), 0);
		assert_true(r.nseries > 15);
		assert_true(r.series[14].desired == 1);
		assert_true(r.series[15].desired == cases[i].want);
		gf_as_result_release(&r);
	}
	/* two requests on two slots: 100 %, target 50 asks 2 */
	struct gf_as_req rq2[] = { { 0, 10, 200 }, { 0, 10, 200 } };
	struct gf_as_trace t2 = { rq2, 2 };
	o.occ_target = 50;
	struct gf_as_result r;
	struct gf_err e;
	assert_int_equal(gf_as_simulate(&t2, GF_ASP_OCC, &o, &r, &e), 0);
	assert_true(r.series[15].desired == 2);
	gf_as_result_release(&r);
}

/* The static fleet and the start are sized from the previous window
 * only: changing the window being scored changes neither (fixed, the
 * hindsight reference, does change); static needs a previous window;
 * without one the autoscaled policies start at min_replicas. */
static void test_sim_static_no_hindsight(void **state)
{
	(void)state;
	struct gf_as_trace all, prev, cur;
	gf_as_trace_synth(&all, 4000, 0.5, 3);
	gf_as_trace_window(&all, 0, 900, &prev);
	gf_as_trace_window(&all, 900, 1e9, &cur);
	assert_true(prev.n > 0 && cur.n > 0);
	assert_int_equal(prev.n + cur.n, all.n);
	assert_true(fabs(cur.r[0].t - (all.r[prev.n].t - 900)) < 1e-9);
	assert_true(prev.r[prev.n - 1].t < 900 && all.r[prev.n].t >= 900);
	struct gf_as_sim_opts o;
	gf_as_sim_opts_default(&o);
	o.prev = &prev;
	int32_t s1, f1, m1, p1, s2, f2, m2, p2;
	gf_as_sim_sizes(&cur, &o, &s1, &f1, &m1, &p1);
	int32_t want = gf_as_busiest_size(&prev, &o);
	assert_int_equal(p1, want);
	assert_int_equal(s1, want);
	struct gf_as_result r1, r2;
	struct gf_err e;
	assert_int_equal(gf_as_simulate(&cur, GF_ASP_STATIC, &o, &r1, &e), 0);
	/* the scored window gets a burst: 2000 more requests in minute 3 */
	struct gf_as_trace big = { gf_calloc(cur.n + 2000, sizeof(*big.r)),
				   cur.n + 2000 };
	size_t k = 0, j = 0;
	for (size_t i = 0; i < 2000; i++) {
		struct gf_as_req x = { 180 + (double)i * 0.03, 2000, 300 };
		while (j < cur.n && cur.r[j].t <= x.t)
			big.r[k++] = cur.r[j++];
		big.r[k++] = x;
	}
	while (j < cur.n)
		big.r[k++] = cur.r[j++];
	assert_int_equal(k, big.n);
	gf_as_sim_sizes(&big, &o, &s2, &f2, &m2, &p2);
	assert_int_equal(p2, p1);
	assert_int_equal(s2, s1);
	assert_int_equal(m2, m1);
	assert_true(f2 > f1); /* hindsight reads the window itself */
	assert_int_equal(gf_as_simulate(&big, GF_ASP_STATIC, &o, &r2, &e), 0);
	assert_int_equal(r2.start, r1.start);
	assert_int_equal(r2.start, want);
	assert_true(r2.over_slo > r1.over_slo); /* it did not see the burst */
	gf_as_result_release(&r1);
	gf_as_result_release(&r2);
	/* no previous window: static refused, the others start cold */
	o.prev = NULL;
	o.min_replicas = 2;
	assert_int_equal(gf_as_simulate(&cur, GF_ASP_STATIC, &o, &r1, &e),
			 GF_EINVAL);
	assert_non_null(strstr(e.msg, "previous window"));
	assert_int_equal(gf_as_simulate(&cur, GF_ASP_QUEUE, &o, &r1, &e), 0);
	assert_int_equal(r1.start, 2);
	gf_as_result_release(&r1);
	gf_free(big.r);
	gf_as_trace_release(&cur);
	gf_as_trace_release(&prev);
	gf_as_trace_release(&all);
}

/* An HPA of two External metrics (kubernetes' computeReplicasForMetrics:
 * horizontal_test.go TestScaleUpOneMetricInvalid and
 * TestScaleDownOneMetricInvalid are the rules the loop must keep): the
 * queue, and llm_kv_waiting selected by model=a. */
static const char *HPA2 =
	"apiVersion: autoscaling/v2\n"
	"kind: HorizontalPodAutoscaler\n"
	"metadata: {name: llm}\n"
	"spec:\n"
	"  minReplicas: 1\n"
	"  maxReplicas: 20\n"
	"  metrics:\n"
	"  - type: External\n"
	"    external:\n"
	"      metric: {name: gpufleet_queue_pending_jobs}\n"
	"      target: {type: AverageValue, averageValue: \"5\"}\n"
	"  - type: External\n"
	"    external:\n"
	"      metric:\n"
	"        name: llm_kv_waiting\n"
	"        selector: {matchLabels: {model: a, zone: \"e\\\"1\"}}\n"
	"      target: {type: AverageValue, averageValue: \"10\"}\n"
	"  - type: Pods\n"
	"    pods:\n"
	"      metric: {name: tokens_per_s}\n"
	"      target: {type: AverageValue, averageValue: \"100\"}\n"
	"  behavior:\n"
	"    scaleDown: {stabilizationWindowSeconds: 0}\n"
	"    scaleUp:\n"
	"      policies: [{type: Pods, value: 100, periodSeconds: 15}]\n";

/* The manifest keeps each metric's name and selector beside the spec. */
static void test_manifest_metric_refs(void **state)
{
	(void)state;
	struct gf_as_scaler sc;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_as_parse_manifest(HPA2, strlen(HPA2), "m.yaml", &sc, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(sc.nwarn, 0);
	assert_int_equal(sc.nmetrics, 3);
	assert_int_equal(sc.hpa.nmore, 2);
	assert_string_equal(sc.metric, "gpufleet_queue_pending_jobs");
	assert_int_equal(sc.metrics[0].type, GF_AS_METRIC_EXTERNAL);
	assert_int_equal(sc.metrics[0].nlabels, 0);
	assert_string_equal(sc.metrics[1].name, "llm_kv_waiting");
	assert_int_equal(sc.metrics[1].line, 12);
	assert_int_equal(sc.metrics[1].nlabels, 2);
	assert_string_equal(sc.metrics[1].labels[0][0], "model");
	assert_string_equal(sc.metrics[1].labels[0][1], "a");
	assert_string_equal(sc.metrics[1].labels[1][0], "zone");
	assert_string_equal(sc.metrics[1].labels[1][1], "e\"1");
	assert_int_equal(sc.metrics[2].type, GF_AS_METRIC_PODS);
	assert_string_equal(sc.metrics[2].name, "tokens_per_s");
	/* the fixture of recommend: a Resource metric keeps its name */
	assert_int_equal(gf_as_read_manifest("tests/fixtures/autoscale/"
					     "hpa-multi.yaml",
					     &sc, &e),
			 0);
	assert_int_equal(sc.metrics[1].type, GF_AS_METRIC_RESOURCE);
	assert_string_equal(sc.metrics[1].name, "cpu");
	/* a selector with expressions is kept as such; too many labels and
	 * an unknown selector key are said */
	struct gf_as_scaler s2;
	assert_int_equal(
		parse("  - type: External\n"
		      "    external:\n"
		      "      metric:\n"
		      "        name: x\n"
		      "        selector:\n"
		      "          matchExpressions: [{key: a, operator: "
		      "Exists}]\n"
		      "          other: 1\n"
		      "      target: {type: Value, value: \"1\"}\n",
		      &s2, &e),
		0);
	assert_true(s2.metrics[1].expressions);
	assert_int_equal(s2.nwarn, 1);
	assert_non_null(strstr(s2.warn[0], "unknown field 'other'"));
	assert_int_equal(
		parse("  - type: External\n"
		      "    external:\n"
		      "      metric:\n"
		      "        name: x\n"
		      "        selector: {matchLabels: {a: 1, b: 1, c: 1, d: 1, "
		      "e: 1, f: 1, g: 1, h: 1, i: 1}}\n"
		      "      target: {type: Value, value: \"1\"}\n",
		      &s2, &e),
		GF_EPARSE);
	assert_non_null(strstr(e.msg, "more than 8 labels"));
}

/* Each metric's source, of the first one's kind. */
static void test_metric_sources(void **state)
{
	(void)state;
	struct gf_as_scaler sc;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(
		gf_as_parse_manifest(HPA2, strlen(HPA2), "m.yaml", &sc, &e), 0);
	struct gf_as_source first, out[GF_HPA_METRICS_MAX];
	memset(&first, 0, sizeof(first));
	snprintf(first.base, sizeof(first.base), "http://127.0.0.1:9");
	snprintf(first.metric, sizeof(first.metric), "q");
	first.nlabels = 1;
	snprintf(first.labels[0][0], 128, "class");
	snprintf(first.labels[0][1], 128, "inference");
	int n = 0;
	assert_int_equal(
		gf_as_metric_sources(&sc, &first, NULL, 0, out, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_string_equal(out[0].metric, "q"); /* the command line's */
	assert_int_equal(out[0].nlabels, 1);
	assert_string_equal(out[1].metric, "llm_kv_waiting");
	assert_string_equal(out[1].base, "http://127.0.0.1:9");
	assert_int_equal(out[1].nlabels, 2);
	assert_string_equal(out[1].labels[1][1], "e\"1");
	assert_string_equal(out[2].metric, "tokens_per_s");
	assert_int_equal(out[2].nlabels, 0);
	/* Prometheus: a query from name and selector, or the next --query */
	first.kind = GF_AS_SOURCE_PROMQL;
	snprintf(first.query, sizeof(first.query), "sum(q)");
	assert_int_equal(
		gf_as_metric_sources(&sc, &first, NULL, 0, out, &n, &e), 0);
	assert_string_equal(out[0].query, "sum(q)");
	assert_string_equal(out[1].query,
			    "sum(llm_kv_waiting{model=\"a\",zone=\"e\\\"1\"})");
	assert_string_equal(out[2].query, "sum(tokens_per_s)");
	const char *qs[] = { "sum(q)", "max(kv)" };
	assert_int_equal(gf_as_metric_sources(&sc, &first, qs, 2, out, &n, &e),
			 0);
	assert_string_equal(out[1].query, "max(kv)");
	assert_string_equal(out[2].query, "sum(tokens_per_s)");
	const char *many[] = { "a", "b", "c", "d" };
	assert_int_equal(
		gf_as_metric_sources(&sc, &first, many, 4, out, &n, &e),
		GF_EINVAL);
	assert_string_equal(e.msg, "4 --query options for 3 metrics (one per "
				   "entry of spec.metrics, in order)");
	/* a Resource metric has no family to read */
	assert_int_equal(gf_as_read_manifest("tests/fixtures/autoscale/"
					     "hpa-multi.yaml",
					     &sc, &e),
			 0);
	first.kind = GF_AS_SOURCE_METRICS;
	assert_int_equal(
		gf_as_metric_sources(&sc, &first, NULL, 0, out, &n, &e),
		GF_EINVAL);
	assert_string_equal(e.msg,
			    "metrics[1] (line 19): a Resource metric ('cpu'): "
			    "autoscale run reads External and Pods metrics "
			    "from its source");
	/* nor does a selector by expressions */
	assert_int_equal(
		parse("  - type: External\n"
		      "    external:\n"
		      "      metric:\n"
		      "        name: x\n"
		      "        selector:\n"
		      "          matchExpressions: [{key: a, operator: "
		      "Exists}]\n"
		      "      target: {type: Value, value: \"1\"}\n",
		      &sc, &e),
		0);
	assert_int_equal(
		gf_as_metric_sources(&sc, &first, NULL, 0, out, &n, &e),
		GF_EINVAL);
	assert_string_equal(e.msg, "metrics[1] (line 13): metric 'x': "
				   "selector.matchExpressions is not read by "
				   "autoscale run (use matchLabels)");
}

/* The loop's reader in tests: step i's page, parsed for each source. */
struct pages {
	const char *const *page; /* one per sync */
	int step, nread;
};

static int read_page(void *ctx, const struct gf_as_source *src, double *value,
		     struct gf_err *e)
{
	struct pages *p = ctx;
	int step = p->nread++ / 3; /* three metrics a sync */
	const char *t = p->page[step];
	if (!t)
		return gf_err_set(e, GF_ENOTFOUND, "cannot GET the page");
	return gf_as_parse_metrics_page(t, strlen(t), src, value, e);
}

/* An actuator that keeps the count; one pod of it pending. */
struct fake_act {
	int32_t n;
};

static int fake_apply(void *ctx, int32_t cur, int32_t desired, struct gf_err *e)
{
	(void)cur;
	(void)e;
	((struct fake_act *)ctx)->n = desired;
	return 0;
}

static int fake_current(void *ctx, int32_t *replicas, struct gf_err *e)
{
	(void)e;
	*replicas = ((struct fake_act *)ctx)->n;
	return 0;
}

static bool fake_pods(void *ctx, int32_t *ready, int32_t *unready)
{
	int32_t n = ((struct fake_act *)ctx)->n;
	*unready = n > 1 ? 1 : 0;
	*ready = n - *unready;
	return true;
}

struct ticks {
	int n;
	struct gf_as_tick t[8];
};

static void keep_tick(void *ctx, const struct gf_as_tick *t)
{
	struct ticks *k = ctx;
	if (k->n < 8)
		k->t[k->n++] = *t;
}

/* autoscale run with two metric pages a sync (one family at times not
 * on it): the larger proposal wins; an unread metric holds a scale-down
 * (TestScaleDownOneMetricInvalid) but not a scale-up
 * (TestScaleUpOneMetricInvalid); none read, nothing changes. */
static void test_loop_two_metrics(void **state)
{
	(void)state;
	struct gf_as_scaler sc;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(
		gf_as_parse_manifest(HPA2, strlen(HPA2), "m.yaml", &sc, &e), 0);
	/* the Pods metric: far below its target, it proposes 1 at most */
	static const char *const page[] = {
		/* 10 / 5 -> 2, 40 / 10 -> 4: 4 */
		"gpufleet_queue_pending_jobs{class=\"inference\"} 10\n"
		"llm_kv_waiting{model=\"a\",zone=\"e\\\"1\"} 40\n"
		"llm_kv_waiting{model=\"b\",zone=\"e\\\"1\"} 1000\n"
		"tokens_per_s 0\n",
		/* 2; kv not on the page: a scale-down held */
		"gpufleet_queue_pending_jobs{class=\"inference\"} 10\n"
		"tokens_per_s 10\n",
		/* 2 and 1, both read: down to 2 */
		"gpufleet_queue_pending_jobs{class=\"inference\"} 10\n"
		"llm_kv_waiting{model=\"a\",zone=\"e\\\"1\"} 10\n"
		"tokens_per_s 10\n",
		/* 30 / 5 -> 6, kv unread: up to 6 */
		"gpufleet_queue_pending_jobs{class=\"inference\"} 30\n"
		"tokens_per_s 10\n",
		/* the page down: nothing read, nothing changes */
		NULL,
	};
	struct pages pg = { page, 0, 0 };
	struct gf_as_source first, src[GF_HPA_METRICS_MAX];
	memset(&first, 0, sizeof(first));
	snprintf(first.metric, sizeof(first.metric),
		 "gpufleet_queue_pending_jobs");
	int n = 0;
	assert_int_equal(
		gf_as_metric_sources(&sc, &first, NULL, 0, src, &n, &e), 0);
	struct fake_act fa = { 1 };
	struct ticks k = { 0 };
	struct gf_as_loop l = {
		.scaler = &sc,
		.src = src,
		.nsrc = n,
		.read = read_page,
		.read_ctx = &pg,
		.start = 1,
		.interval_ms = 1,
		.count = 5,
		.act = { "fake", fake_apply, fake_current, &fa, fake_pods },
		.report = keep_tick,
		.report_ctx = &k,
	};
	if (gf_as_loop_run(&l, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(k.n, 5);
	static const int32_t want[] = { 4, 4, 2, 6, 6 };
	static const enum gf_hpa_reason why[] = { GF_HPA_REASON_COMPUTED,
						  GF_HPA_REASON_NO_METRIC,
						  GF_HPA_REASON_COMPUTED,
						  GF_HPA_REASON_COMPUTED,
						  GF_HPA_REASON_NO_METRIC };
	for (int i = 0; i < 5; i++) {
		assert_int_equal(k.t[i].nmetrics, 3);
		assert_int_equal(k.t[i].after, want[i]);
		assert_int_equal(k.t[i].reason, why[i]);
	}
	assert_true(k.t[0].oks[0] && k.t[0].values[0] == 10);
	assert_true(k.t[0].oks[1] && k.t[0].values[1] == 40);
	assert_true(k.t[1].ok && !k.t[1].oks[1] && k.t[1].oks[2]);
	assert_string_equal(k.t[1].why, "metrics[1]: metric 'llm_kv_waiting' "
					"is not on the page");
	assert_true(k.t[2].oks[1] && k.t[2].values[1] == 10);
	assert_true(!k.t[4].ok && !k.t[4].oks[1] && !k.t[4].oks[2]);
	assert_string_equal(k.t[4].why, "metrics[0]: cannot GET the page; "
					"metrics[1]: cannot GET the page; "
					"metrics[2]: cannot GET the page");
	/* the pods the actuator saw before each sync: 1 pending of 4 */
	assert_int_equal(k.t[1].ready, 3);
	assert_int_equal(k.t[1].unready, 1);
	assert_int_equal(k.t[0].ready, 1);
	assert_int_equal(k.t[0].unready, 0);
	assert_int_equal(fa.n, 6);
	/* sources that do not match the metrics are refused */
	l.nsrc = 1;
	assert_int_equal(gf_as_loop_run(&l, &e), GF_EINVAL);
	assert_string_equal(e.msg, "the HPA has 3 metrics and the loop 1 "
				   "source (one per metric)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_hpa),
		cmocka_unit_test(test_manifest_errors),
		cmocka_unit_test(test_manifest_keda),
		cmocka_unit_test(test_manifest_keda_idle_paused),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_metrics_page),
		cmocka_unit_test(test_query_answer),
		cmocka_unit_test(test_manifest_metric_refs),
		cmocka_unit_test(test_metric_sources),
		cmocka_unit_test(test_loop_two_metrics),
		cmocka_unit_test(test_render_round_trip),
		cmocka_unit_test(test_sim_by_hand),
		cmocka_unit_test(test_sim_warmup),
		cmocka_unit_test(test_sim_conservation),
		cmocka_unit_test(test_sim_occupancy),
		cmocka_unit_test(test_sim_static_no_hindsight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
