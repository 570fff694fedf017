/*
 * test_jobflow.c - arrays, dependencies and holds in the scheduling core
 * (jobflow.h): the array and dependency parsers and their refusals; an
 * array's %max never passed as its tasks start and end; afterok,
 * afterany, afternotok met, waiting ("dependency jN") and impossible
 * (cancelled, a chain in one pass), an array as a parent; holds and
 * their refusals; a restart (the jobs added again to a new core, as the
 * store gives them) keeping all of it.
 */
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>
#include <gpufleet/jobflow.h>

#include "core/jobs/ctl_impl.h"
#include "helpers.h"
#include "util/mem.h"

static uint64_t next_seq;

static void check(const struct gf_ctl *ctl)
{
	char msg[256];
	int rc = gf_ctl_check(ctl, msg, sizeof(msg));
	if (rc)
		print_message("gf_ctl_check: %s\n", msg);
	assert_int_equal(rc, 0);
}

/* One node of 8 H100s, one "batch" class. */
static struct gf_ctl *ctl_new(void)
{
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	cfg->policy = GF_POLICY_FGD;
	cfg->nclasses = 1;
	snprintf(cfg->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	cfg->nblocks = 1;
	snprintf(cfg->blocks[0], GF_NODE_NAME_MAX, "b0");
	cfg->open_teams = true;
	cfg->seed = 1;
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	int m = gf_cluster_model(c, "h100-80gb");
	assert_int_equal(gf_cluster_add(c, "n0", 128000, 1 << 20, 8, m), 0);
	struct gf_ctl *ctl;
	struct gf_err e;
	assert_int_equal(gf_ctl_new(cfg, c, NULL, &ctl, &e), 0);
	gf_free(cfg);
	next_seq = 0;
	return ctl;
}

static struct gf_job *job(int ngpus)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++next_seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "a");
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "batch");
	j->spec.replicas = 1;
	j->spec.gpus = ngpus;
	j->spec.cpu_milli = 1000;
	j->spec.memory_mib = 1024;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 1;
	j->block = -1;
	return j;
}

static const char *add(struct gf_ctl *ctl, struct gf_job *j)
{
	struct gf_err e;
	int rc = gf_ctl_add(ctl, j, &e);
	if (rc)
		print_message("add %s: %s\n", j->id, e.msg);
	assert_int_equal(rc, 0);
	check(ctl);
	return gf_ctl_job(ctl, j->id)->id;
}

static const char *dep_job(struct gf_ctl *ctl, int ngpus, const char *dep)
{
	struct gf_job *j = job(ngpus);
	snprintf(j->spec.dependency, sizeof(j->spec.dependency), "%s", dep);
	struct gf_err e;
	assert_int_equal(gf_ctl_deps_check(ctl, dep, &e), 0);
	return add(ctl, j);
}

/* An array of n tasks (indexes 0..n-1), %max; the array's id. */
static const char *array(struct gf_ctl *ctl, int n, int ngpus, int max)
{
	char first[GF_JOB_ID_MAX];
	snprintf(first, sizeof(first), "j%llu",
		 (unsigned long long)next_seq + 1);
	for (int t = 0; t < n; t++) {
		struct gf_job *j = job(ngpus);
		snprintf(j->spec.array_id, sizeof(j->spec.array_id), "%s",
			 first);
		j->spec.array_task = t;
		j->spec.array_max = max;
		add(ctl, j);
	}
	return gf_ctl_job(ctl, first)->id;
}

static void pass(struct gf_ctl *ctl, int64_t now)
{
	assert_int_equal(gf_ctl_schedule(ctl, now, NULL), 0);
	check(ctl);
}

static const struct gf_job *J(const struct gf_ctl *ctl, const char *id)
{
	const struct gf_job *j = gf_ctl_job(ctl, id);
	assert_non_null(j);
	return j;
}

static void finish(struct gf_ctl *ctl, const char *id, int code, int64_t now)
{
	struct gf_err e;
	assert_int_equal(gf_ctl_finish(ctl, id, code, now, &e), 0);
}

static int running_tasks(const struct gf_ctl *ctl, const char *arr)
{
	int n = 0;
	for (int i = 0; i < gf_ctl_array_ntasks(ctl, arr); i++)
		n += gf_ctl_array_task(ctl, arr, i)->state == GF_JOB_RUNNING;
	return n;
}

/* ---- the parsers ---- */

static void array_bad(const char *s, int rc, const char *msg)
{
	struct gf_array_spec a;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_array_parse(s, &a, &e), rc);
	assert_string_equal(e.msg, msg);
	assert_int_equal(a.n, 0);
}

static void test_array_parse(void **state)
{
	(void)state;
	struct gf_array_spec a;
	struct gf_err e;
	assert_int_equal(gf_array_parse("0-31", &a, &e), 0);
	assert_int_equal(a.n, 32);
	assert_int_equal(a.idx[31], 31);
	assert_int_equal(a.max, 0);
	assert_int_equal(gf_array_parse("0-31:4%2", &a, &e), 0);
	assert_int_equal(a.n, 8);
	assert_int_equal(a.idx[1], 4);
	assert_int_equal(a.idx[7], 28);
	assert_int_equal(a.max, 2);
	assert_int_equal(gf_array_parse("1,3,5-7", &a, &e), 0);
	int want[] = { 1, 3, 5, 6, 7 };
	assert_int_equal(a.n, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(a.idx[i], want[i]);
	assert_int_equal(gf_array_parse("7", &a, &e), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(gf_array_parse("0-999", &a, &e), 0);
	assert_int_equal(a.n, GF_ARRAY_TASKS_MAX);
	array_bad("", GF_EINVAL,
		  "'array': expected indexes such as 0-31, 0-31:2%4 or "
		  "1,3,5-7");
	array_bad("5-3", GF_EINVAL,
		  "'array': range 5-...: expected an end 5 to 999999");
	array_bad("0-3:0", GF_EINVAL,
		  "'array': range 0-3: expected a step of 1 or more");
	array_bad("1,2,1", GF_EINVAL, "'array': index 1 given twice");
	array_bad("0-1000", GF_ETOOBIG, "'array': more than 1000 tasks");
	array_bad("0-3%0", GF_EINVAL, "'array': %max: expected 1 to 999999");
	array_bad("x", GF_EINVAL,
		  "'array': expected an index 0 to 999999 at 'x'");
	array_bad("0-3%2x", GF_EINVAL,
		  "'array': unexpected 'x' (expected indexes such as 0-31, "
		  "0-31:2%4 or 1,3,5-7)");
	array_bad("1000000", GF_EINVAL,
		  "'array': expected an index 0 to 999999 at '1000000'");
	array_bad("-1", GF_EINVAL,
		  "'array': expected an index 0 to 999999 at '-1'");
}

static void dep_bad(const char *s, const char *msg)
{
	struct gf_dep v[GF_DEP_IDS_MAX];
	int n = -1;
	char norm[GF_JOB_DEP_MAX];
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_dep_parse(s, v, &n, norm, &e), GF_EINVAL);
	assert_string_equal(e.msg, msg);
	assert_int_equal(n, 0);
}

static void test_dep_parse(void **state)
{
	(void)state;
	struct gf_dep v[GF_DEP_IDS_MAX];
	int n;
	char norm[GF_JOB_DEP_MAX];
	struct gf_err e;
	assert_int_equal(gf_dep_parse("afterok:j1:2,afterany:j3,afternotok:4",
				      v, &n, norm, &e),
			 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[1].kind, GF_DEP_AFTEROK);
	assert_string_equal(v[1].id, "j2");
	assert_int_equal(v[3].kind, GF_DEP_AFTERNOTOK);
	assert_string_equal(norm, "afterok:j1:j2,afterany:j3,afternotok:j4");
	dep_bad("", "'dependency': expected KIND:ID[:ID...], KIND afterok, "
		    "afterany or afternotok");
	dep_bad("after:j1", "'dependency': unknown kind 'after' (known: "
			    "afterok, afterany, afternotok)");
	dep_bad("afterok",
		"'dependency': afterok: expected afterok:ID[:ID...]");
	dep_bad("afterok:jx",
		"'dependency': 'jx' is no job id (expected j12 or 12)");
	dep_bad("afterok:0",
		"'dependency': '0' is no job id (expected j12 or 12)");
	dep_bad("afterok:j1,", "'dependency': unknown kind '' (known: "
			       "afterok, afterany, afternotok)");
	dep_bad("afterok:1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17",
		"'dependency': more than 16 jobs");
}

/* ---- arrays ---- */

/*
 * 4 tasks of 1 GPU with %2 on a node of 8 GPUs: room for all, yet 2 run;
 * the others wait "array throttle (%2)".  One ends: one more starts,
 * never 3.  Without %max all 4 start.
 */
static void test_array_throttle(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new();
	const char *arr = array(ctl, 4, 1, 2);
	assert_string_equal(arr, "j1");
	assert_int_equal(gf_ctl_array_ntasks(ctl, arr), 4);
	assert_int_equal(gf_ctl_array_ntasks(ctl, "j2"), 0); /* a task */
	assert_null(gf_ctl_array_task(ctl, arr, 4));
	pass(ctl, 1000);
	assert_int_equal(running_tasks(ctl, arr), 2);
	assert_int_equal(J(ctl, "j1")->state, GF_JOB_RUNNING);
	assert_int_equal(J(ctl, "j2")->state, GF_JOB_RUNNING);
	assert_string_equal(J(ctl, "j3")->reason, "array throttle (%2)");
	finish(ctl, "j1", 0, 2000);
	pass(ctl, 3000);
	assert_int_equal(running_tasks(ctl, arr), 2);
	assert_int_equal(J(ctl, "j3")->state, GF_JOB_RUNNING);
	assert_string_equal(J(ctl, "j4")->reason, "array throttle (%2)");
	finish(ctl, "j2", 1, 4000);
	finish(ctl, "j3", 0, 4000);
	pass(ctl, 5000);
	assert_int_equal(running_tasks(ctl, arr), 1);
	const char *free4 = array(ctl, 4, 1, 0);
	pass(ctl, 6000);
	assert_int_equal(running_tasks(ctl, free4), 4);
	gf_ctl_free(ctl);
}

/* ---- dependencies ---- */

static void test_dependency(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new();
	struct gf_err e;
	const char *p = add(ctl, job(1));
	assert_int_equal(gf_ctl_deps_check(ctl, "afterok:j99", &e), GF_EINVAL);
	assert_string_equal(e.msg, "'dependency': no job j99");
	const char *ok = dep_job(ctl, 1, "afterok:j1");
	const char *any = dep_job(ctl, 1, "afterany:j1");
	const char *notok = dep_job(ctl, 1, "afternotok:j1");
	const char *chain = dep_job(ctl, 1, "afterok:j4"); /* afternotok's */
	pass(ctl, 1000);
	assert_int_equal(J(ctl, p)->state, GF_JOB_RUNNING);
	assert_int_equal(J(ctl, ok)->state, GF_JOB_PENDING);
	assert_string_equal(J(ctl, ok)->reason, "dependency j1");
	assert_string_equal(J(ctl, chain)->reason, "dependency j4");
	finish(ctl, p, 0, 2000);
	pass(ctl, 3000);
	assert_int_equal(J(ctl, ok)->state, GF_JOB_RUNNING);
	assert_int_equal(J(ctl, any)->state, GF_JOB_RUNNING);
	/* j1 succeeded: afternotok never; its afterok child with it, in
	 * the same pass */
	assert_int_equal(J(ctl, notok)->state, GF_JOB_CANCELLED);
	assert_string_equal(J(ctl, notok)->reason,
			    "dependency afternotok:j1 can never be met: j1 "
			    "succeeded");
	assert_int_equal(J(ctl, chain)->state, GF_JOB_CANCELLED);
	assert_string_equal(J(ctl, chain)->reason,
			    "dependency afterok:j4 can never be met: j4 "
			    "cancelled");

	/* a failed parent: afterok impossible, afternotok met */
	const char *f = add(ctl, job(1));
	const char *f_ok = dep_job(ctl, 1, "afterok:j6,afterany:j2");
	const char *f_not = dep_job(ctl, 1, "afternotok:j6");
	pass(ctl, 4000);
	finish(ctl, f, 3, 5000);
	pass(ctl, 6000);
	assert_int_equal(J(ctl, f_ok)->state, GF_JOB_CANCELLED);
	assert_string_equal(J(ctl, f_ok)->reason,
			    "dependency afterok:j6 can never be met: j6 "
			    "failed");
	assert_int_equal(J(ctl, f_not)->state, GF_JOB_RUNNING);
	/* a cancelled dependant leaves the waiting list quietly */
	const char *w = dep_job(ctl, 1, "afterany:j2");
	pass(ctl, 6500);
	assert_int_equal(gf_ctl_cancel(ctl, w, 6600, &e), 0);
	pass(ctl, 6700);
	assert_int_equal(J(ctl, w)->state, GF_JOB_CANCELLED);
	assert_string_equal(J(ctl, w)->reason, "cancelled");
	gf_ctl_free(ctl);
}

/* An array as a parent: all its tasks. */
static void test_dependency_on_array(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new();
	const char *arr = array(ctl, 3, 1, 0); /* j1..j3 */
	const char *all = dep_job(ctl, 1, "afterok:j1");
	const char *none = dep_job(ctl, 1, "afternotok:j1");
	pass(ctl, 1000);
	finish(ctl, arr, 0, 2000);
	finish(ctl, "j2", 0, 2000);
	pass(ctl, 3000);
	assert_string_equal(J(ctl, all)->reason, "dependency j1");
	finish(ctl, "j3", 0, 4000);
	pass(ctl, 5000);
	assert_int_equal(J(ctl, all)->state, GF_JOB_RUNNING);
	assert_int_equal(J(ctl, none)->state, GF_JOB_CANCELLED);
	assert_string_equal(J(ctl, none)->reason,
			    "dependency afternotok:j1 can never be met: j1 "
			    "succeeded");

	/* one task failing is enough to make afterok impossible */
	const char *arr2 = array(ctl, 2, 1, 0); /* j6, j7 */
	const char *ok2 = dep_job(ctl, 1, "afterok:j6");
	pass(ctl, 6000);
	finish(ctl, "j7", 2, 7000);
	pass(ctl, 8000);
	assert_int_equal(J(ctl, arr2)->state, GF_JOB_RUNNING);
	assert_int_equal(J(ctl, ok2)->state, GF_JOB_CANCELLED);
	assert_string_equal(
		J(ctl, ok2)->reason,
		"dependency afterok:j6 can never be met: j7 failed");
	gf_ctl_free(ctl);
}

/* ---- holds ---- */

static void test_hold(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new();
	struct gf_err e;
	struct gf_job *h = job(1);
	h->user_hold = true; /* submitted held */
	const char *held = add(ctl, h);
	const char *run = add(ctl, job(1));
	pass(ctl, 1000);
	assert_int_equal(J(ctl, held)->state, GF_JOB_PENDING);
	assert_string_equal(J(ctl, held)->reason, "held");
	assert_int_equal(J(ctl, run)->state, GF_JOB_RUNNING);
	assert_int_equal(gf_ctl_hold(ctl, held, true, &e), GF_ECONFLICT);
	assert_string_equal(e.msg, "job j1 is already held");
	assert_int_equal(gf_ctl_hold(ctl, run, true, &e), GF_ECONFLICT);
	assert_string_equal(e.msg, "job j2 is running (requeue it to hold it)");
	assert_int_equal(gf_ctl_hold(ctl, run, false, &e), GF_ECONFLICT);
	assert_string_equal(e.msg, "job j2 is running");
	assert_int_equal(gf_ctl_hold(ctl, "j9", true, &e), GF_ENOTFOUND);
	assert_int_equal(gf_ctl_hold(ctl, held, false, &e), 0);
	assert_int_equal(gf_ctl_hold(ctl, held, false, &e), GF_ECONFLICT);
	assert_string_equal(e.msg, "job j1 is not held");
	pass(ctl, 2000);
	assert_int_equal(J(ctl, held)->state, GF_JOB_RUNNING);
	/* requeue (gf_ctl_requeue) then hold: it waits held */
	assert_int_equal(gf_ctl_requeue(ctl, run, "requeued by user", 3000, &e),
			 0);
	assert_int_equal(gf_ctl_hold(ctl, run, true, &e), 0);
	pass(ctl, 4000);
	assert_int_equal(J(ctl, run)->state, GF_JOB_PENDING);
	assert_string_equal(J(ctl, run)->reason, "held");
	/* a held job blocks no one behind it */
	const char *big = add(ctl, job(8));
	assert_int_equal(gf_ctl_hold(ctl, big, true, &e), 0);
	const char *small = add(ctl, job(1));
	pass(ctl, 5000);
	assert_int_equal(J(ctl, small)->state, GF_JOB_RUNNING);
	gf_ctl_free(ctl);
}

/* ---- a restart ---- */

/* A deep copy of a job, as the store gives it back. */
static struct gf_job *clone(const struct gf_job *j)
{
	struct gf_job *c = gf_calloc(1, sizeof(*c));
	*c = *j;
	gf_job_spec_copy(&c->spec, &j->spec);
	c->held = NULL;
	c->nheld = 0;
	c->place = NULL;
	if (j->place) {
		c->place =
			gf_calloc((size_t)j->spec.replicas, sizeof(*c->place));
		memcpy(c->place, j->place,
		       sizeof(*c->place) * (size_t)j->spec.replicas);
	}
	return c;
}

static void test_restart(void **state)
{
	(void)state;
	struct gf_ctl *a = ctl_new();
	struct gf_err e;
	array(a, 4, 1, 2);	     /* j1..j4 */
	add(a, job(1));		     /* j5 */
	dep_job(a, 1, "afterok:j5"); /* j6 */
	dep_job(a, 1, "afterok:j1"); /* j7 */
	assert_int_equal(gf_ctl_hold(a, "j7", true, &e), 0);
	pass(a, 1000);
	finish(a, "j5", 1, 1500); /* j6 can never run */
	assert_int_equal(J(a, "j6")->state, GF_JOB_PENDING); /* until a pass */

	struct gf_ctl *b = ctl_new();
	for (int i = 0; i < gf_ctl_njobs(a); i++)
		add(b, clone(gf_ctl_job_at(a, i)));
	assert_int_equal(gf_ctl_array_ntasks(b, "j1"), 4);
	assert_int_equal(running_tasks(b, "j1"), 2); /* restored running */
	pass(b, 2000);
	assert_int_equal(running_tasks(b, "j1"), 2);
	assert_string_equal(J(b, "j3")->reason, "array throttle (%2)");
	assert_int_equal(J(b, "j6")->state, GF_JOB_CANCELLED);
	assert_string_equal(
		J(b, "j6")->reason,
		"dependency afterok:j5 can never be met: j5 failed");
	assert_string_equal(J(b, "j7")->reason, "held");
	assert_int_equal(gf_ctl_hold(b, "j7", false, &e), 0);
	pass(b, 2500);
	assert_string_equal(J(b, "j7")->reason, "dependency j1");
	for (int t = 1; t <= 4; t++) {
		char id[16];
		snprintf(id, sizeof(id), "j%d", t);
		if (J(b, id)->state == GF_JOB_PENDING)
			pass(b, 2600 + t);
		finish(b, id, 0, 2700 + t);
	}
	pass(b, 3000);
	assert_int_equal(J(b, "j7")->state, GF_JOB_RUNNING);
	gf_ctl_free(a);
	gf_ctl_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_parse),
		cmocka_unit_test(test_dep_parse),
		cmocka_unit_test(test_array_throttle),
		cmocka_unit_test(test_dependency),
		cmocka_unit_test(test_dependency_on_array),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_restart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
