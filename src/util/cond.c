/*
 * cond.c - conditions on the monotonic clock (see cond.h).
 */
#include "util/cond.h"

#include <time.h>

void gf_cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

void gf_cond_raise(pthread_mutex_t *m, pthread_cond_t *c, bool *flag)
{
	pthread_mutex_lock(m);
	*flag = true;
	pthread_cond_broadcast(c);
	pthread_mutex_unlock(m);
}
