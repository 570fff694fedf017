/*
 * clock.h - the clocks, for adapters and commands.  The core never
 * reads a clock itself: where it reports durations, the caller passes
 * one of these functions in.
 */
#ifndef GF_UTIL_CLOCK_H
#define GF_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC (an arbitrary origin). */
double gf_clock_ms(void);

/* Seconds on CLOCK_MONOTONIC (an arbitrary origin). */
double gf_clock_s(void);

/* Wall clock (CLOCK_REALTIME): milliseconds / microseconds since the
 * Unix epoch, for timestamps that are stored or shown. */
int64_t gf_clock_wall_ms(void);
int64_t gf_clock_wall_us(void);

/* Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian,
 * Howard Hinnant's days_from_civil; m 1-12, d 1-31 unchecked): pure
 * arithmetic, no clock read, for the readers of dates (traces,
 * chargeback records, the job listing's times). */
int64_t gf_days_from_civil(int64_t y, int m, int d);

/* CPU time of the calling thread, in milliseconds. */
double gf_clock_thread_cpu_ms(void);

/* *at moved ms later (ms >= 0), its nanoseconds kept below one second. */
void gf_clock_add_ms(struct timespec *at, double ms);

/* *at = now on CLOCK_MONOTONIC plus ms: the deadline for a
 * pthread_cond_timedwait on a condition whose clock is monotonic. */
void gf_clock_deadline(struct timespec *at, double ms);

#endif
