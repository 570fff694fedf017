/*
 * clock.h - the monotonic clock, for adapters and commands.  The core
 * never reads a clock itself: where it reports durations, the caller
 * passes this function in.
 */
#ifndef GF_UTIL_CLOCK_H
#define GF_UTIL_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC (an arbitrary origin). */
double gf_clock_ms(void);

#endif
