/*
 * test_cond.c - util/cond: conditions on the monotonic clock, a thread
 * told to stop.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "helpers.h"
#include "util/clock.h"
#include "util/cond.h"

struct waiter {
	pthread_mutex_t m;
	pthread_cond_t c;
	bool stop;
};

static void *wait_stop(void *arg)
{
	struct waiter *w = arg;
	pthread_mutex_lock(&w->m);
	while (!w->stop)
		pthread_cond_wait(&w->c, &w->m);
	pthread_mutex_unlock(&w->m);
	return NULL;
}

/* A monotonic deadline ends a timed wait; a raised flag ends a wait. */
static void test_clock_deadline(void **state)
{
	(void)state;
	struct timespec ts = { .tv_sec = 5, .tv_nsec = 999000000L };
	gf_clock_add_ms(&ts, 2500);
	assert_int_equal(ts.tv_sec, 8);
	assert_int_equal(ts.tv_nsec, 499000000L);
	struct timespec now, d;
	clock_gettime(CLOCK_MONOTONIC, &now);
	gf_clock_deadline(&d, 1000);
	assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
	assert_true(d.tv_sec > now.tv_sec ||
		    (d.tv_sec == now.tv_sec && d.tv_nsec > now.tv_nsec));
	pthread_cond_t c;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	gf_cond_init_mono(&c);
	gf_clock_deadline(&d, 1); /* a monotonic deadline passes */
	pthread_mutex_lock(&m);
	int rc;
	do
		rc = pthread_cond_timedwait(&c, &m, &d);
	while (rc == 0);
	pthread_mutex_unlock(&m);
	assert_int_equal(rc, ETIMEDOUT);
	pthread_cond_destroy(&c);

	/* gf_cond_raise: a thread waiting for its flag wakes and ends */
	struct waiter w = { .m = PTHREAD_MUTEX_INITIALIZER, .stop = false };
	gf_cond_init_mono(&w.c);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, wait_stop, &w), 0);
	gf_cond_raise(&w.m, &w.c, &w.stop);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(w.stop);
	pthread_cond_destroy(&w.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_deadline),
	};
	return cmocka_run_group_tests_name("cond", tests, NULL, NULL);
}
