/*
 * clock.c - the monotonic clock.
 */
#include "util/clock.h"

#include <time.h>

void gf_timespec_add_ms(struct timespec *ts, long ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

void gf_mono_deadline(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	gf_timespec_add_ms(ts, ms);
}

void gf_cond_raise(pthread_mutex_t *m, pthread_cond_t *c, bool *flag)
{
	pthread_mutex_lock(m);
	*flag = true;
	pthread_cond_broadcast(c);
	pthread_mutex_unlock(m);
}

void gf_cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

double gf_clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
