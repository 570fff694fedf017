/*
 * bench.h - what every benchmark shares.
 *
 * BENCH_MUST(call): a setup step or a measured call whose failure would
 * make the figure a lie; the benchmark stops, naming the call, instead of
 * printing a figure over work that was not done.
 */
#ifndef GF_BENCH_H
#define GF_BENCH_H

#include <stdio.h>
#include <stdlib.h>

static inline void bench_must(int rc, const char *what, const char *file,
			      int line)
{
	if (rc >= 0)
		return;
	fprintf(stderr, "%s:%d: %s failed (%d)\n", file, line, what, rc);
	exit(1);
}

#define BENCH_MUST(call) bench_must((call), #call, __FILE__, __LINE__)

#endif
