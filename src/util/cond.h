/*
 * cond.h - the waits of adapters' threads: conditions on the monotonic
 * clock (deadlines from gf_clock_deadline(), util/clock.h), and a thread
 * told to stop.
 */
#ifndef GF_UTIL_COND_H
#define GF_UTIL_COND_H

#include <pthread.h>
#include <stdbool.h>

/* A condition whose timed waits take CLOCK_MONOTONIC deadlines (a wall
 * clock step neither cuts nor stretches them). */
void gf_cond_init_mono(pthread_cond_t *c);
/* *flag set under m and every waiter on c woken (a thread told to stop). */
void gf_cond_raise(pthread_mutex_t *m, pthread_cond_t *c, bool *flag);

#endif
