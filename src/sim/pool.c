/*
 * pool.c - parallel fill runs.  Workers take the next job from an atomic
 * counter; the calling thread sleeps and reports progress.
 */
#include "pool.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void gf_fill_jobs_reference(struct gf_fill_job *jobs, int nseeds)
{
	memset(jobs, 0,
	       sizeof(*jobs) * (size_t)GF_POLICY_COUNT * (size_t)nseeds);
	for (int p = 0; p < GF_POLICY_COUNT; p++)
		for (int s = 0; s < nseeds; s++) {
			struct gf_fill_opts *o = &jobs[p * nseeds + s].o;
			o->policy = (enum gf_policy)p;
			o->seed = 42 + (uint64_t)s;
			o->tune = 1.3;
			o->resample = true;
		}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_progress(int done, int total, void *arg)
{
	struct gf_fill_job *j = arg;
	atomic_store(&j->done, done);
	atomic_store(&j->total, total);
}

static void *worker(void *arg)
{
	struct gf_fill_pool *p = arg;
	for (;;) {
		int i = atomic_fetch_add(&p->next, 1);
		if (i >= p->njobs)
			break;
		struct gf_fill_job *j = &p->jobs[i];
		double t0 = now_s();
		j->rc = gf_fill_run(p->c, p->w, p->typ, p->ntyp, &j->o, &j->res,
				    on_progress, j);
		j->wall_s = now_s() - t0;
		atomic_store(&j->done, j->res.arrivals);
		atomic_store(&j->total, j->res.arrivals);
		atomic_fetch_add(&p->finished, 1);
	}
	return NULL;
}

static void progress_line(struct gf_fill_pool *p, double t0, bool newline)
{
	long done = 0, total = 0;
	for (int i = 0; i < p->njobs; i++) {
		done += atomic_load(&p->jobs[i].done);
		int t = atomic_load(&p->jobs[i].total);
		total += t ? t : 1;
	}
	fprintf(stderr, "\rsimulate: %d/%d runs, %ld/%ld arrivals, %.1f s%s",
		atomic_load(&p->finished), p->njobs, done, total, now_s() - t0,
		newline ? "\n" : "");
	fflush(stderr);
}

int gf_fill_pool_run(struct gf_fill_pool *p, int threads, bool show_progress)
{
	pthread_t tid[64];
	if (threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (int)n : 1;
	}
	if (threads > 64)
		threads = 64;
	if (threads > p->njobs)
		threads = p->njobs;
	atomic_store(&p->next, 0);
	atomic_store(&p->finished, 0);
	double t0 = now_s();
	int started = 0;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, p) == 0)
			started++;
	if (started == 0)
		worker(p); /* no thread to be had: run here */
	bool shown = false, tty = isatty(STDERR_FILENO);
	double last = 0;
	while (atomic_load(&p->finished) < p->njobs) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		double t = now_s() - t0;
		if (show_progress && t > 1.0 &&
		    t - last >= (tty ? 0.5 : 10.0)) {
			progress_line(p, t0, !tty);
			last = t;
			shown = true;
		}
	}
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (shown && tty)
		progress_line(p, t0, true);
	for (int i = 0; i < p->njobs; i++)
		if (p->jobs[i].rc)
			return -1;
	return 0;
}
