/*
 * test_typical.c - the typical mix the core learns from arrivals,
 * decayed (src/core/jobs/typical.c, gf__mixlearn_*).
 */
#include <math.h>

#include "core/jobs/typical.h"
#include "helpers.h"
#include "util/mem.h"

static struct gf_req shape(int16_t milli, int32_t cpu)
{
	return (struct gf_req){ .cpu = cpu, .gpu_milli = milli, .ngpus = 1 };
}

/* sum of d^k for k in [a, b) */
static double dsum(int64_t a, int64_t b)
{
	double d = 1.0 - 1.0 / GF_MIX_HORIZON;
	return (pow(d, (double)a) - pow(d, (double)b)) / (1.0 - d);
}

/* Old arrivals fade: 1,000 of A then 10,000 of B; A weighs what
 * arrivals 10,000 to 10,999 old weigh, and leaves the 95 % mix. */
static void test_decay(void **state)
{
	(void)state;
	struct gf__mixlearn l;
	gf__mixlearn_init(&l);
	struct gf_req a = shape(250, 4000), b = shape(500, 8000);
	for (int i = 0; i < 1000; i++)
		gf__mixlearn_add(&l, &a, 1);
	for (int i = 0; i < 10000; i++)
		gf__mixlearn_add(&l, &b, 1);
	assert_int_equal(l.seen, 11000);
	struct gf_typical *t;
	assert_int_equal(gf__mixlearn_build(&l, 1.0, &t), 2);
	double wa = dsum(10000, 11000), wb = dsum(0, 10000);
	assert_int_equal(t[0].gpu_milli, 500);
	assert_true(fabs(t[1].p - wa / (wa + wb)) < 1e-9);
	assert_true(t[1].p < 0.05 && t[1].p > 0.01);
	gf_free(t);
	assert_int_equal(gf__mixlearn_build(&l, 0.95, &t), 1);
	assert_int_equal(t[0].gpu_milli, 500);
	assert_true(fabs(t[0].p - 1.0) < 1e-12);
	gf_free(t);
	gf__mixlearn_free(&l);
}

/* A job of n replicas counts as n arrivals one after another; the
 * mix follows the arrival order, not the counts alone. */
static void test_batch_and_order(void **state)
{
	(void)state;
	struct gf__mixlearn x, y;
	gf__mixlearn_init(&x);
	gf__mixlearn_init(&y);
	struct gf_req a = shape(250, 4000), b = shape(750, 8000);
	gf__mixlearn_add(&x, &a, 3000);
	gf__mixlearn_add(&x, &b, 3000);
	for (int i = 0; i < 3000; i++)
		gf__mixlearn_add(&y, &a, 1);
	for (int i = 0; i < 3000; i++)
		gf__mixlearn_add(&y, &b, 1);
	struct gf_typical *tx, *ty;
	assert_int_equal(gf__mixlearn_build(&x, 1.0, &tx), 2);
	assert_int_equal(gf__mixlearn_build(&y, 1.0, &ty), 2);
	/* equal counts, but b came last: b weighs more */
	assert_int_equal(tx[0].gpu_milli, 750);
	assert_true(fabs(tx[0].p - ty[0].p) < 1e-9);
	double wb = dsum(0, 3000), wa = dsum(3000, 6000);
	assert_true(fabs(tx[0].p - wb / (wa + wb)) < 1e-9);
	gf_free(tx);
	gf_free(ty);
	gf__mixlearn_free(&x);
	gf__mixlearn_free(&y);
}

/* Far past the rescale point (inc > 1e100 after ~943k arrivals) the
 * weights stay finite and right; nothing learned: GF_EINVAL. */
static void test_long_run(void **state)
{
	(void)state;
	struct gf__mixlearn l;
	gf__mixlearn_init(&l);
	struct gf_typical *t;
	assert_int_equal(gf__mixlearn_build(&l, 0.95, &t), GF_EINVAL);
	struct gf_req a = shape(250, 4000), b = shape(1000, 8000);
	for (int k = 0; k < 30; k++)
		gf__mixlearn_add(&l, &a, 50000);
	gf__mixlearn_add(&l, &b, 4096);
	assert_true(isfinite(l.mass) && l.inc <= 1e100);
	assert_int_equal(gf__mixlearn_build(&l, 1.0, &t), 2);
	/* b, the last 4,096: 1 - (1 - 1/H)^4096; a, all before: the rest */
	double d = pow(1.0 - 1.0 / GF_MIX_HORIZON, 4096.0);
	assert_int_equal(t[0].gpu_milli, 1000);
	assert_true(fabs(t[0].p - (1 - d)) < 1e-6);
	assert_true(fabs(t[1].p - d) < 1e-6);
	gf_free(t);
	gf__mixlearn_free(&l);
}

/* Shapes are capped: 5,000 distinct ones, one arrival each, then a
 * shape seen often; the learner keeps GF_MIX_SHAPES_MAX, the newest
 * (the lightest went first), the frequent one, and a mass that is the
 * sum of what it kept. */
static void test_shapes_capped(void **state)
{
	(void)state;
	struct gf__mixlearn l;
	gf__mixlearn_init(&l);
	struct gf_req often = shape(500, 100);
	gf__mixlearn_add(&l, &often, 2000);
	for (int k = 0; k < 5000; k++) {
		struct gf_req r = shape(1000, 1000 + k);
		gf__mixlearn_add(&l, &r, 1);
	}
	assert_int_equal(l.n, GF_MIX_SHAPES_MAX);
	double sum = 0;
	bool newest = false, oldest = false, frequent = false;
	for (int i = 0; i < l.n; i++) {
		sum += l.e[i].w;
		newest |= l.e[i].t.cpu == 1000 + 4999;
		oldest |= l.e[i].t.cpu == 1000;
		frequent |= l.e[i].t.cpu == 100;
	}
	assert_true(newest && frequent && !oldest);
	assert_true(fabs(sum - l.mass) <= 1e-9 * l.mass);
	struct gf_typical *t;
	assert_int_equal(gf__mixlearn_build(&l, 0.95, &t) > 0, 1);
	assert_int_equal(t[0].cpu, 100); /* the frequent shape leads */
	gf_free(t);
	gf__mixlearn_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decay),
		cmocka_unit_test(test_batch_and_order),
		cmocka_unit_test(test_long_run),
		cmocka_unit_test(test_shapes_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
