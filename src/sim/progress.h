/*
 * progress.h - the progress line of a long `gpufleet simulate fill`.  A
 * reporter thread, once delay_s has passed, writes what the command is
 * doing: the loading step it was given, then the pool's runs by phase,
 *   gpufleet simulate fill: reading pods 'pods.csv', 1.2 s
 *   gpufleet simulate fill: 0/1 runs done, 1 drawing arrivals (45 %), 9.1 s
 *   gpufleet simulate fill: 3/60 runs done, 2 placing (5300/7800
 *   arrivals), 20.1 s
 * redrawn in place every 0.5 s on a terminal, a line every 10 s otherwise.
 *
 * Lifecycle: gf_progress_init(), gf_progress_start(), then any of
 * gf_progress_step() / gf_progress_pool() from any thread, and
 * gf_progress_stop() (also after a failed or no start).
 */
#ifndef GF_SIM_PROGRESS_H
#define GF_SIM_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include <gpufleet/err.h>

#include "sim/pool.h"

#define GF_PROGRESS_STEP_MAX 256

struct gf_progress {
	/* set by gf_progress_init(); may be changed before the start */
	const char *prefix; /* "gpufleet simulate fill" */
	FILE *out;
	bool tty;	/* redraw in place */
	double delay_s; /* first line after this long (1 s) */
	double every_s; /* then one per this long (0.5 s tty, 10 s not) */
	/* private: under lock */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	char step[GF_PROGRESS_STEP_MAX];
	struct gf_fill_pool *pool;
	bool stop, running, shown;
	int last_len;
	double t0;
	pthread_t tid;
};

/* Write to out (a terminal or not, as isatty() says). */
void gf_progress_init(struct gf_progress *p, const char *prefix, FILE *out);

/* Start the reporter thread; 0, or a negative errno (no line then). */
int gf_progress_start(struct gf_progress *p) GF_MUST_CHECK;

/* What is being done before the runs ("reading pods 'x.csv'"). */
void gf_progress_step(struct gf_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report this pool's runs (NULL: no more; its jobs are no longer read
 * once this returns). */
void gf_progress_pool(struct gf_progress *p, struct gf_fill_pool *pool);

/* Stop and join the reporter; on a terminal, end the line it drew. */
void gf_progress_stop(struct gf_progress *p);

/* The line as it would be written now, without "\r" or "\n".  Returns its
 * length (truncated to size - 1). */
int gf_progress_format(struct gf_progress *p, char *buf, size_t size);

#endif
