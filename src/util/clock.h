/*
 * clock.h - the monotonic clock, for adapters and commands, and the
 * waits of their threads on it.  The core
 * never reads a clock itself: where it reports durations, the caller
 * passes this function in.
 */
#ifndef GF_UTIL_CLOCK_H
#define GF_UTIL_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC (an arbitrary origin). */
double gf_clock_ms(void);

/* ts moved ms later (tv_nsec kept under a second). */
void gf_timespec_add_ms(struct timespec *ts, long ms);
/* ms from now on CLOCK_MONOTONIC: the deadline pthread_cond_timedwait
 * takes for a condition made by gf_cond_init_mono(). */
void gf_mono_deadline(struct timespec *ts, long ms);
/* A condition whose timed waits take CLOCK_MONOTONIC deadlines (a wall
 * clock step neither cuts nor stretches them). */
void gf_cond_init_mono(pthread_cond_t *c);
/* *flag set under m and every waiter on c woken (a thread told to stop). */
void gf_cond_raise(pthread_mutex_t *m, pthread_cond_t *c, bool *flag);

#endif
