/*
 * test_charge.c - chargeback (include/gpufleet/charge.h and the readers
 * of src/chargeback): OpenCost parity on its own unit tests (B2 of
 * ../shared/reference/autoscale-chargeback-engines.md: cases 1b, 3a,
 * 4a-4d) and on the GPU vectors V1-V6 (B3); GPU exactness worked by hand
 * (a GPU shared 250/250/500 milli, an H100 split 3g.40gb + 2g.20gb x 2
 * by either slice rule, idle on a MIG GPU); the capacity check; every
 * bad input named; telemetry efficiency and waste; steps (the readers:
 * test_charge_read.c).  The randomized
 * parity against a Python model lives in tests/integration/chargeback.sh.
 */
#include "charge_helpers.h"
#include "chargeback/chargeback.h"
#include "store/store.h"
#include "util/mem.h"

/* --- B2: OpenCost's GenerateMockAllocationSetClusterIdle ------------- */

/*
 * Twelve containers over one day, each costing cpu 1, gpu 1, ram 1 and 3
 * of other costs (PV, network, load balancer), container1 ram 11; idle
 * cluster1 cpu 5 ram 15, cluster2 cpu 5 ram 5, GPU idle 0.  At $1 per
 * unit-hour, 1/24 of a unit over 24 hours costs 1.
 */
static void mock_b2(struct gf_charge_input *in)
{
	static const struct {
		const char *c, *node, *ns, *pod, *ctr, *labels;
	} m[] = {
		{ "cluster1", "c1nodes", "namespace1", "pod1", "container1",
		  "app=app1;env=env1" },
		{ "cluster1", "c1nodes", "namespace1", "pod-abc", "container2",
		  NULL },
		{ "cluster1", "c1nodes", "namespace1", "pod-def", "container3",
		  NULL },
		{ "cluster1", "c1nodes", "namespace2", "pod-ghi", "container4",
		  "app=app2;env=env2" },
		{ "cluster1", "c1nodes", "namespace2", "pod-ghi", "container5",
		  "app=app2;env=env2" },
		{ "cluster1", "c1nodes", "namespace2", "pod-jkl", "container6",
		  NULL },
		{ "cluster2", "node1", "namespace2", "pod-mno", "container4",
		  "app=app2" },
		{ "cluster2", "node1", "namespace2", "pod-mno", "container5",
		  "app=app2" },
		{ "cluster2", "node2", "namespace2", "pod-pqr", "container6",
		  NULL },
		{ "cluster2", "node2", "namespace3", "pod-stu", "container7",
		  NULL },
		{ "cluster2", "node3", "namespace3", "pod-vwx", "container8",
		  NULL },
		{ "cluster2", "node3", "namespace3", "pod-vwx", "container9",
		  NULL },
	};
	/* the owners, services and annotations of OpenCost's mock
	 * (GenerateMockAllocationSet), as its cases 1e-1l and 2f total
	 * them: container1 has no controller; services only on pod-mno;
	 * annotation team on pod-stu and pod-vwx */
	static const struct own_spec own[] = {
		{ NULL, NULL, NULL, NULL },
		{ "deployment", "deployment1", NULL, NULL },
		{ "deployment", "deployment1", NULL, NULL },
		{ "deployment", "deployment2", NULL, NULL },
		{ "deployment", "deployment2", NULL, NULL },
		{ "daemonset", "daemonset1", NULL, NULL },
		{ "deployment", "deployment2", "service1", NULL },
		{ "deployment", "deployment2", "service1;service2", NULL },
		{ "daemonset", "daemonset1", NULL, NULL },
		{ "deployment", "deployment3", NULL, "team=team1" },
		{ "statefulset", "statefulset1", NULL, "team=team1" },
		{ "statefulset", "statefulset1", NULL, "team=team2;x=y" },
	};
	double u = 1.0 / 24;
	asset(in, "cluster1", "c1nodes", T0, T0 + DAY, 6 * u, 11 * u, 31 * u, 1,
	      1, 1, NULL);
	asset(in, "cluster2", "node1", T0, T0 + DAY, 2 * u, 7 * u, 7 * u, 1, 1,
	      1, NULL);
	asset(in, "cluster2", "node2", T0, T0 + DAY, 2 * u, 2 * u, 2 * u, 1, 1,
	      1, NULL);
	asset(in, "cluster2", "node3", T0, T0 + DAY, 2 * u, 2 * u, 2 * u, 1, 1,
	      1, NULL);
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct rec_spec r = {
			m[i].c,	  m[i].node,   m[i].ns,	       m[i].pod,
			m[i].ctr, T0,	       T0 + DAY,       u,
			u,	  u,	       i ? u : 11 * u, NAN,
			3,	  m[i].labels, NULL,	       NULL,
			NULL
		};
		record_own(in, &r, &own[i]);
	}
}

static void test_b2_opencost_unit_tests(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_input_init(&in);
	mock_b2(&in);

	/* 1b: aggregate by namespace */
	gf_charge_opts_init(&o, T0, T0 + DAY);
	agg(&in, &o, "namespace");
	run_ok(&in, &o, &res);
	total_is(&res, "namespace1", 28);
	total_is(&res, "namespace2", 36);
	total_is(&res, "namespace3", 18);
	total_is(&res, "__idle__", 30);
	assert_int_equal(res.steps[0].nrows, 4);
	gf_charge_result_release(&res);

	/* 3a: idle shared, weighted */
	o.share_idle = true;
	run_ok(&in, &o, &res);
	total_is(&res, "namespace1", 42.6875);
	total_is(&res, "namespace2", 46.3125);
	total_is(&res, "namespace3", 23);
	assert_int_equal(res.steps[0].nrows, 3);
	gf_charge_result_release(&res);

	/* 4a: namespace3 shared evenly */
	o.share_idle = false;
	share(&in, &o, "namespace=namespace3");
	o.share_split = GF_CHARGE_SPLIT_EVEN;
	run_ok(&in, &o, &res);
	total_is(&res, "namespace1", 37);
	total_is(&res, "namespace2", 45);
	total_is(&res, "__idle__", 30);
	assert_int_equal(res.steps[0].nrows, 3);
	gf_charge_result_release(&res);

	/* 4b: weighted */
	o.share_split = GF_CHARGE_SPLIT_WEIGHTED;
	run_ok(&in, &o, &res);
	total_is(&res, "namespace1", 35.875);
	total_is(&res, "namespace2", 46.125);
	total_is(&res, "__idle__", 30);
	gf_charge_result_release(&res);

	/* 4c: label app=app1 shared evenly */
	o.nshare = 0;
	share(&in, &o, "label:app=app1");
	o.share_split = GF_CHARGE_SPLIT_EVEN;
	run_ok(&in, &o, &res);
	total_is(&res, "namespace1", 17.0 + 1.0 / 3);
	total_is(&res, "namespace2", 41.0 + 1.0 / 3);
	total_is(&res, "namespace3", 23.0 + 1.0 / 3);
	total_is(&res, "__idle__", 30);
	gf_charge_result_release(&res);

	/* 4d: 7 per hour shared, weighted, over 24 hours */
	o.nshare = 0;
	o.share_split = GF_CHARGE_SPLIT_WEIGHTED;
	snprintf(o.shared_hourly[0].name, sizeof(o.shared_hourly[0].name),
		 "overhead");
	o.shared_hourly[0].cost_hr = 7;
	o.nshared_hourly = 1;
	run_ok(&in, &o, &res);
	total_is(&res, "namespace1", 28 + 168 * 28.0 / 82);
	total_is(&res, "namespace2", 36 + 168 * 36.0 / 82);
	total_is(&res, "namespace3", 18 + 168 * 18.0 / 82);
	near(gf_charge_row_total(row(&res, "namespace1")), 85.36585);
	total_is(&res, "__idle__", 30);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
}

/* One run of the B2 mock aggregated by keys (comma list) with no
 * sharing: the rows, by name and total, and nothing else but __idle__. */
struct want {
	const char *name;
	double total;
};

static void agg_is(const char *keys, const struct want *w, size_t n)
{
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_input_init(&in);
	mock_b2(&in);
	gf_charge_opts_init(&o, T0, T0 + DAY);
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", keys);
	for (char *k = strtok(buf, ","); k; k = strtok(NULL, ","))
		agg(&in, &o, k);
	run_ok(&in, &o, &res);
	for (size_t i = 0; i < n; i++)
		total_is(&res, w[i].name, w[i].total);
	total_is(&res, "__idle__", 30);
	if (res.steps[0].nrows != n + 1) {
		print_message("%s: %zu rows, expected %zu\n", keys,
			      res.steps[0].nrows, n + 1);
		fail();
	}
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
}

#define AGG_IS(keys, ...)                                     \
	do {                                                  \
		const struct want w_[] = { __VA_ARGS__ };     \
		agg_is(keys, w_, sizeof(w_) / sizeof(w_[0])); \
	} while (0)

/* OpenCost's TestAllocationSet_AggregateBy (core/pkg/opencost/
 * allocation_test.go) cases 1e-1l and 2f on its mock: the names its
 * GenerateKey writes ("kind:name" for controller, the first service,
 * "__unallocated__" for what lacks the property), joined by "/". */
static void test_b2_owner_keys(void **state)
{
	(void)state;
	/* 1e AggregationProperties=(ControllerKind) */
	AGG_IS("controllerKind", { "daemonset", 12 }, { "deployment", 42 },
	       { "statefulset", 12 }, { "__unallocated__", 16 });
	/* 1f AggregationProperties=(Controller) */
	AGG_IS("controller", { "deployment:deployment1", 12 },
	       { "deployment:deployment2", 24 },
	       { "deployment:deployment3", 6 }, { "daemonset:daemonset1", 12 },
	       { "statefulset:statefulset1", 12 }, { "__unallocated__", 16 });
	/* 1g AggregationProperties=(Service): only the first service */
	AGG_IS("service", { "service1", 12 }, { "__unallocated__", 70 });
	/* 1i AggregationProperties=(deployment) */
	AGG_IS("deployment", { "deployment1", 12 }, { "deployment2", 24 },
	       { "deployment3", 6 }, { "__unallocated__", 40 });
	/* 1j AggregationProperties=(Annotation:team) */
	AGG_IS("annotation:team", { "team1", 12 }, { "team2", 6 },
	       { "__unallocated__", 64 });
	/* 1k AggregationProperties=(daemonSet) */
	AGG_IS("daemonset", { "daemonset1", 12 }, { "__unallocated__", 70 });
	/* 1l AggregationProperties=(statefulSet) */
	AGG_IS("statefulset", { "statefulset1", 12 },
	       { "__unallocated__", 70 });
	/* 2f AggregationProperties=(pod, annotation:team) */
	AGG_IS("pod,annotation:team", { "pod1/__unallocated__", 16 },
	       { "pod-abc/__unallocated__", 6 },
	       { "pod-def/__unallocated__", 6 },
	       { "pod-ghi/__unallocated__", 12 },
	       { "pod-jkl/__unallocated__", 6 },
	       { "pod-mno/__unallocated__", 12 },
	       { "pod-pqr/__unallocated__", 6 }, { "pod-stu/team1", 6 },
	       { "pod-vwx/team1", 6 }, { "pod-vwx/team2", 6 });
	/* ours, as 2a joins keys: namespace,controllerKind */
	AGG_IS("namespace,controllerKind", { "namespace1/__unallocated__", 16 },
	       { "namespace1/deployment", 12 }, { "namespace2/deployment", 24 },
	       { "namespace2/daemonset", 12 }, { "namespace3/deployment", 6 },
	       { "namespace3/statefulset", 12 });
	/* a kind not OpenCost's lowercase one is no deployment */
	struct gf_charge_input in;
	gf_charge_input_init(&in);
	struct gf_err e;
	struct gf_charge_key k;
	assert_int_equal(gf_charge_key_parse(&in, "Deployment", &k, &e),
			 GF_EINVAL);
	assert_non_null(strstr(e.msg, "controllerKind"));
	assert_int_equal(gf_charge_key_parse(&in, "annotation:", &k, &e),
			 GF_EINVAL);
	gf_charge_input_release(&in);
}

/* OpenCost's 4a (namespace3 shared evenly) and 4d (7/h of overhead,
 * weighted) with IncludeSharedCostBreakdown: each row's sharedCost by
 * shared allocation (named by its key; "overheadCost" for overheads),
 * per resource, summing to its sharedCost. */
static void test_b2_shared_breakdown(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_input_init(&in);
	mock_b2(&in);
	gf_charge_opts_init(&o, T0, T0 + DAY);
	agg(&in, &o, "namespace");
	share(&in, &o, "namespace=namespace3");
	o.share_split = GF_CHARGE_SPLIT_EVEN;
	o.shared_breakdown = true;
	run_ok(&in, &o, &res);
	/* namespace3: 3 containers of cpu 1, gpu 1, ram 1, other 3; half
	 * each to namespace1 and namespace2 */
	for (int i = 0; i < 2; i++) {
		const struct gf_charge_row *w =
			row(&res, i ? "namespace2" : "namespace1");
		assert_int_equal(w->nshares, 1);
		const struct gf_charge_share *s = &w->shares[0];
		assert_string_equal(s->name, "namespace3");
		near(s->cpu_cost, 1.5);
		near(s->gpu_cost, 1.5);
		near(s->ram_cost, 1.5);
		near(s->other_cost, 4.5);
		near(s->total_cost, 9);
		near(w->shared_cost, 9);
	}
	assert_int_equal(row(&res, "__idle__")->nshares, 0);
	gf_charge_result_release(&res);

	/* 4d plus namespace3 shared weighted: two entries */
	o.share_split = GF_CHARGE_SPLIT_WEIGHTED;
	snprintf(o.shared_hourly[0].name, sizeof(o.shared_hourly[0].name),
		 "overhead");
	o.shared_hourly[0].cost_hr = 7;
	o.nshared_hourly = 1;
	run_ok(&in, &o, &res);
	const struct gf_charge_row *w = row(&res, "namespace1");
	assert_int_equal(w->nshares, 2);
	assert_string_equal(w->shares[0].name, "namespace3");
	assert_string_equal(w->shares[1].name, "overheadCost");
	near(w->shares[0].total_cost, 18 * 28.0 / 64);
	near(w->shares[1].total_cost, 168 * 28.0 / 64);
	near(w->shared_cost, (18 + 168) * 28.0 / 64);
	gf_charge_result_release(&res);

	/* without the option, no breakdown */
	o.shared_breakdown = false;
	run_ok(&in, &o, &res);
	assert_int_equal(row(&res, "namespace1")->nshares, 0);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
}

/* --- B3: the GPU vector ------------------------------------------------- */

static void b3(struct gf_charge_input *in)
{
	int64_t t1 = T0 + 10 * H;
	asset(in, "c1", "n1", T0, t1, 8, 64, 512, 2.5, 0.04, 0.005, NULL);
	asset(in, "c1", "n2", T0, t1, 8, 64, 512, 2.5, 0.04, 0.005, NULL);
	struct rec_spec r[] = {
		{ "c1", "n1", "teamA", "train-0", "main", T0, t1, 4, 16, 20,
		  128, 100, NAN, NULL, NULL, NULL, NULL },
		{ "c1", "n1", "teamA", "notebook", "main", T0, T0 + 4 * H, 1, 4,
		  1, 32, 40, NAN, NULL, NULL, NULL, NULL },
		{ "c1", "n1", "kube-system", "dcgm-n1", "exporter", T0, t1, 0,
		  0.5, 0.25, 1, 1.5, NAN, NULL, NULL, NULL, NULL },
		{ "c1", "n2", "teamB", "infer-0", "server", T0, t1, 2, 8, 6, 64,
		  70, NAN, NULL, NULL, NULL, NULL },
		{ "c1", "n2", "kube-system", "dcgm-n2", "exporter", T0, t1, 0,
		  0.5, 0.25, 1, 1.5, NAN, NULL, NULL, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		record(in, &r[i]);
}

static void test_b3_gpu_vectors(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_input_init(&in);
	b3(&in);
	gf_charge_opts_init(&o, T0, T0 + 10 * H);
	agg(&in, &o, "namespace");
	run_ok(&in, &o, &res); /* V1 */
	total_is(&res, "teamA", 125.84);
	total_is(&res, "teamB", 56.7);
	total_is(&res, "kube-system", 0.55);
	total_is(&res, "__idle__", 319.31);
	near(row(&res, "teamA")->gpu_hours, 44);
	near(row(&res, "__idle__")->gpu_cost, 240);
	near(res.steps[0].asset_cost, 502.4);
	near(res.steps[0].rows_cost, 502.4);
	gf_charge_result_release(&res);

	o.share_idle = true; /* V2 */
	run_ok(&in, &o, &res);
	total_is(&res, "teamA", 345.117213);
	total_is(&res, "teamB", 154.901750);
	total_is(&res, "kube-system", 2.381037);
	assert_int_equal(res.steps[0].nrows, 3);
	near(res.steps[0].rows_cost, 502.4);
	gf_charge_result_release(&res);

	o.idle_by_node = true; /* V3 */
	run_ok(&in, &o, &res);
	total_is(&res, "teamA", 250.356897);
	total_is(&res, "teamB", 249.157055);
	total_is(&res, "kube-system", 2.886048);
	/* the worked check: GPU idle 90 x 110/110 on n1 */
	near(row(&res, "teamA")->gpu_cost_idle, 90);
	gf_charge_result_release(&res);

	o.idle_by_node = false; /* V4 */
	share(&in, &o, "namespace=kube-system");
	run_ok(&in, &o, &res);
	total_is(&res, "teamA", 346.758660);
	total_is(&res, "teamB", 155.641340);
	assert_int_equal(res.steps[0].nrows, 2);
	gf_charge_result_release(&res);

	o.share_split = GF_CHARGE_SPLIT_EVEN; /* V5 */
	run_ok(&in, &o, &res);
	total_is(&res, "teamA", 346.307732);
	total_is(&res, "teamB", 156.092268);
	gf_charge_result_release(&res);

	o.share_split = GF_CHARGE_SPLIT_WEIGHTED; /* V6 */
	o.share_idle = false;
	o.nshare = 0;
	snprintf(o.shared_hourly[0].name, sizeof(o.shared_hourly[0].name),
		 "ops");
	o.shared_hourly[0].cost_hr = 1;
	o.nshared_hourly = 1;
	run_ok(&in, &o, &res);
	total_is(&res, "teamA", 132.713123);
	total_is(&res, "teamB", 59.796838);
	total_is(&res, "kube-system", 0.580040);
	total_is(&res, "__idle__", 319.31);
	near(res.steps[0].rows_cost, 512.4);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
}

/* --- GPU exactness ------------------------------------------------------ */

static void test_gpu_share_250_250_500(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_input_init(&in);
	/* one GPU at 8 per hour for 10 hours: 80 */
	asset(&in, "c", "n", T0, T0 + 10 * H, 1, 0, 0, 8, 0, 0, NULL);
	struct rec_spec r = { "c",	   "n",	 "a",  "p",  "x", T0,
			      T0 + 10 * H, 0.25, NAN,  NAN,  NAN, NAN,
			      NAN,	   NULL, NULL, NULL, NULL };
	record(&in, &r);
	r.ns = "b";
	record(&in, &r);
	r.ns = "c";
	r.gpus = 0.5;
	record(&in, &r);
	gf_charge_opts_init(&o, T0, T0 + 10 * H);
	agg(&in, &o, "namespace");
	run_ok(&in, &o, &res);
	near(row(&res, "a")->gpu_cost, 80.0 / 4);
	near(row(&res, "b")->gpu_cost, 80.0 / 4);
	near(row(&res, "c")->gpu_cost, 80.0 / 2);
	near(row(&res, "c")->gpu_hours, 5);
	near(row(&res, "__idle__")->gpu_cost, 0);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
}

/* One H100 at 7 per hour for an hour, 3g.40gb + 2g.20gb + 2g.20gb. */
static void mig_case(enum gf_charge_mig_rule rule, bool only_3g,
		     struct gf_charge_result *res, struct gf_charge_input *in)
{
	gf_charge_input_init(in);
	asset(in, "c", "n", T0, T0 + H, 1, 0, 0, 7, 0, 0, "H100");
	struct rec_spec r = { "c",    "n",  "a",       "p",  "x", T0,
			      T0 + H, NAN,  NAN,       NAN,  NAN, NAN,
			      NAN,    NULL, "3g.40gb", NULL, NULL };
	record(in, &r);
	if (!only_3g) {
		r.ns = "b";
		r.mig = "2g.20gb";
		record(in, &r);
		r.ns = "c";
		record(in, &r);
	}
	struct gf_charge_opts o;
	gf_charge_opts_init(&o, T0, T0 + H);
	o.mig_rule = rule;
	agg(in, &o, "namespace");
	run_ok(in, &o, res);
}

static void test_mig_slices(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_result res;
	/* compute slices: 3/7, 2/7, 2/7 of 7 */
	mig_case(GF_CHARGE_MIG_COMPUTE, false, &res, &in);
	near(row(&res, "a")->gpu_cost, 3);
	near(row(&res, "b")->gpu_cost, 2);
	near(row(&res, "c")->gpu_cost, 2);
	near(row(&res, "a")->gpu_hours, 3.0 / 7);
	near(row(&res, "__idle__")->gpu_cost, 0);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
	/* memory slices: 4/8, 2/8, 2/8 of 7 */
	mig_case(GF_CHARGE_MIG_MEMORY, false, &res, &in);
	near(row(&res, "a")->gpu_cost, 3.5);
	near(row(&res, "b")->gpu_cost, 1.75);
	near(row(&res, "c")->gpu_cost, 1.75);
	near(row(&res, "__idle__")->gpu_cost, 0);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
	/* idle on a MIG GPU: the slices no instance holds */
	mig_case(GF_CHARGE_MIG_COMPUTE, true, &res, &in);
	near(row(&res, "__idle__")->gpu_cost, 4); /* 4 of 7 compute */
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
	mig_case(GF_CHARGE_MIG_MEMORY, true, &res, &in);
	near(row(&res, "__idle__")->gpu_cost, 3.5); /* 4 of 8 memory */
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);

	double u;
	struct gf_err e;
	assert_int_equal(gf_charge_mig_units("h100", "1g.10gb", 7,
					     GF_CHARGE_MIG_COMPUTE, &u, &e),
			 0);
	near(u, 1); /* seven 1g instances fill an H100's compute */
	assert_int_equal(gf_charge_mig_units("a30", "2g.12gb", 1,
					     GF_CHARGE_MIG_MEMORY, &u, &e),
			 0);
	near(u, 0.5);
	assert_int_equal(gf_charge_mig_units("h100", "5g.50gb", 1,
					     GF_CHARGE_MIG_MEMORY, &u, &e),
			 GF_ENOTFOUND);
	assert_non_null(strstr(e.msg, "'5g.50gb'"));
	assert_int_equal(gf_charge_mig_units("t4", "1g.10gb", 1,
					     GF_CHARGE_MIG_MEMORY, &u, &e),
			 GF_ENOTFOUND);
	assert_non_null(strstr(e.msg, "'t4'"));
}

/* --- the capacity check ----------------------------------------------- */

static void test_capacity(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result res;
	struct gf_err e;
	gf_charge_input_init(&in);
	asset(&in, "c", "n", T0, T0 + 10 * H, 2, 0, 0, 1, 0, 0, NULL);
	struct rec_spec r = { "c",	  "n",	"a",  "p",  "x", T0,
			      T0 + 5 * H, 1.5,	NAN,  NAN,  NAN, NAN,
			      NAN,	  NULL, NULL, NULL, NULL };
	record(&in, &r);  /* line 2 */
	r.s = T0 + 5 * H; /* touching: fine */
	r.t = T0 + 10 * H;
	record(&in, &r); /* line 3 */
	r.s = T0 + 4 * H;
	r.t = T0 + 6 * H;
	r.gpus = 1;
	record(&in, &r); /* line 4: 2.5 of 2 at 04:00 */
	gf_charge_opts_init(&o, T0, T0 + 10 * H);
	agg(&in, &o, "namespace");
	assert_int_equal(gf_charge_run(&in, &o, &res, &e), GF_EINVAL);
	print_message("%s\n", e.msg);
	assert_non_null(strstr(e.msg, "'records.csv':2"));
	assert_non_null(strstr(e.msg, "'records.csv':4"));
	assert_null(strstr(e.msg, "'records.csv':3"));
	assert_non_null(strstr(e.msg, "node 'n'"));
	assert_non_null(strstr(e.msg, "2024-05-01T04:00:00Z"));
	/* lenient: the record that passed capacity is left out, listed */
	o.lenient = true;
	run_ok(&in, &o, &res);
	assert_int_equal(res.nskipped_total, 1);
	assert_int_equal(res.skipped[0].line, 4);
	near(row(&res, "a")->gpu_hours, 15);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);

	/* records naming one GPU: 0.6 + 0.6 of GPU '3' */
	gf_charge_input_init(&in);
	asset(&in, "c", "n", T0, T0 + H, 8, 0, 0, 1, 0, 0, NULL);
	struct rec_spec g = { "c", "n", "a", "p", "x",	T0,   T0 + H, 0.6, NAN,
			      NAN, NAN, NAN, NAN, NULL, NULL, NULL,   "3" };
	record(&in, &g);
	g.gpu_ids = "2";
	record(&in, &g);
	g.gpu_ids = "3";
	record(&in, &g);
	gf_charge_opts_init(&o, T0, T0 + H);
	agg(&in, &o, "namespace");
	assert_int_equal(gf_charge_run(&in, &o, &res, &e), GF_EINVAL);
	print_message("%s\n", e.msg);
	assert_non_null(strstr(e.msg, "GPU '3' of node 'n'"));
	assert_non_null(strstr(e.msg, "'records.csv':2"));
	assert_non_null(strstr(e.msg, "'records.csv':4"));
	gf_charge_input_release(&in);
}

/* --- bad records in the core ------------------------------------------- */

static void expect_bad(struct gf_charge_input *in, const char *want)
{
	struct gf_charge_opts o;
	struct gf_charge_result res;
	struct gf_err e;
	gf_charge_opts_init(&o, T0, T0 + 10 * H);
	agg(in, &o, "namespace");
	gf_err_clear(&e);
	assert_int_equal(gf_charge_run(in, &o, &res, &e), GF_EINVAL);
	print_message("%s\n", e.msg);
	assert_non_null(strstr(e.msg, want));
	o.lenient = true; /* skipped, counted, and the rest priced */
	if (strstr(want, "asset"))
		return;
	run_ok(in, &o, &res);
	assert_int_equal(res.nskipped_total, 1);
	gf_charge_result_release(&res);
}

static void test_bad_records(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct rec_spec r = { "c", "n", "a", "p", "x",	T0 + H, T0,   1,   NAN,
			      NAN, NAN, NAN, NAN, NULL, NULL,	NULL, NULL };
	struct rec_spec ok = r;
	ok.s = T0;
	ok.t = T0 + H;

	gf_charge_input_init(&in); /* end before start */
	asset(&in, "c", "n", T0, T0 + 10 * H, 8, 8, 8, 1, 1, 1, NULL);
	record(&in, &ok);
	record(&in, &r);
	expect_bad(&in, "record 'records.csv':3: 'end' is before 'start'");
	gf_charge_input_release(&in);

	gf_charge_input_init(&in); /* a node without an asset row */
	asset(&in, "c", "n", T0, T0 + 10 * H, 8, 8, 8, 1, 1, 1, NULL);
	record(&in, &ok);
	r = ok;
	r.node = "ghost";
	record(&in, &r);
	expect_bad(&in, "node 'ghost' of cluster 'c' has no asset row");
	gf_charge_input_release(&in);

	gf_charge_input_init(&in); /* not covered by the asset rows */
	asset(&in, "c", "n", T0, T0 + 5 * H, 8, 8, 8, 1, 1, 1, NULL);
	record(&in, &ok);
	r = ok;
	r.t = T0 + 6 * H;
	record(&in, &r);
	expect_bad(&in, "do not cover it all");
	gf_charge_input_release(&in);

	gf_charge_input_init(&in); /* a MIG profile without a model */
	asset(&in, "c", "n", T0, T0 + 10 * H, 8, 8, 8, 1, 1, 1, NULL);
	record(&in, &ok);
	r = ok;
	r.mig = "3g.40gb";
	record(&in, &r);
	expect_bad(&in, "MIG profile '3g.40gb' needs a GPU model");
	gf_charge_input_release(&in);

	gf_charge_input_init(&in); /* negative quantity */
	asset(&in, "c", "n", T0, T0 + 10 * H, 8, 8, 8, 1, 1, 1, NULL);
	record(&in, &ok);
	r = ok;
	r.cpu_use = -1;
	record(&in, &r);
	expect_bad(&in, "'cpu_req' and 'cpu_use' must be numbers >= 0");
	gf_charge_input_release(&in);

	gf_charge_input_init(&in); /* a GPU model without a price */
	asset(&in, "c", "n", T0, T0 + 10 * H, 8, 8, 8, NAN, 1, 1, "B300");
	record(&in, &ok);
	expect_bad(&in, "asset 'assets.csv':2: node 'n': no GPU price for "
			"model 'B300'");
	gf_charge_input_release(&in);

	gf_charge_input_init(&in); /* overlapping asset rows */
	asset(&in, "c", "n", T0, T0 + 6 * H, 8, 8, 8, 1, 1, 1, NULL);
	asset(&in, "c", "n", T0 + 5 * H, T0 + 10 * H, 8, 8, 8, 1, 1, 1, NULL);
	record(&in, &ok);
	expect_bad(&in, "asset 'assets.csv':3: node 'n': overlaps asset "
			"'assets.csv':2");
	gf_charge_input_release(&in);
}

/* --- telemetry ------------------------------------------------------------ */

static void test_telemetry_waste(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_input_init(&in);
	asset(&in, "c", "n", T0, T0 + 10 * H, 2, 0, 0, 3, 0, 0, NULL);
	struct rec_spec r = { "c",	   "n",	 "teamA", "p",	"x",	   T0,
			      T0 + 10 * H, 1,	 NAN,	  NAN,	NAN,	   NAN,
			      NAN,	   NULL, NULL,	  NULL, "GPU-aaaa" };
	record(&in, &r);
	/* 0-5 h: 80 % graphics engine; 5-10 h: idle, diagnosed */
	struct gf_charge_tele t = { T0,
				    T0 + 5 * H,
				    80,
				    S(&in, "n"),
				    S(&in, "GPU-aaaa"),
				    GF_CHARGE_SIG_GR,
				    -1,
				    0,
				    0 };
	assert_int_equal(gf_charge_add_tele(&in, &t), 0);
	t.start_ms = T0 + 5 * H;
	t.end_ms = T0 + 10 * H;
	t.activity = 0;
	t.signal = GF_CHARGE_SIG_UTIL;
	t.waste = GF_CHARGE_WASTE_IDLE;
	assert_int_equal(gf_charge_add_tele(&in, &t), 0);
	/* another GPU's telemetry is not this record's */
	t.gpu = S(&in, "GPU-bbbb");
	t.waste = GF_CHARGE_WASTE_STARVED;
	assert_int_equal(gf_charge_add_tele(&in, &t), 0);
	gf_charge_opts_init(&o, T0, T0 + 10 * H);
	agg(&in, &o, "namespace");
	run_ok(&in, &o, &res);
	const struct gf_charge_row *a = row(&res, "teamA");
	near(gf_charge_row_gpu_eff(a), 0.4);
	near(a->gpu_tele_hours, 10);
	near(a->waste[GF_CHARGE_WASTE_IDLE], 15); /* 5 h x 3 */
	near(a->waste[GF_CHARGE_WASTE_STARVED], 0);
	assert_int_equal(a->signals,
			 (1u << GF_CHARGE_SIG_GR) | (1u << GF_CHARGE_SIG_UTIL));
	assert_true(isnan(gf_charge_row_gpu_eff(row(&res, "__idle__"))));
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
}

/* --- steps: days add up to the window when nothing is shared --------- */

static void test_steps(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_charge_opts o;
	struct gf_charge_result all, days;
	gf_charge_input_init(&in);
	asset(&in, "c", "n", T0, T0 + 3 * DAY, 4, 16, 64, 2, 0.05, 0.01, NULL);
	struct rec_spec r = { "c",	   "n",	 "a",  "p",  "x", T0 + 20 * H,
			      T0 + 50 * H, 2,	 4,    2,    8,	  16,
			      NAN,	   NULL, NULL, NULL, NULL };
	record(&in, &r);
	r.ns = "b";
	r.s = T0 + 2 * H;
	r.t = T0 + 70 * H;
	r.gpus = 1;
	record(&in, &r);
	gf_charge_opts_init(&o, T0, T0 + 3 * DAY);
	agg(&in, &o, "namespace");
	run_ok(&in, &o, &all);
	o.step_ms = DAY;
	run_ok(&in, &o, &days);
	assert_int_equal(days.nsteps, 3);
	double a = 0, b = 0, idle = 0;
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < days.steps[k].nrows; i++) {
			const struct gf_charge_row *w = &days.steps[k].rows[i];
			double t = gf_charge_row_total(w);
			*(strcmp(w->name, "a") == 0   ? &a
			  : strcmp(w->name, "b") == 0 ? &b
						      : &idle) += t;
		}
	near(a, gf_charge_row_total(row(&all, "a")));
	near(b, gf_charge_row_total(row(&all, "b")));
	near(idle, gf_charge_row_total(row(&all, "__idle__")));
	near(row(&all, "a")->gpu_hours, 60);
	near(all.steps[0].rows_cost, all.steps[0].asset_cost);
	gf_charge_result_release(&all);
	gf_charge_result_release(&days);
	gf_charge_input_release(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b2_opencost_unit_tests),
		cmocka_unit_test(test_b2_owner_keys),
		cmocka_unit_test(test_b2_shared_breakdown),
		cmocka_unit_test(test_b3_gpu_vectors),
		cmocka_unit_test(test_gpu_share_250_250_500),
		cmocka_unit_test(test_mig_slices),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_telemetry_waste),
		cmocka_unit_test(test_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
