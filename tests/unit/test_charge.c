/*
 * test_charge.c - chargeback (include/gpufleet/charge.h and the readers
 * of src/chargeback): OpenCost parity on its own unit tests (B2 of
 * ../shared/reference/autoscale-chargeback-engines.md: cases 1b, 3a,
 * 4a-4d) and on the GPU vectors V1-V6 (B3); GPU exactness worked by hand
 * (a GPU shared 250/250/500 milli, an H100 split 3g.40gb + 2g.20gb x 2
 * by either slice rule, idle on a MIG GPU); the capacity check; every
 * bad input named; telemetry efficiency and waste; steps; the readers
 * (records, assets with prices and node prices, sacct).  The randomized
 * parity against a Python model lives in tests/integration/chargeback.sh.
 */
#include <math.h>

#include <gpufleet/charge.h>

#include "chargeback/chargeback.h"
#include "helpers.h"
#include "store/store.h"
#include "util/mem.h"

#define H   3600000LL
#define DAY (24 * H)
#define T0  1714521600000LL /* 2024-05-01T00:00:00Z */

static uint32_t S(struct gf_charge_input *in, const char *s)
{
	uint32_t id = 0;
	assert_int_equal(gf_charge_intern(in, s, strlen(s), &id), 0);
	return id;
}

static void asset(struct gf_charge_input *in, const char *cluster,
		  const char *node, int64_t s, int64_t t, double gpus,
		  double cpu, double ram, double gp, double cp, double rp,
		  const char *model)
{
	struct gf_charge_asset a = { s,	 t, gpus, cpu, ram, gp, cp,
				     rp, 0, 0,	  0,   0,   0 };
	a.cluster = S(in, cluster);
	a.node = S(in, node);
	a.gpu_model = model ? S(in, model) : 0;
	a.src = S(in, "assets.csv");
	a.line = (uint32_t)in->nasset + 2;
	assert_int_equal(gf_charge_add_asset(in, &a), 0);
}

struct rec_spec {
	const char *cluster, *node, *ns, *pod, *ctr;
	int64_t s, t;
	double gpus, cpu_req, cpu_use, ram_req, ram_use, other;
	const char *labels, *mig, *model, *gpu_ids;
};

/* The pod's owner, services and annotations of a record. */
struct own_spec {
	const char *kind, *ctl, *svc, *annos;
};

static void record_own(struct gf_charge_input *in, const struct rec_spec *x,
		       const struct own_spec *o)
{
	struct gf_charge_record r;
	memset(&r, 0, sizeof(r));
	r.cluster = S(in, x->cluster);
	r.node = S(in, x->node);
	r.ns = S(in, x->ns ? x->ns : "");
	r.pod = S(in, x->pod ? x->pod : "");
	r.container = S(in, x->ctr ? x->ctr : "");
	r.start_ms = x->s;
	r.end_ms = x->t;
	r.gpus = x->gpus;
	r.cpu_req = x->cpu_req;
	r.cpu_use = x->cpu_use;
	r.ram_req = x->ram_req;
	r.ram_use = x->ram_use;
	r.other_cost = x->other;
	struct gf_charge_extra xe;
	memset(&xe, 0, sizeof(xe));
	xe.labels = x->labels ? S(in, x->labels) : 0;
	xe.gpu_model = x->model ? S(in, x->model) : 0;
	xe.mig_profile = x->mig ? S(in, x->mig) : 0;
	xe.gpu_ids = x->gpu_ids ? S(in, x->gpu_ids) : 0;
	xe.controller_kind = o && o->kind ? S(in, o->kind) : 0;
	xe.controller = o && o->ctl ? S(in, o->ctl) : 0;
	xe.services = o && o->svc ? S(in, o->svc) : 0;
	xe.annotations = o && o->annos ? S(in, o->annos) : 0;
	r.extra = gf_charge_extra_id(in, &xe);
	r.src = S(in, "records.csv");
	r.line = (uint32_t)in->nrec + 2;
	assert_int_equal(gf_charge_add_record(in, &r), 0);
}

static void record(struct gf_charge_input *in, const struct rec_spec *x)
{
	record_own(in, x, NULL);
}

static const struct gf_charge_row *row(const struct gf_charge_result *res,
				       const char *name)
{
	for (size_t i = 0; i < res->steps[0].nrows; i++)
		if (strcmp(res->steps[0].rows[i].name, name) == 0)
			return &res->steps[0].rows[i];
	print_message("no row '%s'\n", name);
	fail();
	return NULL;
}

static void total_is(const struct gf_charge_result *res, const char *name,
		     double want)
{
	double got = gf_charge_row_total(row(res, name));
	if (fabs(got - want) > 1e-5) {
		print_message("%s: total %.6f, expected %.6f\n", name, got,
			      want);
		fail();
	}
}

static void near(double got, double want)
{
	if (fabs(got - want) > 1e-5) {
		print_message("got %.6f, expected %.6f\n", got, want);
		fail();
	}
}

static void agg(struct gf_charge_input *in, struct gf_charge_opts *o,
		const char *key)
{
	struct gf_err e;
	assert_int_equal(gf_charge_key_parse(in, key, &o->agg[o->nagg++], &e),
			 0);
}

static void share(struct gf_charge_input *in, struct gf_charge_opts *o,
		  const char *m)
{
	struct gf_err e;
	assert_int_equal(
		gf_charge_match_parse(in, m, &o->share[o->nshare++], &e), 0);
}

static void run_ok(const struct gf_charge_input *in,
		   const struct gf_charge_opts *o, struct gf_charge_result *res)
{
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_charge_run(in, o, res, &e);
	if (rc)
		print_message("gf_charge_run: %s\n", e.msg);
	assert_int_equal(rc, 0);
}

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

/* --- the readers ------------------------------------------------------------
 */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *tmpdir(void)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/test_charge.XXXXXX");
		assert_non_null(mkdtemp(dir));
	}
	return dir;
}

static char made[64][128]; /* files to remove at the end */
static int nmade;

static const char *tmp(const char *name, const char *text)
{
	char *p = made[nmade++ % 64];
	snprintf(p, 128, "%s/%s", tmpdir(), name);
	write_file(p, text);
	return p;
}

static int cleanup(void **state)
{
	(void)state;
	for (int i = 0; i < nmade && i < 64; i++)
		unlink(made[i]);
	rmdir(tmpdir());
	return 0;
}

#define REC_HEAD                                                               \
	"cluster,node,namespace,pod,container,start,end,gpus,cpu_req,cpu_use," \
	"ram_req_gib,ram_use_gib\n"

static void reader_fails(int (*fn)(const char *, struct gf_err *),
			 const char *path, const char *want)
{
	struct gf_err e;
	gf_err_clear(&e);
	assert_true(fn(path, &e) < 0);
	print_message("%s\n", e.msg);
	assert_non_null(strstr(e.msg, want));
}

static int read_records(const char *path, struct gf_err *e)
{
	struct gf_charge_input in;
	struct gf_cb_skips sk = { NULL, 0, 0 };
	gf_charge_input_init(&in);
	int rc = gf_cb_read_records(&in, path, false, &sk, e);
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
	return rc;
}

static int read_prices(const char *path, struct gf_err *e)
{
	struct gf_cb_prices p;
	gf_cb_prices_init(&p);
	int rc = gf_cb_read_prices(path, &p, e);
	gf_cb_prices_release(&p);
	return rc;
}

static void test_readers_bad_input(void **state)
{
	(void)state;
	reader_fails(read_records,
		     tmp("r1.csv", REC_HEAD "c,n,a,p,x,2024-05-01T05:00:00Z,"
					    "2024-05-01T04:00:00Z,1,1,1,1,1\n"),
		     "r1.csv':2: field 'end': before 'start'");
	reader_fails(read_records,
		     tmp("r2.csv", REC_HEAD "c,n,a,p,x,0,3600,lots,1,1,1,1\n"),
		     "r2.csv':2: field 'gpus': expected a number, got 'lots'");
	reader_fails(
		read_records,
		tmp("r3.csv", REC_HEAD "c,n,a,p,x,yesterday,3600,1,1,1,1,1\n"),
		"r3.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_records,
		     tmp("r4.csv", "cluster,node,namespace,pod,start,end\n"),
		     "r4.csv':1: column 'container' is missing");
	reader_fails(read_records,
		     tmp("r5.csv", "cluster,node,namespace,pod,container,start,"
				   "end,gpus,cpu_req,cpu_use,ram_req_gib,"
				   "ram_use_gib,gpuz\n"),
		     "r5.csv':1: unknown column 'gpuz'");
	reader_fails(read_records,
		     tmp("r6.csv", REC_HEAD ",n,a,p,x,0,3600,1,1,1,1,1\n"),
		     "r6.csv':2: field 'cluster': must not be empty");
	/* a row cut after two fields: the times are "" (F3, issue 20) */
	reader_fails(read_records, tmp("r7.csv", REC_HEAD "c,n\n"),
		     "r7.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_records, tmp("r8.csv", REC_HEAD "c,n,a,p,x\n"),
		     "r8.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_records,
		     tmp("r9.csv", REC_HEAD "c,n,a,p,x,2024-05-01T0\n"),
		     "r9.csv':2: field 'start': expected an RFC3339 time");
	reader_fails(read_prices, tmp("p1.yaml", "gpu:\n  H100: [2.5\n"),
		     "p1.yaml':3: malformed YAML");
	reader_fails(read_prices, tmp("p2.yaml", "gpu:\n  H100: cheap\n"),
		     "p2.yaml':2: 'H100': expected a price >= 0, got 'cheap'");
	reader_fails(read_prices, tmp("p3.yaml", "gpus:\n  H100: 2\n"),
		     "p3.yaml':1: unknown key 'gpus'");
	reader_fails(read_prices, tmp("p4.yaml", "mig_rule: sm\n"),
		     "p4.yaml':1: 'mig_rule': expected compute or memory");
	reader_fails(read_prices, tmp("p5.yaml", "- 1\n- 2\n"),
		     "expected a mapping of prices");

	/* lenient: the bad rows are skipped and listed, the rest read */
	struct gf_charge_input in;
	struct gf_cb_skips sk = { NULL, 0, 0 };
	struct gf_err e;
	gf_charge_input_init(&in);
	assert_int_equal(
		gf_cb_read_records(&in,
				   tmp("r7.csv", REC_HEAD
				       "c,n,a,p,x,0,3600,1,1,1,1,1\n"
				       "c,n,a,p,x,0,3600,x,1,1,1,1\n"
				       "c,n,a,p,x,7200,3600,1,1,1,1,1\n"
				       "c,n,b,p,x,0,3600,1,,,,\n"),
				   true, &sk, &e),
		0);
	assert_int_equal(in.nrec, 2);
	assert_int_equal(sk.total, 2);
	assert_int_equal(sk.v[0].line, 3);
	assert_int_equal(sk.v[1].line, 4);
	assert_true(isnan(in.rec[1].cpu_req));
	gf_cb_skips_release(&sk);
	gf_charge_input_release(&in);
}

static void test_prices_and_node_split(void **state)
{
	(void)state;
	struct gf_cb_prices p;
	struct gf_err e;
	gf_cb_prices_init(&p);
	assert_int_equal(
		gf_cb_read_prices(tmp("p.yaml", "currency: EUR\n"
						"gpu:\n  H100: 2.5\n  l40s: 1\n"
						"cpu_core: 0.04\n"
						"ram_gib: 0.005\n"
						"nodes:\n  n9: 35\n"
						"mig_rule: memory\n"),
				  &p, &e),
		0);
	assert_string_equal(p.currency, "EUR");
	near(gf_cb_gpu_price(&p, "h100"), 2.5);
	near(gf_cb_gpu_price(&p, "L40S"), 1);
	assert_true(isnan(gf_cb_gpu_price(&p, "A100")));
	assert_int_equal(p.mig_rule, GF_CHARGE_MIG_MEMORY);
	struct gf_charge_input in;
	gf_charge_input_init(&in);
	/* n9 has only a node price: 35 split over 1 GPU (base 2.5), 10
	 * cores (0.4) and 100 GiB (0.5): base 3.4, factor 35/3.4 */
	assert_int_equal(
		gf_cb_read_assets(
			&in,
			tmp("a.csv",
			    "cluster,node,start,end,gpus,cpu_cores,ram_gib,"
			    "gpu_price_hr,cpu_core_price_hr,ram_gib_price_hr,"
			    "gpu_model\n"
			    "c,n1,0,3600,8,64,512,,,,H100\n"
			    "c,n9,0,3600,1,10,100,,,,H100\n"
			    "c,n2,0,3600,8,64,512,3,,,B300\n"),
			&p, &e),
		0);
	near(in.asset[0].gpu_price_hr, 2.5);
	near(in.asset[0].cpu_price_hr, 0.04);
	near(in.asset[1].gpu_price_hr, 2.5 * 35 / 3.4);
	near(in.asset[1].cpu_price_hr * 10 + in.asset[1].ram_price_hr * 100 +
		     in.asset[1].gpu_price_hr,
	     35);
	near(in.asset[2].gpu_price_hr, 3); /* the file's own price wins */
	gf_charge_input_release(&in);

	/* a model without a price: the core names the asset row */
	gf_charge_input_init(&in);
	assert_int_equal(
		gf_cb_read_assets(&in,
				  tmp("a2.csv",
				      "cluster,node,start,end,gpus,"
				      "cpu_cores,ram_gib,gpu_price_hr,"
				      "cpu_core_price_hr,"
				      "ram_gib_price_hr,gpu_model\n"
				      "c,n1,0,3600,8,64,512,,,,B300\n"),
				  &p, &e),
		0);
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_opts_init(&o, 0, 3600000);
	assert_int_equal(gf_charge_run(&in, &o, &res, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "a2.csv':2: node 'n1': no GPU price "
				      "for model 'B300'"));
	gf_charge_input_release(&in);
	gf_cb_prices_release(&p);
}

static void test_sacct(void **state)
{
	(void)state;
	struct gf_charge_input in;
	struct gf_cb_skips sk = { NULL, 0, 0 };
	struct gf_err e;
	gf_charge_input_init(&in);
	/* the jobs of the reference's sacct run, with times and nodes */
	const char *path =
		tmp("sacct.txt",
		    "JobID|Account|Partition|User|NodeList|Start|End|AllocTRES|"
		    "State\n"
		    "8|teama|gpu|alice|gpu01|2024-05-01T10:00:00|"
		    "2024-05-01T10:00:05|billing=5,cpu=1,gres/gpu:h100=2,"
		    "gres/gpu=2,mem=1G,node=1|COMPLETED\n"
		    "10|teamb|gpu|bob|gpu[01-02]|2024-05-01T10:00:00|"
		    "2024-05-01T10:00:10|billing=9,cpu=2,gres/gpu:h100=4,"
		    "gres/gpu=4,mem=2048M,node=2|COMPLETED\n"
		    "11|teamb|gpu|bob|None assigned|Unknown|Unknown|"
		    "billing=1,cpu=1|PENDING\n");
	assert_int_equal(gf_cb_read_sacct(&in, path, 0, false, &sk, &e), 0);
	assert_int_equal(in.nrec, 3); /* job 10 on two nodes, 11 not run */
	near(in.rec[0].gpus, 2);
	near(in.rec[0].ram_req, 1);
	assert_int_equal(in.rec[0].end_ms - in.rec[0].start_ms, 5000);
	assert_string_equal(gf_charge_str(&in, in.rec[0].ns), "teama");
	near(in.rec[1].gpus, 2);
	near(in.rec[2].gpus, 2);
	near(in.rec[2].ram_req, 1);
	assert_string_equal(gf_charge_str(&in, in.rec[2].node), "gpu02");
	assert_string_equal(
		gf_charge_str(&in, in.extra[in.rec[1].extra].gpu_model),
		"h100");
	assert_true(isnan(in.rec[0].cpu_use)); /* Slurm bills allocation */
	gf_charge_input_release(&in);
	gf_charge_input_init(&in);
	reader_fails(read_records, tmp("empty.csv", ""), "empty file");
	assert_true(gf_cb_read_sacct(&in,
				     tmp("s2.txt", "JobID|Account|Start|End\n"),
				     0, false, &sk, &e) < 0);
	assert_non_null(strstr(e.msg, "field 'NodeList' is missing"));
	gf_charge_input_release(&in);
}

static void test_times(void **state)
{
	(void)state;
	int64_t ms, s, t;
	struct gf_err e;
	assert_int_equal(gf_cb_parse_time("2024-05-01T00:00:00Z", &ms), 0);
	assert_int_equal(ms, T0);
	assert_int_equal(gf_cb_parse_time("2024-05-01T02:00:00+02:00", &ms), 0);
	assert_int_equal(ms, T0);
	assert_int_equal(gf_cb_parse_time("1714521600.5", &ms), 0);
	assert_int_equal(ms, T0 + 500);
	assert_int_equal(gf_cb_parse_time("2024-05-01T00:00:00", &ms), -1);
	assert_int_equal(gf_cb_parse_time("2024-13-01T00:00:00Z", &ms), -1);
	/* cut short: on the heap, so that ASan sees a read past the end */
	static const char *const cut[] = {
		"",
		"2024-",
		"2024-05-0",
		"2024-05-01T00:00",
		"2024-05-01T00:00:00+",
		"2024-05-01T00:00:00+02",
		"2024-05-01T00:00:00+02:0",
		"2024-05-01T00:00:00-0",
	};
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		char *c = gf_strdup(cut[i]);
		assert_int_equal(gf_cb_parse_time(c, &ms), -1);
		gf_free(c);
	}
	char *w = gf_strdup("2024-05-01T00:00:00Z,2024-05");
	assert_int_equal(gf_cb_parse_window(w, 0, &s, &t, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "cannot parse '--window"));
	gf_free(w);
	w = gf_strdup("2024-05-01T00:00:00Z,");
	assert_int_equal(gf_cb_parse_window(w, 0, &s, &t, &e), GF_EINVAL);
	gf_free(w);
	char buf[40];
	gf_charge_time_str(T0 + 3 * H + 61000, buf, sizeof(buf));
	assert_string_equal(buf, "2024-05-01T03:01:01Z");
	gf_charge_time_str(951782400000LL, buf, sizeof(buf)); /* leap day */
	assert_string_equal(buf, "2000-02-29T00:00:00Z");
	assert_int_equal(gf_cb_parse_window("7d", T0 + 30000, &s, &t, &e), 0);
	assert_int_equal(t, T0);
	assert_int_equal(t - s, 7 * DAY);
	/* the duration forms of every flag (util/duration.h, issue 21) */
	assert_int_equal(gf_cb_parse_window("1-0", T0, &s, &t, &e), 0);
	assert_int_equal(t - s, DAY);
	assert_int_equal(gf_cb_parse_window("90m", T0, &s, &t, &e), 0);
	assert_int_equal(t - s, 90 * 60000);
	assert_int_equal(gf_cb_parse_window("7", T0, &s, &t, &e), GF_EINVAL);
	assert_int_equal(gf_cb_parse_window("0d", T0, &s, &t, &e), GF_EINVAL);
	assert_int_equal(gf_cb_parse_window("10,5", 0, &s, &t, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "the end is not after the start"));
	near(gf_charge_round(1.234565), 1.23457);
	near(gf_charge_round(-1.234565), -1.23457);
}

/* A job of the store's kind: whole GPUs, a share, or a MIG instance. */
static struct gf_job *store_job(uint64_t seq, const char *team, int gpus,
				int milli, const char *mig)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)seq);
	snprintf(j->spec.name, sizeof(j->spec.name), "job-%llu",
		 (unsigned long long)seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "%s", team);
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "batch");
	j->spec.replicas = 1;
	j->spec.gpus = gpus;
	j->spec.gpu_milli = milli;
	if (mig) {
		snprintf(j->spec.mig_profile, sizeof(j->spec.mig_profile), "%s",
			 mig);
		snprintf(j->spec.gpu_model, sizeof(j->spec.gpu_model), "H100");
	}
	j->spec.cpu_milli = 2000;
	j->spec.memory_mib = 8192;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = T0 - 1000;
	j->block = -1;
	snprintf(j->reason, sizeof(j->reason), "requeued");
	return j;
}

/* The controller's store as a source: each run a record, GPU-seconds
 * the run's length times the job's GPUs, everything priced once. */
static void test_store_source(void **state)
{
	(void)state;
	char url[128], db[96];
	snprintf(db, sizeof(db), "%s/state/jobs.db", tmpdir());
	snprintf(url, sizeof(url), "sqlite:%s", db);
	struct gf_store *s;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_store_open(url, &s, &e))
		fail_msg("open: %s", e.msg);
	bool leading = false;
	assert_int_equal(gf_store_lead(s, &leading, &e), 0);
	assert_true(leading);
	struct gf_job *j[4] = { store_job(1, "vision", 2, 0, NULL),
				store_job(2, "nlp", 0, 250, NULL),
				store_job(3, "nlp", 0, 0, "3g.40gb"),
				store_job(4, "speech", 4, 0, NULL) };
	/* job 4 runs now on n1, 4 GPUs, started 9 minutes before now (its
	 * run is not kept yet: the store has no run of it) */
	const int64_t now = T0 + 9 * H;
	j[3]->state = GF_JOB_RUNNING;
	j[3]->attempts = 1;
	j[3]->started_ms = now - 9 * 60000;
	j[3]->reason[0] = '\0';
	j[3]->block = 0;
	j[3]->place = gf_calloc(1, sizeof(*j[3]->place));
	snprintf(j[3]->place[0].node_name, sizeof(j[3]->place[0].node_name),
		 "n1");
	j[3]->place[0].node = -1;
	j[3]->place[0].ngpus = 4;
	for (int g = 0; g < 4; g++)
		j[3]->place[0].gpus[g] = g;
	j[3]->place[0].gpu_milli = 1000;
	j[3]->place[0].mig_start = -1;
	/* a node that joined: 8 H100, 64 cores, 512 GiB */
	static const char inv[] =
		"{\"cpu_milli\": 64000, \"memory_mib\": 524288, "
		"\"gpu_model\": \"H100\", \"gpus\": [{}, {}, {}, {}, {}, {}, "
		"{}, {}]}";
	if (gf_store_put_node(s, "n1", inv, strlen(inv), T0, &e))
		fail_msg("put node: %s", e.msg);
	struct gf_job_run r[4];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 4; i++) {
		r[i].seq = (uint64_t)(i < 3 ? i + 1 : 1);
		r[i].attempt = i < 3 ? 1 : 2;
		r[i].started_ms = T0 + i * H;
		r[i].ended_ms = T0 + i * H + 1800000 + 1234;
		snprintf(r[i].node, sizeof(r[i].node), "n1");
		snprintf(r[i].reason, sizeof(r[i].reason), "exited");
	}
	const struct gf_job *jobs[4] = { j[0], j[1], j[2], j[3] };
	struct gf_store_batch batch = { jobs, 4, r, 4 };
	if (gf_store_commit(s, &batch, &e))
		fail_msg("commit: %s", e.msg);
	gf_store_close(s);
	for (int i = 0; i < 4; i++) {
		gf_job_release(j[i]);
		gf_free(j[i]);
	}

	struct gf_charge_input in;
	gf_charge_input_init(&in);
	asset(&in, "gpufleet", "n1", T0, T0 + 10 * H, 8, 64, 512, 7, 0.04,
	      0.005, "H100");
	if (gf_cb_read_db(&in, url, "gpufleet", now, &e))
		fail_msg("read db: %s", e.msg);
	assert_int_equal(in.nrec, 5); /* 4 runs kept, 1 replica running */
	struct gf_charge_opts o;
	struct gf_charge_result res;
	gf_charge_opts_init(&o, T0, T0 + 10 * H);
	o.now_ms = now;
	agg(&in, &o, "team");
	run_ok(&in, &o, &res);
	double len_h = (1800000 + 1234) / 3600000.0;
	/* vision: two runs of job 1 (attempts 1 and 2), 2 GPUs each */
	near(row(&res, "vision")->gpu_hours, 2 * 2 * len_h);
	/* nlp: a 250-milli share and 3g.40gb (3/7 by compute slices) */
	near(row(&res, "nlp")->gpu_hours, (0.25 + 3.0 / 7) * len_h);
	/* speech: running, 4 GPUs for the 9 minutes up to now */
	assert_non_null(row(&res, "speech"));
	near(row(&res, "speech")->gpu_hours, 4 * 9 / 60.0);
	near(res.steps[0].rows_cost, res.steps[0].asset_cost);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
	/* a window that ends before now: charged up to the window's end */
	gf_charge_input_init(&in);
	asset(&in, "gpufleet", "n1", T0, T0 + 10 * H, 8, 64, 512, 7, 0.04,
	      0.005, "H100");
	if (gf_cb_read_db(&in, url, "gpufleet", now, &e))
		fail_msg("read db: %s", e.msg);
	gf_charge_opts_init(&o, T0, now - 5 * 60000);
	o.now_ms = now;
	agg(&in, &o, "team");
	run_ok(&in, &o, &res);
	near(row(&res, "speech")->gpu_hours, 4 * 4 / 60.0);
	gf_charge_result_release(&res);
	gf_charge_input_release(&in);
	/* the assets from the store's node, priced by a prices: block */
	char yaml[128];
	snprintf(yaml, sizeof(yaml), "%s/serve.yaml", tmpdir());
	FILE *f = fopen(yaml, "w");
	assert_non_null(f);
	fputs("agents:\n  heartbeat_s: 1\nprices:\n  h100: 7\n"
	      "  cpu_core: 0.04\n  ram_gib: 0.005\n  currency: EUR\n",
	      f);
	fclose(f);
	struct gf_cb_prices p;
	gf_cb_prices_init(&p);
	bool found = false;
	assert_int_equal(gf_cb_read_prices_block(yaml, &p, &found, &e), 0);
	assert_true(found);
	assert_string_equal(p.currency, "EUR");
	near(gf_cb_gpu_price(&p, "H100"), 7);
	gf_charge_input_init(&in);
	if (gf_cb_db_assets(&in, url, "gpufleet", &p, T0, T0 + 10 * H, &e))
		fail_msg("assets: %s", e.msg);
	assert_int_equal(in.nasset, 1);
	near(in.asset[0].gpus, 8);
	near(in.asset[0].cpu_cores, 64);
	near(in.asset[0].ram_gib, 512);
	near(in.asset[0].gpu_price_hr, 7);
	gf_charge_input_release(&in);
	gf_cb_prices_release(&p);
	/* a bad price: the file, its line and the key */
	f = fopen(yaml, "w");
	assert_non_null(f);
	fputs("prices:\n  h100: 7\n  l40s: cheap\n", f);
	fclose(f);
	gf_cb_prices_init(&p);
	assert_int_not_equal(gf_cb_read_prices_block(yaml, &p, &found, &e), 0);
	assert_non_null(strstr(e.msg, "serve.yaml"));
	assert_non_null(strstr(e.msg, ":3"));
	assert_non_null(strstr(e.msg, "l40s"));
	gf_cb_prices_release(&p);
	/* no block: found false */
	f = fopen(yaml, "w");
	assert_non_null(f);
	fputs("agents:\n  heartbeat_s: 1\n", f);
	fclose(f);
	gf_cb_prices_init(&p);
	assert_int_equal(gf_cb_read_prices_block(yaml, &p, &found, &e), 0);
	assert_false(found);
	gf_cb_prices_release(&p);
	unlink(yaml);
	/* aggregated by team, the key says team (not namespace) */
	gf_charge_input_init(&in);
	struct gf_charge_key k;
	char kn[64];
	assert_int_equal(gf_charge_key_parse(&in, "team", &k, &e), 0);
	gf_charge_key_name(&in, &k, kn, sizeof(kn));
	assert_string_equal(kn, "team");
	assert_int_equal(gf_charge_key_parse(&in, "namespace", &k, &e), 0);
	gf_charge_key_name(&in, &k, kn, sizeof(kn));
	assert_string_equal(kn, "namespace");
	gf_charge_input_release(&in);
	char path[128];
	static const char *const files[] = { "jobs.db", "jobs.db-wal",
					     "jobs.db-shm", "jobs.db.lock" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/state/%s", tmpdir(), files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/state", tmpdir());
	rmdir(path);
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
		cmocka_unit_test(test_readers_bad_input),
		cmocka_unit_test(test_prices_and_node_split),
		cmocka_unit_test(test_sacct),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_store_source),
	};
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
