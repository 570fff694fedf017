/*
 * test_dynlib.c - util/dynlib: an optional library opened on first use,
 * its pointers filled once, and what a missing library or entry point
 * says.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "helpers.h"
#include "util/dynlib.h"

#define M_FUNCS(X) \
	X(cos)     \
	X(sqrt)
GF_DYNLIB_STRUCT(m_fns, M_FUNCS);

/* libm's entry points, called through the pointers; the second open
 * answers from the first; the accessor gives the same pointers. */
static struct m_fns ptrs;
static struct gf_dynlib lib =
	GF_DYNLIB_INIT("libm.so.6", "libc6", M_FUNCS, &ptrs);

static void test_open_fills(void **state)
{
	(void)state;
	struct gf_err e = { 0 };
	assert_int_equal(gf_dynlib_open(&lib, &e), 0);
	assert_non_null(ptrs.cos);
	assert_true(ptrs.cos(0.0) == 1.0);
	assert_true(ptrs.sqrt(81.0) == 9.0);
	assert_int_equal(gf_dynlib_open(&lib, &e), 0);
	const struct m_fns *f = GF_DYNLIB_FNS(&lib, m_fns);
	assert_ptr_equal(f, &ptrs);
	assert_true(f->sqrt(4.0) == 2.0);
}

/* A library that is not there: GF_ENOTSUP naming it, its package and
 * the loader's reason, and the same answer on the next try. */
static struct m_fns none_ptrs;
static struct gf_dynlib none_lib = GF_DYNLIB_INIT(
	"libgf-no-such.so.9", "gpufleet-none", M_FUNCS, &none_ptrs);

static void test_missing_library(void **state)
{
	(void)state;
	struct gf_err e = { 0 };
	assert_int_equal(gf_dynlib_open(&none_lib, &e), GF_ENOTSUP);
	assert_non_null(strstr(e.msg, "cannot open libgf-no-such.so.9"));
	assert_non_null(strstr(e.msg, "Debian package gpufleet-none"));
	assert_non_null(strstr(e.msg, "No such file"));
	assert_null(none_ptrs.cos);
	struct gf_err again = { 0 };
	assert_int_equal(gf_dynlib_open(&none_lib, &again), GF_ENOTSUP);
	assert_string_equal(again.msg, e.msg);
}

/* A library without one of the entry points: named, nothing used. */
static void *half_ptrs[2];
static struct gf_dynlib half_lib = {
	.soname = "libm.so.6",
	.package = "libc6",
	.names = (const char *const[]){ "cos", "gf_no_such_entry" },
	.n = 2,
	.fns = half_ptrs,
};

static void test_missing_symbol(void **state)
{
	(void)state;
	struct gf_err e = { 0 };
	assert_int_equal(gf_dynlib_open(&half_lib, &e), GF_ENOTSUP);
	assert_non_null(strstr(e.msg, "libm.so.6 (Debian package libc6) "
				      "has no gf_no_such_entry"));
}

/* Threads that open the same library at once all see it open, with the
 * same pointers (one opens it, under the lock). */
static struct m_fns race_ptrs;
static struct gf_dynlib race_lib =
	GF_DYNLIB_INIT("libm.so.6", "libc6", M_FUNCS, &race_ptrs);

static void *open_race(void *arg)
{
	const struct m_fns **out = arg;
	*out = GF_DYNLIB_FNS(&race_lib, m_fns);
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	enum { N = 8 };
	pthread_t t[N];
	const struct m_fns *got[N];
	for (int i = 0; i < N; i++)
		assert_int_equal(
			pthread_create(&t[i], NULL, open_race, &got[i]), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_ptr_equal(got[i], &race_ptrs);
	}
	assert_true(race_ptrs.sqrt(16.0) == 4.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_fills),
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_missing_symbol),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests_name("dynlib", tests, NULL, NULL);
}
